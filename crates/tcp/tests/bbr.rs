//! BBR at the endpoint: one bulk flow over a 10 Mbit/s bottleneck with a 40 ms round trip and
//! a 1000-packet drop-tail buffer (30 BDP: a bufferbloated path). BBR paces (it asks for pacing,
//! `SK_PACING_NEEDED`, and ccsim has no fq, so TCP paces itself), fills the pipe and keeps the
//! queue to about a BDP (cwnd_gain 2); CUBIC on the same path fills the buffer.
//!
//! The loop is as small as freebsd_dctcp.rs's: sender -> bottleneck port (FIFO, serialisation
//! at 10 Mbit/s, tail drop at 1000 packets) -> 20 ms -> receiver, and 20 ms back. The sender's
//! host transmits at once (TSQ completions are immediate), so the bottleneck queue is the only
//! one.

use ccsim_cc::{CcInfo, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const RATE_BPS: u64 = 10_000_000;
const ONE_WAY: SimTime = SimTime::from_ms(20);
const BUFFER_PKTS: usize = 1000;
/// 10 Mbit/s * 40 ms in 1500-byte packets.
const BDP_PKTS: f64 = 10e6 * 0.040 / (8.0 * 1500.0);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    AtoB,
    BtoA,
}

struct Run {
    a: Endpoint,
    b: Endpoint,
    /// Packets on the wire: (arrival, sequence, direction, segment).
    wire: BinaryHeap<Reverse<(SimTime, u64, Dir, SegKey)>>,
    segs: Vec<Segment>,
    next_id: u64,
    /// Completion times of the packets in the bottleneck port (queued or being sent).
    port: VecDeque<SimTime>,
    /// The reverse link serialises at the same rate, without a queue limit.
    back_free: SimTime,
    /// (time, packets in the bottleneck port) at every enqueue, and drops.
    queue: Vec<(SimTime, usize)>,
    drops: u64,
    /// (time, bytes received by B) once per 100 ms.
    progress: Vec<(SimTime, u64)>,
    /// BBR's tcp_bbr_info pacing gain seen at the sender, sampled every 100 ms.
    gains: Vec<u32>,
    /// (time, data segments) the sender put out in one go (one endpoint call).
    bursts: Vec<(SimTime, usize)>,
}

/// Index into `Run::segs` (segments are not `Ord`).
type SegKey = usize;

impl Run {
    fn new(cc: CcKind) -> Run {
        let cfg = TcpConfig { cc, ..TcpConfig::default() };
        let mut r = Run {
            a: Endpoint::client(cfg.clone(), 1_000_000),
            b: Endpoint::listen(cfg, 7_000_000),
            wire: BinaryHeap::new(),
            segs: Vec::new(),
            next_id: 0,
            port: VecDeque::new(),
            back_free: SimTime::ZERO,
            queue: Vec::new(),
            drops: 0,
            progress: Vec::new(),
            gains: Vec::new(),
            bursts: Vec::new(),
        };
        let mut out = Vec::new();
        r.a.write_forever(SimTime::ZERO, &mut out);
        r.a.connect(SimTime::ZERO, &mut out);
        r.emit(SimTime::ZERO, Dir::AtoB, out);
        r
    }

    fn emit(&mut self, now: SimTime, dir: Dir, out: Vec<Segment>) {
        let data = out.iter().filter(|s| s.len > 0).count();
        if dir == Dir::AtoB && data > 0 {
            self.bursts.push((now, data));
        }
        let mut tsq = 0u64;
        for seg in out {
            let bytes = (seg.len + seg.header_len()) as u64;
            let done = match dir {
                Dir::AtoB => {
                    if seg.len > 0 {
                        tsq += bytes;
                    }
                    while self.port.front().is_some_and(|&t| t <= now) {
                        self.port.pop_front();
                    }
                    if self.port.len() >= BUFFER_PKTS {
                        self.drops += 1;
                        continue;
                    }
                    let start = self.port.back().copied().unwrap_or(now).max(now);
                    let done = start + SimTime::tx_time(bytes, RATE_BPS);
                    self.port.push_back(done);
                    self.queue.push((now, self.port.len()));
                    done
                }
                Dir::BtoA => {
                    self.back_free = self.back_free.max(now) + SimTime::tx_time(bytes, RATE_BPS);
                    self.back_free
                }
            };
            self.segs.push(seg);
            self.wire.push(Reverse((done + ONE_WAY, self.next_id, dir, self.segs.len() - 1)));
            self.next_id += 1;
        }
        if tsq > 0 {
            let mut more = Vec::new();
            self.a.tsq_release(now, tsq, &mut more);
            self.emit(now, Dir::AtoB, more);
        }
    }

