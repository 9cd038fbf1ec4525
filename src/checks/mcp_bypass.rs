//! `mcp-bypass` (warning)
//!
//! ## What it finds
//! An enabled MCP server whose tools do what your rules restrict, under names those rules
//! never see: the filesystem server (`@modelcontextprotocol/server-filesystem`) writes and
//! reads files, `mcp-server-git` commits, resets and checks out, GitHub's server (local, or
//! remote at `api.githubcopilot.com/mcp`) writes files on GitHub, pushes and merges. OpenCode asks an MCP tool
//! by its own key (`<server>_<tool>`, with the pattern `*`), not as `edit`, `read` or
//! `bash`, so `edit: deny`, the built-in `.env` read ask and a `git commit*` ask do not
//! apply to it; with no rule naming the server, OpenCode's `*` allow runs it unasked.
//! Reported for every agent the model can act as (plan included: its built-in `edit`
//! deny) where a tool of the server is allowed by a catch-all (`*`, not a rule naming the
//! server) while the same act through OpenCode's own tool (editing `src/main.ts`, reading
//! `.env`, `git commit -m x`) is denied or asked. One finding per server, at its
//! `mcp.NAME` key, naming the agents. A server rooted outside the project (`~`, `/home/me`)
//! also reaches files OpenCode would ask `external_directory` for: the message says so.
//!
//! A rule written for the server (`"filesystem_*": "allow"`, a `tools` switch) is taken as
//! meant and not reported. Only servers whose tools are known are judged (a small table,
//! [`SERVERS`]); other servers' tools are unknown offline.
//!
//! ## Why it matters
//! The author wrote `edit: deny` for plan or a reviewer, or relies on the `.env` ask; the
//! model calls `filesystem_write_file` or `filesystem_read_text_file` instead, and nothing
//! asks.
//!
//! ## Example
//! ```json
//! {"mcp": {"filesystem": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}}}
//! ```
//! `plan` writes `src/main.ts` through `filesystem_write_file`, and every agent reads
//! `.env` through `filesystem_read_text_file`, unasked.
//!
//! ## How to fix
//! Ask for the server's tools after your rules (`"filesystem_*": "ask"` in `permission`),
//! or deny them in the blocks of the agents that must not write; or remove the server:
//! OpenCode's own read, edit and bash tools do the same under your rules.

use super::{Check, Ctx, Finding, Witness, describe};
use crate::agents::evaluate;
use crate::load::McpServer;
use crate::model::Effect;

pub const CHECK: Check = Check {
    id: "mcp-bypass",
    level: super::Level::Warning,
    summary: "an MCP server's tools (the filesystem server's `write_file`) do unasked what your rules deny or ask for through OpenCode's own tools",
    docs: include_str!("mcp_bypass.rs"),
};

/// A server whose tools are known, by a word of its command.
struct Server {
    /// A word of its command (`npx -y @modelcontextprotocol/server-filesystem ~`), or its
    /// `url`, ends with one of these.
    packages: &'static [&'static str],
    /// What its tools do, after "its tools".
    does: &'static str,
    /// Its tools that act, each with OpenCode's own permission and input for the same act.
    tools: &'static [(&'static str, &'static str, &'static str)],
    /// The words after the package are directories it serves.
    rooted: bool,
    /// Reported only against a rule you wrote: what it does on GitHub is what such a
    /// server is added for, and plan's built-in edit deny alone is not the author's intent
    /// that it stay away (a note of the corpus reading: 18 places, most only plan's).
    written_only: bool,
}

