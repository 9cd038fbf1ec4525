//! A bash pattern that needs a chain between commands (`"*&&*": "ask"`, `"*|*": "ask"`,
//! `"git status* && git diff*": "allow"`, the fork bomb `":(){:|:&};:": "deny"`): OpenCode
//! 1.18.34's bash tool parses the command (tree-sitter-bash) and asks about every command
//! of it on its own ([`crate::shell::split`]), so `git status && git diff` is asked as
//! `git status` and `git diff`, never as the whole line. Such a pattern matches only a
//! single command that holds the operator in its own text: quoted (`echo "a && b"`), inside
//! `$(…)` (`echo $(a && b)` is asked as itself, then as `a` and `b`), or for `;` escaped
//! (`find … -exec rm {} \;`). Verified on 1.18.34 (`debug agent build --tool bash` under
//! `{"*": "allow", "*&&*": "deny", "*;*": "deny", "*|*": "deny"}`): `true && true`, `true;
//! true`, `true | true` and `:(){:|:&};:` run; `echo "a && b"`, `echo $(true && true)` and
//! `find . -exec true {} \;` are refused. `never-matches` reports it at the rule.
//!
//! The chain the author meant is the pattern with its `*` filled in (`git status && git
//! diff`; a `*` standing for a whole command is filled with a command the agent allows,
//! `ls && pwd`), kept only when the rule, had OpenCode asked about the whole line, would
//! decide it. What decides it instead is the bash tool's split, decided as `explain bash`
//! decides it.

use super::overlap::openness;
use super::{Ctx, Level, Witness};
use crate::agents::Agent;
use crate::glob::Wildcard;
use crate::model::Effect;
use crate::shell::Splitter;

/// What `never-matches` says about a chain pattern.
pub(super) struct Chain {
    pub witness: Witness,
    pub level: Level,
    pub message: String,
    pub help: String,
}

/// The first chain operator of `pattern` outside quotes (`&&`, `||`, `;`, `|`, `&`, a
/// newline), skipping escaped characters and redirections (`>|`, `&>`, `>&`).
pub(super) fn operator(pattern: &str) -> Option<&'static str> {
    let b = pattern.as_bytes();
    let (mut single, mut double) = (false, false);
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        let next = b.get(k + 1).copied();
        let prev = k.checked_sub(1).map(|p| b[p]);
        match c {
            b'\\' if !single => k += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            _ if single || double => {}
            b'&' if next == Some(b'&') => return Some("&&"),
            b'|' if next == Some(b'|') => return Some("||"),
            b';' => return Some(";"),
            b'\n' => return Some("a new line"),
            b'|' if prev != Some(b'>') => return Some("|"),
            b'&' if prev != Some(b'>') && next != Some(b'>') => return Some("&"),
            _ => {}
        }
        k += 1;
    }
    None
}

