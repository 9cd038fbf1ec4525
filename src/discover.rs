//! Which config sources OpenCode 1.18.34 reads, in its order (spec §5.1).
//!
//! Discovery sees the machine only through [`Host`]; the CLI provides the real one, tests a
//! fake. The result is an ordered list of [`Step`]s: lowest precedence first, exactly the
//! order in which OpenCode merges them.

use crate::model::Layer;
use std::path::{Component, Path, PathBuf};

/// The machine as OpenCode sees it: environment variables and the filesystem.
pub trait Host {
    /// An environment variable (`None` when unset).
    fn var(&self, name: &str) -> Option<String>;
    /// A file's bytes.
    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError>;
    fn is_file(&self, path: &Path) -> bool;
    fn is_dir(&self, path: &Path) -> bool;
    /// Entries of a directory: `(name, is_dir)`, sorted by name; empty when unreadable.
    fn list_dir(&self, path: &Path) -> Vec<(String, bool)>;
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub kind: ReadErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadErrorKind {
    NotFound,
    PermissionDenied,
    /// A directory, a file over permaudit's size limit, an I/O error.
    Other,
}

/// The directories OpenCode derives from the environment (spec's `HOME`, `CONFIG`, `DATA`,
/// `TMP`, `WT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub home: PathBuf,
    /// `${XDG_CONFIG_HOME:-$HOME/.config}/opencode`
    pub config: PathBuf,
    /// `${XDG_DATA_HOME:-$HOME/.local/share}/opencode`
    pub data: PathBuf,
    /// `os.tmpdir()/opencode`
    pub tmp: PathBuf,
    /// The directory OpenCode starts in.
    pub cwd: PathBuf,
    /// The git worktree root, or `/` outside git.
    pub worktree: PathBuf,
}

/// Lexically normalise an absolute path (`.` and `..` removed), as Node's `path.resolve`.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// Node's `path.relative(from, to)` for absolute POSIX paths.
pub fn relative(from: &Path, to: &Path) -> String {
    let (from, to) = (normalize(from), normalize(to));
    let f: Vec<_> = from.components().skip(1).collect();
    let t: Vec<_> = to.components().skip(1).collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

impl Paths {
    pub fn from_host(host: &dyn Host, cwd: &Path) -> Paths {
        let home = PathBuf::from(host.var("HOME").unwrap_or_else(|| "/".to_string()));
        let xdg = |var: &str, default: &str| -> PathBuf {
            match host.var(var) {
                Some(v) if !v.is_empty() => PathBuf::from(v),
                _ => home.join(default),
            }
        };
        let config = xdg("XDG_CONFIG_HOME", ".config").join("opencode");
        let data = xdg("XDG_DATA_HOME", ".local/share").join("opencode");
        // os.tmpdir(): $TMPDIR (or TMP, TEMP), trailing slash dropped, else /tmp.
        let tmpdir = ["TMPDIR", "TMP", "TEMP"]
            .iter()
            .find_map(|v| host.var(v).filter(|s| !s.is_empty()))
            .map(|s| {
                if s.len() > 1 && s.ends_with('/') {
                    s[..s.len() - 1].to_string()
                } else {
                    s
                }
            })
            .unwrap_or_else(|| "/tmp".to_string());
        let cwd = normalize(cwd);
        let worktree = cwd
            .ancestors()
            .find(|d| host.is_dir(&d.join(".git")) || host.is_file(&d.join(".git")))
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        Paths {
            home,
            config,
            data,
            tmp: PathBuf::from(tmpdir).join("opencode"),
            cwd,
            worktree,
        }
    }

    /// Directories from `cwd` up to the worktree root, nearest first.
    pub fn up_to_worktree(&self) -> Vec<PathBuf> {
        self.cwd
            .ancestors()
            .take_while(|d| d.starts_with(&self.worktree))
            .map(Path::to_path_buf)
            .collect()
    }

    /// The project: the worktree root, or the start directory outside git (a worktree of
    /// `/`). Output names files relative to it; `--project-only` reads only below it.
    pub fn project_root(&self) -> &Path {
        if self.worktree == Path::new("/") {
            &self.cwd
        } else {
            &self.worktree
        }
    }
}

/// The machine as `--project-only` shows it: only the project's own files (under the git
/// worktree root, or under the start directory outside git), and no `OPENCODE_*` variable.
/// The global and user config directories, `~/.opencode`, `~/.claude` and `~/.agents`
/// (skills), the managed config directory and every variable OpenCode reads for config
/// (`OPENCODE_CONFIG`, `OPENCODE_CONFIG_DIR`, `OPENCODE_CONFIG_CONTENT`,
/// `OPENCODE_PERMISSION`, `OPENCODE_DISABLE_*`, …) are absent, so `check` gives the same
/// answer on every machine. File reads themselves pass through: a `{file:}` reference of a
/// project config still reads what OpenCode would read.
pub struct ProjectOnly<'h> {
    inner: &'h dyn Host,
    /// The project: the worktree root, or the start directory outside git.
    pub root: PathBuf,
    hidden: Vec<PathBuf>,
}

