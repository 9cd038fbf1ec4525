//! `{env:VAR}` and `{file:path}` substitution on the raw config text, exactly as OpenCode
//! 1.18.34 does it (`ConfigVariable.substitute`, read from the binary's bundle):
//!
//! ```js
//! r = text.replace(/\{env:([^}]+)\}/g, (_, n) => process.env[n] || "")
//! for (m of r.matchAll(/\{file:[^}]+\}/g)) {
//!   // kept verbatim when the text from the start of its line, trimStart()ed, starts "//"
//!   p = m.slice(6, -1); if (p.startsWith("~/")) p = join(homedir(), p.slice(2))
//!   p = isAbsolute(p) ? p : resolve(dirOfConfig, p)
//!   out += JSON.stringify(readText(p).trim()).slice(1, -1)   // missing file: refusal
//! }
//! ```
//!
//! Environment values are inserted raw, so they can inject JSON structure; file contents
//! are string-escaped. The result keeps a map back to the original text so that every span
//! still points at what the user wrote: offsets inside a substituted value map to the
//! `{env:…}` or `{file:…}` token that produced it.

use super::js::js_trim;

/// A text after substitution, with a way back to the original offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct Substituted {
    pub text: String,
    /// `(output start, source start, output len, source len, verbatim)`, in output order.
    segs: Vec<(usize, usize, usize, usize, bool)>,
    /// Every `{env:…}` and `{file:…}` token replaced, as `(source span, reference text)`.
    pub replaced: Vec<(usize, usize, String)>,
}

impl Substituted {
    /// The text unchanged.
    pub fn identity(text: &str) -> Substituted {
        Substituted {
            text: text.to_string(),
            segs: vec![(0, 0, text.len(), text.len(), true)],
            replaced: Vec::new(),
        }
    }

    /// Map an offset of [`Substituted::text`] back to the original text.
    pub fn to_source(&self, off: usize) -> usize {
        let i = match self.segs.binary_search_by(|s| s.0.cmp(&off)) {
            Ok(i) => i,
            Err(0) => return off,
            Err(i) => i - 1,
        };
        let (out, src, out_len, src_len, verbatim) = self.segs[i];
        if verbatim {
            src + (off - out).min(src_len)
        } else if off >= out + out_len {
            src + src_len
        } else {
            src
        }
    }

    fn compose(first: &Substituted, second: Substituted) -> Substituted {
        let mut segs = Vec::with_capacity(second.segs.len() + first.segs.len());
        for &(o, s, ol, sl, v) in &second.segs {
            if !v {
                // A replacement of the second pass: its token maps back as a whole.
                let a = first.to_source(s);
                let b = first.to_source(s + sl);
                segs.push((o, a, ol, b - a, false));
                continue;
            }
            // Text the second pass copied: split it where the first pass's segments meet,
            // so what the first pass kept verbatim stays verbatim (an `{env:}` value after
            // a `{file:}` token must not blur every offset after it into one).
            for &(fo, fs, fol, fsl, fv) in &first.segs {
                let start = s.max(fo);
                let end = (s + sl).min(fo + fol);
                if start >= end {
                    continue;
                }
                let out = o + (start - s);
                if fv {
                    segs.push((out, fs + (start - fo), end - start, end - start, true));
                } else {
                    // Part of a first-pass replacement: maps to its token's start, and to
                    // the token's end where the replacement ends.
                    let src_len = if end == fo + fol { fsl } else { 0 };
                    segs.push((out, fs, end - start, src_len, false));
                }
            }
            if sl == 0 {
                segs.push((o, first.to_source(s), 0, 0, true));
            }
        }
        let mut replaced = first.replaced.clone();
        replaced.extend(
            second
                .replaced
                .iter()
                .map(|(s, e, r)| (first.to_source(*s), first.to_source(*e), r.clone())),
        );
        Substituted {
            text: second.text,
            segs,
            replaced,
        }
    }
}

/// Matches of `/\{PREFIX[^}]+\}/g`: `(start, end, inner)` with `inner` between prefix and `}`.
fn tokens<'a>(text: &'a str, prefix: &str) -> Vec<(usize, usize, &'a str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(rel) = text[i..].find(prefix) {
        let start = i + rel;
        let inner_start = start + prefix.len();
        match text[inner_start..].find('}') {
            Some(0) | None => i = start + 1,
            Some(len) => {
                let end = inner_start + len + 1;
                out.push((start, end, &text[inner_start..inner_start + len]));
                i = end;
            }
        }
    }
    out
}

