#!/usr/bin/env bash
# `permaudit diff` on two 1,000-rule configs (scripts/bench/gen.mjs), side by side with
# `permaudit check` of the head side alone (the same loading and a per-rule analysis of one
# config) as the baseline. Median wall time of RUNS runs each; ratios printed.
#
#   bash scripts/bench-diff.sh [RULES] [RUNS]        (defaults 1000, 5)
#   BASE_BIN=path/to/permaudit bash scripts/bench-diff.sh
#                     also times another build's `diff` on the same inputs, run by run
#                     alternately with this one, and prints this one's time as a ratio of it
#
# Two edits of the base config, committed as base in a scratch git repository and compared
# with the work tree:
#   pr         what a pull request does: one action changed, one rule removed, three rules
#              added (edit, bash, read), an agent override; keys reordered
#   scattered  every 60th edit rule's action flipped and every 97th removed (25 edits
#              spread over the whole edit object)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RULES=${1:-1000}
RUNS=${2:-5}
# shellcheck source=scripts/bench/common.sh
source scripts/bench/common.sh
mutate() {
  node -e '
const fs = require("fs"); const kind = process.argv[1];
const c = JSON.parse(fs.readFileSync("opencode.json")); const p = c.permission;
const ek = Object.keys(p.edit);
const flip = (k) => { p.edit[k] = p.edit[k] === "deny" ? "allow" : "deny"; };
if (kind === "pr") {
  flip(ek[300]); delete p.edit[ek[500]];
  p.edit["src/new/**"] = "allow"; p.bash["git push *"] = "allow"; p.read["*.env"] = "allow";
  c.agent = { review: { permission: { edit: "deny" } } };
} else {
  for (let i = 0; i < ek.length; i += 60) flip(ek[i]);
  for (let i = 5; i < ek.length; i += 97) delete p.edit[ek[i]];
}
c.permission = { bash: p.bash, edit: p.edit, read: p.read };
fs.writeFileSync("opencode.json", JSON.stringify(c, null, 2));' "$1"
}
printf '%-10s %6s %10s %10s' case rules "check (s)" "diff (s)"
[ -n "${BASE_BIN:-}" ] && printf ' %10s %10s' "base (s)" "diff/base"
printf ' %10s  %s\n' diff/check "diff summary"
for kind in pr scattered; do
  d=$W/$kind
  mkdir -p "$d"
  node scripts/bench/gen.mjs config "$RULES" > "$d/opencode.json"
  git -C "$d" init -q
  git -C "$d" add -A
  git -C "$d" -c user.name=b -c user.email=b@b commit -qm base
  (cd "$d" && mutate "$kind")
  tc=$(cd "$d" && median "$RUNS" pa "$BIN" check --fail-on never)
  if [ -n "${BASE_BIN:-}" ]; then
    # Alternate the two builds run by run, so a busy machine slows both alike.
    td=0 tb=0
    ds=() bs=()
    for ((r = 0; r < RUNS; r++)); do
      ds+=("$(cd "$d" && median 1 pa "$BIN" diff --fail-on never)")
      bs+=("$(cd "$d" && median 1 pa "$BASE_BIN" diff --fail-on never)")
    done
    mid() { printf '%s\n' "$@" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }
    td=$(mid "${ds[@]}") tb=$(mid "${bs[@]}")
  else
    td=$(cd "$d" && median "$RUNS" pa "$BIN" diff --fail-on never)
  fi
  summary=$(cd "$d" && pa "$BIN" diff --fail-on never --color never | tail -1)
  printf '%-10s %6s %10.3f %10.3f' "$kind" "$RULES" "$tc" "$td"
  [ -n "${BASE_BIN:-}" ] && printf ' %10.3f %10s' "$tb" "$(awk "BEGIN{printf \"%.2fx\", $td / $tb}")"
  printf ' %10s  %s\n' "$(awk "BEGIN{printf \"%.2fx\", $td / $tc}")" "$summary"
done
