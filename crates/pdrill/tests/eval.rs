//! Evaluation of code-block assert expressions.

use ccsim_pdrill::*;

/// Parses `assert <expr>[, <msg>]` through the public parser.
fn assert_of(stmt: &str) -> Assert {
    let src = format!("0 %{{ assert {stmt} }}%\n");
    let mut script = parse(&src).unwrap_or_else(|e| panic!("{e} in {src:?}"));
    match script.events.remove(0).kind {
        EventKind::Code(mut c) => c.asserts.remove(0),
        k => panic!("{k:?}"),
    }
}

fn vars(name: &str) -> Option<i64> {
    match name {
        "tcpi_snd_cwnd" => Some(10),
        "tcpi_snd_ssthresh" => Some(7),
        "tcpi_ca_state" => Some(3),
        "TCP_CA_Open" => Some(0),
        "TCP_CA_Recovery" => Some(3),
        "zero" => Some(0),
        "big" => Some(i64::MAX),
        _ => None,
    }
}

#[track_caller]
fn ev(expr: &str) -> Result<i64, String> {
    eval(&assert_of(expr).expr, &vars)
}

#[test]
fn arithmetic_and_precedence() {
    let cases: &[(&str, i64)] = &[
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),
        ("2 ** 3 ** 2", 512),
        ("-2 ** 2", -4),
        ("(-2) ** 2", 4),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("-7 / 2", -4),
        ("7 % 3", 1),
        ("-7 % 2", 1),
        ("7 % -2", -1),
        ("0x10 + 0o10 + 0b10 + 1_000", 16 + 8 + 2 + 1000),
        ("6 & 3 | 8 ^ 1", (6 & 3) | (8 ^ 1)),
        ("1 << 4 >> 2", 4),
        ("-1 >> 70", -1),
        ("~5", -6),
        ("+-+3", -3),
        ("tcpi_snd_cwnd * 2 - tcpi_snd_ssthresh", 13),
    ];
    for (e, want) in cases {
        assert_eq!(ev(e), Ok(*want), "{e}");
    }
}

#[test]
fn booleans_are_zero_or_one() {
    let cases: &[(&str, i64)] = &[
        ("tcpi_snd_cwnd == 10", 1),
        ("tcpi_snd_cwnd != 10", 0),
        ("tcpi_ca_state == TCP_CA_Recovery", 1),
        ("tcpi_ca_state == TCP_CA_Open", 0),
        ("tcpi_snd_ssthresh < tcpi_snd_cwnd", 1),
        ("5 <= 5 and 5 >= 6", 0),
        ("3 and 4", 1),
        ("0 or 7", 1),
        ("not 7", 0),
        ("not zero", 1),
        ("1 < tcpi_snd_cwnd <= 10", 1),
        ("1 < tcpi_snd_cwnd < 10", 0),
        ("3 > 2 > 1", 1),
        ("3 > 2 == 1", 0), // chained: (3 > 2) and (2 == 1), not (3 > 2) == 1
        ("not 1 == 2", 1), // not (1 == 2)
        ("True and not False", 1),
        ("(tcpi_snd_cwnd == 10) + 1", 2),
    ];
    for (e, want) in cases {
        assert_eq!(ev(e), Ok(*want), "{e}");
    }
}

#[test]
fn errors() {
    let e = ev("tcpi_snd_cwnd == tcpi_bogus").unwrap_err();
    assert!(e.contains("tcpi_bogus"), "{e}");
    assert!(ev("tcpi_snd_cwnd / zero").unwrap_err().contains("division by zero"));
    assert!(ev("tcpi_snd_cwnd // 0").unwrap_err().contains("division by zero"));
    assert!(ev("1 % zero").unwrap_err().contains("by zero"));
    assert!(ev("big + 1").unwrap_err().contains("overflow"));
    assert!(ev("big * 2").unwrap_err().contains("overflow"));
    assert!(ev("-big - 2").unwrap_err().contains("overflow"));
    assert!(ev("1 << 63").unwrap_err().contains("overflow"));
    assert!(ev("1 << -1").unwrap_err().contains("negative shift"));
    assert!(ev("2 ** -1").unwrap_err().contains("negative exponent"));
    assert!(ev("10 ** 30").unwrap_err().contains("overflow"));
    assert!(ev("'abc' == 1").unwrap_err().contains("string"));
    assert!(ev("(1, 2) == 1").unwrap_err().contains("tuple"));
}

#[test]
fn short_circuit_avoids_errors() {
    assert_eq!(ev("zero != 0 and 10 / zero > 1"), Ok(0));
    assert_eq!(ev("zero == 0 or 10 / zero > 1"), Ok(1));
    assert_eq!(ev("1 or undefined_name"), Ok(1));
    assert!(ev("0 or undefined_name").unwrap_err().contains("undefined_name"));
}

#[test]
fn eval_directly_on_hand_built_trees() {
    let e = CExpr::Binary(
        BinaryOp::Ge,
        Box::new(CExpr::Unary(UnaryOp::Neg, Box::new(CExpr::Ident("x".into())))),
        Box::new(CExpr::Int(-5)),
    );
    assert_eq!(eval(&e, &|n| (n == "x").then_some(5)), Ok(1));
    assert_eq!(eval(&e, &|n| (n == "x").then_some(6)), Ok(0));
    assert_eq!(eval(&e, &|_| None), Err("unknown identifier 'x'".to_string()));
}

#[test]
fn messages() {
    let msg = |stmt: &str| eval_message(assert_of(stmt).message.as_ref().expect("message"), &vars);
    assert_eq!(msg("x, tcpi_snd_cwnd"), Ok("10".into()));
    assert_eq!(msg("x, tcpi_snd_cwnd - 12"), Ok("-2".into()));
    assert_eq!(msg("x, 'cwnd=%d' % tcpi_snd_cwnd"), Ok("cwnd=10".into()));
    assert_eq!(msg("x, \"plain\""), Ok("plain".into()));
    assert_eq!(msg("x, 'a' 'b'"), Ok("ab".into()));
    assert_eq!(
        msg("x, 'cwnd: %d ssthresh: %5d state: %02x 100%%' % (tcpi_snd_cwnd, tcpi_snd_ssthresh, tcpi_ca_state)"),
        Ok("cwnd: 10 ssthresh:     7 state: 03 100%".into())
    );
    assert_eq!(msg("x, '%-4d|%+d|%X' % (7, 7, 255)"), Ok("7   |+7|FF".into()));
    assert_eq!(msg("x, '%d' % (tcpi_snd_cwnd,)"), Ok("10".into()));
    assert!(msg("x, '%d %d' % tcpi_snd_cwnd").unwrap_err().contains("not enough arguments"));
    assert!(msg("x, 'none' % tcpi_snd_cwnd").unwrap_err().contains("not all arguments converted"));
    assert!(msg("x, '%d' % nope").unwrap_err().contains("nope"));
    assert!(msg("x, '%q' % 1").unwrap_err().contains("unsupported format character"));
}
