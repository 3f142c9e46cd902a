//! Traffic that opens flows while the run goes on (workload generators): the one small trait a
//! new kind of traffic implements, and the event that asks each for its arrivals.
//!
//! A traffic keeps one pending `Ev::Arrival` at a time, at its next arrival, so a workload of
//! millions of flows holds one event and the flows now open, never the flows to come.

mod incast;
mod poisson;
mod query;
mod sizes;

pub use incast::{Incast, Rounds};
pub use poisson::{Poisson, PoissonSender};
pub use query::{Aggregator, Query};
pub use sizes::{Cdf, CdfError, FlowSizes};

use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowDone, FlowKind, FlowSpec, Lifecycle};
use crate::record::Sockets;
use crate::topology::NodeId;
use ccsim_engine::{EventQueue, Rng, SimTime};
use ccsim_tcp::TcpConfig;
use std::sync::Arc;

/// An exponentially distributed gap of mean 1/`rate` seconds (the next arrival of a Poisson
/// process), drawn from `rng` by inversion.
pub(crate) fn exp_gap(rng: &mut Rng, rate: f64) -> SimTime {
    let gap = -(1.0 - rng.next_f64()).ln() / rate;
    SimTime::from_ns((gap * 1e9).round() as u64)
}

/// Move `n` (at most `pool.len()`) distinct entries of `pool`, chosen uniformly, to its front:
/// the first `n` steps of a Fisher–Yates shuffle. Returns how many were chosen.
pub(crate) fn pick_distinct<T>(rng: &mut Rng, pool: &mut [T], n: usize) -> usize {
    let n = n.min(pool.len());
    for k in 0..n {
        let j = k + rng.below((pool.len() - k) as u32) as usize;
        pool.swap(k, j);
    }
    n
}

impl Rounds {
    /// The round after one at `t`: a fixed interval later, or a Poisson gap drawn from `rng`.
    pub(crate) fn after(self, t: SimTime, rng: &mut Rng) -> SimTime {
        match self {
            Rounds::Every(iv) => t + iv,
            Rounds::Poisson(rate) => t + exp_gap(rng, rate),
        }
    }
}

/// The sockets' settings of a flow from one host to another (each host has its say: fq
/// pacing, a BPF base-RTT reply), shared by every flow with the same.
pub type SocketsFor = Arc<dyn Fn(NodeId, NodeId) -> Sockets<Arc<TcpConfig>> + Send + Sync>;

/// What every flow of a traffic has in common; the traffic picks hosts, sizes and times.
#[derive(Clone)]
pub struct FlowTemplate {
    pub name: String,
    pub sizes: Arc<FlowSizes>,
    pub sockets: SocketsFor,
    pub dscp: u8,
    pub mark: u32,
    pub dst_port: u16,
}

impl FlowTemplate {
    /// A short-lived transfer of `size` bytes from `src` to `dst`, arriving at `now`.
    pub fn flow(&self, src: NodeId, dst: NodeId, size: u64, now: SimTime, group: u64) -> FlowSpec {
        let Sockets { client, server } = (self.sockets)(src, dst);
        FlowSpec {
            name: self.name.clone(),
            src,
            dst,
            start: now,
            connect: None,
            kind: FlowKind::Transfer { bytes: size },
            client,
            server,
            lifecycle: Lifecycle::CloseWhenDone,
            dscp: self.dscp,
            mark: self.mark,
            src_port: 0,
            dst_port: self.dst_port,
            group,
        }
    }

    /// An exchange over a pooled connection from `src` (which asks `request` bytes) to `dst`
    /// (which answers `response` bytes), arriving at `now`.
    pub fn exchange(
        &self,
        src: NodeId,
        dst: NodeId,
        request: u64,
        response: u64,
        now: SimTime,
        group: u64,
    ) -> FlowSpec {
        FlowSpec {
            kind: FlowKind::Exchange { request, response },
            lifecycle: Lifecycle::Pooled,
            ..self.flow(src, dst, response, now, group)
        }
    }
}

/// A source of flows arriving during the run.
///
/// The simulator asks `next_arrival`, and at that time calls `arrive`, which appends the flows
/// arriving then (each opens its own connection from an ephemeral port) and moves on. A flow's
/// completion is reported back through `completed`, for traffic whose next arrival depends on
/// it (closed-loop clients, query aggregators).
pub trait Traffic: Send {
    /// When the next flow arrives (None: no more flows, unless `completed` brings one).
    fn next_arrival(&self) -> Option<SimTime>;
    /// The flows arriving at `now`, which is `next_arrival()`.
    fn arrive(&mut self, now: SimTime, flows: &mut Vec<FlowSpec>);
    /// A flow this traffic opened had all its data acknowledged.
    fn completed(&mut self, _now: SimTime, _flow: &FlowDone) {}
}

/// A traffic in the simulation, with its pending arrival event.
pub(crate) struct TrafficSlot {
    pub(crate) source: Box<dyn Traffic>,
    pub(crate) pending: Option<SimTime>,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    pub(crate) fn add_traffic(&mut self, source: Box<dyn Traffic>) {
        // Its flows' paths are not known yet: no port may take a packet ahead of its arrival.
        self.express.clear();
        self.traffic.push(TrafficSlot { source, pending: None });
        self.schedule_arrival(self.traffic.len() - 1);
    }

    /// Keep traffic `t`'s `Arrival` event pending at its next arrival.
    pub(crate) fn schedule_arrival(&mut self, t: usize) {
        let slot = &mut self.traffic[t];
        if let Some(at) = slot.source.next_arrival() {
            if slot.pending.is_none_or(|p| at < p) {
                slot.pending = Some(at);
                self.q.schedule(at, Ev::Arrival(t as u32));
            }
        }
    }

    pub(crate) fn arrival(&mut self, t: usize, now: SimTime) {
        if self.traffic[t].pending != Some(now) {
            return; // superseded by an earlier arrival
        }
        self.traffic[t].pending = None;
        let mut flows = std::mem::take(&mut self.arriving);
        while self.traffic[t].source.next_arrival().is_some_and(|at| at <= now) {
            self.traffic[t].source.arrive(now, &mut flows);
        }
        for spec in flows.drain(..) {
            self.open_flow(spec, t as u32, now);
        }
        self.arriving = flows;
        self.schedule_arrival(t);
    }

    /// A flow of traffic `t` completed: tell it, and keep its next arrival scheduled.
    pub(crate) fn traffic_completed(&mut self, t: usize, done: &FlowDone, now: SimTime) {
        self.traffic[t].source.completed(now, done);
        self.schedule_arrival(t);
    }
}
