#!/usr/bin/env python3
"""The tuning and held-back halves of the real configurations (issues 19 and 35): tests/real/
and the judged corpus in ../shared/corpus/ (or $PERMAUDIT_CORPUS), split by repository with a
fixed seed, so that one repository is always in one half whichever corpus holds it.

    python3 scripts/real-split.py                 # per-kind counts of tests/real's snapshots
    python3 scripts/real-split.py --rev 401023c   # the same, from a commit's snapshots
    python3 scripts/real-split.py --list          # which half each tests/real entry is in
    python3 scripts/real-split.py --write         # rewrite tests/real/SPLIT.tsv (both corpora)
    python3 scripts/real-split.py --check         # SPLIT.tsv is what the rule gives (exit 1 if not)
    python3 scripts/real-split.py --check --rev main   # ... and no case SPLIT.tsv had at main moved

Rules are tuned on the `tune` half only; the `held` half is judged, never tuned on. A
repository's key is `<owner>__<repo>`, lowercase (a tests/real directory's name; a shared
case's `meta.json` source). Its half is a hash of the seed and the key, so adding entries
never moves old ones, except that the entries added by issue 35's first two rounds (their
SOURCE.md says "Added: issue 35", e.g. "(held-back half)") are held back: those
configurations were gathered to be unseen. The entries of every later round ("Added: issue
35 (session N, split by hash)", N = 3, 4, ..., and issue 45's "Added: issue 45 (session 7, split
by hash)") take their hashed half, so both halves grow. Every such repository is in no other corpus (they were chosen that way), so the rule stays one half per
repository; `--check` verifies it (and, with `--check --rev REV`, that no entry SPLIT.tsv
listed at REV changed half).

tests/real/SPLIT.tsv records the result: `half`, `repository` (the key), `corpus`
(`real` or `shared`), `case` (the tests/real directory or the shared case id, `rNNN`).
scripts/corpus-score.sh scores each half with ../shared/corpus/score.py.
"""
import collections, hashlib, json, os, re, subprocess, sys

SEED = "permaudit-issue-19"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
REAL = os.path.join(ROOT, "tests", "real")
CORPUS = os.environ.get("PERMAUDIT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
SPLIT = os.path.join(REAL, "SPLIT.tsv")


def hashed(key):
    """`tune` or `held`, from a hash of the seed and the repository's key."""
    digest = hashlib.sha256(f"{SEED}/{key}".encode()).digest()
    return "held" if digest[0] % 2 else "tune"


HASHED_MARK = re.compile(r"Added: issue 35 \(session \d+, split by hash\)")


def held_back(name):
    """An entry added by issue 35 before its third round (held back whatever its hash). The
    entries of the third round on (SOURCE.md: "Added: issue 35 (session N, split by hash)")
    take their hashed half like any other, so the tuning half grows too."""
    try:
        source = open(os.path.join(REAL, name, "SOURCE.md")).read()
    except FileNotFoundError:
        return False
    return "Added: issue 35" in source and not HASHED_MARK.search(source)


def half(name):
    return "held" if held_back(name) else hashed(name)


def entries():
    return sorted(d for d in os.listdir(REAL) if os.path.isfile(os.path.join(REAL, d, "SOURCE.md")))


def shared_cases():
    """(case id, repository key) of every shared case, or [] without the corpus."""
    cases = os.path.join(CORPUS, "cases")
    if not os.path.isdir(cases):
        return []
    out = []
    for c in sorted(os.listdir(cases)):
        meta = os.path.join(cases, c, "meta.json")
        if os.path.isfile(meta):
            out.append((c, json.load(open(meta))["source"].lower().replace("/", "__")))
    return out


def rows():
    """Every (half, repository, corpus, case), real entries first."""
    out = [(half(n), n, "real", n) for n in entries()]
    out += [(half(key), key, "shared", c) for c, key in shared_cases()]
    return out


def check(rs):
    problems = []
    halves = collections.defaultdict(set)
    for h, key, _, _ in rs:
        halves[key].add(h)
    problems += [f"{k}: in both halves" for k, hs in sorted(halves.items()) if len(hs) > 1]
    try:
        text = open(SPLIT).read().splitlines()[1:]
    except FileNotFoundError:
        text = []
    want = ["\t".join(r) for r in rs]
    if text != want:
        problems.append(f"{os.path.relpath(SPLIT, ROOT)} differs from the rule: run scripts/real-split.py --write")
    return problems


def moved(rs, rev):
    """Every case SPLIT.tsv listed at commit `rev` whose half the rule now changes."""
    r = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:tests/real/SPLIT.tsv"], capture_output=True, text=True)
    if r.returncode != 0:
        return [f"no tests/real/SPLIT.tsv at {rev}"]
    now = {(corpus, case): h for h, _, corpus, case in rs}
    out = []
    for line in r.stdout.splitlines()[1:]:
        h, _, corpus, case = line.split("\t")
        if now.get((corpus, case), h) != h:
            out.append(f"{corpus} {case}: moved from {h} (at {rev}) to {now[corpus, case]}")
    return out


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
    if "--write" in args:
        rs = rows()
        if not shared_cases():
            sys.exit(f"no shared corpus at {CORPUS} (set PERMAUDIT_CORPUS)")
        with open(SPLIT, "w") as f:
            f.write("half\trepository\tcorpus\tcase\n")
            for r in rs:
                f.write("\t".join(r) + "\n")
        n = collections.Counter((r[0], r[2]) for r in rs)
        print(f"wrote {len(rs)} rows: real tune {n['tune', 'real']}, held {n['held', 'real']}; "
              f"shared tune {n['tune', 'shared']}, held {n['held', 'shared']}")
        return
    if "--check" in args:
        rs = rows()
        problems = check(rs)
        if rev is not None:
            problems += moved(rs, rev)
        for p in problems:
            print(p)
        sys.exit(1 if problems else 0)
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
