//! `agent-overrides-shared` (info; warning for an agent's catch-all that undoes more than search rules)
//!
//! ## What it finds
//! A rule an agent wrote for itself (agent config, markdown agent, mode) that undoes shared
//! denies or asks for that agent: the global or project rules still decide in the shared
//! view, but this agent's own rule covers them whole and lets their inputs through (allow,
//! or ask where they denied). One note per overriding rule, naming the shared rules it
//! undoes. An own rule that covers only part of a shared rule (an exception such as
//! `git show *` allow under a shared `*` ask) is the idiom and is not reported.
//!
//! ## Why it matters
//! Per-agent blocks exist to override the shared rules, so an own rule as specific as the
//! shared ones it undoes is taken as deliberate: a note. An own **catch-all** — `bash:
//! {"*": "allow"}` or `edit: allow` in an agent's block, or the legacy `tools: {edit:
//! true}`, which OpenCode translates to `edit * allow` after every shared rule — that wipes
//! a curated shared list (`.env` read denies, `git push --force *` asks) loses protection
//! the author wrote for every agent: a warning, whichever syntax wrote it. Unless all it
//! undoes are `glob`/`grep` rules: those tools are asked with the search pattern (a glob, a
//! regex), not a file's path, so no file's protection is lost (that is `read`'s): a note.
//!
//! A note, too, when the agent's own block writes its own list after the catch-all, copying
//! shared denies and asks of that permission (at least twice as many as it leaves out): the
//! ones it leaves out (`git commit` for the agent that commits) it leaves out on purpose. And when
//! all it undoes are `skill` rules: which skills an agent may load is routing, not
//! protection.
//!
//! Not reported: shared rules that never match what their permission is checked
//! against (an absolute or `~/…` pattern under `edit`: see `never-matches`), which an
//! agent cannot undo; and the opt-in idiom, a tool switched off for everyone (`tools: {x: false}`,
//! `"x": "deny"`) and switched on for the one agent that exists to use it; every shared
//! rule it undoes is a whole-tool switch off (pattern `*`, deny), so nothing curated is
//! lost; nor the same for one program, a command kept from everyone (`"git *": "deny"`)
//! and allowed to the agent named for it (`git`, `git-manager`). Nor an agent whose description says it has no restrictions ("full permissions,
//! no restrictions", "unrestricted", "yolo"): it undoes the shared rules by design. A
//! shared whole-tool **ask** (`"bash": "ask"`) that an agent's legacy `tools: {bash:
//! true}` (an agent file's "this tool is on" line) lifts to allow-all is no
//! opt-in: the ask was written against exactly that, and it is a warning; an explicit
//! `permission: {bash: allow}` in the agent is a deliberate override, not reported.
//!
//! ## Example
//! Global `{"permission": {"bash": {"rm -rf *": "deny"}}}` and an agent file with
//! `permission: {bash: {"*": allow}}`: for that agent, `rm -rf build` is allowed.
//!
//! ## How to fix
//! If the shared denies should hold for the agent too, repeat them after its own catch-all
//! (specific rules last).

use super::overlap::openness;
use super::{
    Check, Ctx, Finding, Level, Reach, SharedView, Witness, describe, is_own, is_shared, named_list,
};
use crate::glob::analysis::Input;

pub const CHECK: Check = Check {
    id: "agent-overrides-shared",
    level: Level::Info,
    summary: "an agent's own rule that lets through inputs the shared rules deny or ask",
    docs: include_str!("agent_overrides_shared.rs"),
};

/// How many overridden rules a note names.
const NAMED: usize = 5;

