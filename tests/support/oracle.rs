//! The oracle: the real OpenCode 1.18.34 binary, run isolated (spec §10.0), and parsers
//! for what it prints.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::tier;

pub const VERSION: &str = "1.18.34";
/// Seconds before `timeout` kills one oracle call (a normal call takes ~3 s).
pub const TIMEOUT_SECS: u32 = 60;

pub enum Located {
    Found(PathBuf),
    /// No binary, outside CI: the caller skips its oracle comparisons (one line was printed).
    Skip,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// OPENCODE_BIN, else `<repo>/.oracle/node_modules/opencode-linux-x64/bin/opencode`.
/// A missing binary skips the oracle comparisons of this test binary (one printed line), or
/// fails the test under CI or PERMAUDIT_REQUIRE_ORACLE=1 ([`tier::required`]).
pub fn locate() -> Located {
    let (bin, origin) = match std::env::var_os("OPENCODE_BIN") {
        Some(p) => (PathBuf::from(p), "OPENCODE_BIN"),
        None => (
            repo_root().join(".oracle/node_modules/opencode-linux-x64/bin/opencode"),
            "the default location",
        ),
    };
    if bin.is_file() {
        check_version(&bin, VERSION);
        return Located::Found(bin);
    }
    tier::skip_or_fail(
        &format!("{} oracle comparisons", env!("CARGO_CRATE_NAME")),
        &format!(
            "the OpenCode {VERSION} oracle is missing ({} at {origin}); install it with \
             `bash scripts/install-oracle.sh` or point OPENCODE_BIN at an opencode {VERSION} binary",
            bin.display()
        ),
    );
    Located::Skip
}

/// The oracle of another release (a profile's representative), installed by
/// `scripts/install-oracle.sh VERSION` at `<repo>/.oracle/VERSION/`. Missing: as [`locate`].
pub fn locate_version(version: &str) -> Located {
    let bin = repo_root()
        .join(".oracle")
        .join(version)
        .join("node_modules/opencode-linux-x64/bin/opencode");
    if bin.is_file() {
        check_version(&bin, version);
        return Located::Found(bin);
    }
    tier::skip_or_fail(
        &format!("OpenCode {version} profile comparisons"),
        &format!(
            "the OpenCode {version} oracle is missing: {} does not exist; install it with \
             `bash scripts/install-oracle.sh {version}`",
            bin.display()
        ),
    );
    Located::Skip
}

/// The binary must report the release the test compares against; checked once per binary
/// and test process.
fn check_version(bin: &Path, want: &str) {
    static CHECKED: OnceLock<std::sync::Mutex<BTreeMap<PathBuf, Result<(), String>>>> =
        OnceLock::new();
    let mut done = CHECKED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let res = done.entry(bin.to_path_buf()).or_insert_with(|| {
        let scratch = tempfile::Builder::new()
            .prefix("permaudit-oracle-version-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let out = Command::new(bin)
            .arg("--version")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", scratch.path())
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .current_dir(scratch.path())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if v == want {
            Ok(())
        } else {
            Err(format!(
                "{} reports version {v:?}, the suite needs {want}; run scripts/install-oracle.sh {want}",
                bin.display()
            ))
        }
    });
    if let Err(e) = res {
        let e = e.clone();
        drop(done);
        panic!("{e}");
    }
}

#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn stderr_plain(&self) -> String {
        strip_ansi(&self.stderr)
    }
}

/// Run the oracle under `timeout`, with exactly `env` (the caller builds the isolated env).
pub fn run(bin: &Path, cwd: &Path, env: &[(String, String)], args: &[&str]) -> Run {
    run_timed(TIMEOUT_SECS, bin, cwd, env, args)
}

