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
