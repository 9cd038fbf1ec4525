//! The compiled evaluator: every pattern of one ruleset (one agent, one permission) in a
//! single lazily built DFA over UTF-16 code units, answering "which rule is the last to
//! match?" (OpenCode's `findLast`) in one left-to-right pass, or "which rules match?" for
//! `explain`'s list of overridden rules. Its answers are exactly those of
//! [`Wildcard::is_match`](super::Wildcard::is_match) applied rule by rule
//! (`tests/compiled.rs` checks that with property tests over random rulesets and inputs,
//! astral characters and lone `?`s included).
//!
//! # Why our own DFA (the measurement)
//!
//! `?` is one UTF-16 code unit and `*` is any run of them, newlines included. A regex over
//! UTF-8 cannot say "one UTF-16 unit" for astral characters, so the regex candidate ran
//! `regex::bytes::RegexSet` (regex-automata's meta engine: lazy DFA, all-match) over a
//! CESU-8 encoding of the subject (each UTF-16 unit as its own UTF-8 sequence: identical to
//! UTF-8 for BMP text, so no copy for ordinary paths), with `?` as "one encoded unit" and
//! literal `/` as `[/\\]`. `benches/decisions.rs --compare` measures the candidates on the
//! decision benchmark of `scripts/bench.sh` (a 1,000-rule config, 1,015 rules in the
//! agent, 601 for `edit`; 1,000,000 distinct generated paths; release build, 2 cores):
//!
//! | engine | ns per decision |
//! |---|---|
//! | rule by rule (`agents::evaluate`), a sample | 224,000 |
//! | `regex::bytes::RegexSet` over CESU-8, all matches, a sample | 1,700–2,200 |
//! | this DFA, last match (`map`, benchmark) | 54–73 |
//! | this DFA, all matches (`explain`) | 75 |
//!
//! and on 200,000 paths against 100, 1,000 and 10,000 generated rules this DFA takes
//! 52, 80 and 105 ns per decision (cold cache; 58 ns warm at 10,000), without a cache
//! clear. The regex engine must report every pattern that matches, so it cannot stop
//! early, and with a thousand patterns its lazy DFA state sets are large; it also knows
//! nothing of the one question asked here. An earlier version of this automaton, without
//! the implicit lead patterns below, took 112 ns at 1,000 rules and 11,500 ns at 10,000
//! (its states held thousands of positions, and the cache thrashed). What makes the
//! answer cheap are facts of the wildcard language:
//!
//! * **Universal positions.** A `*` followed by the end of its pattern accepts every
//!   continuation. Once rule `r` sits there, every rule before `r` is irrelevant to the
//!   last match, so the state drops them ("last" mode). A state left with nothing but one
//!   universal position is *fixed*: the scan stops there. With OpenCode's defaults (`*`
//!   allow first) and a config of literal-prefixed rules, most inputs are decided after a
//!   few units.
//! * **Lead patterns are implicit.** A pattern starting with `*` (`*.env`, `*/vendor/*`)
//!   is alive in every state, so a state does not list its positions: it keeps a *floor*
//!   (the lowest rule not pruned) and a node of an Aho-Corasick trie over the literal
//!   segments that follow the lead `*`s. Only when a segment completes does the position
//!   after it become explicit. States stay small however many such rules there are.
//! * **Tiny alphabets.** A set of patterns only tells apart the code units it mentions,
//!   so the transition table is indexed by classes (the mentioned units plus one for
//!   everything else); `\` shares `/`'s class (OpenCode rewrites `\` to `/` first) and on
//!   [`Platform::Windows`] each class is a case-fold class ([`fold`]), so the table stays
//!   small and ASCII needs one array look-up per byte.
//!
//! # Construction
//!
//! Each pattern is a Thompson NFA with one position per token (runs of `*` collapsed,
//! `**` ≡ `*`; the optional ` *` tail becomes the tokens ` `, `*` with the position before
//! them accepting too). Positions are numbered rule by rule, so the explicit positions of
//! a state — sorted, ε-closed — are ordered by rule, and "drop every rule below `r`" is a
//! prefix cut. A state's key is `[floor, trie node, explicit positions…]`. States are
//! created on demand and interned; transitions are cached in a table whose entries are
//! row offsets with a "fixed" flag bit, so the inner loop is one load and one test per
//! unit. The cache has a byte budget: when it is full it is cleared and the search goes on
//! from the current state (like regex-automata's lazy DFA), so memory stays bounded on any
//! input and answers never change, only speed.

