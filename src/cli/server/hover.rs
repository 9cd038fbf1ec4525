//! Hover: on a rule, per agent (grouped when alike) one input it decides or the rule that
//! decides its inputs instead, what its pattern's wildcards mean and what permaudit found
//! there; on a permission key, which tools check it, with what input
//! ([`crate::model::meaning`]).

use super::{State, examples_and_agents, range};
use crate::checks::Finding;
use crate::project::Project;
use crate::source::Loc;
use lsp_types as lt;

impl State {
    pub(super) fn hover(&self, p: &lt::HoverParams) -> Option<lt::Hover> {
        let tp = &p.text_document_position_params;
        let (project, at) = self.locate(&tp.text_document.uri, tp.position)?;
        let inside = |l: &Loc| {
            l.source == at.source && l.span.start <= at.span.start && at.span.start <= l.span.end
        };
        // The rule written here.
        let rule = project
            .agents
            .iter()
            .find_map(|a| a.rules.iter().find(|r| r.loc.as_ref().is_some_and(inside)))
            .cloned();
        let (text, loc) = match rule {
            Some(rule) => {
                let loc = rule.loc?;
                (self.rule_hover(project, &rule, loc), loc)
            }
            None => {
                // A permission key of this file (`"edit": {`, `bash:`).
                let file = project.loaded.sources.get(at.source);
                let (word, span) = key_at(&file.text, at.span.start)?;
                let named =
                    project.agents.iter().flat_map(|a| &a.rules).any(|r| {
                        r.permission == word && r.loc.is_some_and(|l| l.source == at.source)
                    });
                if !named {
                    return None;
                }
                let text = format!(
                    "**permaudit**: permission `{word}`\n\n{}",
                    crate::model::meaning::permission(&word, project.platform)
                );
                (
                    text,
                    Loc {
                        source: at.source,
                        span,
                    },
                )
            }
        };
        Some(lt::Hover {
            contents: lt::HoverContents::Markup(lt::MarkupContent {
                kind: lt::MarkupKind::Markdown,
                value: text,
            }),
            range: Some(range(&project.loaded.sources, loc)),
        })
    }

    /// A rule's hover: per agent (grouped when alike) one input it decides or the rule that
    /// decides its inputs instead, what its pattern means, and what permaudit found there.
    fn rule_hover(&self, project: &Project, rule: &crate::model::Rule, loc: Loc) -> String {
        let mut text = format!(
            "**permaudit**: `{}` {} {}\n",
            rule.permission,
            serde_json::to_string(&rule.pattern).unwrap_or_default(),
            rule.action.effective()
        );
        let ctx = crate::checks::Ctx::reusing(project, &self.engines);
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for (a, agent) in project.agents.iter().enumerate() {
            let Some(i) = agent.rules.iter().position(|r| r.loc == Some(loc)) else {
                continue;
            };
            let line = decides_line(&ctx, a, i);
            match groups.iter_mut().find(|(l, _)| *l == line) {
                Some((_, names)) => names.push(agent.name.clone()),
                None => groups.push((line, vec![agent.name.clone()])),
            }
        }
        let everyone: Vec<&crate::agents::Agent> = project.agents.iter().collect();
        for (line, names) in &groups {
            let who = match crate::report::agent_list(&everyone, names).as_str() {
                "all" => {
                    // Every agent, named (OpenCode's hidden internal ones left out).
                    format!("every agent ({})", not_internal(&project.agents).join(", "))
                }
                some => some.to_string(),
            };
            text.push_str(&format!("\n- {who}: {line}"));
        }
        if rule.form == crate::model::Form::String {
            // The string form (`"bash": "ask"`) is written at its permission key.
            text.push_str(&format!(
                "\n\n{}",
                crate::model::meaning::permission(&rule.permission, project.platform)
            ));
        }
        text.push_str(&format!(
            "\n\n{}",
            crate::model::meaning::pattern(&rule.permission, &rule.pattern)
        ));
        let here: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.loc == Some(loc))
            .collect();
        // Findings elsewhere that name this rule (the catch-all a shadowed deny is
        // overridden by): never "nothing wrong" on a rule a finding is about.
        let listed: Vec<(&Finding, &String)> = self
            .findings
            .iter()
            .filter(|f| f.loc != Some(loc))
            .filter_map(|f| {
                f.related
                    .iter()
                    .find(|(l, _)| *l == loc)
                    .map(|(_, m)| (f, m))
            })
            .collect();
        if here.is_empty() && listed.is_empty() {
            text.push_str("\n\npermaudit finds nothing wrong with this rule.");
        }
        for (f, role) in listed {
            let at = f
                .loc
                .map(|l| project.loaded.sources.position(l).to_string())
                .unwrap_or_default();
            text.push_str(&format!(
                "\n- `{}` at {at} lists this rule ({}): {}",
                f.id,
                crate::report::clean(role),
                crate::report::clean(&f.message)
            ));
        }
        for f in here {
            text.push_str(&format!(
                "\n- `{}`: {}",
                f.id,
                crate::report::clean(&f.message)
            ));
            text.push_str(&examples_and_agents(
                f,
                &everyone,
                (" (", ")"),
                "; agents: ",
            ));
        }
        text
    }
}

/// The names of the agents that are not OpenCode's internal ones, in order.
pub(super) fn not_internal(agents: &[crate::agents::Agent]) -> Vec<&str> {
    agents
        .iter()
        .filter(|a| !a.is_internal())
        .map(|a| a.name.as_str())
        .collect()
}