/// [`run`] with its own limit (`opencode run` of a model's tool calls takes longer).
pub fn run_timed(
    secs: u32,
    bin: &Path,
    cwd: &Path,
    env: &[(String, String)],
    args: &[&str],
) -> Run {
    use std::io::{Read, Seek};
    // Standard output goes to a file, not a pipe: Bun may exit before a slow reader has
    // drained a pipe, cutting a long `agent list` (60 kB and more) short.
    let mut stdout = tempfile::tempfile().expect("a temporary file for the oracle's output");
    let out = Command::new("timeout")
        .arg(secs.to_string())
        .arg(bin)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdout(stdout.try_clone().expect("the output file, twice"))
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `timeout {}`: {e}", bin.display()));
    let mut bytes = Vec::new();
    stdout.rewind().expect("rewind the oracle's output");
    stdout
        .read_to_end(&mut bytes)
        .expect("read the oracle's output");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&bytes).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One rule as printed. Fields are JSON values: OPENCODE_PERMISSION is not validated, so an
/// action can be `42`, `null` or an object (spec 3.6).
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub permission: Value,
    pub pattern: Value,
    pub action: Value,
}

impl Rule {
    pub fn from_json(v: &Value) -> Result<Rule, String> {
        let o = v
            .as_object()
            .ok_or_else(|| format!("rule is not an object: {v}"))?;
        let f = |k: &str| {
            o.get(k)
                .cloned()
                .ok_or_else(|| format!("rule lacks {k:?}: {v}"))
        };
        Ok(Rule {
            permission: f("permission")?,
            pattern: f("pattern")?,
            action: f("action")?,
        })
    }

    /// `permission | pattern | action`, strings shown as JSON strings so whitespace is visible.
    pub fn show(&self) -> String {
        format!("{} | {} | {}", self.permission, self.pattern, self.action)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    pub mode: String,
    pub rules: Vec<Rule>,
}

pub type Agents = BTreeMap<String, Agent>;

/// Parse `opencode agent list` output: for each agent a header line `name (mode)` at column 0,
/// then the JSON array of its rules, pretty-printed, whose closing `]` is at column 0. The
/// name is printed as configured, so it may begin with a space (an `agent` key `" x"` in
/// opencode.json: tests/real/d-oit__do-codeguardian has one).
pub fn parse_agent_list(stdout: &str) -> Result<Agents, String> {
    let mut agents = Agents::new();
    let mut lines = stdout.lines();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        let header = line
            .strip_suffix(')')
            .and_then(|l| l.rsplit_once(" ("))
            .filter(|_| !line.starts_with(['[', ']', '{', '}']));
        let Some((name, mode)) = header else {
            return Err(format!("unexpected line in `agent list` output: {line:?}"));
        };
        let mut json = String::new();
        for l in lines.by_ref() {
            json.push_str(l);
            json.push('\n');
            if l == "]" || (json.trim() == "[]") {
                break;
            }
        }
        let v: Value = serde_json::from_str(&json)
            .map_err(|e| format!("rules of agent {name:?} are not JSON ({e}):\n{json}"))?;
        let rules = v
            .as_array()
            .ok_or_else(|| format!("rules of agent {name:?} are not an array"))?
            .iter()
            .map(Rule::from_json)
            .collect::<Result<Vec<_>, _>>()?;
        let agent = Agent {
            mode: mode.to_string(),
            rules,
        };
        if agents.insert(name.to_string(), agent).is_some() {
            return Err(format!("agent {name:?} listed twice"));
        }
    }
    if agents.is_empty() {
        return Err("`agent list` printed no agents".into());
    }
    Ok(agents)
}

/// OpenCode refused the configuration.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The file named in the message (an absolute path, or `OPENCODE_CONFIG_CONTENT`).
    pub file: String,
    /// First `<Error> at line L, column C` of a JSONC syntax error, if any.
    pub syntax_at: Option<(u32, u32)>,
    pub message: String,
}

#[derive(Clone, Debug)]
pub enum Verdict {
    Agents(Agents),
    Refused(Refusal),
    /// Exit 1 with some other error, e.g. `Object.entries requires that input parameter not
    /// be null or undefined` for OPENCODE_PERMISSION='{"bash":null}'. OpenCode cannot start
    /// with such a setup, so permaudit must refuse it too.
    Crashed(String),
}

