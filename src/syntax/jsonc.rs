//! Strict JSONC, as OpenCode 1.18.34 accepts it.
//!
//! OpenCode parses config text with microsoft `jsonc-parser`'s `parse(text, errors,
//! {allowTrailingComma: true})` and refuses the file when `errors` is not empty
//! (`packages/opencode/src/config/parse.ts`). That accepts `//` and `/* */` comments and
//! trailing commas, and nothing of JSON5: single quotes, unquoted keys, hexadecimal or `+`
//! numbers, `Infinity`/`NaN` and bare decimal points are errors (spec §6, verified).
//! A zero-length text is `{}`; a text of only whitespace is an error (`ValueExpected`).
//!
//! We use the `jsonc-parser` crate with every loose option switched off. The crate stops at
//! the first error, which is enough: one error already makes OpenCode refuse the file.
//! Its nesting limit (512) is kept as permaudit's own explicit limit.

use super::value::{JsObject, Node, Value};
use crate::source::{Loc, SourceId, Span};
use jsonc_parser::ast;
use jsonc_parser::{CollectOptions, ParseOptions};

/// Deepest nesting of objects and arrays permaudit reads (OpenCode has no such limit).
pub const MAX_NESTING: usize = 512;

/// A JSONC syntax error: where, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub loc: Loc,
    pub message: String,
    /// Past permaudit's nesting limit ([`MAX_NESTING`]), which OpenCode does not have:
    /// not a refusal by OpenCode.
    pub limit: bool,
}

fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// How a text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// A config file: a leading BOM is dropped by the file decoder.
    File,
    /// `OPENCODE_CONFIG_CONTENT`: the same parser, but no decoder drops a BOM.
    EnvText,
    /// `JSON.parse` (`OPENCODE_PERMISSION`): strict JSON, and `__proto__` is an own key.
    StrictJson,
}

/// Parse a config file's text (or a substituted copy of it) into a [`Node`].
///
/// `to_orig` maps a byte offset of `text` back to the user's own text, so that every span
/// points at what the user wrote even after `{env:…}` substitution.
pub fn parse(
    text: &str,
    source: SourceId,
    to_orig: &dyn Fn(usize) -> usize,
) -> Result<Node, SyntaxError> {
    parse_as(text, source, to_orig, Dialect::File)
}

/// What [`extra_checks`] found: `(start, end, message, past the nesting limit)`.
type Extra = (usize, usize, String, bool);

/// The characters microsoft jsonc-parser's scanner refuses but the `jsonc-parser` crate
/// accepts: whitespace other than space, tab, LF and CR between tokens (`InvalidSymbol`), and
/// raw control characters inside strings (`InvalidCharacter`). Also the first `{` or `[`
/// deeper than [`MAX_NESTING`], so that the limit is reported where it is passed and as
/// permaudit's (the crate's own depth error is a refusal at another place).
fn extra_checks(text: &str) -> Option<Extra> {
    #[derive(PartialEq)]
    enum St {
        Code,
        Str,
        Line,
        Block,
    }
    let mut st = St::Code;
    let mut str_start = 0;
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match st {
            St::Code => match c {
                '"' => {
                    st = St::Str;
                    str_start = i;
                }
                '/' if chars.peek().map(|p| p.1) == Some('/') => st = St::Line,
                '/' if chars.peek().map(|p| p.1) == Some('*') => {
                    chars.next();
                    st = St::Block;
                }
                ' ' | '\t' | '\n' | '\r' => {}
                '{' | '[' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Some((
                            i,
                            i + 1,
                            format!(
                                "nesting deeper than {MAX_NESTING} levels: past permaudit's limit (OpenCode has none; see docs/limits.md)"
                            ),
                            true,
                        ));
                    }
                }
                '}' | ']' => depth = depth.saturating_sub(1),
                c if c.is_whitespace() || c == '\u{feff}' => {
                    return Some((
                        i,
                        i + c.len_utf8(),
                        "InvalidSymbol: only space, tab, LF and CR separate tokens".into(),
                        false,
                    ));
                }
                _ => {}
            },
            St::Str => match c {
                '\\' => {
                    chars.next();
                }
                '"' => st = St::Code,
                // microsoft jsonc-parser's scanner ends a string at a line break
                // (`UnexpectedEndOfString`): the quote was never closed.
                '\n' | '\r' => {
                    return Some((
                        str_start,
                        i,
                        "unterminated string: it runs to the end of its line; close it with `\"`"
                            .into(),
                        false,
                    ));
                }
                c if (c as u32) < 0x20 => {
                    return Some((
                        str_start,
                        i + 1,
                        "InvalidCharacter: a raw control character (tab, newline, …) inside a string; escape it".into(),
                        false,
                    ));
                }
                _ => {}
            },
            St::Line => {
                if c == '\n' || c == '\r' {
                    st = St::Code;
                }
            }
            St::Block => {
                if c == '*' && chars.peek().map(|p| p.1) == Some('/') {
                    chars.next();
                    st = St::Code;
                }
            }
        }
    }
    None
}

