//! `permaudit map`: read and edit of every file git lists (`git ls-files`, the one process
//! it runs), the project's commands (`--commands`), or who may start whom
//! (`--delegation`), for every agent. Deciding is `crate::map`'s, `crate::explain`'s and
//! `crate::delegation`'s; rendering `report`'s.

use super::git::{self, Stderr};
use super::{EXIT_OK, EXIT_REFUSED, Format, select_agents};
use crate::host::RealHost;
use crate::project::Project;
use crate::report::{self, Style};
use std::io::{IsTerminal, Write};

#[derive(Debug, Clone, clap::Args)]
pub struct MapArgs {
    /// Only this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Also untracked files that are not ignored.
    #[arg(long)]
    pub untracked: bool,
    /// Read only the project's own OpenCode config: no global, user or managed config and
    /// no OPENCODE_* variables (the same answer on every machine).
    #[arg(long)]
    pub project_only: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Expand directories that are not uniform down to this depth.
    #[arg(long, default_value_t = 3)]
    pub depth: usize,
    /// List at most this many entries in the edit and secret sections.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Instead of files: the commands the project runs (package.json scripts, Makefile
    /// and justfile recipes, workflow `run:` steps), decided as the bash tool would.
    #[arg(long, conflicts_with = "delegation")]
    pub commands: bool,
    /// Instead of files: who may start whom through the `task` tool, and what each
    /// subagent's session adds (docs/opencode.md).
    #[arg(long)]
    pub delegation: bool,
}

pub fn run(
    project: &Project,
    args: &MapArgs,
    style: Style,
    out: &mut dyn Write,
) -> Result<i32, i32> {
    if args.delegation {
        return delegation(project, args.agent.as_deref(), args.format, style, out);
    }
    let mut agents = select_agents(project, args.agent.as_deref())?;
    // The human report folds OpenCode's internal agents into one line, unless one is
    // asked for by name; the JSON records keep every agent (the contract).
    let mut folded = Vec::new();
    if args.agent.is_none() && args.format == Format::Human {
        agents.retain(|a| {
            let internal = a.is_internal();
            if internal {
                folded.push(a.name.as_str());
            }
            !internal
        });
    }
    let folded = crate::report::folded_line(&folded);
    if args.commands {
        commands(project, &agents, args.format, &folded, style, out);
        return Ok(EXIT_OK);
    }
    files(project, &agents, args, &folded, style, out)
}

/// `dir` as the header names it: relative to the current directory (`.` for itself),
/// as absolute only when it shares no ancestor with it.
fn shown(dir: &std::path::Path) -> String {
    let Ok(here) = std::env::current_dir() else {
        return dir.display().to_string();
    };
    let here = here.canonicalize().unwrap_or(here);
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (a, b): (Vec<_>, Vec<_>) = (here.components().collect(), dir.components().collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return dir.display().to_string();
    }
    let mut rel = std::path::PathBuf::new();
    for _ in common..a.len() {
        rel.push("..");
    }
    for c in &b[common..] {
        rel.push(c);
    }
    if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        rel.display().to_string()
    }
}

/// `map --delegation`: the `task` graph (only `agent` as the caller when one is named).
fn delegation(
    project: &Project,
    agent: Option<&str>,
    format: Format,
    style: Style,
    out: &mut dyn Write,
) -> Result<i32, i32> {
    if let Some(name) = agent
        && project.agent(name).is_none()
    {
        return Err(super::unknown_agent(project, name));
    }
    let edges = crate::delegation::edges(project);
    let text = match format {
        Format::Json => report::delegation::json(project, &edges, agent),
        Format::Human => report::delegation::human(project, &edges, agent, style),
    };
    let _ = out.write_all(text.as_bytes());
    Ok(EXIT_OK)
}

/// `map --commands`: read the project's command files (through the host), split and
/// decide every command for every agent, render.
fn commands(
    project: &Project,
    agents: &[&crate::agents::Agent],
    format: Format,
    folded: &str,
    style: Style,
    out: &mut dyn Write,
) {
    let root = project.loaded.paths().project_root();
    let (commands, requests) = crate::shell::corpus::of_project(&RealHost, project.loaded.paths());
    let decided = crate::explain::decide_commands(project, agents, &requests);
    let rows: Vec<report::commands::Row<'_>> = commands
        .iter()
        .zip(&requests)
        .zip(decided)
        .map(|((command, request), decided)| report::commands::Row {
            command,
            request,
            decided,
        })
        .collect();
    match format {
        Format::Json => {
            let _ = report::commands::json(out, project, agents, &rows);
        }
        Format::Human => {
            let text = report::commands::human(project, agents, &rows, &shown(root), style);
            let _ = out.write_all(text.as_bytes());
            if !folded.is_empty() {
                let _ = out.write_all(b"\n");
                let _ = out.write_all(folded.as_bytes());
            }
        }
    }
}

/// `map`: list the repository's files with git, then decide them all in the library and
/// render.
fn files(
    project: &Project,
    agents: &[&crate::agents::Agent],
    args: &MapArgs,
    folded: &str,
    style: Style,
    out: &mut dyn Write,
) -> Result<i32, i32> {
    let wt = &project.loaded.paths().worktree;
    if !wt.join(".git").exists() {
        eprintln!(
            "error: {} is not in a git repository: map lists the files git tracks",
            project.loaded.paths().cwd.display()
        );
        return Err(EXIT_REFUSED);
    }
    let ls_files = |extra: &[&str]| {
        let mut a = vec!["-c", "core.quotePath=false", "ls-files", "-z"];
        a.extend_from_slice(extra);
        git::run(wt, &a, Stderr::Inherit).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_REFUSED
        })
    };
    let tracked = ls_files(&[])?;
    let others = match args.untracked {
        true => Some(ls_files(&["--others", "--exclude-standard"])?),
        false => None,
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
    let maps = crate::map::decide(agents, &files, project.platform, threads, &progress);
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    match args.format {
        Format::Json => {
            let _ = report::map::json(out, agents, &maps, &files);
        }
        Format::Human => {
            let tree = crate::map::Tree::new(&files);
            let options = report::map::Options {
                depth: args.depth,
                limit: args.limit,
            };
            let text = report::map::human(project, agents, &maps, &files, &tree, options, style);
            let head = format!(
                "{} in {} (read and edit, as OpenCode checks them: worktree-relative paths)\n\n",
                if args.untracked {
                    format!("{} tracked and untracked files", files.len())
                } else {
                    format!("{} files tracked by git", files.len())
                },
                shown(wt)
            );
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(text.as_bytes());
            let _ = out.write_all(folded.as_bytes());
        }
    }
    Ok(EXIT_OK)
}