const SERVERS: &[Server] = &[
    Server {
        packages: &["server-filesystem"],
        does: "write and read files",
        tools: &[
            ("write_file", "edit", "src/main.ts"),
            ("edit_file", "edit", "src/main.ts"),
            ("move_file", "edit", "src/main.ts"),
            ("read_text_file", "read", ".env"),
            ("read_file", "read", ".env"),
            ("read_multiple_files", "read", ".env"),
        ],
        rooted: true,
        written_only: false,
    },
    Server {
        packages: &["mcp-server-git"],
        does: "commit, stage, reset and check out",
        tools: &[
            ("git_commit", "bash", "git commit -m x"),
            ("git_add", "bash", "git add ."),
            ("git_reset", "bash", "git reset"),
            ("git_checkout", "bash", "git checkout main"),
            ("git_create_branch", "bash", "git branch x"),
        ],
        rooted: false,
        written_only: false,
    },
    // GitHub's server, local (`@modelcontextprotocol/server-github`, `github-mcp-server`)
    // or remote (`https://api.githubcopilot.com/mcp/`): it writes to the repository on
    // GitHub, pushes and merges (blind fresh-12 B: StuartStephens's read-only agents).
    Server {
        packages: &[
            "server-github",
            "github-mcp-server",
            "api.githubcopilot.com/mcp",
        ],
        does: "write files to the repository on GitHub, push and merge",
        tools: &[
            ("create_or_update_file", "edit", "src/main.ts"),
            ("push_files", "bash", "git push origin main"),
            ("merge_pull_request", "bash", "gh pr merge 1"),
        ],
        rooted: false,
        written_only: true,
    },
];

/// OpenCode's tool key for `tool` of `server`: each part with every character outside
/// `[A-Za-z0-9_-]` made `_`, joined by `_` (checked in the 1.18.34 binary).
pub fn tool_key(server: &str, tool: &str) -> String {
    format!("{}_{}", clean(server), clean(tool))
}

