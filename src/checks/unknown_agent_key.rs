//! `unknown-agent-key` (warning; error when what it holds denies, asks or switches a tool off)
//!
//! ## What it finds
//! A key OpenCode 1.18.34 reads past without a word, where a real key was meant: in an
//! agent entry (`agent.NAME` or `mode.NAME` in a config file, or an agent file's
//! frontmatter) a near miss of an agent key (`permision`, `tool`, `Permission`) or a
//! permission written directly on the agent (`edit: deny` instead of
//! `permission: {edit: deny}`); at the top level of a config, a near miss of a top-level
//! key (`permisions`, `agnet`) or a permission written outside `permission`.
//!
//! A key is taken for a near key or a misplaced permission only when OpenCode would accept
//! its value there: `role: "Lead architect"` is not reported as a misspelt `mode`, nor
//! `skill: .opencode/skills/x/SKILL.md` as a misplaced `skill` permission, since OpenCode
//! refuses a config with `mode: "Lead architect"` or `permission: {skill: "….md"}`
//! (verified on 1.18.34); such keys are descriptive metadata.
//!
//! Other unknown agent keys are not reported: OpenCode passes them to the model provider
//! as options (`reasoningEffort: high` is meant that way). Other unknown top-level keys
//! (`theme`, `keybinds`, moved to `tui.json`) are not reported either.
//!
//! Keys other agent tools restrict an agent with (`readonly: true`, Claude Code's
//! `allowedTools` / `disallowedTools`, another harness's `disabled_tools: [bash, edit]`)
//! are reported when they hold a restriction: OpenCode passes them on as options and the
//! agent keeps every tool; the help writes the restriction as `permission` rules.
//!
//! ## Why it matters
//! OpenCode moves an unknown agent key into the agent's `options` and drops an unknown
//! top-level key, and says nothing (verified with `opencode debug config` on 1.18.34): a
//! `"permision": {"edit": "deny"}` block loses every rule in it, and the agent edits
//! freely. When the ignored value holds a `deny`, an `ask` or a `false` tool, the finding
//! is an error: the author believes something is restricted, and `check` fails by default.
//!
//! ## Example
//! ```json
//! {"agent": {"review": {"permision": {"edit": "deny"}}}}
//! ```
//!
//! A permission written beside a `permission` block that already has that key
//! (`skill: true` next to `permission: {skill: {...}}`) has no effect either, but moving it
//! would replace the block's rules: the finding says to remove the line (info when it
//! restricts nothing, or when the agent denies that permission for every input anyway:
//! `doom_loop: deny` beside `permission: {doom_loop: deny}`). A tool switch written there (`webfetch: false`) is told as the
//! permission to write (`"webfetch": "deny"`), since `permission` takes no booleans.
//!
//! ## How to fix
//! Use the key OpenCode reads: `permission` (singular), `tools` (plural), and put
//! permissions under `permission`: `{"agent": {"review": {"permission": {"edit": "deny"}}}}`.

use super::did_you_mean;
use super::unchecked_permission::CHECKED;
use super::{Check, Ctx, Finding, Level};
use crate::model::config::{self, AGENT_KEYS, TOP_LEVEL_KEYS};

pub const CHECK: Check = Check {
    id: "unknown-agent-key",
    level: Level::Warning,
    summary: "an agent or top-level key OpenCode ignores (`permision`, `tool`, `edit: deny` outside `permission`)",
    docs: include_str!("unknown_agent_key.rs"),
};

/// Where an ignored key stands and what OpenCode does with it.
fn place_and_fate(in_agent: bool) -> (&'static str, &'static str) {
    if in_agent {
        (
            "an agent",
            "OpenCode passes it to the model provider as an option",
        )
    } else {
        ("a config", "OpenCode drops it")
    }
}

/// What OpenCode would take an ignored key's value for, had it been written elsewhere;
/// asked only of the keys a diagnosis considers.
#[derive(Clone, Copy)]
pub struct Fits<'a> {
    /// Does OpenCode accept the value under this known key (`"subagent"` fits `mode`)?
    pub under: &'a dyn Fn(&str) -> bool,
    /// Is it a permission's value (`"deny"`, `{"*": "ask"}`) or a tool switch (`false`)?
    pub as_permission: &'a dyn Fn() -> bool,
}

