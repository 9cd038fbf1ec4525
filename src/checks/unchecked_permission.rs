//! `unchecked-permission` (warning; info when nothing is lost)
//!
//! ## What it finds
//! A permission key OpenCode 1.18.34 never checks: `write`, `patch`, `multiedit` and
//! `apply_patch` (file tools are all checked as `edit`), `list` and `todoread` (no such
//! tool), PascalCase names (`Bash`: names are case-sensitive), Claude Code syntax
//! (`Bash(git *)`), bash commands written as permission names (`"git push": "deny"`,
//! `"npm run dev": "deny"`: a key with a space whose first word is a program can never be
//! a tool id, since MCP tool ids are `SERVER_TOOL` with every other character made `_`,
//! and OpenCode's own and plugins' tools are single words), tools of other releases
//! (`codesearch`), and typos of real names, with "did you mean". Keys with `_` are taken as MCP or plugin tools (`github_create_issue`)
//! and are not reported, nor are the project's own tools: `{tool,tools}/NAME.{js,ts}` in
//! a config directory (`.opencode/tool/observation.ts`) defines the tool `NAME`, which
//! the key `NAME` decides (verified on 1.18.34 with `opencode debug agent build`).
//!
//! It is a warning when a deny or ask loses its protection: nothing checks the key, and
//! what OpenCode does check is decided more loosely (`"write": "deny"` while `edit` is
//! allowed; `"list": "deny"` while `glob` lists directories; `"todoread": "deny"` while
//! `todowrite` hands the list back; `"git push": "deny"` while bash runs `git push`, with
//! or without plugins: the help moves it under `bash` as `"git push *"`). A command
//! written as a key with a wildcard (`"git status *": "allow"`, `"mv *": "allow"`) is a
//! command key too: the space before the wildcard is in no tool id. An allow written as a
//! command key is a warning when the agent needs it: the command it means (`git status`,
//! `mv a b`) is asked or denied today for that agent (`agent.build.permission: {"mv *":
//! "allow"}` under a shared bash `"*": "ask"` leaves build's `mv a b` asked; verified on
//! 1.18.34: under a bash `"*": "deny"`, build's `"mv *": "allow"` and `"git status *":
//! "allow"` keys leave `mv a b` and `git status` refused), with that command as its
//! witness; a note when it is allowed anyway. Any other allow, or a deny beside an equally strict rule of
//! the permission OpenCode checks (a `write` block mirrored under `edit` in the same
//! file), or a deny of a tool 1.18.34 does not have, only misleads: info. So does a
//! whole-tool switch of a plain unknown name that is no near miss of a checked permission
//! (`observation: false`): it names a tool this config does not show (the project's own
//! code, a plugin's) or none, and loses nothing OpenCode would check, unless the config
//! names an MCP server of that name (its tools are `NAME_TOOL`, which the key misses: a
//! warning). So is an
//! unknown whole-tool key when the config loads plugins (a `plugin` list, or
//! `{plugin,plugins}/*.{js,ts}`): a plugin may add a tool of that name.
//!
//! ## Why it matters
//! OpenCode accepts any key silently. `"write": "deny"` neither hides nor blocks the write
//! tool (verified on 1.18.34).
//!
//! ## Example
//! ```json
//! {"permission": {"write": "deny", "Bash(rm *)": "deny"}}
//! ```
//!
//! ## How to fix
//! Use the name OpenCode checks: `edit` for every file-writing tool, `bash` with patterns
//! for commands: `{"bash": {"rm *": "deny", "git push *": "deny"}}`.

use super::{Check, Ctx, Finding, Level, named_list};

pub const CHECK: Check = Check {
    id: "unchecked-permission",
    level: Level::Warning,
    summary: "a permission key OpenCode never checks (write, list, typos, PascalCase, Bash(...))",
    docs: include_str!("unchecked_permission.rs"),
};

/// Permissions OpenCode 1.18.34 asks (spec §2.5, §2.4).
pub const CHECKED: &[&str] = &[
    "read",
    "edit",
    "glob",
    "grep",
    "bash",
    "task",
    "external_directory",
    "lsp",
    "skill",
    "todowrite",
    "question",
    "webfetch",
    "websearch",
    "doom_loop",
    "plan_enter",
    "plan_exit",
];

