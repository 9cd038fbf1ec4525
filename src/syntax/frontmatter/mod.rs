//! The frontmatter of markdown agent and mode files, read as OpenCode 1.18.34 reads it.
//!
//! OpenCode reads an agent file with `ConfigMarkdown.parse`:
//!
//! ```js
//! function parse(t) { try { return matter(t) } catch { return matter(sanitize(t)) } }
//! ```
//!
//! `matter` is **gray-matter 4** (with `strip-bom-string`), whose YAML engine is **js-yaml 3**
//! `safeLoad` (DEFAULT_SAFE_SCHEMA). A throw from the second call makes the loader skip the
//! file silently. The agent is then `{name: derived, ...data, prompt: content.trim()}`.
//!
//! This module reproduces, exactly:
//!
//! * gray-matter's fences: the BOM, `---` at offset 0, `----` meaning "no frontmatter", the
//!   language tag after `---` (`--- ` is YAML, `---json` is `JSON.parse`, `---js` is `eval`,
//!   an unknown tag throws; `Object.prototype` names such as `---constructor` behave as
//!   gray-matter's plain-object engine table makes them behave), the closing fence as the
//!   first `"\n---"`, an unclosed fence, and the "empty" test (`/^\s*#[^\n]+/gm` removed,
//!   then `trim()`), which skips the engine entirely;
//! * the gray-matter cache bug: gray-matter caches the file object before parsing, so when
//!   `sanitize` leaves the text unchanged the retry returns `data: {}` and the whole file as
//!   content ([`Frontmatter::BrokenKept`]); when `sanitize` changed the text and it still
//!   throws, the file is dropped ([`Frontmatter::BrokenDropped`]); when it fixes it, the
//!   sanitized text's data is used. `sanitize` is OpenCode's own function, character for
//!   character (it also turns CRLF into LF, so a broken multi-line CRLF frontmatter is
//!   always dropped, and it never applies to a file with a BOM: Bun's `readText` keeps it);
//! * js-yaml 3's value model: implicit types (null `~ null Null NULL` and empty; bool only
//!   `true True TRUE false False FALSE`, so `yes/no/on/off` are strings; int with `0x`, `0b`,
//!   leading-`0` octal, `_` and base 60; float with `.inf`, `.nan`, base 60; timestamps),
//!   explicit tags (`!!str`, `!!int`, …, `!!binary`, `!!set`, `!!omap`, `!!pairs`, `!` and
//!   unknown tags), keys turned into strings with JavaScript `String()` (`10` → `"10"`,
//!   `0x1F` → `"31"`, `~` → `"null"`, a sequence → its elements joined by `,`, a mapping →
//!   `"[object Object]"`, nested sequences refused), `duplicated mapping key`, merge keys
//!   (`<<` with a mapping or a list of them: merged keys come first, an explicit key
//!   overrides in place, a later explicit duplicate is an error), one document only, the
//!   null byte and non-printable character checks;
//! * the spread `{...data}`: a mapping is itself, a sequence gives `"0"`, `"1"`, … keys, a
//!   string gives one key per UTF-16 code unit, anything else gives `{}`.
//!
//! Approximations (documented where they are made):
//!
//! * YAML *syntax* is read by `granit-parser`, a YAML 1.2 parser, not by js-yaml's own
//!   scanner. Where js-yaml is more lenient than YAML 1.2 and the difference is plausible in
//!   a hand-written file, a text granit refuses is read again with those spots rewritten the
//!   way js-yaml reads them (`relax`: tab indentation, `{key:[…]}`, empty flow entries,
//!   `"a"#c`, `key: "a"b: c`, `key: ? k`). Checked against the gray-matter + js-yaml code
//!   extracted from the OpenCode 1.18.34 binary on ~40 000 generated files: realistic agent
//!   files agree completely (kind, keys, key order, values); randomly mutated YAML agrees on
//!   about 99.7%. Known differences, all exotic: js-yaml's bug that hangs an entry after an
//!   empty `- ` item of a nested sequence onto the inner sequence; multi-line plain scalars
//!   in flow collections continued at a lower indentation, and indented top-level scalars
//!   continued at column 0 (js-yaml refuses both); DEL and C1 control characters in quoted
//!   scalars and control characters in comments (js-yaml accepts them); a BOM after the
//!   start of the text (content for js-yaml). Error messages and positions of syntax errors
//!   are granit's.
//! * A timestamp (`2024-01-01`) becomes [`Value::Number`] holding the JavaScript
//!   `toISOString()` text (`"2024-01-01T00:00:00.000Z"`): not a string, so a schema that
//!   wants a string refuses it, and its preview is what OpenCode prints (`got
//!   2024-01-01T00:00:00.000Z`). As a *key* it is `Date.prototype.toString()` in UTC (OpenCode
//!   would use the local time zone).
//! * `!!binary` becomes an array of byte numbers (a `Buffer` in OpenCode).
//! * `---valueOf` (an `Object.prototype` name as language) gives `{parse: <function>}` in
//!   OpenCode; here `{}`.
//! * A string spread into index keys: an astral character is two UTF-16 code units, so two
//!   keys, each holding a lone surrogate; both are given U+FFFD here.
//! * Aliases are copied. An alias to a collection that contains it (a cyclic structure in
//!   js-yaml) is refused as a YAML error, and so are inputs that expand beyond
//!   [`MAX_NODES`] nodes or [`MAX_STRING_BYTES`] bytes of strings (billion laughs), or nest
//!   deeper than [`MAX_DEPTH`]. OpenCode has none of these limits.
//! * gray-matter's cache is process-wide: a text that already failed once in the same
//!   OpenCode process is `BrokenKept` on every later read. [`parse`] treats each file alone;
//!   [`parse_cached`] with one [`MatterCache`] per simulated process reproduces the sharing.
//!
//! Every span points into the original text; after `sanitize`, spans are mapped back
//! through the rewritten lines.

