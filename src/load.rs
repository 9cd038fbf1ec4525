//! Load: read every discovered source through the [`Host`], substitute, parse, decode and
//! merge, exactly in OpenCode's order (spec §5). The result is the merged permission-relevant
//! config with provenance on every leaf.

use crate::discover::{self, Discovery, Host, MarkdownKind, Paths, ReadErrorKind, Step};
use crate::model::config::Leaf;
use crate::model::config::{
    self, AgentEntry, ConfigError, EntryKind, FileConfig, PermEntry, PermissionMap, Reference,
    ToolEntry, merge_permission, tools_to_permission,
};
use crate::model::{Action, Layer};
use crate::profile::{Profile, Switches};
use crate::source::{Loc, Origin, SourceFile, SourceId, SourceMap, Span};
use crate::syntax::frontmatter::{self, Frontmatter};
use crate::syntax::value::{JsObject, Node, Value};
use crate::syntax::{jsonc, subst};
use std::path::{Path, PathBuf};

/// The largest source permaudit reads (OpenCode has no limit; this keeps `/dev/zero` and
/// runaway files from hanging or exhausting memory).
pub const MAX_FILE_BYTES: u64 = 128 * 1024 * 1024;

/// The longest permission key or pattern permaudit reads, in characters. OpenCode has no
/// limit; proofs over longer patterns cost time that grows with the square of their length
/// (a 64 KiB pattern takes seconds to analyse), and no real pattern comes close.
pub const MAX_PATTERN_CHARS: usize = 4096;

/// The most rules all configs together may write (after merging, every agent's included).
/// OpenCode has no limit; this bounds time and memory of every command.
pub const MAX_RULES: usize = 100_000;

/// The merged, permission-relevant config.
#[derive(Debug, Clone, Default)]
pub struct Merged {
    /// Top-level `permission`, after `mode`, `OPENCODE_PERMISSION` and `tools` (spec §5.1).
    pub permission: PermissionMap,
    pub agent: JsObject<AgentEntry>,
    /// `subagent_depth` of the last config that sets it (default 1: see [`crate::delegation`]).
    pub subagent_depth: Option<u64>,
}

/// A problem OpenCode does not refuse but an auditor must say.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub loc: Loc,
    pub code: &'static str,
    pub message: String,
    /// What OpenCode ignores holds a deny or an ask (or a tool switched off): the author
    /// believes something is restricted that is not.
    pub lost_protection: bool,
}

/// Does this value hold a restriction anywhere: an action `deny` or `ask`, or `false` (a
/// tool switched off)?
pub fn holds_restriction(n: &Node) -> bool {
    match &n.value {
        Value::String(s) => s == "deny" || s == "ask",
        Value::Bool(b) => !b,
        Value::Object(o) => o.iter().any(|(_, v)| holds_restriction(v)),
        Value::Array(items) => items.iter().any(holds_restriction),
        _ => false,
    }
}

/// Does a frontmatter `permissions:` block deny or ask for anything, whatever its shape:
/// an action `deny` or `ask`, a tool switched off, or a list or map under a key that
/// names a refusal in another tool's schema (`deny: ["rm -rf*"]`, Claude Code's
/// `permissions: {deny: ["Bash(rm:*)"]}`, `bash: {ask: [...]}`)? OpenCode reads none of
/// it, so whatever it refuses is lost.
pub fn block_restricts(n: &Node) -> bool {
    const REFUSING: &[&str] = &[
        "deny",
        "denied",
        "ask",
        "disallow",
        "disallowed",
        "block",
        "blocked",
        "forbid",
        "forbidden",
        "reject",
        "never",
    ];
    let nonempty = |v: &Node| match &v.value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(o) => o.iter().next().is_some(),
        Value::String(s) => !s.trim().is_empty(),
        Value::Bool(b) => *b,
        _ => false,
    };
    holds_restriction(n)
        || match &n.value {
            Value::Object(o) => o.iter().any(|(k, v)| {
                (REFUSING.contains(&k.to_ascii_lowercase().as_str()) && nonempty(v))
                    || block_restricts(v)
            }),
            Value::Array(items) => items.iter().any(block_restricts),
            _ => false,
        }
}

/// A legacy `tools` entry as written. OpenCode folds these into `permission` (spec §5.4),
/// and an entry that a same-name permission key overrides leaves no rule behind, so the
/// entries are kept here for the `legacy-tools` audit.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRecord {
    /// `None` for a top-level `tools` map; the agent's name for `agent.NAME.tools`,
    /// `mode.NAME.tools` or a markdown agent's `tools`.
    pub agent: Option<String>,
    /// The key as written (`write`, `bash`, …).
    pub tool: String,
    pub enabled: bool,
    /// The key.
    pub loc: Loc,
}

/// What the audits need beyond the merged config. Loading records it and nothing else
/// reads it: it never changes a ruleset.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    /// Every `{env:…}` and `{file:…}` token replaced in a JSON source: where it was written
    /// and its text (`{env:VAR}`).
    pub substitutions: Vec<(Loc, String)>,
    /// In JSON sources: every `permission` object (top level, `agent.NAME`, `mode.NAME`).
    pub permission_objects: Vec<Loc>,
    /// In JSON sources: every pattern object inside a `permission` object.
    pub pattern_objects: Vec<Loc>,
    /// In JSON sources: every `tools` object (top level and per agent).
    pub tools_objects: Vec<Loc>,
    /// The objects of `permission_objects` and `pattern_objects` whose written key order
    /// JavaScript changes.
    pub reordered: Vec<jsonc::WrittenObject>,
    /// Every legacy `tools` entry, in load order.
    pub tools: Vec<ToolRecord>,
    /// Keys OpenCode ignores: top-level keys outside its schema (dropped) and agent keys
    /// outside the agent schema (moved into the agent's `options`), in load order.
    pub ignored_keys: Vec<IgnoredKey>,
    /// The tools the config directories define (`{tool,tools}/NAME.{js,ts}`, a default
    /// export named NAME; named exports are `NAME_EXPORT`), sorted.
    pub custom_tools: Vec<String>,
    /// Plugins that may add tools of any name: a `plugin` list in some config, or
    /// `{plugin,plugins}/*.{js,ts}` in a config directory.
    pub plugins: bool,
    /// Every frontmatter `permissions:` block (ignored by OpenCode), in load order.
    pub ignored_blocks: Vec<IgnoredBlock>,
    /// Each MCP server the JSON configs name (`mcp.NAME`; its tools are `NAME_TOOL`), as
    /// the merged config has it (a later file's `mcp.NAME` merged over an earlier one's, as
    /// OpenCode merges configs), in first-named order.
    pub mcp: Vec<McpServer>,
}

