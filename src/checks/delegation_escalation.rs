//! `delegation-escalation` (warning; info for an agent of mode `all`)
//!
//! ## What it finds
//! An agent whose own block denies something (`agent.build.permission.bash."git push *":
//! "deny"`), or asks before something it names (`"git push*": "ask"`), while it may start,
//! through the `task` tool and without being asked, a subagent that does that very thing
//! without asking. OpenCode builds a subagent's session from the *subagent's* ruleset: the
//! caller's agent rules do not follow it (only the caller *session's* denies do, e.g.
//! `opencode run`'s). The finding names the rule, the subagent, the `task` rule that lets
//! the caller start it, the subagent's deciding rule, and an input.
//!
//! Only delegation left to OpenCode's default (`task` allowed by the built-in `*` allow)
//! counts: a `task` allow you wrote is delegation on purpose (an orchestrator that does
//! nothing itself). An agent of mode `all` (an agent file's default) gets a note rather than
//! a warning: used as a subagent it cannot delegate at all (`subagent_depth` 1). So does an
//! agent whose name, description or prompt says its job is to orchestrate, coordinate,
//! delegate or dispatch to subagents: it starts them on purpose.
//! Not reported when the agent's own bash already does it without asking (`sed -i` on
//! the file its `edit` deny guards, `cat` on the file its `read` deny guards, `curl` on
//! the URL its `webfetch` deny guards, or on a search page for `websearch`): delegating
//! adds nothing; for files that way round the deny is `deny-bypass`'s, and a web deny
//! beside an open bash shapes a role.
//! An ask counts only for something it names: judged on the real-config corpus, a
//! catch-all ask (`"bash": "ask"`, `"edit": "ask"`) beside subagents that do the work is
//! how a delegating agent is written; and a subagent whose own rule allows exactly that
//! (`"npm test *": "allow"` in a developer agent) does it on purpose.
//! Reported once per agent, at its first such deny, else its first such ask (the others
//! escape the same way). Only rules the agent wrote for itself are judged: a rule in a
//! shared file reaches the subagent too, and a subagent's own block overriding it is that
//! block's business.
//! With `--headless` a `task` ask is rejected (no escalation through it), and an ask of the
//! caller is a deny; with `--headless=auto` a `task` ask is approved, and so is every other
//! ask (the caller's asks then guard nothing).
//!
//! ## Why it matters
//! The deny looks like a guarantee and is one delegation away from nothing: the model asks
//! `general` to push, and it does. An ask is the same promise ("I am asked before any
//! push") until `general` pushes.
//!
//! ## Example
//! ```json
//! {"agent": {"build": {"permission": {"bash": {"*": "allow", "git push *": "deny"}}}}}
//! ```
//! `build` may not run `git push x`; it may start `general` (built-in `task` allow), which
//! runs `git push x` without asking.
//!
//! ## How to fix
//! Write the ask where the subagent gets it too: in its own block. A deny goes only into a
//! read-only helper's own block (`explore`, or one whose own edits are denied): `general`
//! and any subagent that is not read-only do the work for every agent that starts them, so
//! the help leaves them alone ("likely the design") and names the `task` route deny in
//! words, for when this agent must not have it done. The shared `permission` block is
//! named only when every other agent already asks or denies the input (else it would take
//! the tool from `build`). `check` proposes the rule, at its place in your files, once it
//! has proven it (the finding gone, nothing you decided changed). Keeping the agent from
//! starting them (`"task": {"explore": "deny"}`) also closes the route, but cuts the agent
//! off its own helpers (OpenCode tells `plan` to start `explore`): only where that
//! delegation is not the design.

use super::always_overrides_deny::decide_command_with;
use super::read_only_agent_writes::samples;
use super::{Check, Ctx, Finding, Level, Reach, Witness, describe, is_own};
use crate::agents::{Agent, Decision};
use crate::delegation;
use crate::glob::analysis::Input;
use crate::glob::wildcard::Wildcard;
use crate::model::{Effect, Rule};
use crate::shell::Splitter;

pub const CHECK: Check = Check {
    id: "delegation-escalation",
    level: Level::Warning,
    summary: "an agent's own deny that a subagent it may start does without asking",
    docs: include_str!("delegation_escalation.rs"),
};

