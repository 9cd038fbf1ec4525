//! Suggestions: the change a finding's help proposes, built for the config at hand and
//! proven on it before it is printed.
//!
//! A finding's help says in words what the choice is; a concrete change (a rule to write,
//! at a place of the user's own file, in its syntax) is offered only once proven the way
//! `--fix` proves its repairs: the edit applied in memory, the project re-loaded as
//! OpenCode would load it, re-checked, and compared with [`crate::diff::diff`]. A
//! [`Proposal`] becomes a [`Suggestion`] only when
//!
//! - **(a)** the finding is gone (no finding of its kind at its place);
//! - **(b)** nothing new appears at warning or above;
//! - **(c)** every decision that changes is decided by a rule the proposal writes, and the
//!   suggestion's effect is said from the diff itself (`bash "cat .env": allow → deny`);
//! - **(d)** it keeps the author's intent: no decision changes that one of the author's
//!   own rules decided explicitly (a catch-all aside), other than the rules the finding is
//!   about; a proposal that only narrows never widens anything, and none shows or hides a
//!   tool.
//!
//! Proposals are built per kind ([`proposals`]); where none proves, the help's words stand
//! alone, with no snippet.

use super::text::{self, Container, Edit, Syntax};
use super::{Files, Reload};
use crate::checks::{Finding, Level};
use crate::diff::{self, Class};
use crate::model::{Effect, Layer, Rule};
use crate::project::Project;
use crate::source::{Loc, SourceId, Span};
use serde::Serialize;
use std::collections::BTreeMap;

/// The most proposals a run proves (each is a re-load, a check and a diff).
pub const MAX_PROPOSALS: usize = 24;

/// A change to one file that a finding's help proposes, not yet proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// The finding it is for (index into the findings given).
    pub finding: usize,
    /// What it does, in words ("deny the commands that read `.env` in build's bash rules").
    pub title: String,
    pub source: SourceId,
    pub edits: Vec<Edit>,
    /// The rules it writes (permission, pattern, effect): every decision it changes must be
    /// decided by one of them afterwards.
    pub writes: Vec<(String, String, Effect)>,
    /// The author's rules whose inputs it may decide otherwise: those the finding is about.
    pub about: Vec<Loc>,
    /// It only narrows (deny/ask where there was allow/ask); else it may widen, toward the
    /// rules it writes only.
    pub narrows: bool,
    /// The agents whose decisions it may change (OpenCode's internal agents aside, which
    /// call no tool): those the finding is about.
    pub agents: Vec<String>,
}

/// A proposal proven on the config: what to write where, and what it changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// The file the edits apply to.
    #[serde(skip)]
    pub source: SourceId,
    pub title: String,
    /// The file, as the project names it.
    pub file: String,
    /// Where the first edit goes (1-based).
    pub line: usize,
    pub column: usize,
    /// The edits, as byte ranges of the file's text with their new text; `start`/`end`
    /// also as 1-based line and column (`range`) for editors.
    pub edits: Vec<SuggestedEdit>,
    /// What is written, as the file will read.
    pub text: String,
    /// Each decision it changes: `permission "input": before → after (agents)`.
    pub effect: Vec<String>,
    /// How many inputs change, in all (one per region of the diff; the effect names the
    /// first of each line's).
    pub changes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuggestedEdit {
    pub start: usize,
    pub end: usize,
    /// `[line, column, line, column]`, 1-based, columns in characters.
    pub range: [usize; 4],
    pub new_text: String,
}

/// The proposals the findings have (for warnings and errors), unproven, in finding order.
pub fn proposals(project: &Project, findings: &[Finding]) -> Vec<Proposal> {
    let mut out = Vec::new();
    // Any editable file, a global one included: a suggestion is shown, never written.
    let mut files = Files {
        project,
        root: None,
        parsed: BTreeMap::new(),
    };
    // Built once, and only when a kind needs the checks' view (a rule never matching).
    let mut ctx: Option<crate::checks::Ctx<'_>> = None;
    for (n, f) in findings.iter().enumerate() {
        if f.level < Level::Warning {
            continue;
        }
        let p = match f.id {
            "deny-bypass" => deny_bypass(project, &mut files, n, f),
            "delegation-escalation" => {
                let ctx = ctx.get_or_insert_with(|| crate::checks::Ctx::new(project));
                delegated(project, ctx, &mut files, n, f)
            }
            "prompt-limit" => own_limit(project, &mut files, n, f),
            "agent-overrides-shared" => {
                let ctx = ctx.get_or_insert_with(|| crate::checks::Ctx::new(project));
                repeat_shared(project, ctx, &mut files, n, f)
            }
            _ => None,
        };
        out.extend(p);
    }
    out
}

