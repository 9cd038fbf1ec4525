//! Decision procedures for the wildcard language (spec §1): emptiness of boolean
//! combinations of patterns, containment of one pattern in a union of others, and the
//! shortest word that proves a non-empty answer.
//!
//! # Construction
//!
//! *Finite alphabet.* Patterns range over all 65 536 UTF-16 code units, but a set of
//! patterns only tells apart the units it mentions. A query's alphabet is therefore the
//! literal units of its patterns (after `\` → `/`, plus the space of an optional ` *` tail),
//! one class each, and a single *other* class for every unit none of them mentions. Every
//! pattern treats all members of a class alike, so a word over classes stands for a set of
//! real strings that the patterns cannot distinguish: the answers are exact, not sampled.
//! On [`Platform::Windows`] a literal matches every unit with the same case fold
//! ([`fold`], exactly the matcher's `unit_eq`), so the class key is the fold and the
//! answers stay exact there too.
//!
//! *NFA.* A glob is already a Thompson-style NFA: one position per token, plus an end
//! position. A literal or `?` consumes a unit and advances; `*` loops on any unit and has an
//! ε-edge to the next position. Runs of `*` are collapsed (`**` ≡ `*`), so an ε-closure is
//! one step, and an optional tail ` *` is the tokens ` `, `*` with the position before them
//! accepting as well.
//!
//! *Product DFA.* A [`Product`] lays the positions of several NFAs side by side in one
//! bitset; its subset construction is the product of their DFAs, and one transition is a
//! handful of word-wide AND/shift/OR operations (bit-parallel simulation). A question is a
//! predicate on which components accept: "in all of `required`, in none of `excluded`".
//! Breadth-first search from the start state finds the **shortest** word satisfying it, or
//! exhausts the reachable states, which proves there is none. Two prunings keep the search
//! small without losing exactness: a state where a required component is dead (empty
//! subset) cannot lead to an answer, nor can one where an excluded component is universal
//! (it sits on a `*` from which the end is reachable, so it accepts every continuation).
//!
//! *Readable witnesses.* BFS tries literal classes first (in code-unit order), then the
//! other class, written as `x` or the first of `a`–`z`, `0`–`9` the patterns leave free,
//! so among the shortest witnesses the first found reuses the patterns' own characters.
//! Lone surrogates are legal UTF-16 subjects, so the analysis is exact over all code-unit
//! sequences; but when a pattern mentions surrogates the search first runs restricted to
//! well-formed UTF-16 (a two-state tracker folded into the DFA state), so a witness is a
//! valid Rust string whenever the restricted search finds one. Only if it proves nothing
//! does the unrestricted search decide.
//!
//! # Complexity and budget
//!
//! With `P` positions in total, a state is `W = ⌈P / 64⌉` words and a transition costs
//! `O(W)`. The number of reachable states is small for realistic patterns (literal
//! prefixes disagree quickly, killing components), but it is exponential in the worst case:
//! `*a` followed by `n` `?` needs `2^n` states to remember where the `a`s were. Every query
//! therefore carries a [`Budget`]; each transition computed costs `W + 1` units, and when
//! the budget runs out the answer is [`Outcome::Inconclusive`]: no claim is ever made
//! without a finished search behind it.

use std::collections::HashMap;
use std::fmt;

use indexmap::{IndexMap, IndexSet};

mod alphabet;

use super::wildcard::{Platform, Token, Wildcard, subject_units};
use alphabet::{Alphabet, Utf16, any_in, get, nfa, set};

/// Work units a query may spend by default (see [`Budget`]): roughly a million bitset words,
/// i.e. tens of milliseconds.
pub const DEFAULT_BUDGET: u64 = 1_000_000;

/// A bound on the work of one question. One unit is one 64-bit word of subset-construction
/// work; a transition in a product over `P` positions costs `⌈P / 64⌉ + 1` units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    remaining: u64,
}

