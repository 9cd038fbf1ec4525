//! `shadowed-deny` (error; warning when the inputs end in ask)
//!
//! ## What it finds
//! A `deny` rule that decides no input at all: every input it matches is also matched by a
//! later rule, and OpenCode's last matching rule wins; and some of those inputs end up
//! allowed (error) or asked (warning). This is the *shadowing* class of the overlap
//! analysis (`permaudit rule correlated-rules` describes the others).
//!
//! ## Why it matters
//! The deny looks like protection and gives none. This is the most common mistake in
//! OpenCode permissions: a specific deny written before a broader allow.
//!
//! ## Example
//! ```json
//! {"permission": {"edit": {"*": "ask", "tests/**": "deny", "**": "allow"}}}
//! ```
//! `tests/**` is dead: `tests/x.ts` is decided by `**` → allow.
//!
//! A deny whose inputs are all still denied by later denies is only redundant; it is
//! reported as `dead-rule` (info) instead, with its example input. A shared rule (a global
//! or project file) is judged without the agents' own rules: an agent whose own block
//! overrides it has chosen so, and is not listed.
//!
//! ## How to fix
//! Move the deny after the broader rules (put specific rules last), or narrow the later
//! rule. Remember that merging keeps a key's first position: a key that already exists in
//! an earlier file cannot be moved by a later file.

use super::{Check, Level};

pub const CHECK: Check = Check {
    id: "shadowed-deny",
    level: Level::Error,
    summary: "a deny that decides no input: later rules allow or ask everything it matches",
    docs: include_str!("shadowed_deny.rs"),
};
