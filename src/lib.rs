//! permaudit: audits OpenCode permission configuration exactly as OpenCode 1.18.34 reads it.
//!
//! See `ARCHITECTURE.md` for the pipeline and its invariants.

pub mod checks;
pub mod cli;
pub mod discover;
pub mod glob;
pub mod host;
pub mod load;
pub mod map;
pub mod model;
pub mod project;
pub mod report;
pub mod shell;
pub mod source;
pub mod syntax;
