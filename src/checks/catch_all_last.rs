//! One mistake, one finding: a catch-all written *after* the specific rules of its block.
//!
//! Not a check of its own: a step after `consolidate` that regroups the order findings
//! (`shadowed-deny`, `shadowed-ask`, `dead-rule`, and the `unusable-allow` of a `* deny`
//! written last) that one catch-all causes into one finding at the catch-all, naming the
//! rules it overrides. The fix is to move the catch-all first; reporting each rule it
//! kills (175 findings in one real config) buries that.

use super::{
    Finding, Level, dead_rule, describe, named_list, shadowed_ask, shadowed_deny, unusable_allow,
};
use crate::agents::evaluate;
use crate::model::Effect;
use crate::project::Project;
use crate::source::Loc;

/// How many rules a catch-all written after them must override before their findings
/// become one finding at the catch-all.
const CATCH_ALL_GROUP: usize = 3;

/// One mistake, one finding: a catch-all (`"*": "ask"`) written *after* the specific
/// rules of its block overrides every one of them, and each would be its own `dead-rule`
/// or `shadowed-*` finding (175 in one real config). When a user catch-all is what decides
/// the witnesses of at least [`CATCH_ALL_GROUP`] such findings of its own file, they
/// become one finding at the catch-all, naming what it overrides: the fix is to move it.
/// (Its `rule` stays a rule that decides nothing — the first it overrides — with that
/// rule's example; only its place is the catch-all's.) A `* deny` written last also hides
/// its tool: the `unusable-allow` findings of the allows before it join the group.
pub(super) fn one_per_catch_all(project: &Project, out: Vec<Finding>) -> Vec<Finding> {
    use std::collections::HashMap;
    let order_kinds = [
        shadowed_deny::CHECK.id,
        shadowed_ask::CHECK.id,
        dead_rule::CHECK.id,
    ];
    // The catch-all deciding a finding's witness, when the finding is about order.
    let catch_all = |f: &Finding| -> Option<(Loc, usize)> {
        if !order_kinds.contains(&f.id) || f.level < Level::Warning {
            return None;
        }
        let agent = project.agent(f.agents.first()?)?;
        let k = f.witnesses.first()?.rule?;
        let r = agent.rules.get(k)?;
        let at = r.loc?;
        (r.pattern == "*" && f.loc.is_some_and(|l| l.source == at.source)).then_some((at, k))
    };
    let mut groups: HashMap<Loc, Vec<usize>> = HashMap::new();
    for (n, f) in out.iter().enumerate() {
        if let Some((at, _)) = catch_all(f) {
            groups.entry(at).or_default().push(n);
        }
    }
    groups.retain(|_, members| members.len() >= CATCH_ALL_GROUP);
    if groups.is_empty() {
        return out;
    }
    let mut calls = super::unasked::Calls::new(project);
    let mut splitter = crate::shell::Splitter::new();
    // The same catch-all, when it is a `* deny` written last, also hides its tool, so the
    // allows before it are `unusable-allow` too: the same mistake, folded into the group
    // (named among the rules it overrides) rather than reported again at each allow.
    let absorbed: Vec<(usize, Loc)> = out
        .iter()
        .enumerate()
        .filter(|(_, f)| f.id == unusable_allow::CHECK.id)
        .filter_map(|(n, f)| {
            let (hider, _) = f.related.first()?;
            (groups.contains_key(hider) && f.loc.is_some_and(|l| l.source == hider.source))
                .then_some((n, *hider))
        })
        .collect();
    for (n, hider) in absorbed {
        if let Some(members) = groups.get_mut(&hider) {
            members.push(n);
        }
    }
    let mut grouped: Vec<Finding> = Vec::new();
    let mut gone = vec![false; out.len()];
    let mut keys: Vec<&Loc> = groups.keys().collect();
    keys.sort_by_key(|l| (l.source, l.span.start));
    for at in keys {
        let members = &groups[at];
        // The most severe kind among them names the finding; its first member lends it the
        // rule it is about (the first overridden rule: `rule` is still a rule that decides
        // nothing) and the example, which that rule matches and the catch-all decides.
        let id = order_kinds
            .iter()
            .copied()
            .find(|id| members.iter().any(|&n| out[n].id == *id))
            .unwrap_or(out[members[0]].id);
        let first = members
            .iter()
            .map(|&n| &out[n])
            .find(|f| f.id == id)
            .unwrap_or(&out[members[0]]);
        let Some((_, k)) = catch_all(first) else {
            continue;
        };
        let Some(agent) = first.agents.first().and_then(|a| project.agent(a)) else {
            continue;
        };
        let r = &agent.rules[k];
        let place = |l: Loc| project.loaded.sources.position(l).to_string();
        let level = members
            .iter()
            .map(|&n| out[n].level)
            .max()
            .unwrap_or(first.level);
        // Every agent of the group for which the example is decided as shown, by this
        // catch-all (the lead's agents are, by construction).
        // (A bash example whose `external_directory` ask that agent denies first is never
        // asked as `bash` there.)
        let mut shows = |name: &String| {
            let (Some(a), Some(w)) = (project.agent(name), first.witnesses.first()) else {
                return false;
            };
            let d = evaluate(&a.rules, &w.permission, &w.input, project.platform);
            d.effect == w.action
                && d.rule.and_then(|k| a.rules.get(k)?.loc) == Some(*at)
                && !calls.unasked(&mut splitter, a, w)
        };
        let mut agents: Vec<String> = first.agents.clone();
        for &n in members {
            for a in &out[n].agents {
                if !agents.contains(a) && shows(a) {
                    agents.push(a.clone());
                }
            }
        }
        // The proving agent first (rule and witness indices are its), the others in list
        // order.
        let rank = |name: &String| {
            (
                name != &agent.name,
                project.agents.iter().position(|a| &a.name == name),
            )
        };
        agents.sort_by_key(rank);
        // What each overridden rule was: the denies (lost protection) are named first.
        let mut killed: Vec<(Loc, String, bool)> = Vec::new();
        for &n in members {
            let f = &out[n];
            let (Some(l), Some(a)) = (f.loc, f.agents.first().and_then(|a| project.agent(a)))
            else {
                continue;
            };
            let Some(rule) = f.rule.and_then(|i| a.rules.get(i)) else {
                continue;
            };
            if !killed.iter().any(|(x, _, _)| *x == l) {
                let deny = rule.action.effective() == Effect::Deny;
                killed.push((l, describe(rule), deny));
            }
        }
        killed.sort_by_key(|(l, _, deny)| (!deny, l.source, l.span.start));
        let named: Vec<String> = killed
            .iter()
            .map(|(l, d, _)| format!("{d} at {}", place(*l)))
            .collect();
        let w = first.witnesses.first();
        let message = format!(
            "this catch-all ({}) is written after {} rules it overrides, so none of them ever takes effect: {}{}",
            describe(r),
            killed.len(),
            named_list(&named, 5),
            w.map(|w| format!(
                "; e.g. {} {} is decided by the catch-all → {}",
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default(),
                w.action
            ))
            .unwrap_or_default()
        );
        let related = killed
            .iter()
            .map(|(l, d, _)| (*l, format!("overridden by the catch-all: {d}")))
            .collect();
        for &n in members {
            gone[n] = true;
        }
        grouped.push(Finding {
            id,
            level,
            agents,
            rule: first.rule,
            loc: Some(*at),
            message,
            related,
            witnesses: first.witnesses.clone(),
            help: Some(help_for(
                project,
                agent,
                k,
                members.iter().map(|&n| &out[n]),
            )),
        });
    }
    out.into_iter()
        .zip(gone)
        .filter(|(_, g)| !g)
        .map(|(f, _)| f)
        .chain(grouped)
        .collect()
}

