#!/usr/bin/env bash
# `permaudit report` in a real browser (docs/testing.md; scripts/test.sh runs this):
# Debian's Chromium driven by playwright-core (npm, into
# target/report-browser, once), on the page made for fixtures/report as a git repository.
# tests/browser/report.mjs checks it against permaudit's own JSON for the same project
# (rules, map --delegation, check): no console error, no network request, axe-core
# (WCAG 2 AA) with no serious or critical violation in light and dark, every user agent
# shown (only OpenCode's internal ones hidden), the first screen's errors, warnings and
# escalations, cells named by their text, cell → rules brought into view, permalinks,
# graph edges, finding filters, keyboard, dark mode, a non-blank screenshot, a phone's
# compact header, and with --base the changed cells marked as diff lists them and each
# widening in words (target/report-browser/report.png and report-phone.png;
# PERMAUDIT_UPDATE_SCREENSHOT=1 copies them to docs/report.png, the README's, and
# docs/report-phone.png). When Chromium is missing it stops and says how to install it,
# unless PERMAUDIT_SYSTEM_INSTALL=1 (then apt-get, as root or through sudo, said first).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"
AXE_VERSION=4.14.1

browser_deps "$AXE_VERSION"

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

# A change against the committed config: the auditor may now run every command.
sed 's/"bash": "deny",/"bash": "allow",/' "$repo/opencode.json" > "$TMP/changed.json"
cp "$repo/opencode.json" "$TMP/committed.json"
cp "$TMP/changed.json" "$repo/opencode.json"
"$BIN" -C "$repo" report --base HEAD -o "$TMP/base.html"
"$BIN" -C "$repo" diff HEAD --format json > "$TMP/diff.json" || [ $? = 1 ]
cp "$TMP/committed.json" "$repo/opencode.json"

step "opening it in Chromium"
shot="$PLAYWRIGHT_DIR/report.png"
timeout 300 node "$ROOT/tests/browser/report.mjs" "$TMP/report.html" "$TMP/expect.json" "$shot" "$TMP/base.html" "$TMP/diff.json"
if [ "${PERMAUDIT_UPDATE_SCREENSHOT:-}" = 1 ]; then
    cp "$shot" "$ROOT/docs/report.png"
    cp "${shot%.png}-phone.png" "$ROOT/docs/report-phone.png"
    step "copied the screenshots to docs/report.png and docs/report-phone.png"
fi
step "ok"
