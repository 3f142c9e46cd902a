//! Script-level parser: events, packets, system calls.

use crate::code::parse_code_block;
use crate::lexer::{tokenize, LineIndex, Tok, Token};
use crate::{
    Direction, EcnSpec, Event, EventKind, Expr, ExprOp, PacketEvent, ParseError, Script, ScriptOption, Syscall,
    TcpOption, TimeSpec,
};

/// Maximum nesting of brackets / depth of expression trees. Keeps recursion
/// (parsing, evaluation, dropping) far from the stack limit.
pub(crate) const MAX_DEPTH: u32 = 100;

pub(crate) fn parse_script(src: &str) -> Result<Script, ParseError> {
    let mut p = Parser { src, lines: LineIndex::new(src), toks: tokenize(src), pos: 0, brackets: 0, nest: 0 };
    p.script()
}

struct Parser<'a> {
    src: &'a str,
    lines: LineIndex<'a>,
    toks: Vec<Token>,
    pos: usize,
    /// Open brackets around the current token: line breaks inside brackets
    /// are insignificant for "found end of line" reporting.
    brackets: u32,
    /// Current recursion depth of expression parsing.
    nest: u32,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    // ----- token access --------------------------------------------------

    fn cur(&self) -> &Token {
        // tokenize() always ends with Eof or Error, and we never move past it.
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek(&self, k: usize) -> &Token {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }

    fn bump(&mut self) -> Token {
        let t = self.cur().clone();
        if !matches!(t.tok, Tok::Eof | Tok::Error(_)) {
            self.pos += 1;
        }
        t
    }

    /// End offset of the last consumed token.
    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].end
        }
    }

    fn error_at(&self, at: usize, msg: impl Into<String>) -> ParseError {
        self.lines.error(at, msg)
    }

    /// The current token starts a new line (or the input ended) while we are
    /// in the middle of an event, outside brackets.
    fn at_line_end(&self) -> bool {
        let t = self.cur();
        matches!(t.tok, Tok::Eof) || (t.nl_before && self.brackets == 0)
    }

    /// Error "expected X, found Y" at the current token. A lexical error
    /// there is reported as such; a premature line end is reported just
    /// after the previous token.
    fn expected(&self, what: &str) -> ParseError {
        let t = self.cur();
        if let Tok::Error(msg) = &t.tok {
            return self.error_at(t.start, msg.clone());
        }
        if self.at_line_end() && self.pos > 0 {
            let found = if matches!(t.tok, Tok::Eof) { "end of input" } else { "end of line" };
            return self.error_at(self.prev_end(), format!("expected {what}, found {found}"));
        }
        self.error_at(t.start, format!("expected {what}, found {}", self.describe(t)))
    }

    fn describe(&self, t: &Token) -> String {
        match &t.tok {
            Tok::Eof => "end of input".to_string(),
            Tok::Error(m) => m.clone(),
            Tok::Code(..) => "a %{ code block }%".to_string(),
            Tok::Shell(_) => "a `shell command`".to_string(),
            Tok::Str(_) => "a string".to_string(),
            Tok::Opt(..) => format!("option '{}'", snippet(&self.src[t.start..t.end])),
            Tok::Punct(c) => format!("'{}'", c.escape_debug()),
            _ => format!("'{}'", snippet(&self.src[t.start..t.end])),
        }
    }

    fn expect_punct(&mut self, c: char, what: &str) -> PResult<Token> {
        if self.cur().is_punct(c) && !self.at_line_end() {
            Ok(self.bump())
        } else {
            Err(self.expected(what))
        }
    }

    /// An unsigned integer in `0..=max`.
    fn expect_uint(&mut self, what: &str, max: u64) -> PResult<u64> {
        match self.cur().tok {
            Tok::Int(v) if !self.at_line_end() => {
                let t = self.bump();
                if v > max {
                    Err(self.error_at(t.start, format!("{what} {v} is out of range (maximum {max})")))
                } else {
                    Ok(v)
                }
            }
            _ => Err(self.expected(what)),
        }
    }

    fn open(&mut self) {
        self.brackets += 1;
    }

    fn close(&mut self) {
        self.brackets = self.brackets.saturating_sub(1);
    }

    // ----- script and events ----------------------------------------------

    fn script(&mut self) -> PResult<Script> {
        let mut options = Vec::new();
        while let Tok::Opt(name, value) = &self.cur().tok {
            let (name, value) = (name.clone(), value.clone());
            let t = self.bump();
            if !self.cur().nl_before && !matches!(self.cur().tok, Tok::Eof) {
                // Several options may share a line, like command-line flags.
                if !matches!(self.cur().tok, Tok::Opt(..)) {
                    return Err(self.expected("a line break after the option"));
                }
            }
            options.push(ScriptOption { name, value, line: self.lines.pos(t.start).0 });
        }

        let mut events: Vec<Event> = Vec::new();
        let mut seen_timed = false;
        loop {
            let t = self.cur();
            match &t.tok {
                Tok::Eof => break,
                Tok::Error(msg) => return Err(self.error_at(t.start, msg.clone())),
                _ => {}
            }
            // Another event follows: an untimed command before it is only
            // valid as the single init command.
            if let Some(prev) = events.last() {
                if prev.time == TimeSpec::Untimed && (seen_timed || events.len() > 1) {
                    let msg = if seen_timed {
                        "a shell command without a time stamp is only allowed before the first or after the last \
                         timed event; give it a time (e.g. '+0 `...`')"
                    } else {
                        "only one shell command without a time stamp (the init command) may come before the first \
                         timed event"
                    };
                    return Err(ParseError { line: prev.line, col: prev.col, msg: msg.to_string() });
                }
            }
            let ev = self.event()?;
            seen_timed |= ev.time != TimeSpec::Untimed;
            events.push(ev);
            let t = self.cur();
            if let Tok::Error(msg) = &t.tok {
                return Err(self.error_at(t.start, msg.clone()));
            }
            if !t.nl_before && !matches!(t.tok, Tok::Eof) {
                return Err(self
                    .error_at(t.start, format!("expected a line break after the event, found {}", self.describe(t))));
            }
        }
        if !seen_timed {
            return Err(self.error_at(self.src.len(), "script has no timed events"));
        }
        Ok(Script { events, options })
    }

    fn event(&mut self) -> PResult<Event> {
        let start_tok = self.cur().clone();
        let (line, col) = self.lines.pos(start_tok.start);
        let time = self.time()?;

        let t = self.cur().clone();
        let kind = match &t.tok {
            Tok::Punct('<' | '>') if !self.at_line_end() => EventKind::Packet(self.packet()?),
            Tok::Shell(body) if time == TimeSpec::Untimed || !self.at_line_end() => {
                self.bump();
                EventKind::Shell(body.clone())
            }
            Tok::Code(s, e) if !self.at_line_end() => {
                let (s, e) = (*s, *e);
                self.bump();
                EventKind::Code(parse_code_block(self.src, &self.lines, s, e)?)
            }
            Tok::Word(_) | Tok::Ellipsis if !self.at_line_end() => EventKind::Syscall(self.syscall()?),
            _ => {
                return Err(self.expected(
                    "a packet ('<' or '>'), a system call, a `shell command` or a %{ code block }% after the time",
                ))
            }
        };

        // packetdrill's semantic checks on time forms.
        let outbound_packet = matches!(&kind, EventKind::Packet(p) if p.dir == Direction::Outbound);
        match &time {
            TimeSpec::Any if !outbound_packet => {
                return Err(self.error_at(start_tok.start, "event time '*' can only be used with outbound packets"))
            }
            TimeSpec::Range { .. } if !outbound_packet => {
                return Err(self.error_at(start_tok.start, "event time range can only be used with outbound packets"))
            }
            TimeSpec::Blocking { .. } if !matches!(kind, EventKind::Syscall(_)) => {
                return Err(
                    self.error_at(start_tok.start, "blocking time 'start...end' can only be used with system calls")
                )
            }
            _ => {}
        }

        let text = self.src[start_tok.start..self.prev_end().max(start_tok.start)].trim().to_string();
        Ok(Event { line, col, time, kind, text })
    }

    /// A time value: integer or decimal seconds.
    fn time_value(&mut self, what: &str) -> PResult<f64> {
        match self.cur().tok {
            Tok::Int(v) => {
                self.bump();
                Ok(v as f64)
            }
            Tok::Float(v) => {
                self.bump();
                Ok(v)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn time(&mut self) -> PResult<TimeSpec> {
        let t = self.cur().clone();
        let start = match &t.tok {
            Tok::Shell(_) => return Ok(TimeSpec::Untimed),
            Tok::Punct('*') => {
                self.bump();
                return Ok(TimeSpec::Any);
            }
            Tok::Punct('+') => {
                self.bump();
                if self.at_line_end() {
                    return Err(self.expected("a time after '+'"));
                }
                TimeSpec::Relative(self.time_value("a time after '+'")?)
            }
            Tok::Int(_) | Tok::Float(_) => TimeSpec::Absolute(self.time_value("event time")?),
            Tok::Opt(..) => {
                return Err(self.error_at(t.start, "options ('--name=value') are only allowed before the first event"))
            }
            Tok::Punct('-') if matches!(self.peek(1).tok, Tok::Int(_) | Tok::Float(_)) => {
                return Err(self.error_at(t.start, "negative event time"))
            }
            Tok::Punct('<' | '>') | Tok::Code(..) | Tok::Word(_) => {
                return Err(self.error_at(
                    t.start,
                    format!(
                        "expected event time (e.g. '0.100', '+0.1' or '*') before {}; only a `shell command` may \
                         omit the time",
                        self.describe(&t)
                    ),
                ))
            }
            _ => {
                return Err(self.error_at(
                    t.start,
                    format!("expected event time (e.g. '0.100', '+0.1' or '*'), found {}", self.describe(&t)),
                ))
            }
        };
        let relative = matches!(start, TimeSpec::Relative(_));
        let start_val = time_secs(&start);

        if self.cur().is_punct('~') && !self.at_line_end() {
            let tilde = self.bump();
            if self.at_line_end() {
                return Err(self.expected("the end of the time range after '~'"));
            }
            let end_rel = self.cur().is_punct('+');
            if end_rel {
                self.bump();
            }
            let v = self.time_value("the end of the time range after '~'")?;
            if end_rel != relative {
                return Err(self.error_at(
                    tilde.start,
                    "both ends of a time range must be relative ('+0.1~+0.2') or both absolute ('0.1~0.2')",
                ));
            }
            if v < start_val {
                return Err(self.error_at(t.start, "time range is backwards (end is before start)"));
            }
            let end = if relative { TimeSpec::Relative(v) } else { TimeSpec::Absolute(v) };
            return Ok(TimeSpec::Range { start: Box::new(start), end: Box::new(end) });
        }
        if matches!(self.cur().tok, Tok::Ellipsis) && !self.at_line_end() {
            let dots = self.bump();
            if self.at_line_end() {
                return Err(self.expected("the end time of the blocking call after '...'"));
            }
            let plus = self.cur().is_punct('+');
            if plus {
                self.bump();
            }
            let v = self.time_value("the end time of the blocking call after '...'")?;
            if plus && !relative {
                return Err(self.error_at(
                    dots.start,
                    "a blocking call's end time can only be written with '+' if its start time is relative",
                ));
            }
            if v < start_val {
                return Err(self.error_at(t.start, "blocking call's end time is before its start time"));
            }
            let end = if relative { TimeSpec::Relative(v) } else { TimeSpec::Absolute(v) };
            return Ok(TimeSpec::Blocking { start: Box::new(start), end: Box::new(end) });
        }
        Ok(start)
    }

    // ----- packets -------------------------------------------------------

    fn packet(&mut self) -> PResult<PacketEvent> {
        let d = self.bump();
        let dir = if d.is_punct('<') { Direction::Inbound } else { Direction::Outbound };

        // Optional [ecn] / (ecn).
        let mut ecn = None;
        if (self.cur().is_punct('[') || self.cur().is_punct('(')) && !self.at_line_end() {
            let open = self.bump();
            let close = if open.is_punct('[') { ']' } else { ')' };
            self.open();
            let w = self.cur().clone();
            let spec = match &w.tok {
                Tok::Word(s) => match s.as_str() {
                    "noecn" => EcnSpec::NoEcn,
                    "ect0" => EcnSpec::Ect0,
                    "ect1" => EcnSpec::Ect1,
                    "ect01" => EcnSpec::Ect01,
                    "ce" => EcnSpec::Ce,
                    "tos" | "flowlabel" | "ttl" => {
                        return Err(self.error_at(
                            w.start,
                            format!("unsupported IP field '{s}' (only noecn, ect0, ect1, ect01 and ce are supported)"),
                        ))
                    }
                    _ => return Err(self.expected("an ECN codepoint (noecn, ect0, ect1, ect01 or ce)")),
                },
                _ => return Err(self.expected("an ECN codepoint (noecn, ect0, ect1, ect01 or ce)")),
            };
            self.bump();
            self.expect_punct(close, &format!("'{close}' after the ECN codepoint"))?;
            self.close();
            if spec == EcnSpec::Ect01 && dir == Direction::Inbound {
                return Err(self.error_at(w.start, "[ect01] can only be used with outbound packets"));
            }
            ecn = Some(spec);
        }

        let flags = self.flags()?;

        // seq:end(len)
        let seq_tok = self.cur().clone();
        let what_seq = "the sequence numbers 'start:end(length)'";
        if !matches!(seq_tok.tok, Tok::Int(_)) {
            return Err(self.expected(what_seq));
        }
        let seq_start = self.expect_uint("TCP start sequence number", u32::MAX as u64)?;
        self.expect_punct(':', "':' in 'start:end(length)'")?;
        let seq_end = self.expect_uint("TCP end sequence number", u32::MAX as u64)?;
        self.expect_punct('(', "'(' in 'start:end(length)'")?;
        self.open();
        let len = self.expect_uint("TCP payload length", u16::MAX as u64)?;
        self.expect_punct(')', "')' in 'start:end(length)'")?;
        self.close();
        if seq_end != seq_start + len {
            let span = if seq_end >= seq_start {
                format!("{} bytes", seq_end - seq_start)
            } else {
                "a negative number of bytes".to_string()
            };
            return Err(self.error_at(
                seq_tok.start,
                format!(
                    "inconsistent TCP sequence numbers and payload length: {seq_start}:{seq_end} spans {span} but \
                     the length is {len}"
                ),
            ));
        }

        let mut ack = None;
        let mut win = None;
        if self.cur().is_word("ack") && !self.at_line_end() {
            self.bump();
            ack = Some(self.expect_uint("TCP ack number", u32::MAX as u64)? as u32);
        }
        if self.cur().is_word("win") && !self.at_line_end() {
            self.bump();
            win = Some(self.expect_uint("TCP window value", u16::MAX as u64)? as u32);
        }
        if !self.at_line_end() {
            let t = self.cur().clone();
            if t.is_word("ack") {
                return Err(self.error_at(t.start, "'ack' must come before 'win'"));
            }
            if t.is_word("win") {
                return Err(self.error_at(t.start, "duplicate 'win'"));
            }
            if t.is_word("urg") {
                return Err(self.error_at(t.start, "'urg' (urgent pointer) is not supported"));
            }
        }

        let mut options = None;
        if self.cur().is_punct('<') && !self.at_line_end() {
            let lt = self.bump();
            self.open();
            if matches!(self.cur().tok, Tok::Ellipsis) {
                self.bump();
                self.expect_punct('>', "'>' after '<...'")?;
                self.close();
                if dir == Direction::Inbound {
                    return Err(self.error_at(lt.start, "<...> for TCP options can only be used with outbound packets"));
                }
            } else {
                let list = self.tcp_options()?;
                self.expect_punct('>', "',' or '>' in the TCP option list")?;
                self.close();
                options = Some(list);
            }
        }

        Ok(PacketEvent {
            dir,
            ecn,
            flags,
            seq_start: seq_start as u32,
            seq_end: seq_end as u32,
            len: len as u32,
            ack,
            win,
            options,
        })
    }

    fn flags(&mut self) -> PResult<String> {
        let t = self.cur().clone();
        if self.at_line_end() {
            return Err(self.expected("TCP flags (e.g. 'S', 'S.', 'P.', '.')"));
        }
        match &t.tok {
            Tok::Punct('.') | Tok::Punct('-') => {
                self.bump();
                Ok(self.src[t.start..t.end].to_string())
            }
            Tok::Word(w) => {
                if matches!(w.as_str(), "udp" | "icmp" | "ipv4" | "ipv6" | "gre" | "GREv0" | "mpls" | "encap") {
                    return Err(self.error_at(t.start, format!("'{w}' packets are not supported (TCP only)")));
                }
                let mut seen = String::new();
                for (k, c) in w.char_indices() {
                    if !"SFRPEWCU".contains(c) {
                        return Err(self.error_at(
                            t.start + k,
                            format!("invalid TCP flag '{c}' in '{w}' (valid flags: S F R P E W C U and a final '.')"),
                        ));
                    }
                    if seen.contains(c) {
                        return Err(self.error_at(t.start + k, format!("duplicate TCP flag '{c}' in '{w}'")));
                    }
                    seen.push(c);
                }
                self.bump();
                let mut flags = w.clone();
                let n = self.cur();
                if n.is_punct('.') && n.start == t.end {
                    flags.push('.');
                    self.bump();
                }
                Ok(flags)
            }
            Tok::Int(_) => {
                Err(self
                    .error_at(t.start, "expected TCP flags (e.g. 'S', 'S.', 'P.', '.') before the sequence numbers"))
            }
            _ => Err(self.expected("TCP flags (e.g. 'S', 'S.', 'P.', '.')")),
        }
    }

    fn tcp_options(&mut self) -> PResult<Vec<TcpOption>> {
        let mut opts = Vec::new();
        if self.cur().is_punct('>') {
            return Ok(opts);
        }
        loop {
            let t = self.cur().clone();
            let Tok::Word(w) = &t.tok else {
                return Err(self.expected("a TCP option (mss, sackOK, nop, eol, wscale, TS, sack)"));
            };
            self.bump();
            let opt = match w.as_str() {
                "nop" => TcpOption::Nop,
                "eol" => TcpOption::Eol,
                "sackOK" => TcpOption::SackOk,
                "mss" => TcpOption::Mss(self.expect_uint("MSS value", u16::MAX as u64)? as u16),
                "wscale" => TcpOption::Wscale(self.expect_uint("window scale shift count", u8::MAX as u64)? as u8),
                "TS" => {
                    if !self.cur().is_word("val") {
                        return Err(self.expected("'val' after 'TS'"));
                    }
                    self.bump();
                    let val = self.expect_uint("TS value", u32::MAX as u64)? as u32;
                    if !self.cur().is_word("ecr") {
                        return Err(self.expected("'ecr' after the TS value"));
                    }
                    self.bump();
                    let ecr = self.expect_uint("TS echo reply value", u32::MAX as u64)? as u32;
                    TcpOption::Timestamp { val, ecr }
                }
                "sack" => {
                    let mut blocks = Vec::new();
                    loop {
                        let a = self.expect_uint("SACK block start", u32::MAX as u64)? as u32;
                        self.expect_punct(':', "':' in the SACK block 'start:end'")?;
                        let b = self.expect_uint("SACK block end", u32::MAX as u64)? as u32;
                        blocks.push((a, b));
                        if !matches!(self.cur().tok, Tok::Int(_)) {
                            break;
                        }
                    }
                    TcpOption::Sack(blocks)
                }
                "FO" | "FOEXP" | "md5" | "ECN" => {
                    return Err(self.error_at(t.start, format!("TCP option '{w}' is not supported")))
                }
                _ => {
                    let known = ["nop", "eol", "sackOK", "mss", "wscale", "TS", "sack"];
                    let hint = known
                        .iter()
                        .find(|k| k.eq_ignore_ascii_case(w))
                        .map(|k| format!(" (did you mean '{k}'?)"))
                        .unwrap_or_default();
                    return Err(self.error_at(t.start, format!("unknown TCP option '{w}'{hint}")));
                }
            };
            opts.push(opt);
            if self.cur().is_punct(',') {
                self.bump();
            } else {
                return Ok(opts);
            }
        }
    }

    // ----- system calls ----------------------------------------------------

    fn syscall(&mut self) -> PResult<Syscall> {
        let t = self.cur().clone();
        let Tok::Word(name) = &t.tok else {
            // '...' here: a blocking end time without a start time.
            return Err(self.error_at(t.start, "'...' (blocking call) must directly follow the start time"));
        };
        self.bump();
        if !self.cur().is_punct('(') || self.at_line_end() {
            return Err(self.expected(&format!("'(' after system call name '{name}'")));
        }
        self.bump();
        self.open();
        let mut args = Vec::new();
        if !self.cur().is_punct(')') {
            loop {
                args.push(self.expr()?);
                if self.cur().is_punct(',') {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        self.expect_punct(')', "',' or ')' in the argument list")?;
        self.close();
        self.expect_punct('=', "'=' and the expected result after the system call")?;
        if self.at_line_end() {
            return Err(self.expected("the expected result after '='"));
        }
        let result = self.expr()?;

        let mut errno = None;
        if let Tok::Word(w) = &self.cur().tok {
            if !self.at_line_end() {
                errno = Some(w.clone());
                self.bump();
            }
        }
        if self.cur().is_punct('(') && !self.at_line_end() {
            // A note such as "(Operation now in progress)": skipped.
            let open = self.bump();
            loop {
                let t = self.cur().clone();
                match &t.tok {
                    Tok::Punct(')') => {
                        self.bump();
                        break;
                    }
                    Tok::Error(m) => return Err(self.error_at(t.start, m.clone())),
                    Tok::Punct('(') => {
                        return Err(self.error_at(t.start, "nested '(' in the errno note"));
                    }
                    _ if self.at_line_end() => {
                        return Err(self.error_at(open.start, "unterminated errno note: '(' without ')'"));
                    }
                    _ => {
                        self.bump();
                    }
                }
            }
        }
        Ok(Syscall { name: name.clone(), args, result, errno })
    }

    fn enter(&mut self) -> PResult<()> {
        self.nest += 1;
        if self.nest > MAX_DEPTH {
            let at = self.cur().start;
            return Err(self.error_at(at, format!("expression nested too deeply (more than {MAX_DEPTH} levels)")));
        }
        Ok(())
    }

    /// expr := primary ('=' expr | ('|' primary)*)
    fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.expr_inner();
        self.nest -= 1;
        r.map(|(e, _)| e)
    }

    fn expr_inner(&mut self) -> PResult<(Expr, u32)> {
        let (lhs, dl) = self.primary()?;
        if self.cur().is_punct('=') && self.brackets > 0 {
            // Only inside the argument list (after it, '=' introduces the
            // syscall's result).
            let eq = self.bump();
            if !matches!(lhs, Expr::Ident(_) | Expr::Call(..)) {
                return Err(self.error_at(eq.start, "left side of '=' must be a name"));
            }
            let (rhs, dr) = self.expr_depth()?;
            return Ok((Expr::BinOp(ExprOp::Assign, Box::new(lhs), Box::new(rhs)), self.depth(1 + dl.max(dr))?));
        }
        let (mut e, mut d) = (lhs, dl);
        while self.cur().is_punct('|') && !self.at_line_end() {
            self.bump();
            let (rhs, dr) = self.primary()?;
            d = self.depth(1 + d.max(dr))?;
            e = Expr::BinOp(ExprOp::BitOr, Box::new(e), Box::new(rhs));
        }
        Ok((e, d))
    }

    fn expr_depth(&mut self) -> PResult<(Expr, u32)> {
        self.enter()?;
        let r = self.expr_inner();
        self.nest -= 1;
        r
    }

    fn depth(&self, d: u32) -> PResult<u32> {
        if d > MAX_DEPTH {
            Err(self.error_at(self.cur().start, format!("expression nested too deeply (more than {MAX_DEPTH} levels)")))
        } else {
            Ok(d)
        }
    }

    fn primary(&mut self) -> PResult<(Expr, u32)> {
        if self.at_line_end() {
            return Err(self.expected("an expression"));
        }
        let t = self.cur().clone();
        match &t.tok {
            Tok::Ellipsis => {
                self.bump();
                Ok((Expr::Ellipsis, 1))
            }
            Tok::Int(v) => {
                self.bump();
                let v = i64::try_from(*v).map_err(|_| {
                    self.error_at(t.start, format!("integer {v} is out of range (maximum {})", i64::MAX))
                })?;
                Ok((Expr::Int(v), 1))
            }
            Tok::Punct('-') => {
                let n = self.peek(1).clone();
                match n.tok {
                    Tok::Int(v) if n.start == t.end => {
                        self.bump();
                        self.bump();
                        let neg = if v == 1u64 << 63 { Some(i64::MIN) } else { i64::try_from(v).ok().map(|v| -v) };
                        let v = neg.ok_or_else(|| self.error_at(t.start, format!("integer -{v} is out of range")))?;
                        Ok((Expr::Int(v), 1))
                    }
                    _ => Err(self.expected("an expression")),
                }
            }
            Tok::Str(s) => {
                self.bump();
                Ok((Expr::Str(s.clone()), 1))
            }
            Tok::Word(w) => {
                self.bump();
                if self.cur().is_punct('(') && !self.at_line_end() {
                    self.bump();
                    let (args, d) = self.expr_list(')', &format!("',' or ')' in the arguments of '{w}'"))?;
                    Ok((Expr::Call(w.clone(), args), d))
                } else {
                    Ok((Expr::Ident(w.clone()), 1))
                }
            }
            Tok::Punct('[') => {
                self.bump();
                let (items, d) = self.expr_list(']', "',' or ']' in the list")?;
                Ok((Expr::List(items), d))
            }
            Tok::Punct('{') => {
                self.bump();
                let (items, d) = self.expr_list('}', "',' or '}' in the struct")?;
                Ok((Expr::Struct(items), d))
            }
            _ => Err(self.expected("an expression")),
        }
    }

    /// Comma-separated expressions up to `close` (already past the opener).
    fn expr_list(&mut self, close: char, what: &str) -> PResult<(Vec<Expr>, u32)> {
        self.open();
        let mut items = Vec::new();
        let mut d = 1;
        let r = (|| {
            if !self.cur().is_punct(close) {
                loop {
                    let (e, de) = self.expr_depth()?;
                    d = d.max(de + 1);
                    items.push(e);
                    if self.cur().is_punct(',') {
                        self.bump();
                    } else {
                        break;
                    }
                }
            }
            Ok(())
        })();
        r?;
        self.expect_punct(close, what)?;
        self.close();
        let d = self.depth(d)?;
        Ok((items, d))
    }
}

fn time_secs(t: &TimeSpec) -> f64 {
    match t {
        TimeSpec::Absolute(v) | TimeSpec::Relative(v) => *v,
        _ => 0.0,
    }
}

/// At most 30 characters of `s`, for messages.
pub(crate) fn snippet(s: &str) -> String {
    let mut out: String = s.chars().take(30).collect();
    if s.chars().count() > 30 {
        out.push_str("...");
    }
    out
}
