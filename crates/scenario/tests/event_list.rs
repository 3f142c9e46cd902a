//! The two event lists — a binary heap for small networks, a timing wheel for large ones —
//! must give the same run, event for event: the same order, so the same results and the same
//! number of events.

use ccsim_engine::SimTime;
use ccsim_net::{EventList, Sim};
use ccsim_scenario::{build, parse, run_built};

/// A k=4 fat tree (96 ports: the wheel by size), permutation traffic; `cc` and the switch
/// queue vary so that marks, drops and timers all happen.
fn fat_tree(cc: &str, queue: &str) -> String {
    format!(
        r#"
[run]
duration = "20ms"
[tcp]
cc = "{cc}"
[queues.q]
classes = [{queue}]
[topology]
type = "fattree"
k = 4
rate = "10Gbps"
delay = "5us"
switch_queue = "q"
[traffic]
pattern = "permutation"
[record]
queues = ["e0_0->h0_0_0"]
interval = "100us"
series = true
"#
    )
}

fn run(text: &str, list: EventList) -> (String, EventList) {
    let mut b = build(&parse(text, "event_list.toml").unwrap()).unwrap();
    b.cfg.event_list = list;
    let o = run_built(b, |_, _| {});
    (serde_json::to_string(&o.summary).unwrap(), o.records.event_list)
}

fn same_run(text: &str) {
    let (by_size, used) = run(text, EventList::BySize);
    assert_eq!(used, EventList::Wheel, "a network of 64 ports or more");
    let (heap, used) = run(text, EventList::Heap);
    assert_eq!(used, EventList::Heap);
    assert_eq!(by_size, heap, "the wheel and the heap gave different runs");
}

#[test]
fn dctcp_fat_tree_same_on_both_lists() {
    let text = fat_tree("dctcp", r#"{ name = "d", limit = 100, aqm = "step", k = 20 }"#);
    same_run(&text);
    let o = run_built(build(&parse(&text, "event_list.toml").unwrap()).unwrap(), |_, _| {});
    let cwr: u64 = o.summary.flows.iter().map(|f| f.cwr_events).sum();
    assert!(cwr > 0, "no ECN reductions: this run should test marking");
}

#[test]
fn cubic_fat_tree_with_drops_same_on_both_lists() {
    let text = fat_tree("cubic", r#"{ name = "t", limit = 8 }"#);
    same_run(&text);
    let o = run_built(build(&parse(&text, "event_list.toml").unwrap()).unwrap(), |_, _| {});
    let retrans: u64 = o.summary.flows.iter().map(|f| f.retransmits).sum();
    assert!(retrans > 0, "no losses: this run should test drops and recovery");
}

/// A run stopped part-way (as `ccsim ss --at` does) and resumed sees the same state on both
/// lists: a refused pop moves nothing.
#[test]
fn a_run_stopped_and_resumed_is_the_same() {
    let text = fat_tree("dctcp", r#"{ name = "d", limit = 100, aqm = "step", k = 20 }"#);
    let state = |list: EventList| {
        let mut b = build(&parse(&text, "event_list.toml").unwrap()).unwrap();
        b.cfg.event_list = list;
        let flows = b.flows.len();
        let mut s = Sim::new(b.cfg, b.topo, b.flows, b.pings).unwrap();
        let mut seen = Vec::new();
        for stop in [3_333_333u64, 3_333_334, 9_000_001, 20_000_000] {
            s.run_until(SimTime::from_ns(stop), |_| {});
            seen.push((
                s.now(),
                s.run_stats().events,
                (0..flows).map(|f| format!("{:?}", s.tcp_stats(f))).collect::<Vec<_>>(),
            ));
        }
        seen
    };
    assert_eq!(state(EventList::Wheel), state(EventList::Heap));
}

/// A small network takes the heap by size.
#[test]
fn a_star_takes_the_heap() {
    let text = r#"
[run]
duration = "1ms"
[topology]
type = "star"
hosts = ["a", "r"]
rate = "10Gbps"
delay = "5us"
[[flows]]
name = "a"
src = "a"
dst = "r"
"#;
    assert_eq!(run(text, EventList::BySize).1, EventList::Heap);
}

/// A 40-to-1 incast star (82 ports: the wheel by size) with a small drop-tail buffer, so that
/// timeouts fire, plus pings and queue sampling: every kind of event, on both lists.
#[test]
fn incast_star_with_timeouts_pings_and_sampling_same_on_both_lists() {
    let hosts: Vec<String> = (0..40).map(|i| format!("\"h{i}\"")).chain(["\"r\"".to_string()]).collect();
    let mut text = format!(
        r#"
[run]
duration = "300ms"
[tcp]
cc = "cubic"
rto_min = "5ms"
[queues.q]
classes = [{{ name = "t", limit = 20 }}]
[topology]
type = "star"
hosts = [{}]
rate = "10Gbps"
delay = "2us"
switch_queue = "q"
[[pings]]
name = "p"
src = "h0"
dst = "r"
interval = "1ms"
[record]
queues = ["s->r"]
interval = "50us"
series = true
"#,
        hosts.join(", ")
    );
    for i in 0..40 {
        text.push_str(&format!("[[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"r\"\nstart = \"{}us\"\n", i * 7));
    }
    same_run(&text);
    let o = run_built(build(&parse(&text, "event_list.toml").unwrap()).unwrap(), |_, _| {});
    let rto: u64 = o.summary.flows.iter().map(|f| f.rto_count).sum();
    assert!(rto > 0, "no timeouts: this run should test the RTO timer");
}
