//! `deny-too-narrow` (warning)
//!
//! ## What it finds
//! A bash deny (or ask) written for a destructive command in one spelling
//! (`"git push --force*": "deny"`, `"git clean -fd*"`, `"git branch -D*"`,
//! `"git checkout ."`, `"git reset --hard*"`, `"git commit --amend*"`, `"rm -rf *"`) while
//! the same command spelled another way runs without asking: the flag after the arguments
//! (`git push origin main --force`, `git commit -a --amend`),
//! short flags combined or split otherwise (`git clean -df`, `git clean -f -d`,
//! `git clean -xfd`), a long or short synonym (`-f` for `--force`,
//! `--delete --force` or `-d -f` for `-D`), `git checkout -- .` for `git checkout .`,
//! the method flag of `gh api` anywhere (`gh api PATH -X DELETE` beside a
//! `gh api -X DELETE*` deny), the API for a `gh` command (`gh api -X PATCH
//! …/issues/1 -f state=closed` beside `gh issue close*`, `gh api -X PUT …/pulls/1/merge`
//! beside `gh pr merge*`). Each
//! spelling is decided as `explain bash` decides it (`crate::call`), for every agent the
//! model can act as where the rule decides a spelling of that command: reported when some
//! spelling of the same command, or one doing more of the same harm (`git clean -xfd`
//! beside a `-fd` deny), is allowed by a rule or by OpenCode's default. The spellings are a
//! small fixed table (`SPELLINGS`) of what git accepts as the same command;
//! `--force-with-lease` is no spelling of `--force`. An ask is reported only for the
//! spellings people write unprompted (a push's flag at the end, `-f`, `git clean`'s flags in
//! any order, `git checkout -- .`): a deny sends the model to another spelling, an ask
//! does not. One finding per command and agent, at its first rule deciding a spelling; the
//! other rules written for it are listed.
//!
//! ## Why it matters
//! OpenCode 1.18.34 matches each command's text as written, left to right: `"git push
//! --force*"` matches `git push --force origin main` and not `git push origin main
//! --force`, which git reads the same. A model refused one spelling tries another, and
//! with a `"git push *": "allow"` (or no catch-all: `build` allows every command by
//! default) it runs.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"git push *": "allow", "git push --force*": "deny"}}}
//! ```
//! `git push origin main --force` force-pushes without asking.
//!
//! ## How to fix
//! Deny (or ask for) the other spellings too, in the same block after the rule that allows
//! them (`"git push * --force": "deny"`, `"git push * -f": "deny"`); or ask for the
//! whole command (`"git push *": "ask"`) and allow only the forms you mean.

use super::deny_bypass::call_bash;
use super::{Check, Ctx, Finding, Level, Witness, describe};
use crate::glob::Wildcard;
use crate::model::{Action, Effect};
use crate::shell::Places;

pub const CHECK: Check = Check {
    id: "deny-too-narrow",
    level: Level::Warning,
    summary: "a bash deny or ask written for one spelling of a destructive command (`git push --force*`) while another spelling (`git push origin main --force`) runs without asking",
    docs: include_str!("deny_too_narrow.rs"),
};

/// One spelling of a destructive command.
struct Spelling {
    command: &'static str,
    /// What it does, as a set of harms of its command (`git clean`: 1 force, 2 directories,
    /// 4 ignored files): a spelling whose set holds another's does at least that.
    harms: u8,
    /// A pattern that decides this spelling (and no `--force-with-lease`), for the help.
    pattern: &'static str,
}

/// A destructive command and its spellings, the likeliest witnesses first.
struct Command {
    /// The program and subcommand a rule written for it names (`git push`).
    program: &'static str,
    /// What it does, after "it".
    does: &'static str,
    /// Reported under an ask too: its other spellings are ones people write unprompted
    /// (`git push origin main --force`, `git clean -df`). A deny sends the model looking for
    /// another spelling; an ask does not, and `git reset HEAD~1 --hard` or
    /// `git branch --delete --force` are seldom written otherwise (judged debatable on the
    /// tuning half of `tests/real/`).
    asks: bool,
    spellings: &'static [Spelling],
}

