//! `permaudit map`: what every agent may do to every file of the repository.
//!
//! The CLI runs `git ls-files -z` (the only process permaudit spawns) and hands the output
//! over as data; here each path, worktree-relative exactly as OpenCode's read and edit tools
//! check it (spec §2.5: the path relative to the worktree root, never `external_directory`
//! inside it), is decided for `read` and `edit` for each agent with the compiled evaluator
//! ([`crate::glob::compiled`]).
//!
//! Scale: agents whose `read` (or `edit`) rules have the same patterns share one automaton
//! and one pass (build, general and the hidden agents usually do); paths arrive sorted, so
//! each one resumes the automaton at the prefix it shares with the previous path
//! ([`PrefixCache`]); the work is split into chunks of paths over threads. The directory
//! tree that the report collapses is built once, with each directory's files as a
//! contiguous range of the sorted list.

use crate::agents::Agent;
use crate::glob::compiled::{MultiGlob, PrefixCache, Want};
use crate::glob::{Platform, Wildcard};
use crate::model::{Effect, Rule};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

/// No rule matched (OpenCode asks).
pub const NO_RULE: u32 = u32::MAX;

/// Paths to decide, sorted by bytes (git's order) and without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSet {
    pub paths: Vec<String>,
    /// Per path: tracked by git (false: untracked, not ignored).
    pub tracked: Vec<bool>,
    /// Paths that were not valid UTF-8 (decoded with U+FFFD; OpenCode sees them the same way
    /// through Node's UTF-8 decoding of directory entries).
    pub lossy: usize,
}

impl FileSet {
    /// From the NUL-separated output of `git ls-files -z` and, optionally, of
    /// `git ls-files -z --others --exclude-standard`.
    pub fn from_git(tracked: &[u8], untracked: Option<&[u8]>) -> FileSet {
        let mut lossy = 0;
        let mut items: Vec<(String, bool)> = Vec::new();
        for (out, is_tracked) in [(Some(tracked), true), (untracked, false)] {
            let Some(out) = out else { continue };
            for raw in out.split(|b| *b == 0).filter(|s| !s.is_empty()) {
                let path = match std::str::from_utf8(raw) {
                    Ok(s) => s.to_string(),
                    Err(_) => {
                        lossy += 1;
                        String::from_utf8_lossy(raw).into_owned()
                    }
                };
                items.push((path, is_tracked));
            }
        }
        if !items.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable: a path listed twice keeps its first (tracked) entry.
            items.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            items.dedup_by(|b, a| a.0 == b.0);
        }
        let (paths, tracked) = items.into_iter().unzip();
        FileSet {
            paths,
            tracked,
            lossy,
        }
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

/// The two permissions a file is decided for.
pub const PERMISSIONS: [&str; 2] = ["read", "edit"];

/// One agent's decisions: for each file, the deciding rule (an index into the agent's
/// rules, or [`NO_RULE`]) for `read` and for `edit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMap {
    /// Index into the agents the map was made for.
    pub agent: usize,
    pub read: Vec<u32>,
    pub edit: Vec<u32>,
}

impl AgentMap {
    pub fn decisions(&self, permission: usize) -> &[u32] {
        if permission == 0 {
            &self.read
        } else {
            &self.edit
        }
    }
}

/// The effect of a deciding rule.
pub fn effect(rules: &[Rule], rule: u32) -> Effect {
    match rules.get(rule as usize) {
        Some(r) => r.action.effective(),
        None => Effect::Ask,
    }
}

