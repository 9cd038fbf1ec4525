//! Source texts and locations.
//!
//! Every value permaudit reads carries a [`Loc`]: which source it came from and the byte
//! range inside the text the user wrote. Line and column are computed only when rendering.

use std::fmt;

/// Index of a source in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u32);

/// A byte range in a source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A place in a source: the source and a byte range of its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    pub source: SourceId,
    pub span: Span,
}

/// What kind of thing a source is; decides how it is named in output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file on disk, by its path as permaudit found it.
    File(std::path::PathBuf),
    /// The value of an environment variable (`OPENCODE_CONFIG_CONTENT`, `OPENCODE_PERMISSION`).
    EnvVar(String),
}

/// One text permaudit read, kept whole for diagnostics.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub origin: Origin,
    /// The text as read (invalid UTF-8 replaced by U+FFFD, as Bun's decoder does).
    pub text: String,
    /// The name output shows instead of the path ([`SourceMap::relative_to`]).
    display: Option<String>,
    /// What decoding the bytes found: not UTF-8, or a binary file ([`SourceFile::decode`]).
    pub damage: Option<Damage>,
    line_starts: Vec<usize>,
    /// Each U+FFFD the decoder put in: `(its offset in text, offset and length of the bytes
    /// it replaced in the file)`, so that an error can name the file's own byte offset.
    replaced: Vec<(usize, usize, usize)>,
    /// UTF-8 continuation bytes before each multiple of [`CHUNK`]: columns in constant
    /// time on long lines (a minified config is one line; each of its rules needs a column).
    continuations: Vec<usize>,
}

/// Bytes of a file that are not UTF-8 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// Not valid UTF-8; `at` is the byte offset (in the decoded text) of the first U+FFFD
    /// that replaced a bad sequence.
    NotUtf8 { at: usize },
    /// Holds a NUL byte: not a text file at all.
    Binary,
    /// Ends a line with a CR alone (old Mac style). OpenCode counts lines by LF only, so a
    /// `line:col` here is on one long line that an editor may show as several.
    LoneCr,
}

/// See [`SourceFile::continuations`].
const CHUNK: usize = 4096;

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

impl SourceFile {
    pub fn new(origin: Origin, text: String) -> SourceFile {
        let mut line_starts = vec![0];
        let mut continuations = Vec::with_capacity(text.len() / CHUNK + 1);
        let mut count = 0;
        for (i, b) in text.bytes().enumerate() {
            if i % CHUNK == 0 {
                continuations.push(count);
            }
            // A line ends at LF (CR LF included), as OpenCode counts lines in its errors; a
            // lone CR is not a line end there (see `Damage::LoneCr`).
            if b == b'\n' {
                line_starts.push(i + 1);
            }
            count += usize::from(is_continuation(b));
        }
        if text.len() % CHUNK == 0 {
            continuations.push(count);
        }
        SourceFile {
            origin,
            text,
            display: None,
            damage: None,
            replaced: Vec::new(),
            line_starts,
            continuations,
        }
    }

    /// A source from the bytes of a file, decoded as Bun decodes files: UTF-8, each invalid
    /// sequence replaced by U+FFFD. What was replaced, or that the bytes look binary (a NUL
    /// byte), is kept for error messages.
    pub fn decode(origin: Origin, bytes: &[u8]) -> SourceFile {
        let lone_cr = || {
            bytes
                .iter()
                .enumerate()
                .any(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
        };
        let damage = if bytes.contains(&0) {
            Some(Damage::Binary)
        } else if let Err(e) = std::str::from_utf8(bytes) {
            Some(Damage::NotUtf8 {
                at: e.valid_up_to(),
            })
        } else if lone_cr() {
            Some(Damage::LoneCr)
        } else {
            None
        };
        // `String::from_utf8_lossy`, noting where each replacement came from.
        let mut text = String::with_capacity(bytes.len());
        let mut replaced = Vec::new();
        let mut raw = 0;
        for chunk in bytes.utf8_chunks() {
            text.push_str(chunk.valid());
            raw += chunk.valid().len();
            if !chunk.invalid().is_empty() {
                replaced.push((text.len(), raw, chunk.invalid().len()));
                text.push('\u{fffd}');
                raw += chunk.invalid().len();
            }
        }
        let mut f = SourceFile::new(origin, text);
        f.damage = damage;
        f.replaced = replaced;
        f
    }

    /// The offset in the file's bytes of `offset` in the decoded text (they differ after
    /// a byte sequence replaced by U+FFFD).
    pub fn byte_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for &(at, raw, len) in &self.replaced {
            if offset < at {
                break;
            }
            if offset < at + '\u{fffd}'.len_utf8() {
                return raw;
            }
            shift += len as isize - '\u{fffd}'.len_utf8() as isize;
        }
        offset.saturating_add_signed(shift)
    }

