//! Seeded generator of OpenCode config trees (one `Case` per seed and index).
//!
//! A case is a set of files under a case root, plus environment variables and a cwd.
//! The root layout is fixed:
//!
//! ```text
//! home/                 $HOME (CONFIG = home/.config/opencode, ~/.opencode, agents, skills)
//! proj/                 the git root (git init'ed by the harness), maybe cwd
//! proj/sub/             a subdirectory, the cwd in some cases
//! extra/                OPENCODE_CONFIG file
//! cfgdir/               OPENCODE_CONFIG_DIR
//! managed/              OPENCODE_TEST_MANAGED_CONFIG_DIR (always set, often empty)
//! opencode.json         above the git root: OpenCode must ignore it
//! ```
//!
//! Values in `Case::env` may contain `@ROOT@`, replaced by the absolute case root.

use super::json::{J, Style, render_json, render_yaml};
use super::rng::Rng;

pub const ROOT_TOKEN: &str = "@ROOT@";

/// Stream ids, so the two tests draw independent cases from one seed.
pub const STREAM_TREES: u64 = 1;
pub const STREAM_GLOB: u64 = 2;

#[derive(Clone, Debug)]
pub struct Case {
    pub id: String,
    /// Files relative to the case root.
    pub files: Vec<(String, Vec<u8>)>,
    /// Directories to create (relative), even when empty.
    pub dirs: Vec<String>,
    /// Extra environment, on top of the harness's isolated base environment.
    pub env: Vec<(String, String)>,
    /// The cwd, relative to the case root.
    pub cwd: String,
    /// Run permaudit as `permaudit -C <cwd>` from the case root instead of from the cwd.
    pub dash_c: bool,
    /// What the generator chose, for humans reading a failure.
    pub notes: Vec<String>,
}

impl Case {
    pub fn env_resolved(&self, root: &std::path::Path) -> Vec<(String, String)> {
        let root = root.to_str().expect("utf-8 case root");
        self.env
            .iter()
            .map(|(k, v)| (k.clone(), v.replace(ROOT_TOKEN, root)))
            .collect()
    }
}

const ACTIONS: &[&str] = &["allow", "ask", "deny"];
const COMMON_PERMS: &[&str] = &[
    "bash",
    "edit",
    "read",
    "glob",
    "grep",
    "task",
    "external_directory",
    "webfetch",
    "*",
    "skill",
];
const ALL_PERMS: &[&str] = &[
    "bash",
    "edit",
    "read",
    "glob",
    "grep",
    "list",
    "task",
    "external_directory",
    "lsp",
    "skill",
    "webfetch",
    "websearch",
    "todowrite",
    "question",
    "doom_loop",
    "write",
    "patch",
    "multiedit",
    "apply_patch",
    "*",
    "mcp_foo",
    "~/perm",
    "$HOME",
    "5",
    "01",
    "4294967295",
    "4294967294",
    "0",
    "gl*",
    "{env:PAT}",
    "ünï",
    "__proto__",
    "constructor",
    "toString",
];
/// Keys whose value must be an action string; an object there is an error (spec 3.1).
const ACTION_ONLY: &[&str] = &[
    "todowrite",
    "question",
    "webfetch",
    "websearch",
    "doom_loop",
];
const COMMON_PATTERNS: &[&str] = &["*", "git *", "rm *", "src/*", "*.env", "~/a/*", "5", "01"];
const ALL_PATTERNS: &[&str] = &[
    "*",
    "git *",
    "rm *",
    "src/*",
    "*.env",
    "~/a/*",
    "~",
    "~/",
    "~x/*",
    "$HOME/b/*",
    "$HOME",
    "$HOMEc",
    "${HOME}/z",
    "5",
    "01",
    "12",
    "4294967295",
    "4294967294",
    "0",
    "-1",
    "a?c",
    "src/**",
    " *",
    "",
    "ünï/*",
    "a\\b",
    "[ab]",
    "/tmp/*",
    "{env:PAT}",
    "x/~/y",
    "😀*",
    "~/.local/share/opencode/tool-output/*",
];
const TOOL_OUTPUT_PATTERNS: &[&str] = &[
    "~/.local/share/opencode/tool-output/*",
    "$HOME/.local/share/opencode/tool-output/*",
    "~/.local/share/opencode/tool-output/**",
    "~/.local/share/opencode/tool-output",
];
const TOOLS_KEYS: &[&str] = &[
    "write",
    "edit",
    "patch",
    "multiedit",
    "bash",
    "*",
    "apply_patch",
    "webfetch",
    "read",
    "mcp_foo",
    "task",
];
const AGENT_NAMES: &[&str] = &[
    "build",
    "plan",
    "general",
    "explore",
    "compaction",
    "title",
    "summary",
    "rev",
    "docs",
    "build",
];
const MD_NAMES: &[&str] = &["build", "plan", "rev", "docs", "helper", "explore"];

