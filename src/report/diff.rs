//! `permaudit diff` output: human (miette, like `check`), JSON, markdown for a pull-request
//! comment, SARIF 2.1.0 and GitHub annotations (on the head side's lines).
//!
//! JSON contract, version 2: `{"version":2,"base":{"label","kind"},"head":{"label","kind"},
//! "causes":[{"class","permission","other_permissions","side","rule","agents","regions":
//! [{"input","before","after","base_rule","head_rule","agents"}]}],"changes":[{"agent","class","permission","other_permissions","input","before","after",
//! "base_rule","head_rule"}],"events":[{"agent","class","tool"}],"commands":[{"path",
//! "line","kind","name","text","agent","before","after","class"}],"inconclusive":[{"agent",
//! "permission","reason"}],"unchecked":[{"agent","permission"}],"summary":{"widened",
//! "narrowed","agent_added","agent_removed","tool_shown","tool_hidden","commands",
//! "inconclusive","unchecked","no_change"}}`. `unchecked` lists the agents whose rules of a
//! permission OpenCode never checks (`write`) changed: no decision did. A rule is
//! `{"index","permission","pattern","action","layer","source":{"path","line","column"}|null,
//! "builtin"}` or null (no rule matched: OpenCode's default ask). `kind` is `git`,
//! `worktree` or `dir`; a source path is worktree-relative, prefixed by `REV:` on a git
//! side and by the directory on a `--base-dir`/`--head-dir` side.

use super::Style;
use crate::agents::Agent;
use crate::diff::{Cause as From, Change, Class, Diff};
use crate::project::Project;
use crate::shell::corpus::Command;
use crate::source::Loc;
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, Severity};
use serde_json::{Value, json};
use std::path::Path;

/// Where a side's files came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideKind {
    Git,
    /// The index (`--staged`).
    Index,
    WorkTree,
    Dir,
}

impl SideKind {
    fn as_str(self) -> &'static str {
        match self {
            SideKind::Git => "git",
            SideKind::Index => "index",
            SideKind::WorkTree => "worktree",
            SideKind::Dir => "dir",
        }
    }
}

/// One side as the reader knows it.
#[derive(Debug, Clone)]
pub struct Side {
    /// `HEAD`, `work tree`, a directory.
    pub label: String,
    pub kind: SideKind,
    /// Put before a worktree-relative path: `HEAD:`, `dir/`, or nothing.
    pub prefix: String,
}

impl Side {
    pub fn new(label: String, kind: SideKind, prefix: String) -> Side {
        Side {
            label,
            kind,
            prefix,
        }
    }
}

/// Both sides and what the renderers need of them.
pub struct Sides<'a> {
    pub base: &'a Project,
    pub head: &'a Project,
    pub base_side: Side,
    pub head_side: Side,
    /// The worktree root both sides stand for.
    pub root: &'a Path,
    /// The commands `Diff::commands` indexes.
    pub commands: &'a [Command],
}

/// A rendered place: the path as shown, the worktree-relative path (for annotations, when
/// the file is in the project), line and column.
struct Place {
    shown: String,
    relative: Option<String>,
    line: usize,
    column: usize,
}

impl Sides<'_> {
    fn side(&self, head: bool) -> (&Project, &Side) {
        if head {
            (self.head, &self.head_side)
        } else {
            (self.base, &self.base_side)
        }
    }

    fn agent(&self, head: bool, name: &str) -> Option<&Agent> {
        self.side(head).0.agents.iter().find(|a| a.name == name)
    }

    fn place(&self, head: bool, loc: Loc) -> Place {
        let (p, side) = self.side(head);
        let pos = p.loaded.sources.position(loc);
        let relative = Path::new(&pos.name)
            .strip_prefix(self.root)
            .ok()
            .map(|r| r.display().to_string());
        let shown = match &relative {
            Some(r) => format!("{}{r}", side.prefix),
            None => pos.name.clone(),
        };
        Place {
            shown,
            relative,
            line: pos.line,
            column: pos.column,
        }
    }

    /// `` `bash` "git *" allow at opencode.json:4:5 ``, a built-in, or the default.
    pub(crate) fn rule_text(&self, head: bool, agent: &str, rule: Option<usize>) -> String {
        let Some(r) = rule.and_then(|i| self.agent(head, agent)?.rules.get(i)) else {
            return "no rule (OpenCode's default: ask)".to_string();
        };
        let what = crate::checks::describe(r);
        match r.loc {
            Some(l) => {
                let p = self.place(head, l);
                format!("{what} at {}:{}:{}", p.shown, p.line, p.column)
            }
            None => format!(
                "{what}, built in ({})",
                r.builtin.as_deref().unwrap_or("OpenCode")
            ),
        }
    }

    fn rule_loc(&self, head: bool, agent: &str, rule: Option<usize>) -> Option<Loc> {
        rule.and_then(|i| self.agent(head, agent)?.rules.get(i)?.loc)
    }

    pub(crate) fn rule_json(&self, head: bool, agent: &str, rule: Option<usize>) -> Value {
        let Some((i, r)) = rule.and_then(|i| Some((i, self.agent(head, agent)?.rules.get(i)?)))
        else {
            return Value::Null;
        };
        let source = r.loc.map(|l| {
            let p = self.place(head, l);
            json!({"path": p.shown, "line": p.line, "column": p.column})
        });
        json!({
            "index": i,
            "permission": r.permission,
            "pattern": r.pattern,
            "action": r.action.to_json(),
            "layer": r.layer,
            "source": source,
            "builtin": r.builtin,
        })
    }
}

