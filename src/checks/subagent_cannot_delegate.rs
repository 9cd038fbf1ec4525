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
    // (agent, its own `task` allow or ask, an agent name it decides) for every user
    // subagent with one: the input is a subagent the rule matches and decides (a later own
    // `"*": deny` may take a name back), so the witness is what `explain` answers.
    let mut names: Vec<String> = vec!["general".into(), "explore".into()];
    names.extend(
        ctx.agents
            .iter()
            .filter(|a| !a.is_internal() && a.mode != Mode::Primary)
            .map(|a| a.name.clone()),
    );
    let mut found: Vec<(&crate::agents::Agent, usize, String)> = Vec::new();
    for agent in ctx.agents.iter() {
        if agent.is_internal() || agent.native || agent.mode != Mode::Subagent {
            continue;
        }
        let decided = agent.rules.iter().enumerate().find_map(|(k, r)| {
            if r.loc.is_none()
                || !is_own(r.layer)
                || r.permission != "task"
                || !matches!(r.action, Action::Allow | Action::Ask)
            {
                return None;
            }
            let literal = !r.pattern.contains(['*', '?']);
            let inputs: Vec<&str> = if literal {
                vec![r.pattern.as_str()]
            } else {
                names.iter().map(String::as_str).collect()
            };
            inputs.into_iter().find_map(|input| {
                let d = crate::agents::evaluate(&agent.rules, "task", input, ctx.project.platform);
                (d.rule == Some(k)).then(|| (k, input.to_string()))
            })
        });
        if let Some((k, input)) = decided {
            found.push((agent, k, input));
        }
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
    found.sort_by_key(|(a, k, _)| !relied(a, *k));
    let Some((first, k, input)) = found.first().cloned() else {
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
        .map(|(a, _, _)| format!("`{}`", a.name))
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
    let mut f = Finding::at_rule(&CHECK, first, k, message)
        .with_level(level)
        // What the rules decide (allowed or asked, by this rule); the depth limit fails the call
        // before they are asked.
        .with_witnesses(vec![Witness {
            permission: "task".into(),
            input,
            action: if rule.action == Action::Ask {
                Effect::Ask
            } else {
                Effect::Allow
            },
            rule: Some(k),
        }])
        .with_help(help.to_string());
    // The witness is the first agent's (each agent's rule is its own place, decided for
    // its own input): the others are named in the message and the related places.
    f.related = found[1..]
        .iter()
        .filter_map(|(a, i, _)| {
            a.rules[*i]
                .loc
                .map(|l| (l, format!("`{}`'s task rule, the same", a.name)))
        })
        .take(3)
        .collect();
    out.push(f);
}
