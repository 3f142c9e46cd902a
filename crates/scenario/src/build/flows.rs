//! `[[flows]]` and `[traffic]`: the TCP connections and the settings of both their ends.

use super::base_rtt::BaseRttPrograms;
use super::tcp::tcp_config;
use super::{check_path, host};
use crate::error::{Error, Result};
use crate::spec::{self, Scenario};
use crate::units::{
    bytes, duration,
    DurationRange::{NonNegative, Positive},
};
use ccsim_engine::{Rng, SimTime};
use ccsim_net::{FlowKind, FlowSpec, Lifecycle, NodeId, NodeKind, Routes, Topology};
use ccsim_tcp::TcpConfig;
use std::collections::HashMap;
use std::sync::Arc;

/// The client of the n-th flow uses port 40000 + n (wrapping), every server port 5001.
const CLIENT_PORT_BASE: u16 = 40000;
const SERVER_PORT: u16 = 5001;

fn client_port(n: usize) -> u16 {
    CLIENT_PORT_BASE.wrapping_add(n as u16)
}

/// Every `[[flows]]` entry, `count` flows each, in file order.
pub(super) fn flows(s: &Scenario, topo: &Topology, routes: &Routes) -> Result<Vec<FlowSpec>> {
    let mut flows = Vec::new();
    for (i, f) in s.flows.iter().enumerate() {
        flow_entry(s, f, i, topo, routes, &mut flows)?;
    }
    Ok(flows)
}

/// When a flow starts, connects (if earlier than `start`) and stops writing.
struct FlowTimes {
    start: SimTime,
    connect: Option<SimTime>,
    stop: Option<SimTime>,
}

impl FlowTimes {
    fn of(f: &spec::Flow, field: &str) -> Result<Self> {
        let start = duration(&f.start, &format!("{field}.start"), NonNegative)?;
        let connect = match &f.connect {
            Some(q) => {
                let t = duration(q, &format!("{field}.connect"), NonNegative)?;
                if t > start {
                    return Err(Error::new(
                        format!("{field}.connect"),
                        format!("must not be later than start ({} s); allowed 0 s..=start", start.secs_f64()),
                    ));
                }
                (t < start).then_some(t)
            }
            None => None,
        };
        let stop = stop_after(f.stop.as_ref(), start, &format!("{field}.stop"))?;
        Ok(FlowTimes { start, connect, stop })
    }
}

/// An optional stop time, which must be after `start`.
fn stop_after(stop: Option<&crate::Quantity>, start: SimTime, field: &str) -> Result<Option<SimTime>> {
    let Some(q) = stop else { return Ok(None) };
    let t = duration(q, field, Positive)?;
    if t <= start {
        return Err(Error::new(field, "must be after start"));
    }
    Ok(Some(t))
}

/// What a flow sends: `kind` with its `size` and `stop`.
fn flow_kind(f: &spec::Flow, stop: Option<SimTime>, field: &str) -> Result<FlowKind> {
    Ok(match f.kind {
        spec::FlowKind::Rpc => {
            let q = f.size.as_ref().ok_or_else(|| {
                Error::new(format!("{field}.size"), "an rpc flow needs the size of each request, e.g. \"10KB\"")
            })?;
            FlowKind::Rpc { bytes: bytes(q, &format!("{field}.size"))?, stop }
        }
        spec::FlowKind::Bulk => {
            if f.size.is_some() {
                return Err(Error::new(format!("{field}.size"), "a bulk flow has no size; use kind = \"transfer\""));
            }
            FlowKind::Bulk { stop }
        }
        spec::FlowKind::Transfer => {
            let q = f
                .size
                .as_ref()
                .ok_or_else(|| Error::new(format!("{field}.size"), "a transfer needs a size, e.g. \"1MB\""))?;
            if f.stop.is_some() {
                return Err(Error::new(
                    format!("{field}.stop"),
                    "a transfer ends when its data is acknowledged; remove stop",
                ));
            }
            FlowKind::Transfer { bytes: bytes(q, &format!("{field}.size"))? }
        }
    })
}

