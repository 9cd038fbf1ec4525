//! Conformance of `explain read|edit|bash` as a tool call: the `external_directory` ask of
//! a path outside the project, and tools hidden from the agent, against the real OpenCode
//! 1.18.34 tools (`opencode debug agent build --pure --tool read|edit|bash --params …`).
//!
//! `debug agent --tool` makes a deny visible ("…prevents you from using this specific tool
//! call…", exit 1), a hidden tool too ("Tool X is disabled for agent build"), and lets an
//! ask through, so each case compares *denied or not* (and *hidden or not*) with
//! `permaudit explain … --format json`. The configs put `deny` on the one ask that should
//! decide, so a wrong directory pattern, a wrong order of asks or a wrong checked path
//! changes the verdict. Harmless calls only: reads of `/etc/hostname` and of files in the
//! case's own tree, edits whose `oldString` is nowhere (the tool fails after its asks).
//!
//! Setup as `tests/conformance.rs` (`scripts/install-oracle.sh` or OPENCODE_BIN).

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::harness::{self, Scratch, say};
use support::oracle::{self, Located, ToolFate};

/// `{ROOT}` in configs and inputs is the case root (its `proj/` is the worktree).
struct Case {
    config: &'static str,
    tool: &'static str,
    input: &'static str,
}

const OUTSIDE: &str = r#"{"permission":{"read":"allow","edit":"allow","external_directory":{"*":"allow","/etc/*":"deny","{ROOT}/outside/*":"deny"}}}"#;
const RELATIVE: &str =
    r#"{"permission":{"read":{"*":"allow","../*":"deny"},"external_directory":"allow"}}"#;
const HIDDEN: &str = r#"{"permission":{"bash":{"echo *":"allow","*":"deny"},"read":{"a":"allow","*":"deny"},"external_directory":"allow"}}"#;

const CASES: &[Case] = &[
    // The directory of a file, or a directory itself for read (kind "directory").
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "/etc/hostname",
    },
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "/etc",
    },
    Case {
        config: OUTSIDE,
        tool: "edit",
        input: "/etc",
    },
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "../outside/f",
    },
    Case {
        config: OUTSIDE,
        tool: "edit",
        input: "../outside/f",
    },
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "../other/f",
    },
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "{ROOT}/outside",
    },
    Case {
        config: OUTSIDE,
        tool: "edit",
        input: "{ROOT}/outside",
    },
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "{ROOT}/outside/f",
    },
    Case {
        config: OUTSIDE,
        tool: "read",
        input: "{ROOT}/proj/f",
    },
    // The tool's own ask is for the path relative to the worktree.
    Case {
        config: RELATIVE,
        tool: "read",
        input: "../other/f",
    },
    Case {
        config: RELATIVE,
        tool: "read",
        input: "/etc/hostname",
    },
    Case {
        config: RELATIVE,
        tool: "read",
        input: "{ROOT}/proj/f",
    },
    Case {
        config: RELATIVE,
        tool: "read",
        input: "f",
    },
    // Hidden tools: denied whatever the input, even one nothing would be asked for.
    Case {
        config: HIDDEN,
        tool: "bash",
        input: "cd .",
    },
    Case {
        config: HIDDEN,
        tool: "bash",
        input: "echo hi",
    },
    Case {
        config: HIDDEN,
        tool: "read",
        input: "a",
    },
];

fn params(tool: &str, input: &str) -> String {
    match tool {
        "bash" => json!({"command": input, "description": "conformance"}),
        "edit" => json!({"filePath": input, "oldString": "zz-not-there-zz", "newString": "y"}),
        _ => json!({"filePath": input}),
    }
    .to_string()
}

/// OpenCode's verdict: `"hidden"`, `"deny"` or `"not denied"`.
fn oracle_verdict(
    bin: &Path,
    root: &Path,
    env: &[(String, String)],
    c: &Case,
) -> Result<&'static str, String> {
    let input = c.input.replace("{ROOT}", &root.display().to_string());
    let run = oracle::debug_tool(
        bin,
        &root.join("proj"),
        env,
        c.tool,
        &params(c.tool, &input),
    );
    Ok(match oracle::tool_fate(&run, c.tool)? {
        ToolFate::Hidden => "hidden",
        ToolFate::Denied => "deny",
        ToolFate::NotDenied => "not denied",
    })
}

fn permaudit_verdict(
    root: &Path,
    env: &[(String, String)],
    c: &Case,
) -> Result<(&'static str, Value), String> {
    let input = c.input.replace("{ROOT}", &root.display().to_string());
    let v = harness::explain_json(&root.join("proj"), env, c.tool, &input)?;
    let verdict = if v["decided_by"] == "hidden" {
        "hidden"
    } else if v["action"] == "deny" {
        "deny"
    } else {
        "not denied"
    };
    Ok((verdict, v))
}

#[test]
fn file_tools_and_hidden_tools_match_opencode() {
    let bin = match oracle::locate() {
        Located::Found(bin) => bin,
        // Skipped with one printed line, or failed under CI (`tier`).
        Located::Skip => return,
    };
    let scratch = Scratch::new();
    let results = harness::parallel((0..CASES.len()).collect(), |i| {
        let c = &CASES[i];
        let root = scratch.case_root(&format!("tool{i}"));
        harness::git_project(&root, &["home", "managed", "outside", "other"]);
        std::fs::write(root.join("outside/f"), "outside\n").unwrap();
        std::fs::write(root.join("other/f"), "other\n").unwrap();
        std::fs::write(root.join("proj/f"), "inside\n").unwrap();
        let config = c.config.replace("{ROOT}", &root.display().to_string());
        std::fs::write(root.join("proj/opencode.json"), &config).unwrap();
        let env = harness::isolated_env(&root, &scratch.fakebin);
        let theirs = oracle_verdict(&bin, &root, &env, c);
        let ours = permaudit_verdict(&root, &env, c);
        match (theirs, ours) {
            (Ok(t), Ok((o, _))) if t == o => Ok(()),
            (t, o) => Err(format!(
                "{} {:?} under {config}\n  OpenCode: {t:?}\n  permaudit: {o:?}",
                c.tool, c.input
            )),
        }
    });
    let failed: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    say(&format!(
        "tool conformance: {} of {} calls agree with OpenCode",
        CASES.len() - failed.len(),
        CASES.len()
    ));
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
