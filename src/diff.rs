//! `permaudit diff`: what a config change does to every agent's decisions, exactly.
//!
//! Two loaded projects (the *base* and the *head* side) are compared as decision functions:
//! for every agent present on both sides and every input `(permission, subject)`, does the
//! final effect (allow, ask, deny) differ? Agents present on one side only, and default
//! tools hidden or shown ([`crate::agents::hidden_tools`]), are reported as events.
//!
//! # Construction
//!
//! *Permission cells.* Every permission glob of every rule on either side is one component
//! of a product automaton over permission names; its cells ([`Product::cells`]) partition
//! **all** names by which globs match them, so two names in one cell see exactly the same
//! rules on both sides. A cell holding a literal glob is that one name (`bash`); the others
//! are "every other name these globs match" (for instance names matched by `*` alone), and
//! are covered too: nothing is left out, including the default `ask` of a name no rule
//! matches.
//!
//! *Subjects.* In one cell an agent's decision is a function of the subject alone: the last
//! rule, among those whose permission glob is in the cell, whose pattern matches. The two
//! rule lists are aligned (longest common subsequence by pattern and effect); a subject
//! decided differently has a rule the alignment leaves unmatched as its decider on one
//! side. So for each such rule that can decide (the last with its pattern on its side), one
//! product automaton over the subjects it decides: its pattern *required*, every later
//! pattern of its side and the common tail *excluded* ([`Product::cells_outside`]; only
//! their union matters, so families of excluded patterns that end alike merge). Its cells
//! give the deciding rule on the other side; past an eighth of the budget, one query per
//! rule that can decide there replaces them ([`Product::find_outside`]). Each pair of
//! deciding rules (base rule `i`, head rule `j`) is one *region* `D_base(i) ∩ D_head(j)`,
//! reported with the shortest witness found, or a friendlier one (the rules' literals with
//! `*` filled by ordinary text) when it lies in the same region.
//!
//! *Proof.* Every reported witness is re-decided on both sides by
//! [`crate::agents::evaluate`] over the agent's whole ruleset; a witness that did
//! not re-decide as claimed is reported as inconclusive, never as a change. A query past
//! its [`Budget`] is inconclusive too: never "no change".
//!
//! *Cost.* Agents usually share most rules, so results are cached by the pair of rule lists
//! (patterns and effects) of one cell, and an agent whose rules are the same on both sides
//! costs one comparison. Rule identity for the comparison is (permission, pattern, effect):
//! where a rule was written, its layer and its form do not change a decision.

use crate::agents::{Agent, Decision, hidden_tools};
use crate::glob::automaton::{Budget, Cell, DEFAULT_BUDGET, Product, Word};
use crate::glob::compiled::{CompiledRuleset, Want};
use crate::glob::{Platform, Wildcard};
use crate::model::{Effect, Rule};
use crate::project::Project;
use crate::shell::Request;
use crate::shell::decide::decide;
use serde::Serialize;
use std::collections::HashMap;

/// Work units the comparison of one pair of rule lists (one agent's permission cell) may
/// spend, all its searches together: products over every pattern of one permission,
/// larger than one rule's question in `check`.
pub const DIFF_BUDGET: u64 = 128 * DEFAULT_BUDGET;

/// What kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// deny → ask, deny → allow, ask → allow.
    Widened,
    /// allow → ask, allow → deny, ask → deny.
    Narrowed,
    /// An agent only the head side has.
    AgentAdded,
    /// An agent only the base side has.
    AgentRemoved,
    /// A default tool the model was not offered and now is.
    ToolShown,
    /// A default tool the model was offered and no longer is.
    ToolHidden,
}

impl Class {
    /// The class of an effect change (`before != after`).
    pub fn of(before: Effect, after: Effect) -> Class {
        let rank = |e: Effect| match e {
            Effect::Deny => 0,
            Effect::Ask => 1,
            Effect::Allow => 2,
        };
        if rank(after) > rank(before) {
            Class::Widened
        } else {
            Class::Narrowed
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Widened => "widened",
            Class::Narrowed => "narrowed",
            Class::AgentAdded => "agent-added",
            Class::AgentRemoved => "agent-removed",
            Class::ToolShown => "tool-shown",
            Class::ToolHidden => "tool-hidden",
        }
    }

    /// Does it let an agent do something it could not before (`--fail-on widened`)? A
    /// widened decision and a new agent do; a tool shown does not by itself (its calls are
    /// decided by the rules, whose widening is reported as such).
    pub fn widens(self) -> bool {
        matches!(self, Class::Widened | Class::AgentAdded)
    }
}

/// One region of inputs whose final effect changed for one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub agent: String,
    /// The witness's permission name.
    pub permission: String,
    /// `None` when the region is this one permission name; otherwise the permission globs
    /// (of either side) that match every name of the region and no other glob does: the
    /// change holds for every such name (`permission` is one of them).
    pub other_permissions: Option<Vec<String>>,
    /// The witness subject (a path, a command, …).
    pub input: String,
    pub before: Effect,
    pub after: Effect,
    /// The deciding rule on each side (index into the agent's rules; `None`: no rule
    /// matched, OpenCode's default ask).
    pub base_rule: Option<usize>,
    pub head_rule: Option<usize>,
    pub class: Class,
    /// The edited rule the change comes from: the head side's deciding rule when the
    /// alignment of the two rule lists leaves it unmatched (added, or its action or place
    /// changed), else the base side's (removed, or moved or changed away). Reports group
    /// regions by it: one line per cause.
    pub cause: Cause,
}

/// Which side's deciding rule a change comes from ([`Change::cause`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The head side's rule now decides (it was added or changed).
    Head,
    /// The base side's rule no longer decides (it was removed, moved or changed).
    Base,
}

