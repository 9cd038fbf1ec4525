//! OpenCode version profiles: the few switches in which the releases from 1.14.34 to 1.18.34
//! differ, over one engine.
//!
//! Comparing the releases on generated config trees and in their bundled JavaScript, the
//! engine (wildcard matching, last-match evaluation, `mergeDeep`, load order, both `tools`
//! translations, agent assembly, the bash arity table and splitting) is the same in all of
//! them. What differs is listed in [`Switches`]; each switch was verified on the binaries
//! named in its doc (`npm install opencode-linux-x64@VERSION`, `opencode agent list --pure`
//! and `debug config --pure` in an isolated HOME and git repository). A profile is the run
//! of releases that share every switch; `--opencode-version` picks one.
//!
//! Not modelled (they change no ruleset, only the input a tool asks with): the read tool
//! asks with the absolute path up to 1.14.41 (worktree-relative from 1.14.48), and MCP
//! resource tools are checked as `read` from 1.17.11. `explain` and `map` decide inputs in
//! the 1.18.34 form for every profile.

use std::fmt;

/// A release number `MAJOR.MINOR.PATCH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `1.18.34` (an optional leading `v` is accepted); `None` for anything else.
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim();
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut it = s.split('.').map(|p| {
            if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                p.parse::<u32>().ok()
            }
        });
        let v = Version(it.next()??, it.next()??, it.next()??);
        it.next().is_none().then_some(v)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The release permaudit models by default: the newest one verified.
pub const DEFAULT: Version = Version(1, 18, 34);
/// The oldest release with a profile (`--pure` exists from it on).
pub const OLDEST: Version = Version(1, 14, 34);

/// Every `opencode-linux-x64` release from [`OLDEST`] to [`DEFAULT`] on the npm registry:
/// a version outside this list gets the nearest older profile and a note.
pub const RELEASES: &[Version] = &[
    Version(1, 14, 34),
    Version(1, 14, 41),
    Version(1, 14, 48),
    Version(1, 15, 0),
    Version(1, 15, 3),
    Version(1, 15, 4),
    Version(1, 15, 13),
    Version(1, 17, 0),
    Version(1, 17, 9),
    Version(1, 17, 11),
    Version(1, 17, 18),
    Version(1, 17, 19),
    Version(1, 18, 3),
    Version(1, 18, 4),
    Version(1, 18, 5),
    Version(1, 18, 6),
    Version(1, 18, 7),
    Version(1, 18, 8),
    Version(1, 18, 10),
    Version(1, 18, 11),
    Version(1, 18, 12),
    Version(1, 18, 13),
    Version(1, 18, 14),
    Version(1, 18, 15),
    Version(1, 18, 16),
    Version(1, 18, 17),
    Version(1, 18, 18),
    Version(1, 18, 19),
    Version(1, 18, 20),
    Version(1, 18, 21),
    Version(1, 18, 22),
    Version(1, 18, 23),
    Version(1, 18, 24),
    Version(1, 18, 25),
    Version(1, 18, 26),
    Version(1, 18, 27),
    Version(1, 18, 28),
    Version(1, 18, 29),
    Version(1, 18, 30),
    Version(1, 18, 31),
    Version(1, 18, 32),
    Version(1, 18, 33),
    Version(1, 18, 34),
];

/// The switches in which releases differ. Each doc names the first release with the newer
/// behaviour and the releases it was verified on (the one before and the one from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switches {
    /// `agent.NAME.permission: "ask"` (and frontmatter `permission: allow`): the string
    /// form is accepted for an agent from 1.17.11 (1.17.9 refuses it: `Expected
    /// PermissionActionConfig`). The top-level string form is accepted by every release.
    pub agent_permission_string: bool,
    /// plan's built-in `task general deny`: from 1.17.9 (absent in 1.17.0).
    pub plan_denies_task_general: bool,
    /// `repo_clone *` and `repo_overview *` deny among every agent's defaults (after
    /// `plan_exit`): 1.14.48 to 1.15.13 only (absent in 1.14.41 and 1.17.0).
    pub repo_tools_denied: bool,
    /// Up to 1.18.15 a top-level key outside the release's schema refuses the config
    /// (`Unrecognized key`): `Some(release)`, whose keys [`known_top_level_key`] tells.
    /// From 1.18.16 unknown keys are ignored: `None`.
    pub unknown_keys_refused_as_of: Option<Version>,
    /// From 1.18.24 (`ConfigV2Compat.lower`): V2 `agents` is lowered to `agent`, a V2
    /// `skills` array is split into paths and URLs, and a `permissions` key at the top
    /// level or in an `agent`/`agents`/`mode` entry refuses the config. Before it, those
    /// keys are unknown (refused up to 1.18.15, ignored 1.18.16–1.18.23; `agent.NAME.
    /// permissions` becomes an agent option, ignored) and a `skills` array is refused.
    pub v2_compat: bool,
    /// An `OPENCODE_PERMISSION` that is not valid JSON makes OpenCode exit up to 1.15.4;
    /// from 1.15.13 it is skipped with a log warning.
    pub invalid_env_permission_exits: bool,
}

