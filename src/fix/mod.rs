//! `check --fix`: repairs of findings, each one proven by the diff engine before it is
//! offered.
//!
//! A fix is a set of text edits to one config file ([`text::Edit`]) built from a finding
//! ([`candidates`]). It is *offered* only once proven: the edited files are re-loaded in
//! memory exactly as OpenCode would load them (a config OpenCode would refuse is never
//! offered) and [`crate::diff::diff_as_written`] compares every agent's decisions with the
//! project before the edit (the rules as written: a `write` block, which OpenCode never
//! checks, counts as if it were, since its author will rename it to `edit`):
//!
//! - **safe** fixes change no decision of any agent, no tool's visibility and leave no
//!   question undecided (an inconclusive diff is not a proof);
//! - **narrowing** fixes (applied only with `--unsafe-fixes`) change decisions only toward
//!   deny or ask, only for agents the finding names, only for permissions the edited rule
//!   covers.
//!
//! Anything that would widen access is never applied. [`fix`] applies proven fixes and
//! repeats on the result until nothing more applies (at most [`MAX_PASSES`] passes); every
//! pass is proven against the state before it, so the whole is safe (or narrowing) too,
//! and the end result is proven once more against the start.
//!
//! Nothing here touches the machine: the caller re-loads (`Reload`) and writes.

pub mod suggest;
pub mod text;

use crate::checks::Finding;
use crate::diff::{self, Class};
use crate::model::Effect;
use crate::project::Project;
use crate::source::{Origin, SourceId};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use text::{Container, Edit, Syntax};

/// The most passes [`fix`] makes (a pass applies every fix proven together, or the first
/// that proves alone). Reaching it with fixes still applying is said
/// ([`Outcome::unfinished`]), never silent.
pub const MAX_PASSES: usize = 100;

/// How a fix may change decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Safety {
    /// No decision of any agent changes.
    Safe,
    /// Decisions change only toward deny or ask, on what the finding names.
    Narrowing,
}

impl Safety {
    pub fn as_str(self) -> &'static str {
        match self {
            Safety::Safe => "safe",
            Safety::Narrowing => "narrowing",
        }
    }
}

/// A repair of one finding, not yet proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// The finding kind it repairs.
    pub id: &'static str,
    /// The finding's place (the file the edits apply to).
    pub source: SourceId,
    /// Where the finding is, for reports.
    pub at: usize,
    pub safety: Safety,
    /// What it does, in a few words ("remove the redundant rule").
    pub title: String,
    /// Edits to `source`'s text.
    pub edits: Vec<Edit>,
    /// The agents whose decisions a narrowing fix may change.
    pub agents: Vec<String>,
    /// The rules (permission, pattern, effect) a narrowing fix makes decide: every
    /// decision it changes must now be decided by one of them, so it changes only inputs
    /// the finding's rule matches.
    pub permissions: Vec<(String, String, Effect)>,
    /// The findings it repairs (indices into the findings [`candidates`] was given).
    pub repairs: Vec<usize>,
    /// The permissions whose rules it edits: no fix is offered while a rule of one of them
    /// (or of a wildcard permission) comes from `{env:…}`/`{file:…}` text, whose value
    /// here proves nothing of another machine's.
    pub touched: Vec<String>,
    /// What to try when this fix does not prove: moving a catch-all first would widen, so
    /// the rules it overrode that restrict more are moved after it instead.
    pub fallback: Option<Box<Fix>>,
}

impl Fix {
    /// A fix of finding `f`'s place, repairing nothing yet (`candidates` adds the
    /// repairs); narrowing fixes then name their agents and rules.
    fn new(f: &Finding, source: SourceId, at: usize, safety: Safety, title: String) -> Fix {
        Fix {
            id: f.id,
            source,
            at,
            safety,
            title,
            edits: Vec::new(),
            agents: Vec::new(),
            permissions: Vec::new(),
            repairs: Vec::new(),
            touched: Vec::new(),
            fallback: None,
        }
    }

    fn with_edits(mut self, edits: Vec<Edit>) -> Fix {
        self.edits = edits;
        self
    }

    fn touching(mut self, permissions: impl IntoIterator<Item = String>) -> Fix {
        for p in permissions {
            if !self.touched.contains(&p) {
                self.touched.push(p);
            }
        }
        self
    }
}

