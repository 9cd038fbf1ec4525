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
        let f = std::fs::File::open(path).map_err(err)?;
        let mut buf = Vec::new();
        // Read one byte past the limit to tell "at the limit" from "over it"; endless devices
        // such as /dev/zero stop here too.
        f.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf).map_err(err)?;
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
