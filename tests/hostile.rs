//! Hostile and broken input, end to end: the real `permaudit` binary on temporary trees
//! (a git worktree `proj/`, an empty `home/` as HOME, `managed/` as the managed config dir,
//! no inherited OpenCode or XDG variables).
//!
//! Every case asserts the exact outcome: either a refusal (exit 2, `file:line:col`, what is
//! wrong) or OpenCode's own behaviour, checked against the real OpenCode 1.18.34 binary
//! (`opencode agent list --pure`, located as in the conformance suite: `OPENCODE_BIN` or
//! `.oracle/`). Every run is also checked for panics and signals, under a watchdog that
//! only guards against hangs (it is not a speed target: speed lives in the benchmarks).
//!
//! Also here: each limit of the "Limits" table (docs/limits.md) at and just past its value, and
//! the promise that no command writes anything (`no_command_writes_anything`).

mod support;

use permaudit::discover::MAX_WALK_DIRS;
use permaudit::load::{MAX_FILE_BYTES, MAX_PATTERN_CHARS, MAX_RULES};
use permaudit::syntax::frontmatter::MAX_DEPTH as YAML_MAX_DEPTH;
use permaudit::syntax::jsonc::MAX_NESTING;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::harness::{diff_agents, parse_permaudit_rules};
use support::oracle::{self, Agents, Located, Verdict};

/// Hang guard for one permaudit run. Generous on purpose: CI machines are slow and shared.
const WATCHDOG: Duration = Duration::from_secs(600);

// ---------------------------------------------------------------------------------------
// Harness

struct Tree {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }

    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .stdout(Stdio::null())
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        for d in ["proj", "home", "managed"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        git(&dir.path().join("proj"), &["init", "-q"]);
        Tree {
            dir,
            env: Vec::new(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// Write a file relative to the tree's root (`proj/opencode.json`, `home/…`).
    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Tree {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
        self
    }

    fn var(mut self, k: &str, v: &str) -> Tree {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    fn base_env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), self.path("home").display().to_string()),
            (
                "OPENCODE_TEST_MANAGED_CONFIG_DIR".into(),
                self.path("managed").display().to_string(),
            ),
        ];
        env.extend(self.env.iter().cloned());
        env
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_with(&[], args, b"")
    }

    /// `permaudit -C proj --color never ARGS`, after `prefix` (e.g. `setpriv …`), with
    /// `stdin`, under the watchdog; asserts it neither panicked nor died of a signal.
    fn run_with(&self, prefix: &[&str], args: &[&str], stdin: &[u8]) -> Out {
        let bin = env!("CARGO_BIN_EXE_permaudit");
        let mut cmd = match prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.env_clear()
            .envs(self.base_env())
            .arg("-C")
            .arg(self.path("proj"))
            .args(["--color", "never"])
            .args(args);
        let out = watched(cmd, stdin, &format!("permaudit {args:?}"));
        assert!(
            !out.stderr.contains("panicked"),
            "permaudit {args:?} panicked:\n{}",
            out.stderr
        );
        assert!(
            out.code.is_some(),
            "permaudit {args:?} died of a signal (stack overflow?):\n{}",
            out.stderr
        );
        out
    }

    /// `opencode agent list --pure` on this tree (run it last: OpenCode writes `$schema`
    /// into configs). `None` when the oracle is skipped (fast tier, `support::tier`).
    fn oracle(&self) -> Option<Verdict> {
        self.oracle_with(&[])
    }

    fn oracle_with(&self, prefix: &[&str]) -> Option<Verdict> {
        let bin = match oracle::locate() {
            Located::Found(b) => b,
            Located::Skip => return None,
        };
        let mut env = self.base_env();
        env.push(("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()));
        env.push(("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into()));
        let mut args: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        args.push(bin.display().to_string());
        args.extend(["agent", "list", "--pure"].map(String::from));
        let (first, rest) = args.split_first().unwrap();
        // Standard output goes to a file, not a pipe: Bun may exit before a slow reader has
        // drained a pipe, cutting a long `agent list` short (seen on a loaded machine).
        use std::io::Seek;
        let mut stdout = tempfile::tempfile().expect("a temporary file for the oracle's output");
        let out = Command::new("timeout")
            .arg(oracle::TIMEOUT_SECS.to_string())
            .arg(first)
            .args(rest)
            .env_clear()
            .envs(env)
            .current_dir(self.path("proj"))
            .stdin(Stdio::null())
            .stdout(stdout.try_clone().expect("the output file, twice"))
            .output()
            .unwrap_or_else(|e| panic!("cannot spawn opencode agent list: {e}"));
        let mut bytes = Vec::new();
        stdout.rewind().expect("rewind the oracle's output");
        stdout
            .read_to_end(&mut bytes)
            .expect("read the oracle's output");
        let run = oracle::Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&bytes).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        Some(oracle::verdict(&run).unwrap_or_else(|e| panic!("oracle unusable: {e}")))
    }

    /// permaudit's rulesets equal OpenCode's (and permaudit accepted the tree).
    fn same_as_opencode(&self) {
        self.same_as_opencode_with(&[]);
    }

    fn same_as_opencode_with(&self, prefix: &[&str]) {
        let pa = self.run_with(prefix, &["rules", "--format", "json"], b"");
        assert_eq!(pa.code, Some(0), "permaudit refused:\n{}", pa.stderr);
        let ours = parse_permaudit_rules(&pa.stdout).unwrap();
        match self.oracle_with(prefix) {
            None => {}
            Some(Verdict::Agents(theirs)) => {
                if let Some(d) = diff_agents(&theirs, &ours, self.root()) {
                    panic!("permaudit differs from OpenCode:\n{d}");
                }
            }
            Some(other) => panic!("OpenCode did not start: {other:?}"),
        }
    }

    /// OpenCode does not start on this tree (a refusal or a crash); its message.
    fn opencode_refuses(&self) -> Option<String> {
        match self.oracle()? {
            Verdict::Agents(_) => panic!("OpenCode accepted the tree"),
            Verdict::Refused(r) => Some(r.message),
            Verdict::Crashed(m) => Some(m),
        }
    }

    fn git_add(&self, files: &[&str]) {
        for f in files {
            self.write(&format!("proj/{f}"), "x");
        }
        git(&self.path("proj"), &["add", "-A"]);
    }
}

/// Run `cmd` with `stdin`, killing it at the watchdog; the hang guard fails the test.
fn watched(mut cmd: Command, stdin: &[u8], what: &str) -> Out {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {what}: {e}"));
    let pipe = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = pipe(Box::new(child.stdout.take().unwrap()));
    let err = pipe(Box::new(child.stderr.take().unwrap()));
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} hung: killed after {WATCHDOG:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    Out {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
    }
}

/// 1-based line and column (Unicode scalar values, as permaudit counts) of the first
/// occurrence of `needle` in `text`.
fn pos(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the text"));
    pos_at(text, at)
}

fn pos_at(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..at].chars().count() + 1)
}

/// Every command that loads the config (the only ones that can meet broken input).
const COMMANDS: &[&[&str]] = &[
    &["check"],
    &["check", "--format", "json"],
    &["check", "--format", "sarif"],
    &["check", "--format", "github"],
    &["rules"],
    &["rules", "--format", "json"],
    &["explain", "edit", "src/x.ts"],
    &["explain", "bash", "--stdin"],
    &["map"],
    &["map", "--format", "json"],
];

