//! `deny-walkaround` (warning)
//!
//! ## What it finds
//! A bash block that allows every command (`"*": "allow"`) and then denies whole commands
//! by name (`"git push*": "deny"`, `"rm *": "deny"`), where the same command reached
//! another way runs without asking: `git -C . push`, `git -c k=v push` (a git option
//! before the subcommand), `find . -name x -delete` and `unlink` for `rm` denied as a
//! whole. (A runner, `env git push`, walks around every such deny: `wrapper-allow`'s
//! matter where an allow names it.) Each form is decided as
//! `explain bash` decides it (`crate::call`): allowed by the catch-all while the deny
//! decides the plain command. One finding per configuration (the choice is made again in
//! every agent file that writes such a block), at its first block's first such deny,
//! naming the other blocks.
//!
//! A block of denies with no catch-all of its own is judged the same way under OpenCode's
//! default allow (blind fresh-11: sentinel's reviewer denies `rm`, `mv`, `tee` and nothing
//! else), and so is the same act by a sibling program: another package manager's install
//! (`pnpm add` beside an `npm i*` deny), `wget` for `curl`, `python3 -m pip` for `pip`.
//!
//! A warning: every deny takes effect on the commands it names, but a model refused one
//! reaches for the next form, and the block's author believed the command denied.
//!
//! ## Why it matters
//! OpenCode matches each command's text from its start. A model refused `git push` can
//! run `git -C . push` next (checked on 1.18.34: `git -C * push*` is needed to deny it),
//! and the block's author believed pushes were denied.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"*": "allow", "git push*": "deny", "rm *": "deny"}}}
//! ```
//! `git -C . push origin main` pushes and `find . -name build -delete` deletes, unasked.
//!
//! ## How to fix
//! Ask for the other forms, after the catch-all (`"git -C *": "ask"`, `"git -c *": "ask"`,
//! `"find *-delete*": "ask"`, `"unlink *": "ask"`); or turn the block around: `"*":
//! "ask"` first, then allow the commands the agent may run.

use super::deny_bypass::{call_bash, literal_prefix};
use super::{Check, Ctx, Finding, Level, Witness, describe};
use crate::model::{Action, Effect};
use crate::shell::Places;

pub const CHECK: Check = Check {
    id: "deny-walkaround",
    level: Level::Warning,
    summary: "a bash deny-list under `\"*\": \"allow\"` that the same commands reached another way walk around (`git -C . push`, `find . -delete` for `rm`)",
    docs: include_str!("deny_walkaround.rs"),
};

/// Other ways to run `command` (a denied command as written), with a pattern that asks for
/// each form (all of it: `git -C *`, `env *`), in the order they are tried.
fn forms(command: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut words = command.splitn(2, ' ');
    let program = words.next().unwrap_or("");
    let rest = words.next().unwrap_or("");
    if program == "git" && !rest.is_empty() && !rest.starts_with('-') {
        out.push((format!("git -C . {rest}"), "git -C *".to_string()));
        out.push((
            format!("git -c color.ui=false {rest}"),
            "git -c *".to_string(),
        ));
    }
    // `git checkout` denied (it discards changes: `git checkout -- .`) or `git reset
    // --hard`: `git restore .` discards them as well (blind fresh-10 A: transporte-caba's
    // auditor denies `git checkout*` under `"*": "allow"`).
    if program == "git"
        && (rest.starts_with("checkout") || (rest.starts_with("reset") && rest.contains("--hard")))
    {
        out.push(("git restore .".to_string(), "git restore *".to_string()));
    }
    // `rm` denied as a whole (`rm *`, `rm -rf *`), not one path (`rm -rf /`, `rm -rf ~`).
    if program == "rm" && !command.contains(['/', '~']) {
        out.push((
            "find . -name build -delete".to_string(),
            "find *-delete*".to_string(),
        ));
        out.push(("unlink src/main.ts".to_string(), "unlink *".to_string()));
    }
    // The same act by a sibling program: another package manager's install (a pnpm repo
    // under an `npm i*` deny: blind fresh-11 bombos2), the other downloader, pip run by
    // Python. (`podman` for `docker`, `tofu` for `terraform`: seldom both installed.)
    let sub = rest.split(' ').next().unwrap_or("");
    let installs = matches!(program, "npm" | "pnpm" | "yarn" | "bun")
        && matches!(sub, "i" | "install" | "add" | "ci");
    if installs {
        for other in ["npm", "pnpm", "yarn", "bun"] {
            if other != program {
                let verb = if other == "npm" { "install" } else { "add" };
                out.push((
                    format!("{other} {verb} left-pad"),
                    format!("{other} {verb} *"),
                ));
            }
        }
    }
    let sibling = match program {
        "curl" => Some(("wget -qO- https://example.com", "wget *")),
        "wget" => Some(("curl -sL https://example.com", "curl *")),
        "pip" | "pip3" if sub == "install" => {
            Some(("python3 -m pip install requests", "python3 -m pip *"))
        }
        _ => None,
    };
    if let Some((form, pattern)) = sibling {
        out.push((form.to_string(), pattern.to_string()));
    }
    // A runner (`env git push`, `command rm`) walks around every deny of every block under
    // an allow-all: true of each such block, so it tells the reader nothing of this one
    // (judged on the corpus: `env sudo`, `command printenv`). Those are `wrapper-allow`'s
    // where an allow names the runner.
    out
}

