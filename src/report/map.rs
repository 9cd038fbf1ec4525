//! `permaudit map` output.
//!
//! Human: one section per group of agents that decide every file alike (same actions by
//! the same rules): totals, the directory tree collapsed wherever a directory is uniform
//! (every file below it has the same read and edit actions) with its counts and deciding
//! rules, the files the agents can edit without asking (as whole directories where
//! possible), and the secret-shaped files they can read without asking.
//!
//! JSON Lines, version 1: one object per file and agent, files in git's order, agents in
//! `agent list` order for each file:
//! `{"version":1,"agent","path","tracked","secret","read":{"action","rule"},"edit":{"action","rule"}}`
//! where `rule` is the index into the agent's rules (as in `rules` and `explain`), null when
//! nothing matched (OpenCode asks).

use super::Style;
use crate::agents::Agent;
use crate::map::{AgentMap, FileSet, NO_RULE, Tree, effect, is_secret_shaped};
use crate::model::{Effect, Rule};
use crate::project::Project;
use std::collections::HashMap;
use std::io::{self, Write};

/// Write the JSON Lines records.
pub fn json(
    out: &mut dyn Write,
    agents: &[&Agent],
    maps: &[AgentMap],
    files: &FileSet,
) -> io::Result<()> {
    // Per agent: its name as JSON, and `{"action":…,"rule":…}` for each rule and for none.
    let names: Vec<String> = agents.iter().map(|a| json_str(&a.name)).collect();
    let frags: Vec<Vec<String>> = agents
        .iter()
        .map(|a| {
            let mut v: Vec<String> = (0..a.rules.len())
                .map(|i| {
                    format!(
                        "{{\"action\":\"{}\",\"rule\":{i}}}",
                        effect(&a.rules, i as u32)
                    )
                })
                .collect();
            v.push("{\"action\":\"ask\",\"rule\":null}".to_string());
            v
        })
        .collect();
    let frag = |agent: usize, rule: u32| -> &str {
        let v = &frags[agent];
        let i = if rule == NO_RULE {
            v.len() - 1
        } else {
            (rule as usize).min(v.len() - 1)
        };
        &v[i]
    };
    for (f, path) in files.paths.iter().enumerate() {
        let path_json = json_str(path);
        let tracked = files.tracked.get(f).copied().unwrap_or(true);
        let secret = is_secret_shaped(path);
        for m in maps {
            let a = m.agent;
            writeln!(
                out,
                "{{\"version\":1,\"agent\":{},\"path\":{path_json},\"tracked\":{tracked},\"secret\":{secret},\"read\":{},\"edit\":{}}}",
                names[a],
                frag(a, m.read[f]),
                frag(a, m.edit[f]),
            )?;
        }
    }
    Ok(())
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Human output options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Deepest directory level expanded when it is not uniform.
    pub depth: usize,
    /// Most entries listed in the "edit without asking" and "secret" sections.
    pub limit: usize,
}

const EFFECTS: [Effect; 3] = [Effect::Allow, Effect::Ask, Effect::Deny];

fn eff_index(e: Effect) -> usize {
    match e {
        Effect::Allow => 0,
        Effect::Ask => 1,
        Effect::Deny => 2,
    }
}

/// One agent's decisions, ready to count.
struct View<'a> {
    agent: &'a Agent,
    map: &'a AgentMap,
    /// Effect index of each rule; the last entry is "no rule".
    eff: Vec<u8>,
}

