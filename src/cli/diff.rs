//! `permaudit diff`: the CLI side. Reads each side's files (a git revision through `git
//! ls-tree` and `git cat-file`, into memory; or a directory), loads both projects through
//! [`RootedHost`]s, and hands them to [`crate::diff`]. Never writes a checkout.

use super::git::Stderr;
use super::{Context, EXIT_FINDINGS, EXIT_OK, EXIT_REFUSED};
use crate::host::{GitTree, RealHost, RootedHost, Tree};
use crate::project::Project;
use crate::report::diff::{Side, SideKind, Sides};
use crate::report::{self, Style};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DiffFormat {
    Human,
    Json,
    /// Markdown for a pull-request comment.
    Markdown,
    Sarif,
    Github,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DiffFailOn {
    /// A decision widened (deny→ask, deny→allow, ask→allow), an agent added, or a part
    /// of the comparison inconclusive.
    Widened,
    /// Any change at all (or an inconclusive part).
    Any,
    Never,
}

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The base git revision (default: HEAD).
    #[arg(value_name = "BASE")]
    pub base: Option<String>,
    /// The head git revision (default: the work tree).
    #[arg(value_name = "HEAD")]
    pub head: Option<String>,
    /// A directory holding the base side's project files (instead of a revision).
    #[arg(long, value_name = "DIR", conflicts_with = "base")]
    pub base_dir: Option<PathBuf>,
    /// A directory holding the head side's project files (instead of the work tree).
    #[arg(long, value_name = "DIR", conflicts_with = "head")]
    pub head_dir: Option<PathBuf>,
    /// The head side is the index (what `git commit` would commit, as a pre-commit hook
    /// sees it) instead of the work tree.
    #[arg(long, conflicts_with_all = ["head", "head_dir"])]
    pub staged: bool,
    /// Leave out everything outside the project (global and user config, `OPENCODE_*`
    /// variables): the same answer on every machine, for CI.
    #[arg(long)]
    pub project_only: bool,
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    /// Exit 1 when this kind of change is found.
    #[arg(long, value_enum, default_value_t = DiffFailOn::Widened)]
    pub fail_on: DiffFailOn,
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

pub fn run(ctx: &Context, args: &DiffArgs, out: &mut dyn Write) -> i32 {
    let (cwd, platform) = (ctx.cwd.as_path(), ctx.platform);
    let (out_style, err_style): (Style, Style) = (ctx.out_style, ctx.err_style);
    let base = match &args.base_dir {
        Some(d) => Source::Dir(cwd.join(d)),
        None => Source::Rev(args.base.clone().unwrap_or_else(|| "HEAD".into())),
    };
    let head = match (&args.head_dir, &args.head) {
        (Some(d), _) => Source::Dir(cwd.join(d)),
        (None, Some(r)) => Source::Rev(r.clone()),
        (None, None) if args.staged => Source::Index,
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
                return EXIT_REFUSED;
            }
        }
    } else {
        cwd.to_path_buf()
    };
    // `permaudit diff` before the first commit: everything in the work tree (or index) is
    // new, as `git diff` against the empty tree shows it.
    let base = match base {
        Source::Rev(_) if args.base.is_none() && !has_commits(&root) => {
            eprintln!("note: the repository has no commits yet: the base side is empty");
            Source::Empty
        }
        base => base,
    };
    let mut sides = Vec::with_capacity(2);
    for (role, source) in [("base", base), ("head", head)] {
        let (tree, side) = match source {
            Source::Rev(rev) => match git_tree(&root, &rev) {
                Ok(t) => (
                    Tree::Git(t),
                    Side::new(rev.clone(), SideKind::Git, format!("{rev}:")),
                ),
                Err(e) => {
                    eprintln!("error: {role}: {e}");
                    return EXIT_REFUSED;
                }
            },
            Source::Empty => (
                Tree::Git(GitTree::from_ls_tree(&[], blob_reader(&root))),
                Side::new("no commits".into(), SideKind::Git, String::new()),
            ),
            // Index paths print as the files they stage (`opencode.json:29:7`); the side's
            // label says "index".
            Source::Index => match git_index(&root) {
                Ok(t) => (
                    Tree::Git(t),
                    Side::new("index".into(), SideKind::Index, String::new()),
                ),
                Err(e) => {
                    eprintln!("error: {role}: {e}");
                    return EXIT_REFUSED;
                }
            },
            Source::WorkTree => (
                Tree::Dir(root.clone()),
                Side::new("work tree".into(), SideKind::WorkTree, String::new()),
            ),
            Source::Dir(d) => {
                if !d.is_dir() {
                    eprintln!("error: --{role}-dir {}: not a directory", d.display());
                    return EXIT_REFUSED;
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
        };
        let outside: Option<&dyn crate::discover::Host> =
            (!args.project_only).then_some(&RealHost as &dyn crate::discover::Host);
        sides.push((
            RootedHost::new(root.clone(), tree, &RealHost, outside),
            side,
        ));
    }
    let mut projects = Vec::with_capacity(2);
    for (host, side) in &sides {
        match Project::load(host, cwd, platform) {
            Ok(p) => projects.push(p),
            Err(mut f) => {
                let role = if projects.is_empty() { "base" } else { "head" };
                // Named as on that side: relative to its root, as every command names files.
                f.sources.relative_to(&root);
                eprintln!("error: the {role} side ({}) does not load:", side.label);
                eprint!("{}", report::error::render(&f, err_style));
                return EXIT_REFUSED;
            }
        }
    }
    let (Some(head_p), Some(base_p)) = (projects.pop(), projects.pop()) else {
        return EXIT_REFUSED;
    };
    let d = crate::diff::diff(&base_p, &head_p);

    // The project's commands, from both sides (head's first, then base-only ones), split
    // once with the head side's view of the machine and decided on both sides.
    let (head_host, base_host) = (&sides[1].0, &sides[0].0);
    let mut commands = crate::shell::corpus::read(head_host, &root);
    for c in crate::shell::corpus::read(base_host, &root) {
        if !commands.iter().any(|h| h.text == c.text) {
            commands.push(c);
        }
    }
    let places = crate::shell::Places::of(head_p.loaded.paths());
    let is_dir = |p: &str| crate::discover::Host::is_dir(head_host, Path::new(p));
    let env = places.env(&is_dir);
    let requests = crate::shell::corpus::split(&commands, &env);
    let mut d = d;
    d.commands = crate::diff::commands(&base_p, &head_p, &requests);

    let (base_side, head_side) = (sides[0].1.clone(), sides[1].1.clone());
    let view = Sides {
        base: &base_p,
        head: &head_p,
        base_side,
        head_side,
        root: &root,
        commands: &commands,
    };
    match args.format {
        DiffFormat::Human => {
            let _ = out.write_all(report::diff::human(&d, &view, out_style).as_bytes());
        }
        DiffFormat::Json => super::write_pretty(out, &report::diff::json(&d, &view)),
        DiffFormat::Markdown => {
            let _ = out.write_all(report::diff::markdown(&d, &view).as_bytes());
        }
        DiffFormat::Sarif => super::write_pretty(out, &report::diff::sarif(&d, &view)),
        DiffFormat::Github => {
            let _ = out.write_all(report::diff::github(&d, &view).as_bytes());
        }
    }
    let fires = match args.fail_on {
        DiffFailOn::Widened => d.widens() || !d.inconclusive.is_empty(),
        DiffFailOn::Any => !d.is_empty(),
        DiffFailOn::Never => false,
    };
    if fires { EXIT_FINDINGS } else { EXIT_OK }
}
