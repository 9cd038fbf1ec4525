//! `permaudit check`: settings (`settings::Setup`), the project, then the run
//! ([`crate::audit::Audit`]: fixes, samples, the checks, suppressions), one of the output
//! forms, and the exit code.

use super::{Context, EXIT_FINDINGS, EXIT_OK, EXIT_REFUSED, HeadlessArg, write_pretty};
use crate::audit::{Audit, Mark, Report, RunError, Want};
use crate::checks::Finding;
use crate::host::RealHost;
use crate::project::{Names, Project};
use crate::report::{self, Style};
use crate::settings::{Setup, SetupError};
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    pub format: CheckFormat,
    /// Exit 1 when a finding reaches this level [default: error, or the settings'
    /// `fail-on`].
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Samples to decide, one `AGENT PERMISSION INPUT [=> ACTION]` a line (default:
    /// `.opencode/permaudit-samples.txt` in the start directory or a parent, if any).
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Judge the config as a non-interactive `opencode run` uses it: every ask rejected
    /// (`reject`, the default) or approved (`auto`, as `run --auto`). Adds
    /// `headless-ask`; delegation through an ask follows the same answer.
    #[arg(long, value_enum, value_name = "ANSWER", num_args = 0..=1, require_equals = true, default_missing_value = "reject")]
    pub headless: Option<HeadlessArg>,
    /// Apply the fixes proven safe (no decision of any agent changes), writing the fixed
    /// config files atomically, then report what is left. Repeats until no fix applies.
    #[arg(long, conflicts_with_all = ["diff", "write_baseline"])]
    pub fix: bool,
    /// With `--fix` or `--diff`: also the narrowing fixes (decisions change only toward ask
    /// or deny, only where the finding says). Nothing that widens access is ever applied.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes `--fix` would apply as a unified diff and write nothing; exit 1 when
    /// there is something to fix, 0 when not.
    #[arg(long)]
    pub diff: bool,
    /// With `--fix` or `--diff`: also fix the config files outside the project (the
    /// global `~/.config/opencode`, `OPENCODE_CONFIG`), with the same proofs and
    /// guarantees. Without it only the project's files are written.
    #[arg(long, conflicts_with = "project_only")]
    pub global: bool,
    #[command(flatten)]
    pub ci: CiArgs,
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
    /// Write the findings as a baseline to FILE (atomically, and nothing else: the one
    /// file `check` writes besides the configs `--fix` repairs) and exit 0.
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

impl From<FailOn> for crate::settings::FailOn {
    fn from(f: FailOn) -> crate::settings::FailOn {
        match f {
            FailOn::Error => crate::settings::FailOn::Error,
            FailOn::Warning => crate::settings::FailOn::Warning,
            FailOn::Info => crate::settings::FailOn::Info,
            FailOn::Never => crate::settings::FailOn::Never,
        }
    }
}

pub fn run(ctx: &Context, args: &CheckArgs, out: &mut dyn Write) -> Result<i32, i32> {
    let ci = &args.ci;
    let setup = Setup::find(
        &RealHost,
        &ctx.cwd,
        ci.config.as_deref(),
        ci.project_only,
        ci.absolute_paths,
    )
    .map_err(|e| {
        if let SetupError::Settings { sources, error } = &e {
            refused_machine(args.format, sources, error, out);
        }
        setup_error(e, None, ctx.err_style)
    })?;
    let host_box = ctx.host(setup.project_only);
    let names = Names {
        root: (!setup.absolute).then_some(setup.root.as_path()),
        tilde: matches!(args.format, CheckFormat::Human | CheckFormat::Concise) && !setup.absolute,
    };
    let loader = ctx.loader(host_box.as_ref(), names)?;
    let mut project = ctx.load(&loader, &mut |f| {
        refused_machine(args.format, &f.sources, &f.error, out)
    })?;
    let reload = |files: &std::collections::BTreeMap<PathBuf, String>| loader.reload(files);
    let audit = Audit {
        setup: &setup,
        mode: args.headless.map(Into::into).unwrap_or_default(),
        no_ignore: ci.no_ignore,
        baseline: ci.baseline.as_deref(),
    };
    let mut fixed = None;
    if args.fix || args.diff {
        let outcome = fix(&audit, &project, args, &reload)?;
        if outcome.refused {
            eprintln!(
                "error: the fixes, each proven, did not prove together against the config as read; nothing {}",
                if args.diff { "shown" } else { "written" }
            );
            return Err(EXIT_REFUSED);
        }
        if args.diff {
            let code = print_diff(&outcome, &setup.root, out);
            return if outcome.unfinished {
                eprintln!("{}", unfinished_line(&outcome, true));
                Err(EXIT_REFUSED)
            } else {
                Ok(code)
            };
        }
        write_fixes(&outcome)?;
        if outcome.unfinished {
            eprintln!("{}", unfinished_line(&outcome, false));
            return Err(EXIT_REFUSED);
        }
        if !matches!(args.format, CheckFormat::Human | CheckFormat::Concise) {
            eprintln!("{}", fixed_line(&outcome, true, true));
        }
        // The fixed files as written, read back (what loading says, said again).
        if !outcome.files.is_empty() {
            project = loader.load().map_err(|f| {
                eprint!("{}", report::error::render(&f, ctx.err_style));
                refused_machine(args.format, &f.sources, &f.error, out);
                EXIT_REFUSED
            })?;
            eprint!("{}", report::error::load_notes(&project));
        }
        fixed = Some(outcome);
    }
    check(
        &mut project,
        args,
        &audit,
        ctx.out_style,
        out,
        Fixing {
            reload: &reload,
            fixed: fixed.as_ref(),
        },
    )
}

/// What `check` knows of fixing: how to re-load the project with files replaced (to
/// prove the fixes it marks) and what `--fix` did.
struct Fixing<'a> {
    reload: &'a crate::fix::Reload<'a>,
    fixed: Option<&'a crate::fix::Outcome>,
}