impl Budget {
    pub fn new(units: u64) -> Budget {
        Budget { remaining: units }
    }

    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Up to `units` of this budget as a budget of its own; what is left of it comes back
    /// with [`Budget::refund`].
    pub fn take(&mut self, units: u64) -> Budget {
        let units = units.min(self.remaining);
        self.remaining -= units;
        Budget::new(units)
    }

    /// Returns what is left of a budget [`Budget::take`] gave.
    pub fn refund(&mut self, rest: Budget) {
        self.remaining = self.remaining.saturating_add(rest.remaining);
    }

    fn spend(&mut self, units: u64) -> Result<(), Exhausted> {
        match self.remaining.checked_sub(units) {
            Some(rest) => {
                self.remaining = rest;
                Ok(())
            }
            None => {
                self.remaining = 0;
                Err(Exhausted)
            }
        }
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(DEFAULT_BUDGET)
    }
}

/// The budget ran out before the search finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted;

/// The answer to "is this set non-empty?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<W> {
    /// The set is non-empty, and this is a member of it.
    Witness(W),
    /// The set is empty: the search covered every reachable state.
    Empty,
    /// The budget ran out first; nothing is claimed either way.
    Inconclusive,
}

impl<W> Outcome<W> {
    /// The end of a search that found no witness: empty, unless one of its steps was
    /// inconclusive (then nothing is claimed).
    pub fn none_found(inconclusive: bool) -> Outcome<W> {
        if inconclusive {
            Outcome::Inconclusive
        } else {
            Outcome::Empty
        }
    }

    pub fn witness(&self) -> Option<&W> {
        match self {
            Outcome::Witness(w) => Some(w),
            _ => None,
        }
    }

    pub fn into_witness(self) -> Option<W> {
        match self {
            Outcome::Witness(w) => Some(w),
            _ => None,
        }
    }

    /// Proved empty (not merely "no witness found").
    pub fn is_proved_empty(&self) -> bool {
        matches!(self, Outcome::Empty)
    }

    pub fn is_inconclusive(&self) -> bool {
        matches!(self, Outcome::Inconclusive)
    }

    pub fn map<V>(self, f: impl FnOnce(W) -> V) -> Outcome<V> {
        match self {
            Outcome::Witness(w) => Outcome::Witness(f(w)),
            Outcome::Empty => Outcome::Empty,
            Outcome::Inconclusive => Outcome::Inconclusive,
        }
    }
}

/// A concrete subject, as UTF-16 code units (the matcher's view of a string).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Word(Vec<u16>);

impl Word {
    pub fn from_units(units: Vec<u16>) -> Word {
        Word(units)
    }

    pub fn units(&self) -> &[u16] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The word as a string, or `None` if it holds a lone surrogate (which a JavaScript
    /// string can, and a Rust one cannot).
    pub fn to_exact_string(&self) -> Option<String> {
        String::from_utf16(&self.0).ok()
    }
}

impl From<&str> for Word {
    fn from(s: &str) -> Word {
        Word(subject_units(s))
    }
}

/// The text itself, with any lone surrogate written `\u{D83D}`.
impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in char::decode_utf16(self.0.iter().copied()) {
            match c {
                Ok(c) => write!(f, "{c}")?,
                Err(e) => write!(f, "\\u{{{:04X}}}", e.unpaired_surrogate())?,
            }
        }
        Ok(())
    }
}

/// The shortest word in `L(target) \ ⋃ L(others)`; [`Outcome::Empty`] means `target` is
/// contained in the union of `others`.
pub fn difference(
    target: &Wildcard,
    others: &[&Wildcard],
    platform: Platform,
    budget: &mut Budget,
) -> Outcome<Word> {
    if others.is_empty() {
        return Outcome::Witness(shortest_member(target));
    }
    // A literal target is one word: in the difference or not, by the matcher alone. A
    // target with one shortest word outside the others has it as the shortest answer.
    if let Some(word) = one_word(target, platform) {
        return if others.iter().any(|g| g.is_match_units(&word, platform)) {
            Outcome::Empty
        } else {
            Outcome::Witness(Word(word))
        };
    }
    if let Some(word) = only_shortest(target, platform)
        && !others.iter().any(|g| g.is_match_units(&word, platform))
    {
        return Outcome::Witness(Word(word));
    }
    let mut globs = vec![target];
    globs.extend_from_slice(others);
    let excluded: Vec<usize> = (1..globs.len()).collect();
    Product::new(&globs, platform).find(&[0], &excluded, budget)
}

