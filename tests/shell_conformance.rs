//! Conformance of bash splitting: `permaudit explain bash` against the real OpenCode 1.18.34
//! bash tool (`opencode debug agent build --pure --tool bash --params
//! '{"command":…,"description":…}'`), which parses the command with its embedded
//! tree-sitter-bash and asks about every part.
//!
//! `debug agent --tool` makes a deny visible (it prints "…prevents you from using this
//! specific tool call…" and exits 1) and lets an ask through (the command then runs), so
//! each case compares *denied or not*, under three configs that make the split observable:
//!
//! 1. **outcome**: `bash: {"*": "deny", <a random few of echo *, pwd, true, ls *, printf *,
//!    cat *>: "allow"}` and `external_directory: {"*": "deny"}`;
//! 2. **every OpenCode part is one of ours**: `bash: {"*": "deny", <each part permaudit
//!    found, literally>: "allow"}`: OpenCode must allow;
//! 3. **every part of ours is asked**: the same without one part (chosen by the seed):
//!    OpenCode must deny whenever permaudit says the dropped part is now denied.
//!
//! permaudit decides the same command under the same config (`explain bash --format json`)
//! and must agree each time. The commands come from a seeded generator written without
//! the splitter: harmless commands only (`echo`, `pwd`, `true`, `ls`, `printf`, `cat` of
//! `/etc/hostname` or of files that do not exist, `cd`, `test`), joined with pipelines, `&&`, `||`, `;`, newlines,
//! subshells, groups, `$(…)`, `if`/`for`, assignments, quotes and redirections to
//! `/dev/null` only — **the binary really runs every command it allows**.
//!
//! Setup as `tests/conformance.rs` (`scripts/install-oracle.sh` or OPENCODE_BIN). Knobs:
//! PERMAUDIT_CONFORMANCE_SEED, PERMAUDIT_SHELL_CASES (default 25; each case runs OpenCode
//! three times, ~2–3 s each), PERMAUDIT_CONFORMANCE_ONLY=3,17, PERMAUDIT_CONFORMANCE_JOBS,
//! PERMAUDIT_CONFORMANCE_VERBOSE=1.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::harness::{self, Scratch, say};
use support::oracle::{self, Located, ToolFate};
use support::rng::Rng;

/// Harmless simple commands (none writes anything; none reads outside `/etc/hostname`).
const SIMPLE: &[&str] = &[
    "echo hi",
    "echo \"a  b\"",
    "echo 'x y'",
    "echo $HOME",
    "\"echo\" quoted",
    "pwd",
    "true",
    "ls",
    "ls -a",
    "printf '%s\\n' z",
    "cd .",
    "cd /tmp",
    "cd ~",
    "cat /etc/hostname",
    "cat /etc/host*",
    "cat ~/nofile",
    "cat $HOME/nofile",
    "cat ../nofile",
    "test -n x",
    "[ -d . ]",
    "FOO=1 echo assigned",
    "X=$(pwd)",
    "bash -c 'echo inner'",
    "echo $(echo nested)",
    "echo `pwd`",
    "true > /dev/null",
    "echo quiet 2>/dev/null",
    "  echo   spaced  ",
];

const ALLOWS: &[&str] = &[
    "echo *", "pwd", "true", "ls *", "printf *", "cat *", "test *",
];

/// A compound command from the seed: simple commands combined up to `depth` levels.
fn command(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 || rng.percent(35) {
        return rng.pick(SIMPLE).to_string();
    }
    let a = command(rng, depth - 1);
    let b = command(rng, depth - 1);
    match rng.below(10) {
        0 => format!("{a} && {b}"),
        1 => format!("{a} || {b}"),
        2 => format!("{a}; {b}"),
        3 => format!("{a} | {b}"),
        4 => format!("{a}\n{b}"),
        5 => format!("({a})"),
        6 => format!("{{ {a}; }}"),
        7 => format!("if {a}; then {b}; fi"),
        8 => format!("for i in 1 2; do {a}; done"),
        _ => format!("echo $({a})"),
    }
}

fn config_json(bash: &[(String, &str)], external_deny: bool) -> String {
    let mut b = serde_json::Map::new();
    for (k, v) in bash {
        b.insert(k.clone(), json!(v));
    }
    let mut perm = serde_json::Map::new();
    perm.insert("bash".into(), Value::Object(b));
    if external_deny {
        perm.insert("external_directory".into(), json!({"*": "deny"}));
    }
    json!({ "permission": perm }).to_string()
}

struct Verdicts {
    oracle: Result<bool, String>,
    permaudit: Value,
}

