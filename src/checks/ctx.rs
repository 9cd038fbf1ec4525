//! The context of one pass of checks ([`Ctx`]): the agents it judges, each one's analysis
//! and compiled evaluator, the splitter it lends, and the findings shared by agents that
//! end in the same rules ([`TailMemo`]).

use super::engines::Engines;
use super::quick::{COMPILED_SAMPLE_RULES, Quick, rule_decides};
use super::{Finding, Scope, Witness, examples, is_shared};
use crate::agents::{Agent, evaluate};
use crate::glob::analysis::{Analysis, Input};
use crate::model::{Effect, Rule};
use crate::project::Project;
use std::rc::Rc;

/// Shared state of one run: each agent's analysis and compiled globs, built once.
pub struct Ctx<'a> {
    pub project: &'a Project,
    /// The rulesets of this pass: `project.agents`, or each agent less its own rules.
    pub agents: std::borrow::Cow<'a, [Agent]>,
    pub scope: Scope,
    /// Who answers the asks (`check --headless`).
    pub mode: crate::delegation::RunMode,
    pub analyses: Vec<Rc<Analysis>>,
    pub(super) quick: Vec<Rc<Quick>>,
    /// Each agent's ruleset as [`Engines`] knows it (equal shapes, equal id).
    pub(super) built: Vec<u64>,
    /// Example candidates by permission and pattern (shared with [`Engines`]).
    pub(super) filled: Rc<examples::Filled>,
    /// The bash splitter (shared with [`Engines`]): see [`Ctx::splitter`].
    pub(super) splitter: Rc<std::cell::RefCell<crate::shell::Splitter>>,
    /// `twins[a][i]`: an earlier agent and index whose rules from there on equal agent
    /// `a`'s rules from `i` on (see [`TailMemo`]).
    pub(super) twins: Vec<Vec<Option<(usize, usize)>>>,
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

    pub(super) fn with_agents(
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

    pub(super) fn agent_index(&self, agent: &Agent) -> Option<usize> {
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

    /// Where the rule deciding a finding's example stands, in words true for every agent a
    /// merged finding names: a written rule's place, or `OpenCode's built-in rules`
    /// (`consolidate` merges copies whose deciders are built-in, whichever agent's, e.g.
    /// build's `defaults` `*` allow and explore's own `bash` `*` allow; the witness names
    /// each agent's rule: `other_deciders`).
    pub fn decider_place(&self, r: &Rule) -> String {
        match r.loc {
            Some(_) => self.place(r),
            None => "OpenCode's built-in rules".into(),
        }
    }

    /// The rule in words and where it stands: `` `edit` "*" allow at opencode.json:3:5 ``.
    pub fn rule_at(&self, r: &Rule) -> String {
        format!("{} at {}", super::describe(r), self.place(r))
    }

    /// What decided a witness, for a message's "(decided by …)": the rule and its place,
    /// OpenCode's built-in rule, or the default ask.
    pub fn decided_by(&self, r: Option<&Rule>) -> String {
        match r {
            Some(r) if r.loc.is_some() => self.rule_at(r),
            Some(r) => format!("OpenCode's built-in {}", super::describe(r)),
            None => "OpenCode's default".to_string(),
        }
    }

    /// The place of `prompt[start..end]`, the prompt written at `at`: in the file itself
    /// where the prompt is the file's own text (a markdown body), else the prompt's key (a
    /// JSON string, whose escapes shift offsets; a `{file:…}` prompt).
    pub fn prompt_place(
        &self,
        at: crate::source::Loc,
        prompt: &str,
        start: usize,
        end: usize,
    ) -> crate::source::Loc {
        let text = &self.project.loaded.sources.get(at.source).text;
        if text.get(at.span.start..at.span.end) == Some(prompt) {
            crate::source::Loc {
                source: at.source,
                span: crate::source::Span::new(at.span.start + start, at.span.start + end),
            }
        } else {
            at
        }
    }

    /// The agents the user defined (not OpenCode's own, not its internal ones), each with
    /// its merged config entry.
    pub fn defined_agents(
        &self,
    ) -> impl Iterator<Item = (&'a Agent, &'a crate::model::config::AgentEntry)> + '_ {
        let project = self.project;
        project
            .agents
            .iter()
            .filter(|a| !a.is_internal() && !a.native)
            .filter_map(move |a| Some((a, project.loaded.merged.agent.get(&a.name)?)))
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
