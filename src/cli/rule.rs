//! `permaudit rule [ID]`: the documentation of a finding kind, or the list of all kinds.

use super::{EXIT_OK, EXIT_REFUSED};
use crate::checks::{CHECKS, docs_text, find_check};
use std::io::Write;

pub fn run(id: Option<&str>, out: &mut dyn Write) -> i32 {
    // Written, not printed: `println!` panics when the reader has gone (`rule | head`).
    match id {
        None => {
            for c in CHECKS {
                let line = format!("{:<28} {:<8} {}\n", c.id, c.level.to_string(), c.summary);
                if out.write_all(line.as_bytes()).is_err() {
                    break;
                }
            }
            EXIT_OK
        }
        Some(id) => match find_check(id) {
            Some(c) => {
                let _ = writeln!(out, "{}", docs_text(c));
                EXIT_OK
            }
            None => {
                eprintln!("error: no finding kind `{id}` (see `permaudit rule`)");
                EXIT_REFUSED
            }
        },
    }
}
