//! Parser for [packetdrill](https://github.com/google/packetdrill) scripts.
//!
//! packetdrill is the Linux TCP test tool: a script is a list of timed
//! *events*, each one of
//!
//! * a packet the test injects (`<`, inbound) or expects the stack to send
//!   (`>`, outbound): `+0 > S. 0:0(0) ack 1 <mss 1460,nop,wscale 8>`;
//! * a system call with its expected result:
//!   `0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3`;
//! * a shell command in backticks (possibly spanning lines);
//! * a `%{ ... }%` block of Python (asserts, integer assignments, print) on `tcp_info` fields.
//!
//! [`parse`] turns a script into a [`Script`]; it never panics, and every
//! malformed script gives a [`ParseError`] with a 1-based line and column.
//! [`eval`] and [`eval_message`] evaluate the assert expressions of code
//! blocks against a caller-supplied variable lookup.
//!
//! # Syntax accepted
//!
//! The grammar follows upstream packetdrill (`parser.y`/`lexer.l`) for the
//! TCP subset (see the notes on each type below). Notable points:
//!
//! * Comments: `//` to end of line and `/* ... */` (also across lines).
//! * Each event starts on a new line (two events on one line are an error).
//!   An event continues over several lines only inside brackets (`( )`,
//!   `[ ]`, `{ }`, `< >`), backticks or `%{ }%`; in particular a packet's
//!   `ack`, `win` and `<options>` and a system call's errno must start on the
//!   event's line. (packetdrill itself ignores line breaks; the stricter rule
//!   gives better error positions, e.g. "expected '=' ..., found end of
//!   line".)
//! * Upstream features outside this subset are rejected with a clear
//!   message: UDP/ICMP packets, IP/GRE/MPLS encapsulation, `tos`/`flowlabel`/
//!   `ttl`, `urg`, the `FO`/`FOEXP`/`md5`/`ECN` TCP options, AccECN flag
//!   digits, and code-block statements other than `assert`.
//! * Integers may be decimal or hexadecimal (`0x...`) wherever an integer is
//!   expected. Times are in seconds (`0`, `0.100`, `.1`, `+.005`).
//! * Command-line options at the top of a script (`--tolerance_usecs=10000`)
//!   are collected in [`Script::options`].
//! * Columns count characters (not bytes), starting at 1; a tab counts as one.

mod code;
mod lexer;
mod parser;
mod run;
mod suite;

pub use code::{eval, eval_message};
pub use run::{run_file, run_script, Failure, RunOptions, ScriptResult};
pub use suite::{manifest, suite_dir, ManifestEntry, SUITE_ENV, SUITE_HOW};

use std::fmt;

/// A parsed packetdrill script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Events in source order.
    pub events: Vec<Event>,
    /// *Addition:* command-line style options given at the top of the script
    /// before the first event (e.g. `--tolerance_usecs=10000`), in order.
    pub options: Vec<ScriptOption>,
}

/// *Addition:* an option line such as `--mss=1000` or `--verbose` at the top of
/// a script. Upstream packetdrill treats these like command-line flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOption {
    /// Name without the leading `--` (e.g. `tolerance_usecs`).
    pub name: String,
    /// Text after `=`, if any (surrounding double quotes removed).
    pub value: Option<String>,
    /// 1-based line of the option.
    pub line: u32,
}

/// One timed event of a script.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// 1-based line of the event's first token (its time stamp, as in
    /// packetdrill's error messages).
    pub line: u32,
    /// 1-based column of the event's first token.
    pub col: u32,
    /// When the event happens.
    pub time: TimeSpec,
    /// What happens.
    pub kind: EventKind,
    /// The source text of the event (time stamp included, trailing comments
    /// excluded), trimmed. Multi-line events (shell commands, code blocks,
    /// wrapped argument lists) keep their inner newlines.
    pub text: String,
}

/// The time stamp of an event, in seconds.
///
/// Relative times are relative to the previous event (packetdrill anchors
/// consecutive relative *inbound packets* on the previous packet's scheduled
/// time, everything else on the time the previous event actually happened —
/// that is the runner's business).
#[derive(Debug, Clone, PartialEq)]
pub enum TimeSpec {
    /// `0.100`: seconds since the start of the script.
    Absolute(f64),
    /// `+0.1`: seconds after the previous event.
    Relative(f64),
    /// `*`: any time (packetdrill allows it only for outbound packets; so does
    /// this parser).
    Any,
    /// `0.1~0.2` or `+0.040~+0.045`: the event must happen within the range,
    /// both ends inclusive. Both ends are of the same kind (`Absolute` or
    /// `Relative`, both relative to the previous event, not to `start`), and
    /// `end >= start`. Only allowed for outbound packets (as in packetdrill).
    Range { start: Box<TimeSpec>, end: Box<TimeSpec> },
    /// `0.1...0.2` (also written `0.1 ... 0.2`) for a blocking system call:
    /// the call starts at `start` and must return at `end`.
    ///
    /// As in packetdrill, the end time is written without `+` and shares the
    /// start's reference point: `+.002...0.004 connect(...)` gives
    /// `start = Relative(0.002)`, `end = Relative(0.004)` — the call starts
    /// 2 ms after the previous event and returns 4 ms after the previous
    /// event (not 4 ms after it started). An explicit `+` on the end
    /// (`+.002...+.004`) is accepted with the same meaning. `end >= start`.
    /// Only allowed for system calls.
    Blocking { start: Box<TimeSpec>, end: Box<TimeSpec> },
    /// *Addition:* a shell command written without a time stamp. packetdrill
    /// allows one before the first timed event (the *init command*, run
    /// before the script starts) and one after the last timed event (the
    /// *cleanup command*, which packetdrill also runs when the script fails).
    /// The parser rejects untimed commands anywhere else, and untimed events
    /// of any other kind.
    Untimed,
}