/// Every command exits 2 with `FILE:LINE:COL: error: ` and `what` on stderr, nothing on
/// stdout but `check`'s machine formats, which carry the refusal at the same place. Every
/// command names a file in the project relative to the project root.
fn refused_everywhere(t: &Tree, file: &str, (line, col): (usize, usize), what: &str) {
    let path = t.path(file);
    let relative = path.strip_prefix(t.path("proj")).unwrap_or(&path);
    for args in COMMANDS {
        let shown = relative;
        let head = format!("{}:{line}:{col}: error: ", shown.display());
        let out = t.run_with(&[], args, b"ls\n");
        assert_eq!(out.code, Some(2), "{args:?}:\n{}", out.stderr);
        assert!(
            out.stderr.starts_with(&head) || out.stderr.contains(&format!("\n{head}")),
            "{args:?}: expected {head:?}…\n{}",
            out.stderr
        );
        assert!(
            out.stderr.contains(what),
            "{args:?}: expected {what:?}:\n{}",
            out.stderr
        );
        // The snippet, when there is one, is at the headline's place, and no byte of the
        // file reaches the terminal raw.
        let frame = format!("╭─[{}:{line}:{col}]", shown.display());
        assert!(
            !out.stderr.contains("╭─[") || out.stderr.contains(&frame),
            "{args:?}: expected the snippet at {frame:?}:\n{}",
            out.stderr
        );
        assert!(
            !(out.stderr.clone() + &out.stdout).contains(|c: char| c.is_control() && c != '\n'),
            "{args:?}: a control character reached the terminal:\n{:?}",
            out.stderr
        );
        match args {
            ["check", "--format", "json"] => {
                let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
                let at = (
                    &v["error"]["source"]["line"],
                    &v["error"]["source"]["column"],
                );
                assert_eq!(at, (&line.into(), &col.into()), "{args:?}: {v}");
            }
            ["check", "--format", "sarif"] => {
                let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
                let note = &v["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
                let region = &note["locations"][0]["physicalLocation"]["region"];
                assert_eq!(region["startLine"], line, "{args:?}: {v}");
                assert_eq!(region["startColumn"], col, "{args:?}: {v}");
            }
            ["check", "--format", "github"] => assert!(
                out.stdout.starts_with("::error ")
                    && out.stdout.contains(&format!(",line={line},col={col},")),
                "{args:?}: {}",
                out.stdout
            ),
            _ => assert!(out.stdout.is_empty(), "{args:?} printed:\n{}", out.stdout),
        }
    }
}

/// Every command runs to completion on an accepted tree (`check` may find something).
fn accepted_everywhere(t: &Tree) {
    for args in COMMANDS {
        let out = t.run_with(&[], args, b"ls\n");
        let ok = if args[0] == "check" {
            matches!(out.code, Some(0 | 1))
        } else {
            out.code == Some(0)
        };
        assert!(ok, "{args:?} exited {:?}:\n{}", out.code, out.stderr);
    }
}

/// `permaudit explain PERMISSION --format json` on stdin lines: the actions.
fn actions(t: &Tree, permission: &str, inputs: &[&str]) -> Vec<String> {
    let stdin: String = inputs.iter().map(|i| format!("{i}\n")).collect();
    let out = t.run_with(
        &[],
        &["explain", permission, "--stdin", "--format", "json"],
        stdin.as_bytes(),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    out.json_lines()
        .iter()
        .map(|v| v["action"].as_str().unwrap().to_string())
        .collect()
}

/// `(line, column)` of the first rule of `agent` with each pattern (`rules --format json`).
fn rule_positions(t: &Tree, agent: &str, patterns: &[&str]) -> Vec<(usize, usize)> {
    let v = t
        .run(&["rules", "--agent", agent, "--format", "json"])
        .json();
    let rules = v["rules"].as_array().unwrap();
    patterns
        .iter()
        .map(|p| {
            let r = rules
                .iter()
                .find(|r| r["pattern"] == *p)
                .unwrap_or_else(|| panic!("no rule {p:?}"));
            let n = |k: &str| r["source"][k].as_u64().unwrap() as usize;
            (n("line"), n("column"))
        })
        .collect()
}

/// The first OpenCode JSONC error position (`… at line L, column C`).
fn opencode_error_at(msg: &str) -> (usize, usize) {
    let r = oracle::parse_refusal(&oracle::strip_ansi(msg)).expect("a JSONC refusal");
    let (l, c) = r.syntax_at.expect("a position");
    (l as usize, c as usize)
}

// ---------------------------------------------------------------------------------------
// Encoding: invalid UTF-8, BOM, NUL, CRLF

#[test]
fn invalid_utf8_inside_a_string_becomes_u_fffd_as_in_opencode() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        b"{\"permission\":{\"edit\":{\"a\xffb\":\"deny\"}}}",
    );
    accepted_everywhere(&t);
    assert_eq!(
        actions(&t, "edit", &["a\u{fffd}b", "ab"]),
        ["deny", "allow"]
    );
    t.same_as_opencode();
}

#[test]
fn invalid_utf8_between_tokens_is_refused_where_opencode_refuses_it() {
    let t = Tree::new();
    let text = b"{\"permission\":{\"edit\":\"deny\"}}\xff";
    t.write("proj/opencode.json", text);
    refused_everywhere(&t, "proj/opencode.json", (1, 31), "not valid JSONC");
    if let Some(msg) = t.opencode_refuses() {
        assert_eq!(opencode_error_at(&msg), (1, 31), "{msg}");
    }
}

#[test]
fn a_bom_is_accepted_in_files_as_in_opencode() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        "\u{feff}{\"permission\":{\"edit\":{\"tests/**\":\"deny\"}}}",
    );
    accepted_everywhere(&t);
    // The BOM is not a column.
    assert_eq!(rule_positions(&t, "build", &["tests/**"]), [(1, 24)]);
    t.same_as_opencode();
    // Nor in errors.
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        "\u{feff}{\"permission\":{\"edit\":deny}}",
    );
    refused_everywhere(&t, "proj/opencode.json", (1, 23), "not valid JSONC");
    if let Some(msg) = t.opencode_refuses() {
        assert_eq!(opencode_error_at(&msg), (1, 23), "{msg}");
    }
}

#[test]
fn a_bom_anywhere_else_is_refused_as_in_opencode() {
    // OPENCODE_CONFIG_CONTENT has no file decoder to drop a BOM.
    let t = Tree::new().var("OPENCODE_CONFIG_CONTENT", "\u{feff}{}");
    let out = t.run(&["rules"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("env:OPENCODE_CONFIG_CONTENT:1:1: error: not valid JSONC"),
        "{}",
        out.stderr
    );
    t.opencode_refuses();
    // A BOM after the start of a file.
    let t = Tree::new();
    t.write("proj/opencode.json", "{\"permission\":\u{feff}{}}");
    refused_everywhere(&t, "proj/opencode.json", (1, 15), "InvalidSymbol");
    if let Some(msg) = t.opencode_refuses() {
        assert_eq!(opencode_error_at(&msg), (1, 15), "{msg}");
    }
}

#[test]
fn nul_bytes_are_refused_in_strings_and_code_and_ignored_in_comments() {
    for (text, at) in [
        (
            &b"{\"permission\":{\"edit\":{\"a\x00b\":\"deny\"}}}"[..],
            (1, 24),
        ),
        (&b"{\"permission\":\x00{\"edit\":\"deny\"}}"[..], (1, 15)),
    ] {
        let t = Tree::new();
        t.write("proj/opencode.json", text);
        refused_everywhere(&t, "proj/opencode.json", at, "not valid JSONC");
        if let Some(msg) = t.opencode_refuses() {
            assert_eq!(opencode_error_at(&msg), at, "{msg}");
        }
    }
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        b"{\"permission\":{\"edit\":\"deny\"}} // a\x00b\n",
    );
    accepted_everywhere(&t);
    t.same_as_opencode();
}

#[test]
fn a_binary_file_is_refused_as_binary_and_shown_without_its_raw_bytes() {
    let t = Tree::new();
    let mut bytes = b"\x7fELF\x02\x01\x01\x00\x00\x1b[31m\x00".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0x00, 0x07, b'\r', 0x08]);
    t.write("proj/opencode.json", &bytes);
    refused_everywhere(&t, "proj/opencode.json", (1, 1), "the file is binary");
    // No snippet of replacement glyphs: the file and the byte offset find the place.
    let out = t.run(&["check"]);
    assert!(
        out.stderr
            .contains("the error is at byte offset 0 of opencode.json"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("╭─["), "{}", out.stderr);
    t.opencode_refuses();
    // The offset is the file's own, past bytes the decoder replaced (`\xff` and `\xfe`:
    // one byte each, each a U+FFFD of three bytes; the refused `\x00` is byte 6).
    let t = Tree::new();
    t.write("proj/opencode.json", b"{\"\xff\xfe\":\x00}");
    let out = t.run(&["check"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the error is at byte offset 6 of opencode.json"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_file_that_is_not_utf8_says_so_where_opencode_refuses_it() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        b"{\n  \"permission\": {\"bash\": \"al\xe9ow\"}\n}\n",
    );
    refused_everywhere(
        &t,
        "proj/opencode.json",
        (2, 26),
        "the file is not valid UTF-8: OpenCode reads each bad byte sequence as U+FFFD, the first at 2:29",
    );
    t.opencode_refuses();
}

#[test]
fn control_characters_in_keys_never_reach_the_terminal() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        r#"{"permission": {"\u001b[31mx": "deny", "bash": {"\u001b]0;t\u0007*": "ask"}}}"#,
    );
    for args in [
        &["check"][..],
        &["check", "--color", "always"],
        &["rules"],
        &["explain", "\u{1b}[31mx", "foo"],
        &["explain", "bash", "\u{1b}]0;t\u{7}ls"],
        &["map"],
    ] {
        let out = t.run(args);
        assert!(matches!(out.code, Some(0 | 1)), "{args:?}: {}", out.stderr);
        let text = out.stdout + &out.stderr;
        // `--color always` paints with SGR sequences of its own; none carries the config's.
        assert!(
            !text.contains("\u{1b}[31mx") && !text.contains('\u{7}') && !text.contains("\u{1b}]"),
            "{args:?}: a control character of the config reached the terminal:\n{text:?}"
        );
        if !args.contains(&"always") {
            assert!(!text.contains('\u{1b}'), "{args:?}:\n{text:?}");
        }
    }
}

