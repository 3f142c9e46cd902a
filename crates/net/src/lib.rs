//! The network: hosts, switches, links and port queues, and the single-threaded event loop that
//! moves packets between them and drives the TCP endpoints.
//!
//! - `packet.rs` — the packet carried through the network (a TCP segment or a ping);
//! - `queue.rs`  — port queues: drop-tail, step ECN marking at K, RED as Linux tc-red, per-DSCP
//!   classes;
//! - `fq.rs`     — the fq qdisc (sch_fq): per-socket round robin and departure-time pacing;
//! - `gro.rs`    — generic receive offload at a host's NIC: in-order segments merged per poll;
//! - `topology.rs` — nodes, links, routes (shortest paths, ECMP by flow hash);
//! - `route.rs`  — the next hop of a packet, and a flow's source route traced once;
//! - `sim.rs`    — `Sim` and `SimConfig`: what a user of the crate builds and runs;
//! - `core.rs`   — the state of a running network and its construction;
//! - `event_loop.rs` — the events and their dispatch: one pending event per port transmission,
//!   per link, per endpoint timer;
//! - `port.rs`   — ports and links: queueing, transmission, arrival; lazy and express ports;
//! - `host.rs`   — the host stack: TSQ, fq's room, the receive path (GRO), delivery to sockets;
//! - `conn.rs`   — connections: endpoint output to packets, timer events;
//! - `app.rs`    — applications (bulk, fixed-size transfers, RPCs) and ping probes;
//! - `traffic.rs` — traffic that opens flows during the run (the `Traffic` trait);
//! - `ideal.rs`  — a flow's completion time alone in the network (the slowdown's denominator);
//! - `lifecycle.rs` — connections opened at any time, ephemeral ports, release after close;
//! - `buffer.rs` — a switch's shared buffer with dynamic thresholds (admission, accounting);
//! - `switch.rs` — switches as entities that own their ports (switch-wide state lives here);
//! - `capture.rs` — packet capture: copies of packets at chosen ports, in time order, to a sink;
//! - `record.rs` — sampling, and the counters and records read at the end;
//! - `flows.rs`  — what a flow or ping probe is asked to do, and what it did.

mod app;
mod buffer;
mod capture;
mod conn;
mod core;
mod event_loop;
mod flows;
mod fq;
mod gro;
mod host;
mod ideal;
mod lifecycle;
mod packet;
mod port;
mod queue;
mod record;
mod route;
mod sim;
mod switch;
mod topology;
mod traffic;

/// Test helper for the `repr(C)` layouts: each (name, offset, size, line) field lies wholly in
/// its 64-byte cache line.
#[cfg(test)]
fn assert_cache_lines(fields: &[(&str, usize, usize, usize)]) {
    for &(name, off, size, want) in fields {
        assert_eq!((off / 64, (off + size - 1) / 64), (want, want), "{name} at {off}");
    }
}

pub use buffer::{BufferDrops, BufferError, Refusal, SharedBuffer, SharedBufferSpec};
pub use capture::{CaptureCount, CapturePoint, CaptureSpec, CapturedPacket, CapturedPayload, PacketSink};
pub use flows::{FlowDone, FlowKind, FlowRecord, FlowSpec, Lifecycle, PingRecord, PingReplyRecord, PingSpec};
pub use fq::FqSpec;
pub use ideal::{ideal_fct, Hop, WireSizes};
pub use lifecycle::{FlowSink, EPHEMERAL_HIGH, EPHEMERAL_LOW};
pub use packet::{LinkNext, Packet, Payload};
pub use queue::{
    Aqm, ClassSpec, EcnMarkPoint, NonEctPolicy, QueueLimit, QueueSpec, QueueStats, RedSpec, Scheduler, Unit,
};
/// A port's queue, for the micro-benchmarks (the simulator owns its ports).
#[doc(hidden)]
pub use queue::{EnqueueResult, PortQueue};
pub use record::{
    first_sample_after, ClassRecord, FlowSample, Occupancy, PortCounters, PortRecord, PortSample, Records, Sockets,
};
pub use sim::{footprint, EventList, Footprint, HostJitter, RunStats, Sim, SimConfig, WHEEL_MIN_PORTS};
pub use switch::{BufferRecord, BufferSample, Switch, SwitchId};
pub use topology::{LinkSpec, NodeId, NodeKind, PortId, Routes, Topology, TopologyError};
pub use traffic::{
    Aggregator, Cdf, CdfError, FlowSizes, FlowTemplate, Incast, Poisson, PoissonSender, Query, Rounds, SocketsFor,
    Traffic,
};
