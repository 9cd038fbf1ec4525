//! Live conformance: the real OpenCode 1.18.34 makes tool calls in a non-interactive
//! `opencode run`, driven by a scripted model, and what happened to each call is compared
//! with `permaudit explain --format json` for the same agent, permission and input.
//!
//! The model is `tests/live/mock_model.py` (Python 3 stdlib): an OpenAI chat-completions
//! server on a free local port that replies with a scripted sequence of tool calls, one per
//! round, and logs every request. OpenCode reaches it through the project's `opencode.json`
//! (`provider.mock`, `npm: "@ai-sdk/openai-compatible"`, bundled in the binary, so nothing is
//! installed). Each call's fate is read from the evidence, never assumed:
//!
//! * **hidden**: the tool was not in the list of tools the model was offered;
//! * **denied**: the next request carries the tool result "…a rule which prevents you from
//!   using this specific tool call…" (a deny rule; the session goes on);
//! * **auto-rejected**: an ask. `opencode run` prints "! permission requested: P (…);
//!   auto-rejecting", the call fails with "The user rejected permission…" and the session
//!   stops (a subagent's session stops; its caller goes on, told "Subagent failed…");
//! * **ran**: anything else (and each bash call's marker file exists exactly then).
//!
//! Three identical calls in one reply raise OpenCode's `doom_loop` ask (pattern: the tool's
//! name) on the third; refused, it is a session error ("permission requested: doom_loop
//! (bash)", or the deny message naming `doom_loop`; exit code 1 in the root session, or
//! "Subagent failed…" for the caller of a child), compared with `explain doom_loop bash`.
//!
//! permaudit's side: `action` allow → ran, deny → denied (`decided_by: "hidden"` → hidden),
//! ask → auto-rejected, or ran under `--auto` (which answers every ask "once"). For a
//! subagent's call the agent is the subagent (`explain --agent SUBAGENT`); the `task` call
//! itself is decided for the caller with the subagent's name as input. The tools offered in
//! each conversation are compared too (hidden or not), except a child's `task` and
//! `todowrite`: OpenCode denies those through the child *session's* rules unless the
//! subagent's ruleset mentions them, which `explain --agent` does not model.
//!
//! A case whose call permaudit predicts to be asked is scheduled last in its conversation,
//! since an auto-rejected ask ends the conversation. Seeded cases draw random bash rules
//! (PERMAUDIT_CONFORMANCE_SEED); a failing case's config, script, log and stderr are
//! printed. Setup as `tests/conformance.rs` (OPENCODE_BIN or `scripts/install-oracle.sh`),
//! plus `python3`; under CI (`tests/support/tier.rs`) neither may be missing.

mod support;

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use support::harness::{self, Scratch, say};
use support::oracle::{self, Located};
use support::rng::Rng;
use support::tier;

/// The tools `opencode run` registers for a model in 1.18.34 (no `question`: it needs
/// OPENCODE_ENABLE_QUESTION_TOOL, and `opencode run` denies it to its session anyway).
const TOOLS: &[&str] = &[
    "bash",
    "edit",
    "glob",
    "grep",
    "read",
    "skill",
    "task",
    "todowrite",
    "webfetch",
    "write",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Ran,
    Denied,
    Hidden,
    AutoRejected,
}

/// One scripted tool call.
#[derive(Clone, Debug)]
struct Call {
    tool: String,
    /// What OpenCode checks: the permission and the input `explain` takes.
    permission: String,
    input: String,
    args: Value,
    /// A bash call's marker file in the project: it exists iff the command ran.
    marker: Option<String>,
    /// A task call: the index of the child conversation it starts.
    child: Option<usize>,
    /// How many identical calls the model makes in one reply: 3 raise OpenCode's
    /// `doom_loop` ask (pattern: the tool's name) on the third.
    times: usize,
}

