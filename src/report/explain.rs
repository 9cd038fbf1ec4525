//! `permaudit explain`: one decision per input, in the spirit of `git check-ignore -v`.
//!
//! JSON Lines contract, version 1: one object per input with `agent`, `permission`, `input`,
//! `action` (allow|ask|deny), `rule` (index into the agent's rules, or null), `layer`,
//! `source`, and `overridden` (indices of earlier matching rules).

use super::{Style, source_json};
use crate::model::agents::{Agent, Decision};
use crate::project::Project;
use serde_json::json;

pub fn json(
    p: &Project,
    a: &Agent,
    permission: &str,
    input: &str,
    d: &Decision,
) -> serde_json::Value {
    let rule = d.rule.map(|i| &a.rules[i]);
    json!({
        "version": 1,
        "agent": a.name,
        "permission": permission,
        "input": input,
        "action": d.effect,
        "rule": d.rule,
        "configured_action": rule.map(|r| r.action.to_json()),
        "layer": rule.map(|r| r.layer.as_str()),
        "source": source_json(&p.loaded.sources, rule.and_then(|r| r.loc)),
        "overridden": d.overridden,
    })
}

fn describe(p: &Project, a: &Agent, i: usize) -> String {
    let r = &a.rules[i];
    let origin = match r.loc {
        Some(l) => p.loaded.sources.position(l).to_string(),
        None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
    };
    format!(
        "rule {i}: {} {} {}  [{}] {origin}",
        r.permission,
        serde_json::to_string(&r.pattern).unwrap_or_default(),
        r.action,
        r.layer
    )
}

pub fn human(
    p: &Project,
    a: &Agent,
    permission: &str,
    input: &str,
    d: &Decision,
    style: Style,
) -> String {
    let action = d.effect.to_string();
    let mut out = format!(
        "{}{}  {} {} {}\n",
        style.paint_action(&action),
        " ".repeat(5 - action.len()),
        a.name,
        permission,
        serde_json::to_string(input).unwrap_or_default()
    );
    match d.rule {
        None => out.push_str("       no rule matched: ask (OpenCode's default)\n"),
        Some(i) => {
            out.push_str(&format!("       decided by {}\n", describe(p, a, i)));
            for &o in d.overridden.iter().rev() {
                out.push_str(&style.dim(&format!("       overrides  {}\n", describe(p, a, o))));
            }
        }
    }
    out
}

/// Renders many decisions of one agent and permission quickly: what does not depend on the
/// input (the agent, the permission, each rule's action, layer and source) is rendered once
/// per rule, so a streamed `explain` spends its time deciding, not formatting. The output
/// is byte for byte that of [`json`] and [`human`] (tested below).
pub struct Renderer<'a> {
    p: &'a Project,
    a: &'a Agent,
    permission: &'a str,
    style: Style,
    json: bool,
    /// `{"version":1,"agent":…,"permission":…,"input":`
    head: String,
    /// Per rule (last: no rule): `,"action":…,"rule":…,"configured_action":…,"layer":…,"source":…,"overridden":`
    tails: Vec<Option<String>>,
    /// Per rule: [`describe`]'s text.
    described: Vec<Option<String>>,
}

impl<'a> Renderer<'a> {
    pub fn new(
        p: &'a Project,
        a: &'a Agent,
        permission: &'a str,
        json: bool,
        style: Style,
    ) -> Renderer<'a> {
        let head = format!(
            "{{\"version\":1,\"agent\":{},\"permission\":{},\"input\":",
            serde_json::to_string(&a.name).unwrap_or_default(),
            serde_json::to_string(permission).unwrap_or_default()
        );
        Renderer {
            p,
            a,
            permission,
            style,
            json,
            head,
            tails: vec![None; a.rules.len() + 1],
            described: vec![None; a.rules.len()],
        }
    }

    fn tail(&mut self, rule: Option<usize>) -> &str {
        let slot = rule.unwrap_or(self.a.rules.len()).min(self.a.rules.len());
        if self.tails[slot].is_none() {
            let r = rule.and_then(|i| self.a.rules.get(i));
            let effect = r.map_or(crate::model::Effect::Ask, |r| r.action.effective());
            let v = json!({
                "action": effect,
                "rule": rule,
                "configured_action": r.map(|r| r.action.to_json()),
                "layer": r.map(|r| r.layer.as_str()),
                "source": source_json(&self.p.loaded.sources, r.and_then(|r| r.loc)),
            });
            let text = serde_json::to_string(&v).unwrap_or_default();
            // `{…}` → `,…,"overridden":`
            let inner = text
                .strip_prefix('{')
                .and_then(|t| t.strip_suffix('}'))
                .unwrap_or("");
            self.tails[slot] = Some(format!(",{inner},\"overridden\":"));
        }
        self.tails[slot].as_deref().unwrap_or("")
    }

    fn described(&mut self, i: usize) -> &str {
        if self.described.get(i).is_some_and(|d| d.is_none()) {
            self.described[i] = Some(describe(self.p, self.a, i));
        }
        self.described
            .get(i)
            .and_then(|d| d.as_deref())
            .unwrap_or("")
    }

    /// Write the decision of one input: `rule` decided it, `overridden` are the earlier
    /// matching rules in order.
    pub fn write(
        &mut self,
        out: &mut dyn std::io::Write,
        input: &str,
        rule: Option<usize>,
        overridden: &[usize],
    ) -> std::io::Result<()> {
        if self.json {
            out.write_all(self.head.as_bytes())?;
            serde_json::to_writer(&mut *out, input).map_err(std::io::Error::other)?;
            out.write_all(self.tail(rule).as_bytes())?;
            out.write_all(b"[")?;
            for (k, o) in overridden.iter().enumerate() {
                if k > 0 {
                    out.write_all(b",")?;
                }
                write!(out, "{o}")?;
            }
            return out.write_all(b"]}\n");
        }
        let effect = rule
            .and_then(|i| self.a.rules.get(i))
            .map_or(crate::model::Effect::Ask, |r| r.action.effective());
        let action = effect.to_string();
        let mut text = format!(
            "{}{}  {} {} {}\n",
            self.style.paint_action(&action),
            " ".repeat(5 - action.len()),
            self.a.name,
            self.permission,
            serde_json::to_string(input).unwrap_or_default()
        );
        match rule {
            None => text.push_str("       no rule matched: ask (OpenCode's default)\n"),
            Some(i) => {
                let d = self.described(i).to_string();
                text.push_str(&format!("       decided by {d}\n"));
                for &o in overridden.iter().rev() {
                    let d = self.described(o).to_string();
                    text.push_str(&self.style.dim(&format!("       overrides  {d}\n")));
                }
            }
        }
        out.write_all(text.as_bytes())
    }
}
