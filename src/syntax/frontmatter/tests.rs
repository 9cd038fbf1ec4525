//! Frontmatter as OpenCode reads it: fences, the cache, js-yaml's values, dates, relax.

use super::*;

const SRC: SourceId = SourceId(7);

/// `permission.bash` of `n` (read from `t`) is `deny`, written as `written`; its node.
fn denies_bash<'n>(t: &str, n: &'n Node, written: &str) -> &'n Node {
    let bash = get(n, &["permission", "bash"]);
    assert_eq!(s(bash), "deny");
    assert_eq!(at(t, bash.loc), written);
    bash
}

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
    let bash = denies_bash(t, &n, "deny");
    assert_eq!(at(t, bash.key.unwrap()), "bash");
}

#[test]
fn crlf_works() {
    // c02
    let t = "---\r\npermission:\r\n  bash: deny\r\n---\r\nbody\r\nline2";
    let n = data(t);
    assert_eq!(keys(&n), ["permission"]);
    denies_bash(t, &n, "deny");
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
    denies_bash(t, &n, "\"deny\"");
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
    let n = data("---\npermission:\n  bash: deny\n  \"5\": deny\n  edit: ask\n  10: allow\n---\n");
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
    let bash = denies_bash(t, &n, "deny");
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
    let bom = format!("\u{feff}{t}");
    let b = "---\ndescription: foo: bar\npermission: [\n---\nbody";
    let ok = "---\na: 1\n---\n";
    let kind = |f: &Frontmatter| match f {
        Frontmatter::Absent => "absent",
        Frontmatter::Data(_) => "data",
        Frontmatter::BrokenKept(_) => "kept",
        Frontmatter::BrokenDropped(_) => "dropped",
        Frontmatter::Executable(_) => "executable",
        Frontmatter::OverLimit(_) => "over limit",
    };
    let mut cache = MatterCache::default();
    // In order, each text parsed with the cache as the texts before it left it.
    let steps: [(&str, &str, &str); 7] = [
        (t, "data", "a text that needs sanitizing"),
        // The second file with the same text hits the entry of the failed first attempt.
        (t, "kept", "the same text again"),
        // The cache key has the BOM removed.
        (&bom, "kept", "the same text with a BOM in front"),
        (b, "dropped", "a text sanitizing cannot save"),
        (b, "kept", "a dropped text comes back as kept"),
        (ok, "data", "a text that parses"),
        (ok, "data", "texts that parse are not affected"),
    ];
    for (text, want, what) in steps {
        let got = parse_cached(text, SRC, &mut cache);
        assert_eq!(kind(&got), want, "{what}: {got:?}");
        if let (Frontmatter::BrokenKept(e), true) = (&got, text == t) {
            assert!(e.message.contains("cache"), "{}", e.message);
        }
    }
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

#[test]
fn a_tab_error_is_at_the_tab() {
    // granit marks the plain scalar `b` it was reading; the mistake is the tab that
    // indents the next line (an editor should land on 4:1, not on 3:5).
    let t = "---\na:\n  - b\n\t- c\n---\nbody";
    let e = kept(t);
    assert!(e.message.contains("tab"), "{}", e.message);
    assert_eq!(e.loc.span.start, t.find('\t').unwrap(), "{e:?}");
}
