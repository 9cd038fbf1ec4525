//! `permaudit suggest`: each proposed rule (where it goes, the sessions and calls it
//! covers, what it opens) and what was left out with why (human), or JSON version 1:
//! `{version, database, min_sessions, log, written, proposals: [{permission, pattern,
//! action: "allow", file, line, column, agent, directory, covers, sessions, session_ids,
//! logged, opens: [{agents, permission, input, before, after}], narrowed}], skipped:
//! [{directory, permission, pattern, sessions, calls, why}]}`.

use super::{Style, clean};
use crate::approvals::{Log, Proposal, Skipped};
use serde_json::{Value, json};

pub struct Report<'a> {
    pub database: &'a str,
    pub min_sessions: usize,
    pub proposals: &'a [Proposal],
    pub skipped: &'a [Skipped],
    pub log: Option<&'a Log>,
    /// The proposals were written (`--write`).
    pub written: bool,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first few of a list (the JSON has them all).
fn first(list: &[String]) -> String {
    const SHOWN: usize = 6;
    if list.len() > SHOWN {
        format!("{}, … ({} in all)", list[..SHOWN].join(", "), list.len())
    } else {
        list.join(", ")
    }
}

impl Report<'_> {
    fn log_json(&self) -> Value {
        match self.log {
            Some(l) => json!({"files": l.files, "asks": l.asks()}),
            None => Value::Null,
        }
    }

    pub fn json(&self) -> Value {
        let proposals: Vec<Value> = self
            .proposals
            .iter()
            .map(|p| {
                json!({
                    "permission": p.permission,
                    "pattern": p.pattern,
                    "action": "allow",
                    "file": p.file,
                    "line": p.line,
                    "column": p.column,
                    "agent": p.agent,
                    "directory": p.directory,
                    "covers": p.covers,
                    "sessions": p.sessions.len(),
                    "session_ids": p.sessions,
                    "logged": {"asked": p.logged, "of": p.approved},
                    "opens": p.opens,
                    "narrowed": p.narrowed.as_ref().map(|(from, why)| json!({"from": from, "why": why})),
                })
            })
            .collect();
        json!({
            "version": 1,
            "database": self.database,
            "min_sessions": self.min_sessions,
            "log": self.log_json(),
            "written": self.written,
            "proposals": proposals,
            "skipped": self.skipped,
        })
    }

    pub fn human(&self, style: Style) -> String {
        let mut out = String::new();
        let n = self.proposals.len();
        out.push_str(&format!(
            "{} from the asks approved in at least {} (history: {})\n",
            plural(n, "rule proposed", "rules proposed"),
            plural(self.min_sessions, "session", "sessions"),
            self.database
        ));
        out.push_str(&style.dim(&match self.log {
            Some(l) => format!(
                "OpenCode's log: {} with {} (it confirms a question was put, not who answered it)\n",
                plural(l.files, "file", "files"),
                plural(l.asks(), "ask", "asks")
            ),
            None => "no OpenCode log covers these calls: the asks are inferred from today's config\n"
                .to_string(),
        }));
        for p in self.proposals {
            out.push('\n');
            out.push_str(&format!(
                "  {} {} {}  →  {}:{}:{}{}\n",
                p.permission,
                clean(&serde_json::to_string(&p.pattern).unwrap_or_default()),
                style.paint_action("allow"),
                p.file,
                p.line,
                p.column,
                match &p.agent {
                    Some(a) => format!("  (agent {a}'s own block)"),
                    None => String::new(),
                }
            ));
            out.push_str(&format!(
                "      approved in {}: {}\n",
                plural(p.sessions.len(), "session", "sessions"),
                first(&p.sessions)
            ));
            out.push_str(&format!(
                "      covers {}: {}{}\n",
                plural(p.covers.len(), "call", "calls"),
                first(&p.covers),
                if self.log.is_some() {
                    format!(
                        "; the log shows the question for {} of {}",
                        p.logged, p.approved
                    )
                } else {
                    String::new()
                }
            ));
            if let Some((from, why)) = &p.narrowed {
                out.push_str(&format!(
                    "      narrowed from {}: {}\n",
                    clean(&serde_json::to_string(from).unwrap_or_default()),
                    clean(why)
                ));
            }
            out.push_str("      opens (ask → allow, nothing else changes):\n");
            for o in &p.opens {
                out.push_str(&format!(
                    "        {} {}: {} → {} for {}\n",
                    o.permission,
                    clean(&serde_json::to_string(&o.input).unwrap_or_default()),
                    o.before,
                    o.after,
                    o.agents.join(", ")
                ));
            }
        }
        if !self.skipped.is_empty() {
            out.push_str(&format!("\nNot proposed ({})\n", self.skipped.len()));
            for s in self.skipped {
                let calls = first(&s.calls);
                out.push_str(&format!(
                    "  {} {}: {}\n      {}\n",
                    s.permission,
                    clean(&serde_json::to_string(&s.pattern).unwrap_or_default()),
                    clean(&s.why),
                    style.dim(&format!("calls {calls}"))
                ));
            }
        }
        out.push('\n');
        out.push_str(&if self.written {
            format!("written: {}\n", plural(n, "rule", "rules"))
        } else if n > 0 {
            "nothing written: `--diff` shows the edits, `--write` writes them\n".to_string()
        } else {
            "nothing to write\n".to_string()
        });
        out
    }
}
