//! OpenCode's wildcard, exactly (`Wildcard.match` in `packages/opencode/src/util/wildcard.ts`,
//! as compiled into 1.18.34; spec §1, every case verified on the binary):
//!
//! 1. every `\` in subject and pattern becomes `/`;
//! 2. `. + ^ $ { } ( ) | [ ] \` are escaped, so there are no classes, braces or groups;
//! 3. `*` becomes `.*` (any run, `/` and newlines included; `**` is just two stars);
//! 4. `?` becomes `.` — one UTF-16 code unit, since the regex has no `u` flag;
//! 5. a regex ending in ` .*` (pattern ending in space-star) gets the tail `( .*)?`, so
//!    `git *` matches `git` but not `gitx`;
//! 6. anchored `^…$`, flag `s`; case-sensitive on Linux and macOS, `i` on Windows builds.
//!
//! Rather than build a regex, the pattern is compiled to tokens over UTF-16 code units and
//! matched with the classic star-backtracking algorithm, which is exact for patterns made of
//! literals, `?` and `*`.

/// Which build of OpenCode is audited: Windows builds match case-insensitively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Platform {
    #[default]
    Unix,
    Windows,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Token {
    /// One literal UTF-16 code unit (after `\` → `/`).
    Lit(u16),
    /// `?`: any one code unit.
    One,
    /// `*`: any run of code units.
    Star,
}

/// A compiled wildcard pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wildcard {
    /// The pattern's tokens, without the trailing ` *` when `optional_tail` is set.
    pub tokens: Vec<Token>,
    /// The pattern ended in ` *`: the tail `( .*)?` is optional.
    pub optional_tail: bool,
}

/// The subject as the regex sees it: UTF-16 code units with `\` read as `/`.
pub fn subject_units(subject: &str) -> Vec<u16> {
    subject
        .encode_utf16()
        .map(|u| if u == b'\\' as u16 { b'/' as u16 } else { u })
        .collect()
}

impl Wildcard {
    /// The glob's units when it has no wildcard and no optional tail: the one text it
    /// matches exactly (in any case on Windows).
    pub fn literal(&self) -> Option<Vec<u16>> {
        if self.optional_tail {
            return None;
        }
        self.tokens
            .iter()
            .map(|t| match t {
                Token::Lit(u) => Some(*u),
                _ => None,
            })
            .collect()
    }

    /// The glob read with each `?` as `x` and each `*` as `star`: an input it matches.
    pub fn fill_units(&self, star: &[u16]) -> Vec<u16> {
        let mut units = Vec::with_capacity(self.tokens.len());
        for t in &self.tokens {
            match t {
                Token::Lit(u) => units.push(*u),
                Token::One => units.push(u16::from(b'x')),
                Token::Star => units.extend_from_slice(star),
            }
        }
        units
    }

    /// [`Wildcard::fill_units`] as text (a lone surrogate becomes U+FFFD).
    pub fn fill(&self, star: &str) -> String {
        let star: Vec<u16> = star.encode_utf16().collect();
        String::from_utf16_lossy(&self.fill_units(&star))
    }

    pub fn compile(pattern: &str) -> Wildcard {
        let mut tokens: Vec<Token> = pattern
            .encode_utf16()
            .map(|u| match u {
                0x2a => Token::Star,
                0x3f => Token::One,
                0x5c => Token::Lit(b'/' as u16),
                u => Token::Lit(u),
            })
            .collect();
        let n = tokens.len();
        let optional_tail =
            n >= 2 && tokens[n - 1] == Token::Star && tokens[n - 2] == Token::Lit(b' ' as u16);
        if optional_tail {
            tokens.truncate(n - 2);
        }
        Wildcard {
            tokens,
            optional_tail,
        }
    }

    /// Does the pattern match the whole subject?
    pub fn is_match(&self, subject: &str, platform: Platform) -> bool {
        self.is_match_units(&subject_units(subject), platform)
    }

    pub fn is_match_units(&self, s: &[u16], platform: Platform) -> bool {
        if match_tokens(&self.tokens, s, platform) {
            return true;
        }
        if self.optional_tail {
            // `P( .*)?`: P, then a space, then anything.
            let mut with_tail = self.tokens.clone();
            with_tail.push(Token::Lit(b' ' as u16));
            with_tail.push(Token::Star);
            return match_tokens(&with_tail, s, platform);
        }
        false
    }
}