use super::wildcard::{Platform, fold};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// What a search computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Only the last matching pattern (`findLast`); states are pruned.
    Last,
    /// Every matching pattern, in order (for `explain`'s overridden rules).
    All,
}

/// Default cache budget of one automaton.
pub const DEFAULT_CACHE_BYTES: usize = 16 << 20;

const NONE: u32 = u32::MAX;
/// A transition not computed yet.
const UNKNOWN: u32 = u32::MAX;
/// Flag of a state handle: the state is fixed, no continuation changes the answer, so
/// the scan stops.
const FIXED: u32 = 1 << 31;
/// The cache never holds more than this, so a handle (row offset | flag) fits in a `u32`.
const MAX_CACHE_BYTES: usize = 1 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// A literal code unit, by class.
    Lit(u32),
    /// `?`
    Any,
    /// `*` (runs collapsed)
    Star,
    /// End of the pattern.
    End,
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<super::Fx>>;

/// One DFA state.
#[derive(Debug, Clone)]
struct State {
    set: Arc<[u32]>,
    /// The last pattern accepting here, or `NONE`.
    last: u32,
    /// `All` mode: the accepting patterns, a range of `accept_pool`.
    accept: (u32, u32),
}

/// Counters for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// DFA states created (over all cache generations).
    pub states_built: u64,
    /// Times the cache was full and cleared.
    pub clears: u64,
}

/// Several wildcard patterns compiled into one lazy DFA.
#[derive(Debug, Clone)]
pub struct MultiGlob {
    want: Want,
    platform: Platform,
    patterns: usize,
    // Alphabet: class of each ASCII unit, and of the non-ASCII units the patterns mention
    // (sorted by folded unit); class 0 is every other unit.
    ascii: [u32; 128],
    wide: Vec<(u16, u32)>,
    classes: usize,
    // NFA, one entry per position.
    tok: Vec<Tok>,
    owner: Vec<u32>,
    accepting: Vec<bool>,
    universal: Vec<bool>,
    first: Vec<u32>,
    // Patterns that start with `*` ("lead" patterns): while not pruned, their first two
    // positions are in every state, so states leave them implicit (see `normalize`).
    /// The lead patterns, ascending.
    lead: Vec<u32>,
    /// Lead patterns whose `*` is universal (`*`, `* *`), ascending.
    lead_universal: Vec<u32>,
    /// Positions after `*?` of lead patterns (reached on any unit), ascending.
    lead_any: Vec<u32>,
    /// The literal run after each other lead `*` (its "segment"), in an Aho-Corasick trie.
    ac: Ac,
    // DFA cache.
    states: Vec<State>,
    trans: Vec<u32>,
    index: FxMap<Arc<[u32]>, u32>,
    accept_pool: Vec<u32>,
    start: u32,
    used: usize,
    budget: usize,
    scratch: Vec<u32>,
    stats: Stats,
}

impl MultiGlob {
    /// Compile `patterns` (OpenCode wildcard syntax, spec §1).
    pub fn new<S: AsRef<str>>(patterns: &[S], platform: Platform, want: Want) -> MultiGlob {
        MultiGlob::with_cache_bytes(patterns, platform, want, DEFAULT_CACHE_BYTES)
    }

