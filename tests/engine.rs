//! The engine on in-memory machines: merge order, key order, layers and refusals, each
//! against the behaviour the 1.18.34 binary showed (spec §10, research notes).

use permaudit::glob::Platform;
use permaudit::host::MemHost;
use permaudit::load::LoadError;
use permaudit::model::Layer;
use permaudit::project::Project;
use std::path::Path;

const HOME: &str = "/h";
const PROJ: &str = "/w/proj";

fn base() -> MemHost {
    MemHost::new().var("HOME", HOME).dir("/w/proj/.git")
}

fn load(host: &MemHost, cwd: &str) -> Project {
    match Project::load(host, Path::new(cwd), Platform::Unix) {
        Ok(p) => p,
        Err(f) => panic!("load failed: {:?}", f.error),
    }
}

/// User rules of `agent` as `permission pattern action`, built-ins and trailing rule removed.
fn user(p: &Project, agent: &str) -> Vec<String> {
    p.agent(agent)
        .unwrap()
        .rules
        .iter()
        .filter(|r| r.loc.is_some())
        .map(|r| format!("{} {} {}", r.permission, r.pattern, r.action))
        .collect()
}

#[test]
fn merge_order_of_every_source() {
    // Spec §10.3 M4: one key per source; the `shared` patterns come out in load order.
    let w =
        |tag: &str| format!(r#"{{"permission":{{"k_{tag}":"deny","shared":{{"{tag}":"deny"}}}}}}"#);
    let host = base()
        .file("/h/.config/opencode/opencode.json", &w("global"))
        .file("/x/custom.json", &w("OPENCODE_CONFIG"))
        .file("/w/proj/opencode.json", &w("proj_root"))
        .file("/w/proj/sub/opencode.json", &w("proj_sub"))
        .file("/w/proj/.opencode/opencode.json", &w("dot_root"))
        .file("/w/proj/sub/.opencode/opencode.json", &w("dot_sub"))
        .file("/h/.opencode/opencode.json", &w("home_dot"))
        .file("/cfgdir/opencode.json", &w("CONFIG_DIR"))
        .file("/managed/opencode.json", &w("managed"))
        .file("/w/opencode.json", &w("above_git_root"))
        .var("OPENCODE_CONFIG", "/x/custom.json")
        .var("OPENCODE_CONFIG_DIR", "/cfgdir")
        .var("OPENCODE_TEST_MANAGED_CONFIG_DIR", "/managed")
        .var("OPENCODE_CONFIG_CONTENT", &w("CONTENT"))
        .var(
            "OPENCODE_PERMISSION",
            r#"{"k_ENVPERM":"deny","shared":{"ENVPERM":"deny"}}"#,
        );
    let p = load(&host, "/w/proj/sub");
    let shared: Vec<String> = p
        .agent("build")
        .unwrap()
        .rules
        .iter()
        .filter(|r| r.permission == "shared")
        .map(|r| r.pattern.clone())
        .collect();
    assert_eq!(
        shared,
        [
            "global",
            "OPENCODE_CONFIG",
            "proj_root",
            "proj_sub",
            "dot_sub",
            "dot_root",
            "home_dot",
            "CONFIG_DIR",
            "CONTENT",
            "managed",
            "ENVPERM"
        ]
    );
    let layers: Vec<Layer> = p
        .agent("build")
        .unwrap()
        .rules
        .iter()
        .filter(|r| r.permission == "shared")
        .map(|r| r.layer)
        .collect();
    assert_eq!(layers[0], Layer::Global);
    assert_eq!(layers[2], Layer::Project);
    assert_eq!(layers[4], Layer::DotOpencode);
    assert_eq!(layers[10], Layer::EnvPermission);
}

#[test]
fn merge_keeps_first_position_and_string_form_replaces() {
    // Spec: global {bash:deny,*:ask} + project "allow" => [bash deny, * allow].
    let host = base()
        .file(
            "/h/.config/opencode/opencode.json",
            r#"{"permission":{"bash":"deny","*":"ask"}}"#,
        )
        .file("/w/proj/opencode.json", r#"{"permission":"allow"}"#);
    assert_eq!(
        user(&load(&host, PROJ), "build"),
        ["bash * deny", "* * allow"]
    );
}

#[test]
fn integer_keys_and_duplicates() {
    let host = base().file(
        "/w/proj/opencode.json",
        r#"{"permission":{"glob":{"*":"allow","5":"deny"},"bash":{"*":"deny","git *":"allow","*":"ask"}}}"#,
    );
    assert_eq!(
        user(&load(&host, PROJ), "build"),
        [
            "glob 5 deny",
            "glob * allow",
            "bash * ask",
            "bash git * allow"
        ]
    );
}

#[test]
fn legacy_tools_come_first_and_lose_to_permission() {
    // Spec §10.3 M10.
    let host = base().file(
        "/w/proj/opencode.json",
        r#"{"tools":{"bash":false,"write":false,"patch":true,"multiedit":false,"apply_patch":false,"webfetch":true},
            "permission":{"read":"ask","edit":{"src/*":"deny"},"bash":{"git *":"allow"}}}"#,
    );
    assert_eq!(
        user(&load(&host, PROJ), "build"),
        [
            "bash git * allow",
            "edit src/* deny",
            "multiedit * deny",
            "apply_patch * deny",
            "webfetch * allow",
            "read * ask"
        ]
    );
}

#[test]
fn agent_rules_come_after_user_rules() {
    // Spec §10.3 M11.
    let host = base()
        .file(
            "/h/.config/opencode/opencode.json",
            r#"{"permission":{"read":"ask"},"agent":{"build":{"permission":{"bash":"deny","edit":"deny"}}}}"#,
        )
        .file(
            "/w/proj/opencode.json",
            r#"{"agent":{"build":{"tools":{"webfetch":false,"write":false},"permission":{"bash":"allow","write":"ask","glob":"deny"}}}}"#,
        );
    let p = load(&host, PROJ);
    assert_eq!(
        user(&p, "build"),
        [
            "read * ask",
            "bash * allow",
            "edit * deny",
            "webfetch * deny",
            "write * ask",
            "glob * deny"
        ]
    );
    let hidden = permaudit::agents::hidden_tools(&p.agent("build").unwrap().rules, Platform::Unix);
    assert_eq!(hidden, ["glob", "edit", "write", "webfetch"]);
}

#[test]
fn home_expansion_and_trailing_rule_suppression() {
    let host = base().file(
        "/w/proj/opencode.json",
        r#"{"permission":{"external_directory":{"~/.local/share/opencode/tool-output/*":"deny","$HOMEc":"allow"}}}"#,
    );
    let p = load(&host, PROJ);
    let rules = &p.agent("build").unwrap().rules;
    assert_eq!(rules.last().unwrap().pattern, "/hc");
    let host = base().file(
        "/w/proj/opencode.json",
        r#"{"permission":{"external_directory":"deny"}}"#,
    );
    let p = load(&host, PROJ);
    let last = p.agent("build").unwrap().rules.last().unwrap().clone();
    assert_eq!(last.layer, Layer::ToolOutput);
    assert_eq!(last.pattern, "/h/.local/share/opencode/tool-output/*");
}

#[test]
fn plan_rule_is_relative_to_the_worktree() {
    let p = load(&base(), PROJ);
    let plan = p.agent("plan").unwrap();
    assert!(
        plan.rules
            .iter()
            .any(|r| r.permission == "edit"
                && r.pattern == "../../h/.local/share/opencode/plans/*.md")
    );
}

#[test]
fn disable_and_custom_agents() {
    let host = base().file(
        "/w/proj/opencode.json",
        r#"{"agent":{"plan":{"disable":true},"x":{"permission":{"bash":"deny"}}},"mode":{"m2":{"permission":{"edit":"deny"}}}}"#,
    );
    let p = load(&host, PROJ);
    assert!(p.agent("plan").is_none());
    assert_eq!(p.agent("x").unwrap().mode.as_str(), "all");
    assert_eq!(p.agent("m2").unwrap().mode.as_str(), "primary");
    assert_eq!(user(&p, "x"), ["bash * deny"]);
}

#[test]
fn env_substitution_injects_and_spans_point_at_the_token() {
    let host = base().var("EVIL", r#"deny", "edit": "deny"#).file(
        "/w/proj/opencode.json",
        r#"{"permission":{"bash":"{env:EVIL}"}}"#,
    );
    let p = load(&host, PROJ);
    assert_eq!(user(&p, "build"), ["bash * deny", "edit * deny"]);
    let r = p
        .agent("build")
        .unwrap()
        .rules
        .iter()
        .find(|r| r.permission == "edit")
        .unwrap();
    let pos = p.loaded.sources.position(r.loc.unwrap());
    assert_eq!((pos.line, pos.column), (1, 24)); // the `{env:EVIL}` token
}

fn refused(host: &MemHost) -> LoadError {
    match Project::load(host, Path::new(PROJ), Platform::Unix) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => f.error,
    }
}

