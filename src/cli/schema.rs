//! `permaudit schema`: the JSON Schema of permaudit's settings file, generated from
//! `settings::Settings`.

use super::EXIT_OK;
use std::io::Write;

pub fn run(out: &mut dyn Write) -> i32 {
    let text = serde_json::to_string_pretty(&crate::settings::schema()).unwrap_or_default();
    let _ = writeln!(out, "{text}");
    EXIT_OK
}