/// Rulesets past this size get the general help (the exact one replays every overridden
/// rule's example on the ruleset without the catch-all).
const EXACT_HELP_RULES: usize = 5_000;

/// The help of a catch-all written last (rule `k` of `agent`), built for its block: the
/// catch-all goes first; a looser rule of the same file written after a deny or ask it
/// overrides (`"git *": "allow"` after `"git push *": "deny"`) would still override it
/// once the catch-all moves, so it is named, found by deciding each overridden rule's
/// example without the catch-all; and an exact bash command (`"git push"`) is said to
/// need ` *` to deny the command with its operands.
fn help_for<'f>(
    project: &Project,
    agent: &crate::agents::Agent,
    k: usize,
    members: impl Iterator<Item = &'f Finding>,
) -> String {
    let mut help = String::from(
        "write the catch-all first in its block (the last matching rule wins, so the specific rules must come after it)",
    );
    let Some(at) = agent.rules.get(k).and_then(|r| r.loc) else {
        return help;
    };
    let members: Vec<&Finding> = members.collect();
    // The places of these keys set by an earlier file: moving here changes nothing.
    if let Some(other) = members
        .iter()
        .filter_map(|f| f.rule)
        .find_map(|ri| super::overlap::order_from_elsewhere(project, agent, ri, k))
    {
        return format!(
            "moving the catch-all in {} changes nothing: the order of these keys comes from {other}, which writes the same keys for this agent first (a merged key keeps the place the first file gave it); write the catch-all first there",
            project.loaded.sources.get(at.source).name(),
        );
    }
    let mut stays: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut bare: Vec<usize> = Vec::new();
    let exact = agent.rules.len() <= EXACT_HELP_RULES;
    let rest: Vec<crate::model::Rule> = if exact {
        agent
            .rules
            .iter()
            .enumerate()
            .filter(|(n, _)| *n != k)
            .map(|(_, r)| r.clone())
            .collect()
    } else {
        Vec::new()
    };
    // Every ask or deny the catch-all overrides, not only those with a finding: an ask
    // under an ask catch-all (`"git commit *": "ask"` under `"*": "ask"`) is no finding
    // today, but a looser rule written after it (`"git *": "allow"`) decides it once the
    // catch-all moves. Those are tried with an input their pattern matches.
    let catch = &agent.rules[k];
    let mut tried: Vec<(usize, String, String)> = Vec::new();
    for f in &members {
        if f.agents.first() != Some(&agent.name) {
            continue;
        }
        let Some(ri) = f.rule else { continue };
        let Some(rule) = agent.rules.get(ri) else {
            continue;
        };
        if rule.action.effective() == Effect::Allow {
            continue;
        }
        if !super::overlap::bare_note(&agent.rules, rule).is_empty() && !bare.contains(&ri) {
            bare.push(ri);
        }
        if let Some(w) = f.witnesses.first()
            && !tried.iter().any(|(x, _, _)| *x == ri)
        {
            tried.push((ri, w.permission.clone(), w.input.clone()));
        }
    }
    for (ri, rule) in agent.rules.iter().enumerate().take(k) {
        if rule.action.effective() == Effect::Allow
            || rule.permission != catch.permission
            || rule.loc.is_none_or(|l| l.source != at.source)
            || tried.iter().any(|(x, _, _)| *x == ri)
        {
            continue;
        }
        let glob = crate::glob::wildcard::Wildcard::compile(&rule.pattern);
        let input = super::read_only_agent_writes::samples(&rule.permission, &rule.pattern)
            .into_iter()
            .find(|s| glob.is_match(s, project.platform));
        if let Some(input) = input {
            tried.push((ri, rule.permission.clone(), input));
        }
    }
    for (ri, permission, input) in tried.iter().filter(|_| exact) {
        let ri = *ri;
        let wanted = agent.rules[ri].action.effective();
        let d = evaluate(&rest, permission, input, project.platform);
        // Back to the agent's indices (the catch-all left out).
        let Some(by) = d.rule.map(|x| if x >= k { x + 1 } else { x }) else {
            continue;
        };
        let Some(later) = agent.rules.get(by) else {
            continue;
        };
        if by != ri
            && by > ri
            && later.action.effective() < wanted
            && later.loc.is_some_and(|l| l.source == at.source)
        {
            match stays.iter_mut().find(|(x, _)| *x == by) {
                Some((_, over)) if !over.contains(&ri) => over.push(ri),
                Some(_) => {}
                None => stays.push((by, vec![ri])),
            }
        }
    }
    let name = |i: &usize| {
        let r = &agent.rules[*i];
        let at = r
            .loc
            .map(|l| format!(" at {}", project.loaded.sources.position(l)))
            .unwrap_or_default();
        format!("{}{at}", describe(r))
    };
    for (by, over) in &stays {
        let over: Vec<String> = over.iter().map(name).collect();
        help.push_str(&format!(
            "; then {} still overrides {}, written before it: write it before {} too",
            name(by),
            named_list(&over, 3),
            if over.len() == 1 { "that rule" } else { "them" },
        ));
    }
    // Allows the catch-all overrides today come alive once it moves first: one that lets a
    // command change something (`"git *"`: `git clean -fdx`; `"rg*"`: `rg --pre`) is
    // named, with what to allow instead (blind fresh-12: Apicurio's CI debugger,
    // felixAnhalt's architect).
    if catch.action.effective() != Effect::Allow {
        let revived: Vec<String> = agent
            .rules
            .iter()
            .take(k)
            .filter(|r| r.loc.is_some_and(|l| l.source == at.source))
            .filter_map(|r| {
                let (mode, instead) = super::overlap::destructive_mode(project.platform, r)?;
                Some(format!(
                    "{} also allows `{mode}` once it takes effect: narrow it to the commands the agent needs{instead}",
                    describe(r)
                ))
            })
            .take(2)
            .collect();
        if !revived.is_empty() {
            help.push_str(&format!("; {}", revived.join("; ")));
        }
    }
    if !bare.is_empty() {
        let patterns: Vec<String> = bare
            .iter()
            .map(|i| {
                serde_json::to_string(&format!("{} *", agent.rules[*i].pattern)).unwrap_or_default()
            })
            .collect();
        help.push_str(&format!(
            "; and write the exact commands as {}: an exact command matches the bare command alone, with ` *` also the command with its operands",
            named_list(&patterns, 5),
        ));
    }
    help
}
