//! The `Quick` evaluator: each rule's globs compiled once, and one compiled evaluator per
//! permission name ([`Deciders`], shared by pattern list across agents).

use crate::glob::analysis::{Analysis, Fixed, Input};
use crate::glob::compiled::{MultiGlob, Want};
use crate::model::Rule;
use std::rc::Rc;

/// Cache budget of each of `Quick`'s compiled evaluators (one per agent and permission
/// name). Check decides a few inputs per rule, mostly distinct, so a large cache buys
/// little and, over dozens of evaluators, costs hundreds of megabytes.
const QUICK_CACHE_BYTES: usize = 1 << 20;

/// Up to this many rules, live-rule samples are decided by the compiled evaluator (one pass
/// over the sample); past it, against [`Analysis::later_candidates`], because the compiled
/// evaluator's states then hold tens of thousands of positions and its cache thrashes
/// (100,000 literal-prefix rules: 517 s against 5 s). Both are exact; only speed differs.
pub(super) const COMPILED_SAMPLE_RULES: usize = 20_000;

/// [`Ctx::rule_decides`] for one agent's evaluator and analysis.
pub(super) fn rule_decides(quick: &Quick, an: &Analysis, i: usize, input: &Input) -> bool {
    if an.len() <= COMPILED_SAMPLE_RULES {
        quick.decide(&input.permission, &input.subject) == Some(i)
    } else {
        an.matches(i, input) && !an.later_candidates(i).any(|j| an.matches(j, input))
    }
}

/// Each rule's globs compiled once: cheap exact disjointness ([`Quick::disjoint`]) and
/// decisions through one compiled evaluator per permission name ([`Quick::decide`]).
pub(super) struct Quick {
    platform: crate::glob::Platform,
    rules: Vec<(std::rc::Rc<Fixed>, std::rc::Rc<Fixed>)>,
    /// Pattern texts, for compiling evaluators.
    patterns: Vec<String>,
    /// Per permission name decided so far: the rules whose permission glob matches it, and
    /// the evaluator of their patterns (from `deciders`, shared with other agents).
    compiled: std::cell::RefCell<std::collections::HashMap<String, Evaluator>>,
    deciders: Rc<Deciders>,
}

/// The rules (indices) whose permission glob matches one permission name, and the
/// [`Decider`] of their patterns.
type Evaluator = (Vec<usize>, Rc<Decider>);

/// A lazy DFA deciding the last matching pattern ([`MultiGlob`], [`Want::Last`]), and its
/// answers so far. Checks ask the same few inputs of every agent (the shared rules' example
/// inputs): answered once, each is a hash lookup for the next agent, where the DFA, whose
/// states for `*X*` patterns are mostly new for each input, would build them again once
/// its cache was cleared.
struct Decider {
    glob: std::cell::RefCell<MultiGlob>,
    answers: std::cell::RefCell<std::collections::HashMap<String, Option<usize>>>,
}

type DeciderKey = (crate::glob::Platform, Vec<String>);

/// Answers a [`Decider`] keeps at most (then it forgets them together).
const MAX_DECIDER_ANSWERS: usize = 100_000;

impl Decider {
    /// The last pattern matching `s`; `None` if the decider is in use (a re-entrant call).
    fn last_match(&self, s: &str) -> Option<Option<usize>> {
        let mut answers = self.answers.try_borrow_mut().ok()?;
        if let Some(&known) = answers.get(s) {
            return Some(known);
        }
        let found = self.glob.try_borrow_mut().ok()?.last_match(s);
        if answers.len() >= MAX_DECIDER_ANSWERS {
            answers.clear();
        }
        answers.insert(s.to_string(), found);
        Some(found)
    }
}

/// The compiled evaluators of every [`Quick`] of a run, by platform and pattern list. An
/// evaluator for one permission name depends only on the patterns of the rules whose
/// permission glob matches it, in order; agents that differ only in rules of other
/// permissions (their own `edit` rules, a tool switched on) decide their `bash` commands
/// with one DFA, built state by state once instead of once per agent.
#[derive(Default)]
pub(super) struct Deciders {
    /// By platform and the patterns, in order.
    built: std::cell::RefCell<std::collections::HashMap<DeciderKey, Rc<Decider>>>,
}

impl Deciders {
    fn get(&self, platform: crate::glob::Platform, patterns: Vec<String>) -> Rc<Decider> {
        self.built
            .borrow_mut()
            .entry((platform, patterns))
            .or_insert_with_key(|(platform, patterns)| {
                Rc::new(Decider {
                    glob: std::cell::RefCell::new(MultiGlob::with_cache_bytes(
                        patterns,
                        *platform,
                        Want::Last,
                        QUICK_CACHE_BYTES,
                    )),
                    answers: Default::default(),
                })
            })
            .clone()
    }

