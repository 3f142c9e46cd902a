//! The state of a running network (`Core`): ports, connections, the packet pool, the event list,
//! and its construction from a topology and flows.

use crate::capture::Capturer;
use crate::conn::Conn;
use crate::event_loop::Ev;
use crate::flows::{FlowDone, FlowKind, FlowSpec, PingRecord, PingSpec};
use crate::gro::GroBuf;
use crate::host::LocalDrop;
use crate::lifecycle::{EphemeralPorts, FlowSink, Origin};
use crate::packet::Packet;
use crate::port::{express_ports, LinkEnd, Port};
use crate::queue::PortQueue;
use crate::record::{FlowSample, Occupancy, PortSample};
use crate::sim::{RunStats, SimConfig};
use crate::switch::{shared_buffers, PortBuffer, SwitchBuffer, Switches};
use crate::topology::{NodeId, NodeKind, PortId, Routes, Topology, TopologyError};
use crate::traffic::TrafficSlot;
use ccsim_engine::{ByteTime, EventQueue, Pool, PoolId, Rng, SimTime};
use ccsim_tcp::Segment;
use std::collections::HashMap;
use std::collections::VecDeque;

/// The simulation itself, generic over its event list (`Sim` picks one by network size).
pub(crate) struct Core<Q> {
    pub(crate) cfg: SimConfig,
    pub(crate) topo: Topology,
    pub(crate) q: Q,
    pub(crate) pool: Pool<Packet>,
    pub(crate) ports: Vec<Port>,
    /// Per port: its link's far end and tail (what an arrival reads).
    pub(crate) links: Vec<LinkEnd>,
    pub(crate) routes: Routes,
    /// Source routes: per connection and direction, the ports a segment leaves by, host NIC
    /// first, as the route table and the flow hash would pick them hop by hop.
    pub(crate) paths: Vec<u32>,
    /// Prefetch the next event's packet (networks of `PREFETCH_MIN_PORTS` ports or more).
    pub(crate) prefetch_next: bool,
    /// Per port: the one port that feeds it, when a packet may skip its arrival event there
    /// (`express_ports`); `u32::MAX` otherwise. Empty when no port qualifies.
    pub(crate) express: Vec<u32>,
    /// The end of the current `run_until`: no packet is taken ahead of an event past it.
    pub(crate) horizon: SimTime,
    /// Raised from outside (Ctrl-C): the run ends at its next progress point (`Sim::set_stop`).
    pub(crate) stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// When a raised `stop` ended the run.
    pub(crate) stopped_at: Option<SimTime>,
    /// Per node: packets a host's NIC received and has not yet handed up (coalescing or GRO).
    pub(crate) rx_batch: Vec<Vec<PoolId>>,
    /// GRO's buffers, kept from poll to poll.
    pub(crate) gro: GroBuf,
    /// Per host: its only NIC when that runs fq, else u32::MAX; empty when no host runs fq.
    pub(crate) fq_nic: Vec<u32>,
    /// Per node: its host NIC (the last, for a host with several), else u32::MAX.
    pub(crate) host_nic: Vec<u32>,
    /// Connection slots: the flows given up front in `0..static_flows`, then the slots of
    /// connections traffic opened, reused once released (`free_conns`).
    pub(crate) conns: Vec<Conn>,
    pub(crate) static_flows: usize,
    pub(crate) free_conns: Vec<u32>,
    /// The number the next flow opened by traffic takes.
    pub(crate) next_flow_id: u64,
    pub(crate) ephemeral: EphemeralPorts,
    pub(crate) traffic: Vec<TrafficSlot>,
    /// Flows arriving at the current `Arrival` event (a buffer kept between events).
    pub(crate) arriving: Vec<FlowSpec>,
    /// Where flows go when released (None: kept in `done` for the records).
    pub(crate) sink: Option<Box<dyn FlowSink>>,
    pub(crate) done: Vec<FlowDone>,
    /// Switches' shared buffers (`switch.rs`, `buffer.rs`), and per port its place in them
    /// (empty when no switch has one).
    pub(crate) buffers: Vec<SwitchBuffer>,
    pub(crate) port_buffer: Vec<PortBuffer>,
    /// Idle pooled connections per (traffic, client host, server host).
    pub(crate) pools: HashMap<(u32, NodeId, NodeId), Vec<u32>>,
    pub(crate) pings: Vec<(PingSpec, PingRecord, u32)>,
    pub(crate) out: Vec<Segment>,
    /// Data segments dropped by their own host's qdisc, waiting to be handed back.
    pub(crate) local_drops: Vec<LocalDrop>,
    pub(crate) stats: RunStats,
    /// Per monitored port: occupancy samples (packets) and optional series.
    pub(crate) queue_occupancy: Vec<Occupancy>,
    pub(crate) queue_series: Vec<Vec<PortSample>>,
    /// Per flow: its sender's samples when `series` is on.
    pub(crate) flow_series: Vec<Vec<FlowSample>>,
    /// Packet captures (`Sim::set_capture`); None: no capture, and no cost.
    pub(crate) capture: Option<Box<Capturer>>,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    pub(crate) fn new(
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
                let queue = PortQueue::new(qs);
                let from_host = topo.kinds[from.0 as usize] == NodeKind::Host;
                ports.push(Port {
                    tsq: VecDeque::new(),
                    tsq_due: SimTime::MAX,
                    wake: None,
                    watchdog: None,
                    busy_until: SimTime::ZERO,
                    head_start: SimTime::MAX,
                    head_size: 0,
                    sizes: VecDeque::new(),
                    last_at: SimTime::ZERO,
                    to,
                    from_host,
                    lazy: queue.supports_lazy(),
                    behind: 0,
                    jitter_ns: if from_host { cfg.host_jitter.bound(l.rate_bps).ns() } else { 0 },
                    byte_time: ByteTime::new(l.rate_bps),
                    byte_ps: ByteTime::new(l.rate_bps).whole_ps().unwrap_or(0),
                    delay: l.delay,
                    loss: l.loss,
                    lossy: l.loss > 0.0,
                    queue,
                    tx: None,
                    admitted: 0,
                    admitted_bytes: 0,
                    busy_ns: 0,
                    tx_bytes: 0,
                    tx_packets: 0,
                    link_drops: 0,
                    rng: Rng::new(cfg.seed, 0x1000_0000 + 2 * i as u64 + dir),
                });
            }
        }
        let links = ports
            .iter()
            .map(|p| LinkEnd {
                tail: crate::packet::LinkNext::NONE.id,
                to: p.to,
                to_switch: topo.kinds[p.to.0 as usize] == NodeKind::Switch,
            })
            .collect();
        let switches = Switches::new(&topo);
        let (buffers, port_buffer) = shared_buffers(&cfg.shared_buffers, &switches, &ports);
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
        let nflows = flows.len();
        let mut core = Core {
            prefetch_next: ports.len() >= PREFETCH_MIN_PORTS,
            cfg,
            topo,
            q: Q::default(),
            pool: Pool::new(),
            ports,
            links,
            routes,
            paths: Vec::new(),
            express: Vec::new(),
            horizon: SimTime::ZERO,
            stop: None,
            stopped_at: None,
            rx_batch: vec![Vec::new(); host_nic.len()],
            host_nic,
            gro: GroBuf::default(),
            fq_nic,
            conns: Vec::with_capacity(nflows),
            static_flows: nflows,
            free_conns: Vec::new(),
            next_flow_id: nflows as u64,
            ephemeral: EphemeralPorts::default(),
            traffic: Vec::new(),
            arriving: Vec::new(),
            sink: None,
            done: Vec::new(),
            pools: HashMap::new(),
            buffers,
            port_buffer,
            pings: Vec::new(),
            out: Vec::with_capacity(64),
            local_drops: Vec::new(),
            stats: RunStats::default(),
            queue_occupancy: Vec::new(),
            queue_series: Vec::new(),
            flow_series: vec![Vec::new(); nflows],
            capture: None,
        };
        for (i, f) in flows.into_iter().enumerate() {
            if let Some(t) = f.connect {
                core.q.schedule(t, Ev::FlowConnect(i as u32));
            }
            core.q.schedule(f.start, Ev::FlowStart(i as u32));
            if let FlowKind::Bulk { stop: Some(t) } | FlowKind::Rpc { stop: Some(t), .. } = f.kind {
                core.q.schedule(t, Ev::FlowStop(i as u32));
            }
            let conn = core.new_conn(f, i as u64, Origin::Given, [None, None]);
            core.conns.push(conn);
        }
        let all_routed = core.conns.iter().all(|c| c.path.iter().all(|&p| p != Packet::NO_PATH));
        core.pings = pings
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                core.q.schedule(p.start, Ev::Ping(i as u32));
                let rec = PingRecord { name: p.name.clone(), ..Default::default() };
                (p, rec, 0)
            })
            .collect();
        if core.cfg.sample_interval.is_some() {
            core.q.schedule(SimTime::ZERO, Ev::Sample);
        }
        let nmon = core.cfg.monitor.len();
        core.queue_occupancy = vec![Occupancy::default(); nmon];
        core.queue_series = vec![Vec::new(); nmon];
        if core.cfg.express && all_routed && core.pings.is_empty() {
            core.express = express_ports(&core.ports, &core.topo.kinds, &core.conns, &core.paths, &core.cfg.monitor);
            // A packet queued ahead of its arrival would be admitted against sibling queues
            // as they are now, not as they will be: no express hop into a shared buffer.
            for (p, pb) in core.port_buffer.iter().enumerate() {
                if pb.buffer != u32::MAX && !core.express.is_empty() {
                    core.express[p] = u32::MAX;
                }
            }
        }
        Ok(core)
    }

    pub(crate) fn now(&self) -> SimTime {
        self.q.now()
    }
    pub(crate) fn topology(&self) -> &Topology {
        &self.topo
    }
}

/// Networks with at least this many ports prefetch the next event's packet (S2's star has 40
/// ports and gains nothing; a k=4 fat tree has 96 and gains 5 %).
pub(crate) const PREFETCH_MIN_PORTS: usize = 64;
