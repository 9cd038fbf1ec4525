//! `check --fix` on the files people keep: links, modes, read-only and hard-linked files,
//! several files at once, `{env:…}` patterns, suppressions and a catch-all written last.
//! What `--fix` writes must leave the file system as the user keeps it, or nothing.

mod check_support;

use check_support::Tree;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// A deny a help makes live (or writes into an allow-all block) is walked around as every
/// deny of a deny-list is: `fix::suggest`'s criterion (b) does not hold that kind against
/// the help, and neither do these tests (docs/checks.md, help that fits the config).
const WALKED_AROUND: &str = "deny-walkaround";

/// A shadowed deny under a trailing catch-all: `--fix --unsafe-fixes` moves the catch-all.
const CONFIG: &str = r#"{
  "permission": {
    "bash": {
      "rm -rf *": "deny",
      "*": "allow"
    }
  }
}
"#;

/// Everything under `dir` (no `.git`), names and bytes, links as `-> target`.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                out.push((
                    rel,
                    format!("-> {}", std::fs::read_link(&p).unwrap().display()),
                ));
            } else if ft.is_dir() {
                if e.file_name() != ".git" {
                    walk(base, &p, out);
                }
            } else {
                out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn a_symlinked_config_is_fixed_at_its_target_and_stays_a_link() {
    let t = Tree::new().file("dotfiles/opencode.json", CONFIG);
    let link = t.project().join("opencode.json");
    std::os::unix::fs::symlink("../dotfiles/opencode.json", &link).unwrap();
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let fixed = std::fs::read_to_string(t.root().join("dotfiles/opencode.json")).unwrap();
    assert!(
        fixed.find("\"*\"").unwrap() < fixed.find("\"rm -rf *\"").unwrap(),
        "{fixed}"
    );
}

#[test]
fn a_symlinked_config_directory_is_fixed_through_the_link() {
    let t = Tree::new().file(
        "dotfiles/opencode/agents/review.md",
        "---\npermission:\n  bash:\n    \"rm -rf *\": deny\n    \"*\": allow\n---\nReview.\n",
    );
    let opencode = t.project().join(".opencode");
    std::os::unix::fs::symlink("../dotfiles/opencode", &opencode).unwrap();
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&opencode)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let fixed =
        std::fs::read_to_string(t.root().join("dotfiles/opencode/agents/review.md")).unwrap();
    assert_eq!(
        fixed,
        "---\npermission:\n  bash:\n    \"*\": allow\n    \"rm -rf *\": deny\n---\nReview.\n"
    );
}

#[test]
fn the_diff_of_a_symlinked_config_applies_with_git_apply() {
    // The link and its target inside one repository: `git apply` refuses a patch through
    // a symlink, so the diff names the target.
    let t = Tree::new().file("project/config/opencode.json", CONFIG);
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(t.project())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::remove_dir_all(t.project().join(".git")).unwrap();
    git(&["init", "-q"]);
    std::os::unix::fs::symlink("config/opencode.json", t.project().join("opencode.json")).unwrap();
    git(&["add", "-A"]);
    let run = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("--- a/config/opencode.json\n"),
        "{}",
        run.stdout
    );
    let patch = t.root().join("fix.patch");
    std::fs::write(&patch, &run.stdout).unwrap();
    git(&["apply", "--check", patch.to_str().unwrap()]);
    git(&["apply", patch.to_str().unwrap()]);
    let again = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, ""),
        "{}",
        again.stderr
    );
}

#[test]
fn a_private_config_keeps_its_mode_and_a_hard_link_stays_one_file() {
    let t = Tree::new().file("project/opencode.json", CONFIG);
    let p = t.project().join("opencode.json");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let other = t.root().join("backup.json");
    std::fs::hard_link(&p, &other).unwrap();
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(mode(&p), 0o600);
    assert_eq!(std::fs::metadata(&p).unwrap().nlink(), 2);
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        std::fs::read_to_string(&other).unwrap()
    );
    assert_ne!(std::fs::read_to_string(&p).unwrap(), CONFIG);
}

#[test]
fn a_read_only_file_stops_every_write() {
    // Two files to fix; the second is 0444: neither is written, exit 2, the file named.
    let t = Tree::new().file("project/opencode.json", CONFIG).file(
        "project/.opencode/agents/review.md",
        "---\npermission:\n  bash:\n    \"rm -rf *\": deny\n    \"*\": allow\n---\nReview.\n",
    );
    let ro = t.project().join(".opencode/agents/review.md");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(t.root());
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("review.md"), "{}", run.stderr);
    assert!(
        run.stderr.contains("read-only (mode 0444)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("no fixed file was written"),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(t.root()), before);
    assert_eq!(mode(&ro), 0o444);
}

#[test]
fn an_immutable_file_stops_every_write() {
    let t = Tree::new().file("project/opencode.json", CONFIG).file(
        "project/.opencode/agents/review.md",
        "---\npermission:\n  bash:\n    \"rm -rf *\": deny\n    \"*\": allow\n---\nReview.\n",
    );
    let locked = t.project().join(".opencode/agents/review.md");
    let chattr = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&locked)
        .output();
    if !chattr.is_ok_and(|o| o.status.success()) {
        // Not root, or a file system without the attribute: the 0444 case stands for it.
        eprintln!("SKIPPED immutable file: chattr +i is not available here");
        return;
    }
    let before = snapshot(t.root());
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&locked)
        .output();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("review.md"), "{}", run.stderr);
    assert_eq!(snapshot(t.root()), before);
}

#[test]
fn a_fix_is_not_offered_where_a_pattern_comes_from_the_environment() {
    // With RISKY=`git push*` the `git push --force*` deny looks redundant; where RISKY is
    // unset it is the only deny. No fix may depend on this machine's value.
    let config = r#"{
  "permission": {
    "bash": {
      "*": "allow",
      "git push --force*": "deny",
      "{env:RISKY}": "deny"
    }
  }
}
"#;
    let t = Tree::new()
        .file("project/opencode.json", config)
        .var("RISKY", "git push*");
    let run = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    // The same with the pattern read from a file beside the config.
    let t = Tree::new()
        .file(
            "project/opencode.json",
            &config.replace("{env:RISKY}", "{file:risky.txt}"),
        )
        .file("project/risky.txt", "git push*");
    let shown = t.run(&["rules", "--format", "json"]);
    assert!(shown.stdout.contains("\"git push*\""), "{}", shown.stdout);
    let run = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    // Written literally, the same rule is redundant and removed.
    let t = Tree::new().file(
        "project/opencode.json",
        &config.replace("{env:RISKY}", "git push*"),
    );
    let run = t.run(&["check", "--diff"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("-      \"git push --force*\": \"deny\","),
        "{}",
        run.stdout
    );
}

#[test]
fn a_trailing_catch_all_is_moved_once_and_its_victims_keep_order_and_comments() {
    // 21 asks above a trailing allow: one move, not 21, and a second run changes nothing.
    let mut rules = String::new();
    for n in 0..21 {
        if n % 7 == 0 {
            rules.push_str(&format!("      // group {}\n", n / 7));
        }
        rules.push_str(&format!("      \"tool{n} *\": \"ask\",\n"));
    }
    let config = format!(
        "{{\n  \"permission\": {{\n    \"bash\": {{\n{rules}\n      // everything else\n      \"*\": \"allow\"\n    }}\n  }}\n}}\n"
    );
    let t = Tree::new().file("project/opencode.json", &config);
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let fixed = std::fs::read_to_string(t.project().join("opencode.json")).unwrap();
    let expected = format!(
        "{{\n  \"permission\": {{\n    \"bash\": {{\n      // everything else\n      \"*\": \"allow\",\n{}\n    }}\n  }}\n}}\n",
        rules.trim_end_matches(",\n")
    );
    assert_eq!(fixed, expected);
    let again = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, ""),
        "{}",
        again.stderr
    );
}

