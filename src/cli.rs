//! The command line: the only layer that touches the machine (arguments, environment,
//! files, terminal). Everything it prints is rendered by `report`.

use crate::glob::Platform;
use crate::glob::compiled::{CompiledRuleset, Want};
use crate::host::RealHost;
use crate::model::Effect;
use crate::model::agents::Agent;
use crate::project::Project;
use crate::report::{self, Style};
use crate::shell::Splitter;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

mod diff_cmd;
pub use diff_cmd::DiffArgs;

#[derive(Debug, Parser)]
#[command(
    name = "permaudit",
    version,
    about = "Audit OpenCode permission configuration exactly as OpenCode 1.18.34 evaluates it"
)]
pub struct Cli {
    /// The directory OpenCode would start in (default: the current directory).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// When to colour output (honours NO_COLOR).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The OpenCode build audited: Windows builds match case-insensitively.
    #[arg(long, global = true, value_enum, default_value_t = PlatformArg::Unix)]
    pub platform: PlatformArg,
    /// The OpenCode release audited (X.Y.Z, 1.14.34 or newer): its profile of config
    /// handling and built-in rules (README "OpenCode versions").
    #[arg(long, global = true, value_name = "X.Y.Z", default_value = "1.18.34")]
    pub opencode_version: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlatformArg {
    Unix,
    Windows,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Human,
    /// One line per finding: `path:line:col: level[id] message`.
    Concise,
    Json,
    Sarif,
    Github,
}

/// `check`'s flags for keeping it on in CI: settings, suppressions, scope, output forms.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CiArgs {
    /// permaudit's settings file (default: `.opencode/permaudit.jsonc` in the start
    /// directory or the nearest parent up to the project root, if any).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read only the project's own OpenCode config: no global, user or managed config and
    /// no OPENCODE_* variables (the same answer on every machine).
    #[arg(long)]
    pub project_only: bool,
    /// Show every finding: inline `permaudit-ignore` comments hide nothing.
    #[arg(long)]
    pub no_ignore: bool,
    /// Hide the findings listed in this baseline file; report its entries that match
    /// nothing (`stale-baseline`).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the findings as a baseline to FILE (atomically; the only thing permaudit ever
    /// writes) and exit 0.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Only errors and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// How many findings of each kind, instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Name files by absolute path (default: relative to the project root).
    #[arg(long)]
    pub absolute_paths: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

/// Who answers the permissions that ask (`--headless`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HeadlessArg {
    /// `opencode run`: every ask is rejected.
    Reject,
    /// `opencode run --auto` (`--yolo`, `--dangerously-skip-permissions`): every ask is
    /// approved once.
    Auto,
}

