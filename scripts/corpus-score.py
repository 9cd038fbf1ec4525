#!/usr/bin/env python3
"""The per-kind TP/FP/debatable table of `permaudit check` on both halves of the real
configurations (issue 35): ../shared/corpus/ (or $PERMAUDIT_CORPUS) and tests/real/, split
as tests/real/SPLIT.tsv says (scripts/real-split.py), scored by the shared corpus's own
score.py against its judgements.tsv plus tests/real/judgements.tsv.

    python3 scripts/corpus-score.py [BIN]                 # both halves (BIN: target/release/permaudit)
    python3 scripts/corpus-score.py BIN --half held       # one half
    python3 scripts/corpus-score.py BIN --list FP         # score.py's --list, per half
    python3 scripts/corpus-score.py BIN --cases FILE      # only the case ids in FILE (e.g. a fresh set)

One scratch corpus is built under $TMPDIR: the shared cases as they are, and every
tests/real entry as a case of the same layout (`proj/` = its project/, `home/`, `meta.json`,
`env.json` = {}, `oracle.json` = the entry's own or, for entries older than issue 35, OpenCode's
verdict from tests/real/INDEX.md). A case's id is its SPLIT.tsv `case` (`rNNN` or the
tests/real directory), which is also the `case` column of the judgements. Then score.py runs
once per half with `--cases` (the half's case ids); a repository in both corpora is scored once,
as its shared case, whose findings are judged. Entries of tests/real that nobody judged
yet show up as `unjudged`; only judged findings count in the percentages.
"""
import csv, json, os, shutil, subprocess, sys, tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
REAL = os.path.join(ROOT, "tests", "real")
CORPUS = os.environ.get("PERMAUDIT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def index_verdicts():
    """tests/real/INDEX.md's OpenCode column: directory -> accepts?"""
    out = {}
    for line in open(os.path.join(REAL, "INDEX.md")):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1].startswith("`"):
            out[cells[1].strip("`")] = cells[-2] == "accepts"
    return out


def build(dst, split):
    cases = os.path.join(dst, "cases")
    os.makedirs(cases)
    verdicts = index_verdicts()
    for half, key, corpus, case in split:
        out = os.path.join(cases, case)
        if corpus == "shared":
            os.symlink(os.path.join(os.path.abspath(CORPUS), "cases", case), out)
            continue
        src = os.path.join(REAL, case)
        os.makedirs(out)
        os.symlink(os.path.join(src, "project"), os.path.join(out, "proj"))
        os.symlink(os.path.join(src, "home"), os.path.join(out, "home"))
        source = open(os.path.join(src, "SOURCE.md")).read()
        repo = next((l.split("github.com/", 1)[1].strip() for l in source.splitlines() if l.startswith("- Repository:")), key)
        layer = "global" if not os.listdir(os.path.join(src, "project")) or os.listdir(os.path.join(src, "project")) == [".keep"] else "project"
        json.dump({"source": repo, "layer": layer}, open(os.path.join(out, "meta.json"), "w"))
        json.dump({}, open(os.path.join(out, "env.json"), "w"))
        oracle = os.path.join(src, "oracle.json")
        if os.path.isfile(oracle):
            shutil.copy(oracle, os.path.join(out, "oracle.json"))
        else:
            json.dump({"ok": verdicts.get(case, True)}, open(os.path.join(out, "oracle.json"), "w"))
    with open(os.path.join(dst, "judgements.tsv"), "w") as j:
        j.write(open(os.path.join(CORPUS, "judgements.tsv")).read())
        own = os.path.join(REAL, "judgements.tsv")
        if os.path.isfile(own):
            j.writelines(open(own).readlines()[1:])
    shutil.copy(os.path.join(CORPUS, "score.py"), os.path.join(dst, "score.py"))


def main():
    a = sys.argv[1:]
    binary = os.path.abspath(a[0] if a and not a[0].startswith("--") else os.path.join(ROOT, "target/release/permaudit"))
    halves = [a[a.index("--half") + 1]] if "--half" in a else ["tune", "held"]
    extra = ["--list", a[a.index("--list") + 1]] if "--list" in a else []
    only = None
    if "--cases" in a:
        only = {l.strip() for l in open(a[a.index("--cases") + 1]) if l.strip()}
        halves = ["listed"]
    split = [tuple(r) for r in csv.reader(open(os.path.join(REAL, "SPLIT.tsv")), delimiter="\t")][1:]
    dst = tempfile.mkdtemp(prefix="permaudit-corpus-score-")
    try:
        build(dst, split)
        # A repository in both corpora is scored once, as its shared case (the judged one).
        shared = {r[1] for r in split if r[2] == "shared"}
        for h in halves:
            ids = [r[3] for r in split if (r[3] in only if only is not None else r[0] == h)
                   and not (r[2] == "real" and r[1] in shared)]
            if only is not None:
                missing = sorted(only - {r[3] for r in split})
                if missing:
                    sys.exit(f"--cases: not in SPLIT.tsv: {', '.join(missing)}")
            lst = os.path.join(dst, f"{h}.txt")
            open(lst, "w").write("\n".join(ids) + "\n")
            mine = [r for r in split if (r[3] in only if only is not None else r[0] == h)]
            n_real = sum(1 for r in mine if r[2] == "real" and r[1] not in shared)
            dup = sum(1 for r in mine if r[2] == "real" and r[1] in shared)
            print(f"== {h if only is not None else h + ' half'}: {len(ids)} cases ({len(ids) - n_real} shared, {n_real} tests/real; "
                  f"{dup} tests/real entries left out, their repository scored as its shared case), "
                  f"{len({r[1] for r in mine})} repositories")
            sys.stdout.flush()
            subprocess.run([sys.executable, os.path.join(dst, "score.py"), binary, "--cases", lst,
                            "--stage", os.path.join(dst, "stage"), *extra], check=True)
    finally:
        shutil.rmtree(dst, ignore_errors=True)


main()
