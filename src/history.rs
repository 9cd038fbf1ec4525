//! `permaudit history`: the tool calls OpenCode 1.18.34 recorded, replayed under today's
//! rules (issue 47). The CLI reads the database (a private copy: `cli/history.rs`) into the
//! plain rows below; this module turns them into [`ToolCall`]s, says how each went then
//! ([`Then`]) and decides each with the engine `explain` uses ([`Judge`], through
//! [`crate::explain::Explainer`]): the same checks, the same deciding rule.
//!
//! What OpenCode 1.18.34 keeps, verified on the binary (`scripts/history-fixture.py` drives
//! `opencode serve` with a scripted model and answers its asks):
//!
//! - table `part`, `data` JSON with `type: "tool"`: `tool`, `callID` and `state` (`status`:
//!   `pending`, `running`, `completed`, `error`; `input`, the tool's arguments; `error`);
//!   table `message`, `data.agent`, the agent of each message; table `session`:
//!   `directory` (where OpenCode ran), `parent_id` (a subagent's session), `agent`.
//! - A call a rule denied ends `error` with "The user has specified a rule which prevents
//!   you from using this specific tool call…"; one the person rejected with "The user
//!   rejected permission to use this specific tool call…".
//! - Asks, their replies and "Always" answers are not stored (the `permission` table stays
//!   empty after an "always" reply): a call that ran may have run after a question.
//!
//! The JSON storage of older releases (`<data>/storage/`) gives the same rows
//! (`cli/historydb.rs`). No I/O here: rows in, decisions out. Tool outputs are never read (the CLI's query
//! selects inputs, status and error text only).

use crate::agents::{Agent, Decision};
use crate::explain::{Call, Explainer};
use crate::model::Effect;
use crate::project::Project;
use crate::shell::{Env, Request};
use serde_json::Value;
use std::collections::BTreeMap;

/// One row of table `session`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub parent_id: Option<String>,
    pub directory: String,
    pub agent: Option<String>,
    /// `session.permission`: the session's own rules (JSON), as `opencode run` writes them.
    pub permission: Option<String>,
}

/// One tool part of table `part`: the fields of its `data` JSON the history needs (as
/// SQLite's `json_extract` returns them; `input` is JSON text), never the output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartRow {
    pub id: String,
    pub session_id: String,
    pub message_id: String,
    pub time_created: i64,
    pub tool: Option<String>,
    pub call_id: Option<String>,
    pub status: Option<String>,
    pub input: Option<String>,
    pub error: Option<String>,
    /// `data.agent` of the part's message.
    pub message_agent: Option<String>,
}

/// How a call went when it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Then {
    /// The tool ran (`completed`); it may have asked first (asks are not stored).
    Ran,
    /// The person rejected the ask.
    Rejected,
    /// A rule denied it.
    Denied,
    /// It failed for another reason (the tool's own error).
    Error,
    /// Still `pending` or `running` (a session stopped mid-call).
    Pending,
}

impl Then {
    /// From `state.status` and `state.error`, by the texts OpenCode 1.18.34 writes.
    pub fn of(status: Option<&str>, error: Option<&str>) -> Then {
        match status {
            Some("completed") => Then::Ran,
            Some("pending" | "running") => Then::Pending,
            _ => match error {
                Some(e) if e.contains(DENIED_TEXT) => Then::Denied,
                Some(e) if e.contains(REJECTED_TEXT) => Then::Rejected,
                _ => Then::Error,
            },
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Then::Ran => "ran",
            Then::Rejected => "rejected",
            Then::Denied => "denied",
            Then::Error => "error",
            Then::Pending => "pending",
        }
    }
}

