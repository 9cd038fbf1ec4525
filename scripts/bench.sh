#!/usr/bin/env bash
# permaudit's benchmarks, in one go, with the ratios printed side by side at the end.
#
#   bash scripts/bench.sh            decisions, start-up, growth (about 3 minutes here)
#   bash scripts/bench.sh --full     the same, node with expressions built once on all
#                                    1,000,000 inputs and a larger per-check sample (+3 min)
#   bash scripts/bench.sh --smoke    tiny sizes, a few seconds (tests/bench_smoke.rs)
#
# Needs cargo, git, node and (for the start-up comparison) the OpenCode oracle in .oracle/
# (bash scripts/install-oracle.sh); a missing oracle is reported and skipped.
#
# 1. Decisions: 1,000,000 generated repository paths against a 1,000-rule config (the
#    agent's merged ruleset: 1,015 rules), permission `edit`: permaudit's compiled evaluator
#    (benches/decisions.rs, library, timed around the decision loop) and the CLI
#    (`explain --stdin -z --format json`, whole process), against OpenCode's algorithm in
#    Node.js (scripts/bench/opencode.mjs: findLast, a RegExp built per rule per check as
#    OpenCode does, and the same with every RegExp built once). Node is measured on every
#    STEP-th input (the per-check version takes milliseconds a decision), permaudit on all;
#    the ratios compare time per decision, and both sides print a checksum of their
#    decisions on the same samples, which must agree.
# 2. Start-up: `permaudit check` on a small realistic project vs `opencode debug config
#    --pure`, isolated (temporary HOME and git repository), median of runs.
# 4. Diff: `permaudit diff` on two 1,000-rule configs (a pull request's edits, and edits
#    scattered over the whole config) beside `check` of one (scripts/bench-diff.sh).
# 3. Growth: `check` and `map` against 100, 1,000 and 10,000 rules; `map` on generated
#    repositories of 1k, 100k and 1M files (a git index made with update-index, no files
#    on disk: map sees them through `git ls-files`); decisions per rule count.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
MODE=${1:-default}

case "$MODE" in
  --smoke) N_INPUTS=20000 RULES=100 ONCE_STEP=10 REBUILD_STEP=200 RUNS=1 GROWTH_RULES="10 100" REPOS="1000" MAP_RULE_FILES=1000 CHECK_TIMEOUT=60 ;;
  --full) N_INPUTS=1000000 RULES=1000 ONCE_STEP=1 REBUILD_STEP=100 RUNS=5 GROWTH_RULES="100 1000 10000" REPOS="1000 100000 1000000" MAP_RULE_FILES=100000 CHECK_TIMEOUT=600 ;;
  default|--default) N_INPUTS=1000000 RULES=1000 ONCE_STEP=20 REBUILD_STEP=1000 RUNS=5 GROWTH_RULES="100 1000 10000" REPOS="1000 100000 1000000" MAP_RULE_FILES=100000 CHECK_TIMEOUT=300 ;;
  *) echo "usage: scripts/bench.sh [--full|--smoke]" >&2; exit 2 ;;
esac

T0=$(date +%s)
log() { echo "bench [$(( $(date +%s) - T0 ))s]: $*" >&2; }
log "building (release)"
# shellcheck source=scripts/bench/common.sh
source scripts/bench/common.sh
OUT=$W/results.jsonl
: > "$OUT"
emit() { echo "$1" >> "$OUT"; }

