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
