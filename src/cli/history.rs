//! `permaudit history`: read OpenCode's database (a private copy, `cli/historydb.rs`),
//! decide every recorded tool call under today's config (`crate::history`), render it
//! (`report::history`).

use super::historydb::{self, Source};
use super::{Context, EXIT_OK, Format, write_pretty};
use crate::history;
use crate::report::history::Row;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub source: Source,
    /// Hide paths and arguments in what is printed (commands show their name only).
    #[arg(long)]
    pub redact: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub(super) fn run(ctx: &Context, args: &HistoryArgs, out: &mut dyn Write) -> Result<i32, i32> {
    let read = historydb::read_history(ctx, &args.source, args.redact)?;
    let judged = &read.judged;
    let under = read.under();
    let mut summary = history::summarize(judged);
    // What `check` reports today about the rules that let calls run unasked.
    let mut findings: BTreeMap<&str, Vec<crate::checks::Finding>> = BTreeMap::new();
    for (i, (j, p)) in judged.iter().zip(&under).enumerate() {
        let Some(p) = p else { continue };
        if j.call.then != history::Then::Ran || j.now.effect() != Some(crate::model::Effect::Allow)
        {
            continue;
        }
        let f = findings
            .entry(j.call.directory.as_str())
            .or_insert_with(|| {
                crate::checks::run_every(p, crate::delegation::RunMode::Interactive)
            });
        summary.ran_risky.extend(history::risks(p, f, j, i));
    }
    let rows: Vec<Row<'_>> = judged
        .iter()
        .zip(&under)
        .map(|(j, p)| Row {
            judged: j,
            project: *p,
        })
        .collect();
    let name = read.db.display().to_string();
    match args.format {
        Format::Json => write_pretty(
            out,
            &crate::report::history::Json {
                rows: &rows,
                summary: &summary,
                database: &name,
                redact: args.redact,
            },
        ),
        Format::Human => {
            let text =
                crate::report::history::human(&rows, &summary, &name, args.redact, ctx.out_style);
            let _ = out.write_all(text.as_bytes());
        }
    }
    Ok(EXIT_OK)
}
