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

#[test]
fn every_cell_of_every_real_config_agrees_with_explain() {
    let entries = check_support::real_entries();
    assert!(entries.len() >= 300, "{} entries", entries.len());
    let mut tally = report_support::Tally::default();
    let (mut loaded, mut refused) = (0, 0);
    let mut problems = Vec::new();
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
                let asked = permaudit::model::meaning::asked_as(permission);
                let mut explainer = Explainer::new(&project, agent, asked);
                let mut render =
                    Renderer::new(&project, agent, asked, true, Style { color: false }, None);
                let mut answers = Vec::new();
                for input in &inputs {
                    let mut out = Vec::new();
                    let call = explainer.decide(input, &env);
                    render.write(&mut out, input, &call).unwrap();
                    let line = String::from_utf8(out).unwrap();
                    answers.push(serde_json::from_str::<Value>(line.trim_end()).unwrap());
                }
                for p in
                    report_support::check_cell(a, permission, cell, &inputs, &answers, &mut tally)
                {
                    problems.push(format!("{name}: {p}"));
                }
            }
        }
    }
    eprintln!(
        "{loaded} entries ({refused} refused), {} cells, {} explain answers ({} decided by an external_directory ask first), {} disagree",
        tally.cells,
        tally.answers,
        tally.after_external,
        problems.len()
    );
    assert!(tally.cells > 10_000, "only {} cells", tally.cells);
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
