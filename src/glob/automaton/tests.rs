use super::*;
use proptest::prelude::*;

fn w(p: &str) -> Wildcard {
    Wildcard::compile(p)
}

fn diff(target: &str, others: &[&str], platform: Platform) -> Outcome<String> {
    let t = w(target);
    let os: Vec<Wildcard> = others.iter().map(|o| w(o)).collect();
    let refs: Vec<&Wildcard> = os.iter().collect();
    difference(&t, &refs, platform, &mut Budget::default()).map(|x| x.to_string())
}

fn inter(globs: &[&str]) -> Outcome<String> {
    let gs: Vec<Wildcard> = globs.iter().map(|g| w(g)).collect();
    let refs: Vec<&Wildcard> = gs.iter().collect();
    intersection(&refs, Platform::Unix, &mut Budget::default()).map(|x| x.to_string())
}

fn wit(s: &str) -> Outcome<String> {
    Outcome::Witness(s.to_string())
}

#[test]
fn shortest_differences() {
    let u = Platform::Unix;
    assert_eq!(diff("tests/**", &[], u), wit("tests/"));
    assert_eq!(diff("tests/**", &["**"], u), Outcome::Empty);
    assert_eq!(diff("*", &["a*"], u), wit(""));
    assert_eq!(diff("?", &["a"], u), wit("x"));
    assert_eq!(diff("?", &["x", "a"], u), wit("b"));
    // The optional tail: `git *` matches `git`, so `git` is covered by it but not vice versa.
    assert_eq!(diff("git", &["git *"], u), Outcome::Empty);
    assert_eq!(diff("git *", &["git"], u), wit("git "));
    assert_eq!(diff("git *", &["git", "git ?*"], u), wit("git "));
    assert_eq!(diff("git *", &["git", "git *?"], u), wit("git "));
    assert_eq!(diff("git *", &["git", "git *"], u), Outcome::Empty);
    // `a **` is not an optional tail: it does not match `a`.
    assert_eq!(diff("a", &["a **"], u), wit("a"));
    assert_eq!(diff(" *", &[], u), wit(""));
    assert_eq!(diff("*", &["?*"], u), wit(""));
    assert_eq!(diff("**", &["*"], u), Outcome::Empty);
    assert_eq!(diff("*.ts", &["src/*"], u), wit(".ts"));
    assert_eq!(diff("src/*.ts", &["*.ts"], u), Outcome::Empty);
    // Backslashes read as slashes on both sides.
    assert_eq!(diff("a\\b", &["a/b"], u), Outcome::Empty);
}

#[test]
fn intersections() {
    assert_eq!(inter(&["ed*", "*it"]), wit("edit"));
    assert_eq!(inter(&["ed*", "github_*"]), Outcome::Empty);
    assert_eq!(inter(&["*", "edit"]), wit("edit"));
    assert_eq!(inter(&["a?c", "*b*"]), wit("abc"));
    assert_eq!(inter(&["git *", "git"]), wit("git"));
    assert_eq!(inter(&["edit"]), wit("edit"));
    assert_eq!(inter(&[]), wit(""));
}

#[test]
fn windows_folds_case_exactly() {
    assert_eq!(diff("A*", &["a*"], Platform::Windows), Outcome::Empty);
    assert_eq!(diff("A*", &["a*"], Platform::Unix), wit("A"));
    // `?` minus `x`: "other" must avoid both cases of every literal.
    assert_eq!(diff("?", &["X"], Platform::Windows), wit("a"));
    // U+017F upper-cases to 'S' but never folds into ASCII.
    assert_eq!(diff("\u{17f}", &["s"], Platform::Windows), wit("\u{17f}"));
}

#[test]
fn other_class_avoids_mentioned_units() {
    assert_eq!(diff("?", &["x"], Platform::Unix), wit("a"));
    let letters = "abcdefghijklmnopqrstuvwxyz0123456789";
    let others: Vec<String> = letters.chars().map(String::from).collect();
    let refs: Vec<&str> = others.iter().map(String::as_str).collect();
    assert_eq!(diff("?", &refs, Platform::Unix), wit("!"));
}

#[test]
fn prefers_well_formed_witnesses() {
    // The emoji's two units are classes of their own; the witness keeps them paired.
    assert_eq!(diff("*😀", &["😀"], Platform::Unix), wit("x😀"));
    assert_eq!(diff("?*", &["x*", "a*"], Platform::Unix), wit("b"));
    assert_eq!(inter(&["😀*", "*😀"]), wit("😀"));
}

#[test]
fn lone_surrogate_witness_when_nothing_else_will_do() {
    // `?` then a lone low surrogate: no well-formed word from these classes matches (the
    // only mentioned high surrogate is covered by the exclusion), so the unrestricted
    // search answers, with an exact, ill-formed witness.
    let target = Wildcard {
        tokens: vec![Token::One, Token::Lit(0xDE00)],
        optional_tail: false,
    };
    let emoji = w("😀");
    let got = difference(&target, &[&emoji], Platform::Unix, &mut Budget::default());
    let Outcome::Witness(word) = got else {
        panic!("expected a witness, got {got:?}");
    };
    assert!(target.is_match_units(word.units(), Platform::Unix));
    assert!(!emoji.is_match_units(word.units(), Platform::Unix));
    assert_eq!(word.to_exact_string(), None);
    assert_eq!(word.to_string(), "x\\u{DE00}");
}

