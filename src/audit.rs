//! A check run end to end, as every front end drives it: `check`, the language server and
//! the report page call this stage; none re-states its order.
//!
//! ```text
//! Setup (settings) ─▶ load (the front end's `project::Loader`) ─▶ [fix loop ─▶ re-load
//!   through the Loader] ─▶ samples, baseline
//!   ─▶ checks (+ sample mismatches) ─▶ suppression (settings, inline, baseline) ─▶ marks
//! ```
//!
//! An [`Audit`] is the settings of one run ([`Setup`]) and the choices its front end made
//! (how asks are answered, whether inline ignores count, which baseline). It touches no
//! machine: files are read through a [`Host`] or a reader the front end passes, and the
//! fix loop re-loads through the front end's [`Reload`].

use crate::checks::sample_mismatch::{self, Sample};
use crate::checks::{Engines, Finding};
use crate::delegation::RunMode;
use crate::discover::Host;
use crate::fix::{Reload, Safety};
use crate::project::Project;
use crate::settings::{Setup, SetupError};
use crate::source::{Loc, Origin, SourceFile, SourceId, SourceMap};
use crate::suppress::{self, Entry};
use std::path::{Path, PathBuf};

/// The baseline's entries, each with its place in the baseline file.
pub type Baseline = Vec<(Entry, Loc)>;

/// One check run's settings and its front end's choices.
pub struct Audit<'a> {
    pub setup: &'a Setup,
    /// Who answers the asks (`check --headless`).
    pub mode: RunMode,
    /// Inline `permaudit-ignore` comments hide nothing (`--no-ignore`).
    pub no_ignore: bool,
    /// The baseline given (`--baseline`); else the settings' one, if any.
    pub baseline: Option<&'a Path>,
}

/// Why a run could not read its own inputs.
pub enum RunError {
    /// The samples file could not be read.
    SamplesUnreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A sample refused: its place (`path:line:col`) and why.
    BadSample { at: String, message: String },
    /// A baseline entry refused: its place (`path:line:col`) and why.
    BadBaseline { at: String, message: String },
    /// The baseline could not be read.
    Setup(Box<SetupError>),
}

/// The samples of a run and how OpenCode decides each.
#[derive(Default)]
pub struct Samples {
    pub samples: Vec<Sample>,
    pub outcomes: Vec<sample_mismatch::Outcome>,
}

/// What the checks and suppression kept, and what suppression hid.
struct Checked {
    findings: Vec<Finding>,
    suppression: suppress::Outcome,
}

/// What a front end asks of [`Audit::report`].
pub enum Want<'r> {
    /// The findings as reported.
    Findings,
    /// The findings as reported, each marked with its proven fix and given its proven
    /// suggestions (proved by re-loading through the `Reload`).
    Marked(&'r Reload<'r>),
    /// The findings as reported, each given its proven suggestions (the JSON report).
    Suggested(&'r Reload<'r>),
    /// The findings a baseline records (`--write-baseline`).
    Baseline,
}

/// A finding's fix as `check` marks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// Its class; `None` for a repair not applied because it would widen access (the
    /// title says what it would open).
    pub safety: Option<Safety>,
    pub title: String,
    /// It edits a file outside the project root (the global config, `OPENCODE_CONFIG`):
    /// `--fix` applies it only with `--global`.
    pub outside: bool,
}

/// A run's report: everything a front end renders.
pub struct Report {
    /// The OpenCode config read: its sources, before samples and baseline joined the map.
    pub config: Vec<SourceId>,
    pub samples: Samples,
    pub findings: Vec<Finding>,
    /// What suppression hid (nothing counted for [`Want::Baseline`]).
    pub suppression: suppress::Outcome,
    /// Per finding, its proven fix ([`Want::Marked`]; else empty).
    pub marks: Vec<Option<Mark>>,
    /// Per finding, the changes its help proposes, proven on this config
    /// ([`Want::Marked`], [`Want::Suggested`]; else empty).
    pub suggestions: Vec<Vec<crate::fix::suggest::Suggestion>>,
}

impl<'a> Audit<'a> {
    /// The run after loading (and after the fix loop, if any), every stage once, in
    /// order: the samples (`given`, else the settings' or the default file, read with
    /// `read`), the baseline (through `host`), the checks and sample mismatches,
    /// suppression, then what `want` adds. Samples and baseline join the project's sources
    /// (their places are there).
    pub fn report(
        &self,
        project: &mut Project,
        host: &dyn Host,
        given: Option<&Path>,
        read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
        want: Want<'_>,
    ) -> Result<Report, RunError> {
        let config: Vec<SourceId> = project.loaded.sources.iter().map(|(id, _)| id).collect();
        let samples = self.samples(host, project, given, read)?;
        let baseline = self.baseline(host, &mut project.loaded.sources)?;
        let project = &*project;
        if let Want::Baseline = want {
            let findings = self.to_baseline(project, &config, &samples);
            return Ok(Report {
                config,
                samples,
                findings,
                suppression: suppress::Outcome::default(),
                marks: Vec::new(),
                suggestions: Vec::new(),
            });
        }
        let checked = self.check(project, &config, &samples, baseline.as_deref());
        let marks = match want {
            Want::Marked(reload) => self.marks(project, &checked.findings, reload),
            _ => Vec::new(),
        };
        let suggestions = match want {
            Want::Marked(reload) | Want::Suggested(reload) => {
                self.suggestions(project, &config, &checked.findings, reload)
            }
            _ => Vec::new(),
        };
        Ok(Report {
            config,
            samples,
            findings: checked.findings,
            suppression: checked.suppression,
            marks,
            suggestions,
        })
    }