impl From<HeadlessArg> for crate::delegation::RunMode {
    fn from(h: HeadlessArg) -> Self {
        match h {
            HeadlessArg::Reject => crate::delegation::RunMode::Headless,
            HeadlessArg::Auto => crate::delegation::RunMode::Auto,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find rules that never take effect, shadowed denies and broken or suspicious entries,
    /// each proven with an example input.
    Check {
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        /// Exit 1 when a finding reaches this level [default: error, or the settings'
        /// `fail-on`].
        #[arg(long, value_enum)]
        fail_on: Option<FailOn>,
        /// Samples to decide, one `AGENT PERMISSION INPUT [=> ACTION]` a line (default:
        /// `.opencode/permaudit-samples.txt` in the start directory or a parent, if any).
        #[arg(long, value_name = "FILE")]
        samples: Option<PathBuf>,
        /// Judge the config as a non-interactive `opencode run` uses it: every ask rejected
        /// (`reject`, the default) or approved (`auto`, as `run --auto`). Adds
        /// `headless-ask`; delegation through an ask follows the same answer.
        #[arg(long, value_enum, value_name = "ANSWER", num_args = 0..=1, require_equals = true, default_missing_value = "reject")]
        headless: Option<HeadlessArg>,
        #[command(flatten)]
        ci: CiArgs,
    },
    /// Print the JSON Schema of permaudit's settings file (`.opencode/permaudit.jsonc`).
    Schema,
    /// Show the documentation of a finding kind (or list them all).
    Rule {
        /// A finding id such as `shadowed-deny`.
        id: Option<String>,
    },
    /// Print each agent's merged ruleset with provenance.
    Rules {
        /// Only this agent.
        #[arg(long)]
        agent: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Decide inputs as OpenCode would: the action, the deciding rule, what it overrode.
    Explain {
        /// The permission checked (read, edit, bash, external_directory, an MCP tool, …).
        permission: String,
        /// Inputs exactly as OpenCode checks them (a worktree-relative path, a command, …).
        inputs: Vec<String>,
        /// Read inputs from standard input, one per line.
        #[arg(long)]
        stdin: bool,
        /// With --stdin: inputs are separated by NUL bytes instead of newlines.
        #[arg(short = 'z', requires = "stdin")]
        nul: bool,
        /// The agent (default: build).
        #[arg(long, default_value = "build")]
        agent: String,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also say what a non-interactive `opencode run` makes of the decision: an ask is
        /// rejected (`reject`, the default) or approved once (`auto`, as `run --auto`).
        #[arg(long, value_enum, value_name = "ANSWER", num_args = 0..=1, require_equals = true, default_missing_value = "reject")]
        headless: Option<HeadlessArg>,
    },
    /// What a config change does to every agent's decisions: BASE vs HEAD (default: the
    /// `HEAD` commit vs the work tree), each change proven with an input.
    Diff(DiffArgs),
    /// Decide read and edit of every file git tracks, for each agent: a collapsed tree,
    /// what each agent edits without asking, secret-shaped files it reads without asking.
    Map {
        /// Only this agent.
        #[arg(long)]
        agent: Option<String>,
        /// Also untracked files that are not ignored.
        #[arg(long)]
        untracked: bool,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Expand directories that are not uniform down to this depth.
        #[arg(long, default_value_t = 3)]
        depth: usize,
        /// List at most this many entries in the edit and secret sections.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Instead of files: the commands the project runs (package.json scripts, Makefile
        /// and justfile recipes, workflow `run:` steps), decided as the bash tool would.
        #[arg(long, conflicts_with = "delegation")]
        commands: bool,
        /// Instead of files: who may start whom through the `task` tool, and what each
        /// subagent's session adds (README "Headless runs and delegation").
        #[arg(long)]
        delegation: bool,
    },
    /// Print the completion script for a shell (e.g. `permaudit completions bash >
    /// /etc/bash_completion.d/permaudit`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to standard output (`permaudit man > permaudit.1`).
    Man,
}

/// Exit codes: 0 success, 1 findings (check), 2 refused config or usage error.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FINDINGS: i32 = 1;
pub const EXIT_REFUSED: i32 = 2;

fn style_for(choice: ColorChoice, tty: bool) -> Style {
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    Style { color }
}

/// Run the CLI; returns the exit code.
pub fn run(cli: Cli) -> i32 {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let out_style = style_for(cli.color, std::io::stdout().is_terminal());
    let err_style = style_for(cli.color, std::io::stderr().is_terminal());
    // Generated from the argument definitions alone: no start directory, no config.
    match cli.command {
        Command::Completions { shell } => {
            return generated(crate::generate::completions(shell, &mut out), &mut out);
        }
        Command::Man => return generated(crate::generate::man(&mut out), &mut out),
        _ => {}
    }
    let cwd = match &cli.dir {
        Some(d) => match std::path::absolute(d) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: -C {}: {e}", d.display());
                return EXIT_REFUSED;
            }
        },
        None => match std::env::current_dir() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: cannot read the current directory: {e}");
                return EXIT_REFUSED;
            }
        },
    };
    if !cwd.is_dir() {
        eprintln!("error: -C {}: not a directory", cwd.display());
        return EXIT_REFUSED;
    }
    if let Command::Rule { id } = &cli.command {
        return rule_docs(id.as_deref());
    }
    if let Command::Schema = &cli.command {
        let text = serde_json::to_string_pretty(&crate::settings::schema()).unwrap_or_default();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
        return EXIT_OK;
    }
    let setup = match &cli.command {
        Command::Check { ci, .. } => match CheckSetup::new(ci, &cwd, err_style) {
            Ok(s) => Some(s),
            Err(code) => return code,
        },
        _ => None,
    };
    let project_only_host;
    let host: &dyn crate::discover::Host = match &setup {
        Some(s) if s.project_only => {
            project_only_host = crate::discover::ProjectOnly::new(&RealHost, &cwd);
            &project_only_host
        }
        _ => &RealHost,
    };
    let platform = match cli.platform {
        PlatformArg::Unix => Platform::Unix,
        PlatformArg::Windows => Platform::Windows,
    };
    let profile = match crate::profile::Profile::parse(&cli.opencode_version) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_REFUSED;
        }
    };
    if let Some(note) = &profile.note {
        eprintln!("note: {note}");
    }
    if let Command::Diff(args) = &cli.command {
        let code = diff_cmd::run(&cwd, platform, args, out_style, err_style, &mut out);
        let _ = out.flush();
        return code;
    }
    let mut project = match Project::load_as(host, &cwd, platform, profile) {
        Ok(mut p) => {
            if let Some(s) = setup.as_ref().filter(|s| !s.absolute) {
                p.loaded.sources.relative_to(&s.root);
            }
            p
        }
        Err(mut f) => {
            if let Some(s) = setup.as_ref().filter(|s| !s.absolute) {
                f.sources.relative_to(&s.root);
            }
            eprint!("{}", report::error::render(&f, err_style));
            return EXIT_REFUSED;
        }
    };
    for note in &project.loaded.discovery.notes {
        eprintln!("note: {note}");
    }
    for w in &project.loaded.warnings {
        let pos = project.loaded.sources.position(w.loc);
        eprintln!("{pos}: warning[{}]: {}", w.code, w.message);
    }
    let code = match cli.command {
        Command::Rule { .. }
        | Command::Diff(_)
        | Command::Completions { .. }
        | Command::Man
        | Command::Schema => EXIT_OK,
        Command::Check {
            format,
            fail_on,
            samples,
            headless,
            ci,
        } => match &setup {
            Some(setup) => check(
                &mut project,
                format,
                fail_on,
                samples,
                headless.map(Into::into).unwrap_or_default(),
                setup,
                &ci,
                out_style,
                &mut out,
            ),
            None => EXIT_OK,
        },
        Command::Rules { agent, format } => {
            let agents: Vec<_> = match &agent {
                Some(name) => match project.agent(name) {
                    Some(a) => vec![a],
                    None => return unknown_agent(&project, name),
                },
                None => project.agents.iter().collect(),
            };
            match format {
                Format::Json => {
                    let v = match agents.as_slice() {
                        [a] if agent.is_some() => report::rules::agent_json(&project, a),
                        _ => report::rules::json_all(&project),
                    };
                    let _ = writeln!(
                        out,
                        "{}",
                        serde_json::to_string_pretty(&v).unwrap_or_default()
                    );
                }
                Format::Human => {
                    let _ = write!(
                        out,
                        "{}",
                        report::rules::human(&project, &agents, out_style)
                    );
                }
            }
            EXIT_OK
        }
        Command::Explain {
            permission,
            inputs,
            stdin,
            nul,
            agent,
            format,
            headless,
        } => {
            let Some(a) = project.agent(&agent) else {
                return unknown_agent(&project, &agent);
            };
            if !stdin && inputs.is_empty() {
                eprintln!("error: give at least one INPUT, or --stdin");
                return EXIT_REFUSED;
            }
            // A permission no tool checks: decided all the same (rules may name it), with a
            // word on stderr, so the JSON on stdout stays as it is.
            if let Some(why) = crate::checks::unchecked_permission::diagnose(&permission) {
                eprintln!("note: {why}");
            }
            explain(
                &project,
                a,
                &permission,
                &inputs,
                stdin,
                nul,
                format == Format::Json,
                headless.map(Into::into),
                out_style,
                &mut out,
            )
        }
        Command::Map {
            agent,
            format,
            delegation: true,
            ..
        } => {
            if let Some(name) = &agent
                && project.agent(name).is_none()
            {
                return unknown_agent(&project, name);
            }
            let edges = crate::delegation::edges(&project);
            let text = match format {
                Format::Json => report::delegation::json(&project, &edges, agent.as_deref()),
                Format::Human => {
                    report::delegation::human(&project, &edges, agent.as_deref(), out_style)
                }
            };
            let _ = out.write_all(text.as_bytes());
            EXIT_OK
        }
        Command::Map {
            agent,
            format,
            commands: true,
            ..
        } => map_commands(&project, agent.as_deref(), format, out_style, &mut out),
        Command::Map {
            agent,
            untracked,
            format,
            depth,
            limit,
            commands: false,
            delegation: false,
        } => map(
            &project,
            agent.as_deref(),
            untracked,
            format,
            depth,
            limit,
            out_style,
            &mut out,
        ),
    };
    let _ = out.flush();
    code
}

