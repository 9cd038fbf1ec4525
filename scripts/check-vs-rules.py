#!/usr/bin/env python3
"""`check` time over `rules` time (loading) on every configuration of both corpora
(issue 35: check must stay within 5x of rules).

    python3 scripts/check-vs-rules.py [BIN] [--runs N] [--top K] [--base BASE] [--only SUBSTR] [--cpu]

Every tests/real entry (its project/ and home/) and every case of ../shared/corpus/ (or
$PERMAUDIT_CORPUS) is staged once under $TMPDIR as OpenCode sees it (project made a git
repository, HOME = its home/, XDG_* and OPENCODE_* unset), then `rules --format json` and
`check --format json` run N times each (default 5), interleaved; the minimum wall time of
each is kept (the least disturbed run on a shared machine). Prints the K worst ratios
(default 10) and the count over 5x; exits 1 when any configuration is over 5x.

With --base BASE (another build, e.g. main's), BASE's `rules` and `check` run in the same
rounds, alternating with BIN's, so both see the same load: the K worst ratios of BIN are
shown beside BASE's on the same configurations, then BASE's K worst beside BIN's, and the
total `check` time of each over all configurations. --only keeps the configurations whose
name contains SUBSTR. --cpu measures CPU time (user + system, of the process and its
threads) instead of wall time: steadier when other builds share the machine.
"""
import json, os, resource, shutil, subprocess, sys, tempfile, time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
REAL = os.path.join(ROOT, "tests", "real")
CORPUS = os.environ.get("PERMAUDIT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def cases():
    for name in sorted(os.listdir(REAL)):
        src = os.path.join(REAL, name)
        if os.path.isdir(os.path.join(src, "project")):
            yield "real/" + name, os.path.join(src, "project"), os.path.join(src, "home"), ""
    base = os.path.join(CORPUS, "cases")
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        src = os.path.join(base, name)
        meta = json.load(open(os.path.join(src, "meta.json")))
        yield "shared/" + name, os.path.join(src, "proj"), os.path.join(src, "home"), meta.get("cwd", "")


def stage(dst, proj, home):
    for src, name in ((proj, "proj"), (home, "home")):
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dst, name), symlinks=True)
        else:
            os.makedirs(os.path.join(dst, name))
    subprocess.run(["git", "init", "-q", os.path.join(dst, "proj")], check=True)


CPU = "--cpu" in sys.argv


def timed(cmd, cwd, env):
    t = time.perf_counter()
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    if CPU:
        v = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (v.ru_utime - u.ru_utime) + (v.ru_stime - u.ru_stime), p.returncode
    return time.perf_counter() - t, p.returncode


def main():
    a = sys.argv[1:]
    binary = os.path.abspath(a[0] if a and not a[0].startswith("--") else os.path.join(ROOT, "target/release/permaudit"))
    runs = int(a[a.index("--runs") + 1]) if "--runs" in a else 5
    top = int(a[a.index("--top") + 1]) if "--top" in a else 10
    base = os.path.abspath(a[a.index("--base") + 1]) if "--base" in a else None
    only = a[a.index("--only") + 1] if "--only" in a else ""
    tmp = tempfile.mkdtemp(prefix="permaudit-check-vs-rules-")
    rows = []
    bins = [binary] + ([base] if base else [])
    try:
        for k, (case, proj, home, cwd) in enumerate(cases()):
            if only not in case:
                continue
            dst = os.path.join(tmp, str(k))
            stage(dst, proj, home)
            env = {x: v for x, v in os.environ.items() if not x.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
            env["HOME"] = os.path.join(dst, "home")
            where = os.path.join(dst, "proj", cwd)
            r = [[] for _ in bins]
            c = [[] for _ in bins]
            codes = set()
            for _ in range(runs):
                for b, exe in enumerate(bins):
                    t, code = timed([exe, "rules", "--format", "json"], where, env)
                    r[b].append(t)
                    t, ccode = timed([exe, "check", "--format", "json"], where, env)
                    c[b].append(t)
                    codes.add((code, ccode in (0, 1)))
            if codes != {(0, True)}:
                continue  # a configuration OpenCode (and permaudit) refuses: nothing to check
            rows.append([(min(c[b]) / min(r[b]), min(r[b]), min(c[b])) for b in range(len(bins))] + [case])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not rows:
        print("no configuration")
        return 0

    def table(by, title):
        ordered = sorted(rows, key=lambda x: x[by][0], reverse=True)[:top]
        if base:
            print(title)
            print(f"{'ratio':>6} {'rules ms':>9} {'check ms':>9} | {'base':>6} {'rules ms':>9} {'check ms':>9}  configuration")
        else:
            print(f"{'ratio':>6} {'rules ms':>9} {'check ms':>9}  configuration")
        for x in ordered:
            cols = [f"{q:6.2f} {rr * 1000:9.1f} {cc * 1000:9.1f}" for q, rr, cc in x[:-1]]
            print(" | ".join(cols) + f"  {x[-1]}")

    table(0, "worst of BIN (left), BASE beside it:")
    if base:
        table(1, "worst of BASE (right), BIN beside it:")
    for b, exe in enumerate(bins):
        ratios = sorted(x[b][0] for x in rows)
        over = sum(1 for q in ratios if q > 5)
        total = sum(x[b][2] for x in rows)
        slower = ""
        if b == 0 and base:
            worse = [x for x in rows if x[0][2] > x[1][2] * 1.10]
            slower = f"; check >10% slower than BASE on {len(worse)}" + "".join(
                f"\n  slower: {x[-1]} {x[0][2] * 1000:.1f} ms vs {x[1][2] * 1000:.1f} ms" for x in worse)
        print(f"{exe}: {len(rows)} configurations, {over} over 5x; median ratio {ratios[len(ratios) // 2]:.2f}; total check {total:.2f} s{slower}")
    return 1 if any(x[0][0] > 5 for x in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