struct JsonSrc {
    /// Relative path, or `$NAME` for a config carried in environment variable NAME.
    path: String,
    j: J,
    style: Style,
    bom: bool,
    /// Final text, bypassing the tree (empty files, garbage).
    text: Option<String>,
}

struct MdSrc {
    path: String,
    front: Option<J>,
    /// The front matter as JSON, for the `---json` fence.
    json_front: Option<String>,
    /// Front matter text used instead of `front` (broken YAML).
    yaml_text: Option<String>,
    /// A gray-matter/js-yaml corner case applied to the whole file (see `EXOTIC_MD`).
    exotic: Option<&'static str>,
}

/// Corners of gray-matter 4 + js-yaml 3 that a YAML 1.2 reader gets wrong easily.
const EXOTIC_MD: &[&str] = &[
    "crlf",
    "bom",
    "four-dash",
    "unclosed",
    "comment-only",
    "json-fence",
    "hex-key",
    "octal-key",
    "tilde-key",
    "anchor",
    "merge-key",
    "yes-no",
    "proto-key",
    "flow-map",
    "empty-value",
];

fn exotic_front(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "comment-only" => "# only a comment\n",
        "hex-key" => "permission:\n  bash:\n    0x1F: deny\n    \"*\": allow\n",
        "octal-key" => "permission:\n  bash:\n    \"*\": allow\n    010: deny\n",
        "tilde-key" => "permission:\n  ~: deny\n  bash: ask\n",
        "anchor" => "permission:\n  bash: &a\n    \"git *\": allow\n    \"*\": ask\n  edit: *a\n",
        "merge-key" => {
            "permission:\n  edit:\n    \"*\": deny\n    <<: {\"*\": ask, \"5\": allow}\n    \"git *\": allow\n"
        }
        "yes-no" => "tools:\n  bash: no\n",
        "proto-key" => "permission:\n  __proto__: deny\n  bash: ask\n",
        "flow-map" => {
            "permission: {bash: deny, \"*\": ask, edit: {\"src/*\": allow}}\nmode: subagent\n"
        }
        "empty-value" => "mode:\npermission:\n  bash:\n",
        _ => return None,
    })
}

struct Gen {
    rng: Rng,
    notes: Vec<String>,
    env: Vec<(String, String)>,
    files: Vec<(String, Vec<u8>)>,
    jsons: Vec<JsonSrc>,
    mds: Vec<MdSrc>,
    uses_file_ref: bool,
    /// Directory (relative to the root) of the config file being generated, for a relative
    /// `{file:act.txt}`, which resolves against the config file's directory.
    cur_dir: Option<String>,
    /// Generating markdown front matter: no `{env:}`/`{file:}` (markdown gets no substitution,
    /// so those would make every such case invalid).
    md_mode: bool,
}

