//! js-yaml 3's value model: [`Y`] values built from granit-parser's events by the
//! [`Loader`] (anchors and aliases, merge keys, duplicate keys, keys as JavaScript strings,
//! limits), then turned into [`Node`]s with spans in the user's text.

use super::*;

#[derive(Debug, Clone)]
pub(super) struct Y {
    pub(super) v: YV,
    /// In matter coordinates.
    pub(super) span: (usize, usize),
    /// The key's span, when this value is a mapping entry.
    pub(super) key: Option<(usize, usize)>,
    /// Nodes in this subtree.
    pub(super) weight: usize,
    /// String bytes in this subtree.
    pub(super) bytes: usize,
    /// Collection levels in this subtree (0 for a scalar).
    pub(super) height: usize,
    /// The subtree holds an alias to an unfinished collection.
    pub(super) pending: bool,
}

/// A js-yaml result object: insertion order plus JavaScript's index-key-first order.
#[derive(Debug, Clone, Default)]
pub(super) struct YMap {
    pub(super) entries: Vec<(String, Y)>,
    pub(super) index: HashMap<String, usize>,
}

impl YMap {
    pub(super) fn contains(&self, k: &str) -> bool {
        self.index.contains_key(k)
    }

    /// `obj[k] = v`: an existing key keeps its position.
    pub(super) fn set(&mut self, k: String, v: Y) {
        match self.index.get(&k) {
            Some(&i) => {
                if let Some(slot) = self.entries.get_mut(i) {
                    slot.1 = v;
                }
            }
            None => {
                self.index.insert(k.clone(), self.entries.len());
                self.entries.push((k, v));
            }
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Positions in `Object.keys` order.
    pub(super) fn order(&self) -> Vec<usize> {
        let mut idx: Vec<(u32, usize)> = Vec::new();
        let mut rest = Vec::new();
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match is_array_index(k) {
                Some(n) => idx.push((n, i)),
                None => rest.push(i),
            }
        }
        idx.sort_unstable();
        idx.into_iter().map(|(_, i)| i).chain(rest).collect()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&str, &Y)> {
        self.order()
            .into_iter()
            .filter_map(|i| self.entries.get(i).map(|(k, v)| (k.as_str(), v)))
    }

    pub(super) fn into_entries(self) -> Vec<(String, Y)> {
        self.entries
    }
}

#[derive(Debug, Clone)]
pub(super) enum YV {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// A `Date`: milliseconds since the epoch (NaN for an invalid date).
    Date(f64),
    /// A `Buffer`.
    Bytes(Vec<u8>),
    Seq(Vec<Y>),
    Map(YMap),
    /// An alias to a collection still being read (js-yaml: a reference to the unfinished
    /// object). Only a merge key can use it; anywhere else the value would be cyclic.
    Pending(usize),
}

impl Y {
    pub(super) fn new(v: YV, span: (usize, usize)) -> Y {
        let (weight, bytes, height) = match &v {
            YV::Str(s) => (1, s.len(), 0),
            YV::Bytes(b) => (1 + b.len(), 0, 1),
            YV::Seq(items) => items.iter().fold((1, 0, 1), |(w, b, h), y| {
                (w + y.weight, b + y.bytes, h.max(y.height + 1))
            }),
            YV::Map(o) => o.entries.iter().fold((1, 0, 1), |(w, b, h), (k, y)| {
                (w + y.weight, b + k.len() + y.bytes, h.max(y.height + 1))
            }),
            _ => (1, 0, 0),
        };
        let pending = match &v {
            YV::Pending(_) => true,
            YV::Seq(items) => items.iter().any(|y| y.pending),
            YV::Map(o) => o.entries.iter().any(|(_, y)| y.pending),
            _ => false,
        };
        Y {
            v,
            span,
            key: None,
            weight,
            bytes,
            height,
            pending,
        }
    }
}

pub(super) type YErr = (usize, usize, String);

pub(super) const CORE: &str = "tag:yaml.org,2002:";

/// A collection still open: what it holds so far, and what its entries and its closing
/// read.
pub(super) struct Frame {
    body: Body,
    /// A block collection (not a flow one).
    block: bool,
    /// The line of its first entry (see [`Loader::entry`]).
    first_line: Option<usize>,
    start: usize,
    anchor: usize,
    tag: Option<String>,
}

#[allow(clippy::large_enum_variant)] // a handful live at a time
enum Body {
    Seq(Vec<Y>),
    Map {
        obj: YMap,
        overridable: HashSet<String>,
        /// A key waiting for its value (and whether it is a merge key, `<<`).
        pending: Option<(Y, bool)>,
    },
}

/// A node's tag as js-yaml names it (`!!str` resolved: `tag:yaml.org,2002:str`).
fn tag_name(tag: Option<std::borrow::Cow<'_, granit_parser::Tag>>) -> Option<String> {
    tag.map(|t| format!("{}{}", t.handle(), t.suffix()))
}

/// The document being built from the parser's events: the collections still open
/// (innermost last) and, once the outermost is finished, the root.
#[derive(Default)]
struct Tree {
    stack: Vec<Frame>,
    root: Option<Y>,
}

impl Tree {
    /// A collection opens at `(s, e)`; refused past [`MAX_DEPTH`] levels.
    fn open(
        &mut self,
        body: Body,
        style: StructureStyle,
        anchor: usize,
        tag: Option<String>,
        (s, e): (usize, usize),
    ) -> Result<(), YErr> {
        if self.stack.len() >= MAX_DEPTH {
            return Err((
                s,
                e,
                format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
            ));
        }
        self.stack.push(Frame {
            body,
            block: style == StructureStyle::Block,
            first_line: None,
            start: s,
            anchor,
            tag,
        });
        Ok(())
    }

