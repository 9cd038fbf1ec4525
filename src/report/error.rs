//! Load errors (configs OpenCode refuses) as miette diagnostics with source snippets.

use super::Style;
use crate::load::{Failure, LoadError};
use crate::source::{Damage, Loc, SourceMap};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic};

/// `(location, headline, label)` of a load error; the headline says so when the file's
/// bytes are not text (a binary file, or not UTF-8).
fn parts(sources: &SourceMap, e: &LoadError) -> (Option<Loc>, String, String) {
    let (loc, mut headline, label) = bare_parts(e);
    if let Some(l) = loc {
        let file = sources.get(l.source);
        if let Some(note) = file.damage_note() {
            headline = format!("{headline}; {note}");
        }
        match file.damage {
            // A snippet of a binary file is a screen of replacement glyphs: the byte
            // offset finds the place (`xxd -s`, a hex editor).
            Some(Damage::Binary) => {
                headline = format!(
                    "{headline}; the error is at byte offset {} of {}",
                    file.byte_offset(l.span.start),
                    file.name()
                );
            }
            // OpenCode's line:col is on one long line; an editor breaks it at each CR.
            Some(Damage::LoneCr) => {
                let (line, col) = file.editor_line_col(l.span.start);
                headline = format!("{headline} (an editor shows this place at {line}:{col})");
            }
            _ => {}
        }
    }
    (loc, headline, label)
}

fn bare_parts(e: &LoadError) -> (Option<Loc>, String, String) {
    match e {
        LoadError::Read { path, message } => (
            None,
            format!("{}: cannot read: {message}", path.display()),
            String::new(),
        ),
        LoadError::Syntax { loc, message } => (
            Some(*loc),
            format!("not valid JSONC (OpenCode refuses the file): {message}"),
            "here".to_string(),
        ),
        LoadError::Invalid(c) => (
            Some(c.loc),
            format!(
                "OpenCode refuses this config{}: {}",
                if c.path.is_empty() {
                    String::new()
                } else {
                    format!(" at `{}`", c.path)
                },
                c.message
            ),
            "refused here".to_string(),
        ),
        LoadError::FileRef { loc, message } => (
            Some(*loc),
            format!("OpenCode refuses this config: {message}"),
            "this reference".to_string(),
        ),
        LoadError::Unauditable { loc, message } => {
            (Some(*loc), message.clone(), "here".to_string())
        }
        LoadError::Limit { loc, message } => (
            Some(*loc),
            format!("permaudit cannot audit this: {message}"),
            "here".to_string(),
        ),
        LoadError::WalkLimit(w) => (
            None,
            format!(
                "{}: permaudit cannot audit this: {}",
                w.root.display(),
                w.message()
            ),
            String::new(),
        ),
    }
}

/// Render a load failure: a `path:line:col: error: …` line, then the snippet.
pub fn render(f: &Failure, style: Style) -> String {
    render_error(&f.sources, &f.error, style)
}

/// Where a refusal is and what it says, in one line (the editor's diagnostic).
/// What loading said besides the project: discovery notes, and the warnings no finding
/// kind reports (a warning `check` reports as a finding is said once, there), a line each.
pub fn load_notes(project: &crate::project::Project) -> String {
    let mut s = String::new();
    for note in &project.loaded.discovery.notes {
        s.push_str(&format!("note: {}\n", super::clean(note)));
    }
    for w in project
        .loaded
        .warnings
        .iter()
        .filter(|w| crate::checks::warning_kind(w.code).is_none())
    {
        let pos = project.loaded.sources.position(w.loc);
        s.push_str(&format!("{pos}: warning[{}]: {}\n", w.code, w.message));
    }
    s
}

/// [`headline`] of the refusal and of every other refusal of its file.
pub fn headlines(sources: &SourceMap, e: &LoadError) -> Vec<(Option<crate::source::Loc>, String)> {
    every(e).iter().map(|e| headline(sources, e)).collect()
}

pub fn headline(sources: &SourceMap, e: &LoadError) -> (Option<crate::source::Loc>, String) {
    let (loc, headline, _) = parts(sources, e);
    (loc, headline)
}

pub fn render_error(sources: &SourceMap, e: &LoadError, style: Style) -> String {
    every(e)
        .iter()
        .map(|e| render_one(sources, e, style))
        .collect()
}

