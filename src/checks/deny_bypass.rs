//! `deny-bypass` (warning on secret-shaped paths and for an allowed command's write mode;
//! info otherwise)
//!
//! ## What it finds
//! A `read` or `edit` deny on a path that the same agent can walk around with bash,
//! without being asked: `cat FILE`, `grep -r x FILE`, `head FILE` read it, `sed -i … FILE`,
//! `cp x FILE`, `tee FILE` write it. Each command is decided exactly as `explain bash`
//! decides it (OpenCode's bash tool splits it and asks about every part); the first one
//! that runs without a question is named with the rule that lets it.
//!
//! Only denies you wrote are looked at, and only agents the model can act as (hidden
//! agents are left out); one finding per agent and permission, at its first deny that
//! bash walks around (the same commands pass the others). An agent that asks before
//! every such command is not reported. An agent's own `tools` switch turning editing off
//! (`tools: {write: false, edit: false}`) counts as its `edit` deny: the agent is meant
//! not to write, and bash writes anyway (a warning, as for `permission: {edit: deny}`).
//!
//! And, at the allow (a warning): a command you allow by name (`"find *": "allow"`,
//! `"sed *": "allow"`, `"echo *": "allow"`, `"git branch *": "allow"`, `yq`, `curl`,
//! `wget`, `npm audit`) whose write or destroy mode runs without asking where the agent's
//! other rules ask or deny for what that mode does: `sed -i`, `yq -i`, `curl -o FILE`,
//! `wget -O FILE` or `echo x > FILE` (`printf` too) writes a file the agent's `edit` rules
//! ask or deny for, and `npm audit fix` rewrites `package.json`; `find … -delete` (or `-exec rm`) deletes files while `rm` asks or is denied;
//! `git branch -D` or `git stash drop` deletes git work while `git reset --hard`,
//! `git clean` or `git stash drop` asks or is denied; `git checkout -- FILE` discards
//! uncommitted changes while a rule naming `git reset --hard` (or `git restore .`,
//! `git clean`) asks or denies, or the file's `edit` rules do (not under a catch-all
//! alone, nor where `git restore .` or `git reset --hard` runs anyway). Decided as
//! `explain bash` decides it (`crate::call`), on commands checked on the binary. Only allows naming the program
//! (`git *` allows the whole program; it is no list entry), and only modes the allow
//! itself decides (`"sed -n *": "allow"`, or a later `"sed -i*": "ask"`, opens nothing).
//! The rule that asks or denies may be a catch-all (`"*": "ask"`, a read-only agent's
//! `"*": "deny"`): the allow-list entry is meant for reading (`find` to list files) and
//! its delete mode is exactly what the rest of the block asks or denies; two blind expert
//! readings of held-back configs (`tests/real/expert.tsv`, ALLOW-WRITE-MODE) flag both. A
//! built-in rule counts where the allow is in the agent's own block (`"echo *": "allow"`
//! in plan's block opens writes past plan's built-in edit deny), not where a shared
//! allow-list merely reaches explore. Read-only entries stay silent: `git log*` and `ls *`
//! have no such mode, and `cat *` writes only through a redirection, as every command
//! does. `git *` (or `git push *`, `git reset *`) opens git's own destructive modes:
//! `git clean -fdx` deletes untracked files where `rm` asks or is denied, `git reset --hard`
//! discards changes the agent may not edit, `git push --force` overwrites the remote's
//! history where destroying work locally (`rm -rf src`) asks or is denied. `grep *` and
//! `rg *` write through a redirect (`grep -r x . > FILE`) only where the file's edit is
//! denied (a reviewer): beside an edit ask nobody edits that way.
//! An allow-list with no catch-all of its own, under OpenCode's built-in `*` allow, is
//! reported too when the same block asks or denies the harm by name (`"rm *": "ask"`
//! beside `"find *": "allow"`): the author reads the list as safe, and the mode is
//! exactly what the ask is for (blind fresh-8: davidkristiansen).
//! One finding per block (an agent's `bash` object in one file), at its first such
//! entry, naming the others; an edit deny above that `sed -i` walks around through such an
//! allow is reported there, once. A reader allowed by name (`cat *`, `head *`, `tail *`)
//! under a catch-all that asks or denies prints `.env` while the read tool asks for it
//! (OpenCode's built-in `*.env` ask, or yours): a finding of its own per block, at the
//! allow (blind fresh-4 B: four configs). A read deny that `cat .env` walks around is
//! reported at the deny, even where the same `cat *` opens a redirect.
//!
//! ## Why it matters
//! OpenCode checks the `read` permission in the read tool only. A model refused
//! `read .env` often tries `cat .env` next; with bash allowed (the default for `build`),
//! it runs. Likewise the bash tool matches the whole command text against your patterns:
//! `find *` matches `find . -name x -delete`, and `echo *` matches `echo x > src/main.ts`
//! (a redirection is part of the text OpenCode checks).
//!
//! ## Example
//! ```json
//! {"permission": {"read": {"*": "allow", "*.env": "deny"}}}
//! ```
//! `cat .env` still runs without asking.
//! ```json
//! {"permission": {"edit": "ask", "bash": {"*": "ask", "sed *": "allow"}}}
//! ```
//! `sed -i s/x/y/ src/main.ts` edits the file without the edit prompt.
//!
//! ## How to fix
//! Deny the commands that walk around it too, right after the rule that lets them run
//! (`"cat *.env*": "deny"` after `"*": "allow"`), so the rest of bash stays as you set
//! it; `check` proposes those rules for your config once it has proven them (the finding
//! gone, nothing else denied that you decided). Where the deny is an agent's own and the
//! rule that lets the commands run is shared (or built in), the denies go in that agent's
//! own `bash` rules, beside its deny: in the shared block they would bind every agent. Where
//! a `tools: {bash: true}` switch lets them run, they go under `permission` in that file,
//! after `"*": "allow"` (an own `permission.bash` replaces the switch). Where the command's
//! own program is allowed by name (`tee *`), that allow is what to narrow. Or keep secrets
//! outside the project.
//! Listing readers never covers interpreters (`python`, `node`) that read files too.
//! An agent denied every edit (a reviewer) gets no such list: bash writes files in more
//! ways than a list can name (`echo x > FILE` passes `sed -i *`, `cp *`, `tee *` denied,
//! and denying `cp` takes it from an agent that copies). The help says the choice in
//! words, in the file's syntax: make the agent's bash ask (the catch-all first, then the
//! read-only commands it needs), or switch bash off for it.
//! For an allowed command's write mode, ask (or deny) for exactly that mode after the
//! allow, in the same block: `"sed *": "allow", "sed -i*": "ask", "sed * -i*": "ask"`; the
//! rest of `sed` stays allowed. When that block is shared and the same allow reaches agents
//! outside the finding (whose rules let them write, or only ask where the finding denies),
//! the help puts the entries in the named agents' own blocks instead, and says why.

use super::always_overrides_deny::decide_command;
use super::read_only_agent_writes::samples;
use super::{Check, Ctx, Finding, Level, Reach, Witness, describe, is_own};
use crate::agents::Agent;
use crate::call::{self, Asks};
use crate::glob::Wildcard;
use crate::model::{Action, Effect};
use crate::shell::decide::Decided;
use crate::shell::{Places, Splitter};
use std::collections::HashSet;

pub const CHECK: Check = Check {
    id: "deny-bypass",
    level: Level::Warning,
    summary: "a read/edit deny that a bash command (cat, grep, sed -i, cp …) walks around without asking",
    docs: include_str!("deny_bypass.rs"),
};

/// Commands that read (`read`) or write (`edit`) `FILE`.
pub(super) fn commands(permission: &str) -> &'static [&'static str] {
    match permission {
        "read" => &["cat FILE", "grep -r x FILE", "head FILE"],
        _ => &["sed -i s/x/y/ FILE", "cp x FILE", "tee FILE"],
    }
}

