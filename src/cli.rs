//! The command line: the only layer that touches the machine (arguments, environment,
//! files, terminal). Everything it prints is rendered by `report`.

use crate::glob::Platform;
use crate::host::RealHost;
use crate::model::agents::evaluate;
use crate::project::Project;
use crate::report::{self, Style};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;

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
    let mut out = std::io::BufWriter::new(stdout.lock());
    let out_style = style_for(cli.color, std::io::stdout().is_terminal());
    let err_style = style_for(cli.color, std::io::stderr().is_terminal());
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
    let mut project = match Project::load(&RealHost, &cwd, platform) {
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
        Command::Rule { .. } => EXIT_OK,
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
                    let _ = writeln!(out, "{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                }
                Format::Human => {
                    let _ = write!(out, "{}", report::rules::human(&project, &agents, out_style));
                }
            }
            EXIT_OK
        }
        Command::Explain {
            permission,
            mut inputs,
            stdin,
            nul,
            agent,
            format,
        } => {
            let Some(a) = project.agent(&agent) else {
                return unknown_agent(&project, &agent);
            };
            if stdin {
                match read_stdin_inputs(nul) {
                    Ok(more) => inputs.extend(more),
                    Err(e) => {
                        eprintln!("error: reading standard input: {e}");
                        return EXIT_REFUSED;
                    }
                }
            } else if inputs.is_empty() {
                eprintln!("error: give at least one INPUT, or --stdin");
                return EXIT_REFUSED;
            }
            for input in &inputs {
                let d = evaluate(&a.rules, &permission, input, project.platform);
                let text = match format {
                    Format::Json => format!(
                        "{}\n",
                        report::explain::json(&project, a, &permission, input, &d)
                    ),
                    Format::Human => report::explain::human(&project, a, &permission, input, &d, out_style),
                };
                if out.write_all(text.as_bytes()).is_err() {
                    break; // closed pipe
                }
            }
            EXIT_OK
        }
    };
    let _ = out.flush();
    code
}

/// Inputs from standard input: one per line (a trailing `\r` kept: OpenCode would check it),
/// or NUL-separated. Invalid UTF-8 is replaced with U+FFFD, as OpenCode's own decoders do.
fn read_stdin_inputs(nul: bool) -> std::io::Result<Vec<String>> {
    let mut inputs = Vec::new();
    if nul {
        let mut buf = Vec::new();
        std::io::stdin().lock().read_to_end(&mut buf)?;
        for part in buf.split(|b| *b == 0) {
            inputs.push(String::from_utf8_lossy(part).into_owned());
        }
        if inputs.last().is_some_and(|s| s.is_empty()) {
            inputs.pop();
        }
    } else {
        for line in std::io::stdin().lock().split(b'\n') {
            inputs.push(String::from_utf8_lossy(&line?).into_owned());
        }
    }
    Ok(inputs)
}

fn rule_docs(id: Option<&str>) -> i32 {
    use crate::checks::{CHECKS, docs_text, find_check};
    match id {
        None => {
            for c in CHECKS {
                println!("{:<28} {:<8} {}", c.id, c.level.to_string(), c.summary);
            }
            EXIT_OK
        }
        Some(id) => match find_check(id) {
            Some(c) => {
                println!("{}", docs_text(c));
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
    let path = samples_file.map(|f| project.loaded.paths().cwd.join(f)).or_else(|| {
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
    findings.extend(sample_mismatch::findings(project, &samples, &outcomes));
    let s = report::check::Samples {
        samples: &samples,
        outcomes: &outcomes,
    };
    let pretty = |v: serde_json::Value| format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default());
    let text = match format {
        CheckFormat::Human => report::check::human(project, &findings, s, style),
        CheckFormat::Json => pretty(report::check::json(project, &findings, s)),
        CheckFormat::Sarif => pretty(report::check::sarif(project, &findings)),
        CheckFormat::Github => report::check::github(project, &findings),
    };
    let _ = out.write_all(text.as_bytes());
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

fn unknown_agent(p: &Project, name: &str) -> i32 {
    let names: Vec<&str> = p.agents.iter().map(|a| a.name.as_str()).collect();
    eprintln!(
        "error: no agent named `{name}` (agents: {})",
        names.join(", ")
    );
    EXIT_REFUSED
}
