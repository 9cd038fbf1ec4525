#!/usr/bin/env bash
# Times `permaudit check` on generated configs of 100, 1,000 and 5,000 rules (README:
# "Benchmark"). Usage: scripts/bench-check.sh [SIZES...]   (default: 100 1000 5000)
#
# Each config is one opencode.json in a fresh git project with an empty HOME, its rules
# spread over ten permissions the way real configs are written (path prefixes, command
# prefixes, a catch-all per permission, some deliberately dead or shadowed rules), seeded
# so every run measures the same input. Prints one line per size: rules, findings, wall
# seconds and CPU seconds (user + system: steadier than wall time on a busy machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 1000 5000)
cargo build --release --locked -q
bin="$PWD/target/release/permaudit"
work=$(mktemp -d "${TMPDIR:-/tmp}/permaudit-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '%8s %9s %9s %9s\n' rules findings seconds cpu
for n in "${sizes[@]}"; do
  dir="$work/$n"
  mkdir -p "$dir/proj/.git" "$dir/home" "$dir/managed"
  python3 - "$n" > "$dir/proj/opencode.json" <<'PY'
import json, random, sys
n = int(sys.argv[1])
random.seed(n)
perms = ["bash", "edit", "read", "glob", "grep", "task", "external_directory", "skill", "lsp", "github_create_issue"]
heads = {"bash": ["git ", "npm ", "cargo ", "rm ", "docker ", "make "], "external_directory": ["/tmp/", "/srv/", "~/"]}
cfg, left = {}, n
for k, p in enumerate(perms):
    count = left if k == len(perms) - 1 else n // len(perms)
    left -= count
    block = {}
    if random.random() < 0.5:
        block["*"] = random.choice(["ask", "allow"])
    while len(block) < count:
        head = random.choice(heads.get(p, ["src/", "tests/", "lib/", "docs/", ".github/", "*."]))
        tail = random.choice(["*", "/*", "/**", "", " *", ".ts", "?"])
        block[f"{head}m{len(block)}{tail}"] = random.choice(["allow", "ask", "deny"])
    if "*" not in block and random.random() < 0.5:
        block["*"] = "ask"
    cfg[p] = block
print(json.dumps({"permission": cfg}, indent=1))
PY
  start=$(date +%s.%N)
  set +e
  (cd "$dir/proj" && env -i PATH="$PATH" HOME="$dir/home" OPENCODE_TEST_MANAGED_CONFIG_DIR="$dir/managed" \
    /usr/bin/time -f '%U %S' -o "$dir/cpu" "$bin" check --format json > "$dir/out.json")
  rc=$?
  set -e
  end=$(date +%s.%N)
  [ "$rc" -le 1 ] || { echo "permaudit check failed on $n rules (exit $rc)" >&2; exit 1; }
  findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$dir/out.json")
  cpu=$(tail -n 1 "$dir/cpu" | awk '{print $1 + $2}')
  printf '%8s %9s %9.2f %9.2f\n' "$n" "$findings" "$(echo "$end - $start" | bc -l)" "$cpu"
done
