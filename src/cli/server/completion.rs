//! Completion inside a permission block, from the buffer's text as it is (a half-typed
//! config does not parse, so this reads only the text before the cursor): the permission
//! keys OpenCode 1.18.34 checks, each with the tools that check it
//! ([`crate::model::meaning`]); the actions `allow`, `ask`, `deny` as a permission's or a
//! pattern's value; under `task` the agents of the last analysis (the subagents first),
//! `task`'s patterns being agent names; under `bash` the project's own commands as the
//! patterns OpenCode's "Always" stores for them (`npm run *`: the commands `map --commands`
//! reads, split as the bash tool splits them); under `edit` and `read` the files and
//! directories (`dir/*`) of the project directory under the typed prefix, at most
//! [`MAX_PATTERNS`] of either. JSON(C) configs and the YAML frontmatter of markdown
//! agents; anywhere else, nothing.

use super::State;
use lsp_types as lt;
use std::path::Path;

/// The most patterns (commands, paths) one completion offers.
pub(super) const MAX_PATTERNS: usize = 200;

/// Where the cursor is: the keys of the objects it is in (outermost first), whether it is
/// at a key or at the value of the last one, and the word typed so far.
#[derive(Debug, PartialEq)]
struct Place {
    path: Vec<String>,
    value: bool,
    /// The byte offset the typed word starts at (after an opening quote when quoted).
    start: usize,
    /// Inside a quoted string (the text replaces its content); else quotes are added (JSON).
    quoted: bool,
}

/// What to offer at a place.
#[derive(Debug, PartialEq)]
enum Offer {
    Permissions,
    Actions,
    Agents,
    /// `bash` patterns: the project's commands.
    Commands,
    /// `edit`/`read` patterns: the project's files.
    Paths,
}

const ACTIONS: &[(&str, &str)] = &[
    ("allow", "the call runs without asking"),
    (
        "ask",
        "the user is asked: once, always (for the rest of the session, by the pattern OpenCode proposes), or reject",
    ),
    (
        "deny",
        "the call is refused (a last `*` deny also hides the tool)",
    ),
];

