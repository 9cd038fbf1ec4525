#!/usr/bin/env bash
# Runs the cargo-fuzz targets (fuzz/, docs/fuzzing.md) for SECONDS each, all at once, niced:
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      default: 60 s, every target
#
# Stable Rust is enough: cargo-fuzz needs nightly flags, which RUSTC_BOOTSTRAP=1 unlocks.
# Installs cargo-fuzz if missing. New inputs go to fuzz/corpus-raw/TARGET (git-ignored),
# starting from the committed corpus (fuzz/corpus/TARGET) and the seeds (fuzz/seeds/TARGET);
# crashes to fuzz/artifacts/TARGET. With FUZZ_CMIN=1 the committed corpus is then
# minimized (cargo fuzz cmin) over everything found. Prints, per target: executions,
# executions per second, new units, corpus files and bytes, and any crash artifacts.
# Environment: FUZZ_NICE (default 15), FUZZ_TIMEOUT (per input, default 10 s),
# FUZZ_RSS_MB (default 2048), FUZZ_LOG_DIR (default fuzz/target/logs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(config frontmatter wildcard analysis fix)
NICE=${FUZZ_NICE:-15}
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
[ -d seeds ] || python3 seed.py
for t in "${TARGETS[@]}"; do cargo fuzz build -O -s none "$t"; done

LOGS=${FUZZ_LOG_DIR:-target/logs}
mkdir -p "$LOGS"
start=$(date -u +%FT%TZ)
echo "fuzzing ${TARGETS[*]} for ${SECONDS_EACH}s each from $start" >&2
pids=()
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus-raw/$t" "corpus/$t" "seeds/$t" "artifacts/$t"
    nice -n "$NICE" cargo fuzz run -O -s none "$t" "corpus-raw/$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$SECONDS_EACH" -timeout="${FUZZ_TIMEOUT:-10}" \
        -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -dict="dict/$t.dict" \
        -print_final_stats=1 -close_fd_mask=3 >"$LOGS/$t.log" 2>&1 &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
echo "started $start, ended $(date -u +%FT%TZ)"

if [ "${FUZZ_CMIN:-0}" = 1 ]; then
    for t in "${TARGETS[@]}"; do
        cp -n "corpus-raw/$t"/* "corpus/$t"/ 2>/dev/null || true
        cp -n "seeds/$t"/* "corpus/$t"/ 2>/dev/null || true
        nice -n "$NICE" cargo fuzz cmin -O -s none "$t" "corpus/$t" -- -timeout="${FUZZ_TIMEOUT:-10}" \
            -rss_limit_mb="${FUZZ_RSS_MB:-2048}" >"$LOGS/$t.cmin.log" 2>&1
    done
fi

printf '%-12s %14s %10s %8s %14s %14s  %s\n' target execs exec/s new corpus-raw corpus artifacts
for t in "${TARGETS[@]}"; do
    log="$LOGS/$t.log"
    stat() { grep -o "stat::$1: *[0-9]*" "$log" | tail -n 1 | grep -o '[0-9]*$' || echo '?'; }
    size() { echo "$(find "$1" -type f | wc -l) files/$(du -sb "$1" | cut -f1)B"; }
    printf '%-12s %14s %10s %8s %14s %14s  %s\n' "$t" "$(stat number_of_executed_units)" \
        "$(stat average_exec_per_sec)" "$(stat new_units_added)" "$(size "corpus-raw/$t")" \
        "$(size "corpus/$t")" "$(ls "artifacts/$t" | tr '\n' ' ')"
done
exit $status
