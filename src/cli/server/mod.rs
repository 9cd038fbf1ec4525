//! `permaudit server`: a Language Server over stdio.
//!
//! Built on `lsp-server` (rust-analyzer's own transport: synchronous, a message loop and
//! nothing else, no async runtime to carry) and `lsp-types`. Documents are the project's
//! OpenCode config files (`opencode.json(c)` at the root and in `.opencode/`, the global
//! config, agent and mode markdown): every open buffer replaces its file on disk
//! ([`crate::host::Overlay`]) and the whole project is re-loaded and checked after each
//! change, exactly as `check` does (settings and inline ignores honoured); changes that
//! arrive while an analysis runs are applied together and analysed once, and a request
//! cancelled before its turn is answered `RequestCancelled`. Diagnostics are published for
//! every file of the project (cleared when a finding goes); code actions offer the fixes
//! `check --fix` would apply (proven the same way) and an ignore comment; hover on a rule
//! says, per agent (grouped when alike), one input it decides or the rule that decides its
//! inputs instead, what its pattern's wildcards mean and what permaudit found there; hover
//! on a permission key says which tools check it, with what input
//! ([`crate::model::meaning`]).

use super::{Context, EXIT_OK, EXIT_REFUSED};
use crate::checks::{Finding, Level};
use crate::discover::Host;
use crate::host::RealHost;
use crate::project::Project;
use crate::source::{Loc, SourceFile, SourceMap};
use buffers::Buffers;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types as lt;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod buffers;
mod completion;
mod hover;
mod lens;
mod transport;

/// Changes closer together than this are one change: the analysis waits this long after a
/// change for the next (keystrokes arrive 2–30 ms apart from an editor that sends each).
const SETTLE: Duration = Duration::from_millis(15);
/// A run of changes is analysed at the latest this long after its first, however fast
/// they keep coming, and a newer change no longer withholds an analysis' diagnostics.
const MAX_DEFER: Duration = Duration::from_millis(250);
/// How often, when idle, the files the project reads are looked at for changes made
/// outside the editor (`check --fix` in a terminal), for clients that watch no files.
const POLL: Duration = Duration::from_millis(1000);
/// How often when the client watches the config files for the server (what its globs
/// miss: a `{file:}` reference outside them).
const POLL_WATCHED: Duration = Duration::from_millis(5000);
/// The id of the server's `client/registerCapability` request for file watching.
const WATCH_REQUEST: &str = "permaudit/watch";
/// What the server knows between messages.
struct State {
    cwd: PathBuf,
    platform: crate::glob::Platform,
    profile: crate::profile::Profile,
    /// Open buffers by path.
    docs: BTreeMap<PathBuf, String>,
    /// The version of each open buffer (published with its diagnostics).
    versions: BTreeMap<PathBuf, i32>,
    /// The last analysis: the project (`None` when it does not load) and its findings.
    project: Option<Project>,
    findings: Vec<Finding>,
    /// Files diagnostics were last published for (to clear them), and what was published.
    published: BTreeMap<PathBuf, Vec<lt::Diagnostic>>,
    /// The analyses of the last check, reused for rulesets whose shapes did not change.
    engines: crate::checks::Engines,
    /// Every file the last analysis read or looked for (config, `{file:}` references,
    /// settings): a change to any other file re-checks nothing.
    reads: BTreeSet<PathBuf>,
    /// What those files held on disk (size and modification time) when last analysed.
    stamps: BTreeMap<PathBuf, Option<(u64, std::time::SystemTime)>>,
    /// Whether the client agreed to watch the config files for the server.
    watching: bool,
    /// The CodeLenses of each document, computed from the last analysis when first asked.
    lenses: BTreeMap<PathBuf, Vec<lt::CodeLens>>,
    /// The project's commands as `bash` patterns, read when first asked after an analysis.
    commands: Option<Vec<(String, String)>>,
}