/// Top-level keys of the V1 config schema, each with the first release that knows it (read
/// from the bundles of 1.14.34, 1.14.48, 1.17.0, 1.17.9, 1.18.3 and 1.18.15, and checked
/// with `Unrecognized key` refusals on every profile's releases). `theme`, `keybinds` and
/// `tui` are not in the schema: every release strips them before validating (TUI migration).
const TOP_LEVEL_KEYS: &[(&str, Version)] = &[
    ("$schema", OLDEST),
    ("shell", OLDEST),
    ("logLevel", OLDEST),
    ("server", OLDEST),
    ("command", OLDEST),
    ("skills", OLDEST),
    ("watcher", OLDEST),
    ("snapshot", OLDEST),
    ("plugin", OLDEST),
    ("share", OLDEST),
    ("autoshare", OLDEST),
    ("autoupdate", OLDEST),
    ("disabled_providers", OLDEST),
    ("enabled_providers", OLDEST),
    ("model", OLDEST),
    ("small_model", OLDEST),
    ("default_agent", OLDEST),
    ("username", OLDEST),
    ("mode", OLDEST),
    ("agent", OLDEST),
    ("provider", OLDEST),
    ("mcp", OLDEST),
    ("formatter", OLDEST),
    ("lsp", OLDEST),
    ("instructions", OLDEST),
    ("layout", OLDEST),
    ("permission", OLDEST),
    ("tools", OLDEST),
    ("enterprise", OLDEST),
    ("tool_output", OLDEST),
    ("compaction", OLDEST),
    ("experimental", OLDEST),
    ("theme", OLDEST),
    ("keybinds", OLDEST),
    ("tui", OLDEST),
    ("reference", Version(1, 14, 48)),
    ("attachment", Version(1, 14, 48)),
    ("references", Version(1, 17, 9)),
    ("subagent_depth", Version(1, 18, 3)),
];

/// Whether a release from `as_of` on knows top-level key `k`.
pub fn known_top_level_key(k: &str, as_of: Version) -> bool {
    TOP_LEVEL_KEYS
        .iter()
        .any(|(key, since)| *key == k && *since <= as_of)
}

impl Switches {
    /// The switches of release `v` (each threshold as documented on the field).
    pub const fn of(v: Version) -> Switches {
        const fn at_least(v: Version, t: Version) -> bool {
            v.0 > t.0 || (v.0 == t.0 && (v.1 > t.1 || (v.1 == t.1 && v.2 >= t.2)))
        }
        Switches {
            agent_permission_string: at_least(v, Version(1, 17, 11)),
            plan_denies_task_general: at_least(v, Version(1, 17, 9)),
            repo_tools_denied: at_least(v, Version(1, 14, 48)) && !at_least(v, Version(1, 17, 0)),
            unknown_keys_refused_as_of: if at_least(v, Version(1, 18, 16)) {
                None
            } else {
                Some(v)
            },
            v2_compat: at_least(v, Version(1, 18, 24)),
            invalid_env_permission_exits: !at_least(v, Version(1, 15, 13)),
        }
    }
}

/// The profiles, oldest first: the first and the last release of each run of releases that
/// share every switch (a profile starts wherever a switch or a known key changes).
const PROFILES: &[(Version, Version)] = &[
    (Version(1, 14, 34), Version(1, 14, 41)),
    (Version(1, 14, 48), Version(1, 15, 4)),
    (Version(1, 15, 13), Version(1, 15, 13)),
    (Version(1, 17, 0), Version(1, 17, 0)),
    (Version(1, 17, 9), Version(1, 17, 9)),
    (Version(1, 17, 11), Version(1, 17, 19)),
    (Version(1, 18, 3), Version(1, 18, 15)),
    (Version(1, 18, 16), Version(1, 18, 23)),
    (Version(1, 18, 24), Version(1, 18, 34)),
];

/// The profile chosen for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The version asked for (`--opencode-version`).
    pub requested: Version,
    /// The first and last release of the profile used.
    pub first: Version,
    pub last: Version,
    pub switches: Switches,
    /// Set when `requested` is not a release permaudit knows: what was used instead.
    pub note: Option<String>,
}

