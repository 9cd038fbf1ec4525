//! `always-overrides-deny` (warning when the question is an everyday command; info)
//!
//! ## What it finds
//! A bash `deny` that one "Always" answer to an ordinary question undoes. When a command
//! asks and the user answers "Always", OpenCode stores an allow for the command's *arity
//! prefix* (`rm foo` stores `rm *`, `git push origin` stores `git push *`; the table is
//! OpenCode 1.18.34's) in a list that is evaluated **after** every configured rule. From
//! then on, for every session of the project until OpenCode restarts, that allow decides
//! every command it matches, including those the deny was written for.
//!
//! The finding names the asking command, the stored pattern and a command the deny denies
//! that the stored pattern would then allow, each decided over the agent's rules. For an
//! exact deny of a command with no operand (`"git push --force": "deny"`, `"rm -rf":
//! "deny"`, no wildcard) it first says what matters more: the deny matches that text
//! alone, so `git push --force origin main` is not denied even today; that is
//! `never-matches`' warning at the rule (one mistake, reported once at its cause), and this
//! finding is then a note.
//!
//! It is a warning when the question that stores the pattern is one a person is asked
//! every day (the prefix itself or with a plain argument: `git push`, `rm file.txt`),
//! so one "Always" there is realistic; a note when only a contrived command raises it.
//! The denies one stored pattern undoes together are one finding, at the first of them,
//! naming the others.
//!
//! ## Why it matters
//! `{"*": "ask", "rm -rf *": "deny"}` reads as "always refuse `rm -rf`", but one "Always"
//! on a harmless `rm foo.txt` stores `rm *`, and `rm -rf /` is then allowed silently.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"*": "ask", "rm -rf *": "deny"}}}
//! ```
//! `rm` asks (rule `*`); "Always" stores `rm *`; `rm -rf` is denied today and allowed
//! after it.
//!
//! ## How to fix
//! No rule in the config outlasts a stored "Always": it is evaluated after every
//! configured rule, so writing `"rm -rf *": "deny"` again changes nothing. Answer "Once"
//! to questions that share the deny's prefix (`rm foo.txt`); `--auto` answers "once",
//! which stores nothing. The only config change that removes the risk makes every command
//! of the prefix decided without a question (`"rm *": "deny"`, or allows for each harmless
//! form), which also changes what you ask for today: `check` says the choice, it does not
//! propose a rule.

use super::{Check, Ctx, Finding, Level, Reach, Witness, named_list};
use crate::agents::{Agent, Decision};
use crate::glob::Wildcard;
use crate::glob::analysis::{Analysis, Fixed, RuleShape};
use crate::model::{Action, Effect};
use crate::shell::Splitter;
use crate::shell::decide::decide;

pub const CHECK: Check = Check {
    id: "always-overrides-deny",
    level: Level::Info,
    summary: "a bash deny that answering \"Always\" to an asking command would undo",
    docs: include_str!("always_overrides_deny.rs"),
};

