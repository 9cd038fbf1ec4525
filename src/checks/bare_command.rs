//! A bash deny or ask written as an exact command with no operand (`"git push": "deny"`,
//! `"git push --force": "deny"`, `"rm -rf": "deny"`): OpenCode's bash tool checks the whole
//! command text, so the rule matches that text alone, and the same command with its
//! ordinary operands (`git push origin main`) is decided by whatever else matches it
//! (verified on 1.18.34: under `{"*": "allow", "echo -n": "deny"}`, `debug agent build
//! --tool bash` refuses `echo -n` and runs `echo -n x`; under `"echo -n *": "deny"` both
//! are refused, the trailing ` *` also matching the bare command). `never-matches` reports
//! it at the rule when the command with operands is decided less strictly and writing
//! `"git push *"` in its place would hold for this config; `always-overrides-deny` then
//! only notes its "Always" story at the same rule (one mistake, reported once at its
//! cause).

use super::overlap::openness;
use super::{Ctx, Witness};
use crate::agents::Agent;
use crate::glob::Wildcard;
use crate::model::Effect;
use crate::shell::Splitter;
use crate::shell::arity::prefix_len;

/// Flags with which a command acts on the whole tree without an operand, and an operand
/// would only narrow it (`git add -A` stages everything, `git add -A src` less): an exact
/// deny with one of them denies the real command.
const ACTS_BY_FLAG: &[(&str, &[&str])] = &[("git add", &["-A", "--all", "-u", "--update"])];

/// Programs that run a named script or target (`make test`, `npm run dev`, `cargo run`):
/// the exact text names a complete command, and more words are the script's own. Their
/// subcommands that do take operands (`npm install x`, `pnpm publish x`) are
/// [`OPERAND_SUBCOMMANDS`].
const RUNNERS: &[&str] = &[
    "make", "just", "task", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "uv", "rake",
    "gradle", "mvn", "poetry", "pipenv", "composer", "php", "python", "python3", "node",
];

/// Shell builtins whose bare form lists what the shell holds (`set` prints every variable)
/// and whose operand forms do something else (`set -e` sets an option): an exact deny of
/// one is meant for the listing alone.
const LISTING_BUILTINS: &[&str] = &[
    "set", "declare", "typeset", "export", "alias", "readonly", "local", "unset", "shopt",
];

/// Subcommands of [`RUNNERS`] that act on operands.
const OPERAND_SUBCOMMANDS: &[&str] = &[
    "install",
    "i",
    "add",
    "remove",
    "rm",
    "uninstall",
    "publish",
    "update",
    "upgrade",
    "exec",
    "dlx",
    "x",
    "link",
    "unlink",
];

/// The operand a person types after a command (`git push` → `origin main`), or `x`; after
/// flags of the pattern's own, no flag that would read oddly beside them (`git clean -f
/// -fd`).
pub(super) fn ordinary_operand(command: &str, flagged: bool) -> &'static str {
    // (command, operand, fits after the pattern's own flags)
    let known: &[(&str, &str, bool)] = &[
        ("git", "push", true),
        ("git push", "origin main", true),
        ("git commit", "-m wip", true),
        ("git status", "-s", true),
        ("git diff", "--stat", true),
        ("git log", "--oneline", true),
        ("git show", "--stat", true),
        ("git reset", "HEAD~1", true),
        ("git rebase", "main", true),
        ("git merge", "main", true),
        ("git checkout", "main", true),
        ("git switch", "main", true),
        ("git stash", "drop", true),
        ("git clean", "-fd", false),
        ("git branch", "-D main", false),
        ("gh", "pr merge", true),
        ("make", "build", true),
        ("npm", "install x", true),
        ("pnpm", "add x", true),
        ("yarn", "add x", true),
        ("bun", "add x", true),
        ("pip", "install x", true),
        ("terraform apply", "-auto-approve", false),
        ("find", ". -name x", true),
        ("sed", "-i s/a/b/ x", true),
        ("mv", "a b", true),
        ("cp", "a b", true),
        ("su", "root", true),
        // `env` prints the environment; `env x` runs `x`, `env -u HOME` prints the rest.
        ("env", "-u HOME", false),
        ("printenv", "GITHUB_TOKEN", true),
        ("reboot", "-f", false),
        ("poweroff", "-f", false),
        ("halt", "-f", false),
        ("shutdown", "now", true),
    ];
    match known.iter().find(|(c, _, _)| *c == command) {
        Some((_, op, after_flags)) if *after_flags || !flagged => op,
        _ => "x",
    }
}

