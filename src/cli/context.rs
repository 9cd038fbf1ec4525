//! What every command that reads a project shares ([`Context`]: the start directory,
//! platform, release and output styles; how it loads the project and prints what loading
//! said) and the `--agent` selection.

use super::{Cli, EXIT_REFUSED, Format, PlatformArg, style_for};
use crate::discover::Host;
use crate::glob::Platform;
use crate::host::RealHost;
use crate::profile::Profile;
use crate::project::{Loader, Names, Project};
use crate::report::{self, Style};
use std::io::IsTerminal;
use std::path::PathBuf;

/// What every command that reads a project shares: the start directory, the platform and
/// release audited, the styles of both streams.
pub(super) struct Context {
    pub(super) cwd: PathBuf,
    pub(super) platform: Platform,
    pub(super) opencode_version: String,
    pub(super) out_style: Style,
    pub(super) err_style: Style,
}

impl Context {
    pub(super) fn new(cli: &Cli) -> Result<Context, i32> {
        let cwd = match &cli.dir {
            Some(d) => std::path::absolute(d).map_err(|e| {
                eprintln!("error: -C {}: {e}", d.display());
                EXIT_REFUSED
            })?,
            None => std::env::current_dir().map_err(|e| {
                eprintln!("error: cannot read the current directory: {e}");
                EXIT_REFUSED
            })?,
        };
        if !cwd.is_dir() {
            eprintln!("error: -C {}: not a directory", cwd.display());
            return Err(EXIT_REFUSED);
        }
        Ok(Context {
            cwd,
            platform: match cli.platform {
                PlatformArg::Unix => Platform::Unix,
                PlatformArg::Windows => Platform::Windows,
            },
            opencode_version: cli.opencode_version.clone(),
            out_style: style_for(cli.color, std::io::stdout().is_terminal()),
            err_style: style_for(cli.color, std::io::stderr().is_terminal()),
        })
    }

    /// `--opencode-version`'s profile (its note, if any, on stderr).
    pub(super) fn profile(&self) -> Result<Profile, i32> {
        let profile = Profile::parse(&self.opencode_version).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_REFUSED
        })?;
        if let Some(note) = &profile.note {
            eprintln!("note: {}", crate::report::clean(note));
        }
        Ok(profile)
    }

    /// The machine as a command reads it: everything, or with `project_only` only the
    /// project's own files and no `OPENCODE_*` variables (`--project-only`).
    pub(super) fn host(&self, project_only: bool) -> Box<dyn Host + '_> {
        if project_only {
            Box::new(crate::discover::ProjectOnly::new(&RealHost, &self.cwd))
        } else {
            Box::new(RealHost)
        }
    }

    /// The project as OpenCode loads it on this machine, its files named as `check` names
    /// them (see [`Names`]).
    /// `project_only`: only the project's own files, as `check --project-only` reads them.
    pub(super) fn project(&self, format: Format, project_only: bool) -> Result<Project, i32> {
        let paths = crate::discover::Paths::from_host(&RealHost, &self.cwd);
        let names = Names {
            root: Some(paths.project_root()),
            tilde: format == Format::Human,
        };
        let host = self.host(project_only);
        let project = self.load(&self.loader(host.as_ref(), names)?, &mut |_| {})?;
        // Commands that run no checks still say what a check would report about the
        // files they read, at the level `check` and `permaudit rule` give it.
        for w in &project.loaded.warnings {
            if let Some(check) = crate::checks::warning_kind(w.code) {
                let level = if w.lost_protection {
                    crate::checks::Level::Error
                } else {
                    check.level
                };
                let pos = project.loaded.sources.position(w.loc);
                eprintln!("{pos}: {level}[{}]: {}", check.id, w.message);
            }
        }
        Ok(project)
    }

    /// How this command loads the project through `host`: from the start directory, on
    /// the platform and release audited (its profile's note, if any, on stderr), its files
    /// named as `names` says.
    pub(super) fn loader<'a>(
        &'a self,
        host: &'a dyn Host,
        names: Names<'a>,
    ) -> Result<Loader<'a>, i32> {
        Ok(Loader {
            host,
            cwd: &self.cwd,
            platform: self.platform,
            profile: self.profile()?,
            names,
        })
    }

    /// Load the project as `loader` says. A refused config is rendered on stderr, then
    /// handed to `refused`; discovery notes and the warnings no finding kind reports go to
    /// stderr too ([`report::error::load_notes`]).
    pub(super) fn load(
        &self,
        loader: &Loader<'_>,
        refused: &mut dyn FnMut(&crate::load::Failure),
    ) -> Result<Project, i32> {
        let project = loader.load().map_err(|f| {
            eprint!("{}", report::error::render(&f, self.err_style));
            refused(&f);
            EXIT_REFUSED
        })?;
        eprint!("{}", report::error::load_notes(&project));
        Ok(project)
    }
}

/// The agents `--agent` names (all without it), or the exit code of an unknown name.
pub(super) fn select_agents<'p>(
    project: &'p Project,
    agent: Option<&str>,
) -> Result<Vec<&'p crate::agents::Agent>, i32> {
    match agent {
        Some(name) => match project.agent(name) {
            Some(a) => Ok(vec![a]),
            None => Err(unknown_agent(project, name)),
        },
        None => Ok(project.agents.iter().collect()),
    }
}

pub(super) fn unknown_agent(p: &Project, name: &str) -> i32 {
    let names: Vec<&str> = p.agents.iter().map(|a| a.name.as_str()).collect();
    eprintln!(
        "error: no agent named `{name}` (agents: {})",
        names.join(", ")
    );
    EXIT_REFUSED
}
