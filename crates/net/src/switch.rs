//! Switches as entities: a switch owns the ports it sends by. Each port keeps its own queue and
//! AQM (drop-tail, step ECN, RED, classes); what all ports of one switch share — a packet buffer
//! with dynamic thresholds, for one — belongs here, next to the list of ports it spans.

use crate::buffer::{BufferDrops, SharedBuffer, SharedBufferSpec};
use crate::core::Core;
use crate::event_loop::Ev;
use crate::port::Port;
use crate::topology::{NodeId, NodeKind, PortId, Topology};
use ccsim_engine::{EventQueue, PoolId, SimTime};
use ccsim_tcp::Ecn;

/// A switch's index among the network's switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SwitchId(pub u32);

/// A switch: its node and the ports it owns (its egress ports, in port order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    pub node: NodeId,
    pub ports: Vec<PortId>,
}

/// The network's switches, and which node is which switch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Switches {
    pub(crate) list: Vec<Switch>,
    /// Per node: its switch, or `NOT_A_SWITCH` (hosts).
    pub(crate) of_node: Vec<u32>,
}

pub(crate) const NOT_A_SWITCH: u32 = u32::MAX;

impl Switches {
    /// Every switch of `topo` with the ports leaving it.
    pub(crate) fn new(topo: &Topology) -> Switches {
        let mut of_node = vec![NOT_A_SWITCH; topo.num_nodes()];
        let mut list = Vec::new();
        for (n, kind) in topo.kinds.iter().enumerate() {
            if *kind == NodeKind::Switch {
                of_node[n] = list.len() as u32;
                list.push(Switch { node: NodeId(n as u32), ports: Vec::new() });
            }
        }
        for p in 0..2 * topo.links.len() as u32 {
            let (from, _) = topo.port_ends(PortId(p));
            let s = of_node[from.0 as usize];
            if s != NOT_A_SWITCH {
                list[s as usize].ports.push(PortId(p));
            }
        }
        Switches { list, of_node }
    }

    /// The switch a node is, if it is one.
    #[inline(always)]
    pub(crate) fn at(&self, node: NodeId) -> Option<SwitchId> {
        let s = self.of_node[node.0 as usize];
        (s != NOT_A_SWITCH).then_some(SwitchId(s))
    }
}

/// A switch's shared buffer and what it records.
pub(crate) struct SwitchBuffer {
    pub(crate) node: NodeId,
    pub(crate) spec: SharedBufferSpec,
    /// The ports whose queues share it.
    pub(crate) ports: Vec<u32>,
    pub(crate) buf: SharedBuffer,
    /// Bytes in use at each sampling instant.
    pub(crate) samples: Vec<u64>,
    pub(crate) series: Vec<BufferSample>,
}

/// One sample of a shared buffer (series on).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferSample {
    pub t: SimTime,
    pub used_bytes: u64,
    /// Free bytes of the shared pool: a queue of alpha a may hold a times this beyond its reserve.
    pub free_bytes: u64,
}

/// What a switch's shared buffer recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferRecord {
    pub switch: NodeId,
    pub spec: SharedBufferSpec,
    /// Bytes in use, one sample per recording interval from t = 0.
    pub samples: Vec<u64>,
    pub series: Vec<BufferSample>,
    pub drops: BufferDrops,
    /// Packets its queues dropped after admission: their own limit (a static cap) or their AQM.
    pub queue_drops: u64,
}

/// Per port: the shared buffer its queues belong to and the index of its first queue there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortBuffer {
    pub(crate) buffer: u32,
    pub(crate) first_queue: u32,
}

impl PortBuffer {
    pub(crate) const NONE: PortBuffer = PortBuffer { buffer: u32::MAX, first_queue: 0 };
}

/// The switches' shared buffers from `specs`, and per port its place in them (empty when no
/// switch has one, so that the per-packet check is one length test).
pub(crate) fn shared_buffers(
    specs: &[(NodeId, SharedBufferSpec)],
    switches: &Switches,
    ports: &[Port],
) -> (Vec<SwitchBuffer>, Vec<PortBuffer>) {
    if specs.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut port_buffer = vec![PortBuffer::NONE; ports.len()];
    let mut out = Vec::new();
    for (node, spec) in specs {
        let Some(sw) = switches.at(*node) else { continue };
        let mut alphas = Vec::new();
        let mut members = Vec::new();
        for &p in &switches.list[sw.0 as usize].ports {
            let q = &ports[p.0 as usize].queue;
            if q.fq.is_some() {
                continue; // an fq port keeps its own limits
            }
            port_buffer[p.0 as usize] = PortBuffer { buffer: out.len() as u32, first_queue: alphas.len() as u32 };
            members.push(p.0);
            alphas.extend(q.classes.iter().map(|c| spec.alpha_of(&c.name)));
        }
        out.push(SwitchBuffer {
            node: *node,
            spec: spec.clone(),
            ports: members,
            buf: SharedBuffer::new(spec, alphas),
            samples: Vec::new(),
            series: Vec::new(),
        });
    }
    (out, port_buffer)
}