/// The command an exact bash pattern was written for, with an ordinary operand
/// (`git push --force` → `git push --force origin main`, `rm -rf` → `rm -rf x`): the pattern
/// has no wildcard and is one simple command (words of plain characters, single spaces)
/// whose words after the command (its arity prefix, OpenCode's own table) are flags alone.
/// `None` for a pattern that already has an operand (`rm -rf /`, `git add .`), names a
/// script (`make test`, `npm run dev`), or acts on the whole tree by a flag (`git add -A`).
pub(super) fn with_operands(pattern: &str) -> Option<String> {
    if pattern.is_empty() || pattern.contains(['*', '?']) {
        return None;
    }
    let words: Vec<&str> = pattern.split(' ').collect();
    let plain = |w: &&str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%~#".contains(c))
    };
    if !words.iter().all(plain) {
        return None;
    }
    let first = words[0];
    if !first.starts_with(|c: char| c.is_ascii_alphanumeric())
        || first.contains('=')
        || LISTING_BUILTINS.contains(&first)
    {
        return None;
    }
    let n = prefix_len(&words);
    let (command, flags) = words.split_at(n);
    if command[1..].iter().any(|w| w.starts_with('-')) {
        return None;
    }
    // Every word after the command a flag; a number after a flag is an operand (`kill -9
    // -1`: `-1` is every process).
    for (k, f) in flags.iter().enumerate() {
        let numeric = f.len() > 1 && f[1..].chars().all(|c| c.is_ascii_digit());
        if !f.starts_with('-') || *f == "-" || *f == "--" || (k > 0 && numeric) {
            return None;
        }
    }
    if RUNNERS.contains(&first)
        && command
            .get(1)
            .is_some_and(|sub| !OPERAND_SUBCOMMANDS.contains(sub))
    {
        return None;
    }
    let joined = command.join(" ");
    if ACTS_BY_FLAG
        .iter()
        .any(|(c, by)| *c == joined && flags.iter().any(|f| by.contains(f)))
    {
        return None;
    }
    Some(format!(
        "{pattern} {}",
        ordinary_operand(&joined, !flags.is_empty())
    ))
}

/// What `never-matches` says about an exact bash deny or ask ([`with_operands`]).
pub(super) struct Slip {
    /// The command with operands, decided less strictly than the rule.
    pub witness: Witness,
    pub message: String,
    pub help: String,
}