    fn run_until(&mut self, end: SimTime) {
        let mut next_sample = SimTime::ZERO;
        loop {
            let arrival = self.wire.peek().map(|Reverse(x)| x.0);
            let t = [arrival, self.a.next_deadline(), self.b.next_deadline()].into_iter().flatten().min();
            let Some(now) = t.filter(|&t| t <= end) else { break };
            while next_sample <= now {
                self.progress.push((next_sample, self.b.stats().bytes_received));
                if let CcInfo::Bbr { pacing_gain, .. } = self.a.tcp_info().cc_info {
                    self.gains.push(pacing_gain);
                }
                next_sample += SimTime::from_ms(100);
            }
            let mut out = Vec::new();
            if arrival == Some(now) {
                let Reverse((_, _, dir, key)) = self.wire.pop().unwrap();
                let seg = self.segs[key];
                match dir {
                    Dir::AtoB => {
                        self.b.on_segment(now, &seg, &mut out);
                        self.emit(now, Dir::BtoA, out);
                    }
                    Dir::BtoA => {
                        self.a.on_segment(now, &seg, &mut out);
                        self.emit(now, Dir::AtoB, out);
                    }
                }
            } else if self.a.next_deadline() == Some(now) {
                self.a.on_timer(now, &mut out);
                self.emit(now, Dir::AtoB, out);
            } else {
                self.b.on_timer(now, &mut out);
                self.emit(now, Dir::BtoA, out);
            }
        }
    }

    /// Receiver goodput between `from` and `to` as a fraction of the 10 Mbit/s line rate.
    fn goodput(&self, from: SimTime, to: SimTime) -> f64 {
        let at = |t: SimTime| self.progress.iter().rev().find(|p| p.0 <= t).unwrap().1;
        let bytes = at(to) - at(from);
        bytes as f64 * 8.0 / (to - from).secs_f64() / RATE_BPS as f64
    }

    fn max_burst(&self, from: SimTime) -> usize {
        self.bursts.iter().filter(|b| b.0 >= from).map(|b| b.1).max().unwrap_or(0)
    }

    fn max_queue(&self, from: SimTime) -> usize {
        self.queue.iter().filter(|q| q.0 >= from).map(|q| q.1).max().unwrap_or(0)
    }

    /// Time-weighted mean of the sampled occupancy after `from` (sampled at enqueues).
    fn mean_queue(&self, from: SimTime) -> f64 {
        let q: Vec<_> = self.queue.iter().filter(|q| q.0 >= from).collect();
        q.iter().map(|q| q.1 as f64).sum::<f64>() / q.len().max(1) as f64
    }
}

