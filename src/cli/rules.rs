//! `permaudit rules`: each agent's merged ruleset with provenance.

use super::{EXIT_OK, Format, select_agents};
use crate::project::Project;
use crate::report::{self, Style};
use std::io::Write;

#[derive(Debug, Clone, clap::Args)]
pub struct RulesArgs {
    /// Only this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Read only the project's own OpenCode config: no global, user or managed config and
    /// no OPENCODE_* variables (the same answer on every machine).
    #[arg(long)]
    pub project_only: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(
    project: &Project,
    args: &RulesArgs,
    style: Style,
    out: &mut dyn Write,
) -> Result<i32, i32> {
    let agents = select_agents(project, args.agent.as_deref())?;
    match args.format {
        Format::Json => {
            let v = match agents.as_slice() {
                [a] if args.agent.is_some() => report::rules::agent_json(project, a),
                _ => report::rules::json_all(project),
            };
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            );
        }
        Format::Human => {
            // Without `--agent`, OpenCode's internal agents are folded into one line (the
            // JSON keeps every agent, the contract).
            let (shown, folded): (Vec<_>, Vec<_>) = agents
                .into_iter()
                .partition(|a| args.agent.is_some() || !a.is_internal());
            let names: Vec<&str> = folded.iter().map(|a| a.name.as_str()).collect();
            let _ = write!(out, "{}", report::rules::human(project, &shown, style));
            if !names.is_empty() {
                let _ = write!(out, "\n{}", report::folded_line(&names));
            }
        }
    }
    Ok(EXIT_OK)
}
