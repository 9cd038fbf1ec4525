//! The compiled evaluator against JavaScript itself: `scripts/bench/opencode.mjs` (the
//! benchmark's Node.js implementation of OpenCode's `findLast` over `RegExp`s built exactly
//! as spec §1 says) decides random rulesets and inputs, astral characters, lone `?`s,
//! backslashes, ` *` tails and case-folding traps included, with flags `s` (linux builds)
//! and `si` (Windows builds); permaudit must pick the same rule every time. Skipped with
//! one printed line when `node` is not installed, except under CI (`support/tier.rs`).

#[path = "support/tier.rs"]
mod tier;

use permaudit::glob::Platform;
use permaudit::glob::compiled::{CompiledRuleset, Want};
use std::process::Command;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn word(&mut self, chars: &[char], max: usize) -> String {
        let n = self.below(max + 1);
        (0..n).map(|_| chars[self.below(chars.len())]).collect()
    }
}

/// Literals that matter: separators, regex metacharacters (literal for OpenCode), the
/// space of the tail rule, non-ASCII with and without case pairs, characters whose upper
/// case is ASCII or two characters (`ſ`, `ß`), the Kelvin sign, a titlecase letter, and an
/// astral character (two UTF-16 units).
const LITERALS: &[char] = &[
    'a', 'b', 'S', 's', 'k', '/', '\\', ' ', '.', '+', '(', '[', '$', '\n', 'é', 'É', 'ſ', 'ß',
    '\u{212a}', 'ǅ', 'ǆ', '😀',
];

fn node() -> bool {
    Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn same_decisions_as_javascript_regexps() {
    if !node() {
        tier::skip_or_fail(
            "compiled_node (compiled evaluator vs JavaScript RegExps)",
            "`node` (Node.js) is not on PATH",
        );
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/opencode.mjs");
    let dir = tempfile::tempdir().unwrap();
    let mut pat_chars: Vec<char> = LITERALS.to_vec();
    pat_chars.extend(['*', '*', '?', '?']);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    let mut matched = 0;
    for case in 0..24 {
        let (platform, flags) = if case % 2 == 0 {
            (Platform::Unix, "s")
        } else {
            (Platform::Windows, "si")
        };
        let n_rules = 1 + rng.below(30);
        let rules: Vec<(String, String)> = (0..n_rules)
            .map(|_| {
                let perm = ["*", "edit", "e*", "ed?t", "EDIT", "read"][rng.below(6)].to_string();
                let mut pat = rng.word(&pat_chars, 6);
                if rng.below(5) == 0 {
                    pat.push_str(" *");
                }
                (perm, pat)
            })
            .collect();
        let inputs: Vec<String> = (0..300)
            .map(|_| {
                // Inputs made of the rules' own text are likelier to match.
                let (_, p) = &rules[rng.below(rules.len())];
                let mut s: String = p
                    .chars()
                    .map(|c| match c {
                        '*' => ["", "x", "a/b", "😀"][rng.below(4)].to_string(),
                        '?' => LITERALS[rng.below(LITERALS.len())].to_string(),
                        c => c.to_string(),
                    })
                    .collect();
                if rng.below(3) == 0 {
                    s = rng.word(LITERALS, 8);
                }
                s
            })
            .collect();
        let json = serde_json::json!({
            "rules": rules.iter().map(|(p, pat)| serde_json::json!({"permission": p, "pattern": pat, "action": "allow"})).collect::<Vec<_>>()
        });
        let rules_file = dir.path().join("rules.json");
        let inputs_file = dir.path().join("inputs.bin");
        std::fs::write(&rules_file, json.to_string()).unwrap();
        let bytes: Vec<u8> = inputs.iter().flat_map(|s| s.bytes().chain([0])).collect();
        std::fs::write(&inputs_file, bytes).unwrap();
        let out = Command::new("node")
            .arg(script)
            .arg("each")
            .arg(&rules_file)
            .arg(&inputs_file)
            .env("PERMISSION", "edit")
            .env("FLAGS", flags)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let js: Vec<i64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(js.len(), inputs.len());
        let mut c = CompiledRuleset::new(
            rules.iter().map(|(p, pat)| (p.as_str(), pat.as_str())),
            "edit",
            platform,
            Want::Last,
        );
        for (input, want) in inputs.iter().zip(&js) {
            let got = c.decide(input).map_or(-1, |i| i as i64);
            assert_eq!(got, *want, "{flags} rules {rules:?} input {input:?}");
            checked += 1;
            matched += usize::from(got >= 0);
        }
    }
    assert_eq!(checked, 24 * 300);
    // The inputs exercise both outcomes.
    assert!(
        matched > checked / 5 && matched < checked,
        "{matched} of {checked} matched"
    );
    eprintln!("{matched} of {checked} inputs matched some rule");
}
