//! `broken-frontmatter` (error)
//!
//! ## What it finds
//! A markdown agent or mode file whose YAML frontmatter OpenCode cannot parse. OpenCode does
//! not refuse it: the agent loads with the whole file as its prompt and **no permission
//! rules** from the file, or (when OpenCode's repair attempt changes the text and still
//! fails) the agent silently disappears. A mode file failing the agent schema is skipped.
//!
//! Also a file whose settings have no opening `---` (it starts with `description: …`
//! and a lone `---` closes them): OpenCode reads no frontmatter from it, so the agent
//! loads as mode `all` with no rules (checked on 1.18.34); and one with something
//! before the opening `---` (a blank line, an HTML comment: a warning where the lost
//! frontmatter sets no `permission` or `tools`; the files written the same way are one
//! finding, naming the others).
//!
//! ## Why it matters
//! The rules written in the file silently vanish.
//!
//! ## Example
//! ```markdown
//! ---
//! permission:
//!   bash: deny
//!   bash: allow
//! ---
//! ```
//! (duplicate keys are a YAML error in OpenCode's js-yaml 3).
//!
//! ## How to fix
//! Fix the YAML; check the result with `permaudit rules --agent NAME`.

use super::{Check, Ctx, Finding, Level, named_list, warning_findings};

pub const CHECK: Check = Check {
    id: "broken-frontmatter",
    level: Level::Error,
    summary: "an agent file whose frontmatter fails, so its rules silently vanish",
    docs: include_str!("broken_frontmatter.rs"),
};

pub fn run(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let from = out.len();
    warning_findings(ctx, &CHECK, &["broken-frontmatter", "skipped-mode"], out);
    // What to change, read from the text at the place the parser stopped.
    for f in &mut out[from..] {
        let Some(loc) = f.loc else { continue };
        let file = ctx.project.loaded.sources.get(loc.source);
        if let Some(h) = help(&f.message, file, loc.span.start) {
            f.help = Some(h);
        }
        // A frontmatter OpenCode does not read at all loses protection only where it
        // restricts (`permission:`, `tools:`); one of a name, a description and a model
        // loses the agent's settings, not a rule (severity rule, clause 3 does not apply:
        // the agent's mode and description change, so a warning).
        if f.message.contains(UNREAD) && !restricts(&file.text) {
            f.level = Level::Warning;
        }
    }
    // One finding per level for the files a generator wrote the same way (tests/real
    // quotesystemx: 48 agent files behind one `<!-- GENERATED … -->` line), at the first,
    // naming the others.
    let mut kept: Vec<Finding> = Vec::new();
    let mut others: Vec<(usize, Vec<String>)> = Vec::new();
    for f in out.drain(from..) {
        let unread = f.message.contains(UNREAD);
        let first = kept
            .iter()
            .position(|k| unread && k.message.contains(UNREAD) && k.level == f.level);
        match (first, f.loc) {
            (Some(k), Some(loc)) => {
                let place = ctx.project.loaded.sources.position(loc).to_string();
                match others.iter_mut().find(|(i, _)| *i == k) {
                    Some((_, v)) => v.push(place),
                    None => others.push((k, vec![place])),
                }
            }
            _ => kept.push(f),
        }
    }
    for (k, places) in others {
        if let Some(f) = kept.get_mut(k) {
            f.message
                .push_str(&super::so_do_more(&places, "file", "written the same way"));
        }
    }
    out.extend(kept);
}

/// What the message of a frontmatter OpenCode does not read says.
const UNREAD: &str = "so OpenCode reads no frontmatter";

/// Does the text before the file's second `---` line set `permission` or `tools`?
pub(super) fn restricts(text: &str) -> bool {
    text.lines()
        .skip_while(|l| l.trim_end() != "---")
        .skip(1)
        .take_while(|l| l.trim_end() != "---")
        .chain(text.lines().take_while(|l| l.trim_end() != "---"))
        .any(|l| l.starts_with("permission:") || l.starts_with("tools:"))
}

