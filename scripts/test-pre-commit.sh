#!/usr/bin/env bash
# The pre-commit hooks as a user meets them (docs/ci.md "Use in pre-commit"; scripts/test.sh
# runs this): pre-commit (from PyPI, into target/pre-commit-venv) runs `try-repo` of this
# repository on a scratch git repository: the hook installs permaudit with
# `cargo install --locked` (CARGO_TARGET_DIR=target/ reuses the release build's
# dependencies; only permaudit itself compiles) and fails on a shadowed deny and a sample
# OpenCode decides otherwise; it is skipped when no file OpenCode reads changed. try-repo
# clones into a fresh store on every call, so the hook is built in exactly one of them. The `files` pattern is also checked path by path with Python's re, as pre-commit
# matches it. Needs python3 (venv), git and cargo; try-repo uses the committed HEAD (with
# uncommitted changes, a snapshot of them, rebuilt on each run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"
pre_commit_venv

step "the files pattern, path by path"
"$VENV/bin/python" - "$ROOT/.pre-commit-hooks.yaml" <<'PY' || fail "files pattern"
import re, sys, yaml
hooks = yaml.safe_load(open(sys.argv[1]))
patterns = {h["files"] for h in hooks}
assert len(patterns) == 1, "every hook watches the same files"
files = re.compile(patterns.pop())
read = """opencode.json opencode.jsonc .opencode/opencode.json .opencode/opencode.jsonc
.opencode/agent/review.md .opencode/agents/review.md .opencode/agent/team/deep/review.md
.opencode/mode/fast.md .opencode/modes/fast.md .opencode/permaudit-samples.txt
.opencode/skill/x/SKILL.md .opencode/skills/a/b/SKILL.md .opencode/skills/SKILL.md
.claude/skills/x/SKILL.md .agents/skills/x/y/SKILL.md""".split()
not_read = """config.json src/config.json .opencode/config.json packages/app/opencode.json
.opencode/mode/nested/fast.md .opencode/agent/notes.txt .opencode/package.json
.opencode/plugin/x.ts README.md docs/opencode.json.md .opencode/permaudit-samples.txt.bak
x/.opencode/opencode.json .claude/settings.json .claude/agents/x.md
opencode.json5 .opencode/skills/x/README.md""".split()
bad = [p for p in read if not files.search(p)] + [p for p in not_read if files.search(p)]
if bad:
    sys.exit(f"pattern {files.pattern!r} gets these wrong: {bad}")
PY

step "every hook that builds runs the one locked build (scripts/pre-commit-hook.sh), none language: rust"
"$VENV/bin/python" - "$ROOT/.pre-commit-hooks.yaml" <<'PY' || fail "hook entries"
import sys, yaml
hooks = {h["id"]: h for h in yaml.safe_load(open(sys.argv[1]))}
assert all(h["language"] in ("script", "system") for h in hooks.values()), hooks
assert hooks["permaudit"]["entry"] == "scripts/pre-commit-hook.sh check --project-only", hooks["permaudit"]
assert hooks["permaudit-system"]["entry"] == "permaudit check --project-only", hooks["permaudit-system"]
assert hooks["permaudit-diff"]["entry"] == "scripts/pre-commit-hook.sh diff --project-only --staged", hooks["permaudit-diff"]
assert hooks["permaudit-fix"]["entry"] == "scripts/pre-commit-hook.sh check --project-only --fix", hooks["permaudit-fix"]
PY

# A scratch repository in which the user commits; HOME of its own (no global config).
P="$TMP/project"
mkdir -p "$P/src" "$TMP/home"
git -C "$P" init -q
git -C "$P" config user.email t@example.com
git -C "$P" config user.name test
printf '{"permission":{"edit":{\n  "*": "ask",\n  "tests/**": "deny",\n  "**": "allow"\n}}}\n' > "$P/opencode.json"
echo '{}' > "$P/src/config.json"
git -C "$P" add -A
export HOME="$TMP/home" CARGO_TARGET_DIR="$ROOT/target"
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME OPENCODE_CONFIG OPENCODE_CONFIG_DIR OPENCODE_CONFIG_CONTENT OPENCODE_PERMISSION

# try HOOK-ARGS...: `pre-commit try-repo ROOT permaudit ARGS` in the scratch repository;
# sets $out and $code.
try() {
    set +e
    out=$(cd "$P" && "$PC" try-repo "$ROOT" permaudit --color never "$@" 2>&1)
    code=$?
    set -e
}

