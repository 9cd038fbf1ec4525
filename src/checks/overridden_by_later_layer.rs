//! `overridden-by-later-layer` (info)
//!
//! ## What it finds
//! A rule that decides nothing because a rule from a later file or layer gives every input
//! it matches a stricter answer: a project file over the global config,
//! `OPENCODE_PERMISSION`, the managed config. Loosening overrides are `shadowed-deny` and
//! `shadowed-ask` whatever file they come from (merging keeps a key's first position, so a
//! project `"*": "allow"` can silently undo a global deny); a later rule that repeats the
//! answer is not reported across files. A shared rule overridden by an agent's own block
//! is what per-agent blocks are for, and is not reported at all.
//!
//! ## Why it matters
//! The two places disagree and only one wins; whoever reads the earlier file is misled.
//!
//! ## Example
//! Global `{"permission": {"bash": {"git *": "allow"}}}` and project
//! `{"permission": {"bash": {"*": "ask"}}}`: merged, `git *` comes first and never decides;
//! `git status` asks.
//!
//! ## How to fix
//! Keep one source of truth, or accept the override knowingly.

use super::{Check, Ctx, Finding, Level, Witness, describe};
use crate::agents::Agent;

pub const CHECK: Check = Check {
    id: "overridden-by-later-layer",
    level: Level::Info,
    summary: "a rule given a stricter answer everywhere by a rule from a later file or layer",
    docs: include_str!("overridden_by_later_layer.rs"),
};

/// The finding for rule `i`, overridden by its witness's decider from another origin.
pub fn finding(ctx: &Ctx<'_>, agent: &Agent, i: usize, w: Witness) -> Finding {
    let r = &agent.rules[i];
    let from = w
        .rule
        .and_then(|k| agent.rules.get(k))
        .map(|d| format!(" by {} [{}]", describe(d), d.layer))
        .unwrap_or_default();
    let what = format!("this [{}] rule is overridden{from}", r.layer);
    super::overlap::rule_order(ctx, agent, i, &CHECK, &what, w)
        .with_help("keep one source of truth, or accept the override knowingly".into())
}
