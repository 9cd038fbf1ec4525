//! The decision of a whole bash command, as the bash tool's `ShellTool.ask` makes it.
//!
//! First one `external_directory` ask with every outside directory (when there is one),
//! then one `bash` ask with every pattern (when there is one). Inside one ask,
//! `Permission.ask` evaluates the patterns in order: a `deny` throws at once, an `allow`
//! passes, anything else needs asking. So a command is **denied** when any pattern of
//! either ask is denied (the first such pattern, external directories first, decides),
//! else it **asks** when any pattern asks, else it is **allowed** (a command with no
//! pattern at all, such as `cd .`, runs without a question).

use super::split::Request;
use crate::agents::Decision;
use crate::model::Effect;

/// Which ask decided the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    /// The `external_directory` pattern at this index of `Request::external_patterns`.
    External(usize),
    /// The `bash` pattern (or the file tool's own pattern) at this index of
    /// `Request::patterns`.
    Bash(usize),
    /// The tool is hidden from the agent (`Permission.disabled`): the last rule for its
    /// permission is `* deny`, so the model is never offered it, whatever the input.
    Hidden,
}

/// The decisions of every asked pattern and the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// One per `Request::external_patterns`.
    pub external: Vec<Decision>,
    /// One per `Request::patterns` (for a file tool: its one pattern).
    pub bash: Vec<Decision>,
    /// With [`Decider::Hidden`]: the `* deny` rule that hides the tool.
    pub hidden: Option<Decision>,
    pub effect: Effect,
    /// `None` when nothing is asked (allowed without a question).
    pub decider: Option<Decider>,
}

impl Decided {
    /// The deciding pattern's decision.
    pub fn decision(&self) -> Option<&Decision> {
        match self.decider? {
            Decider::External(i) => self.external.get(i),
            Decider::Bash(i) => self.bash.get(i),
            Decider::Hidden => self.hidden.as_ref(),
        }
    }
}

/// Decide `req` with `eval(permission, pattern)` (e.g. [`crate::agents::evaluate`]
/// over the agent's rules, or the compiled evaluator).
pub fn decide(req: &Request, eval: impl FnMut(&str, &str) -> Decision) -> Decided {
    decide_asks(&req.external_patterns, "bash", &req.patterns, eval)
}

/// Decide one tool call: the `external_directory` ask of `external` patterns first, then
/// the `permission` ask of `patterns` (the bash tool's, or a file tool's one path).
pub fn decide_asks(
    external: &[String],
    permission: &str,
    patterns: &[String],
    mut eval: impl FnMut(&str, &str) -> Decision,
) -> Decided {
    let external: Vec<Decision> = external
        .iter()
        .map(|p| eval("external_directory", p))
        .collect();
    let bash: Vec<Decision> = patterns.iter().map(|p| eval(permission, p)).collect();
    let first = |e: Effect| {
        external
            .iter()
            .position(|d| d.effect == e)
            .map(Decider::External)
            .or_else(|| bash.iter().position(|d| d.effect == e).map(Decider::Bash))
    };
    let (effect, decider) = if let Some(d) = first(Effect::Deny) {
        (Effect::Deny, Some(d))
    } else if let Some(d) = first(Effect::Ask) {
        (Effect::Ask, Some(d))
    } else {
        let last = if !bash.is_empty() {
            Some(Decider::Bash(bash.len() - 1))
        } else if !external.is_empty() {
            Some(Decider::External(external.len() - 1))
        } else {
            None
        };
        (Effect::Allow, last)
    };
    Decided {
        external,
        bash,
        hidden: None,
        effect,
        decider,
    }
}

/// The outcome of a call to a tool hidden from the agent by rule `rule` (`* deny`).
pub fn hidden(rule: usize) -> Decided {
    Decided {
        external: Vec::new(),
        bash: Vec::new(),
        hidden: Some(Decision {
            rule: Some(rule),
            effect: Effect::Deny,
            overridden: Vec::new(),
        }),
        effect: Effect::Deny,
        decider: Some(Decider::Hidden),
    }
}
