#!/usr/bin/env python3
"""A synthetic OpenCode 1.18.34 history for benchmarking `permaudit history` and `suggest`
(stdlib only: sqlite3).

Usage: history_db.py OUT.db PROJECT_DIR [CALLS]

Writes OUT.db with the tables and columns permaudit reads (session: id, parent_id,
directory, agent, permission; message: id, data; part: id, session_id, message_id,
time_created, data) holding CALLS tool calls (default 100,000) of the shapes OpenCode
records (bash, read, edit, glob, grep; completed, and rejected or denied for `rm`, `curl`,
`kubectl` and `docker` commands), spread over sessions
run in PROJECT_DIR, one in ten a subagent's and one in twenty an `opencode run` session.
Deterministic (a fixed seed)."""
import json
import random
import sqlite3
import sys

RUN_RULES = json.dumps([{"permission": p, "pattern": "*", "action": "deny"}
                        for p in ("question", "plan_enter", "plan_exit")])
COMMANDS = [
    "git status", "git status --short", "git log --oneline -{n}", "git diff --stat",
    "git diff HEAD~{n}", "npm test", "npm test -- --grep case{n}", "npm run build",
    "npm run lint", "cargo build", "cargo test -p crate{n}", "cargo clippy",
    "ls -la src/dir{n}", "cat src/file{n}.ts", "grep -rn TODO src/dir{n}", "pwd",
    "make build", "make test", "python3 -m pytest tests/test_{n}.py", "echo done{n}",
    "rm -rf build/tmp{n}", "docker ps", "kubectl get pods -n ns{n}", "go test ./pkg{n}/...",
    "pnpm install", "yarn test", "node scripts/gen{n}.js", "curl -s localhost:{n}",
    "ls && git status", "npm test && npm run lint",
]


def main():
    out, proj = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    rnd = random.Random(47)
    c = sqlite3.connect(out)
    c.executescript("""
        DROP TABLE IF EXISTS session; DROP TABLE IF EXISTS message; DROP TABLE IF EXISTS part;
        CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL,
                              agent TEXT, permission TEXT);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, message_id TEXT NOT NULL,
                           time_created INTEGER NOT NULL, data TEXT NOT NULL);
    """)
    per_session = 50
    sessions = []
    for s in range(calls // per_session + 1):
        sid = "ses_%06d" % s
        parent = sessions[-1][0] if s % 10 == 9 and sessions else None
        perm = RUN_RULES if s % 20 == 7 and parent is None else None
        agent = "general" if parent else ("plan" if s % 7 == 3 else "build")
        sessions.append((sid, parent, proj, agent, perm))
    c.executemany("INSERT INTO session VALUES (?,?,?,?,?)", sessions)
    t = 1_780_000_000_000
    parts, messages = [], []
    for i in range(calls):
        sid, _, _, agent, _ = sessions[i // per_session]
        mid = "msg_%07d" % (i // 5)
        if i % 5 == 0:
            messages.append((mid, sid, json.dumps({"role": "assistant", "agent": agent})))
        r = rnd.random()
        n = rnd.randint(1, 40)
        if r < 0.7:
            tool, inp = "bash", {"command": rnd.choice(COMMANDS).format(n=n), "description": "d"}
        elif r < 0.85:
            tool, inp = "read", {"filePath": "%s/src/file%d.ts" % (proj, n)}
        elif r < 0.95:
            tool, inp = "edit", {"filePath": "%s/src/file%d.ts" % (proj, n),
                                 "oldString": "a", "newString": "b"}
        else:
            tool, inp = rnd.choice([("glob", {"pattern": "**/*.ts"}), ("grep", {"pattern": "TODO"})])
        q = rnd.random()
        # Rejected and denied calls where people and rules refuse them: `rm`, the network,
        # the cluster; the rest ran.
        cmd = inp.get("command", "")
        refusable = cmd.startswith(("rm ", "curl ", "kubectl ", "docker "))
        if not refusable or q < 0.5:
            state = {"status": "completed", "input": inp, "output": "x" * 200,
                     "time": {"start": t, "end": t + 5}}
        elif q < 0.75:
            state = {"status": "error", "input": inp,
                     "error": "The user rejected permission to use this specific tool call."}
        else:
            state = {"status": "error", "input": inp,
                     "error": "The user has specified a rule which prevents you from using this specific tool call."}
        data = {"type": "tool", "tool": tool, "callID": "call_%07d" % i, "state": state}
        parts.append(("prt_%07d" % i, sid, mid, t, json.dumps(data)))
        t += 1000
    c.executemany("INSERT INTO message VALUES (?,?,?)", messages)
    c.executemany("INSERT INTO part VALUES (?,?,?,?,?)", parts)
    c.commit()
    c.close()


if __name__ == "__main__":
    main()
