//! Rules as OpenCode evaluates them, each with where it came from.

use crate::source::Loc;
use serde::Serialize;
use std::fmt;

/// A rule's action. Config files can only hold the three actions; `OPENCODE_PERMISSION` is
/// merged unvalidated, so any JSON value can reach a rule from there (spec §3.6). At run
/// time anything but `allow` and `deny` behaves like `ask`.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Allow,
    Ask,
    Deny,
    Other(serde_json::Value),
}

impl Action {
    pub fn parse(s: &str) -> Option<Action> {
        match s {
            "allow" => Some(Action::Allow),
            "ask" => Some(Action::Ask),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }

    /// From any JSON value, as `OPENCODE_PERMISSION` can deliver it.
    pub fn from_json(v: &serde_json::Value) -> Action {
        match v.as_str().and_then(Action::parse) {
            Some(a) => a,
            None => Action::Other(v.clone()),
        }
    }

    /// What the action does at run time: `Permission.ask` treats every action that is not
    /// `allow` or `deny` as "needs asking".
    pub fn effective(&self) -> Effect {
        match self {
            Action::Allow => Effect::Allow,
            Action::Deny => Effect::Deny,
            _ => Effect::Ask,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Action::Allow => "allow".into(),
            Action::Ask => "ask".into(),
            Action::Deny => "deny".into(),
            Action::Other(v) => v.clone(),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Allow => f.write_str("allow"),
            Action::Ask => f.write_str("ask"),
            Action::Deny => f.write_str("deny"),
            Action::Other(v) => write!(f, "{v}"),
        }
    }
}

/// The outcome of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        })
    }
}

/// Where in OpenCode's concatenation a rule comes from (spec §4–5).
///
/// The order of an agent's ruleset is: `defaults`, `agent-builtin`, the user layers (one per
/// kind of config source, `legacy-tools` and `env-permission`), the agent layers
/// (`agent-config`, `agent-legacy-tools`, `markdown-agent`, `mode`), and `tool-output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// OpenCode's built-in defaults, the same for every agent.
    Defaults,
    /// The built-in agent's own rules (plan's edit deny, explore's `* deny`, …).
    AgentBuiltin,
    /// The global config dir (`~/.config/opencode/{config.json,opencode.json,opencode.jsonc}`).
    Global,
    /// The file named by `OPENCODE_CONFIG`.
    OpencodeConfig,
    /// `opencode.json(c)` files from the worktree root down to the start directory.
    Project,
    /// `.opencode/opencode.json(c)` in the project.
    DotOpencode,
    /// `~/.opencode/opencode.json(c)`.
    HomeDotOpencode,
    /// `$OPENCODE_CONFIG_DIR/opencode.json(c)`.
    ConfigDir,
    /// The `OPENCODE_CONFIG_CONTENT` environment variable.
    ConfigContent,
    /// The managed config dir (`/etc/opencode`).
    Managed,
    /// The `OPENCODE_PERMISSION` environment variable (merged unvalidated).
    EnvPermission,
    /// A top-level legacy `tools` entry, translated to a permission.
    LegacyTools,
    /// `agent.NAME.permission` in a JSON config.
    AgentConfig,
    /// `agent.NAME.tools` in a JSON config or agent file, translated to a permission.
    AgentLegacyTools,
    /// The frontmatter `permission` of a markdown agent file (`agent/*.md`).
    MarkdownAgent,
    /// A `mode` entry (JSON `mode.NAME` or `mode/*.md`).
    Mode,
    /// The trailing `external_directory` allow for truncated tool output.
    ToolOutput,
    /// Rules of the session rather than the agent, evaluated after the agent's: `opencode
    /// run`'s denies, a subagent session's inherited and forced rules (`crate::delegation`).
    Session,
}

impl Layer {
    pub fn as_str(&self) -> &'static str {
        match self {
            Layer::Defaults => "defaults",
            Layer::AgentBuiltin => "agent-builtin",
            Layer::Global => "global",
            Layer::OpencodeConfig => "opencode-config",
            Layer::Project => "project",
            Layer::DotOpencode => "dot-opencode",
            Layer::HomeDotOpencode => "home-dot-opencode",
            Layer::ConfigDir => "config-dir",
            Layer::ConfigContent => "config-content",
            Layer::Managed => "managed",
            Layer::EnvPermission => "env-permission",
            Layer::LegacyTools => "legacy-tools",
            Layer::AgentConfig => "agent-config",
            Layer::AgentLegacyTools => "agent-legacy-tools",
            Layer::MarkdownAgent => "markdown-agent",
            Layer::Mode => "mode",
            Layer::ToolOutput => "tool-output",
            Layer::Session => "session",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a rule was written, which OpenCode shows in its JSON key order (spec §3.2):
/// `"bash": "deny"` (string form) or `"bash": {"*": "deny"}` (object form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    String,
    Object,
}

/// One rule of an agent's ruleset.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub permission: String,
    pub pattern: String,
    pub action: Action,
    pub form: Form,
    pub layer: Layer,
    /// Where the rule was written (the pattern key, or the permission key for the string
    /// form); `None` for built-in rules.
    pub loc: Option<Loc>,
    /// For built-in rules: what produced it (`defaults`, `build`, a skill directory, …).
    pub builtin: Option<String>,
}

impl Rule {
    pub fn builtin(
        permission: &str,
        pattern: &str,
        action: Action,
        form: Form,
        layer: Layer,
        what: &str,
    ) -> Rule {
        Rule {
            permission: permission.to_string(),
            pattern: pattern.to_string(),
            action,
            form,
            layer,
            loc: None,
            builtin: Some(what.to_string()),
        }
    }
}
