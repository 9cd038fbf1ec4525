//! The order pass: each judged user rule against the later rules that share inputs with it.
//!
//! Firewall-policy analysis (Al-Shaer & Hamed's anomaly classes) adapted to OpenCode's
//! last-match-wins. For an earlier rule E and a later rule L with another effect that
//! share an input:
//! - **shadowing**: later rules take every input of E, so E never decides
//!   (`shadowed-deny`, `shadowed-ask`, `dead-rule`, `overridden-by-later-layer`, by what
//!   the user loses and where the overriding rule lives);
//! - **exception**: L lies inside E (`"*": "deny"` then `"git diff*": "allow"`): the
//!   intended idiom, silent;
//! - **correlation**: neither contains the other (`rm *` deny, `* --help` allow):
//!   `correlated-rules`, only when it loosens E (deny or ask → something more permissive)
//!   and only with an input a person would take for a real one.
//!
//! Severity follows what the user loses: a deny or ask that ends in allow is an error, a
//! deny that ends in ask a warning, redundancy info. An earlier rule overridden from
//! another file or layer with a stricter or equal answer is a deliberate override: info,
//! or nothing for plain redundancy.

use super::{
    Check, Ctx, Finding, Level, Reach, TailMemo, Witness, correlated_rules, dead_rule, describe,
    overridden_by_later_layer, same_origin, shadowed_ask, shadowed_deny,
};
use crate::agents::Agent;
use crate::glob::analysis::Input;
use crate::glob::automaton::Outcome;
use crate::model::{Effect, Layer};

/// A shadowing kind: a rule that decides nothing, named by what the user loses and where
/// the overriding rule lives. The kinds are data; [`Shadowing::finding`] is the one way a
/// rule-order finding is made.
struct Shadowing {
    check: &'static Check,
    /// What the rule is; `{layer}` is the rule's layer, `{by}` ` by RULE [LAYER]` (its
    /// decider from another origin).
    what: &'static str,
    /// The level when the witness ends in allow, and when it does not.
    level: (Level, Level),
    help: &'static str,
}

/// A deny whose inputs end looser (allow: error, ask: warning).
const SHADOWED_DENY: Shadowing = Shadowing {
    check: &shadowed_deny::CHECK,
    what: "this deny never takes effect",
    level: (Level::Error, Level::Warning),
    help: "put the deny after the broader rule that overrides it (last match wins)",
};

/// An ask whose inputs a later rule allows.
const SHADOWED_ASK: Shadowing = Shadowing {
    check: &shadowed_ask::CHECK,
    what: "this ask never asks",
    level: (shadowed_ask::CHECK.level, shadowed_ask::CHECK.level),
    help: "put the ask after the broader allow that overrides it (last match wins)",
};

/// Dead within its own file, later rules repeating its answer: a note (severity rule
/// clause 3, docs/checks.md: the answer is the one written).
const REDUNDANT: Shadowing = Shadowing {
    check: &dead_rule::CHECK,
    what: "this rule never decides anything (redundant)",
    level: (Level::Info, Level::Info),
    help: "remove it: later rules already give the same answer",
};

/// Dead within its own file, later rules giving a stricter answer.
const SHADOWED: Shadowing = Shadowing {
    check: &dead_rule::CHECK,
    what: "this rule never decides anything (shadowed)",
    level: (Level::Warning, Level::Warning),
    help: "move it after the rule that overrides it, or remove it",
};

/// Given a stricter answer by a rule from a later file or layer: a note (severity rule
/// clause 3, docs/checks.md: every input it matches ends stricter than it says).
const OVERRIDDEN: Shadowing = Shadowing {
    check: &overridden_by_later_layer::CHECK,
    what: "this [{layer}] rule is overridden{by}",
    level: (
        overridden_by_later_layer::CHECK.level,
        overridden_by_later_layer::CHECK.level,
    ),
    help: "keep one source of truth, or accept the override knowingly",
};

