//! `flows.connect`: a connection opened ahead of the flow's first write, as flowgrind opens its
//! test connections when it sets the flows up. The transfer is timed from `start` and no longer
//! waits for the handshake; a connect after the start is refused by name.

use ccsim_scenario::{build, parse, run_built, FlowSummary};

/// Two 10 KB transfers written at 0.5 s on an idle 1 Gb/s link: one connected at `connect`, one
/// connecting when it writes.
fn scenario(connect: &str) -> String {
    format!(
        r#"
[run]
duration = "1s"
[topology]
type = "star"
hosts = ["a", "b"]
rate = "1Gbps"
delay = "25us"
[[flows]]
name = "early"
src = "a"
dst = "b"
kind = "transfer"
size = "10KB"
start = "0.5s"
connect = "{connect}"
[[flows]]
name = "late"
src = "a"
dst = "b"
kind = "transfer"
size = "10KB"
start = "0.5s"
"#
    )
}

/// The flows' summaries of a run.
fn flows(text: &str) -> Vec<FlowSummary> {
    let s = parse(text, "test.toml").unwrap();
    run_built(build(&s).unwrap(), |_, _| {}).summary.flows
}

#[test]
fn an_early_connection_takes_the_handshake_out_of_the_transfer_time() {
    let f = flows(&scenario("0.1s"));
    let (early, late) = (&f[0], &f[1]);
    assert_eq!((early.name.as_str(), late.name.as_str()), ("early", "late"));
    let est = early.established_s.unwrap();
    assert!((0.1..0.2).contains(&est), "the early flow connected at 0.1 s, established at {est} s");
    assert!(late.established_s.unwrap() > 0.5, "the other connects when it writes");
    let (te, tl) = (early.completion_s.unwrap(), late.completion_s.unwrap());
    // Both send their 10 KB in the first flight (initial window 10); the late one first spends
    // a round trip on the handshake (about 0.2 ms here: 4 hops of 25 us plus serialisation).
    let handshake = late.established_s.unwrap() - 0.5;
    assert!(handshake > 0.0001 && handshake < 0.001, "handshake took {handshake} s");
    assert!((tl - te - handshake).abs() < 0.00005, "late {tl} s = early {te} s + handshake {handshake} s");
    assert_eq!(early.bytes_acked, 10_000);
}

#[test]
fn a_connect_at_the_start_is_the_default_and_after_it_is_refused() {
    let run = |text: &str| flows(text).iter().map(|f| (f.established_s, f.completion_s)).collect::<Vec<_>>();
    let without = scenario("0.5s").replace("connect = \"0.5s\"\n", "");
    assert!(!without.contains("connect"));
    assert_eq!(run(&scenario("0.5s")), run(&without), "connect = start is the default");
    let s = parse(&scenario("0.6s"), "test.toml").unwrap();
    let e = build(&s).err().expect("a connect after the start is refused");
    assert_eq!(e.field, "flows[0].connect");
    assert!(e.msg.contains("must not be later than start"), "{}", e.msg);
}
