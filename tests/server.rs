//! `permaudit server` driven over JSON-RPC as an editor drives it: initialize, open a config
//! with a shadowed deny (diagnostic `shadowed-deny` on the deny), hover on it, ask for code
//! actions (the fix offered is the edit `check --fix --unsafe-fixes` makes), edit the buffer
//! to the fixed order (diagnostic gone), malformed documents, unknown URIs and cancelled
//! requests (no crash), shutdown.

mod check_support;

use check_support::Tree;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next: i64,
    /// Notifications received while waiting for something else.
    notes: Vec<Value>,
    /// The version [`typed`] sent last (documents open at version 1).
    version: i32,
}

const WAIT: Duration = Duration::from_secs(30);

impl Client {
    fn start(t: &Tree) -> Client {
        Client::start_in(t, &t.project())
    }

    /// The server started in `dir` (`-C`), the editor's working directory.
    fn start_in(t: &Tree, dir: &std::path::Path) -> Client {
        Client::start_with(t, dir, &[])
    }

    /// The same with more arguments after `server`.
    fn start_with(t: &Tree, dir: &std::path::Path, more: &[&str]) -> Client {
        let root = t.root();
        let mut child = Command::new(env!("CARGO_BIN_EXE_permaudit"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", root.join("managed"))
            .arg("-C")
            .arg(dir)
            .arg("server")
            .args(more)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut buf = vec![0; len.expect("a Content-Length header")];
                if r.read_exact(&mut buf).is_err() {
                    return;
                }
                if tx.send(serde_json::from_slice(&buf).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            rx,
            next: 1,
            notes: Vec::new(),
            version: 1,
        }
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let start = Instant::now();
        loop {
            let left = WAIT.saturating_sub(start.elapsed());
            match self.rx.recv_timeout(left) {
                Ok(v) if v["id"] == json!(id) && v.get("method").is_none() => return v,
                Ok(v) => self.notes.push(v),
                Err(RecvTimeoutError::Timeout) => panic!("no answer to {method}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server died during {method}"),
            }
        }
    }

    /// The first message (received or to come) that satisfies `want`, taken.
    fn message(&mut self, want: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            if let Some(k) = self.notes.iter().position(&want) {
                return self.notes.remove(k);
            }
            let left = WAIT.saturating_sub(start.elapsed());
            match self.rx.recv_timeout(left) {
                Ok(v) => self.notes.push(v),
                Err(_) => panic!("no such message: {:#?}", self.notes),
            }
        }
    }

    /// The next diagnostics published for `uri` that satisfy `want`.
    fn diagnostics(&mut self, uri: &str, want: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        let matches = |v: &Value| {
            v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri
        };
        loop {
            if let Some(k) = self
                .notes
                .iter()
                .position(|v| matches(v) && want(v["params"]["diagnostics"].as_array().unwrap()))
            {
                let v = self.notes.remove(k);
                self.notes.retain(|n| !matches(n));
                return v["params"]["diagnostics"].as_array().unwrap().clone();
            }
            let left = WAIT.saturating_sub(start.elapsed());
            match self.rx.recv_timeout(left) {
                Ok(v) => self.notes.push(v),
                Err(_) => panic!("no diagnostics as wanted for {uri}: {:#?}", self.notes),
            }
        }
    }
}

/// `shutdown`, then `exit`: the server answers and exits with success.
fn shutdown(mut c: Client) {
    let s = c.request("shutdown", Value::Null);
    assert!(s["error"].is_null(), "{s}");
    c.notify("exit", Value::Null);
    assert!(c.child.wait().unwrap().success());
}

fn uri(path: &std::path::Path) -> String {
    format!("file://{}", path.display())
}

const SHADOWED: &str = "{\n  \"permission\": {\n    \"edit\": {\n      \"tests/**\": \"deny\",\n      \"*\": \"allow\"\n    }\n  }\n}\n";
const FIXED: &str = "{\n  \"permission\": {\n    \"edit\": {\n      \"*\": \"allow\",\n      \"tests/**\": \"deny\"\n    }\n  }\n}\n";

/// Apply LSP text edits (single-line ASCII ranges suffice here) to a text.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let ch = p["character"].as_u64().unwrap() as usize;
        text.split_inclusive('\n')
            .take(line)
            .map(str::len)
            .sum::<usize>()
            + ch
    };
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort();
    let mut out = String::new();
    let mut at = 0;
    for (s, e, t) in spans {
        out.push_str(&text[at..s]);
        out.push_str(&t);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

#[test]
fn an_editor_session() {
    let t = Tree::new().file("project/opencode.json", SHADOWED);
    let file = t.project().join("opencode.json");
    let u = uri(&file);
    let mut c = Client::start(&t);
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.project()), "capabilities": {}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["hoverProvider"], true,
        "{init}"
    );
    c.notify("initialized", json!({}));

    // Open: the deny is reported where it is written.
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "json", "version": 1, "text": SHADOWED}}),
    );
    let d = c.diagnostics(&u, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));
    let deny = d.iter().find(|x| x["code"] == "shadowed-deny").unwrap();
    assert_eq!(
        deny["range"],
        json!({"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 16}}),
        "{deny:#}"
    );
    assert!(
        deny["message"].as_str().unwrap().contains("e.g. edit"),
        "{deny:#}"
    );
    assert!(deny["relatedInformation"].is_array(), "{deny:#}");

    // Hover on the deny names the agents whose rulesets hold it and the finding.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 3, "character": 9}}),
    );
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("build") && text.contains("shadowed-deny"),
        "{h:#}"
    );
    // Per agent: the deny decides nothing, and the rule that decides instead is named.
    assert!(
        text.contains("decides nothing")
            && text.contains("`edit` \"*\" allow at opencode.json:5:7)"),
        "{text}"
    );
    // What `**` really means there.
    assert!(text.contains("not a globstar"), "{text}");
    // On the permission key: which tools check it.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 2, "character": 6}}),
    );
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("permission `edit`") && text.contains("apply_patch"),
        "{h:#}"
    );
    // On the catch-all: it decides something for every agent that holds it.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 4, "character": 7}}),
    );
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("decides e.g. edit"), "{text}");

    // The code action's edit is the one `check --fix --unsafe-fixes` makes.
    let a = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u},
               "range": {"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 16}},
               "context": {"diagnostics": [deny]}}),
    );
    let actions = a["result"].as_array().unwrap();
    let fix = actions
        .iter()
        .find(|x| x["title"].as_str().unwrap().contains("permaudit: move the"))
        .unwrap_or_else(|| panic!("no fix offered: {a:#}"));
    let edits = fix["edit"]["changes"][&u].as_array().unwrap();
    let fixed = apply(SHADOWED, edits);
    let copy = Tree::new().file("project/opencode.json", SHADOWED);
    let run = copy.run(&["check", "--fix", "--unsafe-fixes"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let by_check = std::fs::read_to_string(copy.project().join("opencode.json")).unwrap();
    assert_eq!(fixed, by_check, "the code action and check --fix disagree");
    assert_eq!(fixed, FIXED);
    assert!(
        actions.iter().any(|x| x["title"]
            .as_str()
            .unwrap()
            .contains("ignore `shadowed-deny`")),
        "{a:#}"
    );

    // Edit the buffer to the fixed order: the diagnostic goes.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"text": FIXED}]}),
    );
    c.diagnostics(&u, |d| !d.iter().any(|x| x["code"] == "shadowed-deny"));

    // A malformed buffer: OpenCode's refusal as a diagnostic, the server alive.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 3}, "contentChanges": [{"text": "{\"permission\": "}]}),
    );
    let d = c.diagnostics(&u, |d| d.iter().any(|x| x["code"] == "refused"));
    assert_eq!(d[0]["severity"], 1);
    // Unknown URIs, a cancelled request, an unknown method: answered, no crash.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere/x.json"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(h["result"].is_null(), "{h}");
    c.notify("$/cancelRequest", json!({"id": 99}));
    let bad = c.request("textDocument/hover", json!({"nonsense": true}));
    assert!(bad["error"].is_object(), "{bad}");
    let unknown = c.request("workspace/symbol", json!({"query": ""}));
    assert!(unknown["error"].is_object(), "{unknown}");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "untitled:1", "languageId": "json", "version": 1, "text": "{"}}),
    );
    // A burst of changes with a request cancelled in the middle: the request is answered
    // (its result, or RequestCancelled when the cancellation came before its turn), and
    // the diagnostics that follow are the last text's.
    for v in 10..20 {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": v}, "contentChanges": [{"text": SHADOWED}]}),
        );
    }
    let id = c.next;
    c.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": u}, "position": {"line": 3, "character": 9}}}),
    );
    c.notify("$/cancelRequest", json!({"id": id}));
    let answer = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}}),
    );
    assert!(answer["error"].is_null(), "{answer}");
    let cancelled = c
        .notes
        .iter()
        .find(|v| v["id"] == json!(id))
        .unwrap_or_else(|| panic!("the cancelled request was not answered: {:#?}", c.notes))
        .clone();
    assert!(
        cancelled["result"].is_object() || cancelled["error"]["code"] == -32800,
        "{cancelled}"
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 21}, "contentChanges": [{"text": "{\"permission\": "}]}),
    );
    c.diagnostics(&u, |d| d.iter().any(|x| x["code"] == "refused"));
    // Back to the fixed text, then shut down cleanly.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 4}, "contentChanges": [{"text": FIXED}]}),
    );
    c.diagnostics(&u, |d| !d.iter().any(|x| x["code"] == "refused"));
    let s = c.request("shutdown", Value::Null);
    assert!(s["error"].is_null(), "{s}");
    c.notify("exit", Value::Null);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// The publishDiagnostics notifications received so far (and in the next `wait`) for `uri`.