/// The exit code of a generated document (`completions`, `man`) written to `out`; a
/// closed pipe (`permaudit man | head`) is not an error.
fn generated(written: std::io::Result<()>, out: &mut dyn Write) -> i32 {
    match written.and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            EXIT_REFUSED
        }
    }
}

/// `explain`: decide the arguments, then standard input as it streams in (one input per
/// line, a trailing `\r` kept since OpenCode would check it; or NUL-separated with `-z`),
/// with the compiled evaluator. Output is buffered and flushed whenever input would block,
/// so both bulk and interactive use work. An input that is not valid UTF-8 is reported on
/// stderr with its number and skipped; the rest is still decided, and the exit code is 2.
#[allow(clippy::too_many_arguments)]
fn explain(
    project: &Project,
    a: &Agent,
    permission: &str,
    args: &[String],
    stdin: bool,
    nul: bool,
    json: bool,
    headless: Option<crate::delegation::RunMode>,
    style: Style,
    out: &mut dyn Write,
) -> i32 {
    let compile = |permission: &str| compiled(project, a, permission);
    let mut eval = compile(permission);
    let mut render = report::explain::Renderer::new(project, a, permission, json, style);
    let mut matching = Vec::new();
    // `bash`: split each command as OpenCode does and decide every part (and the
    // `external_directory` ask its path arguments raise); `read`/`edit`: a path outside
    // the project asks `external_directory` first. A tool hidden from the agent is denied
    // whatever the input.
    let file_tool = crate::shell::file::FILE_PERMISSIONS.contains(&permission);
    let mut ext = (permission == "bash" || file_tool).then(|| compile("external_directory"));
    let mut splitter = (permission == "bash").then(Splitter::new);
    let hiding = (!crate::model::agents::NOT_TOOLS.contains(&permission))
        .then(|| crate::model::agents::hiding_rule(&a.rules, permission, project.platform))
        .flatten();
    let places = ShellPlaces::of(project);
    let env = places.env();
    let mut decide_one = |input: &str, out: &mut dyn Write| -> std::io::Result<Effect> {
        if let Some(rule) = hiding {
            let decided = crate::shell::decide::hidden(rule);
            let text = if permission == "bash" {
                let req = crate::shell::Request::default();
                if json {
                    return render
                        .write_bash(out, input, &req, &decided)
                        .map(|()| decided.effect);
                }
                report::explain::bash_human(project, a, input, &req, &decided, style)
            } else if json {
                let v = report::explain::tool_json(project, a, permission, input, None, &decided);
                format!("{}\n", serde_json::to_string(&v).unwrap_or_default())
            } else {
                report::explain::tool_human(project, a, permission, input, None, &decided, style)
            };
            return out.write_all(text.as_bytes()).map(|()| decided.effect);
        }
        let mut eval_with = |perm: &str, pattern: &str| {
            let e = match ext.as_mut() {
                Some(x) if perm == "external_directory" && permission != perm => x,
                _ => &mut eval,
            };
            e.matching(pattern, &mut matching);
            decision_of(a, &matching)
        };
        if let Some(splitter) = splitter.as_mut() {
            let req = splitter.request(input, &env);
            let decided = crate::shell::decide::decide(&req, &mut eval_with);
            if json {
                return render
                    .write_bash(out, input, &req, &decided)
                    .map(|()| decided.effect);
            }
            let text = report::explain::bash_human(project, a, input, &req, &decided, style);
            return out.write_all(text.as_bytes()).map(|()| decided.effect);
        }
        if file_tool && let Some(req) = crate::shell::file::request(permission, input, &env) {
            let decided = crate::shell::decide::decide_asks(
                req.external.as_slice(),
                permission,
                std::slice::from_ref(&req.pattern),
                &mut eval_with,
            );
            let text = if json {
                let v =
                    report::explain::tool_json(project, a, permission, input, Some(&req), &decided);
                format!("{}\n", serde_json::to_string(&v).unwrap_or_default())
            } else {
                report::explain::tool_human(
                    project,
                    a,
                    permission,
                    input,
                    Some(&req),
                    &decided,
                    style,
                )
            };
            return out.write_all(text.as_bytes()).map(|()| decided.effect);
        }
        eval.matching(input, &mut matching);
        let effect = decision_of(a, &matching).effect;
        match matching.split_last() {
            Some((&rule, earlier)) => render.write(out, input, Some(rule), earlier),
            None => render.write(out, input, None, &[]),
        }
        .map(|()| effect)
    };
    // With `--headless`, each decision is rendered into `line` and told what `opencode
    // run` makes of it (report::explain::headless).
    let mut line = Vec::new();
    let mut decide = |input: &str, out: &mut dyn Write| -> std::io::Result<()> {
        let Some(mode) = headless else {
            return decide_one(input, out).map(|_| ());
        };
        line.clear();
        let effect = decide_one(input, &mut line)?;
        report::explain::headless(&mut line, mode, effect, json, style);
        out.write_all(&line)
    };
    for input in args {
        if decide(input, out).is_err() {
            return EXIT_OK; // closed pipe
        }
    }
    if !stdin {
        return EXIT_OK;
    }
    let sep = if nul { 0u8 } else { b'\n' };
    let what = if nul { "record" } else { "line" };
    let mut reader = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut buf = Vec::new();
    let (mut n, mut bad) = (0u64, 0u64);
    loop {
        if reader.buffer().is_empty() && out.flush().is_err() {
            return EXIT_OK;
        }
        buf.clear();
        match reader.read_until(sep, &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("error: reading standard input: {e}");
                return EXIT_REFUSED;
            }
        }
        n += 1;
        if buf.last() == Some(&sep) {
            buf.pop();
        }
        match std::str::from_utf8(&buf) {
            Ok(input) => {
                if decide(input, out).is_err() {
                    return EXIT_OK;
                }
            }
            Err(e) => {
                bad += 1;
                let _ = out.flush();
                eprintln!(
                    "error: standard input {what} {n}: not valid UTF-8 (byte {}); skipped",
                    e.valid_up_to()
                );
            }
        }
    }
    if bad > 0 {
        eprintln!("error: {bad} of {n} inputs were not valid UTF-8 and were not decided");
        return EXIT_REFUSED;
    }
    EXIT_OK
}