#[test]
fn rules_a_trailing_catch_all_makes_redundant_are_not_deleted() {
    // `git push*` ask is redundant only because the catch-all comes last; deleting it
    // would allow `git push` once the catch-all is moved first, as its finding advises.
    let config = r#"{"permission": {"bash": {"git *": "allow", "git push*": "ask", "*": "ask"}}}"#;
    let t = Tree::new().file("project/opencode.json", config);
    let run = t.run(&["check", "--diff", "--unsafe-fixes"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    // And check says what moving the catch-all would open, not applying it.
    let human = t.run(&["check"]);
    assert!(
        human
            .stdout
            .contains("fix: move the catch-all to the top of its block (not applied: it would widen access: bash \""),
        "{}",
        human.stdout
    );
}

#[test]
fn an_ignore_comment_above_a_rule_a_fix_makes_live_is_kept() {
    // The ignore hides nothing while the deny is dead; once `--unsafe-fixes` moves the
    // catch-all first the deny lives, and the comment is what hides its finding then.
    let config = r#"{
  "permission": {
    "bash": {
      "*": "allow",
      // permaudit-ignore[always-overrides-deny]: the prompt is wanted
      "rm *": "deny",
      "rm -rf *": "ask"
    }
  }
}
"#;
    let t = Tree::new().file("project/opencode.json", config);
    let before = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let unused_before = check_support::findings_of(&before, "unused-ignore").len();
    let run = t.run(&[
        "check",
        "--fix",
        "--unsafe-fixes",
        "--format",
        "json",
        "--fail-on",
        "never",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let after = run.json();
    // Whatever the fixes did, no finding the comment named is shown after them.
    assert!(
        check_support::findings_of(&after, "always-overrides-deny").is_empty(),
        "{unused_before}: {after:#}"
    );
}

/// The findings at warning or above of a `check --format json` report.
fn serious(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["level"] != "info")
        .collect()
}

/// The first JSON object written in `text` (balanced braces, strings skipped).
fn first_object(text: &str) -> serde_json::Value {
    let start = text.find('{').expect("an object in the help");
    let (mut depth, mut in_str, mut esc) = (0, false, false);
    for (i, c) in text[start..].char_indices() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (true, false, '"') => in_str = false,
            (false, _, '"') => in_str = true,
            (false, _, '{') => depth += 1,
            (false, _, '}') => {
                depth -= 1;
                if depth == 0 {
                    return serde_json::from_str(&text[start..=start + i]).unwrap();
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced help: {text}")
}

#[test]
fn the_read_only_agents_help_is_tried_and_holds() {
    // The help proposes config; applied, the finding is gone, nothing new is reported at
    // warning or above, plan still writes its plans, and neither agent edits the source.
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"edit": {"*": "allow"}}}"#,
    );
    let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    let found = check_support::findings_of(&run.json(), "read-only-agent-writes");
    assert_eq!(found.len(), 1, "{}", run.stdout);
    let help = found[0]["help"].as_str().unwrap().to_string();
    let proposed = first_object(&help);
    assert!(proposed["agent"]["plan"].is_object(), "{help}");
    assert!(proposed["agent"]["explore"].is_object(), "{help}");
    let mut config: serde_json::Value =
        serde_json::from_str(r#"{"permission": {"edit": {"*": "allow"}}}"#).unwrap();
    config["agent"] = proposed["agent"].clone();
    let t = Tree::new().file("project/opencode.json", &config.to_string());
    let after = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(serious(&after).is_empty(), "{after:#}");
    let decide = |agent: &str, input: &str| {
        let run = t.run(&[
            "explain", "--agent", agent, "--format", "json", "edit", input,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["action"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(decide("plan", ".opencode/plans/x.md"), "allow");
    assert_eq!(decide("plan", "src/main.ts"), "deny");
    assert_eq!(decide("explore", "src/main.ts"), "deny");
}

#[test]
fn the_described_read_only_help_makes_the_description_true_and_holds() {
    // A reviewer "read-only" by its description alone edits and deletes unasked; the help
    // gives it its own block (edit denied, bash asked first, the read-only command it
    // needs allowed). Written as the help says, in its frontmatter and in a JSON agent's
    // block, the finding is gone, nothing new is reported, and the agent reads, asks for
    // `rm`, and may not edit.
    let md = "---\ndescription: Reviews the diff; read-only.\nmode: subagent\n---\nReport only.\n";
    let json = r#"{"agent": {"auditor": {"description": "Audits the code base and reports only.", "mode": "subagent"}}}"#;
    let t = Tree::new()
        .file("project/.opencode/agents/reviewer.md", md)
        .file("project/opencode.json", json);
    let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    let found = check_support::findings_of(&run.json(), "described-read-only");
    assert_eq!(found.len(), 2, "{}", run.stdout);
    for f in &found {
        let help = f["help"].as_str().unwrap_or_default();
        assert!(help.contains("edit") && help.contains("deny"), "{help}");
        assert!(help.contains("\"*\"") && help.contains("ask"), "{help}");
        // `git diff *`, not `git diff*`: that one matches `git difftool -x CMD` too.
        assert!(help.contains("git diff *"), "{help}");
    }
    let md = "---\ndescription: Reviews the diff; read-only.\nmode: subagent\npermission:\n  edit: deny\n  bash:\n    \"*\": ask\n    \"git diff *\": allow\n    \"git *--output*\": deny\n---\nReport only.\n";
    let json = r#"{"agent": {"auditor": {"description": "Audits the code base and reports only.", "mode": "subagent", "permission": {"edit": "deny", "bash": {"*": "ask", "git diff *": "allow", "git *--output*": "deny"}}}}}"#;
    let t = Tree::new()
        .file("project/.opencode/agents/reviewer.md", md)
        .file("project/opencode.json", json);
    let after = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&after, "described-read-only").is_empty(),
        "{after:#}"
    );
    assert!(serious(&after).is_empty(), "{after:#}");
    decided_as(
        &t,
        "described-read-only",
        &[
            ("reviewer", "edit", "src/main.ts", "deny"),
            ("reviewer", "bash", "git diff HEAD", "allow"),
            (
                "reviewer",
                "bash",
                "git difftool -y -x \"rm -rf src\" HEAD",
                "ask",
            ),
            ("reviewer", "bash", "rm -rf src", "ask"),
            ("auditor", "edit", "src/main.ts", "deny"),
            ("auditor", "bash", "rm -rf src", "ask"),
        ],
    );
}

/// `b` merged into `a`, objects key by key (as OpenCode merges config files).
fn merge(a: &mut serde_json::Value, b: &serde_json::Value) {
    match (a, b) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// The one finding of `kind` in `config`'s check: its help, and whether it carries a
/// suggestion.
fn help_of(kind: &str, config: &str) -> (String, bool) {
    let t = Tree::new().file("project/opencode.json", config);
    let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    let found = check_support::findings_of(&run.json(), kind);
    assert_eq!(found.len(), 1, "{}", run.stdout);
    let suggested = found[0]["suggestions"]
        .as_array()
        .is_some_and(|s| !s.is_empty());
    (
        found[0]["help"].as_str().unwrap_or_default().to_string(),
        suggested,
    )
}

#[test]
fn the_delegation_help_leaves_general_its_job_and_denies_only_in_explore() {
    // `build` denies `git push *` but may start `explore` and `general`, which run it.
    // `general` is OpenCode's general-purpose helper: it pushes for every agent that
    // delegates to it, and a deny in its block (or the shared block, which also reaches
    // build's other callers and plan) takes that from all of them (round 3's
    // DE-denies-helpers-their-job). The help says so in words, with no snippet: the route
    // deny for `general` if build must not have it done, and the deny in read-only
    // `explore`'s own block. Done, the finding is gone and general still pushes.
    let before =
        r#"{"agent": {"build": {"permission": {"bash": {"*": "allow", "git push *": "deny"}}}}}"#;
    let (help, suggested) = help_of("delegation-escalation", before);
    assert!(!suggested, "no snippet for general: {help}");
    assert!(help.contains("likely the design"), "{help}");
    assert!(!help.contains("shared `permission` block"), "{help}");
    help_holds(
        "delegation-escalation",
        before,
        r#"(`"task": {"general": "deny"}` in `build`'s own block), which also cuts it off from that helper for everything else, and write the deny into `explore`'s own block"#,
        r#"{"agent": {"build": {"permission": {"bash": {"*": "allow", "git push *": "deny"}, "task": {"general": "deny"}}}, "explore": {"permission": {"bash": {"git push *": "deny"}}}}}"#,
        &[
            ("general", "bash", "git push origin main", "allow"),
            ("plan", "bash", "git push origin main", "allow"),
            ("explore", "bash", "git push origin main", "deny"),
            ("explore", "bash", "git status", "allow"),
            ("build", "task", "explore", "allow"),
        ],
    );
}

#[test]
fn a_read_only_callers_edit_deny_is_not_written_into_general_or_the_shared_block() {
    // A reviewer that may not edit (nor run bash unasked) starts `general`, which edits.
    // Writing the reviewer's edit deny into `general` or the shared block would take
    // editing from build and every other caller (kevanoullio, magh97 in round 3): only
    // the choice in words, no snippet.
    let (help, suggested) = help_of(
        "delegation-escalation",
        r#"{"agent": {"review": {"mode": "primary", "permission": {"edit": "deny", "bash": "ask"}}}}"#,
    );
    assert!(!suggested, "{help}");
    assert!(
        help.starts_with("`general` is not read-only and does this for every agent that delegates to it: delegating it to `general` is likely the design; if `review` must not have it done, deny the route (`\"task\": {\"general\": \"deny\"}` in `review`'s own block)"),
        "{help}"
    );
    assert!(!help.contains("shared"), "{help}");
}

#[test]
fn the_delegation_suggestion_writes_a_deny_for_explore_in_its_own_block() {
    // `plan` may not push; it may start only `explore` (general's route is denied), which
    // pushes by its built-in bash allow. explore is read-only by design: the deny goes into
    // its own block, never the shared block (build pushes).
    suggestion_holds(
        "delegation-escalation",
        r#"{"agent": {"plan": {"permission": {"bash": {"*": "allow", "git push *": "deny"}, "task": {"general": "deny"}}}}}"#,
        r#""explore": {"permission": {"bash": {"git push *": "deny"}}}"#,
        &[
            ("explore", "bash", "git push origin main", "deny"),
            ("explore", "bash", "git status", "allow"),
            ("build", "bash", "git push origin main", "allow"),
            ("general", "bash", "git push origin main", "allow"),
            ("plan", "task", "explore", "allow"),
        ],
    );
}

#[test]
fn the_delegation_suggestion_for_an_ask_asks_where_the_subagents_inherit() {
    // An ask escapes the same way: `build` asks before pushing, `general` pushes unasked.
    // The suggestion copies the ask (not a deny) into the subagents' own blocks.
    suggestion_holds(
        "delegation-escalation",
        r#"{"agent": {"build": {"permission": {"bash": {"*": "allow", "git push*": "ask"}}}}}"#,
        r#""general": {"permission": {"bash": {"git push*": "ask"}}}"#,
        &[
            ("explore", "bash", "git push origin main", "ask"),
            ("general", "bash", "git push origin main", "ask"),
            ("general", "bash", "git status", "allow"),
            ("build", "task", "general", "allow"),
        ],
    );
}

#[test]
fn the_external_directory_help_for_a_file_names_its_directory_and_holds() {
    // `…/hosts.yml/*` (the old advice) names a directory that does not exist: the help
    // proposes the directory holding the file, and with it OpenCode's read of the file
    // is decided by the new rule.
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"external_directory": {"/srv/gh/hosts.yml": "allow"}}}"#,
    );
    let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    let found = check_support::findings_of(&run.json(), "never-matches");
    assert_eq!(found.len(), 1, "{}", run.stdout);
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains("write `/srv/gh/*`"), "{message}");
    let before = t.run(&["explain", "--format", "json", "read", "/srv/gh/hosts.yml"]);
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"external_directory": {"/srv/gh/*": "allow"}}}"#,
    );
    let after = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    assert!(check_support::findings_of(&after.json(), "never-matches").is_empty());
    let explained = t.run(&["explain", "--format", "json", "read", "/srv/gh/hosts.yml"]);
    assert_eq!(explained.json()["action"], "allow", "{}", explained.stdout);
    assert_ne!(before.json()["action"], "allow", "{}", before.stdout);
}