/// The kinds that have fixes, and what each does; `permaudit rule ID` prints it.
pub const FIXABLE: &[(&str, Safety, &str)] = &[
    (
        "dead-rule",
        Safety::Safe,
        "a redundant rule (info) is removed; a shadowed one is left for you to move or remove",
    ),
    (
        "legacy-tools",
        Safety::Safe,
        "a `tools` map is rewritten in place as the `permission` map OpenCode translates it to, when no decision changes",
    ),
    (
        "unused-ignore",
        Safety::Safe,
        "a `permaudit-ignore` comment none of whose kinds hides anything is deleted (its line, when it has one to itself)",
    ),
    (
        "shadowed-deny",
        Safety::Narrowing,
        "the deny is moved after the rule of the same object that overrides it; when that rule is a catch-all (`*`) written last, the catch-all is moved to the top of its object instead (one move: the rules it overrode keep their order and comments), if that only narrows",
    ),
    (
        "shadowed-ask",
        Safety::Narrowing,
        "the ask is moved after the rule of the same object that overrides it; a catch-all written last is moved first instead, as for shadowed-deny",
    ),
];

/// What `permaudit rule ID` says of a kind's fix.
pub fn fixability(id: &str) -> Option<(Safety, &'static str)> {
    FIXABLE
        .iter()
        .find(|(k, _, _)| *k == id)
        .map(|(_, s, d)| (*s, *d))
}

/// The syntax of a file permaudit may edit: a JSONC config or a markdown agent, read whole
/// and intact (never a file whose bytes were not UTF-8 text), under `root` when given.
pub(crate) fn editable(project: &Project, source: SourceId, root: Option<&Path>) -> Option<Syntax> {
    let f = project.loaded.sources.get(source);
    let Origin::File(path) = &f.origin else {
        return None;
    };
    if f.damage.is_some() || root.is_some_and(|r| !path.starts_with(r)) {
        return None;
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("json" | "jsonc") => Some(Syntax::Jsonc),
        Some("md") => Some(Syntax::Yaml),
        _ => None,
    }
}

/// Parsed containers per source, computed once per pass.
struct Files<'a> {
    project: &'a Project,
    root: Option<&'a Path>,
    parsed: BTreeMap<SourceId, Option<(Syntax, Vec<Container>)>>,
}

impl<'a> Files<'a> {
    fn get(&mut self, source: SourceId) -> Option<&(Syntax, Vec<Container>)> {
        let (project, root) = (self.project, self.root);
        self.parsed
            .entry(source)
            .or_insert_with(|| {
                let syntax = editable(project, source, root)?;
                let text = &project.loaded.sources.get(source).text;
                text::containers(text, syntax).map(|c| (syntax, c))
            })
            .as_ref()
    }
}

/// The text of a key without its quotes.
pub(crate) fn key_text(text: &str, key: crate::source::Span) -> &str {
    let k = text.get(key.start..key.end).unwrap_or("");
    k.strip_prefix(['"', '\''])
        .and_then(|k| k.strip_suffix(['"', '\'']))
        .unwrap_or(k)
}

/// The fixes the findings have (unproven), each finding at most one, in finding order.
/// Fixes touch only files under `root` when given.
pub fn candidates(project: &Project, findings: &[Finding], root: Option<&Path>) -> Vec<Fix> {
    let mut files = Files {
        project,
        root,
        parsed: BTreeMap::new(),
    };
    let unknown = Unknown::of(project);
    let mut out: Vec<Fix> = Vec::new();
    for (n, f) in findings.iter().enumerate() {
        let fix = match f.id {
            "dead-rule" if f.level == crate::checks::Level::Info => remove_rule(&mut files, f),
            // An allow a catch-all written after it kills: moving the catch-all first would
            // widen, so the proof refuses it unless it only narrows.
            "dead-rule" => {
                catch_all_of(&files, f).and_then(|at| move_catch_all_first(&mut files, f, at))
            }
            "shadowed-deny" | "shadowed-ask" => move_after_overrider(&mut files, f),
            "legacy-tools" => translate_tools(&mut files, f),
            "unused-ignore" => remove_ignore(&mut files, f, findings),
            _ => None,
        };
        let fix = fix.filter(|fix| !unknown.touches(project, fix));
        if let Some(mut fix) = fix {
            // One fix per set of edits (a `tools` map is one fix for all its entries).
            match out
                .iter_mut()
                .find(|o| o.source == fix.source && o.edits == fix.edits)
            {
                Some(o) => o.repairs.push(n),
                None => {
                    fix.repairs.push(n);
                    out.push(fix);
                }
            }
        }
    }
    // A fallback repairs the findings of its fix that are about the rules it moves (the
    // denies and asks; the allows a catch-all kills stay dead).
    for fix in &mut out {
        let repairs: Vec<usize> = fix
            .repairs
            .iter()
            .copied()
            .filter(|&n| {
                findings
                    .get(n)
                    .is_some_and(|f| matches!(f.id, "shadowed-deny" | "shadowed-ask"))
            })
            .collect();
        if let Some(fb) = fix.fallback.as_deref_mut() {
            fb.repairs = repairs;
        }
    }
    out
}

