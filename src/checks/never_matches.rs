//! `never-matches` (warning; info for an allow whose input is allowed anyway, and for a
//! `**/` gap under `glob`/`grep`)
//!
//! ## What it finds
//! A pattern that cannot match what its permission is checked against:
//! - an absolute path (also `~/…` and `$HOME/…`, which expand to one, and a Windows path
//!   such as `F:\CD\x`) under `read` or `edit`, which OpenCode checks as paths relative to
//!   the worktree root;
//! - an `external_directory` pattern that matches no `/dir/*` string, which is the only
//!   form OpenCode asks (`/etc` never matches; write `/etc/*`; `"~": "allow"` leaves every
//!   home access asking: write `~/*`). A Windows path (`F:\CD\**`) is judged on Windows
//!   only (`--platform windows`), where the directory asked is `F:\CD\x\*` and it
//!   matches; on another platform nothing is claimed. A relative one
//!   (`.opencode/plans/*.md`, `env:$TMPDIR`) is said to never match, with no directory to
//!   write: only paths outside the project are asked, absolute;
//! - `**/` read as a globstar: `src/**/*.ts` does not match `src/a.ts` and `**/.env` does
//!   not match `.env` at the root (in OpenCode `*` already crosses `/`, `**` is just two
//!   stars, and the `/` after it must be there; `**/.env*` misses `.env` and `.env.local`
//!   alike). A trailing `/**` is not reported: it only misses the directory itself,
//!   which no tool asks about; nor is a leading `**/` under `external_directory`, whose
//!   absolute `/dir/*` subjects it matches at any depth. Nor is a `**/` slip that
//!   loses nothing: under a permission no tool checks (`write:`, reported by
//!   `unchecked-permission`), for a file that lives in the home directory (`**/.ssh/**`,
//!   `**/.netrc`, `**/id_ed25519`: OpenCode checks it as a `../…` path, which `**/`
//!   matches), where the agent's rules already answer the top-level input as this rule
//!   would (a sibling `".netrc": "deny"`, a `*.env` deny, a catch-all), or where a later
//!   rule of the agent decides it anyway (an agent's own `edit: allow` after shared
//!   denies: the rule would not decide the top-level file even if it matched). Under
//!   `glob` or `grep` such a slip is a note: those tools are asked with the search
//!   pattern (a glob, a regex), not a file's path, so the root-level file is not what the
//!   rule weighs; the file itself is `read`'s to protect;
//! - `{a,b}` and `[abc]`, which are literal characters in OpenCode's wildcard, and a
//!   leading `!` (gitignore's negation: `"!.env": "deny"` matches only a name beginning
//!   with `!`, so `.env` stays as it was);
//! - a bash deny or ask written as an exact command with no operand (`"git push": "deny"`,
//!   `"git push --force": "deny"`, `"rm -rf": "deny"`, `"npm publish": "ask"`): the bash
//!   tool checks the whole command, so it matches that text alone, and the command it was
//!   written for, with its operands (`git push --force origin main`, `rm -rf x`), is asked
//!   or allowed (verified on 1.18.34: under `{"*": "allow", "echo -n": "deny"}`, `debug
//!   agent build --tool bash` refuses `echo -n` and runs `echo -n x`). Whoever writes
//!   `"git push": "deny"` means every push, not only the bare command. Reported when the
//!   command with an ordinary operand is decided less strictly (its witness), and
//!   `"git push *"` written in its place would hold: OpenCode's trailing ` *` also matches
//!   the bare `git push` (verified: `"echo -n *": "deny"` refuses `echo -n` and `echo -n
//!   x`), no later rule decides the command instead, and no earlier rule with another
//!   answer lies inside it (`"git push --dry-run *": "allow"` before `"git push": "deny"`:
//!   the rewrite would deny what the author allowed; not reported). Not for a pattern that
//!   has an operand already (`rm -rf /`, `git add .`), names a script or target (`make
//!   test`, `npm run dev`: the text is the complete command), or acts on the whole tree by
//!   a flag, which an operand would only narrow (`git add -A`). The "Always" story of
//!   `always-overrides-deny` at the same rule is then a note. An exact allow likewise,
//!   but only of a program nobody runs bare (`"head": "allow"`, `cat`, `grep`, `rg`, `fd`,
//!   `sort` …: bare, they read the terminal) or of `git diff`, `git log`, `git show`
//!   (whose everyday forms carry flags): `head x` is asked, the allow the author needs
//!   never applies (severity rule clause 2). Not `git status`, whose bare form is the
//!   everyday one;
//! - a bash pattern that needs a chain between commands (`"*&&*": "ask"`, `"*|*": "ask"`,
//!   `"git status* && git diff*": "allow"`, the fork bomb `":(){:|:&};:": "deny"`): the
//!   bash tool asks about each command of a chain on its own (`ls && pwd` is asked as `ls`
//!   and `pwd`), so the pattern never matches a chained command; it matches only a single
//!   command that holds the operator in its own text (quoted, `echo "a && b"`; inside
//!   `$(…)`; `;` escaped, `find … -exec rm {} \;`). Checked on 1.18.34; see
//!   `chain_pattern.rs`. The witness is the chain it was written for (its `*` filled in,
//!   a `*` standing for a whole command with a command the agent allows) and what the
//!   split decides for it;
//! - a bash pattern whose first word is an OpenCode tool's name (`"todowrite *": "allow"`,
//!   `"read": "allow"` under `bash`): it decides a shell command of that name, never the
//!   tool, which its own permission key checks (not `grep`, `patch`, `task`: programs
//!   too; `read` is taken as the tool, see `tool_pattern.rs`); the witness is the tool's
//!   decision today;
//! - a `task` pattern that matches an agent's name only when case is ignored
//!   (`"docfetcher": "allow"` for the agent `DocFetcher`): the task tool checks the name
//!   as written, case-sensitively (outside Windows).
//!
//! A deny or ask that never matches is a warning. So is an allow the agent needs: the
//! input it was written for is asked or denied today (an agent's `edit: {"*": "deny",
//! "/tmp/**": "allow"}` denies every write to /tmp; `"~": "allow"` leaves every home access
//! asking; a `**/*.md` allow beside a `*` deny misses `README.md`): the finding names that
//! input as decided today and says what to write, proven to match it: the
//! `external_directory` form (`/tmp/*`, `~/*`), with `"../*"` under the permission where
//! its own rules refuse the worktree-relative path, or the worktree-relative form of a
//! path inside the project. An allow whose input is allowed anyway is a note; an agent
//! whose tools are all hidden (`compaction`, `title`) is not named for an allow. For a
//! chain pattern and a tool's name under `bash` alike: a deny or ask is a warning when the
//! chain (the tool) it was written for is decided less strictly today (`ls && pwd` allowed
//! under `"*&&*": "ask"`), an allow when it is asked or denied (`todowrite` denied by
//! `"*": "deny"` beside `bash: {"todowrite *": "allow"}`); decided as the rule says anyway,
//! a note.
//!
//! ## Why it matters
//! The rule looks like it protects or permits something and does nothing (or less than it
//! seems).
//!
//! ## Example
//! ```json
//! {"permission": {"edit": {"/home/me/project/secrets/*": "deny"}}}
//! ```
//!
//! ## How to fix
//! Write worktree-relative paths under `read`/`edit` (`secrets/*`), `dir/*` under
//! `external_directory`, one `*` where a globstar was meant, and `"git push *"` for a
//! command with whatever operands it takes. Decide each command of a chain on its own
//! (`"rm *": "deny"`; a chain is denied when any command in it is, allowed when every one
//! is), and write a tool's rule under its own key (`"todowrite": "allow"`).

