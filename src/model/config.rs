//! One config source decoded exactly as OpenCode's V1 schema decodes it, with every refusal
//! OpenCode makes reported as a [`ConfigError`].
//!
//! Mirrors `packages/core/src/v1/config/permission.ts` and `agent.ts` of 1.18.34 (spec §3,
//! §5.4–5.6): the string form `"permission": "allow"` becomes `{"*": "allow"}` per file;
//! action-only keys refuse objects; `agent.NAME.tools` is folded into that agent's
//! permission per file (tools first, then `Object.assign` of the permission object); the V2
//! `permissions` key is refused at the top level and in `agent`/`agents`/`mode` entries of
//! a JSON config, before anything else ([`v2_permissions`]), and ignored in markdown
//! frontmatter. Unknown keys are ignored, as OpenCode ignores them.

use super::rule::{Action, Layer};
use crate::profile::{Switches, known_top_level_key};
use crate::source::Loc;
use crate::syntax::value::{JsObject, Node, Value};

/// A refusal: OpenCode would exit with "Configuration is invalid".
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub loc: Loc,
    /// JSON path of the offending value, as OpenCode prints it (`permission.bash`).
    pub path: String,
    /// What OpenCode expects there.
    pub message: String,
    /// The file's other refusals, in file order ([`decode_file_all`]): OpenCode names one
    /// at a time, a user fixes them all at once.
    pub more: Vec<ConfigError>,
}

/// One action in a permission object, with where it was written and the layer it joins.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    pub action: Action,
    /// Where the rule is written: the pattern key, or the permission key for the string form.
    pub loc: Loc,
    pub layer: Layer,
}

/// The value of one permission key after decoding.
#[derive(Debug, Clone, PartialEq)]
pub enum PermEntry {
    /// `"bash": "deny"`: one rule with pattern `*` (string form).
    Action(Leaf),
    /// `"bash": {"git *": "allow"}`: one rule per pattern (object form).
    Patterns(JsObject<Leaf>),
    /// Entries of something that is not a plain object, which only `OPENCODE_PERMISSION`
    /// can deliver (an array's index keys; nothing for a number, boolean or null). Rules
    /// come out like the object form, but a later merge replaces it instead of merging.
    List(JsObject<Leaf>),
}

/// A decoded `permission` object: permission key → entry, in JavaScript key order.
pub type PermissionMap = JsObject<PermEntry>;

/// remeda `mergeDeep` restricted to permission maps: objects merge key by key, anything else
/// replaces the earlier value in the earlier position.
pub fn merge_permission(a: &PermissionMap, b: &PermissionMap) -> PermissionMap {
    a.merged_with(b, |old, new| match (old, new) {
        (PermEntry::Patterns(x), PermEntry::Patterns(y)) => {
            PermEntry::Patterns(x.merged_with(y, |_, n| n.clone()))
        }
        _ => new.clone(),
    })
}

/// A legacy `tools` entry: `"bash": false`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub enabled: bool,
    pub loc: Loc,
}

/// An `agent.NAME` (or `mode.NAME`, or markdown agent) entry after decoding.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentEntry {
    /// `name`: the display name (`opencode agent list` prints it; lookup stays by key).
    pub name: Option<String>,
    pub permission: Option<PermissionMap>,
    pub disable: Option<bool>,
    pub mode: Option<String>,
    pub hidden: Option<bool>,
    /// `description` and `prompt` (a markdown agent's body): what the agent is for.
    pub description: Option<String>,
    pub prompt: Option<String>,
    /// Where `description` was (last) written: its key.
    pub description_loc: Option<Loc>,
    /// Where `prompt` was (last) written: a markdown agent's whole body (so an offset into
    /// `prompt` is one into the file), or a JSON entry's `prompt` key.
    pub prompt_loc: Option<Loc>,
    /// Where the entry was (last) written.
    pub loc: Option<Loc>,
}

impl AgentEntry {
    /// mergeDeep of two entries: scalars replaced, permission maps merged.
    pub fn merge(&self, later: &AgentEntry) -> AgentEntry {
        AgentEntry {
            permission: match (&self.permission, &later.permission) {
                (Some(a), Some(b)) => Some(merge_permission(a, b)),
                (a, b) => b.clone().or_else(|| a.clone()),
            },
            name: later.name.clone().or_else(|| self.name.clone()),
            disable: later.disable.or(self.disable),
            mode: later.mode.clone().or_else(|| self.mode.clone()),
            hidden: later.hidden.or(self.hidden),
            description: later
                .description
                .clone()
                .or_else(|| self.description.clone()),
            description_loc: if later.description.is_some() {
                later.description_loc
            } else {
                self.description_loc
            },
            prompt: later.prompt.clone().or_else(|| self.prompt.clone()),
            prompt_loc: if later.prompt.is_some() {
                later.prompt_loc
            } else {
                self.prompt_loc
            },
            loc: later.loc.or(self.loc),
        }
    }
}

/// A `references` entry: a local directory or a git repository OpenCode clones.
#[derive(Debug, Clone, PartialEq)]
pub enum Reference {
    Local(String),
    Git {
        repository: String,
        branch: Option<String>,
    },
}

/// The parts of one config source that decide permissions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileConfig {
    pub permission: Option<PermissionMap>,
    pub tools: Option<JsObject<ToolEntry>>,
    pub agent: JsObject<AgentEntry>,
    pub mode: JsObject<AgentEntry>,
    /// `skills.paths` (or the non-URL entries of a V2 `skills` array).
    pub skill_paths: Option<Vec<String>>,
    /// `references` (or `reference`), by name.
    pub references: Option<JsObject<Reference>>,
    /// The names under `references` and under `reference`, kept apart: OpenCode's gate is
    /// `references ?? reference` on the merged config.
    pub reference_names: [Option<Vec<String>>; 2],
    /// V2 `permissions` keys this release loads and ignores (before 1.18.24), with their
    /// JSON paths: no rule comes from them (`ignored-key`).
    pub ignored: Vec<(String, Loc)>,
    /// `subagent_depth`: how deep `task` may nest sessions (OpenCode's default: 1, only a
    /// primary session may start a subagent).
    pub subagent_depth: Option<u64>,
    /// A non-empty `plugin` list: plugins may add tools of any name.
    pub plugins: bool,
}

