//! The command line: the only layer that touches the machine (arguments, environment,
//! files, terminal, processes). This file holds the clap definition and the dispatch; each
//! command has a file of its own that turns its arguments into a library call and a report
//! (`report` renders everything printed).

mod check;
mod context;
mod diff;
mod edits;
mod explain;
mod generate;
mod git;
mod history;
mod historydb;
mod map;
// `report` names the rendering module here (`crate::report`).
#[path = "report.rs"]
mod report_page;
mod rule;
mod rules;
mod schema;
mod server;
mod sides;
mod suggest;

pub use check::{CheckArgs, CheckFormat, CiArgs, FailOn};
use context::{Context, select_agents, unknown_agent};
pub use diff::{DiffArgs, DiffFailOn, DiffFormat};
pub use explain::ExplainArgs;
pub use history::HistoryArgs;
pub use map::MapArgs;
pub use report_page::ReportArgs;
pub use rules::RulesArgs;
pub use suggest::SuggestArgs;

use crate::discover::Host;
use crate::host::RealHost;
use crate::report::Style;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Parser)]
#[command(
    name = "permaudit",
    version,
    about = "Audit OpenCode permission configuration exactly as OpenCode 1.18.34 evaluates it",
    after_help = EXIT_HELP
)]
pub struct Cli {
    /// The directory OpenCode would start in (default: the current directory).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// When to colour output (`auto`: on a terminal, unless NO_COLOR is set or TERM=dumb).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The OpenCode build audited: Windows builds match case-insensitively.
    #[arg(long, global = true, value_enum, default_value_t = PlatformArg::Unix)]
    pub platform: PlatformArg,
    /// The OpenCode release audited (X.Y.Z, 1.14.34 or newer): its profile of config
    /// handling and built-in rules (docs/opencode.md).
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
    Check(CheckArgs),
    /// Print the JSON Schema of permaudit's settings file (`.opencode/permaudit.jsonc`).
    Schema,
    /// Show the documentation of a finding kind (or list them all).
    Rule {
        /// A finding id such as `shadowed-deny`.
        id: Option<String>,
    },
    /// Print each agent's merged ruleset with provenance.
    Rules(RulesArgs),
    /// Decide inputs as OpenCode would: the action, the deciding rule, what it overrode.
    Explain(ExplainArgs),
    /// Every tool call OpenCode recorded, how it went then and what today's config decides
    /// for it (read from a private copy of OpenCode's database).
    History(HistoryArgs),
    /// Rules that stop the asks you approved in several sessions (from the history), each
    /// proven on the config: what it allows, where it goes; `--diff`, `--write`.
    Suggest(SuggestArgs),
    /// What a config change does to every agent's decisions: BASE vs HEAD (default: the
    /// `HEAD` commit vs the work tree), each change proven with an input.
    Diff(DiffArgs),
    /// Decide read and edit of every file git tracks, for each agent: a collapsed tree,
    /// what each agent edits without asking, secret-shaped files it reads without asking.
    Map(MapArgs),
    /// One self-contained HTML page of what every agent may do: agents × permissions,
    /// files and commands, delegation graph, findings (with `--base`: what widened first).
    Report(ReportArgs),
    /// Print the completion script for a shell to standard output. Where to put it (as the
    /// README does): bash `~/.local/share/bash-completion/completions/permaudit`; zsh
    /// `~/.zfunc/_permaudit`, with `fpath=(~/.zfunc $fpath)` before `compinit` in
    /// `~/.zshrc` (`~/.zfunc` is not on `$fpath` by default); fish
    /// `~/.config/fish/completions/permaudit.fish`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to standard output (`permaudit man > permaudit.1`).
    Man,
    /// A Language Server over stdio: findings as you type, hover on rules, the proven fixes
    /// as code actions, completion in permission blocks (docs/editors.md).
    Server {
        /// Accepted and ignored: stdio is the only transport (LSP clients such as
        /// vscode-languageclient's `TransportKind.stdio` pass it).
        #[arg(long, hide = true)]
        stdio: bool,
    },
}

/// The exit codes as `--help` lists them (the man page's EXIT STATUS says the same,
/// `generate::EXIT_STATUS`).
const EXIT_HELP: &str = "Exit status:
  0  success: `check` found nothing at or above --fail-on, `diff`'s --fail-on did not fire
  1  `check` found something at or above --fail-on (default: error), or `check --diff` has
     a fix to show; `diff` found a widened decision, an added agent or an inconclusive part
     (--fail-on widened, the default; `any`: any change)
  2  a config OpenCode refuses, a usage error, or input past one of permaudit's limits";

