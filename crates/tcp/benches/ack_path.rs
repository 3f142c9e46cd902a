//! The TCP endpoint's per-packet paths, driven without a network: a DCTCP sender taking one ACK
//! per full segment (`tcp_ack` with its RTT, rate, RACK, TLP and CC work, then `tcp_write_xmit`
//! for what the ACK lets out, each segment's TSQ budget returned at once), and a receiver taking
//! in-order data segments (header prediction's fast path, delayed ACKs every two segments).

use ccsim_cc::CcKind;
use ccsim_engine::{microbench, SimTime};
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions};
use std::collections::VecDeque;
use std::hint::black_box;

const ISS: u32 = 1_000_000;
const PEER_ISS: u32 = 5_000_000;

fn ts(t: SimTime) -> u32 {
    (t.ns() / 1_000_000) as u32 + 1
}

fn sender() {
    let cfg = TcpConfig { cc: CcKind::Dctcp, ..TcpConfig::default() };
    let mut ep = Endpoint::client(cfg, ISS);
    let mut out = Vec::new();
    let mut now = SimTime::from_ms(1);
    ep.connect(now, &mut out);
    let syn_ts = out[0].opts.timestamp.map_or(0, |t| t.0);
    out.clear();
    let opts = TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        wscale: Some(7),
        timestamp: Some((ts(now), syn_ts)),
        ..TcpOptions::default()
    };
    let synack = Segment {
        seq: PEER_ISS,
        ack: ISS + 1,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE),
        win: 65535,
        opts,
        ..Segment::default()
    };
    now += SimTime::from_us(100);
    ep.on_segment(now, &synack, &mut out);
    ep.write_forever(now, &mut out);
    // Sent and not yet acknowledged: (end_seq, TSval) per segment.
    let mut flight: VecDeque<(u32, u32)> = VecDeque::new();
    let take = |ep: &mut Endpoint, out: &mut Vec<Segment>, now: SimTime, flight: &mut VecDeque<(u32, u32)>| {
        while !out.is_empty() {
            let segs: Vec<Segment> = std::mem::take(out);
            for s in segs {
                if s.len > 0 {
                    flight.push_back((s.seq.wrapping_add(s.len), s.opts.timestamp.map_or(0, |t| t.0)));
                    ep.tsq_release(now, (s.len + s.header_len()) as u64, out);
                }
            }
        }
    };
    take(&mut ep, &mut out, now, &mut flight);
    microbench::run("tcp: sender takes an ACK and sends (DCTCP)", 1000, || {
        for _ in 0..1000 {
            now += SimTime::from_ns(1200);
            let (end, tsval) = flight.pop_front().expect("data in flight");
            let ack = Segment {
                seq: PEER_ISS + 1,
                ack: end,
                flags: TcpFlags(TcpFlags::ACK),
                win: 1024,
                opts: TcpOptions { timestamp: Some((ts(now), tsval)), ..TcpOptions::default() },
                ..Segment::default()
            };
            ep.on_segment(now, black_box(&ack), &mut out);
            take(&mut ep, &mut out, now, &mut flight);
        }
    });
}

fn receiver() {
    let cfg = TcpConfig { cc: CcKind::Dctcp, ..TcpConfig::default() };
    let mut ep = Endpoint::listen(cfg, ISS);
    let mut out = Vec::new();
    let mut now = SimTime::from_ms(1);
    let syn = Segment {
        seq: PEER_ISS,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR),
        win: 65535,
        opts: TcpOptions {
            mss: Some(1460),
            sack_permitted: true,
            wscale: Some(7),
            timestamp: Some((ts(now), 0)),
            ..TcpOptions::default()
        },
        ..Segment::default()
    };
    ep.on_segment(now, &syn, &mut out);
    let ecr = out.last().and_then(|s| s.opts.timestamp).map_or(0, |t| t.0);
    out.clear();
    now += SimTime::from_us(100);
    let hs = TcpOptions { timestamp: Some((ts(now), ecr)), ..TcpOptions::default() };
    let ack = Segment {
        seq: PEER_ISS + 1,
        ack: ISS + 1,
        flags: TcpFlags(TcpFlags::ACK),
        win: 1024,
        opts: hs,
        ..Segment::default()
    };
    ep.on_segment(now, &ack, &mut out);
    let mut seq = PEER_ISS + 1;
    microbench::run("tcp: receiver takes an in-order data segment", 1000, || {
        for _ in 0..1000 {
            now += SimTime::from_ns(1200);
            let data = Segment {
                seq,
                ack: ISS + 1,
                len: 1448,
                flags: TcpFlags(TcpFlags::ACK),
                win: 1024,
                opts: TcpOptions { timestamp: Some((ts(now), ecr)), ..TcpOptions::default() },
                ..Segment::default()
            };
            seq = seq.wrapping_add(1448);
            ep.on_segment(now, black_box(&data), &mut out);
            out.clear();
        }
    });
    assert!(ep.stats().hp_hits > 1000, "the benchmark exercises the fast path");
}

fn main() {
    sender();
    receiver();
}
