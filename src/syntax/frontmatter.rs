//! The frontmatter of markdown agent and mode files, read as OpenCode 1.18.34 reads it.
//!
//! OpenCode reads an agent file with `ConfigMarkdown.parse`:
//!
//! ```js
//! function parse(t) { try { return matter(t) } catch { return matter(sanitize(t)) } }
//! ```
//!
//! `matter` is **gray-matter 4** (with `strip-bom-string`), whose YAML engine is **js-yaml 3**
//! `safeLoad` (DEFAULT_SAFE_SCHEMA). A throw from the second call makes the loader skip the
//! file silently. The agent is then `{name: derived, ...data, prompt: content.trim()}`.
//!
//! This module reproduces, exactly:
//!
//! * gray-matter's fences: the BOM, `---` at offset 0, `----` meaning "no frontmatter", the
//!   language tag after `---` (`--- ` is YAML, `---json` is `JSON.parse`, `---js` is `eval`,
//!   an unknown tag throws; `Object.prototype` names such as `---constructor` behave as
//!   gray-matter's plain-object engine table makes them behave), the closing fence as the
//!   first `"\n---"`, an unclosed fence, and the "empty" test (`/^\s*#[^\n]+/gm` removed,
//!   then `trim()`), which skips the engine entirely;
//! * the gray-matter cache bug: gray-matter caches the file object before parsing, so when
//!   `sanitize` leaves the text unchanged the retry returns `data: {}` and the whole file as
//!   content ([`Frontmatter::BrokenKept`]); when `sanitize` changed the text and it still
//!   throws, the file is dropped ([`Frontmatter::BrokenDropped`]); when it fixes it, the
//!   sanitized text's data is used. `sanitize` is OpenCode's own function, character for
//!   character (it also turns CRLF into LF, so a broken multi-line CRLF frontmatter is
//!   always dropped, and it never applies to a file with a BOM: Bun's `readText` keeps it);
//! * js-yaml 3's value model: implicit types (null `~ null Null NULL` and empty; bool only
//!   `true True TRUE false False FALSE`, so `yes/no/on/off` are strings; int with `0x`, `0b`,
//!   leading-`0` octal, `_` and base 60; float with `.inf`, `.nan`, base 60; timestamps),
//!   explicit tags (`!!str`, `!!int`, …, `!!binary`, `!!set`, `!!omap`, `!!pairs`, `!` and
//!   unknown tags), keys turned into strings with JavaScript `String()` (`10` → `"10"`,
//!   `0x1F` → `"31"`, `~` → `"null"`, a sequence → its elements joined by `,`, a mapping →
//!   `"[object Object]"`, nested sequences refused), `duplicated mapping key`, merge keys
//!   (`<<` with a mapping or a list of them: merged keys come first, an explicit key
//!   overrides in place, a later explicit duplicate is an error), one document only, the
//!   null byte and non-printable character checks;
//! * the spread `{...data}`: a mapping is itself, a sequence gives `"0"`, `"1"`, … keys, a
//!   string gives one key per UTF-16 code unit, anything else gives `{}`.
//!
//! Approximations (documented where they are made):
//!
//! * YAML *syntax* is read by `granit-parser`, a YAML 1.2 parser, not by js-yaml's own
//!   scanner. Where js-yaml is more lenient than YAML 1.2 and the difference is plausible in
//!   a hand-written file, a text granit refuses is read again with those spots rewritten the
//!   way js-yaml reads them (`relax`: tab indentation, `{key:[…]}`, empty flow entries,
//!   `"a"#c`, `key: "a"b: c`, `key: ? k`). Checked against the gray-matter + js-yaml code
//!   extracted from the OpenCode 1.18.34 binary on ~40 000 generated files: realistic agent
//!   files agree completely (kind, keys, key order, values); randomly mutated YAML agrees on
//!   about 99.7%. Known differences, all exotic: js-yaml's bug that hangs an entry after an
//!   empty `- ` item of a nested sequence onto the inner sequence; multi-line plain scalars
//!   in flow collections continued at a lower indentation, and indented top-level scalars
//!   continued at column 0 (js-yaml refuses both); DEL and C1 control characters in quoted
//!   scalars and control characters in comments (js-yaml accepts them); a BOM after the
//!   start of the text (content for js-yaml). Error messages and positions of syntax errors
//!   are granit's.
//! * A timestamp (`2024-01-01`) becomes [`Value::Number`] holding the JavaScript
//!   `toISOString()` text (`"2024-01-01T00:00:00.000Z"`): not a string, so a schema that
//!   wants a string refuses it, and its preview is what OpenCode prints (`got
//!   2024-01-01T00:00:00.000Z`). As a *key* it is `Date.prototype.toString()` in UTC (OpenCode
//!   would use the local time zone).
//! * `!!binary` becomes an array of byte numbers (a `Buffer` in OpenCode).
//! * `---valueOf` (an `Object.prototype` name as language) gives `{parse: <function>}` in
//!   OpenCode; here `{}`.
//! * A string spread into index keys: an astral character is two UTF-16 code units, so two
//!   keys, each holding a lone surrogate; both are given U+FFFD here.
//! * Aliases are copied. An alias to a collection that contains it (a cyclic structure in
//!   js-yaml) is refused as a YAML error, and so are inputs that expand beyond
//!   [`MAX_NODES`] nodes or [`MAX_STRING_BYTES`] bytes of strings (billion laughs), or nest
//!   deeper than [`MAX_DEPTH`]. OpenCode has none of these limits.
//! * gray-matter's cache is process-wide: a text that already failed once in the same
//!   OpenCode process is `BrokenKept` on every later read. [`parse`] treats each file alone;
//!   [`parse_cached`] with one [`MatterCache`] per simulated process reproduces the sharing.
//!
//! Every span points into the original text; after `sanitize`, spans are mapped back
//! through the rewritten lines.

use super::jsonc;
use super::value::{JsObject, Node, Value, is_array_index};
use crate::source::{Loc, SourceId, Span};
use granit_parser::{Event, Parser, ScalarStyle, ScanError, StructureStyle};
use std::collections::{HashMap, HashSet};

/// Most YAML nodes one frontmatter may produce, alias copies and merges included.
pub const MAX_NODES: usize = 100_000;
/// Most bytes of string content one frontmatter may produce, alias copies included.
pub const MAX_STRING_BYTES: usize = 64 << 20;
/// Deepest nesting of YAML collections read.
pub const MAX_DEPTH: usize = 256;

/// Why frontmatter could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontmatterError {
    pub loc: Loc,
    pub message: String,
}

/// What OpenCode makes of a markdown file's frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub enum Frontmatter {
    /// No frontmatter (no opening fence, or `----`): the whole file is the prompt; no rules.
    Absent,
    /// The data object OpenCode decodes as the agent (`{name: derived, ...data, prompt}`):
    /// always a [`Value::Object`]. For a YAML mapping, that mapping; for a top-level list or
    /// string, the JavaScript spread result (index keys, characters); for empty or
    /// comment-only frontmatter and other scalars, an empty object. Spans point into the
    /// original text.
    Data(Node),
    /// The frontmatter throws and `sanitize` leaves the text unchanged (or the language tag is
    /// unknown): OpenCode loads the file with the whole file as prompt and NO rules from it.
    BrokenKept(FrontmatterError),
    /// The frontmatter throws, `sanitize` changed the text and it still throws: OpenCode
    /// silently drops the file. The error is the one left after `sanitize`.
    BrokenDropped(FrontmatterError),
    /// `---js` / `---javascript`: OpenCode evaluates the frontmatter as JavaScript.
    Executable(FrontmatterError),
    /// Past one of permaudit's limits ([`MAX_NODES`], [`MAX_STRING_BYTES`], [`MAX_DEPTH`]),
    /// which OpenCode does not have: what OpenCode makes of the file is not known.
    OverLimit(FrontmatterError),
}

/// Every limit error's message says this, and [`parse_cached`] tells limits from YAML
/// errors by it.
const PAST_LIMIT: &str = "past permaudit's limit (OpenCode has none; see the README's \"Limits\")";

impl FrontmatterError {
    fn is_limit(&self) -> bool {
        self.message.ends_with(PAST_LIMIT)
    }
}

/// Read a markdown file's frontmatter as OpenCode does, the file taken alone.
pub fn parse(text: &str, source: SourceId) -> Frontmatter {
    parse_cached(text, source, &mut MatterCache::default())
}

/// gray-matter's process-wide cache, as far as it changes results: the texts (BOM removed)
/// whose parse already threw in this OpenCode process. gray-matter stores the unparsed file
/// object under the text *before* parsing, so every later `matter()` of the same text returns
/// `data: {}` without parsing. (Texts that parsed fine return the same data again, so they
/// need no entry.)
#[derive(Debug, Clone, Default)]
pub struct MatterCache {
    failed: HashSet<String>,
}

/// [`parse`], sharing gray-matter's cache with earlier reads of the same OpenCode process.
/// Call it for every markdown file in the order OpenCode reads them.
pub fn parse_cached(text: &str, source: SourceId, cache: &mut MatterCache) -> Frontmatter {
    let identity = |o: usize| o;
    let cached_failure = |e: FrontmatterError| {
        Frontmatter::BrokenKept(FrontmatterError {
            loc: e.loc,
            message: format!(
                "{}; the same text already failed earlier in this OpenCode process, so gray-matter's cache returns it unparsed",
                e.message
            ),
        })
    };
    let first_err = match matter(text, source, &identity) {
        // js-yaml would read on: no guess about what OpenCode makes of it.
        Err(e) if e.is_limit() => return Frontmatter::OverLimit(e),
        // A cache hit never throws: `data: {}`, content = the whole text.
        Err(e) if cache.failed.contains(strip_bom(text)) => return cached_failure(e),
        Ok(Out::Absent) => return Frontmatter::Absent,
        Ok(Out::Data(n)) => return Frontmatter::Data(n),
        Ok(Out::Exec(e)) => return Frontmatter::Executable(e),
        Err(e) => {
            cache.failed.insert(strip_bom(text).to_string());
            e
        }
    };
    let Some((sanitized, map)) = sanitize(text) else {
        return Frontmatter::BrokenKept(first_err);
    };
    if sanitized == text {
        // The retry hits the entry the first call cached: `data: {}`, the whole file.
        return Frontmatter::BrokenKept(first_err);
    }
    let to_orig = |o: usize| map.map(o);
    match matter(&sanitized, source, &to_orig) {
        Err(e) if e.is_limit() => Frontmatter::OverLimit(e),
        // A cache hit on the retry: `data: {}` (and the sanitized text as prompt).
        Err(e) if cache.failed.contains(strip_bom(&sanitized)) => cached_failure(e),
        Ok(Out::Absent) => Frontmatter::Absent,
        Ok(Out::Data(n)) => Frontmatter::Data(n),
        Ok(Out::Exec(e)) => Frontmatter::Executable(e),
        Err(e) => {
            cache.failed.insert(strip_bom(&sanitized).to_string());
            Frontmatter::BrokenDropped(e)
        }
    }
}

fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}

// ---------------------------------------------------------------------------------------
// JavaScript string helpers

/// JavaScript `\s` and the characters `String.prototype.trim` removes.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

fn js_trim(s: &str) -> &str {
    s.trim_matches(js_space)
}

/// A JavaScript line terminator (what `.` does not match and `^`/`$` see in `m` mode).
fn js_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

// ---------------------------------------------------------------------------------------
// OpenCode's sanitize

/// Where the pieces of a sanitized text came from.
#[derive(Debug, Default)]
struct OffsetMap {
    segs: Vec<Seg>,
}

#[derive(Debug)]
struct Seg {
    /// Start in the sanitized text.
    s: usize,
    len: usize,
    /// Start in the original text.
    q: usize,
    /// The piece is a copy of the original (offsets map one to one); otherwise every offset
    /// of it maps to `q`.
    same: bool,
}

impl OffsetMap {
    fn push(&mut self, s: usize, len: usize, q: usize, same: bool) {
        self.segs.push(Seg { s, len, q, same });
    }

    fn map(&self, off: usize) -> usize {
        let i = self.segs.partition_point(|g| g.s <= off);
        match i.checked_sub(1).and_then(|i| self.segs.get(i)) {
            None => off,
            Some(g) if g.same => g.q + (off - g.s).min(g.len),
            Some(g) => g.q,
        }
    }
}