/// Whether a packet may join a port's queue, by the port's shared buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// The port has no shared buffer.
    NoBuffer,
    /// Admitted to queue `q` of buffer `b` (cells taken once the queue accepts it).
    Admitted {
        b: u32,
        q: u32,
    },
    Refused,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    /// The shared buffer's say on packet `id` joining port `pi` now. The threshold depends on
    /// every sibling queue as it is at this instant, and a lazy sibling's count may still hold
    /// packets whose transmission has begun. Counting them only lowers the free space and can
    /// only refuse what the exact count would admit: a packet admitted on the counts as they
    /// stand is admitted; one refused is judged again once every lazy port of the switch is
    /// settled to `now`.
    #[inline]
    pub(crate) fn buffer_gate(&mut self, pi: usize, id: PoolId, now: SimTime) -> Gate {
        let pb = self.port_buffer[pi];
        if pb.buffer == u32::MAX {
            return Gate::NoBuffer;
        }
        self.buffer_gate_slow(pi, pb, id, now)
    }

    #[inline(never)]
    fn buffer_gate_slow(&mut self, pi: usize, pb: PortBuffer, id: PoolId, now: SimTime) -> Gate {
        let b = pb.buffer as usize;
        let pkt = self.pool.get(id);
        let (dscp, size) = (pkt.dscp, pkt.size);
        let class = self.ports[pi].queue.class_of(dscp);
        let q = pb.first_queue as usize + class;
        let mark_above = self.buffers[b].spec.mark_above_bytes;
        let marks = |buf: &SharedBuffer| mark_above.is_some_and(|t| buf.used_bytes() + size as u64 > t);
        let fits = self.buffers[b].buf.fits(q, size);
        if fits && !marks(&self.buffers[b].buf) {
            return Gate::Admitted { b: pb.buffer, q: q as u32 };
        }
        // A refusal, or a mark, is decided on the sibling queues as they are at this instant.
        for k in 0..self.buffers[b].ports.len() {
            let p = self.buffers[b].ports[k] as usize;
            if self.ports[p].lazy {
                self.settle(p, now);
            }
        }
        match self.buffers[b].buf.admit(q, size) {
            Ok(()) => {
                if marks(&self.buffers[b].buf) {
                    let pkt = self.pool.get_mut(id);
                    if pkt.ecn.is_ect() && pkt.ecn != Ecn::Ce {
                        pkt.ecn = Ecn::Ce;
                        self.ports[pi].queue.classes[class].stats.marks += 1;
                    }
                }
                Gate::Admitted { b: pb.buffer, q: q as u32 }
            }
            Err(_) => {
                // The queue's own counters see every drop at it, whatever the cause.
                self.ports[pi].queue.classes[class].stats.drops += 1;
                Gate::Refused
            }
        }
    }

    /// A packet of `size` bytes and DSCP `dscp` left port `pi`'s queue (its transmission began,
    /// or dequeue-time marking dropped it): its cells go back to the shared buffer.
    #[inline]
    pub(crate) fn buffer_release(&mut self, pi: usize, dscp: u8, size: u32) {
        if self.port_buffer.is_empty() {
            return;
        }
        let pb = self.port_buffer[pi];
        if pb.buffer != u32::MAX {
            let q = pb.first_queue as usize + self.ports[pi].queue.class_of(dscp);
            self.buffers[pb.buffer as usize].buf.remove(q, size);
        }
    }

    /// Sample every shared buffer (its switch's lazy ports settled).
    pub(crate) fn sample_buffers(&mut self, now: SimTime) {
        for b in 0..self.buffers.len() {
            for k in 0..self.buffers[b].ports.len() {
                let p = self.buffers[b].ports[k] as usize;
                if self.ports[p].lazy {
                    self.settle(p, now);
                }
            }
            let sb = &mut self.buffers[b];
            let used = sb.buf.used_bytes();
            sb.samples.push(used);
            if self.cfg.series {
                let free_bytes = sb.buf.free() * sb.spec.cell_bytes.max(1) as u64;
                sb.series.push(BufferSample { t: now, used_bytes: used, free_bytes });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_link as link;

    #[test]
    fn a_switch_owns_the_ports_that_leave_it() {
        // a - s1 - s2 - b, and c on s1.
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let b = t.add_host("b").unwrap();
        let c = t.add_host("c").unwrap();
        let s1 = t.add_switch("s1").unwrap();
        let s2 = t.add_switch("s2").unwrap();
        for (x, y) in [(a, s1), (s1, s2), (s2, b), (c, s1)] {
            link(&mut t, x, y);
        }
        let sw = Switches::new(&t);
        assert_eq!(sw.list.len(), 2);
        assert_eq!(sw.at(a), None);
        let one = &sw.list[sw.at(s1).unwrap().0 as usize];
        let ends: Vec<NodeId> = one.ports.iter().map(|&p| t.port_ends(p).1).collect();
        assert_eq!(ends, vec![a, s2, c], "s1 sends to a, s2 and c");
        for s in &sw.list {
            assert!(s.ports.iter().all(|&p| t.port_ends(p).0 == s.node));
        }
        let total: usize = sw.list.iter().map(|s| s.ports.len()).sum();
        assert_eq!(total, 5, "s1's three ports and s2's two, each once");
    }
}