impl Default for Profile {
    fn default() -> Profile {
        match Profile::for_version(DEFAULT) {
            Ok(p) => p,
            // Unreachable: DEFAULT has a profile (unit test `default_is_the_newest`).
            Err(_) => Profile {
                requested: DEFAULT,
                first: DEFAULT,
                last: DEFAULT,
                switches: Switches::of(DEFAULT),
                note: None,
            },
        }
    }
}

impl Profile {
    /// The profile of `v`: the one whose run holds it, else the nearest older one (with a
    /// note). Versions older than [`OLDEST`] are refused.
    pub fn for_version(v: Version) -> Result<Profile, String> {
        if v < OLDEST {
            return Err(format!(
                "OpenCode {v} is older than {OLDEST}, the oldest release permaudit has a profile for (its config handling was not verified); use --opencode-version {OLDEST} or newer"
            ));
        }
        let Some(&(first, last)) = PROFILES.iter().rev().find(|(f, _)| *f <= v) else {
            return Err(format!("no profile for OpenCode {v}"));
        };
        let note = if RELEASES.contains(&v) {
            None
        } else if v > DEFAULT {
            Some(format!(
                "OpenCode {v} is newer than {DEFAULT}, the newest release permaudit verified: auditing with the profile of {first}–{last}"
            ))
        } else {
            Some(format!(
                "OpenCode {v} is not a release permaudit knows: auditing with the profile of the nearest older one, {first}–{last}"
            ))
        };
        Ok(Profile {
            requested: v,
            first,
            last,
            switches: Switches::of(first),
            note,
        })
    }

    /// Parse `--opencode-version`'s text and pick the profile.
    pub fn parse(s: &str) -> Result<Profile, String> {
        let v = Version::parse(s).ok_or_else(|| {
            format!("--opencode-version {s:?}: expected a release number such as {DEFAULT}")
        })?;
        Profile::for_version(v)
    }

    /// The profile's name: its releases, `1.18.24-1.18.34`.
    pub fn name(&self) -> String {
        if self.first == self.last {
            self.first.to_string()
        } else {
            format!("{}-{}", self.first, self.last)
        }
    }

    /// The representative release of each profile (its last verified one), oldest first.
    pub fn representatives() -> Vec<Version> {
        PROFILES.iter().map(|(_, last)| *last).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_the_newest() {
        let p = Profile::default();
        assert_eq!(p.requested, DEFAULT);
        assert_eq!(p.name(), "1.18.24-1.18.34");
        assert!(p.note.is_none());
        assert!(p.switches.v2_compat);
    }

    #[test]
    fn profiles_cover_every_release_in_order() {
        for w in PROFILES.windows(2) {
            assert!(w[0].1 < w[1].0, "{:?}", (w[0].0, w[1].0));
        }
        for r in RELEASES {
            let p = Profile::for_version(*r).unwrap();
            assert!(p.note.is_none(), "{r}");
            assert!(p.first <= *r && *r <= p.last, "{r}");
            // Every release of a profile has the profile's switches and keys.
            assert_eq!(
                Switches::of(*r).unknown_keys_refused_as_of.is_some(),
                p.switches.unknown_keys_refused_as_of.is_some()
            );
            assert_eq!(
                Switches {
                    unknown_keys_refused_as_of: None,
                    ..Switches::of(*r)
                },
                Switches {
                    unknown_keys_refused_as_of: None,
                    ..p.switches
                },
                "{r}"
            );
            for (k, _) in TOP_LEVEL_KEYS {
                assert_eq!(
                    known_top_level_key(k, *r),
                    known_top_level_key(k, p.first),
                    "{r} {k}"
                );
            }
        }
        assert!(RELEASES.contains(&DEFAULT) && RELEASES.contains(&OLDEST));
    }

    #[test]
    fn unknown_versions_use_the_nearest_older_profile() {
        let p = Profile::parse("1.16.2").unwrap();
        assert_eq!(p.first, Version(1, 15, 13));
        assert!(p.note.unwrap().contains("nearest older"));
        let p = Profile::parse("v1.19.0").unwrap();
        assert_eq!(p.first, Version(1, 18, 24));
        assert!(p.note.unwrap().contains("newer than 1.18.34"));
        assert!(
            Profile::parse("1.14.33")
                .unwrap_err()
                .contains("older than 1.14.34")
        );
        assert!(Profile::parse("1.0.0").is_err());
        for bad in [
            "",
            "1.18",
            "1.18.x",
            "1.18.34.1",
            "1..3",
            "-1.2.3",
            "1.2.99999999999",
        ] {
            assert!(Profile::parse(bad).is_err(), "{bad}");
        }
    }
}
