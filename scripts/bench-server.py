#!/usr/bin/env python3
"""Benchmark of `permaudit server` (issue 21: a change to a 1,000-rule config should get its
diagnostics in under 50 ms). The server is driven over JSON-RPC as an editor drives it; each
change is timed from the didChange sent to the publishDiagnostics of that file received.
Three workloads of RULES rules (default 1000), CHANGES changes each (default 20):

- edit: scripts/bench/gen_config.py's config (the one scripts/bench-check.sh times), and
  each change turns one rule's action into another (a different rule each time): what a
  person typing does.
- pattern: the same config, and each change types one character into one rule's pattern
  (`src/m3*` → `src/m3x0*`): every ruleset holding that rule is analysed anew.
- rewrite: a bash-only config of RULES rules, a third of them denies and a third asks,
  replaced by a wholly different one at every change (nothing can be reused; the costliest
  case for always-overrides-deny).
- real: the largest real config of tests/real/ (mgajewskik, ~430 rules, ~390 of them bash
  patterns shared by every agent; issue 23), each change flipping one rule's action.

Prints the median and the slowest per workload, the server's CPU time per change (user +
system, from /proc), and `permaudit check` on the same config
(whole process) for the ratio. With BASELINE (another build of permaudit), runs it on the
same inputs in the same run and prints the ratio baseline/ours.

    python3 scripts/bench-server.py [BIN] [RULES] [CHANGES] [BASELINE]

WORKLOADS=edit (or pattern, rewrite, or a comma-separated list) runs only those (for a
profiler).
"""
import json, os, random, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
import gen_config  # noqa: E402

bin_ = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/permaudit")
rules = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
changes = int(sys.argv[3]) if len(sys.argv) > 3 else 20
baseline = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None


def rewrite_config(seed):
    random.seed(seed)
    words = ["git", "npm", "cargo", "ls", "rm", "curl", "docker", "make", "python", "node"]
    subs = ["status", "push", "log", "diff", "run", "build", "test", "install", "apply", "get"]
    bash = {f"{random.choice(words)} {random.choice(subs)} {i} *": random.choice(["allow", "ask", "deny"]) for i in range(rules)}
    return json.dumps({"permission": {"bash": bash, "edit": {"*": "ask", "src/**": "allow", "tests/**": "deny"}}}, indent=2)


def pattern_texts():
    """Each change types one character into one rule's pattern (a different rule each time)."""
    cfg = gen_config.config(rules)
    random.seed(2)
    texts = [json.dumps(cfg, indent=1)]
    for k in range(changes):
        p = random.choice(list(cfg["permission"]))
        block = cfg["permission"][p]
        old = random.choice(list(block))
        typed = old.replace("*", f"x{k}*", 1) if "*" in old else old + "x"
        cfg["permission"][p] = {(typed if key == old else key): v for key, v in block.items()}
        texts.append(json.dumps(cfg, indent=1))
    return texts


def edit_texts():
    cfg = gen_config.config(rules)
    places = [(p, k) for p, block in cfg["permission"].items() for k in block]
    random.seed(1)
    texts = [json.dumps(cfg, indent=1)]
    for _ in range(changes):
        p, k = random.choice(places)
        old = cfg["permission"][p][k]
        cfg["permission"][p][k] = random.choice([a for a in ["allow", "ask", "deny"] if a != old])
        texts.append(json.dumps(cfg, indent=1))
    return texts


class Server:
    def __init__(self, binary, proj, home, uri):
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home}
        self.p = subprocess.Popen([binary, "-C", proj, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.uri = uri
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": "file://" + proj, "capabilities": {}}})
        while self.recv().get("id") != 1:
            pass
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def recv(self):
        n = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("server exited")
            line = line.strip()
            if not line:
                break
            if line.startswith(b"Content-Length:"):
                n = int(line.split(b":")[1])
        return json.loads(self.p.stdout.read(n))

    def diagnostics(self):
        while True:
            m = self.recv()
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == self.uri:
                return m

    def close(self):
        self.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
        self.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        self.p.stdin.close()
        self.p.stdout.read()  # what is still queued (diagnostics of other files, the shutdown answer)
        self.p.wait(timeout=30)


def real_texts():
    """The largest real config of tests/real/ (issue 23), each change flipping one rule's
    action (a different rule each time), in the top-level block or an agent's."""
    cfg = json.load(open(REAL_CONFIG))
    blocks = [cfg["permission"]] + [a["permission"] for a in cfg.get("agent", {}).values() if isinstance(a.get("permission"), dict)]
    places = [(b, p, k) for b in blocks for p, v in b.items() if isinstance(v, dict) for k in v]
    random.seed(3)
    texts = [json.dumps(cfg, indent=2)]
    for _ in range(changes):
        b, p, k = random.choice(places)
        old = b[p][k]
        b[p][k] = random.choice([a for a in ["allow", "ask", "deny"] if a != old])
        texts.append(json.dumps(cfg, indent=2))
    return texts


REAL_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "real", "mgajewskik__opencode-config", "home", ".config", "opencode", "opencode.json")


def run(binary, texts, beside=None):
    """Median and slowest ms per change, and check's whole-process ms on the first text.
    `beside`: a directory whose files the config references, copied next to it."""
    tmp = tempfile.mkdtemp()
    proj, home = os.path.join(tmp, "project"), os.path.join(tmp, "home")
    if beside:
        shutil.copytree(beside, proj)
    else:
        os.makedirs(proj)
    os.makedirs(home)
    subprocess.run(["git", "init", "-q", proj], check=True)
    path = os.path.join(proj, "opencode.json")
    open(path, "w").write(texts[0])
    s = Server(binary, proj, home, "file://" + path)
    s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": s.uri, "languageId": "json", "version": 1, "text": texts[0]}}})
    s.diagnostics()
    cpu0 = cpu_seconds(s.p.pid)
    times = []
    for k, text in enumerate(texts[1:]):
        t0 = time.perf_counter()
        s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": s.uri, "version": k + 2}, "contentChanges": [{"text": text}]}})
        s.diagnostics()
        times.append((time.perf_counter() - t0) * 1000)
    cpu = (cpu_seconds(s.p.pid) - cpu0) * 1000 / len(times)
    s.close()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home}
    t0 = time.perf_counter()
    subprocess.run([binary, "-C", proj, "check", "--format", "concise", "--fail-on", "never"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return statistics.median(times), max(times), (time.perf_counter() - t0) * 1000, cpu


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (steadier than wall time on a busy machine)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


workloads = os.environ.get("WORKLOADS", "edit,pattern,rewrite,real").split(",")
for name, make in [("edit", edit_texts), ("pattern", pattern_texts), ("rewrite", lambda: [rewrite_config(k) for k in range(changes + 1)]), ("real", real_texts)]:
    if name not in workloads:
        continue
    texts = make()
    beside = os.path.dirname(REAL_CONFIG) if name == "real" else None
    size = "mgajewskik" if name == "real" else f"{rules} rules"
    med, slow, check, cpu = run(bin_, texts, beside)
    line = f"{name:8} {size}: diagnostics {med:.0f} ms after a change (median of {changes}; slowest {slow:.0f} ms; server CPU {cpu:.0f} ms a change), target 50 ms: {med / 50:.2f}x; check, whole process: {check:.0f} ms"
    if baseline:
        bmed, bslow, bcheck, bcpu = run(baseline, texts, beside)
        line += f"; baseline {bmed:.0f} ms (slowest {bslow:.0f}; CPU {bcpu:.0f}), baseline/ours {bmed / med:.2f}x"
    print(line)
