//! `permaudit suggest` (issue 47): from the asks a person approved across sessions, the
//! smallest `allow` rules that stop them, each proven on the config before it is shown.
//!
//! The history (`crate::history`) gives every recorded call with how it went then and what
//! today's config decides. An **approved ask** is a call that ran (`then: ran`) and that
//! today's config decides `ask` (the call as a whole: a call any check denies today gets no
//! proposal), in a session a person drove:
//!
//! - sessions are counted by their **root**: a subagent's session counts under the session
//!   that started it (its asks were put to the same person in the same conversation);
//! - a root session recorded for `opencode run` is not a person's: OpenCode 1.18.34's run
//!   command creates its session with its own rules (`question`, `plan_enter`, `plan_exit`
//!   denied, in the `session.permission` column; not with `--interactive`), and there an ask
//!   is rejected by the command, or approved by it with `--auto` ([`is_run_session`]);
//! - where OpenCode's log covers the call's time, it must show the ask ([`Log`]): the log
//!   has `message=asking … permission=P patterns=[…]` for each question, with a time but no
//!   session and no answer, so it tells that a question was put, never who answered or how.
//!
//! Each ask check of an approved call is proposed as the rule OpenCode's own "Always"
//! would store where that is narrow (a bash part's arity pattern, `git log *`; an
//! `external_directory` directory, `/data/*`), else the exact input asked (a file tool's
//! worktree-relative path: "Always" would store `*`, the whole tool). A pattern is proposed
//! when approved in at least `min_sessions` root sessions.
//!
//! A proposal is written into the user's own file and **proven** ([`Prover`]): applied in
//! memory, the project re-loaded as OpenCode loads it, [`crate::diff::diff`] against the
//! config before it (every change must be ask → allow, decided by the new rule, over no
//! explicit ask of the author's narrower than a catch-all, nothing undecided), and every
//! recorded call of its permission decided again: it must turn ask → allow only, and no
//! check of a call that was rejected or denied then may change. A proposal that fails is
//! narrowed to the exact commands approved (each in enough sessions) or dropped, with why.
//!
//! No I/O here: the CLI reads the database, the log and the files, and re-loads.

use crate::diff::{self, Class};
use crate::fix::text::{self, Container, Edit, Syntax};
use crate::history::{Check, Judge, Now, SessionRow, Then, ToolCall};
use crate::model::{Effect, Layer, Rule};
use crate::project::Project;
use crate::shell::Env;
use crate::source::{Loc, SourceId};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The rules `opencode run` (1.18.34, without `--interactive`) gives the session it
/// creates: the mark of a session no person answered.
pub const RUN_RULES: [&str; 3] = ["question", "plan_enter", "plan_exit"];

/// Is this `session.permission` value the one `opencode run` writes (each of
/// [`RUN_RULES`] denied for `*`)? A subagent session inherits the caller's denies, so its
/// root is what is asked.
pub fn is_run_session(permission: Option<&str>) -> bool {
    let Some(v) = permission.and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok()) else {
        return false;
    };
    let Some(rules) = v.as_array() else {
        return false;
    };
    RUN_RULES.iter().all(|name| {
        rules.iter().any(|r| {
            r.get("permission").and_then(|x| x.as_str()) == Some(name)
                && r.get("pattern").and_then(|x| x.as_str()) == Some("*")
                && r.get("action").and_then(|x| x.as_str()) == Some("deny")
        })
    })
}

/// Each session's root: the session at the top of its parent chain (itself when it has no
/// parent; a loop or a parent not recorded ends the walk where it stands).
pub fn roots(sessions: &[SessionRow]) -> BTreeMap<String, String> {
    let by_id: BTreeMap<&str, &SessionRow> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut out = BTreeMap::new();
    for s in sessions {
        let mut cur = s;
        for _ in 0..sessions.len() {
            match cur.parent_id.as_deref().and_then(|p| by_id.get(p)) {
                Some(parent) if parent.id != s.id => cur = parent,
                _ => break,
            }
        }
        out.insert(s.id.clone(), cur.id.clone());
    }
    out
}

/// One line of OpenCode's log about a permission check: `message=evaluated` (one
/// pattern, the action the ruleset gave it) or `message=asking` (the patterns put to the
/// person).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Milliseconds since the epoch.
    pub time: i64,
    pub permission: String,
    pub patterns: Vec<String>,
    /// `Some(action)` for `evaluated`; `None` for `asking`.
    pub evaluated: Option<String>,
}

/// What OpenCode's log files say about permission checks. The log has no session id and
/// no answer; lines a killed process had not flushed are missing.
#[derive(Debug, Clone, Default)]
pub struct Log {
    pub lines: Vec<LogLine>,
    /// How many files were read.
    pub files: usize,
}