/// Tools of other OpenCode releases that 1.18.34 does not have (not in its binary): a
/// key for one decides nothing, and a deny of one protects nothing that exists.
const ELSEWHERE: &[&str] = &["codesearch"];

/// Tool names that are checked as `edit`.
const FILE_TOOLS: &[&str] = crate::model::meaning::ASKED_AS_EDIT;

/// Programs people write as a permission key (`"git": "ask"`) meaning a bash command.
const COMMANDS: &[&str] = &[
    "git",
    "gh",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "bun",
    "node",
    "deno",
    "python",
    "python3",
    "pip",
    "uv",
    "cargo",
    "go",
    "make",
    "docker",
    "kubectl",
    "helm",
    "terraform",
    "rm",
    "mv",
    "cp",
    "curl",
    "wget",
    "ssh",
    "scp",
    "sudo",
    "chmod",
    "chown",
    "aws",
    "gcloud",
    "az",
];

/// Why `key` is never checked, or `None` when it is fine.
pub fn diagnose(key: &str) -> Option<String> {
    if let Some(open) = key.find('(')
        && key.ends_with(')')
    {
        let tool = key[..open].to_ascii_lowercase();
        let inner = &key[open + 1..key.len() - 1];
        return Some(format!(
            "`{key}` is Claude Code syntax, which OpenCode reads as a literal permission name that nothing checks; write {{\"{tool}\": {{{}: ...}}}}",
            serde_json::to_string(inner).unwrap_or_default()
        ));
    }
    if CHECKED.contains(&key) {
        return None;
    }
    // A command with a wildcard (`"git status *": "allow"`, `"mv *": "allow"`) has a space
    // no tool id has, as the exact one does.
    if let Some(command) = bash_command(key).filter(|c| c.contains(['*', '?'])) {
        return Some(format!(
            "`{key}` is a shell command, not a permission: no tool has an id with a space, and OpenCode checks commands under `bash`, by the whole command line; write {{\"bash\": {{{}: ...}}}}",
            serde_json::to_string(&bash_pattern(&command)).unwrap_or_default()
        ));
    }
    if key.contains('*') || key.contains('?') {
        return None;
    }
    let dead = match key {
        k if FILE_TOOLS.contains(&k) => {
            Some("file tools (edit, write, apply_patch) are all checked as `edit`; use `edit`")
        }
        "list" => {
            Some("there is no `list` tool in 1.18.34; directory listing goes through `read`/`glob`")
        }
        "todoread" => Some("there is no `todoread` tool in 1.18.34"),
        k if ELSEWHERE.contains(&k) => {
            Some("1.18.34 has no tool of that name (other OpenCode releases do)")
        }
        _ => None,
    };
    if let Some(why) = dead {
        return Some(format!(
            "`{key}` is never checked by OpenCode 1.18.34: {why}"
        ));
    }
    if let Some(command) = bash_command(key) {
        return Some(format!(
            "`{key}` is a shell command, not a permission: no tool has an id with a space, and OpenCode checks commands under `bash`, by the whole command line; write {{\"bash\": {{{}: ...}}}} (the trailing ` *` also matches the bare `{command}`)",
            serde_json::to_string(&format!("{command} *")).unwrap_or_default()
        ));
    }
    let lower = key.to_lowercase();
    if lower != key && CHECKED.contains(&lower.as_str()) {
        return Some(format!(
            "`{key}` is never checked: permission names are case-sensitive; did you mean `{lower}`?"
        ));
    }
    // `web_search`, `web_fetch`, `todo_write`: a built-in tool's name with a separator put
    // in, which no MCP server of this config need explain (blind fresh-6 B: oxcl).
    let joined: String = lower.chars().filter(|c| !matches!(c, '_' | '-')).collect();
    if joined != lower
        && let Some(name) = CHECKED.iter().find(|c| **c == joined && !c.contains('_'))
    {
        return Some(format!(
            "`{key}` is not a permission OpenCode checks: the tool is `{name}` (a key with `_` names an MCP tool, here of a server `{}`); did you mean `{name}`?",
            lower.split(['_', '-']).next().unwrap_or("")
        ));
    }
    if key.contains('_') || key.contains('-') || key.contains('.') {
        return None; // an MCP or plugin tool key
    }
    if COMMANDS.contains(&lower.as_str()) {
        return Some(format!(
            "`{key}` is not a permission OpenCode checks: shell commands are checked under `bash`, by the whole command; write {{\"bash\": {{\"{lower} *\": ...}}}}"
        ));
    }
    // A typo of a file tool's name (`wrire`) means `edit`, which checks them all.
    let named = CHECKED.iter().copied().chain(FILE_TOOLS.iter().copied());
    Some(match super::did_you_mean(&lower, named) {
        Some(c) if FILE_TOOLS.contains(&c) => format!(
            "`{key}` is not a permission OpenCode checks; if you meant `{c}`: file tools (edit, write, apply_patch) are all checked as `edit`, so use `edit`"
        ),
        Some(c) => format!("`{key}` is not a permission OpenCode checks; did you mean `{c}`?"),
        None => format!(
            "`{key}` is not a permission OpenCode checks (unless a plugin tool has exactly this id); MCP tools are named `SERVER_TOOL`: for a server named `{key}`, write `{key}_*`"
        ),
    })
}

