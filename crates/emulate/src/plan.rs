//! From a scenario to an emulation plan: which namespaces, links, qdiscs, markers, sysctls,
//! sockets. Pure (no system calls), so every refusal is testable without root.
//!
//! What the kernel path cannot honour is refused with the field's name: propagation delay (no
//! netem on this kernel), loss, RED and multi-class queues (no sch_red/prio), marking on dequeue
//! (the tc egress hook runs before enqueue), FreeBSD DCTCP, rates beyond what veth+HTB can carry
//! on this machine. Settings the kernel has no knob for are listed in `notes`.

use ccsim_cc::CcKind;
use ccsim_net::{Aqm, EcnMarkPoint, FlowKind, HostJitter, NodeKind, NonEctPolicy, QueueSpec, Unit};
use ccsim_scenario::spec::{AckTiming, Scenario, SchedulerKind, TopologyKind};
use ccsim_scenario::Built;
use ccsim_tcp::{EcnMode, TcpConfig};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Options of `ccsim emulate` that change what is accepted.
#[derive(Clone, Debug)]
pub struct Options {
    /// Run scenarios with link delay anyway, the kernel path's own latency standing in for it.
    pub ignore_delay: bool,
    /// Highest link rate accepted (default 1 Gb/s: two vCPUs carry about 0.9 Gb/s through veth).
    pub max_rate_bps: u64,
    /// Names of namespaces and devices start with this (e.g. "cs1a2b").
    pub prefix: String,
    /// `ss -tin` snapshots of every sender's namespace this often (0: none).
    pub ss_every_ns: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ignore_delay: false,
            max_rate_bps: 1_000_000_000,
            prefix: "cs0000".into(),
            ss_every_ns: 1_000_000_000,
        }
    }
}

/// Delays up to this are accepted without `--ignore-delay`: one veth hop through a namespace
/// costs about as much.
pub const DELAY_SLACK_NS: u64 = 20_000;

#[derive(Clone, Debug, PartialEq)]
pub struct NodePlan {
    pub name: String,
    pub is_host: bool,
    /// Network namespace name.
    pub netns: String,
    pub addr: Option<Ipv4Addr>,
    /// `sysctl -w` settings in this namespace.
    pub sysctls: Vec<(String, String)>,
}

