//! `permaudit diff`: its arguments, the two sides read (`cli/sides.rs`: a git revision
//! through `git ls-tree` and `git cat-file`, into memory; or a directory) and compared by
//! the library ([`crate::compare`]), one of the reports, the exit code. Never writes a
//! checkout.

use super::sides::Spec;
use super::{Context, EXIT_FINDINGS, EXIT_OK};
use crate::history;
use crate::report;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DiffFormat {
    Human,
    Json,
    /// Markdown for a pull-request comment.
    Markdown,
    Sarif,
    Github,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DiffFailOn {
    /// A decision widened (deny→ask, deny→allow, ask→allow), an agent added, or a part
    /// of the comparison inconclusive.
    Widened,
    /// Any change at all (or an inconclusive part).
    Any,
    Never,
}

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The base git revision (default: HEAD).
    #[arg(value_name = "BASE")]
    pub base: Option<String>,
    /// The head git revision (default: the work tree).
    #[arg(value_name = "HEAD")]
    pub head: Option<String>,
    /// A directory holding the base side's project files (instead of a revision).
    #[arg(long, value_name = "DIR", conflicts_with = "base")]
    pub base_dir: Option<PathBuf>,
    /// A directory holding the head side's project files (instead of the work tree).
    #[arg(long, value_name = "DIR", conflicts_with = "head")]
    pub head_dir: Option<PathBuf>,
    /// The head side is the index (what `git commit` would commit, as a pre-commit hook
    /// sees it) instead of the work tree.
    #[arg(long, conflicts_with_all = ["head", "head_dir"])]
    pub staged: bool,
    /// Leave out everything outside the project (global and user config, `OPENCODE_*`
    /// variables): the same answer on every machine, for CI.
    #[arg(long)]
    pub project_only: bool,
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    /// Exit 1 when this kind of change is found.
    #[arg(long, value_enum, default_value_t = DiffFailOn::Widened)]
    pub fail_on: DiffFailOn,
    #[command(flatten)]
    pub history: HistoryArgs,
}

/// `--history`: the change judged by the tool calls OpenCode recorded (`permaudit
/// history`'s database, read from a private copy).
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Also replay the tool calls OpenCode recorded in sessions started in this directory
    /// under both sides: the calls the change would now deny, ask for or let run unasked
    /// (human and JSON output)
    #[arg(long)]
    pub history: bool,
    /// With --history: only calls made at or after this time: YYYY-MM-DD, or
    /// YYYY-MM-DDTHH:MM[:SS] (UTC).
    #[arg(long, value_name = "DATE", requires = "history")]
    pub since: Option<String>,
    /// With --history: only this session and the subagent sessions it started.
    #[arg(long, value_name = "ID", requires = "history")]
    pub session: Option<String>,
    /// With --history: the database (default: $OPENCODE_DB, else OpenCode's data
    /// directory's `opencode.db`).
    #[arg(long, value_name = "FILE", requires = "history")]
    pub db: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &DiffArgs, out: &mut dyn Write) -> i32 {
    let spec = Spec {
        base: args.base.clone(),
        head: args.head.clone(),
        base_dir: args.base_dir.clone(),
        head_dir: args.head_dir.clone(),
        staged: args.staged,
        project_only: args.project_only,
    };
    if args.history.history && !matches!(args.format, DiffFormat::Human | DiffFormat::Json) {
        eprintln!("error: --history is shown with --format human or json");
        return super::EXIT_REFUSED;
    }
    let compared = match super::sides::compare(ctx, &spec) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let replayed = if args.history.history {
        match replay(ctx, &args.history, &compared) {
            Ok(r) => Some(r),
            Err(code) => return code,
        }
    } else {
        None
    };
    let (d, view) = (&compared.comparison.diff, compared.view());
    let out_style = ctx.out_style;
    match args.format {
        DiffFormat::Human => {
            let _ = out.write_all(report::diff::human(d, &view, out_style).as_bytes());
            if let Some(r) = &replayed {
                let text = report::history::replay_human(&r.view(&view), out_style);
                let _ = out.write_all(text.as_bytes());
            }
        }
        DiffFormat::Json => {
            let mut v = report::diff::json(d, &view);
            if let (Some(r), Some(o)) = (&replayed, v.as_object_mut()) {
                o.insert(
                    "history".into(),
                    report::history::replay_json(&r.view(&view)),
                );
            }
            super::write_pretty(out, &v)
        }
        DiffFormat::Markdown => {
            let _ = out.write_all(report::diff::markdown(d, &view).as_bytes());
        }
        DiffFormat::Sarif => super::write_pretty(out, &report::diff::sarif(d, &view)),
        DiffFormat::Github => {
            let _ = out.write_all(report::diff::github(d, &view).as_bytes());
        }
    }
    let fires = match args.fail_on {
        DiffFailOn::Widened => d.widens() || !d.inconclusive.is_empty(),
        DiffFailOn::Any => !d.is_empty(),
        DiffFailOn::Never => false,
    };
    if fires { EXIT_FINDINGS } else { EXIT_OK }
}

/// The recorded calls replayed under both sides.
struct Replay {
    db: String,
    /// Calls of sessions started in this directory, decided on both sides.
    decided: usize,
    /// Calls of the project's sessions started elsewhere (another directory loads other
    /// config): left out.
    elsewhere: usize,
    changed: Vec<history::Replayed>,
}

impl Replay {
    fn view<'a>(&'a self, sides: &'a report::diff::Sides<'a>) -> report::history::ReplayView<'a> {
        report::history::ReplayView {
            database: &self.db,
            decided: self.decided,
            elsewhere: self.elsewhere,
            changed: &self.changed,
            sides,
        }
    }
}

/// Read the history (a private copy of the database) and decide the calls of sessions
/// started in this directory under both sides; exit 2 when it cannot be read.
fn replay(
    ctx: &Context,
    args: &HistoryArgs,
    compared: &super::sides::Compared,
) -> Result<Replay, i32> {
    let src = super::historydb::Source {
        all_projects: false,
        session: args.session.clone(),
        since: args.since.clone(),
        db: args.db.clone(),
    };
    let read = super::historydb::read_calls(ctx, &src, false)?;
    let (base, head) = (&compared.comparison.base, &compared.comparison.head);
    // The sessions OpenCode ran here: the directory both sides were loaded for.
    let here = head.loaded.paths().cwd.to_string_lossy().into_owned();
    let (calls, others): (Vec<_>, Vec<_>) = read
        .calls
        .into_iter()
        .partition(|c| c.directory.trim_end_matches('/') == here.trim_end_matches('/'));
    let places = crate::shell::Places::of(head.loaded.paths());
    let env = places.env(&super::is_dir);
    let (mut on_base, mut on_head) = (history::Judge::new(base), history::Judge::new(head));
    let (changed, decided) = history::replay(calls, &mut on_base, &mut on_head, &env);
    Ok(Replay {
        db: read.db.display().to_string(),
        decided,
        elsewhere: others.len(),
        changed,
    })
}