impl Shadowing {
    /// The finding for rule `i`: what it is, then the input `w` that shows it and the
    /// later rule that decides it, which is the related place.
    fn finding(&self, ctx: &Ctx<'_>, agent: &Agent, i: usize, w: Witness) -> Finding {
        let layer = agent.rules.get(i).map(|r| r.layer.to_string());
        let by = w
            .rule
            .and_then(|k| agent.rules.get(k))
            .map(|d| format!(" by {} [{}]", describe(d), d.layer))
            .unwrap_or_default();
        let what = self
            .what
            .replace("{layer}", layer.as_deref().unwrap_or(""))
            .replace("{by}", &by);
        let level = if w.action == Effect::Allow {
            self.level.0
        } else {
            self.level.1
        };
        // Overridden from another file: a rule cannot be moved across files, so the help
        // says where the deny (or ask) can be written instead.
        let here = agent.rules.get(i).and_then(|r| r.loc);
        let there = w.rule.and_then(|k| agent.rules.get(k)).and_then(|d| d.loc);
        let help = match (here, there) {
            (Some(h), Some(t))
                if h.source != t.source
                    && matches!(self.check.id, "shadowed-deny" | "shadowed-ask") =>
            {
                let what = if self.check.id == "shadowed-deny" {
                    "deny"
                } else {
                    "ask"
                };
                let file = |l: crate::source::Loc| ctx.project.loaded.sources.get(l.source).name();
                format!(
                    "the rule that overrides it is in {} (OpenCode applies it after {}), and a rule cannot be moved across files; writing the same key again in {} does not help either (a merged key keeps the place the first file gave it): write the {what} in the agent's own block (`agent.NAME.permission`), which comes after both, or narrow the broader rule in {}",
                    file(t),
                    file(h),
                    file(t),
                    file(t),
                )
            }
            _ => self.help.into(),
        };
        // Both in one file, but their order set by another file that writes the same keys
        // first (a merged key keeps the first file's place): moving in this file changes
        // nothing (checked on a real config with OpenCode 1.18.34).
        let help = match (here, there) {
            (Some(h), Some(t)) if h.source == t.source => {
                match order_from_elsewhere(ctx.project, agent, i, w.rule.unwrap_or(i)) {
                    Some(other) => format!(
                        "moving it in {} changes nothing: the order of these keys comes from {other}, which writes the same keys for this agent first (a merged key keeps the place the first file gave it); reorder them there (removing it here does not help either: that file still writes it)",
                        ctx.project.loaded.sources.get(h.source).name(),
                    ),
                    None => help,
                }
            }
            _ => help,
        };
        let help = match agent.rules.get(i) {
            Some(r) if self.check.id != dead_rule::CHECK.id => help + &bare_note(&agent.rules, r),
            Some(r) if self.what == SHADOWED.what => widening_help(ctx, r).unwrap_or(help),
            _ => help,
        };
        let (example, related) = decided_by(ctx, agent, i, &w);
        Finding {
            related,
            witnesses: vec![w],
            ..Finding::at_rule(self.check, agent, i, format!("{what}: {example}"))
        }
        .with_level(level)
        .with_help(help)
    }
}

/// For a shadowed bash allow of a program with destructive modes (`"git *": "allow"` before
/// `"*": "ask"`): moved after the rule that overrides it, it would also let those run
/// (blind fresh-11 A: trustsoft/CLIHub's read-only reviewer, where `git push --force` then
/// runs unasked). The help says so, and what to allow instead.
fn widening_help(ctx: &Ctx<'_>, r: &crate::model::Rule) -> Option<String> {
    let (mode, instead) = destructive_mode(ctx.project.platform, r)?;
    Some(format!(
        "remove it, or allow only the commands the agent needs after the rule that overrides it{instead}: moved as it is, it would also allow `{mode}` without asking"
    ))
}

/// A command that changes something which bash allow `r` lets run (`git clean -fdx` for
/// `"git *": "allow"`, `rg --pre` for `"rg*"`), with the read-only forms to allow instead
/// where the program has well-known ones: for the help of a change that makes `r` live.
pub(super) fn destructive_mode(
    platform: crate::glob::Platform,
    r: &crate::model::Rule,
) -> Option<(String, &'static str)> {
    if r.permission != "bash" || r.action != crate::model::Action::Allow {
        return None;
    }
    let lit = super::deny_bypass::literal_prefix(r.pattern.trim_start_matches('*'));
    let program = lit.split_whitespace().next()?;
    let wild = crate::glob::Wildcard::compile(&r.pattern);
    let (mode, _) = super::deny_bypass::modes_of(program)
        .into_iter()
        .find(|(m, _)| wild.is_match(m, platform))?;
    let instead = if program == "git" {
        " (`\"git status*\"`, `\"git log*\"`, `\"git diff *\"` (not `git difftool`), `\"git show*\"`)"
    } else {
        ""
    };
    Some((mode, instead))
}

