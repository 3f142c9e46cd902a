//! `%{ ... }%` code blocks: a small Python subset (assert, assignment and
//! print statements on integer expressions) and its evaluator.

use crate::lexer::LineIndex;
use crate::parser::{snippet, MAX_DEPTH};
use crate::{Assert, BinaryOp, CExpr, CodeBlock, ParseError, Stmt, UnaryOp};

#[derive(Debug, Clone, PartialEq)]
enum PTok {
    Name(String),
    Int(i64),
    Str(String),
    Op(&'static str),
    /// End of a logical line.
    Newline,
    /// Something this subset does not understand; reported only if an
    /// assert statement contains it.
    Bad(String),
}

#[derive(Debug, Clone)]
struct PToken {
    tok: PTok,
    /// Byte offsets in the whole script.
    start: usize,
    end: usize,
}

const OPS: [&str; 33] = [
    "**=", "//=", ">>=", "<<=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "->", "+", "-", "*", "/", "%", "<", ">", "(", ")", ",", ";", "~",
];
const OPS1: &str = "&|^:=[]{}.@";

/// Tokenizes the Python code in `src[from..to]`. Never fails: problems become
/// `Bad` tokens.
fn tokenize(src: &str, from: usize, to: usize) -> Vec<PToken> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = from;
    let mut depth: i32 = 0;
    let push = |out: &mut Vec<PToken>, tok, start, end| out.push(PToken { tok, start, end });
    while i < to {
        let c = b[i];
        let start = i;
        match c {
            b'\n' => {
                i += 1;
                if depth <= 0 {
                    push(&mut out, PTok::Newline, start, start);
                }
            }
            b' ' | b'\t' | b'\r' | 0x0c => i += 1,
            b'#' => {
                while i < to && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' if b.get(i + 1) == Some(&b'\n') && i + 1 < to => i += 2,
            b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') && i + 2 < to => i += 3,
            b'\'' | b'"' => {
                if i + 2 < to && b[i + 1] == c && b[i + 2] == c {
                    // Triple-quoted: skip to the closing triple quote.
                    let mut j = i + 3;
                    while j + 2 < to && !(b[j] == c && b[j + 1] == c && b[j + 2] == c) {
                        j += 1;
                    }
                    i = if j + 2 < to { j + 3 } else { to };
                    push(&mut out, PTok::Bad("triple-quoted strings are not supported".into()), start, i);
                    continue;
                }
                let mut j = i + 1;
                let mut val = String::new();
                let mut ok = false;
                while j < to {
                    match b[j] {
                        b'\\' if j + 1 < to => {
                            let e = b[j + 1];
                            match e {
                                b'n' => val.push('\n'),
                                b't' => val.push('\t'),
                                b'r' => val.push('\r'),
                                b'0' => val.push('\0'),
                                b'\\' | b'\'' | b'"' => val.push(e as char),
                                b'\n' => {}
                                _ => {
                                    val.push('\\');
                                    // Re-read the escaped char as normal text.
                                    j += 1;
                                    continue;
                                }
                            }
                            j += 2;
                        }
                        b'\n' => break,
                        x if x == c => {
                            ok = true;
                            j += 1;
                            break;
                        }
                        _ => {
                            let ch = src[j..].chars().next().unwrap_or('\u{fffd}');
                            val.push(ch);
                            j += ch.len_utf8().max(1);
                        }
                    }
                }
                i = j.min(to);
                if ok {
                    push(&mut out, PTok::Str(val), start, i);
                } else {
                    push(&mut out, PTok::Bad("unterminated string literal".into()), start, i);
                }
            }
            b'0'..=b'9' => {
                while i < to && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                    // Exponent signs of floats ("1e-3") are left as operators;
                    // the number is rejected anyway.
                    i += 1;
                }
                let text = &src[start..i];
                push(&mut out, int_literal(text), start, i);
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < to && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                push(&mut out, PTok::Name(src[start..i].to_string()), start, i);
            }
            _ => {
                if let Some(op) = OPS.iter().find(|op| src[i..to].starts_with(**op)) {
                    i += op.len();
                    match *op {
                        "(" => depth += 1,
                        ")" => depth -= 1,
                        _ => {}
                    }
                    push(&mut out, PTok::Op(op), start, i);
                } else if c.is_ascii() && OPS1.as_bytes().contains(&c) {
                    i += 1;
                    match c {
                        b'[' | b'{' => depth += 1,
                        b']' | b'}' => depth -= 1,
                        _ => {}
                    }
                    let name = match c {
                        b'&' => "&",
                        b'|' => "|",
                        b'^' => "^",
                        b':' => ":",
                        b'=' => "=",
                        b'[' => "[",
                        b']' => "]",
                        b'{' => "{",
                        b'}' => "}",
                        b'.' => ".",
                        _ => "@",
                    };
                    push(&mut out, PTok::Op(name), start, i);
                } else {
                    let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
                    i += ch.len_utf8().max(1);
                    push(&mut out, PTok::Bad(format!("unexpected character '{}'", ch.escape_debug())), start, i);
                }
            }
        }
    }
    push(&mut out, PTok::Newline, to, to);
    out
}

