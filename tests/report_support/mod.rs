//! The report page's matrix held to `explain`: one cell's claims checked against `explain`'s
//! JSON answers (`tests/report.rs` on the fixture, through the binary; `tests/report_cells.rs`
//! on every real config, through the same `Explainer` and `Renderer` the command uses).
//!
//! A cell `[summary, hidden, rules, default, exceptions]` claims:
//! - hidden: every input is denied;
//! - otherwise every input gets the default or the action of one of the exceptions
//!   (`allow`/`ask`/`deny` cells: exactly that one effect);
//! - each input it shows for a rule ("decides e.g.") is decided by that rule, with its
//!   action;
//! - a `mixed` cell has at least one exception with such an input.
//!
//! The inputs put to `explain`: every input the cell shows, and a fixed set of everyday
//! inputs of the permission that OpenCode asks (`checks::examples::is_asked`). An answer
//! decided by an `external_directory` ask before the permission is not the cell's (its own
//! column says it) and is counted apart.

#![allow(dead_code)]

use permaudit::model::Action;
use serde_json::Value;

/// Everyday inputs of `permission` (worktree-relative paths, commands without outside
/// paths), the agents' names for `task`; only those OpenCode asks.
pub fn probes(permission: &str, agents: &[&str]) -> Vec<String> {
    let fixed: &[&str] = match permission {
        "read" | "edit" | "glob" | "grep" => &[
            "src/index.ts",
            "README.md",
            ".env",
            "secrets/token.env",
            "package.json",
            "opencode.json",
            ".opencode/agent/build.md",
            "x",
        ],
        "bash" => &[
            "ls",
            "git status",
            "git push origin main",
            "rm -rf build",
            "npm test",
            "x",
        ],
        "external_directory" => &["/tmp/*", "/etc/*", "/home/user/*"],
        "webfetch" => &["https://example.com", "x"],
        _ => &["x", "*"],
    };
    let mut out: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    if permission == "task" {
        out.extend(agents.iter().map(|s| s.to_string()));
    }
    out.retain(|i| permaudit::checks::examples::is_asked(permission, i));
    out
}

/// The effect of a rule's action as the page embeds it (`"allow"`, or any other JSON value).
pub fn effect_of(action: &Value) -> String {
    match action.as_str().and_then(Action::parse) {
        Some(a) => a.effective().to_string(),
        None => "ask".into(),
    }
}

/// The inputs a cell shows, each with its rule: `(rule, input)`.
pub fn shown(cell: &Value, agent: &Value, permission: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for entry in cell[2].as_array().unwrap() {
        if let Some(i) = entry.as_u64() {
            let ex = &agent["rules"][i as usize][5];
            if ex[0] == permission
                && let Some(input) = ex[1].as_str()
            {
                out.push((i as usize, input.to_string()));
            }
        } else if let Some(input) = entry[1].as_str() {
            out.push((entry[0].as_u64().unwrap() as usize, input.to_string()));
        }
    }
    out
}

/// What one check found.
#[derive(Default)]
pub struct Tally {
    pub cells: usize,
    pub answers: usize,
    pub after_external: usize,
}

/// The deciding rule `explain` reports for an input decided by the permission itself:
/// `None` when an `external_directory` ask decided it, or the call is not one part.
fn own_rule(answer: &Value) -> Option<Option<u64>> {
    if answer["decided_by"] == "external_directory" {
        return None;
    }
    if let Some(parts) = answer["parts"].as_array() {
        let [part] = parts.as_slice() else {
            return None;
        };
        return Some(part["rule"].as_u64());
    }
    Some(answer["rule"].as_u64())
}

/// Checks one cell against `explain`'s answers to `inputs` (one JSON answer each); every
/// disagreement in words.
pub fn check_cell(
    agent: &Value,
    permission: &str,
    cell: &Value,
    inputs: &[String],
    answers: &[Value],
    tally: &mut Tally,
) -> Vec<String> {
    let name = agent["name"].as_str().unwrap();
    let rules = agent["rules"].as_array().unwrap();
    let mut problems = Vec::new();
    tally.cells += 1;
    let hidden = cell[1] == true;
    let summary = cell[0].as_str().unwrap();
    let default = cell[3].as_str().unwrap();
    let exceptions: Vec<usize> = cell[4]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap() as usize)
        .collect();
    let mut claimed: Vec<String> = vec![if hidden {
        "deny".into()
    } else {
        default.to_string()
    }];
    if !hidden {
        claimed.extend(exceptions.iter().map(|&i| effect_of(&rules[i][2])));
    }
    if summary != "mixed" && !(claimed.len() == 1 && claimed[0] == summary) {
        problems.push(format!(
            "{name} × {permission}: the cell says {summary}, its default and exceptions say {claimed:?}"
        ));
    }
    let shown = shown(cell, agent, permission);
    assert_eq!(answers.len(), inputs.len());
    for (input, answer) in inputs.iter().zip(answers) {
        tally.answers += 1;
        let action = answer["action"].as_str().unwrap();
        let Some(rule) = own_rule(answer) else {
            tally.after_external += 1;
            continue;
        };
        if !claimed.iter().any(|c| c == action) {
            problems.push(format!(
                "{name} × {permission} {input:?}: explain says {action} (rule {rule:?}), the cell ({}) says only {claimed:?}",
                summary
            ));
        }
        if hidden {
            continue;
        }
        for (i, _) in shown.iter().filter(|(_, s)| s == input) {
            let want = effect_of(&rules[*i][2]);
            if rule != Some(*i as u64) || action != want {
                problems.push(format!(
                    "{name} × {permission}: the cell shows {input:?} as decided by rule {i} ({want}); explain: rule {rule:?}, {action}"
                ));
            }
        }
    }
    if summary == "mixed" && !exceptions.iter().any(|i| shown.iter().any(|(k, _)| k == i)) {
        problems.push(format!(
            "{name} × {permission}: mixed, but no exception shows an input it decides"
        ));
    }
    problems
}

/// Every input to put to `explain` for one cell: the everyday probes, then what it shows.
pub fn inputs_of(cell: &Value, agent: &Value, permission: &str, agents: &[&str]) -> Vec<String> {
    let mut out = probes(permission, agents);
    for (_, input) in shown(cell, agent, permission) {
        if !out.contains(&input) {
            out.push(input);
        }
    }
    out
}

/// The page data's agent names, in order.
pub fn names(d: &Value) -> Vec<&str> {
    strings(&d["agents"], |a| &a["name"])
}

/// The page data's matrix columns, in order.
pub fn permissions(d: &Value) -> Vec<&str> {
    strings(&d["permissions"], |p| p)
}

/// The page data's agent named `name`.
pub fn agent<'a>(d: &'a Value, name: &str) -> &'a Value {
    d["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no agent {name}"))
}

fn strings<'a>(list: &'a Value, field: impl Fn(&'a Value) -> &'a Value) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| field(v).as_str().unwrap())
        .collect()
}
