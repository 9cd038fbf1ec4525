//! `permaudit diff` end to end on a real scratch git repository: the base commit against
//! the work tree and against another commit, directories, every format, exit codes, and
//! that nothing is written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_permaudit"))
}

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn git(root: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {o:?}");
}

const BASE: &str = r#"{
  "permission": {
    "bash": {"*": "ask", "git push *": "deny", "git status": "allow"},
    "edit": "ask"
  }
}
"#;

const WIDER: &str = r#"{
  "permission": {
    "bash": {"*": "ask", "git status": "allow", "git push *": "allow"},
    "edit": {"*": "ask", "src/**": "allow"}
  }
}
"#;

fn repo() -> Repo {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("proj");
    let home = dir.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    git(&root, &["init", "-q", "."]);
    std::fs::write(root.join("opencode.json"), BASE).unwrap();
    std::fs::write(
        root.join("package.json"),
        r#"{"scripts": {"release": "git push origin main", "st": "git status"}}"#,
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    Repo {
        _dir: dir,
        root,
        home,
    }
}

fn run(r: &Repo, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(bin())
        .arg("diff")
        .args(args)
        .current_dir(&r.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &r.home)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every file under `root` with its bytes (`.git` included).
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn unchanged_work_tree_is_no_change() {
    let r = repo();
    let (code, out, err) = run(&r, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no change in any decision"), "{out}");
}

#[test]
fn widened_work_tree_fails_the_gate_and_names_both_sides() {
    let r = repo();
    std::fs::write(r.root.join("opencode.json"), WIDER).unwrap();
    let before = snapshot(&r.root);
    let (code, out, err) = run(&r, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("permaudit diff: HEAD → work tree"), "{out}");
    assert!(out.contains(r#"bash "git push": deny → allow"#), "{out}");
    assert!(out.contains(r#"edit "src/main.ts": ask → allow"#), "{out}");
    assert!(out.contains("HEAD:opencode.json:3:26"), "{out}");
    assert!(
        out.contains("\"git push origin main\": deny → allow"),
        "{out}"
    );
    // Nothing written, the repository untouched.
    assert_eq!(snapshot(&r.root), before);
    // --fail-on never and any.
    assert_eq!(run(&r, &["--fail-on", "never"]).0, 0);
    assert_eq!(run(&r, &["--fail-on", "any"]).0, 1);
}

#[test]
fn narrowing_only_passes_the_default_gate() {
    let r = repo();
    std::fs::write(
        r.root.join("opencode.json"),
        BASE.replace(r#""edit": "ask""#, r#""edit": "deny""#),
    )
    .unwrap();
    let (code, out, _) = run(&r, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(r#"edit "README.md": ask → deny"#), "{out}");
    assert_eq!(run(&r, &["--fail-on", "any"]).0, 1);
}

#[test]
fn revisions_directories_and_formats() {
    let r = repo();
    std::fs::write(r.root.join("opencode.json"), WIDER).unwrap();
    git(&r.root, &["commit", "-qam", "wider"]);
    // Two revisions: HEAD~1 → HEAD; the work tree is clean.
    let (code, json, err) = run(&r, &["HEAD~1", "HEAD", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["version"], 2);
    assert_eq!(v["base"]["label"], "HEAD~1");
    assert_eq!(v["head"]["kind"], "git");
    let c = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["agent"] == "build" && c["permission"] == "bash")
        .unwrap();
    assert_eq!(c["input"], "git push");
    assert_eq!(c["class"], "widened");
    assert_eq!(c["base_rule"]["source"]["path"], "HEAD~1:opencode.json");
    assert_eq!(c["head_rule"]["pattern"], "git push *");
    assert_eq!(v["summary"]["no_change"], false);
    // The reverse narrows only.
    let (code, _, _) = run(&r, &["HEAD", "HEAD~1"]);
    assert_eq!(code, 0);
    // Directories.
    let (a, b) = (r.home.join("a"), r.home.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(a.join("opencode.json"), BASE).unwrap();
    std::fs::write(b.join("opencode.json"), WIDER).unwrap();
    let (a_s, b_s) = (a.display().to_string(), b.display().to_string());
    let (code, out, err) = run(&r, &["--base-dir", &a_s, "--head-dir", &b_s]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(r#"bash "git push": deny → allow"#), "{out}");
    // Markdown, SARIF and GitHub on the head side's lines.
    let (_, md, _) = run(&r, &["HEAD~1", "HEAD", "--format", "markdown"]);
    assert!(
        md.starts_with("### permaudit diff: `HEAD~1` → `HEAD`"),
        "{md}"
    );
    assert!(md.contains("| ⚠️ | **widened** deny → allow |"), "{md}");
    let (_, sarif, _) = run(&r, &["HEAD~1", "HEAD", "--format", "sarif"]);
    let s: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let loc = &s["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "opencode.json");
    let (_, gh, _) = run(&r, &["HEAD~1", "HEAD", "--format", "github"]);
    assert!(gh.starts_with("::error file=opencode.json,line="), "{gh}");
}

#[test]
fn equivalent_rewrite_is_no_change() {
    let r = repo();
    // Legacy tools migrated to the permission it becomes (first), unrelated keys reordered.
    std::fs::write(
        r.root.join("opencode.json"),
        r#"{"permission": {"edit": "ask", "bash": {"*": "ask", "git push *": "deny", "git status": "allow"}}, "tools": {"webfetch": false}}"#,
    )
    .unwrap();
    git(&r.root, &["commit", "-qam", "tools"]);
    std::fs::write(
        r.root.join("opencode.json"),
        r#"{"permission": {"webfetch": "deny", "bash": {"*": "ask", "git push *": "deny", "git status": "allow"}, "edit": "ask"}}"#,
    )
    .unwrap();
    let (code, out, err) = run(&r, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no change in any decision"), "{out}");
}

#[test]
fn bad_input_exits_2_naming_the_side() {
    let r = repo();
    let (code, _, err) = run(&r, &["no-such-rev"]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-rev"), "{err}");
    std::fs::write(
        r.root.join("opencode.json"),
        "{\"permission\": {\"bash\": 42}}",
    )
    .unwrap();
    let (code, _, err) = run(&r, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the head side (work tree) does not load"),
        "{err}"
    );
    // The refused file is named as every command names it: relative to the project root.
    assert!(
        err.contains("\nopencode.json:1:25: error: OpenCode refuses this config"),
        "{err}"
    );
    // Outside git, without directories.
    let o = Command::new(bin())
        .arg("diff")
        .current_dir(&r.home)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &r.home)
        .env("GIT_CEILING_DIRECTORIES", r.home.parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// A catch-all put at the end of `edit` overrides every earlier `edit` rule: one region per
/// rule it overrides, reported as one cause (the rule that now decides them), with a count
/// and examples; JSON lists every region under it.
#[test]
fn regions_are_grouped_by_the_rule_that_causes_them() {
    let r = repo();
    let base = r#"{
  "permission": {
    "edit": {"src/*": "deny", "*.lock": "deny", "docs/*": "ask", "*.env": "deny"}
  }
}
"#;
    let head = r#"{
  "permission": {
    "edit": {"src/*": "deny", "*.lock": "deny", "docs/*": "ask", "*.env": "deny", "*": "allow"}
  }
}
"#;
    std::fs::write(r.root.join("opencode.json"), base).unwrap();
    git(&r.root, &["commit", "-qam", "base"]);
    std::fs::write(r.root.join("opencode.json"), head).unwrap();
    let (code, out, err) = run(&r, &["--project-only", "--color", "never"]);
    assert_eq!(code, 1, "{err}");
    // One line for the catch-all, however many rules it overrides.
    assert_eq!(out.matches("now decided by this rule").count(), 1, "{out}");
    // The four rules it overrides (for every agent), and what no rule named: each agent's
    // built-in default where it was not allow (compaction, explore, plan, summary, title;
    // build and general allow everything by default), one region per deciding rule.
    assert!(out.contains("edit: 9 regions deny/ask → allow"), "{out}");
    assert!(
        out.contains(r#"now deciding all of them: `edit` "*" allow at opencode.json:3:"#),
        "{out}"
    );
    assert!(out.contains("widened: 1 (regions: 9)"), "{out}");
    let (_, json, _) = run(&r, &["--project-only", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let causes = v["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{json}");
    assert_eq!(causes[0]["side"], "head");
    assert_eq!(causes[0]["rule"]["pattern"], "*");
    let regions = causes[0]["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 9, "{json}");
    assert!(regions.iter().all(|g| g["after"] == "allow"), "{json}");
    // Every region is also a change per agent in `changes`.
    assert_eq!(v["summary"]["causes"], 1);
    // The reverse: the catch-all removed; the cause is the base side's rule.
    git(&r.root, &["commit", "-qam", "head"]);
    std::fs::write(r.root.join("opencode.json"), base).unwrap();
    let (code, out, _) = run(&r, &["--project-only", "--color", "never"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.matches("no longer decided by this rule").count(),
        1,
        "{out}"
    );
    assert!(out.contains("narrowed: 1 (regions: 9)"), "{out}");
}

/// `--staged` compares HEAD with the index: what the commit would hold, whatever the work
/// tree says.
#[test]
fn staged_compares_head_with_the_index() {
    let r = repo();
    std::fs::write(r.root.join("opencode.json"), WIDER).unwrap();
    git(&r.root, &["add", "opencode.json"]);
    // The work tree goes back to BASE; the index still holds WIDER.
    std::fs::write(r.root.join("opencode.json"), BASE).unwrap();
    let (code, out, err) = run(&r, &["--staged", "--color", "never"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("permaudit diff: HEAD → index"), "{out}");
    assert!(out.contains(r#"bash "git push": deny → allow"#), "{out}");
    let (_, json, _) = run(&r, &["--staged", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["head"]["kind"], "index");
    // Without --staged the work tree (BASE) is compared: no change.
    let (code, out, _) = run(&r, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no change in any decision"), "{out}");
    // --staged and a head revision contradict each other.
    let (code, _, _) = run(&r, &["--staged", "HEAD", "HEAD"]);
    assert_eq!(code, 2);
}

#[test]
fn staged_places_name_the_file_not_git_index_syntax() {
    let r = repo();
    std::fs::write(r.root.join("opencode.json"), WIDER).unwrap();
    git(&r.root, &["add", "opencode.json"]);
    let (_, out, err) = run(&r, &["--staged", "--color", "never"]);
    // The head side's places read as the staged file: `opencode.json:3:56`, never
    // `:opencode.json:3:56` (git's index syntax, which no editor opens).
    assert!(out.contains("[opencode.json:3:"), "{out}{err}");
    assert!(
        !out.contains("[:opencode.json") && !out.contains(" :opencode.json"),
        "{out}"
    );
    assert!(out.contains("at HEAD:opencode.json:"), "{out}");
}

#[test]
fn a_repository_without_commits_diffs_against_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("proj");
    let home = dir.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    git(&root, &["init", "-q", "."]);
    std::fs::write(root.join("opencode.json"), WIDER).unwrap();
    let r = Repo {
        _dir: dir,
        root,
        home,
    };
    // The default base is the empty tree: every rule is new, as `git diff` would show it.
    let (code, out, err) = run(&r, &["--color", "never"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("no commits yet: the base side is empty"),
        "{err}"
    );
    assert!(
        out.contains("permaudit diff: no commits → work tree"),
        "{out}"
    );
    assert!(
        out.contains("widened") && out.contains("opencode.json:3:"),
        "{out}"
    );
    // A revision named outright still has to exist, and the error says why it does not.
    let (code, _, err) = run(&r, &["HEAD"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`HEAD` is not a revision") && err.contains("no commits yet"),
        "{err}"
    );
}

#[test]
fn the_worst_region_of_a_cause_comes_first() {
    let r = repo();
    // One new rule, `**` allow, takes regions that were asked (`*` ask) and regions that
    // were denied (`git push *` deny): deny → allow is what a reviewer must see first.
    std::fs::write(
        r.root.join("opencode.json"),
        r#"{
  "permission": {
    "bash": {"*": "ask", "git push *": "deny", "git status": "allow", "**": "allow"},
    "edit": "ask"
  }
}
"#,
    )
    .unwrap();
    let (code, out, err) = run(&r, &["--color", "never"]);
    assert_eq!(code, 1, "{out}{err}");
    let head = out
        .lines()
        .find(|l| l.contains("regions") && l.contains("→ allow"))
        .unwrap_or_else(|| panic!("no grouped cause:\n{out}"));
    assert!(head.contains("e.g. \"git push"), "{head}\n{out}");
    let first = out
        .lines()
        .find(|l| l.trim_start().starts_with("e.g. "))
        .unwrap_or_else(|| panic!("no example line:\n{out}"));
    assert!(first.contains("deny → allow"), "{first}\n{out}");
    // The pull-request comment leads with it too.
    let (_, md, _) = run(&r, &["--format", "markdown"]);
    let row = md
        .lines()
        .find(|l| l.contains("**widened**") && l.contains("bash"))
        .unwrap_or_else(|| panic!("no row:\n{md}"));
    let example = row.split(" | ").nth(5).unwrap_or("");
    assert!(example.starts_with("`git push"), "{row}");
    assert!(example.contains("(deny → allow)"), "{row}");
}
