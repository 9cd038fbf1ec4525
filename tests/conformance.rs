//! Conformance: permaudit against the real OpenCode 1.18.34 binary (the oracle).
//!
//! * `agent_rulesets_match_opencode`: seeded random config trees covering every config
//!   source OpenCode 1.18.34 reads (spec §5). For each tree, `opencode agent list --pure`
//!   gives the ground truth; `permaudit rules --format json` must print the same agents, with
//!   the same mode and exactly the same sequence of (permission, pattern, action). Where
//!   OpenCode refuses the config, permaudit must exit 2 and point at `file:line:col`.
//! * `wildcard_decisions_match_opencode`: matcher probes (spec §10.1): with
//!   `permission.glob = {"*":"allow", P:"deny"}` the glob tool is denied exactly when P
//!   matches S; `permaudit explain glob S` must decide the same.
//!
//! Setup: `scripts/install-oracle.sh` (or OPENCODE_BIN=/path/to/opencode). Knobs:
//! PERMAUDIT_CONFORMANCE_SEED, PERMAUDIT_CONFORMANCE_CASES (60), PERMAUDIT_CONFORMANCE_GLOB_CASES
//! (30), PERMAUDIT_CONFORMANCE_ONLY=3,17 (re-run single cases), PERMAUDIT_CONFORMANCE_JOBS (4),
//! PERMAUDIT_CONFORMANCE_VERBOSE=1. Without the oracle the suite is skipped with one printed line,
//! except under CI (`CI=true`) or PERMAUDIT_REQUIRE_ORACLE=1, where that fails (`support::tier`).
//! Failing cases are saved under target/conformance-failures/<seed>-<n>/ with a repro.sh.

mod support;

use serde_json::Value;
use std::path::Path;
use std::time::Instant;
use support::cases::{self, Case};
use support::harness::{self, Outcome, Scratch, say};
use support::oracle::{self, Located, Run, Verdict};

const ORACLE_RULES_ARGS: &[&str] = &["agent", "list", "--pure"];
const PERMAUDIT_RULES_ARGS: &[&str] = &["rules", "--format", "json"];
const PERMAUDIT_CHECK_ARGS: &[&str] = &["check", "--format", "json", "--fail-on", "never"];

/// Decide `(permission, input)` over OpenCode's printed ruleset by last match (spec §2.1):
/// `(rule index, action)`, `(None, "ask")` when nothing matches.
fn oracle_decide(rules: &[oracle::Rule], permission: &str, input: &str) -> (Option<usize>, String) {
    let m = |subject: &str, pattern: &Value| {
        pattern
            .as_str()
            .is_some_and(|p| permaudit::glob::matches(subject, p, permaudit::glob::Platform::Unix))
    };
    match rules
        .iter()
        .rposition(|r| m(permission, &r.permission) && m(input, &r.pattern))
    {
        Some(i) => {
            let a = match rules[i].action.as_str() {
                Some("allow") => "allow",
                Some("deny") => "deny",
                _ => "ask",
            };
            (Some(i), a.to_string())
        }
        None => (None, "ask".to_string()),
    }
}

/// Check every witness of `permaudit check --format json` against OpenCode's rulesets.
fn witnesses_hold(expected: &oracle::Agents, check_stdout: &str) -> Result<usize, String> {
    let v: Value =
        serde_json::from_str(check_stdout).map_err(|e| format!("check output is not JSON: {e}"))?;
    let mut checked = 0;
    for f in v["findings"].as_array().into_iter().flatten() {
        // Witness rules index the first agent's ruleset; every agent listed must decide
        // each witness with the claimed action.
        let names: Vec<&str> = f["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (k, name) in names.iter().enumerate() {
            let Some(agent) = expected.get(*name) else {
                continue;
            };
            for w in f["witnesses"].as_array().into_iter().flatten() {
                let (perm, input) = (
                    w["permission"].as_str().unwrap_or(""),
                    w["input"].as_str().unwrap_or(""),
                );
                let (rule, action) = oracle_decide(&agent.rules, perm, input);
                let claimed_rule = w["rule"].as_u64().map(|r| r as usize);
                if w["action"].as_str() != Some(action.as_str()) || (k == 0 && claimed_rule != rule)
                {
                    return Err(format!(
                        "{} in agent {name}: {perm} {input:?} claimed {} by rule {:?}, OpenCode's ruleset gives {action} by rule {rule:?}",
                        f["id"], w["action"], claimed_rule
                    ));
                }
                checked += 1;
            }
        }
    }
    Ok(checked)
}