/// `prompt-limit`: the prompt's limit as the agent's own bash rules, written last in its
/// own block (a markdown agent's frontmatter, a JSON entry's object).
fn own_limit(project: &Project, files: &mut Files<'_>, n: usize, f: &Finding) -> Option<Proposal> {
    use crate::checks::prompt_limit;
    let name = f.agents.first()?;
    let entry = project.loaded.merged.agent.get(name)?;
    let limit = prompt_limit::stated(entry.prompt.as_deref()?)?;
    let acts: Vec<_> = limit
        .acts
        .iter()
        .filter(|(act, _)| f.witnesses.iter().any(|w| w.input == act.input()))
        .copied()
        .collect();
    let agent = project.agent(name)?;
    // The catch-all that lets the acts run is what the finding is about.
    let catch_alls: Vec<&Rule> = f
        .witnesses
        .iter()
        .filter_map(|w| w.rule.and_then(|k| agent.rules.get(k)))
        .filter(|r| prompt_limit::written_catch_all(r))
        .collect();
    let about: Vec<Loc> = catch_alls.iter().filter_map(|r| written(r)).collect();
    let rules = prompt_limit::rules(&acts, !catch_alls.is_empty());
    let entries: Vec<(String, String)> = rules
        .iter()
        .map(|(p, e)| (p.to_string(), e.to_string()))
        .collect();
    let writes = rules
        .iter()
        .map(|(p, e)| ("bash".to_string(), p.to_string(), *e))
        .collect();
    let (source, edits) = own_block(project, files, entry, "bash", &entries)?;
    let said: Vec<String> = entries.iter().map(|(p, e)| format!("{e} `{p}`")).collect();
    Some(Proposal {
        finding: n,
        title: if acts.iter().all(|(a, _)| *a == prompt_limit::Act::Bash) {
            format!("deny every command (`\"*\": deny`) for `{name}`, as its prompt says")
        } else {
            format!(
                "{} for `{name}`, as its prompt says; its other commands keep their rules",
                said.join(", ")
            )
        },
        source,
        edits,
        writes,
        about,
        narrows: true,
        agents: vec![name.clone()],
    })
}

/// `entries` for `permission` written last in an agent's own block: its `permission`
/// map's block for `permission` extended (a scalar there turned into a block that keeps
/// it first), else that block added, else a `permission` map added to the agent.
fn own_block(
    project: &Project,
    files: &mut Files<'_>,
    entry: &crate::model::config::AgentEntry,
    permission: &str,
    entries: &[(String, String)],
) -> Option<(SourceId, Vec<Edit>)> {
    // A markdown agent: its frontmatter, the file its body is in.
    let markdown = entry
        .prompt_loc
        .filter(|l| crate::checks::in_frontmatter(project, *l));
    let source = match markdown {
        Some(l) => l.source,
        None => entry.loc?.source,
    };
    let (syntax, cs) = files.get(source)?;
    let text = &project.loaded.sources.get(source).text;
    let obj = match markdown {
        Some(_) => cs.iter().find(|c| text::parent(cs, c).is_none())?,
        None => {
            let (c, i) = text::entry_at(cs, entry.loc?.span.start)?;
            text::child(cs, c.entries.get(i)?)?
        }
    };
    let last = |c: &Container, key: &str| {
        c.entries
            .iter()
            .rev()
            .find(|e| key_of(text, e.key) == key)
            .copied()
    };
    let edits = match last(obj, "permission") {
        Some(pe) => in_permission_map(
            text,
            cs,
            *syntax,
            text::child(cs, &pe)?,
            permission,
            entries,
        )?,
        None => {
            let block = (
                "permission".to_string(),
                format!(
                    "{{{}: {}}}",
                    text::quoted(permission),
                    text::object_text(*syntax, entries)
                ),
            );
            match text::append(text, obj, std::slice::from_ref(&block)) {
                Some(e) => e,
                // A frontmatter whose last value spans lines (`tools:` and its map): a
                // top-level line before the closing `---` ends it.
                None if markdown.is_some() => {
                    let last = obj.entries.last()?;
                    let fence = text.get(last.value.end..)?.find("\n---")? + last.value.end + 1;
                    let nl = text::newline(text);
                    vec![Edit::insert(
                        fence,
                        format!("{}: {}{nl}", text::quoted(&block.0), block.1),
                    )]
                }
                None => return None,
            }
        }
    };
    Some((source, edits))
}

/// The text of a key without its quotes.
fn key_of(text: &str, key: Span) -> &str {
    super::key_text(text, key)
}

/// A rule written in a permission block the user edits (not a legacy `tools` entry, not
/// built in).
pub(crate) fn written(r: &Rule) -> Option<Loc> {
    if matches!(
        r.layer,
        Layer::LegacyTools | Layer::AgentLegacyTools | Layer::Defaults | Layer::AgentBuiltin
    ) {
        return None;
    }
    r.loc
}

/// Where new rules for `permission` go so that they come after rule `r` (the rule that
/// decides today): the end of `r`'s own block, or its scalar turned into a block that keeps
/// it first. `None` when `r`'s place cannot be edited.
pub(crate) fn after_rule(
    text: &str,
    cs: &[Container],
    syntax: Syntax,
    r: &Rule,
    permission: &str,
    entries: &[(String, String)],
) -> Option<Vec<Edit>> {
    let loc = r.loc?;
    let (c, i) = text::entry_at(cs, loc.span.start)?;
    let e = c.entries.get(i)?;
    if key_of(text, e.key) == permission && text::child(cs, e).is_none() {
        // `"bash": "allow"`: the scalar is the block's catch-all.
        return Some(vec![scalar_to_block(
            syntax,
            e,
            &r.action.to_string(),
            entries,
        )]);
    }
    // `r` is an entry of the permission's own block: write after the block's last entry.
    let (parent, k) = text::parent(cs, c)?;
    if key_of(text, parent.entries.get(k)?.key) != permission {
        return None;
    }
    text::append(text, c, &rules_text(syntax, entries))
}