impl<'h> ProjectOnly<'h> {
    pub fn new(inner: &'h dyn Host, cwd: &Path) -> ProjectOnly<'h> {
        let paths = Paths::from_host(inner, cwd);
        let root = paths.project_root().to_path_buf();
        let hidden = vec![
            paths.config.clone(),
            paths.data.clone(),
            paths.home.join(".opencode"),
            paths.home.join(".claude"),
            paths.home.join(".agents"),
        ];
        ProjectOnly {
            inner,
            root,
            hidden,
        }
    }

    fn visible(&self, p: &Path) -> bool {
        let p = normalize(p);
        p.starts_with(&self.root) && !self.hidden.iter().any(|h| p.starts_with(h))
    }
}

impl Host for ProjectOnly<'_> {
    fn var(&self, name: &str) -> Option<String> {
        if name.starts_with("OPENCODE_") {
            None
        } else {
            self.inner.var(name)
        }
    }
    fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        self.inner.read(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        self.visible(path) && self.inner.is_file(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.visible(path) && self.inner.is_dir(path)
    }
    fn list_dir(&self, path: &Path) -> Vec<(String, bool)> {
        if self.visible(path) {
            self.inner.list_dir(path)
        } else {
            Vec::new()
        }
    }
}

/// What kind of agent a markdown file defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkdownKind {
    /// `{agent,agents}/**/*.md`
    Agent,
    /// `{mode,modes}/*.md`: an agent with `mode: primary`.
    Mode,
}

/// One source to read, in OpenCode's merge order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A JSONC config file.
    File { path: PathBuf, layer: Layer },
    /// A JSONC config held in an environment variable (`OPENCODE_CONFIG_CONTENT`).
    EnvConfig { var: String, layer: Layer },
    /// A markdown agent or mode file.
    Markdown {
        path: PathBuf,
        name: String,
        kind: MarkdownKind,
    },
}

/// Everything discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    pub paths: Paths,
    pub steps: Vec<Step>,
    /// The config directories, in OpenCode's order (for skills).
    pub config_dirs: Vec<PathBuf>,
    /// Sources OpenCode may read that permaudit cannot (remote configs), said aloud.
    pub notes: Vec<String>,
    /// A walk of an agent or mode directory past [`MAX_WALK_DIRS`]: loading refuses.
    pub walk_limit: Option<WalkLimit>,
}

fn truthy(v: Option<String>) -> bool {
    // OpenCode's Flag.truthy: "true" or "1" (case-insensitive).
    v.map(|s| {
        let s = s.to_ascii_lowercase();
        s == "true" || s == "1"
    })
    .unwrap_or(false)
}

/// Most directories one walk of an agent, mode or skill directory visits. OpenCode has no
/// such limit: it follows symbolic links until the kernel refuses a path (40 links), so one
/// link back to its own directory yields 40 copies of every file, and two such links make
/// it walk 2^40 directories. Past this many, loading fails with [`WalkLimit`].
pub const MAX_WALK_DIRS: usize = 100_000;

