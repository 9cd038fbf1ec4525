//! What a check run builds from the rules' *shapes* alone, kept for the next run.
//!
//! An agent's [`Analysis`] (the automata and every answer it has memoised) and its
//! [`Quick`] evaluator depend only on the ordered (permission, pattern) pairs of its rules,
//! never on their actions or places; so does [`reachability`] over all the agents of a
//! pass (which rules decide anything, and an input each). `permaudit server` re-checks the
//! project at every keystroke, and most keystrokes change an action, a comment or one
//! agent's file: [`Engines`] hands the next run the analyses of every ruleset whose shapes
//! did not change, with their memoised answers, and the reachability of a pass whose
//! agents all kept theirs. The findings are the same as a run from nothing, because every
//! reused value is a function of the key it is stored under (`tests/check_props.rs`
//! compares reused runs with fresh ones).
//!
//! Below the analyses, the answers about pairs of globs (does one rule contain another, do
//! two meet) are kept by the globs' texts ([`PairMemo`]), so an analysis made anew after a
//! pattern was typed still knows every pair it shares with the last run.
//!
//! Bounded: [`Engines::settle`] keeps only what the last run used (the pair answers and
//! example inputs up to a fixed count).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::examples::Filled;
use super::{Ctx, Deciders, Quick, Reach};
use crate::glob::Platform;
use crate::glob::analysis::{Analysis, PairMemo, RuleShape};
use crate::model::Rule;
use crate::shell::Splitter;

/// Patterns whose example candidates are kept at most (a few times the largest configs).
const MAX_FILLED: usize = 50_000;

/// Pair answers kept at most (each a few dozen bytes).
const MAX_PAIRS: usize = 500_000;

/// Commands whose parts the splitter keeps at most.
const MAX_SPLIT: usize = 50_000;

/// The analyses of recent runs, by ruleset shape; `Default` is empty (a run from nothing).
#[derive(Default)]
pub struct Engines {
    built: RefCell<HashMap<(Platform, Vec<RuleShape>), Built>>,
    /// `reachability` of a pass, by its agents' built ids and which of their rules are
    /// written in a file (only those are judged).
    reach: RefCell<HashMap<PassKey, Stored>>,
    /// Example candidates by permission and pattern.
    filled: Rc<Filled>,
    /// Answers about pairs of globs, by platform: shared by every analysis, so one made
    /// anew after an edit still knows the pairs it shares with the last run.
    pairs: RefCell<HashMap<Platform, Rc<PairMemo>>>,
    /// The compiled evaluators of every [`Quick`], by pattern list.
    deciders: Rc<Deciders>,
    /// The bash splitter, with the parts of every command it split (text alone).
    splitter: Rc<RefCell<Splitter>>,
    next_id: Cell<u64>,
}

/// A pass as [`Engines::reachability`] knows it: each agent's built id, and which of its
/// rules are written in a file.
type PassKey = Vec<(u64, Vec<bool>)>;

struct Built {
    id: u64,
    analysis: Rc<Analysis>,
    quick: Rc<Quick>,
    used: Cell<bool>,
}

struct Stored {
    reach: Rc<Vec<Vec<Option<Reach>>>>,
    used: Cell<bool>,
}

impl Engines {
    /// The analysis, evaluator and id of a ruleset with these rules' shapes.
    pub(super) fn for_rules(
        &self,
        rules: &[Rule],
        platform: Platform,
    ) -> (u64, Rc<Analysis>, Rc<Quick>) {
        let shapes: Vec<RuleShape> = rules
            .iter()
            .map(|r| RuleShape::new(r.permission.clone(), r.pattern.clone()))
            .collect();
        let key = (platform, shapes);
        if let Some(b) = self.built.borrow().get(&key) {
            b.used.set(true);
            return (b.id, b.analysis.clone(), b.quick.clone());
        }
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let pairs = self
            .pairs
            .borrow_mut()
            .entry(platform)
            .or_insert_with(|| Rc::new(PairMemo::new(platform)))
            .clone();
        let quick = Rc::new(Quick::sharing(
            rules,
            platform,
            &pairs,
            self.deciders.clone(),
        ));
        let analysis = Rc::new(Analysis::sharing(&key.1, platform, pairs));
        self.built.borrow_mut().insert(
            key,
            Built {
                id,
                analysis: analysis.clone(),
                quick: quick.clone(),
                used: Cell::new(true),
            },
        );
        (id, analysis, quick)
    }

    /// [`super::reachability`] of the pass, computed once per set of shapes.
    pub(super) fn reachability(&self, ctx: &Ctx<'_>) -> Rc<Vec<Vec<Option<Reach>>>> {
        let key: PassKey = ctx
            .built
            .iter()
            .zip(ctx.agents.iter())
            .map(|(&id, a)| (id, a.rules.iter().map(|r| r.loc.is_some()).collect()))
            .collect();
        if let Some(s) = self.reach.borrow().get(&key) {
            s.used.set(true);
            return s.reach.clone();
        }
        let reach = Rc::new(super::reachability(ctx));
        self.reach.borrow_mut().insert(
            key,
            Stored {
                reach: reach.clone(),
                used: Cell::new(true),
            },
        );
        reach
    }

    pub(super) fn filled(&self) -> Rc<Filled> {
        self.filled.clone()
    }

    pub(super) fn splitter(&self) -> Rc<RefCell<Splitter>> {
        self.splitter.clone()
    }

    /// Forget what the last run did not use; mark the rest unused for the next one. The
    /// example candidates are forgotten together once there are [`MAX_FILLED`], the pair
    /// answers once there are [`MAX_PAIRS`].
    pub fn settle(&self) {
        self.built.borrow_mut().retain(|_, b| b.used.replace(false));
        self.reach.borrow_mut().retain(|_, s| s.used.replace(false));
        self.deciders.settle();
        if self.filled.len() > MAX_FILLED {
            self.filled.clear();
        }
        self.pairs.borrow_mut().retain(|_, p| p.len() <= MAX_PAIRS);
        if self.splitter.borrow().known() > MAX_SPLIT {
            self.splitter.replace(Splitter::new());
        }
    }
}
