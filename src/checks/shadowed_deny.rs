//! `shadowed-deny` (error)
//!
//! ## What it finds
//! A `deny` rule that decides no input at all: every input it matches is also matched by a
//! later rule, and OpenCode's last matching rule wins.
//!
//! ## Why it matters
//! The deny looks like protection and gives none. This is the most common mistake in
//! OpenCode permissions: a specific deny written before a broader allow.
//!
//! ## Example
//! ```json
//! {"permission": {"edit": {"*": "ask", "tests/**": "deny", "**": "allow"}}}
//! ```
//! `tests/**` is dead: `tests/x.ts` is decided by `**` → allow.
//!
//! A deny whose inputs are all still denied by later denies is only redundant; it is
//! reported as `dead-rule` instead, with its example input.
//!
//! ## How to fix
//! Move the deny after the broader rules (put specific rules last), or narrow the later
//! rule. Remember that merging keeps a key's first position: a key that already exists in
//! an earlier file cannot be moved by a later file.

use super::{Check, Ctx, Finding, Level, Reach, TailMemo, describe};
use crate::glob::automaton::Outcome;
use crate::model::{Action, Effect};

pub const CHECK: Check = Check {
    id: "shadowed-deny",
    level: Level::Error,
    summary: "a deny that decides no input: later rules take everything it matches",
    docs: include_str!("shadowed_deny.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut memo = TailMemo::default();
    for (ai, agent) in ctx.project.agents.iter().enumerate() {
        for (i, r) in agent.rules.iter().enumerate() {
            if r.action != Action::Deny {
                continue;
            }
            let Some(Reach::Dead(ov)) = &reach[ai][i] else {
                continue;
            };
            memo.run(ctx, ai, i, out, || {
                // The example input: the one that shows the deny lost to something that is not
                // a deny, when such an input exists among the later rules' overlaps.
                let mut witness = ov.as_ref().and_then(|ov| ctx.witness(agent, &ov.input));
                if witness.as_ref().is_none_or(|w| w.action == Effect::Deny) {
                    let an = &ctx.analyses[ai];
                    for j in an.later_candidates(i) {
                        if agent.rules[j].action.effective() == Effect::Deny {
                            continue;
                        }
                        if let Outcome::Witness(input) = an.intersection(i, j)
                            && let Some(w) = ctx.witness(agent, &input)
                            && w.action != Effect::Deny
                        {
                            witness = Some(w);
                            break;
                        }
                    }
                }
                let Some(w) = witness else {
                    return vec![Finding {
                        id: CHECK.id,
                        level: CHECK.level,
                        agent: Some(agent.name.clone()),
                        rule: Some(i),
                        loc: r.loc,
                        message: format!(
                            "this deny never takes effect: {} is shadowed by later rules",
                            describe(r)
                        ),
                        related: Vec::new(),
                        witnesses: Vec::new(),
                        help: None,
                    }];
                };
                let d = w.rule.map(|k| &agent.rules[k]);
                let input = serde_json::to_string(&w.input).unwrap_or_default();
                let decided_by = d
                    .map(|d| format!("{} at {}", describe(d), ctx.place(d)))
                    .unwrap_or_else(|| "no rule (OpenCode's default)".into());
                let related = d
                    .and_then(|d| d.loc)
                    .map(|l| vec![(l, format!("this later rule decides {input}"))])
                    .unwrap_or_default();
                // Every input we found still ends in a deny: redundant, not a hole.
                let (id, level, message, help) = if w.action == Effect::Deny {
                    (
                        super::dead_rule::CHECK.id,
                        super::dead_rule::CHECK.level,
                        format!(
                            "this deny never decides anything (redundant): e.g. {} {input} is decided by {decided_by} → deny",
                            w.permission
                        ),
                        "remove it: later denies already cover it",
                    )
                } else {
                    (
                        CHECK.id,
                        CHECK.level,
                        format!(
                            "this deny never takes effect: e.g. {} {input} is decided by {decided_by} → {}",
                            w.permission, w.action
                        ),
                        "put the deny after the broader rule that overrides it (last match wins)",
                    )
                };
                vec![Finding {
                    id,
                    level,
                    agent: Some(agent.name.clone()),
                    rule: Some(i),
                    loc: r.loc,
                    message,
                    related,
                    witnesses: vec![w],
                    help: Some(help.into()),
                }]
            });
        }
    }
}