/// Exit codes: 0 success, 1 findings (check), 2 refused config or usage error.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FINDINGS: i32 = 1;
pub const EXIT_REFUSED: i32 = 2;

fn style_for(choice: ColorChoice, tty: bool) -> Style {
    style_in(choice, tty, &|k| std::env::var_os(k))
}

/// [`style_for`] with the environment given: `auto` colours a terminal unless `NO_COLOR`
/// is set (non-empty) or `TERM` is `dumb` (a terminal that shows escape codes as text).
fn style_in(
    choice: ColorChoice,
    tty: bool,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Style {
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            tty && env("NO_COLOR").is_none_or(|v| v.is_empty())
                && env("TERM").is_none_or(|t| t != "dumb")
        }
    };
    Style { color }
}

/// Run the CLI; returns the exit code.
pub fn run(cli: Cli) -> i32 {
    // The language server writes standard output from its own thread: no lock held here.
    if matches!(cli.command, Command::Server { .. }) {
        return match Context::new(&cli).and_then(|ctx| server::run(&ctx)) {
            Ok(code) | Err(code) => code,
        };
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let code = match dispatch(cli, &mut out) {
        Ok(code) | Err(code) => code,
    };
    let _ = out.flush();
    code
}

/// The command's exit code; `Err` is an early exit (its message already printed).
fn dispatch(cli: Cli, out: &mut dyn Write) -> Result<i32, i32> {
    // Generated from the argument definitions alone: no start directory, no config.
    match cli.command {
        Command::Completions { shell } => {
            return Ok(generate::written(generate::completions(shell, out), out));
        }
        Command::Man => return Ok(generate::written(generate::man(out), out)),
        _ => {}
    }
    let ctx = Context::new(&cli)?;
    match cli.command {
        Command::Completions { .. } | Command::Man => Ok(EXIT_OK),
        Command::Rule { id } => Ok(rule::run(id.as_deref(), out)),
        Command::Schema => Ok(schema::run(out)),
        Command::Check(args) => check::run(&ctx, &args, out),
        Command::Diff(args) => {
            ctx.profile()?;
            Ok(diff::run(&ctx, &args, out))
        }
        Command::Rules(args) => rules::run(
            &ctx.project(args.format, args.project_only)?,
            &args,
            ctx.out_style,
            out,
        ),
        Command::Explain(args) => explain::run(
            &ctx.project(args.format, args.project_only)?,
            &args,
            ctx.out_style,
            out,
        ),
        Command::Map(args) => map::run(
            &ctx.project(args.format, args.project_only)?,
            &args,
            ctx.out_style,
            out,
        ),
        Command::Report(args) => report_page::run(&ctx, &args, out),
        Command::History(args) => history::run(&ctx, &args, out),
        Command::Suggest(args) => suggest::run(&ctx, &args, out),
        Command::Server { .. } => server::run(&ctx),
    }
}

/// Pretty JSON straight to the (buffered) output: the check report is serialized one
/// finding at a time, never held as one value.
fn write_pretty<T: serde::Serialize>(out: &mut dyn Write, v: &T) {
    if serde_json::to_writer_pretty(&mut *out, v).is_ok() {
        let _ = out.write_all(b"\n");
    }
}

/// The machine's answer to the shell's one question (is this path a directory?).
fn is_dir(p: &str) -> bool {
    RealHost.is_dir(Path::new(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colours_a_terminal_unless_no_color_or_a_dumb_term() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        let auto = |vars, tty| style_in(ColorChoice::Auto, tty, &env(vars)).color;
        assert!(auto(&[("TERM", "xterm-256color")], true));
        assert!(!auto(&[("TERM", "xterm-256color")], false));
        assert!(!auto(&[("TERM", "dumb")], true));
        assert!(!auto(&[("TERM", "xterm"), ("NO_COLOR", "1")], true));
        // An empty NO_COLOR is unset (no-color.org); no TERM at all is not dumb.
        assert!(auto(&[("NO_COLOR", "")], true));
        // `always` is always.
        assert!(style_in(ColorChoice::Always, false, &env(&[("TERM", "dumb")])).color);
    }
}
