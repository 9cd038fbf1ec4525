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
    ("HIST-D-GO", "call_3_0", "build", "bash", "ran", "allow"),
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
        json!({"ran": 7, "rejected": 2, "denied": 1})
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
}