    /// As [`MultiGlob::new`], with a cache budget in bytes (tests use tiny ones to exercise
    /// clearing).
    pub fn with_cache_bytes<S: AsRef<str>>(
        patterns: &[S],
        platform: Platform,
        want: Want,
        budget: usize,
    ) -> MultiGlob {
        let budget = budget.min(MAX_CACHE_BYTES);
        let key = |u: u16| -> u16 {
            let u = if u == b'\\' as u16 { b'/' as u16 } else { u };
            match platform {
                Platform::Unix => u,
                Platform::Windows => fold(u),
            }
        };
        // Tokens of every pattern, literals as (folded) units for now.
        enum Raw {
            Lit(u16),
            Any,
            Star,
        }
        let mut parsed: Vec<(Vec<Raw>, bool)> = Vec::with_capacity(patterns.len());
        let mut units: Vec<u16> = Vec::new();
        for p in patterns {
            let mut raw: Vec<Raw> = p
                .as_ref()
                .encode_utf16()
                .map(|u| match u {
                    0x2a => Raw::Star,
                    0x3f => Raw::Any,
                    u => Raw::Lit(key(u)),
                })
                .collect();
            // The tail rule looks at the pattern as written: ` *` at the very end.
            let n = raw.len();
            let tail =
                n >= 2 && matches!(raw[n - 1], Raw::Star) && matches!(raw[n - 2], Raw::Lit(0x20));
            if tail {
                raw.truncate(n - 2);
            }
            let mut body: Vec<Raw> = Vec::with_capacity(raw.len());
            for t in raw {
                if matches!(t, Raw::Star) && matches!(body.last(), Some(Raw::Star)) {
                    continue;
                }
                if let Raw::Lit(u) = t {
                    units.push(u);
                }
                body.push(t);
            }
            if tail {
                units.push(0x20);
            }
            parsed.push((body, tail));
        }
        units.sort_unstable();
        units.dedup();
        // Class 0: units no pattern mentions.
        let class_of_unit = |u: u16| -> u32 {
            match units.binary_search(&u) {
                Ok(i) => i as u32 + 1,
                Err(_) => 0,
            }
        };
        let mut ascii = [0u32; 128];
        for (u, c) in ascii.iter_mut().enumerate() {
            *c = class_of_unit(key(u as u16));
        }
        let wide: Vec<(u16, u32)> = units
            .iter()
            .filter(|u| **u >= 0x80)
            .map(|u| (*u, class_of_unit(*u)))
            .collect();
        let classes = units.len() + 1;

        let mut tok = Vec::new();
        let mut accept_end = Vec::new();
        let mut owner = Vec::new();
        let mut first = Vec::with_capacity(parsed.len());
        for (rule, (body, tail)) in parsed.iter().enumerate() {
            first.push(tok.len() as u32);
            for t in body {
                tok.push(match t {
                    Raw::Lit(u) => Tok::Lit(class_of_unit(*u)),
                    Raw::Any => Tok::Any,
                    Raw::Star => Tok::Star,
                });
                accept_end.push(false);
                owner.push(rule as u32);
            }
            if *tail {
                // The position after the body accepts; then ` `, `*`, end.
                tok.push(Tok::Lit(class_of_unit(0x20)));
                accept_end.push(true);
                owner.push(rule as u32);
                tok.push(Tok::Star);
                accept_end.push(false);
                owner.push(rule as u32);
            }
            tok.push(Tok::End);
            accept_end.push(true);
            owner.push(rule as u32);
        }
        let n = tok.len();
        let mut accepting = vec![false; n];
        let mut universal = vec![false; n];
        for p in 0..n {
            let star_to_end = tok[p] == Tok::Star && p + 1 < n && accept_end[p + 1];
            accepting[p] = accept_end[p] || star_to_end;
            universal[p] = star_to_end;
        }
        let mut lead = Vec::new();
        let mut lead_universal = Vec::new();
        let mut lead_any = Vec::new();
        let mut segments: Vec<(Vec<u32>, u32)> = Vec::new();
        for (r, &f) in first.iter().enumerate() {
            let f = f as usize;
            if tok[f] != Tok::Star {
                continue;
            }
            lead.push(r as u32);
            if universal[f] {
                // Matches everything: accepting always, its positions never matter.
                lead_universal.push(r as u32);
                continue;
            }
            match tok[f + 1] {
                Tok::Any => lead_any.push(f as u32 + 2),
                Tok::Lit(_) => {
                    // The literals up to the next `?`, `*`, end or accepting position.
                    let mut seg = Vec::new();
                    let mut q = f + 1;
                    while let Tok::Lit(c) = tok[q] {
                        if accept_end[q] {
                            break;
                        }
                        seg.push(c);
                        q += 1;
                    }
                    segments.push((seg, q as u32));
                }
                _ => {}
            }
        }
        let ac = Ac::new(&segments);
        let mut g = MultiGlob {
            want,
            platform,
            patterns: patterns.len(),
            ascii,
            wide,
            classes,
            tok,
            owner,
            accepting,
            universal,
            first,
            lead,
            lead_universal,
            lead_any,
            ac,
            states: Vec::new(),
            trans: Vec::new(),
            index: FxMap::default(),
            accept_pool: Vec::new(),
            start: 0,
            used: 0,
            budget,
            scratch: Vec::new(),
            stats: Stats::default(),
        };
        g.reset();
        g
    }

