//! Values that would make a run endless or fill the machine's memory are refused when the
//! scenario is read, naming the field: durations are checked in whole nanoseconds (nothing
//! becomes zero by rounding), and sample and ping counts are bounded. Each case was a reproducer.

use ccsim_scenario::{build, parse};

fn error(extra: &str, flows_and_more: &str) -> (String, String) {
    let text = format!(
        "[run]\nduration = \"10s\"\n{extra}\n[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\"]\n{flows_and_more}"
    );
    match parse(&text, "t.toml") {
        Err(e) => (e.field, e.msg),
        Ok(s) => match build(&s) {
            Err(e) => (e.field, e.msg),
            Ok(_) => panic!("scenario should be rejected:\n{text}"),
        },
    }
}

#[test]
fn durations_that_round_to_zero_are_refused_by_their_own_field() {
    let (f, m) = error("[record]\ninterval = \"0.4ns\"", "");
    assert_eq!(f, "record.interval");
    assert!(m.contains("whole nanoseconds"), "{m}");
    let (f, _) = error("[tcp]\nrto_init = \"0.4ns\"", "");
    assert_eq!(f, "tcp.rto_init");
    let (f, _) = error("", "[[pings]]\nsrc = \"a\"\ndst = \"b\"\ninterval = \"0.4ns\"\n");
    assert_eq!(f, "pings[0].interval");
    let (f, _) = error("", "[[base_rtt]]\nbase_rtt = \"0.4ns\"\n");
    assert_eq!(f, "base_rtt[0].base_rtt");
    let text = "[run]\nduration = \"0.4ns\"\n[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\"]\n";
    let e = build(&parse(text, "t.toml").unwrap()).err().unwrap();
    assert_eq!(e.field, "run.duration", "not blamed on record.warmup: {}", e.msg);
}

#[test]
fn sample_and_ping_counts_are_bounded() {
    // 10 s at 1 ns per sample on 2 monitored ports: 2e10 samples.
    let (f, m) = error("[record]\ninterval = \"1ns\"", "");
    assert_eq!(f, "record.interval");
    assert!(m.contains("at least 200 ns"), "{m}");
    let (f, m) = error("", "[[pings]]\nsrc = \"a\"\ndst = \"b\"\ninterval = \"1ns\"\n");
    assert_eq!(f, "pings[0].interval");
    assert!(m.contains("at least 1000 ns"), "{m}");
    // The bounds leave ordinary settings alone.
    let text = "[run]\nduration = \"10s\"\n[record]\ninterval = \"100us\"\n[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\"]\n[[pings]]\nsrc = \"a\"\ndst = \"b\"\ninterval = \"10us\"\n";
    build(&parse(text, "t.toml").unwrap()).unwrap();
}
