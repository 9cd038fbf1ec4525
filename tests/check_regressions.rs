//! Findings that must not overstate: a deny only covered by later denies is redundant (not a
//! security hole), and an agent's own `* deny` of a tool does not make top-level allows
//! "unusable".

use permaudit::glob::Platform;
use permaudit::host::MemHost;
use permaudit::project::Project;
use std::path::Path;

fn findings(files: &[(&str, &str)]) -> Vec<(String, String, Option<String>)> {
    let mut host = MemHost::new().var("HOME", "/h").dir("/w/p/.git");
    for (p, t) in files {
        host = host.file(p, t);
    }
    let p = Project::load(&host, Path::new("/w/p"), Platform::Unix).expect("loads");
    permaudit::checks::run(&p)
        .into_iter()
        .map(|f| {
            (
                f.id.to_string(),
                f.level.to_string(),
                f.agents.first().cloned(),
            )
        })
        .collect()
}

#[test]
fn deny_under_later_deny_is_redundant_not_an_error() {
    let f = findings(&[(
        "/w/p/opencode.json",
        r#"{"permission":{"bash":{"rm *":"deny","*":"deny","git *":"allow"}}}"#,
    )]);
    assert!(!f.iter().any(|(id, _, _)| id == "shadowed-deny"), "{f:?}");
    assert!(
        f.iter()
            .any(|(id, level, _)| id == "dead-rule" && level == "info"),
        "{f:?}"
    );
    // A deny lost to an allow is still an error.
    let f = findings(&[(
        "/w/p/opencode.json",
        r#"{"permission":{"bash":{"rm *":"deny","*":"allow"}}}"#,
    )]);
    assert!(
        f.iter()
            .any(|(id, level, _)| id == "shadowed-deny" && level == "error"),
        "{f:?}"
    );
}

#[test]
fn agent_own_tool_deny_does_not_make_top_level_allows_unusable() {
    let f = findings(&[
        (
            "/w/p/opencode.json",
            r#"{"permission":{"edit":{"src/*":"allow"}}}"#,
        ),
        (
            "/w/p/.opencode/agent/reviewer.md",
            "---\npermission:\n  edit: deny\n---\nx\n",
        ),
    ]);
    assert!(!f.iter().any(|(id, _, _)| id == "unusable-allow"), "{f:?}");
    let f = findings(&[(
        "/w/p/opencode.json",
        r#"{"permission":{"bash":{"echo *":"allow","*":"deny"}}}"#,
    )]);
    assert!(f.iter().any(|(id, _, _)| id == "unusable-allow"), "{f:?}");
}

/// One mistake, one finding: a catch-all written after the specific rules of its block is
/// reported once, at the catch-all, naming what it overrides (denies first), instead of
/// once per rule it kills; two such rules stay two findings at their own places.
#[test]
fn a_catch_all_written_last_is_one_finding_at_the_catch_all() {
    let run = |json: &str| {
        let host = MemHost::new()
            .var("HOME", "/h")
            .dir("/w/p/.git")
            .file("/w/p/opencode.json", json);
        let p = Project::load(&host, Path::new("/w/p"), Platform::Unix).expect("loads");
        permaudit::checks::run(&p)
    };
    let json = "{\"permission\": {\"bash\": {\n\"git status\": \"allow\",\n\"git log\": \"allow\",\n\"git push *\": \"deny\",\n\"rm *\": \"deny\",\n\"*\": \"ask\"\n}}}";
    let found = run(json);
    let order: Vec<_> = found
        .iter()
        .filter(|f| ["dead-rule", "shadowed-deny", "shadowed-ask"].contains(&f.id))
        .filter(|f| f.level >= permaudit::checks::Level::Warning)
        .collect();
    assert_eq!(order.len(), 1, "{order:#?}");
    let f = order[0];
    let at = f.loc.expect("a place");
    assert_eq!(&json[at.span.start..at.span.end], "\"*\"", "{f:#?}");
    assert_eq!(f.id, "shadowed-deny");
    assert!(
        f.message.contains("written after 4 rules")
            && f.message.find("git push").unwrap() < f.message.find("git status").unwrap(),
        "{}",
        f.message
    );
    assert_eq!(f.related.len(), 4);
    // Below the threshold each rule keeps its own finding.
    let found = run(
        "{\"permission\": {\"bash\": {\"git push *\": \"deny\", \"rm *\": \"deny\", \"*\": \"ask\"}}}",
    );
    let denies = found.iter().filter(|f| f.id == "shadowed-deny").count();
    assert_eq!(denies, 2, "{found:#?}");
}

/// The opt-in idiom: a tool switched off for everyone and on for the agent that uses it.
#[test]
fn a_tool_switched_on_for_its_one_agent_is_not_reported() {
    let f = findings(&[
        (
            "/w/p/opencode.json",
            r#"{"permission":{"context7_*":"deny","bash":{"git push *":"ask"}}}"#,
        ),
        (
            "/w/p/.opencode/agent/researcher.md",
            "---\npermission:\n  \"context7_*\": allow\n---\nLooks things up.\n",
        ),
        (
            "/w/p/.opencode/agent/deploy.md",
            "---\npermission:\n  bash: allow\n---\nDeploys.\n",
        ),
    ]);
    let over: Vec<_> = f
        .iter()
        .filter(|(id, _, _)| id == "agent-overrides-shared")
        .collect();
    // Only deploy's catch-all, which wipes the curated `git push *` ask: a warning.
    assert_eq!(over.len(), 1, "{f:?}");
    assert_eq!(over[0].1, "warning");
    assert_eq!(over[0].2.as_deref(), Some("deploy"));
}