/// A permission's scalar (`"bash": "allow"`) replaced by a block that keeps it as the
/// catch-all, first, then `entries`.
fn scalar_to_block(
    syntax: Syntax,
    e: &text::Entry,
    action: &str,
    entries: &[(String, String)],
) -> Edit {
    let mut all = vec![("*".to_string(), action.to_string())];
    all.extend(entries.iter().cloned());
    text::replace_value(e, text::object_text(syntax, &all))
}

/// (pattern, action) entries with their actions written for `syntax`.
fn rules_text(syntax: Syntax, entries: &[(String, String)]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|(k, a)| (k.clone(), text::action_text(syntax, a)))
        .collect()
}

/// Where new rules for `permission` go in the permission block holding rule `r` (of another
/// permission): its `permission` block extended, or a new one written last.
pub(crate) fn beside_rule(
    text: &str,
    cs: &[Container],
    syntax: Syntax,
    r: &Rule,
    permission: &str,
    entries: &[(String, String)],
) -> Option<Vec<Edit>> {
    let loc = r.loc?;
    let (c, i) = text::entry_at(cs, loc.span.start)?;
    let e = c.entries.get(i)?;
    // The permission block: `c` itself when `r` is a scalar there (`"read": "deny"`), else
    // the block holding `r`'s own.
    let block = if key_of(text, e.key) == r.permission && text::child(cs, e).is_none() {
        c
    } else {
        text::parent(cs, c)?.0
    };
    in_permission_map(text, cs, syntax, block, permission, entries)
}

/// `entries` for `permission` written last in a permission map `block`: its last block
/// for `permission` extended, a scalar there (`"bash": "allow"`) turned into a block that
/// keeps it first, or a block for `permission` added.
fn in_permission_map(
    text: &str,
    cs: &[Container],
    syntax: Syntax,
    block: &Container,
    permission: &str,
    entries: &[(String, String)],
) -> Option<Vec<Edit>> {
    match block
        .entries
        .iter()
        .rev()
        .find(|e| key_of(text, e.key) == permission)
    {
        Some(e) => match text::child(cs, e) {
            Some(own) => text::append(text, own, &rules_text(syntax, entries)),
            None => {
                let current = text.get(e.value.start..e.value.end)?;
                let current = current.trim_matches(['"', '\'']);
                Some(vec![scalar_to_block(syntax, e, current, entries)])
            }
        },
        None => text::append(
            text,
            block,
            &[(permission.to_string(), text::object_text(syntax, entries))],
        ),
    }
}

/// The part of a path glob every file it names contains (`*.env` → `.env`, `**/secrets/**`
/// → `secrets/`): what a command naming such a file has in its text.
fn core(pattern: &str) -> String {
    pattern
        .trim_start_matches(['*', '/'])
        .trim_end_matches('*')
        .to_string()
}

/// Commands that read or write a file, as bash rule prefixes.
fn commands(permission: &str) -> &'static [&'static str] {
    match permission {
        "read" => &["cat", "head", "tail", "less", "grep"],
        _ => &["sed -i", "cp", "mv", "tee"],
    }
}