/// `--fix` and `--diff`: every proven fix applied in memory.
fn fix(
    audit: &Audit<'_>,
    project: &Project,
    args: &CheckArgs,
    reload: &crate::fix::Reload<'_>,
) -> Result<crate::fix::Outcome, i32> {
    audit
        .fix(project, &RealHost, reload, args.unsafe_fixes, args.global)
        .map_err(run_error)
}

/// Print why the run could not read its inputs; the exit code.
fn run_error(e: RunError) -> i32 {
    match e {
        RunError::SamplesUnreadable { path, error } => {
            eprintln!("error: samples file {}: {error}", path.display())
        }
        RunError::BadSample { at, message } => eprintln!("{at}: error: bad sample: {message}"),
        RunError::BadBaseline { at, message } => eprintln!("{at}: error: {message}"),
        RunError::Setup(e) => return setup_error(*e, None, Style { color: false }),
    }
    EXIT_REFUSED
}

/// `--diff`: the fixed files as a unified diff (paths relative to the project root); exit
/// 1 when there is something to fix.
fn print_diff(outcome: &crate::fix::Outcome, root: &std::path::Path, out: &mut dyn Write) -> i32 {
    let text = super::edits::unified(&outcome.files, root);
    // Exactly the bytes of the files (as `git diff` prints them): a patch that applies.
    let _ = out.write_all(text.as_bytes());
    eprintln!("{}", fixed_line(outcome, false, true));
    if outcome.files.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}

/// `--fix` stopped at its bound with fixes still applying.
fn unfinished_line(outcome: &crate::fix::Outcome, diff: bool) -> String {
    format!(
        "error: --fix stopped after {} passes with fixes still applying (its limit); what was proven so far is {}; run it again to continue",
        outcome.passes,
        if diff { "shown" } else { "written" }
    )
}

/// "fixed 3 findings in 1 file" / "--fix would fix …"; with `unsafe_count`, also the
/// narrowing fixes `--unsafe-fixes` would add (human output gives that count on the
/// fixable line above it instead).
fn fixed_line(outcome: &crate::fix::Outcome, written: bool, unsafe_count: bool) -> String {
    let n: usize = outcome.applied.iter().map(|a| a.findings).sum();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let what = format!(
        "{} in {}",
        plural(n, "finding", "findings"),
        plural(outcome.files.len(), "file", "files")
    );
    let mut line = match (n, written) {
        (0, true) => "nothing fixed".to_string(),
        (0, false) => "nothing for --fix to fix".to_string(),
        (_, true) => format!("fixed {what}"),
        (_, false) => format!("--fix would fix {what}"),
    };
    if unsafe_count && outcome.unsafe_available > 0 {
        line.push_str(&format!(
            "; {} with --unsafe-fixes",
            plural(outcome.unsafe_available, "narrowing fix", "narrowing fixes")
        ));
    }
    line
}

/// `--fix`: every fixed file written, or none (`host::write::replace_all`: links written
/// through, modes and owners kept, read-only files refused); exit 2 naming the file that
/// could not be written.
fn write_fixes(outcome: &crate::fix::Outcome) -> Result<(), i32> {
    super::edits::write_all(&outcome.files).map_err(|e| {
        eprintln!(
            "error: {}: {}; no fixed file was written",
            e.path.display(),
            e.message
        );
        EXIT_REFUSED
    })
}