/// Changes equal but for the agent, grouped (a top-level rule changes every agent): one
/// region of inputs, with the agents it holds for.
struct Group<'a> {
    first: &'a Change,
    agents: Vec<&'a str>,
    before: String,
    after: String,
}

/// How many regions a cause lists in human, markdown, SARIF and GitHub output (JSON lists
/// every one).
const WITNESSES: usize = 2;

/// Regions grouped by their cause ([`crate::diff::Change::cause`]): the edited rule (as
/// written: its text and place) that now decides them on the head side, or, for a rule
/// removed or changed away, that decided them on the base side; in one permission cell,
/// with one class. A catch-all added at the head of a config changes hundreds of regions
/// (one per rule it now overrides), a removed catch-all as many: the reviewer reads one
/// line for each.
struct Cause<'a> {
    /// The regions, in the order found (widened first overall).
    regions: Vec<Group<'a>>,
    /// Every agent some region holds for, in the order found.
    agents: Vec<&'a str>,
}

impl<'a> Cause<'a> {
    fn first(&self) -> &'a Change {
        self.regions[0].first
    }

    /// The cause is the head side's rule (else the base side's).
    fn on_head(&self) -> bool {
        self.first().cause == From::Head
    }

    /// The causing rule's place on the head side, when the cause is a head rule with one.
    fn head_place(&self, s: &Sides<'_>) -> Option<Place> {
        let c = self.first();
        let l = s.rule_loc(true, &c.agent, c.head_rule)?;
        self.on_head().then(|| s.place(true, l))
    }

    /// The causing rule, as [`Sides::rule_text`] says it.
    fn rule(&self) -> &str {
        cause_text(&self.regions[0])
    }

    /// The distinct effects on the other side, in order found: `deny`, `ask/deny`.
    fn others(&self) -> String {
        let mut seen: Vec<String> = Vec::new();
        for g in &self.regions {
            let e = if self.on_head() {
                g.first.before
            } else {
                g.first.after
            };
            if !seen.contains(&e.to_string()) {
                seen.push(e.to_string());
            }
        }
        seen.join("/")
    }

    /// The first line: the region itself when there is one, else how many and an example.
    fn headline(&self) -> String {
        let c = self.first();
        let example = serde_json::to_string(&c.input).unwrap_or_default();
        match self.regions.len() {
            1 => headline(c),
            n if self.on_head() => format!(
                "{}: {n} regions {} → {}, e.g. {example}",
                permission_text(c),
                self.others(),
                c.after,
            ),
            n => format!(
                "{}: {n} regions {} → {}, e.g. {example}",
                permission_text(c),
                c.before,
                self.others(),
            ),
        }
    }

    /// Help lines: agents, the first regions with the other side's rule, the causing rule.
    fn help(&self, s: &Sides<'_>) -> Vec<String> {
        let mut out = vec![format!("agents: {}", agents_text(s, &self.agents))];
        let (before, after) = (&s.base_side.label, &s.head_side.label);
        if let [only] = self.regions.as_slice() {
            out.push(format!("before ({before}): {}", only.before));
            out.push(format!("after ({after}): {}", only.after));
            return out;
        }
        for g in self.regions.iter().take(WITNESSES) {
            let other = if self.on_head() {
                format!("before ({before}): {}", g.before)
            } else {
                format!("after ({after}): {}", g.after)
            };
            out.push(format!(
                "e.g. {}: {} → {}, {other}{}",
                serde_json::to_string(&g.first.input).unwrap_or_default(),
                g.first.before,
                g.first.after,
                if g.agents.len() == self.agents.len() {
                    String::new()
                } else {
                    format!(" (agents: {})", agents_text(s, &g.agents))
                }
            ));
        }
        if self.regions.len() > WITNESSES {
            out.push(format!(
                "and {} more regions (--format json lists every one)",
                self.regions.len() - WITNESSES
            ));
        }
        out.push(if self.on_head() {
            format!("after ({after}), now deciding all of them: {}", self.rule())
        } else {
            format!(
                "before ({before}), deciding all of them: {} (no longer decides them)",
                self.rule()
            )
        });
        out
    }
}