#[test]
fn a_deny_overridden_from_another_file_gets_help_that_can_be_done_and_holds() {
    // The global deny is overridden by the project's allow: "put the deny after it" cannot
    // be done across files, and writing the key again in the project keeps the global
    // place (a merged key keeps its first position): the help says to write it in the
    // agent's own block, and that works.
    let global = r#"{"permission": {"bash": {"git push *": "deny"}}}"#;
    let t = Tree::new()
        .file("home/.config/opencode/opencode.json", global)
        .file(
            "project/opencode.json",
            r#"{"permission": {"bash": {"*": "allow"}}}"#,
        );
    let shadowed = |t: &Tree| {
        let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
        check_support::findings_of(&run.json(), "shadowed-deny")
    };
    let found = shadowed(&t);
    assert_eq!(found.len(), 1);
    let help = found[0]["help"].as_str().unwrap();
    assert!(
        help.contains("writing the same key again in opencode.json does not help"),
        "{help}"
    );
    assert!(help.contains("`agent.NAME.permission`"), "{help}");
    // What the help says does not work, indeed does not.
    std::fs::write(
        t.project().join("opencode.json"),
        r#"{"permission": {"bash": {"*": "allow", "git push *": "deny"}}}"#,
    )
    .unwrap();
    assert_eq!(shadowed(&t).len(), 1);
    // What it proposes does: build's own block.
    std::fs::write(
        t.project().join("opencode.json"),
        r#"{"permission": {"bash": {"*": "allow"}}, "agent": {"build": {"permission": {"bash": {"git push *": "deny"}}}}}"#,
    )
    .unwrap();
    let run = t.run(&[
        "explain",
        "--agent",
        "build",
        "--format",
        "json",
        "bash",
        "git push origin main",
    ]);
    assert_eq!(run.json()["action"], "deny", "{}", run.stdout);
    let still: Vec<String> = shadowed(&t)
        .iter()
        .flat_map(|f| f["agents"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    assert!(!still.contains(&"build".to_string()), "{still:?}");
}

#[test]
fn the_catch_all_help_names_a_later_allow_that_would_undo_asks() {
    // `"*": "ask"` written last overrides the denies (the finding) and, silently, the
    // `git commit *` ask, which it decides the same way. Moved first, `"git *": "allow"`,
    // written after that ask, would decide `git commit` (allow): the help names it
    // (fabiofalopes code.md:72:5 in round 3), and done as said, commits still ask.
    help_holds_revealing(
        "shadowed-deny",
        r#"{"permission": {"bash": {"git commit *": "ask", "git *": "allow", "rm *": "deny", "curl *": "deny", "dd *": "deny", "*": "ask"}}}"#,
        r#"then `bash` "git *" allow at opencode.json:1:49 still overrides `bash` "git commit *" ask at opencode.json:1:26, written before it: write it before that rule too"#,
        r#"{"permission": {"bash": {"*": "ask", "git *": "allow", "git commit *": "ask", "rm *": "deny", "curl *": "deny", "dd *": "deny"}}}"#,
        &[
            ("build", "bash", "git commit -m x", "ask"),
            ("build", "bash", "git status", "allow"),
            ("build", "bash", "rm x", "deny"),
            ("build", "bash", "ls", "ask"),
        ],
        // `git *` allowed where rm asks or is denied: `git clean -fdx` deletes unasked.
        &["deny-bypass"],
    );
}

#[test]
fn the_outside_edit_help_keeps_the_authors_pattern_after_a_deny_catch_all() {
    // edit is denied but for `/srv/plans/**`, which never matches (edit is asked with the
    // path relative to the worktree). `"../*": "allow"` after the deny catch-all (the old
    // help) would open every outside file external_directory lets through (wywysenarios
    // cycle.md:10:5 in round 3): the help keeps the pattern, relative (`../*plans/**`).
    let before = r#"{"agent": {"scribe": {"mode": "subagent", "permission": {"edit": {"*": "deny", "/srv/plans/**": "allow"}}}}}"#;
    let (help, _) = help_of("never-matches", before);
    assert!(!help.contains(r#""../*": "allow""#), "{help}");
    let relative = relative_allow(&help);
    assert!(
        relative.starts_with("../") && relative.ends_with("/srv/plans/**"),
        "{help}"
    );
    help_holds(
        "never-matches",
        before,
        r#"write `"external_directory": {"/srv/plans/*": "allow"}`, and under `edit`, "#,
        &format!(
            r#"{{"agent": {{"scribe": {{"mode": "subagent", "permission": {{"external_directory": {{"/srv/plans/*": "allow"}}, "edit": {{"*": "deny", "{relative}": "allow"}}}}}}}}}}"#
        ),
        &[
            ("scribe", "edit", "/srv/plans/a.md", "allow"),
            ("scribe", "edit", "/srv/other/a.md", "deny"),
            ("scribe", "edit", "src/main.ts", "deny"),
        ],
    );
}

/// The pattern a never-matches help writes under `edit` (`` under `edit`, `"P": "allow"` ``).
fn relative_allow(help: &str) -> String {
    let (_, rest) = help
        .split_once("under `edit`, `\"")
        .unwrap_or_else(|| panic!("no edit pattern in {help}"));
    rest.split('"').next().unwrap_or_default().to_string()
}

#[test]
fn the_outside_edit_help_for_files_anywhere_names_no_directory_pattern() {
    // `/**/PLAN-*.md`: the old help said `"external_directory": {"/*": "allow"}`, every
    // directory outside the project for every tool (hugo-sequier plan.md:17:5). There is
    // no directory to name: the help says so, and keeps the author's file pattern.
    let (help, suggested) = help_of(
        "never-matches",
        r#"{"permission": {"edit": {"*": "ask", "/**/PLAN-*.md": "allow"}}}"#,
    );
    assert!(!suggested, "{help}");
    assert!(!help.contains(r#"{"/*": "allow"}"#), "{help}");
    assert!(
        help.contains("OpenCode decides outside the project per directory, not per file name: name the directories these files are in"),
        "{help}"
    );
    assert!(help.contains(r#"`"../*/PLAN-*.md": "allow"`"#), "{help}");
}

#[test]
fn the_external_directory_help_does_not_void_an_earlier_deny_of_the_directory() {
    // `/srv/conf/**` denied, one file in it allowed: `external_directory` is asked per
    // directory, so "write `/srv/conf/*`" (the old help) opens the whole directory and
    // voids the deny (muggwoffin opencode.json:17:7). The trade-off, in words.
    let (help, suggested) = help_of(
        "never-matches",
        r#"{"permission": {"external_directory": {"/srv/conf/**": "deny", "/srv/conf/app.json": "allow"}}}"#,
    );
    assert!(!suggested, "{help}");
    assert!(!help.starts_with("write"), "{help}");
    assert!(
        help.contains("allowing this means allowing `/srv/conf/*`, every file there, which voids"),
        "{help}"
    );
}

#[test]
fn fix_says_each_count_once() {
    // After `--fix`, the narrowing fix left is counted by the fixable line; the "fixed"
    // line does not count it again (issue 37).
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"bash": {"git status*": "allow", "git *": "allow", "rm -rf *": "deny", "rm *": "allow"}}}"#,
    );
    let run = t.run(&["check", "--fix"]);
    assert!(
        run.stdout.ends_with(
            "1 fixable with `--fix --unsafe-fixes`\nfixed 1 finding in 1 file\n1 error\n"
        ),
        "{}",
        run.stdout
    );
}

/// A help text, tried: `before` has exactly one finding of `kind`, whose help contains
/// `proposes`; with the help applied (`after`), that finding is gone, nothing new is
/// reported at warning or above, and each `(agent, permission, input, action)` is decided
/// as stated.
fn help_holds(
    kind: &str,
    before: &str,
    proposes: &str,
    after: &str,
    decisions: &[(&str, &str, &str, &str)],
) {
    help_holds_revealing(kind, before, proposes, after, decisions, &[]);
}

/// [`help_holds`], where the repaired rule, now in effect, is rightly judged by another
/// kind (`revealed`): a deny that never matched cannot be bypassed; once it matches, it
/// can.
fn help_holds_revealing(
    kind: &str,
    before: &str,
    proposes: &str,
    after: &str,
    decisions: &[(&str, &str, &str, &str)],
    revealed: &[&str],
) {
    let t = Tree::new().file("project/opencode.json", before);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, kind);
    assert_eq!(found.len(), 1, "{kind}: {report:#}");
    // Some kinds say what to write in the message itself.
    let help = format!(
        "{} {}",
        found[0]["message"].as_str().unwrap_or_default(),
        found[0]["help"].as_str().unwrap_or_default()
    );
    assert!(help.contains(proposes), "{kind}: the help says {help:?}");
    let old: Vec<String> = serious(&report)
        .iter()
        .map(|f| f["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let t = Tree::new().file("project/opencode.json", after);
    let fixed = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&fixed, kind).is_empty(),
        "{kind}: still reported after its help: {fixed:#}"
    );
    for f in serious(&fixed) {
        assert!(
            old.iter().any(|o| f["id"] == o.as_str())
                || revealed.iter().any(|r| f["id"] == *r)
                || f["id"] == WALKED_AROUND,
            "{kind}: the help's config brings a new finding: {f:#}"
        );
    }
    decided_as(&t, kind, decisions);
}

/// Each `(agent, permission, input, action)` is decided as stated by `explain` on `t`.
fn decided_as(t: &Tree, kind: &str, decisions: &[(&str, &str, &str, &str)]) {
    for (agent, permission, input, action) in decisions {
        let run = t.run(&[
            "explain", "--agent", agent, "--format", "json", permission, input,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.json()["action"],
            *action,
            "{kind}: {agent} {permission} {input:?}: {}",
            run.stdout
        );
    }
}

#[test]
fn the_secret_readable_help_covers_every_secret_it_names() {
    // The finding names `.env.local` and `config/.env.production`; `"*.env": "ask"` alone
    // (the old help) left both readable. Applied whole, every named secret asks again.
    help_holds(
        "secret-readable",
        r#"{"permission": {"read": {"*": "allow"}}}"#,
        r#""*.env": "ask", "*.env.*": "ask""#,
        r#"{"permission": {"read": {"*": "allow", "*.env": "ask", "*.env.*": "ask"}}}"#,
        &[
            ("build", "read", ".env", "ask"),
            ("build", "read", ".env.local", "ask"),
            ("build", "read", "config/.env.production", "ask"),
            ("build", "read", "src/main.ts", "allow"),
        ],
    );
}

#[test]
fn the_secret_readable_help_for_a_tools_entry_holds() {
    // `tools: {read: true}` voids the `.env` asks; the entry only switches on a tool that is
    // on anyway, so the help removes it and OpenCode's own asks apply again.
    help_holds(
        "secret-readable",
        r#"{"agent": {"auditor": {"mode": "subagent", "tools": {"read": true}}}}"#,
        "remove the `tools` entry `read: true`",
        r#"{"agent": {"auditor": {"mode": "subagent"}}}"#,
        &[
            ("auditor", "read", ".env", "ask"),
            ("auditor", "read", "config/.env.production", "ask"),
            ("auditor", "read", ".env.example", "allow"),
            ("auditor", "read", "src/main.ts", "allow"),
        ],
    );
}

#[test]
fn the_secret_readable_help_names_the_same_agents_entry_in_every_file() {
    // The agent's opencode.json block and its markdown file both switch `read` on; the
    // merge keeps the markdown value, so the finding is there, but removing that entry
    // alone leaves the JSON one in force (seen blind in zhangyifei/hci-paper-exp). The
    // help names both; removing both brings OpenCode's `.env` asks back.
    let json =
        r#"{"agent": {"auditor": {"mode": "subagent", "tools": {"read": true, "bash": false}}}}"#;
    let md = "---\ndescription: audits\nmode: subagent\ntools:\n  read: true\n---\nAudit.\n";
    let t = Tree::new()
        .file("project/opencode.json", json)
        .file("project/.opencode/agent/auditor.md", md);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "secret-readable");
    assert_eq!(found.len(), 1, "{report:#}");
    let help = found[0]["help"].as_str().unwrap_or_default();
    assert!(
        help.contains(
            "remove the `tools` entry `read: true`, and the same entry at opencode.json:1:"
        ),
        "{help}"
    );
    let t = Tree::new()
        .file(
            "project/opencode.json",
            &json.replace(r#""read": true, "#, ""),
        )
        .file(
            "project/.opencode/agent/auditor.md",
            &md.replace("tools:\n  read: true\n", ""),
        );
    let fixed = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&fixed, "secret-readable").is_empty(),
        "{fixed:#}"
    );
    decided_as(
        &t,
        "secret-readable",
        &[
            ("auditor", "read", ".env", "ask"),
            ("auditor", "read", ".env.example", "allow"),
            ("auditor", "read", "src/main.ts", "allow"),
        ],
    );
}

#[test]
fn a_home_edit_deny_is_rewritten_for_edit_not_for_every_tool() {
    // The global config lets every tool reach ~/.local/share/nvim and denies editing
    // there with an absolute pattern, which never matches (seen blind in
    // alessiorocco/dotfiles). The advice is the pattern `edit` is asked with from any
    // project, not an `external_directory` deny, which would stop reading too.
    let config = |edit: &str| {
        format!(
            r#"{{"permission": {{"external_directory": {{"~/.local/share/nvim/**": "allow"}}, "edit": {{{edit}: "deny"}}}}}}"#
        )
    };
    let t = Tree::new().file(
        "home/.config/opencode/opencode.json",
        &config(r#""~/.local/share/nvim/**""#),
    );
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "never-matches");
    assert_eq!(found.len(), 1, "{report:#}");
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(r#"write "*/.local/share/nvim/*" under `edit` instead"#),
        "{message}"
    );
    let t = Tree::new().file(
        "home/.config/opencode/opencode.json",
        &config(r#""*/.local/share/nvim/*""#),
    );
    let fixed = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&fixed, "never-matches").is_empty(),
        "{fixed:#}"
    );
    let file = t.root().join("home/.local/share/nvim/lua/init.lua");
    let file = file.to_str().unwrap();
    decided_as(
        &t,
        "never-matches",
        &[
            ("build", "edit", file, "deny"),
            ("build", "read", file, "allow"),
        ],
    );
}

#[test]
fn the_overrides_help_repeats_only_what_the_agent_did_not_decide_itself() {
    // The agent allows everything, then decides `git push --force *` itself: only the
    // shared `rm -r *` ask is undone by its catch-all, and only that is to repeat (seen
    // blind in iceglober/harness-opencode, where repeating every shared rule made each
    // push the agent allows ask again).
    help_holds(
        "agent-overrides-shared",
        r#"{"permission": {"bash": {"*": "ask", "rm -r *": "ask", "git push --force *": "deny"}},
            "agent": {"shipper": {"mode": "subagent",
              "permission": {"bash": {"*": "allow", "git push --force *": "deny"}}}}}"#,
        r#"write "rm -r *": "ask" after its own rule under `bash`"#,
        r#"{"permission": {"bash": {"*": "ask", "rm -r *": "ask", "git push --force *": "deny"}},
            "agent": {"shipper": {"mode": "subagent",
              "permission": {"bash": {"*": "allow", "git push --force *": "deny", "rm -r *": "ask"}}}}}"#,
        &[
            ("shipper", "bash", "rm -r build", "ask"),
            ("shipper", "bash", "git push --force origin main", "deny"),
            ("shipper", "bash", "ls", "allow"),
        ],
    );
}

