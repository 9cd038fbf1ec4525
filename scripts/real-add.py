#!/usr/bin/env python3
"""Add a public repository's OpenCode configuration to tests/real/ (issue 35), and record what
the real OpenCode 1.18.34 makes of it.

    python3 scripts/real-add.py add GITDIR OWNER/REPO [--as-home [DIR]] [--prefix P]...
    python3 scripts/real-add.py oracle DIR...        # (re)write DIR/oracle.json, compare rules
    python3 scripts/real-add.py compare DIR...       # oracle.json vs `permaudit rules` only
    python3 scripts/real-add.py index                # add missing entries' rows to tests/real/INDEX.md

`add` copies from a git directory (a snapshot of the repository, read at HEAD with `git
show`, nothing checked out) the files OpenCode reads for permissions: the project's own
`opencode.json(c)` and `.opencode/` (agents, modes, skills' SKILL.md) into `project/`, and a
dotfiles repository's global config (`<prefix>.config/opencode/…`, chezmoi's
`dot_config/opencode/…`) into `home/.config/opencode/`; `--as-home [DIR]` maps a repository whose
root (or DIR) *is* `~/.config/opencode`. Every `{file:…}` a copied JSON config names is copied too
when the repository has it. Commands, plugins and tools (code) are not copied; their names
are listed in SOURCE.md. The entry is `tests/real/<owner>__<repo>/` (lowercase) with
`SOURCE.md` (repository, commit, date, file mapping).

`oracle` stages the entry as tests/real.rs does (a copy, `git init` in project/, HOME =
home/, nothing else of this machine: PATH, a fake `rg`, `OPENCODE_DISABLE_*`, the managed
config dir inside the copy), runs `opencode agent list --pure` (OPENCODE_BIN, default
.oracle/…) and stores its verdict as `oracle.json`: `ok`, `rc`, `stderr` and every agent's
mode and rules, with the staged paths written `$CASE` (the entry) and `$CASE_HOME` (its
home), the format of ../shared/corpus. It then runs `permaudit rules --format json`
(PERMAUDIT_BIN, default target/release/permaudit) on the same staging and prints whether the
rulesets are identical (a difference is a permaudit bug: keep the entry, report it).
"""
import json, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
REAL = os.path.join(ROOT, "tests", "real")
OPENCODE = os.environ.get("OPENCODE_BIN", os.path.join(ROOT, ".oracle/node_modules/opencode-linux-x64/bin/opencode"))
PERMAUDIT = os.environ.get("PERMAUDIT_BIN", os.path.join(ROOT, "target/release/permaudit"))
# The issue and round an entry is added in, written to its SOURCE.md ("Added: issue 35 (session
# N, split by hash)", then "Added: issue 45 (session 7, split by hash)"); scripts/real-split.py
# gives every such entry its hashed half.
ISSUE = 45
SESSION = 7

# What OpenCode reads for permissions under a config directory (.opencode/ or ~/.config/opencode/).
WANTED = re.compile(r"^(opencode\.jsonc?|config\.json|agents?/.+\.md|modes?/.+\.md|skills?/.+/SKILL\.md)$")
LISTED = re.compile(r"^(commands?|plugins?|tools?)/")


def git(gitdir, *args, text=True):
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=text, check=True).stdout


def chezmoi(path):
    """chezmoi's source names (`dot_`, `private_`, `executable_`) as the target's names."""
    parts = []
    for p in path.split("/"):
        for pre in ("private_", "executable_", "readonly_", "exact_"):
            p = p.removeprefix(pre)
        parts.append("." + p[4:] if p.startswith("dot_") else p)
    return "/".join(parts)


def mapping(files, as_home, prefixes):
    """repository path -> entry path, and the names listed but not copied."""
    out, listed = {}, []
    for f in files:
        dst = None
        if as_home is not None:
            if f.startswith(as_home):
                rest = f[len(as_home):]
                if WANTED.match(rest):
                    out[f] = "home/.config/opencode/" + rest
                elif LISTED.match(rest):
                    listed.append(f)
            continue
        if f in ("opencode.json", "opencode.jsonc"):
            dst = "project/" + f
        elif f.startswith(".opencode/"):
            rest = f[len(".opencode/"):]
            if WANTED.match(rest):
                dst = "project/" + f
            elif LISTED.match(rest):
                listed.append(f)
        else:
            target = chezmoi(f)
            m = re.match(r"^(.*?)\.config/opencode/(.+)$", target)
            if m and (not prefixes or m.group(1) in prefixes) and not m.group(2).endswith(".tmpl"):
                if WANTED.match(m.group(2)):
                    dst = "home/.config/opencode/" + m.group(2)
                elif LISTED.match(m.group(2)):
                    listed.append(f)
        if dst:
            out[f] = dst
    return out, listed


