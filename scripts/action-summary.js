// The job summary and step outputs of the GitHub Action (scripts/action.sh) from
// `permaudit check --format json` (versions 1 and 2: `agent` became `agents`):
//   node action-summary.js REPORT WORKSPACE EXIT_CODE FAIL_ON GITHUB_OUTPUT|'' SUMMARY_FILE|''
// Findings reported once per agent are one row with their agents; paths are relative to
// the workspace; the table stops at 200 rows (a summary holds at most 1 MiB).
"use strict";
const fs = require("fs");
const path = require("path");

const [reportFile, workspace, exitCode, failOn, outputFile, summaryFile] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(reportFile, "utf8"));
if (report.version !== 1 && report.version !== 2) {
  throw new Error(`permaudit JSON report version ${report.version}; this summary reads versions 1 and 2`);
}
const { error, warning, info } = report.summary;

if (outputFile) {
  fs.appendFileSync(outputFile, `errors=${error}\nwarnings=${warning}\nnotes=${info}\n`);
}
if (!summaryFile) process.exit(0);

const MAX_ROWS = 200;
// Markdown in a table cell: pipes and newlines escaped everywhere, emphasis characters
// outside `code spans` (a rule like "**" must not start bold text).
const cell = (s) =>
  String(s)
    .replace(/\r?\n/g, " ")
    .split("`")
    .map((part, i) => (i % 2 === 0 ? part.replace(/[\\*_<>\[\]]/g, "\\$&") : part))
    .join("`")
    .replace(/\|/g, "\\|");
// Messages name files by absolute path; in the summary they are relative to the workspace.
const relative = (s) => s.split(workspace.replace(/\/$/, "") + "/").join("");
const where = (src) => {
  if (!src) return "";
  const rel = path.relative(workspace, src.path);
  const shown = rel.startsWith("..") ? src.path : rel;
  return `${shown}:${src.line}:${src.column}`;
};

const rows = new Map();
for (const f of report.findings) {
  const key = [f.id, where(f.source), f.message].join("\u0000");
  const row = rows.get(key) || { f, agents: [] };
  for (const a of f.agents || (f.agent ? [f.agent] : [])) {
    if (!row.agents.includes(a)) row.agents.push(a);
  }
  rows.set(key, row);
}
const icon = { error: "❌ error", warning: "⚠️ warning", info: "ℹ️ info" };
const verdict =
  exitCode === "0"
    ? `✅ nothing at or above \`${failOn}\``
    : exitCode === "1"
      ? `❌ findings at or above \`${failOn}\` (exit 1)`
      : `exit ${exitCode}`;

const out = [];
out.push("## permaudit", "");
// "1 error", "2 errors": counts read as a sentence.
const count = (n, one) => `**${n}** ${one}${n === 1 ? "" : "s"}`;
out.push(`${verdict} · ${count(error, "error")}, ${count(warning, "warning")}, ${count(info, "note")}`, "");
const failed = (report.samples || []).filter((s) => s.ok === false);
if ((report.samples || []).length > 0) {
  out.push(`Samples: ${report.samples.length} decided, ${failed.length} not as expected.`, "");
}
if (rows.size > 0) {
  out.push("| level | kind | where | agents | finding |", "|---|---|---|---|---|");
  let n = 0;
  for (const { f, agents } of rows.values()) {
    if (n++ === MAX_ROWS) {
      out.push("", `… and ${rows.size - MAX_ROWS} more: see the log or the SARIF.`);
      break;
    }
    out.push(
      `| ${icon[f.level] || f.level} | \`${f.id}\` | ${cell(where(f.source))} | ${cell(agents.join(", "))} | ${cell(relative(f.message))} |`
    );
  }
  out.push("", "`permaudit rule KIND` explains each kind and how to fix it.");
}
fs.appendFileSync(summaryFile, out.join("\n") + "\n");