fn publishes(c: &mut Client, uri: &str, wait: Duration) -> Vec<Value> {
    let start = Instant::now();
    while let Some(left) = wait.checked_sub(start.elapsed()) {
        match c.rx.recv_timeout(left) {
            Ok(v) => c.notes.push(v),
            Err(_) => break,
        }
    }
    let (mine, rest): (Vec<Value>, Vec<Value>) = c.notes.drain(..).partition(|v| {
        v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri
    });
    c.notes = rest;
    mine
}

/// 30 keystrokes in a burst are analysed once, and the one publish is the last text's (with
/// its version); a file that is no config (a README, a package.json) re-checks nothing.
#[test]
fn a_burst_is_one_analysis_and_other_files_none() {
    let t = Tree::new()
        .file("project/opencode.json", SHADOWED)
        .file("project/README.md", "# hello\n")
        .file("project/package.json", "{}\n");
    let file = t.project().join("opencode.json");
    let u = uri(&file);
    let mut c = Client::start(&t);
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.project()), "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "json", "version": 1, "text": SHADOWED}}),
    );
    c.diagnostics(&u, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));
    publishes(&mut c, &u, Duration::from_millis(300));

    // 30 versions in one write, as a fast typist's editor queues them: every text but the
    // last has the shadowed deny (and some are broken JSON); the last is fixed.
    let mut burst = String::new();
    for v in 2..=31 {
        let text = if v == 31 {
            FIXED.to_string()
        } else if v % 3 == 0 {
            SHADOWED[..SHADOWED.len() - v as usize].to_string()
        } else {
            SHADOWED.replace("tests/**", &format!("tests{v}/**"))
        };
        let body = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": u, "version": v}, "contentChanges": [{"text": text}]}})
        .to_string();
        burst.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    }
    c.stdin.write_all(burst.as_bytes()).unwrap();
    c.stdin.flush().unwrap();
    let got = publishes(&mut c, &u, Duration::from_millis(1500));
    assert_eq!(got.len(), 1, "one publish for the burst: {got:#?}");
    assert_eq!(got[0]["params"]["version"], 31, "{got:#?}");
    let last = got[0]["params"]["diagnostics"].as_array().unwrap();
    assert!(
        !last
            .iter()
            .any(|x| x["code"] == "shadowed-deny" || x["code"] == "refused"),
        "{got:#?}"
    );

    // Files OpenCode does not read: opened and typed into, no analysis (no publish), and a
    // request is still answered.
    for (name, lang) in [("README.md", "markdown"), ("package.json", "json")] {
        let other = uri(&t.project().join(name));
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": other, "languageId": lang, "version": 1, "text": "x"}}),
        );
        for v in 2..6 {
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": other, "version": v}, "contentChanges": [{"text": format!("x{v}")}]}),
            );
        }
    }
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 3, "character": 9}}),
    );
    assert!(h["error"].is_null(), "{h}");
    std::thread::sleep(Duration::from_millis(300));
    let mut seen = std::mem::take(&mut c.notes);
    seen.extend(c.rx.try_iter());
    let published: Vec<&Value> = seen
        .iter()
        .filter(|v| v["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert!(
        published.is_empty(),
        "a non-config change re-checked: {published:#?}"
    );
    shutdown(c);
}

