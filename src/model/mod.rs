//! The model: the vocabulary every stage shares. `rule` is a rule (`permission`, `pattern`,
//! `action`, its `layer` and place); `config` is one source decoded as OpenCode's V1 schema
//! decodes it. `crate::agents` turns the merged config into each agent's ordered ruleset.
//! Nothing here reads files or the environment, and nothing here imports a pipeline stage.

pub mod config;
pub mod meaning;
pub mod rule;

pub use rule::{Action, Effect, Form, Layer, Rule};