fn int_literal(text: &str) -> PTok {
    let t = text.replace('_', "");
    let (digits, radix) = match t.get(..2) {
        Some("0x" | "0X") => (&t[2..], 16),
        Some("0o" | "0O") => (&t[2..], 8),
        Some("0b" | "0B") => (&t[2..], 2),
        _ => (t.as_str(), 10),
    };
    if radix == 10 && (text.contains('.') || text.contains(['e', 'E'])) && text.bytes().all(|c| c != b'x') {
        return PTok::Bad(format!("floating-point number '{}' is not supported (integers only)", snippet(text)));
    }
    if text.starts_with('_') || text.ends_with('_') || text.contains("__") {
        return PTok::Bad(format!("malformed number '{}'", snippet(text)));
    }
    if radix == 10 && digits.len() > 1 && digits.starts_with('0') && digits.bytes().any(|c| c != b'0') {
        return PTok::Bad(format!("integer literal '{}' has leading zeros", snippet(text)));
    }
    match i64::from_str_radix(digits, radix) {
        Ok(v) if !digits.is_empty() && !digits.starts_with(['+', '-']) => PTok::Int(v),
        _ if !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)) => {
            PTok::Bad(format!("integer literal '{}' is out of range", snippet(text)))
        }
        _ => PTok::Bad(format!("malformed number '{}'", snippet(text))),
    }
}

/// Parses the code between `%{` (content starts at byte `from`) and `}%`
/// (at byte `to`).
pub(crate) fn parse_code_block(src: &str, lines: &LineIndex, from: usize, to: usize) -> Result<CodeBlock, ParseError> {
    let toks = tokenize(src, from, to);
    let mut stmts = Vec::new();
    // Split into statements: logical lines, then ';'.
    let mut stmt_start = 0;
    for (k, t) in toks.iter().enumerate() {
        if matches!(t.tok, PTok::Newline | PTok::Op(";")) {
            if k > stmt_start {
                if let Some(st) = statement(src, lines, &toks[stmt_start..k])? {
                    stmts.push(st);
                }
            }
            stmt_start = k + 1;
        }
    }
    let asserts = stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Assert(a) => Some(a.clone()),
            _ => None,
        })
        .collect();
    Ok(CodeBlock { asserts, stmts, raw: src[from..to].to_string() })
}

/// The operator of an augmented assignment (`+=` gives `Add`).
fn augmented_op(op: &str) -> Option<BinaryOp> {
    Some(match op {
        "+=" => BinaryOp::Add,
        "-=" => BinaryOp::Sub,
        "*=" => BinaryOp::Mul,
        "/=" => BinaryOp::Div,
        "//=" => BinaryOp::FloorDiv,
        "%=" => BinaryOp::Mod,
        "**=" => BinaryOp::Pow,
        "&=" => BinaryOp::BitAnd,
        "|=" => BinaryOp::BitOr,
        "^=" => BinaryOp::BitXor,
        "<<=" => BinaryOp::Shl,
        ">>=" => BinaryOp::Shr,
        _ => return None,
    })
}

