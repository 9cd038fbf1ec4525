//! One tool call as OpenCode 1.18.34 makes it: the asks it raises, in order, and their
//! decision against one agent's rules. `explain` answers users with it
//! ([`crate::explain::Explainer`]) and the checks test their witnesses with it
//! (`checks/unasked.rs`), so a finding's example and `explain`'s answer come from the same
//! simulation.
//!
//! What the binary does, read from its bundle (`docs/research/D-bash.md` §2,
//! `E-headless-delegation.md` §1) and checked on it (`tests/tool_conformance.rs`,
//! `tests/shell_conformance.rs`):
//!
//! 1. A tool hidden from the agent (`Permission.disabled`: the last rule for its permission
//!    is `* deny`, `agents::hiding_rule`) is never offered to the model: nothing is asked
//!    and the call cannot happen, whatever its input ([`Decider::Hidden`]).
//! 2. `bash` (`ShellTool.ask`): one `external_directory` ask with `<dir>/*` for every
//!    directory its path arguments reach outside the project, then one `bash` ask with
//!    every command part (`shell::split`).
//! 3. `read`/`edit` (`Tool.assertExternalDirectory`): a path outside the project asks
//!    `external_directory` for its directory first, then the tool's permission for the
//!    worktree-relative path (`shell::file`).
//! 4. Anything else: the permission is asked with the input as its one pattern.
//!
//! `Permission.ask` throws at the first denied pattern, external directories first
//! (`shell::decide`). No I/O: the machine's one fact, whether a path is a directory, comes
//! with the [`Env`] the caller passes (the CLI asks the file system; the checks, which see
//! no file system, pass [`assumed_dir`]).

use crate::agents::Decision;
use crate::model::Effect;
use crate::shell::decide::{Decided, decide_asks};
use crate::shell::file::FileRequest;
use crate::shell::{Env, Places, Request, Splitter};

pub use crate::shell::decide::Decider;

/// The asks of one tool call, in OpenCode's order (the hidden tool aside: see [`decide`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asks {
    /// The bash tool's command: its `external_directory` patterns, then its parts.
    Bash(Request),
    /// A file tool's path outside the project (or given absolute): its directory's
    /// `external_directory` ask (when outside), then the tool's permission.
    File(FileRequest),
    /// The permission asked with the input as its one pattern.
    Plain,
}

impl Asks {
    /// The asks `permission`'s tool makes for `input` in `env` (the splitter remembers the
    /// commands it split).
    pub fn of(permission: &str, input: &str, env: &Env<'_>, splitter: &mut Splitter) -> Asks {
        if permission == "bash" {
            return Asks::Bash(splitter.request(input, env));
        }
        match crate::shell::file::request(permission, input, env) {
            Some(req) => Asks::File(req),
            None => Asks::Plain,
        }
    }

    /// The `external_directory` patterns asked first.
    pub fn external(&self) -> &[String] {
        match self {
            Asks::Bash(req) => &req.external_patterns,
            Asks::File(req) => req.external.as_slice(),
            Asks::Plain => &[],
        }
    }
}

/// The decision of a call with these asks for an agent whose rules hide the tool by rule
/// `hiding` (when they do), each pattern decided by `eval(permission, pattern)` (the
/// agent's rules, through whichever evaluator the caller keeps).
pub fn decide(
    asks: &Asks,
    permission: &str,
    input: &str,
    hiding: Option<usize>,
    mut eval: impl FnMut(&str, &str) -> Decision,
) -> Decided {
    if let Some(rule) = hiding {
        return crate::shell::decide::hidden(rule);
    }
    match asks {
        Asks::Bash(req) => decide_asks(&req.external_patterns, "bash", &req.patterns, eval),
        Asks::File(req) => decide_asks(
            req.external.as_slice(),
            permission,
            std::slice::from_ref(&req.pattern),
            eval,
        ),
        Asks::Plain => {
            let d = eval(permission, input);
            Decided {
                external: Vec::new(),
                effect: d.effect,
                bash: vec![d],
                hidden: None,
                decider: Some(Decider::Bash(0)),
            }
        }
    }
}

/// The rule hiding `permission`'s tool from an agent with these rules (`None` for
/// permissions that are no tool, such as `external_directory`).
pub fn hiding_rule(
    rules: &[crate::model::Rule],
    permission: &str,
    platform: crate::glob::Platform,
) -> Option<usize> {
    if crate::agents::NOT_TOOLS.contains(&permission) {
        return None;
    }
    crate::agents::hiding_rule(rules, permission, platform)
}

