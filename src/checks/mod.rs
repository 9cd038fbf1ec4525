//! Checks: proven findings over each agent's merged ruleset.
//!
//! One file per finding kind, its documentation at the top (shown by `permaudit rule ID`).
//! Findings are data; `report` renders them. Every claim about reachability comes from the
//! exact automata of [`crate::glob::analysis`]; past the budget a check says nothing rather
//! than guess, and the `inconclusive` finding names the rule.

pub mod agent_overrides_shared;
pub mod always_overrides_deny;
pub mod broken_frontmatter;
mod catch_all_last;
pub mod correlated_rules;
pub mod dead_rule;
pub mod delegation_escalation;
pub mod deny_bypass;
mod engines;
pub mod env_injection;
pub mod examples;
pub mod headless_ask;
pub mod ignore_without_reason;
pub mod ignored_key;
pub mod inconclusive;
pub mod js_key_order;
pub mod legacy_tools;
pub mod never_matches;
pub mod overlap;
pub mod overridden_by_later_layer;
pub mod read_only_agent_writes;
pub mod sample_mismatch;
pub mod secret_readable;
pub mod self_modification;
pub mod shadowed_ask;
pub mod shadowed_deny;
pub mod stale_baseline;
pub mod unchecked_permission;
pub mod unknown_agent_key;
pub mod unusable_allow;
pub mod unused_ignore;

use crate::agents::{Agent, evaluate};
use crate::glob::analysis::{Analysis, Fixed, Input};
use crate::glob::compiled::{MultiGlob, Want};
use crate::model::{Effect, Layer, Rule};

use crate::project::Project;
use crate::source::Loc;
pub use engines::Engines;
use serde::Serialize;
use std::fmt;
use std::rc::Rc;

/// How serious a finding is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
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
    /// Every agent the finding holds for, in `opencode agent list` order; empty when it is
    /// not about an agent (a broken file, a substitution). One finding per place: a shared
    /// rule that misbehaves in seven agents is one finding naming seven agents.
    pub agents: Vec<String>,
    /// Index into the rules of `agents[0]` (the agent the finding was proven on; witness
    /// `rule`s index the same agent), the other agents follow in list order.
    pub rule: Option<usize>,
    pub loc: Option<Loc>,
    pub message: String,
    /// Other places involved, with what they did.
    pub related: Vec<(Loc, String)>,
    pub witnesses: Vec<Witness>,
    pub help: Option<String>,
}

impl Finding {
    /// `check`'s finding at rule `i` of `agent` (the rule's place, the agent named), at the
    /// check's level, with no related place, witness or help yet.
    pub fn at_rule(check: &Check, agent: &Agent, i: usize, message: String) -> Finding {
        Finding {
            id: check.id,
            level: check.level,
            agents: vec![agent.name.clone()],
            rule: Some(i),
            loc: agent.rules.get(i).and_then(|r| r.loc),
            message,
            related: Vec::new(),
            witnesses: Vec::new(),
            help: None,
        }
    }

    pub fn with_level(self, level: Level) -> Finding {
        Finding { level, ..self }
    }

    pub fn with_help(self, help: String) -> Finding {
        Finding {
            help: Some(help),
            ..self
        }
    }

    /// Other places involved, with what they did.
    pub fn with_related(self, related: Vec<(Loc, String)>) -> Finding {
        Finding { related, ..self }
    }

