//! `permaudit map --commands` output: the commands a project runs and, for each agent,
//! whether OpenCode's bash tool would run them, ask, or refuse.
//!
//! Human: totals, then one section per group of agents that decide every command alike
//! (same actions by the same rules), each command with its origin (`file:line`, the script,
//! target or recipe name) and, unless allowed, the part and rule that decided it.
//!
//! JSON Lines, version 1: one object per command and agent, commands in the order found,
//! agents in `agent list` order: the `explain bash --format json` object of the command
//! plus `kind` (`package-script`, `make-recipe`, `just-recipe`, `workflow-run`), `name`
//! (script, target or recipe; null for workflow steps), `path` (worktree-relative) and
//! `line` (1-based).

use super::Style;
use crate::agents::Agent;
use crate::model::Effect;
use crate::project::Project;
use crate::shell::Request;
use crate::shell::corpus::Command;
use crate::shell::decide::{Decided, Decider};
use std::io::{self, Write};

/// One command, split, and its decision per agent (same order as the agents).
pub struct Row<'a> {
    pub command: &'a Command,
    pub request: &'a Request,
    pub decided: Vec<Decided>,
}

/// Write the JSON Lines records.
pub fn json(
    out: &mut dyn Write,
    p: &Project,
    agents: &[&Agent],
    rows: &[Row<'_>],
) -> io::Result<()> {
    for row in rows {
        for (a, d) in agents.iter().zip(&row.decided) {
            let answer = super::explain::Answer {
                p,
                a,
                permission: "bash",
                input: &row.command.text,
                decided: d,
            };
            let mut v = super::explain::bash_json(answer, row.request);
            if let Some(o) = v.as_object_mut() {
                let c = row.command;
                o.insert("kind".into(), c.kind.as_str().into());
                o.insert("name".into(), serde_json::json!(c.name));
                o.insert("path".into(), c.path.clone().into());
                o.insert("line".into(), c.line.into());
            }
            serde_json::to_writer(&mut *out, &v).map_err(io::Error::other)?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Why one command got its action, for one agent: the deciding pattern and rule.
fn why(p: &Project, a: &Agent, req: &Request, d: &Decided) -> String {
    let Some(decider) = d.decider else {
        return "nothing is asked".into();
    };
    let (what, dec) = match decider {
        Decider::External(i) => (
            format!(
                "external_directory {}",
                serde_json::to_string(&req.external_patterns[i]).unwrap_or_default()
            ),
            &d.external[i],
        ),
        Decider::Bash(i) => (
            format!(
                "part {}",
                serde_json::to_string(&req.patterns[i]).unwrap_or_default()
            ),
            &d.bash[i],
        ),
        Decider::Hidden => match &d.hidden {
            Some(h) => ("the bash tool is hidden from this agent".to_string(), h),
            None => return "the bash tool is hidden from this agent".into(),
        },
    };
    let rule = match dec.rule {
        None => "no rule matched (default ask)".to_string(),
        // Without its index in this agent's rules: agents deciding alike by the same
        // rule share a section.
        Some(k) => super::explain::describe_rule(p, a, k),
    };
    format!("{what}: {rule}")
}

/// One agent's action and reason per command.
type Lines = Vec<(Effect, String)>;

/// The human report.
pub fn human(p: &Project, agents: &[&Agent], rows: &[Row<'_>], root: &str, style: Style) -> String {
    let mut out = format!(
        "{} commands in {root} (package.json scripts, Makefile and justfile recipes, workflow run steps), decided as OpenCode's bash tool would\n",
        rows.len()
    );
    if rows.is_empty() {
        return out;
    }
    let origin: Vec<String> = rows
        .iter()
        .map(|r| {
            let c = r.command;
            match &c.name {
                Some(n) => format!("{}:{} ({n})", c.path, c.line),
                None => format!("{}:{}", c.path, c.line),
            }
        })
        .collect();
    let width = origin.iter().map(|o| o.chars().count()).max().unwrap_or(0);
    // Each agent's lines; agents with identical lines share a section.
    let mut groups: Vec<(Vec<&str>, Lines)> = Vec::new();
    for (k, a) in agents.iter().enumerate() {
        let lines: Vec<(Effect, String)> = rows
            .iter()
            .map(|r| {
                let d = &r.decided[k];
                let why = match d.effect {
                    Effect::Allow => String::new(),
                    _ => why(p, a, r.request, d),
                };
                (d.effect, why)
            })
            .collect();
        match groups.iter_mut().find(|(_, l)| *l == lines) {
            Some((names, _)) => names.push(&a.name),
            None => groups.push((vec![&a.name], lines)),
        }
    }
    for (names, lines) in &groups {
        let count = |e: Effect| lines.iter().filter(|(x, _)| *x == e).count();
        out.push_str(&format!(
            "\n{} {}\n  allow {} · ask {} · deny {}\n",
            if names.len() == 1 { "agent" } else { "agents" },
            style.bold(&names.join(", ")),
            count(Effect::Allow),
            count(Effect::Ask),
            count(Effect::Deny)
        ));
        for ((row, (effect, why)), o) in rows.iter().zip(lines).zip(&origin) {
            let action = effect.to_string();
            let pad = width - o.chars().count();
            out.push_str(&format!(
                "  {}{}  {o}{}  {}\n",
                style.paint_action(&action),
                " ".repeat(5 - action.len()),
                " ".repeat(pad),
                row.command.text.replace('\n', "⏎")
            ));
            if !why.is_empty() {
                out.push_str(&style.dim(&format!("         ← {why}\n")));
            }
        }
    }
    out
}
