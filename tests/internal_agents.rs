//! One rule for OpenCode's internal agents (built in and hidden: `compaction`, `summary`,
//! `title`), docs/commands.md "Internal agents": every human and markdown list of agents
//! leaves them out, and a listing one agent at a time folds them into one line; a user's
//! own `hidden: true` agent is not internal and is always shown; JSON keeps every agent.

mod check_support;

use check_support::Tree;

const INTERNAL: [&str; 3] = ["compaction", "summary", "title"];

/// A project with a user's hidden subagent, a plan agent that keeps its own `rm` deny and
/// a package script; `rm` is denied (base) or allowed (head) for every other agent.
fn side(rm: &str) -> String {
    format!(
        r#"{{
  "permission": {{"bash": {{"*": "ask", "rm *": "{rm}"}}}},
  "agent": {{
    "helper": {{"mode": "subagent", "hidden": true, "description": "mine"}},
    "plan": {{"permission": {{"bash": {{"rm *": "deny"}}}}}}
  }}
}}
"#
    )
}

fn tree() -> Tree {
    let script = r#"{"scripts": {"clean": "rm -rf dist"}}"#;
    Tree::new()
        .file("project/opencode.json", &side("allow"))
        .file("project/package.json", script)
        .file("base/opencode.json", &side("deny"))
        .file("base/package.json", script)
}

/// The lines of `text` that name agents (a markdown table's rows name them in a column).
fn agent_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains("agents:") || l.contains("agent `") || l.contains("build"))
        .collect()
}

fn names_no_internal(lines: &[&str], what: &str) {
    assert!(!lines.is_empty(), "{what}: no line names agents");
    for l in lines {
        // (`title=` is a GitHub annotation's property, not the agent.)
        let l = l.replace("title=", "");
        for i in INTERNAL {
            assert!(!l.contains(i), "{what}: {i} listed: {l}");
        }
    }
    assert!(
        lines.iter().any(|l| l.contains("helper")),
        "{what}: the user's hidden agent is not listed: {lines:?}"
    );
}

#[test]
fn diff_leaves_internal_agents_out_in_human_markdown_github_and_commands() {
    let t = tree();
    let base = t.root().join("base").display().to_string();
    let diff = |format: &str| {
        t.run(&[
            "diff",
            "--project-only",
            "--base-dir",
            &base,
            "--head-dir",
            ".",
            "--format",
            format,
        ])
    };
    for format in ["human", "markdown", "github"] {
        let run = diff(format);
        assert_eq!(run.code, 1, "{format}: {}\n{}", run.stdout, run.stderr);
        names_no_internal(&agent_lines(&run.stdout), format);
        // The project command's line too.
        assert!(
            run.stdout
                .lines()
                .any(|l| l.contains("rm -rf dist") && l.contains("helper")),
            "{format}: {}",
            run.stdout
        );
    }
    // JSON keeps every agent (the contract).
    let json = diff("json");
    let v = json.json();
    for i in INTERNAL {
        assert!(
            v["changes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["agent"] == i),
            "{i} missing from JSON"
        );
    }
}

#[test]
fn rules_and_map_fold_internal_agents_into_one_line_and_show_hidden_user_agents() {
    let t = tree();
    let rules = t.run(&["rules", "--project-only"]);
    assert_eq!(rules.code, 0, "{}", rules.stderr);
    let headers: Vec<&str> = rules
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .collect();
    assert!(
        headers.contains(&"helper (subagent, hidden)"),
        "{headers:?}"
    );
    for i in INTERNAL {
        assert!(
            !headers.iter().any(|h| h.starts_with(&format!("{i} ("))),
            "{i} listed: {headers:?}"
        );
    }
    assert!(
        rules
            .stdout
            .contains("OpenCode's internal agents compaction, summary, title are folded"),
        "{}",
        rules.stdout
    );
    // By name, one is shown; JSON keeps every agent.
    let one = t.run(&["rules", "--project-only", "--agent", "title"]);
    assert!(
        one.stdout.starts_with("title (primary, hidden)"),
        "{}",
        one.stdout
    );
    let json = t
        .run(&["rules", "--project-only", "--format", "json"])
        .json();
    assert_eq!(json["agents"].as_array().unwrap().len(), 8, "{json}");

    let map = t.run(&["map", "--commands", "--project-only"]);
    assert_eq!(map.code, 0, "{}", map.stderr);
    assert!(map.stdout.contains("helper"), "{}", map.stdout);
    assert!(
        map.stdout
            .contains("OpenCode's internal agents compaction, summary, title are folded"),
        "{}",
        map.stdout
    );
}

#[test]
fn check_names_a_finding_s_agents_without_internal_ones() {
    // The shared allow below plan's deny: a finding for every agent but plan.
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"bash": {"rm *": "deny", "*": "allow"}}, "agent": {"helper": {"mode": "subagent", "hidden": true, "description": "mine"}, "plan": {"permission": {"bash": {"rm *": "deny"}}}}}"#,
    );
    let run = t.run(&["check", "--fail-on", "never"]);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("help: agents:") && !l.ends_with("agents: all"))
        .collect();
    names_no_internal(&lines, "check");
}