/// Write the config, run both: OpenCode's `denied?` and permaudit's JSON.
fn both(bin: &Path, root: &Path, fakebin: &Path, config: &str, command: &str) -> Verdicts {
    let proj = root.join("proj");
    std::fs::write(proj.join("opencode.json"), config).unwrap();
    let env = harness::isolated_env(root, fakebin);
    let params = json!({"command": command, "description": "conformance"}).to_string();
    let run = oracle::debug_tool(bin, &proj, &env, "bash", &params);
    let oracle = match oracle::tool_fate(&run, "bash") {
        Ok(ToolFate::Denied) => Ok(true),
        Ok(ToolFate::NotDenied) if run.stdout.contains("\"result\"") => Ok(false),
        _ => Err(format!(
            "unrecognised OpenCode output (exit {:?}):\n{}",
            run.code,
            oracle::strip_ansi(&format!("{}{}", run.stdout, run.stderr))
        )),
    };
    let permaudit = harness::explain_json(&proj, &env, "bash", command)
        .unwrap_or_else(|e| json!({ "error": e }));
    Verdicts { oracle, permaudit }
}

fn run_case(bin: &Path, scratch: &Scratch, seed: u64, index: u64) -> Result<String, String> {
    let mut rng = Rng::for_case(seed, 0x5_4E11, index);
    let cmd = command(&mut rng, 3);
    let root = scratch.case_root(&format!("sh{index}"));
    harness::git_project(&root, &["home", "managed"]);

    // 1. outcome under a random allow list.
    let mut bash = vec![("*".to_string(), "deny")];
    for a in ALLOWS {
        if rng.percent(50) {
            bash.push((a.to_string(), "allow"));
        }
    }
    let mut log = format!("command {:?}\n", cmd);
    let mut configs = vec![("outcome", config_json(&bash, true))];
    // The parts permaudit finds (they do not depend on the config).
    let first = both(bin, &root, &scratch.fakebin, &configs[0].1, &cmd);
    let parts: Vec<String> = first.permaudit["parts"]
        .as_array()
        .ok_or_else(|| format!("{log}permaudit gave no parts: {}", first.permaudit))?
        .iter()
        .filter(|p| p["asked"] == true)
        .filter_map(|p| p["text"].as_str().map(str::to_string))
        .collect();
    let mut distinct: Vec<String> = Vec::new();
    for p in parts {
        if !distinct.contains(&p) {
            distinct.push(p);
        }
    }
    // 2. every OpenCode part is one of ours (a never-matching allow keeps bash visible).
    let literal = |keep: &[String]| {
        let mut b = vec![
            ("*".to_string(), "deny"),
            ("zz-never-run".to_string(), "allow"),
        ];
        b.extend(keep.iter().map(|p| (p.clone(), "allow")));
        config_json(&b, false)
    };
    configs.push(("all parts allowed", literal(&distinct)));
    // 3. one of ours dropped.
    if !distinct.is_empty() {
        let k = rng.below(distinct.len());
        let mut fewer = distinct.clone();
        let dropped = fewer.remove(k);
        log.push_str(&format!("dropped part {dropped:?}\n"));
        configs.push(("one part dropped", literal(&fewer)));
    }
    for (k, (what, config)) in configs.iter().enumerate() {
        let v = if k == 0 {
            Verdicts {
                oracle: first.oracle.clone(),
                permaudit: first.permaudit.clone(),
            }
        } else {
            both(bin, &root, &scratch.fakebin, config, &cmd)
        };
        let oracle_denied = v.oracle.map_err(|e| format!("{log}{what}: {e}"))?;
        let ours = v.permaudit["action"].as_str().unwrap_or("?").to_string();
        log.push_str(&format!(
            "{what}: config {config}\n  OpenCode {} · permaudit {ours} (parts {})\n",
            if oracle_denied { "denied" } else { "ran it" },
            v.permaudit["parts"]
        ));
        if oracle_denied != (ours == "deny") {
            return Err(format!("{log}MISMATCH in {what}"));
        }
    }
    Ok(log)
}

#[test]
fn bash_splitting_matches_opencode() {
    let bin = match oracle::locate() {
        Located::Found(bin) => bin,
        Located::Skip => return,
    };
    let seed = harness::seed();
    let scratch = Scratch::new();
    let indices = harness::indices("PERMAUDIT_SHELL_CASES", 25);
    let results = harness::parallel(indices.clone(), |i| (i, run_case(&bin, &scratch, seed, i)));
    let mut failed = Vec::new();
    for (i, r) in &results {
        match r {
            Ok(log) if harness::verbose() => say(&format!("case {i}: ok\n{log}")),
            Ok(_) => {}
            Err(e) => failed.push(format!("case {i} (seed {seed}):\n{e}")),
        }
    }
    say(&format!(
        "shell conformance: {} of {} cases agree with OpenCode (seed {seed})",
        results.len() - failed.len(),
        results.len()
    ));
    assert!(
        failed.is_empty(),
        "{}\nre-run one case with PERMAUDIT_CONFORMANCE_SEED={seed} PERMAUDIT_CONFORMANCE_ONLY=N",
        failed.join("\n")
    );
}
