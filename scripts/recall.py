#!/usr/bin/env python3
"""Recall of `permaudit check` against the expert's list (issue 45, item 3): tests/real/expert.tsv
holds the problems a reviewer found by reading held-back configs without permaudit's output
(tests/real/expert.md says how). This runs a build on every case listed there and says, per row:

    REPORTED  a warning or error finding is at that file and line (any column), names that line
              among its related places, or names file:line in its message
    NOTED     only an info finding does
    MISSED    nothing does

    python3 scripts/recall.py [BIN]            # BIN: target/release/permaudit
    python3 scripts/recall.py BIN --verbose    # also which findings reported each row
    python3 scripts/recall.py BIN --tsv OUT    # every row with its outcome and finding ids
    python3 scripts/recall.py BIN --cases FILE # only the rows of the case ids FILE lists (one a line),
                                               # e.g. tests/real/expert-2.cases, the second reading

Cases are staged as scripts/corpus-score.py stages them for the shared corpus's score.py: a copy
of the case (tests/real/<case>/project → proj/, home/ → home/; a shared case's proj/ and home/),
proj/ made a git repository, HOME = the copy's home/, cwd = proj/ (or proj/<meta.json cwd>),
OPENCODE_* and XDG_CONFIG*/XDG_DATA* unset, the case's env.json applied ($CASE = the copy).
expert.tsv names files relative to the case directory; a tests/real `project/` prefix is read as
`proj/`.
"""
import collections, csv, json, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
REAL = os.path.join(ROOT, "tests", "real")
CORPUS = os.environ.get("PERMAUDIT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def source_dir(case):
    real = os.path.join(REAL, case)
    if os.path.isdir(os.path.join(real, "project")) or os.path.isdir(os.path.join(real, "home")):
        return real, "real"
    shared = os.path.join(CORPUS, "cases", case)
    if os.path.isdir(shared):
        return shared, "shared"
    sys.exit(f"expert.tsv: case {case} is neither tests/real/{case} nor {shared}")


def stage(case, root):
    src, kind = source_dir(case)
    dst = os.path.join(root, case)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    if kind == "real":
        for a, b in (("project", "proj"), ("home", "home")):
            if os.path.isdir(os.path.join(src, a)):
                shutil.copytree(os.path.join(src, a), os.path.join(dst, b))
            else:
                os.makedirs(os.path.join(dst, b))
        meta, env = {}, {}
    else:
        shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("oracle.json"))
        meta = json.load(open(os.path.join(dst, "meta.json")))
        env = json.load(open(os.path.join(dst, "env.json"))) if os.path.isfile(os.path.join(dst, "env.json")) else {}
    subprocess.run(["git", "init", "-q", os.path.join(dst, "proj")], check=True)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
    e["HOME"] = os.path.join(dst, "home")
    e.update({k: v.replace("$CASE", dst) for k, v in env.items()})
    return dst, os.path.join(dst, "proj", meta.get("cwd", "")), e


def norm(path):
    """expert.tsv's file column in the staged layout (proj/…, home/…)."""
    return "proj/" + path[len("project/"):] if path.startswith("project/") else path


def places(f, dst):
    """(path, line) of a finding: its own source, its related places, file:line:col in its message."""
    out = set()

    def add(s):
        if s and s.get("path") and s.get("line") is not None:
            out.add((os.path.relpath(s["path"], dst), int(s["line"])))

    add(f.get("source"))
    for rel in f.get("related") or []:
        add(rel.get("source"))
    for m in re.finditer(re.escape(dst) + r"/([^\s():,`'\"]+):(\d+)(?::\d+)?", f.get("message") or ""):
        out.add((m.group(1), int(m.group(2))))
    return out


def main():
    a = sys.argv[1:]
    binary = os.path.abspath(a[0] if a and not a[0].startswith("--") else os.path.join(ROOT, "target/release/permaudit"))
    verbose = "--verbose" in a
    tsv_out = a[a.index("--tsv") + 1] if "--tsv" in a else None
    rows = list(csv.DictReader(open(os.path.join(REAL, "expert.tsv")), delimiter="\t", quoting=csv.QUOTE_NONE))
    if "--cases" in a:
        wanted = {l.strip() for l in open(a[a.index("--cases") + 1]) if l.strip() and not l.startswith("#")}
        rows = [r for r in rows if r["case"] in wanted]
    root = tempfile.mkdtemp(prefix="permaudit-recall-")
    outcome = []
    try:
        for case in sorted({r["case"] for r in rows}):
            dst, cwd, env = stage(case, root)
            p = subprocess.run([binary, "check", "--format", "json", "--absolute-paths"], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=600)
            findings, note = [], ""
            if p.returncode not in (0, 1):
                note = f"check exited {p.returncode}: {(p.stderr or p.stdout).strip()[-200:]}"
                print(f"{case}: {note}", file=sys.stderr)
            else:
                findings = json.loads(p.stdout).get("findings", [])
            at = collections.defaultdict(list)  # (path, line) -> [(level, id)]
            for f in findings:
                for pl in places(f, dst):
                    at[pl].append((f.get("level"), f.get("id")))
            for r in (r for r in rows if r["case"] == case):
                hits = at.get((norm(r["file"]), int(r["line"])), [])
                strong = sorted({i for lvl, i in hits if lvl in ("warning", "error")})
                weak = sorted({i for lvl, i in hits if lvl not in ("warning", "error")})
                state = "REPORTED" if strong else "NOTED" if weak else "MISSED"
                outcome.append((r, state, strong or weak, note))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    per = collections.defaultdict(collections.Counter)
    for r, state, _, _ in outcome:
        per[r["shape"]][state] += 1
        per[r["shape"]]["total"] += 1
    tot = collections.Counter()
    print(f"{'shape':30} {'total':>5} {'reported':>8} {'noted':>5} {'missed':>6}  recall")
    for shape in sorted(per, key=lambda s: (-per[s]["total"], s)):
        c = per[shape]
        tot.update(c)
        print(f"{shape:30} {c['total']:5} {c['REPORTED']:8} {c['NOTED']:5} {c['MISSED']:6}  {100 * c['REPORTED'] / c['total']:5.1f}%")
    print(f"{'all':30} {tot['total']:5} {tot['REPORTED']:8} {tot['NOTED']:5} {tot['MISSED']:6}  "
          f"{100 * tot['REPORTED'] / max(1, tot['total']):5.1f}%")
    print(f"recall: {tot['REPORTED']}/{tot['total']} reported at warning/error; "
          f"{tot['NOTED']} more only noted (info); {len({r['case'] for r in rows})} cases")
    for want in ("MISSED", "NOTED") + (("REPORTED",) if verbose else ()):
        sel = [o for o in outcome if o[1] == want]
        if not sel:
            continue
        print(f"\n{want} ({len(sel)})")
        for r, _, ids, note in sorted(sel, key=lambda o: (o[0]["shape"], o[0]["case"], o[0]["file"], int(o[0]["line"]))):
            extra = f" [{', '.join(ids)}]" if ids else ""
            extra += f" ({note})" if note else ""
            print(f"  {r['shape']:28} {r['case']} {r['file']}:{r['line']}{extra}\n      {r['problem']}")
    if tsv_out:
        with open(tsv_out, "w") as out:
            out.write("case\tfile\tline\tshape\tseverity\toutcome\tfindings\n")
            for r, state, ids, _ in outcome:
                out.write("\t".join([r["case"], r["file"], r["line"], r["shape"], r["severity"], state, ",".join(ids)]) + "\n")


if __name__ == "__main__":
    main()