/// The text of the rule a region's change comes from.
fn cause_text<'g>(g: &'g Group<'_>) -> &'g str {
    if g.first.cause == From::Head {
        &g.after
    } else {
        &g.before
    }
}

fn groups<'a>(d: &'a Diff, s: &Sides<'_>) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for c in &d.changes {
        let before = s.rule_text(false, &c.agent, c.base_rule);
        let after = s.rule_text(true, &c.agent, c.head_rule);
        let same = |g: &Group<'_>| {
            let f = g.first;
            f.class == c.class
                && f.permission == c.permission
                && f.other_permissions == c.other_permissions
                && f.input == c.input
                && f.before == c.before
                && f.after == c.after
                && g.before == before
                && g.after == after
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.agents.push(&c.agent),
            None => out.push(Group {
                first: c,
                agents: vec![&c.agent],
                before,
                after,
            }),
        }
    }
    // Widened first; otherwise in the order found (agents, then permissions).
    out.sort_by_key(|g| g.first.class);
    out
}

/// The regions of [`groups`] by cause (class, permission cell, head-side rule).
fn causes<'a>(d: &'a Diff, s: &Sides<'_>) -> Vec<Cause<'a>> {
    let mut out: Vec<Cause<'a>> = Vec::new();
    for g in groups(d, s) {
        let same = |k: &Cause<'_>| {
            let (f, c) = (k.first(), g.first);
            f.class == c.class
                && f.permission == c.permission
                && f.other_permissions == c.other_permissions
                && f.cause == c.cause
                && k.rule() == cause_text(&g)
        };
        match out.iter_mut().find(|k| same(k)) {
            Some(k) => {
                for a in &g.agents {
                    if !k.agents.contains(a) {
                        k.agents.push(a);
                    }
                }
                k.regions.push(g);
            }
            None => out.push(Cause {
                agents: g.agents.clone(),
                regions: vec![g],
            }),
        }
    }
    // The worst region of a cause speaks first (its headline example, the first help
    // lines): deny → allow before deny → ask, whatever order the search found them in.
    for k in &mut out {
        k.regions
            .sort_by_key(|g| std::cmp::Reverse(change_size(g.first)));
    }
    out
}

/// How far a region's decision moved: 2 for deny ↔ allow, 1 for a step to or from ask.
fn change_size(c: &Change) -> u8 {
    use crate::checks::overlap::openness;
    openness(c.before).abs_diff(openness(c.after))
}

/// Command changes equal but for the agent: (command index, before, after, class, agents).
fn command_groups(d: &Diff) -> Vec<(usize, String, String, Class, Vec<&str>)> {
    let mut out: Vec<(usize, String, String, Class, Vec<&str>)> = Vec::new();
    for c in &d.commands {
        let (b, a) = (c.before.to_string(), c.after.to_string());
        match out
            .iter_mut()
            .find(|g| g.0 == c.command && g.1 == b && g.2 == a)
        {
            Some(g) => g.4.push(&c.agent),
            None => out.push((c.command, b, a, c.class, vec![&c.agent])),
        }
    }
    out.sort_by_key(|g| (g.3, g.0));
    out
}

/// Events equal but for the agent: (class, tool, agents).
fn event_groups(d: &Diff) -> Vec<(Class, Option<&str>, Vec<&str>)> {
    let mut out: Vec<(Class, Option<&str>, Vec<&str>)> = Vec::new();
    for e in &d.events {
        let tool = e.tool.as_deref();
        match out
            .iter_mut()
            .find(|g| g.0 == e.class && g.1 == tool && tool.is_some())
        {
            Some(g) => g.2.push(&e.agent),
            None => out.push((e.class, tool, vec![&e.agent])),
        }
    }
    out
}

