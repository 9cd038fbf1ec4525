//! `ignored-key` (warning; error when the ignored block denies, asks or switches a tool
//! off, whatever its shape; info for a frontmatter block of allows alone, or one whose
//! every deny and ask the agent already enforces: either loses no protection)
//!
//! ## What it finds
//! A permission block OpenCode loads without complaint and then ignores: `permissions:` (the
//! V2 spelling, with an `s`) in the frontmatter of a markdown agent or mode. OpenCode keeps
//! it as an agent *option*, so none of its rules apply; the agent gets only its `permission`
//! and `tools` rules (verified on OpenCode 1.14.34 to 1.18.34). In a JSON config the same
//! key is refused from 1.18.24 ("V2 permissions are not supported"), so only the markdown
//! spelling slips through.
//!
//! A block in another tool's schema (`bash: {allow: [...], deny: ["rm -rf*"]}`, Claude
//! Code's `permissions: {deny: ["Bash(rm:*)"]}`) is an error as soon as it refuses
//! anything (a non-empty `deny`, `ask`, `disallow`, … list or map): what it refuses is
//! lost, and the agent's `tools: {bash: true}` beside it often runs everything unasked.
//!
//! ## Why it matters
//! The author believes the denies in that block protect something; OpenCode never checks
//! them.
//!
//! ## Example
//! ```markdown
//! ---
//! description: Reviews code
//! permissions:
//!   bash: deny
//! ---
//! ```
//! `permaudit rules --agent NAME` shows no `bash deny` rule: the agent runs every command.
//!
//! When the agent's own `tools:` or `permission:` already deny (or ask) every input the
//! block denies or asks, as in
//! ```markdown
//! ---
//! tools:
//!   bash: false
//! permissions:
//!   bash: deny
//! ---
//! ```
//! nothing is lost: the finding is a note asking to remove the block. The proof is exact:
//! a rule of the agent contains all of the block rule's inputs with an answer as strict,
//! and no later rule that answers more loosely meets them. `write:` in the block means the
//! write tool, which OpenCode checks as `edit`.
//!
//! ## How to fix
//! Rename the key to `permission:` and check the result with `permaudit rules --agent NAME`.

use super::overlap::openness;
use super::{Check, Ctx, Finding, Level, warning_findings};
use crate::agents::{Agent, from_config};
use crate::glob::analysis::{Analysis, RuleShape};
use crate::glob::automaton::Outcome;
use crate::model::config::tool_permission_name;
use crate::model::{Effect, Rule};

pub const CHECK: Check = Check {
    id: "ignored-key",
    level: Level::Warning,
    summary: "a permission block OpenCode loads but ignores (`permissions:` in frontmatter), so none of its rules apply",
    docs: include_str!("ignored_key.rs"),
};

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    warning_findings(ctx, &CHECK, &["ignored-key"], &mut found);
    let loaded = &ctx.project.loaded;
    let home = loaded.paths().home.display().to_string();
    for mut f in found {
        // A frontmatter `permissions:` block that holds only allows (an error when it
        // restricts anything, in any shape: `load::block_restricts`) loses no protection:
        // at most a question too many. A note, by the severity rule's last clause
        // (docs/checks.md: info only where nothing the author relies on changes).
        let frontmatter = f.loc.is_some_and(|l| {
            loaded
                .sources
                .get(l.source)
                .path()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "md"))
        });
        if frontmatter && f.level == Level::Warning {
            f.level = Level::Info;
        }
        // A block whose every deny and ask the agent already enforces (its `tools:` or
        // `permission:` say the same) loses nothing either: a note to remove it.
        let block = loaded
            .audit
            .ignored_blocks
            .iter()
            .find(|b| Some(b.loc) == f.loc);
        if f.level == Level::Error
            && let Some(b) = block
            && let Some(meant) = &b.meant
            && let Some(agent) = ctx.agents.iter().find(|a| a.name == b.agent)
        {
            // What it meant: `write: deny` there is the write tool, which OpenCode checks as
            // `edit` (as its `tools:` translation says).
            let mut rules = from_config(meant, &home);
            for r in &mut rules {
                r.permission = tool_permission_name(&r.permission).to_string();
            }
            // Every deny and ask it holds is in force already: nothing the author relies
            // on changes (the severity rule's last clause, docs/checks.md): a note.
            if already_enforced(agent, &rules, ctx.project.platform) {
                let allows = rules.iter().any(|r| r.action.effective() == Effect::Allow);
                f.level = Level::Info;
                f.message.push_str(&format!(
                    "; the agent already denies or asks every input it denies or asks (through its `tools:` or `permission:`), so no protection is lost: {}",
                    if allows {
                        "remove the block, or rename it if its rules, allows included, are what you want"
                    } else {
                        "remove the block"
                    }
                ));
            }
        }
        out.push(f);
    }
}

/// Does `agent` already decide every input each of `rules` matches at least as strictly
/// as that rule would (allows pass: they protect nothing)? Proven, or no: for each rule,
/// some rule of the agent contains all of its inputs with an answer as strict, and no
/// later rule looser than it meets them. Where the rules would be written does not matter
/// then: every input they match is already answered as strictly wherever they stand.
fn already_enforced(agent: &Agent, rules: &[Rule], platform: crate::glob::Platform) -> bool {
    // One analysis of the agent's rules followed by the block's (each asked about alone).
    let shapes: Vec<RuleShape> = agent
        .rules
        .iter()
        .chain(rules)
        .map(|x| RuleShape::new(x.permission.clone(), x.pattern.clone()))
        .collect();
    let n = agent.rules.len();
    let analysis = Analysis::new(&shapes, platform);
    rules.iter().enumerate().all(|(b, r)| {
        let e = r.action.effective();
        if e == Effect::Allow {
            return true;
        }
        let Some(k) = (0..n).rev().find(|&k| analysis.proved_within(k, n + b)) else {
            return false;
        };
        openness(agent.rules[k].action.effective()) <= openness(e)
            && (k + 1..n).all(|j| {
                openness(agent.rules[j].action.effective()) <= openness(e)
                    || matches!(analysis.intersection(j, n + b), Outcome::Empty)
            })
    })
}