pub fn generate(seed: u64, index: u64) -> Case {
    let mut g = Gen {
        rng: Rng::for_case(seed, STREAM_TREES, index),
        notes: Vec::new(),
        env: Vec::new(),
        files: Vec::new(),
        jsons: Vec::new(),
        mds: Vec::new(),
        uses_file_ref: false,
        cur_dir: None,
        md_mode: false,
    };
    let r = &mut g.rng;
    let in_sub = r.percent(40);
    let cwd = if in_sub { "proj/sub" } else { "proj" }.to_string();
    let mut dirs = vec!["managed".to_string()];
    if in_sub {
        dirs.push("proj/sub".into());
    }
    let dash_c = g.rng.percent(30);

    // --- JSON config sources --------------------------------------------------------------
    if g.rng.percent(45) {
        let names = ["config.json", "opencode.json", "opencode.jsonc"];
        let mut any = false;
        for (i, n) in names.iter().enumerate() {
            if g.rng.percent(if i == 1 { 60 } else { 30 }) {
                g.json_file(&format!("home/.config/opencode/{n}"));
                any = true;
            }
        }
        if !any {
            g.json_file("home/.config/opencode/opencode.json");
        }
    }
    if g.rng.percent(20) {
        let ext = if g.rng.percent(70) { "json" } else { "jsonc" };
        let p = format!("extra/custom.{ext}");
        g.env
            .push(("OPENCODE_CONFIG".into(), format!("{ROOT_TOKEN}/{p}")));
        g.json_file(&p);
    }
    if g.rng.percent(55) {
        g.json_file("proj/opencode.json");
    }
    if g.rng.percent(20) {
        g.json_file("proj/opencode.jsonc");
    }
    // proj/sub files also appear when the cwd is proj: OpenCode must not read them.
    if g.rng.percent(if in_sub { 40 } else { 8 }) {
        let ext = if g.rng.percent(70) { "json" } else { "jsonc" };
        g.json_file(&format!("proj/sub/opencode.{ext}"));
    }
    if g.rng.percent(8) {
        g.json_file("opencode.json");
        g.notes
            .push("opencode.json above the git root (must be ignored)".into());
    }
    if g.rng.percent(30) {
        let ext = if g.rng.percent(70) { "json" } else { "jsonc" };
        g.json_file(&format!("proj/.opencode/opencode.{ext}"));
    }
    if g.rng.percent(if in_sub { 25 } else { 5 }) {
        g.json_file("proj/sub/.opencode/opencode.json");
    }
    if g.rng.percent(15) {
        g.json_file("home/.opencode/opencode.json");
    }
    let config_dir = g.rng.percent(15);
    if config_dir {
        g.env
            .push(("OPENCODE_CONFIG_DIR".into(), format!("{ROOT_TOKEN}/cfgdir")));
        dirs.push("cfgdir".into());
        if g.rng.percent(80) {
            let ext = if g.rng.percent(70) { "json" } else { "jsonc" };
            g.json_file(&format!("cfgdir/opencode.{ext}"));
        }
    }
    if g.rng.percent(15) {
        g.json_file("$OPENCODE_CONFIG_CONTENT");
    }
    if g.rng.percent(12) {
        let ext = if g.rng.percent(70) { "json" } else { "jsonc" };
        g.json_file(&format!("managed/opencode.{ext}"));
    }
    if g.jsons.is_empty() && g.rng.percent(85) {
        g.json_file("proj/opencode.json");
    }

    // --- markdown agents and skills ---------------------------------------------------------
    if g.rng.percent(35) {
        for _ in 0..g.rng.range(1, 3) {
            g.md_agent(in_sub, config_dir);
        }
    }
    if g.rng.percent(6) {
        let p = g.rng.pick(&[
            "proj/.opencode/skill/demo/SKILL.md",
            "home/.claude/skills/demo/SKILL.md",
            "proj/.agents/skills/demo/SKILL.md",
            "home/.config/opencode/skills/demo/SKILL.md",
        ]);
        g.files.push((
            p.to_string(),
            b"---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n".to_vec(),
        ));
        g.notes.push(format!("skill {p}"));
    }

    // --- environment ------------------------------------------------------------------------
    if g.rng.percent(15) {
        let v = g.env_permission();
        g.notes.push(format!("OPENCODE_PERMISSION={v}"));
        g.env.push(("OPENCODE_PERMISSION".into(), v));
    }
    if g.rng.percent(3) {
        let (k, v) = g.rng.pick(&[
            ("OPENCODE_CONFIG", "@ROOT@/extra/missing.json"),
            ("OPENCODE_CONFIG_DIR", "@ROOT@/no-such-dir"),
        ]);
        if !g.env.iter().any(|(n, _)| n == k) {
            g.notes.push(format!("{k} points at nothing"));
            g.env.push((k.into(), v.into()));
        }
    }
    if g.rng.percent(5) {
        g.notes.push("TMPDIR=$ROOT/tmp".into());
        g.env.push(("TMPDIR".into(), format!("{ROOT_TOKEN}/tmp")));
        dirs.push("tmp".into());
    }
    if g.rng.percent(10) {
        let v = g
            .rng
            .pick(&["1", "1", "true", "true", "TRUE", "0", "false"]);
        g.notes.push(format!("OPENCODE_DISABLE_PROJECT_CONFIG={v}"));
        g.env
            .push(("OPENCODE_DISABLE_PROJECT_CONFIG".into(), v.into()));
    }

    // --- about 15% broken ---------------------------------------------------------------------
    if g.rng.percent(15) {
        g.break_something(in_sub);
    }

    // Variables for `{env:…}` substitution are always present; unused ones are harmless.
    let act = g.rng.pick(ACTIONS).to_string();
    let pat = g
        .rng
        .pick(&["rm *", "src/*", "~/secret/*", "5"])
        .to_string();
    g.env.push(("ACT".into(), act));
    g.env.push(("PAT".into(), pat));
    g.env
        .push(("EVIL".into(), "deny\", \"edit\": \"deny".into()));
    if g.uses_file_ref {
        g.files.push(("home/act.txt".into(), b"deny\n".to_vec()));
    }

    // --- render -----------------------------------------------------------------------------
    let mut files = std::mem::take(&mut g.files);
    for src in std::mem::take(&mut g.jsons) {
        let mut text = match src.text {
            Some(t) => t,
            None => render_json(&src.j, &src.style, &mut g.rng),
        };
        if src.bom {
            text.insert(0, '\u{feff}');
        }
        if let Some(var) = src.path.strip_prefix('$') {
            g.env.push((var.to_string(), text));
        } else {
            files.push((src.path, text.into_bytes()));
        }
    }
    for md in std::mem::take(&mut g.mds) {
        let body = "You are a conformance test agent.\n";
        let text = match (md.yaml_text, md.front) {
            (Some(y), _) => format!("---\n{y}---\n{body}"),
            (None, Some(f)) => format!("---\n{}---\n{body}", render_yaml(&f, &mut g.rng)),
            (None, None) => body.to_string(),
        };
        let text = match md.exotic {
            None => text,
            Some("crlf") => text.replace('\n', "\r\n"),
            Some("bom") => format!("\u{feff}{text}"),
            Some("four-dash") => format!("-{text}"),
            // Both fences removed, the opening one put back: no closing fence.
            Some("unclosed") => format!("---\n{}", text.replacen("---\n", "", 2)),
            Some("json-fence") => {
                let json = md.json_front.unwrap_or_default();
                format!("---json\n{json}\n---\n{body}")
            }
            Some(k) => format!("---\n{}---\n{body}", exotic_front(k).expect("exotic kind")),
        };
        files.push((md.path.clone(), text.clone().into_bytes()));
        if g.rng.percent(4) {
            // The same text twice: gray-matter caches per text, a failure included.
            let twin = md.path.replace(".md", "-twin.md");
            g.notes.push(format!("{twin}: same text as {}", md.path));
            files.push((twin, text.into_bytes()));
        }
    }
    Case {
        id: format!("{seed}-{index}"),
        files,
        dirs,
        env: g.env,
        cwd,
        dash_c,
        notes: g.notes,
    }
}

