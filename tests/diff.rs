//! `permaudit diff` on a seeded corpus of config pairs (random edits of generated configs:
//! reorders, added and removed rules, changed actions, agent overrides, `tools`
//! migrations). For every pair:
//! - every reported change is re-decided on both sides with `evaluate`: the witness is
//!   decided by the claimed rules with the claimed effects;
//! - every sampled input (each pattern of either side with its wildcards filled several
//!   ways, for each permission name either side names and a few others) whose effect
//!   differs between the sides is covered by a reported change of the same agent with the
//!   same deciding rules, so a pair reported "no change" decides every sample alike;
//! - edits that cannot change a decision (reordering keys of unrelated permissions,
//!   migrating `tools` to `permission`) are reported as no change at all;
//! - a difference in a permission OpenCode never asks (`list`, `write`) is no change: it is
//!   listed as `unchecked` for that agent instead.
//!
//! A sample of pairs is checked against OpenCode's own rulesets too (`opencode agent list
//! --pure` of each side): the witnesses decide as claimed on the binary's rules, and every
//! sampled input whose effect differs there is covered.
//!
//! PERMAUDIT_DIFF_CASES (default 400) and PERMAUDIT_SEED choose the corpus.

mod support;

use permaudit::agents::evaluate;
use permaudit::diff::{self, Change, Class, Diff};
use permaudit::glob::Platform;
use permaudit::host::MemHost;
use permaudit::model::{Action, Rule};
use permaudit::project::Project;
use std::path::Path;
use support::rng::Rng;

const ACTIONS: [&str; 3] = ["allow", "ask", "deny"];
const PERMS: [&str; 8] = [
    "bash", "edit", "read", "webfetch", "glob", "*", "mcp_*", "task",
];
const BASH: [&str; 8] = [
    "*",
    "git *",
    "git push *",
    "git status",
    "npm *",
    "rm *",
    "ls",
    "* --force",
];
const PATHS: [&str; 8] = [
    "*", "src/**", "src/*.ts", "*.env", "docs/*", "**/*.md", "src/a.ts", "?.txt",
];
const AGENTS: [&str; 4] = ["build", "plan", "review", "explore"];
/// Tools whose legacy entry becomes a permission of the same name.
const TOOLS: [&str; 3] = ["bash", "webfetch", "glob"];

#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Str(String),
    Obj(Vec<(String, String)>),
}

#[derive(Clone, Debug, Default)]
struct Cfg {
    permission: Vec<(String, Entry)>,
    tools: Vec<(String, bool)>,
    agents: Vec<(String, Vec<(String, Entry)>)>,
}

fn patterns_for(perm: &str) -> &'static [&'static str] {
    if perm == "bash" { &BASH } else { &PATHS }
}

/// Permissions whose config value is an action string only (OpenCode's schema).
fn string_only(perm: &str) -> bool {
    perm == "webfetch"
}

fn gen_entry(r: &mut Rng, perm: &str) -> Entry {
    if string_only(perm) || r.percent(30) {
        return Entry::Str(r.pick(&ACTIONS).into());
    }
    let mut pats: Vec<(String, String)> = Vec::new();
    for _ in 0..r.range(1, 4) {
        let p = r.pick(patterns_for(perm)).to_string();
        if !pats.iter().any(|(q, _)| *q == p) {
            pats.push((p, r.pick(&ACTIONS).into()));
        }
    }
    Entry::Obj(pats)
}

fn gen_map(r: &mut Rng, n: usize) -> Vec<(String, Entry)> {
    let mut out: Vec<(String, Entry)> = Vec::new();
    for _ in 0..n {
        let p = r.pick(&PERMS).to_string();
        if !out.iter().any(|(q, _)| *q == p) {
            let e = gen_entry(r, &p);
            out.push((p, e));
        }
    }
    out
}

