//! The compiled evaluator against the simple one: over random rulesets and inputs it must
//! give exactly `agents::evaluate`'s decision (deciding rule and overridden rules),
//! on both platforms, in both modes, with caches small enough to be cleared mid-input, and
//! when resuming from the previous input's prefix.

use permaudit::agents::evaluate;
use permaudit::glob::Platform;
use permaudit::glob::compiled::{CompiledRuleset, MultiGlob, PrefixCache, Want};
use permaudit::model::{Action, Form, Layer, Rule};
use proptest::prelude::*;

/// Characters that matter to the wildcard: metacharacters, both slashes, the space of the
/// ` *` tail, a regex metacharacter that must stay literal, case pairs, a BMP non-ASCII
/// character with a case pair, and an astral character (two UTF-16 units).
const ALPHABET: &[char] = &[
    'a', 'b', 'A', '/', '\\', '*', '?', ' ', '.', 'é', 'É', '😀', '\n',
];

fn word(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..max)
        .prop_map(|cs| cs.into_iter().collect())
}

fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => word(7),
        1 => word(4).prop_map(|w| format!("{w} *")),
        1 => word(4).prop_map(|w| format!("*{w}")),
        1 => Just("*".to_string()),
    ]
}

fn permission() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["*", "read", "re*", "edit", "r?ad", "read *", "READ"])
        .prop_map(str::to_string)
}

fn rules() -> impl Strategy<Value = Vec<Rule>> {
    prop::collection::vec(
        (permission(), pattern(), 0..3u8).prop_map(|(perm, pat, a)| {
            let action = [Action::Allow, Action::Ask, Action::Deny][a as usize].clone();
            Rule::builtin(&perm, &pat, action, Form::Object, Layer::Defaults, "test")
        }),
        0..14,
    )
}

fn platform() -> impl Strategy<Value = Platform> {
    prop_oneof![Just(Platform::Unix), Just(Platform::Windows)]
}

fn compile(
    rules: &[Rule],
    perm: &str,
    platform: Platform,
    want: Want,
    cache: usize,
) -> CompiledRuleset {
    CompiledRuleset::with_cache_bytes(
        rules
            .iter()
            .map(|r| (r.permission.as_str(), r.pattern.as_str())),
        perm,
        platform,
        want,
        cache,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn same_decisions_as_evaluate(
        rules in rules(),
        inputs in prop::collection::vec(word(12), 1..12),
        platform in platform(),
        tiny in any::<bool>(),
    ) {
        let cache = if tiny { 0 } else { 1 << 20 };
        for perm in ["read", "edit"] {
            let mut last = compile(&rules, perm, platform, Want::Last, cache);
            let mut all = compile(&rules, perm, platform, Want::All, cache);
            let mut m = Vec::new();
            for input in &inputs {
                let d = evaluate(&rules, perm, input, platform);
                prop_assert_eq!(last.decide(input), d.rule, "last {:?}", input);
                prop_assert_eq!(all.decide(input), d.rule, "all {:?}", input);
                all.matching(input, &mut m);
                let mut expect = d.overridden.clone();
                expect.extend(d.rule);
                prop_assert_eq!(&m, &expect, "matching {:?}", input);
            }
        }
    }

    #[test]
    fn resume_gives_the_same_decisions(
        rules in rules(),
        mut inputs in prop::collection::vec(word(12), 1..24),
        platform in platform(),
        tiny in any::<bool>(),
    ) {
        // Sorted like `git ls-files`, so neighbours share prefixes; duplicates too.
        inputs.sort();
        let cache = if tiny { 0 } else { 1 << 20 };
        let mut c = compile(&rules, "read", platform, Want::Last, cache);
        let mut prefix = PrefixCache::new();
        for input in &inputs {
            let d = evaluate(&rules, "read", input, platform);
            prop_assert_eq!(c.decide_resume(input, &mut prefix), d.rule, "{:?}", input);
        }
    }
}

#[test]
fn question_mark_is_one_utf16_unit() {
    let mut g = MultiGlob::new(
        &["?", "??", "a?", "?b", "*?", "😀", "?*"],
        Platform::Unix,
        Want::All,
    );
    let mut out = Vec::new();
    g.all_matches("😀", &mut out);
    assert_eq!(out, [1, 4, 5, 6]);
    g.all_matches("é", &mut out);
    assert_eq!(out, [0, 4, 6]);
    g.all_matches("a😀", &mut out);
    assert_eq!(out, [4, 6]);
}

#[test]
fn star_crosses_newlines_and_slashes() {
    let mut g = MultiGlob::new(&["a*b", "a?b", "git *"], Platform::Unix, Want::All);
    let mut out = Vec::new();
    g.all_matches("a\n/\nb", &mut out);
    assert_eq!(out, [0]);
    g.all_matches("a\nb", &mut out);
    assert_eq!(out, [0, 1]);
    g.all_matches("git\nx", &mut out);
    assert!(out.is_empty());
    g.all_matches("git x\ny", &mut out);
    assert_eq!(out, [2]);
}

#[test]
fn a_thousand_rules_stay_exact() {
    // Larger than the property tests: realistic shapes, checked on a few hundred inputs.
    let mut rules = vec![Rule::builtin(
        "*",
        "*",
        Action::Allow,
        Form::String,
        Layer::Defaults,
        "d",
    )];
    for i in 0..1000 {
        let pat = match i % 5 {
            0 => format!("src/m{i}/*"),
            1 => format!("*.e{i}"),
            2 => format!("docs/{i}/*.md"),
            3 => format!("*/t{i}/*"),
            _ => format!("lib/?{i}*"),
        };
        let action = [Action::Allow, Action::Ask, Action::Deny][i % 3].clone();
        rules.push(Rule::builtin(
            "edit",
            &pat,
            action,
            Form::Object,
            Layer::Project,
            "t",
        ));
    }
    let mut c = compile(&rules, "edit", Platform::Unix, Want::All, 1 << 20);
    let mut m = Vec::new();
    for i in 0..400 {
        let input = match i % 6 {
            0 => format!("src/m{}/x.rs", i * 5 % 1000),
            1 => format!("a/b.e{}", i % 1000),
            2 => format!("docs/{}/r.md", i % 1000),
            3 => format!("x/t{}/y", i % 1000),
            4 => format!("lib/q{}z", i % 1000),
            _ => format!("other/{i}"),
        };
        let d = evaluate(&rules, "edit", &input, Platform::Unix);
        assert_eq!(c.decide(&input), d.rule, "{input}");
        c.matching(&input, &mut m);
        let mut expect = d.overridden.clone();
        expect.extend(d.rule);
        assert_eq!(m, expect, "{input}");
    }
}
