//! `permaudit diff`: its arguments, the two sides read (`cli/sides.rs`: a git revision
//! through `git ls-tree` and `git cat-file`, into memory; or a directory) and compared by
//! the library ([`crate::compare`]), one of the reports, the exit code. Never writes a
//! checkout.

use super::sides::Spec;
use super::{Context, EXIT_FINDINGS, EXIT_OK};
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
    let compared = match super::sides::compare(ctx, &spec) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (d, view) = (&compared.comparison.diff, compared.view());
    let out_style = ctx.out_style;
    match args.format {
        DiffFormat::Human => {
            let _ = out.write_all(report::diff::human(d, &view, out_style).as_bytes());
        }
        DiffFormat::Json => super::write_pretty(out, &report::diff::json(d, &view)),
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
