//! `permaudit map` and streamed `explain`, end to end on real git repositories in temporary
//! directories (isolated HOME, no OpenCode environment), plus `map::decide` against the
//! simple evaluator on random rulesets and sorted path lists.

use permaudit::agents::{Agent, Mode, evaluate};
use permaudit::glob::Platform;
use permaudit::map::{self, FileSet, NO_RULE, Tree};
use permaudit::model::{Action, Form, Layer, Rule};
use proptest::prelude::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Repo {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

const CONFIG: &str = r#"{
  "permission": {
    "read": {".env.local": "allow"},
    "edit": {"tests/**": "deny", "src/gen/*": "ask"}
  }
}
"#;

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

fn repo(files: &[&str]) -> Repo {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("proj");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("opencode.json"), CONFIG).unwrap();
    for f in files {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "x").unwrap();
    }
    git(&root, &["add", "-A"]);
    Repo {
        _tmp: tmp,
        root,
        home,
    }
}

impl Repo {
    fn run(&self, args: &[&str], stdin: &[u8]) -> Out {
        run_in(&self.root, &self.home, args, stdin)
    }
}

fn run_in(dir: &Path, home: &Path, args: &[&str], stdin: &[u8]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_permaudit"));
    cmd.arg("-C").arg(dir).args(args);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("OPENCODE") || k.starts_with("XDG_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("HOME", home).env("NO_COLOR", "1");
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("permaudit");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    let o = child.wait_with_output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const FILES: &[&str] = &[
    "src/a.ts",
    "src/b.ts",
    "src/gen/x.ts",
    "tests/t1.ts",
    "tests/deep/t2.ts",
    ".env",
    ".env.local",
    "keys/id_rsa",
    "README.md",
];

fn records(out: &Out) -> Vec<Value> {
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

#[test]
fn json_records_agree_with_explain() {
    let r = repo(FILES);
    let out = r.run(&["map", "--format", "json"], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let recs = records(&out);
    let agents: Vec<String> = {
        let v: Value =
            serde_json::from_str(&r.run(&["rules", "--format", "json"], b"").stdout).unwrap();
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["key"].as_str().unwrap().to_string())
            .collect()
    };
    // One record per file (opencode.json included) and agent, files in git's order.
    let mut files: Vec<&str> = FILES.to_vec();
    files.push("opencode.json");
    files.sort();
    assert_eq!(recs.len(), files.len() * agents.len());
    for (i, rec) in recs.iter().enumerate() {
        assert_eq!(rec["version"], 1);
        assert_eq!(rec["path"], files[i / agents.len()]);
        assert_eq!(rec["agent"], agents[i % agents.len()].as_str());
        assert_eq!(rec["tracked"], true);
    }
    // Every decision is the one explain gives (the rule index included).
    for agent in &agents {
        for perm in ["read", "edit"] {
            let stdin: Vec<u8> = files
                .iter()
                .flat_map(|f| f.bytes().chain([b'\n']))
                .collect();
            let e = r.run(
                &[
                    "explain", perm, "--stdin", "--agent", agent, "--format", "json",
                ],
                &stdin,
            );
            assert_eq!(e.code, 0, "{}", e.stderr);
            for (f, x) in records(&e).iter().enumerate() {
                let rec = recs
                    .iter()
                    .find(|m| m["agent"] == agent.as_str() && m["path"] == files[f])
                    .unwrap();
                assert_eq!(
                    rec[perm]["action"], x["action"],
                    "{agent} {perm} {}",
                    files[f]
                );
                assert_eq!(rec[perm]["rule"], x["rule"], "{agent} {perm} {}", files[f]);
            }
        }
    }
    let get = |agent: &str, path: &str| {
        recs.iter()
            .find(|m| m["agent"] == agent && m["path"] == path)
            .unwrap()
    };
    assert_eq!(get("build", "tests/deep/t2.ts")["edit"]["action"], "deny");
    assert_eq!(get("build", "src/gen/x.ts")["edit"]["action"], "ask");
    assert_eq!(get("build", ".env")["read"]["action"], "ask");
    assert_eq!(get("build", ".env.local")["read"]["action"], "allow");
    assert_eq!(get("build", ".env.local")["secret"], true);
    assert_eq!(get("build", "keys/id_rsa")["secret"], true);
    assert_eq!(get("build", "README.md")["secret"], false);
    assert_eq!(get("plan", "src/a.ts")["edit"]["action"], "deny");
}

#[test]
fn human_report_collapses_and_lists() {
    let r = repo(FILES);
    let out = r.run(&["map"], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s = &out.stdout;
    assert!(s.starts_with("10 files tracked by git in "), "{s}");
    // build and general decide alike and are shown together.
    assert!(s.contains("agents build, general\n"), "{s}");
    // tests/ is uniform (edit deny by one rule): one line, its rule named, not expanded.
    let tests = s
        .lines()
        .find(|l| l.trim_start().starts_with("tests/"))
        .unwrap();
    assert!(tests.contains("2 files  read allow  edit deny"), "{tests}");
    assert!(
        tests.contains("\"tests/**\" deny opencode.json:4:14"),
        "{tests}"
    );
    assert!(
        !s.contains("t2.ts"),
        "uniform directories are not expanded: {s}"
    );
    // src/ is mixed and expanded: gen/ asks.
    assert!(
        s.lines()
            .any(|l| l.trim_start().starts_with("gen/") && l.contains("edit ask")),
        "{s}"
    );
    // What build edits without asking, as directories where possible.
    let section = s.split("agents build, general").nth(1).unwrap();
    let edit = section.split("edit without asking: ").nth(1).unwrap();
    assert!(edit.starts_with("7 files\n"), "{edit}");
    assert!(edit.contains("\n    keys/  (1 file)\n"), "{edit}");
    assert!(edit.contains("\n    src/a.ts\n"), "{edit}");
    assert!(
        !edit.split("secret").next().unwrap().contains("tests/"),
        "{edit}"
    );
    // Secret-shaped and readable without asking: .env.local (the config allows it), and
    // the key; .env asks (defaults).
    let secret = section
        .split("secret-shaped files readable without asking: ")
        .nth(1)
        .unwrap();
    assert!(secret.starts_with("2\n"), "{secret}");
    assert!(
        secret.contains(".env.local  ← \".env.local\" allow opencode.json:3:14"),
        "{secret}"
    );
    assert!(secret.contains("keys/id_rsa"), "{secret}");
}

/// `permaudit map ARGS` on `r`, started from the directory `cwd` (no `-C`).
fn map_from(r: &Repo, cwd: &Path, args: &[&str]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_permaudit"));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("OPENCODE") || k.starts_with("XDG_") {
            cmd.env_remove(&k);
        }
    }
    let o = cmd
        .current_dir(cwd)
        .arg("map")
        .args(args)
        .env("HOME", &r.home)
        .env("NO_COLOR", "1")
        .output()
        .expect("permaudit");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn human_header_is_relative_and_internal_agents_are_folded() {
    let r = repo(FILES);
    // From the repository itself, and from a directory inside it: the header names the
    // repository relative to where the command runs, not as an absolute path.
    let out = map_from(&r, &r.root, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("10 files tracked by git in . ("),
        "{}",
        out.stdout
    );
    std::fs::create_dir_all(r.root.join("src/deep")).unwrap();
    let out = map_from(&r, &r.root.join("src/deep"), &[]);
    assert!(
        out.stdout.starts_with("10 files tracked by git in ../.. ("),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains(&r.root.display().to_string()),
        "{}",
        out.stdout
    );
    let out = map_from(&r, &r.root, &["--commands"]);
    assert!(
        out.stdout.starts_with("0 commands in . ("),
        "{}",
        out.stdout
    );

    // compaction, summary and title are OpenCode's own: one line, no sections.
    let s = map_from(&r, &r.root, &[]).stdout;
    for name in ["compaction", "summary", "title"] {
        assert!(
            !s.lines()
                .any(|l| l.starts_with("agent") && l.contains(name)),
            "{name} has a section:\n{s}"
        );
    }
    assert!(
        s.contains("internal agents compaction, summary, title are folded"),
        "{s}"
    );
    // Asked for by name, one is shown; the JSON records keep every agent.
    let one = map_from(&r, &r.root, &["--agent", "title"]).stdout;
    assert!(one.contains("agent title\n"), "{one}");
    assert!(!one.contains("folded"), "{one}");
    let json = map_from(&r, &r.root, &["--format", "json"]);
    let agents: std::collections::BTreeSet<String> = records(&json)
        .iter()
        .map(|v| v["agent"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        agents.contains("compaction") && agents.contains("title"),
        "{agents:?}"
    );
}

#[test]
fn untracked_agent_and_errors() {
    let r = repo(&["a.txt"]);
    std::fs::write(r.root.join("new.txt"), "x").unwrap();
    std::fs::write(r.root.join("ignored.log"), "x").unwrap();
    std::fs::write(r.root.join(".gitignore"), "*.log\n").unwrap();
    let paths = |args: &[&str]| -> Vec<(String, bool)> {
        let out = r.run(args, b"");
        assert_eq!(out.code, 0, "{}", out.stderr);
        records(&out)
            .iter()
            .map(|v| {
                (
                    v["path"].as_str().unwrap().to_string(),
                    v["tracked"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        paths(&["map", "--format", "json", "--agent", "build"]),
        [
            ("a.txt".to_string(), true),
            ("opencode.json".to_string(), true)
        ]
    );
    assert_eq!(
        paths(&["map", "--format", "json", "--agent", "build", "--untracked"]),
        [
            (".gitignore".to_string(), false),
            ("a.txt".to_string(), true),
            ("new.txt".to_string(), false),
            ("opencode.json".to_string(), true)
        ]
    );
    // From a subdirectory: still every file, worktree-relative.
    std::fs::create_dir_all(r.root.join("sub")).unwrap();
    let out = run_in(
        &r.root.join("sub"),
        &r.home,
        &["map", "--format", "json", "--agent", "plan"],
        b"",
    );
    assert_eq!(records(&out).len(), 2, "{}", out.stdout);
    let out = r.run(&["map", "--agent", "nope"], b"");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no agent named `nope`"),
        "{}",
        out.stderr
    );
    // Outside git.
    let plain = tempfile::tempdir().unwrap();
    let out = run_in(plain.path(), &r.home, &["map"], b"");
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("not in a git repository"),
        "{}",
        out.stderr
    );
}

#[test]
fn empty_repository() {
    let r = repo(&[]);
    git(&r.root, &["rm", "-q", "--cached", "opencode.json"]);
    let out = r.run(&["map"], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("(no files)"), "{}", out.stdout);
    assert_eq!(r.run(&["map", "--format", "json"], b"").stdout, "");
}

#[test]
fn streamed_explain_survives_bad_input() {
    let r = repo(&[]);
    // Line 2 is not UTF-8; the rest is still decided, in order; exit 2 at the end.
    let out = r.run(
        &["explain", "edit", "--stdin", "--format", "json"],
        b"src/a.ts\n\xff\xfe\ntests/x\n",
    );
    assert_eq!(out.code, 2);
    let recs = records(&out);
    let inputs: Vec<&str> = recs.iter().map(|v| v["input"].as_str().unwrap()).collect();
    assert_eq!(inputs, ["src/a.ts", "tests/x"]);
    assert_eq!(recs[1]["action"], "deny");
    assert!(
        out.stderr
            .contains("standard input line 2: not valid UTF-8 (byte 0); skipped"),
        "{}",
        out.stderr
    );
    // -z: NUL-separated, newlines are part of inputs; a trailing NUL ends the last one.
    let out = r.run(
        &["explain", "bash", "--stdin", "-z", "--format", "json"],
        b"a\nb\0\0c\0",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let inputs: Vec<String> = records(&out)
        .iter()
        .map(|v| v["input"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(inputs, ["a\nb", "", "c"]);
    // Streamed and positional inputs render identically, human and JSON.
    for format in ["json", "human"] {
        let a = r.run(
            &[
                "explain",
                "edit",
                "tests/x",
                "src/gen/y",
                "--format",
                format,
            ],
            b"",
        );
        let b = r.run(
            &["explain", "edit", "--stdin", "--format", format],
            b"tests/x\nsrc/gen/y",
        );
        assert_eq!(a.stdout, b.stdout);
        assert!(a.stdout.contains("tests/x"));
    }
}

// map::decide against the simple evaluator.

fn agent(name: &str, rules: Vec<Rule>) -> Agent {
    Agent {
        name: name.to_string(),
        display: name.to_string(),
        mode: Mode::All,
        hidden: false,
        native: false,
        rules,
    }
}

fn rule(perm: &str, pat: &str, a: u8) -> Rule {
    let action = [Action::Allow, Action::Ask, Action::Deny][a as usize % 3].clone();
    Rule::builtin(perm, pat, action, Form::Object, Layer::Project, "t")
}

const PATH_CHARS: &[char] = &['a', 'b', '/', '.', 'é', '😀', ' '];
const PAT_CHARS: &[char] = &['a', 'b', '/', '.', '*', '?', 'é', '😀', ' ', '\\'];

fn text(chars: &'static [char], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(chars), 0..max).prop_map(|c| c.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn decide_matches_evaluate(
        raw in prop::collection::vec((prop::sample::select(vec!["*", "read", "edit", "e*"]), text(PAT_CHARS, 6), 0..3u8), 0..10),
        paths in prop::collection::vec(text(PATH_CHARS, 10), 0..40),
        threads in 1..4usize,
    ) {
        let rules: Vec<Rule> = raw.iter().map(|(p, pat, a)| rule(p, pat, *a)).collect();
        let mut other = rules.clone();
        other.insert(0, rule("*", "*", 0));
        let agents = [agent("a", rules.clone()), agent("b", rules), agent("c", other)];
        let refs: Vec<&Agent> = agents.iter().collect();
        let raw_out: Vec<u8> = paths.iter().flat_map(|p| p.bytes().chain([0])).collect();
        let files = FileSet::from_git(&raw_out, None);
        let maps = map::decide(&refs, &files, Platform::Unix, threads, &|_| {});
        prop_assert_eq!(maps.len(), 3);
        for m in &maps {
            let a = refs[m.agent];
            for (f, path) in files.paths.iter().enumerate() {
                for (k, perm) in ["read", "edit"].iter().enumerate() {
                    let want = evaluate(&a.rules, perm, path, Platform::Unix).rule.map_or(NO_RULE, |i| i as u32);
                    prop_assert_eq!(m.decisions(k)[f], want, "{} {} {:?}", a.name, perm, path);
                }
            }
        }
        // The tree covers every file exactly once.
        let t = Tree::new(&files);
        let mut seen = vec![0; files.len()];
        for d in &t.dirs {
            for &f in &d.files {
                seen[f] += 1;
                prop_assert!(files.paths[f].starts_with(&d.path));
                prop_assert!(d.range.contains(&f));
            }
        }
        prop_assert!(seen.iter().all(|&n| n == 1));
    }
}
