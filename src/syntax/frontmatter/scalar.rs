//! js-yaml 3's scalars and tags: implicit resolution (null, bool, int, float, timestamp),
//! explicit tags, construction of tagged collections, keys as JavaScript `String()`, and
//! JavaScript number formatting; `!!binary`.

use super::*;

pub(super) fn cyclic(y: &Y) -> YErr {
    (
        y.span.0,
        y.span.1,
        "an alias to a collection that contains it: a cyclic value (unsupported)".into(),
    )
}

/// `String(key)` as js-yaml computes a mapping key.
pub(super) fn key_string(key: &Y) -> Result<String, String> {
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
pub(super) fn scalar_string(v: &YV) -> String {
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

pub(super) fn tag_error_kind(tag: &str, want: &str, got: &str) -> String {
    format!("unacceptable node kind for !<{tag}> tag; it should be \"{want}\", not \"{got}\"")
}

/// The kind a known tag requires.
pub(super) fn tag_kind(tag: &str) -> Option<&'static str> {
    let suffix = tag.strip_prefix(CORE)?;
    Some(match suffix {
        "str" | "null" | "bool" | "int" | "float" | "timestamp" | "merge" | "binary" => "scalar",
        "seq" | "omap" | "pairs" => "sequence",
        "map" | "set" => "mapping",
        _ => return None,
    })
}

pub(super) fn construct_seq(items: Vec<Y>, tag: Option<&str>) -> Result<YV, String> {
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

pub(super) fn construct_map(obj: YMap, tag: Option<&str>) -> Result<YV, String> {
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

pub(super) fn cannot_resolve(tag: &str) -> String {
    format!("cannot resolve a node with !<{tag}> explicit tag")
}

/// A scalar's value: js-yaml's implicit resolution for untagged plain scalars, its explicit
/// types for tagged ones. `empty` is a node without content (`key:`). The flag says the
/// value is a merge key (`<<`).
pub(super) fn resolve_scalar(
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
pub(super) fn resolve_implicit(s: &str) -> (YV, bool) {
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
pub(super) fn is_null(s: &str) -> bool {
    matches!(s, "~" | "null" | "Null" | "NULL")
}

pub(super) fn as_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// js-yaml 3 `resolveYamlInteger`.
pub(super) fn resolve_int(data: &str) -> bool {
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
pub(super) fn parse_radix(s: &str, radix: u32) -> f64 {
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
pub(super) fn construct_int(data: &str) -> f64 {
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
pub(super) fn resolve_float(data: &str) -> bool {
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
pub(super) fn construct_float(data: &str) -> f64 {
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
pub(super) fn parse_float(s: &str) -> f64 {
    if s.is_empty() || s == "." {
        return f64::NAN;
    }
    s.parse::<f64>().unwrap_or(f64::NAN)
}

/// JavaScript `Number.prototype.toString()`.
pub(super) fn js_number(n: f64) -> String {
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

/// js-yaml 3 `!!binary`: `resolveYamlBinary` then `constructYamlBinary`.
pub(super) fn binary(data: &str) -> Option<Vec<u8>> {
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
