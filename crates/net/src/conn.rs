//! Connections: a flow's two endpoints and what the network keeps for them, and the glue that
//! turns what an endpoint emits into packets and keeps its timer event pending.

use crate::app::AppStep;
use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowSpec, Lifecycle};
use crate::lifecycle::Origin;
use crate::packet::{LinkNext, Packet, Payload};
use crate::topology::NodeId;
use ccsim_engine::{EventQueue, SimTime};
use ccsim_tcp::Endpoint;

/// Which end of a connection: the client (the flow's sender, which connects) or the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client = 0,
    Server = 1,
}

impl Side {
    /// Index into a connection's per-side arrays.
    #[inline(always)]
    pub(crate) fn index(self) -> usize {
        self as usize
    }
    /// The side a packet is received by (`Payload::Tcp::to_server`).
    #[inline(always)]
    pub(crate) fn receiver(to_server: bool) -> Side {
        if to_server {
            Side::Server
        } else {
            Side::Client
        }
    }
    /// The side that sent a packet travelling towards `to_server`.
    #[inline(always)]
    pub(crate) fn sender(to_server: bool) -> Side {
        Side::receiver(!to_server)
    }
    /// Whether a packet this side sends travels towards the server.
    #[inline(always)]
    pub(crate) fn sends_to_server(self) -> bool {
        self == Side::Client
    }
}

pub(crate) struct Conn {
    pub(crate) client: Endpoint,
    pub(crate) server: Endpoint,
    pub(crate) spec: FlowSpec,
    pub(crate) flow_hash: u32,
    /// Each direction's source route in `Sim::paths` (`Packet::NO_PATH` if it has none),
    /// indexed by the side that sends.
    pub(crate) path: [u32; 2],
    /// The room each direction's path has in `paths` (a reused slot rewrites it in place).
    pub(crate) path_room: [u32; 2],
    /// Each side's host NIC when it is a lazy port (`u32::MAX` otherwise), by side.
    pub(crate) lazy_nic: [u32; 2],
    pub(crate) timer: [Option<SimTime>; 2],
    pub(crate) established: Option<SimTime>,
    pub(crate) end: Option<SimTime>,
    pub(crate) completion: Option<SimTime>,
    pub(crate) started: bool,
    /// RPC flows: when the current RPC was written, and the latencies of completed ones.
    pub(crate) rpc_start: SimTime,
    pub(crate) rpc_latencies: Vec<SimTime>,
    /// The flow's number in the run.
    pub(crate) id: u64,
    pub(crate) origin: Origin,
    /// Packets of the connection in the network (sent and neither delivered nor dropped).
    pub(crate) in_flight: u32,
    /// Closed and handed over; the slot is free.
    pub(crate) released: bool,
    /// A pooled connection's current exchange (None: idle, or not pooled).
    pub(crate) msg: Option<Message>,
}

/// An exchange in progress on a pooled connection: the flow it is, and the byte counts that
/// mark its steps (cumulative `bytes_received` of each side).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Message {
    pub(crate) id: u64,
    pub(crate) start: SimTime,
    pub(crate) group: u64,
    /// It opened the connection (its time includes the handshake).
    pub(crate) opened: bool,
    pub(crate) request: u64,
    pub(crate) response: u64,
    /// The server has the whole request when its `bytes_received` reaches this ...
    pub(crate) server_has_request: u64,
    /// ... and the client the whole response at this.
    pub(crate) client_has_response: u64,
    pub(crate) responded: bool,
}

impl Conn {
    #[inline(always)]
    pub(crate) fn ep(&self, side: Side) -> &Endpoint {
        match side {
            Side::Client => &self.client,
            Side::Server => &self.server,
        }
    }
    #[inline(always)]
    pub(crate) fn ep_mut(&mut self, side: Side) -> &mut Endpoint {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }
    /// The hosts a packet from `side` leaves and reaches.
    #[inline(always)]
    pub(crate) fn hosts(&self, side: Side) -> (NodeId, NodeId) {
        match side {
            Side::Client => (self.spec.src, self.spec.dst),
            Side::Server => (self.spec.dst, self.spec.src),
        }
    }
}

impl<Q: EventQueue<Ev>> Core<Q> {
    // ---- endpoints ----

    /// Turn what an endpoint emitted into packets, note milestones, re-arm its timer.
    pub(crate) fn after_endpoint(&mut self, ci: usize, side: Side, now: SimTime) {
        let mut out = std::mem::take(&mut self.out);
        {
            let c = &self.conns[ci];
            let (src, dst) = c.hosts(side);
            let (dscp, flow_hash, path) = (c.spec.dscp, c.flow_hash, c.path[side.index()]);
            // A source-routed segment's first port, known before the packet is written: the
            // enqueue then does not wait to read the route back from the packet just stored.
            let first = (path != Packet::NO_PATH).then(|| self.paths[path as usize] as usize);
            self.conns[ci].in_flight += out.len() as u32;
            for seg in out.drain(..) {
                let pkt = Packet {
                    src,
                    dst,
                    size: seg.len + seg.header_len(),
                    dscp,
                    ecn: seg.ecn,
                    flow_hash,
                    path,
                    hop: first.is_some() as u8,
                    link_next: LinkNext::NONE,
                    payload: Payload::Tcp { conn: ci as u32, to_server: side.sends_to_server(), seg },
                };
                let id = self.pool.alloc(pkt);
                match first {
                    Some(pi) => self.enqueue(pi, id, now),
                    None => self.forward(src, id, now),
                }
            }
        }
        self.out = out;
        let throttled = {
            let c = &self.conns[ci];
            c.ep(side).tsq_throttled()
        };
        if throttled {
            if let Some(pi) = self.lazy_nic(ci, side) {
                self.ensure_tsq_wake(pi);
            }
        }
        let c = &mut self.conns[ci];
        if c.established.is_none() && c.client.is_established() {
            c.established = Some(now);
        }
        if self.app_after_socket(ci, side, now) == AppStep::Wrote {
            return self.after_endpoint(ci, side, now);
        }
        self.resched(ci, side);
        self.return_local_drops(now);
        if self.conns[ci].spec.lifecycle == Lifecycle::CloseWhenDone {
            self.release_if_closed(ci);
        }
    }

    pub(crate) fn resched(&mut self, ci: usize, side: Side) {
        let c = &mut self.conns[ci];
        let deadline = c.ep(side).next_deadline();
        let slot = &mut c.timer[side.index()];
        if let Some(d) = deadline {
            if slot.is_none_or(|s| d < s) {
                *slot = Some(d);
                self.q.schedule(d, Ev::Timer(ci as u32, side));
            }
        }
    }

    pub(crate) fn timer(&mut self, ci: usize, side: Side, now: SimTime) {
        let c = &mut self.conns[ci];
        if c.timer[side.index()] != Some(now) {
            return; // superseded by an earlier event, or the connection was released
        }
        c.timer[side.index()] = None;
        self.settle_nic(ci, side, now);
        let c = &mut self.conns[ci];
        let ep = c.ep_mut(side);
        if ep.next_deadline().is_some_and(|d| d <= now) {
            ep.on_timer(now, &mut self.out);
        }
        self.after_endpoint(ci, side, now);
    }
}
