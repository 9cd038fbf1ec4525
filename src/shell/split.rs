//! Splitting a bash command into the parts OpenCode 1.18.34 asks about (spec §7), and the
//! `external_directory` directories its path arguments reach.
//!
//! This is the bundle's `ShellTool.collect` for a bash shell (the PowerShell and `cmd`
//! branches are not modelled): for every node of type `command` in the tree-sitter-bash
//! parse, in the tree's pre-order (`rootNode.descendantsOfType("command")`, nested commands
//! included: pipelines, lists, `$(…)`, subshells, `if` bodies, every line of a script):
//!
//! - its **tokens** are its direct children of type `command_name`, `word`, `string`,
//!   `raw_string` and `concatenation` (expansions, numbers, assignments and redirections
//!   are left out);
//! - when the first token is one of `cd chdir popd pushd push-location set-location`, or
//!   there is no token, the part adds no pattern;
//! - otherwise it adds its **pattern**: the node's source text, or its parent's when the
//!   parent is a `redirected_statement`, trimmed at both ends as JavaScript's `trim()`
//!   does; and its "Always" pattern ([`super::arity`]);
//! - when the first token is a path-taking command (`rm cp mv mkdir touch chmod chown cat`,
//!   the `cd` family, and the PowerShell names, all case-sensitive for bash), each later
//!   token not starting with `-` (nor `+` for `chmod`) is resolved: surrounding matching
//!   quotes removed, `~` and `~/` expanded to HOME, cut at the first `?`, `*` or `[` (a
//!   token starting with one is skipped), skipped when it holds `$` (so `$HOME/x` is
//!   **not** expanded for bash, contrary to the spec's summary: the bundle expands `$HOME`
//!   and `$PWD` only for PowerShell), starts with `(` or `@(` or holds a backquote, then
//!   `path.resolve(cwd, arg)`. A path inside the start directory or the worktree (unless
//!   the worktree is `/`) is fine; any other adds the path itself when it is an existing
//!   directory, else its parent, to the `external_directory` ask as `<dir>/*`.
//!
//! The patterns and "Always" patterns are JavaScript `Set`s: duplicates keep their first
//! position. Asking order (bundle `ShellTool.ask`): the `external_directory` ask first (if
//! any directory), then the `bash` ask (if any pattern).
//!
//! The grammar: the 1.18.34 binary embeds tree-sitter-bash **0.25.0** (its wasm's
//! `TSLanguage` header: ABI 15, 280 symbols, 175 tokens, 29 external tokens, 7,671 states,
//! 528 large states, 159 production ids, 19 fields — the crate's `parser.c` for 0.25.0;
//! 0.25.1 has 7,571 states and 174 tokens) run by web-tree-sitter **0.25.10**; we use the
//! `tree-sitter-bash = "=0.25.0"` and `tree-sitter = "0.25.10"` crates. Evidence in
//! `docs/research/D-bash.md`. Pure: the one question about the machine (is this path a
//! directory?) is a function the caller passes in.

use super::arity;
use crate::syntax::js::{js_space, js_trim};
use tree_sitter::{Node, Parser, Tree};

/// Commands whose name keeps them out of the asked patterns (bundle `He`).
pub const NO_PATTERN: &[&str] = &[
    "cd",
    "chdir",
    "popd",
    "pushd",
    "push-location",
    "set-location",
];

/// Commands whose arguments are checked as paths (bundle `Bi`): [`NO_PATTERN`] and these.
pub const PATH_TAKING: &[&str] = &[
    "rm",
    "cp",
    "mv",
    "mkdir",
    "touch",
    "chmod",
    "chown",
    "cat",
    "get-content",
    "set-content",
    "add-content",
    "copy-item",
    "move-item",
    "remove-item",
    "new-item",
    "rename-item",
];

const TOKEN_KINDS: &[&str] = &[
    "command_name",
    "word",
    "string",
    "raw_string",
    "concatenation",
];

/// One `command` node of the parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The text OpenCode checks (trimmed; the redirected statement's when redirected).
    pub text: String,
    /// Byte range of that text in the command.
    pub range: (usize, usize),
    /// The tokens (see the module docs), with their text.
    pub tokens: Vec<String>,
    /// `None` when the part adds no pattern (the `cd` family, or no token).
    pub always: Option<String>,
}

impl Part {
    /// Does OpenCode ask `bash` about this part?
    pub fn asked(&self) -> bool {
        self.always.is_some()
    }
}