/// The string key that ends just before `at` (white space and comments aside): its byte
/// range, quotes included.
fn key_before(body: &str, at: usize) -> Option<(usize, usize)> {
    let head = body.get(..at)?;
    let mut end = head.trim_end_matches([' ', '\t', '\n', '\r']).len();
    // `"key" // comment` or `"key" /* comment */` before the line break.
    loop {
        let h = &head[..end];
        if h.ends_with("*/") {
            end = h.rfind("/*")?;
        } else if let Some(line_start) = h.rfind('\n').map(|i| i + 1).or(Some(0))
            && let Some(c) = comment_start(&h[line_start..])
        {
            end = line_start + c;
        } else {
            break;
        }
        end = head[..end].trim_end_matches([' ', '\t', '\n', '\r']).len();
    }
    let h = &head[..end];
    if !h.ends_with('"') || end < 2 {
        return None;
    }
    // The opening quote: the last `"` before the closing one that no backslash escapes.
    let inner = &h[..end - 1];
    let mut i = inner.len();
    while let Some(q) = inner[..i].rfind('"') {
        let slashes = inner[..q].len() - inner[..q].trim_end_matches('\\').len();
        if slashes % 2 == 0 {
            return Some((q, end));
        }
        i = q;
    }
    None
}

/// The start of a `//` comment on one line (outside strings), if any.
fn comment_start(line: &str) -> Option<usize> {
    let mut in_str = false;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if in_str => {
                chars.next();
            }
            '"' => in_str = !in_str,
            '/' if !in_str && chars.peek().map(|p| p.1) == Some('/') => return Some(i),
            _ => {}
        }
    }
    None
}

/// One property of an object exactly as written (duplicates included).
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenProp {
    pub key: String,
    pub key_loc: Loc,
    pub value: Node,
}

/// An object whose written key order differs from the order JavaScript gives it: it has a
/// duplicate key (JavaScript keeps the first position and the last value) or an
/// integer-like key that JavaScript moves to the front. Its properties as written, in file
/// order. Only the `js-key-order` audit reads these; the parsed [`Node`] is unaffected.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenObject {
    pub loc: Loc,
    pub props: Vec<WrittenProp>,
}

/// Parse `text` as the given [`Dialect`].
pub fn parse_as(
    text: &str,
    source: SourceId,
    to_orig: &dyn Fn(usize) -> usize,
    dialect: Dialect,
) -> Result<Node, SyntaxError> {
    parse_recording(text, source, to_orig, dialect).map(|(node, _)| node)
}

/// [`parse_as`], also returning every object whose written order JavaScript changes
/// ([`WrittenObject`]), in document order.
pub fn parse_recording(
    text: &str,
    source: SourceId,
    to_orig: &dyn Fn(usize) -> usize,
    dialect: Dialect,
) -> Result<(Node, Vec<WrittenObject>), SyntaxError> {
    let loc = |start: usize, end: usize| Loc {
        source,
        span: Span::new(to_orig(start), to_orig(end).max(to_orig(start))),
    };
    let bom = if dialect == Dialect::File && text.starts_with('\u{feff}') {
        3
    } else {
        0
    };
    let body = &text[bom..];
    if let Some((s, e, message, limit)) = extra_checks(body) {
        return Err(SyntaxError {
            loc: loc(bom + s, bom + e),
            message,
            limit,
        });
    }
    if body.is_empty() && dialect != Dialect::StrictJson {
        let empty = Node {
            value: Value::Object(JsObject::new()),
            loc: loc(0, 0),
            key: None,
        };
        return Ok((empty, Vec::new()));
    }
    let parsed = jsonc_parser::parse_to_ast(
        body,
        &CollectOptions {
            comments: jsonc_parser::CommentCollectionStrategy::Off,
            tokens: false,
        },
        &if dialect == Dialect::StrictJson {
            ParseOptions {
                allow_comments: false,
                allow_trailing_commas: false,
                ..parse_options()
            }
        } else {
            parse_options()
        },
    );
    match parsed {
        Err(e) => {
            let r = e.range();
            let (start, end, message) = match e.kind() {
                // The crate marks the token after the key; the mistake is the key.
                jsonc_parser::errors::ParseErrorKind::ExpectedColonAfterObjectKey => {
                    match key_before(body, r.start) {
                        Some((s, e)) => (
                            s,
                            e,
                            "expected a colon after this key (OpenCode reports ColonExpected at the token after it)"
                                .to_string(),
                        ),
                        None => (r.start, r.end, e.kind().to_string()),
                    }
                }
                kind => (r.start, r.end, kind.to_string()),
            };
            Err(SyntaxError {
                loc: loc(bom + start, bom + end),
                message,
                limit: false,
            })
        }
        Ok(res) => match res.value {
            None => Err(SyntaxError {
                loc: loc(bom, text.len()),
                message: "Expected a value (a file of only whitespace or comments is refused)"
                    .into(),
                limit: false,
            }),
            Some(v) => {
                let mut written = Vec::new();
                let node = convert(
                    &v,
                    bom,
                    &loc,
                    None,
                    dialect == Dialect::StrictJson,
                    &mut written,
                );
                Ok((node, written))
            }
        },
    }
}

