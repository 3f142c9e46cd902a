//! The event loop. Every component keeps at most one pending event: a port its current
//! transmission, a link the arrival of its head packet, an endpoint its earliest timer.

use crate::flows::{FlowKind, FlowRecord, FlowSpec, PingRecord, PingSpec};
use crate::gro::{gro_poll, GroBuf, GroIn, GroOut, NAPI_POLL_WEIGHT};
use crate::packet::{Packet, Payload};
use crate::queue::{EnqueueResult, PortQueue, QueueStats};
use crate::topology::{NodeId, NodeKind, PortId, Routes, Topology, TopologyError};
use ccsim_engine::{EventQueue, HeapQueue, Pool, PoolId, Rng, SimTime, WheelQueue};
use ccsim_tcp::{Endpoint, QdiscDrop, Segment, TcpFlags, TcpInfo, TcpStats};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone(u32),
    /// A lazy host NIC finished a transmission that a TSQ-throttled socket waits for.
    TsqWake(u32),
    Arrive(u32),
    /// An fq qdisc's watchdog: a throttled flow's departure time has come.
    Watchdog(u32),
    Timer(u32, bool),
    FlowStart(u32),
    /// A flow's connection opened ahead of its first write (`FlowSpec::connect`).
    FlowConnect(u32),
    FlowStop(u32),
    Ping(u32),
    Sample,
    /// A host's NIC raises its receive interrupt: the packets it holds go up the stack.
    RxFlush(u32),
}

/// Run-wide settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub duration: SimTime,
    /// Queue and flow sampling interval (None: no sampling).
    pub sample_interval: Option<SimTime>,
    /// Ports whose occupancy is sampled.
    pub monitor: Vec<PortId>,
    /// Keep time series (queue per monitored port, cwnd and bytes per flow) besides summaries.
    pub series: bool,
    /// Extra bytes per packet on every link (Ethernet framing), added to serialisation time.
    pub l2_overhead: u32,
    /// Host timing noise: a packet leaving a host NIC arrives up to this much later (uniform,
    /// FIFO order kept). Zero: hosts are perfectly periodic, as idealised simulators assume.
    pub host_jitter: SimTime,
    /// Receive interrupt coalescing (`ethtool -C rx-usecs`): a host NIC hands what it received
    /// to the stack this long after the first packet of a batch. Zero: at once, one by one.
    pub rx_coalesce: SimTime,
    /// Generic receive offload in each host's receive path (`gro.rs`).
    pub gro: bool,
    /// Let a packet skip its arrival event at a switch port that one link alone feeds
    /// (`express_ports`): the same results with fewer events. Off only to check that claim.
    pub express: bool,
    /// The event list: by network size (`WHEEL_MIN_PORTS`), or forced, only to check that both
    /// give the same run.
    pub event_list: EventList,
}

/// Which event list a run keeps its events on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EventList {
    /// A timing wheel for networks of `WHEEL_MIN_PORTS` ports or more, else a binary heap.
    #[default]
    BySize,
    Heap,
    Wheel,
}

impl EventList {
    pub fn name(self) -> &'static str {
        match self {
            EventList::BySize => "by size",
            EventList::Heap => "heap",
            EventList::Wheel => "wheel",
        }
    }
}

/// A port: a queue and the link it feeds. Laid out by use (`repr(C)`, cache-line aligned):
/// line 0 holds what an arrival reads (the link's ring and where it leads) and the departure
/// times an arrival at the port checks, line 1 the rest of what queueing a packet reads and
/// counts, line 2 the departure ring (read while two or more packets wait) and the queue's
/// first fields; the rest after. A fat tree's thousand ports do not stay in the first-level
/// cache, and each line touched is a miss.
#[repr(C, align(64))]
struct Port {
    pipe: VecDeque<(SimTime, PoolId)>,
    to: NodeId,
    head_size: u32,
    /// Lazy port (`queue.lazy`: one class with arrival-time AQM): each packet's transmission
    /// start and end are computed when it is queued, so the port needs no `TxDone` events;
    /// (`head_start`, `head_size`) and then `starts` hold (start, size) of the packets still
    /// waiting, `busy_until` the end of the last transmission. The first waits in the port
    /// itself (`head_start` = `SimTime::MAX` when none): a port that rarely holds more than one
    /// packet, as most of a fat tree's do, then never reads its ring.
    head_start: SimTime,
    busy_until: SimTime,
    /// The port is a host's NIC: transmissions complete TCP Small Queues accounting.
    from_host: bool,
    /// Lazy port: arrival time of the last packet put on the link (the link is FIFO).
    last_at: SimTime,
    delay: SimTime,
    rate_bps: u64,
    loss: f64,
    busy_ns: u64,
    tx_bytes: u64,
    tx_packets: u64,
    /// Cold, but it fills line 1 so that `starts` begins line 2.
    link_drops: u64,
    starts: VecDeque<(SimTime, u32)>,
    queue: PortQueue,
    /// Lazy host NIC: the transmissions that will return TCP Small Queues budget, as (end,
    /// connection, server side, bytes), in order; `wake` is the pending `TsqWake`, scheduled
    /// only while a socket of this host is throttled.
    tsq: VecDeque<(SimTime, u32, bool, u64)>,
    wake: Option<SimTime>,
    tx: Option<PoolId>,
    rng: Rng,
    /// fq ports: the pending watchdog.
    watchdog: Option<SimTime>,
}

struct Conn {
    client: Endpoint,
    server: Endpoint,
    spec: FlowSpec,
    flow_hash: u32,
    /// Each direction's source route in `Sim::paths` (`Packet::NO_PATH` if it has none),
    /// indexed by `server` (the side that sends).
    path: [u32; 2],
    /// Each side's host NIC when it is a lazy port (`u32::MAX` otherwise), indexed by `server`.
    lazy_nic: [u32; 2],
    timer: [Option<SimTime>; 2],
    established: Option<SimTime>,
    end: Option<SimTime>,
    completion: Option<SimTime>,
    started: bool,
    /// RPC flows: when the current RPC was written, and the latencies of completed ones.
    rpc_start: SimTime,
    rpc_latencies: Vec<SimTime>,
}

/// One sample of a monitored port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortSample {
    pub t: SimTime,
    /// Packets queued (all classes), and per class for the first four classes.
    pub packets: u32,
    pub bytes: u64,
}

/// Counters of the whole run, for benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    pub data_packets_delivered: u64,
    pub packets_delivered: u64,
    pub pool_high_water: usize,
}