    /// Line and column as an editor shows them: a lone CR ends a line too.
    pub fn editor_line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let head = self.text.get(..offset).unwrap_or("");
        let mut line = 1;
        let mut start = 0;
        let b = head.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            let end = c == b'\n' || (c == b'\r' && self.text.as_bytes().get(i + 1) != Some(&b'\n'));
            if end {
                line += 1;
                start = i + 1;
            }
        }
        (line, head[start..].chars().count() + 1)
    }

    /// A clause for an error in this source saying what its bytes are, if they are not text.
    pub fn damage_note(&self) -> Option<String> {
        Some(match self.damage? {
            Damage::Binary => {
                "the file is binary: it holds NUL bytes".to_string()
            }
            Damage::LoneCr => "the file ends lines with a lone CR, which OpenCode does not count as a line end: lines are counted as OpenCode counts them".to_string(),
            Damage::NotUtf8 { at } => {
                let (line, col) = self.line_col(at);
                format!(
                    "the file is not valid UTF-8: OpenCode reads each bad byte sequence as U+FFFD, the first at {line}:{col}"
                )
            }
        })
    }

    /// Named relative to `root` if it is under it, else as `~/…` if it is under `home`
    /// (see [`SourceMap::relative_to`]).
    fn name_by(&mut self, root: Option<&std::path::Path>, home: Option<&std::path::Path>) {
        let Origin::File(p) = &self.origin else {
            return;
        };
        let under = |dir: Option<&std::path::Path>| {
            dir.and_then(|d| p.strip_prefix(d).ok())
                .filter(|rel| !rel.as_os_str().is_empty())
        };
        if let Some(rel) = under(root) {
            self.display = Some(rel.display().to_string());
        } else if let Some(rel) = under(home) {
            self.display = Some(format!("~/{}", rel.display()));
        }
    }

    /// Byte offset where the 0-based `line` starts (the text's end past the last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// UTF-8 continuation bytes in `text[..offset]`.
    fn continuations_before(&self, offset: usize) -> usize {
        let k = offset / CHUNK;
        self.continuations[k]
            + self.text.as_bytes()[k * CHUNK..offset]
                .iter()
                .filter(|&&b| is_continuation(b))
                .count()
    }

    /// A name for humans and machine output: the path, or `env:NAME`.
    pub fn name(&self) -> String {
        if let Some(d) = &self.display {
            return d.clone();
        }
        match &self.origin {
            Origin::File(p) => p.display().to_string(),
            Origin::EnvVar(v) => format!("env:{v}"),
        }
    }

    pub fn path(&self) -> Option<&std::path::Path> {
        match &self.origin {
            Origin::File(p) => Some(p),
            Origin::EnvVar(_) => None,
        }
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset.min(self.text.len())) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// 1-based line and column (column counted in Unicode scalar values) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_of(offset);
        let mut start = self.line_starts[line];
        // A leading BOM is not a column: the file decoder drops it, and editors hide it.
        if line == 0 && self.text.starts_with('\u{feff}') {
            if offset <= 3 {
                return (1, 1);
            }
            start = 3;
        }
        // `offset` may fall inside a multi-byte character after span arithmetic; count the
        // characters that start before it (bytes that are not continuation bytes).
        let continuations = if offset - start <= CHUNK {
            // A line's start is near: count there, not from two chunk boundaries.
            self.text.as_bytes()[start..offset]
                .iter()
                .filter(|&&b| is_continuation(b))
                .count()
        } else {
            self.continuations_before(offset) - self.continuations_before(start)
        };
        let col = (offset - start) - continuations;
        (line + 1, col + 1)
    }
}