impl Call {
    /// Ends its conversation when it does not run: an auto-rejected ask, or any refused
    /// `doom_loop` (a session error, not a tool result).
    fn ends_conversation(&self, fate: Fate) -> bool {
        fate == Fate::AutoRejected || (self.times > 1 && fate != Fate::Ran)
    }
}

/// Three identical bash calls in one reply: decided by `doom_loop` with pattern `bash`
/// (once the bash calls themselves are allowed, which the cases make sure of).
fn doom_loop(command: &str) -> Call {
    Call {
        permission: "doom_loop".into(),
        input: "bash".into(),
        marker: None, // which of the three ran before the third was refused is a race
        times: 3,
        ..bash(command, None)
    }
}

fn bash(command: &str, marker: Option<&str>) -> Call {
    Call {
        tool: "bash".into(),
        permission: "bash".into(),
        input: command.into(),
        args: json!({"command": command, "description": "live conformance"}),
        marker: marker.map(str::to_string),
        child: None,
        times: 1,
    }
}

fn read(path: &str) -> Call {
    Call {
        tool: "read".into(),
        permission: "read".into(),
        input: path.into(),
        args: json!({"filePath": path}),
        marker: None,
        child: None,
        times: 1,
    }
}

/// The write tool creating `path` in the project; the file is its marker (it exists iff the
/// call ran). Put to `explain write`, which answers the call as OpenCode makes it (`edit`).
fn write(path: &str) -> Call {
    Call {
        tool: "write".into(),
        permission: "write".into(),
        input: path.into(),
        args: json!({"filePath": path, "content": "live conformance\n"}),
        marker: Some(path.into()),
        child: None,
        times: 1,
    }
}

/// A conversation: the root session (index 0) or a subagent's session.
#[derive(Clone, Debug)]
struct Conv {
    /// The agent whose ruleset permaudit decides with.
    agent: String,
    calls: Vec<Call>,
}

/// `opencode run --auto`, and its hidden aliases in 1.18.34.
const AUTO_FLAGS: &[&str] = &["--auto", "--yolo", "--dangerously-skip-permissions"];

struct LiveCase {
    name: String,
    /// The config without `provider`/`model` (added with the mock's port).
    config: Value,
    flags: Vec<&'static str>,
    convs: Vec<Conv>,
}

impl LiveCase {
    fn auto(&self) -> bool {
        self.flags.iter().any(|f| AUTO_FLAGS.contains(f))
    }
}

/// The conversation's token: the mock tells conversations apart by their first user
/// message (the run's message, or the task's prompt). No token contains another.
fn token(i: usize) -> String {
    format!("LIVE-CONV-{i}-GO")
}

/// Conversation 0 calls `task` on `subagent`; the child conversation is added.
fn task(case: &mut LiveCase, subagent: &str, calls: Vec<Call>) -> Call {
    let child = case.convs.len();
    case.convs.push(Conv {
        agent: subagent.into(),
        calls,
    });
    Call {
        tool: "task".into(),
        permission: "task".into(),
        input: subagent.into(),
        args: json!({"description": "live conformance", "prompt": format!("{} now", token(child)), "subagent_type": subagent}),
        marker: None,
        child: Some(child),
        times: 1,
    }
}

// ---------------------------------------------------------------------------------------------
// The cases

fn subagent(permission: Value) -> Value {
    json!({"mode": "subagent", "description": "a live conformance subagent", "permission": permission})
}

