//! `permaudit check` end to end: the seed example, exit codes, samples, and the structure
//! of the machine formats (JSON contract, SARIF 2.1.0, GitHub annotations).

mod check_support;

use check_support::Tree;
use serde_json::Value;
use std::path::Path;

const SEED: &str = r#"{"permission":{"edit":{"*":"ask","tests/**":"deny","**":"allow"}}}"#;

fn seed() -> Tree {
    // One key a line, so that each rule has its own line.
    Tree::new().file(
        "project/opencode.json",
        "{\"permission\":{\"edit\":{\n  \"*\":\"ask\",\n  \"tests/**\":\"deny\",\n  \"**\":\"allow\"\n}}}\n",
    )
}

fn findings<'a>(v: &'a Value, id: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id)
        .collect()
}

#[test]
fn the_seed_example_is_a_shadowed_deny_proved_by_a_tests_input() {
    // The issue's example, byte for byte, on one line.
    let t = Tree::new().file("project/opencode.json", SEED);
    let out = t.run(&["check", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v = out.json();
    let f = findings(&v, "shadowed-deny");
    assert!(!f.is_empty(), "{v:#}");
    let col = |needle: &str| SEED.find(needle).unwrap() as u64 + 1;
    for f in &f {
        assert_eq!(f["level"], "error");
        assert_eq!(f["source"]["line"], 1);
        assert_eq!(
            f["source"]["column"],
            col("\"tests/**\""),
            "points at the deny: {f}"
        );
        assert_eq!(
            f["related"][0]["source"]["column"],
            col("\"**\""),
            "points at `**`: {f}"
        );
        let w = &f["witnesses"][0];
        assert_eq!(w["permission"], "edit");
        assert!(w["input"].as_str().unwrap().starts_with("tests/"), "{w}");
        assert_eq!(w["action"], "allow");
    }
    // In the human form the two places are two lines of the file.
    let t = seed();
    let human = t.run(&["check"]);
    assert_eq!(human.code, 1);
    assert!(human.stdout.contains("shadowed-deny"), "{}", human.stdout);
    assert!(
        human.stdout.contains(" opencode.json:4:3 → allow"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("╭─[opencode.json:3:3]"),
        "{}",
        human.stdout
    );
    let v = t.run(&["check", "--format", "json"]).json();
    let f = findings(&v, "shadowed-deny");
    let build = f.iter().find(|f| f["agents"][0] == "build").unwrap();
    let rule = build["rule"].as_u64().unwrap();
    let w = &build["witnesses"][0];
    assert_eq!(
        w["rule"].as_u64().unwrap(),
        rule + 1,
        "decided by the next rule, `**`"
    );
    assert_eq!(
        (
            &build["source"]["line"],
            &build["related"][0]["source"]["line"]
        ),
        (&3.into(), &4.into())
    );
}

#[test]
fn exit_codes_follow_fail_on() {
    // OpenCode's own defaults are not the user's to fix: an empty project has no finding
    // at all, even at `--fail-on info`.
    let empty = Tree::new().file("project/opencode.json", "{}");
    assert_eq!(empty.run(&["check"]).code, 0);
    assert_eq!(empty.run(&["check", "--fail-on", "info"]).code, 0);
    // Only a note (redundant rule): below the default threshold.
    let note = Tree::new().file(
        "project/opencode.json",
        r#"{"permission":{"bash":{"git *":"ask","*":"ask"}}}"#,
    );
    assert_eq!(note.run(&["check"]).code, 0);
    assert_eq!(note.run(&["check", "--fail-on", "info"]).code, 1);
    let warn = Tree::new().file(
        "project/opencode.json",
        r#"{"permission":{"bash":{"git *":"allow","*":"ask"}}}"#,
    );
    assert_eq!(warn.run(&["check"]).code, 0);
    assert_eq!(warn.run(&["check", "--fail-on", "error"]).code, 0);
    assert_eq!(warn.run(&["check", "--fail-on", "warning"]).code, 1);
    let seed = seed();
    assert_eq!(seed.run(&["check"]).code, 1);
    assert_eq!(seed.run(&["check", "--fail-on", "never"]).code, 0);
    for format in ["human", "json", "sarif", "github"] {
        assert_eq!(seed.run(&["check", "--format", format]).code, 1, "{format}");
    }
}

#[test]
fn refused_configs_and_usage_errors_exit_2() {
    let bad = Tree::new().file(
        "project/opencode.json",
        "{\n  \"permission\": {\"bash\": \"ALLOW\"}\n}\n",
    );
    let out = bad.run(&["check"]);
    assert_eq!(out.code, 2);
    // Named relative to the project root, and said once (the place, then the snippet).
    assert!(out.stderr.starts_with("opencode.json:2:"), "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("ALLOW").count(),
        2,
        "headline and snippet only: {}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
    let absolute = bad.run(&["check", "--absolute-paths"]);
    assert!(
        absolute
            .stderr
            .starts_with("$ROOT/project/opencode.json:2:"),
        "{}",
        absolute.stderr
    );
    let syntax = Tree::new().file("project/opencode.json", "{permission: {}}");
    assert_eq!(syntax.run(&["check", "--format", "json"]).code, 2);
    let ok = Tree::new();
    for args in [
        &["check", "--format", "yaml"][..],
        &["check", "--fail-on", "sometimes"],
        &["check", "--no-such-flag"],
        &["check", "--samples"],
    ] {
        assert_eq!(ok.run(args).code, 2, "{args:?}");
    }
}

#[test]
fn samples_report_decisions_and_fail_on_mismatch() {
    let t = seed().file(
        "project/my-samples.txt",
        "# AGENT PERMISSION INPUT [=> ACTION]\nbuild edit tests/x.ts => deny\nbuild edit src/a.rs => allow\n* bash \"git status\"\n",
    );
    let out = t.run(&[
        "check",
        "--samples",
        "my-samples.txt",
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    let samples = v["samples"].as_array().unwrap();
    // One outcome per agent for `*`.
    let agents = t.run(&["rules", "--format", "json"]).json()["agents"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(samples.len(), 2 + agents);
    assert_eq!(samples[0]["expected"], "deny");
    assert_eq!(samples[0]["action"], "allow");
    assert_eq!(samples[0]["ok"], false);
    assert_eq!(samples[0]["sample"]["line"], 2);
    assert_eq!(samples[0]["source"]["line"], 4, "decided by `**`");
    assert_eq!(samples[1]["ok"], true);
    assert_eq!(samples[2]["expected"], Value::Null);
    assert_eq!(samples[2]["ok"], Value::Null);
    let m = findings(&v, "sample-mismatch");
    assert_eq!(m.len(), 1, "{m:#?}");
    assert_eq!(m[0]["level"], "error");
    assert_eq!(m[0]["source"]["path"], "my-samples.txt");
    assert_eq!(
        (&m[0]["source"]["line"], &m[0]["source"]["column"]),
        (&2.into(), &1.into())
    );
    assert_eq!(m[0]["witnesses"][0]["action"], "allow");
    // The mismatch alone makes check fail.
    let fixed = Tree::new()
        .file(
            "project/opencode.json",
            r#"{"permission":{"edit":{"*":"ask","**":"allow","tests/**":"deny"}}}"#,
        )
        .file("project/s.txt", "build edit tests/x.ts => allow\n");
    assert_eq!(fixed.run(&["check", "--samples", "s.txt"]).code, 1);
    // Human: the table lists the samples without an expectation.
    let human = t.run(&["check", "--samples", "my-samples.txt"]);
    assert!(
        human.stdout.contains("samples without an expectation"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("\"git status\""), "{}", human.stdout);
    assert!(
        human.stdout.contains("1 of 2 expectations hold"),
        "{}",
        human.stdout
    );
}

/// A sample of the write tool is decided as `explain write` decides it: as `edit`, the
/// permission the tool asks (a `write` deny decides nothing).
#[test]
fn a_write_sample_is_decided_as_edit_like_explain() {
    let t = Tree::new()
        .file(
            "project/opencode.json",
            r#"{"permission":{"write":"deny","edit":{"*":"allow","secret/*":"ask"}}}"#,
        )
        .file(
            "project/s.txt",
            "build write docs/a.md => deny\nbuild write secret/k => ask\n",
        );
    let v = t
        .run(&[
            "check",
            "--samples",
            "s.txt",
            "--format",
            "json",
            "--fail-on",
            "never",
        ])
        .json();
    let samples = v["samples"].as_array().unwrap();
    for (s, input) in samples.iter().zip(["docs/a.md", "secret/k"]) {
        let e = t
            .run(&["explain", "write", input, "--format", "json"])
            .json();
        assert_eq!(
            (&s["permission"], &s["action"]),
            (&e["permission"], &e["action"]),
            "{s} vs {e}"
        );
    }
    assert_eq!(samples[0]["action"], "allow");
    assert_eq!(samples[0]["ok"], false);
    assert_eq!(samples[1]["ok"], true);
}

#[test]
fn the_conventional_samples_file_is_read_from_the_start_directory_upwards() {
    let t = seed()
        .file(
            "project/.opencode/permaudit-samples.txt",
            "build edit tests/x.ts => deny\n",
        )
        .file("project/sub/.keep", "");
    let count = |t: &Tree, start: &str| {
        let v = t
            .run_in(start, &["check", "--format", "json", "--fail-on", "never"])
            .json();
        v["samples"].as_array().unwrap().len()
    };
    assert_eq!(count(&t, "project"), 1);
    assert_eq!(
        count(&t, "project/sub"),
        1,
        "found in a parent of the start directory"
    );
    // The nearest one wins.
    let t = t.file(
        "project/sub/.opencode/permaudit-samples.txt",
        "build edit a => ask
plan edit b => deny
",
    );
    assert_eq!(count(&t, "project/sub"), 2);
    let none = seed();
    assert_eq!(
        none.run(&["check", "--format", "json"]).json()["samples"],
        Value::Array(vec![])
    );
}

#[test]
fn bad_samples_exit_2_with_their_place() {
    for (text, place, needle) in [
        ("build edit\n", ":1:1:", "field"),
        ("# ok\nbuild bash git status\n", ":2:12:", "JSON string"),
        ("build edit x => maybe\n", ":1:17:", "allow, ask or deny"),
        ("nobody edit x\n", ":1:1:", "no agent named `nobody`"),
    ] {
        let t = seed().file("project/s.txt", text);
        let out = t.run(&["check", "--samples", "s.txt"]);
        assert_eq!(out.code, 2, "{text}");
        assert!(
            out.stderr.starts_with(&format!("s.txt{place}")),
            "{text}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(needle), "{text}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    let out = seed().run(&["check", "--samples", "missing.txt"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("missing.txt"), "{}", out.stderr);
}

#[test]
fn json_follows_the_version_2_contract() {
    let v = seed().run(&["check", "--format", "json"]).json();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&v),
        ["version", "opencode", "findings", "samples", "summary"]
    );
    assert_eq!(v["version"], 2);
    // The OpenCode release audited and its profile (docs/opencode.md).
    assert_eq!(
        v["opencode"],
        serde_json::json!({"version": "1.18.34", "profile": "1.18.24-1.18.34"})
    );
    let old = seed()
        .run(&["--opencode-version", "1.18.20", "check", "--format", "json"])
        .json();
    assert_eq!(
        old["opencode"],
        serde_json::json!({"version": "1.18.20", "profile": "1.18.16-1.18.23"})
    );
    let refused = seed().run(&["--opencode-version", "1.13.0", "check"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("older than 1.14.34"),
        "{}",
        refused.stderr
    );
    for f in v["findings"].as_array().unwrap() {
        assert!(f["agents"].as_array().is_some_and(|a| !a.is_empty()));
        assert_eq!(
            keys(f),
            [
                "id",
                "level",
                "agents",
                "rule",
                "message",
                "source",
                "related",
                "witnesses",
                "help"
            ]
        );
        for w in f["witnesses"].as_array().unwrap() {
            assert_eq!(keys(w), ["permission", "input", "action", "rule"]);
        }
    }
    assert_eq!(keys(&v["summary"]), ["error", "warning", "info"]);
}

/// The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that our output uses:
/// every `required` property, the enumerations and the value types.
fn sarif_errors(v: &Value) -> Vec<String> {
    let mut e = Vec::new();
    let mut need = |ok: bool, what: String| {
        if !ok {
            e.push(what);
        }
    };
    let is_str = |v: &Value| v.is_string();
    let message_ok = |m: &Value| m.is_object() && (is_str(&m["text"]) || is_str(&m["id"]));
    let mf_ok = |m: &Value| m.is_null() || (m.is_object() && is_str(&m["text"]));
    need(
        v["version"] == "2.1.0",
        "sarifLog.version must be \"2.1.0\"".into(),
    );
    need(
        v["$schema"].is_null() || is_str(&v["$schema"]),
        "sarifLog.$schema is a URI string".into(),
    );
    let Some(runs) = v["runs"].as_array() else {
        need(false, "sarifLog.runs is required (an array)".into());
        return e;
    };
    for (r, run) in runs.iter().enumerate() {
        let driver = &run["tool"]["driver"];
        need(
            driver.is_object(),
            format!("runs[{r}].tool.driver is required"),
        );
        need(
            is_str(&driver["name"]),
            format!("runs[{r}].tool.driver.name is required"),
        );
        need(
            driver["version"].is_null() || is_str(&driver["version"]),
            "driver.version is a string".into(),
        );
        let rules = driver["rules"].as_array().cloned().unwrap_or_default();
        let mut ids = Vec::new();
        for (k, rule) in rules.iter().enumerate() {
            need(is_str(&rule["id"]), format!("rules[{k}].id is required"));
            ids.push(rule["id"].as_str().unwrap_or_default().to_string());
            for key in ["shortDescription", "fullDescription", "help"] {
                need(
                    mf_ok(&rule[key]),
                    format!("rules[{k}].{key}.text is required"),
                );
            }
            let level = &rule["defaultConfiguration"]["level"];
            need(
                level.is_null()
                    || ["none", "note", "warning", "error"]
                        .contains(&level.as_str().unwrap_or("?")),
                format!("rules[{k}].defaultConfiguration.level"),
            );
        }
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        need(sorted.len() == ids.len(), "rule ids are unique".into());
        let Some(results) = run["results"].as_array() else {
            need(false, format!("runs[{r}].results should be an array"));
            continue;
        };
        for (k, res) in results.iter().enumerate() {
            need(
                message_ok(&res["message"]),
                format!("results[{k}].message needs text or id"),
            );
            need(
                ["none", "note", "warning", "error"]
                    .contains(&res["level"].as_str().unwrap_or("?")),
                format!("results[{k}].level"),
            );
            need(
                ids.iter().any(|i| res["ruleId"] == i.as_str()),
                format!("results[{k}].ruleId names a driver rule"),
            );
            for (l, loc) in res["locations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                let pl = &loc["physicalLocation"];
                need(
                    pl.is_object(),
                    format!("results[{k}].locations[{l}].physicalLocation"),
                );
                need(
                    is_str(&pl["artifactLocation"]["uri"]),
                    format!("results[{k}].locations[{l}] artifactLocation.uri"),
                );
                let region = &pl["region"];
                for key in ["startLine", "startColumn"] {
                    need(
                        region[key].as_u64().is_some_and(|n| n >= 1),
                        format!("results[{k}].locations[{l}].region.{key} ≥ 1"),
                    );
                }
            }
            if let Some(fp) = res.get("partialFingerprints") {
                need(
                    fp.as_object().is_some_and(|o| o.values().all(is_str)),
                    format!("results[{k}].partialFingerprints are strings"),
                );
            }
        }
    }
    e
}

#[test]
fn sarif_has_the_structure_sarif_2_1_0_requires() {
    let t = seed()
        .file("project/s.txt", "build edit tests/x.ts => deny\n")
        .file(
            "project/.opencode/agent/x.md",
            "---\npermission:\n  bash: deny\n  bash: ask\n---\n",
        );
    let out = t.run(&["check", "--format", "sarif", "--samples", "s.txt"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v = out.json();
    let errors = sarif_errors(&v);
    assert!(errors.is_empty(), "{errors:#?}");
    let results = v["runs"][0]["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    for id in ["shadowed-deny", "sample-mismatch", "broken-frontmatter"] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    // Worktree-relative URIs, and fingerprints that do not depend on where the tree is.
    let uris: Vec<&str> = results
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert!(
        uris.contains(&"opencode.json") && uris.contains(&"s.txt"),
        "{uris:?}"
    );
    let again = t
        .run(&["check", "--format", "sarif", "--samples", "s.txt"])
        .json();
    let fps = |v: &Value| -> Vec<Value> {
        v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["partialFingerprints"].clone())
            .collect()
    };
    assert_eq!(fps(&v), fps(&again));
    // The checker itself rejects what the schema rejects.
    let mut broken = v.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    broken["runs"][0]["tool"]["driver"]["name"] = Value::Null;
    assert_eq!(sarif_errors(&broken).len(), 2);
}

#[test]
fn github_annotations_name_file_line_and_column() {
    let out = seed().run(&["check", "--format", "github"]);
    assert_eq!(out.code, 1);
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("title=shadowed-deny"))
        .unwrap();
    assert!(
        line.starts_with("::error file=opencode.json,line=3,col=3,"),
        "{line}"
    );
}

#[test]
fn one_finding_per_place_in_every_format() {
    // A shared deny dead in every agent, an agent that overrides it with its own block, and
    // a markdown agent: one finding for the place, whatever the number of agents.
    let t = Tree::new()
        .file(
            "project/opencode.json",
            r#"{"permission":{"bash":{"rm *":"deny","*":"allow"}},
                "agent":{"build":{"permission":{"bash":"deny"}}}}"#,
        )
        .file(
            "project/.opencode/agent/review.md",
            "---\ndescription: r\npermission:\n  edit: deny\n---\nReview.\n",
        );
    let v = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let findings = v["findings"].as_array().unwrap();
    let dead: Vec<&Value> = findings
        .iter()
        .filter(|f| f["id"] == "shadowed-deny")
        .collect();
    assert_eq!(dead.len(), 1, "{findings:#?}");
    let agents: Vec<&str> = dead[0]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // build denies bash itself: its own block overrides the shared rules, so the finding
    // does not hold for it and does not name it.
    assert!(!agents.contains(&"build"), "{agents:?}");
    assert!(
        agents.contains(&"general") && agents.contains(&"review"),
        "{agents:?}"
    );
    let total = ["error", "warning", "info"]
        .iter()
        .map(|l| v["summary"][*l].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(total as usize, findings.len());
    let sarif = t
        .run(&["check", "--format", "sarif", "--fail-on", "never"])
        .json();
    assert_eq!(
        sarif["runs"][0]["results"].as_array().unwrap().len(),
        findings.len()
    );
    let github = t.run(&["check", "--format", "github", "--fail-on", "never"]);
    assert_eq!(github.stdout.lines().count(), findings.len());
}

#[test]
fn a_broken_frontmatter_is_one_message_at_one_level() {
    // Duplicate keys: js-yaml 3 refuses the frontmatter, OpenCode keeps the agent with no
    // rules from the file.
    let t = Tree::new().file(
        "project/.opencode/agent/review.md",
        "---\npermission:\n  bash: deny\n  bash: allow\n---\nReview.\n",
    );
    let level = permaudit_rule_level("broken-frontmatter", &t);
    for format in ["human", "concise", "json", "sarif", "github"] {
        let out = t.run(&["check", "--format", format]);
        assert_eq!(out.code, 1, "{format}: {}", out.stderr);
        // Said once, on stdout, as the finding; not again on stderr.
        assert!(
            !out.stderr.contains("broken-frontmatter"),
            "{format}: {}",
            out.stderr
        );
        assert_eq!(
            out.stdout.matches("duplicated mapping key").count(),
            1,
            "{format}: {}",
            out.stdout
        );
    }
    let v = t.run(&["check", "--format", "json"]).json();
    assert_eq!(v["findings"][0]["id"], "broken-frontmatter");
    assert_eq!(v["findings"][0]["level"], level.as_str());
    // A command that runs no checks says it on stderr, at the same level.
    let out = t.run(&["rules", "--agent", "review"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("broken-frontmatter").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("{level}[broken-frontmatter]")),
        "{}",
        out.stderr
    );
}

/// The level `permaudit rule ID` gives a kind (its first line: `` `ID` (LEVEL) ``).
fn permaudit_rule_level(id: &str, t: &Tree) -> String {
    let out = t.run(&["rule", id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = out.stdout.lines().next().unwrap_or_default().to_string();
    first
        .rsplit_once('(')
        .and_then(|(_, l)| l.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{first}"))
        .to_string()
}

#[test]
fn project_only_examples_print_the_same_whatever_the_runner_s_global_config() {
    // The README's examples and the pre-commit hook, on a machine with no global config and
    // on one whose ~/.config/opencode allows everything: --project-only reads the project
    // alone, so every command prints the same.
    let project = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/example/opencode.json"
    ))
    .unwrap();
    let clean = Tree::new().file("project/opencode.json", &project);
    let personal = Tree::new().file("project/opencode.json", &project).file(
        "home/.config/opencode/opencode.json",
        r#"{"permission":{"bash":{"git push *":"deny"},"edit":{"*.lock":"deny"}}}"#,
    );
    for args in [
        &["check"][..],
        &["explain", "edit", "tests/x.ts"],
        &["explain", "bash", "git push origin"],
        &["rules", "--agent", "build"],
    ] {
        let with = |t: &Tree| {
            let mut a = args.to_vec();
            a.insert(1, "--project-only");
            let out = t.run(&a);
            (out.code, out.stdout, out.stderr)
        };
        // Without the flag the global config shows (what OpenCode loads on that machine).
        assert_ne!(
            personal.run(args).stdout,
            clean.run(args).stdout,
            "{args:?}: the global config should matter without --project-only"
        );
        assert_eq!(with(&personal), with(&clean), "{args:?}");
    }
}

#[test]
fn example_inputs_are_ones_a_person_recognises() {
    // `**` is a catch-all: its example is a file a person pictures, not `xx`; `tests/**`
    // gives `tests/a.ts`, not `tests/xx`.
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/example/opencode.json"
    ))
    .unwrap();
    let t = Tree::new().file("project/opencode.json", &example);
    let out = t.run(&["check", "--format", "concise", "--fail-on", "never"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("\"xx\""), "{}", out.stdout);
    assert!(!out.stdout.contains("/xx\""), "{}", out.stdout);
    assert!(
        out.stdout.contains("read-only-agent-writes"),
        "{}",
        out.stdout
    );
    // A name ending in a dot reads as a typo: `.env.local`, not `a.env.`.
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission":{"read":{"*.env.*":"deny","*":"allow"}}}"#,
    );
    let out = t.run(&["check", "--format", "concise", "--fail-on", "never"]);
    let dead = out
        .stdout
        .lines()
        .find(|l| l.contains("shadowed-deny"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    let input = dead
        .split("read \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("{dead}"));
    let ext = input.rsplit_once('.').map_or("", |(_, e)| e);
    assert!(
        ext.len() > 1,
        "{input:?} ends in a dot or a one-letter extension: {dead}"
    );
}

#[test]
fn rules_keeps_its_columns_when_a_pattern_is_long() {
    let long = format!(
        "/home/{}/projects/secrets/*",
        "a-very-long-user-name".repeat(3)
    );
    let t = Tree::new().file(
        "project/opencode.json",
        &format!(r#"{{"permission":{{"read":{{"{long}":"deny","*.env":"ask"}}}}}}"#),
    );
    let out = t.run(&["rules", "--project-only", "--agent", "build"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Every action word starts in one column, the long pattern's row included (it goes on
    // below its pattern).
    let columns: std::collections::BTreeSet<usize> = out
        .stdout
        .lines()
        .filter_map(|l| {
            [" allow ", " ask ", " deny "]
                .iter()
                .filter_map(|a| l.find(a))
                .min()
        })
        .collect();
    assert_eq!(columns.len(), 1, "{columns:?}\n{}", out.stdout);
    assert!(out.stdout.contains(&long), "{}", out.stdout);
}

#[test]
fn the_readme_s_first_sample_is_what_check_prints() {
    // README.md's first ```text block is `permaudit -C fixtures/example check
    // --project-only` as printed, run from the repository: the lines before its `…` are
    // the output's first lines exactly, the lines after it its last lines.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme.find("```text\n").unwrap() + "```text\n".len();
    let block = &readme[start..start + readme[start..].find("\n```\n").unwrap()];
    let (head, tail) = block.split_once("\n…\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_permaudit"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .current_dir(root)
        .args(["-C", "fixtures/example", "check", "--project-only"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.starts_with(&format!("{head}\n")),
        "README.md's first sample is not how the output begins:\n{printed}"
    );
    assert!(
        printed.ends_with(&format!("\n{tail}\n")),
        "README.md's first sample is not how the output ends:\n{printed}"
    );
    assert!(head.lines().count() > 30, "the sample shows the dead deny");
}
