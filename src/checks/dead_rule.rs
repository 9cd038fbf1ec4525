//! `dead-rule` (warning; info when redundant)
//!
//! ## What it finds
//! A rule that decides no input because later rules *of the same file and layer* take
//! every input it matches, either repeating its answer (redundant: info) or giving a
//! stricter one (shadowed: warning, e.g. an allow that always ends in ask). An allow or
//! ask whose inputs end in something *looser* is `shadowed-deny`/`shadowed-ask`; a rule
//! overridden from another file is `overridden-by-later-layer`.
//!
//! A block of a permission OpenCode never checks (`write`: the write tool asks `edit`) is
//! judged as written: its order is just as wrong once the key is renamed, and the finding
//! says beside its example that no call is decided by these rules (`checks/unasked.rs`).
//!
//! ## Why it matters
//! Dead rules mislead readers about what the configuration does, and a shadowed allow or
//! ask means the author's intent is not what OpenCode enforces.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"git *": "allow", "*": "ask"}}}
//! ```
//! `git *` is dead: `*` comes later and matches every command.
//!
//! ## How to fix
//! Remove the rule, or move it after the rule that overrides it.

use super::{Check, Level};

pub const CHECK: Check = Check {
    id: "dead-rule",
    level: Level::Warning,
    summary: "a rule that never decides anything (redundant or shadowed within its own file)",
    docs: include_str!("dead_rule.rs"),
};
