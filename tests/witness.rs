//! Every example input (witness) a finding reports on the real corpus is decided, as a
//! tool call, the way the finding says (issue 35: "`explain` and every witness agree").
//!
//! For each entry of `tests/real/` and of the vendored shared corpus (`tests/corpus/`) that
//! permaudit loads, `check --format json` gives the
//! findings and `rules --format json` every agent's ruleset. Each witness (permission,
//! input, action, deciding rule: the finding's first agent's, or the agent's own where the
//! witness's `deciders` names it) is then put, for every agent
//! the finding names, to `explain PERMISSION --stdin -z --agent A --format json`, the same
//! simulation of OpenCode's tools `explain` answers users with:
//!
//! * bash: the input is one command the bash tool asks about (exactly one part, whose text
//!   is the input), decided by the witness's action and rule; or, for a `never-matches`
//!   chain pattern, the chain its author meant: asked as two or more commands, the call as
//!   a whole decided by the witness's action and rule;
//! * a file tool (read, edit, …): the tool asks its permission for exactly the input (a
//!   worktree-relative path, as OpenCode asks), decided by the witness's action and rule
//!   (a hidden tool, bash included: the rule that hides it);
//! * any other permission: the call's decision itself;
//! * a permission OpenCode never asks (`"asked": false`: a `write` block, whose tool asks
//!   `edit`): no call decides it, so the agent's rules as written must (last match);
//! * and in every case no `external_directory` ask of the same call denies it first (the
//!   permission would then never be asked). An `external_directory` ask that asks or
//!   allows comes first and the permission is asked after it: the witness still shows
//!   what the finding says. When that ask decides the call, `explain` does not show the
//!   tool's own decision for a file tool; those witnesses are counted, and only their
//!   pattern is compared.
//!
//! "Deciding rule" is compared by identity (permission, pattern, action, place or
//! built-in origin), so an agent holding the same shared rule at another index agrees.
//! Every disagreement is listed with its entry, finding and agent. The test fails on any
//! that `tests/witness_known.txt` does not list (a known bug, not yet fixed in `src/`), and
//! on any line of that file that no longer happens (fixed: delete the line).

mod check_support;

use check_support::Tree;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A rule's identity across agents: what it says and where it was written.
fn identity(rules: &[Value], i: &Value) -> Option<String> {
    let r = &rules[i.as_u64()? as usize];
    Some(format!(
        "{} {} {} {} {}",
        r["permission"], r["pattern"], r["action"], r["source"], r["builtin"]
    ))
}

/// One witness to put to one agent.
struct Ask<'a> {
    finding: &'a Value,
    witness: &'a Value,
    agent: &'a str,
}

#[derive(Default)]
struct Tally {
    entries: usize,
    refused: usize,
    findings: usize,
    decisions: usize,
    after_external_ask: usize,
    explain_runs: usize,
    /// Witnesses of a permission OpenCode never asks, decided by the rules as written.
    as_written: usize,
}

/// The rule the finding names for the ask's agent: the witness's own (an index into the
/// first agent's rules), unless `deciders` names the agent with its own deciding rule.
fn wanted(ask: &Ask, rules: &BTreeMap<String, Vec<Value>>) -> Option<String> {
    let w = ask.witness;
    let own = w["deciders"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["agent"] == ask.agent);
    match own {
        Some(d) => identity(&rules[ask.agent], &d["rule"]),
        None => {
            let first = ask.finding["agents"][0].as_str().unwrap_or("");
            identity(&rules[first], &w["rule"])
        }
    }
}