/// A path shell quoting leaves alone.
fn plain(path: &str) -> bool {
    !path.is_empty()
        && !path.ends_with('/')
        && !path.starts_with('/')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+@%,".contains(c))
}

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut splitter = ctx.splitter();
    let places = Places::of(ctx.project.loaded.paths());
    // The allows whose write mode is reported (agent, rule): a deny that the same mode
    // walks around is that finding's story, told once at its cause.
    let opened = write_modes(ctx, reach, &mut splitter, &places, out);
    for (a, agent) in ctx.project.agents.iter().enumerate() {
        if agent.is_internal() {
            continue;
        }
        let mut reported = HashSet::new();
        for (i, r) in agent.rules.iter().enumerate() {
            if r.loc.is_none() {
                continue;
            }
            let permission = r.permission.as_str();
            if r.action != Action::Deny || !matches!(permission, "read" | "edit") {
                continue;
            }
            // A legacy `tools: {write: false}` switches a tool off; it is no deny on a path
            // to walk around (and `legacy-tools` speaks for that place). Except an agent's own
            // switch turning editing off (`tools: {edit: false}`, or `write`/`patch`): the
            // agent is meant not to write, as with `permission: {edit: deny}`, and bash
            // writes anyway (blind fresh-5 A: four agents, e.g. `echo hi > x` ran; fresh-4:
            // rchrd-0's review agent).
            let legacy_edit_off = r.layer == crate::model::Layer::AgentLegacyTools
                && permission == "edit"
                && r.pattern == "*"
                && !agent.native;
            if matches!(
                r.layer,
                crate::model::Layer::LegacyTools | crate::model::Layer::AgentLegacyTools
            ) && !legacy_edit_off
            {
                continue;
            }
            if reported.contains(permission)
                || !matches!(reach[a].get(i), Some(Some(Reach::Decides(_))))
            {
                continue; // one finding per agent and permission: its first such deny
            }
            // A path this deny still denies.
            let mut candidates = samples(permission, &r.pattern);
            candidates.rotate_right(1); // the glob without its wildcards first (`.env`)
            let Some(path) = candidates.into_iter().find(|p| {
                plain(p)
                    && ctx.rule_decides(a, i, &crate::glob::analysis::Input::new(permission, p))
            }) else {
                continue;
            };
            let found = commands(permission).iter().find_map(|c| {
                let command = c.replace("FILE", &path);
                let d = decide_command(ctx, agent, &mut splitter, &command, None);
                (d.effect == Effect::Allow).then_some((command, d))
            });
            let Some((command, d)) = found else { continue };
            reported.insert(permission);
            let decider = d.bash.last().and_then(|x| x.rule);
            // An edit deny walked around by a write mode is said at the allow that opens
            // it, where the fix goes. A read deny is not: `cat .env` is no write mode, and
            // the allow's finding (about `cat x > FILE`) neither names it nor fixes it.
            if permission == "edit" && decider.is_some_and(|k| opened.contains(&(a, k))) {
                continue;
            }
            // Judged on the real-config corpus: a walked-around deny on a secret (`.env`,
            // keys, credentials) is what authors act on; on other paths (a read-only
            // subagent's `edit * deny` beside a free bash) it is a note. Severity rule
            // (docs/checks.md): the deny takes effect on every input its own tool asks, so
            // clause 1 does not apply; the note says how likely the other route is.
            // And an agent made read-only by its `edit` deny on every file (a reviewer,
            // an auditor) that rewrites any file with `sed -i` is not read-only at all:
            // both blind expert readings flag it (DENY-BYPASS-BASH-ALLOW and -DEFAULT in
            // tests/real/expert.tsv); severity rule clause 2, the protection the author
            // wrote is lost.
            // A user's own agent only: OpenCode's plan is read-only by its edit deny with
            // bash left free by design, and writing plan's deny into its block (as
            // `read-only-agent-writes` advises) keeps that design.
            let read_only =
                permission == "edit" && r.pattern == "*" && !agent.native && is_own(r.layer);
            let level = if crate::map::is_secret_shaped(&path) || read_only {
                Level::Warning
            } else {
                Level::Info
            };
            let message = format!(
                "{} does not stop bash: `{command}` runs without asking (decided by {})",
                if legacy_edit_off {
                    format!(
                        "this `tools` switch turns editing off ({}) but",
                        describe(r)
                    )
                } else {
                    format!("this deny ({})", describe(r))
                },
                decider
                    .map(|k| ctx.decider_place(&agent.rules[k]))
                    .unwrap_or_else(|| "no rule".into())
            );
            // The targeted change (deny the commands that walk around it, after the rule
            // that lets them) is built for this config and proven before it is shown
            // (`fix::suggest`); these words hold whatever the config.
            // Where the denies go: after the rule that lets the command run, unless this
            // deny is the agent's own and that rule is shared (or none, or built in): a
            // deny there would bind every agent that inherits it (build's `sed -i` too,
            // which the author lets write), so in the agent's own rules, which come after.
            let deny_own = is_own(r.layer);
            let decider_rule = decider.map(|k| &agent.rules[k]).filter(|x| x.loc.is_some());
            let place = match decider_rule {
                // A `tools: {bash: true}` switch: an agent's own `permission.bash` replaces
                // it (checked on 1.18.34: with both in one agent file the switch adds no
                // rule), so the denies go there, after an allow that keeps the rest of bash
                // as the switch had it; a shared deny would come before the switch.
                Some(x)
                    if matches!(
                        x.layer,
                        crate::model::Layer::LegacyTools | crate::model::Layer::AgentLegacyTools
                    ) =>
                {
                    format!(
                        "under `permission` in the file of the `tools` switch that lets them run (at {}): `bash` rules there replace that switch, so write `\"*\": \"allow\"` first, then the denies",
                        ctx.decider_place(x)
                    )
                }
                Some(x) if is_own(x.layer) || !deny_own => {
                    "after the rule that lets them run".to_string()
                }
                Some(x) => format!(
                    "in `{}`'s own `bash` rules, beside this deny (they come after the shared rule that lets them run, at {}; a deny written there would bind every agent that inherits it)",
                    agent.name,
                    ctx.decider_place(x)
                ),
                None if deny_own => format!(
                    "in `{}`'s own `bash` rules, beside this deny (a built-in rule lets them run; any rule you write comes after it)",
                    agent.name
                ),
                None => "in the `bash` rules of this deny's block (a built-in rule lets them run; any rule you write comes after it)".to_string(),
            };
            // The command's own program allowed by name (`tee *` in a test runner, to save
            // output): denying it after that allow undoes what the author allowed on purpose;
            // the allow is what to narrow.
            let program = command.split(' ').next().unwrap_or_default();
            let by_name =
                decider_rule.filter(|x| permission == "edit" && names_program(&x.pattern, program));
            // Not when the deny is the agent's own and the allow is shared: a rule in the
            // agent's own block comes after the shared allow and binds that agent only,
            // while narrowing the shared allow would make every agent that uses it ask
            // (judged harmful, blind fresh-4 B: bennett-wendorf's read-only reviewers under
            // a shared `cp *` allow the other agents rely on).
            let shared_by_name = by_name.filter(|x| deny_own && !is_own(x.layer));
            let help: String = if read_only {
                // No list of denied commands closes bash for an agent that may write nothing
                // (blind fresh-5 A: `sed -i *`, `cp *`, `mv *`, `tee *` denied, `echo x > f`
                // still wrote, and the list forbade the `cp` a deploy agent needs): the
                // choice, in words.
                // In the file's own syntax: YAML flow style in a markdown agent.
                let markdown = r.loc.is_some_and(|l| {
                    ctx.project
                        .loaded
                        .sources
                        .get(l.source)
                        .name()
                        .ends_with(".md")
                });
                // The shared bash rules that ask or deny for this agent today: its own `*`
                // would override them, so the block repeats them after it (blind fresh-9 A:
                // Hovirix's reviewer, whose `"*": ask` turned the project's `sops *` deny
                // into a question).
                let mut kept: Vec<(String, Effect)> = Vec::new();
                for x in agent.rules.iter().filter(|x| {
                    x.loc.is_some()
                        && x.permission == "bash"
                        && !is_own(x.layer)
                        && x.action.effective() != Effect::Allow
                        && !x.pattern.chars().all(|c| c == '*')
                }) {
                    kept.retain(|(p, _)| *p != x.pattern);
                    kept.push((x.pattern.clone(), x.action.effective()));
                }
                // An agent with its own `bash` entries (a writer's deny-list): the catch-all
                // goes first in that block, which keeps its entries (a whole new block
                // pasted over it would drop them; blind fresh-9 A: Hovirix's operations).
                let own_bash: Vec<&str> = agent
                    .rules
                    .iter()
                    .filter(|x| {
                        x.permission == "bash"
                            && is_own(x.layer)
                            && x.loc.map(|l| l.source) == r.loc.map(|l| l.source)
                            && !matches!(
                                x.layer,
                                crate::model::Layer::LegacyTools
                                    | crate::model::Layer::AgentLegacyTools
                            )
                    })
                    .map(|x| x.pattern.as_str())
                    .collect();
                // Its own entries already stand in that block.
                kept.retain(|(p, _)| !own_bash.contains(&p.as_str()));
                let repeat: Vec<String> =
                    kept.iter().map(|(p, e)| entry(p, *e, markdown)).collect();
                let (inline, words) = if repeat.len() <= 6 {
                    (
                        repeat.iter().map(|e| format!(", {e}")).collect::<String>(),
                        String::new(),
                    )
                } else {
                    (
                        String::new(),
                        format!(
                            ", then the {} shared bash rules that ask or deny for it today ({}), which its `*` would otherwise override",
                            repeat.len(),
                            super::named_list(&repeat, 3)
                        ),
                    )
                };
                let (block, off) = match (markdown, legacy_edit_off) {
                    _ if !own_bash.is_empty() => (
                        format!(
                            "in its own `bash` rules, {} as the first entry (its entries stay after it, as written), then {} for the read-only commands it needs{}",
                            if markdown {
                                "`\"*\": ask`"
                            } else {
                                "`\"*\": \"ask\"`"
                            },
                            if markdown {
                                "`\"git diff*\": allow` (and `\"git *--output*\": deny`, since `--output` writes a file)"
                            } else {
                                "`\"git diff*\": \"allow\"` (and `\"git *--output*\": \"deny\"`, since `--output` writes a file)"
                            },
                            if repeat.is_empty() {
                                String::new()
                            } else {
                                format!(
                                    ", and the shared bash rules that ask or deny for it today, which its `*` would otherwise override: {}",
                                    repeat.join(", ")
                                )
                            }
                        ),
                        if markdown {
                            "`bash: deny`"
                        } else {
                            "`\"bash\": \"deny\"`"
                        },
                    ),
                    (true, true) => (
                        format!(
                            "in its frontmatter, `permission: {{bash: {{\"*\": ask, \"git diff*\": allow, \"git *--output*\": deny{inline}}}}}`{words} (a `permission` bash block replaces the `tools` switch)"
                        ),
                        "`bash: false` under `tools`",
                    ),
                    (true, false) => (
                        format!(
                            "in its frontmatter's `permission`, `bash: {{\"*\": ask, \"git diff*\": allow, \"git *--output*\": deny{inline}}}`{words}"
                        ),
                        "`bash: deny`",
                    ),
                    (false, _) => (
                        format!(
                            "in its own block, `\"bash\": {{\"*\": \"ask\", \"git diff*\": \"allow\", \"git *--output*\": \"deny\"{inline}}}`{words}"
                        ),
                        "`\"bash\": \"deny\"`",
                    ),
                };
                format!(
                    "OpenCode's `edit` rules keep only its file tools out; bash writes files in more ways than a list of denied commands can name (`echo x > FILE`, `sed -i`, `cp`, `python -c …`): to keep `{name}` from writing, make bash ask, the catch-all first and the read-only commands it needs allowed after it: {block}; or switch bash off for it ({off}) if it needs none",
                    name = agent.name
                )
            } else if let Some(x) = shared_by_name {
                format!(
                    "`{program}` writes the files it is given, and the shared {} allows it by name for every agent: in `{}`'s own `bash` rules (they come after the shared ones and bind it alone), write `\"{program} *\": \"ask\"` (or `\"deny\"`), and the same for the other commands that write files; listed commands never cover interpreters (`python`, `node`)",
                    ctx.rule_at(x),
                    agent.name
                )
            } else if let Some(x) = by_name {
                format!(
                    "`{program}` writes the files it is given, and {} allows it by name: narrow that allow to the files it is for (e.g. `{program} /tmp/*` for saved output) rather than denying `{program}` after it, which would undo it; listed commands never cover interpreters (`python`, `node`)",
                    ctx.rule_at(x)
                )
            } else {
                format!(
                    "OpenCode checks `{permission}` in its file tools only: deny the commands that {} {} as well, {place} (keep the rest of bash as it is){}; listed commands never cover interpreters (`python`, `node`)",
                    if permission == "read" {
                        "read"
                    } else {
                        "write"
                    },
                    if r.pattern == "*" {
                        "files"
                    } else {
                        "the file"
                    },
                    if r.pattern == "*" {
                        ""
                    } else {
                        ", or keep the file outside the project"
                    }
                )
            };
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(level)
                    .with_witnesses(vec![
                        Witness {
                            permission: permission.to_string(),
                            input: path,
                            action: Effect::Deny,
                            rule: Some(i),
                        },
                        Witness {
                            permission: "bash".into(),
                            input: command,
                            action: Effect::Allow,
                            rule: decider,
                        },
                    ])
                    .with_help(help),
            );
        }
    }
}