fn hand_picked() -> Vec<LiveCase> {
    let mixed = json!({"permission": {
        "bash": {"*": "ask", "touch *": "allow", "echo *": "deny", "ls *": "allow", "touch secret*": "deny"},
        "webfetch": "deny",
        "edit": {"*": "deny"},
    }});
    let mixed_calls = || {
        vec![
            bash("touch m-a", Some("m-a")),
            bash("echo hi > m-b", Some("m-b")),
            bash("touch secret-m-c", Some("secret-m-c")),
            bash("ls > m-d", Some("m-d")),
            bash("date > m-e", Some("m-e")),
        ]
    };
    let mut cases = vec![
        LiveCase {
            name: "headless: allow, deny, ask".into(),
            config: mixed.clone(),
            flags: vec![],
            convs: vec![Conv {
                agent: "build".into(),
                calls: mixed_calls(),
            }],
        },
        LiveCase {
            name: "--auto: the same config, and a doom loop".into(),
            config: mixed,
            flags: vec!["--auto"],
            convs: vec![Conv {
                agent: "build".into(),
                calls: [mixed_calls(), vec![doom_loop("touch m-loop")]].concat(),
            }],
        },
        LiveCase {
            name: "headless: a doom loop (three identical calls in one reply)".into(),
            config: json!({"permission": {"bash": "allow", "doom_loop": "ask"}}),
            flags: vec![],
            convs: vec![Conv {
                agent: "build".into(),
                calls: vec![bash("touch m-a", Some("m-a")), doom_loop("touch m-loop")],
            }],
        },
        LiveCase {
            name: "--agent: a custom primary agent, bash hidden, a default ask".into(),
            config: json!({"agent": {"boss": {"mode": "primary", "permission": {"bash": "deny", "read": {"*": "allow", "*.txt": "deny"}}}}}),
            flags: vec!["--agent", "boss"],
            convs: vec![Conv {
                agent: "boss".into(),
                calls: vec![
                    bash("touch m-a", Some("m-a")),
                    read("notes.txt"),
                    read("README.md"),
                    read("/etc/hostname"),
                ],
            }],
        },
        LiveCase {
            name: "headless: a `write` rule decides nothing, the write tool asks `edit`".into(),
            config: json!({"permission": {"write": "deny", "edit": {"*": "allow", "w-ask*": "ask"}}}),
            flags: vec![],
            convs: vec![Conv {
                agent: "build".into(),
                calls: vec![write("w-a.txt"), write("w-ask.txt")],
            }],
        },
    ];

    // Delegation: the caller's agent denies bash, its `task` rules pick subagents by name;
    // each subagent decides its own calls.
    let mut deleg = LiveCase {
        name: "delegation from build".into(),
        config: json!({"agent": {
            "build": {"permission": {"bash": "deny", "task": {"*": "allow", "blocked": "deny", "asker": "ask"}}},
            "helper": subagent(json!({"bash": {"*": "ask", "touch *": "allow", "echo *": "deny"}})),
            "worker": subagent(json!({"bash": {"*": "deny"}, "webfetch": "deny"})),
            "blocked": subagent(json!({"bash": "allow"})),
            "asker": subagent(json!({"bash": "allow"})),
            "looper": subagent(json!({"bash": "allow", "doom_loop": "deny"})),
            "looper2": subagent(json!({"bash": "allow"})),
        }}),
        flags: vec![],
        convs: vec![Conv {
            agent: "build".into(),
            calls: vec![],
        }],
    };
    let calls = vec![
        bash("touch m-root", Some("m-root")),
        task(
            &mut deleg,
            "blocked",
            vec![bash("touch m-blocked", Some("m-blocked"))],
        ),
        task(
            &mut deleg,
            "helper",
            vec![
                bash("touch m-helper", Some("m-helper")),
                bash("echo hi > m-helper-echo", Some("m-helper-echo")),
                bash("date > m-helper-date", Some("m-helper-date")),
            ],
        ),
        task(
            &mut deleg,
            "worker",
            vec![bash("touch m-worker", Some("m-worker"))],
        ),
        task(&mut deleg, "looper", vec![doom_loop("touch m-looper")]),
        task(&mut deleg, "looper2", vec![doom_loop("touch m-looper2")]),
        task(
            &mut deleg,
            "asker",
            vec![bash("touch m-asker", Some("m-asker"))],
        ),
    ];
    deleg.convs[0].calls = calls;
    cases.push(deleg);

    // Delegation from a custom primary agent under --auto: the subagent's ask is answered.
    let mut deleg_auto = LiveCase {
        name: "delegation from --agent boss under --auto".into(),
        config: json!({
            "permission": {"bash": {"*": "deny", "touch *": "ask"}},
            "agent": {
                "boss": {"mode": "primary", "permission": {"task": {"*": "deny", "helper": "ask"}}},
                "helper": subagent(json!({"bash": {"touch m-deny*": "deny"}})),
            },
        }),
        flags: vec!["--auto", "--agent", "boss"],
        convs: vec![Conv {
            agent: "boss".into(),
            calls: vec![],
        }],
    };
    let calls = vec![
        bash("touch m-boss", Some("m-boss")),
        task(
            &mut deleg_auto,
            "helper",
            vec![
                bash("touch m-helper", Some("m-helper")),
                bash("touch m-deny", Some("m-deny")),
                bash("ls > m-ls", Some("m-ls")),
            ],
        ),
    ];
    deleg_auto.convs[0].calls = calls;
    cases.push(deleg_auto);
    cases
}

