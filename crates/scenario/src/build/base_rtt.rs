//! `[[base_rtt]]`: the BPF sock_ops program's replies to `BPF_SOCK_OPS_BASE_RTT`.

use crate::addr::host_addresses;
use crate::error::{Error, Result};
use crate::spec::Scenario;
use crate::units::{duration, DurationRange::Positive};
use ccsim_cc::{base_rtt_for, BaseRttRule, CcKind};
use ccsim_net::{NodeId, NodeKind, Topology};

/// Upper bound (exclusive) of a `[[base_rtt]]` reply, µs: 4.29 s.
const BASE_RTT_MAX_US: u64 = 4_290_000;

/// One `[[base_rtt]]` rule, resolved: the hosts whose BPF program contains it (per node; `None`:
/// every host's) and its `ccsim_cc` rules: the fewest address prefixes covering exactly the
/// 10.0.0.N addresses of its `dst` hosts, or a single /0 rule when it names no destination.
#[derive(Clone)]
struct BaseRttEntry {
    src: Option<Vec<bool>>,
    rules: Vec<BaseRttRule>,
}

/// The fewest prefixes (address, length) that cover exactly `addrs`: consecutive addresses are
/// merged into aligned blocks, so a rule naming a pod of a fat tree (hosts numbered in a row)
/// becomes a few prefixes, as a datacenter's prefix is one for `tcp_basertt_kern.c`.
fn prefixes(addrs: &[u32]) -> Vec<(u32, u8)> {
    let mut a = addrs.to_vec();
    a.sort_unstable();
    a.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < a.len() {
        // The run of consecutive addresses a[i] ..= hi.
        let mut j = i;
        while j + 1 < a.len() && a[j + 1] == a[j] + 1 {
            j += 1;
        }
        let (mut lo, hi) = (u64::from(a[i]), u64::from(a[j]));
        while lo <= hi {
            // The largest aligned block starting at lo that stays within the run.
            let mut size = if lo == 0 { 1u64 << 32 } else { 1u64 << lo.trailing_zeros().min(32) };
            while lo + size - 1 > hi {
                size >>= 1;
            }
            out.push((lo as u32, (32 - size.trailing_zeros()) as u8));
            lo += size;
        }
        i = j + 1;
    }
    out
}

/// The `[[base_rtt]]` rules as the BPF sock_ops program of every host: a host's program is the
/// rules whose `src` names it (or that have no `src`), in file order, evaluated by
/// [`ccsim_cc::base_rtt_for`] on the peer's address and the connection's congestion control.
#[derive(Clone)]
pub(super) struct BaseRttPrograms {
    entries: Vec<BaseRttEntry>,
    /// Per node: the host's address (`None` for switches).
    addr: Vec<Option<u32>>,
}

impl BaseRttPrograms {
    /// `BPF_SOCK_OPS_BASE_RTT` for a connection of `local` to `peer` using `cc`: the reply of the
    /// first matching rule, or `None` (no rule matches: no reply).
    pub(super) fn reply(&self, local: NodeId, peer: NodeId, cc: CcKind) -> Option<u32> {
        let dst = self.addr[peer.0 as usize]?;
        self.entries
            .iter()
            .filter(|e| e.src.as_ref().is_none_or(|s| s[local.0 as usize]))
            .find_map(|e| base_rtt_for(&e.rules, dst, cc))
    }
}

