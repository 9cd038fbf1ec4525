//! The subjects on which one cell's two rule lists decide differently: one search per
//! unmatched deciding rule ([`subject_diff`]), the obvious candidates tried first, and the
//! recognisable example each region is reported with ([`friendly`]).

use super::{Globs, Key, Region, Searches, Shape, fills};
use crate::glob::automaton::{Budget, Cell, Product, Word};
use crate::glob::{Platform, Wildcard};

/// Every pair of deciding rules (positions in the shape's lists) that a subject decided by
/// an unmatched rule has, with the shortest such subject; `None` past the budget. Which
/// pairs are changes is the caller's question (it knows the effects).
///
/// A subject decided differently has an unmatched rule as its decider on at least one side
/// (see [`unmatched`]). For each pattern `u` of an unmatched rule and each side `S` where
/// the last rule with pattern `u` is unmatched (at position `o`), one search over
/// `L(u) \ ⋃ L(S's patterns after o)` (minus the common tail): exactly the subjects that
/// rule decides on `S`. The other side's decider varies; the cells of the product tell it
/// apart, with two reductions that keep the search linear in families of patterns:
/// a pattern that can decide on neither side there takes no part, and the components that
/// a universal one overrides on the other side are forgotten ([`Product::forget`]).
pub(super) fn subject_diff(
    shape: &Shape,
    obvious: Obvious,
    budget: u64,
    searches: &mut Searches,
) -> Option<Vec<Region>> {
    let platform = obvious.platform;
    let (bl, hl, k) = (&shape.base, &shape.head, shape.tail);
    let (bp, hp, common) = (
        &bl[..bl.len() - k],
        &hl[..hl.len() - k],
        &bl[bl.len() - k..],
    );
    let mut pats = Globs::default();
    let tail: Vec<usize> = common.iter().map(|p| pats.intern(p)).collect();
    if tail
        .iter()
        .any(|&e| crate::glob::analysis::Fixed::new(&pats.text[e]).universal())
    {
        return Some(Vec::new());
    }
    let comp = |l: &[String], pats: &mut Globs| -> Vec<Option<usize>> {
        l.iter()
            .map(|p| {
                let n = pats.text.len();
                let c = pats.intern(p);
                // A pattern of the common tail never decides outside it.
                (c >= n || !tail.contains(&c)).then_some(c)
            })
            .collect()
    };
    let bc = comp(bp, &mut pats);
    let hc = comp(hp, &mut pats);
    let last = |l: &[Option<usize>], c: usize| l.iter().rposition(|&x| x == Some(c));
    // (pattern, whether the searched side is the base, position of the deciding rule).
    let mut todo: Vec<(usize, bool, usize)> = Vec::new();
    for (is_base, own, unmatched) in [
        (true, &bc, &shape.base_unmatched),
        (false, &hc, &shape.head_unmatched),
    ] {
        let mut us: Vec<usize> = unmatched.iter().filter_map(|&i| own[i]).collect();
        us.sort_unstable();
        us.dedup();
        for u in us {
            // Only the last rule with pattern `u` can decide on this side; an earlier
            // unmatched one never does.
            if let Some(o) = last(own, u).filter(|o| unmatched.binary_search(o).is_ok()) {
                todo.push((u, is_base, o));
            }
        }
    }
    todo.sort_by_key(|&(u, ..)| u);
    // Only the patterns that can share a subject with `u` (prefix and suffix tests,
    // [`Fixed::disjoint`]) take part in its search: the others match nothing there.
    use crate::glob::analysis::Fixed;
    let fixed: Vec<Fixed> = pats.text.iter().map(|t| Fixed::new(t)).collect();
    // All the searches of one pair of rule lists share the budget.
    let mut total = Budget::new(budget);
    let mut regions: Vec<Region> = Vec::new();
    let mut seen: std::collections::HashSet<(Option<usize>, Option<usize>)> =
        std::collections::HashSet::new();
    for (u, is_base, o) in todo {
        let (own, other) = if is_base { (&bc, &hc) } else { (&hc, &bc) };
        let mut excluded: Vec<usize> = own[o + 1..].iter().flatten().copied().collect();
        excluded.extend(&tail);
        excluded.sort_unstable();
        excluded.dedup();
        // On the other side, a pattern whose last rule comes before `u`'s last never
        // decides a subject of `L(u)`; on this side, only `o` decides.
        let at = last(other, u);
        let decides = |c: usize| match (last(other, c), at) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(pc), Some(pu)) => pc > pu,
        };
        let keep: Vec<usize> = (0..pats.text.len())
            .filter(|&c| {
                c == u
                    || (!fixed[c].disjoint(&fixed[u], platform)
                        && (excluded.binary_search(&c).is_ok() || decides(c)))
            })
            .collect();
        let local = |c: usize| keep.binary_search(&c).ok();
        let lu = local(u)?;
        let lexcl: Vec<usize> = excluded.iter().filter_map(|&c| local(c)).collect();
        let lother: Vec<Option<usize>> = other.iter().map(|c| c.and_then(local)).collect();
        let key = (
            keep.iter().map(|&c| pats.text[c].clone()).collect(),
            lu,
            lexcl.clone(),
            lother.iter().flatten().copied().collect(),
            obvious.commands,
        );
        let cells = searches.entry(key).or_insert_with(|| {
            let refs: Vec<&Wildcard> = keep.iter().map(|&c| &pats.compiled[c]).collect();
            let product = Product::new(&refs, platform);
            // With one possible decider on the other side there is one query to make; over
            // a family of patterns, the cells (every combination of its members that can
            // decide there) are too many, and most per-decider queries are answered by an
            // obvious subject.
            let side = OtherSide::new(product.component_count(), &lexcl, &lother);
            if keep.len() > CELLS_MAX_PATTERNS || side.candidates(lu).len() <= 1 {
                return by_decider(&product, &refs, obvious, lu, &side, &mut total);
            }
            let forget = forgets(&product, &side, lu);
            // The cells first (one search for every decider); past an eighth of the
            // budget, one query per decider instead.
            let mut first = total.take(budget / 8);
            match product.cells_outside(&[lu], &lexcl, &[], &forget, &mut first) {
                Ok(cells) => {
                    total.refund(first);
                    Some(cells)
                }
                Err(_) => by_decider(&product, &refs, obvious, lu, &side, &mut total),
            }
        });
        let cells = cells.as_ref()?;
        let mut member = vec![false; keep.len()];
        for cell in cells {
            member.iter_mut().for_each(|m| *m = false);
            for &a in cell.accepting.iter().chain([lu].iter()) {
                if let Some(m) = member.get_mut(a) {
                    *m = true;
                }
            }
            let decider = |c: &[Option<usize>]| {
                c.iter()
                    .rposition(|x| x.is_some_and(|x| member.get(x).copied().unwrap_or(false)))
            };
            let (od, td) = (Some(o), decider(&lother));
            let (bd, hd) = if is_base { (od, td) } else { (td, od) };
            if seen.insert((bd, hd)) {
                regions.push(Region {
                    base: bd,
                    head: hd,
                    witness: cell.witness.clone(),
                    friendly: None,
                });
            }
        }
    }
    Some(regions)
}