/// What the log says about the question a call's check asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Logged {
    /// The first line about its permission and input after the call was recorded (within
    /// [`LOG_WINDOW`]) is the question (`asking`, or `evaluated` to `ask`).
    Asked,
    /// That line is `evaluated` to `allow`: it ran without a question then (a rule, or an
    /// earlier "Always" of the same OpenCode process, allowed it).
    NotAsked,
    /// No such line (no log, rotated away, or not flushed before the process died).
    Unknown,
}

/// How long after a call's part was recorded its check may be logged (milliseconds).
pub const LOG_WINDOW: i64 = 10 * 60 * 1000;

impl Log {
    /// One line of a log file (call [`Log::end_file`] after each file, [`Log::finish`] at
    /// the end).
    pub fn line(&mut self, line: &str) {
        let line = line.trim_end_matches(['\n', '\r']);
        let Some(rest) = line.strip_prefix("timestamp=") else {
            return;
        };
        let asking = line.contains(" message=asking ");
        if !asking && !line.contains(" message=evaluated ") {
            return;
        }
        let Some(time) = rest.split(' ').next().and_then(parse_time) else {
            return;
        };
        let fields = logfmt(line);
        let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.as_str());
        let Some(permission) = get("permission") else {
            return;
        };
        let (patterns, evaluated) = if asking {
            let Some(p) = get("patterns") else { return };
            (serde_json::from_str(p).unwrap_or_default(), None)
        } else {
            let (Some(p), Some(a)) = (get("pattern"), get("action.action")) else {
                return;
            };
            (vec![p.to_string()], Some(a.to_string()))
        };
        self.lines.push(LogLine {
            time,
            permission: permission.to_string(),
            patterns,
            evaluated,
        });
    }

    pub fn end_file(&mut self) {
        self.files += 1;
    }

    /// Sorted for [`Log::logged`]; call once all files are read.
    pub fn finish(&mut self) {
        self.lines.sort_by_key(|a| a.time);
    }

    pub fn is_empty(&self) -> bool {
        self.files == 0
    }

    /// How many questions the log records.
    pub fn asks(&self) -> usize {
        self.lines.iter().filter(|l| l.evaluated.is_none()).count()
    }

    /// What the log says of the check `permission` `input` of a call recorded at `time`.
    pub fn logged(&self, time: i64, permission: &str, input: &str) -> Logged {
        let from = self.lines.partition_point(|a| a.time < time - 2000);
        let first = self.lines[from..]
            .iter()
            .take_while(|a| a.time <= time + LOG_WINDOW)
            .find(|a| a.permission == permission && a.patterns.iter().any(|p| p == input));
        match first.map(|l| l.evaluated.as_deref()) {
            Some(None | Some("ask")) => Logged::Asked,
            Some(Some("allow")) => Logged::NotAsked,
            _ => Logged::Unknown,
        }
    }
}

/// `2026-12-06T05:36:55.513Z` as milliseconds since the epoch.
fn parse_time(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
    let ms: i64 = format!("{:0<3}", frac.get(..3.min(frac.len()))?)
        .parse()
        .ok()?;
    Some(crate::history::parse_since(whole)? + ms)
}

/// The `key=value` fields of a logfmt line (`key="quoted \"text\""` unescaped).
fn logfmt(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let mut key = String::new();
        for c in chars.by_ref() {
            if c == '=' {
                break;
            }
            key.push(c);
        }
        if key.is_empty() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            value.push(match n {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                    }
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        out.push((key, value));
    }
    out
}

/// The rule a check's ask is proposed as: a bash part's "Always" pattern, else the input
/// asked (an `external_directory` ask's input is already its directory, `/data/*`).
pub fn pattern_of(check: &Check) -> String {
    match (&check.always, check.permission.as_str()) {
        (Some(a), "bash") => a.clone(),
        _ => check.input.clone(),
    }
}

/// One recorded call with its decision today, as `suggest` reads it.
#[derive(Debug, Clone)]
pub struct Recorded<'a> {
    pub call: &'a ToolCall,
    pub now: &'a Now,
}

/// Calls of one directory that stand for one proposed rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub directory: String,
    pub permission: String,
    pub pattern: String,
    /// Indices into the recorded calls (approved asks whose check proposes this pattern).
    pub calls: Vec<usize>,
    /// Their root sessions.
    pub sessions: BTreeSet<String>,
    /// The exact inputs approved, each with its root sessions (for narrowing).
    pub exact: BTreeMap<String, BTreeSet<String>>,
    /// The calls the log shows asked.
    pub logged: BTreeSet<usize>,
}