/// A bash command written as a permission name (`"git push": "deny"`, `"npm run dev":
/// "deny"`): a key with a space whose first word is a program people run. No tool id has a
/// space (MCP tools are `SERVER_TOOL` with every other character made `_`; OpenCode's own
/// and a plugin's are single words), so nothing ever checks it. The command, its words
/// joined by single spaces.
///
/// The words after the program may hold wildcards (`"git status *"`, `"mv *"`): the key
/// still has a space before them, which no tool id has (OpenCode's trailing ` *` also
/// matches the bare `mv`, and no tool is named so either).
fn bash_command(key: &str) -> Option<String> {
    let words: Vec<&str> = key.split_whitespace().collect();
    let [first, _, ..] = words.as_slice() else {
        return None;
    };
    let first = first.to_ascii_lowercase();
    let program = COMMANDS.contains(&first.as_str())
        || crate::shell::arity::ARITY
            .iter()
            .any(|(k, _)| k.split(' ').next() == Some(first.as_str()));
    (program && !key.contains('(') && !first.contains(['*', '?'])).then(|| words.join(" "))
}

/// The bash pattern to write for a command key: the key itself when it ends in a
/// wildcard (`git status *`), else with ` *` (`git push` → `git push *`).
fn bash_pattern(command: &str) -> String {
    if command.ends_with('*') {
        command.to_string()
    } else {
        format!("{command} *")
    }
}

/// The bash command a command key (`key`, with its `pattern`) was written for, as the
/// bash tool would be asked it: the key as written when it has no wildcard (`git push`),
/// else its words before a trailing ` *` (`git status *` → `git status`), with an ordinary
/// operand after a lone program or a flag (`mv *` → `mv a b`, `rm -rf *` → `rm -rf x`). `None` when a wildcard sits
/// elsewhere.
fn meant_command(key: &str, pattern: &str) -> Option<String> {
    let command = bash_command(key)?;
    let base = match pattern {
        "*" => command,
        p => format!("{command} {p}"),
    };
    if !base.contains(['*', '?']) {
        return Some(base);
    }
    let prefix = base.strip_suffix('*')?.trim_end();
    if prefix.contains(['*', '?']) {
        return None;
    }
    // A lone program or flags last (`rm -rf *`) takes an operand: `rm -rf x`.
    let last = prefix.rsplit(' ').next().unwrap_or(prefix);
    Some(if prefix.contains(' ') && !last.starts_with('-') {
        prefix.to_string()
    } else {
        format!(
            "{prefix} {}",
            super::bare_command::ordinary_operand(prefix, false)
        )
    })
}