/// An agent added or removed, or a tool shown or hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub agent: String,
    pub class: Class,
    /// For tool events: the tool id.
    pub tool: Option<String>,
}

/// A part of the input space the analysis could not finish within its budget: nothing is
/// claimed about it, neither a change nor its absence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconclusive {
    pub agent: String,
    /// A permission name of the undecided cell (`*` when the permission names themselves
    /// could not be partitioned).
    pub permission: String,
    pub reason: String,
}

/// A project command (`map --commands`) whose outcome changed for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandChange {
    /// Index into the commands handed to [`commands`].
    pub command: usize,
    pub agent: String,
    pub before: Effect,
    pub after: Effect,
    pub class: Class,
}

/// Everything that changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    pub changes: Vec<Change>,
    pub events: Vec<Event>,
    pub inconclusive: Vec<Inconclusive>,
    pub commands: Vec<CommandChange>,
}

impl Diff {
    /// No change in any decision, and every question answered.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
            && self.events.is_empty()
            && self.inconclusive.is_empty()
            && self.commands.is_empty()
    }

    /// Something lets an agent do what it could not before.
    pub fn widens(&self) -> bool {
        self.changes.iter().any(|c| c.class.widens())
            || self.events.iter().any(|e| e.class.widens())
            || self.commands.iter().any(|c| c.class.widens())
    }
}

/// A rule as a decision sees it.
type Key = (String, Effect);

/// Searches by the shape of one cell's pair of rule lists, and whether its subjects are
/// commands (see [`Obvious`]).
type Cache = HashMap<(Shape, bool), Entry>;

/// One subject search's cells by all it depends on: the patterns taking part (in order),
/// the searched one, the excluded ones and the order of the other side's components.
/// Shapes that differ only in rules a search leaves out (defaults before the edited rule,
/// say) share it.
type Searches = HashMap<(Vec<String>, usize, Vec<usize>, Vec<usize>, bool), Option<Vec<Cell>>>;

/// What the subject search of one cell depends on: the patterns of the two rule lists (from
/// each side's last catch-all), the length of their common tail and the rules the alignment
/// leaves unmatched. Effects only choose which of the pairs found are changes, so agents
/// whose lists differ only in effects both sides share (defaults a catch-all overrides
/// differently, say) share one search.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Shape {
    base: Vec<String>,
    head: Vec<String>,
    tail: usize,
    base_unmatched: Vec<usize>,
    head_unmatched: Vec<usize>,
}

impl Shape {
    fn new(bl: &[Key], hl: &[Key]) -> Shape {
        let mut tail = 0;
        while tail < bl.len()
            && tail < hl.len()
            && bl[bl.len() - 1 - tail] == hl[hl.len() - 1 - tail]
        {
            tail += 1;
        }
        let (base_unmatched, head_unmatched) =
            unmatched(&bl[..bl.len() - tail], &hl[..hl.len() - tail]);
        Shape {
            base: bl.iter().map(|(p, _)| p.clone()).collect(),
            head: hl.iter().map(|(p, _)| p.clone()).collect(),
            tail,
            base_unmatched,
            head_unmatched,
        }
    }
}

/// One search's result: every pair of deciding rules (positions in the shape's lists) that
/// some subject the unmatched rules reach has (`None`: past the budget), and the patterns
/// compiled for friendlier witnesses.
struct Entry {
    pairs: Option<Vec<Region>>,
    globs: Sides,
}

/// Each side's patterns, as written and compiled.
type Sides = (Vec<(String, Wildcard)>, Vec<(String, Wildcard)>);

impl Entry {
    fn new(shape: &Shape, obvious: Obvious, budget: u64, searches: &mut Searches) -> Entry {
        let compile = |l: &[String]| {
            l.iter()
                .map(|p| (p.clone(), Wildcard::compile(p)))
                .collect()
        };
        Entry {
            pairs: subject_diff(shape, obvious, budget, searches),
            globs: (compile(&shape.base), compile(&shape.head)),
        }
    }
}

fn key(r: &Rule) -> Key {
    (r.pattern.clone(), r.action.effective())
}

fn same_decisions(a: &[Rule], b: &[Rule]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.permission == y.permission
                && x.pattern == y.pattern
                && x.action.effective() == y.action.effective()
        })
}

/// One region of one cell: the positions (in the cell's rule lists) of the deciding rules,
/// the shortest witness subject and, once asked for, a friendlier one.
#[derive(Debug, Clone)]
struct Region {
    base: Option<usize>,
    head: Option<usize>,
    witness: Word,
    friendly: Option<Word>,
}

impl Region {
    fn friendly(&mut self, (cb, ch): &Sides, permission: &str, platform: Platform) -> &Word {
        if self.friendly.is_none() {
            self.friendly = Some(friendly(cb, ch, self, permission, platform));
        }
        self.friendly.get_or_insert_with(Word::default)
    }
}

/// Distinct globs, each compiled once.
#[derive(Default)]
struct Globs {
    text: Vec<String>,
    compiled: Vec<Wildcard>,
    index: HashMap<String, usize>,
}

impl Globs {
    fn intern(&mut self, g: &str) -> usize {
        if let Some(&k) = self.index.get(g) {
            return k;
        }
        self.text.push(g.to_string());
        self.compiled.push(Wildcard::compile(g));
        self.index.insert(g.to_string(), self.text.len() - 1);
        self.text.len() - 1
    }

    fn get(&self, g: &str) -> Option<usize> {
        self.index.get(g).copied()
    }
}

