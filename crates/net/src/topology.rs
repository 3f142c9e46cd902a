//! Nodes, links and routes. Every link is two directed ports, each with its own queue; routes
//! are shortest paths computed once at build time, with equal-cost next hops kept for ECMP.

use crate::queue::QueueSpec;
use ccsim_engine::SimTime;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};
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
    /// Each node by its name (a k = 32 fat tree has 9 472).
    by_name: BTreeMap<String, NodeId>,
}

impl Topology {
    pub fn new() -> Self {
        Self::default()
    }
    fn add(&mut self, name: &str, kind: NodeKind) -> Result<NodeId, TopologyError> {
        let id = NodeId(self.names.len() as u32);
        match self.by_name.entry(name.into()) {
            Entry::Occupied(_) => return Err(TopologyError::DuplicateNode(name.into())),
            Entry::Vacant(v) => v.insert(id),
        };
        self.names.push(name.into());
        self.kinds.push(kind);
        Ok(id)
    }
    pub fn add_host(&mut self, name: &str) -> Result<NodeId, TopologyError> {
        self.add(name, NodeKind::Host)
    }
    pub fn add_switch(&mut self, name: &str) -> Result<NodeId, TopologyError> {
        self.add(name, NodeKind::Switch)
    }
    pub fn node(&self, name: &str) -> Result<NodeId, TopologyError> {
        self.by_name.get(name).copied().ok_or_else(|| TopologyError::UnknownNode(name.into()))
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
        if p.0.is_multiple_of(2) {
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

    /// Shortest-path next hops: `routes.get(node, dst)` lists the ports leading one step closer
    /// to host `dst` (empty for `dst == node` or non-host destinations). Hosts never forward.
    pub fn routes(&self) -> Result<Routes, TopologyError> {
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
        // A host has one link, so every path to it ends with the hop from its neighbour: beyond
        // that neighbour, a route to the host is the route to the neighbour (when a switch; a
        // host neighbour forwards nothing). One column per switch with hosts attached, not one
        // per host: a k = 32 fat tree's table shrinks sixteenfold.
        let mut r = Routes::new(self);
        // Each switch with hosts attached gets the next column (`roots[c]` is column c's switch).
        let mut column = vec![u32::MAX; n];
        let mut roots = Vec::new();
        for (h, ports) in out.iter().enumerate() {
            if self.kinds[h] != NodeKind::Host {
                continue;
            }
            let Some(&up) = ports.first() else { continue };
            let a = self.port_ends(up).1 .0 as usize;
            // The two directions of a link are ports 2i and 2i + 1.
            let down = PortId(up.0 ^ 1);
            let col = if self.kinds[a] == NodeKind::Switch {
                if column[a] == u32::MAX {
                    column[a] = roots.len() as u32;
                    roots.push(a);
                }
                column[a]
            } else {
                u32::MAX
            };
            r.attached[r.host_index[h] as usize] = (a as u32, down, col);
        }
        r.columns = roots.len();
        r.set = vec![0; n * r.columns];
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        let mut hops = Vec::new();
        for (col, &d) in roots.iter().enumerate() {
            // BFS backwards from switch d over nodes that may forward (switches), plus the sources.
            dist.fill(u32::MAX);
            dist[d] = 0;
            q.push_back(d);
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
                hops.clear();
                for &p in &out[u] {
                    let m = self.port_ends(p).1 .0 as usize;
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[u] && self.kinds[m] == NodeKind::Switch {
                        hops.push(p);
                    }
                }
                r.set(u, col, &hops);
            }
        }
        Ok(r)
    }
}

/// The route table: for every node and destination host, the equal-cost next-hop ports. A route
/// to a host is its neighbour's last hop down to it, and before that the route to the neighbour
/// switch, so the table has a column per switch with hosts attached (a fat tree's edge switches),
/// not per host. Candidate sets repeat (a fat tree's edge switch sends every remote host up the
/// same k/2 ports), so each distinct set is stored once and the table holds a 4-byte set index
/// per (node, column): 0.7 MB at k = 16, 19 MB at k = 32 (5.5 MB and 310 MB with a column per
/// host).
#[derive(Clone, Debug)]
pub struct Routes {
    /// Host index of each node (`u32::MAX` for switches).
    host_index: Vec<u32>,
    /// Per host: the node its link leads to (`u32::MAX`: none), the port from there down to the
    /// host, and that node's column (`u32::MAX` unless it is a switch).
    attached: Vec<(u32, PortId, u32)>,
    columns: usize,
    /// `set[node * columns + column]`: index into `sets`; 0 is the empty set.
    set: Vec<u32>,
    /// Each distinct set as (start, len) in `ports`.
    sets: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    interned: std::collections::HashMap<Vec<PortId>, u32>,
}

impl Routes {
    /// The bytes the table holds on the heap (for the pre-run estimate).
    pub fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let interned: usize = self.interned.keys().map(|k| k.len() * size_of::<PortId>() + 48).sum();
        (self.host_index.len() * 4
            + self.attached.len() * size_of::<(u32, PortId, u32)>()
            + self.set.len() * 4
            + self.sets.len() * 8
            + self.ports.len() * size_of::<PortId>()
            + interned) as u64
    }

