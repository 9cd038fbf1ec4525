//! The one way permaudit writes files (`check --fix`, `check --write-baseline`): every file
//! of a change replaced together or none, each as the user keeps it.
//!
//! - **All or nothing.** Every file is prepared first: its link resolved, its text checked
//!   against what was read, its mode and writability checked, the new text written and
//!   synced to a temporary file beside it. Only when every file is prepared are they
//!   replaced; if a replacement still fails, the files already replaced get their old
//!   bytes back and the error says so.
//! - **A link is written through, never replaced.** A symlinked config (stow, chezmoi,
//!   home-manager, an `install.sh` link) is changed at its target, so the repository the
//!   link points into sees the change; the link stays a link.
//! - **Mode and owner kept.** The new file gets the old one's permission bits (a 0600
//!   config holding an `apiKey` stays 0600) and, where permitted, its owner and group.
//! - **Read-only is a refusal.** A file with no write bit (0444) is not overwritten, even
//!   by root; nor is one the system refuses to open for writing (an immutable file).
//! - **Hard links kept.** A file with more than one link is rewritten in place (after the
//!   new text was written once to a temporary file, proving the space is there), so every
//!   name still shows the same file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// One file to write: its path as the project names it, what it must still hold (`None`:
/// whatever it holds, or a new file), and its new bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub path: PathBuf,
    pub expect: Option<Vec<u8>>,
    pub bytes: Vec<u8>,
}

/// One file written: the path asked for and the file actually changed (its link's target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub path: PathBuf,
    pub target: PathBuf,
}

/// Why nothing was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteError {
    /// The file the error is about, as the caller named it.
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The file a path names: a symlink's final target (resolved through every link), else
/// the path itself.
pub fn target_of(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// A file prepared: the temporary file holding its new bytes, and how to put it in place.
struct Prepared {
    path: PathBuf,
    target: PathBuf,
    tmp: PathBuf,
    /// The bytes it held (to put back if a later file fails); `None` for a new file.
    old: Option<Vec<u8>>,
    /// Rewrite in place (a hard-linked file) rather than rename over it.
    in_place: bool,
    bytes: Vec<u8>,
}

/// Write every planned file, or none: see the module docs.
pub fn replace_all(files: &[Planned]) -> Result<Vec<Written>, WriteError> {
    let mut prepared: Vec<Prepared> = Vec::new();
    for (n, plan) in files.iter().enumerate() {
        match prepare(plan, n) {
            Ok(p) => prepared.push(p),
            Err(e) => {
                discard(&prepared);
                return Err(e);
            }
        }
    }
    for i in 0..prepared.len() {
        let Some(p) = prepared.get(i) else { break };
        if let Err(e) = commit(p) {
            let mut message = format!("cannot be written: {e}");
            let done = prepared.get(..i).unwrap_or(&[]);
            let failed: Vec<String> = done
                .iter()
                .filter(|d| restore(d).is_err())
                .map(|d| d.path.display().to_string())
                .collect();
            discard(prepared.get(i..).unwrap_or(&[]));
            if failed.is_empty() {
                message.push_str("; nothing was changed");
            } else {
                message.push_str(&format!(
                    "; putting back the earlier files failed for {}",
                    failed.join(", ")
                ));
            }
            return Err(WriteError {
                path: p.path.clone(),
                message,
            });
        }
    }
    Ok(prepared
        .into_iter()
        .map(|p| Written {
            path: p.path,
            target: p.target,
        })
        .collect())
}

fn prepare(plan: &Planned, n: usize) -> Result<Prepared, WriteError> {
    let err = |message: String| WriteError {
        path: plan.path.clone(),
        message,
    };
    let target = target_of(&plan.path);
    let link = if target != plan.path {
        format!(" (the link's target {})", target.display())
    } else {
        String::new()
    };
    let meta = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && plan.expect.is_none() => None,
        Err(e) => return Err(err(format!("cannot be read{link}: {e}"))),
    };
    let mut old = None;
    let mut in_place = false;
    let mut mode = None;
    let mut owner = None;
    if let Some(m) = &meta {
        if !m.is_file() {
            return Err(err(format!("is not a regular file{link}")));
        }
        let now = std::fs::read(&target).map_err(|e| err(format!("cannot be read{link}: {e}")))?;
        if let Some(expect) = &plan.expect {
            if &now != expect {
                return Err(err(format!(
                    "changed since permaudit read it{link}; nothing written"
                )));
            }
        }
        old = Some(now);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let bits = m.mode() & 0o7777;
            if bits & 0o222 == 0 {
                return Err(err(format!(
                    "is read-only (mode {bits:04o}){link}: permaudit does not overwrite it; make it writable to apply the fix"
                )));
            }
            mode = Some(bits);
            owner = Some((m.uid(), m.gid()));
            in_place = m.nlink() > 1;
        }
        #[cfg(not(unix))]
        if m.permissions().readonly() {
            return Err(err(format!("is read-only{link}; nothing written")));
        }
        // The system's own word (an immutable file, a read-only mount, no permission).
        std::fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .map_err(|e| err(format!("cannot be written{link}: {e}")))?;
    }
    let name = target
        .file_name()
        .ok_or_else(|| err("is not a file name".into()))?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = dir.join(format!(
        ".{}.permaudit-{}-{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Never wider than the file it replaces, not even for a moment.
            options.mode(mode.unwrap_or(0o666));
        }
        let mut f = options.open(&tmp)?;
        f.write_all(&plan.bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Some((uid, gid)) = owner {
                // Kept where permitted (root, or a group the user is in).
                let _ = std::os::unix::fs::fchown(&f, Some(uid), Some(gid));
            }
            if let Some(bits) = mode {
                // The umask narrowed the creation mode; the old file's bits are wanted.
                f.set_permissions(std::fs::Permissions::from_mode(bits))?;
            }
        }
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(format!(
            "cannot be written (a temporary file beside it{link} failed): {e}"
        )));
    }
    Ok(Prepared {
        path: plan.path.clone(),
        target,
        tmp,
        old,
        in_place,
        bytes: plan.bytes.clone(),
    })
}