/// Permissions a subagent is asked for like its caller (the ones about delegation itself,
/// the loop and the session are left out).
const TOOLS: &[&str] = &[
    "bash",
    "edit",
    "read",
    "glob",
    "grep",
    "list",
    "webfetch",
    "websearch",
    "codesearch",
    "external_directory",
    "skill",
    "lsp",
];

/// The decision of `agent` whose session holds `session` (evaluated after its rules):
/// the effect, and the agent's deciding rule (`None` when a session rule or no rule decided).
fn decide_in(
    ctx: &Ctx<'_>,
    splitter: &mut Splitter,
    agent: &Agent,
    session: &[Rule],
    permission: &str,
    input: &str,
) -> (Effect, Option<usize>) {
    let platform = ctx.project.platform;
    let one = |perm: &str, pattern: &str| -> Decision {
        if let Some(k) = session.iter().rposition(|r| {
            Wildcard::compile(&r.permission).is_match(perm, platform)
                && Wildcard::compile(&r.pattern).is_match(pattern, platform)
        }) {
            return Decision {
                rule: None,
                effect: session[k].action.effective(),
                overridden: Vec::new(),
            };
        }
        ctx.decision(agent, perm, pattern)
    };
    if permission == "bash" {
        let d = decide_command_with(ctx, splitter, input, one);
        let rule = d.decision().and_then(|x| x.rule);
        return (d.effect, rule);
    }
    let d = one(permission, input);
    (d.effect, d.rule)
}

