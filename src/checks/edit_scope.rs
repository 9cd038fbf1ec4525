//! `edit-scope` (warning)
//!
//! ## What it finds
//! An agent you defined whose own rules allow editing every file (`edit: allow`, or its
//! `"*": "allow"`), while its description or prompt says it changes no code: a docs
//! writer that "never touches code", an architect that "does not implement production
//! code", a reviewer that "writes only inside runs/<slug>/". Its words limit what it
//! writes; its rule does not, so it edits `src/main.ts` without asking. At the allow (what
//! to narrow), with the words as a related place; the edit witness decided as `explain
//! edit` decides it.
//!
//! The words are those `described-read-only` reads (`read-only`, `Never modify any
//! files`, `You do not write code`), and a limit to a part the agent may not change
//! (`Do not edit production code`, `never modify source code`) or a place it writes only
//! (`Write only inside runs/`). Not for an agent whose job is handing work on (an
//! orchestrator, `You delegate`), not for a legacy `tools` switch (`legacy-tools` speaks
//! for those), not where its allow names files (`"docs/**": "allow"`: scoped already).
//!
//! ## Why it matters
//! An agent that writes documents or a report needs `edit`, and `edit: allow` is the
//! short way to grant it; every other file comes with it. Four blind expert readings
//! (fresh-13: ada-x64, pavelherocraft, leifericf; fresh-14: gateline ×2, yq3, analogrelay)
//! flagged it: the prompt is the only limit, and a prompt restricts nothing.
//!
//! ## Example
//! ```markdown
//! ---
//! description: Writes and updates documentation. Never touches code.
//! permission:
//!   edit: allow
//! ---
//! ```
//! `docs-writer` edits `src/main.ts` without asking (its own `edit: allow`).
//!
//! ## How to fix
//! Scope its `edit` to what it writes: `"*": ask` first, then those files allowed
//! (`"*.md": allow` for documents, `"reports/**": allow` for its reports); `"*": deny`
//! where it must never change the rest. Nothing it does today is refused; a write its
//! words forbid is asked first.

use super::described_read_only::{hands_on, said, said_in_prompt};
use super::{Check, Ctx, Finding, Level, describe, in_frontmatter, is_own};
use crate::model::{Action, Effect, Layer};
use regex::Regex;
use std::sync::LazyLock;

pub const CHECK: Check = Check {
    id: "edit-scope",
    level: Level::Warning,
    summary: "an agent whose own `edit: allow` covers every file while its words say it changes no code (a docs writer, an architect, a reviewer writing its report)",
    docs: include_str!("edit_scope.rs"),
};

/// A part of the code the agent may not change (`Do not implement production code`,
/// `never modify source code`), or the one place it writes (`Write only inside runs/`).
static SCOPE_WORDS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let neg = r"(?:you\s+(?:do\s+not|don't|never|must\s+not|must\s+never|cannot|can't|may\s+not)|do\s+not|don't|never|must\s+not|must\s+never)";
    let verb = r"(?:modify|edit|write|implement|touch|change|alter)";
    let part = r"(?:production|source|application|business|implementation|product)";
    Regex::new(&format!(
        r"(?im)\b{neg}\s+{verb}\s+(?:any\s+|the\s+)?{part}\s+code\b|\bwrite\s+only\s+(?:inside|in|to|under)\s+`?[\w./<>-]+"
    ))
    .ok()
});

/// Where `text` limits what the agent writes: the words and their byte range.
fn scoped(text: &str) -> Option<(&str, usize, usize)> {
    let m = SCOPE_WORDS.as_ref()?.find(text)?;
    Some((m.as_str(), m.start(), m.end()))
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    for (agent, entry) in ctx.defined_agents() {
        if hands_on(
            &agent.name,
            entry.description.as_deref(),
            entry.prompt.as_deref(),
        ) {
            continue;
        }
        let described = || {
            let (d, loc) = entry.description.as_deref().zip(entry.description_loc)?;
            let words = said(d)
                .map(str::to_string)
                .or_else(|| scoped(d).map(|(w, _, _)| w.to_string()))?;
            Some((words, loc, "is described as"))
        };
        let prompted = || {
            let (prompt, at) = entry.prompt.as_deref().zip(entry.prompt_loc)?;
            let (words, start, end) = said_in_prompt(prompt).or_else(|| scoped(prompt))?;
            let loc = ctx.prompt_place(at, prompt, start, end);
            Some((words.to_string(), loc, "has a prompt that says"))
        };
        let Some((words, words_loc, how)) = described().or_else(prompted) else {
            continue;
        };
        let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(edit) = ctx.witness_of(agent, "edit", "src/main.ts") else {
            continue;
        };
        let Some(k) = edit.rule.filter(|_| edit.action == Effect::Allow) else {
            continue;
        };
        let Some(r) = agent.rules.get(k) else {
            continue;
        };
        let Some(loc) = r.loc else { continue };
        if !is_own(r.layer)
            || r.layer == Layer::AgentLegacyTools
            || r.action != Action::Allow
            || r.pattern != "*"
        {
            continue;
        }
        // Another warning at the allow speaks for it.
        if out
            .iter()
            .any(|f| f.level >= Level::Warning && f.loc == Some(loc))
        {
            continue;
        }
        let message = format!(
            "`{}` {how} \"{words}\", but its own {} lets it edit every file: it edits `src/main.ts` without asking",
            agent.name,
            describe(r)
        );
        let help = if in_frontmatter(ctx.project, loc) {
            "scope its `edit` to what it writes: in its frontmatter, `edit:` with `\"*\": ask` first, then those files allowed after it (`\"*.md\": allow` for documents, or its report's folder, `\"reports/**\": allow`); `\"*\": deny` where it must never change the rest. Nothing it does today is refused; a write its words forbid is asked first"
        } else {
            "scope its `edit` to what it writes: in its block, `\"edit\": {\"*\": \"ask\", \"*.md\": \"allow\"}` (the files it writes allowed after the `\"*\"`: documents, or its report's folder, `\"reports/**\"`); `\"*\": \"deny\"` where it must never change the rest. Nothing it does today is refused; a write its words forbid is asked first"
        };
        found.push(
            Finding::at(&CHECK, Some(loc), message)
                .with_agent(agent.name.clone(), Some(k))
                .with_related(vec![(words_loc, "its words".to_string())])
                .with_witnesses(vec![edit])
                .with_help(help.to_string()),
        );
    }
    out.extend(found);
}

#[cfg(test)]
mod tests {
    use super::scoped;

    #[test]
    fn a_limit_to_a_part_or_a_place_is_read_and_a_mention_is_not() {
        let says = |p: &str| scoped(p).map(|(w, _, _)| w.to_string());
        assert_eq!(
            says("You do not implement production code."),
            Some("You do not implement production code".into())
        );
        assert_eq!(
            says("Write only inside runs/<slug>/; you never modify code"),
            Some("Write only inside runs/<slug>/".into())
        );
        assert_eq!(says("Read the production code first."), None);
        assert_eq!(says("You write code and tests."), None);
    }
}