/// Random bash rules over a small vocabulary, and commands they may or may not match.
fn seeded(seed: u64, index: u64) -> LiveCase {
    let mut r = Rng::for_case(seed, 0x11fe, index);
    const PATTERNS: &[&str] = &[
        "*",
        "touch *",
        "touch m*",
        "echo *",
        "ls*",
        "ls *",
        "date",
        "date *",
        "* > *",
        "touch m-?",
        "echo hi*",
        "git *",
    ];
    const ACTIONS: &[&str] = &["allow", "deny", "ask"];
    let mut rules = serde_json::Map::new();
    for _ in 0..r.range(2, 5) {
        let p = r.pick(PATTERNS);
        let a = r.pick(ACTIONS);
        rules.insert(p.into(), json!(a));
    }
    let commands = [
        "touch m-{i}",
        "echo hi > m-{i}",
        "ls > m-{i}",
        "date > m-{i}",
        "touch m-{i}x",
    ];
    let mut calls = Vec::new();
    for i in 0..4 {
        let c = r.pick(&commands);
        let marker = c
            .split(' ')
            .next_back()
            .unwrap_or("")
            .replace("{i}", &i.to_string());
        calls.push(bash(&c.replace("{i}", &i.to_string()), Some(&marker)));
    }
    let auto = r.percent(30);
    let go_on = !auto && r.percent(50);
    LiveCase {
        name: format!("seeded {seed:#x}/{index}"),
        // `continue_loop_on_deny`: an auto-rejected ask no longer ends the session, the model
        // is told "The user rejected permission…" and the later calls are made too.
        config: if go_on {
            json!({"permission": {"bash": Value::Object(rules)}, "experimental": {"continue_loop_on_deny": true}})
        } else {
            json!({"permission": {"bash": Value::Object(rules)}})
        },
        flags: if auto {
            vec![r.pick(AUTO_FLAGS)]
        } else {
            vec![]
        },
        convs: vec![Conv {
            agent: "build".into(),
            calls,
        }],
    }
}

// ---------------------------------------------------------------------------------------------
// The mock model

/// The mock server, killed when dropped.
struct Mock {
    child: Child,
    port: u16,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mock_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/live/mock_model.py")
}

fn python_available() -> bool {
    Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn start_mock(script: &Path, log: &Path) -> Result<Mock, String> {
    let mut child = Command::new("python3")
        .arg(mock_script())
        .arg(script)
        .arg(log)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start python3 {}: {e}", mock_script().display()))?;
    let mut line = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut line));
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok());
    match (read, port) {
        (Some(Ok(_)), Some(port)) => Ok(Mock { child, port }),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("the mock model did not report its port: {line:?}"))
        }
    }
}

/// The mock's script: each conversation's calls in order, then a final text.
fn script(convs: &[Conv]) -> Value {
    let convs: Vec<Value> = convs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut steps: Vec<Value> = c
                .calls
                .iter()
                .map(|call| {
                    let one = json!({"tool": call.tool, "args": call.args});
                    if call.times == 1 {
                        one
                    } else {
                        json!({"calls": vec![one; call.times]})
                    }
                })
                .collect();
            steps.push(json!({"text": format!("{} finished", token(i))}));
            json!({"match": token(i), "steps": steps})
        })
        .collect();
    json!({ "conversations": convs })
}

