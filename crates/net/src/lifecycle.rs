//! Connection lifecycle: a connection opened at any simulated time in a reusable slot, its
//! packets counted while they are in the network, its ephemeral port taken and given back, and
//! its memory released once both sockets have closed and its last packet has left the network.
//!
//! Flows given up front (`Sim::new`) keep slots `0..static_flows` for the whole run, so their
//! numbering, random streams and records are what they always were. Flows a traffic opens
//! (`Sim::add_traffic`) take a free slot, or a new one: the table is as long as the most
//! connections ever open at once, never the number of flows so far.

use crate::conn::Message;
use crate::conn::{Conn, Side};
use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowDone, FlowKind, FlowSpec, Lifecycle};
use crate::ideal::{ideal_exchange, ideal_fct, Hop, WireSizes};
use crate::packet::{Packet, Payload};
use crate::route::trace_path;
use crate::topology::NodeId;
use ccsim_engine::{EventQueue, PoolId, Rng, SimTime};
use ccsim_tcp::{Endpoint, TcpState};

/// Where a connection came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The n-th flow given up front.
    Given,
    /// Opened by traffic `traffic` (index in `Core::traffic`).
    Traffic(u32),
}

/// Ephemeral ports (`net.ipv4.ip_local_port_range`, 32768-60999 by default), per host: a
/// connect takes the next free port after the last one taken, as a host cycling through its
/// range does; a port is free again once its connection is released. Ports are unique per
/// host (stricter than Linux, which only needs the 4-tuple unique).
#[derive(Default)]
pub(crate) struct EphemeralPorts {
    /// Per host (allocated at its first connect): a bit per port of the range, and the cursor.
    hosts: Vec<Option<Box<HostPorts>>>,
}

struct HostPorts {
    used: Vec<u64>,
    next: u16,
}

/// `ip_local_port_range`'s default.
pub const EPHEMERAL_LOW: u16 = 32768;
pub const EPHEMERAL_HIGH: u16 = 60999;
const EPHEMERAL_COUNT: usize = (EPHEMERAL_HIGH - EPHEMERAL_LOW) as usize + 1;

impl Origin {
    /// The traffic's index (`FlowDone::traffic`), u32::MAX for a flow given up front.
    pub(crate) fn traffic(self) -> u32 {
        match self {
            Origin::Traffic(t) => t,
            Origin::Given => u32::MAX,
        }
    }
}

impl EphemeralPorts {
    /// A free port of `host`, or None when all are taken (connect() fails with EADDRNOTAVAIL).
    pub(crate) fn take(&mut self, host: NodeId) -> Option<u16> {
        let h = host.0 as usize;
        if self.hosts.len() <= h {
            self.hosts.resize_with(h + 1, || None);
        }
        let hp = self.hosts[h]
            .get_or_insert_with(|| Box::new(HostPorts { used: vec![0; EPHEMERAL_COUNT.div_ceil(64)], next: 0 }));
        for k in 0..EPHEMERAL_COUNT {
            let i = (hp.next as usize + k) % EPHEMERAL_COUNT;
            if hp.used[i / 64] & (1 << (i % 64)) == 0 {
                hp.used[i / 64] |= 1 << (i % 64);
                hp.next = ((i + 1) % EPHEMERAL_COUNT) as u16;
                return Some(EPHEMERAL_LOW + i as u16);
            }
        }
        None
    }

    pub(crate) fn give_back(&mut self, host: NodeId, port: u16) {
        if let Some(Some(hp)) = self.hosts.get_mut(host.0 as usize) {
            let i = (port - EPHEMERAL_LOW) as usize;
            hp.used[i / 64] &= !(1 << (i % 64));
        }
    }
}

/// Random stream of flow `id` (initial sequence numbers, ECMP hash); ports use 0x1000_0000 + port.
pub(crate) fn flow_stream(id: u64) -> u64 {
    0x2000_0000 + id
}

