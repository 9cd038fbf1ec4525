//! The rewrites that let a YAML 1.2 parser read what js-yaml 3 reads more leniently
//! (tab indentation, `{key:[…]}`, empty flow entries, `"a"#c`, `key: "a"b: c`,
//! `key: ? k`).

use super::*;

/// js-yaml 3 accepts a few things YAML 1.2 (and granit) refuse. When granit refuses a text,
/// it is read again after [`relax`] rewrote those spots the way js-yaml reads them:
///
/// * in a flow collection, `key:[…]` / `key:{…}` (js-yaml ends a plain scalar at a `:`
///   followed by a flow indicator): a space is inserted after the `:`;
/// * an empty flow entry (`[a, , b]`, `[, a]`, `{, a: 1}`) is a null: `~` is inserted;
/// * a comment right after a closing quote or bracket (`[a]#c`): a space is inserted;
/// * `key: ? k` is `key:` and, beside it, the explicit key `? k`: a line break is inserted;
/// * `key: "a"b: c` and `key: [a]b: c` are `key` and then the key `b`: a line break is
///   inserted;
/// * with `detab`, tab indentation: js-yaml counts only spaces as indentation (`lineIndent`)
///   and skips a tab like any separating blank, so on every line the blanks from the first
///   tab of the indentation to the content are removed. But js-yaml takes a block
///   collection's own indentation from the *column* of its first entry, where a tab counts:
///   a collection whose first entry sits on such a line and which has an entry on a later
///   line is an error there ([`Loader::entry`] refuses it, using the returned line starts).
///
/// Block scalars are copied untouched. `None` when nothing changed.
pub(super) fn relax(src: &str, detab: bool) -> Option<(String, OffsetMap, Vec<usize>)> {
    let mut r = Relax {
        src,
        b: src.as_bytes(),
        out: String::with_capacity(src.len() + 16),
        map: OffsetMap::default(),
        copied: 0,
        changed: false,
        tab_lines: Vec::new(),
    };
    r.run(detab);
    if !r.changed {
        return None;
    }
    r.flush(src.len());
    Some((r.out, r.map, r.tab_lines))
}

pub(super) struct Relax<'a> {
    pub(super) src: &'a str,
    pub(super) b: &'a [u8],
    pub(super) out: String,
    pub(super) map: OffsetMap,
    /// `src[..copied]` is in `out`.
    pub(super) copied: usize,
    pub(super) changed: bool,
    pub(super) tab_lines: Vec<usize>,
}