    pub fn len(&self) -> usize {
        self.patterns
    }

    pub fn is_empty(&self) -> bool {
        self.patterns == 0
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Empty the cache and rebuild the dead and start states.
    fn reset(&mut self) {
        self.states.clear();
        self.trans.clear();
        self.index.clear();
        self.accept_pool.clear();
        self.used = 0;
        let mut set = Vec::new();
        for r in 0..self.first.len() {
            let p = self.first[r];
            if self.tok[p as usize] != Tok::Star {
                self.add(&mut set, p);
            }
        }
        set.sort_unstable();
        set.dedup();
        let key = self.normalize(0, 0, &set);
        self.start = self.intern(key);
    }

    fn add(&self, set: &mut Vec<u32>, p: u32) {
        set.push(p);
        if self.tok[p as usize] == Tok::Star {
            set.push(p + 1);
        }
    }

    /// The canonical key of a state: `[floor, trie node, explicit positions…]`.
    ///
    /// The state's full position set is the explicit positions plus, for every lead
    /// pattern at or above `floor`, its `*` and the position after it (always present: the
    /// `*` loops on everything), and the positions inside the lead patterns' segments
    /// that the trie node stands for (every suffix of the input read so far that is a
    /// prefix of a segment; a completed segment puts the position after it among the
    /// explicit ones). Rules below `floor` are pruned: in `Last` mode, once a
    /// rule sits on a universal position it matches whatever follows, so no earlier rule
    /// can be the last match; `floor` rises to it. Each rule with an explicit universal
    /// position keeps only that one. In `All` mode the floor stays 0.
    fn normalize(&self, floor: u32, node: u32, set: &[u32]) -> Vec<u32> {
        let mut floor = floor;
        if self.want == Want::Last {
            if let Some(&u) = self.lead_universal.last() {
                floor = floor.max(u);
            }
            if let Some(&p) = set.iter().rev().find(|&&p| self.universal[p as usize]) {
                floor = floor.max(self.owner[p as usize]);
            }
        }
        let mut out = Vec::with_capacity(set.len() + 2);
        out.push(floor);
        out.push(node);
        let mut i = 0;
        while i < set.len() {
            let rule = self.owner[set[i] as usize];
            let mut j = i;
            let mut uni = None;
            while j < set.len() && self.owner[set[j] as usize] == rule {
                if self.universal[set[j] as usize] {
                    uni = Some(set[j]);
                }
                j += 1;
            }
            if rule >= floor {
                match uni {
                    Some(u) => out.push(u),
                    None => out.extend_from_slice(&set[i..j]),
                }
            }
            i = j;
        }
        out
    }

    /// Lead patterns at or above `floor`.
    fn leads_from(&self, floor: u32) -> &[u32] {
        let k = self.lead.partition_point(|&r| r < floor);
        &self.lead[k..]
    }

    /// The state of `set`, created if new, as a handle: the offset of its row in the
    /// transition table, with [`FIXED`] set when the state is fixed.
    fn intern(&mut self, key: Vec<u32>) -> u32 {
        if let Some(&h) = self.index.get(key.as_slice()) {
            return h;
        }
        let row = (self.states.len() * self.classes) as u32;
        let floor = key[0];
        let explicit = &key[2..];
        // Accepting rules: explicit accepting positions, and the universal lead patterns
        // at or above the floor (their `*` accepts).
        let k = self.lead_universal.partition_point(|&r| r < floor);
        let implicit = &self.lead_universal[k..];
        let mut rules: Vec<u32> = explicit
            .iter()
            .filter(|&&p| self.accepting[p as usize])
            .map(|&p| self.owner[p as usize])
            .collect();
        rules.extend_from_slice(implicit);
        rules.sort_unstable();
        rules.dedup();
        let last = rules.last().copied().unwrap_or(NONE);
        let start = self.accept_pool.len() as u32;
        if self.want == Want::All {
            self.accept_pool.extend_from_slice(&rules);
        }
        let end = self.accept_pool.len() as u32;
        let fixed = match self.want {
            // Nothing but rule `floor` is alive, and it matches whatever follows (or
            // nothing at all is alive).
            Want::Last => {
                let leads = self.leads_from(floor);
                let only_floor = explicit.iter().all(|&p| self.owner[p as usize] == floor)
                    && leads.iter().all(|&r| r == floor);
                let nothing = explicit.is_empty() && leads.is_empty();
                let floor_universal = explicit.iter().any(|&p| self.universal[p as usize])
                    || implicit.first() == Some(&floor);
                only_floor && (nothing || floor_universal)
            }
            // Every position universal: implicit ones never all are (the one after a
            // lead `*` is not).
            Want::All => {
                self.lead.is_empty() && explicit.iter().all(|&p| self.universal[p as usize])
            }
        };
        let set: Arc<[u32]> = key.into();
        self.used += set.len() * 8 + self.classes * 4 + (end - start) as usize * 4 + 96;
        self.states.push(State {
            set: set.clone(),
            last,
            accept: (start, end),
        });
        self.trans
            .extend(std::iter::repeat_n(UNKNOWN, self.classes));
        let h = if fixed { row | FIXED } else { row };
        self.index.insert(set, h);
        self.stats.states_built += 1;
        h
    }

    #[inline]
    fn state(&self, h: u32) -> &State {
        &self.states[(h & !FIXED) as usize / self.classes]
    }

    /// The transition from handle `h` on `class`, computing (and caching) it if needed.
    /// May clear the cache: the returned handle is valid, handles held from before are not.
    #[inline]
    fn next(&mut self, h: u32, class: u32) -> u32 {
        let t = self.trans[(h & !FIXED) as usize + class as usize];
        if t != UNKNOWN {
            return t;
        }
        self.compute(h, class)
    }

    #[cold]
    #[inline(never)]
    fn compute(&mut self, mut state: u32, class: u32) -> u32 {
        let key = self.state(state).set.clone();
        let (floor, node) = (key[0], key[1]);
        let mut next = std::mem::take(&mut self.scratch);
        next.clear();
        for &p in key[2..].iter() {
            match self.tok[p as usize] {
                Tok::Lit(c) if c == class => self.add(&mut next, p + 1),
                Tok::Any => self.add(&mut next, p + 1),
                Tok::Star => self.add(&mut next, p),
                _ => {}
            }
        }
        // The implicit positions of the lead patterns at or above the floor: `*?`, and
        // the segments this unit completes.
        let from = self.first.get(floor as usize).copied().unwrap_or(0);
        let node = self.ac.next(node, class);
        let k = self.lead_any.partition_point(|&p| p < from);
        let mut reached: Vec<u32> = self.lead_any[k..].to_vec();
        self.ac.outputs(node, from, &mut reached);
        for p in reached {
            next.push(p);
            if self.tok[p as usize] == Tok::Star {
                next.push(p + 1);
            }
        }
        next.sort_unstable();
        next.dedup();
        let normalized = self.normalize(floor, node, &next);
        self.scratch = next;
        if self.used > self.budget {
            // Full: start a new generation, carrying the current state over.
            self.stats.clears += 1;
            self.reset();
            state = self.intern(key.to_vec());
        }
        let h = self.intern(normalized);
        self.trans[(state & !FIXED) as usize + class as usize] = h;
        h
    }

    #[inline]
    fn class(&self, unit: u16) -> u32 {
        if unit < 0x80 {
            return self.ascii[unit as usize];
        }
        let key = match self.platform {
            Platform::Unix => unit,
            Platform::Windows => fold(unit),
        };
        match self.wide.binary_search_by_key(&key, |(u, _)| *u) {
            Ok(i) => self.wide[i].1,
            Err(_) => 0,
        }
    }

    /// Run from `state` over `s`; stops early on a fixed state.
    #[inline]
    fn run(&mut self, mut state: u32, s: &str) -> u32 {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if state & FIXED != 0 {
                return state;
            }
            let len;
            (state, len) = self.step(state, s, i);
            i += len;
        }
        state
    }