    fn new(t: &Topology) -> Routes {
        let mut host_index = vec![u32::MAX; t.num_nodes()];
        let mut hosts = 0usize;
        for (i, k) in t.kinds.iter().enumerate() {
            if *k == NodeKind::Host {
                host_index[i] = hosts as u32;
                hosts += 1;
            }
        }
        Routes {
            host_index,
            attached: vec![(u32::MAX, PortId(u32::MAX), u32::MAX); hosts],
            columns: 0,
            set: Vec::new(),
            sets: vec![(0, 0)],
            ports: Vec::new(),
            interned: std::collections::HashMap::new(),
        }
    }

    fn set(&mut self, node: usize, col: usize, hops: &[PortId]) {
        if hops.is_empty() {
            return;
        }
        let id = match self.interned.get(hops) {
            Some(&id) => id,
            None => {
                let id = self.sets.len() as u32;
                self.sets.push((self.ports.len() as u32, hops.len() as u32));
                self.ports.extend_from_slice(hops);
                self.interned.insert(hops.to_vec(), id);
                id
            }
        };
        self.set[node * self.columns + col] = id;
    }

    /// The next-hop ports from node `node` towards node `dst` (empty when `dst` is `node`, a
    /// switch, or unreachable).
    #[inline]
    pub fn get(&self, node: usize, dst: usize) -> &[PortId] {
        let h = self.host_index[dst];
        if h == u32::MAX || node == dst {
            return &[];
        }
        let (a, down, col) = &self.attached[h as usize];
        if node as u32 == *a {
            return std::slice::from_ref(down);
        }
        if *col == u32::MAX {
            return &[];
        }
        let (start, len) = self.sets[self.set[node * self.columns + *col as usize] as usize];
        &self.ports[start as usize..(start + len) as usize]
    }

    /// Distinct next-hop sets stored (the empty set included; a host's last hop is not a set).
    pub fn distinct_sets(&self) -> usize {
        self.sets.len()
    }
}