    /// The innermost collection, a `kind` (`sequence` or `mapping`), ends at `(s, end)`:
    /// constructed as its tag says, counted, height-checked, anchored, and put where it
    /// belongs.
    fn close(
        &mut self,
        l: &mut Loader<'_>,
        kind: &str,
        (s, end): (usize, usize),
    ) -> Result<(), YErr> {
        let unbalanced = || (s, end, format!("unbalanced {kind}"));
        let Frame {
            body,
            start,
            anchor,
            tag,
            ..
        } = self.stack.pop().ok_or_else(unbalanced)?;
        let v = match body {
            Body::Seq(items) if kind == "sequence" => construct_seq(items, tag.as_deref()),
            Body::Map { obj, pending, .. } if kind == "mapping" => {
                if let Some((k, _)) = pending {
                    return Err((k.span.0, k.span.1, "a mapping key without a value".into()));
                }
                construct_map(obj, tag.as_deref())
            }
            _ => return Err(unbalanced()),
        }
        .map_err(|m| (start, end, m))?;
        let span = (start, end.max(start));
        let y = Y::new(v, span);
        l.charge(1, 0, span)?;
        l.check_height(&y)?;
        if anchor != 0 {
            l.anchors.insert(anchor, y.clone());
        }
        self.complete(l, y, false)
    }

    /// A finished node `y`: the next item of the open sequence, the key or the value of
    /// the open mapping's next pair, or the root.
    fn complete(&mut self, l: &mut Loader<'_>, y: Y, merge: bool) -> Result<(), YErr> {
        let Some((top, anc)) = self.stack.split_last_mut() else {
            if y.pending {
                return Err(cyclic(&y));
            }
            self.root = Some(y);
            return Ok(());
        };
        match &mut top.body {
            Body::Seq(items) => {
                l.entry(top.block, &mut top.first_line, y.span.0)?;
                items.push(y);
                Ok(())
            }
            Body::Map {
                obj,
                overridable,
                pending,
            } => match pending.take() {
                None => {
                    l.entry(top.block, &mut top.first_line, y.span.0)?;
                    *pending = Some((y, merge));
                    Ok(())
                }
                Some((k, k_merge)) => {
                    l.store_pair(anc, top.anchor, obj, overridable, k, k_merge, y)
                }
            },
        }
    }
}

pub(super) struct Loader<'a> {
    pub(super) src: &'a str,
    pub(super) anchors: HashMap<usize, Y>,
    pub(super) nodes: usize,
    pub(super) bytes: usize,
    /// After [`relax`]: the starts of the lines that lost a tab, and of all lines.
    pub(super) tab_lines: Vec<usize>,
    pub(super) line_starts: Vec<usize>,
    /// The error came from granit (a syntax error), not from js-yaml's value rules.
    pub(super) syntax_error: bool,
}