/// A pattern not proposed, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub directory: String,
    pub permission: String,
    pub pattern: String,
    /// How many root sessions approved it (0 when none counts).
    pub sessions: usize,
    /// The calls (callIDs) concerned.
    pub calls: Vec<String>,
    pub why: String,
}

/// Why calls that ran and ask today are not counted as a person's approvals.
const WHY_RUN: &str = "approved only in sessions of `opencode run`, where no person answers (its `--auto` approves asks itself)";
const WHY_NOT_ASKED: &str = "OpenCode's log shows these calls evaluated `allow` then (by a rule, or an earlier \"Always\" of the same process): no question was put";
const WHY_DENIED: &str = "part of calls today's config denies (another check of the call is denied): nothing is proposed for a denied call";

/// The approved asks of `calls`, grouped by directory and proposed rule (most sessions
/// first), with what is left out and why. `roots` maps each session to its root,
/// `run_roots` are root sessions of `opencode run`.
pub fn gather(
    calls: &[Recorded<'_>],
    roots: &BTreeMap<String, String>,
    run_roots: &BTreeSet<String>,
    log: Option<&Log>,
) -> (Vec<Group>, Vec<Skipped>) {
    let mut groups: BTreeMap<(String, String, String), Group> = BTreeMap::new();
    // (directory, permission, pattern, why) → (root sessions, callIDs).
    type Left = BTreeMap<(String, String, String, &'static str), (BTreeSet<String>, Vec<String>)>;
    let mut skipped: Left = BTreeMap::new();
    for (i, r) in calls.iter().enumerate() {
        let Now::Decided { now, checks } = r.now else {
            continue;
        };
        if r.call.then != Then::Ran || *now == Effect::Allow {
            continue;
        }
        let root = roots
            .get(&r.call.session)
            .cloned()
            .unwrap_or_else(|| r.call.session.clone());
        let asking: Vec<&Check> = checks.iter().filter(|c| c.now == Effect::Ask).collect();
        let logged: Vec<Logged> = asking
            .iter()
            .map(|c| {
                log.map_or(Logged::Unknown, |l| {
                    l.logged(r.call.time, &c.permission, &c.input)
                })
            })
            .collect();
        let why = if *now == Effect::Deny {
            Some(WHY_DENIED)
        } else if run_roots.contains(&root) {
            Some(WHY_RUN)
        } else if logged.contains(&Logged::NotAsked) {
            Some(WHY_NOT_ASKED)
        } else {
            None
        };
        for (c, l) in asking.iter().zip(&logged) {
            let key = (
                r.call.directory.clone(),
                c.permission.clone(),
                pattern_of(c),
            );
            if let Some(why) = why {
                let e = skipped.entry((key.0, key.1, key.2, why)).or_default();
                e.0.insert(root.clone());
                if !e.1.contains(&r.call.call) {
                    e.1.push(r.call.call.clone());
                }
                continue;
            }
            let g = groups.entry(key.clone()).or_insert_with(|| Group {
                directory: key.0.clone(),
                permission: key.1.clone(),
                pattern: key.2.clone(),
                calls: Vec::new(),
                sessions: BTreeSet::new(),
                exact: BTreeMap::new(),
                logged: BTreeSet::new(),
            });
            if g.calls.last() != Some(&i) {
                g.calls.push(i);
            }
            if *l == Logged::Asked {
                g.logged.insert(i);
            }
            g.sessions.insert(root.clone());
            g.exact
                .entry(c.input.clone())
                .or_default()
                .insert(root.clone());
        }
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    groups.sort_by(|a, b| {
        (b.sessions.len(), b.calls.len())
            .cmp(&(a.sessions.len(), a.calls.len()))
            .then_with(|| {
                (&a.directory, &a.permission, &a.pattern).cmp(&(
                    &b.directory,
                    &b.permission,
                    &b.pattern,
                ))
            })
    });
    let skipped = skipped
        .into_iter()
        .map(
            |((directory, permission, pattern, why), (sessions, calls))| Skipped {
                directory,
                permission,
                pattern,
                sessions: if why == WHY_DENIED { 0 } else { sessions.len() },
                calls,
                why: why.to_string(),
            },
        )
        .collect();
    (groups, skipped)
}

/// One decision a proposal changes, over a region of inputs (from the diff).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Opened {
    pub agents: Vec<String>,
    pub permission: String,
    /// An input of the region (the diff's witness).
    pub input: String,
    pub before: Effect,
    pub after: Effect,
}

/// A rule proven: what to write where, what it covers and what it opens.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub directory: String,
    pub permission: String,
    pub pattern: String,
    /// The agent whose own block it goes in (`None`: a block every agent inherits).
    pub agent: Option<String>,
    /// The file (its path) and where the rule stands once every proposal is written.
    pub path: PathBuf,
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The recorded calls it turns ask → allow (indices into the calls), and their callIDs.
    pub covered: Vec<usize>,
    pub covers: Vec<String>,
    /// The root sessions in which the calls it covers were approved.
    pub sessions: Vec<String>,
    /// Of the approved calls it covers, how many the log shows asked.
    pub logged: usize,
    pub approved: usize,
    /// Every decision it changes (the diff).
    pub opens: Vec<Opened>,
    /// The broader pattern it narrows, and why that one was not proposed.
    pub narrowed: Option<(String, String)>,
}

/// What [`Prover::run`] gives: the proposals proven (in the order they apply), what was
/// left out, and the files as they read with every proposal written.
#[derive(Debug, Default)]
pub struct Outcome {
    pub proposals: Vec<Proposal>,
    pub skipped: Vec<Skipped>,
    /// Path, text before, text after.
    pub files: Vec<(PathBuf, String, String)>,
}

/// Re-loads a directory's project with some files' text replaced (`None`: it would not
/// load).
pub type Reload<'a> = dyn Fn(&BTreeMap<PathBuf, String>) -> Option<Project> + 'a;

/// Proves the groups of one directory, one after another, each on top of those before.
pub struct Prover<'a> {
    /// The recorded calls (all directories; only this directory's are decided again).
    pub calls: &'a [Recorded<'a>],
    pub directory: &'a str,
    pub reload: &'a Reload<'a>,
    pub env: &'a Env<'a>,
    /// The project root: a config file there is where shared proposals go.
    pub root: &'a Path,
    pub min_sessions: usize,
    /// Each session's root.
    pub roots: &'a BTreeMap<String, String>,
    /// The files as edited by earlier directories (path → text).
    pub texts: BTreeMap<PathBuf, String>,
}

