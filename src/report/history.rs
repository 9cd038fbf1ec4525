//! `permaudit history`: the summaries a person reads first, then every call with its checks
//! (human), or JSON version 1: `{version, database, summary, calls: [{session, parent,
//! call, agent, tool, time, input, then, now, unknown, checks: [{permission, input, now,
//! rule: {permission, pattern, action, layer, source} | null}]}]}`. With `redact`, inputs
//! show command names only and paths are hidden (`history::redact_*`); rules, which come
//! from the config and not from the history, are shown as written.

use super::{Style, clean, source_json};
use crate::history::{self, Judged, Now, Summary};
use crate::project::Project;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One call with the project it was decided under (`None`: not decided).
pub struct Row<'a> {
    pub judged: &'a Judged,
    pub project: Option<&'a Project>,
}

fn input_shown(permission: &str, input: &str, redact: bool) -> String {
    if redact {
        history::redact_input(permission, input)
    } else {
        input.to_string()
    }
}

fn rule_json(row: &Row<'_>, rule: Option<usize>) -> Value {
    let (Some(p), Some(i)) = (row.project, rule) else {
        return Value::Null;
    };
    let Some(r) = row
        .judged
        .call
        .agent
        .as_deref()
        .and_then(|a| p.agent(a))
        .and_then(|a| a.rules.get(i))
    else {
        return Value::Null;
    };
    json!({
        "permission": r.permission,
        "pattern": r.pattern,
        "action": r.action.to_json(),
        "layer": r.layer.as_str(),
        "source": source_json(&p.loaded.sources, r.loc),
        "builtin": r.builtin,
    })
}

/// The JSON report (version 1), serialized one call at a time: a history of 100,000
/// calls is never held as one JSON value.
pub struct Json<'a> {
    pub rows: &'a [Row<'a>],
    pub summary: &'a Summary,
    pub database: &'a str,
    pub redact: bool,
}

impl serde::Serialize for Json<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("version", &1)?;
        m.serialize_entry("database", if self.redact { "…" } else { self.database })?;
        m.serialize_entry(
            "summary",
            &summary_json(self.rows, self.summary, self.redact),
        )?;
        m.serialize_entry("calls", &Calls(self))?;
        m.end()
    }
}

struct Calls<'a>(&'a Json<'a>);

impl serde::Serialize for Calls<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.rows.len()))?;
        for row in self.0.rows {
            seq.serialize_element(&call_json(row, self.0.redact))?;
        }
        seq.end()
    }
}

/// One call's JSON object.
fn call_json(row: &Row<'_>, redact: bool) -> Value {
    let c = &row.judged.call;
    let (now, unknown, checks) = match &row.judged.now {
        Now::Decided { now, checks } => (
            json!(now),
            Value::Null,
            checks
                .iter()
                .map(|k| {
                    json!({
                        "permission": k.permission,
                        "input": input_shown(&k.permission, &k.input, redact),
                        "now": k.now,
                        "always": if redact { None } else { k.always.as_deref() },
                        "rule": rule_json(row, k.rule),
                    })
                })
                .collect(),
        ),
        Now::Unknown(why) => (Value::Null, json!(why), Vec::new()),
    };
    json!({
        "session": c.session,
        "parent": c.parent,
        "call": c.call,
        "agent": c.agent,
        "tool": c.tool,
        "time": c.time,
        "directory": if redact { json!("…") } else { json!(c.directory) },
        "input": if redact { history::redact_args(&c.tool, &c.input) } else { c.input.clone() },
        "then": c.then,
        "now": now,
        "unknown": unknown,
        "checks": checks,
    })
}

