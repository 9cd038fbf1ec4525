#!/usr/bin/env bash
# The GitHub Action outside GitHub (docs/ci.md "Use in GitHub Actions"; scripts/test.sh runs
# this): scripts/action.sh under the variables a runner sets (GITHUB_WORKSPACE, RUNNER_TEMP,
# GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_PATH, INPUT_* as action.yml passes them) on
# scratch workspaces. The first run installs as the action does by default (cargo install
# --locked of this checkout; CARGO_TARGET_DIR reuses target/, so it is quick after a
# release build); the others use that binary (install: path). Needs cargo, node and git.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"

# action.yml passes exactly the INPUT_* variables action.sh reads, one per input.
yml_env=$(grep -o 'INPUT_[A-Z_]*: \${{ inputs\.[a-z-]* }}' "$ROOT/action.yml" | sort)
sh_env=$(grep -o 'INPUT_[A-Z_]*' "$ROOT/scripts/action.sh" | sort -u)
[ "$(cut -d: -f1 <<<"$yml_env" | sort -u)" = "$sh_env" ] || fail "action.yml env and action.sh inputs differ"
while read -r var _ input _; do
    [ "$var" = "INPUT_$(tr 'a-z-' 'A-Z_' <<<"${input#inputs.}"):" ] || fail "$var is set from $input"
    grep -q "^  ${input#inputs.}:$" "$ROOT/action.yml" || fail "$input is not declared"
done <<<"$yml_env"

# A workspace: a repository whose OpenCode config has the classic shadowed deny.
workspace() {
    local w="$TMP/$1"
    mkdir -p "$w"
    git -C "$w" init -q
    printf '{"permission":{"edit":{\n  "*": "ask",\n  "tests/**": "deny",\n  "**": "allow"\n}}}\n' > "$w/opencode.json"
    echo "$w"
}

# run NAME [VAR=VALUE...]: action.sh with a fresh runner environment; sets $out (its
# stdout) and the files $T/output, $T/summary, $T/path.
run() {
    local name=$1
    shift
    T="$TMP/runner-$name"
    mkdir -p "$T/temp" "$T/home"
    : > "$T/output"; : > "$T/summary"; : > "$T/path"
    out=$(env -u CI HOME="$T/home" RUSTUP_HOME="$RUSTUP_HOME" CARGO_HOME="$CARGO_HOME" RUNNER_TEMP="$T/temp" GITHUB_OUTPUT="$T/output" \
        GITHUB_STEP_SUMMARY="$T/summary" GITHUB_PATH="$T/path" GITHUB_ACTIONS=true \
        "$@" bash "$ROOT/scripts/action.sh") || fail "$name: action.sh exited $? (it must exit 0 once the check ran)"
}
outvar() { sed -n "s/^$1=//p" "$T/output"; }

step "default inputs (install: cargo, format: github), sarif: true"
W=$(workspace findings)
run findings GITHUB_WORKSPACE="$W" INPUT_INSTALL=cargo INPUT_SARIF=true CARGO_TARGET_DIR="$ROOT/target"
bin="$T/temp/permaudit-cargo/bin/permaudit"
[ -x "$bin" ] || fail "cargo install put no binary at $bin"
[ "$(cat "$T/path")" = "$T/temp/permaudit-cargo/bin" ] || fail "GITHUB_PATH: $(cat "$T/path")"
[ "$(outvar exit-code)" = 1 ] || fail "exit-code $(outvar exit-code), expected 1"
# Annotations name files relative to the workspace (the repository root), or GitHub does
# not attach them to the pull request's files.
grep -q "^::error file=opencode.json,line=3,col=3,title=shadowed-deny::" <<<"$out" || fail "no annotation on opencode.json:3:3 in: $out"
expected=$("$bin" -C "$W" check --format json --fail-on never | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const m=JSON.parse(s).summary;console.log(`${m.error} ${m.warning} ${m.info}`)})')
[ "$(outvar errors) $(outvar warnings) $(outvar notes)" = "$expected" ] || fail "counts $(outvar errors) $(outvar warnings) $(outvar notes), the binary says $expected"
sarif=$(outvar sarif-file)
[ "$sarif" = "$T/temp/permaudit.sarif" ] || fail "sarif-file output: '$sarif'"
node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));
  if(s.version!=="2.1.0"||!s.runs[0].results.some(r=>r.ruleId==="shadowed-deny"))process.exit(1)' "$sarif" ||
    fail "$sarif is not SARIF 2.1.0 with the shadowed deny"
grep -qx '## permaudit' "$T/summary" || fail "summary heading missing: $(cat "$T/summary")"
# Counts read as a sentence: "1 error", "2 errors".
errs=$(outvar errors); [ "$errs" = 1 ] && noun=error || noun=errors
grep -q "findings at or above \`error\` (exit 1) · \*\*$errs\*\* $noun," "$T/summary" || fail "summary verdict: $(cat "$T/summary")"
grep -q '^| ❌ error | `shadowed-deny` | opencode.json:3:3 | build, .* | this deny never takes effect' "$T/summary" ||
    fail "summary lacks the shadowed-deny row with a workspace-relative place: $(cat "$T/summary")"

