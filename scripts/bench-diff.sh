#!/usr/bin/env bash
# `permaudit diff` on two 1,000-rule configs (scripts/bench/gen.mjs), side by side with
# `permaudit check` of the head side alone (the same loading and a per-rule analysis of one
# config) as the baseline. Median wall time of RUNS runs each; ratios printed.
#
#   bash scripts/bench-diff.sh [RULES] [RUNS]        (defaults 1000, 5)
#
# Two edits of the base config, committed as base in a scratch git repository and compared
# with the work tree:
#   pr         what a pull request does: one action changed, one rule removed, three rules
#              added (edit, bash, read), an agent override; keys reordered
#   scattered  every 60th edit rule's action flipped and every 97th removed (25 edits
#              spread over the whole edit object)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
RULES=${1:-1000}
RUNS=${2:-5}
cargo build --release --locked -q
BIN=$ROOT/target/release/permaudit
W=$(mktemp -d "${TMPDIR:-/tmp}/permaudit-bench-diff.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/home"
pa() { env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u OPENCODE_CONFIG -u OPENCODE_CONFIG_DIR \
  -u OPENCODE_CONFIG_CONTENT -u OPENCODE_PERMISSION HOME="$W/home" "$@"; }
median() {
  local runs=$1; shift
  local ts=() i s e
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
    ts+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p" | awk '{printf "%.3f", $1 / 1e6}'
}
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
printf '%-10s %6s %12s %12s %8s  %s\n' case rules "check (s)" "diff (s)" ratio "diff summary"
for kind in pr scattered; do
  d=$W/$kind
  mkdir -p "$d"
  node scripts/bench/gen.mjs config "$RULES" > "$d/opencode.json"
  git -C "$d" init -q
  git -C "$d" add -A
  git -C "$d" -c user.name=b -c user.email=b@b commit -qm base
  (cd "$d" && mutate "$kind")
  tc=$(cd "$d" && median "$RUNS" pa "$BIN" check --fail-on never)
  td=$(cd "$d" && median "$RUNS" pa "$BIN" diff --fail-on never)
  summary=$(cd "$d" && pa "$BIN" diff --fail-on never --color never | tail -1)
  printf '%-10s %6s %12s %12s %8s  %s\n' "$kind" "$RULES" "$tc" "$td" \
    "$(awk "BEGIN{printf \"%.2fx\", $td / $tc}")" "$summary"
done