# --- build ---------------------------------------------------------------------------
DECIDE=$(cargo bench --locked --bench decisions --no-run --message-format=json 2>/dev/null |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n")){if(!l)continue;const m=JSON.parse(l);if(m.reason==="compiler-artifact"&&m.executable&&m.target.name==="decisions")console.log(m.executable)}})')
GEN="node $ROOT/scripts/bench/gen.mjs"

# A project with N generated rules: DIR/opencode.json, git-initialised.
project() {
  mkdir -p "$1"
  $GEN config "$2" > "$1/opencode.json"
  git -C "$1" init -q
}

# A repository whose index holds N generated paths (and the config with R rules).
repo() {
  local dir=$1 n=$2 r=$3
  project "$dir" "$r"
  git -C "$dir" hash-object -w --stdin < /dev/null > /dev/null
  $GEN index "$n" | git -C "$dir" update-index -z --index-info
}

# --- 1. decisions -------------------------------------------------------------------
log "decisions: generating $N_INPUTS paths and a $RULES-rule config"
D=$W/decisions
project "$D/proj" "$RULES"
$GEN paths "$N_INPUTS" > "$D/inputs.bin"
pa "$BIN" -C "$D/proj" rules --agent build --format json > "$D/rules.json"
log "decisions: permaudit (library)"
pa "$DECIDE" "$D/proj" "$D/inputs.bin" --steps "$ONCE_STEP,$REBUILD_STEP" | sed 's/^{/{"bench":"decisions",/' > "$D/pa.jsonl"
cat "$D/pa.jsonl" >> "$OUT"
log "decisions: permaudit explain --stdin -z (CLI)"
s=$(date +%s%N)
pa "$BIN" -C "$D/proj" explain edit --stdin -z --format json < "$D/inputs.bin" > "$D/explain.jsonl"
e=$(date +%s%N)
emit "{\"bench\":\"decisions\",\"engine\":\"permaudit-cli-explain\",\"inputs\":$(wc -l < "$D/explain.jsonl"),\"seconds\":$(awk "BEGIN{print ($e-$s)/1e9}")}"
log "decisions: node, RegExp built once (every ${ONCE_STEP}th input)"
echo "{\"bench\":\"decisions\",\"engine\":\"node-once\",\"step\":$ONCE_STEP,$(node scripts/bench/opencode.mjs once "$D/rules.json" "$D/inputs.bin" "$ONCE_STEP" | sed 's/^{//')" >> "$OUT"
log "decisions: node, RegExp built per rule per check (every ${REBUILD_STEP}th input)"
echo "{\"bench\":\"decisions\",\"engine\":\"node-rebuild\",\"step\":$REBUILD_STEP,$(node scripts/bench/opencode.mjs rebuild "$D/rules.json" "$D/inputs.bin" "$REBUILD_STEP" | sed 's/^{//')" >> "$OUT"
rm -f "$D/inputs.bin" "$D/explain.jsonl"

# --- 2. start-up --------------------------------------------------------------------
log "start-up"
S=$W/startup
mkdir -p "$S/proj/.opencode/agent" "$S/proj/src" "$S/ochome"
git -C "$S/proj" init -q
cat > "$S/proj/opencode.json" <<'JSON'
{
  "$schema": "https://opencode.ai/config.json",
  "permission": {
    "read": {"*": "allow", "*.env": "deny", "*.env.*": "deny", "*.env.example": "allow", "secrets/*": "deny"},
    "edit": {"*": "ask", "src/*": "allow", "tests/*": "allow", "docs/*.md": "allow", "*.lock": "deny", "migrations/*": "deny"},
    "bash": {"*": "ask", "git status*": "allow", "git diff*": "allow", "git log*": "allow", "npm test*": "allow",
             "npm run lint*": "allow", "rm *": "deny", "git push *": "ask", "curl *": "deny"},
    "webfetch": "ask",
    "external_directory": {"*": "ask", "~/shared/*": "allow"}
  },
  "agent": {
    "build": {"permission": {"bash": {"cargo *": "allow"}}},
    "docs": {"mode": "subagent", "permission": {"edit": {"*": "deny", "docs/*": "allow"}}}
  }
}
JSON
cat > "$S/proj/.opencode/agent/reviewer.md" <<'MD'
---
description: Reviews changes without touching them
mode: subagent
permission:
  edit: deny
  bash:
    "*": deny
    "git diff*": allow
---
Review the diff.
MD
emit "{\"bench\":\"startup\",\"engine\":\"permaudit-check\",\"seconds\":$(cd "$S/proj" && median "$RUNS" pa "$BIN" check)}"
OC=$ROOT/.oracle/node_modules/opencode-linux-x64/bin/opencode
if [ -x "$OC" ]; then
  oc() { (cd "$S/proj" && env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
    -u OPENCODE_CONFIG -u OPENCODE_CONFIG_DIR -u OPENCODE_CONFIG_CONTENT -u OPENCODE_PERMISSION \
    HOME="$S/ochome" OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 "$OC" debug config --pure); }
  oc > /dev/null 2>&1 || true # first run writes its caches
  emit "{\"bench\":\"startup\",\"engine\":\"opencode-debug-config\",\"seconds\":$(median "$RUNS" oc)}"
else
  log "start-up: no oracle at $OC (bash scripts/install-oracle.sh); skipped"
fi

# --- 3. growth ----------------------------------------------------------------------
G=$W/growth
for r in $GROWTH_RULES; do
  log "growth: $r rules"
  project "$G/rules$r" "$r"
  t=$(cd "$G/rules$r" && median 1 timeout "$CHECK_TIMEOUT" env -u XDG_CONFIG_HOME HOME="$W/home" "$BIN" check --fail-on never)
  emit "{\"bench\":\"growth-rules\",\"engine\":\"check\",\"rules\":$r,\"seconds\":$t,\"timeout\":$CHECK_TIMEOUT}"
  repo "$G/map$r" "$MAP_RULE_FILES" "$r"
  t=$(cd "$G/map$r" && median 1 pa "$BIN" map)
  emit "{\"bench\":\"growth-rules\",\"engine\":\"map\",\"rules\":$r,\"files\":$MAP_RULE_FILES,\"seconds\":$t}"
  $GEN paths 200000 > "$G/in.bin"
  pa "$DECIDE" "$G/rules$r" "$G/in.bin" > "$G/decide.jsonl"
  head -1 "$G/decide.jsonl" | sed "s/^{/{\"bench\":\"growth-rules\",\"rules\":$r,/" >> "$OUT"
  rm -rf "$G/map$r" "$G/rules$r" "$G/in.bin"
done
for n in $REPOS; do
  log "growth: map on $n files, $RULES rules"
  repo "$G/repo$n" "$n" "$RULES"
  for fmt in human json; do
    (cd "$G/repo$n" && pa /usr/bin/time -f '%e %M' -o "$G/time" "$BIN" map --format "$fmt" > /dev/null)
    read -r secs kb < "$G/time"
    emit "{\"bench\":\"growth-files\",\"engine\":\"map-$fmt\",\"files\":$n,\"rules\":$RULES,\"seconds\":$secs,\"max_rss_kb\":$kb}"
  done
  rm -rf "$G/repo$n"
done

node scripts/bench/report.mjs "$OUT"

# --- 4. diff ------------------------------------------------------------------------
if [ "$MODE" != "--smoke" ]; then
  log "diff: two $RULES-rule configs, side by side with check"
  BENCH_NO_BUILD=1 bash scripts/bench-diff.sh "$RULES" "$RUNS" >&2
fi
