# Sourced by the scripts/test-*.sh end-to-end tests: ROOT (the repository), a scratch TMP
# removed on exit, `fail MESSAGE` and `step MESSAGE` (both on stderr, named after the test).
NAME=$(basename "$0" .sh)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/permaudit-$NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "$NAME: FAIL: $*" >&2; exit 1; }
step() { echo "$NAME: $*" >&2; }
# Each test gives its processes a HOME of their own (no global OpenCode config); Rust and
# its toolchains stay where they are.
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}

# pre-commit from PyPI in a venv under target/ (made once, kept across runs): sets VENV and
# PC, the pre-commit executable. Used by test-pre-commit.sh and test-readme.sh.
PRE_COMMIT_VERSION=4.7.0
pre_commit_venv() {
    VENV="$ROOT/target/pre-commit-venv"
    if [ ! -x "$VENV/bin/pre-commit" ] || [ "$("$VENV/bin/pre-commit" --version)" != "pre-commit $PRE_COMMIT_VERSION" ]; then
        step "installing pre-commit $PRE_COMMIT_VERSION from PyPI into $VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install --quiet --disable-pip-version-check "pre-commit==$PRE_COMMIT_VERSION"
    fi
    PC="$VENV/bin/pre-commit"
}
