//! `map --delegation`: who may start whom through the `task` tool (see
//! [`crate::delegation`]), as text or versioned JSON.

use super::{Style, source_json};
use crate::agents::Agent;
use crate::delegation::{self, Edge};
use crate::project::Project;
use serde_json::json;

/// The agents shown as callers: `only`, else every agent with an edge out.
fn callers<'p>(p: &'p Project, edges: &[Edge], only: Option<&str>) -> Vec<(usize, &'p Agent)> {
    p.agents
        .iter()
        .enumerate()
        .filter(|(i, a)| match only {
            Some(n) => a.name == n,
            None => edges.iter().any(|e| e.caller == *i),
        })
        .collect()
}

/// What a subagent's session adds after its own rules (in an interactive session).
fn forced(sub: &Agent) -> Vec<String> {
    delegation::child_session_rules(&[], sub)
        .iter()
        .map(|r| format!("{} {}", r.permission, r.action.effective()))
        .collect()
}

fn rule_text(p: &Project, a: &Agent, k: Option<usize>) -> String {
    match k.and_then(|k| a.rules.get(k)) {
        None => "no rule: ask".into(),
        Some(r) => {
            let place = match r.loc {
                Some(l) => p.loaded.sources.position(l).to_string(),
                None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
            };
            format!("task {:?} {} at {place}", r.pattern, r.action.effective())
        }
    }
}

pub fn human(p: &Project, edges: &[Edge], only: Option<&str>, style: Style) -> String {
    let depth = delegation::depth(p);
    let mut out = format!(
        "Delegation through the `task` tool (subagent_depth {depth}: {})\n",
        if depth >= 2 {
            "subagents whose ruleset names `task` may start subagents too"
        } else if depth == 1 {
            "only a primary agent's session starts subagents"
        } else {
            "no session starts subagents"
        }
    );
    let shown = callers(p, edges, only);
    if shown.is_empty() {
        out.push_str("  no agent may start a subagent\n");
    }
    for (c, caller) in shown {
        out.push_str(&format!("\n{}\n", style.bold(&caller.name)));
        let mine: Vec<&Edge> = edges.iter().filter(|e| e.caller == c).collect();
        if mine.is_empty() {
            out.push_str("  starts no subagent\n");
        }
        for e in mine {
            let sub = &p.agents[e.callee];
            let action = e.action.to_string();
            let pad = " ".repeat(5 - action.len().min(5));
            out.push_str(&format!(
                "  → {:<16} {}{pad}  {}\n",
                sub.name,
                style.paint_action(&action),
                style.dim(&rule_text(p, caller, e.rule))
            ));
        }
    }
    let subs: Vec<&Agent> = p
        .agents
        .iter()
        .filter(|a| delegation::is_subagent(a))
        .collect();
    if !subs.is_empty() {
        out.push_str(
            "\nA subagent's session adds after its own rules (unless its ruleset names them):\n",
        );
        for sub in subs {
            let f = forced(sub);
            out.push_str(&format!(
                "  {:<16} {}\n",
                sub.name,
                if f.is_empty() {
                    "nothing".to_string()
                } else {
                    f.join(", ")
                }
            ));
        }
        out.push_str(&style.dim(
            "  and the caller session's denies and external_directory rules (`opencode run`: question, plan_enter, plan_exit deny), not the caller agent's rules\n",
        ));
    }
    out
}

pub fn json(p: &Project, edges: &[Edge], only: Option<&str>) -> String {
    let shown: Vec<usize> = callers(p, edges, only)
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    let edges: Vec<serde_json::Value> = edges
        .iter()
        .filter(|e| shown.contains(&e.caller))
        .map(|e| {
            let caller = &p.agents[e.caller];
            let r = e.rule.and_then(|k| caller.rules.get(k));
            json!({
                "caller": caller.name,
                "subagent": p.agents[e.callee].name,
                "action": e.action,
                "rule": e.rule,
                "source": source_json(&p.loaded.sources, r.and_then(|r| r.loc)),
            })
        })
        .collect();
    let agents: Vec<serde_json::Value> = p
        .agents
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "primary": delegation::is_primary(a),
                "subagent": delegation::is_subagent(a),
                "session_adds": if delegation::is_subagent(a) { forced(a) } else { Vec::new() },
            })
        })
        .collect();
    let v = json!({
        "version": 1,
        "subagent_depth": delegation::depth(p),
        "agents": agents,
        "edges": edges,
    });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}
