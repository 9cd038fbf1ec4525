//! `check --fix`, `--unsafe-fixes` and `--diff` end to end.
//!
//! - `fixtures/fix/<case>/`: a project before fixing; its snapshot
//!   (`fixtures/fix/snapshots/<case>.snap`) shows the `--diff` of the safe fixes, the
//!   `--diff --unsafe-fixes` and what `check` reports after `--fix --unsafe-fixes`.
//! - Every fixture and every real config (`tests/real/`) is fixed on a copy; OpenCode itself
//!   (`opencode agent list --pure`) must accept the fixed config and decide every sampled
//!   input as before (safe fixes), or only more strictly (narrowing ones); a second `--fix`
//!   changes nothing; `--fix` writes exactly what `--diff` showed.

mod check_support;
mod support;

use check_support::Tree;
use permaudit::agents::evaluate;
use permaudit::diff::Class;
use permaudit::glob::Platform;
use permaudit::model::{Action, Rule};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    check_support::entries_of("fixtures/fix")
}

fn real() -> Vec<PathBuf> {
    check_support::real_entries()
}

/// The shared judged corpus (`tests/corpus/`, vendored by `scripts/vendor-corpus.py`): the
/// cases OpenCode accepts, each with the directory OpenCode starts in (`meta.json`'s `cwd`).
fn corpus() -> Vec<(PathBuf, String)> {
    check_support::entries_of("tests/corpus")
        .into_iter()
        .filter(|d| {
            let oracle: Option<serde_json::Value> = std::fs::read_to_string(d.join("oracle.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
            oracle.is_some_and(|o| o.get("ok") != Some(&serde_json::Value::Bool(false)))
        })
        .map(|d| {
            let start = check_support::start_of(&d);
            (d, start)
        })
        .collect()
}

/// Every file under `dir` (relative path → bytes).
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != ".git" {
                    walk(base, &p, out);
                }
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The unified diff of two states of a tree, as `--diff` prints it.
fn unified(before: &BTreeMap<PathBuf, Vec<u8>>, after: &BTreeMap<PathBuf, Vec<u8>>) -> String {
    let mut out = String::new();
    for (p, b) in before {
        let a = &after[p];
        if a != b {
            let (b, a) = (String::from_utf8_lossy(b), String::from_utf8_lossy(a));
            // As `--diff` names them: relative to the project, else by the whole path.
            let name = match p.strip_prefix("project") {
                Ok(rel) => rel.display().to_string(),
                Err(_) => format!("$ROOT/{}", p.display()),
            };
            out.push_str(
                &similar::TextDiff::from_lines(b.as_ref(), a.as_ref())
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{name}"), &format!("b/{name}"))
                    .to_string(),
            );
        }
    }
    out
}

#[test]
fn fixtures_fix_as_snapshotted() {
    let list = fixtures();
    assert!(list.len() >= 4, "fix fixtures: {}", list.len());
    let mut settings = insta::Settings::clone_current();
    settings
        .set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fix/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for dir in &list {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            let t = Tree::from_fixture(dir);
            let before = files(t.root());
            let safe = t.run(&["check", "--diff"]);
            let narrowing = t.run(&["check", "--diff", "--unsafe-fixes"]);
            assert_eq!(files(t.root()), before, "{name}: --diff wrote something");
            for (what, run) in [("--diff", &safe), ("--diff --unsafe-fixes", &narrowing)] {
                let expect = if run.stdout.is_empty() { 0 } else { 1 };
                assert_eq!(run.code, expect, "{name} {what}: {}", run.stderr);
            }
            let fixed = t.run(&["check", "--fix", "--unsafe-fixes", "--format", "concise"]);
            assert!(fixed.code == 0 || fixed.code == 1, "{name}: {}", fixed.stderr);
            let after = files(t.root());
            assert_eq!(
                unified(&before, &after),
                narrowing.stdout,
                "{name}: --fix --unsafe-fixes wrote something else than --diff showed"
            );
            let again = t.run(&["check", "--diff", "--unsafe-fixes"]);
            assert_eq!(
                (again.code, again.stdout.as_str()),
                (0, ""),
                "{name}: a second fix changes more"
            );
            let text = format!(
                "$ permaudit check --diff\n{}{}\n$ permaudit check --diff --unsafe-fixes\n{}{}\n$ permaudit check --fix --unsafe-fixes --format concise\n{}{}",
                safe.stdout, safe.stderr, narrowing.stdout, narrowing.stderr, fixed.stdout, fixed.stderr
            );
            insta::assert_snapshot!(name, text);
        }
    });
}

