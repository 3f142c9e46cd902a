//! Syntax details and error positions on small inline scripts.

use ccsim_pdrill::*;

#[track_caller]
fn ok(src: &str) -> Script {
    parse(src).unwrap_or_else(|e| panic!("unexpected error {e} for:\n{src}"))
}

#[track_caller]
fn err(src: &str, line: u32, col: u32, needle: &str) -> ParseError {
    let e = match parse(src) {
        Ok(s) => panic!("expected an error for:\n{src}\ngot {s:?}"),
        Err(e) => e,
    };
    assert_eq!((e.line, e.col), (line, col), "wrong position for error '{e}' in:\n{src}");
    assert!(e.msg.contains(needle), "error '{e}' does not mention {needle:?}");
    e
}

fn only_packet(src: &str) -> PacketEvent {
    match ok(src).events.remove(0).kind {
        EventKind::Packet(p) => p,
        k => panic!("{k:?}"),
    }
}

fn only_syscall(src: &str) -> Syscall {
    match ok(src).events.remove(0).kind {
        EventKind::Syscall(s) => s,
        k => panic!("{k:?}"),
    }
}

const PRE: &str = "// header\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n";

// ----- error positions ---------------------------------------------------------

#[test]
fn length_mismatch_is_reported_at_its_line() {
    let e = err(&format!("{PRE}0.1 < S 0:0(5) win 100\n"), 3, 9, "inconsistent TCP sequence numbers");
    assert!(e.msg.contains("0:0 spans 0 bytes but the length is 5"), "{e}");
    assert_eq!(e.to_string(), format!("line 3, column 9: {}", e.msg));
    err("0 > . 1001:2001(999) ack 1\n", 1, 7, "spans 1000 bytes");
    err("0 > . 2001:1001(0) ack 1\n", 1, 7, "negative number of bytes");
    // Consistent forms are fine, including hex.
    let p = only_packet("0 < . 0x10:0x20(16) ack 0x1 win 0xffff\n");
    assert_eq!((p.seq_start, p.seq_end, p.len, p.ack, p.win), (16, 32, 16, Some(1), Some(65535)));
}

#[test]
fn unterminated_blocks_report_where_they_start() {
    err(
        &format!("{PRE}\n+0 write(4, ..., 10) = 10\n  +.1 %{{\nassert tcpi_snd_cwnd == 10\n"),
        5,
        7,
        "unterminated code block",
    );
    err(&format!("{PRE}`echo hi\n+0 close(3) = 0\n"), 3, 1, "unterminated shell command");
    err(&format!("{PRE}+0 setsockopt(3, SOL_TCP, TCP_CONGESTION, \"dctcp, 5) = 0\n"), 3, 43, "unterminated string");
    err(&format!("{PRE}/* comment\n+0 close(3) = 0\n"), 3, 1, "unterminated comment");
    // `}` then `%` on separate lines does not close a block.
    err("0 %{ assert 1 }\n%\n", 1, 3, "unterminated code block");
}

#[test]
fn errors_come_in_source_order() {
    // A parse error on line 2 wins over a lexical error further down.
    err("0 close(3) = 0\n+0 > SX. 0:0(0)\n+0 write(3, \"abc, 3) = 3\n", 2, 7, "invalid TCP flag 'X'");
}

#[test]
fn code_block_rejects_other_python_statements() {
    let src = format!("{PRE}+0 %{{\nassert tcpi_snd_cwnd == 10\n\n# a comment\nif tcpi_snd_cwnd: pass\n}}%\n");
    let e = err(&src, 7, 1, "unsupported statement");
    assert!(e.msg.contains("if tcpi_snd_cwnd: pass"), "{e}");
    err("0 %{ a.b = 10 }%\n", 1, 6, "a.b = 10");
    err("0 %{\n  assert x == 1;  cwnd @= 1\n}%\n", 2, 19, "cwnd @= 1");
    err("0 %{ import os }%\n", 1, 6, "import os");
    err("0 %{ x = 1 2 }%\n", 1, 12, "after the assignment");
    err("0 %{ print(x y) }%\n", 1, 14, "in print()");
    err("0 %{ if = 1 }%\n", 1, 6, "unsupported statement");
    // Only blank lines and comments besides asserts.
    let s = ok("0 %{\n\n   # only a comment\n\t\n}%\n");
    match &s.events[0].kind {
        EventKind::Code(c) => assert!(c.asserts.is_empty()),
        k => panic!("{k:?}"),
    }
}