#[test]
fn cr_only_files_have_the_lines_and_columns_opencode_reports() {
    // OpenCode counts lines by LF alone: a lone CR is not a line end in its errors.
    let text = "{\r  \"permission\": {\r    \"edit\": deny\r  }\r}\r";
    let t = Tree::new();
    t.write("proj/opencode.json", text);
    refused_everywhere(
        &t,
        "proj/opencode.json",
        (1, 33),
        "ends lines with a lone CR",
    );
    // An editor breaks the line at each CR: `deny` is on its third line.
    let out = t.run(&["check"]);
    assert!(
        out.stderr.contains("(an editor shows this place at 3:13)"),
        "{}",
        out.stderr
    );
    if let Some(msg) = t.opencode_refuses() {
        assert_eq!(opencode_error_at(&msg), (1, 33), "{msg}");
    }
    let text = "{\r  \"permission\": {\r    \"bash\": \"alow\"\r  }\r}\r";
    let t = Tree::new();
    t.write("proj/opencode.json", text);
    refused_everywhere(&t, "proj/opencode.json", (1, 33), "got \"alow\"");
    t.opencode_refuses();
}

#[test]
fn crlf_files_have_the_lines_and_columns_opencode_reports() {
    let text = "{\r\n  \"permission\": {\r\n    \"edit\": deny\r\n  }\r\n}\r\n";
    let t = Tree::new();
    t.write("proj/opencode.json", text);
    refused_everywhere(&t, "proj/opencode.json", (3, 13), "not valid JSONC");
    if let Some(msg) = t.opencode_refuses() {
        assert_eq!(opencode_error_at(&msg), (3, 13), "{msg}");
    }
    // A valid CRLF file: rules point at their keys.
    let text = "{\r\n  \"permission\": {\r\n    \"edit\": {\r\n      \"tests/**\": \"deny\"\r\n    }\r\n  }\r\n}\r\n";
    let t = Tree::new();
    t.write("proj/opencode.json", text);
    accepted_everywhere(&t);
    assert_eq!(
        rule_positions(&t, "build", &["tests/**"]),
        [pos(text, "\"tests/**\"")]
    );
    t.same_as_opencode();
}

// ---------------------------------------------------------------------------------------
// Size: big files, many rules, deep nesting, long patterns

/// A valid config of exactly `size` bytes: one rule, then a comment padding it out.
fn padded_config(size: usize) -> Vec<u8> {
    let mut text = b"{\"permission\":{\"edit\":{\"tests/**\":\"deny\"}}}\n".to_vec();
    let line = [b"//".as_slice(), &[b'x'; 97], b"\n"].concat();
    while text.len() + line.len() <= size {
        text.extend_from_slice(&line);
    }
    let rest = size - text.len();
    if rest >= 3 {
        text.extend_from_slice(b"//");
        text.extend(std::iter::repeat_n(b'x', rest - 2));
    } else {
        text.extend(std::iter::repeat_n(b'\n', rest));
    }
    assert_eq!(text.len(), size);
    text
}

#[test]
fn a_100_mb_config_is_read() {
    let t = Tree::new();
    t.write("proj/opencode.json", padded_config(100 * 1000 * 1000));
    accepted_everywhere(&t);
    assert_eq!(
        actions(&t, "edit", &["tests/a", "src/a"]),
        ["deny", "allow"]
    );
}

#[test]
fn file_size_limit_at_and_past() {
    let limit = MAX_FILE_BYTES as usize;
    let t = Tree::new();
    t.write("proj/opencode.json", padded_config(limit));
    let out = t.run(&["rules", "--agent", "build"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(actions(&t, "edit", &["tests/a"]), ["deny"]);
    t.write("proj/opencode.json", padded_config(limit + 1));
    let want = format!(
        "error: {}: cannot read: larger than permaudit's limit of {} MiB",
        t.path("proj/opencode.json").display(),
        limit >> 20
    );
    for args in COMMANDS {
        let out = t.run_with(&[], args, b"");
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(&want), "{args:?}: {}", out.stderr);
    }
}

/// A config of `n` edit rules, one a line: `"p0/*": "deny"`, …
fn many_rules(n: usize) -> String {
    let mut text = String::from("{\"permission\":{\"edit\":{\n");
    for i in 0..n {
        let action = ["allow", "ask", "deny"][i % 3];
        text.push_str(&format!("  \"p{i}/*\": \"{action}\",\n"));
    }
    text.push_str("}}}\n");
    text
}

#[test]
fn rule_count_limit_at_and_past() {
    let t = Tree::new();
    t.git_add(&["p0/a", "p1/a", "p2/a", "src/a"]);
    t.write("proj/opencode.json", many_rules(MAX_RULES));
    let v = t
        .run(&["rules", "--agent", "build", "--format", "json"])
        .json();
    let project = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["layer"] == "project")
        .count();
    assert_eq!(project, MAX_RULES);
    let last = MAX_RULES - 1;
    assert_eq!(
        actions(&t, "edit", &["p0/a", "p1/a", "p2/a", &format!("p{last}/a")]),
        ["allow", "ask", "deny", ["allow", "ask", "deny"][last % 3]]
    );
    let map = t.run(&["map", "--format", "json", "--agent", "build"]);
    assert_eq!(map.code, Some(0), "{}", map.stderr);
    let edits: Vec<String> = map
        .json_lines()
        .iter()
        .map(|r| r["edit"]["action"].as_str().unwrap().to_string())
        .collect();
    // p0/a, p1/a, p2/a, src/a in git's order (the config is not tracked).
    assert_eq!(edits, ["allow", "ask", "deny", "allow"]);

    let text = many_rules(MAX_RULES + 1);
    t.write("proj/opencode.json", &text);
    refused_everywhere(
        &t,
        "proj/opencode.json",
        pos(&text, &format!("\"p{MAX_RULES}/*\"")),
        &format!("more than {MAX_RULES} permission rules"),
    );
}

#[test]
fn a_minified_config_of_many_rules_has_exact_columns() {
    // One line of 2.7 MB: every rule needs a column on it.
    let mut text = String::from("{\"permission\":{\"edit\":{\"*\":\"ask\",");
    for i in 0..MAX_RULES - 1 {
        text.push_str(&format!("\"ü{i}/*\":\"deny\","));
    }
    text.push_str("}}}");
    let t = Tree::new();
    t.write("proj/opencode.json", &text);
    let last = format!("ü{}/*", MAX_RULES - 2);
    let needles = ["ü0/*", "ü50000/*", &last];
    let want: Vec<_> = needles
        .iter()
        .map(|n| pos(&text, &format!("\"{n}\"")))
        .collect();
    assert_eq!(rule_positions(&t, "build", &needles), want);
    assert_eq!(actions(&t, "edit", &["ü7/x", "u7/x"]), ["deny", "ask"]);
    // An error far along that line: its column, and no snippet of a 2 MB line.
    let broken = format!("{}deny,}}}}}}", text.strip_suffix("\"deny\",}}}").unwrap());
    t.write("proj/opencode.json", &broken);
    refused_everywhere(
        &t,
        "proj/opencode.json",
        pos_at(&broken, broken.len() - "deny,}}}".len()),
        "not valid JSONC",
    );
}

