//! The newer finding kinds on in-memory machines, case by case: what they claim, where they
//! point, and the inputs they prove it with (semantics: spec §3.4–3.5, §5.4, §6).

use permaudit::checks::{Finding, run};
use permaudit::glob::Platform;
use permaudit::host::MemHost;
use permaudit::project::Project;
use std::path::Path;

fn project(config: &str, env: &[(&str, &str)]) -> Project {
    let mut host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file("/w/p/opencode.json", config);
    for (k, v) in env {
        host = host.var(k, v);
    }
    Project::load(&host, Path::new("/w/p"), Platform::Unix)
        .unwrap_or_else(|f| panic!("{:?}", f.error))
}

fn of<'a>(findings: &'a [Finding], id: &str, agent: &str) -> Vec<&'a Finding> {
    findings
        .iter()
        .filter(|f| f.id == id && (f.agents.is_empty() || f.agents.iter().any(|a| a == agent)))
        .collect()
}

/// The text a finding points at.
fn at(p: &Project, f: &Finding) -> String {
    let l = f.loc.unwrap();
    p.loaded.sources.get(l.source).text[l.span.start..l.span.end].to_string()
}

#[test]
fn write_and_edit_false_together_are_one_note_at_the_entry_whose_rule_it_is() {
    // The common idiom: `write` and `edit` both false are one rule (`edit` "*" deny); one
    // finding, at `edit` (the entry that decides), naming `write` as the same rule. Set to
    // different values, the replaced entry is still its own finding (it changes nothing).
    // (Bash off: with bash free, `deny-bypass` reports the switch as walked around, a
    // warning at the same entry.)
    let cfg = r#"{"agent":{"reviewer":{"mode":"subagent","tools":{"write":false,"edit":false},"permission":{"bash":"deny"}}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let notes = of(&f, "legacy-tools", "reviewer");
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_eq!(at(&p, notes[0]), "\"edit\"");
    assert!(
        notes[0]
            .message
            .contains("entries `write: false`, `edit: false` are one permission"),
        "{}",
        notes[0].message
    );
    assert_eq!(notes[0].related.len(), 1);
    let differ = r#"{"agent":{"reviewer":{"mode":"subagent","tools":{"write":false,"edit":true},"permission":{"bash":"deny"}}}}"#;
    let p = project(differ, &[]);
    let f = run(&p);
    let notes = of(&f, "legacy-tools", "reviewer");
    assert_eq!(notes.len(), 2, "{notes:#?}");
    assert!(
        notes.iter().any(|n| n
            .message
            .contains("`write: false` (`edit` \"*\" deny) produces no rule")),
        "{notes:#?}"
    );
}