    /// One step from `state` over the character at byte `i` of `s` (one or two UTF-16
    /// units); the state reached and the character's length in bytes.
    #[inline(always)]
    fn step(&mut self, mut state: u32, s: &str, i: usize) -> (u32, usize) {
        let Some(&b) = s.as_bytes().get(i) else {
            return (state, 1);
        };
        if b < 0x80 {
            return (self.next(state, self.ascii[b as usize]), 1);
        }
        let (units, len) = wide_units(s, i);
        for u in units.iter().flatten() {
            let c = self.class(*u);
            state = self.next(state, c);
        }
        (state, len)
    }

    /// The last pattern matching the whole of `s`, as `findLast` finds it.
    pub fn last_match(&mut self, s: &str) -> Option<usize> {
        let end = self.run(self.start, s);
        let last = self.state(end).last;
        (last != NONE).then_some(last as usize)
    }

    /// Every pattern matching the whole of `s`, in order, into `out` (cleared first).
    /// In `Last` mode only the last one is reported.
    pub fn all_matches(&mut self, s: &str, out: &mut Vec<usize>) {
        out.clear();
        let end = self.run(self.start, s);
        let st = self.state(end);
        match self.want {
            Want::All => {
                let (a, b) = st.accept;
                out.extend(
                    self.accept_pool[a as usize..b as usize]
                        .iter()
                        .map(|r| *r as usize),
                );
            }
            Want::Last => out.extend((st.last != NONE).then_some(st.last as usize)),
        }
    }