/// The summary's JSON object.
fn summary_json(rows: &[Row<'_>], summary: &Summary, redact: bool) -> Value {
    let most = |v: &[(String, String, usize)]| -> Vec<Value> {
        v.iter()
            .map(|(p, k, n)| {
                json!({"permission": p, "input": input_shown(p, k, redact), "calls": n})
            })
            .collect()
    };
    let ids = |v: &[usize]| -> Vec<Value> {
        v.iter()
            .filter_map(|&i| rows.get(i))
            .map(|r| json!({"session": r.judged.call.session, "call": r.judged.call.call}))
            .collect()
    };
    let then: serde_json::Map<String, Value> = summary
        .then
        .iter()
        .map(|(t, n)| (t.as_str().to_string(), json!(n)))
        .collect();
    json!({
        "calls": summary.calls,
        "sessions": summary.sessions,
        "then": then,
        "unknown": summary.unknown,
        "ran_now_denied": ids(&summary.ran_now_denied),
        "ran_risky": summary.ran_risky.iter().filter_map(|k| {
            rows.get(k.call).map(|r| json!({
                "session": r.judged.call.session,
                "call": r.judged.call.call,
                "finding": k.finding,
                "message": k.message,
                "rule": rule_json(r, Some(k.rule)),
            }))
        }).collect::<Vec<Value>>(),
        "refused_now_allowed": ids(&summary.refused_now_allowed),
        "asked_most": most(&summary.asked_most),
        "denied_most": most(&summary.denied_most),
    })
}

/// `permission "pattern" action  [layer] file:line:col` of the rule deciding a check, or
/// the default ask.
fn rule_human(row: &Row<'_>, rule: Option<usize>) -> String {
    let (Some(p), Some(i)) = (row.project, rule) else {
        return "no rule matches (the default: ask)".to_string();
    };
    match row.judged.call.agent.as_deref().and_then(|a| p.agent(a)) {
        Some(a) => super::explain::describe_rule(p, a, i),
        None => String::new(),
    }
}

/// The arguments of a tool whose checks are not modelled, cut to a line's length.
fn shorten(s: &str) -> String {
    const MAX: usize = 120;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// One call's line: `TIME  SESSION  AGENT TOOL "INPUT"`.
fn call_line(row: &Row<'_>, redact: bool) -> String {
    let c = &row.judged.call;
    let shown = match history::asked(&c.tool, &c.input, &c.directory) {
        Some(a) => input_shown(&a.permission, &a.input, redact),
        None if redact => "…".to_string(),
        None => shorten(&c.input.to_string()),
    };
    format!(
        "{}  {}  {} {} {}",
        history::utc(c.time),
        clean(&c.session),
        clean(c.agent.as_deref().unwrap_or("?")),
        clean(&c.tool),
        serde_json::to_string(&shown).unwrap_or_default()
    )
}

/// The human report: summaries first, then every call with its checks.
pub fn human(
    rows: &[Row<'_>],
    summary: &Summary,
    database: &str,
    redact: bool,
    style: Style,
) -> String {
    let mut out = String::new();
    let then: Vec<String> = summary
        .then
        .iter()
        .map(|(t, n)| format!("{n} {}", t.as_str()))
        .collect();
    out.push_str(&format!(
        "{} tool call{} in {} session{} ({}), from {}\n",
        summary.calls,
        if summary.calls == 1 { "" } else { "s" },
        summary.sessions,
        if summary.sessions == 1 { "" } else { "s" },
        if then.is_empty() {
            "none".to_string()
        } else {
            then.join(", ")
        },
        if redact { "…" } else { database },
    ));
    out.push_str(&style.dim(
        "each decided today for the agent that made it; asks and their answers are not stored, so a call that ran may have asked\n",
    ));
    let list = |out: &mut String, title: &str, idx: &[usize]| {
        if idx.is_empty() {
            return;
        }
        out.push_str(&format!("\n{} ({})\n", style.bold(title), idx.len()));
        for &i in idx {
            let Some(row) = rows.get(i) else { continue };
            let why = match &row.judged.now {
                Now::Decided { checks, now } => checks
                    .iter()
                    .find(|k| k.now == *now)
                    .map(|k| {
                        format!(
                            "{} {}: {}",
                            clean(&k.permission),
                            serde_json::to_string(&input_shown(&k.permission, &k.input, redact))
                                .unwrap_or_default(),
                            rule_human(row, k.rule)
                        )
                    })
                    .unwrap_or_default(),
                Now::Unknown(_) => String::new(),
            };
            out.push_str(&format!("  {}\n      {}\n", call_line(row, redact), why));
        }
    };
    list(&mut out, "Ran then, denied today", &summary.ran_now_denied);
    if !summary.ran_risky.is_empty() {
        out.push_str(&format!(
            "\n{} ({})\n",
            style.bold("Ran, allowed today without asking by a rule `check` reports"),
            summary.ran_risky.len()
        ));
        for k in &summary.ran_risky {
            let Some(row) = rows.get(k.call) else {
                continue;
            };
            out.push_str(&format!(
                "  {}\n      {}\n      {}: {}\n",
                call_line(row, redact),
                rule_human(row, Some(k.rule)),
                k.finding,
                clean(&k.message)
            ));
        }
    }
    list(
        &mut out,
        "Denied or rejected then, allowed today without asking",
        &summary.refused_now_allowed,
    );
    let most = |out: &mut String, title: &str, v: &[(String, String, usize)]| {
        if v.is_empty() {
            return;
        }
        out.push_str(&format!("\n{}\n", style.bold(title)));
        for (p, k, n) in v {
            out.push_str(&format!(
                "  {n:>4}  {} {}\n",
                clean(p),
                serde_json::to_string(&input_shown(p, k, redact)).unwrap_or_default()
            ));
        }
    };
    most(&mut out, "Asked most today (calls)", &summary.asked_most);
    most(&mut out, "Denied most today (calls)", &summary.denied_most);
    if !rows.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("Calls")));
    }
    for row in rows {
        let c = &row.judged.call;
        let now = match row.judged.now.effect() {
            Some(e) => style.paint_action(&e.to_string()),
            None => "unknown".to_string(),
        };
        out.push_str(&format!(
            "  {}  then {}, now {now}\n",
            call_line(row, redact),
            c.then.as_str()
        ));
        match &row.judged.now {
            Now::Decided { checks, .. } => {
                for k in checks {
                    out.push_str(&format!(
                        "      {}{}  {} {}  {}\n",
                        style.paint_action(&k.now.to_string()),
                        " ".repeat(5 - k.now.to_string().len()),
                        clean(&k.permission),
                        serde_json::to_string(&input_shown(&k.permission, &k.input, redact))
                            .unwrap_or_default(),
                        rule_human(row, k.rule)
                    ));
                }
            }
            Now::Unknown(why) => out.push_str(&format!("      {}\n", clean(why))),
        }
    }
    out
}

