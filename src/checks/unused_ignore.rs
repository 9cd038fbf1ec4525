//! `unused-ignore` (warning)
//!
//! ## What it finds
//! An inline `permaudit-ignore[ID]` comment that hides nothing: no finding of kind `ID`
//! starts on the line it covers, `ID` is not a finding kind, or the comment is not in the
//! form `permaudit-ignore[ID, …]: reason`. (Kinds turned off by `select`/`ignore` in
//! permaudit's settings are not checked: their comments may be waiting for them.)
//!
//! ## Why it matters
//! An ignore is an acceptance of one finding. When the rule is fixed, moved or rewritten,
//! the comment stays behind and would silently hide the next finding of that kind on that
//! line, which nobody has accepted.
//!
//! ## Example
//! ```jsonc
//! {"permission": {"edit": {
//!   // permaudit-ignore[shadowed-deny]: the deny was moved last in March
//!   "**": "allow",
//!   "tests/**": "deny"
//! }}}
//! ```
//!
//! ## How to fix
//! Delete the comment, or move it next to the rule it was written for (the rule's own line,
//! or the line above it). `--no-ignore` shows what every comment hides.

use super::{Check, Level};

pub const CHECK: Check = Check {
    id: "unused-ignore",
    level: Level::Warning,
    summary: "an inline permaudit-ignore comment that hides no finding",
    docs: include_str!("unused_ignore.rs"),
};