    /// [`MultiGlob::last_match`] for subjects that share prefixes with the previous one
    /// (sorted paths): the scan resumes at the longest common prefix recorded in `cache`.
    pub fn last_match_resume(&mut self, s: &str, cache: &mut PrefixCache) -> Option<usize> {
        let bytes = s.as_bytes();
        if cache.clears != self.stats.clears {
            cache.clear();
        }
        let common = cache
            .prev
            .iter()
            .zip(bytes)
            .take_while(|(a, b)| a == b)
            .count();
        // Resume at the last recorded char boundary within the common prefix.
        let mut k = common.min(cache.states.len().saturating_sub(1));
        while k > 0 && cache.states[k] == UNKNOWN {
            k -= 1;
        }
        let mut state = match cache.states.get(k) {
            Some(&st) if st != UNKNOWN => st,
            _ => {
                k = 0;
                self.start
            }
        };
        cache.prev.clear();
        cache.prev.extend_from_slice(bytes);
        cache.states.truncate(k);
        cache.states.push(state);
        let clears = self.stats.clears;
        let mut i = k;
        while i < bytes.len() && state & FIXED == 0 {
            let len;
            (state, len) = self.step(state, s, i);
            i += len;
            for _ in 1..len {
                cache.states.push(UNKNOWN);
            }
            cache.states.push(state);
        }
        cache.clears = if clears == self.stats.clears {
            clears
        } else {
            // The ids recorded before the clear are stale.
            cache.prev.clear();
            cache.states.clear();
            self.stats.clears
        };
        let last = self.state(state).last;
        (last != NONE).then_some(last as usize)
    }
}

/// An Aho-Corasick trie over the segments (class sequences) of the lead patterns. A node
/// stands for the longest suffix of the input that is a prefix of some segment; its
/// dictionary links reach every segment that ends here.
#[derive(Debug, Clone)]
struct Ac {
    /// Per node: children by class, sorted.
    children: Vec<Vec<(u32, u32)>>,
    fail: Vec<u32>,
    /// Per node: the NFA positions after the segments that end exactly here, ascending.
    out: Vec<Vec<u32>>,
    /// Per node: the nearest node on its fail chain with outputs (0: none).
    dict: Vec<u32>,
}

impl Ac {
    fn new(segments: &[(Vec<u32>, u32)]) -> Ac {
        let mut ac = Ac {
            children: vec![Vec::new()],
            fail: vec![0],
            out: vec![Vec::new()],
            dict: vec![0],
        };
        for (seg, after) in segments {
            let mut n = 0usize;
            for &c in seg {
                n = match ac.children[n].binary_search_by_key(&c, |e| e.0) {
                    Ok(i) => ac.children[n][i].1 as usize,
                    Err(i) => {
                        let id = ac.children.len() as u32;
                        ac.children[n].insert(i, (c, id));
                        ac.children.push(Vec::new());
                        ac.fail.push(0);
                        ac.out.push(Vec::new());
                        ac.dict.push(0);
                        id as usize
                    }
                };
            }
            ac.out[n].push(*after);
        }
        for o in &mut ac.out {
            o.sort_unstable();
        }
        // Breadth first: fail links and dictionary links.
        let mut queue = std::collections::VecDeque::new();
        for &(_, child) in &ac.children[0] {
            queue.push_back(child);
        }
        while let Some(n) = queue.pop_front() {
            let kids = ac.children[n as usize].clone();
            for (c, child) in kids {
                let mut f = ac.fail[n as usize];
                let target = loop {
                    if let Ok(i) = ac.children[f as usize].binary_search_by_key(&c, |e| e.0) {
                        break ac.children[f as usize][i].1;
                    }
                    if f == 0 {
                        break 0;
                    }
                    f = ac.fail[f as usize];
                };
                ac.fail[child as usize] = target;
                ac.dict[child as usize] = if ac.out[target as usize].is_empty() {
                    ac.dict[target as usize]
                } else {
                    target
                };
                queue.push_back(child);
            }
        }
        ac
    }

