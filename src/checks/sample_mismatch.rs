//! `sample-mismatch` (error)
//!
//! ## What it finds
//! A sample whose expected action is not what OpenCode decides. Samples are inputs you
//! write down with the answer you want, one per line, in a samples file:
//! `permaudit check --samples FILE`, or `.opencode/permaudit-samples.txt` in the start
//! directory or one of its parents up to the project root, read when present.
//!
//! ```text
//! # AGENT PERMISSION INPUT [=> ACTION]
//! build edit tests/fixture.ts => deny
//! *     bash "git push --force" => ask
//! plan  read .env
//! ```
//! `AGENT` is an agent name, or `*` for every agent. `INPUT` is one string exactly as
//! OpenCode checks it (a worktree-relative path for `read`/`edit`, one command for
//! `bash`; a file tool's name, `write`, is decided as `edit`, which its tool asks); write
//! it as a JSON string to hold spaces or to start it with `#`. Any field
//! may be JSON-quoted. `ACTION` is `allow`, `ask` or `deny`. `#` starts a comment where a
//! field could start. Each sample's action and deciding rule are reported; samples without
//! `=> ACTION` are listed (a table in human output, `samples` in JSON).
//!
//! ## Why it matters
//! The other checks find rules that cannot work; samples pin down what the configuration
//! must do, so that a later edit (a new broader rule, a reordered merge) that changes an
//! answer fails `permaudit check`.
//!
//! ## Example
//! With `{"permission": {"edit": {"tests/**": "deny", "**": "allow"}}}` the sample
//! `build edit tests/x.ts => deny` fails: `**` decides it → allow.
//!
//! ## How to fix
//! Change the configuration until the sample holds (`permaudit explain PERMISSION INPUT`
//! shows the rules involved), or correct the sample.

use super::{Check, Finding, Level, Witness, describe};
use crate::agents::evaluate;
use crate::model::{Action, Effect};
use crate::project::Project;
use crate::source::{Loc, SourceId, SourceMap, Span};

pub const CHECK: Check = Check {
    id: "sample-mismatch",
    level: Level::Error,
    summary: "a sample (`--samples` or .opencode/permaudit-samples.txt) whose expected action OpenCode does not give",
    docs: include_str!("sample_mismatch.rs"),
};

/// The samples file read when `--samples` is not given, looked for in the start directory's
/// `.opencode/` and then in each parent's, up to the project root.
pub const CONVENTIONAL_PATH: &str = ".opencode/permaudit-samples.txt";

/// One line of a samples file.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub agent: String,
    pub permission: String,
    pub input: String,
    pub expected: Option<Effect>,
    /// The whole sample, from the agent field to the end of its last field.
    pub loc: Loc,
    pub agent_loc: Loc,
}

/// A line that is not a sample.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleError {
    pub loc: Loc,
    pub message: String,
}

/// What OpenCode decides for one sample and one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Index into the samples.
    pub sample: usize,
    pub agent: String,
    pub witness: Witness,
}

impl Outcome {
    /// `None` without an expectation.
    pub fn holds(&self, samples: &[Sample]) -> Option<bool> {
        samples[self.sample]
            .expected
            .map(|e| e == self.witness.action)
    }
}

/// A field: its text, its byte range in the line, whether it was JSON-quoted.
type Field = (String, usize, usize, bool);

/// Split one line into fields (byte offsets into the line); an error is `(start, end, why)`.
fn fields(line: &str) -> Result<Vec<Field>, (usize, usize, String)> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i] == b'#' {
            break;
        }
        let start = i;
        if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            if i >= b.len() {
                return Err((start, line.len(), "unterminated JSON string".into()));
            }
            i += 1;
            let text: String = serde_json::from_str(&line[start..i])
                .map_err(|e| (start, i, format!("not a valid JSON string: {e}")))?;
            if i < b.len() && !b[i].is_ascii_whitespace() {
                return Err((i, i + 1, "expected a space after the JSON string".into()));
            }
            out.push((text, start, i, true));
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push((line[start..i].to_string(), start, i, false));
        }
    }
    Ok(out)
}

