//! What `check` reports of the checks' findings: permaudit's settings (`select`, `ignore`,
//! `per-path-ignores`, `level`), inline `permaudit-ignore` comments and the baseline.
//!
//! A pure stage after [`crate::checks::run`]: findings and source texts in, findings out,
//! plus the findings about the suppressions themselves (`unused-ignore`,
//! `ignore-without-reason`, `stale-baseline`). Nothing here reads a file; the CLI reads the
//! baseline and writes it.
//!
//! Everything is keyed by what identifies a finding across edits: its kind, the line its
//! place starts on (inline comments), and for the baseline its kind, agent set, file and
//! rule (permission and pattern), or the text it points at, never line numbers.

use crate::checks::{self, Finding};
use crate::project::Project;
use crate::settings::{Settings, SettingsError, unknown_kind};
use crate::source::{Loc, SourceId, SourceMap, Span};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The agents a finding is about: the one place that reads them.
pub fn agents_of(f: &Finding) -> Vec<String> {
    f.agents.clone()
}

/// The marker of an inline ignore comment.
pub const MARKER: &str = "permaudit-ignore";

/// One `permaudit-ignore[ID, …]: reason` comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignore {
    /// The comment.
    pub loc: Loc,
    /// The 0-based line whose findings it hides: its own line when it follows code, else
    /// the next line that is not a comment.
    pub line: usize,
    /// The kinds in the brackets, as written.
    pub ids: Vec<String>,
    /// The text after `:`, `None` when missing or empty.
    pub reason: Option<String>,
    /// Starts with the marker but is not `permaudit-ignore[ID, …]`.
    pub malformed: bool,
}

/// A comment: the byte range of its text after `//` or `#`, its start, whether code
/// precedes it on its line.
struct Comment {
    start: usize,
    body: std::ops::Range<usize>,
    trailing: bool,
}

/// Whether a comment's text starts with the marker (only those are kept: a config may
/// hold a million other comments).
fn marked(body: &str) -> bool {
    body.trim_start().starts_with(MARKER)
}

/// `//` line comments of a JSONC text (not inside strings or block comments) that start
/// with the marker.
fn jsonc_comments(text: &str) -> Vec<Comment> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                if marked(&text[i + 2..end]) {
                    let line_start = b[..i]
                        .iter()
                        .rposition(|&c| c == b'\n')
                        .map_or(0, |p| p + 1);
                    out.push(Comment {
                        start: i,
                        body: i + 2..end,
                        trailing: !text[line_start..i].trim().is_empty(),
                    });
                }
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            }
            _ => i += 1,
        }
    }
    out
}

/// `#` comments of a markdown file's YAML frontmatter (outside quoted scalars).
fn frontmatter_comments(text: &str) -> Vec<Comment> {
    let mut out = Vec::new();
    let mut lines = text.split_inclusive('\n').scan(0usize, |at, l| {
        let start = *at;
        *at += l.len();
        Some((start, l.trim_end_matches(['\n', '\r'])))
    });
    match lines.next() {
        Some((_, first)) if first.trim_start_matches('\u{feff}').trim_end() == "---" => {}
        _ => return out,
    }
    for (start, line) in lines {
        if line.trim_end() == "---" {
            break;
        }
        let (mut single, mut double) = (false, false);
        let mut prev = ' ';
        for (k, c) in line.char_indices() {
            match c {
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                '#' if !single && !double && prev.is_whitespace() => {
                    if !marked(&line[k + 1..]) {
                        break;
                    }
                    out.push(Comment {
                        start: start + k,
                        body: start + k + 1..start + line.len(),
                        trailing: !line[..k].trim().is_empty(),
                    });
                    break;
                }
                _ => {}
            }
            prev = c;
        }
    }
    out
}

