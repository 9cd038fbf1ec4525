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
