//! Rendering: data in, text out. Nothing here decides anything or touches the machine; the
//! CLI hands over a writer.

pub mod check;
pub mod commands;
pub mod delegation;
pub mod diff;
pub mod error;
pub mod explain;
pub mod map;
pub mod rules;

use crate::source::{Loc, SourceMap};
use owo_colors::OwoColorize;

/// Whether to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn paint_action(&self, a: &str) -> String {
        if !self.color {
            return a.to_string();
        }
        match a {
            "allow" => a.green().bold().to_string(),
            "deny" => a.red().bold().to_string(),
            "ask" => a.yellow().bold().to_string(),
            _ => a.magenta().bold().to_string(),
        }
    }
    pub fn dim(&self, s: &str) -> String {
        if self.color {
            s.dimmed().to_string()
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        if self.color {
            s.bold().to_string()
        } else {
            s.to_string()
        }
    }
}

/// `{"path", "line", "column"}` of a location, or null.
pub fn source_json(sources: &SourceMap, loc: Option<Loc>) -> serde_json::Value {
    match loc {
        None => serde_json::Value::Null,
        Some(l) => {
            let p = sources.position(l);
            serde_json::json!({"path": p.name, "line": p.line, "column": p.column})
        }
    }
}

/// The most bytes of one source a snippet shows, and the longest line it shows: past
/// either, a diagnostic is rendered without its snippet (its `file:line:col` still says
/// where). Snippets of a 100 MB config or of a minified one-line config stay small, and
/// miette never gets a column wider than it can format.
const MAX_WINDOW_BYTES: usize = 64 * 1024;
const MAX_LINE_BYTES: usize = 4096;

/// The part of a source that a miette snippet needs: whole lines around the labels, with
/// their real line numbers and offsets, instead of a copy of the whole text per
/// diagnostic.
pub struct Window {
    name: String,
    text: String,
    /// Byte offset of `text` in the source.
    base: usize,
    /// 0-based line of `text`'s first line.
    first_line: usize,
}

impl Window {
    /// The lines from two before the first span to two after the last, or `None` when that
    /// is more than miette should get (see [`MAX_WINDOW_BYTES`]).
    pub fn around(
        file: &crate::source::SourceFile,
        spans: &[crate::source::Span],
    ) -> Option<Window> {
        let text = &file.text;
        let lo = spans.iter().map(|s| s.start).min()?.min(text.len());
        let hi = spans.iter().map(|s| s.end).max()?.min(text.len());
        let bytes = text.as_bytes();
        let mut start = lo;
        for _ in 0..3 {
            start = bytes[..start.saturating_sub(1)]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            if start == 0 {
                break;
            }
        }
        let mut end = hi;
        for _ in 0..3 {
            end = bytes[end.min(bytes.len())..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| end + i + 1);
            if end >= bytes.len() {
                end = bytes.len();
                break;
            }
        }
        let window = &text[start..end];
        if window.len() > MAX_WINDOW_BYTES || window.split('\n').any(|l| l.len() > MAX_LINE_BYTES) {
            return None;
        }
        Some(Window {
            name: file.name(),
            text: window.to_string(),
            base: start,
            first_line: file.line_col(start).0 - 1,
        })
    }
}

impl miette::SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let offset = span
            .offset()
            .checked_sub(self.base)
            .ok_or(miette::MietteError::OutOfBounds)?;
        let local = miette::SourceSpan::new(offset.into(), span.len());
        let c = self
            .text
            .read_span(&local, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            c.data(),
            miette::SourceSpan::new((c.span().offset() + self.base).into(), c.span().len()),
            c.line() + self.first_line,
            c.column(),
            c.line_count(),
        )))
    }
}

/// A SARIF 2.1.0 log of one permaudit run.
pub fn sarif_log(
    rules: Vec<serde_json::Value>,
    results: Vec<serde_json::Value>,
) -> serde_json::Value {
    serde_json::json!({
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

/// A GitHub workflow command's message, escaped.
pub fn gh_escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A GitHub workflow command's property value, escaped.
pub fn gh_property(s: &str) -> String {
    gh_escape(s).replace(':', "%3A").replace(',', "%2C")
}
