//! The two sides a comparison reads, for `diff` and `report --base`: each a git revision
//! (`git ls-tree` and `git cat-file`, into memory), the index, the work tree or a
//! directory, as a [`RootedHost`] standing for the project root; then the library's
//! comparison ([`crate::compare`]). Errors are printed here; never writes a checkout.

use super::git::Stderr;
use super::{Context, EXIT_REFUSED};
use crate::compare::Comparison;
use crate::host::{GitTree, RealHost, RootedHost, Tree};
use crate::report;
use crate::report::diff::{Side, SideKind, Sides};
use std::path::{Path, PathBuf};

/// What to compare, as `diff`'s arguments say it.
pub struct Spec {
    /// The base revision (default: `HEAD`).
    pub base: Option<String>,
    /// The head revision (default: the work tree).
    pub head: Option<String>,
    pub base_dir: Option<PathBuf>,
    pub head_dir: Option<PathBuf>,
    /// The head side is the index.
    pub staged: bool,
    /// Nothing outside the project is read.
    pub project_only: bool,
}

/// Both sides compared, with how the reports name them.
pub struct Compared {
    /// The worktree root both sides stand for.
    pub root: PathBuf,
    pub base_side: Side,
    pub head_side: Side,
    pub comparison: Comparison,
}

impl Compared {
    /// What the diff reports render beside the comparison.
    pub fn view(&self) -> Sides<'_> {
        Sides {
            base: &self.comparison.base,
            head: &self.comparison.head,
            base_side: self.base_side.clone(),
            head_side: self.head_side.clone(),
            root: &self.root,
            commands: &self.comparison.commands,
        }
    }
}

/// Where one side's files come from.
enum Source {
    Rev(String),
    /// No files: the default base (`HEAD`) of a repository without commits.
    Empty,
    Index,
    WorkTree,
    Dir(PathBuf),
}

/// Run `git -C root ARGS`; stdout, or git's own complaint.
fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    super::git::run(root, args, Stderr::Capture)
}

/// A revision's tree as a lazy in-memory tree: the listing now, each blob when read.
fn git_tree(root: &Path, rev: &str) -> Result<GitTree, String> {
    let spec = format!("{rev}^{{tree}}");
    let oid = git(root, &["rev-parse", "--verify", "--quiet", &spec]).map_err(|_| {
        let why = if has_commits(root) {
            ""
        } else {
            ": it has no commits yet"
        };
        format!(
            "`{rev}` is not a revision of the repository at {}{why}",
            root.display()
        )
    })?;
    let oid = String::from_utf8_lossy(&oid).trim().to_string();
    let listing = git(root, &["ls-tree", "-r", "-l", "-z", "--full-tree", &oid])?;
    Ok(GitTree::from_ls_tree(&listing, blob_reader(root)))
}

