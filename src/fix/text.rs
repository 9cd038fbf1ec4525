//! Text edits that keep every byte outside the edited span: the entries of a JSONC object
//! or a YAML (frontmatter) mapping found by the place of their key, deleted, moved or
//! rewritten in place. Nothing here decides whether an edit is right; [`super::prove`]
//! does, on the re-loaded project.

use crate::source::Span;
use crate::syntax::frontmatter::{self, Frontmatter};
use crate::syntax::value::{Node, Value};

/// Replace `span` of one file's text by `text`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edit {
    pub span: Span,
    pub text: String,
}

impl Edit {
    pub fn delete(start: usize, end: usize) -> Edit {
        Edit {
            span: Span::new(start, end),
            text: String::new(),
        }
    }

    pub fn insert(at: usize, text: String) -> Edit {
        Edit {
            span: Span::new(at, at),
            text,
        }
    }
}

/// `text` with `edits` applied; `None` when two of them overlap or one is out of bounds
/// or splits a character.
pub fn apply(text: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in sorted {
        if e.span.start < at || e.span.end < e.span.start {
            return None;
        }
        out.push_str(text.get(at..e.span.start)?);
        out.push_str(&e.text);
        at = e.span.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// Which syntax an entry is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Jsonc,
    Yaml,
}

/// One key of an object or mapping: the key's text and its value's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub key: Span,
    pub value: Span,
}

/// An object (JSONC) or mapping (YAML) with its entries in written order (duplicates
/// included, for JSONC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub syntax: Syntax,
    /// The object's own text (the value of the entry holding it).
    pub span: Span,
    pub entries: Vec<Entry>,
}

/// Every object of a file, JSONC or markdown frontmatter; `None` when it does not parse.
pub fn containers(text: &str, syntax: Syntax) -> Option<Vec<Container>> {
    match syntax {
        Syntax::Jsonc => jsonc_containers(text),
        Syntax::Yaml => yaml_containers(text),
    }
}

/// The container holding the entry whose key starts at `key_start`, and its index.
pub fn entry_at(containers: &[Container], key_start: usize) -> Option<(&Container, usize)> {
    containers.iter().find_map(|c| {
        c.entries
            .iter()
            .position(|e| e.key.start == key_start)
            .map(|i| (c, i))
    })
}