pub fn run(ctx: &Context) -> Result<i32, i32> {
    let (conn, io) = match transport::stdio() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("permaudit server: {e}");
            return Err(EXIT_REFUSED);
        }
    };
    let caps = lt::ServerCapabilities {
        text_document_sync: Some(lt::TextDocumentSyncCapability::Kind(
            lt::TextDocumentSyncKind::FULL,
        )),
        hover_provider: Some(lt::HoverProviderCapability::Simple(true)),
        code_action_provider: Some(lt::CodeActionProviderCapability::Simple(true)),
        completion_provider: Some(lt::CompletionOptions {
            trigger_characters: Some(vec!["\"".into()]),
            ..Default::default()
        }),
        code_lens_provider: Some(lt::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        ..Default::default()
    };
    let caps = serde_json::to_value(caps).unwrap_or_default();
    let init = match conn.initialize(caps) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("permaudit server: {e}");
            return Err(EXIT_REFUSED);
        }
    };
    let params: Option<lt::InitializeParams> = serde_json::from_value(init).ok();
    #[allow(deprecated)]
    let root = params
        .as_ref()
        .and_then(|p| {
            p.workspace_folders
                .as_ref()
                .and_then(|f| f.first().map(|f| f.uri.clone()))
                .or_else(|| p.root_uri.clone())
        })
        .and_then(|u| uri_path(&u))
        .unwrap_or_else(|| ctx.cwd.clone());
    // Clients that watch files for the server are asked to (`polling` stays, less often,
    // for what their globs miss: a `{file:}` reference elsewhere).
    let watches = params
        .as_ref()
        .and_then(|p| p.capabilities.workspace.as_ref())
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|d| d.dynamic_registration)
        .unwrap_or(false);
    let mut state = State {
        cwd: root,
        platform: ctx.platform,
        profile: ctx.profile()?,
        docs: BTreeMap::new(),
        versions: BTreeMap::new(),
        project: None,
        findings: Vec::new(),
        published: BTreeMap::new(),
        engines: Default::default(),
        reads: BTreeSet::new(),
        stamps: BTreeMap::new(),
        watching: false,
        lenses: BTreeMap::new(),
        commands: None,
    };
    if watches {
        state.register_watchers(&conn);
    }
    state.analyze(&conn, &mut Queue::default(), None);
    let mut queue = Queue::default();
    // Since when the documents differ from the last analysis (`None`: they do not).
    let mut dirty: Option<Instant> = None;
    let mut last_change = Instant::now();
    let mut last_poll = Instant::now();
    loop {
        let msg = match queue.pop(&conn) {
            Some(m) => Some(m),
            None => {
                let wait = match dirty {
                    Some(_) => SETTLE.saturating_sub(last_change.elapsed()),
                    None => state.poll(),
                };
                match conn.receiver.recv_timeout(wait) {
                    Ok(m) => Some(m),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => None,
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                }
            }
        };
        match msg {
            Some(Message::Request(req)) => {
                if conn.handle_shutdown(&req).unwrap_or(true) {
                    break;
                }
                // A request is answered from the documents as they are now.
                if let Some(since) = dirty
                    && state.analyze(&conn, &mut queue, Some(since))
                {
                    dirty = None;
                }
                let resp = if queue.cancelled.remove(&req.id.to_string()) {
                    Response::new_err(
                        req.id,
                        lsp_server::ErrorCode::RequestCanceled as i32,
                        "cancelled".into(),
                    )
                } else {
                    state.request(req)
                };
                let _ = conn.sender.send(Message::Response(resp));
            }
            Some(Message::Notification(n)) => {
                let changed = state.notification(n);
                if changed {
                    dirty.get_or_insert_with(Instant::now);
                    last_change = Instant::now();
                }
            }
            // The client watches the config files: polling can slow down.
            Some(Message::Response(r))
                if r.id == RequestId::from(WATCH_REQUEST.to_string())
                    && r.response_result.is_ok() =>
            {
                state.watching = true;
            }
            Some(Message::Response(_)) => {}
            None => {}
        }
        if let Some(since) = dirty {
            // Analyse once the changes have settled (nothing queued, none for SETTLE), or
            // when the first of them has waited MAX_DEFER.
            let settled = queue.is_empty(&conn) && last_change.elapsed() >= SETTLE;
            if (settled || since.elapsed() >= MAX_DEFER)
                && state.analyze(&conn, &mut queue, Some(since))
            {
                dirty = None;
            }
        } else if last_poll.elapsed() >= state.poll() {
            last_poll = Instant::now();
            if state.changed_on_disk() {
                dirty = Some(Instant::now());
                last_change = Instant::now() - SETTLE;
            }
        }
    }
    drop(conn);
    io.join();
    Ok(EXIT_OK)
}

/// Where an analysis' time goes, printed to standard error when `PERMAUDIT_SERVER_TIMES`
/// is set (for profiling: `load 12.3 ms, checks 70.1 ms, …`).
struct Times {
    on: bool,
    last: Instant,
    parts: Vec<(&'static str, Duration)>,
}

impl Times {
    fn new() -> Times {
        Times {
            on: std::env::var_os("PERMAUDIT_SERVER_TIMES").is_some(),
            last: Instant::now(),
            parts: Vec::new(),
        }
    }

    fn mark(&mut self, what: &'static str) {
        if self.on {
            self.parts.push((what, self.last.elapsed()));
            self.last = Instant::now();
        }
    }

    fn report(&self) {
        if self.on {
            let parts: Vec<String> = self
                .parts
                .iter()
                .map(|(w, d)| format!("{w} {:.1} ms", d.as_secs_f64() * 1000.0))
                .collect();
            eprintln!("permaudit server: analysis: {}", parts.join(", "));
        }
    }
}

/// Messages already received, not yet handled, and requests cancelled before their turn.
#[derive(Default)]
struct Queue {
    messages: std::collections::VecDeque<Message>,
    cancelled: BTreeSet<String>,
}

impl Queue {
    /// Move everything that has arrived into the queue; a cancellation reaches a request
    /// still waiting its turn.
    fn drain(&mut self, conn: &Connection) {
        while let Ok(m) = conn.receiver.try_recv() {
            if let Message::Notification(c) = &m
                && let Some(id) = cancel_id(c)
                && self
                    .messages
                    .iter()
                    .any(|q| matches!(q, Message::Request(r) if r.id.to_string() == id))
            {
                self.cancelled.insert(id);
            }
            self.messages.push_back(m);
        }
    }