const AGENT: &str =
    "---\npermission:\n  edit:\n    \"tests/**\": deny\n    \"*\": allow\n---\nAn agent.\n";
const AGENT_FIXED: &str =
    "---\npermission:\n  edit:\n    \"*\": allow\n    \"tests/**\": deny\n---\nAn agent, fixed.\n";

fn open(c: &mut Client, path: &std::path::Path, lang: &str, text: &str) -> String {
    let u = uri(path);
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": lang, "version": 1, "text": text}}),
    );
    u
}

/// A new agent file not saved yet gets its diagnostics; a transient JSON error shows the
/// refusal at its place and keeps the other files' findings; a broken settings buffer shows
/// its error at its place; a file changed on disk outside the editor is re-checked.
#[test]
fn unsaved_files_settings_refusals_and_the_disk() {
    let t = Tree::new().file("project/opencode.json", SHADOWED);
    let p = t.project();
    let mut c = Client::start(&t);
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&p), "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    let config = open(&mut c, &p.join("opencode.json"), "json", SHADOWED);
    c.diagnostics(&config, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));

    // Not on disk: discovery finds it as OpenCode will once it is saved.
    let agent_path = p.join(".opencode/agents/new.md");
    let agent = open(&mut c, &agent_path, "markdown", AGENT);
    let d = c.diagnostics(&agent, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));
    let deny = d.iter().find(|x| x["code"] == "shadowed-deny").unwrap();
    assert_eq!(
        deny["range"]["start"],
        json!({"line": 3, "character": 4}),
        "{deny:#}"
    );
    assert!(!agent_path.exists());

    // A moment of broken JSON: the refusal in its file, the agent's findings kept.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": config, "version": 2}, "contentChanges": [{"text": "{\"permission\": "}]}),
    );
    c.diagnostics(&config, |d| d.iter().any(|x| x["code"] == "refused"));
    for v in publishes(&mut c, &agent, Duration::from_millis(500)) {
        let d = v["params"]["diagnostics"].as_array().unwrap();
        assert!(
            d.iter().any(|x| x["code"] == "shadowed-deny"),
            "the agent's findings went while another file was broken: {v:#}"
        );
    }
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": config, "version": 3}, "contentChanges": [{"text": SHADOWED}]}),
    );
    c.diagnostics(&config, |d| {
        d.iter().any(|x| x["code"] == "shadowed-deny") && !d.iter().any(|x| x["code"] == "refused")
    });

    // A broken settings buffer: its error where it is, as `check` reports it.
    let settings = open(
        &mut c,
        &p.join(".opencode/permaudit.jsonc"),
        "jsonc",
        "{\n  \"selectt\": []\n}\n",
    );
    let d = c.diagnostics(&settings, |d| d.iter().any(|x| x["code"] == "refused"));
    assert_eq!(d[0]["range"]["start"]["line"], 1, "{d:#?}");
    assert!(
        d[0]["message"].as_str().unwrap().contains("selectt"),
        "{d:#?}"
    );
    let copy = Tree::new().file("project/opencode.json", SHADOWED).file(
        "project/.opencode/permaudit.jsonc",
        "{\n  \"selectt\": []\n}\n",
    );
    let run = copy.run(&["check"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("permaudit.jsonc:2:3"), "{}", run.stderr);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": settings, "version": 2}, "contentChanges": [{"text": "{}\n"}]}),
    );
    c.diagnostics(&settings, |d| d.is_empty());

    // Outside the editor: a new agent file on disk, then fixed on disk.
    let disk = p.join(".opencode/agents/disk.md");
    std::fs::create_dir_all(disk.parent().unwrap()).unwrap();
    std::fs::write(&disk, AGENT).unwrap();
    let on_disk = uri(&disk);
    c.diagnostics(&on_disk, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));
    std::fs::write(&disk, AGENT_FIXED).unwrap();
    c.diagnostics(&on_disk, |d| {
        !d.iter().any(|x| x["code"] == "shadowed-deny")
    });

    shutdown(c);
}