/// Put a prepared file in place.
fn commit(p: &Prepared) -> std::io::Result<()> {
    if p.in_place {
        rewrite_in_place(&p.target, &p.bytes)?;
        let _ = std::fs::remove_file(&p.tmp);
        Ok(())
    } else {
        std::fs::rename(&p.tmp, &p.target)
    }
}

/// Give a committed file its old bytes back (a new file is removed).
fn restore(p: &Prepared) -> std::io::Result<()> {
    match &p.old {
        Some(old) => rewrite_in_place(&p.target, old),
        None => std::fs::remove_file(&p.target),
    }
}

fn rewrite_in_place(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Remove the temporary files of files not put in place.
fn discard(prepared: &[Prepared]) {
    for p in prepared {
        let _ = std::fs::remove_file(&p.tmp);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn plan(path: &Path, expect: &str, bytes: &str) -> Planned {
        Planned {
            path: path.to_path_buf(),
            expect: Some(expect.as_bytes().to_vec()),
            bytes: bytes.as_bytes().to_vec(),
        }
    }

    /// A scratch directory holding `names` (parents made), each file's text `a`.
    fn scratch<const N: usize>(names: [&str; N]) -> (tempfile::TempDir, [PathBuf; N]) {
        let d = tempfile::tempdir().unwrap();
        let paths = names.map(|n| {
            let p = d.path().join(n);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "a").unwrap();
            p
        });
        (d, paths)
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".permaudit-"))
            .collect()
    }

    #[test]
    fn keeps_the_mode_of_a_private_file() {
        let (d, [p]) = scratch(["opencode.json"]);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        replace_all(&[plan(&p, "a", "b")]).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "b");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o7777, 0o600);
        assert!(leftovers(d.path()).is_empty());
    }

    #[test]
    fn writes_through_a_symlink_and_keeps_the_link() {
        let (d, [real]) = scratch(["dotfiles/opencode.json"]);
        let link = d.path().join("opencode.json");
        std::os::unix::fs::symlink("dotfiles/opencode.json", &link).unwrap();
        let w = replace_all(&[plan(&link, "a", "b")]).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "b");
        assert_eq!(w[0].target, std::fs::canonicalize(&real).unwrap());
    }

    #[test]
    fn keeps_hard_links() {
        let (d, [p]) = scratch(["opencode.json"]);
        let other = d.path().join("other.json");
        std::fs::hard_link(&p, &other).unwrap();
        replace_all(&[plan(&p, "a", "b")]).unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "b");
        assert_eq!(std::fs::metadata(&p).unwrap().nlink(), 2);
        assert!(leftovers(d.path()).is_empty());
    }

    #[test]
    fn refuses_a_read_only_file_and_writes_nothing_else() {
        let (d, [first, ro]) = scratch(["a.json", "b.json"]);
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = replace_all(&[plan(&first, "a", "b"), plan(&ro, "a", "b")]).unwrap_err();
        assert_eq!(e.path, ro);
        assert!(e.message.contains("read-only (mode 0444)"), "{e}");
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "a");
        assert_eq!(std::fs::read_to_string(&ro).unwrap(), "a");
        assert!(leftovers(d.path()).is_empty());
    }

    #[test]
    fn refuses_a_file_changed_since_it_was_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        std::fs::write(&p, "edited meanwhile").unwrap();
        let e = replace_all(&[plan(&p, "a", "b")]).unwrap_err();
        assert!(e.message.contains("changed since permaudit read it"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "edited meanwhile");
    }

    #[test]
    fn a_new_file_gets_the_default_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("baseline.json");
        replace_all(&[Planned {
            path: p.clone(),
            expect: None,
            bytes: b"x".to_vec(),
        }])
        .unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x");
    }
}
