//! `permaudit explain`: one decision per input, in the spirit of `git check-ignore -v`.
//!
//! JSON Lines contract, version 1: one object per input with `agent`, `permission`, `input`,
//! `action` (allow|ask|deny), `rule` (index into the agent's rules, or null), `layer`,
//! `source`, and `overridden` (indices of earlier matching rules).

use super::{Style, source_json};
use crate::agents::{Agent, Decision};
use crate::delegation::RunMode;
use crate::explain::Call;
use crate::project::Project;
use serde_json::json;

pub fn json(
    p: &Project,
    a: &Agent,
    permission: &str,
    input: &str,
    d: &Decision,
) -> serde_json::Value {
    let rule = d.rule.map(|i| &a.rules[i]);
    json!({
        "version": 1,
        "agent": a.name,
        "permission": permission,
        "input": input,
        "action": d.effect,
        "rule": d.rule,
        "configured_action": rule.map(|r| r.action.to_json()),
        "layer": rule.map(|r| r.layer.as_str()),
        "source": source_json(&p.loaded.sources, rule.and_then(|r| r.loc)),
        "overridden": d.overridden,
    })
}

/// `ACTION  AGENT PERMISSION "INPUT"`, the first line of every human decision.
fn headline(
    style: Style,
    effect: crate::model::Effect,
    agent: &str,
    permission: &str,
    input: &str,
) -> String {
    let action = effect.to_string();
    format!(
        "{}{}  {} {} {}\n",
        style.paint_action(&action),
        " ".repeat(5 - action.len()),
        super::clean(agent),
        super::clean(permission),
        serde_json::to_string(input).unwrap_or_default()
    )
}

/// `rule N: permission "pattern" action  [layer] file:line:col` (or the built-in origin).
pub(crate) fn describe(p: &Project, a: &Agent, i: usize) -> String {
    format!("rule {i}: {}", describe_rule(p, a, i))
}

/// [`describe`] without the index, which differs between agents that hold the same rule:
/// `permission "pattern" action  [layer] file:line:col`.
pub(crate) fn describe_rule(p: &Project, a: &Agent, i: usize) -> String {
    let Some(r) = a.rules.get(i) else {
        return String::new();
    };
    let origin = match r.loc {
        Some(l) => p.loaded.sources.position(l).to_string(),
        None => format!("built-in ({})", r.builtin.as_deref().unwrap_or("")),
    };
    format!(
        "{} {} {}  [{}] {origin}",
        super::clean(&r.permission),
        serde_json::to_string(&r.pattern).unwrap_or_default(),
        r.action,
        r.layer
    )
}

pub fn human(
    p: &Project,
    a: &Agent,
    permission: &str,
    input: &str,
    d: &Decision,
    style: Style,
) -> String {
    let mut out = headline(style, d.effect, &a.name, permission, input);
    match d.rule {
        None => out.push_str("       no rule matched: ask (OpenCode's default)\n"),
        Some(i) => {
            out.push_str(&format!("       decided by {}\n", describe(p, a, i)));
            for &o in d.overridden.iter().rev() {
                out.push_str(&style.dim(&format!("       overrides  {}\n", describe(p, a, o))));
            }
        }
    }
    out
}

/// Renders the decisions of one agent and permission (`explain`'s one renderer, every
/// [`Call`] shape, JSON or human, with what a headless run makes of each). Fast for streams:
/// what does not depend on the input (the agent, the permission, each rule's action, layer
/// and source) is rendered once per rule, so a streamed `explain` spends its time deciding,
/// not formatting. The output is byte for byte that of [`json`] and [`human`] (tested
/// below).
pub struct Renderer<'a> {
    p: &'a Project,
    a: &'a Agent,
    permission: &'a str,
    style: Style,
    json: bool,
    /// `--headless`: who answers the asks.
    mode: Option<RunMode>,
    /// `{"version":1,"agent":…,"permission":…,"input":`
    head: String,
    /// Per rule (last: no rule): `,"action":…,"rule":…,"configured_action":…,"layer":…,"source":…,"overridden":`
    tails: Vec<Option<String>>,
    /// Per rule: [`describe`]'s text.
    described: Vec<Option<String>>,
}

