//! Example inputs a person recognises.
//!
//! The automata prove a claim with the *shortest* input, which is often unreadable: `edit ""`
//! for a `*` rule, `bash "rm -rf"` for `rm -rf *`, or a word glued from two unrelated
//! patterns. A finding is read by a person, so before it is reported its witness is
//! replaced, when possible, by an input built from the rules' own literals with every `*`
//! filled by ordinary text (`tests/a.ts`, `rm -rf build`, `.env.local`). Every candidate is
//! decided by the real evaluator ([`Ctx::witness`]) and kept only if it shows the same thing
//! as the proven one; the proven witness stays the fallback, so nothing here can make a
//! claim false, only easier to read.

use super::{Ctx, Witness};
use crate::agents::Agent;
use crate::glob::analysis::Input;
use crate::glob::wildcard::{Token, Wildcard};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The candidates of a pattern for a permission ([`fill`] with the permission's fillers,
/// each once, in order) with their [`plausibility`]: text alone, the same for every agent,
/// rule and run, so they are made once ([`super::Engines`] keeps them between runs).
#[derive(Default)]
pub struct Filled(RefCell<HashMap<String, HashMap<String, Candidates>>>);

/// Candidate subjects with their plausibility, in order.
type Candidates = Rc<[(String, i32)]>;

impl Filled {
    pub(super) fn get(&self, permission: &str, pattern: &str) -> Candidates {
        if let Some(known) = self.0.borrow().get(permission).and_then(|m| m.get(pattern)) {
            return known.clone();
        }
        let mut seen = std::collections::HashSet::new();
        let made: Candidates = fill(pattern, fillers(permission))
            .into_iter()
            .filter(|s| seen.insert(s.clone()))
            .map(|s| {
                let score = plausibility(permission, &s);
                (s, score)
            })
            .collect();
        self.0
            .borrow_mut()
            .entry(permission.to_string())
            .or_default()
            .insert(pattern.to_string(), made.clone());
        made
    }

    /// How many patterns are kept.
    pub(super) fn len(&self) -> usize {
        self.0.borrow().values().map(HashMap::len).sum()
    }

    pub(super) fn clear(&self) {
        self.0.borrow_mut().clear();
    }
}

/// The permission whose inputs `permission`'s look like: `edit` for `write` and the
/// other file tools asked as `edit` (a rule written under one is about the files it
/// writes, though OpenCode never asks it).
fn shape(permission: &str) -> &str {
    crate::model::meaning::asked_as(permission)
}

/// Permissions whose inputs are paths.
fn is_path_permission(permission: &str) -> bool {
    matches!(
        shape(permission),
        "read" | "edit" | "glob" | "grep" | "list" | "lsp" | "codesearch"
    )
}

/// What a `*` may stand for, most ordinary first.
fn fillers(permission: &str) -> &'static [&'static str] {
    if is_path_permission(permission) {
        &["", "a.ts", "src/a.ts", "a", "src", "local"]
    } else if permission == "bash" {
        &["", "build", "origin", "x", "run "]
    } else if permission == "external_directory" {
        // OpenCode asks `<dir>/*`, the star literal: `/tmp/*` is filled as itself.
        &["*", "", "example", "x"]
    } else {
        &["", "example", "x"]
    }
}

/// Code extensions: a basename that is only `.ts` reads as a mistake, `.env` does not.
const EXTENSIONS: &[&str] = &[
    "ts", "js", "tsx", "jsx", "py", "rs", "md", "json", "go", "java", "c", "h", "yml", "yaml",
    "toml", "lock", "txt", "sh", "css", "html",
];

/// Inputs everyone recognises for a rule that matches anything (`"*"`): what a reader
/// pictures when told "bash asks" or "edit is denied".
pub fn everyday(permission: &str, pattern: &str) -> &'static [&'static str] {
    // `**` is `*` twice: it matches anything too.
    if pattern.is_empty() || pattern.chars().any(|c| c != '*') {
        return &[];
    }
    match permission {
        "bash" => &["npm test", "make", "ls"],
        "webfetch" => &["https://example.com"],
        p if is_path_permission(p) => &["src/main.ts", "README.md"],
        _ => &[],
    }
}

