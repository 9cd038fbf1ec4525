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

use super::wildcard::{Platform, Token, Wildcard, fold, subject_units};

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
            let required: Vec<usize> = (0..distinct.len()).collect();
            Product::new(&distinct, platform).find(&required, &[], budget)
        }
    }
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

/// A glob's NFA positions: tokens with `*` runs collapsed and the optional tail spelled out,
/// and the accepting positions.
fn nfa(glob: &Wildcard) -> (Vec<Token>, Vec<usize>) {
    let mut tokens: Vec<Token> = Vec::with_capacity(glob.tokens.len() + 2);
    for &t in &glob.tokens {
        if !(t == Token::Star && tokens.last() == Some(&Token::Star)) {
            tokens.push(t);
        }
    }
    let mut accept = Vec::with_capacity(2);
    if glob.optional_tail {
        accept.push(tokens.len());
        tokens.push(Token::Lit(u16::from(b' ')));
        tokens.push(Token::Star);
    }
    accept.push(tokens.len());
    (tokens, accept)
}

/// The classes of one query: one per mentioned literal (by case fold on Windows), plus
/// "other" when some unit is left over.
#[derive(Debug, Clone)]
struct Alphabet {
    platform: Platform,
    /// Sorted keys of the literal classes; class `k < keys.len()` is `keys[k]`.
    keys: Vec<u16>,
    /// A concrete unit for each class; `reps[keys.len()]`, if present, stands for "other".
    reps: Vec<u16>,
    /// The order in which BFS tries the classes (see [`Alphabet::new`]).
    order: Vec<usize>,
}

impl Alphabet {
    fn new<'a>(tokens: impl Iterator<Item = &'a Token>, platform: Platform) -> Alphabet {
        // Smallest literal per key, so a Windows witness reuses a spelling from the patterns.
        let mut literals: Vec<(u16, u16)> = tokens
            .filter_map(|t| match t {
                Token::Lit(u) => Some((key(*u, platform), *u)),
                _ => None,
            })
            .collect();
        literals.sort_unstable();
        literals.dedup_by_key(|(k, _)| *k);
        let keys: Vec<u16> = literals.iter().map(|(k, _)| *k).collect();
        let mut reps: Vec<u16> = literals.iter().map(|(_, u)| *u).collect();
        if let Some(other) = other_rep(&keys, platform) {
            reps.push(other);
        }
        // Literals first, then other, then surrogates: at equal length the witness reuses
        // the patterns' characters, and a lone surrogate is the last resort.
        let mut order: Vec<usize> = (0..reps.len()).collect();
        order.sort_by_key(|&c| {
            let surrogate = reps.get(c).is_some_and(|&u| is_surrogate(u));
            (surrogate, c >= keys.len(), c)
        });
        Alphabet {
            platform,
            keys,
            reps,
            order,
        }
    }

    fn class_of(&self, unit: u16) -> Option<usize> {
        self.keys.binary_search(&key(unit, self.platform)).ok()
    }

    fn kind(&self, class: usize) -> UnitKind {
        match self.reps.get(class) {
            Some(0xD800..=0xDBFF) => UnitKind::High,
            Some(0xDC00..=0xDFFF) => UnitKind::Low,
            _ => UnitKind::Plain,
        }
    }

    fn has_surrogates(&self) -> bool {
        self.reps.iter().any(|&u| is_surrogate(u))
    }
}

fn key(unit: u16, platform: Platform) -> u16 {
    match platform {
        Platform::Unix => unit,
        Platform::Windows => fold(unit),
    }
}

fn is_surrogate(unit: u16) -> bool {
    (0xD800..=0xDFFF).contains(&unit)
}

/// A unit that no literal matches: `x`, else a letter or digit, else any printable unit,
/// else anything. Never `\`, which a subject can't contain (it reads as `/`).
fn other_rep(keys: &[u16], platform: Platform) -> Option<u16> {
    let preferred = "xabcdefghijklmnopqrstuvwyz0123456789".encode_utf16();
    let printable = (0x21..=0xFFFFu16).filter(|&u| !is_surrogate(u));
    let rest = (0..=0x20u16).chain(0xD800..=0xDFFF);
    preferred
        .chain(printable)
        .chain(rest)
        .find(|&u| u != u16::from(b'\\') && keys.binary_search(&key(u, platform)).is_err())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnitKind {
    Plain,
    High,
    Low,
}

/// Well-formedness tracker for the well-formed search phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Utf16 {
    /// Between code points.
    Boundary = 0,
    /// After a high surrogate, which needs a low one next.
    AfterHigh = 1,
}

impl Utf16 {
    fn from_word(w: u64) -> Option<Utf16> {
        match w {
            0 => Some(Utf16::Boundary),
            1 => Some(Utf16::AfterHigh),
            _ => None,
        }
    }

    fn next(self, kind: UnitKind) -> Option<Utf16> {
        match (self, kind) {
            (Utf16::Boundary, UnitKind::Plain) => Some(Utf16::Boundary),
            (Utf16::Boundary, UnitKind::High) => Some(Utf16::AfterHigh),
            (Utf16::AfterHigh, UnitKind::Low) => Some(Utf16::Boundary),
            _ => None,
        }
    }
}

fn set(bits: &mut [u64], i: usize) {
    if let Some(w) = bits.get_mut(i / 64) {
        *w |= 1 << (i % 64);
    }
}

fn get(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Is any bit in `first..=last` set?
fn any_in(bits: &[u64], first: usize, last: usize) -> bool {
    let (fw, lw) = (first / 64, last / 64);
    (fw..=lw).any(|w| {
        let lo = if w == fw { first % 64 } else { 0 };
        let hi = if w == lw { last % 64 } else { 63 };
        let mask = (u64::MAX << lo) & (u64::MAX >> (63 - hi));
        bits.get(w).is_some_and(|b| b & mask != 0)
    })
}

#[cfg(test)]
pub(crate) mod tests {
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
            for cell in &cells {
                let s = cell.witness.to_exact_string().unwrap();
                prop_assert_eq!(signature(&s), Some(cell.accepting.clone()), "witness {:?}", s);
            }
            for s in all_strings(&SUBJECT_UNITS, 5) {
                if let Some(sig) = signature(&s) {
                    prop_assert!(cells.iter().any(|c| c.accepting == sig), "{:?} has missing cell {:?}", s, sig);
                }
            }
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
            for cell in &cells {
                let s = cell.witness.to_exact_string().unwrap();
                prop_assert_eq!(signature(&s), Some(cell.accepting.clone()), "witness {:?}", s);
            }
            for s in all_strings(&SUBJECT_UNITS, 5) {
                if let Some(sig) = signature(&s) {
                    prop_assert!(cells.iter().any(|c| c.accepting == sig), "{:?} has missing cell {:?}", s, sig);
                }
            }
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
}