#[test]
fn findings_on_a_long_line_name_their_place_without_a_snippet() {
    let mut text =
        String::from("{\"permission\":{\"edit\":{\"tests/**\":\"deny\",\"**\":\"allow\"");
    for i in 0..300 {
        text.push_str(&format!(",\"src/d{i}/*\":\"ask\""));
    }
    text.push_str("}}}");
    let t = Tree::new();
    t.write("proj/opencode.json", &text);
    let out = t.run(&["check"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let (l, c) = pos(&text, "\"tests/**\"");
    let at = format!("  at opencode.json:{l}:{c}\n");
    assert!(out.stdout.contains(&at), "{}", out.stdout);
    assert!(
        !out.stdout.contains("src/d299"),
        "a snippet of the line:\n{}",
        out.stdout
    );
}

/// `check` on the largest config permaudit accepts (100,000 literal-prefix rules of one
/// permission: about 13 s of CPU on the 2-core reference machine since the analysis indexes
/// rules by literal prefix; it took over 15 minutes before).
#[test]
fn check_on_the_rule_count_limit_finishes() {
    let t = Tree::new();
    t.write("proj/opencode.json", many_rules(MAX_RULES));
    let out = t.run(&["check", "--format", "json"]);
    assert!(matches!(out.code, Some(0 | 1)), "{}", out.stderr);
    out.json();
}

/// `k` nested empty arrays.
fn brackets(k: usize) -> String {
    format!("{}{}", "[".repeat(k), "]".repeat(k))
}

/// A config nesting `depth` levels (the top-level object is one) after one rule.
fn nested_config(depth: usize) -> String {
    let x = brackets(depth - 1);
    format!("{{\"permission\":{{\"edit\":\"deny\"}},\n\"x\":{x}}}")
}

#[test]
fn json_nesting_limit_at_and_past() {
    let t = Tree::new();
    t.write("proj/opencode.json", nested_config(MAX_NESTING));
    accepted_everywhere(&t);
    t.same_as_opencode();
    // One more level: OpenCode still reads it; permaudit says it is past its limit.
    let text = nested_config(MAX_NESTING + 1);
    t.write("proj/opencode.json", &text);
    let bracket = text.find('[').unwrap() + MAX_NESTING - 1;
    refused_everywhere(
        &t,
        "proj/opencode.json",
        pos_at(&text, bracket),
        &format!("nesting deeper than {MAX_NESTING} levels: past permaudit's limit"),
    );
    // (None: the oracle is skipped in the fast tier.)
    if let Some(v) = t.oracle() {
        assert!(
            matches!(v, Verdict::Agents(_)),
            "OpenCode should accept {} levels",
            MAX_NESTING + 1
        );
    }
}

#[test]
fn json_nested_100_000_deep_is_refused_without_overflowing() {
    let text = nested_config(100_000);
    let t = Tree::new();
    t.write("proj/opencode.json", &text);
    let bracket = text.find('[').unwrap() + MAX_NESTING - 1;
    refused_everywhere(
        &t,
        "proj/opencode.json",
        pos_at(&text, bracket),
        "past permaudit's limit",
    );
    // OpenCode itself dies of it.
    if let Some(msg) = t.opencode_refuses() {
        assert!(msg.contains("Maximum call stack size exceeded"), "{msg}");
    }
    // The same in the environment.
    // (An environment string is at most 128 KiB on Linux.)
    let deep = brackets(20_000);
    for var in ["OPENCODE_CONFIG_CONTENT", "OPENCODE_PERMISSION"] {
        let t = Tree::new().var(var, &format!("{{\"edit\":{deep}}}"));
        let out = t.run(&["rules"]);
        assert_eq!(out.code, Some(2), "{var}: {}", out.stderr);
        let col = 7 + MAX_NESTING; // `{"edit":` then the brackets
        assert!(
            out.stderr.starts_with(&format!(
                "env:{var}:1:{}: error: permaudit cannot audit this: nesting deeper",
                col + 1
            )),
            "{var}: {}",
            out.stderr
        );
    }
}

/// An agent file whose frontmatter nests `depth` levels (the mapping is one).
fn nested_agent(depth: usize) -> String {
    let x = brackets(depth - 1);
    format!("---\npermission:\n  edit: deny\nx: {x}\n---\nbody\n")
}

#[test]
fn frontmatter_nesting_limit_at_and_past() {
    let t = Tree::new();
    t.write("proj/.opencode/agent/a.md", nested_agent(YAML_MAX_DEPTH));
    let out = t.run(&["explain", "edit", "x", "--agent", "a", "--format", "json"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.json()["action"], "deny", "{}", out.stdout);
    for depth in [YAML_MAX_DEPTH + 1, 100_000] {
        let text = nested_agent(depth);
        t.write("proj/.opencode/agent/a.md", &text);
        let bracket = text.find('[').unwrap() + YAML_MAX_DEPTH - 1;
        refused_everywhere(
            &t,
            "proj/.opencode/agent/a.md",
            pos_at(&text, bracket),
            &format!(
                "agent `a`: nesting deeper than {YAML_MAX_DEPTH} levels: past permaudit's limit"
            ),
        );
    }
    // OpenCode reads the agent and its rule at any of these depths (the last text is
    // 100,000 deep: use one just past the limit).
    t.write(
        "proj/.opencode/agent/a.md",
        nested_agent(YAML_MAX_DEPTH + 1),
    );
    if let Some(v) = t.oracle() {
        let Verdict::Agents(a) = v else {
            panic!("OpenCode refused: {v:?}")
        };
        let rules = &a["a"].rules;
        assert!(
            rules
                .iter()
                .any(|r| r.permission == "edit" && r.action == "deny"),
            "{rules:?}"
        );
    }
}

#[test]
fn frontmatter_size_limits_at_and_past() {
    use permaudit::syntax::frontmatter::{MAX_NODES, MAX_STRING_BYTES};
    let t = Tree::new();
    let file = "proj/.opencode/agent/a.md";
    let head = "---\npermission:\n  edit: deny\n";
    // Nodes: 7 besides the list's items (4 for the rule, the key `x`, the list, the mapping).
    let nodes = |n: usize| format!("{head}x: [{}]\n---\nbody\n", vec!["1"; n].join(","));
    // Bytes of strings, keys and alias copies included: 63 MiB through one anchor, then a
    // string that fills up to the limit (keys: permission, edit, deny, a, b, c).
    let mib = 1 << 20;
    let keys = "permissioneditdenyabc".len();
    let bytes = |pad: usize| {
        format!(
            "{head}a: &a \"{}\"\nb: [{}]\nc: \"{}\"\n---\nbody\n",
            "x".repeat(mib),
            vec!["*a"; MAX_STRING_BYTES / mib - 2].join(","),
            "y".repeat(pad)
        )
    };
    let at_bytes = MAX_STRING_BYTES - (MAX_STRING_BYTES / mib - 1) * mib - keys;
    for at in [nodes(MAX_NODES - 7), bytes(at_bytes)] {
        t.write(file, &at);
        let out = t.run(&["explain", "edit", "x", "--agent", "a", "--format", "json"]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        assert_eq!(out.json()["action"], "deny");
    }
    for (past, at) in [
        (nodes(MAX_NODES - 6), "permission"),
        (bytes(at_bytes + 1), "\"y"),
    ] {
        t.write(file, &past);
        refused_everywhere(
            &t,
            file,
            pos(&past, at),
            "agent `a`: the frontmatter expands to more than",
        );
    }
}

#[test]
fn pattern_length_limit_at_and_past() {
    let t = Tree::new();
    let at = format!("{}*", "a".repeat(MAX_PATTERN_CHARS - 1));
    let text = format!(
        "{{\"permission\":{{\"edit\":{{\"*\":\"allow\",\"{at}\":\"deny\",\"*a\":\"ask\"}}}}}}"
    );
    t.write("proj/opencode.json", &text);
    accepted_everywhere(&t);
    let long = "a".repeat(MAX_PATTERN_CHARS + 10);
    assert_eq!(actions(&t, "edit", &[&long, "ab"]), ["ask", "allow"]);
    let mut b = long.clone();
    b.push('b');
    assert_eq!(actions(&t, "edit", &[&b]), ["deny"]);
    // One character more, as a pattern and as a permission key.
    let past = "é".repeat(MAX_PATTERN_CHARS + 1);
    for text in [
        format!("{{\"permission\":{{\"edit\":{{\"*\":\"allow\",\"{past}\":\"deny\"}}}}}}"),
        format!("{{\"permission\":{{\"{past}\":\"deny\"}}}}"),
    ] {
        t.write("proj/opencode.json", &text);
        refused_everywhere(
            &t,
            "proj/opencode.json",
            pos(&text, &format!("\"{past}\"")),
            &format!(
                "of {} characters: past permaudit's limit of {MAX_PATTERN_CHARS}",
                MAX_PATTERN_CHARS + 1
            ),
        );
    }
}

#[test]
fn a_one_megabyte_pattern_is_refused_and_a_one_megabyte_input_is_decided() {
    let big = "a".repeat(1 << 20);
    let text = format!("{{\"permission\":{{\"edit\":{{\"{big}*\":\"deny\"}}}}}}");
    let t = Tree::new();
    t.write("proj/opencode.json", &text);
    refused_everywhere(&t, "proj/opencode.json", (1, 24), "past permaudit's limit");
    // A megabyte of input against ordinary rules.
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        "{\"permission\":{\"edit\":{\"*\":\"allow\",\"a*b\":\"deny\",\"*a\":\"ask\"}}}",
    );
    let b = format!("{big}b");
    assert_eq!(actions(&t, "edit", &[&big, &b]), ["ask", "deny"]);
}

/// OpenCode's RegExp for a pattern (spec §1), for the `regex` crate (linear time).
fn opencode_regex(pattern: &str) -> regex::Regex {
    let mut re = String::from("(?s)^");
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).unwrap()
}

#[test]
fn pathological_patterns_are_decided_and_analysed_in_bounded_time() {
    let star_a = "*a".repeat(200);
    let star_ab = "*a*b".repeat(100);
    let text = format!(
        "{{\"permission\":{{\"edit\":{{\"*\":\"allow\",\"{star_a}\":\"deny\",\"{star_ab}\":\"ask\",\"{star_a}*\":\"deny\"}},\"bash\":{{\"{star_a}\":\"deny\",\"*\":\"ask\",\"{star_ab} *\":\"allow\"}}}}}}"
    );
    let t = Tree::new();
    t.git_add(&["a", "src/aaa"]);
    t.write("proj/opencode.json", &text);
    accepted_everywhere(&t);
    // Each decision agrees with OpenCode's regular expressions, evaluated by a linear-time
    // engine: last matching rule wins.
    let inputs: Vec<String> = vec![
        "a".repeat(199),
        "a".repeat(200),
        "a".repeat(300),
        format!("{}b", "a".repeat(300)),
        "ab".repeat(99),
        "ab".repeat(150),
        "ab".repeat(200_000),
        format!("{}c", "ab".repeat(200_000)),
        "a".repeat(1 << 20),
    ];
    let edit = [
        ("*", "allow"),
        (star_a.as_str(), "deny"),
        (star_ab.as_str(), "ask"),
        (&format!("{star_a}*"), "deny"),
    ];
    let expected: Vec<&str> = inputs
        .iter()
        .map(|i| {
            edit.iter()
                .rev()
                .find(|(p, _)| opencode_regex(p).is_match(i))
                .map_or("ask", |(_, a)| *a)
        })
        .collect();
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    assert_eq!(actions(&t, "edit", &refs), expected);
    // The analysis: bounded, and its JSON well-formed (over budget it says nothing).
    let out = t.run(&["check", "--format", "json"]);
    assert!(matches!(out.code, Some(0 | 1)), "{}", out.stderr);
    out.json();
}

// ---------------------------------------------------------------------------------------
// Empty keys, non-object configs, injection

#[test]
fn empty_permission_keys_and_patterns_are_rules_as_in_opencode() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        "{\"permission\":{\"edit\":{\"\":\"ask\",\"x\":\"deny\"},\"\":\"deny\",\"bash\":{\"\":\"deny\"}}}",
    );
    accepted_everywhere(&t);
    assert_eq!(
        actions(&t, "edit", &["", "x", "y"]),
        ["ask", "deny", "allow"]
    );
    assert_eq!(actions(&t, "", &["anything"]), ["deny"]);
    t.same_as_opencode();
}