/// [`subject_diff`]'s search one decider at a time, for when the cells (every combination
/// of the other side's patterns) are too many to list: for each component `c` that can
/// decide on the other side (one whose last rule there comes after `u`'s last, `u` itself
/// there, or none at all when `u` has no rule there), one query for a shortest subject of
/// `L(u) ∩ L(c)` that no excluded pattern and no pattern of the other side after `c`
/// matches. The excluded patterns then include nearly every pattern, and their families
/// merge ([`Product::find_outside`]), so each query is small. Before a query, a few
/// obvious subjects are tried concretely ([`obvious_outside`]): on a family of hundreds of
/// patterns most queries have one (`git push --force ~/.vault` for `git push --force*` and
/// `*~/.vault*`), and only those without one, mostly the empty ones, are searched. Each
/// answer is given as a cell whose accepting components are `c` alone: the caller reads
/// only the decider.
fn by_decider(
    product: &Product,
    globs: &[&Wildcard],
    obvious: Obvious,
    lu: usize,
    other: &OtherSide<'_>,
    budget: &mut Budget,
) -> Option<Vec<Cell>> {
    use crate::glob::automaton::Outcome;
    let n = product.component_count();
    let lexcl = other.excluded;
    let mut out = Vec::new();
    for c in other.candidates(lu) {
        let floor = c.and_then(|c| other.last(c));
        let mut excluded = lexcl.to_vec();
        excluded.extend(
            (0..n).filter(|&k| {
                other.last(k).is_some_and(|pk| floor.is_none_or(|f| pk > f)) && k != lu
            }),
        );
        excluded.sort_unstable();
        excluded.dedup();
        let required: Vec<usize> = std::iter::once(lu).chain(c.filter(|&c| c != lu)).collect();
        let witness = match obvious_outside(globs, &required, &excluded, obvious) {
            Some(w) => w,
            None => match product.find_outside(&required, &excluded, budget) {
                Outcome::Witness(w) => w,
                Outcome::Empty => continue,
                Outcome::Inconclusive => return None,
            },
        };
        out.push(Cell {
            accepting: c.filter(|&c| c != lu).into_iter().collect(),
            witness,
        });
    }
    Some(out)
}