/// The start of the error a config deny leaves (`PermissionDeniedError`, 1.18.34).
pub const DENIED_TEXT: &str = "The user has specified a rule which prevents you";
/// The start of the error a rejected ask leaves (`PermissionRejectedError`, 1.18.34).
pub const REJECTED_TEXT: &str = "The user rejected permission";

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub session: String,
    /// The session that started this one (a subagent's session).
    pub parent: Option<String>,
    /// `callID`.
    pub call: String,
    /// The agent that made the call: its message's, else its session's.
    pub agent: Option<String>,
    pub tool: String,
    /// The tool's arguments (`state.input`), `null` when missing or not JSON.
    pub input: Value,
    pub then: Then,
    /// Milliseconds since the epoch (`part.time_created`).
    pub time: i64,
    /// Where OpenCode ran (`session.directory`).
    pub directory: String,
}

/// Which calls to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Sessions whose directory is this one or below it (`None`: every project).
    pub project: Option<String>,
    /// This session and the sessions it started, at any depth.
    pub session: Option<String>,
    /// Calls made at or after this time (milliseconds since the epoch).
    pub since: Option<i64>,
}

/// The tool calls of the rows that `filter` keeps, in the order they were made (time, then
/// part id: deterministic whatever order the rows came in).
pub fn calls(sessions: &[SessionRow], parts: &[PartRow], filter: &Filter) -> Vec<ToolCall> {
    let by_id: BTreeMap<&str, &SessionRow> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let in_session = |id: &str| -> bool {
        let Some(want) = filter.session.as_deref() else {
            return true;
        };
        // Up the parent chain (bounded: a loop in the rows ends it).
        let mut cur = Some(id);
        for _ in 0..=sessions.len() {
            match cur {
                Some(c) if c == want => return true,
                Some(c) => cur = by_id.get(c).and_then(|s| s.parent_id.as_deref()),
                None => return false,
            }
        }
        false
    };
    let mut out: Vec<(&str, ToolCall)> = Vec::new();
    for p in parts {
        let Some(s) = by_id.get(p.session_id.as_str()) else {
            continue;
        };
        if let Some(dir) = &filter.project {
            if !within(dir, &s.directory) {
                continue;
            }
        }
        if !in_session(&s.id) || filter.since.is_some_and(|t| p.time_created < t) {
            continue;
        }
        let input = p
            .input
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null);
        out.push((
            p.id.as_str(),
            ToolCall {
                session: s.id.clone(),
                parent: s.parent_id.clone(),
                call: p.call_id.clone().unwrap_or_default(),
                agent: p
                    .message_agent
                    .clone()
                    .filter(|a| !a.is_empty())
                    .or_else(|| s.agent.clone().filter(|a| !a.is_empty())),
                tool: p.tool.clone().unwrap_or_default(),
                input,
                then: Then::of(p.status.as_deref(), p.error.as_deref()),
                time: p.time_created,
                directory: s.directory.clone(),
            },
        ));
    }
    out.sort_by(|a, b| (a.1.time, a.0, &a.1.call).cmp(&(b.1.time, b.0, &b.1.call)));
    out.into_iter().map(|(_, c)| c).collect()
}

/// Is `path` the directory `dir` or below it?
pub fn within(dir: &str, path: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir || dir.is_empty() || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// What a tool call asks, as `explain` takes it: the permission and the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub permission: String,
    pub input: String,
}

/// The permission and input OpenCode 1.18.34's tool asks for a call (`None`: a tool
/// permaudit does not model, such as an MCP tool or `apply_patch`, whose patch names its
/// files). File paths are made absolute against the session's directory, where the tools
/// resolve them.
pub fn asked(tool: &str, input: &Value, directory: &str) -> Option<Asked> {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let file = |k: &str| {
        s(k).map(|p| {
            if p.starts_with('/') || directory.is_empty() {
                p
            } else {
                format!("{}/{p}", directory.trim_end_matches('/'))
            }
        })
    };
    let (permission, input) = match tool {
        "bash" => ("bash", s("command")?),
        "read" => ("read", file("filePath")?),
        // The write tool is checked as `edit` (spec §4, `model::meaning::checked_as`).
        "edit" | "write" => ("edit", file("filePath")?),
        "glob" | "grep" => (tool, s("pattern")?),
        "webfetch" => ("webfetch", s("url")?),
        "websearch" => ("websearch", s("query")?),
        "task" => ("task", s("subagent_type")?),
        "skill" => ("skill", s("name")?),
        "todowrite" => ("todowrite", "*".to_string()),
        _ => return None,
    };
    Some(Asked {
        permission: permission.to_string(),
        input,
    })
}

