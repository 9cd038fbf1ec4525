//! JSON values as OpenCode holds them: JavaScript objects, with JavaScript's key order.
//!
//! This is the one place that knows how a JavaScript engine orders object keys, because
//! OpenCode turns every permission object into rules with `Object.entries`, and rule order is
//! semantics (last match wins). Two rules hold in every object and every merge:
//!
//! * assigning to a key that exists keeps the key's **first** position and takes the new
//!   value (duplicate keys in a JSON text, `{...a, ...b}`, remeda `mergeDeep`);
//! * keys that are canonical array indices (`"0"` … `"4294967294"`) are listed first, in
//!   ascending numeric order, ahead of all other keys in insertion order (ECMA-262
//!   OrdinaryOwnPropertyKeys). `"01"`, `"-1"` and `"4294967295"` are ordinary keys.

use crate::source::Loc;
use indexmap::IndexMap;

/// A value with the place it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    /// The value's own text.
    pub loc: Loc,
    /// The key's text, when this value is an object property.
    pub key: Option<Loc>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A number, as written.
    Number(String),
    String(String),
    Array(Vec<Node>),
    Object(JsObject),
}

impl Value {
    /// The JSON type name OpenCode's schema errors use for a value of this kind.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    pub fn as_object(&self) -> Option<&JsObject> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A short JSON rendering for messages (`"ALLOW"`, `{"*":"deny"}`, `[...]`).
    pub fn preview(&self) -> String {
        let s = match self {
            Value::Null => "null".to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.clone(),
            Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
            Value::Array(_) => "[...]".to_string(),
            Value::Object(o) => {
                let inner: Vec<String> = o
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{}:{}",
                            serde_json::to_string(k).unwrap_or_default(),
                            v.value.preview()
                        )
                    })
                    .collect();
                format!("{{{}}}", inner.join(","))
            }
        };
        if s.chars().count() > 80 {
            let cut: String = s.chars().take(77).collect();
            format!("{cut}...")
        } else {
            s
        }
    }
}

/// Is `key` a canonical array index: `ToString(ToUint32(key)) == key` and not 2^32-1?
pub fn is_array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if b.len() > 1 && b[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    if n < u32::MAX as u64 {
        Some(n as u32)
    } else {
        None
    }
}

/// An object with JavaScript property semantics (see the module docs).
///
/// Generic over the value type so that the model's typed maps (permission objects, agent
/// maps) get exactly the same key order as parsed JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct JsObject<V = Node> {
    /// Keys in insertion order; [`JsObject::iter`] applies the index-key rule.
    entries: IndexMap<String, V>,
}

impl<V> Default for JsObject<V> {
    fn default() -> Self {
        JsObject {
            entries: IndexMap::new(),
        }
    }
}

impl<V> JsObject<V> {
    pub fn new() -> JsObject<V> {
        JsObject::default()
    }

    /// `obj[key] = value`: an existing key keeps its position and takes the value.
    pub fn set(&mut self, key: String, value: V) {
        if let Some(slot) = self.entries.get_mut(&key) {
            *slot = value;
        } else {
            self.entries.insert(key, value);
        }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.entries.get_mut(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// `delete obj[key]`.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.entries.shift_remove(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `Object.entries(obj)` order: array-index keys ascending, then the rest by insertion.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        let mut index_keys: Vec<(u32, &str, &V)> = self
            .entries
            .iter()
            .filter_map(|(k, v)| is_array_index(k).map(|n| (n, k.as_str(), v)))
            .collect();
        index_keys.sort_by_key(|(n, _, _)| *n);
        index_keys.into_iter().map(|(_, k, v)| (k, v)).chain(
            self.entries
                .iter()
                .filter(|(k, _)| is_array_index(k).is_none())
                .map(|(k, v)| (k.as_str(), v)),
        )
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _)| k)
    }

    /// `{...a, ...b}` with `combine(old, new)` deciding the value of a key present in both.
    pub fn merged_with(&self, other: &JsObject<V>, combine: impl Fn(&V, &V) -> V) -> JsObject<V>
    where
        V: Clone,
    {
        let mut out = JsObject::new();
        for (k, v) in self.iter() {
            out.set(k.to_string(), v.clone());
        }
        for (k, v) in other.iter() {
            let nv = match out.get(k) {
                Some(old) => combine(old, v),
                None => v.clone(),
            };
            out.set(k.to_string(), nv);
        }
        out
    }
}

/// remeda `mergeDeep(target, source)` as OpenCode 1.18.34 uses it to merge configs:
/// `{...target, ...source}`, with keys whose values are plain objects on both sides merged
/// recursively. Arrays and scalars are replaced wholesale.
pub fn merge_deep(target: &JsObject, source: &JsObject) -> JsObject {
    target.merged_with(source, |old, new| match (&old.value, &new.value) {
        (Value::Object(a), Value::Object(b)) => Node {
            value: Value::Object(merge_deep(a, b)),
            loc: new.loc,
            key: new.key,
        },
        _ => new.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceId, Span};

    fn n(s: &str) -> Node {
        Node {
            value: Value::String(s.into()),
            loc: Loc {
                source: SourceId(0),
                span: Span::default(),
            },
            key: None,
        }
    }

    fn keys(o: &JsObject) -> Vec<String> {
        o.keys().map(str::to_string).collect()
    }

    #[test]
    fn array_index_keys() {
        assert_eq!(is_array_index("0"), Some(0));
        assert_eq!(is_array_index("12"), Some(12));
        assert_eq!(is_array_index("4294967294"), Some(4294967294));
        assert_eq!(is_array_index("4294967295"), None);
        assert_eq!(is_array_index("01"), None);
        assert_eq!(is_array_index("-1"), None);
        assert_eq!(is_array_index("1.0"), None);
        assert_eq!(is_array_index(""), None);
        assert_eq!(is_array_index("99999999999"), None);
    }

    #[test]
    fn index_keys_first_ascending() {
        let mut o = JsObject::new();
        for k in ["*", "5", "b", "01", "3", "4294967295"] {
            o.set(k.into(), n(k));
        }
        assert_eq!(keys(&o), ["3", "5", "*", "b", "01", "4294967295"]);
    }

    #[test]
    fn duplicate_keeps_first_position_last_value() {
        let mut o = JsObject::new();
        o.set("*".into(), n("deny"));
        o.set("git *".into(), n("allow"));
        o.set("*".into(), n("ask"));
        let got: Vec<_> = o
            .iter()
            .map(|(k, v)| (k.to_string(), v.value.as_str().unwrap().to_string()))
            .collect();
        assert_eq!(
            got,
            [("*".into(), "ask".into()), ("git *".into(), "allow".into())]
        );
    }

    #[test]
    fn merge_keeps_earlier_position() {
        let mut a = JsObject::new();
        a.set("bash".into(), n("deny"));
        a.set("edit".into(), n("deny"));
        let mut b = JsObject::new();
        b.set("read".into(), n("ask"));
        b.set("bash".into(), n("allow"));
        let m = merge_deep(&a, &b);
        let got: Vec<_> = m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.value.as_str().unwrap()))
            .collect();
        assert_eq!(got, ["bash=allow", "edit=deny", "read=ask"]);
    }
}
