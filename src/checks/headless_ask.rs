//! `headless-ask` (with `--headless`: warning for your rules, info for built-in ones)
//!
//! ## What it finds
//! Every rule that still asks, per agent, when nobody is there to answer: `opencode run`
//! (`check --headless`) rejects every ask ("permission requested: …; auto-rejecting"), and
//! `opencode run --auto` (`check --headless=auto`) approves every ask once. Each live `ask`
//! rule is reported once with an input it decides, built-in ones included (the defaults'
//! `external_directory` and `.env` reads, `doom_loop`), so a headless job's author sees
//! which tool calls will fail, or which questions will be answered yes for them.
//!
//! Off without `--headless`: in a session with a person, an ask is the point.
//!
//! ## Why it matters
//! Under `opencode run` an ask behaves as a deny that the config does not show; under
//! `--auto` it behaves as an allow, so the safety an `ask` was written for is gone.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"*": "ask", "git *": "allow"}}}
//! ```
//! `opencode run` rejects `npm test`; `opencode run --auto` runs `rm -rf build` unasked.
//!
//! ## How to fix
//! Decide it: `allow` what the job needs, `deny` what it must never do.

use super::{Check, Ctx, Finding, Level, Reach, describe};
use crate::delegation::RunMode;
use crate::model::Effect;

pub const CHECK: Check = Check {
    id: "headless-ask",
    level: Level::Warning,
    summary: "with --headless: a rule that asks, which `opencode run` rejects (or --auto approves)",
    docs: include_str!("headless_ask.rs"),
};

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let outcome = match ctx.mode {
        RunMode::Interactive => return,
        RunMode::Headless => "`opencode run` rejects it",
        RunMode::Auto => "`opencode run --auto` approves it without asking",
    };
    for (a, agent) in ctx.agents.iter().enumerate() {
        if agent.is_internal() {
            continue;
        }
        for (i, r) in agent.rules.iter().enumerate() {
            if r.action.effective() != Effect::Ask {
                continue;
            }
            let input = match reach[a].get(i) {
                Some(Some(Reach::Decides(input))) => input.clone(),
                Some(Some(_)) => continue,
                _ => match ctx.live_input(a, i) {
                    Some(input) => input,
                    None => continue,
                },
            };
            let input = &input;
            let Some(w) = ctx.recognisable(agent, &[i], input, |w| w.rule == Some(i)) else {
                continue;
            };
            // Severity rule (docs/checks.md), clause 3: OpenCode's own built-in asks are
            // nothing the author wrote or relies on.
            let level = if r.loc.is_some() {
                CHECK.level
            } else {
                Level::Info
            };
            let whose = if r.loc.is_some() {
                "this rule"
            } else {
                "built-in"
            };
            let message = format!(
                "{whose} ({}) asks for {} {}: {outcome}",
                describe(r),
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default()
            );
            let help: String = match ctx.mode {
                RunMode::Auto => "deny what the job must never do: `--auto` approves every ask".into(),
                _ => "allow what the job needs and deny the rest: nobody answers an ask in `opencode run`".into(),
            };
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(level)
                    .with_witnesses(vec![w])
                    .with_help(help),
            );
        }
    }
}
