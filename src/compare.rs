//! Two projects compared end to end, as every front end that compares drives it: `diff`
//! and the report page (`report --base`) call this stage; neither re-states its order.
//!
//! ```text
//! base host ─▶ load ─┐
//!                    ├─▶ diff::diff ─▶ the commands of both sides, split with the head
//! head host ─▶ load ─┘                 side's view, decided on both (diff::commands)
//! ```
//!
//! It touches no machine: each side is a [`Host`] (a git tree or a directory standing for
//! the project root, built by the front end), and a side that does not load comes back as
//! data for the front end to print.

use crate::diff::Diff;
use crate::discover::Host;
use crate::glob::Platform;
use crate::load::Failure;
use crate::project::Project;
use crate::shell::corpus::Command;
use std::path::Path;

/// Which side a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Base,
    Head,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Base => "base",
            Role::Head => "head",
        }
    }
}

/// Both sides loaded and compared.
pub struct Comparison {
    pub base: Project,
    pub head: Project,
    /// The decisions compared, with the project commands' changes.
    pub diff: Diff,
    /// The commands `diff.commands` indexes: head's first, then the base-only ones.
    pub commands: Vec<Command>,
}

/// Load both sides (started in `cwd`, both standing for the worktree `root`) and compare
/// them; the side that does not load, with why.
pub fn compare(
    base_host: &dyn Host,
    head_host: &dyn Host,
    root: &Path,
    cwd: &Path,
    platform: Platform,
) -> Result<Comparison, (Role, Box<Failure>)> {
    let base = Project::load(base_host, cwd, platform).map_err(|f| (Role::Base, f))?;
    let head = Project::load(head_host, cwd, platform).map_err(|f| (Role::Head, f))?;
    let mut diff = crate::diff::diff(&base, &head);

    // The project's commands, from both sides (head's first, then base-only ones), split
    // once with the head side's view of the machine and decided on both sides.
    let mut commands = crate::shell::corpus::read(head_host, root);
    for c in crate::shell::corpus::read(base_host, root) {
        if !commands.iter().any(|h| h.text == c.text) {
            commands.push(c);
        }
    }
    let requests = crate::shell::corpus::split_in(&commands, head_host, head.loaded.paths());
    diff.commands = crate::diff::commands(&base, &head, &requests);
    Ok(Comparison {
        base,
        head,
        diff,
        commands,
    })
}