fn statement(src: &str, lines: &LineIndex, toks: &[PToken]) -> Result<Option<Stmt>, ParseError> {
    let Some(first) = toks.first() else { return Ok(None) };
    let last = &toks[toks.len() - 1];
    let text = src[first.start..last.end.max(first.start)].trim().to_string();
    let line = lines.pos(first.start).0;
    let mut p = PParser { lines, toks, pos: 1, nest: 0, end: last.end };
    let name = match &first.tok {
        PTok::Name(n) => Some(n.as_str()),
        _ => None,
    };
    let second = toks.get(1).map(|t| &t.tok);
    match (name, second) {
        (Some("assert"), _) => {}
        (Some("print"), Some(PTok::Op("("))) => {
            p.pos = 2;
            let mut args = Vec::new();
            while !p.peek_op(")") {
                args.push(p.expr()?.0);
                if p.peek_op(",") {
                    p.pos += 1;
                } else if !p.peek_op(")") {
                    return Err(p.unexpected("in print() (expected ',' or ')')"));
                }
            }
            p.pos += 1;
            if p.pos < toks.len() {
                return Err(p.unexpected("after print()"));
            }
            return Ok(Some(Stmt::Print { line, args, text }));
        }
        (Some(n), Some(PTok::Op(op))) if !KEYWORDS.contains(&n) && (*op == "=" || augmented_op(op).is_some()) => {
            let op = augmented_op(op);
            p.pos = 2;
            let (expr, _) = p.expr()?;
            if p.pos < toks.len() {
                return Err(p.unexpected("after the assignment"));
            }
            return Ok(Some(Stmt::Assign { line, name: n.to_string(), op, expr, text }));
        }
        _ => {
            return Err(lines.error(
                first.start,
                format!(
                    "unsupported statement in code block (only assert, assignment and print statements are \
                     supported): {}",
                    snippet_line(&text)
                ),
            ))
        }
    }
    let (expr, _) = p.expr()?;
    let message = if p.peek_op(",") {
        p.pos += 1;
        Some(p.expr()?.0)
    } else {
        None
    };
    if p.pos < toks.len() {
        return Err(p.unexpected("after the assert"));
    }
    Ok(Some(Stmt::Assert(Assert { line, expr, message, text })))
}

fn snippet_line(text: &str) -> String {
    let one_line: String = text.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    let mut s: String = one_line.chars().take(60).collect();
    if one_line.chars().count() > 60 {
        s.push_str("...");
    }
    s
}

struct PParser<'a, 'b> {
    lines: &'a LineIndex<'b>,
    toks: &'a [PToken],
    pos: usize,
    nest: u32,
    /// End of the statement (for "end of statement" errors).
    end: usize,
}

type Node = (CExpr, u32);

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

impl PParser<'_, '_> {
    fn peek(&self) -> Option<&PToken> {
        self.toks.get(self.pos)
    }

