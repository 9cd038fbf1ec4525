//! `permaudit check` output: human (miette), JSON, SARIF 2.1.0 and GitHub annotations.
//!
//! JSON contract, version 2: `{"version":2,"findings":[{"id","level","agents","rule",
//! "message","source","related":[{"source","message"}],"witnesses":[{"permission","input",
//! "action","rule"(,"deciders":[{"agent","rule"}])(,"asked":false)}],"help"}],"samples":
//! [{"agent","permission","input","expected","action","rule","layer","source","sample",
//! "ok"}],"summary":{"error":N,"warning":N,"info":N}}`. A witness's `rule` indexes the
//! rules of the finding's first agent; `deciders`, present only when needed, names the
//! later agents whose call another rule decides (a built-in one: `explore`'s own `bash`
//! `*` allow where `build`'s is `defaults`), each with that rule's index in its own rules.
//! `asked: false`, present only then, marks a witness of a permission OpenCode never asks
//! (`write`: the write tool asks `edit`): the rules as written decide it, no call does.

use super::{Style, source_json};
use crate::checks::sample_mismatch::{Outcome, Sample};
use crate::checks::{CHECKS, Finding, Level};
use crate::project::Project;
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, Severity};
use serde_json::json;
use std::collections::BTreeMap;

/// The samples of a run and what OpenCode decides for each (empty without a samples file).
#[derive(Debug, Clone, Copy, Default)]
pub struct Samples<'a> {
    pub samples: &'a [Sample],
    pub outcomes: &'a [Outcome],
}

/// The primary label of a finding's place.
fn label(id: &str) -> &'static str {
    match id {
        "legacy-tools" => "this tools entry",
        "env-injection" => "this substitution",
        "sample-mismatch" => "this sample",
        "broken-frontmatter" => "here",
        "ignored-key" => "ignored",
        "unknown-agent-key" => "this key",
        "described-read-only" => "these words",
        "prompt-limit" => "this limit",
        "mcp-bypass" => "this server",
        "unused-ignore" | "ignore-without-reason" => "this comment",
        "stale-baseline" => "this entry",
        _ => "this rule",
    }
}

/// The human table of samples written without an expectation, and a line on the others.
pub fn samples_table(p: &Project, s: Samples<'_>, style: Style) -> String {
    let mut out = String::new();
    let open: Vec<&Outcome> = s
        .outcomes
        .iter()
        .filter(|o| o.holds(s.samples).is_none())
        .collect();
    if !open.is_empty() {
        let rows: Vec<[String; 5]> = open
            .iter()
            .map(|o| {
                let a = p.agent(&o.agent);
                let rule = a.zip(o.witness.rule).map(|(a, i)| &a.rules[i]);
                let by = match rule {
                    Some(r) => format!(
                        "{} {}{}",
                        i_of(o.witness.rule),
                        crate::checks::describe(r),
                        match r.loc {
                            Some(l) => format!(" {}", p.loaded.sources.position(l)),
                            None => format!(" built-in ({})", r.builtin.as_deref().unwrap_or("")),
                        }
                    ),
                    None => "no rule: OpenCode's default".to_string(),
                };
                [
                    o.agent.clone(),
                    o.witness.permission.clone(),
                    serde_json::to_string(&o.witness.input).unwrap_or_default(),
                    o.witness.action.to_string(),
                    by,
                ]
            })
            .collect();
        let heads = ["agent", "permission", "input", "action", "decided by"];
        let mut width = heads.map(|h| h.chars().count());
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: [&str; 5], paint: bool| {
            let mut l = String::from(" ");
            for (k, c) in cells.iter().enumerate() {
                let pad = " ".repeat(width[k] - c.chars().count());
                let c = if paint && k == 3 {
                    style.paint_action(c)
                } else {
                    c.to_string()
                };
                if k == 4 {
                    l.push_str(&format!(" {c}"));
                } else {
                    l.push_str(&format!(" {c}{pad} "));
                }
            }
            l.trim_end().to_string() + "\n"
        };
        out.push_str(&style.bold(&format!(
            "samples without an expectation ({})\n",
            rows.len()
        )));
        out.push_str(&style.dim(&line(heads, false)));
        for r in &rows {
            out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4]], true));
        }
        out.push('\n');
    }
    let checked: Vec<bool> = s
        .outcomes
        .iter()
        .filter_map(|o| o.holds(s.samples))
        .collect();
    if !checked.is_empty() {
        let failed = checked.iter().filter(|ok| !**ok).count();
        out.push_str(&format!(
            "samples: {} of {} expectations hold{}\n\n",
            checked.len() - failed,
            checked.len(),
            if failed > 0 {
                " (sample-mismatch above)"
            } else {
                ""
            }
        ));
    }
    out
}