/// Why `d` (one line of `explain --format json`) does not decide `ask.witness` as the
/// finding says, or None when it does.
fn disagreement(
    ask: &Ask,
    d: &Value,
    rules: &BTreeMap<String, Vec<Value>>,
    tally: &mut Tally,
) -> Option<String> {
    let w = ask.witness;
    let input = w["input"].as_str().unwrap_or("");
    let want = wanted(ask, rules);
    let same = |action: &Value, rule: &Value| -> Option<String> {
        let got = identity(&rules[ask.agent], rule);
        if action != &w["action"] || got != want {
            return Some(format!(
                "decided {action} by {} (the finding: {} by {})",
                got.as_deref().unwrap_or("the default ask"),
                w["action"],
                want.as_deref().unwrap_or("the default ask"),
            ));
        }
        None
    };
    for e in d["external_directory"].as_array().into_iter().flatten() {
        if e["action"] == "deny" {
            return Some(format!(
                "the call is denied first by external_directory {} ({}), so {} is never asked",
                e["pattern"],
                identity(&rules[ask.agent], &e["rule"]).unwrap_or_default(),
                w["permission"]
            ));
        }
    }
    if d["decided_by"] == "hidden" {
        return same(&d["action"], &d["rule"]);
    }
    if let Some(parts) = d["parts"].as_array() {
        let asked: Vec<&Value> = parts.iter().filter(|p| p["asked"] == true).collect();
        return match asked.as_slice() {
            [p] if p["text"] == input => same(&p["action"], &p["rule"]),
            // A chain pattern's witness is the chain its author meant (`never-matches`: the
            // bash tool asks about each of its commands, never the line): the call as a
            // whole is decided as the finding says.
            [_, _, ..] if ask.finding["id"] == "never-matches" => same(&d["action"], &d["rule"]),
            _ => Some(format!(
                "the bash tool asks about {:?}, not about the input as one command",
                asked.iter().map(|p| &p["text"]).collect::<Vec<_>>()
            )),
        };
    }
    if let Some(pattern) = d.get("pattern") {
        if pattern.as_str() != Some(input) {
            return Some(format!(
                "the tool asks {} for {pattern}, not for the input",
                w["permission"]
            ));
        }
        if d["decided_by"] == "external_directory" {
            tally.after_external_ask += 1;
            return None;
        }
    }
    same(&d["action"], &d["rule"])
}

/// One disagreement as the test prints it (and `tests/witness_known.txt` lists it).
fn problem(name: &str, ask: &Ask, permission: &str, why: &str) -> String {
    let f = ask.finding;
    let s = &f["source"];
    format!(
        "{name}: [{}] at {}:{}:{} for agent {}: {permission} {}: {why}",
        f["id"].as_str().unwrap_or(""),
        s["path"].as_str().unwrap_or("-"),
        s["line"],
        s["column"],
        ask.agent,
        ask.witness["input"],
    )
}

/// Why a witness of a permission OpenCode never asks (`"asked": false`: `write`, whose
/// tool asks `edit`; `tests/live_conformance.rs` shows the real write tool ignoring a
/// `write` deny) is not decided as its finding says by the agent's rules *as written*
/// (the last rule whose permission and pattern globs match, OpenCode's `findLast`), or
/// None. No call decides it, so `explain`, which answers the call, is not asked.
fn as_written(ask: &Ask, rules: &BTreeMap<String, Vec<Value>>) -> Option<String> {
    use permaudit::glob::{Platform, Wildcard};
    let w = ask.witness;
    let (permission, input) = (w["permission"].as_str()?, w["input"].as_str()?);
    let list = &rules[ask.agent];
    let last = list.iter().rposition(|r| {
        let glob = |k: &str| Wildcard::compile(r[k].as_str().unwrap_or(""));
        glob("permission").is_match(permission, Platform::Unix)
            && glob("pattern").is_match(input, Platform::Unix)
    });
    let want = wanted(ask, rules);
    let got = last.and_then(|i| identity(list, &Value::from(i)));
    let action = last.map_or(Value::from("ask"), |i| list[i]["action"].clone());
    (action != w["action"] || got != want).then(|| {
        format!(
            "as written, decided {action} by {} (the finding: {} by {})",
            got.as_deref().unwrap_or("the default ask"),
            w["action"],
            want.as_deref().unwrap_or("the default ask"),
        )
    })
}