/// What a write or destroy mode does, and so which of your other rules say you want to be
/// asked before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Harm {
    /// Writes `FILE`: your `edit` rules ask or deny for that file.
    Writes,
    /// Deletes files: a bash rule asks or denies `rm` or `find … -exec` (a catch-all
    /// included). (An `edit` ask alone is no such rule: an agent whose `rm` runs unasked
    /// deletes anyway.)
    Deletes,
    /// Deletes git work: a bash rule of yours asks or denies `git reset --hard`,
    /// `git clean`, `git stash drop` ….
    DeletesGitWork,
    /// Discards uncommitted changes (`git checkout -- FILE` puts back the last commit): a
    /// bash rule of yours asks or denies `git reset --hard`, `git restore .` …, or the
    /// file's `edit` rules ask or deny. Unlike deleting a branch, an agent that commits
    /// on its own is not taken to mean it: committed or not, the changes are lost.
    DiscardsChanges,
    /// Prints a secret (`.env`): the agent's `read` of it asks, by OpenCode's built-in
    /// `*.env` ask or an ask of yours (a deny of yours is the read-deny finding's, at it).
    ReadsSecret,
    /// Destroys work on the remote (`git push --force` overwrites its history, `gh repo
    /// delete` removes it): a rule of yours asks or denies destroying work locally (`rm -rf src`, `git reset --hard`; a catch-all included).
    RewritesRemote,
    /// Acts on GitHub (`gh api -X PUT …/pulls/1/merge` merges a pull request): a bash rule
    /// of yours naming a `gh` subcommand asks or denies one of the commands given (`gh pr
    /// merge*` for the merge), not a catch-all (`gh *` asked beside a `gh api *` allow is
    /// that allow's exception).
    ActsOnGitHub(&'static [&'static str]),
}

/// A write or destroy mode of a command people allow by name, mostly to read.
struct WriteMode {
    /// The program an allow-list entry names (`find`, `git branch`).
    program: &'static str,
    /// The command in that mode: `FILE` a worktree path, `NAME` its file name.
    command: &'static str,
    /// What it does, after "it" (`FILE` as in `command`).
    does: &'static str,
    harm: Harm,
    /// Patterns for exactly this mode, to write after the allow.
    patterns: &'static [&'static str],
}

/// The spellings by which `gh api` writes: a method named (`-X PUT`), or a field or body
/// given, which makes gh send a POST (`-f title=x`; blind fresh-14 D: danielmichaels,
/// where asking `-X` alone left `gh api repos/o/r/issues -f title=x` running). Checked on
/// 1.18.34: each pattern written after `"gh api *": "allow"` stops its spelling.
const GH_API_WRITES: &[&str] = &[
    "gh api *-X *",
    "gh api *--method *",
    "gh api *-f *",
    "gh api *-F *",
    "gh api *--field*",
    "gh api *--raw-field*",
    "gh api *--input*",
];

