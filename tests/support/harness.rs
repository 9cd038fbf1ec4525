//! Running one case through the oracle and through permaudit, comparing, reporting.
//!
//! Paths. OpenCode's rules contain absolute paths derived from HOME
//! (`$HOME/.local/share/opencode/tool-output/*`, expanded `~/` patterns) and the plan
//! agent's `edit` allow is a path *relative* from the worktree to DATA. Rewriting paths
//! after the fact would be guesswork, so both programs see the case at the SAME absolute
//! path: the tree is written to `<tmp>/w`, the oracle runs there (and scribbles on it: it
//! adds `$schema` to configs, creates `CONFIG/opencode.jsonc`, logs, a database), then `w` is
//! deleted and written again from the in-memory case, and permaudit runs on that pristine
//! copy with the identical environment. Every path-derived string is then byte-identical,
//! and permaudit never sees a file the oracle touched.

use super::cases::{Case, HOME_TOKEN};
use super::oracle::{self, Agent, Agents, Rule, Run, Verdict};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Settings from the environment

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
        }
        Err(_) => default,
    }
}

/// PERMAUDIT_CONFORMANCE_SEED (decimal or 0x-hex).
pub fn seed() -> u64 {
    env_u64("PERMAUDIT_CONFORMANCE_SEED", 20_260_118)
}

/// The case indices to run: PERMAUDIT_CONFORMANCE_ONLY="3,17" or `0..count`.
pub fn indices(count_var: &str, default: u64) -> Vec<u64> {
    if let Ok(only) = std::env::var("PERMAUDIT_CONFORMANCE_ONLY") {
        return only
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("PERMAUDIT_CONFORMANCE_ONLY: comma-separated indices")
            })
            .collect();
    }
    (0..env_u64(count_var, default)).collect()
}

/// PERMAUDIT_CONFORMANCE_JOBS: concurrent oracle processes across all tests (default 4).
pub fn jobs() -> usize {
    env_u64("PERMAUDIT_CONFORMANCE_JOBS", 4).max(1) as usize
}

pub fn verbose() -> bool {
    std::env::var("PERMAUDIT_CONFORMANCE_VERBOSE").is_ok_and(|v| v == "1")
}

/// Write straight to the process's stderr, bypassing libtest's capture, so progress,
/// failures and a skip are visible even in a passing run.
pub fn say(s: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(s.as_bytes());
    if !s.ends_with('\n') {
        let _ = e.write_all(b"\n");
    }
}

// ---------------------------------------------------------------------------------------------
// Concurrency

static SLOTS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// Run `f` while holding one of `jobs()` process-wide slots: both tests share the limit,
/// so running them side by side does not oversubscribe a small machine.
pub fn with_slot<R>(f: impl FnOnce() -> R) -> R {
    let (lock, cv) = &SLOTS;
    let mut busy = lock.lock().unwrap();
    while *busy >= jobs() {
        busy = cv.wait(busy).unwrap();
    }
    *busy += 1;
    drop(busy);
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            let (lock, cv) = &SLOTS;
            *lock.lock().unwrap() -= 1;
            cv.notify_one();
        }
    }
    let _release = Release;
    f()
}

