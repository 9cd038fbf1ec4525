//! What OpenCode 1.18.34's file tools ask before their own permission: the
//! `external_directory` ask of a path outside the project (bundle
//! `Tool.assertExternalDirectory`), read with the search tools and checked on the binary
//! (`docs/research/E-headless-delegation.md` §1).
//!
//! - `read` (`ReadTool.execute`): `h = path.resolve(directory, filePath)`; unless
//!   `Instance.containsPath(h)`, ask `external_directory` for `path.join(d, "*")` where `d`
//!   is `h` itself when it is an existing directory, else `path.dirname(h)`; then ask `read`
//!   for `path.relative(worktree, h)`.
//! - `edit` and `write` (permission `edit`): `u = path.join(directory, filePath)` (or the
//!   absolute path); the same `external_directory` ask with `d = path.dirname(u)` always
//!   (kind `file`), then, after reading the file, `edit` for `path.relative(worktree, u)`.
//! - `glob` and `grep` ask their own permission first with the *search pattern*, then
//!   `external_directory` for their `path` argument: an `explain glob|grep` input is the
//!   search pattern, so no path is simulated for them. There is no `list` tool in 1.18.34
//!   (`unchecked-permission` says so).
//!
//! An `explain read|edit` input is the path as the tool checks it (worktree-relative); an
//! absolute input, or one that leaves the worktree (`../x`), is read as the tool's
//! `filePath` argument: resolved (relative ones against the worktree root, or the start
//! directory outside git), its outside directory asked first, then the tool's permission
//! for the path relative to the worktree. Inputs inside the project are decided as given.

use super::split::{Env, contains_path, dir_pattern, dirname, resolve};

/// The asks of one file-tool call, in OpenCode's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRequest {
    /// The absolute path the tool works on.
    pub path: String,
    /// The `external_directory` pattern (`<dir>/*`), when the path is outside the project.
    pub external: Option<String>,
    /// The pattern the tool's own permission is asked for (worktree-relative).
    pub pattern: String,
}

/// The permissions whose tools take a file path and ask `external_directory` first.
pub const FILE_PERMISSIONS: &[&str] = &["read", "edit"];

/// The asks of `permission` (`read` or `edit`) for `input`, or `None` when the tool adds
/// nothing to a plain decision of the input (another permission, or a relative path that
/// stays inside the worktree).
pub fn request(permission: &str, input: &str, env: &Env<'_>) -> Option<FileRequest> {
    if !FILE_PERMISSIONS.contains(&permission) {
        return None;
    }
    let absolute = input.starts_with('/');
    let escapes = input == ".." || input.starts_with("../");
    if !absolute && !escapes {
        return None;
    }
    let base = if env.worktree == "/" {
        env.cwd
    } else {
        env.worktree
    };
    let path = resolve(base, input);
    let external = (!contains_path(env, &path)).then(|| {
        let dir = if permission == "read" && (env.is_dir)(&path) {
            path.clone()
        } else {
            dirname(&path)
        };
        dir_pattern(&dir)
    });
    let pattern = crate::discover::relative(
        std::path::Path::new(env.worktree),
        std::path::Path::new(&path),
    );
    Some(FileRequest {
        path,
        external,
        pattern,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(worktree: &'a str, is_dir: &'a dyn Fn(&str) -> bool) -> Env<'a> {
        Env {
            cwd: worktree,
            worktree,
            home: "/home/u",
            is_dir,
        }
    }

    #[test]
    fn outside_paths_ask_their_directory_first() {
        let no = |_: &str| false;
        let e = env("/p/proj", &no);
        let r = request("edit", "/etc/passwd", &e).unwrap();
        assert_eq!(r.external.as_deref(), Some("/etc/*"));
        assert_eq!(r.pattern, "../../etc/passwd");
        let r = request("read", "../x/./y", &e).unwrap();
        assert_eq!(r.path, "/p/x/y");
        assert_eq!(r.external.as_deref(), Some("/p/x/*"));
        assert_eq!(r.pattern, "../x/y");
        // Inside the worktree: no directory ask, the relative path is checked.
        let r = request("read", "/p/proj/src/a.ts", &e).unwrap();
        assert_eq!((r.external, r.pattern.as_str()), (None, "src/a.ts"));
        assert_eq!(request("read", "src/a.ts", &e), None);
        assert_eq!(request("bash", "/etc/passwd", &e), None);
    }

    #[test]
    fn read_of_a_directory_asks_for_the_directory_itself() {
        let dir = |p: &str| p == "/etc";
        let e = env("/p/proj", &dir);
        assert_eq!(
            request("read", "/etc", &e).unwrap().external.as_deref(),
            Some("/etc/*")
        );
        // edit always asks for the parent (kind "file").
        assert_eq!(
            request("edit", "/etc", &e).unwrap().external.as_deref(),
            Some("/*")
        );
    }

    #[test]
    fn outside_git_the_start_directory_is_the_project() {
        let no = |_: &str| false;
        let e = Env {
            cwd: "/p/proj",
            worktree: "/",
            home: "/home/u",
            is_dir: &no,
        };
        let r = request("read", "../x", &e).unwrap();
        assert_eq!(r.external.as_deref(), Some("/p/*"));
        assert_eq!(r.pattern, "p/x");
    }
}
