#!/usr/bin/env bash
# The GitHub Action's step (action.yml): install permaudit, run `check` on the workspace,
# optionally write SARIF, write a job summary and the step's outputs. Exits 0 when the check
# ran, whatever it found: action.yml uploads the SARIF and then fails the job with the
# check's exit code (output `exit-code`). Exits non-zero itself only when it cannot run.
#
# Reads what the runner provides: GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY, GITHUB_PATH (each optional except the first two), and the inputs as
# INPUT_WORKING_DIRECTORY, INPUT_FORMAT, INPUT_FAIL_ON, INPUT_SAMPLES, INPUT_SARIF,
# INPUT_SARIF_FILE, INPUT_SUMMARY, INPUT_FIX_DIFF, INPUT_INSTALL, INPUT_VERSION (action.yml
# sets them).
# scripts/test-action.sh runs it outside GitHub with those variables.
set -euo pipefail
ACTION_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${GITHUB_WORKSPACE:?GITHUB_WORKSPACE is not set (the runner sets it)}"
: "${RUNNER_TEMP:?RUNNER_TEMP is not set (the runner sets it)}"

wd=${INPUT_WORKING_DIRECTORY:-.}
format=${INPUT_FORMAT:-github}
fail_on=${INPUT_FAIL_ON:-error}
samples=${INPUT_SAMPLES:-}
sarif=${INPUT_SARIF:-false}
sarif_file=${INPUT_SARIF_FILE:-$RUNNER_TEMP/permaudit.sarif}
summary=${INPUT_SUMMARY:-true}
fix_diff=${INPUT_FIX_DIFF:-false}
install=${INPUT_INSTALL:-cargo}
version=${INPUT_VERSION:-}

output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1=$2" >> "$GITHUB_OUTPUT"; fi; }
die() { echo "::error title=permaudit::$*"; exit 2; }

# 1. permaudit itself.
case "$install" in
cargo)
    command -v cargo >/dev/null || die "install: cargo needs Rust (cargo) on the runner; or use install: npm"
    echo "::group::cargo install --locked permaudit (from $ACTION_ROOT)"
    cargo install --locked --quiet --path "$ACTION_ROOT" --root "$RUNNER_TEMP/permaudit-cargo"
    echo "::endgroup::"
    bindir="$RUNNER_TEMP/permaudit-cargo/bin"
    ;;
npm)
    command -v npm >/dev/null || die "install: npm needs Node.js (npm) on the runner"
    if [ -z "$version" ]; then
        version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ACTION_ROOT/Cargo.toml" | head -n 1)
    fi
    echo "::group::npm install permaudit@$version"
    npm install --prefix "$RUNNER_TEMP/permaudit-npm" --no-audit --no-fund --loglevel=error "permaudit@$version"
    echo "::endgroup::"
    bindir="$RUNNER_TEMP/permaudit-npm/node_modules/.bin"
    ;;
path)
    command -v permaudit >/dev/null || die "install: path, but no permaudit on PATH"
    bindir=$(dirname "$(command -v permaudit)")
    ;;
*) die "install: '$install' is not cargo, npm or path" ;;
esac
bin="$bindir/permaudit"
[ -x "$bin" ] || die "no permaudit at $bin after install: $install"
if [ -n "${GITHUB_PATH:-}" ]; then echo "$bindir" >> "$GITHUB_PATH"; fi
echo "$("$bin" --version)"

# 2. The check, in the directory OpenCode would start in.
cd "$GITHUB_WORKSPACE"
cd "$wd" || die "working-directory: '$wd' is not a directory of the workspace"
args=(check)
if [ -n "$samples" ]; then args+=(--samples "$samples"); fi

set +e
if [ "$format" = github ]; then
    # Annotations attach to a file of the pull request only by its path relative to the
    # repository (the workspace); permaudit names files by absolute path.
    "$bin" "${args[@]}" --format github --absolute-paths --fail-on "$fail_on" > "$RUNNER_TEMP/permaudit-annotations.txt"
    code=$?
    ws=${GITHUB_WORKSPACE%/}
    prefix="file=${ws//:/%3A}/"
    prefix=${prefix//,/%2C}
    while IFS= read -r line; do
        printf '%s\n' "${line/"$prefix"/file=}"
    done < "$RUNNER_TEMP/permaudit-annotations.txt"
else
    "$bin" "${args[@]}" --format "$format" --fail-on "$fail_on"
    code=$?
fi
set -e
output exit-code "$code"

# 3. SARIF (not when the config is refused: there is nothing to upload then).
if [ "$sarif" = true ] && [ "$code" != 2 ]; then
    mkdir -p "$(dirname "$sarif_file")"
    "$bin" "${args[@]}" --format sarif --fail-on never > "$sarif_file" || die "writing SARIF to $sarif_file failed"
    output sarif-file "$sarif_file"
else
    output sarif-file ""
fi

# 3b. The proven fixes as a patch (not when the config is refused).
fix_file="$RUNNER_TEMP/permaudit-fix.diff"
case "$fix_diff" in
false) fix_args=() ;;
safe) fix_args=(--diff) ;;
unsafe) fix_args=(--diff --unsafe-fixes) ;;
*) die "fix-diff: '$fix_diff' is not false, safe or unsafe" ;;
esac
if [ ${#fix_args[@]} -gt 0 ] && [ "$code" != 2 ]; then
    set +e
    "$bin" "${args[@]}" "${fix_args[@]}" > "$fix_file" 2> "$RUNNER_TEMP/permaudit-fix.txt"
    fix_code=$?
    set -e
    [ "$fix_code" = 0 ] || [ "$fix_code" = 1 ] || die "check --diff exited $fix_code: $(cat "$RUNNER_TEMP/permaudit-fix.txt")"
fi
if [ ${#fix_args[@]} -gt 0 ] && [ "$code" != 2 ] && [ -s "$fix_file" ]; then
    output fix-diff "$fix_file"
    if [ "$summary" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        {
            echo "## permaudit: proven fixes"
            echo
            echo "$(cat "$RUNNER_TEMP/permaudit-fix.txt") (artifact \`permaudit-fix\`; apply with \`git apply\`):"
            echo
            echo '```diff'
            head -c 60000 "$fix_file"
            echo '```'
            echo
        } >> "$GITHUB_STEP_SUMMARY"
    fi
else
    output fix-diff ""
fi

# 4. Counts and the job summary, from the versioned JSON report.
report="$RUNNER_TEMP/permaudit-report.json"
set +e
# Absolute paths: the summary makes them relative to the workspace, wherever the
# project root (the git worktree) is.
"$bin" "${args[@]}" --format json --absolute-paths --fail-on never > "$report" 2> "$RUNNER_TEMP/permaudit-stderr.txt"
json_code=$?
set -e
if [ "$json_code" = 0 ] && command -v node >/dev/null; then
    node "$ACTION_ROOT/scripts/action-summary.js" "$report" "$GITHUB_WORKSPACE" "$code" "$fail_on" \
        "${GITHUB_OUTPUT:-}" "$([ "$summary" = true ] && echo "${GITHUB_STEP_SUMMARY:-}")"
elif [ "$summary" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
        echo "## permaudit"
        echo
        if [ "$json_code" != 0 ]; then
            echo "OpenCode would refuse this configuration (exit $code):"
            echo
            echo '```text'
            head -c 60000 "$RUNNER_TEMP/permaudit-stderr.txt"
            echo '```'
        else
            echo "permaudit check exited $code (no findings table: \`node\` is not on the runner)."
        fi
    } >> "$GITHUB_STEP_SUMMARY"
fi
