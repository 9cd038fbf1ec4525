//! `inconclusive` (info)
//!
//! ## What it finds
//! A rule about which permaudit could not decide, within its analysis budget (docs/limits.md), whether it ever takes effect: the automata needed to prove it dead or live grew
//! past the budget. Typical causes are patterns that pin a character far from the end of
//! the input (`*a??????????`), whose exact automata have exponentially many states.
//!
//! ## Why it matters
//! permaudit never reports a claim it has not proven, so for such a rule the findings that
//! depend on reachability (`shadowed-deny`, `partly-shadowed-deny`, `dead-rule`,
//! `overridden-by-later-layer`, `legacy-tools`) are silent. This finding says so, instead of
//! letting silence read as "clean". OpenCode itself decides such rules quickly: `explain`
//! and `map` still give exact decisions for concrete inputs.
//!
//! ## Example
//! ```json
//! {"permission": {"edit": {"*a????????????": "deny", "*x": "ask", "*b????????????": "allow"}}}
//! ```
//!
//! ## How to fix
//! Usually nothing is wrong. Prefer simpler patterns (a literal prefix, `*.ext`), or check
//! the rule's effect on concrete inputs with `permaudit explain` or `--samples`.

use super::{Check, Ctx, Finding, Level, Reach, TailMemo, describe};

pub const CHECK: Check = Check {
    id: "inconclusive",
    level: Level::Info,
    summary: "a rule whose effect the analysis could not prove within its budget",
    docs: include_str!("inconclusive.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut memo = TailMemo::default();
    for (ai, agent) in ctx.agents.iter().enumerate() {
        for (i, r) in agent.rules.iter().enumerate() {
            let Some(Some(Reach::Inconclusive)) = reach.get(ai).and_then(|row| row.get(i)) else {
                continue;
            };
            if !ctx.judges(r) {
                continue;
            }
            memo.run(ctx, ai, i, out, || {
                let message = format!(
                    "permaudit could not prove within its analysis budget whether {} ever takes effect; findings about it are not reported",
                    describe(r)
                );
                let help: String = "check it on concrete inputs with `permaudit explain` or `--samples`"
                    .into();
                vec![Finding::at_rule(&CHECK, agent, i, message).with_help(help)]
            });
        }
    }
}
