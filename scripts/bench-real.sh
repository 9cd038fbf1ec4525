#!/usr/bin/env bash
# `permaudit check` against `permaudit rules` (loading and merging alone) on every real
# configuration of tests/real/, each as its own machine (its `home/` as HOME, its
# `project/` a git worktree). Median wall time of RUNS runs of each, alternated run by run;
# the ratio check/rules per entry, largest last (docs/limits.md, "Speed": at most 5×).
#
#   bash scripts/bench-real.sh [RUNS] [ENTRY…]          (default 3 runs, every entry)
#   BASE_BIN=path/to/permaudit bash scripts/bench-real.sh
#                   also times another build's `check` in the same rounds and prints this
#                   build's `check` time as a ratio of it
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${1:-3}
[ $# -gt 0 ] && shift
# shellcheck source=scripts/bench/common.sh
source scripts/bench/common.sh
entries=("$@")
if [ ${#entries[@]} -eq 0 ]; then
  for d in tests/real/*/; do
    [ -d "$d/project" ] && entries+=("$(basename "$d")")
  done
fi
# once NAME CMD…: seconds of one run of CMD with the entry's HOME, in its project.
once() {
  local d=$W/real/$1; shift
  local s e
  s=$(date +%s%N)
  (cd "$d/project" && env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u OPENCODE_CONFIG \
    -u OPENCODE_CONFIG_DIR -u OPENCODE_CONFIG_CONTENT -u OPENCODE_PERMISSION \
    HOME="$d/home" "$@" >/dev/null 2>&1) || true
  e=$(date +%s%N)
  awk "BEGIN{printf \"%.6f\", ($e - $s) / 1e9}"
}
mid() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
{
  for name in "${entries[@]}"; do
    d=$W/real/$name
    mkdir -p "$d"
    cp -R "tests/real/$name/project" "$d/project"
    if [ -d "tests/real/$name/home" ]; then cp -R "tests/real/$name/home" "$d/home"; else mkdir -p "$d/home"; fi
    git -C "$d/project" init -q
    rs=() cs=() bs=()
    for ((r = 0; r < RUNS; r++)); do
      rs+=("$(once "$name" "$BIN" rules --format json)")
      cs+=("$(once "$name" "$BIN" check --format json --fail-on never)")
      [ -n "${BASE_BIN:-}" ] && bs+=("$(once "$name" "$BASE_BIN" check --format json --fail-on never)")
    done
    tr=$(mid "${rs[@]}") tc=$(mid "${cs[@]}")
    line=$(awk "BEGIN{printf \"%-44s %9.4f %9.4f %7.2fx\", \"$name\", $tr, $tc, $tc / $tr}")
    if [ -n "${BASE_BIN:-}" ]; then
      tb=$(mid "${bs[@]}")
      line+=$(awk "BEGIN{printf \" %9.4f %7.2fx\", $tb, $tc / $tb}")
    fi
    echo "$line"
  done
} | sort -k4 -n > "$W/rows"
printf '%-44s %9s %9s %8s' entry "rules (s)" "check (s)" check/rules
[ -n "${BASE_BIN:-}" ] && printf ' %9s %8s' "base (s)" check/base
echo
cat "$W/rows"