/// Parse a samples file (its text is source `source` of the run's [`SourceMap`]).
pub fn parse(text: &str, source: SourceId) -> Result<Vec<Sample>, SampleError> {
    let mut samples = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let base = offset;
        offset += raw.len();
        let loc = |s: usize, e: usize| Loc {
            source,
            span: Span::new(base + s, base + e.max(s)),
        };
        let f = fields(line).map_err(|(s, e, message)| SampleError {
            loc: loc(s, e),
            message,
        })?;
        if f.is_empty() {
            continue;
        }
        let usage = "expected `AGENT PERMISSION INPUT [=> ACTION]`";
        let arrow = f.iter().position(|(t, _, _, q)| t == "=>" && !q);
        let (head, expected) = match arrow {
            None => (&f[..], None),
            Some(k) => {
                let rest = &f[k + 1..];
                let Some((a, s, e, _)) = rest.first() else {
                    let (_, s, e, _) = &f[k];
                    return Err(SampleError {
                        loc: loc(*s, *e),
                        message: "expected an action (allow, ask or deny) after `=>`".into(),
                    });
                };
                let action = match Action::parse(a) {
                    Some(a) => a.effective(),
                    None => {
                        return Err(SampleError {
                            loc: loc(*s, *e),
                            message: format!(
                                "expected allow, ask or deny, got {}",
                                serde_json::to_string(a).unwrap_or_default()
                            ),
                        });
                    }
                };
                if let Some((_, s, e, _)) = rest.get(1) {
                    return Err(SampleError {
                        loc: loc(*s, *e),
                        message: format!("{usage}: nothing may follow the action"),
                    });
                }
                (&f[..k], Some(action))
            }
        };
        match head {
            [(agent, a0, a1, _), (permission, _, _, _), (input, _, _, _)] => samples.push(Sample {
                agent: agent.clone(),
                permission: permission.clone(),
                input: input.clone(),
                expected,
                loc: loc(*a0, f.last().map_or(*a1, |x| x.2)),
                agent_loc: loc(*a0, *a1),
            }),
            [_, _, _, (_, s, _, _), ..] => {
                return Err(SampleError {
                    loc: loc(head[2].1, head[head.len() - 1].2.max(*s)),
                    message: format!(
                        "{usage}: an INPUT with spaces must be written as a JSON string, e.g. {}",
                        serde_json::to_string(&line[head[2].1..head[head.len() - 1].2])
                            .unwrap_or_default()
                    ),
                });
            }
            _ => {
                let end = head.last().map_or(line.len(), |x| x.2);
                return Err(SampleError {
                    loc: loc(head.first().map_or(0, |x| x.1), end),
                    message: format!("{usage}: {} field(s) before the action", head.len()),
                });
            }
        }
    }
    Ok(samples)
}

/// Decide every sample (an agent `*` once per agent). An agent name that does not exist is
/// an error at its place.
pub fn decide(p: &Project, samples: &[Sample]) -> Result<Vec<Outcome>, SampleError> {
    let mut out = Vec::new();
    for (k, s) in samples.iter().enumerate() {
        let agents: Vec<_> = if s.agent == "*" {
            p.agents.iter().collect()
        } else {
            match p.agent(&s.agent) {
                Some(a) => vec![a],
                None => {
                    let names: Vec<&str> = p.agents.iter().map(|a| a.name.as_str()).collect();
                    return Err(SampleError {
                        loc: s.agent_loc,
                        message: format!(
                            "no agent named `{}` (agents: {}, or `*` for all)",
                            s.agent,
                            names.join(", ")
                        ),
                    });
                }
            }
        };
        // A file tool's name is the permission its tool asks (`write` → `edit`), as
        // `explain` decides it: a `write` rule decides nothing.
        let permission = crate::model::meaning::asked_as(&s.permission);
        for a in agents {
            let d = evaluate(&a.rules, permission, &s.input, p.platform);
            out.push(Outcome {
                sample: k,
                agent: a.name.clone(),
                witness: Witness {
                    permission: permission.to_string(),
                    input: s.input.clone(),
                    action: d.effect,
                    rule: d.rule,
                },
            });
        }
    }
    Ok(out)
}

