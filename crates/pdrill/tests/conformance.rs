//! Every conformance script parses, and spot checks of the parsed events.

mod common;

use ccsim_pdrill::*;
use common::{corpus_dir, pkt_files, read_script};

fn parse_ok(rel: &str) -> Script {
    let src = read_script(rel);
    parse(&src).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn event_at(script: &Script, line: u32) -> &Event {
    script.events.iter().find(|e| e.line == line).unwrap_or_else(|| panic!("no event at line {line}"))
}

fn packet(e: &Event) -> &PacketEvent {
    match &e.kind {
        EventKind::Packet(p) => p,
        other => panic!("line {}: expected a packet, got {other:?}", e.line),
    }
}

fn syscall(e: &Event) -> &Syscall {
    match &e.kind {
        EventKind::Syscall(s) => s,
        other => panic!("line {}: expected a syscall, got {other:?}", e.line),
    }
}

fn code(e: &Event) -> &CodeBlock {
    match &e.kind {
        EventKind::Code(c) => c,
        other => panic!("line {}: expected a code block, got {other:?}", e.line),
    }
}

fn rel(t: f64) -> TimeSpec {
    TimeSpec::Relative(t)
}

#[test]
fn every_conformance_script_parses() {
    if common::skip_without_corpus() {
        return;
    }
    let dir = corpus_dir();
    let files = pkt_files(&dir);
    assert!(
        files.len() >= 24,
        "expected at least 24 conformance scripts under {}, found {}",
        dir.display(),
        files.len()
    );
    assert!(files.iter().any(|f| f.starts_with(dir.join("seed"))), "no seed/*.pkt scripts");
    assert!(files.iter().any(|f| f.starts_with(dir.join("upstream"))), "no upstream/*/*.pkt scripts");
    let expected = common::expected_results();
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        match parse(&src) {
            Ok(script) => {
                assert!(!script.events.is_empty(), "{}: no events", f.display());
                // Each event's text is its source line(s), starting at its position.
                let lines: Vec<&str> = src.lines().collect();
                for e in &script.events {
                    let line = lines[e.line as usize - 1];
                    let from_col: String = line.chars().skip(e.col as usize - 1).collect();
                    let first_text_line = e.text.lines().next().unwrap();
                    assert!(
                        from_col.starts_with(first_text_line),
                        "{}:{}: text {:?} not found at column {} of {line:?}",
                        f.display(),
                        e.line,
                        e.text,
                        e.col
                    );
                    assert!(!e.text.contains("//"), "{}:{}: comment kept in text {:?}", f.display(), e.line, e.text);
                }
            }
            Err(e) => {
                // A script ccsim cannot parse must be recorded as stopping at the line it names.
                let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
                let line: Option<u32> =
                    e.to_string().strip_prefix("line ").and_then(|t| t.split(',').next()).and_then(|n| n.parse().ok());
                if line.is_none() || expected.get(&rel) != Some(&line) {
                    failures.push(format!("{}: {e} (recorded: {:?})", f.display(), expected.get(&rel)));
                }
            }
        }
    }
    assert!(failures.is_empty(), "scripts failing to parse:\n{}", failures.join("\n"));
}

