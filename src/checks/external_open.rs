//! `external-open` (warning; info for a rule over every permission)
//!
//! ## What it finds
//! A rule of yours that lets an agent leave the project without asking, wherever it goes:
//! `"external_directory": "allow"` or `{"external_directory": {"*": "allow"}}` (or one
//! opening your whole home directory, `~/**`), where without it OpenCode would ask (its
//! defaults ask `external_directory` for every directory outside the project, apart from
//! its own tool-output and temporary directories). The agent then reads `~/.ssh/id_rsa`
//! and `~/.aws/credentials` without a question, and edits `~/.bashrc` where its `edit`
//! rules allow editing. Each read is decided as `explain read ~/.ssh/id_rsa` decides it
//! (the `external_directory` ask for `~/.ssh/*` first, then `read` for the path), and the
//! finding stands only where this rule decides that first ask and the read then runs.
//!
//! ## Why it matters
//! The project is the boundary OpenCode guards by default; a rule that opens every outside
//! directory reaches the keys and credentials in your home directory, other repositories
//! and your shell's start-up files. Three blind expert readings of configurations nobody
//! here had tuned for flagged every such rule (fresh-4: feng653, albertvila, navarrepratt;
//! fresh-5: juliengoum14-dev, lars-hagen, planeinabottle). A rule over every permission
//! (`"*": "allow"`, `"permission": "allow"`), or one in an agent described as
//! unrestricted, is a note: allowing everything is a choice made as such (as for
//! `secret-readable`).
//!
//! ## Example
//! ```json
//! {"permission": {"external_directory": "allow"}}
//! ```
//! `read ~/.ssh/id_rsa` runs without asking for every agent.
//!
//! ## How to fix
//! Allow the directories the agents need, each by its absolute path, after an ask for the
//! rest: `"external_directory": {"*": "ask", "/home/you/src/shared/*": "allow"}`. OpenCode
//! asks `DIR/*` for a file in `DIR`, so `DIR/*` covers that directory and everything below
//! it.

use super::{Check, Ctx, Finding, Level, Witness};
use crate::call::{self, Asks};
use crate::model::Effect;
use crate::shell::Places;

pub const CHECK: Check = Check {
    id: "external-open",
    level: Level::Warning,
    summary: "every directory outside the project reachable without asking (~/.ssh, ~/.aws)",
    docs: include_str!("external_open.rs"),
};

/// Files in the home directory an agent should not read unasked, relative to it.
const SECRETS: [&str; 2] = [".ssh/id_rsa", ".aws/credentials"];

/// Does an `external_directory` pattern open every directory, or the whole home directory
/// (`*`, `**`, `/**`, `~/**` once `~` is expanded)? A pattern naming a directory that merely
/// holds the home directory in some environment (`/tmp/**` where HOME is under `/tmp`) is
/// a choice of that directory, not of every one.
fn opens_all(pattern: &str, home: &str) -> bool {
    let stem = pattern.trim_end_matches(['*', '/']);
    stem.is_empty() || stem == home
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    let places = Places::of(ctx.project.loaded.paths());
    let home = ctx.project.loaded.paths().home.display().to_string();
    let home = home.trim_end_matches('/');
    if home.is_empty() {
        return;
    }
    let mut splitter = ctx.splitter();
    let is_dir = |p: &str| call::assumed_dir(&places, p);
    let env = places.env(&is_dir);
    for agent in ctx.agents.iter() {
        if agent.is_internal() {
            continue;
        }
        // Does the tool's call for `path` run unasked, as `explain` decides it?
        let runs = |permission: &str, path: &str, splitter: &mut crate::shell::Splitter| {
            let asks = Asks::of(permission, path, &env, splitter);
            let hiding = call::hiding_rule(&agent.rules, permission, platform);
            call::decide(&asks, permission, path, hiding, |perm, pattern| {
                ctx.decision(agent, perm, pattern)
            })
            .effect
                == Effect::Allow
        };
        // The user rule that lets each secret's directory be entered, where the read runs:
        // the rule first (most agents have none), then the whole call.
        let mut blamed: Option<(usize, Vec<String>, String)> = None;
        for rel in SECRETS {
            let path = format!("{home}/{rel}");
            // OpenCode asks `external_directory` for the file's directory (`DIR/*`).
            let Some(dir) = Asks::of("read", &path, &env, &mut splitter)
                .external()
                .first()
                .cloned()
            else {
                continue;
            };
            let outside =
                crate::agents::evaluate(&agent.rules, "external_directory", &dir, platform);
            let Some(k) = outside.rule else { continue };
            let r = &agent.rules[k];
            if outside.effect != Effect::Allow || r.loc.is_none() || !opens_all(&r.pattern, home) {
                continue;
            }
            // Without it, OpenCode would ask (or deny): the rule is the cause.
            let without = outside
                .overridden
                .last()
                .map_or(Effect::Ask, |&i| agent.rules[i].action.effective());
            if without == Effect::Allow || !runs("read", &path, &mut splitter) {
                continue;
            }
            match &mut blamed {
                Some((b, files, _)) if *b == k => files.push(format!("~/{rel}")),
                Some(_) => {}
                None => blamed = Some((k, vec![format!("~/{rel}")], dir)),
            }
        }
        let Some((k, files, dir)) = blamed else {
            continue;
        };
        let r = &agent.rules[k];
        // Editing outside too, where the agent's edit rules allow it.
        let edits = runs("edit", &format!("{home}/.bashrc"), &mut splitter);
        let message = format!(
            "this rule lets the agent into every directory outside the project without asking: it reads {}{} unasked (without it OpenCode asks before leaving the project)",
            files
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(" and "),
            if edits { ", and edits `~/.bashrc`" } else { "" },
        );
        let help = "allow only the directories the agents need, each by its absolute path, after an ask for the rest: `\"external_directory\": {\"*\": \"ask\", \"/home/you/src/shared/*\": \"allow\"}` (`DIR/*` covers that directory and everything below it)".to_string();
        // Severity rule (docs/checks.md): the rule takes effect, so clauses 1 and 2 do not
        // apply; the level says how likely the loss is. A rule over every permission is a
        // choice made as such, and so is an agent described as unrestricted (as for
        // `secret-readable`): a note.
        let level = if r.permission == "*"
            || super::agent_overrides_shared::unrestricted_by_design(ctx, agent)
        {
            Level::Info
        } else {
            Level::Warning
        };
        out.push(
            Finding::at_rule(&CHECK, agent, k, message)
                .with_level(level)
                .with_witnesses(vec![Witness {
                    permission: "external_directory".into(),
                    input: dir,
                    action: Effect::Allow,
                    rule: Some(k),
                }])
                .with_help(help),
        );
    }
}