    fn peek_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(PToken { tok: PTok::Op(o), .. }) if *o == op)
    }

    fn peek_name(&self, n: &str) -> bool {
        matches!(self.peek(), Some(PToken { tok: PTok::Name(x), .. }) if x == n)
    }

    fn unexpected(&self, ctx: &str) -> ParseError {
        match self.peek() {
            None => self.lines.error(self.end, format!("unexpected end of statement {ctx}")),
            Some(t) => {
                let what = match &t.tok {
                    PTok::Bad(m) => return self.lines.error(t.start, m.clone()),
                    PTok::Name(n) => format!("'{n}'"),
                    PTok::Int(v) => format!("'{v}'"),
                    PTok::Str(_) => "a string".to_string(),
                    PTok::Op(o) => format!("'{o}'"),
                    PTok::Newline => "end of line".to_string(),
                };
                self.lines.error(t.start, format!("unexpected {what} {ctx}"))
            }
        }
    }

    fn err_here(&self, msg: impl Into<String>) -> ParseError {
        let at = self.peek().map_or(self.end, |t| t.start);
        self.lines.error(at, msg)
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.nest += 1;
        if self.nest > MAX_DEPTH {
            return Err(self.err_here(format!("expression nested too deeply (more than {MAX_DEPTH} levels)")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nest -= 1;
    }

    fn bin(&self, op: BinaryOp, l: Node, r: Node) -> Result<Node, ParseError> {
        let d = 1 + l.1.max(r.1);
        if d > MAX_DEPTH {
            return Err(self.err_here(format!("expression nested too deeply (more than {MAX_DEPTH} levels)")));
        }
        Ok((CExpr::Binary(op, Box::new(l.0), Box::new(r.0)), d))
    }

    fn un(&self, op: UnaryOp, e: Node) -> Result<Node, ParseError> {
        let d = 1 + e.1;
        if d > MAX_DEPTH {
            return Err(self.err_here(format!("expression nested too deeply (more than {MAX_DEPTH} levels)")));
        }
        Ok((CExpr::Unary(op, Box::new(e.0)), d))
    }

    fn expr(&mut self) -> Result<Node, ParseError> {
        self.enter()?;
        let r = self.or_expr();
        self.leave();
        r
    }

    fn or_expr(&mut self) -> Result<Node, ParseError> {
        let mut l = self.and_expr()?;
        while self.peek_name("or") {
            self.pos += 1;
            let r = self.and_expr()?;
            l = self.bin(BinaryOp::Or, l, r)?;
        }
        Ok(l)
    }

    fn and_expr(&mut self) -> Result<Node, ParseError> {
        let mut l = self.not_expr()?;
        while self.peek_name("and") {
            self.pos += 1;
            let r = self.not_expr()?;
            l = self.bin(BinaryOp::And, l, r)?;
        }
        Ok(l)
    }

    fn not_expr(&mut self) -> Result<Node, ParseError> {
        if self.peek_name("not") {
            self.pos += 1;
            self.enter()?;
            let e = self.not_expr();
            self.leave();
            return self.un(UnaryOp::Not, e?);
        }
        self.comparison()
    }

    fn cmp_op(&self) -> Option<BinaryOp> {
        let t = self.peek()?;
        match &t.tok {
            PTok::Op("==") => Some(BinaryOp::Eq),
            PTok::Op("!=") => Some(BinaryOp::Ne),
            PTok::Op("<") => Some(BinaryOp::Lt),
            PTok::Op("<=") => Some(BinaryOp::Le),
            PTok::Op(">") => Some(BinaryOp::Gt),
            PTok::Op(">=") => Some(BinaryOp::Ge),
            _ => None,
        }
    }

    /// Comparisons; a chain `a < b <= c` becomes `(a < b) and (b <= c)`.
    fn comparison(&mut self) -> Result<Node, ParseError> {
        let first = self.bitor()?;
        let mut result: Option<Node> = None;
        let mut left = first.clone();
        loop {
            if self.peek_name("is") || self.peek_name("in") || (self.peek_name("not") && self.pos > 0) {
                return Err(self.err_here("'is' / 'in' comparisons are not supported"));
            }
            let Some(op) = self.cmp_op() else { break };
            self.pos += 1;
            let right = self.bitor()?;
            let cmp = self.bin(op, left, right.clone())?;
            result = Some(match result {
                None => cmp,
                Some(acc) => self.bin(BinaryOp::And, acc, cmp)?,
            });
            left = right;
        }
        Ok(result.unwrap_or(first))
    }

    fn left_assoc(
        &mut self,
        ops: &[(&str, BinaryOp)],
        next: fn(&mut Self) -> Result<Node, ParseError>,
    ) -> Result<Node, ParseError> {
        let mut l = next(self)?;
        'outer: loop {
            for (s, op) in ops {
                if self.peek_op(s) {
                    self.pos += 1;
                    let r = next(self)?;
                    l = self.bin(*op, l, r)?;
                    continue 'outer;
                }
            }
            return Ok(l);
        }
    }

    fn bitor(&mut self) -> Result<Node, ParseError> {
        self.left_assoc(&[("|", BinaryOp::BitOr)], Self::bitxor)
    }

    fn bitxor(&mut self) -> Result<Node, ParseError> {
        self.left_assoc(&[("^", BinaryOp::BitXor)], Self::bitand)
    }

    fn bitand(&mut self) -> Result<Node, ParseError> {
        self.left_assoc(&[("&", BinaryOp::BitAnd)], Self::shift)
    }

    fn shift(&mut self) -> Result<Node, ParseError> {
        self.left_assoc(&[("<<", BinaryOp::Shl), (">>", BinaryOp::Shr)], Self::arith)
    }

    fn arith(&mut self) -> Result<Node, ParseError> {
        self.left_assoc(&[("+", BinaryOp::Add), ("-", BinaryOp::Sub)], Self::term)
    }

    fn term(&mut self) -> Result<Node, ParseError> {
        self.left_assoc(
            &[("*", BinaryOp::Mul), ("//", BinaryOp::FloorDiv), ("/", BinaryOp::Div), ("%", BinaryOp::Mod)],
            Self::factor,
        )
    }

    fn factor(&mut self) -> Result<Node, ParseError> {
        let op = match self.peek() {
            Some(PToken { tok: PTok::Op("-"), .. }) => Some(UnaryOp::Neg),
            Some(PToken { tok: PTok::Op("+"), .. }) => Some(UnaryOp::Pos),
            Some(PToken { tok: PTok::Op("~"), .. }) => Some(UnaryOp::BitNot),
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            self.enter()?;
            let e = self.factor();
            self.leave();
            return self.un(op, e?);
        }
        self.power()
    }

    fn power(&mut self) -> Result<Node, ParseError> {
        let base = self.atom()?;
        if self.peek_op("**") {
            self.pos += 1;
            self.enter()?;
            let e = self.factor();
            self.leave();
            return self.bin(BinaryOp::Pow, base, e?);
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Node, ParseError> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.lines.error(self.end, "expected an expression, found end of statement"));
        };
        let node = match &t.tok {
            PTok::Int(v) => {
                self.pos += 1;
                (CExpr::Int(*v), 1)
            }
            PTok::Str(s) => {
                self.pos += 1;
                let mut s = s.clone();
                // Adjacent literals concatenate, as in Python.
                while let Some(PToken { tok: PTok::Str(more), .. }) = self.peek() {
                    s.push_str(more);
                    self.pos += 1;
                }
                (CExpr::Str(s), 1)
            }
            PTok::Name(n) if n == "True" || n == "False" => {
                self.pos += 1;
                (CExpr::Int(i64::from(n == "True")), 1)
            }
            PTok::Name(n) if KEYWORDS.contains(&n.as_str()) => {
                return Err(self.lines.error(t.start, format!("unexpected keyword '{n}' in expression")));
            }
            PTok::Name(n) => {
                self.pos += 1;
                (CExpr::Ident(n.clone()), 1)
            }
            PTok::Op("(") => {
                self.pos += 1;
                if self.peek_op(")") {
                    self.pos += 1;
                    (CExpr::Tuple(Vec::new()), 1)
                } else {
                    let e = self.expr()?;
                    if self.peek_op(",") {
                        // A tuple, e.g. the arguments of '%d %d' % (a, b).
                        let mut d = e.1;
                        let mut items = vec![e.0];
                        while self.peek_op(",") {
                            self.pos += 1;
                            if self.peek_op(")") {
                                break;
                            }
                            let e = self.expr()?;
                            d = d.max(e.1);
                            items.push(e.0);
                        }
                        if !self.peek_op(")") {
                            return Err(self.unexpected("in tuple (expected ',' or ')')"));
                        }
                        self.pos += 1;
                        if d + 1 > MAX_DEPTH {
                            return Err(
                                self.err_here(format!("expression nested too deeply (more than {MAX_DEPTH} levels)"))
                            );
                        }
                        (CExpr::Tuple(items), d + 1)
                    } else {
                        if !self.peek_op(")") {
                            return Err(self.unexpected("in expression (expected ')')"));
                        }
                        self.pos += 1;
                        e
                    }
                }
            }
            _ => return Err(self.unexpected("in expression")),
        };
        // Trailers we do not support.
        if let Some(PToken { tok: PTok::Op(o @ ("(" | "[" | ".")), start, .. }) = self.peek() {
            let what = match *o {
                "(" => "function calls are",
                "[" => "subscripts are",
                _ => "attribute access is",
            };
            return Err(self.lines.error(*start, format!("{what} not supported in asserts")));
        }
        Ok(node)
    }
}