/// One check OpenCode makes for a call, decided today.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub permission: String,
    pub input: String,
    pub now: Effect,
    /// The deciding rule, an index into the agent's rules (`None`: nothing matched, the
    /// default ask).
    pub rule: Option<usize>,
    /// For a bash part: the "Always" pattern its ask offers (`npm test *`).
    pub always: Option<String>,
}

/// A call decided under today's rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Now {
    /// The call as a whole (deny if any check denies, else ask if any asks, else allow)
    /// and its checks in the order OpenCode asks them.
    Decided { now: Effect, checks: Vec<Check> },
    /// Not decided, and why.
    Unknown(String),
}

impl Now {
    pub fn effect(&self) -> Option<Effect> {
        match self {
            Now::Decided { now, .. } => Some(*now),
            Now::Unknown(_) => None,
        }
    }

    /// The checks that ask today (none for an undecided call).
    pub fn asking(&self) -> impl Iterator<Item = &Check> {
        let checks: &[Check] = match self {
            Now::Decided { checks, .. } => checks,
            Now::Unknown(_) => &[],
        };
        checks.iter().filter(|c| c.now == Effect::Ask)
    }
}

/// Decides recorded calls under one project's rules, each for the agent that made it; the
/// evaluators are built once per agent and permission.
pub struct Judge<'p> {
    project: &'p Project,
    explainers: BTreeMap<(String, String), Explainer<'p>>,
}

impl<'p> Judge<'p> {
    pub fn new(project: &'p Project) -> Judge<'p> {
        Judge {
            project,
            explainers: BTreeMap::new(),
        }
    }

    pub fn project(&self) -> &'p Project {
        self.project
    }

    /// The agent a call is decided for (`None`: unknown today).
    pub fn agent(&self, call: &ToolCall) -> Option<&'p Agent> {
        self.project.agent(call.agent.as_deref()?)
    }

    /// `call` decided today, `env` answering the shell's machine questions for the
    /// session's directory.
    pub fn decide(&mut self, call: &ToolCall, env: &Env<'_>) -> Now {
        let Some(name) = call.agent.as_deref() else {
            return Now::Unknown("the call's agent is not recorded".into());
        };
        let Some(agent) = self.project.agent(name) else {
            return Now::Unknown(format!("no agent named `{name}` today"));
        };
        if has_workdir(call) {
            return Now::Unknown(
                "a bash call with `workdir`: its split in another directory is not modelled".into(),
            );
        }
        let Some(asked) = asked(&call.tool, &call.input, &call.directory) else {
            return Now::Unknown(format!(
                "the `{}` tool's checks are not modelled",
                call.tool
            ));
        };
        let project = self.project;
        let explainer = self
            .explainers
            .entry((name.to_string(), asked.permission.clone()))
            .or_insert_with(|| Explainer::new(project, agent, &asked.permission));
        let decided = explainer.decide(&asked.input, env);
        let now = decided.effect(agent);
        let checks = checks(&asked, &decided, agent);
        Now::Decided { now, checks }
    }
}

/// Does a bash call name a working directory other than its session's? (The tool resolves
/// its paths there, and asks `external_directory` for it when outside the project.)
pub fn has_workdir(call: &ToolCall) -> bool {
    call.tool == "bash"
        && call
            .input
            .get("workdir")
            .and_then(Value::as_str)
            .is_some_and(|w| {
                !w.is_empty() && w.trim_end_matches('/') != call.directory.trim_end_matches('/')
            })
}

