//! `legacy-tools` (info; warning when the translation changes a decision)
//!
//! ## What it finds
//! Every entry of a deprecated `tools` map (top-level `tools`, `agent.NAME.tools`,
//! `mode.NAME.tools`, a markdown agent's `tools:`), with the permission rule OpenCode
//! translates it to (`true` → allow, `false` → deny; `write`, `edit` and `patch` all become
//! `edit`, every other name stays itself), where that rule landed, and whether a
//! same-name `permission` key silently replaced it.
//!
//! ## Why it matters
//! Top-level `tools` is translated after every config file is merged, and merged *under*
//! `permission` (spec §5.4): its rules come first among the config rules, so any later
//! rule matching the same permission overrides them, and a `permission` key of the same
//! name, from any file, replaces the entry without a word. `"tools": {"bash": false}`
//! next to `"permission": {"bash": {"git *": "allow"}}` leaves no bash deny at all. In an
//! agent, `tools` is folded into that entry's permission first and a same-name key of the
//! entry's `permission` wins the same way.
//!
//! ## Example
//! ```json
//! {"tools": {"bash": false, "write": false},
//!  "permission": {"bash": {"git *": "allow"}}}
//! ```
//! `bash: false` produces no rule (`permission.bash` replaced it): `bash "ls"` is allowed by
//! the defaults. `write: false` becomes `edit * deny`, the first config rule.
//!
//! Entries of one map that set the same permission to the same value (the common
//! `tools: {write: false, edit: false}`: both are `edit` "*" deny) are one rule and one
//! finding, at the entry whose rule it is, naming the others. Otherwise each entry is one
//! finding: info (deprecated syntax, with its `permission` equivalent)
//! while its rule takes effect; a warning when the user would see a *looser* decision than
//! the entry says (`bash: false`, yet bash runs): the entry was replaced by a same-name
//! `permission` key, or its rule lands where later rules undo it all. An entry overruled
//! by a stricter rule (`bash: true` beside `permission.bash` rules) is info, except
//! `write: true` (or `patch: true`) replaced by an `edit` deny (`edit: false` later in the
//! same map, or the agent's `permission.edit`): the write tool asks `edit`, so the agent
//! cannot create a file either, an allow the author needs that never applies (severity
//! rule clause 2, a warning); and so is a
//! top-level entry that an agent's own rule switches back for that agent (`tools:
//! {"sentry_*": false}` globally and `sentry_*: true` in the one agent that uses it: the
//! opt-in idiom, deliberate and working).
//!
//! ## How to fix
//! Write permissions instead: `"tools": {"bash": false}` is `"permission": {"bash": "deny"}`;
//! when `bash` already has patterns, add `"*": "deny"` as their first entry. When a later
//! rule undoes the entry (an agent's own `tools: {edit: true}`), the help names that rule:
//! the change belongs there, since the entry's translation comes first and cannot win.
//! `write`, `edit` and `patch` are one permission: `tools: {write: false, edit: true}`
//! cannot keep an agent from writing new files while it edits, and a `*` deny under `edit`
//! would stop it editing at all.

use super::{Check, Ctx, Finding, Level, Reach, Witness, is_own};
use crate::agents::Agent;
use crate::glob::Wildcard;
use crate::glob::analysis::Input;
use crate::glob::automaton::shortest_member;
use crate::model::config::{PermEntry, tool_permission_name};
use crate::model::{Action, Effect, Layer};

pub const CHECK: Check = Check {
    id: "legacy-tools",
    level: Level::Info,
    summary: "a deprecated `tools` entry: its translation, where it landed, or the `permission` key that silently replaced it",
    docs: include_str!("legacy_tools.rs"),
};