fn ticks(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `bash "git push"`, or the permission cell when it is more than one name.
fn what(c: &Change) -> String {
    let input = serde_json::to_string(&c.input).unwrap_or_default();
    match &c.other_permissions {
        None => format!("{} {input}", c.permission),
        Some(_) => format!("{} {input}{}", c.permission, cell_globs(c)),
    }
}

/// `bash`, or the permission cell when it is more than one name.
fn permission_text(c: &Change) -> String {
    format!("{}{}", c.permission, cell_globs(c))
}

/// ` (and every permission matched by `a`, `b` alone)` for a cell of several names.
fn cell_globs(c: &Change) -> String {
    match &c.other_permissions {
        None => String::new(),
        Some(globs) => format!(
            " (and every permission matched by {} alone)",
            ticks(&globs.iter().map(String::as_str).collect::<Vec<_>>())
        ),
    }
}

fn headline(c: &Change) -> String {
    format!("{}: {} → {}", what(c), c.before, c.after)
}

fn command_place<'a>(s: &Sides<'a>, k: usize) -> (String, &'a str) {
    match s.commands.get(k) {
        Some(c) => (format!("{}:{}", c.path, c.line), c.text.as_str()),
        None => (String::new(), ""),
    }
}

/// The closing line: counts (changes equal but for the agent counted once), or that
/// nothing changed.
pub fn summary_line(d: &Diff, s: &Sides<'_>) -> String {
    if d.is_empty() {
        return "no change in any decision\n".to_string();
    }
    let cs = causes(d, s);
    let events = event_groups(d);
    let mut parts = Vec::new();
    for k in [
        Class::Widened,
        Class::Narrowed,
        Class::AgentAdded,
        Class::AgentRemoved,
        Class::ToolShown,
        Class::ToolHidden,
    ] {
        let of_k = || cs.iter().filter(|c| c.first().class == k);
        let (n, regions) = (
            of_k().count() + events.iter().filter(|e| e.0 == k).count(),
            of_k().map(|c| c.regions.len()).sum::<usize>(),
        );
        if regions > of_k().count() {
            parts.push(format!("{}: {n} (regions: {regions})", k.as_str()));
        } else if n > 0 {
            parts.push(format!("{}: {n}", k.as_str()));
        }
    }
    let commands = command_groups(d);
    if !commands.is_empty() {
        parts.push(format!("commands changed: {}", commands.len()));
    }
    if !d.inconclusive.is_empty() {
        parts.push(format!("inconclusive: {}", d.inconclusive.len()));
    }
    format!("{}\n", parts.join(", "))
}

