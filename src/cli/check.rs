//! `permaudit check`: settings (`settings::Setup`), the project, samples, the checks,
//! suppressions, one of the output forms, and the exit code.

use super::{Context, EXIT_FINDINGS, EXIT_OK, EXIT_REFUSED, HeadlessArg, write_pretty};
use crate::checks::Finding;
use crate::host::RealHost;
use crate::project::Project;
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
    let project_only_host;
    let host: &dyn crate::discover::Host = if setup.project_only {
        project_only_host = crate::discover::ProjectOnly::new(&RealHost, &ctx.cwd);
        &project_only_host
    } else {
        &RealHost
    };
    let profile = ctx.profile()?;
    let names = super::Names {
        root: (!setup.absolute).then_some(setup.root.as_path()),
        tilde: matches!(args.format, CheckFormat::Human | CheckFormat::Concise) && !setup.absolute,
    };
    let mut project = ctx.load(host, profile.clone(), names, &mut |f| {
        refused_machine(args.format, &f.sources, &f.error, out)
    })?;
    let reload = |files: &std::collections::BTreeMap<PathBuf, String>| {
        ctx.reload(host, profile.clone(), names, files)
    };
    let mut fixed = None;
    if args.fix || args.diff {
        let outcome = fix(&project, args, &setup, &reload)?;
        if args.diff {
            return Ok(print_diff(&outcome, &setup.root, out));
        }
        write_fixes(&outcome)?;
        if !matches!(args.format, CheckFormat::Human | CheckFormat::Concise) {
            eprintln!("{}", fixed_line(&outcome, true));
        }
        if !outcome.files.is_empty() {
            project = ctx.load(host, profile.clone(), names, &mut |f| {
                refused_machine(args.format, &f.sources, &f.error, out)
            })?;
        }
        fixed = Some(outcome);
    }
    check(
        &mut project,
        args,
        &setup,
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

/// The findings `check` would report on `project` (settings, ignores and the baseline
/// applied, samples aside): what `--fix` repairs.
fn reported(
    project: &Project,
    args: &CheckArgs,
    setup: &Setup,
    baseline: Option<&[(crate::suppress::Entry, crate::source::Loc)]>,
) -> Vec<Finding> {
    let mode = args.headless.map(Into::into).unwrap_or_default();
    let findings = crate::checks::run_every(project, mode);
    suppressed(project, findings, setup, args.ci.no_ignore, baseline)
}

/// `findings` as `check` reports them: the settings, the project's inline ignores (none
/// with `no_ignore`) and a baseline applied. The fix loop and the language server use it.
pub(super) fn suppressed(
    project: &Project,
    findings: Vec<Finding>,
    setup: &Setup,
    no_ignore: bool,
    baseline: Option<&[(crate::suppress::Entry, crate::source::Loc)]>,
) -> Vec<Finding> {
    let ids: Vec<crate::source::SourceId> =
        project.loaded.sources.iter().map(|(id, _)| id).collect();
    let inputs = crate::suppress::Inputs {
        settings: &setup.settings,
        inline: if no_ignore { &[] } else { &ids },
        baseline,
        root: &setup.root,
    };
    crate::suppress::apply(project, findings, &inputs).findings
}

/// `--fix` and `--diff`: every proven fix applied in memory.
fn fix(
    project: &Project,
    args: &CheckArgs,
    setup: &Setup,
    reload: &crate::fix::Reload<'_>,
) -> Result<crate::fix::Outcome, i32> {
    let baseline = match setup.baseline_path(args.ci.baseline.as_deref()) {
        Some(path) => {
            // Read beside the project's sources: its entries' places are in this map only.
            let mut scratch = project.loaded.sources.clone();
            match crate::suppress::read_baseline(&RealHost, &mut scratch, &path) {
                Ok(b) => Some(b),
                Err(SetupError::Baseline(e)) => {
                    eprintln!("{}: error: {}", scratch.position(e.loc), e.message);
                    return Err(EXIT_REFUSED);
                }
                Err(e) => return Err(setup_error(e, None, Style { color: false })),
            }
        }
        None => None,
    };
    let findings = |p: &Project| reported(p, args, setup, baseline.as_deref());
    Ok(crate::fix::fix(
        project,
        &findings,
        reload,
        Some(&setup.root),
        args.unsafe_fixes,
    ))
}

/// `--diff`: the fixed files as a unified diff (paths relative to the project root); exit
/// 1 when there is something to fix.
fn print_diff(outcome: &crate::fix::Outcome, root: &std::path::Path, out: &mut dyn Write) -> i32 {
    let mut text = String::new();
    for (path, before, after) in &outcome.files {
        let name = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let diff = similar::TextDiff::from_lines(before.as_str(), after.as_str());
        text.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{name}"), &format!("b/{name}"))
                .to_string(),
        );
    }
    // Exactly the bytes of the files (as `git diff` prints them): a patch that applies.
    let _ = out.write_all(text.as_bytes());
    eprintln!("{}", fixed_line(outcome, false));
    if outcome.files.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}

/// "fixed 3 findings in 1 file" / "--fix would fix …", and what `--unsafe-fixes` would add.
fn fixed_line(outcome: &crate::fix::Outcome, written: bool) -> String {
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
    if outcome.unsafe_available > 0 {
        line.push_str(&format!(
            "; {} with --unsafe-fixes",
            plural(outcome.unsafe_available, "narrowing fix", "narrowing fixes")
        ));
    }
    line
}