/// The catch-all (`*`) written later in the same file that decides a finding's witness.
fn catch_all_of(files: &Files<'_>, f: &Finding) -> Option<crate::source::Loc> {
    let loc = f.loc?;
    let agent = files.project.agent(f.agents.first()?)?;
    let decider = agent.rules.get(f.witnesses.first()?.rule?)?;
    let at = decider.loc?;
    (decider.pattern == "*" && at.source == loc.source && at.span.start >= loc.span.start)
        .then_some(at)
}

/// The permissions of rules whose pattern, permission or action came from `{env:…}` or
/// `{file:…}` text: what this machine substituted proves nothing of another's (with
/// `{env:RISKY}` = `git push*` beside a `git push --force*` deny, the latter looks
/// redundant here and is the only deny where RISKY is unset).
struct Unknown {
    permissions: Vec<String>,
}

impl Unknown {
    fn of(project: &Project) -> Unknown {
        let subs = &project.loaded.audit.substitutions;
        let mut permissions: Vec<String> = Vec::new();
        if subs.is_empty() {
            return Unknown { permissions };
        }
        for a in &project.agents {
            for r in &a.rules {
                let Some(l) = r.loc else { continue };
                let text = &project.loaded.sources.get(l.source).text;
                let from_subst = subs.iter().any(|(t, _)| {
                    if t.source != l.source {
                        return false;
                    }
                    let at = t.span.start;
                    // In the key, or the key's value (an action or a permission's string).
                    (l.span.start <= at && at < l.span.end.max(l.span.start + 1))
                        || (at >= l.span.end
                            && text.get(l.span.end..at).is_some_and(|between| {
                                between
                                    .chars()
                                    .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
                                    .eq(":".chars())
                            }))
                });
                if from_subst && !permissions.contains(&r.permission) {
                    permissions.push(r.permission.clone());
                }
            }
        }
        Unknown { permissions }
    }

    /// Does `fix` edit a permission an unknown rule may decide?
    fn touches(&self, project: &Project, fix: &Fix) -> bool {
        use crate::glob::wildcard::matches;
        self.permissions.iter().any(|u| {
            fix.touched.iter().any(|p| {
                u == p || matches(p, u, project.platform) || matches(u, p, project.platform)
            })
        })
    }
}

fn remove_rule(files: &mut Files<'_>, f: &Finding) -> Option<Fix> {
    let loc = f.loc?;
    // A rule made redundant by a catch-all written after it is not deleted: the catch-all
    // is what is misplaced (once it is moved first, as its finding advises, the rule
    // matters again: `"git *": "allow", "git push*": "ask", "*": "ask"`).
    let agent = files.project.agent(f.agents.first()?)?;
    let rule = agent.rules.get(f.rule?)?;
    if let Some(decider) = f
        .witnesses
        .first()
        .and_then(|w| w.rule)
        .and_then(|k| agent.rules.get(k))
    {
        let later = decider
            .loc
            .is_some_and(|d| d.source == loc.source && d.span.start > loc.span.start);
        if decider.pattern == "*" && later {
            // It matters once the catch-all is first when a rule above it in its block
            // acts otherwise (`git *` allow above `git push*` ask); alone, or under rules
            // acting alike, it stays redundant either way and goes.
            let (_, cs) = files.get(loc.source)?;
            let (c, i) = text::entry_at(cs, loc.span.start)?;
            let above: Vec<usize> = c.entries[..i].iter().map(|e| e.key.start).collect();
            let differs = agent.rules.iter().any(|r| {
                r.loc
                    .is_some_and(|l| l.source == loc.source && above.contains(&l.span.start))
                    && r.action.effective() != rule.action.effective()
            });
            if differs {
                return None;
            }
        }
    }
    let text = &files.project.loaded.sources.get(loc.source).text;
    let (_, cs) = files.get(loc.source)?;
    let (c, i) = text::entry_at(cs, loc.span.start)?;
    let edits = text::delete(text, c, i)?;
    Some(
        Fix::new(
            f,
            loc.source,
            loc.span.start,
            Safety::Safe,
            "remove the redundant rule".into(),
        )
        .with_edits(edits)
        .touching([rule.permission.clone()]),
    )
}

fn remove_ignore(files: &mut Files<'_>, f: &Finding, findings: &[Finding]) -> Option<Fix> {
    let loc = f.loc?;
    let syntax = files.get(loc.source)?.0;
    let text = &files.project.loaded.sources.get(loc.source).text;
    let ignore = crate::suppress::scan(text, loc.source, syntax == Syntax::Yaml)
        .into_iter()
        .find(|i| i.loc == loc)?;
    // Every kind it names hides nothing (one finding each), and it is a line comment.
    let unused = findings
        .iter()
        .filter(|g| g.id == f.id && g.loc == Some(loc))
        .count();
    let comment = text.get(loc.span.start..)?;
    if ignore.malformed
        || unused != ignore.ids.len()
        || !(comment.starts_with("//") || comment.starts_with('#'))
    {
        return None;
    }
    let edits = vec![text::delete_line_comment(text, loc.span.start)?];
    Some(
        Fix::new(
            f,
            loc.source,
            loc.span.start,
            Safety::Safe,
            "delete the ignore comment that hides nothing".into(),
        )
        .with_edits(edits),
    )
}

