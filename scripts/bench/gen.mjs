// Deterministic generators for scripts/bench.sh (seeded; same output on every machine).
//
//   node gen.mjs config N        opencode.json with N user rules (60% edit, 25% read, 15% bash)
//   node gen.mjs paths N [SEED]  N distinct repository paths, NUL-separated, sorted (bytes)
//   node gen.mjs index N [SEED]  the same paths as `git update-index --index-info -z` records
//
// The rules have the shapes real configs use: directory denies, extension asks, generated
// and vendored trees, secrets, command prefixes. The paths are a monorepo-like tree; about
// one in five is decided by a specific rule, the rest fall through to the defaults, which is
// what makes OpenCode's findLast walk the whole ruleset.

const mulberry32 = (a) => () => {
  a |= 0; a = (a + 0x6d2b79f5) | 0;
  let t = Math.imul(a ^ (a >>> 15), 1 | a);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const ACTIONS = ["allow", "ask", "deny"];

export function config(n) {
  const edit = {}, read = {}, bash = {};
  for (let i = 0; i < n; i++) {
    const a = ACTIONS[i % 3];
    const k = i % 20;
    if (k < 12) {
      const shapes = [
        `src/m${i % 200}/gen${i}/*`,
        `*.g${i}.ts`,
        `packages/p${i % 50}/src/f${i}*`,
        `docs/d${i}/*.md`,
        `*/vendor${i}/*`,
        `tests/t${i}/**`,
        `lib/?${i}*`,
      ];
      edit[shapes[i % shapes.length]] = a;
    } else if (k < 17) {
      const shapes = [`*.env.s${i}`, `secrets/k${i}/*`, `config/c${i}.json`, `src/m${i % 200}/key${i}.pem`];
      read[shapes[i % shapes.length]] = a;
    } else {
      const shapes = [`git c${i} *`, `npm run s${i}*`, `rm -rf d${i}*`];
      bash[shapes[i % shapes.length]] = a;
    }
  }
  return { $schema: "https://opencode.ai/config.json", permission: { read, edit, bash } };
}

// A path that the edit rule of index i (as `config` numbers them) decides.
function targeted(i, f) {
  switch (i % 7) {
    case 0: return `src/m${i % 200}/gen${i}/${f}`;
    case 1: return `src/m${i % 200}/d0/${f.replace(/\.[a-z]+$/, "")}.g${i}.ts`;
    case 2: return `packages/p${i % 50}/src/f${i}_${f}`;
    case 3: return `docs/d${i}/${f.replace(/\.[a-z]+$/, "")}.md`;
    case 4: return `lib/vendor${i}/${f}`;
    case 5: return `tests/t${i}/${f}`;
    default: return `lib/x${i}${f}`;
  }
}

export function paths(n, seed = 7, rules = 1000) {
  const r = mulberry32(seed);
  const pick = (k) => Math.floor(r() * k);
  const exts = ["ts", "tsx", "rs", "md", "json", "js", "py", "go"];
  const out = new Set();
  let i = 0;
  while (out.size < n) {
    i++;
    const f = `f${i}.${exts[pick(exts.length)]}`;
    let p;
    // One path in five is aimed at a specific edit rule (the rest fall through to the
    // defaults): a quarter of those miss it by the rule's own design (e.g. `tests/t1/**`
    // does not take `tests/t1`), which the generator does not avoid.
    if (pick(5) === 0) {
      let k = pick(rules);
      while (k % 20 >= 12) k = pick(rules);
      p = targeted(k, f);
    } else {
      switch (pick(10)) {
        case 0: p = `src/m${pick(200)}/gen${pick(2000)}/${f}`; break;
        case 1: p = `packages/p${pick(50)}/src/f${pick(3000)}_${i}.ts`; break;
        case 2: p = `docs/d${pick(3000)}/page${i}.md`; break;
        case 3: p = `tests/t${pick(3000)}/case${i}.test.ts`; break;
        case 4: p = `lib/x${pick(3000)}/${f}`; break;
        case 5: p = `vendor/vendor${pick(3000)}/${f}`; break;
        case 6: p = `config/c${pick(3000)}.json.${i}`; break;
        default: p = `src/m${pick(200)}/d${pick(40)}/e${pick(40)}/${f}`;
      }
    }
    if (pick(200) === 0) p = `app${pick(100)}/.env.s${pick(3000)}`;
    out.add(p);
  }
  // git sorts its index by bytes; so do we (all ASCII here).
  return [...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const [cmd, arg, seed] = process.argv.slice(2);
const n = Number(arg);
if (cmd === "config") {
  process.stdout.write(JSON.stringify(config(n), null, 2) + "\n");
} else if (cmd === "paths" || cmd === "index") {
  const blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"; // the empty blob
  const ps = paths(n, seed ? Number(seed) : 7);
  const chunk = [];
  for (const p of ps) {
    chunk.push(cmd === "paths" ? p + "\0" : `100644 ${blob}\t${p}\0`);
    if (chunk.length === 65536) { process.stdout.write(chunk.join("")); chunk.length = 0; }
  }
  process.stdout.write(chunk.join(""));
} else {
  process.stderr.write("usage: gen.mjs config N | paths N [SEED] | index N [SEED]\n");
  process.exit(2);
}
