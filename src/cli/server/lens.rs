//! CodeLens: above each rule written in a document, what it decides and for whom
//! ("decides for build, plan · overridden for explore by line 12: `edit` \"*\" deny",
//! "dead for every agent (later rules decide)" when more than two later rules decide for
//! different agents, "OpenCode never checks `write`"), read from the analysis the last
//! check ran (the rule's `decides` per agent, as the hover's lines are:
//! [`super::hover::decides`]); computed once per analysis and
//! document, at most [`MAX_LENSES`] per document. Each lens' command is
//! `permaudit.explain` with the arguments `[agent, permission, pattern, input]`: the
//! editor runs `permaudit explain --agent AGENT PERMISSION INPUT` (the input an example
//! the rule decides for that agent, else the example a later rule decides instead, else
//! the pattern).

use super::State;
use super::hover::{Decides, decides};
use crate::checks::{Ctx, Witness};
use crate::project::Project;
use crate::source::Loc;
use lsp_types as lt;

/// The most lenses one document gets (its first rules, in the order written).
pub(super) const MAX_LENSES: usize = 500;
/// The most agents a title names in one group before "and N more".
const NAMED: usize = 4;

/// The command id of a lens.
pub(super) const EXPLAIN_COMMAND: &str = "permaudit.explain";

