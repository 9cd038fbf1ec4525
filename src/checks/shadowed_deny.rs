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
//! ## How to fix
//! Move the deny after the broader rules (put specific rules last), or narrow the later
//! rule. Remember that merging keeps a key's first position: a key that already exists in
//! an earlier file cannot be moved by a later file.

use super::{Check, Ctx, Finding, Level, Reach, TailMemo, describe};
use crate::model::Action;

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
                let mut related = Vec::new();
                let mut witnesses = Vec::new();
                let mut message = format!(
                    "this deny never takes effect: {} is shadowed by later rules",
                    describe(r)
                );
                if let Some(ov) = ov {
                    if let Some(w) = ctx.witness(agent, &ov.input) {
                        let d = &agent.rules[ov.decider];
                        message = format!(
                            "this deny never takes effect: e.g. {} {} is decided by {} at {} → {}",
                            w.permission,
                            serde_json::to_string(&w.input).unwrap_or_default(),
                            describe(d),
                            ctx.place(d),
                            w.action
                        );
                        if let Some(l) = d.loc {
                            related.push((
                                l,
                                format!(
                                    "this later rule decides {}",
                                    serde_json::to_string(&w.input).unwrap_or_default()
                                ),
                            ));
                        }
                        witnesses.push(w);
                    }
                }
                vec![Finding {
                    id: CHECK.id,
                    level: CHECK.level,
                    agent: Some(agent.name.clone()),
                    rule: Some(i),
                    loc: r.loc,
                    message,
                    related,
                    witnesses,
                    help: Some(
                        "put the deny after the broader rule that overrides it (last match wins)"
                            .into(),
                    ),
                }]
            });
        }
    }
}
