//! The one process permaudit runs: `git` (`map` lists files with it, `diff` reads
//! revisions and the index with it).

use std::path::Path;
use std::process::{Command, Stdio};

/// What becomes of git's own complaints.
#[derive(Clone, Copy)]
pub enum Stderr {
    /// Shown to the user as git prints them; a failure says only the exit status.
    Inherit,
    /// Kept, and carried in the error.
    Capture,
}

/// Run `git -C root ARGS`; its stdout, or what went wrong.
pub fn run(root: &Path, args: &[&str], stderr: Stderr) -> Result<Vec<u8>, String> {
    let o = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stderr(match stderr {
            Stderr::Inherit => Stdio::inherit(),
            Stderr::Capture => Stdio::piped(),
        })
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !o.status.success() {
        return Err(match stderr {
            Stderr::Inherit => format!("git {} failed ({})", args_name(args), o.status),
            Stderr::Capture => {
                let msg = String::from_utf8_lossy(&o.stderr).trim().to_string();
                format!("git {}: {msg}", args.join(" "))
            }
        });
    }
    Ok(o.stdout)
}

/// The subcommand a failure names (`ls-files`), past the `-c name=value` options.
fn args_name<'a>(args: &[&'a str]) -> &'a str {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "-c" {
            it.next();
        } else {
            return a;
        }
    }
    ""
}