fn oracle_or_skip() -> Option<std::path::PathBuf> {
    match oracle::locate() {
        Located::Found(bin) => Some(bin),
        Located::Skip => None,
    }
}

struct Tally {
    passed: usize,
    failed: Vec<String>,
    notes: usize,
}

fn tally(results: Vec<(String, Outcome)>) -> Tally {
    let mut t = Tally {
        passed: 0,
        failed: Vec::new(),
        notes: 0,
    };
    for (id, o) in results {
        match o {
            Outcome::Pass => t.passed += 1,
            Outcome::PassWithNotes(_) => {
                t.passed += 1;
                t.notes += 1;
            }
            Outcome::Fail(_) => t.failed.push(id),
        }
    }
    t
}

fn finish(name: &str, seed: u64, t: Tally, started: Instant, extra: &str) {
    let summary = format!(
        "{name}: {} passed, {} failed (seed {seed}, {}{}{extra})",
        t.passed,
        t.failed.len(),
        harness::elapsed(started),
        if t.notes > 0 {
            format!(", {} with advisory notes", t.notes)
        } else {
            String::new()
        },
    );
    say(&summary);
    if !t.failed.is_empty() {
        let indices: Vec<&str> = t
            .failed
            .iter()
            .filter_map(|id| id.rsplit('-').next())
            .collect();
        panic!(
            "{summary}\nfailing cases: {}\nsaved under {}\nre-run them with \
             PERMAUDIT_CONFORMANCE_SEED={seed} PERMAUDIT_CONFORMANCE_ONLY={} cargo test --test conformance {name}",
            t.failed.join(", "),
            harness::failures_dir().display(),
            indices.join(","),
        );
    }
}

/// Print a finished case: always when it failed or carries notes, otherwise only verbose.
fn report_case(
    case: &Case,
    root: &Path,
    outcome: &Outcome,
    oracle_bin: &Path,
    outputs: &[(&str, &Run)],
    args: (&[&str], &[&str]),
    extra: &str,
) {
    match outcome {
        Outcome::Fail(why) => {
            let report = format!("{}{extra}{why}", harness::describe(case, root));
            let dir = harness::save_failure(case, &report, outputs, oracle_bin, args.0, args.1);
            say(&format!(
                "\n======== FAILED {} ========\n{report}saved: {}\n",
                case.id,
                dir.display()
            ));
        }
        Outcome::PassWithNotes(notes) => {
            say(&format!("note {}: {}", case.id, notes.join("; ")));
        }
        Outcome::Pass => {
            if harness::verbose() {
                say(&format!(
                    "\n-------- ok {} --------\n{}{extra}",
                    case.id,
                    harness::describe(case, root)
                ));
            }
        }
    }
}

/// Per-agent rule counts, or the refusal, for verbose output.
fn verdict_summary(run: &Run) -> String {
    match oracle::verdict(run) {
        Ok(Verdict::Agents(a)) => {
            let mut s = String::from("  oracle: accepted;");
            for (name, agent) in &a {
                s.push_str(&format!(" {name}({}):{}", agent.mode, agent.rules.len()));
            }
            s.push('\n');
            if harness::verbose() {
                if let Some(build) = a.get("build") {
                    for (i, r) in build.rules.iter().enumerate() {
                        s.push_str(&format!("    build[{i}] {}\n", r.show()));
                    }
                }
            }
            s
        }
        Ok(Verdict::Refused(r)) => format!("  oracle: REFUSED at {} {:?}\n", r.file, r.syntax_at),
        Ok(Verdict::Crashed(m)) => {
            format!("  oracle: CRASHED {}\n", m.lines().last().unwrap_or(""))
        }
        Err(e) => format!("  oracle: unusable run: {e}\n"),
    }
}

#[derive(Default)]
struct Kinds {
    accepted: usize,
    refused: usize,
    crashed: usize,
    witnesses: usize,
}