/// One end of a link: the egress port of `node` towards the other end.
#[derive(Clone, Debug, PartialEq)]
pub struct PortPlan {
    pub node: usize,
    pub peer: usize,
    pub dev: String,
    pub rate_bps: u64,
    /// FIFO limit and its unit (pfifo or bfifo under HTB).
    pub limit: u64,
    pub bytes: bool,
    /// ECN step marking: K, in `bytes` units when `bytes`, and whether non-ECT packets above K
    /// are dropped.
    pub mark: Option<(u64, bool)>,
    /// Watched: its name as in `ccsim run` ("from->to").
    pub monitor: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkPlan {
    pub ends: [PortPlan; 2],
}

#[derive(Clone, Debug, PartialEq)]
pub enum FlowKindPlan {
    Bulk,
    Transfer {
        bytes: u64,
    },
    /// Requests of `bytes`, each written once the previous one is acknowledged.
    Rpc {
        bytes: u64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowPlan {
    pub name: String,
    /// The scenario's flow kind (`kind` and `size_bytes` in summary.json, as a simulation says).
    pub scenario_kind: FlowKind,
    pub src: usize,
    pub dst: usize,
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
    pub kind: FlowKindPlan,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// Kernel congestion-control names of the two ends, and ccsim's name (for reports).
    pub client_cc: String,
    pub server_cc: String,
    pub cc_label: String,
    pub nodelay: bool,
    pub pacing: bool,
    /// The receiver's `SO_RCVBUFFORCE` value; `None`: the kernel's autotuning.
    pub rcvbuf: Option<u32>,
    /// IP TOS byte (DSCP << 2).
    pub tos: u8,
    pub mark: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PingPlan {
    pub name: String,
    pub src: usize,
    pub dst_addr: Ipv4Addr,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub interval_ns: u64,
    /// IP packet size.
    pub size: u32,
    pub tos: u8,
}

/// A host route: in `node`'s namespace, `dst` goes out of `dev`, with route metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutePlan {
    pub node: usize,
    pub dst: Ipv4Addr,
    pub dev: String,
    /// `initcwnd`, `rto_min` (ms), `advmss` route metrics (hosts only).
    pub metrics: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub prefix: String,
    pub nodes: Vec<NodePlan>,
    pub links: Vec<LinkPlan>,
    pub routes: Vec<RoutePlan>,
    pub flows: Vec<FlowPlan>,
    pub pings: Vec<PingPlan>,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub warmup_ns: u64,
    /// `ss -tin` snapshot period (0: none).
    pub ss_every_ns: u64,
    pub seed: u64,
    /// BPF programs needed: the DCTCP and NV struct_ops, and base-RTT replies (local, remote, µs).
    pub needs_dctcp: bool,
    pub needs_nv: bool,
    pub base_rtt: Vec<(Ipv4Addr, Ipv4Addr, u32)>,
    /// Settings emulated approximately or not at all, said plainly.
    pub notes: Vec<String>,
}

impl Plan {
    pub fn ports(&self) -> impl Iterator<Item = &PortPlan> {
        self.links.iter().flat_map(|l| l.ends.iter())
    }
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(|n| n.netns.as_str())
    }
}

fn refuse(file: &str, field: &str, msg: impl std::fmt::Display) -> String {
    format!("{file}: {field}: {msg}")
}

/// The kernel's name for a ccsim congestion control.
pub fn kernel_cc(kind: CcKind) -> Option<&'static str> {
    match kind {
        CcKind::Reno => Some("reno"),
        CcKind::Cubic => Some("cubic"),
        CcKind::Bbr => Some("bbr"),
        CcKind::Dctcp => Some(crate::bpf::DCTCP_NAME),
        CcKind::Nv => Some(crate::bpf::NV_NAME),
        CcKind::FreebsdDctcp => None,
    }
}

fn fmt_rate(bps: u64) -> String {
    if bps.is_multiple_of(1_000_000_000) {
        format!("{}Gbps", bps / 1_000_000_000)
    } else if bps.is_multiple_of(1_000_000) {
        format!("{}Mbps", bps / 1_000_000)
    } else {
        format!("{bps}bps")
    }
}

/// Check the scenario against what the kernel path can do, and lay out the emulation.
pub fn plan(s: &Scenario, b: &Built, file: &str, opts: &Options) -> Result<Plan, String> {
    let topo = &b.topo;
    let mut notes = Vec::new();
    // --- fields the kernel path cannot honour ---
    if s.topology.switch_buffer.is_some() || s.topology.nodes.iter().any(|n| n.buffer.is_some()) {
        return Err(refuse(
            file,
            "topology.switch_buffer",
            "a shared switch buffer cannot be emulated: the kernel's qdiscs keep a limit per port",
        ));
    }
    if !s.record.pcap.is_empty() {
        return Err(refuse(
            file,
            "record.pcap",
            "packet captures are written by the simulator only; on the emulated network run tcpdump in a \
             host's namespace (`ip netns exec NS tcpdump -i DEV -w FILE`, names in commands.sh)",
        ));
    }
    if !s.workloads.is_empty() {
        return Err(refuse(
            file,
            "workloads",
            "generated workloads (flows opened during the run) are simulated only; emulation runs [[flows]]",
        ));
    }
    if s.tcp.cwr_ack != AckTiming::Now {
        return Err(refuse(
            file,
            "tcp.cwr_ack",
            "this kernel ACKs CWR data at once (Linux 5.3+); only \"now\" can be emulated",
        ));
    }
    if s.tcp.dctcp.ce_ack != AckTiming::Now {
        return Err(refuse(
            file,
            "tcp.dctcp.ce_ack",
            "ccsim's BPF DCTCP ACKs a CE change at once, as Linux 4.19+; only \"now\" can be emulated",
        ));
    }
    if topo.num_nodes() > 64 {
        return Err(refuse(
            file,
            "topology",
            format!(
                "{} nodes: emulation makes one network namespace per node and is limited to 64 \
                 (this machine has 2 CPUs); use a smaller topology",
                topo.num_nodes()
            ),
        ));
    }
    let topo_field = |what: &str| -> String {
        if s.topology.kind == TopologyKind::Custom {
            format!("topology.links[].{what}")
        } else {
            format!("topology.{what}")
        }
    };
    let mut ignored_delay = 0u64;
    for l in &topo.links {
        let (an, bn) = (topo.name(l.a), topo.name(l.b));
        if l.delay.ns() > DELAY_SLACK_NS {
            if opts.ignore_delay {
                ignored_delay = ignored_delay.max(l.delay.ns());
            } else {
                return Err(refuse(
                    file,
                    &topo_field("delay"),
                    format!(
                        "link {an}<->{bn} has {} us of propagation delay; this kernel has no delay \
                         emulator (netem is not built), so emulation accepts at most {} us per link. \
                         Pass --ignore-delay to run with the kernel path's own latency (about 25 us \
                         per hop) instead",
                        l.delay.ns() / 1000,
                        DELAY_SLACK_NS / 1000
                    ),
                ));
            }
        }
        if l.loss > 0.0 {
            return Err(refuse(
                file,
                &topo_field("loss"),
                format!(
                    "link {an}<->{bn} loses {}: random loss needs netem, which this kernel lacks; allowed: 0",
                    l.loss
                ),
            ));
        }
        if l.rate_bps > opts.max_rate_bps {
            return Err(refuse(
                file,
                &topo_field("rate"),
                format!(
                    "link {an}<->{bn} runs at {}; veth+HTB on this machine's CPUs carries at most {} \
                     faithfully (allowed: 1Mbps ..= {}; --max-rate raises the limit at your risk)",
                    fmt_rate(l.rate_bps),
                    fmt_rate(opts.max_rate_bps),
                    fmt_rate(opts.max_rate_bps)
                ),
            ));
        }
        if l.rate_bps < 1_000_000 {
            return Err(refuse(
                file,
                &topo_field("rate"),
                format!("link {an}<->{bn} runs at {} bps; allowed: 1Mbps and up", l.rate_bps),
            ));
        }
    }
    if ignored_delay > 0 {
        notes.push(format!(
            "propagation delay (up to {} us per link) not emulated (--ignore-delay): the kernel path's \
             own latency stands in",
            ignored_delay / 1000
        ));
    }
    if s.traffic.is_some() && b.flows.is_empty() {
        return Err(refuse(file, "traffic", "generated no flows"));
    }
    // --- nodes ---
    let addrs = ccsim_scenario::host_addresses(topo);
    let p = &opts.prefix;
    let mut nodes: Vec<NodePlan> = (0..topo.num_nodes())
        .map(|i| NodePlan {
            name: topo.names[i].clone(),
            is_host: topo.kinds[i] == NodeKind::Host,
            netns: format!("{p}-{}", i),
            addr: addrs[i].map(Ipv4Addr::from),
            sysctls: Vec::new(),
        })
        .collect();
    // --- links and ports ---
    let monitor: BTreeMap<u32, String> =
        b.cfg.monitor.iter().zip(&b.monitor_names).map(|(p, n)| (p.0, n.clone())).collect();
    let mut links = Vec::new();
    for (li, l) in topo.links.iter().enumerate() {
        let mk = |from: ccsim_net::NodeId, to: ccsim_net::NodeId, q: &QueueSpec, port: u32, side: char| {
            port_plan(file, s, q, from.0 as usize, to.0 as usize, l.rate_bps, format!("{p}-{li}{side}")).map(
                |mut pp| {
                    pp.monitor = monitor.get(&port).cloned();
                    pp
                },
            )
        };
        let a = mk(l.a, l.b, &l.queue_ab, 2 * li as u32, 'a')?;
        let bb = mk(l.b, l.a, &l.queue_ba, 2 * li as u32 + 1, 'b')?;
        links.push(LinkPlan { ends: [a, bb] });
    }
    // --- routes: every node reaches every host along ccsim's shortest path (first next hop) ---
    let table = topo.routes().map_err(|e| refuse(file, "topology", e))?;
    let mut routes = Vec::new();
    for from in 0..nodes.len() {
        for to in 0..nodes.len() {
            let hops = table.get(from, to);
            let Some(dst) = nodes[to].addr else { continue };
            if from == to {
                continue;
            }
            let Some(&port) = hops.first() else { continue };
            if hops.len() > 1 && !nodes[from].is_host {
                notes.push(format!(
                    "{}: {} equal-cost next hops towards {}; emulation uses the first (no ECMP)",
                    nodes[from].name,
                    hops.len(),
                    nodes[to].name
                ));
            }
            let l = &links[(port.0 / 2) as usize];
            let dev = l.ends[(port.0 % 2) as usize].dev.clone();
            routes.push(RoutePlan { node: from, dst, dev, metrics: Vec::new() });
        }
    }
    // --- flows ---
    let mut flows = Vec::new();
    let mut needs_dctcp = false;
    let mut needs_nv = false;
    let mut host_ecn: BTreeMap<usize, (EcnMode, String)> = BTreeMap::new();
    let mut host_tcp: BTreeMap<usize, (TcpConfig, String)> = BTreeMap::new();
    let mut base_rtt = Vec::new();
    let defaults = TcpConfig::default();
    for (i, f) in b.flows.iter().enumerate() {
        let field = format!("flows[{}] ({})", i, f.name);
        if f.connect.is_some() {
            return Err(refuse(
                file,
                &format!("{field}.connect"),
                "the emulator's traffic generator connects each flow when it starts; remove connect to run \
                 this scenario on the kernel",
            ));
        }
        let kind = match &f.kind {
            FlowKind::Bulk { .. } => FlowKindPlan::Bulk,
            FlowKind::Transfer { bytes } => FlowKindPlan::Transfer { bytes: *bytes },
            FlowKind::Rpc { bytes, .. } => FlowKindPlan::Rpc { bytes: *bytes },
            FlowKind::Exchange { .. } => {
                return Err(refuse(
                    file,
                    &field,
                    "request/response exchanges come from [[workloads]], which are simulated only",
                ))
            }
        };
        let stop_ns = match &f.kind {
            FlowKind::Bulk { stop } | FlowKind::Rpc { stop, .. } => stop.map(|t| t.ns()),
            _ => None,
        };
        let (src, dst) = (f.src.0 as usize, f.dst.0 as usize);
        let mut cc_of = |c: &TcpConfig, what: &str| -> Result<String, String> {
            match c.cc {
                CcKind::Dctcp => needs_dctcp = true,
                CcKind::Nv => needs_nv = true,
                _ => {}
            }
            kernel_cc(c.cc).map(str::to_string).ok_or_else(|| {
                refuse(
                    file,
                    &format!("{field}.{what}"),
                    format!(
                        "\"{}\" has no Linux implementation to run; allowed in emulation: reno, cubic, bbr, dctcp, nv",
                        c.cc.name()
                    ),
                )
            })
        };
        let client_cc = cc_of(&f.client, "cc")?;
        let server_cc = cc_of(&f.server, "server_cc")?;
        for (c, what) in [(&f.client, "cc"), (&f.server, "server_cc")] {
            let d = ccsim_scenario::spec::Tcp::default();
            let tuned = match c.cc {
                CcKind::Cubic => s.tcp.cubic != d.cubic,
                CcKind::Dctcp => s.tcp.dctcp != d.dctcp,
                CcKind::Bbr => s.tcp.bbr != d.bbr,
                CcKind::Nv => s.tcp.nv != d.nv,
                _ => false,
            };
            let n = format!("tcp.{}: tuned parameters are simulated only; the kernel runs its defaults", c.cc.name());
            if tuned && !notes.contains(&n) {
                notes.push(n);
            }
            let _ = what;
            if matches!(c.cc, CcKind::Dctcp) && !c.syn_ect {
                return Err(refuse(
                    file,
                    &format!("{field}.syn_ect"),
                    "false: Linux always sends an ECT SYN for a congestion control that needs ECN; allowed: true",
                ));
            }
        }
        // Per-namespace sysctls must agree across the flows of a host.
        for (node, cfg, role) in [(src, &f.client, "ecn"), (dst, &f.server, "server_ecn")] {
            let e = host_ecn.entry(node).or_insert((cfg.ecn, field.clone()));
            if e.0 != cfg.ecn {
                return Err(refuse(
                    file,
                    &format!("{field}.{role}"),
                    format!(
                        "host {} needs tcp_ecn {:?} here but {:?} for {}; net.ipv4.tcp_ecn is one value per \
                         namespace",
                        nodes[node].name, cfg.ecn, e.0, e.1
                    ),
                ));
            }
            let t = host_tcp.entry(node).or_insert(((**cfg).clone(), field.clone()));
            for (name, a, bv) in [
                ("sack", t.0.sack, cfg.sack),
                ("timestamps", t.0.timestamps, cfg.timestamps),
                ("window_scaling", t.0.window_scaling, cfg.window_scaling),
                ("slow_start_after_idle", t.0.slow_start_after_idle, cfg.slow_start_after_idle),
                ("tlp", t.0.tlp, cfg.tlp),
                ("rack", t.0.rack, cfg.rack),
            ] {
                if a != bv {
                    return Err(refuse(
                        file,
                        &format!("{field}: tcp.{name}"),
                        format!("host {} needs two values; the kernel setting is per namespace", nodes[node].name),
                    ));
                }
            }
        }
        for (c, side) in [(&f.client, "client"), (&f.server, "server")] {
            for (what, differs) in [
                ("rto_init", c.rto_init != defaults.rto_init),
                ("delack_min", c.delack_min != defaults.delack_min),
                ("delack_max", c.delack_max != defaults.delack_max),
            ] {
                if differs {
                    let n = format!(
                        "tcp.{what} is not settable on the kernel path ({side} of {field}); Linux's default applies"
                    );
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
            }
        }
        if let Some(us) = f.client.base_rtt_us {
            base_rtt.push((nodes[src].addr.unwrap(), nodes[dst].addr.unwrap(), us));
        }
        if let Some(us) = f.server.base_rtt_us {
            base_rtt.push((nodes[dst].addr.unwrap(), nodes[src].addr.unwrap(), us));
        }
        // Route metrics from the sender's TCP settings (Linux keeps these per route).
        for r in routes.iter_mut().filter(|r| r.node == src && Some(r.dst) == nodes[dst].addr) {
            let m = vec![
                ("initcwnd".to_string(), f.client.init_cwnd.to_string()),
                ("rto_min".to_string(), format!("{}ms", f.client.rto_min.ns() / 1_000_000)),
                ("advmss".to_string(), f.client.advmss.to_string()),
            ];
            if !r.metrics.is_empty() && r.metrics != m {
                return Err(refuse(
                    file,
                    &format!("{field}: tcp.init_cwnd/rto_min/mss"),
                    format!(
                        "flows from {} to {} need different values; Linux keeps them per route",
                        nodes[src].name, nodes[dst].name
                    ),
                ));
            }
            r.metrics = m;
        }
        if f.client.rto_min.ns() % 1_000_000 != 0 {
            return Err(refuse(
                file,
                &format!("{field}: tcp.rto_min"),
                "must be whole milliseconds for the kernel route metric",
            ));
        }
        flows.push(FlowPlan {
            name: f.name.clone(),
            scenario_kind: f.kind.clone(),
            src,
            dst,
            src_addr: nodes[src].addr.unwrap(),
            dst_addr: nodes[dst].addr.unwrap(),
            src_port: f.src_port,
            // One listener per flow: its congestion control and buffer are the flow's own.
            dst_port: 5001 + i as u16,
            kind,
            start_ns: f.start.ns(),
            stop_ns,
            client_cc,
            server_cc,
            cc_label: f.client.cc.name().to_string(),
            nodelay: f.client.nodelay,
            pacing: f.client.pacing,
            rcvbuf: match f.server.rcvbuf {
                ccsim_tcp::RcvBufSize::Locked(n) => Some(n),
                ccsim_tcp::RcvBufSize::Auto => None,
            },
            tos: f.dscp << 2,
            mark: f.mark,
        });
    }
    base_rtt.sort();
    base_rtt.dedup();
    for (node, (cfg, _)) in &host_tcp {
        let ecn = match host_ecn[node].0 {
            EcnMode::Off => "0",
            EcnMode::On => "1",
            EcnMode::Passive => "2",
        };
        let b01 = |v: bool| if v { "1" } else { "0" }.to_string();
        let sc = &mut nodes[*node].sysctls;
        sc.push(("net.ipv4.tcp_ecn".into(), ecn.into()));
        sc.push(("net.ipv4.tcp_sack".into(), b01(cfg.sack)));
        sc.push(("net.ipv4.tcp_timestamps".into(), b01(cfg.timestamps)));
        sc.push(("net.ipv4.tcp_window_scaling".into(), b01(cfg.window_scaling)));
        sc.push(("net.ipv4.tcp_slow_start_after_idle".into(), b01(cfg.slow_start_after_idle)));
        sc.push(("net.ipv4.tcp_early_retrans".into(), if cfg.tlp { "3" } else { "0" }.into()));
        sc.push(("net.ipv4.tcp_recovery".into(), b01(cfg.rack)));
        sc.push(("net.ipv4.tcp_reordering".into(), cfg.reordering.to_string()));
        let [lo, def, hi] = cfg.rmem;
        sc.push(("net.ipv4.tcp_rmem".into(), format!("{lo} {def} {hi}")));
    }
    for n in nodes.iter_mut().filter(|n| !n.is_host) {
        n.sysctls.push(("net.ipv4.ip_forward".into(), "1".into()));
        n.sysctls.push(("net.ipv4.conf.all.rp_filter".into(), "0".into()));
    }
    // --- pings ---
    let mut pings = Vec::new();
    for pg in &b.pings {
        let ecn = match pg.ecn {
            ccsim_tcp::Ecn::NotEct => 0u8,
            ccsim_tcp::Ecn::Ect1 => 1,
            ccsim_tcp::Ecn::Ect0 => 2,
            ccsim_tcp::Ecn::Ce => 3,
        };
        pings.push(PingPlan {
            name: pg.name.clone(),
            src: pg.src.0 as usize,
            dst_addr: nodes[pg.dst.0 as usize].addr.unwrap(),
            start_ns: pg.start.ns(),
            stop_ns: pg.stop.map(|t| t.ns()),
            interval_ns: pg.interval.ns(),
            size: pg.size.max(28),
            tos: (pg.dscp << 2) | ecn,
        });
    }
    if b.cfg.l2_overhead != 0 {
        notes.push(format!(
            "run.l2_overhead = {}: HTB is told the same overhead through a size table",
            b.cfg.l2_overhead
        ));
    }
    if s.tcp.hz != 1000 {
        notes.push(format!("tcp.hz = {}: the kernel's timers tick at its own CONFIG_HZ", s.tcp.hz));
    }
    if b.cfg.gro || b.cfg.rx_coalesce.ns() > 0 {
        notes.push(format!(
            "topology.gro = {} and rx_coalesce = {} µs model a host's receive path in the simulator; the emulation \
             keeps GRO off on its veth links (queues hold wire-sized packets) and veth has no interrupt coalescing",
            b.cfg.gro,
            b.cfg.rx_coalesce.ns() as f64 / 1e3
        ));
    }
    if b.cfg.host_jitter != HostJitter::NONE {
        notes.push(format!(
            "topology.host_jitter = {} is the simulator's stand-in for host timing noise; the kernel brings its own",
            b.cfg.host_jitter
        ));
    }
    Ok(Plan {
        prefix: opts.prefix.clone(),
        nodes,
        links,
        routes,
        flows,
        pings,
        duration_ns: b.cfg.duration.ns(),
        interval_ns: b.cfg.sample_interval.map(|t| t.ns()).unwrap_or(1_000_000),
        warmup_ns: b.warmup.ns(),
        ss_every_ns: opts.ss_every_ns,
        seed: b.cfg.seed,
        needs_dctcp,
        needs_nv,
        base_rtt,
        notes,
    })
}

/// The egress port plan of one queue; refuses what HTB + FIFO + the marker cannot do.
fn port_plan(
    file: &str,
    s: &Scenario,
    q: &QueueSpec,
    node: usize,
    peer: usize,
    rate_bps: u64,
    dev: String,
) -> Result<PortPlan, String> {
    // Name the queue in errors as the scenario does.
    let qname = s
        .queues
        .iter()
        .find(|(_, spec)| {
            if q.fq.is_some() {
                spec.scheduler == SchedulerKind::Fq
            } else {
                !spec.classes.is_empty()
                    && spec.classes.len() == q.classes.len()
                    && spec.classes[0].name == q.classes[0].name
            }
        })
        .map(|(n, _)| format!("queues.{n}"))
        .unwrap_or_else(|| "queues".into());
    if q.fq.is_some() {
        return Err(refuse(
            file,
            &format!("{qname}.scheduler"),
            "\"fq\": sch_fq is not built in this kernel; allowed in emulation: \"prio\" with one class \
             (TCP paces internally when the scenario sets pacing = true)",
        ));
    }
    if q.classes.len() != 1 {
        return Err(refuse(
            file,
            &format!("{qname}.classes"),
            format!(
                "{} classes: this kernel has no prio/multiq scheduler for DSCP classes (sch_prio is not built); \
                 allowed in emulation: 1 class",
                q.classes.len()
            ),
        ));
    }
    let c = &q.classes[0];
    let bytes = c.limit.unit == Unit::Bytes;
    let mark = match &c.aqm {
        Aqm::DropTail => None,
        Aqm::Step { k, unit, at, non_ect } => {
            if *at == EcnMarkPoint::Dequeue {
                return Err(refuse(
                    file,
                    &format!("{qname}.classes[0].mark_at"),
                    "\"dequeue\": the tc egress marker sees packets before they are queued; allowed: \"enqueue\"",
                ));
            }
            if (*unit == Unit::Bytes) != bytes {
                return Err(refuse(file, &format!("{qname}.classes[0].unit"), "K and the limit must share a unit"));
            }
            Some((*k, *non_ect == NonEctPolicy::Drop))
        }
        Aqm::Red(_) => {
            return Err(refuse(
                file,
                &format!("{qname}.classes[0].aqm"),
                "\"red\": sch_red is not built in this kernel; allowed in emulation: \"droptail\", \"step\"",
            ))
        }
    };
    Ok(PortPlan { node, peer, dev, rate_bps, limit: c.limit.value, bytes, mark, monitor: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(text: &str, opts: &Options) -> Result<Plan, String> {
        let s = ccsim_scenario::parse(text, "t.toml").map_err(|e| e.to_string())?;
        let b = ccsim_scenario::build(&s).map_err(|e| e.to_string())?;
        plan(&s, &b, "t.toml", opts)
    }

    const MININET: &str = r#"
[tcp]
cc = "dctcp"
[queues.dctcp]
classes = [{ name = "dctcp", limit = 425, aqm = "step", k = 20 }]
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "100Mbps"
delay = "62us"
switch_queue = "dctcp"
[[flows]]
src = "a"
dst = "c"
[[flows]]
src = "b"
dst = "c"
[[pings]]
src = "a"
dst = "c"
interval = "10ms"
"#;

    #[test]
    fn delay_is_refused_naming_the_field_unless_ignored() {
        let e = plan_of(MININET, &Options::default()).unwrap_err();
        assert!(e.starts_with("t.toml: topology.delay: link a<->s has 62 us"), "{e}");
        let p = plan_of(MININET, &Options { ignore_delay: true, ..Options::default() }).unwrap();
        assert!(p.notes.iter().any(|n| n.contains("62 us")), "{:?}", p.notes);
    }

    #[test]
    fn star_plan_has_namespaces_markers_routes_and_flows() {
        let p =
            plan_of(MININET, &Options { ignore_delay: true, prefix: "cs1234".into(), ..Options::default() }).unwrap();
        assert_eq!(p.nodes.len(), 4);
        assert!(p.needs_dctcp && !p.needs_nv);
        let marked: Vec<_> = p.ports().filter(|pp| pp.mark.is_some()).collect();
        // Every switch port marks at K = 20 and drops non-ECT above it; host NICs do not mark.
        assert_eq!(marked.len(), 3);
        assert!(marked.iter().all(|pp| pp.mark == Some((20, true)) && pp.limit == 425 && !p.nodes[pp.node].is_host));
        let watched: Vec<_> = p.ports().filter_map(|pp| pp.monitor.clone()).collect();
        assert_eq!(watched, vec!["s->a", "s->b", "s->c"]);
        // a reaches c through its only NIC; the switch reaches c through the port towards c.
        let c = p.nodes.iter().position(|n| n.name == "c").unwrap();
        let s = p.nodes.iter().position(|n| n.name == "s").unwrap();
        let to_c: Vec<_> = p.routes.iter().filter(|r| Some(r.dst) == p.nodes[c].addr).collect();
        assert_eq!(to_c.len(), 3);
        let via_s = to_c.iter().find(|r| r.node == s).unwrap();
        let port = p.ports().find(|pp| pp.dev == via_s.dev).unwrap();
        assert_eq!((port.node, port.peer), (s, c));
        assert_eq!(p.flows.len(), 2);
        assert_eq!(p.flows[0].client_cc, "ccsim_dctcp");
        assert!(p.nodes.iter().all(|n| n.netns.starts_with("cs1234-") && n.netns.len() < 16));
        assert!(p.ports().all(|pp| pp.dev.len() <= 15));
        assert_eq!(p.pings[0].interval_ns, 10_000_000);
    }

    #[test]
    fn what_the_kernel_cannot_do_is_refused() {
        let o = Options { ignore_delay: true, ..Options::default() };
        let red = MININET.replace(r#"aqm = "step", k = 20"#, r#"aqm = "red", min = 10, max = 30"#);
        let e = plan_of(&red, &o).unwrap_err();
        assert!(e.contains("queues.dctcp.classes[0].aqm") && e.contains("sch_red"), "{e}");
        let fast = MININET.replace("100Mbps", "10Gbps");
        let e = plan_of(&fast, &o).unwrap_err();
        assert!(e.contains("topology.rate") && e.contains("10Gbps"), "{e}");
        let bsd = MININET.replace(r#"cc = "dctcp""#, r#"cc = "freebsd-dctcp""#);
        let e = plan_of(&bsd, &o).unwrap_err();
        assert!(e.contains("flows[0]") && e.contains("freebsd-dctcp"), "{e}");
        let fq = MININET
            .replace(r#"classes = [{ name = "dctcp", limit = 425, aqm = "step", k = 20 }]"#, r#"scheduler = "fq""#);
        assert_ne!(fq, MININET);
        let e = plan_of(&fq, &o).unwrap_err();
        assert!(e.contains("queues.dctcp.scheduler") && e.contains("sch_fq"), "{e}");
        let deq = MININET.replace(r#"k = 20 }"#, r#"k = 20, mark_at = "dequeue" }"#);
        assert!(plan_of(&deq, &o).unwrap_err().contains("mark_at"));
        let lossy = MININET.replace(r#"delay = "62us""#, "delay = \"62us\"\nloss = 0.01");
        assert!(plan_of(&lossy, &o).unwrap_err().contains("topology.loss"));
    }
}