#[test]
fn an_agent_described_as_unrestricted_keeps_its_overrides_quietly() {
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"bash": {"*": "ask", "git push *": "deny"}, "read": "allow"},
            "agent": {"yolo": {"mode": "primary",
              "description": "Full permissions - no restrictions, no questions asked",
              "permission": {"bash": "allow", "read": "allow"}}}}"#,
    );
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&report, "agent-overrides-shared").is_empty(),
        "{report:#}"
    );
    // The shared `read: allow` still voids the `.env` asks of every other agent.
    let secret: Vec<_> = check_support::findings_of(&report, "secret-readable")
        .into_iter()
        .filter(|f| f["level"] == "warning")
        .collect();
    assert!(!secret.is_empty(), "{report:#}");
    assert!(
        secret
            .iter()
            .all(|f| !f["agents"].to_string().contains("yolo")),
        "{report:#}"
    );
}

#[test]
fn a_write_deny_moves_under_edit_alone_and_into_agents_that_allow_edit() {
    // A `write` block OpenCode never checks: its deny belongs under `edit`, without the
    // block's `"*": "allow"` (which would open plan), and repeated in the agent block
    // that allows `edit` later (seen blind in iceglober/harness-opencode, where renaming
    // the block opened plan and left build editing `.env`).
    // Once the deny is checked, bash writing the file walks around it: that is
    // `deny-bypass`'s to say.
    help_holds_revealing(
        "unchecked-permission",
        r#"{"permission": {"write": {"*.env": "deny"}},
            "agent": {"builder": {"mode": "subagent", "permission": {"edit": "allow"}}}}"#,
        r#"move this rule under `edit`, the permission the write tool asks: {"edit": {"*.env": "deny"}}"#,
        r#"{"permission": {"edit": {"*.env": "deny"}},
            "agent": {"builder": {"mode": "subagent", "permission": {"edit": {"*": "allow", "*.env": "deny"}}}}}"#,
        &[
            ("build", "edit", "prod.env", "deny"),
            ("builder", "edit", "prod.env", "deny"),
            ("builder", "edit", "src/a.ts", "allow"),
            ("plan", "edit", "src/a.ts", "deny"),
        ],
        // `git *` allowed where rm asks or is denied: `git clean -fdx` deletes unasked.
        &["deny-bypass"],
    );
}

