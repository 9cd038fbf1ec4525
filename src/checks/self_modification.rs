//! `self-modification` (info)
//!
//! ## What it finds
//! An agent with rules that restrict it (a deny or ask you wrote) that may, without
//! asking, edit a file OpenCode reads those rules from: `opencode.json`,
//! `opencode.jsonc`, `.opencode/opencode.json`, an agent or mode file under `.opencode/`
//! (or, with `external_directory` allowed there, the global config directory). One
//! finding per agent, at its first restricting rule, with every such file and the rule
//! that lets it edit them (re-decided over the agent's whole ruleset).
//!
//! Agents with no restriction of their own are not reported: rewriting their rules gains
//! them nothing. Nor are agents that may run any program without asking (`python3 -c …`
//! allowed, as OpenCode's default `* allow` does): they can already undo every
//! restriction, and the config files are not the weak point. Hidden agents are left out.
//!
//! ## Why it matters
//! OpenCode reads its config again when a file changes. An agent refused `git push` can
//! add `"git push *": "allow"` to `opencode.json`, or drop the deny from its own agent
//! file, and the next call goes through: the restriction holds only as long as the model
//! chooses to respect it.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"*": "ask", "git status": "allow"}, "webfetch": "deny"}}
//! ```
//! `build` may edit `opencode.json` without asking (OpenCode's default `* allow`), and so
//! allow itself `webfetch` or every command.
//!
//! ## How to fix
//! Ask (or deny) edits of the config files, last in the `edit` rules:
//! `"edit": {"*": "allow", "opencode.json*": "ask", ".opencode/*": "ask"}`.

use super::{Check, Ctx, Finding, Level, Witness};
use crate::agents::evaluate;
use crate::model::{Action, Effect};

pub const CHECK: Check = Check {
    id: "self-modification",
    level: Level::Info,
    summary: "an agent with restrictions may edit, without asking, the config files its rules come from",
    docs: include_str!("self_modification.rs"),
};

/// The worktree-relative files OpenCode reads permissions from: the config and agent
/// files loaded from the worktree, else `opencode.json`.
fn config_files(ctx: &Ctx<'_>) -> Vec<String> {
    let paths = ctx.project.loaded.paths();
    let mut out: Vec<String> = Vec::new();
    if paths.worktree != std::path::Path::new("/") {
        for (_, file) in ctx.project.loaded.sources.iter() {
            let Some(path) = file.path() else { continue };
            if let Ok(rel) = path.strip_prefix(&paths.worktree) {
                let rel = rel.to_string_lossy().into_owned();
                if !out.contains(&rel) {
                    out.push(rel);
                }
            }
        }
    }
    if out.is_empty() {
        out.push("opencode.json".into());
    }
    out
}

/// A command standing for "any program": an interpreter running inline code.
const ANY_PROGRAM: &str = "python3 -c pass";

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    let files = config_files(ctx);
    for agent in &ctx.project.agents {
        if agent.is_internal() {
            continue;
        }
        // Its first restriction you wrote.
        let Some((first, restriction)) = agent
            .rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.loc.is_some() && matches!(r.action, Action::Deny | Action::Ask))
        else {
            continue;
        };
        if restriction.loc.is_none() {
            continue;
        }
        // An agent that runs any program without asking can already undo every
        // restriction (`python3 -c …`): its config files are not the weak point.
        if evaluate(&agent.rules, "bash", ANY_PROGRAM, platform).effect == Effect::Allow {
            continue;
        }
        let witnesses: Vec<Witness> = files
            .iter()
            .filter_map(|f| {
                let d = evaluate(&agent.rules, "edit", f, platform);
                (d.effect == Effect::Allow).then(|| Witness {
                    permission: "edit".into(),
                    input: f.clone(),
                    action: d.effect,
                    rule: d.rule,
                })
            })
            .collect();
        let Some(w) = witnesses.first() else { continue };
        let decider = w
            .rule
            .map(|k| ctx.decider_place(&agent.rules[k]))
            .unwrap_or_else(|| "no rule".into());
        let message = format!(
            "may edit {} without asking (decided by {decider}), so it can rewrite this rule and its other restrictions",
            super::quoted_inputs(&witnesses)
        );
        let help: String = "ask before config edits, last in `edit`: {\"opencode.json*\": \"ask\", \".opencode/*\": \"ask\"}".into();
        out.push(
            Finding::at_rule(&CHECK, agent, first, message)
                .with_witnesses(witnesses)
                .with_help(help),
        );
    }
}