/// An input of `permission` that the agent does not decide as `intended`, tried on a
/// shortest subject of each rule that applies to the permission, last rule first.
fn contrary(ctx: &Ctx<'_>, agent: &Agent, permission: &str, intended: Effect) -> Option<Witness> {
    let platform = ctx.project.platform;
    // The tool OpenCode asks about: a name the entry's glob matches (`sentry_*` →
    // `sentry_x`), and for a tool that is no built-in one (an MCP or plugin tool) the one
    // input OpenCode asks it with, `*`.
    let named = Wildcard::compile(permission).fill("x");
    let permission = named.as_str();
    if !super::unchecked_permission::CHECKED.contains(&permission) {
        let w = ctx.witness(agent, &Input::new(permission, "*"))?;
        return (w.action != intended).then_some(w);
    }
    let subjects = agent
        .rules
        .iter()
        .rev()
        .filter(|r| Wildcard::compile(&r.permission).is_match(permission, platform))
        .filter_map(|r| shortest_member(&Wildcard::compile(&r.pattern)).to_exact_string())
        // Then inputs everyone recognises (`npm test`, `src/main.ts`), then any word.
        .chain(
            super::examples::everyday(permission, "*")
                .iter()
                .map(|s| s.to_string()),
        )
        .chain(["x".to_string()]);
    // Only inputs the tool could ask (no edit path ending in `/`, no bash command with
    // white space at an end; a file tool asks for a worktree-relative path, `../…` outside
    // it, never an absolute one: tests/witness.rs); an empty subject proves as much, but
    // reads badly: last.
    let file_tool = crate::shell::file::FILE_PERMISSIONS.contains(&permission);
    let subjects = subjects.filter(|s| {
        super::examples::is_asked(permission, s) && !(file_tool && s.starts_with(['/', '~']))
    });
    let (empty, mut subjects): (Vec<String>, Vec<String>) = subjects.partition(String::is_empty);
    subjects.extend(empty.into_iter().take(1));
    for s in subjects {
        let w = ctx.witness(agent, &Input::new(permission, &s))?;
        if w.action != intended {
            return Some(w);
        }
    }
    None
}

/// `tools-map-not-allow-list` (warning): an agent's `tools` map that only switches tools on
/// (`tools: {read: true, grep: true, bash: true}`), read as "only these" while every tool
/// it does not name stays as it was: the agent still edits without asking. Reported at the
/// map, once per agent and file, with the edit it makes unasked (OpenCode's default or a
/// shared allow; an agent whose own rule allows edit does so on purpose). Fix: `edit: deny`
/// in the agent's own permissions, or `"*": "deny"` first and the listed tools allowed
/// after it.
pub const MAP_CHECK: Check = Check {
    id: "tools-map-not-allow-list",
    level: Level::Warning,
    summary: "an agent's `tools` map that only switches tools on: no allow-list, the agent still edits without asking",
    docs: include_str!("legacy_tools.rs"),
};

