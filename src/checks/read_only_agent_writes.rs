//! `read-only-agent-writes` (error; warning for a shared `edit` ask)
//!
//! ## What it finds
//! A built-in read-only agent, `plan` or `explore`, that may edit files without asking
//! because of a rule shared by every agent (top-level `permission`, any config file, or
//! `OPENCODE_PERMISSION`): OpenCode puts the user's rules *after* the agent's built-in
//! `edit * deny` (plan) or `* deny` (explore), so a shared `"edit": "allow"` (or
//! `"*": "allow"`) wins for them too. A shared `"edit": "ask"` likewise turns their refusal
//! into a question, and they edit once it is answered yes: a warning (not an ask over every
//! permission, `"permission": "ask"`, which asks for everything as a choice). The finding
//! names the rule and an input it opens, re-decided over the agent's whole ruleset; the
//! agent's built-in rules alone deny it.
//!
//! Rules written for the agent itself (`agent.plan.permission`, an agent file) are taken
//! as meant and not reported. Bash is not reported: in 1.18.34 `plan` and `explore`
//! already run any command without asking by their built-in rules (the defaults'
//! `* allow`, explore's `bash allow`), so a shared rule adds nothing there.
//!
//! ## Why it matters
//! `plan` is chosen to look before touching anything; `explore` is started by other agents
//! to read the code base. A shared allow quietly makes both write.
//!
//! ## Example
//! ```json
//! {"permission": {"edit": "allow"}}
//! ```
//! `plan` (and `explore`) may now edit `src/main.ts` without asking.
//!
//! ## How to fix
//! Keep the read-only agents read-only in their own block, which comes after the shared
//! rules: `{"agent": {"plan": {"permission": {"edit": "deny"}}, "explore": {"permission":
//! {"edit": "deny"}}}}`, or write the allow for the agents that should edit
//! (`agent.build.permission`). A narrow shared allow (`docs/plans/*.md`, a scratch
//! directory) is often written for every agent on purpose: the help then says the choice
//! in words (move it into the editing agents' blocks, or leave it) and writes no block
//! that would take those files away from plan.

use super::{Check, Ctx, Finding, Level, Witness, describe, written_with};
use crate::agents::evaluate;
use crate::glob::analysis::Input;
use crate::glob::wildcard::Wildcard;
use crate::model::{Effect, Layer};
use crate::source::Loc;
use std::collections::HashMap;

pub const CHECK: Check = Check {
    id: "read-only-agent-writes",
    level: Level::Error,
    summary: "built-in plan/explore may edit without asking because of a shared rule",
    docs: include_str!("read_only_agent_writes.rs"),
};

/// The built-in agents meant to be read-only.
const READ_ONLY: &[&str] = &["plan", "explore"];

/// Layers whose rules every agent gets (not written for one agent).
pub fn shared(layer: Layer) -> bool {
    !matches!(
        layer,
        Layer::Defaults
            | Layer::AgentBuiltin
            | Layer::AgentConfig
            | Layer::AgentLegacyTools
            | Layer::MarkdownAgent
            | Layer::Mode
            | Layer::ToolOutput
            | Layer::Session
    )
}

/// Inputs a glob of `permission` matches, simplest first: for a catch-all the inputs
/// everyone recognises (`src/main.ts`, `npm test`), then the glob with its wildcards each
/// read as `x`, filled with a path, or left out.
pub fn samples(permission: &str, glob: &str) -> Vec<String> {
    // `**` is `*` twice (the same inputs): filled once, `tests/**` is `tests/x`, not
    // `tests/xx`.
    let mut once = glob.to_string();
    while once.contains("**") {
        once = once.replace("**", "*");
    }
    let w = Wildcard::compile(&once);
    let fill = |star: &str| w.fill(star);
    let mut out: Vec<String> = super::examples::everyday(permission, glob)
        .iter()
        .map(|s| s.to_string())
        .collect();
    out.extend([fill("x"), fill("src/x.ts"), fill("")]);
    out.dedup();
    out
}

