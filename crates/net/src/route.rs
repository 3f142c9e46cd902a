//! Routing a packet: the next hop by route table and flow hash (ECMP), and a flow's source route
//! traced once through the same choices.

use crate::packet::Packet;
use crate::topology::{NodeId, NodeKind, PortId, Routes, Topology};

/// The port a source-routed packet leaves its current node by: the entry of its route in
/// `paths` for the hops it has taken (None: the packet has no source route).
#[inline(always)]
pub(crate) fn route_next(paths: &[u32], pkt: &Packet) -> Option<usize> {
    route_index(pkt).map(|i| paths[i] as usize)
}

/// Where in `paths` the entry for a source-routed packet's next hop sits (None: no source
/// route). At the packet's last hop the index is past its route.
#[inline(always)]
pub(crate) fn route_index(pkt: &Packet) -> Option<usize> {
    (pkt.path != Packet::NO_PATH).then(|| pkt.path as usize + pkt.hop as usize)
}

/// The port `node` sends a packet for `dst` by: the only next hop, or among equal-cost ones the
/// one the flow's hash picks (ECMP; hashed with the node so that stages choose independently).
#[inline]
pub(crate) fn next_hop(routes: &Routes, node: NodeId, dst: NodeId, hash: u32) -> Option<PortId> {
    let cands = routes.get(node.0 as usize, dst.0 as usize);
    match cands.len() {
        0 => None,
        1 => Some(cands[0]),
        n => {
            let h = (hash ^ node.0.wrapping_mul(0x9E37_79B9)).wrapping_mul(0x85EB_CA6B);
            Some(cands[((h >> 16) as usize) % n])
        }
    }
}

/// A flow's path from `src` to `dst` as `next_hop` picks it at every node (source routing: the
/// same ports, found once): None when some node has no route or a host would have to forward.
pub(crate) fn trace_path(topo: &Topology, routes: &Routes, src: NodeId, dst: NodeId, hash: u32) -> Option<Vec<u32>> {
    let mut node = src;
    let mut path = Vec::new();
    while node != dst {
        // A packet counts its hops in a byte.
        if node != src && topo.kinds[node.0 as usize] != NodeKind::Switch || path.len() >= u8::MAX as usize {
            return None;
        }
        let port = next_hop(routes, node, dst, hash)?;
        path.push(port.0);
        node = topo.port_ends(port).1;
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_link as link;

    #[test]
    fn source_routes_are_the_hop_by_hop_choices_and_spread_over_equal_cost_paths() {
        // a - s1 - {s2, s3} - s4 - b: two equal-cost paths.
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let b = t.add_host("b").unwrap();
        let [s1, s2, s3, s4] = ["s1", "s2", "s3", "s4"].map(|n| t.add_switch(n).unwrap());
        for (x, y) in [(a, s1), (s1, s2), (s1, s3), (s2, s4), (s3, s4), (s4, b)] {
            link(&mut t, x, y);
        }
        let routes = t.routes().unwrap();
        let mut middles = std::collections::BTreeSet::new();
        for hash in 0..64u32 {
            let path = trace_path(&t, &routes, a, b, hash.wrapping_mul(0x2545_F491)).expect("a path");
            assert_eq!(path.len(), 4, "a, s1, s2 or s3, s4, then b");
            // The same ports as a packet forwarded node by node.
            let mut node = a;
            for &p in &path {
                assert_eq!(Some(PortId(p)), next_hop(&routes, node, b, hash.wrapping_mul(0x2545_F491)));
                let (from, to) = t.port_ends(PortId(p));
                assert_eq!(from, node);
                node = to;
            }
            assert_eq!(node, b);
            middles.insert(t.port_ends(PortId(path[1])).1);
        }
        assert_eq!(middles.into_iter().collect::<Vec<_>>(), vec![s2, s3], "ECMP uses both middle switches");
    }
}