#[test]
fn legacy_tools_reports_translation_landing_and_replacement() {
    let cfg = r#"{"tools":{"write":false,"patch":true,"bash":false,"webfetch":false},
        "permission":{"bash":{"git *":"allow"},"*":"allow"},
        "agent":{"plan":{"tools":{"read":false,"grep":false},"permission":{"read":"ask"}}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let build = of(&f, "legacy-tools", "build");
    let by = |key: &str| {
        build
            .iter()
            .find(|f| at(&p, f) == format!("\"{key}\""))
            .copied()
            .unwrap()
    };
    // write then patch: both set `edit`; the first fixes the position, the last the value.
    assert!(
        by("write")
            .message
            .contains("silently replaced by the later top-level `tools` entry `patch: true`"),
        "{}",
        by("write").message
    );
    assert!(
        by("patch")
            .message
            .contains("translated to the rule `edit` \"*\" allow"),
        "{}",
        by("patch").message
    );
    // bash: replaced by the permission key; the witness shows what is decided instead.
    let bash = by("bash");
    assert!(
        bash.message.contains("the `permission` key `bash`"),
        "{}",
        bash.message
    );
    assert!(bash.rule.is_none());
    assert_eq!(bash.witnesses[0].permission, "bash");
    assert_ne!(bash.witnesses[0].action, permaudit::model::Effect::Deny);
    // webfetch: landed first among the config rules, and `*: allow` later overrides it.
    let web = by("webfetch");
    assert!(
        web.message.contains("comes first among the config rules"),
        "{}",
        web.message
    );
    let rule = &p.agent("build").unwrap().rules[web.rule.unwrap()];
    assert_eq!(
        (rule.permission.as_str(), rule.layer.as_str()),
        ("webfetch", "legacy-tools")
    );
    // The later `*` allow undoes it all: the one finding at the entry says so, as a
    // warning (the user sees webfetch allowed although the entry says false).
    assert!(
        web.message.contains("later rules undo all of it"),
        "{}",
        web.message
    );
    assert_eq!(web.level, permaudit::checks::Level::Warning);
    assert!(
        !f.iter().any(|s| s.loc == web.loc && s.id != "legacy-tools"),
        "one finding at the entry"
    );
    // Agent tools: only that agent; a same-name key of its permission wins.
    let plan = of(&f, "legacy-tools", "plan");
    let read = plan.iter().find(|f| at(&p, f) == "\"read\"").unwrap();
    assert!(
        read.message.contains("`tools` of agent `plan`") && read.message.contains("[agent-config]"),
        "{}",
        read.message
    );
    let grep = plan.iter().find(|f| at(&p, f) == "\"grep\"").unwrap();
    assert!(
        grep.message.contains("agent-legacy-tools"),
        "{}",
        grep.message
    );
    assert!(
        !of(&f, "legacy-tools", "build")
            .iter()
            .any(|f| at(&p, f) == "\"grep\"")
    );
}

#[test]
fn js_key_order_needs_a_changed_decision() {
    let p = project(
        r#"{"permission":{"glob":{"*":"allow","5":"deny"},"grep":{"*":"deny","7":"deny"},
            "bash":{"git *":"deny"},"bash":{"rm *":"deny"}}}"#,
        &[],
    );
    let f = run(&p);
    let k = of(&f, "js-key-order", "build");
    assert_eq!(k.len(), 2, "{k:#?}");
    // Integer-like key moved first: "5" is allowed, the written order would deny it.
    let glob = k
        .iter()
        .find(|f| f.witnesses[0].permission == "glob")
        .unwrap();
    assert_eq!(at(&p, glob), "\"5\"");
    assert_eq!(glob.witnesses[0].input, "5");
    assert!(
        glob.message
            .contains("→ allow, but in the written order by `glob` \"5\" deny"),
        "{}",
        glob.message
    );
    // A duplicate permission key drops the earlier object entirely.
    let bash = k
        .iter()
        .find(|f| f.witnesses[0].permission == "bash")
        .unwrap();
    assert_eq!(bash.witnesses[0].input, "git");
    assert!(bash.message.contains("written 2 times"), "{}", bash.message);
    // `grep`: reordered too, but every input gets the same answer either way.
    assert!(k.iter().all(|f| f.witnesses[0].permission != "grep"));
}

#[test]
fn env_injection_in_values_keys_and_comments() {
    let cfg = "{\n  // {env:NOTE}\n  \"username\": \"{env:WHO}\",\n  \"permission\": {\"edit\": \"{env:ACT}\", \"bash\": {\"{env:CMD}\": \"allow\"}}\n}";
    let env = [
        ("NOTE", "x\n  \"tools\": {\"read\": false},"),
        ("WHO", "me"),
        ("ACT", "ask"),
        ("CMD", "make *"),
    ];
    let p = project(cfg, &env);
    let f = run(&p);
    let e = of(&f, "env-injection", "-");
    let tokens: Vec<String> = e.iter().map(|f| at(&p, f)).collect();
    // `{env:WHO}` is outside the permission config and writes no rule.
    assert_eq!(tokens, ["{env:NOTE}", "{env:ACT}", "{env:CMD}"]);
    assert!(
        e[0].message.contains("wrote the rule `read` \"*\" deny"),
        "{}",
        e[0].message
    );
    assert!(
        e[2].message.contains("`bash` \"make *\" allow"),
        "{}",
        e[2].message
    );
    assert!(
        e.iter()
            .all(|f| f.agents.is_empty() && f.witnesses.is_empty())
    );
}

