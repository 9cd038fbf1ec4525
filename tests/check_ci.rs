//! Keeping `check` on in CI (docs/configuration.md): permaudit's
//! settings file, inline `permaudit-ignore` comments, the baseline, `--project-only`, and
//! the output forms, end to end on throw-away projects.
//!
//! Snapshots of each output form are in `fixtures/ci/*.txt` (`PERMAUDIT_BLESS=1` rewrites
//! them).

mod check_support;

use check_support::{Output, Tree};
use serde_json::Value;
use std::path::Path;

/// A shadowed deny (error), a dead rule (warning) and an `.env` edit (info), one key a line.
const CONFIG: &str = r#"{
  "permission": {
    "edit": {
      "tests/**": "deny",
      "*": "allow"
    },
    "bash": {
      "git *": "allow",
      "*": "ask"
    }
  }
}
"#;

fn project(config: &str) -> Tree {
    Tree::new().file("project/opencode.jsonc", config)
}

/// `(id, line)` of every reported finding, from the concise form.
fn reported(out: &Output) -> Vec<(String, usize)> {
    out.stdout
        .lines()
        .filter_map(|l| {
            let (place, rest) = l.split_once(": ")?;
            let line = place.split(':').nth(1)?.parse().ok()?;
            let id = rest.split_once('[')?.1.split_once(']')?.0;
            Some((id.to_string(), line))
        })
        .collect()
}

fn ids(out: &Output) -> Vec<String> {
    let mut v: Vec<String> = reported(out).into_iter().map(|(id, _)| id).collect();
    v.dedup();
    v
}

fn concise(t: &Tree, extra: &[&str]) -> Output {
    let mut args = vec!["check", "--format", "concise"];
    args.extend_from_slice(extra);
    t.run(&args)
}

// ---------------------------------------------------------------------------------------
// Settings

