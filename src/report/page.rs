//! `permaudit report`: one self-contained HTML page (inline CSS, JavaScript and SVG; no
//! network) that shows what every agent may do: the agents × permissions matrix with each
//! cell's rules in OpenCode's order, the repository's files and commands as `map` decides
//! them, the delegation graph, the findings as `check` reports them, and with a base side
//! what `diff` says widened.
//!
//! The page is data plus a fixed renderer: [`data`] gathers everything the other commands
//! compute into one JSON value (embedded in the page, read by `page.js`), and the
//! delegation graph is drawn here as SVG ([`delegation_svg`]), so the page shows the graph
//! before any script runs. Same input, same bytes: nothing depends on time, the machine or
//! hash order.
//!
//! The matrix's columns are the permissions 1.18.34's tools ask ([`PERMISSIONS`]: `edit`
//! for the edit, write and apply_patch tools) and the literal names a tool may ask; rules of
//! the others ([`never_consulted`]) are listed apart, never as deciding anything.
//!
//! A matrix cell's summary: the permission's rules (those whose permission glob matches the
//! name), the last `*` pattern among them (the cell's default; OpenCode's default ask when
//! there is none), and every later rule that decides some input a tool asks
//! ([`crate::checks::Ctx::live_input`], the same search `check` and the language server's
//! hover use, kept by [`is_asked`]); those with another effect are the cell's exceptions.
//! One effect: that effect; more: `mixed`. A tool whose last matching rule is `* deny` is
//! hidden from the model ([`crate::agents::is_hidden`]): `deny`, marked hidden. Every cell
//! is what `explain` answers (`tests/report_cells.rs`).
//!
//! The first screen ([`risks`]) says per agent what it may do without asking that an admin
//! would regret; only [`is_internal`] agents are left out of it and hidden by default.
//!
//! What `page.js` derives from the data, with no new facts: the agent filter and sort, the
//! quiet columns it folds (low-stakes tools no user rule names), the `⚠` marks (a cell whose
//! rules include the place of an error or warning for that agent) and each finding's links
//! to those cells, findings grouped by kind, and "what can AGENT reach?" (the delegation
//! edges walked breadth first up to `subagent_depth`, a gain being an `edit` or `bash` cell
//! denied to the picked agent and not to the reached one, as [`escalation`] says per edge).

use crate::agents::{Agent, NOT_TOOLS, is_hidden};
use crate::checks::{Ctx, Finding};
use crate::glob::Wildcard;
use crate::map::{AgentMap, FileSet, NO_RULE};
use crate::model::Effect;
use crate::project::Project;
use crate::shell::Splitter;
use serde_json::{Value, json};

/// The permissions OpenCode 1.18.34's tools and loop ask, in the matrix's order (the edit,
/// write and apply_patch tools all ask `edit`; there is no `list` or `codesearch` tool);
/// names the config writes literally that a tool may ask (MCP tools, custom tools) follow,
/// sorted.
pub const PERMISSIONS: &[&str] = &[
    "read",
    "edit",
    "bash",
    "glob",
    "grep",
    "task",
    "webfetch",
    "websearch",
    "external_directory",
    "skill",
    "lsp",
    "todowrite",
    "question",
    "doom_loop",
];

/// The most files the page embeds (in git's order): a larger repository shows these and
/// says how many there are (docs/limits.md).
pub const MAX_FILES: usize = 20_000;

/// One command of the project and each agent's decision (agents in `agents` order).
pub struct CommandRow {
    pub text: String,
    pub kind: &'static str,
    pub name: Option<String>,
    pub path: String,
    pub line: usize,
    /// Per agent of the page: the action and the deciding rule's index (`None`: nothing
    /// matched, or not a rule of the agent).
    pub decided: Vec<(Effect, Option<usize>)>,
}

/// The repository's files as `map` decided them for every agent.
pub struct Files<'a> {
    pub set: &'a FileSet,
    /// One per agent of the project, in its order.
    pub maps: &'a [AgentMap],
}

