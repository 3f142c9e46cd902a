//! Generic receive offload at a host's NIC (`dev_gro_receive`, `tcp_gro_receive`): within one
//! NAPI poll, consecutive in-order segments of one connection merge into one large segment, so
//! TCP sees (and ACKs) one skb where the wire carried several.
//!
//! A segment merges into the connection's held skb when it continues it (sequence), carries the
//! same ACK, options (timestamps included) and IP ECN field, no flag other than the held skb's
//! (CWR never merges), and is no longer than the held skb's first segment (its `gso_size`), up
//! to 64 KB (`gro_max_size`). A segment shorter than `gso_size`, or with PSH, URG, RST, SYN or
//! FIN, ends its skb at once; a pure ACK never merges and flushes the held skb of its flow. At
//! most 8 flows are held (`MAX_GRO_SKBS`; the oldest is flushed to make room), and the poll's
//! end flushes the rest, oldest first. Linux spreads held skbs over 8 hash buckets; ccsim keeps
//! one list of 8.

use ccsim_engine::PoolId;
use ccsim_tcp::{Ecn, Segment, TcpFlags};

/// `MAX_GRO_SKBS`: skbs held at once.
const MAX_HELD: usize = 8;
/// `GRO_LEGACY_MAX_SIZE`: the largest merged skb, in payload bytes.
const GRO_MAX_SIZE: u32 = 65536;

/// `NAPI_POLL_WEIGHT`: packets a receive poll takes before GRO flushes; an skb's packets then
/// fit in a fixed array.
pub(crate) const NAPI_POLL_WEIGHT: usize = 64;

/// One packet of a poll, in arrival order: for a TCP segment, its connection, direction and
/// the segment (`None`: not TCP).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroIn<'a> {
    pub id: PoolId,
    pub tcp: Option<((u32, bool), &'a Segment)>,
    pub ecn: Ecn,
}

/// A merged skb: its packets (`GroBuf::ids[first..first + n]`, first to last), its payload,
/// and its segment size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroOut {
    pub first: u16,
    pub n: u16,
    pub len: u32,
    /// FIN and PSH of the merged segments (`tcp_flag_word(th2) |= flags & (FIN | PSH)`).
    pub extra_flags: u8,
    pub gso_size: u32,
}

impl GroOut {
    /// An skb of one packet of `len` payload bytes (its place in `GroBuf::ids` still to set).
    fn one(len: u32) -> GroOut {
        GroOut { first: 0, n: 1, len, extra_flags: 0, gso_size: len }
    }
}

struct Held {
    flow: (u32, bool),
    first: Segment,
    ecn: Ecn,
    next_seq: u32,
    out: GroOut,
    ids: [PoolId; NAPI_POLL_WEIGHT],
}

/// What a poll hands up, in order, and room for what it holds; kept from poll to poll, so
/// that GRO allocates nothing per packet.
#[derive(Default)]
pub(crate) struct GroBuf {
    pub done: Vec<GroOut>,
    pub ids: Vec<PoolId>,
    held: Vec<Held>,
}

impl GroBuf {
    /// The packets of skb `o`.
    pub fn ids_of(&self, o: &GroOut) -> &[PoolId] {
        &self.ids[o.first as usize..(o.first + o.n) as usize]
    }

    fn finish(&mut self, h: &Held) {
        let first = self.ids.len() as u16;
        self.ids.extend_from_slice(&h.ids[..h.out.n as usize]);
        self.done.push(GroOut { first, ..h.out });
    }

    fn finish_held(&mut self, i: usize) {
        let h = self.held.remove(i);
        self.finish(&h);
    }

    fn single(&mut self, p: &GroIn) {
        let first = self.ids.len() as u16;
        self.ids.push(p.id);
        self.done.push(GroOut { first, ..GroOut::one(p.tcp.map_or(0, |(_, s)| s.len)) });
    }
}

