#!/usr/bin/env bash
# The project's test command (README.md; .ci/run calls it): installs the OpenCode 1.18.34
# oracle the conformance suite compares against, then runs every test: cargo's (none
# skipped: PERMAUDIT_REQUIRE_ORACLE), then the distribution end to end on the release
# binary cargo built (npm packages, the GitHub Action's script, the pre-commit hook), and
# every shell block of README.md as written (scripts/test-readme.sh), and the `report` page
# in Chromium (scripts/test-report.sh).
# `cargo test` alone is the fast tier (docs/testing.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OPENCODE_BIN=$(bash scripts/install-oracle.sh | tail -n 1)
export OPENCODE_BIN
# One representative release per older profile (src/profile.rs, Profile::representatives;
# set and empty: none),
# for the per-profile sample of tests/conformance.rs (docs/opencode.md).
PERMAUDIT_PROFILE_VERSIONS=${PERMAUDIT_PROFILE_VERSIONS-1.14.41,1.15.4,1.15.13,1.17.0,1.17.9,1.17.19,1.18.15,1.18.23}
export PERMAUDIT_PROFILE_VERSIONS
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