/// Rules `i` and `k` of `agent` (`i` first in the ruleset), written in one file, whose
/// places come from an earlier config file that writes the same keys for this agent
/// first: a merged key keeps the place the first file gave it, so moving them in this
/// file changes nothing (a real config: `agent.implementer.permission` in `opencode.json`
/// and `.opencode/agents/implementer.md`, checked with OpenCode 1.18.34). Names that file:
/// a JSON config loaded earlier whose own block for the agent (`agent.NAME.permission.PERM`,
/// or `mode.NAME`) writes both keys, not its top-level block (another layer: blind
/// fresh-5, idsanchezf), or an earlier agent file naming the agent and then both patterns.
pub(super) fn order_from_elsewhere(
    project: &crate::project::Project,
    agent: &Agent,
    i: usize,
    k: usize,
) -> Option<String> {
    let (ri, rk) = (agent.rules.get(i)?, agent.rules.get(k)?);
    let source = ri.loc?.source;
    if rk.loc?.source != source || ri.permission != rk.permission || i >= k {
        return None;
    }
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let (name, pi, pk) = (
        quoted(&agent.name),
        quoted(&ri.pattern),
        quoted(&rk.pattern),
    );
    project
        .loaded
        .sources
        .iter()
        .filter(|(id, _)| *id < source)
        .find(|(id, f)| {
            let t = &f.text;
            // The agent, then both patterns, in the ruleset's order: all an agent file can
            // say; for a JSON config, the text every match must have (parsed only then).
            let named = t
                .find(&name)
                .is_some_and(|a| t[a..].find(&pi).is_some_and(|b| t[a + b..].contains(&pk)));
            if !named || f.name().ends_with(".md") {
                return named;
            }
            // A JSON config: the agent's own block for that permission, with both keys
            // (the top-level block writing the same patterns is another layer).
            let Ok(root) = crate::syntax::jsonc::parse(t, *id, &|o| o) else {
                return false;
            };
            ["agent", "mode"].iter().any(|section| {
                root.value
                    .as_object()
                    .and_then(|o| o.get(section))
                    .and_then(|n| n.value.as_object())
                    .and_then(|o| o.get(&agent.name))
                    .and_then(|n| n.value.as_object())
                    .and_then(|o| o.get("permission"))
                    .and_then(|n| n.value.as_object())
                    .and_then(|o| o.get(&ri.permission))
                    .and_then(|n| n.value.as_object())
                    .is_some_and(|o| o.contains_key(&ri.pattern) && o.contains_key(&rk.pattern))
            })
        })
        .map(|(_, f)| f.name())
}

/// For a bash deny or ask written as an exact command (`"git push": "deny"`): moved
/// where it takes effect it still matches the bare command alone, so the help says to
/// write `git push *` (which matches the bare command too). Empty otherwise.
/// Not when the author wrote `git push *` themselves with another action (`"rm": "deny"`
/// beside `"rm *": "ask"`): rewritten, the deny would turn their asks into denies.
pub(super) fn bare_note(rules: &[crate::model::Rule], r: &crate::model::Rule) -> String {
    if r.permission != "bash" || r.action.effective() == Effect::Allow {
        return String::new();
    }
    let star = format!("{} *", r.pattern);
    let bare_star = format!("{}*", r.pattern);
    if rules.iter().any(|x| {
        x.loc.is_some()
            && x.permission == "bash"
            && (x.pattern == star || x.pattern == bare_star)
            && x.action.effective() != r.action.effective()
    }) {
        return String::new();
    }
    match super::bare_command::with_operands(&r.pattern) {
        Some(example) => format!(
            "; and write it as {} wherever it goes: the exact {} matches the bare command alone, {} also `{example}`",
            serde_json::to_string(&format!("{} *", r.pattern)).unwrap_or_default(),
            serde_json::to_string(&r.pattern).unwrap_or_default(),
            serde_json::to_string(&format!("{} *", r.pattern)).unwrap_or_default(),
        ),
        None => String::new(),
    }
}

/// A dead deny for which no input could be shown (the later rules' overlaps were past the
/// budget): still dead, proven.
fn dead_deny_without_witness(agent: &Agent, i: usize) -> Finding {
    let what = format!(
        "this deny never takes effect: {} is shadowed by later rules",
        describe(&agent.rules[i])
    );
    Finding::at_rule(&shadowed_deny::CHECK, agent, i, what)
}

