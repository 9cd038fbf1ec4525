#!/usr/bin/env python3
"""`permaudit report` on every configuration of the shared corpus (docs/limits.md).

Stages each case as OpenCode sees it (corpus README: a copy, proj/ a git repository with
its files committed, HOME = the copy's home/, env.json's variables, cwd proj/<cwd>), writes
the page twice (the bytes must be equal), and prints one line per case and a summary: exit
code, size, wall time. A case OpenCode refuses (oracle ok=false) must exit 2 with a
message; every other case must exit 0. Exit 1 when a case does neither, when two runs
differ, or when a page is over 2 MB or took over 1 s.

    scripts/report-corpus.py [--corpus DIR] [--binary PATH] [--keep DIR]
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "permaudit"))
ap.add_argument("--keep", help="write the pages here")
args = ap.parse_args()
cases_dir = os.path.join(args.corpus, "cases")
binary = os.path.abspath(args.binary)
stage_root = tempfile.mkdtemp(prefix="permaudit-report-corpus.")
if args.keep:
    os.makedirs(args.keep, exist_ok=True)


def git(d, *a):
    subprocess.run(["git", "-C", d, "-c", "user.name=t", "-c", "user.email=t@t", *a],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


bad, rows = [], []
try:
    for case in sorted(os.listdir(cases_dir)):
        src = os.path.join(cases_dir, case)
        dst = os.path.join(stage_root, case)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("oracle.json"))
        proj = os.path.join(dst, "proj")
        os.makedirs(proj, exist_ok=True)
        git(proj, "init", "-q")
        git(proj, "add", "-A")
        git(proj, "commit", "-q", "--allow-empty", "-m", "case")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
        env["HOME"] = os.path.join(dst, "home")
        env.update({k: v.replace("$CASE", dst)
                    for k, v in json.load(open(os.path.join(dst, "env.json"))).items()})
        meta = json.load(open(os.path.join(dst, "meta.json")))
        cwd = os.path.join(proj, meta.get("cwd", ""))
        oracle = json.load(open(os.path.join(src, "oracle.json")))
        refused = oracle.get("ok") is False
        runs = []
        for _ in range(2):
            t = time.perf_counter()
            p = subprocess.run([binary, "report", "-o", "-"], cwd=cwd, env=env,
                               capture_output=True, timeout=120)
            runs.append((p, time.perf_counter() - t))
        (p, secs), (p2, secs2) = runs
        secs = min(secs, secs2)
        size = len(p.stdout)
        why = None
        if refused:
            if p.returncode != 2 or not p.stderr:
                why = f"OpenCode refuses it; permaudit exit {p.returncode}"
        elif p.returncode != 0:
            why = f"exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[-300:]}"
        elif p.stdout != p2.stdout:
            why = "two runs wrote different pages"
        elif size > 2 * 1024 * 1024:
            why = f"{size} bytes, over 2 MB"
        elif secs > 1.0:
            why = f"{secs:.2f} s, over 1 s"
        if why:
            bad.append((case, why))
        if args.keep and p.returncode == 0:
            open(os.path.join(args.keep, case + ".html"), "wb").write(p.stdout)
        rows.append((case, p.returncode, size, secs, "refused" if refused else ""))
        print(f"{case}  exit {p.returncode}  {size / 1024:8.1f} KiB  {secs:6.3f} s  {'refused by OpenCode' if refused else ''}{'  FAIL: ' + why if why else ''}",
              flush=True)
finally:
    shutil.rmtree(stage_root, ignore_errors=True)

ok = [r for r in rows if r[1] == 0]
big = max(ok, key=lambda r: r[2])
slow = max(ok, key=lambda r: r[3])
print(f"\n{len(rows)} cases: {len(ok)} pages, {len(rows) - len(ok)} refused (exit 2, as OpenCode refuses them)")
print(f"largest page: {big[0]} {big[2] / 1024:.1f} KiB ({big[3]:.3f} s); slowest: {slow[0]} {slow[3]:.3f} s ({slow[2] / 1024:.1f} KiB)")
sizes = sorted(r[2] for r in ok)
times = sorted(r[3] for r in ok)
print(f"median: {sizes[len(sizes) // 2] / 1024:.1f} KiB, {times[len(times) // 2]:.3f} s")
if bad:
    print(f"\n{len(bad)} failed:")
    for c, w in bad:
        print(f"  {c}: {w}")
    sys.exit(1)
