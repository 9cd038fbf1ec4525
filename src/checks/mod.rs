//! Checks: proven findings over each agent's merged ruleset.
//!
//! One file per finding kind, its documentation at the top (shown by `permaudit rule ID`).
//! Findings are data; `report` renders them. Every claim about reachability comes from the
//! exact automata of [`crate::glob::analysis`]; past the budget a check says nothing rather
//! than guess, and the `inconclusive` finding names the rule.

pub mod always_overrides_deny;
pub mod broken_frontmatter;
pub mod dead_rule;
pub mod env_injection;
pub mod inconclusive;
pub mod js_key_order;
pub mod legacy_tools;
pub mod never_matches;
pub mod overridden_by_later_layer;
pub mod partly_shadowed_deny;
pub mod sample_mismatch;
pub mod secret_readable;
pub mod shadowed_deny;
pub mod unchecked_permission;
pub mod unusable_allow;

use crate::glob::analysis::{Analysis, Fixed, Input, RuleShape};
use crate::glob::compiled::{CompiledRuleset, Want};
use crate::model::agents::{Agent, evaluate};
use crate::model::{Effect, Rule};

use crate::project::Project;
use crate::source::Loc;
use serde::Serialize;
use std::fmt;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        })
    }
}

/// A concrete input and what OpenCode decides for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    pub permission: String,
    pub input: String,
    pub action: Effect,
    /// The deciding rule's index, or `None` for the default ask.
    pub rule: Option<usize>,
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub id: &'static str,
    pub level: Level,
    pub agent: Option<String>,
    /// Index into the agent's rules.
    pub rule: Option<usize>,
    pub loc: Option<Loc>,
    pub message: String,
    /// Other places involved, with what they did.
    pub related: Vec<(Loc, String)>,
    pub witnesses: Vec<Witness>,
    pub help: Option<String>,
}

/// A finding kind: id, default level, docs.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub id: &'static str,
    pub level: Level,
    pub summary: &'static str,
    /// Markdown: what it finds, why it matters, an example, how to fix.
    pub docs: &'static str,
}

/// Every check, in the order findings are reported.
pub const CHECKS: &[Check] = &[
    shadowed_deny::CHECK,
    partly_shadowed_deny::CHECK,
    dead_rule::CHECK,
    overridden_by_later_layer::CHECK,
    unchecked_permission::CHECK,
    never_matches::CHECK,
    unusable_allow::CHECK,
    broken_frontmatter::CHECK,
    legacy_tools::CHECK,
    js_key_order::CHECK,
    env_injection::CHECK,
    secret_readable::CHECK,
    always_overrides_deny::CHECK,
    inconclusive::CHECK,
    sample_mismatch::CHECK,
];

pub fn find_check(id: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.id == id)
}

/// Shared state of one run: each agent's analysis and compiled globs, built once.
pub struct Ctx<'a> {
    pub project: &'a Project,
    pub analyses: Vec<Analysis>,
    quick: Vec<Quick>,
    /// `twins[a][i]`: an earlier agent and index whose rules from there on equal agent
    /// `a`'s rules from `i` on (see [`TailMemo`]).
    twins: Vec<Vec<Option<(usize, usize)>>>,
}

