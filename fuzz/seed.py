#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets from fixtures/ into fuzz/seeds/TARGET/.

Each config seed is one fixture machine in the config target's format (texts separated by
0xFF: global config, project config, markdown agent, env lines, samples, {file:} target).
"""
import hashlib, os, pathlib, sys

root = pathlib.Path(__file__).resolve().parent.parent
out = root / "fuzz" / "seeds"
SEP = b"\xff"

def read(p):
    return p.read_bytes() if p.is_file() else b""

def put(target, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

machines = []
for case in sorted((root / "fixtures" / "checks").glob("*/*")):
    home, proj = case / "home", case / "project"
    agents = sorted((proj / ".opencode" / "agent").glob("*.md"))
    machines.append([
        read(home / ".config" / "opencode" / "opencode.json"),
        read(proj / "opencode.json"),
        read(agents[0]) if agents else b"",
        read(case / "env"),
        read(proj / ".opencode" / "permaudit-samples.txt"),
        b"",
    ])
ex = root / "fixtures" / "example"
machines.append([b"", read(ex / "opencode.json"), read(ex / ".opencode" / "agent" / "reviewer.md"), b"", b"", b""])
machines.append([b'{"permission":{"edit":"{file:f.txt}"}}', b'{"permission":"{env:P}"}', b"", b"P=\"allow\"\nOPENCODE_PERMISSION={\"bash\":{\"git *\":\"allow\"}}", b"", b'"deny"'])
for m in machines:
    put("config", SEP.join(m))
    put("fix", SEP.join(m))

# The shapes `check --fix` met on real configs (issue 32): a catch-all written last over
# many rules with banner comments; patterns substituted from {env:}/{file:}; a suppression
# comment above a rule a fix makes live; redundant rules under a misplaced catch-all.
victims = "".join(f'    "cmd{i} *": "ask",\n' for i in range(21))
for m in [
    [b"", ('{\n  "permission": {\n    "bash": {\n      // Deny destructive commands\n      "rm -rf *": "deny",\n'
           '      "git push --force*": "deny",\n\n      // never let it push\n      "git push*": "ask",\n'
           + victims + '      "*": "allow"\n    }\n  }\n}\n').encode(), b"", b"", b"", b""],
    [b"", b'{"permission": {"bash": {"{env:RISKY}": "deny", "git push --force*": "deny", "*": "allow"}}}', b"", b"RISKY=git push*", b"", b""],
    [b"", b'{"permission": {"bash": {"{file:f.txt}": "deny", "git push --force*": "deny", "*": "allow"}}}', b"", b"", b"", b"git push*"],
    [b"", b'{\n  "permission": {"bash": {\n    // permaudit-ignore[always-overrides-deny]: reviewed\n    "rm *": "deny",\n    "*": "allow"\n  }}\n}\n', b"", b"", b"", b""],
    [b"", b'{"permission": {"bash": {"git *": "allow", "git push*": "ask", "*": "ask"}}}', b"", b"", b"", b""],
    [b"", b'{"permission": {"external_directory": {"~/.ssh/**": "deny", "~/**": "allow"}, "edit": {"src/*": "deny", "*": "allow"}}}', b"", b"", b"", b""],
    [b'{"permission": {"bash": {"git push*": "deny"}}}', b'{"permission": {"bash": {"*": "allow"}}}',
     b"---\npermission:\n  bash:\n    \"rm *\": deny\n    \"*\": allow\n---\n", b"", b"", b""],
]:
    put("fix", SEP.join(m))

mds = sorted(root.glob("fixtures/**/*.md"))
for p in mds:
    put("frontmatter", p.read_bytes())
for t in [b"---\npermission:\n  edit:\n    \"src/*\": deny\n    \"*\": allow\n---\nprompt\n",
          b"---\nmode: subagent\ntools:\n  bash: false\npermission: allow\n---\n",
          b"---\na: &x {b: 1}\nc:\n  <<: *x\n  d: !!str 2\n---\n",
          b"---json\n{\"permission\":{\"bash\":\"deny\"}}\n---\n",
          b"\xef\xbb\xbf---\nk: [a, b]\n---\n"]:
    put("frontmatter", t)

for t in ["git *\n*.ts\na?c\nsrc/**\n\\\\x\n *\na *?\n\xffgit\xffgit status\xffgitx\xffsrc/\xffa\\\\c\xff\U0001F600",
          "*\n?\n??\nA*\n\xffabc\xff\U0001F600\xff\xe9\xff",
          "*a*b*\n?*\na?\n*x\nb* *\n\xffab\xffaab\xffb c"]:
    put("wildcard", t.encode("utf-8", "surrogatepass").replace(b"\xc3\xbf", b"\xff"))

for t in ["* *\nedit src/*\nedit src/gen/*\nedit *.env\nbash git *\nbash git push *\n* deny",
          "\x01edit **\nedit tests/**\n* *\n",
          "\x02e* a*\ned? *b\nedit ab\n? a?b\n\xffab\xffaab",
          "\x03external_directory /h/*\nexternal_directory *\nread *.env\nread *.env.example"]:
    put("analysis", t.encode())
