//! permaudit's own settings: `.opencode/permaudit.jsonc`, next to the OpenCode config it
//! audits (or the file `check --config` names).
//!
//! JSONC, not TOML, because the file sits in `.opencode/` beside `opencode.jsonc`, is read
//! by the parser that reads OpenCode's configs (so every error has `file:line:col`), takes
//! the same `//` comments as inline ignores, and an editor completes it from the `$schema`
//! that `permaudit schema` prints. The schema is generated from [`Settings`] itself, and
//! the keys accepted here are the schema's properties: they cannot drift apart.
//!
//! Parsing is pure: text in, [`Settings`] or a located [`SettingsError`] out. [`Setup`]
//! finds and reads the file (and the baseline it names) through a [`Host`].

use crate::checks::{CHECKS, Level, did_you_mean, find_check};
use crate::discover::{Host, Paths};
use crate::source::{Loc, Origin, SourceFile, SourceId, SourceMap};
use crate::syntax::jsonc;
use crate::syntax::value::{Node, Value};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where `check` looks for the settings, in the start directory or the nearest parent up
/// to the project root.
pub const CONVENTIONAL_PATH: &str = ".opencode/permaudit.jsonc";

/// permaudit's settings. Every key is optional; a command-line flag wins over its key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[schemars(
    title = "permaudit settings",
    description = "Settings of `permaudit check` (.opencode/permaudit.jsonc). Paths are relative to this file's directory."
)]
pub struct Settings {
    /// This file's JSON Schema, for editors (`permaudit schema > permaudit.schema.json`).
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// The finding kinds to report (`permaudit rule` lists them); all kinds when absent.
    #[serde(default)]
    pub select: Option<Vec<KindId>>,
    /// Finding kinds never to report (applied after `select`).
    #[serde(default)]
    pub ignore: Vec<KindId>,
    /// A level for a finding kind, in place of its default: `{"dead-rule": "error"}`.
    #[serde(default)]
    #[schemars(schema_with = "level_map_schema")]
    pub level: BTreeMap<String, Level>,
    /// `check` exits 1 when a finding reaches this level (default `error`).
    #[serde(default)]
    pub fail_on: Option<FailOn>,
    /// The samples file (`--samples`).
    #[serde(default)]
    pub samples: Option<String>,
    /// A baseline file written by `check --write-baseline` (`--baseline`): findings in it
    /// are hidden.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Read only the project's own OpenCode config: no global or user config, no managed
    /// config, no `OPENCODE_*` variables (`--project-only`). For CI that agrees with laptops.
    #[serde(default)]
    pub project_only: Option<bool>,
    /// Finding kinds not reported in files whose path (relative to the project root)
    /// matches a pattern. Patterns use OpenCode's wildcard: `*` matches any characters,
    /// `/` included, `?` one character. `{".opencode/agent/legacy-*.md": ["legacy-tools"]}`.
    #[serde(default)]
    pub per_path_ignores: BTreeMap<String, Vec<KindId>>,
}

/// The level at which `check` fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    /// The least level that fails, `None` for `never`.
    pub fn threshold(self) -> Option<Level> {
        match self {
            FailOn::Error => Some(Level::Error),
            FailOn::Warning => Some(Level::Warning),
            FailOn::Info => Some(Level::Info),
            FailOn::Never => None,
        }
    }
}

/// A finding kind's id (`shadowed-deny`); its schema lists them all.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(transparent)]
pub struct KindId(pub String);

impl JsonSchema for KindId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "KindId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        kind_schema()
    }
}

fn kind_schema() -> schemars::Schema {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), "string".into());
    m.insert(
        "enum".into(),
        CHECKS.iter().map(|c| c.id).collect::<Vec<_>>().into(),
    );
    m.insert(
        "description".into(),
        "a finding kind (`permaudit rule`)".into(),
    );
    m.into()
}

fn level_map_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), "object".into());
    m.insert("propertyNames".into(), kind_schema().to_value());
    m.insert(
        "additionalProperties".into(),
        generator.subschema_for::<Level>().to_value(),
    );
    m.into()
}

impl Settings {
    /// Whether findings of kind `id` are reported at all.
    pub fn enabled(&self, id: &str) -> bool {
        self.select
            .as_ref()
            .is_none_or(|s| s.iter().any(|k| k.0 == id))
            && !self.ignore.iter().any(|k| k.0 == id)
    }

