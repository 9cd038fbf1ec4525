//! Shell commands as OpenCode 1.18.34's bash tool sees them: the parts it asks about
//! ([`split`]), the "Always" pattern each part would store ([`arity`]), and the decision of
//! a whole command over an agent's rules ([`decide`]). Pure: no I/O.

pub mod arity;
pub mod corpus;
pub mod decide;
pub mod split;

pub use split::{Env, External, Part, Request, Splitter};
