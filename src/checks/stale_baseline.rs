//! `stale-baseline` (warning)
//!
//! ## What it finds
//! An entry of the `--baseline` file (or the `baseline` setting) that matches no finding
//! any more: the rule was fixed, removed, or changed so that its finding is a different
//! one.
//!
//! ## Why it matters
//! A baseline hides findings that match its entries. An entry that matches nothing today
//! hides the same finding if it comes back tomorrow, although nobody accepted it again.
//!
//! ## Example
//! The baseline accepted `shadowed-deny` for `edit "tests/**"` of agents build and plan; the
//! deny has since been moved after the broad allow, so the finding is gone.
//!
//! ## How to fix
//! Write the baseline again (`permaudit check --write-baseline FILE`) or delete the entry.

use super::{Check, Level};

pub const CHECK: Check = Check {
    id: "stale-baseline",
    level: Level::Warning,
    summary: "a baseline entry that matches no finding any more",
    docs: include_str!("stale_baseline.rs"),
};
