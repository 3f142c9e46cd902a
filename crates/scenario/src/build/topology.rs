//! `[topology]`: the nodes and links of the network.

use crate::error::{Error, Result};
use crate::spec::{self, TopologyKind};
use crate::units::{duration, rate, DurationRange::NonNegative};
use ccsim_engine::SimTime;
use ccsim_net::{LinkSpec, NodeId, NodeKind, QueueSpec, Topology, TopologyError};
use std::collections::BTreeMap;

/// The network of `[topology]`, its ports' queues looked up in `queues`.
pub(super) fn topology(t: &spec::TopologySpec, queues: &BTreeMap<String, QueueSpec>) -> Result<Topology> {
    let qs = Queues(queues);
    let mut topo = Topology::new();
    match t.kind {
        TopologyKind::Star => star(&mut topo, t, &qs)?,
        TopologyKind::Dumbbell => dumbbell(&mut topo, t, &qs)?,
        TopologyKind::Fattree => fat_tree(&mut topo, t, &qs)?,
        TopologyKind::Custom => custom(&mut topo, t, &qs)?,
    }
    Ok(topo)
}

/// The queues by name, as the topology's queue fields name them.
struct Queues<'a>(&'a BTreeMap<String, QueueSpec>);

impl Queues<'_> {
    fn get(&self, name: &str, field: &str) -> Result<QueueSpec> {
        self.0.get(name).cloned().ok_or_else(|| {
            Error::new(
                field,
                format!(
                    "unknown queue \"{name}\"; defined queues are {}",
                    self.0.keys().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }
}

/// What the links of a star, a dumbbell or a fat tree share: `topology.rate`, `delay`, `loss`, and
/// `host_queue` at a host's end, `switch_queue` at a switch's.
struct EdgeLinks {
    rate_bps: u64,
    delay: SimTime,
    loss: f64,
    host_queue: QueueSpec,
    switch_queue: QueueSpec,
}

impl EdgeLinks {
    fn new(t: &spec::TopologySpec, qs: &Queues) -> Result<Self> {
        Ok(EdgeLinks {
            rate_bps: rate(&t.rate, "topology.rate")?,
            delay: duration(&t.delay, "topology.delay", NonNegative)?,
            loss: loss(t.loss, "topology.loss")?,
            host_queue: qs.get(&t.host_queue, "topology.host_queue")?,
            switch_queue: qs.get(&t.switch_queue, "topology.switch_queue")?,
        })
    }

    /// From a host's NIC to a switch.
    fn host_link(&self, host: NodeId, switch: NodeId) -> LinkSpec {
        LinkSpec { queue_ab: self.host_queue.clone(), ..self.switch_link(host, switch) }
    }

    /// Between two switches.
    fn switch_link(&self, a: NodeId, b: NodeId) -> LinkSpec {
        LinkSpec {
            a,
            b,
            rate_bps: self.rate_bps,
            delay: self.delay,
            loss: self.loss,
            queue_ab: self.switch_queue.clone(),
            queue_ba: self.switch_queue.clone(),
        }
    }
}

fn loss(v: f64, field: &str) -> Result<f64> {
    if !(0.0..1.0).contains(&v) {
        return Err(Error::new(field, format!("{v} is out of range; allowed 0 <= loss < 1")));
    }
    Ok(v)
}

pub(super) fn topo_err(field: &str) -> impl Fn(TopologyError) -> Error + '_ {
    move |e| Error::new(field, e.to_string())
}

/// Hosts around one switch.
fn star(topo: &mut Topology, t: &spec::TopologySpec, qs: &Queues) -> Result<()> {
    if t.hosts.len() < 2 {
        return Err(Error::new("topology.hosts", "a star needs at least 2 hosts"));
    }
    let links = EdgeLinks::new(t, qs)?;
    let sw = topo.add_switch(&t.switch).map_err(topo_err("topology.switch"))?;
    for h in &t.hosts {
        let id = topo.add_host(h).map_err(topo_err("topology.hosts"))?;
        topo.add_link(links.host_link(id, sw));
    }
    Ok(())
}

/// Left hosts on switch `s1`, right hosts on `s2`, and the bottleneck link between them.
fn dumbbell(topo: &mut Topology, t: &spec::TopologySpec, qs: &Queues) -> Result<()> {
    if t.left.is_empty() || t.right.is_empty() {
        return Err(Error::new("topology.left", "a dumbbell needs hosts on the left and on the right"));
    }
    let links = EdgeLinks::new(t, qs)?;
    let bottleneck_rate = match &t.bottleneck_rate {
        Some(x) => rate(x, "topology.bottleneck_rate")?,
        None => links.rate_bps,
    };
    let bottleneck_delay = match &t.bottleneck_delay {
        Some(x) => duration(x, "topology.bottleneck_delay", NonNegative)?,
        None => links.delay,
    };
    let s1 = topo.add_switch("s1").map_err(topo_err("topology.left"))?;
    let s2 = topo.add_switch("s2").map_err(topo_err("topology.right"))?;
    for (side, sw, field) in [(&t.left, s1, "topology.left"), (&t.right, s2, "topology.right")] {
        for h in side {
            let id = topo.add_host(h).map_err(topo_err(field))?;
            topo.add_link(links.host_link(id, sw));
        }
    }
    topo.add_link(LinkSpec { rate_bps: bottleneck_rate, delay: bottleneck_delay, ..links.switch_link(s1, s2) });
    Ok(())
}

/// `nodes` and `links` as listed; a link's queues default to `nic` at a host, `switch` at a switch.
fn custom(topo: &mut Topology, t: &spec::TopologySpec, qs: &Queues) -> Result<()> {
    if t.nodes.is_empty() {
        return Err(Error::new("topology.nodes", "a custom topology needs nodes"));
    }
    for (i, n) in t.nodes.iter().enumerate() {
        match n.kind {
            spec::NodeKind::Host => topo.add_host(&n.name),
            spec::NodeKind::Switch => topo.add_switch(&n.name),
        }
        .map_err(topo_err(&format!("topology.nodes[{i}].name")))?;
    }
    for (i, l) in t.links.iter().enumerate() {
        let f = format!("topology.links[{i}]");
        let node = |name: &str, end: &str| {
            topo.node(name)
                .map_err(|e| Error::new(format!("{f}.{end}"), format!("{e}; nodes are {}", topo.names.join(", "))))
        };
        let (a, b) = (node(&l.a, "a")?, node(&l.b, "b")?);
        let default_q =
            |n: NodeId| if topo.kinds[n.0 as usize] == NodeKind::Host { spec::NIC_QUEUE } else { spec::SWITCH_QUEUE };
        let queue_ab = qs.get(l.queue_ab.as_deref().unwrap_or(default_q(a)), &format!("{f}.queue_ab"))?;
        let queue_ba = qs.get(l.queue_ba.as_deref().unwrap_or(default_q(b)), &format!("{f}.queue_ba"))?;
        let spec = LinkSpec {
            a,
            b,
            rate_bps: rate(&l.rate, &format!("{f}.rate"))?,
            delay: duration(&l.delay, &format!("{f}.delay"), NonNegative)?,
            loss: loss(l.loss, &format!("{f}.loss"))?,
            queue_ab,
            queue_ba,
        };
        topo.add_link(spec);
    }
    Ok(())
}

/// The k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
/// switches, (k/2)^2 core switches, k/2 hosts per edge switch. Names (all indices from 0):
/// host `h<pod>_<edge>_<i>`, edge switch `e<pod>_<edge>`, aggregation switch `a<pod>_<agg>`, core
/// switch `c<agg>_<j>` (the j-th core switch linked to aggregation switch `agg` of every pod).
/// Nodes are added hosts first (pod, edge, i order), then edge, aggregation and core switches;
/// links host–edge (in host order), then edge–aggregation, then aggregation–core.
fn fat_tree(topo: &mut Topology, t: &spec::TopologySpec, qs: &Queues) -> Result<()> {
    let k = t.k.ok_or_else(|| Error::new("topology.k", "a fat tree needs k, an even number in 2..=64"))?;
    if !(2..=64).contains(&k) || k % 2 != 0 {
        return Err(Error::new("topology.k", format!("{k} is not allowed; k must be an even number in 2..=64")));
    }
    let links = EdgeLinks::new(t, qs)?;
    let half = k / 2;
    let err = topo_err("topology");
    let mut hosts = Vec::with_capacity((k * half * half) as usize);
    for p in 0..k {
        for e in 0..half {
            for i in 0..half {
                hosts.push(topo.add_host(&format!("h{p}_{e}_{i}")).map_err(&err)?);
            }
        }
    }
    let mut edge = Vec::with_capacity((k * half) as usize);
    for p in 0..k {
        for e in 0..half {
            edge.push(topo.add_switch(&format!("e{p}_{e}")).map_err(&err)?);
        }
    }
    let mut agg = Vec::with_capacity((k * half) as usize);
    for p in 0..k {
        for a in 0..half {
            agg.push(topo.add_switch(&format!("a{p}_{a}")).map_err(&err)?);
        }
    }
    let mut core = Vec::with_capacity((half * half) as usize);
    for a in 0..half {
        for j in 0..half {
            core.push(topo.add_switch(&format!("c{a}_{j}")).map_err(&err)?);
        }
    }
    let half = half as usize;
    for (h, &id) in hosts.iter().enumerate() {
        topo.add_link(links.host_link(id, edge[h / half]));
    }
    for p in 0..k as usize {
        for e in 0..half {
            for a in 0..half {
                topo.add_link(links.switch_link(edge[p * half + e], agg[p * half + a]));
            }
        }
    }
    for p in 0..k as usize {
        for a in 0..half {
            for j in 0..half {
                topo.add_link(links.switch_link(agg[p * half + a], core[a * half + j]));
            }
        }
    }
    Ok(())
}
