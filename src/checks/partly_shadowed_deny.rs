//! `partly-shadowed-deny` (warning)
//!
//! ## What it finds
//! A `deny` rule that decides some inputs, while other inputs it matches are taken by a
//! later rule that allows them or asks.
//!
//! ## Why it matters
//! Part of what the deny was written to block gets through. Often intended (a deny with an
//! exception after it), often not.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"rm *": "deny", "rm -i *": "allow"}}}
//! ```
//! `rm -i x` matches the deny but is decided by the later allow.
//!
//! ## How to fix
//! If the exception is intended, nothing. Otherwise move the deny after the later rule.

use super::{Check, Ctx, Finding, Level, Reach, TailMemo, describe};
use crate::glob::automaton::Outcome;
use crate::model::{Action, Effect};

pub const CHECK: Check = Check {
    id: "partly-shadowed-deny",
    level: Level::Warning,
    summary: "a deny some of whose inputs are allowed or asked by later rules",
    docs: include_str!("partly_shadowed_deny.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut memo = TailMemo::default();
    for (ai, agent) in ctx.project.agents.iter().enumerate() {
        for (i, r) in agent.rules.iter().enumerate() {
            if r.action != Action::Deny || !matches!(reach[ai][i], Some(Reach::Decides(_))) {
                continue;
            }
            memo.run(ctx, ai, i, out, || {
            // The last later rule that is not a deny and shares an input with this one
            // (rules proven disjoint from it are never candidates).
            for j in ctx.analyses[ai].later_candidates(i) {
                if agent.rules[j].action.effective() == Effect::Deny {
                    continue;
                }
                let Outcome::Witness(input) = ctx.intersection(ai, i, j) else {
                    continue;
                };
                let Some(w) = ctx.witness(agent, &input) else {
                    continue;
                };
                if w.action == Effect::Deny {
                    continue;
                }
                let d = w.rule.map(|k| &agent.rules[k]);
                let mut related = Vec::new();
                if let Some(l) = d.and_then(|d| d.loc) {
                    related.push((l, format!("decides {} → {}", serde_json::to_string(&w.input).unwrap_or_default(), w.action)));
                }
                return vec![Finding {
                    id: CHECK.id,
                    level: CHECK.level,
                    agent: Some(agent.name.clone()),
                    rule: Some(i),
                    loc: r.loc,
                    message: format!(
                        "this deny is partly overridden: e.g. {} {} matches it but is decided by {} at {} → {}",
                        w.permission,
                        serde_json::to_string(&w.input).unwrap_or_default(),
                        d.map(describe).unwrap_or_default(),
                        d.map(|d| ctx.place(d)).unwrap_or_default(),
                        w.action
                    ),
                    related,
                    witnesses: vec![w],
                    help: None,
                }];
            }
            Vec::new()
            });
        }
    }
}
