//! What a permission name and a pattern mean to OpenCode 1.18.34, in words: which tools
//! check a permission and with what input (docs/opencode-permissions.md §2.5), and what
//! `*`, `**`, `?` and a trailing ` *` really match (§1). The editor's hover says this where
//! the cursor is; nothing here decides anything.

use crate::glob::{Platform, Wildcard};

/// The tools that check `permission`, and the input they match its patterns against.
const CHECKS: &[(&str, &str)] = &[
    (
        "read",
        "the read tool, with the file's path relative to the worktree (`src/a.ts`; a file outside it as `../…`, after `external_directory`), and MCP resource reads (`mcp:<server>:<uri>`)",
    ),
    (
        "edit",
        "the edit, write and apply_patch tools, with each file's path relative to the worktree (`src/a.ts`; a file outside it as `../…`, after `external_directory`)",
    ),
    (
        "glob",
        "the glob tool, with the glob pattern it searches for",
    ),
    (
        "grep",
        "the grep tool, with the regular expression it searches for",
    ),
    (
        "bash",
        "the bash tool, once per simple command of the command line (`git status && rm x` asks `git status` and `rm x`); answering \"Always\" stores the command's arity prefix with ` *` (`git push *`)",
    ),
    (
        "external_directory",
        "every file tool and bash path argument outside the worktree, with the directory as `<dir>/*` (`/tmp/*`, `/home/me/.ssh/*`), before the tool's own permission",
    ),
    ("task", "the task tool, with the subagent's name"),
    ("webfetch", "the webfetch tool, with the URL"),
    ("websearch", "the websearch tool, with the query"),
    ("skill", "the skill tool, with the skill's name"),
    ("todowrite", "the todowrite tool, with the pattern `*`"),
    ("lsp", "the (experimental) lsp tool, with the pattern `*`"),
    (
        "doom_loop",
        "the repeated-call guard, with the name of the tool called again and again",
    ),
    (
        "question",
        "nothing at run time: only whether the question tool is shown (a last `* deny` hides it)",
    ),
    (
        "plan_enter",
        "nothing at run time: only whether the tool is shown (a last `* deny` hides it)",
    ),
    (
        "plan_exit",
        "nothing at run time: only whether the tool is shown (a last `* deny` hides it)",
    ),
];

/// Permission names that parse but that nothing checks in 1.18.34, and why.
const NEVER: &[(&str, &str)] = &[
    (
        "write",
        "the write tool is checked as `edit`; a `write` rule neither blocks nor hides it",
    ),
    ("patch", "file tools are checked as `edit`"),
    ("multiedit", "file tools are checked as `edit`"),
    ("apply_patch", "apply_patch is checked as `edit`"),
    (
        "list",
        "there is no `list` tool; listing goes through `read` and `glob`",
    ),
    ("todoread", "there is no `todoread` tool"),
    (
        "codesearch",
        "there is no `codesearch` tool (other OpenCode releases have one)",
    ),
];

/// The permissions OpenCode 1.18.34's own tools check, in the order above (the editor's
/// completion offers them).
pub fn checked() -> impl Iterator<Item = &'static str> {
    CHECKS.iter().map(|(p, _)| *p)
}

/// Why OpenCode 1.18.34 never asks the permission `name`, or `None` when a tool may ask it
/// (one of its own, or an MCP or plugin tool of that name). A rule of such a permission
/// decides nothing OpenCode does: its inputs are examples of the rules as written, never
/// calls (`check` says so beside them, `diff` does not count them as changes).
pub fn never_checked(name: &str) -> Option<&'static str> {
    NEVER.iter().find(|(p, _)| *p == name).map(|(_, why)| *why)
}

/// Names of file tools (and of their older releases) that OpenCode asks as `edit`.
pub const ASKED_AS_EDIT: &[&str] = &["write", "patch", "multiedit", "apply_patch"];

/// The permission OpenCode checks for the tool named `name` when it is checked under
/// another name: the [`ASKED_AS_EDIT`] names are all asked as `edit`.
pub fn checked_as(name: &str) -> Option<&'static str> {
    ASKED_AS_EDIT.contains(&name).then_some("edit")
}