step "install: path, a working directory, a samples file, fail-on never, format human"
W=$(workspace subdir)
mkdir -p "$W/app"
mv "$W/opencode.json" "$W/app/opencode.json"
printf 'build edit tests/x.ts => deny\n' > "$W/app/samples.txt"
run subdir GITHUB_WORKSPACE="$W" PATH="$(dirname "$bin"):$PATH" INPUT_INSTALL=path INPUT_WORKING_DIRECTORY=app \
    INPUT_SAMPLES=samples.txt INPUT_FAIL_ON=never INPUT_FORMAT=human
[ "$(outvar exit-code)" = 0 ] || fail "fail-on never: exit-code $(outvar exit-code)"
[ -z "$(outvar sarif-file)" ] || fail "sarif: false wrote $(outvar sarif-file)"
grep -qx 'shadowed-deny' <<<"$out" || fail "format human: $out"
grep -q '^| ❌ error | `sample-mismatch` | app/samples.txt:1:1 ' "$T/summary" || fail "summary lacks the failing sample: $(cat "$T/summary")"
grep -q '^Samples: 1 decided, 1 not as expected\.$' "$T/summary" || fail "samples line: $(cat "$T/summary")"

step "format github in a working directory: annotations relative to the workspace"
run subdir-github GITHUB_WORKSPACE="$W" PATH="$(dirname "$bin"):$PATH" INPUT_INSTALL=path INPUT_WORKING_DIRECTORY=app
[ "$(outvar exit-code)" = 1 ] || fail "subdir: exit-code $(outvar exit-code)"
grep -q "^::error file=app/opencode.json,line=3,col=3,title=shadowed-deny::" <<<"$out" || fail "no annotation on app/opencode.json:3:3 in: $out"

step "a config OpenCode refuses: exit-code 2, no SARIF, the refusal in the summary"
W=$(workspace refused)
printf '{"permission": {"edit": [1]}}\n' > "$W/opencode.json"
run refused GITHUB_WORKSPACE="$W" PATH="$(dirname "$bin"):$PATH" INPUT_INSTALL=path INPUT_SARIF=true
[ "$(outvar exit-code)" = 2 ] || fail "refused: exit-code $(outvar exit-code)"
[ -z "$(outvar sarif-file)" ] && [ ! -e "$T/temp/permaudit.sarif" ] || fail "refused: SARIF written"
grep -q 'OpenCode would refuse this configuration (exit 2)' "$T/summary" || fail "refused summary: $(cat "$T/summary")"
grep -q 'opencode.json:1:' "$T/summary" || fail "refused summary lacks file:line: $(cat "$T/summary")"

step "a clean config: exit-code 0, summary says so"
W=$(workspace clean)
printf '{"permission":{"edit":{"**":"ask","tests/**":"deny"}}}\n' > "$W/opencode.json"
run clean GITHUB_WORKSPACE="$W" PATH="$(dirname "$bin"):$PATH" INPUT_INSTALL=path
[ "$(outvar exit-code)" = 0 ] || fail "clean: exit-code $(outvar exit-code)"
grep -q '✅ nothing at or above `error`' "$T/summary" || fail "clean summary: $(cat "$T/summary")"

step "bad inputs stop the step with an error annotation"
set +e
bad=$(env RUNNER_TEMP="$TMP/x" GITHUB_WORKSPACE="$W" INPUT_INSTALL=brew bash "$ROOT/scripts/action.sh" 2>&1)
code=$?
set -e
[ "$code" = 2 ] && grep -q "^::error title=permaudit::install: 'brew'" <<<"$bad" || fail "install: brew gave $code: $bad"

step "fix-diff: unsafe writes the proven fixes as a patch that applies, and shows it in the summary"
W=$(workspace fixdiff)
run fixdiff GITHUB_WORKSPACE="$W" INPUT_INSTALL=path INPUT_FIX_DIFF=unsafe PATH="$(dirname "$bin"):$PATH"
patch=$(outvar fix-diff)
[ "$patch" = "$T/temp/permaudit-fix.diff" ] || fail "fix-diff output: '$patch'"
grep -q '^+  "tests/\*\*": "deny"' "$patch" || fail "the patch does not move the deny: $(cat "$patch")"
grep -qx '## permaudit: proven fixes' "$T/summary" || fail "no fixes in the summary: $(cat "$T/summary")"
git -C "$W" apply --check "$patch" || fail "the patch does not apply: $(cat "$patch")"
git -C "$W" apply "$patch"
[ -z "$("$(dirname "$bin")/permaudit" -C "$W" check --diff --unsafe-fixes)" ] || fail "fixes left after applying the patch"
run fixsafe GITHUB_WORKSPACE="$W" INPUT_INSTALL=path INPUT_FIX_DIFF=safe PATH="$(dirname "$bin"):$PATH"
[ -z "$(outvar fix-diff)" ] || fail "fix-diff output when there is nothing to fix: $(outvar fix-diff)"

step "ok: action.sh writes annotations, SARIF, outputs and a job summary"