#[test]
fn bbr_fills_the_pipe_with_a_bounded_queue_where_cubic_fills_the_buffer() {
    let end = SimTime::from_secs(20);
    let mut bbr = Run::new(CcKind::Bbr);
    bbr.run_until(end);
    let info = bbr.a.tcp_info();
    assert_eq!(info.cc, "bbr");
    // BBR's own estimate: ~10 Mbit/s in bytes of payload per second, min_rtt ~41 ms.
    let CcInfo::Bbr { bw_lo, bw_hi, min_rtt, .. } = info.cc_info else { panic!("{:?}", info.cc_info) };
    let bw_bps = ((bw_hi as u64) << 32 | bw_lo as u64) * 8;
    assert!((9_000_000..10_000_000).contains(&bw_bps), "bw estimate {bw_bps} bit/s");
    assert!((40_000..43_000).contains(&min_rtt), "min_rtt {min_rtt} µs");
    // The pacing rate is set by BBR (bw * gain * 99 %), not by the 200 %/120 % cwnd/srtt rule.
    assert!(info.pacing_rate < 1_250_000 * 5 / 4, "pacing rate {}", info.pacing_rate);

    let bbr_goodput = bbr.goodput(SimTime::from_secs(2), end);
    let bbr_max_q = bbr.max_queue(SimTime::from_secs(2));
    let bbr_startup_q = bbr.max_queue(SimTime::ZERO);
    let bbr_mean_q = bbr.mean_queue(SimTime::from_secs(2));
    println!(
        "bbr: goodput {bbr_goodput:.3} of 10 Mbit/s, queue max {bbr_max_q} (incl. STARTUP {bbr_startup_q}) \
         mean {bbr_mean_q:.1} packets (BDP {BDP_PKTS:.1}), drops {}, retrans {}",
        bbr.drops,
        bbr.a.stats().total_retrans
    );
    assert!(bbr_goodput >= 0.90, "BBR goodput {bbr_goodput:.3}");
    assert!(bbr_max_q as f64 <= 2.0 * BDP_PKTS, "BBR queue {bbr_max_q} packets > 2 BDP");
    // STARTUP's queue stays below (2.89 - 1) BDP plus the quantisation budget.
    assert!(bbr_startup_q as f64 <= 2.2 * BDP_PKTS, "BBR STARTUP queue {bbr_startup_q}");
    assert_eq!(bbr.drops, 0, "BBR never reaches the 1000-packet limit");
    // Paced (the stack paces because BBR asked, TcpConfig::pacing is off) skb by skb, each skb
    // two segments: at 10 Mbit/s tcp_tso_autosize gives 1 220 bytes, under one MSS, so BBR's
    // min_tso_segs (2 above 1.2 Mbit/s) decides. CUBIC unpaced sends a segment or more per ACKed
    // segment at once.
    assert!(!bbr.a.config().pacing);
    assert_eq!(bbr.max_burst(SimTime::from_secs(1)), 2);
    // All eight gain-cycle phases were used, and PROBE_RTT (gain 1.0, cwnd 4) happened around
    // t = 10 s (min_rtt unrefreshed for 10 s), visible as a dip in the queue.
    assert!(bbr.gains.contains(&320) && bbr.gains.contains(&192), "gains {:?}", bbr.gains);
    let dip = bbr.queue.iter().filter(|q| q.0 > SimTime::from_secs(9) && q.0 < SimTime::from_secs(12));
    assert!(dip.map(|q| q.1).min().unwrap() <= 2, "no PROBE_RTT drain near 10 s");

    let mut cubic = Run::new(CcKind::Cubic);
    cubic.run_until(end);
    let cubic_max_q = cubic.max_queue(SimTime::ZERO);
    let cubic_goodput = cubic.goodput(SimTime::from_secs(2), end);
    println!(
        "cubic: goodput {cubic_goodput:.3}, queue max {cubic_max_q} mean {:.1} packets, drops {}",
        cubic.mean_queue(SimTime::from_secs(2)),
        cubic.drops
    );
    assert!(cubic_max_q >= BUFFER_PKTS - 1, "CUBIC fills the buffer: max queue {cubic_max_q}");
    assert!(cubic.drops > 0);
    assert!(cubic.max_burst(SimTime::from_secs(1)) >= 2);
    assert!(cubic.mean_queue(SimTime::from_secs(2)) > 5.0 * bbr_mean_q.max(BDP_PKTS));
}

