//! `permaudit history` against a history the real OpenCode 1.18.34 recorded.
//!
//! `scripts/history-fixture.py` drives `opencode serve` (127.0.0.1) with the scripted model
//! of `tests/live/mock_model.py`, answers its asks through the server's API (once, always,
//! reject) and kills it with SIGKILL, the last session's calls still only in the WAL. The
//! project's config is then changed, and `history --format json` must list every call with
//! how it went then (from OpenCode's own records) and what the new config decides now,
//! while the database files stay byte-identical. Setup as `tests/live_conformance.rs`
//! (OPENCODE_BIN or `scripts/install-oracle.sh`, and `python3`); a missing engine skips,
//! or fails under CI / PERMAUDIT_REQUIRE_ORACLE=1. The refusals of broken databases need
//! no engine.

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use support::harness;
use support::oracle::{self, Located};
use support::tier;

/// The config the history is judged under (the recording ran under the script's).
fn today() -> Value {
    json!({
        "$schema": "https://opencode.ai/config.json",
        "permission": {
            "bash": {"*": "ask", "echo *": "allow", "rm *": "deny", "ls *": "deny", "touch *": "allow"},
            "edit": "allow",
            "read": {"*": "allow", "*.env": "deny"},
            "external_directory": "deny"
        }
    })
}

/// Each scripted call: (conversation, callID, agent, tool, then, now).
const EXPECTED: &[(&str, &str, &str, &str, &str, &str)] = &[
    ("HIST-A-GO", "call_0_0", "build", "bash", "ran", "allow"),
    ("HIST-A-GO", "call_0_1", "build", "bash", "denied", "deny"),
    ("HIST-A-GO", "call_0_2", "build", "bash", "ran", "deny"),
    ("HIST-A-GO", "call_0_3", "build", "edit", "ran", "allow"),
    ("HIST-A-GO", "call_0_4", "build", "read", "ran", "allow"),
    (
        "HIST-A-GO",
        "call_0_5",
        "build",
        "bash",
        "rejected",
        "allow",
    ),
    ("HIST-B-GO", "call_1_0", "build", "bash", "ran", "deny"),
    ("HIST-B-GO", "call_1_1", "build", "bash", "rejected", "deny"),
    ("HIST-C-GO", "call_2_0", "plan", "read", "ran", "allow"),
    ("HIST-E-GO", "call_3_0", "build", "bash", "ran", "ask"),
    ("HIST-E-GO", "call_3_1", "build", "bash", "ran", "ask"),
    ("HIST-F-GO", "call_4_0", "build", "bash", "ran", "ask"),
    // Through `opencode run --auto`.
    ("HIST-G-GO", "call_5_0", "build", "bash", "ran", "ask"),
    ("HIST-D-GO", "call_6_0", "build", "bash", "ran", "allow"),
];

struct Recorded {
    root: PathBuf,
    run: Value,
}

impl Recorded {
    fn proj(&self) -> PathBuf {
        self.root.join("proj")
    }
    fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    fn db(&self) -> PathBuf {
        self.home().join(".local/share/opencode/opencode.db")
    }
}

/// The history, recorded once per test binary (`None`: skipped).
fn recorded() -> Option<&'static Recorded> {
    static REC: OnceLock<Option<Recorded>> = OnceLock::new();
    REC.get_or_init(|| {
        let bin = match oracle::locate() {
            Located::Found(b) => b,
            Located::Skip => return None,
        };
        let python = Command::new("python3").arg("--version").output();
        if !python.is_ok_and(|o| o.status.success()) {
            tier::skip_or_fail(
                "history",
                "python3 is missing (the scripted model needs it)",
            );
            return None;
        }
        // Under the target directory, replaced by each run: a static is never dropped, so a
        // temporary directory would be left behind.
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("history");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let root = base.canonicalize().unwrap().join("rec");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/history-fixture.py");
        let out = Command::new("timeout")
            .arg("600")
            .arg("python3")
            .arg(&script)
            .arg(&bin)
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} failed: {}\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let run: Value = serde_json::from_slice(&std::fs::read(root.join("run.json")).unwrap())
            .expect("run.json");
        // Today's config replaces the one the calls were recorded under.
        std::fs::write(
            root.join("proj/opencode.json"),
            serde_json::to_string_pretty(&today()).unwrap(),
        )
        .unwrap();
        Some(Recorded { root, run })
    })
    .as_ref()
}