    /// The node after reading `class` at `node`.
    fn next(&self, mut node: u32, class: u32) -> u32 {
        loop {
            let kids = &self.children[node as usize];
            if let Ok(i) = kids.binary_search_by_key(&class, |e| e.0) {
                return kids[i].1;
            }
            if node == 0 {
                return 0;
            }
            node = self.fail[node as usize];
        }
    }

    /// Push the positions after every segment ending at `node`, those at or above
    /// position `from` only.
    fn outputs(&self, node: u32, from: u32, into: &mut Vec<u32>) {
        let mut n = node;
        loop {
            let o = &self.out[n as usize];
            let k = o.partition_point(|&p| p < from);
            into.extend_from_slice(&o[k..]);
            let d = self.dict[n as usize];
            if d == 0 {
                break;
            }
            n = d;
        }
    }
}

/// The UTF-16 units of the non-ASCII character at byte `i` of `s`, and its UTF-8 length.
#[inline]
fn wide_units(s: &str, i: usize) -> ([Option<u16>; 2], usize) {
    match s.get(i..).and_then(|t| t.chars().next()) {
        Some(ch) => {
            let mut buf = [0u16; 2];
            let enc = ch.encode_utf16(&mut buf);
            let second = (enc.len() == 2).then_some(buf[1]);
            ([Some(buf[0]), second], ch.len_utf8())
        }
        // Not reachable for a `&str` walked on char boundaries; consume one byte.
        None => ([None, None], 1),
    }
}

/// The states of the previous subject at each of its byte offsets, so that a subject
/// sharing a prefix with it resumes there (see [`MultiGlob::last_match_resume`]). One per
/// automaton.
#[derive(Debug, Clone, Default)]
pub struct PrefixCache {
    prev: Vec<u8>,
    /// `states[i]`: the state after `prev[..i]`, `UNKNOWN` inside a character.
    states: Vec<u32>,
    clears: u64,
}

impl PrefixCache {
    pub fn new() -> PrefixCache {
        PrefixCache::default()
    }
    fn clear(&mut self) {
        self.prev.clear();
        self.states.clear();
    }
}

/// The rules of one ruleset that apply to one permission, compiled: the compiled form of
/// `evaluate(rules, permission, ·)`. Indices are into the original ruleset.
#[derive(Debug, Clone)]
pub struct CompiledRuleset {
    glob: MultiGlob,
    /// Local pattern index → index in the ruleset.
    index: Vec<usize>,
    scratch: Vec<usize>,
}