pub fn run(
    ctx: &Ctx<'_>,
    reach: &[Vec<Option<Reach>>],
    view: &SharedView,
    shared_reach: &[Vec<Option<Reach>>],
    out: &mut Vec<Finding>,
) {
    for (ai, agent) in ctx.agents.iter().enumerate() {
        // Per overriding own rule: the shared rules it undoes, and one witness.
        let mut by_decider: Vec<(usize, Vec<usize>, Witness)> = Vec::new();
        for (i, r) in agent.rules.iter().enumerate() {
            let e = r.action.effective();
            if r.loc.is_none() || !is_shared(r.layer) || e == crate::model::Effect::Allow {
                continue;
            }
            let Some(Some(Reach::Dead(Some(ov)))) = reach.get(ai).and_then(|row| row.get(i)) else {
                continue;
            };
            if !agent.rules.get(ov.decider).is_some_and(|d| is_own(d.layer)) {
                continue;
            }
            // Only a rule that takes it whole: an own exception carved into a shared
            // catch-all (`git show *` allow under a shared `*` ask) is the idiom.
            if !ctx.analyses[ai].proved_within(ov.decider, i) {
                continue;
            }
            // Still deciding without the agent's own rules: it is the agent that undoes it.
            let alive = view
                .index_of(ai, i)
                .and_then(|k| shared_reach.get(ai)?.get(k))
                .is_some_and(|r| matches!(r, Some(Reach::Decides(_))));
            if !alive {
                continue;
            }
            let Some(w) = ctx.witness(agent, &ov.input) else {
                continue;
            };
            if openness(w.action) <= openness(e) {
                continue;
            }
            match by_decider.iter_mut().find(|(d, _, _)| *d == ov.decider) {
                Some((_, undone, _)) => undone.push(i),
                None => by_decider.push((ov.decider, vec![i], w)),
            }
        }
        for (d, mut undone, w) in by_decider {
            // A shared rule that never matches what its permission is checked against
            // (`edit` "~/.config/opencode/**": edit asks worktree-relative paths) protects
            // nothing, so undoing it loses nothing (`never-matches` reports it).
            undone.retain(|&k| {
                let s = &agent.rules[k];
                super::never_matches::diagnose(&s.permission, &s.pattern, ctx).is_none()
            });
            let Some(&first) = undone.first() else {
                continue;
            };
            // The witness of a rule still listed: the one gathered may be of a rule left out.
            let w = match reach.get(ai).and_then(|row| row.get(first)) {
                Some(Some(Reach::Dead(Some(ov)))) if ov.decider == d => {
                    ctx.witness(agent, &ov.input).unwrap_or(w)
                }
                _ => w,
            };
            // The opt-in idiom: a tool switched off for everyone (`tools: {x: false}`,
            // `"x": "deny"`) and switched on for the agent that exists to use it. Nothing
            // curated is lost: the shared rules it undoes are whole-tool switches *off*. A
            // shared whole-tool ask (`"bash": "ask"`) lifted to allow-all by an agent's
            // legacy `tools: {bash: true}` (an agent file's "this tool is on" boilerplate)
            // is not: it is the escalation the ask was written against, and a warning
            // (issue 45). An agent's explicit `"bash": "allow"` over it is a deliberate
            // override, written as such (per-agent blocks are for that): not reported.
            let legacy = agent.rules[d].layer == crate::model::Layer::AgentLegacyTools;
            // An agent whose description says it has no restrictions (`"no restrictions,
            // no questions asked"`) undoes the shared rules by design (judged FP, blind,
            // in fresh-3: adanft's dangerous-gentleman).
            if !legacy && unrestricted_by_design(ctx, agent) {
                continue;
            }
            if undone.iter().all(|&k| {
                let s = &agent.rules[k];
                s.pattern == "*" && (!legacy || s.action.effective() == crate::model::Effect::Deny)
            }) {
                continue;
            }
            // The same idiom for one program: a command kept from everyone (`"git *":
            // "deny"`) and allowed to the agent named for it (`git`, `git-manager`), which
            // exists to run it (judged debatable, blind fresh-7 A: julianszw's git agent,
            // whose help to repeat the deny would have left it no git at all).
            if undone.iter().all(|&k| {
                let s = &agent.rules[k];
                s.permission == "bash" && named_for(&agent.name, &s.pattern)
            }) {
                continue;
            }
            let rule = &agent.rules[d];
            let w = ctx
                .recognisable(
                    agent,
                    &[undone[0], d],
                    &Input::new(&w.permission, &w.input),
                    |x| {
                        x.action == w.action
                            && x.rule == w.rule
                            && ctx.analyses[ai]
                                .matches(undone[0], &Input::new(&x.permission, &x.input))
                    },
                )
                .unwrap_or(w);
            let named: Vec<String> = undone
                .iter()
                .map(|&k| {
                    format!(
                        "{} ({})",
                        describe(&agent.rules[k]),
                        ctx.place(&agent.rules[k])
                    )
                })
                .collect();
            // A catch-all of the agent's own (`edit: allow`, `tools: {edit: true}`, which
            // OpenCode translates to `edit * allow` after every shared rule) that wipes a
            // curated shared list (`.env`, `git push --force *`) loses protection the
            // author wrote for every agent: a warning, whichever syntax wrote it. An own
            // rule as specific as what it undoes is a deliberate override: a note.
            // Shared `glob`/`grep` rules weigh search patterns (a glob, a regex), not
            // files: undoing only those loses no file's protection (that is `read`'s, and
            // undoing it is reported there): a note.
            // The same for `skill` rules: a skill is instructions the agent loads, not an
            // action on a file or the machine; which skills an agent may load is routing
            // (judged FP, blind fresh-4 B: debackerl's coders told to load the `coder-*`
            // skills a shared rule keeps from the other agents).
            let searches_only = undone.iter().all(|&k| {
                let p = agent.rules[k].permission.as_str();
                super::never_matches::SEARCH_PATTERN_TOOLS.contains(&p) || p == "skill"
            });
            // An agent whose own block writes its own list after this rule, copying shared
            // rules of the permission, has curated the list for itself: what it leaves out
            // it leaves out on purpose (judged harmful to repeat, blind fresh-4 B:
            // igshehata's implementing agent copies 18 shared denies and leaves out `git
            // commit`, `git add` and `git checkout`, which it is told to use). A note.
            // Written again: at least twice as many as it leaves out (an agent that copies
            // `rm -rf *` alone and drops `git push --force*` has not curated anything: judged
            // TP in tests/real, dfmoncada).
            let recurated = copies(ctx, agent, d) >= 2 * undone.len();
            // Severity rule (docs/checks.md), clause 3 for the note: an own rule as
            // specific as what it undoes is the author's deliberate per-agent override.
            let level = if rule.pattern == "*" && !searches_only && !recurated {
                Level::Warning
            } else {
                CHECK.level
            };
            let message = format!(
                "for agent `{}` this rule undoes {} shared {}: {}; e.g. {} {} → {}",
                agent.name,
                undone.len(),
                if undone.len() == 1 { "rule" } else { "rules" },
                named_list(&named, NAMED),
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default(),
                w.action
            );
            let help = help(ctx, agent, d);
            out.push(
                Finding::at_rule(&CHECK, agent, d, message)
                    .with_level(level)
                    .with_witnesses(vec![w])
                    .with_help(help),
            );
        }
    }
}

