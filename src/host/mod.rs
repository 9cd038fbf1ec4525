//! The real machine: the one [`Host`] that reads files and the environment (and
//! [`write`], the one way permaudit writes). Only the CLI layer constructs it; everything
//! below sees the trait.

pub mod write;

use crate::discover::{Host, ReadError, ReadErrorKind};
use crate::load::MAX_FILE_BYTES;
use std::io::Read;
use std::path::Path;

/// Reads the real filesystem and process environment. Never writes.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealHost;

impl Host for RealHost {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        let err = |e: std::io::Error| ReadError {
            kind: match e.kind() {
                std::io::ErrorKind::NotFound => ReadErrorKind::NotFound,
                std::io::ErrorKind::PermissionDenied => ReadErrorKind::PermissionDenied,
                _ => ReadErrorKind::Other,
            },
            message: e.to_string(),
        };
        if path.is_dir() {
            return Err(ReadError {
                kind: ReadErrorKind::Other,
                message: "is a directory, not a file".to_string(),
            });
        }
        // Opening a FIFO blocks until a writer comes (OpenCode would wait forever);
        // a socket cannot be opened at all.
        #[cfg(unix)]
        if let Ok(m) = std::fs::metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            let t = m.file_type();
            if t.is_fifo() || t.is_socket() {
                return Err(ReadError {
                    kind: ReadErrorKind::Other,
                    message: format!(
                        "is a {}, not a file: permaudit does not read it (OpenCode would wait on it)",
                        if t.is_fifo() { "FIFO" } else { "socket" }
                    ),
                });
            }
        }
        let f = std::fs::File::open(path).map_err(err)?;
        let mut buf = Vec::new();
        // Read one byte past the limit to tell "at the limit" from "over it"; endless devices
        // such as /dev/zero stop here too.
        f.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(err)?;
        if buf.len() as u64 > MAX_FILE_BYTES {
            return Err(ReadError {
                kind: ReadErrorKind::Other,
                message: format!(
                    "larger than permaudit's limit of {} MiB",
                    MAX_FILE_BYTES / (1024 * 1024)
                ),
            });
        }
        Ok(buf)
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn list_dir(&self, path: &Path) -> Vec<(String, bool)> {
        let Ok(rd) = std::fs::read_dir(path) else {
            return Vec::new();
        };
        let mut out: Vec<(String, bool)> = rd
            .filter_map(Result::ok)
            .map(|e| {
                let is_dir = e.path().is_dir();
                (e.file_name().to_string_lossy().into_owned(), is_dir)
            })
            .collect();
        out.sort();
        out
    }
}

/// Write `bytes` to `path` (a new file, or one replaced whole) as [`write::replace_all`]
/// does: through a temporary file renamed over it, keeping a link, the mode and the
/// owner, refusing a read-only file. `check --write-baseline`'s write.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), write::WriteError> {
    write::replace_all(&[write::Planned {
        path: path.to_path_buf(),
        expect: None,
        bytes: bytes.to_vec(),
    }])
    .map(|_| ())
}

/// An in-memory machine for tests and fuzzing: files, directories and environment variables.
#[derive(Debug, Default, Clone)]
pub struct MemHost {
    pub files: std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>,
    pub env: std::collections::BTreeMap<String, String>,
}

impl MemHost {
    pub fn new() -> MemHost {
        MemHost::default()
    }

    /// Add a file (its parent directories exist implicitly).
    pub fn file(mut self, path: &str, text: &str) -> MemHost {
        self.files.insert(path.into(), text.as_bytes().to_vec());
        self
    }

    pub fn var(mut self, name: &str, value: &str) -> MemHost {
        self.env.insert(name.to_string(), value.to_string());
        self
    }

    /// Mark a directory as existing (e.g. `.git`).
    pub fn dir(self, path: &str) -> MemHost {
        self.file(&format!("{}/.keep", path.trim_end_matches('/')), "")
    }
}