fn permaudit(rec: &Recorded, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(harness::permaudit_bin());
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", rec.home());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every file of the database with its bytes.
fn snapshot(db: &Path) -> Vec<(String, Vec<u8>)> {
    let dir = db.parent().unwrap();
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_recorded_call_with_then_and_now() {
    let Some(rec) = recorded() else { return };
    let before = snapshot(&rec.db());
    assert!(
        before
            .iter()
            .any(|(n, b)| n == "opencode.db-wal" && !b.is_empty()),
        "the recording left a WAL"
    );
    let out = permaudit(rec, &rec.proj(), &["history", "--format", "json"], &[]);
    let v = json_of(&out);
    // The originals are byte-identical, and nothing was added beside them.
    assert!(snapshot(&rec.db()) == before, "the database files changed");

    assert_eq!(v["version"], 1);
    let calls = v["calls"].as_array().unwrap();
    let got: Vec<(String, String, String, String, String, String)> = calls
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("null").to_string();
            (
                s("session"),
                s("call"),
                s("agent"),
                s("tool"),
                s("then"),
                s("now"),
            )
        })
        .collect();
    let want: Vec<(String, String, String, String, String, String)> = EXPECTED
        .iter()
        .map(|(conv, call, agent, tool, then, now)| {
            (
                rec.run["sessions"][conv].as_str().unwrap().to_string(),
                call.to_string(),
                agent.to_string(),
                tool.to_string(),
                then.to_string(),
                now.to_string(),
            )
        })
        .collect();
    assert_eq!(got, want, "{}", serde_json::to_string_pretty(&v).unwrap());

    // The inputs are the tools' arguments; the checks are OpenCode's, each with its rule.
    let call = |id: &str| calls.iter().find(|c| c["call"] == id).unwrap();
    assert_eq!(call("call_1_0")["input"]["command"], "ls -la && git status");
    let checks = |id: &str| -> Vec<(String, String, String, String)> {
        call(id)["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                (
                    k["permission"].as_str().unwrap().to_string(),
                    k["input"].as_str().unwrap().to_string(),
                    k["now"].as_str().unwrap().to_string(),
                    k["rule"]["pattern"].as_str().unwrap_or("-").to_string(),
                )
            })
            .collect()
    };
    let t = |p: &str, i: &str, n: &str, r: &str| {
        (p.to_string(), i.to_string(), n.to_string(), r.to_string())
    };
    assert_eq!(
        checks("call_1_0"),
        [
            t("bash", "ls -la", "deny", "ls *"),
            t("bash", "git status", "ask", "*")
        ]
    );
    assert_eq!(
        checks("call_1_1"),
        [
            t("external_directory", "/etc/*", "deny", "*"),
            t("bash", "cat /etc/hostname", "ask", "*")
        ]
    );
    assert_eq!(checks("call_0_3"), [t("edit", "README.md", "allow", "*")]);
    let rule = &call("call_0_2")["checks"][0]["rule"];
    assert_eq!(rule["action"], "deny");
    assert_eq!(rule["source"]["path"], "opencode.json");
    assert!(rule["source"]["line"].as_u64().unwrap() > 0);

    // The summaries.
    let ids = |k: &str| -> Vec<String> {
        v["summary"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["call"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids("ran_now_denied"), ["call_0_2", "call_1_0"]);
    assert_eq!(ids("refused_now_allowed"), ["call_0_5"]);
    // The read calls ran, allowed by `read "*" allow`, which `check` reports today as
    // letting the agent read `.env`-like files (the `*.env` deny leaves `.env.local`).
    let risky: Vec<(String, String)> = v["summary"]["ran_risky"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["call"].as_str().unwrap().to_string(),
                x["finding"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        risky,
        [
            ("call_0_4".to_string(), "secret-readable".to_string()),
            ("call_2_0".to_string(), "secret-readable".to_string())
        ]
    );
    assert_eq!(
        v["summary"]["then"],
        json!({"ran": 11, "rejected": 2, "denied": 1})
    );

    // Deterministic.
    let again = permaudit(rec, &rec.proj(), &["history", "--format", "json"], &[]);
    assert_eq!(out.stdout, again.stdout);
}

#[test]
fn calls_only_in_the_wal_are_listed() {
    let Some(rec) = recorded() else { return };
    let wal_only: Vec<&str> = rec.run["wal_only"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(
        !wal_only.is_empty(),
        "the recording must leave calls only in the WAL: {}",
        rec.run
    );
    let listed = |v: &Value| -> Vec<String> {
        v["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["call"].as_str().unwrap().to_string())
            .collect()
    };
    // OPENCODE_DB names the database as it does for OpenCode.
    let with_wal = json_of(&permaudit(
        rec,
        &rec.proj(),
        &["history", "--format", "json"],
        &[("OPENCODE_DB", &rec.db())],
    ));
    // The main file alone, copied without its WAL, lacks them.
    let alone = tempfile::tempdir().unwrap();
    std::fs::copy(rec.db(), alone.path().join("opencode.db")).unwrap();
    let db_alone = alone.path().join("opencode.db");
    let without = json_of(&permaudit(
        rec,
        &rec.proj(),
        &[
            "history",
            "--format",
            "json",
            "--db",
            db_alone.to_str().unwrap(),
        ],
        &[],
    ));
    for id in wal_only {
        assert!(listed(&with_wal).iter().any(|c| c == id), "{id} listed");
        assert!(
            !listed(&without).iter().any(|c| c == id),
            "{id} only in the WAL"
        );
    }
}

#[test]
fn filters_and_redaction() {
    let Some(rec) = recorded() else { return };
    let count = |cwd: &Path, args: &[&str]| -> usize {
        let mut a = vec!["history", "--format", "json"];
        a.extend(args);
        json_of(&permaudit(rec, cwd, &a, &[]))["calls"]
            .as_array()
            .unwrap()
            .len()
    };
    // Another directory is another project; --all-projects lists every call.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = elsewhere.path().canonicalize().unwrap();
    assert_eq!(count(&other, &[]), 0);
    assert_eq!(count(&other, &["--all-projects"]), EXPECTED.len());
    let b = rec.run["sessions"]["HIST-B-GO"].as_str().unwrap();
    assert_eq!(count(&other, &["--session", b]), 2);
    assert_eq!(count(&rec.proj(), &["--since", "2999-01-01"]), 0);
    assert_eq!(
        count(&rec.proj(), &["--since", "2000-01-01"]),
        EXPECTED.len()
    );

    // --redact: no path, no argument in either form.
    for format in ["human", "json"] {
        let out = permaudit(
            rec,
            &rec.proj(),
            &["history", "--redact", "--format", format],
            &[],
        );
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        for secret in [
            "/etc/hostname",
            "a.txt",
            "README.md",
            "-la",
            "b.txt",
            rec.root.to_str().unwrap(),
        ] {
            assert!(!text.contains(secret), "{format} shows {secret}:\n{text}");
        }
        assert!(text.contains("ls …"), "{text}");
    }
    // Human output: summaries first.
    let out = permaudit(rec, &rec.proj(), &["history", "--color", "never"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let (a, b) = (
        text.find("Ran then, denied today").unwrap(),
        text.find("\nCalls\n").unwrap(),
    );
    assert!(a < b, "{text}");
}

/// Broken databases are refused with exit 2 and a message, never a panic; nothing is
/// written beside them.
#[test]
fn broken_databases_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = |db: &Path| -> Output {
        Command::new(harness::permaudit_bin())
            .args(["history", "--db", db.to_str().unwrap()])
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir.path())
            .output()
            .unwrap()
    };
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "garbage.db",
            b"this is not a database at all, not even close........",
            "not an SQLite database",
        ),
        // An empty file is an empty SQLite database: no tables.
        ("empty.db", b"", "not an OpenCode 1.18.34 database"),
    ];
    for (name, bytes, says) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = run(&p);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert_eq!(std::fs::read(&p).unwrap(), *bytes, "{name} unchanged");
    }
    let out = run(&dir.path().join("missing.db"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no OpenCode database here"));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["empty.db", "garbage.db"]);
}

/// A database OpenCode would never write, in every odd way its rows could be: read without a
/// panic, each odd row either left out (data that is not JSON) or listed undecided, with
/// why; terminal escapes in inputs never printed raw.
#[test]
fn odd_rows_are_listed_or_left_out_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let db = root.join("odd.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE session (id TEXT, parent_id TEXT, directory TEXT, agent TEXT);
             CREATE TABLE message (id TEXT, data TEXT);
             CREATE TABLE part (id TEXT, session_id TEXT, message_id TEXT, time_created INTEGER, data TEXT);",
        )
        .unwrap();
        let p = proj.to_str().unwrap();
        for (id, parent, directory, agent) in [
            ("s1", None, p, Some("build")),
            ("s2", None, "relative/dir", Some("build")),
            ("s3", Some("s4"), p, None),
            ("s4", Some("s3"), p, Some("build")),
        ] {
            c.execute(
                "INSERT INTO session VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![id, parent, directory, agent],
            )
            .unwrap();
        }
        c.execute("INSERT INTO message VALUES ('m1', 'not json')", [])
            .unwrap();
        c.execute(
            "INSERT INTO message VALUES ('m2', '{\"agent\":\"ghost\"}')",
            [],
        )
        .unwrap();
        let parts: &[(&str, &str, &str, Option<i64>, &str)] = &[
            (
                "p1",
                "s1",
                "m1",
                Some(1),
                r#"{"type":"tool","tool":"bash","callID":"c1","state":{"status":"running","input":{"command":"echo hi"}}}"#,
            ),
            ("p2", "s1", "m1", Some(2), "not json"),
            ("p3", "s1", "m1", Some(3), r#"{"type":"tool"}"#),
            (
                "p4",
                "s1",
                "m1",
                Some(4),
                r#"{"type":"tool","tool":"bash","callID":"c4","state":{"status":"completed","input":"a string"}}"#,
            ),
            (
                "p5",
                "s1",
                "m1",
                None,
                r#"{"type":"tool","tool":"mcp_thing","callID":"c5","state":{"status":"completed","input":{"x":1}}}"#,
            ),
            (
                "p6",
                "s1",
                "m2",
                Some(6),
                r#"{"type":"tool","tool":"read","callID":"c6","state":{"status":"completed","input":{"filePath":"a"}}}"#,
            ),
            (
                "p7",
                "s1",
                "m1",
                Some(7),
                "{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"c7\",\"state\":{\"status\":\"completed\",\"input\":{\"command\":\"echo \\u001b[31mred\"}}}",
            ),
            (
                "p8",
                "s2",
                "m1",
                Some(8),
                r#"{"type":"tool","tool":"bash","callID":"c8","state":{"status":"error","error":"boom","input":{"command":"ls"}}}"#,
            ),
            (
                "p9",
                "s3",
                "m1",
                Some(9),
                r#"{"type":"text","text":"not a tool"}"#,
            ),
            (
                "p10",
                "s3",
                "m1",
                Some(10),
                r#"{"type":"tool","tool":"bash","callID":"c10","state":{"status":"pending","input":{"command":"ls"}}}"#,
            ),
        ];
        for (id, session, message, time, data) in parts {
            c.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![id, session, message, time, data],
            )
            .unwrap();
        }
    }
    let before = std::fs::read(&db).unwrap();
    let run = |args: &[&str]| -> Output {
        Command::new(harness::permaudit_bin())
            .args(["history", "--db", db.to_str().unwrap()])
            .args(args)
            .current_dir(&proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &root)
            .output()
            .unwrap()
    };
    let out = run(&["--all-projects", "--format", "json"]);
    let v = json_of(&out);
    let row = |id: &str| -> (String, String, String) {
        let c = v["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["call"] == id)
            .unwrap_or_else(|| panic!("{id} listed: {v}"));
        let s = |x: &Value| x.as_str().unwrap_or("null").to_string();
        (s(&c["then"]), s(&c["now"]), s(&c["unknown"]))
    };
    let calls: Vec<&str> = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["call"].as_str().unwrap())
        .collect();
    // Time order (a missing time is 0); the row that is not JSON and the text part left out.
    assert_eq!(calls, ["c5", "c1", "", "c4", "c6", "c7", "c8", "c10"]);
    assert_eq!(row("c1").0, "pending");
    assert_eq!(row("c10").0, "pending");
    assert_eq!(row("c8").0, "error");
    assert!(row("c4").2.contains("not modelled"), "{:?}", row("c4"));
    assert!(row("c5").2.contains("`mcp_thing` tool"), "{:?}", row("c5"));
    assert!(
        row("c6").2.contains("no agent named `ghost`"),
        "{:?}",
        row("c6")
    );
    assert!(row("c8").2.contains("could not be read"), "{:?}", row("c8"));
    assert_eq!(row("c7").1, "allow"); // build's built-in `bash "*" allow`
    // A loop of parents ends; the session named and the one it "started".
    let s3 = json_of(&run(&["--session", "s3", "--format", "json"]));
    assert_eq!(s3["calls"].as_array().unwrap().len(), 1);
    // Human output: escapes shown escaped, never raw.
    let human = run(&["--all-projects", "--color", "never"]);
    assert!(human.status.success());
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("\\u001b[31mred"), "{text}");
    assert!(String::from_utf8_lossy(&human.stderr).contains("not an absolute directory"));
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // An unknown session is refused.
    let out = run(&["--session", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    // `suggest` reads the same rows without a panic and proposes nothing from them.
    let out = pa(
        &proj,
        &root,
        &[
            "suggest",
            "--db",
            db.to_str().unwrap(),
            "--all-projects",
            "--format",
            "json",
        ],
    );
    assert!(json_of(&out)["proposals"].as_array().unwrap().is_empty());
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

// ---- `permaudit suggest` on the same recording ----

/// permaudit with `args` in `cwd`, with only PATH and HOME set.
fn pa(cwd: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(harness::permaudit_bin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .output()
        .unwrap()
}

/// `suggest --format json` in `cwd`.
fn suggest_json(cwd: &Path, home: &Path, args: &[&str]) -> Value {
    let mut a = vec!["suggest", "--format", "json"];
    a.extend(args);
    json_of(&pa(cwd, home, &a))
}

/// Some entry of `skipped` is about `pattern` and says `says`.
fn skipped_says(skipped: &[Value], pattern: &str, says: &str) {
    assert!(
        skipped
            .iter()
            .any(|s| s["pattern"] == pattern && s["why"].as_str().unwrap().contains(says)),
        "{pattern}: {says}\n{}",
        serde_json::to_string_pretty(skipped).unwrap()
    )
}

/// `key` of each object of the array `v`, as strings.
fn each(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x[key].as_str().unwrap_or("null").to_string())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// `git log --oneline -1` (E) and `git log -1 --stat` (F), approved once each in two
/// sessions, give one rule at the arity boundary, `git log *`, after the `"*": "ask"` that
/// asks them; `pwd` (approved in E only) and the `opencode run --auto` session's `git log`
/// (no person) are not counted; nothing denied or rejected is opened.
#[test]
fn suggest_proposes_the_command_approved_in_two_sessions() {
    let Some(rec) = recorded() else { return };
    let before = snapshot(&rec.db());
    let v = suggest_json(&rec.proj(), &rec.home(), &[]);
    assert!(snapshot(&rec.db()) == before, "the database files changed");
    assert_eq!(v["version"], 1);
    let proposals = v["proposals"].as_array().unwrap();
    assert_eq!(
        proposals.len(),
        1,
        "{}",
        serde_json::to_string_pretty(&v).unwrap()
    );
    let p = &proposals[0];
    assert_eq!(
        (
            p["permission"].as_str(),
            p["pattern"].as_str(),
            p["action"].as_str()
        ),
        (Some("bash"), Some("git log *"), Some("allow"))
    );
    assert_eq!(p["file"], "opencode.json");
    assert_eq!(p["agent"], Value::Null);
    assert_eq!(p["sessions"], 2);
    let sessions = |c: &str| rec.run["sessions"][c].as_str().unwrap().to_string();
    let mut want = vec![sessions("HIST-E-GO"), sessions("HIST-F-GO")];
    want.sort();
    assert_eq!(strings(&p["session_ids"]), want);
    // Every recorded call it turns ask → allow, the run session's included.
    assert_eq!(strings(&p["covers"]), ["call_3_0", "call_4_0", "call_5_0"]);
    for o in p["opens"].as_array().unwrap() {
        assert_eq!(
            (o["before"].as_str(), o["after"].as_str()),
            (Some("ask"), Some("allow"))
        );
        assert_eq!(o["permission"], "bash");
    }
    assert!(p["logged"]["asked"].as_u64().unwrap() <= p["logged"]["of"].as_u64().unwrap());
    // What was left out, and why.
    let skipped = v["skipped"].as_array().unwrap();
    let why = |pattern: &str, says: &str| skipped_says(skipped, pattern, says);
    why(
        "pwd *",
        "approved in 1 session (fewer than --min-sessions 2)",
    );
    why("git log *", "opencode run");
    why("git status *", "denies");
    // --min-sessions 1 proposes `pwd *` too; 3 proposes nothing.
    let one = suggest_json(&rec.proj(), &rec.home(), &["--min-sessions", "1"]);
    assert_eq!(each(&one["proposals"], "pattern"), ["git log *", "pwd *"]);
    let three = suggest_json(&rec.proj(), &rec.home(), &["--min-sessions", "3"]);
    assert!(three["proposals"].as_array().unwrap().is_empty());
    // The human form names the rule, its place and its sessions.
    let out = permaudit(rec, &rec.proj(), &["suggest", "--color", "never"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bash \"git log *\" allow  →  opencode.json:"),
        "{text}"
    );
    assert!(text.contains("approved in 2 sessions"), "{text}");
    assert!(snapshot(&rec.db()) == before, "the database files changed");
}

/// A copy of the recording whose sessions ran in the copy's project (the database copy's
/// `session.directory` rewritten), so a test may write its config.
/// The environment the real OpenCode runs with on a copy made by [`copy_of`].
fn oracle_env(root: &Path) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        (
            "HOME".into(),
            root.join("home").to_string_lossy().into_owned(),
        ),
        ("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()),
        ("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into()),
        (
            "OPENCODE_TEST_MANAGED_CONFIG_DIR".into(),
            root.join("managed").to_string_lossy().into_owned(),
        ),
    ]
}

fn copy_of(rec: &Recorded, name: &str) -> PathBuf {
    let to = rec.root.parent().unwrap().join(name);
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to).unwrap();
    for d in ["proj", "home", "managed"] {
        let st = Command::new("cp")
            .arg("-a")
            .arg(rec.root.join(d))
            .arg(to.join(d))
            .status()
            .unwrap();
        assert!(st.success());
    }
    let db = to.join("home/.local/share/opencode/opencode.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE session SET directory = ?1 WHERE directory = ?2",
        rusqlite::params![
            to.join("proj").to_str().unwrap(),
            rec.proj().to_str().unwrap()
        ],
    )
    .unwrap();
    drop(c);
    to
}

/// `suggest --diff` shows and `suggest --write` writes the rule (the database untouched);
/// then the real OpenCode loads the config, runs the approved commands without asking, still
/// asks for `pwd` and still denies the denied and rejected calls.
#[test]
fn suggest_write_is_what_opencode_then_allows() {
    let Some(rec) = recorded() else { return };
    let Located::Found(bin) = oracle::locate() else {
        return;
    };
    let root = copy_of(rec, "suggest-write");
    let (proj, home) = (root.join("proj"), root.join("home"));
    let db = home.join(".local/share/opencode/opencode.db");
    let config = proj.join("opencode.json");
    let before_config = std::fs::read_to_string(&config).unwrap();
    let before = snapshot(&db);
    let run = |args: &[&str]| pa(&proj, &home, args);
    let diff = run(&["suggest", "--diff"]);
    assert!(diff.status.success());
    let patch = String::from_utf8_lossy(&diff.stdout);
    assert!(
        patch.starts_with("--- a/opencode.json\n+++ b/opencode.json\n"),
        "{patch}"
    );
    assert!(patch.contains("+      \"git log *\": \"allow\""), "{patch}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        before_config,
        "--diff writes nothing"
    );
    let mode = std::fs::metadata(&config).unwrap().permissions();
    let wrote = run(&["suggest", "--write", "--format", "json"]);
    let v = json_of(&wrote);
    assert_eq!(v["written"], true);
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.contains("\"git log *\": \"allow\""), "{after}");
    // The patch `--diff` showed is what was written.
    let applied = Command::new("git")
        .args(["apply", "--check", "-R", "-"])
        .current_dir(&proj)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin.take().unwrap().write_all(patch.as_bytes())?;
            c.wait()
        })
        .unwrap();
    assert!(applied.success(), "the written file is the patch applied");
    assert_eq!(std::fs::metadata(&config).unwrap().permissions(), mode);
    assert!(snapshot(&db) == before, "the database files changed");
    // Nothing left to propose.
    let again = json_of(&run(&["suggest", "--format", "json"]));
    assert!(again["proposals"].as_array().unwrap().is_empty(), "{again}");
    assert_eq!(
        json_of(&run(&["suggest", "--write", "--format", "json"]))["written"],
        false
    );

    // OpenCode's own bash tool: the approved command runs, the denied and rejected ones
    // are still denied.
    let env = oracle_env(&root);
    let fate = |command: &str| {
        let params = json!({"command": command, "description": "probe"}).to_string();
        let r = oracle::debug_tool(&bin, &proj, &env, "bash", &params);
        (oracle::tool_fate(&r, "bash").unwrap(), r)
    };
    let (f, r) = fate("git log --oneline -1");
    assert_eq!(f, oracle::ToolFate::NotDenied, "{r:?}");
    assert!(r.stdout.contains("init"), "it ran: {r:?}");
    for denied in ["rm -f a.txt", "cat /etc/hostname"] {
        let (f, r) = fate(denied);
        assert_eq!(f, oracle::ToolFate::Denied, "{denied}: {r:?}");
    }

    // Ask or allow, as a headless `opencode run` tells them (an ask is rejected there): the
    // recorded conversation E again, `git log --oneline -1` then `pwd`.
    let mut mock = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/live/mock_model.py"))
        .arg(rec.root.join("script.json"))
        .arg(root.join("mock-log.jsonl"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let port = {
        use std::io::BufRead as _;
        let mut line = String::new();
        std::io::BufReader::new(mock.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.trim().strip_prefix("PORT ").unwrap().to_string()
    };
    let provider = json!({
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "mock"},
            "models": {"m1": {"name": "m1", "tool_call": true}}}},
        "model": "mock/m1", "small_model": "mock/m1"
    });
    let mut run_env = env.clone();
    run_env.push(("OPENCODE_CONFIG_CONTENT".into(), provider.to_string()));
    let r = oracle::run_timed(
        180,
        &bin,
        &proj,
        &run_env,
        &["run", "--pure", "HIST-E-GO now"],
    );
    let _ = mock.kill();
    let _ = mock.wait();
    let err = r.stderr_plain();
    assert!(
        !err.contains("permission requested: bash (git log"),
        "git log is allowed now:\n{err}"
    );
    assert!(
        err.contains("permission requested: bash (pwd); auto-rejecting"),
        "pwd still asks:\n{err}"
    );
}