/// `always-overrides-deny`: the asking command asks, the denied command is denied, and with
/// the stored "Always" allow appended after every rule (OpenCode's `approved` list) the
/// denied command is allowed. A deny of the whole prefix leaves nothing to ask.
#[test]
fn always_overrides_deny_witnesses_hold_with_the_stored_allow_appended() {
    use permaudit::agents::evaluate;
    use permaudit::model::{Action, Effect, Layer, Rule};
    let cfg =
        r#"{"permission":{"bash":{"*":"ask","git push --force*":"deny","git status":"allow"}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let found = of(&f, "always-overrides-deny", "build");
    assert_eq!(found.len(), 1, "{found:#?}");
    let (finding, build) = (found[0], p.agent("build").unwrap());
    assert_eq!(at(&p, finding), "\"git push --force*\"");
    let [ask, deny] = &finding.witnesses[..] else {
        panic!("{finding:#?}")
    };
    let decide = |rules: &[Rule], s: &str| evaluate(rules, "bash", s, Platform::Unix).effect;
    assert_eq!(decide(&build.rules, &ask.input), Effect::Ask);
    assert_eq!(decide(&build.rules, &deny.input), Effect::Deny);
    assert!(
        finding.message.contains("\"git push *\""),
        "{}",
        finding.message
    );
    let mut approved = build.rules.clone();
    let mut stored = approved[0].clone();
    (
        stored.permission,
        stored.pattern,
        stored.action,
        stored.layer,
    ) = (
        "bash".into(),
        "git push *".into(),
        Action::Allow,
        Layer::Defaults,
    );
    approved.push(stored);
    assert_eq!(decide(&approved, &ask.input), Effect::Allow);
    assert_eq!(decide(&approved, &deny.input), Effect::Allow);

    let clean = project(
        r#"{"permission":{"bash":{"*":"ask","git push *":"deny"}}}"#,
        &[],
    );
    assert!(of(&run(&clean), "always-overrides-deny", "build").is_empty());
}

/// A project of markdown agents (`.opencode/agent/NAME.md`, frontmatter only).
fn agents_project(agents: &[(&str, &str)]) -> Project {
    let mut host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file("/w/p/opencode.json", "{}");
    for (name, front) in agents {
        host = host.file(
            &format!("/w/p/.opencode/agent/{name}.md"),
            &format!("---\ndescription: d\n{front}---\nbody\n"),
        );
    }
    Project::load(&host, Path::new("/w/p"), Platform::Unix)
        .unwrap_or_else(|f| panic!("{:?}", f.error))
}

#[test]
fn ignored_permissions_block_is_a_note_only_when_the_agent_already_enforces_it() {
    let agents = [
        // tools: already deny all of it (`write` is the write tool, checked as `edit`).
        (
            "same",
            "tools:\n  bash: false\n  write: false\npermissions:\n  bash: deny\n  write: deny\n",
        ),
        // A pattern inside a stricter catch-all of the agent's own permission.
        (
            "inside",
            "permission:\n  bash: deny\npermissions:\n  bash:\n    \"rm *\": ask\n",
        ),
        // edit is not denied by anything else: its deny is lost.
        (
            "part",
            "tools:\n  bash: false\npermissions:\n  bash: deny\n  edit: deny\n",
        ),
        // tools switch bash on: the block's ask is lost.
        (
            "looser",
            "tools:\n  bash: true\npermissions:\n  bash: ask\n",
        ),
        // A later allow meets the block's deny.
        (
            "carved",
            "permission:\n  bash:\n    \"*\": deny\n    \"git *\": allow\npermissions:\n  bash:\n    \"git push *\": deny\n",
        ),
    ];
    let p = agents_project(&agents);
    let f = run(&p);
    let level = |name: &str| {
        let found: Vec<_> = f
            .iter()
            .filter(|x| x.id == "ignored-key" && x.message.contains(&format!("agent `{name}`")))
            .collect();
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        (found[0].level, found[0].message.clone())
    };
    for name in ["same", "inside"] {
        let (l, m) = level(name);
        assert_eq!(l, permaudit::checks::Level::Info, "{name}: {m}");
        assert!(m.contains("no protection is lost"), "{m}");
    }
    for name in ["part", "looser", "carved"] {
        let (l, m) = level(name);
        assert_eq!(l, permaudit::checks::Level::Error, "{name}: {m}");
        assert!(!m.contains("no protection is lost"), "{m}");
    }
    // The claim, tried: with the deny-only blocks renamed to `permission:` (OpenCode then
    // applies them), no decision of those agents gets stricter or looser.
    let renamed = agents_project(&[(
        "same",
        "tools:\n  bash: false\n  write: false\npermission:\n  bash: deny\n  edit: deny\n",
    )]);
    let before = p.agent("same").unwrap();
    let after = renamed.agent("same").unwrap();
    for (perm, input) in [
        ("bash", "ls"),
        ("bash", "rm -rf /"),
        ("edit", "src/main.rs"),
        ("edit", ".env"),
        ("read", "README.md"),
    ] {
        let d = |a: &permaudit::agents::Agent| {
            permaudit::agents::evaluate(&a.rules, perm, input, Platform::Unix).effect
        };
        assert_eq!(d(before), d(after), "{perm} {input}");
    }
}