/// An MCP server of the merged config: where it is first given a command, and that
/// command (`["npx", "-y", "@modelcontextprotocol/server-filesystem", "~"]`).
#[derive(Debug, Clone)]
pub struct McpServer {
    pub name: String,
    /// The `mcp.NAME` key that gives its command (else its first mention).
    pub loc: Loc,
    pub command: Vec<String>,
    /// A remote server's `url`.
    pub url: Option<String>,
    /// `enabled` as the last file that sets it says (OpenCode starts it unless `false`).
    pub enabled: bool,
}

/// `mcp.NAME` of one config file merged into the servers seen so far: a later file's
/// `command` and `enabled` win, as OpenCode's deep merge has them.
fn record_mcp(servers: &mut Vec<McpServer>, name: &str, node: &Node) {
    let loc = node.key.unwrap_or(node.loc);
    let i = match servers.iter().position(|s| s.name == name) {
        Some(i) => i,
        None => {
            servers.push(McpServer {
                name: name.to_string(),
                loc,
                command: Vec::new(),
                url: None,
                enabled: true,
            });
            servers.len() - 1
        }
    };
    let Some(o) = node.value.as_object() else {
        return;
    };
    let s = &mut servers[i];
    if let Some(Value::Array(items)) = o.get("command").map(|c| &c.value) {
        s.command = items
            .iter()
            .filter_map(|i| i.value.as_str().map(str::to_string))
            .collect();
        s.loc = loc;
    }
    if let Some(u) = o.get("url").and_then(|u| u.value.as_str()) {
        s.url = Some(u.to_string());
        s.loc = loc;
    }
    if let Some(Value::Bool(e)) = o.get("enabled").map(|e| &e.value) {
        s.enabled = *e;
    }
}

/// A markdown agent's `permissions:` block, which OpenCode ignores, and what it meant: the
/// permission entries it would give written as `permission:`, or, when its values are
/// switches, written as `tools:`. `None` when neither takes it.
#[derive(Debug, Clone)]
pub struct IgnoredBlock {
    /// The key as written (the place of its `ignored-key` warning).
    pub loc: Loc,
    pub agent: String,
    pub meant: Option<config::PermissionMap>,
}

/// A key OpenCode reads past without a word.
#[derive(Debug, Clone, PartialEq)]
pub struct IgnoredKey {
    /// The key as written.
    pub loc: Loc,
    pub key: String,
    /// The agent whose entry holds it; `None` at the top level.
    pub agent: Option<String>,
    /// It holds a deny, an ask or a tool switched off ([`holds_restriction`]).
    pub lost_protection: bool,
    /// The value, when it is `true` or `false` (a tool switch written in the wrong place).
    pub switch: Option<bool>,
    /// Where the same entry's `permission` already has this key.
    pub in_permission: Option<Loc>,
    /// The value as written: whether OpenCode would accept it under another key
    /// ([`config::accepts`]) is asked by the check, of the near keys only.
    pub value: Node,
}

/// `IgnoredKey::switch` and `IgnoredKey::in_permission` of key `k` with value `v` in the
/// object `entry` (an agent entry or a config's top level).
fn beside(
    entry: &crate::syntax::value::JsObject,
    k: &str,
    v: &Node,
) -> (Option<bool>, Option<Loc>) {
    let switch = match v.value {
        crate::syntax::value::Value::Bool(b) => Some(b),
        _ => None,
    };
    let in_permission = entry
        .get("permission")
        .and_then(|p| p.value.as_object())
        .and_then(|p| p.get(k))
        .map(config::key_loc);
    (switch, in_permission)
}

/// Record the keys of an agent entry that OpenCode's agent schema does not read.
fn record_ignored_agent_keys(a: &mut Audit, agent: &str, entry: &Node) {
    if let Some(o) = entry.value.as_object() {
        record_ignored_keys(a, o, config::AGENT_KEYS, Some(agent));
    }
}

/// Record the keys of `o` (an agent entry, or the top level with `agent` `None`) that
/// are not among the `read` ones.
fn record_ignored_keys(a: &mut Audit, o: &JsObject, read: &[&str], agent: Option<&str>) {
    a.ignored_keys
        .extend(o.iter().filter(|(k, _)| !read.contains(k)).map(|(k, v)| {
            let (switch, in_permission) = beside(o, k, v);
            IgnoredKey {
                loc: config::key_loc(v),
                key: k.to_string(),
                agent: agent.map(str::to_string),
                lost_protection: holds_restriction(v),
                switch,
                in_permission,
                value: v.clone(),
            }
        }));
}

/// Everything loaded.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub sources: SourceMap,
    pub discovery: Discovery,
    pub merged: Merged,
    pub warnings: Vec<Warning>,
    /// Directories (skills, references) joining the `external_directory` whitelist.
    pub whitelist_dirs: Vec<String>,
    /// Facts for the audits (`env-injection`, `js-key-order`, `legacy-tools`).
    pub audit: Audit,
    /// How the profile's release decodes a config (what it would accept where).
    pub switches: Switches,
}

impl Loaded {
    pub fn paths(&self) -> &Paths {
        &self.discovery.paths
    }
}

