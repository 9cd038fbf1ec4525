//! The machine as the editor shows it: every open buffer replaces its file, and a buffer
//! whose file does not exist yet (a new `.opencode/agents/x.md` not saved) is a file too,
//! listed in its directory, so discovery finds it as OpenCode will once it is saved.
//! (`host::Overlay`, which proves fixes, replaces only files that exist.)

use crate::discover::{Host, ReadError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Buffers<'a> {
    inner: &'a dyn Host,
    docs: &'a BTreeMap<PathBuf, String>,
}

impl<'a> Buffers<'a> {
    pub fn new(inner: &'a dyn Host, docs: &'a BTreeMap<PathBuf, String>) -> Buffers<'a> {
        Buffers { inner, docs }
    }

    /// Whether an open buffer lies below `dir` (which then exists, in the editor).
    fn holds(&self, dir: &Path) -> bool {
        self.docs
            .range(dir.to_path_buf()..)
            .next()
            .is_some_and(|(p, _)| p != dir && p.starts_with(dir))
    }
}

impl Host for Buffers<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.inner.var(name)
    }

    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        match self.docs.get(path) {
            // A directory stays a directory (OpenCode fails to read it as a file).
            Some(text) if !self.inner.is_dir(path) => Ok(text.as_bytes().to_vec()),
            _ => self.inner.read(path),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.inner.is_file(path) || (self.docs.contains_key(path) && !self.inner.is_dir(path))
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path) || self.holds(path)
    }

    fn list_dir(&self, path: &Path) -> Vec<(String, bool)> {
        let mut out = self.inner.list_dir(path);
        let before = out.len();
        for doc in self.docs.keys() {
            let Ok(rest) = doc.strip_prefix(path) else {
                continue;
            };
            let mut parts = rest.components();
            let Some(first) = parts.next() else { continue };
            let name = first.as_os_str().to_string_lossy().into_owned();
            let is_dir = parts.next().is_some();
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, is_dir));
            }
        }
        if out.len() != before {
            // Listings are sorted (discovery's order does not depend on the editor).
            out.sort();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Buffers;
    use crate::discover::Host;
    use crate::host::MemHost;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    #[test]
    fn a_new_buffer_is_a_file_in_its_directory() {
        let mut disk = MemHost::default();
        disk.files.insert(
            PathBuf::from("/p/.opencode/agents/a.md"),
            b"---\n---\n".to_vec(),
        );
        let mut docs = BTreeMap::new();
        docs.insert(PathBuf::from("/p/.opencode/agents/new.md"), "x".to_string());
        docs.insert(PathBuf::from("/p/.opencode/modes/m.md"), "y".to_string());
        let host = Buffers::new(&disk, &docs);
        assert!(host.is_file(Path::new("/p/.opencode/agents/new.md")));
        assert!(host.is_dir(Path::new("/p/.opencode/modes")));
        assert!(!host.is_dir(Path::new("/p/.opencode/mode")));
        let names: Vec<String> = host
            .list_dir(Path::new("/p/.opencode/agents"))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["a.md", "new.md"]);
        assert!(
            host.list_dir(Path::new("/p/.opencode"))
                .contains(&("modes".to_string(), true))
        );
        assert_eq!(
            host.read(Path::new("/p/.opencode/agents/new.md")).ok(),
            Some(b"x".to_vec())
        );
    }
}