impl Gen {
    fn json_file(&mut self, path: &str) {
        self.cur_dir = if path.starts_with('$') {
            None
        } else {
            Some(path.rsplit_once('/').map_or("", |(d, _)| d).to_string())
        };
        let j = self.config();
        self.cur_dir = None;
        let r = &mut self.rng;
        let jsonc = path.ends_with(".jsonc");
        let style = Style {
            pretty: r.percent(60),
            comments: r.percent(if jsonc { 50 } else { 10 }),
            trailing_commas: r.percent(15),
            ..Style::default()
        };
        let bom = r.percent(3);
        let text = if r.percent(2) {
            self.notes.push(format!("{path}: empty file"));
            Some(String::new())
        } else {
            None
        };
        self.jsons.push(JsonSrc {
            path: path.to_string(),
            j,
            style,
            bom,
            text,
        });
    }

    fn action(&mut self) -> J {
        let r = &mut self.rng;
        if self.md_mode {
            return J::s(r.pick(ACTIONS));
        }
        match r.below(100) {
            0..=89 => J::s(r.pick(ACTIONS)),
            90..=94 => J::s("{env:ACT}"),
            95..=96 => {
                self.uses_file_ref = true;
                J::s("{file:~/act.txt}")
            }
            97 => match self.cur_dir.clone() {
                Some(dir) => {
                    let f = if dir.is_empty() {
                        "act.txt".to_string()
                    } else {
                        format!("{dir}/act.txt")
                    };
                    if !self.files.iter().any(|(p, _)| *p == f) {
                        self.files.push((f, b"  ask\n".to_vec()));
                    }
                    J::s("{file:act.txt}")
                }
                None => J::s("{env:ACT}"),
            },
            _ => J::s("{env:EVIL}"),
        }
    }

