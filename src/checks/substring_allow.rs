//! `substring-allow` (warning)
//!
//! ## What it finds
//! A bash allow that starts with `*` (`"*ps*": "allow"`, `"*date*"`, `"*top*"`), so its
//! word matches anywhere in any command, inside other words included: `*ps*` allows
//! `gh api -X DELETE https://…` (`https`), `*date*` allows `sudo apt-get update`, `*top*`
//! allows `sudo systemctl stop nginx`. Reported where such a command, one people run and
//! one that changes or destroys something, is allowed by this rule and would be asked or
//! denied without it; decided as `explain bash` decides it (`crate::call`). One finding per
//! rule, naming every agent it opens.
//!
//! ## Why it matters
//! OpenCode matches a pattern against the whole command text, and `*` matches any text,
//! spaces included. An allow-list written to let harmless commands through (`ps`, `date`,
//! `top`) then lets through every command that merely contains those letters, past the
//! catch-all ask the list was written under.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"*": "ask", "*ps*": "allow"}}}
//! ```
//! `gh api -X DELETE https://api.github.com/repos/OWNER/REPO` runs without asking.
//!
//! ## How to fix
//! Write the command at the start of the pattern: `"ps": "allow"` and `"ps *": "allow"`
//! in place of `"*ps*"`. OpenCode asks each command of a chain (`a && b`, `a | b`) on its
//! own, so a leading `*` is not needed to reach a command later in a line.

use super::deny_bypass::call_bash;
use super::{Check, Ctx, Finding, Level, Witness};
use crate::model::{Action, Effect};
use crate::shell::Places;

pub const CHECK: Check = Check {
    id: "substring-allow",
    level: Level::Warning,
    summary: "a bash allow starting with `*` matches its word inside any command (`*ps*` allows `gh api -X DELETE https://…`)",
    docs: include_str!("substring_allow.rs"),
};

/// Commands people run that change or destroy something, each a single command (OpenCode
/// asks each command of a chain on its own). The first one a leading-`*` allow takes, and
/// that would ask or be denied without it, is the witness.
const COMMANDS: &[&str] = &[
    "sudo systemctl stop nginx",
    "sudo apt-get update",
    "gh api -X DELETE https://api.github.com/repos/OWNER/REPO",
    "git push --force https://github.com/OWNER/REPO.git main",
    "gh repo delete OWNER/REPO --yes",
    "terraform destroy -auto-approve",
    "dropdb production",
    "git update-ref -d refs/heads/main",
    "kubectl delete namespace production",
    "docker system prune -af",
    "git reset --hard HEAD~1",
    "git clean -fdx",
    "git branch -D main",
    "rm -rf src",
    "npm unpublish --force",
    "pkill -f python",
    "killall node",
    "crontab -r",
    "sudo passwd root",
    "shutdown -h now",
    "chmod -R 777 .",
    "truncate -s 0 app.log",
    "aws s3 rm s3://bucket --recursive",
    "npx prisma migrate reset --force",
    "redis-cli FLUSHALL",
    "supabase db reset",
    "dd if=/dev/zero of=/dev/sda",
];

/// The word of a leading-`*` pattern (`*ps*` → `ps`, `*git log *` → `git log`), or `None` for any other pattern (a wildcard inside the
/// word, no word, or no leading `*`).
fn word(pattern: &str) -> Option<&str> {
    let rest = pattern.strip_prefix('*')?.trim_start_matches('*');
    let end = rest.find(['*', '?']).unwrap_or(rest.len());
    let (lit, tail) = rest.split_at(end);
    if !tail.chars().all(|c| c == '*') {
        return None;
    }
    let w = lit.trim();
    if w.is_empty() || w.contains(['\'', '"', '\\', '$', '`', ';', '|', '&', '[', ']', '{']) {
        return None;
    }
    Some(w)
}

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    let mut splitter = ctx.splitter();
    let places = Places::of(ctx.project.loaded.paths());
    for agent in ctx.project.agents.iter() {
        if agent.is_internal() {
            continue;
        }
        for (i, r) in agent.rules.iter().enumerate() {
            if r.loc.is_none() || r.action != Action::Allow || r.permission != "bash" {
                continue;
            }
            let Some(w) = word(&r.pattern) else {
                continue;
            };
            let program = w.split(' ').next().unwrap_or(w);
            // Without it: rule `i` decides the command, so no later rule matches it, and the
            // rules before it decide (as `deny-bypass` asks it, no copy of the ruleset).
            let without = &agent.rules[..i];
            let found = COMMANDS.iter().find_map(|&command| {
                // Another command, which merely contains the word.
                if !command.contains(w)
                    || command.split(' ').next() == Some(program)
                    || command.split(' ').nth(1) == Some(program) && command.starts_with("sudo ")
                {
                    return None;
                }
                let d = call_bash(ctx, agent, &mut splitter, &places, command);
                if d.effect != Effect::Allow || d.bash.len() != 1 || d.bash[0].rule != Some(i) {
                    return None;
                }
                let before = crate::agents::evaluate(without, "bash", command, platform);
                (before.effect != Effect::Allow).then_some((command, before))
            });
            let Some((command, before)) = found else {
                continue;
            };
            let was = match (before.effect, before.rule.and_then(|k| without.get(k))) {
                (e, Some(g)) => format!("{e} by {}", ctx.rule_at(g)),
                (e, None) => format!("{e}, OpenCode's default"),
            };
            let message = format!(
                "this allow starts with `*`, so `{w}` matches anywhere in a command, inside other words too: `{command}` runs without asking (without this rule: {was})"
            );
            let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
            let help = format!(
                "write the command at the start of the pattern, in place of {}: {}: \"allow\" and {}: \"allow\"; OpenCode asks each command of a chain (`a && b`, `a | b`) on its own, so no leading `*` is needed to reach one",
                quoted(&r.pattern),
                quoted(w),
                quoted(&format!("{w} *")),
            );
            out.push(
                Finding::at_rule(&CHECK, agent, i, message)
                    .with_level(Level::Warning)
                    .with_witnesses(vec![Witness {
                        permission: "bash".into(),
                        input: command.to_string(),
                        action: Effect::Allow,
                        rule: Some(i),
                    }])
                    .with_help(help),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::word;

    #[test]
    fn words_of_leading_star_patterns() {
        assert_eq!(word("*ps*"), Some("ps"));
        assert_eq!(word("*git log *"), Some("git log"));
        assert_eq!(word("**top"), Some("top"));
        assert_eq!(word("ps *"), None);
        assert_eq!(word("*"), None);
        assert_eq!(word("*git*log*"), None);
    }
}
