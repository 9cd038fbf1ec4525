//! Decision throughput of the compiled evaluator, and the measurement behind its design
//! (`src/glob/compiled.rs`). Run by `scripts/bench.sh`; by hand:
//!
//! ```sh
//! cargo bench --bench decisions -- PROJECT_DIR INPUTS [--agent build] [--permission edit]
//!     [--steps 100,1000] [--compare]
//! ```
//!
//! `INPUTS` is NUL-separated. Prints JSON lines: one per engine
//! (`{"engine","inputs","seconds","ns_per_decision","checksum","allow","ask","deny"}`), and
//! with `--steps` the checksum of every STEP-th input, which `scripts/bench/opencode.mjs`
//! computes on the same sample (the script requires them equal: same decisions as the
//! JavaScript regexes). `--compare` adds the rule-by-rule evaluator and `regex`'s
//! `RegexSet` over a CESU-8 encoding of UTF-16, on samples.

use permaudit::agents::evaluate;
use permaudit::glob::Platform;
use permaudit::glob::compiled::{CompiledRuleset, Want};
use permaudit::host::RealHost;
use permaudit::model::{Effect, Rule};
use permaudit::project::Project;
use std::path::PathBuf;
use std::time::Instant;

struct Tally {
    sum: u64,
    counts: [u64; 3],
}

impl Tally {
    fn new() -> Tally {
        Tally {
            sum: 0,
            counts: [0; 3],
        }
    }
    fn add(&mut self, rules: &[Rule], d: Option<usize>) {
        self.sum += d.map_or(0, |i| i as u64 + 1);
        let e = d.map_or(Effect::Ask, |i| rules[i].action.effective());
        self.counts[match e {
            Effect::Allow => 0,
            Effect::Ask => 1,
            Effect::Deny => 2,
        }] += 1;
    }
}

fn report(engine: &str, n: usize, secs: f64, t: &Tally) {
    println!(
        "{{\"engine\":\"{engine}\",\"inputs\":{n},\"seconds\":{secs:.6},\"ns_per_decision\":{:.1},\"checksum\":\"{}\",\"allow\":{},\"ask\":{},\"deny\":{}}}",
        secs * 1e9 / n.max(1) as f64,
        t.sum,
        t.counts[0],
        t.counts[1],
        t.counts[2]
    );
}

/// A wildcard as a byte regex over CESU-8 (every UTF-16 unit as its own UTF-8 sequence).
fn cesu_regex(pattern: &str) -> String {
    const ONE: &str = r"(?:[\x00-\x7f]|[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf][\x80-\xbf])";
    let units: Vec<u16> = pattern
        .encode_utf16()
        .map(|u| if u == 0x5c { 0x2f } else { u })
        .collect();
    let n = units.len();
    let tail = n >= 2 && units[n - 1] == 0x2a && units[n - 2] == 0x20;
    let body = if tail { &units[..n - 2] } else { &units[..] };
    let mut re = String::from("(?s-u)^");
    for &u in body {
        match u {
            0x2a => re.push_str(r"(?:.)*"),
            0x3f => re.push_str(ONE),
            0x2f => re.push_str(r"[/\\]"),
            u => {
                for b in cesu(u) {
                    re.push_str(&format!(r"\x{b:02x}"));
                }
            }
        }
    }
    if tail {
        re.push_str(r"(?: (?:.)*)?");
    }
    re.push('$');
    re
}