/// An editor rooted in `/` that watches files for its servers: the server asks it to watch
/// the config files (`client/registerCapability`), roots itself where OpenCode would start
/// for the file opened (its git worktree), and re-checks on the client's file events sooner
/// than its own polling would. Hover on the catch-all that a shadowed deny lists names that
/// finding instead of "nothing wrong".
#[test]
fn rooted_from_the_file_and_watched_by_the_client() {
    let t = Tree::new().file("project/opencode.json", SHADOWED);
    let p = t.project();
    let mut c = Client::start_in(&t, std::path::Path::new("/"));
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": "file:///", "capabilities": {
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}
        }}),
    );
    c.notify("initialized", json!({}));
    let reg = c.message(|v| v["method"] == "client/registerCapability");
    let r = &reg["params"]["registrations"][0];
    assert_eq!(r["method"], "workspace/didChangeWatchedFiles", "{reg:#}");
    let globs = r["registerOptions"]["watchers"].to_string();
    assert!(
        globs.contains("opencode.json") && globs.contains(".opencode/**"),
        "{reg:#}"
    );
    c.send(json!({"jsonrpc": "2.0", "id": reg["id"], "result": null}));

    let config = open(&mut c, &p.join("opencode.json"), "json", SHADOWED);
    c.diagnostics(&config, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));

    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": config}, "position": {"line": 4, "character": 7}}),
    );
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("`shadowed-deny` at opencode.json:4:7 lists this rule")
            && !text.contains("nothing wrong"),
        "{text}"
    );

    // A file event from the client: re-checked at once (polling waits 5 s when watched).
    let disk = p.join(".opencode/agents/disk.md");
    std::fs::create_dir_all(disk.parent().unwrap()).unwrap();
    std::fs::write(&disk, AGENT).unwrap();
    let sent = Instant::now();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&disk), "type": 1}]}),
    );
    c.diagnostics(&uri(&disk), |d| {
        d.iter().any(|x| x["code"] == "shadowed-deny")
    });
    assert!(
        sent.elapsed() < Duration::from_secs(4),
        "{:?}",
        sent.elapsed()
    );

    shutdown(c);
}

/// `--fix --unsafe-fixes` parity on a config where it moves 13 denies: the code actions
/// asked over the whole file, every fix applied, give the text `check` writes, and asked at
/// any of the denies the finding lists, the narrowing fix is offered there.
#[test]
fn code_actions_fix_what_check_fix_unsafe_fixes_fixes() {
    let mut bash: Vec<String> = (1..=13)
        .map(|k| format!("      \"tool{k} *\": \"deny\""))
        .collect();
    bash.push("      \"*\": \"allow\"".into());
    let text = format!(
        "{{\n  \"permission\": {{\n    \"bash\": {{\n{}\n    }}\n  }}\n}}\n",
        bash.join(",\n")
    );
    let t = Tree::new().file("project/opencode.json", &text);
    let p = t.project();
    let mut c = Client::start(&t);
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&p), "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    let u = open(&mut c, &p.join("opencode.json"), "json", &text);
    // One finding, on the catch-all, listing the 13 denies it overrides.
    let d = c.diagnostics(&u, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));
    let listed = d
        .iter()
        .flat_map(|x| {
            x["relatedInformation"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .count();
    assert!(listed >= 13, "{d:#?}");
    let a = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}},
               "context": {"diagnostics": d}}),
    );
    let actions = a["result"].as_array().unwrap();
    let fixes: Vec<&Value> = actions
        .iter()
        .filter(|x| !x["title"].as_str().unwrap().contains("ignore `"))
        .collect();
    assert!(!fixes.is_empty(), "no fix offered: {a:#}");
    let edits: Vec<Value> = fixes
        .iter()
        .flat_map(|f| f["edit"]["changes"][&u].as_array().unwrap().clone())
        .collect();
    let fixed = apply(&text, &edits);
    let copy = Tree::new().file("project/opencode.json", &text);
    let run = copy.run(&["check", "--fix", "--unsafe-fixes"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let by_check = std::fs::read_to_string(copy.project().join("opencode.json")).unwrap();
    assert_ne!(by_check, text, "check --fix --unsafe-fixes changed nothing");
    assert_eq!(fixed, by_check, "the code actions and check --fix disagree");
    // Asked at any of the denies the finding lists, its fix is offered there too.
    for r in d.iter().flat_map(|x| {
        x["relatedInformation"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }) {
        let a = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u}, "range": r["location"]["range"], "context": {"diagnostics": []}}),
        );
        assert!(
            a["result"]
                .as_array()
                .unwrap()
                .iter()
                .any(|y| y["title"].as_str().unwrap().contains("narrowing")),
            "no narrowing fix at {r:#}: {a:#}"
        );
    }
    shutdown(c);
}