#[test]
fn a_top_level_that_is_not_an_object_is_refused_as_in_opencode() {
    for (text, got) in [
        ("[]", "got [...]"),
        ("\"x\"", "got \"x\""),
        ("1", "got 1"),
        ("null", "got null"),
        ("true", "got true"),
    ] {
        let t = Tree::new();
        t.write("proj/opencode.json", text);
        refused_everywhere(&t, "proj/opencode.json", (1, 1), got);
        if let Some(msg) = t.opencode_refuses() {
            assert!(msg.contains("Expected Config"), "{msg}");
        }
    }
    let t = Tree::new().var("OPENCODE_CONFIG_CONTENT", "[1]");
    let out = t.run(&["rules"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr
            .starts_with("env:OPENCODE_CONFIG_CONTENT:1:1: error: OpenCode refuses this config"),
        "{}",
        out.stderr
    );
}

#[test]
fn json_injected_through_env_is_read_as_opencode_reads_it() {
    let text = "{\n  \"permission\": {\"bash\": \"{env:EVIL}\"}\n}\n";
    // Structure injected: an extra rule, and the audit says where it came from.
    let t = Tree::new().var("EVIL", "deny\", \"edit\": \"deny");
    t.write("proj/opencode.json", text);
    accepted_everywhere(&t);
    assert_eq!(actions(&t, "edit", &["x"]), ["deny"]);
    let v = t.run(&["check", "--format", "json"]).json();
    let inj: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "env-injection")
        .collect();
    assert!(!inj.is_empty(), "{v:#}");
    let (line, col) = pos(text, "{env:EVIL}");
    assert_eq!(
        (&inj[0]["source"]["line"], &inj[0]["source"]["column"]),
        (&line.into(), &col.into())
    );
    t.same_as_opencode();
    // Broken structure: refused, pointing into the `{env:EVIL}` the user wrote.
    let t = Tree::new().var("EVIL", "deny\"}, \"x\": {\"y");
    t.write("proj/opencode.json", text);
    let out = t.run(&["rules"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let at = format!("opencode.json:{line}:");
    let rest = out.stderr.strip_prefix(&at).expect(&out.stderr);
    let c: usize = rest.split(':').next().unwrap().parse().unwrap();
    // The injected `{"y` is closed by the `"}` written after the token: OpenCode stops at
    // that `}` (ColonExpected, the first character after the token's closing quote);
    // permaudit points at the key missing its colon, which came from the token.
    assert!(
        (col..col + "{env:EVIL}".len()).contains(&c),
        "{c} not in the token at {col}: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("colon after this key"),
        "{}",
        out.stderr
    );
    t.opencode_refuses();
}

// ---------------------------------------------------------------------------------------
// Files that are not what they should be

#[test]
fn a_config_path_that_is_a_directory_is_refused() {
    let t = Tree::new();
    std::fs::create_dir_all(t.path("proj/opencode.json")).unwrap();
    let want = format!(
        "error: {}: cannot read: is a directory, not a file",
        t.path("proj/opencode.json").display()
    );
    for args in COMMANDS {
        let out = t.run_with(&[], args, b"");
        assert_eq!(out.code, Some(2), "{args:?}");
        assert!(out.stderr.contains(&want), "{args:?}: {}", out.stderr);
    }
    if let Some(msg) = t.opencode_refuses() {
        assert!(msg.contains("BadResource"), "{msg}");
    }
    // OPENCODE_CONFIG naming a directory.
    let t = Tree::new();
    std::fs::create_dir_all(t.path("cfgdir")).unwrap();
    let cfgdir = t.path("cfgdir").display().to_string();
    let t = t.var("OPENCODE_CONFIG", &cfgdir);
    let out = t.run(&["rules"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("cannot read: is a directory"),
        "{}",
        out.stderr
    );
    t.opencode_refuses();
}

#[test]
fn opencode_config_naming_a_missing_file_is_ignored_as_in_opencode() {
    let t = Tree::new();
    let missing = t.path("nope.json").display().to_string();
    let t = t.var("OPENCODE_CONFIG", &missing);
    t.write("proj/opencode.json", "{\"permission\":{\"edit\":\"deny\"}}");
    accepted_everywhere(&t);
    t.same_as_opencode();
}

#[test]
fn file_references_to_missing_files_directories_and_devices_are_refused() {
    let text = |r: &str| format!("{{\n  \"permission\": {{\"bash\": \"{{file:{r}}}\"}}\n}}\n");
    let at = |t: &str, r: &str| pos(t, &format!("{{file:{r}}}"));
    // Missing: OpenCode's own message.
    let t = Tree::new();
    let missing = text("nope.txt");
    t.write("proj/opencode.json", &missing);
    let want = format!(
        "bad file reference: \"{{file:nope.txt}}\" {} does not exist",
        t.path("proj/nope.txt").display()
    );
    refused_everywhere(&t, "proj/opencode.json", at(&missing, "nope.txt"), &want);
    if let Some(msg) = t.opencode_refuses() {
        assert!(msg.contains(&want), "{msg}");
    }
    // A directory.
    let t = Tree::new();
    std::fs::create_dir_all(t.path("proj/sub")).unwrap();
    let dir = text("sub");
    t.write("proj/opencode.json", &dir);
    refused_everywhere(
        &t,
        "proj/opencode.json",
        at(&dir, "sub"),
        "bad file reference: \"{file:sub}\": is a directory",
    );
    if let Some(msg) = t.opencode_refuses() {
        assert!(msg.contains("bad file reference: \"{file:sub}\""), "{msg}");
    }
    // An endless device (OpenCode reads it forever; not run).
    let t = Tree::new();
    let zero = text("/dev/zero");
    t.write("proj/opencode.json", &zero);
    refused_everywhere(
        &t,
        "proj/opencode.json",
        at(&zero, "/dev/zero"),
        &format!(
            "bad file reference: \"{{file:/dev/zero}}\": larger than permaudit's limit of {} MiB",
            MAX_FILE_BYTES >> 20
        ),
    );
    // A FIFO nobody writes to (opening it would block).
    let t = Tree::new();
    let ok = Command::new("mkfifo")
        .arg(t.path("proj/fifo"))
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        let fifo = text("fifo");
        t.write("proj/opencode.json", &fifo);
        refused_everywhere(
            &t,
            "proj/opencode.json",
            at(&fifo, "fifo"),
            "bad file reference: \"{file:fifo}\": is a FIFO",
        );
    }
    // /dev/null is empty: `""` is not an action.
    let t = Tree::new();
    let null = text("/dev/null");
    t.write("proj/opencode.json", &null);
    let out = t.run(&["rules"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("permission.bash"), "{}", out.stderr);
    if let Some(msg) = t.opencode_refuses() {
        assert!(msg.contains("permission.bash"), "{msg}");
    }
}

// ---------------------------------------------------------------------------------------
// Markdown agents: frontmatter edge cases, symlink loops, deep trees

#[test]
fn frontmatter_edge_cases_load_as_in_opencode() {
    let t = Tree::new();
    let dir = "proj/.opencode/agent";
    // Frontmatter only, no body, no final newline.
    t.write(
        &format!("{dir}/only.md"),
        "---\npermission:\n  edit: deny\n---",
    );
    t.write(
        &format!("{dir}/bom.md"),
        "\u{feff}---\npermission:\n  edit: deny\n---\nbody\n",
    );
    t.write(
        &format!("{dir}/crlf.md"),
        "---\r\npermission:\r\n  edit: deny\r\n  bash:\r\n    \"git *\": allow\r\n---\r\nbody\r\n",
    );
    t.write(
        &format!("{dir}/unclosed.md"),
        "---\npermission:\n  edit: deny\nbody\n",
    );
    t.write(
        &format!("{dir}/bomcrlf.md"),
        "\u{feff}---\r\npermission:\r\n  read: deny\r\n---\r\n",
    );
    // Broken YAML in CRLF: sanitize rewrites it (CRLF to LF), so OpenCode drops the file.
    t.write(
        &format!("{dir}/brokencrlf.md"),
        "---\r\npermission:\r\n  edit: [deny\r\n---\r\nbody\r\n",
    );
    t.write(&format!("{dir}/empty.md"), "");
    t.write(&format!("{dir}/fence.md"), "---\n---\n");
    accepted_everywhere(&t);
    t.same_as_opencode();
    // Sanitize quotes a broken flow mapping into a string, which the schema refuses.
    let t = Tree::new();
    let text = "---\r\npermission: {edit: deny\r\n  x: : y\r\n---\r\nbody\r\n";
    t.write(&format!("{dir}/quoted.md"), text);
    refused_everywhere(
        &t,
        &format!("{dir}/quoted.md"),
        pos(text, "{edit"),
        "OpenCode refuses this config at `permission`",
    );
    t.opencode_refuses();
}

#[test]
fn symlink_loops_under_dot_opencode_end_instead_of_hanging() {
    let agent = "---\npermission:\n  edit: deny\n---\nbody\n";
    // Two links back to their own directory: OpenCode walks 2^40 directories; permaudit
    // stops at its limit.
    let t = Tree::new();
    t.write("proj/.opencode/agent/a.md", agent);
    let dir = t.path("proj/.opencode/agent");
    std::os::unix::fs::symlink(".", dir.join("l1")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("l2")).unwrap();
    let want = format!(
        "error: {}: permaudit cannot audit this: more than {MAX_WALK_DIRS} directories",
        dir.display()
    );
    for args in COMMANDS {
        let out = t.run_with(&[], args, b"");
        assert_eq!(out.code, Some(2), "{args:?}");
        assert!(out.stderr.contains(&want), "{args:?}: {}", out.stderr);
    }
    // One link: the walk ends where the kernel refuses the path (more than 40 links), as
    // OpenCode's does: the same agents, `a` through `l1/…/l1/a`.
    std::fs::remove_file(dir.join("l2")).unwrap();
    let out = t.run(&["rules", "--format", "json"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let names: Vec<String> = parse_permaudit_rules(&out.stdout)
        .unwrap()
        .into_keys()
        .filter(|n| n.ends_with('a') && n.chars().all(|c| "l1/a".contains(c)))
        .collect();
    let mut depths: Vec<usize> = names.iter().map(|n| n.matches("l1/").count()).collect();
    depths.sort();
    // Every depth down to where the kernel stops (40 links on Linux).
    assert!(depths.len() > 32, "{depths:?}");
    assert_eq!(depths, (0..depths.len()).collect::<Vec<_>>());
    // OpenCode's own walk of the loop does not always go as deep: on a busy machine it has
    // stopped at 35 links one run and at 40 the next. So compare with it on every agent
    // but the deep end of the chain, and require its chain to be a prefix of ours.
    let ours = parse_permaudit_rules(&out.stdout).unwrap();
    if let Some(verdict) = t.oracle_with(&[]) {
        let Verdict::Agents(theirs) = verdict else {
            panic!("OpenCode did not start: {verdict:?}");
        };
        let deep = |n: &String| n.matches("l1/").count() > 30;
        assert!(
            theirs.keys().all(|n| ours.contains_key(n)),
            "OpenCode has agents permaudit lacks"
        );
        let shallow = |a: &Agents| -> Agents {
            a.iter()
                .filter(|(n, _)| !deep(n))
                .map(|(n, r)| (n.clone(), r.clone()))
                .collect()
        };
        if let Some(d) = diff_agents(&shallow(&theirs), &shallow(&ours), t.root()) {
            panic!("permaudit differs from OpenCode:\n{d}");
        }
    }
}

#[test]
fn deep_agent_trees_are_read_to_the_bottom_as_in_opencode() {
    let t = Tree::new();
    let deep = format!("proj/.opencode/agent/{}x.md", "d/".repeat(60));
    t.write(&deep, "---\npermission:\n  edit: deny\n---\nbody\n");
    t.write(
        "proj/.opencode/agent/d/d/y.md",
        "---\npermission:\n  bash: ask\n---\n",
    );
    accepted_everywhere(&t);
    let v = t.run(&["rules", "--format", "json"]).json();
    let names: Vec<&str> = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&format!("{}x", "d/".repeat(60)).as_str()),
        "{names:?}"
    );
    t.same_as_opencode();
}

// ---------------------------------------------------------------------------------------
// Unreadable files and directories

/// A command prefix under which mode 000 really blocks reads: nothing for a normal user;
/// for root, `setpriv` without the capabilities that bypass file permissions.
fn unprivileged() -> Option<Vec<&'static str>> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some(Vec::new());
    }
    let prefix = vec![
        "setpriv",
        "--bounding-set=-dac_override,-dac_read_search",
        "--",
    ];
    let probe = Command::new(prefix[0])
        .args(&prefix[1..])
        .arg("true")
        .status()
        .is_ok_and(|s| s.success());
    if probe {
        Some(prefix)
    } else {
        eprintln!(
            "SKIPPED unreadable-file cases: running as root without setpriv, mode 000 does not block reads"
        );
        None
    }
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn unreadable_files_and_directories_are_skipped_as_in_opencode() {
    let Some(prefix) = unprivileged() else { return };
    let t = Tree::new();
    t.write("proj/opencode.json", "{\"permission\":{\"edit\":\"deny\"}}");
    t.write(
        "home/.config/opencode/opencode.json",
        "{\"permission\":{\"bash\":\"deny\"}}",
    );
    t.write(
        "proj/.opencode/agent/x.md",
        "---\npermission:\n  edit: ask\n---\n",
    );
    t.write(
        "proj/.opencode/agents/y.md",
        "---\npermission:\n  read: ask\n---\n",
    );
    chmod(&t.path("proj/opencode.json"), 0o000);
    chmod(&t.path("proj/.opencode/agent"), 0o000);
    chmod(&t.path("proj/.opencode/agents/y.md"), 0o000);
    // The probe: under the prefix, the file really cannot be read.
    let mut cat = prefix.clone();
    cat.push("cat");
    let blocked = Command::new(cat[0])
        .args(&cat[1..])
        .arg(t.path("proj/opencode.json"))
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(!blocked.success(), "mode 000 did not block the read");
    let out = t.run_with(
        &prefix,
        &["rules", "--agent", "build", "--format", "json"],
        b"",
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    t.same_as_opencode_with(&prefix);
    // An unreadable `{file:}` target is a refusal (OpenCode: "bad file reference").
    let t = Tree::new();
    t.write("proj/secret.txt", "deny");
    chmod(&t.path("proj/secret.txt"), 0o000);
    let text = "{\"permission\":{\"bash\":\"{file:secret.txt}\"}}";
    t.write("proj/opencode.json", text);
    let out = t.run_with(&prefix, &["rules"], b"");
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let (l, c) = pos(text, "{file:");
    assert!(
        out.stderr.starts_with(&format!(
            "opencode.json:{l}:{c}: error: OpenCode refuses this config: bad file reference: \"{{file:secret.txt}}\": "
        )),
        "{}",
        out.stderr
    );
    if let Some(v) = t.oracle_with(&prefix) {
        let Verdict::Refused(r) = v else {
            panic!("OpenCode accepted: {v:?}")
        };
        assert!(r.message.contains("bad file reference"), "{}", r.message);
    }
}

// ---------------------------------------------------------------------------------------
// No writes

/// Every file and directory under `root`: kind, mode, mtime and content.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (String, u32, std::time::SystemTime, Vec<u8>)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let (kind, content) = if m.is_dir() {
                stack.push(p.clone());
                ("dir", Vec::new())
            } else if m.file_type().is_symlink() {
                (
                    "symlink",
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                )
            } else {
                ("file", std::fs::read(&p).unwrap())
            };
            out.insert(
                p,
                (
                    kind.to_string(),
                    m.permissions().mode(),
                    m.modified().unwrap(),
                    content,
                ),
            );
        }
    }
    out
}

