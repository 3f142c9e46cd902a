//! `topology.rx_coalesce` and `topology.gro`: a receiving host that hands packets up in
//! interrupt-coalesced batches, merged by GRO, sends one ACK per merged skb instead of one per
//! two segments, while TCP still counts every segment and the flow keeps the link full.
//! Out-of-range values are named by their field.

use ccsim_scenario::{build, parse, run_built};

/// One CUBIC flow at 10 Gb/s across a switch.
fn one_flow(rx: &str, gro: bool) -> String {
    format!(
        r#"
[run]
duration = "0.3s"
[topology]
type = "star"
hosts = ["a", "b"]
rate = "10Gbps"
delay = "5us"
host_jitter = "0us"
rx_coalesce = "{rx}"
gro = {gro}
[[flows]]
name = "f"
src = "a"
dst = "b"
"#
    )
}

/// The receiver's data segments in and segments out (ACKs), the sender's goodput (Mb/s) and
/// the run's event count.
fn run(text: &str) -> (u64, u64, f64, u64) {
    let o = run_built(build(&parse(text, "gro.toml").unwrap()).unwrap(), |_, _| {});
    let server = o.records.flows[0].sockets.server;
    (server.data_segs_in, server.segs_out, o.summary.flows[0].goodput_mbps, o.summary.events)
}

#[test]
fn gro_merges_segments_into_fewer_acks_and_counts_every_segment() {
    let (segs0, acks0, g0, ev0) = run(&one_flow("0us", false));
    let (segs1, acks1, g1, ev1) = run(&one_flow("20us", true));
    // Without GRO: an ACK for every second full segment.
    assert!((acks0 as f64) > 0.45 * segs0 as f64, "{acks0} ACKs for {segs0} segments");
    // With GRO: one ACK per skb of several segments.
    assert!((acks1 as f64) < 0.3 * segs1 as f64, "{acks1} ACKs for {segs1} segments");
    assert!((g1 - g0).abs() < 0.02 * g0, "goodput {g0} vs {g1}");
    assert!(ev1 < ev0, "fewer ACKs, fewer events: {ev0} vs {ev1}");
    // Coalescing alone delays packets but merges nothing: still an ACK per two segments.
    let (segs2, acks2, _, _) = run(&one_flow("20us", false));
    assert!((acks2 as f64) > 0.45 * segs2 as f64, "{acks2} ACKs for {segs2} segments");
}

#[test]
fn same_seed_same_gro() {
    assert_eq!(run(&one_flow("30us", true)), run(&one_flow("30us", true)));
}

#[test]
fn rx_coalesce_out_of_range_is_named() {
    let s = parse(&one_flow("2ms", true), "gro.toml").unwrap();
    let Err(e) = build(&s) else { panic!("rx_coalesce = 2ms must be refused") };
    assert_eq!(e.field, "topology.rx_coalesce");
    assert!(e.msg.contains("1ms"), "{}", e.msg);
}
