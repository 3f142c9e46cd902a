//! `topology.host_jitter`: host timing noise breaks the drop-tail phase lock-out that perfectly
//! periodic senders fall into (Floyd & Jacobson), so two Reno flows share a 100 Mb/s port as they
//! do on the Linux kernel — at 100 Mb/s and, with the default scaled to the packet time, at
//! 10 Gb/s; out-of-range values are named by their field.

use ccsim_scenario::{build, parse, run_built};

/// The Mininet-HiFi experiment with Reno: two senders into one 425-packet drop-tail port.
fn reno(jitter: &str, seed: u64) -> String {
    reno_at("100Mbps", "62us", "3s", "1s", jitter, seed)
}

/// The same experiment at another rate, its delay and times scaled with the packet time.
fn reno_at(rate: &str, delay: &str, duration: &str, warmup: &str, jitter: &str, seed: u64) -> String {
    format!(
        r#"
[run]
seed = {seed}
duration = "{duration}"
[tcp]
cc = "reno"
[queues.deep]
classes = [{{ name = "be", limit = 425 }}]
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "{rate}"
delay = "{delay}"
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
warmup = "{warmup}"
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

/// The default, "auto", is the time of 25 bytes on the host's link: exactly 2 µs at 100 Mb/s,
/// so every 100 Mb/s experiment runs as with "2us".
#[test]
fn auto_is_two_microseconds_at_100_mbps() {
    assert_eq!(run(&reno("auto", 3)), run(&reno("2us", 3)));
    let default = reno("2us", 3).replace("host_jitter = \"2us\"\n", "");
    assert_eq!(run(&default), run(&reno("2us", 3)));
}

/// At 10 Gb/s the default's 20 ns still breaks the lock-out: what matters is the noise against
/// a packet time (1.2 µs here), and 20 ns is the share 2 µs is of a 100 Mb/s packet time.
#[test]
fn auto_breaks_the_lock_out_at_10_gbps() {
    let at_10g = |jitter: &str, seed| reno_at("10Gbps", "620ns", "300ms", "100ms", jitter, seed);
    let (g, _) = run(&at_10g("0us", 1));
    let (lo, hi) = (g[0].min(g[1]), g[0].max(g[1]));
    assert!(lo < 0.05 * hi, "without jitter one flow should be locked out at 10 Gb/s: {g:?}");
    for seed in [1, 2] {
        let (g, _) = run(&at_10g("auto", seed));
        let (lo, hi) = (g[0].min(g[1]), g[0].max(g[1]));
        assert!(lo > 0.6 * hi, "seed {seed}: with 20 ns of host jitter both flows share: {g:?}");
        assert!(g[0] + g[1] > 9000.0, "seed {seed}: the port stays full: {g:?}");
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
    assert!(e.msg.contains("1ms") && e.msg.contains("auto"), "{}", e.msg);
    let Err(e) = build(&parse(&reno("sometimes", 1), "jitter.toml").unwrap()) else {
        panic!("host_jitter = \"sometimes\" must be refused")
    };
    assert_eq!(e.field, "topology.host_jitter");
    let e = parse(&reno("-1us", 1), "jitter.toml")
        .err()
        .map(|e| e.field)
        .or_else(|| build(&parse(&reno("-1us", 1), "jitter.toml").unwrap()).err().map(|e| e.field));
    assert_eq!(e.as_deref(), Some("topology.host_jitter"));
}