/// Checked on the binary (1.18.34, `debug agent build --tool bash` under
/// `{"*": "deny", "<entry>": "allow"}`): each runs, and each pattern written after the allow
/// stops it. A redirection is part of the text the bash tool checks (`docs/research/D-bash.md`
/// §2: a redirected statement's text).
const WRITE_MODES: &[WriteMode] = &[
    WriteMode {
        program: "sed",
        command: "sed -i s/x/y/ FILE",
        does: "edits `FILE` in place",
        harm: Harm::Writes,
        patterns: &["sed -i*", "sed * -i*"],
    },
    // `sed -n*` allowed to print lines also takes `-i` after it (blind fresh-9 A: Claytonrss's
    // explore): with `-n` the file is rewritten with only the lines printed. Checked on
    // 1.18.34: `sed -n -i p f` runs under `{"*": "deny", "sed -n*": "allow"}`; `"sed * -i*":
    // "deny"` after the allow stops it. (First pattern first: it matches this mode.)
    WriteMode {
        program: "sed",
        command: "sed -n -i p FILE",
        does: "rewrites `FILE` in place, keeping only the lines it prints",
        harm: Harm::Writes,
        patterns: &["sed * -i*", "sed -i*"],
    },
    WriteMode {
        program: "find",
        command: "find . -name NAME -delete",
        does: "deletes every `NAME` it finds",
        harm: Harm::Deletes,
        patterns: &["find *-delete*"],
    },
    WriteMode {
        program: "find",
        command: "find . -name NAME -exec rm {} +",
        does: "deletes every `NAME` it finds",
        harm: Harm::Deletes,
        patterns: &["find *-exec*"],
    },
    WriteMode {
        program: "echo",
        command: "echo x > FILE",
        does: "overwrites `FILE`",
        harm: Harm::Writes,
        patterns: &["echo *>*"],
    },
    // `cat *` in a read-only agent's list: `cat x > FILE` is the same command with a
    // redirect (blind fresh-4: mcdougald's review agent, adamgabet's one-file editors).
    WriteMode {
        program: "cat",
        command: "cat x > FILE",
        does: "overwrites `FILE`",
        harm: Harm::Writes,
        patterns: &["cat *>*"],
    },
    // A reader's allow-list entry under a bash catch-all that asks (`"*": "ask"`,
    // `"cat *": "allow"`): `cat .env` prints the file the read tool asks for (OpenCode's
    // built-in `*.env` ask). Blind fresh-4 B: fidelxyz, charlieplate, hackder, mcdougald;
    // checked on 1.18.34 (read .env asks, bash cat .env runs). After the redirect mode, so
    // `cat x > .env` keeps its own patterns (`mode_patterns`).
    WriteMode {
        program: "cat",
        command: "cat FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["cat *.env*"],
    },
    WriteMode {
        program: "head",
        command: "head FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["head *.env*"],
    },
    WriteMode {
        program: "tail",
        command: "tail FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["tail *.env*"],
    },
    // The other readers a reviewer allows by name (blind fresh-13 B: ada-x64, where asking
    // `cat`/`head`/`tail` left `less .env` and `awk 1 .env` printing it).
    WriteMode {
        program: "less",
        command: "less FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["less *.env*"],
    },
    WriteMode {
        program: "more",
        command: "more FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["more *.env*"],
    },
    WriteMode {
        program: "awk",
        command: "awk 1 FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["awk *.env*"],
    },
    WriteMode {
        program: "bat",
        command: "bat FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["bat *.env*"],
    },
    // A search of the file itself (blind fresh-14 C: yq3's tester, where asking `cat`,
    // `head` and `tail` left `grep -r . .env` printing it). A space or `/` before `.env`:
    // `grep -rn process.env src` is a search for the word, which reviewers run. Checked on
    // 1.18.34: `grep -r . .env` runs under `{"*": "deny", "grep*": "allow"}`, and
    // `"grep * .env*": "deny"` after the allow stops it but not `grep -rn process.env src`.
    WriteMode {
        program: "grep",
        command: "grep -r . FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["grep * .env*", "grep */.env*"],
    },
    WriteMode {
        program: "rg",
        command: "rg . FILE",
        does: "prints `FILE`",
        harm: Harm::ReadsSecret,
        patterns: &["rg * .env*", "rg */.env*"],
    },
    WriteMode {
        program: "printf",
        command: "printf x > FILE",
        does: "overwrites `FILE`",
        harm: Harm::Writes,
        patterns: &["printf *>*"],
    },
    WriteMode {
        program: "yq",
        command: "yq -i .a=1 FILE",
        does: "edits `FILE` in place",
        harm: Harm::Writes,
        patterns: &["yq -i*", "yq * -i*"],
    },
    WriteMode {
        program: "curl",
        command: "curl -o FILE https://example.com",
        does: "overwrites `FILE` with a download",
        harm: Harm::Writes,
        // Its long and remote-name spellings too (blind fresh-6 A: `-o` alone left
        // `curl --output FILE` and `curl -O` running). Combined short flags (`-sSLo`) are
        // named in the help, not patterned: a pattern for them matches ordinary fetches.
        patterns: &[
            "curl -o*",
            "curl * -o*",
            "curl -O*",
            "curl * -O*",
            "curl *--output*",
            "curl *--remote-name*",
        ],
    },
    WriteMode {
        program: "wget",
        command: "wget -O FILE https://example.com",
        does: "overwrites `FILE` with a download",
        harm: Harm::Writes,
        patterns: &["wget -O*", "wget * -O*"],
    },
    WriteMode {
        program: "git branch",
        command: "git branch -D x",
        does: "deletes branch `x`, merged or not",
        harm: Harm::DeletesGitWork,
        // Its spellings too (`deny_too_narrow::SPELLINGS`): `-D*` alone leaves
        // `git branch --delete --force` running.
        // Every flag that changes a branch (blind fresh-13 B: ada-x64's reviewer and
        // AlexeyShirshov's scout, where `-D` alone left `git branch -f main HEAD~3`, `-d`
        // and `-m` running).
        patterns: &[
            "git branch -D*",
            "git branch -d*",
            "git branch --delete*",
            "git branch -f*",
            "git branch --force*",
            "git branch -m*",
            "git branch -M*",
            "git branch --move*",
        ],
    },
    // `git checkout*` allowed to switch branches also restores files (blind fresh-4:
    // juan1ll0's vcs agent, edit denied and `git reset --hard*` denied; kpiwko's implement,
    // `git restore .` and `git checkout -f*` denied). Checked on 1.18.34: `git checkout --
    // src/a.ts` runs under the allow and puts back the committed file.
    WriteMode {
        program: "git checkout",
        command: "git checkout -- FILE",
        does: "puts back the last commit of `FILE`, discarding your changes",
        harm: Harm::DiscardsChanges,
        patterns: &["git checkout *-- *", "git checkout ."],
    },
    // `npm audit*` allowed to a security reviewer (edit denied): `npm audit fix` rewrites the
    // manifest and lock file (blind fresh-6 A: lenstack's security agent). Checked on
    // 1.18.34: it runs under `{"*": "deny", "npm audit*": "allow"}`; both patterns stop it.
    WriteMode {
        program: "npm audit",
        command: "npm audit fix",
        does: "rewrites `package.json` and `package-lock.json`",
        harm: Harm::Writes,
        patterns: &["npm audit fix*", "npm audit * fix*"],
    },
    WriteMode {
        program: "git stash",
        command: "git stash drop",
        does: "deletes the latest stash",
        harm: Harm::DeletesGitWork,
        patterns: &["git stash drop*", "git stash clear*"],
    },
    // `grep *` / `rg *` allowed to a reviewer whose edits are denied: the redirect is part
    // of the text OpenCode checks (blind fresh-8 B: repl6669's security agent, `"*": "deny"`,
    // `edit: deny`). Checked on 1.18.34: `grep -r x . > f` runs under `{"*": "deny",
    // "grep *": "allow"}`; `"grep * > *": "deny"` after the allow stops it.
    WriteMode {
        program: "grep",
        command: "grep -r x . > FILE",
        does: "overwrites `FILE`",
        harm: Harm::Writes,
        // A space before: `grep -rn "=>" src` (an arrow in the search) is no redirect, and a
        // reviewer searches for it; `>FILE`, `>> FILE` and `2> FILE` are (blind fresh-12
        // B: maximk777's explorer, where `"rg * > *"` left `rg x . >src/main.ts` running).
        patterns: &["grep * >*", "grep * 2>*"],
    },
    WriteMode {
        program: "rg",
        command: "rg x . > FILE",
        does: "overwrites `FILE`",
        harm: Harm::Writes,
        patterns: &["rg * >*", "rg * 2>*"],
    },
    // `rg *` allowed to search also runs any program on every file it searches
    // (`--pre`, rg's preprocessor; blind fresh-12 B: maximk777's explorer, and felixAnhalt's
    // architect, fresh-12 A). Checked on 1.18.34: `rg --pre sh x .` runs under
    // `{"*": "deny", "rg *": "allow"}`; the patterns written after the allow stop it.
    WriteMode {
        program: "rg",
        command: "rg --pre sh x .",
        does: "runs `sh` on every file it searches (`--pre` takes any program)",
        harm: Harm::Writes,
        patterns: &["rg --pre*", "rg * --pre*"],
    },
    // `git log*`, `git show*`, `git diff*` allowed to read history also write it to a file
    // of your choice (`--output`; blind fresh-12 B: maximk777's explorer). Checked on
    // 1.18.34: `git diff --output=src/main.ts` runs under `{"*": "deny", "git diff*":
    // "allow"}` and overwrites the file with the diff; the pattern after the allow stops it.
    WriteMode {
        program: "git log",
        command: "git log --output=FILE",
        does: "overwrites `FILE` with the log",
        harm: Harm::Writes,
        patterns: &["git log *--output*"],
    },
    WriteMode {
        program: "git show",
        command: "git show --output=FILE",
        does: "overwrites `FILE` with the commit",
        harm: Harm::Writes,
        patterns: &["git show *--output*"],
    },
    WriteMode {
        program: "git diff",
        command: "git diff --output=FILE",
        does: "overwrites `FILE` with the diff",
        harm: Harm::Writes,
        patterns: &["git diff *--output*"],
    },
    // Modes that run a program of the model's choosing, or write a file, behind an
    // allow written for reading (blind fresh-13: AlexeyShirshov's scout, mortacious'
    // reviewer, ada-x64's reviewer). Checked on 1.18.34 in a scratch repository with a
    // changed file: each runs under `{"*": "deny", "<program>*": "allow"}` (difftool's
    // `-x`, grep's `-O` and awk's `system()` ran `touch`; `sort -o` wrote its file), and
    // the first pattern written after the allow stops it.
    // `git diff*` (no space) also matches `git difftool`, whose `-x` runs any command.
    WriteMode {
        program: "git diff",
        command: "git difftool -y -x \"sed -i s/x/y/ FILE\" HEAD",
        does: "runs the command after `-x` (`git diff*` matches `git difftool` too), here `sed -i` on `FILE`",
        harm: Harm::Writes,
        patterns: &["git difftool*"],
    },
    WriteMode {
        program: "git grep",
        command: "git grep -O\"sed -i s/x/y/\" x",
        does: "runs the program after `-O` on every file that matches, here `sed -i`",
        harm: Harm::Writes,
        patterns: &["git grep *-O*", "git grep *--open-files-in-pager*"],
    },
    WriteMode {
        program: "sort",
        command: "sort -o FILE FILE",
        does: "overwrites `FILE` with its lines sorted",
        harm: Harm::Writes,
        patterns: &["sort -o*", "sort * -o*", "sort *--output*"],
    },
    WriteMode {
        program: "awk",
        command: "awk 'BEGIN{system(\"sed -i s/x/y/ FILE\")}'",
        does: "runs any command through `system()`, here `sed -i` on `FILE`",
        harm: Harm::Writes,
        patterns: &["awk *system*"],
    },
    WriteMode {
        program: "git tag",
        command: "git tag -d v1",
        does: "deletes tag `v1`",
        harm: Harm::DeletesGitWork,
        patterns: &["git tag -d*", "git tag --delete*", "git tag * -d*"],
    },
    // The destructive modes of git itself, for a `git *` allow (and `git push *`, `git reset
    // *`, `git clean*`): blind fresh-8 (davidkristiansen's `git *` beside `rm *` asks;
    // timosur's `git push *` under `"*": "ask"` and its git agent's `git *` under `edit:
    // deny`) and fresh-7 (ramirobogado). Checked on 1.18.34 with harmless spellings under
    // `{"*": "deny", "git *": "allow"}` (`git clean -n`, `git reset --hard HEAD` in a scratch
    // repository, `git push --force` to a local bare remote): each runs; the patterns
    // written after the allow stop each.
    WriteMode {
        program: "git",
        command: "git clean -fdx",
        does: "deletes every untracked file, which git cannot bring back",
        harm: Harm::Deletes,
        patterns: &["git clean *"],
    },
    WriteMode {
        program: "git",
        command: "git reset --hard",
        does: "discards every uncommitted change",
        harm: Harm::DiscardsChanges,
        patterns: &["git reset --hard*", "git reset * --hard*"],
    },
    WriteMode {
        program: "git",
        command: "git push --force origin main",
        does: "overwrites the remote branch's history",
        harm: Harm::RewritesRemote,
        patterns: &[
            "git push --force*",
            "git push * --force*",
            "git push -f*",
            "git push * -f*",
        ],
    },
    // `gh *` allowed for pull requests also deletes the repository (blind fresh-7:
    // ramirobogado's git agent; fresh-3: alessiorocco). Checked on 1.18.34 (no `gh`
    // installed, so nothing runs): `gh repo delete --yes` passes `{"*": "deny", "gh *":
    // "allow"}`, and the pattern written after the allow stops it.
    WriteMode {
        program: "gh",
        command: "gh repo delete --yes",
        does: "deletes the repository on GitHub, with its issues and pull requests",
        harm: Harm::RewritesRemote,
        patterns: &["gh repo delete*"],
    },
    // `gh api *` allowed to read pull requests and comments also merges, closes and
    // releases through the REST API, walking around a `gh pr merge*` ask (blind fresh-10
    // A: ibtisamdev/reva's git agent). Each is the API form of the commands its harm
    // names. Checked on 1.18.34 (no `gh` installed, so nothing runs): each passes
    // `{"*": "deny", "gh api *": "allow"}` (`--method PUT` after the path too); the
    // patterns written after the allow stop them, and `gh api repos/o/r/pulls` (a read,
    // GET by default) still runs.
    WriteMode {
        program: "gh",
        command: "gh api -X PUT repos/OWNER/REPO/pulls/1/merge",
        does: "merges pull request 1 through GitHub's API",
        harm: Harm::ActsOnGitHub(&["gh pr merge 1"]),
        patterns: GH_API_WRITES,
    },
    WriteMode {
        program: "gh",
        command: "gh api -X PATCH repos/OWNER/REPO/issues/1 -f state=closed",
        does: "closes issue (or pull request) 1 through GitHub's API",
        harm: Harm::ActsOnGitHub(&["gh issue close 1", "gh pr close 1"]),
        patterns: GH_API_WRITES,
    },
    WriteMode {
        program: "gh",
        command: "gh api -X POST repos/OWNER/REPO/releases -f tag_name=v1",
        does: "publishes release v1 through GitHub's API",
        harm: Harm::ActsOnGitHub(&["gh release create v1"]),
        patterns: GH_API_WRITES,
    },
];

