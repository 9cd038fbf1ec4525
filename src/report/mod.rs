//! Rendering: data in, text out. Nothing here decides anything or touches the machine; the
//! CLI hands over a writer.

pub mod check;
pub mod commands;
pub mod error;
pub mod explain;
pub mod map;
pub mod rules;

use crate::source::{Loc, SourceMap};
use owo_colors::OwoColorize;

/// Whether to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn paint_action(&self, a: &str) -> String {
        if !self.color {
            return a.to_string();
        }
        match a {
            "allow" => a.green().bold().to_string(),
            "deny" => a.red().bold().to_string(),
            "ask" => a.yellow().bold().to_string(),
            _ => a.magenta().bold().to_string(),
        }
    }
    pub fn dim(&self, s: &str) -> String {
        if self.color {
            s.dimmed().to_string()
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        if self.color {
            s.bold().to_string()
        } else {
            s.to_string()
        }
    }
}

/// `{"path", "line", "column"}` of a location, or null.
pub fn source_json(sources: &SourceMap, loc: Option<Loc>) -> serde_json::Value {
    match loc {
        None => serde_json::Value::Null,
        Some(l) => {
            let p = sources.position(l);
            serde_json::json!({"path": p.name, "line": p.line, "column": p.column})
        }
    }
}