    pub fn with_witnesses(self, witnesses: Vec<Witness>) -> Finding {
        Finding { witnesses, ..self }
    }
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
    read_only_agent_writes::CHECK,
    shadowed_deny::CHECK,
    shadowed_ask::CHECK,
    correlated_rules::CHECK,
    unusable_allow::CHECK,
    dead_rule::CHECK,
    overridden_by_later_layer::CHECK,
    agent_overrides_shared::CHECK,
    unchecked_permission::CHECK,
    unknown_agent_key::CHECK,
    never_matches::CHECK,
    // After the rule-order kinds: at a place both speak for, the rule-order finding does
    // (these two sit on an agent's first deny only to have a place).
    self_modification::CHECK,
    deny_bypass::CHECK,
    broken_frontmatter::CHECK,
    ignored_key::CHECK,
    legacy_tools::CHECK,
    // At a place another kind also speaks for (a legacy `tools: {write: false}`), at the
    // same level, that kind's finding is the one to read.
    delegation_escalation::CHECK,
    headless_ask::CHECK,
    js_key_order::CHECK,
    env_injection::CHECK,
    secret_readable::CHECK,
    always_overrides_deny::CHECK,
    inconclusive::CHECK,
    sample_mismatch::CHECK,
    ignore_without_reason::CHECK,
    unused_ignore::CHECK,
    stale_baseline::CHECK,
];

pub fn find_check(id: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.id == id)
}

/// Which user rules a pass judges (see [`run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Rules of shared files (global and project configs, env, top-level `tools`), judged
    /// over every agent's ruleset *without the agents' own rules*: an agent's own block
    /// overriding a shared rule is what per-agent blocks are for, not a mistake.
    Shared,
    /// Rules an agent wrote for itself (agent config, markdown agent, mode, its `tools`),
    /// judged over its full ruleset.
    Own,
    /// Every user rule, over the full rulesets (checks that are not about rule order).
    All,
}

/// Is the layer a shared file's (every agent gets its rules)?
pub fn is_shared(layer: Layer) -> bool {
    matches!(
        layer,
        Layer::Global
            | Layer::OpencodeConfig
            | Layer::Project
            | Layer::DotOpencode
            | Layer::HomeDotOpencode
            | Layer::ConfigDir
            | Layer::ConfigContent
            | Layer::Managed
            | Layer::EnvPermission
            | Layer::LegacyTools
    )
}

/// Is the layer one an agent wrote for itself?
pub fn is_own(layer: Layer) -> bool {
    matches!(
        layer,
        Layer::AgentConfig | Layer::AgentLegacyTools | Layer::MarkdownAgent | Layer::Mode
    )
}

/// Shared state of one pass: the agents it looks at (the project's, or the shared view of
/// them), each one's analysis and compiled globs, built once.
/// The edit distance between two words (insertions, deletions, substitutions).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate `word` (lower-cased) is most likely a typo of: at most two edits away, and
/// fewer than half the candidate's length (ties: the smallest name). The one did-you-mean of
/// permaudit: permission names, agent keys, settings keys and finding kinds.
pub fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&lower, c), c))
        .min()
        .filter(|(d, c)| *d <= 2 && *d < c.len() / 2 + 1)
        .map(|(_, c)| c)
}

/// Shared state of one run: each agent's analysis and compiled globs, built once.
pub struct Ctx<'a> {
    pub project: &'a Project,
    /// The rulesets of this pass: `project.agents`, or each agent less its own rules.
    pub agents: std::borrow::Cow<'a, [Agent]>,
    pub scope: Scope,
    /// Who answers the asks (`check --headless`).
    pub mode: crate::delegation::RunMode,
    pub analyses: Vec<Rc<Analysis>>,
    quick: Vec<Rc<Quick>>,
    /// Each agent's ruleset as [`Engines`] knows it (equal shapes, equal id).
    built: Vec<u64>,
    /// Example candidates by permission and pattern (shared with [`Engines`]).
    filled: Rc<examples::Filled>,
    /// The bash splitter (shared with [`Engines`]): see [`Ctx::splitter`].
    splitter: Rc<std::cell::RefCell<crate::shell::Splitter>>,
    /// `twins[a][i]`: an earlier agent and index whose rules from there on equal agent
    /// `a`'s rules from `i` on (see [`TailMemo`]).
    twins: Vec<Vec<Option<(usize, usize)>>>,
}

