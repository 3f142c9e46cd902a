//! Connections: a flow's two endpoints and what the network keeps for them, and the glue that
//! turns what an endpoint emits into packets and keeps its timer event pending.

use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowKind, FlowSpec};
use crate::packet::{Packet, Payload};
use ccsim_engine::{EventQueue, SimTime};
use ccsim_tcp::Endpoint;

pub(crate) struct Conn {
    pub(crate) client: Endpoint,
    pub(crate) server: Endpoint,
    pub(crate) spec: FlowSpec,
    pub(crate) flow_hash: u32,
    /// Each direction's source route in `Sim::paths` (`Packet::NO_PATH` if it has none),
    /// indexed by `server` (the side that sends).
    pub(crate) path: [u32; 2],
    /// Each side's host NIC when it is a lazy port (`u32::MAX` otherwise), indexed by `server`.
    pub(crate) lazy_nic: [u32; 2],
    pub(crate) timer: [Option<SimTime>; 2],
    pub(crate) established: Option<SimTime>,
    pub(crate) end: Option<SimTime>,
    pub(crate) completion: Option<SimTime>,
    pub(crate) started: bool,
    /// RPC flows: when the current RPC was written, and the latencies of completed ones.
    pub(crate) rpc_start: SimTime,
    pub(crate) rpc_latencies: Vec<SimTime>,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    // ---- endpoints ----

    /// Turn what an endpoint emitted into packets, note milestones, re-arm its timer.
    pub(crate) fn after_endpoint(&mut self, ci: usize, server: bool, now: SimTime) {
        let mut out = std::mem::take(&mut self.out);
        {
            let c = &self.conns[ci];
            let (src, dst) = if server { (c.spec.dst, c.spec.src) } else { (c.spec.src, c.spec.dst) };
            let (dscp, flow_hash, path) = (c.spec.dscp, c.flow_hash, c.path[server as usize]);
            // A source-routed segment's first port, known before the packet is written: the
            // enqueue then does not wait to read the route back from the packet just stored.
            let first = (path != Packet::NO_PATH).then(|| self.paths[path as usize] as usize);
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
                    payload: Payload::Tcp { conn: ci as u32, to_server: !server, seg },
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
            if server {
                c.server.tsq_throttled()
            } else {
                c.client.tsq_throttled()
            }
        };
        if throttled {
            if let Some(pi) = self.lazy_nic(ci, server) {
                self.ensure_tsq_wake(pi);
            }
        }
        let c = &mut self.conns[ci];
        if c.established.is_none() && c.client.is_established() {
            c.established = Some(now);
        }
        match c.spec.kind {
            FlowKind::Transfer { .. } => {
                if c.completion.is_none() && c.started && c.client.all_acked() {
                    c.completion = Some(now);
                    c.end = Some(now);
                }
            }
            FlowKind::Rpc { bytes, .. } => {
                // The next RPC starts as soon as the previous one is acknowledged, until stopped.
                if c.started && c.end.is_none() && !server && c.client.all_acked() {
                    c.rpc_latencies.push(now - c.rpc_start);
                    c.rpc_start = now;
                    self.set_qdisc_room(ci, false);
                    let c = &mut self.conns[ci];
                    c.client.write(now, bytes, &mut self.out);
                    return self.after_endpoint(ci, server, now);
                }
            }
            FlowKind::Bulk { .. } => {}
        }
        self.resched(ci, server);
        self.return_local_drops(now);
    }

    pub(crate) fn resched(&mut self, ci: usize, server: bool) {
        let c = &mut self.conns[ci];
        let ep = if server { &c.server } else { &c.client };
        let slot = &mut c.timer[server as usize];
        if let Some(d) = ep.next_deadline() {
            if slot.is_none_or(|s| d < s) {
                *slot = Some(d);
                self.q.schedule(d, Ev::Timer(ci as u32, server));
            }
        }
    }

    pub(crate) fn timer(&mut self, ci: usize, server: bool, now: SimTime) {
        let c = &mut self.conns[ci];
        if c.timer[server as usize] != Some(now) {
            return; // superseded by an earlier event
        }
        c.timer[server as usize] = None;
        self.settle_nic(ci, server, now);
        let c = &mut self.conns[ci];
        let ep = if server { &mut c.server } else { &mut c.client };
        if ep.next_deadline().is_some_and(|d| d <= now) {
            ep.on_timer(now, &mut self.out);
        }
        self.after_endpoint(ci, server, now);
    }
}