fn i_of(rule: Option<usize>) -> String {
    rule.map_or(String::new(), |i| format!("#{i}"))
}

/// Errors, warnings and notes: exactly the findings listed (one per place).
pub fn summary(findings: &[Finding]) -> (usize, usize, usize) {
    let count = |l| findings.iter().filter(|f| f.level == l).count();
    (
        count(Level::Error),
        count(Level::Warning),
        count(Level::Info),
    )
}

pub fn human(p: &Project, findings: &[Finding], samples: Samples<'_>, style: Style) -> String {
    let mut out = findings_human(p, findings, style);
    out.push_str(&samples_table(p, samples, style));
    let (e, w, i) = summary(findings);
    out.push_str(&summary_line(e, w, i));
    out.push('\n');
    out
}

/// The findings as miette diagnostics, one style for every level (a finding without a
/// place is the same diagnostic without a snippet).
pub fn findings_human(p: &Project, findings: &[Finding], style: Style) -> String {
    findings_human_marked(p, findings, &[], style)
}

/// A proven suggestion as help lines: what it does, where it writes what, what changes.
pub fn suggestion_lines(s: &crate::fix::suggest::Suggestion) -> String {
    let mut effect = s
        .effect
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if s.effect.len() > 3 {
        effect.push_str(&format!("; and {} more lines", s.effect.len() - 3));
    }
    if effect.is_empty() {
        effect = "no decision".into();
    }
    // A snippet of several lines is shown as the file will read, one line each.
    let text = if s.text.contains('\n') {
        let lines: Vec<&str> = s.text.lines().map(str::trim).collect();
        format!(":\n    {}", lines.join("\n    "))
    } else {
        format!(" {}", s.text)
    };
    format!(
        "suggested (proven on this config): {}\n  at {}:{}:{} write{text}\n  it changes: {effect}",
        s.title, s.file, s.line, s.column
    )
}

