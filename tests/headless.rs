//! `check --headless`, `explain --headless` and `map --delegation` end to end: what a
//! non-interactive `opencode run` makes of the config, and who may start whom. The
//! semantics are the binary's (`tests/live_conformance.rs` drives `opencode run` with a
//! scripted model and compares each observed call with `explain`).

mod check_support;

use check_support::{Tree, findings_of as ids};
use serde_json::Value;

const CONFIG: &str = r#"{
  "permission": {"bash": {"*": "ask", "git *": "allow"}},
  "agent": {
    "boss": {"mode": "primary", "permission": {"bash": {"rm *": "deny"}, "task": {"*": "deny", "helper": "ask"}}},
    "helper": {"mode": "subagent", "permission": {"bash": "allow"}}
  }
}"#;

fn tree() -> Tree {
    Tree::new().file("project/opencode.json", CONFIG)
}

#[test]
fn headless_asks_are_listed_only_with_the_flag() {
    let t = tree();
    let plain = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(ids(&plain, "headless-ask").is_empty(), "{plain:#}");
    let run = t
        .run(&[
            "check",
            "--headless",
            "--format",
            "json",
            "--fail-on",
            "never",
        ])
        .json();
    let found = ids(&run, "headless-ask");
    // The user's asks at their places (`bash *`, boss's `task helper`), and OpenCode's
    // built-in asks without one.
    let mine: Vec<&Value> = found.iter().filter(|f| f["source"].is_object()).collect();
    assert_eq!(mine.len(), 2, "{found:#?}");
    assert!(mine.iter().all(|f| f["level"] == "warning"), "{mine:#?}");
    assert_eq!(mine[0]["source"]["line"], 2);
    assert!(
        mine[0]["message"]
            .as_str()
            .unwrap()
            .contains("`opencode run` rejects it")
    );
    assert_eq!(mine[1]["source"]["line"], 4);
    assert_eq!(mine[1]["witnesses"][0]["permission"], "task");
    assert_eq!(mine[1]["witnesses"][0]["input"], "helper");
    let builtin: Vec<String> = found
        .iter()
        .filter(|f| f["source"].is_null())
        .map(|f| {
            f["witnesses"][0]["permission"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for p in ["external_directory", "doom_loop", "read"] {
        assert!(builtin.iter().any(|b| b == p), "{p}: {builtin:?}");
    }
    let auto = t
        .run(&[
            "check",
            "--headless=auto",
            "--format",
            "json",
            "--fail-on",
            "never",
        ])
        .json();
    assert!(
        ids(&auto, "headless-ask").iter().any(|f| f["message"]
            .as_str()
            .unwrap()
            .contains("approves it without asking")),
        "{auto:#}"
    );
}

#[test]
fn explain_headless_resolves_an_ask() {
    let t = tree();
    let line = |args: &[&str]| -> Value {
        let out = t.run(args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(out.stdout.trim()).unwrap()
    };
    let v = line(&[
        "explain",
        "bash",
        "npm test",
        "--format",
        "json",
        "--headless",
    ]);
    assert_eq!(v["action"], "ask");
    assert_eq!(
        v["run"],
        serde_json::json!({"mode": "headless", "action": "deny"})
    );
    let v = line(&[
        "explain",
        "bash",
        "npm test",
        "--format",
        "json",
        "--headless=auto",
    ]);
    assert_eq!(v["run"]["action"], "allow");
    let v = line(&[
        "explain",
        "bash",
        "git status",
        "--format",
        "json",
        "--headless",
    ]);
    assert_eq!(v["run"]["action"], "allow");
    // Without the flag the JSON is as it always was.
    let v = line(&["explain", "bash", "npm test", "--format", "json"]);
    assert!(v.get("run").is_none(), "{v:#}");
    let human = t.run(&[
        "explain",
        "bash",
        "npm test",
        "--headless",
        "--color",
        "never",
    ]);
    assert!(human.stdout.contains("auto-rejecting"), "{}", human.stdout);
}

#[test]
fn delegation_graph_follows_task_rules_and_modes() {
    let t = tree();
    let out = t.run(&["map", "--delegation", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["version"], 1);
    assert_eq!(v["subagent_depth"], 1);
    let edges: Vec<(String, String, String)> = v["edges"]
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
    let has = |c: &str, s: &str| {
        edges
            .iter()
            .find(|e| e.0 == c && e.1 == s)
            .map(|e| e.2.clone())
    };
    // boss: `task * deny` then `helper ask`; subagents never delegate at depth 1.
    assert_eq!(has("boss", "helper").as_deref(), Some("ask"));
    assert_eq!(has("boss", "general"), None);
    assert_eq!(has("build", "helper").as_deref(), Some("allow"));
    assert!(
        edges.iter().all(|e| e.0 != "helper" && e.0 != "general"),
        "{edges:?}"
    );
    // A primary agent is never offered as a subagent.
    assert!(
        edges.iter().all(|e| e.1 != "boss" && e.1 != "build"),
        "{edges:?}"
    );
    let helper = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "helper")
        .unwrap();
    assert_eq!(
        helper["session_adds"],
        serde_json::json!(["todowrite deny", "task deny"])
    );
    // `subagent_depth` 2 lets a subagent whose ruleset names `task` delegate.
    let deep = Tree::new().file(
        "project/opencode.json",
        r#"{"subagent_depth": 2, "agent": {"helper": {"mode": "subagent", "permission": {"task": "allow"}}}}"#,
    );
    let v = deep
        .run(&["map", "--delegation", "--format", "json"])
        .json();
    assert_eq!(v["subagent_depth"], 2);
    assert!(
        v["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["caller"] == "helper"),
        "{v:#}"
    );
}

#[test]
fn delegation_escalation_needs_a_task_nobody_decided() {
    // boss denies `rm *` but may only *ask* to start helper: not an escalation (a person
    // approves the start); under `--headless=auto` the ask is approved, and it is.
    let t = tree();
    let plain = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        ids(&plain, "delegation-escalation")
            .iter()
            .all(|f| f["agents"][0] != "boss"),
        "{plain:#}"
    );
    // An agent whose task is left to the defaults: general does what it denies (its own
    // bash is closed too, or `sed -i` would walk round the deny without delegating).
    let open = Tree::new().file(
        "project/opencode.json",
        r#"{"agent": {"boss": {"mode": "primary", "permission": {"edit": "deny", "bash": "deny"}}}}"#,
    );
    let v = open
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let f = ids(&v, "delegation-escalation");
    assert_eq!(f.len(), 1, "{v:#}");
    assert_eq!(f[0]["level"], "warning");
    assert_eq!(f[0]["witnesses"][0]["action"], "deny");
    assert_eq!(f[0]["witnesses"][1]["permission"], "task");
    assert_eq!(f[0]["witnesses"][1]["action"], "allow");
    // The same deny written for every agent: nothing to escalate to.
    let shared = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"edit": "deny"}}"#,
    );
    let v = shared
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(ids(&v, "delegation-escalation").is_empty(), "{v:#}");
}