    fn perm_name(&mut self) -> &'static str {
        if self.rng.percent(70) {
            self.rng.pick(COMMON_PERMS)
        } else {
            self.rng.pick(ALL_PERMS)
        }
    }

    fn pattern(&mut self, perm: &str) -> &'static str {
        if perm == "external_directory" && self.rng.percent(30) {
            return self.rng.pick(TOOL_OUTPUT_PATTERNS);
        }
        if self.rng.percent(55) {
            self.rng.pick(COMMON_PATTERNS)
        } else {
            self.rng.pick(ALL_PATTERNS)
        }
    }

    fn pattern_obj(&mut self, perm: &str) -> J {
        let mut kv: Vec<(String, J)> = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let p = self.pattern(perm);
            let a = self.action();
            kv.push((p.to_string(), a));
        }
        if self.rng.percent(8) {
            // Duplicate pattern key: last value wins, first position kept (spec 3.5).
            let k = kv[self.rng.below(kv.len())].0.clone();
            let a = self.action();
            kv.push((k, a));
        }
        J::Obj(kv)
    }

    fn perm_obj(&mut self) -> J {
        let mut kv: Vec<(String, J)> = Vec::new();
        for _ in 0..self.rng.range(1, 4) {
            let name = self.perm_name();
            let v = if ACTION_ONLY.contains(&name) || self.rng.percent(45) {
                self.action()
            } else {
                self.pattern_obj(name)
            };
            kv.push((name.to_string(), v));
        }
        if self.rng.percent(8) {
            // Duplicate permission key, possibly changing shape.
            let k = kv[self.rng.below(kv.len())].0.clone();
            let v = if ACTION_ONLY.contains(&k.as_str()) || self.rng.percent(50) {
                self.action()
            } else {
                self.pattern_obj(&k)
            };
            kv.push((k, v));
        }
        J::Obj(kv)
    }

    fn permission(&mut self) -> J {
        if self.rng.percent(18) {
            J::s(self.rng.pick(ACTIONS))
        } else {
            self.perm_obj()
        }
    }

    fn tools(&mut self) -> J {
        let mut kv = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let k = self.rng.pick(TOOLS_KEYS).to_string();
            let v = if self.rng.percent(65) {
                "false"
            } else {
                "true"
            };
            kv.push((k, J::raw(v)));
        }
        J::Obj(kv)
    }

    fn agent_entry(&mut self, md: bool) -> J {
        let mut kv: Vec<(String, J)> = Vec::new();
        if self.rng.percent(if md { 70 } else { 30 }) {
            kv.push(("description".into(), J::s("test agent")));
        }
        if self.rng.percent(30) {
            let m = self.rng.pick(&["primary", "subagent", "all"]);
            kv.push(("mode".into(), J::s(m)));
        }
        if self.rng.percent(70) {
            let p = self.permission();
            kv.push(("permission".into(), p));
        }
        if self.rng.percent(25) {
            let t = self.tools();
            kv.push(("tools".into(), t));
        }
        if self.rng.percent(7) {
            kv.push(("disable".into(), J::raw("true")));
        } else if self.rng.percent(5) {
            kv.push(("disable".into(), J::raw("false")));
        }
        if !md && self.rng.percent(5) {
            kv.push(("x_option".into(), J::raw("1")));
        }
        if md && self.rng.percent(8) {
            // The V2 spelling in frontmatter: OpenCode keeps it as an option, no rules.
            let p = self.perm_obj();
            kv.push(("permissions".into(), p));
        }
        if kv.is_empty() {
            let p = self.permission();
            kv.push(("permission".into(), p));
        }
        J::Obj(kv)
    }

    fn config(&mut self) -> J {
        let mut kv: Vec<(String, J)> = Vec::new();
        if self.rng.percent(10) {
            kv.push(("$schema".into(), J::s("https://opencode.ai/config.json")));
        }
        if self.rng.percent(20) {
            let t = self.tools();
            kv.push(("tools".into(), t));
        }
        if self.rng.percent(75) {
            let p = self.permission();
            kv.push(("permission".into(), p));
        }
        if self.rng.percent(30) {
            let mut agents = Vec::new();
            for _ in 0..self.rng.range(1, 3) {
                let name = self.rng.pick(AGENT_NAMES).to_string();
                let e = self.agent_entry(false);
                agents.push((name, e));
            }
            // `agents` (plural) is the V2 spelling, lowered to `agent` where possible.
            let key = if self.rng.percent(10) {
                "agents"
            } else {
                "agent"
            };
            kv.push((key.into(), J::Obj(agents)));
        }
        if self.rng.percent(6) {
            // Local references join the external_directory whitelist (spec §4). No git
            // references: OpenCode would clone them.
            let pool: &[(&str, J)] = &[
                ("docs", J::s("./docs")),
                ("notes", J::s("~/notes")),
                ("up", J::s("../up")),
                ("abs", J::obj(vec![("path", J::s("/opt/ref"))])),
                ("bad name", J::s("./x")),
                ("a/b", J::s("./y")),
                ("docs", J::s("./docs2")),
            ];
            let mut refs = Vec::new();
            for _ in 0..self.rng.range(1, 3) {
                let (n, v) = self.rng.pick_ref(pool).clone();
                refs.push((n.to_string(), v));
            }
            let key = if self.rng.percent(80) {
                "references"
            } else {
                "reference"
            };
            kv.push((key.into(), J::Obj(refs)));
        }
        if self.rng.percent(5) {
            let paths = J::Arr(vec![J::s("myskills"), J::s("~/sk")]);
            kv.push(("skills".into(), J::obj(vec![("paths", paths)])));
            for f in ["proj/myskills/demo/SKILL.md", "home/sk/other/SKILL.md"] {
                if !self.files.iter().any(|(p, _)| p == f) {
                    self.files.push((
                        f.into(),
                        b"---\nname: demo\ndescription: d\n---\nx\n".to_vec(),
                    ));
                }
            }
        }
        if self.rng.percent(7) {
            let name = self.rng.pick(&["m2", "build", "rev"]).to_string();
            let p = self.permission();
            kv.push((
                "mode".into(),
                J::Obj(vec![(name, J::obj(vec![("permission", p)]))]),
            ));
        }
        if self.rng.percent(5) {
            kv.push(("x_unknown".into(), J::raw("1")));
        }
        if kv.is_empty() {
            let p = self.permission();
            kv.push(("permission".into(), p));
        }
        J::Obj(kv)
    }

    fn md_agent(&mut self, in_sub: bool, config_dir: bool) {
        let mut places = vec![
            "proj/.opencode/agent/{}.md",
            "proj/.opencode/agents/nested/{}.md",
            "home/.config/opencode/agent/{}.md",
            "home/.config/opencode/agents/{}.md",
            "home/.opencode/agent/{}.md",
            "proj/.opencode/mode/{}.md",
        ];
        if in_sub {
            places.push("proj/sub/.opencode/agent/{}.md");
        }
        if config_dir {
            places.push("cfgdir/agent/{}.md");
        }
        let place = self.rng.pick(&places);
        let name = self.rng.pick(MD_NAMES);
        let path = place.replace("{}", name);
        self.md_mode = true;
        let front = self.agent_entry(true);
        self.md_mode = false;
        let json_front = render_json(&front, &Style::default(), &mut self.rng);
        let mut src = MdSrc {
            path: path.clone(),
            front: Some(front),
            json_front: Some(json_front),
            yaml_text: None,
            exotic: None,
        };
        match self.rng.below(100) {
            0..=7 => {
                // Broken YAML: OpenCode loads the file as a prompt without permissions.
                let mut y = render_yaml(src.front.as_ref().unwrap(), &mut self.rng);
                let how = self.rng.pick(&[
                    "permission: [unclosed\n",
                    "\tbash: deny\n",
                    "mode: primary\nmode: subagent\n",
                    "permission:\n  bash:\n    *: deny\n",
                ]);
                y.push_str(how);
                self.notes.push(format!("{path}: broken YAML ({how:?})"));
                src.yaml_text = Some(y);
            }
            8..=10 => {
                self.notes.push(format!("{path}: no front matter"));
                src.front = None;
            }
            11..=18 => {
                let k = self.rng.pick(EXOTIC_MD);
                self.notes
                    .push(format!("{path}: gray-matter/js-yaml corner `{k}`"));
                src.exotic = Some(k);
            }
            _ => self.notes.push(format!("{path}: markdown agent")),
        }
        self.mds.push(src);
    }

    fn env_permission(&mut self) -> String {
        let r = self.rng.below(100);
        match r {
            0..=59 => {
                // Not validated by OpenCode: odd actions pass straight into the rules.
                let mut j = self.perm_obj();
                if self.rng.percent(50) {
                    let odd = self
                        .rng
                        .pick_ref(&[J::s("maybe"), J::raw("42"), J::raw("true"), J::raw("null")])
                        .clone();
                    let pat = self.pattern("bash");
                    j.entries_mut()
                        .unwrap()
                        .push(("bash".into(), J::Obj(vec![(pat.to_string(), odd)])));
                }
                if self.rng.percent(20) {
                    j.entries_mut()
                        .unwrap()
                        .push(("edit".into(), J::s("maybe")));
                }
                render_json(&j, &Style::default(), &mut self.rng)
            }
            60..=69 => format!("\"{}\"", self.rng.pick(ACTIONS)),
            70..=79 => "{bash: \"deny\"".into(),
            80..=84 => "[\"allow\"]".into(),
            85..=89 => "{\"bash\":[\"a\",\"b\"]}".into(),
            90..=94 => "42".into(),
            _ => "{\"bash\":{\"x\":{\"y\":\"z\"}}}".into(),
        }
    }

    /// Make the case invalid in one of the ways OpenCode refuses (spec 3.1, 5.6, 6).
    fn break_something(&mut self, in_sub: bool) {
        let kind = self.rng.below(20);
        if kind == 19 {
            self.notes
                .push("broken: OPENCODE_PERMISSION={\"bash\":null} (OpenCode crashes)".into());
            self.env.retain(|(k, _)| k != "OPENCODE_PERMISSION");
            self.env
                .push(("OPENCODE_PERMISSION".into(), "{\"bash\":null}".into()));
            return;
        }
        if kind == 15 {
            let mut places = vec![
                "proj/.opencode/agent/bad.md",
                "home/.config/opencode/agent/bad.md",
            ];
            if in_sub {
                places.push("proj/sub/.opencode/agents/bad.md");
            }
            let path = self.rng.pick(&places).to_string();
            let bad = self.rng.pick(&["{env:ACT}", "ALLOW", "yes"]).to_string();
            let front = J::obj(vec![
                ("description", J::s("bad agent")),
                ("permission", J::obj(vec![("bash", J::Str(bad.clone()))])),
            ]);
            self.notes
                .push(format!("broken: {path} has permission.bash = {bad:?}"));
            self.mds.push(MdSrc {
                path,
                front: Some(front),
                json_front: None,
                yaml_text: None,
                exotic: None,
            });
            return;
        }
        if self.jsons.is_empty() {
            self.json_file("proj/opencode.json");
        }
        let i = self.rng.below(self.jsons.len());
        let path = self.jsons[i].path.clone();
        let rng = &mut self.rng;
        let src = &mut self.jsons[i];
        src.text = None;
        let what: String = match kind {
            0 => {
                let bad = rng.pick(&["ALLOW", "Allow", "allowed", "", "yes"]);
                let name = rng.pick(&["bash", "edit", "read", "mcp_foo", "*"]);
                perm_entries(&mut src.j).push((name.into(), J::s(bad)));
                format!("permission.{name} = {bad:?}")
            }
            1 => {
                perm_entries(&mut src.j).push(("bash".into(), J::raw("null")));
                "permission.bash = null".into()
            }
            2 => {
                set_top(&mut src.j, "permission", J::Arr(vec![J::s("allow")]));
                "permission = [\"allow\"]".into()
            }
            3 => {
                let nested = J::obj(vec![("git", J::obj(vec![("*", J::s("deny"))]))]);
                perm_entries(&mut src.j).push(("bash".into(), nested));
                "nested permission.bash.git".into()
            }
            4 => {
                let name = rng.pick(ACTION_ONLY);
                let obj = J::obj(vec![("https://x/*", J::s("deny"))]);
                perm_entries(&mut src.j).push((name.into(), obj));
                format!("object for action-only key {name}")
            }
            5 => {
                let v2 = J::obj(vec![("bash", J::s("deny"))]);
                if rng.percent(50) {
                    set_top(&mut src.j, "permissions", v2);
                    "V2 key `permissions`".into()
                } else {
                    // `agents` (V2) and `mode` entries are refused like `agent` ones.
                    let group = rng.pick(&["agent", "agent", "agents", "mode"]);
                    let agent = J::obj(vec![("build", J::obj(vec![("permissions", v2)]))]);
                    set_top(&mut src.j, group, agent);
                    format!("V2 key {group}.build.permissions")
                }
            }
            6 => {
                src.style.json5_keys = true;
                "JSON5 unquoted keys".into()
            }
            7 => {
                src.style.single_quotes = true;
                "single-quoted strings".into()
            }
            8 => {
                src.j = J::Arr(vec![]);
                "top-level array".into()
            }
            9 => {
                let t = render_json(&src.j, &src.style, rng);
                src.text = Some(format!("{t} garbage\n"));
                "trailing garbage".into()
            }
            10 => {
                src.text = Some(" \n".into());
                "whitespace-only file".into()
            }
            11 => {
                let obj = J::obj(vec![("*", J::raw("1"))]);
                perm_entries(&mut src.j).push(("bash".into(), obj));
                "numeric action".into()
            }
            12 => {
                perm_entries(&mut src.j).push(("bash".into(), J::s("{env:PERMAUDIT_UNSET_VAR}")));
                "unset {env:} as action".into()
            }
            13 => {
                let e = J::obj(vec![("permission", J::obj(vec![("edit", J::s("ALLOW"))]))]);
                set_top(&mut src.j, "agent", J::Obj(vec![("build".into(), e)]));
                "agent.build.permission.edit = \"ALLOW\"".into()
            }
            14 => {
                set_top(&mut src.j, "tools", J::obj(vec![("bash", J::s("no"))]));
                "tools.bash = \"no\"".into()
            }
            16 => {
                perm_entries(&mut src.j).push(("bash".into(), J::s("{file:missing.txt}")));
                "{file:missing.txt}".into()
            }
            17 => {
                let e = J::obj(vec![("mode", J::s("bogus"))]);
                set_top(&mut src.j, "agent", J::Obj(vec![("rev".into(), e)]));
                "agent.rev.mode = \"bogus\"".into()
            }
            _ => {
                let t = render_json(&src.j, &src.style, rng);
                let cut = t.len() * 2 / 3;
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| t.is_char_boundary(c))
                    .unwrap_or(0);
                src.text = Some(t[..cut].to_string());
                "truncated file".into()
            }
        };
        self.notes.push(format!("broken: {path}: {what}"));
    }
}

