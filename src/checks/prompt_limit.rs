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
//! And a prompt that forbids running commands at all (`NEVER use bash tool`, `don't run
//! any bash commands`; blind fresh-14 B: smzm's describer, no permission block) while
//! `rm -rf src` runs without asking; not a use of bash (`for code changes`, `directly`,
//! `unless asked`), not for an agent given commands of its own (`"git diff*": "allow"`),
//! not where a warning in its file speaks for a lost restriction.
//!
//! A limit counts where its line or heading frames it as a hard one (`Hard limits`,
//! `non-negotiable`, `under no circumstances`), or where it names its control itself
//! (`never commit without user consent`: the ask is the rule it asks for; blind fresh-14
//! A, befrvnk's committer).
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
    /// Any command: `NEVER use bash tool`, `Cannot run shell commands`.
    Bash,
}

impl Act {
    /// The command OpenCode asks, as a person writes it.
    pub fn input(self) -> &'static str {
        match self {
            Act::Push => "git push origin main",
            Act::ForcePush => "git push --force origin main",
            Act::Commit => "git commit -am wip",
            Act::Bash => "rm -rf src",
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
            Act::Bash => &["*"],
        }
    }

    /// The command the act is (`git push` for a force push too).
    pub fn command(self) -> &'static str {
        match self {
            Act::Push | Act::ForcePush => "git push",
            Act::Commit => "git commit",
            Act::Bash => "",
        }
    }

    fn gerund(self) -> &'static str {
        match self {
            Act::Push => "pushing",
            Act::ForcePush => "force pushing",
            Act::Commit => "committing",
            Act::Bash => "running commands",
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
        "consent",
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

/// Does the rest of a limit's sentence make the act wait for a person (`without user
/// consent`, `without explicit approval`, `without asking`)?
fn consent(rest: &str) -> bool {
    let rest = rest.to_lowercase();
    let sentence = rest.split(['.', ';', '!', '?', '\n']).next().unwrap_or("");
    sentence.split("without ").skip(1).any(|after| {
        let after = after.trim_start_matches(['`', '*', '_']).trim_start();
        let after = [
            "explicit ",
            "the user's ",
            "the user ",
            "user ",
            "your ",
            "developer ",
            "prior ",
        ]
        .iter()
        .fold(after, |a, w| a.strip_prefix(w).unwrap_or(a));
        let after = ["explicit ", "user ", "developer "]
            .iter()
            .fold(after, |a, w| a.strip_prefix(w).unwrap_or(a));
        [
            "consent",
            "approval",
            "permission",
            "confirmation",
            "confirming",
            "asking",
        ]
        .iter()
        .any(|w| after.starts_with(w))
    })
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
    if under_catch_all
        && acts
            .iter()
            .any(|(a, e)| *e == Effect::Deny && *a != Act::Bash)
    {
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
        // A limit that names its control (`never commit without user consent`) is one
        // however it is framed: the ask it asks for is a rule (blind fresh-14 A: befrvnk's
        // committer, with no permission block).
        let consent = consent(&prompt[m.end()..line_end]);
        if !consent && !HARD.iter().any(|w| framing.contains(w)) {
            return None;
        }
        // `If currently on main: DO NOT commit` holds in a state no rule sees.
        if conditioned(prompt, m.start(), CONDITIONS) {
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

/// A prompt that forbids the bash tool as a whole (`NEVER use bash tool`, `Cannot run
/// shell commands`, `don't run any bash commands`; blind fresh-14 B: smzm's describer),
/// not a use of it (`for code changes`, `directly`, `unless asked`, `bash/write/edit`).
static NO_BASH: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:(?:you\s+)?(?:never|do\s+not|don't|cannot|can't|can\s+not|must\s+not|must\s+never|may\s+not))\s+(?:ever\s+)?(?:run|execute|use)\s+(?:any\s+)?(?:the\s+)?(?:bash|shell)(?:\s+tool)?(?:\s+commands?)?",
    )
    .ok()
});

/// Words that, before a limit on its line, put it under a condition no rule sees (`If
/// currently on main: DO NOT commit`).
const CONDITIONS: &[&str] = &["if ", "when ", "while ", "once ", "after ", "before "];

/// Is there one of `words` on the line of `prompt` before byte `at`?
fn conditioned(prompt: &str, at: usize, words: &[&str]) -> bool {
    let line_start = prompt[..at].rfind('\n').map_or(0, |k| k + 1);
    let before = prompt[line_start..at].to_lowercase();
    words.iter().any(|w| before.contains(w))
}

/// The limit a prompt states: on a git act, or else on running commands at all.
pub fn stated(prompt: &str) -> Option<Limit> {
    limit(prompt).or_else(|| no_bash(prompt))
}