/// Commands doing what a [`Harm`] does another way: a bash rule of yours that asks or
/// denies one of them (and not the mode itself) is one written against that harm.
fn kin(harm: Harm) -> &'static [&'static str] {
    match harm {
        Harm::Writes | Harm::ReadsSecret => &[],
        Harm::RewritesRemote => &["rm -rf DIR", "git reset --hard"],
        Harm::ActsOnGitHub(kin) => kin,
        Harm::Deletes => &[
            "rm FILE",
            "rm -rf DIR",
            "find . -name NAME -exec rm {} +",
            "find . -name NAME -delete",
        ],
        Harm::DiscardsChanges => &[
            "git reset --hard",
            "git restore .",
            "git checkout -- .",
            "git checkout -f",
            "git clean -fd",
            "git stash drop",
        ],
        Harm::DeletesGitWork => &[
            "git reset --hard",
            "git clean -fd",
            "git stash drop",
            "git checkout -- .",
            "git restore .",
            "git branch -D x",
        ],
    }
}

/// The write (or secret-printing) modes of a program people allow by name (`cat`: `cat x >
/// FILE`, `cat .env`): each mode's command and the patterns that match exactly it.
pub(super) fn modes_of(program: &str) -> Vec<(String, &'static [&'static str])> {
    WRITE_MODES
        .iter()
        .filter(|m| m.program == program)
        .map(|m| {
            let file = if m.harm == Harm::ReadsSecret {
                ".env"
            } else {
                "src/main.ts"
            };
            (with_file(m.command, file), m.patterns)
        })
        .collect()
}

/// The patterns that ask for exactly the write mode `command` is in (`sed -i*`, `sed * -i*`
/// for `sed -i s/x/y/ f`): a mode's own patterns match its commands. For the suggestion
/// that writes them (`fix::suggest`).
pub fn mode_patterns(command: &str, platform: crate::glob::Platform) -> &'static [&'static str] {
    mode_of(command, platform).map_or(&[], |m| m.patterns)
}

/// Is `command` in a mode that prints a secret (`cat .env`) rather than writing? For the
/// suggestion's title (`fix::suggest`), which says "modes", not "write modes", then.
pub fn prints_secret(command: &str, platform: crate::glob::Platform) -> bool {
    mode_of(command, platform).is_some_and(|m| m.harm == Harm::ReadsSecret)
}

/// The mode `command` is in: the first whose own first pattern matches it.
fn mode_of(command: &str, platform: crate::glob::Platform) -> Option<&'static WriteMode> {
    WRITE_MODES.iter().find(|m| {
        m.patterns
            .first()
            .is_some_and(|p| Wildcard::compile(p).is_match(command, platform))
    })
}

/// Commands of an agent that writes git history.
const GIT_WRITES: &[&str] = &[
    "git commit -m x",
    "git commit --amend",
    "git rebase -i main",
    "git reset --soft HEAD~1",
    "git cherry-pick x",
];

/// `template` for the worktree path `file`.
fn with_file(template: &str, file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    let dir = file.rsplit_once('/').map_or(".", |(d, _)| d);
    template
        .replace("FILE", file)
        .replace("NAME", name)
        .replace("DIR", dir)
}

/// The bash tool's call of `command` for `agent`, as `explain bash` decides it
/// ([`crate::call`]): the tool hidden, an outside directory, then every part.
pub(super) fn call_bash(
    ctx: &Ctx<'_>,
    agent: &Agent,
    splitter: &mut Splitter,
    places: &Places,
    command: &str,
) -> Decided {
    let is_dir = |p: &str| call::assumed_dir(places, p);
    let asks = Asks::of("bash", command, &places.env(&is_dir), splitter);
    let hiding = call::hiding_rule(&agent.rules, "bash", ctx.project.platform);
    call::decide(&asks, "bash", command, hiding, |perm, pattern| {
        ctx.decision(agent, perm, pattern)
    })
}