impl<'a> Renderer<'a> {
    pub fn new(
        p: &'a Project,
        a: &'a Agent,
        permission: &'a str,
        json: bool,
        style: Style,
        mode: Option<RunMode>,
    ) -> Renderer<'a> {
        let head = format!(
            "{{\"version\":1,\"agent\":{},\"permission\":{},\"input\":",
            serde_json::to_string(&a.name).unwrap_or_default(),
            serde_json::to_string(permission).unwrap_or_default()
        );
        Renderer {
            p,
            a,
            permission,
            style,
            json,
            mode,
            head,
            tails: vec![None; a.rules.len() + 1],
            described: vec![None; a.rules.len()],
        }
    }

    /// `,"action":…,"rule":…,"configured_action":…,"layer":…,"source":…,"overridden":` of a
    /// rule (or of no rule: OpenCode's default ask), rendered once.
    fn tail(&mut self, rule: Option<usize>) -> &str {
        let slot = rule.unwrap_or(self.a.rules.len()).min(self.a.rules.len());
        if self.tails[slot].is_none() {
            let r = rule.and_then(|i| self.a.rules.get(i));
            let effect = r.map_or(crate::model::Effect::Ask, |r| r.action.effective());
            let v = json!({
                "action": effect,
                "rule": rule,
                "configured_action": r.map(|r| r.action.to_json()),
                "layer": r.map(|r| r.layer.as_str()),
                "source": source_json(&self.p.loaded.sources, r.and_then(|r| r.loc)),
            });
            let text = serde_json::to_string(&v).unwrap_or_default();
            // `{…}` → `,…,"overridden":`
            let inner = text
                .strip_prefix('{')
                .and_then(|t| t.strip_suffix('}'))
                .unwrap_or("");
            self.tails[slot] = Some(format!(",{inner},\"overridden\":"));
        }
        self.tails[slot].as_deref().unwrap_or("")
    }

    fn described(&mut self, i: usize) -> &str {
        if self.described.get(i).is_some_and(|d| d.is_none()) {
            self.described[i] = Some(describe(self.p, self.a, i));
        }
        self.described
            .get(i)
            .and_then(|d| d.as_deref())
            .unwrap_or("")
    }

    /// Write the decision of one input, one JSON object a line or the human lines; with a
    /// run mode, also what `opencode run` makes of it (JSON: `"run": {"mode", "action"}`;
    /// human: a line when the decision asks).
    pub fn write(
        &mut self,
        out: &mut dyn std::io::Write,
        input: &str,
        call: &Call<'_>,
    ) -> std::io::Result<()> {
        let effect = call.effect(self.a);
        if !self.json {
            let style = self.style;
            let mut text = match call {
                Call::Rule { rule, overridden } => self.rule_human(input, *rule, overridden),
                Call::Bash { request, decided } => {
                    bash_human(self.answer(input, decided), request, style)
                }
                Call::Tool { request, decided } => {
                    tool_human(self.answer(input, decided), request.as_ref(), style)
                }
            };
            if let Some(mode) = self.mode
                && effect == crate::model::Effect::Ask
            {
                text.push_str(&style.dim(&format!("       headless: {}\n", asked(mode))));
            }
            return out.write_all(text.as_bytes());
        }
        match call {
            Call::Rule { rule, overridden } => {
                out.write_all(self.head.as_bytes())?;
                serde_json::to_writer(&mut *out, input).map_err(std::io::Error::other)?;
                out.write_all(self.tail(*rule).as_bytes())?;
                write_indices(out, overridden)?;
            }
            Call::Bash { request, decided } => self.write_bash(out, input, request, decided)?,
            Call::Tool { request, decided } => {
                let v = tool_json(self.answer(input, decided), request.as_ref());
                let text = serde_json::to_string(&v).unwrap_or_default();
                out.write_all(text.strip_suffix('}').unwrap_or(&text).as_bytes())?;
            }
        }
        if let Some(mode) = self.mode {
            let run = json!({"mode": mode.as_str(), "action": mode.resolve(effect)});
            write!(out, ",\"run\":{run}")?;
        }
        out.write_all(b"}\n")
    }

    /// This agent's answer to `input`, for the renderings of a call decided by several asks.
    fn answer<'x>(
        &'x self,
        input: &'x str,
        decided: &'x crate::shell::decide::Decided,
    ) -> Answer<'x> {
        Answer {
            p: self.p,
            a: self.a,
            permission: self.permission,
            input,
            decided,
        }
    }

    /// [`human`]'s text, each rule described once.
    fn rule_human(&mut self, input: &str, rule: Option<usize>, overridden: &[usize]) -> String {
        let effect = rule
            .and_then(|i| self.a.rules.get(i))
            .map_or(crate::model::Effect::Ask, |r| r.action.effective());
        let mut text = headline(self.style, effect, &self.a.name, self.permission, input);
        match rule {
            None => text.push_str("       no rule matched: ask (OpenCode's default)\n"),
            Some(i) => {
                let d = self.described(i).to_string();
                text.push_str(&format!("       decided by {d}\n"));
                for &o in overridden.iter().rev() {
                    let d = self.described(o).to_string();
                    text.push_str(&self.style.dim(&format!("       overrides  {d}\n")));
                }
            }
        }
        text
    }
}

