//! The wildcard language: OpenCode's matcher, exactly.

pub mod analysis;
pub mod automaton;
pub mod compiled;
pub mod wildcard;

pub use wildcard::{Platform, Wildcard, matches};
