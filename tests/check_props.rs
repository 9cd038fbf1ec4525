//! Properties of `permaudit check` on random small configurations (in-memory machines):
//!
//! * every witness a finding reports, decided again with `agents::evaluate` over
//!   that agent's rules, gives exactly the action and the deciding rule the finding
//!   claims, and for reachability findings it matches the rule reported and is decided by
//!   a later one;
//! * no deny that decides some input is reported as `shadowed-deny` (checked against every
//!   input built from the config's own globs);
//! * a run reusing what earlier runs built (`checks::Engines`, as `permaudit server` does)
//!   finds exactly what a run from nothing finds.
//!
//! The configurations mix permission keys and globs, both forms, duplicate and
//! integer-like keys, agent rules and legacy `tools`, on both platforms.

use permaudit::agents::evaluate;
use permaudit::checks::{Engines, Finding, run, run_reusing};
use permaudit::delegation::RunMode;
use permaudit::glob::Platform;
use permaudit::host::MemHost;
use permaudit::project::Project;
use proptest::prelude::*;
use std::path::Path;

const PERMS: &[&str] = &["bash", "edit", "read", "*", "ed*", "b?sh", "glob"];
const PATS: &[&str] = &[
    "*", "a*", "a/*", "ab", "a", "*b", "?", "a?*", "git *", "x", "", "5", "12", "a/**", "*.env",
    "A*",
];
const ACTIONS: &[&str] = &["allow", "ask", "deny"];

/// A permission key with either an action (string form) or patterns (duplicates allowed).
type Entry = (usize, Result<usize, Vec<(usize, usize)>>);

fn entry() -> impl Strategy<Value = Entry> {
    (
        0..PERMS.len(),
        prop_oneof![
            (0..ACTIONS.len()).prop_map(Ok),
            prop::collection::vec((0..PATS.len(), 0..ACTIONS.len()), 1..5).prop_map(Err),
        ],
    )
}

