//! `overridden-by-later-layer` (warning)
//!
//! ## What it finds
//! A rule (other than a deny, which is `shadowed-deny`) that decides nothing because a rule
//! from a later file or layer takes every input it matches: a project file over the global
//! config, an agent's own config over top-level rules, `OPENCODE_PERMISSION`, the managed
//! config, a legacy `tools` translation, a markdown agent.
//!
//! ## Why it matters
//! The two places disagree and only one wins; whoever reads the earlier file is misled.
//!
//! ## Example
//! Global `{"permission": {"bash": "ask"}}` and project `{"permission": {"bash": "allow"}}`:
//! the project value replaces the global one in place (merging keeps the first position).
//! Rules from different agents' layers work the same way.
//!
//! ## How to fix
//! Keep one source of truth, or accept the override knowingly.

use super::{Check, Ctx, Finding, Level, Reach, describe, each_dead_non_deny};

pub const CHECK: Check = Check {
    id: "overridden-by-later-layer",
    level: Level::Warning,
    summary: "a rule undone entirely by a rule from a later file or layer",
    docs: include_str!("overridden_by_later_layer.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    each_dead_non_deny(ctx, reach, false, out, |agent, i, r, d, w| {
        let mut related = Vec::new();
        if let Some(l) = d.loc {
            related.push((
                l,
                format!(
                    "[{}] decides {} → {}",
                    d.layer,
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
                "this [{}] rule is overridden by {} from [{}] at {}: e.g. {} {} → {}",
                r.layer,
                describe(d),
                d.layer,
                ctx.place(d),
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default(),
                w.action
            ),
            related,
            witnesses: vec![w],
            help: None,
        }
    });
}
