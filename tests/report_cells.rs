//! Every cell of the report page's matrix, for every agent of every real configuration in
//! `tests/real/` that permaudit loads, held to `explain` (issue 46: "every cell true").
//!
//! Each entry is loaded as the fixtures run (`project/` a git worktree, `home/` as HOME,
//! the entry's `env`), here into an in-memory machine (`host::MemHost`) so the 340 entries
//! take seconds rather than one process per cell: the page's data is
//! `report::page::data`, what `permaudit report` embeds, and each answer is `explain`'s
//! own JSON line, written by the `Explainer` and `Renderer` the command uses, after the
//! CLI's one other step (a file tool's name, `write`, asked as `edit`: a `write` column
//! decided by `write` rules would disagree). `tests/report.rs` holds the fixture's cells
//! to the `explain` binary itself. What a cell claims and which inputs are put: `tests/report_support`.

mod check_support;
mod report_support;

use permaudit::explain::Explainer;
use permaudit::glob::Platform;
use permaudit::host::MemHost;
use permaudit::project::Project;
use permaudit::report::Style;
use permaudit::report::explain::Renderer;
use permaudit::report::page;
use permaudit::shell::Places;
use serde_json::Value;
use std::path::Path;

/// An entry's files in memory under `/w` (`/w/project`, `/w/home`), with HOME and its `env`.
fn host_of(entry: &Path) -> MemHost {
    fn walk(dir: &Path, under: &str, host: &mut MemHost) {
        let Ok(list) = std::fs::read_dir(dir) else {
            return;
        };
        for e in list.flatten() {
            let name = format!("{under}/{}", e.file_name().to_string_lossy());
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                walk(&e.path(), &name, host);
            } else if kind.is_file()
                && let Ok(bytes) = std::fs::read(e.path())
            {
                host.files.insert(name.into(), bytes);
            }
        }
    }
    let mut host = MemHost::new().dir("/w/project/.git").var("HOME", "/w/home");
    walk(&entry.join("project"), "/w/project", &mut host);
    walk(&entry.join("home"), "/w/home", &mut host);
    if let Ok(env) = std::fs::read_to_string(entry.join("env")) {
        for line in env.lines().filter(|l| !l.trim().is_empty()) {
            if let Some((k, v)) = line.split_once('=') {
                host = host.var(k, &v.replace("$ROOT", "/w"));
            }
        }
    }
    host
}

/// `explain PERMISSION --agent A --format json` for each input: its JSON answers (a file
/// tool's name asked as `edit`, as the CLI asks it).
fn explain(
    project: &Project,
    agent: &permaudit::agents::Agent,
    permission: &str,
    inputs: &[String],
    env: &permaudit::shell::Env<'_>,
) -> Vec<Value> {
    let asked = permaudit::model::meaning::asked_as(permission);
    let mut explainer = Explainer::new(project, agent, asked);
    let mut render = Renderer::new(project, agent, asked, true, Style { color: false }, None);
    inputs
        .iter()
        .map(|input| {
            let mut out = Vec::new();
            let call = explainer.decide(input, env);
            render.write(&mut out, input, &call).unwrap();
            serde_json::from_str(String::from_utf8(out).unwrap().trim_end()).unwrap()
        })
        .collect()
}