/// `e.g. PERM "INPUT" is decided by RULE at PLACE → ACTION`, and the decider as a label.
fn decided_by(
    ctx: &Ctx<'_>,
    agent: &Agent,
    i: usize,
    w: &Witness,
) -> (String, Vec<(crate::source::Loc, String)>) {
    let d = w.rule.and_then(|k| agent.rules.get(k));
    let input = serde_json::to_string(&w.input).unwrap_or_default();
    let by = d
        .map(|d| format!("{} at {}", describe(d), ctx.place(d)))
        .unwrap_or_else(|| "no rule (OpenCode's default)".into());
    // Written above the rule in the same file, yet later in OpenCode's order (a merged
    // key keeps the place the first config with it gave it; JavaScript key order): say
    // so, not "later".
    let here = agent.rules.get(i).and_then(|r| r.loc);
    let related = d
        .and_then(|d| d.loc)
        .map(|l| {
            let above = here.is_some_and(|h| h.source == l.source && l.span.start < h.span.start);
            let label = if above {
                format!(
                    "this rule decides {input} → {}: written above, but OpenCode applies it later (a merged key keeps its place from the first config that has it)",
                    w.action
                )
            } else {
                format!("this later rule decides {input} → {}", w.action)
            };
            vec![(l, label)]
        })
        .unwrap_or_default();
    (
        format!(
            "e.g. {} {input} is decided by {by} → {}",
            w.permission, w.action
        ),
        related,
    )
}

/// How much an effect lets through: deny < ask < allow.
pub fn openness(e: Effect) -> u8 {
    match e {
        Effect::Deny => 0,
        Effect::Ask => 1,
        Effect::Allow => 2,
    }
}

pub fn run(ctx: &Ctx<'_>, reach: &[Vec<Option<Reach>>], out: &mut Vec<Finding>) {
    let mut memo = TailMemo::default();
    for (ai, agent) in ctx.agents.iter().enumerate() {
        for (i, r) in agent.rules.iter().enumerate() {
            // Translated `tools` entries are judged by `legacy-tools`, entry by entry.
            if !ctx.judges(r) || matches!(r.layer, Layer::LegacyTools | Layer::AgentLegacyTools) {
                continue;
            }
            match reach.get(ai).and_then(|row| row.get(i)) {
                Some(Some(Reach::Dead(ov))) => memo.run(ctx, ai, i, out, || {
                    dead(ctx, ai, i, ov.as_ref().map(|o| &o.input))
                        .into_iter()
                        .collect()
                }),
                Some(Some(Reach::Decides(input))) => memo.run(ctx, ai, i, out, || {
                    correlated(ctx, ai, i, input).into_iter().collect()
                }),
                _ => {}
            }
        }
    }
}

/// Does rule `i` match the witness's input?
fn matches(ctx: &Ctx<'_>, ai: usize, i: usize, w: &Witness) -> bool {
    ctx.analyses[ai].matches(i, &Input::new(&w.permission, &w.input))
}