#[test]
fn a_bash_example_denied_first_by_external_directory_is_not_shown() {
    // `rm -rf /*` deny is overridden by the later `*` allow; its inputs all name the root,
    // whose `external_directory` ask is asked first. Denied in `build` alone (its own
    // block), the example holds for the other agents only.
    let cfg = r#"{"permission":{"bash":{"rm -rf /*":"deny","git push *":"deny","*":"allow"}},
        "agent":{"build":{"permission":{"external_directory":"deny"}}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let found: Vec<_> = f
        .iter()
        .filter(|x| x.witnesses.iter().any(|w| w.input.starts_with("rm -rf /")))
        .collect();
    assert!(!found.is_empty(), "{f:#?}");
    for x in &found {
        assert!(!x.agents.iter().any(|a| a == "build"), "{x:#?}");
        assert!(x.agents.iter().any(|a| a == "plan"), "{x:#?}");
    }
    // And where every agent denies it, nothing about that example is shown.
    let all =
        r#"{"permission":{"external_directory":"deny","bash":{"rm -rf /*":"deny","*":"allow"}}}"#;
    let p = project(all, &[]);
    let f = run(&p);
    assert!(
        !f.iter()
            .any(|x| x.witnesses.iter().any(|w| w.input.starts_with("rm -rf /"))),
        "{f:#?}"
    );
}

#[test]
fn an_unknown_tool_switch_warns_only_where_an_mcp_server_has_that_name() {
    let level = |cfg: &str, key: &str| {
        let p = project(cfg, &[]);
        let f = run(&p);
        let found: Vec<_> = f
            .iter()
            .filter(|x| x.id == "unchecked-permission" && x.message.contains(&format!("`{key}`")))
            .collect();
        assert_eq!(found.len(), 1, "{key}: {f:#?}");
        found[0].level
    };
    use permaudit::checks::Level;
    // A project's own tool or a plugin's, or nothing: no protection OpenCode gives is lost.
    assert_eq!(
        level(r#"{"tools":{"observation":false}}"#, "observation"),
        Level::Info
    );
    // An MCP server of that name: its tools are `observation_*`, which the key misses.
    assert_eq!(
        level(
            r#"{"mcp":{"observation":{"type":"local","command":["x"]}},"tools":{"observation":false}}"#,
            "observation"
        ),
        Level::Warning
    );
    // A Claude Code rule and a typo of a checked permission still lose their deny.
    assert_eq!(
        level(r#"{"permission":{"Bash(rm *)":"deny"}}"#, "Bash(rm *)"),
        Level::Warning
    );
    assert_eq!(
        level(r#"{"permission":{"bsah":"deny"}}"#, "bsah"),
        Level::Warning
    );
}

#[test]
fn an_ignored_key_is_taken_for_a_near_key_only_when_opencode_accepts_its_value_there() {
    let p = agents_project(&[
        // Descriptive metadata: `mode` is near `role`, but OpenCode refuses a mode of that
        // text, and a `skill` permission of a path (both verified on 1.18.34).
        (
            "meta",
            "role: \"Lead architect\"\nskill: .opencode/skills/review/SKILL.md\n",
        ),
        // Real misspellings and misplaced permissions, whose values fit.
        (
            "typos",
            "permision:\n  edit: deny\nmodle: openai/gpt-5\nwebfetch: false\nbash: deny\n",
        ),
    ]);
    let f = run(&p);
    let keys = |agent: &str| -> Vec<String> {
        of(&f, "unknown-agent-key", agent)
            .iter()
            .map(|x| x.message.split('`').nth(1).unwrap_or("").to_string())
            .collect()
    };
    assert!(keys("meta").is_empty(), "{f:#?}");
    assert_eq!(
        keys("typos"),
        ["permision", "webfetch: false", "bash", "modle"],
        "{f:#?}"
    );
}

#[test]
fn search_tools_weigh_patterns_not_files() {
    use permaudit::checks::Level;
    let levels = |cfg: &str, id: &str| -> Vec<(String, Level)> {
        let p = project(cfg, &[]);
        let f = run(&p);
        f.iter()
            .filter(|x| x.id == id)
            .map(|x| (at(&p, x), x.level))
            .collect()
    };
    // An agent's own glob/grep allow undoes shared denies on secret names: those tools are
    // asked with the search pattern, so no file's protection is lost (a note); its own
    // read allow does lose the files (a warning).
    let shared = r#""glob":{"*":"ask","*.env":"deny"},"grep":{"*":"ask","*.env":"deny"},"read":{"*":"allow","*.env":"deny"}"#;
    let own = r#""glob":"allow","grep":"allow","read":"allow""#;
    let cfg =
        format!(r#"{{"permission":{{{shared}}},"agent":{{"build":{{"permission":{{{own}}}}}}}}}"#);
    let mut found = levels(&cfg, "agent-overrides-shared");
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            ("\"glob\"".to_string(), Level::Info),
            ("\"grep\"".to_string(), Level::Info),
            ("\"read\"".to_string(), Level::Warning),
        ],
        "{cfg}"
    );
    // A `**/` that misses the root-level file: a warning under `read`, a note under
    // `glob` (asked with a glob pattern, not a path).
    let cfg = r#"{"permission":{"read":{"**/.env":"deny"},"glob":{"**/.env":"deny"}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let glob_at = cfg.find("\"glob\"").unwrap_or_default();
    let mut found: Vec<(bool, Level)> = f
        .iter()
        .filter(|x| x.id == "never-matches")
        .map(|x| (x.loc.unwrap().span.start > glob_at, x.level))
        .collect();
    found.sort_by_key(|x| x.0);
    assert_eq!(
        found,
        [(false, Level::Warning), (true, Level::Info)],
        "{f:#?}"
    );
}

#[test]
fn delegating_what_the_agent_does_itself_through_bash_adds_nothing() {
    let des = |own: &str| -> usize {
        let cfg = format!(r#"{{"agent":{{"review":{{"mode":"primary","permission":{own}}}}}}}"#);
        let p = project(&cfg, &[]);
        of(&run(&p), "delegation-escalation", "review").len()
    };
    // Its own bash runs `sed -i` on the file without asking: the edit deny is walked
    // round directly (deny-bypass's matter), starting `general` adds nothing.
    assert_eq!(des(r#"{"edit":"deny"}"#), 0);
    // With bash closed too, `general` is the way round the deny.
    assert_eq!(des(r#"{"edit":"deny","bash":"deny"}"#), 1);
}

/// A `write` block (a permission OpenCode 1.18.34 never asks: the write tool asks `edit`,
/// `tests/live_conformance.rs` shows it on the binary): its rule order is still reported,
/// with a file path for an example (never a directory, `docs/`) that says it shows the
/// rules as written; a finding about what a run does with those rules is not (nothing is
/// asked, so `opencode run` rejects nothing).
#[test]
fn a_write_block_gets_order_findings_as_written_and_no_run_time_claims() {
    let cfg = r#"{"permission":{"edit":"allow","write":{"docs/*":"allow","*":"ask"}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let dead = of(&f, "dead-rule", "build");
    let [d] = dead.as_slice() else {
        panic!("{f:#?}")
    };
    assert_eq!(at(&p, d), "\"docs/*\"");
    let w = &d.witnesses[0];
    assert_eq!(w.permission, "write");
    assert!(
        w.input.starts_with("docs/") && w.input.len() > "docs/".len() && !w.input.ends_with('/'),
        "{w:?}"
    );
    assert!(
        d.message
            .contains("as written; OpenCode 1.18.34 never checks `write`")
            && d.message.contains("rename the key to `edit`"),
        "{}",
        d.message
    );
    // The same rules under `edit` say nothing of the kind.
    let q = project(
        r#"{"permission":{"edit":{"docs/*":"allow","*":"ask"}}}"#,
        &[],
    );
    let g = run(&q);
    assert!(
        of(&g, "dead-rule", "build")
            .iter()
            .all(|d| !d.message.contains("never checks")),
        "{g:#?}"
    );
    // Headless, a `write` ask is rejected by nothing: OpenCode never asks it. Its `edit`
    // twin is.
    let headless =
        |p: &Project| permaudit::checks::run_as(p, permaudit::delegation::RunMode::Headless);
    let asks_of = |config: &str, permission: &str| {
        let f = headless(&project(config, &[]));
        of(&f, "headless-ask", "build")
            .iter()
            .filter(|f| f.witnesses.iter().any(|w| w.permission == permission))
            .count()
    };
    assert_eq!(
        asks_of(r#"{"permission":{"write":{"*":"ask"}}}"#, "write"),
        0
    );
    assert_eq!(asks_of(r#"{"permission":{"edit":{"*":"ask"}}}"#, "edit"), 1);
}

/// A project's own tool of a name OpenCode has none of (`.opencode/tool/list.ts` defines
/// the tool `list`) is asked by that name: its rules' findings are no "as written" ones.
#[test]
fn a_project_tool_named_like_a_never_checked_permission_is_asked() {
    let cfg = r#"{"permission":{"list":{"docs/*":"allow","*":"ask"}}}"#;
    let plain = project(cfg, &[]);
    let host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file("/w/p/opencode.json", cfg)
        .file("/w/p/.opencode/tool/list.ts", "export default {}\n");
    let own = Project::load(&host, Path::new("/w/p"), Platform::Unix).unwrap();
    let dead = |p: &Project| {
        run(p)
            .into_iter()
            .filter(|f| f.id == "dead-rule")
            .map(|f| f.message)
            .collect::<Vec<_>>()
    };
    let (plain, own) = (dead(&plain), dead(&own));
    assert!(
        plain.len() == 1 && plain[0].contains("never checks `list`"),
        "{plain:?}"
    );
    assert!(
        own.len() == 1 && !own[0].contains("never checks"),
        "{own:?}"
    );
}

#[test]
fn an_agents_own_edit_switch_walked_around_by_bash_is_a_warning_with_words_not_a_list() {
    // `tools: {write: false, edit: false}` makes the agent's edit tools refuse; bash, free by
    // OpenCode's defaults, writes anyway (blind fresh-5 A: `echo hi > x` ran). No list of
    // denied commands closes bash, so the help says the choice and no snippet is offered.
    let cfg = r#"{"agent":{"reviewer":{"mode":"subagent","tools":{"write":false,"edit":false}}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let found = of(&f, "deny-bypass", "reviewer");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].level, permaudit::checks::Level::Warning);
    assert_eq!(at(&p, found[0]), "\"edit\"");
    assert!(
        found[0].message.contains("`tools` switch"),
        "{}",
        found[0].message
    );
    let help = found[0].help.clone().unwrap_or_default();
    assert!(help.contains(r#""bash": {"*": "ask""#), "{help}");
    let proposals = permaudit::fix::suggest::proposals(&p, &f);
    assert!(
        proposals.iter().all(|s| f[s.finding].id != "deny-bypass"),
        "a deny list offered: {proposals:#?}"
    );
    // Bash off too: nothing walks around it.
    let off = r#"{"agent":{"reviewer":{"mode":"subagent","tools":{"write":false,"edit":false,"bash":false}}}}"#;
    let p = project(off, &[]);
    assert!(of(&run(&p), "deny-bypass", "reviewer").is_empty());
}

#[test]
fn an_always_story_never_tells_of_a_program_named_x() {
    // `* .env*` is about a file, whatever the program: filled in, its text is `x .envx`,
    // and "answer Once to `x` questions" helps no one (blind fresh-5 B: sierrajc).
    let cfg = r#"{"permission":{"bash":{"*":"ask","git status *":"allow","* .env*":"deny"}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    for g in of(&f, "always-overrides-deny", "build") {
        assert!(!g.message.contains("\"x\""), "{}", g.message);
    }
}

#[test]
fn a_tools_switch_made_by_several_entries_is_removed_whole() {
    // `write`, `edit` and `patch` all become the one `edit` allow: removing one of them
    // leaves the rule (blind fresh-6 B: georgekuzora), so the help names all three.
    let cfg = r#"{"permission":{"edit":"ask"},
        "agent":{"coder":{"mode":"subagent","tools":{"write":true,"edit":true,"patch":true}}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let g = of(&f, "agent-overrides-shared", "coder");
    let edit = g
        .iter()
        .find(|g| g.message.contains("`edit`"))
        .expect("the edit allow undoes the shared ask");
    let help = edit.help.as_deref().unwrap_or("");
    for entry in [
        "`write: true`",
        "`edit: true`",
        "`patch: true`",
        "remove all 3",
    ] {
        assert!(help.contains(entry), "{entry} missing from: {help}");
    }
}

#[test]
fn a_shared_allow_list_with_no_catch_all_restricts_nothing() {
    // A top-level `permission.bash` of allows only, under the built-in `*` allow: every
    // command it does not name still runs (blind fresh-6 B: vbenoot26). With a catch-all
    // first it is an allow-list, and quiet.
    let open = r#"{"permission":{"bash":{"ls *":"allow","git diff*":"allow"}}}"#;
    let p = project(open, &[]);
    let f = run(&p);
    let g: Vec<_> = f.iter().filter(|g| g.id == "open-allow-list").collect();
    assert_eq!(g.len(), 1, "one finding per shared block: {g:?}");
    assert!(g[0].agents.contains(&"build".to_string()));
    assert!(g[0].message.contains("rm -rf src"), "{}", g[0].message);
    let closed = r#"{"permission":{"bash":{"*":"ask","ls *":"allow","git diff*":"allow"}}}"#;
    let p = project(closed, &[]);
    assert!(run(&p).iter().all(|g| g.id != "open-allow-list"));
}

#[test]
fn a_negated_pattern_never_matches() {
    // OpenCode's wildcard has no `!`: `"!.env": "deny"` leaves `.env` as before.
    let cfg = r#"{"permission":{"read":{"*":"allow","!.env":"deny"}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    assert!(
        f.iter()
            .any(|g| g.id == "never-matches" && g.message.contains("no negation")),
        "{f:?}"
    );
}

#[test]
fn curl_write_mode_help_covers_its_spellings_and_says_what_stays_open() {
    // `-o` alone left `--output` and `-O` running (blind fresh-6 A: gitzaxxx's verifier).
    let cfg = r#"{"agent":{"verifier":{"mode":"subagent","permission":{"edit":"deny",
        "bash":{"*":"deny","curl *":"allow"}}}}}"#;
    let p = project(cfg, &[]);
    let f = run(&p);
    let g = of(&f, "deny-bypass", "verifier");
    let help = g
        .iter()
        .find_map(|g| g.help.as_deref().filter(|h| h.contains("curl")))
        .expect("curl's write mode is reported");
    for p in ["curl *--output*", "curl * -O*", "-sSLo"] {
        assert!(help.contains(p), "{p} missing from: {help}");
    }
}
