//! A loaded project: every agent's final ruleset, ready to query.

use crate::agents::{self, Agent};
use crate::discover::Host;
use crate::glob::Platform;
use crate::load::{self, Failure, Loaded};
use crate::profile::Profile;
use std::path::Path;

/// Everything permaudit knows about one OpenCode start directory.
#[derive(Debug, Clone)]
pub struct Project {
    pub loaded: Loaded,
    pub agents: Vec<Agent>,
    pub platform: Platform,
    /// The OpenCode release audited (`--opencode-version`).
    pub profile: Profile,
}

impl Project {
    /// Load what OpenCode 1.18.34 would load when started in `cwd`.
    pub fn load(host: &dyn Host, cwd: &Path, platform: Platform) -> Result<Project, Box<Failure>> {
        Project::load_as(host, cwd, platform, Profile::default())
    }

    /// Load what the release of `profile` would load when started in `cwd`.
    pub fn load_as(
        host: &dyn Host,
        cwd: &Path,
        platform: Platform,
        profile: Profile,
    ) -> Result<Project, Box<Failure>> {
        let loaded = load::load_as(host, cwd, &profile)?;
        let mut agents = agents::build_agents(
            &loaded.merged,
            loaded.paths(),
            &loaded.whitelist_dirs,
            &profile.switches,
        );
        sort_like_agent_list(&mut agents);
        Ok(Project {
            loaded,
            agents,
            platform,
            profile,
        })
    }

    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents
            .iter()
            .find(|a| a.name == name)
            .or_else(|| self.agents.iter().find(|a| a.display == name))
    }

    /// Why OpenCode never asks `permission` in this project, or `None` when a tool may:
    /// [`crate::model::meaning::never_checked`], unless the project defines a tool of that
    /// name (`.opencode/tool/list.ts` makes a tool `list`, asked as `list`).
    pub fn never_asks(&self, permission: &str) -> Option<&'static str> {
        let own = self
            .loaded
            .audit
            .custom_tools
            .binary_search_by(|t| t.as_str().cmp(permission))
            .is_ok();
        crate::model::meaning::never_checked(permission).filter(|_| !own)
    }
}

/// How a front end's output names files: relative to the project root (`root`; `None`
/// for `--absolute-paths`), and (`tilde`, human output) files under HOME elsewhere as
/// `~/…`. Machine formats keep full paths a program can open.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    pub root: Option<&'a Path>,
    pub tilde: bool,
}

/// One project as a front end loads it, and re-loads it with some files' text replaced
/// (a fix being proven): the host, the start directory, the platform and release, how
/// its files are named.
pub struct Loader<'a> {
    pub host: &'a dyn Host,
    pub cwd: &'a Path,
    pub platform: Platform,
    pub profile: Profile,
    pub names: Names<'a>,
}

impl Loader<'_> {
    /// The project, or the refusal, its files named as `names` says.
    pub fn load(&self) -> Result<Project, Box<Failure>> {
        self.load_through(self.host).map_err(|mut f| {
            self.name(&mut f.sources);
            f
        })
    }

    /// [`Loader::load`] with `files`' text replaced; `None` when it does not load.
    pub fn reload(
        &self,
        files: &std::collections::BTreeMap<std::path::PathBuf, String>,
    ) -> Option<Project> {
        self.load_through(&crate::host::Overlay::new(self.host, files))
            .ok()
    }

    fn load_through(&self, host: &dyn Host) -> Result<Project, Box<Failure>> {
        let mut p = Project::load_as(host, self.cwd, self.platform, self.profile.clone())?;
        self.name(&mut p.loaded.sources);
        Ok(p)
    }

    fn name(&self, sources: &mut crate::source::SourceMap) {
        if let Some(root) = self.names.root {
            sources.relative_to(root);
        }
        if self.names.tilde {
            sources.home_as_tilde(&crate::discover::Paths::from_host(self.host, self.cwd).home);
        }
    }
}

/// `opencode agent list` order: built-in agents first, then by name with ICU root collation
/// (`localeCompare`). This approximates that collation: punctuation before digits before
/// letters, letters compared case-insensitively first, lowercase before uppercase on a tie.
pub fn sort_like_agent_list(agents: &mut [Agent]) {
    fn key(s: &str) -> (Vec<(u8, char)>, Vec<bool>) {
        let primary = s
            .chars()
            .map(|c| {
                let class = if c.is_alphabetic() {
                    2
                } else if c.is_numeric() {
                    1
                } else {
                    0
                };
                (class, c.to_lowercase().next().unwrap_or(c))
            })
            .collect();
        let tertiary = s.chars().map(char::is_uppercase).collect();
        (primary, tertiary)
    }
    agents.sort_by(|a, b| {
        b.native
            .cmp(&a.native)
            .then_with(|| key(&a.display).cmp(&key(&b.display)))
    });
}
