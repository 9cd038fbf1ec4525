# Shared by scripts/bench.sh, scripts/bench-diff.sh and scripts/bench-check.sh (sourced, from the repository root):
# the release build, permaudit run in isolation, and the median wall time of repeated runs.
#
# Sets ROOT, BIN, W (a scratch directory removed on exit); defines pa and median.
ROOT=$PWD
if [ -z "${BENCH_NO_BUILD:-}" ]; then
  cargo build --release --locked -q
fi
BIN=$ROOT/target/release/permaudit
W=$(mktemp -d "${TMPDIR:-/tmp}/permaudit-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/home"

# permaudit runs with an empty HOME and no OpenCode/XDG environment.
pa() { env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u OPENCODE_CONFIG -u OPENCODE_CONFIG_DIR \
  -u OPENCODE_CONFIG_CONTENT -u OPENCODE_PERMISSION HOME="$W/home" "$@"; }

# Median wall time of RUNS runs of a command, in seconds.
median() {
  local runs=$1; shift
  local ts=() i s e
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
    ts+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p" | awk '{printf "%.6f", $1 / 1e6}'
}
