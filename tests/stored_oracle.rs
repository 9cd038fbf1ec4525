//! permaudit's merged rulesets equal OpenCode 1.18.34's on every real configuration whose
//! OpenCode answer is stored: `tests/real/*/oracle.json` (written by `scripts/real-add.py`)
//! and `tests/corpus/*/oracle.json` (the shared judged corpus, `scripts/vendor-corpus.py`).
//! Each holds `opencode agent list --pure` per agent (paths as `$CASE_HOME`/`$CASE`), or
//! OpenCode's refusal. No binary is needed: this runs everywhere, on every clean clone.
//!
//! Compared per agent: its mode and its rules (permission, pattern, action) in order, each
//! run of `external_directory` allows sorted (OpenCode lists skill directories in Bun-glob
//! order; they are all allows, so their order decides nothing). A refusal must be a refusal
//! (exit 2).

mod check_support;

use check_support::Tree;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Entries with a stored answer, and the directory below the case where OpenCode starts.
fn entries() -> Vec<(PathBuf, String)> {
    ["tests/real", "tests/corpus"]
        .into_iter()
        .flat_map(check_support::entries_of)
        .filter(|d| d.join("oracle.json").is_file())
        .map(|d| {
            let start = check_support::start_of(&d);
            (d, start)
        })
        .collect()
}

fn comparable(rules: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut run: Vec<Value> = Vec::new();
    for r in rules.iter().map(Some).chain([None]) {
        if let Some(r) = r {
            let r = json!({"permission": r["permission"], "pattern": r["pattern"], "action": r["action"]});
            if r["permission"] == "external_directory" && r["action"] == "allow" {
                run.push(r);
                continue;
            }
            run.sort_by_key(|x| x.to_string());
            out.append(&mut run);
            out.push(r);
        } else {
            run.sort_by_key(|x| x.to_string());
            out.append(&mut run);
        }
    }
    out
}

/// What permaudit answers for the staged entry, or `Err` with the disagreement.
fn check(dir: &Path, start: &str) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let oracle: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("oracle.json")).unwrap())
            .map_err(|e| format!("{name}: oracle.json: {e}"))?;
    let t = Tree::from_fixture(dir);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(t.project())
        .output()
        .map_err(|e| format!("git init: {e}"))?;
    assert!(git.status.success());
    let run = t.run_in(start, &["rules", "--format", "json"]);
    if oracle["ok"] == false {
        return if run.code == 2 {
            Ok(())
        } else {
            Err(format!(
                "{name}: OpenCode refuses it, permaudit exits {}",
                run.code
            ))
        };
    }
    if run.code != 0 {
        return Err(format!(
            "{name}: OpenCode accepts it, permaudit exits {}: {}",
            run.code,
            run.stderr.lines().next().unwrap_or_default()
        ));
    }
    // `Tree::run` writes the tree's root as `$ROOT`: the stored answers' `$CASE`.
    let text = run
        .stdout
        .replace("$ROOT/home", "$CASE_HOME")
        .replace("$ROOT", "$CASE");
    let got: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
    let got: BTreeMap<String, (Value, Vec<Value>)> = got["agents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["agent"].as_str().unwrap_or_default().to_string(),
                (
                    a["mode"].clone(),
                    comparable(a["rules"].as_array().map(Vec::as_slice).unwrap_or(&[])),
                ),
            )
        })
        .collect();
    let want: BTreeMap<String, (Value, Vec<Value>)> = oracle["agents"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, a)| {
            (
                k.clone(),
                (
                    a["mode"].clone(),
                    comparable(a["rules"].as_array().map(Vec::as_slice).unwrap_or(&[])),
                ),
            )
        })
        .collect();
    if got == want {
        return Ok(());
    }
    let mut differ: Vec<&String> = want
        .keys()
        .filter(|k| got.get(*k) != want.get(*k))
        .collect();
    differ.extend(got.keys().filter(|k| !want.contains_key(*k)));
    let first = differ[0];
    Err(format!(
        "{name}: agents {differ:?} differ; {first}:\n  OpenCode  {}\n  permaudit {}",
        serde_json::to_string(&want.get(first)).unwrap_or_default(),
        serde_json::to_string(&got.get(first)).unwrap_or_default()
    ))
}

#[test]
fn rulesets_equal_opencodes_stored_answers() {
    let list = entries();
    assert!(
        list.len() >= 180,
        "{} entries with a stored answer",
        list.len()
    );
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<_> = list.chunks(list.len().div_ceil(4)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(d, start)| check(d, start).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    eprintln!(
        "{} of {} stored OpenCode answers agree",
        list.len() - failures.len(),
        list.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