fn object(entries: &[Entry]) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let items: Vec<String> = entries
        .iter()
        .map(|(p, v)| {
            let value = match v {
                Ok(a) => q(ACTIONS[*a]),
                Err(pats) => format!(
                    "{{{}}}",
                    pats.iter()
                        .map(|(k, a)| format!("{}:{}", q(PATS[*k]), q(ACTIONS[*a])))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            };
            format!("\n  {}:{}", q(PERMS[*p]), value)
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

#[derive(Debug, Clone)]
struct Config {
    top: Vec<Entry>,
    agent: Vec<Entry>,
    tools: Vec<(usize, bool)>,
    windows: bool,
}

fn config() -> impl Strategy<Value = Config> {
    (
        prop::collection::vec(entry(), 0..5),
        prop::collection::vec(entry(), 0..3),
        prop::collection::vec((0..4usize, any::<bool>()), 0..3),
        any::<bool>(),
    )
        .prop_map(|(top, agent, tools, windows)| Config {
            top,
            agent,
            tools,
            windows,
        })
}

fn text(c: &Config) -> String {
    let tool_names = ["bash", "write", "edit", "read"];
    let tools: Vec<String> = c
        .tools
        .iter()
        .map(|(t, b)| format!("\"{}\":{b}", tool_names[*t]))
        .collect();
    format!(
        "{{\"permission\":{},\n\"tools\":{{{}}},\n\"agent\":{{\"build\":{{\"permission\":{}}}}}}}",
        object(&c.top),
        tools.join(","),
        object(&c.agent)
    )
}

/// Strings a glob can match: each `*` replaced by a few runs, each `?` by a few units.
fn expansions(glob: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for ch in glob.chars() {
        let choices: &[&str] = match ch {
            '*' => &["", "a", "b/", " x", "5"],
            '?' => &["a", "/", "B"],
            _ => &[],
        };
        out = if choices.is_empty() {
            out.into_iter()
                .map(|mut s| {
                    s.push(ch);
                    s
                })
                .collect()
        } else {
            out.iter()
                .flat_map(|s| choices.iter().map(move |c| format!("{s}{c}")))
                .take(200)
                .collect()
        };
    }
    out
}

fn load(c: &Config) -> Project {
    let host = MemHost::new()
        .var("HOME", "/h")
        .dir("/w/p/.git")
        .file("/w/p/opencode.json", &text(c));
    let platform = if c.windows {
        Platform::Windows
    } else {
        Platform::Unix
    };
    match Project::load(&host, Path::new("/w/p"), platform) {
        Ok(p) => p,
        Err(f) => panic!("generated config refused: {:?}\n{}", f.error, text(c)),
    }
}

const REACH: &[&str] = &[
    "shadowed-deny",
    "shadowed-ask",
    "dead-rule",
    "overridden-by-later-layer",
];

fn check_witnesses(p: &Project, findings: &[Finding]) -> Result<(), TestCaseError> {
    for f in findings {
        let Some(name) = f.agents.first() else {
            prop_assert!(
                f.witnesses.is_empty(),
                "{} without an agent has witnesses",
                f.id
            );
            continue;
        };
        let agent = p.agents.iter().find(|a| &a.name == name).unwrap();
        for w in &f.witnesses {
            let d = evaluate(&agent.rules, &w.permission, &w.input, p.platform);
            prop_assert_eq!(d.effect, w.action, "{} {}: {:?}", f.id, f.message, w);
            prop_assert_eq!(d.rule, w.rule, "{} {}: {:?}", f.id, f.message, w);
            // Every other agent listed decides it the same way, by the same rule.
            let place = d.rule.map(|k| agent.rules[k].loc);
            for other in &f.agents[1..] {
                let o = p.agents.iter().find(|a| &a.name == other).unwrap();
                let od = evaluate(&o.rules, &w.permission, &w.input, p.platform);
                prop_assert_eq!(od.effect, w.action, "{} for agent {}: {:?}", f.id, other, w);
                if place.is_some_and(|l| l.is_some()) {
                    prop_assert_eq!(
                        od.rule.map(|k| o.rules[k].loc),
                        place,
                        "{} for agent {}: {:?}",
                        f.id,
                        other,
                        w
                    );
                }
            }
            if REACH.contains(&f.id) {
                let i = f.rule.unwrap();
                let r = &agent.rules[i];
                let m = permaudit::glob::matches;
                prop_assert!(
                    m(&w.permission, &r.permission, p.platform)
                        && m(&w.input, &r.pattern, p.platform),
                    "{}: the witness does not match the rule it is about",
                    f.id
                );
                prop_assert!(
                    d.rule.is_some_and(|k| k > i),
                    "{}: not decided by a later rule",
                    f.id
                );
            }
        }
    }
    Ok(())
}

/// `c` with every action moved on by `by[k]` (entry `k`, cycling): the same shapes.
fn other_actions(c: &Config, by: &[usize]) -> Config {
    let mut k = 0;
    let mut step = |a: &mut usize| {
        *a = (*a + by.get(k % by.len().max(1)).copied().unwrap_or(1)) % ACTIONS.len();
        k += 1;
    };
    let mut out = c.clone();
    for (_, v) in out.top.iter_mut().chain(out.agent.iter_mut()) {
        match v {
            Ok(a) => step(a),
            Err(pats) => pats.iter_mut().for_each(|(_, a)| step(a)),
        }
    }
    out
}

/// `c` with every pattern moved on by `by` in `PATS`: the same permissions, other shapes.
fn other_patterns(c: &Config, by: usize) -> Config {
    let mut out = c.clone();
    for (_, v) in out.top.iter_mut().chain(out.agent.iter_mut()) {
        if let Err(pats) = v {
            pats.iter_mut()
                .for_each(|(p, _)| *p = (*p + by) % PATS.len());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// `permaudit server` keeps the analyses of its last check (`Engines`): a check after
    /// another config, after the same config with other actions (every analysis reused),
    /// with other patterns or on the other platform, finds what a check from nothing finds.
    #[test]
    fn reused_runs_find_what_fresh_runs_find(
        a in config(),
        b in config(),
        by in prop::collection::vec(0..3usize, 1..6),
        shift in 1..PATS.len(),
    ) {
        let engines = Engines::default();
        let on_windows = Config { windows: !b.windows, ..b.clone() };
        for c in [
            a.clone(),
            b.clone(),
            other_actions(&b, &by),
            other_actions(&b, &by),
            other_patterns(&b, shift),
            on_windows,
            a,
        ] {
            let p = load(&c);
            prop_assert_eq!(
                run_reusing(&p, RunMode::Interactive, &engines),
                run(&p),
                "{}",
                text(&c)
            );
            engines.settle();
        }
    }

    #[test]
    fn witnesses_are_what_opencode_decides(c in config()) {
        let p = load(&c);
        let findings = run(&p);
        check_witnesses(&p, &findings)?;
    }

    #[test]
    fn no_deciding_deny_is_reported_shadowed(c in config()) {
        let p = load(&c);
        let findings = run(&p);
        for f in findings.iter().filter(|f| f.id == "shadowed-deny") {
            let agent = p.agents.iter().find(|a| Some(&a.name) == f.agents.first()).unwrap();
            let i = f.rule.unwrap();
            let mut perms: Vec<String> = agent.rules.iter().flat_map(|r| expansions(&r.permission)).collect();
            perms.extend(["bash", "edit", "read", "glob", "x"].map(String::from));
            perms.sort();
            perms.dedup();
            let mut subjects: Vec<String> = agent.rules.iter().flat_map(|r| expansions(&r.pattern)).collect();
            subjects.sort();
            subjects.dedup();
            for perm in &perms {
                for s in &subjects {
                    let d = evaluate(&agent.rules, perm, s, p.platform);
                    prop_assert_ne!(d.rule, Some(i), "shadowed-deny on rule {} of {}, but it decides {} {:?}\n{}", i, agent.name, perm, s, text(&c));
                }
            }
        }
    }
}