/// `permaudit diff --history`: the recorded calls a change decides differently, with both
/// sides' projects.
pub struct ReplayView<'a> {
    pub database: &'a str,
    /// Calls of sessions started in the compared directory, decided on both sides.
    pub decided: usize,
    /// Calls of sessions started in other directories of the project: left out.
    pub elsewhere: usize,
    pub changed: &'a [history::Replayed],
    /// The two sides compared, as the diff names them.
    pub sides: &'a super::diff::Sides<'a>,
}

/// Each shift in the order a person reads them: what breaks first.
const SHIFTS: [(history::Shift, &str); 4] = [
    (history::Shift::NowDenied, "would now be denied"),
    (history::Shift::NowAsks, "would now ask"),
    (history::Shift::NowAllowed, "would now run without asking"),
    (
        history::Shift::NowAsksNotDenied,
        "would now ask instead of being denied",
    ),
];

/// The checks of a replayed call paired by (permission, input), head's order first: for
/// each, its decision and rule on the base side and on the head side.
type Paired<'c> = (
    &'c str,
    &'c str,
    Option<&'c history::Check>,
    Option<&'c history::Check>,
);

fn paired(r: &history::Replayed) -> Vec<Paired<'_>> {
    fn of(n: &Now) -> &[history::Check] {
        match n {
            Now::Decided { checks, .. } => checks,
            Now::Unknown(_) => &[],
        }
    }
    let (base, head) = (of(&r.base), of(&r.head));
    let mut out: Vec<Paired<'_>> = Vec::new();
    for k in head.iter().chain(base) {
        if out
            .iter()
            .any(|(p, i, _, _)| *p == k.permission && *i == k.input)
        {
            continue;
        }
        let same = |x: &&history::Check| x.permission == k.permission && x.input == k.input;
        out.push((
            k.permission.as_str(),
            k.input.as_str(),
            base.iter().find(same),
            head.iter().find(same),
        ));
    }
    out
}

/// The JSON object `diff --format json` carries under `history`: `{database, decided,
/// elsewhere, counts: {now_denied, now_asks, now_allowed, now_asks_not_denied}, changed:
/// [{session, call, agent, tool, time, input, then, base, head, shift, checks:
/// [{permission, input, base, head, base_rule, head_rule}]}]}`.
pub fn replay_json(v: &ReplayView<'_>) -> Value {
    // A check's deciding rule on one side, named as the diff names it (`HEAD:opencode.json`);
    // null when the side does not ask the check.
    let rule = |head: bool, r: &history::Replayed, k: Option<&history::Check>| -> Value {
        match (k, r.call.agent.as_deref()) {
            (Some(k), Some(agent)) => v.sides.rule_json(head, agent, k.rule),
            _ => Value::Null,
        }
    };
    let mut counts = serde_json::Map::new();
    for (s, _) in SHIFTS {
        let n = v.changed.iter().filter(|r| r.shift() == Some(s)).count();
        counts.insert(s.as_str().into(), json!(n));
    }
    let changed: Vec<Value> = v
        .changed
        .iter()
        .map(|r| {
            let c = &r.call;
            let checks: Vec<Value> = paired(r)
                .into_iter()
                .map(|(p, i, b, h)| {
                    json!({
                        "permission": p,
                        "input": i,
                        "base": b.map(|k| k.now),
                        "head": h.map(|k| k.now),
                        "base_rule": rule(false, r, b),
                        "head_rule": rule(true, r, h),
                    })
                })
                .collect();
            json!({
                "session": c.session,
                "call": c.call,
                "agent": c.agent,
                "tool": c.tool,
                "time": c.time,
                "input": c.input,
                "then": c.then,
                "base": r.base.effect(),
                "head": r.head.effect(),
                "shift": r.shift(),
                "checks": checks,
            })
        })
        .collect();
    json!({
        "database": v.database,
        "decided": v.decided,
        "elsewhere": v.elsewhere,
        "counts": counts,
        "changed": changed,
    })
}