/// Rule `i` of `agent`, an exact bash deny or ask, leaves the command it names with an
/// ordinary operand less strict (a command the bash tool asks about as one part, decided
/// by the whole call as `explain` decides it), and writing `PATTERN *` in its place would
/// fix that for this agent: no later rule decides the command, and no earlier rule of
/// another answer lies inside `PATTERN *` (the rewrite would override it: deny what the
/// author allowed there, or undo a stricter rule).
pub(super) fn slip(
    ctx: &Ctx<'_>,
    agent: &Agent,
    i: usize,
    splitter: &mut Splitter,
) -> Option<Slip> {
    let r = agent.rules.get(i)?;
    let wanted = r.action.effective();
    if r.permission != "bash" || r.loc.is_none() {
        return None;
    }
    // An exact allow only for a command nobody runs bare (`"head": "allow"`: `head` with
    // no file reads the terminal) or a git read whose flags are everyday (`"git diff":
    // "allow"`, yet `git diff --stat` asks): the author needs the operand form (severity
    // rule clause 2; BARE-CMD-ALLOW in two blind expert readings).
    if wanted == Effect::Allow
        && (agent.is_internal()
            || !(OPERAND_READERS.contains(&r.pattern.as_str())
                || GIT_READS.contains(&r.pattern.as_str())))
    {
        return None;
    }
    // The rule decides its own text: a dead one is the order checks' to report.
    if ctx.witness_of(agent, "bash", &r.pattern)?.rule != Some(i) {
        return None;
    }
    if CATCH_ALL_WORDS.contains(&r.pattern.as_str()) {
        return catch_all_word(ctx, agent, i, splitter);
    }
    let command = with_operands(&r.pattern)?;
    // One part the tool asks about.
    let parts = splitter.parts(&command);
    if parts.len() != 1 || !parts[0].asked() || parts[0].text != command {
        return None;
    }
    let w = looser(ctx, agent, i, splitter, &command)?;
    let rewritten = format!("{} *", r.pattern);
    let inside = |q: &str| {
        q.split(['*', '?'])
            .next()
            .is_some_and(|lit| lit.starts_with(&format!("{} ", r.pattern)))
    };
    let platform = ctx.project.platform;
    let overridden = agent.rules[..i].iter().any(|q| {
        q.loc.is_some()
            && q.action.effective() != wanted
            && inside(&q.pattern)
            && Wildcard::compile(&q.permission).is_match("bash", platform)
    });
    if overridden {
        return None;
    }
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let (what, verb, verbs) = match wanted {
        Effect::Deny => ("deny", "deny", "denies"),
        Effect::Allow => ("allow", "allow", "allows"),
        _ => ("ask", "ask for", "asks for"),
    };
    let message = format!(
        "this bash {what} matches the exact command {} only, never the command with operands: bash {} is {} today; write {} to {verb} it with operands",
        q(&r.pattern),
        q(&command),
        match w.action {
            Effect::Allow => "allowed",
            Effect::Deny => "denied",
            _ => "asked",
        },
        q(&rewritten),
    );
    // An allow of a program with write modes (`cat`, `echo`, `find`): rewritten, it would
    // let them run too (`cat x > FILE`, `cat .env`), which the block decides otherwise today
    // (blind fresh-5 B: pixel48's reviewer, `"cat": "allow"` under `"*": "deny"`; "cat *"
    // alone brought two deny-bypass warnings). The modes keep today's decision after it.
    let modes = super::deny_bypass::modes_of(&r.pattern);
    let keep = match w.action {
        Effect::Deny => Some(("deny", "denied")),
        Effect::Ask => Some(("ask", "asked")),
        Effect::Allow => None,
    };
    let also = match keep {
        Some((action, done)) if wanted == Effect::Allow && !modes.is_empty() => {
            let examples: Vec<String> = modes.iter().map(|(c, _)| format!("`{c}`")).collect();
            let mut entries: Vec<String> = Vec::new();
            for (_, patterns) in &modes {
                for p in patterns.iter() {
                    let e = format!("{}: \"{action}\"", q(p));
                    if !entries.contains(&e) {
                        entries.push(e);
                    }
                }
            }
            format!(
                "; it would also let {} run, which {} {done} today: follow it with {} to keep {} so",
                examples.join(", "),
                if examples.len() == 1 { "is" } else { "are" },
                entries.join(", "),
                if examples.len() == 1 { "it" } else { "them" },
            )
        }
        _ => String::new(),
    };
    let help = format!(
        "write {} in its place: OpenCode's trailing ` *` also matches the bare {}, so it {verbs} both{also}",
        q(&rewritten),
        q(&r.pattern),
    );
    Some(Slip {
        witness: w,
        message,
        help,
    })
}

/// `command` decided less strictly than rule `i` of `agent` would decide it, by an earlier
/// rule or the default (a later one would decide it whatever rule `i` said), and by the
/// whole call alike (no outside directory asked first): its witness.
fn looser(
    ctx: &Ctx<'_>,
    agent: &Agent,
    i: usize,
    splitter: &mut Splitter,
    command: &str,
) -> Option<Witness> {
    let wanted = agent.rules.get(i)?.action.effective();
    let w = ctx.witness_of(agent, "bash", command)?;
    let call = super::always_overrides_deny::decide_command(ctx, agent, splitter, command, None);
    let differs = if wanted == Effect::Allow {
        openness(w.action) < openness(wanted)
    } else {
        openness(w.action) > openness(wanted)
    };
    (differs && w.rule.is_none_or(|k| k < i) && call.effect == w.action).then_some(w)
}