/// The checks of one decided call, in the order OpenCode asks them.
fn checks(asked: &Asked, call: &Call<'_>, agent: &Agent) -> Vec<Check> {
    let one = |permission: &str, input: &str, d: &Decision, always: Option<String>| Check {
        permission: permission.to_string(),
        input: input.to_string(),
        now: d.effect,
        rule: d.rule,
        always,
    };
    match call {
        Call::Rule { rule, .. } => vec![Check {
            permission: asked.permission.clone(),
            input: asked.input.clone(),
            now: call.effect(agent),
            rule: *rule,
            always: None,
        }],
        Call::Bash { request, decided } => {
            if let Some(h) = &decided.hidden {
                return vec![one(&asked.permission, &asked.input, h, None)];
            }
            let mut out: Vec<Check> = request
                .external_patterns
                .iter()
                .zip(&decided.external)
                .map(|(p, d)| one("external_directory", p, d, None))
                .collect();
            out.extend(
                request
                    .patterns
                    .iter()
                    .zip(&decided.bash)
                    .map(|(p, d)| one("bash", p, d, always_of(request, p))),
            );
            out
        }
        Call::Tool { request, decided } => {
            if let Some(h) = &decided.hidden {
                return vec![one(&asked.permission, &asked.input, h, None)];
            }
            let mut out = Vec::new();
            if let Some(req) = request {
                if let (Some(p), Some(d)) = (&req.external, decided.external.first()) {
                    out.push(one("external_directory", p, d, None));
                }
                if let Some(d) = decided.bash.first() {
                    out.push(one(&asked.permission, &req.pattern, d, None));
                }
            }
            out
        }
    }
}

/// The "Always" pattern of the first part whose text is `pattern`.
fn always_of(request: &Request, pattern: &str) -> Option<String> {
    request
        .parts
        .iter()
        .find(|p| p.text == pattern)
        .and_then(|p| p.always.clone())
}

/// One call and its decision today.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub call: ToolCall,
    pub now: Now,
}

/// How a config change moves one recorded call: its decision under the base side's config
/// and under the head side's (`permaudit diff --history`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shift {
    /// Denied now, allowed or asked before: what the change breaks.
    NowDenied,
    /// Asks now, ran without asking before.
    NowAsks,
    /// Runs without asking now, asked or denied before.
    NowAllowed,
    /// Asks now, denied before.
    NowAsksNotDenied,
}

impl Shift {
    /// The move from `base` to `head` (`None`: the same decision).
    pub fn of(base: Effect, head: Effect) -> Option<Shift> {
        match (base, head) {
            (b, h) if b == h => None,
            (_, Effect::Deny) => Some(Shift::NowDenied),
            (Effect::Allow, Effect::Ask) => Some(Shift::NowAsks),
            (_, Effect::Allow) => Some(Shift::NowAllowed),
            _ => Some(Shift::NowAsksNotDenied),
        }
    }

    /// Does the change widen this call's decision?
    pub fn widens(self) -> bool {
        matches!(self, Shift::NowAllowed | Shift::NowAsksNotDenied)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Shift::NowDenied => "now_denied",
            Shift::NowAsks => "now_asks",
            Shift::NowAllowed => "now_allowed",
            Shift::NowAsksNotDenied => "now_asks_not_denied",
        }
    }
}

/// A recorded call decided under both sides of a change.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    pub call: ToolCall,
    pub base: Now,
    pub head: Now,
}

impl Replayed {
    /// How the change moves the call (`None`: the same, or undecided on a side).
    pub fn shift(&self) -> Option<Shift> {
        Shift::of(self.base.effect()?, self.head.effect()?)
    }
}