#[test]
fn dctcp_ce_change_immediate_ack() {
    if common::skip_without_corpus() {
        return;
    }
    let s = parse_ok("seed/dctcp-ce-change-immediate-ack.pkt");
    assert_eq!(s.events.len(), 19);

    let first = &s.events[0];
    assert_eq!((first.line, first.col), (5, 1));
    assert_eq!(first.time, TimeSpec::Absolute(0.0));
    assert_eq!(first.text, "0.000 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3");
    let sock = syscall(first);
    assert_eq!(sock.name, "socket");
    assert_eq!(sock.args, vec![Expr::Ellipsis, Expr::Ident("SOCK_STREAM".into()), Expr::Ident("IPPROTO_TCP".into())]);
    assert_eq!(sock.result, Expr::Int(3));
    assert_eq!(sock.errno, None);

    let cc = syscall(event_at(&s, 7));
    assert_eq!(cc.args[3], Expr::Str("dctcp".into()));
    let reuse = syscall(event_at(&s, 6));
    assert_eq!(reuse.args[3], Expr::List(vec![Expr::Int(1)]));

    let syn = event_at(&s, 11);
    assert_eq!(syn.time, TimeSpec::Absolute(0.1));
    let syn = packet(syn);
    assert_eq!(syn.dir, Direction::Inbound);
    assert_eq!(syn.ecn, Some(EcnSpec::Ect0));
    assert_eq!(syn.flags, "SEW");
    assert_eq!((syn.seq_start, syn.seq_end, syn.len), (0, 0, 0));
    assert_eq!(syn.ack, None);
    assert_eq!(syn.win, Some(32792));
    assert_eq!(
        syn.options,
        Some(vec![
            TcpOption::Mss(1000),
            TcpOption::SackOk,
            TcpOption::Nop,
            TcpOption::Nop,
            TcpOption::Nop,
            TcpOption::Wscale(7)
        ])
    );

    let synack = packet(event_at(&s, 12));
    assert_eq!(synack.dir, Direction::Outbound);
    assert_eq!(synack.ecn, None);
    assert_eq!(synack.flags, "SE.");
    assert_eq!(synack.ack, Some(1));
    assert_eq!(synack.win, None);

    // `   +0 setsockopt(...)` is indented.
    let debug = event_at(&s, 15);
    assert_eq!((debug.col, debug.time.clone()), (4, rel(0.0)));

    // The CE-marked data segment.
    let ce = event_at(&s, 24);
    assert_eq!(ce.time, rel(0.005));
    assert_eq!(ce.text, "+0.005 < [ce] . 2001:3001(1000) ack 2 win 257");
    let ce = packet(ce);
    assert_eq!(ce.dir, Direction::Inbound);
    assert_eq!(ce.ecn, Some(EcnSpec::Ce));
    assert_eq!(ce.flags, ".");
    assert_eq!((ce.seq_start, ce.seq_end, ce.len), (2001, 3001, 1000));
    assert_eq!(ce.ack, Some(2));
    assert_eq!(ce.win, Some(257));
    assert_eq!(ce.options, None);

    // The immediate ACK with ECE.
    let ece = event_at(&s, 28);
    assert_eq!(ece.time, rel(0.0));
    let ece = packet(ece);
    assert_eq!(ece.dir, Direction::Outbound);
    assert_eq!(ece.ecn, Some(EcnSpec::Ect01));
    assert_eq!(ece.flags, "E.");
    assert_eq!((ece.seq_start, ece.seq_end, ece.len), (2, 2, 0));
    assert_eq!(ece.ack, Some(3001));
    assert_eq!(ece.win, None);

    let fin = packet(s.events.last().unwrap());
    assert_eq!(fin.flags, "F.");
    assert_eq!(fin.ecn, None);
}

#[test]
fn dctcp_delayed_ack_schedule_time_range() {
    if common::skip_without_corpus() {
        return;
    }
    let s = parse_ok("seed/dctcp-delayed-ack-schedule.pkt");
    let e = event_at(&s, 38);
    assert_eq!(e.time, TimeSpec::Range { start: Box::new(rel(0.040)), end: Box::new(rel(0.045)) });
    // The trailing `// delayed ack` comment is not part of the text.
    assert_eq!(e.text, "+0.040~+0.045 > [ect01] . 4:4(0) ack 5501");
    let p = packet(e);
    assert_eq!(p.dir, Direction::Outbound);
    assert_eq!(p.ack, Some(5501));

    let pe = packet(event_at(&s, 34));
    assert_eq!(pe.flags, "PE.");
    let w = packet(event_at(&s, 36));
    assert_eq!(w.flags, "W.");
    assert_eq!(event_at(&s, 32).time, rel(0.001));
    assert_eq!(event_at(&s, 33).time, rel(0.0)); // written "+0"
    assert_eq!(event_at(&s, 30).time, TimeSpec::Absolute(0.21));
}

#[test]
fn prr_code_block_asserts() {
    if common::skip_without_corpus() {
        return;
    }
    let s = parse_ok("upstream/fast_recovery/prr-ss-10pkt-lost-1.pkt");
    let e = event_at(&s, 31);
    assert_eq!(e.time, rel(0.01));
    let c = code(e);
    assert_eq!(c.asserts.len(), 3);
    let expected =
        [(32, "tcpi_ca_state", "TCP_CA_Recovery"), (33, "tcpi_snd_cwnd", "7"), (34, "tcpi_snd_ssthresh", "7")];
    for (a, (line, var, val)) in c.asserts.iter().zip(expected) {
        assert_eq!(a.line, line);
        let rhs = val.parse::<i64>().map(CExpr::Int).unwrap_or_else(|_| CExpr::Ident(val.to_string()));
        assert_eq!(a.expr, CExpr::Binary(BinaryOp::Eq, Box::new(CExpr::Ident(var.into())), Box::new(rhs)));
        assert_eq!(a.message, Some(CExpr::Ident(var.into())));
        assert_eq!(a.text, format!("assert {var} == {val}, {var}"));
    }
    assert!(c.raw.contains("assert tcpi_snd_cwnd == 7, tcpi_snd_cwnd\n"));
    assert!(e.text.starts_with("+.01 %{") && e.text.ends_with("}%"));

    // Evaluate them as a runner would, in recovery with cwnd 7.
    let vars = |n: &str| match n {
        "tcpi_ca_state" => Some(3),
        "TCP_CA_Recovery" => Some(3),
        "TCP_CA_Open" => Some(0),
        "tcpi_snd_cwnd" => Some(7),
        "tcpi_snd_ssthresh" => Some(7),
        _ => None,
    };
    for a in &c.asserts {
        assert_eq!(eval(&a.expr, &vars), Ok(1), "{}", a.text);
    }
    // The second block expects TCP_CA_Open: fails with this state, and the
    // message evaluates to the current value.
    let c2 = code(event_at(&s, 62));
    assert_eq!(eval(&c2.asserts[0].expr, &vars), Ok(0));
    assert_eq!(eval_message(c2.asserts[0].message.as_ref().unwrap(), &vars), Ok("3".to_string()));
}