/// The shared rules to repeat after the agent's own rule `d` so that they hold for it
/// too, in their order: those of `d`'s permission from the first deny or ask on, the
/// exceptions written after it included (`*.env.example` allow after `*.env*` deny), and
/// never a shared catch-all (`*`), which the agent's own rule overrides on purpose, nor a
/// rule that never matches what its permission is checked against.
pub fn to_repeat(ctx: &Ctx<'_>, agent: &crate::agents::Agent, d: usize) -> Vec<usize> {
    let Some(own) = agent.rules.get(d) else {
        return Vec::new();
    };
    // A shared rule the agent decides again itself, after this rule (`"git push *":
    // "allow"` in its own block over a shared `"git push *": "ask"`), is overridden on
    // purpose: repeating it would undo the agent's own choice (judged harmful, blind,
    // in fresh-3: every push made to ask again).
    let ai = ctx.agent_index(agent);
    let redecided = |k: usize| {
        ai.is_some_and(|ai| {
            agent.rules.iter().enumerate().skip(d + 1).any(|(j, o)| {
                o.loc.is_some() && is_own(o.layer) && ctx.analyses[ai].proved_within(j, k)
            })
        })
    };
    let mut out = Vec::new();
    for (k, r) in agent.rules.iter().enumerate().take(d) {
        if r.loc.is_none()
            || !is_shared(r.layer)
            || redecided(k)
            || !ai.is_some_and(|ai| ctx.analyses[ai].proved_within(d, k))
            || matches!(r.layer, crate::model::Layer::LegacyTools)
            || !covers(&own.permission, &r.permission, ctx.project.platform)
            || r.pattern.chars().all(|c| c == '*')
            || super::never_matches::diagnose(&r.permission, &r.pattern, ctx).is_some()
        {
            continue;
        }
        // An allow counts only as an exception to a deny or ask kept before it (its text
        // inside theirs: `*.env.example` inside `*.env*`); the agent's own rule already
        // decides the others.
        let keep = if r.action.effective() == crate::model::Effect::Allow {
            out.iter().any(|&j: &usize| {
                let earlier: &crate::model::Rule = &agent.rules[j];
                earlier.action.effective() != crate::model::Effect::Allow
                    && earlier.permission == r.permission
                    && overlaps(&earlier.pattern, &r.pattern, ctx.project.platform)
            })
        } else {
            true
        };
        if keep {
            out.push(k);
        }
    }
    out
}

