//! `never-matches` (warning; info for an allow)
//!
//! ## What it finds
//! A pattern that cannot match what its permission is checked against:
//! - an absolute path (also `~/…` and `$HOME/…`, which expand to one) under `read` or
//!   `edit`, which OpenCode checks as paths relative to the worktree root;
//! - an `external_directory` pattern that matches no `/dir/*` string, which is the only
//!   form OpenCode asks (`/etc` never matches; write `/etc/*`);
//! - `**/` read as a globstar: `src/**/*.ts` does not match `src/a.ts` and `**/.env` does
//!   not match `.env` at the root (in OpenCode `*` already crosses `/`, `**` is just two
//!   stars, and the `/` after it must be there). A trailing `/**` is not reported: it
//!   only misses the directory itself, which no tool asks about;
//! - `{a,b}` and `[abc]`, which are literal characters in OpenCode's wildcard.
//!
//! ## Why it matters
//! The rule looks like it protects or permits something and does nothing (or less than it
//! seems).
//!
//! ## Example
//! ```json
//! {"permission": {"edit": {"/home/me/project/secrets/*": "deny"}}}
//! ```
//!
//! ## How to fix
//! Write worktree-relative paths under `read`/`edit` (`secrets/*`), `dir/*` under
//! `external_directory`, and one `*` where a globstar was meant.

use super::{Check, Ctx, Finding, Level};
use crate::glob::automaton::{Budget, DEFAULT_BUDGET, Outcome, intersection};
use crate::glob::wildcard::{Token, Wildcard};

pub const CHECK: Check = Check {
    id: "never-matches",
    level: Level::Warning,
    summary: "a pattern that cannot match what its permission is checked against",
    docs: include_str!("never_matches.rs"),
};

/// Can `pattern` match some `external_directory` subject (`/…/*` or `/*`)?
fn matches_a_dir_subject(pattern: &str, ctx: &Ctx<'_>) -> Option<bool> {
    let p = Wildcard::compile(pattern);
    let slash = Token::Lit(b'/' as u16);
    let star = Token::Lit(b'*' as u16);
    let forms = [
        Wildcard {
            tokens: vec![slash, star],
            optional_tail: false,
        },
        Wildcard {
            tokens: vec![slash, Token::Star, slash, star],
            optional_tail: false,
        },
    ];
    let mut inconclusive = false;
    for f in &forms {
        match intersection(
            &[&p, f],
            ctx.project.platform,
            &mut Budget::new(DEFAULT_BUDGET),
        ) {
            Outcome::Witness(_) => return Some(true),
            Outcome::Empty => {}
            Outcome::Inconclusive => inconclusive = true,
        }
    }
    if inconclusive { None } else { Some(false) }
}

/// Runs of `*` as one (`**` means `*` in OpenCode).
fn collapse_stars(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

fn diagnose(permission: &str, pattern: &str, ctx: &Ctx<'_>) -> Option<String> {
    let home = ctx.project.loaded.paths().home.display().to_string();
    if (permission == "read" || permission == "edit") && pattern.starts_with('/') {
        let how = if pattern.starts_with(&home) {
            " (a `~` or `$HOME` path expands to one)"
        } else {
            ""
        };
        return Some(format!(
            "`{permission}` is checked against paths relative to the worktree root, so this absolute pattern{how} never matches; outside files are checked as `../…` and through `external_directory`"
        ));
    }
    if permission == "external_directory" && matches_a_dir_subject(pattern, ctx) == Some(false) {
        return Some(format!(
            "`external_directory` is asked with `/dir/*` strings only, so {} never matches; write `{}/*`",
            serde_json::to_string(pattern).unwrap_or_default(),
            pattern.trim_end_matches('/')
        ));
    }
    if pattern.contains("**/") {
        // What the author meant it to match: the `**/` gone, other stars as ordinary text.
        let meant: String = collapse_stars(&pattern.replace("**/", "")).replace('*', "a");
        let platform = ctx.project.platform;
        if !meant.is_empty() && !Wildcard::compile(pattern).is_match(&meant, platform) {
            return Some(format!(
                "`**/` is not a globstar in OpenCode: {} does not match {} (`*` already crosses `/`, and the `/` after `**` must be there); write {}",
                serde_json::to_string(pattern).unwrap_or_default(),
                serde_json::to_string(&meant).unwrap_or_default(),
                serde_json::to_string(&collapse_stars(&pattern.replace("**/", "*")))
                    .unwrap_or_default(),
            ));
        }
    }
    let braces = pattern
        .find('{')
        .is_some_and(|o| pattern[o..].contains(',') && pattern[o..].contains('}'));
    let brackets = pattern
        .find('[')
        .is_some_and(|o| pattern[o..].contains(']'));
    if braces || brackets {
        return Some(format!(
            "{} uses {} syntax, which OpenCode's wildcard reads as literal characters",
            serde_json::to_string(pattern).unwrap_or_default(),
            if braces {
                "brace `{a,b}`"
            } else {
                "bracket `[abc]`"
            }
        ));
    }
    None
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // One finding per agent; `consolidate` makes it one per place, naming every agent.
    for (agent, i, r) in ctx.written() {
        if let Some(message) = diagnose(&r.permission, &r.pattern, ctx) {
            // A deny or ask that never matches protects nothing: a warning. An allow that
            // never matches costs a question at most: info.
            let level = if r.action.effective() == crate::model::Effect::Allow {
                Level::Info
            } else {
                Level::Warning
            };
            out.push(Finding::at_rule(&CHECK, agent, i, message).with_level(level));
        }
    }
}
