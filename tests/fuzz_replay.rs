//! Replays the committed fuzz corpus (`fuzz/corpus/TARGET/`) and every crash regression
//! (`fuzz/regressions/TARGET/`) through the same harness functions the `cargo fuzz` targets
//! run, so a stable `cargo test` checks every input the fuzzers ever kept or tripped on.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::Path;

fn inputs(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let corpus = inputs(&root.join("corpus").join(target));
    let regressions = inputs(&root.join("regressions").join(target));
    assert!(
        !corpus.is_empty(),
        "no committed corpus for fuzz target {target}"
    );
    for path in corpus.iter().chain(&regressions) {
        let data = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(result.is_ok(), "fuzz input {} fails", path.display());
    }
}

#[test]
fn config() {
    replay("config", harness::config);
}

#[test]
fn frontmatter() {
    replay("frontmatter", harness::frontmatter);
}

#[test]
fn wildcard() {
    replay("wildcard", harness::wildcard);
}

#[test]
fn fix() {
    replay("fix", harness::fix);
}

#[test]
fn analysis() {
    replay("analysis", harness::analysis);
}

/// The regex reference of the wildcard target gives the answers verified on the 1.18.34
/// binary (spec §10.1), so its agreement with the matcher means something.
#[test]
fn reference_matcher_gives_verified_answers() {
    use permaudit::glob::Platform::{Unix, Windows};
    let cases: &[(&str, &str, bool)] = &[
        ("git *", "git", true),
        ("git *", "git status", true),
        ("git *", "gitx", false),
        ("git *", "git  status", true),
        ("*.ts", "a/b/c.ts", true),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a?c", "a/c", true),
        ("a.c", "abc", false),
        ("[ab]", "a", false),
        ("[ab]", "[ab]", true),
        ("{a,b}", "{a,b}", true),
        ("A*", "abc", false),
        ("a\\b", "a/b", true),
        ("a/b", "a\\b", true),
        ("a*", "a\nb", true),
        ("src/**", "src", false),
        ("src/**", "src/", true),
        ("a+b", "aab", false),
        ("(a|b)", "a", false),
        ("^a$", "^a$", true),
        ("abc", "xabcx", false),
        ("a **", "a", false),
        (" *", "", true),
        ("a *?", "a", false),
        ("a\\ *", "a/", true),
        ("", "", true),
        ("", "x", false),
        ("??", "\u{1F600}", true),
        ("?", "\u{1F600}", false),
        ("?", "é", true),
    ];
    for (p, s, want) in cases {
        assert_eq!(
            harness::reference_match(s, p, Unix),
            Some(*want),
            "{p:?} {s:?}"
        );
    }
    assert_eq!(harness::reference_match("abc", "A*", Windows), Some(true));
    assert_eq!(harness::reference_match("\u{17f}", "s", Windows), None);
}