/// Commands to put where a `*` stands for a whole command: the literal heads of the
/// agent's bash allows (`ls *` → `ls`), then everyday ones.
fn commands(agent: &Agent, splitter: &mut Splitter) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let heads = agent
        .rules
        .iter()
        .rev()
        .filter(|r| r.permission == "bash" && r.action.effective() == Effect::Allow)
        .map(|r| {
            r.pattern
                .split(['*', '?'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        });
    let everyday = ["ls", "pwd", "git status", "echo hi"].map(String::from);
    for c in everyday.into_iter().chain(heads) {
        if out.len() >= 6 {
            break;
        }
        if c.is_empty() || out.contains(&c) || operator(&c).is_some() {
            continue;
        }
        let parts = splitter.parts(&c);
        if parts.len() == 1 && parts[0].asked() && parts[0].text == c {
            out.push(c);
        }
    }
    out
}

/// Chains the pattern was written for, most likely first: each `*` run (and `?`) filled.
/// A `*` standing for a whole command (at the start or end, or next to an operator) is
/// filled with one of `commands` (the first such `*` with the first, the next with the
/// second, …); a `*` right after a word (`git status*`) with nothing; one after a space
/// (`cd * && *`) with `x`.
fn instances(pattern: &str, commands: &[String]) -> Vec<String> {
    // Literal pieces and, between them, each wildcard's choices.
    let mut pieces: Vec<String> = vec![String::new()];
    let mut slots: Vec<Vec<String>> = Vec::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        if c != '*' && c != '?' {
            if let Some(piece) = pieces.last_mut() {
                piece.push(c);
            }
            k += 1;
            continue;
        }
        let start = k;
        while k < chars.len() && (chars[k] == '*' || chars[k] == '?') {
            k += 1;
        }
        let before = chars[..start].iter().rev().find(|c| **c != ' ');
        let after = chars[k..].iter().find(|c| **c != ' ');
        let edge = |c: Option<&char>| c.is_none_or(|c| "&|;(){}\n".contains(*c));
        let choices = if chars[start..k].contains(&'?') {
            vec!["x".to_string()]
        } else if edge(before) && edge(after) {
            // Spaced from the operators next to it: `*&&*` → `ls && pwd`.
            let pad_before = start > 0 && chars[start - 1] != ' ' && chars[start - 1] != '\n';
            let pad_after = k < chars.len() && !matches!(chars[k], ' ' | '\n' | ';');
            commands
                .iter()
                .map(|c| {
                    format!(
                        "{}{c}{}",
                        if pad_before { " " } else { "" },
                        if pad_after { " " } else { "" }
                    )
                })
                .collect()
        } else if start > 0 && chars[start - 1] == ' ' {
            // Spaced from an operator right after it: `tar *| curl` → `tar x | curl`.
            let pad = if chars.get(k).is_some_and(|c| "|&;".contains(*c)) {
                " "
            } else {
                ""
            };
            vec![format!("x{pad}")]
        } else {
            vec![String::new()]
        };
        // Free slots start at different commands: `*&&*` → `ls && pwd` first.
        let mut choices = choices;
        let free = slots.iter().filter(|s: &&Vec<String>| s.len() > 1).count();
        let n = choices.len();
        if n > 1 {
            choices.rotate_left(free % n);
        }
        slots.push(choices);
        pieces.push(String::new());
    }
    // Every combination, the first choices first, at most 64.
    let mut out = Vec::new();
    let mut index = vec![0usize; slots.len()];
    loop {
        let mut s = pieces[0].clone();
        for (j, slot) in slots.iter().enumerate() {
            s.push_str(slot.get(index[j]).map_or("", String::as_str));
            s.push_str(&pieces[j + 1]);
        }
        out.push(s);
        if out.len() >= 64 {
            break;
        }
        // Next combination (the last slot fastest).
        let mut j = slots.len();
        loop {
            if j == 0 {
                return out;
            }
            j -= 1;
            index[j] += 1;
            if index[j] < slots[j].len() {
                break;
            }
            index[j] = 0;
        }
    }
    out
}