impl View<'_> {
    fn e(&self, rule: u32) -> usize {
        let i = if rule == NO_RULE {
            self.eff.len() - 1
        } else {
            (rule as usize).min(self.eff.len() - 1)
        };
        self.eff[i] as usize
    }
    fn cell(&self, f: usize) -> usize {
        self.e(self.map.read[f]) * 3 + self.e(self.map.edit[f])
    }
    fn counts(&self, files: impl Iterator<Item = usize>) -> [usize; 9] {
        let mut c = [0; 9];
        for f in files {
            c[self.cell(f)] += 1;
        }
        c
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `allow 3 · ask 1` for one permission's counts (zeros left out), or just `allow` when
/// uniform and `bare`.
fn summary(per: [usize; 3], bare: bool, style: Style) -> String {
    let nonzero: Vec<usize> = (0..3).filter(|&i| per[i] > 0).collect();
    if bare && nonzero.len() == 1 {
        return style.paint_action(&EFFECTS[nonzero[0]].to_string());
    }
    nonzero
        .iter()
        .map(|&i| {
            format!(
                "{} {}",
                style.paint_action(&EFFECTS[i].to_string()),
                thousands(per[i])
            )
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

fn split(c: [usize; 9]) -> ([usize; 3], [usize; 3]) {
    let mut r = [0; 3];
    let mut e = [0; 3];
    for (i, n) in c.iter().enumerate() {
        r[i / 3] += n;
        e[i % 3] += n;
    }
    (r, e)
}

/// A rule as `"pattern" action origin`, config files inside the worktree named relative to
/// it (the tree's paths are too).
fn describe(p: &Project, r: &Rule) -> String {
    let origin = match r.loc {
        Some(l) => {
            let pos = p.loaded.sources.position(l);
            let wt = p.loaded.paths().worktree.display().to_string();
            let name = match pos.name.strip_prefix(wt.as_str()) {
                Some(rest) if wt != "/" && rest.starts_with('/') => rest[1..].to_string(),
                _ => pos.name.clone(),
            };
            format!("{name}:{}:{}", pos.line, pos.column)
        }
        None => format!("[{}]", r.builtin.as_deref().unwrap_or("built-in")),
    };
    format!(
        "{} {} {}",
        serde_json::to_string(&r.pattern).unwrap_or_default(),
        r.action,
        origin
    )
}

/// The distinct deciding rules of `files` for one permission, first few.
fn deciders(p: &Project, v: &View<'_>, perm: usize, files: impl Iterator<Item = usize>) -> String {
    const MAX: usize = 3;
    let decisions = v.map.decisions(perm);
    let mut seen: Vec<u32> = Vec::new();
    let mut more = 0usize;
    for f in files {
        let r = decisions[f];
        if seen.contains(&r) {
            continue;
        }
        if seen.len() < MAX {
            seen.push(r);
        } else {
            more += 1;
            if more > 50 {
                break;
            }
        }
    }
    seen.sort_unstable();
    let mut parts: Vec<String> = seen
        .iter()
        .map(|&r| match v.agent.rules.get(r as usize) {
            Some(rule) => describe(p, rule),
            None => "no rule (OpenCode asks)".to_string(),
        })
        .collect();
    if more > 0 {
        parts.push("and other rules".to_string());
    }
    parts.join("; ")
}

struct Line {
    name: String,
    rest: String,
}

struct Ctx<'a> {
    p: &'a Project,
    files: &'a FileSet,
    tree: &'a Tree,
    opts: Options,
    style: Style,
}

fn uniform(c: &[usize; 9]) -> bool {
    c.iter().filter(|n| **n > 0).count() == 1
}

fn node_line(
    cx: &Ctx<'_>,
    v: &View<'_>,
    name: String,
    n: usize,
    c: [usize; 9],
    range: Option<std::ops::Range<usize>>,
    list: &[usize],
) -> Line {
    let (r, e) = split(c);
    let mut rest = format!(
        "{:>9}  read {}  edit {}",
        plural(n, "file", "files"),
        summary(r, true, cx.style),
        summary(e, true, cx.style)
    );
    if uniform(&c) {
        let files = || -> Box<dyn Iterator<Item = usize> + '_> {
            match &range {
                Some(rg) => Box::new(rg.clone()),
                None => Box::new(list.iter().copied()),
            }
        };
        rest.push_str(&cx.style.dim(&format!(
            "  ← read: {} | edit: {}",
            deciders(cx.p, v, 0, files()),
            deciders(cx.p, v, 1, files())
        )));
    }
    Line { name, rest }
}

/// Most directories that are not uniform expanded under one directory (the largest);
/// the others are summed up in one line.
const MIXED_CAP: usize = 8;
/// Uniform siblings with the same actions are listed one by one up to this many, and
/// summed up in one line beyond.
const GROUP_CAP: usize = 3;

enum Item {
    Mixed(usize),
    MoreMixed(Vec<usize>),
    Dirs(Vec<usize>),
    Files(Vec<usize>),
}

fn dir_name(path: &str) -> &str {
    if path.is_empty() {
        return "./";
    }
    let parent_len = path[..path.len() - 1].rfind('/').map_or(0, |k| k + 1);
    &path[parent_len..]
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One directory's line (indented by `pad`), with its counts `c`.
fn dir_line(cx: &Ctx<'_>, v: &View<'_>, pad: &str, dir: &crate::map::Dir, c: [usize; 9]) -> Line {
    let label = format!("{pad}{}", dir_name(&dir.path));
    node_line(
        cx,
        v,
        label,
        dir.range.len(),
        c,
        Some(dir.range.clone()),
        &[],
    )
}

fn walk(cx: &Ctx<'_>, v: &View<'_>, d: usize, c: [usize; 9], indent: usize, out: &mut Vec<Line>) {
    let dir = &cx.tree.dirs[d];
    out.push(dir_line(cx, v, &"  ".repeat(indent), dir, c));
    if uniform(&c) || dir.depth >= cx.opts.depth {
        return;
    }
    // Children: uniform directories grouped by their actions, the largest mixed ones
    // expanded, files grouped by their actions; each item placed at its first path.
    let mut items: Vec<(usize, Item)> = Vec::new();
    let mut by_cell: Vec<Vec<usize>> = vec![Vec::new(); 9];
    let mut mixed: Vec<(usize, [usize; 9])> = Vec::new();
    for &sub in &dir.dirs {
        let sc = v.counts(cx.tree.dirs[sub].range.clone());
        match (0..9).find(|&i| sc[i] > 0 && sc[i] == cx.tree.dirs[sub].range.len()) {
            Some(cell) => by_cell[cell].push(sub),
            None => mixed.push((sub, sc)),
        }
    }
    for group in by_cell.into_iter().filter(|g| !g.is_empty()) {
        let key = cx.tree.dirs[group[0]].range.start;
        if group.len() <= GROUP_CAP {
            for sub in group {
                items.push((cx.tree.dirs[sub].range.start, Item::Dirs(vec![sub])));
            }
        } else {
            items.push((key, Item::Dirs(group)));
        }
    }
    let mut by_size: Vec<usize> = (0..mixed.len()).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(cx.tree.dirs[mixed[i].0].range.len()));
    let mut rest = Vec::new();
    for (rank, &i) in by_size.iter().enumerate() {
        let sub = mixed[i].0;
        if rank < MIXED_CAP {
            items.push((cx.tree.dirs[sub].range.start, Item::Mixed(i)));
        } else {
            rest.push(sub);
        }
    }
    let mut files_by_cell: Vec<Vec<usize>> = vec![Vec::new(); 9];
    for &f in &dir.files {
        files_by_cell[v.cell(f)].push(f);
    }
    let few = dir.files.len() <= 8;
    for group in files_by_cell.into_iter().filter(|g| !g.is_empty()) {
        if few || group.len() <= GROUP_CAP {
            for f in group {
                items.push((f, Item::Files(vec![f])));
            }
        } else {
            items.push((group[0], Item::Files(group)));
        }
    }
    items.sort_by_key(|(k, _)| *k);
    if !rest.is_empty() {
        rest.sort_unstable();
        items.push((usize::MAX, Item::MoreMixed(rest)));
    }
    let pad = "  ".repeat(indent + 1);
    for (_, item) in items {
        match item {
            Item::Mixed(i) => walk(cx, v, mixed[i].0, mixed[i].1, indent + 1, out),
            Item::Dirs(group) => {
                let first = &cx.tree.dirs[group[0]];
                let c = v.counts(first.range.clone());
                if group.len() == 1 {
                    out.push(dir_line(cx, v, &pad, first, c));
                } else {
                    let n: usize = group.iter().map(|&g| cx.tree.dirs[g].range.len()).sum();
                    let mut counts = [0; 9];
                    if let Some(cell) = (0..9).find(|&i| c[i] > 0) {
                        counts[cell] = n;
                    }
                    let files: Vec<usize> = group
                        .iter()
                        .flat_map(|&g| cx.tree.dirs[g].range.clone())
                        .collect();
                    let label = format!(
                        "{pad}{} directories ({}, {}, …)",
                        thousands(group.len()),
                        dir_name(&first.path),
                        dir_name(&cx.tree.dirs[group[1]].path)
                    );
                    out.push(node_line(cx, v, label, n, counts, None, &files));
                }
            }
            Item::MoreMixed(group) => {
                let n: usize = group.iter().map(|&g| cx.tree.dirs[g].range.len()).sum();
                let c = v.counts(group.iter().flat_map(|&g| cx.tree.dirs[g].range.clone()));
                let label = format!(
                    "{pad}{} more mixed directories ({}, …)",
                    thousands(group.len()),
                    dir_name(&cx.tree.dirs[group[0]].path)
                );
                out.push(node_line(cx, v, label, n, c, None, &[]));
            }
            Item::Files(group) => {
                let mut counts = [0; 9];
                counts[v.cell(group[0])] = group.len();
                let label = if group.len() == 1 {
                    format!("{pad}{}", base_name(&cx.files.paths[group[0]]))
                } else {
                    format!(
                        "{pad}{} files ({}, {}, …)",
                        thousands(group.len()),
                        base_name(&cx.files.paths[group[0]]),
                        base_name(&cx.files.paths[group[1]])
                    )
                };
                out.push(node_line(cx, v, label, group.len(), counts, None, &group));
            }
        }
    }
}

/// The smallest list of directories and files covering exactly the files whose edit is
/// allowed.
fn edit_cover(cx: &Ctx<'_>, v: &View<'_>, d: usize, out: &mut Vec<(String, usize)>) {
    let dir = &cx.tree.dirs[d];
    let allowed = dir
        .range
        .clone()
        .filter(|&f| v.e(v.map.edit[f]) == 0)
        .count();
    if allowed == 0 {
        return;
    }
    if allowed == dir.range.len() {
        out.push((
            if dir.path.is_empty() {
                "./".into()
            } else {
                dir.path.clone()
            },
            allowed,
        ));
        return;
    }
    let mut entries: Vec<(String, usize)> = Vec::new();
    for &sub in &dir.dirs {
        edit_cover(cx, v, sub, &mut entries);
    }
    for &f in &dir.files {
        if v.e(v.map.edit[f]) == 0 {
            entries.push((cx.files.paths[f].clone(), 1));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    out.extend(entries);
}

/// The human report.
pub fn human(
    p: &Project,
    agents: &[&Agent],
    maps: &[AgentMap],
    files: &FileSet,
    tree: &Tree,
    opts: Options,
    style: Style,
) -> String {
    let cx = Ctx {
        p,
        files,
        tree,
        opts,
        style,
    };
    let views: Vec<View<'_>> = maps
        .iter()
        .map(|m| {
            let a = agents[m.agent];
            let mut eff: Vec<u8> = (0..a.rules.len())
                .map(|i| eff_index(effect(&a.rules, i as u32)) as u8)
                .collect();
            eff.push(eff_index(Effect::Ask) as u8);
            View {
                agent: a,
                map: m,
                eff,
            }
        })
        .collect();
    // Agents that decide every file by the same rules are shown together.
    let mut ids: HashMap<String, u32> = HashMap::new();
    let identity: Vec<Vec<u32>> = views
        .iter()
        .map(|v| {
            v.agent
                .rules
                .iter()
                .map(|r| {
                    let key = format!(
                        "{}\0{}\0{}\0{:?}\0{:?}\0{:?}",
                        r.permission, r.pattern, r.action, r.layer, r.loc, r.builtin
                    );
                    let next = ids.len() as u32;
                    *ids.entry(key).or_insert(next)
                })
                .collect()
        })
        .collect();
    let same = |a: usize, b: usize| -> bool {
        let id = |v: usize, r: u32| identity[v].get(r as usize).copied().unwrap_or(u32::MAX);
        (0..2).all(|perm| {
            let (x, y) = (views[a].map.decisions(perm), views[b].map.decisions(perm));
            x.iter().zip(y).all(|(&i, &j)| id(a, i) == id(b, j))
        })
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..views.len() {
        match groups.iter_mut().find(|g| same(g[0], i)) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }

    let mut s = String::new();
    let secret: Vec<usize> = (0..files.len())
        .filter(|&f| is_secret_shaped(&files.paths[f]))
        .collect();
    for g in &groups {
        let v = &views[g[0]];
        let names: Vec<&str> = g.iter().map(|&i| views[i].agent.name.as_str()).collect();
        let label = if names.len() == 1 { "agent" } else { "agents" };
        s.push_str(&style.bold(&format!("{label} {}", names.join(", "))));
        s.push('\n');
        let c = v.counts(0..files.len());
        let (r, e) = split(c);
        s.push_str(&format!(
            "  read: {}   edit: {}\n",
            summary(r, false, style),
            summary(e, false, style)
        ));
        if files.is_empty() {
            s.push_str("  (no files)\n\n");
            continue;
        }
        let mut lines = Vec::new();
        walk(&cx, v, 0, c, 1, &mut lines);
        let width = lines
            .iter()
            .map(|l| l.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(48);
        for l in &lines {
            let pad = width.saturating_sub(l.name.chars().count());
            s.push_str(&format!("{}{}  {}\n", l.name, " ".repeat(pad), l.rest));
        }

        let mut cover = Vec::new();
        edit_cover(&cx, v, 0, &mut cover);
        let editable: usize = cover.iter().map(|(_, n)| n).sum();
        s.push_str(&format!(
            "  edit without asking: {}",
            if editable == files.len() {
                format!("every file ({})", thousands(editable))
            } else {
                plural(editable, "file", "files")
            }
        ));
        if editable > 0 && editable < files.len() {
            s.push('\n');
            for (path, n) in cover.iter().take(opts.limit) {
                if path.ends_with('/') {
                    s.push_str(&format!("    {path}  ({})\n", plural(*n, "file", "files")));
                } else {
                    s.push_str(&format!("    {path}\n"));
                }
            }
            if cover.len() > opts.limit {
                s.push_str(&format!(
                    "    … {} more (all of them: --format json)\n",
                    plural(cover.len() - opts.limit, "entry", "entries")
                ));
            }
        } else {
            s.push('\n');
        }

        let readable: Vec<usize> = secret
            .iter()
            .copied()
            .filter(|&f| v.e(v.map.read[f]) == 0)
            .collect();
        if readable.is_empty() {
            s.push_str("  secret-shaped files readable without asking: none\n");
        } else {
            s.push_str(&format!(
                "  secret-shaped files readable without asking: {}\n",
                thousands(readable.len())
            ));
            for &f in readable.iter().take(opts.limit) {
                s.push_str(&format!(
                    "    {}  {}\n",
                    files.paths[f],
                    style.dim(&format!("← {}", deciders(p, v, 0, std::iter::once(f))))
                ));
            }
            if readable.len() > opts.limit {
                s.push_str(&format!(
                    "    … {} more (all of them: --format json)\n",
                    thousands(readable.len() - opts.limit)
                ));
            }
        }
        s.push('\n');
    }
    s
}
