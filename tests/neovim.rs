//! A real editor: Neovim headless, with its built-in LSP client (`tests/neovim/init.lua`)
//! started on `permaudit server`, opens a config with a shadowed deny and must receive the
//! diagnostic on the deny's line and column. `scripts/test.sh` installs Neovim (apt) when it
//! is missing; without it this suite is skipped (fast tier) or fails (CI).

mod check_support;
mod support;

use check_support::Tree;
use std::process::Command;

#[test]
fn neovim_receives_the_diagnostics() {
    if Command::new("nvim").arg("--version").output().is_err() {
        support::tier::skip_or_fail("neovim", "nvim is not on PATH (apt-get install neovim)");
        return;
    }
    let t = Tree::new().file(
        "project/opencode.json",
        "{\n  \"permission\": {\n    \"edit\": {\n      \"tests/**\": \"deny\",\n      \"*\": \"allow\"\n    }\n  }\n}\n",
    );
    let out = t.root().join("diagnostics.txt");
    let init = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/neovim/init.lua");
    let run = Command::new("timeout")
        .arg("60")
        .arg("nvim")
        .args(["--headless", "--clean", "-u"])
        .arg(&init)
        .arg("opencode.json")
        .current_dir(t.project())
        .env("HOME", t.root().join("home"))
        .env("XDG_CONFIG_HOME", t.root().join("home/.config"))
        .env("XDG_DATA_HOME", t.root().join("home/.local/share"))
        .env("XDG_STATE_HOME", t.root().join("home/.local/state"))
        .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", t.root().join("managed"))
        .env("NVIM_LSP_OUT", &out)
        .env("PERMAUDIT_BIN", env!("CARGO_BIN_EXE_permaudit"))
        .env("PROJECT", t.project())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "nvim: {}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let got = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        got.lines().any(|l| l == "4:7 shadowed-deny permaudit"),
        "Neovim's diagnostics:\n{got}"
    );
}