#[test]
fn without_settings_every_kind_is_reported_at_its_default_level() {
    let out = concise(&project(CONFIG), &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let got = reported(&out);
    for (id, line) in [
        ("shadowed-deny", 4),
        ("dead-rule", 8),
        // The shared `"*": "allow"` lets plan and explore edit: that error speaks for the
        // place (one finding per place), before its secret-readable note.
        ("read-only-agent-writes", 5),
    ] {
        assert!(
            got.contains(&(id.to_string(), line)),
            "{id}:{line}: {}",
            out.stdout
        );
    }
    assert!(
        out.stdout.contains("error[shadowed-deny]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("warning[dead-rule]"), "{}", out.stdout);
}

#[test]
fn select_ignore_and_level() {
    let with = |settings: &str| project(CONFIG).file("project/.opencode/permaudit.jsonc", settings);
    // select: only these kinds.
    let out = concise(&with(r#"{"select": ["dead-rule"]}"#), &[]);
    assert_eq!(ids(&out), ["dead-rule"], "{}", out.stdout);
    assert_eq!(out.code, 0, "a warning does not fail by default");
    // ignore: every kind but these (and it wins over select).
    let out = concise(
        &with(r#"{"select": ["dead-rule", "shadowed-deny"], "ignore": ["shadowed-deny"]}"#),
        &[],
    );
    assert_eq!(ids(&out), ["dead-rule"], "{}", out.stdout);
    let out = concise(&with(r#"{"ignore": ["shadowed-deny"]}"#), &[]);
    assert!(!out.stdout.contains("shadowed-deny"), "{}", out.stdout);
    assert!(out.stdout.contains("[dead-rule]"), "{}", out.stdout);
    // level: a kind's level replaced, and the exit code follows it.
    let out = concise(
        &with(r#"{"select": ["dead-rule"], "level": {"dead-rule": "error"}}"#),
        &[],
    );
    assert!(out.stdout.contains("error[dead-rule]"), "{}", out.stdout);
    assert_eq!(out.code, 1);
    let out = concise(
        &with(r#"{"level": {"shadowed-deny": "info", "read-only-agent-writes": "info"}}"#),
        &[],
    );
    assert!(out.stdout.contains("info[shadowed-deny]"), "{}", out.stdout);
    assert_eq!(out.code, 0);
    // In JSON too.
    let v = with(r#"{"level": {"shadowed-deny": "info"}}"#)
        .run(&["check", "--format", "json"])
        .json();
    let levels: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "shadowed-deny")
        .map(|f| &f["level"])
        .collect();
    assert!(
        !levels.is_empty() && levels.iter().all(|l| *l == "info"),
        "{levels:?}"
    );
}

#[test]
fn the_summary_counts_what_the_settings_turned_off() {
    let with = |settings: &str| project(CONFIG).file("project/.opencode/permaudit.jsonc", settings);
    let all = concise(&project(CONFIG), &[]);
    let off = concise(&with(r#"{"ignore": ["dead-rule"]}"#), &[]);
    assert!(!off.stdout.contains("[dead-rule]"), "{}", off.stdout);
    assert!(
        off.stdout.contains("(1 hidden by the settings)"),
        "{}",
        off.stdout
    );
    // Nothing turned off, nothing said.
    assert!(!all.stdout.contains("hidden by"), "{}", all.stdout);
    // per-path-ignores count the same way.
    let off = concise(
        &with(r#"{"per-path-ignores": {"opencode.jsonc": ["dead-rule"]}}"#),
        &[],
    );
    assert!(
        off.stdout.contains("(1 hidden by the settings)"),
        "{}",
        off.stdout
    );
}

#[test]
fn fail_on_setting_and_the_flag_that_overrides_it() {
    let t = project(CONFIG).file(
        "project/.opencode/permaudit.jsonc",
        r#"{"ignore": ["shadowed-deny", "read-only-agent-writes"], "fail-on": "warning"}"#,
    );
    assert_eq!(t.run(&["check"]).code, 1, "dead-rule is a warning");
    assert_eq!(t.run(&["check", "--fail-on", "error"]).code, 0);
    let never = project(CONFIG).file(
        "project/.opencode/permaudit.jsonc",
        r#"{"fail-on": "never"}"#,
    );
    assert_eq!(never.run(&["check"]).code, 0);
    assert_eq!(never.run(&["check", "--fail-on", "error"]).code, 1);
}

#[test]
fn samples_and_baseline_paths_are_relative_to_the_settings_file() {
    let t = project(CONFIG)
        .file(
            "project/.opencode/permaudit.jsonc",
            r#"{"samples": "ci/samples.txt", "select": ["sample-mismatch"]}"#,
        )
        .file(
            "project/.opencode/ci/samples.txt",
            "build edit tests/a.ts => deny\n",
        );
    let out = concise(&t, &[]);
    assert_eq!(
        reported(&out),
        [("sample-mismatch".to_string(), 1)],
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.starts_with(".opencode/ci/samples.txt:1:"),
        "{}",
        out.stdout
    );
    // `--samples` wins (relative to -C).
    let t = t.file("project/mine.txt", "build edit src/a.ts => allow\n");
    assert_eq!(concise(&t, &["--samples", "mine.txt"]).code, 0);
}

#[test]
fn per_path_ignores_match_the_path_from_the_project_root() {
    // (Bash asks: with bash free, `deny-bypass` reports the switch too.)
    let agent = "---\ntools:\n  write: false\npermission:\n  bash: ask\n---\nbody\n";
    let t = project("{}")
        .file("project/.opencode/agent/legacy-a.md", agent)
        .file("project/.opencode/agent/new.md", agent);
    let out = concise(&t, &[]);
    let files: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("[legacy-tools]"))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        files,
        [".opencode/agent/legacy-a.md", ".opencode/agent/new.md"],
        "{}",
        out.stdout
    );
    let t = t.file(
        "project/.opencode/permaudit.jsonc",
        r#"{"per-path-ignores": {".opencode/agent/legacy-*": ["legacy-tools"], "*": ["dead-rule"]}}"#,
    );
    let out = concise(&t, &[]);
    assert!(
        !out.stdout.contains("legacy-a.md") && out.stdout.contains(".opencode/agent/new.md"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_config_flag_names_another_settings_file() {
    let t = project(CONFIG).file("project/ci/permaudit.jsonc", r#"{"select": ["dead-rule"]}"#);
    assert_eq!(
        ids(&concise(&t, &["--config", "ci/permaudit.jsonc"])),
        ["dead-rule"]
    );
    let out = t.run(&["check", "--config", "nope.jsonc"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("nope.jsonc"), "{}", out.stderr);
}

#[test]
fn unknown_keys_and_kinds_are_refused_with_their_place() {
    for (settings, want) in [
        (
            "{\n  \"selct\": [\"dead-rule\"]\n}",
            ".opencode/permaudit.jsonc:2:3: error: permaudit's settings: unknown key `selct`; did you mean `select`?",
        ),
        (
            "{\"ignore\": [\"dead-rul\"]}",
            ".opencode/permaudit.jsonc:1:13: error: permaudit's settings: `ignore`: no finding kind `dead-rul`; did you mean `dead-rule`?",
        ),
        (
            "{\"level\": {\"dead-rule\": \"fatal\"}}",
            ".opencode/permaudit.jsonc:1:25: error: permaudit's settings: `level`: unknown variant `fatal`",
        ),
        (
            "{\"fail-on\": \"sometimes\"}",
            ".opencode/permaudit.jsonc:1:13: error: permaudit's settings: `fail-on`: unknown variant `sometimes`",
        ),
        (
            "{\"project-only\": 1}",
            ".opencode/permaudit.jsonc:1:18: error: permaudit's settings: `project-only`: invalid type",
        ),
        (
            "{\"samples\": }",
            ".opencode/permaudit.jsonc:1:13: error: permaudit's settings: not valid JSONC",
        ),
    ] {
        let t = project(CONFIG).file("project/.opencode/permaudit.jsonc", settings);
        let out = t.run(&["check"]);
        assert_eq!(out.code, 2, "{settings}: {}", out.stderr);
        assert!(out.stderr.starts_with(want), "{settings}:\n{}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// Inline ignores

const IGNORED: &str = r#"{
  "permission": {
    "edit": {
      // permaudit-ignore[shadowed-deny]: generated fixtures, rewritten by the agent
      "tests/**": "deny",
      "src/*": "ask", // permaudit-ignore[shadowed-ask, secret-readable]
      "*": "allow" // permaudit-ignore[read-only-agent-writes]: plan may write here
    },
    "bash": {
      "git *": "allow", // permaudit-ignore[dead-rule]: git is asked like everything else, on purpose
      // permaudit-ignore[dead-rul]: a typo
      "*": "ask" // permaudit-ignore[shadowed-deny]: nothing to hide here
    }
  }
}
"#;

#[test]
fn jsonc_comments_hide_what_they_name_on_their_line_or_the_next() {
    let t = project(IGNORED);
    let out = concise(&t, &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let mut got = reported(&out);
    got.sort();
    let want: Vec<(String, usize)> = [
        // The comment on `src/*`'s line hides its shadowed-ask, not a secret-readable.
        ("ignore-without-reason", 6),
        ("unused-ignore", 6),
        ("unused-ignore", 11),
        ("unused-ignore", 12),
    ]
    .iter()
    .map(|(i, l)| (i.to_string(), *l))
    .collect();
    assert_eq!(got, want, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("no finding kind `dead-rul`; did you mean `dead-rule`?"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("(4 hidden by permaudit-ignore comments)"),
        "{}",
        out.stdout
    );
    // --no-ignore: everything, and nothing about the comments.
    let all = concise(&t, &["--no-ignore"]);
    assert_eq!(all.code, 1);
    let ids = ids(&all);
    for id in [
        "shadowed-deny",
        "shadowed-ask",
        "dead-rule",
        "read-only-agent-writes",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id}: {}", all.stdout);
    }
    assert!(!all.stdout.contains("ignore"), "{}", all.stdout);
}

#[test]
fn frontmatter_comments_work_the_same() {
    let agent = |comment: &str| {
        format!(
            "---\ndescription: reviewer\ntools:\n  {comment}\n  write: false\npermission:\n  bash: ask\n---\nReview.\n"
        )
    };
    let out = concise(
        &project("{}").file(
            "project/.opencode/agent/rev.md",
            &agent("# permaudit-ignore[legacy-tools]: removed when we upgrade the agents"),
        ),
        &[],
    );
    assert!(!out.stdout.contains("legacy-tools"), "{}", out.stdout);
    assert!(!out.stdout.contains("rev.md"), "{}", out.stdout);
    let out = concise(
        &project("{}").file(
            "project/.opencode/agent/rev.md",
            &agent("# permaudit-ignore[legacy-tools]"),
        ),
        &[],
    );
    assert_eq!(
        reported(&out)
            .into_iter()
            .filter(|(i, _)| i.contains("ignore") || i == "legacy-tools")
            .collect::<Vec<_>>(),
        [("ignore-without-reason".to_string(), 4)],
        "{}",
        out.stdout
    );
    let out = concise(
        &project("{}").file(
            "project/.opencode/agent/rev.md",
            &agent("# permaudit-ignore[dead-rule]: nothing of the kind here"),
        ),
        &[],
    );
    assert!(
        out.stdout
            .contains(".opencode/agent/rev.md:4:3: warning[unused-ignore]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("[legacy-tools]"), "{}", out.stdout);
}

#[test]
fn ignores_of_kinds_turned_off_are_not_unused() {
    let t = project(IGNORED).file(
        "project/.opencode/permaudit.jsonc",
        r#"{"ignore": ["never-matches", "secret-readable", "shadowed-deny"]}"#,
    );
    let out = concise(&t, &[]);
    let unused: Vec<usize> = reported(&out)
        .into_iter()
        .filter(|(i, _)| i == "unused-ignore")
        .map(|(_, l)| l)
        .collect();
    assert_eq!(unused, [11], "only the typo: {}", out.stdout);
    let t = t.file(
        "project/.opencode/permaudit.jsonc",
        r#"{"ignore": ["unused-ignore", "ignore-without-reason"]}"#,
    );
    let ids = ids(&concise(&t, &[]));
    assert!(!ids.iter().any(|i| i.contains("ignore")), "{ids:?}");
}

// ---------------------------------------------------------------------------------------
// Baseline

/// Every file under `dir` with its bytes.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn baseline_round_trip_write_hide_stale() {
    let t = project(CONFIG);
    let before = files(t.root());
    let w = t.run(&["check", "--write-baseline", "permaudit-baseline.json"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert!(w.stdout.is_empty(), "{}", w.stdout);
    assert!(
        w.stderr
            .contains("baseline entries to $ROOT/project/permaudit-baseline.json"),
        "{}",
        w.stderr
    );
    // Exactly one file more, where told.
    let after = files(t.root());
    let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    assert_eq!(added, ["project/permaudit-baseline.json"]);
    assert!(before.iter().all(|(k, v)| after.get(k) == Some(v)));
    let baseline: Value =
        serde_json::from_slice(&after["project/permaudit-baseline.json"]).unwrap();
    assert_eq!(baseline["version"], 1);
    let sd = baseline["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "shadowed-deny")
        .unwrap();
    assert_eq!(sd["permission"], "edit");
    assert_eq!(sd["pattern"], "tests/**");
    assert_eq!(sd["file"], "opencode.jsonc");
    assert!(
        sd["agents"].as_array().unwrap().len() > 1,
        "one entry for the agent set: {sd}"
    );
    assert!(sd.get("line").is_none(), "no line numbers: {sd}");

    // Hidden: nothing reported, exit 0.
    let out = concise(&t, &["--baseline", "permaudit-baseline.json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(reported(&out).is_empty(), "{}", out.stdout);
    assert!(
        out.stdout.contains("hidden by the baseline"),
        "{}",
        out.stdout
    );

    // Lines move (a comment above): still hidden.
    let moved = format!("// moved\n\n{CONFIG}");
    let t = t.file("project/opencode.jsonc", &moved);
    let out = concise(&t, &["--baseline", "permaudit-baseline.json"]);
    assert!(reported(&out).is_empty(), "{}", out.stdout);

    // A new finding shows; the fixed one's entry is stale, at its place in the baseline.
    let fixed = moved.replace("\"tests/**\": \"deny\"", "\"docs/*\": \"deny\"");
    let t = t.file("project/opencode.jsonc", &fixed);
    let out = concise(&t, &["--baseline", "permaudit-baseline.json"]);
    let got = ids(&out);
    assert!(
        out.stdout.contains("error[shadowed-deny]") && out.stdout.contains("\"docs/"),
        "the docs/* deny is new: {}",
        out.stdout
    );
    assert!(
        got.contains(&"stale-baseline".to_string()),
        "{}",
        out.stdout
    );
    let stale: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("[stale-baseline]"))
        .collect();
    assert!(
        stale
            .iter()
            .any(|l| l.starts_with("permaudit-baseline.json:")
                && l.contains("`shadowed-deny` about `edit` \"tests/**\"")),
        "{stale:?}"
    );
}

#[test]
fn a_baseline_never_hides_findings_about_ignore_comments() {
    // An ignore without a reason is fixed where it is written: `--write-baseline` leaves it
    // out, and a baseline that lists it anyway does not hide it.
    let config = CONFIG.replace(
        "      \"tests/**\": \"deny\",",
        "      // permaudit-ignore[shadowed-deny]\n      \"tests/**\": \"deny\",",
    );
    let t = project(&config);
    let before = concise(&t, &[]);
    assert!(
        before.stdout.contains("[ignore-without-reason]"),
        "{}",
        before.stdout
    );
    let w = t.run(&["check", "--write-baseline", "permaudit-baseline.json"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let written =
        std::fs::read_to_string(t.root().join("project/permaudit-baseline.json")).unwrap();
    assert!(!written.contains("ignore-without-reason"), "{written}");
    let out = concise(&t, &["--baseline", "permaudit-baseline.json"]);
    assert_eq!(ids(&out), ["ignore-without-reason"], "{}", out.stdout);
    // Listed by hand: still reported.
    let mut v: Value = serde_json::from_str(&written).unwrap();
    v["entries"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "id": "ignore-without-reason",
            "agents": [],
            "file": "opencode.jsonc",
            "text": "// permaudit-ignore[shadowed-deny]"
        }));
    let t = t.file("project/permaudit-baseline.json", &v.to_string());
    let out = concise(&t, &["--baseline", "permaudit-baseline.json"]);
    assert!(
        out.stdout.contains("[ignore-without-reason]"),
        "{}",
        out.stdout
    );
}

#[test]
fn write_baseline_leaves_nothing_on_failure_and_ignores_the_old_baseline() {
    let t = project(CONFIG);
    let before = files(t.root());
    let out = t.run(&["check", "--write-baseline", "no/such/dir/b.json"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot write the baseline"),
        "{}",
        out.stderr
    );
    assert_eq!(
        files(t.root()),
        before,
        "nothing written, no temporary file left"
    );
    // With --baseline too, every current finding is written (the old entries are replaced).
    let t = t.file("project/old.json", "{\"version\": 1, \"entries\": []}");
    assert_eq!(
        t.run(&[
            "check",
            "--baseline",
            "old.json",
            "--write-baseline",
            "old.json"
        ])
        .code,
        0
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(t.root().join("project/old.json")).unwrap())
            .unwrap();
    assert!(!v["entries"].as_array().unwrap().is_empty());
}

#[test]
fn a_broken_baseline_is_refused_with_its_place() {
    let t = project(CONFIG).file(
        "project/b.json",
        "{\"version\": 1, \"entries\": [{\"id\": 3}]}",
    );
    let out = t.run(&["check", "--baseline", "b.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("b.json:1:1: error: not a permaudit baseline"),
        "{}",
        out.stderr
    );
    let t = t.file("project/b.json", "{\"version\": 9, \"entries\": []}");
    assert!(
        t.run(&["check", "--baseline", "b.json"])
            .stderr
            .contains("baseline version 9")
    );
}

// ---------------------------------------------------------------------------------------
// Scope

fn hostile_machine() -> Tree {
    project("{\"permission\": {\"edit\": {\"src/*\": \"ask\"}}}\n")
        .file(
            "home/.config/opencode/opencode.json",
            "{\"permission\": {\"bash\": {\"rm *\": \"deny\", \"*\": \"allow\"}}}",
        )
        .file(
            "home/.opencode/agent/mine.md",
            "---\npermission:\n  edit:\n    \"*.md\": deny\n    \"*\": allow\n---\n",
        )
        .file(
            "managed/opencode.json",
            "{\"permission\": {\"read\": {\".env\": \"deny\", \"*\": \"allow\"}}}",
        )
        .var(
            "OPENCODE_PERMISSION",
            "{\"webfetch\": {\"x\": \"deny\", \"*\": \"allow\"}}",
        )
        .var(
            "OPENCODE_CONFIG_CONTENT",
            "{\"permission\": {\"edit\": {\"a/*\": \"deny\", \"a/*\": \"allow\"}}}",
        )
}

#[test]
fn project_only_reads_only_the_project() {
    let t = hostile_machine();
    let all = t.run(&["check"]);
    assert_eq!(
        all.code, 1,
        "the global config has a shadowed deny: {}",
        all.stdout
    );
    // Under HOME, human output says `~/…`.
    for place in [
        "~/.config/opencode/opencode.json",
        "~/.opencode/agent/mine.md",
        "managed/opencode.json",
        "env:OPENCODE_CONFIG_CONTENT",
        "env:OPENCODE_PERMISSION",
    ] {
        assert!(
            all.stdout.contains(place),
            "{place} read without the flag:\n{}",
            all.stdout
        );
    }
    let only = t.run(&["check", "--project-only"]);
    assert_eq!(only.code, 0, "{}", only.stdout);
    assert!(
        only.stdout.starts_with(
            "OpenCode config read, in OpenCode's order (later wins):\n  1. opencode.jsonc\nproject only: "
        ),
        "{}",
        only.stdout
    );
    assert!(
        !only.stdout.contains("home/")
            && !only.stdout.contains("~/")
            && !only.stdout.contains("env:"),
        "{}",
        only.stdout
    );
    // The same as on a clean machine.
    let clean = project("{\"permission\": {\"edit\": {\"src/*\": \"ask\"}}}\n");
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("project only"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&only.stdout), strip(&clean.run(&["check"]).stdout));
    let rules = |t: &Tree, extra: &[&str]| {
        let mut args = vec!["check", "--format", "json", "--fail-on", "never"];
        args.extend_from_slice(extra);
        t.run(&args).json()["findings"].clone()
    };
    assert_eq!(rules(&t, &["--project-only"]), rules(&clean, &[]));
    // The setting does the same.
    let set = t.file(
        "project/.opencode/permaudit.jsonc",
        "{\"project-only\": true}",
    );
    assert_eq!(set.run(&["check"]).code, 0);
}

#[test]
fn the_header_says_when_there_is_no_config() {
    let t = Tree::new();
    let out = t.run(&["check"]);
    assert!(
        out.stdout
            .starts_with("no OpenCode config found: built-in defaults only\n"),
        "{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------------------
// Output forms

fn snapshot(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ci")
        .join(name);
    if std::env::var_os("PERMAUDIT_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == got,
        "{name} differs; if intended, rerun with PERMAUDIT_BLESS=1 and review\n--- want\n{want}\n--- got\n{got}"
    );
}

#[test]
fn each_output_form_matches_its_snapshot() {
    let t = project(IGNORED).file(
        "project/.opencode/permaudit.jsonc",
        "{\"level\": {\"unused-ignore\": \"info\"}}\n",
    );
    for (name, args) in [
        ("human.txt", &["check"][..]),
        ("concise.txt", &["check", "--format", "concise"]),
        ("quiet.txt", &["check", "-q", "--no-ignore"]),
        (
            "quiet-concise.txt",
            &["check", "--quiet", "--format", "concise", "--no-ignore"],
        ),
        ("statistics.txt", &["check", "--statistics", "--no-ignore"]),
        ("github.txt", &["check", "--format", "github"]),
        (
            "absolute.txt",
            &["check", "--format", "concise", "--absolute-paths"],
        ),
    ] {
        let out = t.run(args);
        snapshot(
            name,
            &format!(
                "# permaudit {}\n# exit {}\n{}",
                args.join(" "),
                out.code,
                out.stdout
            ),
        );
    }
    let sarif = t.run(&["check", "--format", "sarif"]).json();
    let uris: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        .filter(|u| !u.is_null()) // built-in rules have no place
        .collect();
    assert!(
        !uris.is_empty()
            && uris
                .iter()
                .all(|u| *u == "opencode.jsonc" || *u == ".opencode/permaudit.jsonc"),
        "{uris:?}"
    );
    let v = t.run(&["check", "--format", "json"]).json();
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["source"].is_null() || f["source"]["path"] == "opencode.jsonc"),
        "{v:#}"
    );
}

#[test]
fn summary_grammar() {
    let t = project("{\"permission\": {\"edit\": {\"tests/**\": \"deny\", \"*\": \"allow\"}, \"bash\": {\"git *\": \"allow\", \"*\": \"ask\"}}}")
        .file(
            "project/.opencode/permaudit.jsonc",
            "{\"select\": [\"shadowed-deny\"]}",
        );
    let last = |o: Output| o.stdout.lines().last().unwrap().to_string();
    assert_eq!(
        last(t.run(&["check"])),
        "1 error (2 hidden by the settings)"
    );
    let t = t.file(
        "project/.opencode/permaudit.jsonc",
        "{\"select\": [\"dead-rule\", \"shadowed-deny\"]}",
    );
    assert_eq!(
        last(t.run(&["check"])),
        "1 error, 1 warning (1 hidden by the settings)"
    );
    let t = t.file(
        "project/.opencode/permaudit.jsonc",
        "{\"select\": [\"never-matches\"]}",
    );
    assert_eq!(
        last(t.run(&["check"])),
        "no findings (3 hidden by the settings)"
    );
}

// ---------------------------------------------------------------------------------------
// Schema

/// A validator for the JSON Schema keywords `permaudit schema` uses; any other keyword in
/// the schema fails the test (so that this cannot silently accept what it does not check).
fn validate(schema: &Value, root: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    const KNOWN: &[&str] = &[
        "$schema",
        "$defs",
        "$ref",
        "title",
        "description",
        "type",
        "properties",
        "additionalProperties",
        "items",
        "enum",
        "propertyNames",
        "oneOf",
        "anyOf",
        "default",
        "const",
    ];
    let Some(obj) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{at}: not allowed"));
        }
        return;
    };
    for k in obj.keys() {
        assert!(
            KNOWN.contains(&k.as_str()),
            "schema keyword `{k}` is not checked by this test"
        );
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local $ref");
        validate(&root["$defs"][name], root, v, at, errors);
    }
    if let Some(t) = obj.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match v {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        if !types
            .iter()
            .any(|t| *t == actual || (*t == "number" && actual == "integer"))
        {
            errors.push(format!("{at}: {actual} is not {types:?}"));
            return;
        }
    }
    if let Some(e) = obj.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errors.push(format!("{at}: {v} not in {e:?}"));
        }
    }
    if let Some(c) = obj.get("const") {
        if c != v {
            errors.push(format!("{at}: {v} is not {c}"));
        }
    }
    for (kw, need) in [("oneOf", 1usize), ("anyOf", 0)] {
        if let Some(alts) = obj.get(kw).and_then(Value::as_array) {
            let ok = alts
                .iter()
                .filter(|s| {
                    let mut e = Vec::new();
                    validate(s, root, v, at, &mut e);
                    e.is_empty()
                })
                .count();
            if (need == 1 && ok != 1) || ok == 0 {
                errors.push(format!("{at}: {ok} alternatives of {kw} match"));
            }
        }
    }
    if let (Some(items), Value::Array(a)) = (obj.get("items"), v) {
        for (i, x) in a.iter().enumerate() {
            validate(items, root, x, &format!("{at}[{i}]"), errors);
        }
    }
    if let Value::Object(o) = v {
        let props = obj.get("properties").and_then(Value::as_object);
        for (k, x) in o {
            let at = format!("{at}.{k}");
            if let Some(names) = obj.get("propertyNames") {
                validate(names, root, &Value::String(k.clone()), &at, errors);
            }
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(s, root, x, &at, errors),
                None => {
                    if let Some(extra) = obj.get("additionalProperties") {
                        validate(extra, root, x, &at, errors);
                    }
                }
            }
        }
    }
}

fn jsonc_value(text: &str) -> Value {
    let node =
        permaudit::syntax::jsonc::parse(text, permaudit::source::SourceId(0), &|o| o).unwrap();
    permaudit::load::to_json(&node.value)
}

#[test]
fn the_schema_validates_the_example_settings_and_refuses_bad_ones() {
    let out = Tree::new().run(&["schema"]);
    assert_eq!(out.code, 0);
    let schema: Value = serde_json::from_str(&out.stdout).unwrap();
    let example_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/permaudit.example.jsonc");
    let example = std::fs::read_to_string(&example_path).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &jsonc_value(&example), "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    // The example is also what permaudit itself accepts.
    let t = project(CONFIG)
        .file("project/.opencode/permaudit.jsonc", &example)
        .file(
            "project/.opencode/permaudit-samples.txt",
            "build edit src/a.ts => ask\n",
        )
        .file(
            "project/.opencode/permaudit-baseline.json",
            "{\"version\": 1, \"entries\": []}",
        );
    let run = t.run(&["check"]);
    assert_ne!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("permaudit settings: .opencode/permaudit.jsonc"),
        "{}",
        run.stdout
    );
    // And the validator is not vacuous.
    for bad in [
        r#"{"selct": []}"#,
        r#"{"select": ["no-such-kind"]}"#,
        r#"{"level": {"no-such-kind": "error"}}"#,
        r#"{"level": {"dead-rule": "fatal"}}"#,
        r#"{"fail-on": 3}"#,
        r#"{"per-path-ignores": {"x": "dead-rule"}}"#,
    ] {
        let mut errors = Vec::new();
        validate(
            &schema,
            &schema,
            &serde_json::from_str(bad).unwrap(),
            "$",
            &mut errors,
        );
        assert!(!errors.is_empty(), "{bad} passes the schema");
        let t = project("{}").file("project/.opencode/permaudit.jsonc", bad);
        assert_eq!(t.run(&["check"]).code, 2, "{bad} passes permaudit");
    }
}

#[test]
fn machine_formats_carry_a_refusal_on_stdout() {
    // OpenCode refuses `"sometimes"`: exit 2, and a pipeline reading stdout learns why.
    let t = project("{\n  \"permission\": {\"edit\": \"sometimes\"}\n}\n");
    let json = t.run(&["check", "--format", "json"]);
    assert_eq!(json.code, 2, "{}", json.stderr);
    let v = json.json();
    assert_eq!(v["version"], 2);
    assert_eq!(v["error"]["source"]["path"], "opencode.jsonc");
    assert_eq!(v["error"]["source"]["line"], 2);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("OpenCode refuses this config"),
        "{v}"
    );
    let sarif = t.run(&["check", "--format", "sarif"]);
    assert_eq!(sarif.code, 2);
    let s = sarif.json();
    let inv = &s["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false, "{s}");
    let note = &inv["toolExecutionNotifications"][0];
    assert_eq!(
        note["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    let gh = t.run(&["check", "--format", "github"]);
    assert_eq!(gh.code, 2);
    assert!(
        gh.stdout
            .starts_with("::error file=opencode.jsonc,line=2,col="),
        "{}",
        gh.stdout
    );
    // The human forms say it on stderr only.
    let human = t.run(&["check"]);
    assert_eq!(human.code, 2);
    assert!(human.stdout.is_empty(), "{}", human.stdout);
    // A refused settings file too.
    let t = project(CONFIG).file("project/.opencode/permaudit.jsonc", "{\"selct\": []}");
    let v = t.run(&["check", "--format", "json"]);
    assert_eq!(v.code, 2);
    let v = v.json();
    assert_eq!(
        v["error"]["source"]["path"], ".opencode/permaudit.jsonc",
        "{v}"
    );
}

#[test]
fn every_refusal_of_a_file_is_reported_at_once() {
    // Three values OpenCode refuses in one file: all three at their file:line:col, in every
    // form, exit 2, nothing written (not even by --fix).
    let bad = [
        ("\"alow\"", "\"allow\"", 3, "permission.bash.git *"),
        ("\"edit\": 3", "\"edit\": \"ask\"", 4, "permission.edit"),
        ("\"bogus\"", "\"subagent\"", 6, "agent.x.mode"),
    ];
    let text = "{\n  \"permission\": {\n    \"bash\": {\"git *\": \"alow\"},\n    \"edit\": 3\n  },\n  \"agent\": {\"x\": {\"mode\": \"bogus\"}}\n}\n";
    let t = project(text);
    let human = t.run(&["check", "--fix"]);
    assert_eq!(human.code, 2, "{}", human.stderr);
    let headlines: Vec<&str> = human
        .stderr
        .lines()
        .filter(|l| l.contains(": error: OpenCode refuses this config"))
        .collect();
    assert_eq!(headlines.len(), 3, "{}", human.stderr);
    for ((_, _, line, path), h) in bad.iter().zip(&headlines) {
        assert!(h.starts_with(&format!("opencode.jsonc:{line}:")), "{h}");
        assert!(h.contains(&format!("at `{path}`")), "{h}");
    }
    assert_eq!(
        std::fs::read_to_string(t.project().join("opencode.jsonc")).unwrap(),
        text
    );
    let v = t.run(&["check", "--format", "json"]).json();
    let lines: Vec<i64> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"]["line"].as_i64().unwrap())
        .collect();
    assert_eq!(lines, [3, 4, 6], "{v}");
    assert_eq!(v["error"], v["errors"][0]);
    let gh = t.run(&["check", "--format", "github"]);
    assert_eq!(
        gh.stdout
            .lines()
            .filter(|l| l.starts_with("::error file="))
            .count(),
        3
    );
    let sarif = t.run(&["check", "--format", "sarif"]).json();
    let notes = &sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(notes.as_array().unwrap().len(), 3, "{sarif}");
    // Each is a refusal on its own: with the other two repaired, it is still refused, at
    // the same place; with all three repaired the file loads.
    for (k, (_, _, line, path)) in bad.iter().enumerate() {
        let mut only = text.to_string();
        for (j, (wrong, right, _, _)) in bad.iter().enumerate() {
            if j != k {
                only = only.replacen(wrong, right, 1);
            }
        }
        let run = project(&only).run(&["check"]);
        assert_eq!(run.code, 2, "{only}");
        assert!(
            run.stderr.starts_with(&format!("opencode.jsonc:{line}:")),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!("at `{path}`")),
            "{}",
            run.stderr
        );
        assert_eq!(
            run.stderr.matches(": error: OpenCode refuses").count(),
            1,
            "{}",
            run.stderr
        );
    }
    let mut good = text.to_string();
    for (wrong, right, _, _) in &bad {
        good = good.replacen(wrong, right, 1);
    }
    assert_ne!(project(&good).run(&["check"]).code, 2, "{good}");
}

#[test]
fn a_provider_model_opencode_refuses_is_refused_at_its_place() {
    // OpenCode 1.18.34 refuses each of these ("Configuration is invalid … Missing key
    // provider.x.models.m.limit.context", "Expected number, got \"8000\" …cost.output",
    // "Expected object | undefined, got [] provider.y.models"; checked on the binary, and
    // blind fresh-12's openharness, which permaudit passed as loadable before).
    let text = "{\n  \"provider\": {\n    \"x\": {\"models\": {\"m\": {\"limit\": {\"output\": 8000}}}},\n    \"z\": {\"models\": {\"n\": {\"cost\": {\"input\": 1, \"output\": \"8000\"}}}},\n    \"y\": {\"models\": []}\n  }\n}\n";
    let v = project(text).run(&["check", "--format", "json"]);
    assert_eq!(v.code, 2, "{}", v.stdout);
    let v = v.json();
    let errors: Vec<(i64, String)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["source"]["line"].as_i64().unwrap(),
                e["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        errors.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        [3, 4, 5],
        "{v}"
    );
    assert!(
        errors[0].1.contains("limit") && errors[0].1.contains("`context`"),
        "{v}"
    );
    assert!(errors[1].1.contains("cost.output"), "{v}");
    // What OpenCode accepts passes: both limits given, unknown keys, fractional numbers.
    let ok = "{\"provider\": {\"x\": {\"whatever\": 5, \"models\": {\"m\": {\"foo\": 1, \"limit\": {\"context\": 1.5, \"output\": 1}, \"cost\": {\"input\": 1, \"output\": 2}}}}}}\n";
    assert_eq!(project(ok).run(&["check"]).code, 0);
}