#[test]
fn code_block_assignments_and_prints() {
    let s = ok("0 %{\nK = 0x7fffffff\nprint(tcpi_snd_cwnd); cwnd += 10\nprint()\nassert tcpi_snd_cwnd == K\n}%\n");
    let EventKind::Code(c) = &s.events[0].kind else { panic!() };
    assert_eq!(c.stmts.len(), 5);
    assert_eq!(c.asserts.len(), 1);
    assert_eq!(
        c.stmts[0],
        Stmt::Assign {
            line: 2,
            name: "K".into(),
            op: None,
            expr: CExpr::Int(0x7fff_ffff),
            text: "K = 0x7fffffff".into()
        }
    );
    assert_eq!(
        c.stmts[1],
        Stmt::Print { line: 3, args: vec![CExpr::Ident("tcpi_snd_cwnd".into())], text: "print(tcpi_snd_cwnd)".into() }
    );
    assert!(matches!(&c.stmts[2], Stmt::Assign { op: Some(BinaryOp::Add), name, .. } if name == "cwnd"));
    assert!(matches!(&c.stmts[3], Stmt::Print { args, .. } if args.is_empty()));
    assert!(matches!(&c.stmts[4], Stmt::Assert(a) if a.line == 5));
}

#[test]
fn code_block_expression_errors() {
    err("0 %{ assert tcpi_rtt < 1.5 }%\n", 1, 24, "floating-point");
    err("0 %{ assert len(x) == 1 }%\n", 1, 16, "function calls");
    err("0 %{\nassert (tcpi_snd_cwnd == 10\n}%\n", 2, 28, "expected ')'");
    err("0 %{ assert }%\n", 1, 12, "expected an expression");
    err("0 %{ assert a == }%\n", 1, 17, "expected an expression");
    err("0 %{ assert a == 1 b }%\n", 1, 20, "unexpected 'b' after the assert");
    err("0 %{ assert a is None }%\n", 1, 15, "not supported");
    err("0 %{ assert 'abc }%\n", 1, 13, "unterminated string");
    err("0 %{ assert x == 99999999999999999999 }%\n", 1, 18, "out of range");
    err("0 %{ assert x == 010 }%\n", 1, 18, "leading zeros");
    err("0 %{ assert x == $ }%\n", 1, 18, "unexpected character '$'");
}

#[test]
fn packet_errors() {
    err("0 > SX. 0:0(0) ack 1\n", 1, 6, "invalid TCP flag 'X'");
    err("0 > SS 0:0(0)\n", 1, 6, "duplicate TCP flag 'S'");
    err("0 < . 1:1(0) win 10 ack 1\n", 1, 21, "'ack' must come before 'win'");
    err("0 < . 1:1(0) ack 1 win 65536\n", 1, 24, "TCP window value 65536 is out of range (maximum 65535)");
    err("0 < . 4294967296:4294967296(0) ack 1\n", 1, 7, "out of range");
    err("0 < S 0:0(0) win 100 <mss 1000,sackok>\n", 1, 32, "did you mean 'sackOK'");
    err("0 < S 0:0(0) win 100 <mss 1000,wscale 300>\n", 1, 39, "window scale shift count 300 is out of range");
    err("0 < S 0:0(0) win 100 <mss 1000 sackOK>\n", 1, 32, "expected ',' or '>'");
    err("0 < S 0:0(0) win 100 <mss 1000,\n", 1, 32, "expected a TCP option");
    err("0 < S 0:0(0) win 100 <TS val 1>\n", 1, 31, "expected 'ecr'");
    err("0 < S 0:0(0) win 100 <sack>\n", 1, 27, "SACK block");
    err("0 < [ect01] . 1:1(0) ack 1\n", 1, 6, "[ect01] can only be used with outbound packets");
    err("0 < [ect2] . 1:1(0) ack 1\n", 1, 6, "ECN codepoint");
    err("0 < [ect0) . 1:1(0) ack 1\n", 1, 10, "']'");
    err("0 < . 1:1(0) ack 1 <...>\n", 1, 20, "can only be used with outbound packets");
    err("0 < . 1:1 ack 1\n", 1, 11, "expected '('");
    err("0 < . 1:1(0) ack\n+0 close(3) = 0\n", 1, 17, "found end of line");
    err("0 < 1:1(0) ack 1\n", 1, 5, "expected TCP flags");
    err("0 < udp (100)\n", 1, 5, "not supported");
}