impl State {
    pub(super) fn completion(
        &mut self,
        p: &lt::CompletionParams,
    ) -> Option<lt::CompletionResponse> {
        let tp = &p.text_document_position;
        let path = super::uri_path(&tp.text_document.uri)?;
        let text = self.docs.get(&path)?.clone();
        let text = text.as_str();
        let at = super::offset(text, tp.position);
        let markdown = path.extension().is_some_and(|e| e == "md");
        let place = if markdown {
            yaml_place(text, at)?
        } else {
            json_place(text, at)?
        };
        let offer = offer(&place)?;
        let start = place.start.min(at);
        let range = lt::Range::new(position_in(text, start), tp.position);
        let quote = |s: &str| {
            if place.quoted || markdown {
                s.to_string()
            } else {
                serde_json::to_string(s).unwrap_or_default()
            }
        };
        let item = |label: &str, detail: String, doc: String, sort: String| lt::CompletionItem {
            label: label.to_string(),
            kind: Some(if place.value {
                lt::CompletionItemKind::VALUE
            } else {
                lt::CompletionItemKind::PROPERTY
            }),
            detail: Some(detail),
            documentation: Some(lt::Documentation::MarkupContent(lt::MarkupContent {
                kind: lt::MarkupKind::Markdown,
                value: doc,
            })),
            sort_text: Some(sort),
            filter_text: Some(quote(label)),
            text_edit: Some(lt::CompletionTextEdit::Edit(lt::TextEdit::new(
                range,
                quote(label),
            ))),
            ..Default::default()
        };
        let typed = text.get(start..at).unwrap_or("");
        let items: Vec<lt::CompletionItem> = match offer {
            Offer::Commands => self
                .commands()
                .iter()
                .filter(|(pattern, _)| pattern.starts_with(typed))
                .take(MAX_PATTERNS)
                .enumerate()
                .map(|(k, (pattern, example))| {
                    let mut i = item(
                        pattern,
                        format!("the project runs {example}"),
                        format!(
                            "`bash` \"{pattern}\": the pattern OpenCode's \"Always\" stores for `{}` (the project runs it: {example}).",
                            pattern.trim_end_matches(" *")
                        ),
                        format!("{k:03}"),
                    );
                    i.kind = Some(lt::CompletionItemKind::VALUE);
                    i
                })
                .collect(),
            Offer::Paths => {
                let root = match &self.project {
                    Some(p) => p.loaded.paths().project_root().to_path_buf(),
                    None => self.cwd.clone(),
                };
                files_under(&root, typed)
                    .into_iter()
                    .enumerate()
                    .map(|(k, (pattern, dir))| {
                        let (detail, doc) = if dir {
                            (
                                "directory: everything under it".to_string(),
                                format!("\"{pattern}\": every path under `{}` (`*` also matches `/`).", pattern.trim_end_matches('*')),
                            )
                        } else {
                            ("file".to_string(), format!("\"{pattern}\": this file, by its path from the project root."))
                        };
                        let mut i = item(&pattern, detail, doc, format!("{k:03}"));
                        i.kind = Some(if dir {
                            lt::CompletionItemKind::FOLDER
                        } else {
                            lt::CompletionItemKind::FILE
                        });
                        i
                    })
                    .collect()
            }
            Offer::Actions => ACTIONS
                .iter()
                .enumerate()
                .map(|(k, (a, what))| {
                    item(
                        a,
                        format!("permaudit: {what}"),
                        format!("`{a}`: {what}."),
                        format!("{k}"),
                    )
                })
                .collect(),
            Offer::Permissions => crate::model::meaning::checked()
                .enumerate()
                .map(|(k, name)| {
                    let platform = self
                        .project
                        .as_ref()
                        .map_or(crate::glob::Platform::Unix, |p| p.platform);
                    let doc = crate::model::meaning::permission(name, platform);
                    item(
                        name,
                        "permission (OpenCode 1.18.34)".into(),
                        doc,
                        format!("{k:02}"),
                    )
                })
                .collect(),
            Offer::Agents => {
                let project = self.project.as_ref()?;
                let mut agents: Vec<&crate::agents::Agent> =
                    project.agents.iter().filter(|a| !a.is_internal()).collect();
                // The agents a task can start first: subagents, then the others.
                agents.sort_by_key(|a| a.mode == crate::agents::Mode::Primary);
                agents
                    .iter()
                    .enumerate()
                    .map(|(k, a)| {
                        let mode = match a.mode {
                            crate::agents::Mode::Primary => "primary agent (task cannot start it)",
                            crate::agents::Mode::Subagent => "subagent",
                            crate::agents::Mode::All => "agent (primary and subagent)",
                        };
                        let from = if a.native { "built in" } else { "configured" };
                        item(
                            &a.name,
                            format!("{mode}, {from}"),
                            format!(
                                "`task` \"{}\": whether an agent may start the {mode} `{}` ({from}).",
                                a.name, a.name
                            ),
                            format!("{k:03}"),
                        )
                    })
                    .collect()
            }
        };
        Some(lt::CompletionResponse::List(lt::CompletionList {
            is_incomplete: false,
            items,
        }))
    }
}

impl State {
    /// The project's commands as `bash` patterns (each "Always" pattern once, first place
    /// kept) with where the project runs one: read through the open buffers when first
    /// asked after an analysis, kept until the next.
    fn commands(&mut self) -> &[(String, String)] {
        if self.commands.is_none() {
            let mut out: Vec<(String, String)> = Vec::new();
            if let Some(project) = &self.project {
                let host = super::Buffers::new(&crate::host::RealHost, &self.docs);
                let (commands, requests) =
                    crate::shell::corpus::of_project(&host, project.loaded.paths());
                let mut seen = std::collections::BTreeSet::new();
                for (c, r) in commands.iter().zip(&requests) {
                    for pattern in &r.always {
                        if seen.insert(pattern.clone()) {
                            out.push((
                                pattern.clone(),
                                format!("`{}` ({}:{})", c.text.trim(), c.path, c.line),
                            ));
                        }
                    }
                }
            }
            self.commands = Some(out);
        }
        self.commands.as_deref().unwrap_or_default()
    }
}

