//! `unusable-allow` (warning)
//!
//! ## What it finds
//! An `allow` or `ask` for a tool that a later rule hides from the model entirely. OpenCode
//! hides a tool when the last rule whose permission matches it is exactly `* deny`
//! (`Permission.disabled`, pattern ignored when searching, compared to `*` literally).
//!
//! ## Why it matters
//! The model never sees the tool, so the allow can never be used.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"echo *": "allow", "*": "deny"}}}
//! ```
//! bash is hidden; `echo hi` is never run. `{"*": "deny", "echo *": "allow"}` keeps bash
//! visible, allows `echo …` and denies the rest.
//!
//! Only allows written in the same file and layer as the hiding rule are reported: an agent
//! whose own config denies a tool outright means it.
//!
//! ## How to fix
//! Put the `* deny` first and the allows after it.

use super::{Check, Ctx, Finding, Level};
use crate::agents::{DEFAULT_TOOLS, is_hidden, tool_permission};
use crate::glob::Wildcard;
use crate::model::Effect;

pub const CHECK: Check = Check {
    id: "unusable-allow",
    level: Level::Warning,
    summary: "an allow for a tool that a later `* deny` hides from the model",
    docs: include_str!("unusable_allow.rs"),
};

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    for agent in ctx.agents.iter() {
        for tool in DEFAULT_TOOLS {
            if !is_hidden(&agent.rules, tool, platform) {
                continue;
            }
            let perm = tool_permission(tool);
            let hider = agent
                .rules
                .iter()
                .rposition(|r| Wildcard::compile(&r.permission).is_match(perm, platform));
            let Some(h) = hider else { continue };
            for (i, r) in agent.rules.iter().enumerate().take(h) {
                // A rule for every permission (`"*": "ask"`) still serves the other tools.
                if !ctx.judges(r)
                    || r.permission.contains(['*', '?'])
                    || r.action.effective() == Effect::Deny
                    || !Wildcard::compile(&r.permission).is_match(perm, platform)
                    || (tool == "write" && perm == "edit")
                    // A later file or layer (an agent's own `edit: deny`) hiding the tool is
                    // a deliberate override, not an unusable allow.
                    || !super::same_origin(r, &agent.rules[h])
                {
                    continue;
                }
                let mut related = Vec::new();
                if let Some(l) = agent.rules[h].loc {
                    related.push((l, "this `* deny` hides the tool".to_string()));
                }
                let message = format!(
                    "the `{tool}` tool is hidden from the model by `{}` \"*\" deny at {}, so this {} can never be used",
                    agent.rules[h].permission,
                    ctx.place(&agent.rules[h]),
                    r.action
                );
                let help: String = "put the `* deny` before the allows: the tool stays visible and unmatched calls are denied".into();
                out.push(
                    Finding::at_rule(&CHECK, agent, i, message)
                        .with_related(related)
                        .with_help(help),
                );
            }
        }
    }
}
