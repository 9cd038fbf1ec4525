//! `permaudit map --commands` and `explain bash` end to end on a real git repository in a
//! temporary directory (isolated HOME, no OpenCode environment): where each command was
//! found, how it is split, and what each agent decides for it.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const CONFIG: &str =
    r#"{"permission":{"bash":{"*":"ask","echo *":"allow","npm ci":"allow","rm *":"deny"}}}"#;

const PACKAGE: &str = r#"{
  "name": "demo",
  "scripts": {
    "build": "echo a && tsc",
    "clean": "rm -rf dist"
  }
}
"#;

const MAKEFILE: &str = "all:\n\t@echo building\n\nclean:\n\trm -f $$HOME/x\n";

const WORKFLOW: &str = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm ci\n      - run: |\n          echo start\n          cd sub && echo in\n          cat /etc/hostname ~/x && cd .\n";

fn run(dir: &Path, home: &Path, args: &[&str], stdin: &[u8]) -> (i32, String) {
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
        .stderr(Stdio::inherit())
        .spawn()
        .expect("permaudit");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn project() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("proj");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let ok = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["init", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::fs::write(root.join("opencode.json"), CONFIG).unwrap();
    std::fs::write(root.join("package.json"), PACKAGE).unwrap();
    std::fs::write(root.join("Makefile"), MAKEFILE).unwrap();
    std::fs::write(root.join(".github/workflows/ci.yml"), WORKFLOW).unwrap();
    (tmp, root, home)
}

#[test]
fn map_commands_finds_splits_and_decides_every_command() {
    let (_tmp, root, home) = project();
    let (code, out) = run(
        &root,
        &home,
        &["map", "--commands", "--format", "json", "--agent", "build"],
        b"",
    );
    assert_eq!(code, 0, "{out}");
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<(String, u64, String, String, Vec<String>)> = recs
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
                r["input"].as_str().unwrap().to_string(),
                r["action"].as_str().unwrap().to_string(),
                r["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| format!("{}={}", p["text"].as_str().unwrap(), p["action"]))
                    .collect(),
            )
        })
        .collect();
    let want = [
        (
            "package.json",
            4,
            "echo a && tsc",
            "ask",
            vec!["echo a=\"allow\"", "tsc=\"ask\""],
        ),
        (
            "package.json",
            5,
            "rm -rf dist",
            "deny",
            vec!["rm -rf dist=\"deny\""],
        ),
        (
            "Makefile",
            2,
            "echo building",
            "allow",
            vec!["echo building=\"allow\""],
        ),
        // `$$HOME` is make's `$HOME`; the bash tool does not expand it, so no directory ask.
        (
            "Makefile",
            5,
            "rm -f $HOME/x",
            "deny",
            vec!["rm -f $HOME/x=\"deny\""],
        ),
        (
            ".github/workflows/ci.yml",
            6,
            "npm ci",
            "allow",
            vec!["npm ci=\"allow\""],
        ),
        (
            ".github/workflows/ci.yml",
            8,
            "echo start",
            "allow",
            vec!["echo start=\"allow\""],
        ),
        // `cd` is never asked.
        (
            ".github/workflows/ci.yml",
            9,
            "cd sub && echo in",
            "allow",
            vec!["cd sub=null", "echo in=\"allow\""],
        ),
        // Outside directories are asked first (`/etc/hostname` is a file: its directory).
        (
            ".github/workflows/ci.yml",
            10,
            "cat /etc/hostname ~/x && cd .",
            "ask",
            vec!["cat /etc/hostname ~/x=\"ask\"", "cd .=null"],
        ),
    ];
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(
            (g.0.as_str(), g.1, g.2.as_str(), g.3.as_str()),
            (w.0, w.1, w.2, w.3),
            "{got:#?}"
        );
        assert_eq!(g.4, w.4);
    }
    assert!(
        recs[..7]
            .iter()
            .all(|r| r["external_directory"] == serde_json::json!([]))
    );
    let ext: Vec<&str> = recs[7]["external_directory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(ext, ["/etc/*".to_string(), format!("{}/*", home.display())]);
    assert_eq!(recs[7]["decided_by"], "external_directory");

    // Streamed `explain bash` renders each rule once; its records must be byte for byte the
    // `map --commands` records without the origin fields.
    let inputs: String = recs
        .iter()
        .map(|r| format!("{}\n", r["input"].as_str().unwrap()))
        .collect();
    let (code, streamed) = run(
        &root,
        &home,
        &[
            "explain", "bash", "--stdin", "--format", "json", "--agent", "build",
        ],
        inputs.as_bytes(),
    );
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    let streamed: Vec<&str> = streamed.lines().collect();
    assert_eq!(lines.len(), streamed.len());
    for (m, e) in lines.iter().zip(&streamed) {
        let e = e.strip_suffix('}').unwrap();
        assert!(m.starts_with(&format!("{e},\"kind\":")), "{m}\n{e}");
    }
    assert_eq!(recs[0]["kind"], "package-script");
    assert_eq!(recs[0]["name"], "build");
    assert_eq!(recs[4]["kind"], "workflow-run");

    let (code, human) = run(&root, &home, &["map", "--commands"], b"");
    assert_eq!(code, 0);
    assert!(human.contains("8 commands in"), "{human}");
    assert!(human.contains("package.json:5 (clean)"), "{human}");
}

#[test]
fn explain_bash_splits_streamed_lines_and_asks_for_outside_directories_first() {
    let (_tmp, root, home) = project();
    let (code, out) = run(
        &root,
        &home,
        &["explain", "bash", "--stdin", "--format", "json"],
        b"echo a | echo b\ncat /etc/hostname\ncd .\n",
    );
    assert_eq!(code, 0, "{out}");
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["action"], "allow");
    assert_eq!(recs[0]["parts"].as_array().unwrap().len(), 2);
    // `/etc/hostname` is a file: its directory is asked about, before the bash ask.
    assert_eq!(recs[1]["external_directory"][0]["pattern"], "/etc/*");
    assert_eq!(recs[1]["external_directory"][0]["action"], "ask");
    assert_eq!(recs[1]["decided_by"], "external_directory");
    assert_eq!(recs[1]["action"], "ask");
    // Nothing asked: allowed, no deciding rule.
    assert_eq!(recs[2]["action"], "allow");
    assert_eq!(recs[2]["rule"], Value::Null);
    assert_eq!(recs[2]["parts"][0]["asked"], false);
}

#[test]
fn explain_bash_says_what_always_stores_only_when_the_command_asks() {
    let (_tmp, root, home) = project();
    // `echo *` is allowed, `tsc` is asked (`*`, CONFIG): "Always" answers the command's
    // one question and stores the pattern of every part, the allowed ones too.
    let (code, out) = run(&root, &home, &["explain", "bash", "echo a && tsc x"], b"");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("ask"), "{out}");
    assert!(out.contains("\"Always\" would allow \"echo *\""), "{out}");
    assert!(out.contains("\"Always\" would allow \"tsc *\""), "{out}");
    // Allowed outright: nobody is asked, nothing is stored.
    let (code, out) = run(&root, &home, &["explain", "bash", "echo a | echo b"], b"");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("allow"), "{out}");
    assert!(!out.contains("Always"), "{out}");
    // Denied outright (`rm *`): nothing is asked either.
    let (_, out) = run(&root, &home, &["explain", "bash", "echo a && rm x"], b"");
    assert!(out.starts_with("deny") && !out.contains("Always"), "{out}");
}

#[test]
fn explain_bash_shows_what_each_part_overrode() {
    let (_tmp, root, home) = project();
    // `rm x` is decided by `rm *` deny, which overrides the `*` ask written before it (and
    // the defaults' allow): the rule a user debugging that part looks for, as `explain edit`
    // shows it.
    let (code, out) = run(&root, &home, &["explain", "bash", "echo a && rm x"], b"");
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let rm = lines
        .iter()
        .position(|l| l.contains("part \"rm x\""))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(lines[rm].contains("bash \"rm *\" deny"), "{out}");
    assert!(
        lines[rm + 1].trim_start().starts_with("overrides  rule")
            && lines[rm + 1].contains("bash \"*\" ask"),
        "{out}"
    );
    // Each part lists its own: `echo a`'s overrides come before the `rm x` part.
    let echo = lines
        .iter()
        .position(|l| l.contains("part \"echo a\""))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        lines[echo + 1..rm]
            .iter()
            .any(|l| l.contains("overrides  rule") && l.contains("bash \"*\" ask")),
        "{out}"
    );
}

#[test]
fn map_commands_groups_agents_that_decide_alike() {
    let (_tmp, root, home) = project();
    // Every agent's bash rules come from CONFIG: build and general decide every command by
    // the same rules (at different indices in their rulesets), so they share one section.
    let (code, human) = run(&root, &home, &["map", "--commands"], b"");
    assert_eq!(code, 0, "{human}");
    let headers: Vec<&str> = human.lines().filter(|l| l.starts_with("agent")).collect();
    assert!(
        headers
            .iter()
            .any(|h| h.contains("build") && h.contains("general")),
        "{headers:?}\n{human}"
    );
    // The reasons name the rule, not its per-agent index.
    assert!(
        human.contains("← part \"rm -rf dist\": bash \"rm *\" deny"),
        "{human}"
    );
}
