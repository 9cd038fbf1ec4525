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
use subjects::{Obvious, friendly, subject_diff, unmatched};

mod subjects;

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

/// Rules of a permission OpenCode never checks (`write`: the write tool asks `edit`)
/// that decide differently for one agent: no decision OpenCode makes changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unchecked {
    pub agent: String,
    pub permission: String,
}

/// Everything that changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    pub changes: Vec<Change>,
    pub events: Vec<Event>,
    pub inconclusive: Vec<Inconclusive>,
    pub commands: Vec<CommandChange>,
    /// Changed rules that decide nothing OpenCode asks: said, not counted as changes.
    pub unchecked: Vec<Unchecked>,
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
    compare(base, head, budget, false)
}

/// [`diff`] of the rules as written: a permission OpenCode never asks (`write`) is
/// compared like any other, so a change to what its rules say is a change (`check --fix`
/// widens no block the author will rename to the permission OpenCode checks).
pub fn diff_as_written(base: &Project, head: &Project) -> Diff {
    compare(base, head, DIFF_BUDGET, true)
}

fn compare(base: &Project, head: &Project, budget: u64, as_written: bool) -> Diff {
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
            // A permission OpenCode never asks (`write`) decides no call, whatever its
            // rules say.
            if !as_written
                && others.is_none()
                && base.never_asks(name).is_some()
                && head.never_asks(name).is_some()
            {
                out.unchecked.push(Unchecked {
                    agent: h.name.clone(),
                    permission: name.clone(),
                });
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