/// Why OpenCode would refuse to start (permaudit exits 2).
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// A source could not be read.
    Read { path: PathBuf, message: String },
    /// Not valid JSONC.
    Syntax { loc: Loc, message: String },
    /// Valid JSONC that OpenCode's schema refuses.
    Invalid(ConfigError),
    /// A `{file:…}` reference that cannot be read.
    FileRef { loc: Loc, message: String },
    /// Something OpenCode accepts but whose rules permaudit cannot know (JavaScript frontmatter).
    Unauditable { loc: Loc, message: String },
    /// Past one of permaudit's own limits (docs/limits.md): what OpenCode makes of it is
    /// not known, so permaudit says nothing about it rather than guess.
    Limit { loc: Loc, message: String },
    /// A directory walk past [`discover::MAX_WALK_DIRS`].
    WalkLimit(discover::WalkLimit),
}

/// A failed load keeps the sources read so far, for rendering the error.
#[derive(Debug, Clone)]
pub struct Failure {
    pub sources: SourceMap,
    pub error: LoadError,
}

struct Loader<'a> {
    host: &'a dyn Host,
    /// gray-matter's process-wide cache: a text that failed once loads unparsed later.
    matter: frontmatter::MatterCache,
    sources: SourceMap,
    warnings: Vec<Warning>,
    paths: Paths,
    audit: Audit,
    /// The switches of the OpenCode release being audited.
    sw: Switches,
}

/// A JSONC error: OpenCode's refusal, or permaudit's nesting limit (OpenCode reads deeper).
fn syntax_error(e: jsonc::SyntaxError) -> LoadError {
    if e.limit {
        LoadError::Limit {
            loc: e.loc,
            message: e.message,
        }
    } else {
        LoadError::Syntax {
            loc: e.loc,
            message: e.message,
        }
    }
}

fn decode_text(bytes: &[u8]) -> String {
    // Bun decodes files as UTF-8, replacing invalid sequences with U+FFFD.
    String::from_utf8_lossy(bytes).into_owned()
}

