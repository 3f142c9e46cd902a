use crate::topology::NodeId;
use ccsim_engine::{PoolId, SimTime};
use ccsim_tcp::{Ecn, Segment};

/// What a packet carries.
#[derive(Clone, Copy, Debug)]
pub enum Payload {
    /// A TCP segment of connection `conn`, travelling towards side `to_server` of it.
    Tcp { conn: u32, to_server: bool, seg: Segment },
    /// An ICMP echo request of probe `probe`, sent at `sent`.
    PingRequest { probe: u32, seq: u32, sent: SimTime },
    /// The echo reply.
    PingReply { probe: u32, seq: u32, sent: SimTime },
}

/// A packet in flight: a small plain struct kept in a pool and moved by index.
///
/// Two cache lines (128-byte slots, 64-byte aligned). The first holds what a switch and a link
/// read — destination, size, source route, DSCP, ECN, and the packet behind this one on its
/// link — and the start of the payload; the segment is read only by the host that sends or
/// receives it.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Packet {
    pub dst: NodeId,
    /// Bytes on the wire (headers included): what queues count and links serialise.
    pub size: u32,
    /// Source route: where the packet's path starts in the simulator's path table
    /// (`NO_PATH`: each node looks the next hop up), and how many hops it has taken.
    pub path: u32,
    /// DiffServ code point, used to pick a class at a port.
    pub dscp: u8,
    /// The IP ECN field; switches may set CE.
    pub ecn: Ecn,
    pub hop: u8,
    /// The packet put on the same link after this one, while this one is on the link.
    pub link_next: LinkNext,
    /// Hash of the flow 5-tuple, for ECMP.
    pub flow_hash: u32,
    pub src: NodeId,
    pub payload: Payload,
}

/// A link is a FIFO list threaded through its packets: each packet on a link names the one put
/// on the link after it and when that one reaches the far end. Written when the next packet is
/// put on the link (this packet is then the link's tail), read when this one arrives — so an
/// arrival finds what to schedule next in the packet it already holds, not in a ring elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkNext {
    /// `LinkNext::NONE.id` when no packet follows (yet).
    pub id: PoolId,
    pub at: SimTime,
}

impl LinkNext {
    /// No packet behind.
    pub const NONE: LinkNext = LinkNext { id: PoolId(u32::MAX), at: SimTime::ZERO };
}

impl Packet {
    /// No source route: forward by the route table and the flow hash.
    pub const NO_PATH: u32 = u32::MAX;
    pub fn is_data(&self) -> bool {
        matches!(self.payload, Payload::Tcp { seg, .. } if seg.len > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn switch_and_link_fields_fit_in_the_first_line() {
        for end in [
            offset_of!(Packet, dst) + 4,
            offset_of!(Packet, size) + 4,
            offset_of!(Packet, path) + 4,
            offset_of!(Packet, dscp) + 1,
            offset_of!(Packet, ecn) + 1,
            offset_of!(Packet, hop) + 1,
            offset_of!(Packet, link_next) + size_of::<LinkNext>(),
        ] {
            assert!(end <= 64, "a switch's and a link's fields share the first line");
        }
        assert_eq!(size_of::<Packet>(), 128, "two lines per pool slot");
        assert_eq!(std::mem::align_of::<Packet>(), 64);
    }
}
