//! `permaudit explain`: one decision per input, in the spirit of `git check-ignore -v`.
//!
//! JSON Lines contract, version 1: one object per input with `agent`, `permission`, `input`,
//! `action` (allow|ask|deny), `rule` (index into the agent's rules, or null), `layer`,
//! `source`, and `overridden` (indices of earlier matching rules).

use super::{Style, source_json};
use crate::model::agents::{Agent, Decision};
use crate::project::Project;
use serde_json::json;

pub fn json(p: &Project, a: &Agent, permission: &str, input: &str, d: &Decision) -> serde_json::Value {
    let rule = d.rule.map(|i| &a.rules[i]);
    json!({
        "version": 1,
        "agent": a.name,
        "permission": permission,
        "input": input,
        "action": d.effect,
        "rule": d.rule,
        "configured_action": rule.map(|r| r.action.to_json()),
        "layer": rule.map(|r| r.layer.as_str()),
        "source": source_json(&p.loaded.sources, rule.and_then(|r| r.loc)),
        "overridden": d.overridden,
    })
}

fn describe(p: &Project, a: &Agent, i: usize) -> String {
    let r = &a.rules[i];
    let origin = match r.loc {
        Some(l) => p.loaded.sources.position(l).to_string(),
        None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
    };
    format!(
        "rule {i}: {} {} {}  [{}] {origin}",
        r.permission,
        serde_json::to_string(&r.pattern).unwrap_or_default(),
        r.action,
        r.layer
    )
}

pub fn human(p: &Project, a: &Agent, permission: &str, input: &str, d: &Decision, style: Style) -> String {
    let action = d.effect.to_string();
    let mut out = format!(
        "{}{}  {} {} {}\n",
        style.paint_action(&action),
        " ".repeat(5 - action.len()),
        a.name,
        permission,
        serde_json::to_string(input).unwrap_or_default()
    );
    match d.rule {
        None => out.push_str("       no rule matched: ask (OpenCode's default)\n"),
        Some(i) => {
            out.push_str(&format!("       decided by {}\n", describe(p, a, i)));
            for &o in d.overridden.iter().rev() {
                out.push_str(&style.dim(&format!("       overrides  {}\n", describe(p, a, o))));
            }
        }
    }
    out
}