fn decode_references(node: &Node, path: &str) -> Result<JsObject<Reference>, ConfigError> {
    let o = object_of(node, path, "references")?;
    let mut out = JsObject::new();
    for (name, v) in o.iter() {
        let p = join(path, name);
        let r = match &v.value {
            Value::String(s) => {
                if s.starts_with('.') || s.starts_with('/') || s.starts_with('~') {
                    Reference::Local(s.clone())
                } else {
                    Reference::Git {
                        repository: s.clone(),
                        branch: None,
                    }
                }
            }
            Value::Object(fields) => {
                let get = |k: &str| -> Result<Option<String>, ConfigError> {
                    match fields.get(k) {
                        None => Ok(None),
                        Some(n) => match &n.value {
                            Value::String(s) => Ok(Some(s.clone())),
                            other => Err(err(
                                n,
                                &join(&p, k),
                                format!("expected a string, got {}", other.preview()),
                            )),
                        },
                    }
                };
                if let Some(path) = get("path")? {
                    Reference::Local(path)
                } else if let Some(repository) = get("repository")? {
                    Reference::Git {
                        repository,
                        branch: get("branch")?,
                    }
                } else {
                    return Err(err(v, &p, "expected a `path` or a `repository` key"));
                }
            }
            other => {
                return Err(err(
                    v,
                    &p,
                    format!("expected a string or an object, got {}", other.preview()),
                ));
            }
        };
        out.set(name.to_string(), r);
    }
    Ok(out)
}

fn decode_skills(node: &Node, path: &str) -> Result<Option<Vec<String>>, ConfigError> {
    let strings = |n: &Node, p: &str| -> Result<Vec<String>, ConfigError> {
        let Value::Array(items) = &n.value else {
            return Err(err(
                n,
                p,
                format!("expected an array of strings, got {}", n.value.preview()),
            ));
        };
        items
            .iter()
            .map(|i| match &i.value {
                Value::String(s) => Ok(s.clone()),
                other => Err(err(
                    i,
                    p,
                    format!("expected a string, got {}", other.preview()),
                )),
            })
            .collect()
    };
    match &node.value {
        // V2 lowering: a `skills` array splits into paths and http(s) urls.
        Value::Array(_) => Ok(Some(
            strings(node, path)?
                .into_iter()
                .filter(|s| {
                    let l = s.to_ascii_lowercase();
                    !(l.starts_with("http://") || l.starts_with("https://"))
                })
                .collect(),
        )),
        Value::Object(o) => match o.get("paths") {
            Some(p) => Ok(Some(strings(p, &join(path, "paths"))?)),
            None => Ok(None),
        },
        other => Err(err(
            node,
            path,
            format!("expected an object, got {}", other.preview()),
        )),
    }
}

/// Permission keys whose value must be an action string (spec §3.1).
pub const ACTION_ONLY_KEYS: [&str; 5] = [
    "todowrite",
    "question",
    "webfetch",
    "websearch",
    "doom_loop",
];

/// Legacy tool names that all set `edit` (spec §5.4).
pub fn tool_permission_name(tool: &str) -> &str {
    match tool {
        "write" | "edit" | "patch" => "edit",
        other => other,
    }
}

/// `node`'s object, or the refusal: expected an object of `what`.
fn object_of<'n>(
    node: &'n Node,
    path: &str,
    what: &str,
) -> Result<&'n JsObject<Node>, ConfigError> {
    match &node.value {
        Value::Object(o) => Ok(o),
        v => Err(err(
            node,
            path,
            format!("expected an object of {what}, got {}", v.preview()),
        )),
    }
}

fn err(node: &Node, path: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        loc: node.loc,
        path: path.to_string(),
        message: message.into(),
        more: Vec::new(),
    }
}

/// The keys of an agent entry (`agent.NAME`, `mode.NAME`, markdown frontmatter) that
/// OpenCode 1.18.34's `AgentConfig` schema reads (read from the bundle), and `name`, which
/// the agent loader reads; any other key is moved into the agent's `options` (sent to the
/// model provider) without a word (verified with `debug config`).
pub const AGENT_KEYS: &[&str] = &[
    "model",
    "variant",
    "temperature",
    "top_p",
    "prompt",
    "tools",
    "disable",
    "description",
    "mode",
    "hidden",
    "options",
    "color",
    "steps",
    "maxSteps",
    "permission",
    "name",
];

/// The top-level keys of OpenCode 1.18.34's `Config` schema (read from the bundle), and the
/// V2 keys permaudit handles (`agents`, `permissions`); any other top-level key is dropped
/// without a word (verified with `debug config`).
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "$schema",
    "shell",
    "logLevel",
    "server",
    "command",
    "skills",
    "references",
    "reference",
    "watcher",
    "snapshot",
    "plugin",
    "share",
    "autoshare",
    "autoupdate",
    "disabled_providers",
    "enabled_providers",
    "model",
    "small_model",
    "default_agent",
    "subagent_depth",
    "username",
    "mode",
    "agent",
    "provider",
    "mcp",
    "formatter",
    "lsp",
    "instructions",
    "layout",
    "permission",
    "tools",
    "attachment",
    "enterprise",
    "tool_output",
    "compaction",
    "experimental",
    "agents",
    "permissions",
];