/// What an event does.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// A packet to inject or to expect.
    Packet(PacketEvent),
    /// A system call to make and its expected outcome.
    Syscall(Syscall),
    /// A shell command: the text between the backticks, verbatim (no escape
    /// processing, newlines kept).
    Shell(String),
    /// A `%{ ... }%` block of Python statements.
    Code(CodeBlock),
}

/// Direction of a packet event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `<`: the test injects the packet into the stack under test.
    Inbound,
    /// `>`: the stack under test is expected to send the packet.
    Outbound,
}

/// IP ECN codepoint check written as `[ect0]` (or `(ect0)`) after the
/// direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EcnSpec {
    /// `[noecn]`: Not-ECT (00).
    NoEcn,
    /// `[ect0]`: ECT(0) (10).
    Ect0,
    /// `[ect1]`: ECT(1) (01).
    Ect1,
    /// `[ect01]`: either ECT(0) or ECT(1). Outbound packets only (as in
    /// packetdrill).
    Ect01,
    /// `[ce]`: Congestion Experienced (11).
    Ce,
}

/// A TCP packet event: `< [ect0] P. 1:1001(1000) ack 1 win 257 <nop,nop,TS val 1 ecr 2>`.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketEvent {
    pub dir: Direction,
    /// `None` when no `[...]` ECN check is written (don't check).
    pub ecn: Option<EcnSpec>,
    /// The TCP flags as written, e.g. `"S."`, `"P."`, `"SEW"`, `"F."`, `"."`.
    /// Letters are from `S F R P E W C U` (each at most once), optionally
    /// followed by `.` (ACK); a lone `.` is a pure ACK. packetdrill's `-`
    /// (no flags at all) is kept as `"-"`.
    pub flags: String,
    /// First sequence number (`seq_start:seq_end(len)`).
    pub seq_start: u32,
    /// `seq_start + len` (checked at parse time; no wrap-around, as in packetdrill).
    pub seq_end: u32,
    /// Payload length in bytes (at most 65535, as in packetdrill).
    pub len: u32,
    /// `ack N`, if written.
    pub ack: Option<u32>,
    /// `win N` (at most 65535), if written. Must come after `ack`.
    pub win: Option<u32>,
    /// TCP options in `<...>`. `None` = not given (don't check); `Some(vec![])`
    /// = `<>`. packetdrill's `<...>` (explicitly "don't check", outbound only)
    /// is also `None`.
    ///
    /// Note: in upstream packetdrill an outbound packet written *without*
    /// options expects a segment with no options; this API (by design)
    /// treats "not given" as "don't check".
    pub options: Option<Vec<TcpOption>>,
}

/// A TCP option as written in a packet's `<...>` list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TcpOption {
    /// `mss 1460`
    Mss(u16),
    /// `sackOK`
    SackOk,
    /// `nop`
    Nop,
    /// `eol`
    Eol,
    /// `wscale 7`
    Wscale(u8),
    /// `TS val 100 ecr 0`
    Timestamp { val: u32, ecr: u32 },
    /// `sack 1001:2001 3001:4001`: one or more `start:end` blocks.
    Sack(Vec<(u32, u32)>),
}

/// A system call event: `name(args) = result [ERRNO [(note)]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Syscall {
    pub name: String,
    pub args: Vec<Expr>,
    pub result: Expr,
    /// The errno name after the result, e.g. `Some("EINPROGRESS")` for
    /// `= -1 EINPROGRESS (Operation now in progress)`. The parenthesised
    /// note is not kept (it is still in [`Event::text`]).
    pub errno: Option<String>,
}