/// The simulation itself, generic over its event list (`Sim` picks one by network size).
struct Core<Q> {
    cfg: SimConfig,
    topo: Topology,
    q: Q,
    pool: Pool<Packet>,
    ports: Vec<Port>,
    routes: Routes,
    /// Source routes: per connection and direction, the ports a segment leaves by, host NIC
    /// first, as the route table and the flow hash would pick them hop by hop.
    paths: Vec<u32>,
    /// Prefetch the next event's packet (networks of `PREFETCH_MIN_PORTS` ports or more).
    prefetch_next: bool,
    /// Per port: the one port that feeds it, when a packet may skip its arrival event there
    /// (`express_ports`); `u32::MAX` otherwise. Empty when no port qualifies.
    express: Vec<u32>,
    /// The end of the current `run_until`: no packet is taken ahead of an event past it.
    horizon: SimTime,
    /// Per node: packets a host's NIC received and has not yet handed up (coalescing or GRO).
    rx_batch: Vec<Vec<PoolId>>,
    /// GRO's buffers, kept from poll to poll.
    gro: GroBuf,
    /// Per host: its only NIC when that runs fq, else u32::MAX; empty when no host runs fq.
    fq_nic: Vec<u32>,
    conns: Vec<Conn>,
    pings: Vec<(PingSpec, PingRecord, u32)>,
    out: Vec<Segment>,
    /// Data segments dropped by their own host's qdisc, waiting to be handed back: (connection,
    /// server side, segment, dropped by RED: NET_XMIT_CN rather than NET_XMIT_DROP).
    local_drops: Vec<(u32, bool, Segment, bool)>,
    stats: RunStats,
    /// Per monitored port: occupancy samples (packets) and optional series.
    queue_samples: Vec<Vec<u32>>,
    queue_series: Vec<Vec<PortSample>>,
    /// Per flow: (t, cwnd, bytes_acked, srtt_us) series when `series` is on.
    flow_series: Vec<Vec<(SimTime, u32, u64, u32)>>,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    fn new(
        cfg: SimConfig,
        topo: Topology,
        routes: Routes,
        flows: Vec<FlowSpec>,
        pings: Vec<PingSpec>,
    ) -> Result<Self, TopologyError> {
        for f in &flows {
            if routes.get(f.src.0 as usize, f.dst.0 as usize).is_empty() {
                return Err(TopologyError::NoRoute { from: topo.name(f.src).into(), to: topo.name(f.dst).into() });
            }
        }
        for p in &pings {
            if routes.get(p.src.0 as usize, p.dst.0 as usize).is_empty() {
                return Err(TopologyError::NoRoute { from: topo.name(p.src).into(), to: topo.name(p.dst).into() });
            }
        }
        let mut ports = Vec::with_capacity(2 * topo.links.len());
        for (i, l) in topo.links.iter().enumerate() {
            for (dir, from, to, qs) in [(0u64, l.a, l.b, &l.queue_ab), (1, l.b, l.a, &l.queue_ba)] {
                let mut queue = PortQueue::new(qs);
                queue.lazy = queue.supports_lazy();
                ports.push(Port {
                    tsq: VecDeque::new(),
                    wake: None,
                    watchdog: None,
                    busy_until: SimTime::ZERO,
                    head_start: SimTime::MAX,
                    head_size: 0,
                    starts: VecDeque::new(),
                    last_at: SimTime::ZERO,
                    to,
                    from_host: topo.kinds[from.0 as usize] == NodeKind::Host,
                    rate_bps: l.rate_bps,
                    delay: l.delay,
                    loss: l.loss,
                    queue,
                    tx: None,
                    pipe: VecDeque::new(),
                    busy_ns: 0,
                    tx_bytes: 0,
                    tx_packets: 0,
                    link_drops: 0,
                    rng: Rng::new(cfg.seed, 0x1000_0000 + 2 * i as u64 + dir),
                });
            }
        }
        let mut host_nic = vec![u32::MAX; topo.num_nodes()];
        let mut nics = vec![0u32; topo.num_nodes()];
        for p in 0..2 * topo.links.len() as u32 {
            let (from, _) = topo.port_ends(PortId(p));
            if topo.kinds[from.0 as usize] == NodeKind::Host {
                host_nic[from.0 as usize] = p;
                nics[from.0 as usize] += 1;
            }
        }
        // A host with one NIC running fq: its sockets learn the qdisc's room before they send.
        let fq_nic: Vec<u32> = host_nic
            .iter()
            .zip(&nics)
            .map(|(&p, &n)| if n == 1 && ports[p as usize].queue.fq.is_some() { p } else { u32::MAX })
            .collect();
        // Empty when no host runs fq: nothing to look up before a socket runs.
        let fq_nic = if fq_nic.iter().all(|&p| p == u32::MAX) { Vec::new() } else { fq_nic };
        let mut q = Q::default();
        let mut conns = Vec::with_capacity(flows.len());
        let mut paths = Vec::new();
        let mut all_routed = true;
        for (i, f) in flows.into_iter().enumerate() {
            let mut rng = Rng::new(cfg.seed, 0x2000_0000 + i as u64);
            let client = Endpoint::client(f.client.clone(), rng.next_u32());
            let server = Endpoint::listen(f.server.clone(), rng.next_u32());
            let flow_hash = rng.next_u32();
            let mut trace = |a: NodeId, b: NodeId| match trace_path(&topo, &routes, a, b, flow_hash) {
                Some(hops) => {
                    let at = paths.len() as u32;
                    paths.extend(hops);
                    at
                }
                None => Packet::NO_PATH,
            };
            let path = [trace(f.src, f.dst), trace(f.dst, f.src)];
            all_routed &= path.iter().all(|&p| p != Packet::NO_PATH);
            let nic = |h: NodeId| match host_nic[h.0 as usize] {
                p if p != u32::MAX && ports[p as usize].queue.lazy => p,
                _ => u32::MAX,
            };
            let lazy_nic = [nic(f.src), nic(f.dst)];
            if let Some(t) = f.connect {
                q.schedule(t, Ev::FlowConnect(i as u32));
            }
            q.schedule(f.start, Ev::FlowStart(i as u32));
            if let FlowKind::Bulk { stop: Some(t) } | FlowKind::Rpc { stop: Some(t), .. } = f.kind {
                q.schedule(t, Ev::FlowStop(i as u32));
            }
            conns.push(Conn {
                client,
                server,
                spec: f,
                flow_hash,
                path,
                lazy_nic,
                timer: [None, None],
                established: None,
                end: None,
                completion: None,
                started: false,
                rpc_start: SimTime::ZERO,
                rpc_latencies: Vec::new(),
            });
        }
        let pings: Vec<_> = pings
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                q.schedule(p.start, Ev::Ping(i as u32));
                let rec = PingRecord { name: p.name.clone(), ..Default::default() };
                (p, rec, 0)
            })
            .collect();
        if cfg.sample_interval.is_some() {
            q.schedule(SimTime::ZERO, Ev::Sample);
        }
        let nmon = cfg.monitor.len();
        let nflows = conns.len();
        let prefetch_next = ports.len() >= PREFETCH_MIN_PORTS;
        let express = if cfg.express && all_routed && pings.is_empty() {
            express_ports(&ports, &topo.kinds, &conns, &paths, &cfg.monitor)
        } else {
            Vec::new()
        };
        Ok(Core {
            cfg,
            topo,
            q,
            pool: Pool::new(),
            ports,
            routes,
            paths,
            prefetch_next,
            express,
            horizon: SimTime::ZERO,
            rx_batch: vec![Vec::new(); host_nic.len()],
            gro: GroBuf::default(),
            fq_nic,
            conns,
            pings,
            out: Vec::with_capacity(64),
            local_drops: Vec::new(),
            stats: RunStats::default(),
            queue_samples: vec![Vec::new(); nmon],
            queue_series: vec![Vec::new(); nmon],
            flow_series: vec![Vec::new(); nflows],
        })
    }

    fn now(&self) -> SimTime {
        self.q.now()
    }
    fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Run until `until` (at most the configured duration), calling `progress` now and then.
    fn run_until(&mut self, until: SimTime, mut progress: impl FnMut(SimTime)) {
        let until = until.min(self.cfg.duration);
        self.horizon = until;
        let mut next_progress = SimTime::ZERO;
        while let Some((now, ev)) = self.q.pop_until(until) {
            // While this event runs, bring in the packet the next one will read: in a large
            // network it is out of the first-level cache (k=8 fat tree: 20 % faster); a small
            // one keeps it there and only pays for the look (S1: 2-3 % slower).
            if self.prefetch_next {
                if let Some(&Ev::Arrive(p)) = self.q.peek() {
                    if let Some(&(_, id)) = self.ports[p as usize].pipe.front() {
                        prefetch(self.pool.get(id));
                    }
                }
            }
            match ev {
                Ev::TxDone(p) => self.tx_done(p as usize, now),
                Ev::TsqWake(p) => self.tsq_wake(p as usize, now),
                Ev::Arrive(p) => self.arrive(p as usize, now),
                Ev::Watchdog(p) => self.watchdog(p as usize, now),
                Ev::Timer(c, server) => self.timer(c as usize, server, now),
                Ev::FlowStart(c) => self.flow_start(c as usize, now),
                Ev::FlowConnect(c) => self.flow_connect(c as usize, now),
                Ev::FlowStop(c) => {
                    let conn = &mut self.conns[c as usize];
                    conn.client.stop_sending();
                    conn.end.get_or_insert(now);
                }
                Ev::Ping(i) => self.ping(i as usize, now),
                Ev::Sample => self.sample(now),
                Ev::RxFlush(n) => self.rx_flush(n as usize, now),
            }
            if now >= next_progress {
                progress(now);
                next_progress = now + SimTime::from_ms(100);
            }
        }
        self.q.advance_to(until);
        for pi in 0..self.ports.len() {
            if self.ports[pi].queue.lazy {
                self.settle(pi, until);
            }
        }
        self.stats.events = self.q.events_processed();
        self.stats.pool_high_water = self.pool.capacity();
    }

    fn run(&mut self) {
        let d = self.cfg.duration;
        self.run_until(d, |_| {});
    }

    fn run_stats(&self) -> RunStats {
        self.stats
    }

    // ---- packets and ports ----

    fn send_from_host(&mut self, pkt: Packet, now: SimTime) {
        let host = pkt.src;
        let id = self.pool.alloc(pkt);
        self.forward(host, id, now);
    }

    /// Pick the output port at `node` for packet `id` and queue it there: the next hop of its
    /// source route, or the route table's choice.
    fn forward(&mut self, node: NodeId, id: PoolId, now: SimTime) {
        let p = self.pool.get_mut(id);
        if p.path != Packet::NO_PATH {
            let port = self.paths[p.path as usize + p.hop as usize];
            p.hop += 1;
            return self.enqueue(port as usize, id, now);
        }
        let (dst, hash) = (p.dst, p.flow_hash);
        match next_hop(&self.routes, node, dst, hash) {
            Some(port) => self.enqueue(port.0 as usize, id, now),
            None => self.pool.free(id),
        }
    }

    fn enqueue(&mut self, pi: usize, id: PoolId, now: SimTime) {
        if self.ports[pi].queue.lazy {
            return self.enqueue_lazy(pi, id, now);
        }
        let port = &mut self.ports[pi];
        let pkt = self.pool.get_mut(id);
        // fq at a host takes a TSO skb whole (TCP hands its segments over back to back, the last
        // without `skb_more`): the wire starts once the skb is in. A switch sees single packets.
        let mut skb_open = false;
        let queued = match &mut port.queue.fq {
            Some(fq) => {
                skb_open = port.from_host && matches!(pkt.payload, Payload::Tcp { seg, .. } if seg.skb_more);
                fq.enqueue(id, pkt, now, port.from_host)
            }
            None => port.queue.enqueue(id, pkt, now, port.rate_bps, &mut port.rng) == EnqueueResult::Queued,
        };
        if !queued {
            return self.dropped_on_enqueue(pi, id);
        }
        if port.tx.is_none() && !skb_open {
            self.start_tx(pi, now);
        }
    }

    /// Lazy ports: retire the queued packets whose transmission has begun by `now`.
    #[inline]
    fn settle(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        while port.head_start <= now {
            port.queue.retire_head(port.head_start, port.head_size);
            (port.head_start, port.head_size) = port.starts.pop_front().unwrap_or((SimTime::MAX, 0));
        }
    }

    /// Lazy host NIC: return the TSQ budget of every transmission that ended by `now` to its
    /// socket (`tcp_wfree`); a socket that TSQ had stopped sends again (`tcp_tsq_handler`).
    fn settle_tsq(&mut self, pi: usize, now: SimTime) {
        while let Some(&(end, ci, server, bytes)) = self.ports[pi].tsq.front() {
            if end > now {
                break;
            }
            self.ports[pi].tsq.pop_front();
            let c = &mut self.conns[ci as usize];
            let ep = if server { &mut c.server } else { &mut c.client };
            let throttled = ep.tsq_throttled();
            ep.tsq_release(now, bytes, &mut self.out);
            if throttled {
                self.after_endpoint(ci as usize, server, now);
            }
        }
    }

    /// Keep a `TsqWake` pending at the next transmission end of a lazy host NIC while a socket
    /// of the host is throttled.
    fn ensure_tsq_wake(&mut self, pi: usize) {
        let port = &mut self.ports[pi];
        if let Some(&(end, ..)) = port.tsq.front() {
            if port.wake.is_none_or(|w| end < w) {
                port.wake = Some(end);
                self.q.schedule(end, Ev::TsqWake(pi as u32));
            }
        }
    }

    fn tsq_wake(&mut self, pi: usize, now: SimTime) {
        if self.ports[pi].wake != Some(now) {
            return; // superseded
        }
        self.ports[pi].wake = None;
        self.settle_tsq(pi, now);
        let any_throttled = self.ports[pi].tsq.iter().any(|&(_, ci, server, _)| {
            let c = &self.conns[ci as usize];
            if server {
                c.server.tsq_throttled()
            } else {
                c.client.tsq_throttled()
            }
        });
        if any_throttled {
            self.ensure_tsq_wake(pi);
        }
    }

    /// The NIC port of a flow's end (`server`: the receiver's), when it is a lazy host NIC.
    fn lazy_nic(&self, ci: usize, server: bool) -> Option<usize> {
        let pi = self.conns[ci].lazy_nic[server as usize];
        (pi != u32::MAX).then_some(pi as usize)
    }

    /// Before a socket runs: its host NIC's finished transmissions return their TSQ budget, and
    /// a socket behind fq learns how many skbs fq would take from it.
    #[inline]
    fn settle_nic(&mut self, ci: usize, server: bool, now: SimTime) {
        if let Some(pi) = self.lazy_nic(ci, server) {
            if self.ports[pi].tsq.front().is_some_and(|t| t.0 <= now) {
                self.settle_tsq(pi, now);
            }
        }
        self.set_qdisc_room(ci, server);
    }

    #[inline]
    fn set_qdisc_room(&mut self, ci: usize, server: bool) {
        if !self.fq_nic.is_empty() {
            self.set_qdisc_room_fq(ci, server);
        }
    }

    #[inline(never)]
    fn set_qdisc_room_fq(&mut self, ci: usize, server: bool) {
        let c = &self.conns[ci];
        let host = if server { c.spec.dst } else { c.spec.src };
        let pi = self.fq_nic[host.0 as usize];
        if pi == u32::MAX {
            return;
        }
        let room = self.ports[pi as usize].queue.fq.as_ref().map(|fq| fq.room_for_socket(ci as u32, !server));
        let c = &mut self.conns[ci];
        let ep = if server { &mut c.server } else { &mut c.client };
        ep.set_qdisc_room(room);
    }

    /// Queue a packet at a lazy port: decide marking or dropping with the queue as it is at
    /// `now`, then compute when its transmission starts and ends and put it on the link.
    #[inline(always)]
    fn enqueue_lazy(&mut self, mut pi: usize, id: PoolId, mut now: SimTime) {
        // A loop, not a call, for the express hop: the function stays inlinable.
        loop {
            self.settle(pi, now);
            let port = &mut self.ports[pi];
            let pkt = self.pool.get_mut(id);
            if port.queue.enqueue(id, pkt, now, port.rate_bps, &mut port.rng) == EnqueueResult::Dropped {
                return self.dropped_on_enqueue(pi, id);
            }
            let size = pkt.size;
            let wire = size + self.cfg.l2_overhead;
            let t = SimTime::tx_time(wire as u64, port.rate_bps);
            let start = now.max(port.busy_until);
            let end = start + t;
            port.busy_until = end;
            if port.head_start == SimTime::MAX {
                (port.head_start, port.head_size) = (start, size);
            } else {
                port.starts.push_back((start, size));
            }
            port.busy_ns += t.ns();
            port.tx_bytes += wire as u64;
            port.tx_packets += 1;
            // A host's data segment returns its TSQ budget when its transmission ends (at a switch
            // the segment is not read: it sits in another cache line than the header).
            if port.from_host {
                if let Payload::Tcp { conn, to_server, ref seg } = pkt.payload {
                    if seg.len > 0 {
                        port.tsq.push_back((end, conn, !to_server, (seg.len + seg.header_len()) as u64));
                    }
                }
            }
            if port.loss > 0.0 && port.rng.chance(port.loss) {
                port.link_drops += 1;
                self.pool.free(id);
                return;
            }
            let mut at = end + port.delay;
            let j = self.cfg.host_jitter.ns();
            if port.from_host && j > 0 {
                // Host timing noise, drawn per packet; the link stays FIFO.
                at += SimTime::from_ns(port.rng.next_u64() % j);
                at = at.max(port.last_at);
            }
            port.last_at = at;
            if !self.express.is_empty() && at <= self.horizon {
                // The next port is fed by this link alone: queue the packet there now, as its
                // arrival would at `at` (see `express_ports`).
                let pkt = self.pool.get_mut(id);
                if pkt.path != Packet::NO_PATH && self.ports[pi].to != pkt.dst {
                    let next = self.paths[pkt.path as usize + pkt.hop as usize] as usize;
                    if self.express[next] == pi as u32 {
                        pkt.hop += 1;
                        pi = next;
                        now = at;
                        continue;
                    }
                }
            }
            let port = &mut self.ports[pi];
            if port.pipe.is_empty() {
                self.q.schedule(at, Ev::Arrive(pi as u32));
            }
            port.pipe.push_back((at, id));
            return;
        }
    }

    fn start_tx(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        if let Some(fq) = &mut port.queue.fq {
            match fq.dequeue(now, &mut self.pool) {
                Some(id) => self.begin_tx(pi, id, now),
                None => {
                    // Every flow with packets waits for its departure time: arm the watchdog.
                    if let Some(t) = fq.next_wakeup() {
                        if port.watchdog.is_none_or(|w| t < w || w < now) {
                            port.watchdog = Some(t);
                            self.q.schedule(t, Ev::Watchdog(pi as u32));
                        }
                    }
                }
            }
            return;
        }
        while let Some((id, dropped)) = port.queue.dequeue(now, &mut self.pool) {
            if dropped {
                self.pool.free(id);
                continue;
            }
            return self.begin_tx(pi, id, now);
        }
    }

    /// Put packet `id` on port `pi`'s wire.
    fn begin_tx(&mut self, pi: usize, id: PoolId, now: SimTime) {
        let port = &mut self.ports[pi];
        let size = self.pool.get(id).size + self.cfg.l2_overhead;
        let t = SimTime::tx_time(size as u64, port.rate_bps);
        port.tx = Some(id);
        port.busy_ns += t.ns();
        port.tx_bytes += size as u64;
        port.tx_packets += 1;
        self.q.schedule(now + t, Ev::TxDone(pi as u32));
    }

    /// The fq watchdog fired: dequeue if the wire is idle.
    fn watchdog(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        if port.watchdog != Some(now) {
            return; // superseded
        }
        port.watchdog = None;
        if port.tx.is_none() {
            self.start_tx(pi, now);
        }
    }

    fn tx_done(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        let id = port.tx.take().expect("TxDone without a packet in transmission");
        // TX completion of a host's data segment returns the sender's TSQ budget, once this
        // port has moved on (the socket may send at once, into this very port).
        let tsq = match self.pool.get(id).payload {
            Payload::Tcp { conn, to_server, seg } if port.from_host && seg.len > 0 => {
                Some((conn as usize, !to_server, (seg.len + seg.header_len()) as u64))
            }
            _ => None,
        };
        if port.loss > 0.0 && port.rng.chance(port.loss) {
            port.link_drops += 1;
            self.pool.free(id);
        } else {
            let mut at = now + port.delay;
            let j = self.cfg.host_jitter.ns();
            if port.from_host && j > 0 {
                // Host timing noise, drawn per packet; the link stays FIFO.
                at += SimTime::from_ns(port.rng.next_u64() % j);
                if let Some(&(last, _)) = port.pipe.back() {
                    at = at.max(last);
                }
            }
            if port.pipe.is_empty() {
                self.q.schedule(at, Ev::Arrive(pi as u32));
            }
            port.pipe.push_back((at, id));
        }
        if !self.ports[pi].queue.is_empty() {
            self.start_tx(pi, now);
        }
        if let Some((ci, server, bytes)) = tsq {
            self.set_qdisc_room(ci, server);
            let c = &mut self.conns[ci];
            let ep = if server { &mut c.server } else { &mut c.client };
            ep.tsq_release(now, bytes, &mut self.out);
            self.after_endpoint(ci, server, now);
        }
    }

    fn arrive(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        let (_, id) = port.pipe.pop_front().expect("Arrive with an empty link");
        if let Some(&(next, _)) = port.pipe.front() {
            self.q.schedule(next, Ev::Arrive(pi as u32));
        }
        let node = port.to;
        let dst = self.pool.get(id).dst;
        if node == dst {
            if self.cfg.gro || self.cfg.rx_coalesce > SimTime::ZERO {
                let batch = &mut self.rx_batch[node.0 as usize];
                if batch.is_empty() {
                    self.q.schedule(now + self.cfg.rx_coalesce, Ev::RxFlush(node.0));
                }
                batch.push(id);
                return;
            }
            self.deliver(id, now);
        } else if self.topo.kinds[node.0 as usize] == NodeKind::Switch {
            self.forward(node, id, now);
        } else {
            self.pool.free(id); // a host never forwards
        }
    }

    /// The NIC's receive interrupt (`napi_schedule` after rx-usecs): polls of up to 64 packets
    /// (`NAPI_POLL_WEIGHT`), each through GRO if on, whose end flushes what GRO holds.
    fn rx_flush(&mut self, node: usize, now: SimTime) {
        let batch = std::mem::take(&mut self.rx_batch[node]);
        for poll in batch.chunks(NAPI_POLL_WEIGHT) {
            if !self.cfg.gro {
                for &id in poll {
                    self.deliver(id, now);
                }
                continue;
            }
            let pool = &self.pool;
            gro_poll(&mut self.gro, poll.len(), |i| {
                let id = poll[i];
                let p = pool.get(id);
                match &p.payload {
                    Payload::Tcp { conn, to_server, seg } => {
                        GroIn { id, tcp: Some(((*conn, *to_server), seg)), ecn: p.ecn }
                    }
                    _ => GroIn { id, tcp: None, ecn: p.ecn },
                }
            });
            // Hand the skbs up with the buffers taken out of `self` (delivering borrows all of
            // it), then put them back for the next poll.
            let gro = std::mem::take(&mut self.gro);
            for skb in &gro.done {
                let ids = gro.ids_of(skb);
                if ids.len() == 1 {
                    self.deliver(ids[0], now);
                } else {
                    self.deliver_gro(skb, ids, now);
                }
            }
            self.gro = gro;
        }
        // Keep the buffer: nothing reaches this host while its batch is handed up (every
        // arrival is an event of its own).
        let mut batch = batch;
        batch.clear();
        debug_assert!(self.rx_batch[node].is_empty());
        self.rx_batch[node] = batch;
    }

    /// Hand a GRO skb of several segments to its endpoint as one segment.
    fn deliver_gro(&mut self, skb: &GroOut, ids: &[PoolId], now: SimTime) {
        let first = self.pool.get(ids[0]);
        let Payload::Tcp { conn, to_server, seg } = first.payload else { unreachable!("GRO merges TCP only") };
        let (ci, server) = (conn as usize, to_server);
        let mut seg = seg;
        seg.ecn = first.ecn;
        seg.len = skb.len;
        seg.flags = TcpFlags(seg.flags.0 | skb.extra_flags);
        let n = ids.len() as u64;
        self.stats.packets_delivered += n;
        self.stats.data_packets_delivered += n;
        for &id in ids {
            self.pool.free(id);
        }
        self.settle_nic(ci, server, now);
        let c = &mut self.conns[ci];
        let ep = if server { &mut c.server } else { &mut c.client };
        ep.on_segment_gro(now, &seg, skb.gso_size, ids.len() as u32, &mut self.out);
        self.after_endpoint(ci, server, now);
    }

    fn deliver(&mut self, id: PoolId, now: SimTime) {
        self.stats.packets_delivered += 1;
        let pkt = self.pool.get_mut(id);
        match &mut pkt.payload {
            Payload::Tcp { conn, to_server, seg } => {
                let (ci, server) = (*conn as usize, *to_server);
                if seg.len > 0 {
                    self.stats.data_packets_delivered += 1;
                }
                seg.ecn = pkt.ecn;
                self.settle_nic(ci, server, now);
                // The segment is read in place (no copy of the packet).
                let Payload::Tcp { seg, .. } = &self.pool.get(id).payload else { unreachable!() };
                let c = &mut self.conns[ci];
                let ep = if server { &mut c.server } else { &mut c.client };
                ep.on_segment(now, seg, &mut self.out);
                self.pool.free(id);
                self.after_endpoint(ci, server, now);
            }
            Payload::PingRequest { probe, seq, sent } => {
                let (probe, seq, sent) = (*probe, *seq, *sent);
                let pkt = *self.pool.get(id);
                self.pool.free(id);
                let reply = Packet {
                    src: pkt.dst,
                    dst: pkt.src,
                    hop: 0,
                    payload: Payload::PingReply { probe, seq, sent },
                    ..pkt
                };
                let reply = Packet { ecn: self.pings[probe as usize].0.ecn, ..reply };
                self.send_from_host(reply, now);
            }
            Payload::PingReply { probe, sent, .. } => {
                let (probe, sent) = (*probe, *sent);
                self.pool.free(id);
                self.pings[probe as usize].1.rtts.push((now - sent).secs_f64());
            }
        }
    }

    // ---- endpoints ----

    /// Turn what an endpoint emitted into packets, note milestones, re-arm its timer.
    fn after_endpoint(&mut self, ci: usize, server: bool, now: SimTime) {
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

    /// Hand the data segments a host's qdisc dropped back to their sockets (after the sending
    /// socket's segments are all queued, so an skb reaches its qdisc whole).
    fn return_local_drops(&mut self, now: SimTime) {
        if self.local_drops.is_empty() {
            return;
        }
        // Last first: a socket undoes what it sent from the tail. Only a socket's first drop was
        // really attempted (Linux stops there). RED's drops (NET_XMIT_CN) count as sent, and
        // sending goes on after them.
        let drops = std::mem::take(&mut self.local_drops);
        for (i, &(ci, server, seg, congestion)) in drops.iter().enumerate().rev() {
            let c = &mut self.conns[ci as usize];
            let ep = if server { &mut c.server } else { &mut c.client };
            let how = if congestion {
                QdiscDrop::Congestion
            } else {
                let earlier = drops[..i].iter().any(|&(c, s, sg, cn)| (c, s) == (ci, server) && !cn && sg.len > 0);
                QdiscDrop::Tail { attempted: !earlier }
            };
            ep.on_local_drop(now, &seg, how);
            self.after_endpoint(ci as usize, server, now);
        }
    }

    /// A port dropped packet `id` on arrival: a segment at its sender's own NIC goes back to its
    /// socket (see `Endpoint::on_local_drop`).
    fn dropped_on_enqueue(&mut self, pi: usize, id: PoolId) {
        let port = &self.ports[pi];
        if port.from_host {
            if let Payload::Tcp { conn, to_server, seg } = self.pool.get(id).payload {
                let congestion = port.queue.fq.is_none() && port.queue.congestion_drop;
                self.local_drops.push((conn, !to_server, seg, congestion));
            }
        }
        self.pool.free(id);
    }

    fn resched(&mut self, ci: usize, server: bool) {
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

    fn timer(&mut self, ci: usize, server: bool, now: SimTime) {
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

    fn flow_start(&mut self, ci: usize, now: SimTime) {
        self.settle_nic(ci, false, now);
        let c = &mut self.conns[ci];
        c.started = true;
        match c.spec.kind {
            FlowKind::Bulk { .. } => c.client.write_forever(now, &mut self.out),
            FlowKind::Transfer { bytes } => c.client.write(now, bytes, &mut self.out),
            FlowKind::Rpc { bytes, .. } => {
                c.rpc_start = now;
                c.client.write(now, bytes, &mut self.out)
            }
        }
        if c.spec.connect.is_none() {
            c.client.connect(now, &mut self.out);
        }
        self.after_endpoint(ci, false, now);
    }

    /// A connection opened ahead of its flow's first write.
    fn flow_connect(&mut self, ci: usize, now: SimTime) {
        self.settle_nic(ci, false, now);
        self.conns[ci].client.connect(now, &mut self.out);
        self.after_endpoint(ci, false, now);
    }

    fn ping(&mut self, i: usize, now: SimTime) {
        let (spec, rec, seq) = &mut self.pings[i];
        if spec.stop.is_some_and(|s| now >= s) {
            return;
        }
        *seq += 1;
        rec.sent += 1;
        let pkt = Packet {
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            dscp: spec.dscp,
            ecn: spec.ecn,
            flow_hash: 0x5a5a_0000 ^ i as u32,
            path: Packet::NO_PATH,
            hop: 0,
            payload: Payload::PingRequest { probe: i as u32, seq: *seq, sent: now },
        };
        let next = now + spec.interval;
        self.q.schedule(next, Ev::Ping(i as u32));
        self.send_from_host(pkt, now);
    }

    fn sample(&mut self, now: SimTime) {
        for k in 0..self.cfg.monitor.len() {
            let pi = self.cfg.monitor[k].0 as usize;
            if self.ports[pi].queue.lazy {
                self.settle(pi, now);
            }
        }
        for (k, p) in self.cfg.monitor.iter().enumerate() {
            let port = &self.ports[p.0 as usize];
            let packets = port.queue.len_packets() as u32;
            self.queue_samples[k].push(packets);
            if self.cfg.series {
                let bytes = port.queue.len_bytes();
                self.queue_series[k].push(PortSample { t: now, packets, bytes });
            }
        }
        if self.cfg.series {
            for (i, c) in self.conns.iter().enumerate() {
                let s = c.client.sock();
                self.flow_series[i].push((now, s.snd_cwnd, c.client.stats().bytes_acked, s.srtt_us >> 3));
            }
        }
        if let Some(iv) = self.cfg.sample_interval {
            self.q.schedule(now + iv, Ev::Sample);
        }
    }

    // ---- results ----

    fn flow_records(&self) -> Vec<FlowRecord> {
        self.conns
            .iter()
            .map(|c| {
                let st = c.client.stats();
                FlowRecord {
                    name: c.spec.name.clone(),
                    cc: c.client.cc_name().to_string(),
                    start: c.spec.start,
                    end: c.end,
                    established: c.established,
                    bytes_acked: st.bytes_acked,
                    bytes_received: c.server.stats().bytes_received,
                    retransmits: st.total_retrans,
                    rto_count: st.rto_count,
                    other_timeouts: st.other_timeouts,
                    fast_recoveries: st.fast_recoveries,
                    cwr_events: st.cwr_events,
                    completion: c.completion.map(|t| t - c.spec.start),
                    rpc_latencies: c.rpc_latencies.clone(),
                }
            })
            .collect()
    }

    fn flow_specs(&self) -> Vec<&FlowSpec> {
        self.conns.iter().map(|c| &c.spec).collect()
    }

    /// The counters of a flow's client and server sockets.
    fn tcp_stats(&self, flow: usize) -> (TcpStats, TcpStats) {
        let c = &self.conns[flow];
        (*c.client.stats(), *c.server.stats())
    }

    /// `tcp_info` of a flow's client and server sockets.
    fn tcp_info(&self, flow: usize) -> (TcpInfo, TcpInfo) {
        let c = &self.conns[flow];
        (c.client.tcp_info(), c.server.tcp_info())
    }

    fn ping_records(&self) -> Vec<PingRecord> {
        self.pings.iter().map(|(_, r, _)| r.clone()).collect()
    }

    /// Per class counters of a port.
    fn port_class_stats(&self, p: PortId) -> Vec<(String, QueueStats)> {
        self.ports[p.0 as usize].queue.class_stats()
    }

    /// Fraction of the run the port spent transmitting.
    fn port_utilisation(&self, p: PortId, over: SimTime) -> f64 {
        if over.ns() == 0 {
            return 0.0;
        }
        let port = &self.ports[p.0 as usize];
        // A lazy port has already booked the transmissions of its backlog beyond the end.
        let booked_beyond = if port.queue.lazy { port.busy_until.saturating_sub(over).ns() } else { 0 };
        port.busy_ns.saturating_sub(booked_beyond) as f64 / over.ns() as f64
    }

    fn port_tx(&self, p: PortId) -> (u64, u64, u64) {
        let port = &self.ports[p.0 as usize];
        (port.tx_packets, port.tx_bytes, port.link_drops)
    }
}

/// Networks with at least this many ports keep their events on a timing wheel, smaller ones in a
/// `HeapQueue` (a sorted list while fewer than 256 are pending, else a binary heap). A star
/// keeps about one event per flow and port pending (S1 about 14, S2 about 90): the wheel's
/// 256-ns first level is then mostly empty and each event is poured down from the level above,
/// 10 % more instructions on S1 and 8 % more time on S2. A k=4 fat tree (96
/// ports) keeps about 150 pending, a k=8 one about 1 200: there the heap's sifts cost more
/// (S3: 21 % less time with the wheel). Both give the same order, so the same results.
pub const WHEEL_MIN_PORTS: usize = 64;

/// A network with its flows, ready to run.
pub struct Sim(Inner);

enum Inner {
    Heap(Box<Core<HeapQueue<Ev>>>),
    Wheel(Box<Core<WheelQueue<Ev>>>),
}

/// Run `$e` on the simulation's core, whichever its event list.
macro_rules! core {
    ($s:expr, $c:ident => $e:expr) => {
        match $s {
            Inner::Heap($c) => $e,
            Inner::Wheel($c) => $e,
        }
    };
}

impl Sim {
    pub fn new(
        cfg: SimConfig,
        topo: Topology,
        flows: Vec<FlowSpec>,
        pings: Vec<PingSpec>,
    ) -> Result<Sim, TopologyError> {
        let routes = topo.routes()?;
        Sim::with_routes(cfg, topo, routes, flows, pings)
    }

    /// As `new`, with the route table already built (`topo.routes()`, e.g. when the scenario
    /// was checked): a fat tree's takes a backward search per host (0.4 s at k = 16).
    pub fn with_routes(
        cfg: SimConfig,
        topo: Topology,
        routes: Routes,
        flows: Vec<FlowSpec>,
        pings: Vec<PingSpec>,
    ) -> Result<Sim, TopologyError> {
        let wheel = match cfg.event_list {
            EventList::BySize => 2 * topo.links.len() >= WHEEL_MIN_PORTS,
            EventList::Heap => false,
            EventList::Wheel => true,
        };
        Ok(Sim(if wheel {
            Inner::Wheel(Box::new(Core::new(cfg, topo, routes, flows, pings)?))
        } else {
            Inner::Heap(Box::new(Core::new(cfg, topo, routes, flows, pings)?))
        }))
    }

    /// The event list the run uses: `EventList::Heap` or `EventList::Wheel`.
    pub fn event_list(&self) -> EventList {
        match self.0 {
            Inner::Heap(_) => EventList::Heap,
            Inner::Wheel(_) => EventList::Wheel,
        }
    }

    pub fn now(&self) -> SimTime {
        core!(&self.0, c => c.now())
    }
    pub fn topology(&self) -> &Topology {
        core!(&self.0, c => c.topology())
    }
    /// Run until `until` (at most the configured duration), calling `progress` now and then.
    pub fn run_until(&mut self, until: SimTime, progress: impl FnMut(SimTime)) {
        core!(&mut self.0, c => c.run_until(until, progress))
    }
    pub fn run(&mut self) {
        core!(&mut self.0, c => c.run())
    }
    pub fn run_stats(&self) -> RunStats {
        core!(&self.0, c => c.run_stats())
    }
    pub fn flow_records(&self) -> Vec<FlowRecord> {
        core!(&self.0, c => c.flow_records())
    }
    pub fn flow_specs(&self) -> Vec<&FlowSpec> {
        core!(&self.0, c => c.flow_specs())
    }
    /// The counters of a flow's client and server sockets.
    pub fn tcp_stats(&self, flow: usize) -> (TcpStats, TcpStats) {
        core!(&self.0, c => c.tcp_stats(flow))
    }
    /// `tcp_info` of a flow's client and server sockets.
    pub fn tcp_info(&self, flow: usize) -> (TcpInfo, TcpInfo) {
        core!(&self.0, c => c.tcp_info(flow))
    }
    pub fn ping_records(&self) -> Vec<PingRecord> {
        core!(&self.0, c => c.ping_records())
    }
    /// Per class counters of a port.
    pub fn port_class_stats(&self, p: PortId) -> Vec<(String, QueueStats)> {
        core!(&self.0, c => c.port_class_stats(p))
    }
    /// Fraction of the run the port spent transmitting.
    pub fn port_utilisation(&self, p: PortId, over: SimTime) -> f64 {
        core!(&self.0, c => c.port_utilisation(p, over))
    }
    pub fn port_tx(&self, p: PortId) -> (u64, u64, u64) {
        core!(&self.0, c => c.port_tx(p))
    }
    /// Per monitored port: occupancy samples (packets).
    pub fn queue_samples(&self) -> &[Vec<u32>] {
        core!(&self.0, c => &c.queue_samples)
    }
    /// Per monitored port: the occupancy series, when `series` is on.
    pub fn queue_series(&self) -> &[Vec<PortSample>] {
        core!(&self.0, c => &c.queue_series)
    }
    /// Per flow: (t, cwnd, bytes_acked, srtt_us) series when `series` is on.
    pub fn flow_series(&self) -> &[Vec<(SimTime, u32, u64, u32)>] {
        core!(&self.0, c => &c.flow_series)
    }
}

/// Networks with at least this many ports prefetch the next event's packet (S2's star has 40
/// ports and gains nothing; a k=4 fat tree has 96 and gains 5 %).
const PREFETCH_MIN_PORTS: usize = 64;

/// The switch ports a packet may reach without an arrival event at their switch: per port, the
/// one lazy port feeding it, or `u32::MAX`. A lazy switch port that every source route enters
/// from the same link sees its packets in that link's order, so queueing each when it leaves
/// the link's sender, stamped with its arrival time, decides drops, marks and departures
/// exactly as the arrival would (a star's port towards a sender takes only the receiver's
/// ACKs). Only ports facing a host: the next arrival's event is scheduled earlier than it
/// would be, and at a switch two arrivals on the same nanosecond could then swap order; at a
/// host only the host's own timers can share its nanosecond. Not for monitored ports, whose
/// sampled occupancy must not run ahead of the clock, nor when a packet may go without a source
/// route (pings, unrouted flows).
fn express_ports(ports: &[Port], kinds: &[NodeKind], conns: &[Conn], paths: &[u32], monitor: &[PortId]) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let mut feeder = vec![NONE; ports.len()];
    for c in conns {
        for (side, &start) in c.path.iter().enumerate() {
            // A path runs from the sender's NIC to the port into the receiving host.
            let dst = if side == 0 { c.spec.dst } else { c.spec.src };
            let mut k = start as usize;
            while ports[paths[k] as usize].to != dst {
                let (from, to) = (paths[k], paths[k + 1] as usize);
                feeder[to] = match feeder[to] {
                    NONE => from,
                    f if f == from => f,
                    _ => MANY,
                };
                k += 1;
            }
        }
    }
    let mut any = false;
    for (p, f) in feeder.iter_mut().enumerate() {
        let ok = *f < MANY
            && ports[p].queue.lazy
            && !ports[p].from_host
            && kinds[ports[p].to.0 as usize] == NodeKind::Host
            && ports[*f as usize].queue.lazy
            && !monitor.contains(&PortId(p as u32));
        if ok {
            any = true;
        } else {
            *f = NONE;
        }
    }
    if any {
        feeder
    } else {
        Vec::new()
    }
}

/// Hint the CPU to load `x`'s first cache line.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and `x` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(x as *const T as *const i8);
    }
}

