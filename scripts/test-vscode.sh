#!/usr/bin/env bash
# The VS Code extension in a real VS Code (docs/editors.md): code-server 4.139.1 (VS Code
# 1.139.1; npm, with Node 24, into target/vscode-test/, once: scripts/vscode-lib.sh) with
# target/vscode/permaudit.vsix (scripts/package-vscode.sh) installed, and
# tests/browser/vscode.mjs driving it in Debian's Chromium with playwright-core (npm, into
# target/report-browser, as scripts/test-report.sh does): a copy of fixtures/example opened,
# `check`'s errors and warnings in Problems at their places, hover, the quick fix offered
# and applied, completion, the message when the binary is missing or too old. Screenshots
# in target/vscode-test/ (PERMAUDIT_UPDATE_SCREENSHOT=1 copies the quick fix's and the
# completion's to docs/). Chromium and code-server's build headers are system packages:
# missing, it stops and says what to run, unless PERMAUDIT_SYSTEM_INSTALL=1 (then apt-get,
# as root or through sudo, said first). Each step says how long since the start.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"
source "$ROOT/scripts/vscode-lib.sh"
started=$SECONDS

browser_deps
install_code_server
step "code-server $CODE_SERVER_VERSION ready ($((SECONDS - started)) s since the start)"

cargo build --release --locked -q
BIN_DIR="$ROOT/target/release"
step "packaging the extension"
VSIX=$(bash "$ROOT/scripts/package-vscode.sh" 2>"$TMP/package.log") || { cat "$TMP/package.log" >&2; fail "packaging the extension failed"; }
step "packaged ($((SECONDS - started)) s since the start)"

home="$TMP/home"
user_data="$TMP/user-data"
extensions="$TMP/extensions"
mkdir -p "$home" "$user_data/User" "$extensions"
# permaudit on PATH as a user puts it there: VS Code's extension host takes its environment
# from a login shell (which resets PATH from /etc/profile), so through ~/.profile.
printf 'PATH="%s:$PATH"\n' "$BIN_DIR" > "$home/.profile"
# Quiet, deterministic workbench: no welcome page, tips, trust prompt, update checks.
cat > "$user_data/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.disableAIFeatures": true,
  "editor.hover.delay": 100,
  "json.schemaDownload.enable": false
}
JSON
printf 'auth: none\ncert: false\n' > "$user_data/config.yaml"
step "installing $(basename "$VSIX") into code-server"
HOME="$home" PATH="$NODE24:$PATH" "$NODE24/node" "$CODE_SERVER" --config "$user_data/config.yaml" \
    --user-data-dir "$user_data" --extensions-dir "$extensions" --install-extension "$VSIX" > "$TMP/install-ext.log" 2>&1 ||
    { cat "$TMP/install-ext.log" >&2; fail "code-server --install-extension failed"; }
ls "$extensions" | grep -q '^permaudit\.permaudit-' || { cat "$TMP/install-ext.log" >&2; fail "the extension is not in $extensions"; }

project="$TMP/my-project"
cp -r "$ROOT/fixtures/example" "$project"
HOME="$home" "$BIN_DIR/permaudit" -C "$project" check --format json > "$TMP/check.json" || [ $? = 1 ]
shot="$ROOT/target/vscode-test/vscode.png"
printf '#!/bin/sh\necho "permaudit 0.0.1"\n' > "$TMP/old-permaudit"
chmod +x "$TMP/old-permaudit"
node -e '
const fs = require("fs"), [check, out, ...rest] = process.argv.slice(1);
const [codeServer, node, userData, extensions, project, home, path, shot, oldBinary] = rest;
fs.writeFileSync(out, JSON.stringify({ codeServer, node, userData, extensions, project, home, path, shot, oldBinary,
  file: "opencode.json", findings: JSON.parse(fs.readFileSync(check)).findings }));' \
    "$TMP/check.json" "$TMP/setup.json" "$(readlink -f "$CODE_SERVER")" "$NODE24" "$user_data" "$extensions" \
    "$project" "$home" "$BIN_DIR:$NODE24:$PATH" "$shot" "$TMP/old-permaudit"

step "driving VS Code (code-server) in Chromium ($((SECONDS - started)) s since the start)"
timeout 600 node "$ROOT/tests/browser/vscode.mjs" "$TMP/setup.json"
if [ "${PERMAUDIT_UPDATE_SCREENSHOT:-}" = 1 ]; then
    cp "$shot" "$ROOT/docs/vscode.png"
    cp "${shot%.png}-completion.png" "$ROOT/docs/vscode-completion.png"
    step "copied the screenshots to docs/vscode.png and docs/vscode-completion.png"
fi
step "ok ($((SECONDS - started)) s)"