impl<Q: EventQueue<Ev>> Core<Q> {
    /// Build flow `id`'s connection: its two endpoints, flow hash and source routes (appended
    /// to `paths`, or written into `path_at` when the slot already has room for them).
    pub(crate) fn new_conn(
        &mut self,
        spec: FlowSpec,
        id: u64,
        origin: Origin,
        path_at: [Option<(u32, u32)>; 2],
    ) -> Conn {
        let mut rng = Rng::new(self.cfg.seed, flow_stream(id));
        let client = Endpoint::client(spec.client.clone(), rng.next_u32());
        let server = Endpoint::listen(spec.server.clone(), rng.next_u32());
        let flow_hash = rng.next_u32();
        let mut path = [Packet::NO_PATH; 2];
        let mut room = [0u32; 2];
        for (k, (a, b)) in [(spec.src, spec.dst), (spec.dst, spec.src)].into_iter().enumerate() {
            if let Some(hops) = trace_path(&self.topo, &self.routes, a, b, flow_hash) {
                match path_at[k] {
                    Some((at, cap)) if hops.len() as u32 <= cap => {
                        self.paths[at as usize..at as usize + hops.len()].copy_from_slice(&hops);
                        (path[k], room[k]) = (at, cap);
                    }
                    _ => {
                        (path[k], room[k]) = (self.paths.len() as u32, hops.len() as u32);
                        self.paths.extend(hops);
                    }
                }
            }
        }
        let nic = |h: NodeId| match self.host_nic[h.0 as usize] {
            p if p != u32::MAX && self.ports[p as usize].lazy => p,
            _ => u32::MAX,
        };
        let lazy_nic = [nic(spec.src), nic(spec.dst)];
        Conn {
            client,
            server,
            spec,
            flow_hash,
            path,
            path_room: room,
            lazy_nic,
            timer: [None, None],
            established: None,
            end: None,
            completion: None,
            started: false,
            rpc_start: SimTime::ZERO,
            rpc_latencies: Vec::new(),
            id,
            origin,
            in_flight: 0,
            released: false,
            msg: None,
        }
    }

    /// Open a connection for a flow arriving now: a free slot (or a new one), an ephemeral
    /// port, and the flow started at once (connect, write, and close if it is short-lived).
    /// A host without a free port cannot connect: the flow is recorded as not completed.
    pub(crate) fn open_flow(&mut self, mut spec: FlowSpec, traffic: u32, now: SimTime) {
        let id = self.next_flow_id;
        self.next_flow_id += 1;
        let pooled = spec.lifecycle == Lifecycle::Pooled;
        if pooled {
            if let Some(ci) = self.pools.get_mut(&(traffic, spec.src, spec.dst)).and_then(|idle| idle.pop()) {
                return self.start_exchange(ci as usize, id, &spec, false, now);
            }
        }
        let Some(port) = self.ephemeral.take(spec.src) else {
            self.stats.connect_failures += 1;
            let done = FlowDone {
                id,
                traffic,
                group: spec.group,
                src: spec.src,
                dst: spec.dst,
                size: flow_size(&spec.kind),
                start: now,
                completion: None,
                ideal: None,
                opened_connection: true,
                cc: spec.client.cc.name(),
                dscp: spec.dscp,
                retransmits: 0,
                rto_count: 0,
            };
            return self.hand_over(done);
        };
        spec.src_port = port;
        spec.start = now;
        spec.connect = None;
        let slot = match self.free_conns.pop() {
            Some(slot) => {
                let old = &self.conns[slot as usize];
                let path_at =
                    [0, 1].map(|k| (old.path[k] != Packet::NO_PATH).then_some((old.path[k], old.path_room[k])));
                let conn = self.new_conn(spec, id, Origin::Traffic(traffic), path_at);
                self.conns[slot as usize] = conn;
                slot as usize
            }
            None => {
                let conn = self.new_conn(spec, id, Origin::Traffic(traffic), [None, None]);
                self.conns.push(conn);
                self.conns.len() - 1
            }
        };
        self.stats.flows_opened += 1;
        self.stats.conns_high_water = self.stats.conns_high_water.max(self.conns.len() - self.free_conns.len());
        if pooled {
            let spec = self.conns[slot].spec.clone();
            return self.start_exchange(slot, id, &spec, true, now);
        }
        self.flow_start(slot, now);
    }

    /// Start flow `id`'s exchange on pooled connection `ci` (just opened, or idle).
    fn start_exchange(&mut self, ci: usize, id: u64, spec: &FlowSpec, opened: bool, now: SimTime) {
        let FlowKind::Exchange { request, response } = spec.kind else {
            panic!("a pooled flow is an exchange (FlowKind::Exchange)");
        };
        let c = &mut self.conns[ci];
        c.msg = Some(Message {
            id,
            start: now,
            group: spec.group,
            opened,
            request,
            response,
            server_has_request: c.server.stats().bytes_received + request,
            client_has_response: c.client.stats().bytes_received + response,
            responded: false,
        });
        if opened {
            return self.flow_start(ci, now);
        }
        self.stats.exchanges_reused += 1;
        self.settle_nic(ci, Side::Client, now);
        self.conns[ci].client.write(now, request, &mut self.out);
        self.after_endpoint(ci, Side::Client, now);
    }

