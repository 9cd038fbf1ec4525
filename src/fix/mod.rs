//! `check --fix`: repairs of findings, each one proven by the diff engine before it is
//! offered.
//!
//! A fix is a set of text edits to one config file ([`text::Edit`]) built from a finding
//! ([`candidates`]). It is *offered* only once proven: the edited files are re-loaded in
//! memory exactly as OpenCode would load them (a config OpenCode would refuse is never
//! offered) and [`crate::diff::diff`] compares every agent's decisions with the project
//! before the edit:
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

/// The most passes [`fix`] makes (a pass applies every fix proven together).
pub const MAX_PASSES: usize = 16;

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
        "the deny is moved after the rule of the same object that overrides it",
    ),
    (
        "shadowed-ask",
        Safety::Narrowing,
        "the ask is moved after the rule of the same object that overrides it",
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
fn editable(project: &Project, source: SourceId, root: Option<&Path>) -> Option<Syntax> {
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
fn key_text(text: &str, key: crate::source::Span) -> &str {
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
    let mut out: Vec<Fix> = Vec::new();
    for (n, f) in findings.iter().enumerate() {
        let fix = match f.id {
            "dead-rule" if f.level == crate::checks::Level::Info => remove_rule(&mut files, f),
            "shadowed-deny" | "shadowed-ask" => move_after_overrider(&mut files, f),
            "legacy-tools" => translate_tools(&mut files, f),
            "unused-ignore" => remove_ignore(&mut files, f, findings),
            _ => None,
        };
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
    out
}

fn remove_rule(files: &mut Files<'_>, f: &Finding) -> Option<Fix> {
    let loc = f.loc?;
    let text = &files.project.loaded.sources.get(loc.source).text;
    let (_, cs) = files.get(loc.source)?;
    let (c, i) = text::entry_at(cs, loc.span.start)?;
    let edits = text::delete(text, c, i)?;
    Some(Fix {
        id: f.id,
        source: loc.source,
        at: loc.span.start,
        safety: Safety::Safe,
        title: "remove the redundant rule".into(),
        edits,
        agents: Vec::new(),
        permissions: Vec::new(),
        repairs: Vec::new(),
    })
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
    Some(Fix {
        id: f.id,
        source: loc.source,
        at: loc.span.start,
        safety: Safety::Safe,
        title: "delete the ignore comment that hides nothing".into(),
        edits,
        agents: Vec::new(),
        permissions: Vec::new(),
        repairs: Vec::new(),
    })
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
    Some(Fix {
        id: f.id,
        source: loc.source,
        at: loc.span.start,
        safety: Safety::Narrowing,
        title: format!("move the {what} after the rule that overrides it"),
        edits,
        agents: f.agents.clone(),
        permissions: vec![(
            rule.permission.clone(),
            rule.pattern.clone(),
            rule.action.effective(),
        )],
        repairs: Vec::new(),
    })
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
    Some(Fix {
        id: f.id,
        source: loc.source,
        at: tools_key.start,
        safety: Safety::Safe,
        title: "write the `tools` map as the `permission` map OpenCode makes of it".into(),
        edits,
        agents: Vec::new(),
        permissions: Vec::new(),
        repairs: Vec::new(),
    })
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
    let d = diff::diff(before, after);
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
            }
        }
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
    let mut last_findings;
    loop {
        let now = current.as_ref().unwrap_or(base);
        last_findings = findings(now);
        if passes == MAX_PASSES {
            break;
        }
        let all = candidates(now, &last_findings, root);
        let wanted: Vec<&Fix> = all
            .iter()
            .filter(|f| unsafe_fixes || f.safety == Safety::Safe)
            .collect();
        if wanted.is_empty() {
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
                findings: f.repairs.len(),
                file: now.loaded.sources.get(f.source).name(),
                line: pos.line,
                column: pos.column,
            });
        }
        texts = new_texts;
        current = Some(next);
    }
    // The whole, proven once more against the start: no change at all when only safe
    // fixes were applied, else nothing but narrowing.
    if let Some(end) = &current {
        let d = diff::diff(base, end);
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
                ..Outcome::default()
            };
        }
    }
    let end = current.as_ref().unwrap_or(base);
    let unsafe_available = if unsafe_fixes {
        0
    } else {
        candidates(end, &last_findings, root)
            .iter()
            .filter(|f| f.safety == Safety::Narrowing)
            .filter(|f| attempt(end, &texts, &[*f], reload).is_ok())
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
    }
}