fn cesu(u: u16) -> Vec<u8> {
    let u = u as u32;
    if u < 0x80 {
        vec![u as u8]
    } else if u < 0x800 {
        vec![0xc0 | (u >> 6) as u8, 0x80 | (u & 0x3f) as u8]
    } else {
        vec![
            0xe0 | (u >> 12) as u8,
            0x80 | ((u >> 6) & 0x3f) as u8,
            0x80 | (u & 0x3f) as u8,
        ]
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut pos = Vec::new();
    let (mut agent, mut permission, mut steps, mut compare) = (
        "build".to_string(),
        "edit".to_string(),
        Vec::<usize>::new(),
        false,
    );
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--agent" => agent = it.next().unwrap_or(agent),
            "--permission" => permission = it.next().unwrap_or(permission),
            "--steps" => {
                steps = it
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|s| s.parse().ok())
                    .collect()
            }
            "--compare" => compare = true,
            _ => pos.push(a),
        }
    }
    if pos.is_empty() {
        // Plain `cargo bench`: the data comes from scripts/bench.sh.
        eprintln!(
            "decisions: nothing to measure without data; run `bash scripts/bench.sh` (all \
             benchmarks, ratios side by side), or give PROJECT_DIR INPUTS"
        );
        return;
    }
    let [dir, inputs_file] = pos.as_slice() else {
        eprintln!(
            "usage: decisions PROJECT_DIR INPUTS [--agent A] [--permission P] [--steps N,..] [--compare]"
        );
        std::process::exit(2);
    };
    let dir = std::path::absolute(PathBuf::from(dir)).expect("project dir");
    let project = Project::load(&RealHost, &dir, Platform::Unix).unwrap_or_else(|f| {
        eprintln!("cannot load {}: {:?}", dir.display(), f.error);
        std::process::exit(2)
    });
    let a = project.agent(&agent).expect("agent");
    let rules = &a.rules;
    let data = std::fs::read(inputs_file).expect("inputs");
    let inputs: Vec<&str> = data
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| std::str::from_utf8(s).expect("UTF-8 inputs"))
        .collect();
    let pairs = || {
        rules
            .iter()
            .map(|r| (r.permission.as_str(), r.pattern.as_str()))
    };

    // The compiled evaluator, last-match mode: what `map` and the decisions benchmark use.
    let t = Instant::now();
    let mut last = CompiledRuleset::new(pairs(), &permission, Platform::Unix, Want::Last);
    let compile_secs = t.elapsed().as_secs_f64();
    let mut tally = Tally::new();
    let t = Instant::now();
    for s in &inputs {
        tally.add(rules, last.decide(s));
    }
    let secs = t.elapsed().as_secs_f64();
    report("permaudit-compiled", inputs.len(), secs, &tally);
    println!(
        "{{\"engine\":\"permaudit-compiled\",\"rules\":{},\"rules_for_permission\":{},\"compile_seconds\":{compile_secs:.6},\"states_built\":{},\"cache_clears\":{}}}",
        rules.len(),
        last.rules().len(),
        last.stats().states_built,
        last.stats().clears
    );
    // Again, with every state already built.
    let mut tally = Tally::new();
    let t = Instant::now();
    for s in &inputs {
        tally.add(rules, last.decide(s));
    }
    report(
        "permaudit-compiled-warm",
        inputs.len(),
        t.elapsed().as_secs_f64(),
        &tally,
    );
    for &step in &steps {
        let mut t = Tally::new();
        for s in inputs.iter().step_by(step.max(1)) {
            t.add(rules, last.decide(s));
        }
        println!(
            "{{\"sample_step\":{step},\"checksum\":\"{}\",\"allow\":{},\"ask\":{},\"deny\":{}}}",
            t.sum, t.counts[0], t.counts[1], t.counts[2]
        );
    }
    if !compare {
        return;
    }
    // All-matches mode (explain's overridden rules).
    let mut all = CompiledRuleset::new(pairs(), &permission, Platform::Unix, Want::All);
    let mut m = Vec::new();
    let mut tally = Tally::new();
    let t = Instant::now();
    for s in &inputs {
        all.matching(s, &mut m);
        tally.add(rules, m.last().copied());
    }
    report(
        "permaudit-compiled-all",
        inputs.len(),
        t.elapsed().as_secs_f64(),
        &tally,
    );

    // Rule by rule, as `agents::evaluate` (a sample).
    let sample: Vec<&str> = inputs.iter().step_by(1000).copied().collect();
    let mut tally = Tally::new();
    let t = Instant::now();
    for s in &sample {
        tally.add(rules, evaluate(rules, &permission, s, Platform::Unix).rule);
    }
    report(
        "rule-by-rule",
        sample.len(),
        t.elapsed().as_secs_f64(),
        &tally,
    );

    // regex's RegexSet (regex-automata's meta engine, all matches) over CESU-8 (a sample).
    let t = Instant::now();
    let idx = last.rules().to_vec();
    let set =
        regex::bytes::RegexSetBuilder::new(idx.iter().map(|&i| cesu_regex(&rules[i].pattern)))
            .size_limit(1 << 30)
            .dfa_size_limit(1 << 30)
            .build()
            .expect("regex set");
    eprintln!("RegexSet built in {:.3}s", t.elapsed().as_secs_f64());
    let sample: Vec<&str> = inputs.iter().step_by(10).copied().collect();
    let mut tally = Tally::new();
    let t = Instant::now();
    for s in &sample {
        // ASCII and BMP text is already CESU-8; these inputs are ASCII.
        let d = set.matches(s.as_bytes()).iter().next_back().map(|i| idx[i]);
        tally.add(rules, d);
    }
    report(
        "regex-set-cesu8",
        sample.len(),
        t.elapsed().as_secs_f64(),
        &tally,
    );
}