/// An agent's `tools` map that only switches tools on (`{read: true, grep: true, bash:
/// true}`), reads as "only these", and leaves `edit` allowed: a warning at its first entry
/// (which then gets no note of its own). Switching on changes nothing the defaults had not
/// allowed; the tools it does not name stay as they were. Both blind expert readings flag
/// such maps on agents meant to review (TOOLS-MAP-AS-ALLOWLIST in `tests/real/expert.tsv`).
/// Only maps of two or more entries that name no `edit`-family tool, in an agent that
/// edits a worktree file without asking. A map that also switches on MCP tools counts only
/// when it names two of `read`, `grep`, `glob`, `list` (tools every agent has anyway).
fn allow_list_maps(ctx: &Ctx<'_>, out: &mut Vec<Finding>) -> Vec<crate::source::Loc> {
    let mut firsts = Vec::new();
    if matches!(ctx.scope, super::Scope::Shared) {
        return firsts;
    }
    let tools = &ctx.project.loaded.audit.tools;
    for agent in ctx.agents.iter() {
        // One map per agent and file.
        let mine: Vec<&crate::load::ToolRecord> = tools
            .iter()
            .filter(|r| r.agent.as_deref() == Some(agent.name.as_str()))
            .collect();
        let mut sources: Vec<crate::source::SourceId> = Vec::new();
        for r in &mine {
            if !sources.contains(&r.loc.source) {
                sources.push(r.loc.source);
            }
        }
        for source in sources {
            let map: Vec<&&crate::load::ToolRecord> =
                mine.iter().filter(|r| r.loc.source == source).collect();
            // Built-in tools only: a map that switches on MCP tools (`context7`,
            // `chrome-devtools*`) opts into tools switched off elsewhere; it is no list.
            const BUILT_IN: &[&str] = &[
                "read",
                "grep",
                "glob",
                "list",
                "bash",
                "webfetch",
                "websearch",
                "task",
                "todowrite",
                "todoread",
                "skill",
                "lsp",
                "codesearch",
                "question",
            ];
            // Beside MCP tools, a map that also switches on two tools every agent has
            // anyway (`read: true, grep: true`) is still written as a list: nobody opts
            // into those (blind fresh-6 A: m-j-hooper's planner lists read, grep, glob and
            // two Atlassian tools, and edits unasked).
            let defaults = map
                .iter()
                .filter(|r| ["read", "grep", "glob", "list"].contains(&r.tool.as_str()))
                .count();
            if map.len() < 2
                || map.iter().any(|r| {
                    !r.enabled
                        || tool_permission_name(&r.tool) == "edit"
                        || (!BUILT_IN.contains(&r.tool.as_str()) && defaults < 2)
                })
            {
                continue;
            }
            let Some(w) = ctx.witness_of(agent, "edit", "src/main.ts") else {
                continue;
            };
            // Edits allowed by the agent's own written rule are allowed on purpose.
            if w.action != Effect::Allow
                || w.rule
                    .and_then(|k| agent.rules.get(k))
                    .is_some_and(|r| r.loc.is_some() && is_own(r.layer))
            {
                continue;
            }
            let Some(first) = map.first() else { continue };
            let named: Vec<String> = map.iter().map(|r| format!("`{}`", r.tool)).collect();
            let decider = w
                .rule
                .and_then(|k| agent.rules.get(k))
                .map(|r| ctx.rule_at(r))
                .unwrap_or_else(|| "no rule".into());
            let message = format!(
                "this `tools` map only switches tools on ({}): it is no allow-list, the tools it does not name stay as they were, so `{}` still edits `src/main.ts` without asking ({decider})",
                named.join(", "),
                agent.name
            );
            let help = format!(
                "to keep `{}` from editing, switch edit off under its own `permission` key (singular: `permissions` is ignored): `edit: deny` (the `write` and `apply_patch` tools ask `edit` too). For a real allow-list, replace the `tools` map by `permission` entries: `\"*\": \"deny\"` first, then the listed tools as `allow` (a `tools` map kept beside it would come before that `\"*\": \"deny\"`, which then hides every tool)",
                agent.name
            );
            // At the map's own `tools` key: the last `tools` before its first entry.
            let text = &ctx.project.loaded.sources.get(first.loc.source).text;
            let at = text
                .get(..first.loc.span.start)
                .and_then(|before| before.rfind("tools"))
                .map_or(first.loc, |k| crate::source::Loc {
                    source: first.loc.source,
                    span: crate::source::Span::new(k, k + "tools".len()),
                });
            let mut f = Finding::at(&MAP_CHECK, Some(at), message)
                .with_level(Level::Warning)
                .with_witnesses(vec![w])
                .with_help(help);
            f.agents = vec![agent.name.clone()];
            out.push(f);
            firsts.push(first.loc);
        }
    }
    firsts
}

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let loaded = &ctx.project.loaded;
    let tools = &loaded.audit.tools;
    let said = allow_list_maps(ctx, out);
    for rec in tools {
        if said.contains(&rec.loc) {
            continue; // the map's warning speaks for its first entry
        }
        // Top-level entries are shared rules, an agent's are its own (see `checks::run`).
        let judged = match ctx.scope {
            super::Scope::All => true,
            super::Scope::Shared => rec.agent.is_none(),
            super::Scope::Own => rec.agent.is_some(),
        };
        if !judged {
            continue;
        }
        let name = tool_permission_name(&rec.tool);
        let action = if rec.enabled {
            Action::Allow
        } else {
            Action::Deny
        };
        let entry = format!("`{}: {}`", rec.tool, rec.enabled);
        let rule_text = format!("`{name}` \"*\" {action}");
        let (scope, layer) = match &rec.agent {
            None => ("top-level `tools`".to_string(), Layer::LegacyTools),
            Some(a) => (format!("`tools` of agent `{a}`"), Layer::AgentLegacyTools),
        };
        let final_entry = match &rec.agent {
            None => loaded.merged.permission.get(name),
            Some(a) => loaded
                .merged
                .agent
                .get(a)
                .and_then(|e| e.permission.as_ref())
                .and_then(|p| p.get(name)),
        };
        // The other entries of this map that set the same permission to the same value
        // (`write: false` beside `edit: false`): one rule, said once, at the entry whose
        // rule it is.
        let alike = |other: &crate::load::ToolRecord| {
            other.loc != rec.loc
                && other.agent == rec.agent
                && other.enabled == rec.enabled
                && tool_permission_name(&other.tool) == name
        };
        for (ai, agent) in ctx.agents.iter().enumerate() {
            if rec.agent.as_ref().is_some_and(|a| *a != agent.name) {
                continue;
            }
            let landed = agent
                .rules
                .iter()
                .position(|r| r.loc == Some(rec.loc) && r.layer == layer);
            let finding = match landed {
                Some(i) => {
                    let place = if rec.agent.is_none() {
                        "it comes first among the config rules (tools are merged under `permission`), so any later rule for the same permission overrides it"
                    } else {
                        "it comes first among this agent's own rules, so any later rule of the agent for the same permission overrides it"
                    };
                    // Severity rule (docs/checks.md), clause 3: an entry whose rule takes
                    // effect, or that the agent's own rule switches back on purpose, changes
                    // nothing the author relies on (a deprecated spelling that works).
                    let (level, witnesses, reached) = match &reach[ai][i] {
                        Some(Reach::Decides(input)) => (
                            Level::Info,
                            ctx.recognisable(agent, &[i], input, |w| w.rule == Some(i))
                                .into_iter()
                                .collect(),
                            "; it decides e.g. the witness below".to_string(),
                        ),
                        // Later rules undo all of it: the user sees another decision.
                        Some(Reach::Dead(_)) => {
                            match contrary(ctx, agent, name, action.effective()) {
                                // A top-level entry switched back by the agent's own rule
                                // (`tools: {x_*: false}` globally, `x_*: true` in the one
                                // agent that uses it): the opt-in idiom, deliberate and
                                // working; the entry still decides for the other agents.
                                Some(w)
                                    if rec.agent.is_none()
                                        && w.rule.is_some_and(|k| {
                                            agent.rules.get(k).is_some_and(|r| is_own(r.layer))
                                        }) =>
                                {
                                    // Its place: two agents opting in are two facts,
                                    // each in words of its own.
                                    let said = format!(
                                        "; this agent's own rule {} switches it back (an opt-in for this agent), e.g. the witness below",
                                        w.rule
                                            .and_then(|k| agent.rules.get(k))
                                            .map(|r| ctx.rule_at(r))
                                            .unwrap_or_default()
                                    );
                                    (Level::Info, vec![w], said)
                                }
                                Some(w) => (
                                    looser_than(std::slice::from_ref(&w), action.effective()),
                                    vec![w],
                                    "; later rules undo all of it, e.g. the witness below"
                                        .to_string(),
                                ),
                                None => (Level::Info, Vec::new(), String::new()),
                            }
                        }
                        _ => (Level::Info, Vec::new(), String::new()),
                    };
                    // Undone by a later rule: rewriting the entry as a permission in
                    // the same place changes nothing while that rule stays (an agent's
                    // own `tools: {edit: true}` still wins); the help names that rule.
                    let undone_by = witnesses
                        .first()
                        .filter(|_| level > Level::Info)
                        .and_then(|w| w.rule)
                        .and_then(|k| agent.rules.get(k))
                        // A top-level entry undone by an agent's own rule: a permission
                        // written in a shared file comes before that rule too.
                        .filter(|d| rec.agent.is_none() && d.loc.is_some() && is_own(d.layer));
                    let help = match undone_by {
                        Some(d) => format!(
                            "the later rule {} decides instead, for agent `{}`; rewriting this entry as a permission here changes nothing while that rule stays: change or remove that rule (in its own file) if `{}` should hold there",
                            ctx.rule_at(d),
                            agent.name,
                            entry.trim_matches('`'),
                        ),
                        None => format!("write it as a permission: \"{name}\": \"{action}\""),
                    };
                    let same: Vec<&crate::load::ToolRecord> =
                        tools.iter().filter(|t| alike(t)).collect();
                    let entries = if same.is_empty() {
                        format!("entry {entry} is")
                    } else {
                        let names: Vec<String> = same
                            .iter()
                            .map(|t| format!("`{}: {}`", t.tool, t.enabled))
                            .chain([entry.clone()])
                            .collect();
                        // Same-name entries (a JSON block and its markdown file) are one
                        // key; the file tools are one permission.
                        let why = if name == "edit" {
                            "are one permission (`write`, `edit` and `patch` all set `edit`)"
                        } else {
                            "set one permission"
                        };
                        format!("entries {} {why}, together", names.join(", "))
                    };
                    Finding {
                        id: CHECK.id,
                        level,
                        agents: vec![agent.name.clone()],
                        rule: Some(i),
                        loc: Some(rec.loc),
                        message: format!(
                            "legacy {scope} {entries} translated to the rule {rule_text} [{layer}]; {place}{reached}"
                        ),
                        related: same
                            .iter()
                            .map(|t| (t.loc, format!("also sets `{name}`: the same rule")))
                            .collect(),
                        witnesses,
                        help: Some(help),
                    }
                }
                None => {
                    let leaf = match final_entry {
                        Some(PermEntry::Action(l)) => Some(l),
                        Some(PermEntry::Patterns(p)) | Some(PermEntry::List(p)) => {
                            p.iter().next().map(|(_, l)| l)
                        }
                        None => None,
                    };
                    // Replaced by an entry of the same value: nothing is lost, and the
                    // finding at that entry names this one.
                    if leaf.is_some_and(|l| {
                        l.layer == layer && tools.iter().any(|t| t.loc == l.loc && alike(t))
                    }) {
                        continue;
                    }
                    let winner = match leaf {
                        Some(l) if l.layer == layer => {
                            let other = tools
                                .iter()
                                .find(|t| t.loc == l.loc && t.agent == rec.agent);
                            // The file tools share one key; other tools only replace
                            // an entry of their own name.
                            let why = if name == "edit" {
                                "`write`, `edit` and `patch` all set `edit`; a later entry of the same name replaces an earlier one"
                            } else {
                                "a later entry of the same name replaces an earlier one"
                            };
                            format!(
                                "the later {scope} entry {} at {} ({why})",
                                other
                                    .map(|t| format!("`{}: {}`", t.tool, t.enabled))
                                    .unwrap_or_default(),
                                loaded.sources.position(l.loc)
                            )
                        }
                        Some(l) => format!(
                            "the `permission` key `{name}` at {} [{}], which always wins over a same-name `tools` entry",
                            loaded.sources.position(l.loc),
                            l.layer
                        ),
                        None => format!("a later value of `{name}`"),
                    };
                    let witnesses: Vec<Witness> = contrary(ctx, agent, name, action.effective())
                        .into_iter()
                        .collect();
                    let effect = match witnesses.first() {
                        Some(w) => format!(
                            "; e.g. {} {} is decided by {} → {}",
                            w.permission,
                            serde_json::to_string(&w.input).unwrap_or_default(),
                            // The rule with its place: agents decided by rules of their
                            // own say so in words of their own (one finding per wording).
                            w.rule.map_or("OpenCode's default".to_string(), |k| ctx
                                .rule_at(&agent.rules[k])),
                            w.action
                        ),
                        None => String::new(),
                    };
                    // `write: true` (or `patch`) replaced by an `edit` deny: the author
                    // switched writing on, and OpenCode asks the write tool as `edit`, so
                    // the agent cannot create a file either. Severity rule clause 2: an
                    // allow the author needs that never applies (LEGACY-WRITE-EDIT-MERGED
                    // in tests/real/expert.tsv).
                    // Only a whole-tool deny: a block of patterns (`"*": "deny",
                    // "*.md": "allow"`) or an ask refines the entry on purpose (judged so
                    // on the held half, LT-replaced-perm-refined).
                    let write_lost = rec.enabled
                        && rec.tool != name
                        && matches!(final_entry, Some(PermEntry::Action(l)) if l.action == Action::Deny)
                        && witnesses.iter().any(|w| w.action == Effect::Deny);
                    let level = if write_lost {
                        Level::Warning
                    } else {
                        looser_than(&witnesses, action.effective())
                    };
                    let effect = if write_lost {
                        format!(
                            "{effect}: OpenCode's {} tool asks `{name}`, so this agent cannot create a new file either",
                            rec.tool
                        )
                    } else {
                        effect
                    };
                    Finding {
                        id: CHECK.id,
                        level,
                        agents: vec![agent.name.clone()],
                        rule: None,
                        loc: Some(rec.loc),
                        message: format!(
                            "legacy {scope} entry {entry} ({rule_text}) produces no rule: it is silently replaced by {winner}{effect}"
                        ),
                        related: leaf
                            .map(|l| (l.loc, format!("this replaces {entry}")))
                            .into_iter()
                            .collect(),
                        witnesses,
                        help: Some(match leaf {
                            // `write: false` beside `edit: true`: one permission, and the
                            // later entry decides; a `*` deny under `edit` would stop the
                            // agent editing at all.
                            Some(l) if l.layer == layer && write_lost => format!("`write`, `edit` and `patch` are one permission (`edit`) and the later entry decides it: OpenCode 1.18.34 cannot let an agent create files but not change them. If this agent should write, remove the later entry {}; if it should write only some files, replace both entries by `permission: {{\"edit\": {{\"*\": \"deny\", \"notes/**\": \"allow\"}}}}` with its own paths; if it should not write at all, remove this entry", tools.iter().find(|t| t.loc == l.loc && t.agent == rec.agent).map(|t| format!("`{}: {}`", t.tool, t.enabled)).unwrap_or_default()),
                            Some(l) if l.layer == layer => "remove this entry: `write`, `edit` and `patch` are one permission (`edit`) and the later entry decides it; OpenCode 1.18.34 cannot let an agent edit files but not write new ones, so give all three the one value you mean".to_string(),
                            _ if write_lost => format!("OpenCode 1.18.34 asks the {} tool as `{name}`, and the `permission` key `{name}` decides it: if this agent should write some files, allow them there (`\"{name}\": {{\"*\": \"deny\", \"notes/**\": \"allow\"}}` with its own paths) and remove this entry; if it should not write, remove this entry", rec.tool),
                            _ => format!(
                                "remove the `tools` entry (the `permission` key decides); if every `{name}` call should be {}, write \"*\": \"{action}\" as the first pattern of that key",
                                match action {
                                    Action::Allow => "allowed",
                                    _ => "denied",
                                }
                            ),
                        }),
                    }
                }
            };
            out.push(finding);
        }
    }
}

/// A warning when the user sees a looser decision than the entry says (`bash: false`, yet
/// bash runs: severity rule clause 1, docs/checks.md), info when stricter or the same
/// (`bash: true` beside deliberate `permission.bash` rules: clause 3).
fn looser_than(witnesses: &[Witness], intended: Effect) -> Level {
    use super::overlap::openness;
    if witnesses
        .iter()
        .any(|w| openness(w.action) > openness(intended))
    {
        Level::Warning
    } else {
        Level::Info
    }
}