/// `[1,2]`
fn write_indices(out: &mut dyn std::io::Write, v: &[usize]) -> std::io::Result<()> {
    out.write_all(b"[")?;
    for (k, o) in v.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        write!(out, "{o}")?;
    }
    out.write_all(b"]")
}

impl Renderer<'_> {
    /// One decision's fields, without the leading comma: as [`Renderer::tail`] plus the
    /// overridden rules.
    fn write_decision(
        &mut self,
        out: &mut dyn std::io::Write,
        d: &Decision,
    ) -> std::io::Result<()> {
        if d.rule.is_none() && d.effect != crate::model::Effect::Ask {
            write!(
                out,
                "\"action\":\"{}\",\"rule\":null,\"configured_action\":null,\"layer\":null,\"source\":null,\"overridden\":",
                d.effect
            )?;
        } else {
            let tail = self.tail(d.rule);
            out.write_all(tail.strip_prefix(',').unwrap_or(tail).as_bytes())?;
        }
        write_indices(out, &d.overridden)
    }

    /// `explain bash` JSON for one command, byte for byte [`bash_json`]'s without its closing
    /// brace, with each rule's fields rendered once (for streams).
    fn write_bash(
        &mut self,
        out: &mut dyn std::io::Write,
        input: &str,
        req: &crate::shell::Request,
        d: &crate::shell::decide::Decided,
    ) -> std::io::Result<()> {
        use crate::shell::decide::Decider;
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        out.write_all(self.head.as_bytes())?;
        out.write_all(q(input).as_bytes())?;
        out.write_all(b",")?;
        let none = Decision {
            rule: None,
            effect: d.effect,
            overridden: Vec::new(),
        };
        self.write_decision(out, d.decision().unwrap_or(&none))?;
        out.write_all(match d.decider {
            Some(Decider::External(_)) => {
                b",\"decided_by\":\"external_directory\",\"parts\":[".as_slice()
            }
            Some(Decider::Bash(_)) => b",\"decided_by\":\"bash\",\"parts\":[",
            Some(Decider::Hidden) => b",\"decided_by\":\"hidden\",\"parts\":[",
            None => b",\"decided_by\":null,\"parts\":[",
        })?;
        for (k, part) in req.parts.iter().enumerate() {
            if k > 0 {
                out.write_all(b",")?;
            }
            write!(
                out,
                "{{\"text\":{},\"start\":{},\"end\":{},\"asked\":{},\"always\":{},",
                q(&part.text),
                part.range.0,
                part.range.1,
                part.asked(),
                part.always.as_deref().map_or("null".to_string(), q)
            )?;
            let dec = part
                .asked()
                .then(|| req.patterns.iter().position(|x| *x == part.text))
                .flatten()
                .and_then(|k| d.bash.get(k));
            match dec {
                Some(dec) => self.write_decision(out, dec)?,
                None => out.write_all(b"\"action\":null")?,
            }
            out.write_all(b"}")?;
        }
        out.write_all(b"],\"external_directory\":[")?;
        for (k, (pat, dec)) in req.external_patterns.iter().zip(&d.external).enumerate() {
            if k > 0 {
                out.write_all(b",")?;
            }
            let args = req.arguments_for(pat);
            write!(
                out,
                "{{\"pattern\":{},\"arguments\":{},",
                q(pat),
                serde_json::to_string(&args).unwrap_or_default()
            )?;
            self.write_decision(out, dec)?;
            out.write_all(b"}")?;
        }
        out.write_all(b"]")
    }
}