#[test]
fn refusals_point_at_the_value() {
    let host = base().file(
        "/w/proj/opencode.json",
        "{\n  \"permission\": {\"bash\": \"ALLOW\"}\n}",
    );
    match refused(&host) {
        LoadError::Invalid(e) => {
            assert_eq!(e.path, "permission.bash");
            assert_eq!(e.loc.span.start, 27);
        }
        other => panic!("{other:?}"),
    }
    let host = base().file("/w/proj/opencode.json", "{permission: {}}");
    assert!(matches!(refused(&host), LoadError::Syntax { .. }));
    let host = base().file(
        "/w/proj/opencode.json",
        r#"{"permission":{"bash":"{file:missing.txt}"}}"#,
    );
    assert!(matches!(refused(&host), LoadError::FileRef { .. }));
}

#[test]
fn env_permission_is_unvalidated() {
    let host = base()
        .file("/w/proj/opencode.json", r#"{"permission":{"edit":"ask"}}"#)
        .var("OPENCODE_PERMISSION", r#"["deny","ask"]"#);
    assert_eq!(
        user(&load(&host, PROJ), "build"),
        ["0 * deny", "1 * ask", "edit * ask"]
    );
    let host = base().var(
        "OPENCODE_PERMISSION",
        r#"{"bash":"maybe","__proto__":{"x":"deny"}}"#,
    );
    assert_eq!(
        user(&load(&host, PROJ), "build"),
        ["bash * \"maybe\"", "__proto__ x deny"]
    );
}

#[test]
fn v2_permissions_in_frontmatter_load_ignored_with_a_warning() {
    // 1.18.34: a markdown agent's `permissions:` becomes an option (no rules, no refusal);
    // the same key in a JSON agent entry refuses the config.
    let md =
        "---\ndescription: d\npermissions:\n  bash: deny\ntools:\n  webfetch: false\n---\nhi\n";
    let host = base().file("/w/proj/.opencode/agent/x.md", md);
    let p = load(&host, PROJ);
    assert_eq!(user(&p, "x"), ["webfetch * deny"]);
    let w: Vec<_> = p.loaded.warnings.iter().map(|w| w.code).collect();
    assert_eq!(w, ["ignored-key"]);
    for json in [
        r#"{"agent":{"x":{"permissions":{}}}}"#,
        r#"{"agents":{"x":{"permissions":{}}}}"#,
    ] {
        let host = base().file("/w/proj/opencode.json", json);
        let err = Project::load(&host, Path::new(PROJ), Platform::Unix).unwrap_err();
        assert!(
            matches!(&err.error, LoadError::Invalid(e) if e.path.ends_with(".x.permissions")),
            "{json}: {:?}",
            err.error
        );
    }
}
