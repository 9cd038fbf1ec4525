// Prints the results of scripts/bench.sh (JSON lines) as tables, ratios side by side, and
// checks the targets of issue 4. Exit 1 when the two sides' decisions disagree.
import { readFileSync } from "node:fs";

const rows = readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const find = (f) => rows.find(f);
const fmt = (n, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const ns = (r) => (r.seconds * 1e9) / r.inputs;
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
let failed = false;
const target = (ok, text) => {
  console.log(`  ${ok ? "met    " : "NOT MET"}  ${text}`);
};

// 1. Decisions.
const pa = find((r) => r.bench === "decisions" && r.engine === "permaudit-compiled" && r.inputs);
const meta = find((r) => r.bench === "decisions" && r.engine === "permaudit-compiled" && r.rules);
const cli = find((r) => r.bench === "decisions" && r.engine === "permaudit-cli-explain");
const once = find((r) => r.engine === "node-once");
const rebuild = find((r) => r.engine === "node-rebuild");
console.log(`\ndecisions: ${fmt(pa.inputs)} paths, agent build, permission edit, ${fmt(meta.rules)} rules (${fmt(meta.rules_for_permission)} apply to edit)`);
console.log(`  ${pad("engine", 52)}${lpad("inputs", 11)}${lpad("ns/decision", 14)}${lpad("vs compiled", 13)}${lpad("vs CLI", 11)}`);
const line = (name, r, n) => {
  const v = ns(r);
  const ratio = (x) => (r === pa || r === cli ? "" : `${fmt(v / x)}×`);
  console.log(`  ${pad(name, 52)}${lpad(fmt(r.inputs), 11)}${lpad(fmt(v, 1), 14)}${lpad(ratio(ns(pa)), 13)}${lpad(ratio(ns(cli)), 11)}`);
};
line("permaudit compiled evaluator (library, 1 thread)", pa);
line("permaudit explain --stdin -z --format json (process)", cli);
if (once) line(`node, RegExp built once (every ${once.step}th input)`, once);
if (rebuild) line(`node, RegExp per rule per check (every ${rebuild.step}th)`, rebuild);
for (const n of [once, rebuild].filter(Boolean)) {
  const mine = find((r) => r.sample_step === n.step);
  const same = mine && mine.checksum === n.checksum && mine.allow === n.allow && mine.deny === n.deny;
  console.log(`  checksum on every ${n.step}th input: permaudit ${mine?.checksum} node ${n.checksum} ${same ? "(equal)" : "MISMATCH"}`);
  if (!same) failed = true;
}
console.log(`  compile: ${fmt(meta.compile_seconds * 1e3, 2)} ms; DFA states built: ${fmt(meta.states_built)}; cache clears: ${meta.cache_clears}`);

// 2. Start-up.
const st = find((r) => r.engine === "permaudit-check");
const oc = find((r) => r.engine === "opencode-debug-config");
console.log(`\nstart-up (median wall time)`);
console.log(`  permaudit check                       ${lpad(fmt(st.seconds * 1e3, 1), 9)} ms`);
if (oc) console.log(`  opencode debug config --pure          ${lpad(fmt(oc.seconds * 1e3, 1), 9)} ms   (${fmt(oc.seconds / st.seconds, 1)}× permaudit)`);
else console.log(`  opencode debug config --pure          skipped (no oracle)`);

// 3. Growth.
const gr = rows.filter((r) => r.bench === "growth-rules");
const counts = [...new Set(gr.map((r) => r.rules))].sort((a, b) => a - b);
if (counts.length) {
  console.log(`\ngrowth in rules (config with N generated rules)`);
  console.log(`  ${pad("rules", 8)}${lpad("check s", 10)}${lpad("s/rule", 10)}${lpad("map s", 9)}${lpad("decision ns", 13)}`);
  for (const n of counts) {
    const c = gr.find((r) => r.rules === n && r.engine === "check");
    const m = gr.find((r) => r.rules === n && r.engine === "map");
    const d = gr.find((r) => r.rules === n && r.engine === "permaudit-compiled");
    const timedOut = c && c.seconds >= c.timeout;
    console.log(
      `  ${pad(fmt(n), 8)}${lpad(timedOut ? `>${c.timeout}` : fmt(c.seconds, 3), 10)}${lpad(timedOut ? "" : fmt((c.seconds / n) * 1e3, 3) + "ms", 10)}` +
        `${lpad(m ? fmt(m.seconds, 3) : "", 9)}${lpad(d ? fmt(ns(d), 1) : "", 13)}`,
    );
  }
  if (gr.find((r) => r.engine === "map")) console.log(`  (map on ${fmt(gr.find((r) => r.engine === "map").files)} files; decisions on 200,000 paths)`);
}
const gf = rows.filter((r) => r.bench === "growth-files");
if (gf.length) {
  console.log(`\ngrowth in files (map, ${fmt(gf[0].rules)}-rule config, all agents, read and edit)`);
  console.log(`  ${pad("files", 11)}${lpad("human s", 9)}${lpad("RSS MiB", 9)}${lpad("json s", 9)}${lpad("RSS MiB", 9)}`);
  for (const n of [...new Set(gf.map((r) => r.files))]) {
    const h = gf.find((r) => r.files === n && r.engine === "map-human");
    const j = gf.find((r) => r.files === n && r.engine === "map-json");
    console.log(`  ${pad(fmt(n), 11)}${lpad(fmt(h.seconds, 2), 9)}${lpad(fmt(h.max_rss_kb / 1024), 9)}${lpad(fmt(j.seconds, 2), 9)}${lpad(fmt(j.max_rss_kb / 1024), 9)}`);
  }
}

if (pa.inputs < 1000000) process.exit(failed ? 1 : 0); // --smoke: sizes too small to judge
console.log(`\ntargets (issue 4)`);
if (once) target(ns(once) / ns(pa) >= 100, `decisions ≥100× node with RegExps built once: ${fmt(ns(once) / ns(pa))}×`);
if (rebuild) target(ns(rebuild) / ns(pa) >= 1000, `decisions ≥1,000× node rebuilding per check: ${fmt(ns(rebuild) / ns(pa))}×`);
const big = gf.find((r) => r.files === 1000000 && r.engine === "map-human");
if (big) target(big.seconds < 10 && big.max_rss_kb < 1024 * 1024, `map on 1M files under 10 s and 1 GiB: ${fmt(big.seconds, 2)} s, ${fmt(big.max_rss_kb / 1024)} MiB`);
process.exit(failed ? 1 : 0);
