#!/usr/bin/env python3
"""The tuning and held-back halves of tests/real/ (issue 19), split by repository with a
fixed seed, and the warning/error findings per kind in each half, read from the real-corpus
snapshots (tests/real/snapshots/<dir>.snap).

    python3 scripts/real-split.py                 # per-kind counts of the working tree
    python3 scripts/real-split.py --rev 401023c   # the same, from a commit's snapshots
    python3 scripts/real-split.py --list          # which half each entry is in

Rules are tuned on the `tune` half only; the `held` half is judged, never tuned on. The
split is by directory, one directory per repository (`<owner>__<repo>`, with its SOURCE.md); an entry added
later falls in the half its name hashes to, so adding entries never moves old ones.
"""
import collections, hashlib, os, re, subprocess, sys

SEED = "permaudit-issue-19"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def half(name):
    """`tune` or `held`, from a hash of the seed and the repository's directory name."""
    digest = hashlib.sha256(f"{SEED}/{name}".encode()).digest()
    return "held" if digest[0] % 2 else "tune"


def entries():
    real = os.path.join(ROOT, "tests", "real")
    return sorted(d for d in os.listdir(real) if os.path.isfile(os.path.join(real, d, "SOURCE.md")))


def snapshot(name, rev):
    path = f"tests/real/snapshots/{name}.snap"
    if rev is None:
        try:
            return open(os.path.join(ROOT, path)).read()
        except FileNotFoundError:
            return ""
    r = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def main():
    args = sys.argv[1:]
    rev = args[args.index("--rev") + 1] if "--rev" in args else None
    if "--list" in args:
        for name in entries():
            print(half(name), name)
        return
    counts = {"tune": collections.Counter(), "held": collections.Counter()}
    sizes = collections.Counter()
    for name in entries():
        h = half(name)
        sizes[h] += 1
        for m in re.finditer(r"^(error|warning)\[([a-z-]+)\]", snapshot(name, rev), re.M):
            counts[h][m.group(2)] += 1
    kinds = sorted(set(counts["tune"]) | set(counts["held"]))
    print(f"{'kind':28} {'tune':>6} {'held':>6}   (warning/error findings; entries: tune {sizes['tune']}, held {sizes['held']})")
    for k in kinds:
        print(f"{k:28} {counts['tune'][k]:6} {counts['held'][k]:6}")
    print(f"{'total':28} {sum(counts['tune'].values()):6} {sum(counts['held'].values()):6}")


main()