/// How [`obvious_outside`] reads subjects: the platform's matching, and whether they are
/// commands (whose words a space separates) or paths, URLs and names (glued).
#[derive(Debug, Clone, Copy)]
pub(super) struct Obvious {
    pub(super) platform: Platform,
    pub(super) commands: bool,
}

/// Past this many patterns taking part in a search, [`subject_diff`] asks one query per
/// possible decider ([`by_decider`]) without first trying to list the cells.
const CELLS_MAX_PATTERNS: usize = 64;

/// The other side of a search: where each of its `n` components last has a rule there
/// (`lother`), the `excluded` ones (which never decide) left out.
struct OtherSide<'a> {
    at: Vec<Option<usize>>,
    excluded: &'a [usize],
}

impl<'a> OtherSide<'a> {
    fn new(n: usize, excluded: &'a [usize], lother: &[Option<usize>]) -> OtherSide<'a> {
        OtherSide {
            at: last_positions(lother, n),
            excluded,
        }
    }

    /// The position of component `k`'s last rule there, if it can decide there.
    fn last(&self, k: usize) -> Option<usize> {
        self.at
            .get(k)
            .copied()
            .flatten()
            .filter(|_| self.excluded.binary_search(&k).is_err())
    }

    /// The components that can decide a subject of `lu` there: those whose last rule comes
    /// after `lu`'s last, `lu` itself, or, when `lu` has no rule there, any (and `None`, no
    /// rule at all).
    fn candidates(&self, lu: usize) -> Vec<Option<usize>> {
        let n = self.at.len();
        match self.last(lu) {
            Some(pu) => (0..n)
                .filter(|&c| self.last(c).is_some_and(|pc| c == lu || pc > pu))
                .map(Some)
                .collect(),
            None => std::iter::once(None)
                .chain((0..n).filter(|&c| self.last(c).is_some()).map(Some))
                .collect(),
        }
    }
}

/// A subject every `required` glob matches and no `excluded` one does, among the obvious
/// ones: each required glob with its wildcards read as nothing or as `x`
/// ([`Wildcard::fill_units`]), and two such fills joined, in either order, with or without
/// a space between or overlapped; the shortest that works (a space not counted). Checked with the matcher
/// itself, so an answer is exact (a member of the difference, as a search's witness would
/// be); `None` says nothing.
fn obvious_outside(
    globs: &[&Wildcard],
    required: &[usize],
    excluded: &[usize],
    obvious: Obvious,
) -> Option<Word> {
    let platform = obvious.platform;
    let fills: Vec<Vec<u16>> = required
        .iter()
        .filter_map(|&r| globs.get(r))
        .flat_map(|g| [g.fill_units(&[]), g.fill_units(&[u16::from(b'x')])])
        .collect();
    // Shortest first; between commands' words, a join with a space counts as long as the
    // glued one and comes first (`git add ~/.vault`, not `git add~/.vault`), except at a
    // `/` (`src/` and `/vendor/` overlap or glue as a path does).
    let slash = u16::from(b'/');
    let mut candidates: Vec<(usize, bool, Vec<u16>)> =
        fills.iter().map(|f| (f.len(), true, f.clone())).collect();
    for a in &fills {
        for b in &fills {
            if a != b {
                let glued = [a.as_slice(), b.as_slice()].concat();
                let spaced = [a.as_slice(), &[u16::from(b' ')], b.as_slice()].concat();
                let at_slash = a.last() == Some(&slash) || b.first() == Some(&slash);
                candidates.push((glued.len(), true, glued));
                if at_slash || !obvious.commands {
                    candidates.push((spaced.len(), true, spaced));
                } else {
                    candidates.push((spaced.len() - 1, false, spaced));
                }
                // Overlapped where `a` ends as `b` begins (`src/new/` and `/vendor/`).
                for k in 1..a.len().min(b.len()) {
                    if a.ends_with(&b[..k]) {
                        let o = [a.as_slice(), &b[k..]].concat();
                        candidates.push((o.len(), true, o));
                    }
                }
            }
        }
    }
    candidates.sort();
    candidates.dedup();
    let matches =
        |k: &usize, s: &[u16]| globs.get(*k).is_some_and(|g| g.is_match_units(s, platform));
    candidates
        .into_iter()
        .map(|(_, _, s)| s)
        .find(|s| required.iter().all(|k| matches(k, s)) && !excluded.iter().any(|k| matches(k, s)))
        .map(Word::from_units)
}

/// For each of `n` components, the position of the last rule with it in `list`.
fn last_positions(list: &[Option<usize>], n: usize) -> Vec<Option<usize>> {
    let mut at = vec![None; n];
    for (i, c) in list.iter().enumerate() {
        if let Some(slot) = c.and_then(|c| at.get_mut(c)) {
            *slot = Some(i);
        }
    }
    at
}

/// For each component `k` that can become universal (its pattern ends in `*`), the
/// components it overrides on the searched side's `other` side: those whose last
/// rule there comes before `k`'s, or that have none. Once `k` matches every continuation
/// they decide nothing on either side (on the searched side only the searched rule does),
/// so they are forgotten; never the searched component `u` nor an `excluded` one, which
/// the search needs to the end.
fn forgets(
    product: &Product,
    other: &OtherSide<'_>,
    u: usize,
) -> Vec<crate::glob::automaton::Forget> {
    let n = product.component_count();
    let (at, excluded) = (&other.at, other.excluded);
    let mut out = Vec::new();
    for k in 0..n {
        let Some(pk) = at[k] else { continue };
        let clear: Vec<usize> = (0..n)
            .filter(|&c| {
                c != k
                    && c != u
                    && excluded.binary_search(&c).is_err()
                    && at[c].is_none_or(|pc| pc < pk)
            })
            .collect();
        if !clear.is_empty() {
            out.push(product.forget(k, &clear));
        }
    }
    out
}

/// The rules of `b` and of `h` that a longest common subsequence (by pattern and effect)
/// leaves unmatched. Any monotone matching of equal rules has this property: a subject
/// matched only by matched rules has, on each side, the partner of the other side's
/// decider as its decider (the matching is a bijection between the matching rules that
/// keeps their order), so it is decided alike. Past [`MAX_ALIGN`] cells of the table the
/// middle is left all unmatched, which is weaker but as sound.
pub(super) fn unmatched(b: &[Key], h: &[Key]) -> (Vec<usize>, Vec<usize>) {
    let pre = b.iter().zip(h).take_while(|(x, y)| x == y).count();
    let (bm, hm) = (&b[pre..], &h[pre..]);
    let (n, m) = (bm.len(), hm.len());
    if n.saturating_mul(m) > MAX_ALIGN {
        return ((pre..b.len()).collect(), (pre..h.len()).collect());
    }
    // lcs[i][j]: LCS length of bm[i..] and hm[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if bm[i] == hm[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut bu, mut hu) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if bm[i] == hm[j] {
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * w + j] >= lcs[i * w + j + 1] {
            bu.push(pre + i);
            i += 1;
        } else {
            hu.push(pre + j);
            j += 1;
        }
    }
    bu.extend((i..n).map(|i| pre + i));
    hu.extend((j..m).map(|j| pre + j));
    (bu, hu)
}

