// The `permaudit report` page in a real browser (Debian's Chromium driven by
// playwright-core; scripts/test-report.sh installs both and runs this).
//   node report.mjs PAGE.html EXPECT.json SCREENSHOT.png
// EXPECT.json holds what permaudit's own JSON commands say for the same project
// (`rules --format json`, `map --delegation --format json`, `check --format json`), so
// every assertion compares the page with the engine, not with numbers written here.
import { createRequire } from "module";
import { readFileSync } from "fs";
import { pathToFileURL } from "url";
const require = createRequire(process.env.PLAYWRIGHT_DIR + "/");
const { chromium } = require("playwright-core");
const [page_file, expect_file, shot] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expect_file, "utf8"));
let failures = 0;
function check(ok, what) {
  if (ok) console.error("ok: " + what);
  else { failures++; console.error("FAIL: " + what); }
}
function wildcard(glob, s) {
  // OpenCode's Wildcard.match for the globs the fixture uses: * and ? (spec §3.1).
  const re = "^" + glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$";
  return new RegExp(re, "s").test(s);
}

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  for (const scheme of ["light", "dark"]) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme });
    const page = await ctx.newPage();
    const errors = [], requests = [];
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    const url = pathToFileURL(page_file).href;
    await page.goto(url);
    await page.waitForSelector("body[data-ready=true]", { timeout: 10000 });
    check(errors.length === 0, `${scheme}: no console error (${errors.join(" | ")})`);
    check(requests.length === 0, `${scheme}: no network request (${requests.join(" ")})`);
    if (scheme === "dark") {
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      check(bg !== "rgb(255, 255, 255)", `dark mode changes the background (${bg})`);
      await ctx.close();
      continue;
    }

    // The matrix: one row per agent, in `agent list` order.
    const rows = await page.$$eval("#matrix-table tbody tr", (trs) => trs.map((t) => t.getAttribute("data-agent")));
    check(JSON.stringify(rows) === JSON.stringify(expect.rules.agents.map((a) => a.key)), `matrix rows are the agents (${rows})`);

    // Clicking a cell shows that agent's rules for the permission, in OpenCode's order.
    for (const [agent, perm] of expect.cells) {
      const sel = `button.cell[data-agent="${agent}"][data-permission="${perm}"]`;
      await page.click(sel);
      const shown = await page.$$eval("#cell-rules tbody tr", (trs) => trs.map((t) => Number(t.getAttribute("data-rule"))));
      const rules = expect.rules.agents.find((a) => a.key === agent).rules;
      const want = rules.map((r, i) => [r, i]).filter(([r]) => wildcard(r.permission, perm)).map(([, i]) => i);
      check(JSON.stringify(shown) === JSON.stringify(want), `${agent} × ${perm}: rules ${shown} (rules --format json: ${want})`);
      const heading = await page.textContent("#cell-detail h3");
      check(heading.includes(agent) && heading.includes(perm), `${agent} × ${perm}: the detail names them (${heading})`);
      check(await page.getAttribute(sel, "aria-pressed") === "true", `${agent} × ${perm}: the cell is marked pressed`);
    }
    // Keyboard: Enter on a focused cell opens it; arrows move between cells.
    const [ka, kp] = expect.cells[0];
    await page.focus(`button.cell[data-agent="${ka}"][data-permission="${kp}"]`);
    await page.keyboard.press("ArrowRight");
    const moved = await page.evaluate(() => document.activeElement.getAttribute("data-permission"));
    await page.keyboard.press("Enter");
    const opened = await page.textContent("#cell-detail h3");
    check(moved && moved !== kp && opened.includes(moved), `keyboard: ArrowRight then Enter opens ${moved}`);

    // The delegation graph: exactly the edges `map --delegation` lists.
    const drawn = await page.$$eval("#delegation-graph g.edge", (gs) => gs.map((g) => g.getAttribute("data-caller") + "→" + g.getAttribute("data-subagent")).sort());
    const edges = expect.delegation.edges.map((e) => e.caller + "→" + e.subagent).sort();
    check(JSON.stringify(drawn) === JSON.stringify(edges), `graph edges ${drawn} (map --delegation: ${edges})`);
    const esc = await page.$$eval("#delegation-graph g.edge.escalation", (gs) => gs.map((g) => g.getAttribute("data-caller") + "→" + g.getAttribute("data-subagent")).sort());
    check(JSON.stringify(esc) === JSON.stringify(expect.escalations.slice().sort()), `escalation edges ${esc} (expected ${expect.escalations})`);
    const labelled = await page.$$eval("#delegation-graph g.edge", (gs) => gs.every((g) => (g.getAttribute("aria-label") || "").length > 0 && g.querySelector("title")));
    check(labelled, "every edge has a text alternative");

    // Findings: the same count as check, and the filters change it.
    const count = async () => Number(await page.getAttribute("#findings-count", "data-shown"));
    const total = expect.check.findings.length;
    check(await count() === total, `findings shown ${await count()} (check: ${total})`);
    const levels = {};
    for (const f of expect.check.findings) levels[f.level] = (levels[f.level] || 0) + 1;
    await page.click("#lvl-error");
    check(await count() === total - (levels.error || 0), `unticking error leaves ${await count()} (check: ${total - (levels.error || 0)})`);
    await page.click("#lvl-error");
    const kind = expect.check.findings[0].id;
    await page.selectOption("#kind-filter", kind);
    const ofKind = expect.check.findings.filter((f) => f.id === kind).length;
    check(await count() === ofKind && ofKind < total, `kind ${kind}: ${await count()} (check: ${ofKind} of ${total})`);
    await page.selectOption("#kind-filter", "");

    // Files: one entry per tracked file for the agent picked.
    const files = await page.$$eval("#files-tree .file, #files-tree details", (n) => n.length);
    check(files > 0, `the file tree is drawn (${files} entries at the top)`);

    // A screenshot with content: many distinct colours, not one blank colour.
    await page.click(`button.cell[data-agent="${ka}"][data-permission="${kp}"]`);
    await page.evaluate(() => window.scrollTo(0, 0));
    const png = await page.screenshot({ path: shot });
    const colours = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = "data:image/png;base64," + b64;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width; c.height = img.height;
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      let ink = 0;
      for (let i = 0; i < d.length; i += 4 * 7) {
        seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        if (d[i] + d[i + 1] + d[i + 2] < 600) ink++;
      }
      return { distinct: seen.size, ink: ink / (d.length / 28) };
    }, png.toString("base64"));
    check(colours.distinct > 50 && colours.ink > 0.02, `screenshot not blank (${colours.distinct} colours, ${(colours.ink * 100).toFixed(1)}% ink)`);
    await ctx.close();
  }
} finally {
  await browser.close();
}
if (failures) { console.error(failures + " failed"); process.exit(1); }
console.error("all passed");
