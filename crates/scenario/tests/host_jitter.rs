//! `topology.host_jitter`: host timing noise breaks the drop-tail phase lock-out that perfectly
//! periodic senders fall into (Floyd & Jacobson), so two Reno flows share a 100 Mb/s port as they
//! do on the Linux kernel; out-of-range values are named by their field.

use ccsim_scenario::{build, parse, run_built};

/// The Mininet-HiFi experiment with Reno: two senders into one 425-packet drop-tail port.
fn reno(jitter: &str, seed: u64) -> String {
    format!(
        r#"
[run]
seed = {seed}
duration = "3s"
[tcp]
cc = "reno"
[queues.deep]
classes = [{{ name = "be", limit = 425 }}]
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "100Mbps"
delay = "62us"
switch_queue = "deep"
host_jitter = "{jitter}"
[[flows]]
name = "a"
src = "a"
dst = "c"
[[flows]]
name = "b"
src = "b"
dst = "c"
[record]
queues = ["s->c"]
warmup = "1s"
"#
    )
}

/// Goodputs of the two flows (Mb/s) and their retransmissions.
fn run(text: &str) -> (Vec<f64>, u64) {
    let b = build(&parse(text, "jitter.toml").unwrap()).unwrap();
    let o = run_built(b, |_, _| {});
    let g = o.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    (g, o.summary.flows.iter().map(|f| f.retransmits).sum())
}

#[test]
fn periodic_hosts_lock_one_reno_flow_out_and_jitter_lets_both_share() {
    for seed in [1, 2] {
        let (g, _) = run(&reno("0us", seed));
        let (lo, hi) = (g[0].min(g[1]), g[0].max(g[1]));
        assert!(lo < 0.05 * hi, "seed {seed}: without jitter one flow should be locked out: {g:?}");

        let (g, retrans) = run(&reno("2us", seed));
        let (lo, hi) = (g[0].min(g[1]), g[0].max(g[1]));
        assert!(lo > 0.6 * hi, "seed {seed}: with 2 µs of host jitter both flows share: {g:?}");
        assert!(g[0] + g[1] > 90.0, "seed {seed}: the port stays full: {g:?}");
        // Both flows overshoot in slow start and lose a window's worth, as on the kernel.
        assert!(retrans > 100, "seed {seed}: {retrans} retransmissions");
    }
}

#[test]
fn same_seed_same_jitter() {
    assert_eq!(run(&reno("2us", 7)), run(&reno("2us", 7)));
}

#[test]
fn host_jitter_out_of_range_is_named() {
    let s = parse(&reno("2ms", 1), "jitter.toml").unwrap();
    let Err(e) = build(&s) else { panic!("host_jitter = 2ms must be refused") };
    assert_eq!(e.field, "topology.host_jitter");
    assert!(e.msg.contains("1ms"), "{}", e.msg);
    let e = parse(&reno("-1us", 1), "jitter.toml")
        .err()
        .map(|e| e.field)
        .or_else(|| build(&parse(&reno("-1us", 1), "jitter.toml").unwrap()).err().map(|e| e.field));
    assert_eq!(e.as_deref(), Some("topology.host_jitter"));
}
