//! Which rules of an ordered ruleset can ever decide anything (spec §2.1: the decision for
//! an input is the **last** rule matching it).
//!
//! A rule is a pair of globs (permission, pattern); an input is a pair (permission name,
//! subject). Rule `i` decides input `(p, s)` when it matches it and no later rule does, so
//! rule `i` is dead exactly when
//!
//! ```text
//! L_perm(i) × L_pat(i)  ⊆  ⋃_{j > i} L_perm(j) × L_pat(j)
//! ```
//!
//! # Construction: permission cells
//!
//! A union of products is not a product, so the pair question does not split into two
//! one-dimensional ones directly. It does split per *permission cell*: for a name `p`, let
//! `J(p)` be the later rules whose permission glob matches `p`. For that `p` the covered
//! subjects are `⋃_{j ∈ J(p)} L_pat(j)`, so rule `i` is dead iff for every `p ∈ L_perm(i)`,
//! `L_pat(i) ⊆ ⋃_{j ∈ J(p)} L_pat(j)`. `J(p)` takes few values, and they are exactly the
//! accepting signatures of the product DFA of rule `i`'s permission glob with the later
//! rules' distinct permission globs ([`Product::cells`]), each with a shortest name as
//! witness. That enumeration is itself an exact automaton search, not sampling. Only the
//! *minimal* signatures (by set inclusion) need checking, because a name matched by more
//! later rules is covered at least as well. Each remaining check is one containment of
//! rule `i`'s pattern in a union of patterns ([`difference`]), whose witness completes the
//! pair.
//!
//! # Cost
//!
//! Real rulesets have few distinct permission globs, so the cell search is small: the
//! globs are mostly literal names, and a literal component dies at its first mismatch. Each
//! check then builds one pattern product, over only the later patterns that can meet rule
//! `i`'s: each permission's rules are kept sorted by their pattern's literal prefix, and two
//! globs meet only if one prefix is a prefix of the other, so a few ranges of that index
//! hold every candidate ([`Fixed::disjoint`] then drops clashing suffixes). Without it every
//! rule looked at every later rule, and `check` was quadratic in the number of rules. Every public query runs on its own
//! [`Budget`] (default [`DEFAULT_BUDGET`]), shared by all of its searches; past it the
//! answer is [`Outcome::Inconclusive`], never a guess.
//!
//! # Exactness
//!
//! Exact over all UTF-16 code-unit sequences on both platforms: Windows case folding is
//! handled by the class construction in [`super::automaton`]. Witnesses are the shortest
//! within their cell, so they can be the empty string (a real, if unlikely, permission
//! name or subject); callers that want a friendlier example may prefer a known name from
//! the same cell. Witnesses are well-formed UTF-16 whenever such a witness exists among the
//! classes searched.

use std::collections::{HashMap, HashSet};
use std::iter;

use super::automaton::{
    Budget, Cell, DEFAULT_BUDGET, Exhausted, Outcome, Product, Word, difference, intersection,
};
use super::wildcard::{Platform, Wildcard, subject_units};

/// The part of a rule that decides which inputs it matches; the action is irrelevant to
/// reachability.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleShape {
    pub permission: String,
    pub pattern: String,
}

impl RuleShape {
    pub fn new(permission: impl Into<String>, pattern: impl Into<String>) -> RuleShape {
        RuleShape {
            permission: permission.into(),
            pattern: pattern.into(),
        }
    }
}

/// One evaluation input: a permission name and a subject (spec §2.1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Input {
    pub permission: Word,
    pub subject: Word,
}

impl Input {
    pub fn new(permission: &str, subject: &str) -> Input {
        Input {
            permission: Word::from(permission),
            subject: Word::from(subject),
        }
    }
}

/// An input that a rule matches but a later rule decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overridden {
    pub input: Input,
    /// Index of the rule that decides `input`, always greater than the rule asked about.
    pub decider: usize,
}

/// An ordered ruleset compiled for analysis. Globs are deduplicated, so rules that share a
/// permission or a pattern share its automaton component.
#[derive(Debug, Clone)]
pub struct Analysis {
    platform: Platform,
    budget: u64,
    permissions: Vec<std::rc::Rc<Fixed>>,
    patterns: Vec<std::rc::Rc<Fixed>>,
    rules: Vec<Shape>,
    /// `by_permission[k]`: the indices of the rules with permission glob `k`, ascending.
    by_permission: Vec<Vec<usize>>,
    /// `by_prefix[k]`: the rules with permission glob `k` as (literal prefix of the pattern,
    /// case-folded on Windows; rule index), sorted: the rules whose prefixes are compatible
    /// with a given one are a few ranges of it ([`Analysis::compatible`]).
    by_prefix: Vec<Vec<(Vec<u16>, usize)>>,
    /// [`Analysis::contains`] (its answer depends on the globs alone, and the order checks
    /// ask the same pair again for many rules and agents: an exception test looks back over
    /// up to 256 earlier rules for each candidate)
    /// and [`Analysis::intersection`], by the four globs' texts: shared with every
    /// analysis made with the same memo ([`Analysis::sharing`]).
    pairs: std::rc::Rc<PairMemo>,
    /// Each permission glob's and pattern glob's id in `pairs`.
    permission_ids: Vec<u32>,
    pattern_ids: Vec<u32>,
    /// [`Analysis::later_candidates`] by rule: a pure function of the shapes, asked once
    /// per outcome an order check looks for.
    candidates: std::cell::RefCell<HashMap<usize, Vec<usize>>>,
    /// [`Analysis::within_earlier`] by rule and look-back.
    enclosing: std::cell::RefCell<HashMap<(usize, usize), Rules>>,
    /// [`Analysis::decides`] by rule: reachability and always-overrides-deny both ask it.
    decided: std::cell::RefCell<HashMap<usize, Outcome<Input>>>,
}

/// A rule as indices into the distinct globs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    permission: usize,
    pattern: usize,
}

/// Rule indices, shared.
type Rules = std::rc::Rc<[usize]>;

/// A glob's id in a [`PairMemo`] and its compiled form.
type Glob = (u32, std::rc::Rc<Fixed>);