fn with_mock_provider(config: &Value, port: u16) -> Value {
    let mut c = config.clone();
    let o = c.as_object_mut().expect("case configs are objects");
    o.insert(
        "provider".into(),
        json!({"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "mock"},
            "models": {"m1": {"name": "m1", "tool_call": true}},
        }}),
    );
    o.insert("model".into(), json!("mock/m1"));
    o.insert("small_model".into(), json!("mock/m1"));
    c
}

// ---------------------------------------------------------------------------------------------
// permaudit's prediction

struct Prediction {
    fate: Fate,
    json: Value,
}

fn explain(
    proj: &Path,
    env: &[(String, String)],
    agent: &str,
    permission: &str,
    input: &str,
) -> Result<Value, String> {
    let out = Command::new(harness::permaudit_bin())
        .args([
            "explain", "--agent", agent, "--format", "json", permission, input,
        ])
        .current_dir(proj)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "permaudit explain --agent {agent} {permission} {input:?}: {e}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn predict(
    proj: &Path,
    env: &[(String, String)],
    agent: &str,
    call: &Call,
    auto: bool,
) -> Result<Prediction, String> {
    let v = explain(proj, env, agent, &call.permission, &call.input)?;
    let fate = match (v["action"].as_str(), v["decided_by"].as_str()) {
        (Some("deny"), Some("hidden")) => Fate::Hidden,
        (Some("deny"), _) => Fate::Denied,
        (Some("allow"), _) => Fate::Ran,
        (Some("ask"), _) if auto => Fate::Ran,
        (Some("ask"), _) => Fate::AutoRejected,
        _ => return Err(format!("unexpected explain output: {v}")),
    };
    Ok(Prediction { fate, json: v })
}

// ---------------------------------------------------------------------------------------------
// OpenCode's evidence

struct Request {
    step: usize,
    tools: BTreeSet<String>,
    body: Value,
}

fn parse_log(log: &Path) -> Result<BTreeMap<usize, Vec<Request>>, String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut by_conv: BTreeMap<usize, Vec<Request>> = BTreeMap::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("mock log: {e}"))?;
        let Some(conv) = v["conversation"].as_u64() else {
            continue; // title generation and the like
        };
        let tools = v["body"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect();
        by_conv.entry(conv as usize).or_default().push(Request {
            step: v["step"].as_u64().unwrap_or(0) as usize,
            tools,
            body: v["body"].clone(),
        });
    }
    Ok(by_conv)
}

