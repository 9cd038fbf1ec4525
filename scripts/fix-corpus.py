#!/usr/bin/env python3
"""What `check --fix` does on the shared judged corpus (`tests/corpus/`), per build, side by side:
findings removed per kind by `--fix` and by `--fix --unsafe-fixes`, configs and files changed.

    python3 scripts/fix-corpus.py BIN [BIN...] [--diffs DIR]

Each accepted case is staged as OpenCode sees it (project/ a git repository, HOME = home/,
cwd from meta.json). With --diffs, each build's `--diff --unsafe-fixes` of every case is
written to DIR/<build>/<case>.diff for reading.
"""
import argparse, collections, json, os, shutil, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "tests", "corpus")
ap = argparse.ArgumentParser()
ap.add_argument("bins", nargs="+")
ap.add_argument("--diffs")
args = ap.parse_args()


def cases():
    for c in sorted(os.listdir(CORPUS)):
        d = os.path.join(CORPUS, c)
        if not os.path.isdir(d):
            continue
        oracle = json.load(open(os.path.join(d, "oracle.json")))
        if isinstance(oracle, dict) and oracle.get("ok") is False:
            continue
        yield c, d, json.load(open(os.path.join(d, "meta.json"))).get("cwd", "")


def stage(src, tmp):
    dst = os.path.join(tmp, "case")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    subprocess.run(["git", "init", "-q", os.path.join(dst, "project")], check=True)
    return dst


def run(binary, dst, cwd, extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
    env["HOME"] = os.path.join(dst, "home")
    return subprocess.run([binary, "check", "--fail-on", "never", *extra], cwd=os.path.join(dst, "project", cwd),
                          env=env, capture_output=True, text=True, timeout=600)


def kinds(out):
    try:
        return collections.Counter(f["id"] for f in json.loads(out)["findings"])
    except Exception:
        return None


table = {}
for binary in args.bins:
    name = os.path.basename(binary)
    res = {"--fix": collections.Counter(), "--fix --unsafe-fixes": collections.Counter()}
    changed = {"--fix": 0, "--fix --unsafe-fixes": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for case, src, cwd in cases():
            for mode in res:
                dst = stage(src, tmp)
                before = kinds(run(binary, dst, cwd, ["--format", "json"]).stdout)
                if before is None:
                    break
                if args.diffs and mode != "--fix":
                    d = run(binary, dst, cwd, ["--diff", "--unsafe-fixes"]).stdout
                    if d:
                        os.makedirs(os.path.join(args.diffs, name), exist_ok=True)
                        open(os.path.join(args.diffs, name, case + ".diff"), "w").write(d)
                after = kinds(run(binary, dst, cwd, [*mode.split(), "--format", "json"]).stdout)
                if after is None:
                    continue
                if after != before:
                    changed[mode] += 1
                for k in set(before) | set(after):
                    if before[k] != after[k]:
                        res[mode][k] += before[k] - after[k]
    table[name] = (res, changed)

modes = ["--fix", "--fix --unsafe-fixes"]
allkinds = sorted({k for res, _ in table.values() for m in modes for k in res[m]})
print("findings removed per kind (negative: added) on the accepted cases of tests/corpus/")
print("| kind | " + " | ".join(f"{b} {m}" for b in table for m in modes) + " |")
print("|---|" + "---|" * (len(table) * 2))
for k in allkinds:
    print(f"| {k} | " + " | ".join(str(table[b][0][m][k]) for b in table for m in modes) + " |")
print("| configs whose findings changed | " + " | ".join(str(table[b][1][m]) for b in table for m in modes) + " |")
