//! `secret-readable` (warning for reading; info for editing and for a rule over every permission)
//!
//! ## What it finds
//! A rule of yours that lets an agent read or edit `.env`-like files without asking, where
//! without that rule OpenCode would ask or deny. OpenCode's defaults ask before reading
//! `*.env` and `*.env.*` (but allow `*.env.example`), and allow every edit; what the
//! defaults do on their own is not reported.
//!
//! Tried on `.env`, `.env.local` and `config/.env.production`; where none of them is open
//! (the author denies `.env` and `.env.*` by name), on `deploy/prod.env`, which the
//! defaults' `*.env` ask covers and such denies do not.
//!
//! ## Why it matters
//! Secrets read into a model's context leave the machine.
//!
//! A legacy `tools: {read: true}` entry is translated to `read: allow` and voids the
//! asks exactly as the permission does: the same finding, at the entry (it speaks there
//! before `legacy-tools`' note on the deprecated spelling).
//!
//! Reading is a warning: the `.env` ask is one the author never wrote and seldom knows of,
//! and three blind expert readings flagged it, for `tools: {read: true}` and `read: allow`
//! alike. A rule over every permission (`"*": "allow"`, `"permission": "allow"`) is a note,
//! and so is a pattern that names the env files (`".env": "allow"`: on purpose):
//! allowing everything is a choice made as such. Editing is a note (the defaults allow
//! every edit, `.env` included).
//!
//! ## Example
//! `{"permission": {"read": "allow"}}` replaces the defaults' `.env` asks: every agent reads
//! `.env` silently. So does `{"tools": {"read": true}}`.
//!
//! ## How to fix
//! End the `read` (and `edit`) rules with `"*.env": "ask"`, `"*.env.*": "ask"` (or deny).
//! A `tools: {read: true}` entry is best removed: the tool is on without it, and the
//! defaults' asks apply again (where an earlier rule would then deny reading, the entry
//! becomes a `permission.read` block that keeps the asks instead).

use super::{Check, Ctx, Finding, Level};
use crate::agents::evaluate;
use crate::model::Effect;

pub const CHECK: Check = Check {
    id: "secret-readable",
    level: Level::Warning,
    summary: "`.env`-like files readable or editable without asking",
    docs: include_str!("secret_readable.rs"),
};

const SAMPLES: [&str; 3] = [".env", ".env.local", "config/.env.production"];