/// One seeded tree: `agent list --pure` of `bin` against `permaudit [profile] rules`, and
/// every `check` witness re-decided over OpenCode's own rulesets.
fn ruleset_case(
    bin: &Path,
    scratch: &Scratch,
    kinds: &std::sync::Mutex<Kinds>,
    seed: u64,
    i: u64,
    profile: &[&str],
) -> (String, Outcome) {
    let case = cases::generate(seed, i);
    let root = scratch.case_root(&case.id);
    harness::materialize(&case, &root, true);
    let env = harness::full_env(&case, &root, &scratch.fakebin);
    let o = harness::run_oracle(bin, &case, &root, &env, ORACLE_RULES_ARGS);
    // A pristine copy at the same absolute path: see the module comment of harness.rs.
    harness::materialize(&case, &root, true);
    let rules_args: Vec<&str> = profile
        .iter()
        .chain(PERMAUDIT_RULES_ARGS)
        .copied()
        .collect();
    let p = harness::run_permaudit(&case, &root, &env, &rules_args);
    let mut outcome = harness::compare_rules(&o, &p, &root);
    // Every witness `check` reports must hold on OpenCode's own ruleset (issue 3).
    if let (Outcome::Pass | Outcome::PassWithNotes(_), Ok(Verdict::Agents(expected))) =
        (&outcome, oracle::verdict(&o))
    {
        let check_args: Vec<&str> = profile
            .iter()
            .chain(PERMAUDIT_CHECK_ARGS)
            .copied()
            .collect();
        let c = harness::run_permaudit(&case, &root, &env, &check_args);
        match witnesses_hold(&expected, &c.stdout) {
            Ok(n) => kinds.lock().unwrap().witnesses += n,
            Err(e) => {
                outcome = Outcome::Fail(format!(
                    "check witness does not hold on OpenCode's ruleset: {e}"
                ))
            }
        }
    }
    {
        let mut k = kinds.lock().unwrap();
        match oracle::verdict(&o) {
            Ok(Verdict::Agents(_)) => k.accepted += 1,
            Ok(Verdict::Refused(_)) => k.refused += 1,
            Ok(Verdict::Crashed(_)) => k.crashed += 1,
            Err(_) => {}
        }
    }
    report_case(
        &case,
        &root,
        &outcome,
        bin,
        &[("oracle", &o), ("permaudit", &p)],
        (ORACLE_RULES_ARGS, &rules_args),
        &verdict_summary(&o),
    );
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
    (case.id, outcome)
}

fn kinds_summary(k: Kinds) -> String {
    format!(
        "; OpenCode accepted {}, refused {}, crashed on {}; {} check witnesses hold on OpenCode's rulesets",
        k.accepted, k.refused, k.crashed, k.witnesses
    )
}

#[test]
fn agent_rulesets_match_opencode() {
    let Some(bin) = oracle_or_skip() else {
        return;
    };
    let seed = harness::seed();
    let indices = harness::indices("PERMAUDIT_CONFORMANCE_CASES", 60);
    harness::clear_failures(false);
    let scratch = Scratch::new();
    let started = Instant::now();
    let kinds = std::sync::Mutex::new(Kinds::default());
    let results = harness::parallel(indices, |i| {
        ruleset_case(&bin, &scratch, &kinds, seed, i, &[])
    });
    let extra = kinds_summary(kinds.into_inner().unwrap());
    finish(
        "agent_rulesets_match_opencode",
        seed,
        tally(results),
        started,
        &extra,
    );
}

