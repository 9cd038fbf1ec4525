//! The model: configs decoded, merged and turned into each agent's ordered ruleset, exactly
//! as OpenCode 1.18.34 concatenates it. Nothing here reads files or the environment.

pub mod agents;
pub mod config;
pub mod rule;

pub use rule::{Action, Effect, Form, Layer, Rule};