/// The permission OpenCode checks where the author wrote `key` (`write` → `edit`, a
/// typo → its correction), or `None` when there is no such permission (a tool that does
/// not exist, or an unknown name).
fn meant(key: &str) -> Option<String> {
    if let Some(open) = key.find('(') {
        return Some(key[..open].to_ascii_lowercase());
    }
    if let Some(to) = crate::model::meaning::checked_as(key) {
        return Some(to.into());
    }
    match key {
        "list" | "todoread" => return None,
        k if ELSEWHERE.contains(&k) => return None,
        _ => {}
    }
    let lower = key.to_lowercase();
    if CHECKED.contains(&lower.as_str()) {
        return Some(lower);
    }
    if COMMANDS.contains(&lower.as_str()) || bash_command(key).is_some() {
        return Some("bash".into());
    }
    match super::did_you_mean(
        &lower,
        CHECKED.iter().copied().chain(FILE_TOOLS.iter().copied()),
    ) {
        Some(c) if FILE_TOOLS.contains(&c) => Some("edit".into()),
        c => c.map(str::to_string),
    }
}

/// What the author loses. An allow that is never checked loses nothing the author wanted
/// kept out (at most a question too many): info. A deny or ask loses its protection (`list` is listing by `glob`, `todoread` the
/// list `todowrite` returns), unless what OpenCode does check already
/// decides at least as strictly (`"write": "deny"` beside `"edit": "deny"`): then info.
fn level(ctx: &Ctx<'_>, agent: &crate::agents::Agent, r: &crate::model::Rule) -> Level {
    use super::overlap::openness;
    // Severity rule (docs/checks.md): a deny or ask nothing checks is a warning (clause 1)
    // unless what OpenCode does check is as strict, or there is nothing to check (clause 3
    // for each note below). An allow nothing checks costs a question at most: clause 3.
    let wanted = r.action.effective();
    // A command written as a key (`"git status *": "allow"`): the allow never applies; the
    // author needs it when the bash command it means is asked or denied today (clause 2),
    // not when it is allowed anyway (clause 3). An internal agent (`compaction`) runs no
    // command the allow was written for.
    if wanted == crate::model::Effect::Allow {
        let needed = !agent.is_internal()
            && meant_command(&r.permission, &r.pattern)
                .and_then(|c| ctx.witness_of(agent, "bash", &c))
                .is_some_and(|w| w.action != crate::model::Effect::Allow);
        return if needed { Level::Warning } else { Level::Info };
    }
    if ELSEWHERE.contains(&r.permission.as_str()) {
        return Level::Info;
    }
    // A deny of a tool that does not exist still reads as protection: listing goes through
    // `glob` (and `read`), the todo list comes back from `todowrite`.
    let target = match r.permission.as_str() {
        "list" => Some("glob".to_string()),
        "todoread" => Some("todowrite".to_string()),
        key => meant(key),
    };
    // An unknown name that is no near miss of a permission OpenCode checks, no command
    // and no Claude Code rule is a tool this config does not show (the project's own, a
    // plugin's) or none at all: either way no protection OpenCode gives is lost, unless it
    // names an MCP server, whose tools (`NAME_TOOL`) the key then fails to switch.
    let Some(target) = target else {
        let mcp = ctx
            .project
            .loaded
            .audit
            .mcp
            .iter()
            .any(|m| m.name.eq_ignore_ascii_case(&r.permission));
        let plain = r
            .permission
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        return if plain && !mcp && r.pattern == "*" {
            Level::Info
        } else {
            Level::Warning
        };
    };
    // A block mirrored under the permission OpenCode checks (`write` beside an `edit` of
    // the same pattern, as strict, in the same file): this key loses nothing; whatever
    // decides `edit` more loosely for an agent does so to the mirror too, and is reported
    // there.
    let mirrored = agent.rules.iter().any(|q| {
        q.permission == target
            && q.pattern == r.pattern
            && q.loc.is_some()
            && q.loc.map(|l| l.source) == r.loc.map(|l| l.source)
            && openness(q.action.effective()) <= openness(wanted)
    });
    if mirrored {
        return Level::Info;
    }
    // A command written as a key (`"git push": "deny"`) is asked as itself, under `bash`.
    let subject = match (
        bash_command(&r.permission),
        meant_command(&r.permission, &r.pattern),
        r.pattern.as_str(),
    ) {
        (Some(_), Some(command), _) => command,
        (Some(command), None, "*") => command,
        (Some(command), None, pattern) => format!("{command} {pattern}"),
        (None, _, "*") => "a.ts".to_string(),
        (None, _, pattern) => pattern.to_string(),
    };
    let d = crate::agents::evaluate(&agent.rules, &target, &subject, ctx.project.platform);
    if openness(d.effect) <= openness(wanted) {
        Level::Info
    } else {
        Level::Warning
    }
}