/// `reach`: the pass's reachability over `ctx.agents`. A deny that decides nothing is
/// skipped: no command it denies is decided by it, so no candidate could show one.
pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let platform = ctx.project.platform;
    // Whether a rule's permission glob matches `bash`, by its text (a handful of texts,
    // thousands of rules).
    let names = std::cell::RefCell::new(std::collections::HashMap::<String, bool>::new());
    let bash = |r: &crate::model::Rule| {
        if let Some(&known) = names.borrow().get(&r.permission) {
            return known;
        }
        let is = Wildcard::compile(&r.permission).is_match("bash", platform);
        names.borrow_mut().insert(r.permission.clone(), is);
        is
    };
    let mut shell = Shell {
        splitter: ctx.splitter(),
        parts: Default::default(),
        meets: Default::default(),
        decided: Default::default(),
        tails: Default::default(),
    };
    let mut groups: Vec<Group> = Vec::new();
    for (a, agent) in ctx.agents.iter().enumerate() {
        let dead = |i: usize| {
            matches!(
                reach.get(a).and_then(|row| row.get(i)),
                Some(Some(Reach::Dead(_)))
            )
        };
        let asking: Vec<(usize, Fixed)> = (0..agent.rules.len())
            .rev()
            .filter(|&j| agent.rules[j].action.effective() == Effect::Ask && bash(&agent.rules[j]))
            .map(|j| (j, Fixed::new(&agent.rules[j].pattern)))
            .collect();
        // One finding per stored pattern: the denies one "Always" undoes together are one
        // mistake, reported at the first of them, naming the others. Across agents too
        // (one shared ask, the same deny in five agents' blocks: blind fresh-9 A,
        // Claytonrss, ten findings of one answer).
        let mut by_stored: Vec<(String, Finding, Vec<usize>)> = Vec::new();
        for (i, r) in agent.rules.iter().enumerate() {
            if r.action != Action::Deny || r.loc.is_none() || !bash(r) || dead(i) {
                continue;
            }
            if let Some((always, f)) = finding(ctx, agent, &asking, i, &mut shell) {
                match by_stored.iter_mut().find(|(a, _, _)| *a == always) {
                    Some((_, _, more)) => more.push(i),
                    None => by_stored.push((always, f, Vec::new())),
                }
            }
        }
        for (always, f, more) in by_stored {
            let more = more.into_iter().map(|k| (a, k));
            // Across agents by the stored pattern alone: OpenCode keeps one list of "Always"
            // answers per project instance, shared by every session and agent (spec §2.3),
            // so one answer given in any agent undoes each of these denies (blind fresh-11 A:
            // XanCloud, `tofu *` and `rm *` undoing denies in two agent files, four
            // findings of two answers).
            match groups
                .iter_mut()
                .find(|g| g.always == always && g.finding.level == f.level)
            {
                // The same place in another agent (a shared deny): one more agent, not one
                // more deny.
                Some(g) if g.finding.loc == f.loc => {
                    if !g.finding.agents.contains(&agent.name) {
                        g.finding.agents.push(agent.name.clone());
                    }
                }
                Some(g) => {
                    g.more.extend(f.rule.map(|i| (a, i)));
                    g.more.extend(more);
                }
                None => groups.push(Group {
                    always,
                    finding: f,
                    more: more.collect(),
                }),
            }
        }
    }
    for Group {
        always,
        finding: mut f,
        mut more,
    } in groups
    {
        // Each place once (a shared deny reaches several agents), never the finding's own.
        let mut seen = vec![f.loc];
        more.retain(|&(b, k)| {
            let l = ctx.agents[b].rules[k].loc;
            let new = !seen.contains(&l);
            seen.push(l);
            new
        });
        if !more.is_empty() {
            let named: Vec<String> = more
                .iter()
                .map(|&(b, k)| ctx.rule_at(&ctx.agents[b].rules[k]))
                .collect();
            f.message.push_str(&format!(
                "; the same answer undoes {} more {}: {}",
                more.len(),
                if more.len() == 1 { "deny" } else { "denies" },
                named_list(&named, usize::MAX)
            ));
            let q = serde_json::to_string(&always).unwrap_or_default();
            // The other denies' agents are named by their places, not among the finding's
            // agents: those are the agents its witnesses hold for, each by the same rules
            // (tests/witness.rs).
            for &(b, k) in &more {
                if let Some(l) = ctx.agents[b].rules[k].loc
                    && !f.related.iter().any(|(m, _)| *m == l)
                {
                    f.related.push((l, format!("also undone by a stored {q}")));
                }
            }
        }
        out.push(f);
    }
}

/// The denies one stored "Always" answer undoes: the first one's finding, the others.
struct Group {
    always: String,
    finding: Finding,
    /// (agent, rule) of every other deny the same answer undoes.
    more: Vec<(usize, usize)>,
}

/// The full decision of a command as the bash tool makes it (both asks).
/// `stored`: an "Always" allow appended after every rule.
fn outcome(
    ctx: &Ctx<'_>,
    agent: &Agent,
    splitter: &mut Splitter,
    command: &str,
    stored: Option<&Wildcard>,
) -> Effect {
    decide_command(ctx, agent, splitter, command, stored).effect
}

/// [`outcome`] with every ask's decision (`crate::shell::decide::Decided`).
pub(super) fn decide_command(
    ctx: &Ctx<'_>,
    agent: &Agent,
    splitter: &mut Splitter,
    command: &str,
    stored: Option<&Wildcard>,
) -> crate::shell::decide::Decided {
    decide_command_with(ctx, splitter, command, |perm, pattern| {
        if perm == "bash" && stored.is_some_and(|g| g.is_match(pattern, ctx.project.platform)) {
            return Decision {
                rule: None,
                effect: Effect::Allow,
                overridden: Vec::new(),
            };
        }
        ctx.decision(agent, perm, pattern)
    })
}