/// What the page shows; everything computed by the library before rendering.
pub struct Inputs<'a> {
    pub project: &'a Project,
    /// As `check` reports them (settings, ignores, baseline applied).
    pub findings: &'a [Finding],
    /// Per finding: the proven fix (`safe` or `narrowing`, and what it does).
    pub fixes: &'a [Option<(&'static str, String)>],
    /// `None`: not a git repository (the section says so).
    pub files: Option<Files<'a>>,
    pub commands: &'a [CommandRow],
    /// `report::diff::json` of base vs this project, with `--base`.
    pub diff: Option<Value>,
    /// Per cause of `diff`: its agents as `diff`'s help line names them
    /// (`report::diff::agents_shown`).
    pub diff_agents: Vec<String>,
    /// Shown in the title: the project's directory.
    pub title: &'a str,
}

/// What one agent may do with one permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// `allow`, `ask`, `deny` or `mixed`.
    pub summary: &'static str,
    /// The tool is hidden from the model (its last matching rule is `* deny`).
    pub hidden: bool,
    /// The agent's rules whose permission glob matches the name, in order: the index, and
    /// for a rule whose own example is another permission's, an input it decides for this
    /// one (`Some(None)`: none found).
    pub rules: Vec<(usize, Option<Option<String>>)>,
    /// What an input no later rule singles out gets: the last all-`*` rule's action, or
    /// OpenCode's default ask.
    pub default: Effect,
    /// The rules after that one which decide some input otherwise (a `mixed` cell's
    /// exceptions), in order.
    pub exceptions: Vec<usize>,
}

/// Why OpenCode 1.18.34 never consults rules of `permission` in this project, or `None`
/// when a tool may ask it: the names no tool of 1.18.34 asks (`write`, `patch`,
/// `multiedit`, `apply_patch`: asked as `edit`; `list`, `todoread`, `codesearch`: no such
/// tool), and the keys `unchecked-permission` reports (typos, PascalCase, `Bash(…)`,
/// commands written as keys), except a tool the project defines and a plain name a plugin
/// the config loads may add.
pub fn never_consulted(project: &Project, permission: &str) -> Option<String> {
    crate::checks::unchecked_permission::never_consulted(project, permission)
}

/// The matrix's permissions for a project: [`PERMISSIONS`], then every other permission a
/// rule names literally (no wildcard) that a tool may ask ([`never_consulted`]), sorted.
pub fn permissions(project: &Project) -> Vec<String> {
    let mut out: Vec<String> = PERMISSIONS.iter().map(|s| s.to_string()).collect();
    let mut extra: Vec<&str> = project
        .agents
        .iter()
        .flat_map(|a| a.rules.iter().map(|r| r.permission.as_str()))
        .filter(|p| !p.contains(['*', '?']) && !PERMISSIONS.contains(p) && !p.is_empty())
        .collect();
    extra.sort_unstable();
    extra.dedup();
    extra.retain(|p| never_consulted(project, p).is_none());
    out.extend(extra.into_iter().map(String::from));
    out
}

/// Could a tool ask `permission` about exactly `input`? [`crate::checks::examples::is_asked`]
/// (no absolute `read` path, no `external_directory` subject other than `/dir/*`, no
/// command with white space at an end), and for `bash` one command the bash tool asks
/// about as such: split as the tool splits it, one part whose text is the input (never
/// `TMPFILE=$(mktemp)` nor `x>>`, which it asks in other parts).
fn is_asked(splitter: &mut Splitter, permission: &str, input: &str) -> bool {
    crate::checks::examples::is_asked(permission, input)
        && (permission != "bash"
            || matches!(splitter.parts(input).as_slice(), [p] if p.asked() && p.text == input))
}

