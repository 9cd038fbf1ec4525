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
const [page_file, expect_file, shot, base_file, diff_file] = process.argv.slice(2);
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

// axe-core (npm, beside playwright-core): WCAG 2 A/AA rules, in the page.
const AXE = readFileSync(process.env.PLAYWRIGHT_DIR + "/node_modules/axe-core/axe.min.js", "utf8");
async function axeSerious(page) {
  await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id + " ×" + v.nodes.length + " (" + v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ") + ")");
  });
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
    // WCAG AA in both schemes, with a cell's rules open.
    await page.click(`button.cell[data-agent="${expect.cells[0][0]}"][data-permission="${expect.cells[0][1]}"]`);
    const axe = await axeSerious(page);
    check(axe.length === 0, `${scheme}: axe-core finds no serious or critical violation (${axe.join("; ")})`);
    if (scheme === "dark") {
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      check(bg !== "rgb(255, 255, 255)", `dark mode changes the background (${bg})`);
      await ctx.close();
      continue;
    }

    // The matrix: one row per agent, in `agent list` order.
    const rows = await page.$$eval("#matrix-table tbody tr", (trs) => trs.map((t) => t.getAttribute("data-agent")));
    check(JSON.stringify(rows) === JSON.stringify(expect.rules.agents.map((a) => a.key)), `matrix rows are the agents (${rows})`);

    // Only OpenCode's internal agents are hidden by default: every user agent (a hidden
    // subagent included) is a visible row and in the files picker.
    const visible = await page.$$eval("#matrix-table tbody tr", (trs) => trs.filter((t) => !t.hidden).map((t) => t.getAttribute("data-agent")));
    const internal = ["compaction", "summary", "title"];
    const want = expect.rules.agents.filter((a) => !(a.native && internal.includes(a.key))).map((a) => a.key);
    check(JSON.stringify(visible) === JSON.stringify(want), `visible rows are every agent but the internal ones (${visible})`);
    check(expect.rules.agents.some((a) => a.hidden && !a.native && visible.includes(a.key)), "a hidden user agent is shown");
    const picker = await page.$$eval("#files-agent option", (os) => os.map((o) => o.textContent));
    check(JSON.stringify(picker) === JSON.stringify(want), `the files picker lists them (${picker})`);

    // The first screen: every error and warning check reports (up to ten), above the fold.
    const serious = expect.check.findings.filter((f) => f.level === "error" || f.level === "warning").length;
    const listed = await page.$$eval("#glance-serious li[data-finding]", (lis) => lis.length);
    check(listed === Math.min(10, serious) && serious > 0, `the first screen lists ${listed} errors and warnings (check: ${serious})`);
    await page.evaluate(() => window.scrollTo(0, 0));
    const top = await page.$eval("#glance", (e) => e.getBoundingClientRect().top);
    check(top >= 0 && top < 900 * 0.5, `"At a glance" starts in the first half screen (${top}px)`);
    // Each escalation is said there in words, linked to the caller's task cell.
    for (const e of expect.escalations) {
      const [caller, sub] = e.split("→");
      const said = await page.$$eval(`#glance-risks li[data-permission="task"]`, (lis, [caller, sub]) => lis
        .filter((li) => li.querySelector("strong").textContent.includes(sub) && li.getAttribute("data-agents").split(" ").includes(caller))
        .map((li) => [...li.querySelectorAll("a")].find((a) => a.textContent === caller).getAttribute("href")), [caller, sub]);
      check(said.length === 1 && said[0] === "#cell/" + caller + "/task", `the first screen says ${caller} may start ${sub} (${said})`);
    }

    // A cell's accessible name is what it shows: no aria-label over its text.
    const names = await page.$$eval("button.cell", (bs) => bs.filter((b) => b.hasAttribute("aria-label") || b.hasAttribute("aria-labelledby") || !b.textContent.trim()).length);
    check(names === 0, `every cell is named by its visible text (${names} are not)`);

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
      // Its rules are brought into view, focus moved there, and the address is its permalink.
      const seen = await page.evaluate(() => { const r = document.getElementById("cell-detail").getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0 && document.activeElement.id === "cell-detail"; });
      check(seen, `${agent} × ${perm}: the rules are in view with focus`);
      check(decodeURIComponent(new URL(page.url()).hash) === `#cell/${agent}/${perm}`, `${agent} × ${perm}: the address is its permalink (${page.url()})`);
    }
    // A permalink opens its cell on a fresh load.
    const [pa, pp] = expect.cells[expect.cells.length - 1];
    await page.goto(url + `#cell/${pa}/${pp}`);
    await page.waitForSelector("body[data-ready=true]");
    const linked = await page.textContent("#cell-detail h3");
    check(linked.includes(pa) && linked.includes(pp) && await page.getAttribute(`button.cell[data-agent="${pa}"][data-permission="${pp}"]`, "aria-pressed") === "true", `the permalink #cell/${pa}/${pp} opens it (${linked})`);
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
    const stops = await page.$$eval("#delegation-graph [tabindex]", (n) => n.length);
    check(stops === 0, `no edge of the graph is a tab stop (${stops} are)`);

    // Find, sort and fold: the agent filter shows exactly the agents whose names hold the
    // text; "riskiest first" orders rows by their red cells (bash, edit, outside the project
    // run unasked), most first; the quiet columns folded are low-stakes tools no rule of the
    // user's names (rules --format json), and a permalink to one unfolds it.
    const shownRows = () => page.$$eval("#matrix-table tbody tr", (trs) => trs.filter((t) => !t.hidden).map((t) => t.getAttribute("data-agent")));
    const needle = want.find((n) => n !== want[0] && n.length > 3).slice(1, 4);
    await page.fill("#agent-filter", needle);
    const found = await shownRows();
    const wantFound = want.filter((n) => n.toLowerCase().includes(needle.toLowerCase()));
    check(JSON.stringify(found) === JSON.stringify(wantFound) && found.length < want.length, `find agent "${needle}": ${found} (${wantFound})`);
    await page.fill("#agent-filter", "");
    check(JSON.stringify(await shownRows()) === JSON.stringify(want), "clearing the filter shows every user agent again");
    await page.selectOption("#agent-sort", "risk");
    const reds = await page.$$eval("#matrix-table tbody tr", (trs) => trs.filter((t) => !t.hidden).map((t) => t.querySelectorAll("button.cell.r-high").length));
    check(reds.length === want.length && reds.every((n, k) => k === 0 || reds[k - 1] >= n) && reds[0] > reds[reds.length - 1], `riskiest first: red cells per row ${reds}`);
    await page.selectOption("#agent-sort", "");
    check(JSON.stringify(await shownRows()) === JSON.stringify(want), "config order again");
    const folded = await page.$$eval("#matrix-table thead th.perm", (ths) => ths.filter((t) => t.offsetParent === null).map((t) => t.textContent));
    const userNamed = new Set(expect.rules.agents.flatMap((a) => a.rules.filter((r) => r.layer !== "defaults" && r.layer !== "agent-builtin").map((r) => r.permission)));
    const quietSet = ["lsp", "todowrite", "question", "doom_loop", "plan_enter", "plan_exit"];
    check(folded.length > 0 && folded.every((p) => quietSet.includes(p) && !userNamed.has(p)), `quiet columns folded: ${folded}`);
    await page.goto(url + `#cell/${want[0]}/${folded[0]}`);
    await page.waitForSelector("body[data-ready=true]");
    const unfolded = await page.evaluate(([a, p]) => { const b = document.querySelector(`button.cell[data-agent="${a}"][data-permission="${p}"]`); return b.offsetParent !== null && b.getAttribute("aria-pressed") === "true"; }, [want[0], folded[0]]);
    check(unfolded, `the permalink #cell/${want[0]}/${folded[0]} unfolds its quiet column and opens it`);
    await page.goto(url);
    await page.waitForSelector("body[data-ready=true]");

    // Findings in the matrix: a cell is marked ⚠ exactly when an error or warning of check
    // (for that agent) is at one of the rules its decision rests on (rules --format json: the
    // rules whose permission glob matches the column).
    const at = (s) => s ? s.path + ":" + s.line + ":" + s.column : null;
    const columns = await page.$$eval("#matrix-table thead th.perm", (ths) => ths.map((t) => t.textContent));
    const wantMarked = [];
    for (const a of expect.rules.agents) for (const p of columns) {
      const places = new Set(a.rules.filter((r) => wildcard(r.permission, p)).map((r) => at(r.source)).filter(Boolean));
      if (expect.check.findings.some((f) => f.level !== "info" && (!f.agents.length || f.agents.includes(a.key)) && places.has(at(f.source)))) wantMarked.push(a.key + "/" + p);
    }
    const marked = await page.$$eval("button.cell.flagged", (bs) => bs.map((b) => b.getAttribute("data-agent") + "/" + b.getAttribute("data-permission")));
    check(wantMarked.length > 0 && JSON.stringify(marked.slice().sort()) === JSON.stringify(wantMarked.slice().sort()), `cells marked ⚠ ${marked.length} (check: ${wantMarked.length})`);
    check(await page.$$eval("button.cell.flagged", (bs) => bs.every((b) => b.textContent.includes("⚠"))), "a marked cell says ⚠ in its text");
    // A finding links to its cells; the link opens one.
    const link = await page.$eval("article.finding a.cell-link", (a) => [a.getAttribute("href"), a.textContent]);
    await page.click("article.finding a.cell-link");
    const [la, lp] = link[1].split(" · ");
    check(await page.getAttribute(`button.cell[data-agent="${la}"][data-permission="${lp}"]`, "aria-pressed") === "true", `the finding's link ${link[0]} opens its cell`);
    // Findings are grouped by kind, kinds with an error first.
    const groups = await page.$$eval(".kind-group", (gs) => gs.map((g) => [g.getAttribute("data-kind"), [...g.querySelectorAll("article.finding")].map((a) => [a.getAttribute("data-kind"), a.getAttribute("data-level")])]));
    const worst = groups.map(([, fs]) => Math.min(...fs.map(([, l]) => ({ error: 0, warning: 1, info: 2 })[l])));
    check(groups.every(([k, fs]) => fs.every(([fk]) => fk === k)) && worst.every((w, k) => k === 0 || worst[k - 1] <= w), `findings grouped by kind, errors first (${groups.map(([k]) => k)})`);

    // Delegation, agent by agent: each escalation's caller, picked, lists the subagent first
    // with what it gains.
    for (const e of expect.escalations) {
      const [caller, sub] = e.split("→");
      await page.selectOption("#deleg-agent", caller);
      const first = await page.$eval("#deleg-reached li", (li) => [li.getAttribute("data-subagent"), li.classList.contains("gains"), li.textContent]);
      check(first[0] === sub && first[1] && first[2].includes("gains"), `what can ${caller} reach: ${sub} first, with what it gains (${first[2]})`);
    }

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
  // A phone: the header leaves the screen to the page, and a screenshot of it
  // (SCREENSHOT with -phone before .png).
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: "light" });
  const pp = await phone.newPage();
  await pp.goto(pathToFileURL(page_file).href);
  await pp.waitForSelector("body[data-ready=true]");
  const header = await pp.$eval("header", (h) => h.getBoundingClientRect().height);
  check(header < 844 * 0.2, `phone: the header is ${header}px of 844`);
  const wide = await pp.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 390, `phone: the page does not scroll sideways (${wide}px wide)`);
  await pp.screenshot({ path: shot.replace(/\.png$/, "-phone.png") });
  await phone.close();
  // Print: landscape A4 (277 mm wide inside its margins, 1047 CSS px) holds every column of
  // the matrix shown on screen, and the page prints in a few sheets.
  {
    const ctx = await browser.newContext({ viewport: { width: 1047, height: 700 } });
    const page = await ctx.newPage();
    await page.goto(pathToFileURL(page_file).href);
    await page.waitForSelector("body[data-ready=true]");
    const onScreen = await page.$$eval("#matrix-table thead th.perm", (ths) => ths.filter((t) => t.offsetParent !== null).length);
    await page.emulateMedia({ media: "print" });
    const fit = await page.evaluate(() => ({ width: document.querySelector("#matrix-table").getBoundingClientRect().width, cols: [...document.querySelectorAll("#matrix-table thead th.perm")].filter((t) => t.offsetParent !== null).length }));
    check(fit.width <= 1047 && fit.cols === onScreen, `print: the matrix is ${Math.round(fit.width)}px wide (of 1047) with all ${fit.cols} columns`);
    const pdf = await page.pdf({ format: "A4", landscape: true, preferCSSPageSize: true });
    const sheets = (pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g) || []).length;
    check(sheets > 0 && sheets <= 8, `print: ${sheets} A4 pages`);
    await ctx.close();
  }

  // With --base: the changed cells are marked (exactly diff's changes and tool events), and
  // each widening is said in words with the agents diff names.
  if (base_file) {
    const diff = JSON.parse(readFileSync(diff_file, "utf8"));
    const bp = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await bp.goto(pathToFileURL(base_file).href);
    await bp.waitForSelector("body[data-ready=true]");
    const marked = await bp.$$eval("button.cell.changed", (bs) => bs.map((b) => b.getAttribute("data-agent") + " " + b.getAttribute("data-permission")).sort());
    const want = [...new Set(diff.changes.map((c) => c.agent + " " + c.permission).concat(diff.events.filter((e) => e.tool).map((e) => e.agent + " " + e.tool)))].sort();
    check(want.length > 0 && JSON.stringify(marked) === JSON.stringify(want), `--base: changed cells ${marked} (diff: ${want})`);
    const said = await bp.$$eval(".cause.widened .cause-words", (ps) => ps.map((p) => p.textContent));
    const widened = diff.causes.filter((c) => c.class === "widened");
    check(said.length === widened.length && widened.every((c, k) => said[k].startsWith(c.agents.join(", ") + " may now ") && said[k].includes(JSON.stringify(c.regions[0].input))), `--base: each widening in words (${said.join(" | ")})`);
  }
} finally {
  await browser.close();
}
if (failures) { console.error(failures + " failed"); process.exit(1); }
console.error("all passed");
