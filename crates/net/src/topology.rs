//! Nodes, links and routes. Every link is two directed ports, each with its own queue; routes
//! are shortest paths computed once at build time, with equal-cost next hops kept for ECMP.

use crate::queue::QueueSpec;
use ccsim_engine::SimTime;
use std::collections::VecDeque;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A directed port: link `i` owns ports `2i` (a→b) and `2i+1` (b→a).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

/// A full-duplex link between two nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub a: NodeId,
    pub b: NodeId,
    pub rate_bps: u64,
    pub delay: SimTime,
    /// Per-packet Bernoulli loss probability, each direction.
    pub loss: f64,
    /// Queue at a's end (packets a→b) and at b's end (b→a).
    pub queue_ab: QueueSpec,
    pub queue_ba: QueueSpec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyError {
    UnknownNode(String),
    DuplicateNode(String),
    NoRoute { from: String, to: String },
    HostForwarding(String),
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::UnknownNode(n) => write!(f, "unknown node `{n}`"),
            TopologyError::DuplicateNode(n) => write!(f, "node `{n}` is defined twice"),
            TopologyError::NoRoute { from, to } => write!(f, "no route from `{from}` to `{to}`"),
            TopologyError::HostForwarding(n) => write!(f, "host `{n}` has more than one link; hosts have one NIC"),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub names: Vec<String>,
    pub kinds: Vec<NodeKind>,
    pub links: Vec<LinkSpec>,
}

impl Topology {
    pub fn new() -> Self {
        Self::default()
    }
    fn add(&mut self, name: &str, kind: NodeKind) -> Result<NodeId, TopologyError> {
        if self.names.iter().any(|n| n == name) {
            return Err(TopologyError::DuplicateNode(name.into()));
        }
        self.names.push(name.into());
        self.kinds.push(kind);
        Ok(NodeId(self.names.len() as u32 - 1))
    }
    pub fn add_host(&mut self, name: &str) -> Result<NodeId, TopologyError> {
        self.add(name, NodeKind::Host)
    }
    pub fn add_switch(&mut self, name: &str) -> Result<NodeId, TopologyError> {
        self.add(name, NodeKind::Switch)
    }
    pub fn node(&self, name: &str) -> Result<NodeId, TopologyError> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| NodeId(i as u32))
            .ok_or_else(|| TopologyError::UnknownNode(name.into()))
    }
    pub fn name(&self, n: NodeId) -> &str {
        &self.names[n.0 as usize]
    }
    pub fn add_link(&mut self, l: LinkSpec) -> PortId {
        self.links.push(l);
        PortId(2 * (self.links.len() as u32 - 1))
    }
    pub fn num_nodes(&self) -> usize {
        self.names.len()
    }
    /// Source and destination node of a port.
    pub fn port_ends(&self, p: PortId) -> (NodeId, NodeId) {
        let l = &self.links[(p.0 / 2) as usize];
        if p.0 % 2 == 0 {
            (l.a, l.b)
        } else {
            (l.b, l.a)
        }
    }
    /// The port from `from` to `to`, if they are linked.
    pub fn port_between(&self, from: NodeId, to: NodeId) -> Option<PortId> {
        self.links.iter().enumerate().find_map(|(i, l)| {
            if l.a == from && l.b == to {
                Some(PortId(2 * i as u32))
            } else if l.b == from && l.a == to {
                Some(PortId(2 * i as u32 + 1))
            } else {
                None
            }
        })
    }

    /// Shortest-path next hops: `routes[node][dst]` lists the ports leading one step closer to
    /// host `dst` (empty for `dst == node` or non-host destinations). Hosts never forward.
    pub fn routes(&self) -> Result<Vec<Vec<Vec<PortId>>>, TopologyError> {
        let n = self.num_nodes();
        // Outgoing ports per node.
        let mut out: Vec<Vec<PortId>> = vec![Vec::new(); n];
        let mut inc: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..self.links.len() {
            for p in [PortId(2 * i as u32), PortId(2 * i as u32 + 1)] {
                let (s, t) = self.port_ends(p);
                out[s.0 as usize].push(p);
                inc[t.0 as usize].push(s.0 as usize);
            }
        }
        for (i, k) in self.kinds.iter().enumerate() {
            if *k == NodeKind::Host && out[i].len() > 1 {
                return Err(TopologyError::HostForwarding(self.names[i].clone()));
            }
        }
        let mut routes = vec![vec![Vec::new(); n]; n];
        for d in 0..n {
            if self.kinds[d] != NodeKind::Host {
                continue;
            }
            // BFS backwards from d over nodes that may forward (switches), plus the sources.
            let mut dist = vec![u32::MAX; n];
            dist[d] = 0;
            let mut q = VecDeque::from([d]);
            while let Some(v) = q.pop_front() {
                if v != d && self.kinds[v] == NodeKind::Host {
                    continue; // hosts do not forward
                }
                for &u in &inc[v] {
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        q.push_back(u);
                    }
                }
            }
            for u in 0..n {
                if u == d || dist[u] == u32::MAX {
                    continue;
                }
                for &p in &out[u] {
                    let m = self.port_ends(p).1 .0 as usize;
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[u] && (m == d || self.kinds[m] == NodeKind::Switch) {
                        routes[u][d].push(p);
                    }
                }
            }
        }
        Ok(routes)
    }
}