/// The delivery-rate samples the endpoint hands BBR follow tcp_rate.c; read back through
/// tcp_bbr_info's bandwidth (the max filter, in bytes/s = bw * mss * 10^6 >> 24). The peer is
/// played by hand: SYN at 0, SYN-ACK at 10 ms (min_rtt 10 ms), MSS 1000, no timestamps; the
/// ten initial segments leave together at 10 ms with tx.delivered = 0, delivered_mstamp 10 ms.
#[test]
fn endpoint_rate_samples_follow_tcp_rate_c() {
    const ISS: u32 = 1_000;
    const PEER: u32 = 50_000;
    let cfg = TcpConfig { cc: CcKind::Bbr, timestamps: false, ..TcpConfig::default() };
    let mut ep = Endpoint::client(cfg, ISS);
    let mut out = Vec::new();
    ep.write_forever(SimTime::ZERO, &mut out);
    ep.connect(SimTime::ZERO, &mut out);
    let opts = ccsim_tcp::TcpOptions { mss: Some(1000), sack_permitted: true, wscale: Some(7), ..Default::default() };
    let synack = Segment {
        seq: PEER,
        ack: ISS + 1,
        flags: ccsim_tcp::TcpFlags(ccsim_tcp::TcpFlags::SYN | ccsim_tcp::TcpFlags::ACK),
        win: 65535,
        opts,
        ..Segment::default()
    };
    // The host transmits at once: TX completions (TSQ) follow every send.
    let transmit = |ep: &mut Endpoint, now: SimTime, mut out: Vec<Segment>| -> Vec<Segment> {
        let mut all = Vec::new();
        while !out.is_empty() {
            let bytes: u64 = out.iter().filter(|s| s.len > 0).map(|s| (s.len + s.header_len()) as u64).sum();
            all.append(&mut out);
            if bytes > 0 {
                ep.tsq_release(now, bytes, &mut out);
            }
        }
        all
    };
    out.clear();
    ep.on_segment(SimTime::from_ms(10), &synack, &mut out);
    let out = transmit(&mut ep, SimTime::from_ms(10), out);
    let data: Vec<&Segment> = out.iter().filter(|s| s.len > 0).collect();
    assert_eq!(data.len(), 10, "initial window, unpaced");
    assert!(ep.sock().pacing_needed);
    let bw_bytes = |ep: &Endpoint| match ep.tcp_info().cc_info {
        CcInfo::Bbr { bw_lo, .. } => bw_lo,
        other => panic!("{other:?}"),
    };
    let ack = |ep: &mut Endpoint, ms: u64, acked: u32, sack: Option<(u32, u32)>| {
        let mut o = ccsim_tcp::TcpOptions::default();
        if let Some((s, e)) = sack {
            o.sack[0] = (ISS + 1 + s * 1000, ISS + 1 + e * 1000);
            o.sack_len = 1;
        }
        let seg = Segment {
            seq: PEER + 1,
            ack: ISS + 1 + acked * 1000,
            flags: ccsim_tcp::TcpFlags(ccsim_tcp::TcpFlags::ACK),
            win: 65535,
            opts: o,
            ..Segment::default()
        };
        let mut o = Vec::new();
        ep.on_segment(SimTime::from_ms(ms), &seg, &mut o);
        transmit(ep, SimTime::from_ms(ms), o);
    };

    // 19 ms: one segment in 9 ms. Its RTT sample lowers min_rtt to 9 ms first
    // (tcp_clean_rtx_queue runs before tcp_rate_gen), so interval 9 ms >= min_rtt is valid:
    // 1 * 2^24 / 9000 = 1864 -> 1864 * 1000 * 10^6 >> 24 = 111 103 B/s.
    ack(&mut ep, 19, 1, None);
    assert_eq!(ep.tcp_info().min_rtt_us, 9_000);
    assert_eq!(bw_bytes(&ep), 111_103);
    // 21 ms: two more. The most recently sent of them has tx.delivered 0 and tx.delivered_mstamp
    // 10 ms: delivered = 3, interval = max(send phase 0, ack phase 11 ms): 3 * 2^24 / 11000 =
    // 4575 -> 4575 * 1000 * 10^6 >> 24 = 272 691 B/s.
    ack(&mut ep, 21, 3, None);
    assert_eq!(bw_bytes(&ep), 272_691);
    // 30 ms: segments 5..10 SACKed (4 still missing): SACKed packets count as delivered, 3 + 6 =
    // 9 over 20 ms: 9 * 2^24 / 20000 = 7549 -> 449 955 B/s.
    ack(&mut ep, 30, 3, Some((4, 10)));
    assert_eq!(bw_bytes(&ep), 449_955);
    assert_eq!(ep.tcp_info().delivered, 9);
}
