// permaudit report: renders the data embedded in #data. No network, no storage, no
// time: the same data always gives the same page.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var SYM = { allow: "✓", ask: "?", deny: "✕", mixed: "±" };
  var WORD = { a: "allow", k: "ask", d: "deny" };

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] == null) continue;
        if (k === "text") e.textContent = attrs[k];
        else if (k === "cls") e.className = attrs[k];
        else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
        else e.setAttribute(k, attrs[k]);
      }
    }
    (kids || []).forEach(function (c) {
      if (c == null) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }
  function badge(s, label) {
    return el("span", { cls: "badge s-" + s, text: (SYM[s] || "") + " " + (label || s) });
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  function q(s) { return JSON.stringify(s); }

  var agents = D.agents;
  var byName = {};
  agents.forEach(function (a, i) { byName[a.name] = i; });
  var nav = document.getElementById("nav");
  function navLink(id, label, n) {
    nav.appendChild(el("a", { href: "#" + id }, [label, n == null ? null : el("span", { cls: "n", text: String(n) })]));
  }

  // ---- What changed (--base) ----
  function renderDiff() {
    var d = D.diff;
    if (!d) return;
    var sec = document.getElementById("diff");
    sec.hidden = false;
    sec.setAttribute("aria-labelledby", "diff-h");
    sec.appendChild(el("h2", { id: "diff-h", text: "What this change does: " + d.base.label + " → " + d.head.label }));
    var s = d.summary || {};
    var widened = d.causes.filter(function (c) { return c.class === "widened"; });
    var narrowed = d.causes.filter(function (c) { return c.class !== "widened"; });
    sec.appendChild(el("p", { cls: "diff-summary", id: "diff-summary" }, [
      widened.length ? badge("deny", "widened: " + widened.length) : badge("allow", "nothing widened"), " ",
      badge("allow", "narrowed: " + narrowed.length), " ",
      d.events.length ? el("span", { cls: "badge s-mixed", text: plural(d.events.length, "agent/tool change", "agent/tool changes") }) : null, " ",
      d.inconclusive.length ? el("span", { cls: "badge s-ask", text: plural(d.inconclusive.length, "part inconclusive", "parts inconclusive") }) : null
    ]));
    function rule(r) {
      if (!r) return "no rule (default ask)";
      var where = r.source ? r.source.path + ":" + r.source.line + ":" + r.source.column : "built-in (" + (r.builtin || "") + ")";
      return r.permission + " " + q(r.pattern) + " " + r.action + " at " + where;
    }
    // OpenCode's internal agents (compaction, summary, title) are left out of every list of
    // agents unless they are all it names (docs/commands.md).
    function internal(n) { var a = agents[byName[n]]; return !!a && a.internal; }
    function shownAgents(names) {
      var shown = names.filter(function (n) { return !internal(n); });
      return (shown.length ? shown : names).join(", ");
    }
    // A change in words: "auditor may now run "ls" without asking".
    var VERB = { bash: "run", edit: "edit", read: "read", task: "start", webfetch: "fetch", websearch: "search the web for", external_directory: "reach", glob: "search for", grep: "search for", skill: "load the skill" };
    function words(c, k) {
      var g = c.regions[0], who = (D.diff_agents || [])[k] || c.agents.join(", ");
      var what = (VERB[c.permission] || "use " + c.permission + " with") + " " + q(g.input);
      if (c.class === "widened") return who + " may now " + what + (g.after === "allow" ? " without asking" : " after asking") + (c.regions.length > 1 ? " (and " + plural(c.regions.length - 1, "more input", "more inputs") + ")" : "");
      return who + (g.after === "deny" ? " may no longer " + what : " must now ask to " + what) + (c.regions.length > 1 ? " (and " + plural(c.regions.length - 1, "more input", "more inputs") + ")" : "");
    }
    function cause(c, k) {
      var box = el("div", { cls: "cause " + c.class });
      box.appendChild(el("p", { cls: "cause-words", text: words(c, k) }));
      box.appendChild(el("div", null, [el("strong", { text: c.class + " " }), el("code", { text: c.permission }), " — " + plural(c.regions.length, "region", "regions") + ", caused by ", el("code", { text: rule(c.rule) })]));
      // The agents as `permaudit diff` names them (all, or without OpenCode's internal ones).
      box.appendChild(el("div", { cls: "meta cause-agents", text: "agents: " + ((D.diff_agents || [])[k] || c.agents.join(", ")) }));
      var ul = el("ul");
      c.regions.slice(0, 8).forEach(function (g) {
        ul.appendChild(el("li", null, ["e.g. ", el("code", { text: q(g.input) }), " ", badge(g.before), " → ", badge(g.after), g.agents.length === c.agents.length ? "" : " (agents: " + shownAgents(g.agents) + ")"]));
      });
      if (c.regions.length > 8) ul.appendChild(el("li", { text: "… " + (c.regions.length - 8) + " more regions" }));
      box.appendChild(ul);
      return box;
    }
    var at = function (c) { return d.causes.indexOf(c); };
    if (widened.length) { sec.appendChild(el("h3", { text: "Widened (more allowed than before)" })); widened.forEach(function (c) { sec.appendChild(cause(c, at(c))); }); }
    if (narrowed.length) { sec.appendChild(el("h3", { text: "Narrowed" })); narrowed.forEach(function (c) { sec.appendChild(cause(c, at(c))); }); }
    if (d.events.length) {
      sec.appendChild(el("h3", { text: "Agents and tools" }));
      var ul = el("ul");
      var evGroups = [], evByKey = {};
      d.events.forEach(function (e) {
        var key = e.tool ? JSON.stringify([e.class, e.tool]) : JSON.stringify([e.class, e.agent]);
        if (!evByKey[key]) { evByKey[key] = { e: e, agents: [] }; evGroups.push(evByKey[key]); }
        evByKey[key].agents.push(e.agent);
      });
      evGroups.forEach(function (g) { ul.appendChild(el("li", { text: shownAgents(g.agents) + ": " + g.e.class + (g.e.tool ? " " + g.e.tool : "") })); });
      sec.appendChild(ul);
    }
    if (d.commands.length) {
      sec.appendChild(el("h3", { text: "Project commands" }));
      var ul2 = el("ul"), groups = [], byKey = {};
      d.commands.forEach(function (c) {
        var key = JSON.stringify([c.text, c.path, c.line, c.before, c.after]);
        if (!byKey[key]) { byKey[key] = { c: c, agents: [] }; groups.push(byKey[key]); }
        byKey[key].agents.push(c.agent);
      });
      groups.forEach(function (g) {
        var c = g.c;
        ul2.appendChild(el("li", null, [el("code", { text: c.text }), " (" + c.path + ":" + c.line + ") ", badge(c.before), " → ", badge(c.after), " for " + shownAgents(g.agents)]));
      });
      sec.appendChild(ul2);
    }
    if (d.inconclusive.length) {
      sec.appendChild(el("h3", { text: "Not decided (over budget)" }));
      var ul3 = el("ul");
      d.inconclusive.forEach(function (i) { ul3.appendChild(el("li", { text: i.agent + " " + i.permission + ": " + i.reason })); });
      sec.appendChild(ul3);
    }
    if (!d.causes.length && !d.events.length && !d.commands.length) sec.appendChild(el("p", { cls: "hint", text: "No decision of any agent changes." }));
  }

  // ---- At a glance: what is risky, first ----
  function renderGlance() {
    var sec = document.getElementById("glance");
    var s = D.summary;
    sec.appendChild(el("p", { id: "glance-findings" }, [
      el("a", { href: "#findings" }, [el("span", { cls: "badge lvl-error", text: plural(s.error, "error", "errors") })]), " ",
      el("a", { href: "#findings" }, [el("span", { cls: "badge lvl-warning", text: plural(s.warning, "warning", "warnings") })]), " ",
      el("span", { cls: "badge lvl-info", text: s.info + " info" }), " (as permaudit check reports them)"
    ]));
    var serious = [];
    D.findings.forEach(function (f, i) { if (f.level === "error" || f.level === "warning") serious.push(i); });
    serious.sort(function (x, y) { return (D.findings[x].level === "error" ? 0 : 1) - (D.findings[y].level === "error" ? 0 : 1) || x - y; });
    if (serious.length) {
      var ul = el("ul", { id: "glance-serious" });
      serious.slice(0, 10).forEach(function (i) {
        var f = D.findings[i];
        ul.appendChild(el("li", { "data-finding": String(i) }, [el("span", { cls: "badge lvl-" + f.level, text: f.level }), " ", el("a", { href: "#finding-" + i, text: f.id }), " " + (f.place ? f.place + ": " : "") + f.message]));
      });
      if (serious.length > 10) ul.appendChild(el("li", null, [el("a", { href: "#findings", text: "… " + (serious.length - 10) + " more errors and warnings" })]));
      sec.appendChild(ul);
    }
    sec.appendChild(el("h3", { text: "What each agent may do without asking" }));
    // One line per risk, naming every agent it holds for (each name a link to the cell
    // behind it): 85 agents that all run any command make one line, not 85.
    var groups = [], byText = {}, risky = {};
    D.risks.forEach(function (r) {
      var key = r.permission + "\u0000" + r.text;
      if (!byText[key]) { byText[key] = { r: r, agents: [] }; groups.push(byText[key]); }
      byText[key].agents.push(r.agent);
      risky[r.agent] = true;
    });
    if (!groups.length) { sec.appendChild(el("p", { cls: "hint", text: "No agent runs any command, edits any file, reaches outside the project, pushes, deletes, edits the project's OpenCode config, reads .env or starts a stronger subagent without asking." })); return; }
    var list = el("ul", { id: "glance-risks" });
    groups.forEach(function (g) {
      var pi = D.permissions.indexOf(g.r.permission);
      var items = [el("strong", { text: g.r.text }), ": "];
      g.agents.forEach(function (name, k) {
        if (k) items.push(", ");
        items.push(pi >= 0 ? el("a", { href: cellHash(byName[name], pi), text: name }) : name);
      });
      list.appendChild(el("li", { "data-permission": g.r.permission, "data-agents": g.agents.join(" ") }, items));
    });
    sec.appendChild(list);
    var quiet = agents.filter(function (a) { return !a.internal && !risky[a.name]; }).map(function (a) { return a.name; });
    if (quiet.length) sec.appendChild(el("p", { cls: "hint", text: "None of these without asking: " + quiet.join(", ") + "." }));
  }

  // ---- Matrix ----
  var matrixButtons = [];
  // With a base side: the cells whose decisions changed (diff's changes and tool events).
  var changed = {};
  if (D.diff) {
    D.diff.changes.forEach(function (c) { changed[c.agent + "\u0000" + c.permission] = c.class; });
    D.diff.events.forEach(function (e) { if (e.tool) changed[e.agent + "\u0000" + e.tool] = e.class; });
  }
  // Low-stakes tools whose columns fold away unless a rule of the user's names them.
  var QUIET = ["lsp", "todowrite", "question", "doom_loop", "plan_enter", "plan_exit"];
  function quietColumn(perm) {
    if (QUIET.indexOf(perm) < 0) return false;
    var named = agents.some(function (a) {
      return a.rules.some(function (r) { return r[0] === perm && r[3] !== "defaults" && r[3] !== "agent-builtin"; });
    });
    var moved = Object.keys(changed).some(function (k) { return k.split("\u0000")[1] === perm; });
    var flagged = agents.some(function (a, ai) { return marks[ai] && marks[ai][D.permissions.indexOf(perm)]; });
    return !named && !moved && !flagged;
  }
  // The errors and warnings `check` reports at a rule a cell's decision rests on, per
  // agent and permission: marks[ai][pi] = [finding index, ...], and each finding's cells.
  var marks = [], cellsOf = {};
  function markFindings() {
    agents.forEach(function (a, ai) {
      marks.push(null);
      D.cells[ai].forEach(function (c, pi) {
        c[2].forEach(function (entry) {
          var i = typeof entry === "number" ? entry : entry[0];
          (findingsAt[a.rules[i][4]] || []).forEach(function (f) {
            if (f.level === "info" || (f.agents.length && f.agents.indexOf(a.name) < 0)) return;
            var fi = D.findings.indexOf(f);
            marks[ai] = marks[ai] || {};
            var m = marks[ai][pi] = marks[ai][pi] || [];
            if (m.indexOf(fi) < 0) m.push(fi);
            var cs = cellsOf[fi] = cellsOf[fi] || [];
            if (!cs.some(function (x) { return x[0] === ai && x[1] === pi; })) cs.push([ai, pi]);
          });
        });
      });
    });
  }
  function renderMatrix() {
    var body = document.getElementById("matrix-body");
    body.textContent = "";
    markFindings();
    var internal = agents.filter(function (a) { return a.internal; }).length;
    body.appendChild(el("p", { cls: "hint", text: "Each cell: what the agent may do with that permission for any input (✓ allow, ? ask, ✕ deny; ⊘ the tool is hidden from the model). \"✓ allow ±2\": allowed unless one of 2 rules decides otherwise (depends on the input). Colour is risk: red where a risky tool (bash, edit, outside the project, MCP and custom tools) runs without asking, amber where it asks or some inputs run unasked, grey where it is denied. ⚠: an error or warning of permaudit check is about a rule the cell rests on. The edit column is asked by the edit, write and apply_patch tools. Open a cell for its rules in OpenCode's order (the last matching rule wins) with where each comes from and an input it decides." }));
    var controls = el("div", { cls: "controls", role: "group", "aria-label": "Agents shown" });
    var find = el("input", { type: "search", id: "agent-filter", placeholder: "name", autocomplete: "off" });
    controls.appendChild(el("label", { "for": "agent-filter" }, ["find agent ", find]));
    var sort = el("select", { id: "agent-sort" }, [
      el("option", { value: "", text: "config order" }), el("option", { value: "risk", text: "riskiest first" }), el("option", { value: "name", text: "name" })]);
    controls.appendChild(el("label", { "for": "agent-sort" }, ["sort ", sort]));
    var show = el("input", { type: "checkbox", id: "show-internal" });
    controls.appendChild(el("label", { "for": "show-internal" }, [show, "show OpenCode's internal agents (" + internal + ")"]));
    var quiet = D.permissions.map(quietColumn);
    var nQuiet = quiet.filter(Boolean).length;
    var showQuiet = el("input", { type: "checkbox", id: "show-quiet" });
    if (nQuiet) controls.appendChild(el("label", { "for": "show-quiet" }, [showQuiet, "show " + plural(nQuiet, "quiet column", "quiet columns") + " (" + D.permissions.filter(function (p, pi) { return quiet[pi]; }).join(", ") + ": built-in rules only)"]));
    var rowCount = el("span", { id: "agents-count", "aria-live": "polite" });
    controls.appendChild(rowCount);
    body.appendChild(controls);
    var table = el("table", { cls: "matrix fold-quiet", id: "matrix-table" });
    table.appendChild(el("caption", { cls: "sr", text: "Agents (rows) by permissions (columns)" }));
    var hr = el("tr", null, [el("th", { scope: "col", text: "agent" })]);
    D.permissions.forEach(function (p, pi) { hr.appendChild(el("th", { scope: "col", cls: "perm" + (quiet[pi] ? " quiet" : ""), text: p })); });
    table.appendChild(el("thead", null, [hr]));
    var tb = el("tbody");
    var rows = [], score = [];
    agents.forEach(function (a, ai) {
      var tr = el("tr", { cls: a.internal ? "internal" : "", "data-agent": a.name });
      if (a.internal) tr.hidden = true;
      tr.appendChild(el("th", { scope: "row", cls: "agent", id: "agent-" + ai }, [a.name, el("span", { cls: "mode", text: a.mode + (a.internal ? ", internal" : a.hidden ? ", hidden from @" : "") })]));
      var row = [], sc = 0;
      D.cells[ai].forEach(function (c, pi) {
        var s = c[0], perm = D.permissions[pi], risk = riskClass(ai, perm, c);
        var flagged = marks[ai] && marks[ai][pi];
        sc += (risk === "r-high" ? 100 : risk === "r-mid" ? 10 : 0) + (flagged ? 1 : 0);
        // The button's text is its accessible name (no aria-label): the row and column
        // headers give the agent and permission; the title says the rest in words.
        var b = el("button", {
          cls: "cell s-" + s + " " + risk + (flagged ? " flagged" : ""), type: "button", "aria-pressed": "false",
          "data-agent": a.name, "data-permission": perm, "data-summary": s,
          title: cellWords(ai, pi) + (flagged ? " (" + flagged.map(function (fi) { return D.findings[fi].level + " " + D.findings[fi].id; }).join(", ") + ")" : ""),
          onclick: function () { openCell(ai, pi, b, true); }
        }, [cellText(c) + (flagged ? " ⚠" : "") + (changed[a.name + "\u0000" + perm] ? " Δ" : "")]);
        if (changed[a.name + "\u0000" + perm]) { b.classList.add("changed"); b.title += " (" + changed[a.name + "\u0000" + perm] + " since " + D.diff.base.label + ")"; }
        b.tabIndex = -1;
        row.push(b);
        tr.appendChild(el("td", { cls: quiet[pi] ? "quiet" : null }, [b]));
      });
      matrixButtons.push(row);
      rows.push(tr);
      score.push(sc);
      tb.appendChild(tr);
    });
    table.appendChild(tb);
    var first = matrixButtons.find(function (r, i) { return !agents[i].internal; });
    if (first && first[0]) first[0].tabIndex = 0;
    table.addEventListener("keydown", moveFocus);
    function applyRows() {
      var needle = find.value.trim().toLowerCase(), n = 0;
      rows.forEach(function (tr, i) {
        var on = (!agents[i].internal || show.checked) && (!needle || agents[i].name.toLowerCase().indexOf(needle) >= 0);
        tr.hidden = !on;
        if (on) n++;
      });
      rowCount.textContent = "showing " + plural(n, "agent", "agents");
      rowCount.setAttribute("data-shown", String(n));
    }
    function applySort() {
      var order = agents.map(function (a, i) { return i; });
      if (sort.value === "name") order.sort(function (x, y) { return agents[x].name < agents[y].name ? -1 : agents[x].name > agents[y].name ? 1 : x - y; });
      if (sort.value === "risk") order.sort(function (x, y) { return score[y] - score[x] || x - y; });
      order.forEach(function (i) { tb.appendChild(rows[i]); });
    }
    show.addEventListener("change", applyRows);
    find.addEventListener("input", applyRows);
    sort.addEventListener("change", applySort);
    showQuiet.addEventListener("change", function () { table.classList.toggle("fold-quiet", !showQuiet.checked); });
    applyRows();
    body.appendChild(el("div", { cls: "scroll" }, [table]));
    body.appendChild(el("div", { id: "cell-detail", cls: "detail", "aria-live": "polite", tabindex: "-1" }, [el("p", { cls: "hint", text: "Select a cell (click, or Enter) to see that agent's rules for the permission." })]));
    if (D.diff) body.insertBefore(el("p", { cls: "hint", id: "changed-legend", text: "Δ: the cell's decisions changed since " + D.diff.base.label + " (" + Object.keys(changed).length + " cells)." }), body.querySelector(".controls"));
    renderUnconsulted(body);
  }
  // The permissions whose allow costs the most when it is not asked.
  var RISKY = { bash: 1, edit: 1, external_directory: 1 };
  var BASE = ["read", "edit", "bash", "glob", "grep", "task", "webfetch", "websearch", "external_directory", "skill", "lsp", "todowrite", "question", "doom_loop", "plan_enter", "plan_exit"];
  function riskClass(ai, perm, c) {
    var s = c[0], def = c[3], ex = c[4] || [];
    if (c[1] || s === "deny") return "r-off";
    var risky = RISKY[perm] || BASE.indexOf(perm) < 0;
    var someAllow = def === "allow" || ex.some(function (i) { return agents[ai].rules[i][2] === "allow"; });
    if (risky && def === "allow") return "r-high";
    if (risky && someAllow) return "r-mid";
    if (risky || def === "ask") return "r-ask";
    return "r-low";
  }
  function cellText(c) {
    if (c[1]) return "⊘ hidden";
    if (c[0] !== "mixed") return SYM[c[0]] + " " + c[0];
    return SYM[c[3]] + " " + c[3] + " ±" + (c[4] || []).length;
  }
  function cellWords(ai, pi) {
    var c = D.cells[ai][pi], a = agents[ai], perm = D.permissions[pi];
    if (c[1]) return a.name + " · " + perm + ": the tool is hidden from the model (denied whatever the input)";
    if (c[0] !== "mixed") return a.name + " · " + perm + ": " + c[0] + " for every input";
    var ex = c[4] || [], builtin = ex.every(function (i) { return a.rules[i][3] === "defaults"; });
    return a.name + " · " + perm + ": " + c[3] + " unless one of " + plural(ex.length, "rule", "rules") + " decides otherwise" + (builtin ? " (only OpenCode's built-in rules)" : "");
  }
  function renderUnconsulted(body) {
    var u = D.unconsulted || [];
    var box = el("div", { id: "unconsulted" });
    box.appendChild(el("h3", { id: "unconsulted-h", text: "Rules OpenCode never consults (" + u.length + ")" }));
    if (!u.length) { box.appendChild(el("p", { cls: "hint", text: "Every rule's permission is one a tool of OpenCode " + (D.opencode || "") + " asks." })); body.appendChild(box); return; }
    box.appendChild(el("p", { cls: "hint", text: "These keys decide nothing: no tool of this OpenCode release asks them (the write tool asks edit; there is no list, todoread or codesearch tool; typos and Claude Code syntax are literal names). They are not in the matrix." }));
    var t = el("table", { id: "unconsulted-table" });
    t.appendChild(el("thead", null, [el("tr", null, ["permission", "pattern", "action", "from", "agents", "why"].map(function (h) { return el("th", { scope: "col", text: h }); }))]));
    var tb = el("tbody");
    u.forEach(function (r) {
      tb.appendChild(el("tr", null, [
        el("td", { cls: "mono", text: r.permission }), el("td", { cls: "mono", text: q(r.pattern) }),
        el("td", { cls: "mono", text: typeof r.action === "string" ? r.action : JSON.stringify(r.action) }),
        el("td", { cls: "mono", text: r.place }), el("td", { text: r.agents.length === agents.length ? "all" : r.agents.join(", ") }),
        el("td", { text: r.why })
      ]));
    });
    t.appendChild(tb);
    box.appendChild(el("div", { cls: "scroll", tabindex: "0", role: "region", "aria-label": "rules OpenCode never consults" }, [t]));
    body.appendChild(box);
  }
  function moveFocus(ev) {
    var t = ev.target;
    if (!t.classList || !t.classList.contains("cell")) return;
    var dr = 0, dc = 0;
    if (ev.key === "ArrowRight") dc = 1; else if (ev.key === "ArrowLeft") dc = -1;
    else if (ev.key === "ArrowDown") dr = 1; else if (ev.key === "ArrowUp") dr = -1; else return;
    ev.preventDefault();
    // Rows and columns as shown: sorted, filtered, quiet columns folded.
    var tr = t.closest("tr"), td = t.closest("td"), n = null;
    if (dr) {
      var r = tr;
      do { r = dr > 0 ? r.nextElementSibling : r.previousElementSibling; } while (r && r.hidden);
      if (r) n = r.cells[td.cellIndex].querySelector("button.cell");
    } else {
      var c = td;
      do { c = dc > 0 ? c.nextElementSibling : c.previousElementSibling; } while (c && c.offsetParent === null);
      if (c && c.tagName === "TD") n = c.querySelector("button.cell");
    }
    if (!n) return;
    t.tabIndex = -1;
    n.tabIndex = 0;
    n.focus();
  }
  // Findings by the place they point at, to mark the rules they are about.
  var findingsAt = {};
  D.findings.forEach(function (f) {
    if (f.place) (findingsAt[f.place] = findingsAt[f.place] || []).push(f);
  });
  var pressed = null;
  // A cell's permalink: #cell/AGENT/PERMISSION (each part URI-encoded).
  function cellHash(ai, pi) { return "#cell/" + encodeURIComponent(agents[ai].name) + "/" + encodeURIComponent(D.permissions[pi]); }
  function openHash() {
    var m = /^#cell\/([^/]*)\/([^/]*)$/.exec(location.hash);
    if (!m) return false;
    var ai = byName[decodeURIComponent(m[1])], pi = D.permissions.indexOf(decodeURIComponent(m[2]));
    if (ai == null || pi < 0) return false;
    revealCell(ai, pi);
    openCell(ai, pi, matrixButtons[ai][pi], true);
    return true;
  }
  // Make a cell visible: its row (the agent filter cleared, internal agents shown if it is
  // one) and its column (quiet columns unfolded if it is one).
  function revealCell(ai, pi) {
    var b = matrixButtons[ai][pi], tr = b.closest("tr");
    if (tr.hidden) {
      var find = document.getElementById("agent-filter");
      find.value = "";
      if (agents[ai].internal) document.getElementById("show-internal").checked = true;
      find.dispatchEvent(new Event("input"));
    }
    if (b.offsetParent === null) {
      var q = document.getElementById("show-quiet");
      if (q) { q.checked = true; q.dispatchEvent(new Event("change")); }
    }
  }
  function openCell(ai, pi, button, move) {
    if (pressed) pressed.setAttribute("aria-pressed", "false");
    pressed = button;
    button.setAttribute("aria-pressed", "true");
    var a = agents[ai], perm = D.permissions[pi], c = D.cells[ai][pi];
    var box = document.getElementById("cell-detail");
    box.textContent = "";
    box.appendChild(el("h3", null, [a.name + " · ", el("code", { text: perm }), " ", badge(c[0], c[1] ? "deny (tool hidden from the model)" : c[0]), " ", el("a", { href: cellHash(ai, pi), cls: "permalink", text: "link to this cell" })]));
    if (location.hash !== cellHash(ai, pi) && history.replaceState) history.replaceState(null, "", cellHash(ai, pi));
    if (move) {
      // Bring the rules into view and move focus there (Shift+Tab returns to the matrix).
      box.scrollIntoView({ block: "nearest" });
      box.focus({ preventScroll: true });
    }
    var rules = c[2];
    if (!rules.length) {
      box.appendChild(el("p", { text: "No rule matches " + perm + ": OpenCode asks." }));
      return;
    }
    box.appendChild(el("p", { cls: "hint", text: cellWords(ai, pi) + ". " + plural(rules.length, "rule matches", "rules match") + " " + perm + ", in OpenCode's order: for an input, the last rule whose pattern matches decides; none matching asks." }));
    var t = el("table", { id: "cell-rules" });
    t.appendChild(el("thead", null, [el("tr", null, ["#", "permission", "pattern", "action", "layer", "from", "decides e.g."].map(function (h) { return el("th", { scope: "col", text: h }); }))]));
    var tb = el("tbody");
    rules.forEach(function (entry) {
      var i = typeof entry === "number" ? entry : entry[0];
      var r = a.rules[i], ex = r[5];
      var none = "nothing OpenCode asks: later rules decide every input it matches, or no tool asks the inputs it matches";
      if (typeof entry !== "number") {
        ex = entry[1] == null ? null : [perm, entry[1]];
        if (!ex) none = "no " + perm + " input found that it decides";
      }
      var exception = (c[4] || []).indexOf(i) >= 0;
      tb.appendChild(el("tr", { cls: (ex ? "" : "decides-none") + (exception ? " exception" : ""), "data-rule": String(i) }, [
        el("td", { cls: "mono", text: String(i) }),
        el("td", { cls: "mono", text: r[0] }),
        el("td", { cls: "mono", text: q(r[1]) }),
        el("td", null, [badge(r[2])]),
        el("td", { text: r[3] }),
        el("td", { cls: "mono" }, [r[4]].concat((findingsAt[r[4]] || []).map(function (f) {
          return el("a", { href: "#finding-" + D.findings.indexOf(f), cls: "badge rule-finding lvl-" + f.level, title: f.message }, ["⚠ " + f.id]);
        }))),
        el("td", { cls: "mono", text: ex ? ex[0] + " " + q(ex[1]) : none })
      ]));
    });
    t.appendChild(tb);
    box.appendChild(el("div", { cls: "scroll", tabindex: "0", role: "region", "aria-label": a.name + " · " + perm + " rules" }, [t]));
  }

  // ---- Files and commands ----
  function renderFiles() {
    var body = document.getElementById("files-body");
    var f = D.files;
    var visible = agents.map(function (a, i) { return i; }).filter(function (i) { return !agents[i].internal; });
    var pick = el("select", { id: "files-agent", "aria-label": "agent" });
    visible.forEach(function (i) { pick.appendChild(el("option", { value: String(i), text: agents[i].name })); });
    body.appendChild(el("div", { cls: "controls" }, [el("label", { "for": "files-agent" }, ["agent ", pick])]));
    var counts = el("div", { cls: "counts", id: "files-counts" });
    var treeBox = el("div", { cls: "tree", id: "files-tree" });
    var cmdBox = el("div", { id: "commands" });
    if (!f) {
      body.appendChild(el("p", { cls: "hint", text: "Not a git repository: no file list (map reads the files git tracks)." }));
    } else {
      body.appendChild(el("p", { cls: "hint", text: f.total + " files tracked by git, decided for read (R) and edit (E) as OpenCode checks them (worktree-relative paths)" + (f.total > f.paths.length ? "; the first " + f.paths.length + " shown" : "") + "." }));
      body.appendChild(counts);
      body.appendChild(treeBox);
    }
    body.appendChild(el("h3", { id: "commands-h", text: "The project's commands, as the bash tool decides them" }));
    body.appendChild(cmdBox);
    function draw() {
      var ai = Number(pick.value);
      if (f) drawTree(f, ai, counts, treeBox);
      drawCommands(ai, cmdBox);
    }
    pick.addEventListener("change", draw);
    if (visible.length) draw();
  }
  function tally(s) {
    var t = { a: 0, k: 0, d: 0 };
    for (var i = 0; i < s.length; i++) t[s[i]]++;
    return t;
  }
  function drawTree(f, ai, counts, box) {
    var read = f.read[ai], edit = f.edit[ai];
    counts.textContent = "";
    [["read", read], ["edit", edit]].forEach(function (p) {
      var t = tally(p[1]);
      counts.appendChild(el("span", null, [el("strong", { text: p[0] + ": " }), badge("allow", t.a + " allow"), " ", badge("ask", t.k + " ask"), " ", badge("deny", t.d + " deny")]));
    });
    // Directories: path prefix → [first, last) over the sorted paths.
    var root = { name: "", dirs: {}, order: [], files: [] };
    f.paths.forEach(function (p, i) {
      var parts = p.split("/"), node = root;
      for (var k = 0; k < parts.length - 1; k++) {
        var d = node.dirs[parts[k]];
        if (!d) { d = node.dirs[parts[k]] = { name: parts[k], dirs: {}, order: [], files: [], all: [] }; node.order.push(parts[k]); }
        d.all.push(i);
        node = d;
      }
      node.files.push(i);
    });
    function pair(rs, es) {
      return el("span", { cls: "pair" }, [sum("R", rs), sum("E", es)]);
    }
    function sum(tag, s) {
      var t = tally(s), kinds = ["a", "k", "d"].filter(function (x) { return t[x]; });
      if (kinds.length === 1) return el("span", { cls: "badge s-" + WORD[kinds[0]], title: tag === "R" ? "read" : "edit", text: tag + " " + SYM[WORD[kinds[0]]] + " " + WORD[kinds[0]] });
      return el("span", { cls: "badge s-mixed", title: (tag === "R" ? "read: " : "edit: ") + t.a + " allow, " + t.k + " ask, " + t.d + " deny", text: tag + " ± " + t.a + "/" + t.k + "/" + t.d });
    }
    function pick(s, idx) { var o = ""; idx.forEach(function (i) { o += s[i]; }); return o; }
    function fill(node, into) {
      node.order.forEach(function (n) {
        var d = node.dirs[n];
        var det = el("details", null, [el("summary", null, [el("span", { cls: "dir", text: d.name + "/" }), " ", el("span", { cls: "hint", text: "(" + d.all.length + ")" }), pair(pick(read, d.all), pick(edit, d.all))])]);
        det.addEventListener("toggle", function () { if (det.open && !det.filled) { det.filled = true; fill(d, det); } });
        into.appendChild(det);
      });
      node.files.forEach(function (i) {
        var name = f.paths[i].split("/").pop();
        into.appendChild(el("div", { cls: "file" }, [el("span", { cls: "name", text: name }), pair(read[i], edit[i])]));
      });
    }
    box.textContent = "";
    fill(root, box);
  }
  function drawCommands(ai, box) {
    box.textContent = "";
    if (!D.commands.length) { box.appendChild(el("p", { cls: "hint", text: "No package.json scripts, Makefile or justfile recipes, or workflow run: steps found." })); return; }
    var t = el("table", { id: "commands-table" });
    t.appendChild(el("thead", null, [el("tr", null, ["decision", "command", "from", "deciding rule"].map(function (h) { return el("th", { scope: "col", text: h }); }))]));
    var tb = el("tbody");
    D.commands.forEach(function (c) {
      var d = c.decided[ai] || ["ask", null], r = d[1] == null ? null : agents[ai].rules[d[1]];
      tb.appendChild(el("tr", null, [
        el("td", null, [badge(d[0])]),
        el("td", { cls: "mono", text: c.text }),
        el("td", { cls: "mono", text: c.path + ":" + c.line + (c.name ? " (" + c.name + ")" : "") }),
        el("td", { cls: "mono", text: r ? r[0] + " " + q(r[1]) + " " + r[2] + " at " + r[4] : (d[0] === "allow" ? "" : "no rule: default ask") })
      ]));
    });
    t.appendChild(tb);
    box.appendChild(el("div", { cls: "scroll", tabindex: "0", role: "region", "aria-label": "the project's commands" }, [t]));
  }

  // ---- Delegation (text alternative of the graph) ----
  function renderDelegation() {
    var box = document.getElementById("delegation-list");
    var edges = D.delegation.edges;
    box.appendChild(el("p", { cls: "hint", text: "subagent_depth " + D.delegation.depth + ". A subagent's session runs with the subagent's own rules, not its caller's." }));
    if (!edges.length) return;
    renderReach(box, edges);
    // A large graph is a hairball: folded, the picker above says it agent by agent.
    var graph = document.querySelector("#delegation .graph");
    if (graph && edges.length > 40) {
      var fold = el("details", { id: "delegation-graph-fold" }, [el("summary", { text: "The whole graph (" + plural(edges.length, "edge", "edges") + ")" })]);
      graph.parentNode.insertBefore(fold, graph);
      fold.appendChild(graph);
    }
    var det = el("details", null, [el("summary", { text: "The graph as a list (" + plural(edges.length, "edge", "edges") + ")" })]);
    var ul = el("ul", { id: "delegation-edges" });
    edges.forEach(function (e) {
      ul.appendChild(el("li", { "data-caller": e.caller, "data-subagent": e.subagent }, [
        el("strong", { text: e.caller }), " → ", el("strong", { text: e.subagent }), " ", badge(e.action),
        e.place ? el("span", { cls: "hint", text: " by task rule at " + e.place }) : el("span", { cls: "hint", text: " (no task rule: default ask)" }),
        e.escalation ? el("span", { cls: "badge s-deny", text: " ⚠ escalation: " + e.escalation }) : null
      ]));
    });
    det.appendChild(ul);
    box.appendChild(det);
  }

  // Pick an agent: whom it may start, directly and through them (up to subagent_depth),
  // and where it gains power: a reached agent may edit or run commands where the picked one
  // is denied (the escalation the graph marks red, along any path). Escalations first.
  function renderReach(box, edges) {
    var out = {};
    edges.forEach(function (e) { (out[e.caller] = out[e.caller] || []).push(e); });
    var callers = agents.filter(function (a) { return !a.internal && out[a.name]; });
    if (!callers.length) return;
    var depth = Number(D.delegation.depth) || 1;
    function summary(name, perm) {
      var pi = D.permissions.indexOf(perm), c = D.cells[byName[name]][pi];
      return c[1] ? "deny" : c[0];
    }
    function gains(from, to) {
      var why = [];
      ["edit", "bash"].forEach(function (p) {
        if (D.permissions.indexOf(p) < 0) return;
        var a = summary(from, p), b = summary(to, p);
        if (a === "deny" && b !== "deny") why.push(p + ": deny → " + b);
      });
      return why;
    }
    function reach(from) {
      // Breadth first: each agent once, by its shortest route; a route asks if any of its
      // steps asks.
      var seen = {}, found = [], frontier = [{ name: from, path: [], asks: false }];
      seen[from] = true;
      for (var d = 0; d < depth && frontier.length; d++) {
        var next = [];
        frontier.forEach(function (n) {
          (out[n.name] || []).forEach(function (e) {
            if (seen[e.subagent]) return;
            seen[e.subagent] = true;
            var r = { name: e.subagent, path: n.path.concat([n.name]), asks: n.asks || e.action !== "allow" };
            found.push(r);
            next.push(r);
          });
        });
        frontier = next;
      }
      return found;
    }
    var pick = el("select", { id: "deleg-agent" });
    var first = null;
    callers.forEach(function (a) {
      pick.appendChild(el("option", { value: a.name, text: a.name }));
      if (first == null && reach(a.name).some(function (r) { return gains(a.name, r.name).length; })) first = a.name;
    });
    pick.value = first || callers[0].name;
    var shown = el("div", { id: "deleg-reach", "aria-live": "polite" });
    box.appendChild(el("div", { cls: "controls" }, [el("label", { "for": "deleg-agent" }, ["what can ", pick, " reach?"])]));
    box.appendChild(shown);
    function draw() {
      shown.textContent = "";
      var from = pick.value, found = reach(from);
      if (!found.length) { shown.appendChild(el("p", { cls: "hint", text: from + " may start no subagent." })); return; }
      found.forEach(function (r) { r.gains = gains(from, r.name); });
      found.sort(function (x, y) { return (y.gains.length ? 1 : 0) - (x.gains.length ? 1 : 0); });
      var ul = el("ul", { id: "deleg-reached" });
      found.forEach(function (r) {
        var how = (r.asks ? "asks first" : "starts it without asking") + (r.path.length > 1 ? ", through " + r.path.slice(1).join(" → ") : "");
        ul.appendChild(el("li", { "data-subagent": r.name, cls: r.gains.length ? "gains" : null }, [
          r.gains.length ? el("span", { cls: "badge s-deny", text: "⚠ gains " + r.gains.join(", ") }) : null, r.gains.length ? " " : null,
          el("a", { href: "#cell/" + encodeURIComponent(r.path.length > 1 ? r.path[r.path.length - 1] : from) + "/task", text: r.name }),
          el("span", { cls: "hint", text: " (" + how + ")" })
        ]));
      });
      shown.appendChild(ul);
    }
    pick.addEventListener("change", draw);
    draw();
  }

  // ---- Findings ----
  function renderFindings() {
    var body = document.getElementById("findings-body");
    var all = D.findings;
    var s = D.summary;
    body.appendChild(el("p", { id: "findings-summary", text: plural(s.error, "error", "errors") + ", " + plural(s.warning, "warning", "warnings") + ", " + s.info + " info (as permaudit check reports them)" }));
    if (!all.length) { body.appendChild(el("p", { cls: "hint", text: "permaudit check finds nothing." })); return; }
    var controls = el("div", { cls: "controls", role: "group", "aria-label": "Filter findings" });
    var levels = {};
    ["error", "warning", "info"].forEach(function (l) {
      var box = el("input", { type: "checkbox", id: "lvl-" + l, "data-level": l });
      box.checked = true;
      levels[l] = box;
      controls.appendChild(el("label", { "for": "lvl-" + l }, [box, el("span", { cls: "badge lvl-" + l, text: l + " " + s[l] })]));
    });
    var kinds = {};
    all.forEach(function (f) { kinds[f.id] = (kinds[f.id] || 0) + 1; });
    var kind = el("select", { id: "kind-filter", "aria-label": "kind" }, [el("option", { value: "", text: "every kind" })]);
    Object.keys(kinds).sort().forEach(function (k) { kind.appendChild(el("option", { value: k, text: k + " (" + kinds[k] + ")" })); });
    controls.appendChild(el("label", { "for": "kind-filter" }, ["kind ", kind]));
    var count = el("span", { id: "findings-count", "aria-live": "polite" });
    controls.appendChild(count);
    body.appendChild(controls);
    // Grouped by kind, the kinds with errors first, then by how many; within a kind by
    // level, then by the rule they are at.
    var RANK = { error: 0, warning: 1, info: 2 };
    var byKind = {};
    all.forEach(function (f, i) { (byKind[f.id] = byKind[f.id] || []).push(i); });
    var order = Object.keys(byKind).sort(function (x, y) {
      var wx = Math.min.apply(null, byKind[x].map(function (i) { return RANK[all[i].level]; }));
      var wy = Math.min.apply(null, byKind[y].map(function (i) { return RANK[all[i].level]; }));
      return wx - wy || byKind[y].length - byKind[x].length || (x < y ? -1 : 1);
    });
    var list = el("div", { id: "findings-list" });
    var cards = [], groups = [];
    order.forEach(function (k) {
      var idx = byKind[k].slice().sort(function (x, y) {
        return RANK[all[x].level] - RANK[all[y].level] || ((all[x].place || "") < (all[y].place || "") ? -1 : (all[x].place || "") > (all[y].place || "") ? 1 : x - y);
      });
      var onlyInfo = idx.every(function (i) { return all[i].level === "info"; });
      var g = el("section", { cls: "kind-group" + (onlyInfo ? " only-info" : ""), "data-kind": k, "aria-labelledby": "kind-" + k }, [el("h3", { id: "kind-" + k }, [el("span", { cls: "kind", text: k }), " ", el("span", { cls: "hint", text: "(" + idx.length + ")" })])]);
      idx.forEach(function (i) { var c = card(all[i]); cards[i] = c; g.appendChild(c); });
      groups.push(g);
      list.appendChild(g);
    });
    body.appendChild(list);
    if (s.info) body.insertBefore(el("p", { cls: "print-only hint", text: "Printed: the errors and warnings, without their source lines; the " + s.info + " info findings are on the page." }), list);
    function apply() {
      var n = 0;
      all.forEach(function (f, i) {
        var on = levels[f.level].checked && (!kind.value || kind.value === f.id);
        cards[i].hidden = !on;
        if (on) n++;
      });
      groups.forEach(function (g) { g.hidden = !g.querySelector("article.finding:not([hidden])"); });
      count.textContent = "showing " + n + " of " + all.length;
      count.setAttribute("data-shown", String(n));
    }
    Object.keys(levels).forEach(function (l) { levels[l].addEventListener("change", apply); });
    kind.addEventListener("change", apply);
    apply();
  }
  function card(f) {
    var c = el("article", { cls: "finding " + f.level, "data-level": f.level, "data-kind": f.id, id: "finding-" + D.findings.indexOf(f) });
    c.appendChild(el("div", { cls: "head" }, [el("span", { cls: "badge lvl-" + f.level, text: f.level }), el("span", { cls: "kind", text: f.id }), f.place ? el("span", { cls: "meta mono", text: f.place }) : null]));
    c.appendChild(el("p", { cls: "msg", text: f.message }));
    if (f.agents.length) c.appendChild(el("div", { cls: "meta", text: "agents: " + f.agents.join(", ") }));
    // The matrix cells whose decisions rest on the rule it is about.
    var cs = (cellsOf[D.findings.indexOf(f)] || []).filter(function (x) { return !agents[x[0]].internal; });
    if (cs.length) {
      var links = [el("span", { text: "in the matrix: " })];
      cs.slice(0, 8).forEach(function (x, k) {
        if (k) links.push(", ");
        links.push(el("a", { href: cellHash(x[0], x[1]), cls: "cell-link", text: agents[x[0]].name + " · " + D.permissions[x[1]] }));
      });
      if (cs.length > 8) links.push(" and " + (cs.length - 8) + " more");
      c.appendChild(el("div", { cls: "meta" }, links));
    }
    if (f.snippet) {
      var pre = el("pre", { cls: "snippet", "aria-label": "source at " + f.place });
      f.snippet.lines.forEach(function (line, k) {
        var n = f.snippet.first + k;
        pre.appendChild(el("span", { cls: "line" + (n === f.snippet.mark ? " mark" : "") }, [el("span", { cls: "ln", text: String(n) }), line || " "]));
      });
      c.appendChild(pre);
    }
    f.witnesses.slice(0, 3).forEach(function (w) {
      c.appendChild(el("div", { cls: "witness" }, ["witness: ", el("code", { text: w.permission + " " + q(w.input) }), " → ", badge(w.action)]));
    });
    f.related.slice(0, 3).forEach(function (r) {
      var s = r.source;
      c.appendChild(el("div", { cls: "meta" }, [s ? s.path + ":" + s.line + ":" + s.column + ": " : "", r.message]));
    });
    if (f.fix) c.appendChild(el("div", { cls: "fix" }, [el("strong", { text: "fix: " }), f.fix.title + " (" + f.fix.safety + ": permaudit check --fix" + (f.fix.safety === "narrowing" ? " --unsafe-fixes" : "") + ")"]));
    if (f.help) c.appendChild(el("div", { cls: "help" }, [el("strong", { text: "help: " }), f.help]));
    return c;
  }

  renderDiff();
  renderGlance();
  renderMatrix();
  renderFiles();
  renderDelegation();
  renderFindings();
  if (D.diff) navLink("diff", "What changed", D.diff.causes.filter(function (c) { return c.class === "widened"; }).length + " widened");
  navLink("glance", "At a glance", D.summary.error + D.summary.warning ? plural(D.summary.error + D.summary.warning, "problem", "problems") : null);
  navLink("matrix", "Agents × permissions", agents.filter(function (a) { return !a.internal; }).length + " agents");
  navLink("files", "Files & commands", D.files ? D.files.total + " files" : null);
  navLink("delegation", "Delegation", D.delegation.edges.length + " edges");
  navLink("findings", "Findings", D.findings.length);
  window.addEventListener("hashchange", openHash);
  openHash();
  document.body.setAttribute("data-ready", "true");
})();