/// Commands that change something, for a shell denied as a whole: what a subagent running
/// them does for its caller is a way round the caller's deny.
const HARMFUL: &[&str] = &[
    "rm -rf src",
    "sed -i s/x/y/ src/main.ts",
    "git push --force",
    "git reset --hard",
];

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let project = ctx.project;
    let mode = ctx.mode;
    let session = mode.session_rules();
    // One splitter for the run (a tree-sitter parser), borrowed by the `want` callback of
    // `recognisable`, which is an `Fn`.
    let splitter = std::cell::RefCell::new(ctx.splitter());
    let edges = delegation::edges(project);
    for (a, agent) in project.agents.iter().enumerate() {
        // Judged on the real-config corpus: a `task` allow the author wrote
        // (`"task": {"analyzer": "allow"}`) is an orchestrator delegating on purpose; only
        // delegation left to OpenCode's defaults is one nobody decided.
        let reachable: Vec<&delegation::Edge> = edges
            .iter()
            .filter(|e| e.caller == a && mode.resolve(e.action) == Effect::Allow)
            .filter(|e| {
                e.rule
                    .and_then(|k| agent.rules.get(k))
                    .is_none_or(|r| r.loc.is_none())
            })
            .collect();
        if reachable.is_empty() {
            continue;
        }
        // Each subagent as its session evaluates it: its session rules, built once.
        let children: Vec<(&delegation::Edge, Vec<Rule>)> = reachable
            .iter()
            .map(|e| {
                let sub = &project.agents[e.callee];
                (*e, delegation::child_session_rules(&session, sub))
            })
            .collect();
        // Denies first: they speak for the agent when it has both. An ask counts only for
        // something named (`git push*`): judged on the real-config corpus, a catch-all ask
        // (`"bash": "ask"`, `"edit": "ask"`) beside subagents that do the work is how an
        // orchestrating agent is written, not a rule they get round.
        let universal = |p: &str| p.chars().all(|c| c == '*');
        let own_rules = [Effect::Deny, Effect::Ask].into_iter().flat_map(|effect| {
            agent.rules.iter().enumerate().filter(move |(_, r)| {
                r.loc.is_some()
                    && is_own(r.layer)
                    && r.action.effective() == effect
                    && (effect == Effect::Deny || !universal(&r.pattern))
            })
        });
        for (i, r) in own_rules {
            if !matches!(reach[a].get(i), Some(Some(Reach::Decides(_)))) {
                continue;
            }
            let effect = r.action.effective();
            // An ask the run approves (`--headless=auto`) guards nothing to escalate past.
            if mode.resolve(effect) == Effect::Allow {
                continue;
            }
            let perm_glob = Wildcard::compile(&r.permission);
            let permissions: Vec<&str> = TOOLS
                .iter()
                .copied()
                .filter(|p| perm_glob.is_match(p, project.platform))
                .collect();
            // The subagents that do `input` without asking, with their decision.
            let escalations = |permission: &str, input: &str| {
                let splitter = &mut *splitter.borrow_mut();
                let (own, _) = decide_in(ctx, splitter, agent, &session, permission, input);
                if own != effect {
                    return Vec::new();
                }
                children
                    .iter()
                    .filter_map(|(e, child)| {
                        let sub = &project.agents[e.callee];
                        let (got, rule) = decide_in(ctx, splitter, sub, child, permission, input);
                        // A subagent's own allow of exactly this (`"npm test *": "allow"`
                        // in a developer agent) does what the caller asks about on purpose.
                        let named = rule.and_then(|k| sub.rules.get(k)).is_some_and(|x| {
                            x.loc.is_some() && is_own(x.layer) && !universal(&x.pattern)
                        });
                        (mode.resolve(got) == Effect::Allow && !(effect == Effect::Ask && named))
                            .then_some((*e, got, rule))
                    })
                    .collect::<Vec<_>>()
            };
            // A shell denied (or asked) as a whole: a subagent that runs a read (`ls`
            // through explore's search) is the subagent's design, not a way round the deny
            // (blind fresh-11 B: jabbas's plan with bash off, explore allowed `ls *`). What
            // the caller loses is a command that changes something: one of those, or none.
            let whole_shell = universal(&r.pattern);
            // A recognisable input this rule decides and some subagent does.
            let found = permissions.iter().find_map(|&permission| {
                if permission == "bash" && whole_shell {
                    return HARMFUL.iter().find_map(|c| {
                        let input = Input::new(permission, c);
                        if !ctx.rule_decides(a, i, &input) {
                            return None;
                        }
                        let escalated = escalations(permission, c);
                        (!escalated.is_empty()).then(|| (permission, c.to_string(), escalated))
                    });
                }
                let mut fallbacks = samples(permission, &r.pattern);
                // The glob without its wildcards first (`git push*` is `git push`, not
                // `git pushx`), as `deny-bypass` tries them.
                fallbacks.rotate_right(1);
                fallbacks.into_iter().find_map(|fallback| {
                    let fallback = Input::new(permission, &fallback);
                    if !ctx.rule_decides(a, i, &fallback) {
                        return None;
                    }
                    let w = ctx.recognisable(agent, &[i], &fallback, |w| {
                        w.rule == Some(i) && !escalations(permission, &w.input).is_empty()
                    })?;
                    let escalated = escalations(permission, &w.input);
                    Some((permission, w.input, escalated))
                })
            });
            let Some((permission, input, escalated)) = found else {
                continue;
            };
            // Its own bash already does it without asking (`sed -i` on the file an `edit`
            // deny guards): delegating adds nothing, and the direct way round the deny is
            // `deny-bypass`'s to report.
            let by_hand: &[&str] = match permission {
                "read" | "edit" => super::deny_bypass::commands(permission),
                // The web through the shell: a search is a fetch of a search page.
                "webfetch" => &["curl -sL FILE"],
                "websearch" | "codesearch" => &["curl -sL https://duckduckgo.com/html/?q=x"],
                _ => &[],
            };
            let itself = by_hand.iter().any(|c| {
                let command = c.replace("FILE", &input);
                let splitter = &mut *splitter.borrow_mut();
                let (effect, _) = decide_in(ctx, splitter, agent, &session, "bash", &command);
                mode.resolve(effect) == Effect::Allow
            });
            if itself {
                continue;
            }
            let (edge, got, sub_rule) = escalated[0];
            let sub = &project.agents[edge.callee];
            let decider = |who: &Agent, k: Option<usize>| {
                k.and_then(|k| who.rules.get(k))
                    .map(|x| format!("{} at {}", describe(x), ctx.place(x)))
                    .unwrap_or_else(|| "no rule".into())
            };
            let names: Vec<String> = escalated
                .iter()
                .map(|(e, _, _)| format!("`{}`", project.agents[e.callee].name))
                .collect();
            let how = if got == Effect::Ask {
                "approved without asking under `opencode run --auto`"
            } else {
                "without asking"
            };
            let mut related = Vec::new();
            for (who, k) in [(agent, edge.rule), (sub, sub_rule)] {
                if let Some(x) = k.and_then(|k| who.rules.get(k))
                    && let Some(l) = x.loc
                {
                    related.push((l, format!("{}: {}", who.name, describe(x))));
                }
            }
            // An agent of mode `all` (the default of an agent file) is often written as a
            // subagent, where it cannot delegate (`subagent_depth` 1): a note, not a warning.
            // An agent whose name, description or prompt says its job is to orchestrate,
            // coordinate or delegate starts subagents on purpose: a note. Severity rule
            // (docs/checks.md): the deny takes effect in the agent itself (clause 1 does not
            // apply); a subagent that cannot delegate, or delegation the author wants, is
            // nothing the author relies on (clause 3).
            let level = if agent.mode == crate::agents::Mode::All || delegates(ctx, agent) {
                Level::Info
            } else {
                CHECK.level
            };
            let verb = if effect == Effect::Deny {
                "denies"
            } else {
                "asks before"
            };
            let message = format!(
                "`{}` {verb} {permission} {} here, but may start {} through the task tool ({}), and `{}` does it {how} ({})",
                agent.name,
                serde_json::to_string(&input).unwrap_or_default(),
                names.join(", "),
                decider(agent, edge.rule),
                sub.name,
                decider(sub, sub_rule),
            );
            // The fix goes where the subagent gets it: its own block, or the shared block
            // every agent inherits. Denying the `task` route instead cuts the agent off its
            // own helpers (plan is told by OpenCode to start explore), so it is named last,
            // in words, with no snippet.
            let pattern = serde_json::to_string(&agent.rules[i].pattern).unwrap_or_default();
            let action = if effect == Effect::Deny {
                "deny"
            } else {
                "ask"
            };
            // Who is left alone. A helper that does it by a rule of its own (`code`'s
            // `edit: allow`, a `tools: {edit: true}`) does it as its job; for a deny, so does
            // a helper that can use the whole tool by design (`general`, any subagent not
            // read-only): it works for every agent that delegates to it, and a deny in its
            // block (or the shared block) takes that job from all of them. Only an ask (a
            // prompt, nothing taken) or a read-only helper (`explore`) gets the rule in its
            // own block.
            let own_rule = |e: &delegation::Edge, k: Option<usize>| {
                let who = &project.agents[e.callee];
                k.and_then(|k| who.rules.get(k))
                    .is_some_and(|x| x.loc.is_some() && is_own(x.layer))
            };
            let mut by_rule = true;
            let workers: Vec<String> = escalated
                .iter()
                .filter(|(e, _, k)| {
                    if own_rule(e, *k) {
                        return true;
                    }
                    let whole =
                        effect == Effect::Deny && whole_tool(ctx, &project.agents[e.callee]);
                    by_rule &= !whole;
                    whole
                })
                .map(|(e, _, _)| format!("`{}`", project.agents[e.callee].name))
                .collect();
            let others: Vec<&String> = names.iter().filter(|n| !workers.contains(n)).collect();
            let route = |who: &[String]| {
                let routes: Vec<String> = who
                    .iter()
                    .map(|n| {
                        format!(
                            "{}: \"deny\"",
                            serde_json::to_string(n.trim_matches('`')).unwrap_or_default()
                        )
                    })
                    .collect();
                format!(
                    "`\"task\": {{{}}}` in `{}`'s own block",
                    routes.join(", "),
                    agent.name
                )
            };
            let one = workers.len() == 1;
            // Why they are left alone, said after their names.
            let why = if by_rule {
                format!(
                    "{} this by {} own rules, as {} job",
                    if one { "does" } else { "do" },
                    if one { "its" } else { "their" },
                    if one { "its" } else { "their" },
                )
            } else {
                format!(
                    "{} not read-only and {} this for every agent that delegates to {}",
                    if one { "is" } else { "are" },
                    if one { "does" } else { "do" },
                    if one { "it" } else { "them" },
                )
            };
            let design = || {
                format!(
                    "{} {why}: delegating it to {} is likely the design; if `{}` must not have it done, deny the route ({}), which also cuts it off from {} for everything else",
                    workers.join(", "),
                    if one { workers[0].as_str() } else { "them" },
                    agent.name,
                    route(&workers),
                    if one { "that helper" } else { "those helpers" },
                )
            };
            // The shared block only where it takes nothing: every other agent that
            // inherits it already asks or denies this input.
            let targets: Vec<String> = others
                .iter()
                .map(|n| n.trim_matches('`').to_string())
                .collect();
            let shared = {
                let splitter = &mut *splitter.borrow_mut();
                shared_takes_nothing(ctx, splitter, permission, &input, &targets)
            };
            let shared_words = if shared {
                ", or in the shared `permission` block every agent inherits (every other agent already asks or denies it)"
            } else {
                ""
            };
            // The whole tool denied (`bash: deny`, `"*": "deny"`): written into a helper's
            // own block it would take the tool from that helper for every agent, build
            // included (judged harmful, blind fresh-7 julianszw and fresh-8 repl: explore
            // has bash by OpenCode's design). Only the route is this agent's to close.
            let whole_tool = agent.rules[i].pattern.chars().all(|c| c == '*');
            // Read-only built-ins (`explore`) whose built-in deny a shared rule of yours
            // undoes (a top-level `"edit": "allow"`): the cause is that rule, and the fix
            // is the helper's own block, which closes the route for every caller
            // (`read-only-agent-writes` reports the rule; blind fresh-10 A: harness-skeleton,
            // where "keep plan from starting explore" took plan's search helper and left
            // explore editing for everyone).
            let lifted: Vec<String> = escalated
                .iter()
                .filter(|_| whole_tool)
                .filter(|(e, _, k)| {
                    let who = &project.agents[e.callee];
                    let shared_rule = k
                        .and_then(|k| who.rules.get(k))
                        .is_some_and(|x| x.loc.is_some() && !is_own(x.layer));
                    shared_rule
                        && crate::agents::evaluate(
                            &who.built_in_rules(),
                            permission,
                            &input,
                            ctx.project.platform,
                        )
                        .effect
                            == Effect::Deny
                })
                .map(|(e, _, _)| format!("`{}`", project.agents[e.callee].name))
                .filter(|n| others.contains(&n))
                .collect();
            let help: String = if others.is_empty() {
                design()
            } else if !lifted.is_empty() && lifted.len() == others.len() {
                let one = lifted.len() == 1;
                let blocks: Vec<String> = lifted
                    .iter()
                    .map(|n| {
                        format!(
                            "{}: {{\"permission\": {{{}: \"deny\"}}}}",
                            serde_json::to_string(n.trim_matches('`')).unwrap_or_default(),
                            serde_json::to_string(permission).unwrap_or_default()
                        )
                    })
                    .collect();
                let fix = format!(
                    "{} {} read-only by OpenCode's design, and a shared rule of yours undoes {} built-in deny: keep {} read-only in {} own block, which comes after the shared one (`{{\"agent\": {{{}}}}}`); that closes this route for every caller, and `{}` keeps {}",
                    lifted.join(", "),
                    if one { "is" } else { "are" },
                    if one { "its" } else { "their" },
                    if one { "it" } else { "them" },
                    if one { "its" } else { "their" },
                    blocks.join(", "),
                    agent.name,
                    if one { "its helper" } else { "its helpers" },
                );
                if workers.is_empty() {
                    fix
                } else {
                    format!("{}; {fix}", design())
                }
            } else if whole_tool {
                let names: Vec<String> = others.iter().map(|n| n.to_string()).collect();
                let one = names.len() == 1;
                let helpers = format!(
                    "{} {} `{permission}` by {} own rules, whichever agent starts {}: a deny in {} block would take it from every caller. If `{}` must not have it done, keep it from starting {} ({}), which also cuts it off from {} for everything else",
                    names.join(", "),
                    if one { "has" } else { "have" },
                    if one { "its" } else { "their" },
                    if one { "it" } else { "them" },
                    if one { "its" } else { "their" },
                    agent.name,
                    if one { "it" } else { "them" },
                    route(
                        &names
                            .iter()
                            .map(|n| n.trim_matches('`').to_string())
                            .collect::<Vec<_>>()
                    ),
                    if one { "that helper" } else { "those helpers" },
                );
                if workers.is_empty() {
                    helpers
                } else {
                    format!("{}; {helpers}", design())
                }
            } else if effect == Effect::Deny && !workers.is_empty() {
                // Only the read-only helpers take the deny in their block; the others are
                // the design, or their route goes. Both together close it.
                let names: Vec<String> = others.iter().map(|n| n.to_string()).collect();
                format!(
                    "{}, and write the deny into {} (`agent.NAME.permission.{permission}`: {pattern}: \"deny\"){shared_words}",
                    design(),
                    if names.len() == 1 {
                        format!("{}'s own block", names[0])
                    } else {
                        format!("the own blocks of {}", names.join(", "))
                    },
                )
            } else {
                let names: Vec<String> = others.iter().map(|n| n.to_string()).collect();
                format!(
                    "write the {action} where {} get{} it too: in {} own block (`agent.NAME.permission.{permission}`: {pattern}: \"{action}\"){shared_words}; keeping `{}` from starting {} (a `task` deny) also closes the route, but cuts it off from {}{}",
                    names.join(", "),
                    if names.len() == 1 { "s" } else { "" },
                    if names.len() == 1 { "its" } else { "their" },
                    agent.name,
                    if escalated.len() == 1 { "it" } else { "them" },
                    if escalated.len() == 1 {
                        "that helper"
                    } else {
                        "those helpers"
                    },
                    if workers.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " ({} {}: leave {} as {})",
                            workers.join(", "),
                            why.replacen("this", "it", 1),
                            if one { "it" } else { "them" },
                            if one { "it is" } else { "they are" },
                        )
                    }
                )
            };
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(level)
                    .with_related(related)
                    .with_witnesses(vec![
                        Witness {
                            permission: permission.to_string(),
                            input: input.clone(),
                            action: effect,
                            rule: Some(i),
                        },
                        Witness {
                            permission: "task".into(),
                            input: sub.name.clone(),
                            action: edge.action,
                            rule: edge.rule,
                        },
                    ])
                    .with_help(help),
            );
            // Once per agent, at its first deny (else ask) a subagent gets round: the others
            // escape the same way, through the same subagents.
            break;
        }
    }
}