/// The calls a change decides differently, each decided for the agent that made it under
/// the base side's rules and the head side's, and how many were decided on both sides
/// (`env` answers the shell's machine questions, as for [`Judge::decide`]).
pub fn replay(
    calls: Vec<ToolCall>,
    base: &mut Judge<'_>,
    head: &mut Judge<'_>,
    env: &Env<'_>,
) -> (Vec<Replayed>, usize) {
    let mut decided = 0;
    let mut changed = Vec::new();
    for call in calls {
        let r = Replayed {
            base: base.decide(&call, env),
            head: head.decide(&call, env),
            call,
        };
        if r.base.effect().is_some() && r.head.effect().is_some() {
            decided += 1;
        }
        if r.shift().is_some() {
            changed.push(r);
        }
    }
    (changed, decided)
}

/// What a person reads first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub calls: usize,
    pub sessions: usize,
    /// Indices of calls that ran then and today's rules deny (what a change breaks).
    pub ran_now_denied: Vec<usize>,
    /// Indices of calls that a rule denied or the person rejected then and today's rules
    /// allow without asking.
    pub refused_now_allowed: Vec<usize>,
    /// The checks today's rules ask most: (permission, the "Always" pattern of a bash part
    /// or the input, how many calls), most first.
    pub asked_most: Vec<(String, String, usize)>,
    /// The same for denies.
    pub denied_most: Vec<(String, String, usize)>,
    /// Calls that ran then and today's rules allow without asking by a rule a finding of
    /// `check` names (for that agent) ([`risks`]). Filled by the front end, which runs the
    /// checks.
    pub ran_risky: Vec<Risk>,
    /// Calls by how they went then.
    pub then: BTreeMap<Then, usize>,
    /// Calls not decided today.
    pub unknown: usize,
}

/// How many entries each "most" list keeps.
pub const MOST: usize = 10;

pub fn summarize(judged: &[Judged]) -> Summary {
    let mut s = Summary {
        calls: judged.len(),
        ..Summary::default()
    };
    let mut sessions: Vec<&str> = judged.iter().map(|j| j.call.session.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    s.sessions = sessions.len();
    let mut asked: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut denied: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, j) in judged.iter().enumerate() {
        *s.then.entry(j.call.then).or_default() += 1;
        let Now::Decided { now, checks } = &j.now else {
            s.unknown += 1;
            continue;
        };
        if j.call.then == Then::Ran && *now == Effect::Deny {
            s.ran_now_denied.push(i);
        }
        if matches!(j.call.then, Then::Denied | Then::Rejected) && *now == Effect::Allow {
            s.refused_now_allowed.push(i);
        }
        // Count each key once per call.
        let mut seen: Vec<(Effect, String, String)> = Vec::new();
        for c in checks {
            let key = (
                c.now,
                c.permission.clone(),
                c.always.clone().unwrap_or_else(|| c.input.clone()),
            );
            if c.now == Effect::Allow || seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            let map = if c.now == Effect::Ask {
                &mut asked
            } else {
                &mut denied
            };
            *map.entry((key.1, key.2)).or_default() += 1;
        }
    }
    s.asked_most = most(asked);
    s.denied_most = most(denied);
    s
}

/// A finding `check` reports today about a rule that let a recorded call run unasked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// The call's index in the judged list.
    pub call: usize,
    /// The rule (an index into the call's agent's rules).
    pub rule: usize,
    pub finding: &'static str,
    pub message: String,
}

/// The findings `check` reports today for the call's agent that name a rule deciding one
/// of the checks of a call that ran and is allowed today without asking (at the rule, or as
/// a related place): (finding id, message). What the person reads as "this ran, and today's
/// audit has something to say about the rule that lets it".
pub fn risks(
    project: &Project,
    findings: &[crate::checks::Finding],
    judged: &Judged,
    index: usize,
) -> Vec<Risk> {
    let Now::Decided { now, checks } = &judged.now else {
        return Vec::new();
    };
    let agent = judged.call.agent.as_deref().and_then(|a| project.agent(a));
    let (Some(agent), Then::Ran, Effect::Allow) = (agent, judged.call.then, *now) else {
        return Vec::new();
    };
    let mut out: Vec<Risk> = Vec::new();
    for c in checks {
        let Some(rule) = c.rule else { continue };
        let Some(loc) = agent.rules.get(rule).and_then(|r| r.loc) else {
            continue;
        };
        for f in findings {
            let names = f.loc == Some(loc) || f.related.iter().any(|(l, _)| *l == loc);
            if names
                && f.agents.contains(&agent.name)
                && !out
                    .iter()
                    .any(|r| r.finding == f.id && r.message == f.message)
            {
                out.push(Risk {
                    call: index,
                    rule,
                    finding: f.id,
                    message: f.message.clone(),
                });
            }
        }
    }
    out
}