/// Per rule of agent `a`: one input it decides that OpenCode asks ([`is_asked`]) (the most
/// recognisable one the checks' example search finds, else the analysis' shortest), or
/// `None` when the search finds none (every input it matches is decided by a later rule or
/// never asked, or the budget ran out).
fn examples(
    ctx: &Ctx<'_>,
    a: usize,
    agent: &Agent,
    splitter: &mut Splitter,
) -> Vec<Option<crate::checks::Witness>> {
    (0..agent.rules.len())
        .map(|i| {
            let input = ctx.live_input(a, i)?;
            ctx.recognisable(agent, &[i], &input, |w| w.rule == Some(i))
                .or_else(|| ctx.witness(agent, &input))
                .filter(|w| w.rule == Some(i) && is_asked(splitter, &w.permission, &w.input))
        })
        .collect()
}

/// A pattern that matches every input: only `*`s (`*` and `**` are both "anything").
fn matches_all(pattern: &str) -> bool {
    !pattern.is_empty() && pattern.chars().all(|c| c == '*')
}

/// The cell of `agent` and `permission` (see the module docs), given each rule's example.
fn cell(
    project: &Project,
    agent: &Agent,
    permission: &str,
    globs: &[Wildcard],
    examples: &[Option<crate::checks::Witness>],
    splitter: &mut Splitter,
) -> Cell {
    let platform = project.platform;
    let matching: Vec<usize> = globs
        .iter()
        .enumerate()
        .filter(|(_, g)| g.is_match(permission, platform))
        .map(|(i, _)| i)
        .collect();
    // Per matching rule: `None` when its own example is this permission's, else the input
    // it decides here (`Some(None)`: none known for this permission).
    let rules: Vec<(usize, Option<Option<String>>)> = matching
        .iter()
        .map(|&i| {
            let r = &agent.rules[i];
            match &examples[i] {
                Some(w) if w.permission == permission => (i, None),
                None if r.permission == permission => (i, None),
                w => {
                    let decided_here = |input: &str| {
                        crate::agents::evaluate(&agent.rules, permission, input, platform).rule
                            == Some(i)
                    };
                    let here = w
                        .as_ref()
                        .map(|w| w.input.clone())
                        .into_iter()
                        .chain(matches_all(&r.pattern).then(|| "x".to_string()))
                        .find(|input| is_asked(splitter, permission, input) && decided_here(input));
                    (i, Some(here))
                }
            }
        })
        .collect();
    let hidden = !NOT_TOOLS.contains(&permission) && is_hidden(&agent.rules, permission, platform);
    if hidden {
        return Cell {
            summary: "deny",
            hidden,
            rules,
            default: Effect::Deny,
            exceptions: Vec::new(),
        };
    }
    let last_all = matching
        .iter()
        .rposition(|&i| matches_all(&agent.rules[i].pattern));
    let base = last_all.map_or(Effect::Ask, |k| agent.rules[matching[k]].action.effective());
    let mut effects = vec![base];
    let mut exceptions = Vec::new();
    for (k, &i) in matching
        .iter()
        .enumerate()
        .skip(last_all.map_or(0, |k| k + 1))
    {
        let r = &agent.rules[i];
        let live = match &rules[k].1 {
            None => examples[i].is_some(),
            Some(Some(_)) => true,
            // A glob permission with no input found here: counted unless proven dead for
            // every permission (mixed rather than a false claim of one effect).
            Some(None) => examples[i].is_some(),
        };
        let e = r.action.effective();
        if live && e != base {
            exceptions.push(i);
        }
        if live && !effects.contains(&e) {
            effects.push(e);
        }
    }
    Cell {
        summary: match effects.as_slice() {
            [e] => effect_str(*e),
            _ => "mixed",
        },
        hidden,
        rules,
        default: base,
        exceptions,
    }
}

fn effect_str(e: Effect) -> &'static str {
    match e {
        Effect::Allow => "allow",
        Effect::Ask => "ask",
        Effect::Deny => "deny",
    }
}

/// Every agent's cells, in `permissions` order.
pub fn matrix(project: &Project, permissions: &[String]) -> Vec<Vec<Cell>> {
    matrix_and_examples(project, permissions).0
}

type Examples = Vec<Vec<Option<crate::checks::Witness>>>;