/// A system call argument or result.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `...`: anything / don't care (e.g. a buffer or address argument).
    Ellipsis,
    /// An integer, decimal or hex; `-1` is `Int(-1)`.
    Int(i64),
    /// A double-quoted string; the text between the quotes, verbatim (as
    /// packetdrill: backslash sequences are not processed).
    Str(String),
    /// A symbolic name such as `SOCK_STREAM` or `O_NONBLOCK`.
    Ident(String),
    /// `[a, b, ...]`, e.g. the `[1]` option value of `setsockopt`.
    List(Vec<Expr>),
    /// A binary operation: `SOCK_STREAM|SOCK_NONBLOCK` or `name=value`.
    BinOp(ExprOp, Box<Expr>, Box<Expr>),
    /// *Addition:* `{a, b, ...}`: a packetdrill struct literal (e.g.
    /// `{sa_family=AF_INET, sin_port=htons(8080), ...}`, `{fd=3, events=POLLIN}`),
    /// kept as its list of member expressions.
    Struct(Vec<Expr>),
    /// *Addition:* `name(args)`, e.g. `htons(8080)`, `inet_addr("192.0.2.1")`,
    /// `msg_iov(1)`.
    Call(String, Vec<Expr>),
}

/// Operator of [`Expr::BinOp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExprOp {
    /// `a|b` (flag union); left-associative.
    BitOr,
    /// `name=value` inside struct literals (left side an identifier or call).
    Assign,
}

/// A `%{ ... }%` code block.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeBlock {
    /// The assert statements, in order (also among [`CodeBlock::stmts`]).
    pub asserts: Vec<Assert>,
    /// Every statement (asserts, assignments, prints), in order.
    pub stmts: Vec<Stmt>,
    /// The text between `%{` and `}%`, verbatim.
    pub raw: String,
}

/// One `assert expr[, message]` statement of a code block.
#[derive(Debug, Clone, PartialEq)]
pub struct Assert {
    /// 1-based script line of the `assert` keyword.
    pub line: u32,
    /// The asserted condition.
    pub expr: CExpr,
    /// The message expression after the comma, if any (e.g. `tcpi_snd_cwnd`
    /// or `'cwnd=%d' % tcpi_snd_cwnd`); see [`eval_message`].
    pub message: Option<CExpr>,
    /// *Addition:* the statement's source text (a trailing `#` comment
    /// excluded), trimmed,
    /// e.g. `assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd`.
    pub text: String,
}

/// One statement of a code block. As packetdrill runs the blocks as one
/// Python program, a variable assigned in one block is seen by later ones;
/// the `tcpi_*` names are refreshed from `tcp_info` at each block.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `assert expr[, message]`.
    Assert(Assert),
    /// `name = expr`, or an augmented assignment `name op= expr` (`op` set).
    Assign {
        /// 1-based script line of the statement.
        line: u32,
        name: String,
        op: Option<BinaryOp>,
        expr: CExpr,
        /// The statement's source text, trimmed.
        text: String,
    },
    /// `print(expr, ...)`: each argument evaluated as an assert message is.
    Print {
        /// 1-based script line of the statement.
        line: u32,
        args: Vec<CExpr>,
        /// The statement's source text, trimmed.
        text: String,
    },
}

/// A Python-like integer expression of an assert.
///
/// Chained comparisons (`a < b < c`) are parsed as
/// `(a < b) and (b < c)`. `True`/`False` become `Int(1)`/`Int(0)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CExpr {
    Int(i64),
    /// A variable, e.g. `tcpi_snd_cwnd` or `TCP_CA_Open`; resolved by the
    /// lookup passed to [`eval`].
    Ident(String),
    /// *Addition:* a string literal (single or double quotes, simple
    /// backslash escapes processed; adjacent literals concatenated). Only
    /// meaningful in assert messages such as `'cwnd=%d' % tcpi_snd_cwnd`;
    /// [`eval`] rejects it.
    Str(String),
    Unary(UnaryOp, Box<CExpr>),
    Binary(BinaryOp, Box<CExpr>, Box<CExpr>),
    /// *Addition:* a parenthesised tuple `(a, b)`; only meaningful as the
    /// argument list of a `%`-formatted message
    /// (`'%d %d' % (tcpi_snd_cwnd, tcpi_rtt)`); [`eval`] rejects it.
    Tuple(Vec<CExpr>),
}

/// Unary operators of [`CExpr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `+x`
    Pos,
    /// `not x` (gives 0 or 1)
    Not,
    /// `~x`
    BitNot,
}

/// Binary operators of [`CExpr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `or` (short-circuit; gives 0 or 1)
    Or,
    /// `and` (short-circuit; gives 0 or 1)
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    Add,
    Sub,
    Mul,
    /// `/`: integer division rounding toward negative infinity (Python's
    /// `/` would give a float; integers only here).
    Div,
    /// `//`: floor division, as Python.
    FloorDiv,
    /// `%`: remainder with the sign of the divisor, as Python. With a string
    /// on the left it is Python's `%` formatting (see [`eval_message`]).
    Mod,
    /// `**` (non-negative exponents only)
    Pow,
}

/// A parse error at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// Parses a packetdrill script.
///
/// Never panics; a malformed script gives a [`ParseError`] naming the line
/// and column of the problem.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    parser::parse_script(src)
}
