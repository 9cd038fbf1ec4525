#!/usr/bin/env bash
# Neovim for tests/neovim.rs (a real LSP client on `permaudit server`): from the system's
# packages when `nvim` is missing (Debian/Ubuntu apt; as root, or through sudo).
set -euo pipefail
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