fn matrix_and_examples(project: &Project, permissions: &[String]) -> (Vec<Vec<Cell>>, Examples) {
    let ctx = Ctx::new(project);
    let mut splitter = Splitter::new();
    let mut cells = Vec::with_capacity(project.agents.len());
    let mut all = Vec::with_capacity(project.agents.len());
    for (a, agent) in project.agents.iter().enumerate() {
        let ex = examples(&ctx, a, agent, &mut splitter);
        let globs: Vec<Wildcard> = agent
            .rules
            .iter()
            .map(|r| Wildcard::compile(&r.permission))
            .collect();
        cells.push(
            permissions
                .iter()
                .map(|p| cell(project, agent, p, &globs, &ex, &mut splitter))
                .collect(),
        );
        all.push(ex);
    }
    (cells, all)
}

/// Why an edge escalates: the caller may not edit (or run commands) at all, the subagent
/// may (allowed, asked or depending on the input).
fn escalation(
    permissions: &[String],
    cells: &[Vec<Cell>],
    caller: usize,
    sub: usize,
) -> Option<String> {
    let mut why = Vec::new();
    for p in ["edit", "bash"] {
        let Some(k) = permissions.iter().position(|x| x == p) else {
            continue;
        };
        let (c, s) = (&cells[caller][k], &cells[sub][k]);
        if c.summary == "deny" && s.summary != "deny" {
            why.push(format!("{p}: deny → {}", s.summary));
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// A rule's place: `path:line:col`, or its built-in origin.
fn place(project: &Project, r: &crate::model::Rule) -> String {
    match r.loc {
        Some(l) => project.loaded.sources.position(l).to_string(),
        None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
    }
}

/// The lines around a finding (two before, two after), each cleaned and cut to 240
/// characters: `{"first": 1-based line, "mark": 1-based line, "lines": [...]}`.
fn snippet(project: &Project, f: &Finding) -> Value {
    let Some(loc) = f.loc else {
        return Value::Null;
    };
    let file = project.loaded.sources.get(loc.source);
    let line = file.line_of(loc.span.start);
    let first = line.saturating_sub(2);
    let lines: Vec<String> = (first..=line + 2)
        .map(|l| (file.line_start(l), file.line_start(l + 1)))
        .filter(|(s, e)| s < e || *s < file.text.len())
        .map(|(s, e)| {
            let text = file
                .text
                .get(s..e)
                .unwrap_or("")
                .trim_end_matches(['\n', '\r']);
            let cut: String = text.chars().take(240).collect();
            super::clean(&cut).into_owned()
        })
        .collect();
    json!({"first": first + 1, "mark": line + 1, "lines": lines})
}

/// Everything the page shows, as the JSON value `page.js` reads.
pub fn data(inputs: &Inputs<'_>) -> Value {
    build(inputs).0
}

/// One edge of the delegation graph as drawn.
struct Drawn {
    caller: usize,
    callee: usize,
    action: &'static str,
    escalation: Option<String>,
}

fn build(inputs: &Inputs<'_>) -> (Value, Vec<Drawn>) {
    let p = inputs.project;
    let permissions = permissions(p);
    let (cells, examples) = matrix_and_examples(p, &permissions);
    let edges = crate::delegation::edges(p);
    let agents: Vec<Value> = p
        .agents
        .iter()
        .zip(&examples)
        .map(|(a, ex)| {
            let rules: Vec<Value> = a
                .rules
                .iter()
                .zip(ex)
                .map(|(r, w)| {
                    json!([
                        r.permission,
                        r.pattern,
                        r.action.to_json(),
                        r.layer.as_str(),
                        place(p, r),
                        w.as_ref().map(|w| json!([w.permission, w.input])),
                    ])
                })
                .collect();
            json!({
                "name": a.name,
                "display": a.display,
                "mode": a.mode.as_str(),
                "hidden": a.hidden,
                "native": a.native,
                "internal": a.is_internal(),
                "rules": rules,
                "hidden_tools": crate::agents::hidden_tools(&a.rules, p.platform),
            })
        })
        .collect();
    let drawn: Vec<Drawn> = edges
        .iter()
        .map(|e| Drawn {
            caller: e.caller,
            callee: e.callee,
            action: effect_str(e.action),
            escalation: escalation(&permissions, &cells, e.caller, e.callee),
        })
        .collect();
    let edges: Vec<Value> = edges
        .iter()
        .zip(&drawn)
        .map(|(e, d)| {
            let caller = &p.agents[e.caller];
            json!({
                "caller": caller.name,
                "subagent": p.agents[e.callee].name,
                "action": d.action,
                "rule": e.rule,
                "place": e.rule.and_then(|k| caller.rules.get(k)).map(|r| place(p, r)),
                "escalation": d.escalation,
            })
        })
        .collect();
    let risks = risks(p, &permissions, &cells, &drawn);
    let cells: Vec<Value> = cells
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| {
                    let rules: Vec<Value> = c
                        .rules
                        .iter()
                        .map(|(i, here)| match here {
                            None => json!(i),
                            Some(input) => json!([i, input]),
                        })
                        .collect();
                    json!([
                        c.summary,
                        c.hidden,
                        rules,
                        effect_str(c.default),
                        c.exceptions,
                    ])
                })
                .collect::<Value>()
        })
        .collect();
    let findings: Vec<Value> = inputs
        .findings
        .iter()
        .enumerate()
        .map(|(n, f)| {
            let mut v = super::check::finding_json(p, f);
            if let Some(o) = v.as_object_mut() {
                o.insert("snippet".into(), snippet(p, f));
                o.insert(
                    "place".into(),
                    f.loc
                        .map(|l| p.loaded.sources.position(l).to_string())
                        .into(),
                );
                o.insert(
                    "fix".into(),
                    match inputs.fixes.get(n).and_then(|x| x.as_ref()) {
                        Some((safety, title)) => json!({"safety": safety, "title": title}),
                        None => Value::Null,
                    },
                );
            }
            v
        })
        .collect();
    let (e, w, i) = super::check::summary(inputs.findings);
    let files = inputs.files.as_ref().map(|f| files_json(p, f));
    let commands: Vec<Value> = inputs
        .commands
        .iter()
        .map(|c| {
            json!({
                "text": c.text, "kind": c.kind, "name": c.name, "path": c.path, "line": c.line,
                "decided": c.decided.iter().map(|(e, r)| json!([effect_str(*e), r])).collect::<Vec<_>>(),
            })
        })
        .collect();
    let v = json!({
        "version": 1,
        "title": inputs.title,
        "opencode": super::rules::opencode_json(p),
        "permissions": permissions,
        "agents": agents,
        "cells": cells,
        "delegation": {"depth": crate::delegation::depth(p), "edges": edges},
        "findings": findings,
        "summary": {"error": e, "warning": w, "info": i},
        "files": files,
        "commands": commands,
        "diff": inputs.diff,
        "diff_agents": inputs.diff_agents,
        "unconsulted": unconsulted(p),
        "risks": risks,
    });
    (v, drawn)
}