/// The decision given every matching rule index, in order (last wins; none: ask).
fn decision_of(a: &Agent, matching: &[usize]) -> crate::model::agents::Decision {
    use crate::model::agents::Decision;
    match matching.split_last() {
        Some((&rule, earlier)) => Decision {
            rule: Some(rule),
            effect: a.rules[rule].action.effective(),
            overridden: earlier.to_vec(),
        },
        None => Decision {
            rule: None,
            effect: crate::model::Effect::Ask,
            overridden: Vec::new(),
        },
    }
}

/// The agents `--agent` names (all without it), or the exit code of an unknown name.
fn select_agents<'p>(project: &'p Project, agent: Option<&str>) -> Result<Vec<&'p Agent>, i32> {
    match agent {
        Some(name) => match project.agent(name) {
            Some(a) => Ok(vec![a]),
            None => Err(unknown_agent(project, name)),
        },
        None => Ok(project.agents.iter().collect()),
    }
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

/// The directories the bash tool resolves paths against, as strings, and the one machine
/// question it asks (is this a directory?), answered by the host.
struct ShellPlaces {
    cwd: String,
    worktree: String,
    home: String,
}

impl ShellPlaces {
    fn of(project: &Project) -> ShellPlaces {
        let paths = project.loaded.paths();
        ShellPlaces {
            cwd: paths.cwd.to_string_lossy().into_owned(),
            worktree: paths.worktree.to_string_lossy().into_owned(),
            home: paths.home.to_string_lossy().into_owned(),
        }
    }