/// Most cells of the alignment table (rules × rules of one permission cell).
const MAX_ALIGN: usize = 4_000_000;

/// How [`friendly`] orders candidates: an everyday input, its plausibility, its shortness.
type Rank = (bool, i32, std::cmp::Reverse<usize>);

/// Candidates [`friendly`] decides at most per region (each one a pass over both rule
/// lists), best first.
const FRIENDLY_TRIES: usize = 6;

/// A recognisable subject in the same region as the automaton's witness: the deciding
/// rules' patterns filled with ordinary text (the checks' everyday inputs for a catch-all,
/// `a`, nothing, `x/a`, and the checks' fillers for the permission: `git push origin`), a
/// few generic inputs, and the witness itself;
/// of those the region holds, the one that reads most like a real input of the permission
/// ([`plausibility`](crate::checks::examples::plausibility), then the shortest):
/// `git reset --hard`, not `git reset --harda`.
pub(super) fn friendly(
    cb: &[(String, Wildcard)],
    ch: &[(String, Wildcard)],
    r: &Region,
    permission: &str,
    platform: Platform,
) -> Word {
    use crate::checks::examples::{everyday, ordinary_fills, plausibility};
    let decider = |l: &[(String, Wildcard)], s: &Word| {
        l.iter()
            .rposition(|(_, g)| g.is_match_units(s.units(), platform))
    };
    // The everyday inputs first (what a reader pictures for a catch-all: `npm test`,
    // `https://example.com`); then the most plausible, then the shortest (`git reset
    // --hard` over `git reset --harda`).
    let mut candidates: Vec<(bool, String)> = Vec::new();
    for (l, p) in [(ch, r.head), (cb, r.base)] {
        if let Some((pat, _)) = p.and_then(|p| l.get(p)) {
            candidates.extend(
                everyday(permission, pat)
                    .iter()
                    .map(|s| (true, s.to_string())),
            );
            candidates.extend(fills(pat).into_iter().map(|s| (false, s)));
            candidates.extend(
                ordinary_fills(permission, pat)
                    .into_iter()
                    .map(|s| (false, s)),
            );
        }
    }
    // A command decided by two patterns: their words, joined as a person types them
    // (`brew ~/.vault` for `brew*` and `*~/.vault*`).
    let commands = permission == "bash";
    if commands
        && let (Some((_, h)), Some((_, b))) = (
            r.head.and_then(|p| ch.get(p)),
            r.base.and_then(|p| cb.get(p)),
        )
    {
        let (h, b) = (h.fill(""), b.fill(""));
        candidates.extend([format!("{h} {b}"), format!("{b} {h}")].map(|s| (false, s)));
    }
    candidates.extend(["a", "src/a.ts", "x"].map(|s| (false, s.to_string())));
    // A command's spaces are not counted: `brew ~/.vault` is as short as `brew~/.vault`.
    let rank = |daily: bool, c: &str| -> Rank {
        let length = c.chars().filter(|&ch| !(commands && ch == ' ')).count();
        (
            daily,
            plausibility(permission, c),
            std::cmp::Reverse(length),
        )
    };
    // Best first (stable: equals in the order listed); the first in the region wins, and
    // none ranked below the witness is tried.
    let mut ranked: Vec<(Rank, &str)> = candidates
        .iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(daily, c)| (rank(*daily, c), c.as_str()))
        .collect();
    ranked.sort_by_key(|x| std::cmp::Reverse(x.0));
    let floor = r.witness.to_exact_string().map(|s| rank(false, &s));
    // A subject of the region matches its deciding patterns: a cheap test before the
    // decisions over both lists, which are the ones counted.
    let deciding = |l: &[(String, Wildcard)], p: Option<usize>, w: &Word| {
        p.is_none_or(|p| {
            l.get(p)
                .is_some_and(|(_, g)| g.is_match_units(w.units(), platform))
        })
    };
    let (mut tried, mut decided) = (std::collections::HashSet::new(), 0);
    for (score, c) in ranked {
        if floor.is_some_and(|f| score < f) {
            break;
        }
        if !tried.insert(c) {
            continue;
        }
        let w = Word::from(c);
        if !deciding(cb, r.base, &w) || !deciding(ch, r.head, &w) {
            continue;
        }
        decided += 1;
        if decided > FRIENDLY_TRIES {
            break;
        }
        if decider(cb, &w) == r.base && decider(ch, &w) == r.head {
            return w;
        }
    }
    r.witness.clone()
}
