//! gray-matter 4 as OpenCode calls it: the fences (BOM, `---`, the language tag, the
//! closing fence), the engines, the "empty" test and the spread of the data, and OpenCode's
//! `sanitize` retry with the map from sanitized offsets back to the user's text.

use super::*;
use crate::syntax::js::{js_line_terminator, js_space, js_trim};

// ---------------------------------------------------------------------------------------
// OpenCode's sanitize

/// Where the pieces of a sanitized text came from.
#[derive(Debug, Default)]
pub(super) struct OffsetMap {
    pub(super) segs: Vec<Seg>,
}

#[derive(Debug)]
pub(super) struct Seg {
    /// Start in the sanitized text.
    pub(super) s: usize,
    pub(super) len: usize,
    /// Start in the original text.
    pub(super) q: usize,
    /// The piece is a copy of the original (offsets map one to one); otherwise every offset
    /// of it maps to `q`.
    pub(super) same: bool,
}

impl OffsetMap {
    pub(super) fn push(&mut self, s: usize, len: usize, q: usize, same: bool) {
        self.segs.push(Seg { s, len, q, same });
    }

    pub(super) fn map(&self, off: usize) -> usize {
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
pub(super) fn sanitize(q: &str) -> Option<(String, OffsetMap)> {
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
pub(super) fn sanitize_line(line: &str) -> Option<(&str, usize, usize, &str)> {
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
pub(super) enum Out {
    Absent,
    Data(Node),
    Exec(FrontmatterError),
}

/// What gray-matter's engine table gives for a language name (`opts.engines[name] ||
/// opts.engines[alias(name)]` on a plain object holding `yaml`, `json` and `javascript`).
pub(super) enum Engine {
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

pub(super) fn engine_for(name: &str, matter: &str) -> Engine {
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
pub(super) fn matter(
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
pub(super) fn is_blank(matter: &str) -> bool {
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
pub(super) fn spread(node: Node, root: Loc) -> Node {
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