def add(gitdir, repo, as_home, prefixes):
    files = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    date = git(gitdir, "log", "-1", "--format=%cI", "HEAD").strip()
    m, listed = mapping(files, as_home, prefixes)
    homes = {re.match(r"^(.*?)\.config/opencode/", chezmoi(f)).group(1) for f, d in m.items()
             if d.startswith("home/") and as_home is None}
    if len(homes) > 1:
        sys.exit(f"{repo}: several global configs ({sorted(homes)}); choose one with --prefix")
    if not m:
        sys.exit(f"{repo}: no OpenCode configuration at HEAD")
    # {file:…} references of the JSON configs, resolved as OpenCode does: relative to the
    # config's directory, `~/` to HOME.
    by_dst = {d: f for f, d in m.items()}
    for f, d in list(m.items()):
        if not d.endswith((".json", ".jsonc")):
            continue
        text = git(gitdir, "show", f"HEAD:{f}")
        for ref in re.findall(r"\{file:([^}]+)\}", text):
            ref = ref.strip()
            if ref.startswith("/"):
                continue
            if ref.startswith("~/"):
                dst = os.path.normpath("home/" + ref[2:])
            else:
                dst = os.path.normpath(os.path.join(os.path.dirname(d), ref))
            if dst in by_dst or not dst.startswith(("home/", "project/")):
                continue
            src = os.path.normpath(os.path.join(os.path.dirname(f), os.path.relpath(dst, os.path.dirname(d))))
            if src in files:
                m[src], by_dst[dst] = dst, src
    name = repo.lower().replace("/", "__")
    entry = os.path.join(REAL, name)
    if os.path.exists(entry):
        sys.exit(f"{entry} exists")
    for d in ("project", "home"):
        os.makedirs(os.path.join(entry, d))
    open(os.path.join(entry, "home", ".keep"), "w").close()
    open(os.path.join(entry, "project", ".keep"), "w").close()
    for f, d in sorted(m.items()):
        path = os.path.join(entry, d)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(git(gitdir, "show", f"HEAD:{f}", text=False))
    kind = f"global config repo (`{as_home or '.'}` = ~/.config/opencode)" if as_home is not None else \
        ("dotfiles (global config)" if all(d.startswith("home/") for d in m.values()) else
         ("project" if all(d.startswith("project/") for d in m.values()) else "project and global config"))
    with open(os.path.join(entry, "SOURCE.md"), "w") as s:
        s.write(f"# {repo}\n\n- Repository: https://github.com/{repo}\n- Commit: {commit}\n"
                f"- Commit date: {date}\n- Kind: {kind}\n- Added: issue {ISSUE} (session {SESSION}, split by hash)\n\n## Files\n\n")
        for f, d in sorted(m.items(), key=lambda x: x[1]):
            s.write(f"- `{f}` -> `{d}`\n")
        if listed:
            s.write("\nNot copied (commands, plugins and tools are code or prompts, not permissions):\n\n")
            for f in listed:
                s.write(f"- `{f}`\n")
    print(f"{name}: {len(m)} files ({commit[:12]})")


def stage(entry):
    tmp = tempfile.mkdtemp(prefix="permaudit-real-")
    dst = os.path.join(tmp, "case")
    shutil.copytree(entry, dst, ignore=shutil.ignore_patterns("oracle.json", "SOURCE.md"))
    subprocess.run(["git", "init", "-q", os.path.join(dst, "project")], check=True)
    os.makedirs(os.path.join(tmp, "bin"))
    with open(os.path.join(tmp, "bin", "rg"), "w") as f:
        f.write("#!/bin/sh\nexit 1\n")
    os.chmod(os.path.join(tmp, "bin", "rg"), 0o755)
    env = {"PATH": os.path.join(tmp, "bin") + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": os.path.join(dst, "home"), "OPENCODE_DISABLE_AUTOUPDATE": "1",
           "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_TEST_MANAGED_CONFIG_DIR": os.path.join(dst, "managed")}
    return tmp, dst, env


def parse_agent_list(stdout):
    agents, lines, i = {}, stdout.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        # A name may begin with a space: an `agent` key " x" in opencode.json is listed as is.
        m = re.match(r"^(.+) \((\w+)\)$", line)
        if not m:
            raise ValueError(f"unexpected line {line!r}")
        buf = []
        while i < len(lines):
            buf.append(lines[i])
            i += 1
            if lines[i - 1] == "]" or "\n".join(buf).strip() == "[]":
                break
        agents[m.group(1)] = {"mode": m.group(2), "rules": json.loads("\n".join(buf))}
    return agents


def placeholders(v, dst):
    s = json.dumps(v)
    return json.loads(s.replace(os.path.join(dst, "home"), "$CASE_HOME").replace(dst, "$CASE"))


