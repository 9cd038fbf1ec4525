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
        Some(id) => {
            match find_check(id) {
                Some(c) => {
                    let fix = match crate::fix::fixability(c.id) {
                    Some((safety, how)) => format!(
                        "## Automatic fix\n{} (`check --fix{}`): {how}. Each fix is applied only once the diff engine has proven it on the re-loaded config; `check --diff` shows it first.",
                        match safety {
                            crate::fix::Safety::Safe => "Safe: no decision of any agent changes",
                            crate::fix::Safety::Narrowing => {
                                "Narrowing: decisions change only toward ask or deny, where the finding says"
                            }
                        },
                        match safety {
                            crate::fix::Safety::Safe => "",
                            crate::fix::Safety::Narrowing => " --unsafe-fixes",
                        }
                    ),
                    None => "## Automatic fix\nNone: `check --fix` leaves it to you (see How to fix).".into(),
                };
                    let _ = writeln!(out, "{}\n\n{fix}", docs_text(c));
                    EXIT_OK
                }
                None => {
                    eprintln!("error: no finding kind `{id}` (see `permaudit rule`)");
                    EXIT_REFUSED
                }
            }
        }
    }
}