/// A file the defaults' `*.env` ask covers and a `.env`/`.env.*` deny does not, tried only
/// when none of [`SAMPLES`] is open: an author who denies the env files by name (`.env`,
/// `.env.*`) and allows the rest still loses the ask for `prod.env` (blind fresh-6 A:
/// m-j-hooper's ENV-ASK-LOST).
const NAMED_ENV: &str = "deploy/prod.env";

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    for agent in ctx.agents.iter() {
        if agent.is_internal() {
            continue;
        }
        for permission in ["read", "edit"] {
            // Blame the user rule that allows each sample, and only when it changed the
            // outcome: without it the sample would not be allowed. OpenCode's own defaults
            // are not the user's to fix.
            let mut blamed: Vec<(usize, Vec<super::Witness>)> = Vec::new();
            for (n, s) in SAMPLES.iter().chain([&NAMED_ENV]).enumerate() {
                if n == SAMPLES.len() && !blamed.is_empty() {
                    break;
                }
                let d = evaluate(&agent.rules, permission, s, platform);
                let Some(k) = d.rule else { continue };
                if d.effect != Effect::Allow || agent.rules[k].loc.is_none() {
                    continue;
                }
                if effect_without(&agent.rules, k, permission, s, platform) == Effect::Allow {
                    continue;
                }
                let w = super::Witness {
                    permission: permission.to_string(),
                    input: s.to_string(),
                    action: d.effect,
                    rule: d.rule,
                };
                match blamed.iter_mut().find(|(r, _)| *r == k) {
                    Some((_, ws)) => ws.push(w),
                    None => blamed.push((k, vec![w])),
                }
            }
            for (k, witnesses) in blamed {
                let message = format!(
                    "this rule lets the agent {permission} {} without asking (without it OpenCode would ask or deny)",
                    super::quoted_inputs(&witnesses),
                );
                let done = if permission == "read" {
                    "read"
                } else {
                    "edited"
                };
                let legacy = matches!(
                    agent.rules[k].layer,
                    crate::model::Layer::LegacyTools | crate::model::Layer::AgentLegacyTools
                );
                // A `tools` entry has no patterns to add after it: a `permission` key of
                // the same name replaces the entry (spec §5.4), so the block goes there.
                // Without the entry, would an ordinary file still be decided as the entry
                // decides it? Then the entry only switches on a tool that is on anyway.
                let plain = effect_without(&agent.rules, k, permission, "src/main.ts", platform)
                    == Effect::Allow;
                // Other `tools` entries that would keep the tool on once this one goes:
                // the same agent's entry in another file, which the merge overwrote
                // (`agent.NAME.tools` in opencode.json beside the markdown agent's), and
                // for a top-level entry, the agents' own entries. Removing one alone
                // changes nothing for them.
                let others: Vec<crate::source::Loc> = if legacy && plain {
                    let own = agent.rules[k].layer == crate::model::Layer::AgentLegacyTools;
                    ctx.project
                        .loaded
                        .audit
                        .tools
                        .iter()
                        .filter(|t| {
                            t.tool == permission
                                && t.enabled
                                && Some(t.loc) != agent.rules[k].loc
                                && match &t.agent {
                                    Some(a) if own => *a == agent.name,
                                    Some(a) => {
                                        ctx.project.agent(a).is_some_and(|x| !x.is_internal())
                                    }
                                    None => false,
                                }
                        })
                        .map(|t| t.loc)
                        .collect()
                } else {
                    Vec::new()
                };
                let also = if others.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", and the same entry at {}",
                        others
                            .iter()
                            .map(|&l| ctx.project.loaded.sources.position(l).to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let help: String = if legacy && plain {
                    format!(
                        "remove the `tools` entry `{permission}: true`{also}: the {permission} tool is on without it, and OpenCode then asks before a `.env` file is {done} again (its default rules apply)"
                    )
                } else if legacy {
                    format!(
                        "replace the `tools` entry with `\"permission\": {{\"{permission}\": {{\"*\": \"allow\", \"*.env\": \"ask\", \"*.env.*\": \"ask\", \"*.env.example\": \"allow\"}}}}` (or deny) if secrets should not be {done}: a `permission` key of the same name replaces the `tools` entry"
                    )
                } else {
                    format!(
                        "add `\"*.env\": \"ask\", \"*.env.*\": \"ask\", \"*.env.example\": \"allow\"` (or deny for the first two) after it under `{permission}` if secrets should not be {done} without asking (a `\"{permission}\": \"allow\"` becomes `\"{permission}\": {{\"*\": \"allow\", \"*.env\": \"ask\", \"*.env.*\": \"ask\", \"*.env.example\": \"allow\"}}`)"
                    )
                };
                // Reading: a warning (docs/checks.md, severity rule: a rule that takes
                // effect is levelled by how likely the loss is). Secrets read into a
                // model's context leave the machine, and the ask that kept them is one the
                // author never wrote and seldom knows of: three blind expert readings
                // (tests/real/expert.tsv, tests/real/fresh-2) flagged 24 such rules, legacy
                // `tools: {read: true}` and `read: allow` alike, and the shared corpus
                // judges them TP. Not a rule over every permission (`"*": "allow"`, the
                // `"permission": "allow"` setup): allowing everything is a choice made as
                // such. Editing stays a note: the defaults allow every edit, `.env` too.
                // A pattern naming the env files (`".env": "allow"`) allows them on purpose.
                let named = agent.rules[k].pattern.contains(".env");
                // An agent described as unrestricted reads them by design.
                let level = if permission == "read"
                    && agent.rules[k].permission != "*"
                    && !named
                    && !super::agent_overrides_shared::unrestricted_by_design(ctx, agent)
                {
                    Level::Warning
                } else {
                    Level::Info
                };
                let related = others
                    .iter()
                    .map(|&l| {
                        (
                            l,
                            format!("also switches the {permission} tool on: remove it too"),
                        )
                    })
                    .collect();
                out.push(
                    Finding::at_rule(&CHECK, agent, k, message)
                        .with_level(level)
                        .with_witnesses(witnesses)
                        .with_help(help)
                        .with_related(related),
                );
            }
        }
    }
}

/// What the rules decide for `input` without rule `k`: the last other matching rule, as
/// `evaluate` on the ruleset with `k` removed would say, without copying the ruleset.
fn effect_without(
    rules: &[crate::model::Rule],
    k: usize,
    permission: &str,
    input: &str,
    platform: crate::glob::Platform,
) -> Effect {
    let d = evaluate(rules, permission, input, platform);
    if d.rule != Some(k) {
        return d.effect;
    }
    d.overridden
        .last()
        .map_or(Effect::Ask, |&i| rules[i].action.effective())
}
