//! How OpenCode 1.18.34 runs without a person to ask, and who may start whom.
//!
//! Read from the binary's bundled JavaScript (docs/research/E-headless-delegation.md) and
//! checked on the binary where a model can be scripted (`tests/live_conformance.rs`):
//!
//! * **`opencode run`** (not `-i`) creates its session with three rules after the agent's,
//!   `question`, `plan_enter` and `plan_exit` `* deny`, and answers every permission asked
//!   in that session or a subagent session it started: `reject` ("permission requested: …;
//!   auto-rejecting"), or `once` with `--auto` (`--yolo`, `--dangerously-skip-permissions`).
//!   So under `run` an ask is a deny (and ends the session, unless
//!   `experimental.continue_loop_on_deny`), under `run --auto` an allow
//!   ([`RunMode::resolve`]).
//! * **`task`**: the caller's `task` permission is asked with the subagent's name as the
//!   pattern; the subagents offered are the agents whose mode is not `primary` and whose
//!   name the caller's `task` rules do not deny. The subagent's session gets, after the
//!   subagent's own ruleset, the parent *session's* `external_directory` rules and denies
//!   (not the parent *agent's* rules), then `todowrite * deny` and `task * deny` unless the
//!   subagent's ruleset names that permission ([`child_rules`]). A session may start a
//!   subagent only while its depth (ancestors) is below `subagent_depth` (default 1: only a
//!   primary session delegates). `experimental.primary_tools` (denied in every subagent
//!   session) is not modelled.

use crate::agents::{Agent, Mode, evaluate, is_hidden};
use crate::model::{Action, Effect, Form, Layer, Rule};
use crate::project::Project;

/// How the permissions that ask are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunMode {
    /// A person answers (the TUI, `opencode run -i`).
    #[default]
    Interactive,
    /// `opencode run`: every ask is rejected.
    Headless,
    /// `opencode run --auto` (`--yolo`, `--dangerously-skip-permissions`): every ask is
    /// approved once.
    Auto,
}

impl RunMode {
    /// What an agent's decision comes to in this mode.
    pub fn resolve(self, e: Effect) -> Effect {
        match (self, e) {
            (RunMode::Headless, Effect::Ask) => Effect::Deny,
            (RunMode::Auto, Effect::Ask) => Effect::Allow,
            _ => e,
        }
    }

    /// The rules the mode's top-level session holds (evaluated after the agent's).
    pub fn session_rules(self) -> Vec<Rule> {
        match self {
            RunMode::Interactive => Vec::new(),
            RunMode::Headless | RunMode::Auto => ["question", "plan_enter", "plan_exit"]
                .iter()
                .map(|p| session_rule(p, "opencode run"))
                .collect(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Interactive => "interactive",
            RunMode::Headless => "headless",
            RunMode::Auto => "auto",
        }
    }
}

fn session_rule(permission: &str, what: &str) -> Rule {
    Rule::builtin(
        permission,
        "*",
        Action::Deny,
        Form::String,
        Layer::Session,
        what,
    )
}

/// The session rules a subagent's session starts with: the parent session's
/// `external_directory` rules and denies, then `todowrite` and `task` denied unless the
/// subagent's ruleset names them.
pub fn child_session_rules(parent_session: &[Rule], subagent: &Agent) -> Vec<Rule> {
    let names = |p: &str| subagent.rules.iter().any(|r| r.permission == p);
    let mut out: Vec<Rule> = parent_session
        .iter()
        .filter(|r| r.permission == "external_directory" || r.action == Action::Deny)
        .cloned()
        .collect();
    for p in ["todowrite", "task"] {
        if !names(p) {
            out.push(session_rule(p, "subagent session"));
        }
    }
    out
}

/// The subagent as its session evaluates it: its ruleset, then the session's rules.
pub fn child_agent(parent_session: &[Rule], subagent: &Agent) -> Agent {
    let mut a = subagent.clone();
    a.rules
        .extend(child_session_rules(parent_session, subagent));
    a
}

/// `caller` may ask to start `callee` (`task` with the callee's name).
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// Indexes into `project.agents`.
    pub caller: usize,
    pub callee: usize,
    /// The caller's `task` decision for the callee's name (never deny).
    pub action: Effect,
    /// The deciding rule of the caller (`None`: no rule, ask).
    pub rule: Option<usize>,
}

/// Every agent a person can talk to directly (`run --agent`, the TUI): not a subagent,
/// not hidden (title, summary, compaction).
pub fn is_primary(a: &Agent) -> bool {
    a.mode != Mode::Subagent && !a.hidden
}

/// Agents the `task` tool offers: any mode but `primary`.
pub fn is_subagent(a: &Agent) -> bool {
    a.mode != Mode::Primary
}

/// The `subagent_depth` in effect (OpenCode's default 1).
pub fn depth(project: &Project) -> u64 {
    project.loaded.merged.subagent_depth.unwrap_or(1)
}

/// Who may start whom: from every primary agent (and, with `subagent_depth` ≥ 2, from
/// every subagent whose own session keeps `task`) to every subagent its `task` rules do not
/// deny, when the `task` tool is not hidden from it.
pub fn edges(project: &Project) -> Vec<Edge> {
    let platform = project.platform;
    let nested = depth(project) >= 2;
    let mut out = Vec::new();
    if depth(project) == 0 {
        return out;
    }
    for (c, caller) in project.agents.iter().enumerate() {
        let as_child = is_subagent(caller) && nested && names_task(caller);
        if !(is_primary(caller) || as_child) || is_hidden(&caller.rules, "task", platform) {
            continue;
        }
        for (s, callee) in project.agents.iter().enumerate() {
            if s == c || !is_subagent(callee) {
                continue;
            }
            let d = evaluate(&caller.rules, "task", &callee.name, platform);
            if d.effect != Effect::Deny {
                out.push(Edge {
                    caller: c,
                    callee: s,
                    action: d.effect,
                    rule: d.rule,
                });
            }
        }
    }
    out
}

/// A subagent session keeps `task` only when the subagent's ruleset names it.
fn names_task(a: &Agent) -> bool {
    a.rules.iter().any(|r| r.permission == "task")
}
