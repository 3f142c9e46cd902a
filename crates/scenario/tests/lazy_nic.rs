//! Host NICs with one drop-tail class are "lazy": departures are computed when a packet is queued
//! and TCP Small Queues budget comes back without per-packet events (a wake-up only while a socket
//! is throttled). A NIC with two classes takes the per-packet path. Both must give the same run,
//! also when TSQ throttles the senders (a 1 Gb/s NIC under a window far above the BDP).

use ccsim_scenario::{build, parse, run_built};

fn scenario(nic_classes: &str, cc: &str) -> String {
    format!(
        r#"
[run]
duration = "2s"
[tcp]
cc = "{cc}"
[queues.nic]
classes = [{nic_classes}]
[queues.sw]
classes = [{{ limit = 2000 }}]
[topology]
type = "dumbbell"
left = ["a", "b"]
right = ["c"]
rate = "1Gbps"
bottleneck_rate = "500Mbps"
delay = "500us"
host_queue = "nic"
switch_queue = "sw"
[[flows]]
name = "f1"
src = "a"
dst = "c"
[[flows]]
name = "f2"
src = "b"
dst = "c"
start = "0.3s"
[[pings]]
name = "p"
src = "a"
dst = "c"
interval = "10ms"
[record]
queues = ["s1->s2"]
warmup = "0.5s"
"#
    )
}

fn run(text: &str) -> (String, u64) {
    let b = build(&parse(text, "nic.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let o = run_built(b, |_, _| {});
    let events = o.summary.events;
    let mut s = o.summary.clone();
    s.events = 0;
    (serde_json::to_string(&s).unwrap(), events)
}

#[test]
fn lazy_and_per_packet_host_nics_give_the_same_run() {
    for cc in ["cubic", "bbr"] {
        let (lazy, lazy_events) = run(&scenario(r#"{ limit = 1000 }"#, cc));
        // A second class nobody uses: the NIC is no longer lazy.
        let (eager, eager_events) = run(&scenario(r#"{ limit = 1000 }, { name = "x", limit = 10, dscp = [7] }"#, cc));
        assert_eq!(lazy, eager, "{cc}: lazy and per-packet NICs disagree");
        assert!(lazy_events < eager_events, "{cc}: lazy {lazy_events} vs per-packet {eager_events} events");
    }
}