/// The tool result the model was given for call `step` of conversation `conv`.
fn tool_result(reqs: &[Request], conv: usize, step: usize) -> Option<String> {
    let id = format!("call_{conv}_{step}");
    reqs.iter().find_map(|r| {
        r.body["messages"].as_array()?.iter().find_map(|m| {
            (m["role"] == "tool" && m["tool_call_id"] == id.as_str()).then(|| match &m["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
    })
}

/// What happened to each call of each conversation (`None`: never reached).
struct Observed {
    fates: Vec<Vec<Option<Fate>>>,
    offered: Vec<Option<BTreeSet<String>>>,
}

fn observe(case: &LiveCase, proj: &Path, log: &Path, stderr: &str) -> Result<Observed, String> {
    let by_conv = parse_log(log)?;
    let none = Vec::new();
    let reqs = |c: usize| by_conv.get(&c).unwrap_or(&none);
    let rejections = stderr
        .lines()
        .filter(|l| l.contains("permission requested: ") && l.contains("auto-rejecting"))
        .count();
    let mut fates = Vec::new();
    let mut offered = Vec::new();
    let mut auto_rejected = 0;
    for (c, conv) in case.convs.iter().enumerate() {
        offered.push(reqs(c).first().map(|r| r.tools.clone()));
        let mut row = Vec::new();
        for (s, call) in conv.calls.iter().enumerate() {
            let Some(req) = reqs(c).iter().find(|r| r.step == s) else {
                row.push(None);
                continue;
            };
            let result = tool_result(reqs(c), c, s);
            // How the conversation ended if it did here: the run's output for the root, the
            // caller's "Subagent failed (…): MESSAGE" for a child.
            let ending = if c == 0 {
                Some(stderr.to_string())
            } else {
                case.convs.iter().enumerate().find_map(|(pc, p)| {
                    let ps = p.calls.iter().position(|pcall| pcall.child == Some(c))?;
                    tool_result(reqs(pc), pc, ps)
                })
            };
            let fate = if !req.tools.contains(&call.tool) {
                Fate::Hidden
            } else if call.times > 1 {
                let ending = ending.unwrap_or_default();
                if reqs(c).iter().any(|r| r.step == s + 1) {
                    Fate::Ran
                } else if ending.contains(&format!(
                    "permission requested: doom_loop ({}); auto-rejecting",
                    call.tool
                )) || (c > 0 && ending.contains("rejected permission"))
                {
                    Fate::AutoRejected
                } else if ending.lines().any(|l| {
                    l.contains(oracle::DENIED) && l.contains(r#""permission":"doom_loop""#)
                }) {
                    Fate::Denied
                } else {
                    return Err(format!(
                        "the repeated call {s} of conversation {c} neither went on nor was refused"
                    ));
                }
            } else if let Some(child) = call.child {
                match &result {
                    _ if !reqs(child).is_empty() => Fate::Ran,
                    Some(r) if r.contains(oracle::DENIED) => Fate::Denied,
                    Some(r) => return Err(format!("task call {s} of conversation {c}: {r}")),
                    None => Fate::AutoRejected,
                }
            } else {
                match &result {
                    Some(r) if r.contains(oracle::DENIED) => Fate::Denied,
                    Some(r) if r.contains("rejected permission") => Fate::AutoRejected,
                    Some(_) => Fate::Ran,
                    // The conversation ended here: the root's session stopped, or a child's
                    // caller was told "Subagent failed … rejected permission".
                    None => {
                        let caller_told = ending.is_some_and(|r| r.contains("rejected permission"));
                        if c == 0 || caller_told {
                            Fate::AutoRejected
                        } else {
                            return Err(format!(
                                "call {s} of conversation {c} has no result and no rejection"
                            ));
                        }
                    }
                }
            };
            if fate == Fate::AutoRejected {
                auto_rejected += 1;
            }
            if let Some(m) = &call.marker {
                let exists = proj.join(m).exists();
                if exists != (fate == Fate::Ran) {
                    return Err(format!(
                        "call {s} of conversation {c} ({}) looks {fate:?} but its marker {m} {}",
                        call.input,
                        if exists { "exists" } else { "is missing" }
                    ));
                }
            }
            row.push(Some(fate));
        }
        fates.push(row);
    }
    if auto_rejected != rejections {
        return Err(format!(
            "{auto_rejected} calls look auto-rejected, stderr has {rejections} \"auto-rejecting\" lines"
        ));
    }
    Ok(Observed { fates, offered })
}

// ---------------------------------------------------------------------------------------------
// One case

/// Seconds before `timeout` kills one `opencode run` (alone it takes 10–20 s; several at
/// once on a loaded 2-core machine take much longer, and a timeout is a failure, not data).
const RUN_TIMEOUT_SECS: u32 = 300;

/// At most this many `opencode run` at once: each keeps a core busy.
const RUNS_AT_ONCE: usize = 2;

/// A failing case's mock log (every request: tools offered, messages, tool results), kept
/// under target/conformance-failures/ since the scratch directory goes away.
fn keep_log(id: &str, log: &Path) -> String {
    let dir = harness::failures_dir().join(format!("live-{id}"));
    let kept = dir.join("mock-log.jsonl");
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::copy(log, &kept)) {
        Ok(_) => kept.display().to_string(),
        Err(e) => format!("{} (not kept: {e})", log.display()),
    }
}

struct Tally {
    compared: usize,
    failures: Vec<String>,
}

fn run_case(bin: &Path, scratch: &Scratch, id: &str, mut case: LiveCase) -> Tally {
    let root = scratch.case_root(id);
    let proj = root.join("proj");
    for d in ["proj", "home", "managed"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(proj.join("README.md"), "live conformance\n").unwrap();
    std::fs::write(proj.join("notes.txt"), "notes\n").unwrap();
    let git = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(&proj)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root.join("home"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(git, "git init");
    let env = harness::isolated_env(&root, &scratch.fakebin);
    let fail = |msg: String| Tally {
        compared: 0,
        failures: vec![format!("{id}: {msg}")],
    };

    // permaudit decides first, before OpenCode touches the tree (it adds `$schema` to the
    // config), on the same rules (the mock's port is not known yet); a call predicted to be
    // asked is scheduled last in its conversation.
    std::fs::write(
        proj.join("opencode.json"),
        serde_json::to_string_pretty(&with_mock_provider(&case.config, 1)).unwrap(),
    )
    .unwrap();
    let auto = case.auto();
    let mut predictions: Vec<Vec<Prediction>> = Vec::new();
    for conv in &mut case.convs {
        let mut preds = Vec::new();
        for call in &conv.calls {
            match predict(&proj, &env, &conv.agent, call, auto) {
                Ok(p) => preds.push(p),
                Err(e) => return fail(e),
            }
        }
        let mut paired: Vec<(Call, Prediction)> = conv.calls.drain(..).zip(preds).collect();
        paired.sort_by_key(|(call, p)| call.ends_conversation(p.fate));
        let (calls, preds): (Vec<_>, Vec<_>) = paired.into_iter().unzip();
        conv.calls = calls;
        predictions.push(preds);
    }
    // Which tools permaudit hides from each conversation's agent (`explain` of any input).
    let mut hidden_tools: Vec<Vec<(&str, Value)>> = Vec::new();
    for (c, conv) in case.convs.iter().enumerate() {
        let mut row = Vec::new();
        for tool in TOOLS {
            if c > 0 && matches!(*tool, "task" | "todowrite") {
                continue; // decided by the child session's rules (module doc)
            }
            match explain(&proj, &env, &conv.agent, tool, "live-probe") {
                Ok(v) => row.push((*tool, v)),
                Err(e) => return fail(e),
            }
        }
        hidden_tools.push(row);
    }

    let script_path = root.join("script.json");
    let log = root.join("mock-log.jsonl");
    std::fs::write(
        &script_path,
        serde_json::to_string_pretty(&script(&case.convs)).unwrap(),
    )
    .unwrap();
    let mock = match start_mock(&script_path, &log) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let config = with_mock_provider(&case.config, mock.port);
    std::fs::write(
        proj.join("opencode.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    let message = format!("{} now", token(0));
    let mut args = vec!["run", "--pure"];
    args.extend(case.flags.iter().copied());
    args.push(&message);
    let run = oracle::run_timed(RUN_TIMEOUT_SECS, bin, &proj, &env, &args);
    drop(mock);
    let stderr = oracle::strip_ansi(&format!("{}{}", run.stdout, run.stderr));
    let context = || {
        format!(
            "config: {}\nopencode {}\nscript: {}\noutput:\n{}\nmock log: {}",
            serde_json::to_string(&case.config).unwrap(),
            args.join(" "),
            serde_json::to_string(&script(&case.convs)).unwrap(),
            stderr.trim_end(),
            keep_log(id, &log)
        )
    };
    // A refused `doom_loop` in the root session is a session error: exit code 1.
    if !matches!(run.code, Some(0) | Some(1)) {
        return fail(format!("opencode run exited {:?}\n{}", run.code, context()));
    }
    let observed = match observe(&case, &proj, &log, &stderr) {
        Ok(o) => o,
        Err(e) => return fail(format!("{e}\n{}", context())),
    };
    let root_loop_refused = case.convs[0]
        .calls
        .iter()
        .zip(&observed.fates[0])
        .any(|(call, f)| call.times > 1 && f.is_some_and(|f| f != Fate::Ran));
    if run.code == Some(1) && !root_loop_refused {
        return fail(format!("opencode run exited 1\n{}", context()));
    }

    let mut tally = Tally {
        compared: 0,
        failures: Vec::new(),
    };
    let mut diffs = Vec::new();
    for (c, conv) in case.convs.iter().enumerate() {
        for (s, call) in conv.calls.iter().enumerate() {
            let want = &predictions[c][s];
            // None: unreached after an earlier ask, or a child that never started.
            if let Some(got) = observed.fates[c][s] {
                tally.compared += 1;
                if got != want.fate {
                    diffs.push(format!(
                        "conversation {c} (agent {}), {} {:?}: OpenCode {got:?}, permaudit {:?}\n  permaudit explain --agent {} {} {:?}: {}",
                        conv.agent, call.tool, call.input, want.fate, conv.agent, call.permission, call.input, want.json
                    ));
                }
            }
        }
        // The tools offered: hidden or not, as permaudit's `decided_by: "hidden"` says.
        if let Some(offered) = &observed.offered[c] {
            for (tool, v) in &hidden_tools[c] {
                let hidden = v["decided_by"] == "hidden";
                tally.compared += 1;
                if hidden == offered.contains(*tool) {
                    diffs.push(format!(
                        "conversation {c} (agent {}): tool {tool} {} by OpenCode, permaudit says hidden={hidden}: {v}",
                        conv.agent,
                        if offered.contains(*tool) { "offered" } else { "not offered" }
                    ));
                }
            }
        }
    }
    if !diffs.is_empty() {
        tally.failures.push(format!(
            "{}: {}\n{}\n{}",
            id,
            case.name,
            diffs.join("\n"),
            context()
        ));
    }
    if harness::verbose() {
        say(&format!(
            "{id}: {} {} {} — {:?}",
            case.name,
            case.flags.join(" "),
            case.config,
            observed.fates,
        ));
    }
    tally
}

#[test]
fn tool_calls_in_opencode_run_match_explain() {
    let bin = match oracle::locate() {
        Located::Found(bin) => bin,
        Located::Skip => return,
    };
    if !python_available() {
        tier::skip_or_fail(
            "live_conformance",
            "python3 is missing: the scripted model (tests/live/mock_model.py) needs it",
        );
        return;
    }
    let seed = harness::seed();
    // PERMAUDIT_LIVE_HAND_PICKED=0 runs the seeded cases alone (to try seeds).
    let mut cases = if std::env::var("PERMAUDIT_LIVE_HAND_PICKED").is_ok_and(|v| v == "0") {
        Vec::new()
    } else {
        hand_picked()
    };
    let seeded_count = std::env::var("PERMAUDIT_LIVE_SEEDED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2u64);
    for i in 0..seeded_count {
        cases.push(seeded(seed, i));
    }
    let scratch = Scratch::new();
    let n = cases.len();
    let queue = std::sync::Mutex::new(cases.into_iter().enumerate().collect::<Vec<_>>());
    let tallies = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..RUNS_AT_ONCE.min(harness::jobs()) {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().pop();
                    let Some((i, case)) = next else { break };
                    let t = run_case(&bin, &scratch, &format!("live{i}"), case);
                    tallies.lock().unwrap().push(t);
                }
            });
        }
    });
    let tallies = tallies.into_inner().unwrap();
    let compared: usize = tallies.iter().map(|t| t.compared).sum();
    let failures: Vec<&String> = tallies.iter().flat_map(|t| &t.failures).collect();
    say(&format!(
        "live conformance: {n} opencode runs, {compared} comparisons, {} cases disagree",
        failures.len()
    ));
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
    assert!(compared > 0, "nothing was compared");
}