/// The JSON fields of one decision (`action`, `rule`, `configured_action`, `layer`,
/// `source`, `overridden`), as in the version 1 contract.
fn decision_fields(
    p: &Project,
    a: &Agent,
    d: &Decision,
) -> serde_json::Map<String, serde_json::Value> {
    let rule = d.rule.and_then(|i| a.rules.get(i));
    let mut m = serde_json::Map::new();
    m.insert("action".into(), json!(d.effect));
    m.insert("rule".into(), json!(d.rule));
    m.insert(
        "configured_action".into(),
        rule.map_or(serde_json::Value::Null, |r| r.action.to_json()),
    );
    m.insert("layer".into(), json!(rule.map(|r| r.layer.as_str())));
    m.insert(
        "source".into(),
        source_json(&p.loaded.sources, rule.and_then(|r| r.loc)),
    );
    m.insert("overridden".into(), json!(d.overridden));
    m
}

/// One agent's answer to a call decided by several asks (`explain bash`, a file tool's
/// call): what every rendering of it, JSON or human, reads.
#[derive(Clone, Copy)]
pub struct Answer<'x> {
    pub p: &'x Project,
    pub a: &'x Agent,
    /// `bash`, or the file tool's permission.
    pub permission: &'x str,
    pub input: &'x str,
    pub decided: &'x crate::shell::decide::Decided,
}

/// The version 1 fields of a call decided by several asks: those of the deciding ask
/// (`rule` null when nothing was asked), and `decided_by` (`"external_directory"`, the
/// permission, `"hidden"`, or null when nothing is asked).
fn decided_head(ans: Answer<'_>) -> serde_json::Map<String, serde_json::Value> {
    let Answer {
        p,
        a,
        permission,
        input,
        decided: d,
    } = ans;
    let none = Decision {
        rule: None,
        effect: d.effect,
        overridden: Vec::new(),
    };
    let mut m = serde_json::Map::new();
    m.insert("version".into(), json!(1));
    m.insert("agent".into(), json!(a.name));
    m.insert("permission".into(), json!(permission));
    m.insert("input".into(), json!(input));
    m.extend(decision_fields(p, a, d.decision().unwrap_or(&none)));
    use crate::shell::decide::Decider;
    m.insert(
        "decided_by".into(),
        json!(d.decider.map(|x| match x {
            Decider::External(_) => "external_directory",
            Decider::Bash(_) => permission,
            Decider::Hidden => "hidden",
        })),
    );
    m
}

/// `m` with its `external_directory` asks (pattern, arguments, decision), as an object.
fn with_external<'x>(
    p: &Project,
    a: &Agent,
    mut m: serde_json::Map<String, serde_json::Value>,
    asks: impl Iterator<Item = (&'x str, Option<Vec<&'x str>>, &'x Decision)>,
) -> serde_json::Value {
    let ext: Vec<serde_json::Value> = asks
        .map(|(pat, args, dec)| external_json(p, a, pat, args, dec))
        .collect();
    m.insert("external_directory".into(), json!(ext));
    serde_json::Value::Object(m)
}

/// One `external_directory` ask: `{"pattern",` (`"arguments",`) its decision`}`.
fn external_json(
    p: &Project,
    a: &Agent,
    pattern: &str,
    arguments: Option<Vec<&str>>,
    dec: &Decision,
) -> serde_json::Value {
    let mut o = serde_json::Map::new();
    o.insert("pattern".into(), json!(pattern));
    if let Some(args) = arguments {
        o.insert("arguments".into(), json!(args));
    }
    o.extend(decision_fields(p, a, dec));
    serde_json::Value::Object(o)
}