#[test]
fn event_and_time_errors() {
    err("socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n", 1, 1, "expected event time");
    err("0 close(3) = 0\n< . 1:1(0) ack 1\n", 2, 1, "expected event time");
    err("0 close(3) = 0 +0 close(4) = 0\n", 1, 16, "expected a line break after the event");
    err("0.1\n+0 close(3) = 0\n", 1, 4, "found end of line");
    err("0 write(4, ..., 1)\n+0 > P. 1:2(1) ack 1\n", 1, 19, "expected '='");
    err("0 write(4, ..., 1) =\n", 1, 21, "found end of input");
    err("* close(3) = 0\n", 1, 1, "'*' can only be used with outbound packets");
    err("0.1~0.2 close(3) = 0\n", 1, 1, "range can only be used with outbound packets");
    err("0 close(3) = 0\n+0.1~0.2 > . 1:1(0) ack 1\n", 2, 5, "both ends of a time range");
    err("0.2~0.1 > . 1:1(0) ack 1\n", 1, 1, "backwards");
    err("0.2...0.1 read(4, ..., 1) = 1\n", 1, 1, "before its start time");
    err("0.1...0.2 > . 1:1(0) ack 1\n", 1, 1, "only be used with system calls");
    err("0 close(3) = 0\n--tolerance_usecs=100\n", 2, 1, "only allowed before the first event");
    err("-1 close(3) = 0\n", 1, 1, "negative event time");
    err("0 close 3\n", 1, 9, "expected '(' after system call name 'close'");
    err("0 f(\n", 1, 5, "expected an expression, found end of input");
    err("0 f([1, 2) = 0\n", 1, 10, "',' or ']'");
    err("0 f(99999999999999999999) = 0\n", 1, 5, "too large");
    err("0 f(12ab) = 0\n", 1, 5, "malformed number");
    err("", 1, 1, "no timed events");
    err("// only comments\n/* and more */\n", 3, 1, "no timed events");
}

#[test]
fn untimed_shell_commands() {
    let s = ok("`init`\n0 close(3) = 0\n`cleanup`\n");
    assert_eq!(s.events.len(), 3);
    assert_eq!(s.events[0].time, TimeSpec::Untimed);
    assert_eq!(s.events[2].time, TimeSpec::Untimed);
    // Timed shell commands anywhere.
    let s = ok("0 close(3) = 0\n+0 `echo a`\n+1 close(4) = 0\n");
    assert_eq!(s.events[1].kind, EventKind::Shell("echo a".into()));
    assert_eq!(s.events[1].time, TimeSpec::Relative(0.0));
    err("0 close(3) = 0\n`middle`\n+1 close(4) = 0\n", 2, 1, "only allowed before the first or after the last");
    err("`a`\n`b`\n0 close(3) = 0\n", 2, 1, "only one shell command");
    err("0 close(3) = 0\n`a`\n`b`\n", 2, 1, "only allowed before the first or after the last");
    err("`just a command`\n", 2, 1, "no timed events");
}

#[test]
fn nesting_limits_give_errors_not_stack_overflows() {
    let deep = format!("0 f({}) = 0\n", "[".repeat(100_000));
    err(&deep, 1, 105, "nested too deeply");
    let deep = format!("0 %{{ assert {} }}%\n", "(".repeat(100_000));
    err(&deep, 1, 113, "nested too deeply");
    let deep = format!("0 %{{ assert {}x }}%\n", "not ".repeat(100_000));
    assert!(parse(&deep).unwrap_err().msg.contains("nested too deeply"));
    let deep = format!("0 %{{ assert {}x }}%\n", "-".repeat(100_000));
    assert!(parse(&deep).unwrap_err().msg.contains("nested too deeply"));
    let long = format!("0 %{{ assert x{} == 1 }}%\n", " + 1".repeat(100_000));
    assert!(parse(&long).unwrap_err().msg.contains("nested too deeply"));
    let long = format!("0 f(A{}) = 0\n", "|B".repeat(100_000));
    assert!(parse(&long).unwrap_err().msg.contains("nested too deeply"));
    // Reasonable depths are fine.
    ok(&format!("0 %{{ assert {}x{} == 1 }}%\n", "(".repeat(30), ")".repeat(30)));
}

// ----- accepted syntax ---------------------------------------------------------

