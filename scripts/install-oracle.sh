#!/usr/bin/env bash
# Install a conformance-test oracle: the real OpenCode binary (npm package
# opencode-linux-x64) of VERSION (default 1.18.34) into <repo>/.oracle (1.18.34) or
# <repo>/.oracle/VERSION (any other release, for the per-profile sample), all git-ignored.
# Idempotent: when that version is already installed it does nothing. Prints the binary's
# path on stdout.
#
#   scripts/install-oracle.sh && cargo test --test conformance
#   scripts/install-oracle.sh 1.17.0      # one profile's representative release
#
# tests/conformance.rs looks for the binaries at the printed paths (1.18.34 also in
# $OPENCODE_BIN).
set -euo pipefail

DEFAULT=1.18.34
VERSION=${1:-$DEFAULT}
if ! [[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "install-oracle.sh: expected a release number such as $DEFAULT, got '$VERSION'" >&2
    exit 2
fi
PACKAGE=opencode-linux-x64
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX="$ROOT/.oracle"
if [ "$VERSION" != "$DEFAULT" ]; then
    PREFIX="$ROOT/.oracle/$VERSION"
fi
PKGDIR="$PREFIX/node_modules/$PACKAGE"
BIN="$PKGDIR/bin/opencode"

installed() {
    [ -x "$BIN" ] && [ -f "$PKGDIR/package.json" ] &&
        grep -Eq "\"version\": *\"$VERSION\"" "$PKGDIR/package.json"
}

if ! installed; then
    if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
        echo "install-oracle.sh: the oracle is $PACKAGE (linux x86_64); this machine is $(uname -sm)." >&2
        echo "Point OPENCODE_BIN at an OpenCode $VERSION binary for your platform instead." >&2
        exit 1
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-oracle.sh: npm is required (https://nodejs.org/)." >&2
        exit 1
    fi
    mkdir -p "$PREFIX"
    echo "install-oracle.sh: installing $PACKAGE@$VERSION into $PREFIX" >&2
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
        "$PACKAGE@$VERSION" >&2
    if ! installed; then
        echo "install-oracle.sh: npm finished but $BIN is not OpenCode $VERSION." >&2
        exit 1
    fi
fi

echo "$BIN"