#[test]
fn every_witness_is_decided_as_its_finding_says() {
    // tests/real and the vendored shared corpus (each case started where its meta.json says).
    let mut entries = check_support::real_entries();
    entries.extend(check_support::entries_of("tests/corpus"));
    assert!(entries.len() >= 250, "{} entries", entries.len());
    let mut tally = Tally::default();
    let mut problems: Vec<String> = Vec::new();
    for dir in &entries {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let start = check_support::start_of(dir);
        let t = Tree::from_fixture(dir);
        let run = t.run_in(&start, &["check", "--format", "json", "--fail-on", "never"]);
        if run.code == 2 {
            tally.refused += 1;
            continue;
        }
        assert_eq!(
            run.code, 0,
            "{name}: check exit {}\n{}",
            run.code, run.stderr
        );
        tally.entries += 1;
        let report = run.json();
        let listed = t.run_in(&start, &["rules", "--format", "json"]).json();
        let rules: BTreeMap<String, Vec<Value>> = listed["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let name = a["agent"].as_str().unwrap().to_string();
                (name, a["rules"].as_array().unwrap().clone())
            })
            .collect();
        // Every (agent, permission) asked once, with all its witnesses on standard input.
        let mut asks: BTreeMap<(&str, &str), Vec<Ask>> = BTreeMap::new();
        for f in report["findings"].as_array().unwrap() {
            let witnesses = f["witnesses"].as_array().unwrap();
            if witnesses.is_empty() {
                continue;
            }
            tally.findings += 1;
            for w in witnesses {
                for a in f["agents"].as_array().unwrap() {
                    let agent = a.as_str().unwrap();
                    let permission = w["permission"].as_str().unwrap();
                    let ask = Ask {
                        finding: f,
                        witness: w,
                        agent,
                    };
                    if w["asked"] == false {
                        if let Some(why) = as_written(&ask, &rules) {
                            problems.push(problem(&name, &ask, permission, &why));
                        }
                        tally.as_written += 1;
                        continue;
                    }
                    asks.entry((agent, permission)).or_default().push(ask);
                }
            }
        }
        for ((agent, permission), list) in &asks {
            // The reports name the tree `$ROOT`; the inputs are the real paths again.
            let root = t.root().display().to_string();
            let mut stdin = Vec::new();
            for ask in list {
                let input = ask.witness["input"]
                    .as_str()
                    .unwrap()
                    .replace("$ROOT", &root);
                stdin.extend_from_slice(input.as_bytes());
                stdin.push(0);
            }
            let out = t.run_stdin_in(
                &start,
                &[
                    "explain", permission, "--stdin", "-z", "--agent", agent, "--format", "json",
                ],
                &stdin,
            );
            tally.explain_runs += 1;
            let lines: Vec<&str> = out.stdout.lines().collect();
            assert_eq!(
                (out.code, lines.len()),
                (0, list.len()),
                "{name}: explain {permission} --agent {agent}: one answer per witness\n{}",
                out.stderr
            );
            for (ask, line) in list.iter().zip(lines) {
                tally.decisions += 1;
                let d: Value = serde_json::from_str(line).unwrap();
                if let Some(why) = disagreement(ask, &d, &rules, &mut tally) {
                    problems.push(problem(&name, ask, permission, &why));
                }
            }
        }
    }
    eprintln!(
        "{} entries ({} that permaudit refuses, skipped), {} findings with witnesses, \
         {} witness decisions in {} explain runs ({} asked after an external_directory ask), \
         {} of permissions OpenCode never asks decided as written, {} disagree",
        tally.entries,
        tally.refused,
        tally.findings,
        tally.decisions,
        tally.explain_runs,
        tally.after_external_ask,
        tally.as_written,
        problems.len()
    );
    assert!(
        tally.decisions > 1000,
        "only {} witness decisions",
        tally.decisions
    );
    let known_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/witness_known.txt");
    let known_text = std::fs::read_to_string(&known_path).unwrap_or_default();
    let known: std::collections::BTreeSet<&str> = known_text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let new: Vec<&String> = problems
        .iter()
        .filter(|p| !known.contains(p.as_str()))
        .collect();
    let gone: Vec<&&str> = known
        .iter()
        .filter(|k| !problems.iter().any(|p| p == **k))
        .collect();
    assert!(
        new.is_empty(),
        "{} witnesses are not decided as their findings say:\n{}",
        new.len(),
        new.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        gone.is_empty(),
        "tests/witness_known.txt lists disagreements that no longer happen (delete them):\n{}",
        gone.iter().map(|s| **s).collect::<Vec<_>>().join("\n")
    );
}