/// A path argument that reaches outside the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// The argument as written.
    pub arg: String,
    /// The resolved path.
    pub path: String,
    /// The directory asked about (the path when it is a directory, else its parent).
    pub dir: String,
    /// Index of the part it came from.
    pub part: usize,
}

/// What OpenCode asks for one bash command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// Every `command` node, in pre-order, including those that add no pattern.
    pub parts: Vec<Part>,
    /// Arguments outside the project, in order (one per argument; directories may repeat).
    pub external: Vec<External>,
    /// The `external_directory` patterns (`<dir>/*`), distinct, first position kept.
    pub external_patterns: Vec<String>,
    /// The `bash` patterns, distinct, first position kept.
    pub patterns: Vec<String>,
    /// The "Always" patterns, distinct, first position kept.
    pub always: Vec<String>,
}

impl Request {
    /// The arguments that led to one `external_directory` pattern, in order.
    pub fn arguments_for(&self, pattern: &str) -> Vec<&str> {
        self.external
            .iter()
            .filter(|e| dir_pattern(&e.dir) == pattern)
            .map(|e| e.arg.as_str())
            .collect()
    }
}

/// Where the command runs, as OpenCode sees it.
pub struct Env<'a> {
    /// The instance directory (where OpenCode started; the bash tool's default cwd).
    pub cwd: &'a str,
    /// The worktree root (`/` outside git).
    pub worktree: &'a str,
    /// `os.homedir()`.
    pub home: &'a str,
    /// Is this absolute path an existing directory? (The only machine question.)
    pub is_dir: &'a dyn Fn(&str) -> bool,
}

/// The directories of an [`Env`] as owned strings (from a project's `Paths`), so an `Env`
/// can borrow them with the `is_dir` answer of whichever machine is asked.
#[derive(Debug, Clone)]
pub struct Places {
    pub cwd: String,
    pub worktree: String,
    pub home: String,
}

impl Places {
    pub fn of(paths: &crate::discover::Paths) -> Places {
        Places {
            cwd: paths.cwd.to_string_lossy().into_owned(),
            worktree: paths.worktree.to_string_lossy().into_owned(),
            home: paths.home.to_string_lossy().into_owned(),
        }
    }

    pub fn env<'a>(&'a self, is_dir: &'a dyn Fn(&str) -> bool) -> Env<'a> {
        Env {
            cwd: &self.cwd,
            worktree: &self.worktree,
            home: &self.home,
            is_dir,
        }
    }
}

/// A reusable tree-sitter-bash parser. It remembers the parts of every command it split:
/// the checks ask about the same commands for every agent.
pub struct Splitter {
    parser: Parser,
    known: std::collections::HashMap<String, Vec<Part>>,
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter::new()
    }
}

impl Splitter {
    pub fn new() -> Splitter {
        let mut parser = Parser::new();
        // The grammar is compiled in; its ABI (15) is one this runtime accepts.
        let _ = parser.set_language(&tree_sitter_bash::LANGUAGE.into());
        Splitter {
            parser,
            known: std::collections::HashMap::new(),
        }
    }

    fn parse(&mut self, command: &str) -> Option<Tree> {
        self.parser.parse(command, None)
    }

    /// The parts of `command` (no directory side checks).
    pub fn parts(&mut self, command: &str) -> Vec<Part> {
        if let Some(parts) = self.known.get(command) {
            return parts.clone();
        }
        let parts = match self.parse(command) {
            Some(tree) => collect_parts(&tree, command),
            None => Vec::new(),
        };
        self.known.insert(command.to_string(), parts.clone());
        parts
    }

    /// How many commands' parts it remembers.
    pub fn known(&self) -> usize {
        self.known.len()
    }

    /// Everything OpenCode asks for `command`.
    pub fn request(&mut self, command: &str, env: &Env<'_>) -> Request {
        let parts = self.parts(command);
        build_request(parts, env)
    }
}

/// Split once with a fresh parser (see [`Splitter`] to split many).
pub fn request(command: &str, env: &Env<'_>) -> Request {
    Splitter::new().request(command, env)
}

