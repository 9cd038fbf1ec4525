//! Text builders for generated configs. Configs are built as a tree that may hold what
//! `serde_json::Value` cannot: duplicate keys, raw tokens, keys in any order. The tree is
//! then printed as JSON/JSONC (optionally with comments, trailing commas or broken JSON5
//! syntax) or as YAML front matter for markdown agents.

use super::rng::Rng;

#[derive(Clone, Debug)]
pub enum J {
    Str(String),
    /// A token printed verbatim: `null`, `42`, `true`.
    Raw(String),
    Arr(Vec<J>),
    /// Entries in file order; a key may repeat (OpenCode keeps the first position, last value).
    Obj(Vec<(String, J)>),
}

impl J {
    pub fn s(s: &str) -> J {
        J::Str(s.to_string())
    }
    pub fn raw(s: &str) -> J {
        J::Raw(s.to_string())
    }
    pub fn obj(entries: Vec<(&str, J)>) -> J {
        J::Obj(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
    /// The entries of an object, or None.
    pub fn entries_mut(&mut self) -> Option<&mut Vec<(String, J)>> {
        match self {
            J::Obj(kv) => Some(kv),
            _ => None,
        }
    }
    /// The value of the last entry named `key` (the one OpenCode keeps), if this is an object.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        self.entries_mut()?
            .iter_mut()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Style {
    pub pretty: bool,
    pub comments: bool,
    pub trailing_commas: bool,
    /// Broken on purpose: identifier-like keys unquoted (JSON5), which OpenCode refuses.
    pub json5_keys: bool,
    /// Broken on purpose: strings in single quotes.
    pub single_quotes: bool,
}

pub fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("string serialises")
}

fn is_ident(k: &str) -> bool {
    let mut cs = k.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

pub fn render_json(j: &J, st: &Style, rng: &mut Rng) -> String {
    let mut out = String::new();
    if st.comments && rng.percent(50) {
        out.push_str("// permaudit conformance case\n");
    }
    write_json(j, st, rng, 0, &mut out);
    if st.pretty {
        out.push('\n');
    }
    out
}

fn write_str(s: &str, st: &Style, out: &mut String) {
    if st.single_quotes {
        out.push('\'');
        out.push_str(&s.replace('\\', "\\\\").replace('\'', "\\'"));
        out.push('\'');
    } else {
        out.push_str(&quote(s));
    }
}

fn newline(depth: usize, out: &mut String) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_json(j: &J, st: &Style, rng: &mut Rng, depth: usize, out: &mut String) {
    match j {
        J::Str(s) => write_str(s, st, out),
        J::Raw(r) => out.push_str(r),
        J::Arr(xs) => {
            out.push('[');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(x, st, rng, depth + 1, out);
            }
            if !xs.is_empty() && st.trailing_commas {
                out.push(',');
            }
            out.push(']');
        }
        J::Obj(kv) => {
            out.push('{');
            for (i, (k, v)) in kv.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if st.pretty {
                    newline(depth + 1, out);
                } else if i > 0 {
                    out.push(' ');
                }
                if st.comments && rng.percent(15) {
                    if st.pretty {
                        out.push_str("// note");
                        newline(depth + 1, out);
                    } else {
                        out.push_str("/* note */ ");
                    }
                }
                if st.json5_keys && is_ident(k) {
                    out.push_str(k);
                } else {
                    write_str(k, st, out);
                }
                out.push(':');
                if st.pretty {
                    out.push(' ');
                }
                write_json(v, st, rng, depth + 1, out);
            }
            if !kv.is_empty() && st.trailing_commas {
                out.push(',');
            }
            if st.pretty && !kv.is_empty() {
                newline(depth, out);
            }
            out.push('}');
        }
    }
}

const YAML_RESERVED: &[&str] = &[
    "true", "false", "null", "yes", "no", "on", "off", "y", "n", "True", "False", "Null", "NULL",
    "Yes", "No", "On", "Off", "TRUE", "FALSE", "YES", "NO", "ON", "OFF",
];

fn yaml_key(k: &str, rng: &mut Rng) -> String {
    let plain_ok = (is_ident(k) && !YAML_RESERVED.contains(&k) && !k.starts_with('$'))
        // Small decimal keys may be written bare (`5: deny`): YAML reads an integer, JS turns
        // it back into the property "5". "01" or 4294967295 are always quoted, because a YAML
        // integer would lose the leading zero.
        || (k.len() <= 2 && !k.starts_with('0') && k.bytes().all(|b| b.is_ascii_digit()));
    if plain_ok && rng.percent(75) {
        k.to_string()
    } else {
        quote(k)
    }
}

fn yaml_scalar(s: &str, rng: &mut Rng) -> String {
    if matches!(s, "allow" | "ask" | "deny" | "primary" | "subagent" | "all") && rng.percent(70) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// YAML block mapping for front matter. `j` must be an object.
pub fn render_yaml(j: &J, rng: &mut Rng) -> String {
    let mut out = String::new();
    write_yaml(j, rng, 0, &mut out);
    out
}

fn write_yaml(j: &J, rng: &mut Rng, depth: usize, out: &mut String) {
    let J::Obj(kv) = j else {
        panic!("write_yaml needs an object")
    };
    for (k, v) in kv {
        for _ in 0..depth {
            out.push_str("  ");
        }
        out.push_str(&yaml_key(k, rng));
        out.push(':');
        match v {
            J::Obj(inner) if inner.is_empty() => out.push_str(" {}\n"),
            J::Obj(_) => {
                out.push('\n');
                write_yaml(v, rng, depth + 1, out);
            }
            J::Str(s) => {
                out.push(' ');
                out.push_str(&yaml_scalar(s, rng));
                out.push('\n');
            }
            J::Raw(r) => {
                out.push(' ');
                out.push_str(r);
                out.push('\n');
            }
            J::Arr(_) => {
                // A JSON array is a valid YAML flow sequence.
                out.push(' ');
                write_json(v, &Style::default(), rng, 0, out);
                out.push('\n');
            }
        }
    }
}