/// Split `command` as the bash tool does in the project's directories and decide every
/// asked pattern with `eval`.
pub(super) fn decide_command_with(
    ctx: &Ctx<'_>,
    splitter: &mut Splitter,
    command: &str,
    eval: impl FnMut(&str, &str) -> Decision,
) -> crate::shell::decide::Decided {
    let places = crate::shell::Places::of(ctx.project.loaded.paths());
    // No directory is assumed to exist: a path argument then asks about its parent.
    let no = |_: &str| false;
    let env = places.env(&no);
    let req = splitter.request(command, &env);
    decide(&req, eval)
}

/// The splitter and what this check asks again and again for every agent that shares a
/// rule (the shared rules come last in every agent): the parts of a command, and an input
/// that a stored "Always" pattern shares with an asking pattern. Both depend on the text
/// alone.
struct Shell<'c> {
    splitter: super::SplitterLease<'c>,
    parts: std::collections::HashMap<String, Option<crate::shell::Part>>,
    meets: std::collections::HashMap<(String, String, String), Option<String>>,
    /// [`decided_command`] by (agent, rule).
    decided: std::collections::HashMap<(usize, usize), Option<String>>,
    /// How many rules two agents end alike with (by permission and pattern), by the pair.
    tails: std::collections::HashMap<(usize, usize), usize>,
}

/// The bash command [`Analysis::decides`] finds for rule `i` of agent `a`. It depends on
/// the rules from `i` on alone, so an agent whose rules end as an earlier one's reuses its
/// answer: the shared rules, which every agent ends with, are searched once.
fn decided_command(ctx: &Ctx<'_>, shell: &mut Shell, a: usize, i: usize) -> Option<String> {
    let agents = &ctx.project.agents;
    let rules = &agents.get(a)?.rules;
    let tail = rules.len().checked_sub(i)?;
    for (b, other) in agents.iter().enumerate() {
        if b != a
            && let Some(j) = other.rules.len().checked_sub(tail)
            && let Some(known) = shell.decided.get(&(b, j))
            && *shell
                .tails
                .entry((a.min(b), a.max(b)))
                .or_insert_with(|| super::common_tail(rules, &other.rules))
                >= tail
        {
            return known.clone();
        }
    }
    let found = match ctx.analyses.get(a)?.decides(i) {
        crate::glob::automaton::Outcome::Witness(w)
            if w.permission.to_exact_string().as_deref() == Some("bash") =>
        {
            w.subject.to_exact_string()
        }
        _ => None,
    };
    shell.decided.insert((a, i), found.clone());
    found
}

/// The one asked part of `command` when the command is exactly that part.
fn single_part(
    splitter: &mut Splitter,
    known: &mut std::collections::HashMap<String, Option<crate::shell::Part>>,
    command: &str,
) -> Option<crate::shell::Part> {
    known
        .entry(command.to_string())
        .or_insert_with(|| {
            let mut parts = splitter.parts(command);
            if parts.len() != 1 || !parts[0].asked() || parts[0].text != command {
                return None;
            }
            parts.pop()
        })
        .clone()
}

fn bash_witness(ctx: &Ctx<'_>, agent: &Agent, command: &str) -> Option<Witness> {
    ctx.witness_of(agent, "bash", command)
}

