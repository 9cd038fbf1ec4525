#!/usr/bin/env bash
# The entry of the `permaudit` and `permaudit-diff` pre-commit hooks (.pre-commit-hooks.yaml):
# `permaudit COMMAND` with the hook's args (`check …`, `diff --project-only --staged …`), in
# the repository being committed. pre-commit keeps one checkout of
# the hook repository per rev; the first run installs permaudit from it with
# `cargo install --locked` (the versions Cargo.lock names) into that checkout, later runs
# start the installed binary directly. CARGO_TARGET_DIR, when set, is used for the build.
# pre-commit holds a hook's output until the hook ends, so the first run's build would be
# minutes of silence: its progress goes to the terminal (/dev/tty) when there is one.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT_DIR="$HERE/.permaudit-hook"
bin="$ROOT_DIR/bin/permaudit"
if [ ! -x "$bin" ]; then
    if ! command -v cargo >/dev/null; then
        echo "permaudit hook: building permaudit needs Rust (cargo): https://rustup.rs." >&2
        echo "Or use the hook id permaudit-system with a permaudit on PATH (npm install -g permaudit)." >&2
        exit 2
    fi
    progress=/dev/stderr
    if { : >/dev/tty; } 2>/dev/null; then
        progress=/dev/tty
    fi
    echo "permaudit hook: building permaudit from $HERE with cargo install --locked (first run of this rev only; a few minutes)" >"$progress"
    # The hook runs the binary by its path: with its directory on PATH for the build,
    # cargo does not tell the user to "add … to your PATH".
    PATH="$ROOT_DIR/bin:$PATH" cargo install --locked --path "$HERE" --root "$ROOT_DIR" 2>"$progress"
    echo "permaudit hook: built $bin" >"$progress"
fi
exec "$bin" "$@"
