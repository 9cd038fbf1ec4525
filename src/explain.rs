//! `explain`'s decisions: one input decided as OpenCode's tool would ask about it, for one
//! agent and permission, with the compiled evaluator (many inputs in a row: `--stdin`). The
//! call is [`crate::call`]'s simulation, the one the checks test their witnesses with:
//!
//! - a tool hidden from the agent (its `* deny` rule, `agents::hiding_rule`) is
//!   denied whatever the input: the model is never offered it;
//! - `bash`: the command is split as the bash tool splits it (`shell::Splitter`), and every
//!   part is decided, after the `external_directory` ask its path arguments raise;
//! - `read`/`edit`: a path outside the project asks `external_directory` first
//!   (`shell::file`);
//! - anything else: the input is the pattern, decided by the last matching rule.
//!
//! Rendering is `report::explain`'s; reading input and writing output the CLI's.

use crate::agents::{Agent, Decision};
use crate::call::{self, Asks};
use crate::glob::compiled::{CompiledRuleset, Want};
use crate::model::Effect;
use crate::project::Project;
use crate::shell::decide::Decided;
use crate::shell::file::FileRequest;
use crate::shell::{Env, Request, Splitter};

/// One input's decision, in the shape its tool asks.
pub enum Call<'a> {
    /// A permission checked with the input as its one pattern.
    Rule {
        /// The deciding rule (`None`: nothing matched, OpenCode's default ask).
        rule: Option<usize>,
        /// The earlier matching rules, in order.
        overridden: &'a [usize],
    },
    /// The bash tool's command (or the hidden bash tool: an empty request).
    Bash { request: Request, decided: Decided },
    /// A file tool's call (`request` `None` when the tool is hidden, or for a tool other than
    /// a file tool that is hidden).
    Tool {
        request: Option<FileRequest>,
        decided: Decided,
    },
}

impl Call<'_> {
    /// The final action.
    pub fn effect(&self, agent: &Agent) -> Effect {
        match self {
            Call::Rule { rule, .. } => rule
                .and_then(|i| agent.rules.get(i))
                .map_or(Effect::Ask, |r| r.action.effective()),
            Call::Bash { decided, .. } | Call::Tool { decided, .. } => decided.effect,
        }
    }
}

/// Decides inputs of one permission for one agent; built once, used for every input.
pub struct Explainer<'p> {
    agent: &'p Agent,
    permission: String,
    eval: CompiledRuleset,
    /// `external_directory`, for `bash` and the file tools.
    ext: Option<CompiledRuleset>,
    splitter: Splitter,
    /// The `* deny` rule hiding the tool from the agent.
    hiding: Option<usize>,
    matching: Vec<usize>,
}

impl<'p> Explainer<'p> {
    pub fn new(project: &Project, agent: &'p Agent, permission: &str) -> Explainer<'p> {
        let file_tool = crate::shell::file::FILE_PERMISSIONS.contains(&permission);
        let compile = |p: &str| compiled(project, agent, p);
        Explainer {
            agent,
            permission: permission.to_string(),
            eval: compile(permission),
            ext: (permission == "bash" || file_tool).then(|| compile("external_directory")),
            splitter: Splitter::new(),
            hiding: call::hiding_rule(&agent.rules, permission, project.platform),
            matching: Vec::new(),
        }
    }

    /// Decide one input as its tool call ([`call`]); `env` answers the shell's questions
    /// about the machine.
    pub fn decide(&mut self, input: &str, env: &Env<'_>) -> Call<'_> {
        let (permission, agent) = (self.permission.as_str(), self.agent);
        // A hidden tool asks nothing: its input is not even looked at.
        let asks = match self.hiding {
            Some(_) => Asks::Plain,
            None => Asks::of(permission, input, env, &mut self.splitter),
        };
        if asks == Asks::Plain && self.hiding.is_none() {
            // One ask of one pattern: every matching rule, for `overridden`.
            self.eval.matching(input, &mut self.matching);
            return match self.matching.split_last() {
                Some((&rule, overridden)) => Call::Rule {
                    rule: Some(rule),
                    overridden,
                },
                None => Call::Rule {
                    rule: None,
                    overridden: &[],
                },
            };
        }
        let (eval, ext, matching) = (&mut self.eval, &mut self.ext, &mut self.matching);
        let decided = call::decide(&asks, permission, input, self.hiding, |perm, pattern| {
            let e = match ext.as_mut() {
                Some(x) if perm == "external_directory" && permission != perm => x,
                _ => &mut *eval,
            };
            e.matching(pattern, matching);
            Decision::of_matching(&agent.rules, matching)
        });
        match asks {
            Asks::Bash(request) => Call::Bash { request, decided },
            // The hidden bash tool: an empty request.
            Asks::Plain if permission == "bash" => Call::Bash {
                request: Request::default(),
                decided,
            },
            Asks::File(req) => Call::Tool {
                request: Some(req),
                decided,
            },
            Asks::Plain => Call::Tool {
                request: None,
                decided,
            },
        }
    }
}

/// Every command (already split) decided for every agent, as the bash tool decides it:
/// `result[command][agent]` in the order of `agents`.
pub fn decide_commands(
    project: &Project,
    agents: &[&Agent],
    requests: &[Request],
) -> Vec<Vec<Decided>> {
    use crate::shell::decide::decide;
    let mut rows: Vec<Vec<Decided>> = requests
        .iter()
        .map(|_| Vec::with_capacity(agents.len()))
        .collect();
    let mut matching = Vec::new();
    for a in agents {
        let (mut bash, mut ext) = (
            compiled(project, a, "bash"),
            compiled(project, a, "external_directory"),
        );
        let hiding = crate::agents::hiding_rule(&a.rules, "bash", project.platform);
        for (row, request) in rows.iter_mut().zip(requests) {
            if let Some(rule) = hiding {
                row.push(crate::shell::decide::hidden(rule));
                continue;
            }
            let d = decide(request, |perm, pattern| {
                let e = if perm == "bash" { &mut bash } else { &mut ext };
                e.matching(pattern, &mut matching);
                Decision::of_matching(&a.rules, &matching)
            });
            row.push(d);
        }
    }
    rows
}

/// One agent's rules for one permission in the compiled evaluator (every match kept).
fn compiled(project: &Project, a: &Agent, permission: &str) -> CompiledRuleset {
    CompiledRuleset::new(
        a.rules
            .iter()
            .map(|r| (r.permission.as_str(), r.pattern.as_str())),
        permission,
        project.platform,
        Want::All,
    )
}