#[test]
fn one_line_code_blocks_and_comments_in_code() {
    if common::skip_without_corpus() {
        return;
    }
    let s = parse_ok("upstream/cwnd_moderation/cwnd-moderation-disorder-no-moderation.pkt");
    let one = code(event_at(&s, 20));
    assert_eq!(one.asserts.len(), 1);
    assert_eq!(one.asserts[0].line, 20);
    assert_eq!(one.raw, " assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd ");

    let multi = code(event_at(&s, 23));
    assert_eq!(multi.asserts.len(), 2);
    assert_eq!(multi.asserts[1].line, 25);
    assert_eq!(multi.asserts[1].text, "assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd");

    // `<sack 1001:2001,nop,nop>`
    let p = packet(event_at(&s, 22));
    assert_eq!(p.options, Some(vec![TcpOption::Sack(vec![(1001, 2001)]), TcpOption::Nop, TcpOption::Nop]));
}

#[test]
fn formatted_assert_message() {
    if common::skip_without_corpus() {
        return;
    }
    let s = parse_ok("upstream/slow_start/slow-start-ack-per-2pkt-send-5pkt.pkt");
    let c = code(event_at(&s, 27));
    let a = &c.asserts[0];
    assert_eq!(
        a.message,
        Some(CExpr::Binary(
            BinaryOp::Mod,
            Box::new(CExpr::Str("cwnd=%d".into())),
            Box::new(CExpr::Ident("tcpi_snd_cwnd".into()))
        ))
    );
    let vars = |n: &str| (n == "tcpi_snd_cwnd").then_some(12);
    assert_eq!(eval(&a.expr, &vars), Ok(0));
    assert_eq!(eval_message(a.message.as_ref().unwrap(), &vars), Ok("cwnd=12".into()));
}

#[test]
fn shell_commands_blocking_calls_and_timestamps() {
    if common::skip_without_corpus() {
        return;
    }
    let s = parse_ok("upstream/ecn/ecn-uses-ect0.pkt");
    let init = &s.events[0];
    assert_eq!((init.line, init.col), (3, 1));
    assert_eq!(init.time, TimeSpec::Untimed);
    assert_eq!(
        init.kind,
        EventKind::Shell("../common/defaults.sh\nsysctl -q net.ipv4.tcp_ecn=1  # fully enabled\n".into())
    );

    // `+.002 ... 0.004 connect(4, ..., ...) = 0`
    let conn = event_at(&s, 11);
    assert_eq!(conn.time, TimeSpec::Blocking { start: Box::new(rel(0.002)), end: Box::new(rel(0.004)) });
    assert_eq!(syscall(conn).name, "connect");

    let syn = packet(event_at(&s, 13));
    assert_eq!(syn.flags, "SEW");
    assert_eq!(
        syn.options,
        Some(vec![
            TcpOption::Mss(1460),
            TcpOption::SackOk,
            TcpOption::Timestamp { val: 100, ecr: 0 },
            TcpOption::Nop,
            TcpOption::Wscale(8)
        ])
    );

    let s = parse_ok("upstream/slow_start/slow-start-after-idle.pkt");
    assert_eq!(s.events[0].time, TimeSpec::Untimed);
    match &s.events[0].kind {
        EventKind::Shell(cmd) => assert!(cmd.contains("tcp_slow_start_after_idle=1 \\\n")),
        other => panic!("{other:?}"),
    }
    let cleanup = s.events.last().unwrap();
    assert_eq!((cleanup.line, cleanup.time.clone()), (38, TimeSpec::Untimed));
    assert_eq!(cleanup.kind, EventKind::Shell("/tmp/sysctl_restore_${PPID}.sh".into()));
    assert_eq!(event_at(&s, 32).time, rel(2.0)); // "+2"

    let s = parse_ok("upstream/fast_retransmit/fr-4pkt-fack-last-byte.pkt");
    assert_eq!(event_at(&s, 26).time, TimeSpec::Range { start: Box::new(rel(0.1)), end: Box::new(rel(0.105)) });
    assert_eq!(event_at(&s, 8).time, TimeSpec::Absolute(0.0));
}