/// Does the repository have a commit (is `HEAD` a revision)?
fn has_commits(root: &Path) -> bool {
    git(root, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_ok()
}

/// Reads blobs by object id with `git cat-file` (the same bytes `git show :PATH` prints for
/// an index entry, without a process per path lookup).
fn blob_reader(root: &Path) -> crate::host::BlobReader {
    let at = root.to_path_buf();
    Box::new(move |blob: &str| git(&at, &["cat-file", "blob", blob]))
}

/// The index as a lazy in-memory tree (`git ls-files --stage`): what a commit would hold.
fn git_index(root: &Path) -> Result<GitTree, String> {
    let listing = git(root, &["ls-files", "--stage", "-z", "--full-name"])?;
    GitTree::from_ls_files(&listing, blob_reader(root)).map_err(|path| {
        format!("{path} is unmerged in the index: resolve the conflict (git add) first")
    })
}

/// Read both sides `spec` names and compare them; what went wrong is printed (the exit
/// code comes back).
pub fn compare(ctx: &Context, spec: &Spec) -> Result<Compared, i32> {
    let cwd = ctx.cwd.as_path();
    let base = match &spec.base_dir {
        Some(d) => Source::Dir(cwd.join(d)),
        None => Source::Rev(spec.base.clone().unwrap_or_else(|| "HEAD".into())),
    };
    let head = match (&spec.head_dir, &spec.head) {
        (Some(d), _) => Source::Dir(cwd.join(d)),
        (None, Some(r)) => Source::Rev(r.clone()),
        (None, None) if spec.staged => Source::Index,
        (None, None) => Source::WorkTree,
    };
    let needs_git = !matches!((&base, &head), (Source::Dir(_), Source::Dir(_)));
    let root = if needs_git {
        match git(cwd, &["rev-parse", "--show-toplevel"]) {
            Ok(t) => PathBuf::from(String::from_utf8_lossy(&t).trim()),
            Err(_) => {
                eprintln!(
                    "error: {} is not in a git repository: diff compares git revisions (or give --base-dir and --head-dir)",
                    cwd.display()
                );
                return Err(EXIT_REFUSED);
            }
        }
    } else {
        cwd.to_path_buf()
    };
    // `permaudit diff` before the first commit: everything in the work tree (or index) is
    // new, as `git diff` against the empty tree shows it.
    let base = match base {
        Source::Rev(_) if spec.base.is_none() && !has_commits(&root) => {
            eprintln!("note: the repository has no commits yet: the base side is empty");
            Source::Empty
        }
        base => base,
    };
    let outside: Option<&dyn crate::discover::Host> =
        (!spec.project_only).then_some(&RealHost as &dyn crate::discover::Host);
    let (base_tree, base_side) = side("base", base, &root, cwd)?;
    let (head_tree, head_side) = side("head", head, &root, cwd)?;
    let base_host = RootedHost::new(root.clone(), base_tree, &RealHost, outside);
    let head_host = RootedHost::new(root.clone(), head_tree, &RealHost, outside);
    let comparison = crate::compare::compare(&base_host, &head_host, &root, cwd, ctx.platform)
        .map_err(|(role, mut f)| {
            let label = match role {
                crate::compare::Role::Base => &base_side.label,
                crate::compare::Role::Head => &head_side.label,
            };
            // Named as on that side: relative to its root, as every command names files.
            f.sources.relative_to(&root);
            eprintln!("error: the {} side ({label}) does not load:", role.as_str());
            eprint!("{}", report::error::render(&f, ctx.err_style));
            EXIT_REFUSED
        })?;
    Ok(Compared {
        root,
        base_side,
        head_side,
        comparison,
    })
}

/// One side's files and its name in the reports (`role`: which side, for errors).
fn side(role: &str, source: Source, root: &Path, cwd: &Path) -> Result<(Tree, Side), i32> {
    let refuse = |e: String| {
        eprintln!("error: {role}: {e}");
        EXIT_REFUSED
    };
    Ok(match source {
        Source::Rev(rev) => (
            Tree::Git(git_tree(root, &rev).map_err(refuse)?),
            Side::new(rev.clone(), SideKind::Git, format!("{rev}:")),
        ),
        Source::Empty => (
            Tree::Git(GitTree::from_ls_tree(&[], blob_reader(root))),
            Side::new("no commits".into(), SideKind::Git, String::new()),
        ),
        // Index paths print as the files they stage (`opencode.json:29:7`); the side's
        // label says "index".
        Source::Index => (
            Tree::Git(git_index(root).map_err(refuse)?),
            Side::new("index".into(), SideKind::Index, String::new()),
        ),
        Source::WorkTree => (
            Tree::Dir(root.to_path_buf()),
            Side::new("work tree".into(), SideKind::WorkTree, String::new()),
        ),
        Source::Dir(d) => {
            if !d.is_dir() {
                eprintln!("error: --{role}-dir {}: not a directory", d.display());
                return Err(EXIT_REFUSED);
            }
            // As the user names it: relative to the start directory when under it.
            let shown = d
                .strip_prefix(cwd)
                .ok()
                .filter(|r| !r.as_os_str().is_empty())
                .unwrap_or(&d)
                .display()
                .to_string();
            (
                Tree::Dir(d),
                Side::new(shown.clone(), SideKind::Dir, format!("{shown}/")),
            )
        }
    })
}