/// `deny-bypass`: deny the commands that walk around the deny, on the files it names,
/// after the rule that lets them run (the targeted fix; the whole tool stays as it is).
fn deny_bypass(
    project: &Project,
    files: &mut Files<'_>,
    n: usize,
    f: &Finding,
) -> Option<Proposal> {
    let agent = project.agent(f.agents.first()?)?;
    let deny = agent.rules.get(f.rule?)?;
    // At an allow: an allow-listed command's write mode (`sed -i` under `"sed *"`).
    if deny.action.effective() == Effect::Allow {
        return write_modes(project, files, n, f, agent);
    }
    let [guarded, bash] = f.witnesses.as_slice() else {
        return None;
    };
    let core = core(&deny.pattern);
    if core.contains(['*', '?']) && core.len() < 3 {
        return None;
    }
    // Every file's edit denied: no list of denied commands keeps bash from writing (blind
    // fresh-5 A: after `sed -i *`, `cp *`, `mv *`, `tee *` were denied, `echo x > f` still
    // wrote, and `cp` was gone for a deploy agent); the help says the choice in words.
    if deny.permission == "edit" && core.is_empty() {
        return None;
    }
    let platform = project.platform;
    // The forms that run today without asking, each as `cmd *core*`.
    let mut entries: Vec<(String, String)> = Vec::new();
    for c in commands(&guarded.permission) {
        let example = match *c {
            "grep" => format!("grep x {}", guarded.input),
            "sed -i" => format!("sed -i s/x/y/ {}", guarded.input),
            "cp" | "mv" => format!("{c} x {}", guarded.input),
            _ => format!("{c} {}", guarded.input),
        };
        if crate::agents::evaluate(&agent.rules, "bash", &example, platform).effect != Effect::Allow
        {
            continue;
        }
        let pattern = if core.is_empty() {
            format!("{c} *")
        } else {
            format!("{c} *{core}*")
        };
        entries.push((pattern, "deny".into()));
    }
    if entries.is_empty() {
        return None;
    }
    // The exceptions the author carved out of the deny (`*.env.example` allow after
    // `*.env*` deny) stay open to the same commands: their allows after the denies.
    let platform = project.platform;
    // What the bash denies cover (`cat *.env*` for a `*.env` deny: `.env.example` too), not
    // only the deny's own glob: an allow of the author's inside it stays open.
    let deny_glob = crate::glob::Wildcard::compile(&if core.is_empty() {
        deny.pattern.clone()
    } else {
        format!("*{core}*")
    });
    let exceptions: Vec<String> = agent
        .rules
        .iter()
        .skip(f.rule? + 1)
        .filter(|r| {
            r.loc.is_some()
                && r.permission == deny.permission
                && r.action.effective() == Effect::Allow
                && deny_glob.is_match(&r.pattern, platform)
        })
        .map(|r| self::core(&r.pattern))
        .filter(|c| !c.is_empty())
        .collect();
    let denied: Vec<String> = entries.iter().map(|(p, _)| p.clone()).collect();
    for c in commands(&guarded.permission) {
        if !denied.iter().any(|p| p.starts_with(&format!("{c} "))) {
            continue;
        }
        for e in &exceptions {
            entries.push((format!("{c} *{e}*"), "allow".into()));
        }
    }
    // After the rule that lets the commands run, in its own block when it is the user's and
    // as much the agent's own as the deny (a shared allow binds every agent that inherits
    // it: an agent's own deny gets its bash denies in its own rules); else beside the deny.
    let decider = bash
        .rule
        .and_then(|k| agent.rules.get(k))
        .filter(|d| crate::checks::is_own(d.layer) || !crate::checks::is_own(deny.layer));
    let (source, edits, about) = match decider.and_then(|d| written(d).map(|l| (d, l))) {
        Some((d, l)) => {
            let (syntax, cs) = files.get(l.source)?;
            let text = &project.loaded.sources.get(l.source).text;
            let edits = after_rule(text, cs, *syntax, d, "bash", &entries)?;
            (l.source, edits, vec![l])
        }
        None => {
            let l = written(deny)?;
            let (syntax, cs) = files.get(l.source)?;
            let text = &project.loaded.sources.get(l.source).text;
            (
                l.source,
                beside_rule(text, cs, *syntax, deny, "bash", &entries)?,
                Vec::new(),
            )
        }
    };
    let names: Vec<String> = denied.iter().map(|p| format!("`{p}`")).collect();
    Some(Proposal {
        finding: n,
        title: format!(
            "deny the commands that {} {} ({}); other commands keep their rules",
            if guarded.permission == "read" {
                "read"
            } else {
                "write"
            },
            serde_json::to_string(&guarded.input).unwrap_or_default(),
            names.join(", ")
        ),
        source,
        edits,
        writes: entries
            .iter()
            .map(|(p, a)| {
                let e = if a == "allow" {
                    Effect::Allow
                } else {
                    Effect::Deny
                };
                ("bash".to_string(), p.clone(), e)
            })
            .collect(),
        about,
        narrows: true,
        agents: f.agents.clone(),
    })
}

/// `deny-bypass` at an allow-listed command: ask (or deny, as the help says) for exactly
/// the write modes it opens, at the end of the block that holds the allows; the rest of
/// each command stays allowed.
fn write_modes(
    project: &Project,
    files: &mut Files<'_>,
    n: usize,
    f: &Finding,
    agent: &crate::agents::Agent,
) -> Option<Proposal> {
    let platform = project.platform;
    // The help chose deny only where the harm is denied outright (`rm FILE` itself).
    let (action, effect) = if f.help.as_deref().is_some_and(|h| h.starts_with("deny ")) {
        ("deny", Effect::Deny)
    } else {
        ("ask", Effect::Ask)
    };
    let mut entries: Vec<(String, String)> = Vec::new();
    let mut allows: Vec<&Rule> = Vec::new();
    for w in &f.witnesses {
        if w.permission != "bash" || w.action != Effect::Allow {
            continue;
        }
        let Some(r) = w.rule.and_then(|k| agent.rules.get(k)) else {
            continue;
        };
        for p in crate::checks::deny_bypass::mode_patterns(&w.input, platform) {
            let p = crate::checks::deny_bypass::behind(&r.pattern, p);
            if !entries.iter().any(|(q, _)| *q == p) {
                entries.push((p, action.to_string()));
            }
        }
        if !allows.iter().any(|a| a.loc == r.loc) {
            allows.push(r);
        }
    }
    let last = allows.last()?;
    let l = written(last)?;
    if entries.is_empty()
        || allows
            .iter()
            .any(|a| a.loc.map(|x| x.source) != Some(l.source))
    {
        return None;
    }
    let (syntax, cs) = files.get(l.source)?;
    let text = &project.loaded.sources.get(l.source).text;
    let edits = after_rule(text, cs, *syntax, last, "bash", &entries)?;
    let names: Vec<String> = entries.iter().map(|(p, _)| format!("`{p}`")).collect();
    Some(Proposal {
        finding: n,
        title: format!(
            "{} the {}modes known for these commands ({}) at the end of the block; the rest of each command stays allowed, a mode not named here too (for an agent that must change nothing, a catch-all that asks, first, is the sure fix)",
            if effect == Effect::Deny {
                "deny"
            } else {
                "ask for"
            },
            // `cat .env` is a reading mode, not a write.
            if f.witnesses.iter().any(|w| {
                w.permission == "bash"
                    && crate::checks::deny_bypass::prints_secret(&w.input, platform)
            }) {
                ""
            } else {
                "write "
            },
            names.join(", ")
        ),
        source: l.source,
        edits,
        writes: entries
            .iter()
            .map(|(p, _)| ("bash".to_string(), p.clone(), effect))
            .collect(),
        about: allows.iter().filter_map(|a| a.loc).collect(),
        narrows: true,
        agents: f.agents.clone(),
    })
}

