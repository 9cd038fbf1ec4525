#!/usr/bin/env python3
"""Copy the judged shared corpus (`../shared/corpus/cases/rNNN/`) into `tests/corpus/rNNN/`
in the layout of `tests/real/` (`project/`, `home/`, `env`), so that the tests that need it
run on a clean clone where `../shared/` does not exist.

    python3 scripts/vendor-corpus.py [SHARED_CORPUS_DIR]

Kept: `meta.json` (repository, commit, paths, `cwd`), `oracle.json` (OpenCode 1.18.34's
rulesets or refusal). The judgements stay in the shared corpus (`score.py` reads them there).
"""
import json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "corpus")
cases = os.path.join(src, "cases")
dst_root = os.path.join(HERE, "..", "tests", "corpus")
if not os.path.isdir(cases):
    sys.exit(f"vendor-corpus: no corpus at {cases}")
shutil.rmtree(dst_root, ignore_errors=True)
os.makedirs(dst_root)
n = 0
for case in sorted(os.listdir(cases)):
    s = os.path.join(cases, case)
    d = os.path.join(dst_root, case)
    os.makedirs(d)
    shutil.copy2(os.path.join(s, "meta.json"), d)
    # The shared layout's `proj/` is `project/` here (as in tests/real/).
    with open(os.path.join(s, "oracle.json")) as f:
        oracle = f.read().replace("$CASE/proj/", "$CASE/project/").replace('$CASE/proj"', '$CASE/project"')
    with open(os.path.join(d, "oracle.json"), "w") as f:
        f.write(oracle)
    if os.path.isdir(os.path.join(s, "proj")):
        shutil.copytree(os.path.join(s, "proj"), os.path.join(d, "project"), symlinks=True)
    else:  # a global config: OpenCode still starts in some project
        os.makedirs(os.path.join(d, "project"))
        open(os.path.join(d, "project", ".keep"), "w").close()
    shutil.copytree(os.path.join(s, "home"), os.path.join(d, "home"), symlinks=True)
    env = json.load(open(os.path.join(s, "env.json")))
    if env:
        with open(os.path.join(d, "env"), "w") as f:
            for k, v in env.items():
                f.write(f"{k}={v}\n")
    n += 1
with open(os.path.join(dst_root, "README.md"), "w") as f:
    f.write(
        "# The shared judged corpus, vendored\n\n"
        f"{n} real OpenCode configurations from public repositories, copied from the shared\n"
        "corpus (`../shared/corpus/cases/`) by `scripts/vendor-corpus.py` so tests run on a clean\n"
        "clone. Each case: `meta.json` (repository, commit, the paths copied, optional `cwd` below\n"
        "`project/`), `oracle.json` (`opencode agent list --pure` of OpenCode 1.18.34, with\n"
        "`$CASE_HOME`/`$CASE` placeholders, or its refusal), `project/`, `home/`.\n"
        "The judgements and `score.py` stay in the shared corpus; `tests/real/SPLIT.tsv` says\n"
        "which half (tuning / held back) each case is in.\n"
    )
# The shared corpus is read-only (0444); a clone has git's modes (0644), and `--fix` must
# be able to write a copy.
for dirpath, dirnames, filenames in os.walk(dst_root):
    for name in filenames:
        p = os.path.join(dirpath, name)
        if not os.path.islink(p):
            os.chmod(p, 0o644)
print(f"vendored {n} cases into tests/corpus/")