/// What rule `i` of agent `a` decides, as the analysis `check` runs finds it (its
/// `decides`, memoised in the engines the last check kept): the hover's line and the
/// CodeLens' title are both read from it.
pub(super) enum Decides {
    /// It decides inputs: one, recognisable when one is (`None`: none could be shown).
    Some(Option<crate::checks::Witness>),
    /// Every input it matches is decided by a later rule: one such input and its rule
    /// (`None`: none could be shown).
    Nothing(Option<crate::checks::Witness>),
    /// The search hit permaudit's limits.
    Undetermined,
}

pub(super) fn decides(ctx: &crate::checks::Ctx<'_>, a: usize, i: usize) -> Decides {
    use crate::glob::automaton::Outcome;
    let agent = &ctx.agents[a];
    match ctx.analyses[a].decides(i) {
        Outcome::Witness(input) => Decides::Some(
            ctx.recognisable(agent, &[i], &input, |w| w.rule == Some(i))
                .or_else(|| ctx.witness(agent, &input)),
        ),
        Outcome::Empty => {
            let r = &agent.rules[i];
            let (perm, pat) = (
                crate::glob::Wildcard::compile(&r.permission),
                crate::glob::Wildcard::compile(&r.pattern),
            );
            let input = crate::glob::analysis::Input {
                permission: crate::glob::automaton::shortest_member(&perm),
                subject: crate::glob::automaton::shortest_member(&pat),
            };
            let platform = ctx.project.platform;
            let matched = |w: &crate::checks::Witness| {
                perm.is_match(&w.permission, platform) && pat.is_match(&w.input, platform)
            };
            Decides::Nothing(ctx.recognisable(agent, &[i], &input, matched))
        }
        Outcome::Inconclusive => Decides::Undetermined,
    }
}

/// What rule `i` of agent `a` decides: one input and its answer, or, when every input it
/// matches is decided later, the rule that decides one of them.
fn decides_line(ctx: &crate::checks::Ctx<'_>, a: usize, i: usize) -> String {
    let agent = &ctx.agents[a];
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let by = |w: &crate::checks::Witness| match w.rule {
        Some(k) => format!(
            "{} at {}",
            crate::checks::describe(&agent.rules[k]),
            ctx.place(&agent.rules[k])
        ),
        None => "no rule (OpenCode's default ask)".into(),
    };
    match decides(ctx, a, i) {
        Decides::Some(Some(w)) => format!(
            "decides e.g. {} {} → {}",
            w.permission,
            q(&w.input),
            w.action
        ),
        Decides::Some(None) => "decides some inputs".into(),
        Decides::Nothing(Some(w)) => format!(
            "decides nothing: every input it matches is decided by a later rule (e.g. {} {} → {}, by {})",
            w.permission,
            q(&w.input),
            w.action,
            by(&w)
        ),
        Decides::Nothing(None) => {
            "decides nothing: every input it matches is decided by a later rule".into()
        }
        Decides::Undetermined => "undetermined (the search hit permaudit's limits)".into(),
    }
}

/// The key (a JSON string followed by `:`, or a YAML key) at byte `at`, and its span
/// (quotes included).
fn key_at(text: &str, at: usize) -> Option<(String, crate::source::Span)> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |k| k + 1);
    let end = text[at..].find('\n').map_or(text.len(), |k| at + k);
    let line = &text[start..end];
    let col = at - start;
    // A quoted key: the quotes around the column.
    let mut quotes = Vec::new();
    let mut escaped = false;
    for (k, c) in line.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => quotes.push(k),
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    for pair in quotes.chunks(2) {
        if let [open, close] = *pair
            && open <= col
            && col <= close
            && line[close + 1..].trim_start().starts_with(':')
        {
            let key: String = serde_json::from_str(&line[open..=close]).ok()?;
            return Some((
                key,
                crate::source::Span::new(start + open, start + close + 1),
            ));
        }
    }
    // A YAML key: `  bash: ask`.
    let indent = line.len() - line.trim_start().len();
    let colon = line.find(':')?;
    if col < indent || col > colon {
        return None;
    }
    let key = line[indent..colon]
        .trim()
        .trim_matches(|c| c == '\'' || c == '"');
    (!key.is_empty()).then(|| {
        (
            key.to_string(),
            crate::source::Span::new(start + indent, start + colon),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::key_at;

    #[test]
    fn keys_under_the_cursor() {
        let json = "{\n  \"edit\": {\n    \"src/\\\"x\\\"\": \"deny\"\n  }\n}\n";
        let at = json.find("dit").unwrap();
        assert_eq!(key_at(json, at).map(|k| k.0).as_deref(), Some("edit"));
        let at = json.find("src").unwrap();
        assert_eq!(key_at(json, at).map(|k| k.0).as_deref(), Some("src/\"x\""));
        // A value is no key.
        let at = json.find("deny").unwrap();
        assert_eq!(key_at(json, at), None);
        let yaml = "---\npermission:\n  bash: ask\n---\n";
        let at = yaml.find("ash").unwrap();
        assert_eq!(key_at(yaml, at).map(|k| k.0).as_deref(), Some("bash"));
        assert_eq!(key_at(yaml, yaml.find("ask").unwrap()), None);
        assert_eq!(key_at("", 0), None);
    }
}