/// Answers about a pair of rules that depend on their four globs alone (containment,
/// intersection), by the globs' texts, for one platform and budget: the analyses of one
/// check share one (every agent ends with the same rules), and `permaudit server` keeps it
/// between changes, so a ruleset analysed anew after an edit still knows its pairs.
#[derive(Debug)]
pub struct PairMemo {
    platform: Platform,
    budget: u64,
    /// Each glob's id and compiled form, by its UTF-16 units.
    ids: std::cell::RefCell<HashMap<Vec<u16>, Glob>>,
    contained: std::cell::RefCell<HashMap<[u32; 4], Outcome<Input>>>,
    met: std::cell::RefCell<HashMap<[u32; 4], Outcome<Input>>>,
    /// The permission cells of [`Analysis::decides`], by the permission globs' ids (the
    /// rule's, then the later ones' in order), with the units the search spent.
    cells: Spent<Vec<u32>, Result<Vec<Cell>, Exhausted>>,
    /// The differences of [`Analysis::decides`], by the target pattern's id and the
    /// covering patterns' ids in order, with the units the search spent. Agents whose
    /// rules differ before rule `i` or far after it (each agent's own rules come after the
    /// shared ones) still ask the same searches of the shared rules.
    differences: Spent<(u32, Vec<u32>), Outcome<Word>>,
}

/// Finished searches by their globs' ids, each with the budget units it spent: a search is
/// deterministic, so with at least that many units left it would spend exactly them and
/// find the same answer ([`PairMemo::spent`]). Searches that ran out are not kept.
type Spent<K, V> = std::cell::RefCell<HashMap<K, (V, u64)>>;

impl PairMemo {
    pub fn new(platform: Platform) -> PairMemo {
        PairMemo::with_budget(platform, DEFAULT_BUDGET)
    }

    fn with_budget(platform: Platform, budget: u64) -> PairMemo {
        PairMemo {
            platform,
            budget,
            ids: Default::default(),
            contained: Default::default(),
            met: Default::default(),
            cells: Default::default(),
            differences: Default::default(),
        }
    }

    /// `search`'s answer for `key`, charged to `budget` as the search itself would be: the
    /// answer kept when `budget` still has the units it spent (the same search would spend
    /// them again and find the same), else the search run on `budget` (kept when `finished`
    /// says it did not run out).
    fn spent<K: std::hash::Hash + Eq, V: Clone>(
        memo: &Spent<K, V>,
        key: K,
        budget: &mut Budget,
        finished: impl Fn(&V) -> bool,
        search: impl FnOnce(&mut Budget) -> V,
    ) -> V {
        if let Some((known, units)) = memo.borrow().get(&key)
            && *units <= budget.remaining()
        {
            budget.take(*units);
            return known.clone();
        }
        let before = budget.remaining();
        let found = search(budget);
        if finished(&found) {
            let units = before - budget.remaining();
            memo.borrow_mut().insert(key, (found.clone(), units));
        }
        found
    }

    /// The id and compiled form of a glob (made once per text).
    pub fn glob(&self, text: &str) -> Glob {
        let units = subject_units(text);
        let mut ids = self.ids.borrow_mut();
        if let Some((id, fixed)) = ids.get(&units) {
            return (*id, fixed.clone());
        }
        let made = (ids.len() as u32, std::rc::Rc::new(Fixed::new(text)));
        ids.insert(units, made.clone());
        made
    }