/// The action a caller's rule is copied with (`deny`, or `ask` for any other: an ask that
/// escapes through a subagent is copied as an ask).
fn rule_action(r: &Rule) -> (&'static str, Effect) {
    match r.action.effective() {
        Effect::Deny => ("deny", Effect::Deny),
        _ => ("ask", Effect::Ask),
    }
}

/// `delegation-escalation`: the caller's deny (or ask) written where the subagent gets it too: its
/// own block when the user wrote one, else the shared block (after the shared rules of the
/// same permission).
///
/// A deny is never written for a helper that can use the whole tool by design (`general`,
/// any subagent not read-only): it works for every agent that starts it, and the help says
/// the choice in words. The shared block is proposed only where every other agent already
/// asks or denies the input (it takes nothing from `build`).
fn delegated(
    project: &Project,
    ctx: &crate::checks::Ctx<'_>,
    files: &mut Files<'_>,
    n: usize,
    f: &Finding,
) -> Option<Proposal> {
    use crate::checks::delegation_escalation::{shared_ok, whole_tool};
    let caller = project.agent(f.agents.first()?)?;
    let deny = caller.rules.get(f.rule?)?;
    let sub = project.agent(&f.witnesses.get(1)?.input)?;
    let (action, effect) = rule_action(deny);
    let subs = subagents(f);
    if effect == Effect::Deny
        && subs
            .iter()
            .any(|s| project.agent(s).is_none_or(|a| whole_tool(ctx, a)))
    {
        return None;
    }
    let w = f.witnesses.first()?;
    let shared_fits = shared_ok(ctx, &w.permission, &w.input, &subs);
    let entries = vec![(deny.pattern.clone(), action.to_string())];
    let own = |r: &&Rule| matches!(r.layer, Layer::AgentConfig | Layer::MarkdownAgent);
    let shared = |r: &&Rule| {
        crate::checks::is_shared(r.layer)
            && !matches!(r.layer, Layer::LegacyTools | Layer::EnvPermission)
    };
    let pick = |which: &dyn Fn(&&Rule) -> bool| -> Option<(&Rule, bool)> {
        let mut rules = sub.rules.iter().filter(|r| r.loc.is_some()).filter(which);
        let all: Vec<&Rule> = rules.by_ref().collect();
        all.iter()
            .rev()
            .find(|r| r.permission == deny.permission)
            .map(|r| (*r, true))
            .or_else(|| all.last().map(|r| (*r, false)))
    };
    // Each subagent's own block beside the caller's, when none has one yet: the deny then
    // reaches exactly the subagents the finding names.
    if let Some(p) = beside_caller(project, files, n, f, caller, deny) {
        return Some(p);
    }
    // The shared block: one rule there reaches every subagent the finding names (only
    // where it takes nothing from the other agents).
    let shared_pick = if shared_fits { pick(&shared) } else { None };
    let Some((r, same)) = shared_pick.or_else(|| pick(&own)) else {
        if !shared_fits {
            return None;
        }
        return top_level(project, files, n, caller, deny, f);
    };
    let l = r.loc?;
    let (syntax, cs) = files.get(l.source)?;
    let text = &project.loaded.sources.get(l.source).text;
    let edits = if same {
        after_rule(text, cs, *syntax, r, &deny.permission, &entries)?
    } else {
        beside_rule(text, cs, *syntax, r, &deny.permission, &entries)?
    };
    let whose = if own(&r) {
        format!("`{}`'s own block", sub.name)
    } else {
        "the shared block every agent inherits".to_string()
    };
    Some(Proposal {
        finding: n,
        title: format!(
            "{action} {} {} in {whose}, as `{}` does",
            deny.permission,
            serde_json::to_string(&deny.pattern).unwrap_or_default(),
            caller.name
        ),
        source: l.source,
        edits,
        writes: vec![(deny.permission.clone(), deny.pattern.clone(), effect)],
        about: Vec::new(),
        narrows: true,
        agents: subagents(f),
    })
}

/// The subagents a `delegation-escalation` finding names (`may start `explore`, `general`
/// through the task tool`): the agents its fix may change.
fn subagents(f: &Finding) -> Vec<String> {
    let Some(rest) = f.message.split_once("may start ").map(|(_, r)| r) else {
        return Vec::new();
    };
    let names = rest.split(" through ").next().unwrap_or("");
    names
        .split(", ")
        .filter_map(|n| n.strip_prefix('`')?.strip_suffix('`'))
        .map(str::to_string)
        .collect()
}