/// The files and directories of the project rooted at `root` whose relative paths start
/// with `typed` (relative, no wildcard, no `..`): files as their path, directories as
/// `dir/*`, sorted, `.git` left out, at most [`MAX_PATTERNS`].
fn files_under(root: &Path, typed: &str) -> Vec<(String, bool)> {
    let (dir, name) = match typed.rfind('/') {
        Some(k) => (&typed[..=k], &typed[k + 1..]),
        None => ("", typed),
    };
    if typed.starts_with(['/', '~'])
        || typed.contains(['*', '?', '\\'])
        || dir.split('/').any(|c| c == "..")
    {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut found: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().into_string().ok()?;
            (n.starts_with(name) && n != ".git").then(|| (n, e.path().is_dir()))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .take(MAX_PATTERNS)
        .map(|(n, is_dir)| {
            if is_dir {
                (format!("{dir}{n}/*"), true)
            } else {
                (format!("{dir}{n}"), false)
            }
        })
        .collect()
}

/// The LSP position of byte `at` of `text` (UTF-16 columns).
fn position_in(text: &str, at: usize) -> lt::Position {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or("");
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |k| k + 1);
    let col: usize = before
        .get(start..)
        .unwrap_or("")
        .chars()
        .map(char::len_utf16)
        .sum();
    lt::Position::new(line as u32, col as u32)
}

/// What a place offers: inside `permission` (the top level's, or an agent's or mode's).
fn offer(place: &Place) -> Option<Offer> {
    let p = &place.path;
    let i = (0..p.len()).rev().find(|&i| {
        p[i] == "permission"
            && (i == 0 || (i >= 2 && matches!(p[i - 2].as_str(), "agent" | "mode")))
    })?;
    let rel = &p[i + 1..];
    match (rel.len(), place.value) {
        (0, false) => Some(Offer::Permissions),
        (0, true) | (1, true) | (2, true) => Some(Offer::Actions),
        (1, false) if rel[0] == "task" => Some(Offer::Agents),
        (1, false) if rel[0] == "bash" => Some(Offer::Commands),
        (1, false) if rel[0] == "edit" || rel[0] == "read" => Some(Offer::Paths),
        _ => None,
    }
}

/// An object or array the cursor is in, as read so far.
struct Frame {
    object: bool,
    /// The key this container is the value of (none in an array).
    key: Option<String>,
    /// The last key read in this object (the one a value after `:` belongs to).
    last_key: Option<String>,
    after_colon: bool,
}

/// The place of byte `at` in a JSON(C) text, read from the start: strings, comments,
/// objects and arrays (a place inside an array is none).
fn json_place(text: &str, at: usize) -> Option<Place> {
    let bytes = text.as_bytes();
    let at = at.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let mut word_start = None;
    while i < at {
        let b = bytes[i];
        match b {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < at && bytes[i] != b'\n' {
                    i += 1;
                }
                if i >= at {
                    return None;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text
                    .get(i + 2..)
                    .and_then(|t| t.find("*/"))
                    .map(|k| i + 2 + k + 2);
                match end {
                    Some(e) if e <= at => {
                        i = e;
                        continue;
                    }
                    _ => return None,
                }
            }
            b'"' => {
                let open = i;
                i += 1;
                let mut escaped = false;
                while i < at {
                    match bytes[i] {
                        b'\\' if !escaped => escaped = true,
                        b'"' if !escaped => break,
                        _ => escaped = false,
                    }
                    i += 1;
                }
                if i >= at {
                    // The cursor is inside this string.
                    let top = stack.last()?;
                    return place_in(&stack, top.object && !top.after_colon, open + 1, true);
                }
                let s: Option<String> = text
                    .get(open..=i)
                    .and_then(|s| serde_json::from_str(s).ok());
                if let Some(top) = stack.last_mut()
                    && top.object
                    && !top.after_colon
                {
                    top.last_key = s;
                }
                word_start = None;
            }
            b':' => {
                if let Some(top) = stack.last_mut() {
                    top.after_colon = true;
                }
                word_start = None;
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.after_colon = false;
                    top.last_key = None;
                }
                word_start = None;
            }
            b'{' | b'[' => {
                let key = stack
                    .last()
                    .filter(|t| t.object && t.after_colon)
                    .and_then(|t| t.last_key.clone());
                stack.push(Frame {
                    object: b == b'{',
                    key,
                    last_key: None,
                    after_colon: false,
                });
                word_start = None;
            }
            b'}' | b']' => {
                stack.pop();
                word_start = None;
            }
            b if b.is_ascii_whitespace() => word_start = None,
            _ => {
                if word_start.is_none() {
                    word_start = Some(i);
                }
            }
        }
        i += 1;
    }
    let top = stack.last()?;
    place_in(
        &stack,
        top.object && !top.after_colon,
        word_start.unwrap_or(at),
        false,
    )
}

