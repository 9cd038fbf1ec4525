#!/usr/bin/env python3
"""Every warning/error of `permaudit check` that carries help, on one half of the real
configurations, for judging the help (issue 44, "Advice that fits the config").

    python3 scripts/help-findings.py BIN [--half held|tune] [--out FILE] [--totals FILE] [--json DIR] [--keep DIR]

Cases are tests/real/SPLIT.tsv's rows of the half, staged as scripts/corpus-score.py and the
shared corpus's score.py stage them: corpus=shared is ../shared/corpus/cases/<case>/ (or
$PERMAUDIT_CORPUS) with its proj/, home/, env.json and meta.json `cwd`; corpus=real is
tests/real/<case>/ with project/ as proj/ and home/. A tests/real entry whose repository is
also a shared case is left out (scored as its shared case), and so is a case OpenCode
refuses (oracle.json ok=false, or tests/real/INDEX.md's verdict), as score.py does. Each case
is copied to a scratch directory, proj/ is `git init`ed, and `BIN check --format json
--absolute-paths` runs with HOME=<copy>/home, cwd <copy>/proj[/cwd], no XDG_CONFIG_HOME,
XDG_DATA_HOME or OPENCODE* variables.

--out (default help-findings.tsv) gets one row per warning/error finding with a non-empty
help or a proven suggestion: case, kind, level, location (file:line:col relative to the
staged case: home/… or proj/…, as judgements.tsv names places), agents (comma-joined),
message, help (paths made relative the same way; newlines as \\n), suggestions (the JSON
`suggestions` array reduced to title, file, line, text and effect, as one line of JSON;
empty when there is none). --totals (default help-totals.tsv) gets, per case,
the exit code, the number of warning/error findings, how many of them have help, how
many are printed word for word more than once at one place (same kind, location and
message: the extra copies), and the same count over findings of every level. --json DIR keeps each case's raw JSON (paths relative) for reading.
--keep DIR stages the cases in DIR (kept afterwards, e.g. to apply a suggestion's edits to a
copy) instead of a temporary directory.
"""
import csv, json, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
REAL = os.path.join(ROOT, "tests", "real")
CORPUS = os.environ.get("PERMAUDIT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def index_verdicts():
    out = {}
    for line in open(os.path.join(REAL, "INDEX.md")):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1].startswith("`"):
            out[cells[1].strip("`")] = cells[-2] == "accepts"
    return out


def arg(a, name, default):
    return a[a.index(name) + 1] if name in a else default


def one_line(s):
    return (s or "").replace("\t", " ").replace("\r", "").replace("\n", "\\n")


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("--"):
        sys.exit(__doc__)
    binary = os.path.abspath(a[0])
    half = arg(a, "--half", "held")
    out_path = arg(a, "--out", "help-findings.tsv")
    totals_path = arg(a, "--totals", "help-totals.tsv")
    json_dir = arg(a, "--json", None)
    split = [r for r in csv.reader(open(os.path.join(REAL, "SPLIT.tsv")), delimiter="\t")][1:]
    shared = {r[1] for r in split if r[2] == "shared"}
    verdicts = index_verdicts()
    keep = arg(a, "--keep", None)
    if keep:
        os.makedirs(keep, exist_ok=True)
    scratch = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="permaudit-help-")
    if json_dir:
        os.makedirs(json_dir, exist_ok=True)
    rows, totals = [], []
    try:
        for h, repo, corpus, case in split:
            if h != half or (corpus == "real" and repo in shared):
                continue
            dst = os.path.join(scratch, case)
            meta, env_extra = {}, {}
            if corpus == "shared":
                src = os.path.join(CORPUS, "cases", case)
                ok = json.load(open(os.path.join(src, "oracle.json"))).get("ok", True)
                shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("oracle.json"))
                meta = json.load(open(os.path.join(dst, "meta.json")))
                env_extra = json.load(open(os.path.join(dst, "env.json")))
            else:
                src = os.path.join(REAL, case)
                oracle = os.path.join(src, "oracle.json")
                ok = json.load(open(oracle)).get("ok", True) if os.path.isfile(oracle) else verdicts.get(case, True)
                os.makedirs(dst)
                shutil.copytree(os.path.join(src, "project"), os.path.join(dst, "proj"), symlinks=True)
                shutil.copytree(os.path.join(src, "home"), os.path.join(dst, "home"), symlinks=True)
            if not ok:
                totals.append([case, corpus, "refused", "", "", "", ""])
                continue
            subprocess.run(["git", "init", "-q", os.path.join(dst, "proj")], check=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
            env["HOME"] = os.path.join(dst, "home")
            env.update({k: v.replace("$CASE", dst) for k, v in env_extra.items()})
            cwd = os.path.join(dst, "proj", meta.get("cwd", ""))
            p = subprocess.run([binary, "check", "--format", "json", "--absolute-paths"], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=600)
            text = p.stdout.replace(dst + "/", "")
            if json_dir:
                open(os.path.join(json_dir, case + ".json"), "w").write(text)
            if p.returncode not in (0, 1):
                totals.append([case, corpus, str(p.returncode), "", "", "", ""])
                continue
            every = json.loads(text).get("findings", [])
            findings = [f for f in every if f.get("level") in ("warning", "error")]
            seen, dups, helped = {}, 0, 0
            seen_all, dups_all = {}, 0
            for f in every:
                s = f.get("source") or {}
                key = (f.get("id"), f"{s.get('path')}:{s.get('line')}:{s.get('column')}", f.get("message"))
                seen_all[key] = seen_all.get(key, 0) + 1
                dups_all += seen_all[key] > 1
            for f in findings:
                s = f.get("source") or {}
                loc = f"{s['path']}:{s['line']}:{s['column']}" if s.get("path") else "(built-in)"
                key = (f.get("id"), loc, f.get("message"))
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > 1:
                    dups += 1
                sugg = [{k: g.get(k) for k in ("title", "file", "line", "text", "effect")}
                        for g in f.get("suggestions") or []]
                if (f.get("help") or "").strip() or sugg:
                    helped += 1
                    rows.append([case, f["id"], f["level"], loc, ",".join(f.get("agents") or []),
                                 one_line(f.get("message")), one_line(f.get("help")),
                                 one_line(json.dumps(sugg, ensure_ascii=False)) if sugg else ""])
            totals.append([case, corpus, str(p.returncode), str(len(findings)), str(helped), str(dups), str(dups_all)])
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    with open(out_path, "w") as o:
        o.write("case\tkind\tlevel\tlocation\tagents\tmessage\thelp\tsuggestions\n")
        o.writelines("\t".join(r) + "\n" for r in rows)
    with open(totals_path, "w") as o:
        o.write("case\tcorpus\texit\twarnings_errors\twith_help\trepeated_word_for_word\trepeated_word_for_word_any_level\n")
        o.writelines("\t".join(r) + "\n" for r in totals)
    n = sum(int(t[3]) for t in totals if t[3])
    print(f"{half} half: {len(totals)} cases ({sum(1 for t in totals if t[2] == 'refused')} refused by OpenCode), "
          f"{n} warning/error findings, {len(rows)} with help, "
          f"{sum(int(t[5]) for t in totals if t[5])} repeated word for word at one place "
          f"({sum(int(t[6]) for t in totals if t[6])} counting info findings too)", file=sys.stderr)


main()