/// A name part as OpenCode writes it into a tool key.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn known(s: &McpServer) -> Option<(&'static Server, usize)> {
    let of = |bare: &str| {
        SERVERS
            .iter()
            .find(|k| k.packages.iter().any(|p| bare.ends_with(p)))
    };
    if let Some(k) = s.url.as_deref().and_then(|u| of(u.trim_end_matches('/'))) {
        return Some((k, s.command.len()));
    }
    s.command.iter().enumerate().find_map(|(i, w)| {
        // `@modelcontextprotocol/server-filesystem@latest`, `mcp-server-git==1.0`.
        let bare = w
            .trim_start_matches('@')
            .split(['@', '='])
            .next()
            .unwrap_or(w);
        of(bare).map(|k| (k, i))
    })
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    for s in ctx.project.loaded.audit.mcp.iter().filter(|s| s.enabled) {
        let Some((kind, at)) = known(s) else {
            continue;
        };
        // Each of OpenCode's own permissions that asks or denies the same act (with the
        // decision): the server's tools doing it unasked, the inputs, and each agent with
        // the rule that decides there.
        type Act<'k> = (
            (&'k str, Effect),
            Vec<String>,
            Vec<&'k str>,
            Vec<(String, String)>,
        );
        let mut acts: Vec<Act<'_>> = Vec::new();
        let mut agents: Vec<String> = Vec::new();
        let mut witnesses = Vec::new();
        let mut related: Vec<(crate::source::Loc, String)> = Vec::new();
        for agent in ctx.project.agents.iter().filter(|a| !a.is_internal()) {
            let mut found = false;
            for &(tool, permission, input) in kind.tools {
                let key = tool_key(&s.name, tool);
                let d = evaluate(&agent.rules, &key, "*", platform);
                let Some(r) = d.rule.and_then(|k| agent.rules.get(k)) else {
                    continue;
                };
                // Decided by a catch-all, not a rule written for this server.
                if d.effect != Effect::Allow || r.permission != "*" {
                    continue;
                }
                let own = evaluate(&agent.rules, permission, input, platform);
                if own.effect == Effect::Allow {
                    continue;
                }
                // The rule of yours that restricts the act, if one does (else built in).
                let yours = own
                    .rule
                    .and_then(|k| agent.rules.get(k))
                    .and_then(|g| g.loc.map(|l| (g, l)));
                if kind.written_only && yours.is_none() {
                    continue;
                }
                let by = match yours {
                    Some((g, l)) => {
                        if !related.iter().any(|(x, _)| *x == l) {
                            related.push((
                                l,
                                format!("{} for {}, not for `{key}`", describe(g), agent.name),
                            ));
                        }
                        ctx.rule_at(g)
                    }
                    None => "built in".to_string(),
                };
                let i = match acts.iter().position(|a| a.0 == (permission, own.effect)) {
                    Some(i) => i,
                    None => {
                        acts.push(((permission, own.effect), Vec::new(), Vec::new(), Vec::new()));
                        acts.len() - 1
                    }
                };
                let act = &mut acts[i];
                let tick = format!("`{key}`");
                if !act.1.contains(&tick) {
                    act.1.push(tick);
                }
                if !act.2.contains(&input) {
                    act.2.push(input);
                }
                if !act.3.iter().any(|(a, _)| *a == agent.name) {
                    act.3.push((agent.name.clone(), by));
                }
                if agents.is_empty() || agents[0] == agent.name {
                    witnesses.push(Witness {
                        permission: key,
                        input: "*".to_string(),
                        action: d.effect,
                        rule: d.rule,
                    });
                }
                found = true;
            }
            if found {
                agents.push(agent.name.clone());
            }
        }
        if agents.is_empty() {
            continue;
        }
        let some = |items: &[String], max: usize| {
            if items.len() <= max {
                items.join(", ")
            } else {
                format!("{} and {} more", items[..max].join(", "), items.len() - max)
            }
        };
        let said: Vec<String> = acts
            .iter()
            .map(|((permission, effect), tools, inputs, who)| {
                let verb = match (*permission, tools.len() == 1) {
                    ("edit", true) => "writes",
                    ("edit", false) => "write",
                    ("read", true) => "reads",
                    ("read", false) => "read",
                    (_, true) => "runs",
                    (_, false) => "run",
                };
                let decided = match effect {
                    Effect::Deny => "is denied",
                    _ => "asks",
                };
                // Agents decided by the same rule named together.
                let mut by: Vec<(Vec<String>, &str)> = Vec::new();
                for (a, r) in who {
                    match by.iter_mut().find(|(_, x)| *x == r.as_str()) {
                        Some((names, _)) => names.push(a.clone()),
                        None => by.push((vec![a.clone()], r)),
                    }
                }
                let by: Vec<String> = by
                    .iter()
                    .map(|(names, r)| format!("{} ({r})", some(names, 4)))
                    .collect();
                let inputs: Vec<String> = inputs.iter().map(|i| format!("`{i}`")).collect();
                format!(
                    "{} {verb} {} where OpenCode's `{permission}` {decided} for {}",
                    some(tools, 2),
                    some(&inputs, 2),
                    some(&by, 3),
                )
            })
            .collect();
        let roots: Vec<&String> = if kind.rooted {
            s.command
                .get(at + 1..)
                .unwrap_or(&[])
                .iter()
                // Relative directories are the project's own.
                .filter(|d| d.starts_with(['/', '~', '$']) || d.get(1..3) == Some(":\\"))
                .collect()
        } else {
            Vec::new()
        };
        let reach = match roots.first() {
            Some(d) => format!(
                "; it serves `{d}`: what lies there outside the project is reached with no `external_directory` ask"
            ),
            None => String::new(),
        };
        let message = format!(
            "the `{}` MCP server's tools {} without asking: OpenCode asks an MCP tool by its own name, which here only the `*` catch-all decides (allow), not by the rules of its own tools: {}{reach}",
            s.name,
            kind.does,
            said.join("; "),
        );
        let help = format!(
            "ask for the server's tools after your rules (`\"{}_*\": \"ask\"` in `permission`), or deny them in the blocks of the agents that must not use them; or remove the server: OpenCode's own tools do the same under your rules",
            clean(&s.name),
        );
        out.push(
            Finding::at(&CHECK, Some(s.loc), message)
                .with_agents(agents)
                .with_witnesses(witnesses)
                .with_related(related)
                .with_help(help),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_keys_are_sanitised_as_opencode_does() {
        assert_eq!(
            tool_key("filesystem", "write_file"),
            "filesystem_write_file"
        );
        assert_eq!(
            tool_key("my.fs server", "write_file"),
            "my_fs_server_write_file"
        );
        assert_eq!(tool_key("git-mcp", "git_commit"), "git-mcp_git_commit");
    }
}
