//! TCP-NV at the endpoint: the BPF base RTT reaches NV through `TcpConfig::base_rtt_us`, and NV's
//! rate estimate works on the `ack_sample.in_flight` the endpoint fills (bytes delivered since the
//! acked packet was sent, as `tcp_clean_rtx_queue` computes it).
//!
//! Two endpoints over a pair of 1 Gb/s links with an unbounded FIFO at each sender: a data
//! segment takes 12 µs to serialise (1448 + 52 bytes), so the link holds
//! 1e9 · RTT / (8 · 1500) packets.

use ccsim_cc::{CcInfo, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpInfo};

const RATE_BPS: u64 = 1_000_000_000;

/// Endpoint `a` sends forever to `b`; `prop` is the one-way propagation delay.
struct Net {
    now: SimTime,
    prop: SimTime,
    a: Endpoint,
    b: Endpoint,
    /// (arrival, id, to_b, segment).
    links: Vec<(SimTime, u64, bool, Segment)>,
    next_id: u64,
    link_free: [SimTime; 2],
    /// Sender state after every ACK it processed.
    a_infos: Vec<(SimTime, TcpInfo)>,
}

impl Net {
    fn new(a_cfg: TcpConfig, prop: SimTime) -> Net {
        let b_cfg = TcpConfig { cc: CcKind::Cubic, ..TcpConfig::default() };
        let mut n = Net {
            now: SimTime::ZERO,
            prop,
            a: Endpoint::client(a_cfg, 1_000_000),
            b: Endpoint::listen(b_cfg, 7_000_000),
            links: Vec::new(),
            next_id: 0,
            link_free: [SimTime::ZERO; 2],
            a_infos: Vec::new(),
        };
        let mut out = Vec::new();
        n.a.write_forever(SimTime::ZERO, &mut out);
        n.a.connect(SimTime::ZERO, &mut out);
        n.emit(true, out);
        n
    }

    fn emit(&mut self, to_b: bool, out: Vec<Segment>) {
        let mut tsq_bytes = 0u64;
        for seg in out {
            let bytes = (seg.len + seg.header_len()) as u64;
            if to_b && seg.len > 0 {
                tsq_bytes += bytes;
            }
            let i = usize::from(!to_b);
            let departure = self.now.max(self.link_free[i]) + SimTime::tx_time(bytes, RATE_BPS);
            self.link_free[i] = departure;
            self.links.push((departure + self.prop, self.next_id, to_b, seg));
            self.next_id += 1;
        }
        if tsq_bytes > 0 {
            let mut more = Vec::new();
            self.a.tsq_release(self.now, tsq_bytes, &mut more);
            self.emit(true, more);
        }
    }

    fn run_until(&mut self, end: SimTime) {
        loop {
            let arrival = self.links.iter().enumerate().min_by_key(|(_, l)| (l.0, l.1)).map(|(i, l)| (l.0, i));
            let ta = self.a.next_deadline();
            let tb = self.b.next_deadline();
            let Some(t) = [arrival.map(|x| x.0), ta, tb].into_iter().flatten().min().filter(|&t| t <= end) else {
                break;
            };
            self.now = self.now.max(t);
            let mut out = Vec::new();
            if let Some((_, i)) = arrival.filter(|x| x.0 == t) {
                let (_, _, to_b, seg) = self.links.remove(i);
                if to_b {
                    self.b.on_segment(self.now, &seg, &mut out);
                } else {
                    self.a.on_segment(self.now, &seg, &mut out);
                    self.a_infos.push((self.now, self.a.tcp_info()));
                }
                self.emit(!to_b, out);
            } else if ta == Some(t) {
                self.a.on_timer(self.now, &mut out);
                self.emit(true, out);
            } else {
                self.b.on_timer(self.now, &mut out);
                self.emit(false, out);
            }
        }
    }

    /// Sender states from `from` on.
    fn infos_after(&self, from: SimTime) -> impl Iterator<Item = &TcpInfo> {
        self.a_infos.iter().filter(move |(t, _)| *t >= from).map(|(_, i)| i)
    }

    /// Goodput of the sender between two of its samples, in bit/s.
    fn goodput_bps(&self, from: SimTime) -> u64 {
        let first = self.a_infos.iter().find(|(t, _)| *t >= from).unwrap();
        let last = self.a_infos.last().unwrap();
        (last.1.bytes_acked - first.1.bytes_acked) * 8 * 1_000_000_000 / (last.0.ns() - first.0.ns())
    }
}

fn nv(base_rtt_us: Option<u32>) -> TcpConfig {
    TcpConfig { cc: CcKind::Nv, base_rtt_us, ..TcpConfig::default() }
}

fn vegas(info: &TcpInfo) -> (u32, u32) {
    match info.cc_info {
        CcInfo::Vegas { enabled: true, rtt, minrtt, .. } => (rtt, minrtt),
        ref other => panic!("expected tcpvegas_info from nv, got {other:?}"),
    }
}

