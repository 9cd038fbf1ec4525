//! Config files edited in memory, shown or written the one way `check --fix` and `suggest`
//! share: a unified diff that `git apply` takes, and every file written or none
//! (`host::write::replace_all`: links written through, modes and owners kept, read-only
//! files refused, each file still holding what it was read with). A CLI helper, not a
//! command.

use std::path::{Path, PathBuf};

/// The files as a unified diff (paths relative to the project root `root`): exactly the
/// bytes of the files, as `git diff` prints them.
pub(super) fn unified(files: &[(PathBuf, String, String)], root: &Path) -> String {
    let mut text = String::new();
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    for (path, before, after) in files {
        // A link is named by the file it points to (what `--fix` writes, and what `git
        // apply` patches: it refuses a patch through a symlink).
        // A file outside the project (`--global`) is named by its absolute path, both
        // sides alike (`patch -p0` applies it).
        let target = crate::host::write::target_of(path);
        let (a, b) = if !target.starts_with(&real_root) && !path.starts_with(root) {
            let name = target.display().to_string();
            (name.clone(), name)
        } else if target == *path {
            let name = path.strip_prefix(root).unwrap_or(path).display();
            (format!("a/{name}"), format!("b/{name}"))
        } else if let Ok(rel) = target.strip_prefix(&real_root) {
            (
                format!("a/{}", rel.display()),
                format!("b/{}", rel.display()),
            )
        } else {
            eprintln!(
                "note: {} is a link to {}, outside the project; the diff names the link's target",
                path.display(),
                target.display()
            );
            let name = target.display();
            (format!("a/{name}"), format!("b/{name}"))
        };
        let diff = similar::TextDiff::from_lines(before.as_str(), after.as_str());
        text.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        );
    }
    text
}

/// Every file written, or none; the error names the file that could not be written.
pub(super) fn write_all(
    files: &[(PathBuf, String, String)],
) -> Result<(), crate::host::write::WriteError> {
    let plans: Vec<crate::host::write::Planned> = files
        .iter()
        .map(|(path, before, after)| crate::host::write::Planned {
            path: path.clone(),
            expect: Some(before.clone().into_bytes()),
            bytes: after.clone().into_bytes(),
        })
        .collect();
    crate::host::write::replace_all(&plans).map(|_| ())
}