use super::needed_allow::{self, spelled, windows_absolute};
use super::{Check, Ctx, Finding, Level, bare_command, chain_pattern, tool_pattern};
use crate::glob::automaton::{Budget, DEFAULT_BUDGET, Outcome, intersection};
use crate::glob::wildcard::{Token, Wildcard};
use crate::shell::file::FILE_PERMISSIONS;

pub const CHECK: Check = Check {
    id: "never-matches",
    level: Level::Warning,
    summary: "a pattern that cannot match what its permission is checked against",
    docs: include_str!("never_matches.rs"),
};

/// Can `pattern` match some `external_directory` subject (`/…/*` or `/*`)?
fn matches_a_dir_subject(pattern: &str, ctx: &Ctx<'_>) -> Option<bool> {
    let p = Wildcard::compile(pattern);
    let slash = Token::Lit(b'/' as u16);
    let star = Token::Lit(b'*' as u16);
    let colon = Token::Lit(b':' as u16);
    let mut forms = vec![
        Wildcard {
            tokens: vec![slash, star],
            optional_tail: false,
        },
        Wildcard {
            tokens: vec![slash, Token::Star, slash, star],
            optional_tail: false,
        },
    ];
    // On Windows the directory asked has a drive (`F:\CD\x\*`, `/` to the matcher).
    if ctx.project.platform == crate::glob::wildcard::Platform::Windows {
        forms.extend([
            Wildcard {
                tokens: vec![Token::One, colon, slash, star],
                optional_tail: false,
            },
            Wildcard {
                tokens: vec![Token::One, colon, slash, Token::Star, slash, star],
                optional_tail: false,
            },
        ]);
    }
    let mut inconclusive = false;
    for f in &forms {
        match intersection(
            &[&p, f],
            ctx.project.platform,
            &mut Budget::new(DEFAULT_BUDGET),
        ) {
            Outcome::Witness(_) => return Some(true),
            Outcome::Empty => {}
            Outcome::Inconclusive => inconclusive = true,
        }
    }
    if inconclusive { None } else { Some(false) }
}