/// Map `f` over `items` on `jobs()` threads; results in input order.
pub fn parallel<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let queue = Mutex::new(items.into_iter().enumerate().collect::<VecDeque<_>>());
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs().min(n.max(1)) {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().pop_front();
                    let Some((i, item)) = next else { break };
                    let r = f(item);
                    results.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("worker finished"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Trees and environments

/// Scratch space shared by one test: the fake `rg` and the case roots.
pub struct Scratch {
    pub dir: tempfile::TempDir,
    pub fakebin: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("permaudit-conformance-")
            .tempdir()
            .unwrap();
        let fakebin = dir.path().canonicalize().unwrap().join("fakebin");
        std::fs::create_dir_all(&fakebin).unwrap();
        // The glob/grep tools would otherwise try to download ripgrep (spec §10).
        let rg = fakebin.join("rg");
        std::fs::write(&rg, "#!/bin/sh\nexit 1\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rg, std::fs::Permissions::from_mode(0o755)).unwrap();
        Scratch { dir, fakebin }
    }

    /// A fresh, canonical case root `<scratch>/<id>/w` (canonical so that no symlinked
    /// /tmp makes OpenCode's git root differ from permaudit's).
    pub fn case_root(&self, id: &str) -> PathBuf {
        let base = self.dir.path().join(id);
        std::fs::create_dir_all(&base).unwrap();
        base.canonicalize().unwrap().join("w")
    }
}

/// Write the case under `root`, replacing whatever is there. `git` makes `proj` a repository.
pub fn materialize(case: &Case, root: &Path, git: bool) {
    if root.exists() {
        std::fs::remove_dir_all(root).unwrap();
    }
    for d in ["home", "proj"]
        .iter()
        .copied()
        .chain(case.dirs.iter().map(String::as_str))
    {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (path, bytes) in &case.files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
    }
    if git {
        let st = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(root.join("proj"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", root.join("home"))
            .output()
            .expect("git must be installed");
        assert!(st.status.success(), "git init failed: {st:?}");
    }
}

/// The complete environment of both programs: nothing inherited but PATH (with the fake
/// `rg` first), XDG_* therefore unset, HOME inside the case, the managed config dir pinned
/// inside the case so a host's /etc/opencode cannot leak in, plus the case's own variables.
pub fn full_env(case: &Case, root: &Path, fakebin: &Path) -> Vec<(String, String)> {
    let mut env = isolated_env(root, fakebin);
    env.extend(case.env_resolved(root));
    env
}

/// [`full_env`] without a case's own variables.
pub fn isolated_env(root: &Path, fakebin: &Path) -> Vec<(String, String)> {
    let path = format!(
        "{}:{}",
        fakebin.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    vec![
        ("PATH".to_string(), path),
        ("HOME".to_string(), root.join("home").display().to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE".to_string(), "1".to_string()),
        ("OPENCODE_DISABLE_MODELS_FETCH".to_string(), "1".to_string()),
        (
            "OPENCODE_TEST_MANAGED_CONFIG_DIR".to_string(),
            root.join("managed").display().to_string(),
        ),
    ]
}

/// A case root for the tool suites: `proj/` (a git repository: OpenCode's worktree) and the
/// other directories named, empty.
pub fn git_project(root: &Path, dirs: &[&str]) {
    for d in ["proj"].iter().chain(dirs) {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let ok = Command::new("git")
        .arg("-C")
        .arg(root.join("proj"))
        .args(["init", "-q"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git init");
}

/// `permaudit -C PROJ explain PERMISSION INPUT --format json` under exactly `env`: the one
/// JSON line, or what went wrong.
pub fn explain_json(
    proj: &Path,
    env: &[(String, String)],
    permission: &str,
    input: &str,
) -> Result<serde_json::Value, String> {
    let out = Command::new(permaudit_bin())
        .arg("-C")
        .arg(proj)
        .args(["explain", permission, input, "--format", "json"])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

pub fn permaudit_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_permaudit"))
}

/// Run permaudit like OpenCode was run: from the case cwd, or with `-C <cwd>` from the case
/// root when the case asks for it.
pub fn run_permaudit(case: &Case, root: &Path, env: &[(String, String)], args: &[&str]) -> Run {
    let cwd = root.join(&case.cwd);
    let mut cmd = Command::new("timeout");
    cmd.arg("60").arg(permaudit_bin());
    if case.dash_c {
        cmd.arg("-C").arg(&cwd).current_dir(root);
    } else {
        cmd.current_dir(&cwd);
    }
    let out = cmd
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("spawn permaudit");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Run the oracle once; an unusable run (timeout under load) is retried once.
pub fn run_oracle(
    bin: &Path,
    case: &Case,
    root: &Path,
    env: &[(String, String)],
    args: &[&str],
) -> Run {
    let cwd = root.join(&case.cwd);
    let first = with_slot(|| oracle::run(bin, &cwd, env, args));
    if first.code == Some(124) {
        return with_slot(|| oracle::run(bin, &cwd, env, args));
    }
    first
}

// ---------------------------------------------------------------------------------------------
// permaudit's JSON

/// `permaudit rules --format json`:
/// `{"version":1,"agents":[{"agent","mode","rules":[{"permission","pattern","action",…}]}]}`.
pub fn parse_permaudit_rules(stdout: &str) -> Result<Agents, String> {
    let v: Value = serde_json::from_str(stdout).map_err(|e| format!("stdout is not JSON: {e}"))?;
    if v.get("version") != Some(&Value::from(1)) {
        return Err(format!(
            "expected \"version\": 1, got {:?}",
            v.get("version")
        ));
    }
    let list = v
        .get("agents")
        .and_then(Value::as_array)
        .ok_or("no \"agents\" array")?;
    let mut agents = Agents::new();
    for a in list {
        let name = a
            .get("agent")
            .and_then(Value::as_str)
            .ok_or("agent without \"agent\" name")?;
        let mode = a
            .get("mode")
            .and_then(Value::as_str)
            .ok_or("agent without \"mode\"")?;
        let rules = a
            .get("rules")
            .and_then(Value::as_array)
            .ok_or("agent without \"rules\"")?
            .iter()
            .map(Rule::from_json)
            .collect::<Result<Vec<_>, _>>()?;
        let agent = Agent {
            mode: mode.to_string(),
            rules,
        };
        if agents.insert(name.to_string(), agent).is_some() {
            return Err(format!("agent {name:?} listed twice"));
        }
    }
    Ok(agents)
}

// ---------------------------------------------------------------------------------------------
// Comparison

/// All `<path>:<line>:<col>` locations in a text, as (path, line, col).
pub fn locations(text: &str) -> Vec<(String, u32, u32)> {
    let mut out = Vec::new();
    // Tokens end at whitespace and at the brackets, quotes and box-drawing characters that
    // diagnostics (miette's `╭─[file:1:2]`) put around a location.
    let separator = |c: char| c.is_whitespace() || "[](){}<>,;'\"`│╭╰─".contains(c);
    for t in text.split(separator) {
        // path:line:col, possibly followed by `:` (`file:1:2: error`).
        let t = t.trim_end_matches(':');
        let mut parts = t.rsplitn(3, ':');
        let (Some(col), Some(line), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if let (Ok(l), Ok(c)) = (line.parse(), col.parse()) {
            if !path.is_empty() {
                out.push((path.to_string(), l, c));
            }
        }
    }
    out
}

fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

pub enum Outcome {
    Pass,
    /// `advisory` lists differences that are reported but do not fail the case.
    PassWithNotes(Vec<String>),
    Fail(String),
}

/// Compare one case. `oracle_run` is what `agent list` printed, `pa` what `permaudit rules`
/// printed on the same tree.
pub fn compare_rules(oracle_run: &Run, pa: &Run, root: &Path) -> Outcome {
    let verdict = match oracle::verdict(oracle_run) {
        Ok(v) => v,
        Err(e) => return Outcome::Fail(format!("ORACLE RUN UNUSABLE: {e}")),
    };
    let pa_all = oracle::strip_ansi(&format!("{}\n{}", pa.stdout, pa.stderr));
    match verdict {
        Verdict::Agents(expected) => {
            if pa.code == Some(2) {
                return Outcome::Fail(format!(
                    "OpenCode ACCEPTS this config, permaudit refused it (exit 2):\n{}",
                    indent(&clip(pa_all.trim(), 40))
                ));
            }
            let got = match parse_permaudit_rules(&pa.stdout) {
                Ok(g) => g,
                Err(e) => {
                    return Outcome::Fail(format!(
                        "permaudit output unusable (exit {:?}): {e}\n{}",
                        pa.code,
                        indent(&clip(pa_all.trim(), 40))
                    ));
                }
            };
            match diff_agents(&expected, &got, root) {
                None => Outcome::Pass,
                Some(d) => Outcome::Fail(d),
            }
        }
        Verdict::Refused(r) => {
            let mut problems = Vec::new();
            if pa.code != Some(2) {
                problems.push(format!("permaudit exited {:?}, expected 2", pa.code));
            }
            let want = file_name(&r.file);
            let locs: Vec<_> = locations(&pa_all)
                .into_iter()
                .filter(|(p, _, _)| file_name(p).contains(want))
                .collect();
            if locs.is_empty() {
                problems.push(format!(
                    "permaudit printed no `<…{want}>:<line>:<col>` location"
                ));
            }
            if problems.is_empty() {
                if let Some((line, col)) = r.syntax_at {
                    if !locs.iter().any(|(_, l, _)| *l == line) {
                        return Outcome::PassWithNotes(vec![format!(
                            "syntax error position: OpenCode says line {line}, column {col}; \
                             permaudit says {:?}",
                            locs.iter()
                                .map(|(p, l, c)| format!("{p}:{l}:{c}"))
                                .collect::<Vec<_>>()
                        )]);
                    }
                }
                return Outcome::Pass;
            }
            Outcome::Fail(format!(
                "OpenCode REFUSES this config ({}); {}\n--- OpenCode said:\n{}\n--- permaudit said:\n{}",
                r.file,
                problems.join("; "),
                indent(&r.message),
                indent(&clip(pa_all.trim(), 40))
            ))
        }
        Verdict::Crashed(msg) => {
            if pa.code == Some(2) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "OpenCode CANNOT START with this setup, permaudit exited {:?} (expected 2)\n\
                     --- OpenCode said:\n{}\n--- permaudit said:\n{}",
                    pa.code,
                    indent(&msg),
                    indent(&clip(pa_all.trim(), 40))
                ))
            }
        }
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

/// The first `n` lines of a program's output (the full text is saved with the case).
fn clip(s: &str, n: usize) -> String {
    let total = s.lines().count();
    let mut out: String = s.lines().take(n).map(|l| format!("{l}\n")).collect();
    if total > n {
        out.push_str(&format!("… ({} more lines in permaudit.txt)\n", total - n));
    }
    out
}

/// None when equal; else a readable report with the rulesets side by side.
/// `root` is only used for display: the case root is shown as `$ROOT`.
pub fn diff_agents(expected: &Agents, got: &Agents, root: &Path) -> Option<String> {
    let mut out = String::new();
    let missing: Vec<_> = expected.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<_> = got.keys().filter(|k| !expected.contains_key(*k)).collect();
    if !missing.is_empty() {
        writeln!(out, "agents missing from permaudit: {missing:?}").unwrap();
    }
    if !extra.is_empty() {
        writeln!(out, "agents permaudit has but OpenCode does not: {extra:?}").unwrap();
    }
    for (name, e) in expected {
        let Some(g) = got.get(name) else { continue };
        if e.mode != g.mode {
            writeln!(
                out,
                "agent {name:?}: mode is {:?} in OpenCode, {:?} in permaudit",
                e.mode, g.mode
            )
            .unwrap();
        }
        if e.rules != g.rules {
            out.push_str(&side_by_side(name, &e.rules, &g.rules, root));
        }
    }
    if out.is_empty() { None } else { Some(out) }
}

pub fn side_by_side(agent: &str, left: &[Rule], right: &[Rule], root: &Path) -> String {
    let root = root.display().to_string();
    let first = (0..left.len().max(right.len()))
        .find(|&i| left.get(i) != right.get(i))
        .unwrap_or(0);
    let mut out = format!(
        "agent {agent:?}: rules differ, first at index {first} (OpenCode {} rules, permaudit {})\n",
        left.len(),
        right.len()
    );
    let show = |r: &Rule| r.show().replace(&root, "$ROOT");
    let shown = |r: Option<&Rule>| r.map(show).unwrap_or_else(|| "-".into());
    let width = left
        .iter()
        .map(|r| show(r).chars().count())
        .max()
        .unwrap_or(1)
        .clamp(16, 70);
    writeln!(out, "       {:width$} | permaudit", "OpenCode 1.18.34").unwrap();
    for i in 0..left.len().max(right.len()) {
        let (l, r) = (left.get(i), right.get(i));
        let mark = if l == r { "  " } else { ">>" };
        let ls = shown(l);
        let rs = if l == r { "=".to_string() } else { shown(r) };
        writeln!(out, "    {mark}{i:>2} {ls:width$} | {rs}").unwrap();
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Describing and saving a case

pub fn describe(case: &Case, root: &Path) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "case {} — root {} (shown as $ROOT)",
        case.id,
        root.display()
    )
    .unwrap();
    for n in &case.notes {
        writeln!(out, "  * {n}").unwrap();
    }
    writeln!(
        out,
        "  cwd: {}{}",
        case.cwd,
        if case.dash_c { " (permaudit -C)" } else { "" }
    )
    .unwrap();
    for (k, v) in &case.env {
        if matches!(k.as_str(), "ACT" | "PAT" | "EVIL") {
            continue;
        }
        writeln!(out, "  env {k}={v}").unwrap();
    }
    let subst: Vec<_> = case
        .env
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "ACT" | "PAT" | "EVIL"))
        .map(|(k, v)| format!("{k}={v:?}"))
        .collect();
    writeln!(out, "  env {} (for {{env:…}})", subst.join(" ")).unwrap();
    for (path, bytes) in &case.files {
        writeln!(out, "  --- {path}").unwrap();
        let text = String::from_utf8_lossy(bytes);
        for l in text.lines() {
            writeln!(out, "  | {l}").unwrap();
        }
        if text.is_empty() {
            writeln!(out, "  | (empty file)").unwrap();
        }
    }
    out
}

pub fn failures_dir() -> PathBuf {
    // target/<profile>/permaudit -> target/
    let exe = permaudit_bin();
    exe.parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("target"))
        .join("conformance-failures")
}

/// Remove saved failures of earlier runs that belong to this test (`glob-` prefix or not).
pub fn clear_failures(glob: bool) {
    let Ok(rd) = std::fs::read_dir(failures_dir()) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("glob-") == glob {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// An env value for a script in which `$R` is the case root.
fn sh_value(v: &str) -> String {
    v.split(super::cases::ROOT_TOKEN)
        .map(sh_quote)
        .collect::<Vec<_>>()
        .join("\"$R\"")
}

/// Save a failing case under target/conformance-failures/<id>/: the pristine tree, the
/// report, both programs' raw output, and `repro.sh oracle|permaudit [ARGS…]`, which rebuilds
/// the case in a scratch dir and runs either program exactly as the test did.
pub fn save_failure(
    case: &Case,
    report: &str,
    outputs: &[(&str, &Run)],
    oracle_bin: &Path,
    oracle_args: &[&str],
    pa_args: &[&str],
) -> PathBuf {
    let dir = failures_dir().join(&case.id);
    let _ = std::fs::remove_dir_all(&dir);
    materialize(case, &dir.join("tree"), false);
    std::fs::write(dir.join("report.txt"), report).unwrap();
    for (name, run) in outputs {
        let text = format!(
            "exit: {:?}\n--- stdout\n{}\n--- stderr\n{}",
            run.code, run.stdout, run.stderr
        );
        std::fs::write(dir.join(format!("{name}.txt")), text).unwrap();
    }
    let mut s = String::from("#!/usr/bin/env bash\n");
    writeln!(
        s,
        "# Conformance case {}: rebuild the tree in a scratch dir (OpenCode writes",
        case.id
    )
    .unwrap();
    s.push_str(
        "# into configs), git-init proj, run one program with the case's exact environment.\n",
    );
    s.push_str(
        "# usage: repro.sh oracle|permaudit [ARGS...]   (OPENCODE_BIN / PERMAUDIT_BIN override)\n",
    );
    s.push_str("set -eu\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\n");
    s.push_str("S=$(mktemp -d /tmp/permaudit-repro-XXXXXX); R=$S/w\n");
    s.push_str("cp -a \"$here/tree\" \"$R\"\n(cd \"$R/proj\" && git init -q .)\n");
    s.push_str("mkdir -p \"$S/fakebin\"; printf '#!/bin/sh\\nexit 1\\n' > \"$S/fakebin/rg\"; chmod +x \"$S/fakebin/rg\"\n");
    s.push_str("echo \"case root: $R\" >&2\nwhat=${1:-oracle}; shift || true\n");
    s.push_str(
        "ENV=(PATH=\"$S/fakebin:$PATH\" HOME=\"$R/home\" OPENCODE_DISABLE_AUTOUPDATE=1 \
                OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_TEST_MANAGED_CONFIG_DIR=\"$R/managed\")\n",
    );
    for (k, v) in &case.env {
        writeln!(s, "ENV+=({k}={})", sh_value(v)).unwrap();
    }
    writeln!(s, "cd \"$R/{}\"", case.cwd).unwrap();
    let quoted = |args: &[&str]| {
        args.iter()
            .map(|a| sh_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    s.push_str("case $what in\n");
    writeln!(
        s,
        "  oracle) [ $# -gt 0 ] || set -- {}\n    exec env -i \"${{ENV[@]}}\" timeout 60 \"${{OPENCODE_BIN:-{}}}\" \"$@\" ;;",
        quoted(oracle_args),
        oracle_bin.display()
    )
    .unwrap();
    writeln!(
        s,
        "  permaudit) [ $# -gt 0 ] || set -- {}\n    exec env -i \"${{ENV[@]}}\" \"${{PERMAUDIT_BIN:-{}}}\" \"$@\" ;;",
        quoted(pa_args),
        permaudit_bin().display()
    )
    .unwrap();
    s.push_str("  *) echo \"usage: $0 oracle|permaudit [ARGS...]\" >&2; exit 64 ;;\nesac\n");
    let script = dir.join("repro.sh");
    std::fs::write(&script, s).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Replace `@HOME@` in a glob probe input.
pub fn resolve_home(s: &str, root: &Path) -> String {
    s.replace(HOME_TOKEN, &root.join("home").display().to_string())
}

pub fn elapsed(t: Instant) -> String {
    let d: Duration = t.elapsed();
    format!("{:.1}s", d.as_secs_f64())
}