fn most(counts: BTreeMap<(String, String), usize>) -> Vec<(String, String, usize)> {
    let mut v: Vec<(String, String, usize)> =
        counts.into_iter().map(|((p, k), n)| (p, k, n)).collect();
    // Most first; ties in key order (the map's), so the output is deterministic.
    v.sort_by_key(|x| std::cmp::Reverse(x.2));
    v.truncate(MOST);
    v
}

/// `--redact`: a command shown by its command names only (`git …`), each part's first word
/// kept and everything else hidden.
pub fn redact_command(command: &str) -> String {
    let mut words = command.split_whitespace();
    match words.next() {
        Some(first) => {
            let name = first.rsplit('/').next().unwrap_or(first);
            if words.next().is_some() {
                format!("{name} …")
            } else {
                name.to_string()
            }
        }
        None => String::new(),
    }
}

/// `--redact`: an input as printed (a bash command by its name, anything else hidden).
pub fn redact_input(permission: &str, input: &str) -> String {
    match permission {
        "bash" => redact_command(input),
        "external_directory" => "…/*".to_string(),
        "task" | "skill" | "todowrite" => input.to_string(),
        _ => "…".to_string(),
    }
}

/// `--redact`: a tool's arguments with every string hidden but a command's name and the
/// subagent or skill named.
pub fn redact_args(tool: &str, v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = match (tool, k.as_str(), x) {
                        ("bash", "command", Value::String(s)) => Value::String(redact_command(s)),
                        ("task", "subagent_type", _) | ("skill", "name", _) => x.clone(),
                        _ => redact_args(tool, x),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| redact_args(tool, x)).collect()),
        Value::String(_) => Value::String("…".into()),
        other => other.clone(),
    }
}