impl Loader<'_> {
    /// Read a source. `Ok(None)` for a file that is missing or unreadable, which OpenCode's
    /// `readFileStringSafe` treats as absent.
    fn read(&mut self, path: &Path) -> Result<Option<SourceId>, LoadError> {
        match self.host.read(path) {
            Ok(bytes) => Ok(Some(
                self.sources
                    .add(SourceFile::decode(Origin::File(path.to_path_buf()), &bytes)),
            )),
            Err(e) if e.kind != ReadErrorKind::Other => Ok(None),
            Err(e) => Err(LoadError::Read {
                path: path.to_path_buf(),
                message: e.message,
            }),
        }
    }

    /// Substitute and parse one JSONC source whose `{file:}` references resolve in `dir`.
    fn parse_json(
        &mut self,
        id: SourceId,
        dir: &Path,
        dialect: jsonc::Dialect,
    ) -> Result<Node, LoadError> {
        let text = self.sources.get(id).text.clone();
        let host = self.host;
        let home = self.paths.home.clone();
        let read_file = |reference: &str| -> Result<String, String> {
            let p = if let Some(rest) = reference.strip_prefix("~/") {
                home.join(rest)
            } else {
                discover::normalize(&dir.join(reference))
            };
            // OpenCode says "does not exist" only for ENOENT; any other failure (a
            // directory, an unreadable file) is the bare "bad file reference".
            host.read(&p)
                .map(|b| decode_text(&b))
                .map_err(|e| match e.kind {
                    ReadErrorKind::NotFound => format!(
                        "bad file reference: \"{{file:{reference}}}\" {} does not exist",
                        p.display()
                    ),
                    _ => format!(
                        "bad file reference: \"{{file:{reference}}}\": {}",
                        e.message
                    ),
                })
        };
        let env = |name: &str| host.var(name);
        let sub = subst::substitute(&text, &env, &read_file).map_err(|e| LoadError::FileRef {
            loc: Loc {
                source: id,
                span: Span::new(e.start, e.end),
            },
            message: e.message,
        })?;
        let (node, written) = jsonc::parse_recording(&sub.text, id, &|o| sub.to_source(o), dialect)
            .map_err(syntax_error)?;
        self.record(id, &sub, &node, written);
        Ok(node)
    }

    /// Keep what the audits need from one parsed JSON source (see [`Audit`]).
    fn record(
        &mut self,
        id: SourceId,
        sub: &subst::Substituted,
        root: &Node,
        written: Vec<jsonc::WrittenObject>,
    ) {
        let a = &mut self.audit;
        a.substitutions.extend(sub.replaced.iter().map(|(s, e, r)| {
            (
                Loc {
                    source: id,
                    span: Span::new(*s, *e),
                },
                r.clone(),
            )
        }));
        let Some(top) = root.value.as_object() else {
            return;
        };
        let (first_map, first_pat) = (a.permission_objects.len(), a.pattern_objects.len());
        let permission = |n: &Node, a: &mut Audit| {
            if let Some(o) = n.value.as_object() {
                a.permission_objects.push(n.loc);
                for (_, v) in o.iter() {
                    if v.value.as_object().is_some() {
                        a.pattern_objects.push(v.loc);
                    }
                }
            }
        };
        if let Some(p) = top.get("permission") {
            permission(p, a);
        }
        record_ignored_keys(a, top, config::TOP_LEVEL_KEYS, None);
        if let Some(t) = top.get("tools") {
            a.tools_objects.push(t.loc);
            record_tools(a, None, t);
        }
        for map in ["agent", "mode"] {
            for (name, entry) in top
                .get(map)
                .and_then(|m| m.value.as_object())
                .into_iter()
                .flat_map(|m| m.iter())
            {
                let Some(e) = entry.value.as_object() else {
                    continue;
                };
                record_ignored_agent_keys(a, name, entry);
                if let Some(p) = e.get("permission") {
                    permission(p, a);
                }
                if let Some(t) = e.get("tools") {
                    a.tools_objects.push(t.loc);
                    record_tools(a, Some(name), t);
                }
            }
        }
        let (maps, pats) = (
            &a.permission_objects[first_map..],
            &a.pattern_objects[first_pat..],
        );
        a.reordered.extend(
            written
                .into_iter()
                .filter(|w| maps.contains(&w.loc) || pats.contains(&w.loc)),
        );
    }

    /// Decode a JSON config; its ignored V2 `permissions` blocks become warnings.
    fn decode_file(&mut self, node: &Node, layer: Layer) -> Result<FileConfig, LoadError> {
        let cfg = config::decode_file_all(node, layer, &self.sw).map_err(LoadError::Invalid)?;
        if let Some(servers) = node
            .value
            .as_object()
            .and_then(|o| o.get("mcp"))
            .and_then(|m| m.value.as_object())
        {
            for (name, server) in servers.iter() {
                record_mcp(&mut self.audit.mcp, name, server);
            }
        }
        for (path, loc) in &cfg.ignored {
            self.warnings.push(Warning {
                loc: *loc,
                code: "ignored-key",
                message: format!(
                    "`{path}`: this OpenCode release ignores a V2 `permissions` block (1.18.24 and later refuse it), so none of its rules apply: write `permission`"
                ),
                lost_protection: false,
            });
        }
        Ok(cfg)
    }

    /// The `broken-frontmatter` warning for `file` (`agent `name``): why, and what OpenCode
    /// does with it (`fate`).
    fn broken_frontmatter(&mut self, loc: Loc, file: &str, why: &str, fate: &str) {
        self.warnings.push(Warning {
            loc,
            code: "broken-frontmatter",
            message: format!("{file}: frontmatter is not valid YAML ({why}); OpenCode {fate}"),
            lost_protection: false,
        });
    }

    /// A markdown agent or mode: `{name: derived, ...frontmatter, prompt: body}` decoded with
    /// the agent schema (spec §5.5). Returns the agent's name (a frontmatter `name:` replaces
    /// the file-derived one) and its entry, or `None` when OpenCode drops the file.
    fn markdown(
        &mut self,
        path: &Path,
        derived: &str,
        kind: MarkdownKind,
    ) -> Result<Option<(String, AgentEntry)>, LoadError> {
        let Some(id) = self.read(path)? else {
            return Ok(None);
        };
        let text = self.sources.get(id).text.clone();
        let entry_kind = match kind {
            MarkdownKind::Agent => EntryKind::Markdown,
            MarkdownKind::Mode => EntryKind::Mode,
        };
        let what = match kind {
            MarkdownKind::Agent => "agent",
            MarkdownKind::Mode => "mode",
        };
        let data = match frontmatter::parse_cached(&text, id, &mut self.matter) {
            Frontmatter::Absent => {
                // gray-matter reads a frontmatter only from a `---` at offset 0: a blank line
                // or spaces before the fence leave the whole file as the prompt.
                // Nor does a file whose settings have no opening `---` at all.
                let why = if let Some(span) = long_fence(&text) {
                    Some((
                        span,
                        "the frontmatter opens with more than three dashes, which OpenCode (gray-matter) does not read as its fence",
                        "make the first line exactly `---`",
                    ))
                } else if let Some(span) = missing_fence(&text) {
                    Some((
                        span,
                        "the frontmatter has no opening `---` (the file starts with its settings and only a closing `---` follows them)",
                        "add `---` as the file's first line",
                    ))
                } else {
                    misplaced_fence(&text).map(|span| (span, "something comes before the frontmatter's first `---` (a blank line, spaces or an HTML comment)", "start the file with `---` (a comment can go after the closing `---`)"))
                };
                if let Some((span, why, fix)) = why {
                    self.warnings.push(Warning {
                        loc: Loc { source: id, span },
                        code: "broken-frontmatter",
                        message: format!(
                            "{what} `{derived}`: {why}, so OpenCode reads no frontmatter: the whole file is the prompt and none of its settings apply (tools, permission, mode); {fix}"
                        ),
                        lost_protection: false,
                    });
                }
                return Ok(Some((derived.to_string(), whole_prompt(kind, &text, id))));
            }
            Frontmatter::Data(node) => node,
            Frontmatter::BrokenKept(e) => {
                let fate = "loads it with the whole file as its prompt and NO permission rules from this file";
                self.broken_frontmatter(e.loc, &format!("{what} `{derived}`"), &e.message, fate);
                return Ok(Some((derived.to_string(), whole_prompt(kind, &text, id))));
            }
            Frontmatter::BrokenDropped(e) => {
                let fate = format!("silently drops this {what}");
                self.broken_frontmatter(e.loc, &format!("{what} `{derived}`"), &e.message, &fate);
                return Ok(None);
            }
            Frontmatter::OverLimit(e) => {
                return Err(LoadError::Limit {
                    loc: e.loc,
                    message: format!("{what} `{derived}`: {}", e.message),
                });
            }
            Frontmatter::Executable(e) => {
                return Err(LoadError::Unauditable {
                    loc: e.loc,
                    message: format!(
                        "{what} `{derived}`: its frontmatter is JavaScript, which OpenCode evaluates while loading the config; permaudit cannot know the rules it produces ({})",
                        e.message
                    ),
                });
            }
        };
        let name = match data.value.as_object().and_then(|o| o.get("name")) {
            Some(n) => js_to_string(&n.value),
            None => derived.to_string(),
        };
        // OpenCode spreads the frontmatter, then sets `prompt` to the body: a frontmatter
        // `prompt` of any type (`prompt: {file: …}`) is replaced before the schema sees it.
        let mut data = data;
        if let Value::Object(o) = &mut data.value
            && let Some(p) = o.get_mut("prompt")
        {
            p.value = Value::String(markdown_body(&text).to_string());
        }
        match config::decode_agent(&data, "", entry_kind, &self.sw) {
            Ok(mut entry) => {
                let body = markdown_body(&text);
                entry.prompt = Some(body.to_string());
                let start = text.len() - body.len();
                entry.prompt_loc = Some(Loc {
                    source: id,
                    span: Span::new(start, text.len()),
                });
                record_ignored_agent_keys(&mut self.audit, &name, &data);
                if let Some(t) = data.value.as_object().and_then(|o| o.get("tools")) {
                    record_tools(&mut self.audit, Some(&name), t);
                }
                if let Some(p) = data.value.as_object().and_then(|o| o.get("permissions")) {
                    // What to write instead: the rename only where OpenCode would take it.
                    let as_permission =
                        config::decode_permission(p, "permission", Layer::MarkdownAgent).ok();
                    let as_tools = config::decode_tools(p, "tools").ok();
                    let fix = if as_permission.is_some() {
                        "write `permission:`"
                    } else if as_tools.is_some() {
                        "its values are switches (`true`/`false`), which `permission:` refuses: write them under `tools:`, or as `permission:` entries with allow, ask or deny"
                    } else if let Some(v1) = v2_translation(p) {
                        &format!(
                            "renamed to `permission:` it would be refused, since OpenCode takes `TOOL: allow|ask|deny` or `TOOL: {{PATTERN: ACTION}}` there; in that shape, the last matching rule winning: `{v1}`"
                        )
                    } else {
                        "renamed to `permission:` it would be refused, since OpenCode takes `TOOL: allow|ask|deny` or `TOOL: {PATTERN: ACTION}` there: rewrite it in that shape"
                    };
                    self.audit.ignored_blocks.push(IgnoredBlock {
                        loc: p.key.unwrap_or(p.loc),
                        agent: name.clone(),
                        meant: as_permission.or_else(|| {
                            as_tools
                                .map(|t| config::tools_to_permission(&t, Layer::AgentLegacyTools))
                        }),
                    });
                    self.warnings.push(Warning {
                        loc: p.key.unwrap_or(p.loc),
                        code: "ignored-key",
                        message: format!(
                            "{what} `{name}`: OpenCode ignores `permissions:` in frontmatter (the V2 spelling; it becomes an agent option), so none of its rules apply: {fix}"
                        ),
                        lost_protection: block_restricts(p),
                    });
                }
                Ok(Some((name, with_mode(entry, kind))))
            }
            // A mode file that fails the schema is silently skipped (spec §5.5).
            Err(e) if kind == MarkdownKind::Mode => {
                self.warnings.push(Warning {
                    loc: e.loc,
                    code: "skipped-mode",
                    message: format!(
                        "mode `{name}` fails OpenCode's agent schema at `{}` ({}); OpenCode silently skips it",
                        e.path, e.message
                    ),
                    lost_protection: false,
                });
                Ok(None)
            }
            Err(e) => Err(LoadError::Invalid(e)),
        }
    }
}