/// An input of rule `i` that a later rule with effect `target` decides as `target`, made
/// recognisable: the most ordinary one over the first few later rules that show it.
fn outcome_of(ctx: &Ctx<'_>, ai: usize, i: usize, target: Effect) -> Option<Witness> {
    let agent = &ctx.agents[ai];
    let e = agent.rules[i].action.effective();
    let mut best: Option<(i32, Witness)> = None;
    let r = &agent.rules[i];
    let mut tried = 0;
    for j in ctx.analyses[ai].later_candidates(i) {
        if agent.rules[j].action.effective() != target {
            continue;
        }
        // A looser rule carved out of another rule as strict as this one is that rule's
        // exception (`.env.*` deny, `*.env.*` deny, `*.env.example` allow): the first deny
        // is redundant, not undone.
        if openness(target) > openness(e) && carved_out(ctx, ai, j, e, Some(i)) {
            continue;
        }
        let Outcome::Witness(input) = ctx.intersection(ai, i, j) else {
            continue;
        };
        let Some(w) = ctx.witness(agent, &input) else {
            continue;
        };
        if w.action != target {
            continue;
        }
        if let Some(nice) = ctx.recognisable(agent, &[i, j], &input, |x| {
            x.action == target && x.rule == w.rule && matches(ctx, ai, i, x)
        }) {
            let score = super::examples::plausibility(&nice.permission, &nice.input);
            if best.as_ref().is_none_or(|(b, _)| score > *b) {
                best = Some((score, nice));
            }
        }
        tried += 1;
        if tried == 8 {
            break;
        }
    }
    // The rule's own plain input (`*mix format*` as `mix format`), whichever later rule
    // decides it, when the overlaps above ran it on into another word: the later rules tried are
    // the last eight, and their overlap (`mix formatnode`, by a final `*node*`) is no
    // command a person writes when an earlier `*rm*` already takes `mix format` itself.
    // Commands only: a path's own sample (`.env.a.ts`) reads worse than an overlap's.
    if r.permission == "bash" {
        let own = ctx.filled.get(&r.permission, &r.pattern);
        if best
            .as_ref()
            .is_some_and(|(_, w)| own.iter().any(|(s, _)| *s == w.input))
        {
            return best.map(|(_, w)| w);
        }
        for (subject, score) in own.iter().take(6) {
            if !super::examples::is_asked(&r.permission, subject) {
                continue;
            }
            let Some(w) = ctx.witness_of(agent, &r.permission, subject) else {
                continue;
            };
            let Some(j) = w.rule.filter(|&j| j > i) else {
                continue;
            };
            if w.action != target
                || !matches(ctx, ai, i, &w)
                || (openness(target) > openness(e) && carved_out(ctx, ai, j, e, Some(i)))
            {
                continue;
            }
            // Only in place of that input run on into another word (`mix formatnode`):
            // `npm test` stays over `npm`.
            let glued = |b: &Witness| {
                b.input
                    .strip_prefix(subject.as_str())
                    .is_some_and(|rest| rest.chars().next().is_some_and(|c| c != ' '))
            };
            if best.as_ref().is_none_or(|(_, b)| glued(b)) {
                best = Some((*score, w));
            }
            break;
        }
    }
    best.map(|(_, w)| w)
}

/// The finding for rule `i`, which decides nothing: what its inputs end in, and where.
fn dead(ctx: &Ctx<'_>, ai: usize, i: usize, overridden: Option<&Input>) -> Option<Finding> {
    let agent = &ctx.agents[ai];
    let r = &agent.rules[i];
    let e = r.action.effective();
    // The most permissive outcome among its inputs is what the user loses, unless a later
    // rule at least as strict covers it all: then this rule is only redundant, and what
    // that rule lets through is that rule's matter.
    // The tightest later rule that covers it all, if one is at least as strict.
    let cover = ctx.analyses[ai]
        .later_candidates(i)
        .filter(|&k| {
            openness(agent.rules[k].action.effective()) <= openness(e)
                && ctx.analyses[ai].proved_within(k, i)
        })
        .map(|k| agent.rules[k].action.effective())
        .max_by_key(|&c| openness(c));
    let covered = cover.is_some();
    // Outcomes to look for, in order: what is lost first (the loosest), then what
    // overturns it, then plain redundancy. A rule covered by a later rule as strict is
    // redundant (covered by its own answer) or overturned (covered by a stricter one).
    let stricter = [Effect::Deny, Effect::Ask]
        .into_iter()
        .filter(|&t| openness(t) < openness(e));
    let targets: Vec<Effect> = match cover {
        Some(c) if c == e => std::iter::once(e).chain(stricter).collect(),
        Some(_) => stricter.chain(std::iter::once(e)).collect(),
        None => [Effect::Allow, Effect::Ask]
            .into_iter()
            .filter(|&t| openness(t) > openness(e))
            .chain(stricter)
            .chain(std::iter::once(e))
            .collect(),
    };
    let mut worst = targets.into_iter().find_map(|t| outcome_of(ctx, ai, i, t));
    if worst.is_none() {
        worst = overridden.and_then(|input| {
            let w = ctx.witness(agent, input)?;
            ctx.recognisable(agent, &[i], input, |x| {
                x.action == w.action && x.rule == w.rule && matches(ctx, ai, i, x)
            })
        });
        if covered
            && worst
                .as_ref()
                .is_some_and(|w| openness(w.action) > openness(e))
        {
            worst = None;
        }
    }
    let Some(w) = worst else {
        // No input OpenCode asks shows it: a rule that never matches what OpenCode asks
        // (an absolute `read` path) is `never-matches`'s matter, not a shadowed deny.
        let never = super::never_matches::diagnose(&r.permission, &r.pattern, ctx).is_some();
        return (e == Effect::Deny && !never).then(|| dead_deny_without_witness(agent, i));
    };
    let decider = w.rule.and_then(|k| agent.rules.get(k));
    let same = decider.is_some_and(|d| same_origin(r, d));
    let kind = match (openness(w.action).cmp(&openness(e)), e) {
        (std::cmp::Ordering::Greater, Effect::Deny) => &SHADOWED_DENY,
        (std::cmp::Ordering::Greater, _) => &SHADOWED_ASK,
        (std::cmp::Ordering::Equal, _) if same => &REDUNDANT,
        (std::cmp::Ordering::Equal, _) => return None,
        (std::cmp::Ordering::Less, _) if same => &SHADOWED,
        (std::cmp::Ordering::Less, _) => &OVERRIDDEN,
    };
    Some(kind.finding(ctx, agent, i, w))
}

