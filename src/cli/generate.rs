//! `permaudit completions SHELL` and `permaudit man`: shell completion scripts and the man
//! page, generated from the clap definition in `cli/mod.rs` so they cannot drift from it. The CLI
//! writes them to standard output; packagers redirect it (`permaudit man > permaudit.1`).

use super::{Cli, EXIT_OK, EXIT_REFUSED};
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::{self, Write};

/// The exit code of a generated document written to `out`; a closed pipe (`permaudit man |
/// head`) is not an error.
pub fn written(written: io::Result<()>, out: &mut dyn Write) -> i32 {
    match written.and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            EXIT_REFUSED
        }
    }
}

/// The completion script of `shell` for every command, option and value of `permaudit`.
pub fn completions(shell: Shell, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "permaudit", &mut buf);
    out.write_all(&buf)
}

/// The man page (section 1, roff): clap's page for `permaudit`, then one section per
/// command with its own options, then the exit codes.
pub fn man(out: &mut dyn Write) -> io::Result<()> {
    let cmd = Cli::command();
    let mut page = Vec::new();
    // clap's sections, but its SUBCOMMANDS list would point at pages that do not exist
    // (`permaudit-check(1)`): each command gets a section of this page instead.
    let top = clap_mangen::Man::new(cmd.clone());
    top.render_title(&mut page)?;
    top.render_name_section(&mut page)?;
    let mut synopsis = Vec::new();
    top.render_synopsis_section(&mut synopsis)?;
    page.extend_from_slice(value_names(&cmd, &String::from_utf8_lossy(&synopsis)).as_bytes());
    top.render_description_section(&mut page)?;
    top.render_options_section(&mut page)?;
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        let mut section = Vec::new();
        clap_mangen::Man::new(sub.clone()).render_options_section(&mut section)?;
        let section = String::from_utf8_lossy(&section);
        // Its own `.SH OPTIONS` heading (after roff's preamble) gives way to the command's.
        let body = section
            .split_once(".SH OPTIONS\n")
            .map_or(section.as_ref(), |(_, b)| b);
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|a| roff_text(&a.to_string()))
            .unwrap_or_default();
        write!(
            page,
            ".SH \"PERMAUDIT {}\"\n{about}\n{body}",
            name.to_uppercase()
        )?;
    }
    page.extend_from_slice(EXIT_STATUS.as_bytes());
    top.render_version_section(&mut page)?;
    out.write_all(ascii_roff(&String::from_utf8_lossy(&page)).as_bytes())
}

/// clap_mangen's synopsis names a short option without its value (`[-C ]`): give each
/// short option that takes one its value name (`[-C DIR]`).
fn value_names(cmd: &clap::Command, synopsis: &str) -> String {
    let mut out = synopsis.to_string();
    for arg in cmd.get_arguments() {
        let (Some(short), Some(names)) = (arg.get_short(), arg.get_value_names()) else {
            continue;
        };
        let Some(name) = names.first() else { continue };
        let flag = roff_text(&format!("-{short}"));
        out = out.replace(
            &format!("[\\fB{flag} \\fR]"),
            &format!("[\\fB{flag}\\fR \\fI{name}\\fR]"),
        );
    }
    out
}

/// Non-ASCII characters as roff's `\[uXXXX]` escapes, so that plain `groff -man` (without
/// `preconv`, which `man` runs) reads the page without warnings.
fn ascii_roff(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    for c in page.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success: \fBcheck\fR found nothing at or above \fB\-\-fail\-on\fR, \fBdiff\fR's \fB\-\-fail\-on\fR did not fire.
.TP
\fB1\fR
\fBcheck\fR found something at or above \fB\-\-fail\-on\fR (default \fBerror\fR), or \fBcheck \-\-diff\fR has a fix to show;
\fBdiff\fR found a widened decision, an added agent or an inconclusive part (\fB\-\-fail\-on widened\fR, the default; \fBany\fR: any change).
.TP
\fB2\fR
A configuration OpenCode refuses, a usage error, or input past one of permaudit's limits.
"#;

/// Plain text as one roff paragraph: backslashes and leading dots or quotes escaped.
fn roff_text(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    s.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