/// OpenCode's `ConfigMarkdown.sanitize`:
///
/// ```js
/// const m = t.match(/^---\r?\n([\s\S]*?)\r?\n---/); if (!m) return t
/// const lines = m[1].split(/\r?\n/).flatMap(line => {
///   if (line.trim().startsWith("#") || line.trim() === "" || /^\s+/.test(line)) return [line]
///   const kv = line.match(/^([a-zA-Z_][a-zA-Z0-9_]*)\s*:\s*(.*)$/); if (!kv) return [line]
///   const v = kv[2].trim()
///   if (v === "" || v === ">" || v === "|" || v.startsWith('"') || v.startsWith("'")) return [line]
///   if (!v.includes(":")) return [line]
///   return [`${kv[1]}: |-`, `  ${v}`]
/// })
/// return t.replace(m[1], () => lines.join("\n"))
/// ```
///
/// `None` when the regex does not match (the text is returned unchanged).
fn sanitize(q: &str) -> Option<(String, OffsetMap)> {
    let rest = q.strip_prefix("---")?;
    let mut p = 3;
    if rest.starts_with('\r') {
        p += 1;
    }
    if !q.get(p..)?.starts_with('\n') {
        return None;
    }
    p += 1;
    // The lazy group ends at the first `\r?\n---`.
    let j = p + q.get(p..)?.find("\n---")?;
    let end = if j > p && q.as_bytes().get(j - 1) == Some(&b'\r') {
        j - 1
    } else {
        j
    };
    let z = q.get(p..end)?;
    // `t.replace(m[1], …)` replaces the first occurrence, which may start before `p`.
    let pos = q.find(z)?;

    let mut out = String::with_capacity(q.len() + 16);
    let mut map = OffsetMap::default();
    out.push_str(&q[..pos]);
    map.push(0, pos, 0, true);

    // Split `z` on /\r?\n/.
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, b) in z.bytes().enumerate() {
        if b == b'\n' {
            let e = if i > start && z.as_bytes().get(i - 1) == Some(&b'\r') {
                i - 1
            } else {
                i
            };
            lines.push((start, e));
            start = i + 1;
        }
    }
    lines.push((start, z.len()));

    for (n, &(ls, le)) in lines.iter().enumerate() {
        if n > 0 {
            let prev_end = lines[n - 1].1;
            map.push(out.len(), 1, pos + prev_end, false);
            out.push('\n');
        }
        let line = &z[ls..le];
        match sanitize_line(line) {
            None => {
                map.push(out.len(), line.len(), pos + ls, true);
                out.push_str(line);
            }
            Some((key, colon, v_off, v)) => {
                map.push(out.len(), key.len(), pos + ls, true);
                out.push_str(key);
                map.push(out.len(), 4, pos + ls + colon, false);
                out.push_str(": |-");
                map.push(out.len(), 3, pos + ls + v_off, false);
                out.push_str("\n  ");
                map.push(out.len(), v.len(), pos + ls + v_off, true);
                out.push_str(v);
            }
        }
    }
    let tail = pos + z.len();
    map.push(out.len(), q.len() - tail, tail, true);
    out.push_str(&q[tail..]);
    Some((out, map))
}

/// One line of `sanitize`: `Some((key, offset of ':', offset of value, value))` when the line
/// is rewritten to `key: |-` and `  value`.
fn sanitize_line(line: &str) -> Option<(&str, usize, usize, &str)> {
    let t = js_trim(line);
    if t.starts_with('#') || t.is_empty() || line.starts_with(js_space) {
        return None;
    }
    // ^([a-zA-Z_][a-zA-Z0-9_]*)\s*:\s*(.*)$
    let b = line.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    let key_len = b
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(b.len());
    let key = &line[..key_len];
    let after_key = &line[key_len..];
    let ws = after_key.len() - after_key.trim_start_matches(js_space).len();
    let colon = key_len + ws;
    if line.as_bytes().get(colon) != Some(&b':') {
        return None;
    }
    let after_colon = &line[colon + 1..];
    let v_all = after_colon.trim_start_matches(js_space);
    if v_all.contains(js_line_terminator) {
        return None;
    }
    let v_off = line.len() - v_all.len();
    let v = js_trim(v_all);
    if v.is_empty() || v == ">" || v == "|" || v.starts_with('"') || v.starts_with('\'') {
        return None;
    }
    if !v.contains(':') {
        return None;
    }
    Some((key, colon, v_off, v))
}

// ---------------------------------------------------------------------------------------
// gray-matter

enum Out {
    Absent,
    Data(Node),
    Exec(FrontmatterError),
}

/// What gray-matter's engine table gives for a language name (`opts.engines[name] ||
/// opts.engines[alias(name)]` on a plain object holding `yaml`, `json` and `javascript`).
enum Engine {
    Yaml,
    Json,
    JavaScript,
    /// The engine returns this string (then spread into characters).
    Text(String),
    /// The engine returns a value whose spread is `{}`.
    Nothing,
    /// The engine throws.
    Throws(String),
}

fn engine_for(name: &str, matter: &str) -> Engine {
    // `Object.prototype` members are found on the plain engine table. gray-matter calls
    // `{parse: f}.parse(str, opts)`, so `this` is that wrapper object.
    match name {
        "yaml" => return Engine::Yaml,
        "json" => return Engine::Json,
        "javascript" => return Engine::JavaScript,
        // `Object(str)`: a String object.
        "constructor" => return Engine::Text(matter.to_string()),
        "toString" | "toLocaleString" => return Engine::Text("[object Object]".into()),
        // Booleans, `undefined`, and the wrapper `{parse: fn}` (approximated by `{}`).
        "hasOwnProperty"
        | "propertyIsEnumerable"
        | "isPrototypeOf"
        | "__lookupGetter__"
        | "__lookupSetter__"
        | "valueOf" => return Engine::Nothing,
        "__defineGetter__" | "__defineSetter__" => {
            return Engine::Throws(format!("Object.prototype.{name} needs a function"));
        }
        "__proto__" => {
            return Engine::Throws(format!("expected \"{name}.parse\" to be a function"));
        }
        _ => {}
    }
    match name.to_lowercase().as_str() {
        "js" | "javascript" => Engine::JavaScript,
        "yaml" | "yml" => Engine::Yaml,
        _ => Engine::Throws(format!("gray-matter engine \"{name}\" is not registered")),
    }
}

/// gray-matter's `matter(input)` without options (the cache is handled by the caller).
/// Offsets inside `input` are mapped to the original text by `to_orig`.
fn matter(
    input: &str,
    source: SourceId,
    to_orig: &dyn Fn(usize) -> usize,
) -> Result<Out, FrontmatterError> {
    let loc = |s: usize, e: usize| Loc {
        source,
        span: Span::new(to_orig(s), to_orig(e).max(to_orig(s))),
    };
    if input.is_empty() {
        return Ok(Out::Absent);
    }
    let bom = if input.starts_with('\u{feff}') { 3 } else { 0 };
    let content = &input[bom..];
    let Some(after_open) = content.strip_prefix("---") else {
        return Ok(Out::Absent);
    };
    if after_open.starts_with('-') {
        return Ok(Out::Absent);
    }
    let open_end = bom + 3;
    let s = after_open;

    // language: str.slice(0, str.search(/\r?\n/)), trimmed.
    let nl = s.find('\n').map(|i| {
        if i > 0 && s.as_bytes().get(i - 1) == Some(&b'\r') {
            i - 1
        } else {
            i
        }
    });
    let (raw, lone_surrogate) = match nl {
        Some(i) => (&s[..i], false),
        // `slice(0, -1)`: all but the last UTF-16 code unit.
        None => match s.chars().next_back() {
            None => ("", false),
            Some(c) => (&s[..s.len() - c.len_utf8()], c.len_utf16() == 2),
        },
    };
    let name = js_trim(raw);
    let (language, body_start) = if lone_surrogate {
        // The name ends in a lone surrogate: no engine has such a name.
        return Err(FrontmatterError {
            loc: loc(open_end, input.len()),
            message: format!("gray-matter engine \"{raw}\" is not registered"),
        });
    } else if name.is_empty() {
        ("yaml", open_end)
    } else {
        (name, open_end + raw.len())
    };
    let body = &input[body_start..];
    let close = body.find("\n---").unwrap_or(body.len());
    let matter = &body[..close];
    let m_loc = loc(body_start, body_start + close);

    let empty_object = || Node {
        value: Value::Object(JsObject::new()),
        loc: m_loc,
        key: None,
    };
    if is_blank(matter) {
        return Ok(Out::Data(empty_object()));
    }
    let tag_loc = loc(open_end, open_end + raw.len());
    match engine_for(language, matter) {
        Engine::Yaml => {
            let to_o = |o: usize| to_orig(body_start + o);
            let (root, shift) = load_yaml(matter).map_err(|(s, e, message)| FrontmatterError {
                loc: Loc {
                    source,
                    span: Span::new(to_o(s), to_o(e).max(to_o(s))),
                },
                message,
            })?;
            let node = match root {
                None => empty_object(),
                Some(y) => to_node(y, source, &|o| to_o(shift + o)),
            };
            Ok(Out::Data(spread(node, m_loc)))
        }
        Engine::Json => {
            let to_o = |o: usize| to_orig(body_start + o);
            match jsonc::parse_as(matter, source, &to_o, jsonc::Dialect::StrictJson) {
                Ok(node) => Ok(Out::Data(spread(node, m_loc))),
                Err(e) => Err(FrontmatterError {
                    loc: e.loc,
                    message: format!("JSON.parse: {}", e.message),
                }),
            }
        }
        Engine::JavaScript => Ok(Out::Exec(FrontmatterError {
            loc: tag_loc,
            message: format!(
                "`---{language}` frontmatter is JavaScript, which OpenCode runs with eval()"
            ),
        })),
        Engine::Text(t) => Ok(Out::Data(spread(
            Node {
                value: Value::String(t),
                loc: m_loc,
                key: None,
            },
            m_loc,
        ))),
        Engine::Nothing => Ok(Out::Data(empty_object())),
        Engine::Throws(message) => Err(FrontmatterError {
            loc: tag_loc,
            message,
        }),
    }
}

/// gray-matter's emptiness test: `matter.replace(/^\s*#[^\n]+/gm, "").trim() === ""`.
fn is_blank(matter: &str) -> bool {
    let mut rest = String::with_capacity(matter.len());
    let mut i = 0;
    let mut prev: Option<char> = None;
    while i < matter.len() {
        let line_start = prev.is_none_or(js_line_terminator);
        if line_start {
            let tail = &matter[i..];
            let after_ws = tail.trim_start_matches(js_space);
            if let Some(after_hash) = after_ws.strip_prefix('#') {
                let n = after_hash.find('\n').unwrap_or(after_hash.len());
                if n > 0 {
                    let end = i + (tail.len() - after_hash.len()) + n;
                    prev = matter[..end].chars().next_back();
                    i = end;
                    continue;
                }
            }
        }
        let Some(c) = matter[i..].chars().next() else {
            break;
        };
        rest.push(c);
        prev = Some(c);
        i += c.len_utf8();
    }
    js_trim(&rest).is_empty()
}

/// `{...value}` as an object node.
fn spread(node: Node, root: Loc) -> Node {
    let obj = match node.value {
        Value::Object(o) => o,
        Value::Array(items) => {
            let mut o = JsObject::new();
            for (i, mut n) in items.into_iter().enumerate() {
                n.key = Some(n.loc);
                o.set(i.to_string(), n);
            }
            o
        }
        Value::String(s) => {
            let mut o = JsObject::new();
            let mut i = 0usize;
            for c in s.chars() {
                let units = c.len_utf16();
                for _ in 0..units {
                    let ch = if units == 1 { c } else { '\u{fffd}' };
                    o.set(
                        i.to_string(),
                        Node {
                            value: Value::String(ch.to_string()),
                            loc: node.loc,
                            key: Some(node.loc),
                        },
                    );
                    i += 1;
                }
            }
            o
        }
        _ => JsObject::new(),
    };
    Node {
        value: Value::Object(obj),
        loc: root,
        key: None,
    }
}

// ---------------------------------------------------------------------------------------
// js-yaml 3 values

#[derive(Debug, Clone)]
struct Y {
    v: YV,
    /// In matter coordinates.
    span: (usize, usize),
    /// The key's span, when this value is a mapping entry.
    key: Option<(usize, usize)>,
    /// Nodes in this subtree.
    weight: usize,
    /// String bytes in this subtree.
    bytes: usize,
    /// Collection levels in this subtree (0 for a scalar).
    height: usize,
    /// The subtree holds an alias to an unfinished collection.
    pending: bool,
}

/// A js-yaml result object: insertion order plus JavaScript's index-key-first order.
#[derive(Debug, Clone, Default)]
struct YMap {
    entries: Vec<(String, Y)>,
    index: HashMap<String, usize>,
}

impl YMap {
    fn contains(&self, k: &str) -> bool {
        self.index.contains_key(k)
    }

    /// `obj[k] = v`: an existing key keeps its position.
    fn set(&mut self, k: String, v: Y) {
        match self.index.get(&k) {
            Some(&i) => {
                if let Some(slot) = self.entries.get_mut(i) {
                    slot.1 = v;
                }
            }
            None => {
                self.index.insert(k.clone(), self.entries.len());
                self.entries.push((k, v));
            }
        }
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Positions in `Object.keys` order.
    fn order(&self) -> Vec<usize> {
        let mut idx: Vec<(u32, usize)> = Vec::new();
        let mut rest = Vec::new();
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match is_array_index(k) {
                Some(n) => idx.push((n, i)),
                None => rest.push(i),
            }
        }
        idx.sort_unstable();
        idx.into_iter().map(|(_, i)| i).chain(rest).collect()
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &Y)> {
        self.order()
            .into_iter()
            .filter_map(|i| self.entries.get(i).map(|(k, v)| (k.as_str(), v)))
    }

    fn into_entries(self) -> Vec<(String, Y)> {
        self.entries
    }
}

#[derive(Debug, Clone)]
enum YV {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// A `Date`: milliseconds since the epoch (NaN for an invalid date).
    Date(f64),
    /// A `Buffer`.
    Bytes(Vec<u8>),
    Seq(Vec<Y>),
    Map(YMap),
    /// An alias to a collection still being read (js-yaml: a reference to the unfinished
    /// object). Only a merge key can use it; anywhere else the value would be cyclic.
    Pending(usize),
}