/// How ordinary an input looks for its permission; higher is better. Only the order of
/// scores matters.
pub fn plausibility(permission: &str, input: &str) -> i32 {
    if input.is_empty() {
        return -100;
    }
    let len = input.chars().count() as i32;
    let mut score = -len / 4;
    // One or two characters say nothing about what the rule is for, except a command
    // (`rm`, `ls`, `cp`; `rm*` is shown as `rm`, not `rmx`).
    if len < 3
        && !(permission == "bash" && len == 2 && input.chars().all(|c| c.is_ascii_lowercase()))
    {
        score -= 4;
    }
    if is_path_permission(permission) {
        if input.starts_with('/') {
            score -= 40;
        }
        if input.contains("//") {
            score -= 20;
        }
        if input.ends_with('/') {
            score -= 15;
        }
        if input.contains(' ') {
            score -= 10;
        }
        let base = input.rsplit('/').next().unwrap_or(input);
        if let Some(ext) = base.strip_prefix('.')
            && EXTENSIONS.contains(&ext)
        {
            score -= 10;
        }
        if base.contains('.') && !base.starts_with('.') {
            score += 1;
        }
        // A name ending in a dot or in a one-letter extension no one uses (`a.env.`,
        // `a.env.a`) reads as filler.
        if let Some((_, ext)) = base.rsplit_once('.')
            && ext.len() <= 1
            && !EXTENSIONS.contains(&ext)
        {
            score -= 4;
        }
        // Three dots in a name that is no dotfile glue fills together (`a.env.a.ts`).
        if !base.starts_with('.') && base.matches('.').count() >= 3 {
            score -= 1;
        }
    } else if permission == "external_directory" {
        // The only subjects OpenCode asks: an absolute directory and a literal `/*`
        // (`Tool.assertExternalDirectory`); `/tmp/` is never asked.
        if !(input.starts_with('/') && input.ends_with("/*")) {
            score -= 50;
        }
        if input.matches('*').count() > 1 {
            score -= 20;
        }
    } else if permission == "bash" {
        let first = input.chars().next().unwrap_or(' ');
        if !(first.is_alphanumeric() || "./_~".contains(first)) {
            score -= 40;
        }
        if input.ends_with(' ') {
            score -= 20;
        }
        if input.contains("  ") {
            score -= 20;
        }
        if CONTROL.iter().any(|c| input.contains(c)) {
            score -= 30;
        }
        // Letters glued to an option or an upper-case word read as a typo.
        if input.as_bytes().windows(3).any(|w| {
            w[0].is_ascii_lowercase()
                && ((w[1] == b'-' && w[2] == b'-')
                    || (w[1].is_ascii_uppercase() && w[2].is_ascii_uppercase()))
        }) {
            score -= 15;
        }
    }
    score
}

/// What separates the commands OpenCode's bash tool asks about one by one (`;`, `&&`,
/// `|`, substitutions…): a checked part never holds one outside quotes, so an input with
/// one is not a command the tool would ask about as such.
const CONTROL: &[&str] = &[";", "&", "|", "`", "$(", "<(", ">(", "\n"];

/// Is the input one a person would take for a real one of its permission? Correlations
/// are reported only with such an input (not `"modprobeDELETE FROM"`).
pub fn is_plausible(permission: &str, input: &str) -> bool {
    if input.is_empty() {
        return false;
    }
    if is_path_permission(permission) {
        !input.starts_with('/') && !input.contains("//")
    } else if permission == "bash" {
        let first = input.chars().next().unwrap_or(' ');
        (first.is_alphanumeric() || "./_~".contains(first))
            && !input.contains("  ")
            && !CONTROL.iter().any(|c| input.contains(c))
    } else {
        true
    }
}

/// Could OpenCode ask `permission` about `input` at all? The bash tool asks a command's
/// text, never empty and never with white space at either end (tree-sitter's node text),
/// and never a `cd` (`cd`, `pushd`, …: the tool checks only their directory);
/// `external_directory` is asked as `/dir/*` only (`Tool.assertExternalDirectory`); the
/// edit tools ask a file's path, never one ending in `/`; read and edit ask the path
/// relative to the worktree (`../…` outside it), never an absolute one.
pub fn is_asked(permission: &str, input: &str) -> bool {
    match shape(permission) {
        "bash" => {
            !input.is_empty()
                && crate::syntax::js::js_trim(input) == input
                && !input
                    .split_whitespace()
                    .next()
                    .is_some_and(|name| crate::shell::split::NO_PATTERN.contains(&name))
        }
        // On Windows the directory has a drive (`F:\CD\x\*`, which the matcher reads as
        // `F:/CD/x/*`): a config written for Windows is judged with it.
        "external_directory" => {
            (input.starts_with('/') && input.ends_with("/*"))
                || (super::needed_allow::windows_absolute(input)
                    && (input.ends_with("/*") || input.ends_with("\\*")))
        }
        "edit" => !input.ends_with('/') && !input.starts_with('/'),
        "read" => !input.starts_with('/'),
        _ => true,
    }
}