impl Host for MemHost {
    fn var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        if self.is_dir(path) {
            return Err(ReadError {
                kind: ReadErrorKind::Other,
                message: "is a directory, not a file".into(),
            });
        }
        self.files.get(path).cloned().ok_or(ReadError {
            kind: ReadErrorKind::NotFound,
            message: "not found".into(),
        })
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.files.keys().any(|f| f != path && f.starts_with(path))
    }

    fn list_dir(&self, path: &Path) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = Vec::new();
        for f in self.files.keys() {
            if let Ok(rest) = f.strip_prefix(path)
                && let Some(first) = rest.components().next()
            {
                let name = first.as_os_str().to_string_lossy().into_owned();
                if name.is_empty() {
                    continue;
                }
                let is_dir = rest.components().count() > 1;
                if !out.iter().any(|(n, _)| *n == name) {
                    out.push((name, is_dir));
                }
            }
        }
        out.retain(|(n, _)| n != ".keep");
        out.sort();
        out
    }
}

/// A machine with some files' text replaced: `check --fix` re-loads the project through it
/// to prove an edit before anything is written. Only files that exist on the machine
/// below are replaced (a fix never creates a file).
pub struct Overlay<'a> {
    inner: &'a dyn Host,
    files: &'a std::collections::BTreeMap<std::path::PathBuf, String>,
}

impl<'a> Overlay<'a> {
    pub fn new(
        inner: &'a dyn Host,
        files: &'a std::collections::BTreeMap<std::path::PathBuf, String>,
    ) -> Overlay<'a> {
        Overlay { inner, files }
    }
}

impl Host for Overlay<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.inner.var(name)
    }

    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        match self.files.get(path) {
            Some(text) if self.inner.is_file(path) => Ok(text.as_bytes().to_vec()),
            _ => self.inner.read(path),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.inner.is_file(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }

    fn list_dir(&self, path: &Path) -> Vec<(String, bool)> {
        self.inner.list_dir(path)
    }
}

/// What a [`RootedHost`] serves under its root.
pub enum Tree {
    /// A real directory standing for the root (the work tree, or `--base-dir`/`--head-dir`).
    Dir(std::path::PathBuf),
    /// A git revision's tree, held as a listing; blobs are fetched on first read.
    Git(GitTree),
}

/// One entry of a git tree listing (`git ls-tree -r -l`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitEntry {
    /// Object id of the blob.
    pub oid: String,
    /// Size in bytes (`None` when git did not say).
    pub size: Option<u64>,
    /// A symbolic link (mode 120000): the blob holds the target.
    pub symlink: bool,
}

impl GitEntry {
    fn new(mode: &str, oid: &str, size: Option<u64>) -> GitEntry {
        GitEntry {
            oid: oid.to_string(),
            size,
            symlink: mode == "120000",
        }
    }
}

/// The records of a `-z` git listing: the fields before the tab, and the path after it.
fn records(listing: &[u8]) -> impl Iterator<Item = (Vec<String>, std::path::PathBuf)> + '_ {
    listing.split(|&b| b == 0).filter_map(|record| {
        let tab = record.iter().position(|&b| b == b'\t')?;
        let fields = String::from_utf8_lossy(&record[..tab])
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let path = String::from_utf8_lossy(&record[tab + 1..]).into_owned();
        Some((fields, std::path::PathBuf::from(path)))
    })
}

/// Reads one blob by object id; the CLI provides it (it runs `git`), so this module runs
/// no process itself.
pub type BlobReader = Box<dyn Fn(&str) -> Result<Vec<u8>, String>>;

/// A git revision's tree: paths relative to the root, and a reader for their blobs.
pub struct GitTree {
    files: std::collections::BTreeMap<std::path::PathBuf, GitEntry>,
    dirs: std::collections::BTreeSet<std::path::PathBuf>,
    read: BlobReader,
    cache: std::cell::RefCell<std::collections::HashMap<String, Vec<u8>>>,
}