/// Narrower shared allows repeated inline in plan's block, at most.
const NARROW_INLINE: usize = 8;

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    // Every read-only agent, with where each of its written rules sits in its ruleset.
    let by_loc: Vec<(usize, HashMap<Loc, Vec<usize>>)> = ctx
        .agents
        .iter()
        .enumerate()
        .filter(|(_, a)| a.native && READ_ONLY.contains(&a.name.as_str()))
        .map(|(b, a)| {
            let mut locs: HashMap<Loc, Vec<usize>> = HashMap::new();
            for (k, x) in a.rules.iter().enumerate() {
                if let Some(l) = x.loc {
                    locs.entry(l).or_default().push(k);
                }
            }
            (b, locs)
        })
        .collect();
    for (a, agent) in ctx.agents.iter().enumerate() {
        if !agent.native || !READ_ONLY.contains(&agent.name.as_str()) {
            continue;
        }
        let builtin = agent.built_in_rules();
        let narrow: Vec<(Option<Loc>, String)> = agent
            .rules
            .iter()
            .filter(|x| {
                x.loc.is_some()
                    && super::is_shared(x.layer)
                    && x.permission == "edit"
                    && x.action.effective() == Effect::Allow
                    && !x.pattern.chars().all(|c| c == '*')
                    && x.pattern != ".opencode/plans/*.md"
                    // An absolute (or `~`) pattern never matches an `edit` input (spec
                    // §4): copying it gives plan nothing and adds a never-matches warning.
                    && !x.pattern.starts_with('/')
                    && !super::needed_allow::windows_absolute(&x.pattern)
            })
            .map(|x| {
                let text = format!(
                    ", {}: \"allow\"",
                    serde_json::to_string(&x.pattern).unwrap_or_default()
                );
                (x.loc, text)
            })
            .collect();
        // A shared catch-all ask (`"edit": "ask"`) turns the built-in deny into a
        // question: the agent edits once someone says yes (three blind expert readings
        // flagged it 11 times, tests/real/fresh-2 and fresh-3). Narrow asks are left out.
        // Not an ask over every permission (`"permission": "ask"`): asking for everything
        // is a choice made as such, plan included.
        // Under `opencode run` (`--headless`) every ask is rejected: plan edits nothing.
        let headless = ctx.mode == crate::delegation::RunMode::Headless;
        let asks = written_with(&agent.rules, shared, Effect::Ask).filter(|(_, r)| {
            !headless && r.permission == "edit" && r.pattern.chars().all(|c| c == '*')
        });
        // A shared catch-all allow for edit already opens every file to this agent: its
        // finding speaks for the narrow allows too, and its help keeps them for plan (blind
        // fresh-11 B: madsoftwaredev's `"*.env.example": "allow"` beside `"*": "allow"`,
        // whose own help, applied alone, changed nothing for plan).
        let open_all = written_with(&agent.rules, shared, Effect::Allow).any(|(_, r)| {
            r.pattern.chars().all(|c| c == '*')
                && Wildcard::compile(&r.permission).is_match("edit", platform)
        });
        for (i, r) in written_with(&agent.rules, shared, Effect::Allow).chain(asks) {
            if !Wildcard::compile(&r.permission).is_match("edit", platform) {
                continue;
            }
            if open_all
                && r.action.effective() == Effect::Allow
                && !r.pattern.chars().all(|c| c == '*')
            {
                continue;
            }
            let effect = r.action.effective();
            // Rule `i` (an allow) decides the input: one lookup through the run's indexes,
            // not a pass over every rule (a config of 100,000 rules has 33,000 allows).
            // The edit tool asks with worktree-relative paths (`src/a.ts`, `../x` outside):
            // an absolute or `~` sample is no input it ever asks (`explain` agrees).
            let asked = |input: &String| !input.starts_with('/') && !input.starts_with('~');
            let found = samples("edit", &r.pattern)
                .into_iter()
                .filter(asked)
                .find_map(|input| {
                    let alone = evaluate(&builtin, "edit", &input, platform);
                    let refused = if effect == Effect::Ask {
                        alone.effect == Effect::Deny
                    } else {
                        alone.effect != Effect::Allow
                    };
                    (refused && ctx.rule_decides(a, i, &Input::new("edit", &input)))
                        .then_some(input)
                });
            let Some(input) = found else { continue };
            let message = format!(
                "a read-only built-in agent may edit {} {}: this shared rule ({}) comes after its built-in edit deny",
                serde_json::to_string(&input).unwrap_or_default(),
                if effect == Effect::Ask {
                    "once a prompt is answered yes (its built-ins refuse)"
                } else {
                    "without asking"
                },
                describe(r)
            );
            // Every read-only agent this rule reaches, each with the block that keeps it
            // read-only and keeps what its built-ins allow: `"edit": "deny"` would hide
            // plan's edit tool and take away its `.opencode/plans/*.md` allow (OpenCode
            // hides a tool whose last rule is a `*` deny), so plan's block ends with it.
            let reached: Vec<&str> = by_loc
                .iter()
                // Only where this rule decides the input: an agent whose own block already
                // answers it (`agent.plan.permission.edit: ask`) is not re-written. Through
                // the run's indexes: a config of 100,000 rules has 33,000 such allows.
                .filter(|(b, locs)| {
                    r.loc.and_then(|l| locs.get(&l)).is_some_and(|ks| {
                        ks.iter().any(|&k| {
                            ctx.agents[*b].rules[k].action.effective() == effect
                                && ctx.rule_decides(*b, k, &Input::new("edit", &input))
                        })
                    })
                })
                .map(|(b, _)| ctx.agents[*b].name.as_str())
                .collect();
            if reached.is_empty() {
                continue;
            }
            // A narrow shared allow (`docs/plans/*.md`, a scratch directory) is mostly written
            // for every agent on purpose, planning ones included: a block that keeps plan
            // read-only would take away the very files the author opened for it (judged on
            // the held-back real configs). The choice is said in words, with no snippet.
            let help = if r.pattern.chars().all(|c| c == '*') {
                let others: Vec<&String> = narrow
                    .iter()
                    .filter(|(loc, _)| *loc != r.loc)
                    .map(|(_, text)| text)
                    .collect();
                block_help(&reached, &others)
            } else {
                format!(
                    "if {} should not edit {} without asking, write this allow in the own blocks of the agents that should (`agent.build.permission.edit`) instead of the shared block; if {} should (a planning document, a scratch directory), it is deliberate and nothing needs to change",
                    reached.join(" and "),
                    written_pattern(ctx, r),
                    if reached.len() == 1 { "it" } else { "they" },
                )
            };
            // An ask still stops each edit for a person's yes: a warning (docs/checks.md,
            // severity rule clause 2), where an allow is an error.
            let level = if effect == Effect::Ask {
                Level::Warning
            } else {
                Level::Error
            };
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(level)
                    .with_witnesses(vec![Witness {
                        permission: "edit".into(),
                        input,
                        action: effect,
                        rule: Some(i),
                    }])
                    .with_help(help),
            );
        }
    }
}

