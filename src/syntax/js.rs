//! JavaScript's string semantics where OpenCode's behaviour depends on them: what
//! `String.prototype.trim` and `\s` treat as white space, and what a line terminator is.
//! One place for the frontmatter reader, `{file:}` substitution and the bash splitter.

/// JavaScript `\s` and the characters `String.prototype.trim` removes: WhiteSpace and
/// LineTerminator code points (Rust's `char::is_whitespace` plus U+FEFF, minus U+0085).
pub fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// JavaScript's `trim()`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(js_space)
}

/// A JavaScript line terminator (what `.` does not match and `^`/`$` see in `m` mode).
pub fn js_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The explicit list is Rust's white space with U+0085 out and U+FEFF in.
    #[test]
    fn js_space_is_rust_whitespace_minus_nel_plus_bom() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let rust = (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
            assert_eq!(js_space(c), rust, "{:#x}", c as u32);
        }
    }
}
