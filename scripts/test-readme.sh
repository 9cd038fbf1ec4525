#!/usr/bin/env bash
# The front README as a newcomer meets it (scripts/test.sh runs this): every fenced `sh`
# block of README.md runs as written, in order, in a fresh clone of this repository
# (the work tree's tracked files, uncommitted edits included) with a HOME of its own.
#
# Markers, an HTML comment on the line before a block:
#   <!-- readme-test: network … -->  not run (it needs the network);
#   <!-- readme-test: exit N -->     the block must exit N (default 0).
# A ```text block that is the next fenced block after a run block is its output: each of its lines must appear in
# what the block printed (stdout and stderr), in order; a line `…` skips any number of
# lines, and how many spaces separate words does not count (column widths follow the
# machine's paths, such as HOME's in built-in rules). Tools stay where they are (cargo's registry is
# reused, CARGO_TARGET_DIR is target/ so only permaudit itself compiles); `cargo install`
# installs into the scratch directory, which is first on PATH.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"

CLONE="$TMP/clone"
step "a fresh clone in $CLONE"
git clone -q "$ROOT" "$CLONE"
(cd "$ROOT" && git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$CLONE"
mkdir -p "$TMP/home"
export CARGO_TARGET_DIR="$ROOT/target"

"${PYTHON:-python3}" - "$CLONE" "$TMP" <<'PY' || fail "README blocks"
import os, re, subprocess, sys
clone, tmp = sys.argv[1], sys.argv[2]
text = open(os.path.join(clone, "README.md"), encoding="utf-8").read().split("\n")
blocks, i = [], 0
while i < len(text):
    m = re.match(r"^```(\w*)\s*$", text[i])
    if not m:
        i += 1
        continue
    lang, start = m.group(1), i + 1
    j = start
    while text[j] != "```":
        j += 1
    marker = text[i - 1] if i > 0 else ""
    blocks.append({"lang": lang, "body": "\n".join(text[start:j]), "line": i + 1, "marker": marker})
    i = j + 1

env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_", "XDG_", "NO_COLOR"))}
env.update({
    "HOME": os.path.join(tmp, "home"),
    "CARGO_INSTALL_ROOT": os.path.join(tmp, "cargo-root"),
    "PATH": os.path.join(tmp, "cargo-root", "bin") + os.pathsep + os.environ["PATH"],
})

ran = skipped = 0
failures = []
for k, b in enumerate(blocks):
    if b["lang"] != "sh":
        continue
    where = f"README.md:{b['line']}"
    if "readme-test: network" in b["marker"]:
        print(f"test-readme: {where}: not run (marked as needing the network)", file=sys.stderr)
        skipped += 1
        continue
    m = re.search(r"readme-test: exit (\d+)", b["marker"])
    want = int(m.group(1)) if m else 0
    print(f"test-readme: {where}: {b['body'].splitlines()[0]}", file=sys.stderr)
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", b["body"]], cwd=clone, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace")
    ran += 1
    if p.returncode != want:
        failures.append(f"{where}: exit {p.returncode}, expected {want}:\n{out[-3000:]}")
        continue
    nxt = blocks[k + 1] if k + 1 < len(blocks) else None
    if nxt and nxt["lang"] == "text":
        norm = lambda l: re.sub(r" +", " ", l).rstrip()
        got = [norm(l) for l in out.split("\n")]
        pos, gap = 0, True
        for want_line in nxt["body"].split("\n"):
            want_line = norm(want_line)
            if want_line == "…":
                gap = True
                continue
            found = None
            for q in range(pos, len(got) if gap else min(pos + 1, len(got))):
                if got[q] == want_line:
                    found = q
                    break
            if found is None:
                failures.append(f"{where}: the output shown at README.md:{nxt['line']} is not what the block printed; "
                                f"missing {want_line!r} after line {pos} of:\n{out}")
                break
            pos, gap = found + 1, False
if failures:
    sys.exit("\n\n".join(failures))
if ran == 0:
    sys.exit("no sh block ran")
print(f"test-readme: {ran} blocks ran as written, {skipped} marked as needing the network", file=sys.stderr)
PY
step "ok: every sh block of README.md runs as written"

# The pre-commit block (`# .pre-commit-config.yaml`) works today: in a scratch repository
# with the example's dead deny, `pre-commit run` with the permaudit just installed fails on it.
step "the README's .pre-commit-config.yaml on a scratch repository"
pre_commit_venv
P="$TMP/precommit"
mkdir -p "$P"
git -C "$P" init -q
cp "$CLONE/fixtures/example/opencode.json" "$P/"
awk '/^```yaml$/ {inblock=1; buf=""; next} /^```$/ {if (inblock && buf ~ /^# \.pre-commit-config\.yaml/) printf "%s", buf; inblock=0; next} inblock {buf = buf $0 "\n"}' \
    "$CLONE/README.md" > "$P/.pre-commit-config.yaml"
grep -q 'entry: permaudit check' "$P/.pre-commit-config.yaml" || fail "no .pre-commit-config.yaml block in README.md"
git -C "$P" add -A
set +e
out=$(cd "$P" && HOME="$TMP/home" PATH="$TMP/cargo-root/bin:$PATH" "$PC" run --all-files --color never 2>&1)
code=$?
set -e
[ "$code" = 1 ] || fail "expected the hook to fail on the dead deny (exit 1), got $code: $out"
grep -q '^permaudit\.*Failed$' <<<"$out" || fail "no 'permaudit...Failed' line: $out"
grep -qx 'shadowed-deny' <<<"$out" || fail "the hook's output lacks the finding: $out"
step "ok: the README's pre-commit block fails a commit with a dead deny"
