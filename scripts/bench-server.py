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

- completion: completion requests on the largest real config, after its first analysis
  (issue 48), at a permission key and inside a pattern's value, each timed from the request
  to its answer.

- burst: 30 keystrokes 2 ms apart (typing 30 characters into one rule's pattern, a valid
  config at every keystroke), timed from the LAST keystroke to the diagnostics of the last
  version (issue 34: within 100 ms on the largest real config, 1 s on 5,000 rules); on the
  largest config of ../shared/corpus/ (BURST_CASE, default r041: the most rules held by
  agents, 691 written, 4,837 in rulesets) when it is there, and on a 5,000-rule generated
  file (BURST_RULES). Each burst is repeated CHANGES/4 times (at least 3; with BASELINE the
  two builds take turns, two bursts each); median and slowest, the server's CPU time per
  burst, and how many publishes the server sent for the file per burst.

Prints the median and the slowest per workload, the server's CPU time per change (user +
system, from /proc), and `permaudit check` on the same config
(whole process) for the ratio. With BASELINE (another build of permaudit), runs it on the
same inputs in the same run and prints the ratio baseline/ours.

    python3 scripts/bench-server.py [BIN] [RULES] [CHANGES] [BASELINE]

WORKLOADS=edit (or pattern, rewrite, or a comma-separated list) runs only those (for a
profiler).
"""
import json, os, queue, random, shutil, statistics, subprocess, sys, tempfile, threading, time

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
        # PERMAUDIT_SERVER_TIMES=1: the server prints where each analysis' time goes.
        env.update({k: v for k, v in os.environ.items() if k == "PERMAUDIT_SERVER_TIMES"})
        self.p = subprocess.Popen([binary, "-C", proj, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.uri = uri
        self.inbox = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": "file://" + proj, "capabilities": {}}})
        while self.recv().get("id") != 1:
            pass
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read(self):
        """The server's messages, as they arrive (a thread: an editor reads while it writes,
        or both sides block on full pipes), each with the time it was received."""
        while True:
            n = None
            while True:
                line = self.p.stdout.readline()
                if not line:
                    self.inbox.put((time.perf_counter(), None))
                    return
                line = line.strip()
                if not line:
                    break
                if line.startswith(b"Content-Length:"):
                    n = int(line.split(b":")[1])
            self.inbox.put((time.perf_counter(), json.loads(self.p.stdout.read(n))))

    def recv_timed(self):
        at, m = self.inbox.get()
        if m is None:
            sys.exit("server exited")
        return at, m

    def recv(self):
        return self.recv_timed()[1]

    def diagnostics(self):
        while True:
            m = self.recv()
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == self.uri:
                return m

    def close(self):
        self.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
        self.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        self.p.stdin.close()
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


CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus", "cases")


def burst_texts(text, keys=30):
    """`text` and the texts after each of `keys` keystrokes typed at the end of the first rule
    pattern found (inside a JSON string: every text is a valid config)."""
    cfg = json.loads(text)
    blocks = [b for b in cfg["permission"].values() if isinstance(b, dict)]
    key = next(k for b in blocks for k in b if k not in ("*",))
    at = text.index(json.dumps(key)) + len(json.dumps(key)) - 1
    typed = "zqwxjvkbyfmpgh" * 3
    return [text] + [text[:at] + typed[:n] + text[at:] for n in range(1, keys + 1)]


def run_burst(binary, texts, home_src=None, proj_src=None, rel=None, bursts=3):
    """Per burst: ms from the last keystroke to the diagnostics of the last version, and the
    publishes received for the file."""
    tmp = tempfile.mkdtemp()
    proj, home = os.path.join(tmp, "project"), os.path.join(tmp, "home")
    shutil.copytree(proj_src, proj) if proj_src and os.path.isdir(proj_src) else os.makedirs(proj)
    shutil.copytree(home_src, home) if home_src and os.path.isdir(home_src) else os.makedirs(home)
    subprocess.run(["git", "init", "-q", proj], check=True)
    path = os.path.join(tmp, rel) if rel else os.path.join(proj, "opencode.json")
    open(path, "w").write(texts[0])
    s = Server(binary, proj, home, "file://" + path)
    version = 1
    s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": s.uri, "languageId": "json", "version": version, "text": texts[0]}}})
    # A build that publishes versions is timed to the publish of the last one; one that does
    # not (0ca2442) answers messages in order, so a request sent after the last keystroke is
    # answered after its last analysis: the last publish before that answer is the final one.
    versioned = s.diagnostics()["params"].get("version") is not None
    out = []
    for b in range(bursts):
        seq = texts[1:] if b % 2 == 0 else list(reversed(texts[:-1]))
        cpu0 = cpu_seconds(s.p.pid)
        for text in seq:
            version += 1
            s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": s.uri, "version": version}, "contentChanges": [{"text": text}]}})
            last = time.perf_counter()
            time.sleep(0.002)
        publishes, done = 0, None
        if not versioned:
            s.send({"jsonrpc": "2.0", "id": 1000 + b, "method": "textDocument/hover", "params": {"textDocument": {"uri": s.uri}, "position": {"line": 0, "character": 0}}})
        while True:
            at, m = s.recv_timed()
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == s.uri:
                publishes += 1
                done = at
                if versioned and m["params"].get("version") == version:
                    break
            elif not versioned and m.get("id") == 1000 + b:
                break
        out.append(((done - last) * 1000, publishes, (cpu_seconds(s.p.pid) - cpu0) * 1000))
    s.close()
    return out


def burst_line(label, texts, **kw):
    bursts = max(3, changes // 4)
    # Ours and the baseline take turns (a server each, two bursts a turn): on a shared
    # machine the load changes by the minute, and both see the same.
    ours, theirs = [], []
    for _ in range((bursts + 1) // 2):
        ours += run_burst(bin_, texts, bursts=2, **kw)
        if baseline:
            theirs += run_burst(baseline, texts, bursts=2, **kw)
    med = statistics.median(t for t, _, _ in ours)
    cpu = statistics.median(c for _, _, c in ours)
    line = f"burst    {label}: diagnostics {med:.0f} ms after the last of 30 keystrokes 2 ms apart (median of {len(ours)}; slowest {max(t for t, _, _ in ours):.0f} ms; server CPU {cpu:.0f} ms a burst; publishes per burst {max(p for _, p, _ in ours)})"
    if baseline:
        bmed = statistics.median(t for t, _, _ in theirs)
        bcpu = statistics.median(c for _, _, c in theirs)
        line += f"; baseline {bmed:.0f} ms (slowest {max(t for t, _, _ in theirs):.0f}; CPU {bcpu:.0f}; publishes {max(p for _, p, _ in theirs)}), baseline/ours {bmed / med:.2f}x"
    print(line, flush=True)


def burst():
    case = os.path.join(CORPUS, os.environ.get("BURST_CASE", "r041"))
    if os.path.isdir(case):
        configs = [os.path.join(r, f) for r, _, fs in os.walk(case) for f in fs if f in ("opencode.json", "opencode.jsonc")]
        path = max(configs, key=os.path.getsize)
        rel = os.path.relpath(path, case).replace("proj" + os.sep, "project" + os.sep, 1)
        burst_line(os.path.basename(case), burst_texts(open(path).read()), home_src=os.path.join(case, "home"), proj_src=os.path.join(case, "proj"), rel=rel)
    n = int(os.environ.get("BURST_RULES", "5000"))
    burst_line(f"{n} rules", burst_texts(json.dumps(gen_config.config(n), indent=1)))


def completion(binary, requests=50):
    """Completion on the largest real config (issue 48): the time from the request to its
    answer, after the first analysis, at a permission key of the top-level block and inside
    the last pattern value `"deny"`; median and slowest of REQUESTS each."""
    text = json.dumps(json.load(open(REAL_CONFIG)), indent=2)
    tmp = tempfile.mkdtemp()
    proj, home = os.path.join(tmp, "project"), os.path.join(tmp, "home")
    shutil.copytree(os.path.dirname(REAL_CONFIG), proj)
    os.makedirs(home)
    path = os.path.join(proj, "opencode.json")
    open(path, "w").write(text)
    s = Server(binary, proj, home, "file://" + path)
    s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": s.uri, "languageId": "json", "version": 1, "text": text}}})
    s.diagnostics()
    block = text.index('"permission": {')
    places = {"key": text.index('"', block + len('"permission": {')) + 1, "value": text.rindex(': "deny"') + 3}
    out = []
    for name, at in places.items():
        before = text[:at]
        pos = {"line": before.count("\n"), "character": len(before) - (before.rfind("\n") + 1)}
        times, labels = [], None
        for k in range(requests):
            rid = 1000 + k
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "id": rid, "method": "textDocument/completion", "params": {"textDocument": {"uri": s.uri}, "position": pos}})
            while True:
                at_, m = s.recv_timed()
                if m.get("id") == rid:
                    break
            times.append((at_ - t0) * 1000)
            labels = [i["label"] for i in (m.get("result") or {}).get("items", [])]
        out.append(f"{name} ({len(labels)} items: {', '.join(labels[:3])}…) median {statistics.median(times):.2f} ms, slowest {max(times):.2f} ms")
    s.close()
    shutil.rmtree(tmp)
    print(f"completion mgajewskik ({len(text)} bytes): " + "; ".join(out))


workloads = os.environ.get("WORKLOADS", "edit,pattern,rewrite,real,burst,completion").split(",")
if "completion" in workloads:
    completion(bin_)
if "burst" in workloads:
    burst()
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