/// A helper that can use the whole tool by design: `general`, or any subagent not
/// read-only (`explore` is, by OpenCode's built-in rules; so is one whose own edits are
/// denied or whose description says so). It does the work for every agent that starts it.
pub fn whole_tool(ctx: &Ctx<'_>, sub: &Agent) -> bool {
    if sub.native && matches!(sub.name.as_str(), "explore" | "plan") {
        return false;
    }
    (sub.native && sub.name == "general") || !super::open_allow_list::read_only(ctx, sub)
}

/// Would the caller's rule, written in the shared block, take nothing from anyone: every
/// agent but `targets` (the helpers it is for) and OpenCode's internal ones already asks
/// or denies `input`?
pub fn shared_takes_nothing(
    ctx: &Ctx<'_>,
    splitter: &mut Splitter,
    permission: &str,
    input: &str,
    targets: &[String],
) -> bool {
    ctx.project
        .agents
        .iter()
        .filter(|a| !a.is_internal() && !targets.contains(&a.name))
        .all(|a| decide_in(ctx, splitter, a, &[], permission, input).0 != Effect::Allow)
}

/// [`shared_takes_nothing`] with the run's splitter (for the suggestions).
pub fn shared_ok(ctx: &Ctx<'_>, permission: &str, input: &str, targets: &[String]) -> bool {
    let mut lease = ctx.splitter();
    shared_takes_nothing(ctx, &mut lease, permission, input, targets)
}

/// Words that say an agent's job is to hand work to others.
const DELEGATING: &[&str] = &[
    "orchestrat",
    "coordinat",
    "delegat",
    "dispatch",
    "subagent",
    "sub-agent",
];

/// Does the agent's name, description or prompt say it exists to delegate?
fn delegates(ctx: &Ctx<'_>, agent: &Agent) -> bool {
    let entry = ctx.project.loaded.merged.agent.get(&agent.name);
    let texts = [
        Some(agent.name.as_str()),
        entry.and_then(|e| e.description.as_deref()),
        entry.and_then(|e| e.prompt.as_deref()),
    ];
    texts.into_iter().flatten().any(|t| {
        let t = t.to_lowercase();
        DELEGATING.iter().any(|w| t.contains(w))
    })
}