/// A suggestion proven on the config (`check --format json`, `suggestions`) is offered as a
/// code action with the same edits at its finding.
#[test]
fn code_actions_offer_the_suggestions_check_proves() {
    let text = "{\n  \"permission\": {\n    \"read\": {\"*\": \"allow\", \"*.env\": \"deny\"},\n    \"bash\": \"allow\"\n  }\n}\n";
    let t = Tree::new().file("project/opencode.json", text);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "deny-bypass")
        .cloned()
        .unwrap_or_else(|| panic!("{report:#}"));
    let suggested = &finding["suggestions"][0];
    let by_check = check_support::apply_suggestion(text, suggested);
    let p = t.project();
    let mut c = Client::start(&t);
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&p), "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    let u = open(&mut c, &p.join("opencode.json"), "json", text);
    let d = c.diagnostics(&u, |d| d.iter().any(|x| x["code"] == "deny-bypass"));
    let at = d
        .iter()
        .find(|x| x["code"] == "deny-bypass")
        .map(|x| x["range"].clone())
        .unwrap();
    let a = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": at, "context": {"diagnostics": d}}),
    );
    let actions = a["result"].as_array().unwrap();
    let action = actions
        .iter()
        .find(|x| x["title"].as_str().unwrap().contains("(proven; changes"))
        .unwrap_or_else(|| panic!("no suggestion offered: {a:#}"));
    let edits = action["edit"]["changes"][&u].as_array().unwrap();
    assert_eq!(apply(text, edits), by_check, "{action:#}");
    assert!(by_check.contains("\"cat *.env*\": \"deny\""), "{by_check}");
    shutdown(c);
}

/// The server started on `t` (rooted at its project), initialized: the client and its
/// answer to `initialize`.
fn initialized(t: &Tree) -> (Client, Value) {
    let mut c = Client::start(t);
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.project()), "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    (c, init)
}

/// The server started on `t` and initialized, with `file` (under the project) opened as
/// `text` and analysed: the client, its answer to `initialize`, and the file's URI.
fn session(t: &Tree, file: &str, text: &str) -> (Client, Value, String) {
    let p = t.project();
    let (mut c, init) = initialized(t);
    let lang = if file.ends_with(".md") {
        "markdown"
    } else {
        "json"
    };
    let u = open(&mut c, &p.join(file), lang, text);
    c.diagnostics(&u, |_| true);
    (c, init, u)
}

/// `text` (its `|` the cursor, removed) sent as the next version of `uri`, then completion
/// at the cursor: [`completion`]'s answer.
fn typed(c: &mut Client, uri: &str, text: &str) -> (Vec<String>, Value) {
    c.version += 1;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": c.version},
               "contentChanges": [{"text": text.replacen('|', "", 1)}]}),
    );
    completion(c, uri, text)
}

/// A markdown agent opened as `text` (its `|` the cursor, removed), then completion at the
/// cursor: its URI and [`completion`]'s answer.
fn open_and_complete(
    c: &mut Client,
    path: &std::path::Path,
    text: &str,
) -> (String, (Vec<String>, Value)) {
    let u = open(c, path, "markdown", &text.replacen('|', "", 1));
    let answer = completion(c, &u, text);
    (u, answer)
}

/// The labels of a completion answer, and the answer.
fn completion(c: &mut Client, uri: &str, text: &str) -> (Vec<String>, Value) {
    // The cursor is at the `|` of `text`, a buffer sent without it.
    let before = &text[..text.find('|').unwrap()];
    let line = before.matches('\n').count();
    let character = before.len() - before.rfind('\n').map_or(0, |k| k + 1);
    let r = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
    );
    let labels = r["result"]["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["label"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    (labels, r)
}