fn convert(
    v: &ast::Value,
    base: usize,
    loc: &dyn Fn(usize, usize) -> Loc,
    key: Option<Loc>,
    keep_proto: bool,
    written: &mut Vec<WrittenObject>,
) -> Node {
    use jsonc_parser::common::Ranged;
    let r = v.range();
    let value = match v {
        ast::Value::StringLit(s) => Value::String(s.value.to_string()),
        ast::Value::NumberLit(n) => Value::Number(n.value.to_string()),
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(a) => Value::Array(
            a.elements
                .iter()
                .map(|e| convert(e, base, loc, None, keep_proto, written))
                .collect(),
        ),
        ast::Value::Object(o) => {
            let mut props = Vec::new();
            let mut names: JsObject<()> = JsObject::new();
            for p in &o.properties {
                let (name, kr) = match &p.name {
                    ast::ObjectPropName::String(s) => (s.value.to_string(), s.range),
                    ast::ObjectPropName::Word(w) => (w.value.to_string(), w.range),
                };
                // microsoft jsonc-parser builds objects by assignment, and assigning
                // `__proto__` never creates an own property: the key vanishes.
                if name == "__proto__" && !keep_proto {
                    continue;
                }
                let kl = loc(base + kr.start, base + kr.end);
                let value = convert(&p.value, base, loc, Some(kl), keep_proto, written);
                names.set(name.clone(), ());
                props.push(WrittenProp {
                    key: name,
                    key_loc: kl,
                    value,
                });
            }
            // Without duplicates, the JavaScript order differs only by moved index keys.
            let reordered =
                props.len() != names.len() || props.iter().map(|p| p.key.as_str()).ne(names.keys());
            let mut obj = JsObject::new();
            if reordered {
                for p in &props {
                    obj.set(p.key.clone(), p.value.clone());
                }
                written.push(WrittenObject {
                    loc: loc(base + r.start, base + r.end),
                    props,
                });
            } else {
                for p in props {
                    obj.set(p.key, p.value);
                }
            }
            Value::Object(obj)
        }
    };
    Node {
        value,
        loc: loc(base + r.start, base + r.end),
        key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Node, SyntaxError> {
        parse(text, SourceId(0), &|o| o)
    }

    fn err_at(text: &str) -> (String, &str) {
        let e = p(text).unwrap_err();
        (e.message, &text[e.loc.span.start..e.loc.span.end])
    }

    #[test]
    fn a_key_without_its_colon_is_refused_at_the_key() {
        // The crate marks the token after the key (here the next line's `}`).
        for text in [
            "{\n  \"permission\": {\n    \"edit\"\n  }\n}\n",
            "{\n  \"permission\": {\n    \"edit\" \"deny\"\n  }\n}\n",
            "{\"permission\": {\"edit\" // why\n /* more */ }}",
            "{\"permission\": {\"ed\\\"it\"}}",
        ] {
            let (message, at) = err_at(text);
            assert!(
                message.contains("colon after this key"),
                "{text:?}: {message}"
            );
            assert!(
                at.starts_with("\"ed") && at.ends_with("it\""),
                "{text:?}: {at:?}"
            );
        }
    }

    #[test]
    fn an_unclosed_string_is_unterminated() {
        // At a line end (the scanner stops there) and at the end of the text.
        for text in ["{\n  \"edit\": \"deny\n}\n", "{\"edit\": \"deny"] {
            let (message, at) = err_at(text);
            assert!(
                message.to_lowercase().contains("unterminated string"),
                "{text:?}: {message}"
            );
            assert!(at.starts_with("\"deny"), "{text:?}: {at:?}");
        }
        // A tab inside a string is still a raw control character.
        let (message, _) = err_at("{\"edit\": \"de\tny\"}");
        assert!(message.contains("raw control character"), "{message}");
    }

    #[test]
    fn accepts_comments_and_trailing_commas() {
        let n = p("// c\n{ /* b */ \"permission\": {\"bash\": \"deny\",}, }").unwrap();
        let o = n.value.as_object().unwrap();
        assert!(o.get("permission").is_some());
    }

    #[test]
    fn empty_is_empty_object_whitespace_is_error() {
        assert_eq!(p("").unwrap().value, Value::Object(JsObject::new()));
        assert_eq!(p("\u{feff}").unwrap().value, Value::Object(JsObject::new()));
        assert!(p("  \n").is_err());
    }

    #[test]
    fn refuses_json5() {
        for t in [
            "{permission: {}}",
            "{'permission': {}}",
            "{\"a\": 0x1}",
            "{\"a\": +1}",
            "{\"a\": .5}",
            "{\"a\": NaN}",
            "{\"a\": 1} x",
            "{\"a\": 1 \"b\": 2}",
        ] {
            assert!(p(t).is_err(), "{t} should be refused");
        }
    }

    #[test]
    fn spans_point_at_keys_and_values() {
        assert_eq!(
            spanned("{\"bash\": \"deny\"}", "bash"),
            ("\"bash\"", "\"deny\"")
        );
    }

    #[test]
    fn bom_offsets_are_kept() {
        assert_eq!(spanned("\u{feff}{\"a\":\"b\"}", "a"), ("\"a\"", "\"b\""));
    }

    /// The text of top-level `key`'s key and of its value, by their spans.
    fn spanned<'t>(text: &'t str, key: &str) -> (&'t str, &'t str) {
        let n = p(text).unwrap();
        let v = n.value.as_object().unwrap().get(key).unwrap();
        let k = v.key.unwrap();
        (
            &text[k.span.start..k.span.end],
            &text[v.loc.span.start..v.loc.span.end],
        )
    }

    #[test]
    fn proto_key_vanishes() {
        let n = p("{\"__proto__\": {\"x\": \"deny\"}, \"y\": \"ask\"}").unwrap();
        let keys: Vec<_> = n.value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["y"]);
    }

    #[test]
    fn microsoft_scanner_strictness() {
        for t in [
            "{\"a\":\u{a0}\"b\"}",
            "{\"a\":\u{b}\"b\"}",
            "{\"a\":\"b\"}\u{feff}",
            "{\"a\":\"b\tc\"}",
            "{\"a\":\"b\u{0}\"}",
        ] {
            assert!(p(t).is_err(), "{t:?} should be refused");
        }
        assert!(p("{\"a\":\"b\\\"\t\"}").is_err());
        assert!(p("{\"a\":\r\n\t\"b\\\"c\"} // \u{a0}").is_ok());
        assert!(p("{\"a\":\"\u{a0}\"} /* \u{b} */").is_ok());
    }

    #[test]
    fn strict_json_keeps_proto_and_refuses_comments() {
        let s = |t: &str| parse_as(t, SourceId(0), &|o| o, Dialect::StrictJson);
        let n = s("{\"__proto__\":{\"x\":\"deny\"}}").unwrap();
        assert!(n.value.as_object().unwrap().get("__proto__").is_some());
        assert!(s("{\"a\":1,}").is_err());
        assert!(s("// c\n{}").is_err());
        assert!(s("").is_err());
        let bom = |t: &str| parse_as(t, SourceId(0), &|o| o, Dialect::EnvText);
        assert!(bom("\u{feff}{}").is_err());
    }

    #[test]
    fn records_objects_javascript_reorders() {
        let text = r#"{"a":{"*":"deny","5":"allow"},"b":{"x":"ask","y":"ask","x":"deny"},"c":{"1":"ask","2":"ask","z":"ask"}}"#;
        let (n, written) = parse_recording(text, SourceId(0), &|o| o, Dialect::File).unwrap();
        assert_eq!(n, p(text).unwrap());
        let keys: Vec<Vec<&str>> = written
            .iter()
            .map(|w| w.props.iter().map(|p| p.key.as_str()).collect())
            .collect();
        // `c` is written in JavaScript order already; the outer object has no quirk.
        assert_eq!(keys, [vec!["*", "5"], vec!["x", "y", "x"]]);
        let w = &written[1];
        assert_eq!(
            &text[w.loc.span.start..w.loc.span.end],
            r#"{"x":"ask","y":"ask","x":"deny"}"#
        );
        assert_eq!(w.props[2].value.value.as_str(), Some("deny"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = p(&text).unwrap_err();
        assert!(e.limit, "{e:?}");
        assert_eq!(
            e.loc.span.start, MAX_NESTING,
            "the first bracket past the limit"
        );
    }

    #[test]
    fn nesting_limit_is_exact() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(p(&nest(MAX_NESTING)).is_ok());
        let e = p(&nest(MAX_NESTING + 1)).unwrap_err();
        assert!(e.limit && e.message.contains("limit"), "{e:?}");
        // Brackets in strings and comments do not count.
        let quoted = format!("[\"{}\" /* {} */]", "[".repeat(1000), "{".repeat(1000));
        assert!(p(&quoted).is_ok());
    }
}
