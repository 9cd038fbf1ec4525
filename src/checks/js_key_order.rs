//! `js-key-order` (warning)
//!
//! ## What it finds
//! A `permission` object or pattern object whose rules OpenCode applies in another order
//! than they are written, when that changes a decision. Two JavaScript rules reorder an
//! object (spec §3.4, §3.5):
//! - a key written twice keeps the position of its **first** occurrence and takes its
//!   **last** value (the earlier value is discarded);
//! - keys that are canonical array indices (`"0"`, `"5"`, `"12"`, but not `"01"` or `"-1"`)
//!   come **first**, in ascending order, wherever they are written.
//!
//! It is reported only with a witness: an input whose decision under the written order
//! differs from OpenCode's.
//!
//! ## Why it matters
//! Rule order is semantics (the last matching rule wins), and the file no longer shows it.
//! `{"*": "allow", "5": "deny"}` denies nothing: `"5"` runs before `"*"`.
//!
//! ## Example
//! ```json
//! {"permission": {"glob": {"*": "allow", "5": "deny"},
//!                 "bash": {"*": "deny", "git *": "allow", "*": "ask"}}}
//! ```
//! `glob "5"` is allowed; `bash "git status"` is allowed although the last line says ask.
//!
//! ## How to fix
//! Write each key once, and put integer-like keys first, in ascending order (where
//! JavaScript puts them), so that the file reads in the order OpenCode applies it.
//!
//! Only JSON configs are examined (not `OPENCODE_PERMISSION` or markdown frontmatter), and
//! an object whose rules other files interleave (the same permission key merged from
//! several files) is left alone.

use super::{Check, Ctx, Finding, Level, Quick, TailMemo, describe};
use crate::agents::{Agent, expand};
use crate::glob::Wildcard;
use crate::glob::analysis::Input;
use crate::glob::automaton::{Outcome, Word, shortest_member};
use crate::model::{Action, Form, Rule};
use crate::source::Loc;
use crate::syntax::jsonc::{WrittenObject, WrittenProp};
use crate::syntax::value::{Value, is_array_index};
use std::collections::HashMap;

pub const CHECK: Check = Check {
    id: "js-key-order",
    level: Level::Warning,
    summary: "duplicate or integer-like keys make OpenCode apply rules in another order than written, changing a decision",
    docs: include_str!("js_key_order.rs"),
};

/// Most candidate inputs tried per object and agent.
const MAX_CANDIDATES: usize = 4096;

fn inside(l: Loc, outer_source: crate::source::SourceId, start: usize, end: usize) -> bool {
    l.source == outer_source && start <= l.span.start && l.span.start < end.max(start + 1)
}

/// What JavaScript does to this object, in words.
fn quirks(ctx: &Ctx<'_>, obj: &WrittenObject) -> String {
    let pos = |l: Loc| {
        let p = ctx.project.loaded.sources.position(l);
        format!("{}:{}", p.line, p.column)
    };
    let mut out = Vec::new();
    let mut seen_plain = false;
    let mut last_index: Option<u32> = None;
    let mut count: HashMap<&str, Vec<Loc>> = HashMap::new();
    for p in &obj.props {
        count.entry(&p.key).or_default().push(p.key_loc);
    }
    for p in &obj.props {
        let dups = &count[p.key.as_str()];
        if dups.len() > 1 && dups[0] == p.key_loc {
            out.push(format!(
                "key {} is written {} times: JavaScript keeps its first position ({}) with its last value ({})",
                serde_json::to_string(&p.key).unwrap_or_default(),
                dups.len(),
                pos(dups[0]),
                pos(dups[dups.len() - 1])
            ));
        }
        match is_array_index(&p.key) {
            Some(n) if seen_plain || last_index.is_some_and(|m| m > n) => {
                if dups[0] == p.key_loc {
                    out.push(format!(
                        "integer-like key {} is moved ahead of the other keys (JavaScript lists array indices first, ascending)",
                        serde_json::to_string(&p.key).unwrap_or_default()
                    ));
                }
                last_index = Some(n);
            }
            Some(n) => last_index = Some(n),
            None => seen_plain = true,
        }
    }
    out.truncate(3);
    out.join("; ")
}