    fn pop(&mut self, conn: &Connection) -> Option<Message> {
        self.drain(conn);
        self.messages.pop_front()
    }

    fn is_empty(&mut self, conn: &Connection) -> bool {
        self.drain(conn);
        self.messages.is_empty()
    }

    /// Whether a document notification waits in the queue (a newer text than the one
    /// being analysed, or one about to be).
    fn has_change(&mut self, conn: &Connection) -> bool {
        use lt::notification::{
            DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument,
            DidOpenTextDocument, Notification as _,
        };
        self.drain(conn);
        self.messages.iter().any(|m| {
            matches!(m, Message::Notification(n) if [
                DidChangeTextDocument::METHOD,
                DidOpenTextDocument::METHOD,
                DidCloseTextDocument::METHOD,
                DidChangeWatchedFiles::METHOD,
            ]
            .contains(&n.method.as_str()))
        })
    }
}

/// The id (as `RequestId` prints it) a `$/cancelRequest` notification cancels.
fn cancel_id(n: &Notification) -> Option<String> {
    use lt::notification::{Cancel, Notification as _};
    if n.method != Cancel::METHOD {
        return None;
    }
    let p: lt::CancelParams = serde_json::from_value(n.params.clone()).ok()?;
    Some(match p.id {
        lt::NumberOrString::Number(k) => RequestId::from(k).to_string(),
        lt::NumberOrString::String(s) => RequestId::from(s).to_string(),
    })
}

/// The path of a `file:` URI (percent-decoded); `None` for any other URI.
/// A notification's parameters and the file of the document they name (`None`: not
/// such parameters, or not a file).
fn document<P: serde::de::DeserializeOwned>(
    params: serde_json::Value,
    uri: fn(&P) -> &lt::Uri,
) -> Option<(P, PathBuf)> {
    let p = serde_json::from_value::<P>(params).ok()?;
    let path = uri_path(uri(&p))?;
    Some((p, path))
}

fn uri_path(uri: &lt::Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = rest
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    let s = String::from_utf8(out).ok()?;
    s.starts_with('/').then(|| PathBuf::from(s))
}

/// The `file:` URI of a path.
fn path_uri(path: &Path) -> Option<lt::Uri> {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

/// An LSP position (UTF-16 columns) of a byte offset.
fn position(file: &SourceFile, offset: usize) -> lt::Position {
    let offset = offset.min(file.text.len());
    let line = file.line_of(offset);
    let start = file.line_start(line);
    let col: usize = file
        .text
        .get(start..offset)
        .map_or(0, |t| t.chars().map(char::len_utf16).sum());
    lt::Position::new(line as u32, col as u32)
}

/// The byte offset of an LSP position (clamped to the text).
fn offset(text: &str, pos: lt::Position) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text.get(line_start..).and_then(|t| t.find('\n')) {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let mut units = 0;
    for (i, c) in text.get(line_start..).unwrap_or("").char_indices() {
        if units >= pos.character as usize || c == '\n' {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

fn range(sources: &SourceMap, loc: Loc) -> lt::Range {
    let f = sources.get(loc.source);
    lt::Range::new(position(f, loc.span.start), position(f, loc.span.end))
}

/// A finding's examples and agents as the editor shows them: each witness as
/// `{before}e.g. PERMISSION "INPUT" → ACTION{after}`, then (when it names agents)
/// `agents` and the agents it is about.
fn examples_and_agents(
    f: &Finding,
    everyone: &[&crate::agents::Agent],
    (before, after): (&str, &str),
    agents: &str,
) -> String {
    let mut s = String::new();
    for w in &f.witnesses {
        s.push_str(&format!(
            "{before}e.g. {} {} → {}{after}",
            w.permission,
            serde_json::to_string(&w.input).unwrap_or_default(),
            w.action
        ));
    }
    if !f.agents.is_empty() {
        s.push_str(&format!(
            "{agents}{}",
            crate::report::agent_list(everyone, &f.agents)
        ));
    }
    s
}

fn diagnostic(project: &Project, f: &Finding, loc: Loc) -> lt::Diagnostic {
    let sources = &project.loaded.sources;
    let mut message = crate::report::clean(&f.message).into_owned();
    let everyone: Vec<&crate::agents::Agent> = project.agents.iter().collect();
    message.push_str(&examples_and_agents(f, &everyone, ("\n", ""), "\nagents: "));
    if let Some(h) = &f.help {
        message.push_str(&format!("\n{}", crate::report::clean(h)));
    }
    let related: Vec<lt::DiagnosticRelatedInformation> = f
        .related
        .iter()
        .filter_map(|(l, m)| {
            let uri = path_uri(sources.get(l.source).path()?)?;
            Some(lt::DiagnosticRelatedInformation {
                location: lt::Location::new(uri, range(sources, *l)),
                message: crate::report::clean(m).into_owned(),
            })
        })
        .collect();
    lt::Diagnostic {
        range: range(sources, loc),
        severity: Some(match f.level {
            Level::Error => lt::DiagnosticSeverity::ERROR,
            Level::Warning => lt::DiagnosticSeverity::WARNING,
            Level::Info => lt::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lt::NumberOrString::String(f.id.to_string())),
        source: Some("permaudit".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

impl State {
    /// Apply a notification; whether it changed what the project reads (a change to a
    /// file that is no config, or to the text the last analysis read, re-checks nothing).
    fn notification(&mut self, n: Notification) -> bool {
        use lt::notification::{
            Cancel, DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument,
            DidOpenTextDocument, DidSaveTextDocument, Notification as _,
        };
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some((p, path)) =
                    document::<lt::DidOpenTextDocumentParams>(n.params, |p| &p.text_document.uri)
                else {
                    return false;
                };
                self.versions.insert(path.clone(), p.text_document.version);
                let before = self.text(&path);
                self.docs.insert(path.clone(), p.text_document.text);
                let cwd = self.cwd.clone();
                self.root_from(&path);
                if self.cwd != cwd {
                    return true;
                }
                // A buffer holding what is on disk changes nothing, unless it was never
                // analysed (its diagnostics are published with its version).
                (before.as_deref() != self.docs.get(&path).map(String::as_str)
                    || !self.published.contains_key(&path))
                    && self.relevant(&path)
            }
            DidChangeTextDocument::METHOD => {
                let Some((p, path)) =
                    document::<lt::DidChangeTextDocumentParams>(n.params, |p| &p.text_document.uri)
                else {
                    return false;
                };
                // Full sync: the last change holds the whole text.
                match p.content_changes.into_iter().last() {
                    Some(c) if c.range.is_none() => {
                        self.versions.insert(path.clone(), p.text_document.version);
                        let old = self.docs.insert(path.clone(), c.text);
                        old.as_ref() != self.docs.get(&path) && self.relevant(&path)
                    }
                    _ => false,
                }
            }
            DidCloseTextDocument::METHOD => {
                let Some((_, path)) =
                    document::<lt::DidCloseTextDocumentParams>(n.params, |p| &p.text_document.uri)
                else {
                    return false;
                };
                self.versions.remove(&path);
                let relevant = self.relevant(&path);
                let Some(text) = self.docs.remove(&path) else {
                    return false;
                };
                relevant && self.text(&path).as_deref() != Some(text.as_str())
            }
            DidChangeWatchedFiles::METHOD => {
                let Ok(p) = serde_json::from_value::<lt::DidChangeWatchedFilesParams>(n.params)
                else {
                    return false;
                };
                p.changes.iter().any(|c| {
                    uri_path(&c.uri)
                        .is_some_and(|path| !self.docs.contains_key(&path) && self.relevant(&path))
                })
            }
            // The buffer already held the saved text.
            DidSaveTextDocument::METHOD => false,
            // Handled where messages are queued (`Queue::drain`).
            Cancel::METHOD => false,
            _ => false,
        }
    }

    /// Ask the client to watch the files OpenCode reads (`client/registerCapability` for
    /// `workspace/didChangeWatchedFiles`): the project's and the global config files,
    /// agents, modes and permaudit's settings. Its answer (a `Response`) turns polling down.
    fn register_watchers(&self, conn: &Connection) {
        let paths = crate::discover::Paths::from_host(&RealHost, &self.cwd);
        let mut watchers = vec![
            serde_json::json!({ "globPattern": "**/{opencode.json,opencode.jsonc}" }),
            serde_json::json!({ "globPattern": "**/.opencode/**/*.{json,jsonc,md}" }),
        ];
        if let Some(base) = path_uri(&paths.config) {
            watchers.push(serde_json::json!({
                "globPattern": { "baseUri": base.as_str(), "pattern": "**/*.{json,jsonc,md}" }
            }));
        }
        let params = serde_json::json!({ "registrations": [{
            "id": "permaudit-config-files",
            "method": "workspace/didChangeWatchedFiles",
            "registerOptions": { "watchers": watchers },
        }]});
        let req = Request::new(
            RequestId::from(WATCH_REQUEST.to_string()),
            "client/registerCapability".to_string(),
            params,
        );
        let _ = conn.sender.send(Message::Request(req));
    }

    /// How long the idle loop waits between looks at the disk.
    fn poll(&self) -> Duration {
        if self.watching { POLL_WATCHED } else { POLL }
    }

    /// A file opened that the project does not read (the editor rooted elsewhere: started
    /// in `/`, a workspace above the repository) roots the server where OpenCode would start
    /// for it: the git worktree holding it, else the project of its `.opencode/`, else its
    /// directory, when OpenCode started there reads it.
    fn root_from(&mut self, path: &Path) {
        if self.relevant(path) {
            return;
        }
        let Some(dir) = path.parent() else { return };
        let host = Buffers::new(&RealHost, &self.docs);
        let worktree = crate::discover::Paths::from_host(&host, dir).worktree;
        let root = if worktree != Path::new("/") {
            worktree
        } else {
            path.ancestors()
                .find(|d| d.file_name().is_some_and(|n| n == ".opencode"))
                .and_then(Path::parent)
                .unwrap_or(dir)
                .to_path_buf()
        };
        if root == self.cwd {
            return;
        }
        let reads = crate::discover::discover(&host, &root)
            .steps
            .iter()
            .any(|s| step_path(s) == Some(path))
            || root.join(crate::settings::CONVENTIONAL_PATH) == path;
        if reads {
            self.cwd = root;
            self.reads.clear();
        }
    }

    /// The text of a file as the editor shows it (its buffer, or the disk).
    fn text(&self, path: &Path) -> Option<String> {
        let host = Buffers::new(&RealHost, &self.docs);
        host.read(path)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Whether the project reads `path`: a file the last analysis read or looked for, or
    /// one discovery finds now (a new agent file, saved or not), or permaudit's settings.
    fn relevant(&self, path: &Path) -> bool {
        if self.reads.contains(path) || path.ends_with(crate::settings::CONVENTIONAL_PATH) {
            return true;
        }
        let host = Buffers::new(&RealHost, &self.docs);
        crate::discover::discover(&host, &self.cwd)
            .steps
            .iter()
            .any(|s| step_path(s) == Some(path))
    }

    /// Whether a file the project reads (and no buffer holds) changed on disk since the
    /// last analysis, or a new one appeared.
    fn changed_on_disk(&self) -> bool {
        let host = Buffers::new(&RealHost, &self.docs);
        let now = watched(&host, &self.cwd, &self.reads, &self.docs);
        now != self.stamps
    }

    /// Load and check the project with the open buffers; publish every file's diagnostics.
    /// With `since` (when the changes began), an analysis that a newer change would
    /// supersede stops before publishing, unless those changes have waited `MAX_DEFER`:
    /// returns whether it published.
    fn analyze(&mut self, conn: &Connection, queue: &mut Queue, since: Option<Instant>) -> bool {
        let superseded = |queue: &mut Queue| {
            since.is_some_and(|t| t.elapsed() < MAX_DEFER) && queue.has_change(conn)
        };
        let host = Buffers::new(&RealHost, &self.docs);
        let mut by_file: BTreeMap<PathBuf, Vec<lt::Diagnostic>> = BTreeMap::new();
        let mut times = Times::new();
        let loaded = Project::load_as(&host, &self.cwd, self.platform, self.profile.clone());
        times.mark("load");
        if superseded(queue) {
            return false;
        }
        let mut reads: BTreeSet<PathBuf> = crate::discover::discover(&host, &self.cwd)
            .steps
            .iter()
            .filter_map(step_path)
            .map(Path::to_path_buf)
            .collect();
        match loaded {
            Ok(mut project) => {
                // Messages name files relative to the project root, as `check` does.
                let root = project.loaded.paths().worktree.clone();
                if root != Path::new("/") {
                    project.loaded.sources.relative_to(&root);
                }
                reads.extend(sources_paths(&project.loaded.sources));
                let findings = match findings(&project, &host, &self.cwd, &self.engines) {
                    Ok(f) => f,
                    Err(e) => {
                        // Broken settings: their error at its place; every other file
                        // keeps its last findings (as `check` refuses to report).
                        if let Some((path, d)) = settings_refusal(e) {
                            reads.insert(path.clone());
                            by_file.entry(path).or_default().push(d);
                        }
                        self.reads = reads;
                        self.stamps = watched(&host, &self.cwd, &self.reads, &self.docs);
                        self.publish(conn, by_file, true);
                        return true;
                    }
                };
                self.engines.settle();
                times.mark("checks");
                if superseded(queue) {
                    return false;
                }
                for f in &findings {
                    let Some(loc) = f.loc else { continue };
                    let Some(path) = project.loaded.sources.get(loc.source).path() else {
                        continue;
                    };
                    by_file
                        .entry(path.to_path_buf())
                        .or_default()
                        .push(diagnostic(&project, f, loc));
                }
                for p in sources_paths(&project.loaded.sources) {
                    by_file.entry(p).or_default();
                }
                if let Some(p) = settings_file(&host, &self.cwd) {
                    reads.insert(p.clone());
                    by_file.entry(p).or_default();
                }
                times.mark("diagnostics");
                self.project = Some(project);
                self.findings = findings;
                self.lenses.clear();
                self.commands = None;
                self.reads = reads;
                self.stamps = watched(&host, &self.cwd, &self.reads, &self.docs);
                times.mark("stamps");
                self.publish(conn, by_file, false);
                times.mark("publish");
                times.report();
            }
            Err(failure) => {
                // A config OpenCode would refuse (often a moment of typing): the refusal at
                // its place; every other file keeps its last findings (no flicker), and
                // hover and code actions answer from the last project that loaded.
                reads.extend(sources_paths(&failure.sources));
                for (loc, message) in
                    crate::report::error::headlines(&failure.sources, &failure.error)
                {
                    if let Some(loc) = loc
                        && let Some(path) = failure.sources.get(loc.source).path()
                    {
                        by_file
                            .entry(path.to_path_buf())
                            .or_default()
                            .push(refused(range(&failure.sources, loc), message.trim()));
                    }
                }
                self.reads = reads;
                self.stamps = watched(&host, &self.cwd, &self.reads, &self.docs);
                self.publish(conn, by_file, true);
            }
        }
        true
    }

    /// Publish `by_file`, and clear what was published for files it leaves out; with
    /// `partial`, files it leaves out keep what they had.
    fn publish(
        &mut self,
        conn: &Connection,
        mut by_file: BTreeMap<PathBuf, Vec<lt::Diagnostic>>,
        partial: bool,
    ) {
        // Files outside the project (the global config, agents and modes, which every
        // project reads) get diagnostics only while open here, refusals always: an editor
        // running a server per project would show them once per server.
        let worktree = crate::discover::Paths::from_host(&RealHost, &self.cwd).worktree;
        let root = if worktree == Path::new("/") {
            &self.cwd
        } else {
            &worktree
        };
        by_file.retain(|p, d| {
            p.starts_with(root) || self.docs.contains_key(p) || d.iter().any(is_refusal)
        });
        if partial {
            // A file whose last diagnostics were a refusal has none now, unless still
            // refused (the refusal moved to another file, or was fixed there).
            for (p, old) in &self.published {
                if !by_file.contains_key(p) && old.iter().any(is_refusal) {
                    let kept = old.iter().filter(|d| !is_refusal(d)).cloned().collect();
                    by_file.insert(p.clone(), kept);
                }
            }
        } else {
            for p in self.published.keys() {
                by_file.entry(p.clone()).or_default();
            }
        }
        for (path, diagnostics) in by_file {
            let before = self.published.get(&path);
            if before.map_or(diagnostics.is_empty(), |d| *d == diagnostics)
                && !self.versions.contains_key(&path)
            {
                continue;
            }
            let Some(uri) = path_uri(&path) else { continue };
            let params = lt::PublishDiagnosticsParams {
                uri,
                diagnostics: diagnostics.clone(),
                version: self.versions.get(&path).copied(),
            };
            if diagnostics.is_empty() {
                self.published.remove(&path);
            } else {
                self.published.insert(path, diagnostics);
            }
            use lt::notification::Notification as _;
            let n = Notification::new(
                lt::notification::PublishDiagnostics::METHOD.to_string(),
                params,
            );
            let _ = conn.sender.send(Message::Notification(n));
        }
    }

    fn request(&mut self, req: Request) -> Response {
        use lt::request::{
            CodeActionRequest, CodeLensRequest, Completion, HoverRequest, Request as _,
        };
        let id: RequestId = req.id.clone();
        let result = match req.method.as_str() {
            HoverRequest::METHOD => serde_json::from_value::<lt::HoverParams>(req.params)
                .ok()
                .map(|p| serde_json::to_value(self.hover(&p)).unwrap_or_default()),
            Completion::METHOD => serde_json::from_value::<lt::CompletionParams>(req.params)
                .ok()
                .map(|p| serde_json::to_value(self.completion(&p)).unwrap_or_default()),
            CodeLensRequest::METHOD => serde_json::from_value::<lt::CodeLensParams>(req.params)
                .ok()
                .map(|p| serde_json::to_value(self.code_lens(&p)).unwrap_or_default()),
            CodeActionRequest::METHOD => serde_json::from_value::<lt::CodeActionParams>(req.params)
                .ok()
                .map(|p| serde_json::to_value(self.code_actions(&p)).unwrap_or_default()),
            _ => {
                return Response::new_err(
                    id,
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("permaudit server does not answer {}", req.method),
                );
            }
        };
        match result {
            Some(v) => Response::new_ok(id, v),
            None => Response::new_err(
                id,
                lsp_server::ErrorCode::InvalidParams as i32,
                "malformed parameters".into(),
            ),
        }
    }

    /// The source of a document in the last analysis, and the byte offset of a position.
    fn locate(&self, uri: &lt::Uri, pos: lt::Position) -> Option<(&Project, Loc)> {
        let project = self.project.as_ref()?;
        let path = uri_path(uri)?;
        let (id, file) = project
            .loaded
            .sources
            .iter()
            .find(|(_, f)| f.path() == Some(path.as_path()))?;
        let at = offset(&file.text, pos);
        Some((
            project,
            Loc {
                source: id,
                span: crate::source::Span::new(at, at),
            },
        ))
    }

    fn code_actions(&self, p: &lt::CodeActionParams) -> Vec<lt::CodeActionOrCommand> {
        let mut out = Vec::new();
        let Some((project, start)) = self.locate(&p.text_document.uri, p.range.start) else {
            return out;
        };
        let file = project.loaded.sources.get(start.source);
        let end = offset(&file.text, p.range.end);
        let touches = |l: &Loc| {
            l.source == start.source && l.span.start <= end && start.span.start <= l.span.end
        };
        let wanted: Vec<usize> = self
            .findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.loc.as_ref().is_some_and(touches))
            .map(|(n, _)| n)
            .collect();
        // A fix is offered at its finding and at the rules the finding lists (each deny a
        // misplaced catch-all overrides); an ignore comment only at the finding.
        let listing: Vec<usize> = self
            .findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.related.iter().any(|(l, _)| touches(l)))
            .map(|(n, _)| n)
            .collect();
        if wanted.is_empty() && listing.is_empty() {
            return out;
        }
        let cwd = self.cwd.clone();
        let (platform, profile) = (self.platform, self.profile.clone());
        let reload = |files: &BTreeMap<PathBuf, String>| {
            let mut all = self.docs.clone();
            all.extend(files.iter().map(|(k, v)| (k.clone(), v.clone())));
            let overlay = Buffers::new(&RealHost, &all);
            Project::load_as(&overlay, &cwd, platform, profile.clone()).ok()
        };
        for fix in crate::fix::proven(project, &self.findings, &reload, Some(&self.cwd)) {
            if !fix
                .repairs
                .iter()
                .any(|n| wanted.contains(n) || listing.contains(n))
            {
                continue;
            }
            let fixed = project.loaded.sources.get(fix.source);
            let Some(path) = fixed.path() else {
                continue;
            };
            let Some(uri) = path_uri(path) else { continue };
            let edits: Vec<lt::TextEdit> = fix
                .edits
                .iter()
                .map(|e| lt::TextEdit {
                    range: lt::Range::new(
                        position(fixed, e.span.start),
                        position(fixed, e.span.end),
                    ),
                    new_text: e.text.clone(),
                })
                .collect();
            out.push(lt::CodeActionOrCommand::CodeAction(lt::CodeAction {
                title: format!("permaudit: {} ({})", fix.title, fix.safety.as_str()),
                kind: Some(lt::CodeActionKind::QUICKFIX),
                edit: Some(lt::WorkspaceEdit {
                    changes: Some(HashMap::from([(uri, edits)])),
                    ..Default::default()
                }),
                is_preferred: Some(fix.safety == crate::fix::Safety::Safe),
                ..Default::default()
            }));
        }
        // The changes the findings' help proposes, proven on this config as `check` proves
        // them (re-loaded with the open buffers, re-checked), for the findings here only.
        let proposals: Vec<crate::fix::suggest::Proposal> =
            crate::fix::suggest::proposals(project, &self.findings)
                .into_iter()
                .filter(|p| wanted.contains(&p.finding))
                .collect();
        if !proposals.is_empty() {
            let check =
                |p: &Project| crate::checks::run_as(p, crate::delegation::RunMode::Interactive);
            let proven =
                crate::fix::suggest::prove(project, &self.findings, proposals, &reload, &check);
            for s in proven.iter().flatten() {
                let target = project.loaded.sources.get(s.source);
                let Some(uri) = target.path().and_then(path_uri) else {
                    continue;
                };
                let edits: Vec<lt::TextEdit> = s
                    .edits
                    .iter()
                    .map(|e| lt::TextEdit {
                        range: lt::Range::new(position(target, e.start), position(target, e.end)),
                        new_text: e.new_text.clone(),
                    })
                    .collect();
                out.push(lt::CodeActionOrCommand::CodeAction(lt::CodeAction {
                    title: format!(
                        "permaudit: {} (proven; changes {})",
                        s.title,
                        s.effect.first().map_or("no decision", String::as_str)
                    ),
                    kind: Some(lt::CodeActionKind::QUICKFIX),
                    edit: Some(lt::WorkspaceEdit {
                        changes: Some(HashMap::from([(uri, edits)])),
                        ..Default::default()
                    }),
                    ..Default::default()
                }));
            }
        }
        // An ignore comment on the line above the finding, for the reason to be written.
        let markdown = file
            .path()
            .and_then(|p| p.extension())
            .is_some_and(|e| e == "md");
        let mut seen = BTreeSet::new();
        for &n in &wanted {
            let f = &self.findings[n];
            let Some(loc) = f.loc else { continue };
            if !seen.insert((f.id, loc.span.start)) {
                continue;
            }
            let line = file.line_of(loc.span.start);
            let line_start = file.line_start(line);
            let indent: String = file.text[line_start..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            let lead = if markdown { "#" } else { "//" };
            let Some(uri) = file.path().and_then(path_uri) else {
                continue;
            };
            let edit = lt::TextEdit {
                range: lt::Range::new(
                    lt::Position::new(line as u32, 0),
                    lt::Position::new(line as u32, 0),
                ),
                new_text: format!(
                    "{indent}{lead} permaudit-ignore[{}]: why this is accepted\n",
                    f.id
                ),
            };
            out.push(lt::CodeActionOrCommand::CodeAction(lt::CodeAction {
                title: format!("permaudit: ignore `{}` here, with a reason", f.id),
                kind: Some(lt::CodeActionKind::QUICKFIX),
                edit: Some(lt::WorkspaceEdit {
                    changes: Some(HashMap::from([(uri, vec![edit])])),
                    ..Default::default()
                }),
                ..Default::default()
            }));
        }
        out
    }
}

/// The findings `check` reports on the project (its settings and inline ignores), or, when
/// permaudit's settings are refused, that refusal (at its place when it has one).
fn findings(
    project: &Project,
    host: &dyn Host,
    cwd: &Path,
    engines: &crate::checks::Engines,
) -> Result<Vec<Finding>, crate::settings::SetupError> {
    crate::audit::for_editor(project, host, cwd, engines)
}

/// permaudit's settings refused, as the diagnostic `check` prints (exit 2) at its place.
fn settings_refusal(e: crate::settings::SetupError) -> Option<(PathBuf, lt::Diagnostic)> {
    use crate::settings::SetupError;
    match e {
        SetupError::Settings { sources, error } => {
            let (loc, message) = crate::report::error::headline(&sources, &error);
            let loc = loc?;
            let path = sources.get(loc.source).path()?.to_path_buf();
            Some((path, refused(range(&sources, loc), message.trim())))
        }
        SetupError::Unreadable {
            what,
            path,
            message,
        } => {
            let at = lt::Position::new(0, 0);
            Some((
                path,
                refused(lt::Range::new(at, at), &format!("{what}: {message}")),
            ))
        }
        SetupError::Baseline(_) => None,
    }
}

/// The diagnostic of a refusal (code `refused`): OpenCode's, or permaudit's for its settings.
fn refused(range: lt::Range, message: &str) -> lt::Diagnostic {
    lt::Diagnostic {
        range,
        severity: Some(lt::DiagnosticSeverity::ERROR),
        code: Some(lt::NumberOrString::String("refused".into())),
        source: Some("permaudit".into()),
        message: crate::report::clean(message).into_owned(),
        ..Default::default()
    }
}

fn is_refusal(d: &lt::Diagnostic) -> bool {
    d.code == Some(lt::NumberOrString::String("refused".into()))
}

/// The file a discovery step reads.
fn step_path(s: &crate::discover::Step) -> Option<&Path> {
    match s {
        crate::discover::Step::File { path, .. } | crate::discover::Step::Markdown { path, .. } => {
            Some(path)
        }
        crate::discover::Step::EnvConfig { .. } => None,
    }
}

fn sources_paths(sources: &SourceMap) -> Vec<PathBuf> {
    sources
        .iter()
        .filter_map(|(_, f)| f.path().map(Path::to_path_buf))
        .collect()
}

/// The settings file `check` would read (the conventional one nearest the start directory).
fn settings_file(host: &dyn Host, cwd: &Path) -> Option<PathBuf> {
    crate::discover::Paths::from_host(host, cwd)
        .up_to_worktree()
        .iter()
        .map(|d| d.join(crate::settings::CONVENTIONAL_PATH))
        .find(|f| host.is_file(f))
}

/// What is on disk, for every file the project reads that no buffer holds and every place
/// a new config file would be found (each config file OpenCode looks for, the settings
/// file, the directories agents and modes are listed from): size and modification time,
/// `None` where nothing is.
fn watched(
    host: &dyn Host,
    cwd: &Path,
    reads: &BTreeSet<PathBuf>,
    docs: &BTreeMap<PathBuf, String>,
) -> BTreeMap<PathBuf, Option<(u64, std::time::SystemTime)>> {
    let d = crate::discover::discover(host, cwd);
    let mut places: BTreeSet<PathBuf> = reads.clone();
    let paths = &d.paths;
    for name in ["config.json", "opencode.json", "opencode.jsonc"] {
        places.insert(paths.config.join(name));
    }
    for dir in paths.up_to_worktree() {
        for name in [
            "opencode.json",
            "opencode.jsonc",
            crate::settings::CONVENTIONAL_PATH,
        ] {
            places.insert(dir.join(name));
        }
        places.insert(dir.join(".opencode"));
    }
    for dir in &d.config_dirs {
        places.insert(dir.clone());
        for sub in ["agent", "agents", "mode", "modes"] {
            places.insert(dir.join(sub));
        }
    }
    // An agent directory's subdirectories are walked too: their listings count.
    for s in &d.steps {
        if let Some(p) = step_path(s).and_then(Path::parent) {
            places.insert(p.to_path_buf());
        }
    }
    places
        .into_iter()
        .filter(|p| !docs.contains_key(p))
        .map(|p| {
            let stamp = std::fs::metadata(&p)
                .ok()
                .and_then(|m| Some((m.len(), m.modified().ok()?)));
            (p, stamp)
        })
        .collect()
}
