//! The shared pass' view of the project ([`SharedView`]: each agent less its own rules)
//! and [`consolidate`] (one finding per place).

use super::{Ctx, Finding, is_own, sample_mismatch};
use crate::agents::Agent;
use crate::model::Effect;
use crate::project::Project;
use crate::source::Loc;

/// Every agent's ruleset without the rules the agent wrote for itself: what the shared
/// files decide for it. Rules keep their order; `map[a][k]` is the index in the real agent
/// of rule `k` here.
pub struct SharedView {
    pub agents: Vec<Agent>,
    map: Vec<Vec<usize>>,
}

impl SharedView {
    /// The index in agent `a`'s view of its real rule `i` (`None` for its own rules).
    pub fn index_of(&self, a: usize, i: usize) -> Option<usize> {
        self.map.get(a)?.binary_search(&i).ok()
    }

    /// `None` when no agent has rules of its own (the view is the project itself).
    pub fn new(project: &Project) -> Option<SharedView> {
        if !project
            .agents
            .iter()
            .any(|a| a.rules.iter().any(|r| is_own(r.layer)))
        {
            return None;
        }
        let (agents, map) = project
            .agents
            .iter()
            .map(|a| {
                let keep: Vec<usize> = (0..a.rules.len())
                    .filter(|&k| !is_own(a.rules[k].layer))
                    .collect();
                let agent = Agent {
                    rules: keep.iter().map(|&k| a.rules[k].clone()).collect(),
                    ..a.clone()
                };
                (agent, keep)
            })
            .unzip();
        Some(SharedView { agents, map })
    }

    /// Findings of the shared pass as findings about the real agents: indices mapped back,
    /// and every witness decided again over the agent's full ruleset. A finding stays only
    /// for the agents where each witness is decided as claimed, by the same rule; one
    /// without witnesses stays for agents with no rule of their own for that permission.
    pub fn lift(&self, full: &Ctx<'_>, found: Vec<Finding>) -> Vec<Finding> {
        let agents = &full.project.agents;
        found
            .into_iter()
            .filter_map(|f| {
                let name = f.agents.first()?;
                let a = agents.iter().position(|x| &x.name == name)?;
                let (agent, map) = (&agents[a], self.map.get(a)?);
                let back = |k: usize| map.get(k).copied();
                let rule = match f.rule {
                    Some(k) => Some(back(k)?),
                    None => None,
                };
                let mut witnesses = Vec::with_capacity(f.witnesses.len());
                for w in &f.witnesses {
                    let claimed = match w.rule {
                        Some(k) => Some(back(k)?),
                        None => None,
                    };
                    let input = crate::glob::analysis::Input::new(&w.permission, &w.input);
                    let real = full.witness(agent, &input)?;
                    if real.action != w.action || real.rule != claimed {
                        return None;
                    }
                    witnesses.push(real);
                }
                if f.witnesses.is_empty()
                    && let Some(r) = rule.and_then(|k| agent.rules.get(k))
                {
                    let platform = full.project.platform;
                    let wild = crate::glob::Wildcard::compile(&r.permission);
                    let own_about_it = agent.rules.iter().any(|o| {
                        is_own(o.layer)
                            && crate::glob::Wildcard::compile(&o.permission)
                                .is_match(&r.permission, platform)
                            || is_own(o.layer) && wild.is_match(&o.permission, platform)
                    });
                    if own_about_it {
                        return None;
                    }
                }
                Some(Finding {
                    rule,
                    witnesses,
                    ..f
                })
            })
            .collect()
    }
}