/// The rule's literal text before its first wildcard.
pub(super) fn literal_prefix(pattern: &str) -> &str {
    pattern.find(['*', '?']).map_or(pattern, |k| &pattern[..k])
}

/// Is the rule an allow-list entry for `program` (`find *`, `find*`, `git branch *`), not an
/// allow of every command or of a whole program family (`*`, `git *`)?
fn names_program(pattern: &str, program: &str) -> bool {
    // `*find *` names `find` too (anywhere in the command, `sudo find` included: blind
    // fresh-7, tomgrozev's list of leading-`*` entries under `edit: ask`).
    let lit = literal_prefix(pattern.trim_start_matches('*'));
    lit == program || lit.starts_with(&format!("{program} "))
}

/// A mode's pattern as written after `allow`: with a leading `*` where the allow has one
/// (`*find *` also allows `sudo find . -delete`, so `*find *-delete*`).
pub fn behind(allow: &str, mode: &str) -> String {
    if allow.starts_with('*') && !mode.starts_with('*') {
        format!("*{mode}")
    } else {
        mode.to_string()
    }
}

/// One entry as the block's syntax writes it.
fn entry(pattern: &str, action: Effect, yaml: bool) -> String {
    let key = serde_json::to_string(pattern).unwrap_or_default();
    let action = match action {
        Effect::Deny => "deny",
        _ => "ask",
    };
    if yaml {
        format!("{key}: {action}")
    } else {
        format!("{key}: \"{action}\"")
    }
}

/// A guard's decision in words.
fn what_it_does(effect: Effect) -> &'static str {
    if effect == Effect::Deny {
        "is denied"
    } else {
        "asks"
    }
}

/// One guard found: the witness it decides, in words for the message.
struct Guard {
    witness: Witness,
    /// What the rule does, in words (`` `rm src/main.ts` asks ``).
    said: String,
    /// The rule and its place.
    rule_at: String,
    /// The harm is denied, not just this file: the help may deny the mode. (A `*.env`
    /// deny beside an `edit` ask asks for `echo x > src/main.ts`: denying every redirection
    /// would deny what you only ask for.)
    denied: bool,
}

/// A rule of yours that asks or denies what `mode` does, for `agent`, with `file` the path
/// it touches: an `edit` rule on that file (writes, deletions), or a bash rule on a kindred
/// command that does not match the mode itself (a catch-all `*` or `git *` ask is no rule
/// written against this harm: the allow is its exception).
#[allow(clippy::too_many_arguments)] // the call site's state, the mode and where it stands
fn guard(
    ctx: &Ctx<'_>,
    agent: &Agent,
    splitter: &mut Splitter,
    places: &Places,
    mode: &WriteMode,
    command: &str,
    file: &str,
    own_block: bool,
    allow: usize,
) -> Option<Guard> {
    // Any rule that decides: the user's, and a built-in one where the allow is in the
    // agent's own block (plan's built-in `edit` deny is what makes it read-only, and an
    // `echo *` allow the user adds to plan opens writes it never had: both blind expert
    // readings, tests/real/expert.tsv, flag it). A shared allow-list that reaches the
    // built-in explore is not written against explore's design.
    let rule_of = |k: Option<usize>| {
        k.and_then(|k| agent.rules.get(k))
            .filter(|r| own_block || r.loc.is_some())
    };
    // An agent that commits or rewrites history unasked writes git on purpose: deleting a
    // branch or a stash is its business (judged on the real-config corpus: a git agent
    // for "rebases, commits, branch cleanup" allows `git branch *` for that).
    // (Allowed by another rule than the allow at hand: a `git *` allow that lets `git
    // commit` run shows nothing of what the author meant by `git reset --hard`.)
    let mut allowed_elsewhere = |c: &str| {
        let d = call_bash(ctx, agent, splitter, places, c);
        d.effect == Effect::Allow && !d.bash.iter().all(|x| x.rule == Some(allow))
    };
    if mode.harm == Harm::DeletesGitWork && GIT_WRITES.iter().any(|c| allowed_elsewhere(c)) {
        return None;
    }
    // An agent that may discard changes another way (`git restore .`, `git reset --hard`
    // allowed: a commit agent that unstages and restores) means it.
    if mode.harm == Harm::DiscardsChanges
        && ["git restore .", "git reset --hard"]
            .iter()
            .any(|c| allowed_elsewhere(c))
    {
        return None;
    }
    // A bash rule against the same harm says it best (`rm` asks); else the file's edit rule.
    for template in kin(mode.harm) {
        let probe = with_file(template, file);
        if probe == command {
            continue;
        }
        let d = call_bash(ctx, agent, splitter, places, &probe);
        if d.effect == Effect::Allow {
            continue;
        }
        let Some(rule) = d.decision().and_then(|x| x.rule) else {
            continue;
        };
        // A catch-all (`"*": "ask"`, a read-only agent's `"*": "deny"`) counts: the allow
        // is meant as an exception for reading (`find` to list files), and its delete mode
        // is what every other command of the block is asked or denied for. Judged by two
        // blind expert readings (ALLOW-WRITE-MODE in tests/real/expert.tsv), which flag
        // `find *` beside `"*": "ask"` and in read-only agents alike.
        let Some(r) = rule_of(Some(rule)) else {
            continue;
        };
        // Discarding changes is guarded by a rule naming a git command that does it
        // (`git reset --hard*`), not by a catch-all (`*`, `git *`): beside `"git *": "ask"`
        // an allow-list of git commands (`git checkout *`, `git rm *`, `git stash *`) is
        // the author's choice of what runs (judged on the real-config corpus: jwilger,
        // asuender). Else the file's edit rule.
        if mode.harm == Harm::DiscardsChanges
            && !(literal_prefix(&r.pattern).starts_with("git ")
                && literal_prefix(&r.pattern).split_whitespace().count() >= 2)
        {
            continue;
        }
        // Likewise acting on GitHub: a rule naming a `gh` subcommand (`gh pr merge*`) that
        // asks. One that denies is `deny-too-narrow`'s, at the deny (the API spelling of
        // the denied command): reported once.
        if matches!(mode.harm, Harm::ActsOnGitHub(_))
            && (d.effect == Effect::Deny
                || !(literal_prefix(&r.pattern).starts_with("gh ")
                    && literal_prefix(&r.pattern).split_whitespace().count() >= 2))
        {
            continue;
        }
        let said = format!("`{probe}` {}", what_it_does(d.effect));
        let rule_at = ctx.rule_at(r);
        // Denied in general only when the plainest way is (`rm FILE`, `git reset
        // --hard`): a `rm -rf *` deny beside a catch-all ask asks for `rm FILE`, and the
        // help must not deny what you ask for.
        let denied = d.effect == Effect::Deny
            && kin(mode.harm).first().is_some_and(|plain| {
                let plain = with_file(plain, file);
                plain == probe
                    || call_bash(ctx, agent, splitter, places, &plain).effect == Effect::Deny
            });
        return Some(Guard {
            witness: Witness {
                permission: "bash".into(),
                input: probe,
                action: d.effect,
                rule: Some(rule),
            },
            said,
            rule_at,
            denied,
        });
    }
    if mode.harm == Harm::ReadsSecret {
        // The read tool's own rule for the file: OpenCode's built-in ask (whatever block
        // the allow is in: every agent has it) or an ask of yours. A deny of yours is
        // reported at the deny (`run`), where its fix goes.
        // A bash rule of yours about the file already (`"*.env": "deny"` overridden by a
        // later `cat *`): the order finding at it tells this.
        if agent.rules.iter().any(|x| {
            x.loc.is_some()
                && x.permission == "bash"
                && x.pattern.contains(".env")
                && Wildcard::compile(&x.pattern).is_match(command, ctx.project.platform)
        }) {
            return None;
        }
        let w = ctx.witness_of(agent, "read", file)?;
        let r = w.rule.and_then(|k| agent.rules.get(k))?;
        if w.action != Effect::Ask || (r.loc.is_some() && r.action.effective() != Effect::Ask) {
            return None;
        }
        let said = format!("reading `{file}` asks");
        let rule_at = match r.loc {
            Some(_) => ctx.rule_at(r),
            None => format!("OpenCode's built-in {}", describe(r)),
        };
        return Some(Guard {
            witness: w,
            said,
            rule_at,
            denied: false,
        });
    }
    if matches!(mode.harm, Harm::Writes | Harm::DiscardsChanges) {
        let w = ctx.witness_of(agent, "edit", file)?;
        if w.action != Effect::Allow
            && let Some(r) = rule_of(w.rule)
        {
            let said = format!("editing `{file}` {}", what_it_does(w.action));
            let rule_at = ctx.rule_at(r);
            let denied = ["src/main.ts", file].iter().all(|f| {
                ctx.witness_of(agent, "edit", f)
                    .is_some_and(|x| x.action == Effect::Deny)
            });
            return Some(Guard {
                witness: w,
                said,
                rule_at,
                denied,
            });
        }
    }
    None
}

