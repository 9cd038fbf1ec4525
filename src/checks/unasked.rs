//! Witnesses the bash tool never asks: a command naming a directory outside the project
//! makes OpenCode ask `external_directory` for it first, and when that ask is denied the
//! call ends there, so the `bash` rule a finding names never decides it (`explain` shows
//! the same call that way). The checks judge bash rules by their patterns; this pass, run
//! on every finding before they are consolidated, removes the agents for which a finding's
//! bash example is such a call. A finding left with no agent is dropped: what it showed
//! does not happen in any of them.
//!
//! The shell's question "is this path a directory?" is answered without the file system:
//! a path ending in `/`, the root, and the project's and home's directories and their
//! ancestors are directories; anything else is taken for a file, whose directory is asked.

use super::{Ctx, Finding, Witness};
use crate::agents::{Agent, evaluate};
use crate::model::Effect;
use crate::project::Project;
use crate::shell::{Places, Request, Splitter};
use std::collections::HashMap;

/// The bash tool's view of witnesses: each command split once, its `external_directory`
/// asks decided for any agent.
pub(super) struct Calls<'p> {
    project: &'p Project,
    places: Places,
    requests: HashMap<String, Request>,
}

impl<'p> Calls<'p> {
    pub(super) fn new(project: &'p Project) -> Calls<'p> {
        Calls {
            project,
            places: Places::of(project.loaded.paths()),
            requests: HashMap::new(),
        }
    }

    /// Is `w` a bash command whose call `agent` ends at a denied `external_directory`
    /// ask, before `bash` is asked?
    pub(super) fn unasked(&mut self, splitter: &mut Splitter, agent: &Agent, w: &Witness) -> bool {
        if w.permission != "bash" {
            return false;
        }
        let places = &self.places;
        let request = self.requests.entry(w.input.clone()).or_insert_with(|| {
            let known = [&places.cwd, &places.worktree, &places.home];
            let is_dir = |p: &str| {
                p.ends_with('/')
                    || known.iter().any(|k| {
                        k.strip_prefix(p).is_some_and(|rest| {
                            rest.is_empty() || p == "/" || rest.starts_with('/')
                        })
                    })
            };
            splitter.request(&w.input, &places.env(&is_dir))
        });
        request.external_patterns.iter().any(|p| {
            evaluate(&agent.rules, "external_directory", p, self.project.platform).effect
                == Effect::Deny
        })
    }
}

/// Drop from each finding the agents whose bash witnesses the bash tool would never ask.
pub fn drop_unasked(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !out
        .iter()
        .any(|f| f.witnesses.iter().any(|w| w.permission == "bash"))
    {
        return;
    }
    let mut calls = Calls::new(ctx.project);
    let mut splitter = ctx.splitter();
    out.retain_mut(|f| {
        if f.agents.is_empty() || f.witnesses.iter().all(|w| w.permission != "bash") {
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