    /// The level of kind `id`: the setting, else `default`.
    pub fn level_of(&self, id: &str, default: Level) -> Level {
        self.level.get(id).copied().unwrap_or(default)
    }
}

/// The JSON Schema of the settings file (`permaudit schema`).
pub fn schema() -> serde_json::Value {
    schemars::schema_for!(Settings).to_value()
}

/// The keys a settings file may have: the schema's properties.
pub fn keys() -> Vec<String> {
    schema()
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Why a settings file is refused: where, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsError {
    pub loc: Loc,
    pub message: String,
}

fn err(loc: Loc, message: String) -> SettingsError {
    SettingsError { loc, message }
}

/// `no finding kind `x`` with a did-you-mean, or `None` for a known kind.
pub fn unknown_kind(id: &str) -> Option<String> {
    if find_check(id).is_some() {
        return None;
    }
    Some(match did_you_mean(id, CHECKS.iter().map(|c| c.id)) {
        Some(c) => format!("no finding kind `{id}`; did you mean `{c}`?"),
        None => format!("no finding kind `{id}` (`permaudit rule` lists them)"),
    })
}

/// Every kind id written under `key` must name a finding kind.
fn check_kinds(key: &str, v: &Node) -> Result<(), SettingsError> {
    let strings = |n: &Node| -> Vec<(String, Loc)> {
        match &n.value {
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i.value.as_str().map(|s| (s.to_string(), i.loc)))
                .collect(),
            _ => Vec::new(),
        }
    };
    let ids: Vec<(String, Loc)> = match key {
        "select" | "ignore" => strings(v),
        "level" => v
            .value
            .as_object()
            .into_iter()
            .flat_map(|o| o.iter())
            .map(|(k, n)| (k.to_string(), n.key.unwrap_or(n.loc)))
            .collect(),
        "per-path-ignores" => v
            .value
            .as_object()
            .into_iter()
            .flat_map(|o| o.iter())
            .flat_map(|(_, n)| strings(n))
            .collect(),
        _ => Vec::new(),
    };
    for (id, loc) in ids {
        if let Some(m) = unknown_kind(&id) {
            return Err(err(loc, format!("`{key}`: {m}")));
        }
    }
    Ok(())
}

