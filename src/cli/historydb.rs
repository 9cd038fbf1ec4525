//! The recorded history as `history` and `suggest` read it: OpenCode's database found
//! (`--db`, `$OPENCODE_DB`, the data directory), copied into a private directory and read
//! there, the calls filtered, each directory's config loaded and every call decided. A CLI
//! helper, not a command.
//!
//! The user's database is never opened: the database file and its `-wal` and `-shm`
//! companions are copied into a private directory (mode 0700) and the copy is opened, so
//! calls still only in the WAL count and OpenCode's files stay byte-identical (SQLite
//! writes to a database it opens, even read-only: it creates `-wal`/`-shm`, recovers and
//! checkpoints). The query selects inputs, status and error text, never tool outputs.

use super::{Context, EXIT_REFUSED, is_dir};
use crate::discover::Paths;
use crate::history::{self, Filter, Judge, Judged, Now, PartRow, SessionRow};
use crate::host::RealHost;
use crate::project::{Loader, Names, Project};
use crate::shell::Places;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which history: the database and the calls kept (`history` and `suggest` alike).
#[derive(Debug, Clone, clap::Args)]
pub struct Source {
    /// Calls of every project (default: only sessions run in the current directory's
    /// project, its git worktree or the directory itself).
    #[arg(long)]
    pub all_projects: bool,
    /// Only this session and the subagent sessions it started.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only calls made at or after this time: YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS] (UTC).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// The database (default: $OPENCODE_DB, else OpenCode's data directory's
    /// `opencode.db`).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

/// The history read and decided.
pub(super) struct Read {
    pub db: PathBuf,
    pub paths: Paths,
    pub sessions: Vec<SessionRow>,
    pub judged: Vec<Judged>,
    /// Each session directory's project as OpenCode loads it there (`Err`: why not).
    pub projects: BTreeMap<String, Result<Project, String>>,
}

impl Read {
    /// The project each call was decided under (`None`: not decided).
    pub fn under(&self) -> Vec<Option<&Project>> {
        self.judged
            .iter()
            .map(|j| {
                self.projects
                    .get(&j.call.directory)
                    .and_then(|p| p.as_ref().ok())
            })
            .collect()
    }
}

/// The recorded calls `src` keeps, undecided.
pub(super) struct Calls {
    pub db: PathBuf,
    pub paths: Paths,
    pub sessions: Vec<SessionRow>,
    pub calls: Vec<history::ToolCall>,
}

/// Read the history `src` names and decide every call under today's config; exit 2 (said
/// on stderr) when it cannot be read. `redact` hides paths in what is said.
pub(super) fn read_history(ctx: &Context, src: &Source, redact: bool) -> Result<Read, i32> {
    let Calls {
        db,
        paths,
        sessions,
        calls,
    } = read_calls(ctx, src, redact)?;

    // Each call is decided under the config OpenCode reads when it starts in the session's
    // directory, loaded once per directory.
    let mut projects: BTreeMap<String, Result<Project, String>> = BTreeMap::new();
    for c in &calls {
        if projects.contains_key(&c.directory) {
            continue;
        }
        let loaded = load(ctx, Path::new(&c.directory));
        if let Err(why) = &loaded {
            let dir = if redact {
                "…".into()
            } else {
                crate::report::clean(&c.directory)
            };
            eprintln!("note: sessions run in {dir}: {why}");
        }
        projects.insert(c.directory.clone(), loaded);
    }
    let mut judged: Vec<Judged> = Vec::with_capacity(calls.len());
    {
        let mut judges: BTreeMap<&str, (Judge<'_>, Places)> = BTreeMap::new();
        for (dir, p) in &projects {
            if let Ok(p) = p {
                judges.insert(dir.as_str(), (Judge::new(p), Places::of(p.loaded.paths())));
            }
        }
        for call in calls {
            let now = match judges.get_mut(call.directory.as_str()) {
                Some((judge, places)) => {
                    let env = places.env(&is_dir);
                    judge.decide(&call, &env)
                }
                None => Now::Unknown("the config of its directory could not be read".into()),
            };
            judged.push(Judged { call, now });
        }
    }
    Ok(Read {
        db,
        paths,
        sessions,
        judged,
        projects,
    })
}

/// Read the history `src` names: the calls its filters keep; exit 2 (said on stderr) when
/// it cannot be read. `redact` hides paths in what is said.
pub(super) fn read_calls(ctx: &Context, src: &Source, redact: bool) -> Result<Calls, i32> {
    let since = match &src.since {
        Some(s) => Some(history::parse_since(s).ok_or_else(|| {
            eprintln!("error: --since {s:?}: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC)");
            EXIT_REFUSED
        })?),
        None => None,
    };
    let paths = Paths::from_host(&RealHost, &ctx.cwd);
    let db = database_path(src, &paths)?;
    // Older releases kept sessions as JSON files under `<data>/storage/` (beside the
    // database): read too, each session the database does not hold (OpenCode's own
    // migration copied them there once).
    let legacy = db
        .parent()
        .map(|d| d.join("storage"))
        .filter(|d| d.join("session").is_dir());
    let (mut sessions, mut parts) = match read(&db) {
        Ok(rows) => rows,
        Err(_) if legacy.is_some() && !db.exists() => (Vec::new(), Vec::new()),
        Err(e) => {
            eprintln!("error: {}: {e}", db.display());
            return Err(EXIT_REFUSED);
        }
    };
    if let Some(dir) = &legacy {
        let known: std::collections::BTreeSet<String> =
            sessions.iter().map(|s| s.id.clone()).collect();
        let old = read_legacy(dir, &known);
        if old.sessions.len() + old.skipped > 0 {
            let shown = if redact {
                "…".into()
            } else {
                dir.display().to_string()
            };
            eprintln!(
                "note: {shown} (the JSON storage of an older OpenCode release): {} session{} read{}",
                old.sessions.len(),
                if old.sessions.len() == 1 { "" } else { "s" },
                if old.skipped > 0 {
                    format!(
                        ", {} file{} left out (not JSON, too large, or past {LEGACY_FILES} files)",
                        old.skipped,
                        if old.skipped == 1 { "" } else { "s" }
                    )
                } else {
                    String::new()
                }
            );
        }
        sessions.extend(old.sessions);
        parts.extend(old.parts);
    }
    let filter = Filter {
        project: (!src.all_projects && src.session.is_none())
            .then(|| paths.project_root().to_string_lossy().into_owned()),
        session: src.session.clone(),
        since,
    };
    if let Some(id) = &src.session {
        if !sessions.iter().any(|s| &s.id == id) {
            eprintln!("error: no session `{id}` in {}", db.display());
            return Err(EXIT_REFUSED);
        }
    }
    let calls = history::calls(&sessions, &parts, &filter);
    Ok(Calls {
        db,
        paths,
        sessions,
        calls,
    })
}

/// `--db`, else `$OPENCODE_DB` (an absolute path, or one relative to the data directory, as
/// OpenCode 1.18.34 reads it), else `<data>/opencode.db`.
fn database_path(args: &Source, paths: &Paths) -> Result<PathBuf, i32> {
    if let Some(p) = &args.db {
        return Ok(p.clone());
    }
    match std::env::var_os("OPENCODE_DB") {
        Some(v) if v == ":memory:" => {
            eprintln!("error: OPENCODE_DB is `:memory:`: OpenCode keeps no history on disk");
            Err(EXIT_REFUSED)
        }
        Some(v) if !v.is_empty() => {
            let p = PathBuf::from(v);
            Ok(if p.is_absolute() {
                p
            } else {
                paths.data.join(p)
            })
        }
        _ => Ok(paths.data.join("opencode.db")),
    }
}

/// The project OpenCode would load starting in `dir`.
pub(super) fn load(ctx: &Context, dir: &Path) -> Result<Project, String> {
    if !dir.is_absolute() {
        return Err("not an absolute directory: its calls are not decided".into());
    }
    if !dir.is_dir() {
        return Err("the directory is gone: its calls are not decided".into());
    }
    let paths = Paths::from_host(&RealHost, dir);
    loader_for(ctx, dir, paths.project_root())?
        .load()
        .map_err(|f| {
            eprint!("{}", crate::report::error::render(&f, ctx.err_style));
            "OpenCode refuses its config: its calls are not decided".to_string()
        })
}

/// The `Loader` OpenCode's start in `dir` amounts to (files named relative to `root`).
pub(super) fn loader_for<'a>(
    ctx: &Context,
    dir: &'a Path,
    root: &'a Path,
) -> Result<Loader<'a>, String> {
    Ok(Loader {
        host: &RealHost,
        cwd: dir,
        platform: ctx.platform,
        profile: ctx
            .profile()
            .map_err(|_| "unknown --opencode-version".to_string())?,
        names: Names {
            root: Some(root),
            tilde: true,
        },
    })
}

