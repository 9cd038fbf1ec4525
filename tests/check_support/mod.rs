//! Running the `permaudit` binary on a throw-away project, isolated from the machine: only
//! PATH, HOME (an empty directory unless the test writes a global config), an empty
//! managed-config directory and the variables a test sets are in its environment.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The findings of kind `id` in a `check --format json` report.
pub fn findings_of(v: &serde_json::Value, id: &str) -> Vec<serde_json::Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id)
        .cloned()
        .collect()
}

/// The entries of `tests/real/` (public repositories' configs), sorted: every directory
/// holding a `project/`.
pub fn real_entries() -> Vec<PathBuf> {
    entries_of("tests/real")
}

/// The entries of a set of trees below the crate (`tests/real`, `tests/corpus`,
/// `fixtures/fix`), sorted: every directory holding a `project/`.
pub fn entries_of(set: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(set);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.join("project").is_dir());
    out.sort();
    out
}

/// Where OpenCode starts in an entry, relative to the tree's root: `project/`, or the
/// directory below it its `meta.json` names (`cwd`, the shared corpus's field).
pub fn start_of(entry: &Path) -> String {
    std::fs::read_to_string(entry.join("meta.json"))
        .ok()
        .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
        .and_then(|m| m["cwd"].as_str().map(|c| format!("project/{c}")))
        .unwrap_or_else(|| "project".to_string())
}

/// A temporary tree: `project/` (a git worktree, where OpenCode would start), `home/`
/// and `managed/`.
pub struct Tree {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

/// What one run printed and returned.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

impl Tree {
    pub fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        for d in ["project/.git", "home", "managed"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        Tree {
            dir,
            env: Vec::new(),
        }
    }

    /// A copy of a fixture tree (`project/`, `home/`, optional `env` of `NAME=value` lines).
    pub fn from_fixture(fixture: &Path) -> Tree {
        let mut t = Tree::new();
        copy_tree(fixture, t.root());
        if let Ok(env) = std::fs::read_to_string(fixture.join("env")) {
            for line in env.lines().filter(|l| !l.trim().is_empty()) {
                let (k, v) = line.split_once('=').expect("env lines are NAME=value");
                t.env.push((k.to_string(), v.to_string()));
            }
        }
        t
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn project(&self) -> PathBuf {
        self.root().join("project")
    }

    /// Write a file, relative to the tree's root (`project/opencode.json`, `home/…`).
    pub fn file(self, rel: &str, text: &str) -> Tree {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }

    pub fn var(mut self, k: &str, v: &str) -> Tree {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    /// `permaudit -C project --color never ARGS…`, with `$ROOT` for the tree in the output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_in("project", args)
    }

    /// [`Tree::run`] started in another directory of the tree.
    pub fn run_in(&self, start: &str, args: &[&str]) -> Output {
        self.run_full(start, args, None)
    }

    /// [`Tree::run`] with `stdin` as its standard input (`explain --stdin`).
    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.run_full("project", args, Some(stdin))
    }

    /// [`Tree::run_stdin`] started in another directory of the tree.
    pub fn run_stdin_in(&self, start: &str, args: &[&str], stdin: &[u8]) -> Output {
        self.run_full(start, args, Some(stdin))
    }

    fn run_full(&self, start: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let root = self.root();
        let mut child = Command::new(env!("CARGO_BIN_EXE_permaudit"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", root.join("managed"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .arg("-C")
            .arg(root.join(start))
            .args(["--color", "never"])
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(bytes) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            let bytes = bytes.to_vec();
            // Written from a thread: a large input must not block on a full stdout pipe.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let out = child.wait_with_output().unwrap();
        let r = root.display().to_string();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).replace(&r, "$ROOT"),
            stderr: String::from_utf8_lossy(&out.stderr).replace(&r, "$ROOT"),
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A suggestion's edits (`check --format json`: `suggestions[].edits`, byte ranges of the
/// file's text) applied to `text`.
#[allow(dead_code)]
pub fn apply_suggestion(text: &str, suggestion: &serde_json::Value) -> String {
    let mut edits: Vec<(usize, usize, String)> = suggestion["edits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["start"].as_u64().unwrap_or_default() as usize,
                e["end"].as_u64().unwrap_or_default() as usize,
                e["new_text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (start, end, new) in edits {
        out.replace_range(start..end, &new);
    }
    out
}