impl CompiledRuleset {
    /// `rules` are `(permission glob, pattern glob)` in ruleset order.
    pub fn new<'a, I>(rules: I, permission: &str, platform: Platform, want: Want) -> CompiledRuleset
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        CompiledRuleset::with_cache_bytes(rules, permission, platform, want, DEFAULT_CACHE_BYTES)
    }

    pub fn with_cache_bytes<'a, I>(
        rules: I,
        permission: &str,
        platform: Platform,
        want: Want,
        budget: usize,
    ) -> CompiledRuleset
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let perm_units = super::wildcard::subject_units(permission);
        let mut index = Vec::new();
        let mut patterns = Vec::new();
        for (i, (perm, pattern)) in rules.into_iter().enumerate() {
            if super::Wildcard::compile(perm).is_match_units(&perm_units, platform) {
                index.push(i);
                patterns.push(pattern);
            }
        }
        CompiledRuleset {
            glob: MultiGlob::with_cache_bytes(&patterns, platform, want, budget),
            index,
            scratch: Vec::new(),
        }
    }

    /// The rules (indices into the ruleset) whose permission glob matches the permission.
    pub fn rules(&self) -> &[usize] {
        &self.index
    }

    /// The deciding rule: the last one matching `input`, or `None` (OpenCode asks).
    pub fn decide(&mut self, input: &str) -> Option<usize> {
        self.glob.last_match(input).map(|i| self.index[i])
    }

    /// As [`CompiledRuleset::decide`], resuming from the previous input's common prefix.
    pub fn decide_resume(&mut self, input: &str, cache: &mut PrefixCache) -> Option<usize> {
        self.glob
            .last_match_resume(input, cache)
            .map(|i| self.index[i])
    }

    /// Every rule matching `input`, ascending (needs [`Want::All`] for more than the last).
    pub fn matching(&mut self, input: &str, out: &mut Vec<usize>) {
        let mut local = std::mem::take(&mut self.scratch);
        self.glob.all_matches(input, &mut local);
        out.clear();
        out.extend(local.iter().map(|i| self.index[*i]));
        self.scratch = local;
    }

    pub fn stats(&self) -> Stats {
        self.glob.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glob::matches;

    fn check(patterns: &[&str], subjects: &[&str], platform: Platform) {
        for want in [Want::Last, Want::All] {
            let mut g = MultiGlob::new(patterns, platform, want);
            for s in subjects {
                let expect: Vec<usize> = (0..patterns.len())
                    .filter(|&i| matches(s, patterns[i], platform))
                    .collect();
                assert_eq!(
                    g.last_match(s),
                    expect.last().copied(),
                    "{patterns:?} {s:?}"
                );
                if want == Want::All {
                    let mut out = Vec::new();
                    g.all_matches(s, &mut out);
                    assert_eq!(out, expect, "{patterns:?} {s:?}");
                }
            }
        }
    }

    #[test]
    fn spec_cases() {
        let pats = [
            "git *", "git*", "*.ts", "a?c", "a.c", "[ab]", "A*", "a\\b", "a/b", "a*", "a?b", "**",
            "src/**", "a+b", "*.env", "abc", "a **", " *", "a *?", "a\\ *", "", "??", "?",
        ];
        let subs = [
            "git",
            "git status",
            "gitx",
            "git  status",
            "a/b/c.ts",
            "abc",
            "ac",
            "a/c",
            "a.c",
            "a",
            "[ab]",
            "a/b",
            "a\\b",
            "a\nb",
            "x/y",
            "src",
            "src/",
            "aab",
            "a+b",
            ".env",
            "xabcx",
            "",
            "a/",
            "😀",
            "é",
            "a😀",
        ];
        check(&pats, &subs, Platform::Unix);
        check(&pats, &subs, Platform::Windows);
    }

    #[test]
    fn last_mode_stops_early_and_prunes() {
        let mut g = MultiGlob::new(&["*", "src/*", "src/gen/*"], Platform::Unix, Want::Last);
        assert_eq!(g.last_match("src/gen/x"), Some(2));
        assert_eq!(g.last_match("src/a"), Some(1));
        assert_eq!(g.last_match("lib/a"), Some(0));
        assert_eq!(g.last_match(""), Some(0));
    }

    #[test]
    fn tiny_cache_still_exact() {
        let pats = ["*a*b*", "?*", "a?", "*x", "b* *"];
        let subs = ["ab", "aab", "xa", "b", "b c", "bc", "zzzzzzzax", "a😀b"];
        for want in [Want::Last, Want::All] {
            let mut g = MultiGlob::with_cache_bytes(&pats, Platform::Unix, want, 0);
            for s in subs {
                let expect = (0..pats.len()).rfind(|&i| matches(s, pats[i], Platform::Unix));
                assert_eq!(g.last_match(s), expect, "{s:?}");
            }
            assert!(g.stats().clears > 0);
        }
    }

    #[test]
    fn resume_matches_plain() {
        let pats = ["*", "src/*", "src/gen/*", "*.env", "src/é?/*"];
        let mut g = MultiGlob::new(&pats, Platform::Unix, Want::Last);
        let mut h = g.clone();
        let mut cache = PrefixCache::new();
        for s in [
            "src/a",
            "src/gen/b",
            "src/gen/c.env",
            "src/é😀/x",
            "src/éa/x",
            "src",
            "t.env",
        ] {
            assert_eq!(g.last_match_resume(s, &mut cache), h.last_match(s), "{s:?}");
        }
    }
}