pub fn human(d: &Diff, s: &Sides<'_>, style: Style) -> String {
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_wrap_lines(false);
    let mut out = format!(
        "{}\n\n",
        style.bold(&format!(
            "permaudit diff: {} → {}",
            s.base_side.label, s.head_side.label
        ))
    );
    for g in causes(d, s) {
        let c = g.first();
        let severity = match c.class {
            Class::Widened => Severity::Error,
            _ => Severity::Advice,
        };
        let help = g.help(s);
        // On the causing rule: the head side's, or the base side's for a rule that no longer
        // decides.
        let on_head = g.on_head();
        let (rule, sources) = if on_head {
            (c.head_rule, &s.head.loaded.sources)
        } else {
            (c.base_rule, &s.base.loaded.sources)
        };
        let loc = s.rule_loc(on_head, &c.agent, rule);
        let file = loc.map(|l| sources.get(l.source));
        let window = loc
            .zip(file)
            .and_then(|(l, f)| super::Window::around(f, &[l.span]).map(|w| (l, w)));
        let level = match c.class {
            Class::Widened => "error",
            _ => "note",
        };
        match window {
            Some((l, w)) => {
                let diag = MietteDiagnostic::new(g.headline())
                    .with_code(c.class.as_str())
                    .with_severity(severity)
                    .with_help(help.join("\n"))
                    .with_labels(vec![LabeledSpan::new_primary_with_span(
                        Some(
                            if on_head {
                                "now decided by this rule"
                            } else {
                                "no longer decided by this rule"
                            }
                            .to_string(),
                        ),
                        w.range(l.span),
                    )]);
                let mut text = String::new();
                let report = miette::Report::new(diag).with_source_code(w);
                if handler.render_report(&mut text, report.as_ref()).is_ok() {
                    // miette names the file by its full path; say it as the side does.
                    let p = s.place(on_head, l);
                    let name = sources.get(l.source).name();
                    out.push_str(&text.replacen(&name, &p.shown, 1));
                }
            }
            None => {
                out.push_str(&format!(
                    "{level}[{}]: {}\n",
                    c.class.as_str(),
                    g.headline()
                ));
                for h in &help {
                    out.push_str(&format!("  = {h}\n"));
                }
            }
        }
        out.push('\n');
    }
    let events = event_groups(d);
    for (class, tool, agents) in &events {
        let level = if class.widens() { "error" } else { "note" };
        let text = match tool {
            Some(t) => format!(
                "{level}[{}]: tool `{t}`: agents {}\n",
                class.as_str(),
                ticks(&shown(s, agents))
            ),
            None => format!("{level}[{}]: agent {}\n", class.as_str(), ticks(agents)),
        };
        out.push_str(&text);
    }
    if !events.is_empty() {
        out.push('\n');
    }
    let commands = command_groups(d);
    if !commands.is_empty() {
        out.push_str(
            &style.bold("project commands whose outcome changed (as `explain bash` decides them):"),
        );
        out.push('\n');
        for (k, before, after, class, agents) in &commands {
            let (place, text) = command_place(s, *k);
            out.push_str(&format!(
                "  {place}  {}: {} → {} ({}; agents: {})\n",
                serde_json::to_string(text).unwrap_or_default(),
                style.paint_action(before),
                style.paint_action(after),
                class.as_str(),
                agents_text(s, agents)
            ));
        }
        out.push('\n');
    }
    for i in &d.inconclusive {
        out.push_str(&format!(
            "warning[inconclusive]: `{}` {}: {}; nothing is claimed about it\n",
            i.agent, i.permission, i.reason
        ));
    }
    if !d.inconclusive.is_empty() {
        out.push('\n');
    }
    for (permission, agents) in unchecked_groups(d) {
        out.push_str(&format!(
            "note[unchecked]: {}; agents: {}\n\n",
            unchecked_text(permission),
            agents_text(s, &agents)
        ));
    }
    out.push_str(&summary_line(d, s));
    out
}

/// Per cause of [`json`] (in its order): the agents as `diff`'s help line names them
/// (`all`, or without OpenCode's internal agents), for the report page to say the same.
pub fn agents_shown(d: &Diff, s: &Sides<'_>) -> Vec<String> {
    causes(d, s)
        .iter()
        .map(|k| agents_text(s, &k.agents))
        .collect()
}

/// Every agent of either side (the head side's first).
fn all_agents<'s>(s: &Sides<'s>) -> Vec<&'s crate::agents::Agent> {
    s.head
        .agents
        .iter()
        .chain(
            s.base
                .agents
                .iter()
                .filter(|b| !s.head.agents.iter().any(|h| h.name == b.name)),
        )
        .collect()
}

/// `agents` as a help line names them: `all` when they are every agent of either side,
/// else without OpenCode's internal agents ([`super::agent_list`]).
fn agents_text<S: AsRef<str>>(s: &Sides<'_>, agents: &[S]) -> String {
    super::agent_list(&all_agents(s), agents)
}

/// `agents` without OpenCode's internal agents, unless they are all it names
/// ([`super::shown_agents`]): a list that is not every agent.
fn shown<'n>(s: &Sides<'_>, agents: &[&'n str]) -> Vec<&'n str> {
    super::shown_agents(&all_agents(s), agents)
}

/// The changed rules of permissions OpenCode never checks, per permission, with the
/// agents whose rules changed (in the diff's order).
fn unchecked_groups(d: &Diff) -> Vec<(&str, Vec<&str>)> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for u in &d.unchecked {
        match groups.iter_mut().find(|(p, _)| *p == u.permission) {
            Some((_, agents)) => agents.push(&u.agent),
            None => groups.push((&u.permission, vec![&u.agent])),
        }
    }
    groups
}

/// What a change to the rules of `permission`, which OpenCode never checks, does.
fn unchecked_text(permission: &str) -> String {
    let why = crate::model::meaning::never_checked(permission).unwrap_or("");
    format!(
        "`{permission}` rules changed, but OpenCode 1.18.34 never checks `{permission}` ({why}): no decision changed"
    )
}