/// The most files of the JSON storage read, and the largest (a part file holds the tool's
/// output too: read whole, only its input kept).
const LEGACY_FILES: usize = 2_000_000;
const LEGACY_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What the JSON storage held.
#[derive(Default)]
struct Legacy {
    sessions: Vec<SessionRow>,
    parts: Vec<PartRow>,
    /// Files left out: not JSON, too large, past [`LEGACY_FILES`].
    skipped: usize,
}

/// The JSON session storage of older releases, in the layout OpenCode's own JSON → SQLite
/// migration (`storage/json-migration.ts`) reads: `session/<project>/<session>.json`
/// (`parentID`, `directory`, `permission`), `message/<session>/<message>.json` (`agent`,
/// or the older `mode`), `part/<message>/<part>.json` (a part as the database's
/// `part.data` holds it: `type`, `tool`, `callID`, `state`); ids come from the file names.
/// Sessions `known` (already in the database) are left out.
fn read_legacy(dir: &Path, known: &std::collections::BTreeSet<String>) -> Legacy {
    let mut out = Legacy::default();
    let mut budget = LEGACY_FILES;
    // (parent directory name, file stem, JSON) of each `*/*.json` under `sub`.
    let mut each = |sub: &str,
                    out: &mut Legacy,
                    f: &mut dyn FnMut(&str, &str, serde_json::Value)| {
        let Ok(groups) = std::fs::read_dir(dir.join(sub)) else {
            return;
        };
        let mut groups: Vec<PathBuf> = groups.filter_map(|e| e.ok().map(|e| e.path())).collect();
        groups.sort();
        for g in groups.iter().filter(|g| g.is_dir()) {
            let Ok(files) = std::fs::read_dir(g) else {
                continue;
            };
            let mut files: Vec<PathBuf> = files.filter_map(|e| e.ok().map(|e| e.path())).collect();
            files.sort();
            for file in files
                .iter()
                .filter(|f| f.extension().is_some_and(|e| e == "json"))
            {
                if budget == 0 {
                    out.skipped += 1;
                    continue;
                }
                budget -= 1;
                let small = std::fs::metadata(file)
                    .is_ok_and(|m| m.is_file() && m.len() <= LEGACY_FILE_BYTES);
                let value = small
                    .then(|| std::fs::read(file).ok())
                    .flatten()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
                let (Some(v), Some(parent), Some(stem)) = (
                    value,
                    g.file_name().and_then(|n| n.to_str()),
                    file.file_stem().and_then(|n| n.to_str()),
                ) else {
                    out.skipped += 1;
                    continue;
                };
                f(parent, stem, v);
            }
        }
    };
    let text =
        |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let mut sessions: Vec<SessionRow> = Vec::new();
    each("session", &mut out, &mut |_, id, v| {
        if known.contains(id) {
            return;
        }
        sessions.push(SessionRow {
            id: id.to_string(),
            parent_id: text(&v, "parentID"),
            directory: text(&v, "directory").unwrap_or_default(),
            agent: text(&v, "agent"),
            permission: v
                .get("permission")
                .filter(|p| !p.is_null())
                .map(|p| p.to_string()),
        });
    });
    let ids: std::collections::BTreeSet<String> = sessions.iter().map(|s| s.id.clone()).collect();
    // Each message's session and agent.
    let mut messages: BTreeMap<String, (String, Option<String>)> = BTreeMap::new();
    each("message", &mut out, &mut |session, id, v| {
        if ids.contains(session) {
            let agent = text(&v, "agent").or_else(|| text(&v, "mode"));
            messages.insert(id.to_string(), (session.to_string(), agent));
        }
    });
    let mut parts: Vec<PartRow> = Vec::new();
    each("part", &mut out, &mut |message, id, v| {
        let Some((session, agent)) = messages.get(message) else {
            return;
        };
        if v.get("type").and_then(|t| t.as_str()) != Some("tool") {
            return;
        }
        let state = v.get("state");
        let s = |k: &str| state.and_then(|st| text(st, k));
        let time = state
            .and_then(|st| st.get("time"))
            .and_then(|t| t.get("start"))
            .or_else(|| v.get("time").and_then(|t| t.get("created")))
            .and_then(|t| t.as_i64())
            .unwrap_or(0);
        parts.push(PartRow {
            id: id.to_string(),
            session_id: session.clone(),
            message_id: message.to_string(),
            time_created: time,
            tool: text(&v, "tool"),
            call_id: text(&v, "callID"),
            status: s("status"),
            input: state.and_then(|st| st.get("input")).map(|i| i.to_string()),
            error: s("error"),
            message_agent: agent.clone(),
        });
    });
    out.sessions = sessions;
    out.parts = parts;
    out
}