/// How many lines of each shift the human report prints (grouped by agent and the check
/// that moved); the JSON has every call.
const SHOWN: usize = 20;

/// The human section `diff --history` prints after the diff: per shift, the calls grouped
/// by agent and the first check that moved, with how they went then and the rule that
/// decides them on each side.
pub fn replay_human(v: &ReplayView<'_>, style: Style) -> String {
    let mut out = format!(
        "\n{} ({} call{} of sessions started here, in {})\n",
        style.bold("Recorded calls the change decides differently"),
        v.decided,
        if v.decided == 1 { "" } else { "s" },
        v.database,
    );
    if v.elsewhere > 0 {
        out.push_str(&style.dim(&format!(
            "{} call{} of sessions started in other directories of the project left out (run diff there)\n",
            v.elsewhere,
            if v.elsewhere == 1 { "" } else { "s" }
        )));
    }
    if v.changed.is_empty() {
        out.push_str("  none: every recorded call is decided as before\n");
        return out;
    }
    for (shift, title) in SHIFTS {
        // (agent, permission, input) → (calls, then tally, base check, head check).
        type Group<'r> = (
            usize,
            BTreeMap<&'static str, usize>,
            Option<&'r history::Check>,
            Option<&'r history::Check>,
        );
        let mut groups: Vec<((String, String, String), Group<'_>)> = Vec::new();
        let mut total = 0;
        for r in v.changed.iter().filter(|r| r.shift() == Some(shift)) {
            total += 1;
            let pairs = paired(r);
            // The check that moved the call: the first whose decision on the head side is
            // the call's, and differs from the base side's.
            let head_now = r.head.effect();
            let moved = pairs
                .iter()
                .find(|(_, _, b, h)| {
                    h.map(|k| k.now) == head_now && b.map(|k| k.now) != h.map(|k| k.now)
                })
                .or_else(|| {
                    pairs
                        .iter()
                        .find(|(_, _, b, h)| b.map(|k| k.now) != h.map(|k| k.now))
                })
                .copied();
            let (perm, input, b, h) = moved.unwrap_or(("", "", None, None));
            let key = (
                r.call.agent.clone().unwrap_or_default(),
                perm.to_string(),
                input.to_string(),
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => {
                    g.0 += 1;
                    *g.1.entry(r.call.then.as_str()).or_default() += 1;
                }
                None => {
                    let mut then = BTreeMap::new();
                    then.insert(r.call.then.as_str(), 1);
                    groups.push((key, (1, then, b, h)));
                }
            }
        }
        if total == 0 {
            continue;
        }
        out.push_str(&format!(
            "\n  {} ({} call{})\n",
            style.bold(title),
            total,
            if total == 1 { "" } else { "s" }
        ));
        // Most calls first; ties in the order the calls were made.
        groups.sort_by_key(|(_, g)| std::cmp::Reverse(g.0));
        for ((agent, perm, input), (n, then, b, h)) in groups.iter().take(SHOWN) {
            let then: Vec<String> = then.iter().map(|(t, n)| format!("{n} {t}")).collect();
            let side = |head: bool, k: &Option<&history::Check>| -> String {
                match k {
                    Some(k) => format!(
                        "{} by {}",
                        style.paint_action(&k.now.to_string()),
                        v.sides.rule_text(head, agent, k.rule)
                    ),
                    None => "not asked".to_string(),
                }
            };
            out.push_str(&format!(
                "    {}: {} {}  ({} call{}: {})\n      before: {}\n      now:    {}\n",
                clean(agent),
                clean(perm),
                serde_json::to_string(input).unwrap_or_default(),
                n,
                if *n == 1 { "" } else { "s" },
                then.join(", "),
                side(false, b),
                side(true, h),
            ));
        }
        if groups.len() > SHOWN {
            out.push_str(&style.dim(&format!(
                "    … and {} more (--format json lists every call)\n",
                groups.len() - SHOWN
            )));
        }
    }
    out
}