#[test]
fn budget_bounds_exponential_blowup() {
    // `*a` then n `?` needs 2^n subset states; the difference below is empty, so the
    // search cannot stop early.
    let q = "?".repeat(24);
    let target = w(&format!("*a{q}"));
    let other = w(&format!("*a{q}*"));
    let mut budget = Budget::new(200_000);
    let started = std::time::Instant::now();
    let got = difference(&target, &[&other], Platform::Unix, &mut budget);
    assert!(
        matches!(got, Outcome::Empty | Outcome::Inconclusive),
        "{got:?}"
    );
    assert!(started.elapsed().as_secs() < 10);
    // A small instance of the same shape is settled.
    let (t, o) = (w("*a??"), w("*a??*"));
    assert_eq!(
        difference(&t, &[&o], Platform::Unix, &mut Budget::default()),
        Outcome::Empty
    );
    // `*a??*` strictly contains `*a??`, so the reverse difference is witnessed.
    assert_eq!(
        difference(&o, &[&t], Platform::Unix, &mut Budget::default()).map(|x| x.to_string()),
        wit("axaa")
    );
}

#[test]
fn alternating_star_a_is_linear() {
    let big = w(&"*a".repeat(200));
    let bigger = w(&"*a".repeat(201));
    let mut budget = Budget::default();
    let got = difference(&bigger, &[&big], Platform::Unix, &mut budget);
    assert_eq!(got, Outcome::Empty);
    let got = difference(&big, &[&bigger], Platform::Unix, &mut Budget::default());
    assert_eq!(got.map(|x| x.len()), Outcome::Witness(200));
}

#[test]
fn cells_partition_permission_names() {
    let globs = [w("*"), w("ed*"), w("edit"), w("github_*")];
    let refs: Vec<&Wildcard> = globs.iter().collect();
    let cells = Product::new(&refs, Platform::Unix)
        .cells(&[0], &mut Budget::default())
        .unwrap();
    let got: Vec<(Vec<usize>, String)> = cells
        .into_iter()
        .map(|c| (c.accepting, c.witness.to_string()))
        .collect();
    assert_eq!(
        got,
        vec![
            (vec![], String::new()),
            (vec![1], "ed".to_string()),
            (vec![1, 2], "edit".to_string()),
            (vec![3], "github_".to_string()),
        ]
    );
}

const ALPHABET: [char; 6] = ['a', 'b', '/', ' ', '*', '?'];
const SUBJECT_UNITS: [char; 5] = ['a', 'b', '/', ' ', 'x'];

fn glob_strategy(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&ALPHABET[..]), 0..=max)
        .prop_map(|cs| cs.into_iter().collect())
}

/// A search's answer on a tiny query against every short string: a witness lies in
/// `what` and is a shortest one; `Empty` only when no string does.
fn agrees_with_brute_force(
    got: Outcome<Word>,
    inside: impl Fn(&str) -> bool,
    what: &str,
) -> Result<(), TestCaseError> {
    let brute = all_strings(&SUBJECT_UNITS, 5)
        .into_iter()
        .find(|s| inside(s));
    match got {
        Outcome::Witness(word) => {
            let s = word.to_exact_string().unwrap();
            prop_assert!(inside(&s), "witness {s:?} is not in the {what}");
            if let Some(b) = brute {
                prop_assert_eq!(word.len(), b.encode_utf16().count(), "not shortest");
            }
        }
        Outcome::Empty => prop_assert_eq!(brute, None),
        Outcome::Inconclusive => prop_assert!(false, "inconclusive on a tiny query"),
    }
    Ok(())
}

/// Cells on a tiny query against every short string: each witness has its cell's
/// signature, and every signature that occurs has a cell.
fn cells_agree_with_brute_force(
    cells: &[Cell],
    signature: impl Fn(&str) -> Option<Vec<usize>>,
) -> Result<(), TestCaseError> {
    for cell in cells {
        let s = cell.witness.to_exact_string().unwrap();
        prop_assert_eq!(
            signature(&s),
            Some(cell.accepting.clone()),
            "witness {:?}",
            s
        );
    }
    for s in all_strings(&SUBJECT_UNITS, 5) {
        if let Some(sig) = signature(&s) {
            prop_assert!(
                cells.iter().any(|c| c.accepting == sig),
                "{:?} has missing cell {:?}",
                s,
                sig
            );
        }
    }
    Ok(())
}