#[test]
fn a_shared_edit_ask_keeps_plan_and_explore_refusing_after_the_help() {
    // `"edit": "ask"` for everyone turns plan's and explore's built-in edit deny into a
    // question (flagged by three blind expert readings); the block keeps them read-only
    // while every other agent is still asked.
    help_holds(
        "read-only-agent-writes",
        r#"{"permission": {"edit": "ask"}}"#,
        r#"{"agent": {"explore": {"permission": {"edit": "deny"}}, "plan": {"permission": {"edit": {"*": "deny", ".opencode/plans/*.md": "allow"}}}}}"#,
        r#"{"permission": {"edit": "ask"},
            "agent": {"explore": {"permission": {"edit": "deny"}}, "plan": {"permission": {"edit": {"*": "deny", ".opencode/plans/*.md": "allow"}}}}}"#,
        &[
            ("plan", "edit", "src/main.ts", "deny"),
            ("plan", "edit", ".opencode/plans/p.md", "allow"),
            ("explore", "edit", "src/main.ts", "deny"),
            ("build", "edit", "src/main.ts", "ask"),
        ],
    );
}

#[test]
fn the_secret_readable_help_for_a_tools_entry_over_a_shared_deny_holds() {
    // Where removing the entry would let a shared `read` deny decide, the help replaces it
    // by the `permission` key (which replaces the entry), keeping `.env.example` readable.
    help_holds(
        "secret-readable",
        r#"{"permission": {"read": "deny"},
            "agent": {"auditor": {"mode": "subagent", "tools": {"read": true}}}}"#,
        r#""permission": {"read": {"*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow"}}"#,
        r#"{"permission": {"read": "deny"},
            "agent": {"auditor": {"mode": "subagent", "tools": {"read": true},
            "permission": {"read": {"*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow"}}}}}"#,
        &[
            ("auditor", "read", ".env", "ask"),
            ("auditor", "read", "config/.env.production", "ask"),
            ("auditor", "read", ".env.example", "allow"),
            ("auditor", "read", "src/main.ts", "allow"),
        ],
    );
}

#[test]
fn the_unusable_allow_help_makes_the_tool_visible_and_holds() {
    help_holds_revealing(
        "unusable-allow",
        r#"{"permission": {"bash": {"git *": "allow", "*": "deny"}}}"#,
        "put the `* deny` before the allows",
        r#"{"permission": {"bash": {"*": "deny", "git *": "allow"}}}"#,
        &[
            ("build", "bash", "git status", "allow"),
            ("build", "bash", "rm -rf /", "deny"),
        ],
        // `git *` allowed where rm asks or is denied: `git clean -fdx` deletes unasked.
        &["deny-bypass"],
    );
}

/// A proven suggestion, applied: `before` has exactly one finding of `kind`, which carries
/// a suggestion whose text contains `writes`; its edits applied to `project/opencode.json`
/// (the file it names), the finding is gone, nothing new is reported at warning or above,
/// and each `(agent, permission, input, action)` is decided as stated.
fn suggestion_holds(
    kind: &str,
    before: &str,
    writes: &str,
    decisions: &[(&str, &str, &str, &str)],
) {
    let t = Tree::new().file("project/opencode.json", before);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, kind);
    assert_eq!(found.len(), 1, "{kind}: {report:#}");
    let s = &found[0]["suggestions"][0];
    assert!(
        s["text"].as_str().unwrap_or_default().contains(writes),
        "{kind}: the suggestion writes {s:#}"
    );
    assert_eq!(s["file"], "opencode.json", "{s:#}");
    let text = check_support::apply_suggestion(before, s);
    let old: Vec<String> = serious(&report)
        .iter()
        .map(|f| f["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let t = Tree::new().file("project/opencode.json", &text);
    let fixed = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&fixed, kind).is_empty(),
        "{kind}: still reported after its suggestion ({text}): {fixed:#}"
    );
    for f in serious(&fixed) {
        assert!(
            old.iter().any(|o| f["id"] == o.as_str()) || f["id"] == WALKED_AROUND,
            "{kind}: the suggestion brings a new finding: {f:#}"
        );
    }
    decided_as(&t, kind, decisions);
}

#[test]
fn the_deny_bypass_suggestion_denies_the_readers_and_keeps_bash_allowed() {
    // The old help put the whole of bash behind a question (`"bash": {"*": "ask"}`) in a
    // config that allows bash on purpose; the suggestion denies the commands that read
    // the file, after the allow, and nothing else.
    suggestion_holds(
        "deny-bypass",
        r#"{"permission": {"read": {"*.env": "deny"}, "bash": "allow"}}"#,
        r#""cat *.env*": "deny""#,
        &[
            ("build", "bash", "cat .env", "deny"),
            ("build", "bash", "head config/.env", "deny"),
            ("build", "bash", "ls", "allow"),
            ("build", "bash", "cat README.md", "allow"),
            ("build", "read", ".env", "deny"),
        ],
    );
}

#[test]
fn the_write_mode_suggestion_asks_for_the_mode_at_the_end_of_the_block() {
    // The proven suggestion writes what the help says, after the allow in its block.
    suggestion_holds(
        "deny-bypass",
        r#"{"permission": {"edit": "ask", "bash": {"*": "ask", "sed *": "allow", "ls *": "allow"}}}"#,
        r#""sed -i*": "ask""#,
        &[
            ("build", "bash", "sed -i s/a/b/ src/main.ts", "ask"),
            ("build", "bash", "sed -n 1,20p src/main.ts", "allow"),
            ("build", "bash", "ls -la", "allow"),
        ],
    );
}

#[test]
fn the_write_mode_help_asks_for_the_mode_alone_and_holds() {
    // `sed *` allowed under an edit ask: `sed -i` edits without the prompt. The help asks
    // for `sed -i` alone; the rest of sed stays allowed.
    help_holds(
        "deny-bypass",
        r#"{"permission": {"edit": "ask", "bash": {"*": "ask", "sed *": "allow"}}}"#,
        r#""sed -i*": "ask", "sed * -i*": "ask""#,
        r#"{"permission": {"edit": "ask", "bash": {"*": "ask", "sed *": "allow", "sed -i*": "ask", "sed * -i*": "ask"}}}"#,
        &[
            ("build", "bash", "sed -i s/a/b/ src/main.ts", "ask"),
            ("build", "bash", "sed -E -i s/a/b/ src/main.ts", "ask"),
            ("build", "bash", "sed -n 1,20p src/main.ts", "allow"),
        ],
    );
    // `find *` allowed while `rm` asks: `find … -delete` deletes unasked.
    help_holds(
        "deny-bypass",
        r#"{"permission": {"bash": {"*": "ask", "find *": "allow", "rm *": "ask"}}}"#,
        r#""find *-delete*": "ask", "find *-exec*": "ask""#,
        r#"{"permission": {"bash": {"*": "ask", "find *": "allow", "rm *": "ask", "find *-delete*": "ask", "find *-exec*": "ask"}}}"#,
        &[
            ("build", "bash", "find . -name '*.log' -delete", "ask"),
            ("build", "bash", "find . -name x -exec rm {} +", "ask"),
            ("build", "bash", "find . -name '*.ts'", "allow"),
        ],
    );
}