/// A key no typo of a checked permission, no command and no Claude Code rule, in a config
/// that loads plugins: a plugin may add a tool of that name, which the key then decides.
fn may_be_plugin_tool(audit: &crate::load::Audit, key: &str) -> bool {
    audit.plugins
        && meant(key).is_none()
        && !key.contains('(')
        && !matches!(key, "list" | "todoread")
        && !ELSEWHERE.contains(&key)
}

/// Why OpenCode 1.18.34 never consults rules of `key` in `project` ([`diagnose`]'s words),
/// or `None` when a tool may ask it: a checked permission, a tool the project defines
/// (`.opencode/tool/NAME.ts`), an MCP or plugin tool's name, or a plain name a plugin the
/// config loads may add. The report page shows such rules apart from the matrix.
pub fn never_consulted(project: &crate::project::Project, key: &str) -> Option<String> {
    let audit = &project.loaded.audit;
    if audit.custom_tools.iter().any(|t| t == key) || may_be_plugin_tool(audit, key) {
        return None;
    }
    diagnose(key)
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let audit = &ctx.project.loaded.audit;
    // One finding per agent; `consolidate` makes it one per place, naming every agent.
    for (agent, i, r) in ctx.written() {
        // A tool the project defines (`.opencode/tool/NAME.ts`) is checked by its name.
        if audit.custom_tools.binary_search(&r.permission).is_ok() {
            continue;
        }
        if let Some(mut message) = diagnose(&r.permission) {
            let mut level = level(ctx, agent, r);
            // A name that is no typo nor command may be a tool a plugin adds: only
            // running the plugin tells, so it is said, not warned.
            // A plugin tool is switched as a whole (`"memory": "deny"`): patterns under an
            // unknown name (`"tool": {"codegraph*": "allow"}`) stay a warning.
            // Severity rule clause 3 (docs/checks.md): nothing is shown to be lost.
            if r.pattern == "*" && may_be_plugin_tool(audit, &r.permission) {
                level = Level::Info;
                message.push_str(" (this config loads plugins: if one adds a tool of this name, the key decides it)");
            }
            let mut f = Finding::at_rule(&CHECK, agent, i, message).with_level(level);
            if let Some(command) = bash_command(&r.permission) {
                let pattern = match r.pattern.as_str() {
                    "*" => bash_pattern(&command),
                    p => format!("{command} {p}"),
                };
                // What the bash tool decides for the command today.
                if level == Level::Warning
                    && let Some(asked) = meant_command(&r.permission, &r.pattern)
                    && let Some(w) = ctx.witness_of(agent, "bash", &asked)
                {
                    if r.action.effective() == crate::model::Effect::Allow {
                        f.message.push_str(&format!(
                            "; the agent needs it: bash {} is {} today",
                            serde_json::to_string(&asked).unwrap_or_default(),
                            if w.action == crate::model::Effect::Deny {
                                "denied"
                            } else {
                                "asked"
                            }
                        ));
                    }
                    f = f.with_witnesses(vec![w]);
                }
                f = f.with_help(format!(
                    "move it under `bash`, after the bash catch-all: {{\"bash\": {{\"*\": ..., {}: {}}}}}",
                    serde_json::to_string(&pattern).unwrap_or_default(),
                    serde_json::to_string(&r.action.to_string()).unwrap_or_default(),
                ));
            }
            if meant(&r.permission).as_deref() == Some("edit")
                && r.action.effective() != crate::model::Effect::Allow
                && !r.permission.contains(['*', '?'])
            {
                f = f.with_help(edit_help(ctx, r));
            }
            out.push(f);
        }
    }
}