mod date;
mod matter;
mod relax;
mod scalar;
#[cfg(test)]
mod tests;
mod yaml;

use super::jsonc;
use super::value::{JsObject, Node, Value, is_array_index};
use crate::source::{Loc, SourceId, Span};
use date::*;
use granit_parser::{Event, Parser, ScalarStyle, ScanError, StructureStyle};
use matter::*;
use relax::*;
use scalar::*;
use std::collections::{HashMap, HashSet};
use yaml::*;

/// Most YAML nodes one frontmatter may produce, alias copies and merges included.
pub const MAX_NODES: usize = 100_000;
/// Most bytes of string content one frontmatter may produce, alias copies included.
pub const MAX_STRING_BYTES: usize = 64 << 20;
/// Deepest nesting of YAML collections read.
pub const MAX_DEPTH: usize = 256;

/// Why frontmatter could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontmatterError {
    pub loc: Loc,
    pub message: String,
}

/// What OpenCode makes of a markdown file's frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub enum Frontmatter {
    /// No frontmatter (no opening fence, or `----`): the whole file is the prompt; no rules.
    Absent,
    /// The data object OpenCode decodes as the agent (`{name: derived, ...data, prompt}`):
    /// always a [`Value::Object`]. For a YAML mapping, that mapping; for a top-level list or
    /// string, the JavaScript spread result (index keys, characters); for empty or
    /// comment-only frontmatter and other scalars, an empty object. Spans point into the
    /// original text.
    Data(Node),
    /// The frontmatter throws and `sanitize` leaves the text unchanged (or the language tag is
    /// unknown): OpenCode loads the file with the whole file as prompt and NO rules from it.
    BrokenKept(FrontmatterError),
    /// The frontmatter throws, `sanitize` changed the text and it still throws: OpenCode
    /// silently drops the file. The error is the one left after `sanitize`.
    BrokenDropped(FrontmatterError),
    /// `---js` / `---javascript`: OpenCode evaluates the frontmatter as JavaScript.
    Executable(FrontmatterError),
    /// Past one of permaudit's limits ([`MAX_NODES`], [`MAX_STRING_BYTES`], [`MAX_DEPTH`]),
    /// which OpenCode does not have: what OpenCode makes of the file is not known.
    OverLimit(FrontmatterError),
}

/// Every limit error's message says this, and [`parse_cached`] tells limits from YAML
/// errors by it.
const PAST_LIMIT: &str = "past permaudit's limit (OpenCode has none; see docs/limits.md)";

impl FrontmatterError {
    fn is_limit(&self) -> bool {
        self.message.ends_with(PAST_LIMIT)
    }
}

/// Read a markdown file's frontmatter as OpenCode does, the file taken alone.
pub fn parse(text: &str, source: SourceId) -> Frontmatter {
    parse_cached(text, source, &mut MatterCache::default())
}

/// gray-matter's process-wide cache, as far as it changes results: the texts (BOM removed)
/// whose parse already threw in this OpenCode process. gray-matter stores the unparsed file
/// object under the text *before* parsing, so every later `matter()` of the same text returns
/// `data: {}` without parsing. (Texts that parsed fine return the same data again, so they
/// need no entry.)
#[derive(Debug, Clone, Default)]
pub struct MatterCache {
    failed: HashSet<String>,
}

/// [`parse`], sharing gray-matter's cache with earlier reads of the same OpenCode process.
/// Call it for every markdown file in the order OpenCode reads them.
pub fn parse_cached(text: &str, source: SourceId, cache: &mut MatterCache) -> Frontmatter {
    let identity = |o: usize| o;
    let cached_failure = |e: FrontmatterError| {
        Frontmatter::BrokenKept(FrontmatterError {
            loc: e.loc,
            message: format!(
                "{}; the same text already failed earlier in this OpenCode process, so gray-matter's cache returns it unparsed",
                e.message
            ),
        })
    };
    let first_err = match matter(text, source, &identity) {
        // js-yaml would read on: no guess about what OpenCode makes of it.
        Err(e) if e.is_limit() => return Frontmatter::OverLimit(e),
        // A cache hit never throws: `data: {}`, content = the whole text.
        Err(e) if cache.failed.contains(strip_bom(text)) => return cached_failure(e),
        Ok(Out::Absent) => return Frontmatter::Absent,
        Ok(Out::Data(n)) => return Frontmatter::Data(n),
        Ok(Out::Exec(e)) => return Frontmatter::Executable(e),
        Err(e) => {
            cache.failed.insert(strip_bom(text).to_string());
            e
        }
    };
    let Some((sanitized, map)) = sanitize(text) else {
        return Frontmatter::BrokenKept(first_err);
    };
    if sanitized == text {
        // The retry hits the entry the first call cached: `data: {}`, the whole file.
        return Frontmatter::BrokenKept(first_err);
    }
    let to_orig = |o: usize| map.map(o);
    match matter(&sanitized, source, &to_orig) {
        Err(e) if e.is_limit() => Frontmatter::OverLimit(e),
        // A cache hit on the retry: `data: {}` (and the sanitized text as prompt).
        Err(e) if cache.failed.contains(strip_bom(&sanitized)) => cached_failure(e),
        Ok(Out::Absent) => Frontmatter::Absent,
        Ok(Out::Data(n)) => Frontmatter::Data(n),
        Ok(Out::Exec(e)) => Frontmatter::Executable(e),
        Err(e) => {
            cache.failed.insert(strip_bom(&sanitized).to_string());
            Frontmatter::BrokenDropped(e)
        }
    }
}

fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}
