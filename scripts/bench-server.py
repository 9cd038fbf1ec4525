#!/usr/bin/env python3
"""Benchmark of `permaudit server` (issue 21: a change to a 1,000-rule config should get its
diagnostics in under 50 ms): a generated project with RULES bash rules (default 1000), the
server driven over JSON-RPC as an editor drives it, CHANGES full-text changes (default 20)
each timed from the didChange sent to the publishDiagnostics of that file received.
Prints the median and the slowest, and the same config's `permaudit check` run for the
ratio (the server re-does check's work per change; no incremental analysis yet).

    python3 scripts/bench-server.py [BIN] [RULES] [CHANGES]
"""
import json, os, random, statistics, subprocess, sys, tempfile, time

bin_ = sys.argv[1] if len(sys.argv) > 1 else "target/release/permaudit"
rules = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
changes = int(sys.argv[3]) if len(sys.argv) > 3 else 20
bin_ = os.path.abspath(bin_)

def config(seed):
    random.seed(seed)
    words = ["git", "npm", "cargo", "ls", "rm", "curl", "docker", "make", "python", "node"]
    subs = ["status", "push", "log", "diff", "run", "build", "test", "install", "apply", "get"]
    bash = {f"{random.choice(words)} {random.choice(subs)} {i} *": random.choice(["allow", "ask", "deny"]) for i in range(rules)}
    return json.dumps({"permission": {"bash": bash, "edit": {"*": "ask", "src/**": "allow", "tests/**": "deny"}}}, indent=2)

tmp = tempfile.mkdtemp()
proj, home = os.path.join(tmp, "project"), os.path.join(tmp, "home")
os.makedirs(proj); os.makedirs(home)
subprocess.run(["git", "init", "-q", proj], check=True)
path = os.path.join(proj, "opencode.json")
open(path, "w").write(config(0))
uri = "file://" + path
env = {"PATH": os.environ.get("PATH", ""), "HOME": home}
p = subprocess.Popen([bin_, "-C", proj, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

def send(msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()

def recv():
    n = None
    while True:
        line = p.stdout.readline()
        if not line:
            sys.exit("server exited")
        line = line.strip()
        if not line:
            break
        if line.startswith(b"Content-Length:"):
            n = int(line.split(b":")[1])
    return json.loads(p.stdout.read(n))

def wait_diagnostics():
    while True:
        m = recv()
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
            return m

send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": "file://" + proj, "capabilities": {}}})
while recv().get("id") != 1:
    pass
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": config(0)}}})
wait_diagnostics()
times = []
for k in range(changes):
    text = config(k + 1)
    t0 = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": k + 2}, "contentChanges": [{"text": text}]}})
    wait_diagnostics()
    times.append((time.perf_counter() - t0) * 1000)
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
send({"jsonrpc": "2.0", "method": "exit", "params": None})
p.stdin.close()
p.stdout.read()  # what is still queued (diagnostics of other files, the shutdown answer)
p.wait(timeout=30)
t0 = time.perf_counter()
subprocess.run([bin_, "-C", proj, "check", "--format", "concise", "--fail-on", "never"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
check_ms = (time.perf_counter() - t0) * 1000
med = statistics.median(times)
print(f"server, {rules} rules: diagnostics {med:.0f} ms after a change (median of {changes}; slowest {max(times):.0f} ms); target 50 ms: {med / 50:.2f}x")
print(f"permaudit check on the same config, whole process: {check_ms:.0f} ms (server/check = {med / check_ms:.2f})")
