//! `prompt-limit` (warning)
//!
//! ## What it finds
//! An agent you defined whose prompt forbids a git act OpenCode can gate — pushing, force
//! pushing, committing ("Never push to main", "Never commit or push changes", "never force
//! push") — while its rules let the command run without asking: `git push origin main` is
//! decided `allow` by a catch-all (OpenCode's built-in `*` allow, a shared `"bash":
//! "allow"`, or the agent's own `"*": "allow"`). At the sentence of the prompt (a markdown
//! body's, or a JSON entry's `prompt` key), with the command as OpenCode asks it.
//!
//! Not reported where the command asks or is denied, nor where a rule written for that
//! command allows it (`"git push*": "allow"` says the author means it), nor for OpenCode's
//! own agents.
//!
//! ## Why it matters
//! A prompt is advice to a model, not a rule: the model may push anyway (it misreads the
//! task, a tool result tells it to, the context drops the line), and nothing stops it.
//! A hard limit belongs in `permission`, where OpenCode enforces it. Blind fresh-12 B:
//! StuartStephens' `implementation-specialist` listed "Hard limits — never do these: never
//! push to master/main, never force push" with no bash rule at all.
//!
//! ## Example
//! ```markdown
//! ---
//! description: Implements the plan.
//! mode: subagent
//! ---
//! Never commit or push changes; the user reviews them first.
//! ```
//! `git push origin main` and `git commit -am wip` run without asking (built-in `*`
//! allow).
//!
//! ## How to fix
//! Write the limit as a rule of the agent's own: `bash: {"git push*": "deny"}` for "never
//! push", the force forms (`"git push --force*"`, `"git push * -f*"`, …) for "never force
//! push"; `"ask"` where the prompt leaves a way (`never push to main`: no rule sees the
//! branch, so every push waits for a yes; `unless the user asks`).
//! The suggestion is proven on the config before it is shown.

use super::{Check, Ctx, Finding, is_own};
use crate::model::{Effect, Layer, Rule};
use regex::Regex;
use std::sync::LazyLock;

pub const CHECK: Check = Check {
    id: "prompt-limit",
    level: super::Level::Warning,
    summary: "an agent whose prompt forbids pushing or committing while its rules let `git push` / `git commit` run without asking",
    docs: include_str!("prompt_limit.rs"),
};

/// A prohibition with its list of acts: `Never create or switch branches, commit, or
/// push`, `do not push to main`, `never force-push`, ``never `git push --force` ``.
static LIMIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let neg = r"(?:you\s+(?:must\s+not|must\s+never|never|do\s+not|don't|should\s+never|may\s+not)|do\s+not|don't|never|must\s+not|must\s+never)";
    let item = r"(?:`?git\s+)?(?:force[- ]push|push\s+--force|push|commit|amend|create|switch|delete|merge|rebase|tag|reset|checkout|modify|edit|stage)\b(?:\s+(?:branches|branch|changes|code|commits|tags|anything|it|them|the\s+branch))?`?";
    let sep = r"(?:\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+|\s*/\s*)";
    Regex::new(&format!(
        r"(?i)\b{neg}\s+(?:ever\s+)?(?:run\s+|use\s+)?{item}(?:{sep}{item})*"
    ))
    .ok()
});

/// One act a prompt forbids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Push,
    ForcePush,
    Commit,
}

impl Act {
    /// The command OpenCode asks, as a person writes it.
    pub fn input(self) -> &'static str {
        match self {
            Act::Push => "git push origin main",
            Act::ForcePush => "git push --force origin main",
            Act::Commit => "git commit -am wip",
        }
    }

    /// The rules that enforce it, their patterns: every spelling of the act OpenCode asks
    /// as one command (a force push's flag before or after the remote).
    pub fn patterns(self) -> &'static [&'static str] {
        match self {
            Act::Push => &["git push*"],
            Act::ForcePush => &[
                "git push --force*",
                "git push -f*",
                "git push * --force*",
                "git push * -f*",
            ],
            Act::Commit => &["git commit*"],
        }
    }

    /// The command the act is (`git push` for a force push too).
    pub fn command(self) -> &'static str {
        match self {
            Act::Push | Act::ForcePush => "git push",
            Act::Commit => "git commit",
        }
    }

    fn gerund(self) -> &'static str {
        match self {
            Act::Push => "pushing",
            Act::ForcePush => "force pushing",
            Act::Commit => "committing",
        }
    }
}