/// `  ACTION  rule N: …` (or the default ask), the end of one ask's line, then one
/// `overrides  rule M: …` line per earlier matching rule it overrode (latest first).
fn ask_line(p: &Project, a: &Agent, style: Style, out: &mut String, dec: &Decision) {
    let act = dec.effect.to_string();
    out.push_str(&format!(
        "  {}{}",
        style.paint_action(&act),
        " ".repeat(5 - act.len())
    ));
    match dec.rule {
        None => out.push_str("  no rule matched: ask (OpenCode's default)\n"),
        Some(i) => {
            out.push_str(&format!("  {}\n", describe(p, a, i)));
            // What this ask's deciding rule overrode, as `explain edit` shows it: the
            // shadowed rule a user debugging one part is looking for.
            for &o in dec.overridden.iter().rev() {
                out.push_str(
                    &style.dim(&format!("            overrides  {}\n", describe(p, a, o))),
                );
            }
        }
    }
}

/// `explain bash` for one command, JSON: the version 1 fields for the whole command (its
/// outcome and the deciding pattern's rule, `null` when nothing is asked) plus
/// `decided_by` (`"external_directory"`, `"bash"` or null), `parts` (every command node:
/// `text`, `start`/`end` byte offsets, `asked`, `always`, and its decision when asked) and
/// `external_directory` (each `<dir>/*` pattern, the arguments that led to it, and its
/// decision).
pub fn bash_json(ans: Answer<'_>, req: &crate::shell::Request) -> serde_json::Value {
    let Answer {
        p, a, decided: d, ..
    } = ans;
    let mut m = decided_head(ans);
    let parts: Vec<serde_json::Value> = req
        .parts
        .iter()
        .map(|part| {
            let mut o = serde_json::Map::new();
            o.insert("text".into(), json!(part.text));
            o.insert("start".into(), json!(part.range.0));
            o.insert("end".into(), json!(part.range.1));
            o.insert("asked".into(), json!(part.asked()));
            o.insert("always".into(), json!(part.always));
            let k = part
                .asked()
                .then(|| req.patterns.iter().position(|x| *x == part.text))
                .flatten();
            match k.and_then(|k| d.bash.get(k)) {
                Some(dec) => o.extend(decision_fields(p, a, dec)),
                None => {
                    o.insert("action".into(), serde_json::Value::Null);
                }
            }
            serde_json::Value::Object(o)
        })
        .collect();
    m.insert("parts".into(), json!(parts));
    let asks = req.external_patterns.iter().zip(&d.external);
    with_external(
        p,
        a,
        m,
        asks.map(|(pat, dec)| (pat.as_str(), Some(req.arguments_for(pat)), dec)),
    )
}

/// `explain bash` for one command, human: the outcome, then the `external_directory` ask
/// and each part with its decision and "Always" pattern.
pub fn bash_human(ans: Answer<'_>, req: &crate::shell::Request, style: Style) -> String {
    let Answer {
        p, a, decided: d, ..
    } = ans;
    let mut out = match call_headline(ans, style) {
        Ok(out) => out,
        Err(hidden) => return hidden,
    };
    let line = |out: &mut String, dec: &Decision| ask_line(p, a, style, out, dec);
    for (pat, dec) in req.external_patterns.iter().zip(&d.external) {
        out.push_str(&format!(
            "       external_directory {}",
            serde_json::to_string(pat).unwrap_or_default()
        ));
        line(&mut out, dec);
    }
    for part in &req.parts {
        let text = serde_json::to_string(&part.text).unwrap_or_default();
        match &part.always {
            None => out.push_str(&style.dim(&format!(
                "       part {text}  not asked ({})\n",
                part.tokens.first().map_or("no command name", |t| t.as_str())
            ))),
            Some(always) => {
                out.push_str(&format!("       part {text}"));
                let dec = req
                    .patterns
                    .iter()
                    .position(|x| *x == part.text)
                    .and_then(|k| d.bash.get(k));
                match dec {
                    Some(dec) => line(&mut out, dec),
                    None => out.push('\n'),
                }
                // "Always" answers the command's one question and stores every part's
                // pattern (spec §2.3, §2.5); a command allowed or denied outright asks
                // nothing, so nothing would be stored.
                if d.effect == crate::model::Effect::Ask {
                    out.push_str(&style.dim(&format!(
                        "            \"Always\" would allow {}\n",
                        serde_json::to_string(always).unwrap_or_default()
                    )));
                }
            }
        }
    }
    if req.parts.is_empty() {
        out.push_str(&style.dim("       no command: nothing is asked\n"));
    }
    out
}

