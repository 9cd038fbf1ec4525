//! `env-injection` (warning)
//!
//! ## What it finds
//! An `{env:VAR}` token inside a `permission` or `tools` object of a JSON config (a key, a
//! value, even a comment there), or anywhere else in a config when the text it stands for
//! produced a permission rule.
//!
//! ## Why it matters
//! OpenCode replaces `{env:VAR}` in the raw config text before parsing it, with no escaping
//! (spec §6). The variable's value is pasted in as JSON, so whoever sets the variable
//! writes permission rules: with `ACT='deny", "bash": "allow'`, the value
//! `"edit": "{env:ACT}"` also adds `bash * allow`. A `//` comment does not protect the token
//! either: a value holding a newline ends the comment. An unset variable becomes `""`,
//! which OpenCode refuses as an action, so the same config starts or refuses to start
//! depending on the shell it runs in.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"{env:SAFE_CMD}": "allow"}, "edit": "{env:EDIT_MODE}"}}
//! ```
//!
//! ## How to fix
//! Write permission keys and actions literally. If machines need different permissions,
//! give each its own config file (`OPENCODE_CONFIG` names one) instead of variables inside
//! one file.

use super::{Check, Ctx, Finding, Level, describe};
use crate::source::Loc;

pub const CHECK: Check = Check {
    id: "env-injection",
    level: Level::Warning,
    summary: "an `{env:VAR}` inside permission config: its raw value becomes JSON, so the variable can write rules",
    docs: include_str!("env_injection.rs"),
};

fn within(inner: Loc, outer: Loc) -> bool {
    inner.source == outer.source
        && outer.span.start <= inner.span.start
        && inner.span.end <= outer.span.end
}

/// Do two places share a byte? An empty span (a rule written entirely by a substituted
/// value maps to the token's start) counts as the byte at its start.
fn overlaps(a: Loc, b: Loc) -> bool {
    let end = |l: Loc| l.span.end.max(l.span.start + 1);
    a.source == b.source && a.span.start < end(b) && b.span.start < end(a)
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let audit = &ctx.project.loaded.audit;
    for (tok, text) in &audit.substitutions {
        let Some(var) = text.strip_prefix("{env:").and_then(|t| t.strip_suffix('}')) else {
            continue;
        };
        // Rules whose written place maps into the token: the value wrote them.
        let mut made: Vec<&crate::model::Rule> = Vec::new();
        for r in ctx.agents.iter().flat_map(|a| &a.rules) {
            if r.loc.is_some_and(|l| overlaps(l, *tok)) && !made.contains(&r) {
                made.push(r);
            }
        }
        let objects = audit
            .permission_objects
            .iter()
            .chain(&audit.pattern_objects);
        let inside = objects
            .chain(&audit.tools_objects)
            .any(|o| within(*tok, *o));
        if !inside && made.is_empty() {
            continue;
        }
        let now = match made.as_slice() {
            [] => String::new(),
            rules => format!(
                "; its current value wrote the rule{} {}",
                if rules.len() > 1 { "s" } else { "" },
                rules
                    .iter()
                    .take(3)
                    .map(|r| describe(r))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if rules.len() > 3 { ", …" } else { "" }
            ),
        };
        let message = format!(
            "`{text}` in permission config: OpenCode pastes ${var}'s raw value into the JSON text before parsing, so whoever sets it can add or change permission rules{now}"
        );
        out.push(Finding::at(&CHECK, Some(*tok), message).with_help(
            "write the permission literally; use a separate config file (OPENCODE_CONFIG) per machine instead".into(),
        ));
    }
}
