//! Witnesses a tool never asks: a call whose `external_directory` ask is denied ends
//! there, so the rule a finding names for its own permission never decides it (`explain`
//! shows the same call that way: both are [`crate::call`]'s simulation). A bash command
//! naming a directory outside the project asks `external_directory` for it first, and so
//! does a `read`/`edit` path outside the project. The checks judge rules by their
//! patterns; this pass, run on every finding before they are consolidated, removes the
//! agents for which a finding's example is such a call. A finding left with no agent is
//! dropped: what it showed does not happen in any of them.
//!
//! A witness of a permission OpenCode never asks (`write`: the write tool asks `edit`) is
//! no call at all: it shows the rules as written. The finding stays (a `write` block's
//! allows written before its `*` deny are in the wrong order, and stay so once the key is
//! renamed to `edit`), and [`note_unchecked`] says so beside the example.
//!
//! The question "is this path a directory?" is answered without the file system
//! ([`crate::call::assumed_dir`]).

use super::{Ctx, Finding, Witness};
use crate::agents::{Agent, evaluate};
use crate::call::{self, Asks};
use crate::project::Project;
use crate::shell::{Places, Splitter};
use std::collections::HashMap;

/// The tools' view of witnesses: each call's asks found once, decided for any agent.
pub(super) struct Calls<'p> {
    project: &'p Project,
    places: Places,
    asks: HashMap<(String, String), Asks>,
}

impl<'p> Calls<'p> {
    pub(super) fn new(project: &'p Project) -> Calls<'p> {
        Calls {
            project,
            places: Places::of(project.loaded.paths()),
            asks: HashMap::new(),
        }
    }

    /// Is `w` a call that `agent` ends at a denied `external_directory` ask, before its
    /// own permission is asked?
    pub(super) fn unasked(&mut self, splitter: &mut Splitter, agent: &Agent, w: &Witness) -> bool {
        if !asks_outside(&w.permission) {
            return false;
        }
        let key = (w.permission.clone(), w.input.clone());
        let asks = match self.asks.get(&key) {
            Some(asks) => asks,
            None => {
                let places = &self.places;
                let is_dir = |p: &str| call::assumed_dir(places, p);
                let asks = Asks::of(&w.permission, &w.input, &places.env(&is_dir), splitter);
                self.asks.entry(key).or_insert(asks)
            }
        };
        if asks.external().is_empty() {
            return false;
        }
        let platform = self.project.platform;
        let hiding = call::hiding_rule(&agent.rules, &w.permission, platform);
        call::denied_outside(asks, hiding, |perm, pattern| {
            evaluate(&agent.rules, perm, pattern, platform)
        })
    }
}

/// Does the tool of `permission` ask `external_directory` before it (bash, read, edit)?
fn asks_outside(permission: &str) -> bool {
    permission == "bash" || crate::shell::file::FILE_PERMISSIONS.contains(&permission)
}

/// Drop from each finding the agents whose witnesses their tool would never ask.
pub fn drop_unasked(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !out
        .iter()
        .any(|f| f.witnesses.iter().any(|w| asks_outside(&w.permission)))
    {
        return;
    }
    let mut calls = Calls::new(ctx.project);
    let mut splitter = ctx.splitter();
    out.retain_mut(|f| {
        if f.agents.is_empty() || !f.witnesses.iter().any(|w| asks_outside(&w.permission)) {
            return true;
        }
        let first = f.agents[0].clone();
        let witnesses = f.witnesses.clone();
        f.agents.retain(|name| {
            ctx.project.agent(name).is_none_or(|agent| {
                !witnesses
                    .iter()
                    .any(|w| calls.unasked(&mut splitter, agent, w))
            })
        });
        match f.agents.first() {
            None => false,
            Some(now) if *now != first => reindex(ctx, f, &first),
            Some(_) => true,
        }
    });
}

/// Point the finding's rule and its witnesses' deciding rules, indices into agent `was`'s
/// rules, at the same rules of its new first agent; false when one is not there.
fn reindex(ctx: &Ctx<'_>, f: &mut Finding, was: &str) -> bool {
    let (Some(old), Some(new)) = (
        ctx.project.agent(was),
        f.agents.first().and_then(|n| ctx.project.agent(n)),
    ) else {
        return false;
    };
    let moved = |i: usize| {
        let r = old.rules.get(i)?;
        new.rules.iter().position(|x| x == r)
    };
    if let Some(i) = f.rule {
        match moved(i) {
            Some(j) => f.rule = Some(j),
            None => return false,
        }
    }
    for w in &mut f.witnesses {
        if let Some(i) = w.rule {
            match moved(i) {
                Some(j) => w.rule = Some(j),
                None => return false,
            }
        }
    }
    true
}

/// The kinds whose findings are about the order of rules as written (a rule another one
/// after it overrides): still true of a block OpenCode never checks, and still wrong once
/// its key is renamed to the one OpenCode checks.
const ORDER_KINDS: &[&str] = &[
    "shadowed-deny",
    "shadowed-ask",
    "correlated-rules",
    "dead-rule",
    "overridden-by-later-layer",
];

/// Drop the findings whose examples are all of a permission OpenCode never asks (`write`: the
/// write tool asks `edit`): a rule-order finding stays, and says beside its example that
/// no call is decided by these rules; any other kind claims what happens at run time (a
/// headless run rejects, an agent's own rule undoes a shared one), which never does: it
/// is dropped, and the key itself is `unchecked-permission`'s finding.
pub fn drop_unchecked(project: &Project, out: &mut Vec<Finding>) {
    let never = |w: &Witness| project.never_asks(&w.permission).is_some();
    out.retain(|f| {
        f.witnesses.is_empty() || ORDER_KINDS.contains(&f.id) || !f.witnesses.iter().all(never)
    });
}

/// Say beside the example of each finding [`drop_unchecked`] kept that no call is decided
/// by these rules (after the findings are consolidated: a catch-all's finding names its
/// example then).
pub fn note_unchecked(project: &Project, out: &mut [Finding]) {
    for f in out {
        let Some((permission, why)) = f.witnesses.iter().find_map(|w| {
            project
                .never_asks(&w.permission)
                .map(|why| (&w.permission, why))
        }) else {
            continue;
        };
        let why = match crate::model::meaning::checked_as(permission) {
            Some(to) => format!(
                "the {permission} tool is checked as `{to}`; rename the key to `{to}` for these rules to take effect"
            ),
            None => why.to_string(),
        };
        f.message.push_str(&format!(
            " (as written; OpenCode 1.18.34 never checks `{permission}`: {why})"
        ));
    }
}