/// A `task` pattern that matches no agent's name but would if case did not matter: the
/// first such agent. The task tool asks `task` with the agent's name as written, and
/// OpenCode's wildcard is case-sensitive outside Windows (verified on 1.18.34: with
/// `"task": {"*": "deny", "docfetcher": "allow"}`, `debug agent build --tool task` refuses
/// `DocFetcher` by the `*` deny, and `docfetcher` is "not a valid agent type").
fn task_case_slip<'p>(pattern: &str, ctx: &Ctx<'p>) -> Option<&'p str> {
    use crate::glob::wildcard::Platform;
    if ctx.project.platform == Platform::Windows {
        return None;
    }
    let w = Wildcard::compile(pattern);
    let names = || ctx.project.agents.iter().map(|a| a.name.as_str());
    if names().any(|n| w.is_match(n, Platform::Unix)) {
        return None;
    }
    names().find(|n| w.is_match(n, Platform::Windows))
}

/// Is `last`, the last segment of an `external_directory` pattern, a file's name
/// (`hosts.yml`, `.env`)? OpenCode asks for the directory holding a file.
/// Files kept in the home directory whose names look like directories (no extension):
/// credentials and shell settings people deny by name.
const HOME_FILES: &[&str] = &[
    ".npmrc",
    ".netrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".gitconfig",
    ".bashrc",
    ".bash_profile",
    ".bash_history",
    ".zshrc",
    ".zprofile",
    ".zsh_history",
    ".profile",
    ".env",
    ".yarnrc",
    ".gemrc",
    ".s3cfg",
    ".boto",
    ".vault-token",
    ".dockercfg",
];

/// Files kept in dot-directories whose names have no extension (`~/.ssh/id_rsa`,
/// `~/.aws/credentials`, `~/.kube/config`): their directory rule is the dot-directory's.
const KEY_FILES: &[&str] = &[
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "credentials",
    "known_hosts",
    "authorized_keys",
    "config",
];