/// Does running `command` (a denied command as written) lose or publish work (delete
/// files, discard changes, rewrite or publish history), send data out or run code the
/// author did not choose (a download, a package install with its scripts)?
fn loses(command: &str) -> bool {
    let mut words = command.split_whitespace();
    match (words.next(), words.next()) {
        (Some("rm" | "unlink" | "rmdir"), _) => true,
        (Some("curl" | "wget"), _) => true,
        (Some("npm" | "pnpm" | "yarn" | "bun"), Some(sub)) => {
            matches!(sub, "i" | "install" | "add" | "ci")
        }
        (Some("pip" | "pip3"), Some("install")) => true,
        (Some("git"), Some(sub)) => matches!(
            sub,
            "push"
                | "commit"
                | "reset"
                | "checkout"
                | "clean"
                | "rebase"
                | "merge"
                | "restore"
                | "stash"
                | "branch"
                | "tag"
        ),
        _ => false,
    }
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // Every block's finding, with its catch-all's place (or its first deny's); one block
    // is reported.
    let mut all: Vec<(crate::source::Loc, String, Finding)> = Vec::new();
    let mut splitter = ctx.splitter();
    let places = Places::of(ctx.project.loaded.paths());
    for agent in ctx.project.agents.iter() {
        if agent.is_internal() {
            continue;
        }
        // Blocks (file, layer) with a written `*` allow, and the denies after it.
        let mut done: Vec<(crate::source::SourceId, crate::model::Layer)> = Vec::new();
        for (c, catch_all) in agent.rules.iter().enumerate() {
            let Some(cl) = catch_all.loc else { continue };
            if catch_all.permission != "bash"
                || catch_all.action != Action::Allow
                || !catch_all.pattern.chars().all(|ch| ch == '*')
                || done.contains(&(cl.source, catch_all.layer))
            {
                continue;
            }
            done.push((cl.source, catch_all.layer));
            all.extend(block(
                ctx,
                agent,
                &mut splitter,
                &places,
                Some(c),
                (cl.source, catch_all.layer),
            ));
        }
        // Blocks of denies with no catch-all of their own, under OpenCode's default allow
        // (blind fresh-11: sentinel's reviewer denies `rm`, `mv`, `tee` and nothing else;
        // bombos2 denies only `npm i*` in a pnpm repo).
        let mut bare: Vec<(crate::source::SourceId, crate::model::Layer)> = Vec::new();
        for r in &agent.rules {
            let Some(l) = r.loc else { continue };
            let key = (l.source, r.layer);
            if r.permission == "bash"
                && r.action == Action::Deny
                && !done.contains(&key)
                && !bare.contains(&key)
            {
                bare.push(key);
            }
        }
        for key in bare {
            let written = agent.rules.iter().any(|r| {
                r.permission == "bash"
                    && r.pattern.chars().all(|ch| ch == '*')
                    && r.loc.map(|l| (l.source, r.layer)) == Some(key)
            });
            if !written {
                all.extend(block(ctx, agent, &mut splitter, &places, None, key));
            }
        }
    }
    // One finding per configuration: a deny-list under an allow-all is one choice, made
    // again in every agent file (tests/real r060 writes it in 35): at the first block,
    // naming the others.
    let Some(first) = all.first().map(|(l, _, _)| *l) else {
        return;
    };
    let mut others: Vec<String> = Vec::new();
    for (l, place, _) in &all {
        if *l != first && !others.contains(place) {
            others.push(place.clone());
        }
    }
    for (l, _, mut f) in all {
        if l != first {
            continue;
        }
        if !others.is_empty() {
            f.message
                .push_str(&super::so_do_more(&others, "block", "of the same kind"));
        }
        out.push(f);
    }
}