/// Completion inside a permission block, on buffers being typed (they do not parse): the
/// permission keys 1.18.34 checks with what checks them, the actions as values, the agents
/// under `task` (subagents first, internal ones left out), in JSON and in a markdown agent's
/// frontmatter; nothing elsewhere.
#[test]
fn completion_in_permission_blocks() {
    const CONFIG: &str = "{\n  \"agent\": {\"reviewer\": {\"mode\": \"subagent\", \"description\": \"reviews\"}},\n  \"permission\": {\"task\": {\"*\": \"deny\"}}\n}\n";
    let t = Tree::new().file("project/opencode.json", CONFIG);
    let p = t.project();
    let (mut c, init, config) = session(&t, "opencode.json", CONFIG);
    assert_eq!(
        init["result"]["capabilities"]["completionProvider"]["triggerCharacters"],
        json!(["\""]),
        "{init}"
    );
    let typed = |c: &mut Client, text: &str| typed(c, &config, text);

    // Agents under `task`: the subagents first, no internal agent.
    let (agents, _) = typed(
        &mut c,
        "{\n  \"agent\": {\"reviewer\": {\"mode\": \"subagent\", \"description\": \"reviews\"}},\n  \"permission\": {\"task\": {\"*\": \"deny\", \"|",
    );
    for a in ["reviewer", "general", "explore", "build", "plan"] {
        assert!(agents.contains(&a.to_string()), "{a} missing: {agents:?}");
    }
    assert!(
        !agents
            .iter()
            .any(|a| ["title", "summary", "compaction"].contains(&a.as_str())),
        "{agents:?}"
    );
    let pos = |n: &str| agents.iter().position(|a| a == n).unwrap();
    assert!(
        pos("reviewer") < pos("build") && pos("explore") < pos("plan"),
        "{agents:?}"
    );

    // Actions: a permission's value, quoted by the client (inside the string: no quotes).
    let (actions, r) = typed(&mut c, "{\n  \"permission\": {\"bash\": \"a|");
    assert_eq!(actions, ["allow", "ask", "deny"], "{r}");
    let edit = &r["result"]["items"][0]["textEdit"];
    assert_eq!(edit["newText"], "allow", "{r}");
    assert_eq!(
        edit["range"]["start"],
        json!({"line": 1, "character": 26}),
        "{r}"
    );
    // A pattern's value, before any quote: quoted.
    let (actions, r) = typed(&mut c, "{\n  \"permission\": {\"edit\": {\"src/*\": |");
    assert_eq!(actions, ["allow", "ask", "deny"], "{r}");
    assert_eq!(
        r["result"]["items"][2]["textEdit"]["newText"], "\"deny\"",
        "{r}"
    );

    // Permission keys, an agent's too: the ones 1.18.34 checks, with what checks them.
    let (keys, r) = typed(
        &mut c,
        "{\n  \"agent\": {\"x\": {\"permission\": {\n    \"edit\": \"deny\",\n    |",
    );
    for k in [
        "bash",
        "edit",
        "read",
        "task",
        "external_directory",
        "webfetch",
    ] {
        assert!(keys.contains(&k.to_string()), "{k} missing: {keys:?}");
    }
    for k in ["write", "list", "codesearch"] {
        assert!(!keys.contains(&k.to_string()), "{k} offered: {keys:?}");
    }
    let bash = r["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "bash")
        .unwrap();
    assert!(
        bash["documentation"]["value"]
            .as_str()
            .unwrap()
            .contains("the bash tool"),
        "{bash}"
    );

    // Nothing outside a permission block, nor in an array, nor on nonsense.
    assert!(typed(&mut c, "{\n  \"model\": \"|").0.is_empty());
    assert!(typed(&mut c, "{\n  \"agent\": {|").0.is_empty());
    let bad = c.request("textDocument/completion", json!({"nonsense": true}));
    assert!(bad["error"].is_object(), "{bad}");

    // A markdown agent's frontmatter.
    let md = "---\ndescription: d\nmode: subagent\npermission:\n  bash: |\n---\nAn agent.\n";
    let (agent, (actions, r)) = open_and_complete(&mut c, &p.join(".opencode/agents/a.md"), md);
    assert_eq!(actions, ["allow", "ask", "deny"], "{r}");
    assert_eq!(r["result"]["items"][1]["textEdit"]["newText"], "ask", "{r}");
    let md = "---\npermission:\n  task:\n    \"*\": deny\n    |\n---\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": agent, "version": 2},
               "contentChanges": [{"text": md.replacen('|', "", 1)}]}),
    );
    assert!(
        completion(&mut c, &agent, md)
            .0
            .contains(&"reviewer".to_string())
    );

    shutdown(c);
}

/// The CodeLenses of a document: `(line, title, arguments)` each.
fn lenses(c: &mut Client, uri: &str) -> Vec<(u64, String, Vec<String>)> {
    let r = c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    r["result"]
        .as_array()
        .unwrap_or_else(|| panic!("no lenses: {r}"))
        .iter()
        .map(|l| {
            let args = l["command"]["arguments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            assert_eq!(l["command"]["command"], "permaudit.explain", "{l}");
            (
                l["range"]["start"]["line"].as_u64().unwrap(),
                l["command"]["title"].as_str().unwrap().to_string(),
                args,
            )
        })
        .collect()
}

/// What `explain` (the library's, through the binary's JSON) says decides the lens' own
/// call: the 1-based line of the deciding rule, for the lens' agent, permission and input.
fn explained_line(t: &Tree, args: &[String]) -> Option<u64> {
    let out = t.run(&[
        "explain", "--format", "json", "--agent", &args[0], &args[1], &args[3],
    ]);
    out.json()["source"]["line"].as_u64()
}

const LENSED: &str = "{\n  \"agent\": {\"reviewer\": {\"mode\": \"subagent\", \"description\": \"reviews\",\n    \"permission\": {\"edit\": {\"src/*\": \"allow\"}}}},\n  \"permission\": {\n    \"edit\": {\n      \"tests/**\": \"deny\",\n      \"*\": \"allow\"\n    },\n    \"write\": \"deny\",\n    \"bash\": {\"git push *\": \"deny\", \"*\": \"ask\"}\n  }\n}\n";

/// A CodeLens above each rule says what it decides and for whom, from the analysis `check`
/// runs; each agent and input it names is decided by `explain` as the title says (by this
/// rule, or by the line it names); a permission OpenCode never asks says so; the lenses
/// follow the buffer; a markdown agent's frontmatter gets its own.
#[test]
fn code_lenses_say_what_each_rule_decides() {
    let t = Tree::new().file("project/opencode.json", LENSED);
    let p = t.project();
    let (mut c, init, config) = session(&t, "opencode.json", LENSED);
    assert!(
        init["result"]["capabilities"]["codeLensProvider"].is_object(),
        "{init}"
    );
    let got = lenses(&mut c, &config);
    let at = |line: u64| {
        got.iter()
            .find(|l| l.0 == line)
            .unwrap_or_else(|| panic!("no lens on line {line}: {got:#?}"))
    };
    // One lens per rule written: src/*, tests/**, *, write, git push *, bash *.
    assert_eq!(got.len(), 6, "{got:#?}");
    // The deny a later catch-all overrides, for every agent that holds it.
    let (_, title, _) = at(5);
    assert!(
        title.starts_with("overridden for every agent by line 7: `edit` \"*\" allow"),
        "{title}"
    );
    assert!(at(6).1.starts_with("decides for"), "{got:#?}");
    assert_eq!(
        at(8).1,
        "OpenCode never checks `write` (the tool asks `edit`)"
    );
    // The reviewer's own rule: for the reviewer only.
    assert_eq!(at(2).1, "decides for reviewer", "{got:#?}");
    // Each title against explain: the lens' agent and input are decided by this rule when
    // it says it decides for that agent, or by the line it names.
    for (line, title, args) in &got {
        assert_eq!(args.len(), 4, "{args:?}");
        if title.starts_with("OpenCode never checks") {
            continue;
        }
        let decided = explained_line(&t, args);
        let agent_decides = title
            .strip_prefix("decides for ")
            .map(|rest| rest.split(" · ").next().unwrap_or(""))
            .is_some_and(|who| who == "every agent" || who.split(", ").any(|a| a == args[0]));
        if agent_decides {
            assert_eq!(decided, Some(line + 1), "{title} {args:?}");
        } else if let Some(by) = title.split(" by line ").nth(1) {
            let by: u64 = by
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(decided, Some(by), "{title} {args:?}");
        } else {
            panic!("a title neither decides nor names its decider: {title}");
        }
    }
    // Asked again: the same lenses (kept for this analysis).
    assert_eq!(lenses(&mut c, &config), got);
    // The buffer changes: the deny moved after the catch-all now decides.
    let fixed = LENSED.replace(
        "      \"tests/**\": \"deny\",\n      \"*\": \"allow\"\n",
        "      \"*\": \"allow\",\n      \"tests/**\": \"deny\"\n",
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": config, "version": 2},
               "contentChanges": [{"text": fixed}]}),
    );
    let after = lenses(&mut c, &config);
    let deny = after.iter().find(|l| l.0 == 6).unwrap();
    assert!(deny.1.starts_with("decides for"), "{after:#?}");
    assert_eq!(deny.2[2], "tests/**", "{after:#?}");
    // A markdown agent's frontmatter.
    let md = "---\ndescription: d\nmode: subagent\npermission:\n  bash:\n    \"*\": ask\n    \"rm *\": deny\n---\nAn agent.\n";
    let agent = open(&mut c, &p.join(".opencode/agents/a.md"), "markdown", md);
    c.diagnostics(&agent, |_| true);
    let md_lenses = lenses(&mut c, &agent);
    assert_eq!(md_lenses.len(), 2, "{md_lenses:#?}");
    assert!(
        md_lenses.iter().all(|l| l.1 == "decides for a"),
        "{md_lenses:#?}"
    );
    shutdown(c);
}