/// Every `command` node in pre-order (web-tree-sitter's `descendantsOfType` walk).
fn command_nodes<'t>(tree: &'t Tree) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.kind() == "command" {
            out.push(node);
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

fn collect_parts(tree: &Tree, src: &str) -> Vec<Part> {
    let text = |n: &Node<'_>| src.get(n.start_byte()..n.end_byte()).unwrap_or("");
    command_nodes(tree)
        .into_iter()
        .map(|node| {
            let mut tokens = Vec::new();
            for i in 0..node.child_count() {
                if let Some(c) = node.child(i)
                    && TOKEN_KINDS.contains(&c.kind())
                {
                    tokens.push(text(&c).to_string());
                }
            }
            let whole = match node.parent() {
                Some(p) if p.kind() == "redirected_statement" => p,
                _ => node,
            };
            let raw = text(&whole);
            let trimmed = js_trim(raw);
            let start = whole.start_byte() + (raw.len() - raw.trim_start_matches(js_space).len());
            let asked = tokens
                .first()
                .is_some_and(|t| !NO_PATTERN.contains(&t.as_str()));
            let always = asked.then(|| {
                let t: Vec<&str> = tokens.iter().map(String::as_str).collect();
                arity::always_pattern(&t)
            });
            Part {
                text: trimmed.to_string(),
                range: (start, start + trimmed.len()),
                tokens,
                always,
            }
        })
        .collect()
}

fn build_request(parts: Vec<Part>, env: &Env<'_>) -> Request {
    let mut req = Request::default();
    for (k, part) in parts.iter().enumerate() {
        let Some(name) = part.tokens.first() else {
            continue;
        };
        if PATH_TAKING.contains(&name.as_str()) || NO_PATTERN.contains(&name.as_str()) {
            for arg in part.tokens[1..]
                .iter()
                .filter(|t| !(t.starts_with('-') || name == "chmod" && t.starts_with('+')))
            {
                let Some(path) = arg_path(arg, env) else {
                    continue;
                };
                if contains_path(env, &path) {
                    continue;
                }
                let dir = if (env.is_dir)(&path) {
                    path.clone()
                } else {
                    dirname(&path)
                };
                let pattern = dir_pattern(&dir);
                push_unique(&mut req.external_patterns, pattern);
                req.external.push(External {
                    arg: arg.clone(),
                    path,
                    dir,
                    part: k,
                });
            }
        }
        if let Some(a) = &part.always {
            push_unique(&mut req.patterns, part.text.clone());
            push_unique(&mut req.always, a.clone());
        }
    }
    req.parts = parts;
    req
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// `ShellTool.argPath` for bash: `None` when the argument is not checked.
fn arg_path(arg: &str, env: &Env<'_>) -> Option<String> {
    let unquoted = strip_quotes(arg);
    let expanded = expand_home(unquoted, env.home);
    let cut = cut_glob(&expanded)?;
    if cut.is_empty() || dynamic(cut) {
        return None;
    }
    Some(resolve(env.cwd, cut))
}

/// Bundle `Xe`: one pair of matching surrounding quotes removed.
fn strip_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// Bundle `Be`: `~` → HOME, `~/x` (or `~\x`) → `path.join(HOME, x)`.
fn expand_home(s: &str, home: &str) -> String {
    if s == "~" {
        return home.to_string();
    }
    match s.strip_prefix("~/").or_else(|| s.strip_prefix("~\\")) {
        Some(rest) => join(home, rest),
        None => s.to_string(),
    }
}

/// Bundle `os`: cut at the first `?`, `*` or `[`; `None` when that is the first character.
fn cut_glob(s: &str) -> Option<&str> {
    match s.find(['?', '*', '[']) {
        None => Some(s),
        Some(0) => None,
        Some(i) => Some(&s[..i]),
    }
}

/// Bundle `xi` for bash: a subshell, expansion or variable the bundle does not resolve.
fn dynamic(s: &str) -> bool {
    s.starts_with('(')
        || s.starts_with("@(")
        || s.contains("$(")
        || s.contains("${")
        || s.contains('`')
        || s.contains('$')
}

/// `Instance.containsPath`: inside the instance directory, or the worktree unless it is `/`.
pub fn contains_path(env: &Env<'_>, path: &str) -> bool {
    contains(env.cwd, path) || (env.worktree != "/" && contains(env.worktree, path))
}

/// `Filesystem.contains(parent, child)` (`path.relative` is `""`, or neither absolute nor
/// `..`, nor starting with `../`) for normalised absolute paths.
fn contains(parent: &str, child: &str) -> bool {
    let parent = resolve("/", parent);
    let child = resolve("/", child);
    parent == "/"
        || child == parent
        || child
            .strip_prefix(parent.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Node's `path.posix.normalize` (keeps a trailing slash; `.`/`..` folded).
fn normalize(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let absolute = p.starts_with('/');
    let trailing = p.ends_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let mut out = parts.join("/");
    if out.is_empty() && !absolute {
        out = ".".into();
    }
    if trailing && !out.is_empty() {
        out.push('/');
    }
    if absolute {
        out.insert(0, '/');
    }
    out
}

/// Node's `path.posix.join(a, b)`.
fn join(a: &str, b: &str) -> String {
    let joined = match (a.is_empty(), b.is_empty()) {
        (true, true) => String::new(),
        (true, false) => b.to_string(),
        (false, true) => a.to_string(),
        (false, false) => format!("{a}/{b}"),
    };
    normalize(&joined)
}

/// Node's `path.posix.resolve(base, p)` (absolute, normalised, no trailing slash).
pub(crate) fn resolve(base: &str, p: &str) -> String {
    let whole = if p.starts_with('/') {
        p.to_string()
    } else {
        format!("{base}/{p}")
    };
    let n = normalize(&format!("/{whole}"));
    if n.len() > 1 {
        n.trim_end_matches('/').to_string()
    } else {
        n
    }
}

/// Node's `path.posix.dirname` of a resolved path.
pub(crate) fn dirname(p: &str) -> String {
    match p.rfind('/') {
        Some(0) | None => "/".into(),
        Some(i) => p[..i].to_string(),
    }
}

/// The `external_directory` pattern of a directory: `path.join(dir, "*")`.
pub fn dir_pattern(dir: &str) -> String {
    join(dir, "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(is_dir: &dyn Fn(&str) -> bool) -> Env<'_> {
        Env {
            cwd: "/p",
            worktree: "/p",
            home: "/h",
            is_dir,
        }
    }

    fn texts(cmd: &str) -> Vec<String> {
        let no = |_: &str| false;
        request(cmd, &env(&no)).patterns
    }

    #[test]
    fn spec_examples() {
        assert_eq!(texts("echo hi > /dev/null"), ["echo hi > /dev/null"]);
        assert_eq!(texts("FOO=1 echo hi"), ["FOO=1 echo hi"]);
        assert_eq!(texts("\"echo\" hi"), ["\"echo\" hi"]);
        assert_eq!(texts("  echo   hi  "), ["echo   hi"]);
        assert_eq!(texts("x=$(echo hi)"), ["echo hi"]);
        assert_eq!(texts("bash -c 'pwd'"), ["bash -c 'pwd'"]);
        assert_eq!(texts("cd . && echo hi"), ["echo hi"]);
        assert_eq!(texts("echo a\necho b"), ["echo a", "echo b"]);
        assert_eq!(texts("echo $(pwd) | cat"), ["echo $(pwd)", "pwd", "cat"]);
        assert_eq!(texts("echo a; echo a"), ["echo a"]);
    }

    #[test]
    fn always_patterns() {
        let no = |_: &str| false;
        let r = request("git push --force && rm -rf x", &env(&no));
        assert_eq!(r.always, ["git push *", "rm *"]);
    }

    #[test]
    fn external_dirs() {
        let dirs = |s: &str| s == "/etc" || s == "/tmp" || s == "/var";
        let r = request(
            "cat /etc/passwd ~/x/y /tmp \"/tmp/a b\" $HOME/z *.txt -r ./in /var/*.log && ls /opt",
            &env(&dirs),
        );
        assert_eq!(
            r.external_patterns,
            ["/etc/*", "/h/x/*", "/tmp/*", "/var/*"]
        );
        let r = request("cd /etc && echo hi", &env(&dirs));
        assert_eq!(r.external_patterns, ["/etc/*"]);
        assert_eq!(r.patterns, ["echo hi"]);
        let r = request("chmod +x /etc/a", &env(&dirs));
        assert_eq!(r.external_patterns, ["/etc/*"]);
    }

    #[test]
    fn paths_like_node() {
        assert_eq!(resolve("/p", "../q/./r/"), "/q/r");
        assert_eq!(resolve("/p", "/"), "/");
        assert_eq!(join("/h", "a/"), "/h/a/");
        assert_eq!(dirname("/a"), "/");
        assert!(contains("/p", "/p"));
        assert!(contains("/p", "/p/..x"));
        assert!(!contains("/p", "/pq"));
        assert_eq!(js_trim("\u{feff} a \u{85}"), "a \u{85}");
    }
}
