//! The wildcard language: OpenCode's matcher, exactly.

pub mod wildcard;

pub use wildcard::{Platform, Wildcard, matches};
