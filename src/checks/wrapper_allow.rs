//! `wrapper-allow` (warning)
//!
//! ## What it finds
//! A command runner allowed by name (`"xargs *": "allow"`, `"command *"`, `"env *"`,
//! `"timeout *"`, `"nohup *"`, `"nice *"`, `"stdbuf *"`, `"sudo *"`, `"sh -c *"`, `"uv run*"` …) in an agent that
//! denies or asks for a command through its own rules: the runner runs that command
//! without asking. `xargs rm -rf src` is one command to OpenCode's bash tool, whose text
//! starts with `xargs`, so `"xargs *": "allow"` decides it and `"rm -rf *": "deny"` never
//! sees it. Decided as `explain bash` decides it (`crate::call`), for each of the agent's
//! own denies and asks (a catch-all is left out: the allow is its exception), the deny
//! first; one finding per allow, naming every agent it opens. An interpreter counts only
//! where the allow names its code flag (`"python3 -c *"`, `"node -e *"`; `python *` is
//! how a project runs its scripts, which run anything too), and such an allow (or `sh -c
//! *`) is reported under a catch-all alone too (`"*": "ask"`): every command the
//! catch-all asks about runs through it.
//!
//! ## Why it matters
//! OpenCode 1.18.34 matches each command's text as written; it does not look inside a
//! runner (its arity table has no `xargs`, `timeout` or `sudo`). A model refused
//! `rm -rf dist` can try `xargs rm -rf` or `command rm -rf dist` next, and it runs.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"*": "allow", "rm -rf *": "deny", "xargs *": "allow"}}}
//! ```
//! `ls | xargs rm -rf` deletes without asking.
//!
//! ## How to fix
//! Narrow the allow to what the runner is for (`"timeout 60 npm test*": "allow"`), or deny
//! (or ask for) the wrapped form after it in the same block: `"xargs *rm -rf *": "deny"`.
//! A runner that may run anything is an allow of every command.

use super::deny_bypass::{call_bash, literal_prefix};
use super::{Check, Ctx, Finding, Level, Witness, describe};
use crate::glob::Wildcard;
use crate::model::{Action, Effect};
use crate::shell::Places;

pub const CHECK: Check = Check {
    id: "wrapper-allow",
    level: Level::Warning,
    summary: "a command runner allowed by name (xargs, command, env, timeout, sudo, sh -c …) runs the commands the agent denies or asks for, without asking",
    docs: include_str!("wrapper_allow.rs"),
};

/// Runners people allow by name, and how each runs `CMD`. Checked on the binary (1.18.34,
/// `debug agent build --tool bash` under `{"*": "allow", "rm -rf *": "deny", "<runner> *":
/// "allow"}`): each wrapped command runs.
const RUNNERS: &[(&str, &str)] = &[
    ("xargs", "xargs CMD"),
    ("command", "command CMD"),
    ("env", "env CMD"),
    ("nohup", "nohup CMD"),
    ("timeout", "timeout 60 CMD"),
    ("nice", "nice CMD"),
    ("stdbuf", "stdbuf -oL CMD"),
    ("sudo", "sudo CMD"),
    ("sh -c", "sh -c 'CMD'"),
    ("bash -c", "bash -c 'CMD'"),
    ("zsh -c", "zsh -c 'CMD'"),
    // `uv run` runs any command in the project's environment (blind fresh-6 A: orwatch's
    // researcher denies `python *` and allows `uv run*`). Checked on 1.18.34: `uv run
    // python --version` runs under `{"*": "deny", "uv run*": "allow", "python *": "deny"}`.
    ("uv run", "uv run CMD"),
    // Interpreters given code on the command line run any command through their standard
    // library (blind fresh-8: timosur's `python3 -c *` under `"*": "ask"`). Checked on 1.18.34: `python3 -c 'import os;
    // os.system("echo hi")'` runs under `{"*": "deny", "python3 *": "allow"}`.
    ("python -c", "python -c 'import os; os.system(\"CMD\")'"),
    ("python3 -c", "python3 -c 'import os; os.system(\"CMD\")'"),
    (
        "node -e",
        "node -e 'require(\"child_process\").execSync(\"CMD\")'",
    ),
    ("perl -e", "perl -e 'system(\"CMD\")'"),
    ("ruby -e", "ruby -e 'system(\"CMD\")'"),
];