/// A refused config or settings file in the machine formats, on standard output (the human
/// forms say it on stderr only).
fn refused_machine(
    format: CheckFormat,
    sources: &crate::source::SourceMap,
    error: &crate::load::LoadError,
    out: &mut dyn Write,
) {
    use report::error::Machine;
    let form = match format {
        CheckFormat::Json => Machine::Json,
        CheckFormat::Sarif => Machine::Sarif,
        CheckFormat::Github => Machine::Github,
        CheckFormat::Human | CheckFormat::Concise => return,
    };
    let _ = out.write_all(report::error::machine(sources, error, form).as_bytes());
}

/// Print why `check` cannot start; the exit code.
fn setup_error(e: SetupError, project: Option<&Project>, style: Style) -> i32 {
    match e {
        SetupError::Unreadable {
            what,
            path,
            message,
        } => eprintln!("error: {what} {}: {message}", path.display()),
        SetupError::Settings { sources, error } => {
            eprint!("{}", report::error::render_error(&sources, &error, style));
        }
        SetupError::Baseline(e) => match project {
            Some(p) => eprintln!("{}: error: {}", p.loaded.sources.position(e.loc), e.message),
            None => eprintln!("error: {}", e.message),
        },
    }
    EXIT_REFUSED
}

/// The loaded project checked: samples, findings, suppressions, output, exit code.
fn check(
    project: &mut Project,
    args: &CheckArgs,
    audit: &Audit<'_>,
    style: Style,
    out: &mut dyn Write,
    fixing: Fixing<'_>,
) -> Result<i32, i32> {
    let (ci, setup) = (&args.ci, audit.setup);
    let read = |path: &std::path::Path| std::fs::read(path);
    let want = match (&ci.write_baseline, args.format) {
        (Some(_), _) => Want::Baseline,
        (None, CheckFormat::Human) => Want::Marked(fixing.reload),
        (None, CheckFormat::Json) => Want::Suggested(fixing.reload),
        (None, _) => Want::Findings,
    };
    let Report {
        config: config_sources,
        samples,
        findings,
        suppression: outcome,
        marks,
        suggestions,
    } = match audit.report(project, &RealHost, args.samples.as_deref(), &read, want) {
        Ok(r) => r,
        Err(RunError::Setup(e)) => return Err(setup_error(*e, Some(project), style)),
        Err(e) => return Err(run_error(e)),
    };
    let project = &*project;
    if let Some(file) = &ci.write_baseline {
        return Ok(write_baseline(project, &findings, &setup.root, file));
    }
    let s = report::check::Samples {
        samples: &samples.samples,
        outcomes: &samples.outcomes,
    };
    match args.format {
        CheckFormat::Human | CheckFormat::Concise => {
            let text = check_text(
                project,
                &findings,
                s,
                setup,
                args,
                &config_sources,
                &outcome,
                style,
                &marks,
                &suggestions,
                fixing.fixed,
            );
            let _ = out.write_all(text.as_bytes());
        }
        CheckFormat::Json => write_pretty(
            out,
            &report::check::json(project, &findings, s)
                .with_fixed(fixing.fixed)
                .with_suggestions(&suggestions),
        ),
        CheckFormat::Sarif => write_pretty(out, &report::check::sarif(project, &findings)),
        CheckFormat::Github => {
            let _ = out.write_all(report::check::github(project, &findings).as_bytes());
        }
    }
    let fail_on = args.fail_on.map(Into::into).or(setup.settings.fail_on);
    Ok(exit_for(&findings, fail_on))
}