impl<'a> Ctx<'a> {
    /// Every rule written in a file (one with a place), in every agent of this pass:
    /// `(agent, index, rule)`.
    pub fn written(&self) -> impl Iterator<Item = (&Agent, usize, &Rule)> {
        self.agents.iter().flat_map(|a| {
            a.rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.loc.is_some())
                .map(move |(i, r)| (a, i, r))
        })
    }

    pub fn new(project: &'a Project) -> Ctx<'a> {
        Ctx::reusing(project, &Engines::default())
    }

    /// [`Ctx::new`] with the analyses `engines` kept of rulesets of the same shapes.
    pub fn reusing(project: &'a Project, engines: &Engines) -> Ctx<'a> {
        Ctx::with_agents(
            project,
            std::borrow::Cow::Borrowed(&project.agents),
            Scope::All,
            engines,
        )
    }

    /// Does this pass judge rule `r` (a user rule in its scope)?
    pub fn judges(&self, r: &Rule) -> bool {
        r.loc.is_some()
            && match self.scope {
                Scope::All => true,
                Scope::Shared => is_shared(r.layer),
                Scope::Own => !is_shared(r.layer),
            }
    }

    fn with_agents(
        project: &'a Project,
        agents: std::borrow::Cow<'a, [Agent]>,
        scope: Scope,
        engines: &Engines,
    ) -> Ctx<'a> {
        let (mut built, mut analyses, mut quick) = (Vec::new(), Vec::new(), Vec::new());
        for a in agents.iter() {
            let (id, analysis, q) = engines.for_rules(&a.rules, project.platform);
            built.push(id);
            analyses.push(analysis);
            quick.push(q);
        }
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
            agents,
            scope,
            mode: crate::delegation::RunMode::Interactive,
            analyses,
            quick,
            built,
            filled: engines.filled(),
            splitter: engines.splitter(),
            twins,
        }
    }

    /// The bash splitter of the run, lent until the lease drops: it remembers the parts of
    /// every command split, by this run's checks and (in the server) the last runs'.
    pub(super) fn splitter(&self) -> SplitterLease<'_> {
        SplitterLease {
            splitter: self.splitter.take(),
            home: &self.splitter,
        }
    }

    fn agent_index(&self, agent: &Agent) -> Option<usize> {
        self.agents.iter().position(|a| std::ptr::eq(a, agent))
    }

    /// A witness: decide `input` over the agent's rules as [`evaluate`] does (last rule
    /// whose permission and pattern both match; the same matcher, compiled once per run).
    pub fn witness(&self, agent: &Agent, input: &Input) -> Option<Witness> {
        let permission = input.permission.to_exact_string()?;
        let subject = input.subject.to_exact_string()?;
        let (rule, action) = match self.agent_index(agent) {
            Some(a) => {
                // A lazy DFA over more rules than that thrashes its cache on every input
                // (each state a set of tens of thousands of positions): scan from the end.
                let rule = if self.analyses[a].len() <= COMPILED_SAMPLE_RULES {
                    self.quick[a].decide(&input.permission, &input.subject)
                } else {
                    self.analyses[a].decision(input)
                };
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

    /// Does rule `i` of agent `a` decide `input` (match it, and no later rule does)? Through
    /// the compiled evaluator for rulesets of up to [`COMPILED_SAMPLE_RULES`] rules, else
    /// through the analysis's prefix indexes: rule `i`, then only the later rules that
    /// could meet it.
    pub fn rule_decides(&self, a: usize, i: usize, input: &Input) -> bool {
        rule_decides(&self.quick[a], &self.analyses[a], i, input)
    }

    /// An input rule `i` of agent `a` decides, for any rule, built-in ones included (the
    /// reachability pass judges only yours): a cheap sample first, else the automaton.
    pub fn live_input(&self, a: usize, i: usize) -> Option<Input> {
        let an = &self.analyses[a];
        self.quick[a]
            .decided_sample(an, i)
            .or_else(|| match an.decides(i) {
                crate::glob::automaton::Outcome::Witness(w) => Some(w),
                _ => None,
            })
    }

    /// [`Ctx::witness`] of text (the checks' own candidate inputs): straight to the
    /// compiled evaluator, without the round trip through UTF-16 words.
    pub fn witness_of(&self, agent: &Agent, permission: &str, subject: &str) -> Option<Witness> {
        if let Some(a) = self.agent_index(agent)
            && self.analyses[a].len() <= COMPILED_SAMPLE_RULES
            && let Some(rule) = self.quick[a].decide_str(permission, subject)
        {
            return Some(Witness {
                permission: permission.to_string(),
                input: subject.to_string(),
                action: rule.map_or(Effect::Ask, |i| agent.rules[i].action.effective()),
                rule,
            });
        }
        self.witness(agent, &Input::new(permission, subject))
    }

    /// [`Ctx::witness`] as a [`Decision`] (no rule: OpenCode's default ask), for the shell
    /// decider's per-pattern callback.
    pub fn decision(
        &self,
        agent: &Agent,
        permission: &str,
        subject: &str,
    ) -> crate::agents::Decision {
        let w = self.witness_of(agent, permission, subject);
        crate::agents::Decision {
            rule: w.as_ref().and_then(|w| w.rule),
            effect: w.map_or(Effect::Ask, |w| w.action),
            overridden: Vec::new(),
        }
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
            let name = &ctx.agents[a].name;
            let shift = |k: usize| k + i - j;
            out.extend(found.iter().map(|f| {
                Finding {
                    agents: vec![name.clone()],
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

/// A finding about a file (no agent, no rule) for every load warning with one of `codes`.
pub fn warning_findings(ctx: &Ctx<'_>, check: &Check, codes: &[&str], out: &mut Vec<Finding>) {
    for w in &ctx.project.loaded.warnings {
        if !codes.contains(&w.code) {
            continue;
        }
        // What OpenCode ignores held a deny, an ask or a switched-off tool: lost protection.
        let level = if w.lost_protection {
            Level::Error
        } else {
            check.level
        };
        out.push(Finding {
            id: check.id,
            level,
            agents: Vec::new(),
            rule: None,
            loc: Some(w.loc),
            message: w.message.clone(),
            related: Vec::new(),
            witnesses: Vec::new(),
            help: None,
        });
    }
}

/// `a, b, c, d, e and 3 more`: the first `limit` items, then how many go unnamed.
pub fn named_list(items: &[String], limit: usize) -> String {
    let shown = items[..items.len().min(limit)].join(", ");
    match items.len().saturating_sub(limit) {
        0 => shown,
        more => format!("{shown} and {more} more"),
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

/// Run every check over the project; findings in a deterministic order (most severe
/// first, then check order, then place).
///
/// Rule-order checks run in two passes. Rules an agent wrote for itself are judged over
/// its full ruleset. Rules of shared files (global and project configs, env, top-level
/// `tools`) are judged over every agent's ruleset *less the agents' own rules*
/// ([`SharedView`]): a shared rule is dead only if the shared rules after it kill it, and
/// an agent's own block overriding it is a deliberate override. Each shared finding is
/// then re-decided on every real agent and names only the agents where it holds.
pub fn run(project: &Project) -> Vec<Finding> {
    run_as(project, crate::delegation::RunMode::Interactive)
}

/// [`run`], with the asks answered as in `mode` (`check --headless`).
pub fn run_as(project: &Project, mode: crate::delegation::RunMode) -> Vec<Finding> {
    run_places(project, mode, true, &Engines::default())
}

/// [`run_as`] reusing what `engines` kept from earlier runs (`permaudit server`): the same
/// findings, sooner when most rulesets kept their shapes. Call [`Engines::settle`] after.
pub fn run_reusing(
    project: &Project,
    mode: crate::delegation::RunMode,
    engines: &Engines,
) -> Vec<Finding> {
    run_places(project, mode, true, engines)
}

/// [`run_as`] keeping every kind's finding at a place that another kind speaks for:
/// what `check --fix` repairs (a `tools` entry whose rule also lets an agent rewrite the
/// config is still deprecated syntax).
pub fn run_every(project: &Project, mode: crate::delegation::RunMode) -> Vec<Finding> {
    run_places(project, mode, false, &Engines::default())
}

fn run_places(
    project: &Project,
    mode: crate::delegation::RunMode,
    once_per_place: bool,
    engines: &Engines,
) -> Vec<Finding> {
    let mut ctx = Ctx::reusing(project, engines);
    ctx.mode = mode;
    let mut out = Vec::new();
    let reach = engines.reachability(&ctx);
    headless_ask::run(&ctx, &reach, &mut out);
    delegation_escalation::run(&ctx, &reach, &mut out);
    read_only_agent_writes::run(&ctx, &mut out);
    self_modification::run(&ctx, &mut out);
    deny_bypass::run(&ctx, &reach, &mut out);
    match SharedView::new(project) {
        None => order_checks(&ctx, &reach, &mut out),
        Some(view) => {
            ctx.scope = Scope::Own;
            order_checks(&ctx, &reach, &mut out);
            ctx.scope = Scope::All;
            let shared = Ctx::with_agents(
                project,
                std::borrow::Cow::Borrowed(view.agents.as_slice()),
                Scope::Shared,
                engines,
            );
            let mut found = Vec::new();
            let shared_reach = engines.reachability(&shared);
            order_checks(&shared, &shared_reach, &mut found);
            out.extend(view.lift(&ctx, found));
            agent_overrides_shared::run(&ctx, &reach, &view, &shared_reach, &mut out);
        }
    }
    unchecked_permission::run(&ctx, &mut out);
    unknown_agent_key::run(&ctx, &mut out);
    never_matches::run(&ctx, &mut out);
    broken_frontmatter::run(&ctx, &mut out);
    ignored_key::run(&ctx, &mut out);
    legacy_tools::run(&ctx, &reach, &mut out);
    js_key_order::run(&ctx, &mut out);
    env_injection::run(&ctx, &mut out);
    secret_readable::run(&ctx, &mut out);
    always_overrides_deny::run(&ctx, &mut out);
    let mut out = consolidate(project, out);
    if once_per_place {
        out = catch_all_last::one_per_catch_all(project, out);
    }
    let rank = |id: &str| CHECKS.iter().position(|c| c.id == id).unwrap_or(usize::MAX);
    let sort = |out: &mut Vec<Finding>| {
        out.sort_by_key(|f| {
            (
                std::cmp::Reverse(f.level),
                rank(f.id),
                f.loc.map(|l| (l.source, l.span.start)),
            )
        })
    };
    sort(&mut out);
    // Each place once: the most severe finding about a rule speaks for it (on a tie, the
    // earlier kind in `CHECKS`, the more specific one); but a reordered key
    // (`js-key-order`) is the cause of whatever else happens there, so it speaks instead,
    // at the most severe level. Places shared by several agents' differing findings keep
    // one per kind.
    let mut reordered: std::collections::HashMap<Loc, Level> = out
        .iter()
        .filter(|f| f.id == js_key_order::CHECK.id)
        .filter_map(|f| f.loc.map(|l| (l, f.level)))
        .collect();
    for f in &out {
        if let Some(level) = f.loc.and_then(|l| reordered.get_mut(&l)) {
            *level = (*level).max(f.level);
        }
    }
    for f in &mut out {
        if f.id == js_key_order::CHECK.id
            && let Some(level) = f.loc.and_then(|l| reordered.get(&l))
        {
            f.level = *level;
        }
    }
    let mut spoken: std::collections::HashMap<Loc, &'static str> = std::collections::HashMap::new();
    out.retain(|f| match f.loc {
        Some(l) if once_per_place && f.id != sample_mismatch::CHECK.id => {
            let first = if reordered.contains_key(&l) {
                js_key_order::CHECK.id
            } else {
                f.id
            };
            *spoken.entry(l).or_insert(first) == f.id
        }
        _ => true,
    });
    sort(&mut out);
    out
}

/// The checks about rule order, for the rules `ctx` judges.
fn order_checks(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    overlap::run(ctx, reach, out);
    unusable_allow::run(ctx, out);
    legacy_tools::run(ctx, reach, out);
    inconclusive::run(ctx, reach, out);
}

/// Every agent's ruleset without the rules the agent wrote for itself: what the shared
/// files decide for it. Rules keep their order; `map[a][k]` is the index in the real agent
/// of rule `k` here.
pub struct SharedView {
    pub agents: Vec<Agent>,
    map: Vec<Vec<usize>>,
}

impl SharedView {
    /// The index in agent `a`'s view of its real rule `i` (`None` for its own rules).
    pub fn index_of(&self, a: usize, i: usize) -> Option<usize> {
        self.map.get(a)?.binary_search(&i).ok()
    }

    /// `None` when no agent has rules of its own (the view is the project itself).
    pub fn new(project: &Project) -> Option<SharedView> {
        if !project
            .agents
            .iter()
            .any(|a| a.rules.iter().any(|r| is_own(r.layer)))
        {
            return None;
        }
        let (agents, map) = project
            .agents
            .iter()
            .map(|a| {
                let keep: Vec<usize> = (0..a.rules.len())
                    .filter(|&k| !is_own(a.rules[k].layer))
                    .collect();
                let agent = Agent {
                    rules: keep.iter().map(|&k| a.rules[k].clone()).collect(),
                    ..a.clone()
                };
                (agent, keep)
            })
            .unzip();
        Some(SharedView { agents, map })
    }

    /// Findings of the shared pass as findings about the real agents: indices mapped back,
    /// and every witness decided again over the agent's full ruleset. A finding stays only
    /// for the agents where each witness is decided as claimed, by the same rule; one
    /// without witnesses stays for agents with no rule of their own for that permission.
    pub fn lift(&self, full: &Ctx<'_>, found: Vec<Finding>) -> Vec<Finding> {
        let agents = &full.project.agents;
        found
            .into_iter()
            .filter_map(|f| {
                let name = f.agents.first()?;
                let a = agents.iter().position(|x| &x.name == name)?;
                let (agent, map) = (&agents[a], self.map.get(a)?);
                let back = |k: usize| map.get(k).copied();
                let rule = match f.rule {
                    Some(k) => Some(back(k)?),
                    None => None,
                };
                let mut witnesses = Vec::with_capacity(f.witnesses.len());
                for w in &f.witnesses {
                    let claimed = match w.rule {
                        Some(k) => Some(back(k)?),
                        None => None,
                    };
                    let input = crate::glob::analysis::Input::new(&w.permission, &w.input);
                    let real = full.witness(agent, &input)?;
                    if real.action != w.action || real.rule != claimed {
                        return None;
                    }
                    witnesses.push(real);
                }
                if f.witnesses.is_empty()
                    && let Some(r) = rule.and_then(|k| agent.rules.get(k))
                {
                    let platform = full.project.platform;
                    let wild = crate::glob::Wildcard::compile(&r.permission);
                    let own_about_it = agent.rules.iter().any(|o| {
                        is_own(o.layer)
                            && crate::glob::Wildcard::compile(&o.permission)
                                .is_match(&r.permission, platform)
                            || is_own(o.layer) && wild.is_match(&o.permission, platform)
                    });
                    if own_about_it {
                        return None;
                    }
                }
                Some(Finding {
                    rule,
                    witnesses,
                    ..f
                })
            })
            .collect()
    }
}

/// One finding per place: per-agent findings of the same kind at the same `file:line:col`
/// become one finding naming every agent (in `opencode agent list` order), when their
/// witnesses show the same inputs decided the same way by the same rule. The most severe
/// copy speaks for the place. Findings without a place, and sample mismatches (one place,
/// a different outcome per agent), are merged only when their messages agree too.
pub fn consolidate(project: &Project, findings: Vec<Finding>) -> Vec<Finding> {
    use std::collections::HashMap;
    let order: HashMap<&str, usize> = project
        .agents
        .iter()
        .enumerate()
        .map(|(k, a)| (a.name.as_str(), k))
        .collect();
    // What each witness shows, with its deciding rule as a place: copies merge only when
    // they show the same thing, so every witness holds for every agent listed.
    type Shown = Vec<(String, String, Effect, Option<Loc>)>;
    let shown = |f: &Finding| -> Shown {
        let agent = f.agents.first().and_then(|n| project.agent(n));
        f.witnesses
            .iter()
            .map(|w| {
                let decider = agent
                    .zip(w.rule)
                    .and_then(|(a, k)| a.rules.get(k))
                    .map(|r| r.loc.ok_or(r.builtin.clone()));
                (
                    w.permission.clone(),
                    w.input.clone(),
                    w.action,
                    decider.and_then(Result::ok),
                )
            })
            .collect()
    };
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    type Key = (&'static str, Option<Loc>, Option<String>, Shown);
    let mut index: HashMap<Key, usize> = HashMap::new();
    for f in findings {
        let by_message = f.loc.is_none() || f.id == sample_mismatch::CHECK.id;
        let key = (
            f.id,
            f.loc,
            by_message.then(|| f.message.clone()),
            shown(&f),
        );
        match index.get(&key) {
            Some(&k) => {
                let kept = &mut out[k];
                let mut agents = std::mem::take(&mut kept.agents);
                if f.level > kept.level {
                    // The more severe copy speaks: its agent goes first.
                    let mut front = f.agents.clone();
                    front.append(&mut agents);
                    agents = front;
                    *kept = f;
                } else {
                    agents.extend(f.agents.iter().cloned());
                }
                kept.agents = agents;
            }
            None => {
                index.insert(key, out.len());
                out.push(f);
            }
        }
    }
    // The copy that speaks keeps its agent first: `rule` and the witnesses index its rules.
    for f in &mut out {
        if let Some((first, rest)) = f.agents.split_first_mut() {
            rest.sort_by_key(|a| order.get(a.as_str()).copied().unwrap_or(usize::MAX));
            let first = first.clone();
            let mut seen = std::collections::HashSet::new();
            f.agents.retain(|a| seen.insert(a.clone()));
            debug_assert_eq!(f.agents.first(), Some(&first));
        }
    }
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
    let agents = &ctx.agents;
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
    crate::glob::analysis::first_override(
        i,
        an.later_candidates(i),
        |j| an.intersection(i, j),
        |input| quick.decide(&input.permission, &input.subject),
    )
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

/// [`Ctx::rule_decides`] for one agent's evaluator and analysis.
fn rule_decides(quick: &Quick, an: &Analysis, i: usize, input: &Input) -> bool {
    if an.len() <= COMPILED_SAMPLE_RULES {
        quick.decide(&input.permission, &input.subject) == Some(i)
    } else {
        an.matches(i, input) && !an.later_candidates(i).any(|j| an.matches(j, input))
    }
}

/// A [`crate::shell::Splitter`] lent by [`Ctx::splitter`], given back when dropped (a
/// second lease meanwhile gets a fresh one, which is then dropped in its turn).
pub(super) struct SplitterLease<'c> {
    splitter: crate::shell::Splitter,
    home: &'c std::cell::RefCell<crate::shell::Splitter>,
}

impl std::ops::Deref for SplitterLease<'_> {
    type Target = crate::shell::Splitter;
    fn deref(&self) -> &Self::Target {
        &self.splitter
    }
}

impl std::ops::DerefMut for SplitterLease<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.splitter
    }
}

impl Drop for SplitterLease<'_> {
    fn drop(&mut self) {
        let lent = std::mem::take(&mut self.splitter);
        if let Ok(mut home) = self.home.try_borrow_mut()
            && lent.known() >= home.known()
        {
            *home = lent;
        }
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
    fn decide_str(&self, permission: &str, subject: &str) -> Option<Option<usize>> {
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
    fn decided_sample(&self, an: &Analysis, i: usize) -> Option<Input> {
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