/// Every string over `units` of length at most `max`, shortest first.
pub(crate) fn all_strings(units: &[char], max: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut layer = vec![String::new()];
    for _ in 0..max {
        layer = layer
            .iter()
            .flat_map(|s| units.iter().map(move |c| format!("{s}{c}")))
            .collect();
        out.extend(layer.iter().cloned());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The difference agrees with brute force, and its witness is a shortest one.
    #[test]
    fn difference_matches_brute_force(
        target in glob_strategy(4),
        others in prop::collection::vec(glob_strategy(4), 0..4),
    ) {
        let t = w(&target);
        let os: Vec<Wildcard> = others.iter().map(|o| w(o)).collect();
        let refs: Vec<&Wildcard> = os.iter().collect();
        let got = difference(&t, &refs, Platform::Unix, &mut Budget::default());
        let inside = |s: &str| t.is_match(s, Platform::Unix)
            && !os.iter().any(|o| o.is_match(s, Platform::Unix));
        agrees_with_brute_force(got, inside, "difference")?;
    }

    /// A literal target or a literal among the globs, or a glob's only shortest word
    /// (Unix), is decided by the matcher: the same answer, and the same witness, as the
    /// product search.
    #[test]
    fn literal_shortcuts_are_the_search(
        literal in prop_oneof!["[ab/ ]{0,4}", glob_strategy(4)],
        others in prop::collection::vec(glob_strategy(4), 1..4),
    ) {
        let u = Platform::Unix;
        let t = w(&literal);
        let os: Vec<Wildcard> = others.iter().map(|o| w(o)).collect();
        let mut globs = vec![&t];
        globs.extend(os.iter());
        let excluded: Vec<usize> = (1..globs.len()).collect();
        let searched = Product::new(&globs, u).find(&[0], &excluded, &mut Budget::default());
        prop_assert_eq!(difference(&t, &globs[1..], u, &mut Budget::default()), searched);
        let mut distinct: Vec<&Wildcard> = Vec::new();
        for g in globs {
            if !distinct.contains(&g) {
                distinct.push(g);
            }
        }
        let required: Vec<usize> = (0..distinct.len()).collect();
        let met = if distinct.len() == 1 {
            Outcome::Witness(shortest_member(distinct[0]))
        } else {
            Product::new(&distinct, u).find(&required, &[], &mut Budget::default())
        };
        prop_assert_eq!(intersection(&distinct, u, &mut Budget::default()), met);
    }

    /// `cells` lists exactly the acceptance signatures that occur, each with a witness
    /// that has it.
    #[test]
    fn cells_match_brute_force(globs in prop::collection::vec(glob_strategy(3), 1..5)) {
        let gs: Vec<Wildcard> = globs.iter().map(|g| w(g)).collect();
        let refs: Vec<&Wildcard> = gs.iter().collect();
        let cells = Product::new(&refs, Platform::Unix)
            .cells(&[0], &mut Budget::default())
            .map_err(|_| TestCaseError::fail("inconclusive on a tiny query"))?;
        let signature = |s: &str| -> Option<Vec<usize>> {
            gs[0].is_match(s, Platform::Unix).then(|| {
                (1..gs.len()).filter(|&k| gs[k].is_match(s, Platform::Unix)).collect()
            })
        };
        cells_agree_with_brute_force(&cells, signature)?;
    }

    /// `cells_outside` with excluded components (whose positions that end alike are
    /// merged, [`Product::merges`]) lists exactly the signatures of the words no
    /// excluded component accepts.
    #[test]
    fn cells_outside_match_brute_force(
        globs in prop::collection::vec(glob_strategy(4), 2..7),
        split in 1usize..6,
    ) {
        let gs: Vec<Wildcard> = globs.iter().map(|g| w(g)).collect();
        let refs: Vec<&Wildcard> = gs.iter().collect();
        let split = split.min(gs.len() - 1);
        let excluded: Vec<usize> = (split..gs.len()).collect();
        let cells = Product::new(&refs, Platform::Unix)
            .cells_outside(&[0], &excluded, &[], &[], &mut Budget::default())
            .map_err(|_| TestCaseError::fail("inconclusive on a tiny query"))?;
        let signature = |s: &str| -> Option<Vec<usize>> {
            (gs[0].is_match(s, Platform::Unix)
                && !excluded.iter().any(|&k| gs[k].is_match(s, Platform::Unix)))
            .then(|| (1..split).filter(|&k| gs[k].is_match(s, Platform::Unix)).collect())
        };
        cells_agree_with_brute_force(&cells, signature)?;
    }

    #[test]
    fn intersection_matches_brute_force(
        globs in prop::collection::vec(glob_strategy(4), 1..4),
        windows in any::<bool>(),
    ) {
        let platform = if windows { Platform::Windows } else { Platform::Unix };
        // On Windows, put some upper case in to exercise folding.
        let globs: Vec<String> = globs
            .iter()
            .enumerate()
            .map(|(i, g)| if windows && i % 2 == 1 { g.to_uppercase() } else { g.clone() })
            .collect();
        let gs: Vec<Wildcard> = globs.iter().map(|g| w(g)).collect();
        let refs: Vec<&Wildcard> = gs.iter().collect();
        let got = intersection(&refs, platform, &mut Budget::default());
        let inside = |s: &str| gs.iter().all(|g| g.is_match(s, platform));
        agrees_with_brute_force(got, inside, "intersection")?;
    }
}
