//! Reachability: whether each user-written rule of each agent decides anything, and the
//! later rule that takes its inputs when it does not.

use super::Ctx;
use super::quick::Quick;
use crate::glob::analysis::{Analysis, Input};
use crate::model::Rule;

/// Whether each user-written rule of each agent decides anything.
#[derive(Debug, Clone)]
pub enum Reach {
    /// Decides this input.
    Decides(Input),
    /// Decides nothing: every input it matches goes to a later rule, e.g. this one.
    Dead(Option<crate::glob::analysis::Overridden>),
    /// Over budget: nothing claimed.
    Inconclusive,
}

impl Reach {
    /// The same answer for the same rule at an index `delta` further on.
    fn shifted(&self, delta: isize) -> Reach {
        match self {
            Reach::Dead(Some(ov)) => Reach::Dead(Some(crate::glob::analysis::Overridden {
                input: ov.input.clone(),
                decider: ov.decider.saturating_add_signed(delta),
            })),
            other => other.clone(),
        }
    }
}

/// `reach[agent][rule]`, `None` for built-in rules (not the user's to fix).
///
/// Whether rule `i` decides anything, and which later rule takes its inputs, depends only
/// on the shapes of rules `i..` (last match wins). Agents share long tails (every agent
/// ends with the top-level user rules and the trailing tool-output rule), so a rule whose
/// tail equals one already analysed in an earlier agent reuses that answer, shifted to its
/// own index: exact, and the top-level rules are analysed once instead of once per agent.
pub fn reachability(ctx: &Ctx<'_>) -> Vec<Vec<Option<Reach>>> {
    use crate::glob::automaton::Outcome;
    let agents = &ctx.agents;
    let mut out: Vec<Vec<Option<Reach>>> = Vec::with_capacity(agents.len());
    for (a, (agent, an)) in agents.iter().zip(&ctx.analyses).enumerate() {
        let n = agent.rules.len();
        let tails: Vec<usize> = agents[..a]
            .iter()
            .map(|b| common_tail(&b.rules, &agent.rules))
            .collect();
        let quick = &ctx.quick[a];
        let row = (0..n)
            .map(|i| {
                agent.rules[i].loc?;
                let tail = n - i;
                for (b, &t) in tails.iter().enumerate() {
                    let j = agents[b].rules.len().wrapping_sub(tail);
                    if t >= tail
                        && let Some(Some(r)) = out[b].get(j)
                    {
                        return Some(r.shifted(i as isize - j as isize));
                    }
                }
                if let Some(w) = quick.decided_sample(an, i) {
                    return Some(Reach::Decides(w));
                }
                Some(match an.decides(i) {
                    Outcome::Witness(w) => Reach::Decides(w),
                    Outcome::Empty => Reach::Dead(overridden(an, quick, i).into_witness()),
                    Outcome::Inconclusive => Reach::Inconclusive,
                })
            })
            .collect();
        out.push(row);
    }
    out
}

/// How many trailing rules of `a` and `b` have the same permission and pattern.
pub(super) fn common_tail(a: &[Rule], b: &[Rule]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x.permission == y.permission && x.pattern == y.pattern)
        .count()
}

/// [`Analysis::overridden`], deciding witnesses with the compiled `Quick` evaluator. Only
/// [`Analysis::later_candidates`] are intersected: most later rules have another literal
/// permission name or a clashing literal prefix, and those pairs never need a product
/// automaton.
fn overridden(
    an: &Analysis,
    quick: &Quick,
    i: usize,
) -> crate::glob::automaton::Outcome<crate::glob::analysis::Overridden> {
    crate::glob::analysis::first_override(
        i,
        an.later_candidates(i),
        |j| an.intersection(i, j),
        |input| quick.decide(&input.permission, &input.subject),
    )
}