    fn env(&self) -> crate::shell::Env<'_> {
        crate::shell::Env {
            cwd: &self.cwd,
            worktree: &self.worktree,
            home: &self.home,
            is_dir: &|p: &str| crate::discover::Host::is_dir(&RealHost, std::path::Path::new(p)),
        }
    }
}

/// `map --commands`: read the project's command files (through the host), split and
/// decide every command for every agent, render.
fn map_commands(
    project: &Project,
    agent: Option<&str>,
    format: Format,
    style: Style,
    out: &mut dyn Write,
) -> i32 {
    use crate::shell::decide::decide;
    let agents = match select_agents(project, agent) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let paths = project.loaded.paths();
    let root = if paths.worktree == std::path::Path::new("/") {
        &paths.cwd
    } else {
        &paths.worktree
    };
    let commands = crate::shell::corpus::read(&RealHost, root);
    let places = ShellPlaces::of(project);
    let env = places.env();
    let mut splitter = Splitter::new();
    let requests: Vec<crate::shell::Request> = commands
        .iter()
        .map(|c| splitter.request(&c.text, &env))
        .collect();
    let mut rows: Vec<report::commands::Row<'_>> = commands
        .iter()
        .zip(&requests)
        .map(|(command, request)| report::commands::Row {
            command,
            request,
            decided: Vec::with_capacity(agents.len()),
        })
        .collect();
    let mut matching = Vec::new();
    for a in &agents {
        let (mut bash, mut ext) = (
            compiled(project, a, "bash"),
            compiled(project, a, "external_directory"),
        );
        let hiding = crate::model::agents::hiding_rule(&a.rules, "bash", project.platform);
        for row in &mut rows {
            if let Some(rule) = hiding {
                row.decided.push(crate::shell::decide::hidden(rule));
                continue;
            }
            let d = decide(row.request, |perm, pattern| {
                let e = if perm == "bash" { &mut bash } else { &mut ext };
                e.matching(pattern, &mut matching);
                decision_of(a, &matching)
            });
            row.decided.push(d);
        }
    }
    match format {
        Format::Json => {
            let _ = report::commands::json(out, project, &agents, &rows);
        }
        Format::Human => {
            let text =
                report::commands::human(project, &agents, &rows, &root.to_string_lossy(), style);
            let _ = out.write_all(text.as_bytes());
        }
    }
    EXIT_OK
}

/// `map`: list the repository's files with git (the one process permaudit runs), then
/// decide them all in the library and render.
#[allow(clippy::too_many_arguments)]
fn map(
    project: &Project,
    agent: Option<&str>,
    untracked: bool,
    format: Format,
    depth: usize,
    limit: usize,
    style: Style,
    out: &mut dyn Write,
) -> i32 {
    let agents = match select_agents(project, agent) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let wt = &project.loaded.paths().worktree;
    if !wt.join(".git").exists() {
        eprintln!(
            "error: {} is not in a git repository: map lists the files git tracks",
            project.loaded.paths().cwd.display()
        );
        return EXIT_REFUSED;
    }
    let git = |extra: &[&str]| -> Result<Vec<u8>, String> {
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(wt)
            .args(["-c", "core.quotePath=false", "ls-files", "-z"])
            .args(extra)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if !o.status.success() {
            return Err(format!("git ls-files failed ({})", o.status));
        }
        Ok(o.stdout)
    };
    let tracked = match git(&[]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_REFUSED;
        }
    };
    let others = if untracked {
        match git(&["--others", "--exclude-standard"]) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_REFUSED;
            }
        }
    } else {
        None
    };
    let files = crate::map::FileSet::from_git(&tracked, others.as_deref());
    drop((tracked, others));
    if files.lossy > 0 {
        eprintln!(
            "note: {} paths are not valid UTF-8; they are decided with U+FFFD in place of the bad bytes",
            files.lossy
        );
    }
    let total = crate::map::work(agents.len(), files.len());
    let bar = if std::io::stderr().is_terminal() && total >= 2_000_000 {
        let pb = indicatif::ProgressBar::new(total);
        if let Ok(st) = indicatif::ProgressStyle::with_template(
            "{spinner} deciding {human_pos}/{human_len} [{bar:30}] {percent}% {eta}",
        ) {
            pb.set_style(st.progress_chars("=> "));
        }
        Some(pb)
    } else {
        None
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let progress = |n: u64| {
        if let Some(pb) = &bar {
            pb.inc(n);
        }
    };
    let maps = crate::map::decide(&agents, &files, project.platform, threads, &progress);
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    match format {
        Format::Json => {
            let _ = report::map::json(out, &agents, &maps, &files);
        }
        Format::Human => {
            let tree = crate::map::Tree::new(&files);
            let text = report::map::human(
                project,
                &agents,
                &maps,
                &files,
                &tree,
                report::map::Options { depth, limit },
                style,
            );
            let head = format!(
                "{} in {} (read and edit, as OpenCode checks them: worktree-relative paths)\n\n",
                if untracked {
                    format!("{} tracked and untracked files", files.len())
                } else {
                    format!("{} files tracked by git", files.len())
                },
                wt.display()
            );
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(text.as_bytes());
        }
    }
    EXIT_OK
}

