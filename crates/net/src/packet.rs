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
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub src: NodeId,
    pub dst: NodeId,
    /// Bytes on the wire (headers included): what queues count and links serialise.
    pub size: u32,
    /// DiffServ code point, used to pick a class at a port.
    pub dscp: u8,
    /// The IP ECN field; switches may set CE.
    pub ecn: Ecn,
    /// Hash of the flow 5-tuple, for ECMP.
    pub flow_hash: u32,
    pub payload: Payload,
}

impl Packet {
    pub fn is_data(&self) -> bool {
        matches!(self.payload, Payload::Tcp { seg, .. } if seg.len > 0)
    }
}