/// A rule proven: the proposal, the place of its file it was written at, the project with
/// it written, and the recorded calls whose decisions it changes (with the new ones).
type Proven = (Proposal, Loc, Project, Vec<(usize, Now)>);

/// A rule to try: the pattern, the calls it stands for, and the broader one it narrows.
struct Attempt {
    pattern: String,
    narrowed: Option<(String, String)>,
}

impl<'a> Prover<'a> {
    /// Prove `groups` (this directory's) on `start` (the project as the files read now).
    pub fn run(mut self, start: Project, groups: &[Group]) -> (Outcome, BTreeMap<PathBuf, String>) {
        let mut out = Outcome::default();
        // This directory's calls, each with the number of its (agent, tool, input): calls
        // alike are decided once per proof.
        let mut alike: BTreeMap<(Option<&str>, &str, String), usize> = BTreeMap::new();
        let mine: Vec<(usize, usize)> = (0..self.calls.len())
            .filter(|&i| self.calls[i].call.directory == self.directory)
            .map(|i| {
                let c = self.calls[i].call;
                let n = alike.len();
                let key = (c.agent.as_deref(), c.tool.as_str(), c.input.to_string());
                (i, *alike.entry(key).or_insert(n))
            })
            .collect();
        drop(alike);
        // Today's decisions of this directory's calls, kept up to date as proposals apply.
        let mut nows: BTreeMap<usize, Now> = mine
            .iter()
            .map(|&(i, _)| (i, self.calls[i].now.clone()))
            .collect();
        let mut current = start;
        let mut accepted: Vec<(Proposal, Loc)> = Vec::new();
        let directory = self.directory;
        for g in groups.iter().filter(|g| g.directory == directory) {
            let skip = |why: String, sessions: usize, calls: &[usize]| Skipped {
                directory: g.directory.clone(),
                permission: g.permission.clone(),
                pattern: g.pattern.clone(),
                sessions,
                calls: calls
                    .iter()
                    .map(|&i| self.calls[i].call.call.clone())
                    .collect(),
                why,
            };
            if g.sessions.len() < self.min_sessions {
                out.skipped.push(skip(
                    format!(
                        "approved in {} session{} (fewer than --min-sessions {})",
                        g.sessions.len(),
                        if g.sessions.len() == 1 { "" } else { "s" },
                        self.min_sessions
                    ),
                    g.sessions.len(),
                    &g.calls,
                ));
                continue;
            }
            let mut attempts = vec![Attempt {
                pattern: g.pattern.clone(),
                narrowed: None,
            }];
            while let Some(a) = attempts.pop() {
                match self.attempt(&current, &nows, &mine, g, &a) {
                    Ok((p, loc, next, next_nows)) => {
                        current = next;
                        for (k, v) in next_nows {
                            nows.insert(k, v);
                        }
                        accepted.push((p, loc));
                    }
                    Err(why) => {
                        // Narrowed once: to the exact inputs approved in enough sessions
                        // (a bash arity pattern only; an exact input is its own pattern).
                        if a.narrowed.is_none() && g.permission == "bash" {
                            let exact: Vec<&String> = g
                                .exact
                                .iter()
                                .filter(|(input, s)| {
                                    **input != g.pattern
                                        && s.len() >= self.min_sessions
                                        && !input.contains(['*', '?'])
                                })
                                .map(|(input, _)| input)
                                .collect();
                            if !exact.is_empty() {
                                for input in exact.into_iter().rev() {
                                    attempts.push(Attempt {
                                        pattern: input.clone(),
                                        narrowed: Some((g.pattern.clone(), why.clone())),
                                    });
                                }
                                out.skipped.push(skip(
                                    format!("{why}; narrowed to the exact commands approved"),
                                    g.sessions.len(),
                                    &g.calls,
                                ));
                                continue;
                            }
                        }
                        let calls: Vec<usize> = match &a.narrowed {
                            Some(_) => g
                                .calls
                                .iter()
                                .copied()
                                .filter(|&i| self.asks_input(i, &g.permission, &a.pattern))
                                .collect(),
                            None => g.calls.clone(),
                        };
                        let mut s = skip(why, g.sessions.len(), &calls);
                        s.pattern = a.pattern.clone();
                        out.skipped.push(s);
                    }
                }
            }
        }
        // Where each rule stands once all are written.
        for (mut p, loc) in accepted {
            if let Some(l) = find_rule(&current, &p, loc) {
                let pos = current.loaded.sources.position(l);
                p.line = pos.line;
                p.column = pos.column;
                p.file = pos.name;
            }
            out.proposals.push(p);
        }
        (out, std::mem::take(&mut self.texts))
    }