/// The rules a discarded (earlier duplicate) property would have produced.
fn discarded_rules(p: &WrittenProp, is_map: bool, template: &Rule, home: &str) -> Vec<Rule> {
    let action = |v: &Value| v.as_str().and_then(Action::parse);
    let rule = |permission: &str, pattern: String, action: Action, form: Form, loc: Loc| Rule {
        permission: permission.to_string(),
        pattern,
        action,
        form,
        layer: template.layer,
        loc: Some(loc),
        builtin: None,
    };
    if !is_map {
        return action(&p.value.value)
            .map(|a| {
                rule(
                    &template.permission,
                    expand(&p.key, home),
                    a,
                    Form::Object,
                    p.key_loc,
                )
            })
            .into_iter()
            .collect();
    }
    match &p.value.value {
        Value::String(_) => action(&p.value.value)
            .map(|a| rule(&p.key, "*".to_string(), a, Form::String, p.key_loc))
            .into_iter()
            .collect(),
        Value::Object(pats) => pats
            .iter()
            .filter_map(|(pat, v)| {
                let a = action(&v.value)?;
                Some(rule(
                    &p.key,
                    expand(pat, home),
                    a,
                    Form::Object,
                    v.key.unwrap_or(v.loc),
                ))
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn shortest(glob: &str) -> Option<String> {
    shortest_member(&Wildcard::compile(glob)).to_exact_string()
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let audit = &ctx.project.loaded.audit;
    let home = ctx.project.loaded.paths().home.display().to_string();
    for obj in &audit.reordered {
        let is_map = audit.permission_objects.contains(&obj.loc);
        let what = quirks(ctx, obj);
        let mut memo = TailMemo::default();
        for (ai, agent) in ctx.agents.iter().enumerate() {
            let (src, start, end) = (obj.loc.source, obj.loc.span.start, obj.loc.span.end);
            let idx: Vec<usize> = (0..agent.rules.len())
                .filter(|&i| {
                    agent.rules[i]
                        .loc
                        .is_some_and(|l| inside(l, src, start, end))
                })
                .collect();
            let (Some(&lo), Some(&hi)) = (idx.first(), idx.last()) else {
                continue;
            };
            if hi - lo + 1 != idx.len() {
                continue; // rules of other files interleave: not this object's order alone
            }
            memo.run(ctx, ai, lo, out, || {
                analyse(ctx, ai, agent, obj, is_map, (lo, hi), &home, &what)
                    .into_iter()
                    .collect()
            });
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn analyse(
    ctx: &Ctx<'_>,
    ai: usize,
    agent: &Agent,
    obj: &WrittenObject,
    is_map: bool,
    (lo, hi): (usize, usize),
    home: &str,
    what: &str,
) -> Option<Finding> {
    let block = &agent.rules[lo..=hi];
    // The rules in written order: each property where it is written, a duplicate key at
    // each of its places (its earlier values as the rules they would have made).
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (k, p) in obj.props.iter().enumerate() {
        last.insert(&p.key, k);
    }
    let mut written: Vec<Rule> = Vec::new();
    for (k, p) in obj.props.iter().enumerate() {
        if last[p.key.as_str()] == k {
            let (s, e) = (p.key_loc.span.start, p.value.loc.span.end);
            written.extend(
                block
                    .iter()
                    .filter(|r| r.loc.is_some_and(|l| inside(l, obj.loc.source, s, e)))
                    .cloned(),
            );
        } else {
            written.extend(discarded_rules(p, is_map, &block[0], home));
        }
    }
    let same = |a: &Rule, b: &Rule| {
        a.permission == b.permission && a.pattern == b.pattern && a.action == b.action
    };
    if written.len() == block.len() && written.iter().zip(block).all(|(a, b)| same(a, b)) {
        return None;
    }
    let rules = &agent.rules;
    let cf: Vec<Rule> = rules[..lo]
        .iter()
        .chain(&written)
        .chain(&rules[hi + 1..])
        .cloned()
        .collect();
    let cf_quick = Quick::new(&cf, ctx.project.platform);

    // Candidate inputs: where two reordered rules meet (exact, from the automata), then
    // shortest members of every rule involved.
    let mut candidates: Vec<Input> = Vec::new();
    // Each block rule's place in the written order, found once (not once per pair: a
    // block of a few hundred rules made this search cubic).
    let position: Vec<Option<usize>> = block
        .iter()
        .map(|r| written.iter().position(|w| w.loc == r.loc))
        .collect();
    'pairs: for a in lo..=hi {
        for b in a + 1..=hi {
            if candidates.len() >= MAX_CANDIDATES / 2 {
                break 'pairs;
            }
            let (pa, pb) = (position[a - lo], position[b - lo]);
            let swapped =
                matches!((pa, pb), (Some(x), Some(y)) if x > y) || pa.is_none() || pb.is_none();
            if swapped
                && rules[a].action.effective() != rules[b].action.effective()
                && let Outcome::Witness(input) = ctx.intersection(ai, a, b)
            {
                candidates.push(input);
            }
        }
    }
    let involved = block.iter().chain(&written);
    let perms: Vec<String> = dedup(involved.clone().filter_map(|r| shortest(&r.permission)));
    let subjects: Vec<String> = dedup(
        involved
            .filter_map(|r| shortest(&r.pattern))
            .chain(["x".to_string()]),
    );
    for p in &perms {
        for s in &subjects {
            if candidates.len() >= MAX_CANDIDATES {
                break;
            }
            candidates.push(Input::new(p, s));
        }
    }

    for input in candidates {
        let Some(w) = ctx.witness(agent, &input) else {
            continue;
        };
        let (perm, subj) = (
            Word::from(w.permission.as_str()),
            Word::from(w.input.as_str()),
        );
        let cf_rule = cf_quick.decide(&perm, &subj);
        let cf_action = cf_rule.map_or(crate::model::Effect::Ask, |k| cf[k].action.effective());
        if cf_action == w.action {
            continue;
        }
        let actual = w.rule.map(|k| &rules[k]);
        let expected = cf_rule.map(|k| &cf[k]);
        let name = |r: Option<&Rule>| match r {
            Some(r) => format!("{} at {}", describe(r), ctx.place(r)),
            None => "OpenCode's default".to_string(),
        };
        let (primary, other) = match (expected.and_then(|r| r.loc), actual.and_then(|r| r.loc)) {
            (Some(e), a) if inside(e, obj.loc.source, obj.loc.span.start, obj.loc.span.end) => {
                (e, a)
            }
            (e, Some(a)) => (a, e),
            (e, None) => (e.unwrap_or(obj.loc), None),
        };
        let input = serde_json::to_string(&w.input).unwrap_or_default();
        let mut related: Vec<(Loc, String)> = Vec::new();
        if let Some(o) = other.filter(|o| *o != primary) {
            related.push((o, format!("decides {input} instead")));
        }
        let message = format!(
            "OpenCode applies this object in another order than written ({what}): e.g. {} {input} is decided by {} → {}, but in the written order by {} → {}",
            w.permission,
            name(actual),
            w.action,
            name(expected),
            cf_action
        );
        return Some(
            Finding::at(&CHECK, Some(primary), message)
                .with_agent(agent.name.clone(), w.rule)
                .with_related(related)
                .with_witnesses(vec![w])
                .with_help(
                    "write each key once, and integer-like keys first in ascending order, so the file reads in the order OpenCode applies it"
                        .into(),
                ),
        );
    }
    None
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in items {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}