fn all_commands(t: &Tree) {
    let runs: &[(&[&str], &[u8])] = &[
        (&["check"], b""),
        (&["check", "--format", "json"], b""),
        (&["check", "--format", "sarif"], b""),
        (&["check", "--format", "github"], b""),
        (&["check", "--samples", "samples.txt"], b""),
        (&["check", "--format", "concise"], b""),
        (&["check", "-q"], b""),
        (&["check", "--statistics"], b""),
        (&["check", "--no-ignore"], b""),
        (&["check", "--project-only"], b""),
        (&["check", "--absolute-paths"], b""),
        (&["check", "--baseline", "base.json"], b""),
        (&["check", "--config", "ci.jsonc", "--format", "sarif"], b""),
        // Every flag but `--fix` and `--write-baseline` (their own tests) writes nothing.
        (&["check", "--diff"], b""),
        (
            &["check", "--diff", "--unsafe-fixes", "--format", "json"],
            b"",
        ),
        (&["check", "--unsafe-fixes"], b""),
        (&["check", "--headless"], b""),
        (&["check", "--headless=auto", "--fail-on", "never"], b""),
        (&["schema"], b""),
        (&["diff"], b""),
        (&["diff", "--staged", "--format", "json"], b""),
        (&["diff", "--base-dir", "."], b""),
        (&["explain", "bash", "git status && rm -rf /"], b""),
        (&["map", "--commands"], b""),
        (&["completions", "bash"], b""),
        (&["man"], b""),
        // The language server, its input ending before `initialize`.
        (&["server"], b""),
        (&["rules"], b""),
        (&["rules", "--format", "json", "--agent", "plan"], b""),
        (&["explain", "edit", "src/a.ts", "tests/x"], b""),
        (
            &["explain", "edit", "--stdin"],
            b"src/a.ts\ntests/x\n\xff\n",
        ),
        (
            &["explain", "bash", "--stdin", "-z", "--format", "json"],
            b"git status\0rm -rf /\0",
        ),
        (&["map"], b""),
        (&["map", "--format", "json", "--untracked"], b""),
        (&["rule"], b""),
        (&["rule", "shadowed-deny"], b""),
    ];
    for (args, stdin) in runs {
        t.run_with(&[], args, stdin);
    }
}