/// A foreign `permissions:` block in OpenCode's shape, as one YAML flow line
/// ([`config::v2_rules`]); `None` for a shape it cannot carry over.
fn v2_translation(p: &Node) -> Option<String> {
    let out = config::v2_rules(p)?;
    Some(format!(
        "permission: {}",
        config::v2_rules_text(&out, true)?
    ))
}

/// Record the entries of a `tools` object (nothing for a malformed one: decoding refuses it).
fn record_tools(a: &mut Audit, agent: Option<&str>, tools: &Node) {
    if let Ok(t) = config::decode_tools(tools, "") {
        a.tools.extend(t.iter().map(|(k, e)| ToolRecord {
            agent: agent.map(str::to_string),
            tool: k.to_string(),
            enabled: e.enabled,
            loc: e.loc,
        }));
    }
}

/// JavaScript `String(value)` for a property key.
fn js_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.clone(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|n| match &n.value {
                Value::Null => String::new(),
                other => js_to_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// The text after a markdown file's frontmatter (its prompt).
fn markdown_body(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---") else {
        return text;
    };
    match rest.find("\n---") {
        Some(k) => {
            let after = &rest[k + 4..];
            after.find('\n').map_or("", |n| &after[n + 1..])
        }
        None => "",
    }
}

/// An agent file OpenCode reads no frontmatter from: the whole file is its prompt (what it
/// says there still binds the agent, `Do not modify files`), and it has no settings.
fn whole_prompt(kind: MarkdownKind, text: &str, source: SourceId) -> AgentEntry {
    let entry = AgentEntry {
        prompt: Some(text.to_string()),
        prompt_loc: Some(Loc {
            source,
            span: Span::new(0, text.len()),
        }),
        ..AgentEntry::default()
    };
    with_mode(entry, kind)
}

fn with_mode(mut e: AgentEntry, kind: MarkdownKind) -> AgentEntry {
    if kind == MarkdownKind::Mode {
        e.mode = Some("primary".to_string());
    }
    e
}

#[derive(Default)]
struct Acc {
    skill_paths: Vec<String>,
    /// name → whitelisted directory (None: skipped), first position kept.
    /// Merged names under `references` and `reference` (the gate of the reference plugin).
    reference_names: [Option<Vec<String>>; 2],
    permission: Option<PermissionMap>,
    tools: Option<JsObject<ToolEntry>>,
    agent: JsObject<AgentEntry>,
    mode: JsObject<AgentEntry>,
    subagent_depth: Option<u64>,
    plugins: bool,
}

impl Acc {
    fn merge(&mut self, f: FileConfig, dir: &Path, paths: &Paths) {
        if let Some(p) = &f.skill_paths {
            self.skill_paths = p.clone();
        }
        if f.subagent_depth.is_some() {
            self.subagent_depth = f.subagent_depth;
        }
        self.plugins |= f.plugins;
        let _ = (dir, paths);
        for (slot, names) in self.reference_names.iter_mut().zip(&f.reference_names) {
            if let Some(names) = names {
                let merged = slot.get_or_insert_with(Vec::new);
                for n in names {
                    if !merged.contains(n) {
                        merged.push(n.clone());
                    }
                }
            }
        }
        if let Some(p) = f.permission {
            self.permission = Some(match &self.permission {
                Some(a) => merge_permission(a, &p),
                None => p,
            });
        }
        if let Some(t) = f.tools {
            self.tools = Some(match &self.tools {
                Some(a) => a.merged_with(&t, |_, n| n.clone()),
                None => t,
            });
        }
        self.agent = self.agent.merged_with(&f.agent, |a, b| a.merge(b));
        self.mode = self.mode.merged_with(&f.mode, |a, b| a.merge(b));
    }
}

/// `OPENCODE_PERMISSION`: `JSON.parse`d (strict JSON) and merged onto `permission` with no
/// validation, so any JSON value can become an action (spec §3.6). Invalid JSON is skipped.
/// `Ok(None)`: invalid JSON, ignored. `Err(loc)`: a `null` permission value, on which
/// OpenCode's `fromConfig` throws (`Object.entries(null)`), so it cannot start.
fn env_permission(text: &str, id: SourceId) -> Result<Option<PermissionMap>, LoadError> {
    let strict = |o: usize| o;
    let node = match jsonc::parse_as(text, id, &strict, jsonc::Dialect::StrictJson) {
        Ok(node) => node,
        Err(e) if e.limit => return Err(syntax_error(e)),
        Err(_) => return Ok(None),
    };
    let mut map = PermissionMap::new();
    let leaf = |n: &Node, loc: Loc| Leaf {
        action: Action::from_json(&to_json(&n.value)),
        loc,
        layer: Layer::EnvPermission,
    };
    let entries: Vec<(String, Node)> = match &node.value {
        Value::Object(o) => o.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        // `{...perm, ...["deny", "ask"]}`: an array spreads into index keys.
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v.clone()))
            .collect(),
        // `{...perm, ..."deny"}` spreads a string into its characters.
        Value::String(s) => s
            .chars()
            .enumerate()
            .map(|(i, c)| {
                (
                    i.to_string(),
                    Node {
                        value: Value::String(c.to_string()),
                        loc: node.loc,
                        key: None,
                    },
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    for (k, v) in entries {
        let kl = v.key.unwrap_or(v.loc);
        let entry = match &v.value {
            Value::Object(pats) => {
                let mut out = JsObject::new();
                for (p, pv) in pats.iter() {
                    out.set(p.to_string(), leaf(pv, pv.key.unwrap_or(pv.loc)));
                }
                PermEntry::Patterns(out)
            }
            Value::Array(items) => {
                let mut out = JsObject::new();
                for (i, pv) in items.iter().enumerate() {
                    out.set(i.to_string(), leaf(pv, pv.loc));
                }
                // Not a plain object: mergeDeep replaces it instead of merging into it.
                PermEntry::List(out)
            }
            // Object.entries of a number or boolean is empty: no rules.
            Value::Number(_) | Value::Bool(_) => PermEntry::List(JsObject::new()),
            // Object.entries(null) throws: OpenCode fails to start.
            Value::Null => {
                return Err(LoadError::Invalid(ConfigError {
                    loc: kl,
                    path: "OPENCODE_PERMISSION".into(),
                    message: "a permission set to null: OpenCode crashes at start-up (Object.entries(null) in Permission.fromConfig)".into(),
                    more: Vec::new(),
                }));
            }
            Value::String(_) => PermEntry::Action(leaf(&v, kl)),
        };
        map.set(k, entry);
    }
    Ok(Some(map))
}

/// A parsed value as `serde_json` holds it (numbers as written, keys in JavaScript order).
pub fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => serde_json::from_str(n).unwrap_or(serde_json::Value::Null),
        Value::String(s) => s.clone().into(),
        Value::Array(a) => a.iter().map(|n| to_json(&n.value)).collect(),
        Value::Object(o) => serde_json::Value::Object(
            o.iter()
                .map(|(k, n)| (k.to_string(), to_json(&n.value)))
                .collect(),
        ),
    }
}

/// The directory a reference whitelists, as OpenCode's `core/config-reference` plugin
/// computes it; `None` for a name or repository it skips.
fn reference_dir(name: &str, r: &Reference, dir: &Path, paths: &Paths) -> Option<String> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c == '/' || c == '`' || c == ',' || c.is_whitespace())
    {
        return None;
    }
    match r {
        Reference::Local(p) => Some(if let Some(rest) = p.strip_prefix("~/") {
            discover::normalize(&paths.home.join(rest))
                .display()
                .to_string()
        } else {
            discover::normalize(&dir.join(p)).display().to_string()
        }),
        Reference::Git { repository, branch } => {
            let repo = repository.trim_end_matches('/');
            let (host, rest) = if let Some(i) = repo.find("://") {
                let after = &repo[i + 3..];
                let after = after.rsplit_once('@').map_or(after, |(_, h)| h);
                after.split_once('/')?
            } else if let Some((user_host, path)) =
                repo.split_once(':').filter(|(h, _)| h.contains('@'))
            {
                (
                    user_host.rsplit_once('@').map_or(user_host, |(_, h)| h),
                    path,
                )
            } else {
                let (first, rest) = repo.split_once('/')?;
                if first.contains('.') {
                    (first, rest)
                } else {
                    ("github.com", repo)
                }
            };
            let rest = rest.strip_suffix(".git").unwrap_or(rest);
            let mut p = paths.data.join("repos");
            for h in host.split(':') {
                p.push(h);
            }
            for seg in rest.split('/').filter(|s| !s.is_empty()) {
                p.push(seg);
            }
            let mut s = p.display().to_string();
            if let Some(b) = branch {
                s.push('@');
                s.push_str(&encode_uri_component(b));
            }
            Some(s)
        }
    }
}