/// The first screen's risks held to `explain`, both ways: each risk said is true (a whole
/// tool: its cell's default is allow and the tool shown; one input: `explain` allows it; a
/// delegation: an escalation edge whose `task` call is not denied), and each one-input risk
/// `explain` proves for an agent (not one of OpenCode's internal agents) is said.
fn risks_agree(project: &Project, d: &Value, env: &permaudit::shell::Env<'_>) -> Vec<String> {
    let permissions = report_support::permissions(d);
    let risks = d["risks"].as_array().unwrap();
    let said = |agent: &str, text: &str| {
        risks
            .iter()
            .any(|r| r["agent"] == agent && r["text"].as_str().unwrap().contains(text))
    };
    // One input each: (permission, input, the risk's words, the whole-tool risk it yields to).
    let single = [
        (
            "bash",
            "git push origin main",
            "may push",
            "runs any command",
        ),
        ("bash", "rm -rf build", "may delete", "runs any command"),
        ("edit", "opencode.json", "OpenCode config", "edits any file"),
        (
            "edit",
            ".opencode/agent/build.md",
            "the project's agents",
            "edits any file",
        ),
        ("read", ".env", "reads secrets", ""),
    ];
    let mut problems = Vec::new();
    for (ai, agent) in project.agents.iter().enumerate() {
        let a = &d["agents"][ai];
        let name = agent.name.as_str();
        let allows = |permission: &str, input: &str| {
            explain(project, agent, permission, &[input.to_string()], env)[0]["action"] == "allow"
        };
        for r in risks.iter().filter(|r| r["agent"] == name) {
            let (permission, text) = (
                r["permission"].as_str().unwrap(),
                r["text"].as_str().unwrap(),
            );
            let cell = permissions
                .iter()
                .position(|p| *p == permission)
                .map(|k| &d["cells"][ai][k]);
            let ok = if ["runs any", "edits any", "reaches files"]
                .iter()
                .any(|w| text.starts_with(w))
            {
                cell.is_some_and(|c| c[1] == false && c[3] == "allow")
            } else if let Some((p, input, ..)) = single.iter().find(|s| text.contains(s.2)) {
                allows(p, input)
            } else if let Some(sub) = text
                .strip_prefix("may start ")
                .and_then(|t| t.split(',').next())
            {
                d["delegation"]["edges"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| {
                        e["caller"] == name && e["subagent"] == sub && !e["escalation"].is_null()
                    })
                    && explain(project, agent, "task", &[sub.to_string()], env)[0]["action"]
                        != "deny"
            } else {
                false
            };
            if !ok {
                problems.push(format!(
                    "{name}: the first screen says {text:?}, explain does not"
                ));
            }
        }
        if a["internal"] == true {
            continue;
        }
        for (permission, input, words, whole) in single {
            let hidden = permissions
                .iter()
                .position(|p| *p == permission)
                .is_some_and(|k| d["cells"][ai][k][1] == true);
            if !hidden
                && allows(permission, input)
                && !said(name, words)
                && (whole.is_empty() || !said(name, whole))
            {
                problems.push(format!(
                    "{name}: explain allows {permission} {input:?} without asking, the first screen does not say so"
                ));
            }
        }
    }
    problems
}

#[test]
fn every_cell_of_every_real_config_agrees_with_explain() {
    let entries = check_support::real_entries();
    assert!(entries.len() >= 300, "{} entries", entries.len());
    let mut tally = report_support::Tally::default();
    let (mut loaded, mut refused) = (0, 0);
    let mut problems = Vec::new();
    let mut risks = 0;
    for entry in &entries {
        let name = entry.file_name().unwrap().to_string_lossy().to_string();
        let host = host_of(entry);
        let start = format!("/w/{}", check_support::start_of(entry));
        let Ok(project) = Project::load(&host, Path::new(&start), Platform::Unix) else {
            refused += 1;
            continue;
        };
        loaded += 1;
        let d = page::data(&page::Inputs {
            project: &project,
            findings: &[],
            fixes: &[],
            files: None,
            commands: &[],
            diff: None,
            diff_agents: Vec::new(),
            title: "t",
        });
        let permissions = report_support::permissions(&d);
        let names = report_support::names(&d);
        let places = Places::of(project.loaded.paths());
        let no_dirs = |_: &str| false;
        let env = places.env(&no_dirs);
        for (ai, agent) in project.agents.iter().enumerate() {
            let a = &d["agents"][ai];
            for (pi, permission) in permissions.iter().enumerate() {
                let cell = &d["cells"][ai][pi];
                let inputs = report_support::inputs_of(cell, a, permission, &names);
                let answers = explain(&project, agent, permission, &inputs, &env);
                for p in
                    report_support::check_cell(a, permission, cell, &inputs, &answers, &mut tally)
                {
                    problems.push(format!("{name}: {p}"));
                }
            }
        }
        risks += d["risks"].as_array().unwrap().len();
        for p in risks_agree(&project, &d, &env) {
            problems.push(format!("{name}: {p}"));
        }
    }
    eprintln!(
        "{loaded} entries ({refused} refused), {} cells, {} explain answers ({} decided by an external_directory ask first), {risks} first-screen risks, {} disagree",
        tally.cells,
        tally.answers,
        tally.after_external,
        problems.len()
    );
    assert!(tally.cells > 10_000, "only {} cells", tally.cells);
    assert!(risks > 1_000, "only {risks} first-screen risks");
    assert!(
        problems.is_empty(),
        "{} cells disagree with explain:\n{}",
        problems.len(),
        problems
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