/// Compare every agent's decisions; see the module docs.
pub fn diff(base: &Project, head: &Project) -> Diff {
    diff_with_budget(base, head, DIFF_BUDGET)
}

/// [`diff`] with another budget per query (tests use small ones to reach "inconclusive").
pub fn diff_with_budget(base: &Project, head: &Project, budget: u64) -> Diff {
    let platform = head.platform;
    let mut out = Diff::default();
    let pairs = agent_pairs(base, head, &mut out.events);

    // Permission cells over every permission glob of either side.
    let mut perms = Globs::default();
    for (b, h) in &pairs {
        for r in b.rules.iter().chain(&h.rules) {
            perms.intern(&r.permission);
        }
    }
    let refs: Vec<&Wildcard> = perms.compiled.iter().collect();
    let cells = match Product::new(&refs, platform).cells(&[], &mut Budget::new(budget)) {
        Ok(c) => c,
        Err(_) => {
            for (b, h) in &pairs {
                if !same_decisions(&b.rules, &h.rules) {
                    out.inconclusive.push(Inconclusive {
                        agent: h.name.clone(),
                        permission: "*".into(),
                        reason: "the permission names could not be partitioned within the budget"
                            .into(),
                    });
                }
            }
            return out;
        }
    };
    let names: Vec<(String, Option<Vec<String>>)> = cells
        .iter()
        .map(|c| cell_name(&perms, &c.accepting, &c.witness, platform))
        .collect();

    let mut cache: Cache = HashMap::new();
    let mut searches = Searches::new();
    let mut patterns = Patterns::default();
    for (b, h) in &pairs {
        if same_decisions(&b.rules, &h.rules) {
            continue;
        }
        tool_events(b, h, platform, &mut out.events);
        let perm_of = |r: &Rule| perms.get(&r.permission).unwrap_or(usize::MAX);
        let b_perm: Vec<usize> = b.rules.iter().map(perm_of).collect();
        let h_perm: Vec<usize> = h.rules.iter().map(perm_of).collect();
        for (cell, (name, others)) in cells.iter().zip(&names) {
            let mut member = vec![false; perms.text.len()];
            for &k in &cell.accepting {
                if let Some(m) = member.get_mut(k) {
                    *m = true;
                }
            }
            let pick = |perm: &[usize]| -> Vec<usize> {
                (0..perm.len())
                    .filter(|&i| member.get(perm[i]).copied().unwrap_or(false))
                    .collect()
            };
            let (bs, hs) = (pick(&b_perm), pick(&h_perm));
            let bl: Vec<Key> = bs.iter().map(|&i| key(&b.rules[i])).collect();
            let hl: Vec<Key> = hs.iter().map(|&i| key(&h.rules[i])).collect();
            if bl == hl {
                continue;
            }
            // Rules before the last catch-all of a side never decide in this cell: the
            // comparison starts there, so agents that differ only in defaults it overrides
            // share one search.
            let (ob, oh) = (live_from(&bl, &mut patterns), live_from(&hl, &mut patterns));
            let shape = Shape::new(&bl[ob..], &hl[oh..]);
            let commands = name == "bash";
            let entry = cache.entry((shape, commands)).or_insert_with_key(|(s, c)| {
                let obvious = Obvious {
                    platform,
                    commands: *c,
                };
                Entry::new(s, obvious, budget, &mut searches)
            });
            let Some(pairs) = &mut entry.pairs else {
                out.inconclusive.push(Inconclusive {
                    agent: h.name.clone(),
                    permission: name.clone(),
                    reason: "the subjects could not be compared within the budget".into(),
                });
                continue;
            };
            let (mut rb, mut rh) = (
                Redecider::new(&b.rules, name, &mut patterns, platform),
                Redecider::new(&h.rules, name, &mut patterns, platform),
            );
            let mut cause_of: Option<Vec<usize>> = None;
            for pair in pairs.iter_mut() {
                let (pb, ph) = (pair.base.map(|p| p + ob), pair.head.map(|p| p + oh));
                let effect = |l: &[Key], p: Option<usize>| p.map_or(Effect::Ask, |p| l[p].1);
                let (before, after) = (effect(&bl, pb), effect(&hl, ph));
                if before == after {
                    continue;
                }
                // The cause, by the alignment of the whole lists (the shape's starts at
                // the last catch-all, which may be the edit itself).
                let head_unmatched = cause_of.get_or_insert_with(|| unmatched(&bl, &hl).1);
                let head_changed = ph.is_some_and(|p| head_unmatched.binary_search(&p).is_ok());
                let subject = pair.friendly(&entry.globs, name, platform).clone();
                let claim = (pb.map(|p| bs[p]), ph.map(|p| hs[p]));
                let (db, dh) = (rb.decide(&subject), rh.decide(&subject));
                if (db, dh) != claim || rb.effect(db) != before || rh.effect(dh) != after {
                    out.inconclusive.push(Inconclusive {
                        agent: h.name.clone(),
                        permission: name.clone(),
                        reason: format!("witness {subject} did not re-decide as claimed"),
                    });
                    continue;
                }
                out.changes.push(Change {
                    agent: h.name.clone(),
                    permission: name.clone(),
                    other_permissions: others.clone(),
                    input: subject.to_string(),
                    before,
                    after,
                    base_rule: claim.0,
                    head_rule: claim.1,
                    class: Class::of(before, after),
                    cause: if head_changed {
                        Cause::Head
                    } else {
                        Cause::Base
                    },
                });
            }
        }
    }
    out
}

/// Every distinct glob of the run, compiled once, with its catch-all test.
#[derive(Default)]
struct Patterns {
    compiled: HashMap<String, (Wildcard, bool)>,
}