/// The rules OpenCode never consults ([`never_consulted`]), one entry per rule as written
/// (a shared rule once, with every agent holding it), in agent then rule order:
/// `{"permission", "pattern", "action", "place", "why", "agents"}`.
fn unconsulted(p: &Project) -> Vec<Value> {
    struct Entry<'a> {
        rule: &'a crate::model::Rule,
        place: String,
        why: String,
        agents: Vec<&'a str>,
    }
    let mut why_of: Vec<(&str, Option<String>)> = Vec::new();
    let mut out: Vec<Entry<'_>> = Vec::new();
    for a in &p.agents {
        for r in &a.rules {
            let why = match why_of.iter().find(|(k, _)| *k == r.permission) {
                Some((_, w)) => w.clone(),
                None => {
                    let w = never_consulted(p, &r.permission);
                    why_of.push((&r.permission, w.clone()));
                    w
                }
            };
            let Some(why) = why else { continue };
            let at = place(p, r);
            let same = |e: &&mut Entry<'_>| {
                e.rule.permission == r.permission
                    && e.rule.pattern == r.pattern
                    && e.rule.action == r.action
                    && e.place == at
            };
            match out.iter_mut().find(same) {
                Some(e) => {
                    if !e.agents.contains(&a.name.as_str()) {
                        e.agents.push(&a.name);
                    }
                }
                None => out.push(Entry {
                    rule: r,
                    place: at,
                    why: super::clean(&why).into_owned(),
                    agents: vec![&a.name],
                }),
            }
        }
    }
    out.iter()
        .map(|e| {
            json!({"permission": e.rule.permission, "pattern": e.rule.pattern,
                   "action": e.rule.action.to_json(), "place": e.place, "why": e.why,
                   "agents": e.agents})
        })
        .collect()
}

