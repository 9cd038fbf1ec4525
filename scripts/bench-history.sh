#!/usr/bin/env bash
# `permaudit history` and `suggest` on a synthetic history of 100,000 recorded calls
# (scripts/bench/history_db.py), side by side with `permaudit check` on the same project as
# the baseline: wall time (median of RUNS runs) and peak memory (`/usr/bin/time -v`'s
# maximum resident set), each with its ratio to the baseline.
#
# Usage: scripts/bench-history.sh [CALLS] (default 100000); RUNS=3; BENCH_NO_BUILD=1 skips
# the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench/common.sh
CALLS=${1:-100000}
RUNS=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench-history: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

P=$W/proj
mkdir -p "$P"
git -C "$P" init -q
cat > "$P/opencode.json" <<'JSON'
{
  "$schema": "https://opencode.ai/config.json",
  "permission": {
    "bash": {"*": "ask", "echo *": "allow", "git diff *": "ask", "rm *": "deny", "ls *": "allow"},
    "edit": {"*": "ask", "src/*.md": "allow"},
    "read": {"*": "allow", "*.env": "deny"},
    "external_directory": "ask"
  }
}
JSON
python3 scripts/bench/history_db.py "$W/opencode.db" "$P" "$CALLS"
echo "history: $CALLS calls, $(du -h "$W/opencode.db" | cut -f1) database"

# Peak resident memory (kB) of one run (`check` exits 1 on findings: not a failure here).
peak() {
  { pa /usr/bin/time -v "$@" 2>&1 >/dev/null || true; } | awk -F': ' '/Maximum resident set size/ {print $2}'
}
row() {
  local name=$1; shift
  local t m
  t=$(median "$RUNS" pa "$@")
  m=$(peak "$@")
  printf '%s\t%s\t%s\n' "$name" "$t" "$m"
}
{
  row "check (baseline)" "$BIN" -C "$P" check --project-only
  row "history --format json" "$BIN" -C "$P" history --db "$W/opencode.db" --format json
  row "suggest" "$BIN" -C "$P" suggest --db "$W/opencode.db"
  row "suggest --format json" "$BIN" -C "$P" suggest --db "$W/opencode.db" --format json
} > "$W/rows"
awk -F'\t' 'NR == 1 {bt = $2; bm = $3}
  {printf "%-24s %9.3f s  %6.1fx   %8.1f MB  %6.1fx\n", $1, $2, $2 / bt, $3 / 1024, $3 / bm}' "$W/rows" |
  { printf '%-24s %11s  %7s   %11s  %7s\n' command "wall (med)" ratio "peak RSS" ratio; cat; }
pa "$BIN" -C "$P" suggest --db "$W/opencode.db" | head -40
