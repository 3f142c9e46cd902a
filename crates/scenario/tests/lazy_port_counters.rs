//! A lazy switch port (one class, marking at enqueue) keeps only the packets and bytes waiting in
//! its class and counts what it admitted in its own line; the packets its class took and sent,
//! their bytes, and the port's packets and bytes sent follow from those. A port with a second, unused class runs with transmission
//! events and counts each of them directly. Both must report the same counters for the same
//! run, drops and marks included.

use ccsim_scenario::{build, parse, run_built};

fn scenario(sw_classes: &str) -> String {
    format!(
        r#"
[run]
duration = "0.6s"
[tcp]
cc = "dctcp"
[queues.sw]
classes = [{sw_classes}]
[topology]
type = "dumbbell"
left = ["a", "b", "c"]
right = ["d"]
rate = "1Gbps"
bottleneck_rate = "1Gbps"
delay = "100us"
switch_queue = "sw"
[[flows]]
name = "f1"
src = "a"
dst = "d"
[[flows]]
name = "f2"
src = "b"
dst = "d"
start = "0.1s"
[[flows]]
name = "f3"
src = "c"
dst = "d"
cc = "cubic"
start = "0.2s"
[record]
queues = ["s1->s2"]
"#
    )
}

#[test]
fn a_lazy_port_derives_the_counters_a_per_packet_port_keeps() {
    // A small limit so that the CUBIC flow's bursts are dropped, K so that DCTCP's are marked.
    let class = r#"{ name = "q", limit = 40, aqm = "step", k = 12 }"#;
    let lazy = run_built(build(&parse(&scenario(class), "lazy.toml").unwrap()).unwrap(), |_, _| {});
    let eager_classes = format!(r#"{class}, {{ name = "x", limit = 10, dscp = [7] }}"#);
    let eager = run_built(build(&parse(&scenario(&eager_classes), "eager.toml").unwrap()).unwrap(), |_, _| {});
    let (l, e) = (&lazy.records.ports[0], &eager.records.ports[0]);
    assert_eq!(l.classes[0].stats, e.classes[0].stats, "class counters");
    // Transmissions begun: the packets still waiting at the end are not sent (a lazy port has
    // booked them).
    assert_eq!(l.tx, e.tx, "port counters");
    // The time spent transmitting, up to the end (not the rest of the transmission under way).
    assert_eq!(l.utilisation, e.utilisation, "utilisation");
    let s = l.classes[0].stats;
    assert!(s.drops > 0 && s.marks > 0, "the run exercises drops and marks: {s:?}");
    assert!(s.enqueued > s.dequeued && s.dequeued > 0, "packets still wait at the end: {s:?}");
    assert!(lazy.summary.events < eager.summary.events, "the first port is the lazy one");
}
