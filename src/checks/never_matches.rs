//! `never-matches` (warning)
//!
//! ## What it finds
//! A pattern that cannot match what its permission is checked against:
//! - an absolute path (also `~/…` and `$HOME/…`, which expand to one) under `read` or
//!   `edit`, which OpenCode checks as paths relative to the worktree root;
//! - an `external_directory` pattern that matches no `/dir/*` string, which is the only
//!   form OpenCode asks (`/etc` never matches; write `/etc/*`);
//! - `**` read as a globstar: `src/**` does not match `src` (in OpenCode `*` already
//!   crosses `/`, and `**` is just two stars);
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
use std::collections::HashSet;

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
    if let Some(prefix) = pattern.strip_suffix("/**")
        && !prefix.is_empty()
    {
        return Some(format!(
            "`**` is not a globstar in OpenCode: {} matches `{prefix}/` and everything below, but not `{prefix}` itself (`*` already crosses `/`)",
            serde_json::to_string(pattern).unwrap_or_default()
        ));
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
    let mut seen = HashSet::new();
    for agent in &ctx.project.agents {
        for (i, r) in agent.rules.iter().enumerate() {
            let Some(loc) = r.loc else { continue };
            if !seen.insert((loc, r.permission.clone(), r.pattern.clone())) {
                continue;
            }
            if let Some(message) = diagnose(&r.permission, &r.pattern, ctx) {
                out.push(Finding {
                    id: CHECK.id,
                    level: CHECK.level,
                    agent: Some(agent.name.clone()),
                    rule: Some(i),
                    loc: Some(loc),
                    message,
                    related: Vec::new(),
                    witnesses: Vec::new(),
                    help: None,
                });
            }
        }
    }
}
