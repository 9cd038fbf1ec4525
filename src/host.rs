//! The real machine: the one [`Host`] that reads files and the environment. Only the CLI
//! layer constructs it; everything below sees the trait.

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