/// The port `node` sends a packet for `dst` by: the only next hop, or among equal-cost ones the
/// one the flow's hash picks (ECMP; hashed with the node so that stages choose independently).
#[inline]
fn next_hop(routes: &Routes, node: NodeId, dst: NodeId, hash: u32) -> Option<PortId> {
    let cands = routes.get(node.0 as usize, dst.0 as usize);
    match cands.len() {
        0 => None,
        1 => Some(cands[0]),
        n => {
            let h = (hash ^ node.0.wrapping_mul(0x9E37_79B9)).wrapping_mul(0x85EB_CA6B);
            Some(cands[((h >> 16) as usize) % n])
        }
    }
}

/// A flow's path from `src` to `dst` as `next_hop` picks it at every node (source routing: the
/// same ports, found once): None when some node has no route or a host would have to forward.
fn trace_path(topo: &Topology, routes: &Routes, src: NodeId, dst: NodeId, hash: u32) -> Option<Vec<u32>> {
    let mut node = src;
    let mut path = Vec::new();
    while node != dst {
        // A packet counts its hops in a byte.
        if node != src && topo.kinds[node.0 as usize] != NodeKind::Switch || path.len() >= u8::MAX as usize {
            return None;
        }
        let port = next_hop(routes, node, dst, hash)?;
        path.push(port.0);
        node = topo.port_ends(port).1;
    }
    Some(path)
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::offset_of;

    /// The lines of a port as its doc comment lays them out.
    #[test]
    fn a_port_is_laid_out_by_use() {
        crate::assert_cache_lines(&[
            ("pipe", offset_of!(Port, pipe), 32, 0),
            ("to", offset_of!(Port, to), 4, 0),
            ("head_start", offset_of!(Port, head_start), 8, 0),
            ("busy_until", offset_of!(Port, busy_until), 8, 0),
            ("from_host", offset_of!(Port, from_host), 1, 0),
            ("last_at", offset_of!(Port, last_at), 8, 1),
            ("tx_packets", offset_of!(Port, tx_packets), 8, 1),
            ("starts", offset_of!(Port, starts), 32, 2),
            ("queue", offset_of!(Port, queue), 32, 2),
        ]);
        assert_eq!(std::mem::align_of::<Port>(), 64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_link as link;

    #[test]
    fn source_routes_are_the_hop_by_hop_choices_and_spread_over_equal_cost_paths() {
        // a - s1 - {s2, s3} - s4 - b: two equal-cost paths.
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let b = t.add_host("b").unwrap();
        let [s1, s2, s3, s4] = ["s1", "s2", "s3", "s4"].map(|n| t.add_switch(n).unwrap());
        for (x, y) in [(a, s1), (s1, s2), (s1, s3), (s2, s4), (s3, s4), (s4, b)] {
            link(&mut t, x, y);
        }
        let routes = t.routes().unwrap();
        let mut middles = std::collections::BTreeSet::new();
        for hash in 0..64u32 {
            let path = trace_path(&t, &routes, a, b, hash.wrapping_mul(0x2545_F491)).expect("a path");
            assert_eq!(path.len(), 4, "a, s1, s2 or s3, s4, then b");
            // The same ports as a packet forwarded node by node.
            let mut node = a;
            for &p in &path {
                assert_eq!(Some(PortId(p)), next_hop(&routes, node, b, hash.wrapping_mul(0x2545_F491)));
                let (from, to) = t.port_ends(PortId(p));
                assert_eq!(from, node);
                node = to;
            }
            assert_eq!(node, b);
            middles.insert(t.port_ends(PortId(path[1])).1);
        }
        assert_eq!(middles.into_iter().collect::<Vec<_>>(), vec![s2, s3], "ECMP uses both middle switches");
    }
}
