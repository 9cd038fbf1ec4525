//! `dead-rule` (warning)
//!
//! ## What it finds
//! A rule other than a deny that decides no input, within the same file and layer: later
//! rules either repeat its action (redundant) or overturn it (shadowed).
//!
//! ## Why it matters
//! Dead rules mislead readers about what the configuration does, and a shadowed allow or
//! ask means the author's intent is not what OpenCode enforces.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"git *": "allow", "*": "ask"}}}
//! ```
//! `git *` is dead: `*` comes later and matches every command.
//!
//! ## How to fix
//! Remove the rule, or move it after the rule that overrides it.

use super::{Check, Ctx, Finding, Level, Reach, TailMemo, describe, same_origin};
use crate::model::Action;

pub const CHECK: Check = Check {
    id: "dead-rule",
    level: Level::Warning,
    summary: "a rule that never decides anything (redundant or shadowed within its own file)",
    docs: include_str!("dead_rule.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut memo = TailMemo::default();
    for (ai, agent) in ctx.project.agents.iter().enumerate() {
        for (i, r) in agent.rules.iter().enumerate() {
            if r.action == Action::Deny {
                continue;
            }
            let Some(Reach::Dead(Some(ov))) = &reach[ai][i] else {
                continue;
            };
            let d = &agent.rules[ov.decider];
            if !same_origin(r, d) {
                continue; // overridden-by-later-layer
            }
            memo.run(ctx, ai, i, out, || {
            let Some(w) = ctx.witness(agent, &ov.input) else {
                return Vec::new();
            };
            let kind = if d.action == r.action { "redundant" } else { "shadowed" };
            let mut related = Vec::new();
            if let Some(l) = d.loc {
                related.push((l, format!("decides {} → {}", serde_json::to_string(&w.input).unwrap_or_default(), w.action)));
            }
            vec![Finding {
                id: CHECK.id,
                level: CHECK.level,
                agent: Some(agent.name.clone()),
                rule: Some(i),
                loc: r.loc,
                message: format!(
                    "this rule never decides anything ({kind}): e.g. {} {} is decided by {} at {} → {}",
                    w.permission,
                    serde_json::to_string(&w.input).unwrap_or_default(),
                    describe(d),
                    ctx.place(d),
                    w.action
                ),
                related,
                witnesses: vec![w],
                help: Some(if kind == "redundant" {
                    "remove it: later rules already give the same answer".into()
                } else {
                    "move it after the rule that overrides it, or remove it".into()
                }),
            }]
            });
        }
    }
}