/// Patterns worth writing at a pattern key: under `bash` the project's own commands as the
/// "Always" pattern OpenCode stores (`map --commands`' commands), under `edit` and `read`
/// the project's files and directories under the typed prefix; in JSON and frontmatter.
#[test]
fn completion_of_patterns() {
    const CONFIG: &str = "{\n  \"permission\": {\"bash\": {\"*\": \"ask\"}}\n}\n";
    let t = Tree::new()
        .file("project/opencode.json", CONFIG)
        .file(
            "project/package.json",
            "{\"scripts\": {\"build\": \"cargo build --release\", \"lint\": \"eslint src\"}}\n",
        )
        .file("project/src/main.rs", "")
        .file("project/src/cli/mod.rs", "")
        .file("project/docs/a.md", "")
        .file("project/.env", "");
    let p = t.project();
    let (mut c, _, config) = session(&t, "opencode.json", CONFIG);
    let typed = |c: &mut Client, text: &str| typed(c, &config, text);
    // bash: the project's commands, as `map --commands` lists them.
    let (commands, r) = typed(
        &mut c,
        "{\n  \"permission\": {\"bash\": {\"*\": \"ask\", \"|",
    );
    let map = t.run(&["map", "--commands", "--format", "json"]);
    assert!(
        map.stdout.contains("cargo build --release"),
        "{}",
        map.stdout
    );
    for want in ["cargo build *", "eslint *"] {
        assert!(commands.contains(&want.to_string()), "{want}: {r:#}");
    }
    // Filtered by what is typed, quoted outside a string.
    let (commands, r) = typed(&mut c, "{\n  \"permission\": {\"bash\": {|");
    assert!(commands.contains(&"cargo build *".to_string()), "{r:#}");
    let item = r["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "cargo build *")
        .unwrap();
    assert_eq!(item["textEdit"]["newText"], "\"cargo build *\"", "{item}");
    let (commands, _) = typed(&mut c, "{\n  \"permission\": {\"bash\": {\"es|");
    assert_eq!(commands, ["eslint *"]);
    // edit and read: the files and directories under the prefix.
    let (paths, r) = typed(
        &mut c,
        "{\n  \"permission\": {\"edit\": {\"*\": \"allow\", \"|",
    );
    for want in [".env", "docs/*", "src/*", "package.json", "opencode.json"] {
        assert!(paths.contains(&want.to_string()), "{want}: {r:#}");
    }
    assert!(!paths.iter().any(|p| p.starts_with(".git")), "{paths:?}");
    let (paths, _) = typed(&mut c, "{\n  \"permission\": {\"read\": {\"src/|");
    assert_eq!(paths, ["src/cli/*", "src/main.rs"]);
    let (paths, _) = typed(&mut c, "{\n  \"permission\": {\"read\": {\"../|");
    assert!(paths.is_empty(), "{paths:?}");
    // Not at a value, nor under another permission.
    let (actions, _) = typed(&mut c, "{\n  \"permission\": {\"edit\": {\"src/*\": \"|");
    assert_eq!(actions, ["allow", "ask", "deny"]);
    assert!(
        typed(&mut c, "{\n  \"permission\": {\"webfetch\": {\"|")
            .0
            .is_empty()
    );
    // A markdown agent's frontmatter.
    let md = "---\npermission:\n  edit:\n    src/|\n---\n";
    let (_, (paths, r)) = open_and_complete(&mut c, &p.join(".opencode/agents/a.md"), md);
    assert_eq!(paths, ["src/cli/*", "src/main.rs"], "{r:#}");
    assert_eq!(
        r["result"]["items"][1]["textEdit"]["newText"],
        "src/main.rs"
    );
    shutdown(c);
}

/// Not an assertion: how long completion and CodeLens take on the largest real config
/// (`tests/real/dpietersz__dotfiles`, the most rules written: 1,123, 262 of them in one
/// global agent file), printed for the record
/// (`cargo test --release --test server -- --nocapture latency`).
#[test]
fn latency_on_the_largest_real_config() {
    latency("dpietersz__dotfiles");
}

/// The same on `tests/real/mgajewskik__opencode-config`, the config `scripts/bench-server.py`
/// calls the largest (~430 rules in one file, held by 17 agents: the most rules a lens
/// asks about, per agent).
#[test]
fn latency_on_the_config_with_the_most_rules_held() {
    latency("mgajewskik__opencode-config");
}

fn latency(name: &str) {
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/real")
        .join(name);
    // The fixture holds no command file: the extension's package.json stands in for the
    // project's commands (`bash` pattern completion reads them).
    let scripts = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode/package.json"),
    )
    .unwrap();
    let t = Tree::from_fixture(&real).file("project/package.json", &scripts);
    let p = t.project();
    let (mut c, _) = initialized(&t);
    // Every config file OpenCode reads there (the project's and the global ones), opened;
    // the one with the most lenses measured.
    fn configs(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.map(|e| e.unwrap().path()) {
            let skip = [".git", "skill", "skills", "node_modules"];
            if e.is_dir() && !skip.iter().any(|k| e.ends_with(k)) {
                configs(&e, out);
            } else if e
                .extension()
                .is_some_and(|x| x == "json" || x == "jsonc" || x == "md")
            {
                out.push(e);
            }
        }
    }
    let mut files = vec![p.join("opencode.json")];
    configs(&p.join(".opencode"), &mut files);
    configs(&t.root().join("home/.config/opencode"), &mut files);
    files.retain(|f| f.is_file());
    files.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut best: Option<(usize, String, std::path::PathBuf, f64)> = None;
    let mut total = (0, 0.0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lang = if f.extension().is_some_and(|e| e == "md") {
            "markdown"
        } else {
            "json"
        };
        let u = open(&mut c, f, lang, &text);
        c.diagnostics(&u, |_| true);
        let start = Instant::now();
        let n = lenses(&mut c, &u).len();
        let took = ms(start.elapsed());
        total = (total.0 + n, total.1 + took);
        if best.as_ref().is_none_or(|b| n > b.0) {
            best = Some((n, u, f.clone(), took));
        }
    }
    let (n, u, f, first) = best.unwrap();
    let start = Instant::now();
    lenses(&mut c, &u);
    let cached = ms(start.elapsed());
    // Completion there: at the first permission block's key, and at a pattern key of the
    // first `bash` and `edit` blocks (JSON: after `{`; markdown: a new line under the key).
    let text = std::fs::read_to_string(&f).unwrap();
    let mut report = format!(
        "latency on {} ({} files open, {} lenses in all, {:.1} ms in all): codeLens of {} ({n} lenses) {first:.1} ms first, {cached:.2} ms again",
        real.file_name().unwrap().to_string_lossy(),
        files.len(),
        total.0,
        total.1,
        f.strip_prefix(t.root()).unwrap().display()
    );
    for key in ["permission", "bash", "edit", "task"] {
        let at = text
            .find(&format!("\"{key}\": {{"))
            .map(|k| k + key.len() + 5)
            .or_else(|| {
                ["", "  "].iter().find_map(|indent| {
                    let head = format!("\n{indent}{key}:\n");
                    text.find(&head).map(|k| k + head.len() + indent.len() + 2)
                })
            });
        let Some(at) = at else { continue };
        let before = &text[..at];
        let line = before.matches('\n').count();
        let character = before.len() - before.rfind('\n').map_or(0, |k| k + 1);
        let mut times = Vec::new();
        let mut items = 0;
        for _ in 0..20 {
            let start = Instant::now();
            let r = c.request(
                "textDocument/completion",
                json!({"textDocument": {"uri": u}, "position": {"line": line, "character": character}}),
            );
            times.push(ms(start.elapsed()));
            items = r["result"]["items"].as_array().map_or(0, Vec::len);
        }
        let first = times[0];
        times.sort_by(f64::total_cmp);
        report.push_str(&format!(
            "; completion at `{key}` ({items} items) first {first:.2} ms, median {:.2} ms, max {:.2} ms",
            times[times.len() / 2],
            times[times.len() - 1]
        ));
    }
    println!("{report}");
    shutdown(c);
}

/// `server --stdio`, as vscode-languageclient's stdio transport and other clients start a
/// server: accepted (stdio is the only transport) and the same server.
#[test]
fn the_stdio_flag_clients_pass_is_accepted() {
    let t = Tree::new().file("project/opencode.json", SHADOWED);
    let p = t.project();
    let mut c = Client::start_with(&t, &p, &["--stdio"]);
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&p), "capabilities": {}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["hoverProvider"], true,
        "{init}"
    );
    c.notify("initialized", json!({}));
    let config = open(&mut c, &p.join("opencode.json"), "json", SHADOWED);
    c.diagnostics(&config, |d| d.iter().any(|x| x["code"] == "shadowed-deny"));
    shutdown(c);
}