pub(super) fn file_name(pattern: &str, last: &str) -> bool {
    !pattern.ends_with('/')
        && !last.contains(['*', '?'])
        && last.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && !ext.is_empty()
                && ext.len() <= 5
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// An absolute `read`/`edit` pattern under the home directory's dot-directories
/// (`~/.local/share/nvim/**`), written so that it matches what OpenCode asks from any
/// project: `*/.local/share/nvim/*`. OpenCode asks a file outside the project as its path
/// relative to the worktree (`../../.local/share/nvim/x.lua`), as many `../` as the project
/// is deep, and `*` matches `/` too. Only under a dot-directory: `*/work/*` would also
/// match the project's own `src/work/…`, a name common inside projects.
pub(super) fn relative_anywhere(pattern: &str, home: &str) -> Option<String> {
    let home = home.trim_end_matches('/');
    if home.is_empty() {
        return None;
    }
    let rest = pattern.strip_prefix(home)?.strip_prefix('/')?;
    let first = rest.split('/').next()?;
    if !first.starts_with('.') || first.len() < 2 || first.contains(['*', '?']) {
        return None;
    }
    Some(collapse_stars(&format!("*/{rest}")))
}

/// Runs of `*` as one (`**` means `*` in OpenCode).
pub(super) fn collapse_stars(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

/// Tools asked with what the model searches for (a glob pattern, a regex), not with a
/// file's path (spec: `glob` the glob pattern string, `grep` the regex string).
pub(super) const SEARCH_PATTERN_TOOLS: &[&str] = &["glob", "grep"];

pub(super) fn diagnose(permission: &str, pattern: &str, ctx: &Ctx<'_>) -> Option<String> {
    let home = ctx.project.loaded.paths().home.display().to_string();
    if (permission == "read" || permission == "edit") && pattern.starts_with('/') {
        let how = if pattern.starts_with(&home) {
            " (a `~` or `$HOME` path expands to one)"
        } else {
            ""
        };
        // What to write instead: the worktree-relative form for a path in the project,
        // else the directory rule OpenCode asks first for a file outside it.
        let worktree = ctx.project.loaded.paths().worktree.display().to_string();
        let inside = pattern
            .strip_prefix(worktree.trim_end_matches('/'))
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty() && worktree != "/");
        let instead = match inside {
            Some(rest) => format!(
                "; it is in the project: write {}",
                serde_json::to_string(rest).unwrap_or_default()
            ),
            None => {
                let dir = pattern.trim_end_matches(['*', '/']);
                // `~/.aws/**` names the directory `.aws` (a dot starts many a home
                // directory's name); only a pattern ending in a name may name a file.
                let names_dir = pattern.len() != dir.len() && pattern[dir.len()..].starts_with('/');
                let dir = if !names_dir
                    && dir
                        .rsplit('/')
                        .next()
                        .is_some_and(|last| last.contains('.') || last.contains('*'))
                {
                    dir.rsplit_once('/').map_or(dir, |(d, _)| d)
                } else {
                    dir
                };
                if let Some(anywhere) = relative_anywhere(pattern, &home) {
                    format!(
                        "; write {} under `{permission}` instead: a file outside the project is asked as a `../…` path, which that pattern matches from any project (`*` matches `/` too); to decide every tool's access there, write {} under `external_directory`",
                        serde_json::to_string(&anywhere).unwrap_or_default(),
                        serde_json::to_string(&format!(
                            "{}/*",
                            super::needed_allow::spelled(dir, &home)
                        ))
                        .unwrap_or_default()
                    )
                } else if dir.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; for files outside the project, OpenCode asks `external_directory` first, with the directory: write {} under `external_directory`",
                        serde_json::to_string(&format!(
                            "{}/*",
                            super::needed_allow::spelled(dir, &home)
                        ))
                        .unwrap_or_default()
                    )
                }
            }
        };
        return Some(format!(
            "`{permission}` is checked against paths relative to the worktree root, so this absolute pattern{how} never matches; outside files are checked as `../…` and through `external_directory`{instead}"
        ));
    }
    if (permission == "read" || permission == "edit") && windows_absolute(pattern) {
        return Some(format!(
            "`{permission}` is checked against paths relative to the worktree root (on Windows too), so this absolute Windows path never matches; outside files are checked as `../…` and through `external_directory`"
        ));
    }
    // A Windows path (`F:\CD\**`): on Windows the directory asked is `F:\CD\x\*`, which it
    // matches (backslashes are `/` to the matcher); elsewhere no such path is ever asked,
    // and the config is plainly written for Windows: no claim either way.
    if permission == "external_directory"
        && windows_absolute(pattern)
        && ctx.project.platform != crate::glob::wildcard::Platform::Windows
    {
        return None;
    }
    if permission == "external_directory" && matches_a_dir_subject(pattern, ctx) == Some(false) {
        let trimmed = pattern.trim_end_matches('/');
        let (parent, last) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
        // A file's name (`hosts.yml`, `.env`): OpenCode asks for the directory holding a
        // file, so `hosts.yml/*` would name a directory that does not exist and never
        // match either.
        let file =
            file_name(pattern, last) || HOME_FILES.contains(&last) || KEY_FILES.contains(&last);
        // A file pattern under `**`/`*` (`**/*.pem`, `**/audit.log`): no directory rule
        // names such files only (`**/*` would be every directory outside the project);
        // files are `read`'s and `edit`'s to decide, asked there as `../…` paths.
        let any_dir = parent.chars().all(|c| c == '*' || c == '/');
        let file_glob = !pattern.ends_with('/')
            && last.rsplit_once('.').is_some_and(|(_, ext)| {
                !ext.is_empty() && ext.len() <= 5 && ext.chars().all(|c| c.is_ascii_alphanumeric())
            });
        if file_glob && any_dir {
            return Some(format!(
                "`external_directory` is asked with `/dir/*` strings only (a file outside the project is asked as the directory holding it), so {} never matches, and no directory rule names such files alone; to decide them, write {} under `read` and `edit`, where a file outside the project is asked as a `../…` path",
                serde_json::to_string(pattern).unwrap_or_default(),
                serde_json::to_string(&if last.starts_with('*') {
                    last.to_string()
                } else {
                    format!("*/{last}")
                })
                .unwrap_or_default(),
            ));
        }
        // Not an absolute path (`.opencode/plans/*.md`, `env:$TMPDIR`): no directory to
        // name; only paths outside the project are asked, absolute, and only `~` and
        // `$HOME` are expanded.
        if !pattern.starts_with('/') && !windows_absolute(pattern) {
            return Some(format!(
                "`external_directory` is asked only for paths outside the project, as absolute `/dir/*` strings (only `~` and `$HOME` are expanded), so {} never matches",
                serde_json::to_string(pattern).unwrap_or_default(),
            ));
        }
        // As the author would write them: `~` for the home directory they expand from.
        let (shown, parent, trimmed) = (
            spelled(pattern, &home),
            spelled(parent, &home),
            spelled(trimmed, &home),
        );
        // A file right in the home directory (`~/.npmrc`, `~/.netrc`, `~/notes.txt`): its
        // directory rule would be `~/*`, every file at home (blind fresh-12 B: roborew,
        // where `~/.npmrc/*` was offered and the read still ran). `read` and `edit` decide
        // it, asked as a `../…` path; checked on 1.18.34: `"*/.npmrc": "deny"` under
        // `read` denies reading `~/.npmrc`.
        let home_file = file && matches!(parent.as_str(), "~" | "$HOME" | "");
        if home_file {
            return Some(format!(
                "`external_directory` is asked with `/dir/*` strings only (a file outside the project is asked as the directory holding it), so {} never matches, and the directory rule would be `{}/*`, every file in the home directory; to decide this file, write {} under `read` and `edit`, where a file outside the project is asked as a `../…` path",
                serde_json::to_string(&shown).unwrap_or_default(),
                if parent.is_empty() {
                    "~"
                } else {
                    parent.as_str()
                },
                serde_json::to_string(&format!("*/{last}")).unwrap_or_default(),
            ));
        }
        if file && !parent.is_empty() {
            return Some(format!(
                "`external_directory` is asked with `/dir/*` strings only (a file outside the project is asked as the directory holding it), so {} never matches; write `{parent}/*`, which covers every file in {parent}",
                serde_json::to_string(&shown).unwrap_or_default(),
            ));
        }
        return Some(format!(
            "`external_directory` is asked with `/dir/*` strings only, so {} never matches; write `{trimmed}/*`",
            serde_json::to_string(&shown).unwrap_or_default(),
        ));
    }
    // `!.env` written as gitignore's negation: OpenCode's wildcard has none, so it matches
    // only an input that begins with `!` (blind fresh-6 B: vbenoot26's `"!.env": "deny"`
    // under `read` left `.env` readable).
    if let Some(rest) = pattern.strip_prefix('!')
        && !rest.is_empty()
        && permission != "bash"
    {
        return Some(format!(
            "OpenCode's wildcard has no negation, so {} matches only a name that begins with `!`; the rule decides nothing it was written for. To decide {} itself, write it without the `!`",
            serde_json::to_string(pattern).unwrap_or_default(),
            serde_json::to_string(rest).unwrap_or_default(),
        ));
    }
    if permission == "task"
        && let Some(name) = task_case_slip(pattern, ctx)
    {
        return Some(format!(
            "`task` matches agent names case-sensitively, so {} matches no agent; the agent is named {}",
            serde_json::to_string(pattern).unwrap_or_default(),
            serde_json::to_string(name).unwrap_or_default(),
        ));
    }
    let braces = pattern
        .find('{')
        .is_some_and(|o| pattern[o..].contains(',') && pattern[o..].contains('}'));
    let brackets = pattern
        .find('[')
        .is_some_and(|o| pattern[o..].contains(']'));
    if braces || brackets {
        return Some(format!(
            "{} uses {} syntax, which OpenCode's wildcard reads as literal characters",
            serde_json::to_string(pattern).unwrap_or_default(),
            if braces {
                "brace `{a,b}`"
            } else {
                "bracket `[abc]`"
            }
        ));
    }
    None
}