/// JavaScript `encodeURIComponent`.
fn encode_uri_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Load everything OpenCode 1.18.34 would load when started in `cwd`.
pub fn load(host: &dyn Host, cwd: &Path) -> Result<Loaded, Box<Failure>> {
    load_as(host, cwd, &Profile::default())
}

/// Load everything the release of `profile` would load when started in `cwd`.
pub fn load_as(host: &dyn Host, cwd: &Path, profile: &Profile) -> Result<Loaded, Box<Failure>> {
    let discovery = discover::discover(host, cwd);
    let mut l = Loader {
        host,
        matter: frontmatter::MatterCache::default(),
        sources: SourceMap::new(),
        warnings: Vec::new(),
        paths: discovery.paths.clone(),
        audit: Audit::default(),
        sw: profile.switches,
    };
    match run(&mut l, &discovery) {
        Ok((merged, whitelist_dirs)) => Ok(Loaded {
            sources: l.sources,
            discovery,
            merged,
            warnings: l.warnings,
            whitelist_dirs,
            audit: l.audit,
            switches: l.sw,
        }),
        Err(error) => Err(Box::new(Failure {
            sources: l.sources,
            error,
        })),
    }
}

/// The directories OpenCode's reference plugin whitelists (research note C, each rule
/// verified on 1.18.34). The merged config only gates it (`references ?? reference` must
/// have a key); the list comes from a second, document-based view of the config that:
/// - reads `CFG/opencode.json(c)` (`CFG` = `OPENCODE_CONFIG_DIR`, else the global dir), then
///   `opencode.json(c)` from the worktree root down to the start directory, then every
///   `.opencode/opencode.json(c)` root-down; never `config.json`, `OPENCODE_CONFIG`,
///   `OPENCODE_CONFIG_CONTENT`, the managed dir or an unrelated `~/.opencode`;
/// - parses the raw text with no `{env:}`/`{file:}` substitution and silently drops a file
///   that then fails the schema (e.g. an action written as `"{env:ACT}"`);
/// - takes `references ?? reference` per file; a name keeps its first position and its
///   last value;
/// - yields nothing outside a git worktree (observed; cause not found in the bundle).
fn reference_dirs(l: &Loader<'_>, gate: bool) -> Vec<String> {
    let paths = &l.paths;
    let in_git =
        l.host.is_dir(&paths.worktree.join(".git")) || l.host.is_file(&paths.worktree.join(".git"));
    if !gate || !in_git {
        return Vec::new();
    }
    let cfg_dir = l
        .host
        .var("OPENCODE_CONFIG_DIR")
        .filter(|s| !s.is_empty())
        .map(|p| discover::normalize(&paths.cwd.join(p)))
        .unwrap_or_else(|| paths.config.clone());
    let mut files: Vec<PathBuf> = ["opencode.json", "opencode.jsonc"]
        .iter()
        .map(|n| cfg_dir.join(n))
        .collect();
    if paths.cwd != cfg_dir {
        let down: Vec<PathBuf> = paths.up_to_worktree().into_iter().rev().collect();
        for d in &down {
            files.push(d.join("opencode.json"));
            files.push(d.join("opencode.jsonc"));
        }
        for d in &down {
            files.push(d.join(".opencode/opencode.json"));
            files.push(d.join(".opencode/opencode.jsonc"));
        }
    }
    let mut refs: JsObject<Option<String>> = JsObject::new();
    let mut seen = Vec::new();
    for f in files {
        if seen.contains(&f) || !l.host.is_file(&f) {
            continue;
        }
        seen.push(f.clone());
        let Ok(bytes) = l.host.read(&f) else { continue };
        let raw = decode_text(&bytes);
        let Ok(node) = jsonc::parse(&raw, SourceId(u32::MAX), &|o| o) else {
            continue;
        };
        let Ok(cfg) = config::decode_file(&node, Layer::Project, &l.sw) else {
            continue;
        };
        let dir = f.parent().unwrap_or(Path::new("/"));
        if let Some(r) = &cfg.references {
            for (name, v) in r.iter() {
                refs.set(name.to_string(), reference_dir(name, v, dir, paths));
            }
        }
    }
    refs.iter().filter_map(|(_, d)| d.clone()).collect()
}