fn rule_docs(id: Option<&str>) -> i32 {
    use crate::checks::{CHECKS, docs_text, find_check};
    // Written, not printed: `println!` panics when the reader has gone (`rule | head`).
    let mut out = std::io::stdout().lock();
    match id {
        None => {
            for c in CHECKS {
                let line = format!("{:<28} {:<8} {}\n", c.id, c.level.to_string(), c.summary);
                if out.write_all(line.as_bytes()).is_err() {
                    break;
                }
            }
            EXIT_OK
        }
        Some(id) => match find_check(id) {
            Some(c) => {
                let _ = writeln!(out, "{}", docs_text(c));
                EXIT_OK
            }
            None => {
                eprintln!("error: no finding kind `{id}` (see `permaudit rule`)");
                EXIT_REFUSED
            }
        },
    }
}

/// `permaudit check`: findings, samples, suppressions, exit code.
#[allow(clippy::too_many_arguments)]
fn check(
    project: &mut Project,
    format: CheckFormat,
    fail_on: Option<FailOn>,
    samples_file: Option<PathBuf>,
    mode: crate::delegation::RunMode,
    setup: &CheckSetup,
    ci: &CiArgs,
    style: Style,
    out: &mut dyn Write,
) -> i32 {
    use crate::checks::sample_mismatch;
    use crate::source::{Origin, SourceFile};
    // The OpenCode config read: every source so far.
    let config_sources: Vec<crate::source::SourceId> =
        project.loaded.sources.iter().map(|(id, _)| id).collect();
    // The samples file: given, set, or the conventional one nearest the start directory.
    let path = samples_file
        .map(|f| project.loaded.paths().cwd.join(f))
        .or_else(|| setup.setting_path(setup.settings.samples.as_deref()))
        .or_else(|| {
            project
                .loaded
                .paths()
                .up_to_worktree()
                .iter()
                .map(|d| d.join(sample_mismatch::CONVENTIONAL_PATH))
                .find(|f| f.is_file())
        });
    let mut samples = Vec::new();
    let mut outcomes = Vec::new();
    if let Some(path) = path {
        let text = match std::fs::read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                eprintln!("error: samples file {}: {e}", path.display());
                return EXIT_REFUSED;
            }
        };
        let id = project
            .loaded
            .sources
            .add(SourceFile::new(Origin::File(path), text.clone()));
        let parsed = sample_mismatch::parse(&text, id)
            .and_then(|s| sample_mismatch::decide(project, &s).map(|o| (s, o)));
        match parsed {
            Ok((s, o)) => (samples, outcomes) = (s, o),
            Err(e) => {
                let pos = project.loaded.sources.position(e.loc);
                eprintln!("{pos}: error: bad sample: {}", e.message);
                return EXIT_REFUSED;
            }
        }
    }
    let baseline = match setup.read_baseline(project, ci) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let project = &*project;
    let mut findings = crate::checks::run_as(project, mode);
    findings.extend(crate::checks::consolidate(
        project,
        sample_mismatch::findings(project, &samples, &outcomes),
    ));
    let inputs = crate::suppress::Inputs {
        settings: &setup.settings,
        inline: if ci.no_ignore { &[] } else { &config_sources },
        baseline: baseline.as_deref(),
        root: &setup.root,
    };
    if let Some(file) = &ci.write_baseline {
        let inputs = crate::suppress::Inputs {
            baseline: None,
            ..inputs
        };
        let kept = crate::suppress::apply(project, findings, &inputs).findings;
        return write_baseline(project, &kept, &setup.root, file);
    }
    let mut outcome = crate::suppress::apply(project, findings, &inputs);
    let findings = std::mem::take(&mut outcome.findings);
    let s = report::check::Samples {
        samples: &samples,
        outcomes: &outcomes,
    };
    if format == CheckFormat::Human || format == CheckFormat::Concise {
        let text = check_text(
            project,
            &findings,
            s,
            setup,
            ci,
            &config_sources,
            format,
            &outcome,
            style,
        );
        let _ = out.write_all(text.as_bytes());
        return exit_for(
            &findings,
            fail_on.or(setup.settings.fail_on.map(FailOn::from)),
        );
    }
    match format {
        CheckFormat::Human | CheckFormat::Concise => {}
        CheckFormat::Json => write_pretty(out, &report::check::json(project, &findings, s)),
        CheckFormat::Sarif => write_pretty(out, &report::check::sarif(project, &findings)),
        CheckFormat::Github => {
            let _ = out.write_all(report::check::github(project, &findings).as_bytes());
        }
    }
    exit_for(
        &findings,
        fail_on.or(setup.settings.fail_on.map(FailOn::from)),
    )
}