/// The headline of a call decided by several asks; `Err` when the tool is hidden: the
/// headline and `       the tool is hidden from this agent: rule N …`, all there is to say.
fn call_headline(ans: Answer<'_>, style: Style) -> Result<String, String> {
    let Answer {
        p,
        a,
        permission,
        input,
        decided: d,
    } = ans;
    let mut out = headline(style, d.effect, &a.name, permission, input);
    match d.hidden.as_ref().and_then(|h| h.rule) {
        Some(rule) => {
            out.push_str(&format!(
                "       the tool is hidden from this agent (the model is never offered it): {}\n",
                describe(p, a, rule)
            ));
            Err(out)
        }
        None => Ok(out),
    }
}

/// `explain` of a tool call that is more than one decision (a file tool's path outside
/// the project, or a hidden tool), JSON: the version 1 fields of the deciding ask plus
/// `decided_by` (`"external_directory"`, the permission, or `"hidden"`), `pattern` (what
/// the tool's own permission is asked for; null when hidden) and `external_directory`
/// (the outside directory's `{"pattern",` decision`}`, or none).
pub fn tool_json(
    ans: Answer<'_>,
    req: Option<&crate::shell::file::FileRequest>,
) -> serde_json::Value {
    use crate::shell::decide::Decider;
    let Answer {
        p, a, decided: d, ..
    } = ans;
    let mut m = decided_head(ans);
    let hidden = d.decider == Some(Decider::Hidden);
    m.insert(
        "pattern".into(),
        json!(req.filter(|_| !hidden).map(|r| r.pattern.as_str())),
    );
    let asks = req
        .and_then(|r| r.external.as_ref())
        .into_iter()
        .zip(&d.external);
    with_external(p, a, m, asks.map(|(pat, dec)| (pat.as_str(), None, dec)))
}

/// The human form of [`tool_json`]: the outcome, then the hidden tool, or each ask with
/// its decision.
pub fn tool_human(
    ans: Answer<'_>,
    req: Option<&crate::shell::file::FileRequest>,
    style: Style,
) -> String {
    let Answer {
        p,
        a,
        permission,
        decided: d,
        ..
    } = ans;
    let mut out = match call_headline(ans, style) {
        Ok(out) => out,
        Err(hidden) => return hidden,
    };
    let Some(req) = req else {
        return out;
    };
    let line = |out: &mut String, what: String, dec: &Decision| {
        out.push_str(&format!("       {what}"));
        ask_line(p, a, style, out, dec);
    };
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    if let (Some(pat), Some(dec)) = (&req.external, d.external.first()) {
        line(&mut out, format!("external_directory {}", q(pat)), dec);
        if dec.effect == crate::model::Effect::Deny {
            out.push_str(&style.dim(&format!(
                "       {permission} {}  not asked (the directory ask denies first)\n",
                q(&req.pattern)
            )));
            return out;
        }
    }
    if let Some(dec) = d.bash.first() {
        line(&mut out, format!("{permission} {}", q(&req.pattern)), dec);
    }
    out
}

/// What a non-interactive `opencode run` does with an ask.
fn asked(mode: RunMode) -> &'static str {
    match mode {
        RunMode::Auto => "`opencode run --auto` approves it once: allow, nobody is asked",
        _ => "`opencode run` rejects it (\"auto-rejecting\"): deny",
    }
}