/// The shortest word matched by every glob; [`Outcome::Empty`] means they are disjoint.
/// With no globs at all this is the empty word, the intersection of nothing being
/// everything.
pub fn intersection(globs: &[&Wildcard], platform: Platform, budget: &mut Budget) -> Outcome<Word> {
    let mut distinct: Vec<&Wildcard> = Vec::with_capacity(globs.len());
    for &g in globs {
        if !distinct.contains(&g) {
            distinct.push(g);
        }
    }
    match distinct.as_slice() {
        [] => Outcome::Witness(Word::default()),
        [only] => Outcome::Witness(shortest_member(only)),
        _ => {
            // A literal among them is the only word that can be in all of them.
            if let Some(word) = distinct.iter().find_map(|g| one_word(g, platform)) {
                return if distinct.iter().all(|g| g.is_match_units(&word, platform)) {
                    Outcome::Witness(Word(word))
                } else {
                    Outcome::Empty
                };
            }
            // A glob's only shortest word, matched by all: no common word is shorter, and
            // none as short is another.
            if let Some(word) = distinct
                .iter()
                .filter_map(|g| only_shortest(g, platform))
                .find(|w| distinct.iter().all(|g| g.is_match_units(w, platform)))
            {
                return Outcome::Witness(Word(word));
            }
            let required: Vec<usize> = (0..distinct.len()).collect();
            Product::new(&distinct, platform).find(&required, &[], budget)
        }
    }
}

/// The one word a glob without wildcards matches, on a platform where that is its whole
/// language (not Windows, where every case variant matches too and the search may show
/// another). Deciding it with the matcher is what the product search would find: the
/// word, or nothing; the search's first state already has one path to follow.
fn one_word(glob: &Wildcard, platform: Platform) -> Option<Vec<u16>> {
    if platform != Platform::Unix {
        return None;
    }
    glob.literal()
}

/// The shortest word of a glob without `?` (its literals, every `*` empty), when that is
/// its only shortest word and the search would show it: on Unix (not every case variant),
/// and well-formed UTF-16 (else the search first looks for a well-formed answer).
fn only_shortest(glob: &Wildcard, platform: Platform) -> Option<Vec<u16>> {
    if platform != Platform::Unix || glob.tokens.contains(&Token::One) {
        return None;
    }
    let word = shortest_member(glob).0;
    char::decode_utf16(word.iter().copied())
        .all(|c| c.is_ok())
        .then_some(word)
}

/// A shortest word of one glob, built directly: its literals, `x` for each `?`, nothing for
/// `*` or the optional tail. Every match has at least that many units, so it is shortest.
pub fn shortest_member(glob: &Wildcard) -> Word {
    Word(
        glob.tokens
            .iter()
            .filter_map(|t| match t {
                Token::Lit(u) => Some(*u),
                Token::One => Some(u16::from(b'x')),
                Token::Star => None,
            })
            .collect(),
    )
}

/// A set of permission names (or subjects) that all components treat alike: the shortest
/// representative found, and which (non-required) components accept it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Component indices, ascending, that accept every word of the cell.
    pub accepting: Vec<usize>,
    pub witness: Word,
}

/// Components to make dead once one component is universal ([`Product::forget`]).
#[derive(Debug, Clone)]
pub struct Forget {
    when: usize,
    clear: Vec<u64>,
}

/// Several glob NFAs run side by side; see the module docs.
#[derive(Debug, Clone)]
pub struct Product {
    alphabet: Alphabet,
    /// Bitset length in 64-bit words.
    words: usize,
    /// Per class: the positions whose token consumes a unit of that class.
    step: Vec<Vec<u64>>,
    /// The positions holding a `*`.
    star: Vec<u64>,
    components: Vec<Component>,
    start: Vec<u64>,
    /// Each position's token (`None` at a component's end).
    tokens: Vec<Option<Token>>,
    /// The positions holding a literal, and each one's class (`u32::MAX` elsewhere): a
    /// class no active literal reads moves a state as every such class does.
    lit: Vec<u64>,
    lit_class: Vec<u32>,
}

