//! The fuzz harnesses: one function per target, each taking the raw fuzz input and panicking
//! on any violated property. The `cargo fuzz` targets in `fuzz/fuzz_targets/` call these, and
//! `tests/fuzz_replay.rs` replays the committed corpus and every crash regression through the
//! same functions on stable Rust (this file is included there with `#[path]`).
//!
//! Inputs are bytes; where a target needs several texts they are separated by the byte `0xFF`,
//! which never occurs in UTF-8, so every UTF-8 text can be expressed (other invalid bytes still
//! reach the loader, which decodes files lossily as Bun does).

#![allow(dead_code)]

use permaudit::agents::evaluate;
use permaudit::checks::{self, sample_mismatch};
use permaudit::glob::analysis::{Analysis, Input, RuleShape};
use permaudit::glob::automaton::{Outcome, Word};
use permaudit::glob::compiled::{
    CompiledRuleset, DEFAULT_CACHE_BYTES, MultiGlob, PrefixCache, Want,
};
use permaudit::glob::wildcard::{Platform, Token, Wildcard, subject_units};
use permaudit::host::MemHost;
use permaudit::load::LoadError;
use permaudit::model::{Action, Form, Layer, Rule};
use permaudit::project::Project;
use permaudit::report::{self, Style};
use permaudit::source::{Loc, Origin, SourceFile, SourceId};
use permaudit::syntax::frontmatter::{self, Frontmatter};
use permaudit::syntax::value::{Node, Value};
use std::path::Path;

/// The separator of the texts in one fuzz input.
pub const SEP: u8 = 0xFF;

fn parts(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&b| b == SEP).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Windows (case-insensitive) when the bytes sum to an odd number: one flipped bit changes it.
fn platform_of(data: &[u8]) -> Platform {
    if data.iter().fold(0u8, |a, &b| a.wrapping_add(b)) & 1 == 1 {
        Platform::Windows
    } else {
        Platform::Unix
    }
}

pub const HOME: &str = "/h";
pub const PROJ: &str = "/w/proj";

// ---------------------------------------------------------------------------------------------
// (a) the config loader: JSONC + substitution + validation + merge, then agents and `check`.

/// The machine a `config` input describes. Parts, separated by `0xFF`:
///
/// 0. the global config `~/.config/opencode/opencode.jsonc`;
/// 1. the project config `opencode.json`;
/// 2. a markdown agent `.opencode/agent/fuzz.md` (absent when empty);
/// 3. environment variables, `NAME=VALUE` a line (`OPENCODE_PERMISSION`,
///    `OPENCODE_CONFIG_CONTENT`, variables for `{env:…}`, …);
/// 4. a samples file for `check --samples` (absent when empty);
/// 5. `/w/proj/f.txt`, a target for `{file:f.txt}` (absent when empty).
pub fn config_machine(data: &[u8]) -> (MemHost, Option<String>) {
    let p = parts(data);
    let get = |i: usize| p.get(i).copied().filter(|b| !b.is_empty());
    let mut host = MemHost::new().var("HOME", HOME).dir("/w/proj/.git");
    let put = |host: MemHost, path: &str, b: &[u8]| {
        let mut host = host;
        host.files.insert(path.into(), b.to_vec());
        host
    };
    if let Some(b) = get(0) {
        host = put(host, "/h/.config/opencode/opencode.jsonc", b);
    }
    if let Some(b) = get(1) {
        host = put(host, "/w/proj/opencode.json", b);
    }
    if let Some(b) = get(2) {
        host = put(host, "/w/proj/.opencode/agent/fuzz.md", b);
    }
    if let Some(b) = get(3) {
        for line in text(b).lines() {
            if let Some((k, v)) = line.split_once('=')
                && !k.is_empty()
            {
                host = host.var(k, v);
            }
        }
    }
    if let Some(b) = get(5) {
        host = put(host, "/w/proj/f.txt", b);
    }
    (host, get(4).map(text))
}

