//! Tokenizer for the script level (everything outside `%{ }%` blocks).

use crate::ParseError;

/// Maps byte offsets to 1-based (line, column) positions.
pub(crate) struct LineIndex<'a> {
    src: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        let mut starts = vec![0];
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i + 1);
            }
        }
        LineIndex { src, starts }
    }

    /// 1-based line and column (in characters) of byte offset `at`.
    pub(crate) fn pos(&self, at: usize) -> (u32, u32) {
        let mut at = at.min(self.src.len());
        while !self.src.is_char_boundary(at) {
            at -= 1;
        }
        let line = match self.starts.binary_search(&at) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let col = self.src[self.starts[line]..at].chars().count() + 1;
        (to_u32(line + 1), to_u32(col))
    }

    pub(crate) fn error(&self, at: usize, msg: impl Into<String>) -> ParseError {
        let (line, col) = self.pos(at);
        ParseError { line, col, msg: msg.into() }
    }
}

pub(crate) fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Decimal or hex integer literal.
    Int(u64),
    /// `[0-9]*.[0-9]+`
    Float(f64),
    /// `[A-Za-z_][A-Za-z0-9_]*`
    Word(String),
    /// `"..."`, contents verbatim.
    Str(String),
    /// `` `...` ``, contents verbatim.
    Shell(String),
    /// `%{ ... }%`; the byte range of the contents.
    Code(usize, usize),
    /// `--name[=value]`
    Opt(String, Option<String>),
    /// `...`
    Ellipsis,
    /// Any other single character.
    Punct(char),
    /// A lexical error; the parser reports it when it gets there.
    Error(String),
    Eof,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    /// Byte offsets of the token in the source.
    pub start: usize,
    pub end: usize,
    /// A line break (possibly inside a comment) separates this token from
    /// the previous one; true for the first token.
    pub nl_before: bool,
}

impl Token {
    pub(crate) fn is_punct(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }

    pub(crate) fn is_word(&self, w: &str) -> bool {
        matches!(&self.tok, Tok::Word(x) if x == w)
    }
}

/// Splits the whole source into tokens. The last token is `Eof`, or `Error`
/// at the first lexical error (nothing after it is tokenized).
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut nl = true;
    loop {
        // Skip blanks and comments.
        loop {
            match b.get(i) {
                Some(b'\n') => {
                    nl = true;
                    i += 1;
                }
                Some(b' ' | b'\t' | b'\r' | 0x0b | 0x0c) => i += 1,
                Some(b'/') if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                Some(b'/') if b.get(i + 1) == Some(&b'*') => match find(b, i + 2, b"*/") {
                    Some(j) => {
                        if b[i..j].contains(&b'\n') {
                            nl = true;
                        }
                        i = j + 2;
                    }
                    None => {
                        toks.push(err(i, i + 2, nl, "unterminated comment: '/*' without a closing '*/'"));
                        return toks;
                    }
                },
                _ => break,
            }
        }
        let start = i;
        let Some(&c) = b.get(i) else {
            toks.push(Token { tok: Tok::Eof, start: i, end: i, nl_before: nl });
            return toks;
        };
        let tok = match c {
            b'%' if b.get(i + 1) == Some(&b'{') => match find(b, i + 2, b"}%") {
                Some(j) => {
                    i = j + 2;
                    Tok::Code(start + 2, j)
                }
                None => {
                    toks.push(err(start, start + 2, nl, "unterminated code block: '%{' without a closing '}%'"));
                    return toks;
                }
            },
            b'`' | b'"' => match find_quote(b, i + 1, c) {
                Some(j) => {
                    i = j + 1;
                    let body = src[start + 1..j].to_string();
                    if c == b'`' {
                        Tok::Shell(body)
                    } else {
                        Tok::Str(body)
                    }
                }
                None => {
                    let msg = if c == b'`' {
                        "unterminated shell command: '`' without a closing '`'"
                    } else {
                        "unterminated string: '\"' without a closing '\"'"
                    };
                    toks.push(err(start, start + 1, nl, msg));
                    return toks;
                }
            },
            b'0'..=b'9' => match number(src, &mut i) {
                Ok(t) => t,
                Err(msg) => {
                    toks.push(err(start, i, nl, &msg));
                    return toks;
                }
            },
            b'.' if b.get(i + 1) == Some(&b'.') && b.get(i + 2) == Some(&b'.') => {
                i += 3;
                Tok::Ellipsis
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => match number(src, &mut i) {
                Ok(t) => t,
                Err(msg) => {
                    toks.push(err(start, i, nl, &msg));
                    return toks;
                }
            },
            b'-' if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_some_and(|&c| is_word_byte(c)) => {
                i += 2;
                while b.get(i).is_some_and(|&c| is_word_byte(c)) {
                    i += 1;
                }
                let name = src[start + 2..i].to_string();
                let mut value = None;
                if b.get(i) == Some(&b'=') {
                    i += 1;
                    if b.get(i) == Some(&b'"') {
                        match find_quote(b, i + 1, b'"') {
                            Some(j) => {
                                value = Some(src[i + 1..j].to_string());
                                i = j + 1;
                            }
                            None => {
                                toks.push(err(i, i + 1, nl, "unterminated string: '\"' without a closing '\"'"));
                                return toks;
                            }
                        }
                    } else {
                        let vs = i;
                        while b.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                            i += 1;
                        }
                        // Stay on a character boundary.
                        while !src.is_char_boundary(i) {
                            i += 1;
                        }
                        value = Some(src[vs..i].to_string());
                    }
                }
                Tok::Opt(name, value)
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while b.get(i).is_some_and(|&c| is_word_byte(c)) {
                    i += 1;
                }
                Tok::Word(src[start..i].to_string())
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
                i += ch.len_utf8().max(1);
                Tok::Punct(ch)
            }
        };
        toks.push(Token { tok, start, end: i, nl_before: nl });
        nl = false;
    }
}