/// The finding of one block of `agent` (its rules written in one file and layer, `key`):
/// its catch-all allow `c`, or none (OpenCode's default allow decides what it leaves), and
/// the denies after it that another form walks around.
fn block(
    ctx: &Ctx<'_>,
    agent: &crate::agents::Agent,
    splitter: &mut crate::shell::Splitter,
    places: &Places,
    c: Option<usize>,
    key: (crate::source::SourceId, crate::model::Layer),
) -> Option<(crate::source::Loc, String, Finding)> {
    // (deny, plain command, form, deny pattern for the form, form's decider)
    let mut found: Vec<(usize, String, String, String, Option<usize>)> = Vec::new();
    for (k, r) in agent.rules.iter().enumerate().skip(c.map_or(0, |c| c + 1)) {
        if r.action != Action::Deny
            || r.permission != "bash"
            || r.loc.map(|l| (l.source, r.layer)) != Some(key)
            || literal_prefix(&r.pattern).trim().is_empty()
        {
            continue;
        }
        let Some(command) = super::wrapper_allow::sample(&r.pattern) else {
            continue;
        };
        let direct = call_bash(ctx, agent, splitter, places, &command);
        if direct.effect != Effect::Deny || direct.decision().and_then(|x| x.rule) != Some(k) {
            continue;
        }
        // Every form that walks around it: the help asks for each.
        let hits = forms(&command).into_iter().filter_map(|(form, pattern)| {
            let d = call_bash(ctx, agent, splitter, places, &form);
            if d.effect != Effect::Allow || d.bash.len() != 1 {
                return None;
            }
            // Let through by a catch-all (this one or a later one), not by an allow
            // written for the form (`wrapper-allow`'s matter).
            let by = d.bash[0].rule;
            let open = by.is_none_or(|j| agent.rules[j].pattern.chars().all(|ch| ch == '*'));
            open.then_some((form, pattern, by))
        });
        for (form, pattern, by) in hits.collect::<Vec<_>>() {
            found.push((k, command.clone(), form, pattern, by));
        }
    }
    let (k, command, form, _, by) = found.first().cloned()?;
    let catch_all = c.map(|c| &agent.rules[c]);
    // Each denied command once, with its forms.
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (_, cmd, f, _, _) in &found {
        let f = format!("`{f}`");
        match groups.iter_mut().find(|(c, _)| c == cmd) {
            Some((_, forms)) => forms.push(f),
            None => groups.push((cmd, vec![f])),
        }
    }
    // Commands walked around by the same forms once (`rm` and `rm -rf`).
    let mut alike: Vec<(Vec<&str>, &Vec<String>)> = Vec::new();
    for (cmd, forms) in &groups {
        match alike.iter_mut().find(|(_, f)| *f == forms) {
            Some((cmds, _)) => cmds.push(cmd),
            None => alike.push((vec![cmd], forms)),
        }
    }
    let listed: Vec<String> = alike
        .iter()
        .map(|(cmds, forms)| {
            let cmd = cmds.join("` and `");
            let (last, rest) = forms
                .split_last()
                .map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
            if rest.is_empty() {
                format!("{last} for `{cmd}`")
            } else {
                format!("{} and {last} for `{cmd}`", rest.join(", "))
            }
        })
        .collect();
    let mut patterns: Vec<String> = Vec::new();
    for (_, _, _, p, _) in &found {
        let q = serde_json::to_string(p).unwrap_or_default();
        if !patterns.contains(&q) {
            patterns.push(q);
        }
    }
    let (opening, after) = match catch_all {
        Some(_) => (
            "this block allows every command (`\"*\": \"allow\"`) and denies commands by how they start",
            "in this block after its catch-all",
        ),
        None => (
            "this block denies commands by how they start and has no catch-all (OpenCode's default allows every other command)",
            "in this block",
        ),
    };
    let message = format!(
        "{opening}: the same commands reached another way run without asking: {}",
        super::named_list(&listed, 4)
    );
    let help = format!(
        "ask for those forms, {after} ({}, each as \"ask\"), so a denied command reached that way is asked for; or turn the block around: `\"*\": \"ask\"` first, then allow the commands the agent may run",
        patterns.join(", ")
    );
    let at = catch_all.and_then(|r| r.loc).or(agent.rules[k].loc)?;
    Some((
        at,
        ctx.place(&agent.rules[k]),
        Finding::at_rule(&CHECK, agent, k, message)
            // A warning (docs/checks.md: a rule that takes effect but is walked
            // around; its level says how likely the loss is): a model refused
            // `rm` reaches for `find -delete` next, and every blind expert reading
            // (tests/real/fresh-*/expert.tsv, DENY-WALKAROUND) rates it a warning.
            // A note where nothing walked around loses work or publishes it (`git
            // add .` denied to make the agent stage files by name: r054).
            // A help that makes such a deny live (moving it after the catch-all)
            // is not held to this one (`fix::suggest`, criterion (b)).
            .with_level(if found.iter().any(|(_, cmd, _, _, _)| loses(cmd)) {
                Level::Warning
            } else {
                Level::Info
            })
            .with_related(
                catch_all
                    .and_then(|r| {
                        r.loc
                            .map(|l| vec![(l, format!("the catch-all: {}", describe(r)))])
                    })
                    .unwrap_or_default(),
            )
            .with_witnesses(vec![
                Witness {
                    permission: "bash".into(),
                    input: form,
                    action: Effect::Allow,
                    rule: by,
                },
                Witness {
                    permission: "bash".into(),
                    input: command,
                    action: Effect::Deny,
                    rule: Some(k),
                },
            ])
            .with_help(help),
    ))
}