/// `asking`: the agent's bash rules that ask, last first, with their fixed parts.
fn finding(
    ctx: &Ctx<'_>,
    agent: &Agent,
    asking: &[(usize, Fixed)],
    i: usize,
    shell: &mut Shell,
) -> Option<(String, Finding)> {
    let platform = ctx.project.platform;
    let r = &agent.rules[i];
    // A command this deny denies, checked by OpenCode as one part.
    let glob = Wildcard::compile(&r.pattern);
    // The rule's own text first; the automaton's input (a search) only when neither works.
    let mut denied = typed(&glob);
    let mut searched = false;
    let mut next = 0;
    loop {
        if next == denied.len() {
            if searched {
                break;
            }
            searched = true;
            if let Some(c) = agent_index(ctx, agent).and_then(|a| decided_command(ctx, shell, a, i))
            {
                denied.push(c);
            }
            continue;
        }
        let w = denied[next].clone();
        next += 1;
        // A command tried already (`fill("")` and `fill("x")` of a glob without `*`, or the
        // search's): it went on to the next, and would again.
        if denied[..next - 1].contains(&w) {
            continue;
        }
        // The decision first: it is a compiled lookup, the split a parse.
        let Some(dw) = bash_witness(ctx, agent, &w).filter(|d| d.rule == Some(i)) else {
            continue;
        };
        let Some(part) = single_part(&mut shell.splitter, &mut shell.parts, &w) else {
            continue;
        };
        let always = part.always.clone()?;
        // A deny of words inside a command (`*DROP DATABASE*`, meant for `psql -c …`; a
        // file name, `*.env`):
        // the text filled in starts with a word no shell runs, so no person meets a
        // `DROP` question; the real way round it (an "Always" to `psql …`) is no command
        // this rule's text names. Judged harmful help on a blind fresh set (answer "Once"
        // to `DROP` questions).
        // (The first word, past any space: `* .env*` is about `.env` whatever the program;
        // filled in, it would tell of a program named `x`: blind fresh-5 B, sierrajc.)
        if r.pattern.starts_with('*')
            && r.pattern
                .trim_start_matches('*')
                .split(' ')
                .find(|w| !w.is_empty())
                .is_some_and(not_a_program)
        {
            return None;
        }
        let stored = Wildcard::compile(&always);
        // After "Always", the stored allow is the last rule: it decides what it matches.
        if !stored.is_match(&w, platform)
            || outcome(ctx, agent, &mut shell.splitter, &w, Some(&stored)) == Effect::Deny
        {
            continue;
        }
        let Some((asker, aw, everyday)) =
            asking_command(ctx, agent, asking, shell, &always, &part.tokens)
        else {
            continue;
        };
        let decided_by = |w: &Witness| {
            w.rule
                .map(|k| ctx.rule_at(&agent.rules[k]))
                .unwrap_or_else(|| "no rule (OpenCode's default)".into())
        };
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let related = aw
            .rule
            .and_then(|k| agent.rules[k].loc)
            .map(|l| vec![(l, format!("asks for {}", q(&asker)))])
            .unwrap_or_default();
        let mut message = format!(
            "answering \"Always\" to bash {} (asked by {}) stores {} as an allow evaluated after every configured rule; from then on bash {} is allowed although this deny denies it",
            q(&asker),
            decided_by(&aw),
            q(&always),
            q(&w)
        );
        let mut witnesses = vec![aw.clone(), dw];
        // An exact deny (`git push --force`, `rm -rf`, no wildcard) matches that text
        // alone: the command it was written for, with its operands, is not denied even
        // today. That is the problem to fix first, and `never-matches` reports it at this
        // rule; undoing a deny that only ever matched the bare command is then a note.
        let mut exact_slip = false;
        if let Some(slip) = super::bare_command::slip(ctx, agent, i, &mut shell.splitter) {
            message = format!(
                "this deny matches the exact command {} only: bash {} is {} today (decided by {}); write {} to deny it with operands. Besides, {message}",
                q(&r.pattern),
                q(&slip.witness.input),
                match slip.witness.action {
                    Effect::Allow => "allowed",
                    Effect::Ask => "asked",
                    Effect::Deny => "denied",
                },
                decided_by(&slip.witness),
                q(&format!("{} *", r.pattern)),
            );
            witnesses.push(slip.witness);
            exact_slip = true;
        }
        // No rule written in the config outlasts a stored "Always" (OpenCode evaluates it
        // after every configured rule): denying `rm -rf *` again changes nothing, and
        // denying `rm *` forbids every `rm` the author left to a question. So the help is
        // the choice in words, with no snippet.
        let prefix = always.strip_suffix(" *").unwrap_or(&always);
        let help: String = format!(
            "no rule you write can outlast that answer (OpenCode evaluates the stored {} after every configured rule until it restarts): answer \"Once\", never \"Always\", to `{prefix}` questions such as bash {}; to make the question impossible instead, every `{prefix}` command would have to be allowed or denied without asking, which changes what you ask for today",
            q(&always),
            q(&asker),
        );
        // The question a person is asked every day (`git push`, `rm file.txt`): one
        // "Always" there is realistic, and the deny it undoes was written to hold. A
        // question only a contrived command raises stays a note. Severity rule
        // (docs/checks.md): the deny takes effect today (clause 1 does not apply); an exact
        // deny's slip is `never-matches`' warning at the same rule, so this is its note.
        let level = if everyday && !exact_slip {
            Level::Warning
        } else {
            CHECK.level
        };
        return Some((
            always.clone(),
            Finding::at_rule(&CHECK, agent, i, message)
                .with_level(level)
                .with_related(related)
                .with_witnesses(witnesses)
                .with_help(help),
        ));
    }
    None
}

fn agent_index(ctx: &Ctx<'_>, agent: &Agent) -> Option<usize> {
    ctx.project
        .agents
        .iter()
        .position(|a| std::ptr::eq(a, agent))
}