/// Rule `i` of `agent`, a bash pattern that needs a chain: the chain it was written for,
/// what OpenCode decides for it instead, and how much that loses (the severity rule of
/// docs/checks.md: a deny or ask whose chain runs less strictly, or an allow whose chain
/// is asked or denied, is a warning; a chain decided as the rule would decide it anyway
/// loses nothing, a note).
pub(super) fn slip(
    ctx: &Ctx<'_>,
    agent: &Agent,
    i: usize,
    splitter: &mut Splitter,
) -> Option<Chain> {
    let r = agent.rules.get(i)?;
    if r.permission != "bash" || r.loc.is_none() {
        return None;
    }
    let op = operator(&r.pattern)?;
    let wanted = r.action.effective();
    let platform = ctx.project.platform;
    let pattern = Wildcard::compile(&r.pattern);
    let fillers = commands(agent, splitter);
    // Chains: two commands or more, none of which the pattern matches, that the rule
    // would decide had OpenCode asked about the whole line.
    let mut chains = Vec::new();
    for chain in instances(&r.pattern, &fillers) {
        let parts = splitter.parts(&chain);
        if parts.len() < 2
            || parts
                .iter()
                .any(|p| p.asked() && pattern.is_match(&p.text, platform))
        {
            continue;
        }
        if ctx
            .witness_of(agent, "bash", &chain)
            .is_none_or(|w| w.rule != Some(i))
        {
            continue;
        }
        chains.push((chain, parts));
    }
    let (first, _) = chains.first()?;
    let decided = |chain: &str, splitter: &mut Splitter| {
        let d = super::always_overrides_deny::decide_command(ctx, agent, splitter, chain, None);
        Witness {
            permission: "bash".into(),
            input: chain.to_string(),
            action: d.effect,
            rule: d.decision().and_then(|d| d.rule),
        }
    };
    let lost = |w: &Witness| match wanted {
        Effect::Allow => w.action != Effect::Allow,
        _ => openness(w.action) > openness(wanted),
    };
    // An allow is judged on the chain it was written for; a deny or ask on any chain it
    // would decide (every chain of commands the agent allows is one it meant to stop).
    let judged = if wanted == Effect::Allow {
        1
    } else {
        chains.len()
    };
    let mut witness = None;
    for (chain, _) in &chains[..judged] {
        let w = decided(chain, splitter);
        if lost(&w) {
            witness = Some(w);
            break;
        }
    }
    let level = if witness.is_some() {
        Level::Warning
    } else {
        Level::Info
    };
    let witness = witness.unwrap_or_else(|| decided(first, splitter));
    let parts: Vec<String> = chains
        .iter()
        .find(|(c, _)| *c == witness.input)
        .map(|(_, p)| p.iter().filter(|p| p.asked()).map(|p| q(&p.text)).collect())
        .unwrap_or_default();
    let asked_as = match parts.as_slice() {
        [] => "asked about no command".to_string(),
        [one] => format!("asked as {one}"),
        [init @ .., last] => format!("asked as {} and {last}", init.join(", ")),
    };
    let literal = !r.pattern.contains(['*', '?']);
    let matches_only = if literal {
        "never about this text, so the rule never matches".to_string()
    } else {
        let escaped = if op == ";" {
            ", escaped as in `find … -exec rm {} \\;`,"
        } else {
            ""
        };
        format!(
            "so this pattern never matches a chained command: it matches only a single command that holds `{op}` in its own text (quoted{escaped} or inside `$(…)`)"
        )
    };
    let today = match witness.action {
        Effect::Allow => "allowed",
        Effect::Ask => "asked",
        Effect::Deny => "denied",
    };
    let message = format!(
        "OpenCode's bash tool asks about each command of a chain on its own ({} is {asked_as}), {matches_only}; bash {} is {today} today{}",
        q(&witness.input),
        q(&witness.input),
        if level == Level::Info {
            ", as this rule would decide it"
        } else {
            ""
        },
    );
    // The commands the pattern names (`curl * | sh` names `curl` and `sh`), to say which
    // patterns to write; a pattern of wildcards and operators only names none.
    let pieces: Vec<String> = r
        .pattern
        .split(op)
        .map(|p| p.trim().trim_end_matches('*').trim().to_string())
        .filter(|p| p.starts_with(|c: char| c.is_ascii_alphanumeric()))
        .collect();
    let help = match wanted {
        Effect::Allow => {
            // Exactly the commands OpenCode asks: a literal rule's as written (an
            // exact-command gate stays exact: `bun run lint`, not `bun run lint*`, which
            // also allows `--fix`; blind fresh-13 A: harpia's verifier), a pattern's pieces
            // with their wildcard. `cd` is asked about by no rule.
            let cd = |p: &str| p == "cd" || p.starts_with("cd ");
            let each: Vec<String> = if literal && !parts.is_empty() {
                parts.clone()
            } else {
                pieces
                    .iter()
                    .filter(|p| !cd(p))
                    .map(|p| format!("\"{p}*\""))
                    .collect()
            };
            let dropped = pieces.iter().any(|p| cd(p));
            format!(
                "a chain cannot be matched as one: replace this rule by allowing each command on its own ({}): OpenCode allows a chain when it allows every command in it{}",
                if each.is_empty() {
                    "such as \"git status*\"".to_string()
                } else {
                    each.join(", ")
                },
                if dropped {
                    ", and asks nothing about `cd`"
                } else {
                    ""
                }
            )
        }
        _ => {
            let (verb, verbs) = if wanted == Effect::Deny {
                ("denying", "denies")
            } else {
                ("asking for", "asks for")
            };
            // The command a chain ends in is what it was written to stop (`| sh`).
            let example = pieces
                .last()
                .and_then(|p| p.split_whitespace().next())
                .map(|w| format!("\"{w} *\""))
                .unwrap_or_else(|| "\"rm *\"".to_string());
            format!(
                "a chain cannot be matched as one: replace this rule by {verb} the commands you meant to stop, each by its own pattern (e.g. {example}), which {verbs} them outside a chain too; OpenCode {verbs} a chain when it {verbs} any command in it"
            )
        }
    };
    Some(Chain {
        witness,
        level,
        message,
        help,
    })
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{instances, operator};

    #[test]
    fn operators() {
        for (p, op) in [
            ("*&&*", Some("&&")),
            ("*;*", Some(";")),
            ("*|*", Some("|")),
            ("* || *", Some("||")),
            (":(){:|:&};:", Some("|")),
            ("sleep 1 &", Some("&")),
            ("echo \"a && b\"", None),
            ("echo 'a | b'", None),
            ("find * -exec rm {} \\;", None),
            ("* 2>&1", None),
            ("* &> x", None),
            ("* >| x", None),
            ("git status*", None),
        ] {
            assert_eq!(operator(p), op, "{p}");
        }
    }

    #[test]
    fn chains_meant() {
        let c = ["ls".to_string(), "pwd".to_string()];
        assert_eq!(
            instances("git status* && git diff*", &c)[0],
            "git status && git diff"
        );
        assert_eq!(instances("*&&*", &c)[..2], ["ls && pwd", "ls && ls"]);
        assert_eq!(instances("cd * && *", &c)[0], "cd x && ls");
        assert_eq!(instances(":(){:|:&};:", &c), [":(){:|:&};:"]);
        assert_eq!(instances("tar *| curl*", &c)[0], "tar x | curl");
    }
}