    /// Forget the evaluators no [`Quick`] holds any more.
    pub(super) fn settle(&self) {
        self.built
            .borrow_mut()
            .retain(|_, d| Rc::strong_count(d) > 1);
    }
}

impl Quick {
    pub(super) fn new(rules: &[Rule], platform: crate::glob::Platform) -> Quick {
        Quick::sharing(
            rules,
            platform,
            &crate::glob::analysis::PairMemo::new(platform),
            Rc::default(),
        )
    }

    /// [`Quick::new`] with the globs compiled once in `globs` (shared with the analyses)
    /// and the evaluators in `deciders` (shared with other rulesets).
    pub(super) fn sharing(
        rules: &[Rule],
        platform: crate::glob::Platform,
        globs: &crate::glob::analysis::PairMemo,
        deciders: Rc<Deciders>,
    ) -> Quick {
        let out = rules
            .iter()
            .map(|r| (globs.glob(&r.permission).1, globs.glob(&r.pattern).1))
            .collect();
        Quick {
            platform,
            rules: out,
            patterns: rules.iter().map(|r| r.pattern.clone()).collect(),
            compiled: std::cell::RefCell::new(std::collections::HashMap::new()),
            deciders,
        }
    }

    /// The last rule matching both the permission and the subject (OpenCode's `findLast`),
    /// in one pass over the subject: the patterns of the rules of that permission name are
    /// compiled once (exactly `evaluate`'s answers, as [`crate::glob::compiled::CompiledRuleset`]). Words that are
    /// not well-formed UTF-16 (the compiled evaluator takes `&str`) are decided rule by
    /// rule.
    pub(super) fn decide(
        &self,
        permission: &crate::glob::automaton::Word,
        subject: &crate::glob::automaton::Word,
    ) -> Option<usize> {
        if let (Some(p), Some(s)) = (permission.to_exact_string(), subject.to_exact_string())
            && let Some(k) = self.decide_str(&p, &s)
        {
            return k;
        }
        self.rules.iter().rposition(|(p, s)| {
            p.wildcard.is_match_units(permission.units(), self.platform)
                && s.wildcard.is_match_units(subject.units(), self.platform)
        })
    }

    /// [`Quick::decide`] of text, through the compiled evaluator; `None` when that is in use
    /// (a re-entrant call), and the caller decides rule by rule.
    pub(super) fn decide_str(&self, permission: &str, subject: &str) -> Option<Option<usize>> {
        let mut compiled = self.compiled.try_borrow_mut().ok()?;
        if !compiled.contains_key(permission) {
            let units = crate::glob::wildcard::subject_units(permission);
            let index: Vec<usize> = (0..self.rules.len())
                .filter(|&i| {
                    self.rules[i]
                        .0
                        .wildcard
                        .is_match_units(&units, self.platform)
                })
                .collect();
            let patterns = index.iter().map(|&i| self.patterns[i].clone()).collect();
            let decider = self.deciders.get(self.platform, patterns);
            compiled.insert(permission.to_string(), (index, decider));
        }
        let (index, decider) = compiled.get(permission)?;
        let k = decider.last_match(subject)?;
        Some(k.and_then(|k| index.get(k).copied()))
    }

    /// A simple input that rule `i` decides, if one of two obvious candidates is one: each
    /// glob with its wildcards left out (its shortest member), or with each wildcard read
    /// as `x`. Checked concretely, so a hit proves the rule live without an automaton:
    /// rule `i` matches it and none of the later rules that could
    /// ([`Analysis::later_candidates`]: a rule matching it meets rule `i`) does.
    pub(super) fn decided_sample(&self, an: &Analysis, i: usize) -> Option<Input> {
        use crate::glob::automaton::Word;
        let (p, s) = self.rules.get(i)?;
        let fill = |g: &Fixed, star: Option<u16>| -> Word {
            Word::from_units(g.wildcard.fill_units(star.as_slice()))
        };
        [None, Some(u16::from(b'x'))].into_iter().find_map(|star| {
            let input = Input {
                permission: fill(p, star),
                subject: fill(s, star),
            };
            rule_decides(self, an, i, &input).then_some(input)
        })
    }

    /// Proved disjoint without an automaton ([`Fixed::disjoint`] on either coordinate).
    pub(super) fn disjoint(&self, i: usize, j: usize) -> bool {
        let (Some((pi, si)), Some((pj, sj))) = (self.rules.get(i), self.rules.get(j)) else {
            return true;
        };
        pi.disjoint(pj, self.platform) || si.disjoint(sj, self.platform)
    }
}
