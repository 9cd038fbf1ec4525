//! `secret-readable` (info)
//!
//! ## What it finds
//! `.env`-like files an agent can read or edit without asking. OpenCode's defaults ask
//! before reading `*.env` and `*.env.*` (but allow `*.env.example`), and allow every edit.
//!
//! ## Why it matters
//! Secrets read into a model's context leave the machine.
//!
//! ## Example
//! `{"permission": {"read": "allow"}}` replaces the defaults' `.env` asks: every agent reads
//! `.env` silently.
//!
//! ## How to fix
//! End the `read` (and `edit`) rules with `"*.env": "ask"`, `"*.env.*": "ask"` (or deny).

use super::{Check, Ctx, Finding, Level};
use crate::model::Effect;
use crate::model::agents::evaluate;

pub const CHECK: Check = Check {
    id: "secret-readable",
    level: Level::Info,
    summary: "`.env`-like files readable or editable without asking",
    docs: include_str!("secret_readable.rs"),
};

const SAMPLES: [&str; 3] = [".env", ".env.local", "config/.env.production"];

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for agent in &ctx.project.agents {
        if agent.hidden {
            continue;
        }
        for permission in ["read", "edit"] {
            let mut witnesses = Vec::new();
            let mut decider = None;
            for s in SAMPLES {
                let d = evaluate(&agent.rules, permission, s, ctx.project.platform);
                if d.effect == Effect::Allow {
                    decider = decider.or(d.rule);
                    witnesses.push(super::Witness {
                        permission: permission.to_string(),
                        input: s.to_string(),
                        action: d.effect,
                        rule: d.rule,
                    });
                }
            }
            if witnesses.is_empty() {
                continue;
            }
            let rule = decider.map(|i| &agent.rules[i]);
            out.push(Finding {
                id: CHECK.id,
                level: CHECK.level,
                agent: Some(agent.name.clone()),
                rule: decider,
                loc: rule.and_then(|r| r.loc),
                message: format!(
                    "can {permission} {} without asking (decided by {})",
                    witnesses
                        .iter()
                        .map(|w| format!("`{}`", w.input))
                        .collect::<Vec<_>>()
                        .join(", "),
                    rule.map(|r| ctx.place(r))
                        .unwrap_or_else(|| "no rule".into())
                ),
                related: Vec::new(),
                witnesses,
                help: None,
            });
        }
    }
}