/// The client's socket: `[tcp]` with the flow's `cc`, `ecn` and `syn_ect`.
fn client_config(s: &Scenario, f: &spec::Flow) -> Result<TcpConfig> {
    let mut client = tcp_config(&s.tcp, f.cc.unwrap_or(s.tcp.cc))?;
    if let Some(e) = f.ecn {
        client.ecn = e.into();
    }
    if let Some(b) = f.syn_ect {
        client.syn_ect = b;
    }
    Ok(client)
}

/// The server's socket: the client's with the flow's `server_cc` and `server_ecn`.
fn server_config(client: &TcpConfig, f: &spec::Flow) -> TcpConfig {
    let mut server = client.clone();
    if let Some(c) = f.server_cc {
        server.cc = c;
    }
    if let Some(e) = f.server_ecn {
        server.ecn = e.into();
    }
    server
}

/// The flows of `[[flows]]` entry `i`: one, or `count` named name-0, name-1, ...
fn flow_entry(
    s: &Scenario,
    f: &spec::Flow,
    i: usize,
    topo: &Topology,
    routes: &Routes,
    flows: &mut Vec<FlowSpec>,
) -> Result<()> {
    let field = format!("flows[{i}]");
    let src = host(topo, &f.src, &format!("{field}.src"))?;
    let dst = host(topo, &f.dst, &format!("{field}.dst"))?;
    check_path(routes, topo, src, dst, &format!("{field}.dst"))?;
    let client = client_config(s, f)?;
    let server = Arc::new(server_config(&client, f));
    let client = Arc::new(client);
    let times = FlowTimes::of(f, &field)?;
    let kind = flow_kind(f, times.stop, &field)?;
    if f.dscp > 63 {
        return Err(Error::new(format!("{field}.dscp"), format!("{} is out of range; allowed 0..=63", f.dscp)));
    }
    if f.count == 0 || f.count > 100_000 {
        return Err(Error::new(format!("{field}.count"), format!("{} is out of range; allowed 1..=100000", f.count)));
    }
    let base = if f.name.is_empty() { format!("flow{i}") } else { f.name.clone() };
    for k in 0..f.count {
        flows.push(FlowSpec {
            name: if f.count == 1 { base.clone() } else { format!("{base}-{k}") },
            src,
            dst,
            start: times.start,
            connect: times.connect,
            kind: kind.clone(),
            client: client.clone(),
            server: server.clone(),
            lifecycle: Lifecycle::Persistent,
            dscp: f.dscp,
            mark: f.mark,
            src_port: client_port(flows.len()),
            dst_port: SERVER_PORT,
            group: 0,
        });
    }
    Ok(())
}

/// A uniformly random permutation of 0..n without fixed points (n >= 2), drawn from `rng`:
/// Fisher–Yates shuffles until one has no fixed point (about e tries on average).
fn derangement(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    loop {
        for i in (1..n).rev() {
            let j = rng.below(i as u32 + 1) as usize;
            p.swap(i, j);
        }
        if p.iter().enumerate().all(|(i, &x)| i != x) {
            return p;
        }
    }
}

/// Stream of the traffic generator's random draws (flows use 0x2000_0000 + index, ports
/// 0x1000_0000 + port).
const TRAFFIC_STREAM: u64 = 0x3000_0000;

/// `[traffic]`: generated bulk flows, to follow the `first` flows of `[[flows]]`.
pub(super) fn traffic(
    s: &Scenario,
    tr: &spec::Traffic,
    topo: &Topology,
    routes: &Routes,
    first: usize,
) -> Result<Vec<FlowSpec>> {
    let client = Arc::new(tcp_config(&s.tcp, tr.cc.unwrap_or(s.tcp.cc))?);
    if tr.dscp > 63 {
        return Err(Error::new("traffic.dscp", format!("{} is out of range; allowed 0..=63", tr.dscp)));
    }
    let start = duration(&tr.start, "traffic.start", NonNegative)?;
    let stop = stop_after(tr.stop.as_ref(), start, "traffic.stop")?;
    let pairs = match tr.pattern {
        spec::TrafficPattern::Permutation => permutation(s, topo, routes)?,
    };
    Ok(pairs
        .into_iter()
        .enumerate()
        .map(|(i, (src, dst))| FlowSpec {
            name: format!("perm-{}", topo.name(src)),
            src,
            dst,
            start,
            connect: None,
            kind: FlowKind::Bulk { stop },
            client: client.clone(),
            server: client.clone(),
            lifecycle: Lifecycle::Persistent,
            dscp: tr.dscp,
            mark: 0,
            src_port: client_port(first + i),
            dst_port: SERVER_PORT,
            group: 0,
        })
        .collect())
}

