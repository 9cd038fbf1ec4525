//! `described-read-only` (warning)
//!
//! ## What it finds
//! An agent you defined whose description says it changes nothing ("read-only", "does not
//! modify", "report only", "does not auto-fix"), or whose prompt forbids it changing the
//! code as a whole ("You cannot modify code", "Never modify any files", "You are a
//! read-only reviewer"), while no rule of its own restricts editing:
//! its `edit` is decided by OpenCode's built-in `*` allow (or a shared allow), so it edits
//! `src/main.ts` without asking, and runs any command too where bash is open as well. At
//! the words (the `description` key, the sentence of a markdown body, a JSON `prompt`
//! key), quoted; the edit witness decided as `explain edit` decides it.
//!
//! A prompt's words count only where they forbid all of it: not a part (`Do not modify
//! files outside docs/`, `never modify test files`), not with a way left open in the same
//! sentence (`unless`, `except`, `directly`, `yourself`: `never modify code directly in
//! the orchestrator` hands the change to another agent), and not for an agent whose job is
//! handing work on (`You delegate. You NEVER write code.`: an orchestrator, a team lead).
//! Blind fresh-12 B: mtheunissen82's `code-reviewer` ("You cannot modify code") had no
//! permission block at all.
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
//! commands it needs allowed after it (`bash: {"*": ask, "git diff *": allow}`), or
//! `bash: deny` if it needs none.

use super::{Check, Ctx, Finding, is_own};
use crate::model::Effect;
use regex::Regex;
use std::sync::LazyLock;

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
pub(super) fn said(description: &str) -> Option<&str> {
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
            // `never edits files outside its route`: a part, not the whole.
            let next = lower[end..]
                .split(|c: char| !c.is_alphanumeric())
                .find(|w| !w.is_empty())
                .unwrap_or("");
            if lower[end..].starts_with(' ') && NARROWING.contains(&next) {
                return None;
            }
        }
        // `without modifying files unless explicitly asked`: a way left open.
        let sentence = lower[end..].split(['.', ';', '\n']).next().unwrap_or("");
        if ["unless", "except", "when asked", "if asked"]
            .iter()
            .any(|w| sentence.contains(w))
        {
            return None;
        }
        // Offsets of the lower-cased text, the same as the original's here.
        if !exact {
            return Some(*w);
        }
        description.get(at..end).map(str::trim_end)
    })
}

/// How a prompt says the agent changes nothing: a prohibition on changing the code as a
/// whole (`You cannot modify code`, `NEVER create, edit, or modify any files`, `Do NOT
/// write or modify code`), or the agent called read-only (`You are a read-only
/// reviewer`, a line `Role: Review diffs (read-only).`). Stricter than [`READ_ONLY_WORDS`]: a prompt is long, and `read-only` there
/// is as often about a command (`read-only git commands are fine`) as about the agent.
static PROMPT_WORDS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let neg = r"(?:you\s+(?:cannot|can\s*not|can't|must\s+not|must\s+never|never|do\s+not|don't|will\s+not|won't|should\s+never|may\s+not|are\s+not\s+allowed\s+to)|do\s+not|don't|never|must\s+not|must\s+never)";
    let verb = r"(?:modify|edit|write|change|alter|touch)";
    let verbs = format!(
        r"(?:create|{verb})(?:\s*(?:,|/|\bor\b|\band\b)\s*(?:or\s+|and\s+)?(?:create|delete|{verb}))*"
    );
    let object = r"(?:(?:any|the|project|source|repository|repo)\s+)*(?:files?|code|codebase|anything|source)";
    let role = r"(?:agent|subagent|reviewer|auditor|analyst|mode|role|assistant|advisor|explorer|researcher|investigator|scout|specialist|inspector|critic|consultant|observer|architect|planner)";
    Regex::new(&format!(
        r"(?im)\b(?:{neg}\s+(?:ever\s+)?{verbs}\s+{object}\b(?:\s*(\w+))?|(?:you\s+are|you're|agent\s+is|you\s+(?:must\s+)?(?:remain|stay))\s+(?:an?\s+)?(?:strictly\s+|purely\s+|completely\s+|entirely\s+)?read[- ]only\b|\b(?:an?|this)\s+(?:strictly\s+|purely\s+)?read[- ]only\s+(?:\w+\s+){{0,2}}?{role}\b|read[- ]only\s+is\s+a\s+hard|^[\s>*_#-]*(?:role|mode)\s*:[^\n]*?\bread[- ]only\b)"
    ))
    .ok()
});