impl Y {
    fn new(v: YV, span: (usize, usize)) -> Y {
        let (weight, bytes, height) = match &v {
            YV::Str(s) => (1, s.len(), 0),
            YV::Bytes(b) => (1 + b.len(), 0, 1),
            YV::Seq(items) => items.iter().fold((1, 0, 1), |(w, b, h), y| {
                (w + y.weight, b + y.bytes, h.max(y.height + 1))
            }),
            YV::Map(o) => o.entries.iter().fold((1, 0, 1), |(w, b, h), (k, y)| {
                (w + y.weight, b + k.len() + y.bytes, h.max(y.height + 1))
            }),
            _ => (1, 0, 0),
        };
        let pending = match &v {
            YV::Pending(_) => true,
            YV::Seq(items) => items.iter().any(|y| y.pending),
            YV::Map(o) => o.entries.iter().any(|(_, y)| y.pending),
            _ => false,
        };
        Y {
            v,
            span,
            key: None,
            weight,
            bytes,
            height,
            pending,
        }
    }
}

type YErr = (usize, usize, String);

const CORE: &str = "tag:yaml.org,2002:";

#[allow(clippy::large_enum_variant)] // a handful live at a time
enum Frame {
    Seq {
        items: Vec<Y>,
        block: bool,
        first_line: Option<usize>,
        start: usize,
        anchor: usize,
        tag: Option<String>,
    },
    Map {
        obj: YMap,
        overridable: HashSet<String>,
        pending: Option<(Y, bool)>,
        block: bool,
        first_line: Option<usize>,
        start: usize,
        anchor: usize,
        tag: Option<String>,
    },
}

struct Loader<'a> {
    src: &'a str,
    anchors: HashMap<usize, Y>,
    nodes: usize,
    bytes: usize,
    /// After [`relax`]: the starts of the lines that lost a tab, and of all lines.
    tab_lines: Vec<usize>,
    line_starts: Vec<usize>,
    /// The error came from granit (a syntax error), not from js-yaml's value rules.
    syntax_error: bool,
}

/// js-yaml 3 `safeLoad(matter)`: `Ok(None)` for a stream without documents (`undefined`).
/// Error offsets are in `matter`; the value's spans are in `matter` after the offset also
/// returned (a stripped BOM).
fn load_yaml(matter: &str) -> Result<(Option<Y>, usize), YErr> {
    // js-yaml: a trailing line break is added; a leading BOM is removed; NUL is refused.
    let (shift, text) = match matter.strip_prefix('\u{feff}') {
        Some(t) => (3, t),
        None => (0, matter),
    };
    if let Some(i) = text.find('\0') {
        return Err((
            shift + i,
            shift + i + 1,
            "null byte is not allowed in input".into(),
        ));
    }
    let owned;
    let src = if !text.is_empty() && !text.ends_with(['\n', '\r']) {
        owned = format!("{text}\n");
        owned.as_str()
    } else {
        text
    };
    let run = |src: &str, tab_lines: Vec<usize>| {
        let line_starts = if tab_lines.is_empty() {
            Vec::new()
        } else {
            std::iter::once(0)
                .chain(src.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        };
        let mut l = Loader {
            src,
            anchors: HashMap::new(),
            nodes: 0,
            bytes: 0,
            tab_lines,
            line_starts,
            syntax_error: false,
        };
        let r = l.run();
        (r, l.syntax_error)
    };
    // Spans may reach the line break added above.
    let clamp = |mut y: Option<Y>| {
        if let Some(y) = y.as_mut() {
            remap(y, &|o| o.min(text.len()));
        }
        y
    };
    match run(src, Vec::new()) {
        (Ok(y), _) => Ok((clamp(y), shift)),
        (Err((s, e, m)), syntax) => {
            // Read it again with js-yaml's leniencies spelled out (see `relax`).
            // Only granit's own syntax errors: js-yaml refuses what the loader refuses.
            for detab in [false, true].into_iter().filter(|_| syntax) {
                if let Some((relaxed, map, tab_lines)) = relax(src, detab) {
                    if let (Ok(mut y), _) = run(&relaxed, tab_lines) {
                        if let Some(y) = y.as_mut() {
                            remap(y, &|o| map.map(o));
                        }
                        return Ok((clamp(y), shift));
                    }
                }
            }
            let max = matter.len();
            Err(((s + shift).min(max), (e + shift).min(max), m))
        }
    }
}

impl Loader<'_> {
    fn err_at(&mut self, e: &ScanError) -> YErr {
        self.syntax_error = true;
        let off = e.marker().byte_offset().unwrap_or(0).min(self.src.len());
        if e.info() == "recursion limit exceeded" {
            // granit's own depth limit, which sits where ours does: not a YAML error.
            return (
                off,
                off,
                format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
            );
        }
        (off, off, e.info().to_string())
    }

    fn run(&mut self) -> Result<Option<Y>, YErr> {
        let mut parser = Parser::new_from_str_with_options(
            self.src,
            granit_parser::options! { bom_inside_document_as_content: true },
        );
        let mut stack: Vec<Frame> = Vec::new();
        let mut root: Option<Y> = None;
        let mut docs = 0usize;
        while let Some(next) = parser.next_event() {
            let (ev, span) = next.map_err(|e| self.err_at(&e))?;
            let (s, e) = span
                .byte_range()
                .map(|r| (r.start, r.end))
                .unwrap_or((0, 0));
            match ev {
                Event::DocumentStart(..) => {
                    docs += 1;
                    if docs > 1 {
                        return Err((
                            s,
                            e,
                            "expected a single document in the stream, but found more".into(),
                        ));
                    }
                }
                Event::Alias(id) => {
                    let Some((w, b)) = self.anchors.get(&id).map(|y| (y.weight, y.bytes)) else {
                        let open = stack.iter().any(|f| match f {
                            Frame::Seq { anchor, .. } | Frame::Map { anchor, .. } => *anchor == id,
                        });
                        if !open {
                            return Err((s, e, "unknown alias".into()));
                        }
                        let y = Y::new(YV::Pending(id), (s, e));
                        self.complete(&mut stack, &mut root, y, false)?;
                        continue;
                    };
                    self.charge(w, b, (s, e))?;
                    let Some(mut y) = self.anchors.get(&id).cloned() else {
                        return Err((s, e, "unknown alias".into()));
                    };
                    y.key = None;
                    self.complete(&mut stack, &mut root, y, false)?;
                }
                Event::Scalar(value, style, anchor, tag) => {
                    let tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
                    // A block scalar's span ends after its last line break.
                    let mut e = e;
                    if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
                        let b = self.src.as_bytes();
                        while e > s && matches!(b.get(e - 1), Some(b'\n' | b'\r')) {
                            e -= 1;
                        }
                    }
                    self.check_printable(s, e, style)?;
                    let empty = style == ScalarStyle::Plain && s == e;
                    if empty && self.is_missing_block_key(&stack, s) {
                        return Err((
                            s,
                            e,
                            "incomplete explicit mapping pair; a key node is missed".into(),
                        ));
                    }
                    let (v, merge) = resolve_scalar(&value, style, tag.as_deref(), empty)
                        .map_err(|m| (s, e, m))?;
                    let y = Y::new(v, (s, e));
                    self.charge(y.weight, y.bytes, (s, e))?;
                    if anchor != 0 {
                        self.anchors.insert(anchor, y.clone());
                    }
                    self.complete(&mut stack, &mut root, y, merge)?;
                }
                Event::SequenceStart(style, anchor, tag) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err((
                            s,
                            e,
                            format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
                        ));
                    }
                    stack.push(Frame::Seq {
                        items: Vec::new(),
                        block: style == StructureStyle::Block,
                        first_line: None,
                        start: s,
                        anchor,
                        tag: tag.map(|t| format!("{}{}", t.handle(), t.suffix())),
                    });
                }
                Event::MappingStart(style, anchor, tag) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err((
                            s,
                            e,
                            format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
                        ));
                    }
                    stack.push(Frame::Map {
                        obj: YMap::default(),
                        overridable: HashSet::new(),
                        pending: None,
                        block: style == StructureStyle::Block,
                        first_line: None,
                        start: s,
                        anchor,
                        tag: tag.map(|t| format!("{}{}", t.handle(), t.suffix())),
                    });
                }
                Event::SequenceEnd => {
                    let Some(Frame::Seq {
                        items,
                        start,
                        anchor,
                        tag,
                        ..
                    }) = stack.pop()
                    else {
                        return Err((s, e, "unbalanced sequence".into()));
                    };
                    let span = (start, e.max(start));
                    let v = construct_seq(items, tag.as_deref()).map_err(|m| (start, e, m))?;
                    let y = Y::new(v, span);
                    self.charge(1, 0, span)?;
                    self.check_height(&y)?;
                    if anchor != 0 {
                        self.anchors.insert(anchor, y.clone());
                    }
                    self.complete(&mut stack, &mut root, y, false)?;
                }
                Event::MappingEnd => {
                    let Some(Frame::Map {
                        obj,
                        pending,
                        start,
                        anchor,
                        tag,
                        ..
                    }) = stack.pop()
                    else {
                        return Err((s, e, "unbalanced mapping".into()));
                    };
                    if let Some((k, _)) = pending {
                        return Err((k.span.0, k.span.1, "a mapping key without a value".into()));
                    }
                    let span = (start, e.max(start));
                    let v = construct_map(obj, tag.as_deref()).map_err(|m| (start, e, m))?;
                    let y = Y::new(v, span);
                    self.charge(1, 0, span)?;
                    self.check_height(&y)?;
                    if anchor != 0 {
                        self.anchors.insert(anchor, y.clone());
                    }
                    self.complete(&mut stack, &mut root, y, false)?;
                }
                _ => {}
            }
        }
        Ok(root)
    }

    /// js-yaml refuses an implicit empty key in a block mapping (`: x`), though an explicit
    /// one (`? ` then `: x`) and one in a flow mapping (`{: x}`) are fine.
    fn is_missing_block_key(&self, stack: &[Frame], at: usize) -> bool {
        let Some(Frame::Map {
            block: true,
            pending: None,
            ..
        }) = stack.last()
        else {
            return false;
        };
        let b = self.src.as_bytes();
        if b.get(at) != Some(&b':') {
            return false;
        }
        let before = b[..at]
            .iter()
            .rev()
            .find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
        before != Some(&b'?')
    }

    /// A block collection's entry starting at `start` (see [`relax`]).
    fn entry(&self, block: bool, first_line: &mut Option<usize>, start: usize) -> Result<(), YErr> {
        if !block || self.tab_lines.is_empty() {
            return Ok(());
        }
        let idx = self.line_starts.partition_point(|&l| l <= start);
        let line = idx
            .checked_sub(1)
            .and_then(|i| self.line_starts.get(i))
            .copied()
            .unwrap_or(0);
        match *first_line {
            None => *first_line = Some(line),
            Some(f) if f != line && self.tab_lines.binary_search(&f).is_ok() => {
                return Err((
                    start,
                    start,
                    "bad indentation: this block collection starts on a tab-indented line".into(),
                ));
            }
            Some(_) => {}
        }
        Ok(())
    }

    fn check_height(&self, y: &Y) -> Result<(), YErr> {
        if y.height > MAX_DEPTH {
            return Err((
                y.span.0,
                y.span.1,
                format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
            ));
        }
        Ok(())
    }

    fn charge(&mut self, nodes: usize, bytes: usize, at: (usize, usize)) -> Result<(), YErr> {
        self.nodes = self.nodes.saturating_add(nodes);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.nodes > MAX_NODES || self.bytes > MAX_STRING_BYTES {
            return Err((
                at.0,
                at.1,
                format!(
                    "the frontmatter expands to more than {MAX_NODES} nodes or {MAX_STRING_BYTES} bytes (alias bomb?): {PAST_LIMIT}"
                ),
            ));
        }
        Ok(())
    }

    /// js-yaml's `captureSegment` checks: quoted scalars refuse control characters other
    /// than tab (JSON rule), other scalars refuse YAML's non-printable characters.
    fn check_printable(&self, s: usize, e: usize, style: ScalarStyle) -> Result<(), YErr> {
        let Some(raw) = self.src.get(s..e) else {
            return Ok(());
        };
        let quoted = matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted);
        for (i, c) in raw.char_indices() {
            let bad = if quoted {
                (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')
            } else {
                matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}'
                    | '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}')
            };
            if bad {
                let msg = if quoted {
                    "expected valid JSON character"
                } else {
                    "the stream contains non-printable characters"
                };
                return Err((s + i, s + i + c.len_utf8(), msg.into()));
            }
        }
        Ok(())
    }

    fn complete(
        &mut self,
        stack: &mut [Frame],
        root: &mut Option<Y>,
        y: Y,
        merge: bool,
    ) -> Result<(), YErr> {
        let Some((top, anc)) = stack.split_last_mut() else {
            if y.pending {
                return Err(cyclic(&y));
            }
            *root = Some(y);
            return Ok(());
        };
        match top {
            Frame::Seq {
                items,
                block,
                first_line,
                ..
            } => {
                self.entry(*block, first_line, y.span.0)?;
                items.push(y);
                Ok(())
            }
            Frame::Map {
                obj,
                overridable,
                pending,
                anchor,
                block,
                first_line,
                ..
            } => match pending.take() {
                None => {
                    self.entry(*block, first_line, y.span.0)?;
                    *pending = Some((y, merge));
                    Ok(())
                }
                Some((k, k_merge)) => {
                    let own = *anchor;
                    self.store_pair(anc, own, obj, overridable, k, k_merge, y)
                }
            },
        }
    }

    /// js-yaml `storeMappingPair`. `anc` are the collections being built around this
    /// mapping (whose anchor is `own`): an alias to one of them is a reference to the
    /// unfinished object, which a merge key reads as it is at that moment.
    #[allow(clippy::too_many_arguments)]
    fn store_pair(
        &mut self,
        anc: &[Frame],
        own: usize,
        obj: &mut YMap,
        overridable: &mut HashSet<String>,
        key: Y,
        key_merge: bool,
        mut value: Y,
    ) -> Result<(), YErr> {
        if key.pending {
            return Err(cyclic(&key));
        }
        let k = key_string(&key).map_err(|m| (key.span.0, key.span.1, m))?;
        if key_merge {
            if let YV::Seq(items) = &value.v {
                for item in items {
                    self.merge_from(anc, own, obj, overridable, item)?;
                }
            } else {
                self.merge_from(anc, own, obj, overridable, &value)?;
            }
            return Ok(());
        }
        if value.pending {
            return Err(cyclic(&value));
        }
        if !overridable.contains(&k) && obj.contains(&k) {
            return Err((key.span.0, key.span.1, "duplicated mapping key".into()));
        }
        overridable.remove(&k);
        value.key = Some(key.span);
        obj.set(k, value);
        Ok(())
    }

    /// js-yaml `mergeMappings`: the source's own keys (`Object.keys`) that the target lacks.
    fn merge_from(
        &mut self,
        anc: &[Frame],
        own: usize,
        obj: &mut YMap,
        overridable: &mut HashSet<String>,
        src: &Y,
    ) -> Result<(), YErr> {
        let mut add = |this: &mut Self, k: String, v: &Y, key: Option<(usize, usize)>| {
            if obj.contains(&k) {
                return Ok(());
            }
            if v.pending {
                return Err(cyclic(v));
            }
            this.charge(v.weight, v.bytes, src.span)?;
            let mut v = v.clone();
            if key.is_some() {
                v.key = key;
            }
            obj.set(k.clone(), v);
            overridable.insert(k);
            Ok(())
        };
        let unacceptable = || {
            Err((
                src.span.0,
                src.span.1,
                "cannot merge mappings; the provided source object is unacceptable".into(),
            ))
        };
        match &src.v {
            YV::Map(o) => {
                for (k, v) in o.iter() {
                    add(self, k.to_string(), v, None)?;
                }
            }
            YV::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    add(self, i.to_string(), v, Some(v.span))?;
                }
            }
            YV::Bytes(b) => {
                for (i, n) in b.iter().enumerate() {
                    let v = Y::new(YV::Num(f64::from(*n)), src.span);
                    add(self, i.to_string(), &v, Some(src.span))?;
                }
            }
            YV::Date(_) => {}
            // Merging the mapping into itself: every key is already there.
            YV::Pending(id) if *id == own => {}
            YV::Pending(id) => {
                let frame = anc.iter().rev().find(|f| match f {
                    Frame::Seq { anchor, .. } | Frame::Map { anchor, .. } => anchor == id,
                });
                match frame {
                    Some(Frame::Map { obj: o, .. }) => {
                        for (k, v) in o.iter() {
                            add(self, k.to_string(), v, None)?;
                        }
                    }
                    Some(Frame::Seq { items, .. }) => {
                        for (i, v) in items.iter().enumerate() {
                            add(self, i.to_string(), v, Some(v.span))?;
                        }
                    }
                    None => return unacceptable(),
                }
            }
            _ => return unacceptable(),
        }
        Ok(())
    }
}

