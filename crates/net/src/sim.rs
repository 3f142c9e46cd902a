//! The simulation as its users see it: run-wide settings (`SimConfig`), the choice of event list,
//! and `Sim`, which runs a network's `Core` on a heap or a timing wheel and hands over its records.

use crate::buffer::SharedBufferSpec;
use crate::capture::{CaptureSpec, Capturer, PacketSink};
use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowSpec, PingSpec};
use crate::lifecycle::FlowSink;
use crate::record::{PortCounters, Records, Sockets};
use crate::topology::{NodeId, PortId, Routes, Topology, TopologyError};
use crate::traffic::Traffic;
use ccsim_engine::{HeapQueue, SimTime, WheelQueue};
use ccsim_tcp::{TcpInfo, TcpStats};

/// Run-wide settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub duration: SimTime,
    /// Queue and flow sampling interval (None: no sampling).
    pub sample_interval: Option<SimTime>,
    /// Ports whose occupancy is sampled.
    pub monitor: Vec<PortId>,
    /// Occupancy samples taken from this time on count in the ports' statistics (the warm-up
    /// ends here; series keep every sample).
    pub stats_from: SimTime,
    /// Keep time series (queue per monitored port, cwnd and bytes per flow) besides summaries.
    pub series: bool,
    /// Extra bytes per packet on every link (Ethernet framing), added to serialisation time.
    pub l2_overhead: u32,
    /// Host timing noise: a packet leaving a host NIC arrives up to this much later (uniform,
    /// FIFO order kept). Zero: hosts are perfectly periodic, as idealised simulators assume.
    pub host_jitter: HostJitter,
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
    /// Switches whose egress queues share one buffer with dynamic thresholds (`buffer.rs`).
    pub shared_buffers: Vec<(NodeId, SharedBufferSpec)>,
}

/// The bound of a host NIC's timing noise (`SimConfig::host_jitter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostJitter {
    /// The same bound at every host, whatever its link rate.
    Fixed(SimTime),
    /// The time this many bytes take on the host's own link: the noise keeps its size relative
    /// to a packet time at every link rate (25 bytes: 2 µs at 100 Mb/s, 20 ns at 10 Gb/s).
    ByteTimes(u32),
}

impl HostJitter {
    /// No noise: hosts send with a perfect period.
    pub const NONE: HostJitter = HostJitter::Fixed(SimTime::ZERO);

    /// The bound for a host whose link runs at `rate_bps`, in whole nanoseconds (rounded down).
    pub fn bound(self, rate_bps: u64) -> SimTime {
        match self {
            HostJitter::Fixed(t) => t,
            HostJitter::ByteTimes(bytes) => {
                SimTime::from_ns((bytes as u128 * 8 * 1_000_000_000 / rate_bps.max(1) as u128) as u64)
            }
        }
    }
}

impl std::fmt::Display for HostJitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostJitter::Fixed(t) => write!(f, "{} µs", t.ns() as f64 / 1e3),
            HostJitter::ByteTimes(bytes) => write!(f, "the time of {bytes} bytes on each host's link"),
        }
    }
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

/// Counters of the whole run, for benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    pub data_packets_delivered: u64,
    pub packets_delivered: u64,
    pub pool_high_water: usize,
    /// Flows opened by traffic during the run, and those released again.
    pub flows_opened: u64,
    pub flows_released: u64,
    /// Most connections open at once (flows given up front included).
    pub conns_high_water: usize,
    /// Flows that could not connect: their host had no free ephemeral port.
    pub connect_failures: u64,
    /// Exchanges that took an idle pooled connection (no handshake).
    pub exchanges_reused: u64,
}

/// The fixed size of the simulator's per-item state, for estimates of a run's memory: a port
/// (its queue's packets aside), a connection (both endpoints; their queues aside), a packet.
#[derive(Clone, Copy, Debug)]
pub struct Footprint {
    pub port_bytes: u64,
    pub conn_bytes: u64,
    pub packet_bytes: u64,
}

/// The simulator's `Footprint` on this build.
pub fn footprint() -> Footprint {
    use std::mem::size_of;
    Footprint {
        port_bytes: size_of::<crate::port::Port>() as u64,
        conn_bytes: size_of::<crate::conn::Conn>() as u64,
        packet_bytes: size_of::<crate::packet::Packet>() as u64,
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
    /// What each flow asked for, in order.
    pub fn flow_specs(&self) -> Vec<&FlowSpec> {
        core!(&self.0, c => c.flow_specs())
    }
    /// `tcp_info` of a flow's client and server sockets, as they are now.
    pub fn tcp_info(&self, flow: usize) -> Sockets<TcpInfo> {
        self.tcp_info_at(flow, self.now())
    }
    /// `tcp_info` of a flow's sockets with the times since the last send and receive, the chrono
    /// stats and the timers counted up to `at` (e.g. the end of a `run_until`, which may lie
    /// after the last event).
    pub fn tcp_info_at(&self, flow: usize, at: SimTime) -> Sockets<TcpInfo> {
        core!(&self.0, c => c.tcp_info_at(flow, at))
    }
    /// The counters of a flow's client and server sockets, as they are now.
    pub fn tcp_stats(&self, flow: usize) -> Sockets<TcpStats> {
        core!(&self.0, c => c.tcp_stats(flow))
    }
    /// A port's transmit counters, as they are now.
    pub fn port_counters(&self, p: PortId) -> PortCounters {
        core!(&self.0, c => c.port_counters(p))
    }
    /// Add traffic that opens flows during the run (before running).
    pub fn add_traffic(&mut self, traffic: Box<dyn Traffic>) {
        core!(&mut self.0, c => c.add_traffic(traffic))
    }
    /// Let `stop` end the run early: once it is raised, `run_until` returns at its next progress
    /// point (every 100 ms of simulated time) and `stopped_at` says when.
    pub fn set_stop(&mut self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        core!(&mut self.0, c => c.stop = Some(stop))
    }
    /// The simulated time a raised stop ended the run at (None: it ran to its end).
    pub fn stopped_at(&self) -> Option<SimTime> {
        core!(&self.0, c => c.stopped_at)
    }
    /// Hand flows opened by traffic to `sink` as they are released (and, at the end, those
    /// still open) instead of keeping them for `Records::done`.
    pub fn set_flow_sink(&mut self, sink: Box<dyn FlowSink>) {
        core!(&mut self.0, c => c.sink = Some(sink))
    }
    /// Copy the packets crossing the captures' points to `sink`, in time order (before running).
    pub fn set_capture(&mut self, specs: Vec<CaptureSpec>, sink: Box<dyn PacketSink>) {
        core!(&mut self.0, c => {
            let ports = c.ports.len();
            c.capture = Some(Box::new(Capturer::new(specs, ports, sink)));
        })
    }
    /// End the run and hand over its records; the network is dropped.
    pub fn into_records(self) -> Records {
        let event_list = self.event_list();
        core!(self.0, c => c.into_records(event_list))
    }
}

#[cfg(test)]
mod host_jitter_tests {
    use super::*;

    #[test]
    fn byte_times_scale_with_the_link_rate() {
        let auto = HostJitter::ByteTimes(25);
        assert_eq!(auto.bound(100_000_000), SimTime::from_ns(2_000));
        assert_eq!(auto.bound(1_000_000_000), SimTime::from_ns(200));
        assert_eq!(auto.bound(10_000_000_000), SimTime::from_ns(20));
        assert_eq!(auto.bound(100_000_000_000), SimTime::from_ns(2));
        assert_eq!(HostJitter::Fixed(SimTime::from_us(3)).bound(10_000_000_000), SimTime::from_us(3));
    }
}