    /// How many globs and answers are kept.
    pub fn len(&self) -> usize {
        self.ids.borrow().len()
            + self.contained.borrow().len()
            + self.met.borrow().len()
            + self.cells.borrow().len()
            + self.differences.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Analysis {
    pub fn new(rules: &[RuleShape], platform: Platform) -> Analysis {
        Analysis::sharing(rules, platform, std::rc::Rc::new(PairMemo::new(platform)))
    }

    /// The pair answers this analysis keeps (to share with another: [`Analysis::sharing`]).
    pub fn pairs(&self) -> std::rc::Rc<PairMemo> {
        self.pairs.clone()
    }

    /// [`Analysis::new`], keeping its pair answers in `pairs` (used only when made for the
    /// same platform and budget; otherwise a memo of its own).
    pub fn sharing(
        rules: &[RuleShape],
        platform: Platform,
        pairs: std::rc::Rc<PairMemo>,
    ) -> Analysis {
        let pairs = if pairs.platform == platform && pairs.budget == DEFAULT_BUDGET {
            pairs
        } else {
            std::rc::Rc::new(PairMemo::new(platform))
        };
        let mut permissions = Interner::default();
        let mut patterns = Interner::default();
        let rules = rules
            .iter()
            .map(|r| Shape {
                permission: permissions.intern(&r.permission, &pairs),
                pattern: patterns.intern(&r.pattern, &pairs),
            })
            .collect::<Vec<Shape>>();
        let mut by_permission = vec![Vec::new(); permissions.globs.len()];
        for (i, r) in rules.iter().enumerate() {
            if let Some(list) = by_permission.get_mut(r.permission) {
                list.push(i);
            }
        }
        let key = |f: &Fixed| -> Vec<u16> {
            match platform {
                Platform::Windows => f.prefix.iter().map(|&u| super::wildcard::fold(u)).collect(),
                Platform::Unix => f.prefix.clone(),
            }
        };
        let by_prefix = by_permission
            .iter()
            .map(|list| {
                let mut keyed: Vec<(Vec<u16>, usize)> = list
                    .iter()
                    .filter_map(|&i| {
                        let r = rules.get(i)?;
                        Some((key(patterns.globs.get(r.pattern)?), i))
                    })
                    .collect();
                keyed.sort_unstable();
                keyed
            })
            .collect();
        Analysis {
            platform,
            budget: DEFAULT_BUDGET,
            permission_ids: permissions.ids,
            pattern_ids: patterns.ids,
            permissions: permissions.globs,
            patterns: patterns.globs,
            rules,
            by_permission,
            by_prefix,
            pairs,
            candidates: Default::default(),
            enclosing: Default::default(),
            decided: Default::default(),
        }
    }

    /// The rules after `i` with permission glob `k` whose pattern is not provably disjoint
    /// from `target` ([`Fixed::disjoint`]), unordered. Two globs can only meet when one
    /// literal prefix is a prefix of the other, so only those ranges of the sorted prefix
    /// index are looked at: the prefixes extending the target's, and each of its own
    /// prefixes (the empty one included).
    fn compatible(&self, k: usize, i: usize, target: &Fixed) -> Vec<usize> {
        let Some(index) = self.by_prefix.get(k) else {
            return Vec::new();
        };
        let want: Vec<u16> = match self.platform {
            Platform::Windows => target
                .prefix
                .iter()
                .map(|&u| super::wildcard::fold(u))
                .collect(),
            Platform::Unix => target.prefix.clone(),
        };
        let mut out = Vec::new();
        let mut take = |range: &[(Vec<u16>, usize)]| {
            for (_, j) in range {
                if *j > i
                    && let Some(r) = self.rules.get(*j)
                    && !target.disjoint(self.pattern_glob(r.pattern), self.platform)
                {
                    out.push(*j);
                }
            }
        };
        // Prefixes that extend the target's (the target's own included): one range, as
        // the index is sorted.
        let start = index.partition_point(|(key, _)| key.as_slice() < want.as_slice());
        let end = start
            + index
                .get(start..)
                .unwrap_or_default()
                .partition_point(|(key, _)| key.starts_with(&want));
        take(index.get(start..end).unwrap_or_default());
        // Proper prefixes of the target's prefix: each a range of equal keys, sorted by
        // rule index, of which only the rules after `i` can override it.
        for len in 0..want.len() {
            let short = want.get(..len).unwrap_or_default();
            let from = index.partition_point(|(key, j)| (key.as_slice(), *j) <= (short, i));
            let to = index.partition_point(|(key, _)| key.as_slice() <= short);
            take(index.get(from..to.max(from)).unwrap_or_default());
        }
        out
    }

    /// The distinct permission globs of the rules after `i`, ordered by their first
    /// occurrence after `i`. `O(k log n)` for `k` distinct permission globs, instead of a
    /// pass over every later rule.
    fn later_permissions(&self, i: usize) -> Vec<usize> {
        let mut next: Vec<(usize, usize)> = self
            .by_permission
            .iter()
            .enumerate()
            .filter_map(|(k, list)| list.get(list.partition_point(|&r| r <= i)).map(|&r| (r, k)))
            .collect();
        next.sort_unstable();
        next.into_iter().map(|(_, k)| k).collect()
    }

    /// The rules after `i` that may share an input with rule `i`, from the last one down:
    /// every later rule except those proven disjoint by their literal prefixes and
    /// suffixes ([`Fixed::disjoint`]), found through the permission and prefix indexes so
    /// that rules of other permissions and other literal prefixes cost nothing. Exact: only
    /// provably disjoint rules are left out.
    pub fn later_candidates(&self, i: usize) -> impl Iterator<Item = usize> + use<> {
        if let Some(known) = self.candidates.borrow().get(&i) {
            return known.clone().into_iter();
        }
        let mut out: Vec<usize> = match self.rules.get(i) {
            Some(rule) => {
                let perm = self.permission_glob(rule.permission);
                let pattern = self.pattern_glob(rule.pattern);
                (0..self.permissions.len())
                    .filter(|&k| !perm.disjoint(self.permission_glob(k), self.platform))
                    .flat_map(|k| self.compatible(k, i, pattern))
                    .collect()
            }
            None => Vec::new(),
        };
        out.sort_unstable_by(|a, b| b.cmp(a));
        out.dedup();
        self.candidates.borrow_mut().insert(i, out.clone());
        out.into_iter()
    }

    /// Work units each query may spend (see [`Budget`]).
    pub fn with_budget(self, units: u64) -> Analysis {
        Analysis {
            budget: units,
            pairs: std::rc::Rc::new(PairMemo::with_budget(self.platform, units)),
            candidates: Default::default(),
            enclosing: Default::default(),
            decided: Default::default(),
            ..self
        }
    }

    /// The key of a pair of rules in `pairs`.
    fn pair_key(&self, a: Shape, b: Shape) -> [u32; 4] {
        [
            self.permission_id(a.permission),
            self.pattern_id(a.pattern),
            self.permission_id(b.permission),
            self.pattern_id(b.pattern),
        ]
    }

    /// A permission glob's id in `pairs`.
    fn permission_id(&self, k: usize) -> u32 {
        self.permission_ids.get(k).copied().unwrap_or(u32::MAX)
    }

    /// A pattern glob's id in `pairs`.
    fn pattern_id(&self, k: usize) -> u32 {
        self.pattern_ids.get(k).copied().unwrap_or(u32::MAX)
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Does rule `i` match the input? False for an index out of range.
    pub fn matches(&self, i: usize, input: &Input) -> bool {
        self.rules.get(i).is_some_and(|r| {
            self.permission_glob(r.permission)
                .wildcard
                .is_match_units(input.permission.units(), self.platform)
                && self
                    .pattern_glob(r.pattern)
                    .wildcard
                    .is_match_units(input.subject.units(), self.platform)
        })
    }

    /// The rule that decides the input: the last one matching it, or `None` for the
    /// default (ask).
    pub fn decision(&self, input: &Input) -> Option<usize> {
        (0..self.rules.len())
            .rev()
            .find(|&i| self.matches(i, input))
    }

    /// An input that rule `i` decides, or [`Outcome::Empty`] if the rule is dead: every
    /// input it matches is matched by a later rule too. (A rule that does not exist decides
    /// nothing.)
    pub fn decides(&self, i: usize) -> Outcome<Input> {
        if let Some(known) = self.decided.borrow().get(&i) {
            return known.clone();
        }
        let found = self.search_decides(i);
        self.decided.borrow_mut().insert(i, found.clone());
        found
    }

    fn search_decides(&self, i: usize) -> Outcome<Input> {
        let Some(rule) = self.rules.get(i) else {
            return Outcome::Empty;
        };
        let mut budget = Budget::new(self.budget);

        // Component 0 is rule i's permission glob, component k ≥ 1 is `later_perms[k - 1]`.
        let later_perms = self.later_permissions(i);
        let components: Vec<usize> = iter::once(rule.permission)
            .chain(later_perms.iter().copied())
            .collect();
        let key: Vec<u32> = components.iter().map(|&k| self.permission_id(k)).collect();
        let searched = PairMemo::spent(
            &self.pairs.cells,
            key,
            &mut budget,
            Result::is_ok,
            |budget| {
                let globs: Vec<&Wildcard> = components
                    .iter()
                    .map(|&k| &self.permission_glob(k).wildcard)
                    .collect();
                Product::new(&globs, self.platform).cells(&[0], budget)
            },
        );
        let Ok(cells) = searched else {
            return Outcome::Inconclusive;
        };

        let mut inconclusive = false;
        let mut checked: HashSet<Vec<usize>> = HashSet::new();
        for cell in minimal(&cells) {
            // The later rules of this cell's permissions, less those whose patterns are
            // provably disjoint from rule i's (they cover none of it).
            let target = self.pattern_glob(rule.pattern);
            let mut covering: Vec<usize> = cell
                .accepting
                .iter()
                .filter_map(|&k| later_perms.get(k.checked_sub(1)?).copied())
                .flat_map(|k| self.compatible(k, i, target))
                .filter_map(|j| self.rules.get(j).map(|r| r.pattern))
                .collect();
            covering.sort_unstable();
            covering.dedup();
            // A later rule with the same pattern, or one matching everything (`*`), covers
            // this whole cell.
            if covering.contains(&rule.pattern)
                || covering.iter().any(|&k| self.pattern_glob(k).universal())
                || !checked.insert(covering.clone())
            {
                continue;
            }
            let key = (
                self.pattern_id(rule.pattern),
                covering.iter().map(|&k| self.pattern_id(k)).collect(),
            );
            let found = PairMemo::spent(
                &self.pairs.differences,
                key,
                &mut budget,
                |o| !o.is_inconclusive(),
                |budget| {
                    let others: Vec<&Wildcard> = covering
                        .iter()
                        .map(|&k| &self.pattern_glob(k).wildcard)
                        .collect();
                    difference(&target.wildcard, &others, self.platform, budget)
                },
            );
            match found {
                Outcome::Witness(subject) => {
                    return Outcome::Witness(Input {
                        permission: cell.witness.clone(),
                        subject,
                    });
                }
                Outcome::Empty => {}
                Outcome::Inconclusive => inconclusive = true,
            }
        }
        Outcome::none_found(inconclusive)
    }

    /// An input that rule `i` matches but a later rule decides, with that rule; or
    /// [`Outcome::Empty`] if rule `i` decides every input it matches. The later rules are
    /// tried from the last one down, so the witness's decider is the last rule that takes
    /// anything from rule `i`.
    pub fn overridden(&self, i: usize) -> Outcome<Overridden> {
        let mut budget = Budget::new(self.budget);
        first_override(
            i,
            self.later_candidates(i),
            |j| self.intersect(i, j, &mut budget),
            |input| self.decision(input),
        )
    }

    /// Is every input rule `inner` matches also matched by rule `outer`? `Empty` means
    /// yes (proven); a witness is an input of `inner` that `outer` does not match. A
    /// product of languages is contained in another iff each coordinate is (rules never
    /// match nothing: every glob has a shortest member).
    pub fn contains(&self, outer: usize, inner: usize) -> Outcome<Input> {
        let (Some(&ro), Some(&ri)) = (self.rules.get(outer), self.rules.get(inner)) else {
            return Outcome::Inconclusive;
        };
        self.memoized(&self.pairs.contained, (ro, ri), || {
            self.contains_shapes(ro, ri)
        })
    }

    /// The answer `memo` keeps for the pair of shapes `(a, b)`: `compute`'s, the first time.
    fn memoized(
        &self,
        memo: &std::cell::RefCell<HashMap<[u32; 4], Outcome<Input>>>,
        (a, b): (Shape, Shape),
        compute: impl FnOnce() -> Outcome<Input>,
    ) -> Outcome<Input> {
        let key = self.pair_key(a, b);
        if let Some(known) = memo.borrow().get(&key) {
            return known.clone();
        }
        let answer = compute();
        memo.borrow_mut().insert(key, answer.clone());
        answer
    }

    /// Is every input of rule `inner` proved to be an input of rule `outer`? The same answer
    /// as `contains(outer, inner).is_proved_empty()`, without the automaton when the fixed
    /// parts already tell two globs apart (a glob's language is never empty, so disjoint
    /// globs are not nested).
    pub fn proved_within(&self, outer: usize, inner: usize) -> bool {
        let (Some(&ro), Some(&ri)) = (self.rules.get(outer), self.rules.get(inner)) else {
            return false;
        };
        let apart = |a: &Fixed, b: &Fixed| a.disjoint(b, self.platform);
        if (ro.permission != ri.permission
            && apart(
                self.permission_glob(ri.permission),
                self.permission_glob(ro.permission),
            ))
            || (ro.pattern != ri.pattern
                && apart(self.pattern_glob(ri.pattern), self.pattern_glob(ro.pattern)))
        {
            return false;
        }
        // Decided by the shapes, else "no" when a word of the inner glob (its stars empty,
        // or one unit no glob writes) escapes the outer one; else the automaton.
        let within = |i: &Fixed, o: &Fixed, same: bool| {
            if same {
                return Some(true);
            }
            i.within(o, self.platform).or_else(|| {
                [&[][..], &[1u16][..]]
                    .iter()
                    .any(|star| {
                        !o.wildcard
                            .is_match_units(&i.wildcard.fill_units(star), self.platform)
                    })
                    .then_some(false)
            })
        };
        match (
            within(
                self.permission_glob(ri.permission),
                self.permission_glob(ro.permission),
                ri.permission == ro.permission,
            ),
            within(
                self.pattern_glob(ri.pattern),
                self.pattern_glob(ro.pattern),
                ri.pattern == ro.pattern,
            ),
        ) {
            (Some(false), _) | (_, Some(false)) => false,
            (Some(true), Some(true)) => true,
            _ => self.contains(outer, inner).is_proved_empty(),
        }
    }

    /// The rules among the `lookback` before rule `inner`, nearest first, that rule `inner`
    /// is [proved within](Analysis::proved_within): what an exception test asks of every
    /// candidate, and the same whatever the actions.
    pub fn within_earlier(&self, inner: usize, lookback: usize) -> Rules {
        if let Some(known) = self.enclosing.borrow().get(&(inner, lookback)) {
            return known.clone();
        }
        let found: Rules = (0..inner.min(self.rules.len()))
            .rev()
            .take(lookback)
            .filter(|&k| self.proved_within(k, inner))
            .collect();
        self.enclosing
            .borrow_mut()
            .insert((inner, lookback), found.clone());
        found
    }

    fn contains_shapes(&self, ro: Shape, ri: Shape) -> Outcome<Input> {
        let mut budget = Budget::new(self.budget);
        let mut out = Input::default();
        let coords = [
            (ri.permission, ro.permission, true),
            (ri.pattern, ro.pattern, false),
        ];
        let mut escaped = false;
        for (inner_k, outer_k, is_permission) in coords {
            let (gi, go) = if is_permission {
                (self.permission_glob(inner_k), self.permission_glob(outer_k))
            } else {
                (self.pattern_glob(inner_k), self.pattern_glob(outer_k))
            };
            let word = if inner_k == outer_k || go.universal() {
                None
            } else {
                match difference(&gi.wildcard, &[&go.wildcard], self.platform, &mut budget) {
                    Outcome::Empty => None,
                    Outcome::Witness(w) => Some(w),
                    Outcome::Inconclusive => return Outcome::Inconclusive,
                }
            };
            let word = match word {
                Some(w) => {
                    escaped = true;
                    w
                }
                None => crate::glob::automaton::shortest_member(&gi.wildcard),
            };
            if is_permission {
                out.permission = word;
            } else {
                out.subject = word;
            }
        }
        if escaped {
            Outcome::Witness(out)
        } else {
            Outcome::Empty
        }
    }

    /// An input that rules `a` and `b` both match, or [`Outcome::Empty`] if they are
    /// disjoint (or either does not exist).
    pub fn intersection(&self, a: usize, b: usize) -> Outcome<Input> {
        let (Some(&ra), Some(&rb)) = (self.rules.get(a), self.rules.get(b)) else {
            return Outcome::Empty;
        };
        self.memoized(&self.pairs.met, (ra, rb), || {
            self.intersect(a, b, &mut Budget::new(self.budget))
        })
    }

    /// A product of languages meets another iff both coordinates meet.
    fn intersect(&self, a: usize, b: usize, budget: &mut Budget) -> Outcome<Input> {
        let (Some(ra), Some(rb)) = (self.rules.get(a), self.rules.get(b)) else {
            return Outcome::Empty;
        };
        let permission = match intersection(
            &[
                &self.permission_glob(ra.permission).wildcard,
                &self.permission_glob(rb.permission).wildcard,
            ],
            self.platform,
            budget,
        ) {
            Outcome::Witness(p) => p,
            other => return other.map(|_| Input::default()),
        };
        intersection(
            &[
                &self.pattern_glob(ra.pattern).wildcard,
                &self.pattern_glob(rb.pattern).wildcard,
            ],
            self.platform,
            budget,
        )
        .map(|subject| Input {
            permission,
            subject,
        })
    }

    fn permission_glob(&self, k: usize) -> &Fixed {
        self.permissions.get(k).map_or(&NOTHING, |f| f)
    }

    fn pattern_glob(&self, k: usize) -> &Fixed {
        self.patterns.get(k).map_or(&NOTHING, |f| f)
    }
}

/// Unreachable fallback for an index the interner did not hand out.
static NOTHING: Fixed = Fixed {
    wildcard: Wildcard {
        tokens: Vec::new(),
        optional_tail: false,
    },
    literal: None,
    prefix: Vec::new(),
    suffix: Some(Vec::new()),
};

/// A compiled glob with its fixed parts, for a disjointness test without an automaton.
#[derive(Debug, Clone)]
pub struct Fixed {
    pub wildcard: Wildcard,
    /// The whole word when the glob has no wildcard at all.
    literal: Option<Vec<u16>>,
    /// The literal units before the first wildcard.
    prefix: Vec<u16>,
    /// The literal units after the last wildcard; `None` when the glob ends in the optional
    /// ` *` tail (no fixed suffix).
    suffix: Option<Vec<u16>>,
}

impl Fixed {
    pub fn new(text: &str) -> Fixed {
        use super::wildcard::Token;
        let wildcard = Wildcard::compile(text);
        let lit = |t: &Token| match t {
            Token::Lit(u) => Some(*u),
            _ => None,
        };
        let prefix: Vec<u16> = wildcard.tokens.iter().map_while(lit).collect();
        let mut suffix: Vec<u16> = wildcard.tokens.iter().rev().map_while(lit).collect();
        suffix.reverse();
        Fixed {
            literal: wildcard.literal(),
            prefix,
            suffix: (!wildcard.optional_tail).then_some(suffix),
            wildcard,
        }
    }

    /// Does the glob match every word (`*`, `**`, …)?
    pub fn universal(&self) -> bool {
        use super::wildcard::Token;
        !self.wildcard.optional_tail
            && !self.wildcard.tokens.is_empty()
            && self
                .wildcard
                .tokens
                .iter()
                .all(|t| matches!(t, Token::Star))
    }

    /// The whole word, when the glob is one literal word.
    pub fn literal(&self) -> Option<&[u16]> {
        self.literal.as_deref()
    }

    /// Is every word of this glob matched by `outer`? Decided without an automaton for the
    /// shapes most rules have (`outer` matching everything, one word, every word with a
    /// literal prefix `P*`, every word with a literal suffix `*S`, or a command and its
    /// arguments `Q *`), exactly: `Some(answer)`; `None` for any other `outer`. Every glob
    /// matches something, and a wildcard after a literal run can always take a unit that
    /// leaves it, which is what makes "no" exact:
    /// - `P*`: yes iff this glob's literal prefix starts with `P`;
    /// - `*S`: yes iff this glob has a fixed suffix ending with `S`;
    /// - `Q *` (`Q` literal): yes iff this glob's literal prefix starts with `Q ` or it is
    ///   `Q *` itself (in another case on Windows).
    pub fn within(&self, outer: &Fixed, platform: Platform) -> Option<bool> {
        use super::wildcard::{Token, fold};
        if outer.universal() {
            return Some(true);
        }
        if let Some(w) = &self.literal {
            return Some(outer.wildcard.is_match_units(w, platform));
        }
        if outer.literal.is_some() {
            // This glob has a wildcard or the optional tail: at least two words.
            return Some(false);
        }
        let eq =
            |x: &u16, y: &u16| x == y || (platform == Platform::Windows && fold(*x) == fold(*y));
        let starts = |units: &[u16], with: &[u16]| {
            units.len() >= with.len() && units.iter().zip(with).all(|(u, v)| eq(u, v))
        };
        let tokens = &outer.wildcard.tokens;
        let stars = |t: &[Token]| !t.is_empty() && t.iter().all(|t| *t == Token::Star);
        let fixed = outer.prefix.len();
        if outer.wildcard.optional_tail {
            if fixed != tokens.len() {
                return None;
            }
            let mut spaced = outer.prefix.clone();
            spaced.push(u16::from(b' '));
            let same = self.wildcard.optional_tail
                && self.prefix.len() == self.wildcard.tokens.len()
                && self.prefix.len() == fixed
                && starts(&self.prefix, &outer.prefix);
            return Some(same || starts(&self.prefix, &spaced));
        }
        if stars(tokens.get(fixed..).unwrap_or_default()) {
            return Some(starts(&self.prefix, &outer.prefix));
        }
        let suffix = outer.suffix.as_deref().unwrap_or_default();
        if stars(
            tokens
                .get(..tokens.len().saturating_sub(suffix.len()))
                .unwrap_or_default(),
        ) {
            return Some(self.suffix.as_ref().is_some_and(|mine| {
                mine.len() >= suffix.len()
                    && mine
                        .iter()
                        .rev()
                        .zip(suffix.iter().rev())
                        .all(|(u, v)| eq(u, v))
            }));
        }
        None
    }

    /// Proved disjoint without an automaton: a literal glob meets another glob iff the
    /// other matches it; two globs whose literal prefixes (or fixed suffixes) disagree meet
    /// nowhere. `false` means "maybe not disjoint".
    pub fn disjoint(&self, other: &Fixed, platform: Platform) -> bool {
        use super::wildcard::fold;
        if let Some(w) = &self.literal {
            return !other.wildcard.is_match_units(w, platform);
        }
        if let Some(w) = &other.literal {
            return !self.wildcard.is_match_units(w, platform);
        }
        let eq =
            |x: &u16, y: &u16| x == y || (platform == Platform::Windows && fold(*x) == fold(*y));
        if self
            .prefix
            .iter()
            .zip(&other.prefix)
            .any(|(u, v)| !eq(u, v))
        {
            return true;
        }
        match (&self.suffix, &other.suffix) {
            (Some(x), Some(y)) => x.iter().rev().zip(y.iter().rev()).any(|(u, v)| !eq(u, v)),
            _ => false,
        }
    }
}

/// Deduplicates globs by their code units (after `\` → `/`), which determine the compiled
/// wildcard.
#[derive(Default)]
struct Interner {
    globs: Vec<std::rc::Rc<Fixed>>,
    /// Each glob's id in the [`PairMemo`].
    ids: Vec<u32>,
    index: HashMap<u32, usize>,
}

impl Interner {
    fn intern(&mut self, glob: &str, pairs: &PairMemo) -> usize {
        let (id, fixed) = pairs.glob(glob);
        let (globs, ids) = (&mut self.globs, &mut self.ids);
        *self.index.entry(id).or_insert_with(|| {
            globs.push(fixed);
            ids.push(id);
            globs.len() - 1
        })
    }
}

/// The cells whose accepting set has no proper subset among the others, in their order.
fn minimal(cells: &[Cell]) -> impl Iterator<Item = &Cell> {
    cells.iter().filter(move |c| {
        !cells.iter().any(|d| {
            d.accepting.len() < c.accepting.len()
                && d.accepting.iter().all(|k| c.accepting.contains(k))
        })
    })
}

/// The first of the `later` rules (in the order given) that shares an input with rule `i`
/// which a rule after `i` decides: that input and its decider (the `decide` of the whole
/// ruleset), [`Outcome::Empty`] when no later rule takes anything from `i`, inconclusive
/// when an intersection was. The witness matches some `j > i`, so its decider is at least
/// `j`; deciding it concretely keeps the answer exact even past an inconclusive check.
pub fn first_override(
    i: usize,
    later: impl Iterator<Item = usize>,
    mut intersect: impl FnMut(usize) -> Outcome<Input>,
    mut decide: impl FnMut(&Input) -> Option<usize>,
) -> Outcome<Overridden> {
    let mut inconclusive = false;
    for j in later {
        match intersect(j) {
            Outcome::Witness(input) => match decide(&input) {
                Some(decider) if decider > i => {
                    return Outcome::Witness(Overridden { input, decider });
                }
                _ => inconclusive = true,
            },
            Outcome::Empty => {}
            Outcome::Inconclusive => inconclusive = true,
        }
    }
    Outcome::none_found(inconclusive)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn analysis(rules: &[(&str, &str)]) -> Analysis {
        let shapes: Vec<RuleShape> = rules.iter().map(|(p, s)| RuleShape::new(*p, *s)).collect();
        Analysis::new(&shapes, Platform::Unix)
    }

    fn pair(input: &Input) -> (String, String) {
        (input.permission.to_string(), input.subject.to_string())
    }

    /// Rule `i`'s overriding witness (permission, subject) and its decider, if it has one.
    fn overridden(a: &Analysis, i: usize) -> Option<(Option<(String, String)>, usize)> {
        match a.overridden(i) {
            Outcome::Witness(o) => Some((Some(pair(&o.input)), o.decider)),
            _ => None,
        }
    }

    fn decided(a: &Analysis, i: usize) -> Option<(String, String)> {
        match a.decides(i) {
            Outcome::Witness(input) => {
                assert_eq!(
                    a.decision(&input),
                    Some(i),
                    "witness {input:?} not decided by {i}"
                );
                Some(pair(&input))
            }
            Outcome::Empty => None,
            Outcome::Inconclusive => panic!("rule {i}: inconclusive"),
        }
    }

    fn some(p: &str, s: &str) -> Option<(String, String)> {
        Some((p.to_string(), s.to_string()))
    }

    /// (rules, what each rule decides, a rule's overriding witness and its decider); the
    /// last rule is overridden by nothing.
    type Overriding<'a> = (
        &'a [(&'a str, &'a str)],
        &'a [Option<(&'a str, &'a str)>],
        (usize, (&'a str, &'a str), usize),
    );

    #[test]
    fn later_catch_all_kills_earlier_rules_specific_after_general_both_decide() {
        let cases: [Overriding<'_>; 2] = [
            // edit * ask, edit tests/** deny, edit ** allow: the catch-all kills the others.
            (
                &[("edit", "*"), ("edit", "tests/**"), ("edit", "**")],
                &[None, None, Some(("edit", ""))],
                (1, ("edit", "tests/"), 2),
            ),
            // bash * deny, bash git * allow: the specific rule after the general, both decide.
            (
                &[("bash", "*"), ("bash", "git *")],
                &[Some(("bash", "")), Some(("bash", "git"))],
                (0, ("bash", "git"), 1),
            ),
        ];
        for (rules, decides, (i, (p, s), by)) in cases {
            let a = analysis(rules);
            for (k, want) in decides.iter().enumerate() {
                let want = want.and_then(|(p, s)| some(p, s));
                assert_eq!(decided(&a, k), want, "{rules:?}: rule {k}");
            }
            assert_eq!(overridden(&a, i), Some((some(p, s), by)), "{rules:?}");
            assert_eq!(a.overridden(rules.len() - 1), Outcome::Empty, "{rules:?}");
        }
    }

    #[test]
    fn trailing_space_star() {
        // `git *` covers `git`, not the other way round.
        let a = analysis(&[("bash", "git"), ("bash", "git *")]);
        assert_eq!(decided(&a, 0), None);
        let a = analysis(&[("bash", "git *"), ("bash", "git")]);
        assert_eq!(decided(&a, 0), some("bash", "git "));
        // `git **` is no optional tail: it leaves `git` alone.
        let a = analysis(&[("bash", "git"), ("bash", "git **")]);
        assert_eq!(decided(&a, 0), some("bash", "git"));
        // The optional tail works on permission names too: `bash *` applies to `bash`.
        let a = analysis(&[("bash", "ls"), ("bash *", "*")]);
        assert_eq!(decided(&a, 0), None);
    }

    #[test]
    fn permission_globs() {
        let a = analysis(&[("*", "*"), ("ed*", "*"), ("github_*", "*"), ("edit", "*")]);
        assert_eq!(decided(&a, 0), some("", ""));
        assert_eq!(decided(&a, 1), some("ed", ""));
        assert_eq!(decided(&a, 2), some("github_", ""));
        assert_eq!(decided(&a, 3), some("edit", ""));

        // A wider permission glob later covers the narrower one...
        let a = analysis(&[("edit", "src/*"), ("ed*", "*")]);
        assert_eq!(decided(&a, 0), None);
        // ...but not the other way round.
        let a = analysis(&[("ed*", "src/*"), ("edit", "*")]);
        assert_eq!(decided(&a, 0), some("ed", "src/"));
        // Two later rules that cover different names and different subjects cover neither
        // cell completely: `edit` with `b` escapes the first, `edit` with `a` the second.
        let a = analysis(&[("e*", "*"), ("ed*", "a*"), ("*t", "b*"), ("*", "c*")]);
        assert_eq!(decided(&a, 0), some("e", ""));
        let a = analysis(&[("edit", "?"), ("ed*", "a"), ("*t", "?")]);
        assert_eq!(decided(&a, 0), None);
        let a = analysis(&[("edit", "??"), ("ed*", "a?"), ("*t", "?b")]);
        assert_eq!(decided(&a, 0), some("edit", "ba"));
        // Incomparable cells: `a` is covered by rule 1 and `aa` only by rule 2, which leaves
        // subject `` to rule 0; the first cell alone would wrongly say dead.
        let a = analysis(&[("a*", "*"), ("a", "*"), ("a?*", "x")]);
        assert_eq!(decided(&a, 0), some("aa", ""));
        let a = analysis(&[("a*", "*"), ("a", "*"), ("a?*", "*")]);
        assert_eq!(decided(&a, 0), None);
    }

    #[test]
    fn intersections_of_rules() {
        let a = analysis(&[
            ("ed*", "src/*"),
            ("*it", "*.rs"),
            ("bash", "*"),
            ("edit", "docs/*"),
        ]);
        assert_eq!(
            a.intersection(0, 1).map(|i| pair(&i)),
            Outcome::Witness(("edit".into(), "src/.rs".into()))
        );
        assert_eq!(a.intersection(0, 2), Outcome::Empty);
        assert_eq!(a.intersection(0, 3), Outcome::Empty);
        assert_eq!(
            a.intersection(1, 3).map(|i| pair(&i)),
            Outcome::Witness(("edit".into(), "docs/.rs".into()))
        );
        assert_eq!(a.intersection(0, 9), Outcome::Empty);
    }

    #[test]
    fn windows_is_exact_too() {
        let rules = [
            RuleShape::new("bash", "Git *"),
            RuleShape::new("BASH", "git *"),
        ];
        let a = Analysis::new(&rules, Platform::Windows);
        assert_eq!(a.decides(0), Outcome::Empty);
        let a = Analysis::new(&rules, Platform::Unix);
        assert_eq!(
            a.decides(0).map(|i| pair(&i)),
            Outcome::Witness(("bash".into(), "Git".into()))
        );
    }

    #[test]
    fn out_of_range_is_harmless() {
        let a = analysis(&[("bash", "*")]);
        assert_eq!(a.decides(5), Outcome::Empty);
        assert_eq!(a.overridden(5), Outcome::Empty);
        assert_eq!(decided(&a, 0), some("bash", ""));
        assert_eq!(decided(&analysis(&[]), 0), None);
    }

    #[test]
    fn pathological_rulesets_stay_within_budget() {
        let started = std::time::Instant::now();
        // 200 rules whose patterns alternate `*a` and `a*`: every rule but the last two is
        // dead (the same glob comes back two rules later).
        let rules: Vec<(&str, &str)> = (0..200)
            .map(|k| ("bash", if k % 2 == 0 { "*a" } else { "a*" }))
            .collect();
        let a = analysis(&rules);
        for i in 0..198 {
            assert_eq!(a.decides(i), Outcome::Empty, "rule {i}");
        }
        assert!(a.decides(198).witness().is_some());
        assert!(a.decides(199).witness().is_some());

        // 200 distinct patterns `(*a)^k`: `(*a)^k` ⊆ `(*a)^m` for m ≤ k, so with k
        // descending every rule but the last is dead.
        let globs: Vec<String> = (1..=200).rev().map(|k| "*a".repeat(k)).collect();
        let rules: Vec<RuleShape> = globs
            .iter()
            .map(|g| RuleShape::new("bash", g.as_str()))
            .collect();
        let a = Analysis::new(&rules, Platform::Unix);
        for i in [0, 1, 100, 198] {
            assert!(
                matches!(a.decides(i), Outcome::Empty | Outcome::Inconclusive),
                "rule {i}"
            );
        }
        assert!(a.decides(199).witness().is_some());

        // Exponential subset blowup: answered or inconclusive, never wrong or slow.
        let q = "?".repeat(30);
        let (narrow, wide) = (format!("*a{q}"), format!("*a{q}*"));
        let a = analysis(&[("bash", narrow.as_str()), ("bash", wide.as_str())]);
        assert!(matches!(
            a.decides(0),
            Outcome::Empty | Outcome::Inconclusive
        ));
        assert!(
            started.elapsed().as_secs() < 30,
            "took {:?}",
            started.elapsed()
        );
    }

    const GLOB_UNITS: [char; 6] = ['a', 'b', '/', ' ', '*', '?'];
    /// `x` is never mentioned by a glob, so it stands for the "other" class.
    const INPUT_UNITS: [char; 5] = ['a', 'b', '/', ' ', 'x'];

    /// Permission globs drawn from fewer units overlap more, which is what produces
    /// incomparable permission cells.
    const PERMISSION_UNITS: [char; 3] = ['a', '*', '?'];

    fn glob(units: &'static [char], max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(units), 0..=max)
            .prop_map(|cs| cs.into_iter().collect())
    }

    fn ruleset() -> impl Strategy<Value = Vec<RuleShape>> {
        let rule =
            prop_oneof![glob(&GLOB_UNITS, 3), glob(&PERMISSION_UNITS, 3)].prop_flat_map(|p| {
                glob(&GLOB_UNITS, 4).prop_map(move |s| RuleShape::new(p.clone(), s))
            });
        prop::collection::vec(rule, 1..=5)
    }

    fn all_strings(max: usize) -> Vec<String> {
        crate::glob::automaton::tests::all_strings(&INPUT_UNITS, max)
    }

    /// Evaluates every input up to the bounds with the real matcher, keeping only what the
    /// claims depend on: the distinct sets of rules (bitmasks) that match some input.
    struct Brute {
        matching: HashSet<u32>,
    }

    impl Brute {
        fn new(rules: &[RuleShape]) -> Brute {
            let masks = |strings: Vec<String>, pick: fn(&RuleShape) -> &str| -> HashSet<u32> {
                let globs: Vec<Wildcard> =
                    rules.iter().map(|r| Wildcard::compile(pick(r))).collect();
                strings
                    .iter()
                    .map(|s| {
                        globs
                            .iter()
                            .enumerate()
                            .filter(|(_, g)| g.is_match(s, Platform::Unix))
                            .fold(0u32, |m, (i, _)| m | 1 << i)
                    })
                    .collect()
            };
            let perms = masks(all_strings(3), |r| &r.permission);
            let subjects = masks(all_strings(5), |r| &r.pattern);
            let matching = perms
                .iter()
                .flat_map(|p| subjects.iter().map(move |s| p & s))
                .collect();
            Brute { matching }
        }

        /// Is there an input whose set of matching rules satisfies `f`?
        fn any(&self, f: impl Fn(u32) -> bool) -> bool {
            self.matching.iter().any(|&m| f(m))
        }
    }

    /// The decider of a set of matching rules: the highest.
    fn last(m: u32) -> Option<usize> {
        (m != 0).then(|| 31 - m.leading_zeros() as usize)
    }

    /// Checks a witness with the real matcher on strings, independently of `Analysis`.
    fn real_decision(rules: &[RuleShape], input: &Input) -> Option<usize> {
        let p = input.permission.to_exact_string().unwrap();
        let s = input.subject.to_exact_string().unwrap();
        (0..rules.len()).rev().find(|&i| {
            Wildcard::compile(&rules[i].permission).is_match(&p, Platform::Unix)
                && Wildcard::compile(&rules[i].pattern).is_match(&s, Platform::Unix)
        })
    }

    /// Glob units with a second case, so the Windows answers differ from Unix ones.
    const CASED_UNITS: [char; 7] = ['a', 'A', 'b', '/', ' ', '*', '?'];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Every answer `Fixed::within` gives is the automaton's, on both platforms.
        #[test]
        fn within_agrees_with_the_automaton(
            inner in glob(&CASED_UNITS, 5),
            outer in glob(&CASED_UNITS, 5),
            windows in any::<bool>(),
        ) {
            let platform = if windows { Platform::Windows } else { Platform::Unix };
            let (i, o) = (Fixed::new(&inner), Fixed::new(&outer));
            if let Some(answer) = i.within(&o, platform) {
                let found = difference(&i.wildcard, &[&o.wildcard], platform, &mut Budget::default());
                prop_assert!(!found.is_inconclusive());
                prop_assert_eq!(answer, found.is_proved_empty(), "{:?} within {:?}", inner, outer);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn claims_agree_with_the_real_matcher(rules in ruleset()) {
            let a = Analysis::new(&rules, Platform::Unix);
            let brute = Brute::new(&rules);
            for i in 0..rules.len() {
                let bit = 1u32 << i;
                match a.decides(i) {
                    // (a), (c): the witness is decided by rule i.
                    Outcome::Witness(input) => {
                        prop_assert_eq!(real_decision(&rules, &input), Some(i), "decides({}) = {:?}", i, input);
                    }
                    // (b): no input up to the bounds is decided by rule i.
                    Outcome::Empty => prop_assert!(
                        !brute.any(|m| last(m) == Some(i)),
                        "rule {} claimed dead but decides something", i
                    ),
                    Outcome::Inconclusive => prop_assert!(false, "decides({}) inconclusive", i),
                }
                match a.overridden(i) {
                    Outcome::Witness(o) => {
                        prop_assert!(o.decider > i);
                        prop_assert_eq!(real_decision(&rules, &o.input), Some(o.decider));
                        prop_assert!(a.matches(i, &o.input));
                    }
                    Outcome::Empty => prop_assert!(
                        !brute.any(|m| m & bit != 0 && last(m) != Some(i)),
                        "rule {} claimed never overridden", i
                    ),
                    Outcome::Inconclusive => prop_assert!(false, "overridden({}) inconclusive", i),
                }
                // Pruning is exact: every later rule sharing an input with rule i is a
                // candidate, in descending order.
                let candidates: Vec<usize> = a.later_candidates(i).collect();
                prop_assert!(candidates.windows(2).all(|w| w[0] > w[1]));
                // The indexes find exactly the later rules not proved disjoint pairwise.
                let fixed = |r: &RuleShape| (Fixed::new(&r.permission), Fixed::new(&r.pattern));
                let (pi, si) = fixed(&rules[i]);
                let plain: Vec<usize> = (i + 1..rules.len())
                    .rev()
                    .filter(|&j| {
                        let (pj, sj) = fixed(&rules[j]);
                        !pi.disjoint(&pj, Platform::Unix) && !si.disjoint(&sj, Platform::Unix)
                    })
                    .collect();
                prop_assert_eq!(&candidates, &plain, "candidates of rule {}", i);
                for j in i + 1..rules.len() {
                    if brute.any(|m| m & bit != 0 && m & (1 << j) != 0) {
                        prop_assert!(candidates.contains(&j), "rule {} pruned for rule {}", j, i);
                    }
                }
                for k in 0..rules.len() {
                    // The shortcuts of `proved_within` answer as the automaton does.
                    prop_assert_eq!(
                        a.proved_within(k, i),
                        a.contains(k, i).is_proved_empty(),
                        "rule {} within rule {}", i, k
                    );
                }
                for j in 0..rules.len() {
                    match a.intersection(i, j) {
                        Outcome::Witness(input) => prop_assert!(a.matches(i, &input) && a.matches(j, &input)),
                        Outcome::Empty => prop_assert!(!brute.any(|m| m & bit != 0 && m & (1 << j) != 0)),
                        Outcome::Inconclusive => prop_assert!(false, "intersection inconclusive"),
                    }
                }
            }
        }
    }
}
