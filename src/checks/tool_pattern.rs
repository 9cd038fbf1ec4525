//! A bash pattern whose first word is an OpenCode tool's name (`"read": "allow"` or
//! `"todowrite *": "allow"` inside a `bash` block): the bash tool matches it against shell
//! commands, so it decides a command named `todowrite`, never the todowrite tool, which is
//! checked under its own permission key (verified on 1.18.34: under `{"bash": {"*": "deny",
//! "todowrite *": "allow"}, "todowrite": "deny"}`, `debug agent build --tool todowrite`
//! says "Tool todowrite is disabled"). `never-matches` reports it at the rule.
//!
//! Names that are also programs an agent runs are left out: `grep`, `patch`, `task`
//! (go-task). `read` is a shell builtin too, but it reads a line of standard input, which
//! the bash tool's non-interactive shell never gives it: a `read` rule under `bash` is
//! taken as meant for the read tool.

use super::overlap::openness;
use super::{Ctx, Level, Witness};
use crate::agents::Agent;
use crate::model::Effect;

/// Tool names (as written) with the permission that checks the tool and an input it is
/// asked with.
const TOOLS: &[(&str, &str, &str)] = &[
    ("read", "read", "src/index.ts"),
    ("edit", "edit", "src/index.ts"),
    ("write", "edit", "src/index.ts"),
    ("multiedit", "edit", "src/index.ts"),
    ("apply_patch", "edit", "src/index.ts"),
    ("glob", "glob", "**/*.ts"),
    ("webfetch", "webfetch", "https://example.com"),
    ("websearch", "websearch", "opencode"),
    ("todowrite", "todowrite", "*"),
    ("todoread", "todowrite", "*"),
    ("lsp", "lsp", "*"),
    ("skill", "skill", "*"),
    ("question", "question", "*"),
    ("plan_enter", "plan_enter", "*"),
    ("plan_exit", "plan_exit", "*"),
];

/// What `never-matches` says about a tool's name under `bash`.
pub(super) struct Misplaced {
    pub witness: Witness,
    pub level: Level,
    pub message: String,
    pub help: String,
}

/// The tool `pattern` (under `bash`) names: its name as written, the permission that
/// checks it, and the input to decide.
fn tool(pattern: &str) -> Option<(&'static str, &'static str, String)> {
    let mut words = pattern.splitn(2, ' ');
    let first = words.next()?;
    let rest = words.next().unwrap_or("").trim();
    let &(name, permission, input) = TOOLS.iter().find(|(n, _, _)| *n == first)?;
    // The words after it: the tool's input when plain (`read .env`), else any input.
    let input = if rest.is_empty() || rest.contains(['*', '?']) || permission != "read" {
        input.to_string()
    } else {
        rest.to_string()
    };
    Some((name, permission, input))
}

/// Rule `i` of `agent`, a bash rule that names a tool: the tool's decision today, and how
/// much that loses (the severity rule of docs/checks.md: an allow whose tool is asked or
/// denied, or a deny or ask whose tool runs less strictly, is a warning; a tool decided as
/// the rule would decide it anyway loses nothing, a note).
pub(super) fn slip(ctx: &Ctx<'_>, agent: &Agent, i: usize) -> Option<Misplaced> {
    let r = agent.rules.get(i)?;
    if r.permission != "bash" || r.loc.is_none() {
        return None;
    }
    let (name, permission, input) = tool(&r.pattern)?;
    let wanted = r.action.effective();
    let witness = ctx.witness_of(agent, permission, &input)?;
    let lost = match wanted {
        Effect::Allow => witness.action != Effect::Allow,
        _ => openness(witness.action) > openness(wanted),
    };
    let level = if lost { Level::Warning } else { Level::Info };
    let today = match witness.action {
        Effect::Allow => "allowed",
        Effect::Ask => "asked",
        Effect::Deny => "denied",
    };
    let builtin = if name == "read" {
        " (`read` is also a shell builtin, which reads standard input the bash tool never gives it)"
    } else {
        ""
    };
    let key = if permission == name {
        format!("`{permission}`")
    } else {
        format!("`{permission}` (the {name} tool is checked as `{permission}`)")
    };
    let message = format!(
        "{} names OpenCode's {name} tool, but under `bash` it matches a shell command named `{name}`{builtin}, never the tool, which is checked under its own permission key {key}; {permission} {} is {today} today{}",
        q(&r.pattern),
        q(&input),
        if lost {
            ""
        } else {
            ", as this rule would decide it"
        },
    );
    let help = format!(
        "move it out of the `bash` block to the permission key: {{{}: {}}}",
        q(permission),
        q(&r.action.to_string()),
    );
    Some(Misplaced {
        witness,
        level,
        message,
        help,
    })
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::tool;

    #[test]
    fn tools_named_under_bash() {
        assert_eq!(
            tool("todowrite *"),
            Some(("todowrite", "todowrite", "*".into()))
        );
        assert_eq!(tool("read"), Some(("read", "read", "src/index.ts".into())));
        assert_eq!(tool("read .env"), Some(("read", "read", ".env".into())));
        assert_eq!(
            tool("write *"),
            Some(("write", "edit", "src/index.ts".into()))
        );
        for program in [
            "grep *",
            "patch -p1",
            "task build",
            "git status",
            "reader *",
        ] {
            assert_eq!(tool(program), None, "{program}");
        }
    }
}