/// Load the machine as OpenCode would in `/w/proj`, run every check (and the samples), render
/// every output format, and re-decide every witness with the rule-by-rule evaluator and the
/// compiled one.
pub fn config(data: &[u8]) {
    let (host, samples) = config_machine(data);
    let platform = platform_of(data);
    let style = Style { color: false };
    let mut project = match Project::load(&host, Path::new(PROJ), platform) {
        Ok(p) => p,
        Err(f) => {
            let shown = report::error::render(&f, style);
            assert!(!shown.is_empty(), "a refusal renders as nothing");
            // A refusal points at `file:line:col` inside the text that was read.
            if let Some(loc) = error_loc(&f.error) {
                let file = f.sources.get(loc.source);
                check_span(loc.span.start, loc.span.end, &file.text, "error");
                let head = format!("{}:", file.name());
                assert!(
                    shown.starts_with(&head),
                    "refusal not at file:line:col: {shown}"
                );
            }
            return;
        }
    };
    // Every rule written in a source points into that source's text.
    for a in &project.agents {
        for r in &a.rules {
            if let Some(loc) = r.loc {
                let file = project.loaded.sources.get(loc.source);
                check_span(loc.span.start, loc.span.end, &file.text, "rule");
            }
        }
    }
    for w in &project.loaded.warnings {
        let file = project.loaded.sources.get(w.loc.source);
        check_span(w.loc.span.start, w.loc.span.end, &file.text, "warning");
    }
    assert!(!project.agents.is_empty(), "a loaded project has agents");
    let again = Project::load(&host, Path::new(PROJ), platform).expect("loads the second time");
    assert!(
        again
            .agents
            .iter()
            .map(|a| &a.rules)
            .eq(project.agents.iter().map(|a| &a.rules)),
        "loading the same machine twice gives other rules"
    );
    let _ = report::rules::json_all(&project);
    let all: Vec<_> = project.agents.iter().collect();
    let _ = report::rules::human(&project, &all, style);

    let mut sample_list = Vec::new();
    let mut outcomes = Vec::new();
    if let Some(s) = samples {
        let id = project.loaded.sources.add(SourceFile::new(
            Origin::File("/w/proj/samples.txt".into()),
            s.clone(),
        ));
        if let Ok(list) = sample_mismatch::parse(&s, id)
            && let Ok(o) = sample_mismatch::decide(&project, &list)
        {
            sample_list = list;
            outcomes = o;
        }
    }
    let project = &project;
    let mut findings = checks::run(project);
    findings.extend(sample_mismatch::findings(project, &sample_list, &outcomes));
    let s = report::check::Samples {
        samples: &sample_list,
        outcomes: &outcomes,
    };
    let _ = report::check::human(project, &findings, s, style);
    let _ = report::check::json(project, &findings, s);
    let _ = report::check::sarif(project, &findings);
    let _ = report::check::github(project, &findings);

    for f in &findings {
        let Some(name) = f.agents.first() else {
            continue;
        };
        let agent = project
            .agents
            .iter()
            .find(|a| &a.name == name || &a.display == name)
            .unwrap_or_else(|| panic!("finding {} names an unknown agent {name:?}", f.id));
        if let Some(r) = f.rule {
            assert!(
                r < agent.rules.len(),
                "finding {} rule {r} out of range",
                f.id
            );
        }
        for w in &f.witnesses {
            let d = evaluate(&agent.rules, &w.permission, &w.input, platform);
            // A chain pattern's witness is a chain (`never-matches`): decided as the bash
            // tool asks it, each command on its own, the call by its deciding part.
            if f.id == "never-matches" && w.permission == "bash" {
                let places = permaudit::shell::Places::of(project.loaded.paths());
                let no = |_: &str| false;
                let env = places.env(&no);
                let req = permaudit::shell::split::request(&w.input, &env);
                if req.patterns.len() > 1 {
                    let call = permaudit::shell::decide::decide(&req, |perm, pattern| {
                        evaluate(&agent.rules, perm, pattern, platform)
                    });
                    assert_eq!(
                        (call.decision().and_then(|x| x.rule), call.effect),
                        (w.rule, w.action),
                        "{}: chain witness {:?} for agent {name} is not decided as claimed",
                        f.id,
                        w.input
                    );
                    // The whole-input evaluators below answer for one command, not a chain.
                    continue;
                }
            }
            assert_eq!(
                (d.rule, d.effect),
                (w.rule, w.action),
                "{}: witness {:?} {:?} for agent {name} is not decided as claimed",
                f.id,
                w.permission,
                w.input
            );
            let shapes = agent
                .rules
                .iter()
                .map(|r| (r.permission.as_str(), r.pattern.as_str()));
            let mut compiled = CompiledRuleset::new(shapes, &w.permission, platform, Want::Last);
            assert_eq!(
                compiled.decide(&w.input),
                d.rule,
                "compiled evaluator disagrees"
            );
            // Every other agent the finding names decides it alike, by the same place.
            for other in &f.agents[1..] {
                let o = project
                    .agents
                    .iter()
                    .find(|a| &a.name == other)
                    .unwrap_or_else(|| panic!("finding {} names an unknown agent {other:?}", f.id));
                let od = evaluate(&o.rules, &w.permission, &w.input, platform);
                assert_eq!(
                    od.effect, w.action,
                    "{}: agent {other} decides {:?} otherwise",
                    f.id, w.input
                );
            }
        }
    }
}

