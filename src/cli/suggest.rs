//! `permaudit suggest`: from the asks a person approved across sessions, the smallest
//! `allow` rules that stop them (`crate::approvals`), each proven on the config; shown
//! (`report::suggest`), as a diff (`--diff`) or written (`--write`, as `check --fix` writes).
//! The history is read as `history` reads it (`cli/historydb.rs`); OpenCode's log files
//! (`<data>/log/*.log`) confirm the asks where they cover the calls.

use super::historydb::{self, Source};
use super::{Context, EXIT_OK, EXIT_REFUSED, Format, is_dir, write_pretty};
use crate::approvals::{self, Log, Prover, Recorded};
use crate::discover::Paths;
use crate::host::RealHost;
use crate::shell::Places;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
pub struct SuggestArgs {
    #[command(flatten)]
    pub source: Source,
    /// Propose a rule only when its asks were approved in at least N sessions (a subagent's
    /// session counts under the session that started it).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub min_sessions: u32,
    /// Print the proposals as a unified diff of the config files and write nothing.
    #[arg(long, conflicts_with = "write")]
    pub diff: bool,
    /// Write the proposals into the config files (every file or none, as `check --fix`).
    #[arg(long)]
    pub write: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// The most bytes of OpenCode's log files read (the newest files first).
const LOG_BYTES: u64 = 512 * 1024 * 1024;

pub(super) fn run(ctx: &Context, args: &SuggestArgs, out: &mut dyn Write) -> Result<i32, i32> {
    let read = historydb::read_history(ctx, &args.source, false)?;
    let roots = approvals::roots(&read.sessions);
    let run_roots: BTreeSet<String> = read
        .sessions
        .iter()
        .filter(|s| s.parent_id.is_none() && approvals::is_run_session(s.permission.as_deref()))
        .map(|s| s.id.clone())
        .collect();
    // The log beside the database (OpenCode's data directory holds both), else the data
    // directory's.
    let beside = read
        .db
        .parent()
        .map(|d| d.join("log"))
        .filter(|d| d.is_dir());
    let log = read_log(&beside.unwrap_or_else(|| read.paths.data.join("log")));
    let recorded: Vec<Recorded<'_>> = read
        .judged
        .iter()
        .map(|j| Recorded {
            call: &j.call,
            now: &j.now,
        })
        .collect();
    let (groups, mut skipped) = approvals::gather(
        &recorded,
        &roots,
        &run_roots,
        (!log.is_empty()).then_some(&log),
    );
    // Each directory's proposals proven on top of those before (a config file two
    // directories share is edited once, in order).
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut proposals = Vec::new();
    let dirs: BTreeSet<&str> = groups.iter().map(|g| g.directory.as_str()).collect();
    for dir in dirs {
        let Some(Ok(_)) = read.projects.get(dir) else {
            continue;
        };
        let paths = Paths::from_host(&RealHost, Path::new(dir));
        let root = paths.project_root().to_path_buf();
        let Ok(loader) = historydb::loader_for(ctx, Path::new(dir), &root) else {
            continue;
        };
        let reload = |t: &BTreeMap<PathBuf, String>| loader.reload(t);
        let Some(start) = loader.reload(&texts) else {
            continue;
        };
        let places = Places::of(start.loaded.paths());
        let env = places.env(&is_dir);
        let prover = Prover {
            calls: &recorded,
            directory: dir,
            reload: &reload,
            env: &env,
            root: &root,
            min_sessions: args.min_sessions as usize,
            roots: &roots,
            texts: std::mem::take(&mut texts),
        };
        let (outcome, t) = prover.run(start, &groups);
        texts = t;
        proposals.extend(outcome.proposals);
        skipped.extend(outcome.skipped);
    }
    let mut files: Vec<(PathBuf, String, String)> = Vec::new();
    for (path, after) in texts {
        let before = std::fs::read_to_string(&path).map_err(|e| {
            eprintln!("error: {}: {e}", path.display());
            EXIT_REFUSED
        })?;
        if before != after {
            files.push((path, before, after));
        }
    }
    let root = read.paths.project_root();
    if args.diff {
        let _ = out.write_all(super::edits::unified(&files, root).as_bytes());
        eprintln!(
            "{} rule{} proposed in {} file{}; nothing written",
            proposals.len(),
            if proposals.len() == 1 { "" } else { "s" },
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
        return Ok(EXIT_OK);
    }
    if args.write && !files.is_empty() {
        super::edits::write_all(&files).map_err(|e| {
            eprintln!(
                "error: {}: {}; no file was written",
                e.path.display(),
                e.message
            );
            EXIT_REFUSED
        })?;
    }
    let database = read.db.display().to_string();
    let report = crate::report::suggest::Report {
        database: &database,
        min_sessions: args.min_sessions as usize,
        proposals: &proposals,
        skipped: &skipped,
        log: (!log.is_empty()).then_some(&log),
        written: args.write && !files.is_empty(),
    };
    match args.format {
        Format::Json => write_pretty(out, &report.json()),
        Format::Human => {
            let _ = out.write_all(report.human(ctx.out_style).as_bytes());
        }
    }
    Ok(EXIT_OK)
}

/// OpenCode's log files (`*.log` in `dir`), newest name last, at most [`LOG_BYTES`] read;
/// a file that cannot be read is left out (the log only confirms).
fn read_log(dir: &Path) -> Log {
    let mut log = Log::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return log;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log") && p.is_file())
        .collect();
    files.sort();
    let mut budget = LOG_BYTES;
    for f in files.iter().rev() {
        let Ok(file) = std::fs::File::open(f) else {
            continue;
        };
        let mut reader = std::io::BufReader::new(std::io::Read::take(file, budget));
        let mut line = Vec::new();
        while let Ok(n) = reader.read_until(b'\n', &mut line) {
            if n == 0 {
                break;
            }
            budget = budget.saturating_sub(n as u64);
            log.line(&String::from_utf8_lossy(&line));
            line.clear();
        }
        log.end_file();
        if budget == 0 {
            break;
        }
    }
    log.finish();
    log
}