/// A directory walk that went past [`MAX_WALK_DIRS`]: its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkLimit {
    pub root: PathBuf,
}

impl WalkLimit {
    pub fn message(&self) -> String {
        format!(
            "more than {MAX_WALK_DIRS} directories under it (a symbolic link loop?); past permaudit's limit, OpenCode keeps walking (see docs/limits.md)"
        )
    }
}

/// Markdown files under `dir` matching `{sub}/**/*.md` (recursive) or `{sub}/*.md`. Symbolic
/// links are followed as OpenCode follows them; no depth limit (a path the kernel refuses,
/// e.g. after 40 links, is neither a file nor a directory, as for OpenCode), a budget of
/// [`MAX_WALK_DIRS`] directories instead.
fn markdown_files(
    host: &dyn Host,
    dir: &Path,
    sub: &str,
    recursive: bool,
) -> Result<Vec<(PathBuf, String)>, WalkLimit> {
    let mut out = Vec::new();
    let base = dir.join(sub);
    if !host.is_dir(&base) {
        return Ok(out);
    }
    let mut stack = vec![(base.clone(), String::new())];
    let mut visited = 0usize;
    while let Some((d, rel)) = stack.pop() {
        visited += 1;
        if visited > MAX_WALK_DIRS {
            return Err(WalkLimit { root: base });
        }
        for (name, is_dir) in host.list_dir(&d) {
            let relname = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if is_dir {
                if recursive {
                    stack.push((d.join(&name), relname));
                }
            } else if let Some(stem) = relname.strip_suffix(".md") {
                out.push((d.join(&name), stem.to_string()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Directories holding a file named `file` under `base` (recursively, `base` itself
/// included), in walk order; `dot` includes hidden entries. Bounded by [`MAX_WALK_DIRS`]
/// directories, like [`markdown_files`].
pub fn dirs_with_file(
    host: &dyn Host,
    base: &Path,
    file: &str,
    dot: bool,
) -> Result<Vec<PathBuf>, WalkLimit> {
    let mut out = Vec::new();
    if !host.is_dir(base) {
        return Ok(out);
    }
    let mut stack = vec![base.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    let mut visited = 0usize;
    while let Some(d) = stack.pop() {
        visited += 1;
        if visited > MAX_WALK_DIRS {
            return Err(WalkLimit {
                root: base.to_path_buf(),
            });
        }
        let entries = host.list_dir(&d);
        if entries.iter().any(|(n, is_dir)| !is_dir && n == file) && seen.insert(d.clone()) {
            out.push(d.clone());
        }
        for (name, is_dir) in entries.into_iter().rev() {
            if is_dir && (dot || !name.starts_with('.')) {
                stack.push(d.join(name));
            }
        }
    }
    Ok(out)
}

/// Effect's `Config.boolean` as OpenCode reads its skill flags: `Err` for a value it refuses.
pub fn flag(host: &dyn Host, name: &str) -> Result<bool, String> {
    match host.var(name).as_deref() {
        None => Ok(false),
        Some("true" | "yes" | "on" | "1" | "y") => Ok(true),
        Some("false" | "no" | "off" | "0" | "n") => Ok(false),
        Some(other) => Err(format!(
            "{name}={other:?}: OpenCode fails to start (it accepts only true/yes/on/1/y or false/no/off/0/n)"
        )),
    }
}

/// The skill directories OpenCode whitelists for `external_directory` (every directory
/// holding a `SKILL.md`, valid skill or not), in its discovery order, without `skills.paths`
/// (which comes from the merged config).
pub fn skill_dirs(
    host: &dyn Host,
    paths: &Paths,
    config_dirs: &[PathBuf],
) -> Result<Vec<PathBuf>, SkillDirsError> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |dirs: Vec<PathBuf>| {
        for d in dirs {
            if seen.insert(d.clone()) {
                out.push(d);
            }
        }
    };
    let external_off = flag(host, "OPENCODE_DISABLE_EXTERNAL_SKILLS")?;
    let claude_off = flag(host, "OPENCODE_DISABLE_CLAUDE_CODE")?
        || flag(host, "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS")?;
    if !external_off {
        let mut roots = Vec::new();
        if !claude_off {
            roots.push(paths.home.join(".claude"));
        }
        roots.push(paths.home.join(".agents"));
        for d in paths.up_to_worktree() {
            if !claude_off {
                roots.push(d.join(".claude"));
            }
            roots.push(d.join(".agents"));
        }
        for r in roots {
            add(dirs_with_file(host, &r.join("skills"), "SKILL.md", true)?);
        }
    }
    for d in config_dirs {
        for sub in ["skill", "skills"] {
            add(dirs_with_file(host, &d.join(sub), "SKILL.md", false)?);
        }
    }
    Ok(out)
}

/// What the config directories add to the tools: see [`custom_tools`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomTools {
    /// `NAME` of every `{tool,tools}/NAME.{js,ts}`, sorted, each once.
    pub names: Vec<String>,
    /// Some `{plugin,plugins}/*.{js,ts}` exists.
    pub plugins: bool,
}

/// The project's own tools, as OpenCode 1.18.34's tool registry finds them: every
/// `{tool,tools}/*.{js,ts}` of every config directory is imported, its default export
/// becomes the tool named after the file, a named export `X` the tool `FILE_X`
/// (verified: `.opencode/tool/observation.ts` adds `observation`, which a permission key
/// `observation` hides or shows). Plugin files add tools whose names only running them
/// tells.
pub fn custom_tools(host: &dyn Host, config_dirs: &[PathBuf]) -> CustomTools {
    let script = |n: &str| {
        Path::new(n)
            .extension()
            .is_some_and(|e| e == "js" || e == "ts")
    };
    let mut out = CustomTools::default();
    for d in config_dirs {
        for sub in ["tool", "tools"] {
            for (name, is_dir) in host.list_dir(&d.join(sub)) {
                if !is_dir && script(&name) {
                    let stem = Path::new(&name)
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    out.names.push(stem);
                }
            }
        }
        for sub in ["plugin", "plugins"] {
            out.plugins |= host
                .list_dir(&d.join(sub))
                .iter()
                .any(|(name, is_dir)| !is_dir && script(name));
        }
    }
    out.names.sort();
    out.names.dedup();
    out
}

/// Why [`skill_dirs`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillDirsError {
    /// A skill flag OpenCode refuses (its message).
    Flag(String),
    Walk(WalkLimit),
}

impl From<String> for SkillDirsError {
    fn from(m: String) -> Self {
        SkillDirsError::Flag(m)
    }
}

impl From<WalkLimit> for SkillDirsError {
    fn from(w: WalkLimit) -> Self {
        SkillDirsError::Walk(w)
    }
}

/// Discover the sources OpenCode would read when started in `cwd`.
pub fn discover(host: &dyn Host, cwd: &Path) -> Discovery {
    let paths = Paths::from_host(host, cwd);
    let mut steps = Vec::new();
    let mut notes = Vec::new();
    // A directory where a config file is expected is pushed too: OpenCode fails to read it.
    let file = |steps: &mut Vec<Step>, path: PathBuf, layer: Layer| {
        if host.is_file(&path) || host.is_dir(&path) {
            steps.push(Step::File { path, layer });
        }
    };

    // 1. Remote well-known configs come from auth.json entries of type `wellknown`.
    let auth = paths.data.join("auth.json");
    if host.is_file(&auth) {
        notes.push(format!(
            "{} may name remote (well-known) configs, which OpenCode fetches and permaudit cannot read offline",
            auth.display()
        ));
    }
    // 2. Global config dir.
    for name in ["config.json", "opencode.json", "opencode.jsonc"] {
        file(&mut steps, paths.config.join(name), Layer::Global);
    }
    // 3. OPENCODE_CONFIG.
    if let Some(p) = host.var("OPENCODE_CONFIG").filter(|s| !s.is_empty()) {
        steps.push(Step::File {
            path: normalize(&paths.cwd.join(p)),
            layer: Layer::OpencodeConfig,
        });
    }
    let project_disabled = truthy(host.var("OPENCODE_DISABLE_PROJECT_CONFIG"));
    let upward = paths.up_to_worktree();
    // 4. Project files, root-most first; opencode.json before opencode.jsonc.
    if !project_disabled {
        for dir in upward.iter().rev() {
            for name in ["opencode.json", "opencode.jsonc"] {
                file(&mut steps, dir.join(name), Layer::Project);
            }
        }
    }
    // 5. Config directories.
    let config_dir_env = host
        .var("OPENCODE_CONFIG_DIR")
        .filter(|s| !s.is_empty())
        .map(|p| normalize(&paths.cwd.join(p)));
    let mut dirs: Vec<(PathBuf, Layer)> = vec![(paths.config.clone(), Layer::Global)];
    if !project_disabled {
        for d in &upward {
            let dot = d.join(".opencode");
            if host.is_dir(&dot) {
                dirs.push((dot, Layer::DotOpencode));
            }
        }
    }
    let home_dot = paths.home.join(".opencode");
    if host.is_dir(&home_dot) {
        dirs.push((home_dot, Layer::HomeDotOpencode));
    }
    if let Some(d) = &config_dir_env {
        dirs.push((d.clone(), Layer::ConfigDir));
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut walk_limit = None;
    let mut walk = |dir: &Path, sub: &str, recursive: bool| {
        markdown_files(host, dir, sub, recursive).unwrap_or_else(|w| {
            walk_limit.get_or_insert(w);
            Vec::new()
        })
    };
    for (dir, layer) in dirs {
        if seen.contains(&dir) {
            continue;
        }
        seen.push(dir.clone());
        if dir.to_string_lossy().ends_with(".opencode") || Some(&dir) == config_dir_env.as_ref() {
            for name in ["opencode.json", "opencode.jsonc"] {
                file(&mut steps, dir.join(name), layer);
            }
        }
        // Agents anywhere below their folders, modes only directly in theirs.
        for (sub, recursive, kind) in [
            ("agent", true, MarkdownKind::Agent),
            ("agents", true, MarkdownKind::Agent),
            ("mode", false, MarkdownKind::Mode),
            ("modes", false, MarkdownKind::Mode),
        ] {
            for (path, name) in walk(&dir, sub, recursive) {
                steps.push(Step::Markdown { path, name, kind });
            }
        }
    }
    // 6. OPENCODE_CONFIG_CONTENT.
    if host
        .var("OPENCODE_CONFIG_CONTENT")
        .is_some_and(|s| !s.is_empty())
    {
        steps.push(Step::EnvConfig {
            var: "OPENCODE_CONFIG_CONTENT".to_string(),
            layer: Layer::ConfigContent,
        });
    }
    // 7. Console/org remote config: only when logged in to an org.
    if host.is_file(&paths.data.join("account.json")) {
        notes.push("an OpenCode account is configured: an org's remote config, if any, is fetched by OpenCode and not read by permaudit".to_string());
    }
    // 8. Managed config dir.
    let managed = host
        .var("OPENCODE_TEST_MANAGED_CONFIG_DIR")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/opencode"));
    for name in ["opencode.json", "opencode.jsonc"] {
        file(&mut steps, managed.join(name), Layer::Managed);
    }
    Discovery {
        paths,
        steps,
        config_dirs: seen,
        notes,
        walk_limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_like_node() {
        assert_eq!(
            relative(
                Path::new("/a/b/proj"),
                Path::new("/h/.local/share/opencode/plans/*.md")
            ),
            "../../../h/.local/share/opencode/plans/*.md"
        );
        assert_eq!(
            relative(Path::new("/"), Path::new("/tmp/x/*.md")),
            "tmp/x/*.md"
        );
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/b/c")), "c");
    }
}