/// A refusal and the other refusals of its file (`ConfigError::more`), in order.
fn every(e: &LoadError) -> Vec<LoadError> {
    let mut all = vec![e.clone()];
    if let LoadError::Invalid(c) = e {
        all.extend(c.more.iter().cloned().map(LoadError::Invalid));
    }
    all
}

fn render_one(sources: &SourceMap, e: &LoadError, style: Style) -> String {
    let (loc, headline, label) = parts(sources, e);
    let Some(loc) = loc else {
        return format!("error: {headline}\n");
    };
    let pos = sources.position(loc);
    let mut out = format!("{pos}: error: {headline}\n");
    let file = sources.get(loc.source);
    if file.damage == Some(Damage::Binary) {
        return out;
    }
    let Some(window) = super::Window::around(file, &[loc.span]) else {
        return out;
    };
    let diag = MietteDiagnostic::new(headline.clone())
        .with_code("permaudit::refused")
        .with_label(LabeledSpan::at(window.range(loc.span), label));
    let report = miette::Report::new(diag).with_source_code(window);
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut snippet = String::new();
    if GraphicalReportHandler::new_themed(theme)
        .render_report(&mut snippet, report.as_ref())
        .is_ok()
    {
        // The headline is the first line already: only the snippet, from its frame on.
        let mut lines = snippet.split_inclusive('\n').peekable();
        while lines.next_if(|l| !l.contains('╭')).is_some() {}
        out.extend(lines);
    }
    out
}

/// A refusal in the machine formats of `check`, so that a pipeline reading standard output
/// sees why there are no findings (exit 2 either way):
/// - JSON (contract version 2, additive): `{"version":2,"error":{"message","source"},
///   "errors":[…]}` (`error` the first, `errors` every refusal of the file);
/// - SARIF: a run without results whose invocation failed, with each refusal as a
///   notification (`toolExecutionNotifications`, at its place);
/// - GitHub: one `::error` annotation per refusal, at its place.
pub enum Machine {
    Json,
    Sarif,
    Github,
}

pub fn machine(sources: &SourceMap, e: &LoadError, form: Machine) -> String {
    let all = every(e);
    match form {
        Machine::Json => {
            let errors: Vec<serde_json::Value> = all
                .iter()
                .map(|e| {
                    let (loc, headline, _) = parts(sources, e);
                    serde_json::json!({"message": headline, "source": super::source_json(sources, loc)})
                })
                .collect();
            let v = serde_json::json!({
                "version": 2,
                "error": errors.first(),
                "errors": errors,
            });
            serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
        }
        Machine::Sarif => {
            let notes: Vec<serde_json::Value> =
                all.iter().map(|e| sarif_note(sources, e)).collect();
            let mut log = super::sarif_log(Vec::new(), Vec::new());
            log["runs"][0]["invocations"] = serde_json::json!([{
                "executionSuccessful": false,
                "toolExecutionNotifications": notes,
            }]);
            serde_json::to_string_pretty(&log).unwrap_or_default() + "\n"
        }
        Machine::Github => all.iter().map(|e| github_line(sources, e)).collect(),
    }
}

fn sarif_note(sources: &SourceMap, e: &LoadError) -> serde_json::Value {
    let (loc, headline, _) = parts(sources, e);
    let mut note = serde_json::json!({
        "level": "error",
        "message": {"text": headline},
    });
    if let Some(l) = loc {
        let p = sources.position(l);
        note["locations"] = serde_json::json!([{"physicalLocation": {
            "artifactLocation": {"uri": p.name},
            "region": {"startLine": p.line, "startColumn": p.column},
        }}]);
    }
    note
}

fn github_line(sources: &SourceMap, e: &LoadError) -> String {
    let (loc, headline, _) = parts(sources, e);
    let (esc, prop) = (super::gh_escape, super::gh_property);
    match loc {
        Some(l) => {
            let p = sources.position(l);
            format!(
                "::error file={},line={},col={},title=permaudit::{}\n",
                prop(&p.name),
                p.line,
                p.column,
                esc(&headline)
            )
        }
        None => format!("::error title=permaudit::{}\n", esc(&headline)),
    }
}
