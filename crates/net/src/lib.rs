//! The network: hosts, switches, links and port queues, and the single-threaded event loop that
//! moves packets between them and drives the TCP endpoints.
//!
//! - `packet.rs` — the packet carried through the network (a TCP segment or a ping);
//! - `queue.rs`  — port queues: drop-tail, step ECN marking at K, RED as Linux tc-red, per-DSCP
//!   classes;
//! - `fq.rs`     — the fq qdisc (sch_fq): per-socket round robin and departure-time pacing;
//! - `gro.rs`    — generic receive offload at a host's NIC: in-order segments merged per poll;
//! - `topology.rs` — nodes, links, routes (shortest paths, ECMP by flow hash);
//! - `sim.rs`    — the event loop: one pending event per port transmission, per link, per
//!   endpoint timer;
//! - `flows.rs`  — applications (bulk, fixed-size transfers, ping probes) and their records.

mod flows;
mod fq;
mod gro;
mod packet;
mod queue;
mod sim;
mod topology;

/// Test helper for the `repr(C)` layouts: each (name, offset, size, line) field lies wholly in
/// its 64-byte cache line.
#[cfg(test)]
fn assert_cache_lines(fields: &[(&str, usize, usize, usize)]) {
    for &(name, off, size, want) in fields {
        assert_eq!((off / 64, (off + size - 1) / 64), (want, want), "{name} at {off}");
    }
}

pub use flows::{FlowKind, FlowRecord, FlowSpec, PingRecord, PingSpec};
pub use fq::FqSpec;
pub use packet::{Packet, Payload};
pub use queue::{
    Aqm, ClassSpec, EcnMarkPoint, NonEctPolicy, QueueLimit, QueueSpec, QueueStats, RedSpec, Scheduler, Unit,
};
/// A port's queue, for the micro-benchmarks (the simulator owns its ports).
#[doc(hidden)]
pub use queue::{EnqueueResult, PortQueue};
pub use sim::{EventList, PortSample, RunStats, Sim, SimConfig, WHEEL_MIN_PORTS};
pub use topology::{LinkSpec, NodeId, NodeKind, PortId, Routes, Topology, TopologyError};