impl Patterns {
    fn get(&mut self, p: &str) -> &(Wildcard, bool) {
        self.compiled.entry(p.to_string()).or_insert_with(|| {
            let universal = crate::glob::analysis::Fixed::new(p).universal();
            (Wildcard::compile(p), universal)
        })
    }
}

/// The position of the last rule whose pattern matches every subject (0 if none): rules
/// before it never decide.
fn live_from(l: &[Key], patterns: &mut Patterns) -> usize {
    l.iter().rposition(|(p, _)| patterns.get(p).1).unwrap_or(0)
}

/// The decision of a whole ruleset for one permission name, as
/// [`crate::agents::evaluate`] makes it (the last rule whose permission glob matches
/// the name and whose pattern matches the subject), with the rules whose permission glob
/// matches the name picked once and every pattern compiled once. A word holding a lone
/// surrogate, which no `&str` can, is matched unit by unit the same way.
struct Redecider<'r> {
    rules: &'r [Rule],
    /// Rules whose permission glob matches the name: (index, compiled pattern).
    candidates: Vec<(usize, Wildcard)>,
    platform: Platform,
}

impl<'r> Redecider<'r> {
    fn new(
        rules: &'r [Rule],
        permission: &str,
        patterns: &mut Patterns,
        platform: Platform,
    ) -> Self {
        let name = Word::from(permission);
        let mut candidates = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if patterns
                .get(&r.permission)
                .0
                .is_match_units(name.units(), platform)
            {
                candidates.push((i, patterns.get(&r.pattern).0.clone()));
            }
        }
        Redecider {
            rules,
            candidates,
            platform,
        }
    }

    fn decide(&mut self, subject: &Word) -> Option<usize> {
        self.candidates
            .iter()
            .rev()
            .find(|(_, g)| g.is_match_units(subject.units(), self.platform))
            .map(|(i, _)| *i)
    }

    fn effect(&self, rule: Option<usize>) -> Effect {
        rule.and_then(|i| self.rules.get(i))
            .map_or(Effect::Ask, |r| r.action.effective())
    }
}

/// Agents on both sides, by config key (head's order), and the added and removed ones.
fn agent_pairs<'p>(
    base: &'p Project,
    head: &'p Project,
    events: &mut Vec<Event>,
) -> Vec<(&'p Agent, &'p Agent)> {
    let mut pairs = Vec::new();
    for h in &head.agents {
        match base.agents.iter().find(|b| b.name == h.name) {
            Some(b) => pairs.push((b, h)),
            None => events.push(Event {
                agent: h.name.clone(),
                class: Class::AgentAdded,
                tool: None,
            }),
        }
    }
    for b in &base.agents {
        if !head.agents.iter().any(|h| h.name == b.name) {
            events.push(Event {
                agent: b.name.clone(),
                class: Class::AgentRemoved,
                tool: None,
            });
        }
    }
    pairs
}

fn tool_events(b: &Agent, h: &Agent, platform: Platform, events: &mut Vec<Event>) {
    let (hb, hh) = (
        hidden_tools(&b.rules, platform),
        hidden_tools(&h.rules, platform),
    );
    for t in crate::agents::DEFAULT_TOOLS {
        let class = match (hb.contains(&t), hh.contains(&t)) {
            (true, false) => Class::ToolShown,
            (false, true) => Class::ToolHidden,
            _ => continue,
        };
        events.push(Event {
            agent: h.name.clone(),
            class,
            tool: Some(t.to_string()),
        });
    }
}

/// Names people know, tried as a cell's example before its shortest member.
const KNOWN_PERMISSIONS: [&str; 20] = [
    "bash",
    "read",
    "edit",
    "glob",
    "grep",
    "list",
    "task",
    "skill",
    "webfetch",
    "websearch",
    "codesearch",
    "todowrite",
    "todoread",
    "lsp",
    "question",
    "external_directory",
    "doom_loop",
    "write",
    "patch",
    "mcp_tool",
];

/// A permission cell's example name and, when the cell is more than one name, the globs
/// that describe it.
fn cell_name(
    perms: &Globs,
    accepting: &[usize],
    witness: &Word,
    platform: Platform,
) -> (String, Option<Vec<String>>) {
    let literal = accepting.iter().find_map(|&k| {
        let g = perms.compiled.get(k)?;
        let t = perms.text.get(k)?;
        (!g.optional_tail
            && g.tokens
                .iter()
                .all(|t| matches!(t, crate::glob::wildcard::Token::Lit(_))))
        .then(|| t.clone())
    });
    if let Some(l) = literal {
        return (l, None);
    }
    let globs: Vec<String> = accepting
        .iter()
        .filter_map(|&k| perms.text.get(k).cloned())
        .collect();
    let signature = |name: &str| -> Vec<usize> {
        perms
            .compiled
            .iter()
            .enumerate()
            .filter(|(_, g)| g.is_match(name, platform))
            .map(|(k, _)| k)
            .collect()
    };
    let filled = globs.iter().flat_map(|g| fills(g));
    let name = KNOWN_PERMISSIONS
        .iter()
        .map(|s| s.to_string())
        .chain(filled)
        .filter(|n| !n.is_empty())
        .find(|n| signature(n) == accepting)
        .unwrap_or_else(|| witness.to_string());
    (name, Some(globs))
}

/// A glob with its wildcards filled by ordinary text: `git push *` → `git push a`,
/// `src/**` → `src/a`, `*.env` → `a.env`; then with nothing (`git push`, `src/`).
fn fills(glob: &str) -> Vec<String> {
    ["a", "", "x/a"]
        .iter()
        .map(|f| glob.replace("**", "*").replace('*', f).replace('?', "a"))
        .collect()
}