/// [`findings_human`], each finding with its proven fix (`marks[i]`, a help line) if any.
pub fn findings_human_marked(
    p: &Project,
    findings: &[Finding],
    marks: &[Option<String>],
    style: Style,
) -> String {
    let sources = &p.loaded.sources;
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    // Messages are not wrapped: the output is the same whatever the terminal or the paths.
    let handler = GraphicalReportHandler::new_themed(theme).with_wrap_lines(false);
    let mut out = String::new();
    for (n, f) in findings.iter().enumerate() {
        let severity = match f.level {
            Level::Error => Severity::Error,
            Level::Warning => Severity::Warning,
            Level::Info => Severity::Advice,
        };
        let mut help = Vec::new();
        if !f.agents.is_empty() {
            help.push(format!(
                "agents: {}",
                super::agent_list(&p.agents.iter().collect::<Vec<_>>(), &f.agents)
            ));
        }
        for w in &f.witnesses {
            let rule = |r: Option<usize>| {
                r.map_or("none: OpenCode's default".to_string(), |r| r.to_string())
            };
            // Agents decided by another (built-in) rule, by its index:
            // `; rule 16 of explore`, `; rule 2 of general, architect`.
            let mut by_rule: Vec<(Option<usize>, Vec<&str>)> = Vec::new();
            for (a, r) in crate::checks::other_deciders(p, f, w) {
                match by_rule.iter_mut().find(|(k, _)| *k == r) {
                    Some((_, names)) => names.push(a),
                    None => by_rule.push((r, vec![a])),
                }
            }
            let others: String = by_rule
                .iter()
                .map(|(r, names)| format!("; rule {} of {}", rule(*r), names.join(", ")))
                .collect();
            let unasked = if p.never_asks(&w.permission).is_some() {
                "; as written, never asked"
            } else {
                ""
            };
            help.push(format!(
                "witness: {} {} → {} (rule {} of {}{others}{unasked})",
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default(),
                w.action,
                rule(w.rule),
                f.agents.first().map_or("-", String::as_str)
            ));
        }
        if let Some(h) = &f.help {
            help.push(h.clone());
        }
        if let Some(Some(m)) = marks.get(n) {
            help.push(m.clone());
        }
        let mut help: Vec<String> = help.iter().map(|h| super::clean(h).into_owned()).collect();
        let mut diag = MietteDiagnostic::new(super::clean(&f.message).into_owned())
            .with_code(f.id)
            .with_severity(severity);
        if !help.is_empty() {
            diag = diag.with_help(help.join("\n"));
        }
        let Some(loc) = f.loc else {
            let mut s = String::new();
            if handler
                .render_report(&mut s, miette::Report::new(diag).as_ref())
                .is_ok()
            {
                out.push_str(&s);
            }
            out.push('\n');
            continue;
        };
        // (text, span, primary): spans become label ranges once the window is known.
        let mut labels = vec![(label(f.id).to_string(), loc.span, true)];
        for (rl, msg) in &f.related {
            let msg = super::clean(msg);
            if rl.source == loc.source {
                labels.push((msg.into_owned(), rl.span, false));
            } else {
                help.push(format!("{}: {msg}", sources.position(*rl)));
            }
        }
        if !help.is_empty() {
            diag = diag.with_help(help.join("\n"));
        }
        let file = sources.get(loc.source);
        let spans: Vec<_> = labels.iter().map(|l| l.1).collect();
        let mut s = String::new();
        match super::Window::around(file, &spans) {
            Some(window) => {
                let labels = labels.into_iter().map(|(text, span, primary)| {
                    if primary {
                        LabeledSpan::new_primary_with_span(Some(text), window.range(span))
                    } else {
                        LabeledSpan::new_with_span(Some(text), window.range(span))
                    }
                });
                let report = miette::Report::new(diag.with_labels(labels)).with_source_code(window);
                if handler.render_report(&mut s, report.as_ref()).is_ok() {
                    out.push_str(&s);
                }
            }
            // Too much text for a snippet: the location alone.
            None => {
                let report = miette::Report::new(diag);
                if handler.render_report(&mut s, report.as_ref()).is_ok() {
                    out.push_str(&s);
                }
                out.push_str(&format!("  at {}\n", sources.position(loc)));
                for (rl, msg) in f.related.iter().filter(|(rl, _)| rl.source == loc.source) {
                    out.push_str(&format!("  {}: {msg}\n", sources.position(*rl)));
                }
            }
        }
        out.push('\n');
    }
    out
}

/// `1 error, 2 warnings, 3 info`, zero counts left out; `no findings` for none.
pub fn summary_line(errors: usize, warnings: usize, info: usize) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let parts: Vec<String> = [
        (errors, plural(errors, "error", "errors")),
        (warnings, plural(warnings, "warning", "warnings")),
        (info, format!("{info} info")),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(_, s)| s)
    .collect();
    if parts.is_empty() {
        "no findings".to_string()
    } else {
        parts.join(", ")
    }
}

/// `--format concise`: one line per finding, `path:line:col: level[id] message` (a finding
/// without a place: `level[id] message`), then the summary.
pub fn concise(p: &Project, findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        if let Some(l) = f.loc {
            out.push_str(&format!("{}: ", p.loaded.sources.position(l)));
        }
        out.push_str(&format!("{}[{}] {}\n", f.level, f.id, f.message));
    }
    out
}

