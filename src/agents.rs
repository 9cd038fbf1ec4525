//! Agents and their rulesets, concatenated exactly as OpenCode 1.18.34 does
//! (`packages/opencode/src/agent/agent.ts`; spec §4, built-in lists verified on the binary).
//!
//! An agent's ruleset is `defaults ++ built-in rules ++ user ++ agent config`, and then,
//! unless a rule denies it, the trailing `external_directory` allow for tool output.

use crate::discover::{Paths, relative};
use crate::glob::{Platform, Wildcard};
use crate::load::Merged;
use crate::model::config::{Leaf, PermEntry, PermissionMap};
use crate::model::rule::{Action, Effect, Form, Layer, Rule};
use crate::profile::Switches;
use crate::syntax::value::JsObject;
use serde::Serialize;

/// An agent's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Primary,
    Subagent,
    All,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "primary" => Some(Mode::Primary),
            "subagent" => Some(Mode::Subagent),
            "all" => Some(Mode::All),
            _ => None,
        }
    }
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Primary => "primary",
            Mode::Subagent => "subagent",
            Mode::All => "all",
        }
    }
}

/// One agent with its final ruleset.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// The config key (`debug agent KEY`).
    pub name: String,
    /// The display name: `agent.KEY.name`, else the key (`agent list` prints it).
    pub display: String,
    pub mode: Mode,
    pub hidden: bool,
    /// Built into OpenCode (build, plan, …) rather than defined by config.
    pub native: bool,
    pub rules: Vec<Rule>,
}

impl Agent {
    /// One of OpenCode's internal agents: built in and hidden (`compaction`, `summary`,
    /// `title`), run by OpenCode itself to compact, summarise and title a session, never
    /// picked by a user. A user's own `hidden: true` agent is not internal. The one rule
    /// every human and markdown output follows (docs/commands.md, "Internal agents"):
    /// they are left out of lists of agents ([`crate::report::shown_agents`]) and folded
    /// into one line where agents are listed one by one.
    ///
    /// Decided by name, not by `hidden`: a user who writes `hidden: true` on a built-in
    /// such as `explore` keeps it a subagent others start.
    pub fn is_internal(&self) -> bool {
        self.native && matches!(self.name.as_str(), "compaction" | "summary" | "title")
    }

    /// The agent's rules OpenCode builds in (no place in a file), in order: what it decides
    /// with none of yours.
    pub fn built_in_rules(&self) -> Vec<Rule> {
        self.rules
            .iter()
            .filter(|r| r.loc.is_none())
            .cloned()
            .collect()
    }
}

