//! `deny-bypass` (warning on secret-shaped paths; info otherwise)
//!
//! ## What it finds
//! A `read` or `edit` deny on a path that the same agent can walk around with bash,
//! without being asked: `cat FILE`, `grep -r x FILE`, `head FILE` read it, `sed -i … FILE`,
//! `cp x FILE`, `tee FILE` write it. Each command is decided exactly as `explain bash`
//! decides it (OpenCode's bash tool splits it and asks about every part); the first one
//! that runs without a question is named with the rule that lets it.
//!
//! Only denies you wrote are looked at, and only agents the model can act as (hidden
//! agents are left out); one finding per agent and permission, at its first deny that
//! bash walks around (the same commands pass the others). An agent that asks before
//! every such command is not reported.
//!
//! ## Why it matters
//! OpenCode checks the `read` permission in the read tool only. A model refused
//! `read .env` often tries `cat .env` next; with bash allowed (the default for `build`),
//! it runs.
//!
//! ## Example
//! ```json
//! {"permission": {"read": {"*": "allow", "*.env": "deny"}}}
//! ```
//! `cat .env` still runs without asking.
//!
//! ## How to fix
//! Deny the commands that walk around it too, right after the rule that lets them run
//! (`"cat *.env*": "deny"` after `"*": "allow"`), so the rest of bash stays as you set
//! it; `check` proposes those rules for your config once it has proven them (the finding
//! gone, nothing else denied that you decided). Or keep secrets outside the project.
//! Listing readers never covers interpreters (`python`, `node`) that read files too.

use super::always_overrides_deny::decide_command;
use super::read_only_agent_writes::samples;
use super::{Check, Ctx, Finding, Level, Reach, Witness, describe};
use crate::model::{Action, Effect};

pub const CHECK: Check = Check {
    id: "deny-bypass",
    level: Level::Warning,
    summary: "a read/edit deny that a bash command (cat, grep, sed -i, cp …) walks around without asking",
    docs: include_str!("deny_bypass.rs"),
};

/// Commands that read (`read`) or write (`edit`) `FILE`.
pub(super) fn commands(permission: &str) -> &'static [&'static str] {
    match permission {
        "read" => &["cat FILE", "grep -r x FILE", "head FILE"],
        _ => &["sed -i s/x/y/ FILE", "cp x FILE", "tee FILE"],
    }
}

/// A path shell quoting leaves alone.
fn plain(path: &str) -> bool {
    !path.is_empty()
        && !path.ends_with('/')
        && !path.starts_with('/')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+@%,".contains(c))
}

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut splitter = ctx.splitter();
    for (a, agent) in ctx.project.agents.iter().enumerate() {
        if agent.hidden {
            continue;
        }
        let mut reported = std::collections::HashSet::new();
        for (i, r) in agent.rules.iter().enumerate() {
            if r.loc.is_none() {
                continue;
            }
            let permission = r.permission.as_str();
            if r.action != Action::Deny || !matches!(permission, "read" | "edit") {
                continue;
            }
            // A legacy `tools: {write: false}` switches a tool off; it is no deny on a path
            // to walk around (and `legacy-tools` speaks for that place).
            if matches!(
                r.layer,
                crate::model::Layer::LegacyTools | crate::model::Layer::AgentLegacyTools
            ) {
                continue;
            }
            if reported.contains(permission)
                || !matches!(reach[a].get(i), Some(Some(Reach::Decides(_))))
            {
                continue; // one finding per agent and permission: its first such deny
            }
            // A path this deny still denies.
            let mut candidates = samples(permission, &r.pattern);
            candidates.rotate_right(1); // the glob without its wildcards first (`.env`)
            let Some(path) = candidates.into_iter().find(|p| {
                plain(p)
                    && ctx.rule_decides(a, i, &crate::glob::analysis::Input::new(permission, p))
            }) else {
                continue;
            };
            let found = commands(permission).iter().find_map(|c| {
                let command = c.replace("FILE", &path);
                let d = decide_command(ctx, agent, &mut splitter, &command, None);
                (d.effect == Effect::Allow).then_some((command, d))
            });
            let Some((command, d)) = found else { continue };
            reported.insert(permission);
            let decider = d.bash.last().and_then(|x| x.rule);
            // Judged on the real-config corpus: a walked-around deny on a secret (`.env`,
            // keys, credentials) is what authors act on; on other paths (a read-only
            // subagent's `edit * deny` beside a free bash) it is a note. Severity rule
            // (docs/checks.md): the deny takes effect on every input its own tool asks, so
            // clause 1 does not apply; the note says how likely the other route is.
            let level = if crate::map::is_secret_shaped(&path) {
                Level::Warning
            } else {
                Level::Info
            };
            let message = format!(
                "this deny ({}) does not stop bash: `{command}` runs without asking (decided by {})",
                describe(r),
                decider
                    .map(|k| ctx.decider_place(&agent.rules[k]))
                    .unwrap_or_else(|| "no rule".into())
            );
            // The targeted change (deny the commands that walk around it, after the rule
            // that lets them) is built for this config and proven before it is shown
            // (`fix::suggest`); these words hold whatever the config.
            let help: String = format!(
                "OpenCode checks `{permission}` in its file tools only: deny the commands that {} the file as well, after the rule that lets them run (keep the rest of bash as it is), or keep the file outside the project; listed commands never cover interpreters (`python`, `node`)",
                if permission == "read" {
                    "read"
                } else {
                    "write"
                }
            );
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(level)
                    .with_witnesses(vec![
                        Witness {
                            permission: permission.to_string(),
                            input: path,
                            action: Effect::Deny,
                            rule: Some(i),
                        },
                        Witness {
                            permission: "bash".into(),
                            input: command,
                            action: Effect::Allow,
                            rule: decider,
                        },
                    ])
                    .with_help(help),
            );
        }
    }
}