/// `--statistics`: how many findings of each kind, most first.
pub fn statistics(findings: &[Finding]) -> String {
    let mut counts: BTreeMap<(&str, Level), usize> = BTreeMap::new();
    for f in findings {
        *counts.entry((f.id, f.level)).or_default() += 1;
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let width = rows
        .iter()
        .map(|r| r.1.to_string().len())
        .max()
        .unwrap_or(1);
    rows.iter()
        .map(|((id, level), n)| format!("{n:>width$}  {id:<28} {level}\n"))
        .collect()
}

/// The head of the human report: the OpenCode config files read, in OpenCode's order
/// (later wins), and permaudit's own settings.
pub fn header(config: &[String], settings: Option<&str>, project_only: bool) -> String {
    let mut out = String::new();
    if config.is_empty() {
        out.push_str("no OpenCode config found: built-in defaults only\n");
    } else {
        out.push_str("OpenCode config read, in OpenCode's order (later wins):\n");
        for (n, c) in config.iter().enumerate() {
            out.push_str(&format!("  {}. {c}\n", n + 1));
        }
    }
    if project_only {
        out.push_str(
            "project only: global, user and managed config and OPENCODE_* variables not read\n",
        );
    }
    if let Some(s) = settings {
        out.push_str(&format!("permaudit settings: {s}\n"));
    }
    out.push('\n');
    out
}

pub fn finding_json(p: &Project, f: &Finding) -> serde_json::Value {
    let sources = &p.loaded.sources;
    json!({
        "id": f.id,
        "level": f.level,
        "agents": f.agents,
        "rule": f.rule,
        "message": f.message,
        "source": source_json(sources, f.loc),
        "related": f.related.iter().map(|(l, m)| json!({"source": source_json(sources, Some(*l)), "message": m})).collect::<Vec<_>>(),
        "witnesses": f.witnesses.iter().map(|w| {
            let mut o = json!({
                "permission": w.permission, "input": w.input, "action": w.action, "rule": w.rule,
            });
            let others = crate::checks::other_deciders(p, f, w);
            if !others.is_empty() {
                o["deciders"] = others
                    .iter()
                    .map(|(a, r)| json!({"agent": a, "rule": r}))
                    .collect();
            }
            if p.never_asks(&w.permission).is_some() {
                o["asked"] = json!(false);
            }
            o
        }).collect::<Vec<_>>(),
        "help": f.help,
    })
}

/// One sample outcome: the sample, what OpenCode decides and by which rule.
pub fn sample_json(p: &Project, s: Samples<'_>, o: &Outcome) -> serde_json::Value {
    let sample = &s.samples[o.sample];
    let rule = p
        .agent(&o.agent)
        .zip(o.witness.rule)
        .map(|(a, i)| &a.rules[i]);
    json!({
        "agent": o.agent,
        "permission": o.witness.permission,
        "input": o.witness.input,
        "expected": sample.expected,
        "action": o.witness.action,
        "rule": o.witness.rule,
        "layer": rule.map(|r| r.layer),
        "source": source_json(&p.loaded.sources, rule.and_then(|r| r.loc)),
        "sample": source_json(&p.loaded.sources, Some(sample.loc)),
        "ok": o.holds(s.samples),
    })
}

/// The JSON report (`version` 2), serialized as it is written: one finding's value at a
/// time, so memory stays flat however many findings there are.
pub fn json<'a>(p: &'a Project, findings: &'a [Finding], samples: Samples<'a>) -> JsonReport<'a> {
    JsonReport {
        project: p,
        findings,
        samples,
        fixed: None,
        suggestions: &[],
    }
}

/// See [`json`].
pub struct JsonReport<'a> {
    project: &'a Project,
    findings: &'a [Finding],
    samples: Samples<'a>,
    fixed: Option<&'a crate::fix::Outcome>,
    /// Per finding, its proven suggestions (a finding with none has no `suggestions` key).
    suggestions: &'a [Vec<crate::fix::suggest::Suggestion>],
}

impl<'a> JsonReport<'a> {
    /// Each finding with the changes its help proposes, proven on this config.
    pub fn with_suggestions(mut self, s: &'a [Vec<crate::fix::suggest::Suggestion>]) -> Self {
        self.suggestions = s;
        self
    }

    /// After `--fix`: the report also lists what was applied (`fixed`), and `findings` are
    /// those left.
    pub fn with_fixed(mut self, fixed: Option<&'a crate::fix::Outcome>) -> Self {
        self.fixed = fixed;
        self
    }
}