/// Pretty JSON straight to the (buffered) output: the check report is serialized one
/// finding at a time, never held as one value.
fn write_pretty<T: serde::Serialize>(out: &mut dyn Write, v: &T) {
    if serde_json::to_writer_pretty(&mut *out, v).is_ok() {
        let _ = out.write_all(b"\n");
    }
}

fn unknown_agent(p: &Project, name: &str) -> i32 {
    let names: Vec<&str> = p.agents.iter().map(|a| a.name.as_str()).collect();
    eprintln!(
        "error: no agent named `{name}` (agents: {})",
        names.join(", ")
    );
    EXIT_REFUSED
}

impl From<crate::settings::FailOn> for FailOn {
    fn from(f: crate::settings::FailOn) -> FailOn {
        match f {
            crate::settings::FailOn::Error => FailOn::Error,
            crate::settings::FailOn::Warning => FailOn::Warning,
            crate::settings::FailOn::Info => FailOn::Info,
            crate::settings::FailOn::Never => FailOn::Never,
        }
    }
}

/// `check`'s exit code: 1 when a finding reaches the `--fail-on` level (default error).
fn exit_for(findings: &[crate::checks::Finding], fail_on: Option<FailOn>) -> i32 {
    use crate::settings::FailOn as F;
    let threshold = match fail_on.unwrap_or(FailOn::Error) {
        FailOn::Error => F::Error,
        FailOn::Warning => F::Warning,
        FailOn::Info => F::Info,
        FailOn::Never => F::Never,
    }
    .threshold();
    if threshold.is_some_and(|t| findings.iter().any(|f| f.level >= t)) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// What `check` knows before the project loads: permaudit's settings and the scope.
struct CheckSetup {
    settings: crate::settings::Settings,
    /// The settings file, if one was read.
    file: Option<PathBuf>,
    /// The project root: the worktree root, or the start directory outside git. Output
    /// names files relative to it.
    root: PathBuf,
    /// The start directory (`-C`): command-line paths are relative to it.
    cwd: PathBuf,
    project_only: bool,
    absolute: bool,
}

impl CheckSetup {
    /// Find and read the settings (`--config`, or the conventional file nearest the start
    /// directory). A refused file is reported here, with its place: `Err` is the exit code.
    fn new(ci: &CiArgs, cwd: &std::path::Path, style: Style) -> Result<CheckSetup, i32> {
        use crate::discover::Host;
        use crate::settings::{CONVENTIONAL_PATH, parse};
        use crate::source::{Origin, SourceFile, SourceMap};
        let paths = crate::discover::Paths::from_host(&RealHost, cwd);
        let root = if paths.worktree == std::path::Path::new("/") {
            paths.cwd.clone()
        } else {
            paths.worktree.clone()
        };
        let file = match &ci.config {
            Some(f) => Some(paths.cwd.join(f)),
            None => paths
                .up_to_worktree()
                .iter()
                .map(|d| d.join(CONVENTIONAL_PATH))
                .find(|f| f.is_file()),
        };
        let mut settings = crate::settings::Settings::default();
        if let Some(path) = &file {
            let text = match RealHost.read(path) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    eprintln!(
                        "error: permaudit settings {}: {}",
                        path.display(),
                        e.message
                    );
                    return Err(EXIT_REFUSED);
                }
            };
            let mut sources = SourceMap::new();
            let id = sources.add(SourceFile::new(Origin::File(path.clone()), text));
            if !ci.absolute_paths {
                sources.relative_to(&root);
            }
            match parse(&sources.get(id).text, id) {
                Ok(s) => settings = s,
                Err(e) => {
                    let refused = crate::load::LoadError::Unauditable {
                        loc: e.loc,
                        message: format!("permaudit's settings: {}", e.message),
                    };
                    eprint!("{}", report::error::render_error(&sources, &refused, style));
                    return Err(EXIT_REFUSED);
                }
            }
        }
        Ok(CheckSetup {
            project_only: ci.project_only || settings.project_only == Some(true),
            settings,
            file,
            root,
            cwd: paths.cwd,
            absolute: ci.absolute_paths,
        })
    }

    /// A path the settings name, relative to the settings file's directory.
    fn setting_path(&self, p: Option<&str>) -> Option<PathBuf> {
        let dir = self.file.as_ref()?.parent()?;
        p.map(|p| crate::discover::normalize(&dir.join(p)))
    }

    /// The baseline (`--baseline`, else the settings' `baseline`), added to the project's
    /// sources so that stale entries point into it; `Err` is the exit code.
    #[allow(clippy::type_complexity)]
    fn read_baseline(
        &self,
        project: &mut Project,
        ci: &CiArgs,
    ) -> Result<Option<Vec<(crate::suppress::Entry, crate::source::Loc)>>, i32> {
        use crate::discover::Host;
        use crate::source::{Origin, SourceFile};
        let Some(path) = ci
            .baseline
            .as_ref()
            .map(|f| self.cwd.join(f))
            .or_else(|| self.setting_path(self.settings.baseline.as_deref()))
        else {
            return Ok(None);
        };
        let text = match RealHost.read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                eprintln!("error: baseline {}: {}", path.display(), e.message);
                return Err(EXIT_REFUSED);
            }
        };
        let sources = &mut project.loaded.sources;
        let id = sources.add(SourceFile::new(Origin::File(path), text));
        crate::suppress::parse_baseline(&sources.get(id).text, id)
            .map(Some)
            .map_err(|e| {
                eprintln!(
                    "{}: error: {}",
                    project.loaded.sources.position(e.loc),
                    e.message
                );
                EXIT_REFUSED
            })
    }
}

