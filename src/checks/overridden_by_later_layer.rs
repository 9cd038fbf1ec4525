//! `overridden-by-later-layer` (info)
//!
//! ## What it finds
//! A rule that decides nothing because a rule from a later file or layer gives every input
//! it matches a stricter answer: a project file over the global config,
//! `OPENCODE_PERMISSION`, the managed config. Loosening overrides are `shadowed-deny` and
//! `shadowed-ask` whatever file they come from (merging keeps a key's first position, so a
//! project `"*": "allow"` can silently undo a global deny); a later rule that repeats the
//! answer is not reported across files. A shared rule overridden by an agent's own block
//! is what per-agent blocks are for, and is not reported at all.
//!
//! ## Why it matters
//! The two places disagree and only one wins; whoever reads the earlier file is misled.
//!
//! ## Example
//! Global `{"permission": {"bash": {"git *": "allow"}}}` and project
//! `{"permission": {"bash": {"*": "ask"}}}`: merged, `git *` comes first and never decides;
//! `git status` asks.
//!
//! ## How to fix
//! Keep one source of truth, or accept the override knowingly.

use super::{Check, Level};

pub const CHECK: Check = Check {
    id: "overridden-by-later-layer",
    level: Level::Info,
    summary: "a rule given a stricter answer everywhere by a rule from a later file or layer",
    docs: include_str!("overridden_by_later_layer.rs"),
};