// ----- evaluation ------------------------------------------------------------

/// Evaluates an assert expression with integer semantics.
///
/// Booleans are 0/1 (`and`/`or` short-circuit and give 0 or 1; any non-zero
/// value is true). Identifiers are resolved with `lookup`; an unknown one
/// gives `Err` naming it. Division or modulo by zero, overflow, negative
/// shift counts or exponents, and string literals in a numeric context give
/// `Err`. `/` and `//` both floor toward negative infinity and `%` takes the
/// divisor's sign, as Python's `//` and `%`.
pub fn eval(expr: &CExpr, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, String> {
    match expr {
        CExpr::Int(v) => Ok(*v),
        CExpr::Ident(n) => lookup(n).ok_or_else(|| format!("unknown identifier '{n}'")),
        CExpr::Str(s) => Err(format!("string literal '{}' cannot be used as an integer", snippet(s))),
        CExpr::Tuple(_) => Err("a tuple cannot be used as an integer".to_string()),
        CExpr::Unary(op, e) => {
            let v = eval(e, lookup)?;
            match op {
                UnaryOp::Neg => v.checked_neg().ok_or_else(|| overflow("-", v, 0)),
                UnaryOp::Pos => Ok(v),
                UnaryOp::Not => Ok(i64::from(v == 0)),
                UnaryOp::BitNot => Ok(!v),
            }
        }
        CExpr::Binary(BinaryOp::And, l, r) => Ok(i64::from(eval(l, lookup)? != 0 && eval(r, lookup)? != 0)),
        CExpr::Binary(BinaryOp::Or, l, r) => Ok(i64::from(eval(l, lookup)? != 0 || eval(r, lookup)? != 0)),
        CExpr::Binary(op, l, r) => {
            let a = eval(l, lookup)?;
            let b = eval(r, lookup)?;
            binary(*op, a, b)
        }
    }
}

fn overflow(op: &str, a: i64, b: i64) -> String {
    format!("integer overflow in {a} {op} {b}")
}

fn binary(op: BinaryOp, a: i64, b: i64) -> Result<i64, String> {
    use BinaryOp::*;
    let bool_ = |c: bool| Ok(i64::from(c));
    match op {
        Eq => bool_(a == b),
        Ne => bool_(a != b),
        Lt => bool_(a < b),
        Le => bool_(a <= b),
        Gt => bool_(a > b),
        Ge => bool_(a >= b),
        BitOr => Ok(a | b),
        BitXor => Ok(a ^ b),
        BitAnd => Ok(a & b),
        Add => a.checked_add(b).ok_or_else(|| overflow("+", a, b)),
        Sub => a.checked_sub(b).ok_or_else(|| overflow("-", a, b)),
        Mul => a.checked_mul(b).ok_or_else(|| overflow("*", a, b)),
        Div | FloorDiv => {
            if b == 0 {
                return Err(format!("division by zero in {a} {} {b}", if op == Div { "/" } else { "//" }));
            }
            let q = a.checked_div(b).ok_or_else(|| overflow("//", a, b))?;
            Ok(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
        }
        Mod => {
            if b == 0 {
                return Err(format!("modulo by zero in {a} % {b}"));
            }
            let r = a.checked_rem(b).unwrap_or(0); // i64::MIN % -1 == 0
            Ok(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
        }
        Shl => {
            if b < 0 {
                return Err(format!("negative shift count in {a} << {b}"));
            }
            if a == 0 {
                return Ok(0);
            }
            if b >= 64 {
                return Err(overflow("<<", a, b));
            }
            let v = i128::from(a) << b;
            i64::try_from(v).map_err(|_| overflow("<<", a, b))
        }
        Shr => {
            if b < 0 {
                return Err(format!("negative shift count in {a} >> {b}"));
            }
            Ok(if b >= 64 {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> b
            })
        }
        Pow => {
            if b < 0 {
                return Err(format!("negative exponent in {a} ** {b} (integers only)"));
            }
            match a {
                0 => Ok(i64::from(b == 0)),
                1 => Ok(1),
                -1 => Ok(if b % 2 == 0 { 1 } else { -1 }),
                _ => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)).ok_or_else(|| overflow("**", a, b)),
            }
        }
        // Short-circuited in `eval`; eager here.
        And => bool_(a != 0 && b != 0),
        Or => bool_(a != 0 || b != 0),
    }
}

/// Evaluates an assert *message* to text, as Python would print it.
///
/// * a string literal gives its text;
/// * `'fmt' % expr` or `'fmt' % (expr, ...)` applies printf-style
///   formatting with integer arguments: `%d %i %u %s %r` (decimal),
///   `%x %X %o`, `%%`, with optional `-`, `0`, `+`, space flags and a width
///   (e.g. `%5d`, `%08x`); the number of conversions must match the number
///   of arguments, as in Python;
/// * any other expression is evaluated with [`eval`] and printed in decimal.
pub fn eval_message(expr: &CExpr, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<String, String> {
    match expr {
        CExpr::Str(s) => Ok(s.clone()),
        CExpr::Binary(BinaryOp::Mod, l, r) if matches!(**l, CExpr::Str(_)) => {
            let CExpr::Str(fmt) = &**l else { unreachable!() };
            let args = match &**r {
                CExpr::Tuple(items) => items.iter().map(|e| eval(e, lookup)).collect::<Result<Vec<_>, _>>()?,
                e => vec![eval(e, lookup)?],
            };
            format_percent(fmt, &args)
        }
        _ => eval(expr, lookup).map(|v| v.to_string()),
    }
}

fn format_percent(fmt: &str, args: &[i64]) -> Result<String, String> {
    let mut out = String::new();
    let mut used = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let (mut left, mut zero, mut plus, mut space) = (false, false, false, false);
        while let Some(&f) = chars.peek() {
            match f {
                '-' => left = true,
                '0' => zero = true,
                '+' => plus = true,
                ' ' => space = true,
                _ => break,
            }
            chars.next();
        }
        let mut width = 0usize;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            width = width.saturating_mul(10).saturating_add(d as usize).min(1000);
            chars.next();
        }
        let Some(conv) = chars.next() else { return Err("incomplete format: '%' at end of message".into()) };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let Some(&v) = args.get(used) else {
            return Err("not enough arguments for format string".into());
        };
        used += 1;
        let (neg, mag) = (v < 0, v.unsigned_abs());
        let digits = match conv {
            'd' | 'i' | 'u' | 's' | 'r' => mag.to_string(),
            'x' => format!("{mag:x}"),
            'X' => format!("{mag:X}"),
            'o' => format!("{mag:o}"),
            _ => return Err(format!("unsupported format character '{conv}'")),
        };
        let sign = if neg {
            "-"
        } else if plus {
            "+"
        } else if space {
            " "
        } else {
            ""
        };
        let body_len = sign.len() + digits.len();
        let pad = width.saturating_sub(body_len);
        if left {
            out.push_str(sign);
            out.push_str(&digits);
            out.extend(std::iter::repeat_n(' ', pad));
        } else if zero {
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', pad));
            out.push_str(&digits);
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(sign);
            out.push_str(&digits);
        }
    }
    if used < args.len() {
        return Err("not all arguments converted during string formatting".into());
    }
    Ok(out)
}