#[test]
fn syscall_forms() {
    let s = only_syscall("0 connect(4, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n");
    assert_eq!(s.result, Expr::Int(-1));
    assert_eq!(s.errno.as_deref(), Some("EINPROGRESS"));
    let s = only_syscall("0 getsockopt(4, SOL_SOCKET, SO_ERROR, [0], [4]) = 0\n");
    assert_eq!(s.args[3], Expr::List(vec![Expr::Int(0)]));
    let s = only_syscall("0 socket(..., SOCK_STREAM|SOCK_NONBLOCK, 0x6) = 3\n");
    assert_eq!(
        s.args[1],
        Expr::BinOp(
            ExprOp::BitOr,
            Box::new(Expr::Ident("SOCK_STREAM".into())),
            Box::new(Expr::Ident("SOCK_NONBLOCK".into()))
        )
    );
    assert_eq!(s.args[2], Expr::Int(6));
    let s = only_syscall("0 getpid() = 0\n");
    assert!(s.args.is_empty());
    // Arguments may wrap across lines inside the parentheses.
    let s =
        ok("0 epoll_ctl(5, EPOLL_CTL_ADD, 4,\n             {events=EPOLLIN|EPOLLOUT, fd=4}) = 0\n+0 close(5) = 0\n");
    assert_eq!(s.events.len(), 2);
    assert!(s.events[0].text.contains('\n'));
    let EventKind::Syscall(sc) = &s.events[0].kind else { panic!() };
    let Expr::Struct(members) = &sc.args[3] else { panic!("{:?}", sc.args[3]) };
    assert_eq!(members[1], Expr::BinOp(ExprOp::Assign, Box::new(Expr::Ident("fd".into())), Box::new(Expr::Int(4))));
    let s = only_syscall(
        "0 bind(3, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"192.0.2.1\")}, 16) = 0\n",
    );
    let Expr::Struct(m) = &s.args[1] else { panic!() };
    assert_eq!(
        m[1],
        Expr::BinOp(
            ExprOp::Assign,
            Box::new(Expr::Ident("sin_port".into())),
            Box::new(Expr::Call("htons".into(), vec![Expr::Int(8080)]))
        )
    );
    // Blocking calls with absolute times, with or without spaces.
    let s = ok("0.1...0.2 read(4, ..., 10) = 10\n0.3 ... 0.4 read(4, ..., 10) = 10\n+0...+0.1 read(4, ..., 1) = 1\n");
    assert_eq!(
        s.events[0].time,
        TimeSpec::Blocking { start: Box::new(TimeSpec::Absolute(0.1)), end: Box::new(TimeSpec::Absolute(0.2)) }
    );
    assert_eq!(
        s.events[1].time,
        TimeSpec::Blocking { start: Box::new(TimeSpec::Absolute(0.3)), end: Box::new(TimeSpec::Absolute(0.4)) }
    );
    assert_eq!(
        s.events[2].time,
        TimeSpec::Blocking { start: Box::new(TimeSpec::Relative(0.0)), end: Box::new(TimeSpec::Relative(0.1)) }
    );
}

#[test]
fn packet_forms() {
    let p = only_packet("0 > P. 1:1001(1000) ack 1 <nop,nop,TS val 100 ecr 7,sack 1001:2001 3001:4001,eol>\n");
    assert_eq!(
        p.options,
        Some(vec![
            TcpOption::Nop,
            TcpOption::Nop,
            TcpOption::Timestamp { val: 100, ecr: 7 },
            TcpOption::Sack(vec![(1001, 2001), (3001, 4001)]),
            TcpOption::Eol
        ])
    );
    assert_eq!(only_packet("0 > . 1:1(0) ack 1 <>\n").options, Some(vec![]));
    assert_eq!(only_packet("0 > . 1:1(0) ack 1 <...>\n").options, None);
    assert_eq!(only_packet("0 > . 1:1(0) ack 1\n").options, None);
    // Option lists may wrap inside <...>.
    assert_eq!(
        only_packet("0 > S 0:0(0) <mss 1460,\n   nop>\n").options,
        Some(vec![TcpOption::Mss(1460), TcpOption::Nop])
    );
    for (ecn, spec) in [
        ("noecn", EcnSpec::NoEcn),
        ("ect0", EcnSpec::Ect0),
        ("ect1", EcnSpec::Ect1),
        ("ect01", EcnSpec::Ect01),
        ("ce", EcnSpec::Ce),
    ] {
        assert_eq!(only_packet(&format!("0 > [{ecn}] . 1:1(0) ack 1\n")).ecn, Some(spec));
        assert_eq!(only_packet(&format!("0 > ({ecn}) . 1:1(0) ack 1\n")).ecn, Some(spec));
    }
    for flags in ["S", "S.", "SEW", "SE.", ".", "P.", "F.", "R", "R.", "FPU.", "C.", "-", "W."] {
        assert_eq!(only_packet(&format!("0 > {flags} 1:1(0)\n")).flags, flags);
    }
    let s = ok("* > . 1:1(0) ack 1\n");
    assert_eq!(s.events[0].time, TimeSpec::Any);
    let s = ok("0.1~0.2 > . 1:1(0) ack 1\n");
    assert_eq!(
        s.events[0].time,
        TimeSpec::Range { start: Box::new(TimeSpec::Absolute(0.1)), end: Box::new(TimeSpec::Absolute(0.2)) }
    );
}