/// How many of the agent's own denies and asks after `d` (its overriding rule) repeat a
/// shared rule `d` covers, with the same permission, pattern and action: the agent writing
/// its own list of what to refuse (copied allows say nothing about the denies left out).
fn copies(ctx: &Ctx<'_>, agent: &crate::agents::Agent, d: usize) -> usize {
    let Some(own) = agent.rules.get(d) else {
        return 0;
    };
    let platform = ctx.project.platform;
    let shared: Vec<&crate::model::Rule> = agent.rules[..d]
        .iter()
        .filter(|r| {
            r.loc.is_some()
                && is_shared(r.layer)
                && covers(&own.permission, &r.permission, platform)
        })
        .collect();
    agent.rules[d + 1..]
        .iter()
        .filter(|o| {
            o.loc.is_some()
                && is_own(o.layer)
                && o.action.effective() != crate::model::Effect::Allow
        })
        .filter(|o| {
            shared.iter().any(|s| {
                s.permission == o.permission
                    && s.pattern == o.pattern
                    && s.action.effective() == o.action.effective()
            })
        })
        .count()
}

/// Does the agent's description say it runs without the usual limits?
pub(super) fn unrestricted_by_design(ctx: &Ctx<'_>, agent: &crate::agents::Agent) -> bool {
    super::described(
        ctx,
        agent,
        &[
            "no restrictions",
            "without restrictions",
            "unrestricted",
            "no questions asked",
            "full permissions",
            "yolo",
        ],
    )
}

/// Does an agent's own rule for `own` (a permission name, or a glob such as `*` that
/// overrides several at once) cover the shared rules of `permission`?
fn covers(own: &str, permission: &str, platform: crate::glob::Platform) -> bool {
    own == permission
        || (own.contains(['*', '?'])
            && crate::glob::Wildcard::compile(own).is_match(permission, platform))
}

/// Is the agent named for the program a bash pattern names (`git` for `git *`, also
/// `git-manager`, `git_ops`)?
fn named_for(agent: &str, pattern: &str) -> bool {
    let program = super::deny_bypass::literal_prefix(pattern)
        .split_whitespace()
        .next()
        .unwrap_or("");
    !program.is_empty()
        && agent
            .to_lowercase()
            .split(['-', '_', ' ', '.'])
            .any(|w| w == program.to_lowercase())
}

/// Do two patterns of one permission share an input (`documents/obsidian*` and `*.env`
/// share `documents/obsidian/a.env`)? Decided by the automata; an undecided pair counts as
/// sharing one (keeping an exception is never wrong).
fn overlaps(a: &str, b: &str, platform: crate::glob::Platform) -> bool {
    use crate::glob::analysis::{Analysis, RuleShape};
    let shapes = [RuleShape::new("p", a), RuleShape::new("p", b)];
    !matches!(
        Analysis::new(&shapes, platform).intersection(0, 1),
        crate::glob::automaton::Outcome::Empty
    )
}