/// Does the runner run code of a language (not a command line)? Its wrapped form is no
/// guard then: the program may reach the command in many spellings.
fn interpreter(name: &str) -> bool {
    name.ends_with(" -e") || name.starts_with("python")
}

/// A command a catch-all asks or denies that everyone recognises as destructive: the
/// witness where an allow of running code (`"python3 -c *"`, `"sh -c *"`) is an exception
/// to a catch-all alone.
const DESTROYS: &str = "rm -rf src";

/// The runner an allow names (`xargs *`, `xargs*`, `sh -c *`, `bash *` for `bash -c`), with
/// its template; `None` for any other pattern.
fn runner(pattern: &str) -> Option<(&'static str, &'static str)> {
    let lit = literal_prefix(pattern);
    if lit.len() == pattern.len() {
        return None; // an exact command, no runner of anything
    }
    let lit = lit.trim_end();
    // An interpreter only where the allow names its code flag (`python3 -c *`): `python *`
    // is how a project runs its scripts, and a script runs anything too; no allow-list
    // entry narrows that (judged on the real-config corpus: `python *` beside `npm *` or
    // `sudo *` denies in language-developer agents).
    RUNNERS.iter().copied().find(|(name, _)| {
        lit == *name
            || (!interpreter(name) && name.split_once(' ').is_some_and(|(prog, _)| lit == prog))
    })
}

