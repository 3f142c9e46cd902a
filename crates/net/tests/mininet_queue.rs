//! End-to-end: the Mininet-HiFi DCTCP experiment in miniature (A, B → switch → C at 100 Mb/s).

use ccsim_cc::CcKind;
use ccsim_engine::SimTime;
use ccsim_net::*;
use ccsim_tcp::TcpConfig;

fn run(cc: CcKind, k: Option<u64>, secs: u64) -> (Vec<u32>, f64, Vec<FlowRecord>) {
    let mut t = Topology::new();
    let a = t.add_host("a").unwrap();
    let b = t.add_host("b").unwrap();
    let c = t.add_host("c").unwrap();
    let s = t.add_switch("s").unwrap();
    let rate = 100_000_000;
    let delay = SimTime::from_us(62); // 4 hops x 62 us + serialisation ~ 0.5 ms RTT
    let sw_queue = |k: Option<u64>| QueueSpec {
        classes: vec![ClassSpec {
            name: "default".into(),
            dscp: vec![],
            limit: QueueLimit { value: 425, unit: Unit::Packets },
            aqm: match k {
                Some(k) => Aqm::Step { k, unit: Unit::Packets, at: EcnMarkPoint::Enqueue, non_ect: NonEctPolicy::Drop },
                None => Aqm::DropTail,
            },
        }],
        scheduler: Scheduler::StrictPriority,
        fq: None,
    };
    for h in [a, b] {
        t.add_link(LinkSpec {
            a: h,
            b: s,
            rate_bps: rate,
            delay,
            loss: 0.0,
            queue_ab: QueueSpec::drop_tail(1000),
            queue_ba: sw_queue(k),
        });
    }
    let bottleneck = t.add_link(LinkSpec {
        a: s,
        b: c,
        rate_bps: rate,
        delay,
        loss: 0.0,
        queue_ab: sw_queue(k),
        queue_ba: QueueSpec::drop_tail(1000),
    });
    let tcp = TcpConfig { cc, ..TcpConfig::default() };
    let flows = [a, b]
        .iter()
        .enumerate()
        .map(|(i, &h)| FlowSpec {
            name: format!("f{i}"),
            src: h,
            dst: c,
            start: SimTime::from_ms(i as u64),
            connect: None,
            kind: FlowKind::Bulk { stop: None },
            client: tcp.clone().into(),
            server: tcp.clone().into(),
            lifecycle: Default::default(),
            dscp: 0,
            mark: 0,
            src_port: 40000 + i as u16,
            dst_port: 5001,
            group: 0,
        })
        .collect();
    let cfg = SimConfig {
        seed: 1,
        duration: SimTime::from_secs(secs),
        sample_interval: Some(SimTime::from_us(500)),
        monitor: vec![bottleneck],
        stats_from: SimTime::from_ms(secs * 1000 / 3),
        series: true,
        l2_overhead: 0,
        host_jitter: HostJitter::NONE,
        rx_coalesce: SimTime::ZERO,
        gro: false,
        express: true,
        event_list: Default::default(),
        shared_buffers: vec![],
    };
    let mut sim = Sim::new(cfg, t, flows, vec![]).unwrap();
    sim.run();
    let mut rec = sim.into_records();
    let port = rec.ports.remove(0);
    // The statistics count exactly the samples from the warm-up's end on: the series' packets at
    // t >= stats_from, value for value.
    let from = SimTime::from_ms(secs * 1000 / 3);
    let steady: Vec<u32> = port.series.iter().filter(|s| s.t >= from).map(|s| s.packets).collect();
    let mut counts = std::collections::BTreeMap::new();
    for &v in &steady {
        *counts.entry(v).or_insert(0u64) += 1;
    }
    assert_eq!(port.occupancy.counts().collect::<Vec<_>>(), counts.into_iter().collect::<Vec<_>>());
    (steady, port.utilisation, rec.flows)
}

fn pct(v: &[u32], p: f64) -> u32 {
    let mut s = v.to_vec();
    s.sort();
    s[((p / 100.0 * s.len() as f64).ceil() as usize).max(1) - 1]
}

#[test]
fn dctcp_keeps_queue_near_k() {
    let (q, util, recs) = run(CcKind::Dctcp, Some(20), 3);
    let steady = &q[..];
    eprintln!(
        "dctcp p50 {} p99 {} max {} util {util:.3} {:?}",
        pct(steady, 50.0),
        pct(steady, 99.0),
        pct(steady, 100.0),
        recs
    );
    assert!((12..=25).contains(&pct(steady, 50.0)));
    assert!(pct(steady, 99.0) <= 35);
    assert!(util > 0.95);
}

#[test]
fn reno_fills_the_buffer() {
    let (q, util, recs) = run(CcKind::Reno, None, 3);
    let steady = &q[..];
    eprintln!("reno p50 {} p99 {} util {util:.3} {:?}", pct(steady, 50.0), pct(steady, 99.0), recs);
    assert!(pct(steady, 50.0) >= 150);
}