/// What a prompt forbids: the words as written, their range, and each act with whether
/// the prompt forbids it outright (deny) or leaves a way (ask).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub words: String,
    pub start: usize,
    pub end: usize,
    pub acts: Vec<(Act, Effect)>,
}

/// What may follow the acts and still forbid them as such: the end of the sentence, or a
/// way left open that a prompt can answer (`unless the user asks`, `without explicit
/// permission`, `to main`): those are asks. Anything else names what not to commit
/// (`secrets`, `.env files`, `failed work`) or when (`before the tests pass`), not the act.
fn way(rest: &str) -> Option<bool> {
    let rest = rest
        .trim_start_matches([' ', '`', '*', '_', ')', '"', '\''])
        .to_lowercase();
    let asked = [
        "unless",
        "to main",
        "to master",
        "to `main",
        "to `master",
        "to production",
    ];
    let permission = [
        "explicit",
        "the user",
        "user",
        "permission",
        "approval",
        "asking",
        "confirmation",
        "being asked",
        "an explicit",
        "a request",
    ];
    let open = |at: &str| {
        asked.iter().any(|w| at.starts_with(w))
            || at
                .strip_prefix("without ")
                .is_some_and(|after| permission.iter().any(|w| after.starts_with(w)))
    };
    // Anywhere in the sentence (`never use git push --force or git reset --hard without
    // explicit user confirmation`).
    if rest.char_indices().any(|(k, _)| open(&rest[k..])) {
        return Some(true);
    }
    (rest.is_empty() || rest.starts_with([',', ':', '-', '\u{2014}', '\u{2013}', '(']))
        .then_some(false)
}

/// Words that make a prompt's line a hard limit, in the line itself or the heading it sits
/// under (`**Hard limits — never do these**`): a `Never commit` among a style guide's
/// habits is advice the author means as advice (blind fresh-2..12: the experts flagged
/// only the limits so framed).
const HARD: &[&str] = &[
    "hard limit",
    "hard rule",
    "hard constraint",
    "never do these",
    "zero exception",
    "no exceptions",
    "under no circumstances",
    "under any circumstances",
    "non-negotiable",
    "forbidden",
    "prohibited",
    "never violate",
    "must never",
    "absolutely",
];

/// The heading a position of `text` sits under: the last markdown heading (`## …`), line
/// that is all bold (`**…**`) or label (`Rules (non-negotiable):`) before it.
fn heading(text: &str, at: usize) -> &str {
    text[..at]
        .lines()
        .rev()
        .skip(1)
        .map(str::trim)
        .find(|l| {
            l.starts_with('#')
                || (l.starts_with("**") && l.ends_with(['*', ':']))
                || (l.ends_with(':') && !l.starts_with(['-', '*']))
        })
        .unwrap_or("")
}

/// A catch-all the author wrote in a permission block (`"*": "allow"`; not a legacy
/// `tools` switch, not a built-in rule): a deny by how a command starts is walked around
/// under it (`git -C . push`, `deny-walkaround`).
pub fn written_catch_all(r: &Rule) -> bool {
    r.pattern == "*"
        && r.loc.is_some()
        && !matches!(
            r.layer,
            Layer::LegacyTools | Layer::AgentLegacyTools | Layer::Defaults | Layer::AgentBuiltin
        )
}