fn gen_cfg(r: &mut Rng) -> Cfg {
    let n = r.range(1, 5);
    let mut c = Cfg {
        permission: gen_map(r, n),
        ..Cfg::default()
    };
    for t in TOOLS {
        if r.percent(20) && !c.permission.iter().any(|(p, _)| p == t) {
            c.tools.push((t.into(), r.percent(50)));
        }
    }
    for a in AGENTS {
        if r.percent(25) {
            let n = r.range(1, 2);
            c.agents.push((a.into(), gen_map(r, n)));
        }
    }
    c
}

fn json_map(m: &[(String, Entry)]) -> String {
    let items: Vec<String> = m
        .iter()
        .map(|(k, e)| {
            let v = match e {
                Entry::Str(a) => format!("{a:?}"),
                Entry::Obj(ps) => format!(
                    "{{{}}}",
                    ps.iter()
                        .map(|(p, a)| format!("{p:?}: {a:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            format!("{k:?}: {v}")
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

fn render(c: &Cfg) -> String {
    let mut parts = vec![format!("\"permission\": {}", json_map(&c.permission))];
    if !c.tools.is_empty() {
        let t: Vec<String> = c.tools.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
        parts.push(format!("\"tools\": {{{}}}", t.join(", ")));
    }
    if !c.agents.is_empty() {
        let a: Vec<String> = c
            .agents
            .iter()
            .map(|(n, m)| format!("{n:?}: {{\"permission\": {}}}", json_map(m)))
            .collect();
        parts.push(format!("\"agent\": {{{}}}", a.join(", ")));
    }
    format!("{{\n  {}\n}}\n", parts.join(",\n  "))
}

/// Is `p` a literal permission that no other key of `m` can match (no glob keys at all)?
fn unrelated(m: &[(String, Entry)], i: usize, j: usize) -> bool {
    let lit = |s: &str| !s.contains(['*', '?']);
    lit(&m[i].0) && lit(&m[j].0) && m[i].0 != m[j].0
}

/// One random edit; `true` when it cannot change any decision.
fn edit(r: &mut Rng, c: &mut Cfg) -> bool {
    match r.below(8) {
        // Swap two adjacent top-level keys that name different literal permissions: no
        // input is matched by both, so the order between them decides nothing.
        0 => {
            let m = &mut c.permission;
            for i in 0..m.len().saturating_sub(1) {
                if unrelated(m, i, i + 1) {
                    m.swap(i, i + 1);
                    return true;
                }
            }
            false
        }
        // Migrate one legacy tools entry into `permission` (translated first, so it goes
        // to the front of the object).
        1 => {
            if c.tools.is_empty() {
                return false;
            }
            let (t, on) = c.tools.remove(r.below(c.tools.len()));
            c.permission
                .insert(0, (t, Entry::Str(if on { "allow" } else { "deny" }.into())));
            true
        }
        // Swap any two keys (may change decisions).
        2 => {
            let n = c.permission.len();
            if n >= 2 {
                let (i, j) = (r.below(n), r.below(n));
                c.permission.swap(i, j);
            }
            false
        }
        // Add a rule.
        3 => {
            let perm = r.pick(&PERMS).to_string();
            let pat = r.pick(patterns_for(&perm)).to_string();
            let act = r.pick(&ACTIONS).to_string();
            if string_only(&perm) {
                match c.permission.iter_mut().find(|(p, _)| *p == perm) {
                    Some((_, e)) => *e = Entry::Str(act),
                    None => c.permission.push((perm, Entry::Str(act))),
                }
                return false;
            }
            match c.permission.iter_mut().find(|(p, _)| *p == perm) {
                Some((_, Entry::Obj(ps))) => {
                    if !ps.iter().any(|(q, _)| *q == pat) {
                        let at = r.below(ps.len() + 1);
                        ps.insert(at, (pat, act));
                    }
                }
                Some((_, e)) => *e = Entry::Obj(vec![("*".into(), "ask".into()), (pat, act)]),
                None => c.permission.push((perm, Entry::Obj(vec![(pat, act)]))),
            }
            false
        }
        // Remove a rule or a key.
        4 => {
            if !c.permission.is_empty() {
                let i = r.below(c.permission.len());
                match &mut c.permission[i].1 {
                    Entry::Obj(ps) if ps.len() > 1 => {
                        let k = r.below(ps.len());
                        ps.remove(k);
                    }
                    _ => {
                        c.permission.remove(i);
                    }
                }
            }
            false
        }
        // Change an action.
        5 => {
            if !c.permission.is_empty() {
                let i = r.below(c.permission.len());
                let a = r.pick(&ACTIONS).to_string();
                match &mut c.permission[i].1 {
                    Entry::Str(s) => *s = a,
                    Entry::Obj(ps) => {
                        let k = r.below(ps.len());
                        ps[k].1 = a;
                    }
                }
            }
            false
        }
        // Agent override: add one, change one, or drop one.
        6 => {
            if !c.agents.is_empty() && r.percent(40) {
                let i = r.below(c.agents.len());
                c.agents.remove(i);
            } else {
                let a = r.pick(&AGENTS).to_string();
                let m = gen_map(r, 1);
                match c.agents.iter_mut().find(|(n, _)| *n == a) {
                    Some((_, old)) => {
                        for (p, e) in m {
                            if !old.iter().any(|(q, _)| *q == p) {
                                old.push((p, e));
                            }
                        }
                    }
                    None => c.agents.push((a, m)),
                }
            }
            false
        }
        // Reorder the patterns inside one object (may change decisions).
        _ => {
            if let Some((_, Entry::Obj(ps))) = c
                .permission
                .iter_mut()
                .find(|(_, e)| matches!(e, Entry::Obj(v) if v.len() > 1))
            {
                ps.reverse();
            }
            false
        }
    }
}

const ROOT: &str = "/w/proj";

fn load(text: &str) -> Project {
    let host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/proj/.git")
        .file("/w/proj/opencode.json", text);
    match Project::load(&host, Path::new(ROOT), Platform::Unix) {
        Ok(p) => p,
        Err(f) => panic!("load failed: {:?}\n{text}", f.error),
    }
}

/// Inputs every test samples: each pattern of either side filled several ways, and more.
fn samples(rules: &[&Rule]) -> (Vec<String>, Vec<String>) {
    let mut perms: Vec<String> = [
        "bash",
        "edit",
        "read",
        "webfetch",
        "glob",
        "task",
        "mcp_x",
        "todowrite",
        "zzz",
        "",
    ]
    .map(String::from)
    .to_vec();
    let mut inputs: Vec<String> = [
        "",
        "a",
        "src/a.ts",
        "git push origin",
        ".env",
        "x.env",
        "a b",
    ]
    .map(String::from)
    .to_vec();
    for r in rules {
        for fill in ["", "a", "x/a", "a b", "--force"] {
            let f = |g: &str| g.replace("**", "*").replace('*', fill).replace('?', "q");
            inputs.push(f(&r.pattern));
            if !r.permission.is_empty() {
                perms.push(f(&r.permission));
            }
        }
    }
    perms.sort();
    perms.dedup();
    inputs.sort();
    inputs.dedup();
    (perms, inputs)
}

/// Every claim of `d` holds on `base`/`head` rulesets (agent name → rules), and every
/// sampled difference is covered by a change with the same effects (and, with
/// `same_indices`, the same deciding rules).
fn check(
    d: &Diff,
    base: &[(String, Vec<Rule>)],
    head: &[(String, Vec<Rule>)],
    same_indices: bool,
    what: &str,
) {
    let find = |side: &[(String, Vec<Rule>)], a: &str| -> Option<Vec<Rule>> {
        side.iter().find(|(n, _)| n == a).map(|(_, r)| r.clone())
    };
    for c in &d.changes {
        let (Some(b), Some(h)) = (find(base, &c.agent), find(head, &c.agent)) else {
            panic!("{what}: change for an agent missing on a side: {c:?}");
        };
        let db = evaluate(&b, &c.permission, &c.input, Platform::Unix);
        let dh = evaluate(&h, &c.permission, &c.input, Platform::Unix);
        assert_eq!((db.effect, dh.effect), (c.before, c.after), "{what}: {c:?}");
        assert_ne!(c.before, c.after, "{what}: {c:?}");
        assert_eq!(c.class, Class::of(c.before, c.after));
        if same_indices {
            assert_eq!(
                (db.rule, dh.rule),
                (c.base_rule, c.head_rule),
                "{what}: {c:?}"
            );
        }
    }
    for (agent, b) in base {
        let Some(h) = find(head, agent) else { continue };
        let all: Vec<&Rule> = b.iter().chain(&h).collect();
        let (perms, inputs) = samples(&all);
        for p in &perms {
            if p == "external_directory" {
                continue;
            }
            for s in &inputs {
                let db = evaluate(b, p, s, Platform::Unix);
                let dh = evaluate(&h, p, s, Platform::Unix);
                if db.effect == dh.effect {
                    continue;
                }
                // A permission OpenCode never asks (`list`, `write`): said, no change.
                if permaudit::model::meaning::never_checked(p).is_some() {
                    assert!(
                        d.unchecked
                            .iter()
                            .any(|u| u.agent == *agent && u.permission == *p),
                        "{what}: agent {agent} {p:?} {s:?}: {} → {} not said\n{d:#?}",
                        db.effect,
                        dh.effect
                    );
                    continue;
                }
                let covered = d.changes.iter().any(|c: &Change| {
                    c.agent == *agent
                        && (c.before, c.after) == (db.effect, dh.effect)
                        && (!same_indices || (c.base_rule, c.head_rule) == (db.rule, dh.rule))
                });
                assert!(
                    covered,
                    "{what}: agent {agent} {p:?} {s:?}: {} → {} not reported\n{d:#?}",
                    db.effect, dh.effect
                );
            }
        }
    }
}

fn rulesets(p: &Project) -> Vec<(String, Vec<Rule>)> {
    p.agents
        .iter()
        .map(|a| (a.name.clone(), a.rules.clone()))
        .collect()
}

fn pair(seed: u64, k: u64) -> (String, String, bool) {
    let mut r = Rng::for_case(seed, 14, k);
    let base = gen_cfg(&mut r);
    let mut head = base.clone();
    let mut equivalent = true;
    for _ in 0..r.range(1, 3) {
        equivalent &= edit(&mut r, &mut head);
    }
    (render(&base), render(&head), equivalent)
}

#[test]
fn seeded_pairs_are_exact() {
    let seed = support::harness::seed();
    let cases: u64 = std::env::var("PERMAUDIT_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let (mut changed, mut same, mut equivalent_edits) = (0, 0, 0);
    for k in 0..cases {
        let (bt, ht, equivalent) = pair(seed, k);
        let what = format!("seed {seed} case {k}\n--- base\n{bt}--- head\n{ht}");
        let (b, h) = (load(&bt), load(&ht));
        let d = diff::diff(&b, &h);
        assert!(d.inconclusive.is_empty(), "{what}: {:?}", d.inconclusive);
        check(&d, &rulesets(&b), &rulesets(&h), true, &what);
        if equivalent {
            equivalent_edits += 1;
            assert!(
                d.changes.is_empty() && d.events.is_empty(),
                "{what}: an edit that decides nothing differently was reported:\n{d:#?}"
            );
        }
        if d.changes.is_empty() {
            same += 1;
        } else {
            changed += 1;
        }
    }
    eprintln!(
        "{cases} pairs: {changed} with changes, {same} without ({equivalent_edits} by equivalent edits only)"
    );
    assert!(
        changed > cases / 4 && same > cases / 20,
        "the corpus should hold both kinds"
    );
}

#[test]
fn identical_and_equivalent_configs_say_no_change() {
    let a = r#"{"permission": {"bash": {"*": "ask", "git *": "allow"}, "edit": "deny"}, "tools": {"webfetch": false}}"#;
    // Keys of unrelated permissions reordered; tools migrated to permission (first).
    let b = r#"{"permission": {"webfetch": "deny", "edit": "deny", "bash": {"*": "ask", "git *": "allow"}}}"#;
    let d = diff::diff(&load(a), &load(b));
    assert!(d.is_empty(), "{d:#?}");
    // Shadowed rule removed: `git *` after `*` ask… then `*` allow at the end decides all.
    let a = r#"{"permission": {"bash": {"git *": "deny", "*": "allow"}}}"#;
    let b = r#"{"permission": {"bash": {"*": "allow"}}}"#;
    assert!(diff::diff(&load(a), &load(b)).is_empty());
}

/// The example of a change is what a person would type: a pattern's `*` left out where
/// that stays in the region (`git reset --hard`, not `git reset --harda`), a command's
/// words joined with a space (`brew ~/.vault`), a catch-all's everyday input.
#[test]
fn examples_read_like_real_inputs() {
    let a = r#"{"permission": {"bash": {"*": "allow", "git reset*": "ask", "git reset --hard*": "deny", "brew*": "deny", "*~/.vault*": "deny"}}}"#;
    let b = r#"{"permission": {"bash": {"*": "allow", "git reset*": "ask", "*~/.vault*": "deny", "brew*": "allow"}, "webfetch": "deny"}}"#;
    let d = diff::diff(&load(a), &load(b));
    let mut build: Vec<(&str, &str)> = d
        .changes
        .iter()
        .filter(|c| c.agent == "build")
        .map(|c| (c.permission.as_str(), c.input.as_str()))
        .collect();
    build.sort();
    build.dedup();
    assert_eq!(
        build,
        [
            ("bash", "brew"),
            ("bash", "brew ~/.vault"),
            ("bash", "git reset --hard"),
            ("webfetch", "https://example.com"),
        ],
        "{d:#?}"
    );
}

#[test]
fn widened_narrowed_and_events() {
    let a = r#"{"permission": {"bash": {"*": "ask", "git push *": "deny"}}, "agent": {"old": {}}}"#;
    let b = r#"{"permission": {"bash": {"*": "ask", "git push *": "allow", "rm *": "deny"}, "webfetch": "deny"}, "agent": {"new": {}}}"#;
    let d = diff::diff(&load(a), &load(b));
    let mut build: Vec<(&str, &str, Class)> = d
        .changes
        .iter()
        .filter(|c| c.agent == "build")
        .map(|c| (c.permission.as_str(), c.input.as_str(), c.class))
        .collect();
    build.sort();
    assert_eq!(
        build,
        [
            ("bash", "git push", Class::Widened),
            ("bash", "rm", Class::Narrowed),
            ("webfetch", "https://example.com", Class::Narrowed),
        ]
    );
    let events: Vec<(String, Class, Option<String>)> = d
        .events
        .iter()
        .map(|e| (e.agent.clone(), e.class, e.tool.clone()))
        .collect();
    assert!(events.contains(&("new".into(), Class::AgentAdded, None)));
    assert!(events.contains(&("old".into(), Class::AgentRemoved, None)));
    assert!(events.contains(&("build".into(), Class::ToolHidden, Some("webfetch".into()))));
    assert!(d.widens());
}

#[test]
fn permissions_no_rule_names_are_covered() {
    // `*` deny added: every permission not named otherwise is narrowed, shown by a name
    // people know rather than the empty string.
    let a = r#"{"permission": {"bash": "ask"}}"#;
    let b = r#"{"permission": {"*": "deny", "bash": "ask"}}"#;
    let d = diff::diff(&load(a), &load(b));
    let other = d
        .changes
        .iter()
        .find(|c| c.agent == "build" && c.other_permissions.is_some())
        .expect("names matched only by `*` are reported");
    assert!(
        !other.permission.is_empty() && !other.input.is_empty(),
        "{other:?}"
    );
    assert_eq!(
        (other.before, other.after),
        (
            permaudit::model::Effect::Allow,
            permaudit::model::Effect::Deny
        )
    );
}

/// A change whose subjects only a search finds (every obvious fill of `*a?…?*` contains
/// `ax`, which a later rule takes), and the search over budget (`a` then 24 of anything
/// is the classic exponential automaton).
#[test]
fn over_budget_is_inconclusive_never_no_change() {
    let q = "?".repeat(24);
    let a = r#"{"permission": {"bash": {"*": "ask"}}}"#.to_string();
    let b =
        format!(r#"{{"permission": {{"bash": {{"*": "ask", "*a{q}*": "deny", "*ax*": "ask"}}}}}}"#);
    let d = diff::diff_with_budget(&load(&a), &load(&b), 10_000);
    assert!(!d.inconclusive.is_empty(), "{d:#?}");
    assert!(!d.is_empty());
}

/// Families of patterns that share a shape (`*/vendorN/*`, `docs/dN/*.md`, `*.gN.ts`,
/// `tests/tN/**`), hundreds of rules, with actions flipped and rules removed all over: the
/// diff finishes within its budget (a family is not remembered member by member) and is
/// exact on the sampled inputs.
#[test]
fn large_pattern_families_are_conclusive_and_exact() {
    let render = |flip: bool| {
        let mut rules = Vec::new();
        for i in 0..360 {
            if flip && i % 37 == 5 {
                continue;
            }
            let pattern = match i % 4 {
                0 => format!("*/vendor{i}/*"),
                1 => format!("docs/d{i}/*.md"),
                2 => format!("*.g{i}.ts"),
                _ => format!("tests/t{i}/**"),
            };
            let mut action = ACTIONS[i % 3];
            if flip && i % 29 == 0 {
                action = if action == "deny" { "allow" } else { "deny" };
            }
            rules.push(format!("{pattern:?}: {action:?}"));
        }
        format!(r#"{{"permission": {{"edit": {{{}}}}}}}"#, rules.join(", "))
    };
    let (bt, ht) = (render(false), render(true));
    let (b, h) = (load(&bt), load(&ht));
    let d = diff::diff(&b, &h);
    assert!(d.inconclusive.is_empty(), "{:?}", d.inconclusive);
    assert!(!d.changes.is_empty());
    check(&d, &rulesets(&b), &rulesets(&h), true, "families");
}

/// The largest real configuration (tests/real: ~390 bash patterns, 270 `X*` prefixes and
/// 64 `*X*` lead stars, shared by every agent) edited as `scripts/bench-diff-real.sh` does
/// (every 10th action of each permission object flipped, every 13th rule removed): the
/// diff is conclusive, and exact on the inputs a person would try: every pattern filled,
/// and every changed rule's pattern joined to every other one (`git push -f~/.vault`).
#[test]
fn largest_real_config_is_conclusive_and_exact() {
    use permaudit::glob::compiled::{CompiledRuleset, Want};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/real/mgajewskik__opencode-config/home/.config/opencode/opencode.json"
    );
    let base_text = std::fs::read_to_string(path).unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&base_text).unwrap();
    let mut changed: Vec<String> = Vec::new();
    let mut edit = |perm: Option<&mut serde_json::Value>| {
        let Some(serde_json::Value::Object(perm)) = perm else {
            return;
        };
        for v in perm.values_mut() {
            let serde_json::Value::Object(rules) = v else {
                continue;
            };
            let keys: Vec<String> = rules.keys().cloned().collect();
            for (i, k) in keys.iter().enumerate() {
                if i % 13 == 7 {
                    rules.shift_remove(k);
                    changed.push(k.clone());
                } else if i % 10 == 3 && rules[k] != "ask" {
                    let flipped = if rules[k] == "deny" { "allow" } else { "deny" };
                    rules[k] = flipped.into();
                    changed.push(k.clone());
                }
            }
        }
    };
    edit(config.get_mut("permission"));
    if let Some(serde_json::Value::Object(agents)) = config.get_mut("agent") {
        for a in agents.values_mut() {
            edit(a.get_mut("permission"));
        }
    }
    let head_text = serde_json::to_string_pretty(&config).unwrap();
    // The files it references (`{file:./agent/smart.md}`) beside it.
    let dir = std::path::Path::new(path).parent().unwrap().join("agent");
    let load = |text: &str| {
        let mut host = MemHost::new()
            .var("HOME", "/h")
            .dir("/w/proj/.git")
            .file("/w/proj/opencode.json", text);
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            host = host.file(
                &format!("/w/proj/agent/{name}"),
                &std::fs::read_to_string(&f).unwrap(),
            );
        }
        Project::load(&host, Path::new(ROOT), Platform::Unix)
            .unwrap_or_else(|f| panic!("{:?}", f.error))
    };
    let (b, h) = (load(&base_text), load(&head_text));
    let d = diff::diff(&b, &h);
    assert!(d.inconclusive.is_empty(), "{:?}", d.inconclusive);
    assert!(!d.changes.is_empty());
    // The claims re-decide as stated, with the same deciding rules.
    for c in &d.changes {
        let find = |p: &Project| {
            p.agents
                .iter()
                .find(|a| a.name == c.agent)
                .unwrap()
                .rules
                .clone()
        };
        let db = evaluate(&find(&b), &c.permission, &c.input, Platform::Unix);
        let dh = evaluate(&find(&h), &c.permission, &c.input, Platform::Unix);
        assert_eq!(
            (db.rule, dh.rule, db.effect, dh.effect),
            (c.base_rule, c.head_rule, c.before, c.after),
            "{c:?}"
        );
    }
    // Every sampled bash difference is reported, with its deciding rules.
    let fill = |g: &str, f: &str| g.replace('*', f).replace('?', "q");
    let patterns: Vec<String> = b
        .agents
        .iter()
        .chain(&h.agents)
        .flat_map(|a| {
            a.rules
                .iter()
                .filter(|r| r.permission == "bash" || r.permission == "*")
                .map(|r| r.pattern.clone())
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut inputs: Vec<String> = Vec::new();
    for p in &patterns {
        for f in ["", "a", "a b"] {
            inputs.push(fill(p, f));
        }
    }
    for c in &changed {
        for p in &patterns {
            let (x, y) = (fill(c, ""), fill(p, ""));
            inputs.extend([
                format!("{x}{y}"),
                format!("{y}{x}"),
                format!("{x} {y}"),
                format!("{y} {x}"),
            ]);
        }
    }
    inputs.sort();
    inputs.dedup();
    let mut differing = 0;
    for a in &b.agents {
        let Some(ha) = h.agents.iter().find(|x| x.name == a.name) else {
            continue;
        };
        let compile = |rules: &[Rule]| {
            CompiledRuleset::new(
                rules
                    .iter()
                    .map(|r| (r.permission.as_str(), r.pattern.as_str())),
                "bash",
                Platform::Unix,
                Want::Last,
            )
        };
        let (mut cb, mut ch) = (compile(&a.rules), compile(&ha.rules));
        let effect = |rules: &[Rule], k: Option<usize>| {
            k.map_or(permaudit::model::Effect::Ask, |k| {
                rules[k].action.effective()
            })
        };
        for s in &inputs {
            let (kb, kh) = (cb.decide(s), ch.decide(s));
            let (eb, eh) = (effect(&a.rules, kb), effect(&ha.rules, kh));
            if eb == eh {
                continue;
            }
            differing += 1;
            assert!(
                d.changes.iter().any(|c| c.agent == a.name
                    && c.permission == "bash"
                    && (c.base_rule, c.head_rule) == (kb, kh)),
                "agent {} bash {s:?}: {eb} -> {eh} (rules {kb:?} -> {kh:?}) not reported",
                a.name
            );
        }
    }
    assert!(differing > 0);
}

/// The oracle: for a sample of pairs, OpenCode's own rulesets of each side.
#[test]
fn sample_against_opencode() {
    use support::oracle;
    let bin = match oracle::locate() {
        oracle::Located::Found(b) => b,
        // Skipped with one printed line, or failed under CI (`tier`).
        oracle::Located::Skip => return,
    };
    let seed = support::harness::seed();
    let n: u64 = std::env::var("PERMAUDIT_DIFF_ORACLE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let scratch = support::harness::Scratch::new();
    let items: Vec<u64> = (0..n).collect();
    support::harness::parallel(items, |k| {
        let (bt, ht, _) = pair(seed, k * 7 + 1);
        let what = format!("seed {seed} oracle case {k}\n--- base\n{bt}--- head\n{ht}");
        let mut sides = Vec::new();
        for (tag, text) in [("base", &bt), ("head", &ht)] {
            let root = scratch.case_root(&format!("diff-{k}-{tag}"));
            for d in ["home", "proj"] {
                std::fs::create_dir_all(root.join(d)).unwrap();
            }
            std::fs::write(root.join("proj/opencode.json"), text).unwrap();
            let st = std::process::Command::new("git")
                .args(["init", "-q", "."])
                .current_dir(root.join("proj"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", root.join("home"))
                .output()
                .unwrap();
            assert!(st.status.success());
            let env = vec![
                (
                    "PATH".to_string(),
                    format!(
                        "{}:{}",
                        scratch.fakebin.display(),
                        std::env::var("PATH").unwrap_or_default()
                    ),
                ),
                ("HOME".to_string(), root.join("home").display().to_string()),
                ("OPENCODE_DISABLE_AUTOUPDATE".to_string(), "1".to_string()),
                ("OPENCODE_DISABLE_MODELS_FETCH".to_string(), "1".to_string()),
                (
                    "OPENCODE_TEST_MANAGED_CONFIG_DIR".to_string(),
                    root.join("managed").display().to_string(),
                ),
            ];
            let run = support::harness::with_slot(|| {
                oracle::run(&bin, &root.join("proj"), &env, &["agent", "list", "--pure"])
            });
            let agents = match oracle::verdict(&run) {
                Ok(oracle::Verdict::Agents(a)) => a,
                other => panic!("{what}: oracle did not list agents: {other:?}"),
            };
            let rules: Vec<(String, Vec<Rule>)> = agents
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
                .collect();
            sides.push(rules);
        }
        let d = diff::diff(&load(&bt), &load(&ht));
        // Rule indices are permaudit's; on the binary's rulesets the effects must hold and
        // every sampled difference be covered.
        check(&d, &sides[0], &sides[1], false, &what);
    });
}

/// Rules of a permission OpenCode never asks (`write`: the write tool asks `edit`) decide
/// no call: reordering a `write` block changes no decision, and the diff says which rules
/// changed without calling it widened. Renaming the key to `edit` does change decisions.
#[test]
fn a_never_checked_permission_changes_no_decision() {
    let a = r#"{"permission": {"edit": "ask", "write": {"docs/*": "allow", "*": "deny"}}}"#;
    let b = r#"{"permission": {"edit": "ask", "write": {"*": "deny", "docs/*": "allow"}}}"#;
    let d = diff::diff(&load(a), &load(b));
    assert!(
        d.changes.is_empty() && !d.widens() && d.is_empty(),
        "{d:#?}"
    );
    assert!(
        d.unchecked
            .iter()
            .any(|u| u.agent == "build" && u.permission == "write"),
        "{d:#?}"
    );
    let c = r#"{"permission": {"edit": {"*": "deny", "docs/*": "allow"}}}"#;
    let d = diff::diff(&load(b), &load(c));
    assert!(
        d.changes
            .iter()
            .any(|c| c.agent == "build" && c.permission == "edit" && c.class == Class::Widened),
        "{d:#?}"
    );
}