fn move_after_overrider(files: &mut Files<'_>, f: &Finding) -> Option<Fix> {
    let loc = f.loc?;
    let agent = files.project.agent(f.agents.first()?)?;
    let rule = agent.rules.get(f.rule?)?;
    let later = agent.rules.get(f.witnesses.first()?.rule?)?;
    let later_loc = later.loc?;
    if later_loc.source != loc.source {
        return None;
    }
    if later.pattern == "*" {
        return move_catch_all_first(files, f, later_loc);
    }
    let text = &files.project.loaded.sources.get(loc.source).text;
    let (_, cs) = files.get(loc.source)?;
    let (c, i) = text::entry_at(cs, loc.span.start)?;
    let j = c
        .entries
        .iter()
        .position(|e| e.key.start == later_loc.span.start)?;
    let edits = text::move_after(text, c, i, j)?;
    let what = if f.id == "shadowed-ask" {
        "ask"
    } else {
        "deny"
    };
    let mut fix = Fix::new(
        f,
        loc.source,
        loc.span.start,
        Safety::Narrowing,
        format!("move the {what} after the rule that overrides it"),
    )
    .with_edits(edits)
    .touching([rule.permission.clone(), later.permission.clone()]);
    fix.agents = f.agents.clone();
    fix.permissions = vec![(
        rule.permission.clone(),
        rule.pattern.clone(),
        rule.action.effective(),
    )];
    Some(fix)
}

/// A catch-all written after the rules it overrides, moved to the top of its object: one
/// move for every rule it kills, which keep their order. Narrowing when every decision it
/// changes is made stricter by one of the rules it overrode (the proof decides).
fn move_catch_all_first(files: &mut Files<'_>, f: &Finding, at: crate::source::Loc) -> Option<Fix> {
    let project = files.project;
    let text = &project.loaded.sources.get(at.source).text;
    let (_, cs) = files.get(at.source)?;
    let (c, j) = text::entry_at(cs, at.span.start)?;
    let edits = text::move_first(text, c, j)?;
    // The rules of the entries before it (every agent's rules carry the same places).
    let before: Vec<usize> = c.entries[..j].iter().map(|e| e.key.start).collect();
    let mut rules: Vec<(String, String, Effect)> = Vec::new();
    let mut touched: Vec<String> = Vec::new();
    for a in &project.agents {
        for r in &a.rules {
            let Some(l) = r.loc else { continue };
            if l.source != at.source {
                continue;
            }
            if before.contains(&l.span.start) || l.span.start == at.span.start {
                let key = (
                    r.permission.clone(),
                    r.pattern.clone(),
                    r.action.effective(),
                );
                if l.span.start != at.span.start && !rules.contains(&key) {
                    rules.push(key);
                }
                if !touched.contains(&r.permission) {
                    touched.push(r.permission.clone());
                }
            }
        }
    }
    // The fallback: the entries that restrict more than the catch-all, moved after it in
    // their order (a deny under a trailing `"*": "ask"`; denies and asks under an allow).
    let catch_effect = project
        .agents
        .iter()
        .flat_map(|a| a.rules.iter())
        .find(|r| r.loc == Some(at))
        .map(|r| r.action.effective());
    let mut group: Vec<usize> = Vec::new();
    let mut moved_rules: Vec<(String, String, Effect)> = Vec::new();
    if let Some(ce) = catch_effect {
        for (i, e) in c.entries[..j].iter().enumerate() {
            let hit = rules.iter().find(|(p, pat, eff)| {
                *eff > ce
                    && project.agents.iter().flat_map(|a| a.rules.iter()).any(|r| {
                        r.loc
                            .is_some_and(|l| l.source == at.source && l.span.start == e.key.start)
                            && r.permission == *p
                            && r.pattern == *pat
                    })
            });
            if let Some(h) = hit {
                group.push(i);
                moved_rules.push(h.clone());
            }
        }
    }
    let fallback = text::move_group_after(text, c, &group, j).map(|edits| {
        let mut fb = Fix::new(
            f,
            at.source,
            at.span.start,
            Safety::Narrowing,
            "move the rules the catch-all overrides after it".into(),
        )
        .with_edits(edits)
        .touching(touched.clone());
        fb.agents = f.agents.clone();
        fb.permissions = moved_rules;
        Box::new(fb)
    });
    let mut fix = Fix::new(
        f,
        at.source,
        at.span.start,
        Safety::Narrowing,
        "move the catch-all to the top of its block".into(),
    )
    .with_edits(edits)
    .touching(touched);
    fix.agents = f.agents.clone();
    fix.permissions = rules;
    fix.fallback = fallback;
    Some(fix)
}