def run_oracle(entry):
    tmp, dst, env = stage(entry)
    try:
        # Standard output to a file: Bun may exit before a slow reader drains a pipe.
        with tempfile.TemporaryFile("w+") as out:
            p = subprocess.run(["timeout", "120", OPENCODE, "agent", "list", "--pure"], cwd=os.path.join(dst, "project"),
                               env=env, stdout=out, stderr=subprocess.PIPE, text=True)
            out.seek(0)
            stdout = out.read()
        err = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", p.stderr)
        res = {"ok": p.returncode == 0, "rc": p.returncode, "stderr": err.replace(dst, "$CASE")[-4000:]}
        if p.returncode == 0:
            res["agents"] = placeholders(parse_agent_list(stdout), dst)
        with open(os.path.join(entry, "oracle.json"), "w") as f:
            json.dump(res, f, indent=1, ensure_ascii=False)
            f.write("\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return compare(entry)


def comparable(rules):
    """The rules, each run of `external_directory` allows sorted: OpenCode lists skill
    directories in Bun-glob order, not sorted (docs/research/B-agents-markdown-whitelist.md);
    they are all allows, so their order decides nothing."""
    rules = [{k: r[k] for k in ("permission", "pattern", "action")} for r in rules]
    out, run = [], []
    for r in rules + [None]:
        if r is not None and r["permission"] == "external_directory" and r["action"] == "allow":
            run.append(r)
            continue
        out += sorted(run, key=lambda x: json.dumps(x, sort_keys=True))
        run = []
        if r is not None:
            out.append(r)
    return out


def compare(entry):
    oracle = json.load(open(os.path.join(entry, "oracle.json")))
    tmp, dst, env = stage(entry)
    try:
        p = subprocess.run(["timeout", "120", PERMAUDIT, "rules", "--format", "json"], cwd=os.path.join(dst, "project"),
                           env=env, capture_output=True, text=True)
        name = os.path.basename(entry.rstrip("/"))
        if not oracle["ok"]:
            verdict = "agree (both refuse)" if p.returncode == 2 else f"DISAGREE: OpenCode refuses, permaudit exit {p.returncode}"
            print(f"{name}: {verdict}")
            return verdict.startswith("agree")
        if p.returncode != 0:
            print(f"{name}: DISAGREE: OpenCode accepts, permaudit exit {p.returncode}: {p.stderr.strip()[-400:]}")
            return False
        got = {a["agent"]: {"mode": a["mode"], "rules": comparable(placeholders(a["rules"], dst))}
               for a in json.loads(p.stdout)["agents"]}
        want = {k: {"mode": a["mode"], "rules": comparable(a["rules"])} for k, a in oracle["agents"].items()}
        if got == want:
            print(f"{name}: agree ({len(want)} agents, {sum(len(a['rules']) for a in want.values())} rules)")
            return True
        diffs = sorted(set(want) ^ set(got))
        for k in sorted(set(want) & set(got)):
            if want[k] != got[k]:
                diffs.append(k)
        print(f"{name}: DISAGREE on agents {diffs}")
        for k in diffs[:3]:
            print(f"  oracle {k}: {json.dumps(want.get(k))[:600]}")
            print(f"  permaudit {k}: {json.dumps(got.get(k))[:600]}")
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def index():
    """Append a row to INDEX.md for every entry it does not list yet (entries with oracle.json)."""
    path = os.path.join(REAL, "INDEX.md")
    text = open(path).read()
    rows = []
    for name in sorted(os.listdir(REAL)):
        entry = os.path.join(REAL, name)
        if f"| `{name}` |" in text or not os.path.isfile(os.path.join(entry, "oracle.json")):
            continue
        source = open(os.path.join(entry, "SOURCE.md")).read()
        field = lambda k: re.search(rf"^- {k}: (.*)$", source, re.M).group(1).strip()
        repo = field("Repository").split("github.com/", 1)[1]
        counts = {d: sum(len([f for f in fs if f != ".keep"]) for _, _, fs in os.walk(os.path.join(entry, d)))
                  for d in ("project", "home")}
        files = ", ".join(f"{n} {d}" for d, n in counts.items() if n)
        tmp, dst, env = stage(entry)
        try:
            p = subprocess.run([PERMAUDIT, "check", "--format", "json"], cwd=os.path.join(dst, "project"),
                               env=env, capture_output=True, text=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ok = json.load(open(os.path.join(entry, "oracle.json")))["ok"]
        rows.append(f"| `{name}` | [{repo}](https://github.com/{repo}) | `{field('Commit')}` | {field('Kind')} | "
                    f"{files} | {p.returncode} | {'accepts' if ok else 'refuses'} |\n")
    lines = text.splitlines(keepends=True)
    table = [i for i, l in enumerate(lines) if l.startswith("| `")]
    lines[table[0]:table[-1] + 1] = sorted([lines[i] for i in table] + rows)
    text = "".join(lines)
    n = sum(1 for l in text.splitlines() if l.startswith("| `"))
    text = re.sub(r"^\d+ public repositories", f"{n} public repositories", text, count=1, flags=re.M)
    open(path, "w").write(text)
    print(f"INDEX.md: {len(rows)} rows added, {n} entries")


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == "add":
        prefixes = [a[i + 1] for i, x in enumerate(a) if x == "--prefix"]
        home = None
        if "--as-home" in a:
            i = a.index("--as-home")
            home = a[i + 1].rstrip("/") + "/" if i + 1 < len(a) and not a[i + 1].startswith("--") else ""
        add(a[1], a[2], home, prefixes)
    elif a[0] == "index":
        index()
    elif a[0] in ("oracle", "compare"):
        ok = all([(run_oracle if a[0] == "oracle" else compare)(os.path.abspath(d)) for d in a[1:]])
        sys.exit(0 if ok else 1)
    else:
        sys.exit(__doc__)


main()