#[derive(Debug, Clone)]
struct Component {
    /// First and last (end) position, inclusive.
    first: usize,
    last: usize,
    /// Accepting positions: the end, and the start of an optional tail.
    accept: Vec<usize>,
    /// `*` positions whose ε-closure accepts: from there every continuation matches.
    universal: Vec<usize>,
}

impl Component {
    fn accepts(&self, bits: &[u64]) -> bool {
        self.accept.iter().any(|&p| get(bits, p))
    }

    fn is_dead(&self, bits: &[u64]) -> bool {
        !any_in(bits, self.first, self.last)
    }

    fn is_universal(&self, bits: &[u64]) -> bool {
        self.universal.iter().any(|&p| get(bits, p))
    }

    /// Every descendant state accepts exactly as this one does.
    fn is_settled(&self, bits: &[u64]) -> bool {
        self.is_dead(bits) || self.is_universal(bits)
    }
}

/// How the search makes states that behave alike one state: [`Forget`]s, and positions
/// moved to a representative with the same residual ([`Product::merges`]).
#[derive(Default, Clone, Copy)]
struct Canon<'a> {
    forget: &'a [Forget],
    /// (position, representative), sorted by position; representatives never move.
    merge: &'a [(usize, usize)],
    /// Positions always cleared: components that take no part in the answer.
    drop: &'a [u64],
}

/// What the search does with a newly discovered state.
enum Visit {
    Expand,
    Prune,
    Stop,
}

/// States are hashed once per transition: FxHash, not the default SipHash (a sixth of a
/// large search).
type States = IndexSet<Box<[u64]>, std::hash::BuildHasherDefault<super::Fx>>;

/// The BFS tree: states in discovery order, which is also the queue order.
struct Tree {
    states: States,
    /// Parent state and the class read from it; `None` for the start state.
    parents: Vec<Option<(usize, usize)>>,
    expand: Vec<bool>,
}

impl Product {
    /// The product of `globs`; component `k` is `globs[k]`.
    pub fn new(globs: &[&Wildcard], platform: Platform) -> Product {
        let nfas: Vec<(Vec<Token>, Vec<usize>)> = globs.iter().map(|g| nfa(g)).collect();
        let alphabet = Alphabet::new(nfas.iter().flat_map(|(t, _)| t.iter()), platform);
        let positions: usize = nfas.iter().map(|(t, _)| t.len() + 1).sum();
        let words = positions.div_ceil(64).max(1);
        let mut step = vec![vec![0u64; words]; alphabet.reps.len()];
        let mut star = vec![0u64; words];
        let mut start = vec![0u64; words];
        let mut components = Vec::with_capacity(nfas.len());
        let mut all_tokens = Vec::with_capacity(positions);
        let mut lit = vec![0u64; words];
        let mut lit_class = vec![u32::MAX; positions];
        let mut base = 0;
        for (tokens, accept) in &nfas {
            all_tokens.extend(tokens.iter().map(|&t| Some(t)));
            all_tokens.push(None);
            for (i, token) in tokens.iter().enumerate() {
                match token {
                    Token::Star => set(&mut star, base + i),
                    Token::One => step.iter_mut().for_each(|mask| set(mask, base + i)),
                    Token::Lit(u) => {
                        if let Some(c) = alphabet.class_of(*u)
                            && let Some(mask) = step.get_mut(c)
                        {
                            set(mask, base + i);
                            set(&mut lit, base + i);
                            lit_class[base + i] = c as u32;
                        }
                    }
                }
            }
            let universal = tokens
                .iter()
                .enumerate()
                .filter(|&(i, t)| *t == Token::Star && accept.contains(&(i + 1)))
                .map(|(i, _)| base + i)
                .collect();
            components.push(Component {
                first: base,
                last: base + tokens.len(),
                accept: accept.iter().map(|a| base + a).collect(),
                universal,
            });
            set(&mut start, base);
            base += tokens.len() + 1;
        }
        let product = Product {
            alphabet,
            words,
            step,
            star,
            components,
            start,
            tokens: all_tokens,
            lit,
            lit_class,
        };
        let mut start = product.start.clone();
        product.close(&mut start);
        Product { start, ..product }
    }