/// Names that live in the home directory, not in a project: a `**/` rule for them is
/// about files outside the worktree, which OpenCode checks as `../…` paths that `**/`
/// matches (`**/.ssh/**` matches `../../.ssh/id_rsa`).
const HOME_ONLY: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".kube",
    ".local",
    ".azure",
    ".password-store",
    ".pgpass",
    ".docker",
    ".pypirc",
    ".git-credentials",
    // SSH keys (`id_ed25519`, `id_ed25519.pub`) live in `~/.ssh`.
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];

/// A file the author meant a `**/`-less pattern to match, in words a person recognises: a
/// `*` that starts a name before an extension is `a` (`*.key` → `a.key`, but `*.env` →
/// `.env`), a `*` that ends the pattern after a `/` is `file` (`secrets/*` →
/// `secrets/file`), every other `*` is nothing (`*credentials*` → `credentials`).
fn meant(base: &str) -> String {
    let chars: Vec<char> = base.chars().collect();
    let mut out = String::new();
    for (k, &c) in chars.iter().enumerate() {
        if c != '*' {
            out.push(c);
            continue;
        }
        let starts = k == 0 || chars[k - 1] == '/';
        let rest: String = chars[k + 1..].iter().collect();
        if k + 1 == chars.len() && (k == 0 || chars[k - 1] == '/') {
            out.push_str("file");
        } else if k + 1 == chars.len() && chars[k - 1] == '.' {
            out.push_str("local");
        } else if starts && rest.starts_with('.') && !rest.starts_with(".env") {
            out.push('a');
        }
    }
    out
}