impl<'a> Ctx<'a> {
    pub fn new(project: &'a Project) -> Ctx<'a> {
        let analyses = project
            .agents
            .iter()
            .map(|a| {
                let shapes: Vec<RuleShape> = a
                    .rules
                    .iter()
                    .map(|r| RuleShape::new(r.permission.clone(), r.pattern.clone()))
                    .collect();
                Analysis::new(&shapes, project.platform)
            })
            .collect();
        let quick = project
            .agents
            .iter()
            .map(|a| Quick::new(&a.rules, project.platform))
            .collect();
        let agents = &project.agents;
        let twins = agents
            .iter()
            .enumerate()
            .map(|(a, agent)| {
                let n = agent.rules.len();
                let mut row = vec![None; n];
                for (b, other) in agents[..a].iter().enumerate() {
                    let m = other.rules.len();
                    let same = agent
                        .rules
                        .iter()
                        .rev()
                        .zip(other.rules.iter().rev())
                        .take_while(|(x, y)| x == y)
                        .count();
                    for t in 1..=same {
                        row[n - t].get_or_insert((b, m - t));
                    }
                }
                row
            })
            .collect();
        Ctx {
            project,
            analyses,
            quick,
            twins,
        }
    }

    fn agent_index(&self, agent: &Agent) -> Option<usize> {
        self.project
            .agents
            .iter()
            .position(|a| std::ptr::eq(a, agent))
    }

    /// A witness: decide `input` over the agent's rules as [`evaluate`] does (last rule
    /// whose permission and pattern both match; the same matcher, compiled once per run).
    pub fn witness(&self, agent: &Agent, input: &Input) -> Option<Witness> {
        let permission = input.permission.to_exact_string()?;
        let subject = input.subject.to_exact_string()?;
        let (rule, action) = match self.agent_index(agent) {
            Some(a) => {
                let rule = self.quick[a].decide(&input.permission, &input.subject);
                (
                    rule,
                    rule.map_or(Effect::Ask, |i| agent.rules[i].action.effective()),
                )
            }
            None => {
                let d = evaluate(&agent.rules, &permission, &subject, self.project.platform);
                (d.rule, d.effect)
            }
        };
        Some(Witness {
            permission,
            input: subject,
            action,
            rule,
        })
    }

    /// An input that rules `i` and `j` of agent `a` both match, or `Empty` when they are
    /// disjoint ([`Analysis::intersection`] behind a cheap exact test).
    pub fn intersection(
        &self,
        a: usize,
        i: usize,
        j: usize,
    ) -> crate::glob::automaton::Outcome<Input> {
        if self.quick[a].disjoint(i, j) {
            return crate::glob::automaton::Outcome::Empty;
        }
        self.analyses[a].intersection(i, j)
    }

    /// `path:line:col` of a rule, or its built-in origin.
    pub fn place(&self, r: &Rule) -> String {
        match r.loc {
            Some(l) => self.project.loaded.sources.position(l).to_string(),
            None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
        }
    }
}

/// Findings of a check whose answer for rule `i` depends only on rules `i..` of the agent
/// (every witness it reports matches rule `i`, so its deciding rule is `i` or later). An
/// agent whose rules from `i` on equal an earlier agent's from `j` on gets that agent's
/// findings for `j` again, with its own name and indices: the top-level rules, which
/// every agent ends with, are examined once instead of once per agent.
#[derive(Default)]
pub struct TailMemo {
    done: std::collections::HashMap<(usize, usize), Vec<Finding>>,
}

impl TailMemo {
    /// Push the findings for rule `i` of agent `a`: copied from its twin, or computed.
    pub fn run(
        &mut self,
        ctx: &Ctx<'_>,
        a: usize,
        i: usize,
        out: &mut Vec<Finding>,
        compute: impl FnOnce() -> Vec<Finding>,
    ) {
        // Only answers that mention no rule before `j` are about the shared tail alone.
        let local = |found: &Vec<Finding>, j: usize| {
            found.iter().all(|f| {
                f.rule.is_none_or(|k| k >= j)
                    && f.witnesses.iter().all(|w| w.rule.is_some_and(|k| k >= j))
            })
        };
        if let Some((b, j)) = ctx.twins[a][i]
            && let Some(found) = self.done.get(&(b, j)).filter(|f| local(f, j))
        {
            let name = &ctx.project.agents[a].name;
            let shift = |k: usize| k + i - j;
            out.extend(found.iter().map(|f| {
                Finding {
                    agent: Some(name.clone()),
                    rule: f.rule.map(shift),
                    witnesses: f
                        .witnesses
                        .iter()
                        .map(|w| Witness {
                            rule: w.rule.map(shift),
                            ..w.clone()
                        })
                        .collect(),
                    ..f.clone()
                }
            }));
            return;
        }
        let found = compute();
        out.extend(found.iter().cloned());
        self.done.insert((a, i), found);
    }
}

/// `rule N (permission pattern action)` for messages.
pub fn describe(r: &Rule) -> String {
    format!(
        "`{}` {} {}",
        r.permission,
        serde_json::to_string(&r.pattern).unwrap_or_default(),
        r.action
    )
}

/// Run every check over the project; findings in a deterministic order.
pub fn run(project: &Project) -> Vec<Finding> {
    let ctx = Ctx::new(project);
    let mut out = Vec::new();
    let reach = reachability(&ctx);
    shadowed_deny::run(&ctx, &reach, &mut out);
    partly_shadowed_deny::run(&ctx, &reach, &mut out);
    dead_rule::run(&ctx, &reach, &mut out);
    overridden_by_later_layer::run(&ctx, &reach, &mut out);
    unchecked_permission::run(&ctx, &mut out);
    never_matches::run(&ctx, &mut out);
    unusable_allow::run(&ctx, &mut out);
    broken_frontmatter::run(&ctx, &mut out);
    legacy_tools::run(&ctx, &reach, &mut out);
    js_key_order::run(&ctx, &mut out);
    env_injection::run(&ctx, &mut out);
    secret_readable::run(&ctx, &mut out);
    always_overrides_deny::run(&ctx, &mut out);
    inconclusive::run(&ctx, &reach, &mut out);
    out
}

/// Whether each user-written rule of each agent decides anything.
#[derive(Debug, Clone)]
pub enum Reach {
    /// Decides this input.
    Decides(Input),
    /// Decides nothing: every input it matches goes to a later rule, e.g. this one.
    Dead(Option<crate::glob::analysis::Overridden>),
    /// Over budget: nothing claimed.
    Inconclusive,
}

impl Reach {
    /// The same answer for the same rule at an index `delta` further on.
    fn shifted(&self, delta: isize) -> Reach {
        match self {
            Reach::Dead(Some(ov)) => Reach::Dead(Some(crate::glob::analysis::Overridden {
                input: ov.input.clone(),
                decider: ov.decider.saturating_add_signed(delta),
            })),
            other => other.clone(),
        }
    }
}

/// `reach[agent][rule]`, `None` for built-in rules (not the user's to fix).
///
/// Whether rule `i` decides anything, and which later rule takes its inputs, depends only
/// on the shapes of rules `i..` (last match wins). Agents share long tails (every agent
/// ends with the top-level user rules and the trailing tool-output rule), so a rule whose
/// tail equals one already analysed in an earlier agent reuses that answer, shifted to its
/// own index: exact, and the top-level rules are analysed once instead of once per agent.
pub fn reachability(ctx: &Ctx<'_>) -> Vec<Vec<Option<Reach>>> {
    use crate::glob::automaton::Outcome;
    let agents = &ctx.project.agents;
    let mut out: Vec<Vec<Option<Reach>>> = Vec::with_capacity(agents.len());
    for (a, (agent, an)) in agents.iter().zip(&ctx.analyses).enumerate() {
        let n = agent.rules.len();
        let tails: Vec<usize> = agents[..a]
            .iter()
            .map(|b| common_tail(&b.rules, &agent.rules))
            .collect();
        let quick = &ctx.quick[a];
        let row = (0..n)
            .map(|i| {
                agent.rules[i].loc?;
                let tail = n - i;
                for (b, &t) in tails.iter().enumerate() {
                    let j = agents[b].rules.len().wrapping_sub(tail);
                    if t >= tail
                        && let Some(Some(r)) = out[b].get(j)
                    {
                        return Some(r.shifted(i as isize - j as isize));
                    }
                }
                if let Some(w) = quick.decided_sample(an, i) {
                    return Some(Reach::Decides(w));
                }
                Some(match an.decides(i) {
                    Outcome::Witness(w) => Reach::Decides(w),
                    Outcome::Empty => Reach::Dead(overridden(an, quick, i).into_witness()),
                    Outcome::Inconclusive => Reach::Inconclusive,
                })
            })
            .collect();
        out.push(row);
    }
    out
}

/// How many trailing rules of `a` and `b` have the same permission and pattern.
fn common_tail(a: &[Rule], b: &[Rule]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x.permission == y.permission && x.pattern == y.pattern)
        .count()
}

