#!/usr/bin/env python3
"""`check` time over `rules` time (loading) on every configuration of both corpora
(issue 35: check must stay within 5x of rules).

    python3 scripts/check-vs-rules.py [BIN] [--runs N] [--top K]

Every tests/real entry (its project/ and home/) and every case of ../shared/corpus/ (or
$PERMAUDIT_CORPUS) is staged once under $TMPDIR as OpenCode sees it (project made a git
repository, HOME = its home/, XDG_* and OPENCODE_* unset), then `rules --format json` and
`check --format json` run N times each (default 5), interleaved; the minimum wall time of
each is kept (the least disturbed run on a shared machine). Prints the K worst ratios
(default 10) and the count over 5x; exits 1 when any configuration is over 5x.
"""
import json, os, shutil, subprocess, sys, tempfile, time

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


def timed(cmd, cwd, env):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return time.perf_counter() - t, p.returncode


def main():
    a = sys.argv[1:]
    binary = os.path.abspath(a[0] if a and not a[0].startswith("--") else os.path.join(ROOT, "target/release/permaudit"))
    runs = int(a[a.index("--runs") + 1]) if "--runs" in a else 5
    top = int(a[a.index("--top") + 1]) if "--top" in a else 10
    tmp = tempfile.mkdtemp(prefix="permaudit-check-vs-rules-")
    rows = []
    try:
        for k, (case, proj, home, cwd) in enumerate(cases()):
            dst = os.path.join(tmp, str(k))
            stage(dst, proj, home)
            env = {x: v for x, v in os.environ.items() if not x.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
            env["HOME"] = os.path.join(dst, "home")
            where = os.path.join(dst, "proj", cwd)
            r, c = [], []
            for _ in range(runs):
                t, code = timed([binary, "rules", "--format", "json"], where, env)
                r.append(t)
                t, ccode = timed([binary, "check", "--format", "json"], where, env)
                c.append(t)
            if code != 0 or ccode not in (0, 1):
                continue  # a configuration OpenCode (and permaudit) refuses: nothing to check
            rows.append((min(c) / min(r), case, min(r), min(c)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows.sort(reverse=True)
    print(f"{'ratio':>6} {'rules ms':>9} {'check ms':>9}  configuration")
    for ratio, case, r, c in rows[:top]:
        print(f"{ratio:6.2f} {r * 1000:9.1f} {c * 1000:9.1f}  {case}")
    over = [x for x in rows if x[0] > 5]
    print(f"{len(rows)} configurations, {len(over)} over 5x; median ratio {rows[len(rows) // 2][0]:.2f}" if rows else "no configuration")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
