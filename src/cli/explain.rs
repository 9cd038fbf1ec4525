//! `permaudit explain`: decide the arguments, then standard input as it streams in (one
//! input per line, a trailing `\r` kept since OpenCode would check it; or NUL-separated
//! with `-z`). Deciding is `crate::explain`'s, rendering `report::explain`'s; this file reads
//! and writes. Output is buffered and flushed whenever input would block, so both bulk and
//! interactive use work. An input that is not valid UTF-8 is reported on stderr with its
//! number and skipped; the rest is still decided, and the exit code is 2.

use super::{EXIT_OK, EXIT_REFUSED, Format, HeadlessArg, unknown_agent};
use crate::explain::Explainer;
use crate::project::Project;
use crate::report::Style;
use crate::report::explain::Renderer;
use crate::shell::Places;
use std::io::{BufRead, Write};

#[derive(Debug, Clone, clap::Args)]
pub struct ExplainArgs {
    /// The permission checked (read, edit, bash, external_directory, an MCP tool, …).
    pub permission: String,
    /// Inputs exactly as OpenCode checks them (a worktree-relative path, a command, …).
    pub inputs: Vec<String>,
    /// Read inputs from standard input, one per line.
    #[arg(long)]
    pub stdin: bool,
    /// With --stdin: inputs are separated by NUL bytes instead of newlines.
    #[arg(short = 'z', requires = "stdin")]
    pub nul: bool,
    /// The agent (default: build).
    #[arg(long, default_value = "build")]
    pub agent: String,
    /// Read only the project's own OpenCode config: no global, user or managed config and
    /// no OPENCODE_* variables (the same answer on every machine).
    #[arg(long)]
    pub project_only: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also say what a non-interactive `opencode run` makes of the decision: an ask is
    /// rejected (`reject`, the default) or approved once (`auto`, as `run --auto`).
    #[arg(long, value_enum, value_name = "ANSWER", num_args = 0..=1, require_equals = true, default_missing_value = "reject")]
    pub headless: Option<HeadlessArg>,
}

pub fn run(
    project: &Project,
    args: &ExplainArgs,
    style: Style,
    out: &mut dyn Write,
) -> Result<i32, i32> {
    let permission = args.permission.as_str();
    let Some(a) = project.agent(&args.agent) else {
        return Err(unknown_agent(project, &args.agent));
    };
    if !args.stdin && args.inputs.is_empty() {
        eprintln!("error: give at least one INPUT, or --stdin");
        return Err(EXIT_REFUSED);
    }
    // A file tool checked under another name (`write` asks `edit`): the call is what the
    // user asks about, so it is decided as OpenCode decides it, with a word on stderr.
    // Any other permission no tool checks is decided all the same (rules may name it),
    // with a word on stderr, so the JSON on stdout stays as it is.
    let permission = match crate::model::meaning::checked_as(permission) {
        Some(asked) => {
            eprintln!(
                "note: the {permission} tool is checked as `{asked}` (a `{permission}` rule decides nothing): decided as `{asked}`"
            );
            asked
        }
        None => {
            if let Some(why) = crate::checks::unchecked_permission::diagnose(permission) {
                eprintln!("note: {}", crate::report::clean(&why));
            }
            permission
        }
    };
    let mut explainer = Explainer::new(project, a, permission);
    let json = args.format == Format::Json;
    let mode = args.headless.map(Into::into);
    let mut render = Renderer::new(project, a, permission, json, style, mode);
    let places = Places::of(project.loaded.paths());
    let env = places.env(&super::is_dir);
    let mut decide = |input: &str, out: &mut dyn Write| -> std::io::Result<()> {
        let call = explainer.decide(input, &env);
        render.write(out, input, &call)
    };
    for input in &args.inputs {
        if decide(input, out).is_err() {
            return Ok(EXIT_OK); // closed pipe
        }
    }
    if !args.stdin {
        return Ok(EXIT_OK);
    }
    let sep = if args.nul { 0u8 } else { b'\n' };
    let what = if args.nul { "record" } else { "line" };
    let mut reader = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut buf = Vec::new();
    let (mut n, mut bad) = (0u64, 0u64);
    loop {
        if reader.buffer().is_empty() && out.flush().is_err() {
            return Ok(EXIT_OK);
        }
        buf.clear();
        match reader.read_until(sep, &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("error: reading standard input: {e}");
                return Err(EXIT_REFUSED);
            }
        }
        n += 1;
        if buf.last() == Some(&sep) {
            buf.pop();
        }
        match std::str::from_utf8(&buf) {
            Ok(input) => {
                if decide(input, out).is_err() {
                    return Ok(EXIT_OK);
                }
            }
            Err(e) => {
                bad += 1;
                let _ = out.flush();
                eprintln!(
                    "error: standard input {what} {n}: not valid UTF-8 (byte {}); skipped",
                    e.valid_up_to()
                );
            }
        }
    }
    if bad > 0 {
        eprintln!("error: {bad} of {n} inputs were not valid UTF-8 and were not decided");
        return Err(EXIT_REFUSED);
    }
    Ok(EXIT_OK)
}
