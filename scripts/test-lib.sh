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

# Debian packages WHY needs (`system_packages WHY PKG...`): a system-wide install, so run
# only when asked (PERMAUDIT_SYSTEM_INSTALL=1; as root, or through sudo), said first;
# otherwise it stops and says what to run.
system_packages() {
    local why=$1 as_root=()
    shift
    [ "${PERMAUDIT_SYSTEM_INSTALL:-}" = 1 ] ||
        fail "$why: install it (sudo apt-get install $*), or rerun with PERMAUDIT_SYSTEM_INSTALL=1 to let this script run apt-get install -y $* (as root, through sudo)"
    [ "$(id -u)" = 0 ] || as_root=(sudo)
    step "PERMAUDIT_SYSTEM_INSTALL=1: running \`${as_root[*]} apt-get update && ${as_root[*]} apt-get install -y $*\` (system-wide)"
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "$@" >/dev/null
}

# Debian's Chromium and playwright-core (npm, into target/report-browser, once; with
# axe-core too when AXE_VERSION is given): sets and exports PLAYWRIGHT_DIR. Used by
# test-report.sh and test-vscode.sh. Chromium is a system package: when missing, it stops
# and says how to install it, unless PERMAUDIT_SYSTEM_INSTALL=1 (then apt-get, as root or
# through sudo, said first).
PLAYWRIGHT_VERSION=1.65.2
browser_deps() {
    local axe_version=${1:-}
    [ -x /usr/bin/chromium ] || system_packages "Debian's chromium is missing" chromium
    PLAYWRIGHT_DIR="$ROOT/target/report-browser"
    local pkg
    for pkg in "playwright-core@$PLAYWRIGHT_VERSION" ${axe_version:+"axe-core@$axe_version"}; do
        local name=${pkg%@*} version=${pkg##*@}
        if [ ! -f "$PLAYWRIGHT_DIR/node_modules/$name/package.json" ] ||
            [ "$(node -p "require('$PLAYWRIGHT_DIR/node_modules/$name/package.json').version")" != "$version" ]; then
            step "installing $name $version from npm into $PLAYWRIGHT_DIR"
            mkdir -p "$PLAYWRIGHT_DIR"
            # Both named each time: npm --no-save removes what the command does not name.
            npm install --silent --no-save --no-audit --no-fund --prefix "$PLAYWRIGHT_DIR" \
                "playwright-core@$PLAYWRIGHT_VERSION" ${axe_version:+"axe-core@$axe_version"}
        fi
    done
    export PLAYWRIGHT_DIR
}
