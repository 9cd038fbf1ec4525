//! Rendering: data in, text out. Nothing here decides anything or touches the machine; the
//! CLI hands over a writer.

pub mod check;
pub mod commands;
pub mod delegation;
pub mod diff;
pub mod error;
pub mod explain;
pub mod history;
pub mod map;
pub mod page;
pub mod rules;
pub mod suggest;

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

/// The agents a finding holds for, as a reader wants them: `all` when it holds for every
/// agent in `all`; otherwise [`shown_agents`].
pub fn agent_list<S: AsRef<str>>(all: &[&crate::agents::Agent], agents: &[S]) -> String {
    let names: Vec<&str> = agents.iter().map(AsRef::as_ref).collect();
    if all.iter().all(|a| names.contains(&a.name.as_str())) {
        return "all".to_string();
    }
    shown_agents(all, &names).join(", ")
}

/// `names` as every human and markdown list of agents shows them: without OpenCode's
/// internal agents ([`crate::agents::Agent::is_internal`], looked up in `all`), unless
/// they are all it names.
pub fn shown_agents<'n>(all: &[&crate::agents::Agent], names: &[&'n str]) -> Vec<&'n str> {
    let internal = |name: &str| all.iter().any(|a| a.name == name && a.is_internal());
    let shown: Vec<&str> = names.iter().copied().filter(|n| !internal(n)).collect();
    if shown.is_empty() {
        names.to_vec()
    } else {
        shown
    }
}

/// The line that names the internal agents a listing folded (empty when none), as `map`
/// and `rules` print it.
pub fn folded_line(names: &[&str]) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(
        "OpenCode's internal agents {} are folded (it runs them itself to compact, summarise and title sessions); `--agent NAME` shows one\n",
        names.join(", ")
    )
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
/// their real line numbers, instead of a copy of the whole text per diagnostic.
///
/// The text is made safe to print: a control character becomes its Unicode control picture
/// (`␀`, `␛`), so no raw byte of a binary file reaches the terminal, and a lone CR is shown
/// as `␍` on its line, since OpenCode (and [`SourceFile::line_col`](crate::source::SourceFile::line_col))
/// count lines by LF only: the snippet's `line:col` is the headline's. Label spans go through
/// [`Window::range`], which follows the text's shifts.
pub struct Window {
    name: String,
    text: String,
    /// Byte offset of `text` in the source.
    base: usize,
    /// 0-based line of `text`'s first line.
    first_line: usize,
    /// `(offset in the source, bytes added before it)` after each widened character.
    shifts: Vec<(usize, usize)>,
}

/// What a character of a snippet is printed as, if not itself.
fn printable(c: char, next: Option<char>) -> Option<char> {
    match c {
        '\r' if next == Some('\n') => Some(' '),
        '\n' | '\t' => None,
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32),
        '\u{7f}' => Some('\u{2421}'),
        '\u{80}'..='\u{9f}' => Some('\u{fffd}'),
        _ => None,
    }
}

/// Text from a config (a key, a pattern) made safe for a terminal: every control character
/// but the line end becomes its control picture, so a config cannot send escape sequences
/// through permaudit's output.
pub fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c != '\n' && (c.is_control());
    if !s.contains(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| {
            if !bad(c) {
                c
            } else if c == '\r' {
                '\u{240d}'
            } else {
                printable(c, None).unwrap_or('\u{fffd}')
            }
        })
        .collect()
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
        let first_line = file.line_of(lo).saturating_sub(2);
        let start = file.line_start(first_line);
        let end = file.line_start(file.line_of(hi) + 3);
        let window = &text[start..end];
        if window.len() > MAX_WINDOW_BYTES {
            return None;
        }
        let mut out = String::with_capacity(window.len());
        let mut shifts = Vec::new();
        let mut added = 0;
        let mut line = 0;
        let mut chars = window.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let shown = printable(c, chars.peek().map(|&(_, n)| n)).unwrap_or(c);
            out.push(shown);
            if shown.len_utf8() != c.len_utf8() {
                added += shown.len_utf8() - c.len_utf8();
                shifts.push((start + i + c.len_utf8(), added));
            }
            line += c.len_utf8();
            if shown == '\n' {
                if line > MAX_LINE_BYTES {
                    return None;
                }
                line = 0;
            }
        }
        if line > MAX_LINE_BYTES {
            return None;
        }
        Some(Window {
            name: file.name(),
            text: out,
            base: start,
            first_line,
            shifts,
        })
    }

    /// Where a byte of the source is in the printed text, counted from the source's start.
    fn shifted(&self, offset: usize) -> usize {
        let k = self.shifts.partition_point(|&(o, _)| o <= offset);
        offset + k.checked_sub(1).map_or(0, |k| self.shifts[k].1)
    }

    /// A source span as a label span of this window.
    pub fn range(&self, span: crate::source::Span) -> std::ops::Range<usize> {
        let start = self.shifted(span.start);
        start..self.shifted(span.end.max(span.start))
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
        // miette counts columns in bytes; permaudit's headlines count characters.
        let line_start = self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let column = self
            .text
            .get(line_start..offset)
            .map_or(c.column(), |s| s.chars().count())
            // A leading BOM is not a column (see `SourceFile::line_col`).
            - usize::from(self.base + line_start == 0 && self.text.starts_with('\u{feff}') && offset > 0);
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            c.data(),
            miette::SourceSpan::new((c.span().offset() + self.base).into(), c.span().len()),
            c.line() + self.first_line,
            column,
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