/// `**/` read as a globstar: what the author meant it to match at the top of the
/// worktree (the `**/` gone, other stars as ordinary text), when the pattern misses it,
/// and the message.
fn globstar(pattern: &str, ctx: &Ctx<'_>) -> Vec<(String, String)> {
    if !pattern.contains("**/") {
        return Vec::new();
    }
    let bare = collapse_stars(&pattern.replace("**/", ""));
    let first = meant(&bare);
    // A `*` right after a name (`.env*`) is meant for the name alone and for it with a
    // suffix: `**/.env*` misses both `.env` and `.env.local` at the top.
    let suffixed = (bare.ends_with('*')
        && !bare.ends_with("/*")
        && !bare.ends_with(".*")
        && !first.is_empty())
    .then(|| format!("{first}.local"));
    let platform = ctx.project.platform;
    let w = Wildcard::compile(pattern);
    let starred =
        serde_json::to_string(&collapse_stars(&pattern.replace("**/", "*"))).unwrap_or_default();
    std::iter::once(first)
        .chain(suffixed)
        .filter(|m| !m.is_empty() && !w.is_match(m, platform))
        .map(|meant| {
            let shown = serde_json::to_string(&meant).unwrap_or_default();
            // `research/**/PLAN.md` → `research/*PLAN.md` would also match
            // `research/a/OLD_PLAN.md` (judged harmful, blind fresh-4 A): after a directory,
            // a `**/` followed by a name is fixed exactly by the top-level form beside it.
            let write = if named_under_directory(pattern) && !meant.contains('*') {
                format!(
                    "if the top-level file is meant too, add {shown} beside it with the same action ({starred} would also match other names)"
                )
            } else {
                format!("write {starred}")
            };
            let message = format!(
                "`**/` is not a globstar in OpenCode: {} does not match {shown} (`*` already crosses `/`, and the `/` after `**` must be there); {write}",
                serde_json::to_string(pattern).unwrap_or_default(),
            );
            (meant, message)
        })
        .collect()
}

/// Is the pattern's `**/` after a directory and followed by a name (`research/**/PLAN.md`):
/// a file kept in each subdirectory, more often than right under the directory?
fn named_under_directory(pattern: &str) -> bool {
    pattern.find("**/").is_some_and(|i| {
        pattern[..i].ends_with('/')
            && !pattern[i + 3..].starts_with('*')
            && !pattern[i + 3..].is_empty()
    })
}