/// What is wrong with an ignored key, or `None` when it is most likely meant (provider
/// options, keys of other tools). A key is taken for a misspelling of a known key, or for a
/// permission written in the wrong place, only when OpenCode would accept its value there:
/// `role: "Lead architect"` is no misspelt `mode` and `skill: path/SKILL.md` no misplaced
/// permission, since the fix would make OpenCode refuse the config (verified on 1.18.34).
pub fn diagnose(key: &str, in_agent: bool, fits: Fits<'_>) -> Option<String> {
    let known = if in_agent { AGENT_KEYS } else { TOP_LEVEL_KEYS };
    let (place, fate) = place_and_fate(in_agent);
    // `permissions` is V2 (refused in V1 files; handled where it is decoded).
    if key == "permissions" {
        return None;
    }
    if CHECKED.contains(&key) {
        if !(fits.as_permission)() {
            return None;
        }
        return Some(format!(
            "`{key}` is not a key of {place}: {fate}, so this permission has no effect; put it under `permission`: {{\"permission\": {{\"{key}\": ...}}}}"
        ));
    }
    let lower = key.to_lowercase();
    // Never suggest V2 `permissions`, which a V1 file may not use.
    let known: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| *k != "permissions")
        // Only the keys it may be a misspelling of are asked about its value.
        .filter(|k| k.to_lowercase() == lower || super::levenshtein(&lower, k) <= 2)
        .filter(|k| (fits.under)(k))
        .collect();
    let meant = known
        .iter()
        .find(|k| k.to_lowercase() == lower)
        .copied()
        .or_else(|| did_you_mean(&lower, known.iter().copied()))?;
    // `maxSteps` still loads but is deprecated: point at the key to write.
    let meant = if meant == "maxSteps" { "steps" } else { meant };
    Some(format!(
        "`{key}` is not a key of {place}: {fate}, and what it holds has no effect; did you mean `{meant}`?"
    ))
}

/// Keys other agent tools restrict an agent with (Claude Code's `allowedTools` and
/// `disallowedTools`, a `readonly` flag): written in an OpenCode agent, the author believes
/// the agent is restricted, and OpenCode passes the key to the model as an option (an agent
/// with `readonly: true` edits files: checked on 1.18.34; blind fresh-4 A, josepfs, kjanat).
const FOREIGN_RESTRICTIONS: &[&str] = &[
    "readonly",
    "readOnly",
    "read_only",
    "read-only",
    "allowedTools",
    "allowed-tools",
    "allowed_tools",
    "disallowedTools",
    "disallowed-tools",
    "disallowed_tools",
    // Another harness's list of tools to turn off (blind fresh-5 B: mane-pal's plan and
    // explore, `disabled_tools: [bash, write, edit]`; checked on 1.18.34: plan keeps bash).
    "disabledTools",
    "disabled-tools",
    "disabled_tools",
];

/// The finding for a foreign restriction key holding a restriction (`readonly: true`, a
/// non-empty tool list), or `None`.
fn foreign(
    key: &str,
    value: &crate::syntax::value::Value,
    json: bool,
    agent: &str,
) -> Option<String> {
    use crate::syntax::value::Value;
    if !FOREIGN_RESTRICTIONS.contains(&key) {
        return None;
    }
    let restricts = match value {
        Value::Bool(b) => *b,
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => false,
    };
    if !restricts {
        return None;
    }
    let (_, fate) = place_and_fate(true);
    let plain = key.to_lowercase().replace(['-', '_'], "");
    Some(
        if let (true, Value::Array(items)) = (plain.starts_with("dis"), value) {
            // A list of tools to turn off: each as a deny (the file tools all as `edit`).
            let mut denies: Vec<String> = Vec::new();
            for i in items {
                if let Value::String(t) = &i.value {
                    let t = match t.as_str() {
                        "write" | "patch" | "multiedit" | "apply_patch" => "edit",
                        t => t,
                    };
                    // Plan keeps writing its plans (its built-in exception, which an
                    // `edit: deny` of its own would undo).
                    let e = match (json, agent == "plan" && t == "edit") {
                        (true, true) => {
                            "\"edit\": {\"*\": \"deny\", \".opencode/plans/*.md\": \"allow\"}"
                                .to_string()
                        }
                        (false, true) => {
                            "edit: {\"*\": deny, \".opencode/plans/*.md\": allow}".to_string()
                        }
                        (true, false) => format!("\"{t}\": \"deny\""),
                        (false, false) => format!("{t}: deny"),
                    };
                    if !denies.contains(&e) {
                        denies.push(e);
                    }
                }
            }
            format!(
                "`{key}` is not an OpenCode key: {fate}, so every tool it lists stays on; write each as a deny under `permission`: `{}: {{{}}}` (`write` and `patch` are checked as `edit`)",
                if json { "\"permission\"" } else { "permission" },
                denies.join(", ")
            )
        } else if plain == "readonly" {
            format!(
                "`{key}` is not an OpenCode key: {fate}, so the agent is not read-only: it edits files and runs commands as its rules allow; to make it read-only, write `permission: {{edit: deny}}` and deny or ask the `bash` commands that write (`bash: {{\"*\": ask}}`)"
            )
        } else {
            format!(
                "`{key}` is another tool's key (Claude Code's), not OpenCode's: {fate}, so it restricts no tool; write the restriction as `permission` rules: `\"*\": deny` first, then an `allow` for each tool it means to keep"
            )
        },
    )
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for k in &ctx.project.loaded.audit.ignored_keys {
        if k.agent.is_some()
            && let Some(message) = foreign(
                &k.key,
                &k.value.value,
                !ctx.project
                    .loaded
                    .sources
                    .get(k.loc.source)
                    .name()
                    .ends_with(".md"),
                k.agent.as_deref().unwrap_or_default(),
            )
        {
            out.push(
                Finding::at(&CHECK, Some(k.loc), message)
                    .with_level(Level::Warning)
                    .with_agents(k.agent.iter().cloned().collect()),
            );
            continue;
        }
        let (sw, in_agent) = (&ctx.project.loaded.switches, k.agent.is_some());
        let fits = Fits {
            under: &|known| config::accepts(known, &k.value, in_agent, sw),
            as_permission: &|| {
                k.switch.is_some() || config::accepts_as_permission(&k.key, &k.value, in_agent, sw)
            },
        };
        let Some(mut message) = diagnose(&k.key, k.agent.is_some(), fits) else {
            continue;
        };
        // A dropped deny, ask or switched-off tool is lost protection: an error, so `check`
        // fails on it by default.
        let mut level = if k.lost_protection {
            Level::Error
        } else {
            CHECK.level
        };
        if CHECKED.contains(&k.key.as_str()) {
            let (place, fate) = place_and_fate(k.agent.is_some());
            let key = &k.key;
            if let Some(there) = k.in_permission {
                // Moving it would replace the rules `permission` already has for it.
                message = format!(
                    "`{key}` is not a key of {place}: {fate}, so this line has no effect; `permission` already has `{key}` (at {}), which decides it: remove this line",
                    ctx.project.loaded.sources.position(there)
                );
                // `skill: true` beside a `skill` block: nothing believed is lost; nor is a
                // `doom_loop: deny` beside `permission: {doom_loop: deny}`, when the agent
                // denies that permission whatever the input (severity rule clause 3,
                // docs/checks.md).
                if !k.lost_protection || denied_anyway(ctx, k.agent.as_deref(), key) {
                    level = Level::Info;
                }
            } else if let Some(on) = k.switch {
                let action = if on { "allow" } else { "deny" };
                message = format!(
                    "`{key}: {on}` is not a key of {place}: {fate}, so this switch has no effect; write it as a permission: {{\"permission\": {{\"{key}\": \"{action}\"}}}}"
                );
            }
        }
        out.push(
            Finding::at(&CHECK, Some(k.loc), message)
                .with_level(level)
                .with_agents(k.agent.iter().cloned().collect()),
        );
    }
}

