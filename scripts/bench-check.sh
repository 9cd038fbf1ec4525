#!/usr/bin/env bash
# Times `permaudit check` on generated configs of 100, 1,000, 5,000 and 10,000 rules
# (docs/limits.md, "Speed"). Usage: scripts/bench-check.sh [SIZES...]   (default: 100 1000 5000 10000)
#
# BASELINE=/path/to/another/permaudit runs that binary on the same inputs in the same run
# and prints its CPU seconds and the ratio baseline/ours beside each line (to measure a
# change: build the old commit elsewhere and point BASELINE at it).
#
# Each config is one opencode.json in a fresh git project with an empty HOME, made by
# scripts/bench/gen_config.py (rules spread over ten permissions the way real configs are
# written, seeded so every run measures the same input). Prints one line per size: rules, findings, wall
# seconds and CPU seconds (user + system: steadier than wall time on a busy machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 1000 5000 10000)
# shellcheck source=scripts/bench/common.sh
source scripts/bench/common.sh
bin=$BIN
work=$W
baseline=${BASELINE:-}
if [ -n "$baseline" ]; then
  printf '%8s %9s %9s %9s %9s %9s %7s\n' rules findings seconds cpu base_find base_cpu ratio
else
  printf '%8s %9s %9s %9s\n' rules findings seconds cpu
fi
# run_check BIN OUT CPUFILE: permaudit check in the project, CPU seconds to CPUFILE.
run_check() {
  set +e
  (cd "$dir/proj" && env -i PATH="$PATH" HOME="$dir/home" OPENCODE_TEST_MANAGED_CONFIG_DIR="$dir/managed" \
    /usr/bin/time -f '%U %S' -o "$3" "$1" check --format json > "$2")
  local rc=$?
  set -e
  [ "$rc" -le 1 ] || { echo "$1 check failed on $n rules (exit $rc)" >&2; exit 1; }
}
count() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$1"; }
cpu_of() { tail -n 1 "$1" | awk '{print $1 + $2}'; }
for n in "${sizes[@]}"; do
  dir="$work/$n"
  mkdir -p "$dir/proj/.git" "$dir/home" "$dir/managed"
  python3 scripts/bench/gen_config.py "$n" > "$dir/proj/opencode.json"
  start=$(date +%s.%N)
  run_check "$bin" "$dir/out.json" "$dir/cpu"
  end=$(date +%s.%N)
  findings=$(count "$dir/out.json")
  cpu=$(cpu_of "$dir/cpu")
  if [ -n "$baseline" ]; then
    run_check "$baseline" "$dir/base.json" "$dir/base.cpu"
    bcpu=$(cpu_of "$dir/base.cpu")
    printf '%8s %9s %9.2f %9.2f %9s %9.2f %6.1fx\n' "$n" "$findings" "$(echo "$end - $start" | bc -l)" "$cpu" \
      "$(count "$dir/base.json")" "$bcpu" "$(echo "$bcpu / ($cpu + 0.005)" | bc -l)"
  else
    printf '%8s %9s %9.2f %9.2f\n' "$n" "$findings" "$(echo "$end - $start" | bc -l)" "$cpu"
  fi
done
