//! `correlated-rules` (warning for commands that end in allow; info otherwise, and for an
//! ask that leaves the program open beside a later allow of one named program)
//!
//! ## What it finds
//! A deny or ask, and a later, looser rule that share some inputs while **neither contains
//! the other**: the *correlation* class of the overlap analysis (Al-Shaer & Hamed, adapted
//! to OpenCode's last-match-wins). Some inputs the earlier rule was written for are
//! decided by the later one. Reported with both rules and an input each way, only when
//! the input is one a person would take for a real one.
//!
//! The other classes:
//! - the later rule lies **inside** the earlier one (`"*": "deny"` then `"git diff*":
//!   "allow"`; `"*.env*": "deny"` then `".env.example": "allow"`): an *exception*, the
//!   intended idiom. Never reported.
//! - the later rules take **all** of it: *shadowing*, reported as `shadowed-deny`,
//!   `shadowed-ask`, `dead-rule` or `overridden-by-later-layer`.
//!
//! ## Why it matters
//! The later rule was probably written for other inputs, and reaches into the earlier
//! rule's by accident: `rm -rf / --help` is allowed by a `* --help` allow written for help
//! pages, although `rm *` is denied.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"rm *": "deny", "* --help": "allow"}}}
//! ```
//! `rm -rf build --help` matches both and is allowed; `rm -rf build` is still denied.
//!
//! ## How to fix
//! Move the deny after the later rule if it must always hold, or narrow the later rule.

use super::{Check, Ctx, Finding, Level, Witness, describe};
use crate::agents::Agent;
use crate::model::Effect;

pub const CHECK: Check = Check {
    id: "correlated-rules",
    level: Level::Warning,
    summary: "a deny or ask that a later, looser rule partly overrides without lying inside it",
    docs: include_str!("correlated_rules.rs"),
};

/// The finding for rule `i`: `theirs` matches it and is decided looser by a later rule,
/// `mine` is an input the rule itself still decides.
pub fn finding(
    ctx: &Ctx<'_>,
    agent: &Agent,
    i: usize,
    mine: Option<Witness>,
    theirs: Witness,
) -> Finding {
    let r = &agent.rules[i];
    // The input the rule still decides is shown only if OpenCode can be asked it: a bash
    // input the bash tool asks about as one command (`declare` is asked about as nothing,
    // `echo ${` as `echo`; tests/witness.rs holds every witness to that).
    let mine = mine.filter(|m| m.permission != "bash" || asked_as_one(ctx, &m.input));
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let d = theirs.rule.and_then(|k| agent.rules.get(k));
    let mut related = Vec::new();
    if let Some(l) = d.and_then(|d| d.loc) {
        related.push((
            l,
            format!("also matches {} → {}", q(&theirs.input), theirs.action),
        ));
    }
    let other_way = mine
        .as_ref()
        .map(|m| {
            format!(
                "; {} {} is still {}",
                m.permission,
                q(&m.input),
                verb(m.action)
            )
        })
        .unwrap_or_default();
    // Paths correlate mostly by accident of spelling (`*id_rsa*` and `*.tfvars.example`
    // share `id_rsa.tfvars.example`, a file nobody has): info. Commands correlate by
    // meaning (`* --force*` and `git push *`): a warning when the deny or ask ends in allow.
    // An ask that leaves the program open (`* install *`) beside a later allow of one
    // named program (`curl *`): the allow is the more specific word about what runs, and
    // `curl install` allowed is what its author wrote it for: info. A deny keeps its
    // warning (`* --force*` deny, `git push *` allow: the force push was meant to stop).
    // Severity rule (docs/checks.md): the rule takes effect on its other inputs, so
    // clause 1 does not apply; a note where the inputs lost are an accident of spelling or
    // the allow the author wrote on purpose (clause 3).
    let program_allowed = r.action.effective() == Effect::Ask
        && open_program(&r.pattern)
        && d.is_some_and(|d| names_program(&d.pattern));
    let level = if theirs.action == Effect::Allow && theirs.permission == "bash" && !program_allowed
    {
        Level::Warning
    } else {
        Level::Info
    };
    let message = format!(
        "this {} is partly overridden by {} at {}, which does not lie inside it: {} {} matches both and is {}{other_way}",
        r.action,
        d.map(describe).unwrap_or_default(),
        d.map(|d| ctx.place(d)).unwrap_or_default(),
        theirs.permission,
        q(&theirs.input),
        verb(theirs.action),
    );
    let help: String = "if the later rule is an intended exception, narrow it to lie inside this one; otherwise put this rule after it".into();
    Finding::at_rule(&CHECK, agent, i, message)
        .with_level(level)
        .with_related(related)
        .with_witnesses(mine.into_iter().chain([theirs]).collect())
        .with_help(help)
}

/// Does the bash tool ask about `command` as exactly that one command?
fn asked_as_one(ctx: &Ctx<'_>, command: &str) -> bool {
    let parts = ctx.splitter().parts(command);
    matches!(parts.as_slice(), [p] if p.asked() && p.text == command)
}

/// A command pattern whose program is left open: its first word starts with a wildcard.
fn open_program(pattern: &str) -> bool {
    pattern.trim_start().starts_with(['*', '?'])
}

/// A command pattern that names its program: a first word with no wildcard.
fn names_program(pattern: &str) -> bool {
    let first = pattern.split_whitespace().next().unwrap_or("");
    !first.is_empty() && !first.contains(['*', '?'])
}

fn verb(e: Effect) -> &'static str {
    match e {
        Effect::Allow => "allowed",
        Effect::Ask => "asked",
        Effect::Deny => "denied",
    }
}