/// What each agent (OpenCode's internal ones aside) may do that an admin would regret, in
/// words, from its cells and single inputs decided as `explain` decides them: `{"agent",
/// "permission", "text"}` (`permission`: the cell behind it, `task` for a delegation).
/// Each is done without asking: any command (the `bash` cell's default allow), any file
/// edit, files outside the project; else a command that pushes or deletes, an edit of the
/// project's OpenCode config or agents; a secret read (`.env`); starting a subagent that
/// may edit or run commands where the caller may not (an escalation edge).
fn risks(p: &Project, permissions: &[String], cells: &[Vec<Cell>], edges: &[Drawn]) -> Vec<Value> {
    let col = |name: &str| permissions.iter().position(|x| x == name);
    let mut out = Vec::new();
    for (ai, agent) in p.agents.iter().enumerate() {
        if agent.is_internal() {
            continue;
        }
        let mut push = |permission: &str, text: String| {
            out.push(json!({"agent": agent.name, "permission": permission, "text": text}));
        };
        let decide = |permission: &str, input: &str| {
            crate::agents::evaluate(&agent.rules, permission, input, p.platform).effect
        };
        let cell = |name: &str| col(name).map(|k| &cells[ai][k]);
        // Whole tools: the cell's default (what every input no later rule singles out gets).
        for (perm, what) in [
            ("bash", "runs any command"),
            ("edit", "edits any file in the project"),
            ("external_directory", "reaches files outside the project"),
        ] {
            let Some(c) = cell(perm) else { continue };
            if c.hidden {
                continue;
            }
            let n = c.exceptions.len();
            let except = match n {
                0 => String::new(),
                1 => " (1 rule decides otherwise)".into(),
                n => format!(" ({n} rules decide otherwise)"),
            };
            if c.default == Effect::Allow {
                push(perm, format!("{what} without asking{except}"));
            }
        }
        // Single inputs: a push, a deletion, the project's config, a secret.
        let bash_default_allow =
            cell("bash").is_some_and(|c| !c.hidden && c.default == Effect::Allow);
        if let Some(c) = cell("bash")
            && !c.hidden
            && !bash_default_allow
        {
            for (command, what) in [
                ("git push origin main", "may push (git push)"),
                ("rm -rf build", "may delete files (rm -rf)"),
            ] {
                if decide("bash", command) == Effect::Allow {
                    push("bash", format!("{what} without asking"));
                }
            }
        }
        if let Some(c) = cell("edit")
            && !c.hidden
            && c.default != Effect::Allow
        {
            for (path, what) in [
                (
                    "opencode.json",
                    "edits the project's OpenCode config (opencode.json)",
                ),
                (
                    ".opencode/agent/build.md",
                    "edits the project's agents (.opencode/agent/)",
                ),
            ] {
                if decide("edit", path) == Effect::Allow {
                    push("edit", format!("{what} without asking"));
                }
            }
        }
        if let Some(c) = cell("read")
            && !c.hidden
            && decide("read", ".env") == Effect::Allow
        {
            push("read", "reads secrets (.env) without asking".into());
        }
        for e in edges.iter().filter(|e| e.caller == ai) {
            if let Some(why) = &e.escalation {
                push(
                    "task",
                    format!(
                        "may start {}, which may do what it may not ({why})",
                        p.agents[e.callee].name
                    ),
                );
            }
        }
    }
    out
}