/// The bash rules that make `acts` limits of the agent's own, in the order written: each
/// act's patterns with its effect, then, under a written catch-all where one is a deny,
/// `git -C *` and `git -c *` asked (the same commands reached that way). What the help
/// says and the suggestion writes.
pub fn rules(acts: &[(Act, Effect)], under_catch_all: bool) -> Vec<(&'static str, Effect)> {
    let mut out: Vec<(&'static str, Effect)> = acts
        .iter()
        .flat_map(|(a, e)| a.patterns().iter().map(move |p| (*p, *e)))
        .collect();
    if under_catch_all && acts.iter().any(|(_, e)| *e == Effect::Deny) {
        out.extend([("git -C *", Effect::Ask), ("git -c *", Effect::Ask)]);
    }
    out
}

/// The first limit a prompt states as a hard one, if any.
pub fn limit(prompt: &str) -> Option<Limit> {
    let re = LIMIT.as_ref()?;
    re.find_iter(prompt).find_map(|m| {
        let said = m.as_str().to_lowercase();
        let line_start = prompt[..m.start()].rfind('\n').map_or(0, |k| k + 1);
        let line_end = prompt[m.end()..]
            .find('\n')
            .map_or(prompt.len(), |k| m.end() + k);
        let line = prompt[line_start..line_end].to_lowercase();
        let framing = format!("{line} {}", heading(prompt, m.start()).to_lowercase());
        if !HARD.iter().any(|w| framing.contains(w)) {
            return None;
        }
        // `If currently on main: DO NOT commit` holds in a state no rule sees.
        let before = prompt[line_start..m.start()].to_lowercase();
        if ["if ", "when ", "while ", "once ", "after ", "before "]
            .iter()
            .any(|w| before.contains(w))
        {
            return None;
        }
        // The rest of the sentence: up to a stop that ends it (`.env` is no stop).
        let tail = &prompt[m.end()..line_end];
        let stop = tail
            .char_indices()
            .find(|(k, c)| {
                matches!(c, '.' | ';' | '!' | '?')
                    && tail[k + 1..]
                        .chars()
                        .next()
                        .is_none_or(|n| n.is_whitespace() || n == '*')
            })
            .map_or(tail.len(), |(k, _)| k);
        let rest = &tail[..stop];
        let branch = [
            "to main",
            "to master",
            "to `main",
            "to `master",
            "to production",
        ]
        .iter()
        .any(|w| rest.trim_start().to_lowercase().starts_with(w));
        let force = said.contains("force") || rest.trim_start().starts_with("--force");
        let way = way(rest)?;
        let words: Vec<&str> = said
            .split(|c: char| !c.is_alphanumeric() && c != '-')
            .collect();
        let mut acts = Vec::new();
        if words.contains(&"push") && !force {
            acts.push((Act::Push, if way { Effect::Ask } else { Effect::Deny }));
        }
        if force {
            acts.push((Act::ForcePush, if way { Effect::Ask } else { Effect::Deny }));
        }
        // No rule sees the branch a commit lands on: `never commit to main` is no
        // command's limit.
        if words.contains(&"commit") && !branch {
            acts.push((Act::Commit, if way { Effect::Ask } else { Effect::Deny }));
        }
        if acts.is_empty() {
            return None;
        }
        // The whole limit as written, its way included (`Never push to main`).
        let end = m.end() + rest.trim_end().len();
        Some(Limit {
            words: prompt[m.start()..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            start: m.start(),
            end,
            acts,
        })
    })
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    for (agent, entry) in ctx.defined_agents() {
        let Some((prompt, at)) = entry.prompt.as_deref().zip(entry.prompt_loc) else {
            continue;
        };
        let Some(limit) = limit(prompt) else {
            continue;
        };
        // The acts that run unasked, decided by a catch-all (a rule written for the
        // command itself is the author's word).
        let mut open = Vec::new();
        for (act, effect) in &limit.acts {
            let Some(w) = ctx.witness_of(agent, "bash", act.input()) else {
                continue;
            };
            // A deny or ask the author wrote for the command, which does not hold: the
            // rule-order kinds report it at its cause (`"git push": "deny"` before
            // `"*": "allow"`).
            let written = agent.rules.iter().any(|r| {
                r.loc.is_some()
                    && r.permission == "bash"
                    && r.action.effective() != Effect::Allow
                    && r.pattern.starts_with(act.command())
            });
            let decider = w.rule.and_then(|k| agent.rules.get(k));
            if written
                || w.action != Effect::Allow
                || decider.is_some_and(|r| is_own(r.layer) && r.pattern != "*")
            {
                continue;
            }
            open.push((*act, *effect, w));
        }
        let Some((_, _, first)) = open.first() else {
            continue;
        };
        let decider = first.rule.and_then(|k| agent.rules.get(k));
        let by = ctx.decided_by(decider);
        let loc = ctx.prompt_place(at, prompt, limit.start, limit.end);
        let runs: Vec<String> = open
            .iter()
            .map(|(_, _, w)| format!("`{}`", w.input))
            .collect();
        let acts: Vec<&str> = open.iter().map(|(a, _, _)| a.gerund()).collect();
        let message = format!(
            "`{}`'s prompt says \"{}\", but no rule keeps it from {}: {} {} without asking (decided by {by}); a prompt is advice to the model, not a limit OpenCode enforces",
            agent.name,
            limit.words,
            acts.join(" or "),
            runs.join(" and "),
            if runs.len() == 1 { "runs" } else { "run" },
        );
        let acts: Vec<(Act, Effect)> = open.iter().map(|(a, e, _)| (*a, *e)).collect();
        let walked = open.iter().any(|(_, _, w)| {
            w.rule
                .and_then(|k| agent.rules.get(k))
                .is_some_and(written_catch_all)
        });
        let rules_unique: Vec<String> = rules(&acts, walked)
            .iter()
            .map(|(p, e)| format!("\"{p}\": \"{e}\""))
            .collect();
        let place = if super::in_frontmatter(ctx.project, at) {
            format!(
                "in its frontmatter's `permission`, `bash: {{{}}}`",
                rules_unique.join(", ")
            )
        } else {
            format!(
                "in its block's `permission`, `\"bash\": {{{}}}`",
                rules_unique.join(", ")
            )
        };
        let asks = open.iter().any(|(_, e, _)| *e == Effect::Ask);
        let help = format!(
            "make the limit a rule of `{}`'s own: {place}{}; the other commands keep their rules",
            agent.name,
            if asks {
                " (an ask where the prompt leaves a way, `unless asked` or a branch no rule sees: each such command waits for a yes, and you see what it would do)"
            } else {
                ""
            }
        );
        found.push(
            Finding::at(&CHECK, Some(loc), message)
                .with_agent(agent.name.clone(), None)
                .with_witnesses(open.into_iter().map(|(_, _, w)| w).collect())
                .with_help(help),
        );
    }
    out.extend(found);
}

#[cfg(test)]
mod tests {
    use super::{Act, limit};
    use crate::model::Effect;

    fn acts(p: &str) -> Vec<(Act, Effect)> {
        limit(p).map(|l| l.acts).unwrap_or_default()
    }

    #[test]
    fn a_prompt_limit_is_read_with_its_acts_and_whether_it_leaves_a_way() {
        let hard = |l: &str| acts(&format!("## Hard limits\n\n{l}\n"));
        assert_eq!(
            hard("- Never commit or push changes."),
            vec![(Act::Push, Effect::Deny), (Act::Commit, Effect::Deny)]
        );
        assert_eq!(
            hard("- Never create or switch branches, commit, or push."),
            vec![(Act::Push, Effect::Deny), (Act::Commit, Effect::Deny)]
        );
        assert_eq!(
            hard("- never push to master/main"),
            vec![(Act::Push, Effect::Ask)]
        );
        assert_eq!(
            hard("- Never force push."),
            vec![(Act::ForcePush, Effect::Deny)]
        );
        assert_eq!(
            hard("- Do not push unless the user asks."),
            vec![(Act::Push, Effect::Ask)]
        );
        assert_eq!(hard("- Never create branches."), vec![]);
        assert_eq!(
            hard("- Do not include secrets in a commit message."),
            vec![]
        );
        assert_eq!(hard("- Never commit secrets or tokens."), vec![]);
        assert_eq!(hard("- Never commit without running the tests."), vec![]);
        assert_eq!(hard("- Secrets are never committed."), vec![]);
        assert_eq!(hard("- NEVER commit `.env` files."), vec![]);
        assert_eq!(
            hard(
                "- NEVER use `git push --force` or `git reset --hard` without explicit user confirmation"
            ),
            vec![(Act::ForcePush, Effect::Ask)]
        );
        assert_eq!(hard("- **If currently on main:** DO NOT commit."), vec![]);
        assert_eq!(
            hard("1. **NEVER COMMIT TO MAIN/MASTER.** Branch first."),
            vec![]
        );
        // Not framed as a hard limit: a habit among others.
        assert_eq!(
            acts("## Style\n\n- Never commit or push changes.\n"),
            vec![]
        );
        assert_eq!(
            acts("Never push to `main` under any circumstances."),
            vec![(Act::Push, Effect::Ask)]
        );
    }
}