/// The commands a person types every day whose "Always" pattern is `always`: its prefix
/// alone and with a plain argument (`git push`, `git push foo`, `git push file.txt`).
fn everyday_commands(always: &str) -> [String; 3] {
    let prefix = always.strip_suffix(" *").unwrap_or(always);
    [
        prefix.to_string(),
        format!("{prefix} foo"),
        format!("{prefix} file.txt"),
    ]
}

/// A glob's text as commands a person would type: `*` as nothing (`rm -rf *` is `rm -rf`),
/// or as a word first where nothing would leave two spaces in a row (`git -C * reset *` is
/// `git -C x reset x`, not `git -C  reset`).
fn typed(glob: &Wildcard) -> Vec<String> {
    let (empty, word) = (glob.fill(""), glob.fill("x"));
    if empty.trim().contains("  ") {
        vec![word, empty]
    } else {
        vec![empty, word]
    }
}

/// A word no shell runs as a program: an SQL keyword (`DROP`, `truncate`) or any word in
/// capitals, the way statements inside a database client's command are written.
fn not_a_program(word: &str) -> bool {
    const SQL: &[&str] = &[
        "drop", "truncate", "delete", "alter", "insert", "select", "grant", "revoke", "update",
        "create",
    ];
    SQL.contains(&word.to_ascii_lowercase().as_str())
        || (word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        // A file's name (`*.env`, `*.pem`, `*/secrets/*`): the deny is about what a
        // command touches; the text filled in (`.env foo`) is no command anyone runs.
        || word.starts_with('.')
        || word.contains(['/', '='])
        || word.rsplit_once('.').is_some_and(|(_, ext)| {
            !ext.is_empty() && ext.len() <= 5 && ext.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// A command that asks and whose "Always" pattern is `always`, and whether a person meets
/// that question every day (the prefix itself or with a plain argument). Else, in this
/// order: the command a written ask rule's own text describes (`git -C x branch -D x` for
/// `git -C * branch -D *`), the deny's command, an input the stored pattern shares with an
/// asking rule (found by search).
fn asking_command(
    ctx: &Ctx<'_>,
    agent: &Agent,
    asking: &[(usize, Fixed)],
    shell: &mut Shell,
    always: &str,
    tokens: &[String],
) -> Option<(String, Witness, bool)> {
    let platform = ctx.project.platform;
    let [bare, one, two] = everyday_commands(always);
    let asking = asking
        .iter()
        .filter_map(|(j, fixed)| Some((agent.rules.get(*j)?, fixed)));
    let stored = Fixed::new(always);
    let written = asking
        .clone()
        .take(64)
        .filter(|(rj, fixed)| rj.loc.is_some() && !stored.disjoint(fixed, platform))
        .flat_map(|(rj, _)| typed(&Wildcard::compile(&rj.pattern)));
    let simple = [bare, one, two]
        .into_iter()
        .map(|c| (c, true))
        .chain(written.map(|c| (c, false)))
        .chain([(tokens.join(" "), false)]);
    // Lazily: the simple candidates first; an automaton per asking rule only if they fail.
    let meets = &mut shell.meets;
    let from_asking = asking.take(64).filter_map(|(rj, fixed)| {
        // Most asking rules have another literal prefix: no automaton for those.
        if stored.disjoint(fixed, platform) {
            return None;
        }
        let key = (
            always.to_string(),
            rj.permission.clone(),
            rj.pattern.clone(),
        );
        meets
            .entry(key)
            .or_insert_with(|| {
                let shapes = [
                    RuleShape::new("bash", always),
                    RuleShape::new(rj.permission.clone(), rj.pattern.clone()),
                ];
                // The pair's answer is kept with the run's (and the server's) others.
                let an = match ctx.analyses.first() {
                    Some(any) => Analysis::sharing(&shapes, platform, any.pairs()),
                    None => Analysis::new(&shapes, platform),
                };
                match an.intersection(0, 1) {
                    crate::glob::automaton::Outcome::Witness(w) => w.subject.to_exact_string(),
                    _ => None,
                }
            })
            .clone()
    });
    let candidates = simple.chain(from_asking.map(|c| (c, false)));
    let (splitter, parts) = (&mut shell.splitter, &mut shell.parts);
    candidates.into_iter().find_map(|(c, everyday)| {
        // The decision first: it is a compiled lookup, the split a parse.
        let w = bash_witness(ctx, agent, &c).filter(|w| w.action == Effect::Ask)?;
        let part = single_part(splitter, parts, &c)?;
        if part.always.as_deref() != Some(always) {
            return None;
        }
        (outcome(ctx, agent, splitter, &c, None) == Effect::Ask).then_some((c, w, everyday))
    })
}
