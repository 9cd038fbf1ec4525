//! Syntax: texts into values with spans. JSONC configs, YAML frontmatter of agent files,
//! `{env:…}`/`{file:…}` substitution, and JavaScript object semantics.

pub mod frontmatter;
pub mod js;
pub mod jsonc;
pub mod subst;
pub mod value;