fn summary_json(d: &Diff, causes: usize) -> Value {
    let count = |k: Class| {
        d.changes.iter().filter(|c| c.class == k).count()
            + d.events.iter().filter(|e| e.class == k).count()
    };
    json!({
        "widened": count(Class::Widened),
        "narrowed": count(Class::Narrowed),
        "agent_added": count(Class::AgentAdded),
        "agent_removed": count(Class::AgentRemoved),
        "tool_shown": count(Class::ToolShown),
        "tool_hidden": count(Class::ToolHidden),
        "causes": causes,
        "commands": d.commands.len(),
        "inconclusive": d.inconclusive.len(),
        "unchecked": d.unchecked.len(),
        "no_change": d.is_empty(),
    })
}

pub fn json(d: &Diff, s: &Sides<'_>) -> Value {
    let side = |x: &Side| json!({"label": x.label, "kind": x.kind.as_str()});
    json!({
        "version": 2,
        "base": side(&s.base_side),
        "head": side(&s.head_side),
        "causes": causes(d, s).iter().map(|k| {
            let c = k.first();
            let rule = if k.on_head() {
                s.rule_json(true, &c.agent, c.head_rule)
            } else {
                s.rule_json(false, &c.agent, c.base_rule)
            };
            json!({
                "class": c.class,
                "permission": c.permission,
                "other_permissions": c.other_permissions,
                "side": c.cause,
                "rule": rule,
                "agents": k.agents,
                "regions": k.regions.iter().map(|g| json!({
                    "input": g.first.input,
                    "before": g.first.before,
                    "after": g.first.after,
                    "base_rule": s.rule_json(false, &g.first.agent, g.first.base_rule),
                    "head_rule": s.rule_json(true, &g.first.agent, g.first.head_rule),
                    "agents": g.agents,
                })).collect::<Vec<_>>(),
            })
        }).collect::<Vec<_>>(),
        "changes": d.changes.iter().map(|c| json!({
            "agent": c.agent,
            "class": c.class,
            "permission": c.permission,
            "other_permissions": c.other_permissions,
            "input": c.input,
            "before": c.before,
            "after": c.after,
            "base_rule": s.rule_json(false, &c.agent, c.base_rule),
            "head_rule": s.rule_json(true, &c.agent, c.head_rule),
        })).collect::<Vec<_>>(),
        "events": d.events.iter().map(|e| json!({
            "agent": e.agent, "class": e.class, "tool": e.tool,
        })).collect::<Vec<_>>(),
        "commands": d.commands.iter().map(|c| {
            let cmd = s.commands.get(c.command);
            json!({
                "path": cmd.map(|m| &m.path),
                "line": cmd.map(|m| m.line),
                "kind": cmd.map(|m| m.kind.as_str()),
                "name": cmd.and_then(|m| m.name.as_ref()),
                "text": cmd.map(|m| &m.text),
                "agent": c.agent,
                "before": c.before,
                "after": c.after,
                "class": c.class,
            })
        }).collect::<Vec<_>>(),
        "inconclusive": d.inconclusive.iter().map(|i| json!({
            "agent": i.agent, "permission": i.permission, "reason": i.reason,
        })).collect::<Vec<_>>(),
        "unchecked": d.unchecked.iter().map(|u| json!({
            "agent": u.agent, "permission": u.permission,
        })).collect::<Vec<_>>(),
        "summary": summary_json(d, causes(d, s).len()),
    })
}