/// The caller's deny written for each subagent in its own new block of the `agent` map that
/// holds the caller's (`agent.explore.permission.bash`), when the caller's deny is in a JSON
/// config and no subagent has a block there or an agent file.
fn beside_caller(
    project: &Project,
    files: &mut Files<'_>,
    n: usize,
    f: &Finding,
    caller: &crate::agents::Agent,
    deny: &Rule,
) -> Option<Proposal> {
    if deny.layer != Layer::AgentConfig {
        return None;
    }
    let l = written(deny)?;
    let (syntax, cs) = files.get(l.source)?;
    let text = &project.loaded.sources.get(l.source).text;
    // The deny's block, the permission map, the caller's object, the `agent` map.
    let (c, i) = text::entry_at(cs, l.span.start)?;
    let permission_map = if key_of(text, c.entries.get(i)?.key) == deny.permission {
        c
    } else {
        text::parent(cs, c)?.0
    };
    let caller_obj = text::parent(cs, permission_map)?.0;
    let (agents, k) = text::parent(cs, caller_obj)?;
    if key_of(text, agents.entries.get(k)?.key) != caller.name {
        return None;
    }
    let subs = subagents(f);
    let taken = |name: &str| {
        agents.entries.iter().any(|e| key_of(text, e.key) == name)
            || project.agent(name).is_some_and(|a| {
                a.rules
                    .iter()
                    .any(|r| matches!(r.layer, Layer::MarkdownAgent | Layer::AgentConfig))
            })
    };
    if subs.is_empty() || subs.iter().any(|s| taken(s)) {
        return None;
    }
    let (action, effect) = rule_action(deny);
    let block = format!(
        "{{\"permission\": {{{}: {}}}}}",
        text::quoted(&deny.permission),
        text::object_text(*syntax, &[(deny.pattern.clone(), action.into())])
    );
    let entries: Vec<(String, String)> = subs.iter().map(|s| (s.clone(), block.clone())).collect();
    let edits = text::append(text, agents, &entries)?;
    Some(Proposal {
        finding: n,
        title: format!(
            "{action} {} {} for {} in their own blocks, as `{}` does",
            deny.permission,
            serde_json::to_string(&deny.pattern).unwrap_or_default(),
            subs.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", "),
            caller.name
        ),
        source: l.source,
        edits,
        writes: vec![(deny.permission.clone(), deny.pattern.clone(), effect)],
        about: Vec::new(),
        narrows: true,
        agents: subs,
    })
}

/// The caller's deny as a new top-level `permission` block of the JSON config that holds
/// it, when no shared rule exists to write it beside.
fn top_level(
    project: &Project,
    files: &mut Files<'_>,
    n: usize,
    caller: &crate::agents::Agent,
    deny: &Rule,
    f: &Finding,
) -> Option<Proposal> {
    let l = written(deny)?;
    let (syntax, cs) = files.get(l.source)?;
    let text = &project.loaded.sources.get(l.source).text;
    if *syntax != Syntax::Jsonc {
        return None;
    }
    // The root object: the container no other holds.
    let root = cs.iter().find(|c| text::parent(cs, c).is_none())?;
    if root
        .entries
        .iter()
        .any(|e| key_of(text, e.key) == "permission")
    {
        return None;
    }
    let (action, effect) = rule_action(deny);
    let block = format!(
        "{{{}: {}}}",
        text::quoted(&deny.permission),
        text::object_text(*syntax, &[(deny.pattern.clone(), action.into())])
    );
    let edits = text::append(text, root, &[("permission".into(), block)])?;
    Some(Proposal {
        finding: n,
        title: format!(
            "{action} {} {} in a shared `permission` block every agent inherits, as `{}` does",
            deny.permission,
            serde_json::to_string(&deny.pattern).unwrap_or_default(),
            caller.name
        ),
        source: l.source,
        edits,
        writes: vec![(deny.permission.clone(), deny.pattern.clone(), effect)],
        about: Vec::new(),
        narrows: true,
        agents: subagents(f),
    })
}

/// `agent-overrides-shared`: the shared rules the agent's own rule undoes, repeated after it
/// in the agent's own block, with the shared exceptions written after them and never the
/// shared catch-all (which the agent's rule overrides on purpose).
fn repeat_shared(
    project: &Project,
    ctx: &crate::checks::Ctx<'_>,
    files: &mut Files<'_>,
    n: usize,
    f: &Finding,
) -> Option<Proposal> {
    let agent = project.agent(f.agents.first()?)?;
    let d = f.rule?;
    let own = agent.rules.get(d)?;
    let l = written(own)?;
    // A rule over several permissions (`"*": "allow"`) has no one block to repeat them in:
    // the help says it in words, per permission.
    if own.permission.contains(['*', '?']) {
        return None;
    }
    let repeat = crate::checks::agent_overrides_shared::to_repeat(ctx, agent, d);
    if repeat.is_empty() {
        return None;
    }
    let entries: Vec<(String, String)> = repeat
        .iter()
        .filter_map(|&k| agent.rules.get(k))
        .map(|r| (r.pattern.clone(), r.action.to_string()))
        .collect();
    let (syntax, cs) = files.get(l.source)?;
    let text = &project.loaded.sources.get(l.source).text;
    let edits = after_rule(text, cs, *syntax, own, &own.permission, &entries)?;
    let about: Vec<Loc> = std::iter::once(l)
        .chain(repeat.iter().filter_map(|&k| agent.rules.get(k)?.loc))
        .collect();
    Some(Proposal {
        finding: n,
        title: format!(
            "repeat the shared `{}` rules after agent `{}`'s own rule, the shared catch-all left out",
            own.permission, agent.name
        ),
        source: l.source,
        edits,
        writes: entries
            .iter()
            .map(|(p, a)| {
                let e = match a.as_str() {
                    "allow" => Effect::Allow,
                    "ask" => Effect::Ask,
                    _ => Effect::Deny,
                };
                (own.permission.clone(), p.clone(), e)
            })
            .collect(),
        about,
        narrows: true,
        agents: f.agents.clone(),
    })
}

