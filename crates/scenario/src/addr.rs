//! Host addresses. ccsim's hosts have IPv4 addresses 10.0.0.N, N counting the hosts in topology
//! order from 1 (switches have none): what `ccsim ss` prints and what `[[base_rtt]]` rules match.

use ccsim_net::{NodeId, NodeKind, Topology};

/// The network the host addresses are numbered in: 10.0.0.0.
const HOST_NET: u32 = u32::from_be_bytes([10, 0, 0, 0]);

/// The IPv4 address of host `node` (10.0.0.N for the N-th host of the topology, from 1).
///
/// Panics if `node` is a switch or not in the topology. Counts the hosts before `node`; for
/// every node at once use [`host_addresses`].
pub fn host_ipv4(topo: &Topology, node: NodeId) -> u32 {
    let i = node.0 as usize;
    assert_eq!(
        topo.kinds[i],
        NodeKind::Host,
        "node {:?} (\"{}\") is a switch: switches have no address",
        node,
        topo.names[i]
    );
    HOST_NET + topo.kinds[..=i].iter().filter(|k| **k == NodeKind::Host).count() as u32
}

/// The address of every node, indexed by node: `Some(10.0.0.N)` for hosts as [`host_ipv4`]
/// gives them, `None` for switches.
pub fn host_addresses(topo: &Topology) -> Vec<Option<u32>> {
    let mut n = 0u32;
    topo.kinds
        .iter()
        .map(|k| {
            (*k == NodeKind::Host).then(|| {
                n += 1;
                HOST_NET + n
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn hosts_are_numbered_in_topology_order_and_switches_have_none() {
        let mut t = Topology::new();
        let a = t.add_host("a").unwrap();
        let s = t.add_switch("s").unwrap();
        let b = t.add_host("b").unwrap();
        assert_eq!(Ipv4Addr::from(host_ipv4(&t, a)), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(Ipv4Addr::from(host_ipv4(&t, b)), Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(host_addresses(&t), vec![Some(host_ipv4(&t, a)), None, Some(host_ipv4(&t, b))]);
        assert!(std::panic::catch_unwind(|| host_ipv4(&t, s)).is_err());
    }
}
