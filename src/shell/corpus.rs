//! The commands a project runs, read from the files that hold them (for `map --commands`):
//! `package.json` scripts, Makefile and justfile recipe lines, and the `run:` steps of
//! GitHub workflows. Pure: the caller reads the files (through the `Host`) and hands over
//! their text; this module finds the commands and where each was written.
//!
//! What counts as one command is what would be handed to a shell at once:
//! - a `package.json` script: its whole string (npm runs it with `sh -c`);
//! - a Makefile recipe line (a tab-indented line after a rule; `\` continuations joined,
//!   leading `@`, `-`, `+` dropped, `$$` read as `$`; make variables such as `$(CC)` are
//!   left as written, so they read as command substitutions);
//! - a justfile recipe line (an indented line after a `name …:` header; leading `@` and
//!   `-` dropped, `{{…}}` interpolations left as written; shebang recipes skipped);
//! - a workflow `run:` step: each top-level statement of the script as tree-sitter-bash
//!   parses it (so a multi-line block gives one command per line or per `&&` list), from
//!   a plain, quoted or `|`/`>` block scalar. The YAML is read line by line, not by a full
//!   YAML parser: flow mappings (`{run: …}`) and anchors are not followed.

use tree_sitter::Parser;

/// Where a command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    PackageScript,
    MakeRecipe,
    JustRecipe,
    WorkflowRun,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::PackageScript => "package-script",
            Kind::MakeRecipe => "make-recipe",
            Kind::JustRecipe => "just-recipe",
            Kind::WorkflowRun => "workflow-run",
        }
    }
}

/// One command and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub kind: Kind,
    /// The script name, make target or just recipe (`None` for workflow steps).
    pub name: Option<String>,
    /// The file, as the caller named it (worktree-relative).
    pub path: String,
    /// 1-based line of the command's first character in the file.
    pub line: usize,
    pub text: String,
}

/// Which reader a file name calls for (`None`: not a command file).
pub fn kind_of(path: &str) -> Option<Kind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name {
        "package.json" => Some(Kind::PackageScript),
        "Makefile" | "makefile" | "GNUmakefile" => Some(Kind::MakeRecipe),
        "justfile" | "Justfile" | ".justfile" | "JUSTFILE" => Some(Kind::JustRecipe),
        _ if (path.starts_with(".github/workflows/") || path.contains("/.github/workflows/"))
            && (name.ends_with(".yml") || name.ends_with(".yaml")) =>
        {
            Some(Kind::WorkflowRun)
        }
        _ => None,
    }
}