/// A database with the tables and columns permaudit reads: `sessions` (id, parent,
/// `session.permission`), each run in `dir` by `build`, and one bash call per `calls` entry
/// (session, command, `completed` or `rejected`), callIDs `c0`, `c1`, … in order.
fn bash_history(
    db: &Path,
    dir: &Path,
    sessions: &[(&str, Option<&str>, Option<&str>)],
    calls: &[(&str, &str, &str)],
) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(
        "CREATE TABLE session (id TEXT, parent_id TEXT, directory TEXT, agent TEXT, permission TEXT);
         CREATE TABLE message (id TEXT, data TEXT);
         CREATE TABLE part (id TEXT, session_id TEXT, message_id TEXT, time_created INTEGER, data TEXT);
         INSERT INTO message VALUES ('m', '{\"agent\":\"build\"}');",
    )
    .unwrap();
    for (id, parent, perm) in sessions {
        c.execute(
            "INSERT INTO session VALUES (?1, ?2, ?3, 'build', ?4)",
            rusqlite::params![id, parent, dir.to_str().unwrap(), perm],
        )
        .unwrap();
    }
    for (n, (session, command, status)) in calls.iter().enumerate() {
        let state = if *status == "rejected" {
            json!({"status": "error", "input": {"command": command},
                   "error": "The user rejected permission to use this specific tool call."})
        } else {
            json!({"status": status, "input": {"command": command}})
        };
        let data =
            json!({"type": "tool", "tool": "bash", "callID": format!("c{n}"), "state": state});
        c.execute(
            "INSERT INTO part VALUES (?1, ?2, 'm', ?3, ?4)",
            rusqlite::params![format!("p{n}"), session, n as i64, data.to_string()],
        )
        .unwrap();
    }
}