/// js-yaml 3 `safeLoad(matter)`: `Ok(None)` for a stream without documents (`undefined`).
/// Error offsets are in `matter`; the value's spans are in `matter` after the offset also
/// returned (a stripped BOM).
pub(super) fn load_yaml(matter: &str) -> Result<(Option<Y>, usize), YErr> {
    // js-yaml: a trailing line break is added; a leading BOM is removed; NUL is refused.
    let (shift, text) = match matter.strip_prefix('\u{feff}') {
        Some(t) => (3, t),
        None => (0, matter),
    };
    if let Some(i) = text.find('\0') {
        return Err((
            shift + i,
            shift + i + 1,
            "null byte is not allowed in input".into(),
        ));
    }
    let owned;
    let src = if !text.is_empty() && !text.ends_with(['\n', '\r']) {
        owned = format!("{text}\n");
        owned.as_str()
    } else {
        text
    };
    let run = |src: &str, tab_lines: Vec<usize>| {
        let line_starts = if tab_lines.is_empty() {
            Vec::new()
        } else {
            std::iter::once(0)
                .chain(src.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        };
        let mut l = Loader {
            src,
            anchors: HashMap::new(),
            nodes: 0,
            bytes: 0,
            tab_lines,
            line_starts,
            syntax_error: false,
        };
        let r = l.run();
        (r, l.syntax_error)
    };
    // Spans may reach the line break added above.
    let clamp = |mut y: Option<Y>| {
        if let Some(y) = y.as_mut() {
            remap(y, &|o| o.min(text.len()));
        }
        y
    };
    match run(src, Vec::new()) {
        (Ok(y), _) => Ok((clamp(y), shift)),
        (Err((s, e, m)), syntax) => {
            // Read it again with js-yaml's leniencies spelled out (see `relax`).
            // Only granit's own syntax errors: js-yaml refuses what the loader refuses.
            for detab in [false, true].into_iter().filter(|_| syntax) {
                if let Some((relaxed, map, tab_lines)) = relax(src, detab) {
                    if let (Ok(mut y), _) = run(&relaxed, tab_lines) {
                        if let Some(y) = y.as_mut() {
                            remap(y, &|o| map.map(o));
                        }
                        return Ok((clamp(y), shift));
                    }
                }
            }
            let max = matter.len();
            Err(((s + shift).min(max), (e + shift).min(max), m))
        }
    }
}

/// Where a tab error is: granit marks the scalar or line end it was reading when it met
/// the tab; the editor should land on the tab itself. The first tab from `off` on, if it
/// is on `off`'s line or the next one; else `off`.
fn tab_near(src: &str, off: usize) -> usize {
    let Some(rest) = src.get(off..) else {
        return off;
    };
    let Some(t) = rest.find('\t') else {
        return off;
    };
    if rest[..t].matches('\n').count() <= 1 {
        off + t
    } else {
        off
    }
}

impl Loader<'_> {
    pub(super) fn err_at(&mut self, e: &ScanError) -> YErr {
        self.syntax_error = true;
        let off = e.marker().byte_offset().unwrap_or(0).min(self.src.len());
        if e.info() == "recursion limit exceeded" {
            // granit's own depth limit, which sits where ours does: not a YAML error.
            return (
                off,
                off,
                format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
            );
        }
        let info = e.info().to_string();
        let off = if info.contains("tab") {
            tab_near(self.src, off)
        } else {
            off
        };
        (off, off, info)
    }

    pub(super) fn run(&mut self) -> Result<Option<Y>, YErr> {
        let mut parser = Parser::new_from_str_with_options(
            self.src,
            granit_parser::options! { bom_inside_document_as_content: true },
        );
        let mut tree = Tree::default();
        let mut docs = 0usize;
        while let Some(next) = parser.next_event() {
            let (ev, span) = next.map_err(|e| self.err_at(&e))?;
            let (s, e) = span
                .byte_range()
                .map(|r| (r.start, r.end))
                .unwrap_or((0, 0));
            match ev {
                Event::DocumentStart(..) => {
                    docs += 1;
                    if docs > 1 {
                        return Err((
                            s,
                            e,
                            "expected a single document in the stream, but found more".into(),
                        ));
                    }
                }
                Event::Alias(id) => {
                    let Some((w, b)) = self.anchors.get(&id).map(|y| (y.weight, y.bytes)) else {
                        let open = tree.stack.iter().any(|f| f.anchor == id);
                        if !open {
                            return Err((s, e, "unknown alias".into()));
                        }
                        let y = Y::new(YV::Pending(id), (s, e));
                        tree.complete(self, y, false)?;
                        continue;
                    };
                    self.charge(w, b, (s, e))?;
                    let Some(mut y) = self.anchors.get(&id).cloned() else {
                        return Err((s, e, "unknown alias".into()));
                    };
                    y.key = None;
                    tree.complete(self, y, false)?;
                }
                Event::Scalar(value, style, anchor, tag) => {
                    let tag = tag_name(tag);
                    // A block scalar's span ends after its last line break.
                    let mut e = e;
                    if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
                        let b = self.src.as_bytes();
                        while e > s && matches!(b.get(e - 1), Some(b'\n' | b'\r')) {
                            e -= 1;
                        }
                    }
                    self.check_printable(s, e, style)?;
                    let empty = style == ScalarStyle::Plain && s == e;
                    if empty && self.is_missing_block_key(&tree.stack, s) {
                        return Err((
                            s,
                            e,
                            "incomplete explicit mapping pair; a key node is missed".into(),
                        ));
                    }
                    let (v, merge) = resolve_scalar(&value, style, tag.as_deref(), empty)
                        .map_err(|m| (s, e, m))?;
                    let y = Y::new(v, (s, e));
                    self.charge(y.weight, y.bytes, (s, e))?;
                    if anchor != 0 {
                        self.anchors.insert(anchor, y.clone());
                    }
                    tree.complete(self, y, merge)?;
                }
                Event::SequenceStart(style, anchor, tag) => {
                    let seq = Body::Seq(Vec::new());
                    tree.open(seq, style, anchor, tag_name(tag), (s, e))?;
                }
                Event::MappingStart(style, anchor, tag) => {
                    let map = Body::Map {
                        obj: YMap::default(),
                        overridable: HashSet::new(),
                        pending: None,
                    };
                    tree.open(map, style, anchor, tag_name(tag), (s, e))?;
                }
                Event::SequenceEnd => tree.close(self, "sequence", (s, e))?,
                Event::MappingEnd => tree.close(self, "mapping", (s, e))?,
                _ => {}
            }
        }
        Ok(tree.root)
    }

    /// js-yaml refuses an implicit empty key in a block mapping (`: x`), though an explicit
    /// one (`? ` then `: x`) and one in a flow mapping (`{: x}`) are fine.
    pub(super) fn is_missing_block_key(&self, stack: &[Frame], at: usize) -> bool {
        let Some(Frame {
            body: Body::Map { pending: None, .. },
            block: true,
            ..
        }) = stack.last()
        else {
            return false;
        };
        let b = self.src.as_bytes();
        if b.get(at) != Some(&b':') {
            return false;
        }
        let before = b[..at]
            .iter()
            .rev()
            .find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
        before != Some(&b'?')
    }

    /// A block collection's entry starting at `start` (see [`relax`]).
    pub(super) fn entry(
        &self,
        block: bool,
        first_line: &mut Option<usize>,
        start: usize,
    ) -> Result<(), YErr> {
        if !block || self.tab_lines.is_empty() {
            return Ok(());
        }
        let idx = self.line_starts.partition_point(|&l| l <= start);
        let line = idx
            .checked_sub(1)
            .and_then(|i| self.line_starts.get(i))
            .copied()
            .unwrap_or(0);
        match *first_line {
            None => *first_line = Some(line),
            Some(f) if f != line && self.tab_lines.binary_search(&f).is_ok() => {
                return Err((
                    start,
                    start,
                    "bad indentation: this block collection starts on a tab-indented line".into(),
                ));
            }
            Some(_) => {}
        }
        Ok(())
    }

    pub(super) fn check_height(&self, y: &Y) -> Result<(), YErr> {
        if y.height > MAX_DEPTH {
            return Err((
                y.span.0,
                y.span.1,
                format!("nesting deeper than {MAX_DEPTH} levels: {PAST_LIMIT}"),
            ));
        }
        Ok(())
    }

    pub(super) fn charge(
        &mut self,
        nodes: usize,
        bytes: usize,
        at: (usize, usize),
    ) -> Result<(), YErr> {
        self.nodes = self.nodes.saturating_add(nodes);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.nodes > MAX_NODES || self.bytes > MAX_STRING_BYTES {
            return Err((
                at.0,
                at.1,
                format!(
                    "the frontmatter expands to more than {MAX_NODES} nodes or {MAX_STRING_BYTES} bytes (alias bomb?): {PAST_LIMIT}"
                ),
            ));
        }
        Ok(())
    }

    /// js-yaml's `captureSegment` checks: quoted scalars refuse control characters other
    /// than tab (JSON rule), other scalars refuse YAML's non-printable characters.
    pub(super) fn check_printable(
        &self,
        s: usize,
        e: usize,
        style: ScalarStyle,
    ) -> Result<(), YErr> {
        let Some(raw) = self.src.get(s..e) else {
            return Ok(());
        };
        let quoted = matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted);
        for (i, c) in raw.char_indices() {
            let bad = if quoted {
                (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')
            } else {
                matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}'
                    | '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}')
            };
            if bad {
                let msg = if quoted {
                    "expected valid JSON character"
                } else {
                    "the stream contains non-printable characters"
                };
                return Err((s + i, s + i + c.len_utf8(), msg.into()));
            }
        }
        Ok(())
    }

    /// js-yaml `storeMappingPair`. `anc` are the collections being built around this
    /// mapping (whose anchor is `own`): an alias to one of them is a reference to the
    /// unfinished object, which a merge key reads as it is at that moment.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn store_pair(
        &mut self,
        anc: &[Frame],
        own: usize,
        obj: &mut YMap,
        overridable: &mut HashSet<String>,
        key: Y,
        key_merge: bool,
        mut value: Y,
    ) -> Result<(), YErr> {
        if key.pending {
            return Err(cyclic(&key));
        }
        let k = key_string(&key).map_err(|m| (key.span.0, key.span.1, m))?;
        if key_merge {
            if let YV::Seq(items) = &value.v {
                for item in items {
                    self.merge_from(anc, own, obj, overridable, item)?;
                }
            } else {
                self.merge_from(anc, own, obj, overridable, &value)?;
            }
            return Ok(());
        }
        if value.pending {
            return Err(cyclic(&value));
        }
        if !overridable.contains(&k) && obj.contains(&k) {
            return Err((key.span.0, key.span.1, "duplicated mapping key".into()));
        }
        overridable.remove(&k);
        value.key = Some(key.span);
        obj.set(k, value);
        Ok(())
    }

    /// js-yaml `mergeMappings`: the source's own keys (`Object.keys`) that the target lacks.
    pub(super) fn merge_from(
        &mut self,
        anc: &[Frame],
        own: usize,
        obj: &mut YMap,
        overridable: &mut HashSet<String>,
        src: &Y,
    ) -> Result<(), YErr> {
        let mut add = |this: &mut Self, k: String, v: &Y, key: Option<(usize, usize)>| {
            if obj.contains(&k) {
                return Ok(());
            }
            if v.pending {
                return Err(cyclic(v));
            }
            this.charge(v.weight, v.bytes, src.span)?;
            let mut v = v.clone();
            if key.is_some() {
                v.key = key;
            }
            obj.set(k.clone(), v);
            overridable.insert(k);
            Ok(())
        };
        let unacceptable = || {
            Err((
                src.span.0,
                src.span.1,
                "cannot merge mappings; the provided source object is unacceptable".into(),
            ))
        };
        match &src.v {
            YV::Map(o) => {
                for (k, v) in o.iter() {
                    add(self, k.to_string(), v, None)?;
                }
            }
            YV::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    add(self, i.to_string(), v, Some(v.span))?;
                }
            }
            YV::Bytes(b) => {
                for (i, n) in b.iter().enumerate() {
                    let v = Y::new(YV::Num(f64::from(*n)), src.span);
                    add(self, i.to_string(), &v, Some(src.span))?;
                }
            }
            YV::Date(_) => {}
            // Merging the mapping into itself: every key is already there.
            YV::Pending(id) if *id == own => {}
            YV::Pending(id) => {
                let frame = anc.iter().rev().find(|f| f.anchor == *id);
                match frame.map(|f| &f.body) {
                    Some(Body::Map { obj: o, .. }) => {
                        for (k, v) in o.iter() {
                            add(self, k.to_string(), v, None)?;
                        }
                    }
                    Some(Body::Seq(items)) => {
                        for (i, v) in items.iter().enumerate() {
                            add(self, i.to_string(), v, Some(v.span))?;
                        }
                    }
                    None => return unacceptable(),
                }
            }
            _ => return unacceptable(),
        }
        Ok(())
    }
}