    pub fn component_count(&self) -> usize {
        self.components.len()
    }

    /// The shortest word accepted by every `required` component and by no `excluded` one.
    /// A `required` index out of range makes the set empty; an `excluded` one is ignored.
    pub fn find(
        &self,
        required: &[usize],
        excluded: &[usize],
        budget: &mut Budget,
    ) -> Outcome<Word> {
        self.find_with(required, excluded, Canon::default(), budget)
    }

    /// [`Product::find`], with the excluded components' positions that end alike merged
    /// ([`Product::merges`]): the same answer, in fewer states when the excluded patterns
    /// form families; the witness is a shortest one, not necessarily the same one.
    pub fn find_outside(
        &self,
        required: &[usize],
        excluded: &[usize],
        budget: &mut Budget,
    ) -> Outcome<Word> {
        let merge = self.merges(excluded.iter().filter(|k| !required.contains(k)));
        // The other components take no part in the answer: they are dropped.
        let mut drop = vec![0u64; self.words];
        for (k, c) in self.components.iter().enumerate() {
            if !required.contains(&k) && !excluded.contains(&k) {
                (c.first..=c.last).for_each(|p| set(&mut drop, p));
            }
        }
        self.find_with(
            required,
            excluded,
            Canon {
                forget: &[],
                merge: &merge,
                drop: &drop,
            },
            budget,
        )
    }

    fn find_with(
        &self,
        required: &[usize],
        excluded: &[usize],
        canon: Canon,
        budget: &mut Budget,
    ) -> Outcome<Word> {
        let Some(required) = required
            .iter()
            .map(|&k| self.components.get(k))
            .collect::<Option<Vec<_>>>()
        else {
            return Outcome::Empty;
        };
        let excluded: Vec<&Component> = excluded
            .iter()
            .filter_map(|&k| self.components.get(k))
            .collect();
        let visit = |_: usize, bits: &[u64], complete: bool| {
            if required.iter().any(|c| c.is_dead(bits))
                || excluded.iter().any(|c| c.is_universal(bits))
            {
                Visit::Prune
            } else if complete
                && required.iter().all(|c| c.accepts(bits))
                && !excluded.iter().any(|c| c.accepts(bits))
            {
                Visit::Stop
            } else {
                Visit::Expand
            }
        };
        for &well_formed in self.phases() {
            match self.search(well_formed, budget, canon, visit) {
                Ok((tree, Some(found))) => return Outcome::Witness(self.word(&tree, found)),
                Ok((_, None)) => {}
                Err(Exhausted) => return Outcome::Inconclusive,
            }
        }
        Outcome::Empty
    }

    /// Partitions the words accepted by every `required` component by which of the other
    /// components accept them, and returns each non-empty part with its shortest member
    /// (in discovery order, so shorter witnesses first). The partition is complete: every
    /// combination that occurs is listed.
    ///
    /// # Errors
    ///
    /// [`Exhausted`] when the budget runs out before every reachable state is seen: a
    /// partial partition could hide a cell, so none is returned.
    pub fn cells(&self, required: &[usize], budget: &mut Budget) -> Result<Vec<Cell>, Exhausted> {
        self.cells_outside(required, &[], &[], &[], budget)
    }

    /// A [`Forget`]: once component `when` is universal, the components `clear` no longer
    /// matter (the caller knows that `when` overrides them) and are made dead.
    pub fn forget(&self, when: usize, clear: &[usize]) -> Forget {
        let mut mask = vec![0u64; self.words];
        for c in clear.iter().filter_map(|&k| self.components.get(k)) {
            for p in c.first..=c.last {
                set(&mut mask, p);
            }
        }
        Forget { when, clear: mask }
    }

