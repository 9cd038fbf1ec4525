//! `open-allow-list` (warning)
//!
//! ## What it finds
//! An agent's own `bash` block that only allows commands (`{"git diff*": "allow",
//! "git log*": "allow"}`, no `"*"` entry), while the rules before it (OpenCode's built-in
//! `*` allow, a shared `"bash": "allow"`) already allow every command: the list restricts
//! nothing. Every command it does not name is still decided by that earlier allow, so an
//! agent meant to read (`edit: deny`, "makes no changes") runs `rm -rf src` or
//! `git push --force` without asking. Reported once per block, at its first entry, with a
//! destructive command the agent runs unasked and the rule that allows it.
//!
//! A config's top-level `permission.bash` of two or more allows and no catch-all is the
//! same list for every agent: reported once, at its first entry, naming the agents it
//! leaves open (blind fresh-6 B: vbenoot26's global `ls *`, `git diff*` … list; nobody
//! writes allows the defaults already give except to restrict the rest).
//!
//! Not reported for one allow alone in an agent that restricts nothing else (`"git tag *":
//! "allow"` in a release agent reads as a note to self, not a list), nor when the block's
//! allows change a decision (a shared `"git *": "ask"` that
//! `"git diff*": "allow"` lifts: the agent widens on purpose), when the block asks or denies
//! anything itself (whoever writes `"rm *": "deny"` beside the allows knows the rest is
//! allowed), or when what runs unasked is decided by a narrower rule than a catch-all.
//!
//! ## Why it matters
//! OpenCode's last matching rule wins and an agent's block is appended to the rules it
//! inherits; nothing turns a list of allows into "only these". The list reads as a
//! restriction and is none.
//!
//! ## Example
//! ```json
//! {"agent": {"reviewer": {"permission": {"edit": "deny",
//!   "bash": {"git diff*": "allow", "git log*": "allow"}}}}}
//! ```
//! `reviewer` runs `rm -rf src` without asking (built-in `*` allow).
//!
//! ## How to fix
//! Put a catch-all first in that block, so the allows become the exceptions:
//! `"bash": {"*": "ask", "git diff*": "allow", "git log*": "allow"}` (or `"*": "deny"` for
//! an agent meant only to read; in frontmatter, `"*": ask` first under `bash:`).

use super::{Check, Ctx, Finding, Level, Witness, is_own};
use crate::agents::{Agent, evaluate};
use crate::call::{self, Asks};
use crate::model::{Effect, Layer};
use crate::shell::Places;

pub const CHECK: Check = Check {
    id: "open-allow-list",
    level: Level::Warning,
    summary: "an agent's bash allow-list with no catch-all, under rules that already allow every command: it restricts nothing",
    docs: include_str!("open_allow_list.rs"),
};

/// Commands an agent given an allow-list is not meant to run unasked, most telling first.
const DESTRUCTIVE: &[&str] = &["rm -rf src", "git push --force", "git reset --hard"];

/// A pattern every command matches (`*`, `**`).
fn universal(pattern: &str) -> bool {
    !pattern.is_empty() && pattern.chars().all(|c| c == '*')
}

/// One agent's block found open: its rules' indexes (in order), the destructive command
/// and the inherited rule that allows it.
pub struct Open {
    pub agent: usize,
    pub rules: Vec<usize>,
    pub decider: usize,
}

/// Does the agent read as one meant to change nothing: its own edits denied, or its
/// description saying so?
pub(crate) fn read_only(ctx: &Ctx<'_>, agent: &Agent) -> bool {
    let platform = ctx.project.platform;
    if evaluate(&agent.rules, "edit", "src/main.ts", platform).effect == Effect::Deny {
        return true;
    }
    super::described(
        ctx,
        agent,
        &[
            "read-only",
            "read only",
            "readonly",
            "no changes",
            "never modif",
        ],
    )
}

