#!/usr/bin/env bash
# Build the VS Code extension (editors/vscode/) into target/vscode/permaudit.vsix with
# @vscode/vsce: its npm dependencies as package-lock.json pins them (`npm ci` into
# editors/vscode/node_modules, once, again when the lock changes), a type check (tsc), one
# bundled out/extension.js (esbuild; vscode-languageclient inside, so the .vsix carries no
# node_modules). The extension's version must be Cargo.toml's. Prints the .vsix's path.
# Nothing is published from here (docs/editors.md).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXT="$ROOT/editors/vscode"
OUT="$ROOT/target/vscode"
cd "$EXT"
for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "package-vscode.sh: $tool is required" >&2; exit 1; }
done
crate=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -n 1)
ext=$(node -p 'require("./package.json").version')
[ "$crate" = "$ext" ] || { echo "package-vscode.sh: editors/vscode/package.json has version $ext, Cargo.toml $crate: make them equal" >&2; exit 1; }
# node_modules/.permaudit-lock: the lock's hash when npm ci last installed it.
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.permaudit-lock 2>/dev/null)" != "$lock" ]; then
    echo "package-vscode.sh: installing the extension's npm dependencies (npm ci) into $EXT/node_modules" >&2
    npm ci --silent --no-audit --no-fund
    echo "$lock" > node_modules/.permaudit-lock
fi
mkdir -p "$OUT"
# vsce runs the manifest's vscode:prepublish (tsc --noEmit, then esbuild).
npx --no-install vsce package --no-dependencies --out "$OUT/permaudit.vsix" >&2
echo "$OUT/permaudit.vsix"
