// OpenCode 1.18.34's decision algorithm in Node.js, as spec §1–2 describes it, for the
// decision benchmark of scripts/bench.sh.
//
//   node opencode.mjs rebuild RULES.json INPUTS [STEP]   a RegExp built per rule per check
//   node opencode.mjs once    RULES.json INPUTS [STEP]   every RegExp built once
//   node opencode.mjs each    RULES.json INPUTS          as `once`, printing each decision
//                                                        (the deciding index, -1: none)
//
// PERMISSION (default edit) is the permission checked; FLAGS (default "s", the linux
// build) the RegExp flags: "si" is a Windows build (spec §1.7).
//
// RULES.json is `permaudit rules --agent A --format json` (the agent's merged ruleset);
// INPUTS is NUL-separated. Prints one line of JSON: inputs decided, seconds, and a checksum
// of the decisions (the sum of deciding rule index + 1, and allow/ask/deny counts) that
// the permaudit side prints too.
import { readFileSync } from "node:fs";

const FLAGS = process.env.FLAGS || "s";

// Wildcard.match, exactly as spec §1 gives it (flags "s": the linux build).
function match(str, pattern) {
  if (str) str = str.replaceAll("\\", "/");
  if (pattern) pattern = pattern.replaceAll("\\", "/");
  let escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  if (escaped.endsWith(" .*")) escaped = escaped.slice(0, -3) + "( .*)?";
  return new RegExp("^" + escaped + "$", FLAGS).test(str);
}

function compile(pattern) {
  if (pattern) pattern = pattern.replaceAll("\\", "/");
  let escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  if (escaped.endsWith(" .*")) escaped = escaped.slice(0, -3) + "( .*)?";
  return new RegExp("^" + escaped + "$", FLAGS);
}

const [mode, rulesFile, inputsFile, stepArg] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(rulesFile, "utf8"));
const rules = doc.rules.map((r) => ({ permission: r.permission, pattern: r.pattern, action: r.action }));
const permission = process.env.PERMISSION || "edit";
let inputs = readFileSync(inputsFile, "utf8").split("\0");
if (inputs.length && inputs[inputs.length - 1] === "") inputs.pop();
// STEP: decide every STEP-th input only (the per-check rebuild is too slow for a million).
if (stepArg && Number(stepArg) > 1) inputs = inputs.filter((_, i) => i % Number(stepArg) === 0);

let evaluate;
if (mode === "rebuild") {
  // Permission.evaluate: findLast over rules matching permission and pattern.
  evaluate = (input) => {
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i];
      if (match(permission, r.permission) && match(input, r.pattern)) return i;
    }
    return -1;
  };
} else if (mode === "once" || mode === "each") {
  const compiled = rules.map((r) => ({ perm: compile(r.permission), pat: compile(r.pattern) }));
  const perm = permission.replaceAll("\\", "/");
  evaluate = (input) => {
    const s = input ? input.replaceAll("\\", "/") : input;
    for (let i = compiled.length - 1; i >= 0; i--) {
      const c = compiled[i];
      if (c.perm.test(perm) && c.pat.test(s)) return i;
    }
    return -1;
  };
} else {
  process.stderr.write("usage: opencode.mjs rebuild|once RULES.json INPUTS [STEP]\n");
  process.exit(2);
}

if (mode === "each") {
  process.stdout.write(inputs.map((s) => evaluate(s)).join("\n") + "\n");
  process.exit(0);
}

const t0 = process.hrtime.bigint();
let sum = 0n;
const counts = { allow: 0, ask: 0, deny: 0 };
for (const input of inputs) {
  const i = evaluate(input);
  sum += BigInt(i + 1);
  const a = i < 0 ? "ask" : rules[i].action;
  counts[a === "allow" || a === "deny" ? a : "ask"]++;
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(JSON.stringify({ inputs: inputs.length, seconds: secs, checksum: sum.toString(), ...counts }) + "\n");