/// Does the agent restrict something of its own (an ask or deny it wrote), or read as
/// meant to change nothing?
fn restricted(ctx: &Ctx<'_>, agent: &Agent) -> bool {
    read_only(ctx, agent)
        || agent
            .rules
            .iter()
            .any(|r| r.loc.is_some() && is_own(r.layer) && r.action.effective() != Effect::Allow)
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) -> Vec<Open> {
    let platform = ctx.project.platform;
    let places = Places::of(ctx.project.loaded.paths());
    let is_dir = |p: &str| call::assumed_dir(&places, p);
    let env = places.env(&is_dir);
    let mut splitter = ctx.splitter();
    let mut found = Vec::new();
    // A bash block: (file, layer).
    type Block = (crate::source::SourceId, Layer);
    // Shared blocks reported: (block, the agents it leaves open, its finding's index).
    let mut shared_found: Vec<(Block, Vec<String>, usize)> = Vec::new();
    for (a, agent) in ctx.project.agents.iter().enumerate() {
        if agent.is_internal() {
            continue;
        }
        // The agent's bash blocks: (file, layer) → rule indexes, in order. Its own, and a
        // shared one (the top-level `permission.bash` of a config file), which is reported
        // once, at the first agent it leaves open, naming the others.
        let mut blocks: Vec<(Block, Vec<usize>)> = Vec::new();
        for (i, r) in agent.rules.iter().enumerate() {
            let Some(loc) = r.loc else { continue };
            if r.permission != "bash"
                || !(is_own(r.layer) || super::is_shared(r.layer))
                || matches!(r.layer, Layer::AgentLegacyTools | Layer::LegacyTools)
            {
                continue;
            }
            let key = (loc.source, r.layer);
            match blocks.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(i),
                None => blocks.push((key, vec![i])),
            }
        }
        for ((source, layer), rules) in blocks {
            let Some(&start) = rules.first() else {
                continue;
            };
            let shared = super::is_shared(layer);
            // Allows alone, none of them a catch-all.
            if rules.iter().any(|&i| {
                let r = &agent.rules[i];
                r.action.effective() != Effect::Allow || universal(&r.pattern)
            }) {
                continue;
            }
            // One allow alone (`"git tag *": "allow"` in a release agent) is no list; it
            // reads as one unless the agent restricts something else.
            if rules.len() < 2 && (shared || !restricted(ctx, agent)) {
                continue;
            }
            let before = &agent.rules[..start];
            // The allows change no decision: what each names is allowed already.
            let changes = rules.iter().any(|&i| {
                super::read_only_agent_writes::samples("bash", &agent.rules[i].pattern)
                    .iter()
                    .any(|s| evaluate(before, "bash", s, platform).effect != Effect::Allow)
            });
            if changes {
                continue;
            }
            // A destructive command the agent runs unasked, by an inherited catch-all.
            let hiding = call::hiding_rule(&agent.rules, "bash", platform);
            let hit = DESTRUCTIVE.iter().find_map(|command| {
                let asks = Asks::of("bash", command, &env, &mut splitter);
                let d = call::decide(&asks, "bash", command, hiding, |p, s| {
                    ctx.decision(agent, p, s)
                });
                let k = d.decision().and_then(|x| x.rule)?;
                (d.effect == Effect::Allow && k < start && universal(&agent.rules[k].pattern))
                    .then_some((*command, k))
            });
            let Some((command, k)) = hit else { continue };
            if shared {
                // Once per shared block: the agents it leaves open are named together.
                match shared_found
                    .iter_mut()
                    .find(|(key, ..)| *key == (source, layer))
                {
                    Some((_, names, _)) => {
                        names.push(agent.name.clone());
                        found.push(Open {
                            agent: a,
                            rules,
                            decider: k,
                        });
                        continue;
                    }
                    None => {
                        shared_found.push(((source, layer), vec![agent.name.clone()], out.len()))
                    }
                }
            }
            let decider = &agent.rules[k];
            let first = &agent.rules[start];
            let catch_all = if read_only(ctx, agent) { "deny" } else { "ask" };
            let yaml = first
                .loc
                .is_some_and(|l| super::in_frontmatter(ctx.project, l));
            let names: Vec<String> = rules
                .iter()
                .map(|&i| serde_json::to_string(&agent.rules[i].pattern).unwrap_or_default())
                .collect();
            let whose = if shared {
                "this shared".to_string()
            } else {
                format!("`{}`'s", agent.name)
            };
            let message = format!(
                "{whose} bash allow-list has no catch-all, so it restricts nothing: every command it does not name is still decided by {} (`{command}` runs without asking)",
                if decider.loc.is_some() {
                    format!("{} at {}", super::describe(decider), ctx.place(decider))
                } else {
                    "OpenCode's built-in `*` allow".into()
                },
            );
            let help = if yaml {
                format!(
                    "put `\"*\": {catch_all}` first under `bash:` in this frontmatter, so the allows become its exceptions: bash: {{\"*\": {catch_all}, {}: allow{}}}",
                    names[0],
                    if names.len() > 1 { ", …" } else { "" }
                )
            } else {
                format!(
                    "put `\"*\": \"{catch_all}\"` first in this block, so the allows become its exceptions: \"bash\": {{\"*\": \"{catch_all}\", {}: \"allow\"{}}}",
                    names[0],
                    if names.len() > 1 { ", …" } else { "" }
                )
            };
            let related: Vec<_> = rules[1..]
                .iter()
                .filter_map(|&i| {
                    agent.rules[i]
                        .loc
                        .map(|l| (l, "changes nothing either".to_string()))
                })
                .take(1)
                .collect();
            out.push(
                Finding::at_rule(&CHECK, agent, start, message)
                    .with_related(related)
                    .with_witnesses(vec![Witness {
                        permission: "bash".into(),
                        input: command.into(),
                        action: Effect::Allow,
                        rule: Some(k),
                    }])
                    .with_help(help),
            );
            found.push(Open {
                agent: a,
                rules,
                decider: k,
            });
        }
    }
    for (_, names, k) in shared_found {
        if let Some(f) = out.get_mut(k) {
            f.agents = names;
        }
    }
    found
}

/// Drop what an open allow-list finding says already, at its cause: the `dead-rule` notes
/// on the block's other entries (each changes nothing for the same reason), and the
/// `deny-bypass` note on the same agent whose command the inherited catch-all allows (the
/// catch-all put first fixes both).
pub fn absorb(ctx: &Ctx<'_>, open: &[Open], out: &mut Vec<Finding>) {
    if open.is_empty() {
        return;
    }
    out.retain(|f| {
        if f.level != Level::Info {
            return true;
        }
        let Some(agent) = f
            .agents
            .first()
            .and_then(|n| ctx.project.agents.iter().position(|a| &a.name == n))
        else {
            return true;
        };
        let mine = open.iter().filter(|o| o.agent == agent);
        let mut keep = true;
        for o in mine {
            if f.id == super::dead_rule::CHECK.id && f.rule.is_some_and(|i| o.rules.contains(&i)) {
                keep = false;
            }
            if f.id == super::deny_bypass::CHECK.id
                && f.witnesses
                    .iter()
                    .any(|w| w.permission == "bash" && w.rule == Some(o.decider))
            {
                keep = false;
            }
        }
        keep
    });
}