    /// Does recorded call `i` ask `permission` `input` exactly?
    fn asks_input(&self, i: usize, permission: &str, input: &str) -> bool {
        self.calls[i]
            .now
            .asking()
            .any(|c| c.permission == permission && c.input == input)
    }

    /// One rule written, re-loaded, diffed and the calls decided again.
    fn attempt(
        &mut self,
        current: &Project,
        nows: &BTreeMap<usize, Now>,
        mine: &[(usize, usize)],
        g: &Group,
        a: &Attempt,
    ) -> Result<Proven, String> {
        // The rule that decides the ask today, for the first call that stands for it.
        let first = g
            .calls
            .iter()
            .copied()
            .find(|&i| a.narrowed.is_none() || self.asks_input(i, &g.permission, &a.pattern))
            .ok_or("no call asks it")?;
        let call = self.calls[first].call;
        let agent = call
            .agent
            .as_deref()
            .and_then(|n| current.agent(n))
            .ok_or("its agent is gone")?;
        let decider: Option<&Rule> = nows
            .get(&first)
            .and_then(|now| {
                now.asking()
                    .find(|c| c.permission == g.permission && pattern_of(c) == g.pattern)
            })
            .and_then(|c| c.rule)
            .and_then(|k| agent.rules.get(k));
        let placements = places(current, self.root, decider, &g.permission, &a.pattern);
        if placements.is_empty() {
            return Err("no config file of the user's to write it in (no project config, and the rule that asks is built in)".into());
        }
        let agent_name = agent.name.clone();
        let own_block =
            decider.is_some_and(|r| matches!(r.layer, Layer::AgentConfig | Layer::MarkdownAgent));
        // Each place in turn, until one proves (a shared block an agent's own rule overrides
        // covers nothing for that agent).
        let mut why = String::new();
        for placement in placements {
            match self.prove_at(current, nows, mine, g, a, placement) {
                Ok((mut p, loc, next, changed)) => {
                    p.agent = (own_block
                        && Some(loc.source) == decider.and_then(|r| r.loc).map(|l| l.source))
                    .then(|| agent_name.clone());
                    return Ok((p, loc, next, changed));
                }
                Err(e) => why = e,
            }
        }
        Err(why)
    }