/// The repository's files and each agent's read and edit decisions, one character per
/// file (`a` allow, `k` ask, `d` deny), at most [`MAX_FILES`] paths.
fn files_json(p: &Project, f: &Files<'_>) -> Value {
    let n = f.set.len().min(MAX_FILES);
    let letters = |rules: &[crate::model::Rule], decided: &[u32]| -> String {
        decided
            .iter()
            .take(n)
            .map(|&k| {
                let e = if k == NO_RULE {
                    Effect::Ask
                } else {
                    crate::map::effect(rules, k)
                };
                match e {
                    Effect::Allow => 'a',
                    Effect::Ask => 'k',
                    Effect::Deny => 'd',
                }
            })
            .collect()
    };
    let mut read = Vec::new();
    let mut edit = Vec::new();
    for m in f.maps {
        let rules = p.agents.get(m.agent).map_or(&[][..], |a| &a.rules[..]);
        read.push(letters(rules, &m.read));
        edit.push(letters(rules, &m.edit));
    }
    json!({
        "paths": &f.set.paths[..n],
        "total": f.set.len(),
        "read": read,
        "edit": edit,
    })
}

/// XML text: `&`, `<`, `>`, `"` escaped, control characters as their pictures.
pub fn escape(s: &str) -> String {
    let s = super::clean(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A name cut to `max` characters (an ellipsis when cut).
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// The delegation graph as SVG: callers on the left, the subagents they may start on the
/// right, one curve per edge (solid: allowed, dashed: asked), escalations red and thick.
/// Every node and edge has a text alternative (`<title>`, `aria-label`); no edge is a tab
/// stop (hundreds of them stood between the matrix and the findings): the list below the
/// graph says the same in text.
fn delegation_svg(p: &Project, edges: &[Drawn]) -> String {
    let mut callers: Vec<usize> = edges.iter().map(|e| e.caller).collect();
    callers.sort_unstable();
    callers.dedup();
    let mut subs: Vec<usize> = edges.iter().map(|e| e.callee).collect();
    subs.sort_unstable();
    subs.dedup();
    if edges.is_empty() {
        return String::from(
            "<p class=\"empty\">No agent may start a subagent (every <code>task</code> denied, the tool hidden, or <code>subagent_depth</code> 0).</p>",
        );
    }
    let (row, top, node_w, node_h, width) = (40usize, 30usize, 190usize, 28usize, 640usize);
    let rows = callers.len().max(subs.len());
    let height = top + rows * row + 10;
    let left_x = 10;
    let right_x = width - node_w - 10;
    let y_of = |list: &[usize], a: usize| {
        let k = list.iter().position(|&x| x == a).unwrap_or(0);
        // Centre the shorter column.
        let offset = (rows - list.len()) * row / 2;
        top + offset + k * row
    };
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"delegation-graph\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"group\" aria-labelledby=\"deleg-title\">\n<title id=\"deleg-title\">Delegation graph: {} edges from {} agents to {} subagents</title>\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" class=\"arrowhead\"/></marker><marker id=\"arrow-esc\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" class=\"arrowhead-esc\"/></marker></defs>\n<text x=\"{left_x}\" y=\"16\" class=\"col-head\">may start →</text><text x=\"{right_x}\" y=\"16\" class=\"col-head\">subagent</text>\n",
        edges.len(),
        callers.len(),
        subs.len()
    );
    for e in edges {
        let (caller, sub) = (&p.agents[e.caller].name, &p.agents[e.callee].name);
        let y1 = y_of(&callers, e.caller) + node_h / 2;
        let y2 = y_of(&subs, e.callee) + node_h / 2;
        let (x1, x2) = (left_x + node_w, right_x - 2);
        let mid = (x1 + x2) / 2;
        let esc = e.escalation.is_some();
        let label = format!(
            "{caller} may start {sub}: {}{}",
            if e.action == "allow" {
                "without asking (allow)"
            } else {
                "after asking (ask)"
            },
            e.escalation
                .as_ref()
                .map(|w| format!("; escalation ({w})"))
                .unwrap_or_default()
        );
        out.push_str(&format!(
            "<g class=\"edge {}{}\" data-caller=\"{}\" data-subagent=\"{}\" role=\"img\" aria-label=\"{}\"><title>{}</title><path d=\"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}\" marker-end=\"url(#{})\"/></g>\n",
            e.action,
            if esc { " escalation" } else { "" },
            escape(caller),
            escape(sub),
            escape(&label),
            escape(&label),
            if esc { "arrow-esc" } else { "arrow" },
        ));
    }
    for (list, x, side) in [(&callers, left_x, "caller"), (&subs, right_x, "subagent")] {
        for &a in list.iter() {
            let agent = &p.agents[a];
            let y = y_of(list, a);
            out.push_str(&format!(
                "<g class=\"node {side}\" data-agent=\"{}\"><title>{} ({})</title><rect x=\"{x}\" y=\"{y}\" width=\"{node_w}\" height=\"{node_h}\" rx=\"6\"/><text x=\"{}\" y=\"{}\">{}</text></g>\n",
                escape(&agent.name),
                escape(&agent.name),
                agent.mode.as_str(),
                x + 10,
                y + node_h / 2 + 5,
                escape(&short(&agent.name, 24)),
            ));
        }
    }
    out.push_str("</svg>");
    out
}

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The page: one HTML document, everything inline.
pub fn html(inputs: &Inputs<'_>) -> String {
    let (data, drawn) = build(inputs);
    // `<` never appears raw inside the script element: the JSON stays valid and no
    // `</script>` in a pattern can end the element.
    let json = serde_json::to_string(&data)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c");
    let svg = delegation_svg(inputs.project, &drawn);
    let title = escape(inputs.title);
    let mut out = String::with_capacity(json.len() + CSS.len() + JS.len() + svg.len() + 4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<meta name=\"color-scheme\" content=\"light dark\">\n");
    out.push_str(&format!(
        "<title>permaudit report: {title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n"
    ));
    out.push_str(&format!(
        "<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header><h1>What every agent may do <span class=\"where\">{title}</span></h1><p class=\"sub\">permaudit report · as OpenCode {} decides it</p><nav aria-label=\"Sections\" id=\"nav\"></nav></header>\n<main id=\"main\">\n",
        escape(&inputs.project.profile.requested.to_string())
    ));
    out.push_str("<section id=\"diff\" hidden></section>\n");
    out.push_str("<section id=\"glance\" aria-labelledby=\"glance-h\"><h2 id=\"glance-h\">At a glance</h2></section>\n");
    out.push_str("<section id=\"matrix\" aria-labelledby=\"matrix-h\"><h2 id=\"matrix-h\">Agents × permissions</h2><div id=\"matrix-body\"><p>This page needs JavaScript for the matrix, files and findings; the delegation graph below is drawn without it.</p></div></section>\n");
    out.push_str("<section id=\"files\" aria-labelledby=\"files-h\"><h2 id=\"files-h\">In this repository</h2><div id=\"files-body\"></div></section>\n");
    out.push_str(&format!(
        "<section id=\"delegation\" aria-labelledby=\"delegation-h\"><h2 id=\"delegation-h\">Delegation</h2><p class=\"legend\"><span class=\"key allow-line\">solid: starts it without asking</span> <span class=\"key ask-line\">dashed: asks first</span> <span class=\"key esc-line\">red: escalation (the caller may not edit or run commands, the subagent may)</span></p><div class=\"graph\">{svg}</div><div id=\"delegation-list\"></div></section>\n"
    ));
    out.push_str("<section id=\"findings\" aria-labelledby=\"findings-h\"><h2 id=\"findings-h\">Findings</h2><div id=\"findings-body\"></div></section>\n");
    out.push_str("</main>\n<footer>Generated by permaudit. Same configuration, same page: nothing here depends on the time or the machine.</footer>\n");
    out.push_str(&format!(
        "<script type=\"application/json\" id=\"data\">{json}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n"
    ));
    out
}
