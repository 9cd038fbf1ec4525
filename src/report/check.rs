//! `permaudit check` output: human (miette), JSON, SARIF 2.1.0 and GitHub annotations.
//!
//! JSON contract, version 1: `{"version":1,"findings":[{"id","level","agent","rule",
//! "message","source","related":[{"source","message"}],"witnesses":[{"permission","input",
//! "action","rule"}],"help"}],"summary":{"error":N,"warning":N,"info":N}}`.

use super::{Style, source_json};
use crate::checks::{CHECKS, Finding, Level};
use crate::project::Project;
use crate::source::Loc;
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Severity};
use serde_json::json;
use std::collections::BTreeMap;

/// Findings that differ only by agent, grouped (a top-level rule appears in every agent).
pub struct Group<'a> {
    pub first: &'a Finding,
    pub agents: Vec<&'a str>,
}

pub fn group(findings: &[Finding]) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    let mut index: BTreeMap<(&str, Option<Loc>, &str), usize> = BTreeMap::new();
    for f in findings {
        let key = (f.id, f.loc, f.message.as_str());
        match index.get(&key) {
            Some(&i) => {
                if let Some(a) = &f.agent {
                    out[i].agents.push(a);
                }
            }
            None => {
                index.insert(key, out.len());
                out.push(Group {
                    first: f,
                    agents: f.agent.iter().map(String::as_str).collect(),
                });
            }
        }
    }
    out
}

pub fn summary(findings: &[Finding]) -> (usize, usize, usize) {
    let count = |l| group(findings).iter().filter(|g| g.first.level == l).count();
    (count(Level::Error), count(Level::Warning), count(Level::Info))
}

pub fn human(p: &Project, findings: &[Finding], style: Style) -> String {
    let sources = &p.loaded.sources;
    let theme = if style.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme);
    let mut out = String::new();
    for g in group(findings) {
        let f = g.first;
        let severity = match f.level {
            Level::Error => Severity::Error,
            Level::Warning => Severity::Warning,
            Level::Info => Severity::Advice,
        };
        let mut help = Vec::new();
        if !g.agents.is_empty() {
            help.push(format!("agents: {}", g.agents.join(", ")));
        }
        for w in &f.witnesses {
            help.push(format!(
                "witness: {} {} → {} (rule {} of {})",
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default(),
                w.action,
                w.rule.map_or("none: OpenCode's default".to_string(), |r| r.to_string()),
                f.agent.as_deref().unwrap_or("-")
            ));
        }
        if let Some(h) = &f.help {
            help.push(h.clone());
        }
        let mut diag = MietteDiagnostic::new(f.message.clone())
            .with_code(f.id)
            .with_severity(severity);
        if !help.is_empty() {
            diag = diag.with_help(help.join("\n"));
        }
        let Some(loc) = f.loc else {
            out.push_str(&format!("{}[{}]: {}\n", f.level, f.id, f.message));
            for h in &help {
                out.push_str(&format!("  = {h}\n"));
            }
            out.push('\n');
            continue;
        };
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            Some("this rule".to_string()),
            loc.span.start..loc.span.end,
        )];
        for (rl, msg) in &f.related {
            if rl.source == loc.source {
                labels.push(LabeledSpan::at(rl.span.start..rl.span.end, msg.clone()));
            } else {
                help.push(format!("{}: {msg}", sources.position(*rl)));
            }
        }
        if !help.is_empty() {
            diag = diag.with_help(help.join("\n"));
        }
        let file = sources.get(loc.source);
        let report = miette::Report::new(diag.with_labels(labels))
            .with_source_code(NamedSource::new(file.name(), file.text.clone()));
        let mut s = String::new();
        if handler.render_report(&mut s, report.as_ref()).is_ok() {
            out.push_str(&s);
        }
        out.push('\n');
    }
    let (e, w, i) = summary(findings);
    out.push_str(&format!("{e} errors, {w} warnings, {i} notes\n"));
    out
}

pub fn finding_json(p: &Project, f: &Finding) -> serde_json::Value {
    let sources = &p.loaded.sources;
    json!({
        "id": f.id,
        "level": f.level,
        "agent": f.agent,
        "rule": f.rule,
        "message": f.message,
        "source": source_json(sources, f.loc),
        "related": f.related.iter().map(|(l, m)| json!({"source": source_json(sources, Some(*l)), "message": m})).collect::<Vec<_>>(),
        "witnesses": f.witnesses.iter().map(|w| json!({
            "permission": w.permission, "input": w.input, "action": w.action, "rule": w.rule,
        })).collect::<Vec<_>>(),
        "help": f.help,
    })
}

pub fn json(p: &Project, findings: &[Finding]) -> serde_json::Value {
    let (e, w, i) = summary(findings);
    json!({
        "version": 1,
        "findings": findings.iter().map(|f| finding_json(p, f)).collect::<Vec<_>>(),
        "summary": {"error": e, "warning": w, "info": i},
    })
}

/// GitHub workflow commands: one annotation per grouped finding.
pub fn github(p: &Project, findings: &[Finding]) -> String {
    let esc = |s: &str| s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    let prop = |s: &str| esc(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for g in group(findings) {
        let f = g.first;
        let cmd = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "notice",
        };
        let mut props = vec![format!("title={}", prop(f.id))];
        if let Some(l) = f.loc {
            let pos = p.loaded.sources.position(l);
            props.insert(0, format!("file={},line={},col={}", prop(&pos.name), pos.line, pos.column));
        }
        out.push_str(&format!("::{cmd} {}::{}\n", props.join(","), esc(&f.message)));
    }
    out
}

fn fnv(s: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// SARIF 2.1.0 for GitHub code scanning.
pub fn sarif(p: &Project, findings: &[Finding]) -> serde_json::Value {
    let root = &p.loaded.paths().worktree;
    let rules: Vec<_> = CHECKS
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "name": c.id,
                "shortDescription": {"text": c.summary},
                "fullDescription": {"text": c.summary},
                "help": {"text": crate::checks::docs_text(c), "markdown": crate::checks::docs_text(c)},
                "defaultConfiguration": {"level": sarif_level(c.level)},
            })
        })
        .collect();
    let results: Vec<_> = group(findings)
        .iter()
        .map(|g| {
            let f = g.first;
            let mut r = json!({
                "ruleId": f.id,
                "level": sarif_level(f.level),
                "message": {"text": f.message},
            });
            if let Some(l) = f.loc {
                let pos = p.loaded.sources.position(l);
                let path = std::path::Path::new(&pos.name);
                let uri = path.strip_prefix(root).map(|r| r.display().to_string()).unwrap_or(pos.name.clone());
                r["locations"] = json!([{"physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {"startLine": pos.line, "startColumn": pos.column},
                }}]);
                let rule = f.rule.and_then(|i| {
                    p.agents.iter().find(|a| Some(&a.name) == f.agent.as_ref()).and_then(|a| a.rules.get(i))
                });
                let key = format!(
                    "{}|{}|{}|{}",
                    f.id,
                    uri,
                    rule.map(|r| format!("{}\u{0}{}", r.permission, r.pattern)).unwrap_or_default(),
                    f.message
                );
                r["partialFingerprints"] = json!({"permauditFinding/v1": fnv(&key)});
            }
            r
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "permaudit",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/permaudit/permaudit",
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

fn sarif_level(l: Level) -> &'static str {
    match l {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Info => "note",
    }
}
