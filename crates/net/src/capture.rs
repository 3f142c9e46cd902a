//! Packet capture: copies of the packets that cross chosen points of the network, handed to a
//! sink (the pcap writer) in time order — what a capture on a mirror port of the wire sees.
//!
//! A point is a port's egress (`CapturePoint::Egress`: each packet when its transmission
//! starts, after the queue, so with the CE mark the queue set) or the arrival at a host over a
//! link (`CapturePoint::Ingress`: when its last bit has arrived, before GRO merges it). Both are
//! wire packets, one per MTU-sized segment, as a switch's mirror port would copy them.
//!
//! Captures cost nothing when none is asked for (one test of `Core::capture` per transmission
//! and arrival) and never change the run: they only read packets.

use crate::conn::Conn;
use crate::packet::{Packet, Payload};
use crate::topology::{NodeId, PortId};
use ccsim_engine::SimTime;
use ccsim_tcp::{Ecn, Segment};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Where a capture copies packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapturePoint {
    /// Packets put on the wire at this port, stamped with the start of their transmission.
    Egress(PortId),
    /// Packets arriving over this port's link at the host it leads to, stamped with their
    /// arrival.
    Ingress(PortId),
}

/// One capture: a file's worth of packets.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureSpec {
    pub name: String,
    pub points: Vec<CapturePoint>,
    /// Packets stamped before `start` or at or after `stop` are not captured.
    pub start: SimTime,
    pub stop: SimTime,
    /// The most packets captured; those after are counted, not kept.
    pub max_packets: u64,
}

/// What a captured packet carries, with what the wire needs that the simulator keeps elsewhere
/// (the connection's ports).
#[derive(Clone, Copy, Debug)]
pub enum CapturedPayload {
    Tcp {
        src_port: u16,
        dst_port: u16,
        seg: Segment,
    },
    /// ICMP echo request or reply of ping probe `probe`.
    Echo {
        reply: bool,
        probe: u32,
        seq: u32,
    },
}

/// A copy of one packet at one capture.
#[derive(Clone, Copy, Debug)]
pub struct CapturedPacket {
    /// The capture it belongs to (index into the specs given to `Sim::set_capture`).
    pub capture: u32,
    pub t: SimTime,
    pub src: NodeId,
    pub dst: NodeId,
    /// The IP packet's length in bytes.
    pub size: u32,
    pub dscp: u8,
    pub ecn: Ecn,
    pub payload: CapturedPayload,
}

/// Receives captured packets in time order (ties in the order they were captured).
pub trait PacketSink: Send {
    fn packet(&mut self, p: &CapturedPacket);
}

/// What one capture took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureCount {
    pub packets: u64,
    /// Packets in the capture's time window beyond `max_packets`.
    pub beyond_limit: u64,
}

/// A packet waiting for the clock to pass its stamp: a port's egress is stamped when its
/// transmission starts, which a lazy port knows ahead of time.
struct Pending {
    order: u64,
    pkt: CapturedPacket,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    /// Reversed: the earliest stamp on top of the max-heap.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.pkt.t, o.order).cmp(&(self.pkt.t, self.order))
    }
}

/// The running captures (`Core::capture`).
pub(crate) struct Capturer {
    specs: Vec<CaptureSpec>,
    /// Per port: the captures of its egress, and of arrivals over its link.
    egress: Vec<Vec<u32>>,
    ingress: Vec<Vec<u32>>,
    counts: Vec<CaptureCount>,
    pending: BinaryHeap<Pending>,
    order: u64,
    sink: Box<dyn PacketSink>,
}

impl Capturer {
    pub(crate) fn new(specs: Vec<CaptureSpec>, ports: usize, sink: Box<dyn PacketSink>) -> Capturer {
        let (mut egress, mut ingress) = (vec![Vec::new(); ports], vec![Vec::new(); ports]);
        for (k, s) in specs.iter().enumerate() {
            for &p in &s.points {
                let (list, PortId(i)) = match p {
                    CapturePoint::Egress(i) => (&mut egress, i),
                    CapturePoint::Ingress(i) => (&mut ingress, i),
                };
                if !list[i as usize].contains(&(k as u32)) {
                    list[i as usize].push(k as u32);
                }
            }
        }
        let counts = vec![CaptureCount::default(); specs.len()];
        Capturer { specs, egress, ingress, counts, pending: BinaryHeap::new(), order: 0, sink }
    }

    /// Packet `pkt` starts its transmission at port `pi` at `t`; the clock reads `now`.
    #[inline]
    pub(crate) fn egress(&mut self, pi: usize, t: SimTime, pkt: &Packet, conns: &[Conn], now: SimTime) {
        if !self.egress[pi].is_empty() {
            self.take(pi, true, t, pkt, conns, now);
        }
    }

    /// Packet `pkt` arrives over port `pi`'s link at `now`.
    #[inline]
    pub(crate) fn ingress(&mut self, pi: usize, pkt: &Packet, conns: &[Conn], now: SimTime) {
        if !self.ingress[pi].is_empty() {
            self.take(pi, false, now, pkt, conns, now);
        }
    }

    #[cold]
    fn take(&mut self, pi: usize, egress: bool, t: SimTime, pkt: &Packet, conns: &[Conn], now: SimTime) {
        let payload = match pkt.payload {
            Payload::Tcp { conn, to_server, seg } => {
                let spec = &conns[conn as usize].spec;
                let (src_port, dst_port) =
                    if to_server { (spec.src_port, spec.dst_port) } else { (spec.dst_port, spec.src_port) };
                CapturedPayload::Tcp { src_port, dst_port, seg }
            }
            Payload::PingRequest { probe, seq, .. } => CapturedPayload::Echo { reply: false, probe, seq },
            Payload::PingReply { probe, seq, .. } => CapturedPayload::Echo { reply: true, probe, seq },
        };
        let list = if egress { &self.egress[pi] } else { &self.ingress[pi] };
        for &k in list {
            let spec = &self.specs[k as usize];
            if t < spec.start || t >= spec.stop {
                continue;
            }
            let count = &mut self.counts[k as usize];
            if count.packets >= spec.max_packets {
                count.beyond_limit += 1;
                continue;
            }
            count.packets += 1;
            let pkt = CapturedPacket {
                capture: k,
                t,
                src: pkt.src,
                dst: pkt.dst,
                size: pkt.size,
                dscp: pkt.dscp,
                ecn: pkt.ecn,
                payload,
            };
            self.order += 1;
            self.pending.push(Pending { order: self.order, pkt });
        }
        // Every later capture is stamped at or after `now`: what is stamped up to it is final.
        self.flush(now);
    }

    fn flush(&mut self, upto: SimTime) {
        while self.pending.peek().is_some_and(|p| p.pkt.t <= upto) {
            let p = self.pending.pop().expect("peeked");
            self.sink.packet(&p.pkt);
        }
    }

    /// The run ended at `end`: hand over what is stamped before it, forget transmissions a lazy
    /// port had planned for later, and give the counts.
    pub(crate) fn finish(mut self, end: SimTime) -> Vec<CaptureCount> {
        while let Some(p) = self.pending.pop() {
            if p.pkt.t < end {
                self.sink.packet(&p.pkt);
            } else {
                self.counts[p.pkt.capture as usize].packets -= 1;
            }
        }
        self.counts
    }
}