    /// [`Prover::attempt`] at one place: written there, re-loaded, diffed, the calls
    /// decided again.
    fn prove_at(
        &mut self,
        current: &Project,
        nows: &BTreeMap<usize, Now>,
        mine: &[(usize, usize)],
        g: &Group,
        a: &Attempt,
        (source, edits, own): (SourceId, Vec<Edit>, Option<Loc>),
    ) -> Result<Proven, String> {
        let file = current.loaded.sources.get(source);
        let path = file.path().ok_or("not a file")?.to_path_buf();
        let edited = text::apply(&file.text, &edits).ok_or("the edit does not apply")?;
        let mut texts = self.texts.clone();
        texts.insert(path.clone(), edited);
        let next =
            (self.reload)(&texts).ok_or("OpenCode would refuse the config with it written")?;
        // What it opens, over every input: ask → allow only, by the new rule, over no
        // explicit ask of the author's but a catch-all.
        let d = diff::diff(current, &next);
        let internal = |name: &str| current.agent(name).is_some_and(|a| a.is_internal());
        if let Some(i) = d.inconclusive.iter().find(|i| !internal(&i.agent)) {
            return Err(format!(
                "what it opens is not proven (the comparison of `{}` for {} did not finish: {})",
                i.permission, i.agent, i.reason
            ));
        }
        if let Some(e) = d.events.iter().find(|e| !internal(&e.agent)) {
            return Err(format!(
                "it would change which tools {} is offered ({})",
                e.agent,
                e.class.as_str()
            ));
        }
        let mut opens: Vec<Opened> = Vec::new();
        for c in d.changes.iter().filter(|c| !internal(&c.agent)) {
            let after = next.agent(&c.agent).ok_or("an agent is gone")?;
            let before = current.agent(&c.agent).ok_or("an agent is gone")?;
            let head = c.head_rule.and_then(|k| after.rules.get(k));
            let base = c.base_rule.and_then(|k| before.rules.get(k));
            if c.class != Class::Widened || c.before != Effect::Ask || c.after != Effect::Allow {
                return Err(format!(
                    "it would change {} {:?} for {}: {} → {}",
                    c.permission, c.input, c.agent, c.before, c.after
                ));
            }
            if !head.is_some_and(|r| r.permission == g.permission && r.pattern == a.pattern) {
                return Err(format!(
                    "a change it makes ({} {:?} for {}) is not decided by the rule it writes",
                    c.permission, c.input, c.agent
                ));
            }
            if let Some(b) = base.filter(|b| b.loc.is_some() && b.builtin.is_none()) {
                if !b.pattern.chars().all(|ch| ch == '*') {
                    let pos = current.loaded.sources.position(b.loc.ok_or("no place")?);
                    return Err(format!(
                        "it would override the author's narrower ask `{}` {:?} at {}:{}:{} (e.g. {} {:?} for {})",
                        b.permission,
                        b.pattern,
                        pos.name,
                        pos.line,
                        pos.column,
                        c.permission,
                        c.input,
                        c.agent
                    ));
                }
            }
            match opens.iter_mut().find(|o| {
                o.permission == c.permission && o.input == c.input && o.before == c.before
            }) {
                Some(o) => {
                    if !o.agents.contains(&c.agent) {
                        o.agents.push(c.agent.clone());
                    }
                }
                None => opens.push(Opened {
                    agents: vec![c.agent.clone()],
                    permission: c.permission.clone(),
                    input: c.input.clone(),
                    before: c.before,
                    after: c.after,
                }),
            }
        }
        // Every recorded call of this permission decided again: ask → allow only, never a
        // call that was rejected or denied then.
        let mut judge = Judge::new(&next);
        let mut memo: BTreeMap<usize, Now> = BTreeMap::new();
        let mut changed: Vec<(usize, Now)> = Vec::new();
        let mut covered: Vec<usize> = Vec::new();
        for &(i, alike) in mine {
            let Some(Now::Decided { now: was, checks }) = nows.get(&i) else {
                continue;
            };
            if !checks.iter().any(|c| c.permission == g.permission) {
                continue;
            }
            let call = self.calls[i].call;
            let now = memo
                .entry(alike)
                .or_insert_with(|| judge.decide(call, self.env))
                .clone();
            let Now::Decided {
                now: is,
                checks: after,
            } = &now
            else {
                return Err(format!("call {} would no longer be decided", call.call));
            };
            let same = checks.len() == after.len()
                && checks.iter().zip(after).all(|(x, y)| x.now == y.now);
            if same {
                continue;
            }
            if matches!(call.then, Then::Rejected | Then::Denied) {
                return Err(format!(
                    "it would allow {} {} (call {}), which was {} in session {}",
                    call.tool,
                    serde_json::to_string(&call.input).unwrap_or_default(),
                    call.call,
                    call.then.as_str(),
                    call.session
                ));
            }
            if *is != *was {
                if !(*was == Effect::Ask && *is == Effect::Allow) {
                    return Err(format!(
                        "call {} would be decided {} instead of {}",
                        call.call, is, was
                    ));
                }
                covered.push(i);
            }
            changed.push((i, now));
        }
        let approved: Vec<usize> = covered
            .iter()
            .copied()
            .filter(|i| g.calls.contains(i))
            .collect();
        let sessions: BTreeSet<String> = approved
            .iter()
            .map(|&i| {
                let s = &self.calls[i].call.session;
                self.roots.get(s).cloned().unwrap_or_else(|| s.clone())
            })
            .collect();
        if sessions.len() < self.min_sessions {
            return Err(format!(
                "written in {}, it would allow the approved calls of {} session{} only (a later rule decides the others)",
                file.name(),
                sessions.len(),
                if sessions.len() == 1 { "" } else { "s" }
            ));
        }
        let logged = approved.iter().filter(|i| g.logged.contains(i)).count();
        let loc = own.ok_or("no place")?;
        self.texts = texts;
        Ok((
            Proposal {
                directory: g.directory.clone(),
                permission: g.permission.clone(),
                pattern: a.pattern.clone(),
                agent: None,
                path,
                file: file.name(),
                line: 0,
                column: 0,
                covers: covered
                    .iter()
                    .map(|&i| self.calls[i].call.call.clone())
                    .collect(),
                covered,
                sessions: sessions.into_iter().collect(),
                logged,
                approved: approved.len(),
                opens,
                narrowed: a.narrowed.clone(),
            },
            loc,
            next,
            changed,
        ))
    }
}