/// Where `loc` (a place of `before`) is after `edits` to its file: shifted by the edits
/// before it; an edit covering it maps it to the edit's start.
fn shifted(loc: Loc, source: SourceId, edits: &[Edit]) -> Loc {
    if loc.source != source {
        return loc;
    }
    let mut delta: isize = 0;
    for e in edits {
        if e.span.end <= loc.span.start
            && !(e.span.start == e.span.end && e.span.start == loc.span.start)
        {
            delta += e.text.len() as isize - (e.span.end - e.span.start) as isize;
        } else if e.span.start < loc.span.end && loc.span.start < e.span.end {
            return Loc {
                source,
                span: Span::new(
                    (e.span.start as isize + delta) as usize,
                    (e.span.start as isize + delta) as usize + e.text.len(),
                ),
            };
        }
    }
    let at = |x: usize| (x as isize + delta).max(0) as usize;
    Loc {
        source,
        span: Span::new(at(loc.span.start), at(loc.span.end)),
    }
}

/// The source of `after` that is `before`'s `id` (the same file).
fn same_source(before: &Project, after: &Project, id: SourceId) -> Option<SourceId> {
    let origin = &before.loaded.sources.get(id).origin;
    after
        .loaded
        .sources
        .iter()
        .find(|(_, f)| f.origin == *origin)
        .map(|(i, _)| i)
}

/// Prove `proposals` on `project` (whose reported findings are `findings`): the suggestions
/// each finding gets, most intent-preserving first. `check` gives a project's findings as
/// the run reports them.
pub fn prove(
    project: &Project,
    findings: &[Finding],
    proposals: Vec<Proposal>,
    reload: &Reload<'_>,
    check: &dyn Fn(&Project) -> Vec<Finding>,
) -> Vec<Vec<Suggestion>> {
    let mut out: Vec<Vec<Suggestion>> = vec![Vec::new(); findings.len()];
    for p in proposals.into_iter().take(MAX_PROPOSALS) {
        // Why a proposal is not proven is not shown: its finding's words stand alone.
        if let (Ok(s), Some(slot)) = (
            prove_one(project, findings, &p, reload, check),
            out.get_mut(p.finding),
        ) {
            slot.push(s);
        }
    }
    out
}

/// The proposals of `findings` that [`prove`] proves on `project` and that only narrow,
/// as fixes `check --fix --unsafe-fixes` applies: only in files under `root`, only for a
/// finding no other fix repairs (`taken`). The fix machinery proves each again as a
/// narrowing fix before it is applied.
pub fn as_fixes(
    project: &Project,
    findings: &[Finding],
    reload: &Reload<'_>,
    check: &dyn Fn(&Project) -> Vec<Finding>,
    root: Option<&std::path::Path>,
    taken: &[usize],
) -> Vec<super::Fix> {
    let mut out = Vec::new();
    let wanted = proposals(project, findings).into_iter().filter(|p| {
        p.narrows
            && !taken.contains(&p.finding)
            && super::editable(project, p.source, root).is_some()
    });
    for p in wanted.take(MAX_PROPOSALS) {
        if prove_one(project, findings, &p, reload, check).is_err() {
            continue;
        }
        let Some(f) = findings.get(p.finding) else {
            continue;
        };
        let at = p.edits.first().map_or(0, |e| e.span.start);
        let mut fix = super::Fix::new(f, p.source, at, super::Safety::Narrowing, p.title)
            .with_edits(p.edits)
            .touching(p.writes.iter().map(|(perm, _, _)| perm.clone()));
        // OpenCode's internal agents (compaction, summary, title) call no tool: the
        // suggestion's proof sets them aside, and the fix's proof may let them change too.
        fix.agents = p.agents;
        for a in project.agents.iter().filter(|a| a.native && a.hidden) {
            if !fix.agents.contains(&a.name) {
                fix.agents.push(a.name.clone());
            }
        }
        fix.permissions = p.writes;
        fix.repairs = vec![p.finding];
        out.push(fix);
    }
    out
}

