#!/usr/bin/env bash
# Build the npm packages from release binaries: the launcher `permaudit` (npm/permaudit) and
# one package per platform directory npm/permaudit-<os>-<cpu>/ whose binary exists. The
# version of every package, and of the launcher's optionalDependencies, is Cargo.toml's
# (the one place it is written). Nothing under npm/ is modified: packages are staged and
# packed under OUT. Prints the tarballs' paths, the launcher first.
#
#   scripts/npm-pack.sh [OUT]        # default OUT: target/npm
#
# The binary of a platform package is, by its package.json's "permaudit.rustTarget":
#   $PERMAUDIT_BINARY_<TARGET> (the target with - and . as _, e.g. PERMAUDIT_BINARY_x86_64_unknown_linux_gnu),
#   else target/<target>/release/permaudit[.exe] (cargo build --release --target <target>),
#   else, for this machine's own target, target/release/permaudit (cargo build --release).
# It is stripped of debug information when `strip` can read it. Platforms without a binary
# are skipped with a note; the launcher lists only the platforms packed in this run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/target/npm}" && cd "${1:-$ROOT/target/npm}" && pwd)
cd "$ROOT"

for tool in node npm cargo; do
    command -v "$tool" >/dev/null || { echo "npm-pack.sh: $tool is required" >&2; exit 1; }
done
VERSION=$(cargo metadata --no-deps --format-version 1 --manifest-path "$ROOT/Cargo.toml" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s).packages.find(p=>p.name==="permaudit");process.stdout.write(p.version)})')
HOST=$(rustc -vV | sed -n 's/^host: //p')

STAGE="$OUT/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE"
rm -f "$OUT"/permaudit-*.tgz

# json FILE 'JS' [ARG...]  — edit a package.json in place with JavaScript on `p` (and `args`).
json() {
    local file=$1 code=$2
    shift 2
    node -e 'const fs=require("fs");const f=process.argv[1];const args=process.argv.slice(2);let p=JSON.parse(fs.readFileSync(f,"utf8"));'"$code"';fs.writeFileSync(f,JSON.stringify(p,null,2)+"\n")' "$file" "$@"
}

platforms=()
for dir in npm/permaudit-*/; do
    name=$(basename "$dir")
    target=$(node -p 'require(process.argv[1]).permaudit.rustTarget' "$ROOT/$dir/package.json")
    exe=permaudit
    case "$target" in *windows*) exe=permaudit.exe ;; esac
    var="PERMAUDIT_BINARY_${target//[-.]/_}"
    bin=${!var:-}
    if [ -z "$bin" ] && [ -f "target/$target/release/$exe" ]; then bin="target/$target/release/$exe"; fi
    if [ -z "$bin" ] && [ "$target" = "$HOST" ] && [ -f "target/release/$exe" ]; then bin="target/release/$exe"; fi
    if [ -z "$bin" ] || [ ! -f "$bin" ]; then
        echo "npm-pack.sh: skipping $name: no $target binary (cargo build --release --locked --target $target)" >&2
        continue
    fi
    cp -R "$dir" "$STAGE/$name"
    mkdir -p "$STAGE/$name/bin"
    strip --strip-debug -o "$STAGE/$name/bin/$exe" "$bin" 2>/dev/null || cp "$bin" "$STAGE/$name/bin/$exe"
    chmod 755 "$STAGE/$name/bin/$exe"
    cp LICENSE-MIT LICENSE-APACHE "$STAGE/$name/"
    json "$STAGE/$name/package.json" "p={name:p.name,version:'$VERSION',...p}"
    platforms+=("$name")
done
if [ ${#platforms[@]} -eq 0 ]; then
    echo "npm-pack.sh: no platform binary found; build one first (cargo build --release --locked)" >&2
    exit 1
fi

cp -R npm/permaudit "$STAGE/permaudit"
cp LICENSE-MIT LICENSE-APACHE "$STAGE/permaudit/"
json "$STAGE/permaudit/package.json" \
    "p={name:p.name,version:'$VERSION',...p};p.optionalDependencies=Object.fromEntries(args.map(n=>[n,p.version]))" \
    "${platforms[@]}"

for pkg in permaudit "${platforms[@]}"; do
    (cd "$STAGE/$pkg" && npm pack --silent --pack-destination "$OUT" >/dev/null)
    echo "$OUT/$pkg-$VERSION.tgz"
done