pub(super) fn remap(y: &mut Y, f: &dyn Fn(usize) -> usize) {
    y.span = (f(y.span.0), f(y.span.1));
    y.key = y.key.map(|(s, e)| (f(s), f(e)));
    match &mut y.v {
        YV::Seq(items) => items.iter_mut().for_each(|i| remap(i, f)),
        YV::Map(o) => o.entries.iter_mut().for_each(|(_, v)| remap(v, f)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------
// Into nodes

pub(super) fn to_node(y: Y, source: SourceId, to_orig: &dyn Fn(usize) -> usize) -> Node {
    let loc = |(s, e): (usize, usize)| Loc {
        source,
        span: Span::new(to_orig(s), to_orig(e).max(to_orig(s))),
    };
    let value = match y.v {
        // Never left in a finished value (refused as cyclic).
        YV::Null | YV::Pending(_) => Value::Null,
        YV::Bool(b) => Value::Bool(b),
        YV::Num(n) => Value::Number(js_number(n)),
        YV::Str(s) => Value::String(s),
        YV::Date(t) => Value::Number(date_iso(t)),
        YV::Bytes(b) => Value::Array(
            b.iter()
                .map(|n| Node {
                    value: Value::Number(n.to_string()),
                    loc: loc(y.span),
                    key: None,
                })
                .collect(),
        ),
        YV::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(|i| to_node(i, source, to_orig))
                .collect(),
        ),
        YV::Map(o) => {
            let mut out = JsObject::new();
            for (k, v) in o.into_entries() {
                out.set(k, to_node(v, source, to_orig));
            }
            Value::Object(out)
        }
    };
    Node {
        value,
        loc: loc(y.span),
        key: y.key.map(loc),
    }
}