/// The help, built for this config: the shared rules to repeat, named, in order; for a
/// legacy `tools: {x: true}`, that removing it lets the shared rules apply as written.
fn help(ctx: &Ctx<'_>, agent: &crate::agents::Agent, d: usize) -> String {
    let own = &agent.rules[d];
    let repeat = to_repeat(ctx, agent, d);
    let listed: Vec<String> = repeat
        .iter()
        .map(|&k| {
            let r = &agent.rules[k];
            format!(
                "{}: {}",
                serde_json::to_string(&r.pattern).unwrap_or_default(),
                serde_json::to_string(&r.action.to_string()).unwrap_or_default()
            )
        })
        .collect();
    let catch_all = own.pattern.chars().all(|c| c == '*');
    let not_catch_all = if catch_all {
        " (not the shared catch-all, which this rule overrides on purpose)"
    } else {
        ""
    };
    if matches!(own.layer, crate::model::Layer::AgentLegacyTools) {
        // Every entry of the map that makes this rule: `write`, `edit` and `patch` all
        // become `edit` (blind fresh-6 B: georgekuzora, where removing `edit: true` alone
        // left `write: true` and `patch: true` allowing every edit).
        let entries: Vec<String> = ctx
            .project
            .loaded
            .audit
            .tools
            .iter()
            .filter(|t| {
                t.enabled
                    && t.agent.as_deref() == Some(agent.name.as_str())
                    && own.loc.is_some_and(|l| l.source == t.loc.source)
                    && crate::model::config::tool_permission_name(&t.tool) == own.permission
            })
            .map(|t| format!("{}: true", t.tool))
            .collect();
        let shared = if listed.is_empty() {
            "the shared rules".to_string()
        } else {
            named_list(&listed, 6)
        };
        let permission = &own.permission;
        let many = entries.len() > 1;
        let (entries, remove) = match entries.len() {
            0 | 1 => (
                format!("`tools: {{{permission}: true}}` is"),
                "remove that entry (the shared rules".to_string(),
            ),
            n => (
                format!(
                    "`tools` entries {} are",
                    named_list(
                        &entries.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>(),
                        6
                    )
                ),
                format!("remove all {n} (each one alone makes the same rule; the shared rules"),
            ),
        };
        // Removing the entries helps only if the shared rules then decide: an own rule
        // after them (`tools: {"*": false}`, blind fresh-7 A: aonecent) would deny instead.
        let removed = |r: &crate::model::Rule| {
            matches!(r.layer, crate::model::Layer::AgentLegacyTools)
                && r.permission == own.permission
                && r.loc.map(|l| l.source) == own.loc.map(|l| l.source)
        };
        let reduced: Vec<crate::model::Rule> = agent
            .rules
            .iter()
            .filter(|r| !removed(r))
            .cloned()
            .collect();
        let takes_over = repeat.iter().find_map(|&k| {
            let sample = crate::glob::Wildcard::compile(&agent.rules[k].pattern).fill("x");
            let d = crate::agents::evaluate(&reduced, permission, &sample, ctx.project.platform);
            d.rule
                .and_then(|j| reduced.get(j))
                .filter(|r| super::is_own(r.layer))
                .cloned()
        });
        if let Some(r) = takes_over {
            return format!(
                "this agent's {entries} translated to `{permission}` \"*\" allow after every shared rule; removing {} would not let the shared rules hold, since the agent's own {} would then decide `{permission}`: give the agent its own `permission.{permission}` with {shared} written after its `\"*\": \"allow\"`",
                if many { "them" } else { "it" },
                describe(&r)
            );
        }
        return format!(
            "this agent's {entries} translated to `{permission}` \"*\" allow after every shared rule: if the shared rules should hold for it, {remove} then apply as written, their catch-all included), or give the agent its own `permission.{permission}` with {shared} written after its `\"*\": \"allow\"`"
        );
    }
    if listed.is_empty() {
        return format!(
            "if the shared rules should hold for this agent too, repeat them after its own rule{not_catch_all}"
        );
    }
    // The agent wrote the shared rule's own pattern again: repeating the shared rule after
    // it would be removing it.
    if !catch_all
        && repeat.iter().all(|&k| {
            agent.rules[k].pattern == own.pattern && agent.rules[k].permission == own.permission
        })
    {
        return format!(
            "this agent decides {} itself, on purpose or not: if the shared rule should hold for it too, remove this rule",
            serde_json::to_string(&own.pattern).unwrap_or_default()
        );
    }
    if own.permission.contains(['*', '?']) {
        // One rule over several permissions: the rules to repeat, per permission, each
        // list with its exceptions in written order.
        let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
        for (&k, text) in repeat.iter().zip(&listed) {
            let p = agent.rules[k].permission.as_str();
            match groups.iter_mut().find(|(q, _)| *q == p) {
                Some((_, items)) => items.push(text.clone()),
                None => groups.push((p, vec![text.clone()])),
            }
        }
        let said: Vec<String> = groups
            .iter()
            .map(|(p, items)| format!("under `{p}` {}", named_list(items, 6)))
            .collect();
        return format!(
            "if the shared rules should hold for this agent too, write them after its own rule, in that order: {}{not_catch_all}",
            said.join("; ")
        );
    }
    format!(
        "if the shared rules should hold for this agent too, write {} after its own rule under `{}`, in that order{not_catch_all}",
        named_list(&listed, 6),
        own.permission
    )
}