/// The permission a call of the tool named `name` asks: [`checked_as`], else `name`.
pub fn asked_as(name: &str) -> &str {
    checked_as(name).unwrap_or(name)
}

/// Which tools check `permission` (a name, or a glob over names), in one paragraph.
pub fn permission(name: &str, platform: Platform) -> String {
    if let Some((_, what)) = CHECKS.iter().find(|(p, _)| *p == name) {
        return format!("`{name}` is checked by {what}.");
    }
    if let Some(why) = never_checked(name) {
        return format!("`{name}` is never checked by OpenCode 1.18.34: {why}.");
    }
    if name.contains('*') || name.contains('?') {
        let glob = Wildcard::compile(name);
        let hit: Vec<String> = CHECKS
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| glob.is_match(p, platform))
            .map(|p| format!("`{p}`"))
            .collect();
        let more = if glob.is_match("github_create_issue", platform) || name == "*" {
            " and every MCP tool"
        } else {
            ""
        };
        return if hit.is_empty() && more.is_empty() {
            format!(
                "`{name}` is a glob over permission names; it matches none of OpenCode's own (MCP tools are named `<server>_<tool>`)."
            )
        } else {
            format!(
                "`{name}` is a glob over permission names: it matches {}{more}.",
                hit.join(", ")
            )
        };
    }
    format!(
        "`{name}` is no permission of OpenCode's own tools: it is checked only if an MCP tool is named so (`<server>_<tool>`, with the pattern `*`)."
    )
}

/// What `pattern` matches under `permission`, in one paragraph: the meaning of its
/// wildcards, and where the input it is matched against comes from.
pub fn pattern(permission: &str, pattern: &str) -> String {
    let mut out = vec![format!(
        "{} is matched against the whole input, case-sensitively on Linux and macOS.",
        serde_json::to_string(pattern).unwrap_or_default()
    )];
    if pattern.contains("**") {
        out.push(
            "`**` is two stars, not a globstar: each `*` matches any run of characters, `/` included, so `src/**` is `src/` followed by anything and `**/x` needs a `/` before `x`."
                .into(),
        );
    } else if pattern.contains('*') {
        out.push("`*` matches any run of characters, `/` and newlines included.".into());
    }
    if pattern.contains('?') {
        out.push("`?` matches exactly one character, `/` included.".into());
    }
    if let Some(head) = pattern.strip_suffix(" *")
        && Wildcard::compile(pattern).optional_tail
    {
        out.push(format!(
            "A trailing ` *` is optional: it also matches {} with no arguments.",
            serde_json::to_string(head).unwrap_or_default()
        ));
    }
    if pattern.contains('\\') {
        out.push("Every `\\` is read as `/`, in patterns and inputs alike.".into());
    }
    let paths = matches!(permission, "read" | "edit");
    if paths && (pattern.starts_with('/') || pattern.starts_with('~')) {
        out.push(format!(
            "`{permission}` inputs are paths relative to the worktree (`src/a.ts`, or `../…` outside it): an absolute or `~` pattern matches none of them; restrict outside paths with `external_directory`."
        ));
    } else if paths && pattern.starts_with("**/") {
        out.push(
            "A leading `**/` needs a `/` before the rest: it does not match a file at the top of the worktree."
                .into(),
        );
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions() {
        let p = Platform::Unix;
        assert!(permission("edit", p).contains("apply_patch"));
        assert!(permission("write", p).contains("never checked"));
        let g = permission("ed*", p);
        assert!(g.contains("`edit`") && !g.contains("`read`"), "{g}");
        assert!(permission("*", p).contains("every MCP tool"));
        assert!(permission("github_*", p).contains("every MCP tool"));
        assert!(permission("git", p).contains("no permission"));
    }

    #[test]
    fn patterns() {
        let t = pattern("edit", "src/**");
        assert!(t.contains("not a globstar"), "{t}");
        assert!(pattern("bash", "git push *").contains("\"git push\" with no arguments"));
        assert!(!pattern("bash", "git *?").contains("optional"));
        assert!(pattern("edit", "/etc/*").contains("absolute"));
        assert!(pattern("read", "**/.env").contains("top of the worktree"));
        assert!(pattern("read", "a?b").contains("exactly one character"));
    }
}