const fn s(command: &'static str, harms: u8, pattern: &'static str) -> Spelling {
    Spelling {
        command,
        harms,
        pattern,
    }
}

/// What git 2.x reads as the same command (checked with git: each spelling does what its
/// harms say), and each pattern checked on OpenCode 1.18.34 (`debug agent build --tool
/// bash` under `{"bash": {"<pattern>": "deny"}}`: the spelling is denied).
const SPELLINGS: &[Command] = &[
    Command {
        program: "git push",
        asks: true,
        does: "force-pushes",
        spellings: &[
            s("git push origin main --force", 1, "git push * --force"),
            s("git push origin main -f", 1, "git push * -f"),
            s("git push --force origin main", 1, "git push --force *"),
            s("git push -f origin main", 1, "git push -f *"),
            s("git push --force", 1, "git push --force"),
            s("git push -f", 1, "git push -f"),
        ],
    },
    Command {
        program: "git clean",
        asks: true,
        does: "deletes untracked files",
        spellings: &[
            s("git clean -fd", 3, "git clean -*f*"),
            s("git clean -df", 3, "git clean -*f*"),
            s("git clean -f -d", 3, "git clean -*f*"),
            s("git clean -d -f", 3, "git clean -*f*"),
            s("git clean -fdx", 7, "git clean -*f*"),
            s("git clean -xfd", 7, "git clean -*f*"),
            s("git clean -dfx", 7, "git clean -*f*"),
            s("git clean -xdf", 7, "git clean -*f*"),
            s("git clean -f -d -x", 7, "git clean -*f*"),
            s("git clean -f", 1, "git clean -*f*"),
            s("git clean --force", 1, "git clean -*f*"),
            s("git clean -fx", 5, "git clean -*f*"),
            s("git clean -xf", 5, "git clean -*f*"),
        ],
    },
    Command {
        program: "git branch",
        asks: false,
        does: "deletes a branch",
        spellings: &[
            // 1 delete, 2 even when unmerged.
            s("git branch -D main", 3, "git branch -D*"),
            s(
                "git branch --delete --force main",
                3,
                "git branch --delete --force*",
            ),
            s("git branch -d -f main", 3, "git branch -d -f*"),
            s("git branch -d main", 1, "git branch -d*"),
            s("git branch --delete main", 1, "git branch --delete*"),
        ],
    },
    Command {
        program: "git checkout",
        asks: true,
        does: "discards every uncommitted change",
        spellings: &[
            s("git checkout .", 1, "git checkout ."),
            s("git checkout -- .", 1, "git checkout -- ."),
        ],
    },
    // `rm -rf *` denied or asked while `rm -fr build` runs (blind: hfelipeserna in fresh-3,
    // feng653 in fresh-4). 1 recursive, 2 forced.
    Command {
        program: "rm",
        asks: true,
        does: "deletes a directory tree",
        spellings: &[
            s("rm -fr build", 3, "rm -fr *"),
            s("rm -r -f build", 3, "rm -r -f *"),
            s("rm -f -r build", 3, "rm -f -r *"),
            s("rm -Rf build", 3, "rm -Rf *"),
            s("rm -rf build", 3, "rm -rf *"),
            s(
                "rm --recursive --force build",
                3,
                "rm --recursive --force *",
            ),
        ],
    },
    // The same for `rm -rf` of one place people name (`"rm -rf /*"`, `"rm -rf ~"`, `"rm -rf
    // $HOME*"`), which the spellings above with `build` do not reach: `rm -fr /` and
    // `rm -Rf ~` delete it under `"*": "allow"` where `external_directory` is allowed (blind
    // fresh-12 B: roborew; fresh-10 B: macsify, where only `$HOME` ran, the others asking
    // through the built-in `external_directory` ask, as `call_bash` decides them).
    Command {
        program: "rm",
        asks: true,
        does: "deletes every file it can reach",
        spellings: &[
            s("rm -fr /", 3, "rm -fr /*"),
            s("rm -r -f /", 3, "rm -r -f /*"),
            s("rm -f -r /", 3, "rm -f -r /*"),
            s("rm -Rf /", 3, "rm -Rf /*"),
            s("rm -rf /", 3, "rm -rf /*"),
            s("rm --recursive --force /", 3, "rm --recursive --force /*"),
        ],
    },
    Command {
        program: "rm",
        asks: true,
        does: "deletes the home directory",
        spellings: &[
            s("rm -fr ~", 3, "rm -fr ~*"),
            s("rm -r -f ~", 3, "rm -r -f ~*"),
            s("rm -f -r ~", 3, "rm -f -r ~*"),
            s("rm -Rf ~", 3, "rm -Rf ~*"),
            s("rm -rf ~", 3, "rm -rf ~*"),
            s("rm --recursive --force ~", 3, "rm --recursive --force ~*"),
        ],
    },
    Command {
        program: "rm",
        asks: true,
        does: "deletes the home directory",
        spellings: &[
            s("rm -fr $HOME", 3, "rm -fr $HOME*"),
            s("rm -r -f $HOME", 3, "rm -r -f $HOME*"),
            s("rm -f -r $HOME", 3, "rm -f -r $HOME*"),
            s("rm -Rf $HOME", 3, "rm -Rf $HOME*"),
            s("rm -rf $HOME", 3, "rm -rf $HOME*"),
            s(
                "rm --recursive --force $HOME",
                3,
                "rm --recursive --force $HOME*",
            ),
        ],
    },
    // `git commit --amend*` denied under `git commit*` allowed while `git commit -a --amend`
    // rewrites the last commit (blind fresh-4: kpiwko's implement.md:86). Checked on 1.18.34:
    // `git commit * --amend*` denies `git commit -a --amend --no-edit` and `git commit -m x
    // --amend`, not `git commit -m amendment`. An ask alone is left: an amend the model
    // is asked for is seldom respelled.
    Command {
        program: "git commit",
        asks: false,
        does: "rewrites the last commit",
        spellings: &[
            s("git commit --amend --no-edit", 1, "git commit --amend*"),
            s("git commit -a --amend", 1, "git commit * --amend*"),
            s("git commit -m x --amend", 1, "git commit * --amend*"),
        ],
    },
    // `gh api -X DELETE *` asked or denied while `gh api PATH -X DELETE` runs: the method
    // flag goes anywhere (blind fresh-6 A: orwatch's issue-triage). Checked on 1.18.34:
    // each pattern denies its spelling under `{"*": "allow"}`.
    Command {
        program: "gh api",
        asks: true,
        does: "deletes on GitHub",
        spellings: &[
            s(
                "gh api repos/{owner}/{repo}/git/refs/heads/x -X DELETE",
                1,
                "gh api * -X DELETE*",
            ),
            s(
                "gh api repos/{owner}/{repo}/git/refs/heads/x --method DELETE",
                1,
                "gh api * --method DELETE*",
            ),
            s(
                "gh api -X DELETE repos/{owner}/{repo}/git/refs/heads/x",
                1,
                "gh api -X DELETE*",
            ),
            s(
                "gh api --method DELETE repos/{owner}/{repo}/git/refs/heads/x",
                1,
                "gh api --method DELETE*",
            ),
        ],
    },
    // `gh issue close*` or `gh pr merge*` denied while `gh api*` is allowed: the API does
    // the same (blind fresh-6 A: orwatch's issue-triage denies closing, allows `gh api*`).
    // Checked on 1.18.34 as above.
    Command {
        program: "gh issue",
        asks: false,
        does: "closes an issue",
        spellings: &[
            s("gh issue close 1", 1, "gh issue close*"),
            s(
                "gh api -X PATCH repos/{owner}/{repo}/issues/1 -f state=closed",
                1,
                "gh api *state=closed*",
            ),
        ],
    },
    Command {
        program: "gh pr",
        asks: false,
        does: "merges a pull request",
        spellings: &[
            s("gh pr merge 1", 1, "gh pr merge*"),
            s(
                "gh api -X PUT repos/{owner}/{repo}/pulls/1/merge",
                1,
                "gh api */merge*",
            ),
        ],
    },
    Command {
        program: "git reset",
        asks: false,
        does: "discards every uncommitted change",
        spellings: &[
            s("git reset --hard", 1, "git reset --hard*"),
            s("git reset --hard HEAD~1", 1, "git reset --hard*"),
            s("git reset HEAD~1 --hard", 1, "git reset * --hard"),
        ],
    },
];