fn cyclic(y: &Y) -> YErr {
    (
        y.span.0,
        y.span.1,
        "an alias to a collection that contains it: a cyclic value (unsupported)".into(),
    )
}

/// `String(key)` as js-yaml computes a mapping key.
fn key_string(key: &Y) -> Result<String, String> {
    match &key.v {
        YV::Seq(items) => {
            let mut parts = Vec::with_capacity(items.len());
            for it in items {
                parts.push(match &it.v {
                    YV::Seq(_) => return Err("nested arrays are not supported inside keys".into()),
                    YV::Map(_) => "[object Object]".to_string(),
                    YV::Null => String::new(),
                    other => scalar_string(other),
                });
            }
            Ok(parts.join(","))
        }
        YV::Map(_) => Ok("[object Object]".into()),
        other => Ok(scalar_string(other)),
    }
}

/// JavaScript `String(v)` for a non-collection value.
fn scalar_string(v: &YV) -> String {
    match v {
        YV::Null => "null".into(),
        YV::Bool(b) => b.to_string(),
        YV::Num(n) => js_number(*n),
        YV::Str(s) => s.clone(),
        YV::Date(t) => date_to_string(*t),
        YV::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        YV::Seq(_) | YV::Map(_) | YV::Pending(_) => "[object Object]".into(),
    }
}

fn tag_error_kind(tag: &str, want: &str, got: &str) -> String {
    format!("unacceptable node kind for !<{tag}> tag; it should be \"{want}\", not \"{got}\"")
}

/// The kind a known tag requires.
fn tag_kind(tag: &str) -> Option<&'static str> {
    let suffix = tag.strip_prefix(CORE)?;
    Some(match suffix {
        "str" | "null" | "bool" | "int" | "float" | "timestamp" | "merge" | "binary" => "scalar",
        "seq" | "omap" | "pairs" => "sequence",
        "map" | "set" => "mapping",
        _ => return None,
    })
}

fn construct_seq(items: Vec<Y>, tag: Option<&str>) -> Result<YV, String> {
    let Some(tag) = tag.filter(|t| *t != "!") else {
        return Ok(YV::Seq(items));
    };
    match tag_kind(tag) {
        None => Err(format!("unknown tag !<{tag}>")),
        Some("sequence") => match &tag[CORE.len()..] {
            "omap" => {
                let mut seen: Vec<String> = Vec::new();
                for it in &items {
                    let YV::Map(o) = &it.v else {
                        return Err(cannot_resolve(tag));
                    };
                    let mut keys = o.iter().map(|(k, _)| k);
                    let (Some(k), None) = (keys.next(), keys.next()) else {
                        return Err(cannot_resolve(tag));
                    };
                    if seen.iter().any(|s| s == k) {
                        return Err(cannot_resolve(tag));
                    }
                    seen.push(k.to_string());
                }
                Ok(YV::Seq(items))
            }
            "pairs" => {
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    let span = it.span;
                    let YV::Map(o) = it.v else {
                        return Err(cannot_resolve(tag));
                    };
                    if o.len() != 1 {
                        return Err(cannot_resolve(tag));
                    }
                    let Some((k, v)) = o.iter().next() else {
                        return Err(cannot_resolve(tag));
                    };
                    let kspan = v.key.unwrap_or(span);
                    let pair = vec![Y::new(YV::Str(k.to_string()), kspan), v.clone()];
                    out.push(Y::new(YV::Seq(pair), span));
                }
                Ok(YV::Seq(out))
            }
            _ => Ok(YV::Seq(items)),
        },
        Some(kind) => Err(tag_error_kind(tag, kind, "sequence")),
    }
}

fn construct_map(obj: YMap, tag: Option<&str>) -> Result<YV, String> {
    let Some(tag) = tag.filter(|t| *t != "!") else {
        return Ok(YV::Map(obj));
    };
    match tag_kind(tag) {
        None => Err(format!("unknown tag !<{tag}>")),
        Some("mapping") => {
            if &tag[CORE.len()..] == "set" && obj.iter().any(|(_, v)| !matches!(v.v, YV::Null)) {
                return Err(cannot_resolve(tag));
            }
            Ok(YV::Map(obj))
        }
        Some(kind) => Err(tag_error_kind(tag, kind, "mapping")),
    }
}

fn cannot_resolve(tag: &str) -> String {
    format!("cannot resolve a node with !<{tag}> explicit tag")
}

/// A scalar's value: js-yaml's implicit resolution for untagged plain scalars, its explicit
/// types for tagged ones. `empty` is a node without content (`key:`). The flag says the
/// value is a merge key (`<<`).
fn resolve_scalar(
    value: &str,
    style: ScalarStyle,
    tag: Option<&str>,
    empty: bool,
) -> Result<(YV, bool), String> {
    let tag = match tag {
        None if empty => return Ok((YV::Null, false)),
        None if style == ScalarStyle::Plain => return Ok(resolve_implicit(value)),
        None | Some("!") if empty => return Ok((YV::Null, false)),
        None | Some("!") => return Ok((YV::Str(value.to_string()), false)),
        Some(t) => t,
    };
    let Some(kind) = tag_kind(tag) else {
        return Err(format!("unknown tag !<{tag}>"));
    };
    if empty {
        // `state.result === null`: no kind check, the type resolves `null`.
        return match &tag[CORE.len()..] {
            "str" => Ok((YV::Str(String::new()), false)),
            "null" => Ok((YV::Null, false)),
            "map" | "set" => Ok((YV::Map(YMap::default()), false)),
            "seq" | "omap" | "pairs" => Ok((YV::Seq(Vec::new()), false)),
            "merge" => Ok((YV::Null, true)),
            _ => Err(cannot_resolve(tag)),
        };
    }
    if kind != "scalar" {
        return Err(tag_error_kind(tag, kind, "scalar"));
    }
    let v = match &tag[CORE.len()..] {
        "str" => Some(YV::Str(value.to_string())),
        "null" => is_null(value).then_some(YV::Null),
        "bool" => as_bool(value).map(YV::Bool),
        "int" => resolve_int(value).then(|| YV::Num(construct_int(value))),
        "float" => resolve_float(value).then(|| YV::Num(construct_float(value))),
        "timestamp" => timestamp(value).map(YV::Date),
        "merge" => {
            return if value == "<<" {
                Ok((YV::Str(value.to_string()), true))
            } else {
                Err(cannot_resolve(tag))
            };
        }
        "binary" => binary(value).map(YV::Bytes),
        _ => None,
    };
    v.map(|v| (v, false)).ok_or_else(|| cannot_resolve(tag))
}

/// DEFAULT_SAFE_SCHEMA's implicit types, in order: null, bool, int, float, timestamp, merge.
fn resolve_implicit(s: &str) -> (YV, bool) {
    if is_null(s) {
        return (YV::Null, false);
    }
    if let Some(b) = as_bool(s) {
        return (YV::Bool(b), false);
    }
    if resolve_int(s) {
        return (YV::Num(construct_int(s)), false);
    }
    if resolve_float(s) {
        return (YV::Num(construct_float(s)), false);
    }
    if let Some(t) = timestamp(s) {
        return (YV::Date(t), false);
    }
    if s == "<<" {
        return (YV::Str(s.to_string()), true);
    }
    (YV::Str(s.to_string()), false)
}

/// `resolveYamlNull` of a non-empty node (an empty node is `null` before any type runs).
fn is_null(s: &str) -> bool {
    matches!(s, "~" | "null" | "Null" | "NULL")
}

fn as_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// js-yaml 3 `resolveYamlInteger`.
fn resolve_int(data: &str) -> bool {
    let b = data.as_bytes();
    let max = b.len();
    if max == 0 {
        return false;
    }
    let mut i = 0;
    let at = |i: usize| b.get(i).copied();
    let mut ch = at(0);
    if ch == Some(b'-') || ch == Some(b'+') {
        i += 1;
        ch = at(i);
    }
    let mut has_digits = false;
    if ch == Some(b'0') {
        if i + 1 == max {
            return true;
        }
        i += 1;
        ch = at(i);
        let digit_ok: fn(u8) -> bool = match ch {
            Some(b'b') => |c| c == b'0' || c == b'1',
            Some(b'x') => |c| c.is_ascii_hexdigit(),
            _ => |c| (b'0'..=b'7').contains(&c),
        };
        if matches!(ch, Some(b'b') | Some(b'x')) {
            i += 1;
        }
        let mut last = ch;
        while i < max {
            last = at(i);
            let c = b[i];
            i += 1;
            if c == b'_' {
                continue;
            }
            if !digit_ok(c) {
                return false;
            }
            has_digits = true;
        }
        return has_digits && last != Some(b'_');
    }
    if ch == Some(b'_') {
        return false;
    }
    let mut last = ch;
    while i < max {
        last = at(i);
        let c = b[i];
        if c == b'_' {
            i += 1;
            continue;
        }
        if c == b':' {
            break;
        }
        if !c.is_ascii_digit() {
            return false;
        }
        has_digits = true;
        i += 1;
    }
    if !has_digits || last == Some(b'_') {
        return false;
    }
    if last != Some(b':') {
        return true;
    }
    // /^(:[0-5]?[0-9])+$/
    let mut rest = &b[i..];
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        if rest[0] != b':' {
            return false;
        }
        rest = &rest[1..];
        match rest {
            [a, c, ..] if (b'0'..=b'5').contains(a) && c.is_ascii_digit() => rest = &rest[2..],
            [a, ..] if a.is_ascii_digit() => rest = &rest[1..],
            _ => return false,
        }
    }
    true
}