/// Replace (or add) a top-level key of a config object.
fn set_top(j: &mut J, key: &str, v: J) {
    if !matches!(j, J::Obj(_)) {
        *j = J::Obj(vec![]);
    }
    let kv = j.entries_mut().unwrap();
    kv.retain(|(k, _)| k != key);
    kv.push((key.to_string(), v));
}

/// The entries of the top-level `permission` object, turning a string form into an object.
fn perm_entries(j: &mut J) -> &mut Vec<(String, J)> {
    if !matches!(j.get_mut("permission"), Some(J::Obj(_))) {
        set_top(j, "permission", J::Obj(vec![]));
    }
    j.get_mut("permission").unwrap().entries_mut().unwrap()
}

/// One matcher probe (spec §10.1): `permission.glob = {"*":"allow", P:"deny"}`, then the glob
/// tool runs with pattern S; "deny" means P matched S. `subject` may contain `@HOME@`.
#[derive(Clone, Debug)]
pub struct GlobCase {
    pub case: Case,
    pub pattern: String,
    pub subject: String,
}

pub const HOME_TOKEN: &str = "@HOME@";

/// Hand-picked pairs: the verified table of spec §10.1 plus UTF-16 and home-expansion probes.
const CURATED_GLOB: &[(&str, &str)] = &[
    ("git *", "git"),
    ("git *", "git status"),
    ("git *", "gitx"),
    ("git *", "git  status"),
    ("a?c", "a/c"),
    ("a?c", "ac"),
    ("a.c", "abc"),
    ("[ab]", "a"),
    ("[ab]", "[ab]"),
    ("{a,b}", "a"),
    ("A*", "abc"),
    ("a\\b", "a/b"),
    ("a/b", "a\\b"),
    ("a*", "a\nb"),
    ("a?b", "a\nb"),
    ("src/**", "src"),
    ("src/**", "src/"),
    ("a+b", "aab"),
    ("(a|b)", "(a|b)"),
    ("^a$", "^a$"),
    ("*.env", ".env"),
    ("abc", "xabcx"),
    ("a **", "a"),
    (" *", ""),
    ("a *?", "a"),
    ("a\\ *", "a/"),
    ("a?c", "a😀c"),
    ("a??c", "a😀c"),
    ("ü?", "üx"),
    ("~/x/*", "@HOME@/x/y"),
    ("$HOME/*", "@HOME@/z"),
    ("$HOMEc", "@HOME@c"),
    ("~", "@HOME@"),
    ("~x", "~x"),
    ("5", "5"),
    ("01", "01"),
    ("4294967295", "4294967295"),
];