/// Is `pattern` written for `program` with more than the program (`git push --force*`,
/// not `git push *` or `git *`)?
fn written_for(pattern: &str, program: &str) -> bool {
    // `git push*--force*main*` too (blind fresh-10 B: macsify's force-push denies, glued to
    // the program by a `*`): what follows the program, its wildcards and spaces aside.
    pattern
        .strip_prefix(program)
        .filter(|rest| rest.starts_with([' ', '*']))
        .is_some_and(|rest| !rest.trim_matches(|c| c == ' ' || c == '*').is_empty())
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut splitter = ctx.splitter();
    let places = Places::of(ctx.project.loaded.paths());
    for agent in ctx.project.agents.iter() {
        if agent.is_internal() {
            continue;
        }
        // Commands already reported for this agent: one finding per command (the `rm`
        // tables are one command, `rm -rf`, of different operands).
        let mut said: Vec<&str> = Vec::new();
        for command in SPELLINGS {
            // The agent's own rules written for this command that deny or ask.
            let guards: Vec<usize> = agent
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.loc.is_some()
                        && (r.action == Action::Deny || (command.asks && r.action == Action::Ask))
                        && r.permission == "bash"
                        && written_for(&r.pattern, command.program)
                })
                .map(|(k, _)| k)
                .collect();
            if guards.is_empty() {
                continue;
            }
            let decided: Vec<_> = command
                .spellings
                .iter()
                .map(|sp| call_bash(ctx, agent, &mut splitter, &places, sp.command))
                .collect();
            // The first guard deciding a spelling itself while a spelling of the same
            // command, or one doing more, is allowed.
            let found = guards.iter().find_map(|&k| {
                let own: Vec<usize> = (0..decided.len())
                    .filter(|&j| {
                        decided[j].effect != Effect::Allow
                            && decided[j].decision().and_then(|d| d.rule) == Some(k)
                    })
                    .collect();
                let need = own
                    .iter()
                    .map(|&j| command.spellings[j].harms)
                    .reduce(|a, b| a & b)?;
                let allowed =
                    |j: &usize| decided[*j].effect == Effect::Allow && decided[*j].bash.len() == 1;
                // The same command first, then one doing more (`git clean -xfd` for `-fd`).
                let j = (0..decided.len())
                    .filter(allowed)
                    .find(|&j| command.spellings[j].harms == need)
                    .or_else(|| {
                        (0..decided.len())
                            .filter(allowed)
                            .find(|&j| command.spellings[j].harms & need == need)
                    })?;
                let o = own
                    .iter()
                    .copied()
                    .find(|&o| command.spellings[o].harms == need)
                    .unwrap_or(own[0]);
                Some((k, o, j))
            });
            let Some((k, o, j)) = found else { continue };
            if said.contains(&command.program) {
                continue;
            }
            said.push(command.program);
            let original = &command.spellings[o];
            let spelling = &command.spellings[j];
            let effect = decided[o].effect;
            let decider = decided[j].bash[0].rule;
            let what = if effect == Effect::Deny {
                "denies"
            } else {
                "asks for"
            };
            let message = format!(
                "this rule {what} `{}` but not `{}`, {}: it {} without asking (decided by {})",
                original.command,
                spelling.command,
                if spelling.harms == original.harms {
                    "the same command spelled another way"
                } else {
                    "the same command doing more, spelled another way"
                },
                command.does,
                match decider.map(|d| &agent.rules[d]) {
                    Some(r) if r.loc.is_some() => ctx.rule_at(r),
                    Some(_) =>
                        "OpenCode's built-in rules: the agent allows every command by default"
                            .into(),
                    None => "no rule".into(),
                }
            );
            let action = if effect == Effect::Deny {
                "deny"
            } else {
                "ask"
            };
            let mut help = String::from(
                "OpenCode matches the command's text as written, left to right, so each spelling the command accepts needs its own rule",
            );
            if Wildcard::compile(spelling.pattern).is_match(spelling.command, ctx.project.platform)
            {
                let place = match decider.map(|d| &agent.rules[d]) {
                    Some(r) if r.loc.is_some() && decider > Some(k) => {
                        format!("after {}", ctx.rule_at(r))
                    }
                    _ => "next to this rule, in the same block".into(),
                };
                help.push_str(&format!(
                    ": {action} this spelling as well, {place}: {}: \"{action}\"",
                    serde_json::to_string(spelling.pattern).unwrap_or_default()
                ));
            }
            let mut related = Vec::new();
            if let Some(r) = decider.map(|d| &agent.rules[d])
                && let Some(l) = r.loc
            {
                related.push((l, format!("allows `{}`: {}", spelling.command, describe(r))));
            }
            // The agent's other rules written for a spelling of this command, which miss
            // the witness too.
            let platform = ctx.project.platform;
            let others = guards.iter().copied().filter(|&m| {
                let w = Wildcard::compile(&agent.rules[m].pattern);
                m != k
                    && !w.is_match(spelling.command, platform)
                    && command
                        .spellings
                        .iter()
                        .any(|sp| w.is_match(sp.command, platform))
            });
            for m in others {
                if let Some(l) = agent.rules[m].loc {
                    related.push((
                        l,
                        format!("also written for `{}`, and misses it too", command.program),
                    ));
                }
            }
            out.push(
                Finding::at_rule(&CHECK, agent, k, message)
                    .with_level(Level::Warning)
                    .with_related(related)
                    .with_witnesses(vec![
                        Witness {
                            permission: "bash".into(),
                            input: spelling.command.into(),
                            action: Effect::Allow,
                            rule: decider,
                        },
                        Witness {
                            permission: "bash".into(),
                            input: original.command.into(),
                            action: effect,
                            rule: Some(k),
                        },
                    ])
                    .with_help(help),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_decides_its_spelling_and_no_lease() {
        let unix = crate::glob::Platform::Unix;
        for c in SPELLINGS {
            for sp in c.spellings {
                // The same program, or GitHub's API for a `gh` command (`gh api … /merge`).
                assert!(
                    sp.command.starts_with(c.program)
                        || (c.program.starts_with("gh ") && sp.command.starts_with("gh api ")),
                    "{}",
                    sp.command
                );
                assert!(
                    Wildcard::compile(sp.pattern).is_match(sp.command, unix),
                    "{} vs {}",
                    sp.pattern,
                    sp.command
                );
                assert!(
                    !Wildcard::compile(sp.pattern)
                        .is_match("git push origin main --force-with-lease", unix),
                    "{}",
                    sp.pattern
                );
            }
        }
    }

    #[test]
    fn rules_written_for_a_command_name_more_than_it() {
        assert!(written_for("git push --force*", "git push"));
        assert!(written_for("git clean -fd*", "git clean"));
        assert!(written_for("git checkout .", "git checkout"));
        assert!(!written_for("git push *", "git push"));
        assert!(!written_for("git push*", "git push"));
        assert!(!written_for("git *", "git push"));
        assert!(!written_for("git pushx -f", "git push"));
        assert!(!written_for("*--force*", "git push"));
    }

    #[test]
    fn harms_of_a_spelling_hold_those_of_the_same_command() {
        let clean = &SPELLINGS[1];
        let harms = |cmd: &str| {
            clean
                .spellings
                .iter()
                .find(|s| s.command == cmd)
                .unwrap()
                .harms
        };
        assert_eq!(harms("git clean -df"), harms("git clean -f -d"));
        assert_eq!(
            harms("git clean -xfd") & harms("git clean -fd"),
            harms("git clean -fd")
        );
        assert_ne!(
            harms("git clean -f") & harms("git clean -fd"),
            harms("git clean -fd")
        );
        let branch = &SPELLINGS[2];
        let d = branch
            .spellings
            .iter()
            .find(|s| s.command == "git branch -d main")
            .unwrap();
        let big = branch
            .spellings
            .iter()
            .find(|s| s.command == "git branch -D main")
            .unwrap();
        assert_ne!(d.harms & big.harms, big.harms, "-d is no spelling of -D");
    }
}