/// A host named by a `[[base_rtt]]` rule.
fn rule_host(topo: &Topology, name: &str, field: &str) -> Result<NodeId> {
    let hosts = || {
        topo.names
            .iter()
            .zip(&topo.kinds)
            .filter(|(_, k)| **k == NodeKind::Host)
            .map(|(n, _)| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match topo.node(name) {
        Ok(id) if topo.kinds[id.0 as usize] == NodeKind::Host => Ok(id),
        Ok(_) => Err(Error::new(field, format!("\"{name}\" is a switch; a base-RTT rule names hosts: {}", hosts()))),
        Err(_) => Err(Error::new(field, format!("unknown host \"{name}\"; hosts are {}", hosts()))),
    }
}

/// Check and resolve `[[base_rtt]]`.
pub(super) fn base_rtt_programs(s: &Scenario, topo: &Topology) -> Result<BaseRttPrograms> {
    let addr = host_addresses(topo);
    let mut entries = Vec::with_capacity(s.base_rtt.len());
    for (i, r) in s.base_rtt.iter().enumerate() {
        let field = format!("base_rtt[{i}]");
        let f = format!("{field}.base_rtt");
        let t = duration(&r.base_rtt, &f, Positive)?.ns();
        if t % 1000 != 0 {
            return Err(Error::new(
                &f,
                format!("{t} ns is not a whole number of microseconds; the BPF reply is in µs, e.g. \"80us\""),
            ));
        }
        let us = t / 1000;
        if us >= BASE_RTT_MAX_US {
            return Err(Error::new(&f, format!("{us} µs is out of range; allowed 1us <= base_rtt < 4.29s")));
        }
        let cc = r.cc;
        let hosts = |list: &Option<Vec<String>>, key: &str| -> Result<Option<Vec<NodeId>>> {
            let Some(list) = list else { return Ok(None) };
            let f = format!("{field}.{key}");
            if list.is_empty() {
                return Err(Error::new(&f, "an empty list matches no host; leave the key out to match every host"));
            }
            list.iter().map(|n| rule_host(topo, n, &f)).collect::<Result<Vec<_>>>().map(Some)
        };
        let src = hosts(&r.src, "src")?.map(|list| {
            let mut member = vec![false; topo.num_nodes()];
            list.iter().for_each(|n| member[n.0 as usize] = true);
            member
        });
        let dst_prefixes = match hosts(&r.dst, "dst")? {
            None => vec![(0, 0)],
            Some(d) => prefixes(&d.iter().map(|n| addr[n.0 as usize].expect("a host")).collect::<Vec<_>>()),
        };
        let rules: Vec<BaseRttRule> =
            dst_prefixes.into_iter().map(|dst_prefix| BaseRttRule { dst_prefix, cc, base_rtt_us: us as u32 }).collect();
        for rule in &rules {
            rule.validate().map_err(|m| Error::new(&f, m))?;
        }
        entries.push(BaseRttEntry { src, rules });
    }
    Ok(BaseRttPrograms { entries, addr })
}

#[cfg(test)]
mod tests {
    use super::prefixes;

    const fn ip(d: u8) -> u32 {
        u32::from_be_bytes([10, 0, 0, d])
    }

    #[test]
    fn prefixes_cover_exactly_the_addresses() {
        assert_eq!(prefixes(&[ip(5)]), [(ip(5), 32)]);
        // 10.0.0.1 ..= 10.0.0.8: 1/32, 2/31, 4/30, 8/32.
        let run: Vec<u32> = (1..=8).map(ip).collect();
        assert_eq!(prefixes(&run), [(ip(1), 32), (ip(2), 31), (ip(4), 30), (ip(8), 32)]);
        // Unordered, duplicated, two runs.
        assert_eq!(prefixes(&[ip(9), ip(4), ip(5), ip(4), ip(11), ip(10), ip(8)]), [(ip(4), 31), (ip(8), 30)]);
        assert_eq!(prefixes(&[0, 1, 2, 3]), [(0, 30)]);
        assert_eq!(prefixes(&[u32::MAX]), [(u32::MAX, 32)]);
        assert_eq!(prefixes(&[]), []);
        // Every covered address is in the list and every listed one is covered.
        let list: Vec<u32> = [1u8, 2, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 30, 31, 32].map(ip).to_vec();
        let p = prefixes(&list);
        let covered = |a: u32| p.iter().any(|&(n, l)| l == 0 || a >> (32 - l) == n >> (32 - l));
        for d in 0..=255u8 {
            assert_eq!(covered(ip(d)), list.contains(&ip(d)), "10.0.0.{d}: {p:?}");
        }
    }
}