/// All sources of one run, addressed by [`SourceId`].
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    /// Set by [`SourceMap::relative_to`]: files added later are named relative to it too.
    root: Option<std::path::PathBuf>,
    /// Set by [`SourceMap::home_as_tilde`].
    home: Option<std::path::PathBuf>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, mut file: SourceFile) -> SourceId {
        file.name_by(self.root.as_deref(), self.home.as_deref());
        self.files.push(file);
        SourceId((self.files.len() - 1) as u32)
    }

    pub fn get(&self, id: SourceId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = (SourceId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (SourceId(i as u32), f))
    }

    /// Name every file under `root`, and every one added later, by its path relative to
    /// `root` (`opencode.json`, `.opencode/agent/x.md`) in all output from now on; files
    /// elsewhere keep their absolute path. Only names change: [`SourceFile::path`] still gives the real path.
    pub fn relative_to(&mut self, root: &std::path::Path) {
        self.root = Some(root.to_path_buf());
        self.rename();
    }

    /// Name every file under `home` but not under the root, and every one added later, as
    /// `~/…` (`~/.config/opencode/opencode.json`): for human output, where that reads
    /// better than the full path; machine output keeps paths a program can open.
    pub fn home_as_tilde(&mut self, home: &std::path::Path) {
        self.home = Some(home.to_path_buf());
        self.rename();
    }

    fn rename(&mut self) {
        for f in &mut self.files {
            f.name_by(self.root.as_deref(), self.home.as_deref());
        }
    }

    /// `(name, line, column)` of a location.
    pub fn position(&self, loc: Loc) -> Position {
        let f = self.get(loc.source);
        let (line, column) = f.line_col(loc.span.start);
        Position {
            name: f.name(),
            line,
            column,
        }
    }
}

/// A rendered location: `path:line:column`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub name: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.name, self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile::new(Origin::EnvVar("X".into()), text.into())
    }

    /// The (line, column) of each byte offset of `text`.
    fn line_cols(text: &str, offsets: &[usize]) -> Vec<(usize, usize)> {
        let f = file(text);
        offsets.iter().map(|&o| f.line_col(o)).collect()
    }

    #[test]
    fn line_col_counts_characters() {
        // 'é' is two bytes; '{' (offset 5) is the second character of line 2.
        assert_eq!(
            line_cols("ab\né{x\n", &[0, 3, 5, 999]),
            [(1, 1), (2, 1), (2, 2), (3, 1)]
        );
    }

    #[test]
    fn columns_on_long_lines_count_characters() {
        let text = format!(
            "{}\n{}x{}",
            "é".repeat(3000),
            "aé😀".repeat(5000),
            "b".repeat(9000)
        );
        let f = file(&text);
        for offset in (0..=text.len()).step_by(97).chain([text.len(), 6000, 6001]) {
            let before = &text.as_bytes()[..offset];
            let line = before.iter().filter(|&&b| b == b'\n').count();
            let start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let col = text[start..]
                .char_indices()
                .take_while(|(i, _)| start + i < offset)
                .count();
            assert_eq!(f.line_col(offset), (line + 1, col + 1), "offset {offset}");
        }
    }

    #[test]
    fn a_leading_bom_is_not_a_column() {
        // Only at the start of the text: line 2's is a character, so offset 9, after it, is
        // column 2.
        assert_eq!(
            line_cols("\u{feff}{x\n\u{feff}", &[0, 3, 4, 9]),
            [(1, 1), (1, 1), (1, 2), (2, 2)]
        );
    }
}
