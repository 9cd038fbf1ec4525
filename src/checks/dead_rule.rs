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

use super::{Check, Ctx, Finding, Level, Reach, describe, each_dead_non_deny};

pub const CHECK: Check = Check {
    id: "dead-rule",
    level: Level::Warning,
    summary: "a rule that never decides anything (redundant or shadowed within its own file)",
    docs: include_str!("dead_rule.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    each_dead_non_deny(ctx, reach, true, out, |agent, i, r, d, w| {
        let kind = if d.action == r.action {
            "redundant"
        } else {
            "shadowed"
        };
        let mut related = Vec::new();
        if let Some(l) = d.loc {
            related.push((
                l,
                format!(
                    "decides {} → {}",
                    serde_json::to_string(&w.input).unwrap_or_default(),
                    w.action
                ),
            ));
        }
        Finding {
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
        }
    });
}