impl GitTree {
    /// From `git ls-tree -r -l -z --full-tree REV` output: `MODE TYPE OID SIZE\tPATH\0`.
    /// Entries that are not blobs (submodules) are left out.
    pub fn from_ls_tree(listing: &[u8], read: BlobReader) -> GitTree {
        let mut files = std::collections::BTreeMap::new();
        for (f, path) in records(listing) {
            let [mode, kind, oid, rest @ ..] = &f[..] else {
                continue;
            };
            if kind != "blob" {
                continue;
            }
            let size = rest.first().and_then(|s| s.parse().ok());
            files.insert(path, GitEntry::new(mode, oid, size));
        }
        GitTree::new(files, read)
    }

    /// From `git ls-files --stage -z` output (the index): `MODE OID STAGE\tPATH\0`. Entries
    /// that are not blobs (submodules, mode 160000) are left out.
    ///
    /// # Errors
    ///
    /// The path of an unmerged entry (stage 1 to 3): the index then holds no one version
    /// of that file to commit.
    pub fn from_ls_files(listing: &[u8], read: BlobReader) -> Result<GitTree, String> {
        let mut files = std::collections::BTreeMap::new();
        for (f, path) in records(listing) {
            let [mode, oid, stage, ..] = &f[..] else {
                continue;
            };
            if stage != "0" {
                return Err(path.display().to_string());
            }
            if mode != "160000" {
                files.insert(path, GitEntry::new(mode, oid, None));
            }
        }
        Ok(GitTree::new(files, read))
    }

    pub fn new(
        files: std::collections::BTreeMap<std::path::PathBuf, GitEntry>,
        read: BlobReader,
    ) -> GitTree {
        let mut dirs = std::collections::BTreeSet::new();
        dirs.insert(std::path::PathBuf::new());
        for f in files.keys() {
            let mut p = f.parent();
            while let Some(d) = p {
                if !dirs.insert(d.to_path_buf()) {
                    break;
                }
                p = d.parent();
            }
        }
        GitTree {
            files,
            dirs,
            read,
            cache: Default::default(),
        }
    }

    /// The entry at `rel`, symbolic links inside the tree followed (at most 40, as the
    /// kernel); a link leaving the tree reads as missing.
    fn resolve(&self, rel: &Path) -> Option<(std::path::PathBuf, &GitEntry)> {
        let mut at = rel.to_path_buf();
        for _ in 0..40 {
            let e = self.files.get(&at)?;
            if !e.symlink {
                return Some((at, e));
            }
            let target = String::from_utf8(self.blob(e).ok()?).ok()?;
            let joined = Path::new("/")
                .join(at.parent().unwrap_or(Path::new("")))
                .join(target);
            let norm = crate::discover::normalize(&joined);
            at = norm.strip_prefix("/").ok()?.to_path_buf();
        }
        None
    }

    fn blob(&self, e: &GitEntry) -> Result<Vec<u8>, String> {
        if let Some(b) = self.cache.borrow().get(&e.oid) {
            return Ok(b.clone());
        }
        let b = (self.read)(&e.oid)?;
        self.cache.borrow_mut().insert(e.oid.clone(), b.clone());
        Ok(b)
    }
}

/// One side of a `diff`: the project root's files from a [`Tree`], everything outside the
/// root from another host (the real machine, the same for both sides) or from nothing
/// (`--project-only`, which also hides `OPENCODE_*` variables). The root always holds an
/// (empty) `.git` directory, so both sides find the same worktree.
pub struct RootedHost<'a> {
    root: std::path::PathBuf,
    tree: Tree,
    outside: Option<&'a dyn Host>,
    env: &'a dyn Host,
}

impl<'a> RootedHost<'a> {
    /// `env` answers environment variables; `outside` (if any) every path outside `root`.
    pub fn new(
        root: std::path::PathBuf,
        tree: Tree,
        env: &'a dyn Host,
        outside: Option<&'a dyn Host>,
    ) -> RootedHost<'a> {
        RootedHost {
            root,
            tree,
            outside,
            env,
        }
    }

    fn inside<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.root).ok()
    }

    fn is_git(rel: &Path) -> bool {
        rel.components()
            .next()
            .is_some_and(|c| c.as_os_str() == ".git")
    }

    fn not_found() -> ReadError {
        ReadError {
            kind: ReadErrorKind::NotFound,
            message: "not found".into(),
        }
    }
}