/// The ignore comments of one source text (`markdown`: its frontmatter's `#` comments,
/// else JSONC `//` comments).
pub fn scan(text: &str, source: SourceId, markdown: bool) -> Vec<Ignore> {
    let comments = if markdown {
        frontmatter_comments(text)
    } else {
        jsonc_comments(text)
    };
    if comments.is_empty() {
        return Vec::new();
    }
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset) - 1;
    let lead = if markdown { "#" } else { "//" };
    let comment_only = |l: usize| {
        let end = starts.get(l + 1).copied().unwrap_or(text.len());
        text[starts[l]..end].trim_start().starts_with(lead)
    };
    // The line an own-line comment covers: the next that is not a comment. Found from the
    // last comment up, each reusing the answer of the one below it.
    let mut covers: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for c in comments.iter().rev() {
        let body = text[c.body.clone()].trim();
        let Some(rest) = body.strip_prefix(MARKER) else {
            continue;
        };
        let own = line_of(c.start);
        let line = if c.trailing {
            own
        } else {
            let mut l = own + 1;
            loop {
                if let Some(&t) = covers.get(&l) {
                    l = t;
                    break;
                }
                if l < starts.len() && comment_only(l) {
                    l += 1;
                } else {
                    break;
                }
            }
            covers.insert(own, l);
            l
        };
        let bracket = rest.strip_prefix('[').and_then(|r| r.split_once(']'));
        let (ids, after) = match bracket {
            Some((inside, after)) => (
                inside
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>(),
                after.trim(),
            ),
            None => (Vec::new(), ""),
        };
        let reason = after
            .strip_prefix(':')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_string);
        out.push(Ignore {
            loc: Loc {
                source,
                span: Span::new(c.start, c.body.end),
            },
            line,
            malformed: ids.is_empty(),
            ids,
            reason,
        });
    }
    out.reverse();
    out
}

/// The ignore comments of the given sources (the OpenCode config the project read).
pub fn scan_sources(sources: &SourceMap, ids: &[SourceId]) -> Vec<Ignore> {
    ids.iter()
        .flat_map(|&id| {
            let f = sources.get(id);
            let markdown = f
                .path()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "md"));
            scan(&f.text, id, markdown)
        })
        .collect()
}

/// A finding about the suppressions themselves, at `loc`.
fn meta(check: &checks::Check, loc: Loc, message: String, help: &str) -> Finding {
    Finding::at(check, Some(loc), message).with_help(help.to_string())
}

// ---------------------------------------------------------------------------------------
// Baseline

/// Version of the baseline file format.
pub const BASELINE_VERSION: u32 = 1;

/// One accepted finding: what identifies it across edits (no line numbers).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    /// Sorted.
    pub agents: Vec<String>,
    /// The file the finding points at, relative to the project root (absolute outside it,
    /// `env:NAME` for a variable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The rule's permission and pattern, for a finding about a rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Otherwise the text the finding points at (at most 200 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineFile {
    version: u32,
    #[serde(default)]
    comment: Option<String>,
    entries: Vec<Entry>,
}

/// A source's name as the baseline and `per-path-ignores` see it: relative to `root`
/// whatever output shows.
pub fn file_name(sources: &SourceMap, id: SourceId, root: &Path) -> String {
    let f = sources.get(id);
    match f.path() {
        Some(p) => match p.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => p.display().to_string(),
        },
        None => f.name(),
    }
}

/// The agent set of each finding, sorted (checks report each place once, with every
/// agent it holds for).
fn agent_sets(findings: &[Finding]) -> Vec<Vec<String>> {
    findings
        .iter()
        .map(|f| {
            let mut a = agents_of(f);
            a.sort();
            a.dedup();
            a
        })
        .collect()
}

