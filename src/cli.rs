//! The command line: the only layer that touches the machine (arguments, environment,
//! files, terminal). Everything it prints is rendered by `report`.

use crate::glob::Platform;
use crate::glob::compiled::{CompiledRuleset, Want};
use crate::host::RealHost;
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
    Json,
    Sarif,
    Github,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find rules that never take effect, shadowed denies and broken or suspicious entries,
    /// each proven with an example input.
    Check {
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        /// Exit 1 when a finding reaches this level.
        #[arg(long, value_enum, default_value_t = FailOn::Error)]
        fail_on: FailOn,
        /// Samples to decide, one `AGENT PERMISSION INPUT [=> ACTION]` a line (default:
        /// `.opencode/permaudit-samples.txt` in the start directory or a parent, if any).
        #[arg(long, value_name = "FILE")]
        samples: Option<PathBuf>,
    },
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
        #[arg(long)]
        commands: bool,
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
    let mut project = match Project::load_as(&RealHost, &cwd, platform, profile) {
        Ok(p) => p,
        Err(f) => {
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
        Command::Rule { .. } | Command::Diff(_) | Command::Completions { .. } | Command::Man => {
            EXIT_OK
        }
        Command::Check {
            format,
            fail_on,
            samples,
        } => check(&mut project, format, fail_on, samples, out_style, &mut out),
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
                out_style,
                &mut out,
            )
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
    let mut decide = |input: &str, out: &mut dyn Write| -> std::io::Result<()> {
        if let Some(rule) = hiding {
            let decided = crate::shell::decide::hidden(rule);
            let text = if permission == "bash" {
                let req = crate::shell::Request::default();
                if json {
                    return render.write_bash(out, input, &req, &decided);
                }
                report::explain::bash_human(project, a, input, &req, &decided, style)
            } else if json {
                let v = report::explain::tool_json(project, a, permission, input, None, &decided);
                format!("{}\n", serde_json::to_string(&v).unwrap_or_default())
            } else {
                report::explain::tool_human(project, a, permission, input, None, &decided, style)
            };
            return out.write_all(text.as_bytes());
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
                return render.write_bash(out, input, &req, &decided);
            }
            let text = report::explain::bash_human(project, a, input, &req, &decided, style);
            return out.write_all(text.as_bytes());
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
            return out.write_all(text.as_bytes());
        }
        eval.matching(input, &mut matching);
        match matching.split_last() {
            Some((&rule, earlier)) => render.write(out, input, Some(rule), earlier),
            None => render.write(out, input, None, &[]),
        }
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

/// `permaudit check`: findings, samples, exit code.
fn check(
    project: &mut Project,
    format: CheckFormat,
    fail_on: FailOn,
    samples_file: Option<PathBuf>,
    style: Style,
    out: &mut dyn Write,
) -> i32 {
    use crate::checks::sample_mismatch;
    use crate::source::{Origin, SourceFile};
    // The samples file: given, or the conventional one nearest the start directory.
    let path = samples_file
        .map(|f| project.loaded.paths().cwd.join(f))
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
    let project = &*project;
    let mut findings = crate::checks::run(project);
    findings.extend(crate::checks::consolidate(
        project,
        sample_mismatch::findings(project, &samples, &outcomes),
    ));
    let s = report::check::Samples {
        samples: &samples,
        outcomes: &outcomes,
    };
    match format {
        CheckFormat::Human => {
            let _ = out.write_all(report::check::human(project, &findings, s, style).as_bytes());
        }
        CheckFormat::Json => write_pretty(out, &report::check::json(project, &findings, s)),
        CheckFormat::Sarif => write_pretty(out, &report::check::sarif(project, &findings)),
        CheckFormat::Github => {
            let _ = out.write_all(report::check::github(project, &findings).as_bytes());
        }
    }
    let threshold = match fail_on {
        FailOn::Error => Some(crate::checks::Level::Error),
        FailOn::Warning => Some(crate::checks::Level::Warning),
        FailOn::Info => Some(crate::checks::Level::Info),
        FailOn::Never => None,
    };
    if threshold.is_some_and(|t| findings.iter().any(|f| f.level >= t)) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
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