/// The new rule in `project` (after the edits): the last rule of its permission and pattern
/// allowing, written in the file of `near`.
fn find_rule(project: &Project, p: &Proposal, near: Loc) -> Option<Loc> {
    let path = &p.path;
    project
        .agents
        .iter()
        .flat_map(|a| a.rules.iter())
        .filter(|r| {
            r.permission == p.permission
                && r.pattern == p.pattern
                && r.action.effective() == Effect::Allow
        })
        .filter_map(|r| r.loc)
        .filter(|l| project.loaded.sources.get(l.source).path() == Some(path.as_path()))
        .max_by_key(|l| (l.source == near.source, l.span.start))
}

/// Where `permission` `pattern` allow may be written, in the user's own files, in the
/// order they are tried: after the rule that asks today when the user wrote it under the
/// project root (its own block: an agent's when it is the agent's); the project's config
/// file, in its shared `permission` block; after the asking rule wherever the user wrote it
/// (the global config). Each: the file, the edits, and a place in it (for finding the rule
/// later).
fn places(
    project: &Project,
    root: &Path,
    decider: Option<&Rule>,
    permission: &str,
    pattern: &str,
) -> Vec<(SourceId, Vec<Edit>, Option<Loc>)> {
    let entries = vec![(pattern.to_string(), "allow".to_string())];
    let written = decider.and_then(|r| crate::fix::suggest::written(r).map(|l| (r, l)));
    let after = |r: &Rule, l: Loc| -> Option<(SourceId, Vec<Edit>, Option<Loc>)> {
        let (syntax, cs) = parsed(project, l.source)?;
        let text = &project.loaded.sources.get(l.source).text;
        let edits = crate::fix::suggest::after_rule(text, &cs, syntax, r, permission, &entries)
            .or_else(|| {
                crate::fix::suggest::beside_rule(text, &cs, syntax, r, permission, &entries)
            })?;
        Some((l.source, edits, Some(l)))
    };
    let under_root = |l: &Loc| {
        project
            .loaded
            .sources
            .get(l.source)
            .path()
            .is_some_and(|p| p.starts_with(root))
    };
    let mut out = Vec::new();
    if let Some((r, l)) = written.filter(|(_, l)| under_root(l)) {
        out.extend(after(r, l));
    }
    out.extend(in_project_config(project, root, permission, &entries));
    if let Some((r, l)) = written.filter(|(_, l)| !under_root(l)) {
        out.extend(after(r, l));
    }
    out
}

/// A source's syntax and containers, when permaudit edits it (a JSON(C) or markdown file,
/// undamaged).
fn parsed(project: &Project, source: SourceId) -> Option<(Syntax, Vec<Container>)> {
    let syntax = crate::fix::editable(project, source, None)?;
    let text = &project.loaded.sources.get(source).text;
    Some((syntax, text::containers(text, syntax)?))
}