/// Words written as if OpenCode had a keyword for "every other command": it has none
/// (the catch-all is `*`), so the rule matches a command of that name.
const CATCH_ALL_WORDS: &[&str] = &["default", "other", "others", "fallback"];

/// Programs that read the files they are given, and do nothing useful bare (they wait on
/// the terminal): an exact allow of one is written for its operand forms.
pub(super) const OPERAND_READERS: &[&str] = &[
    "cat", "head", "tail", "grep", "rg", "wc", "awk", "jq", "cut", "sort", "uniq", "diff", "file",
    "stat", "less", "more", "bat", "tr", "fd",
];

/// Git's reads whose everyday forms carry flags or operands (`git diff --stat`, `git log
/// --oneline`, `git show abc123`). Not `git status`: its bare form is the everyday one, and
/// an ask for `git status -s` is a small loss (judged so on the held half).
const GIT_READS: &[&str] = &["git diff", "git log", "git show"];

/// Commands no rule of a config is likely to name.
const ANY_COMMANDS: &[&str] = &["python3 main.py", "make build", "ls", "node index.js"];

/// [`slip`] for a rule written as a catch-all word (`"default": "ask"`): a command no other
/// rule names is decided less strictly, and `"*"` written first in the block is the fix
/// (first: written last, it would override every rule before it).
fn catch_all_word(ctx: &Ctx<'_>, agent: &Agent, i: usize, splitter: &mut Splitter) -> Option<Slip> {
    let r = agent.rules.get(i)?;
    // `"*"` first in the block would also override the stricter bash rules of the files
    // and layers before it (a shared `rm *` deny under an agent's block): no help holds.
    let platform = ctx.project.platform;
    let stricter_before = agent.rules[..i].iter().any(|q| {
        q.loc.is_some()
            && !super::same_origin(q, r)
            && openness(q.action.effective()) < openness(r.action.effective())
            && Wildcard::compile(&q.permission).is_match("bash", platform)
    });
    if stricter_before {
        return None;
    }
    let w = ANY_COMMANDS
        .iter()
        .find_map(|c| looser(ctx, agent, i, splitter, c))?;
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let message = format!(
        "OpenCode has no {} keyword: this bash {} matches the command {} only, and the commands no other rule names are decided by the rules before it: bash {} is {} today",
        q(&r.pattern),
        r.action,
        q(&r.pattern),
        q(&w.input),
        match w.action {
            Effect::Allow => "allowed",
            _ => "asked",
        },
    );
    let help = format!(
        "write \"*\": {} first in this block instead: `*` matches every command, and the rules after it are its exceptions (written last, it would override them all)",
        q(&r.action.to_string()),
    );
    Some(Slip {
        witness: w,
        message,
        help,
    })
}

#[cfg(test)]
mod tests {
    use super::with_operands;

    #[test]
    fn the_command_an_exact_pattern_was_written_for() {
        for (pattern, meant) in [
            ("rm -rf", Some("rm -rf x")),
            ("git add", Some("git add x")),
            ("git rm --cached", Some("git rm --cached x")),
            ("git push", Some("git push origin main")),
            ("git push --force", Some("git push --force origin main")),
            ("git clean", Some("git clean -fd")),
            ("git clean -f", Some("git clean -f x")),
            (
                "git commit --no-verify",
                Some("git commit --no-verify -m wip"),
            ),
            ("sudo", Some("sudo x")),
            ("npm install", Some("npm install x")),
            ("npm", Some("npm install x")),
            // Acts on the whole tree by a flag: an operand narrows it.
            ("git add -A", None),
            ("git add --update", None),
            // A script or target: the text is the complete command.
            ("make test", None),
            ("npm run dev", None),
            ("cargo run", None),
            // Not exact, with an operand already, or no simple command.
            ("rm -rf *", None),
            ("rm -rf /", None),
            ("git add .", None),
            ("kill -9 -1", None),
            ("set", None),
            ("env", Some("env -u HOME")),
            ("pm2 logs", None),
            ("yes > /dev/null", None),
            ("FOO=1 make", None),
            ("git  push", None),
        ] {
            assert_eq!(with_operands(pattern).as_deref(), meant, "{pattern}");
        }
    }
}
