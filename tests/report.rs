//! `permaudit report` end to end on a git repository made from `fixtures/report` (isolated
//! HOME, no OpenCode environment): the page is the same bytes every run and wherever the
//! checkout is, and the data it embeds says what the other commands say (`rules`,
//! `check`, `map`, `map --commands`, `map --delegation`, `diff`). Every rule's example
//! input is re-decided with the evaluator. The browser half is scripts/test-report.sh.

mod report_support;

use permaudit::agents::evaluate;
use permaudit::glob::{Platform, Wildcard};
use permaudit::model::{Action, Form, Layer, Rule};
use serde_json::Value;
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

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// `fixtures/report` as a committed git repository named `proj`.
fn repo() -> Repo {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("proj");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/report"),
        &root,
    );
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "fixture"]);
    Repo {
        _tmp: tmp,
        root,
        home,
    }
}

impl Repo {
    fn run(&self, args: &[&str]) -> Out {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_permaudit"));
        cmd.arg("-C").arg(&self.root).args(args);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            if k.starts_with("OPENCODE") || k.starts_with("XDG_") {
                cmd.env_remove(&k);
            }
        }
        cmd.env("HOME", &self.home).env("NO_COLOR", "1");
        let o = cmd.stdin(Stdio::null()).output().expect("permaudit");
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.code == 0 || out.code == 1, "{args:?}: {}", out.stderr);
        serde_json::from_str(&out.stdout).expect("JSON")
    }

    fn page(&self, extra: &[&str]) -> String {
        let mut args = vec!["report", "-o", "-"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    }
}

/// The JSON the page embeds.
fn data(page: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"data\">";
    let start = page.find(open).expect("data element") + open.len();
    let end = start + page[start..].find("</script>").expect("end of data");
    serde_json::from_str(&page[start..end]).expect("data is JSON")
}

fn action(s: &str) -> Action {
    Action::parse(s).unwrap_or(Action::Other(Value::Null))
}

/// An agent's rules as `rules --format json` lists them.
fn rules_of(agent: &Value) -> Vec<Rule> {
    agent["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            Rule::builtin(
                r["permission"].as_str().unwrap(),
                r["pattern"].as_str().unwrap(),
                action(r["action"].as_str().unwrap()),
                Form::String,
                Layer::Defaults,
                "test",
            )
        })
        .collect()
}

#[test]
fn same_bytes_every_run_and_wherever_the_checkout_is() {
    // Two checkouts beside each other, one HOME elsewhere: OpenCode's built-in rules name
    // HOME (plan's plans directory relative to the worktree), so it stays put.
    let home = tempfile::tempdir().expect("tempdir");
    let a = Repo {
        home: home.path().to_path_buf(),
        ..repo()
    };
    let b = Repo {
        home: home.path().to_path_buf(),
        ..repo()
    };
    let first = a.page(&[]);
    assert!(first == a.page(&[]), "two runs differ");
    assert!(first == b.page(&[]), "two checkouts differ");
    // Written to the file -o names, the same bytes.
    let out = a.run(&["report", "-o", "page.html"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::read_to_string(a.root.join("page.html")).unwrap() == first);
    // Self-contained: no script, style or image from anywhere, and a CSP that refuses them.
    assert!(!first.contains("<script src") && !first.contains("<link"));
    assert!(first.contains("default-src 'none'"));
}

#[test]
fn rules_and_matrix_agree_with_rules_json() {
    let r = repo();
    let d = data(&r.page(&[]));
    let rules = r.json(&["rules", "--format", "json"]);
    let want: Vec<&Value> = rules["agents"].as_array().unwrap().iter().collect();
    let agents = d["agents"].as_array().unwrap();
    assert_eq!(agents.len(), want.len());
    let perms = report_support::permissions(&d);
    for ((a, w), cells) in agents.iter().zip(&want).zip(d["cells"].as_array().unwrap()) {
        assert_eq!(a["name"], w["key"]);
        let page_rules = a["rules"].as_array().unwrap();
        let json_rules = w["rules"].as_array().unwrap();
        assert_eq!(page_rules.len(), json_rules.len(), "{}", a["name"]);
        for (p, j) in page_rules.iter().zip(json_rules) {
            assert_eq!(p[0], j["permission"]);
            assert_eq!(p[1], j["pattern"]);
            assert_eq!(p[2], j["action"]);
            assert_eq!(p[3], j["layer"]);
        }
        let evaluated = rules_of(w);
        // Every example input is decided by its rule.
        for (i, p) in page_rules.iter().enumerate() {
            if let Some(ex) = p[5].as_array() {
                let (perm, input) = (ex[0].as_str().unwrap(), ex[1].as_str().unwrap());
                let dec = evaluate(&evaluated, perm, input, Platform::Unix);
                assert_eq!(
                    dec.rule,
                    Some(i),
                    "{} rule {i}: {perm} {input:?}",
                    a["name"]
                );
            }
        }
        // Each cell lists exactly the rules whose permission glob matches, in order; a
        // uniform summary is what a handful of inputs decide.
        for (perm, cell) in perms.iter().zip(cells.as_array().unwrap()) {
            let listed: Vec<u64> = cell[2]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().or_else(|| e[0].as_u64()).unwrap())
                .collect();
            let matching: Vec<u64> = evaluated
                .iter()
                .enumerate()
                .filter(|(_, r)| Wildcard::compile(&r.permission).is_match(perm, Platform::Unix))
                .map(|(i, _)| i as u64)
                .collect();
            assert_eq!(listed, matching, "{} {perm}", a["name"]);
            let summary = cell[0].as_str().unwrap();
            if summary != "mixed" && cell[1] == false {
                for input in [
                    "",
                    "x",
                    "src/index.ts",
                    "secrets/a",
                    "a.env",
                    "git push x",
                    "rm -rf /",
                ] {
                    let e = evaluate(&evaluated, perm, input, Platform::Unix).effect;
                    assert_eq!(
                        e.to_string(),
                        summary,
                        "{} {perm} {input:?}: the cell says {summary}",
                        a["name"]
                    );
                }
            }
        }
    }
}

