//! `ignored-key` (warning; error when the ignored block denies, asks or switches a tool
//! off; info for a frontmatter block of allows alone, which loses no protection)
//!
//! ## What it finds
//! A permission block OpenCode loads without complaint and then ignores: `permissions:` (the
//! V2 spelling, with an `s`) in the frontmatter of a markdown agent or mode. OpenCode keeps
//! it as an agent *option*, so none of its rules apply; the agent gets only its `permission`
//! and `tools` rules (verified on OpenCode 1.14.34 to 1.18.34). In a JSON config the same
//! key is refused from 1.18.24 ("V2 permissions are not supported"), so only the markdown
//! spelling slips through.
//!
//! ## Why it matters
//! The author believes the denies in that block protect something; OpenCode never checks
//! them.
//!
//! ## Example
//! ```markdown
//! ---
//! description: Reviews code
//! permissions:
//!   bash: deny
//! ---
//! ```
//! `permaudit rules --agent NAME` shows no `bash deny` rule: the agent runs every command.
//!
//! ## How to fix
//! Rename the key to `permission:` and check the result with `permaudit rules --agent NAME`.

use super::{Check, Ctx, Finding, Level, warning_findings};

pub const CHECK: Check = Check {
    id: "ignored-key",
    level: Level::Warning,
    summary: "a permission block OpenCode loads but ignores (`permissions:` in frontmatter), so none of its rules apply",
    docs: include_str!("ignored_key.rs"),
};

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    warning_findings(ctx, &CHECK, &["ignored-key"], &mut found);
    let sources = &ctx.project.loaded.sources;
    for mut f in found {
        // A frontmatter `permissions:` block that holds only allows (an error when it
        // restricts anything) loses no protection: at most a question too many. A note.
        let frontmatter = f.loc.is_some_and(|l| {
            sources
                .get(l.source)
                .path()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "md"))
        });
        if frontmatter && f.level == Level::Warning {
            f.level = Level::Info;
        }
        out.push(f);
    }
}