/// A deny or ask under `write` (or `patch`, `multiedit`): the same rule under `edit`, alone
/// (not the block's `"*": "allow"`, which `edit` needs no key for and which would reach
/// plan's built-in deny), and the agents whose own `edit` rules come later and would
/// override it. The same text for every agent, so the finding stays one per place.
fn edit_help(ctx: &Ctx<'_>, r: &crate::model::Rule) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let subject = if r.pattern == "*" {
        "a.ts"
    } else {
        r.pattern.as_str()
    };
    let own: Vec<String> = ctx
        .agents
        .iter()
        .filter(|a| !a.is_internal())
        .filter(|a| {
            let d = crate::agents::evaluate(&a.rules, "edit", subject, ctx.project.platform);
            super::overlap::openness(d.effect) > super::overlap::openness(r.action.effective())
                && d.rule
                    .and_then(|k| a.rules.get(k))
                    .is_some_and(|d| d.loc.is_some() && super::is_own(d.layer))
        })
        .map(|a| format!("`{}`", a.name))
        .collect();
    let allow_all = ctx.written().any(|(_, _, o)| {
        o.permission == r.permission
            && o.pattern == "*"
            && o.action.effective() == crate::model::Effect::Allow
            && o.loc.map(|l| l.source) == r.loc.map(|l| l.source)
    });
    let mut help = format!(
        "move this rule under `edit`, the permission the write tool asks: {{\"edit\": {{{}: {}}}}}{}",
        q(&r.pattern),
        q(&r.action.to_string()),
        if r.pattern == "*" {
            ""
        } else if allow_all {
            " (after `edit`'s catch-all if it has one; not the block's `\"*\": \"allow\"`: `edit` allows by default, and an `edit` allow would also reach plan's built-in deny)"
        } else {
            " (after `edit`'s catch-all if it has one)"
        }
    );
    if !own.is_empty() {
        let (verb, whose) = if own.len() == 1 {
            (
                "decides",
                "its own block, which comes later: repeat it there, after its own",
            )
        } else {
            (
                "decide",
                "their own blocks, which come later: repeat it there, after their own",
            )
        };
        help.push_str(&format!(
            "; {} {verb} `edit` in {whose} `edit` rules",
            named_list(&own, 6)
        ));
    }
    help
}

#[cfg(test)]
mod tests {
    use super::diagnose;

    #[test]
    fn the_command_a_key_means() {
        use super::meant_command;
        for (key, pattern, meant) in [
            ("git push", "*", Some("git push")),
            ("git status *", "*", Some("git status")),
            ("mv *", "*", Some("mv a b")),
            ("git log *", "*", Some("git log")),
            ("rm -rf *", "*", Some("rm -rf x")),
            ("git *status", "*", None),
            ("git", "*", None),
        ] {
            assert_eq!(meant_command(key, pattern).as_deref(), meant, "{key}");
        }
    }

    #[test]
    fn diagnoses() {
        for ok in [
            "bash",
            "edit",
            "*",
            "ed*",
            "github_create_issue",
            "my-mcp.tool",
        ] {
            assert_eq!(diagnose(ok), None, "{ok}");
        }
        for (bad, needle) in [
            ("write", "`edit`"),
            ("list", "no `list` tool"),
            ("Bash", "did you mean `bash`"),
            ("Bash(git *)", "Claude Code"),
            ("bsah", "did you mean `bash`"),
            ("reed", "did you mean `read`"),
            ("zzzzzz", "not a permission"),
            ("wrire", "if you meant `write`: file tools"),
            ("git", "write {\"bash\": {\"git *\": ...}}"),
            ("git push", "write {\"bash\": {\"git push *\": ...}}"),
            ("npm  run dev", "a shell command"),
            ("rm -rf", "a shell command"),
            ("git status *", "write {\"bash\": {\"git status *\": ...}}"),
            ("mv *", "write {\"bash\": {\"mv *\": ...}}"),
        ] {
            let d = diagnose(bad).unwrap_or_default();
            assert!(d.contains(needle), "{bad}: {d}");
        }
    }
}
