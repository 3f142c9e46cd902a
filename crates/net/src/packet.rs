use crate::topology::NodeId;
use ccsim_engine::SimTime;
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
/// The fields a switch reads (destination, size, source route, DSCP, ECN) come first and take
/// 16 bytes, so that in the pool (16-byte aligned, 112-byte slots) they never straddle two cache
/// lines; the segment follows and is read only by the host that sends or receives it.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
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
    /// Hash of the flow 5-tuple, for ECMP.
    pub flow_hash: u32,
    pub src: NodeId,
    pub payload: Payload,
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
    fn switch_fields_fit_in_the_first_16_bytes() {
        for end in [
            offset_of!(Packet, dst) + 4,
            offset_of!(Packet, size) + 4,
            offset_of!(Packet, path) + 4,
            offset_of!(Packet, dscp) + 1,
            offset_of!(Packet, ecn) + 1,
            offset_of!(Packet, hop) + 1,
        ] {
            assert!(end <= 16);
        }
        assert_eq!(size_of::<Packet>() % 16, 0, "pool slots stay 16-byte aligned");
    }
}