    /// The application's part of an exchange after a side ran: the server answers once it has
    /// the whole request (true: it wrote); the client, with the whole response, completes the
    /// flow and gives the connection back to its pool.
    pub(crate) fn exchange_step(&mut self, ci: usize, side: Side, now: SimTime) -> bool {
        let c = &mut self.conns[ci];
        let Some(m) = c.msg else { return false };
        match side {
            Side::Server if !m.responded && c.server.stats().bytes_received >= m.server_has_request => {
                c.msg = Some(Message { responded: true, ..m });
                self.set_qdisc_room(ci, Side::Server);
                let c = &mut self.conns[ci];
                c.server.write(now, m.response, &mut self.out);
                true
            }
            Side::Client if m.responded && c.client.stats().bytes_received >= m.client_has_response => {
                let done = self.exchange_done(ci, Some(now));
                let c = &mut self.conns[ci];
                c.msg = None;
                let (t, src, dst) = (done.traffic, c.spec.src, c.spec.dst);
                self.pools.entry((t, src, dst)).or_default().push(ci as u32);
                self.traffic_completed(t as usize, &done, now);
                self.hand_over(done);
                false
            }
            _ => false,
        }
    }

    /// The record of pooled connection `ci`'s current exchange.
    pub(crate) fn exchange_done(&self, ci: usize, completion: Option<SimTime>) -> FlowDone {
        let c = &self.conns[ci];
        let m = c.msg.expect("an exchange in progress");
        let st = c.client.stats();
        FlowDone {
            id: m.id,
            traffic: c.origin.traffic(),
            group: m.group,
            src: c.spec.src,
            dst: c.spec.dst,
            size: m.response,
            start: m.start,
            completion,
            ideal: self.ideal_of(ci, &FlowKind::Exchange { request: m.request, response: m.response }, m.opened),
            opened_connection: m.opened,
            cc: c.client.cc_name(),
            dscp: c.spec.dscp,
            retransmits: st.total_retrans + c.server.stats().total_retrans,
            rto_count: st.rto_count + c.server.stats().rto_count,
        }
    }

    /// One of connection `ci`'s packets has left the network (delivered or dropped); the
    /// connection is released if that was its last and it is closed.
    #[inline]
    pub(crate) fn packet_gone(&mut self, ci: usize) {
        let c = &mut self.conns[ci];
        c.in_flight -= 1;
        if c.in_flight == 0 && c.spec.lifecycle == Lifecycle::CloseWhenDone {
            self.release_if_closed(ci);
        }
    }

    /// Free packet `id`, which left the network without reaching its socket.
    #[inline]
    pub(crate) fn drop_packet(&mut self, id: PoolId) {
        if let Payload::Tcp { conn, .. } = self.pool.get(id).payload {
            self.pool.free(id);
            self.packet_gone(conn as usize);
        } else {
            self.pool.free(id);
        }
    }

    /// Release a short-lived connection once both sockets are closed (the client in TIME-WAIT
    /// or CLOSED, the server CLOSED) and none of its packets remains in the network.
    pub(crate) fn release_if_closed(&mut self, ci: usize) {
        let c = &self.conns[ci];
        let closed = c.in_flight == 0
            && !c.released
            && matches!(c.client.state(), TcpState::TimeWait | TcpState::Closed)
            && c.server.state() == TcpState::Closed;
        if !closed {
            return;
        }
        let done = self.flow_done(ci);
        // TSQ entries still waiting at either host's NIC go with the connection (they would
        // return budget to whatever connection takes the slot next).
        for pi in self.conns[ci].lazy_nic {
            if pi != u32::MAX {
                self.ports[pi as usize].drop_tsq_of(ci as u32);
            }
        }
        let c = &mut self.conns[ci];
        c.released = true;
        c.timer = [None, None];
        let (host, port) = (c.spec.src, c.spec.src_port);
        self.ephemeral.give_back(host, port);
        self.free_conns.push(ci as u32);
        self.stats.flows_released += 1;
        self.hand_over(done);
    }