fn jsonc_containers(text: &str) -> Option<Vec<Container>> {
    use jsonc_parser::ast;
    use jsonc_parser::common::Ranged;
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = text.get(bom..)?;
    let parsed = jsonc_parser::parse_to_ast(
        body,
        &jsonc_parser::CollectOptions {
            comments: jsonc_parser::CommentCollectionStrategy::Off,
            tokens: false,
        },
        &jsonc_parser::ParseOptions::default(),
    )
    .ok()?;
    fn walk(v: &ast::Value, bom: usize, out: &mut Vec<Container>) {
        match v {
            ast::Value::Object(o) => {
                let mut entries = Vec::new();
                for p in &o.properties {
                    let kr = match &p.name {
                        ast::ObjectPropName::String(s) => s.range,
                        ast::ObjectPropName::Word(w) => w.range,
                    };
                    let vr = p.value.range();
                    entries.push(Entry {
                        key: Span::new(bom + kr.start, bom + kr.end),
                        value: Span::new(bom + vr.start, bom + vr.end),
                    });
                }
                let r = o.range();
                out.push(Container {
                    syntax: Syntax::Jsonc,
                    span: Span::new(bom + r.start, bom + r.end),
                    entries,
                });
                for p in &o.properties {
                    walk(&p.value, bom, out);
                }
            }
            ast::Value::Array(a) => {
                for e in &a.elements {
                    walk(e, bom, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(parsed.value.as_ref()?, bom, &mut out);
    Some(out)
}

fn yaml_containers(text: &str) -> Option<Vec<Container>> {
    let Frontmatter::Data(node) = frontmatter::parse(text, crate::source::SourceId(0)) else {
        return None;
    };
    fn walk(n: &Node, out: &mut Vec<Container>) {
        match &n.value {
            Value::Object(o) => {
                let mut entries = Vec::new();
                for (_, v) in o.iter() {
                    if let Some(k) = v.key {
                        entries.push(Entry {
                            key: k.span,
                            value: v.loc.span,
                        });
                    }
                }
                // js-yaml refuses duplicate keys, so the mapping's order is the written
                // order except for index keys, which JavaScript moves first.
                entries.sort_by_key(|e| e.key.start);
                out.push(Container {
                    syntax: Syntax::Yaml,
                    span: n.loc.span,
                    entries,
                });
                for (_, v) in o.iter() {
                    walk(v, out);
                }
            }
            Value::Array(items) => {
                for i in items {
                    walk(i, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&node, &mut out);
    Some(out)
}

/// The file's line ending (`\r\n` when it uses any).
pub fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

fn line_start(text: &str, at: usize) -> usize {
    text.get(..at)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// The offset just past the end of the line holding `at` (past its `\n`; the end of the
/// text on the last line).
fn next_line(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| at + i + 1)
}

/// Only spaces and tabs before `at` on its line.
fn starts_line(text: &str, at: usize) -> bool {
    text.get(line_start(text, at)..at)
        .is_some_and(|t| t.chars().all(|c| c == ' ' || c == '\t'))
}

/// Skip JSONC white space and comments from `at`; the offset of the next token.
fn skip_trivia(text: &str, mut at: usize) -> usize {
    let b = text.as_bytes();
    loop {
        match b.get(at) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => at += 1,
            Some(b'/') if b.get(at + 1) == Some(&b'/') => at = next_line(text, at),
            Some(b'/') if b.get(at + 1) == Some(&b'*') => {
                match text.get(at + 2..).and_then(|t| t.find("*/")) {
                    Some(i) => at += 2 + i + 2,
                    None => return text.len(),
                }
            }
            _ => return at,
        }
    }
}

/// The rest of the line after `at` is blank or a `//` comment.
fn rest_of_line_blank(text: &str, at: usize) -> bool {
    let end = next_line(text, at);
    let rest = text
        .get(at..end)
        .unwrap_or("")
        .trim_end_matches(['\n', '\r']);
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.is_empty() || rest.starts_with("//") || rest.starts_with('#')
}

/// The offset of the comma after entry `e` of a JSONC object, if any.
fn comma_after(text: &str, e: &Entry) -> Option<usize> {
    let at = skip_trivia(text, e.value.end);
    (text.as_bytes().get(at) == Some(&b',')).then_some(at)
}

/// The edits deleting entry `i` of `c`, with its comma and, when it has its line to
/// itself, the whole line. `None` when the entry cannot be cut out cleanly (a YAML entry
/// spanning lines or sharing its line).
pub fn delete(text: &str, c: &Container, i: usize) -> Option<Vec<Edit>> {
    let e = c.entries.get(i)?;
    match c.syntax {
        Syntax::Yaml => {
            let (start, end) = yaml_line(text, e)?;
            Some(vec![Edit::delete(start, end)])
        }
        Syntax::Jsonc => {
            if let Some(comma) = comma_after(text, e) {
                let end = comma + 1;
                if starts_line(text, e.key.start) && rest_of_line_blank(text, end) {
                    Some(vec![Edit::delete(
                        line_start(text, e.key.start),
                        next_line(text, end),
                    )])
                } else {
                    let end = skip_spaces(text, end);
                    Some(vec![Edit::delete(e.key.start, end)])
                }
            } else if i > 0 {
                // The last entry: the comma before it goes.
                let prev = c.entries.get(i - 1)?;
                let comma = comma_after(text, prev)?;
                if starts_line(text, e.key.start) && rest_of_line_blank(text, e.value.end) {
                    Some(vec![
                        Edit::delete(comma, comma + 1),
                        Edit::delete(line_start(text, e.key.start), next_line(text, e.value.end)),
                    ])
                } else {
                    Some(vec![Edit::delete(comma, e.value.end)])
                }
            } else if starts_line(text, e.key.start) && rest_of_line_blank(text, e.value.end) {
                Some(vec![Edit::delete(
                    line_start(text, e.key.start),
                    next_line(text, e.value.end),
                )])
            } else {
                Some(vec![Edit::delete(e.key.start, e.value.end)])
            }
        }
    }
}

/// The edit deleting the line comment starting at `at` (to the end of its line): its whole
/// line when nothing else is on it, else the comment and the blanks before it.
pub fn delete_line_comment(text: &str, at: usize) -> Option<Edit> {
    let end = next_line(text, at);
    let body_end = if text.get(..end)?.ends_with("\r\n") {
        end - 2
    } else if text.get(..end)?.ends_with('\n') {
        end - 1
    } else {
        end
    };
    if starts_line(text, at) {
        Some(Edit::delete(line_start(text, at), end))
    } else {
        let before = text.get(..at)?;
        let start = before.trim_end_matches([' ', '\t']).len();
        Some(Edit::delete(start, body_end))
    }
}

fn skip_spaces(text: &str, mut at: usize) -> usize {
    while matches!(text.as_bytes().get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

/// A YAML entry that has its lines to itself: the key starts its line and the value ends
/// on the key's line. The range of that whole line.
fn yaml_line(text: &str, e: &Entry) -> Option<(usize, usize)> {
    let start = line_start(text, e.key.start);
    let end = next_line(text, e.key.start);
    (starts_line(text, e.key.start) && e.value.end < end && end <= text.len() && end > 0)
        .then_some((start, end))
}

/// The edits moving entry `i` of `c` to just after entry `j` (`j > i`), keeping its text
/// (and, in YAML, its line) whole. `None` when either cannot be moved cleanly.
pub fn move_after(text: &str, c: &Container, i: usize, j: usize) -> Option<Vec<Edit>> {
    if j <= i {
        return None;
    }
    let e = c.entries.get(i)?;
    let t = c.entries.get(j)?;
    match c.syntax {
        Syntax::Yaml => {
            let (s, end) = yaml_line(text, e)?;
            let (ts, tend) = yaml_line(text, t)?;
            let indent = |at: usize| e_indent(text, at);
            if indent(s) != indent(ts) {
                return None;
            }
            let mut line = text.get(s..end)?.to_string();
            if !line.ends_with('\n') {
                line.push_str(newline(text));
            }
            if !text.get(..tend)?.ends_with('\n') {
                return None;
            }
            Some(vec![Edit::delete(s, end), Edit::insert(tend, line)])
        }
        Syntax::Jsonc => {
            let mut edits = delete(text, c, i)?;
            let member = text.get(e.key.start..e.value.end)?;
            // A comment at the end of the moved entry's line goes with it.
            let own_line = edits
                .iter()
                .any(|d| d.span.start == line_start(text, e.key.start));
            let comment = if own_line {
                trailing_comment(text, comma_after(text, e).map_or(e.value.end, |c| c + 1))
            } else {
                None
            };
            let target_comma = comma_after(text, t);
            let after_target = target_comma.map_or(t.value.end, |c| c + 1);
            let comma = if target_comma.is_some() { "," } else { "" };
            if starts_line(text, t.key.start) && rest_of_line_blank(text, after_target) {
                // A line of its own after the target's line.
                let at = next_line(text, after_target);
                if !text.get(..at)?.ends_with('\n') {
                    return None;
                }
                let indent = text.get(line_start(text, t.key.start)..t.key.start)?;
                let comment = comment.map_or(String::new(), |c| format!(" {c}"));
                if target_comma.is_none() {
                    edits.push(Edit::insert(t.value.end, ",".into()));
                }
                edits.push(Edit::insert(
                    at,
                    format!("{indent}{member}{comma}{comment}{}", newline(text)),
                ));
            } else {
                match target_comma {
                    Some(c) => edits.push(Edit::insert(c + 1, format!(" {member},"))),
                    None => edits.push(Edit::insert(t.value.end, format!(", {member}"))),
                }
            }
            // The deleted span must end before the target starts.
            if edits
                .iter()
                .any(|x| x.span.end > t.key.start && x.span.start < t.key.start)
            {
                return None;
            }
            Some(edits)
        }
    }
}

/// The start of the comment lines directly above the line starting at `start` (no blank
/// line between): the banner that heads the entry there. `start` when there is none.
fn heading_start(text: &str, start: usize, yaml: bool) -> usize {
    let mut at = start;
    while at > 0 {
        let prev = line_start(text, at - 1);
        let line = text.get(prev..at).unwrap_or("").trim();
        let comment = if yaml {
            line.starts_with('#')
        } else {
            line.starts_with("//") || (line.starts_with("/*") && line.ends_with("*/"))
        };
        if !comment {
            break;
        }
        at = prev;
    }
    at
}

/// Is the line starting at `at` blank (or the end of the text)?
fn blank_line(text: &str, at: usize) -> bool {
    text.get(at..next_line(text, at))
        .is_none_or(|l| l.trim().is_empty())
}

/// The edits moving entry `j` of `c` before its first entry: a catch-all written last,
/// moved to the top of its block in one move, so the rules it overrode keep their order.
/// Comment lines heading either entry stay with it (a banner above the first rule keeps
/// heading it, the catch-all's own banner travels with it), and no blank line is left
/// doubled. `None` when it cannot be moved cleanly.
pub fn move_first(text: &str, c: &Container, j: usize) -> Option<Vec<Edit>> {
    if j == 0 {
        return None;
    }
    let e = c.entries.get(j)?;
    let first = c.entries.first()?;
    let yaml = c.syntax == Syntax::Yaml;
    let own_lines = starts_line(text, e.key.start)
        && starts_line(text, first.key.start)
        && line_start(text, e.key.start) != line_start(text, first.key.start);
    if yaml {
        let (s, end) = yaml_line(text, e)?;
        let (fs, _) = yaml_line(text, first)?;
        if e_indent(text, s) != e_indent(text, fs) || !text.get(..end)?.ends_with('\n') {
            return None;
        }
        let hs = heading_start(text, s, true);
        let to = heading_start(text, fs, true);
        let block = text.get(hs..end)?.to_string();
        let mut edits = vec![Edit::delete(hs, end), Edit::insert(to, block)];
        tidy_blank(text, hs, end, &mut edits);
        return Some(edits);
    }
    let member = text.get(e.key.start..e.value.end)?;
    if !own_lines {
        // One line: `{"a": 1, "*": "ask"}` becomes `{"*": "ask", "a": 1}`.
        let mut edits = delete(text, c, j)?;
        edits.push(Edit::insert(first.key.start, format!("{member}, ")));
        return Some(edits);
    }
    let mut edits = delete(text, c, j)?;
    // The whole line went (it had its line to itself): take its banner along.
    let line = line_start(text, e.key.start);
    let whole = edits.iter().position(|d| d.span.start == line)?;
    let hs = heading_start(text, line, false);
    let end = edits.get(whole)?.span.end;
    if let Some(d) = edits.get_mut(whole) {
        d.span = Span::new(hs, end);
    }
    let banner = text.get(hs..line)?;
    let comment = trailing_comment(text, comma_after(text, e).map_or(e.value.end, |c| c + 1))
        .map_or(String::new(), |c| format!(" {c}"));
    let indent = text.get(line_start(text, first.key.start)..first.key.start)?;
    let to = heading_start(text, line_start(text, first.key.start), false);
    edits.push(Edit::insert(
        to,
        format!("{banner}{indent}{member},{comment}{}", newline(text)),
    ));
    tidy_blank(text, hs, end, &mut edits);
    Some(edits)
}

/// The edits moving entries `group` of `c` (in written order, each on its own line, all
/// before `j`) to just after entry `j`, keeping their order and their trailing comments:
/// the restricting rules a catch-all written last overrides, moved after it together when
/// moving the catch-all first would widen. `None` unless every line moves cleanly.
pub fn move_group_after(text: &str, c: &Container, group: &[usize], j: usize) -> Option<Vec<Edit>> {
    let t = c.entries.get(j)?;
    if group.is_empty() || group.iter().any(|&i| i >= j) || !starts_line(text, t.key.start) {
        return None;
    }
    let nl = newline(text);
    let mut edits = Vec::new();
    let mut block = String::new();
    match c.syntax {
        Syntax::Yaml => {
            for &i in group {
                let (s, end) = yaml_line(text, c.entries.get(i)?)?;
                let mut line = text.get(s..end)?.to_string();
                if !line.ends_with('\n') {
                    line.push_str(nl);
                }
                edits.push(Edit::delete(s, end));
                block.push_str(&line);
            }
            let (_, tend) = yaml_line(text, t)?;
            if !text.get(..tend)?.ends_with('\n') {
                return None;
            }
            edits.push(Edit::insert(tend, block));
        }
        Syntax::Jsonc => {
            let target_comma = comma_after(text, t);
            let after_target = target_comma.map_or(t.value.end, |c| c + 1);
            let at = next_line(text, after_target);
            if !rest_of_line_blank(text, after_target) || !text.get(..at)?.ends_with('\n') {
                return None;
            }
            for (k, &i) in group.iter().enumerate() {
                let e = c.entries.get(i)?;
                // Its line to itself, with its comma (never the last entry: `j` follows).
                let comma = comma_after(text, e)?;
                if !starts_line(text, e.key.start) || !rest_of_line_blank(text, comma + 1) {
                    return None;
                }
                let start = line_start(text, e.key.start);
                edits.push(Edit::delete(start, next_line(text, comma + 1)));
                let indent = text.get(start..e.key.start)?;
                let member = text.get(e.key.start..e.value.end)?;
                let last = k + 1 == group.len();
                let sep = if !last || target_comma.is_some() {
                    ","
                } else {
                    ""
                };
                let comment =
                    trailing_comment(text, comma + 1).map_or(String::new(), |c| format!(" {c}"));
                block.push_str(&format!("{indent}{member}{sep}{comment}{nl}"));
            }
            if target_comma.is_none() {
                edits.push(Edit::insert(t.value.end, ",".into()));
            }
            edits.push(Edit::insert(at, block));
        }
    }
    Some(edits)
}

/// After deleting the lines `start..end`: when a blank line before them would now meet a
/// blank line or the block's closing line after them, the blank line goes too.
fn tidy_blank(text: &str, start: usize, end: usize, edits: &mut [Edit]) {
    if start == 0 {
        return;
    }
    let prev = line_start(text, start - 1);
    if !blank_line(text, prev) {
        return;
    }
    let next = text.get(end..next_line(text, end)).unwrap_or("").trim();
    if next.is_empty() || next.starts_with('}') || next.starts_with("---") {
        for d in edits.iter_mut() {
            if d.span.start == start && d.text.is_empty() {
                d.span = Span::new(prev, d.span.end);
            }
        }
    }
}

/// A `//` or `/* */` comment closing the line after `at` (white space before it).
fn trailing_comment(text: &str, at: usize) -> Option<&str> {
    let end = next_line(text, at);
    let rest = text.get(at..end)?.trim_end_matches(['\n', '\r']).trim();
    (rest.starts_with("//") || (rest.starts_with("/*") && rest.ends_with("*/"))).then_some(rest)
}

fn e_indent(text: &str, line_start: usize) -> &str {
    let rest = text.get(line_start..).unwrap_or("");
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    rest.get(..n).unwrap_or("")
}

/// A key or scalar written for `syntax`: JSON's quoted string (also a YAML double-quoted
/// scalar, whose escapes JSON's are a subset of).
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// An action written for `syntax`: quoted in JSONC, plain in YAML (`deny`).
pub fn action_text(syntax: Syntax, action: &str) -> String {
    match syntax {
        Syntax::Jsonc => quoted(action),
        Syntax::Yaml => action.to_string(),
    }
}

/// An object of (key, action) entries written on one line for `syntax`
/// (`{"*": "allow", "sed -i *": "deny"}`; YAML's flow mapping in frontmatter).
pub fn object_text(syntax: Syntax, entries: &[(String, String)]) -> String {
    let inner: Vec<String> = entries
        .iter()
        .map(|(k, a)| format!("{}: {}", quoted(k), action_text(syntax, a)))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// The edit writing `entries` (key, value already written for the syntax) after the last
/// entry of `c`, each on a line of its own indented as that entry (on its line, after a
/// comma, when the object is written on one line). `None` when `c` is empty or its last
/// entry cannot be followed cleanly (a YAML entry whose value spans lines).
pub fn append(text: &str, c: &Container, entries: &[(String, String)]) -> Option<Vec<Edit>> {
    let last = c.entries.last()?;
    let nl = newline(text);
    let written: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}: {v}", quoted(k)))
        .collect();
    match c.syntax {
        Syntax::Yaml => {
            let (start, end) = yaml_line(text, last)?;
            let indent = text.get(start..last.key.start)?;
            let mut ins = String::new();
            if !text.get(..end)?.ends_with('\n') {
                ins.push_str(nl);
            }
            for w in &written {
                ins.push_str(&format!("{indent}{w}{nl}"));
            }
            Some(vec![Edit::insert(end, ins)])
        }
        Syntax::Jsonc => {
            let own_line = starts_line(text, last.key.start);
            let indent = if own_line {
                text.get(line_start(text, last.key.start)..last.key.start)?
            } else {
                ""
            };
            let sep = |s: &mut String| {
                if own_line {
                    s.push_str(nl);
                    s.push_str(indent);
                } else {
                    s.push(' ');
                }
            };
            let mut ins = String::new();
            match comma_after(text, last) {
                // A trailing comma stays where it is: each new entry ends with its own.
                Some(comma) => {
                    for w in &written {
                        sep(&mut ins);
                        ins.push_str(w);
                        ins.push(',');
                    }
                    Some(vec![Edit::insert(comma + 1, ins)])
                }
                None => {
                    for w in &written {
                        ins.push(',');
                        sep(&mut ins);
                        ins.push_str(w);
                    }
                    Some(vec![Edit::insert(last.value.end, ins)])
                }
            }
        }
    }
}

/// The edit replacing the value of entry `e` by `value` (already written for the syntax).
pub fn replace_value(e: &Entry, value: String) -> Edit {
    Edit {
        span: e.value,
        text: value,
    }
}

/// The container `c` is the value of (its parent), with the index of the entry holding it.
pub fn parent<'c>(containers: &'c [Container], c: &Container) -> Option<(&'c Container, usize)> {
    containers.iter().find_map(|p| {
        p.entries
            .iter()
            .position(|e| e.value == c.span)
            .map(|i| (p, i))
    })
}

/// The container that is the value of entry `e`, if its value is an object.
pub fn child<'c>(containers: &'c [Container], e: &Entry) -> Option<&'c Container> {
    containers.iter().find(|c| c.span == e.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn del(text: &str, key: &str) -> String {
        let cs = containers(text, Syntax::Jsonc).unwrap();
        let at = text.find(key).unwrap();
        let (c, i) = entry_at(&cs, at).unwrap();
        apply(text, &delete(text, c, i).unwrap()).unwrap()
    }

    #[test]
    fn deletes_json_entries_with_their_comma_and_line() {
        let t = "{\n  \"a\": 1,\n  \"b\": 2, // why\n  \"c\": 3\n}\n";
        assert_eq!(del(t, "\"a\""), "{\n  \"b\": 2, // why\n  \"c\": 3\n}\n");
        assert_eq!(del(t, "\"b\""), "{\n  \"a\": 1,\n  \"c\": 3\n}\n");
        assert_eq!(del(t, "\"c\""), "{\n  \"a\": 1,\n  \"b\": 2 // why\n}\n");
        let one = "{\"x\": {\"a\": 1, \"b\": 2}}";
        assert_eq!(del(one, "\"a\""), "{\"x\": {\"b\": 2}}");
        assert_eq!(del(one, "\"b\""), "{\"x\": {\"a\": 1}}");
        assert_eq!(del("{\"a\": 1}", "\"a\""), "{}");
    }

    #[test]
    fn moves_json_entries_after_another() {
        let t = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        let cs = containers(t, Syntax::Jsonc).unwrap();
        let e = move_after(t, &cs[0], 0, 1).unwrap();
        assert_eq!(apply(t, &e).unwrap(), "{\n  \"b\": 2,\n  \"a\": 1\n}\n");
        let t = "{\n  \"a\": 1, // one\n  \"b\": 2, // two\n  \"c\": 3\n}\n";
        let cs = containers(t, Syntax::Jsonc).unwrap();
        let e = move_after(t, &cs[0], 0, 1).unwrap();
        assert_eq!(
            apply(t, &e).unwrap(),
            "{\n  \"b\": 2, // two\n  \"a\": 1, // one\n  \"c\": 3\n}\n"
        );
        let e = move_after(t, &cs[0], 0, 2).unwrap();
        assert_eq!(
            apply(t, &e).unwrap(),
            "{\n  \"b\": 2, // two\n  \"c\": 3,\n  \"a\": 1 // one\n}\n"
        );
        let t = "{\"a\": 1, \"b\": 2, \"c\": 3}";
        let cs = containers(t, Syntax::Jsonc).unwrap();
        let e = move_after(t, &cs[0], 0, 1).unwrap();
        assert_eq!(apply(t, &e).unwrap(), "{\"b\": 2, \"a\": 1, \"c\": 3}");
    }

    #[test]
    fn moves_a_catch_all_first_with_its_banner() {
        let t = "{\n  // never wipe\n  \"rm *\": \"deny\",\n  \"git *\": \"ask\",\n\n  // the rest\n  \"*\": \"allow\" // ok\n}\n";
        let cs = containers(t, Syntax::Jsonc).unwrap();
        let e = move_first(t, &cs[0], 2).unwrap();
        assert_eq!(
            apply(t, &e).unwrap(),
            "{\n  // the rest\n  \"*\": \"allow\", // ok\n  // never wipe\n  \"rm *\": \"deny\",\n  \"git *\": \"ask\"\n}\n"
        );
        let t = "{\"a\": 1, \"b\": 2, \"*\": 3}";
        let cs = containers(t, Syntax::Jsonc).unwrap();
        let e = move_first(t, &cs[0], 2).unwrap();
        assert_eq!(apply(t, &e).unwrap(), "{\"*\": 3, \"a\": 1, \"b\": 2}");
        let t = "---\npermission:\n  bash:\n    # no\n    \"rm *\": deny\n    \"*\": allow\n---\nbody\n";
        let cs = containers(t, Syntax::Yaml).unwrap();
        let (c, i) = entry_at(&cs, t.find("\"*\"").unwrap()).unwrap();
        let moved = apply(t, &move_first(t, c, i).unwrap()).unwrap();
        assert_eq!(
            moved,
            "---\npermission:\n  bash:\n    \"*\": allow\n    # no\n    \"rm *\": deny\n---\nbody\n"
        );
    }

    #[test]
    fn moves_a_group_after_a_catch_all_in_order() {
        let t = "{\n  \"a\": 1, // one\n  \"b\": 2,\n  \"c\": 3,\n  \"*\": 4\n}\n";
        let cs = containers(t, Syntax::Jsonc).unwrap();
        let e = move_group_after(t, &cs[0], &[0, 2], 3).unwrap();
        assert_eq!(
            apply(t, &e).unwrap(),
            "{\n  \"b\": 2,\n  \"*\": 4,\n  \"a\": 1, // one\n  \"c\": 3\n}\n"
        );
        let t = "---\npermission:\n  bash:\n    a: deny\n    b: allow\n    \"*\": ask\n---\n";
        let cs = containers(t, Syntax::Yaml).unwrap();
        let (c, _) = entry_at(&cs, t.find("a:").unwrap()).unwrap();
        let e = move_group_after(t, c, &[0], 2).unwrap();
        assert_eq!(
            apply(t, &e).unwrap(),
            "---\npermission:\n  bash:\n    b: allow\n    \"*\": ask\n    a: deny\n---\n"
        );
    }

    #[test]
    fn yaml_lines() {
        let t =
            "---\npermission:\n  bash:\n    \"*\": deny # no\n    \"git *\": allow\n---\nbody\n";
        let cs = containers(t, Syntax::Yaml).unwrap();
        let at = t.find("\"*\"").unwrap();
        let (c, i) = entry_at(&cs, at).unwrap();
        let moved = apply(t, &move_after(t, c, i, i + 1).unwrap()).unwrap();
        assert_eq!(
            moved,
            "---\npermission:\n  bash:\n    \"git *\": allow\n    \"*\": deny # no\n---\nbody\n"
        );
        let gone = apply(t, &delete(t, c, i).unwrap()).unwrap();
        assert_eq!(
            gone,
            "---\npermission:\n  bash:\n    \"git *\": allow\n---\nbody\n"
        );
    }
}