const GLOB_ATOMS: &[&str] = &[
    "a", "b", "/", "\\", "?", "*", ".", "[ab]", "{a,b}", "ü", "😀", "日", "-", "+", "(a|b)", "^",
    "$", "~/", "$HOME/", " ",
];

pub fn generate_glob(seed: u64, index: u64) -> GlobCase {
    let mut r = Rng::for_case(seed, STREAM_GLOB, index);
    // Every third probe walks the curated table (consecutive entries, offset by the seed);
    // the others are random.
    let (pattern, subject, how) = if index % 3 == 0 {
        let k = (seed as usize).wrapping_add(index as usize / 3) % CURATED_GLOB.len();
        let (p, s) = CURATED_GLOB[k];
        (p.to_string(), s.to_string(), "curated")
    } else {
        loop {
            let (p, s) = random_glob_pair(&mut r);
            if p != "*" {
                break (p, s, "random");
            }
        }
    };
    let cfg = J::obj(vec![(
        "permission",
        J::obj(vec![(
            "glob",
            J::Obj(vec![
                ("*".into(), J::s("allow")),
                (pattern.clone(), J::s("deny")),
            ]),
        )]),
    )]);
    let text = render_json(&cfg, &Style::default(), &mut r);
    let case = Case {
        id: format!("glob-{seed}-{index}"),
        files: vec![("proj/opencode.json".into(), text.into_bytes())],
        dirs: vec!["managed".into()],
        env: vec![],
        cwd: "proj".into(),
        dash_c: false,
        notes: vec![format!(
            "{how} matcher probe: pattern {} vs input {}",
            super::json::quote(&pattern),
            super::json::quote(&subject)
        )],
    };
    GlobCase {
        case,
        pattern,
        subject,
    }
}

