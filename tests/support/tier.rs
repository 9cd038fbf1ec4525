//! Test tiers: `cargo test` alone is the fast tier and skips what needs an external engine
//! (the OpenCode oracle, Node.js) with one printed line per suite; CI must run everything,
//! so there a missing engine fails the test instead.

use std::io::Write;
use std::sync::Once;

/// A missing engine fails the test under CI (`CI` set, and not `0` or `false`, as GitHub
/// and most CI services set it) or with `PERMAUDIT_REQUIRE_ORACLE=1` (`scripts/test.sh`).
pub fn required() -> bool {
    let on = |var: &str| {
        std::env::var(var)
            .is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
    };
    on("CI") || on("PERMAUDIT_REQUIRE_ORACLE")
}

/// Skip (once per test binary, one line on stderr, past cargo's output capture) or, when
/// [`required`], fail with `why`.
pub fn skip_or_fail(suite: &str, why: &str) {
    if required() {
        panic!(
            "{why}\nThis suite must run under CI (CI={:?}, PERMAUDIT_REQUIRE_ORACLE={:?}).",
            std::env::var("CI").unwrap_or_default(),
            std::env::var("PERMAUDIT_REQUIRE_ORACLE").unwrap_or_default()
        );
    }
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let line = format!(
            "SKIPPED {suite}: {} (fast tier; `bash scripts/test.sh` runs it, and CI=true makes this a failure)\n",
            why.replace('\n', " ")
        );
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    });
}