/// The finding for rule `i`, which decides `decided`: a later rule that loosens part of it
/// without lying inside it.
fn correlated(ctx: &Ctx<'_>, ai: usize, i: usize, decided: &Input) -> Option<Finding> {
    let agent = &ctx.agents[ai];
    let an = &ctx.analyses[ai];
    let e = agent.rules[i].action.effective();
    if e == Effect::Allow {
        return None;
    }
    // The loosest later rules first: what an allow lets through is what the author loses
    // most (`cat *` allow over a `*.env` deny, before a later `rm *` ask).
    // Among those, a program that reads its operand (`cat *` before `tr *`): the input a
    // person recognises as reading the file the deny names.
    let reader = |j: usize| {
        let first = agent.rules[j]
            .pattern
            .split_whitespace()
            .next()
            .unwrap_or("");
        super::bare_command::OPERAND_READERS
            .iter()
            .position(|p| *p == first)
            .unwrap_or(usize::MAX)
    };
    let mut later: Vec<usize> = an.later_candidates(i).collect();
    later.sort_by_key(|&j| {
        (
            std::cmp::Reverse(openness(agent.rules[j].action.effective())),
            reader(j),
        )
    });
    for j in later {
        if openness(agent.rules[j].action.effective()) <= openness(e) {
            continue;
        }
        // An exception carved out of the rule is the idiom, not an anomaly; so is one
        // carved out of another rule at least as strict before it (`*.env*` deny,
        // `*secret*` deny, then `*.env.example` allow: an exception to the first, which
        // meets the second only by accident).
        if !matches!(an.contains(i, j), Outcome::Witness(_)) || carved_out(ctx, ai, j, e, None) {
            continue;
        }
        let Outcome::Witness(input) = ctx.intersection(ai, i, j) else {
            continue;
        };
        let Some(theirs) = ctx.recognisable(agent, &[j, i], &input, |x| {
            openness(x.action) > openness(e)
                && x.rule.is_some_and(|k| k > i)
                && matches(ctx, ai, i, x)
                && super::examples::is_plausible(&x.permission, &x.input)
        }) else {
            continue;
        };
        // The rule that decides it must not lie inside this one either.
        let k = theirs.rule?;
        if k != j && !matches!(an.contains(i, k), Outcome::Witness(_)) {
            continue;
        }
        let mine = ctx.recognisable(agent, &[i], decided, |x| x.rule == Some(i));
        return Some(correlated_rules::finding(ctx, agent, i, mine, theirs));
    }
    None
}

/// How many earlier rules [`carved_out`] looks at, nearest first.
const CARVE_LOOKBACK: usize = 256;

/// Does rule `j` lie inside an earlier rule (other than `except`) whose effect is
/// `strictest` or stricter (it is an exception to that rule)?
fn carved_out(
    ctx: &Ctx<'_>,
    ai: usize,
    j: usize,
    strictest: Effect,
    except: Option<usize>,
) -> bool {
    let agent = &ctx.agents[ai];
    ctx.analyses[ai]
        .within_earlier(j, CARVE_LOOKBACK)
        .iter()
        .any(|&k| {
            Some(k) != except
                && openness(agent.rules[k].action.effective()) <= openness(strictest)
                && agent.rules[k].loc.is_some()
        })
}