/// The profile of each other release (`--opencode-version`): a seeded sample per profile,
/// against that profile's representative release (its newest verified one), installed by
/// `scripts/install-oracle.sh VERSION`. PERMAUDIT_PROFILE_VERSIONS (comma-separated; default
/// every representative but 1.18.34, which the full suite above covers) and
/// PERMAUDIT_PROFILE_CASES (per release, default 6) choose the sample; the case indices
/// differ per release (from 100,000 on), so the releases see different trees.
#[test]
fn agent_rulesets_match_each_profile() {
    let versions: Vec<String> = match std::env::var("PERMAUDIT_PROFILE_VERSIONS") {
        Ok(v) => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Err(_) => permaudit::profile::Profile::representatives()
            .into_iter()
            .filter(|v| *v != permaudit::profile::DEFAULT)
            .map(|v| v.to_string())
            .collect(),
    };
    let per = std::env::var("PERMAUDIT_PROFILE_CASES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(6);
    let seed = harness::seed();
    let scratch = Scratch::new();
    let started = Instant::now();
    let kinds = std::sync::Mutex::new(Kinds::default());
    let mut work = Vec::new();
    for (k, v) in versions.iter().enumerate() {
        let bin = match oracle::locate_version(v) {
            Located::Found(bin) => bin,
            // Skipped with one printed line, or failed under CI (`tier`).
            Located::Skip => continue,
        };
        let base = 100_000 + k as u64 * 1_000;
        work.extend((0..per).map(|i| (v.clone(), bin.clone(), base + i)));
    }
    let results = harness::parallel(work, |(v, bin, i)| {
        let (id, outcome) =
            ruleset_case(&bin, &scratch, &kinds, seed, i, &["--opencode-version", &v]);
        (format!("{v}:{id}"), outcome)
    });
    let extra = format!(
        "; releases {}{}",
        versions.join(" "),
        kinds_summary(kinds.into_inner().unwrap())
    );
    finish(
        "agent_rulesets_match_each_profile",
        seed,
        tally(results),
        started,
        &extra,
    );
}

#[test]
fn wildcard_decisions_match_opencode() {
    let Some(bin) = oracle_or_skip() else {
        return;
    };
    let seed = harness::seed();
    let indices = harness::indices("PERMAUDIT_CONFORMANCE_GLOB_CASES", 30);
    harness::clear_failures(true);
    let scratch = Scratch::new();
    let started = Instant::now();
    let results = harness::parallel(indices, |i| {
        let gc = cases::generate_glob(seed, i);
        let case = &gc.case;
        let root = scratch.case_root(&case.id);
        harness::materialize(case, &root, true);
        let env = harness::full_env(case, &root, &scratch.fakebin);
        let subject = harness::resolve_home(&gc.subject, &root);
        let params = serde_json::json!({ "pattern": subject }).to_string();
        let oargs = [
            "debug", "agent", "build", "--pure", "--tool", "glob", "--params", &params,
        ];
        let o = harness::run_oracle(&bin, case, &root, &env, &oargs);
        harness::materialize(case, &root, true);
        let pargs = [
            "explain", "--agent", "build", "--format", "json", "--", "glob", &subject,
        ];
        let p = harness::run_permaudit(case, &root, &env, &pargs);
        let outcome = compare_glob(&o, &p, &gc.pattern, &subject);
        report_case(
            case,
            &root,
            &outcome,
            &bin,
            &[("oracle", &o), ("permaudit", &p)],
            (&oargs, &pargs),
            "",
        );
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
        (case.id.clone(), outcome)
    });
    finish(
        "wildcard_decisions_match_opencode",
        seed,
        tally(results),
        started,
        "",
    );
}

/// The oracle's glob call is denied iff the pattern matched; permaudit's `explain` line for
/// agent build must say `deny` then, and `allow` otherwise (nothing else can apply: the
/// built-in `* * allow` precedes the two glob rules).
fn compare_glob(o: &Run, p: &Run, pattern: &str, subject: &str) -> Outcome {
    let probe = format!("pattern {pattern:?} vs input {subject:?}");
    let Some(denied) = oracle::glob_denied(o) else {
        return Outcome::Fail(format!(
            "ORACLE RUN UNUSABLE for {probe} (exit {:?}):\n{}{}",
            o.code,
            o.stdout,
            o.stderr_plain()
        ));
    };
    let want = if denied { "deny" } else { "allow" };
    let lines: Vec<Value> = p
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let line = lines.iter().find(|v| {
        v.get("agent").and_then(Value::as_str) == Some("build")
            && v.get("permission").and_then(Value::as_str) == Some("glob")
    });
    let Some(line) = line else {
        return Outcome::Fail(format!(
            "{probe}: OpenCode says {want}; permaudit printed no JSON line for agent build \
             (exit {:?})\n--- stdout\n{}--- stderr\n{}",
            p.code, p.stdout, p.stderr
        ));
    };
    let got = line.get("action").cloned().unwrap_or(Value::Null);
    let input_ok = line.get("input").and_then(Value::as_str) == Some(subject);
    if got == want && input_ok {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "{probe}: OpenCode says {want} ({}), permaudit says {got}{}\n    permaudit line: {line}\n",
            if denied {
                "the pattern matched"
            } else {
                "the pattern did not match"
            },
            if input_ok {
                ""
            } else {
                " (and its `input` field is not the probe input)"
            },
        ))
    }
}

