//! `permaudit rules`: each agent's merged ruleset with provenance.
//!
//! JSON contract, version 1:
//! `{"version":1,"agent":NAME,"key":CONFIG_KEY,"mode":…,"hidden":bool,"native":bool,"rules":[{"permission",
//! "pattern","action","layer","source":{"path","line","column"}|null,"builtin":…}],
//! "hidden_tools":[…]}`; with every agent, `{"version":1,"agents":[…]}`.

use super::{Style, source_json};
use crate::agents::{Agent, hidden_tools};
use crate::project::Project;
use serde_json::json;

pub fn agent_json(p: &Project, a: &Agent) -> serde_json::Value {
    let sources = &p.loaded.sources;
    let rules: Vec<_> = a
        .rules
        .iter()
        .map(|r| {
            json!({
                "permission": r.permission,
                "pattern": r.pattern,
                "action": r.action.to_json(),
                "layer": r.layer.as_str(),
                "source": source_json(sources, r.loc),
                "builtin": r.builtin,
            })
        })
        .collect();
    json!({
        "version": 1,
        "agent": a.display,
        "key": a.name,
        "mode": a.mode.as_str(),
        "hidden": a.hidden,
        "native": a.native,
        "rules": rules,
        "hidden_tools": hidden_tools(&a.rules, p.platform),
        "opencode": opencode_json(p),
    })
}

/// The OpenCode release audited and the profile used for it (`--opencode-version`).
pub fn opencode_json(p: &Project) -> serde_json::Value {
    json!({"version": p.profile.requested.to_string(), "profile": p.profile.name()})
}

pub fn json_all(p: &Project) -> serde_json::Value {
    json!({
        "version": 1,
        "opencode": opencode_json(p),
        "agents": p.agents.iter().map(|a| agent_json(p, a)).collect::<Vec<_>>(),
    })
}

pub fn human(p: &Project, agents: &[&Agent], style: Style) -> String {
    let sources = &p.loaded.sources;
    let mut out = String::new();
    for (n, a) in agents.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let tag = if a.hidden { ", hidden" } else { "" };
        out.push_str(&format!(
            "{} ({}{tag})\n",
            style.bold(&a.name),
            a.mode.as_str()
        ));
        // A column's width: its longest text, at most `cap` characters.
        let width = |text: fn(&crate::model::Rule) -> &str, cap: usize| {
            a.rules
                .iter()
                .map(|r| text(r).chars().count())
                .max()
                .unwrap_or(0)
                .min(cap)
        };
        let wp = width(|r| &r.permission, 24);
        let wpat = width(|r| &r.pattern, 48);
        for (i, r) in a.rules.iter().enumerate() {
            let action = r.action.to_string();
            let origin = match r.loc {
                Some(l) => sources.position(l).to_string(),
                None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
            };
            // A permission or pattern wider than its column ends its line; the row goes on
            // below, at the next column, so that every action stays in one column.
            let mut row = format!("  {i:>3}  ");
            for (text, width) in [
                (super::clean(&r.permission), wp),
                (super::clean(&r.pattern), wpat),
            ] {
                let at = row.rsplit('\n').next().map_or(0, |l| l.chars().count());
                let n = text.chars().count();
                row.push_str(&text);
                if n > width {
                    row.push('\n');
                    row.push_str(&" ".repeat(at + width + 2));
                } else {
                    row.push_str(&" ".repeat(width - n + 2));
                }
            }
            out.push_str(&format!(
                "{row}{}{}  {}  {}\n",
                style.paint_action(&action),
                " ".repeat(5usize.saturating_sub(action.chars().count())),
                style.dim(&format!("{:<18}", r.layer.as_str())),
                style.dim(&origin),
            ));
        }
        let hidden = hidden_tools(&a.rules, p.platform);
        out.push_str(&format!(
            "  hidden tools: {}\n",
            if hidden.is_empty() {
                "none".to_string()
            } else {
                hidden.join(", ")
            }
        ));
    }
    out
}