/// Words after a prohibition that narrow it to a part (`do not modify files outside
/// src/`, `never write anything further`): not the whole code.
const NARROWING: &[&str] = &[
    "outside",
    "in",
    "under",
    "within",
    "except",
    "other",
    "unless",
    "until",
    "before",
    "without",
    "that",
    "which",
    "belonging",
    "owned",
    "of",
    "for",
    "from",
    "not",
    "at",
    "on",
    "into",
    "to",
    "when",
    "if",
    "while",
    "during",
    "further",
    "else",
    "more",
    "beyond",
    "besides",
    "after",
    "again",
    "unrelated",
    "related",
    "yet",
    "you",
    "another",
    "someone",
    "others",
];

/// Does the agent say its job is handing the work to others (`You delegate`, `Always
/// delegate to implementor`, an `orchestrator`)? Narrower than a mention of subagents: a
/// read-only explorer says an orchestrator dispatches it.
pub(super) fn hands_on(name: &str, description: Option<&str>, prompt: Option<&str>) -> bool {
    let name = name.to_lowercase();
    let by_name = [
        "orchestrat",
        "coordinat",
        "dispatch",
        "leader",
        "lead",
        "manager",
    ];
    if by_name.iter().any(|w| name.contains(w)) {
        return true;
    }
    let said = [
        "you delegate",
        "delegate to",
        "delegate all",
        "delegate the",
        "delegate every",
        "delegate work",
        "delegate tasks",
        "through delegation",
        "you orchestrate",
        "you are the orchestrat",
        "you are an orchestrat",
        "you coordinate",
    ];
    [description, prompt].into_iter().flatten().any(|t| {
        let t = t.to_lowercase();
        said.iter().any(|w| t.contains(w))
    })
}

/// Where the prompt says the agent changes nothing: the words as written and their byte
/// range in `prompt`.
pub(super) fn said_in_prompt(prompt: &str) -> Option<(&str, usize, usize)> {
    let words = PROMPT_WORDS.as_ref()?;
    words.captures_iter(prompt).find_map(|c| {
        let all = c.get(0)?;
        let mut end = all.end();
        if let Some(next) = c.get(1) {
            if NARROWING.contains(&next.as_str().to_lowercase().as_str()) {
                return None;
            }
            end = prompt[..next.start()].trim_end().len();
        }
        // A condition before it on its line: `If none apply: do not modify code`.
        let line = prompt[..all.start()].rfind('\n').map_or(0, |k| k + 1);
        let before = prompt[line..all.start()].to_lowercase();
        if ["if ", "when ", "unless ", "until ", "before ", "after "]
            .iter()
            .any(|w| before.starts_with(w) || before.contains(&format!(" {w}")))
        {
            return None;
        }
        // The rest of its sentence: `You do not write code yourself unless it is
        // trivial`, `never modify code directly` (hand it to another agent) keep a way.
        let sentence = prompt[all.start()..]
            .split(['.', '\n', ';', '!', '?'])
            .next()
            .unwrap_or("")
            .to_lowercase();
        let way = [
            "unless", "except", "directly", "yourself", "trivial", "without",
        ];
        if way.iter().any(|w| sentence.contains(w)) {
            return None;
        }
        // `Role: plan only (read-only)`: its parenthesis closed.
        let words = &prompt[all.start()..end];
        if words.matches('(').count() > words.matches(')').count() && prompt[end..].starts_with(')')
        {
            end += 1;
        }
        Some((&prompt[all.start()..end], all.start(), end))
    })
}

