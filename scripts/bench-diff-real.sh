#!/usr/bin/env bash
# `permaudit diff` between two versions of the largest real configurations of tests/real/
# (issue 23: under 1 s). Each entry's config (its global or project `opencode.json(c)`, with
# the files beside it that it references) becomes a scratch project's config, committed as
# the base; the work tree then flips the action of every 10th rule of each permission object
# (deny <-> allow, ask stays) and removes every 13th, in the top-level block and in every
# agent's. Median wall time of RUNS runs; the diff's summary line.
#
#   bash scripts/bench-diff-real.sh [RUNS] [ENTRY…]   (default 3 runs, the 4 largest entries)
#   BASE_BIN=path/to/permaudit bash scripts/bench-diff-real.sh
#                   also times another build on the same inputs, run by run alternately
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${1:-3}
[ $# -gt 0 ] && shift
# shellcheck source=scripts/bench/common.sh
source scripts/bench/common.sh
config_of() {
  { find "tests/real/$1" -name 'opencode.json' -o -name 'opencode.jsonc' | grep -v node_modules | sort | head -1; } || true
}
entries=("$@")
if [ ${#entries[@]} -eq 0 ]; then
  while read -r _ name; do entries+=("$name"); done < <(
    for d in tests/real/*/; do
      n=$(basename "$d")
      c=$(config_of "$n")
      [ -n "$c" ] && echo "$(grep -cE '": "(allow|deny|ask)"' "$c" || true) $n"
    done | sort -n | tail -4
  )
fi
printf '%-34s %6s %9s' entry rules "diff (s)"
[ -n "${BASE_BIN:-}" ] && printf ' %9s %9s' "base (s)" diff/base
printf '  %s\n' summary
for name in "${entries[@]}"; do
  c=$(config_of "$name")
  p=$W/diff/$name
  mkdir -p "$p"
  cp -R "$(dirname "$c")/." "$p/"
  rm -rf "$p/.git"
  ext=${c##*.}
  git -C "$p" init -q
  git -C "$p" add -A
  git -C "$p" -c user.name=b -c user.email=b@b commit -qm base
  node -e '
const fs = require("fs"); const f = process.argv[1];
// JSONC: comments and trailing commas out (strings kept as they are).
const t = fs.readFileSync(f, "utf8"); let s = "", i = 0;
while (i < t.length) {
  const ch = t[i];
  if (ch === "\"") { let j = i + 1; while (j < t.length && t[j] !== "\"") j += t[j] === "\\" ? 2 : 1; s += t.slice(i, j + 1); i = j + 1; }
  else if (t.startsWith("//", i)) { while (i < t.length && t[i] !== "\n") i++; }
  else if (t.startsWith("/*", i)) { const e = t.indexOf("*/", i + 2); i = e < 0 ? t.length : e + 2; }
  else { s += ch; i++; }
}
const c = JSON.parse(s.replace(/,(\s*[}\]])/g, "$1"));
let n = 0;
const edit = (perm) => {
  if (!perm || typeof perm !== "object") return;
  for (const v of Object.values(perm)) {
    if (!v || typeof v !== "object") continue;
    Object.keys(v).forEach((k, i) => {
      n++;
      if (i % 13 === 7) delete v[k];
      else if (i % 10 === 3 && v[k] !== "ask") v[k] = v[k] === "deny" ? "allow" : "deny";
    });
  }
};
edit(c.permission);
for (const a of Object.values(c.agent || {})) edit(a && a.permission);
fs.writeFileSync(f, JSON.stringify(c, null, 2));
console.log(n);' "$p/opencode.$ext" > "$W/rules"
  ds=() bs=()
  for ((r = 0; r < RUNS; r++)); do
    ds+=("$(cd "$p" && median 1 pa "$BIN" diff --fail-on never)")
    [ -n "${BASE_BIN:-}" ] && bs+=("$(cd "$p" && median 1 pa "$BASE_BIN" diff --fail-on never)")
  done
  mid() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
  td=$(mid "${ds[@]}")
  summary=$(cd "$p" && pa "$BIN" diff --fail-on never --color never 2>&1 | tail -1)
  printf '%-34s %6s %9.3f' "$name" "$(cat "$W/rules")" "$td"
  if [ -n "${BASE_BIN:-}" ]; then
    tb=$(mid "${bs[@]}")
    printf ' %9.3f %9s' "$tb" "$(awk "BEGIN{printf \"%.2fx\", $td / $tb}")"
  fi
  printf '  %s\n' "$summary"
done