/// Places stay exact through substitution: a `{file:}` whose content is longer than the
/// token (escaped quotes and newlines) and an `{env:}` before the rules, on the same line
/// and above, do not move the findings of the rules after them.
#[test]
fn findings_point_at_their_rules_through_substitution() {
    let prompt: String = (0..40)
        .map(|i| format!("line {i} with \"quotes\" and a \\ backslash\n"))
        .collect();
    let json = "{\n  \"agent\": {\"build\": {\"prompt\": \"{file:./prompt.txt}\", \"description\": \"{env:DESC}\"}},\n  \"permission\": {\"edit\": {\"tests/**\": \"deny\", \"*\": \"allow\"}, \"bash\": \"{env:ACT}\"}\n}\n";
    let host = MemHost::new()
        .var("HOME", "/h")
        .var("DESC", "a \\\"quoted\\\" description")
        .var("ACT", "ask")
        .dir("/w/p/.git")
        .file("/w/p/prompt.txt", &prompt)
        .file("/w/p/opencode.json", json);
    let p = Project::load(&host, Path::new("/w/p"), Platform::Unix).expect("loads");
    let found = permaudit::checks::run(&p);
    let deny = found
        .iter()
        .find(|f| f.id == "shadowed-deny")
        .unwrap_or_else(|| panic!("{found:#?}"));
    let at = deny.loc.unwrap();
    let file = p.loaded.sources.get(at.source);
    assert_eq!(&file.text[at.span.start..at.span.end], "\"tests/**\"");
    let pos = p.loaded.sources.position(at);
    assert_eq!((pos.line, pos.column), (3, 27), "{pos}");
}

/// A project config's rule written below another in the same block can still be applied
/// before it: a merged key keeps the place the global config gave it. The related place
/// then says so instead of calling a rule written above "this later rule".
#[test]
fn a_decider_written_above_is_not_called_later() {
    let host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file(
            "/h/.config/opencode/opencode.json",
            r#"{"permission":{"edit":{"docs/**":"deny","*":"allow"}}}"#,
        )
        .file(
            "/w/p/opencode.json",
            "{\"permission\":{\"edit\":{\n\"*\":\"ask\",\n\"docs/**\":\"allow\"}}}",
        );
    let p = Project::load(&host, Path::new("/w/p"), Platform::Unix).expect("loads");
    let f = permaudit::checks::run(&p);
    let dead = f
        .iter()
        .find(|f| f.id == "dead-rule")
        .unwrap_or_else(|| panic!("{f:#?}"));
    let (_, label) = dead.related.first().expect("the deciding rule");
    assert!(
        label.contains("written above, but OpenCode applies it later"),
        "{label}"
    );
    // Written below, it is the later rule.
    let f = findings_related(r#"{"permission":{"edit":{"docs/**":"allow","*":"ask"}}}"#);
    assert!(f.iter().any(|l| l.starts_with("this later rule")), "{f:?}");
}

fn findings_related(config: &str) -> Vec<String> {
    let host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file("/w/p/opencode.json", config);
    let p = Project::load(&host, Path::new("/w/p"), Platform::Unix).expect("loads");
    permaudit::checks::run(&p)
        .into_iter()
        .flat_map(|f| f.related.into_iter().map(|(_, l)| l))
        .collect()
}

/// A markdown agent's frontmatter `prompt` is replaced by the file's body before OpenCode's
/// schema sees it (`{...frontmatter, prompt: body}`), so `prompt: {file: …}` loads
/// (OpenCode 1.18.34: `debug agent critic` prints the body as the prompt); in a JSON config
/// the same value is refused.
#[test]
fn a_markdown_agents_frontmatter_prompt_of_any_type_is_replaced_by_its_body() {
    let md = "---\ndescription: critic\nmode: subagent\npermission:\n  bash: deny\nprompt:\n  file: ../prompts/critic.md\n---\nYou review plans.\n";
    let host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file("/w/p/.opencode/agents/critic.md", md);
    let p = Project::load(&host, Path::new("/w/p"), Platform::Unix).expect("loads");
    let critic = p.agent("critic").expect("the agent is loaded");
    assert!(
        critic
            .rules
            .iter()
            .any(|r| r.permission == "bash" && r.pattern == "*" && r.loc.is_some()),
        "{:?}",
        critic.rules
    );
    let host = MemHost::new().var("HOME", "/h").dir("/w/p/.git").file(
        "/w/p/opencode.json",
        r#"{"agent": {"critic": {"prompt": {"file": "a"}}}}"#,
    );
    assert!(Project::load(&host, Path::new("/w/p"), Platform::Unix).is_err());
}