fn error_loc(e: &LoadError) -> Option<Loc> {
    match e {
        LoadError::Read { .. } => None,
        LoadError::Syntax { loc, .. }
        | LoadError::FileRef { loc, .. }
        | LoadError::Unauditable { loc, .. }
        | LoadError::Limit { loc, .. } => Some(*loc),
        LoadError::Invalid(c) => Some(c.loc),
        LoadError::WalkLimit(_) => None,
    }
}

// ---------------------------------------------------------------------------------------------
// (b) markdown agent frontmatter.

/// Parse the input as a markdown agent file; every span must lie in the text on character
/// boundaries, parsing must be deterministic, a second read in the same process must follow
/// gray-matter's cache, and the file must load as an agent of a project without panicking.
pub fn frontmatter(data: &[u8]) {
    let text = text(data);
    let id = SourceId(0);
    let first = frontmatter::parse(&text, id);
    assert_eq!(
        first,
        frontmatter::parse(&text, id),
        "parse is not deterministic"
    );
    match &first {
        Frontmatter::Absent => {}
        Frontmatter::Data(n) => {
            assert!(matches!(n.value, Value::Object(_)), "data is not an object");
            check_spans(n, &text, 0);
        }
        Frontmatter::BrokenKept(e)
        | Frontmatter::BrokenDropped(e)
        | Frontmatter::Executable(e)
        | Frontmatter::OverLimit(e) => {
            check_span(e.loc.span.start, e.loc.span.end, &text, "error");
        }
    }
    // gray-matter's process-wide cache: a text that failed once is `BrokenKept` afterwards
    // (also when `sanitize` then fixed it), a text that parsed gives the same answer again.
    let mut cache = frontmatter::MatterCache::default();
    let a = frontmatter::parse_cached(&text, id, &mut cache);
    assert_eq!(
        a, first,
        "parse_cached with a fresh cache differs from parse"
    );
    let b = frontmatter::parse_cached(&text, id, &mut cache);
    match (&a, &b) {
        (
            Frontmatter::BrokenKept(_) | Frontmatter::BrokenDropped(_),
            Frontmatter::BrokenKept(_),
        ) => {}
        (Frontmatter::BrokenKept(_) | Frontmatter::BrokenDropped(_), other) => {
            panic!("a failed text read again should be BrokenKept, got {other:?}")
        }
        // Data read from the sanitized text: the original text failed first, so gray-matter
        // cached it, and the second read returns it unparsed.
        (Frontmatter::Data(_), Frontmatter::BrokenKept(_)) => {}
        _ => assert_eq!(a, b, "a second read of a good text differs"),
    }

    let host = MemHost::new()
        .var("HOME", HOME)
        .dir("/w/proj/.git")
        .file("/w/proj/.opencode/agent/fuzz.md", &text);
    if let Ok(p) = Project::load(&host, Path::new(PROJ), Platform::Unix) {
        for a in &p.agents {
            let _ = evaluate(&a.rules, "edit", "src/x.ts", Platform::Unix);
        }
        let _ = report::rules::json_all(&p);
    }
}