/// `--fix`: each fixed file written atomically (never half a file); exit 2 on the first
/// that cannot be written, naming it.
fn write_fixes(outcome: &crate::fix::Outcome) -> Result<(), i32> {
    for (path, before, after) in &outcome.files {
        // Written only if the file still holds what was fixed.
        match std::fs::read(path) {
            Ok(now) if now == before.as_bytes() => {}
            _ => {
                eprintln!(
                    "error: {} changed while it was being fixed; nothing written to it",
                    path.display()
                );
                return Err(EXIT_REFUSED);
            }
        }
        if let Err(e) = crate::host::write_atomically(path, after.as_bytes()) {
            eprintln!("error: cannot write the fixed {}: {e}", path.display());
            return Err(EXIT_REFUSED);
        }
    }
    Ok(())
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
    setup: &Setup,
    style: Style,
    out: &mut dyn Write,
    fixing: Fixing<'_>,
) -> Result<i32, i32> {
    use crate::checks::sample_mismatch;
    use crate::source::{Origin, SourceFile};
    let ci = &args.ci;
    // The OpenCode config read: every source so far.
    let config_sources: Vec<crate::source::SourceId> =
        project.loaded.sources.iter().map(|(id, _)| id).collect();
    let path = setup.samples_path(&RealHost, project.loaded.paths(), args.samples.as_deref());
    let mut samples = Vec::new();
    let mut outcomes = Vec::new();
    if let Some(path) = path {
        let text = match std::fs::read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                eprintln!("error: samples file {}: {e}", path.display());
                return Err(EXIT_REFUSED);
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
                return Err(EXIT_REFUSED);
            }
        }
    }
    let baseline = match setup.baseline_path(ci.baseline.as_deref()) {
        Some(path) => Some(
            crate::suppress::read_baseline(&RealHost, &mut project.loaded.sources, &path)
                .map_err(|e| setup_error(e, Some(project), style))?,
        ),
        None => None,
    };
    let project = &*project;
    let mode = args.headless.map(Into::into).unwrap_or_default();
    let mut findings = crate::checks::run_as(project, mode);
    findings.extend(crate::checks::consolidate(
        project,
        sample_mismatch::findings(project, &samples, &outcomes),
    ));
    let inputs = crate::suppress::Inputs {
        settings: &setup.settings,
        inline: if ci.no_ignore { &[] } else { &config_sources },
        baseline: baseline.as_deref(),
        root: &setup.root,
    };
    if let Some(file) = &ci.write_baseline {
        let inputs = crate::suppress::Inputs {
            baseline: None,
            ..inputs
        };
        let mut kept = crate::suppress::apply(project, findings, &inputs).findings;
        kept.retain(|f| !crate::suppress::NOT_BASELINED.contains(&f.id));
        return Ok(write_baseline(project, &kept, &setup.root, file));
    }
    let mut outcome = crate::suppress::apply(project, findings, &inputs);
    let findings = std::mem::take(&mut outcome.findings);
    let s = report::check::Samples {
        samples: &samples,
        outcomes: &outcomes,
    };
    match args.format {
        CheckFormat::Human | CheckFormat::Concise => {
            let marks = if args.format == CheckFormat::Human {
                fix_marks(project, &findings, setup, fixing.reload)
            } else {
                Vec::new()
            };
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
                fixing.fixed,
            );
            let _ = out.write_all(text.as_bytes());
        }
        CheckFormat::Json => write_pretty(out, &report::check::json(project, &findings, s)),
        CheckFormat::Sarif => write_pretty(out, &report::check::sarif(project, &findings)),
        CheckFormat::Github => {
            let _ = out.write_all(report::check::github(project, &findings).as_bytes());
        }
    }
    let fail_on = args.fail_on.map(Into::into).or(setup.settings.fail_on);
    Ok(exit_for(&findings, fail_on))
}

/// Per finding, the proven fix it has (human output marks it).
fn fix_marks(
    project: &Project,
    findings: &[Finding],
    setup: &Setup,
    reload: &crate::fix::Reload<'_>,
) -> Vec<Option<(crate::fix::Safety, String)>> {
    let mut marks = vec![None; findings.len()];
    for f in crate::fix::proven(project, findings, reload, Some(&setup.root)) {
        for &n in &f.repairs {
            if let Some(m) = marks.get_mut(n) {
                *m = Some((f.safety, f.title.clone()));
            }
        }
    }
    marks
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
    marks: &[Option<(crate::fix::Safety, String)>],
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
            let mark = marks
                .get(n)
                .cloned()
                .flatten()
                .map(|(safety, title)| match safety {
                    crate::fix::Safety::Safe => format!("fix: {title} (safe: `--fix`)"),
                    crate::fix::Safety::Narrowing => {
                        format!("fix: {title} (narrowing: `--fix --unsafe-fixes`)")
                    }
                });
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
    let count = |want: crate::fix::Safety| {
        marks
            .iter()
            .filter(|m| m.as_ref().is_some_and(|(s, _)| *s == want))
            .count()
    };
    let (safe, narrowing) = (
        count(crate::fix::Safety::Safe),
        count(crate::fix::Safety::Narrowing),
    );
    let line = match (safe, narrowing) {
        (0, 0) => None,
        (s, 0) => Some(format!("{s} fixable with `--fix`")),
        (0, n) => Some(format!("{n} fixable with `--fix --unsafe-fixes`")),
        (s, n) => Some(format!(
            "{s} fixable with `--fix` ({n} more with `--fix --unsafe-fixes`)"
        )),
    };
    if let Some(line) = line {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(fixed) = fixed {
        out.push_str(&fixed_line(fixed, true));
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
            eprintln!("error: cannot write the baseline {}: {e}", path.display());
            EXIT_REFUSED
        }
    }
}