/// A history with no engine: the narrowing (an explicit narrower ask, a rejected call),
/// subagent sessions counted under their root, `opencode run` sessions left out.
#[test]
fn suggest_narrows_or_drops_and_counts_root_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let config = r#"{
  "permission": {
    "bash": {
      "*": "ask",
      "git log -p*": "ask",
      "rm *": "deny"
    }
  }
}
"#;
    std::fs::write(proj.join("opencode.json"), config).unwrap();
    let db = root.join("h.db");
    let run_rules = r#"[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]"#;
    let sessions = [
        ("s1", None, None),
        ("s2", None, None),
        ("s3", None, None),
        ("s4", Some("s1"), None),
        ("s5", None, Some(run_rules)),
        ("s6", None, Some(run_rules)),
    ];
    let calls: &[(&str, &str, &str)] = &[
        // `git log *` would override the author's `git log -p*` ask: narrowed to the
        // exact command approved in two sessions.
        ("s1", "git log --oneline", "completed"),
        ("s2", "git log --oneline", "completed"),
        ("s3", "git log -p", "completed"),
        // `npm test *` would allow the rejected `npm test --watch`: narrowed.
        ("s1", "npm test", "completed"),
        ("s2", "npm test", "completed"),
        ("s3", "npm test --watch", "rejected"),
        // Approved in s1 and its subagent's session s4: one session.
        ("s1", "make build", "completed"),
        ("s4", "make build", "completed"),
        // Only in `opencode run` sessions.
        ("s5", "cargo check", "completed"),
        ("s6", "cargo check", "completed"),
        // Denied today: never proposed.
        ("s1", "rm -rf build", "completed"),
        ("s2", "rm -rf build", "completed"),
    ];
    bash_history(&db, &proj, &sessions, calls);
    let before = std::fs::read(&db).unwrap();
    let run = |args: &[&str]| {
        let mut a = vec!["suggest", "--db", db.to_str().unwrap()];
        a.extend(args);
        pa(&proj, &root, &a)
    };
    let v = json_of(&run(&["--format", "json"]));
    let got: Vec<(String, String, Vec<String>)> = v["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pattern"].as_str().unwrap().to_string(),
                p["narrowed"]["from"].as_str().unwrap_or("-").to_string(),
                strings(&p["covers"]),
            )
        })
        .collect();
    let t = |a: &str, b: &str, c: &[&str]| {
        (
            a.to_string(),
            b.to_string(),
            c.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        got,
        [
            t("git log --oneline", "git log *", &["c0", "c1"]),
            t("npm test", "npm test *", &["c3", "c4"]),
        ],
        "{}",
        serde_json::to_string_pretty(&v).unwrap()
    );
    let skipped = v["skipped"].as_array().unwrap();
    let why = |pattern: &str, says: &str| skipped_says(skipped, pattern, says);
    why("git log *", "narrower ask `bash` \"git log -p*\"");
    why("npm test *", "which was rejected");
    why("make build *", "approved in 1 session");
    why("cargo check *", "opencode run");
    assert!(
        !skipped.iter().any(|s| s["pattern"] == "rm *"),
        "{skipped:?}"
    );
    assert!(
        v["proposals"][0]["narrowed"]["why"]
            .as_str()
            .unwrap()
            .contains("git log -p*")
    );
    // Written, the narrowed rules are what OpenCode would read.
    assert!(run(&["--write"]).status.success());
    let written = std::fs::read_to_string(proj.join("opencode.json")).unwrap();
    assert!(
        written.contains("\"git log --oneline\": \"allow\"")
            && written.contains("\"npm test\": \"allow\""),
        "{written}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database is untouched"
    );
}