#[test]
fn the_open_allow_list_help_puts_a_catch_all_first_and_holds() {
    help_holds(
        "open-allow-list",
        r#"{"permission": {"bash": "allow"}, "agent": {"reviewer": {"mode": "subagent", "permission": {"edit": "deny", "bash": {"git diff*": "allow", "git log*": "allow"}}}}}"#,
        r#""bash": {"*": "deny", "git diff*": "allow""#,
        r#"{"permission": {"bash": "allow"}, "agent": {"reviewer": {"mode": "subagent", "permission": {"edit": "deny", "bash": {"*": "deny", "git diff*": "allow", "git log*": "allow"}}}}}"#,
        &[
            ("reviewer", "bash", "rm -rf src", "deny"),
            ("reviewer", "bash", "git diff HEAD~1", "allow"),
            ("reviewer", "bash", "git log --oneline", "allow"),
            ("build", "bash", "rm -rf src", "allow"),
        ],
    );
}

#[test]
fn the_agent_overrides_shared_suggestion_repeats_the_list_with_its_exceptions() {
    // The agent's own `bash: allow` undoes the shared asks; repeating them after it keeps
    // the shared exception (`git push --dry-run *` allow) and leaves the shared catch-all
    // (`*` ask), which the agent overrides on purpose, out.
    suggestion_holds(
        "agent-overrides-shared",
        r#"{"permission": {"bash": {"*": "ask", "git push *": "ask", "git push --dry-run *": "allow", "rm *": "deny"}}, "agent": {"build": {"permission": {"bash": "allow"}}}}"#,
        r#""git push *": "ask", "git push --dry-run *": "allow", "rm *": "deny""#,
        &[
            ("build", "bash", "rm -rf build", "deny"),
            ("build", "bash", "git push origin main", "ask"),
            ("build", "bash", "git push --dry-run origin", "allow"),
            ("build", "bash", "ls", "allow"),
        ],
    );
}

#[test]
fn the_self_modification_help_asks_before_config_edits_and_holds() {
    // Written last in `edit`, the two asks cover the config files and nothing else.
    help_holds(
        "self-modification",
        r#"{"permission": {"bash": {"*": "deny", "git *": "allow"}}}"#,
        r#"last in `edit`: {"opencode.json*": "ask", ".opencode/*": "ask"}"#,
        r#"{"permission": {"bash": {"*": "deny", "git *": "allow"}, "edit": {"opencode.json*": "ask", ".opencode/*": "ask"}}}"#,
        &[
            ("build", "edit", "opencode.json", "ask"),
            ("build", "edit", ".opencode/agents/review.md", "ask"),
            ("build", "edit", "src/main.ts", "allow"),
        ],
    );
}

#[test]
fn the_legacy_tools_help_where_no_fix_is_offered_holds() {
    // A `tools` entry beside a global `permission` catch-all gets no fix (its translation
    // would move, so a decision would change); the help's permission entry, written in the
    // project, is not undone by the catch-all.
    let global = r#"{"permission": {"*": "allow"}}"#;
    let t = Tree::new()
        .file("home/.config/opencode/opencode.json", global)
        .file("project/opencode.json", r#"{"tools": {"bash": false}}"#);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "legacy-tools");
    assert_eq!(found.len(), 1, "{report:#}");
    let help = found[0]["help"].as_str().unwrap_or_default();
    assert!(help.contains(r#""bash": "deny""#), "{help}");
    // Undone by a shared rule of another file, the entry is still fixed by writing it as
    // a permission (it comes after that rule); the help says so, not "change that rule".
    assert!(!help.contains("changes nothing"), "{help}");
    let decide = |t: &Tree, input: &str| {
        t.run(&[
            "explain", "--agent", "build", "--format", "json", "bash", input,
        ])
        .json()["action"]
            .clone()
    };
    let was = decide(&t, "git status");
    let t = Tree::new()
        .file("home/.config/opencode/opencode.json", global)
        .file(
            "project/opencode.json",
            r#"{"permission": {"bash": "deny"}}"#,
        );
    let after = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(check_support::findings_of(&after, "legacy-tools").is_empty());
    // Nothing new at warning or above (the global catch-all's own finding stays).
    let ids = |r: &serde_json::Value| {
        let mut v: Vec<String> = serious(r)
            .iter()
            .map(|f| f["id"].as_str().unwrap_or_default().to_string())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let mut was_ids = ids(&report);
    was_ids.retain(|k| k != "legacy-tools");
    assert_eq!(ids(&after), was_ids, "{after:#}");
    // The entry was undone (the finding's witness is allowed); written as a permission,
    // it decides what `bash: false` meant.
    assert_eq!(was, found[0]["witnesses"][0]["action"], "{:#}", found[0]);
    assert_eq!(was, "allow");
    assert_eq!(decide(&t, "git status"), "deny");
}

#[test]
fn the_unchecked_permission_advice_is_checked_once_applied() {
    // `write` is checked as `edit`; an MCP server's tools as `SERVER_TOOL`.
    help_holds(
        "unchecked-permission",
        r#"{"permission": {"write": {"src/*": "deny"}}}"#,
        "use `edit`",
        r#"{"permission": {"edit": {"src/*": "deny"}}}"#,
        &[
            ("build", "edit", "src/main.ts", "deny"),
            ("build", "edit", "README.md", "allow"),
        ],
    );
    help_holds(
        "unchecked-permission",
        r#"{"permission": {"mymcp": "deny"}}"#,
        "write `mymcp_*`",
        r#"{"permission": {"mymcp_*": "deny"}}"#,
        &[("build", "mymcp_search", "", "deny")],
    );
}

#[test]
fn the_unknown_agent_key_advice_switches_the_tool_off() {
    // (For `build`, which may start subagents, the same deny also brings a
    // delegation-escalation warning: general still fetches. That is the finding's own
    // claim about the agent's design, not the advice's doing.)
    let before = r#"{"agent": {"general": {"webfetch": false}}}"#;
    let t = Tree::new().file("project/opencode.json", before);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "unknown-agent-key");
    assert_eq!(found.len(), 1, "{report:#}");
    let proposed = first_object(found[0]["message"].as_str().unwrap_or_default());
    let mut after: serde_json::Value = serde_json::from_str(before).unwrap();
    after["agent"]["general"]
        .as_object_mut()
        .unwrap()
        .remove("webfetch");
    merge(&mut after["agent"]["general"], &proposed);
    help_holds(
        "unknown-agent-key",
        before,
        r#"{"permission": {"webfetch": "deny"}}"#,
        &after.to_string(),
        &[
            ("general", "webfetch", "https://example.com", "deny"),
            ("build", "webfetch", "https://example.com", "allow"),
        ],
    );
}

#[test]
fn the_never_matches_advice_matches_what_was_meant() {
    // `**/` is not a globstar: the proposed pattern matches the top level too. Once the
    // deny matches `.env`, `sed -i` through bash is the next way around it (deny-bypass).
    help_holds_revealing(
        "never-matches",
        r#"{"permission": {"edit": {"**/.env": "deny"}}}"#,
        r#"write "*.env""#,
        r#"{"permission": {"edit": {"*.env": "deny"}}}"#,
        &[
            ("build", "edit", ".env", "deny"),
            ("build", "edit", "config/.env", "deny"),
            ("build", "edit", "src/main.ts", "allow"),
        ],
        // `git *` allowed where rm asks or is denied: `git clean -fdx` deletes unasked.
        &["deny-bypass"],
    );
    // An exact deny of a command that takes operands: the proposed pattern denies them.
    // Once it matches, `rm -fr build` is the next way around it (deny-too-narrow).
    help_holds_revealing(
        "never-matches",
        r#"{"permission": {"bash": {"*": "allow", "rm -rf": "deny"}}}"#,
        r#"write "rm -rf *""#,
        r#"{"permission": {"bash": {"*": "allow", "rm -rf *": "deny"}}}"#,
        &[
            ("build", "bash", "rm -rf build", "deny"),
            ("build", "bash", "rm -rf", "deny"),
            ("build", "bash", "ls", "allow"),
        ],
        &["deny-too-narrow"],
    );
    // A command that acts by itself, denied bare: whoever writes it means every push.
    help_holds(
        "never-matches",
        r#"{"permission": {"bash": {"*": "allow", "git push": "deny"}}}"#,
        r#"write "git push *""#,
        r#"{"permission": {"bash": {"*": "allow", "git push *": "deny"}}}"#,
        &[
            ("build", "bash", "git push origin main", "deny"),
            ("build", "bash", "git push", "deny"),
            ("build", "bash", "git status", "allow"),
        ],
    );
    // An exact ask under a catch-all ask of nothing: the command with operands asks too.
    // An allow the agent needs that never applies: writes to /srv/scratch are denied by
    // its own `*` deny. Outside the project `external_directory` is asked with the
    // directory, then `edit` with the worktree-relative path: both forms the help gives,
    // the second keeping the author's pattern (`../*` alone would open every outside file).
    let before = r#"{"agent": {"scratch": {"mode": "subagent",
            "permission": {"edit": {"*": "deny", "/srv/scratch/**": "allow"}}}}}"#;
    let relative = relative_allow(&help_of("never-matches", before).0);
    assert!(relative.ends_with("/srv/scratch/**"), "{relative}");
    help_holds(
        "never-matches",
        before,
        &format!(
            r#""external_directory": {{"/srv/scratch/*": "allow"}}`, and under `edit`, `"{relative}": "allow"`"#
        ),
        &format!(
            r#"{{"agent": {{"scratch": {{"mode": "subagent",
            "permission": {{"external_directory": {{"/srv/scratch/*": "allow"}},
                           "edit": {{"*": "deny", "{relative}": "allow"}}}}}}}}}}"#
        ),
        &[
            ("scratch", "edit", "/srv/scratch/x/notes.md", "allow"),
            ("scratch", "edit", "src/main.ts", "deny"),
        ],
    );
    // `~` is asked as `HOME/…/*`: the help's `~/*` is. Once it matches, the whole home
    // directory is open, `~/.ssh` included (external-open says so).
    help_holds_revealing(
        "never-matches",
        r#"{"permission": {"external_directory": {"~": "allow"}}}"#,
        r#"write "~/*""#,
        r#"{"permission": {"external_directory": {"~/*": "allow"}}}"#,
        &[],
        &["external-open"],
    );
    // No `default` keyword: the catch-all is `*`, written first so the rest are exceptions.
    help_holds_revealing(
        "never-matches",
        r#"{"permission": {"bash": {"git *": "allow", "default": "ask"}}}"#,
        r#"write "*": "ask" first in this block"#,
        r#"{"permission": {"bash": {"*": "ask", "git *": "allow"}}}"#,
        &[
            ("build", "bash", "python3 main.py", "ask"),
            ("build", "bash", "git status", "allow"),
        ],
        // `git *` allowed where rm asks or is denied: `git clean -fdx` deletes unasked.
        &["deny-bypass"],
    );
    // Once it matches operands, an "Always" to `git push x` can undo it (the next finding).
    help_holds_revealing(
        "never-matches",
        r#"{"permission": {"bash": {"*": "ask", "git status *": "allow", "git push --force": "deny"}}}"#,
        r#"write "git push --force *""#,
        r#"{"permission": {"bash": {"*": "ask", "git status *": "allow", "git push --force *": "deny"}}}"#,
        &[
            ("build", "bash", "git push --force origin main", "deny"),
            ("build", "bash", "git push --force", "deny"),
            ("build", "bash", "git push origin main", "ask"),
        ],
        &["always-overrides-deny"],
    );
}

