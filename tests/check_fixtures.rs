//! `permaudit check` on the fixture trees of `fixtures/checks/<id>/{fires,clean}/`: each
//! finding kind fires on its `fires` tree and not on its `clean` one (and on any further
//! `fires-NAME` tree, not on any `clean-NAME` one), and the human output (`--color never`)
//! equals the stored `expected.txt` of the tree.
//!
//! A tree holds `project/` (where OpenCode would start), `home/` (an empty HOME unless the
//! case needs a global config) and optionally `env` (`NAME=value` lines). It is copied to a
//! temporary directory, `project/` becomes a git worktree (`.git` cannot be committed),
//! and the CLI runs with only PATH, HOME, an empty managed-config directory and the `env`
//! lines in its environment (`check_support`), so the machine's own configuration never
//! leaks in. Paths in the output are written `$ROOT`. `PERMAUDIT_BLESS=1` rewrites the
//! expected files. An optional `args` file holds extra `check` arguments, one a line (the
//! kinds that only `--headless` turns on).

mod check_support;

use check_support::Tree;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/checks")
}

/// `check ARGS` plus the tree's own `args` lines.
fn args(dir: &Path, base: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    if let Ok(text) = std::fs::read_to_string(dir.join("args")) {
        v.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_string));
    }
    v
}

/// Every kind's `fires` and `clean` trees, then its further trees of either kind
/// (`fires-write-mode`, `clean-write-mode`: one more shape of the kind, kept apart so each
/// tree's snapshot shows one thing), sorted by name.
fn cases() -> Vec<(String, &'static str, PathBuf)> {
    let mut out = Vec::new();
    for c in permaudit::checks::CHECKS {
        for kind in ["fires", "clean"] {
            let dir = fixtures().join(c.id).join(kind);
            assert!(
                dir.join("project").is_dir(),
                "missing fixture tree {}",
                dir.display()
            );
            out.push((c.id.to_string(), kind, dir));
        }
        let mut more: Vec<(&'static str, PathBuf)> = std::fs::read_dir(fixtures().join(c.id))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter_map(|p| {
                let name = p.file_name()?.to_str()?.to_string();
                let kind = if name.starts_with("fires-") {
                    "fires"
                } else if name.starts_with("clean-") {
                    "clean"
                } else {
                    return None;
                };
                p.join("project").is_dir().then_some((kind, p))
            })
            .collect();
        more.sort_by(|a, b| a.1.cmp(&b.1));
        out.extend(
            more.into_iter()
                .map(|(kind, p)| (c.id.to_string(), kind, p)),
        );
    }
    out
}

#[test]
fn each_finding_fires_on_its_fixture_and_not_on_the_clean_one() {
    for (id, kind, dir) in cases() {
        let a = args(&dir, &["check", "--format", "json", "--fail-on", "never"]);
        let r = Tree::from_fixture(&dir).run(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(r.code, 0, "{id}/{kind}: {}", r.stdout);
        let v: serde_json::Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{id}/{kind}: {e}"));
        let found: Vec<&serde_json::Value> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == id.as_str())
            .collect();
        match kind {
            "fires" => {
                assert!(
                    !found.is_empty(),
                    "{id} does not fire on {}:\n{}",
                    dir.display(),
                    r.stdout
                );
                let placed = found
                    .iter()
                    .any(|f| f["source"]["line"].as_u64().is_some_and(|l| l > 0));
                assert!(placed, "{id}: no finding points at a file: {found:#?}");
            }
            _ => assert!(
                found.is_empty(),
                "{id} fires on {}:\n{found:#?}",
                dir.display()
            ),
        }
    }
}

#[test]
fn human_output_matches_the_stored_snapshots() {
    let bless = std::env::var_os("PERMAUDIT_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (id, kind, dir) in cases() {
        let a = args(&dir, &["check"]);
        let r = Tree::from_fixture(&dir).run(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let got = format!("# exit {}\n{}", r.code, r.stdout);
        let path = dir.join("expected.txt");
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != got {
            eprintln!(
                "--- {id}/{kind}: expected {}\n{want}\n--- got\n{got}",
                path.display()
            );
            stale.push(format!("{id}/{kind}"));
        }
    }
    assert!(
        stale.is_empty(),
        "human output differs for {stale:?}; if the change is intended, rerun with PERMAUDIT_BLESS=1 and review the diff"
    );
}