/// A command the agent's own non-catch-all deny or ask `pattern` decides, made from it.
pub(super) fn sample(pattern: &str) -> Option<String> {
    let lit = literal_prefix(pattern).trim();
    if lit.is_empty() || lit.contains(['\'', '"', '\\', '$', '`', ';', '|', '&']) {
        return None;
    }
    let w = Wildcard::compile(pattern);
    // An everyday command first (`git add .`), then the bare command (`git add`).
    super::examples::everyday("bash", pattern)
        .iter()
        .map(|s| s.to_string())
        .chain([w.fill(""), w.fill("x"), w.fill("src")])
        .filter(|s| {
            w.is_match(s, crate::glob::Platform::Unix)
                || w.is_match(s.trim(), crate::glob::Platform::Unix)
        })
        .map(|s| s.trim().to_string())
        // `gh  approve` (a `*` filled with nothing inside) is no command a person writes.
        .find(|s| !s.is_empty() && !s.contains(['*', '?']) && !s.contains("  "))
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    let mut splitter = ctx.splitter();
    let places = Places::of(ctx.project.loaded.paths());
    for agent in ctx.project.agents.iter() {
        if agent.is_internal() {
            continue;
        }
        // The agent's own guards: user-written bash denies, then asks, not catch-alls.
        let guards: Vec<usize> = [Action::Deny, Action::Ask]
            .iter()
            .flat_map(|want| {
                agent.rules.iter().enumerate().filter(move |(_, r)| {
                    r.loc.is_some()
                        && r.action == *want
                        && r.permission == "bash"
                        && !literal_prefix(&r.pattern).trim().is_empty()
                })
            })
            .map(|(k, _)| k)
            .collect();
        for (i, r) in agent.rules.iter().enumerate() {
            if r.loc.is_none()
                || r.action != Action::Allow
                || !Wildcard::compile(&r.permission).is_match("bash", platform)
            {
                continue;
            }
            let Some((name, template)) = runner(&r.pattern) else {
                continue;
            };
            let try_guard = |splitter: &mut crate::shell::Splitter, k: usize, command: String| {
                let direct = call_bash(ctx, agent, splitter, &places, &command);
                if direct.effect == Effect::Allow
                    || direct.decision().and_then(|x| x.rule) != Some(k)
                {
                    return None;
                }
                let wrapped = template.replace("CMD", &command);
                let d = call_bash(ctx, agent, splitter, &places, &wrapped);
                (d.effect == Effect::Allow && d.bash.len() == 1 && d.bash[0].rule == Some(i))
                    .then_some((k, command, wrapped, direct.effect))
            };
            let mut found = guards
                .iter()
                .find_map(|&k| try_guard(&mut splitter, k, sample(&agent.rules[k].pattern)?));
            // An allow written for running code (`"python3 -c *"`, `"sh -c *"`, the flag in
            // the pattern) under a catch-all that asks or denies: every command the
            // catch-all stops runs through it.
            let code_flag = literal_prefix(&r.pattern).trim_end() == name
                && (interpreter(name) || name.ends_with(" -c"));
            if found.is_none() && code_flag {
                let d = call_bash(ctx, agent, &mut splitter, &places, DESTROYS);
                if let Some(k) = d.decision().and_then(|x| x.rule)
                    && agent.rules.get(k).is_some_and(|g| {
                        g.loc.is_some() && literal_prefix(&g.pattern).trim().is_empty()
                    })
                {
                    found = try_guard(&mut splitter, k, DESTROYS.to_string());
                }
            }
            let Some((k, command, wrapped, effect)) = found else {
                continue;
            };
            let g = &agent.rules[k];
            let prog = name.split(' ').next().unwrap_or(name);
            let message = format!(
                "this allow lets `{wrapped}` run without asking, and `{prog}` runs `{command}`, which {} ({}): OpenCode matches the command as written, never the command a runner runs",
                if effect == Effect::Deny {
                    "is denied"
                } else {
                    "asks"
                },
                ctx.rule_at(g)
            );
            // The wrapped form of the guard, proven to catch the witness.
            let guard_form = format!("{prog} *{}", g.pattern);
            let action = if effect == Effect::Deny {
                "deny"
            } else {
                "ask"
            };
            let example = match prog {
                "timeout" => Some("\"timeout 60 npm test*\""),
                "xargs" => Some("\"xargs grep *\""),
                "env" => Some("\"env NODE_ENV=test npm test*\""),
                "command" => Some("\"command -v *\""),
                "nohup" => Some("\"nohup npm run dev*\""),
                _ => None,
            };
            let mut help = match example {
                _ if code_flag => format!(
                    "`{name}` runs whatever it is given, so this allow lets every command run that the rule it walks around stops: remove it, so `{name}` {} as that rule does, or allow only the exact commands you use, each written out",
                    if effect == Effect::Deny {
                        "is denied"
                    } else {
                        "asks"
                    }
                ),
                Some(e) => format!(
                    "narrow the allow to what `{prog}` is for (e.g. `{e}`), so it runs no other command"
                ),
                None => format!(
                    "narrow the allow to the commands you mean `{prog}` to run, each written out, so it runs no other command"
                ),
            };
            if !code_flag && Wildcard::compile(&guard_form).is_match(&wrapped, platform) {
                help.push_str(&format!(
                    "; or {action} the wrapped form after it in the same block: {}: \"{action}\"",
                    serde_json::to_string(&guard_form).unwrap_or_default()
                ));
            }
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(Level::Warning)
                    .with_related(
                        g.loc
                            .map(|l| {
                                vec![(
                                    l,
                                    format!(
                                        "the {} it walks around: {}",
                                        if effect == Effect::Deny {
                                            "deny"
                                        } else {
                                            "ask"
                                        },
                                        describe(g)
                                    ),
                                )]
                            })
                            .unwrap_or_default(),
                    )
                    .with_witnesses(vec![
                        Witness {
                            permission: "bash".into(),
                            input: wrapped,
                            action: Effect::Allow,
                            rule: Some(i),
                        },
                        Witness {
                            permission: "bash".into(),
                            input: command,
                            action: effect,
                            rule: Some(k),
                        },
                    ])
                    .with_help(help),
            );
        }
    }
}