#[test]
fn options_comments_and_whitespace() {
    let s = ok(concat!(
        "--tolerance_usecs=10000\n",
        "--ip_version=ipv4 --verbose\n",
        "/* a\n   block comment */ 0 close(3) = 0 // trailing\n",
        "\t+.5\tclose(4)\t=\t0\r\n",
        ".25 close(5) = 0 /* inline */\n"
    ));
    assert_eq!(
        s.options,
        vec![
            ScriptOption { name: "tolerance_usecs".into(), value: Some("10000".into()), line: 1 },
            ScriptOption { name: "ip_version".into(), value: Some("ipv4".into()), line: 2 },
            ScriptOption { name: "verbose".into(), value: None, line: 2 },
        ]
    );
    assert_eq!(s.events.len(), 3);
    assert_eq!((s.events[0].line, s.events[0].col), (4, 21));
    assert_eq!(s.events[0].text, "0 close(3) = 0");
    assert_eq!((s.events[1].line, s.events[1].col, s.events[1].time.clone()), (5, 2, TimeSpec::Relative(0.5)));
    assert_eq!(s.events[1].text, "+.5\tclose(4)\t=\t0");
    assert_eq!(s.events[2].time, TimeSpec::Absolute(0.25));
}

#[test]
fn code_block_python_subset() {
    let s = ok(concat!(
        "0 %{\n",
        "assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd  # comment\n",
        "assert (tcpi_ca_state ==\n",
        "        TCP_CA_Open), 'state=%d cwnd=%d' % (tcpi_ca_state, tcpi_snd_cwnd)\n",
        "assert 1 < tcpi_snd_cwnd <= 20 and not tcpi_retrans, \\\n",
        "   \"retrans\"\n",
        "assert x == 1; assert y == 2;\n",
        "}%\n"
    ));
    let EventKind::Code(c) = &s.events[0].kind else { panic!() };
    let lines: Vec<u32> = c.asserts.iter().map(|a| a.line).collect();
    assert_eq!(lines, vec![2, 3, 5, 7, 7]);
    assert_eq!(
        c.asserts[1].text,
        "assert (tcpi_ca_state ==\n        TCP_CA_Open), 'state=%d cwnd=%d' % (tcpi_ca_state, tcpi_snd_cwnd)"
    );
    assert_eq!(c.asserts[3].text, "assert x == 1");
    let vars = |n: &str| match n {
        "tcpi_snd_cwnd" => Some(10),
        "tcpi_ca_state" | "TCP_CA_Open" | "tcpi_retrans" => Some(0),
        _ => None,
    };
    assert_eq!(eval_message(c.asserts[1].message.as_ref().unwrap(), &vars), Ok("state=0 cwnd=10".into()));
    assert_eq!(eval(&c.asserts[2].expr, &vars), Ok(1));
    assert_eq!(eval_message(c.asserts[2].message.as_ref().unwrap(), &vars), Ok("retrans".into()));
    // The chained comparison is (1 < cwnd) and (cwnd <= 20).
    let CExpr::Binary(BinaryOp::And, chain, _) = &c.asserts[2].expr else { panic!() };
    assert_eq!(
        **chain,
        CExpr::Binary(
            BinaryOp::And,
            Box::new(CExpr::Binary(
                BinaryOp::Lt,
                Box::new(CExpr::Int(1)),
                Box::new(CExpr::Ident("tcpi_snd_cwnd".into()))
            )),
            Box::new(CExpr::Binary(
                BinaryOp::Le,
                Box::new(CExpr::Ident("tcpi_snd_cwnd".into())),
                Box::new(CExpr::Int(20))
            ))
        )
    );
}