impl Relax<'_> {
    pub(super) fn flush(&mut self, upto: usize) {
        if upto > self.copied {
            if let Some(piece) = self.src.get(self.copied..upto) {
                self.map
                    .push(self.out.len(), piece.len(), self.copied, true);
                self.out.push_str(piece);
            }
            self.copied = upto;
        }
    }

    pub(super) fn insert(&mut self, at: usize, text: &str) {
        self.flush(at);
        self.map.push(self.out.len(), text.len(), at, false);
        self.out.push_str(text);
        self.changed = true;
    }

    pub(super) fn skip(&mut self, from: usize, to: usize) {
        self.flush(from);
        self.copied = to;
        self.changed = true;
    }

    /// js-yaml reads what directly follows a quoted or flow mapping value on its line
    /// (`key: "a"b: c`, `key: [a]b: c`) as the next key of the mapping, when that line is
    /// indented like the mapping (`indent`, the key's line); more is an error, less ends it.
    pub(super) fn trailing(&mut self, at: usize, indent: usize) {
        let ls = self.b[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let line_indent = self.b[ls..at].iter().take_while(|&&c| c == b' ').count();
        if line_indent != indent {
            return;
        }
        if let Some(c) = self.b.get(at) {
            if !matches!(
                c,
                b' ' | b'\t' | b'\r' | b'\n' | b':' | b'#' | b',' | b']' | b'}'
            ) {
                let pad = format!("\n{}", " ".repeat(indent));
                self.insert(at, &pad);
            }
        }
    }

    pub(super) fn line_end(&self, i: usize) -> usize {
        self.b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |n| i + n)
    }

    pub(super) fn run(&mut self, detab: bool) {
        let b = self.b;
        let len = b.len();
        let mut i = 0;
        let mut depth = 0usize;
        let mut at_line_start = true;
        let mut indent = 0usize;
        // The last significant character (a token's last one) and whether blanks followed it.
        let mut prev: Option<u8> = None;
        let mut spaced = true;
        // The last token started with `&` or `!` (an anchor or a tag).
        let mut prop = false;
        let mut token_first: Option<u8> = None;
        let mut closer = false;
        let mut block_scalar: Option<isize> = None;
        // The line indentation of a flow collection that is a mapping value.
        let mut flow_value: Option<usize> = None;
        let mut key_at_line_start = true;
        // A quoted scalar or a flow collection closed by `$c`, `i` already past it: the
        // next token starts fresh.
        macro_rules! closed {
            ($c:expr) => {{
                prev = Some($c);
                spaced = false;
                prop = false;
                closer = true;
                token_first = None;
                continue;
            }};
        }
        while i < len {
            if at_line_start {
                at_line_start = false;
                let mut j = i;
                while j < len && b[j] == b' ' {
                    j += 1;
                }
                let end = self.line_end(i);
                if let Some(parent) = block_scalar {
                    let blank = b[j..end].iter().all(|c| matches!(c, b' ' | b'\t' | b'\r'));
                    if blank || (j - i) as isize > parent {
                        i = end + 1;
                        at_line_start = true;
                        continue;
                    }
                    block_scalar = None;
                }
                indent = j - i;
                if detab && depth == 0 && j < len && b[j] == b'\t' {
                    let mut k = j;
                    while k < len && matches!(b[k], b' ' | b'\t') {
                        k += 1;
                    }
                    self.skip(j, k);
                    self.tab_lines.push(self.out.len() - (j - i));
                    j = k;
                }
                if depth == 0 {
                    prev = None;
                    // A `- ` or `? ` entry puts its mapping's keys after the line start.
                    key_at_line_start = !matches!(
                        (b.get(j), b.get(j + 1)),
                        (Some(b'-' | b'?'), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
                    );
                }
                spaced = true;
                i = j;
                continue;
            }
            let c = b[i];
            let node_start = if depth == 0 {
                prev.is_none() || (spaced && matches!(prev, Some(b':' | b'-' | b'?'))) || prop
            } else {
                prev.is_none() || matches!(prev, Some(b'[' | b'{' | b',' | b':' | b'?')) || prop
            };
            match c {
                b'\n' => {
                    at_line_start = true;
                    closer = false;
                    if token_first.take().is_some_and(|f| f == b'&' || f == b'!') {
                        prop = true;
                    }
                    i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' => {
                    spaced = true;
                    closer = false;
                    if let Some(f) = token_first.take() {
                        prop = f == b'&' || f == b'!';
                    }
                    i += 1;
                    continue;
                }
                b'#' if spaced || closer => {
                    if closer && !spaced {
                        self.insert(i, " ");
                    }
                    i = self.line_end(i);
                    continue;
                }
                b'"' | b'\'' if node_start => {
                    let mut j = i + 1;
                    while j < len {
                        if c == b'"' && b[j] == b'\\' {
                            j += 2;
                            continue;
                        }
                        if b[j] == c {
                            if c == b'\'' && b.get(j + 1) == Some(&b'\'') {
                                j += 2;
                                continue;
                            }
                            break;
                        }
                        j += 1;
                    }
                    i = (j + 1).min(len);
                    if depth == 0 && prev == Some(b':') && key_at_line_start {
                        self.trailing(i, indent);
                    }
                    closed!(c);
                }
                b'[' | b'{' if depth > 0 || node_start => {
                    if depth == 0 {
                        flow_value = (prev == Some(b':') && key_at_line_start).then_some(indent);
                    }
                    depth += 1;
                }
                // `key: ? k` is `key:` (null) and then the explicit key `? k` beside it.
                b'?' if depth == 0
                    && spaced
                    && prev == Some(b':')
                    && matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\r' | b'\n')) =>
                {
                    let pad = format!("\n{}", " ".repeat(indent));
                    self.insert(i, &pad);
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    i += 1;
                    if depth == 0 {
                        if let Some(ind) = flow_value.take() {
                            self.trailing(i, ind);
                        }
                    }
                    closed!(c);
                }
                b',' if depth > 0 && matches!(prev, Some(b'[' | b'{' | b',')) => {
                    self.insert(i, "~");
                }
                b':' if depth > 0 && matches!(b.get(i + 1), Some(b'[' | b'{')) => {
                    self.insert(i + 1, " ");
                }
                b'|' | b'>' if depth == 0 && node_start => {
                    // A block scalar header: indicators, then nothing but a comment.
                    let end = self.line_end(i);
                    let rest = &b[i + 1..end];
                    let ind = rest
                        .iter()
                        .take_while(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-'))
                        .count();
                    let tail = &rest[ind..];
                    let t = tail
                        .iter()
                        .position(|c| !matches!(c, b' ' | b'\t' | b'\r'))
                        .map_or(&[][..], |p| &tail[p..]);
                    if t.is_empty() || (t[0] == b'#' && tail.first() != Some(&b'#')) {
                        block_scalar = Some(indent as isize);
                        i = end;
                        continue;
                    }
                }
                _ => {}
            }
            if token_first.is_none() {
                token_first = Some(c);
            }
            prev = Some(c);
            spaced = false;
            prop = false;
            closer = false;
            i += 1;
        }
        // A `[`/`{` was counted by a node start; `depth` is only a guide.
        let _ = depth;
    }
}