/// [`Analysis::overridden`], deciding witnesses with the compiled `Quick` evaluator. Only
/// [`Analysis::later_candidates`] are intersected: most later rules have another literal
/// permission name or a clashing literal prefix, and those pairs never need a product
/// automaton.
fn overridden(
    an: &Analysis,
    quick: &Quick,
    i: usize,
) -> crate::glob::automaton::Outcome<crate::glob::analysis::Overridden> {
    use crate::glob::analysis::Overridden;
    use crate::glob::automaton::Outcome;
    let mut inconclusive = false;
    for j in an.later_candidates(i) {
        match an.intersection(i, j) {
            Outcome::Witness(input) => match quick.decide(&input.permission, &input.subject) {
                Some(decider) if decider > i => {
                    return Outcome::Witness(Overridden { input, decider });
                }
                _ => inconclusive = true,
            },
            Outcome::Empty => {}
            Outcome::Inconclusive => inconclusive = true,
        }
    }
    if inconclusive {
        Outcome::Inconclusive
    } else {
        Outcome::Empty
    }
}

/// Cache budget of each of `Quick`'s compiled evaluators (one per agent and permission
/// name). Check decides a few inputs per rule, mostly distinct, so a large cache buys
/// little and, over dozens of evaluators, costs hundreds of megabytes.
const QUICK_CACHE_BYTES: usize = 1 << 20;