/// 20 µs each way: the unloaded RTT is 40 µs plus 12 µs of data serialisation and the ACK's,
/// below 64 µs. Without a base RTT NV's min RTT is that measurement; with the sample program's
/// 80 µs it is raised to the lower bound 80 · 205 / 256 = 64 µs.
#[test]
fn base_rtt_from_tcp_config_bounds_nv_min_rtt() {
    let mut plain = Net::new(nv(None), SimTime::from_us(20));
    plain.run_until(SimTime::from_ms(20));
    let info = plain.a.tcp_info();
    assert_eq!(info.cc, "nv");
    let (_, minrtt) = vegas(&info);
    assert!((52..64).contains(&minrtt), "measured min RTT {minrtt} µs");

    let mut bounded = Net::new(nv(Some(80)), SimTime::from_us(20));
    bounded.run_until(SimTime::from_ms(20));
    let (_, minrtt) = vegas(&bounded.a.tcp_info());
    assert_eq!(minrtt, 64);
    assert!(bounded.a.tcp_info().bytes_acked > 1_000_000, "the transfer ran");
}

/// 500 µs each way: RTT ≈ 1 ms, 1e9 · 1.0125e-3 / 12 000 ≈ 84 packets on the path. NV's
/// cwnd_by_slope = rate · min_rtt / MSS is the path's packet count only if `in_flight` is in bytes
/// (in packets it would come out 1448 times smaller and hold cwnd at nv_pad ≈ 10 packets, 12 % of
/// the link). NV fills the link and keeps its standing queue near nv_pad (10) packets, 120 µs.
#[test]
fn nv_fills_the_link_with_about_nv_pad_packets_queued() {
    let mut net = Net::new(nv(None), SimTime::from_us(500));
    net.run_until(SimTime::from_ms(300));
    let from = SimTime::from_ms(150);
    let goodput = net.goodput_bps(from);
    // Goodput counts 1448 payload bytes of every 1500 on the wire: at most 965 Mb/s.
    assert!(goodput > 900_000_000, "goodput {goodput} b/s");
    // The data path's unloaded RTT: 1000 µs of propagation, 12 µs for the data segment, 0.5 µs
    // for the ACK. NV's min RTT is that (the handshake's 1000 µs is not an NV sample).
    let (_, nv_min) = vegas(&net.a.tcp_info());
    assert!((1_012..=1_013).contains(&nv_min), "nv min RTT {nv_min} µs");
    // cwnd within nv_pad (+ the nv_pad_buffer of slack before a decision fires) of the path's
    // 84-85 packets.
    let max_cwnd = net.infos_after(from).map(|i| i.snd_cwnd).max().unwrap();
    assert!(max_cwnd <= 85 + 10 + 2, "cwnd up to {max_cwnd}");
    // The smoothed RTT (of the first packet each delayed ACK covers, which waits one more
    // serialisation) stays within nv_pad + 1 packets of queueing, 11 * 12 µs, plus 12 µs.
    let max_srtt = net.infos_after(from).map(|i| i.rtt_us).max().unwrap();
    assert!(max_srtt <= nv_min + 12 * 12, "srtt up to {max_srtt} µs over a min of {nv_min} µs");
}

/// The same 1 ms path with the sample program's 80 µs base RTT: NV's min RTT is capped at 80 µs,
/// so cwnd_by_slope = cwnd · 80 / 1012 (the rate is cwnd packets per 1012 µs), which floors to 0
/// for any cwnd up to 12: max_win = nv_pad = 10. Above 10 NV cuts to 10, at or below
/// 10 - nv_pad_buffer = 8 it grows: cwnd stays in [8, 10] and the flow gets at most
/// 10 · 1448 · 8 bits per 1012.5 µs = 114 Mb/s (the anchor's "paths whose true min RTT > base are
/// treated as permanently queued").
#[test]
fn base_rtt_below_the_path_rtt_holds_cwnd_near_nv_pad() {
    let mut net = Net::new(nv(Some(80)), SimTime::from_us(500));
    net.run_until(SimTime::from_ms(300));
    let (_, nv_min) = vegas(&net.a.tcp_info());
    assert_eq!(nv_min, 80);
    let from = SimTime::from_ms(150);
    let cwnds: Vec<u32> = net.infos_after(from).map(|i| i.snd_cwnd).collect();
    let (lo, hi) = (*cwnds.iter().min().unwrap(), *cwnds.iter().max().unwrap());
    assert!(lo >= 8 && hi <= 10, "cwnd in [{lo}, {hi}]");
    let goodput = net.goodput_bps(from);
    assert!((100_000_000..=114_500_000).contains(&goodput), "goodput {goodput} b/s");
}