fn translate_tools(files: &mut Files<'_>, f: &Finding) -> Option<Fix> {
    let loc = f.loc?;
    let text = &files.project.loaded.sources.get(loc.source).text;
    let (syntax, cs) = files.get(loc.source)?;
    let syntax = *syntax;
    let (tools, _) = text::entry_at(cs, loc.span.start)?;
    // The entry whose value is this `tools` map, and the object holding it.
    let (parent, t) = cs.iter().find_map(|c| {
        c.entries
            .iter()
            .position(|e| e.value == tools.span && key_text(text, e.key) == "tools")
            .map(|i| (c, i))
    })?;
    if parent
        .entries
        .iter()
        .any(|e| key_text(text, e.key) == "permission")
    {
        return None;
    }
    let quote = |s: &str| match syntax {
        Syntax::Jsonc => format!("\"{s}\""),
        Syntax::Yaml => s.to_string(),
    };
    let mut edits = Vec::new();
    let tools_key = parent.entries.get(t)?.key;
    edits.push(Edit {
        span: tools_key,
        text: match syntax {
            Syntax::Jsonc => "\"permission\"".into(),
            Syntax::Yaml => "permission".into(),
        },
    });
    // `write`, `edit` and `patch` all set `edit`: of entries naming one permission the
    // first keeps its place (and comment) and takes the last one's value, as OpenCode's
    // assignments in order give; the later ones go.
    let names: Vec<&str> = tools
        .entries
        .iter()
        .map(|e| crate::model::config::tool_permission_name(key_text(text, e.key)))
        .collect();
    for (n, e) in tools.entries.iter().enumerate() {
        let name = key_text(text, e.key);
        let permission = names[n];
        if names[..n].contains(&permission) {
            edits.extend(text::delete(text, tools, n)?);
            continue;
        }
        if permission != name {
            let raw = text.get(e.key.start..e.key.end)?;
            edits.push(Edit {
                span: e.key,
                text: raw.replacen(name, permission, 1),
            });
        }
        let last = names.iter().rposition(|p| *p == permission).unwrap_or(n);
        let value = tools.entries.get(last)?.value;
        let action = match text.get(value.start..value.end)? {
            "true" => "allow",
            "false" => "deny",
            _ => return None,
        };
        edits.push(Edit {
            span: e.value,
            text: quote(action),
        });
    }
    let touched: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    Some(
        Fix::new(
            f,
            loc.source,
            tools_key.start,
            Safety::Safe,
            "write the `tools` map as the `permission` map OpenCode makes of it".into(),
        )
        .with_edits(edits)
        .touching(touched),
    )
}

/// Why a fix was not proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The edited config does not load (OpenCode would refuse it, or permaudit's limits).
    DoesNotLoad,
    /// The edits overlap or do not apply.
    BadEdit,
    /// A decision changed in a way the fix's class does not allow.
    Changes,
    /// The diff could not decide everything.
    Inconclusive,
}

/// Re-load the project with some files' text replaced (by path); `None` when it does not
/// load.
pub type Reload<'a> = dyn Fn(&BTreeMap<PathBuf, String>) -> Option<Project> + 'a;

/// Is `after` what `fixes` may make of `before`?
pub fn prove(before: &Project, after: &Project, fixes: &[&Fix]) -> Result<(), Refusal> {
    let d = diff::diff_as_written(before, after);
    if !d.inconclusive.is_empty() {
        return Err(Refusal::Inconclusive);
    }
    if d.is_empty() {
        return Ok(());
    }
    let narrowing: Vec<&&Fix> = fixes
        .iter()
        .filter(|f| f.safety == Safety::Narrowing)
        .collect();
    if narrowing.is_empty() || !d.events.is_empty() || !d.commands.is_empty() {
        return Err(Refusal::Changes);
    }
    let allowed = |c: &diff::Change| {
        let decider = after
            .agent(&c.agent)
            .zip(c.head_rule)
            .and_then(|(a, k)| a.rules.get(k));
        c.class == Class::Narrowed
            && narrowing.iter().any(|f| {
                f.agents.contains(&c.agent)
                    && decider.is_some_and(|r| {
                        f.permissions.iter().any(|(p, pat, e)| {
                            *p == r.permission && *pat == r.pattern && *e == r.action.effective()
                        })
                    })
            })
    };
    if d.changes.iter().all(allowed) {
        Ok(())
    } else {
        Err(Refusal::Changes)
    }
}

/// The texts of every file after `fixes`, on top of `texts` (files already edited).
fn edited(
    project: &Project,
    texts: &BTreeMap<PathBuf, String>,
    fixes: &[&Fix],
) -> Option<BTreeMap<PathBuf, String>> {
    let mut by_source: BTreeMap<SourceId, Vec<Edit>> = BTreeMap::new();
    for f in fixes {
        by_source
            .entry(f.source)
            .or_default()
            .extend(f.edits.iter().cloned());
    }
    let mut out = texts.clone();
    for (source, edits) in by_source {
        let file = project.loaded.sources.get(source);
        let path = file.path()?;
        out.insert(path.to_path_buf(), text::apply(&file.text, &edits)?);
    }
    Some(out)
}

