//! The pieces a [`super::Product`] is built from: each glob's NFA positions, the classes
//! of units one query tells apart ([`Alphabet`]), the UTF-16 well-formedness tracker of the
//! restricted search, and the bitset helpers.

use super::super::wildcard::{Platform, Token, Wildcard, fold};

/// A glob's NFA positions: tokens with `*` runs collapsed and the optional tail spelled out,
/// and the accepting positions.
pub(super) fn nfa(glob: &Wildcard) -> (Vec<Token>, Vec<usize>) {
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
pub(super) struct Alphabet {
    pub(super) platform: Platform,
    /// Sorted keys of the literal classes; class `k < keys.len()` is `keys[k]`.
    pub(super) keys: Vec<u16>,
    /// A concrete unit for each class; `reps[keys.len()]`, if present, stands for "other".
    pub(super) reps: Vec<u16>,
    /// The order in which BFS tries the classes (see [`Alphabet::new`]).
    pub(super) order: Vec<usize>,
}

impl Alphabet {
    pub(super) fn new<'a>(tokens: impl Iterator<Item = &'a Token>, platform: Platform) -> Alphabet {
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

    pub(super) fn class_of(&self, unit: u16) -> Option<usize> {
        self.keys.binary_search(&key(unit, self.platform)).ok()
    }

    pub(super) fn kind(&self, class: usize) -> UnitKind {
        match self.reps.get(class) {
            Some(0xD800..=0xDBFF) => UnitKind::High,
            Some(0xDC00..=0xDFFF) => UnitKind::Low,
            _ => UnitKind::Plain,
        }
    }

    pub(super) fn has_surrogates(&self) -> bool {
        self.reps.iter().any(|&u| is_surrogate(u))
    }
}

pub(super) fn key(unit: u16, platform: Platform) -> u16 {
    match platform {
        Platform::Unix => unit,
        Platform::Windows => fold(unit),
    }
}

pub(super) fn is_surrogate(unit: u16) -> bool {
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
pub(super) enum UnitKind {
    Plain,
    High,
    Low,
}

/// Well-formedness tracker for the well-formed search phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Utf16 {
    /// Between code points.
    Boundary = 0,
    /// After a high surrogate, which needs a low one next.
    AfterHigh = 1,
}

impl Utf16 {
    pub(super) fn from_word(w: u64) -> Option<Utf16> {
        match w {
            0 => Some(Utf16::Boundary),
            1 => Some(Utf16::AfterHigh),
            _ => None,
        }
    }

    pub(super) fn next(self, kind: UnitKind) -> Option<Utf16> {
        match (self, kind) {
            (Utf16::Boundary, UnitKind::Plain) => Some(Utf16::Boundary),
            (Utf16::Boundary, UnitKind::High) => Some(Utf16::AfterHigh),
            (Utf16::AfterHigh, UnitKind::Low) => Some(Utf16::Boundary),
            _ => None,
        }
    }
}

pub(super) fn set(bits: &mut [u64], i: usize) {
    if let Some(w) = bits.get_mut(i / 64) {
        *w |= 1 << (i % 64);
    }
}

pub(super) fn get(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Is any bit in `first..=last` set?
pub(super) fn any_in(bits: &[u64], first: usize, last: usize) -> bool {
    let (fw, lw) = (first / 64, last / 64);
    (fw..=lw).any(|w| {
        let lo = if w == fw { first % 64 } else { 0 };
        let hi = if w == lw { last % 64 } else { 63 };
        let mask = (u64::MAX << lo) & (u64::MAX >> (63 - hi));
        bits.get(w).is_some_and(|b| b & mask != 0)
    })
}