/// Decide every file for `read` and `edit` for each agent. `progress` is called with the
/// number of decisions made since its last call (from worker threads).
pub fn decide(
    agents: &[&Agent],
    files: &FileSet,
    platform: Platform,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<AgentMap> {
    // The rules of each (agent, permission) and the automaton they share with others.
    struct Slot {
        group: usize,
        index: Vec<usize>,
    }
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut by_key: HashMap<Vec<&str>, usize> = HashMap::new();
    let mut slots: Vec<[Slot; 2]> = Vec::new();
    for a in agents {
        let mut pair = Vec::with_capacity(2);
        for perm in PERMISSIONS {
            let units = crate::glob::wildcard::subject_units(perm);
            let index: Vec<usize> = a
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| Wildcard::compile(&r.permission).is_match_units(&units, platform))
                .map(|(i, _)| i)
                .collect();
            let key: Vec<&str> = index.iter().map(|&i| a.rules[i].pattern.as_str()).collect();
            let group = match by_key.get(&key) {
                Some(&g) => g,
                None => {
                    groups.push(key.clone());
                    by_key.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            };
            pair.push(Slot { group, index });
        }
        let (Some(edit), Some(read)) = (pair.pop(), pair.pop()) else {
            continue;
        };
        slots.push([read, edit]);
    }

    // Work: (group, chunk of files). Each worker keeps one automaton per group.
    const CHUNK: usize = 1 << 14;
    let n = files.len();
    let mut results: Vec<Vec<u32>> = groups.iter().map(|_| vec![NO_RULE; n]).collect();
    let mut tasks: Vec<(usize, usize, &mut [u32])> = Vec::new();
    for (g, out) in results.iter_mut().enumerate() {
        for (c, chunk) in out.chunks_mut(CHUNK).enumerate() {
            tasks.push((g, c * CHUNK, chunk));
        }
    }
    // Interleave groups so threads start on different automata.
    tasks.sort_by_key(|(g, start, _)| (*start, *g));
    tasks.reverse();
    let queue = Mutex::new(tasks);
    let compiled: Vec<MultiGlob> = groups
        .iter()
        .map(|pats| MultiGlob::new(pats, platform, Want::Last))
        .collect();
    let worker = || {
        let mut mine: HashMap<usize, (MultiGlob, PrefixCache)> = HashMap::new();
        loop {
            let task = match queue.lock() {
                Ok(mut q) => q.pop(),
                Err(_) => None,
            };
            let Some((g, start, out)) = task else { break };
            let (glob, cache) = mine
                .entry(g)
                .or_insert_with(|| (compiled[g].clone(), PrefixCache::new()));
            for (k, slot) in out.iter_mut().enumerate() {
                let path = &files.paths[start + k];
                *slot = glob
                    .last_match_resume(path, cache)
                    .map_or(NO_RULE, |i| i as u32);
            }
            progress(out.len() as u64);
        }
    };
    let threads = threads.clamp(1, 64);
    if threads == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(worker);
            }
        });
    }

    slots
        .iter()
        .enumerate()
        .map(|(agent, [read, edit])| {
            let global = |slot: &Slot| -> Vec<u32> {
                results[slot.group]
                    .iter()
                    .map(|&l| match slot.index.get(l as usize) {
                        Some(&i) if l != NO_RULE => i as u32,
                        _ => NO_RULE,
                    })
                    .collect()
            };
            AgentMap {
                agent,
                read: global(read),
                edit: global(edit),
            }
        })
        .collect()
}

/// Total decisions [`decide`] makes (for a progress bar).
pub fn work(agents: usize, files: usize) -> u64 {
    (agents * files * PERMISSIONS.len()) as u64
}

/// A directory of the map: its files are `range` of the sorted list (subdirectories
/// included); `files` are the ones directly in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dir {
    /// The path with a trailing `/` (`""` for the root).
    pub path: String,
    pub depth: usize,
    pub range: Range<usize>,
    pub dirs: Vec<usize>,
    pub files: Vec<usize>,
}

/// The directory tree of a [`FileSet`]; `dirs[0]` is the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub dirs: Vec<Dir>,
}

impl Tree {
    pub fn new(files: &FileSet) -> Tree {
        let mut dirs = vec![Dir {
            path: String::new(),
            depth: 0,
            range: 0..files.len(),
            dirs: Vec::new(),
            files: Vec::new(),
        }];
        // The open directories, root first; each is a prefix of the current path.
        let mut stack: Vec<usize> = vec![0];
        for (i, p) in files.paths.iter().enumerate() {
            let dir_len = p.rfind('/').map_or(0, |k| k + 1);
            let dir = &p[..dir_len];
            // Close the open directories that are not prefixes of this path.
            while stack.len() > 1 {
                let top = stack[stack.len() - 1];
                if dir.starts_with(dirs[top].path.as_str()) {
                    break;
                }
                dirs[top].range.end = i;
                stack.pop();
            }
            // Open the missing ones.
            loop {
                let top = stack[stack.len() - 1];
                let have = dirs[top].path.len();
                if have >= dir.len() {
                    break;
                }
                let next = dir[have..].find('/').map_or(dir.len(), |k| have + k + 1);
                let id = dirs.len();
                dirs.push(Dir {
                    path: dir[..next].to_string(),
                    depth: stack.len(),
                    range: i..files.len(),
                    dirs: Vec::new(),
                    files: Vec::new(),
                });
                dirs[top].dirs.push(id);
                stack.push(id);
            }
            let top = stack[stack.len() - 1];
            dirs[top].files.push(i);
        }
        while let Some(top) = stack.pop() {
            if top != 0 {
                dirs[top].range.end = files.len();
            }
        }
        Tree { dirs }
    }
}

