#!/usr/bin/env bash
# `permaudit report` in a real browser (docs/testing.md; scripts/test.sh runs this):
# Debian's Chromium driven by playwright-core (npm, into
# target/report-browser, once), on the page made for fixtures/report as a git repository.
# tests/browser/report.mjs checks it against permaudit's own JSON for the same project
# (rules, map --delegation, check): no console error, no network request, cell → rules,
# graph edges, finding filters, keyboard, dark mode, a non-blank screenshot
# (target/report-browser/report.png; PERMAUDIT_UPDATE_SCREENSHOT=1 copies it to
# docs/report.png, the README's). When Chromium is missing it stops and says how to install
# it, unless PERMAUDIT_SYSTEM_INSTALL=1 (then apt-get, as root or through sudo, said first).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"
PLAYWRIGHT_VERSION=1.65.2

if [ ! -x /usr/bin/chromium ]; then
    # A system package: installed only when asked (PERMAUDIT_SYSTEM_INSTALL=1), said first.
    [ "${PERMAUDIT_SYSTEM_INSTALL:-}" = 1 ] ||
        fail "Debian's chromium is missing: install it (sudo apt-get install chromium), or rerun with PERMAUDIT_SYSTEM_INSTALL=1 to let this script run apt-get install -y chromium (as root, through sudo)"
    as_root=()
    [ "$(id -u)" = 0 ] || as_root=(sudo)
    step "PERMAUDIT_SYSTEM_INSTALL=1: running \`${as_root[*]} apt-get update && ${as_root[*]} apt-get install -y chromium\` (system-wide)"
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium >/dev/null
fi
PLAYWRIGHT_DIR="$ROOT/target/report-browser"
if [ ! -f "$PLAYWRIGHT_DIR/node_modules/playwright-core/package.json" ] ||
    [ "$(node -p "require('$PLAYWRIGHT_DIR/node_modules/playwright-core/package.json').version")" != "$PLAYWRIGHT_VERSION" ]; then
    step "installing playwright-core $PLAYWRIGHT_VERSION from npm into $PLAYWRIGHT_DIR"
    mkdir -p "$PLAYWRIGHT_DIR"
    npm install --silent --no-save --no-audit --no-fund --prefix "$PLAYWRIGHT_DIR" "playwright-core@$PLAYWRIGHT_VERSION"
fi
export PLAYWRIGHT_DIR

cargo build --release --locked -q
BIN="$ROOT/target/release/permaudit"
export HOME="$TMP/home"
mkdir -p "$HOME"
repo="$TMP/my-project"
cp -r "$ROOT/fixtures/report" "$repo"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.email=t@t -c user.name=t commit -qm fixture

step "writing the page"
"$BIN" -C "$repo" report -o "$TMP/report.html"
# Same input, same bytes.
"$BIN" -C "$repo" report -o - > "$TMP/again.html"
cmp -s "$TMP/report.html" "$TMP/again.html" || fail "two runs wrote different pages"
grep -q 'https\?://[^"]*\.\(js\|css\)' "$TMP/report.html" && fail "the page links a script or style"

# What the engine says, for the page to be compared with. The escalation is the fixture's
# point: auditor may neither edit nor run commands, fixer (which it may start) may.
"$BIN" -C "$repo" rules --format json > "$TMP/rules.json"
"$BIN" -C "$repo" map --delegation --format json > "$TMP/delegation.json"
"$BIN" -C "$repo" check --format json > "$TMP/check.json" || [ $? = 1 ]
node -e '
const fs = require("fs"), [r, d, c, out] = process.argv.slice(1);
fs.writeFileSync(out, JSON.stringify({
  rules: JSON.parse(fs.readFileSync(r)), delegation: JSON.parse(fs.readFileSync(d)),
  check: JSON.parse(fs.readFileSync(c)),
  cells: [["build", "edit"], ["auditor", "task"], ["fixer", "bash"], ["plan", "read"]],
  escalations: ["auditor→fixer"],
}));' "$TMP/rules.json" "$TMP/delegation.json" "$TMP/check.json" "$TMP/expect.json"

step "opening it in Chromium"
shot="$PLAYWRIGHT_DIR/report.png"
timeout 300 node "$ROOT/tests/browser/report.mjs" "$TMP/report.html" "$TMP/expect.json" "$shot"
if [ "${PERMAUDIT_UPDATE_SCREENSHOT:-}" = 1 ]; then
    cp "$shot" "$ROOT/docs/report.png"
    step "copied the screenshot to docs/report.png"
fi
step "ok"
