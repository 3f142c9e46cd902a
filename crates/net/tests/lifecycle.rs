//! Connection lifecycle: 200,000 short transfers, one after another between two hosts, each
//! opening its own connection (handshake, data, FIN both ways) from an ephemeral port; the
//! simulator's memory stays flat in the number of flows. Alone in its test binary, so that the
//! process's peak RSS is this test's.

use ccsim_cc::CcKind;
use ccsim_engine::SimTime;
use ccsim_net::*;
use ccsim_tcp::TcpConfig;
use std::sync::{Arc, Mutex};

/// One transfer at a time: the next arrives when the previous one's data is acknowledged.
struct OneAfterAnother {
    next: Option<SimTime>,
    left: u64,
    src: NodeId,
    dst: NodeId,
    tcp: Arc<TcpConfig>,
    bytes: u64,
}

impl Traffic for OneAfterAnother {
    fn next_arrival(&self) -> Option<SimTime> {
        self.next
    }
    fn arrive(&mut self, now: SimTime, flows: &mut Vec<FlowSpec>) {
        self.next = None;
        self.left -= 1;
        flows.push(FlowSpec {
            name: String::new(),
            src: self.src,
            dst: self.dst,
            start: now,
            connect: None,
            kind: FlowKind::Transfer { bytes: self.bytes },
            client: self.tcp.clone(),
            server: self.tcp.clone(),
            lifecycle: Lifecycle::CloseWhenDone,
            dscp: 0,
            mark: 0,
            src_port: 0,
            dst_port: 5001,
            group: 0,
        });
    }
    fn completed(&mut self, now: SimTime, _flow: &FlowDone) {
        if self.left > 0 {
            self.next = Some(now);
        }
    }
}

/// What the sink saw.
#[derive(Default)]
struct Seen {
    flows: u64,
    completed: u64,
    ids_in_order: bool,
    last_id: Option<u64>,
    max_fct: SimTime,
    min_fct: Option<SimTime>,
    /// Every completed flow took at least its ideal time.
    at_least_ideal: bool,
}

fn run(n: u64) -> (RunStats, Seen) {
    let mut t = Topology::new();
    let a = t.add_host("a").unwrap();
    let b = t.add_host("b").unwrap();
    let s = t.add_switch("s").unwrap();
    for h in [a, b] {
        t.add_link(LinkSpec {
            a: h,
            b: s,
            rate_bps: 10_000_000_000,
            delay: SimTime::from_us(5),
            loss: 0.0,
            queue_ab: QueueSpec::drop_tail(1000),
            queue_ba: QueueSpec::drop_tail(1000),
        });
    }
    let cfg = SimConfig {
        seed: 7,
        duration: SimTime::from_secs(100),
        sample_interval: None,
        stats_from: SimTime::ZERO,
        monitor: vec![],
        series: false,
        l2_overhead: 0,
        host_jitter: HostJitter::NONE,
        rx_coalesce: SimTime::ZERO,
        gro: false,
        express: true,
        event_list: Default::default(),
        shared_buffers: vec![],
    };
    let tcp = Arc::new(TcpConfig { cc: CcKind::Cubic, ..TcpConfig::default() });
    let mut sim = Sim::new(cfg, t, vec![], vec![]).unwrap();
    sim.add_traffic(Box::new(OneAfterAnother { next: Some(SimTime::ZERO), left: n, src: a, dst: b, tcp, bytes: 3000 }));
    let seen = Arc::new(Mutex::new(Seen { ids_in_order: true, at_least_ideal: true, ..Seen::default() }));
    let sink = seen.clone();
    sim.set_flow_sink(Box::new(move |f: FlowDone| {
        let mut s = sink.lock().unwrap();
        s.flows += 1;
        if let Some(c) = f.completion {
            s.completed += 1;
            s.max_fct = s.max_fct.max(c - f.start);
            s.at_least_ideal &= f.ideal.is_some_and(|i| c - f.start >= i);
            s.min_fct = Some(s.min_fct.map_or(c - f.start, |m| m.min(c - f.start)));
        }
        s.ids_in_order &= s.last_id.is_none_or(|l| f.id == l + 1);
        s.last_id = Some(f.id);
    }));
    sim.run();
    let stats = sim.into_records().stats;
    let seen = Arc::try_unwrap(seen).ok().expect("the sink is dropped with the network").into_inner().unwrap();
    (stats, seen)
}

/// Peak resident set of this process (`VmHWM`), bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

#[test]
fn two_hundred_thousand_short_connections_leave_memory_flat() {
    let (small, seen_small) = run(20_000);
    let after_small = peak_rss();
    let (big, seen) = run(200_000);
    let after_big = peak_rss();

    // Every flow connected, completed, closed both ways and was released.
    assert_eq!(seen.flows, 200_000);
    assert_eq!(seen.completed, 200_000);
    assert!(seen.ids_in_order, "each flow is released before the next is");
    assert!(seen.at_least_ideal, "slowdown >= 1 for every flow");
    assert_eq!(big.flows_opened, 200_000);
    assert_eq!(big.flows_released, 200_000);
    assert_eq!(big.connect_failures, 0, "ports come back: 200,000 flows from a range of 28,232");
    // A flow of 3000 bytes on an idle 10 Gb/s path: handshake and data in a few RTTs.
    // The handshake's round trip, then the data's: at least two base RTTs of 20 us.
    assert!(seen.min_fct.unwrap() >= SimTime::from_us(40), "{:?}", seen.min_fct);
    assert!(seen.max_fct < SimTime::from_us(200), "{:?}", seen.max_fct);
    assert_eq!(seen_small.flows, 20_000);

    // The structure: never more than two connections open (the next flow starts while the
    // previous one's FINs are under way), however many flows ran.
    assert!(big.conns_high_water <= 2, "{}", big.conns_high_water);
    assert_eq!(big.conns_high_water, small.conns_high_water);
    assert_eq!(big.pool_high_water, small.pool_high_water);
    // And the process: ten times the flows adds less than 2 MB to the peak.
    if let (Some(s), Some(b)) = (after_small, after_big) {
        eprintln!("peak RSS after 20,000 flows {} KiB, after 200,000 {} KiB", s / 1024, b / 1024);
        assert!(b < s + 2 * 1024 * 1024, "peak RSS grew from {s} to {b} bytes");
    }
}
