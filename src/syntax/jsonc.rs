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

/// Parse `text` (the source's whole text, or a substituted copy of it) into a [`Node`].
///
/// `to_orig` maps a byte offset of `text` back to the user's own text, so that every span
/// points at what the user wrote even after `{env:…}` substitution.
pub fn parse(
    text: &str,
    source: SourceId,
    to_orig: &dyn Fn(usize) -> usize,
) -> Result<Node, SyntaxError> {
    let loc = |start: usize, end: usize| Loc {
        source,
        span: Span::new(to_orig(start), to_orig(end).max(to_orig(start))),
    };
    // A UTF-8 byte order mark is accepted (Bun's text decoding drops it).
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    if body.is_empty() {
        return Ok(Node {
            value: Value::Object(JsObject::new()),
            loc: loc(0, 0),
            key: None,
        });
    }
    let parsed = jsonc_parser::parse_to_ast(
        body,
        &CollectOptions {
            comments: jsonc_parser::CommentCollectionStrategy::Off,
            tokens: false,
        },
        &parse_options(),
    );
    match parsed {
        Err(e) => {
            let r = e.range();
            Err(SyntaxError {
                loc: loc(bom + r.start, bom + r.end),
                message: e.kind().to_string(),
            })
        }
        Ok(res) => match res.value {
            None => Err(SyntaxError {
                loc: loc(bom, text.len()),
                message: "Expected a value (a file of only whitespace or comments is refused)"
                    .into(),
            }),
            Some(v) => Ok(convert(&v, bom, &loc, None)),
        },
    }
}

fn convert(v: &ast::Value, base: usize, loc: &dyn Fn(usize, usize) -> Loc, key: Option<Loc>) -> Node {
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
                .map(|e| convert(e, base, loc, None))
                .collect(),
        ),
        ast::Value::Object(o) => {
            let mut obj = JsObject::new();
            for p in &o.properties {
                let (name, kr) = match &p.name {
                    ast::ObjectPropName::String(s) => (s.value.to_string(), s.range),
                    ast::ObjectPropName::Word(w) => (w.value.to_string(), w.range),
                };
                // microsoft jsonc-parser builds objects by assignment, and assigning
                // `__proto__` never creates an own property: the key vanishes.
                if name == "__proto__" {
                    continue;
                }
                let kl = loc(base + kr.start, base + kr.end);
                obj.set(name, convert(&p.value, base, loc, Some(kl)));
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
        let text = "{\"bash\": \"deny\"}";
        let n = p(text).unwrap();
        let b = n.value.as_object().unwrap().get("bash").unwrap();
        assert_eq!(&text[b.loc.span.start..b.loc.span.end], "\"deny\"");
        let k = b.key.unwrap();
        assert_eq!(&text[k.span.start..k.span.end], "\"bash\"");
    }

    #[test]
    fn bom_offsets_are_kept() {
        let text = "\u{feff}{\"a\":\"b\"}";
        let n = p(text).unwrap();
        let a = n.value.as_object().unwrap().get("a").unwrap();
        assert_eq!(&text[a.loc.span.start..a.loc.span.end], "\"b\"");
    }

    #[test]
    fn proto_key_vanishes() {
        let n = p("{\"__proto__\": {\"x\": \"deny\"}, \"y\": \"ask\"}").unwrap();
        let keys: Vec<_> = n.value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["y"]);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(p(&text).is_err());
    }
}