/// The baseline entry of each finding.
pub fn entries(project: &Project, findings: &[Finding], root: &Path) -> Vec<Entry> {
    let sources = &project.loaded.sources;
    findings
        .iter()
        .zip(agent_sets(findings))
        .map(|(f, agents)| {
            let rule = f
                .rule
                .zip(agents_of(f).first().cloned())
                .and_then(|(i, a)| project.agent(&a).and_then(|a| a.rules.get(i)));
            let text = match (rule, f.loc) {
                (None, Some(l)) => sources
                    .get(l.source)
                    .text
                    .get(l.span.start..l.span.end)
                    .map(|t| t.chars().take(200).collect()),
                _ => None,
            };
            Entry {
                id: f.id.to_string(),
                agents,
                file: f.loc.map(|l| file_name(sources, l.source, root)),
                permission: rule.map(|r| r.permission.clone()),
                pattern: rule.map(|r| r.pattern.clone()),
                text,
            }
        })
        .collect()
}

/// The baseline file for these entries: sorted, each once, pretty JSON.
pub fn baseline_text(entries: &[Entry]) -> String {
    let set: BTreeSet<&Entry> = entries.iter().collect();
    let file = BaselineFile {
        version: BASELINE_VERSION,
        comment: Some(
            "permaudit baseline: findings accepted as they are. `permaudit check --baseline FILE` hides them; `--write-baseline FILE` rewrites this file.".into(),
        ),
        entries: set.into_iter().cloned().collect(),
    };
    serde_json::to_string_pretty(&file).unwrap_or_default() + "\n"
}

/// Read the baseline at `path` through `host` and add it to `sources`, so that stale
/// entries point into it; each entry with its place.
pub fn read_baseline(
    host: &dyn crate::discover::Host,
    sources: &mut SourceMap,
    path: &Path,
) -> Result<Vec<(Entry, Loc)>, crate::settings::SetupError> {
    use crate::source::{Origin, SourceFile};
    let text = crate::settings::read_text(host, "baseline", path)?;
    let id = sources.add(SourceFile::new(Origin::File(path.to_path_buf()), text));
    parse_baseline(&sources.get(id).text, id).map_err(crate::settings::SetupError::Baseline)
}

/// Parse a baseline file: each entry with its place in the file.
pub fn parse_baseline(text: &str, source: SourceId) -> Result<Vec<(Entry, Loc)>, SettingsError> {
    use crate::syntax::jsonc;
    let node = jsonc::parse(text, source, &|o| o).map_err(|e| SettingsError {
        loc: e.loc,
        message: format!("not valid JSON: {}", e.message),
    })?;
    let file: BaselineFile =
        serde_json::from_value(crate::load::to_json(&node.value)).map_err(|e| SettingsError {
            loc: node.loc,
            message: format!("not a permaudit baseline: {e}"),
        })?;
    if file.version != BASELINE_VERSION {
        return Err(SettingsError {
            loc: node.loc,
            message: format!(
                "baseline version {} (this permaudit reads version {BASELINE_VERSION})",
                file.version
            ),
        });
    }
    let locs: Vec<Loc> = node
        .value
        .as_object()
        .and_then(|o| o.get("entries"))
        .and_then(|e| match &e.value {
            crate::syntax::value::Value::Array(items) => {
                Some(items.iter().map(|i| i.loc).collect())
            }
            _ => None,
        })
        .unwrap_or_default();
    Ok(file
        .entries
        .into_iter()
        .zip(locs.into_iter().chain(std::iter::repeat(node.loc)))
        .collect())
}

// ---------------------------------------------------------------------------------------
// The stage

/// What the stage needs besides the findings.
pub struct Inputs<'a> {
    pub settings: &'a Settings,
    /// Sources whose ignore comments apply (the OpenCode config; none with `--no-ignore`).
    pub inline: &'a [SourceId],
    /// The baseline's entries and their places, if one is given.
    pub baseline: Option<&'a [(Entry, Loc)]>,
    /// The project root: paths of `per-path-ignores` and the baseline are relative to it.
    pub root: &'a Path,
}

/// The findings to report, and how many were hidden by each means.
#[derive(Debug, Default)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    /// Places whose findings the settings turned off (`select`, `ignore`,
    /// `per-path-ignores`).
    pub hidden_by_settings: usize,
    pub hidden_by_comments: usize,
    pub hidden_by_baseline: usize,
}