/// JavaScript `parseInt(s, radix)` of a string of valid digits.
fn parse_radix(s: &str, radix: u32) -> f64 {
    let digits: Vec<u32> = s.chars().map_while(|c| c.to_digit(radix)).collect();
    if digits.is_empty() {
        return f64::NAN;
    }
    if radix == 10 {
        let t: String = s.chars().take(digits.len()).collect();
        return t.parse::<f64>().unwrap_or(f64::NAN);
    }
    let mut acc: u128 = 0;
    let mut overflow = false;
    for &d in &digits {
        match acc
            .checked_mul(u128::from(radix))
            .and_then(|a| a.checked_add(u128::from(d)))
        {
            Some(a) => acc = a,
            None => {
                overflow = true;
                break;
            }
        }
    }
    if !overflow {
        return acc as f64;
    }
    digits
        .iter()
        .fold(0f64, |a, &d| a * f64::from(radix) + f64::from(d))
}

/// js-yaml 3 `constructYamlInteger`.
fn construct_int(data: &str) -> f64 {
    let mut value: String = data.chars().filter(|c| *c != '_').collect();
    let mut sign = 1.0;
    if let Some(first @ ('-' | '+')) = value.chars().next() {
        if first == '-' {
            sign = -1.0;
        }
        value.remove(0);
    }
    if value == "0" {
        return 0.0;
    }
    if let Some(rest) = value.strip_prefix('0') {
        if let Some(bin) = rest.strip_prefix('b') {
            return sign * parse_radix(bin, 2);
        }
        if let Some(hex) = rest.strip_prefix('x') {
            return sign * parse_radix(hex, 16);
        }
        return sign * parse_radix(&value, 8);
    }
    if value.contains(':') {
        let mut total = 0.0;
        let mut base = 1.0;
        for part in value.split(':').rev() {
            total += parse_radix(part, 10) * base;
            base *= 60.0;
        }
        return sign * total;
    }
    sign * parse_radix(&value, 10)
}

/// js-yaml 3's float regex, and not ending in `_`.
fn resolve_float(data: &str) -> bool {
    if data.ends_with('_') {
        return false;
    }
    let b = data.as_bytes();
    let digits_us = |mut i: usize| {
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
        i
    };
    let exponent = |mut i: usize| -> Option<usize> {
        // (?:[eE][-+]?[0-9]+)?
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
                i += 1;
            }
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == s {
                return None;
            }
        }
        Some(i)
    };
    let sign = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    // [-+]?(?:0|[1-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
    let alt1 = || -> bool {
        let mut i = sign;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits_us(i + 1),
            _ => return false,
        }
        if b.get(i) == Some(&b'.') {
            i = digits_us(i + 1);
        }
        exponent(i) == Some(b.len())
    };
    // \.[0-9_]+(?:[eE][-+]?[0-9]+)?
    let alt2 = || -> bool {
        if b.first() != Some(&b'.') {
            return false;
        }
        let i = digits_us(1);
        i > 1 && exponent(i) == Some(b.len())
    };
    // [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    let alt3 = || -> bool {
        let mut i = sign;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        i = digits_us(i + 1);
        let mut groups = 0;
        while b.get(i) == Some(&b':') {
            i += 1;
            match (b.get(i), b.get(i + 1)) {
                (Some(a), Some(c)) if (b'0'..=b'5').contains(a) && c.is_ascii_digit() => i += 2,
                (Some(a), _) if a.is_ascii_digit() => i += 1,
                _ => return false,
            }
            groups += 1;
        }
        if groups == 0 || b.get(i) != Some(&b'.') {
            return false;
        }
        digits_us(i + 1) == b.len()
    };
    let rest = &data[sign..];
    let alt4 = matches!(rest, ".inf" | ".Inf" | ".INF");
    let alt5 = matches!(data, ".nan" | ".NaN" | ".NAN");
    alt1() || alt2() || alt3() || alt4 || alt5
}

/// js-yaml 3 `constructYamlFloat`.
fn construct_float(data: &str) -> f64 {
    let mut value: String = data
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_lowercase();
    let sign = if value.starts_with('-') { -1.0 } else { 1.0 };
    if value.starts_with(['+', '-']) {
        value.remove(0);
    }
    if value == ".inf" {
        return sign * f64::INFINITY;
    }
    if value == ".nan" {
        return f64::NAN;
    }
    if value.contains(':') {
        let mut total = 0.0;
        let mut base = 1.0;
        for part in value.split(':').rev() {
            total += parse_float(part) * base;
            base *= 60.0;
        }
        return sign * total;
    }
    sign * parse_float(&value)
}

/// JavaScript `parseFloat` of a decimal literal already checked by the float regex.
fn parse_float(s: &str) -> f64 {
    if s.is_empty() || s == "." {
        return f64::NAN;
    }
    s.parse::<f64>().unwrap_or(f64::NAN)
}