/// Parse a settings file's text. Unknown keys, values of the wrong type and unknown kind
/// ids are refused with the place and, for a misspelt name, the name meant.
pub fn parse(text: &str, source: SourceId) -> Result<Settings, SettingsError> {
    let node = jsonc::parse(text, source, &|o| o)
        .map_err(|e| err(e.loc, format!("not valid JSONC: {}", e.message)))?;
    let Some(obj) = node.value.as_object() else {
        return Err(err(
            node.loc,
            format!(
                "permaudit's settings are a JSON object, not {}",
                node.value.type_name()
            ),
        ));
    };
    let keys = keys();
    for (k, v) in obj.iter() {
        let at = v.key.unwrap_or(v.loc);
        if !keys.iter().any(|known| known == k) {
            let hint = match did_you_mean(k, keys.iter().map(String::as_str)) {
                Some(c) => format!("; did you mean `{c}`?"),
                None => format!(" (keys: {})", keys.join(", ")),
            };
            return Err(err(at, format!("unknown key `{k}`{hint}")));
        }
        // Each key alone, so that a type error points at its own value (or the entry of
        // a list or map that is wrong).
        let alone = |value: serde_json::Value| {
            let mut one = serde_json::Map::new();
            one.insert(k.to_string(), value);
            serde_json::from_value::<Settings>(serde_json::Value::Object(one)).err()
        };
        if let Some(e) = alone(crate::load::to_json(&v.value)) {
            let entries: Vec<(serde_json::Value, Loc)> = match &v.value {
                Value::Array(items) => items
                    .iter()
                    .map(|i| (vec![crate::load::to_json(&i.value)].into(), i.loc))
                    .collect(),
                Value::Object(o) => o
                    .iter()
                    .map(|(ck, cv)| {
                        let mut m = serde_json::Map::new();
                        m.insert(ck.to_string(), crate::load::to_json(&cv.value));
                        (serde_json::Value::Object(m), cv.loc)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let (e, at) = entries
                .into_iter()
                .find_map(|(x, at)| alone(x).map(|e| (e, at)))
                .unwrap_or((e, v.loc));
            return Err(err(at, format!("`{k}`: {e}")));
        }
        check_kinds(k, v)?;
    }
    serde_json::from_value(crate::load::to_json(&node.value))
        .map_err(|e| err(node.loc, e.to_string()))
}

/// What `check` knows before the project loads: permaudit's settings, where they were
/// found, and the scope. Found through a [`Host`]: the CLI passes the real machine.
#[derive(Debug, Clone)]
pub struct Setup {
    pub settings: Settings,
    /// The settings file, if one was read.
    pub file: Option<PathBuf>,
    /// The project root: the worktree root, or the start directory outside git. Output
    /// names files relative to it.
    pub root: PathBuf,
    /// The start directory (`-C`): command-line paths are relative to it.
    pub cwd: PathBuf,
    /// Only the project's own OpenCode config (`--project-only` or the settings' key).
    pub project_only: bool,
    /// Files named by absolute path (`--absolute-paths`).
    pub absolute: bool,
}

/// Why `check` cannot start: a file it was told to read (or found) is unreadable or
/// refused.
#[derive(Debug)]
pub enum SetupError {
    /// `what` (`permaudit settings`, `baseline`) at `path` cannot be read.
    Unreadable {
        what: &'static str,
        path: PathBuf,
        message: String,
    },
    /// The settings file is refused: the sources hold it, the error locates the place.
    Settings {
        sources: Box<SourceMap>,
        error: crate::load::LoadError,
    },
    /// A baseline entry is refused, at `loc` in the project's sources
    /// (`suppress::read_baseline`).
    Baseline(SettingsError),
}

impl Setup {
    /// Find and read the settings: `config` (relative to `cwd`), or the conventional file
    /// nearest the start directory up to the project root.
    pub fn find(
        host: &dyn Host,
        cwd: &Path,
        config: Option<&Path>,
        project_only: bool,
        absolute: bool,
    ) -> Result<Setup, SetupError> {
        let paths = Paths::from_host(host, cwd);
        let root = paths.project_root().to_path_buf();
        let file = match config {
            Some(f) => Some(paths.cwd.join(f)),
            None => paths
                .up_to_worktree()
                .iter()
                .map(|d| d.join(CONVENTIONAL_PATH))
                .find(|f| host.is_file(f)),
        };
        let mut settings = Settings::default();
        if let Some(path) = &file {
            let text = read_text(host, "permaudit settings", path)?;
            let mut sources = SourceMap::new();
            let id = sources.add(SourceFile::new(Origin::File(path.clone()), text));
            if !absolute {
                sources.relative_to(&root);
            }
            match parse(&sources.get(id).text, id) {
                Ok(s) => settings = s,
                Err(e) => {
                    let error = crate::load::LoadError::Unauditable {
                        loc: e.loc,
                        message: format!("permaudit's settings: {}", e.message),
                    };
                    return Err(SetupError::Settings {
                        sources: Box::new(sources),
                        error,
                    });
                }
            }
        }
        Ok(Setup {
            project_only: project_only || settings.project_only == Some(true),
            settings,
            file,
            root,
            cwd: paths.cwd,
            absolute,
        })
    }

    /// A path the settings name, relative to the settings file's directory.
    pub fn setting_path(&self, p: Option<&str>) -> Option<PathBuf> {
        let dir = self.file.as_ref()?.parent()?;
        p.map(|p| crate::discover::normalize(&dir.join(p)))
    }

    /// The samples file: `given` (relative to the start directory), the settings'
    /// `samples`, or the conventional one nearest the start directory.
    pub fn samples_path(
        &self,
        host: &dyn Host,
        paths: &Paths,
        given: Option<&Path>,
    ) -> Option<PathBuf> {
        given
            .map(|f| paths.cwd.join(f))
            .or_else(|| self.setting_path(self.settings.samples.as_deref()))
            .or_else(|| {
                paths
                    .up_to_worktree()
                    .iter()
                    .map(|d| d.join(crate::checks::sample_mismatch::CONVENTIONAL_PATH))
                    .find(|f| host.is_file(f))
            })
    }

    /// The baseline file: `given` (relative to the start directory), else the settings'
    /// `baseline`.
    pub fn baseline_path(&self, given: Option<&Path>) -> Option<PathBuf> {
        given
            .map(|f| self.cwd.join(f))
            .or_else(|| self.setting_path(self.settings.baseline.as_deref()))
    }

    /// A file's path as output names it: relative to the project root unless absolute
    /// paths were asked for.
    pub fn shown(&self, f: &Path) -> String {
        if self.absolute {
            f.display().to_string()
        } else {
            f.strip_prefix(&self.root)
                .unwrap_or(f)
                .display()
                .to_string()
        }
    }
}

/// A file's text (invalid UTF-8 replaced), or why it cannot be read.
pub(crate) fn read_text(
    host: &dyn Host,
    what: &'static str,
    path: &Path,
) -> Result<String, SetupError> {
    host.read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| SetupError::Unreadable {
            what,
            path: path.to_path_buf(),
            message: e.message,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(t: &str) -> Result<Settings, String> {
        parse(t, SourceId(0))
            .map_err(|e| format!("{}..{}: {}", e.loc.span.start, e.loc.span.end, e.message))
    }

    #[test]
    fn every_key() {
        let s = parse_text(
            r#"{
              // comments are fine
              "$schema": "./permaudit.schema.json",
              "select": ["shadowed-deny", "dead-rule"],
              "ignore": ["dead-rule"],
              "level": {"shadowed-deny": "warning"},
              "fail-on": "warning",
              "samples": "samples.txt",
              "baseline": "baseline.json",
              "project-only": true,
              "per-path-ignores": {"*.md": ["legacy-tools"]},
            }"#,
        )
        .unwrap();
        assert!(s.enabled("shadowed-deny"));
        assert!(!s.enabled("dead-rule"), "ignore wins over select");
        assert!(!s.enabled("never-matches"), "not selected");
        assert_eq!(s.level_of("shadowed-deny", Level::Error), Level::Warning);
        assert_eq!(s.level_of("dead-rule", Level::Warning), Level::Warning);
        assert_eq!(s.fail_on, Some(FailOn::Warning));
        assert_eq!(s.project_only, Some(true));
        assert_eq!(s.samples.as_deref(), Some("samples.txt"));
        assert_eq!(s.baseline.as_deref(), Some("baseline.json"));
        assert_eq!(
            s.per_path_ignores["*.md"],
            vec![KindId("legacy-tools".into())]
        );
        assert_eq!(parse_text("{}").unwrap(), Settings::default());
        assert!(Settings::default().enabled("dead-rule"));
    }

    #[test]
    fn refusals_say_where_and_what() {
        let cases = [
            (
                r#"{"selct": []}"#,
                "1..8: unknown key `selct`; did you mean `select`?",
            ),
            (r#"{"zzz": 1}"#, "1..6: unknown key `zzz` (keys: "),
            (
                r#"{"ignore": ["shadowed-dney"]}"#,
                "12..27: `ignore`: no finding kind `shadowed-dney`; did you mean `shadowed-deny`?",
            ),
            (
                r#"{"level": {"dead-rule": "fatal"}}"#,
                "24..31: `level`: unknown variant `fatal`",
            ),
            (
                r#"{"level": {"dead-rul": "error"}}"#,
                "11..21: `level`: no finding kind `dead-rul`; did you mean `dead-rule`?",
            ),
            (
                r#"{"fail-on": "errors"}"#,
                "12..20: `fail-on`: unknown variant `errors`",
            ),
            (
                r#"{"project-only": "yes"}"#,
                "17..22: `project-only`: invalid type: string \"yes\", expected a boolean",
            ),
            (
                r#"{"per-path-ignores": {"x": ["nope"]}}"#,
                "28..34: `per-path-ignores`: no finding kind `nope`",
            ),
            (
                "[]",
                "0..2: permaudit's settings are a JSON object, not array",
            ),
            ("{", "not valid JSONC"),
        ];
        for (text, want) in cases {
            let got = parse_text(text).unwrap_err();
            assert!(got.starts_with(want) || got.contains(want), "{text}: {got}");
        }
    }

    #[test]
    fn the_schema_lists_every_key_and_kind() {
        let s = schema();
        let keys = keys();
        for k in [
            "select",
            "ignore",
            "level",
            "fail-on",
            "samples",
            "baseline",
            "project-only",
            "per-path-ignores",
            "$schema",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing: {keys:?}");
        }
        assert_eq!(
            s["additionalProperties"], false,
            "unknown keys refused: {s:#}"
        );
        let text = s.to_string();
        for c in CHECKS {
            assert!(text.contains(&format!("\"{}\"", c.id)), "{}", c.id);
        }
    }
}