/// The first sentence of `prompt` that forbids running commands at all.
fn no_bash(prompt: &str) -> Option<Limit> {
    NO_BASH.as_ref()?.find_iter(prompt).find_map(|m| {
        if conditioned(prompt, m.start(), CONDITIONS) || conditioned(prompt, m.start(), &["until "])
        {
            return None;
        }
        let rest = &prompt[m.end()..];
        let ends = rest.is_empty()
            || rest.starts_with(['.', ',', ';', ':', ')', '!', '\n', '\r'])
            || rest.starts_with([' ', '\t'])
                && rest
                    .trim_start_matches([' ', '\t'])
                    .starts_with(['-', '\u{2014}', '\u{2013}', '(', '\n', '*']);
        if !ends {
            return None;
        }
        let sentence = rest
            .split(['.', ';', '!', '?', '\n'])
            .next()
            .unwrap_or("")
            .to_lowercase();
        if [
            "unless", "except", "without", "directly", "instead", "outside",
        ]
        .iter()
        .any(|w| sentence.contains(w))
        {
            return None;
        }
        Some(Limit {
            words: m.as_str().split_whitespace().collect::<Vec<_>>().join(" "),
            start: m.start(),
            end: m.end(),
            acts: vec![(Act::Bash, Effect::Deny)],
        })
    })
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    for (agent, entry) in ctx.defined_agents() {
        let Some((prompt, at)) = entry.prompt.as_deref().zip(entry.prompt_loc) else {
            continue;
        };
        let Some(limit) = stated(prompt) else {
            continue;
        };
        // A restriction written but lost in the agent's file (an ignored `permissions:`
        // list) is reported at its cause, there.
        let own_file = super::in_frontmatter(ctx.project, at);
        let spoken = out.iter().any(|f| {
            f.level >= super::Level::Warning
                && (own_file || f.agents.contains(&agent.name))
                && f.loc.is_some_and(|l| l.source == at.source)
        });
        if spoken && limit.acts.iter().any(|(a, _)| *a == Act::Bash) {
            continue;
        }
        // An agent that is given commands of its own (`"git diff*": "allow"`) runs them:
        // its prompt's `never use bash` is about something else.
        let gives = agent.rules.iter().any(|r| {
            is_own(r.layer)
                && r.permission == "bash"
                && r.pattern != "*"
                && r.action.effective() == Effect::Allow
        });
        if gives && limit.acts.iter().any(|(a, _)| *a == Act::Bash) {
            continue;
        }
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
            let written = *act != Act::Bash
                && agent.rules.iter().any(|r| {
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
        let asks = open.iter().any(|(_, e, _)| *e == Effect::Ask);
        let every = open.iter().all(|(a, _, _)| *a == Act::Bash);
        let frontmatter = super::in_frontmatter(ctx.project, at);
        let place = match (every, frontmatter) {
            (true, true) => "in its frontmatter's `permission`, `bash: deny` (or, if it needs a command after all, `bash:` with `\"*\": deny` first and that command allowed after it)".to_string(),
            (true, false) => "in its block's `permission`, `\"bash\": \"deny\"` (or, if it needs a command after all, `\"bash\": {\"*\": \"deny\", \"<command>*\": \"allow\"}`)".to_string(),
            (false, true) => format!(
                "in its frontmatter's `permission`, `bash: {{{}}}`",
                rules_unique.join(", ")
            ),
            (false, false) => format!(
                "in its block's `permission`, `\"bash\": {{{}}}`",
                rules_unique.join(", ")
            ),
        };
        let help = format!(
            "make the limit a rule of `{}`'s own: {place}{}{}",
            agent.name,
            if asks {
                " (an ask where the prompt leaves a way, `unless asked` or a branch no rule sees: each such command waits for a yes, and you see what it would do)"
            } else {
                ""
            },
            if every {
                ""
            } else {
                "; the other commands keep their rules"
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
        // A limit that names its control is one however it is framed.
        assert_eq!(
            acts(
                "## Steps

3. **Present for approval** - never commit without user consent
"
            ),
            vec![(Act::Commit, Effect::Ask)]
        );
        assert_eq!(
            acts(
                "- Never force push without explicit permission.
"
            ),
            vec![(Act::ForcePush, Effect::Ask)]
        );
        assert_eq!(
            acts(
                "- Never commit without running the tests.
"
            ),
            vec![]
        );
    }

    #[test]
    fn a_prompt_forbidding_every_command_is_read_and_a_use_of_bash_is_not() {
        let bash = |p: &str| super::no_bash(p).map(|l| l.words);
        assert_eq!(
            bash("Explain the code. Don't write any code and don't run any bash commands."),
            Some("don't run any bash commands".into())
        );
        assert_eq!(
            bash("- NEVER use bash tool\n"),
            Some("NEVER use bash tool".into())
        );
        assert_eq!(
            bash("- This profile cannot run bash, tests, or builds."),
            Some("cannot run bash".into())
        );
        assert_eq!(bash("- **NEVER use bash for code changes**"), None);
        assert_eq!(bash("- Never run bash commands directly."), None);
        assert_eq!(bash("- Do not run shell commands unless asked."), None);
        assert_eq!(
            bash("- NEVER execute bash/write/edit without loading it"),
            None
        );
        assert_eq!(bash("If the build fails, do not run shell commands."), None);
    }
}