impl Host for RootedHost<'_> {
    fn var(&self, name: &str) -> Option<String> {
        if self.outside.is_none() && name.starts_with("OPENCODE_") {
            return None;
        }
        self.env.var(name)
    }

    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        let Some(rel) = self.inside(path) else {
            return match self.outside {
                Some(h) => h.read(path),
                None => Err(Self::not_found()),
            };
        };
        if Self::is_git(rel) {
            return Err(Self::not_found());
        }
        match &self.tree {
            Tree::Dir(d) => RealHost.read(&d.join(rel)),
            Tree::Git(t) => {
                if t.dirs.contains(rel) {
                    return Err(ReadError {
                        kind: ReadErrorKind::Other,
                        message: "is a directory, not a file".into(),
                    });
                }
                let (_, e) = t.resolve(rel).ok_or_else(Self::not_found)?;
                if e.size.is_some_and(|s| s > MAX_FILE_BYTES) {
                    return Err(ReadError {
                        kind: ReadErrorKind::Other,
                        message: format!(
                            "larger than permaudit's limit of {} MiB",
                            MAX_FILE_BYTES / (1024 * 1024)
                        ),
                    });
                }
                t.blob(e).map_err(|message| ReadError {
                    kind: ReadErrorKind::Other,
                    message,
                })
            }
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        let Some(rel) = self.inside(path) else {
            return self.outside.is_some_and(|h| h.is_file(path));
        };
        if Self::is_git(rel) {
            return false;
        }
        match &self.tree {
            Tree::Dir(d) => d.join(rel).is_file(),
            Tree::Git(t) => t.resolve(rel).is_some(),
        }
    }

    fn is_dir(&self, path: &Path) -> bool {
        let Some(rel) = self.inside(path) else {
            return self.outside.is_some_and(|h| h.is_dir(path));
        };
        if rel == Path::new(".git") {
            return true;
        }
        if Self::is_git(rel) {
            return false;
        }
        match &self.tree {
            Tree::Dir(d) => d.join(rel).is_dir(),
            Tree::Git(t) => t.dirs.contains(rel),
        }
    }

    fn list_dir(&self, path: &Path) -> Vec<(String, bool)> {
        let Some(rel) = self.inside(path) else {
            return self.outside.map(|h| h.list_dir(path)).unwrap_or_default();
        };
        if Self::is_git(rel) {
            return Vec::new();
        }
        let mut out = match &self.tree {
            Tree::Dir(d) => RealHost.list_dir(&d.join(rel)),
            Tree::Git(t) => {
                if !t.dirs.contains(rel) {
                    return Vec::new();
                }
                let mut out: Vec<(String, bool)> = Vec::new();
                let child = |p: &Path| -> Option<String> {
                    let rest = p.strip_prefix(rel).ok()?;
                    let mut c = rest.components();
                    let first = c.next()?;
                    c.next()
                        .is_none()
                        .then(|| first.as_os_str().to_string_lossy().into_owned())
                };
                // Directories: those whose parent is `rel`; files likewise.
                for d in t.dirs.range(rel.to_path_buf()..) {
                    if !d.starts_with(rel) {
                        break;
                    }
                    if let Some(n) = child(d) {
                        out.push((n, true));
                    }
                }
                for (f, _) in t.files.range(rel.to_path_buf()..) {
                    if !f.starts_with(rel) {
                        break;
                    }
                    if let Some(n) = child(f) {
                        out.push((n, false));
                    }
                }
                out.sort();
                out
            }
        };
        if rel.as_os_str().is_empty() {
            out.retain(|(n, _)| n != ".git");
            out.push((".git".to_string(), true));
            out.sort();
        }
        out
    }
}