/// Every pair of deciding rules (positions in the shape's lists) that a subject decided by
/// an unmatched rule has, with the shortest such subject; `None` past the budget. Which
/// pairs are changes is the caller's question (it knows the effects).
///
/// A subject decided differently has an unmatched rule as its decider on at least one side
/// (see [`unmatched`]). For each pattern `u` of an unmatched rule and each side `S` where
/// the last rule with pattern `u` is unmatched (at position `o`), one search over
/// `L(u) \ ⋃ L(S's patterns after o)` (minus the common tail): exactly the subjects that
/// rule decides on `S`. The other side's decider varies; the cells of the product tell it
/// apart, with two reductions that keep the search linear in families of patterns:
/// a pattern that can decide on neither side there takes no part, and the components that
/// a universal one overrides on the other side are forgotten ([`Product::forget`]).
fn subject_diff(
    shape: &Shape,
    obvious: Obvious,
    budget: u64,
    searches: &mut Searches,
) -> Option<Vec<Region>> {
    let platform = obvious.platform;
    let (bl, hl, k) = (&shape.base, &shape.head, shape.tail);
    let (bp, hp, common) = (
        &bl[..bl.len() - k],
        &hl[..hl.len() - k],
        &bl[bl.len() - k..],
    );
    let mut pats = Globs::default();
    let tail: Vec<usize> = common.iter().map(|p| pats.intern(p)).collect();
    if tail
        .iter()
        .any(|&e| crate::glob::analysis::Fixed::new(&pats.text[e]).universal())
    {
        return Some(Vec::new());
    }
    let comp = |l: &[String], pats: &mut Globs| -> Vec<Option<usize>> {
        l.iter()
            .map(|p| {
                let n = pats.text.len();
                let c = pats.intern(p);
                // A pattern of the common tail never decides outside it.
                (c >= n || !tail.contains(&c)).then_some(c)
            })
            .collect()
    };
    let bc = comp(bp, &mut pats);
    let hc = comp(hp, &mut pats);
    let last = |l: &[Option<usize>], c: usize| l.iter().rposition(|&x| x == Some(c));
    // (pattern, whether the searched side is the base, position of the deciding rule).
    let mut todo: Vec<(usize, bool, usize)> = Vec::new();
    for (is_base, own, unmatched) in [
        (true, &bc, &shape.base_unmatched),
        (false, &hc, &shape.head_unmatched),
    ] {
        let mut us: Vec<usize> = unmatched.iter().filter_map(|&i| own[i]).collect();
        us.sort_unstable();
        us.dedup();
        for u in us {
            // Only the last rule with pattern `u` can decide on this side; an earlier
            // unmatched one never does.
            if let Some(o) = last(own, u).filter(|o| unmatched.binary_search(o).is_ok()) {
                todo.push((u, is_base, o));
            }
        }
    }
    todo.sort_by_key(|&(u, ..)| u);
    // Only the patterns that can share a subject with `u` (prefix and suffix tests,
    // [`Fixed::disjoint`]) take part in its search: the others match nothing there.
    use crate::glob::analysis::Fixed;
    let fixed: Vec<Fixed> = pats.text.iter().map(|t| Fixed::new(t)).collect();
    // All the searches of one pair of rule lists share the budget.
    let mut total = Budget::new(budget);
    let mut regions: Vec<Region> = Vec::new();
    let mut seen: std::collections::HashSet<(Option<usize>, Option<usize>)> =
        std::collections::HashSet::new();
    for (u, is_base, o) in todo {
        let (own, other) = if is_base { (&bc, &hc) } else { (&hc, &bc) };
        let mut excluded: Vec<usize> = own[o + 1..].iter().flatten().copied().collect();
        excluded.extend(&tail);
        excluded.sort_unstable();
        excluded.dedup();
        // On the other side, a pattern whose last rule comes before `u`'s last never
        // decides a subject of `L(u)`; on this side, only `o` decides.
        let at = last(other, u);
        let decides = |c: usize| match (last(other, c), at) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(pc), Some(pu)) => pc > pu,
        };
        let keep: Vec<usize> = (0..pats.text.len())
            .filter(|&c| {
                c == u
                    || (!fixed[c].disjoint(&fixed[u], platform)
                        && (excluded.binary_search(&c).is_ok() || decides(c)))
            })
            .collect();
        let local = |c: usize| keep.binary_search(&c).ok();
        let lu = local(u)?;
        let lexcl: Vec<usize> = excluded.iter().filter_map(|&c| local(c)).collect();
        let lother: Vec<Option<usize>> = other.iter().map(|c| c.and_then(local)).collect();
        let key = (
            keep.iter().map(|&c| pats.text[c].clone()).collect(),
            lu,
            lexcl.clone(),
            lother.iter().flatten().copied().collect(),
            obvious.commands,
        );
        let cells = searches.entry(key).or_insert_with(|| {
            let refs: Vec<&Wildcard> = keep.iter().map(|&c| &pats.compiled[c]).collect();
            let product = Product::new(&refs, platform);
            // With one possible decider on the other side there is one query to make; over
            // a family of patterns, the cells (every combination of its members that can
            // decide there) are too many, and most per-decider queries are answered by an
            // obvious subject.
            if keep.len() > CELLS_MAX_PATTERNS
                || OtherSide::new(product.component_count(), &lexcl, &lother)
                    .candidates(lu)
                    .len()
                    <= 1
            {
                return by_decider(&product, &refs, obvious, lu, &lexcl, &lother, &mut total);
            }
            let forget = forgets(&product, &lother, lu, &lexcl);
            // The cells first (one search for every decider); past an eighth of the
            // budget, one query per decider instead.
            let mut first = total.take(budget / 8);
            match product.cells_outside(&[lu], &lexcl, &[], &forget, &mut first) {
                Ok(cells) => {
                    total.refund(first);
                    Some(cells)
                }
                Err(_) => by_decider(&product, &refs, obvious, lu, &lexcl, &lother, &mut total),
            }
        });
        let cells = cells.as_ref()?;
        let mut member = vec![false; keep.len()];
        for cell in cells {
            member.iter_mut().for_each(|m| *m = false);
            for &a in cell.accepting.iter().chain([lu].iter()) {
                if let Some(m) = member.get_mut(a) {
                    *m = true;
                }
            }
            let decider = |c: &[Option<usize>]| {
                c.iter()
                    .rposition(|x| x.is_some_and(|x| member.get(x).copied().unwrap_or(false)))
            };
            let (od, td) = (Some(o), decider(&lother));
            let (bd, hd) = if is_base { (od, td) } else { (td, od) };
            if seen.insert((bd, hd)) {
                regions.push(Region {
                    base: bd,
                    head: hd,
                    witness: cell.witness.clone(),
                    friendly: None,
                });
            }
        }
    }
    Some(regions)
}