/// The human and concise reports: header (human), findings (only errors with `-q`) or
/// counts per kind (`--statistics`), samples (human), summary.
#[allow(clippy::too_many_arguments)]
fn check_text(
    project: &Project,
    findings: &[crate::checks::Finding],
    samples: report::check::Samples<'_>,
    setup: &CheckSetup,
    ci: &CiArgs,
    config: &[crate::source::SourceId],
    format: CheckFormat,
    outcome: &crate::suppress::Outcome,
    style: Style,
) -> String {
    use crate::checks::Level;
    let sources = &project.loaded.sources;
    let mut out = String::new();
    let human = format == CheckFormat::Human;
    if human && !ci.quiet {
        let names: Vec<String> = config.iter().map(|&id| sources.get(id).name()).collect();
        let settings = setup.file.as_ref().map(|f| {
            if setup.absolute {
                f.display().to_string()
            } else {
                f.strip_prefix(&setup.root)
                    .unwrap_or(f)
                    .display()
                    .to_string()
            }
        });
        out.push_str(&report::check::header(
            &names,
            settings.as_deref(),
            setup.project_only,
        ));
    }
    let shown: Vec<crate::checks::Finding> = findings
        .iter()
        .filter(|f| !ci.quiet || f.level == Level::Error)
        .cloned()
        .collect();
    if ci.statistics {
        out.push_str(&report::check::statistics(&shown));
    } else if human {
        out.push_str(&report::check::findings_human(project, &shown, style));
        if !ci.quiet {
            out.push_str(&report::check::samples_table(project, samples, style));
        }
    } else {
        out.push_str(&report::check::concise(project, &shown));
    }
    let (e, w, i) = report::check::summary(findings);
    out.push_str(&report::check::summary_line(e, w, i));
    let hidden: Vec<String> = [
        (outcome.hidden_by_comments, "by permaudit-ignore comments"),
        (outcome.hidden_by_baseline, "by the baseline"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} hidden {why}"))
    .collect();
    if !hidden.is_empty() {
        out.push_str(&format!(" ({})", hidden.join(", ")));
    }
    out.push('\n');
    out
}

/// `--write-baseline FILE`: the findings as baseline entries, written atomically (a
/// temporary file in the same directory, renamed over FILE: never half a file).
fn write_baseline(
    project: &Project,
    findings: &[crate::checks::Finding],
    root: &std::path::Path,
    file: &std::path::Path,
) -> i32 {
    let entries = crate::suppress::entries(project, findings, root);
    let text = crate::suppress::baseline_text(&entries);
    let path = project.loaded.paths().cwd.join(file);
    match write_atomically(&path, text.as_bytes()) {
        Ok(()) => {
            let n = text.matches("\"id\":").count();
            eprintln!(
                "wrote {n} baseline {} to {}",
                if n == 1 { "entry" } else { "entries" },
                path.display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: cannot write the baseline {}: {e}", path.display());
            EXIT_REFUSED
        }
    }
}

/// Write `bytes` to `path` through a new temporary file in the same directory, renamed
/// over `path` once complete; on any error the temporary file is removed and `path` is
/// untouched.
fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let tmp = dir.join(format!(
        ".{}.permaudit-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
