//! `permaudit check` on real, public OpenCode configurations: `tests/real/<owner>__<repo>/`,
//! each a `project/` (the repository's files at their paths), a `home/` (a dotfiles
//! repository's global config where OpenCode reads it) and a `SOURCE.md` naming the
//! repository and commit it was copied from (`tests/real/INDEX.md` lists them all).
//!
//! Every entry's findings are snapshotted (insta, `tests/real/snapshots/<dir>.snap`), one
//! block per finding: level, kind, place, agents and the example inputs. A change to a
//! check therefore shows, in review, what it does to real configs. To accept a change:
//! `INSTA_UPDATE=always cargo test --release --test real`, then read `git diff
//! tests/real/snapshots` (in CI, `CI=true`, a differing snapshot fails).
//!
//! Each entry runs exactly as the fixtures do (`check_support`): a temporary copy, a git
//! worktree, nothing of this machine's configuration.

mod check_support;

use check_support::Tree;
use serde_json::Value;
use std::path::Path;

/// The findings of one run, one block each, in the order reported.
fn render(run: &check_support::Output) -> String {
    if run.code == 2 {
        return format!("exit 2 (refused)\n{}", run.stderr);
    }
    let v = run.json();
    let mut out = String::new();
    for f in v["findings"].as_array().into_iter().flatten() {
        let src = &f["source"];
        let place = match src["path"].as_str() {
            Some(p) => format!("{p}:{}:{}", src["line"], src["column"]),
            None => "-".into(),
        };
        out.push_str(&format!(
            "{}[{}] {place}\n  {}\n",
            f["level"].as_str().unwrap_or(""),
            f["id"].as_str().unwrap_or(""),
            f["message"].as_str().unwrap_or("")
        ));
        let agents: Vec<&str> = f["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !agents.is_empty() {
            out.push_str(&format!("  agents: {}\n", agents.join(", ")));
        }
        for w in f["witnesses"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "  e.g. {} {} -> {}\n",
                w["permission"].as_str().unwrap_or(""),
                w["input"],
                w["action"].as_str().unwrap_or("")
            ));
        }
    }
    let s = &v["summary"];
    out.push_str(&format!(
        "summary: {} errors, {} warnings, {} notes\n",
        s["error"], s["warning"], s["info"]
    ));
    out
}

#[test]
fn real_configs_findings_are_as_snapshotted() {
    let entries = check_support::real_entries();
    assert!(
        entries.len() >= 50,
        "the corpus of real configs has {} entries",
        entries.len()
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for dir in &entries {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            let t = Tree::from_fixture(dir);
            let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
            assert!(
                run.code == 0 || run.code == 2,
                "{name}: exit {} (a crash?)\n{}",
                run.code,
                run.stderr
            );
            // Every witness is an input OpenCode's tool could ask (issue 35): no bash
            // command with white space at an end, no `external_directory` subject that
            // is no `/dir/*`, no edit path ending in `/`.
            if run.code == 0 {
                let v = run.json();
                for f in v["findings"].as_array().into_iter().flatten() {
                    for w in f["witnesses"].as_array().into_iter().flatten() {
                        // The harness writes the tree's root as `$ROOT`.
                        let root = t.root().display().to_string();
                        let (p, i) = (
                            w["permission"].as_str().unwrap_or(""),
                            w["input"].as_str().unwrap_or("").replace("$ROOT", &root),
                        );
                        assert!(
                            permaudit::checks::examples::is_asked(p, &i),
                            "{name}: {} witness {p} {i:?} is no input OpenCode asks",
                            f["id"]
                        );
                    }
                }
            }
            let text = render(&run).replace(&t.root().display().to_string(), "$ROOT");
            insta::assert_snapshot!(name, text);
        }
    });
}