/// Does `agent` deny `permission` for every input (tried: `*` and an ordinary word)?
fn denied_anyway(ctx: &Ctx<'_>, agent: Option<&str>, permission: &str) -> bool {
    let Some(agent) = agent.and_then(|n| ctx.project.agents.iter().find(|a| a.name == n)) else {
        return false;
    };
    ["*", "x"].iter().all(|input| {
        ctx.witness_of(agent, permission, input)
            .is_some_and(|w| w.action == crate::model::Effect::Deny)
    })
}

#[cfg(test)]
mod tests {
    use super::{Fits, diagnose};

    /// A value OpenCode would accept anywhere it is suggested.
    fn any() -> Fits<'static> {
        Fits {
            under: &|_| true,
            as_permission: &|| true,
        }
    }

    #[test]
    fn near_misses_and_permissions_are_reported_provider_options_are_not() {
        for (key, agent, needle) in [
            ("permision", true, "did you mean `permission`"),
            ("tool", true, "did you mean `tools`"),
            ("Permission", true, "did you mean `permission`"),
            ("descripton", true, "did you mean `description`"),
            ("maxStep", true, "did you mean `steps`"),
            ("MaxSteps", true, "did you mean `steps`"),
            ("edit", true, "put it under `permission`"),
            ("permisions", false, "did you mean `permission`"),
            ("agnet", false, "did you mean `agent`"),
            ("bash", false, "put it under `permission`"),
        ] {
            let d = diagnose(key, agent, any()).unwrap_or_default();
            assert!(d.contains(needle), "{key}: {d}");
        }
        for (key, agent) in [
            ("reasoningEffort", true),
            ("textVerbosity", true),
            ("permissions", true),
            ("theme", false),
            ("keybinds", false),
        ] {
            assert_eq!(diagnose(key, agent, any()), None, "{key}");
        }
    }

    #[test]
    fn a_value_the_meant_key_refuses_is_no_near_miss() {
        // `role: "Lead architect"`: `mode` is near, but OpenCode refuses that mode.
        let text = Fits {
            under: &|k| ["model", "prompt", "description", "name", "variant"].contains(&k),
            as_permission: &|| false,
        };
        assert_eq!(diagnose("role", true, text), None);
        assert!(diagnose("role", true, any()).is_some_and(|d| d.contains("`mode`")));
        // `skill: path/SKILL.md` is no permission value: not a misplaced `skill` rule.
        assert_eq!(diagnose("skill", true, text), None);
        // A near key the value fits is still suggested: `modle: "openai/gpt-5"`.
        assert!(diagnose("modle", true, text).is_some_and(|d| d.contains("`model`")));
    }
}