    /// [`Product::cells`] restricted to the words that no `excluded` component accepts:
    /// the partition of `L(required) \ ⋃ L(excluded)` by which of the remaining components
    /// accept. A state where an excluded component is universal is pruned (every
    /// continuation is excluded), which keeps the search small when a common catch-all
    /// settles most words.
    ///
    /// With a non-empty `touching`, only words that some `touching` component accepts are
    /// partitioned: a state where every one of them is dead is pruned. `forget` lets the
    /// caller drop components that a universal one overrides ([`Product::forget`]): the
    /// cells then say nothing about the forgotten components once that happened, and the
    /// states that differed only in them are one (which keeps families such as `*/a/*`,
    /// `*/b/*`, … from remembering every subset already seen).
    ///
    /// # Errors
    ///
    /// [`Exhausted`] as for [`Product::cells`].
    pub fn cells_outside(
        &self,
        required: &[usize],
        excluded: &[usize],
        touching: &[usize],
        forget: &[Forget],
        budget: &mut Budget,
    ) -> Result<Vec<Cell>, Exhausted> {
        let Some(req) = required
            .iter()
            .map(|&k| self.components.get(k))
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(Vec::new());
        };
        let others: Vec<(usize, &Component)> = self
            .components
            .iter()
            .enumerate()
            .filter(|(k, _)| !required.contains(k) && !excluded.contains(k))
            .collect();
        let out: Vec<&Component> = excluded
            .iter()
            .filter(|k| !required.contains(k))
            .filter_map(|&k| self.components.get(k))
            .collect();
        let touch: Vec<&Component> = touching
            .iter()
            .filter_map(|&k| self.components.get(k))
            .collect();
        let merge = self.merges(excluded.iter().filter(|k| !required.contains(k)));
        let mut found: IndexMap<Vec<usize>, Word> = IndexMap::new();
        for &well_formed in self.phases() {
            let mut here: IndexMap<Vec<usize>, usize> = IndexMap::new();
            let canon = Canon {
                forget,
                merge: &merge,
                drop: &[],
            };
            let (tree, _) = self.search(well_formed, budget, canon, |index, bits, complete| {
                if req.iter().any(|c| c.is_dead(bits))
                    || out.iter().any(|c| c.is_universal(bits))
                    || (!touch.is_empty() && touch.iter().all(|c| c.is_dead(bits)))
                {
                    return Visit::Prune;
                }
                if !(complete
                    && req.iter().all(|c| c.accepts(bits))
                    && !out.iter().any(|c| c.accepts(bits))
                    && (touch.is_empty() || touch.iter().any(|c| c.accepts(bits))))
                {
                    return Visit::Expand;
                }
                let accepting: Vec<usize> = others
                    .iter()
                    .filter(|(_, c)| c.accepts(bits))
                    .map(|(k, _)| *k)
                    .collect();
                here.entry(accepting).or_insert(index);
                // Descendants can only repeat this cell once every other component is settled.
                if others.iter().all(|(_, c)| c.is_settled(bits))
                    && out.iter().all(|c| c.is_settled(bits))
                {
                    Visit::Prune
                } else {
                    Visit::Expand
                }
            })?;
            for (accepting, index) in here {
                if !found.contains_key(&accepting) {
                    let witness = self.word(&tree, index);
                    found.insert(accepting, witness);
                }
            }
        }
        Ok(found
            .into_iter()
            .map(|(accepting, witness)| Cell { accepting, witness })
            .collect())
    }

    /// For components whose identity does not matter, only their union (the excluded ones
    /// of [`Product::cells_outside`]): each of their positions whose residual (the tokens
    /// from there to the end, and which of those positions accept) equals that of an
    /// earlier one, with that earlier representative. A state with a position active is
    /// the same, for the union, as the state with the representative active instead: one
    /// family of patterns that end alike (`docs/dN/*.md` once inside `*.md`, `*/vendorN/*`
    /// after the `N`) is then one state, not one per member.
    fn merges<'a>(&self, comps: impl Iterator<Item = &'a usize>) -> Vec<(usize, usize)> {
        let mut reps: HashMap<(&[Option<Token>], Vec<usize>), usize> = HashMap::new();
        let mut out = Vec::new();
        for c in comps.filter_map(|&k| self.components.get(k)) {
            for p in c.first..=c.last {
                let Some(tail) = self.tokens.get(p..=c.last) else {
                    continue;
                };
                let accepts = c
                    .accept
                    .iter()
                    .filter(|&&a| a >= p)
                    .map(|&a| a - p)
                    .collect();
                let rep = *reps.entry((tail, accepts)).or_insert(p);
                if rep != p {
                    out.push((p, rep));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Well-formed UTF-16 first when surrogates are in play, then unrestricted.
    fn phases(&self) -> &'static [bool] {
        if self.alphabet.has_surrogates() {
            &[true, false]
        } else {
            &[false]
        }
    }

    /// Breadth-first subset construction. `visit(index, bits, complete)` sees each new
    /// state once, where `complete` is false only for a well-formed search stopped inside a
    /// surrogate pair. Returns the tree and the state where `visit` said stop, if any.
    fn search(
        &self,
        well_formed: bool,
        budget: &mut Budget,
        Canon {
            forget,
            merge,
            drop,
        }: Canon,
        mut visit: impl FnMut(usize, &[u64], bool) -> Visit,
    ) -> Result<(Tree, Option<usize>), Exhausted> {
        let words = self.words;
        let mut tree = Tree {
            states: States::default(),
            parents: Vec::new(),
            expand: Vec::new(),
        };
        // Which forgets fire is read before any is applied: clearing only ever removes
        // components a universal one overrides, so the order does not matter.
        let mut trigger = vec![0u64; words];
        let mut by_position: Vec<(usize, usize)> = Vec::new();
        for (f, forget) in forget.iter().enumerate() {
            for &p in self
                .components
                .get(forget.when)
                .map_or(&[][..], |c| &c.universal[..])
            {
                set(&mut trigger, p);
                by_position.push((p, f));
            }
        }
        by_position.sort_unstable();
        let mut moved = vec![0u64; words];
        for &(p, _) in merge {
            set(&mut moved, p);
        }
        let mut clear = vec![0u64; words];
        let mut canon = |bits: &mut [u64]| {
            for (b, d) in bits.iter_mut().zip(drop) {
                *b &= !d;
            }
            for w in 0..words {
                let mut hit = bits[w] & moved[w];
                if hit == 0 {
                    continue;
                }
                bits[w] &= !hit;
                while hit != 0 {
                    let p = w * 64 + hit.trailing_zeros() as usize;
                    hit &= hit - 1;
                    if let Ok(i) = merge.binary_search_by_key(&p, |&(p, _)| p) {
                        set(bits, merge[i].1);
                    }
                }
            }
            let mut any = false;
            for (w, (&b, &t)) in bits.iter().zip(&trigger).enumerate() {
                let mut hit = b & t;
                while hit != 0 {
                    let p = w * 64 + hit.trailing_zeros() as usize;
                    hit &= hit - 1;
                    let from = by_position.partition_point(|&(q, _)| q < p);
                    for &(_, f) in by_position[from..].iter().take_while(|&&(q, _)| q == p) {
                        if let Some(forget) = forget.get(f) {
                            if !any {
                                clear.iter_mut().for_each(|c| *c = 0);
                                any = true;
                            }
                            for (c, m) in clear.iter_mut().zip(&forget.clear) {
                                *c |= m;
                            }
                        }
                    }
                }
            }
            if any {
                for (b, m) in bits.iter_mut().zip(&clear) {
                    *b &= !m;
                }
            }
        };
        let mut start = self.start.clone();
        canon(&mut start);
        let first = start.clone();
        if well_formed {
            start.push(Utf16::Boundary as u64);
        }
        tree.states.insert(start.into_boxed_slice());
        tree.parents.push(None);
        match visit(0, &first, true) {
            Visit::Stop => return Ok((tree, Some(0))),
            v => tree.expand.push(matches!(v, Visit::Expand)),
        }
        let mut current = Vec::with_capacity(words + 1);
        let mut next = Vec::with_capacity(words + 1);
        // Per state, the classes some active literal reads (`read[c] == stamp`); the
        // others all lead to one state, computed once (and charged each time, so the
        // budget runs out exactly where it would).
        let mut read = vec![0u32; self.alphabet.reps.len()];
        let mut stamp = 0u32;
        let mut index = 0;
        while let Some(state) = tree.states.get_index(index) {
            let from = index;
            index += 1;
            if !tree.expand.get(from).copied().unwrap_or(false) {
                continue;
            }
            current.clear();
            current.extend_from_slice(state);
            stamp = stamp.wrapping_add(1);
            if stamp == 0 {
                read.iter_mut().for_each(|r| *r = 0);
                stamp = 1;
            }
            for (w, (&b, &l)) in current.iter().zip(&self.lit).enumerate() {
                let mut hit = b & l;
                while hit != 0 {
                    let p = w * 64 + hit.trailing_zeros() as usize;
                    hit &= hit - 1;
                    if let Some(r) = self
                        .lit_class
                        .get(p)
                        .and_then(|&c| read.get_mut(c as usize))
                    {
                        *r = stamp;
                    }
                }
            }
            let mut unread_done = false;
            for &class in &self.alphabet.order {
                let tracker = if well_formed {
                    let Some(now) = current.get(words).and_then(|&t| Utf16::from_word(t)) else {
                        continue;
                    };
                    match now.next(self.alphabet.kind(class)) {
                        Some(t) => Some(t),
                        None => continue,
                    }
                } else {
                    None
                };
                budget.spend(words as u64 + 1)?;
                if tracker.is_none() && read.get(class) != Some(&stamp) {
                    if unread_done {
                        continue;
                    }
                    unread_done = true;
                }
                self.transition(&current[..words], class, &mut next);
                canon(&mut next[..words]);
                if let Some(t) = tracker {
                    next.push(t as u64);
                }
                if tree.states.contains(next.as_slice()) {
                    continue;
                }
                let (new, _) = tree.states.insert_full(next.as_slice().into());
                tree.parents.push(Some((from, class)));
                let complete = tracker.is_none_or(|t| t == Utf16::Boundary);
                match visit(new, &next[..words], complete) {
                    Visit::Stop => return Ok((tree, Some(new))),
                    v => tree.expand.push(matches!(v, Visit::Expand)),
                }
            }
        }
        Ok((tree, None))
    }

    /// The word spelled by the BFS tree path to `index`.
    fn word(&self, tree: &Tree, mut index: usize) -> Word {
        let mut units = Vec::new();
        while let Some(Some((parent, class))) = tree.parents.get(index) {
            if let Some(&rep) = self.alphabet.reps.get(*class) {
                units.push(rep);
            }
            index = *parent;
        }
        units.reverse();
        Word(units)
    }

    /// Reads one unit of `class`: literals and `?` advance, `*` stays, then ε-closure.
    fn transition(&self, from: &[u64], class: usize, out: &mut Vec<u64>) {
        out.clear();
        let Some(mask) = self.step.get(class) else {
            out.resize(self.words, 0);
            return;
        };
        let mut carry = 0;
        for ((&f, &m), &s) in from.iter().zip(mask).zip(&self.star) {
            let moved = f & m;
            out.push((moved << 1) | carry | (f & s));
            carry = moved >> 63;
        }
        self.close(out);
    }

    /// ε-closure: a `*` may match nothing. Runs of `*` are collapsed, so the position after
    /// a `*` is never a `*` and one pass suffices.
    fn close(&self, bits: &mut [u64]) {
        let mut carry = 0;
        for (b, &s) in bits.iter_mut().zip(&self.star) {
            let stars = *b & s;
            *b |= (stars << 1) | carry;
            carry = stars >> 63;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
