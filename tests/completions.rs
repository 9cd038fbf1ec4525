//! `permaudit completions SHELL` and `permaudit man`, as a packager and a user meet them:
//! bash loads the script and completes commands and option values with it; the man page
//! is roff that `groff` reads without a warning and documents every command.

use std::process::{Command, Output};

fn permaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_permaudit"))
        .args(args)
        .output()
        .expect("run permaudit")
}

fn stdout(args: &[&str]) -> String {
    let out = permaudit(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

const COMMANDS: &[&str] = &[
    "check",
    "rule",
    "rules",
    "explain",
    "map",
    "diff",
    "history",
    "suggest",
    "report",
    "completions",
    "man",
];

/// What bash's programmable completion offers for `line` (the cursor at its end), with the
/// script `permaudit completions bash` printed loaded as a user's shell would load it.
fn bash_complete(script: &str, line: &str) -> Vec<String> {
    let words: Vec<&str> = if line.ends_with(' ') {
        line.split_whitespace().chain([""]).collect()
    } else {
        line.split_whitespace().collect()
    };
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let driver = format!(
        "{script}\nCOMP_WORDS=({}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n\
         _permaudit permaudit '{}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        quoted.join(" "),
        words[cword],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(driver)
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_and_option_values() {
    let script = stdout(&["completions", "bash"]);
    assert_eq!(bash_complete(&script, "permaudit ch"), ["check"]);
    assert_eq!(
        bash_complete(&script, "permaudit check --format "),
        ["human", "concise", "json", "sarif", "github"]
    );
    assert_eq!(
        bash_complete(&script, "permaudit check --fail-on w"),
        ["warning"]
    );
    // The shells, and the options that may come first.
    let shells: Vec<String> = bash_complete(&script, "permaudit completions ")
        .into_iter()
        .filter(|w| !w.starts_with('-'))
        .collect();
    assert_eq!(shells, ["bash", "elvish", "fish", "powershell", "zsh"]);
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout(&["completions", shell]);
        for cmd in COMMANDS {
            assert!(script.contains(cmd), "{shell} completions lack `{cmd}`");
        }
    }
    let bad = permaudit(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("possible values: bash"));
}

#[test]
fn completions_and_man_need_no_project() {
    // Generated from the arguments alone: even a start directory that does not exist, or
    // one whose config OpenCode refuses, does not matter.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("opencode.json"), "{ not json").unwrap();
    let d = dir.path().to_str().unwrap();
    assert_eq!(stdout(&["-C", d, "man"]), stdout(&["man"]));
    assert_eq!(
        stdout(&["-C", "/no/such/dir", "completions", "zsh"]),
        stdout(&["completions", "zsh"])
    );
}

#[test]
fn the_man_page_documents_every_command_and_the_exit_codes() {
    let page = stdout(&["man"]);
    assert!(page.contains(".TH permaudit 1"), "{page}");
    assert!(page.is_ascii(), "non-ASCII must be roff escapes");
    for cmd in COMMANDS {
        let heading = format!(".SH \"PERMAUDIT {}\"", cmd.to_uppercase());
        assert!(page.contains(&heading), "no {heading}");
    }
    for needle in [
        "\\-\\-fail\\-on",
        "\\-\\-samples",
        ".SH \"EXIT STATUS\"",
        "permaudit 0",
        "\\[u2026]",
    ] {
        assert!(page.contains(needle), "no {needle:?}");
    }
    // No pointer to per-command pages that are not shipped.
    assert!(!page.contains("permaudit\\-check(1)"));
    // groff, when installed, reads it without a warning (-ww: all warnings; -z: no output).
    if let Ok(out) = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(page.as_bytes())?;
            child.wait_with_output()
        })
    {
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "groff warnings");
    }
}

#[test]
fn help_and_man_page_say_the_exit_codes_of_check_and_diff() {
    let help = stdout(&["--help"]);
    let exit = help
        .split("Exit status:")
        .nth(1)
        .unwrap_or_else(|| panic!("no exit-code section in --help:\n{help}"));
    for needle in ["0  ", "1  ", "2  ", "`diff`", "widened", "--fail-on"] {
        assert!(exit.contains(needle), "no {needle:?} in:\n{exit}");
    }
    let page = stdout(&["man"]);
    let status = page
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .and_then(|s| s.split(".SH").next())
        .unwrap_or_default();
    assert!(
        status.contains("\\fBdiff\\fR found a widened decision"),
        "{status}"
    );
    // The synopsis names -C's value, as the OPTIONS section does.
    let synopsis = page
        .split(".SH SYNOPSIS")
        .nth(1)
        .and_then(|s| s.split(".SH").next())
        .unwrap_or_default();
    assert!(
        synopsis.contains("[\\fB\\-C\\fR \\fIDIR\\fR]"),
        "{synopsis}"
    );
    assert!(!synopsis.contains("\\-C \\fR]"), "{synopsis}");
}

#[test]
fn help_words_are_true() {
    // `--fix` writes configs too: the baseline is not "the only thing permaudit ever writes".
    let check = stdout(&["check", "--help"]);
    assert!(!check.contains("the only thing permaudit ever"), "{check}");
    assert!(
        check.contains("besides the configs `--fix` repairs"),
        "{check}"
    );
    // Where completion files go, as the README puts them, and how zsh finds ~/.zfunc.
    let completions = stdout(&["completions", "--help"]);
    for needle in [
        "~/.local/share/bash-completion/completions/permaudit",
        "~/.zfunc/_permaudit",
        "fpath=(~/.zfunc $fpath)",
        "~/.config/fish/completions/permaudit.fish",
    ] {
        assert!(
            completions.contains(needle),
            "no {needle:?}:\n{completions}"
        );
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    for needle in [
        "> ~/.local/share/bash-completion/completions/permaudit",
        "> ~/.zfunc/_permaudit",
        "fpath=(~/.zfunc $fpath)",
        "> ~/.config/fish/completions/permaudit.fish",
    ] {
        assert!(readme.contains(needle), "README lacks {needle:?}");
    }
}