/// The worktree paths to try for an agent: what its own `edit` asks and denies name, then
/// an everyday source file.
fn files(agent: &Agent) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Denied files first: `echo x > .env` beside a `*.env` deny says more than an ask.
    for effect in [Effect::Deny, Effect::Ask] {
        for r in agent
            .rules
            .iter()
            .filter(|r| r.loc.is_some() && r.permission == "edit" && r.action.effective() == effect)
        {
            let mut c = samples("edit", &r.pattern);
            c.rotate_right(1);
            out.extend(c.into_iter().filter(|p| plain(p)));
        }
    }
    out.push("src/main.ts".into());
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out.truncate(8);
    out
}

/// One allow-list entry's mode found open: the rule, the mode, its command, the guard.
struct Opened<'m> {
    rule: usize,
    mode: &'m WriteMode,
    command: String,
    file: String,
    guard: Guard,
}

/// The allow-list entries whose write or destroy mode runs without asking against what the
/// agent's other rules ask or deny (see the module docs): one finding per block (an agent's
/// `bash` object in one file), at its first such entry, naming the others; returns (agent,
/// rule) of every entry found.
fn write_modes(
    ctx: &Ctx<'_>,
    reach: &[Vec<Option<Reach>>],
    splitter: &mut Splitter,
    places: &Places,
    out: &mut Vec<Finding>,
) -> HashSet<(usize, usize)> {
    let platform = ctx.project.platform;
    let mut opened = HashSet::new();
    let mut found_blocks: Vec<(usize, Vec<Opened>)> = Vec::new();
    for (a, agent) in ctx.project.agents.iter().enumerate() {
        if agent.is_internal() {
            continue;
        }
        let mut files_of: Option<Vec<String>> = None;
        // The file a reader's mode prints (`cat .env`).
        let secrets = [".env".to_string()];
        // The file a package manager's mode rewrites (`npm audit fix`).
        let manifest = ["package.json".to_string()];
        let everyday = ["src/main.ts".to_string()];
        // Blocks in order of their first entry found: (file, layer, permission key).
        // A secret printed (`cat .env`) is a finding of its own: its guard is a read ask,
        // and the block's write modes keep their help (a deny where `rm` is denied).
        type Block = (crate::source::SourceId, crate::model::Layer, String, bool);
        let mut blocks: Vec<(Block, Vec<Opened>)> = Vec::new();
        for (i, r) in agent.rules.iter().enumerate() {
            let Some(loc) = r.loc else { continue };
            if r.action != Action::Allow
                || !Wildcard::compile(&r.permission).is_match("bash", platform)
                || matches!(
                    r.layer,
                    crate::model::Layer::LegacyTools | crate::model::Layer::AgentLegacyTools
                )
                || !matches!(reach[a].get(i), Some(Some(Reach::Decides(_))))
            {
                continue;
            }
            let modes: Vec<&WriteMode> = WRITE_MODES
                .iter()
                .filter(|m| names_program(&r.pattern, m.program))
                // `sed -n -i` is the mode of an allow of `sed -n` only: a `sed *` allow's
                // is `sed -i` itself.
                .filter(|m| {
                    !m.command.starts_with("sed -n")
                        || literal_prefix(r.pattern.trim_start_matches('*')).starts_with("sed -n")
                })
                // A pattern of the help already written in this block: the order finding
                // at it (an ask above the allow) is the one to read.
                .filter(|m| {
                    !agent.rules.iter().any(|x| {
                        x.loc.map(|l| l.source) == Some(loc.source)
                            && x.permission == r.permission
                            && m.patterns
                                .iter()
                                .any(|p| *p == x.pattern || behind(&r.pattern, p) == x.pattern)
                    })
                })
                .collect();
            if modes.is_empty() {
                continue;
            }
            let files = files_of.get_or_insert_with(|| files(agent));
            for m in modes {
                let tried: &[String] = if m.harm == Harm::ReadsSecret {
                    &secrets
                } else if m.program == "npm audit" {
                    &manifest
                } else if matches!(m.program, "git" | "gh") {
                    // git's own modes name no file (`git clean -fdx`): an everyday one for
                    // the guards that ask about a file (`rm FILE`, the file's `edit` rule).
                    &everyday
                } else {
                    files
                };
                let hit = tried.iter().find_map(|file| {
                    let command = with_file(m.command, file);
                    let d = call_bash(ctx, agent, splitter, places, &command);
                    if d.effect != Effect::Allow || d.bash.len() != 1 || d.bash[0].rule != Some(i) {
                        return None;
                    }
                    // The allow is the cause: without it the mode would be asked (the one
                    // part's text is the command). An allow-list under an inherited `*`
                    // allow opens nothing itself; that is `open-allow-list`'s. Unless the
                    // block names the harm itself: beside `"rm *": "ask"`, a `"find *":
                    // "allow"` written for listing is read as safe, and `find . -delete`
                    // is exactly what the author asks for (blind fresh-8 B:
                    // davidkristiansen's list of allows and asks with no catch-all).
                    let before =
                        crate::agents::evaluate(&agent.rules[..i], "bash", &command, platform);
                    let own = !super::is_shared(r.layer);
                    let g = guard(ctx, agent, splitter, places, m, &command, file, own, i)?;
                    // A search's redirect is a way to write only for an agent that may not
                    // (a reviewer's `edit: deny`); beside an edit ask nobody edits by `grep >`.
                    if m.harm == Harm::Writes
                        && matches!(
                            m.program,
                            "grep"
                                | "rg"
                                | "git log"
                                | "git show"
                                | "git diff"
                                | "git grep"
                                | "sort"
                                | "awk"
                        )
                        && !g.denied
                    {
                        return None;
                    }
                    if before.effect == Effect::Allow
                        && !(g.witness.permission == "bash"
                            && g.witness
                                .rule
                                .and_then(|k| agent.rules.get(k))
                                .is_some_and(|x| {
                                    x.loc.map(|l| l.source) == Some(loc.source)
                                        && !literal_prefix(&x.pattern).trim().is_empty()
                                }))
                    {
                        return None;
                    }
                    Some((command, file.clone(), g))
                });
                let Some((command, file, guard)) = hit else {
                    continue;
                };
                opened.insert((a, i));
                let key: Block = (
                    loc.source,
                    r.layer,
                    r.permission.clone(),
                    m.harm == Harm::ReadsSecret,
                );
                let found = Opened {
                    rule: i,
                    mode: m,
                    command,
                    file,
                    guard,
                };
                match blocks.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(found),
                    None => blocks.push((key, vec![found])),
                }
            }
        }
        // The block's finding stands at its clearest entry: a write your `edit` rules ask
        // or deny for, then a deletion, then git work (in file order within each).
        for (_, found) in blocks.iter_mut() {
            // A redirect after `cat` last: a block with another mode is reported at that
            // one, as before `cat` was a mode.
            // The search redirects and git's own modes (added later) after the modes the
            // block was reported at before.
            found.sort_by_key(|o| match o.mode.harm {
                // The modes added in session 21 (difftool, git grep -O, sort -o, awk's
                // system(), git tag -d): after every earlier one, so findings keep places.
                _ if matches!(o.mode.program, "git grep" | "sort" | "git tag")
                    || o.mode.command.starts_with("git difftool")
                    || o.mode.command.contains("system(") =>
                {
                    8
                }
                // The readers added after `cat`, `head` and `tail`: after them.
                Harm::ReadsSecret
                    if matches!(
                        o.mode.program,
                        "less" | "more" | "awk" | "bat" | "grep" | "rg"
                    ) =>
                {
                    7
                }
                Harm::ReadsSecret => 5,
                // A history's `--output` and rg's `--pre` (added later still) last.
                _ if o.mode.command.contains("--output") || o.mode.command.contains("--pre") => 6,
                _ if matches!(o.mode.program, "cat" | "grep" | "rg") => 4,
                _ if matches!(o.mode.program, "git" | "gh") => 3,
                Harm::Writes => 0,
                Harm::Deletes => 1,
                Harm::DiscardsChanges
                | Harm::DeletesGitWork
                | Harm::RewritesRemote
                | Harm::ActsOnGitHub(_) => 2,
            });
        }
        // A search (`grep`, `rg`) prints `.env` only when told to (`grep -r . .env`): named
        // beside a reader the block reports (`cat *`), so its help covers both, never a
        // finding of its own (the judged reader findings are all about `cat`, `head`, `tail`).
        blocks.retain(|((_, _, _, secret), found)| {
            !*secret
                || found
                    .iter()
                    .any(|o| !matches!(o.mode.program, "grep" | "rg"))
        });
        found_blocks.extend(blocks.into_iter().map(|(_, found)| (a, found)));
    }
    // One finding per shared block and what it shows: the agents for which the same modes
    // open against the same kind of rule (each agent's own `edit: deny`, say) are named
    // together, each one's rule listed as its decider.
    type Shows = Vec<(
        Option<crate::source::Loc>,
        String,
        String,
        String,
        Effect,
        bool,
    )>;
    let shows = |a: usize, found: &[Opened]| -> Shows {
        let agent = &ctx.project.agents[a];
        found
            .iter()
            .map(|o| {
                let w = &o.guard.witness;
                (
                    agent.rules[o.rule].loc,
                    o.command.clone(),
                    w.permission.clone(),
                    w.input.clone(),
                    w.action,
                    o.guard.denied,
                )
            })
            .collect()
    };
    // Every (agent, allow) found open, whichever finding names it: an agent reported for
    // the same allow wants the same guard, and is no bystander of the shared block.
    // (Whether its guard denies, too: an agent reported for an ask is a bystander of a
    // deny written in the shared block, which would deny what its rules only ask for.)
    let reported: std::collections::HashMap<(usize, Option<crate::source::Loc>), bool> =
        found_blocks
            .iter()
            .flat_map(|(a, found)| {
                found.iter().map(move |o| {
                    (
                        (*a, ctx.project.agents[*a].rules[o.rule].loc),
                        o.guard.denied,
                    )
                })
            })
            .collect();
    type Members<'m> = Vec<(usize, Vec<Opened<'m>>)>;
    let mut groups: Vec<(Shows, Members)> = Vec::new();
    for (a, found) in found_blocks {
        let key = shows(a, &found);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push((a, found)),
            None => groups.push((key, vec![(a, found)])),
        }
    }
    for (_, members) in groups {
        let Some((a, found)) = members.first() else {
            continue;
        };
        let agent = &ctx.project.agents[*a];
        let guards = |(b, f): &(usize, Vec<Opened>)| -> Vec<Option<crate::source::Loc>> {
            f.iter()
                .map(|o| {
                    o.guard
                        .witness
                        .rule
                        .and_then(|k| ctx.project.agents[*b].rules.get(k))
                        .and_then(|r| r.loc)
                })
                .collect()
        };
        // Each guard at one place for all the agents? A guard that is each agent's own
        // rule is named in the message, not as a witness: a witness's deciding rule is one
        // place for every agent a finding names.
        let first = guards(&members[0]);
        let alike: Vec<bool> = (0..first.len())
            .map(|k| members.iter().all(|m| guards(m).get(k) == first.get(k)))
            .collect();
        // Agents outside the finding that the same shared allow lets run the same mode
        // (build, whose edits the author allows): an ask or deny written at the end of
        // that block would bind them too, so the help names the agents' own blocks.
        let named: Vec<&str> = members
            .iter()
            .map(|(b, _)| ctx.project.agents[*b].name.as_str())
            .collect();
        let mut bystanders: Vec<String> = Vec::new();
        let deny_all = found.iter().all(|o| o.guard.denied);
        if !is_own(agent.rules[found[0].rule].layer) {
            for (b, other) in ctx.project.agents.iter().enumerate() {
                if other.is_internal() || named.contains(&other.name.as_str()) {
                    continue;
                }
                let opens = found.iter().any(|o| {
                    let at = agent.rules[o.rule].loc;
                    if let Some(denied) = reported.get(&(b, at)) {
                        return deny_all && !denied;
                    }
                    let d = decide_command(ctx, other, splitter, &o.command, None);
                    d.effect == Effect::Allow
                        && d.bash.iter().any(|x| {
                            x.rule
                                .and_then(|k| other.rules.get(k))
                                .is_some_and(|r| r.loc == at)
                        })
                });
                if opens {
                    bystanders.push(format!("`{}`", other.name));
                }
            }
        }
        let mut f = block_finding(ctx, agent, found, &alike, &bystanders);
        f.agents = members
            .iter()
            .map(|(b, _)| ctx.project.agents[*b].name.clone())
            .collect();
        out.push(f);
    }
    opened
}