/// The help for a shared catch-all allow: keep each reached agent read-only in its own
/// block; plan's block keeps its plans and the narrower shared allows (`others`, each
/// `, "PATTERN": "allow"`), named inline up to [`NARROW_INLINE`] (the help is a snippet to
/// paste, not a copy of a long list), else counted.
fn block_help(reached: &[&str], others: &[&String]) -> String {
    let left_out = if others.len() > NARROW_INLINE {
        others.len()
    } else {
        0
    };
    let inline: String = if left_out == 0 {
        others.iter().map(|t| t.as_str()).collect()
    } else {
        String::new()
    };
    let blocks: Vec<String> = reached
        .iter()
        .map(|name| match *name {
            "plan" => format!(
                "\"plan\": {{\"permission\": {{\"edit\": {{\"*\": \"deny\", \".opencode/plans/*.md\": \"allow\"{inline}}}}}}}"
            ),
            other => format!("\"{other}\": {{\"permission\": {{\"edit\": \"deny\"}}}}"),
        })
        .collect();
    let plans = if !reached.contains(&"plan") {
        String::new()
    } else if left_out > 0 {
        format!(
            " (plan may still write its plans, .opencode/plans/*.md; add your {left_out} narrower shared edit allows to plan's block too if plan should keep them)"
        )
    } else if inline.is_empty() {
        " (plan may still write its plans, .opencode/plans/*.md)".to_string()
    } else {
        " (plan may still write its plans, .opencode/plans/*.md, and the files your narrower shared allows give every agent)".to_string()
    };
    format!(
        "keep {} read-only in {} own block{}, which come{} last: {{\"agent\": {{{}}}}}{plans}",
        reached.join(" and "),
        if reached.len() == 1 { "its" } else { "their" },
        if reached.len() == 1 { "" } else { "s" },
        if reached.len() == 1 { "s" } else { "" },
        blocks.join(", "),
    )
}

/// A rule's pattern as its author wrote it (`~/notes/**`, not the home directory it
/// expands to), quoted as a JSON string.
fn written_pattern(ctx: &Ctx<'_>, r: &crate::model::Rule) -> String {
    let fallback = || serde_json::to_string(&r.pattern).unwrap_or_default();
    let Some(loc) = r.loc else { return fallback() };
    let text = &ctx.project.loaded.sources.get(loc.source).text;
    let raw = text.get(loc.span.start..loc.span.end).unwrap_or("");
    let key = raw
        .strip_prefix(['"', '\''])
        .and_then(|k| k.strip_suffix(['"', '\'']))
        .unwrap_or(raw);
    if key.is_empty() || key.contains(['\\', '"']) {
        return fallback();
    }
    format!("\"{key}\"")
}