/// [`subject_diff`]'s search one decider at a time, for when the cells (every combination
/// of the other side's patterns) are too many to list: for each component `c` that can
/// decide on the other side (one whose last rule there comes after `u`'s last, `u` itself
/// there, or none at all when `u` has no rule there), one query for a shortest subject of
/// `L(u) ∩ L(c)` that no excluded pattern and no pattern of the other side after `c`
/// matches. The excluded patterns then include nearly every pattern, and their families
/// merge ([`Product::find_outside`]), so each query is small. Before a query, a few
/// obvious subjects are tried concretely ([`obvious_outside`]): on a family of hundreds of
/// patterns most queries have one (`git push --force ~/.vault` for `git push --force*` and
/// `*~/.vault*`), and only those without one, mostly the empty ones, are searched. Each
/// answer is given as a cell whose accepting components are `c` alone: the caller reads
/// only the decider.
fn by_decider(
    product: &Product,
    globs: &[&Wildcard],
    obvious: Obvious,
    lu: usize,
    lexcl: &[usize],
    lother: &[Option<usize>],
    budget: &mut Budget,
) -> Option<Vec<Cell>> {
    use crate::glob::automaton::Outcome;
    let n = product.component_count();
    let other = OtherSide::new(n, lexcl, lother);
    let mut out = Vec::new();
    for c in other.candidates(lu) {
        let floor = c.and_then(|c| other.last(c));
        let mut excluded = lexcl.to_vec();
        excluded.extend(
            (0..n).filter(|&k| {
                other.last(k).is_some_and(|pk| floor.is_none_or(|f| pk > f)) && k != lu
            }),
        );
        excluded.sort_unstable();
        excluded.dedup();
        let required: Vec<usize> = std::iter::once(lu).chain(c.filter(|&c| c != lu)).collect();
        let witness = match obvious_outside(globs, &required, &excluded, obvious) {
            Some(w) => w,
            None => match product.find_outside(&required, &excluded, budget) {
                Outcome::Witness(w) => w,
                Outcome::Empty => continue,
                Outcome::Inconclusive => return None,
            },
        };
        out.push(Cell {
            accepting: c.filter(|&c| c != lu).into_iter().collect(),
            witness,
        });
    }
    Some(out)
}

/// How [`obvious_outside`] reads subjects: the platform's matching, and whether they are
/// commands (whose words a space separates) or paths, URLs and names (glued).
#[derive(Debug, Clone, Copy)]
struct Obvious {
    platform: Platform,
    commands: bool,
}

/// Past this many patterns taking part in a search, [`subject_diff`] asks one query per
/// possible decider ([`by_decider`]) without first trying to list the cells.
const CELLS_MAX_PATTERNS: usize = 64;

/// The other side of a search: where each of its `n` components last has a rule there
/// (`lother`), the `excluded` ones (which never decide) left out.
struct OtherSide<'a> {
    at: Vec<Option<usize>>,
    excluded: &'a [usize],
}

