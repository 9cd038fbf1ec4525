//! `shadowed-ask` (error)
//!
//! ## What it finds
//! An `ask` rule that never asks: every input it matches is decided by later rules, and
//! some of them end up allowed without a question. The *shadowing* class of the overlap
//! analysis, for asks.
//!
//! ## Why it matters
//! An ask is a safety stop: the author wants to approve those commands or edits one by
//! one. A later, broader allow takes them all, so they run unasked.
//!
//! ## Example
//! ```json
//! {"permission": {"bash": {"git push *": "ask", "git *": "allow"}}}
//! ```
//! `git push *` never asks: `git push origin` is decided by `git *` → allow.
//!
//! ## How to fix
//! Put the ask after the broader allow (specific rules last).

use super::{Check, Level};

pub const CHECK: Check = Check {
    id: "shadowed-ask",
    level: Level::Error,
    summary: "an ask that never asks: later rules allow everything it matches",
    docs: include_str!("shadowed_ask.rs"),
};