/// Is the `**/` slip of rule `r` harmless for `agent`: a permission nothing checks, a file
/// that lives outside any project, or a top-level input the agent's rules already answer
/// as this rule would (a sibling `.netrc` deny, a `*.env` deny, a catch-all)?
fn globstar_harmless(
    ctx: &Ctx<'_>,
    agent: &crate::agents::Agent,
    i: usize,
    r: &crate::model::Rule,
    meant: &str,
) -> bool {
    // A permission nothing checks: `unchecked-permission` reports the block itself.
    if crate::model::meaning::never_checked(&r.permission).is_some() {
        return true;
    }
    let first = meant.split('/').next().unwrap_or(meant);
    let home_only = |h: &&str| {
        first
            .strip_prefix(*h)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    };
    if HOME_ONLY.iter().any(home_only) {
        return true;
    }
    // Had the rule matched `meant`, it would decide it only where no later rule of the
    // agent does: a later rule deciding it (an agent's own `edit: allow` after the shared
    // denies) makes the slip change nothing for this agent, as does an earlier rule (or
    // the default) answering it as this rule would.
    let literal = !r.permission.contains(['*', '?']);
    literal
        && ctx
            .witness(
                agent,
                &crate::glob::analysis::Input::new(&r.permission, meant),
            )
            .is_some_and(|w| w.rule.is_some_and(|j| j > i) || w.action == r.action.effective())
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let start = out.len();
    // One finding per agent; `consolidate` makes it one per place, naming every agent.
    // What a rule's text says is the same in every agent: asked once per text.
    type Said = (Option<String>, Vec<(String, String)>);
    let mut said: std::collections::HashMap<(&str, &str), Said> = Default::default();
    let mut splitter = None;
    for (agent, i, r) in ctx.written() {
        let (diagnosed, star) = said
            .entry((r.permission.as_str(), r.pattern.as_str()))
            .or_insert_with(|| {
                let diagnosed = diagnose(&r.permission, &r.pattern, ctx);
                // `external_directory` is asked with absolute `/dir/*` strings, which a
                // leading `**/` matches at any depth (`**/.cargo/registry/src/**` matches
                // `/home/me/.cargo/registry/src/x/*`): no top-level path is meant there.
                let star = match diagnosed {
                    None if r.permission != "external_directory" => globstar(&r.pattern, ctx),
                    _ => Vec::new(),
                };
                (diagnosed, star)
            });
        let star = star
            .iter()
            .find(|(meant, _)| !globstar_harmless(ctx, agent, i, r, meant));
        // An allow for an agent whose tools are all hidden (`compaction`, `title`, …):
        // it can make no call the allow was written for, so nothing is lost.
        if agent.is_internal()
            && r.action.effective() == crate::model::Effect::Allow
            && (diagnosed.is_some() || star.is_some())
        {
            continue;
        }
        let found = diagnosed
            .clone()
            .or_else(|| star.map(|(_, message)| message.clone()));
        // An exact bash deny or ask (`git push --force`, `rm -rf`): it matches that text
        // alone, and the command it was written for, with its operands, is decided less
        // strictly.
        if found.is_none()
            && let Some(slip) = bare_command::slip(
                ctx,
                agent,
                i,
                splitter.get_or_insert_with(|| ctx.splitter()),
            )
        {
            out.push(
                Finding::at_rule(&CHECK, agent, i, slip.message)
                    .with_witnesses(vec![slip.witness])
                    .with_help(slip.help),
            );
            continue;
        }
        // A bash pattern that needs a chain (`*&&*`, `git status* && git diff*`): the bash
        // tool asks about each command of a chain on its own.
        if found.is_none()
            && let Some(chain) = chain_pattern::slip(
                ctx,
                agent,
                i,
                splitter.get_or_insert_with(|| ctx.splitter()),
            )
        {
            if !(agent.is_internal() && r.action.effective() == crate::model::Effect::Allow) {
                out.push(
                    Finding::at_rule(&CHECK, agent, i, chain.message)
                        .with_level(chain.level)
                        // A note names its input in words: agents whose rules decide it
                        // by different rules stay one finding.
                        .with_witnesses(if chain.level == Level::Warning {
                            vec![chain.witness]
                        } else {
                            Vec::new()
                        })
                        .with_help(chain.help),
                );
            }
            continue;
        }
        // A tool's name under `bash` (`"todowrite *": "allow"`): it decides a shell
        // command of that name, never the tool.
        if found.is_none()
            && let Some(m) = tool_pattern::slip(ctx, agent, i)
        {
            if !(agent.is_internal() && r.action.effective() == crate::model::Effect::Allow) {
                out.push(
                    Finding::at_rule(&CHECK, agent, i, m.message)
                        .with_level(m.level)
                        // A note names its input in words: agents whose rules decide it
                        // by different rules stay one finding.
                        .with_witnesses(if m.level == Level::Warning {
                            vec![m.witness]
                        } else {
                            Vec::new()
                        })
                        .with_help(m.help),
                );
            }
            continue;
        }
        if let Some(mut message) = found {
            // The severity rule (docs/checks.md): a deny or ask that never matches protects
            // nothing: a warning (clause 1). An allow the agent needs (the input it was
            // written for is asked or denied today) that never applies: a warning (clause
            // 2). An allow whose input is allowed anyway changes nothing the author relies
            // on: info (clause 3). So is a `**/` gap under `glob` or `grep`: the rule takes
            // effect on the search patterns they are asked with (a glob, a regex), and the
            // root-level file the message names is `read`'s to protect, reported there.
            let search = SEARCH_PATTERN_TOOLS.contains(&r.permission.as_str());
            let allow = r.action.effective() == crate::model::Effect::Allow;
            let mut f = Finding::at_rule(&CHECK, agent, i, String::new());
            let level = if search && diagnosed.is_none() {
                Level::Info
            } else if !allow {
                Level::Warning
            } else if let Some(n) = diagnosed
                .as_ref()
                .and_then(|_| needed_allow::needed(ctx, agent, i))
            {
                message.push_str(&format!("; the agent needs it: {}", n.today));
                f = f
                    .with_witnesses(n.witness.into_iter().collect())
                    .with_help(n.help);
                Level::Warning
            } else if let Some((meant, _)) = star.filter(|_| {
                diagnosed.is_none()
                    && FILE_PERMISSIONS.contains(&r.permission.as_str())
                    && (!r.pattern.starts_with("**/") || top_directory(&r.pattern))
                    // `research/**/PLAN.md`: one file per study, the top-level one rarely
                    // meant (judged FP, blind fresh-4 A): a note.
                    && !named_under_directory(&r.pattern)
            }) && let Some(w) = ctx
                .witness_of(agent, &r.permission, meant)
                .filter(|w| needed_allow::openable(agent, i, w))
            {
                // Not harmless: the input right under the directory it names (`src/a.cs`
                // for `src/**/*.cs`) is decided by an earlier rule or the default, and not
                // allowed. A leading `**/` misses the top-level files alone, the rarer place
                // for what such an allow names (`**/*Test*`): a note; not a directory named
                // after it (`**/tests/**`: a workspace's top-level `tests/` is the common
                // place, blind fresh-14 C yq3's tester, whose edits there are denied).
                message.push_str(&format!(
                    "; the agent needs it: {} {} is {} today",
                    r.permission,
                    serde_json::to_string(meant).unwrap_or_default(),
                    if w.action == crate::model::Effect::Ask {
                        "asked"
                    } else {
                        "denied"
                    }
                ));
                f = f.with_witnesses(vec![w]);
                Level::Warning
            } else {
                Level::Info
            };
            f.message = message;
            out.push(f.with_level(level));
        }
    }
    // An allow some agents need (a warning, severity rule clause 2) and others do not (a
    // note, clause 3) is one place: the warning speaks for it, the agents that lose
    // nothing are not named.
    let needed: std::collections::HashSet<_> = out[start..]
        .iter()
        .filter(|f| f.level == Level::Warning)
        .filter_map(|f| f.loc)
        .collect();
    let mut k = 0;
    out.retain(|f| {
        k += 1;
        k <= start || !(f.level == Level::Info && f.loc.is_some_and(|l| needed.contains(&l)))
    });
}

/// `**/NAME/…`: a leading `**/` before a directory named literally (`**/tests/**`), which
/// people keep at a project's top level too. Not a system directory (`**/tmp/opencode/**`
/// is written for `/tmp/opencode/…`, which it matches).
fn top_directory(pattern: &str) -> bool {
    const SYSTEM: &[&str] = &[
        "tmp", "T", "var", "private", "home", "Users", "opt", "etc", "usr", "mnt", "Volumes",
        "root", "proc", "dev", "run", "nix",
    ];
    pattern
        .strip_prefix("**/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(dir, _)| {
            !dir.is_empty() && !dir.contains(['*', '?', '[', '{']) && !SYSTEM.contains(&dir)
        })
}