/// A time in milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `--since`: `YYYY-MM-DD`, optionally with `THH:MM[:SS]` or ` HH:MM[:SS]` (UTC), as
/// milliseconds since the epoch.
pub fn parse_since(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.find(['T', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: u32 = d.next()?.parse().ok()?;
    let day: u32 = d.next()?.parse().ok()?;
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=days_in(y, m)).contains(&day) {
        return None;
    }
    let mut secs = days_from_civil(y, m, day) * 86_400;
    if let Some(t) = time {
        let t = t.trim_end_matches('Z');
        let mut f = t.split(':');
        let h: i64 = f.next()?.parse().ok()?;
        let min: i64 = f.next()?.parse().ok()?;
        let sec: i64 = match f.next() {
            Some(x) => x.parse().ok()?,
            None => 0,
        };
        if f.next().is_some() || h > 23 || min > 59 || sec > 59 || h < 0 || min < 0 || sec < 0 {
            return None;
        }
        secs += h * 3600 + min * 60 + sec;
    }
    secs.checked_mul(1000)
}

fn days_in(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `days_from_civil`.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn then_from_the_texts_opencode_writes() {
        assert_eq!(Then::of(Some("completed"), None), Then::Ran);
        assert_eq!(Then::of(Some("running"), None), Then::Pending);
        assert_eq!(
            Then::of(
                Some("error"),
                Some(
                    "The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules […]"
                )
            ),
            Then::Denied
        );
        assert_eq!(
            Then::of(
                Some("error"),
                Some("The user rejected permission to use this specific tool call.")
            ),
            Then::Rejected
        );
        assert_eq!(Then::of(Some("error"), Some("File not found")), Then::Error);
        assert_eq!(Then::of(None, None), Then::Error);
    }

    #[test]
    fn dates_round_trip() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        let t = parse_since("2026-12-05T18:31:46").unwrap_or_default();
        assert_eq!(utc(t), "2026-12-05 18:31:46");
        assert_eq!(parse_since("2024-02-29"), Some(1_709_164_800_000));
        assert_eq!(parse_since("2023-02-29"), None);
        assert_eq!(parse_since("yesterday"), None);
        assert_eq!(parse_since("2026-12-05 25:00"), None);
    }

    #[test]
    fn calls_keep_the_project_session_tree_and_time() {
        let s = |id: &str, parent: Option<&str>, dir: &str| SessionRow {
            id: id.into(),
            parent_id: parent.map(Into::into),
            directory: dir.into(),
            agent: Some("build".into()),
            permission: None,
        };
        let sessions = [
            s("a", None, "/p"),
            s("b", Some("a"), "/p/sub"),
            s("c", None, "/q"),
            // A loop in the rows ends the walk.
            s("x", Some("y"), "/p"),
            s("y", Some("x"), "/p"),
        ];
        let part = |id: &str, session: &str, t: i64| PartRow {
            id: id.into(),
            session_id: session.into(),
            time_created: t,
            tool: Some("bash".into()),
            call_id: Some(format!("call-{id}")),
            status: Some("completed".into()),
            input: Some(r#"{"command":"ls"}"#.into()),
            ..PartRow::default()
        };
        let parts = [
            part("3", "b", 30),
            part("1", "a", 10),
            part("2", "c", 20),
            part("4", "x", 40),
            part("5", "gone", 50),
        ];
        let ids = |f: Filter| -> Vec<String> {
            calls(&sessions, &parts, &f)
                .into_iter()
                .map(|c| c.call)
                .collect()
        };
        assert_eq!(
            ids(Filter::default()),
            ["call-1", "call-2", "call-3", "call-4"]
        );
        let project = |p: &str| Filter {
            project: Some(p.into()),
            ..Filter::default()
        };
        assert_eq!(ids(project("/p")), ["call-1", "call-3", "call-4"]);
        assert_eq!(ids(project("/p/")), ["call-1", "call-3", "call-4"]);
        assert_eq!(ids(project("/q")), ["call-2"]);
        assert_eq!(
            ids(Filter {
                session: Some("a".into()),
                ..Filter::default()
            }),
            ["call-1", "call-3"]
        );
        assert_eq!(
            ids(Filter {
                since: Some(25),
                ..Filter::default()
            }),
            ["call-3", "call-4"]
        );
    }

    #[test]
    fn tools_ask_as_opencode_asks() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap_or_default();
        let a =
            |tool: &str, input: &str| asked(tool, &v(input), "/p").map(|a| (a.permission, a.input));
        assert_eq!(
            a("bash", r#"{"command":"ls -la","description":"x"}"#),
            Some(("bash".into(), "ls -la".into()))
        );
        assert_eq!(
            a("write", r#"{"filePath":"src/a.ts","content":"x"}"#),
            Some(("edit".into(), "/p/src/a.ts".into()))
        );
        assert_eq!(
            a("read", r#"{"filePath":"/etc/hosts"}"#),
            Some(("read".into(), "/etc/hosts".into()))
        );
        assert_eq!(a("apply_patch", r#"{"patchText":"x"}"#), None);
        assert_eq!(a("bash", r#"{"description":"no command"}"#), None);
    }

    #[test]
    fn redaction_keeps_command_names_only() {
        assert_eq!(redact_command("git push origin main"), "git …");
        assert_eq!(redact_command("/usr/bin/ls"), "ls");
        let v: Value = serde_json::from_str(
            r#"{"command":"cat /home/u/.ssh/id_rsa","description":"read key","n":3}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            redact_args("bash", &v),
            serde_json::json!({"command":"cat …","description":"…","n":3})
        );
    }
}
