//! Switches as entities: a switch owns the ports it sends by. Each port keeps its own queue and
//! AQM (drop-tail, step ECN, RED, classes); what all ports of one switch share — a packet buffer
//! with dynamic thresholds, for one — belongs here, next to the list of ports it spans.

use crate::core::Core;
use crate::event_loop::Ev;
use crate::topology::{NodeId, NodeKind, PortId, Topology};
use ccsim_engine::{EventQueue, PoolId, SimTime};

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

impl<Q: EventQueue<Ev>> Core<Q> {
    /// A packet arrived at switch `sw`: send it on by the port its route names.
    #[inline(always)]
    pub(crate) fn switch_receive(&mut self, sw: SwitchId, id: PoolId, now: SimTime) {
        let node = self.switches.list[sw.0 as usize].node;
        self.forward(node, id, now);
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