/// Every host sends to another, the destinations a derangement drawn from `run.seed`: (source,
/// destination) in host order.
fn permutation(s: &Scenario, topo: &Topology, routes: &Routes) -> Result<Vec<(NodeId, NodeId)>> {
    let hosts: Vec<NodeId> =
        (0..topo.num_nodes()).filter(|&i| topo.kinds[i] == NodeKind::Host).map(|i| NodeId(i as u32)).collect();
    if hosts.len() < 2 {
        return Err(Error::new("traffic.pattern", "a permutation needs at least 2 hosts"));
    }
    let perm = derangement(hosts.len(), &mut Rng::new(s.run.seed, TRAFFIC_STREAM));
    let mut pairs = Vec::with_capacity(hosts.len());
    for (i, &src) in hosts.iter().enumerate() {
        let dst = hosts[perm[i]];
        check_path(routes, topo, src, dst, "traffic.pattern")?;
        pairs.push((src, dst));
    }
    Ok(pairs)
}

/// What each end's host decides for its sockets: a host whose NIC runs fq paces its sockets
/// through it, and its BPF sock_ops program answers `BPF_SOCK_OPS_BASE_RTT` (the server's peer is
/// the client).
pub(super) fn apply_host_settings(flows: &mut [FlowSpec], topo: &Topology, programs: &BaseRttPrograms) {
    let mut hosts = HostSettings::new(topo, programs.clone());
    for f in flows {
        f.client = hosts.socket(&f.client, f.src, f.dst);
        f.server = hosts.socket(&f.server, f.dst, f.src);
    }
}

/// A host's say in its sockets' settings (fq pacing, the BPF base-RTT reply), applied to a
/// flow's configuration: every distinct result is built once and shared by the flows that use
/// it (a thousand flows with the same settings hold one `TcpConfig`).
pub(super) struct HostSettings {
    paced: Vec<bool>,
    programs: BaseRttPrograms,
    /// (the configuration it came from, fq, base RTT) -> the shared result.
    made: HashMap<(usize, bool, Option<u32>), Arc<TcpConfig>>,
    /// Keeps every configuration a key points to alive, so that no address is reused.
    bases: Vec<Arc<TcpConfig>>,
}

impl HostSettings {
    pub(super) fn new(topo: &Topology, programs: BaseRttPrograms) -> Self {
        HostSettings { paced: fq_pacing_nodes(topo), programs, made: HashMap::new(), bases: Vec::new() }
    }

    /// `base` as host `host`'s socket towards `peer`.
    pub(super) fn socket(&mut self, base: &Arc<TcpConfig>, host: NodeId, peer: NodeId) -> Arc<TcpConfig> {
        let fq = self.paced[host.0 as usize];
        let rtt = self.programs.reply(host, peer, base.cc);
        if base.fq == fq && base.base_rtt_us == rtt {
            return base.clone();
        }
        let key = (Arc::as_ptr(base) as usize, fq, rtt);
        if !self.made.contains_key(&key) {
            self.bases.push(base.clone());
        }
        self.made.entry(key).or_insert_with(|| Arc::new(TcpConfig { fq, base_rtt_us: rtt, ..(**base).clone() })).clone()
    }
}

/// Per node: its NIC runs fq with pacing, so its sockets become SK_PACING_FQ.
fn fq_pacing_nodes(topo: &Topology) -> Vec<bool> {
    let mut paced = vec![false; topo.num_nodes()];
    for l in &topo.links {
        paced[l.a.0 as usize] |= l.queue_ab.fq.is_some_and(|f| f.pacing);
        paced[l.b.0 as usize] |= l.queue_ba.fq.is_some_and(|f| f.pacing);
    }
    paced
}