/// Up to this many rules, live-rule samples are decided by the compiled evaluator (one pass
/// over the sample); past it, against [`Analysis::later_candidates`], because the compiled
/// evaluator's states then hold tens of thousands of positions and its cache thrashes
/// (100,000 literal-prefix rules: 517 s against 5 s). Both are exact; only speed differs.
const COMPILED_SAMPLE_RULES: usize = 20_000;

/// Each rule's globs compiled once: cheap exact disjointness ([`Quick::disjoint`]) and
/// decisions through one compiled evaluator per permission name ([`Quick::decide`]).
pub(super) struct Quick {
    platform: crate::glob::Platform,
    rules: Vec<(std::rc::Rc<Fixed>, std::rc::Rc<Fixed>)>,
    /// `(permission, pattern)` texts, for compiling evaluators.
    texts: Vec<(String, String)>,
    /// One compiled evaluator per permission name decided so far.
    compiled: std::cell::RefCell<std::collections::HashMap<Vec<u16>, CompiledRuleset>>,
}

impl Quick {
    pub(super) fn new<'a>(rules: &'a [Rule], platform: crate::glob::Platform) -> Quick {
        let mut cache: std::collections::HashMap<&str, std::rc::Rc<Fixed>> =
            std::collections::HashMap::new();
        let mut out = Vec::with_capacity(rules.len());
        for r in rules {
            let mut get = |s: &'a str| {
                cache
                    .entry(s)
                    .or_insert_with(|| std::rc::Rc::new(Fixed::new(s)))
                    .clone()
            };
            out.push((get(&r.permission), get(&r.pattern)));
        }
        Quick {
            platform,
            rules: out,
            texts: rules
                .iter()
                .map(|r| (r.permission.clone(), r.pattern.clone()))
                .collect(),
            compiled: std::cell::RefCell::new(std::collections::HashMap::new()),
        }
    }

    /// The last rule matching both the permission and the subject (OpenCode's `findLast`),
    /// in one pass over the subject: the rules of that permission name are compiled once
    /// ([`CompiledRuleset`], exactly `evaluate`'s answers). Words that are not well-formed
    /// UTF-16 (the compiled evaluator takes `&str`) are decided rule by rule.
    pub(super) fn decide(
        &self,
        permission: &crate::glob::automaton::Word,
        subject: &crate::glob::automaton::Word,
    ) -> Option<usize> {
        if let (Some(p), Some(s)) = (permission.to_exact_string(), subject.to_exact_string())
            && let Ok(mut compiled) = self.compiled.try_borrow_mut()
        {
            let ruleset = compiled
                .entry(permission.units().to_vec())
                .or_insert_with(|| {
                    CompiledRuleset::with_cache_bytes(
                        self.texts.iter().map(|(p, s)| (p.as_str(), s.as_str())),
                        &p,
                        self.platform,
                        Want::Last,
                        QUICK_CACHE_BYTES,
                    )
                });
            return ruleset.decide(&s);
        }
        self.rules.iter().rposition(|(p, s)| {
            p.wildcard.is_match_units(permission.units(), self.platform)
                && s.wildcard.is_match_units(subject.units(), self.platform)
        })
    }

    /// A simple input that rule `i` decides, if one of two obvious candidates is one: each
    /// glob with its wildcards left out (its shortest member), or with each wildcard read
    /// as `x`. Checked concretely, so a hit proves the rule live without an automaton:
    /// rule `i` matches it and none of the later rules that could
    /// ([`Analysis::later_candidates`]: a rule matching it meets rule `i`) does.
    fn decided_sample(&self, an: &Analysis, i: usize) -> Option<Input> {
        use crate::glob::automaton::Word;
        use crate::glob::wildcard::Token;
        let (p, s) = self.rules.get(i)?;
        let fill = |g: &Fixed, star: Option<u16>| -> Word {
            Word::from_units(
                g.wildcard
                    .tokens
                    .iter()
                    .filter_map(|t| match t {
                        Token::Lit(u) => Some(*u),
                        Token::One => Some(u16::from(b'x')),
                        Token::Star => star,
                    })
                    .collect(),
            )
        };
        [None, Some(u16::from(b'x'))].into_iter().find_map(|star| {
            let input = Input {
                permission: fill(p, star),
                subject: fill(s, star),
            };
            let decided = if an.len() <= COMPILED_SAMPLE_RULES {
                self.decide(&input.permission, &input.subject) == Some(i)
            } else {
                an.matches(i, &input) && !an.later_candidates(i).any(|j| an.matches(j, &input))
            };
            decided.then_some(input)
        })
    }

    /// Proved disjoint without an automaton ([`Fixed::disjoint`] on either coordinate).
    fn disjoint(&self, i: usize, j: usize) -> bool {
        let (Some((pi, si)), Some((pj, sj))) = (self.rules.get(i), self.rules.get(j)) else {
            return true;
        };
        pi.disjoint(pj, self.platform) || si.disjoint(sj, self.platform)
    }
}