/// A redundant rule (a safe fix) and a deny an allow after it overrides (a narrowing one).
fn two_fixable() -> Tree {
    Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"bash": {"git status*": "allow", "git *": "allow", "rm -rf *": "deny", "rm *": "allow"}}}"#,
    )
}

/// `check` marks the findings it can fix and counts them.
#[test]
fn human_output_marks_fixable_findings() {
    let t = two_fixable();
    let run = t.run(&["check"]);
    assert!(
        run.stdout
            .contains("fix: remove the redundant rule (safe: `--fix`)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "fix: move the deny after the rule that overrides it (narrowing: `--fix --unsafe-fixes`)"
        ),
        "{}",
        run.stdout
    );
    // The count comes before the summary, which stays the last line.
    assert!(
        run.stdout.ends_with(
            "1 fixable with `--fix` (1 more with `--fix --unsafe-fixes`)\n1 error, 1 info\n"
        ),
        "{}",
        run.stdout
    );
}

/// `check --fix --format json` lists what it applied (kind, class, place, the findings it
/// repaired) and the files it wrote, and counts what `check` said was fixable.
#[test]
fn fix_json_lists_what_was_applied() {
    let t = two_fixable();
    let before = t.run(&["check"]);
    assert!(
        before
            .stdout
            .contains("1 fixable with `--fix` (1 more with `--fix --unsafe-fixes`)"),
        "{}",
        before.stdout
    );
    let run = t.run(&["check", "--fix", "--unsafe-fixes", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    let fixed = &v["fixed"];
    let applied = fixed["applied"].as_array().unwrap();
    let mut kinds: Vec<(&str, &str, &str)> = applied
        .iter()
        .map(|a| {
            (
                a["id"].as_str().unwrap(),
                a["safety"].as_str().unwrap(),
                a["source"]["path"].as_str().unwrap(),
            )
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            ("dead-rule", "safe", "opencode.json"),
            ("shadowed-deny", "narrowing", "opencode.json"),
        ],
        "{fixed}"
    );
    // As many findings repaired as `check` counted fixable, one each.
    let repaired: u64 = applied
        .iter()
        .map(|a| a["findings"].as_u64().unwrap())
        .sum();
    assert_eq!(repaired, 2, "{fixed}");
    assert_eq!(fixed["files"], serde_json::json!(["opencode.json"]));
    assert_eq!(fixed["unsafe_available"], 0);
    // The findings listed are those left: neither repaired kind.
    for id in ["dead-rule", "shadowed-deny"] {
        assert!(check_support::findings_of(&v, id).is_empty(), "{id}: {v}");
    }
    // Safe fixes only: the narrowing one is counted as left for `--unsafe-fixes`.
    let t = two_fixable();
    let v = t.run(&["check", "--fix", "--format", "json"]).json();
    assert_eq!(v["fixed"]["applied"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["fixed"]["unsafe_available"], 1, "{v}");
    // Without `--fix` there is no `fixed`.
    assert!(
        t.run(&["check", "--format", "json"])
            .json()
            .get("fixed")
            .is_none()
    );
}

/// A fix is never offered when the edit would change a decision it may not change: the
/// `tools` entry that a `permission` key of another file replaces stays.
#[test]
fn unproven_fixes_are_not_offered() {
    // The tools map translated in place would come after the global `bash` rules, whose
    // `*` then no longer overrides it: a decision would change, so it is not offered.
    let t = Tree::new()
        .file(
            "home/.config/opencode/opencode.json",
            r#"{"permission": {"*": "allow"}}"#,
        )
        .file("project/opencode.json", r#"{"tools": {"bash": false}}"#);
    let run = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    let findings = t.run(&["check", "--format", "json"]).json();
    assert_eq!(
        check_support::findings_of(&findings, "legacy-tools").len(),
        1
    );
    // Alone, a map `check` reports is translated.
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"tools": {"webfetch": true, "bash": false}}"#,
    );
    let run = t.run(&["check", "--diff"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("+{\"permission\": {\"webfetch\": \"allow\", \"bash\": \"deny\"}}"),
        "{}",
        run.stdout
    );
    // Where another finding speaks for the place, `check` shows no legacy-tools finding,
    // marks no fix and `--fix` changes nothing: it fixes only what `check` shows.
    let t = Tree::new().file("project/opencode.json", r#"{"tools": {"bash": false}}"#);
    let shown = t.run(&["check", "--format", "json"]).json();
    assert!(check_support::findings_of(&shown, "legacy-tools").is_empty());
    let run = t.run(&["check", "--diff"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------
// The oracle

/// OpenCode's rulesets for the tree's project, as permaudit rules; `Err` with OpenCode's
/// words when it refuses the config.
fn opencode_rules(
    bin: &Path,
    t: &Tree,
    start: &str,
    fakebin: &Path,
    env: &[(String, String)],
) -> Result<BTreeMap<String, Vec<Rule>>, String> {
    use support::oracle;
    let mut vars = support::harness::isolated_env(t.root(), fakebin);
    vars.extend(env.iter().cloned());
    let run = support::harness::with_slot(|| {
        oracle::run(
            bin,
            &t.root().join(start),
            &vars,
            &["agent", "list", "--pure"],
        )
    });
    match oracle::verdict(&run) {
        Ok(oracle::Verdict::Agents(a)) => Ok(a
            .into_iter()
            .map(|(name, a)| {
                let rules = a
                    .rules
                    .iter()
                    .map(|r| Rule {
                        permission: r.permission.as_str().unwrap_or_default().to_string(),
                        pattern: r.pattern.as_str().unwrap_or_default().to_string(),
                        action: Action::from_json(&r.action),
                        form: permaudit::model::Form::Object,
                        layer: permaudit::model::Layer::Project,
                        loc: None,
                        builtin: None,
                    })
                    .collect();
                (name, rules)
            })
            .collect()),
        other => Err(format!("{other:?}")),
    }
}

/// Permissions and inputs to sample: every pattern of either side filled several ways.
fn samples<'a>(rules: impl Iterator<Item = &'a Rule>) -> (Vec<String>, Vec<String>) {
    let mut perms: Vec<String> = ["bash", "edit", "read", "webfetch", "task", "zzz"]
        .map(String::from)
        .to_vec();
    let mut inputs: Vec<String> = ["", "a", "src/a.ts", "git push", ".env", "rm -rf /"]
        .map(String::from)
        .to_vec();
    for r in rules {
        for fill in ["", "a", "x/a", "a b"] {
            let f = |g: &str| g.replace("**", "*").replace('*', fill).replace('?', "q");
            inputs.push(f(&r.pattern));
            perms.push(f(&r.permission));
        }
    }
    perms.sort();
    perms.dedup();
    inputs.sort();
    inputs.dedup();
    (perms, inputs)
}

/// Every sampled decision of `after` equals `before`'s (`narrowing`: or is stricter); the
/// first difference otherwise.
fn compare(
    before: &BTreeMap<String, Vec<Rule>>,
    after: &BTreeMap<String, Vec<Rule>>,
    narrowing: bool,
) -> Result<usize, String> {
    if before.keys().ne(after.keys()) {
        return Err(format!(
            "agents differ: {:?} vs {:?}",
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>()
        ));
    }
    let mut n = 0;
    for (agent, b) in before {
        let a = &after[agent];
        let (perms, inputs) = samples(b.iter().chain(a));
        for p in &perms {
            for s in &inputs {
                n += 1;
                let (x, y) = (
                    evaluate(b, p, s, Platform::Unix).effect,
                    evaluate(a, p, s, Platform::Unix).effect,
                );
                if x != y && !(narrowing && Class::of(x, y) == Class::Narrowed) {
                    return Err(format!("agent {agent}: {p} {s:?}: {x} before, {y} after"));
                }
            }
        }
    }
    Ok(n)
}

fn env_of(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join("env"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Decisions sampled alike, and the change in findings per kind.
type Fixed = (usize, BTreeMap<String, i64>);

/// Fix a copy of `dir`; OpenCode's verdict on both sides. `Ok(None)` when nothing was fixed.
fn fix_against_opencode(
    bin: &Path,
    fakebin: &Path,
    dir: &Path,
    start: &str,
    narrowing: bool,
) -> Result<Option<Fixed>, String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let t = Tree::from_fixture(dir);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(t.project())
        .output()
        .unwrap();
    assert!(git.status.success(), "git init");
    let env = env_of(dir);
    let before_files = files(t.root());
    let kinds = |run: &check_support::Output| {
        let mut m: BTreeMap<String, i64> = BTreeMap::new();
        for f in run.json()["findings"].as_array().into_iter().flatten() {
            *m.entry(f["id"].as_str().unwrap_or("").to_string())
                .or_default() += 1;
        }
        m
    };
    let pre = t.run_in(start, &["check", "--format", "json", "--fail-on", "never"]);
    if pre.code == 2 {
        return Ok(None);
    }
    let mut diff_args = vec!["check", "--diff"];
    if narrowing {
        diff_args.push("--unsafe-fixes");
    }
    let shown = t.run_in(start, &diff_args);
    let mut args = vec!["check", "--fix", "--format", "json", "--fail-on", "never"];
    if narrowing {
        args.push("--unsafe-fixes");
    }
    let post = t.run_in(start, &args);
    if post.code != 0 {
        return Err(format!("{name}: --fix exit {}: {}", post.code, post.stderr));
    }
    let after_files = files(t.root());
    if unified(&before_files, &after_files) != shown.stdout {
        return Err(format!(
            "{name}: --fix wrote something else than --diff showed:\n--diff:\n{}\nwritten:\n{}",
            shown.stdout,
            unified(&before_files, &after_files)
        ));
    }
    if after_files == before_files {
        return Ok(None);
    }
    let again = t.run_in(start, &diff_args);
    if again.code != 0 || !again.stdout.is_empty() {
        return Err(format!(
            "{name}: a second --fix changes more:\n{}",
            again.stdout
        ));
    }
    let after = opencode_rules(bin, &t, start, fakebin, &env)
        .map_err(|e| format!("{name}: OpenCode refuses the fixed config: {e}"))?;
    // Back to the original files for OpenCode's view of the start.
    for (p, b) in &before_files {
        std::fs::write(t.root().join(p), b).unwrap();
    }
    let before = opencode_rules(bin, &t, start, fakebin, &env)
        .map_err(|e| format!("{name}: OpenCode refuses the original config: {e}"))?;
    let n = compare(&before, &after, narrowing).map_err(|e| {
        format!(
            "{name}: the fix changed a decision: {e}\n{}",
            unified(&before_files, &after_files)
        )
    })?;
    let (b, a) = (kinds(&pre), kinds(&post));
    let mut removed = BTreeMap::new();
    for (k, v) in &b {
        let d = v - a.get(k).copied().unwrap_or(0);
        if d != 0 {
            removed.insert(k.clone(), d);
        }
    }
    for (k, v) in &a {
        if !b.contains_key(k) {
            removed.insert(k.clone(), -v);
        }
    }
    Ok(Some((n, removed)))
}

/// `--fix` and `--fix --unsafe-fixes` on every real config (`tests/real/`), every accepted
/// case of the shared judged corpus (`tests/corpus/`) and every fixture: OpenCode accepts the
/// result; safe fixes decide every sampled input alike, narrowing ones only more strictly;
/// `--diff` showed exactly what was written; a second run changes nothing.
#[test]
fn fixes_decide_as_before_in_opencode() {
    use support::oracle;
    let bin = match oracle::locate() {
        oracle::Located::Found(b) => b,
        oracle::Located::Skip => return,
    };
    let scratch = support::harness::Scratch::new();
    let corpus = corpus();
    assert!(
        corpus.len() >= 80,
        "tests/corpus: {} accepted cases",
        corpus.len()
    );
    let mut cases: Vec<(PathBuf, String)> = real()
        .into_iter()
        .chain(fixtures())
        .map(|d| (d, "project".to_string()))
        .collect();
    cases.extend(corpus);
    let cases: Vec<(PathBuf, String, bool)> = cases
        .into_iter()
        .flat_map(|(d, start)| [(d.clone(), start.clone(), false), (d, start, true)])
        .collect();
    let results = support::harness::parallel(cases, |(dir, start, narrowing)| {
        (
            dir.clone(),
            narrowing,
            fix_against_opencode(&bin, &scratch.fakebin, &dir, &start, narrowing),
        )
    });
    let mut failures = Vec::new();
    // (set, mode) → findings removed by kind
    let mut total: BTreeMap<(String, &str), BTreeMap<String, i64>> = BTreeMap::new();
    let (mut fixed, mut samples) = (0, 0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, narrowing, r) in results {
        match r {
            Err(e) => failures.push(e),
            Ok(Some((n, removed))) => {
                fixed += 1;
                samples += n;
                let set = dir
                    .strip_prefix(root)
                    .ok()
                    .and_then(|d| d.parent())
                    .map(|d| d.display().to_string())
                    .unwrap_or_default();
                let mode = if narrowing { "--unsafe-fixes" } else { "--fix" };
                let t = total.entry((set, mode)).or_default();
                for (k, v) in removed {
                    *t.entry(k).or_default() += v;
                }
            }
            Ok(None) => {}
        }
    }
    eprintln!("fixed {fixed} (config, mode) pairs, {samples} sampled decisions as required");
    for ((set, mode), kinds) in &total {
        eprintln!("findings removed on {set} by {mode}: {kinds:?}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(fixed >= 10, "only {fixed} configs had a fix");
}

/// A file a report names (`opencode.json`, `.opencode/agents/x.md`, `~/.config/…`), in
/// the tree.
fn named(t: &Tree, name: &str) -> PathBuf {
    if let Some(rest) = name.strip_prefix("~/") {
        t.root().join("home").join(rest)
    } else if let Some(rest) = name.strip_prefix("$ROOT/") {
        t.root().join(rest)
    } else {
        t.project().join(name)
    }
}

/// The warnings and errors of a report, by kind and file.
fn serious_places(report: &serde_json::Value) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        if f["level"] != "warning" && f["level"] != "error" {
            continue;
        }
        let key = (
            f["id"].as_str().unwrap_or_default().to_string(),
            f["source"]["path"].as_str().unwrap_or_default().to_string(),
        );
        *out.entry(key).or_default() += 1;
    }
    out
}

/// Every suggestion `check` prints for one config, applied alone to a copy: OpenCode accepts
/// the result and decides every sampled input as before or more strictly (every suggestion
/// so far only narrows); the finding it was for is gone; no kind gains a warning or error
/// in any file. `Ok(n)`: the suggestions tried.
fn suggestions_against_opencode(
    bin: &Path,
    fakebin: &Path,
    dir: &Path,
    start: &str,
) -> Result<usize, String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let t = Tree::from_fixture(dir);
    let env = env_of(dir);
    let report = t.run_in(start, &["check", "--format", "json", "--fail-on", "never"]);
    if report.code == 2 {
        return Ok(0);
    }
    let report = report.json();
    let before_places = serious_places(&report);
    let mut tried = 0;
    let mut before_rules: Option<BTreeMap<String, Vec<Rule>>> = None;
    for f in report["findings"].as_array().into_iter().flatten() {
        for s in f["suggestions"].as_array().into_iter().flatten() {
            tried += 1;
            let what = format!("{name}: {} at {}: {}", f["id"], f["source"], s["title"]);
            // The same tree throughout (OpenCode's paths name it), its file put back after.
            let u = &t;
            let path = named(u, s["file"].as_str().unwrap_or_default());
            let original = std::fs::read_to_string(&path)
                .map_err(|e| format!("{what}: {} unreadable: {e}", path.display()))?;
            let text = check_support::apply_suggestion(&original, s);
            let edits: Vec<(usize, usize, String)> = s["edits"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    (
                        e["start"].as_u64().unwrap_or_default() as usize,
                        e["end"].as_u64().unwrap_or_default() as usize,
                        e["new_text"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect();
            // Lines the edits add before the finding's line move it down.
            let at_line = f["source"]["line"].as_u64().unwrap_or_default() as usize;
            let mut moved = at_line;
            for (start, end, new) in &edits {
                let line_of =
                    |o: usize| original[..o.min(original.len())].matches('\n').count() + 1;
                if f["source"]["path"] == s["file"] && line_of(*end) < at_line {
                    moved += new.matches('\n').count();
                    moved -= original[*start..*end].matches('\n').count();
                }
            }
            std::fs::write(&path, &text).unwrap();
            let after = u.run_in(start, &["check", "--format", "json", "--fail-on", "never"]);
            if after.code == 2 {
                return Err(format!(
                    "{what}: permaudit refuses the result: {}",
                    after.stderr
                ));
            }
            let after = after.json();
            // Counted: another finding of the kind may stand at the same rule (`cat *` opens
            // both `cat x > FILE` and `cat .env`); this one is gone when one fewer is left.
            let at = |report: &serde_json::Value, line: u64| {
                report["findings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|g| {
                        g["id"] == f["id"]
                            && g["source"]["path"] == f["source"]["path"]
                            && g["source"]["line"].as_u64() == Some(line)
                    })
                    .count()
            };
            let still = at(&after, moved as u64) >= at(&report, at_line as u64);
            if still {
                return Err(format!("{what}: the finding is still reported:\n{text}"));
            }
            for (key, n) in serious_places(&after) {
                // A deny the suggestion makes live (or writes into an allow-all block) is
                // walked around as every deny of a deny-list is: criterion (b) does not
                // hold that kind against it (`fix::suggest`, docs/checks.md).
                if key.0 == "deny-walkaround" {
                    continue;
                }
                if n > before_places.get(&key).copied().unwrap_or(0) {
                    return Err(format!("{what}: a new {key:?} warning or error:\n{text}"));
                }
            }
            let b = match &before_rules {
                Some(b) => b,
                None => {
                    // OpenCode's view of the original, then the edit back in place.
                    std::fs::write(&path, &original).unwrap();
                    let b = opencode_rules(bin, u, start, fakebin, &env)
                        .map_err(|e| format!("{name}: OpenCode refuses the original: {e}"))?;
                    std::fs::write(&path, &text).unwrap();
                    before_rules.insert(b)
                }
            };
            let a = opencode_rules(bin, u, start, fakebin, &env)
                .map_err(|e| format!("{what}: OpenCode refuses the result: {e}\n{text}"))?;
            compare(b, &a, true).map_err(|e| format!("{what}: {e}\n{text}"))?;
            std::fs::write(&path, &original).unwrap();
        }
    }
    Ok(tried)
}

/// Every suggestion `check` proves on a real config (`tests/real/`) or an accepted case of
/// the judged corpus (`tests/corpus/`), applied as printed, holds in OpenCode itself
/// (issue 44: help that fits the config, proven on it).
#[test]
fn suggestions_hold_in_opencode() {
    use support::oracle;
    let bin = match oracle::locate() {
        oracle::Located::Found(b) => b,
        oracle::Located::Skip => return,
    };
    let scratch = support::harness::Scratch::new();
    let mut cases: Vec<(PathBuf, String)> = real()
        .into_iter()
        .map(|d| (d, "project".to_string()))
        .collect();
    cases.extend(corpus());
    // PERMAUDIT_FIX_CASES="a,b": only the cases whose directory name contains one of them
    // (to re-run a failure without the whole hour).
    let only = std::env::var("PERMAUDIT_FIX_CASES").ok();
    let filtered = only.is_some();
    if let Some(only) = only {
        cases.retain(|(dir, _)| {
            let name = dir.to_string_lossy();
            only.split(',').any(|o| !o.is_empty() && name.contains(o))
        });
    }
    let results = support::harness::parallel(cases, |(dir, start)| {
        suggestions_against_opencode(&bin, &scratch.fakebin, &dir, &start)
    });
    let mut failures = Vec::new();
    let mut tried = 0;
    for r in results {
        match r {
            Ok(n) => tried += n,
            Err(e) => failures.push(e),
        }
    }
    eprintln!("{tried} suggestions applied and held");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        filtered || tried >= 20,
        "only {tried} suggestions on the corpus"
    );
}