/// Findings about the suppressions themselves: a baseline never hides them (an ignore
/// without a reason, or one that hides nothing, is fixed where it is written).
pub const NOT_BASELINED: &[&str] = &[
    checks::ignore_without_reason::CHECK.id,
    checks::unused_ignore::CHECK.id,
];

/// Apply settings, inline ignores and the baseline to the checks' findings.
pub fn apply(project: &Project, findings: Vec<Finding>, inputs: &Inputs<'_>) -> Outcome {
    let sources = &project.loaded.sources;
    let s = inputs.settings;
    let path_ignores: Vec<(crate::glob::Wildcard, &Vec<crate::settings::KindId>)> = s
        .per_path_ignores
        .iter()
        .map(|(p, ids)| (crate::glob::Wildcard::compile(p), ids))
        .collect();
    let reported = |f: &Finding| {
        s.enabled(f.id)
            && !f.loc.is_some_and(|l| {
                let name = file_name(sources, l.source, inputs.root);
                path_ignores.iter().any(|(w, ids)| {
                    ids.iter().any(|k| k.0 == f.id)
                        && w.is_match(&name, crate::glob::Platform::Unix)
                })
            })
    };
    let mut out = Outcome::default();
    let (mut kept, off): (Vec<Finding>, Vec<Finding>) =
        findings.into_iter().partition(|f| reported(f));
    out.hidden_by_settings = off
        .iter()
        .map(|f| (f.id, f.loc, f.message.as_str()))
        .collect::<BTreeSet<_>>()
        .len();

    // Inline comments.
    let ignores = scan_sources(sources, inputs.inline);
    let mut used: BTreeSet<(usize, usize)> = BTreeSet::new();
    // Counted as reported: a finding about a shared rule once, not once per agent.
    let mut hidden_places: BTreeSet<(&str, Option<Loc>, String)> = BTreeSet::new();
    let mut at: std::collections::HashMap<(SourceId, usize), Vec<usize>> =
        std::collections::HashMap::new();
    for (n, ig) in ignores.iter().enumerate() {
        at.entry((ig.loc.source, ig.line)).or_default().push(n);
    }
    if !ignores.is_empty() {
        kept.retain(|f| {
            let Some(l) = f.loc else { return true };
            let line = sources.get(l.source).line_col(l.span.start).0 - 1;
            let mut hidden = false;
            for &n in at.get(&(l.source, line)).into_iter().flatten() {
                if let Some(k) = ignores[n].ids.iter().position(|id| id == f.id) {
                    used.insert((n, k));
                    hidden = true;
                }
            }
            if hidden {
                hidden_places.insert((f.id, f.loc, f.message.clone()));
            }
            !hidden
        });
    }
    out.hidden_by_comments = hidden_places.len();
    hidden_places.clear();
    let mut notes = Vec::new();
    for (n, ig) in ignores.iter().enumerate() {
        if ig.malformed {
            notes.push(meta(
                &checks::unused_ignore::CHECK,
                ig.loc,
                format!("not an ignore permaudit understands, so it hides nothing: write `{MARKER}[ID]: reason`"),
                "`permaudit rule` lists the finding kinds",
            ));
            continue;
        }
        for (k, id) in ig.ids.iter().enumerate() {
            let message = if let Some(m) = unknown_kind(id) {
                format!("`{MARKER}[{id}]` hides nothing: {m}")
            } else if s.enabled(id) && !used.contains(&(n, k)) {
                format!(
                    "`{MARKER}[{id}]` hides nothing: no `{id}` finding starts on line {}",
                    ig.line + 1
                )
            } else {
                continue;
            };
            notes.push(meta(
                &checks::unused_ignore::CHECK,
                ig.loc,
                message,
                "delete it, or put it on the line of the rule it is for (or the line above)",
            ));
        }
        if ig.reason.is_none() {
            notes.push(meta(
                &checks::ignore_without_reason::CHECK,
                ig.loc,
                format!("this `{MARKER}` does not say why (it still hides what it names)"),
                "write the reason after a colon: `permaudit-ignore[ID]: why this is accepted`",
            ));
        }
    }
    kept.extend(notes.into_iter().filter(|f| reported(f)));

    // Baseline.
    if let Some(baseline) = inputs.baseline {
        let accepted: BTreeSet<&Entry> = baseline.iter().map(|(e, _)| e).collect();
        let mut matched: BTreeSet<Entry> = BTreeSet::new();
        let mine = entries(project, &kept, inputs.root);
        let mut keep = Vec::with_capacity(kept.len());
        for (f, e) in kept.into_iter().zip(mine) {
            if accepted.contains(&e) && !NOT_BASELINED.contains(&f.id) {
                hidden_places.insert((f.id, f.loc, f.message.clone()));
                matched.insert(e);
            } else {
                keep.push(f);
            }
        }
        kept = keep;
        out.hidden_by_baseline = hidden_places.len();
        for (e, loc) in baseline {
            if matched.contains(e) {
                continue;
            }
            let what = match (&e.permission, &e.pattern, &e.text) {
                (Some(p), Some(pat), _) => format!(
                    " about `{p}` {}",
                    serde_json::to_string(pat).unwrap_or_default()
                ),
                (_, _, Some(t)) => format!(" at {}", serde_json::to_string(t).unwrap_or_default()),
                _ => String::new(),
            };
            let f = meta(
                &checks::stale_baseline::CHECK,
                *loc,
                format!(
                    "this baseline entry matches no finding: `{}`{what}{}{}",
                    e.id,
                    e.file
                        .as_ref()
                        .map_or(String::new(), |f| format!(" in {f}")),
                    if e.agents.is_empty() {
                        String::new()
                    } else {
                        format!(" (agents: {})", e.agents.join(", "))
                    }
                ),
                "rewrite the baseline (`permaudit check --write-baseline FILE`) or delete the entry",
            );
            if s.enabled(f.id) {
                kept.push(f);
            }
        }
    }

    for f in &mut kept {
        f.level = s.level_of(f.id, f.level);
    }
    out.findings = kept;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, markdown: bool) -> Vec<(usize, Vec<String>, Option<String>, bool)> {
        scan(text, SourceId(0), markdown)
            .into_iter()
            .map(|i| (i.line, i.ids, i.reason, i.malformed))
            .collect()
    }

    fn ids(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn jsonc_comments_on_the_line_or_above() {
        let text = "{\"permission\": {\"edit\": {\n  // permaudit-ignore[shadowed-deny, dead-rule]: accepted\n  // another comment\n  \"tests/**\": \"deny\",\n  \"**\": \"allow\" // permaudit-ignore[dead-rule]\n  , \"x // permaudit-ignore[dead-rule]: in a string\": \"ask\" /* permaudit-ignore[x] */\n}}}\n// permaudit-ignore dead-rule\n";
        assert_eq!(
            lines(text, false),
            vec![
                (
                    3,
                    ids(&["shadowed-deny", "dead-rule"]),
                    Some("accepted".into()),
                    false
                ),
                (4, ids(&["dead-rule"]), None, false),
                (8, vec![], None, true),
            ]
        );
    }

    #[test]
    fn frontmatter_comments() {
        let text = "---\n# permaudit-ignore[legacy-tools]: old agent, removed in May\ntools:\n  write: true # permaudit-ignore[legacy-tools]:\nprompt: \"a # permaudit-ignore[x]: no\"\n---\n# permaudit-ignore[dead-rule]: body, not frontmatter\n";
        assert_eq!(
            lines(text, true),
            vec![
                (
                    2,
                    ids(&["legacy-tools"]),
                    Some("old agent, removed in May".into()),
                    false
                ),
                (3, ids(&["legacy-tools"]), None, false),
            ]
        );
        assert!(lines("no frontmatter # permaudit-ignore[x]: y\n", true).is_empty());
    }
}
