#!/usr/bin/env bash
# The npm packages end to end (docs/ci.md "Install with npm"; scripts/test.sh runs this):
# scripts/npm-pack.sh packs the launcher and this platform's package from the release
# binary, both tarballs install into a scratch project offline (empty cache, unreachable
# registry), and `npx permaudit` there runs check, explain --stdin and the error paths with
# the binary's exit codes and streams. Needs node, npm, git and target/release/permaudit
# (cargo build --release --locked).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh"

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -n 1)
[ -x "$ROOT/target/release/permaudit" ] || fail "build first: cargo build --release --locked"

step "packing $VERSION"
mapfile -t tarballs < <(bash "$ROOT/scripts/npm-pack.sh" "$TMP/out")
[ "${#tarballs[@]}" -ge 2 ] || fail "expected the launcher and at least one platform package, got: ${tarballs[*]}"
[ "${tarballs[0]}" = "$TMP/out/permaudit-$VERSION.tgz" ] || fail "launcher tarball: ${tarballs[0]}"
[ "${tarballs[1]}" = "$TMP/out/permaudit-linux-x64-$VERSION.tgz" ] || fail "platform tarball: ${tarballs[1]}"
# (Listings are read whole: `grep -q` closing a pipe would fail it under pipefail.)
grep -q -- '^-rwxr-xr-x .* package/bin/permaudit.js$' <<<"$(tar tzvf "${tarballs[0]}")" || fail "launcher not executable in its tarball"
grep -q -- '^-rwxr-xr-x .* package/bin/permaudit$' <<<"$(tar tzvf "${tarballs[1]}")" || fail "binary not executable in its tarball"
for t in "${tarballs[@]}"; do
    grep -q 'MIT License' <<<"$(tar xzOf "$t" package/LICENSE-MIT)" || fail "$t lacks LICENSE-MIT"
done
tar xzOf "${tarballs[0]}" package/package.json |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s);const v=process.argv[1];
      if(p.version!==v||p.optionalDependencies["permaudit-linux-x64"]!==v){console.error(p);process.exit(1)}})' "$VERSION" ||
    fail "launcher version or optionalDependencies differ from Cargo.toml's $VERSION"

# A scratch project in its own git repository, with a HOME of its own (no global config).
P="$TMP/project"
mkdir -p "$P" "$TMP/home"
export HOME="$TMP/home" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME OPENCODE_CONFIG OPENCODE_CONFIG_DIR OPENCODE_CONFIG_CONTENT OPENCODE_PERMISSION
git -C "$P" init -q
echo '{"name":"scratch","private":true}' > "$P/package.json"
offline=(--offline --registry http://127.0.0.1:9 --cache "$TMP/npm-cache")

step "installing both tarballs offline"
(cd "$P" && npm install "${offline[@]}" --loglevel=error "${tarballs[0]}" "${tarballs[1]}" >&2) ||
    fail "offline install of the tarballs"
[ -L "$P/node_modules/.bin/permaudit" ] || fail "no node_modules/.bin/permaudit"

npx_permaudit() { (cd "$P" && npx "${offline[@]}" --no -- permaudit "$@"); }

out=$(npx_permaudit --version) || fail "--version"
[ "$out" = "permaudit $VERSION" ] || fail "--version printed '$out'"

# The classic mistake: check exits 1 and proves it with an input.
printf '{"permission":{"edit":{\n  "*": "ask",\n  "tests/**": "deny",\n  "**": "allow"\n}}}\n' > "$P/opencode.json"
set +e
json=$(npx_permaudit check --format json 2>"$TMP/err"); code=$?
set -e
[ "$code" = 1 ] || fail "check exited $code, expected 1: $(cat "$TMP/err")"
echo "$json" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);
  const f=v.findings.find(f=>f.id==="shadowed-deny");
  if(!f||f.source.line!==3||f.source.column!==3||!f.source.path.endsWith("opencode.json")){console.error(JSON.stringify(v.findings[0]));process.exit(1)}})' ||
    fail "check --format json did not report the shadowed deny at opencode.json:3:3"
npx_permaudit check --fail-on never --color never >"$TMP/human" || fail "--fail-on never exited non-zero"
grep -qx 'shadowed-deny' "$TMP/human" || fail "human output lacks shadowed-deny"

# Standard input reaches the binary (explain --stdin streams it).
decided=$(printf 'tests/a.ts\nsrc/b.ts\n' | npx_permaudit explain edit --stdin --format json |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{process.stdout.write(s.trim().split("\n").map(l=>JSON.parse(l).action).join(","))})')
[ "$decided" = "allow,allow" ] || fail "explain --stdin decided '$decided', expected allow,allow (the ** allow wins)"

# A clean config exits 0; a config OpenCode refuses exits 2 with file:line:col on stderr.
printf '{"permission":{"edit":{"**":"ask","tests/**":"deny"}}}\n' > "$P/opencode.json"
npx_permaudit check >/dev/null || fail "clean config: check exited non-zero"
printf '{"permission": {"edit": [1]}}\n' > "$P/opencode.json"
set +e
npx_permaudit check >/dev/null 2>"$TMP/err"; code=$?
set -e
[ "$code" = 2 ] || fail "refused config: exit $code, expected 2"
grep -q 'opencode.json:1:' "$TMP/err" || fail "refused config: no file:line on stderr: $(cat "$TMP/err")"

# Without the platform package the launcher says what is missing and exits 2.
rm -rf "$P/node_modules/permaudit-linux-x64"
set +e
npx_permaudit check >/dev/null 2>"$TMP/err"; code=$?
set -e
[ "$code" = 2 ] || fail "missing platform package: exit $code, expected 2"
grep -q 'permaudit-linux-x64 is not installed' "$TMP/err" || fail "missing platform package: $(cat "$TMP/err")"

step "ok: npm packages $VERSION install offline and run (${tarballs[*]##*/})"