/// The inputs OpenCode would ask in place of one it never asks ([`is_asked`]): a command
/// trimmed; a path as the directory holding it or as a directory (`/dir/*`); a
/// directory's file.
fn asked_forms(permission: &str, input: &str) -> Vec<String> {
    let forms = match shape(permission) {
        "bash" => vec![crate::syntax::js::js_trim(input).to_string()],
        "external_directory" if input.starts_with('/') => {
            let dir = input.trim_end_matches(['*', '/']);
            let parent = dir.rsplit_once('/').map_or("", |(d, _)| d);
            if input.ends_with('/') {
                vec![format!("{dir}/*")]
            } else {
                vec![format!("{parent}/*"), format!("{dir}/*")]
            }
        }
        "external_directory" if super::needed_allow::windows_absolute(input) => {
            let dir = input.trim_end_matches(['*', '/', '\\']);
            vec![format!("{dir}\\x\\*"), format!("{dir}\\*")]
        }
        // A word (`example`): a directory of that name outside the project.
        "external_directory" => match input.trim_matches(['/', '*']) {
            "" => vec!["/tmp/*".to_string()],
            word => vec![format!("/tmp/{word}/*")],
        },
        "edit" => vec![format!("{input}file")],
        _ => Vec::new(),
    };
    forms
        .into_iter()
        .filter(|s| is_asked(permission, s))
        .collect()
}

/// A pattern's candidate subjects for a permission, as the checks' examples are built:
/// each `*` filled with that permission's ordinary text (`git push *` → `git push origin`).
pub fn ordinary_fills(permission: &str, pattern: &str) -> Vec<String> {
    fill(pattern, fillers(permission))
}

/// Candidate subjects for a pattern: its literals with each `*` filled from `fillers`
/// (every combination while there are at most three stars, one filler for all beyond).
fn fill(pattern: &str, fillers: &[&str]) -> Vec<String> {
    let w = Wildcard::compile(pattern);
    // `**` is `*` twice: fill it once.
    let mut tokens: Vec<Token> = Vec::with_capacity(w.tokens.len());
    for t in &w.tokens {
        if !(matches!(t, Token::Star) && matches!(tokens.last(), Some(Token::Star))) {
            tokens.push(*t);
        }
    }
    let mut out = Vec::new();
    if w.optional_tail {
        // The tail ` *` may be left out (`rm -rf *` matches `rm -rf`) or filled.
        out.extend(fill_tokens(&tokens, fillers));
        tokens.push(Token::Lit(u16::from(b' ')));
        tokens.push(Token::Star);
    }
    out.extend(fill_tokens(&tokens, fillers));
    out
}

/// [`fill`] over tokens whose runs of stars are already one.
fn fill_tokens(tokens: &[Token], fillers: &[&str]) -> Vec<String> {
    let stars = tokens.iter().filter(|t| matches!(t, Token::Star)).count();
    let combos: Vec<Vec<usize>> = if stars == 0 {
        vec![Vec::new()]
    } else if stars <= 3 {
        let mut all = vec![Vec::new()];
        for _ in 0..stars {
            all = all
                .into_iter()
                .flat_map(|c: Vec<usize>| {
                    (0..fillers.len()).map(move |f| {
                        let mut c = c.clone();
                        c.push(f);
                        c
                    })
                })
                .collect();
        }
        all
    } else {
        (0..fillers.len()).map(|f| vec![f; stars]).collect()
    };
    let mut out = Vec::new();
    for combo in combos {
        let mut units: Vec<u16> = Vec::new();
        let mut k = 0;
        for t in tokens {
            match t {
                Token::Lit(u) => units.push(*u),
                Token::One => units.push(u16::from(b'x')),
                Token::Star => {
                    let f = combo.get(k).and_then(|&f| fillers.get(f)).unwrap_or(&"");
                    units.extend(f.encode_utf16());
                    k += 1;
                }
            }
        }
        if let Ok(s) = String::from_utf16(&units) {
            out.push(s);
        }
    }
    out
}

