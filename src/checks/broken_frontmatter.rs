//! `broken-frontmatter` (error)
//!
//! ## What it finds
//! A markdown agent or mode file whose YAML frontmatter OpenCode cannot parse. OpenCode does
//! not refuse it: the agent loads with the whole file as its prompt and **no permission
//! rules** from the file, or (when OpenCode's repair attempt changes the text and still
//! fails) the agent silently disappears. A mode file failing the agent schema is skipped.
//!
//! ## Why it matters
//! The rules written in the file silently vanish.
//!
//! ## Example
//! ```markdown
//! ---
//! permission:
//!   bash: deny
//!   bash: allow
//! ---
//! ```
//! (duplicate keys are a YAML error in OpenCode's js-yaml 3).
//!
//! ## How to fix
//! Fix the YAML; check the result with `permaudit rules --agent NAME`.

use super::{Check, Ctx, Finding, Level, warning_findings};

pub const CHECK: Check = Check {
    id: "broken-frontmatter",
    level: Level::Error,
    summary: "an agent file whose frontmatter fails, so its rules silently vanish",
    docs: include_str!("broken_frontmatter.rs"),
};

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    warning_findings(ctx, &CHECK, &["broken-frontmatter", "skipped-mode"], out);
}