fn err(start: usize, end: usize, nl: bool, msg: &str) -> Token {
    Token { tok: Tok::Error(msg.to_string()), start, end, nl_before: nl }
}

pub(crate) fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Index of the first occurrence of `pat` at or after `from`.
pub(crate) fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..].windows(pat.len()).position(|w| w == pat).map(|p| p + from)
}

/// Index of the closing `q`, skipping backslash escapes.
fn find_quote(b: &[u8], mut i: usize, q: u8) -> Option<usize> {
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
        } else if b[i] == q {
            return Some(i);
        } else {
            i += 1;
        }
    }
    None
}

/// Lexes a number starting at `*i` (a digit, or `.` followed by a digit).
fn number(src: &str, i: &mut usize) -> Result<Tok, String> {
    let b = src.as_bytes();
    let start = *i;
    let tok = if b[start] == b'0'
        && matches!(b.get(start + 1), Some(b'x' | b'X'))
        && b.get(start + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        *i += 2;
        while b.get(*i).is_some_and(u8::is_ascii_hexdigit) {
            *i += 1;
        }
        let digits = src[start + 2..*i].trim_start_matches('0');
        if digits.len() > 16 {
            Err(format!("integer literal '{}' is too large", &src[start..*i]))
        } else {
            Ok(Tok::Int(u64::from_str_radix(if digits.is_empty() { "0" } else { digits }, 16).unwrap_or(0)))
        }
    } else {
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        if b.get(*i) == Some(&b'.') && b.get(*i + 1).is_some_and(u8::is_ascii_digit) {
            *i += 1;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            match src[start..*i].parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Tok::Float(v)),
                _ => Err(format!("number '{}' is out of range", &src[start..*i])),
            }
        } else {
            src[start..*i]
                .parse::<u64>()
                .map(Tok::Int)
                .map_err(|_| format!("integer literal '{}' is too large", &src[start..*i]))
        }
    };
    if b.get(*i).is_some_and(|&c| is_word_byte(c)) {
        while b.get(*i).is_some_and(|&c| is_word_byte(c)) {
            *i += 1;
        }
        return Err(format!("malformed number '{}'", &src[start..*i]));
    }
    tok
}