step "try-repo when only a file OpenCode does not read changed: skipped (nothing built)"
try --files src/config.json
[ "$code" = 0 ] || fail "expected skip (exit 0), got $code: $out"
grep -q '^permaudit\.*(no files to check)Skipped$' <<<"$out" || fail "not skipped: $out"

step "try-repo on a shadowed deny and the samples file: the hook installs permaudit (cargo --locked) and fails"
mkdir -p "$P/.opencode"
printf 'build edit tests/x.ts => deny\n' > "$P/.opencode/permaudit-samples.txt"
git -C "$P" add -A
started=$SECONDS
try --all-files
[ "$code" = 1 ] || fail "expected the hook to fail (exit 1), got $code: $out"
grep -q '^permaudit\.*Failed$' <<<"$out" || fail "no 'permaudit...Failed' line: $out"
grep -q 'building permaudit from .* with cargo install --locked' <<<"$out" || fail "the hook did not install permaudit: $out"
grep -q 'to your PATH' <<<"$out" && fail "the first run passes on cargo's PATH warning (the hook runs the binary by its path): $out"
grep -qx 'shadowed-deny' <<<"$out" || fail "the hook's output lacks the finding: $out"
grep -qx 'sample-mismatch' <<<"$out" || fail "the hook did not read .opencode/permaudit-samples.txt: $out"
step "  took $((SECONDS - started)) s"

step "the permaudit-diff entry on a staged widening, with the build the first hook made"
# A copy of the hook's script beside the binary try-repo built: what pre-commit runs for
# permaudit-diff in the same store checkout (both hooks share one build per rev).
H="$TMP/hookrepo"
mkdir -p "$H/scripts" "$H/.permaudit-hook/bin"
cp "$ROOT/scripts/pre-commit-hook.sh" "$H/scripts/"
cp "$ROOT/target/release/permaudit" "$H/.permaudit-hook/bin/permaudit"
printf '{"permission":{"edit":{"*": "ask", "tests/**": "deny"}}}\n' > "$P/opencode.json"
git -C "$P" add -A
git -C "$P" commit -qm base
printf '{"permission":{"edit":{"*": "ask", "tests/**": "allow"}}}\n' > "$P/opencode.json"
git -C "$P" add opencode.json
set +e
out=$(cd "$P" && NO_COLOR=1 bash "$H/scripts/pre-commit-hook.sh" diff --project-only --staged 2>&1)
code=$?
set -e
[ "$code" = 1 ] || fail "expected the diff hook to fail on a widening (exit 1), got $code: $out"
grep -q 'permaudit diff: HEAD → index' <<<"$out" || fail "not HEAD vs the index: $out"
grep -q 'deny → allow' <<<"$out" || fail "the widening is not reported: $out"

step "the permaudit-fix entry under pre-commit: fixes the file, and pre-commit fails because it changed"
rm -f "$P/.opencode/permaudit-samples.txt"
# The catch-all first: without it the list restricts nothing (`open-allow-list`), which
# speaks for the entries, and the redundant one is no finding of its own.
printf '{\n  // a redundant rule\n  "permission": {"bash": {"*": "ask", "git status": "allow", "git *": "allow"}}\n}\n' > "$P/opencode.json"
cat > "$P/.pre-commit-config.yaml" <<YAML
repos:
  - repo: local
    hooks:
      - id: permaudit-fix
        name: permaudit-fix
        entry: bash $H/scripts/pre-commit-hook.sh check --fix
        language: system
        pass_filenames: false
        files: ^opencode\.json$
YAML
git -C "$P" add -A
set +e
out=$(cd "$P" && NO_COLOR=1 "$PC" run --all-files --color never 2>&1)
code=$?
set -e
[ "$code" = 1 ] || fail "expected pre-commit to fail after the fix (exit 1), got $code: $out"
grep -q 'files were modified by this hook' <<<"$out" || fail "pre-commit did not see the fix: $out"
grep -q 'fixed 1 finding in 1 file' <<<"$out" || fail "the hook did not say what it fixed: $out"
grep -q '"git status"' "$P/opencode.json" && fail "the redundant rule is still there: $(cat "$P/opencode.json")"
grep -q '// a redundant rule' "$P/opencode.json" || fail "the comment was lost: $(cat "$P/opencode.json")"
git -C "$P" add -A
set +e
out=$(cd "$P" && NO_COLOR=1 "$PC" run --all-files --color never 2>&1)
code=$?
set -e
[ "$code" = 0 ] || fail "a second run should pass (nothing left to fix), got $code: $out"

step "ok: the pre-commit hook skips unrelated files, installs permaudit locked and reports"
