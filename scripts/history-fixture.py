#!/usr/bin/env python3
"""Record a real OpenCode history for `permaudit history`'s tests (stdlib only).

Usage: history-fixture.py OPENCODE_BIN OUT_DIR

Builds OUT_DIR/proj (a git repository with one commit and an opencode.json), OUT_DIR/home
(the HOME OpenCode runs with; its database is OUT_DIR/home/.local/share/opencode/opencode.db)
and drives the real binary: `opencode serve --pure` on 127.0.0.1, a scripted model
(tests/live/mock_model.py, an OpenAI-compatible server on 127.0.0.1) that makes the tool
calls of CONVERSATIONS below, and the permission asks answered through the server's own API
(`GET /event` for `permission.asked`, `POST /permission/:id/reply` with once, always or
reject). Each conversation is one session, prompted with `POST /session/:id/prompt_async`
and waited for until the session is idle again.

The server is killed with SIGKILL, as a crash or a closed laptop stops it, so SQLite gets
no chance to checkpoint at exit; a second server then runs the LATE conversation and is
killed the same way: its writes, the first after the checkpoint OpenCode makes when it
opens the database, stay only in `opencode.db-wal` (what the test checks permaudit reads).
Prints one JSON line: what the test needs (the project directory, the sessions' ids by
conversation, the asks seen and how they were answered, `wal_only`: the callIDs found with
the WAL and not in the main file alone, both read from copies), and writes the same to
OUT_DIR/run.json. Takes 30 to 70 seconds.

Between the two servers, RUN_AUTO runs through `opencode run --pure --auto` (the asks
approved by the run command, no person): its session is recorded with the run command's
session rules (`question`, `plan_enter`, `plan_exit` denied), which is how `permaudit
suggest` tells such sessions apart.

Verified with it on 1.18.34: the schema (tables session, message, part; part.data
{type: "tool", tool, callID, state: {status, input, error, time}}), the statuses
(`completed`, `error`), the error texts of a config deny and a user's reject, and that an
"always" reply leaves the `permission` table empty.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
MOCK = os.path.join(HERE, "..", "tests", "live", "mock_model.py")

# The config OpenCode runs with while recording (the test judges the history under another).
PERMISSION = {
    "bash": {"*": "ask", "echo *": "allow", "rm *": "deny", "git status*": "allow"},
    "edit": "ask",
    "read": "allow",
    "external_directory": "ask",
}

# One session per conversation: (token, agent, calls). A call is (tool, args, reply) where
# reply answers the ask the call raises (None: the call raises none). A rejected ask stops
# its session, so it comes last.
CONVERSATIONS = [
    ("HIST-A-GO", "build", [
        ("bash", {"command": "echo hi > a.txt", "description": "write a"}, None),
        ("bash", {"command": "rm -f a.txt", "description": "remove a"}, None),
        ("bash", {"command": "ls -la", "description": "list"}, "once"),
        ("edit", {"filePath": "{proj}/README.md", "oldString": "hello", "newString": "hello there"}, "always"),
        ("read", {"filePath": "{proj}/README.md"}, None),
        ("bash", {"command": "touch b.txt", "description": "touch b"}, "reject"),
    ]),
    ("HIST-B-GO", "build", [
        ("bash", {"command": "ls -la && git status", "description": "list and status"}, "once"),
        ("bash", {"command": "cat /etc/hostname", "description": "outside"}, "reject"),
    ]),
    ("HIST-C-GO", "plan", [
        ("read", {"filePath": "{proj}/README.md"}, None),
    ]),
    # For `permaudit suggest`: the same command family (`git log *`, its "Always" pattern)
    # approved once in each of two sessions, another (`pwd *`) in one session only.
    ("HIST-E-GO", "build", [
        ("bash", {"command": "git log --oneline -1", "description": "last commit"}, "once"),
        ("bash", {"command": "pwd", "description": "where"}, "once"),
    ]),
    ("HIST-F-GO", "build", [
        ("bash", {"command": "git log -1 --stat", "description": "last commit's files"}, "once"),
    ]),
]

# Run by `opencode run --auto` (its asks approved by the run command, not a person): the
# session OpenCode records for it carries the run command's own session rules.
RUN_AUTO = [
    ("HIST-G-GO", "build", [
        ("bash", {"command": "git log --oneline -1", "description": "last commit"}, None),
    ]),
]

# Run by a second server after the first was killed: its writes are the first after the
# checkpoint OpenCode makes when it opens the database, far fewer than the 1,000 pages of
# SQLite's automatic checkpoint, so they are still only in the WAL when it is killed.
LATE = [
    ("HIST-D-GO", "build", [
        ("bash", {"command": "echo late", "description": "late"}, None),
    ]),
]


def env_for(out):
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.path.join(out, "home"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_TEST_MANAGED_CONFIG_DIR": os.path.join(out, "managed"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }


def http(method, url, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        raw = r.read()
    return json.loads(raw) if raw.strip() else None


def config(port):
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": "http://127.0.0.1:%d/v1" % port, "apiKey": "mock"},
            "models": {"m1": {"name": "m1", "tool_call": True}},
        }},
        "model": "mock/m1",
        "small_model": "mock/m1",
        "permission": PERMISSION,
    }


def fail(msg):
    sys.stderr.write("history-fixture: %s\n" % msg)
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        fail("usage: history-fixture.py OPENCODE_BIN OUT_DIR")
    bin_, out = sys.argv[1], os.path.realpath(sys.argv[2])
    proj = os.path.join(out, "proj")
    for d in ("proj", "home", "managed"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    env = env_for(out)
    with open(os.path.join(proj, "README.md"), "w") as f:
        f.write("hello\n")
    for args in (["init", "-q", "."], ["add", "README.md"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git"] + args, cwd=proj, env=env, check=True)

    script = {"conversations": [
        {"match": token, "steps": [
            {"tool": tool, "args": json.loads(json.dumps(args).replace("{proj}", proj))}
            for tool, args, _ in calls] + [{"text": token + " finished"}]}
        for token, _, calls in CONVERSATIONS + RUN_AUTO + LATE]}
    with open(os.path.join(out, "script.json"), "w") as f:
        json.dump(script, f, indent=1)
    mock = subprocess.Popen([sys.executable, MOCK, os.path.join(out, "script.json"),
                             os.path.join(out, "mock-log.jsonl")],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = mock.stdout.readline()
        if not line.startswith("PORT "):
            fail("the mock model did not start: %r" % line)
        with open(os.path.join(proj, "opencode.json"), "w") as f:
            json.dump(config(int(line.split()[1])), f, indent=2)

        run = {"sessions": {}, "asked": []}
        for convs in (CONVERSATIONS, RUN_AUTO, LATE):
            part = run_auto(bin_, proj, env, convs) if convs is RUN_AUTO else \
                serve(bin_, proj, env, convs)
            run["sessions"].update(part["sessions"])
            run["asked"].extend(part["asked"])
    finally:
        mock.kill()
        mock.wait()
    db = os.path.join(out, "home", ".local", "share", "opencode", "opencode.db")
    run["wal_only"] = wal_only(db, out)
    run["proj"] = proj
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(run, f, indent=1)
    print(json.dumps(run))


def serve(bin_, proj, env, convs):
    """One `opencode serve` running `convs`, then killed with SIGKILL."""
    server = subprocess.Popen([bin_, "serve", "--pure", "--port", "0",
                               "--hostname", "127.0.0.1"],
                              cwd=proj, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    try:
        base = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            if "listening on " in line:
                base = line.split("listening on ", 1)[1].strip()
                break
        if not base:
            fail("opencode serve did not say where it listens")
        q = "?directory=" + urllib.request.quote(proj)
        return drive(base, q, convs)
    finally:
        # SIGKILL: no checkpoint at exit, so recent writes stay in the WAL.
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        server.wait()


def run_auto(bin_, proj, env, convs):
    """Each conversation through `opencode run --pure --auto`, as a script or CI runs
    OpenCode: every ask is approved by the run command itself. It exits normally (its
    writes are checkpointed), before the LATE server opens the database."""
    db = os.path.join(env["HOME"], ".local", "share", "opencode", "opencode.db")
    sessions = {}
    for token, agent, _ in convs:
        before = session_ids(db)
        r = subprocess.run([bin_, "run", "--pure", "--auto", "--agent", agent, token + " now"],
                           cwd=proj, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        if r.returncode != 0:
            fail("opencode run failed (%d): %s" % (r.returncode, r.stderr[-2000:]))
        new = sorted(session_ids(db) - before)
        if len(new) != 1:
            fail("opencode run made %d sessions: %r" % (len(new), new))
        sessions[token] = new[0]
    return {"sessions": sessions, "asked": []}


def session_ids(db):
    """The session ids in the database, read from a copy."""
    import shutil
    import sqlite3
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for f in ("", "-wal", "-shm"):
            if os.path.exists(db + f):
                shutil.copyfile(db + f, os.path.join(d, "opencode.db" + f))
        c = sqlite3.connect(os.path.join(d, "opencode.db"))
        try:
            return {r[0] for r in c.execute("select id from session")}
        finally:
            c.close()


def wal_only(db, out):
    """The callIDs of tool parts in the database with its WAL but not in the main file
    alone (both read from copies, so the originals stay as OpenCode left them)."""
    import shutil
    import sqlite3
    import tempfile

    def calls(files):
        with tempfile.TemporaryDirectory(dir=out) as d:
            for f in files:
                shutil.copyfile(db + f, os.path.join(d, "opencode.db" + f))
            c = sqlite3.connect("file:%s?mode=ro" % os.path.join(d, "opencode.db"), uri=True)
            try:
                return {r[0] for r in c.execute(
                    "select json_extract(data, '$.callID') from part "
                    "where json_extract(data, '$.type') = 'tool'")}
            finally:
                c.close()
    return sorted(calls(["", "-wal", "-shm"]) - calls([""]))


def drive(base, q, convs):
    """Run every conversation; answer asks as scripted. Returns what happened."""
    # The replies, in the order the asks come (one ask per call that asks).
    replies = {}
    for token, _, calls in convs:
        replies[token] = [r for _, _, r in calls if r is not None]
    asked = []  # (session, permission, patterns, reply)
    idle = {}
    current = {"token": None, "session": None}
    lock = threading.Lock()
    stop = threading.Event()

    def events():
        req = urllib.request.Request(base + "/event" + q)
        with urllib.request.urlopen(req, timeout=300) as r:
            for raw in r:
                if stop.is_set():
                    return
                raw = raw.decode("utf-8", "replace").strip()
                if not raw.startswith("data:"):
                    continue
                try:
                    ev = json.loads(raw[5:])
                except ValueError:
                    continue
                t, props = ev.get("type"), ev.get("properties") or {}
                if t == "permission.asked":
                    with lock:
                        token = current["token"]
                        pending = replies.get(token) or []
                        reply = pending.pop(0) if pending else "reject"
                        asked.append({"conversation": token,
                                      "session": props.get("sessionID"),
                                      "permission": props.get("permission"),
                                      "patterns": props.get("patterns"),
                                      "reply": reply})
                    http("POST", base + "/permission/%s/reply%s" % (props["id"], q),
                         {"reply": reply})
                elif t == "session.status":
                    st = (props.get("status") or {}).get("type")
                    if st == "idle":
                        with lock:
                            idle[props.get("sessionID")] = True

    th = threading.Thread(target=events, daemon=True)
    th.start()
    time.sleep(1)
    sessions = {}
    for token, agent, _ in convs:
        s = http("POST", base + "/session" + q, {})
        sid = s["id"]
        sessions[token] = sid
        with lock:
            current["token"], current["session"] = token, sid
            idle.pop(sid, None)
        http("POST", base + "/session/%s/prompt_async%s" % (sid, q),
             {"agent": agent, "parts": [{"type": "text", "text": token + " now"}]})
        deadline = time.time() + 120
        while time.time() < deadline:
            time.sleep(0.3)
            with lock:
                if idle.get(sid):
                    break
        else:
            fail("session %s (%s) did not finish" % (sid, token))
    stop.set()
    return {"sessions": sessions, "asked": asked}


if __name__ == "__main__":
    main()