fn rebuild(text: &str, pieces: Vec<(usize, usize, String, String)>) -> Substituted {
    let mut out = String::with_capacity(text.len());
    let mut segs = Vec::new();
    let mut replaced = Vec::new();
    let mut last = 0;
    for (start, end, with, reference) in pieces {
        if start > last {
            segs.push((out.len(), last, start - last, start - last, true));
            out.push_str(&text[last..start]);
        }
        segs.push((out.len(), start, with.len(), end - start, false));
        out.push_str(&with);
        replaced.push((start, end, reference));
        last = end;
    }
    segs.push((out.len(), last, text.len() - last, text.len() - last, true));
    out.push_str(&text[last..]);
    Substituted {
        text: out,
        segs,
        replaced,
    }
}

/// `JSON.stringify(s).slice(1, -1)`.
pub fn json_escape_inner(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Why a `{file:…}` reference failed.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRefError {
    /// Span of the `{file:…}` token in the original text.
    pub start: usize,
    pub end: usize,
    pub message: String,
}

/// Substitute `{env:…}` then `{file:…}`.
///
/// `env` looks a variable up; `read_file` is given the path as written after `{file:` and
/// returns the file's text or an error message (path resolution lives with the caller,
/// which knows the config's directory and the home directory).
pub fn substitute(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    read_file: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Substituted, FileRefError> {
    let env_pieces: Vec<_> = tokens(text, "{env:")
        .into_iter()
        .map(|(s, e, name)| {
            let v = env(name).unwrap_or_default();
            (s, e, v, text[s..e].to_string())
        })
        .collect();
    let first = if env_pieces.is_empty() {
        Substituted::identity(text)
    } else {
        rebuild(text, env_pieces)
    };
    let r = &first.text;
    let mut file_pieces = Vec::new();
    for (s, e, reference) in tokens(r, "{file:") {
        let line_start = r[..s].rfind('\n').map(|i| i + 1).unwrap_or(0);
        if r[line_start..s].trim_start().starts_with("//") {
            continue;
        }
        match read_file(reference) {
            Ok(content) => file_pieces.push((
                s,
                e,
                json_escape_inner(js_trim(&content)),
                r[s..e].to_string(),
            )),
            Err(message) => {
                return Err(FileRefError {
                    start: first.to_source(s),
                    end: first.to_source(e),
                    message,
                });
            }
        }
    }
    if file_pieces.is_empty() {
        return Ok(first);
    }
    let second = rebuild(r, file_pieces);
    Ok(Substituted::compose(&first, second))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(n: &str) -> Option<String> {
        match n {
            "ACT" => Some("deny".into()),
            "PAT" => Some("rm *".into()),
            "EVIL" => Some("deny\", \"edit\": \"deny".into()),
            _ => None,
        }
    }

    fn nofile(_: &str) -> Result<String, String> {
        Err("missing".into())
    }

    #[test]
    fn env_in_values_and_keys() {
        let t = r#"{"bash":"{env:ACT}","{env:PAT}":"ask","x":"{env:UNSET}"}"#;
        let s = substitute(t, &env, &nofile).unwrap();
        assert_eq!(s.text, r#"{"bash":"deny","rm *":"ask","x":""}"#);
        // An offset inside the substituted "deny" maps to the `{env:ACT}` token.
        let off = s.text.find("deny").unwrap();
        assert_eq!(s.to_source(off), t.find("{env:ACT}").unwrap());
        // Text after a substitution maps back exactly.
        let off = s.text.find("\"x\"").unwrap();
        assert_eq!(s.to_source(off), t.find("\"x\"").unwrap());
    }

    #[test]
    fn env_injects_structure() {
        let s = substitute(r#"{"bash":"{env:EVIL}"}"#, &env, &nofile).unwrap();
        assert_eq!(s.text, r#"{"bash":"deny", "edit": "deny"}"#);
    }

    #[test]
    fn file_is_trimmed_and_escaped_and_comments_skipped() {
        let read = |p: &str| -> Result<String, String> {
            match p {
                "act.txt" => Ok("  deny\n".into()),
                "q.txt" => Ok("a\"b\\c\n\td".into()),
                _ => Err(format!("{p} does not exist")),
            }
        };
        let s = substitute(
            "{\"a\":\"{file:act.txt}\",\n  // \"b\": \"{file:missing}\"\n\"c\":\"{file:q.txt}\"}",
            &env,
            &read,
        )
        .unwrap();
        assert_eq!(
            s.text,
            "{\"a\":\"deny\",\n  // \"b\": \"{file:missing}\"\n\"c\":\"a\\\"b\\\\c\\n\\td\"}"
        );
        let e = substitute("{\"a\":\"{file:nope}\"}", &env, &read).unwrap_err();
        assert_eq!((e.start, e.end), (6, 17));
    }

    #[test]
    fn regex_edge_cases() {
        assert_eq!(tokens("{env:}{env:A}", "{env:"), vec![(6, 13, "A")]);
        assert_eq!(tokens("{env:{env:A}", "{env:"), vec![(0, 12, "{env:A")]);
        assert_eq!(tokens("{env:A", "{env:"), vec![]);
    }
}