/// Are two rules from the same file and layer?
pub fn same_origin(a: &Rule, b: &Rule) -> bool {
    a.layer == b.layer && a.loc.map(|l| l.source) == b.loc.map(|l| l.source)
}

/// A check's documentation: the `//!` block at the top of its file, as Markdown.
pub fn docs_text(c: &Check) -> String {
    c.docs
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| {
            l.trim_start_matches("//!")
                .strip_prefix(' ')
                .unwrap_or(l.trim_start_matches("//!"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// For every user rule other than a deny that decides nothing, with the later rule that
/// takes one of its inputs (`decider`) and a witness: `make` builds the finding. `same_origin`
/// selects rules overridden from their own file and layer (`dead-rule`) or from another
/// (`overridden-by-later-layer`).
pub fn each_dead_non_deny(
    ctx: &Ctx<'_>,
    reach: &[Vec<Option<Reach>>],
    from_same_origin: bool,
    out: &mut Vec<Finding>,
    make: impl Fn(&Agent, usize, &Rule, &Rule, Witness) -> Finding,
) {
    let mut memo = TailMemo::default();
    for (ai, agent) in ctx.project.agents.iter().enumerate() {
        for (i, r) in agent.rules.iter().enumerate() {
            if r.action == crate::model::Action::Deny {
                continue;
            }
            let Some(Reach::Dead(Some(ov))) = &reach[ai][i] else {
                continue;
            };
            let d = &agent.rules[ov.decider];
            if same_origin(r, d) != from_same_origin {
                continue;
            }
            memo.run(ctx, ai, i, out, || match ctx.witness(agent, &ov.input) {
                Some(w) => vec![make(agent, i, r, d, w)],
                None => Vec::new(),
            });
        }
    }
}