/// The finding of one block's open modes (`found` is not empty).
fn block_finding(
    ctx: &Ctx<'_>,
    agent: &Agent,
    found: &[Opened],
    alike: &[bool],
    bystanders: &[String],
) -> Finding {
    let Some(first) = found.first() else {
        return Finding::at(&CHECK, None, String::new());
    };
    let i = first.rule;
    let rule = &agent.rules[i];
    let mut message = format!(
        "this allow lets `{}` run without asking, and it {}, while {} ({}{})",
        first.command,
        with_file(first.mode.does, &first.file),
        first.guard.said,
        if alike.first().copied().unwrap_or(true) {
            ""
        } else {
            "by a rule of each agent named, e.g. "
        },
        first.guard.rule_at
    );
    // The block's other entries, each once, with its first open mode.
    let mut others: Vec<String> = Vec::new();
    for o in found.iter().filter(|o| o.rule != i) {
        let pattern = serde_json::to_string(&agent.rules[o.rule].pattern).unwrap_or_default();
        if !others.iter().any(|x| x.starts_with(&format!("{pattern} "))) {
            others.push(format!("{pattern} (`{}`)", o.command));
        }
    }
    if !others.is_empty() {
        message.push_str(&format!(
            "; so do this block's {}",
            super::named_list(&others, 4)
        ));
    }
    let action = if found.iter().all(|o| o.guard.denied) {
        Effect::Deny
    } else {
        Effect::Ask
    };
    let yaml = rule
        .loc
        .is_some_and(|l| super::in_frontmatter(ctx.project, l));
    let mut entries: Vec<String> = Vec::new();
    let mut programs: Vec<&str> = Vec::new();
    for o in found {
        for p in o.mode.patterns {
            let p = behind(&agent.rules[o.rule].pattern, p);
            let e = entry(&p, action, yaml);
            if !entries.contains(&e) {
                entries.push(e);
            }
        }
        // What the allow names (`gh api` for `gh api *`), not the mode's program (`gh`).
        let named = literal_prefix(agent.rules[o.rule].pattern.trim_start_matches('*')).trim();
        let named = if named.is_empty() {
            o.mode.program
        } else {
            named
        };
        if !programs.contains(&named) {
            programs.push(named);
        }
    }
    let programs: Vec<String> = programs.iter().map(|p| format!("`{p}`")).collect();
    let place = if bystanders.is_empty() {
        format!(
            "after {} in the same block (its end will do)",
            if others.is_empty() {
                "the allow"
            } else {
                "the allows"
            }
        )
    } else {
        format!(
            "in the own `bash` rules of the agents named here (`agent.NAME.permission.bash`, or a markdown agent's frontmatter), which come after this shared block; not in this block, which {} inherit{} too: it would bind {} as well",
            super::named_list(bystanders, 4),
            if bystanders.len() == 1 { "s" } else { "" },
            if bystanders.len() == 1 { "it" } else { "them" }
        )
    };
    let help = format!(
        "{} {} {place}: {}; the rest of {} stays allowed, and with it any mode not named here",
        if action == Effect::Deny {
            "deny"
        } else {
            "ask for"
        },
        if found.len() == 1 {
            "that mode"
        } else {
            "those modes"
        },
        entries.join(", "),
        programs.join(", ")
    ) + if programs
        .iter()
        .any(|p| p == "`curl`" || p.starts_with("`curl "))
    {
        "; `curl` still writes with combined flags (`-sSLo FILE`) and sends files (`-T FILE`, `-d @FILE`): to close those too, narrow its allow to the URLs the agent fetches"
    } else {
        ""
    };
    let mut witnesses: Vec<Witness> = Vec::new();
    let mut related = Vec::new();
    for (k, o) in found.iter().enumerate() {
        let w = Witness {
            permission: "bash".into(),
            input: o.command.clone(),
            action: Effect::Allow,
            rule: Some(o.rule),
        };
        let shared = alike.get(k).copied().unwrap_or(true);
        for w in std::iter::once(w).chain(shared.then(|| o.guard.witness.clone())) {
            if !witnesses.contains(&w) {
                witnesses.push(w);
            }
        }
        if o.rule != i
            && let Some(l) = agent.rules[o.rule].loc
            && !related.iter().any(|(m, _)| *m == l)
        {
            related.push((l, format!("also opens `{}`", o.command)));
        }
        if shared
            && let Some(x) = o.guard.witness.rule.and_then(|k| agent.rules.get(k))
            && let Some(l) = x.loc
            && !related.iter().any(|(m, _)| *m == l)
        {
            related.push((l, format!("{}: {}", agent.name, describe(x))));
        }
    }
    Finding::at_rule(&CHECK, agent, i, message)
        .with_level(Level::Warning)
        .with_related(related)
        .with_witnesses(witnesses)
        .with_help(help)
}