/// What one `agent list` run says. Err means the run itself is unusable (timeout, garbage).
pub fn verdict(run: &Run) -> Result<Verdict, String> {
    let err = run.stderr_plain();
    match run.code {
        Some(0) => parse_agent_list(&run.stdout).map(Verdict::Agents),
        Some(124) => Err(format!("oracle timed out after {TIMEOUT_SECS}s")),
        Some(1) => {
            if let Some(r) = parse_refusal(&err) {
                Ok(Verdict::Refused(r))
            } else if err.contains("Error:") {
                Ok(Verdict::Crashed(err.trim().to_string()))
            } else {
                Err(format!("oracle exited 1 without an error message:\n{err}"))
            }
        }
        other => Err(format!("oracle exited with {other:?}:\n{err}")),
    }
}

pub fn parse_refusal(err: &str) -> Option<Refusal> {
    let file = if let Some(i) = err.find("Configuration is invalid at ") {
        let rest = &err[i + "Configuration is invalid at ".len()..];
        let line = rest.lines().next().unwrap_or("");
        // `… at <file>: bad file reference: …` carries more text after the path.
        line.split(": ").next().unwrap_or(line).trim().to_string()
    } else if let Some(i) = err.find("Config file at ") {
        let rest = &err[i + "Config file at ".len()..];
        let end = rest.find(" is not valid JSON(C)")?;
        rest[..end].to_string()
    } else {
        return None;
    };
    let syntax_at = err.find("--- Errors ---").and_then(|i| {
        let l = err[i..].lines().nth(1)?;
        let (_, at) = l.split_once(" at line ")?;
        let (line, col) = at.split_once(", column ")?;
        Some((line.trim().parse().ok()?, col.trim().parse().ok()?))
    });
    Some(Refusal {
        file,
        syntax_at,
        message: err.trim().to_string(),
    })
}

/// What `debug agent --tool` prints when a rule denies the call.
pub const DENIED: &str = "prevents you from using this specific tool call";

/// What OpenCode's own tool did with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFate {
    /// "Tool X is disabled for agent A": the model is never offered it.
    Hidden,
    /// A rule denied the call ([`DENIED`]).
    Denied,
    /// Neither: every ask let it through (it ran, or failed on its own).
    NotDenied,
}

/// One call of `tool` through OpenCode's own tool as agent `build` sees it (`opencode debug
/// agent build --pure --tool TOOL --params PARAMS`) in `proj`, with exactly `env`; a run
/// that timed out under load is retried once.
pub fn debug_tool(
    bin: &Path,
    proj: &Path,
    env: &[(String, String)],
    tool: &str,
    params: &str,
) -> Run {
    let args = [
        "debug", "agent", "build", "--pure", "--tool", tool, "--params", params,
    ];
    let first = super::harness::with_slot(|| run(bin, proj, env, &args));
    if first.code != Some(124) {
        return first;
    }
    super::harness::with_slot(|| run(bin, proj, env, &args))
}

/// The fate of a [`debug_tool`] call of `tool`; `Err` when OpenCode timed out.
pub fn tool_fate(run: &Run, tool: &str) -> Result<ToolFate, String> {
    let all = strip_ansi(&format!("{}{}", run.stdout, run.stderr));
    if all.contains(&format!("Tool {tool} is disabled for agent build")) {
        Ok(ToolFate::Hidden)
    } else if all.contains(DENIED) {
        Ok(ToolFate::Denied)
    } else if run.code == Some(124) {
        Err(format!("OpenCode timed out:\n{all}"))
    } else {
        Ok(ToolFate::NotDenied)
    }
}

/// The glob-tool probe of spec §10.1: Some(true) when the call was denied (the pattern under
/// test matched), Some(false) when the tool ran, None when the output is neither.
pub fn glob_denied(run: &Run) -> Option<bool> {
    let all = format!("{}{}", run.stdout, run.stderr_plain());
    if all.contains(DENIED) {
        Some(true)
    } else if all.contains("No files found") {
        Some(false)
    } else {
        None
    }
}