pub fn key_loc(node: &Node) -> Loc {
    node.key.unwrap_or(node.loc)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn action_of(node: &Node, path: &str, expected: &str) -> Result<Action, ConfigError> {
    match &node.value {
        Value::String(s) => Action::parse(s).ok_or_else(|| {
            err(
                node,
                path,
                format!(
                    "expected {expected}: one of \"allow\", \"ask\", \"deny\" (case-sensitive), got {}",
                    node.value.preview()
                ),
            )
        }),
        v => Err(err(
            node,
            path,
            format!("expected {expected}, got {}", v.preview()),
        )),
    }
}

/// Decode a `permission` value (top level or an agent's).
pub fn decode_permission(
    node: &Node,
    path: &str,
    layer: Layer,
) -> Result<PermissionMap, ConfigError> {
    let mut map = PermissionMap::new();
    match &node.value {
        Value::String(_) => {
            let action = action_of(node, path, "an action or an object of permissions")?;
            map.set(
                "*".to_string(),
                PermEntry::Action(Leaf {
                    action,
                    loc: node.loc,
                    layer,
                }),
            );
        }
        Value::Object(o) => {
            // OpenCode's schema never yields a `__proto__` permission key (JSON parsing drops
            // it; js-yaml keeps it and the permission struct then loses it): verified on 1.18.34.
            for (key, v) in o.iter().filter(|(k, _)| *k != "__proto__") {
                let p = join(path, key);
                let entry = match &v.value {
                    Value::String(_) => PermEntry::Action(Leaf {
                        action: action_of(v, &p, "an action")?,
                        loc: key_loc(v),
                        layer,
                    }),
                    Value::Object(_) if ACTION_ONLY_KEYS.contains(&key) => {
                        return Err(err(
                            v,
                            &p,
                            format!(
                                "`{key}` takes only an action string (\"allow\", \"ask\" or \"deny\"), not an object of patterns"
                            ),
                        ));
                    }
                    Value::Object(patterns) => {
                        let mut out = JsObject::new();
                        // A pattern named `__proto__` survives (js-yaml makes it an own key and
                        // the pattern record keeps it; JSON parsing never produces one).
                        for (pat, pv) in patterns.iter() {
                            let action = action_of(pv, &join(&p, pat), "an action")?;
                            out.set(
                                pat.to_string(),
                                Leaf {
                                    action,
                                    loc: key_loc(pv),
                                    layer,
                                },
                            );
                        }
                        PermEntry::Patterns(out)
                    }
                    other => {
                        return Err(err(
                            v,
                            &p,
                            format!(
                                "expected an action string or an object of pattern → action, got {}",
                                other.preview()
                            ),
                        ));
                    }
                };
                map.set(key.to_string(), entry);
            }
        }
        other => {
            return Err(err(
                node,
                path,
                format!(
                    "expected an action string or an object of permissions, got {}",
                    other.preview()
                ),
            ));
        }
    }
    Ok(map)
}

/// Decode a legacy `tools` map: tool name → boolean.
pub fn decode_tools(node: &Node, path: &str) -> Result<JsObject<ToolEntry>, ConfigError> {
    let o = object_of(node, path, "tool → boolean")?;
    let mut out = JsObject::new();
    for (k, v) in o.iter() {
        let Value::Bool(b) = v.value else {
            return Err(err(
                v,
                &join(path, k),
                format!("expected a boolean, got {}", v.value.preview()),
            ));
        };
        out.set(
            k.to_string(),
            ToolEntry {
                enabled: b,
                loc: key_loc(v),
            },
        );
    }
    Ok(out)
}

/// Translate a tools map to permission entries: `write`, `edit` and `patch` all set `edit`
/// (first position, last value); every other key maps to itself (spec §5.4).
pub fn tools_to_permission(tools: &JsObject<ToolEntry>, layer: Layer) -> PermissionMap {
    let mut map = PermissionMap::new();
    for (k, t) in tools.iter() {
        let action = if t.enabled {
            Action::Allow
        } else {
            Action::Deny
        };
        map.set(
            tool_permission_name(k).to_string(),
            PermEntry::Action(Leaf {
                action,
                loc: t.loc,
                layer,
            }),
        );
    }
    map
}

/// Which kind of agent entry is being decoded; decides the layers of its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// `agent.NAME` in a JSON config.
    Json,
    /// `mode.NAME` in a JSON config, or a `mode/*.md` file.
    Mode,
    /// An `agent/**/*.md` file.
    Markdown,
}

const MODES: [&str; 3] = ["primary", "subagent", "all"];
const COLORS: [&str; 7] = [
    "primary",
    "secondary",
    "accent",
    "success",
    "warning",
    "error",
    "info",
];

fn expect_string(v: &Node, p: &str) -> Result<(), ConfigError> {
    match v.value {
        Value::String(_) => Ok(()),
        _ => Err(err(
            v,
            p,
            format!("expected a string, got {}", v.value.preview()),
        )),
    }
}

fn number(v: &Node) -> Option<f64> {
    match &v.value {
        Value::Number(n) => n.parse::<f64>().ok(),
        _ => None,
    }
}

fn expect_finite(v: &Node, p: &str) -> Result<(), ConfigError> {
    match number(v) {
        Some(n) if n.is_finite() => Ok(()),
        Some(_) => Err(err(
            v,
            p,
            "expected a finite number (this one overflows to Infinity)",
        )),
        None => Err(err(
            v,
            p,
            format!("expected a number, got {}", v.value.preview()),
        )),
    }
}

fn expect_positive_int(v: &Node, p: &str) -> Result<(), ConfigError> {
    match number(v) {
        Some(n) if n.fract() == 0.0 && n > 0.0 && n.is_finite() => Ok(()),
        Some(_) => Err(err(
            v,
            p,
            format!("expected a positive integer, got {}", v.value.preview()),
        )),
        None => Err(err(
            v,
            p,
            format!("expected a positive integer, got {}", v.value.preview()),
        )),
    }
}