fn check_span(start: usize, end: usize, text: &str, what: &str) {
    assert!(
        start <= end && end <= text.len(),
        "{what} span {start}..{end} outside the text ({} bytes)",
        text.len()
    );
    assert!(
        text.is_char_boundary(start) && text.is_char_boundary(end),
        "{what} span {start}..{end} not on character boundaries"
    );
}

fn check_spans(n: &Node, text: &str, depth: usize) {
    check_span(n.loc.span.start, n.loc.span.end, text, "value");
    if let Some(k) = n.key {
        check_span(k.span.start, k.span.end, text, "key");
    }
    if depth > 300 {
        return;
    }
    match &n.value {
        Value::Array(items) => items.iter().for_each(|i| check_spans(i, text, depth + 1)),
        Value::Object(o) => o.iter().for_each(|(_, v)| check_spans(v, text, depth + 1)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// (c) the wildcard matcher against a regex translation of `Wildcard.match`, and the compiled
// evaluator against the simple one.

/// OpenCode 1.18.34's `Wildcard.match(subject, pattern)`, as bundled in the binary:
///
/// ```js
/// function ql(e,o){if(e)e=e.replaceAll("\\","/");if(o)o=o.replaceAll("\\","/");
///   let l=o.replace(/[.+^${}()|[\]\\]/g,"\\$&").replace(/\*/g,".*").replace(/\?/g,".");
///   if(l.endsWith(" .*"))l=l.slice(0,-3)+"( .*)?";let i="s";
///   return new RegExp("^"+l+"$",i).test(e)}
/// ```
///
/// replayed step by step on UTF-16 code units, then the resulting JavaScript regex source is
/// translated token by token into a `regex` crate regex. A JavaScript regex without the `u`
/// flag works on UTF-16 code units (`.` is one unit), so both the regex and the subject are
/// written over a *unit alphabet*: each code unit becomes one `char` (the unit itself, or
/// U+F0000 + (unit − 0xD800) for a surrogate, which no non-surrogate unit maps to). The
/// translation is then exact for `Platform::Unix` (flag `s`).
///
/// Domain restriction: with `Platform::Windows` (flags `si`) JavaScript folds case with
/// ECMAScript's `Canonicalize` (upper case, never non-ASCII into ASCII), which the `regex`
/// crate's Unicode simple case folding does not reproduce outside ASCII (`ſ`, `K` (Kelvin),
/// …). The reference answers for Windows only when the pattern and subject are ASCII; it
/// returns `None` otherwise.
pub fn reference_match(subject: &str, pattern: &str, platform: Platform) -> Option<bool> {
    if platform == Platform::Windows && !subject.is_ascii() {
        return None;
    }
    Some(reference_regex(pattern, platform)?.is_match(&unit_string(subject)))
}

/// The subject as the reference regex sees it: `\` → `/`, then one `char` per code unit.
pub fn unit_string(subject: &str) -> String {
    subject
        .encode_utf16()
        .map(|u| unit_char(if u == b'\\' as u16 { b'/' as u16 } else { u }))
        .collect()
}

/// The regex of [`reference_match`] for one pattern (`None`: outside the domain, a
/// non-ASCII pattern on Windows).
pub fn reference_regex(pattern: &str, platform: Platform) -> Option<regex::Regex> {
    let ci = platform == Platform::Windows;
    if ci && !pattern.is_ascii() {
        return None;
    }
    const BS: u16 = b'\\' as u16;
    let o: Vec<u16> = pattern
        .encode_utf16()
        .map(|u| if u == BS { b'/' as u16 } else { u })
        .collect();
    // o.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")
    let mut l: Vec<u16> = Vec::new();
    for &u in &o {
        if u < 128 && b".+^${}()|[]\\".contains(&(u as u8)) {
            l.push(BS);
            l.push(u);
        } else {
            l.push(u);
        }
    }
    let mut l2 = Vec::new();
    for &u in &l {
        if u == b'*' as u16 {
            l2.extend([b'.' as u16, b'*' as u16]);
        } else {
            l2.push(u);
        }
    }
    let mut l3 = Vec::new();
    for &u in &l2 {
        if u == b'?' as u16 {
            l3.push(b'.' as u16);
        } else {
            l3.push(u);
        }
    }
    let tail: Vec<u16> = " .*".encode_utf16().collect();
    if l3.ends_with(&tail) {
        l3.truncate(l3.len() - 3);
        l3.extend("( .*)?".encode_utf16());
    }
    // Translate the JavaScript regex source: `\x` is the literal x; `.`, `*`, `(`, `)`, `?`
    // are operators (escaping left no other metacharacter unescaped); anything else literal.
    let mut re = String::from(if ci { "(?si)^" } else { "(?s)^" });
    let mut i = 0;
    while i < l3.len() {
        let u = l3[i];
        if u == BS {
            re.push_str(&regex::escape(&unit_char(l3[i + 1]).to_string()));
            i += 2;
            continue;
        }
        if u < 128 && b".*()?".contains(&(u as u8)) {
            re.push(u as u8 as char);
        } else {
            re.push_str(&regex::escape(&unit_char(u).to_string()));
        }
        i += 1;
    }
    re.push('$');
    Some(
        regex::RegexBuilder::new(&re)
            .size_limit(1 << 26)
            .build()
            .expect("the translated regex compiles"),
    )
}

/// One UTF-16 code unit as one `char` of the unit alphabet.
fn unit_char(u: u16) -> char {
    if (0xD800..0xE000).contains(&u) {
        char::from_u32(0xF0000 + (u as u32 - 0xD800)).expect("plane 15")
    } else {
        char::from_u32(u as u32).expect("a non-surrogate unit is a char")
    }
}

/// Split the input into patterns and subjects (texts separated by `0xFF`; the first text is
/// a list of patterns, one a line, the rest are subjects), at most 16 patterns of 64 bytes
/// and 16 subjects of 256 bytes so one run stays fast.
fn patterns_and_subjects(data: &[u8]) -> (Vec<String>, Vec<String>) {
    let p = parts(data);
    let cut = |s: String, n: usize| -> String {
        let mut end = s.len().min(n);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    };
    let patterns: Vec<String> = p
        .first()
        .map(|b| text(b))
        .unwrap_or_default()
        .split('\n')
        .take(16)
        .map(|s| cut(s.to_string(), 64))
        .collect();
    let subjects = p
        .iter()
        .skip(1)
        .take(16)
        .map(|b| cut(text(b), 256))
        .collect();
    (patterns, subjects)
}

/// The matcher against the regex reference on every (pattern, subject) pair, and the
/// compiled evaluator (last and all matches, resumed, with a tiny and a default cache; and
/// per-permission rulesets) against rule-by-rule matching.
pub fn wildcard(data: &[u8]) {
    let (patterns, mut subjects) = patterns_and_subjects(data);
    // The patterns themselves are interesting subjects too.
    subjects.extend(patterns.iter().cloned());
    for platform in [Platform::Unix, Platform::Windows] {
        let units: Vec<String> = subjects.iter().map(|s| unit_string(s)).collect();
        for p in &patterns {
            let w = Wildcard::compile(p);
            let re = reference_regex(p, platform);
            for (s, u) in subjects.iter().zip(&units) {
                let got = w.is_match(s, platform);
                if let Some(re) = &re
                    && (platform == Platform::Unix || s.is_ascii())
                {
                    assert_eq!(
                        got,
                        re.is_match(u),
                        "{platform:?}: pattern {p:?} subject {s:?}"
                    );
                }
                if platform == Platform::Windows && w.is_match(s, Platform::Unix) {
                    assert!(got, "Windows must match what Unix matches: {p:?} {s:?}");
                }
            }
        }
        for (want, bytes) in [
            // A zero cache clears on every step; the default one keeps its states.
            (Want::Last, 0),
            (Want::All, 0),
            (Want::Last, DEFAULT_CACHE_BYTES),
            (Want::All, DEFAULT_CACHE_BYTES),
        ] {
            let mut g = MultiGlob::with_cache_bytes(&patterns, platform, want, bytes);
            let mut resumed = g.clone();
            let mut cache = PrefixCache::new();
            let mut sorted = subjects.clone();
            sorted.sort();
            for s in subjects.iter().chain(sorted.iter()) {
                let expect: Vec<usize> = (0..patterns.len())
                    .filter(|&i| Wildcard::compile(&patterns[i]).is_match(s, platform))
                    .collect();
                assert_eq!(
                    g.last_match(s),
                    expect.last().copied(),
                    "{want:?} {patterns:?} {s:?}"
                );
                assert_eq!(
                    resumed.last_match_resume(s, &mut cache),
                    expect.last().copied(),
                    "resumed {want:?} {patterns:?} {s:?}"
                );
                if want == Want::All {
                    let mut out = Vec::new();
                    g.all_matches(s, &mut out);
                    assert_eq!(out, expect, "all {patterns:?} {s:?}");
                }
            }
        }
        // Rulesets: pattern k's permission glob is pattern k+1 (wrapping), the subjects are
        // also permission names.
        if patterns.len() >= 2 {
            let rules: Vec<(String, String)> = (0..patterns.len())
                .map(|k| {
                    (
                        patterns[(k + 1) % patterns.len()].clone(),
                        patterns[k].clone(),
                    )
                })
                .collect();
            let rule_objs: Vec<Rule> = rules
                .iter()
                .map(|(perm, pat)| {
                    Rule::builtin(
                        perm,
                        pat,
                        Action::Allow,
                        Form::Object,
                        Layer::Defaults,
                        "fuzz",
                    )
                })
                .collect();
            for perm in subjects.iter().take(4) {
                let mut c = CompiledRuleset::new(
                    rules.iter().map(|(a, b)| (a.as_str(), b.as_str())),
                    perm,
                    platform,
                    Want::All,
                );
                for s in &subjects {
                    let d = evaluate(&rule_objs, perm, s, platform);
                    assert_eq!(c.decide(s), d.rule, "ruleset {rules:?} {perm:?} {s:?}");
                    let mut out = Vec::new();
                    c.matching(s, &mut out);
                    let mut expect = d.overridden.clone();
                    expect.extend(d.rule);
                    assert_eq!(out, expect, "matching {rules:?} {perm:?} {s:?}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (d) containment analysis: witnesses evaluate as claimed; "empty"/"covered" hold on samples.

/// Parse rules from the first text: one rule a line, `permission pattern` split at the first
/// space (a line without a space is permission `*`); at most 10 rules of 40 bytes per glob.
/// The other texts are extra sample subjects. The first byte of the data picks the budget.
fn rules_of(data: &[u8]) -> (Vec<RuleShape>, Vec<String>, u64) {
    let (lines, extra) = patterns_and_subjects(data);
    let rules = lines
        .iter()
        .take(10)
        .map(|l| match l.split_once(' ') {
            Some((a, b)) => RuleShape::new(trim(a, 40), trim(b, 40)),
            None => RuleShape::new("*", trim(l, 40)),
        })
        .collect();
    let budget =
        [2_000, 20_000, 200_000, 1_000_000][(data.first().copied().unwrap_or(0) & 3) as usize];
    (rules, extra, budget)
}

fn trim(s: &str, n: usize) -> String {
    let mut end = s.len().min(n);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Words the globs match, interleaved glob by glob so a prefix of the list samples every
/// glob: the first extra texts, the globs' own texts, then each glob's literals with each
/// `?` filled by one unit and each `*` (and the optional tail) by each of a few runs, and
/// the globs' case variants.
fn samples_for(globs: &[String], extra: &[String]) -> Vec<Word> {
    let mut fillers: Vec<Vec<u16>> = ["", "a", " x", "/", " ", "ab", "\u{1F600}", "\n", "*", "?"]
        .iter()
        .map(|s| s.encode_utf16().collect())
        .collect();
    fillers.push(vec![0xD83D]); // a lone surrogate
    for g in globs {
        fillers.push(subject_units(g));
    }
    let compiled: Vec<Wildcard> = globs.iter().map(|g| Wildcard::compile(g)).collect();
    let mut out: Vec<Word> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut push = |w: Word, out: &mut Vec<Word>| {
        if seen.insert(w.clone()) {
            out.push(w);
        }
    };
    for e in extra.iter().take(8) {
        push(Word::from(e.as_str()), &mut out);
    }
    for g in globs {
        push(Word::from(g.as_str()), &mut out);
    }
    for fill in &fillers {
        for w in &compiled {
            let mut units = Vec::new();
            for t in &w.tokens {
                match t {
                    Token::Lit(u) => units.push(*u),
                    Token::One => units.push(fill.first().copied().unwrap_or(b'x' as u16)),
                    Token::Star => units.extend_from_slice(fill),
                }
            }
            if w.optional_tail {
                push(Word::from_units(units.clone()), &mut out);
                units.push(b' ' as u16);
                units.extend_from_slice(fill);
            }
            push(Word::from_units(units), &mut out);
        }
        if fill.is_empty() {
            // Case variants, for Windows builds' case-insensitive matching.
            for g in globs {
                push(Word::from(g.to_uppercase().as_str()), &mut out);
                push(Word::from(g.to_lowercase().as_str()), &mut out);
            }
        }
    }
    out
}

/// The rules' globs, compiled once.
struct Globs {
    rules: Vec<(Wildcard, Wildcard)>,
    platform: Platform,
}

impl Globs {
    fn new(rules: &[RuleShape], platform: Platform) -> Globs {
        Globs {
            rules: rules
                .iter()
                .map(|r| {
                    (
                        Wildcard::compile(&r.permission),
                        Wildcard::compile(&r.pattern),
                    )
                })
                .collect(),
            platform,
        }
    }

    fn matches(&self, i: usize, input: &Input) -> bool {
        let (p, s) = &self.rules[i];
        p.is_match_units(input.permission.units(), self.platform)
            && s.is_match_units(input.subject.units(), self.platform)
    }

    fn decider(&self, input: &Input) -> Option<usize> {
        (0..self.rules.len())
            .rev()
            .find(|&i| self.matches(i, input))
    }
}

/// Every query of [`Analysis`] on every rule: a witness must evaluate as claimed (checked with
/// the plain matcher, rule by rule), and an "empty" answer must hold on every sampled input
/// (a product of sampled permission names and subjects).
pub fn analysis(data: &[u8]) {
    let (rules, extra, budget) = rules_of(data);
    let platform = platform_of(data);
    let a = Analysis::new(&rules, platform).with_budget(budget);
    let g = Globs::new(&rules, platform);
    let perms: Vec<String> = rules.iter().map(|r| r.permission.clone()).collect();
    let pats: Vec<String> = rules.iter().map(|r| r.pattern.clone()).collect();
    let perm_samples = samples_for(&perms, &extra);
    let subj_samples = samples_for(&pats, &extra);
    // Each sampled input with the rules matching it, and its decider.
    let mut inputs: Vec<(Input, Vec<bool>, Option<usize>)> = Vec::new();
    for p in perm_samples.iter().take(40) {
        for s in subj_samples.iter().take(60) {
            let input = Input {
                permission: p.clone(),
                subject: s.clone(),
            };
            let m: Vec<bool> = (0..rules.len()).map(|i| g.matches(i, &input)).collect();
            let d = m.iter().rposition(|&b| b);
            inputs.push((input, m, d));
        }
    }
    for (input, _, d) in inputs.iter().step_by(7) {
        assert_eq!(a.decision(input), *d, "decision {input:?}");
    }
    for i in 0..rules.len() {
        match a.decides(i) {
            Outcome::Witness(w) => {
                assert_eq!(
                    g.decider(&w),
                    Some(i),
                    "decides({i}) witness {w:?} is not decided by rule {i} in {rules:?}"
                );
            }
            Outcome::Empty => {
                for (input, _, d) in &inputs {
                    assert_ne!(
                        *d,
                        Some(i),
                        "decides({i}) claimed dead but {input:?} is decided by it in {rules:?}"
                    );
                }
            }
            Outcome::Inconclusive => {}
        }
        match a.overridden(i) {
            Outcome::Witness(o) => {
                assert!(
                    o.decider > i,
                    "overridden({i}) decider {} not later",
                    o.decider
                );
                assert!(
                    g.matches(i, &o.input),
                    "overridden({i}) witness {:?} not matched by rule {i} in {rules:?}",
                    o.input
                );
                assert_eq!(
                    g.decider(&o.input),
                    Some(o.decider),
                    "overridden({i}) witness {:?} decider wrong in {rules:?}",
                    o.input
                );
            }
            Outcome::Empty => {
                for (input, m, d) in &inputs {
                    assert!(
                        !m[i] || *d == Some(i),
                        "overridden({i}) claimed empty but {input:?} is overridden in {rules:?}"
                    );
                }
            }
            Outcome::Inconclusive => {}
        }
        for j in i..rules.len() {
            match a.intersection(i, j) {
                Outcome::Witness(w) => {
                    assert!(
                        g.matches(i, &w) && g.matches(j, &w),
                        "intersection({i},{j}) witness {w:?} not in both, {rules:?}"
                    );
                }
                Outcome::Empty => {
                    for (input, m, _) in &inputs {
                        assert!(
                            !(m[i] && m[j]),
                            "intersection({i},{j}) claimed empty but {input:?} is in both, {rules:?}"
                        );
                    }
                }
                Outcome::Inconclusive => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (e) `check --fix`: the same machine as `config`, every fix applied (narrowing included).

/// Fix the machine of a `config` input with every fix permaudit proves: never a panic, the
/// fixed project loads, no decision is widened (checked by the diff and by re-deciding
/// inputs built from every rule), only safe fixes change nothing at all, only project
/// files change, and fixing the result again changes nothing.
pub fn fix(data: &[u8]) {
    use permaudit::fix;
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    let (host, _) = config_machine(data);
    let platform = platform_of(data);
    let Ok(project) = Project::load(&host, Path::new(PROJ), platform) else {
        return;
    };
    let reload = |files: &BTreeMap<PathBuf, String>| {
        let overlay = permaudit::host::Overlay::new(&host, files);
        Project::load(&overlay, Path::new(PROJ), platform).ok()
    };
    let findings = |p: &Project| checks::run_every(p, permaudit::delegation::RunMode::Interactive);
    let out = fix::fix(&project, &findings, &reload, Some(Path::new(PROJ)), true);
    if out.files.is_empty() {
        return;
    }
    let texts: BTreeMap<PathBuf, String> = out
        .files
        .iter()
        .map(|(p, _, after)| (p.clone(), after.clone()))
        .collect();
    for p in texts.keys() {
        assert!(
            p.starts_with(PROJ),
            "a fix wrote outside the project: {p:?}"
        );
    }
    let fixed = reload(&texts).expect("a fixed config loads");
    let d = permaudit::diff::diff(&project, &fixed);
    assert!(!d.widens(), "a fix widened a decision: {:?}", d.changes);
    if out.applied.iter().all(|a| a.safety == fix::Safety::Safe) {
        assert!(
            d.is_empty(),
            "safe fixes changed a decision: {:?}",
            d.changes
        );
    }
    for a in &project.agents {
        let Some(b) = fixed.agent(&a.name) else {
            panic!("a fix removed agent {}", a.name);
        };
        for r in a.rules.iter().chain(&b.rules) {
            let input = r.pattern.replace('*', "a").replace('?', "q");
            let perm = r.permission.replace('*', "a").replace('?', "q");
            let before = evaluate(&a.rules, &perm, &input, platform).effect;
            let after = evaluate(&b.rules, &perm, &input, platform).effect;
            assert!(
                after == before
                    || permaudit::diff::Class::of(before, after)
                        == permaudit::diff::Class::Narrowed,
                "{}: {perm} {input:?} widened from {before} to {after}",
                a.name
            );
        }
    }
    if out.passes < fix::MAX_PASSES {
        // The fixed files stay in place under the second round's edits.
        let reload_fixed = |files: &BTreeMap<PathBuf, String>| {
            let mut all = texts.clone();
            all.extend(files.iter().map(|(p, t)| (p.clone(), t.clone())));
            reload(&all)
        };
        let again = fix::fix(
            &fixed,
            &findings,
            &reload_fixed,
            Some(Path::new(PROJ)),
            true,
        );
        assert!(
            again.files.is_empty(),
            "fixing twice changes more: {:?}",
            again.applied
        );
    }
}