/// The commands of one file.
pub fn commands(path: &str, text: &str) -> Vec<Command> {
    match kind_of(path) {
        Some(Kind::PackageScript) => package_scripts(path, text),
        Some(Kind::MakeRecipe) => make_recipes(path, text),
        Some(Kind::JustRecipe) => just_recipes(path, text),
        Some(Kind::WorkflowRun) => workflow_runs(path, text),
        None => Vec::new(),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn package_scripts(path: &str, text: &str) -> Vec<Command> {
    use crate::syntax::value::Value;
    let Ok(root) = crate::syntax::jsonc::parse(text, crate::source::SourceId(0), &|o| o) else {
        return Vec::new();
    };
    let Some(scripts) = root
        .value
        .as_object()
        .and_then(|o| o.get("scripts"))
        .and_then(|s| s.value.as_object())
    else {
        return Vec::new();
    };
    scripts
        .iter()
        .filter_map(|(name, node)| match &node.value {
            Value::String(s) => Some(Command {
                kind: Kind::PackageScript,
                name: Some(name.to_string()),
                path: path.to_string(),
                line: line_of(text, node.loc.span.start),
                text: s.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// A make rule header: `targets: prerequisites` at column 0 (not a variable assignment).
fn make_target(line: &str) -> Option<String> {
    if line.starts_with(['\t', ' ', '#']) || line.trim().is_empty() {
        return None;
    }
    let colon = line.find(':')?;
    let head = &line[..colon];
    let rest = &line[colon..];
    if head.contains('=') || rest.starts_with(":=") || rest.starts_with("::=") {
        return None;
    }
    Some(head.trim().to_string())
}

fn make_recipes(path: &str, text: &str) -> Vec<Command> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut target: Option<String> = None;
    let mut k = 0;
    while k < lines.len() {
        let line = lines[k];
        if let Some(body) = line.strip_prefix('\t')
            && target.is_some()
        {
            let start = k;
            let mut cmd = body.to_string();
            while cmd.ends_with('\\') && k + 1 < lines.len() {
                cmd.pop();
                k += 1;
                cmd.push_str(lines[k].strip_prefix('\t').unwrap_or(lines[k]));
            }
            let cmd = cmd
                .trim_start_matches(['@', '-', '+', ' ', '\t'])
                .replace("$$", "$");
            if !cmd.trim().is_empty() && !cmd.trim_start().starts_with('#') {
                out.push(Command {
                    kind: Kind::MakeRecipe,
                    name: target.clone(),
                    path: path.to_string(),
                    line: start + 1,
                    text: cmd.trim().to_string(),
                });
            }
        } else if line.trim().is_empty() || line.starts_with('#') {
            // Blank lines and comments do not end a recipe.
        } else {
            target = make_target(line);
        }
        k += 1;
    }
    out
}

fn just_recipes(path: &str, text: &str) -> Vec<Command> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut recipe: Option<String> = None;
    let mut shebang = false;
    let mut first = false;
    for (k, line) in lines.iter().enumerate() {
        let indented = line.starts_with([' ', '\t']);
        if !indented {
            if line.trim().is_empty() {
                continue;
            }
            recipe = None;
            if line.starts_with('#') || line.starts_with('[') {
                continue;
            }
            // `name args: deps` (not `x := value`, not `set …`, `alias …`, `export …`).
            if let Some(colon) = line.find(':')
                && !line[colon..].starts_with(":=")
                && !line[..colon].contains('=')
            {
                let head = line[..colon].trim().trim_start_matches('@');
                let name = head.split_whitespace().next().unwrap_or("");
                if !name.is_empty() && !["set", "alias", "export", "import", "mod"].contains(&name)
                {
                    recipe = Some(name.to_string());
                    shebang = false;
                    first = true;
                }
            }
            continue;
        }
        let Some(name) = &recipe else {
            continue;
        };
        let body = line.trim();
        if first && body.starts_with("#!") {
            shebang = true;
        }
        first = false;
        if shebang || body.is_empty() || body.starts_with('#') {
            continue;
        }
        let cmd = body.trim_start_matches(['@', '-']).trim();
        if !cmd.is_empty() {
            out.push(Command {
                kind: Kind::JustRecipe,
                name: Some(name.clone()),
                path: path.to_string(),
                line: k + 1,
                text: cmd.to_string(),
            });
        }
    }
    out
}

/// The `run:` scripts of a workflow: `(first line of the script, script)`.
fn run_blocks(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let line = lines[k];
        let trimmed = line.trim_start();
        let after_dash = trimmed.strip_prefix("- ").map_or(trimmed, str::trim_start);
        let Some(value) = after_dash.strip_prefix("run:") else {
            k += 1;
            continue;
        };
        let key_indent = line.len() - after_dash.len();
        let value = value.trim();
        let value = match value.find(" #") {
            Some(i) if !value.starts_with(['"', '\'']) => value[..i].trim_end(),
            _ => value,
        };
        if let Some(indicator) = value.strip_prefix(['|', '>']) {
            let folded = value.starts_with('>');
            let _ = indicator;
            let mut body: Vec<&str> = Vec::new();
            let mut j = k + 1;
            let mut indent = None;
            while j < lines.len() {
                let l = lines[j];
                if l.trim().is_empty() {
                    body.push("");
                    j += 1;
                    continue;
                }
                let ind = l.len() - l.trim_start().len();
                if ind <= key_indent {
                    break;
                }
                let ind = *indent.get_or_insert(ind);
                body.push(
                    l.get(ind.min(l.len() - l.trim_start().len())..)
                        .unwrap_or(""),
                );
                j += 1;
            }
            while body.last() == Some(&"") {
                body.pop();
            }
            let script = if folded {
                body.join(" ")
            } else {
                body.join("\n")
            };
            out.push((k + 2, script));
            k = j;
            continue;
        }
        let script = if value.starts_with('"') {
            serde_json::from_str::<String>(value).unwrap_or_else(|_| value.trim_matches('"').into())
        } else if let Some(v) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            v.replace("''", "'")
        } else {
            value.to_string()
        };
        if !script.is_empty() {
            out.push((k + 1, script));
        }
        k += 1;
    }
    out
}

fn workflow_runs(path: &str, text: &str) -> Vec<Command> {
    let mut parser = Parser::new();
    let _ = parser.set_language(&tree_sitter_bash::LANGUAGE.into());
    let mut out = Vec::new();
    for (line, script) in run_blocks(text) {
        let Some(tree) = parser.parse(&script, None) else {
            continue;
        };
        let root = tree.root_node();
        let mut cursor = root.walk();
        for child in root.named_children(&mut cursor) {
            if child.kind() == "comment" {
                continue;
            }
            let Some(t) = script.get(child.byte_range()) else {
                continue;
            };
            let t = crate::syntax::js::js_trim(t);
            if t.is_empty() {
                continue;
            }
            out.push(Command {
                kind: Kind::WorkflowRun,
                name: None,
                path: path.to_string(),
                line: line + child.start_position().row,
                text: t.to_string(),
            });
        }
    }
    out
}

/// Every command split as the bash tool splits it, with one parser, under `env`.
pub fn split(commands: &[Command], env: &super::Env<'_>) -> Vec<super::Request> {
    let mut splitter = super::Splitter::new();
    commands
        .iter()
        .map(|c| splitter.request(&c.text, env))
        .collect()
}

/// Every command split as the bash tool splits it in the project whose paths are `paths`
/// (its start directory and worktree), directories asked of `host`.
pub fn split_in(
    commands: &[Command],
    host: &dyn crate::discover::Host,
    paths: &crate::discover::Paths,
) -> Vec<super::Request> {
    let places = super::Places::of(paths);
    let is_dir = |p: &str| host.is_dir(std::path::Path::new(p));
    split(commands, &places.env(&is_dir))
}

/// The project's commands (its command files read through `host`), each split as the bash
/// tool splits it there: what `map --commands` and the report page decide.
pub fn of_project(
    host: &dyn crate::discover::Host,
    paths: &crate::discover::Paths,
) -> (Vec<Command>, Vec<super::Request>) {
    let commands = read(host, paths.project_root());
    let requests = split_in(&commands, host, paths);
    (commands, requests)
}

/// Read every command file of the project rooted at `root` through `host` (the root's
/// `package.json`, Makefile and justfile, and `.github/workflows/*.yml|yaml`), in that
/// order, workflows sorted by name.
pub fn read(host: &dyn crate::discover::Host, root: &std::path::Path) -> Vec<Command> {
    let mut names: Vec<String> = [
        "package.json",
        "GNUmakefile",
        "makefile",
        "Makefile",
        "justfile",
        "Justfile",
        ".justfile",
        "JUSTFILE",
    ]
    .iter()
    .filter(|n| host.is_file(&root.join(n)))
    .map(|n| n.to_string())
    .collect();
    let wf = root.join(".github/workflows");
    for (name, is_dir) in host.list_dir(&wf) {
        if !is_dir && (name.ends_with(".yml") || name.ends_with(".yaml")) {
            names.push(format!(".github/workflows/{name}"));
        }
    }
    let mut out = Vec::new();
    for name in names {
        if let Ok(bytes) = host.read(&root.join(&name)) {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            out.extend(commands(&name, text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(path: &str, text: &str) -> Vec<(usize, String)> {
        commands(path, text)
            .into_iter()
            .map(|c| (c.line, c.text))
            .collect()
    }

    /// One project file and the commands found in it, with their lines.
    type Case<'a> = (&'a str, &'a str, &'a [(usize, &'a str)]);

    /// Each kind of project file: (path, text, the commands found with their lines).
    #[test]
    fn commands_of_each_kind_of_file() {
        let cases: [Case; 4] = [
            (
                "package.json",
                "{\n \"name\": \"x\",\n \"scripts\": {\n  \"build\": \"tsc && vite build\",\n  \"n\": 1\n }\n}",
                &[(4, "tsc && vite build")],
            ),
            (
                "Makefile",
                "CC := gcc\nall: x\n\t@echo hi \\\n\t  there\n\n\t-rm -f $$HOME/y\nx = 1\n\tnot a recipe\n",
                &[(3, "echo hi   there"), (6, "rm -f $HOME/y")],
            ),
            (
                "justfile",
                "set shell := [\"bash\", \"-c\"]\nbuild target:\n    @cargo build {{target}}\n    # c\n    -rm x\nsh:\n    #!/bin/bash\n    echo no\n",
                &[(3, "cargo build {{target}}"), (5, "rm x")],
            ),
            (
                ".github/workflows/ci.yml",
                "jobs:\n  t:\n    steps:\n      - run: npm ci # deps\n      - name: x\n        run: |\n          echo a && echo b\n          # note\n          cargo test \\\n            --release\n      - run: \"echo \\\"q\\\"\"\n",
                &[
                    (4, "npm ci"),
                    (7, "echo a && echo b"),
                    (9, "cargo test \\\n  --release"),
                    (11, "echo \"q\""),
                ],
            ),
        ];
        for (path, text, want) in cases {
            let want: Vec<(usize, String)> = want.iter().map(|&(l, t)| (l, t.into())).collect();
            assert_eq!(texts(path, text), want, "{path}");
        }
    }
}