/// `Permission.expand`: home expansion of patterns (spec §3.3).
pub fn expand(pattern: &str, home: &str) -> String {
    if pattern == "~" {
        home.to_string()
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else if let Some(rest) = pattern.strip_prefix("$HOME") {
        format!("{home}{rest}")
    } else {
        pattern.to_string()
    }
}

/// `Permission.fromConfig`: a permission object into rules, in JavaScript key order.
pub fn from_config(map: &PermissionMap, home: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    let rule = |permission: &str, pattern: String, leaf: &Leaf, form: Form| Rule {
        permission: permission.to_string(),
        pattern,
        action: leaf.action.clone(),
        form,
        layer: leaf.layer,
        loc: Some(leaf.loc),
        builtin: None,
    };
    for (permission, entry) in map.iter() {
        match entry {
            PermEntry::Action(leaf) => {
                rules.push(rule(permission, "*".to_string(), leaf, Form::String))
            }
            PermEntry::Patterns(pats) | PermEntry::List(pats) => {
                for (pattern, leaf) in pats.iter() {
                    rules.push(rule(permission, expand(pattern, home), leaf, Form::Object));
                }
            }
        }
    }
    rules
}

/// A built-in permission object, written as OpenCode writes it in `agent.ts`.
enum B<'a> {
    S(&'a str, Action),
    O(&'a str, Vec<(String, Action)>),
}

fn builtin_rules(items: Vec<B<'_>>, layer: Layer, what: &str) -> Vec<Rule> {
    // Built through a JsObject so that duplicate keys and key order behave as in JavaScript.
    let mut obj: JsObject<Vec<(String, Action, Form)>> = JsObject::new();
    for item in items {
        match item {
            B::S(p, a) => obj.set(p.to_string(), vec![("*".to_string(), a, Form::String)]),
            B::O(p, pats) => {
                let mut inner: JsObject<Action> = JsObject::new();
                for (pat, a) in pats {
                    inner.set(pat, a);
                }
                obj.set(
                    p.to_string(),
                    inner
                        .iter()
                        .map(|(k, a)| (k.to_string(), a.clone(), Form::Object))
                        .collect(),
                );
            }
        }
    }
    obj.iter()
        .flat_map(|(p, pats)| {
            pats.iter()
                .map(|(pat, a, f)| Rule::builtin(p, pat, a.clone(), *f, layer, what))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Directories whose files every agent may reach outside the worktree without asking.
pub fn whitelist(paths: &Paths, extra_dirs: &[String]) -> Vec<String> {
    let mut out = vec![
        format!("{}/*", paths.data.join("tool-output").display()),
        format!("{}/*", paths.tmp.display()),
    ];
    out.extend(extra_dirs.iter().map(|d| format!("{d}/*")));
    out
}

fn tool_output(paths: &Paths) -> String {
    format!("{}/*", paths.data.join("tool-output").display())
}

/// `{"*": "ask", <each whitelisted dir>: "allow"}`: the defaults' `external_directory`
/// object, which explore repeats in its own rules.
fn external_directory_object(white: &[String]) -> Vec<(String, Action)> {
    let mut ext = vec![("*".to_string(), Action::Ask)];
    ext.extend(white.iter().map(|d| (d.clone(), Action::Allow)));
    ext
}

/// OpenCode's defaults, the first rules of every agent.
pub fn defaults(white: &[String], sw: &Switches) -> Vec<Rule> {
    use Action::*;
    let ext = external_directory_object(white);
    let mut rules = vec![
        B::S("*", Allow),
        B::S("doom_loop", Ask),
        B::O("external_directory", ext),
        B::S("question", Deny),
        B::S("plan_enter", Deny),
        B::S("plan_exit", Deny),
    ];
    if sw.repo_tools_denied {
        rules.push(B::S("repo_clone", Deny));
        rules.push(B::S("repo_overview", Deny));
    }
    builtin_rules(
        rules
            .into_iter()
            .chain([B::O(
                "read",
                vec![
                    ("*".into(), Allow),
                    ("*.env".into(), Ask),
                    ("*.env.*".into(), Ask),
                    ("*.env.example".into(), Allow),
                ],
            )])
            .collect(),
        Layer::Defaults,
        "defaults",
    )
}

/// The built-in agents in OpenCode's order, with their own rules (spec §4.1).
fn natives(paths: &Paths, white: &[String], sw: &Switches) -> Vec<(String, Mode, bool, Vec<Rule>)> {
    use Action::*;
    let plans = paths.data.join("plans");
    let plan_rel = relative(&paths.worktree, &plans.join("*.md"));
    let ext = external_directory_object(white);
    let l = Layer::AgentBuiltin;
    let hidden_deny = |name: &str| builtin_rules(vec![B::S("*", Deny)], l, name);
    vec![
        (
            "build".into(),
            Mode::Primary,
            false,
            builtin_rules(
                vec![B::S("question", Allow), B::S("plan_enter", Allow)],
                l,
                "build",
            ),
        ),
        (
            "plan".into(),
            Mode::Primary,
            false,
            builtin_rules(
                [
                    B::S("question", Allow),
                    B::S("plan_exit", Allow),
                    B::O("task", vec![("general".into(), Deny)]),
                ]
                .into_iter()
                .filter(|b| sw.plan_denies_task_general || !matches!(b, B::O("task", _)))
                .chain([
                    B::O(
                        "external_directory",
                        vec![(format!("{}/*", plans.display()), Allow)],
                    ),
                    B::O(
                        "edit",
                        vec![
                            ("*".into(), Deny),
                            (".opencode/plans/*.md".into(), Allow),
                            (plan_rel, Allow),
                        ],
                    ),
                ])
                .collect(),
                l,
                "plan",
            ),
        ),
        (
            "general".into(),
            Mode::Subagent,
            false,
            builtin_rules(vec![B::S("todowrite", Deny)], l, "general"),
        ),
        (
            "explore".into(),
            Mode::Subagent,
            false,
            builtin_rules(
                vec![
                    B::S("*", Deny),
                    B::S("grep", Allow),
                    B::S("glob", Allow),
                    B::S("list", Allow),
                    B::S("bash", Allow),
                    B::S("webfetch", Allow),
                    B::S("websearch", Allow),
                    B::S("read", Allow),
                    B::O("external_directory", ext),
                ],
                l,
                "explore",
            ),
        ),
        (
            "compaction".into(),
            Mode::Primary,
            true,
            hidden_deny("compaction"),
        ),
        ("title".into(), Mode::Primary, true, hidden_deny("title")),
        (
            "summary".into(),
            Mode::Primary,
            true,
            hidden_deny("summary"),
        ),
    ]
}

/// Every agent of the merged config, with its final ruleset.
pub fn build_agents(
    merged: &Merged,
    paths: &Paths,
    extra_dirs: &[String],
    sw: &Switches,
) -> Vec<Agent> {
    let home = paths.home.display().to_string();
    let white = whitelist(paths, extra_dirs);
    let defaults = defaults(&white, sw);
    let user = from_config(&merged.permission, &home);
    let mut agents: Vec<Agent> = natives(paths, &white, sw)
        .into_iter()
        .map(|(name, mode, hidden, own)| Agent {
            display: name.clone(),
            name,
            mode,
            hidden,
            native: true,
            rules: defaults.iter().chain(&own).chain(&user).cloned().collect(),
        })
        .collect();
    for (name, entry) in merged.agent.iter() {
        if entry.disable == Some(true) {
            agents.retain(|a| a.name != name);
            continue;
        }
        let idx = match agents.iter().position(|a| a.name == name) {
            Some(i) => i,
            None => {
                agents.push(Agent {
                    name: name.to_string(),
                    display: name.to_string(),
                    mode: Mode::All,
                    hidden: false,
                    native: false,
                    rules: defaults.iter().chain(&user).cloned().collect(),
                });
                agents.len() - 1
            }
        };
        let a = &mut agents[idx];
        if let Some(m) = entry.mode.as_deref().and_then(Mode::parse) {
            a.mode = m;
        }
        if let Some(h) = entry.hidden {
            a.hidden = h;
        }
        if let Some(n) = &entry.name {
            a.display = n.clone();
        }
        if let Some(p) = &entry.permission {
            a.rules.extend(from_config(p, &home));
        }
    }
    let out = tool_output(paths);
    for a in &mut agents {
        let suppressed = a.rules.iter().any(|r| {
            r.permission == "external_directory" && r.action == Action::Deny && r.pattern == out
        });
        if !suppressed {
            a.rules.push(Rule::builtin(
                "external_directory",
                &out,
                Action::Allow,
                Form::Object,
                Layer::ToolOutput,
                "tool-output",
            ));
        }
    }
    agents
}

/// The tools the default offline model is offered, in OpenCode's order (spec §2.4).
pub const DEFAULT_TOOLS: [&str; 13] = [
    "invalid",
    "question",
    "bash",
    "read",
    "glob",
    "grep",
    "edit",
    "write",
    "task",
    "webfetch",
    "todowrite",
    "websearch",
    "skill",
];

/// The permission a tool id is checked under for visibility.
pub fn tool_permission(tool: &str) -> &str {
    match tool {
        "edit" | "write" | "apply_patch" => "edit",
        "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource" => "read",
        t => t,
    }
}

/// `Permission.disabled`: a tool is hidden from the model when the last rule whose
/// permission matches it, pattern ignored, is exactly `* deny`.
pub fn is_hidden(rules: &[Rule], tool: &str, platform: Platform) -> bool {
    hiding_rule(rules, tool, platform).is_some()
}

/// The rule that hides `tool` from the model (see [`is_hidden`]), if any.
pub fn hiding_rule(rules: &[Rule], tool: &str, platform: Platform) -> Option<usize> {
    let perm = crate::glob::wildcard::subject_units(tool_permission(tool));
    // A run of rules with one permission (a block) matches at its last rule or not at all.
    let mut previous: Option<&str> = None;
    rules
        .iter()
        .rposition(|r| {
            previous.replace(&r.permission) != Some(&r.permission)
                && Wildcard::compile(&r.permission).is_match_units(&perm, platform)
        })
        .filter(|&i| rules[i].pattern == "*" && rules[i].action == Action::Deny)
}

/// Permissions that are not tools (never hidden): asked by other tools or by the loop.
pub const NOT_TOOLS: &[&str] = &["external_directory", "doom_loop"];

/// The default tools hidden from an agent.
pub fn hidden_tools(rules: &[Rule], platform: Platform) -> Vec<&'static str> {
    DEFAULT_TOOLS
        .iter()
        .copied()
        .filter(|t| is_hidden(rules, t, platform))
        .collect()
}

/// The outcome of `evaluate(permission, input, ruleset)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Index of the deciding rule; `None` when nothing matched (OpenCode's default: ask).
    pub rule: Option<usize>,
    pub effect: Effect,
    /// Earlier matching rules the deciding one overrode, in order.
    pub overridden: Vec<usize>,
}

/// `Permission.evaluate`: the last rule matching both permission and input decides.
pub fn evaluate(rules: &[Rule], permission: &str, input: &str, platform: Platform) -> Decision {
    let matching: Vec<usize> = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            Wildcard::compile(&r.permission).is_match(permission, platform)
                && Wildcard::compile(&r.pattern).is_match(input, platform)
        })
        .map(|(i, _)| i)
        .collect();
    Decision::of_matching(rules, &matching)
}

impl Decision {
    /// The decision given the indices of every matching rule, in order: the last one
    /// decides, the others are overridden; none matching is OpenCode's default ask.
    pub fn of_matching(rules: &[Rule], matching: &[usize]) -> Decision {
        match matching.split_last() {
            Some((&last, earlier)) => Decision {
                rule: Some(last),
                effect: rules
                    .get(last)
                    .map_or(Effect::Ask, |r| r.action.effective()),
                overridden: earlier.to_vec(),
            },
            None => Decision {
                rule: None,
                effect: Effect::Ask,
                overridden: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_expansion() {
        let h = "/home/u";
        assert_eq!(expand("~/a/*", h), "/home/u/a/*");
        assert_eq!(expand("~", h), "/home/u");
        assert_eq!(expand("~/", h), "/home/u/");
        assert_eq!(expand("$HOME/b/*", h), "/home/u/b/*");
        assert_eq!(expand("$HOMEc", h), "/home/uc");
        for same in ["~x/*", "x/~/y", "${HOME}/z", "~\\d"] {
            assert_eq!(expand(same, h), same);
        }
    }
}
