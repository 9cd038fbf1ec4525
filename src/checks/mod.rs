//! Checks: proven findings over each agent's merged ruleset.
//!
//! One file per finding kind, its documentation at the top (shown by `permaudit rule ID`).
//! Findings are data; `report` renders them. Every claim about reachability comes from the
//! exact automata of [`crate::glob::analysis`]; past the budget a check says nothing rather
//! than guess (and reports the rule as inconclusive).

pub mod broken_frontmatter;
pub mod dead_rule;
pub mod never_matches;
pub mod overridden_by_later_layer;
pub mod partly_shadowed_deny;
pub mod secret_readable;
pub mod shadowed_deny;
pub mod unchecked_permission;
pub mod unusable_allow;

use crate::glob::analysis::{Analysis, Input, RuleShape};
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
    secret_readable::CHECK,
];

pub fn find_check(id: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.id == id)
}

/// Shared state of one run: each agent's analysis, built once.
pub struct Ctx<'a> {
    pub project: &'a Project,
    pub analyses: Vec<Analysis>,
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
        Ctx { project, analyses }
    }

    /// A witness: decide `input` over the agent's rules with the real evaluator.
    pub fn witness(&self, agent: &Agent, input: &Input) -> Option<Witness> {
        let permission = input.permission.to_exact_string()?;
        let subject = input.subject.to_exact_string()?;
        let d = evaluate(&agent.rules, &permission, &subject, self.project.platform);
        Some(Witness {
            permission,
            input: subject,
            action: d.effect,
            rule: d.rule,
        })
    }

    /// `path:line:col` of a rule, or its built-in origin.
    pub fn place(&self, r: &Rule) -> String {
        match r.loc {
            Some(l) => self.project.loaded.sources.position(l).to_string(),
            None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
        }
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
    secret_readable::run(&ctx, &mut out);
    out
}

/// Whether each user-written rule of each agent decides anything.
pub enum Reach {
    /// Decides this input.
    Decides(Input),
    /// Decides nothing: every input it matches goes to a later rule, e.g. this one.
    Dead(Option<crate::glob::analysis::Overridden>),
    /// Over budget: nothing claimed.
    Inconclusive,
}

/// `reach[agent][rule]`, `None` for built-in rules (not the user's to fix).
pub fn reachability(ctx: &Ctx<'_>) -> Vec<Vec<Option<Reach>>> {
    use crate::glob::automaton::Outcome;
    ctx.project
        .agents
        .iter()
        .zip(&ctx.analyses)
        .map(|(agent, an)| {
            agent
                .rules
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    r.loc?;
                    Some(match an.decides(i) {
                        Outcome::Witness(w) => Reach::Decides(w),
                        Outcome::Empty => Reach::Dead(an.overridden(i).into_witness()),
                        Outcome::Inconclusive => Reach::Inconclusive,
                    })
                })
                .collect()
        })
        .collect()
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
        .map(|l| l.trim_start_matches("//!").strip_prefix(' ').unwrap_or(l.trim_start_matches("//!")))
        .collect::<Vec<_>>()
        .join("\n")
}