/// A 1 Gb/s, 1 µs link with 100-packet drop-tail queues both ways, for tests.
#[cfg(test)]
pub(crate) fn test_link(t: &mut Topology, a: NodeId, b: NodeId) -> PortId {
    t.add_link(LinkSpec {
        a,
        b,
        rate_bps: 1_000_000_000,
        delay: SimTime::from_us(1),
        loss: 0.0,
        queue_ab: QueueSpec::drop_tail(100),
        queue_ba: QueueSpec::drop_tail(100),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_link as link;

    /// The port `from -> to` (panics if they are not linked).
    fn port(t: &Topology, from: NodeId, to: NodeId) -> PortId {
        t.port_between(from, to).expect("linked")
    }

    /// Next hops of `routes[u][d]` as the nodes they lead to, sorted.
    fn hops(t: &Topology, r: &Routes, u: NodeId, d: NodeId) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = r
            .get(u.0 as usize, d.0 as usize)
            .iter()
            .map(|&p| {
                let (s, m) = t.port_ends(p);
                assert_eq!(s, u, "a next hop of {} leaves from it", t.name(u));
                m
            })
            .collect();
        v.sort();
        v
    }

    /// Invariants of any route table: no route to oneself or to a switch; every next hop is the
    /// destination or a switch (hosts never forward); following any next hop reaches the
    /// destination in exactly one hop fewer.
    fn check_invariants(t: &Topology, r: &Routes) {
        let n = t.num_nodes();
        for u in 0..n {
            for d in 0..n {
                let (un, dn) = (NodeId(u as u32), NodeId(d as u32));
                let next = hops(t, r, un, dn);
                if u == d || t.kinds[d] == NodeKind::Switch {
                    assert!(next.is_empty(), "no route from {} to {}", t.name(un), t.name(dn));
                }
                for m in next {
                    assert!(
                        m == dn || t.kinds[m.0 as usize] == NodeKind::Switch,
                        "{} -> {} goes through host {}",
                        t.name(un),
                        t.name(dn),
                        t.name(m)
                    );
                }
            }
        }
        // Path lengths: walking always-first and always-last next hops both end at d in the
        // same number of steps.
        for u in 0..n {
            for d in 0..n {
                if r.get(u, d).is_empty() {
                    continue;
                }
                let walk = |pick_last: bool| {
                    let (mut v, mut steps) = (u, 0);
                    while v != d {
                        let c = r.get(v, d);
                        assert!(
                            !c.is_empty(),
                            "route from {} to {} dead-ends at {}",
                            t.names[u],
                            t.names[d],
                            t.names[v]
                        );
                        let p = if pick_last { c[c.len() - 1] } else { c[0] };
                        v = t.port_ends(p).1 .0 as usize;
                        steps += 1;
                        assert!(steps <= n, "routing loop");
                    }
                    steps
                };
                assert_eq!(walk(false), walk(true));
            }
        }
    }

    /// Next hops by a breadth-first search from each destination host itself (what the table
    /// held before it had a column per attachment switch): every port of `u` to a node one step
    /// closer that is the destination or may forward, in port order.
    fn reference(t: &Topology, u: usize, d: usize) -> Vec<PortId> {
        let n = t.num_nodes();
        if t.kinds[d] != NodeKind::Host || u == d {
            return Vec::new();
        }
        let ports: Vec<PortId> = (0..2 * t.links.len() as u32).map(PortId).collect();
        let mut dist = vec![u32::MAX; n];
        dist[d] = 0;
        let mut q = VecDeque::from([d]);
        while let Some(v) = q.pop_front() {
            if v != d && t.kinds[v] == NodeKind::Host {
                continue;
            }
            for &p in &ports {
                let (a, b) = t.port_ends(p);
                if b.0 as usize == v && dist[a.0 as usize] == u32::MAX {
                    dist[a.0 as usize] = dist[v] + 1;
                    q.push_back(a.0 as usize);
                }
            }
        }
        if dist[u] == u32::MAX {
            return Vec::new();
        }
        let mut out: Vec<PortId> = ports.into_iter().filter(|&p| t.port_ends(p).0 .0 as usize == u).collect();
        out.retain(|&p| {
            let m = t.port_ends(p).1 .0 as usize;
            dist[m] != u32::MAX && dist[m] + 1 == dist[u] && (m == d || t.kinds[m] == NodeKind::Switch)
        });
        out
    }

    /// The table agrees, set for set and in order, with a search from every host: on a leaf-spine
    /// with parallel links, a host linked to a host, a host on a chain of switches and a host
    /// with no link.
    #[test]
    fn a_route_to_a_host_is_the_route_to_its_switch_then_down() {
        let mut t = Topology::new();
        let spines: Vec<NodeId> = (0..2).map(|i| t.add_switch(&format!("s{i}")).unwrap()).collect();
        let leaves: Vec<NodeId> = (0..3).map(|i| t.add_switch(&format!("l{i}")).unwrap()).collect();
        for &l in &leaves {
            for &s in &spines {
                link(&mut t, l, s);
            }
        }
        link(&mut t, leaves[0], spines[1]); // a parallel link
        for (i, &l) in leaves.iter().enumerate() {
            for j in 0..2 {
                let h = t.add_host(&format!("h{i}_{j}")).unwrap();
                link(&mut t, h, l);
            }
        }
        let (x, y) = (t.add_host("x").unwrap(), t.add_host("y").unwrap());
        link(&mut t, x, y);
        let tail = t.add_switch("t").unwrap();
        link(&mut t, leaves[2], tail);
        let z = t.add_host("z").unwrap();
        link(&mut t, tail, z);
        t.add_host("alone").unwrap();
        let r = t.routes().unwrap();
        let n = t.num_nodes();
        for u in 0..n {
            for d in 0..n {
                assert_eq!(r.get(u, d), reference(&t, u, d).as_slice(), "{} to {}", t.names[u], t.names[d]);
            }
        }
        check_invariants(&t, &r);
    }

    #[test]
    fn star_routes_through_the_switch() {
        let mut t = Topology::new();
        let hs: Vec<NodeId> = ["a", "b", "c"].iter().map(|h| t.add_host(h).unwrap()).collect();
        let s = t.add_switch("s").unwrap();
        for &h in &hs {
            link(&mut t, h, s);
        }
        let r = t.routes().unwrap();
        check_invariants(&t, &r);
        for &x in &hs {
            for &y in &hs {
                if x == y {
                    assert!(r.get(x.0 as usize, y.0 as usize).is_empty());
                    continue;
                }
                assert_eq!(r.get(x.0 as usize, y.0 as usize), [port(&t, x, s)], "a host sends on its NIC");
                assert_eq!(r.get(s.0 as usize, y.0 as usize), [port(&t, s, y)], "the switch sends straight to y");
            }
            assert!(r.get(x.0 as usize, s.0 as usize).is_empty(), "no routes to switches");
        }
        // Port numbering: link i owns 2i (a->b) and 2i+1 (b->a).
        assert_eq!(port(&t, hs[1], s), PortId(2));
        assert_eq!(port(&t, s, hs[1]), PortId(3));
        assert_eq!(t.port_ends(PortId(5)), (s, hs[2]));
    }

    #[test]
    fn diamond_gives_two_equal_cost_next_hops() {
        //        s2
        // a - s1    s4 - b
        //        s3
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let b = t.add_host("b").unwrap();
        let [s1, s2, s3, s4] = ["s1", "s2", "s3", "s4"].map(|n| t.add_switch(n).unwrap());
        link(&mut t, a, s1);
        link(&mut t, s1, s2);
        link(&mut t, s1, s3);
        link(&mut t, s2, s4);
        link(&mut t, s3, s4);
        link(&mut t, b, s4);
        let r = t.routes().unwrap();
        check_invariants(&t, &r);
        assert_eq!(hops(&t, &r, a, b), [s1]);
        assert_eq!(hops(&t, &r, s1, b), [s2, s3], "ECMP at s1 towards b");
        assert_eq!(hops(&t, &r, s2, b), [s4]);
        assert_eq!(hops(&t, &r, s3, b), [s4]);
        assert_eq!(hops(&t, &r, s4, b), [b]);
        assert_eq!(hops(&t, &r, s4, a), [s2, s3], "ECMP at s4 towards a");
        assert_eq!(hops(&t, &r, s1, a), [a]);
        assert_eq!(hops(&t, &r, b, a), [s4]);

        // A longer third path (s1 - s5 - s6 - s4) is not an equal-cost path.
        let s5 = t.add_switch("s5").unwrap();
        let s6 = t.add_switch("s6").unwrap();
        link(&mut t, s1, s5);
        link(&mut t, s5, s6);
        link(&mut t, s6, s4);
        let r = t.routes().unwrap();
        check_invariants(&t, &r);
        assert_eq!(hops(&t, &r, s1, b), [s2, s3]);
        assert_eq!(hops(&t, &r, s5, b), [s6]);
        assert_eq!(hops(&t, &r, s6, b), [s4]);
    }

    #[test]
    fn parallel_links_are_equal_cost() {
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let b = t.add_host("b").unwrap();
        let s1 = t.add_switch("s1").unwrap();
        let s2 = t.add_switch("s2").unwrap();
        link(&mut t, a, s1);
        let p1 = link(&mut t, s1, s2);
        let p2 = link(&mut t, s2, s1);
        link(&mut t, s2, b);
        let r = t.routes().unwrap();
        check_invariants(&t, &r);
        assert_eq!(r.get(s1.0 as usize, b.0 as usize), [p1, PortId(p2.0 + 1)]);
        assert_eq!(r.get(s2.0 as usize, a.0 as usize), [PortId(p1.0 + 1), p2]);
    }

    #[test]
    fn hosts_never_forward() {
        // Dumbbell: a1, a2 - s1 - s2 - b1, b2. Every route from a switch to a host goes to the
        // host itself or to a switch, never through another host.
        let mut t = Topology::new();
        let hs = ["a1", "a2", "b1", "b2"].map(|h| t.add_host(h).unwrap());
        let s1 = t.add_switch("s1").unwrap();
        let s2 = t.add_switch("s2").unwrap();
        link(&mut t, hs[0], s1);
        link(&mut t, hs[1], s1);
        link(&mut t, s1, s2);
        link(&mut t, hs[2], s2);
        link(&mut t, hs[3], s2);
        let r = t.routes().unwrap();
        check_invariants(&t, &r);
        assert_eq!(hops(&t, &r, hs[0], hs[3]), [s1]);
        assert_eq!(hops(&t, &r, s1, hs[3]), [s2]);
        assert_eq!(hops(&t, &r, s2, hs[3]), [hs[3]]);
        assert_eq!(hops(&t, &r, s1, hs[1]), [hs[1]]);

        // Two hosts linked back to back reach each other; an isolated host has no routes (the
        // simulator reports NoRoute when a flow needs one) and is not an error here.
        let mut t = Topology::new();
        let x = t.add_host("x").unwrap();
        let y = t.add_host("y").unwrap();
        let z = t.add_host("z").unwrap();
        link(&mut t, x, y);
        let r = t.routes().unwrap();
        check_invariants(&t, &r);
        assert_eq!(hops(&t, &r, x, y), [y]);
        assert_eq!(hops(&t, &r, y, x), [x]);
        assert!(hops(&t, &r, x, z).is_empty());
        assert!(hops(&t, &r, z, x).is_empty());
    }

    #[test]
    fn a_host_with_two_links_is_an_error() {
        let mut t = Topology::new();
        let h = t.add_host("h").unwrap();
        let g = t.add_host("g").unwrap();
        let s1 = t.add_switch("s1").unwrap();
        let s2 = t.add_switch("s2").unwrap();
        link(&mut t, h, s1);
        link(&mut t, g, s1);
        link(&mut t, s1, s2);
        assert!(t.routes().is_ok());
        // h as b of the second link, to check both ends count.
        link(&mut t, s2, h);
        let e = t.routes().unwrap_err();
        assert_eq!(e, TopologyError::HostForwarding("h".into()));
        assert!(e.to_string().contains("host `h` has more than one link"), "{e}");

        // Two links to the same switch too.
        let mut t = Topology::new();
        let h = t.add_host("h").unwrap();
        let s = t.add_switch("s").unwrap();
        link(&mut t, h, s);
        link(&mut t, h, s);
        assert_eq!(t.routes().unwrap_err(), TopologyError::HostForwarding("h".into()));
    }

    #[test]
    fn node_names() {
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let s = t.add_switch("s").unwrap();
        assert_eq!(t.add_switch("a"), Err(TopologyError::DuplicateNode("a".into())));
        assert_eq!(t.add_host("s"), Err(TopologyError::DuplicateNode("s".into())));
        assert_eq!(t.node("s"), Ok(s));
        assert_eq!(t.node("a"), Ok(a));
        assert_eq!(t.node("x"), Err(TopologyError::UnknownNode("x".into())));
        assert_eq!(t.num_nodes(), 2);
        assert_eq!(t.kinds, [NodeKind::Host, NodeKind::Switch]);
    }
}