/// The fix for the YAML errors people make in a frontmatter, from the parser's message and
/// the text at `at` (where it stopped): a key starting with `*` (an alias to YAML), a key
/// written twice in one mapping.
fn help(message: &str, file: &crate::source::SourceFile, at: usize) -> Option<String> {
    let text = &file.text;
    let line_start = text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    let indent = line.len() - line.trim_start().len();
    let key = line.trim_start().split(':').next().unwrap_or("").trim_end();
    let number = |offset: usize| file.line_col(offset).0;
    if message.contains("unknown anchor") || message.contains("alias") {
        // The first key or value on the line that starts with `*`.
        let bad = line
            .split(|c: char| c == ':' || c.is_whitespace())
            .find(|w| w.starts_with('*'))?;
        // The other lines of the frontmatter with the same mistake (a key or a value that
        // starts with `*`), so one pass fixes them all.
        let here = number(line_start);
        let mut others: Vec<String> = Vec::new();
        for (n, l) in text.lines().enumerate().skip(1) {
            if l.trim_end() == "---" {
                break;
            }
            let t = l.trim_start().trim_start_matches("- ");
            let value = t.split_once(": ").map(|(_, v)| v.trim_start());
            if n + 1 != here && (t.starts_with('*') || value.is_some_and(|v| v.starts_with('*'))) {
                others.push((n + 1).to_string());
            }
        }
        let also = match others.len() {
            0 => String::new(),
            _ => format!(
                " (also on line{} {})",
                if others.len() == 1 { "" } else { "s" },
                named_list(&others, 8)
            ),
        };
        return Some(format!(
            "YAML reads a word that starts with `*` as an alias (a reference to an anchor), so `{bad}` breaks the whole frontmatter: quote it, `\"{bad}\"`, as every glob that starts with `*` must be in YAML{also}"
        ));
    }
    if message.contains("duplicated mapping key") && !key.is_empty() {
        // The same key earlier in the same mapping: same indentation, no shallower line
        // between them.
        let mut first = None;
        let mut offset = 0;
        for l in text[..line_start].split_inclusive('\n') {
            let body = l.trim_end_matches(['\n', '\r']);
            let i = body.len() - body.trim_start().len();
            if !body.trim().is_empty() && i < indent {
                first = None;
            } else if i == indent
                && unquoted(body.trim_start().split(':').next().unwrap_or("").trim_end())
                    == unquoted(key)
            {
                first = Some(offset);
            }
            offset += l.len();
        }
        let at_line = number(line_start);
        // The lines indented under this entry, which has a value of its own (`mode:
        // subagent` followed by `  bash: true`…): a block that lost its key, written over
        // by the repeated one (blind fresh-5 B: sightes' reviewer, whose `tools:` line had
        // become a second `mode: subagent`). Merging the two entries would leave them
        // keyless; the key they need goes on this line.
        let has_value = line
            .split_once(':')
            .is_some_and(|(_, v)| !v.trim().is_empty());
        let mut under: Vec<&str> = Vec::new();
        for l in text[line_end..].split('\n').skip(1) {
            let body = l.trim_end_matches('\r');
            if body.trim() == "---" || body.trim().is_empty() {
                break;
            }
            if body.len() - body.trim_start().len() <= indent {
                break;
            }
            under.push(body.trim());
        }
        if has_value
            && !under.is_empty()
            && let Some(o) = first
        {
            let value = |l: &&str| l.split_once(':').map(|(_, v)| v.trim().to_string());
            let all = |ok: &[&str]| {
                under
                    .iter()
                    .all(|l| value(l).is_some_and(|v| ok.contains(&v.as_str())))
            };
            let block = if all(&["true", "false"]) {
                Some("tools")
            } else if all(&["allow", "ask", "deny", ""]) {
                Some("permission")
            } else {
                None
            };
            let lines = format!("{}–{}", at_line + 1, at_line + under.len());
            return Some(match block {
                Some(b) => format!(
                    "`{}` is written twice in this mapping (lines {} and {at_line}), which YAML forbids, and the indented lines after line {at_line} ({lines}) have no key of their own: they read as `{b}` entries, so write `{b}:` on line {at_line} instead of the second `{}` (the one on line {} stays)",
                    unquoted(key),
                    number(o),
                    unquoted(key),
                    number(o)
                ),
                None => format!(
                    "`{}` is written twice in this mapping (lines {} and {at_line}), which YAML forbids, and the indented lines after line {at_line} ({lines}) have no key of their own: write their key on line {at_line} instead of the second `{}` (the one on line {} stays)",
                    unquoted(key),
                    number(o),
                    unquoted(key),
                    number(o)
                ),
            });
        }
        return Some(match first {
            Some(o) => format!(
                "`{}` is written twice in this mapping (lines {} and {at_line}), which YAML forbids: merge the two into one entry",
                unquoted(key),
                number(o)
            ),
            None => format!(
                "`{}` is written twice in one mapping, which YAML forbids: merge the two into one entry",
                unquoted(key)
            ),
        });
    }
    None
}

/// A YAML key without its quotes.
fn unquoted(k: &str) -> &str {
    k.trim_matches(|c| c == '"' || c == '\'')
}
