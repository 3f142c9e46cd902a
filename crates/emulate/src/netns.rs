//! Building the plan's network out of namespaces, veth pairs, HTB and FIFOs, and taking it
//! down again. Every command run is kept (written to `commands.sh` in the results), so a user
//! can see and replay exactly what was built.
//!
//! `Network` owns what it created: dropping it deletes every namespace (which takes the veths,
//! qdiscs and tc filters with them), after success, failure or an interrupt. Each namespace is
//! recorded in the run's registry before it is made, so a killed run's are found again.

use crate::plan::{Plan, PortPlan};
use crate::registry::{Entry, Record, Resource};
use std::process::Command;

/// Runs commands, remembering them.
#[derive(Default)]
pub struct Shell {
    pub log: Vec<String>,
}

impl Shell {
    /// Run `prog args...`; an error carries the command and its stderr.
    pub fn run(&mut self, prog: &str, args: &[&str]) -> Result<String, String> {
        let line = std::iter::once(prog).chain(args.iter().copied()).collect::<Vec<_>>().join(" ");
        self.log.push(line.clone());
        let out = Command::new(prog).args(args).output().map_err(|e| format!("`{line}`: cannot run {prog}: {e}"))?;
        if !out.status.success() {
            return Err(format!("`{line}` failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The MAC address of one veth end: locally administered, from the link index and side.
pub fn mac(link: usize, side: usize) -> String {
    format!("02:cc:{:02x}:{:02x}:00:{:02x}", (link >> 8) & 0xff, link & 0xff, side + 1)
}

/// A namespace this run made, and its registry entry.
struct OwnNamespace {
    name: String,
    entry: Entry,
}

/// The emulated network; deleted on drop.
pub struct Network {
    namespaces: Vec<OwnNamespace>,
    pub shell: Shell,
}

impl Drop for Network {
    fn drop(&mut self) {
        for ns in self.namespaces.drain(..).rev() {
            // One that cannot be deleted stays in the registry for `ccsim emulate --cleanup`.
            if self.shell.run("ip", &["netns", "del", &ns.name]).is_ok() {
                ns.entry.gone();
            }
        }
    }
}

fn htb_burst(rate_bps: u64) -> Option<&'static str> {
    // HTB's default burst (one MTU at the rate) starves the class at >= 500 Mb/s when the CPU
    // is busy; 15 KB keeps it at the rate (measured on this kernel).
    (rate_bps >= 500_000_000).then_some("15k")
}

impl Network {
    /// Build everything the plan describes, recording each namespace in `record` before making
    /// it. On error, what was built is removed (drop).
    pub fn build(plan: &Plan, record: &Record) -> Result<Network, String> {
        let mut net = Network { namespaces: Vec::new(), shell: Shell::default() };
        for n in &plan.nodes {
            let entry = record.add(Resource::Namespace { name: n.netns.clone() })?;
            if let Err(e) = net.shell.run("ip", &["netns", "add", &n.netns]) {
                entry.gone();
                return Err(e);
            }
            net.namespaces.push(OwnNamespace { name: n.netns.clone(), entry });
            net.shell.run("ip", &["-n", &n.netns, "link", "set", "lo", "up"])?;
        }
        for (li, l) in plan.links.iter().enumerate() {
            let [a, b] = &l.ends;
            let (na, nb) = (&plan.nodes[a.node].netns, &plan.nodes[b.node].netns);
            let (ma, mb) = (mac(li, 0), mac(li, 1));
            net.shell.run(
                "ip",
                &[
                    "link", "add", &a.dev, "netns", na, "address", &ma, "type", "veth", "peer", "name", &b.dev,
                    "netns", nb, "address", &mb,
                ],
            )?;
            for (end, ns) in [(a, na), (b, nb)] {
                // Offloads off: the queue must hold wire-sized packets, not 64 KB GSO bursts.
                net.shell.run(
                    "ip",
                    &[
                        "netns", "exec", ns, "ethtool", "-K", &end.dev, "tso", "off", "gso", "off", "gro", "off", "tx",
                        "off", "rx", "off",
                    ],
                )?;
                net.shell.run("ip", &["-n", ns, "link", "set", &end.dev, "up"])?;
                net.port_qdisc(ns, end, plan)?;
            }
        }
        for n in plan.nodes.iter() {
            if let Some(a) = n.addr {
                let dev = plan.ports().find(|p| plan.nodes[p.node].netns == n.netns).map(|p| p.dev.clone());
                let dev = dev.ok_or_else(|| format!("host {} has no link", n.name))?;
                net.shell.run("ip", &["-n", &n.netns, "addr", "add", &format!("{a}/32"), "dev", &dev])?;
            }
            for (k, v) in &n.sysctls {
                net.shell.run("ip", &["netns", "exec", &n.netns, "sysctl", "-qw", &format!("{k}={v}")])?;
            }
        }
        for r in &plan.routes {
            let ns = &plan.nodes[r.node].netns;
            let dst = format!("{}/32", r.dst);
            let mut args: Vec<&str> = vec!["-n", ns, "route", "add", &dst, "dev", &r.dev];
            for (k, v) in &r.metrics {
                args.push(k);
                args.push(v);
            }
            net.shell.run("ip", &args)?;
            // The next hop's MAC, fixed: no ARP on the emulated links.
            let (li, side) = link_side(plan, &r.dev).ok_or_else(|| format!("route via unknown device {}", r.dev))?;
            let peer_mac = mac(li, 1 - side);
            net.shell.run(
                "ip",
                &[
                    "-n",
                    ns,
                    "neigh",
                    "replace",
                    &r.dst.to_string(),
                    "lladdr",
                    &peer_mac,
                    "dev",
                    &r.dev,
                    "nud",
                    "permanent",
                ],
            )?;
        }
        Ok(net)
    }

    /// HTB at the link rate with one class, and a FIFO of the port's limit under it.
    fn port_qdisc(&mut self, ns: &str, p: &PortPlan, plan: &Plan) -> Result<(), String> {
        let _ = plan;
        // HTB counts the Ethernet header; ccsim's links serialise the IP packet (plus
        // run.l2_overhead). A size table takes the 14 bytes off.
        let mut root: Vec<String> =
            ["-n", ns, "qdisc", "add", "dev", &p.dev, "root", "handle", "1:"].iter().map(|s| s.to_string()).collect();
        root.extend(["stab", "overhead", "-14", "linklayer", "ethernet", "htb", "default", "1"].map(String::from));
        let root: Vec<&str> = root.iter().map(String::as_str).collect();
        self.shell.run("tc", &root)?;
        let rate = format!("{}bit", p.rate_bps);
        let mut class = vec!["-n", ns, "class", "add", "dev", &p.dev, "parent", "1:", "classid", "1:1", "htb"];
        class.extend(["rate", &rate, "ceil", &rate]);
        if let Some(b) = htb_burst(p.rate_bps) {
            class.extend(["burst", b, "cburst", b]);
        }
        self.shell.run("tc", &class)?;
        let limit = p.limit.to_string();
        let fifo = if p.bytes { "bfifo" } else { "pfifo" };
        self.shell.run(
            "tc",
            &["-n", ns, "qdisc", "add", "dev", &p.dev, "parent", "1:1", "handle", "10:", fifo, "limit", &limit],
        )?;
        Ok(())
    }

    /// The namespaces made, in order.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.namespaces.iter().map(|n| n.name.as_str())
    }
}

/// Which link and side a device name belongs to.
pub fn link_side(plan: &Plan, dev: &str) -> Option<(usize, usize)> {
    plan.links.iter().enumerate().find_map(|(li, l)| l.ends.iter().position(|e| e.dev == dev).map(|s| (li, s)))
}

/// Namespaces named as `ccsim emulate` names its own (`cs<4 hex>-<n>`) — which does not make
/// them ccsim's: only a registry says that.
pub fn ccsim_like_namespaces() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output();
    let Ok(out) = out else { return Vec::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| is_ccsim_like(n))
        .map(str::to_string)
        .collect()
}

/// `cs` + 4 hex digits + `-` + a number: the names `ccsim emulate` gives its namespaces.
pub fn is_ccsim_like(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() > 7
        && name.starts_with("cs")
        && b[2..6].iter().all(|c| c.is_ascii_hexdigit())
        && b[6] == b'-'
        && b[7..].iter().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_macs() {
        assert!(is_ccsim_like("cs1a2b-0") && is_ccsim_like("csffff-12"));
        assert!(
            !is_ccsim_like("cs1a2b")
                && !is_ccsim_like("cs1a2b-x")
                && !is_ccsim_like("other-1")
                && !is_ccsim_like("csxyzw-1")
        );
        assert_eq!(mac(3, 0), "02:cc:00:03:00:01");
        assert_eq!(mac(300, 1), "02:cc:01:2c:00:02");
    }
}