/// Refusals exit 2 with a message and write nothing.
#[test]
fn suggest_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut a = vec!["suggest"];
        a.extend(args);
        pa(dir.path(), dir.path(), &a)
    };
    let missing = dir.path().join("missing.db");
    for (args, says) in [
        (
            vec!["--db", missing.to_str().unwrap()],
            "no OpenCode database here",
        ),
        (vec!["--since", "yesterday"], "--since \"yesterday\""),
        (vec!["--min-sessions", "0"], "--min-sessions"),
        (vec!["--diff", "--write"], "cannot be used with"),
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, b"not a database, not even close.................").unwrap();
    let out = run(&["--db", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an SQLite database"));
}

/// The JSON storage of older releases (`<data>/storage/`, the layout OpenCode's JSON →
/// SQLite migration reads) is read beside the database: its sessions the database does
/// not hold, their tool parts decided like the database's; a broken file is left out.
#[test]
fn legacy_json_storage_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("opencode.json"),
        r#"{"permission": {"bash": {"*": "ask", "ls *": "allow"}}}"#,
    )
    .unwrap();
    let data = root.join(".local/share/opencode");
    let storage = data.join("storage");
    let put = |rel: &str, v: &Value| {
        let p = storage.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, v.to_string()).unwrap();
    };
    let p = proj.to_str().unwrap();
    put(
        "session/prj/ses_a.json",
        &json!({"id": "ses_a", "directory": p, "title": "old", "time": {"created": 1}}),
    );
    put(
        "message/ses_a/msg_1.json",
        &json!({"id": "msg_1", "sessionID": "ses_a", "role": "assistant", "mode": "build"}),
    );
    put(
        "part/msg_1/prt_1.json",
        &json!({"id": "prt_1", "messageID": "msg_1", "sessionID": "ses_a", "type": "tool",
                "tool": "bash", "callID": "c1",
                "state": {"status": "completed", "input": {"command": "ls -la"}, "output": "x",
                          "time": {"start": 10, "end": 11}}}),
    );
    put(
        "part/msg_1/prt_2.json",
        &json!({"id": "prt_2", "messageID": "msg_1", "sessionID": "ses_a", "type": "tool",
                "tool": "bash", "callID": "c2",
                "state": {"status": "error", "input": {"command": "git push"},
                          "error": "The user rejected permission to use this specific tool call.",
                          "time": {"start": 20, "end": 21}}}),
    );
    put(
        "part/msg_1/prt_3.json",
        &json!({"id": "prt_3", "messageID": "msg_1", "type": "text", "text": "hi"}),
    );
    std::fs::write(storage.join("part/msg_1/prt_4.json"), "{not json").unwrap();
    let run = || pa(&proj, &root, &["history", "--format", "json"]);
    // No database at all: the JSON storage alone.
    let out = run();
    let v = json_of(&out);
    let got: Vec<(String, String, String, String)> = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("null").to_string();
            (s("call"), s("agent"), s("then"), s("now"))
        })
        .collect();
    let t = |a: &str, b: &str, c: &str, d: &str| {
        (a.to_string(), b.to_string(), c.to_string(), d.to_string())
    };
    assert_eq!(
        got,
        [
            t("c1", "build", "ran", "allow"),
            t("c2", "build", "rejected", "ask")
        ]
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 session read, 1 file left out"), "{err}");
    // A database holding the same session: its rows, the JSON copy left out.
    {
        let c = rusqlite::Connection::open(data.join("opencode.db")).unwrap();
        c.execute_batch(&format!(
            "CREATE TABLE session (id TEXT, parent_id TEXT, directory TEXT, agent TEXT, permission TEXT);
             CREATE TABLE message (id TEXT, data TEXT);
             CREATE TABLE part (id TEXT, session_id TEXT, message_id TEXT, time_created INTEGER, data TEXT);
             INSERT INTO session VALUES ('ses_a', NULL, '{p}', 'build', NULL);
             INSERT INTO message VALUES ('msg_1', '{{\"agent\":\"build\"}}');
             INSERT INTO part VALUES ('prt_9', 'ses_a', 'msg_1', 5,
               '{{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"c9\",\"state\":{{\"status\":\"completed\",\"input\":{{\"command\":\"ls\"}}}}}}');"
        ))
        .unwrap();
    }
    assert_eq!(each(&json_of(&run())["calls"], "call"), ["c9"]);
}