impl State {
    pub(super) fn code_lens(&mut self, p: &lt::CodeLensParams) -> Vec<lt::CodeLens> {
        let Some(path) = super::uri_path(&p.text_document.uri) else {
            return Vec::new();
        };
        if let Some(lenses) = self.lenses.get(&path) {
            return lenses.clone();
        }
        let started = std::time::Instant::now();
        let lenses = self
            .project
            .as_ref()
            .map_or_else(Vec::new, |project| lenses(project, &self.engines, &path));
        if std::env::var_os("PERMAUDIT_SERVER_TIMES").is_some() {
            eprintln!(
                "permaudit server: codeLens: {} lenses in {:.1} ms",
                lenses.len(),
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        self.lenses.insert(path, lenses.clone());
        lenses
    }
}

/// The lenses of the rules written in the file at `path`.
fn lenses(
    project: &Project,
    engines: &crate::checks::Engines,
    path: &std::path::Path,
) -> Vec<lt::CodeLens> {
    let sources = &project.loaded.sources;
    let Some((source, _)) = sources.iter().find(|(_, f)| f.path() == Some(path)) else {
        return Vec::new();
    };
    // The rules written here, once each, in the order written.
    let mut locs: Vec<Loc> = project
        .agents
        .iter()
        .flat_map(|a| &a.rules)
        .filter_map(|r| r.loc.filter(|l| l.source == source))
        .collect();
    locs.sort_by_key(|l| (l.span.start, l.span.end));
    locs.dedup();
    locs.truncate(MAX_LENSES);
    let ctx = Ctx::reusing(project, engines);
    locs.into_iter()
        .filter_map(|loc| {
            let (title, arguments) = lens(project, &ctx, loc)?;
            Some(lt::CodeLens {
                range: super::range(sources, loc),
                command: Some(lt::Command {
                    title,
                    command: EXPLAIN_COMMAND.into(),
                    arguments: Some(arguments),
                }),
                data: None,
            })
        })
        .collect()
}

/// One group of agents in a title.
#[derive(Default)]
struct Groups {
    decides: Vec<String>,
    /// Agents for whom a later rule decides everything, with that rule's place (`None`
    /// when no example could show it).
    overridden: Vec<(String, Option<String>)>,
    undetermined: Vec<String>,
}

/// The title of the rule at `loc` and its command's arguments.
fn lens(project: &Project, ctx: &Ctx<'_>, loc: Loc) -> Option<(String, Vec<serde_json::Value>)> {
    // The agents whose rulesets hold the rule (OpenCode's internal agents only when they
    // are all that do: they deny what they do not need, so every rule is dead for them).
    let holding: Vec<(usize, usize)> = ctx
        .agents
        .iter()
        .enumerate()
        .filter_map(|(a, agent)| Some((a, agent.rules.iter().position(|r| r.loc == Some(loc))?)))
        .collect();
    let shown: Vec<(usize, usize)> = holding
        .iter()
        .copied()
        .filter(|&(a, _)| !ctx.agents[a].is_internal())
        .collect();
    let holding = if shown.is_empty() { holding } else { shown };
    let &(a0, i0) = holding.first()?;
    let rule = &ctx.agents[a0].rules[i0];
    let q = |s: &str| serde_json::Value::String(s.to_string());
    if project.never_asks(&rule.permission).is_some() {
        let title = match crate::model::meaning::checked_as(&rule.permission) {
            Some(asked) => format!(
                "OpenCode never checks `{}` (the tool asks `{asked}`)",
                rule.permission
            ),
            None => format!("OpenCode never checks `{}`", rule.permission),
        };
        let name = &ctx.agents[a0].name;
        return Some((
            title,
            vec![
                q(name),
                q(&rule.permission),
                q(&rule.pattern),
                q(&rule.pattern),
            ],
        ));
    }
    let place = |w: &Witness, agent: usize| -> Option<String> {
        let r = &ctx.agents[agent].rules[w.rule?];
        let what = crate::checks::describe(r);
        Some(match r.loc {
            Some(l) if l.source == loc.source => {
                format!("line {}: {what}", project.loaded.sources.position(l).line)
            }
            Some(l) => {
                // Another file: its path from the project root when under it.
                let p = project.loaded.sources.position(l);
                let root = project.loaded.paths().project_root();
                let name = std::path::Path::new(&p.name)
                    .strip_prefix(root)
                    .map_or(p.name.clone(), |r| r.display().to_string());
                format!("{name}:{}: {what}", p.line)
            }
            None => format!("OpenCode's built-in {what}"),
        })
    };
    let mut groups = Groups::default();
    // The command: the first agent it decides for, with an input it decides; else the
    // first agent, with the input a later rule decides instead.
    let mut first_decided: Option<(usize, Witness)> = None;
    let mut first_other: Option<(usize, Option<Witness>)> = None;
    for &(a, i) in &holding {
        let name = ctx.agents[a].name.clone();
        match decides(ctx, a, i) {
            Decides::Some(w) => {
                groups.decides.push(name);
                if first_decided.is_none()
                    && let Some(w) = w
                {
                    first_decided = Some((a, w));
                }
            }
            Decides::Nothing(w) => {
                groups
                    .overridden
                    .push((name, w.as_ref().and_then(|w| place(w, a))));
                if first_other.as_ref().is_none_or(|(_, w)| w.is_none()) && w.is_some() {
                    first_other = Some((a, w));
                }
            }
            Decides::Undetermined => groups.undetermined.push(name),
        }
    }
    let everyone = super::hover::not_internal(&ctx.agents);
    let who = |names: &[String]| -> String {
        if names.len() > 1 && everyone.iter().all(|e| names.iter().any(|n| n == e)) {
            return "every agent".into();
        }
        let mut s = names
            .iter()
            .take(NAMED)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > NAMED {
            s.push_str(&format!(" and {} more", names.len() - NAMED));
        }
        s
    };
    let mut parts = Vec::new();
    if !groups.decides.is_empty() {
        parts.push(format!("decides for {}", who(&groups.decides)));
    }
    if !groups.overridden.is_empty() {
        // The agents by the rule that decides instead: one or two such rules are named,
        // more (or one no example shows) are summed up.
        let mut by_rule: Vec<(&Option<String>, Vec<String>)> = Vec::new();
        for (name, by) in &groups.overridden {
            match by_rule.iter_mut().find(|(b, _)| *b == by) {
                Some((_, names)) => names.push(name.clone()),
                None => by_rule.push((by, vec![name.clone()])),
            }
        }
        if by_rule.len() <= 2 && by_rule.iter().all(|(b, _)| b.is_some()) {
            for (by, names) in &by_rule {
                let by = by.as_deref().unwrap_or_default();
                parts.push(format!("overridden for {} by {by}", who(names)));
            }
        } else {
            let names: Vec<String> = groups.overridden.iter().map(|(n, _)| n.clone()).collect();
            parts.push(format!("dead for {} (later rules decide)", who(&names)));
        }
    }
    if !groups.undetermined.is_empty() {
        parts.push(format!(
            "undetermined for {} (permaudit's limits)",
            who(&groups.undetermined)
        ));
    }
    let (agent, permission, input) = match (first_decided, first_other) {
        (Some((a, w)), _) | (None, Some((a, Some(w)))) => (a, w.permission, w.input),
        _ => (a0, rule.permission.clone(), rule.pattern.clone()),
    };
    Some((
        parts.join(" · "),
        vec![
            q(&ctx.agents[agent].name),
            q(&permission),
            q(&rule.pattern),
            q(&input),
        ],
    ))
}