#[test]
fn no_command_writes_anything() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        "{\"permission\":{\"edit\":{\"tests/**\":\"deny\",\"**\":\"allow\"},\"bash\":\"{env:ACT}\"}}",
    );
    t.write(
        "home/.config/opencode/opencode.json",
        "{\"permission\":{\"read\":{\".env\":\"ask\"}}}",
    );
    t.write(
        "proj/.opencode/agent/rev.md",
        "---\npermission:\n  edit: deny\n---\nbody\n",
    );
    t.write(
        "proj/.opencode/agent/broken.md",
        "---\npermission: [\n---\n",
    );
    t.write(
        "proj/.opencode/permaudit-samples.txt",
        "build edit tests/a => deny\n",
    );
    t.write("proj/samples.txt", "* bash ls\n");
    t.write("home/.claude/skills/s/SKILL.md", "x");
    // permaudit's own settings, a baseline (one stale entry) and an ignore comment.
    t.write(
        "proj/.opencode/permaudit.jsonc",
        "{\"baseline\": \"../base.json\", \"level\": {\"dead-rule\": \"error\"}}",
    );
    t.write(
        "proj/ci.jsonc",
        "{\"select\": [\"shadowed-deny\"], \"project-only\": true}",
    );
    t.write(
        "proj/base.json",
        "{\"version\": 1, \"entries\": [{\"id\": \"dead-rule\", \"agents\": [\"build\"], \"permission\": \"x\", \"pattern\": \"y\"}]}",
    );
    t.write(
        "proj/.opencode/opencode.jsonc",
        "{\"permission\": {\"read\": {\n  // permaudit-ignore[dead-rule]\n  \"a\": \"ask\", \"a\": \"deny\"}}}",
    );
    t.git_add(&["src/a.ts", "tests/x", ".env"]);
    t.write("proj/untracked.txt", "x");
    let t = t.var("ACT", "ask");
    let before = snapshot(t.root());
    all_commands(&t);
    assert_eq!(snapshot(t.root()), before, "a command changed the tree");
    // Broken settings and baseline: refused, nothing written.
    for (file, text) in [
        ("proj/.opencode/permaudit.jsonc", "{\"selct\": []}"),
        ("proj/base.json", "{\"version\": 1, \"entries\": 3}"),
    ] {
        let old = std::fs::read(t.path(file)).unwrap();
        t.write(file, text);
        let before = snapshot(t.root());
        all_commands(&t);
        assert_eq!(
            snapshot(t.root()),
            before,
            "a command changed the tree ({text})"
        );
        t.write(file, old);
    }
    // Broken configs too: a syntax error, a bad `{file:}`, a schema refusal.
    for text in [
        "{\"permission\":",
        "{\"permission\":{\"bash\":\"{file:nope}\"}}",
        "{\"permission\":{\"bash\":\"ALLOW\"}}",
    ] {
        t.write("proj/opencode.json", text);
        let before = snapshot(t.root());
        all_commands(&t);
        // Not even `--write-baseline`: a refused config has no findings to accept.
        let out = t.run(&["check", "--write-baseline", "new-baseline.json"]);
        assert_eq!(out.code, Some(2), "{text}: {}", out.stderr);
        assert_eq!(
            snapshot(t.root()),
            before,
            "a command changed the tree ({text})"
        );
    }
}