impl<'a> OtherSide<'a> {
    fn new(n: usize, excluded: &'a [usize], lother: &[Option<usize>]) -> OtherSide<'a> {
        OtherSide {
            at: last_positions(lother, n),
            excluded,
        }
    }

    /// The position of component `k`'s last rule there, if it can decide there.
    fn last(&self, k: usize) -> Option<usize> {
        self.at
            .get(k)
            .copied()
            .flatten()
            .filter(|_| self.excluded.binary_search(&k).is_err())
    }

    /// The components that can decide a subject of `lu` there: those whose last rule comes
    /// after `lu`'s last, `lu` itself, or, when `lu` has no rule there, any (and `None`, no
    /// rule at all).
    fn candidates(&self, lu: usize) -> Vec<Option<usize>> {
        let n = self.at.len();
        match self.last(lu) {
            Some(pu) => (0..n)
                .filter(|&c| self.last(c).is_some_and(|pc| c == lu || pc > pu))
                .map(Some)
                .collect(),
            None => std::iter::once(None)
                .chain((0..n).filter(|&c| self.last(c).is_some()).map(Some))
                .collect(),
        }
    }
}

/// A subject every `required` glob matches and no `excluded` one does, among the obvious
/// ones: each required glob with its wildcards read as nothing or as `x`
/// ([`Wildcard::fill_units`]), and two such fills joined, in either order, with or without
/// a space between or overlapped; the shortest that works (a space not counted). Checked with the matcher
/// itself, so an answer is exact (a member of the difference, as a search's witness would
/// be); `None` says nothing.
fn obvious_outside(
    globs: &[&Wildcard],
    required: &[usize],
    excluded: &[usize],
    obvious: Obvious,
) -> Option<Word> {
    let platform = obvious.platform;
    let fills: Vec<Vec<u16>> = required
        .iter()
        .filter_map(|&r| globs.get(r))
        .flat_map(|g| [g.fill_units(&[]), g.fill_units(&[u16::from(b'x')])])
        .collect();
    // Shortest first; between commands' words, a join with a space counts as long as the
    // glued one and comes first (`git add ~/.vault`, not `git add~/.vault`), except at a
    // `/` (`src/` and `/vendor/` overlap or glue as a path does).
    let slash = u16::from(b'/');
    let mut candidates: Vec<(usize, bool, Vec<u16>)> =
        fills.iter().map(|f| (f.len(), true, f.clone())).collect();
    for a in &fills {
        for b in &fills {
            if a != b {
                let glued = [a.as_slice(), b.as_slice()].concat();
                let spaced = [a.as_slice(), &[u16::from(b' ')], b.as_slice()].concat();
                let at_slash = a.last() == Some(&slash) || b.first() == Some(&slash);
                candidates.push((glued.len(), true, glued));
                if at_slash || !obvious.commands {
                    candidates.push((spaced.len(), true, spaced));
                } else {
                    candidates.push((spaced.len() - 1, false, spaced));
                }
                // Overlapped where `a` ends as `b` begins (`src/new/` and `/vendor/`).
                for k in 1..a.len().min(b.len()) {
                    if a.ends_with(&b[..k]) {
                        let o = [a.as_slice(), &b[k..]].concat();
                        candidates.push((o.len(), true, o));
                    }
                }
            }
        }
    }
    candidates.sort();
    candidates.dedup();
    let matches =
        |k: &usize, s: &[u16]| globs.get(*k).is_some_and(|g| g.is_match_units(s, platform));
    candidates
        .into_iter()
        .map(|(_, _, s)| s)
        .find(|s| required.iter().all(|k| matches(k, s)) && !excluded.iter().any(|k| matches(k, s)))
        .map(Word::from_units)
}

/// For each of `n` components, the position of the last rule with it in `list`.
fn last_positions(list: &[Option<usize>], n: usize) -> Vec<Option<usize>> {
    let mut at = vec![None; n];
    for (i, c) in list.iter().enumerate() {
        if let Some(slot) = c.and_then(|c| at.get_mut(c)) {
            *slot = Some(i);
        }
    }
    at
}

/// For each component `k` that can become universal (its pattern ends in `*`), the
/// components it overrides on the searched side's other side (`other`): those whose last
/// rule there comes before `k`'s, or that have none. Once `k` matches every continuation
/// they decide nothing on either side (on the searched side only the searched rule does),
/// so they are forgotten; never the searched component `u` nor an `excluded` one, which
/// the search needs to the end.
fn forgets(
    product: &Product,
    other: &[Option<usize>],
    u: usize,
    excluded: &[usize],
) -> Vec<crate::glob::automaton::Forget> {
    let n = product.component_count();
    let at = last_positions(other, n);
    let mut out = Vec::new();
    for k in 0..n {
        let Some(pk) = at[k] else { continue };
        let clear: Vec<usize> = (0..n)
            .filter(|&c| {
                c != k
                    && c != u
                    && excluded.binary_search(&c).is_err()
                    && at[c].is_none_or(|pc| pc < pk)
            })
            .collect();
        if !clear.is_empty() {
            out.push(product.forget(k, &clear));
        }
    }
    out
}

/// The rules of `b` and of `h` that a longest common subsequence (by pattern and effect)
/// leaves unmatched. Any monotone matching of equal rules has this property: a subject
/// matched only by matched rules has, on each side, the partner of the other side's
/// decider as its decider (the matching is a bijection between the matching rules that
/// keeps their order), so it is decided alike. Past [`MAX_ALIGN`] cells of the table the
/// middle is left all unmatched, which is weaker but as sound.
fn unmatched(b: &[Key], h: &[Key]) -> (Vec<usize>, Vec<usize>) {
    let pre = b.iter().zip(h).take_while(|(x, y)| x == y).count();
    let (bm, hm) = (&b[pre..], &h[pre..]);
    let (n, m) = (bm.len(), hm.len());
    if n.saturating_mul(m) > MAX_ALIGN {
        return ((pre..b.len()).collect(), (pre..h.len()).collect());
    }
    // lcs[i][j]: LCS length of bm[i..] and hm[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if bm[i] == hm[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut bu, mut hu) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if bm[i] == hm[j] {
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * w + j] >= lcs[i * w + j + 1] {
            bu.push(pre + i);
            i += 1;
        } else {
            hu.push(pre + j);
            j += 1;
        }
    }
    bu.extend((i..n).map(|i| pre + i));
    hu.extend((j..m).map(|j| pre + j));
    (bu, hu)
}

/// Most cells of the alignment table (rules × rules of one permission cell).
const MAX_ALIGN: usize = 4_000_000;

/// How [`friendly`] orders candidates: an everyday input, its plausibility, its shortness.
type Rank = (bool, i32, std::cmp::Reverse<usize>);

/// Candidates [`friendly`] decides at most per region (each one a pass over both rule
/// lists), best first.
const FRIENDLY_TRIES: usize = 6;