/// A markdown table cell: pipes and newlines escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Markdown for a pull-request comment: one table of decision changes (widened first),
/// then agents and tools, commands, and what could not be decided.
pub fn markdown(d: &Diff, s: &Sides<'_>) -> String {
    let mut out = format!(
        "### permaudit diff: `{}` → `{}`\n\n",
        cell(&s.base_side.label),
        cell(&s.head_side.label)
    );
    if d.is_empty() {
        out.push_str("No change in any decision.\n");
        for item in unchecked_items(d, s) {
            out.push('\n');
            out.push_str(&item);
        }
        return out;
    }
    let cs = causes(d, s);
    if !cs.is_empty() {
        out.push_str("| | change | agents | permission | regions | example input | before | after |\n|---|---|---|---|---|---|---|---|\n");
        for k in &cs {
            let (c, g) = (k.first(), &k.regions[0]);
            let icon = if c.class == Class::Widened {
                "⚠️"
            } else {
                "🔒"
            };
            let perm = match &c.other_permissions {
                None => format!("`{}`", cell(&c.permission)),
                Some(globs) => format!(
                    "`{}` (any permission matched by {} alone)",
                    cell(&c.permission),
                    globs
                        .iter()
                        .map(|g| format!("`{}`", cell(g)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            // The causing rule's side is one rule; the other side's is the example's.
            let others = if k.regions.len() > 1 {
                " (others for other regions: `--format json` lists every one)"
            } else {
                ""
            };
            // The worst regions first, each with its own change when they differ.
            let mut examples: Vec<String> = k
                .regions
                .iter()
                .take(WITNESSES)
                .map(|g| match k.regions.len() {
                    1 => format!("`{}`", cell(&g.first.input)),
                    _ => format!(
                        "`{}` ({} → {})",
                        cell(&g.first.input),
                        g.first.before,
                        g.first.after
                    ),
                })
                .collect();
            examples.dedup();
            if k.regions.len() > WITNESSES {
                examples.push(format!("and {} more", k.regions.len() - WITNESSES));
            }
            let (before, after, change) = if k.on_head() {
                (
                    format!("{}{others}", cell(&g.before)),
                    cell(k.rule()),
                    format!("{} → {}", k.others(), c.after),
                )
            } else {
                (
                    cell(k.rule()),
                    format!("{}{others}", cell(&g.after)),
                    format!("{} → {}", c.before, k.others()),
                )
            };
            out.push_str(&format!(
                "| {icon} | **{}** {change} | {} | {perm} | {} | {} | {before} | {after} |\n",
                c.class.as_str(),
                cell(&agents_text(s, &k.agents)),
                k.regions.len(),
                examples.join("<br>"),
            ));
        }
        out.push('\n');
    }
    let events = event_groups(d);
    for (class, tool, agents) in &events {
        match tool {
            Some(t) => out.push_str(&format!(
                "- **{}**: tool `{}` for agents {}\n",
                class.as_str(),
                cell(t),
                cell(&ticks(&shown(s, agents)))
            )),
            None => out.push_str(&format!(
                "- **{}**: agent {}\n",
                class.as_str(),
                cell(&ticks(agents))
            )),
        }
    }
    if !events.is_empty() {
        out.push('\n');
    }
    let commands = command_groups(d);
    if !commands.is_empty() {
        out.push_str("Project commands whose outcome changed:\n\n| command | where | before | after | agents |\n|---|---|---|---|---|\n");
        for (k, before, after, _, agents) in &commands {
            let (place, text) = command_place(s, *k);
            out.push_str(&format!(
                "| `{}` | {} | {before} | {after} | {} |\n",
                cell(text),
                cell(&place),
                cell(&agents_text(s, agents))
            ));
        }
        out.push('\n');
    }
    for i in &d.inconclusive {
        out.push_str(&format!(
            "- **inconclusive**: `{}` `{}`: {}; nothing is claimed about it\n",
            cell(&i.agent),
            cell(&i.permission),
            cell(&i.reason)
        ));
    }
    for item in unchecked_items(d, s) {
        out.push_str(&item);
    }
    out.push_str(&summary_line(d, s));
    out
}

/// The markdown list items of the changed rules OpenCode never checks, one per permission.
fn unchecked_items(d: &Diff, s: &Sides<'_>) -> Vec<String> {
    unchecked_groups(d)
        .into_iter()
        .map(|(permission, agents)| {
            format!(
                "- **unchecked**: {}; agents: {}\n",
                cell(&unchecked_text(permission)),
                cell(&agents_text(s, &agents))
            )
        })
        .collect()
}

/// GitHub workflow commands: one annotation per grouped change, on the head side's rule
/// when it has one in the project.
pub fn github(d: &Diff, s: &Sides<'_>) -> String {
    let (esc, prop) = (super::gh_escape, super::gh_property);
    let mut out = String::new();
    for g in causes(d, s) {
        let c = g.first();
        let cmd = if c.class == Class::Widened {
            "error"
        } else {
            "notice"
        };
        let mut props = Vec::new();
        // On the head side's lines: a rule that no longer decides has none there.
        if let Some(p) = g.head_place(s) {
            if let Some(r) = p.relative {
                props.push(format!(
                    "file={},line={},col={}",
                    prop(&r),
                    p.line,
                    p.column
                ));
            }
        }
        props.push(format!(
            "title={}",
            prop(&format!("permaudit diff: {}", c.class.as_str()))
        ));
        let msg = format!("{}\n{}", g.headline(), g.help(s).join("\n"));
        out.push_str(&format!("::{cmd} {}::{}\n", props.join(","), esc(&msg)));
    }
    // OpenCode's internal agents are left out where another agent has the same change.
    let all = all_agents(s);
    let internal = |name: &str| all.iter().any(|a| a.name == name && a.is_internal());
    for e in &d.events {
        let folded = internal(&e.agent)
            && d.events.iter().any(|o| {
                o.class == e.class && o.tool == e.tool && o.tool.is_some() && !internal(&o.agent)
            });
        if folded {
            continue;
        }
        let cmd = if e.class.widens() { "error" } else { "notice" };
        let msg = match &e.tool {
            Some(t) => format!("{}: tool `{t}` in agent `{}`", e.class.as_str(), e.agent),
            None => format!("{}: agent `{}`", e.class.as_str(), e.agent),
        };
        out.push_str(&format!(
            "::{cmd} title={}::{}\n",
            prop("permaudit diff"),
            esc(&msg)
        ));
    }
    for c in &d.commands {
        let folded = internal(&c.agent)
            && d.commands.iter().any(|o| {
                o.command == c.command
                    && o.before == c.before
                    && o.after == c.after
                    && !internal(&o.agent)
            });
        if folded {
            continue;
        }
        let cmd = s.commands.get(c.command);
        let mut props = Vec::new();
        if let Some(m) = cmd {
            props.push(format!("file={},line={}", prop(&m.path), m.line));
        }
        props.push(format!("title={}", prop("permaudit diff: command")));
        let msg = format!(
            "`{}` for agent `{}`: {} → {} ({})",
            cmd.map_or("", |m| m.text.as_str()),
            c.agent,
            c.before,
            c.after,
            c.class.as_str()
        );
        let level = if c.class.widens() { "error" } else { "notice" };
        out.push_str(&format!("::{level} {}::{}\n", props.join(","), esc(&msg)));
    }
    for i in &d.inconclusive {
        out.push_str(&format!(
            "::warning title={}::{}\n",
            prop("permaudit diff: inconclusive"),
            esc(&format!("`{}` {}: {}", i.agent, i.permission, i.reason))
        ));
    }
    out
}

/// SARIF 2.1.0: one result per grouped change, located on the head side's rule.
pub fn sarif(d: &Diff, s: &Sides<'_>) -> Value {
    let classes = [
        (
            Class::Widened,
            "A decision widened: deny→ask, deny→allow or ask→allow.",
        ),
        (
            Class::Narrowed,
            "A decision narrowed: allow→ask, allow→deny or ask→deny.",
        ),
        (Class::AgentAdded, "An agent only the head side has."),
        (Class::AgentRemoved, "An agent only the base side has."),
        (Class::ToolShown, "A default tool now offered to the model."),
        (
            Class::ToolHidden,
            "A default tool no longer offered to the model.",
        ),
    ];
    let level = |k: Class| match k {
        Class::Widened => "error",
        Class::AgentAdded => "warning",
        _ => "note",
    };
    let rules: Vec<Value> = classes
        .iter()
        .map(|(k, text)| {
            json!({
                "id": format!("diff/{}", k.as_str()),
                "name": k.as_str(),
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": level(*k)},
            })
        })
        .collect();
    let mut results: Vec<Value> = Vec::new();
    for g in causes(d, s) {
        let c = g.first();
        let mut r = json!({
            "ruleId": format!("diff/{}", c.class.as_str()),
            "level": level(c.class),
            "message": {"text": format!("{}; {}", g.headline(), g.help(s).join("; "))},
        });
        if let Some(p) = g.head_place(s) {
            if let Some(rel) = p.relative {
                r["locations"] = json!([{"physicalLocation": {
                    "artifactLocation": {"uri": rel},
                    "region": {"startLine": p.line, "startColumn": p.column},
                }}]);
            }
        }
        results.push(r);
    }
    for e in &d.events {
        results.push(json!({
            "ruleId": format!("diff/{}", e.class.as_str()),
            "level": level(e.class),
            "message": {"text": match &e.tool {
                Some(t) => format!("tool `{t}` in agent `{}`", e.agent),
                None => format!("agent `{}`", e.agent),
            }},
        }));
    }
    super::sarif_log(rules, results)
}
