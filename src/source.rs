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
    line_starts: Vec<usize>,
    /// UTF-8 continuation bytes before each multiple of [`CHUNK`]: columns in constant
    /// time on long lines (a minified config is one line; each of its rules needs a column).
    continuations: Vec<usize>,
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
            line_starts,
            continuations,
        }
    }

    /// Named relative to `root` if it is under it (see [`SourceMap::relative_to`]).
    fn relative_to(&mut self, root: &std::path::Path) {
        if let Origin::File(p) = &self.origin
            && let Ok(rel) = p.strip_prefix(root)
            && !rel.as_os_str().is_empty()
        {
            self.display = Some(rel.display().to_string());
        }
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

    /// 1-based line and column (column counted in Unicode scalar values) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
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
        let col = (offset - start)
            - (self.continuations_before(offset) - self.continuations_before(start));
        (line + 1, col + 1)
    }
}

/// All sources of one run, addressed by [`SourceId`].
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    /// Set by [`SourceMap::relative_to`]: files added later are named relative to it too.
    root: Option<std::path::PathBuf>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, mut file: SourceFile) -> SourceId {
        if let Some(root) = &self.root {
            file.relative_to(root);
        }
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
        for f in &mut self.files {
            f.relative_to(root);
        }
        self.root = Some(root.to_path_buf());
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

    #[test]
    fn line_col_counts_characters() {
        let f = SourceFile::new(Origin::EnvVar("X".into()), "ab\né{x\n".into());
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        // 'é' is two bytes; '{' is the second character of line 2.
        assert_eq!(f.line_col(5), (2, 2));
        assert_eq!(f.line_col(999), (3, 1));
    }

    #[test]
    fn columns_on_long_lines_count_characters() {
        let text = format!(
            "{}\n{}x{}",
            "é".repeat(3000),
            "aé😀".repeat(5000),
            "b".repeat(9000)
        );
        let f = SourceFile::new(Origin::EnvVar("X".into()), text.clone());
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
        let f = SourceFile::new(Origin::EnvVar("X".into()), "\u{feff}{x\n\u{feff}".into());
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (1, 1));
        assert_eq!(f.line_col(4), (1, 2));
        // Only at the start of the text.
        assert_eq!(f.line_col(9), (2, 2));
    }
}