/// JavaScript `Number.prototype.toString()`.
fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // Shortest round-trip digits, as `d.ddde±x`.
    let e = format!("{:e}", n.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let k = digits.len() as i64;
    let n_ = exp + 1;
    let body = if k <= n_ && n_ <= 21 {
        format!("{digits}{}", "0".repeat((n_ - k) as usize))
    } else if 0 < n_ && n_ <= 21 {
        format!("{}.{}", &digits[..n_ as usize], &digits[n_ as usize..])
    } else if -6 < n_ && n_ <= 0 {
        format!("0.{}{digits}", "0".repeat((-n_) as usize))
    } else {
        let es = if n_ > 0 { "+" } else { "-" };
        let ea = (n_ - 1).abs();
        if k == 1 {
            format!("{digits}e{es}{ea}")
        } else {
            format!("{}.{}e{es}{ea}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

// ---------------------------------------------------------------------------------------
// Timestamps

/// js-yaml 3 timestamp: `Some(ms since epoch)` (NaN when out of range) when `s` is one.
fn timestamp(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, min: usize, max: usize| -> Option<f64> {
        let st = *i;
        while *i < b.len() && *i - st < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i - st < min {
            return None;
        }
        s[st..*i].parse::<f64>().ok()
    };
    let lit = |i: &mut usize, c: u8| -> Option<()> { (b.get(*i) == Some(&c)).then(|| *i += 1) };
    let year = num(&mut i, 4, 4)?;
    lit(&mut i, b'-')?;
    // `YYYY-MM-DD` exactly, or the long form with one- or two-digit month and day.
    let month = num(&mut i, 1, 2)?;
    lit(&mut i, b'-')?;
    let day = num(&mut i, 1, 2)?;
    if i == b.len() {
        if s.len() != 10 {
            return None;
        }
        return Some(date_utc(year, month - 1.0, day, 0.0, 0.0, 0.0, 0.0));
    }
    // (?:[Tt]|[ \t]+)
    match b.get(i) {
        Some(b'T' | b't') => i += 1,
        Some(b' ' | b'\t') => {
            while matches!(b.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
        }
        _ => return None,
    }
    let hour = num(&mut i, 1, 2)?;
    lit(&mut i, b':')?;
    let minute = num(&mut i, 2, 2)?;
    lit(&mut i, b':')?;
    let second = num(&mut i, 2, 2)?;
    let mut fraction = 0.0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let st = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let mut f: String = s[st..i].chars().take(3).collect();
        if !f.is_empty() {
            while f.len() < 3 {
                f.push('0');
            }
            fraction = f.parse::<f64>().unwrap_or(0.0);
        }
    }
    // (?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?$
    let mut delta = 0.0;
    if i < b.len() {
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        match b.get(i) {
            Some(b'Z') => i += 1,
            Some(c @ (b'-' | b'+')) => {
                let neg = *c == b'-';
                i += 1;
                let th = num(&mut i, 1, 2)?;
                let mut tm = 0.0;
                if b.get(i) == Some(&b':') {
                    i += 1;
                    tm = num(&mut i, 2, 2)?;
                }
                delta = (th * 60.0 + tm) * 60000.0;
                if neg {
                    delta = -delta;
                }
            }
            _ => return None,
        }
        if i != b.len() {
            return None;
        }
    }
    let t = date_utc(year, month - 1.0, day, hour, minute, second, fraction);
    Some(time_clip(t - delta))
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn time_clip(t: f64) -> f64 {
    if t.is_finite() && t.abs() <= 8.64e15 {
        t
    } else {
        f64::NAN
    }
}

/// `Date.UTC(y, m, d, h, mi, s, ms)` for the small integers a timestamp holds.
fn date_utc(y: f64, m: f64, d: f64, h: f64, mi: f64, s: f64, ms: f64) -> f64 {
    let y = if (0.0..=99.0).contains(&y) {
        1900.0 + y
    } else {
        y
    };
    let ym = y as i64 + (m as i64).div_euclid(12);
    let mn = (m as i64).rem_euclid(12);
    let day = days_from_civil(ym, mn + 1, 1) as f64 + d - 1.0;
    let time = h * 3_600_000.0 + mi * 60_000.0 + s * 1000.0 + ms;
    time_clip(day * 86_400_000.0 + time)
}

fn civil(t: f64) -> (i64, i64, i64, i64, i64, i64, i64, i64) {
    let ms_total = t as i64;
    let days = ms_total.div_euclid(86_400_000);
    let ms_day = ms_total.rem_euclid(86_400_000);
    // civil_from_days
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let weekday = (days + 4).rem_euclid(7);
    (
        y,
        m,
        d,
        ms_day / 3_600_000,
        ms_day / 60_000 % 60,
        ms_day / 1000 % 60,
        ms_day % 1000,
        weekday,
    )
}

/// `Date.prototype.toISOString()`.
fn date_iso(t: f64) -> String {
    if t.is_nan() {
        return "Invalid Date".into();
    }
    let (y, m, d, h, mi, s, ms, _) = civil(t);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!("{year}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// `Date.prototype.toString()`, in UTC.
fn date_to_string(t: f64) -> String {
    if t.is_nan() {
        return "Invalid Date".into();
    }
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, m, d, h, mi, s, _, wd) = civil(t);
    let year = if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("{y:04}")
    };
    format!(
        "{} {} {d:02} {year} {h:02}:{mi:02}:{s:02} GMT+0000 (Coordinated Universal Time)",
        DAYS.get(wd as usize).unwrap_or(&"Thu"),
        MONTHS.get((m - 1) as usize).unwrap_or(&"Jan"),
    )
}

/// js-yaml 3 `!!binary`: `resolveYamlBinary` then `constructYamlBinary`.
fn binary(data: &str) -> Option<Vec<u8>> {
    const MAP: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n\r";
    let code = |c: char| MAP.find(c);
    let mut bitlen = 0usize;
    for c in data.chars() {
        match code(c) {
            Some(n) if n > 64 => continue,
            Some(_) => bitlen += 6,
            None => return None,
        }
    }
    if bitlen % 8 != 0 {
        return None;
    }
    let input: Vec<u32> = data
        .chars()
        .filter(|c| !matches!(c, '\r' | '\n' | '='))
        .map(|c| code(c).unwrap_or(0) as u32)
        .collect();
    let mut bits: u32 = 0;
    let mut out = Vec::new();
    for (idx, v) in input.iter().enumerate() {
        if idx % 4 == 0 && idx > 0 {
            out.extend([(bits >> 16) as u8, (bits >> 8) as u8, bits as u8]);
        }
        bits = (bits << 6) | v;
    }
    match (input.len() % 4) * 6 {
        0 => out.extend([(bits >> 16) as u8, (bits >> 8) as u8, bits as u8]),
        18 => out.extend([(bits >> 10) as u8, (bits >> 2) as u8]),
        12 => out.push((bits >> 4) as u8),
        _ => {}
    }
    Some(out)
}

/// js-yaml 3 accepts a few things YAML 1.2 (and granit) refuse. When granit refuses a text,
/// it is read again after [`relax`] rewrote those spots the way js-yaml reads them:
///
/// * in a flow collection, `key:[…]` / `key:{…}` (js-yaml ends a plain scalar at a `:`
///   followed by a flow indicator): a space is inserted after the `:`;
/// * an empty flow entry (`[a, , b]`, `[, a]`, `{, a: 1}`) is a null: `~` is inserted;
/// * a comment right after a closing quote or bracket (`[a]#c`): a space is inserted;
/// * `key: ? k` is `key:` and, beside it, the explicit key `? k`: a line break is inserted;
/// * `key: "a"b: c` and `key: [a]b: c` are `key` and then the key `b`: a line break is
///   inserted;
/// * with `detab`, tab indentation: js-yaml counts only spaces as indentation (`lineIndent`)
///   and skips a tab like any separating blank, so on every line the blanks from the first
///   tab of the indentation to the content are removed. But js-yaml takes a block
///   collection's own indentation from the *column* of its first entry, where a tab counts:
///   a collection whose first entry sits on such a line and which has an entry on a later
///   line is an error there ([`Loader::entry`] refuses it, using the returned line starts).
///
/// Block scalars are copied untouched. `None` when nothing changed.
fn relax(src: &str, detab: bool) -> Option<(String, OffsetMap, Vec<usize>)> {
    let mut r = Relax {
        src,
        b: src.as_bytes(),
        out: String::with_capacity(src.len() + 16),
        map: OffsetMap::default(),
        copied: 0,
        changed: false,
        tab_lines: Vec::new(),
    };
    r.run(detab);
    if !r.changed {
        return None;
    }
    r.flush(src.len());
    Some((r.out, r.map, r.tab_lines))
}

struct Relax<'a> {
    src: &'a str,
    b: &'a [u8],
    out: String,
    map: OffsetMap,
    /// `src[..copied]` is in `out`.
    copied: usize,
    changed: bool,
    tab_lines: Vec<usize>,
}

impl Relax<'_> {
    fn flush(&mut self, upto: usize) {
        if upto > self.copied {
            if let Some(piece) = self.src.get(self.copied..upto) {
                self.map
                    .push(self.out.len(), piece.len(), self.copied, true);
                self.out.push_str(piece);
            }
            self.copied = upto;
        }
    }

    fn insert(&mut self, at: usize, text: &str) {
        self.flush(at);
        self.map.push(self.out.len(), text.len(), at, false);
        self.out.push_str(text);
        self.changed = true;
    }

    fn skip(&mut self, from: usize, to: usize) {
        self.flush(from);
        self.copied = to;
        self.changed = true;
    }

    /// js-yaml reads what directly follows a quoted or flow mapping value on its line
    /// (`key: "a"b: c`, `key: [a]b: c`) as the next key of the mapping, when that line is
    /// indented like the mapping (`indent`, the key's line); more is an error, less ends it.
    fn trailing(&mut self, at: usize, indent: usize) {
        let ls = self.b[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let line_indent = self.b[ls..at].iter().take_while(|&&c| c == b' ').count();
        if line_indent != indent {
            return;
        }
        if let Some(c) = self.b.get(at) {
            if !matches!(
                c,
                b' ' | b'\t' | b'\r' | b'\n' | b':' | b'#' | b',' | b']' | b'}'
            ) {
                let pad = format!("\n{}", " ".repeat(indent));
                self.insert(at, &pad);
            }
        }
    }

    fn line_end(&self, i: usize) -> usize {
        self.b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |n| i + n)
    }

    fn run(&mut self, detab: bool) {
        let b = self.b;
        let len = b.len();
        let mut i = 0;
        let mut depth = 0usize;
        let mut at_line_start = true;
        let mut indent = 0usize;
        // The last significant character (a token's last one) and whether blanks followed it.
        let mut prev: Option<u8> = None;
        let mut spaced = true;
        // The last token started with `&` or `!` (an anchor or a tag).
        let mut prop = false;
        let mut token_first: Option<u8> = None;
        let mut closer = false;
        let mut block_scalar: Option<isize> = None;
        // The line indentation of a flow collection that is a mapping value.
        let mut flow_value: Option<usize> = None;
        let mut key_at_line_start = true;
        while i < len {
            if at_line_start {
                at_line_start = false;
                let mut j = i;
                while j < len && b[j] == b' ' {
                    j += 1;
                }
                let end = self.line_end(i);
                if let Some(parent) = block_scalar {
                    let blank = b[j..end].iter().all(|c| matches!(c, b' ' | b'\t' | b'\r'));
                    if blank || (j - i) as isize > parent {
                        i = end + 1;
                        at_line_start = true;
                        continue;
                    }
                    block_scalar = None;
                }
                indent = j - i;
                if detab && depth == 0 && j < len && b[j] == b'\t' {
                    let mut k = j;
                    while k < len && matches!(b[k], b' ' | b'\t') {
                        k += 1;
                    }
                    self.skip(j, k);
                    self.tab_lines.push(self.out.len() - (j - i));
                    j = k;
                }
                if depth == 0 {
                    prev = None;
                    // A `- ` or `? ` entry puts its mapping's keys after the line start.
                    key_at_line_start = !matches!(
                        (b.get(j), b.get(j + 1)),
                        (Some(b'-' | b'?'), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
                    );
                }
                spaced = true;
                i = j;
                continue;
            }
            let c = b[i];
            let node_start = if depth == 0 {
                prev.is_none() || (spaced && matches!(prev, Some(b':' | b'-' | b'?'))) || prop
            } else {
                prev.is_none() || matches!(prev, Some(b'[' | b'{' | b',' | b':' | b'?')) || prop
            };
            match c {
                b'\n' => {
                    at_line_start = true;
                    closer = false;
                    if token_first.take().is_some_and(|f| f == b'&' || f == b'!') {
                        prop = true;
                    }
                    i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' => {
                    spaced = true;
                    closer = false;
                    if let Some(f) = token_first.take() {
                        prop = f == b'&' || f == b'!';
                    }
                    i += 1;
                    continue;
                }
                b'#' if spaced || closer => {
                    if closer && !spaced {
                        self.insert(i, " ");
                    }
                    i = self.line_end(i);
                    continue;
                }
                b'"' | b'\'' if node_start => {
                    let mut j = i + 1;
                    while j < len {
                        if c == b'"' && b[j] == b'\\' {
                            j += 2;
                            continue;
                        }
                        if b[j] == c {
                            if c == b'\'' && b.get(j + 1) == Some(&b'\'') {
                                j += 2;
                                continue;
                            }
                            break;
                        }
                        j += 1;
                    }
                    i = (j + 1).min(len);
                    if depth == 0 && prev == Some(b':') && key_at_line_start {
                        self.trailing(i, indent);
                    }
                    prev = Some(c);
                    spaced = false;
                    prop = false;
                    closer = true;
                    token_first = None;
                    continue;
                }
                b'[' | b'{' if depth > 0 || node_start => {
                    if depth == 0 {
                        flow_value = (prev == Some(b':') && key_at_line_start).then_some(indent);
                    }
                    depth += 1;
                }
                // `key: ? k` is `key:` (null) and then the explicit key `? k` beside it.
                b'?' if depth == 0
                    && spaced
                    && prev == Some(b':')
                    && matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\r' | b'\n')) =>
                {
                    let pad = format!("\n{}", " ".repeat(indent));
                    self.insert(i, &pad);
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    i += 1;
                    if depth == 0 {
                        if let Some(ind) = flow_value.take() {
                            self.trailing(i, ind);
                        }
                    }
                    prev = Some(c);
                    spaced = false;
                    prop = false;
                    closer = true;
                    token_first = None;
                    continue;
                }
                b',' if depth > 0 && matches!(prev, Some(b'[' | b'{' | b',')) => {
                    self.insert(i, "~");
                }
                b':' if depth > 0 && matches!(b.get(i + 1), Some(b'[' | b'{')) => {
                    self.insert(i + 1, " ");
                }
                b'|' | b'>' if depth == 0 && node_start => {
                    // A block scalar header: indicators, then nothing but a comment.
                    let end = self.line_end(i);
                    let rest = &b[i + 1..end];
                    let ind = rest
                        .iter()
                        .take_while(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-'))
                        .count();
                    let tail = &rest[ind..];
                    let t = tail
                        .iter()
                        .position(|c| !matches!(c, b' ' | b'\t' | b'\r'))
                        .map_or(&[][..], |p| &tail[p..]);
                    if t.is_empty() || (t[0] == b'#' && tail.first() != Some(&b'#')) {
                        block_scalar = Some(indent as isize);
                        i = end;
                        continue;
                    }
                }
                _ => {}
            }
            if token_first.is_none() {
                token_first = Some(c);
            }
            prev = Some(c);
            spaced = false;
            prop = false;
            closer = false;
            i += 1;
        }
        // A `[`/`{` was counted by a node start; `depth` is only a guide.
        let _ = depth;
    }
}

fn remap(y: &mut Y, f: &dyn Fn(usize) -> usize) {
    y.span = (f(y.span.0), f(y.span.1));
    y.key = y.key.map(|(s, e)| (f(s), f(e)));
    match &mut y.v {
        YV::Seq(items) => items.iter_mut().for_each(|i| remap(i, f)),
        YV::Map(o) => o.entries.iter_mut().for_each(|(_, v)| remap(v, f)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------
// Into nodes

fn to_node(y: Y, source: SourceId, to_orig: &dyn Fn(usize) -> usize) -> Node {
    let loc = |(s, e): (usize, usize)| Loc {
        source,
        span: Span::new(to_orig(s), to_orig(e).max(to_orig(s))),
    };
    let value = match y.v {
        // Never left in a finished value (refused as cyclic).
        YV::Null | YV::Pending(_) => Value::Null,
        YV::Bool(b) => Value::Bool(b),
        YV::Num(n) => Value::Number(js_number(n)),
        YV::Str(s) => Value::String(s),
        YV::Date(t) => Value::Number(date_iso(t)),
        YV::Bytes(b) => Value::Array(
            b.iter()
                .map(|n| Node {
                    value: Value::Number(n.to_string()),
                    loc: loc(y.span),
                    key: None,
                })
                .collect(),
        ),
        YV::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(|i| to_node(i, source, to_orig))
                .collect(),
        ),
        YV::Map(o) => {
            let mut out = JsObject::new();
            for (k, v) in o.into_entries() {
                out.set(k, to_node(v, source, to_orig));
            }
            Value::Object(out)
        }
    };
    Node {
        value,
        loc: loc(y.span),
        key: y.key.map(loc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: SourceId = SourceId(7);

    fn data(text: &str) -> Node {
        match parse(text, SRC) {
            Frontmatter::Data(n) => n,
            other => panic!("expected data for {text:?}, got {other:?}"),
        }
    }

    fn obj(n: &Node) -> &JsObject {
        n.value.as_object().expect("an object")
    }

    fn keys(n: &Node) -> Vec<String> {
        obj(n).keys().map(str::to_string).collect()
    }

    fn get<'a>(n: &'a Node, path: &[&str]) -> &'a Node {
        path.iter().fold(n, |n, k| {
            obj(n)
                .get(k)
                .unwrap_or_else(|| panic!("no key {k:?} in {:?}", keys(n)))
        })
    }

    fn s(n: &Node) -> &str {
        n.value
            .as_str()
            .unwrap_or_else(|| panic!("not a string: {:?}", n.value))
    }

    fn num(n: &Node) -> &str {
        match &n.value {
            Value::Number(x) => x,
            v => panic!("not a number: {v:?}"),
        }
    }

    fn at(text: &str, loc: Loc) -> &str {
        assert_eq!(loc.source, SRC);
        &text[loc.span.start..loc.span.end]
    }

    fn kept(text: &str) -> FrontmatterError {
        match parse(text, SRC) {
            Frontmatter::BrokenKept(e) => e,
            other => panic!("expected BrokenKept for {text:?}, got {other:?}"),
        }
    }

    fn dropped(text: &str) -> FrontmatterError {
        match parse(text, SRC) {
            Frontmatter::BrokenDropped(e) => e,
            other => panic!("expected BrokenDropped for {text:?}, got {other:?}"),
        }
    }

    fn is_empty_object(n: &Node) -> bool {
        matches!(&n.value, Value::Object(o) if o.is_empty())
    }

    // --- fences (B.md §2, gray-matter) --------------------------------------------------

    #[test]
    fn no_fence_is_absent() {
        assert_eq!(parse("", SRC), Frontmatter::Absent);
        assert_eq!(parse("just a prompt", SRC), Frontmatter::Absent);
        assert_eq!(parse(" ---\na: 1\n---\n", SRC), Frontmatter::Absent);
        assert_eq!(parse("\u{feff}", SRC), Frontmatter::Absent);
    }

    #[test]
    fn four_dashes_is_absent() {
        // c18
        assert_eq!(
            parse("----\npermission: deny\n----\nbody", SRC),
            Frontmatter::Absent
        );
        assert_eq!(parse("---- x", SRC), Frontmatter::Absent);
    }

    #[test]
    fn bom_is_stripped() {
        // c01
        let t = "\u{feff}---\npermission:\n  bash: deny\n---\nbody";
        let n = data(t);
        let bash = get(&n, &["permission", "bash"]);
        assert_eq!(s(bash), "deny");
        assert_eq!(at(t, bash.loc), "deny");
        assert_eq!(at(t, bash.key.unwrap()), "bash");
    }

    #[test]
    fn crlf_works() {
        // c02
        let t = "---\r\npermission:\r\n  bash: deny\r\n---\r\nbody\r\nline2";
        let n = data(t);
        assert_eq!(keys(&n), ["permission"]);
        let bash = get(&n, &["permission", "bash"]);
        assert_eq!(s(bash), "deny");
        assert_eq!(at(t, bash.loc), "deny");
    }

    #[test]
    fn only_frontmatter() {
        // c03
        let n = data("---\npermission:\n  bash: deny\n---");
        assert_eq!(s(get(&n, &["permission", "bash"])), "deny");
    }

    #[test]
    fn unclosed_fence() {
        // c04: the rest of the file is the YAML.
        let n = data("---\npermission:\n  bash: deny\n");
        assert_eq!(s(get(&n, &["permission", "bash"])), "deny");
        // c04b: broken, sanitize changes nothing (no closing fence for its regex).
        kept("---\npermission: [\nbody text");
    }

    #[test]
    fn empty_frontmatter() {
        // c05
        for t in [
            "---\n---\nbody",
            "---\n\n---\nbody",
            "---\n  \n\t\n---\nbody",
            "---\n# just a comment\n  # another\n---\nbody",
            "---",
            "---\n",
            "---\n#\n---\n",
            "---coffee\n# no engine runs for an empty block\n---\n",
            "---js\n\n---\n",
        ] {
            assert!(is_empty_object(&data(t)), "{t:?}");
        }
    }

    #[test]
    fn closing_fence_is_first_newline_dashes() {
        // c19: `\n---x trailing` also closes.
        let n = data("---\na: 1\n---x trailing\nbody");
        assert_eq!(keys(&n), ["a"]);
    }

    #[test]
    fn language_tags() {
        // c17: `--- ` is YAML.
        assert_eq!(s(get(&data("--- \na: x\n---\nb"), &["a"])), "x");
        assert_eq!(s(get(&data("---yaml\na: x\n---\nb"), &["a"])), "x");
        assert_eq!(s(get(&data("---YML\na: x\n---\nb"), &["a"])), "x");
        // c13: `---json` is JSON.parse.
        let t = "---json\n{\"permission\": {\"bash\": \"deny\"}, \"a\": 1}\n---\nbody";
        let n = data(t);
        let bash = get(&n, &["permission", "bash"]);
        assert_eq!(s(bash), "deny");
        assert_eq!(at(t, bash.loc), "\"deny\"");
        // c12: `---js` evaluates JavaScript.
        for t in [
            "---js\n({permission:{bash:\"deny\"}})\n---\n",
            "---javascript\n({})\n---\n",
            "---JS\n({})\n---\n",
        ] {
            match parse(t, SRC) {
                Frontmatter::Executable(e) => assert!(e.message.contains("JavaScript")),
                other => panic!("{t:?}: {other:?}"),
            }
        }
        // An unknown engine throws; sanitize's regex needs `---\n`: case A.
        let e = kept("---coffee\na: 1\n---\nbody");
        assert!(e.message.contains("coffee"), "{}", e.message);
        kept("---JSON\n{}\n---\n");
    }

    #[test]
    fn json_is_strict() {
        kept("---json\n{\"a\": 1,}\n---\n");
        kept("---json\n// c\n{\"a\": 1}\n---\n");
        kept("---json\n{a: 1}\n---\n");
        // Duplicate keys: the last value at the first position; `__proto__` is an own key.
        let n = data("---json\n{\"a\": 1, \"b\": 2, \"a\": 3, \"__proto__\": 4}\n---\n");
        assert_eq!(keys(&n), ["a", "b", "__proto__"]);
        assert_eq!(num(get(&n, &["a"])), "3");
        // A top-level array or string is spread.
        assert_eq!(keys(&data("---json\n[\"x\", 2]\n---\n")), ["0", "1"]);
        assert_eq!(keys(&data("---json\n\"ab\"\n---\n")), ["0", "1"]);
        assert!(is_empty_object(&data("---json\n5\n---\n")));
    }

    #[test]
    fn object_prototype_engine_names() {
        // gray-matter's engine table is a plain object.
        let n = data("---constructor\nab\n---\n");
        assert_eq!(keys(&n), ["0", "1", "2"]); // "\nab"
        let n = data("---toString\nab\n---\n");
        assert_eq!(obj(&n).len(), "[object Object]".len());
        assert!(is_empty_object(&data("---hasOwnProperty\nab\n---\n")));
        kept("---__proto__\nab\n---\n");
        kept("---__defineGetter__\nab\n---\n");
    }

    #[test]
    fn language_line_without_newline() {
        // `str.slice(0, -1)`: `--- x` is YAML `x`, spread into characters.
        assert_eq!(keys(&data("--- x")), ["0"]);
        // `---yaml` without a newline: the engine is `yam`.
        kept("---yaml");
    }

    // --- top-level shapes ----------------------------------------------------------------

    #[test]
    fn top_level_list_spreads_to_index_keys() {
        // c06
        let t = "---\n- x\n- y\n---\nbody";
        let n = data(t);
        assert_eq!(keys(&n), ["0", "1"]);
        assert_eq!(s(get(&n, &["1"])), "y");
        assert_eq!(at(t, get(&n, &["1"]).loc), "y");
    }

    #[test]
    fn top_level_scalar_spreads_to_characters() {
        // c07
        let n = data("---\nhello\n---\nbody");
        assert_eq!(keys(&n), ["0", "1", "2", "3", "4"]);
        assert_eq!(s(get(&n, &["4"])), "o");
        // An astral character is two UTF-16 code units.
        assert_eq!(keys(&data("---\n\"a😀\"\n---\n")), ["0", "1", "2"]);
        // Numbers, booleans, null and dates spread to nothing.
        for t in ["5", "true", "~", "2024-01-01", "\"\""] {
            assert!(is_empty_object(&data(&format!("---\n{t}\n---\n"))), "{t}");
        }
    }

    // --- mappings ------------------------------------------------------------------------

    #[test]
    fn anchors_and_merge_keys() {
        // c08: merged keys first, an explicit key overrides in place.
        let t = "---\nx: &p\n  bash: deny\n  read: ask\npermission:\n  <<: *p\n  edit: ask\n  bash: allow\n---\nbody";
        let n = data(t);
        let p = get(&n, &["permission"]);
        assert_eq!(keys(p), ["bash", "read", "edit"]);
        assert_eq!(s(get(p, &["bash"])), "allow");
        assert_eq!(s(get(p, &["read"])), "ask");
        // The merged value points at its definition.
        assert_eq!(at(t, get(p, &["read"]).loc), "ask");
        assert_eq!(at(t, get(p, &["read"]).key.unwrap()), "read");
        assert_eq!(keys(get(&n, &["x"])), ["bash", "read"]);
    }

    #[test]
    fn merge_lists_and_rules() {
        // A list of maps: the first one wins.
        let n = data("---\n<<: [{a: 1, b: 1}, {a: 2, c: 2}]\nd: 3\n---\n");
        assert_eq!(keys(&n), ["a", "b", "c", "d"]);
        assert_eq!(num(get(&n, &["a"])), "1");
        // Keys before the merge are kept.
        let n = data("---\na: 1\n<<: {a: 2, b: 2}\n---\n");
        assert_eq!(num(get(&n, &["a"])), "1");
        assert_eq!(keys(&n), ["a", "b"]);
        // A merged key may be overridden once; a second explicit key is a duplicate.
        kept("---\nx: &m\n  a: 1\n<<: *m\na: 2\na: 3\n---\n");
        // With `x: &m {a: 1}`, `sanitize` makes `x` a string and `*m` unknown: dropped.
        dropped("---\nx: &m {a: 1}\n<<: *m\na: 2\na: 3\n---\n");
        // Only a mapping or a list of them (js-yaml accepts a list's index keys too).
        kept("---\n<<: 1\n---\n");
        kept("---\n<<: [1]\n---\n");
        assert_eq!(keys(&data("---\n<<: [[x, y]]\n---\n")), ["0", "1"]);
        // A quoted `<<` is an ordinary key.
        assert_eq!(keys(&data("---\n\"<<\": {a: 1}\n---\n")), ["<<"]);
        // Merging a mapping into itself, or an unfinished parent, reads it as it is so far.
        let n = data("---\nb: &B\n  x: 1\n  <<: *B\n  y: 2\n---\n");
        assert_eq!(keys(get(&n, &["b"])), ["x", "y"]);
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        // c09: case A.
        let t = "---\npermission:\n  bash: deny\n  bash: allow\n---\nbody";
        let e = kept(t);
        assert_eq!(e.message, "duplicated mapping key");
        assert_eq!(at(t, e.loc), "bash");
        assert!(e.loc.span.start > t.find("bash").unwrap());
        // Keys are compared after `String()`.
        kept("---\n1: a\n\"1\": b\n---\n");
        kept("---\n0x1: a\n1: b\n---\n");
        kept("---\n~: a\nnull: b\n---\n");
    }

    #[test]
    fn integer_like_keys_come_first() {
        // c10
        let n =
            data("---\npermission:\n  bash: deny\n  \"5\": deny\n  edit: ask\n  10: allow\n---\n");
        assert_eq!(keys(get(&n, &["permission"])), ["5", "10", "bash", "edit"]);
        let n = data("---\nb: 1\n\"01\": 2\n1.0: 3\n-1: 4\n---\n");
        // `1.0` is the number 1, whose key is "1".
        assert_eq!(keys(&n), ["1", "b", "01", "-1"]);
        // `01` is the octal integer 1, a duplicate of `1.0`.
        kept("---\n01: 2\n1.0: 3\n---\n");
    }

    #[test]
    fn keys_are_javascript_strings() {
        let n = data(
            "---\n1.50: a\n0x10: b\n~: c\ntrue: d\n[x, 1, ~]: e\n{a: 1}: f\n.inf: g\n1e3: h\n---\n",
        );
        assert_eq!(
            keys(&n),
            [
                "16",
                "1000",
                "1.5",
                "null",
                "true",
                "x,1,",
                "[object Object]",
                "Infinity"
            ]
        );
        kept("---\n[a, [b]]: 1\n---\n");
        // A date key is `Date.prototype.toString()` (UTC here).
        let n = data("---\n2024-01-01: x\n---\n");
        assert_eq!(
            keys(&n),
            ["Mon Jan 01 2024 00:00:00 GMT+0000 (Coordinated Universal Time)"]
        );
    }

    // --- scalars -------------------------------------------------------------------------

    fn scalar(v: &str) -> Value {
        data(&format!("---\nk: {v}\n---\n"))
            .value
            .as_object()
            .and_then(|o| o.get("k"))
            .map(|n| n.value.clone())
            .expect("k")
    }

    fn str_(v: &str) -> Value {
        Value::String(v.into())
    }

    fn number(v: &str) -> Value {
        Value::Number(v.into())
    }

    #[test]
    fn yes_no_on_off_are_strings() {
        // c11, c21yes, y2
        for v in [
            "no", "yes", "off", "on", "y", "n", "No", "YES", "tRUE", "nULL",
        ] {
            assert_eq!(scalar(v), str_(v), "{v}");
        }
    }

    #[test]
    fn core_booleans_and_nulls() {
        // c21True, y1
        for v in ["true", "True", "TRUE"] {
            assert_eq!(scalar(v), Value::Bool(true));
        }
        for v in ["false", "False", "FALSE"] {
            assert_eq!(scalar(v), Value::Bool(false));
        }
        for v in ["~", "null", "Null", "NULL", ""] {
            assert_eq!(scalar(v), Value::Null, "{v:?}");
        }
        // y4: quoting makes no difference to a string.
        assert_eq!(scalar("deny"), str_("deny"));
        assert_eq!(scalar("'deny'"), str_("deny"));
        assert_eq!(scalar("\"deny\""), str_("deny"));
        assert_eq!(scalar("'true'"), str_("true"));
        assert_eq!(scalar("\"5\""), str_("5"));
    }

    #[test]
    fn integers() {
        let cases = [
            ("5", "5"),
            ("-12", "-12"),
            ("+12", "12"),
            ("0", "0"),
            ("-0", "0"),
            ("0x1F", "31"),
            ("0b101", "5"),
            ("017", "15"),
            ("1_000", "1000"),
            ("1:30", "90"),
            ("-1:30:45", "-5445"),
            ("12345678901234567890", "12345678901234567000"),
        ];
        for (v, want) in cases {
            assert_eq!(scalar(v), number(want), "{v}");
        }
        // Not integers (nor floats): strings.
        for v in ["08", "0o17", "0x", "0b2", "_1", "1_", "1:60", "0X1F"] {
            assert_eq!(scalar(v), str_(v), "{v}");
        }
    }

    #[test]
    fn floats() {
        let cases = [
            ("1.5", "1.5"),
            ("1.50", "1.5"),
            ("1.", "1"),
            (".5", "0.5"),
            ("1e3", "1000"),
            ("1.5e-3", "0.0015"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("1e400", "Infinity"),
            (".inf", "Infinity"),
            ("-.INF", "-Infinity"),
            (".NaN", "NaN"),
            ("1_0.5_0", "10.5"),
            ("190:20:30.15", "685230.15"),
            ("-0.0", "0"),
        ];
        for (v, want) in cases {
            assert_eq!(scalar(v), number(want), "{v}");
        }
        for v in ["-.5", "+.nan", "1.2.3", "1e", "00.5", ".inF"] {
            assert_eq!(scalar(v), str_(v), "{v}");
        }
    }

    #[test]
    fn timestamps_are_not_strings() {
        // c25: OpenCode reports `got 2024-01-01T00:00:00.000Z`.
        assert_eq!(scalar("2024-01-01"), number("2024-01-01T00:00:00.000Z"));
        assert_eq!(
            scalar("2024-01-01 10:20:30.5 +05:30"),
            number("2024-01-01T04:50:30.500Z")
        );
        assert_eq!(
            scalar("2001-12-14t21:59:43.10-5"),
            number("2001-12-15T02:59:43.100Z")
        );
        assert_eq!(scalar("0024-01-01"), number("1924-01-01T00:00:00.000Z"));
        assert_eq!(scalar("2024-13-45"), number("2025-02-14T00:00:00.000Z"));
        assert_eq!(scalar("2024-1-1"), str_("2024-1-1"));
        assert_eq!(scalar("'2024-01-01'"), str_("2024-01-01"));
    }

    #[test]
    fn explicit_tags() {
        assert_eq!(scalar("!!str 12"), str_("12"));
        assert_eq!(scalar("!!int \"12\""), number("12"));
        assert_eq!(scalar("!!float 1"), number("1"));
        assert_eq!(scalar("! 12"), str_("12"));
        assert_eq!(scalar("!!str"), str_(""));
        match scalar("!!binary aGk=") {
            Value::Array(a) => {
                let bytes: Vec<&str> = a.iter().map(num).collect();
                assert_eq!(bytes, ["104", "105"]);
            }
            v => panic!("{v:?}"),
        }
        kept("---\nk: !!bool yes\n---\n");
        kept("---\nk: !!null \"\"\n---\n");
        kept("---\nk: !!int\n---\n");
        kept("---\nk: !foo x\n---\n");
        kept("---\nk: !!map x\n---\n");
        assert!(matches!(scalar("!!set {a, b}"), Value::Object(_)));
        kept("---\nk:\n  !!set {a: 1}\n---\n");
        // On one line, `sanitize` turns the value into a string (case C).
        assert_eq!(scalar("!!set {a: 1}"), str_("!!set {a: 1}"));
        assert!(matches!(scalar("!!omap [a: 1, b: 2]"), Value::Array(_)));
        kept("---\nk:\n  !!omap [a: 1, a: 2]\n---\n");
    }

    // --- sanitize: cases A, B, C ----------------------------------------------------------

    #[test]
    fn sanitize_case_a_unchanged_text_is_kept() {
        // c16
        let t = "---\npermission: [\n---\nbody";
        let e = kept(t);
        assert!(e.loc.span.start >= 4 && e.loc.span.end <= t.len(), "{e:?}");
        // A BOM defeats sanitize's regex (Bun's readText keeps it): still case A.
        kept("\u{feff}---\ndescription: foo: bar\npermission:\n  bash: deny\n---\nbody");
        kept("\u{feff}---\ndescription: foo: bar\npermission: [\n---\nbody");
        // One CRLF line: `split(/\r?\n/)` and `join("\n")` change nothing.
        kept("---\r\npermission: [\r\n---\r\nbody");
    }

    #[test]
    fn sanitize_case_b_changed_but_broken_is_dropped() {
        // c14
        let t = "---\ndescription: foo: bar\npermission: [\n---\nbody";
        let e = dropped(t);
        // The error left after sanitize, mapped back into the original text.
        assert!(e.loc.span.start >= t.find("permission").unwrap(), "{e:?}");
        assert!(e.loc.span.end <= t.len());
        // y5
        dropped("---\ndescription: a: b\npermission:\n  bash: deny\n  bash: allow\n---\n");
        // Sanitize turns CRLF into LF, so a broken multi-line CRLF frontmatter is dropped.
        dropped("---\r\npermission: [\r\nx: 1\r\n---\r\nbody");
    }

    #[test]
    fn sanitize_case_c_fixed() {
        // c15
        let t = "---\ndescription: foo: bar\npermission:\n  bash: deny\n---\nbody";
        let n = data(t);
        let d = get(&n, &["description"]);
        assert_eq!(s(d), "foo: bar");
        assert_eq!(at(t, d.loc), "foo: bar");
        assert_eq!(at(t, d.key.unwrap()), "description");
        let bash = get(&n, &["permission", "bash"]);
        assert_eq!(s(bash), "deny");
        assert_eq!(at(t, bash.loc), "deny");
        assert_eq!(at(t, bash.key.unwrap()), "bash");
        // With CRLF, and a value that is not rewritten.
        let t = "---\r\nmodel: x/y:z\r\nname: a: b\r\nmode: all\r\n---\r\n";
        let n = data(t);
        assert_eq!(s(get(&n, &["name"])), "a: b");
        assert_eq!(at(t, get(&n, &["mode"]).loc), "all");
        assert_eq!(at(t, get(&n, &["model"]).loc), "x/y:z");
    }

    #[test]
    fn sanitize_is_opencodes() {
        let (out, _) = sanitize(
            "---\nurl: http://x\nq: \"a: b\"\nb: >\n  a: b\n#c: d: e\n  i: j: k\n---\nx: y: z",
        )
        .unwrap();
        assert_eq!(
            out,
            "---\nurl: |-\n  http://x\nq: \"a: b\"\nb: >\n  a: b\n#c: d: e\n  i: j: k\n---\nx: y: z"
        );
        assert!(sanitize("---json\na: b: c\n---\n").is_none());
        assert!(sanitize("---\na: b: c").is_none());
        // The lazy group stops at the first `\r?\n---`.
        let (out, _) = sanitize("---\na: b: c\n---x\nd: e: f\n---\n").unwrap();
        assert_eq!(out, "---\na: |-\n  b: c\n---x\nd: e: f\n---\n");
    }

    #[test]
    fn gray_matter_cache_is_process_wide() {
        let t = "---\ndescription: foo: bar\npermission:\n  bash: deny\n---\nbody";
        let mut cache = MatterCache::default();
        assert!(matches!(
            parse_cached(t, SRC, &mut cache),
            Frontmatter::Data(_)
        ));
        // The second file with the same text hits the entry of the failed first attempt.
        let e = match parse_cached(t, SRC, &mut cache) {
            Frontmatter::BrokenKept(e) => e,
            other => panic!("{other:?}"),
        };
        assert!(e.message.contains("cache"), "{}", e.message);
        // The same with a BOM in front (the cache key has the BOM removed).
        let bom = format!("\u{feff}{t}");
        assert!(matches!(
            parse_cached(&bom, SRC, &mut cache),
            Frontmatter::BrokenKept(_)
        ));
        // A dropped text comes back as kept.
        let b = "---\ndescription: foo: bar\npermission: [\n---\nbody";
        assert!(matches!(
            parse_cached(b, SRC, &mut cache),
            Frontmatter::BrokenDropped(_)
        ));
        assert!(matches!(
            parse_cached(b, SRC, &mut cache),
            Frontmatter::BrokenKept(_)
        ));
        // Texts that parse are not affected.
        let ok = "---\na: 1\n---\n";
        assert!(matches!(
            parse_cached(ok, SRC, &mut cache),
            Frontmatter::Data(_)
        ));
        assert!(matches!(
            parse_cached(ok, SRC, &mut cache),
            Frontmatter::Data(_)
        ));
    }

    // --- js-yaml's other rules and leniencies ---------------------------------------------

    #[test]
    fn one_document_only() {
        // `\n---` closes the frontmatter; a lone CR is a YAML line break.
        kept("---\na: 1\r--- \rb: 2\n---\n");
        assert_eq!(keys(&data("---\na: 1\n...\n---\n")), ["a"]);
        kept("---\na: 1\n...\nb: 2\n---\n");
    }

    #[test]
    fn null_byte_and_non_printable() {
        kept("---\na: x\0y\n---\n");
        kept("---\na: x\u{1}y\n---\n");
        kept("---\na: \"x\u{1}y\"\n---\n");
        assert_eq!(scalar("x\u{85}y"), str_("x\u{85}y"));
    }

    #[test]
    fn empty_implicit_key_is_refused() {
        kept("---\n: x\n---\n");
        kept("---\na:\n  : x\n---\n");
        assert_eq!(keys(&data("---\n? \n: x\n---\n")), ["null"]);
        assert_eq!(keys(get(&data("---\na: {: x}\n---\n"), &["a"])), ["null"]);
    }

    #[test]
    fn tab_indentation_as_js_yaml_reads_it() {
        // js-yaml counts only spaces: a tab-indented key is at indentation 0.
        let t = "---\npermission:\n\tbash: deny\n\tedit: ask\n---\n";
        let n = data(t);
        assert_eq!(keys(&n), ["permission", "bash", "edit"]);
        assert_eq!(get(&n, &["permission"]).value, Value::Null);
        assert_eq!(at(t, get(&n, &["edit"]).loc), "ask");
        // But a block collection starting on a tab-indented line takes the tab's column.
        kept("---\n\ta: 1\n\tb: 2\n---\n");
        kept("---\na:\n\t- 1\n\t- 2\n---\n");
        kept("---\na:\n  \tb: 1\n  c: 2\n---\n");
        let n = data("---\na:\n  b: 1\n  \tc: 2\n---\n");
        assert_eq!(keys(get(&n, &["a"])), ["b", "c"]);
    }

    #[test]
    fn flow_leniencies() {
        // `key:[` and `key:{` inside flow collections.
        let t = "---\npermission: {bash:{\"*\":deny, \"git *\": allow}}\n---\n";
        let n = data(t);
        let b = get(&n, &["permission", "bash"]);
        assert_eq!(keys(b), ["*", "git *"]);
        assert_eq!(at(t, get(b, &["git *"]).loc), "allow");
        // `a:b` is one plain scalar, as in YAML.
        assert_eq!(keys(get(&data("---\na: {k:v}\n---\n"), &["a"])), ["k:v"]);
        // Empty flow entries are nulls.
        let n = data("---\na: [x, , y]\nb: [, z]\n---\n");
        assert_eq!(get(&n, &["a"]).value.preview(), "[...]");
        match &get(&n, &["a"]).value {
            Value::Array(a) => assert_eq!(a[1].value, Value::Null),
            v => panic!("{v:?}"),
        }
        // A comment right after a closing bracket or quote.
        assert_eq!(keys(&data("---\na: [x]#c\nb: \"y\"#c\n---\n")), ["a", "b"]);
        // What follows a quoted value on its line is the next key.
        let n = data("---\npermission: \"#q\"y: z\n---\n");
        assert_eq!(keys(&n), ["permission", "y"]);
        let n = data("---\nd: \"open\nname: \"x: y\"\nmode: all\n---\n");
        assert_eq!(keys(&n), ["d", "x", "mode"]);
        assert_eq!(s(get(&n, &["d"])), "open name: ");
        // `key: ? k` is `key:` and the key `k`.
        assert_eq!(keys(&data("---\na: ? k\nb: 1\n---\n")), ["a", "k", "b"]);
    }

    #[test]
    fn block_scalars() {
        assert_eq!(scalar("|\n  a: b\n  c"), str_("a: b\nc\n"));
        assert_eq!(scalar(">-\n  a\n  b"), str_("a b"));
        // The added final line break: js-yaml appends one to the whole text.
        assert_eq!(
            data("---\nk: |\n  x")
                .value
                .as_object()
                .unwrap()
                .get("k")
                .unwrap()
                .value,
            str_("x\n")
        );
    }

    // --- limits ---------------------------------------------------------------------------

    fn over(text: &str) -> FrontmatterError {
        match parse(text, SRC) {
            Frontmatter::OverLimit(e) => e,
            other => panic!("expected OverLimit for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut t = String::from(
            "---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for w in names.windows(2) {
            let refs = vec![format!("*{}", w[0]); 9].join(",");
            t.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
        }
        t.push_str("---\n");
        let e = over(&t);
        assert!(e.message.contains("alias bomb"), "{}", e.message);
        // A long string copied many times.
        let mut t = format!("---\na: &a \"{}\"\n", "x".repeat(1 << 20));
        t.push_str(&format!("b: &b [{}]\n", vec!["*a"; 100].join(",")));
        t.push_str(&format!("c: [{}]\n---\n", vec!["*b"; 100].join(",")));
        over(&t);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        for t in [
            format!(
                "---\na: {}{}\n---\n",
                "[".repeat(10_000),
                "]".repeat(10_000)
            ),
            format!(
                "---\na:\n  {}{}\n---\n",
                "{a: ".repeat(10_000),
                "}".repeat(10_000)
            ),
            format!("---\n{}x\n---\n", "- ".repeat(10_000)),
            format!(
                "---\n{}\n---\n",
                (0..300)
                    .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                    .collect::<String>()
            ),
        ] {
            let e = over(&t);
            assert!(
                e.message.contains("limit") || e.message.contains("nesting"),
                "{}",
                e.message
            );
        }
        // Depth built from aliases is limited too.
        let mut t = String::from("---\na0: &a0 [x]\n");
        for i in 1..400 {
            t.push_str(&format!("a{i}: &a{i} [*a{}]\n", i - 1));
        }
        t.push_str("---\n");
        let e = over(&t);
        assert!(e.message.contains("nesting"), "{}", e.message);
        // 200 levels are fine.
        let t = format!("---\na: {}{}\n---\n", "[".repeat(200), "]".repeat(200));
        assert_eq!(keys(&data(&t)), ["a"]);
    }

    #[test]
    fn cyclic_alias_is_refused() {
        kept("---\na: &a [*a]\n---\n");
        kept("---\na: &a\n  b: *a\n---\n");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        #[test]
        fn never_panics(
            body in proptest::collection::vec(
                proptest::sample::select(vec![
                    "-", ":", " ", "\n", "\r\n", "\t", "[", "]", "{", "}", ",", "#", "&a", "*a",
                    "!!str", "!", "\"", "'", "|", ">", "?", "~", "<<", "---", "...", "%", "a",
                    "bash", "1", "0x", ".", "é", "😀", "\u{feff}", "\u{2028}", "\u{0}", "\u{1}",
                    "\u{a0}", "deny", "2024-01-01", "  ", ": ", "- ",
                ]),
                0..40,
            ),
            prefix in proptest::sample::select(vec!["---\n", "---json\n", "\u{feff}---\n", "--- ", "---\r\n", ""]),
            suffix in proptest::sample::select(vec!["\n---\nbody", "", "\n---", "\r\n---\r\n"]),
        ) {
            let text = format!("{prefix}{}{suffix}", body.concat());
            let check = |n: &Node| {
                fn walk(n: &Node, len: usize) {
                    assert!(n.loc.span.start <= n.loc.span.end && n.loc.span.end <= len);
                    if let Some(k) = n.key {
                        assert!(k.span.start <= k.span.end && k.span.end <= len);
                    }
                    match &n.value {
                        Value::Array(a) => a.iter().for_each(|c| walk(c, len)),
                        Value::Object(o) => o.iter().for_each(|(_, c)| walk(c, len)),
                        _ => {}
                    }
                }
                walk(n, text.len());
            };
            match parse(&text, SRC) {
                Frontmatter::Data(n) => check(&n),
                Frontmatter::BrokenKept(e) | Frontmatter::BrokenDropped(e) | Frontmatter::Executable(e) | Frontmatter::OverLimit(e) => {
                    assert!(e.loc.span.start <= e.loc.span.end && e.loc.span.end <= text.len());
                }
                Frontmatter::Absent => {}
            }
        }
    }
}