/// One `sample-mismatch` finding per outcome that fails its expectation.
pub fn findings(p: &Project, samples: &[Sample], outcomes: &[Outcome]) -> Vec<Finding> {
    let sources: &SourceMap = &p.loaded.sources;
    outcomes
        .iter()
        .filter(|o| o.holds(samples) == Some(false))
        .map(|o| {
            let s = &samples[o.sample];
            let w = &o.witness;
            let rule = p.agent(&o.agent).zip(w.rule).map(|(a, i)| &a.rules[i]);
            let by = match rule {
                Some(r) => format!(
                    "{} at {}",
                    describe(r),
                    match r.loc {
                        Some(l) => sources.position(l).to_string(),
                        None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
                    }
                ),
                None => "OpenCode's default (no rule matches)".to_string(),
            };
            let message = format!(
                "sample expects {} {} → {}, but OpenCode decides {} (by {by})",
                w.permission,
                serde_json::to_string(&w.input).unwrap_or_default(),
                s.expected.map(|e| e.to_string()).unwrap_or_default(),
                w.action
            );
            let related = rule
                .and_then(|r| r.loc)
                .map(|l| (l, format!("decides the sample → {}", w.action)))
                .into_iter()
                .collect();
            Finding::at(&CHECK, Some(s.loc), message)
                .with_agent(o.agent.clone(), w.rule)
                .with_related(related)
                .with_witnesses(vec![w.clone()])
                .with_help(format!(
                    "`permaudit explain {} {} --agent {}` shows every rule involved",
                    w.permission,
                    shell_quote(&w.input),
                    o.agent
                ))
        })
        .collect()
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Vec<Sample>, SampleError> {
        parse(text, SourceId(0))
    }

    #[test]
    fn parses_fields_quotes_comments() {
        let s = p("# c\n\nbuild edit tests/x.ts => deny\n* bash \"git push -f\" # why\n  plan \"read\" \"#x\"=>ask\n").unwrap_err();
        // `"#x"=>ask`: no space after the JSON string.
        assert!(s.message.contains("space after"), "{s:?}");
        let s = p("# c\n\nbuild edit tests/x.ts => deny\n* bash \"git push -f\" # why\nplan read \"#x\" => ask\n").unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(
            (s[0].agent.as_str(), s[0].input.as_str(), s[0].expected),
            ("build", "tests/x.ts", Some(Effect::Deny))
        );
        assert_eq!(
            (s[1].agent.as_str(), s[1].input.as_str(), s[1].expected),
            ("*", "git push -f", None)
        );
        assert_eq!(
            (s[2].input.as_str(), s[2].expected),
            ("#x", Some(Effect::Ask))
        );
        let text = "# c\n\nbuild edit tests/x.ts => deny\n";
        assert_eq!(
            &text[s[0].loc.span.start..s[0].loc.span.end],
            "build edit tests/x.ts => deny"
        );
    }

    #[test]
    fn refuses_bad_lines_with_a_place() {
        for (text, at, needle) in [
            ("build bash git status\n", "git status", "JSON string"),
            ("build bash\n", "build bash", "2 field(s)"),
            ("build bash ls => maybe\n", "maybe", "allow, ask or deny"),
            ("build bash ls =>\n", "=>", "after `=>`"),
            ("build bash ls => deny x\n", "x", "nothing may follow"),
            ("build bash \"ls\n", "\"ls", "unterminated"),
            ("build bash \"\\q\"\n", "\"\\q\"", "JSON string"),
        ] {
            let e = p(text).unwrap_err();
            assert_eq!(&text[e.loc.span.start..e.loc.span.end], at, "{text}");
            assert!(e.message.contains(needle), "{text}: {}", e.message);
        }
    }
}