fn run(l: &mut Loader<'_>, discovery: &Discovery) -> Result<(Merged, Vec<String>), LoadError> {
    if let Some(w) = &discovery.walk_limit {
        return Err(LoadError::WalkLimit(w.clone()));
    }
    let mut acc = Acc::default();
    for step in &discovery.steps {
        match step {
            Step::File { path, layer } => {
                let Some(id) = l.read(path)? else {
                    continue;
                };
                let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
                let node = l.parse_json(id, &dir, jsonc::Dialect::File)?;
                let cfg = l.decode_file(&node, *layer)?;
                acc.merge(cfg, &dir, &l.paths);
            }
            Step::EnvConfig { var, layer } => {
                let text = l.host.var(var).unwrap_or_default();
                let id = l
                    .sources
                    .add(SourceFile::new(Origin::EnvVar(var.clone()), text));
                let dir = l.paths.cwd.clone();
                let node = l.parse_json(id, &dir, jsonc::Dialect::EnvText)?;
                let cfg = l.decode_file(&node, *layer)?;
                acc.merge(cfg, &dir, &l.paths);
            }
            Step::Markdown { path, name, kind } => {
                if let Some((name, entry)) = l.markdown(path, name, *kind)? {
                    let mut one = JsObject::new();
                    one.set(name, entry);
                    acc.agent = acc.agent.merged_with(&one, |a, b| a.merge(b));
                }
            }
        }
    }
    // The deprecated `mode` map joins `agent` as `{...mode, mode: "primary"}`.
    let mut agent = acc.agent;
    for (name, m) in acc.mode.iter() {
        let mut m = m.clone();
        m.mode = Some("primary".to_string());
        let mut one = JsObject::new();
        one.set(name.to_string(), m);
        agent = agent.merged_with(&one, |a, b| a.merge(b));
    }
    let mut permission = acc.permission.unwrap_or_default();
    if let Some(text) = l.host.var("OPENCODE_PERMISSION") {
        let id = l.sources.add(SourceFile::new(
            Origin::EnvVar("OPENCODE_PERMISSION".into()),
            text.clone(),
        ));
        match env_permission(&text, id) {
            Err(e) => return Err(e),
            Ok(Some(p)) => permission = merge_permission(&permission, &p),
            Ok(None) if l.sw.invalid_env_permission_exits => {
                return Err(LoadError::Invalid(ConfigError {
                    loc: Loc {
                        source: id,
                        span: Span::new(0, text.len()),
                    },
                    path: "OPENCODE_PERMISSION".into(),
                    message: "not valid JSON: releases up to 1.15.4 exit with a JSON parse error (later ones skip it)".into(),
                    more: Vec::new(),
                }));
            }
            Ok(None) => l.warnings.push(Warning {
                loc: Loc {
                    source: id,
                    span: Span::new(0, text.len()),
                },
                code: "ignored-env-permission",
                message: "OPENCODE_PERMISSION is not valid JSON; OpenCode ignores it (with only a log warning)".into(),
                lost_protection: false,
            }),
        }
    }
    // Top-level `tools` is translated after all merging, its keys first, so any
    // `permission` key of the same name wins (spec §5.4).
    if let Some(tools) = &acc.tools {
        permission = merge_permission(&tools_to_permission(tools, Layer::LegacyTools), &permission);
    }
    let tools = discover::custom_tools(l.host, &discovery.config_dirs);
    l.audit.custom_tools = tools.names;
    l.audit.plugins = acc.plugins || tools.plugins;
    // The external_directory whitelist: skill directories, `skills.paths`, references.
    let mut dirs: Vec<PathBuf> = discover::skill_dirs(l.host, &l.paths, &discovery.config_dirs)
        .map_err(|e| match e {
            discover::SkillDirsError::Flag(message) => LoadError::Read {
                path: PathBuf::from("(environment)"),
                message,
            },
            discover::SkillDirsError::Walk(w) => LoadError::WalkLimit(w),
        })?;
    for p in &acc.skill_paths {
        let base = if let Some(rest) = p.strip_prefix("~/") {
            l.paths.home.join(rest)
        } else {
            discover::normalize(&l.paths.cwd.join(p))
        };
        for d in discover::dirs_with_file(l.host, &base, "SKILL.md", false)
            .map_err(LoadError::WalkLimit)?
        {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    let mut white: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let gate = match &acc.reference_names {
        [Some(names), _] => !names.is_empty(),
        [None, Some(names)] => !names.is_empty(),
        _ => false,
    };
    for d in reference_dirs(l, gate) {
        if !white.contains(&d) {
            white.push(d);
        }
    }
    let merged = Merged {
        permission,
        agent,
        subagent_depth: acc.subagent_depth,
    };
    check_rule_limits(&merged)?;
    Ok((merged, white))
}

/// [`MAX_PATTERN_CHARS`] and [`MAX_RULES`] over the merged config: the first rule past a
/// limit, in the order rules are built (top level, then each agent).
fn check_rule_limits(m: &Merged) -> Result<(), LoadError> {
    let maps = std::iter::once(&m.permission)
        .chain(m.agent.iter().filter_map(|(_, a)| a.permission.as_ref()));
    let mut count = 0usize;
    for map in maps {
        for (key, entry) in map.iter() {
            let leaves: Vec<(&str, &Leaf)> = match entry {
                PermEntry::Action(leaf) => vec![("*", leaf)],
                PermEntry::Patterns(p) | PermEntry::List(p) => p.iter().collect(),
            };
            for (pattern, leaf) in leaves {
                count += 1;
                if count > MAX_RULES {
                    return Err(LoadError::Limit {
                        loc: leaf.loc,
                        message: format!(
                            "more than {MAX_RULES} permission rules in all configs together: past permaudit's limit (OpenCode has none; see docs/limits.md)"
                        ),
                    });
                }
                for (what, text) in [("permission key", key), ("pattern", pattern)] {
                    let n = text.chars().count();
                    if n > MAX_PATTERN_CHARS {
                        return Err(LoadError::Limit {
                            loc: leaf.loc,
                            message: format!(
                                "a {what} of {n} characters: past permaudit's limit of {MAX_PATTERN_CHARS} (OpenCode has none; see docs/limits.md)"
                            ),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

/// The opening `---` of a frontmatter written after blank lines or spaces (which OpenCode
/// does not read as one): only whitespace before it, a closing `---` line after it, and
/// `key:` lines between.
/// A frontmatter written without its opening fence: the file starts with `key: value`
/// lines naming agent settings (`description`, `mode`, `permission`, `tools` …) and a lone
/// `---` closes them (blind fresh-6 B: marlenamakosza's review agent, checked on 1.18.34:
/// it loads as mode `all` with no rules). The span is the first line.
/// A file that opens with `----` (or more dashes) and then settings closed by `---`:
/// gray-matter takes a fence only where the character after `---` is not another `-`
/// (fresh-help midoumister's reviewer, whose `edit: deny` is lost; checked on 1.18.34:
/// mode `all`, no rule of its own).
fn long_fence(text: &str) -> Option<Span> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = body.lines().next()?.trim_end();
    if first.len() < 4 || !first.bytes().all(|b| b == b'-') {
        return None;
    }
    let start = text.len() - body.len();
    // Settings follow, closed by a fence: not a markdown rule line above prose.
    let rest = &body[first.len()..];
    missing_fence(rest.trim_start_matches(['\r', '\n']))
        .map(|_| Span::new(start, start + first.len()))
}

fn missing_fence(text: &str) -> Option<Span> {
    const SETTINGS: &[&str] = &[
        "description",
        "mode",
        "model",
        "permission",
        "tools",
        "temperature",
        "name",
    ];
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = body.lines().next()?;
    let mut settings = 0;
    for (n, line) in body.lines().enumerate() {
        if line.trim_end() == "---" {
            let start = text.len() - body.len();
            return (n > 0 && settings >= 2).then(|| Span::new(start, start + first.len()));
        }
        if line.trim().is_empty() && n == 0 {
            return None;
        }
        let Some((key, _)) = line.split_once(':') else {
            if line.starts_with([' ', '\t']) || line.trim().is_empty() {
                continue;
            }
            return None; // prose: no frontmatter was meant
        };
        if line.starts_with([' ', '\t']) {
            continue;
        }
        if !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return None;
        }
        if SETTINGS.contains(&key) {
            settings += 1;
        }
    }
    None
}

fn misplaced_fence(text: &str) -> Option<Span> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Whitespace, and HTML comments (`<!-- markdownlint-disable … -->`, blind fresh-11 A:
    // Cogni-AI-OU's agents, checked on 1.18.34: the `tools: {edit: false}` below it does not
    // apply, a write goes through).
    let mut rest = body.trim_start();
    while let Some(after) = rest.strip_prefix("<!--") {
        let Some(end) = after.find("-->") else { break };
        rest = after[end + 3..].trim_start();
    }
    if rest.len() == body.len() {
        return None;
    }
    let first = rest.lines().next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut keys = false;
    for line in rest.lines().skip(1) {
        if line.trim_end() == "---" {
            // From the file's start (what must go) through the fence.
            let fence = text.len() - rest.len();
            return keys.then(|| Span::new(0, fence + 3));
        }
        let key = line.split(':').next().unwrap_or("");
        if line.contains(':')
            && !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            keys = true;
        }
    }
    None
}