/// Try `fixes` together on `current`: the edited texts and re-loaded project, if proven.
fn attempt(
    current: &Project,
    texts: &BTreeMap<PathBuf, String>,
    fixes: &[&Fix],
    reload: &Reload<'_>,
) -> Result<(BTreeMap<PathBuf, String>, Project), Refusal> {
    let texts = edited(current, texts, fixes).ok_or(Refusal::BadEdit)?;
    let next = reload(&texts).ok_or(Refusal::DoesNotLoad)?;
    prove(current, &next, fixes)?;
    Ok((texts, next))
}

/// Fixes whose edits overlap no earlier one's (an edit of the same file).
fn disjoint<'f>(fixes: &[&'f Fix]) -> Vec<&'f Fix> {
    let mut taken: Vec<(SourceId, usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for f in fixes {
        let spans: Vec<(SourceId, usize, usize)> = f
            .edits
            .iter()
            .map(|e| (f.source, e.span.start, e.span.end))
            .collect();
        let clash = spans
            .iter()
            .any(|&(s, a, b)| taken.iter().any(|&(t, c, d)| s == t && a <= d && c <= b));
        if !clash {
            taken.extend(spans);
            out.push(*f);
        }
    }
    out
}

/// Proofs [`proven`] makes one fix at a time, when the fixes of a class do not prove
/// together; past it, the rest are not offered.
pub const MAX_SINGLE_PROOFS: usize = 64;

/// The fixes of `findings` proven on `project` (each class proven together, else one by
/// one up to [`MAX_SINGLE_PROOFS`]): what `check` marks fixable.
pub fn proven(
    project: &Project,
    findings: &[Finding],
    reload: &Reload<'_>,
    root: Option<&Path>,
) -> Vec<Fix> {
    let all = candidates(project, findings, root);
    let texts = BTreeMap::new();
    let mut out = Vec::new();
    let mut singles = 0;
    for safety in [Safety::Safe, Safety::Narrowing] {
        let class: Vec<&Fix> = all.iter().filter(|f| f.safety == safety).collect();
        if class.is_empty() {
            continue;
        }
        let batch = disjoint(&class);
        if batch.len() == class.len() && attempt(project, &texts, &batch, reload).is_ok() {
            out.extend(batch.into_iter().cloned());
            continue;
        }
        for f in class {
            if singles == MAX_SINGLE_PROOFS {
                break;
            }
            singles += 1;
            if attempt(project, &texts, &[f], reload).is_ok() {
                out.push(f.clone());
            } else if let Some(fb) = &f.fallback {
                if attempt(project, &texts, &[fb], reload).is_ok() {
                    let mut fb = (**fb).clone();
                    fb.repairs = f.repairs.clone();
                    out.push(fb);
                }
            }
        }
    }
    out
}

/// A repair that is not applied because it would widen access, tried all the same: the
/// edit applied in memory, the project re-loaded, and the diff's widened inputs named
/// (ruff's display-only fixes, proven the way applied ones are). A help line proposing it
/// says what it would open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    pub title: String,
    /// The findings it is about (indices into the findings given).
    pub repairs: Vec<usize>,
    /// Up to three widened inputs, each `permission "input" (before → after, N agents)`,
    /// those a deny of the config matches first.
    pub widens: Vec<String>,
    /// How many inputs it widens in all (one per region of the diff).
    pub widened: usize,
}