impl Ctx<'_> {
    /// The most recognisable input built from the patterns of `rules` (indices into the
    /// agent's rules) that `want` accepts once decided, or `fallback` decided if `want`
    /// accepts it; `None` when no candidate shows what is wanted.
    pub fn recognisable(
        &self,
        agent: &Agent,
        rules: &[usize],
        fallback: &Input,
        want: impl Fn(&Witness) -> bool,
    ) -> Option<Witness> {
        let base = self.witness(agent, fallback)?;
        let permission = base.permission.clone();
        for &i in rules {
            if let Some(r) = agent.rules.get(i) {
                for subject in everyday(&permission, &r.pattern) {
                    if let Some(w) = self.witness(agent, &Input::new(&permission, subject))
                        && want(&w)
                    {
                        return Some(w);
                    }
                }
            }
        }
        // An input OpenCode never asks (`"git push origin --delete "`: the bash tool checks
        // a command's text, which never ends in a space) is no witness; its repair (the
        // text trimmed, a path's directory as `external_directory` asks it) may be.
        let base = if is_asked(&permission, &base.input) {
            base
        } else {
            let repaired: Vec<Witness> = asked_forms(&permission, &base.input)
                .iter()
                .filter_map(|s| self.witness(agent, &Input::new(&permission, s)))
                .collect();
            match repaired.iter().position(&want) {
                Some(k) => repaired[k].clone(),
                None => repaired.into_iter().next().unwrap_or(base),
            }
        };
        let mut best = (want(&base) && is_asked(&permission, &base.input))
            .then(|| (plausibility(&permission, &base.input), base.clone()));
        let lists: Vec<_> = rules
            .iter()
            .filter_map(|&i| agent.rules.get(i))
            .map(|r| self.filled.get(&permission, &r.pattern))
            .collect();
        let mut seen = std::collections::HashSet::new();
        for list in &lists {
            for (subject, score) in list.iter() {
                // Each list is without repeats; across lists, a subject is tried once.
                if lists.len() > 1 && !seen.insert(subject.as_str()) {
                    continue;
                }
                if best.as_ref().is_some_and(|(b, _)| b >= score) {
                    continue;
                }
                if let Some(w) = self.witness(agent, &Input::new(&permission, subject))
                    && want(&w)
                    && is_asked(&permission, subject)
                {
                    best = Some((*score, w));
                }
            }
        }
        best.map(|(_, w)| w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_stars_with_ordinary_text() {
        let c = fill("tests/**", fillers("edit"));
        assert!(c.contains(&"tests/a.ts".to_string()));
        let c = fill("rm -rf *", fillers("bash"));
        assert!(c.contains(&"rm -rf build".to_string()));
        assert!(
            c.contains(&"rm -rf".to_string()),
            "the optional tail may be left out"
        );
    }

    #[test]
    fn witnesses_are_inputs_opencode_asks() {
        use super::{asked_forms, is_asked};
        assert!(!is_asked("bash", "git push origin --delete "));
        // The bash tool asks no pattern for `cd`; read and edit ask worktree-relative paths.
        assert!(!is_asked("bash", "cd"));
        assert!(!is_asked("bash", "pushd src"));
        assert!(is_asked("bash", "cdk deploy"));
        assert!(!is_asked("edit", "/home/u/.ssh/config"));
        // A Windows directory, as OpenCode on Windows asks it.
        assert!(is_asked("external_directory", "F:\\CD\\x\\*"));
        assert!(is_asked("external_directory", "F:/CD/x/*"));
        assert!(!is_asked("external_directory", "F:/CD"));
        assert!(!is_asked("read", "/etc/passwd"));
        assert!(is_asked("read", "../../etc/passwd"));
        assert!(!is_asked("bash", ""));
        assert!(is_asked("bash", "git push origin --delete x"));
        assert_eq!(
            asked_forms("bash", "git push origin --delete "),
            ["git push origin --delete"]
        );
        assert!(!is_asked("external_directory", "/tmp/tool-output/.env"));
        assert_eq!(
            asked_forms("external_directory", "/tmp/tool-output/.env"),
            ["/tmp/tool-output/*", "/tmp/tool-output/.env/*"]
        );
        assert_eq!(asked_forms("external_directory", "/tmp/"), ["/tmp/*"]);
        assert_eq!(
            asked_forms("external_directory", "example"),
            ["/tmp/example/*"]
        );
        assert!(!is_asked("edit", "docs/plans/"));
        assert_eq!(asked_forms("edit", "docs/plans/"), ["docs/plans/file"]);
        assert!(asked_forms("bash", "   ").is_empty());
    }

    #[test]
    fn ordinary_inputs_score_higher() {
        assert!(plausibility("edit", "tests/a.ts") > plausibility("edit", "tests/"));
        assert!(plausibility("edit", "a.ts") > plausibility("edit", ""));
        assert!(plausibility("read", ".env") > plausibility("read", ".ts"));
        assert!(plausibility("bash", "rm -rf build") > plausibility("bash", " rm"));
        assert!(!is_plausible("bash", "  x"));
        assert!(!is_plausible("edit", "/etc/passwd"));
        assert!(is_plausible("read", ".env.local"));
    }
}