/// Run after the checks that report a restriction written but lost (an ignored
/// `permissions:` list, an unknown `readonly: true`, a `tools` map read as an allow-list):
/// an agent another warning already names in the same file is reported there, at the
/// cause.
pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    for (agent, entry) in ctx.defined_agents() {
        let described = entry
            .description
            .as_deref()
            .zip(entry.description_loc)
            .and_then(|(d, loc)| Some((said(d)?.to_string(), loc, "is described as")));
        // An agent whose job is handing work on says it writes no code of its own: the
        // others write it (`You delegate. You NEVER write code.`).
        let prompted = || {
            if hands_on(
                &agent.name,
                entry.description.as_deref(),
                entry.prompt.as_deref(),
            ) {
                return None;
            }
            let (prompt, at) = entry.prompt.as_deref().zip(entry.prompt_loc)?;
            let (words, start, end) = said_in_prompt(prompt)?;
            let loc = ctx.prompt_place(at, prompt, start, end);
            let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
            Some((words, loc, "has a prompt that says"))
        };
        let Some((words, loc, how)) = described.or_else(prompted) else {
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
        // A file OpenCode reads no frontmatter from, whose settings restrict: the unread
        // fence is the cause (`broken-frontmatter`, which names the files written the
        // same way at the first of them), and its `edit: deny` is there already.
        let file = &ctx.project.loaded.sources.get(loc.source).text;
        let unread = own_file
            && entry.prompt_loc.is_some_and(|p| p.span.start == 0)
            && super::broken_frontmatter::restricts(file);
        if spoken || unread {
            continue;
        }
        let Some(edit) = ctx.witness_of(agent, "edit", "src/main.ts") else {
            continue;
        };
        let decider = edit.rule.and_then(|k| agent.rules.get(k));
        if edit.action != Effect::Allow || decider.is_some_and(|r| is_own(r.layer)) {
            continue;
        }
        let by = ctx.decided_by(decider);
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
            "`{}` {how} \"{words}\", but no rule of its own keeps it from editing: it edits `src/main.ts`{runs} without asking (decided by {by})",
            agent.name
        );
        // In a frontmatter (one to write first where the file has none), or a JSON block.
        let yaml_rest = "(or, if it writes a report, `edit:` with `\"*\": deny` first and `\"review.md\": allow` for that file) and `bash:` with `\"*\": ask` first, then the read-only commands it needs allowed (`\"git diff *\": allow`, with `\"git *--output*\": deny` after it: `--output` writes a file)";
        let place = if super::in_frontmatter(ctx.project, loc) && !file.starts_with("---") {
            format!(
                "a frontmatter at the top of its file (which has none: a line `---`, the settings, a line `---`) with `permission:`, `edit: deny` under it {yaml_rest}"
            )
        } else if super::in_frontmatter(ctx.project, loc) {
            format!("in its frontmatter, `permission:` with `edit: deny` {yaml_rest}")
        } else {
            "in its block, `\"permission\": {\"edit\": \"deny\", \"bash\": {\"*\": \"ask\", \"git diff *\": \"allow\", \"git *--output*\": \"deny\"}}` (if it writes a report, `\"edit\": {\"*\": \"deny\", \"review.md\": \"allow\"}` for that file; the read-only commands it needs allowed after the bash catch-all)".to_string()
        };
        let help = format!(
            "to make {} true, give `{}` rules of its own: {place}; or `bash: deny` if it needs no command",
            if how.starts_with("is described") {
                "the description"
            } else {
                "its prompt"
            },
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

#[cfg(test)]
mod tests {
    use super::said_in_prompt;

    #[test]
    fn a_prompt_forbidding_all_changes_is_read_as_read_only_and_a_part_is_not() {
        let says = |p: &str| said_in_prompt(p).map(|(w, _, _)| w.to_string());
        assert_eq!(
            says("- Never modify any files. Report."),
            Some("Never modify any files".into())
        );
        assert_eq!(
            says("You cannot modify code."),
            Some("You cannot modify code".into())
        );
        assert_eq!(
            says("NEVER create, edit, or modify any files"),
            Some("NEVER create, edit, or modify any files".into())
        );
        assert_eq!(
            says("You are a read-only reviewer."),
            Some("You are a read-only".into())
        );
        assert_eq!(says("Do not modify files outside docs/."), None);
        assert_eq!(says("Never modify test files."), None);
        assert_eq!(says("Do not write anything further."), None);
        assert_eq!(says("You do not write code unless asked."), None);
        assert_eq!(says("Never modify code directly."), None);
        assert_eq!(says("Use read-only git commands."), None);
        assert_eq!(
            says("# Planner\n\nRole: Analyze and plan only (read-only).\n"),
            Some("Role: Analyze and plan only (read-only)".into())
        );
        assert_eq!(says("Run `git status` (read-only) first."), None);
    }
}