/// A private directory removed when dropped.
struct Private(PathBuf);

impl Private {
    fn new() -> std::io::Result<Private> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for n in 0..100u32 {
            let p = base.join(format!(
                "permaudit-history-{}-{nanos}-{n}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => return Ok(Private(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no free temporary directory name"))
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How many times the files are copied while a running OpenCode keeps writing them.
const COPY_ATTEMPTS: usize = 5;

/// The database's sessions and tool parts, read from a private copy.
pub(super) fn read(db: &Path) -> Result<(Vec<SessionRow>, Vec<PartRow>), String> {
    let meta = std::fs::metadata(db).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            "no OpenCode database here (set OPENCODE_DB or pass --db)".to_string()
        }
        _ => e.to_string(),
    })?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    let dir = Private::new().map_err(|e| format!("cannot make a private copy: {e}"))?;
    let copy = dir.0.join("opencode.db");
    // A running OpenCode may write (or checkpoint) between the copies of the three files:
    // copied again until no file changed while it was copied (at most a few times).
    let files: Vec<(PathBuf, PathBuf)> = ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut from = db.as_os_str().to_owned();
            from.push(suffix);
            (
                PathBuf::from(from),
                dir.0.join(format!("opencode.db{suffix}")),
            )
        })
        .collect();
    let stamp = || -> Vec<Option<(u64, Option<std::time::SystemTime>)>> {
        files
            .iter()
            .map(|(f, _)| {
                std::fs::metadata(f)
                    .ok()
                    .map(|m| (m.len(), m.modified().ok()))
            })
            .collect()
    };
    for attempt in 0..COPY_ATTEMPTS {
        let before = stamp();
        for (from, to) in &files {
            let _ = std::fs::remove_file(to);
            if from == db || from.is_file() {
                std::fs::copy(from, to)
                    .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
            }
        }
        if stamp() == before {
            break;
        }
        if attempt + 1 == COPY_ATTEMPTS {
            eprintln!("note: the database kept changing while it was copied; read as last copied");
        }
    }
    query(&copy).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
            "not an SQLite database".to_string()
        }
        e => format!("not an OpenCode 1.18.34 database: {e}"),
    })
}