/// Is this path secret-shaped: `.env` files (not the `.example`/`.sample`/`.template`
/// ones), private keys and certificates, credential and token stores?
pub fn is_secret_shaped(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let env_like = lower == ".env"
        || lower.ends_with(".env")
        || lower.starts_with(".env.")
        || lower.contains(".env.");
    if env_like {
        return ![".example", ".sample", ".template", ".dist", ".defaults"]
            .iter()
            .any(|s| lower.ends_with(s));
    }
    const NAMES: [&str; 14] = [
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        "credentials",
        "credentials.json",
        ".htpasswd",
        ".git-credentials",
        "secrets.json",
        "secrets.yaml",
    ];
    const EXTS: [&str; 10] = [
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".jks",
        ".keystore",
        ".asc",
        ".ppk",
        ".kdbx",
        ".secret",
    ];
    NAMES.contains(&lower.as_str())
        || EXTS.iter().any(|e| lower.ends_with(e))
        || lower.starts_with("secrets.")
        || (lower.starts_with("service-account") && lower.ends_with(".json"))
        || path.ends_with(".aws/credentials")
        || path.ends_with(".docker/config.json")
        || path.ends_with(".kube/config")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> FileSet {
        let raw: Vec<u8> = paths.iter().flat_map(|p| p.bytes().chain([0])).collect();
        FileSet::from_git(&raw, None)
    }

    #[test]
    fn tree_ranges_and_children() {
        let f = set(&[
            "a/b/c.txt",
            "a/b/d.txt",
            "a/e.txt",
            "a.txt",
            "z/y/x/w",
            "top",
        ]);
        assert_eq!(
            f.paths,
            [
                "a.txt",
                "a/b/c.txt",
                "a/b/d.txt",
                "a/e.txt",
                "top",
                "z/y/x/w"
            ]
        );
        let t = Tree::new(&f);
        let names: Vec<(&str, Range<usize>, usize)> = t
            .dirs
            .iter()
            .map(|d| (d.path.as_str(), d.range.clone(), d.depth))
            .collect();
        assert_eq!(
            names,
            [
                ("", 0..6, 0),
                ("a/", 1..4, 1),
                ("a/b/", 1..3, 2),
                ("z/", 5..6, 1),
                ("z/y/", 5..6, 2),
                ("z/y/x/", 5..6, 3)
            ]
        );
        assert_eq!(t.dirs[0].files, [0, 4]);
        assert_eq!(t.dirs[0].dirs, [1, 3]);
        assert_eq!(t.dirs[1].files, [3]);
    }

    #[test]
    fn git_output_decoding() {
        let f = FileSet::from_git(b"b\0a\0", Some(b"c\0\xff\0"));
        assert_eq!(f.paths, ["a", "b", "c", "\u{fffd}"]);
        assert_eq!(f.tracked, [true, true, false, false]);
        assert_eq!(f.lossy, 1);
    }

    #[test]
    fn secret_shapes() {
        for s in [
            ".env",
            "app/.env.local",
            "x/prod.env",
            "k/server.key",
            "id_rsa",
            "a/.npmrc",
            "c/credentials.json",
            ".aws/credentials",
            "cert.pem",
        ] {
            assert!(is_secret_shaped(s), "{s}");
        }
        for s in [
            ".env.example",
            "src/env.ts",
            "README.md",
            "keys.ts",
            "a/.env.sample",
        ] {
            assert!(!is_secret_shaped(s), "{s}");
        }
    }
}
