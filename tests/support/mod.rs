//! Helpers of the conformance suite (tests/conformance.rs): a seeded generator of OpenCode
//! config trees, the oracle (the real OpenCode 1.18.34 binary) and the comparison harness.

#![allow(dead_code)]

pub mod cases;
pub mod harness;
pub mod json;
pub mod oracle;
pub mod rng;
pub mod tier;