#[test]
fn unsafe_fixes_apply_the_proven_suggestion_as_printed() {
    // No fix of its own repairs a deny-bypass; with `--unsafe-fixes` the suggestion `check`
    // prints (proven, narrowing only) is applied, exactly as printed.
    let before = r#"{"permission": {"read": {"*.env": "deny"}, "bash": "allow"}}"#;
    let t = Tree::new().file("project/opencode.json", before);
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "deny-bypass");
    assert_eq!(found.len(), 1, "{report:#}");
    let printed = check_support::apply_suggestion(before, &found[0]["suggestions"][0]);
    // Plain `--fix` applies only safe fixes and says a narrowing one waits.
    let plain = t.run(&["check", "--fix"]);
    assert_eq!(
        std::fs::read_to_string(t.project().join("opencode.json")).unwrap(),
        before,
        "{}",
        plain.stdout
    );
    assert!(plain.stdout.contains("--unsafe-fixes"), "{}", plain.stdout);
    let run = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert!(matches!(run.code, 0 | 1), "{}\n{}", run.stdout, run.stderr);
    let fixed = std::fs::read_to_string(t.project().join("opencode.json")).unwrap();
    assert_eq!(fixed, printed, "{}", run.stdout);
    let again = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&again, "deny-bypass").is_empty(),
        "{again:#}"
    );
    decided_as(
        &t,
        "deny-bypass",
        &[
            ("build", "bash", "cat .env", "deny"),
            ("build", "bash", "ls", "allow"),
            ("build", "read", ".env", "deny"),
        ],
    );
}

#[test]
fn a_shadowed_exact_command_deny_is_told_to_take_its_operands_too() {
    // Moved after the allow, `"git push": "deny"` would deny the bare command alone: the
    // help says to write `git push *`, which denies `git push origin main` too.
    help_holds(
        "shadowed-deny",
        r#"{"permission": {"bash": {"git push": "deny", "*": "allow"}}}"#,
        r#"write it as "git push *""#,
        r#"{"permission": {"bash": {"*": "allow", "git push *": "deny"}}}"#,
        &[
            ("build", "bash", "git push origin main", "deny"),
            ("build", "bash", "git push", "deny"),
            ("build", "bash", "git status", "allow"),
        ],
    );
}

#[test]
fn a_catch_all_written_last_names_the_broader_allow_that_would_still_override() {
    // Moving `*` first is not enough: `git *` allow, written after the git denies, would
    // then decide them. The help names it, and following it holds.
    help_holds_revealing(
        "shadowed-deny",
        r#"{"permission": {"bash": {"git push *": "deny", "git reset *": "deny", "rm *": "deny", "git *": "allow", "*": "ask"}}}"#,
        r#"then `bash` "git *" allow"#,
        r#"{"permission": {"bash": {"*": "ask", "git *": "allow", "git push *": "deny", "git reset *": "deny", "rm *": "deny"}}}"#,
        &[
            ("build", "bash", "git push origin main", "deny"),
            ("build", "bash", "git reset --hard", "deny"),
            ("build", "bash", "git status", "allow"),
            ("build", "bash", "rm x", "deny"),
            ("build", "bash", "ls", "ask"),
        ],
        // `git *` allowed where rm asks or is denied: `git clean -fdx` deletes unasked.
        &["deny-bypass"],
    );
}

#[test]
fn a_rule_over_every_permission_is_told_what_to_repeat_per_permission() {
    // The agent's own `"*": "allow"` undoes the shared `.env` deny; the help lists, per
    // permission, the rules to repeat with their exception, and following it holds.
    help_holds(
        "agent-overrides-shared",
        r#"{"permission": {"read": {"*.env*": "deny", "*.env.example": "allow"}}, "agent": {"build": {"permission": {"*": "allow"}}}}"#,
        r#"under `read` "*.env*": "deny", "*.env.example": "allow""#,
        r#"{"permission": {"read": {"*.env*": "deny", "*.env.example": "allow"}}, "agent": {"build": {"permission": {"*": "allow", "read": {"*.env*": "deny", "*.env.example": "allow"}}}}}"#,
        &[
            ("build", "read", ".env", "deny"),
            ("build", "read", ".env.example", "allow"),
            ("build", "bash", "ls", "allow"),
        ],
    );
}

#[test]
fn a_narrow_shared_edit_allow_gets_the_choice_in_words_not_a_block() {
    // `docs/plans/*.md` allowed for everyone: plan writing its plans there is likely the
    // point, so the help says the choice and proposes no block taking it away.
    let t = Tree::new().file(
        "project/opencode.json",
        r#"{"permission": {"edit": {"docs/plans/*.md": "allow"}}}"#,
    );
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "read-only-agent-writes");
    assert!(!found.is_empty(), "{report:#}");
    for f in found {
        let help = f["help"].as_str().unwrap_or_default();
        assert!(help.contains("\"docs/plans/*.md\""), "{help}");
        assert!(help.contains("nothing needs to change"), "{help}");
        assert!(!help.contains("{\"agent\""), "{help}");
    }
}

