//! `described-read-only` (warning)
//!
//! ## What it finds
//! An agent you defined whose description says it changes nothing ("read-only", "does not
//! modify", "report only", "does not auto-fix") while no rule of its own restricts editing:
//! its `edit` is decided by OpenCode's built-in `*` allow (or a shared allow), so it edits
//! `src/main.ts` without asking, and runs any command too where bash is open as well. At
//! the agent's `description`, the words quoted; the edit witness decided as `explain edit`
//! decides it.
//!
//! Not reported for an agent whose own rules allow editing (written on purpose), nor
//! where editing asks or is denied (an agent that may not edit but may run `sed -i` is
//! `deny-bypass`'s, at its `edit` deny), nor for OpenCode's own agents.
//!
//! ## Why it matters
//! A description is what the calling agent and the user read; it restricts nothing.
//! A reviewer "that reports only" with no `permission` block edits and deletes like `build`
//! (blind fresh-10 A: kyaulabs/prism's `code-review`, which "does not auto-fix anything").
//!
//! ## Example
//! ```markdown
//! ---
//! description: Reviews the diff and reports findings; read-only.
//! mode: subagent
//! ---
//! ```
//! `reviewer` may edit `src/main.ts` and run `rm -rf src` without asking (built-in `*`
//! allow).
//!
//! ## How to fix
//! Give the agent its own block: `edit: deny`, and bash asked first with the read-only
//! commands it needs allowed after it (`bash: {"*": ask, "git diff*": allow}`), or
//! `bash: deny` if it needs none.

use super::{Check, Ctx, Finding, is_own};
use crate::model::Effect;

pub const CHECK: Check = Check {
    id: "described-read-only",
    level: super::Level::Warning,
    summary: "an agent described as changing nothing (read-only, report only) that no rule of its own keeps from editing",
    docs: include_str!("described_read_only.rs"),
};

/// Words (lower case) by which a description says the agent changes nothing, each with
/// whether what follows must be what it leaves alone (`does not modify files`, not `does
/// not modify backend APIs`, which a front-end agent says; judged on the real-config
/// corpus).
const READ_ONLY_WORDS: &[(&str, bool)] = &[
    ("read-only", false),
    ("readonly", false),
    ("does not auto-fix", false),
    ("doesn't auto-fix", false),
    ("never auto-fix", false),
    ("report only", false),
    ("reports only", false),
    ("makes no changes", false),
    ("never fixes", false),
    ("never fix ", false),
    ("never writes", true),
    ("does not modify", true),
    ("doesn't modify", true),
    ("never modif", true),
    ("without modifying", true),
    ("does not edit", true),
    ("never edits", true),
    ("does not write", true),
];

/// What a description may say it leaves alone, after one of [`READ_ONLY_WORDS`]: all of
/// the code, not a part of it (`never modify production code` is a test writer's).
const EVERYTHING: &[&str] = &[
    "files",
    "file",
    "code",
    "the code",
    "the codebase",
    "anything",
    "source",
    "the repo",
    "the repository",
    "the project",
];

/// The first of [`READ_ONLY_WORDS`] in `description`, as written there (with what it
/// leaves alone: `never writes code`).
fn said(description: &str) -> Option<&str> {
    let lower = description.to_lowercase();
    // Lower-casing that changed a length (`İ`) would shift every offset: the words alone.
    let exact = lower.len() == description.len();
    READ_ONLY_WORDS.iter().find_map(|(w, object)| {
        let at = lower.find(w)?;
        let mut end = at + w.len();
        if *object {
            // The rest of the word (`modif` + `ies`), then what it leaves alone.
            let word = lower[end..]
                .find(|c: char| !c.is_alphabetic())
                .unwrap_or(lower.len() - end);
            let gap = lower[end + word..]
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(lower.len() - end - word);
            let rest = &lower[end + word + gap..];
            let whole = EVERYTHING.iter().find(|o| {
                rest.strip_prefix(**o)
                    .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
            });
            let ends = rest.is_empty() || rest.starts_with(['.', ',', ';', ')']);
            match whole {
                Some(o) => end += word + gap + o.len(),
                None if ends => end += word,
                None => return None,
            }
        }
        // Offsets of the lower-cased text, the same as the original's here.
        if !exact {
            return Some(*w);
        }
        description.get(at..end).map(str::trim_end)
    })
}

/// Run after the checks that report a restriction written but lost (an ignored
/// `permissions:` list, an unknown `readonly: true`, a `tools` map read as an allow-list):
/// an agent another warning already names in the same file is reported there, at the
/// cause.
pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    for agent in ctx.project.agents.iter() {
        if agent.is_internal() || agent.native {
            continue;
        }
        let Some(entry) = ctx.project.loaded.merged.agent.get(&agent.name) else {
            continue;
        };
        let (Some(description), Some(loc)) = (&entry.description, entry.description_loc) else {
            continue;
        };
        let Some(words) = said(description) else {
            continue;
        };
        // In an agent file, any warning there (an ignored `permissions:` block names no
        // agent); in a shared config, one about this agent.
        let own_file = super::in_frontmatter(ctx.project, loc);
        let spoken = out.iter().any(|f| {
            f.level >= super::Level::Warning
                && (own_file || f.agents.contains(&agent.name))
                && f.loc.is_some_and(|l| l.source == loc.source)
        });
        if spoken {
            continue;
        }
        let Some(edit) = ctx.witness_of(agent, "edit", "src/main.ts") else {
            continue;
        };
        let decider = edit.rule.and_then(|k| agent.rules.get(k));
        if edit.action != Effect::Allow || decider.is_some_and(|r| is_own(r.layer)) {
            continue;
        }
        let by = match decider {
            Some(r) if r.loc.is_some() => ctx.rule_at(r),
            Some(r) => format!("OpenCode's built-in {}", super::describe(r)),
            None => "OpenCode's default".to_string(),
        };
        let mut witnesses = vec![edit];
        let bash = ctx
            .witness_of(agent, "bash", "rm -rf src")
            .filter(|w| w.action == Effect::Allow);
        let runs = if bash.is_some() {
            " and runs `rm -rf src`"
        } else {
            ""
        };
        witnesses.extend(bash);
        let message = format!(
            "`{}` is described as \"{words}\", but no rule of its own keeps it from editing: it edits `src/main.ts`{runs} without asking (decided by {by})",
            agent.name
        );
        let place = if super::in_frontmatter(ctx.project, loc) {
            "in its frontmatter, `permission:` with `edit: deny` (or, if it writes a report, `edit:` with `\"*\": deny` first and `\"review.md\": allow` for that file) and `bash:` with `\"*\": ask` first, then the read-only commands it needs allowed (`\"git diff*\": allow`)"
        } else {
            "in its block, `\"permission\": {\"edit\": \"deny\", \"bash\": {\"*\": \"ask\", \"git diff*\": \"allow\"}}` (if it writes a report, `\"edit\": {\"*\": \"deny\", \"review.md\": \"allow\"}` for that file; the read-only commands it needs allowed after the bash catch-all)"
        };
        let help = format!(
            "to make the description true, give `{}` rules of its own: {place}; or `bash: deny` if it needs no command",
            agent.name
        );
        found.push(
            Finding::at(&CHECK, Some(loc), message)
                .with_agent(agent.name.clone(), None)
                .with_witnesses(witnesses)
                .with_help(help),
        );
    }
    out.extend(found);
}
