//! Checks: proven findings over each agent's merged ruleset.
//!
//! One file per finding kind, its documentation at the top (shown by `permaudit rule ID`).
//! Findings are data; `report` renders them. Every claim about reachability comes from the
//! exact automata of [`crate::glob::analysis`]; past the budget a check says nothing rather
//! than guess, and the `inconclusive` finding names the rule.

pub mod agent_overrides_shared;
pub mod always_overrides_deny;
mod bare_command;
pub mod broken_frontmatter;
mod catch_all_last;
mod chain_pattern;
pub mod correlated_rules;
mod ctx;
pub mod dead_rule;
pub mod delegation_escalation;
pub mod deny_bypass;
pub mod deny_too_narrow;
pub mod deny_walkaround;
pub mod described_read_only;
pub mod edit_scope;
mod engines;
pub mod env_injection;
pub mod examples;
pub mod external_open;
pub mod headless_ask;
pub mod ignore_without_reason;
pub mod ignored_key;
pub mod inconclusive;
pub mod js_key_order;
pub mod legacy_tools;
pub mod mcp_bypass;
mod needed_allow;
pub mod never_matches;
pub mod open_allow_list;
pub mod overlap;
pub mod overridden_by_later_layer;
pub mod prompt_limit;
mod quick;
mod reach;
pub mod read_only_agent_writes;
pub mod sample_mismatch;
pub mod secret_readable;
pub mod self_modification;
pub mod shadowed_ask;
pub mod shadowed_deny;
mod shared;
pub mod stale_baseline;
pub mod subagent_cannot_delegate;
pub mod substring_allow;
mod tool_pattern;
mod unasked;
pub mod unchecked_permission;
pub mod unknown_agent_key;
pub mod unusable_allow;
pub mod unused_ignore;
pub mod wrapper_allow;

