//! Applications: long-lived bulk senders (iperf-like), fixed-size transfers, and ping probes.

use crate::record::Sockets;
use crate::topology::NodeId;
use ccsim_engine::SimTime;
use ccsim_tcp::{Ecn, TcpConfig, TcpStats};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// Send as fast as TCP allows from `start` until `stop` (or the end of the run).
    Bulk { stop: Option<SimTime> },
    /// Send `bytes`, then close; the flow completes when all of it is acknowledged.
    Transfer { bytes: u64 },
    /// Back-to-back RPCs over one connection: send `bytes`, wait until all of it is
    /// acknowledged, send the next, until `stop` (or the end of the run). Each RPC's latency
    /// (write to last byte acknowledged) is recorded.
    Rpc { bytes: u64, stop: Option<SimTime> },
    /// A request and its response over one connection (a query to a worker): the client
    /// writes `request` bytes; the server, once it has read them all, writes `response` bytes;
    /// the exchange completes when the client has received the whole response.
    Exchange { request: u64, response: u64 },
}

impl FlowKind {
    /// The kind's name in results: "bulk", "transfer", "rpc", "exchange".
    pub fn label(&self) -> &'static str {
        match self {
            FlowKind::Bulk { .. } => "bulk",
            FlowKind::Transfer { .. } => "transfer",
            FlowKind::Rpc { .. } => "rpc",
            FlowKind::Exchange { .. } => "exchange",
        }
    }

    /// Bytes the application writes: a transfer's size, one RPC's, an exchange's request and
    /// response together; None for a bulk flow.
    pub fn size_bytes(&self) -> Option<u64> {
        match *self {
            FlowKind::Bulk { .. } => None,
            FlowKind::Transfer { bytes } | FlowKind::Rpc { bytes, .. } => Some(bytes),
            FlowKind::Exchange { request, response } => Some(request + response),
        }
    }
}

/// One TCP connection from `src` (the client, which sends) to `dst` (the server).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub name: String,
    pub src: NodeId,
    pub dst: NodeId,
    /// When the application writes (and the flow's times start).
    pub start: SimTime,
    /// When the client connects, if before `start` (`None`: at `start`, its first write
    /// queued behind the SYN): a tool such as flowgrind opens its test connections when it sets
    /// the flows up and writes when the test starts.
    pub connect: Option<SimTime>,
    pub kind: FlowKind,
    /// The sockets' settings, shared read-only by every flow that has the same.
    pub client: Arc<TcpConfig>,
    pub server: Arc<TcpConfig>,
    /// Whether the connection is kept to the end of the run or closed and released.
    pub lifecycle: Lifecycle,
    /// DSCP of the connection's packets (both directions).
    pub dscp: u8,
    /// Socket mark (`SO_MARK`), for `ss` filters.
    pub mark: u32,
    pub src_port: u16,
    pub dst_port: u16,
    /// Flows a traffic opened together (an incast round: its completion is its last flow's);
    /// 0: none.
    pub group: u64,
}

/// What becomes of a flow's connection once its application is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lifecycle {
    /// The connection lives to the end of the run (an iperf-like test, a fixed flow).
    #[default]
    Persistent,
    /// A transfer as a short-lived connection: the client writes its bytes and calls
    /// `close()` at once (the FIN rides on the last data segment); the server, once it has read
    /// everything (end of file), closes too. The connection's memory is released when both
    /// sockets are closed and none of its packets is left in the network. That last condition
    /// stands in for TIME-WAIT: Linux keeps a time-wait socket for 60 s (`TCP_TIMEWAIT_LEN`) so
    /// that old duplicates die before the 4-tuple is reused; here the simulator knows when the
    /// last one has gone. Only `FlowKind::Transfer` flows close.
    CloseWhenDone,
    /// One of a pool of persistent connections per (traffic, client host, server host): a flow
    /// takes an idle connection of its pair if there is one (no handshake), else opens a new
    /// one, and gives it back when done. Pooled connections stay open to the end of the run.
    Pooled,
}

/// A ping probe: ICMP echo requests from `src` to `dst` every `interval`.
#[derive(Clone, Debug, PartialEq)]
pub struct PingSpec {
    pub name: String,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub interval: SimTime,
    /// IP packet size in bytes (`ping -s 56` gives 84).
    pub size: u32,
    pub dscp: u8,
    pub ecn: Ecn,
}

/// What a flow did, read at the end of the run.
#[derive(Clone, Debug)]
pub struct FlowRecord {
    pub name: String,
    pub cc: String,
    pub src: NodeId,
    pub dst: NodeId,
    pub kind: FlowKind,
    pub start: SimTime,
    /// When the sender stopped (bulk) or the transfer completed.
    pub end: Option<SimTime>,
    pub established: Option<SimTime>,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    /// Timeouts as `netstat -s` "other TCP timeouts" counted them before 2019
    /// ([`TcpStats::other_timeouts`](ccsim_tcp::TcpStats)).
    pub other_timeouts: u64,
    pub fast_recoveries: u64,
    pub cwr_events: u64,
    pub completion: Option<SimTime>,
    /// Latency of each completed RPC (RPC flows only).
    pub rpc_latencies: Vec<SimTime>,
    /// The counters of the client and server sockets.
    pub sockets: Sockets<TcpStats>,
}

/// What a flow opened during the run did, handed over when its connection is released (or, for
/// one still open, at the end of the run): the input of `fct.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowDone {
    /// The flow's number in the run: flows given up front first, then arrivals in order.
    pub id: u64,
    /// Index of the traffic that opened it (`Sim::add_traffic` order).
    pub traffic: u32,
    /// Its group (`FlowSpec::group`).
    pub group: u64,
    pub src: NodeId,
    pub dst: NodeId,
    /// Bytes the application wrote.
    pub size: u64,
    /// When the flow arrived (its first write, and its connect when it opened a connection).
    pub start: SimTime,
    /// When its last byte was acknowledged (None: it did not complete within the run).
    pub completion: Option<SimTime>,
    /// Its completion time alone in the network (`ideal.rs`; None: it has no source route).
    pub ideal: Option<SimTime>,
    /// Whether it opened its own connection (handshake included in its time).
    pub opened_connection: bool,
    pub cc: &'static str,
    pub dscp: u8,
    pub retransmits: u64,
    pub rto_count: u64,
}

/// RTT samples of a ping probe (in seconds) and how many requests got no reply.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PingRecord {
    pub name: String,
    /// Round-trip times of the answered pings, in seconds, in the order the replies arrived.
    pub rtts: Vec<f64>,
    /// Each answered ping, in the same order: its sequence number, send time and exact RTT.
    pub replies: Vec<PingReplyRecord>,
    pub sent: u64,
}

/// One answered ping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingReplyRecord {
    /// 1 for the probe's first ping.
    pub seq: u32,
    pub sent: SimTime,
    pub rtt: SimTime,
}
