//! `permaudit report`: one self-contained HTML page of what every agent may do
//! (`report::page`). The project and its findings as `check` loads and reports them
//! (settings, inline ignores, the settings' baseline), the files git lists and the
//! project's commands as `map` decides them, and with `--base`/`--base-dir` what `diff`
//! computes against that side. Writes the one file `-o` names (atomically), or standard
//! output with `-o -`.

use super::git::{self, Stderr};
use super::sides::Spec;
use super::{Context, EXIT_OK, EXIT_REFUSED};
use crate::audit::{Audit, RunError};
use crate::checks::Finding;
use crate::host::RealHost;
use crate::project::{Names, Project};
use crate::report;
use crate::settings::Setup;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Where to write the page (`-` for standard output).
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Lead with what changed since this git revision (as `permaudit diff REV`: the
    /// revision against the work tree).
    #[arg(long, value_name = "REV", conflicts_with = "base_dir")]
    pub base: Option<String>,
    /// Lead with what changed since the project in this directory (as `permaudit diff
    /// --base-dir DIR --head-dir .`).
    #[arg(long, value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Read only the project's own OpenCode config: no global, user or managed config and
    /// no OPENCODE_* variables (the same page on every machine).
    #[arg(long)]
    pub project_only: bool,
}

pub fn run(ctx: &Context, args: &ReportArgs, out: &mut dyn Write) -> Result<i32, i32> {
    let setup = Setup::find(&RealHost, &ctx.cwd, None, args.project_only, false).map_err(|e| {
        match e {
            crate::settings::SetupError::Unreadable {
                what,
                path,
                message,
            } => eprintln!("error: {what} {}: {message}", path.display()),
            crate::settings::SetupError::Settings { sources, error } => eprint!(
                "{}",
                report::error::render_error(&sources, &error, ctx.err_style)
            ),
            crate::settings::SetupError::Baseline(e) => eprintln!("error: {}", e.message),
        }
        EXIT_REFUSED
    })?;
    let host_box = ctx.host(setup.project_only);
    let names = Names {
        root: Some(setup.root.as_path()),
        tilde: true,
    };
    let loader = ctx.loader(host_box.as_ref(), names)?;
    let mut project = ctx.load(&loader, &mut |_| {})?;
    let findings = findings(&mut project, &setup)?;
    let reload = |files: &std::collections::BTreeMap<PathBuf, String>| loader.reload(files);
    let mut fixes: Vec<Option<(&'static str, String)>> = vec![None; findings.len()];
    for f in crate::fix::proven(&project, &findings, &reload, Some(&setup.root)) {
        let safety = match f.safety {
            crate::fix::Safety::Safe => "safe",
            crate::fix::Safety::Narrowing => "narrowing",
        };
        for &n in &f.repairs {
            if let Some(m) = fixes.get_mut(n) {
                *m = Some((safety, f.title.clone()));
            }
        }
    }
    let files = tracked_files(&project)?;
    let maps = files.as_ref().map(|set| {
        let agents: Vec<&crate::agents::Agent> = project.agents.iter().collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        crate::map::decide(&agents, set, project.platform, threads, &|_| {})
    });
    let commands = commands(&project);
    let (diff, diff_agents) = match (&args.base, &args.base_dir) {
        (None, None) => (None, Vec::new()),
        (base, base_dir) => diff(ctx, base.clone(), base_dir.clone(), setup.project_only)
            .map(|(d, agents)| (Some(d), agents))?,
    };
    // The project's directory name: the page does not depend on where the checkout is.
    let title = setup.root.file_name().map_or_else(
        || setup.root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let inputs = report::page::Inputs {
        project: &project,
        findings: &findings,
        fixes: &fixes,
        files: match (&files, &maps) {
            (Some(set), Some(maps)) => Some(report::page::Files { set, maps }),
            _ => None,
        },
        commands: &commands,
        diff,
        diff_agents,
        title: &title,
    };
    let page = report::page::html(&inputs);
    if args.output.as_os_str() == "-" {
        let _ = out.write_all(page.as_bytes());
        return Ok(EXIT_OK);
    }
    let path = ctx.cwd.join(&args.output);
    if let Err(e) = crate::host::write_atomically(&path, page.as_bytes()) {
        eprintln!("error: cannot write the report {}: {e}", path.display());
        return Err(EXIT_REFUSED);
    }
    eprintln!(
        "wrote {} ({} KiB)",
        args.output.display(),
        page.len().div_ceil(1024)
    );
    Ok(EXIT_OK)
}

/// The findings `check` reports (settings, inline ignores and the settings' baseline
/// applied; samples aside).
fn findings(project: &mut Project, setup: &Setup) -> Result<Vec<Finding>, i32> {
    let audit = Audit {
        setup,
        mode: crate::delegation::RunMode::Interactive,
        no_ignore: false,
        baseline: None,
    };
    audit.findings(project, &RealHost).map_err(|e| {
        match e {
            RunError::BadBaseline { at, message } => eprintln!("{at}: error: {message}"),
            _ => eprintln!(
                "error: the baseline {} cannot be read",
                setup.baseline_path(None).unwrap_or_default().display()
            ),
        }
        EXIT_REFUSED
    })
}

/// The files git tracks in the project's worktree, or `None` outside git.
fn tracked_files(project: &Project) -> Result<Option<crate::map::FileSet>, i32> {
    let wt = &project.loaded.paths().worktree;
    if !wt.join(".git").exists() {
        return Ok(None);
    }
    let tracked = git::run(
        wt,
        &["-c", "core.quotePath=false", "ls-files", "-z"],
        Stderr::Inherit,
    )
    .map_err(|e| {
        eprintln!("error: {e}");
        EXIT_REFUSED
    })?;
    Ok(Some(crate::map::FileSet::from_git(&tracked, None)))
}

/// The project's commands decided for every agent, as `map --commands` decides them.
fn commands(project: &Project) -> Vec<report::page::CommandRow> {
    let (commands, requests) = crate::shell::corpus::of_project(&RealHost, project.loaded.paths());
    let agents: Vec<&crate::agents::Agent> = project.agents.iter().collect();
    let decided = crate::explain::decide_commands(project, &agents, &requests);
    commands
        .iter()
        .zip(decided)
        .map(|(c, per_agent)| report::page::CommandRow {
            text: c.text.clone(),
            kind: c.kind.as_str(),
            name: c.name.clone(),
            path: c.path.clone(),
            line: c.line,
            decided: per_agent
                .iter()
                .map(|d| (d.effect, d.decision().and_then(|x| x.rule)))
                .collect(),
        })
        .collect()
}

/// What `diff` reports (its JSON) for the base side against this project, and per cause the
/// agents as its help line names them.
fn diff(
    ctx: &Context,
    base: Option<String>,
    base_dir: Option<PathBuf>,
    project_only: bool,
) -> Result<(serde_json::Value, Vec<String>), i32> {
    // The start directory itself (not `.`, which diff would name `DIR/.`).
    let head_dir = base_dir.as_ref().map(|_| ctx.cwd.clone());
    let spec = Spec {
        base,
        head: None,
        base_dir,
        head_dir,
        staged: false,
        project_only,
    };
    let compared = super::sides::compare(ctx, &spec)?;
    let (d, view) = (&compared.comparison.diff, compared.view());
    Ok((
        report::diff::json(d, &view),
        report::diff::agents_shown(d, &view),
    ))
}
