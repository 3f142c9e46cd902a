//! Express ports: a packet that reaches a switch port fed by one link alone is queued there
//! when it leaves that link's sender, without an arrival event at the switch. The results must
//! be exactly those of the run with an event at every hop — drops, marks, queueing, every
//! flow's counters — with fewer events.

use ccsim_scenario::{build, parse, run_built};

/// Three senders on the left, one receiver on the right; the right switch's port towards the
/// receiver (1 Gb/s, fed only by the 10 Gb/s link between the switches) is the bottleneck. The
/// left switch's port towards the right, fed by three hosts, is the one monitored (a monitored
/// port is never express).
fn dumbbell(cc: &str, queue: &str, jitter: &str) -> String {
    format!(
        r#"
[run]
duration = "0.3s"
[tcp]
cc = "{cc}"
[queues.q]
classes = [{queue}]
[topology]
type = "dumbbell"
left = ["a1", "a2", "a3"]
right = ["b"]
rate = "1Gbps"
delay = "10us"
bottleneck_rate = "10Gbps"
host_jitter = "{jitter}"
switch_queue = "q"
[[flows]]
name = "f1"
src = "a1"
dst = "b"
[[flows]]
name = "f2"
src = "a2"
dst = "b"
start = "1ms"
[[flows]]
name = "f3"
src = "a3"
dst = "b"
start = "2ms"
[record]
queues = ["s1->s2"]
interval = "1ms"
"#
    )
}

/// Two DCTCP senders into one receiver at 10 Gb/s, the bottleneck recorded (not express).
fn star() -> String {
    r#"
[run]
duration = "0.1s"
[tcp]
cc = "dctcp"
[queues.q]
classes = [{ name = "d", limit = 1000, aqm = "step", k = 65 }]
[topology]
type = "star"
hosts = ["a", "b", "r"]
rate = "10Gbps"
delay = "24us"
host_jitter = "0us"
switch_queue = "q"
[[flows]]
name = "a"
src = "a"
dst = "r"
[[flows]]
name = "b"
src = "b"
dst = "r"
[record]
queues = ["s->r"]
interval = "1ms"
"#
    .to_string()
}

/// The run's summary as JSON without its event count, and the event count.
fn run(text: &str, express: bool) -> (String, u64) {
    let mut b = build(&parse(text, "express.toml").unwrap()).unwrap();
    b.cfg.express = express;
    let o = run_built(b, |_, _| {});
    let mut s = o.summary;
    let events = s.events;
    s.events = 0;
    (serde_json::to_string(&s).unwrap(), events)
}

fn same_results_fewer_events(text: &str) {
    let (with, ev_with) = run(text, true);
    let (without, ev_without) = run(text, false);
    assert_eq!(with, without, "express ports changed the results");
    assert!(ev_with < ev_without, "express ports saved no events: {ev_with} vs {ev_without}");
}

#[test]
fn dctcp_marking_at_an_express_bottleneck() {
    let text = dumbbell("dctcp", r#"{ name = "d", limit = 200, aqm = "step", k = 20 }"#, "2us");
    same_results_fewer_events(&text);
    // The bottleneck marked and the senders reacted: this run tests marking.
    let o = run_built(build(&parse(&text, "express.toml").unwrap()).unwrap(), |_, _| {});
    let cwr: u64 = o.summary.flows.iter().map(|f| f.cwr_events).sum();
    assert!(cwr > 0, "no ECN reductions");
}

#[test]
fn cubic_drops_at_an_express_bottleneck() {
    let text = dumbbell("cubic", r#"{ name = "t", limit = 30 }"#, "2us");
    same_results_fewer_events(&text);
    // The bottleneck dropped packets and the flows recovered them: this run tests drops.
    let o = run_built(build(&parse(&text, "express.toml").unwrap()).unwrap(), |_, _| {});
    let retrans: u64 = o.summary.flows.iter().map(|f| f.retransmits).sum();
    assert!(retrans > 0, "no losses at the bottleneck");
}

#[test]
fn star_acks_skip_the_switch() {
    same_results_fewer_events(&star());
}

/// A run stopped early (`ccsim ss --at`) sees the same ports and sockets either way: no packet
/// is taken ahead past the stop.
#[test]
fn a_run_stopped_early_sees_the_same_state() {
    use ccsim_engine::SimTime;
    use ccsim_net::Sim;
    let text = dumbbell("cubic", r#"{ name = "t", limit = 30 }"#, "2us");
    let sim = |express: bool| {
        let mut b = build(&parse(&text, "express.toml").unwrap()).unwrap();
        b.cfg.express = express;
        let ports = 2 * b.topo.links.len();
        let mut s = Sim::new(b.cfg, b.topo, b.flows, b.pings).unwrap();
        s.run_until(SimTime::from_us(37_123), |_| {});
        let tx: Vec<_> = (0..ports).map(|p| s.port_counters(ccsim_net::PortId(p as u32))).collect();
        let tcp: Vec<_> = (0..3).map(|f| format!("{:?}", s.tcp_stats(f))).collect();
        (tx, tcp, s.run_stats().events)
    };
    let (tx1, tcp1, ev1) = sim(true);
    let (tx0, tcp0, ev0) = sim(false);
    assert_eq!(tx1, tx0);
    assert_eq!(tcp1, tcp0);
    assert!(ev1 < ev0, "{ev1} vs {ev0}");
}
