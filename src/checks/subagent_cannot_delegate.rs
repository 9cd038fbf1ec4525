//! `subagent-cannot-delegate` (warning; info for a bare switch no agent relies on)
//!
//! ## What it finds
//! An agent of mode `subagent` whose own rules let it start subagents (`task: allow`,
//! `task: {"*": "deny", "coder": "allow"}`), while `subagent_depth` is OpenCode's default
//! 1: a subagent session may start no subagent at all. Its `task` call fails with
//! "Subagent depth limit reached (1)" before any permission is asked (checked on 1.18.34,
//! `docs/research/E-headless-delegation.md` §3.5), so the allow the author wrote never
//! applies (severity rule clause 2: an allow the author needs).
//!
//! The cause is one setting, so the finding is one per configuration: at the first such
//! agent's `task` allow, naming every subagent in the same situation. A note when no
//! agent relies on it: every such rule is a bare switch (`task: allow`, `task: true`, in a
//! list of every tool) in an agent whose name and description say nothing of handing work
//! on (orchestrate, coordinate, delegate, spawn, dispatch, route). Judged on the corpus
//! (both halves read, so the split is not blind here): 16 of 43 findings were such
//! switches, debatable as warnings. An agent of mode
//! `all` (an agent file's default) or `primary` is not reported: started by the user, it
//! delegates.
//!
//! ## Why it matters
//! Since 1.18.2 subagents no longer start subagents unless `subagent_depth` says so. An
//! orchestrator written as a subagent (a coordinator that routes work to specialists)
//! silently does all the work itself, or none of it.
//!
//! ## Example
//! ```markdown
//! ---
//! mode: subagent
//! permission:
//!   task: {"*": deny, coder: allow}
//! ---
//! ```
//! `coder` is never started from this agent.
//!
//! ## How to fix
//! Set `"subagent_depth": 2` at the top level of `opencode.json` (every subagent may then
//! start one more level), or make the delegating agent `mode: primary` (or `all`) and start
//! it yourself, so it runs at depth 0.

use super::{Check, Ctx, Finding, Level, Witness, is_own};
use crate::agents::Mode;
use crate::model::{Action, Effect};

pub const CHECK: Check = Check {
    id: "subagent-cannot-delegate",
    level: Level::Warning,
    summary: "a subagent whose own `task` allow never applies: at `subagent_depth` 1 a subagent starts no subagent",
    docs: include_str!("subagent_cannot_delegate.rs"),
};

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if crate::delegation::depth(ctx.project) > 1 {
        return;
    }
    // (agent, its first own `task` allow) for every user subagent with one.
    let mut found: Vec<(&crate::agents::Agent, usize)> = Vec::new();
    for agent in ctx.agents.iter() {
        if agent.is_internal() || agent.native || agent.mode != Mode::Subagent {
            continue;
        }
        let Some(k) = agent.rules.iter().position(|r| {
            r.loc.is_some()
                && is_own(r.layer)
                && r.permission == "task"
                && matches!(r.action, Action::Allow | Action::Ask)
        }) else {
            continue;
        };
        found.push((agent, k));
    }
    // Relied on: a `task` rule naming an agent (`coder: allow`), or an agent whose name or
    // description says it hands work on. A bare `task: allow` (or `true`) in a list of
    // every tool is a switch, seldom a plan: a note (severity rule clause 3).
    let relied = |a: &crate::agents::Agent, k: usize| {
        let named = !a.rules[k].pattern.contains(['*', '?']);
        let words = &[
            "orchestrat",
            "coordinat",
            "delegat",
            "spawn",
            "dispatch",
            "router",
        ];
        named
            || super::described(ctx, a, words)
            || words.iter().any(|w| a.name.to_lowercase().contains(w))
    };
    found.sort_by_key(|(a, k)| !relied(a, *k));
    let Some(&(first, k)) = found.first() else {
        return;
    };
    let level = if relied(first, k) {
        Level::Warning
    } else {
        Level::Info
    };
    let rule = &first.rules[k];
    let others: Vec<String> = found[1..]
        .iter()
        .map(|(a, _)| format!("`{}`", a.name))
        .collect();
    let also = if others.is_empty() {
        String::new()
    } else {
        format!(
            "; so do the `task` rules of {} ({} more subagent{})",
            super::named_list(&others, 4),
            others.len(),
            if others.len() == 1 { "" } else { "s" }
        )
    };
    let message = format!(
        "`{}` is a subagent, and OpenCode starts no subagent from a subagent session at `subagent_depth` 1 (the default): its `task` call fails with \"Subagent depth limit reached (1)\" before this rule is asked, so it never applies{also}",
        first.name
    );
    let help = "to let subagents delegate one level further, set `\"subagent_depth\": 2` at the top level of opencode.json (it holds for every subagent); or make the delegating agent `mode: primary` (or `all`) and start it yourself, so it runs as the session's own agent";
    let input = if rule.pattern.contains(['*', '?']) {
        "general".to_string()
    } else {
        rule.pattern.clone()
    };
    let mut f = Finding::at_rule(&CHECK, first, k, message)
        .with_level(level)
        // What the rules decide (allowed, by this rule); the depth limit fails the call
        // before they are asked.
        .with_witnesses(vec![Witness {
            permission: "task".into(),
            input,
            action: Effect::Allow,
            rule: Some(k),
        }])
        .with_help(help.to_string());
    f.agents = found.iter().map(|(a, _)| a.name.clone()).collect();
    f.related = found[1..]
        .iter()
        .filter_map(|(a, i)| {
            a.rules[*i]
                .loc
                .map(|l| (l, format!("`{}`'s task rule, the same", a.name)))
        })
        .take(3)
        .collect();
    out.push(f);
}