/// `fixed`: each fix applied (kind, class, title, the findings it repaired, the place of
/// the finding), the files written (named as `source.path` names them), the passes made,
/// and the narrowing fixes left for `--unsafe-fixes`.
fn fixed_json(p: &Project, o: &crate::fix::Outcome) -> serde_json::Value {
    let name = |path: &std::path::Path| {
        p.loaded
            .sources
            .iter()
            .find(|(_, f)| f.path() == Some(path))
            .map(|(_, f)| f.name())
            .unwrap_or_else(|| path.display().to_string())
    };
    json!({
        "applied": o.applied.iter().map(|a| json!({
            "id": a.id,
            "safety": a.safety.as_str(),
            "title": a.title,
            "findings": a.findings,
            "source": {"path": a.file, "line": a.line, "column": a.column},
        })).collect::<Vec<_>>(),
        "files": o.files.iter().map(|(path, _, _)| name(path)).collect::<Vec<_>>(),
        "passes": o.passes,
        "unsafe_available": o.unsafe_available,
    })
}

/// A sequence serialized element by element from an iterator of values.
struct Lazy<I>(std::cell::RefCell<Option<I>>);

impl<I: Iterator<Item = serde_json::Value>> serde::Serialize for Lazy<I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let items = self.0.borrow_mut().take();
        let mut seq = s.serialize_seq(None)?;
        for v in items.into_iter().flatten() {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

impl serde::Serialize for JsonReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (p, samples) = (self.project, self.samples);
        let (e, w, i) = summary(self.findings);
        let mut map = s.serialize_map(Some(5 + usize::from(self.fixed.is_some())))?;
        map.serialize_entry("version", &2)?;
        map.serialize_entry("opencode", &super::rules::opencode_json(p))?;
        map.serialize_entry(
            "findings",
            &Lazy(std::cell::RefCell::new(Some(
                self.findings.iter().enumerate().map(|(n, f)| {
                    let mut v = finding_json(p, f);
                    if let Some(s) = self.suggestions.get(n).filter(|s| !s.is_empty()) {
                        v["suggestions"] = serde_json::to_value(s).unwrap_or_default();
                    }
                    v
                }),
            ))),
        )?;
        map.serialize_entry(
            "samples",
            &Lazy(std::cell::RefCell::new(Some(
                samples.outcomes.iter().map(|o| sample_json(p, samples, o)),
            ))),
        )?;
        map.serialize_entry("summary", &json!({"error": e, "warning": w, "info": i}))?;
        if let Some(o) = self.fixed {
            map.serialize_entry("fixed", &fixed_json(p, o))?;
        }
        map.end()
    }
}

/// GitHub workflow commands: one annotation per grouped finding.
pub fn github(p: &Project, findings: &[Finding]) -> String {
    let (esc, prop) = (super::gh_escape, super::gh_property);
    let mut out = String::new();
    for f in findings {
        let cmd = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "notice",
        };
        let mut props = vec![format!("title={}", prop(f.id))];
        if let Some(l) = f.loc {
            let pos = p.loaded.sources.position(l);
            props.insert(
                0,
                format!(
                    "file={},line={},col={}",
                    prop(&pos.name),
                    pos.line,
                    pos.column
                ),
            );
        }
        out.push_str(&format!(
            "::{cmd} {}::{}\n",
            props.join(","),
            esc(&f.message)
        ));
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
    let results: Vec<_> = findings
        .iter()
        .map(|f| {
            let mut r = json!({
                "ruleId": f.id,
                "level": sarif_level(f.level),
                "message": {"text": f.message},
            });
            if let Some(l) = f.loc {
                let pos = p.loaded.sources.position(l);
                let path = std::path::Path::new(&pos.name);
                let uri = path
                    .strip_prefix(root)
                    .map(|r| r.display().to_string())
                    .unwrap_or(pos.name.clone());
                r["locations"] = json!([{"physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {"startLine": pos.line, "startColumn": pos.column},
                }}]);
                let rule = f.rule.and_then(|i| {
                    p.agents
                        .iter()
                        .find(|a| Some(&a.name) == f.agents.first())
                        .and_then(|a| a.rules.get(i))
                });
                let key = format!(
                    "{}|{}|{}|{}",
                    f.id,
                    uri,
                    rule.map(|r| format!("{}\u{0}{}", r.permission, r.pattern))
                        .unwrap_or_default(),
                    f.message
                );
                r["partialFingerprints"] = json!({"permauditFinding/v1": fnv(&key)});
            }
            r
        })
        .collect();
    super::sarif_log(rules, results)
}

fn sarif_level(l: Level) -> &'static str {
    match l {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Info => "note",
    }
}