/// One NAPI poll of `n` ≤ `NAPI_POLL_WEIGHT` packets, the `i`-th given by `pkt(i)`: the skbs it hands
/// up, in order, in `buf` (cleared first).
pub(crate) fn gro_poll<'a>(buf: &mut GroBuf, n: usize, pkt: impl Fn(usize) -> GroIn<'a>) {
    assert!(n <= NAPI_POLL_WEIGHT, "a poll takes at most {NAPI_POLL_WEIGHT} packets");
    buf.done.clear();
    buf.ids.clear();
    buf.held.clear();
    for i in 0..n {
        let p = pkt(i);
        let Some((flow, seg)) = p.tcp else {
            buf.single(&p); // not TCP: straight up the stack
            continue;
        };
        let flags = seg.flags.0;
        let end_flags = TcpFlags::URG | TcpFlags::PSH | TcpFlags::RST | TcpFlags::SYN | TcpFlags::FIN;
        let mut mss = 1;
        let mut merged = false;
        if let Some(h) = buf.held.iter().position(|h| h.flow == flow) {
            let hd = &buf.held[h];
            let fails = flags & TcpFlags::CWR != 0
                || (flags ^ hd.first.flags.0) & !(TcpFlags::CWR | TcpFlags::FIN | TcpFlags::PSH) != 0
                || seg.ack != hd.first.ack
                || seg.opts != hd.first.opts
                || p.ecn != hd.ecn
                || seg.len.wrapping_sub(1) >= hd.out.gso_size
                || seg.seq != hd.next_seq
                || hd.out.len + seg.len >= GRO_MAX_SIZE;
            if fails {
                // The held skb goes up first; this segment is handled as if alone.
                buf.finish_held(h);
            } else {
                let hd = &mut buf.held[h];
                hd.ids[hd.out.n as usize] = p.id;
                hd.out.n += 1;
                hd.out.len += seg.len;
                hd.out.extra_flags |= flags & (TcpFlags::FIN | TcpFlags::PSH);
                hd.next_seq = hd.next_seq.wrapping_add(seg.len);
                mss = hd.out.gso_size;
                merged = true;
                if seg.len < mss || flags & end_flags != 0 {
                    buf.finish_held(h);
                }
            }
        }
        if merged {
            continue;
        }
        if seg.len < mss || flags & end_flags != 0 {
            buf.single(&p);
            continue;
        }
        if buf.held.len() == MAX_HELD {
            buf.finish_held(0);
        }
        let mut ids = [PoolId(0); NAPI_POLL_WEIGHT];
        ids[0] = p.id;
        let out = GroOut::one(seg.len);
        buf.held.push(Held { flow, first: *seg, ecn: p.ecn, next_seq: seg.seq.wrapping_add(seg.len), out, ids });
    }
    let held = std::mem::take(&mut buf.held);
    for h in &held {
        buf.finish(h);
    }
    buf.held = held;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccsim_tcp::TcpOptions;

    const MSS: u32 = 1448;

    fn seg(k: u32, len: u32, flags: u8, ts: u32) -> Segment {
        Segment {
            seq: 1000 + k * MSS,
            ack: 1,
            len,
            flags: TcpFlags(TcpFlags::ACK | flags),
            win: 100,
            opts: TcpOptions { timestamp: Some((ts, 9)), ..TcpOptions::default() },
            ..Segment::default()
        }
    }

    /// Run a poll of (flow, segment, ecn) and return the groups as lists of input positions.
    fn poll(pkts: &[(u32, Segment, Ecn)]) -> Vec<(Vec<u32>, u32, u8)> {
        let ins: Vec<GroIn> = pkts
            .iter()
            .enumerate()
            .map(|(i, (f, s, e))| GroIn { id: PoolId(i as u32), tcp: Some(((*f, true), s)), ecn: *e })
            .collect();
        groups(&ins)
    }

    fn groups(ins: &[GroIn]) -> Vec<(Vec<u32>, u32, u8)> {
        let mut buf = GroBuf::default();
        gro_poll(&mut buf, ins.len(), |i| ins[i]);
        buf.done.iter().map(|o| (buf.ids_of(o).iter().map(|i| i.0).collect(), o.len, o.extra_flags)).collect()
    }

    #[test]
    fn in_order_full_segments_merge_and_a_short_one_ends_the_skb() {
        let e = Ecn::Ect0;
        let g = poll(&[
            (0, seg(0, MSS, 0, 5), e),
            (0, seg(1, MSS, 0, 5), e),
            (0, seg(2, MSS, 0, 5), e),
            (0, seg(3, 100, 0, 5), e),
        ]);
        assert_eq!(g, vec![(vec![0, 1, 2, 3], 3 * MSS + 100, 0)]);
        // The poll's end flushes a held skb.
        assert_eq!(poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(1, MSS, 0, 5), e)]), vec![(vec![0, 1], 2 * MSS, 0)]);
    }

    #[test]
    fn psh_merges_then_flushes_and_cwr_never_merges() {
        let e = Ecn::Ect0;
        let g = poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(1, MSS, TcpFlags::PSH, 5), e), (0, seg(2, MSS, 0, 5), e)]);
        assert_eq!(g, vec![(vec![0, 1], 2 * MSS, TcpFlags::PSH), (vec![2], MSS, 0)]);
        let g = poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(1, MSS, TcpFlags::CWR, 5), e), (0, seg(2, MSS, 0, 5), e)]);
        assert_eq!(g, vec![(vec![0], MSS, 0), (vec![1, 2], 2 * MSS, 0)], "CWR starts its own skb");
    }

    #[test]
    fn a_new_ecn_codepoint_timestamp_or_a_gap_starts_a_new_skb() {
        let e = Ecn::Ect0;
        let g = poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(1, MSS, 0, 5), Ecn::Ce), (0, seg(2, MSS, 0, 5), Ecn::Ce)]);
        assert_eq!(g, vec![(vec![0], MSS, 0), (vec![1, 2], 2 * MSS, 0)], "CE does not merge with ECT(0)");
        let g = poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(1, MSS, 0, 6), e)]);
        assert_eq!(g, vec![(vec![0], MSS, 0), (vec![1], MSS, 0)], "TSval differs");
        let g = poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(2, MSS, 0, 5), e)]);
        assert_eq!(g, vec![(vec![0], MSS, 0), (vec![1], MSS, 0)], "a hole");
    }

    #[test]
    fn pure_acks_and_other_packets_go_up_at_once() {
        let e = Ecn::NotEct;
        let g = poll(&[(0, seg(0, MSS, 0, 5), e), (0, seg(1, 0, 0, 5), e), (0, seg(1, MSS, 0, 5), e)]);
        assert_eq!(g, vec![(vec![0], MSS, 0), (vec![1], 0, 0), (vec![2], MSS, 0)], "the ACK flushed segment 0");
        let ping = GroIn { id: PoolId(9), tcp: None, ecn: e };
        let s0 = seg(0, MSS, 0, 5);
        let tcp = GroIn { id: PoolId(1), tcp: Some(((0, true), &s0)), ecn: e };
        let ids: Vec<Vec<u32>> = groups(&[tcp, ping]).into_iter().map(|g| g.0).collect();
        assert_eq!(ids, vec![vec![9], vec![1]], "the ping does not wait for the held skb");
    }

    #[test]
    fn flows_interleave_and_at_most_eight_are_held() {
        let e = Ecn::Ect0;
        let g = poll(&[
            (0, seg(0, MSS, 0, 5), e),
            (1, seg(0, MSS, 0, 5), e),
            (0, seg(1, MSS, 0, 5), e),
            (1, seg(1, MSS, 0, 5), e),
        ]);
        assert_eq!(g, vec![(vec![0, 2], 2 * MSS, 0), (vec![1, 3], 2 * MSS, 0)]);
        let pkts: Vec<(u32, Segment, Ecn)> = (0..9).map(|f| (f, seg(0, MSS, 0, 5), e)).collect();
        let g = poll(&pkts);
        assert_eq!(g[0].0, vec![0], "the ninth flow pushes the oldest out");
        assert_eq!(g.len(), 9);
    }

    #[test]
    fn an_skb_stops_growing_at_64_kb() {
        let e = Ecn::Ect0;
        let pkts: Vec<(u32, Segment, Ecn)> = (0..50).map(|k| (0, seg(k, MSS, 0, 5), e)).collect();
        let g = poll(&pkts);
        assert_eq!(g[0].0.len(), 45, "45 x 1448 = 65160 bytes; a 46th would reach 64 KB");
        assert_eq!(g[1].0.len(), 5);
    }
}