#[test]
fn a_fix_in_the_global_config_is_never_a_silent_skip() {
    // The shadowed deny in the global config, kept in dotfiles behind a link (stow,
    // chezmoi) with mode 0600. `check` marks the fix at the finding and says how to apply
    // it there; `--fix` alone writes nothing outside the project and says so again;
    // `--diff --global` shows it (absolute paths) and writes nothing; `--fix --global`
    // writes it through the link, keeping the mode.
    let t = Tree::new()
        .file("dotfiles/opencode.json", CONFIG)
        .file("project/opencode.json", "{}\n");
    let target = t.root().join("dotfiles/opencode.json");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let global = t.root().join("home/.config/opencode/opencode.json");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &global).unwrap();
    let how = "(narrowing: `--fix --unsafe-fixes --global`; the file is outside the project)";
    let before = snapshot(t.root());

    let check = t.run(&["check"]);
    assert_eq!(check.code, 1, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains(&format!(
            "fix: move the catch-all to the top of its block {how}"
        )),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains(
            "outside the project (global config): 1 fixable with `--fix --unsafe-fixes --global`"
        ),
        "{}",
        check.stdout
    );

    let alone = t.run(&["check", "--fix", "--unsafe-fixes"]);
    assert_eq!(alone.code, 1, "{}\n{}", alone.stdout, alone.stderr);
    assert!(alone.stdout.contains(how), "{}", alone.stdout);
    assert!(alone.stdout.contains("nothing fixed"), "{}", alone.stdout);
    assert_eq!(snapshot(t.root()), before);

    let diff = t.run(&["check", "--diff", "--unsafe-fixes", "--global"]);
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert!(
        diff.stdout
            .starts_with("--- $ROOT/dotfiles/opencode.json\n+++ $ROOT/dotfiles/opencode.json\n"),
        "{}",
        diff.stdout
    );
    assert_eq!(snapshot(t.root()), before);

    let fixed = t.run(&["check", "--fix", "--unsafe-fixes", "--global"]);
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
    assert!(
        fixed.stdout.contains("fixed 1 finding in 1 file"),
        "{}",
        fixed.stdout
    );
    assert!(
        std::fs::symlink_metadata(&global)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(mode(&target), 0o600);
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(
        text.find("\"*\"").unwrap() < text.find("\"rm -rf *\"").unwrap(),
        "{text}"
    );
    // What `--diff` showed is what was written.
    let minus: Vec<&str> = diff
        .stdout
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    let plus: Vec<&str> = diff
        .stdout
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert!(!plus.is_empty());
    for l in &plus {
        assert!(text.contains(&l[1..]), "{l}\n{text}");
    }
    for l in &minus {
        assert!(CONFIG.contains(&l[1..]), "{l}");
    }
    // Nothing to fix is left anywhere, and the project's file is untouched.
    assert_eq!(
        std::fs::read_to_string(t.project().join("opencode.json")).unwrap(),
        "{}\n"
    );
    let again = t.run(&["check", "--diff", "--unsafe-fixes", "--global"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
}

#[test]
fn global_and_project_only_are_refused_together() {
    let t = Tree::new().file("project/opencode.json", CONFIG);
    let run = t.run(&["check", "--fix", "--global", "--project-only"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--project-only"), "{}", run.stderr);
}

#[test]
fn the_dead_rule_help_in_an_agent_file_moves_it_there() {
    // The top-level block writes the same patterns as the agent file (blind fresh-5:
    // idsanchezf): it is another layer, so the agent file's order is its own and the help
    // must not send the reader to opencode.json (OpenCode 1.18.34 lists the agent's rules
    // in its file's order, after the shared ones).
    let shared = r#"{"agent": {"leader": {"mode": "primary"}}, "permission": {"bash": {"git *": "allow", "*": "ask"}}}"#;
    let agent = |bash: &str| {
        format!("---\ndescription: leads\nmode: primary\npermission:\n  bash:\n{bash}---\nLead.\n")
    };
    let t = Tree::new().file("project/opencode.json", shared).file(
        "project/.opencode/agents/leader.md",
        &agent("    git *: allow\n    \"*\": ask\n"),
    );
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let in_agent: Vec<serde_json::Value> = check_support::findings_of(&report, "dead-rule")
        .into_iter()
        .filter(|f| {
            f["source"]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("leader.md"))
        })
        .collect();
    assert_eq!(in_agent.len(), 1, "{report:#}");
    let help = in_agent[0]["help"].as_str().unwrap_or_default();
    assert!(!help.contains("changes nothing"), "{help}");
    assert!(!help.contains("opencode.json"), "{help}");
    // Moved in the agent file, the allow decides.
    let t = Tree::new().file("project/opencode.json", shared).file(
        "project/.opencode/agents/leader.md",
        &agent("    \"*\": ask\n    git *: allow\n"),
    );
    decided_as(
        &t,
        "dead-rule",
        &[("leader", "bash", "git status", "allow")],
    );
}

#[test]
fn the_broken_frontmatter_help_gives_a_lost_block_its_key() {
    // A second `mode:` where `tools:` was meant (blind fresh-5 B: sightes): merging the two
    // `mode` entries would leave the indented lines keyless; the help's key loads them.
    let agent = |line5: &str| {
        format!(
            "---\ndescription: Read-only reviewer.\nmode: subagent\ntemperature: 0.2\n{line5}\n  bash: false\n  write: false\n  edit: false\n---\nReview.\n"
        )
    };
    let t = Tree::new().file(
        "project/.opencode/agents/reviewer.md",
        &agent("mode: subagent"),
    );
    let report = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    let found = check_support::findings_of(&report, "broken-frontmatter");
    assert_eq!(found.len(), 1, "{report:#}");
    let help = found[0]["help"].as_str().unwrap_or_default();
    assert!(help.contains("write `tools:` on line 5"), "{help}");
    let t = Tree::new().file("project/.opencode/agents/reviewer.md", &agent("tools:"));
    let fixed = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(
        check_support::findings_of(&fixed, "broken-frontmatter").is_empty(),
        "{fixed:#}"
    );
    decided_as(
        &t,
        "broken-frontmatter",
        &[("reviewer", "edit", "src/main.ts", "deny")],
    );
}

#[test]
fn the_bare_allow_help_keeps_the_programs_write_modes_as_they_are() {
    // A read-only reviewer allows bare `cat` under `"*": "deny"` (blind fresh-5 B:
    // pixel48): `cat *` alone would let `cat x > f` write and `cat .env` print, both denied
    // today; the help's entries keep them denied, and no new finding appears.
    let agent = r#"{"agent": {"review": {"mode": "subagent", "permission": {"edit": "deny", "bash": {"*": "deny", "cat": "allow"}}}}}"#;
    help_holds(
        "never-matches",
        agent,
        r#"follow it with "cat *>*": "deny", "cat *.env*": "deny""#,
        r#"{"agent": {"review": {"mode": "subagent", "permission": {"edit": "deny", "bash": {"*": "deny", "cat *": "allow", "cat *>*": "deny", "cat *.env*": "deny"}}}}}"#,
        &[
            ("review", "bash", "cat README.md", "allow"),
            ("review", "bash", "cat x > src/main.ts", "deny"),
            ("review", "bash", "cat .env", "deny"),
        ],
    );
}

#[test]
fn the_edit_scope_help_asks_for_code_and_keeps_the_documents() {
    // A docs writer that "never touches code" with `edit: allow` (frontmatter) and an
    // architect with the same in a JSON block: the help's map, written as it says, leaves
    // no finding and nothing new, asks for `src/main.ts` and still allows the documents.
    let md = "---\ndescription: Writes the documentation.\nmode: subagent\npermission:\n  edit: allow\n---\nYou write the docs. Never touch code.\n";
    let json = r#"{"agent": {"architect": {"mode": "subagent", "prompt": "You plan. You do not implement production code.", "permission": {"edit": "allow"}}}}"#;
    let t = Tree::new()
        .file("project/.opencode/agents/docs-writer.md", md)
        .file("project/opencode.json", json);
    let run = t.run(&["check", "--format", "json", "--fail-on", "never"]);
    let found = check_support::findings_of(&run.json(), "edit-scope");
    assert_eq!(found.len(), 2, "{}", run.stdout);
    for f in &found {
        let help = f["help"].as_str().unwrap_or_default();
        assert!(help.contains("\"*\"") && help.contains("ask"), "{help}");
        assert!(help.contains("*.md") && help.contains("allow"), "{help}");
    }
    let md = "---\ndescription: Writes the documentation.\nmode: subagent\npermission:\n  edit:\n    \"*\": ask\n    \"*.md\": allow\n---\nYou write the docs. Never touch code.\n";
    let json = r#"{"agent": {"architect": {"mode": "subagent", "prompt": "You plan. You do not implement production code.", "permission": {"edit": {"*": "ask", "*.md": "allow"}}}}}"#;
    let t = Tree::new()
        .file("project/.opencode/agents/docs-writer.md", md)
        .file("project/opencode.json", json);
    let after = t
        .run(&["check", "--format", "json", "--fail-on", "never"])
        .json();
    assert!(serious(&after).is_empty(), "{after:#}");
    decided_as(
        &t,
        "edit-scope",
        &[
            ("docs-writer", "edit", "src/main.ts", "ask"),
            ("docs-writer", "edit", "docs/guide.md", "allow"),
            ("architect", "edit", "src/main.ts", "ask"),
            ("architect", "edit", "README.md", "allow"),
        ],
    );
}