/// The narrowing candidates of `findings` that do not prove because they would widen
/// (skipping `proven`'s), with what they would widen. Inconclusive diffs say nothing.
pub fn display_only(
    project: &Project,
    findings: &[Finding],
    reload: &Reload<'_>,
    root: Option<&Path>,
    proven: &[Fix],
) -> Vec<Advice> {
    let texts = BTreeMap::new();
    let mut out = Vec::new();
    for f in candidates(project, findings, root) {
        if f.safety != Safety::Narrowing || proven.iter().any(|p| p.edits == f.edits) {
            continue;
        }
        let Some(edited) = edited(project, &texts, &[&f]) else {
            continue;
        };
        let Some(next) = reload(&edited) else {
            continue;
        };
        let d = diff::diff_as_written(project, &next);
        if !d.inconclusive.is_empty() {
            continue;
        }
        let wide: Vec<&diff::Change> = d
            .changes
            .iter()
            .filter(|c| c.class == Class::Widened)
            .collect();
        if wide.is_empty() {
            continue;
        }
        // One line per input (the agents counted), what a deny of the config meant to
        // close first: that is what the move would open.
        let mut lines: Vec<(bool, String, usize)> = Vec::new();
        for c in &wide {
            // A permission OpenCode never asks (`write`) widens the rules as written only.
            let written = if project.never_asks(&c.permission).is_some() {
                "as written: "
            } else {
                ""
            };
            let text = format!(
                "{} {} ({written}{} → {}",
                c.permission,
                serde_json::to_string(&c.input).unwrap_or_default(),
                c.before,
                c.after
            );
            match lines.iter_mut().find(|(_, t, _)| *t == text) {
                Some(l) => l.2 += 1,
                None => {
                    let denied = next.agent(&c.agent).is_some_and(|a| {
                        a.rules.iter().any(|r| {
                            r.loc.is_some()
                                && r.action.effective() == Effect::Deny
                                && crate::glob::matches(&c.permission, &r.permission, next.platform)
                                && crate::glob::matches(&c.input, &r.pattern, next.platform)
                        })
                    });
                    lines.push((denied, text, 1));
                }
            }
        }
        // A deny of the edited rules that the move would open (a `~/.ssh/**` deny above a
        // `~/**` allow): its own example input first, as the diff's region example may
        // be another input of the same region (the home directory itself).
        for (perm, pattern, effect) in &f.permissions {
            if *effect != Effect::Deny {
                continue;
            }
            let input = crate::glob::Wildcard::compile(&pattern.replace("**", "*")).fill("x");
            let mut agents = 0;
            let mut shown = None;
            for name in &f.agents {
                let (Some(a), Some(b)) = (project.agent(name), next.agent(name)) else {
                    continue;
                };
                let was = crate::agents::evaluate(&a.rules, perm, &input, project.platform);
                let now = crate::agents::evaluate(&b.rules, perm, &input, next.platform);
                // `Effect` is ordered by strictness (allow < ask < deny).
                if now.effect < was.effect {
                    agents += 1;
                    shown = Some((was.effect, now.effect));
                }
            }
            if let Some((was, now)) = shown {
                let text = format!(
                    "{perm} {} ({was} → {now}",
                    serde_json::to_string(&input).unwrap_or_default()
                );
                if !lines.iter().any(|(_, t, _)| *t == text) {
                    lines.insert(0, (true, text, agents));
                }
            }
        }
        lines.sort_by_key(|(denied, _, _)| !denied);
        let widened = lines.len();
        let widens = lines
            .iter()
            .take(3)
            .map(|(_, t, n)| {
                format!(
                    "{t}{})",
                    if *n > 1 {
                        format!(", {n} agents")
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        out.push(Advice {
            title: f.title.clone(),
            repairs: f.repairs.clone(),
            widens,
            widened,
        });
    }
    out
}

/// One proven fix, applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    pub id: &'static str,
    pub safety: Safety,
    pub title: String,
    /// How many findings it repaired.
    pub findings: usize,
    /// The file, as the project names it, and the 1-based line and column of the finding.
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// What [`fix`] did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Every file changed: path, text before, text after.
    pub files: Vec<(PathBuf, String, String)>,
    pub applied: Vec<Applied>,
    /// Narrowing fixes proven on the result but not applied (no `--unsafe-fixes`).
    pub unsafe_available: usize,
    /// The passes made.
    pub passes: usize,
    /// [`MAX_PASSES`] was reached while fixes still applied: a second run would fix more.
    pub unfinished: bool,
    /// The passes, each proven, did not prove together against the start: nothing is
    /// applied.
    pub refused: bool,
}

/// How many of the findings `check` shows (`shown`) the findings `repairs` (indices into
/// `every`, each kind at each place) stand for: the same kind at the same place, or a rule
/// a catch-all overrides, which `check` shows as one finding at the catch-all.
fn shown_repaired(every: &[Finding], shown: &[Finding], repairs: &[usize]) -> usize {
    shown
        .iter()
        .filter(|d| {
            repairs.iter().filter_map(|&n| every.get(n)).any(|r| {
                (d.id == r.id && d.loc == r.loc)
                    || (d.loc.is_some()
                        && r.related.first().map(|x| x.0) == d.loc
                        && d.related.iter().any(|(l, _)| Some(*l) == r.loc))
            })
        })
        .count()
}

/// The proven suggestions ([`suggest::as_fixes`]) for the findings none of `fixes`
/// repairs, proven on `now` with the files `texts` already edited.
fn suggested(
    now: &Project,
    findings: &[Finding],
    check: &dyn Fn(&Project) -> Vec<Finding>,
    reload: &Reload<'_>,
    texts: &BTreeMap<PathBuf, String>,
    root: Option<&Path>,
    fixes: &[Fix],
) -> Vec<Fix> {
    let taken: Vec<usize> = fixes
        .iter()
        .flat_map(|f| f.repairs.iter().copied())
        .collect();
    let on_top = |t: &BTreeMap<PathBuf, String>| {
        let mut all = texts.clone();
        all.extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
        reload(&all)
    };
    suggest::as_fixes(now, findings, &on_top, check, root, &taken)
}

/// Apply every fix proven on `base` (narrowing ones only with `unsafe_fixes`), repeatedly.
/// `findings` gives a project's findings as `check` reports them (settings and ignores
/// applied); `reload` re-loads the project with files replaced.
pub fn fix(
    base: &Project,
    findings: &dyn Fn(&Project) -> Vec<Finding>,
    reload: &Reload<'_>,
    root: Option<&Path>,
    unsafe_fixes: bool,
) -> Outcome {
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut current: Option<Project> = None;
    let mut applied = Vec::new();
    let mut passes = 0;
    let mut unfinished = false;
    let mut last_findings = Vec::new();
    // Every other fix first; only then the `permaudit-ignore` comments that are still
    // unused (a rule a fix made live may be what a comment now hides).
    for ignores in [false, true] {
        loop {
            let now = current.as_ref().unwrap_or(base);
            last_findings = findings(now);
            // What `check` shows of them: a fix is applied only for a finding it shows,
            // and counted as it counts them.
            let shown = crate::checks::shown(now, last_findings.clone());
            let mut all = candidates(now, &last_findings, root);
            // The proven suggestions that only narrow, for the findings no fix repairs.
            if unsafe_fixes && !ignores {
                all.extend(suggested(
                    now,
                    &last_findings,
                    findings,
                    reload,
                    &texts,
                    root,
                    &all,
                ));
            }
            let wanted: Vec<&Fix> = all
                .iter()
                .filter(|f| unsafe_fixes || f.safety == Safety::Safe)
                .filter(|f| (f.id == "unused-ignore") == ignores)
                .filter(|f| shown_repaired(&last_findings, &shown, &f.repairs) > 0)
                .collect();
            if wanted.is_empty() {
                break;
            }
            if passes == MAX_PASSES {
                unfinished = true;
                break;
            }
            passes += 1;
            let batch = disjoint(&wanted);
            let accepted = match attempt(now, &texts, &batch, reload) {
                Ok(next) => Some((batch, next)),
                // One at a time: the first that proves alone; the rest wait for the next pass.
                Err(_) => wanted.iter().find_map(|f| {
                    attempt(now, &texts, &[*f], reload)
                        .ok()
                        .map(|next| (vec![*f], next))
                        .or_else(|| {
                            let fb = f.fallback.as_deref()?;
                            attempt(now, &texts, &[fb], reload)
                                .ok()
                                .map(|next| (vec![fb], next))
                        })
                }),
            };
            let Some((done, (new_texts, next))) = accepted else {
                break;
            };
            for f in done {
                let pos = now.loaded.sources.position(crate::source::Loc {
                    source: f.source,
                    span: crate::source::Span::new(f.at, f.at),
                });
                applied.push(Applied {
                    id: f.id,
                    safety: f.safety,
                    title: f.title.clone(),
                    findings: shown_repaired(&last_findings, &shown, &f.repairs),
                    file: now.loaded.sources.get(f.source).name(),
                    line: pos.line,
                    column: pos.column,
                });
            }
            texts = new_texts;
            current = Some(next);
        }
    }
    // The whole, proven once more against the start: no change at all when only safe
    // fixes were applied, else nothing but narrowing.
    if let Some(end) = &current {
        let d = diff::diff_as_written(base, end);
        let holds = if applied.iter().any(|a| a.safety == Safety::Narrowing) {
            d.inconclusive.is_empty()
                && d.events.is_empty()
                && d.commands.is_empty()
                && d.changes.iter().all(|c| c.class == Class::Narrowed)
        } else {
            d.is_empty()
        };
        if !holds {
            return Outcome {
                passes,
                refused: true,
                ..Outcome::default()
            };
        }
    }
    let end = current.as_ref().unwrap_or(base);
    let unsafe_available = if unsafe_fixes {
        0
    } else {
        let mut all = candidates(end, &last_findings, root);
        all.extend(suggested(
            end,
            &last_findings,
            findings,
            reload,
            &texts,
            root,
            &all,
        ));
        all.iter()
            .filter(|f| f.safety == Safety::Narrowing)
            .filter(|f| {
                attempt(end, &texts, &[*f], reload).is_ok()
                    || f.fallback
                        .as_deref()
                        .is_some_and(|fb| attempt(end, &texts, &[fb], reload).is_ok())
            })
            .count()
    };
    let files = texts
        .into_iter()
        .filter_map(|(path, after)| {
            let before = base
                .loaded
                .sources
                .iter()
                .find(|(_, f)| f.path() == Some(path.as_path()))?
                .1
                .text
                .clone();
            (before != after).then_some((path, before, after))
        })
        .collect();
    Outcome {
        files,
        applied,
        unsafe_available,
        passes,
        unfinished,
        refused: false,
    }
}