fn prove_one(
    project: &Project,
    findings: &[Finding],
    p: &Proposal,
    reload: &Reload<'_>,
    check: &dyn Fn(&Project) -> Vec<Finding>,
) -> Result<Suggestion, &'static str> {
    let f = findings.get(p.finding).ok_or("no finding")?;
    let file = project.loaded.sources.get(p.source);
    let path = file.path().ok_or("no path")?;
    let edited = text::apply(&file.text, &p.edits).ok_or("bad edit")?;
    let mut texts = BTreeMap::new();
    texts.insert(path.to_path_buf(), edited.clone());
    let next = reload(&texts).ok_or("does not load")?;
    let d = diff::diff(project, &next);
    // OpenCode's internal agents (compaction, summary, title) call no tool: a tool shown
    // to them changes nothing.
    let internal = |name: &str| project.agent(name).is_some_and(|a| a.is_internal());
    // A whole-tool deny it writes (`bash: {"*": deny}` for a prompt that forbids every
    // command) hides that tool from the agents it is for: the change it says it makes.
    let hides = |e: &diff::Event| {
        e.class == Class::ToolHidden
            && p.agents.contains(&e.agent)
            && e.tool.as_deref().is_some_and(|t| {
                p.writes
                    .iter()
                    .any(|(perm, pat, eff)| perm == t && pat == "*" && *eff == Effect::Deny)
            })
    };
    if !d.inconclusive.is_empty() || d.events.iter().any(|e| !internal(&e.agent) && !hides(e)) {
        return Err("inconclusive or tool events");
    }
    // (c), (d): each change is the proposal's own rule deciding, over no explicit decision
    // of the author's but those the finding is about.
    for c in d.changes.iter().filter(|c| !internal(&c.agent)) {
        if p.narrows && c.class != Class::Narrowed {
            return Err("widens");
        }
        let after = next.agent(&c.agent).ok_or("agent")?;
        let decider = c
            .head_rule
            .and_then(|k| after.rules.get(k))
            .ok_or("decided by no rule")?;
        if !p.writes.iter().any(|(perm, pat, e)| {
            *perm == decider.permission
                && *pat == decider.pattern
                && *e == decider.action.effective()
        }) {
            return Err("decided by a rule it does not write");
        }
        let before = project.agent(&c.agent).ok_or("agent")?;
        if !p.agents.contains(&c.agent) {
            return Err("changes an agent the finding is not about");
        }
        if let Some(b) = c.base_rule.and_then(|k| before.rules.get(k))
            && let Some(l) = written(b)
            && !p.about.contains(&l)
        {
            return Err("changes an explicit decision of the author's");
        }
    }
    // (a), (b): re-checked, the finding is gone and nothing new is at warning or above.
    let after_source = same_source(project, &next, p.source).ok_or("source")?;
    let moved = |l: Loc| {
        let l = shifted(l, p.source, &p.edits);
        Loc {
            source: if l.source == p.source {
                after_source
            } else {
                same_source(project, &next, l.source).unwrap_or(l.source)
            },
            span: l.span,
        }
    };
    let now = check(&next);
    let at = f.loc.map(moved);
    // Counted: another finding of the kind may stand at the same rule (`cat *` opens both
    // `cat x > FILE` and `cat .env`); this one is gone when one fewer is left there.
    let had = findings
        .iter()
        .filter(|g| g.id == f.id && g.loc.map(moved) == at)
        .count();
    let left = now.iter().filter(|g| g.id == f.id && g.loc == at).count();
    if at.is_some() && left >= had {
        return Err("the finding stays");
    }
    // Counted per kind and place: a second finding of the same kind at a place that had one
    // (another agent's bypass of the same deny) is new too.
    let mut serious: BTreeMap<(&str, Option<Loc>), isize> = BTreeMap::new();
    for g in findings.iter().filter(|g| g.level >= Level::Warning) {
        *serious.entry((g.id, g.loc.map(moved))).or_default() -= 1;
    }
    // A deny the change makes live (moved after the catch-all that overrode it) is walked
    // around as every deny of an allow-all is (`deny-walkaround`): the change made the deny
    // work, the walk-around is the deny-list's, not the change's.
    for g in now
        .iter()
        .filter(|g| g.level >= Level::Warning && g.id != crate::checks::deny_walkaround::CHECK.id)
    {
        *serious.entry((g.id, g.loc)).or_default() += 1;
    }
    if serious.values().any(|n| *n > 0) {
        return Err("a new warning");
    }
    // The effect, from the diff: the inputs that change alike for the same agents, on one
    // line (`bash "cat .env", "head .env": allow → deny (build, plan)`).
    let mut per_input: Vec<(String, Effect, Effect, Vec<String>)> = Vec::new();
    for c in d.changes.iter().filter(|c| !internal(&c.agent)) {
        let input = format!(
            "{} {}",
            c.permission,
            serde_json::to_string(&c.input).unwrap_or_default()
        );
        match per_input
            .iter_mut()
            .find(|(i, b, a, _)| *i == input && *b == c.before && *a == c.after)
        {
            Some((_, _, _, agents)) => agents.push(c.agent.clone()),
            None => per_input.push((input, c.before, c.after, vec![c.agent.clone()])),
        }
    }
    let inputs = per_input.len();
    let mut lines: Vec<(Vec<String>, Effect, Effect, Vec<String>)> = Vec::new();
    for (input, before, after, agents) in per_input {
        match lines
            .iter_mut()
            .find(|(_, b, a, ag)| *b == before && *a == after && *ag == agents)
        {
            Some((is, _, _, _)) => is.push(input),
            None => lines.push((vec![input], before, after, agents)),
        }
    }
    let effect: Vec<String> = lines
        .into_iter()
        .map(|(is, b, a, agents)| {
            let shown = crate::checks::named_list(&is, 4);
            format!("{shown}: {b} → {a} ({})", agents.join(", "))
        })
        .collect();
    let first = p
        .edits
        .iter()
        .map(|e| e.span.start)
        .min()
        .ok_or("no edit")?;
    let (line, column) = file.line_col(first);
    let inserted: String = p.edits.iter().map(|e| e.text.as_str()).collect();
    let position = |at: usize| {
        let (l, c) = file.line_col(at);
        (l, c)
    };
    Ok(Suggestion {
        source: p.source,
        title: p.title.clone(),
        file: file.name(),
        line,
        column,
        edits: p
            .edits
            .iter()
            .map(|e| {
                let (l0, c0) = position(e.span.start);
                let (l1, c1) = position(e.span.end);
                SuggestedEdit {
                    start: e.span.start,
                    end: e.span.end,
                    range: [l0, c0, l1, c1],
                    new_text: e.text.clone(),
                }
            })
            .collect(),
        text: inserted.trim().trim_start_matches(',').trim().to_string(),
        changes: inputs,
        effect,
    })
}