/// The place in the innermost container of `stack`: at a key (`key`) or at the value of
/// its last key; none in an array or under one.
fn place_in(stack: &[Frame], key: bool, start: usize, quoted: bool) -> Option<Place> {
    let top = stack.last()?;
    if !top.object {
        return None;
    }
    let mut path = Vec::new();
    for f in stack.iter().skip(1) {
        path.push(f.key.clone()?);
    }
    if !key {
        path.push(top.last_key.clone()?);
    }
    Some(Place {
        path,
        value: !key,
        start,
        quoted,
    })
}

/// The place of byte `at` in the YAML frontmatter of a markdown agent (between a first
/// `---` line and the next), by indentation: the keys of the lines above that open a
/// block (`key:` alone) less indented than the cursor's line.
fn yaml_place(text: &str, at: usize) -> Option<Place> {
    let at = at.min(text.len());
    let before = text.get(..at)?;
    let mut lines = before.split('\n');
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let lines: Vec<&str> = lines.collect();
    let (current, above) = lines.split_last()?;
    if above.iter().any(|l| l.trim_end() == "---") || current.trim_end() == "---" {
        return None;
    }
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let unquote = |k: &str| {
        let k = k.trim();
        k.strip_prefix('"')
            .and_then(|k| k.strip_suffix('"'))
            .or_else(|| k.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
            .unwrap_or(k)
            .to_string()
    };
    let line_start = at - current.len();
    let mut limit = indent(current);
    // The key of this line (`key: va|`): the cursor is at its value.
    let colon = key_colon(current);
    let mut path = Vec::new();
    for l in above.iter().rev() {
        let body = l.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if indent(l) < limit {
            let c = key_colon(l)?;
            let rest = l.get(c + 1..)?.trim();
            if !(rest.is_empty() || rest.starts_with('#')) {
                // A scalar value ends no block the cursor could be in.
                return None;
            }
            path.push(unquote(l.get(..c)?));
            limit = indent(l);
            if limit == 0 {
                break;
            }
        }
    }
    path.reverse();
    let word_from = |from: usize| {
        let typed = current.get(from..).unwrap_or("");
        let lead = typed.len() - typed.trim_start().len();
        let mut start = line_start + from + lead;
        let quoted = typed.trim_start().starts_with(['"', '\'']);
        if quoted {
            start += 1;
        }
        (start, quoted)
    };
    match colon {
        Some(c) => {
            path.push(unquote(current.get(..c)?));
            let (start, quoted) = word_from(c + 1);
            Some(Place {
                path,
                value: true,
                start,
                quoted,
            })
        }
        None => {
            let (start, quoted) = word_from(0);
            Some(Place {
                path,
                value: false,
                start,
                quoted,
            })
        }
    }
}

/// The byte of the `:` ending a YAML key on this line (outside quotes), if any.
fn key_colon(line: &str) -> Option<usize> {
    let body = line.trim_start_matches(' ');
    let lead = line.len() - body.len();
    let mut quote = None;
    for (k, c) in body.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') if k == 0 => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ':')
                if body
                    .get(k + 1..)
                    .is_none_or(|r| r.is_empty() || r.starts_with(' ')) =>
            {
                return Some(lead + k);
            }
            (None, '#') => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{Offer, files_under, json_place, offer, yaml_place};

    /// The offer at the `|` of `text` (removed), JSON or YAML.
    fn at(text: &str, yaml: bool) -> Option<Offer> {
        let k = text.find('|').unwrap();
        let t = text.replacen('|', "", 1);
        let place = if yaml {
            yaml_place(&t, k)
        } else {
            json_place(&t, k)
        };
        offer(&place?)
    }

    #[test]
    fn json_places() {
        assert_eq!(at("{\"permission\": {|", false), Some(Offer::Permissions));
        assert_eq!(
            at("{\"permission\": {\"ba|\"", false),
            Some(Offer::Permissions)
        );
        assert_eq!(
            at("{\"permission\": {\"bash\": |", false),
            Some(Offer::Actions)
        );
        assert_eq!(
            at("{\"permission\": {\"bash\": \"a|", false),
            Some(Offer::Actions)
        );
        assert_eq!(
            at(
                "{\"permission\": {\"edit\": {\"*\": \"deny\", \"a\": \"|\"}}}",
                false
            ),
            Some(Offer::Actions)
        );
        // A pattern's key: the project's files under `edit`/`read`, commands under `bash`,
        // nothing under another permission.
        assert_eq!(
            at("{\"permission\": {\"edit\": {\"*\": \"deny\", |}}}", false),
            Some(Offer::Paths)
        );
        assert_eq!(
            at("{\"permission\": {\"bash\": {\"gi|", false),
            Some(Offer::Commands)
        );
        assert_eq!(at("{\"permission\": {\"webfetch\": {|", false), None);
        assert_eq!(
            at("{\"permission\": {\"task\": {\"*\": \"deny\", |", false),
            Some(Offer::Agents)
        );
        assert_eq!(
            at("{\"agent\": {\"x\": {\"permission\": {|", false),
            Some(Offer::Permissions)
        );
        assert_eq!(
            at("// c \"x\n{/* { */\"permission\": {\"task\": {\"|", false),
            Some(Offer::Agents)
        );
        assert_eq!(at("{\"agent\": {|", false), None);
        assert_eq!(at("{\"permission\": [|", false), None);
        assert_eq!(at("{\"model\": \"|", false), None);
        assert_eq!(
            at("{\"permission\": {\"edit\": \"allow\", \"|", false),
            Some(Offer::Permissions)
        );
        assert_eq!(at("|", false), None);
        assert_eq!(at("\"|", false), None);
        assert_eq!(
            at("}}]]{\"permission\": {|", false),
            Some(Offer::Permissions)
        );
    }

    /// Every offset of texts with comments, escapes, multi-byte characters and broken
    /// nesting: an answer or none, never a panic.
    #[test]
    fn every_offset_answers() {
        let texts = [
            "{\"permission\": {\"é\\\"\": {\"*\": \"ask\", // ✓\n \"ta\\\\\": /* x */ {\"🦀\": \"a",
            "---\npermission:\n  \"b:a\": ask # c\n  'task':\n    é: [\n  🦀:\n---\n",
            "}]:,\"\\",
            "/*",
            "---\n: :\n  :\n",
        ];
        for t in texts {
            for k in 0..=t.len() + 2 {
                let _ = json_place(t, k).map(|p| offer(&p));
                let _ = yaml_place(t, k).map(|p| offer(&p));
            }
        }
    }

    /// Files under a typed prefix: relative prefixes only, directories as `dir/*`.
    #[test]
    fn files_under_a_prefix() {
        let d = tempfile::tempdir().unwrap();
        for f in ["src/a.rs", "src/b/c.rs", "s.txt", ".git/x"] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let names = |typed: &str| -> Vec<String> {
            files_under(d.path(), typed)
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names("s"), ["s.txt", "src/*"]);
        assert_eq!(names("src/"), ["src/a.rs", "src/b/*"]);
        assert_eq!(names(""), ["s.txt", "src/*"]);
        for nothing in ["/", "~/", "../", "src/../", "*", "src/?", "none/"] {
            assert!(names(nothing).is_empty(), "{nothing}");
        }
    }

    #[test]
    fn yaml_places() {
        assert_eq!(at("---\npermission:\n  |", true), Some(Offer::Permissions));
        assert_eq!(
            at("---\npermission:\n  bash: |", true),
            Some(Offer::Actions)
        );
        assert_eq!(
            at("---\npermission:\n  bash:\n    \"*\": a|", true),
            Some(Offer::Actions)
        );
        assert_eq!(
            at("---\npermission:\n  task:\n    \"*\": deny\n    |", true),
            Some(Offer::Agents)
        );
        assert_eq!(
            at("---\npermission:\n  read:\n    src/|", true),
            Some(Offer::Paths)
        );
        assert_eq!(at("---\nmode: subagent\n|", true), None);
        assert_eq!(at("---\npermission:\n  bash: ask\n---\n|", true), None);
        assert_eq!(at("no frontmatter\npermission:\n  |", true), None);
        assert_eq!(at("---\n|", true), None);
        assert_eq!(at("|", true), None);
    }
}