/// The entries in the shared `permission` block of the project's own config file
/// (`opencode.json(c)` at the root, else `.opencode/opencode.json(c)`).
fn in_project_config(
    project: &Project,
    root: &Path,
    permission: &str,
    entries: &[(String, String)],
) -> Option<(SourceId, Vec<Edit>, Option<Loc>)> {
    let candidates = [
        root.join("opencode.jsonc"),
        root.join("opencode.json"),
        root.join(".opencode/opencode.jsonc"),
        root.join(".opencode/opencode.json"),
    ];
    let (source, _) = candidates.iter().find_map(|c| {
        project
            .loaded
            .sources
            .iter()
            .find(|(_, f)| f.path() == Some(c.as_path()))
    })?;
    let (syntax, cs) = parsed(project, source)?;
    if syntax != Syntax::Jsonc {
        return None;
    }
    let text = &project.loaded.sources.get(source).text;
    let key = |e: &text::Entry| crate::fix::key_text(text, e.key).to_string();
    let root_obj = cs.iter().find(|c| text::parent(&cs, c).is_none())?;
    let block = text::object_text(syntax, entries);
    let edits = match root_obj
        .entries
        .iter()
        .rev()
        .find(|e| key(e) == "permission")
    {
        None => text::append(
            text,
            root_obj,
            &[(
                "permission".to_string(),
                format!("{{{}: {block}}}", text::quoted(permission)),
            )],
        )?,
        Some(e) => match text::child(&cs, e) {
            None => {
                // `"permission": "ask"`: every permission's catch-all, kept first.
                let current = text
                    .get(e.value.start..e.value.end)?
                    .trim_matches(['"', '\'']);
                // The block is written already: not through `object_text`, which writes
                // actions.
                vec![text::replace_value(
                    e,
                    format!(
                        "{{\"*\": {}, {}: {block}}}",
                        text::action_text(syntax, current),
                        text::quoted(permission)
                    ),
                )]
            }
            Some(perms) => match perms.entries.iter().rev().find(|x| key(x) == permission) {
                Some(x) => match text::child(&cs, x) {
                    Some(own) => text::append(
                        text,
                        own,
                        &entries
                            .iter()
                            .map(|(k, a)| (k.clone(), text::action_text(syntax, a)))
                            .collect::<Vec<_>>(),
                    )?,
                    None => {
                        let current = text
                            .get(x.value.start..x.value.end)?
                            .trim_matches(['"', '\'']);
                        let mut all = vec![("*".to_string(), current.to_string())];
                        all.extend(entries.iter().cloned());
                        vec![text::replace_value(x, text::object_text(syntax, &all))]
                    }
                },
                None => text::append(text, perms, &[(permission.to_string(), block)])?,
            },
        },
    };
    let at = edits.first().map(|e| e.span.start).unwrap_or(0);
    Some((
        source,
        edits,
        Some(Loc {
            source,
            span: crate::source::Span::new(at, at),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_sessions_are_told_by_their_rules() {
        let run = r#"[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]"#;
        assert!(is_run_session(Some(run)));
        assert!(!is_run_session(None));
        assert!(!is_run_session(Some("not json")));
        assert!(!is_run_session(Some(
            r#"[{"permission":"question","pattern":"*","action":"deny"}]"#
        )));
    }

    #[test]
    fn log_lines_as_opencode_writes_them() {
        let mut log = Log::default();
        log.line(r#"timestamp=2026-12-06T05:36:55.512Z level=INFO run=74a571e1 message=evaluated permission=bash pattern="ls -la" action.permission=bash action.pattern=* action.action=ask"#);
        log.line(r#"timestamp=2026-12-06T05:36:55.513Z level=INFO run=74a571e1 message=asking id=per_1 permission=bash patterns="[\"ls -la\",\"git status\"]""#);
        log.line(r#"timestamp=2026-12-06T05:36:56.000Z level=INFO run=74a571e1 message=evaluated permission=bash pattern=pwd action.permission=bash action.pattern="pwd *" action.action=allow"#);
        log.line("garbage");
        log.end_file();
        log.finish();
        assert_eq!(log.asks(), 1);
        assert_eq!(log.lines[1].patterns, ["ls -la", "git status"]);
        let t = parse_time("2026-12-06T05:36:55.000Z").unwrap_or_default();
        assert_eq!(log.logged(t, "bash", "git status"), Logged::Asked);
        assert_eq!(log.logged(t, "bash", "ls -la"), Logged::Asked);
        assert_eq!(log.logged(t, "bash", "pwd"), Logged::NotAsked);
        assert_eq!(log.logged(t, "bash", "uname"), Logged::Unknown);
        assert_eq!(log.logged(t - 3_600_000, "bash", "ls -la"), Logged::Unknown);
        assert_eq!(parse_time("1970-01-01T00:00:01.5Z"), Some(1500));
    }

    #[test]
    fn roots_walk_up_and_stop_at_loops() {
        let s = |id: &str, parent: Option<&str>| SessionRow {
            id: id.into(),
            parent_id: parent.map(Into::into),
            directory: "/p".into(),
            agent: None,
            permission: None,
        };
        let r = roots(&[
            s("a", None),
            s("b", Some("a")),
            s("c", Some("b")),
            s("x", Some("y")),
            s("y", Some("x")),
            s("o", Some("gone")),
        ]);
        assert_eq!(r["c"], "a");
        assert_eq!(r["b"], "a");
        assert_eq!(r["o"], "o");
        assert!(r["x"] == "x" || r["x"] == "y");
    }
}
