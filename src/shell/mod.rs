//! Shell commands as OpenCode 1.18.34's bash tool sees them: the parts it asks about
//! ([`split`]), the "Always" pattern each part would store ([`arity`]), and the decision of
//! a whole command over an agent's rules ([`decide`]), and the commands a project runs
//! ([`corpus`]). No I/O: the one machine question of the split (is a path a directory?) is
//! a function the caller passes, and command files are read through the `Host` trait.

pub mod arity;
pub mod corpus;
pub mod decide;
pub mod file;
pub mod split;

pub use split::{Env, External, Part, Places, Request, Splitter};