/// Where the rule goes: after the asking rule in an agent's own block (named in `agent`),
/// in the project config's shared block (a scalar `permission` kept as the catch-all), and
/// in the global config when the project has none; each written config loads again and
/// asks no more.
#[test]
fn suggest_writes_where_the_ask_is_decided() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let db = root.join("h.db");
    bash_history(
        &db,
        &proj,
        &[("s1", None, None), ("s2", None, None)],
        &[
            ("s1", "npm test", "completed"),
            ("s2", "npm test", "completed"),
        ],
    );
    let global = root.join(".config/opencode/opencode.json");
    let cases: &[(&str, Option<&str>, &str, &str, Value)] = &[
        (
            "agent block",
            Some(r#"{"agent": {"build": {"permission": {"bash": {"*": "ask", "rm *": "deny"}}}}}"#),
            "opencode.json",
            r#"{"agent": {"build": {"permission": {"bash": {"*": "ask", "rm *": "deny", "npm test *": "allow"}}}}}"#,
            json!("build"),
        ),
        (
            "scalar permission",
            Some(r#"{"permission": "ask"}"#),
            "opencode.json",
            r#"{"permission": {"*": "ask", "bash": {"npm test *": "allow"}}}"#,
            Value::Null,
        ),
        (
            "global config",
            None,
            "global",
            r#"{"permission": {"bash": {"*": "ask", "npm test *": "allow"}}}"#,
            Value::Null,
        ),
    ];
    for (what, project, file, want, agent) in cases {
        let _ = std::fs::remove_file(proj.join("opencode.json"));
        let _ = std::fs::remove_file(&global);
        // (A global `bash` block beside the scalar would come first in the merged object,
        // its key first, and the scalar's catch-all after every rule of it: no shared rule
        // could then allow.)
        match project {
            Some(p) => std::fs::write(proj.join("opencode.json"), p).unwrap(),
            None => {
                std::fs::create_dir_all(global.parent().unwrap()).unwrap();
                std::fs::write(&global, r#"{"permission": {"bash": {"*": "ask"}}}"#).unwrap();
            }
        }
        let args = ["suggest", "--db", db.to_str().unwrap(), "--format", "json"];
        let v = json_of(&pa(&proj, &root, &args));
        let p = &v["proposals"][0];
        assert_eq!(p["pattern"], "npm test *", "{what}: {v}");
        assert_eq!(p["agent"], *agent, "{what}: {v}");
        let mut w = args.to_vec();
        w.push("--write");
        assert_eq!(json_of(&pa(&proj, &root, &w))["written"], true, "{what}");
        let path = if *file == "global" {
            global.clone()
        } else {
            proj.join(file)
        };
        assert_eq!(std::fs::read_to_string(&path).unwrap(), *want, "{what}");
        let again = json_of(&pa(&proj, &root, &args));
        assert!(
            again["proposals"].as_array().unwrap().is_empty(),
            "{what}: {again}"
        );
        assert!(
            again["skipped"].as_array().unwrap().is_empty(),
            "{what}: {again}"
        );
    }
}

/// `diff --history`: a change to the committed config judged by the recorded calls. Each
/// call the change moves is listed with its decision on both sides, exactly the calls whose
/// `history` verdict differs between the two configs (each side's `history` run on its own),
/// the database untouched; and the real OpenCode denies a call the change now denies.
#[test]
fn diff_history_judges_a_change_by_the_recorded_calls() {
    let Some(rec) = recorded() else { return };
    let Located::Found(bin) = oracle::locate() else {
        return;
    };
    let root = copy_of(rec, "diff-history");
    let (proj, home) = (root.join("proj"), root.join("home"));
    let db = home.join(".local/share/opencode/opencode.db");
    let config = proj.join("opencode.json");
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(&proj)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    // The base: today's config, committed.
    let base = today();
    std::fs::write(&config, serde_json::to_string_pretty(&base).unwrap()).unwrap();
    git(&["add", "opencode.json"]);
    git(&["commit", "-q", "-m", "base"]);
    // The change: echo denied, touch asked, git log allowed.
    let mut head = base.clone();
    let bash = &mut head["permission"]["bash"];
    bash["echo *"] = json!("deny");
    bash["touch *"] = json!("ask");
    bash["git log *"] = json!("allow");
    // Each side's verdicts, as `history` gives them with that side in the work tree.
    let verdicts = |config_json: &Value| -> Vec<(String, Value)> {
        std::fs::write(&config, serde_json::to_string_pretty(config_json).unwrap()).unwrap();
        let v = json_of(&pa(&proj, &home, &["history", "--format", "json"]));
        v["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["call"].as_str().unwrap().to_string(), c["now"].clone()))
            .collect()
    };
    let (on_base, on_head) = (verdicts(&base), verdicts(&head));
    assert_eq!(on_base.len(), EXPECTED.len());
    let want: Vec<(String, Value, Value)> = on_base
        .iter()
        .zip(&on_head)
        .filter(|((_, b), (_, h))| b != h && !b.is_null() && !h.is_null())
        .map(|((id, b), (_, h))| (id.clone(), b.clone(), h.clone()))
        .collect();

    let before = snapshot(&db);
    let out = pa(&proj, &home, &["diff", "--history", "--format", "json"]);
    // A widening (git log now runs unasked): exit 1, as diff without --history.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(snapshot(&db) == before, "the database files changed");
    let h = &v["history"];
    let got: Vec<(String, Value, Value)> = h["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["call"].as_str().unwrap().to_string(),
                c["base"].clone(),
                c["head"].clone(),
            )
        })
        .collect();
    assert_eq!(got, want, "{}", serde_json::to_string_pretty(h).unwrap());
    assert_eq!(h["decided"], EXPECTED.len());
    assert_eq!(
        h["counts"],
        json!({"now_denied": 2, "now_asks": 1, "now_allowed": 3, "now_asks_not_denied": 0})
    );
    // Each moved check names its rule on both sides, the base's in the committed file.
    let echo = h["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["input"]["command"] == "echo late")
        .unwrap();
    assert_eq!(echo["then"], "ran");
    assert_eq!(echo["shift"], "now_denied");
    let k = &echo["checks"][0];
    assert_eq!(k["base_rule"]["source"]["path"], "HEAD:opencode.json");
    assert_eq!(k["base_rule"]["action"], "allow");
    assert_eq!(k["head_rule"]["source"]["path"], "opencode.json");
    assert_eq!(k["head_rule"]["action"], "deny");

    // The human section says the same, worst first.
    let text = String::from_utf8_lossy(
        &pa(&proj, &home, &["diff", "--history", "--color", "never"]).stdout,
    )
    .into_owned();
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s:?} in\n{text}"));
    assert!(at("would now be denied (2 calls)") < at("would now ask (1 call)"));
    assert!(at("would now ask (1 call)") < at("would now run without asking (3 calls)"));
    at("build: bash \"touch b.txt\"  (1 call: 1 rejected)");
    at("before: allow by `bash` \"echo *\" allow at HEAD:opencode.json:");

    // --history shows only as human or JSON; its options need it.
    let md = pa(&proj, &home, &["diff", "--history", "--format", "markdown"]);
    assert_eq!(md.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&md.stderr).contains("--history"));
    assert_eq!(
        pa(&proj, &home, &["diff", "--since", "2020-01-01"])
            .status
            .code(),
        Some(2)
    );

    // The real OpenCode under the head config denies the recorded call the change denies.
    let env = oracle_env(&root);
    let params = json!({"command": "echo late", "description": "probe"}).to_string();
    let r = oracle::debug_tool(&bin, &proj, &env, "bash", &params);
    assert_eq!(
        oracle::tool_fate(&r, "bash").unwrap(),
        oracle::ToolFate::Denied,
        "{r:?}"
    );
}
