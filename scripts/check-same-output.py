#!/usr/bin/env python3
"""Does a build of permaudit report exactly what another does, on every real configuration?

    python3 scripts/check-same-output.py BIN BASE [--only SUBSTR]

For every entry of tests/real/ and tests/corpus/ (those with a project/), staged once under
$TMPDIR as the tests stage them (project/ made a git repository, HOME = its home/, XDG_* and
OPENCODE_* unset, start in project/ or the directory its meta.json names), runs
`check --format json`, the human `check` (NO_COLOR) and `check --headless` with both
builds and compares standard output, standard error and exit code byte for byte. A
performance change must leave every one equal. Prints each difference (the first differing
line) and a count; exits 1 when any differs.
"""
import json, os, shutil, subprocess, sys, tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SETS = ("tests/real", "tests/corpus")
FORMS = (["check", "--format", "json"], ["check"], ["check", "--headless"])


def entries():
    for s in SETS:
        base = os.path.join(ROOT, s)
        for name in sorted(os.listdir(base)):
            src = os.path.join(base, name)
            if os.path.isdir(os.path.join(src, "project")):
                yield f"{s}/{name}", src


def start_of(src):
    try:
        cwd = json.load(open(os.path.join(src, "meta.json"))).get("cwd")
    except (OSError, ValueError):
        cwd = None
    return os.path.join("project", cwd) if cwd else "project"


def run(exe, args, cwd, env):
    p = subprocess.run([exe] + args, cwd=cwd, env=env, capture_output=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def first_difference(a, b):
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for k, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {k + 1}:\n    - {x[:200]}\n    + {y[:200]}"
    return f"lengths {len(la)} and {len(lb)} lines"


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        print(__doc__.strip())
        return 2
    binary, base = os.path.abspath(a[0]), os.path.abspath(a[1])
    only = a[a.index("--only") + 1] if "--only" in a else ""
    tmp = tempfile.mkdtemp(prefix="permaudit-same-output-")
    compared = differ = 0
    try:
        for k, (case, src) in enumerate(entries()):
            if only not in case:
                continue
            dst = os.path.join(tmp, str(k))
            shutil.copytree(os.path.join(src, "project"), os.path.join(dst, "project"), symlinks=True)
            if os.path.isdir(os.path.join(src, "home")):
                shutil.copytree(os.path.join(src, "home"), os.path.join(dst, "home"), symlinks=True)
            else:
                os.makedirs(os.path.join(dst, "home"))
            subprocess.run(["git", "init", "-q", os.path.join(dst, "project")], check=True)
            env = {x: v for x, v in os.environ.items() if not x.startswith(("OPENCODE", "XDG_CONFIG", "XDG_DATA"))}
            env.update(HOME=os.path.join(dst, "home"), NO_COLOR="1")
            where = os.path.join(dst, start_of(src))
            for form in FORMS:
                mine, theirs = run(binary, form, where, env), run(base, form, where, env)
                compared += 1
                if mine != theirs:
                    differ += 1
                    what = [n for n, x, y in zip(("exit code", "stdout", "stderr"), mine, theirs) if x != y]
                    detail = "" if what == ["exit code"] else first_difference(
                        mine[1] if "stdout" in what else mine[2], theirs[1] if "stdout" in what else theirs[2])
                    print(f"DIFFERS {case} `{' '.join(form)}`: {', '.join(what)} {detail}")
            shutil.rmtree(dst, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{compared} runs compared ({len(FORMS)} forms per entry), {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