/// One finding per place: per-agent findings of the same kind at the same `file:line:col`
/// become one finding naming every agent (in `opencode agent list` order), when their
/// witnesses show the same inputs decided the same way by the same rule. The most severe
/// copy speaks for the place. Findings without a place, and sample mismatches (one place,
/// a different outcome per agent), are merged only when their messages agree too.
pub fn consolidate(project: &Project, findings: Vec<Finding>) -> Vec<Finding> {
    use std::collections::HashMap;
    let order: HashMap<&str, usize> = project
        .agents
        .iter()
        .enumerate()
        .map(|(k, a)| (a.name.as_str(), k))
        .collect();
    // What each witness shows, with its deciding rule as a place: copies merge only when
    // they show the same thing, so every witness holds for every agent listed.
    type Shown = Vec<(String, String, Effect, Option<Loc>)>;
    let shown = |f: &Finding| -> Shown {
        let agent = f.agents.first().and_then(|n| project.agent(n));
        f.witnesses
            .iter()
            .map(|w| {
                let decider = agent
                    .zip(w.rule)
                    .and_then(|(a, k)| a.rules.get(k))
                    .map(|r| r.loc.ok_or(r.builtin.clone()));
                (
                    w.permission.clone(),
                    w.input.clone(),
                    w.action,
                    decider.and_then(Result::ok),
                )
            })
            .collect()
    };
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    type Key = (&'static str, Option<Loc>, Option<String>, Shown);
    let mut index: HashMap<Key, usize> = HashMap::new();
    for f in findings {
        let by_message = f.loc.is_none() || f.id == sample_mismatch::CHECK.id;
        let key = (
            f.id,
            f.loc,
            by_message.then(|| f.message.clone()),
            shown(&f),
        );
        match index.get(&key) {
            Some(&k) => {
                let kept = &mut out[k];
                let mut agents = std::mem::take(&mut kept.agents);
                if f.level > kept.level {
                    // The more severe copy speaks: its agent goes first.
                    let mut front = f.agents.clone();
                    front.append(&mut agents);
                    agents = front;
                    *kept = f;
                } else {
                    agents.extend(f.agents.iter().cloned());
                }
                kept.agents = agents;
            }
            None => {
                index.insert(key, out.len());
                out.push(f);
            }
        }
    }
    // The copy that speaks keeps its agent first: `rule` and the witnesses index its rules.
    for f in &mut out {
        if let Some((first, rest)) = f.agents.split_first_mut() {
            rest.sort_by_key(|a| order.get(a.as_str()).copied().unwrap_or(usize::MAX));
            let first = first.clone();
            let mut seen = std::collections::HashSet::new();
            f.agents.retain(|a| seen.insert(a.clone()));
            debug_assert_eq!(f.agents.first(), Some(&first));
        }
    }
    out
}

/// The agents after the first that `f` names whose witness `w` is decided by another rule
/// than the first agent's, each with its deciding rule's index in its own rules (`None`:
/// OpenCode's default ask). [`consolidate`] merges copies at one place by what their
/// witnesses show, the deciding rule by its place; built-in rules have none, so one finding
/// may name `build`, whose bash `defaults` (`*` allow) decides, and `explore`, whose own
/// built-in `bash` `*` allow does: the finding then names each agent's rule, which is what
/// `explain` answers for that agent. The witness's own permission is decided for its
/// input: the call's other asks (an outside directory) never end it in an agent the
/// finding names (`unasked.rs` removes those).
pub fn other_deciders<'f>(
    project: &Project,
    f: &'f Finding,
    w: &super::Witness,
) -> Vec<(&'f str, Option<usize>)> {
    let Some((first, rest)) = f.agents.split_first() else {
        return Vec::new();
    };
    let Some(agent) = project.agent(first) else {
        return Vec::new();
    };
    let claimed = w.rule.and_then(|k| agent.rules.get(k));
    // A rule written in a file is the same rule in every agent that holds it, and merged
    // copies share the place of theirs.
    if claimed.is_some_and(|r| r.loc.is_some()) {
        return Vec::new();
    }
    // A bash witness is decided as the bash tool asks it: split into its commands (a chain
    // pattern's witness is a chain), the call's deciding part's rule.
    let places = crate::shell::Places::of(project.loaded.paths());
    let no = |_: &str| false;
    let env = places.env(&no);
    let request = (w.permission == "bash").then(|| crate::shell::split::request(&w.input, &env));
    rest.iter()
        .filter_map(|name| {
            let other = project.agent(name)?;
            let rule = match &request {
                Some(req) => crate::shell::decide::decide(req, |perm, pattern| {
                    crate::agents::evaluate(&other.rules, perm, pattern, project.platform)
                })
                .decision()
                .and_then(|d| d.rule),
                None => {
                    crate::agents::evaluate(&other.rules, &w.permission, &w.input, project.platform)
                        .rule
                }
            };
            let theirs = rule.and_then(|k| other.rules.get(k));
            (theirs != claimed).then_some((name.as_str(), rule))
        })
        .collect()
}