fn query(copy: &Path) -> rusqlite::Result<(Vec<SessionRow>, Vec<PartRow>)> {
    use rusqlite::OpenFlags;
    // Read-write on the private copy: SQLite needs to write the copy's `-shm` to read its
    // WAL.
    let conn = rusqlite::Connection::open_with_flags(
        copy,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // `permission` (the session's own rules, which mark `opencode run`'s sessions) where
    // the table has it.
    let has_permission = conn
        .prepare("SELECT 1 FROM pragma_table_info('session') WHERE name = 'permission'")?
        .exists([])?;
    let mut st = conn.prepare(if has_permission {
        "SELECT id, parent_id, directory, agent, permission FROM session"
    } else {
        "SELECT id, parent_id, directory, agent, NULL FROM session"
    })?;
    let sessions = st
        .query_map([], |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                parent_id: r.get(1)?,
                directory: r.get(2)?,
                agent: r.get(3)?,
                permission: r.get::<_, Option<String>>(4).ok().flatten(),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // Tool parts only, and only what the history needs: a row whose data is not JSON is
    // left out rather than failing the query (json_extract raises on it).
    let mut st = conn.prepare(
        "SELECT p.id, p.session_id, p.message_id, p.time_created,
                json_extract(p.data, '$.tool'), json_extract(p.data, '$.callID'),
                json_extract(p.data, '$.state.status'),
                json_quote(json_extract(p.data, '$.state.input')),
                json_extract(p.data, '$.state.error'),
                (SELECT CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.agent') END
                   FROM message m WHERE m.id = p.message_id)
           FROM part p
          WHERE json_valid(p.data) AND json_extract(p.data, '$.type') = 'tool'",
    )?;
    let text = |r: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<Option<String>> {
        Ok(match r.get_ref(i)? {
            rusqlite::types::ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            rusqlite::types::ValueRef::Null => None,
            rusqlite::types::ValueRef::Integer(n) => Some(n.to_string()),
            rusqlite::types::ValueRef::Real(x) => Some(x.to_string()),
            rusqlite::types::ValueRef::Blob(_) => None,
        })
    };
    let parts = st
        .query_map([], |r| {
            Ok(PartRow {
                id: text(r, 0)?.unwrap_or_default(),
                session_id: text(r, 1)?.unwrap_or_default(),
                message_id: text(r, 2)?.unwrap_or_default(),
                time_created: r.get::<_, Option<i64>>(3).ok().flatten().unwrap_or(0),
                tool: text(r, 4)?,
                call_id: text(r, 5)?,
                status: text(r, 6)?,
                input: text(r, 7)?,
                error: text(r, 8)?,
                message_agent: text(r, 9)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((sessions, parts))
}