/// A recognisable subject in the same region as the automaton's witness: the deciding
/// rules' patterns filled with ordinary text (the checks' everyday inputs for a catch-all,
/// `a`, nothing, `x/a`, and the checks' fillers for the permission: `git push origin`), a
/// few generic inputs, and the witness itself;
/// of those the region holds, the one that reads most like a real input of the permission
/// ([`plausibility`](crate::checks::examples::plausibility), then the shortest):
/// `git reset --hard`, not `git reset --harda`.
fn friendly(
    cb: &[(String, Wildcard)],
    ch: &[(String, Wildcard)],
    r: &Region,
    permission: &str,
    platform: Platform,
) -> Word {
    use crate::checks::examples::{everyday, ordinary_fills, plausibility};
    let decider = |l: &[(String, Wildcard)], s: &Word| {
        l.iter()
            .rposition(|(_, g)| g.is_match_units(s.units(), platform))
    };
    // The everyday inputs first (what a reader pictures for a catch-all: `npm test`,
    // `https://example.com`); then the most plausible, then the shortest (`git reset
    // --hard` over `git reset --harda`).
    let mut candidates: Vec<(bool, String)> = Vec::new();
    for (l, p) in [(ch, r.head), (cb, r.base)] {
        if let Some((pat, _)) = p.and_then(|p| l.get(p)) {
            candidates.extend(
                everyday(permission, pat)
                    .iter()
                    .map(|s| (true, s.to_string())),
            );
            candidates.extend(fills(pat).into_iter().map(|s| (false, s)));
            candidates.extend(
                ordinary_fills(permission, pat)
                    .into_iter()
                    .map(|s| (false, s)),
            );
        }
    }
    // A command decided by two patterns: their words, joined as a person types them
    // (`brew ~/.vault` for `brew*` and `*~/.vault*`).
    let commands = permission == "bash";
    if commands
        && let (Some((_, h)), Some((_, b))) = (
            r.head.and_then(|p| ch.get(p)),
            r.base.and_then(|p| cb.get(p)),
        )
    {
        let (h, b) = (h.fill(""), b.fill(""));
        candidates.extend([format!("{h} {b}"), format!("{b} {h}")].map(|s| (false, s)));
    }
    candidates.extend(["a", "src/a.ts", "x"].map(|s| (false, s.to_string())));
    // A command's spaces are not counted: `brew ~/.vault` is as short as `brew~/.vault`.
    let rank = |daily: bool, c: &str| -> Rank {
        let length = c.chars().filter(|&ch| !(commands && ch == ' ')).count();
        (
            daily,
            plausibility(permission, c),
            std::cmp::Reverse(length),
        )
    };
    // Best first (stable: equals in the order listed); the first in the region wins, and
    // none ranked below the witness is tried.
    let mut ranked: Vec<(Rank, &str)> = candidates
        .iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(daily, c)| (rank(*daily, c), c.as_str()))
        .collect();
    ranked.sort_by_key(|x| std::cmp::Reverse(x.0));
    let floor = r.witness.to_exact_string().map(|s| rank(false, &s));
    // A subject of the region matches its deciding patterns: a cheap test before the
    // decisions over both lists, which are the ones counted.
    let deciding = |l: &[(String, Wildcard)], p: Option<usize>, w: &Word| {
        p.is_none_or(|p| {
            l.get(p)
                .is_some_and(|(_, g)| g.is_match_units(w.units(), platform))
        })
    };
    let (mut tried, mut decided) = (std::collections::HashSet::new(), 0);
    for (score, c) in ranked {
        if floor.is_some_and(|f| score < f) {
            break;
        }
        if !tried.insert(c) {
            continue;
        }
        let w = Word::from(c);
        if !deciding(cb, r.base, &w) || !deciding(ch, r.head, &w) {
            continue;
        }
        decided += 1;
        if decided > FRIENDLY_TRIES {
            break;
        }
        if decider(cb, &w) == r.base && decider(ch, &w) == r.head {
            return w;
        }
    }
    r.witness.clone()
}

/// The project commands (already split, `requests[k]` for command `k`) whose outcome, as
/// the bash tool decides it, differs between the sides, for each agent on both sides.
pub fn commands(base: &Project, head: &Project, requests: &[Request]) -> Vec<CommandChange> {
    let platform = head.platform;
    let mut out = Vec::new();
    let mut events = Vec::new();
    let mut scratch = Vec::new();
    for (b, h) in agent_pairs(base, head, &mut events) {
        if same_decisions(&b.rules, &h.rules) {
            continue;
        }
        let compile = |a: &Agent, perm: &str| {
            CompiledRuleset::new(
                a.rules
                    .iter()
                    .map(|r| (r.permission.as_str(), r.pattern.as_str())),
                perm,
                platform,
                Want::Last,
            )
        };
        let mut sides = [
            (b, compile(b, "bash"), compile(b, "external_directory")),
            (h, compile(h, "bash"), compile(h, "external_directory")),
        ];
        for (k, req) in requests.iter().enumerate() {
            let mut effects = [Effect::Ask; 2];
            for (e, (a, bash, ext)) in effects.iter_mut().zip(sides.iter_mut()) {
                *e = decide(req, |perm, pattern| {
                    let c = if perm == "bash" {
                        &mut *bash
                    } else {
                        &mut *ext
                    };
                    c.matching(pattern, &mut scratch);
                    let rule = scratch.last().copied();
                    Decision {
                        rule,
                        effect: rule.map_or(Effect::Ask, |i| a.rules[i].action.effective()),
                        overridden: Vec::new(),
                    }
                })
                .effect;
            }
            if effects[0] != effects[1] {
                out.push(CommandChange {
                    command: k,
                    agent: h.name.clone(),
                    before: effects[0],
                    after: effects[1],
                    class: Class::of(effects[0], effects[1]),
                });
            }
        }
    }
    out
}