    /// What connection `ci`'s flow did, as it stands.
    pub(crate) fn flow_done(&self, ci: usize) -> FlowDone {
        let c = &self.conns[ci];
        let st = c.client.stats();
        FlowDone {
            id: c.id,
            traffic: c.origin.traffic(),
            group: c.spec.group,
            src: c.spec.src,
            dst: c.spec.dst,
            size: flow_size(&c.spec.kind),
            start: c.spec.start,
            completion: c.completion,
            ideal: self.ideal_of(ci, &c.spec.kind, c.spec.connect.is_none()),
            opened_connection: c.spec.connect.is_none(),
            cc: c.client.cc_name(),
            dscp: c.spec.dscp,
            retransmits: st.total_retrans,
            rto_count: st.rto_count,
        }
    }

    /// Connection `ci`'s flow alone in the network (`ideal.rs`), over its source routes.
    pub(crate) fn ideal_of(&self, ci: usize, kind: &FlowKind, handshake: bool) -> Option<SimTime> {
        let c = &self.conns[ci];
        let hops = |side: Side| -> Option<Vec<Hop>> {
            let start = c.path[side.index()];
            if start == Packet::NO_PATH {
                return None;
            }
            let (_, dst) = c.hosts(side);
            let mut hops = Vec::new();
            for &p in &self.paths[start as usize..] {
                let port = &self.ports[p as usize];
                hops.push(Hop { rate_bps: port.byte_time.bps(), delay: port.delay });
                if port.to == dst {
                    return Some(hops);
                }
            }
            None
        };
        let (fwd, rev) = (hops(Side::Client)?, hops(Side::Server)?);
        let (a, b) = (&c.spec.client, &c.spec.server);
        let ts = a.timestamps && b.timestamps;
        let opts = |ts: bool, sack: bool, ws: bool| {
            4 + if ts {
                12
            } else if sack {
                4
            } else {
                0
            } + if ws { 4 } else { 0 }
        };
        let w = WireSizes {
            mss: a.advmss.min(b.advmss) - if ts { 12 } else { 0 },
            header: 40 + if ts { 12 } else { 0 },
            syn: 40 + opts(a.timestamps, a.sack, a.window_scaling),
            synack: 40 + opts(ts, a.sack && b.sack, a.window_scaling && b.window_scaling),
            l2: self.cfg.l2_overhead,
        };
        Some(match *kind {
            FlowKind::Exchange { request, response } => ideal_exchange(&fwd, &rev, request, response, &w, handshake),
            ref k => ideal_fct(&fwd, &rev, flow_size(k), &w, handshake),
        })
    }

    /// Hand a finished flow to the sink (or keep it for the records).
    pub(crate) fn hand_over(&mut self, done: FlowDone) {
        match &mut self.sink {
            Some(sink) => sink.flow_done(done),
            None => self.done.push(done),
        }
    }

    /// The application's close of a short-lived connection: the server closes once it has
    /// read the client's FIN (end of file).
    pub(crate) fn close_on_eof(&mut self, ci: usize, side: Side, now: SimTime) -> bool {
        let c = &mut self.conns[ci];
        if side == Side::Server && c.server.state() == TcpState::CloseWait && c.server.readable() == 0 {
            c.server.close(now, &mut self.out);
            return true;
        }
        false
    }
}

/// Bytes a flow writes (0 for an endless one).
pub(crate) fn flow_size(kind: &FlowKind) -> u64 {
    match *kind {
        FlowKind::Transfer { bytes } | FlowKind::Rpc { bytes, .. } => bytes,
        FlowKind::Exchange { response, .. } => response,
        FlowKind::Bulk { .. } => 0,
    }
}

/// A sink for flows as they finish: `fct.csv` written while the run goes on, so that a run of
/// millions of flows keeps none of them in memory.
pub trait FlowSink: Send {
    fn flow_done(&mut self, done: FlowDone);
}

impl<F: FnMut(FlowDone) + Send> FlowSink for F {
    fn flow_done(&mut self, done: FlowDone) {
        self(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ephemeral_ports_cycle_through_the_range_and_skip_ports_in_use() {
        let mut p = EphemeralPorts::default();
        let h = NodeId(3);
        assert_eq!(p.take(h), Some(32768));
        assert_eq!(p.take(h), Some(32769));
        p.give_back(h, 32768);
        // The cursor moves on; the freed port comes round again only after the range.
        assert_eq!(p.take(h), Some(32770));
        let mut in_use = 2; // 32769 and 32770
        while p.take(h).is_some() {
            in_use += 1;
        }
        assert_eq!(in_use, EPHEMERAL_COUNT, "every port of the range, the freed one included, is taken once more");
        p.give_back(h, 40000);
        assert_eq!(p.take(h), Some(40000));
        assert_eq!(p.take(NodeId(0)), Some(32768), "each host has its own range");
    }
}