fn random_glob_pair(r: &mut Rng) -> (String, String) {
    let mut p = String::new();
    let mut s = String::new();
    for _ in 0..r.range(1, 5) {
        let atom = r.pick(GLOB_ATOMS);
        p.push_str(atom);
        let inst: &str = match atom {
            "*" => r.pick(&["", "x", "x/y", "\n", "😀", "a b"]),
            "?" => r.pick(&["a", "/", "ü", "😀", "\n", ""]),
            "\\" | "/" => r.pick(&["\\", "/"]),
            "~/" => r.pick(&["@HOME@/", "~/"]),
            "$HOME/" => r.pick(&["@HOME@/", "$HOME/"]),
            "[ab]" if r.percent(30) => "a",
            other => other,
        };
        s.push_str(inst);
    }
    if r.percent(20) {
        p.push_str(" *");
        s.push_str(r.pick(&["", " x", "  y", "x", " "]));
    }
    if r.percent(20) {
        // Perturb one character of the input so that near misses are probed too.
        let chars: Vec<char> = s.chars().collect();
        let at = r.below(chars.len() + 1);
        let mut out: String = chars[..at].iter().collect();
        if r.percent(50) || at == chars.len() {
            out.push(r.pick(&['a', '/', ' ', 'ü', '*']));
            out.extend(&chars[at..]);
        } else {
            out.extend(&chars[at + 1..]);
        }
        s = out;
    }
    (p, s)
}