#[test]
fn findings_delegation_files_and_commands_agree_with_their_commands() {
    let r = repo();
    let d = data(&r.page(&[]));
    // Findings: check's, in check's order, with its counts.
    let check = r.json(&["check", "--format", "json"]);
    let key = |f: &Value| {
        (
            f["id"].clone(),
            f["level"].clone(),
            f["message"].clone(),
            f["source"].clone(),
        )
    };
    let page: Vec<_> = d["findings"].as_array().unwrap().iter().map(key).collect();
    let want: Vec<_> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(key)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(page, want);
    assert_eq!(d["summary"], check["summary"]);
    for f in d["findings"].as_array().unwrap() {
        let s = &f["snippet"];
        let mark = s["mark"].as_u64().unwrap();
        assert_eq!(mark, f["source"]["line"].as_u64().unwrap());
        assert!(s["lines"].as_array().unwrap().len() >= 3);
    }
    // Delegation: map --delegation's edges; the auditor (no edit, no bash) starting the
    // fixer (edits) is the one escalation.
    let deleg = r.json(&["map", "--delegation", "--format", "json"]);
    let edges = |v: &Value| -> Vec<(String, String, String)> {
        let mut e: Vec<_> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["caller"].as_str().unwrap().to_string(),
                    e["subagent"].as_str().unwrap().to_string(),
                    e["action"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        e.sort();
        e
    };
    assert_eq!(edges(&d["delegation"]["edges"]), edges(&deleg["edges"]));
    let esc: Vec<(&str, &str)> = d["delegation"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["escalation"].is_null())
        .map(|e| {
            (
                e["caller"].as_str().unwrap(),
                e["subagent"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(esc, [("auditor", "fixer")]);
    // Files: map's read and edit actions for every agent and file.
    let map = r.run(&["map", "--format", "json"]);
    assert_eq!(map.code, 0, "{}", map.stderr);
    let names = report_support::names(&d);
    let paths = d["files"]["paths"].as_array().unwrap();
    let letter = |s: &str| match s {
        "allow" => 'a',
        "ask" => 'k',
        _ => 'd',
    };
    let mut seen = 0;
    for line in map.stdout.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        let a = names
            .iter()
            .position(|n| *n == rec["agent"].as_str().unwrap())
            .unwrap();
        let f = paths.iter().position(|p| *p == rec["path"]).unwrap();
        for perm in ["read", "edit"] {
            let got = d["files"][perm][a]
                .as_str()
                .unwrap()
                .chars()
                .nth(f)
                .unwrap();
            assert_eq!(got, letter(rec[perm]["action"].as_str().unwrap()), "{line}");
        }
        seen += 1;
    }
    assert_eq!(seen, paths.len() * names.len());
    // Commands: map --commands' action per command and agent.
    let cmds = r.run(&["map", "--commands", "--format", "json"]);
    assert_eq!(cmds.code, 0, "{}", cmds.stderr);
    let rows = d["commands"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for line in cmds.stdout.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        let row = rows
            .iter()
            .find(|c| c["text"] == rec["command"] || c["text"] == rec["input"])
            .unwrap_or_else(|| panic!("{line}"));
        let a = names
            .iter()
            .position(|n| *n == rec["agent"].as_str().unwrap())
            .unwrap();
        assert_eq!(row["decided"][a][0], rec["action"], "{line}");
    }
}

#[test]
fn base_leads_with_what_diff_says() {
    let r = repo();
    // A change that widens: the auditor may now run every command.
    let path = r.root.join("opencode.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"bash\": \"deny\",", "\"bash\": \"allow\","),
    )
    .unwrap();
    let d = data(&r.page(&["--base", "HEAD"]));
    let diff = r.json(&["diff", "HEAD", "--format", "json"]);
    assert_eq!(d["diff"], diff);
    assert!(
        diff["causes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["class"] == "widened")
    );
    // Without --base there is no diff.
    assert!(data(&r.page(&[]))["diff"].is_null());
    // A base that is not a revision: diff's refusal, exit 2.
    let out = r.run(&["report", "-o", "-", "--base", "no-such-rev"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no-such-rev"), "{}", out.stderr);
}

#[test]
fn a_refused_config_is_exit_2_at_its_place_and_writes_nothing() {
    let r = repo();
    std::fs::write(
        r.root.join("opencode.json"),
        "{\n  \"permission\": {\"edit\": 3,}\n}\n",
    )
    .unwrap();
    let out = r.run(&["report", "-o", "page.html"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("opencode.json:2:"), "{}", out.stderr);
    assert!(!r.root.join("page.html").exists());
}

#[test]
fn config_text_cannot_end_the_script_or_inject_markup() {
    let r = repo();
    let hostile = r#"{"permission": {"bash": {"</script><script>alert(1)</script>": "deny", "<img src=x onerror=alert(1)>": "ask"}},
 "agent": {"<b>x</b>": {"mode": "subagent", "permission": {"edit": "allow"}}}}"#;
    std::fs::write(r.root.join("opencode.json"), hostile).unwrap();
    let page = r.page(&[]);
    assert!(
        !page.contains("</script><script>alert"),
        "a pattern ended the script"
    );
    assert!(!page.contains("<img src=x"), "a pattern became markup");
    assert!(!page.contains("<b>x</b>"), "an agent name became markup");
    // The data still holds the exact texts.
    let d = data(&page);
    let texts = d.to_string();
    assert!(texts.contains("</script><script>alert(1)</script>"));
    assert!(texts.contains("<b>x</b>"));
}

#[test]
fn base_dir_compares_that_directory_with_the_start_directory() {
    let r = repo();
    let base = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/report"),
        base.path(),
    );
    // The same config on both sides: nothing changes.
    let same = data(&r.page(&["--base-dir", base.path().to_str().unwrap()]));
    assert_eq!(same["diff"]["causes"].as_array().unwrap().len(), 0);
    // The base denies the fixer's edits: the work tree's allow widens them.
    let path = base.path().join("opencode.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"edit\": \"allow\",", "\"edit\": \"deny\","),
    )
    .unwrap();
    let d = data(&r.page(&["--base-dir", base.path().to_str().unwrap()]));
    let widened: Vec<&Value> = d["diff"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["class"] == "widened")
        .collect();
    assert!(
        widened.iter().any(|c| c["permission"] == "edit"
            && c["agents"].as_array().unwrap().contains(&"fixer".into())),
        "{}",
        d["diff"]
    );
}

/// Every cell of the fixture's page against the `explain` binary: one `explain PERMISSION
/// --agent A --stdin -z --format json` per cell, with the inputs `report_support` puts.
fn cells_agree_with_the_explain_binary(r: &Repo, d: &Value) -> usize {
    let names = report_support::names(d);
    let mut tally = report_support::Tally::default();
    let mut problems = Vec::new();
    for (ai, a) in d["agents"].as_array().unwrap().iter().enumerate() {
        for (pi, p) in d["permissions"].as_array().unwrap().iter().enumerate() {
            let permission = p.as_str().unwrap();
            let cell = &d["cells"][ai][pi];
            let inputs = report_support::inputs_of(cell, a, permission, &names);
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_permaudit"));
            cmd.arg("-C").arg(&r.root).args([
                "explain", permission, "--stdin", "-z", "--agent", names[ai], "--format", "json",
            ]);
            for (k, _) in std::env::vars_os() {
                let k = k.to_string_lossy().into_owned();
                if k.starts_with("OPENCODE") || k.starts_with("XDG_") {
                    cmd.env_remove(&k);
                }
            }
            let mut child = cmd
                .env("HOME", &r.home)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let stdin: Vec<u8> = inputs.iter().flat_map(|i| i.bytes().chain([0])).collect();
            std::io::Write::write_all(&mut child.stdin.take().unwrap(), &stdin).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let answers: Vec<Value> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            problems.extend(report_support::check_cell(
                a, permission, cell, &inputs, &answers, &mut tally,
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    tally.answers
}

/// A config exercising what OpenCode never consults, a hidden user subagent and rules the
/// matrix must not misstate: `write`/`list`/`codesearch`/`todoread`/`Bash` keys, an
/// absolute `read` path (never asked: OpenCode asks worktree-relative paths).
const TRIAGE: &str = r#"{
  "permission": {
    "edit": "allow",
    "write": "deny",
    "list": "deny",
    "codesearch": "allow",
    "todoread": "deny",
    "Bash": "ask",
    "read": {"*": "allow", "/etc/passwd": "deny"},
    "bash": {"*": "ask", "git push *": "allow"}
  },
  "agent": {
    "helper": {"mode": "subagent", "hidden": true, "description": "started by others", "permission": {"bash": "allow"}},
    "reviewer": {"mode": "primary", "permission": {"edit": "deny", "bash": "deny", "task": {"*": "deny", "helper": "allow"}}}
  }
}"#;

#[test]
fn every_cell_agrees_with_explain_and_unconsulted_keys_are_apart() {
    let r = repo();
    let n = cells_agree_with_the_explain_binary(&r, &data(&r.page(&[])));
    assert!(n > 300, "{n} answers");
    std::fs::write(r.root.join("opencode.json"), TRIAGE).unwrap();
    let d = data(&r.page(&[]));
    cells_agree_with_the_explain_binary(&r, &d);
    let perms = report_support::permissions(&d);
    // No column for a key no tool asks, nor for tools 1.18.34 does not have.
    for key in [
        "write",
        "list",
        "codesearch",
        "todoread",
        "Bash",
        "patch",
        "multiedit",
    ] {
        assert!(!perms.contains(&key), "a {key} column: {perms:?}");
    }
    // Each such key's rule is listed apart, once, with why and every agent holding it.
    let unconsulted = d["unconsulted"].as_array().unwrap();
    let agents = d["agents"].as_array().unwrap().len();
    for key in ["write", "list", "codesearch", "todoread", "Bash"] {
        let listed: Vec<&Value> = unconsulted
            .iter()
            .filter(|u| {
                u["permission"] == key && !u["place"].as_str().unwrap().starts_with("built-in")
            })
            .collect();
        assert_eq!(listed.len(), 1, "{key}: {unconsulted:?}");
        assert_eq!(
            listed[0]["agents"].as_array().unwrap().len(),
            agents,
            "{key}"
        );
        assert!(!listed[0]["why"].as_str().unwrap().is_empty());
    }
    assert!(unconsulted.iter().all(|u| u["permission"] != "edit"));
    // The write tool is decided by `edit`: explain write says what the edit column says.
    let build = d["agents"]
        .as_array()
        .unwrap()
        .iter()
        .position(|a| a["name"] == "build")
        .unwrap();
    let edit = perms.iter().position(|p| *p == "edit").unwrap();
    let w = r.run(&["explain", "write", "src/a.ts", "--format", "json"]);
    let w: Value = serde_json::from_str(&w.stdout).unwrap();
    assert_eq!(w["action"], d["cells"][build][edit][0], "{w}");
    // The absolute read path is never asked: the read cell shows no input for it and stays
    // allow (explain agrees: cells_agree_with_the_explain_binary).
    let read = perms.iter().position(|p| *p == "read").unwrap();
    let rules = d["agents"][build]["rules"].as_array().unwrap();
    let passwd = rules.iter().position(|x| x[1] == "/etc/passwd").unwrap();
    assert!(rules[passwd][5].is_null(), "{}", rules[passwd]);
    assert_eq!(d["cells"][build][read][0], "allow");
}

#[test]
fn a_cell_mixed_only_by_built_in_rules_says_its_default() {
    // No read rule of the user's: build's read is OpenCode's own `*` allow with its `.env`
    // asks. The cell says allow with two exceptions, both built in (the page then says so
    // in words), and explain agrees input by input.
    let r = repo();
    std::fs::write(
        r.root.join("opencode.json"),
        r#"{"permission": {"bash": "ask"}}"#,
    )
    .unwrap();
    let d = data(&r.page(&[]));
    cells_agree_with_the_explain_binary(&r, &d);
    let build = report_support::agent(&d, "build");
    let ai = report_support::names(&d)
        .iter()
        .position(|n| *n == "build")
        .unwrap();
    let read = report_support::permissions(&d)
        .iter()
        .position(|p| *p == "read")
        .unwrap();
    let cell = &d["cells"][ai][read];
    assert_eq!(
        (cell[0].as_str(), cell[3].as_str()),
        (Some("mixed"), Some("allow")),
        "{cell}"
    );
    let exceptions = cell[4].as_array().unwrap();
    assert_eq!(exceptions.len(), 2, "{cell}");
    for i in exceptions {
        let rule = &build["rules"][i.as_u64().unwrap() as usize];
        assert_eq!(
            (rule[2].as_str(), rule[3].as_str()),
            (Some("ask"), Some("defaults")),
            "{rule}"
        );
    }
}

#[test]
fn only_compaction_summary_and_title_are_internal() {
    let r = repo();
    std::fs::write(r.root.join("opencode.json"), TRIAGE).unwrap();
    let d = data(&r.page(&[]));
    let internal: Vec<&str> = d["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["internal"] == true)
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(internal, ["compaction", "summary", "title"]);
    let helper = report_support::agent(&d, "helper");
    assert_eq!(
        (helper["hidden"].clone(), helper["internal"].clone()),
        (true.into(), false.into())
    );
    // The page's script hides rows and picker entries by `internal` only.
    let page = r.page(&[]);
    assert!(!page.contains("a.hidden; })") && page.contains("return !agents[i].internal;"));
    // The hidden subagent runs any command unasked, and the reviewer (no bash, no edit) may
    // start it: both on the first screen.
    let risks = d["risks"].as_array().unwrap();
    let said = |agent: &str, permission: &str| {
        risks
            .iter()
            .any(|x| x["agent"] == agent && x["permission"] == permission)
    };
    assert!(said("helper", "bash"), "{risks:?}");
    assert!(said("reviewer", "task"), "{risks:?}");
    assert!(
        !said("reviewer", "bash") && !said("reviewer", "edit"),
        "{risks:?}"
    );
    assert!(
        risks
            .iter()
            .all(|x| !["compaction", "summary", "title"].contains(&x["agent"].as_str().unwrap()))
    );
    // build may push without asking (`git push *` allow beside an ask catch-all).
    assert!(
        risks
            .iter()
            .any(|x| x["agent"] == "build" && x["text"].as_str().unwrap().contains("push")),
        "{risks:?}"
    );
}

#[test]
fn base_names_the_agents_diff_names() {
    let r = repo();
    // The auditor and the fixer decide read themselves; the built-in agents, the internal
    // ones and the runner take the shared `*.env` rule, which the change widens: diff
    // names them without the internal ones, and so must the page.
    let path = r.root.join("opencode.json");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(
            "\"edit\": \"deny\",",
            "\"edit\": \"deny\", \"read\": \"allow\",",
        )
        .replace(
            "\"edit\": \"allow\",",
            "\"edit\": \"allow\", \"read\": \"allow\",",
        );
    std::fs::write(&path, &text).unwrap();
    git(&r.root, &["commit", "-qam", "base"]);
    std::fs::write(
        &path,
        text.replace("\"*.env\": \"deny\"", "\"*.env\": \"allow\""),
    )
    .unwrap();
    let d = data(&r.page(&["--base", "HEAD"]));
    let human = r.run(&["diff", "HEAD"]);
    let said: Vec<&str> = human
        .stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("help: agents: "))
        .collect();
    let shown: Vec<&str> = d["diff_agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(shown, said, "{}", human.stdout);
    assert_eq!(
        shown,
        ["build, explore, general, plan, runner"],
        "{}",
        human.stdout
    );
}