    /// The samples, when there are any (`given`, else the settings' or the default file):
    /// read with `read`, added to the project's sources, parsed and decided.
    fn samples(
        &self,
        host: &dyn Host,
        project: &mut Project,
        given: Option<&Path>,
        read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    ) -> Result<Samples, RunError> {
        let Some(path) = self.setup.samples_path(host, project.loaded.paths(), given) else {
            return Ok(Samples::default());
        };
        let text = match read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(error) => return Err(RunError::SamplesUnreadable { path, error }),
        };
        let id = project
            .loaded
            .sources
            .add(SourceFile::new(Origin::File(path), text.clone()));
        sample_mismatch::parse(&text, id)
            .and_then(|s| sample_mismatch::decide(project, &s).map(|o| (s, o)))
            .map(|(samples, outcomes)| Samples { samples, outcomes })
            .map_err(|e| RunError::BadSample {
                at: project.loaded.sources.position(e.loc).to_string(),
                message: e.message,
            })
    }

    /// The findings the run reports, samples aside (the report page): the baseline read
    /// through `host`, the checks, suppression.
    pub fn findings(
        &self,
        project: &mut Project,
        host: &dyn Host,
    ) -> Result<Vec<Finding>, RunError> {
        let config: Vec<SourceId> = project.loaded.sources.iter().map(|(id, _)| id).collect();
        let baseline = self.baseline(host, &mut project.loaded.sources)?;
        let samples = Samples::default();
        Ok(self
            .check(project, &config, &samples, baseline.as_deref())
            .findings)
    }

    /// [`Audit::read_baseline`], a refused entry named at its place in `sources`.
    fn baseline(
        &self,
        host: &dyn Host,
        sources: &mut SourceMap,
    ) -> Result<Option<Baseline>, RunError> {
        self.read_baseline(host, sources).map_err(|e| match e {
            SetupError::Baseline(e) => RunError::BadBaseline {
                at: sources.position(e.loc).to_string(),
                message: e.message,
            },
            e => RunError::Setup(Box::new(e)),
        })
    }

    /// The baseline, if the run has one, read through `host` into `sources` (its entries'
    /// places are in that map only).
    fn read_baseline(
        &self,
        host: &dyn Host,
        sources: &mut SourceMap,
    ) -> Result<Option<Baseline>, SetupError> {
        match self.setup.baseline_path(self.baseline) {
            Some(path) => suppress::read_baseline(host, sources, &path).map(Some),
            None => Ok(None),
        }
    }

    /// The checks and the sample mismatches, one finding per place, then suppression:
    /// what `check` reports. `config` are the sources whose inline ignores count (the
    /// OpenCode config read, before samples and baseline joined the map).
    fn check(
        &self,
        project: &Project,
        config: &[SourceId],
        samples: &Samples,
        baseline: Option<&[(Entry, Loc)]>,
    ) -> Checked {
        let mut findings = crate::checks::run_as(project, self.mode);
        findings.extend(crate::checks::consolidate(
            project,
            sample_mismatch::findings(project, &samples.samples, &samples.outcomes),
        ));
        let mut suppression = suppress::apply(project, findings, &self.inputs(config, baseline));
        Checked {
            findings: std::mem::take(&mut suppression.findings),
            suppression,
        }
    }

    /// [`Audit::check`]'s findings as a baseline records them (`--write-baseline`): the
    /// settings and inline ignores applied, no baseline, kinds never baselined left out.
    fn to_baseline(
        &self,
        project: &Project,
        config: &[SourceId],
        samples: &Samples,
    ) -> Vec<Finding> {
        let Checked { mut findings, .. } = self.check(project, config, samples, None);
        findings.retain(|f| !suppress::NOT_BASELINED.contains(&f.id));
        findings
    }

    /// `findings` as the run reports them: the settings, the project's inline ignores and
    /// `baseline` applied.
    pub fn suppressed(
        &self,
        project: &Project,
        findings: Vec<Finding>,
        baseline: Option<&[(Entry, Loc)]>,
    ) -> Vec<Finding> {
        let ids: Vec<SourceId> = project.loaded.sources.iter().map(|(id, _)| id).collect();
        suppress::apply(project, findings, &self.inputs(&ids, baseline)).findings
    }

    /// The findings the run reports on `project` (samples aside), every kind kept at a
    /// place another speaks for: what the fix loop repairs.
    pub fn reported(&self, project: &Project, baseline: Option<&[(Entry, Loc)]>) -> Vec<Finding> {
        let findings = crate::checks::run_every(project, self.mode);
        self.suppressed(project, findings, baseline)
    }

    /// The fix loop (`--fix`, `--diff`): every proven fix applied in memory, re-loading
    /// through `reload`; only files under the project root unless `global` (`--global`). The baseline is read through `host` beside a copy of the
    /// project's sources (its entries' places are in that copy only).
    pub fn fix(
        &self,
        project: &Project,
        host: &dyn Host,
        reload: &Reload<'_>,
        unsafe_fixes: bool,
        global: bool,
    ) -> Result<crate::fix::Outcome, RunError> {
        let baseline = self.baseline(host, &mut project.loaded.sources.clone())?;
        let findings = |p: &Project| self.reported(p, baseline.as_deref());
        Ok(crate::fix::fix(
            project,
            &findings,
            reload,
            (!global).then_some(self.setup.root.as_path()),
            unsafe_fixes,
        ))
    }

    /// Per finding, the proven fix it has (human output marks it), in any config file (one
    /// outside the project is marked so: `--fix` writes it only with `--global`), and for
    /// the others the repair tried and not offered because it would widen access, with
    /// what it would open (`None` safety: display-only).
    fn marks(
        &self,
        project: &Project,
        findings: &[Finding],
        reload: &Reload<'_>,
    ) -> Vec<Option<Mark>> {
        let mut marks = vec![None; findings.len()];
        let outside = |source: SourceId| match &project.loaded.sources.get(source).origin {
            crate::source::Origin::File(path) => !path.starts_with(&self.setup.root),
            crate::source::Origin::EnvVar(_) => false,
        };
        let proven = crate::fix::proven(project, findings, reload, None);
        for f in &proven {
            for &n in &f.repairs {
                if let Some(m) = marks.get_mut(n) {
                    *m = Some(Mark {
                        safety: Some(f.safety),
                        title: f.title.clone(),
                        outside: outside(f.source),
                    });
                }
            }
        }
        for a in crate::fix::display_only(project, findings, reload, None, &proven) {
            let more = a.widened.saturating_sub(a.widens.len());
            let text = format!(
                "{} (not applied: it would widen access: {}{})",
                a.title,
                a.widens.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
            for &n in &a.repairs {
                if let Some(m @ None) = marks.get_mut(n) {
                    *m = Some(Mark {
                        safety: None,
                        title: text.clone(),
                        outside: false,
                    });
                }
            }
        }
        marks
    }

    /// Per finding, the changes its help proposes that prove on `project`
    /// ([`crate::fix::suggest`]): each re-loaded through `reload` and re-checked as this
    /// run checks (settings and inline ignores; no baseline, samples aside).
    pub fn suggestions(
        &self,
        project: &Project,
        config: &[SourceId],
        findings: &[Finding],
        reload: &Reload<'_>,
    ) -> Vec<Vec<crate::fix::suggest::Suggestion>> {
        use crate::fix::suggest;
        let proposals = suggest::proposals(project, findings);
        if proposals.is_empty() {
            return vec![Vec::new(); findings.len()];
        }
        let check = |p: &Project| {
            let found = crate::checks::run_as(p, self.mode);
            suppress::apply(p, found, &self.inputs(config, None)).findings
        };
        suggest::prove(project, findings, proposals, reload, &check)
    }

    fn inputs<'i>(
        &'i self,
        config: &'i [SourceId],
        baseline: Option<&'i [(Entry, Loc)]>,
    ) -> suppress::Inputs<'i> {
        suppress::Inputs {
            settings: &self.setup.settings,
            inline: if self.no_ignore { &[] } else { config },
            baseline,
            root: &self.setup.root,
        }
    }
}

/// The findings an editor shows for `project` (interactive, inline ignores counted, no
/// baseline): the checks reusing `engines`, then the settings found from `cwd` through
/// `host` and the inline ignores; the settings refusal when they cannot be read (the
/// server shows it at its place).
pub fn for_editor(
    project: &Project,
    host: &dyn Host,
    cwd: &Path,
    engines: &Engines,
) -> Result<Vec<Finding>, SetupError> {
    let findings = crate::checks::run_reusing(project, RunMode::Interactive, engines);
    let setup = Setup::find(host, cwd, None, false, false)?;
    Ok(Audit {
        setup: &setup,
        mode: RunMode::Interactive,
        no_ignore: false,
        baseline: None,
    }
    .suppressed(project, findings, None))
}