/// `Wildcard.match(subject, pattern)`.
pub fn matches(subject: &str, pattern: &str, platform: Platform) -> bool {
    Wildcard::compile(pattern).is_match(subject, platform)
}

fn unit_eq(p: u16, s: u16, platform: Platform) -> bool {
    p == s || (platform == Platform::Windows && fold(p) == fold(s))
}

/// ECMAScript Canonicalize for a non-unicode, ignore-case regex: the upper case of the code
/// unit when it is a single code unit, and never mapping a non-ASCII unit into ASCII.
pub fn fold(u: u16) -> u16 {
    let Some(c) = char::from_u32(u as u32) else {
        return u; // lone surrogate
    };
    let mut up = c.to_uppercase();
    let (Some(first), None) = (up.next(), up.next()) else {
        return u;
    };
    let mut buf = [0u16; 2];
    let enc = first.encode_utf16(&mut buf);
    if enc.len() != 1 {
        return u;
    }
    let r = enc[0];
    if u >= 128 && r < 128 {
        return u;
    }
    r
}

/// Glob matching with `*` backtracking: on a mismatch, retry from the last star, which
/// swallows one more unit. Linear for one star, O(n·m) at worst; exact for `*`/`?`/literals.
fn match_tokens(p: &[Token], s: &[u16], platform: Platform) -> bool {
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(Token::Star) => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(Token::One) => {
                pi += 1;
                si += 1;
            }
            Some(Token::Lit(u)) if unit_eq(*u, s[si], platform) => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|t| *t == Token::Star)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        matches(s, p, Platform::Unix)
    }

    /// The cases of spec §10.1, each verified on the 1.18.34 binary.
    #[test]
    fn verified_cases() {
        let cases: &[(&str, &str, bool)] = &[
            ("git *", "git", true),
            ("git *", "git status", true),
            ("git *", "gitx", false),
            ("git *", "git  status", true),
            ("git*", "git", true),
            ("*.ts", "a/b/c.ts", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("a?c", "a/c", true),
            ("a.c", "abc", false),
            ("a.c", "a.c", true),
            ("[ab]", "a", false),
            ("[ab]", "[ab]", true),
            ("{a,b}", "a", false),
            ("{a,b}", "{a,b}", true),
            ("A*", "abc", false),
            ("a\\b", "a/b", true),
            ("a/b", "a\\b", true),
            ("a*", "a\nb", true),
            ("a?b", "a\nb", true),
            ("**", "x/y", true),
            ("src/**", "src", false),
            ("src/**", "src/", true),
            ("a+b", "aab", false),
            ("a+b", "a+b", true),
            ("(a|b)", "a", false),
            ("(a|b)", "(a|b)", true),
            ("^a$", "^a$", true),
            ("*.env", ".env", true),
            ("abc", "xabcx", false),
            ("a **", "a", false),
            (" *", "", true),
            ("a *?", "a", false),
            ("a\\ *", "a/", true),
            ("", "", true),
            ("", "x", false),
        ];
        for (p, s, want) in cases {
            assert_eq!(m(p, s), *want, "pattern {p:?} subject {s:?}");
        }
    }

    #[test]
    fn question_mark_is_one_utf16_unit() {
        // U+1F600 is two UTF-16 code units.
        assert!(m("??", "😀"));
        assert!(!m("?", "😀"));
        assert!(m("?", "é"));
    }

    #[test]
    fn permission_names() {
        for p in ["gl*", "g?ob", "glob*", "*", "glob *"] {
            assert!(m(p, "glob"), "{p}");
        }
        for p in ["GLOB", "gl"] {
            assert!(!m(p, "glob"), "{p}");
        }
    }

    #[test]
    fn windows_is_case_insensitive() {
        assert!(matches("abc", "A*", Platform::Windows));
        assert!(!matches("abc", "A*", Platform::Unix));
        // Non-ASCII never folds into ASCII (U+017F LATIN SMALL LETTER LONG S upper-cases to 'S').
        assert!(!matches("\u{17f}", "s", Platform::Windows));
    }
}