/// Does the call end at a denied `external_directory` ask, before its own permission is
/// asked? What [`decide`] says when its decider is [`Decider::External`] and denies, with
/// only that first ask decided (the checks ask this of every witness and agent).
pub fn denied_outside(
    asks: &Asks,
    hiding: Option<usize>,
    mut eval: impl FnMut(&str, &str) -> Decision,
) -> bool {
    hiding.is_none()
        && asks
            .external()
            .iter()
            .any(|p| eval("external_directory", p).effect == Effect::Deny)
}

/// "Is this path a directory?" answered without a file system, for the checks: a path
/// ending in `/`, the root, and the project's start directory, worktree and home and their
/// ancestors are directories; anything else is taken for a file (whose directory the
/// tools ask about).
pub fn assumed_dir(places: &Places, p: &str) -> bool {
    let known = [&places.cwd, &places.worktree, &places.home];
    p.ends_with('/')
        || known.iter().any(|k| {
            k.strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || p == "/" || rest.starts_with('/'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::evaluate;
    use crate::glob::Platform;
    use crate::model::{Action, Form, Layer, Rule};

    fn rule(permission: &str, pattern: &str, action: Action) -> Rule {
        Rule::builtin(
            permission,
            pattern,
            action,
            Form::Object,
            Layer::Project,
            "test",
        )
    }

    fn places() -> Places {
        Places {
            cwd: "/p/proj".into(),
            worktree: "/p/proj".into(),
            home: "/home/u".into(),
        }
    }

    /// The call's asks and decision, after checking that [`denied_outside`] says what
    /// [`decide`] does.
    fn call(rules: &[Rule], permission: &str, input: &str) -> (Asks, Decided) {
        let places = places();
        let is_dir = |p: &str| assumed_dir(&places, p);
        let env = places.env(&is_dir);
        let asks = Asks::of(permission, input, &env, &mut Splitter::new());
        let hiding = hiding_rule(rules, permission, Platform::Unix);
        let eval = |perm: &str, pat: &str| evaluate(rules, perm, pat, Platform::Unix);
        let decided = decide(&asks, permission, input, hiding, eval);
        assert_eq!(
            denied_outside(&asks, hiding, eval),
            decided.effect == Effect::Deny && matches!(decided.decider, Some(Decider::External(_)))
        );
        (asks, decided)
    }

    fn outside(rules: &[Rule], permission: &str, input: &str) -> bool {
        let (_, d) = call(rules, permission, input);
        matches!(d.decider, Some(Decider::External(_))) && d.effect == Effect::Deny
    }

    #[test]
    fn bash_asks_outside_directories_first() {
        let rules = [
            rule("bash", "*", Action::Allow),
            rule("external_directory", "/etc/*", Action::Deny),
        ];
        let (asks, _) = call(&rules, "bash", "cat /etc/passwd");
        assert_eq!(asks.external(), ["/etc/*"]);
        assert!(outside(&rules, "bash", "cat /etc/passwd"));
        // The home directory is one: `ls ~` names no outside file, `cat ~/x` asks `~/*`.
        let (asks, d) = call(&rules, "bash", "cat x.env");
        assert!(asks.external().is_empty());
        assert_eq!(
            (d.effect, d.decider),
            (Effect::Allow, Some(Decider::Bash(0)))
        );
    }

    #[test]
    fn a_hidden_tool_is_never_asked() {
        let rules = [
            rule("external_directory", "*", Action::Deny),
            rule("bash", "*", Action::Deny),
        ];
        let (_, d) = call(&rules, "bash", "cat /etc/passwd");
        assert_eq!(d.decider, Some(Decider::Hidden));
        assert!(!outside(&rules, "bash", "cat /etc/passwd"));
    }

    #[test]
    fn file_tools_ask_their_directory_then_the_path() {
        let rules = [
            rule("read", "*", Action::Allow),
            rule("external_directory", "/etc/*", Action::Deny),
        ];
        let (asks, _) = call(&rules, "read", "../../etc/hosts");
        assert_eq!(asks.external(), ["/etc/*"]);
        assert!(outside(&rules, "read", "../../etc/hosts"));
        // Inside the project: the one plain ask.
        let (asks, d) = call(&rules, "read", "src/a.ts");
        assert_eq!(asks, Asks::Plain);
        assert_eq!(
            (d.effect, d.decision().and_then(|x| x.rule)),
            (Effect::Allow, Some(0))
        );
        // The parent of the project is a directory: `read ..` asks `/p/*`.
        let (asks, _) = call(&rules, "read", "..");
        assert_eq!(asks.external(), ["/p/*"]);
    }

    #[test]
    fn assumed_directories() {
        let p = places();
        for dir in ["/", "/p", "/p/proj", "/home", "/home/u", "/tmp/x/"] {
            assert!(assumed_dir(&p, dir), "{dir}");
        }
        for file in ["/p/pro", "/etc/passwd", "/home/u/.ssh"] {
            assert!(!assumed_dir(&p, file), "{file}");
        }
    }
}
