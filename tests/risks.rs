//! The reviewer's risks end to end, on the issue's realistic config: the read-only agents
//! made to edit by a shared allow, an agent that can rewrite its own rules, a typo'd agent
//! key, and `explain edit /etc/passwd` asking `external_directory` first.

mod check_support;

use check_support::{Tree, findings_of as ids};

const CONFIG: &str = r#"{
  "permission": {
    "edit": "allow",
    "bash": {"*": "ask", "git status": "allow"},
    "read": {"*": "allow", "*.env": "deny"}
  },
  "agent": {
    "review": {"permision": {"edit": "deny"}}
  }
}
"#;

#[test]
fn check_reports_the_risks_of_the_realistic_config() {
    let t = Tree::new().file("project/opencode.json", CONFIG);
    let out = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    let v = out.json();
    let ro = ids(&v, "read-only-agent-writes");
    let agents: Vec<&str> = ro
        .iter()
        .flat_map(|f| f["agents"].as_array().unwrap().iter())
        .filter_map(|a| a.as_str())
        .collect();
    assert!(
        agents.contains(&"plan") && agents.contains(&"explore"),
        "{ro:#?}"
    );
    assert!(ro.iter().all(|f| f["source"]["line"] == 3), "{ro:#?}");
    let sm = ids(&v, "self-modification");
    assert!(
        sm.iter()
            .any(|f| f["agents"].as_array().unwrap().iter().any(|a| a == "build")),
        "{v:#}"
    );
    let typo = ids(&v, "unknown-agent-key");
    assert_eq!(typo.len(), 1, "{typo:#?}");
    assert_eq!(typo[0]["source"]["line"], 8);
    assert!(
        typo[0]["message"]
            .as_str()
            .unwrap()
            .contains("`permission`")
    );
    // bash asks here, so `cat .env` does not walk around the read deny.
    assert!(ids(&v, "deny-bypass").is_empty(), "{v:#}");
}

#[test]
fn explain_edit_of_an_outside_path_asks_external_directory_first() {
    let t = Tree::new().file("project/opencode.json", CONFIG);
    let out = t.run(&["explain", "edit", "/etc/passwd", "--format", "json"]);
    let v = out.json();
    assert_eq!(v["action"], "ask", "{v:#}");
    assert_eq!(v["decided_by"], "external_directory");
    assert_eq!(v["external_directory"][0]["pattern"], "/etc/*");
    assert!(v["pattern"].as_str().unwrap().ends_with("../etc/passwd"));
    let human = t.run(&["explain", "edit", "/etc/passwd"]);
    assert!(
        human.stdout.contains("external_directory \"/etc/*\"  ask"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_hidden_tool_is_denied_whatever_the_input() {
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"bash": {"echo *": "allow", "*": "deny"}}}"#,
    );
    let out = t.run(&["explain", "bash", "cd ."]);
    assert!(out.stdout.starts_with("deny"), "{}", out.stdout);
    assert!(out.stdout.contains("the tool is hidden from this agent"));
}

#[test]
fn explain_of_a_permission_no_tool_checks_says_which_was_meant() {
    let t = Tree::new().file("project/opencode.json", "{}");
    let out = t.run(&["explain", "eddit", "x"]);
    assert!(out.stderr.contains("did you mean `edit`"), "{}", out.stderr);
}