/// 100,000 stacked ignore comments above one rule, and a config padded with a million
/// ordinary comments (`a_100_mb_config_is_read`): scanned in one pass, each stacked comment
/// covering the rule below the stack.
#[test]
fn many_ignore_comments_are_read_in_one_pass() {
    let t = Tree::new();
    // In build's own block: the same allow shared by every agent would also make the
    // read-only `plan` edit (`read-only-agent-writes`, which these comments do not name).
    let mut text = String::from("{\"agent\":{\"build\":{\"permission\":{\"edit\":{\n");
    for _ in 0..100_000 {
        text.push_str("// permaudit-ignore[shadowed-deny]: accepted\n");
    }
    text.push_str("\"tests/**\":\"deny\",\"**\":\"allow\"}}}}}\n");
    t.write("proj/opencode.json", &text);
    let out = t.run(&["check", "--statistics", "--fail-on", "error"]);
    assert_eq!(out.code, Some(0), "the deny is accepted: {}", out.stdout);
    assert!(
        out.stdout.contains("hidden by permaudit-ignore comments")
            && !out.stdout.contains("unused-ignore"),
        "every stacked comment names what is on the rule's line: {}",
        out.stdout
    );
}

#[test]
fn write_baseline_writes_only_the_path_given() {
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        "{\"permission\":{\"edit\":{\"tests/**\":\"deny\",\"**\":\"allow\"}}}",
    );
    t.write("proj/sub/.keep", "");
    let before = snapshot(t.root());
    let out = t.run(&["check", "--write-baseline", "sub/accepted.json"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let after = snapshot(t.root());
    let target = t.path("proj/sub/accepted.json");
    let changed: Vec<&PathBuf> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .chain(before.keys().filter(|k| !after.contains_key(*k)))
        .collect();
    // The new file, and the mtime of the directory that holds it; nothing else.
    assert_eq!(changed, [&t.path("proj/sub"), &target], "{changed:#?}");
    let v: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert!(!v["entries"].as_array().unwrap().is_empty(), "{v:#}");
    // Over an existing file: replaced whole, nothing else touched, no temporary file left.
    t.write("proj/sub/accepted.json", "old");
    let before = snapshot(t.root());
    assert_eq!(
        t.run(&["check", "--write-baseline", "sub/accepted.json"])
            .code,
        Some(0)
    );
    let after = snapshot(t.root());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    assert_eq!(after[&target].3, std::fs::read(&target).unwrap());
    assert_ne!(after[&target].3, b"old");
}

// ---------------------------------------------------------------------------------------
// The analysis budget

/// `*X` then `n` `?`: the `X` sits exactly `n + 1` units from the end, which a subset
/// construction can only know by remembering the last `n + 1` units (2^n states).
fn lookback(x: char, n: usize) -> String {
    format!("*{x}{}", "?".repeat(n))
}

fn intersect(globs: &[&str], units: u64) -> permaudit::glob::automaton::Outcome<String> {
    use permaudit::glob::automaton::{Budget, intersection};
    use permaudit::glob::{Platform, Wildcard};
    let w: Vec<Wildcard> = globs.iter().map(|g| Wildcard::compile(g)).collect();
    let refs: Vec<&Wildcard> = w.iter().collect();
    intersection(&refs, Platform::Unix, &mut Budget::new(units))
        .map(|word| word.to_exact_string().unwrap())
}

#[test]
fn analysis_budget_at_and_past() {
    use permaudit::glob::automaton::DEFAULT_BUDGET;
    use permaudit::glob::{Platform, Wildcard};
    // An empty intersection (`a` and `b` at the same place) and a non-empty one: the least
    // budget that proves each, found by bisection, proves it; one unit less claims nothing.
    let empty = [lookback('a', 5), lookback('b', 5)];
    let some = [lookback('a', 5), lookback('b', 4)];
    for globs in [&empty, &some] {
        let globs: Vec<&str> = globs.iter().map(String::as_str).collect();
        let (mut lo, mut hi) = (0u64, DEFAULT_BUDGET);
        assert!(!intersect(&globs, hi).is_inconclusive(), "{globs:?}");
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            if intersect(&globs, mid).is_inconclusive() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        assert!(intersect(&globs, hi - 1).is_inconclusive(), "{globs:?}");
        match intersect(&globs, hi) {
            permaudit::glob::automaton::Outcome::Witness(w) => {
                for g in &globs {
                    assert!(
                        Wildcard::compile(g).is_match(&w, Platform::Unix),
                        "{g} {w:?}"
                    );
                }
                assert_eq!(
                    globs[1],
                    lookback('b', 4),
                    "only the second set is non-empty"
                );
            }
            permaudit::glob::automaton::Outcome::Empty => {
                assert_eq!(globs[1], lookback('b', 5), "only the first set is empty");
            }
            permaudit::glob::automaton::Outcome::Inconclusive => unreachable!(),
        }
    }
    // Past the default budget: inconclusive, and `check` claims nothing about the rule.
    // (A product of two 2^10-state constructions.)
    let deep = [lookback('a', 10), lookback('b', 10)];
    let globs: Vec<&str> = deep.iter().map(String::as_str).collect();
    assert!(intersect(&globs, DEFAULT_BUDGET).is_inconclusive());
    // A deny partly undone by a later allow (`aa` then ten more units), over rules whose
    // proofs need more than the budget: whatever `check` claims, it holds.
    let t = Tree::new();
    t.write(
        "proj/opencode.json",
        format!(
            "{{\"permission\":{{\"edit\":{{\"{}\":\"deny\",\"{}\":\"allow\",\"{}\":\"ask\"}}}}}}",
            deep[0],
            lookback('a', 9),
            deep[1]
        ),
    );
    let v = t.run(&["check", "--format", "json"]).json();
    for f in v["findings"].as_array().unwrap() {
        let agent = f["agents"][0].as_str().unwrap_or("build");
        for w in f["witnesses"].as_array().unwrap() {
            let out = t.run_with(
                &[],
                &[
                    "explain",
                    w["permission"].as_str().unwrap(),
                    "--agent",
                    agent,
                    "--stdin",
                    "--format",
                    "json",
                ],
                format!("{}\n", w["input"].as_str().unwrap()).as_bytes(),
            );
            let d = out.json();
            assert_eq!(
                (&d["action"], &d["rule"]),
                (&w["action"], &w["rule"]),
                "{f:#}"
            );
        }
    }
}

#[test]
fn files_are_named_alike_by_every_command_and_home_reads_as_a_tilde() {
    let t = Tree::new();
    t.write(
        "home/.config/opencode/opencode.json",
        r#"{"permission": {"edit": {"secrets/**": "deny"}, "bash": {"git push *": "deny"}}}"#,
    );
    t.write(
        "proj/opencode.json",
        r#"{"permission": {"bash": {"*": "allow"}}}"#,
    );
    let global = "~/.config/opencode/opencode.json";
    let full = t.path("home/.config/opencode/opencode.json");
    for args in [
        &["check"][..],
        &["check", "--format", "concise"],
        &["rules", "--agent", "build"],
        &["explain", "edit", "secrets/a"],
        &["explain", "bash", "ls"],
    ] {
        let out = t.run(args);
        let text = out.stdout + &out.stderr;
        assert!(matches!(out.code, Some(0 | 1)), "{args:?}: {text}");
        assert!(
            !text.contains(&*t.path("proj").to_string_lossy()),
            "{args:?}: a project file named by its full path:\n{text}"
        );
        if args[0] != "explain" || args[1] == "edit" {
            assert!(text.contains(global), "{args:?}: no {global}:\n{text}");
            assert!(!text.contains(&*full.to_string_lossy()), "{args:?}: {text}");
        }
        if args[0] != "check" {
            assert!(text.contains("opencode.json:1:"), "{args:?}: {text}");
        }
    }
    // Machine output keeps paths a program can open.
    let v = t
        .run(&["rules", "--agent", "build", "--format", "json"])
        .json();
    let paths: Vec<&str> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["source"]["path"].as_str())
        .collect();
    assert!(paths.contains(&&*full.to_string_lossy()), "{paths:?}");
    assert!(paths.contains(&"opencode.json"), "{paths:?}");
    let v = t.run(&["check", "--format", "json"]).json();
    assert!(!v.to_string().contains('~'), "{v}");
}