fn expect_bool(v: &Node, p: &str) -> Result<(), ConfigError> {
    match v.value {
        Value::Bool(_) => Ok(()),
        _ => Err(err(
            v,
            p,
            format!("expected a boolean, got {}", v.value.preview()),
        )),
    }
}

fn expect_object(v: &Node, p: &str) -> Result<(), ConfigError> {
    match v.value {
        Value::Object(_) => Ok(()),
        _ => Err(err(
            v,
            p,
            format!("expected an object, got {}", v.value.preview()),
        )),
    }
}

fn expect_strings(v: &Node, p: &str) -> Result<(), ConfigError> {
    match &v.value {
        Value::Array(items) => items.iter().try_for_each(|i| expect_string(i, p)),
        _ => Err(err(
            v,
            p,
            format!("expected an array of strings, got {}", v.value.preview()),
        )),
    }
}

fn expect_one_of(v: &Node, p: &str, options: &[&str]) -> Result<(), ConfigError> {
    match v.value.as_str() {
        Some(s) if options.contains(&s) => Ok(()),
        _ => Err(err(
            v,
            p,
            format!("expected one of {options:?}, got {}", v.value.preview()),
        )),
    }
}

/// `provider`: OpenCode 1.18.34's `ProviderConfig` schema, the parts a config gets wrong
/// and the binary refuses (each checked on it: a model's `limit` without `context` —
/// "Missing key provider.x.models.m.limit.context" —, a number written as a string, a
/// `models` list, a string `env`). Unknown keys pass, as they do there; `options` is not
/// looked into.
fn check_providers(v: &Node) -> Result<(), ConfigError> {
    let Value::Object(providers) = &v.value else {
        return expect_object(v, "provider");
    };
    for (name, p) in providers.iter() {
        let path = format!("provider.{name}");
        let Value::Object(o) = &p.value else {
            return Err(err(
                p,
                &path,
                format!("expected a provider object, got {}", p.value.preview()),
            ));
        };
        for (k, f) in o.iter() {
            let at = format!("{path}.{k}");
            match k {
                "api" | "name" | "id" | "npm" => expect_string(f, &at)?,
                "env" | "whitelist" | "blacklist" => expect_strings(f, &at)?,
                "models" => {
                    let Value::Object(models) = &f.value else {
                        return expect_object(f, &at);
                    };
                    for (m, model) in models.iter() {
                        check_model(model, &format!("{at}.{m}"))?;
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// One model of a provider (`provider.x.models.m`), as [`check_providers`] checks it.
fn check_model(v: &Node, path: &str) -> Result<(), ConfigError> {
    let Value::Object(o) = &v.value else {
        return expect_object(v, path);
    };
    // An object whose `required` keys must be finite numbers and `optional` ones, when
    // given, too.
    let numbers = |f: &Node, at: &str, required: &[&str], optional: &[&str]| {
        let Value::Object(n) = &f.value else {
            return expect_object(f, at);
        };
        for key in required {
            match n.get(key) {
                Some(x) => expect_finite(x, &format!("{at}.{key}"))?,
                None => {
                    return Err(err(
                        f,
                        at,
                        format!(
                            "missing key `{key}` (OpenCode requires {} here)",
                            required
                                .iter()
                                .map(|r| format!("`{r}`"))
                                .collect::<Vec<_>>()
                                .join(" and ")
                        ),
                    ));
                }
            }
        }
        for key in optional {
            if let Some(x) = n.get(key) {
                expect_finite(x, &format!("{at}.{key}"))?;
            }
        }
        Ok(())
    };
    for (k, f) in o.iter() {
        let at = format!("{path}.{k}");
        match k {
            "id" | "name" | "family" | "release_date" => expect_string(f, &at)?,
            "attachment" | "reasoning" | "temperature" | "tool_call" | "experimental" => {
                expect_bool(f, &at)?
            }
            "limit" => numbers(f, &at, &["context", "output"], &["input"])?,
            "cost" => numbers(f, &at, &["input", "output"], &["cache_read", "cache_write"])?,
            "variants" => {
                let Value::Object(vs) = &f.value else {
                    return expect_object(f, &at);
                };
                for (name, x) in vs.iter() {
                    expect_object(x, &format!("{at}.{name}"))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The simpler top-level fields of OpenCode's `ConfigV1.Info` (research note A §1.2): a wrong
/// type there refuses the whole config just like a bad permission. Deep provider, MCP, LSP
/// and formatter schemas are checked only for being objects.
fn check_other_top_level(k: &str, v: &Node) -> Result<(), ConfigError> {
    match k {
        "$schema" | "shell" | "model" | "small_model" | "default_agent" | "username" => {
            expect_string(v, k)
        }
        "logLevel" => expect_one_of(v, k, &["DEBUG", "INFO", "WARN", "ERROR"]),
        "share" => expect_one_of(v, k, &["manual", "auto", "disabled"]),
        "layout" => expect_one_of(v, k, &["auto", "stretch"]),
        "snapshot" | "autoshare" => expect_bool(v, k),
        "autoupdate" => match &v.value {
            Value::Bool(_) => Ok(()),
            Value::String(s) if s == "notify" => Ok(()),
            _ => Err(err(
                v,
                k,
                format!(
                    "expected a boolean or \"notify\", got {}",
                    v.value.preview()
                ),
            )),
        },
        "instructions" | "disabled_providers" | "enabled_providers" => expect_strings(v, k),
        "subagent_depth" => match number(v) {
            Some(n) if n.fract() == 0.0 && n >= 0.0 => Ok(()),
            _ => Err(err(
                v,
                k,
                format!("expected a non-negative integer, got {}", v.value.preview()),
            )),
        },
        "provider" => check_providers(v),
        "mcp" | "command" | "server" | "watcher" | "attachment" | "enterprise" | "tool_output"
        | "compaction" | "experimental" => expect_object(v, k),
        "formatter" | "lsp" => match v.value {
            Value::Bool(_) | Value::Object(_) => Ok(()),
            _ => Err(err(
                v,
                k,
                format!("expected a boolean or an object, got {}", v.value.preview()),
            )),
        },
        "plugin" => match &v.value {
            Value::Array(items) => items.iter().try_for_each(|i| match &i.value {
                Value::String(_) => Ok(()),
                Value::Array(pair)
                    if pair.len() == 2
                        && matches!(pair[0].value, Value::String(_))
                        && matches!(pair[1].value, Value::Object(_)) =>
                {
                    Ok(())
                }
                _ => Err(err(
                    i,
                    k,
                    format!(
                        "expected a plugin name or [name, options], got {}",
                        i.value.preview()
                    ),
                )),
            }),
            _ => Err(err(
                v,
                k,
                format!("expected an array, got {}", v.value.preview()),
            )),
        },
        _ => Ok(()),
    }
}

/// Decode one agent entry (`agent.NAME`, `mode.NAME`, or a markdown agent's frontmatter).
pub fn decode_agent(
    node: &Node,
    path: &str,
    kind: EntryKind,
    sw: &Switches,
) -> Result<AgentEntry, ConfigError> {
    let Value::Object(o) = &node.value else {
        return Err(err(
            node,
            path,
            format!("expected an agent object, got {}", node.value.preview()),
        ));
    };
    let mut entry = AgentEntry {
        loc: Some(key_loc(node)),
        ..AgentEntry::default()
    };
    let perm_layer = match kind {
        EntryKind::Json => Layer::AgentConfig,
        EntryKind::Mode => Layer::Mode,
        EntryKind::Markdown => Layer::MarkdownAgent,
    };
    let mut permission = None;
    let mut tools = None;
    for (k, v) in o.iter() {
        let p = join(path, k);
        match k {
            // A V2 `permissions` key is refused only in JSON configs, before decoding
            // ([`v2_permissions`]); in markdown frontmatter OpenCode keeps it as an agent
            // option and it writes no rule (verified on 1.18.34; `ignored-key`).
            "permission" => {
                if !sw.agent_permission_string && matches!(v.value, Value::String(_)) {
                    return Err(err(
                        v,
                        &p,
                        format!(
                            "expected an object of permissions, got {} (releases before 1.17.11 refuse an agent's string form)",
                            v.value.preview()
                        ),
                    ));
                }
                permission = Some(decode_permission(v, &p, perm_layer)?)
            }
            "tools" => tools = Some(decode_tools(v, &p)?),
            "disable" | "hidden" => {
                let Value::Bool(b) = v.value else {
                    return Err(err(
                        v,
                        &p,
                        format!("expected a boolean, got {}", v.value.preview()),
                    ));
                };
                if k == "disable" {
                    entry.disable = Some(b);
                } else {
                    entry.hidden = Some(b);
                }
            }
            "mode" => match v.value.as_str() {
                Some(m) if MODES.contains(&m) => entry.mode = Some(m.to_string()),
                _ => {
                    return Err(err(
                        v,
                        &p,
                        format!(
                            "expected \"primary\", \"subagent\" or \"all\", got {}",
                            v.value.preview()
                        ),
                    ));
                }
            },
            "name" => {
                if let Value::String(n) = &v.value {
                    entry.name = Some(n.clone());
                }
            }
            "model" | "prompt" | "description" | "variant" => {
                expect_string(v, &p)?;
                let text = v.value.as_str().map(str::to_string);
                match k {
                    "prompt" => {
                        entry.prompt = text;
                        entry.prompt_loc = Some(key_loc(v));
                    }
                    "description" => {
                        entry.description = text;
                        entry.description_loc = Some(key_loc(v));
                    }
                    _ => {}
                }
            }
            "color" => {
                expect_string(v, &p)?;
                let c = v.value.as_str().unwrap_or_default();
                let hex = c.len() == 7
                    && c.starts_with('#')
                    && c[1..].chars().all(|ch| ch.is_ascii_hexdigit());
                if !hex && !COLORS.contains(&c) {
                    return Err(err(
                        v,
                        &p,
                        format!(
                            "expected `#rrggbb` or one of {COLORS:?}, got {}",
                            v.value.preview()
                        ),
                    ));
                }
            }
            "temperature" | "top_p" => expect_finite(v, &p)?,
            "steps" | "maxSteps" => expect_positive_int(v, &p)?,
            "options" => expect_object(v, &p)?,
            _ => {} // other keys go to `options` in OpenCode
        }
    }
    // `perm = {}` from tools, then `Object.assign(perm, permission)`: shallow, so a
    // permission key of the same name keeps the tools position and takes its value.
    entry.permission = match (tools, permission) {
        (None, p) => p,
        (Some(t), p) => {
            let mut perm = tools_to_permission(&t, Layer::AgentLegacyTools);
            if let Some(p) = p {
                for (k, v) in p.iter() {
                    perm.set(k.to_string(), v.clone());
                }
            }
            Some(perm)
        }
    };
    Ok(entry)
}

/// Would OpenCode accept `value` written under the known key `key`: of an agent entry when
/// `in_agent`, else at a config's top level? Decides which keys an ignored key may be a
/// misspelling of: `role: "Lead architect"` is no `mode` (OpenCode refuses that value).
pub fn accepts(key: &str, value: &Node, in_agent: bool, sw: &Switches) -> bool {
    let node = one_key(key, value);
    if in_agent {
        decode_agent(&node, "", EntryKind::Json, sw).is_ok()
    } else {
        decode_file(&node, Layer::Project, sw).is_ok()
    }
}

/// Would OpenCode accept `value` as the value of the permission `permission` (`"deny"`,
/// `{"*": "ask"}`), in an agent's `permission` when `in_agent`, else in the top-level one?
pub fn accepts_as_permission(
    permission: &str,
    value: &Node,
    in_agent: bool,
    sw: &Switches,
) -> bool {
    accepts("permission", &one_key(permission, value), in_agent, sw)
}

/// The object `{key: value}`, written where `value` is.
fn one_key(key: &str, value: &Node) -> Node {
    let mut o = JsObject::new();
    o.set(key.to_string(), value.clone());
    Node {
        value: Value::Object(o),
        loc: value.loc,
        key: None,
    }
}

/// The most refusals of one file [`decode_file_all`] collects.
pub const MAX_REFUSALS: usize = 50;

/// [`decode_file`], and when it refuses, every other refusal of the file in `more`: the
/// property holding each refused value is left out (a value inside an array: the whole
/// array's property, so later paths keep their indices) and the rest decoded again, until
/// it decodes, a refusal cannot be left out (the top level), or [`MAX_REFUSALS`].
pub fn decode_file_all(
    root: &Node,
    layer: Layer,
    sw: &Switches,
) -> Result<FileConfig, ConfigError> {
    let mut first = match decode_file(root, layer, sw) {
        Ok(cfg) => return Ok(cfg),
        Err(e) => e,
    };
    let mut rest = root.clone();
    let mut at = first.loc;
    while first.more.len() + 1 < MAX_REFUSALS && without(&mut rest, at) {
        match decode_file(&rest, layer, sw) {
            Ok(_) => break,
            Err(e) if e.loc == at => break,
            Err(e) => {
                // An error of the object that held the value just left out (a required
                // key now missing: `limit.output` left out for its string) is that
                // removal's doing, not the config's: the object goes too, unreported.
                let holds = e.loc.source == at.source
                    && e.loc.span.start <= at.span.start
                    && at.span.end <= e.loc.span.end;
                at = e.loc;
                if !holds {
                    first.more.push(e);
                }
            }
        }
    }
    first.more.sort_by_key(|e| e.loc.span.start);
    Err(first)
}

/// `node` without the object property whose key or value is at `at` (or whose array
/// holds it); whether one was found.
fn without(node: &mut Node, at: Loc) -> bool {
    let Value::Object(o) = &mut node.value else {
        return false;
    };
    let inside = |l: Loc| l.span.start <= at.span.start && at.span.end <= l.span.end;
    let keys: Vec<String> = o.keys().map(str::to_string).collect();
    for k in keys {
        let Some(v) = o.get_mut(&k) else { continue };
        let hit = v.loc == at || v.key == Some(at) || v.key.is_some_and(inside);
        if hit || (inside(v.loc) && matches!(v.value, Value::Array(_))) {
            o.remove(&k);
            return true;
        }
        if inside(v.loc) {
            return without(v, at);
        }
    }
    false
}

/// Decode a whole config file's top-level object, as the release of `sw` decodes it.
pub fn decode_file(root: &Node, layer: Layer, sw: &Switches) -> Result<FileConfig, ConfigError> {
    let Value::Object(o) = &root.value else {
        return Err(err(
            root,
            "",
            format!(
                "expected a config object at the top level, got {}",
                root.value.preview()
            ),
        ));
    };
    let v2 = v2_permissions(o);
    let mut cfg = FileConfig::default();
    if sw.v2_compat {
        if let Some((path, v)) = v2.into_iter().next() {
            let mut message =
                "V2 `permissions` are not supported by OpenCode V1: use V1 `permission` rules"
                    .to_string();
            // Under V2's `agents`, a V1 `permission` written in place is dropped as well
            // (OpenCode lowers a V2 agent to its mode, hidden and disabled; blind fresh-9:
            // howler): the agent moves to `agent`, its `system` to `prompt`.
            if let Some(name) = path
                .strip_prefix("agents.")
                .and_then(|r| r.strip_suffix(".permissions"))
            {
                let rules = v2_rules(v).and_then(|out| v2_rules_text(&out, false));
                message.push_str(&format!(
                    ", and not under `agents` (OpenCode 2's key): this release keeps only an `agents` entry's mode, hidden and disabled, so a `permission` (or `system` prompt) written there is dropped too; move the agent to `agent.{name}`, its `system` to `prompt`, and write {}",
                    match rules {
                        Some(r) => format!("`\"permission\": {r}`"),
                        None => "its rules as `permission`".into(),
                    }
                ));
            }
            return Err(err(v, &path, message));
        }
    } else {
        // Before 1.18.24 the key is only unknown: refused at the top level (with every
        // unknown key) up to 1.18.15, ignored there after, an agent option in entries.
        cfg.ignored = v2.into_iter().map(|(p, v)| (p, key_loc(v))).collect();
    }
    let mut v2_agents = Vec::new();
    for (k, v) in o.iter() {
        if let Some(as_of) = sw.unknown_keys_refused_as_of
            && !known_top_level_key(k, as_of)
        {
            return Err(err(
                v,
                k,
                format!(
                    "unrecognized key `{k}`: releases up to 1.18.15 refuse a top-level key outside their schema"
                ),
            ));
        }
        match k {
            "skills" if !sw.v2_compat && matches!(v.value, Value::Array(_)) => {
                return Err(err(
                    v,
                    k,
                    format!(
                        "expected an object, got {} (the V2 array form is read from 1.18.24)",
                        v.value.preview()
                    ),
                ));
            }
            "permission" => cfg.permission = Some(decode_permission(v, k, layer)?),
            "tools" => cfg.tools = Some(decode_tools(v, k)?),
            "skills" => cfg.skill_paths = decode_skills(v, k)?,
            "references" => {
                let r = decode_references(v, k)?;
                cfg.reference_names[0] = Some(r.keys().map(str::to_string).collect());
                cfg.references = Some(r);
            }
            "reference" => {
                let r = decode_references(v, k)?;
                cfg.reference_names[1] = Some(r.keys().map(str::to_string).collect());
                if cfg.references.is_none() {
                    cfg.references = Some(r);
                }
            }
            "agent" | "mode" => {
                let agents = object_of(v, k, "agents")?;
                let kind = if k == "agent" {
                    EntryKind::Json
                } else {
                    EntryKind::Mode
                };
                let mut out = JsObject::new();
                for (name, a) in agents.iter().filter(|(k, _)| *k != "__proto__") {
                    out.set(name.to_string(), decode_agent(a, &join(k, name), kind, sw)?);
                }
                if k == "agent" {
                    cfg.agent = out;
                } else {
                    cfg.mode = out;
                }
            }
            "agents" if sw.v2_compat => {
                // V2 `agents` is lowered to V1 `agent` (research note A §1.3); its
                // `permission` is dropped, and an `agent.NAME` of the same file wins.
                if let Value::Object(agents) = &v.value {
                    for (name, a) in agents.iter() {
                        if let Some(e) = lower_v2_agent(a) {
                            v2_agents.push((name.to_string(), e));
                        }
                    }
                }
            }
            other => {
                check_other_top_level(other, v)?;
                if other == "subagent_depth" {
                    cfg.subagent_depth = number(v).map(|n| n as u64);
                }
                if other == "plugin" {
                    cfg.plugins = matches!(&v.value, Value::Array(items) if !items.is_empty());
                }
            }
        }
    }
    for (name, e) in v2_agents {
        if !cfg.agent.contains_key(&name) {
            cfg.agent.set(name, e);
        }
    }
    Ok(cfg)
}

/// Every V2 `permissions` key of a JSON config's top-level object, with its JSON path, in
/// the order OpenCode's `ConfigV2Compat.lower` lists them: the top-level key, then
/// `agents.NAME.permissions`, `agent.NAME.permissions`, `mode.NAME.permissions` (an entry
/// that is not an object is skipped; so is a `__proto__` name, which its record decoding
/// drops). From 1.18.24 OpenCode refuses the file when this is not empty, before any other
/// check of the file; markdown frontmatter never goes through it (verified on the binaries).
pub fn v2_permissions(o: &JsObject<Node>) -> Vec<(String, &Node)> {
    let mut out = Vec::new();
    if let Some(v) = o.get("permissions") {
        out.push(("permissions".to_string(), v));
    }
    for group in ["agents", "agent", "mode"] {
        let Some(Value::Object(entries)) = o.get(group).map(|n| &n.value) else {
            continue;
        };
        for (name, e) in entries.iter().filter(|(k, _)| *k != "__proto__") {
            if let Some(v) = e.value.as_object().and_then(|a| a.get("permissions")) {
                out.push((format!("{group}.{name}.permissions"), v));
            }
        }
    }
    out
}

/// A foreign `permissions:` block's rules in OpenCode's shape (permission → patterns in
/// order), for the two shapes seen in public configs: a list of `{action, resource, effect}` (OpenCode's V2
/// spelling: `subagent` is `task`, `shell` is `bash`) and `TOOL: {allow: [...], ask: [...],
/// deny: [...]}` (denies written last, so they win as the block meant); a catch-all first. `None` for any
/// other shape, or for an action, effect or pattern it cannot carry over.
pub fn v2_rules(p: &Node) -> Option<indexmap::IndexMap<String, Vec<(String, &'static str)>>> {
    fn tool(name: &str) -> &str {
        match name {
            "subagent" | "agent" => "task",
            "shell" | "command" => "bash",
            "fetch" | "web_fetch" => "webfetch",
            "write" | "patch" => "edit",
            other => other,
        }
    }
    fn effect(e: &str) -> Option<&'static str> {
        match e {
            "allow" => Some("allow"),
            "ask" => Some("ask"),
            "deny" => Some("deny"),
            _ => None,
        }
    }
    let text = |n: &Node| match &n.value {
        Value::String(s) => Some(s.clone()),
        _ => None,
    };
    let mut out: indexmap::IndexMap<String, Vec<(String, &'static str)>> = Default::default();
    match &p.value {
        Value::Array(items) => {
            for item in items {
                let Value::Object(o) = &item.value else {
                    return None;
                };
                let field = |keys: &[&str]| keys.iter().find_map(|k| o.get(k)).and_then(text);
                let action = field(&["action", "permission", "tool"])?;
                let pattern = field(&["resource", "pattern"]).unwrap_or_else(|| "*".into());
                let e = effect(&field(&["effect", "decision"])?)?;
                out.entry(tool(&action).to_string())
                    .or_default()
                    .push((pattern, e));
            }
        }
        Value::Object(o) => {
            for (name, v) in o.iter() {
                let Value::Object(lists) = &v.value else {
                    return None;
                };
                let entry = out.entry(tool(name).to_string()).or_default();
                for want in ["allow", "ask", "deny"] {
                    let Some(list) = lists.get(want) else {
                        continue;
                    };
                    let Value::Array(items) = &list.value else {
                        return None;
                    };
                    for item in items {
                        entry.push((text(item)?, effect(want)?));
                    }
                }
                if lists.keys().any(|k| !matches!(k, "allow" | "ask" | "deny")) {
                    return None;
                }
            }
        }
        _ => return None,
    }
    if out.is_empty() || out.values().any(Vec::is_empty) {
        return None;
    }
    // A catch-all first, whatever its place: the block's specific entries are its exceptions
    // (OpenCode's last match would otherwise let `*` undo them).
    for rules in out.values_mut() {
        rules.sort_by_key(|(pat, _)| !pat.chars().all(|c| c == '*'));
    }
    Some(out)
}

/// [`v2_rules`] as a permission map's text: JSON, or YAML flow style for frontmatter (a
/// key YAML reads as itself unquoted, `read`; else quoted: a bare `*` is an alias in YAML,
/// and OpenCode refuses the file).
pub fn v2_rules_text(
    out: &indexmap::IndexMap<String, Vec<(String, &'static str)>>,
    yaml: bool,
) -> Option<String> {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut tools: Vec<String> = Vec::new();
    for (t, rules) in out {
        // A pattern written twice (`edit` and `write` both `"*"`): the last one decides
        // (findLast), so only it is kept, at its own place; an object key written twice
        // would be refused (blind fresh-13 B: Saka-CS).
        let kept: Vec<&(String, &str)> = rules
            .iter()
            .enumerate()
            .filter(|(k, (pat, _))| !rules[k + 1..].iter().any(|(p, _)| p == pat))
            .map(|(_, r)| r)
            .collect();
        let action = |e: &str| if yaml { e.to_string() } else { quote(e) };
        let plain = yaml
            && t.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        let key = if plain { t.clone() } else { quote(t) };
        let value = match kept.as_slice() {
            // One rule for everything: the action alone, the only form `webfetch` and the
            // other action-only keys take.
            [(pat, e)] if pat == "*" => action(e),
            _ if ACTION_ONLY_KEYS.contains(&t.as_str()) => return None,
            _ => {
                let rules: Vec<String> = kept
                    .iter()
                    .map(|(pat, e)| format!("{}: {}", quote(pat), action(e)))
                    .collect();
                format!("{{{}}}", rules.join(", "))
            }
        };
        tools.push(format!("{key}: {value}"));
    }
    Some(format!("{{{}}}", tools.join(", ")))
}

/// A V2 `agents.NAME` entry as OpenCode lowers it: mode, hidden and `disabled` survive.
fn lower_v2_agent(a: &Node) -> Option<AgentEntry> {
    let o = a.value.as_object()?;
    let mut e = AgentEntry {
        loc: Some(key_loc(a)),
        permission: Some(PermissionMap::new()),
        ..AgentEntry::default()
    };
    if let Some(m) = o
        .get("mode")
        .and_then(|n| n.value.as_str())
        .filter(|m| MODES.contains(m))
    {
        e.mode = Some(m.to_string());
    }
    if let Some(Value::Bool(h)) = o.get("hidden").map(|n| &n.value) {
        e.hidden = Some(*h);
    }
    if let Some(Value::Bool(d)) = o.get("disabled").map(|n| &n.value) {
        e.disable = Some(*d);
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;
    use crate::source::SourceId;
    use crate::syntax::jsonc;

    fn decode(text: &str) -> Result<FileConfig, ConfigError> {
        let n = jsonc::parse(text, SourceId(0), &|o| o).unwrap();
        decode_file(&n, Layer::Project, &Profile::default().switches)
    }

    fn keys(m: &PermissionMap) -> Vec<String> {
        m.keys().map(str::to_string).collect()
    }

    #[test]
    fn string_form_is_star() {
        let c = decode(r#"{"permission":"allow"}"#).unwrap();
        assert_eq!(keys(c.permission.as_ref().unwrap()), ["*"]);
    }

    #[test]
    fn refusals() {
        for (t, path) in [
            (r#"{"permission":{"bash":"ALLOW"}}"#, "permission.bash"),
            (
                r#"{"permission":{"webfetch":{"https://x/*":"deny"}}}"#,
                "permission.webfetch",
            ),
            (r#"{"permission":{"bash":null}}"#, "permission.bash"),
            (r#"{"permission":[]}"#, "permission"),
            (
                r#"{"permission":{"bash":{"git":{"*":"deny"}}}}"#,
                "permission.bash.git",
            ),
            (r#"{"permission":{"bash":5}}"#, "permission.bash"),
            (r#"{"permissions":{}}"#, "permissions"),
            (
                r#"{"agent":{"build":{"permissions":{}}}}"#,
                "agent.build.permissions",
            ),
            (
                r#"{"agents":{"build":{"permissions":null}}}"#,
                "agents.build.permissions",
            ),
            (
                r#"{"permission":{"bash":"ALLOW"},"mode":{"m":{"permissions":1}}}"#,
                "mode.m.permissions",
            ),
            (r#"[]"#, ""),
        ] {
            let e = decode(t).unwrap_err();
            assert_eq!(e.path, path, "{t}");
        }
    }

    #[test]
    fn markdown_permissions_write_no_rule() {
        let n = jsonc::parse(
            r#"{"permissions":{"bash":"deny"},"tools":{"bash":false}}"#,
            SourceId(0),
            &|o| o,
        )
        .unwrap();
        let e = decode_agent(&n, "", EntryKind::Markdown, &Profile::default().switches).unwrap();
        assert_eq!(keys(e.permission.as_ref().unwrap()), ["bash"]);
        let PermEntry::Action(l) = e.permission.as_ref().unwrap().get("bash").unwrap() else {
            panic!()
        };
        assert_eq!(l.layer, Layer::AgentLegacyTools);
    }

    #[test]
    fn agent_tools_come_first_and_lose_to_permission() {
        let c = decode(
            r#"{"agent":{"build":{"permission":{"bash":"allow","write":"ask"},"tools":{"webfetch":false,"write":false,"bash":false}}}}"#,
        )
        .unwrap();
        let b = c.agent.get("build").unwrap().permission.as_ref().unwrap();
        assert_eq!(keys(b), ["webfetch", "edit", "bash", "write"]);
        let PermEntry::Action(l) = b.get("bash").unwrap() else {
            panic!()
        };
        assert_eq!(l.action, Action::Allow);
        assert_eq!(l.layer, Layer::AgentConfig);
    }
}