use crate::agents::Agent;
use crate::model::{Effect, Layer, Rule};
use crate::project::Project;
use crate::source::Loc;
use ctx::SplitterLease;
pub use ctx::{Ctx, TailMemo};
pub use engines::Engines;
use quick::{Deciders, Quick};
use reach::common_tail;
pub use reach::{Reach, reachability};
use serde::Serialize;
pub use shared::{SharedView, consolidate, other_deciders};
use std::fmt;

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
        Finding::at(check, agent.rules.get(i).and_then(|r| r.loc), message)
            .with_agent(agent.name.clone(), Some(i))
    }

    /// `check`'s finding at `loc`, at the check's level, about no agent or rule, with no
    /// related place, witness or help yet: the one constructor every finding starts from.
    pub fn at(check: &Check, loc: Option<Loc>, message: String) -> Finding {
        Finding {
            id: check.id,
            level: check.level,
            agents: Vec::new(),
            rule: None,
            loc,
            message,
            related: Vec::new(),
            witnesses: Vec::new(),
            help: None,
        }
    }

    /// About `agent` (the one it was proven on), at its rule `rule`.
    pub fn with_agent(self, agent: String, rule: Option<usize>) -> Finding {
        Finding {
            agents: vec![agent],
            rule,
            ..self
        }
    }

    /// About these agents (none: not about an agent).
    pub fn with_agents(self, agents: Vec<String>) -> Finding {
        Finding { agents, ..self }
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
    wrapper_allow::CHECK,
    substring_allow::CHECK,
    deny_too_narrow::CHECK,
    open_allow_list::CHECK,
    described_read_only::CHECK,
    edit_scope::CHECK,
    prompt_limit::CHECK,
    broken_frontmatter::CHECK,
    ignored_key::CHECK,
    // Before `legacy-tools`: a `tools: {read: true}` entry voids the built-in `.env` read
    // asks exactly as `permission.read: allow` does, and that loss is what to read at its
    // place (the deprecated spelling is the lesser news; `--fix` still rewrites it).
    secret_readable::CHECK,
    external_open::CHECK,
    mcp_bypass::CHECK,
    subagent_cannot_delegate::CHECK,
    legacy_tools::CHECK,
    legacy_tools::MAP_CHECK,
    // At a place another kind also speaks for (a legacy `tools: {write: false}`), at the
    // same level, that kind's finding is the one to read.
    delegation_escalation::CHECK,
    // After `deny-too-narrow` and `delegation-escalation`: at a deny they speak for, the
    // other spelling of the same command (`rm -fr`) or the route through a subagent is the
    // one to read; a deny-list under an allow-all is leaky by design.
    deny_walkaround::CHECK,
    headless_ask::CHECK,
    js_key_order::CHECK,
    env_injection::CHECK,
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

/// The finding kind `check` reports a load warning as ([`warning_findings`]: a mode file
/// skipped is a `broken-frontmatter`), or `None` when only stderr says it.
pub fn warning_kind(code: &str) -> Option<&'static Check> {
    find_check(match code {
        "skipped-mode" => "broken-frontmatter",
        c => c,
    })
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

/// The user's rules (built-in ones have no place) of a layer `layer` accepts whose action
/// takes effect as `effect`, with their indexes in `rules`.
pub fn written_with(
    rules: &[crate::model::Rule],
    layer: fn(Layer) -> bool,
    effect: crate::model::Effect,
) -> impl Iterator<Item = (usize, &crate::model::Rule)> {
    rules
        .iter()
        .enumerate()
        .filter(move |(_, r)| r.loc.is_some() && layer(r.layer) && r.action.effective() == effect)
}

/// Is the place in a markdown file's frontmatter (YAML), rather than JSON? Help that
/// proposes entries writes them in that file's syntax.
pub fn in_frontmatter(project: &Project, loc: Loc) -> bool {
    matches!(&project.loaded.sources.get(loc.source).origin,
        crate::source::Origin::File(p) if p.extension().is_some_and(|e| e == "md"))
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

/// Does the agent's description contain one of `words` (lower case)?
pub(crate) fn described(ctx: &Ctx<'_>, agent: &crate::agents::Agent, words: &[&str]) -> bool {
    ctx.project
        .loaded
        .merged
        .agent
        .get(&agent.name)
        .and_then(|e| e.description.as_deref())
        .is_some_and(|d| {
            let d = d.to_lowercase();
            words.iter().any(|w| d.contains(w))
        })
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
        out.push(Finding::at(check, Some(w.loc), w.message.clone()).with_level(level));
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

/// `; so do 2 more files written the same way (a:1:1, b:1:1)`: the places a finding
/// reported once stands for, after its message (`noun` singular, `how` what they share).
pub fn so_do_more(places: &[String], noun: &str, how: &str) -> String {
    format!(
        "; so do {} more {noun}{} {how} ({})",
        places.len(),
        if places.len() == 1 { "" } else { "s" },
        named_list(places, 3)
    )
}

/// `rule N (permission pattern action)` for messages.
/// The witnesses' inputs, each in backticks, comma-separated (a message's list).
pub fn quoted_inputs(witnesses: &[Witness]) -> String {
    witnesses
        .iter()
        .map(|w| format!("`{}`", w.input))
        .collect::<Vec<_>>()
        .join(", ")
}

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
    wrapper_allow::run(&ctx, &mut out);
    substring_allow::run(&ctx, &mut out);
    deny_walkaround::run(&ctx, &mut out);
    deny_too_narrow::run(&ctx, &mut out);
    let open = open_allow_list::run(&ctx, &mut out);
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
    external_open::run(&ctx, &mut out);
    mcp_bypass::run(&ctx, &mut out);
    subagent_cannot_delegate::run(&ctx, &mut out);
    always_overrides_deny::run(&ctx, &reach, &mut out);
    described_read_only::run(&ctx, &mut out);
    edit_scope::run(&ctx, &mut out);
    prompt_limit::run(&ctx, &mut out);
    open_allow_list::absorb(&ctx, &open, &mut out);
    unasked::drop_unasked(&ctx, &mut out);
    unasked::drop_unchecked(project, &mut out);
    places(project, consolidate(project, out), once_per_place)
}

/// [`run_every`]'s findings as [`run_as`] shows them: each place once, the rules a
/// catch-all overrides as one finding at it. (`check --fix` repairs the first and counts
/// what `check` showed of them.)
pub fn shown(project: &Project, every: Vec<Finding>) -> Vec<Finding> {
    places(project, every, true)
}

/// Consolidated findings ordered, and with `once_per_place` each place once.
fn places(project: &Project, out: Vec<Finding>, once_per_place: bool) -> Vec<Finding> {
    let mut out = same_words_once(project, out);
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
    unasked::note_unchecked(project, &mut out);
    out
}

/// One finding per place and wording: findings of one kind at one place that say the same
/// words (a shared `tools` entry judged once per pass, a rule proven once per agent) are one
/// finding naming every agent, in `opencode agent list` order. The first keeps its rule
/// index and witnesses (they index its first agent).
fn same_words_once(project: &Project, out: Vec<Finding>) -> Vec<Finding> {
    let mut kept: Vec<Finding> = Vec::with_capacity(out.len());
    let mut at: std::collections::HashMap<(&'static str, Loc, String), usize> =
        std::collections::HashMap::new();
    for f in out {
        let Some(loc) = f.loc else {
            kept.push(f);
            continue;
        };
        let key = (f.id, loc, f.message.clone());
        // The same witnesses, each decided by the same written rule (or both by built-in
        // ones) in both agents: every agent a finding names decides its witnesses alike.
        let place = |agent: Option<&String>, w: &Witness| {
            let a = agent.and_then(|n| project.agent(n))?;
            Some(w.rule.and_then(|k| a.rules.get(k)).and_then(|r| r.loc))
        };
        let alike = |first: &Finding| {
            first.witnesses.len() == f.witnesses.len()
                && first.witnesses.iter().zip(&f.witnesses).all(|(x, y)| {
                    x.permission == y.permission
                        && x.input == y.input
                        && x.action == y.action
                        && place(first.agents.first(), x) == place(f.agents.first(), y)
                })
        };
        match at.get(&key).and_then(|&k| kept.get_mut(k)) {
            Some(first) if first.level == f.level && first.help == f.help && alike(first) => {
                for a in f.agents {
                    if !first.agents.contains(&a) {
                        first.agents.push(a);
                    }
                }
                let order = |name: &String| {
                    project
                        .agents
                        .iter()
                        .position(|a| a.name == *name)
                        .unwrap_or(usize::MAX)
                };
                // The agent the finding was proven on stays first.
                if let Some((_, rest)) = first.agents.split_first_mut() {
                    rest.sort_by_key(order);
                }
            }
            _ => {
                at.insert(key, kept.len());
                kept.push(f);
            }
        }
    }
    kept
}

/// The checks about rule order, for the rules `ctx` judges.
fn order_checks(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    overlap::run(ctx, reach, out);
    unusable_allow::run(ctx, out);
    legacy_tools::run(ctx, reach, out);
    inconclusive::run(ctx, reach, out);
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