/// `check`'s exit code: 1 when a finding reaches the `--fail-on` level (default error).
fn exit_for(findings: &[Finding], fail_on: Option<crate::settings::FailOn>) -> i32 {
    let threshold = fail_on
        .unwrap_or(crate::settings::FailOn::Error)
        .threshold();
    if threshold.is_some_and(|t| findings.iter().any(|f| f.level >= t)) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// The human and concise reports: header (human), findings (only errors with `-q`) or
/// counts per kind (`--statistics`), samples (human), summary.
#[allow(clippy::too_many_arguments)]
fn check_text(
    project: &Project,
    findings: &[Finding],
    samples: report::check::Samples<'_>,
    setup: &Setup,
    args: &CheckArgs,
    config: &[crate::source::SourceId],
    outcome: &crate::suppress::Outcome,
    style: Style,
    marks: &[Option<Mark>],
    suggestions: &[Vec<crate::fix::suggest::Suggestion>],
    fixed: Option<&crate::fix::Outcome>,
) -> String {
    use crate::checks::Level;
    let ci = &args.ci;
    let sources = &project.loaded.sources;
    let mut out = String::new();
    let human = args.format == CheckFormat::Human;
    if human && !ci.quiet {
        let names: Vec<String> = config.iter().map(|&id| sources.get(id).name()).collect();
        let settings = setup.file.as_deref().map(|f| setup.shown(f));
        out.push_str(&report::check::header(
            &names,
            settings.as_deref(),
            setup.project_only,
        ));
    }
    let (shown, shown_marks): (Vec<Finding>, Vec<Option<String>>) = findings
        .iter()
        .enumerate()
        .filter(|(_, f)| !ci.quiet || f.level == Level::Error)
        .map(|(n, f)| {
            let mark = marks.get(n).cloned().flatten().map(|m| mark_line(&m, args));
            let suggested: Vec<String> = suggestions
                .get(n)
                .into_iter()
                .flatten()
                .map(report::check::suggestion_lines)
                .collect();
            let mark = match (mark, suggested.is_empty()) {
                (m, true) => m,
                (None, false) => Some(suggested.join("\n")),
                (Some(m), false) => Some(format!("{m}\n{}", suggested.join("\n"))),
            };
            (f.clone(), mark)
        })
        .unzip();
    if ci.statistics {
        out.push_str(&report::check::statistics(&shown));
    } else if human {
        out.push_str(&report::check::findings_human_marked(
            project,
            &shown,
            &shown_marks,
            style,
        ));
        if !ci.quiet {
            out.push_str(&report::check::samples_table(project, samples, style));
        }
    } else {
        out.push_str(&report::check::concise(project, &shown));
    }
    // With `--global` every file is the fix loop's: one count.
    let count = |want: crate::fix::Safety, outside: bool| {
        marks
            .iter()
            .flatten()
            .filter(|m| m.safety == Some(want) && (m.outside && !args.global) == outside)
            .count()
    };
    use crate::fix::Safety::{Narrowing, Safe};
    let narrowing = count(Narrowing, false) + count(Narrowing, true);
    if let Some(line) = fixable_line(
        [count(Safe, false), count(Narrowing, false)],
        [count(Safe, true), count(Narrowing, true)],
        args.global,
    ) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(fixed) = fixed {
        // The line above already counts what `--unsafe-fixes` would add: said once.
        out.push_str(&fixed_line(fixed, true, narrowing == 0));
        out.push('\n');
    }
    let (e, w, i) = report::check::summary(findings);
    out.push_str(&report::check::summary_line(e, w, i));
    let hidden: Vec<String> = [
        (outcome.hidden_by_settings, "by the settings"),
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

/// A finding's fix as its help line says it: what it does and the flags that apply it
/// (`--global` for a file outside the project, unless given).
fn mark_line(m: &Mark, args: &CheckArgs) -> String {
    let global = if m.outside && !args.global {
        " --global"
    } else {
        ""
    };
    let title = &m.title;
    let place = if global.is_empty() {
        ""
    } else {
        "; the file is outside the project"
    };
    match m.safety {
        Some(crate::fix::Safety::Safe) => format!("fix: {title} (safe: `--fix{global}`{place})"),
        Some(crate::fix::Safety::Narrowing) => {
            format!("fix: {title} (narrowing: `--fix --unsafe-fixes{global}`{place})")
        }
        None => format!("fix: {title}"),
    }
}

/// "3 fixable with `--fix` (1 more with `--fix --unsafe-fixes`)", and what only
/// `--global` applies (files outside the project): `[safe, narrowing]` counts each.
fn fixable_line(inside: [usize; 2], outside: [usize; 2], global: bool) -> Option<String> {
    let flags = if global { " --global" } else { "" };
    let part = |[s, n]: [usize; 2], flags: &str| match (s, n) {
        (0, 0) => None,
        (s, 0) => Some(format!("{s} fixable with `--fix{flags}`")),
        (0, n) => Some(format!("{n} fixable with `--fix --unsafe-fixes{flags}`")),
        (s, n) => Some(format!(
            "{s} fixable with `--fix{flags}` ({n} more with `--fix --unsafe-fixes{flags}`)"
        )),
    };
    match (part(inside, flags), part(outside, " --global")) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(format!("outside the project (global config): {b}")),
        (Some(a), Some(b)) => Some(format!("{a}; outside the project (global config): {b}")),
    }
}

/// `--write-baseline FILE`: the findings as baseline entries, written atomically (never
/// half a file).
fn write_baseline(
    project: &Project,
    findings: &[Finding],
    root: &std::path::Path,
    file: &std::path::Path,
) -> i32 {
    let entries = crate::suppress::entries(project, findings, root);
    let text = crate::suppress::baseline_text(&entries);
    let path = project.loaded.paths().cwd.join(file);
    match crate::host::write_atomically(&path, text.as_bytes()) {
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
            eprintln!(
                "error: cannot write the baseline {}: {}",
                path.display(),
                e.message
            );
            EXIT_REFUSED
        }
    }
}
