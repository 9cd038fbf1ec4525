//! permaudit: audits OpenCode permission configuration exactly as OpenCode 1.18.34 reads it.
//!
//! See `ARCHITECTURE.md` for the pipeline and its invariants.

// No panic reachable from input (ARCHITECTURE.md, invariants): outside unit tests the
// library has no unwrap, expect or explicit panic at all. Indexing is by indices the code
// computed itself; the fuzz targets (`fuzz/`) and `tests/hostile.rs` exercise it on input.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::todo,
        clippy::unimplemented,
        clippy::unreachable
    )
)]

pub mod agents;
pub mod approvals;
pub mod audit;
pub mod call;
pub mod checks;
pub mod cli;
pub mod compare;
pub mod delegation;
pub mod diff;
pub mod discover;
pub mod explain;
pub mod fix;
pub mod glob;
pub mod history;
pub mod host;
pub mod load;
pub mod map;
pub mod model;
pub mod profile;
pub mod project;
pub mod report;
pub mod settings;
pub mod shell;
pub mod source;
pub mod suppress;
pub mod syntax;