/// `cargo test --test conformance preview -- --ignored`: print the generated cases (no
/// oracle, no permaudit), to see what a seed covers.
#[test]
#[ignore]
fn preview_generated_cases() {
    let seed = harness::seed();
    let root = Path::new("@ROOT@");
    for i in harness::indices("PERMAUDIT_CONFORMANCE_CASES", 60) {
        say(&harness::describe(&cases::generate(seed, i), root));
    }
    for i in harness::indices("PERMAUDIT_CONFORMANCE_GLOB_CASES", 30) {
        let g = cases::generate_glob(seed, i);
        say(&format!("{}: {}", g.case.id, g.case.notes.join("; ")));
    }
}

// ---------------------------------------------------------------------------------------------
// The harness itself (no oracle needed): a misparsed oracle output would make the suite
// vacuous, so the parsers are pinned to text captured from 1.18.34.

#[test]
fn harness_parses_agent_list_output() {
    let text = "build (primary)\n  [\n  {\n    \"permission\": \"*\",\n    \"action\": \"allow\",\n    \
                \"pattern\": \"*\"\n  },\n  {\n    \"permission\": \"edit\",\n    \"pattern\": \"x\",\n    \
                \"action\": 42\n  }\n]\nnested/md2 (all)\n  [\n  {\n    \"permission\": \"bash\",\n    \
                \"pattern\": \"git *\",\n    \"action\": \"ask\"\n  }\n]\n";
    let agents = oracle::parse_agent_list(text).unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents["build"].mode, "primary");
    assert_eq!(agents["build"].rules[1].action, Value::from(42));
    assert_eq!(agents["nested/md2"].mode, "all");
    assert_eq!(agents["nested/md2"].rules[0].pattern, Value::from("git *"));
    assert!(oracle::parse_agent_list("garbage\n").is_err());
    // An `agent` key that begins with a space is listed as configured (d-oit/do-codeguardian).
    let spaced = oracle::parse_agent_list(" beginner (all)\n[]\nbuild (primary)\n[]\n").unwrap();
    assert_eq!(spaced[" beginner"].mode, "all");
    assert!(spaced[" beginner"].rules.is_empty());
    assert_eq!(spaced["build"].mode, "primary");
}

#[test]
fn harness_parses_refusals() {
    let schema = "\u{1b}[91m\u{1b}[1mError: \u{1b}[0mConfiguration is invalid at /t/w/proj/opencode.json\n\
                  ↳ Expected PermissionActionConfig, got \"ALLOW\" permission.bash\n";
    let r = oracle::parse_refusal(&oracle::strip_ansi(schema)).unwrap();
    assert_eq!(r.file, "/t/w/proj/opencode.json");
    assert_eq!(r.syntax_at, None);
    let syntax = "Error: Config file at /t/w/proj/opencode.json is not valid JSON(C): \n\
                  --- JSONC Input ---\n{permission:1}\n--- Errors ---\n\
                  InvalidSymbol at line 1, column 2\n   Line 1: {permission:1}\n--- End ---\n";
    let r = oracle::parse_refusal(syntax).unwrap();
    assert_eq!(r.file, "/t/w/proj/opencode.json");
    assert_eq!(r.syntax_at, Some((1, 2)));
    let content = "Error: Configuration is invalid at OPENCODE_CONFIG_CONTENT\n↳ Expected …\n";
    assert_eq!(
        oracle::parse_refusal(content).unwrap().file,
        "OPENCODE_CONFIG_CONTENT"
    );
}

#[test]
fn harness_finds_locations() {
    let text = "error: bad\n   ╭─[/t/w/proj/opencode.json:3:14]\n  x.jsonc:1:2: oops\n";
    let locs = harness::locations(text);
    assert!(locs.contains(&("/t/w/proj/opencode.json".to_string(), 3, 14)));
    assert!(locs.contains(&("x.jsonc".to_string(), 1, 2)));
}

#[test]
fn generator_is_deterministic() {
    let root = Path::new("/r");
    for i in 0..20 {
        let a = harness::describe(&cases::generate(7, i), root);
        let b = harness::describe(&cases::generate(7, i), root);
        assert_eq!(a, b);
        assert_eq!(
            cases::generate_glob(7, i).subject,
            cases::generate_glob(7, i).subject
        );
    }
}
