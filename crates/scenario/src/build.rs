//! Resolve a parsed [`Scenario`] into the simulator's objects, checking every value and naming
//! the field of anything out of range.

use crate::addr::host_addresses;
use crate::error::{Error, Result};
use crate::spec::{self, Scenario};
use crate::units::Quantity;
use crate::units::{bytes, duration, rate};
use ccsim_cc::{
    base_rtt_for, BaseRttRule, BbrParams, CcKind, CcParams, CubicParams, DctcpParams, FreebsdDctcpParams, NvParams,
};
use ccsim_engine::{Rng, SimTime};
use ccsim_net::NodeId;
use ccsim_net::*;
use ccsim_tcp::{Ecn, EcnMode, TcpConfig};
use std::collections::BTreeMap;

/// Everything needed to run a scenario and label its results.
pub struct Built {
    pub cfg: SimConfig,
    pub topo: Topology,
    /// `topo`'s route table, built once to check every flow's path and handed to the run.
    pub routes: Routes,
    pub flows: Vec<FlowSpec>,
    pub pings: Vec<PingSpec>,
    /// Names of the monitored ports ("from->to"), in `cfg.monitor` order.
    pub monitor_names: Vec<String>,
    pub warmup: SimTime,
}

impl From<spec::TcpEcn> for EcnMode {
    fn from(e: spec::TcpEcn) -> Self {
        match e {
            spec::TcpEcn::Off => EcnMode::Off,
            spec::TcpEcn::On => EcnMode::On,
            spec::TcpEcn::Passive => EcnMode::Passive,
        }
    }
}

impl From<spec::QueueUnit> for Unit {
    fn from(u: spec::QueueUnit) -> Self {
        match u {
            spec::QueueUnit::Packets => Unit::Packets,
            spec::QueueUnit::Bytes => Unit::Bytes,
        }
    }
}

impl From<spec::MarkAt> for EcnMarkPoint {
    fn from(m: spec::MarkAt) -> Self {
        match m {
            spec::MarkAt::Enqueue => EcnMarkPoint::Enqueue,
            spec::MarkAt::Dequeue => EcnMarkPoint::Dequeue,
        }
    }
}

impl From<spec::NonEct> for NonEctPolicy {
    fn from(n: spec::NonEct) -> Self {
        match n {
            spec::NonEct::Drop => NonEctPolicy::Drop,
            spec::NonEct::Queue => NonEctPolicy::Queue,
        }
    }
}

impl From<spec::PingEcn> for Ecn {
    fn from(e: spec::PingEcn) -> Self {
        match e {
            spec::PingEcn::NotEct => Ecn::NotEct,
            spec::PingEcn::Ect0 => Ecn::Ect0,
            spec::PingEcn::Ect1 => Ecn::Ect1,
        }
    }
}

fn tcp_config(t: &spec::Tcp, cc: CcKind) -> Result<TcpConfig> {
    if !(88..=65535).contains(&t.mss) {
        return Err(Error::new("tcp.mss", format!("{} is out of range; allowed 88..=65535", t.mss)));
    }
    if !(1..=100_000).contains(&t.init_cwnd) {
        return Err(Error::new(
            "tcp.init_cwnd",
            format!("{} is out of range; allowed 1..=100000 packets", t.init_cwnd),
        ));
    }
    let ce_ack_now = t.dctcp.ce_ack == spec::AckTiming::Now;
    let dctcp = DctcpParams { shift_g: t.dctcp.shift_g, alpha_on_init: t.dctcp.alpha_on_init, ce_ack_now };
    dctcp.validate().map_err(|m| Error::new("tcp.dctcp", m))?;
    let cubic = CubicParams {
        beta: Some(t.cubic.beta),
        fast_convergence: Some(t.cubic.fast_convergence),
        tcp_friendliness: Some(t.cubic.tcp_friendliness),
        bic_scale: Some(t.cubic.bic_scale),
        hystart: Some(t.cubic.hystart),
        hystart_detect: Some(t.cubic.hystart_detect),
        hystart_low_window: Some(t.cubic.hystart_low_window),
        ..CubicParams::default()
    };
    cubic.validate().map_err(|m| Error::new("tcp.cubic", m))?;
    let f = &t.freebsd_dctcp;
    let freebsd_dctcp = FreebsdDctcpParams { alpha: f.alpha, shift_g: f.shift_g, slowstart: f.slowstart };
    freebsd_dctcp.validate().map_err(|m| Error::new("tcp.freebsd_dctcp", m))?;
    let bbr = BbrParams::from(&t.bbr);
    bbr.validate().map_err(|m| Error::new("tcp.bbr", m))?;
    let nv = NvParams::from(&t.nv);
    nv.validate().map_err(|m| Error::new("tcp.nv", m))?;
    let rcvbuf = bytes(&t.rcvbuf, "tcp.rcvbuf")?;
    if rcvbuf > 1 << 30 {
        return Err(Error::new("tcp.rcvbuf", "at most 1GiB (window scale 14)"));
    }
    if ![100, 250, 300, 1000].contains(&t.hz) {
        return Err(Error::new("tcp.hz", "one of 100, 250, 300, 1000 (the kernel's CONFIG_HZ)"));
    }
    Ok(TcpConfig {
        cc,
        hz: t.hz,
        cwr_ack_now: t.cwr_ack == spec::AckTiming::Now,
        cc_params: CcParams { cubic, dctcp, freebsd_dctcp, bbr, nv },
        // FreeBSD never sends an ECT SYN (and a Linux receiver refuses ECN to one unless its CC
        // needs ECN).
        syn_ect: t.syn_ect && cc != CcKind::FreebsdDctcp,
        advmss: t.mss,
        init_cwnd: t.init_cwnd,
        rto_min: duration(&t.rto_min, "tcp.rto_min", true)?,
        rto_init: duration(&t.rto_init, "tcp.rto_init", true)?,
        delack_min: duration(&t.delack_min, "tcp.delack_min", true)?,
        delack_max: duration(&t.delack_max, "tcp.delack_max", true)?,
        ecn: t.ecn.into(),
        sack: t.sack,
        timestamps: t.timestamps,
        window_scaling: t.window_scaling,
        rcvbuf: rcvbuf as u32,
        slow_start_after_idle: t.slow_start_after_idle,
        pacing: t.pacing,
        nodelay: t.nodelay,
        tlp: t.tlp,
        rack: t.rack,
        ..TcpConfig::default()
    })
}

fn class(c: &spec::Class, field: &str) -> Result<ClassSpec> {
    let unit = Unit::from(c.unit);
    if c.limit == 0 {
        return Err(Error::new(format!("{field}.limit"), "must be at least 1"));
    }
    for &d in &c.dscp {
        if d > 63 {
            return Err(Error::new(format!("{field}.dscp"), format!("{d} is out of range; allowed 0..=63")));
        }
    }
    let aqm = match c.aqm {
        spec::AqmKind::Droptail => Aqm::DropTail,
        spec::AqmKind::Step => {
            let k = c.k.ok_or_else(|| {
                Error::new(format!("{field}.k"), "step marking needs a threshold k (in the queue's unit)")
            })?;
            Aqm::Step { k, unit, at: c.mark_at.into(), non_ect: c.non_ect.into() }
        }
        spec::AqmKind::Red => {
            let min = c.min.ok_or_else(|| Error::new(format!("{field}.min"), "red needs min (in the queue's unit)"))?;
            let max = c.max.ok_or_else(|| Error::new(format!("{field}.max"), "red needs max (in the queue's unit)"))?;
            if max < min {
                return Err(Error::new(format!("{field}.max"), format!("{max} is below min {min}")));
            }
            if !(0.0..=1.0).contains(&c.probability) {
                return Err(Error::new(
                    format!("{field}.probability"),
                    format!("{} is out of range; allowed 0..=1", c.probability),
                ));
            }
            if c.wlog > 31 {
                return Err(Error::new(format!("{field}.wlog"), format!("{} is out of range; allowed 0..=31", c.wlog)));
            }
            Aqm::Red(RedSpec {
                min,
                max,
                max_p: c.probability,
                wlog: c.wlog,
                ecn: c.ecn,
                harddrop: c.harddrop,
                avpkt: c.avpkt.max(1),
            })
        }
    };
    Ok(ClassSpec { name: c.name.clone(), dscp: c.dscp.clone(), limit: QueueLimit { value: c.limit, unit }, aqm })
}

fn queues(s: &Scenario) -> Result<BTreeMap<String, QueueSpec>> {
    let mut m = BTreeMap::new();
    m.insert("nic".to_string(), QueueSpec::drop_tail(1000));
    m.insert("switch".to_string(), QueueSpec::drop_tail(1000));
    for (name, q) in &s.queues {
        let field = format!("queues.{name}");
        if q.scheduler == spec::SchedulerKind::Fq {
            if !q.classes.is_empty() {
                return Err(Error::new(format!("{field}.classes"), "an fq queue has no classes; remove them"));
            }
            m.insert(name.clone(), QueueSpec::fq(fq_spec(q.fq.as_ref().cloned().unwrap_or_default(), &field)?));
            continue;
        }
        if q.fq.is_some() {
            return Err(Error::new(format!("{field}.fq"), "fq parameters need scheduler = \"fq\""));
        }
        if q.classes.is_empty() {
            return Err(Error::new(format!("{field}.classes"), "a queue needs at least one class"));
        }
        let scheduler = match q.scheduler {
            spec::SchedulerKind::Prio => Scheduler::StrictPriority,
            spec::SchedulerKind::Rr | spec::SchedulerKind::Fq => Scheduler::RoundRobin,
        };
        let classes = q
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| class(c, &format!("{field}.classes[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        m.insert(name.clone(), QueueSpec { classes, scheduler, fq: None });
    }
    Ok(m)
}

fn fq_spec(p: spec::FqParams, field: &str) -> Result<FqSpec> {
    let range = |v: u32, name: &str, max: u32| -> Result<u32> {
        if v == 0 || v > max {
            return Err(Error::new(format!("{field}.fq.{name}"), format!("{v} is out of range; allowed 1..={max}")));
        }
        Ok(v)
    };
    let bytes_per_sec = |q: &Quantity, name: &str| -> Result<u64> { Ok(rate(q, &format!("{field}.fq.{name}"))? / 8) };
    Ok(FqSpec {
        limit: range(p.limit, "limit", 1_000_000)?,
        flow_limit: range(p.flow_limit, "flow_limit", 1_000_000)?,
        quantum: range(p.quantum, "quantum", 1 << 20)?,
        initial_quantum: range(p.initial_quantum, "initial_quantum", i32::MAX as u32)?,
        refill_delay: duration(&p.refill_delay, &format!("{field}.fq.refill_delay"), false)?,
        maxrate: p.maxrate.as_ref().map(|q| bytes_per_sec(q, "maxrate")).transpose()?,
        low_rate_threshold: bytes_per_sec(&p.low_rate_threshold, "low_rate_threshold")?,
        timer_slack: duration(&p.timer_slack, &format!("{field}.fq.timer_slack"), false)?,
        horizon: duration(&p.horizon, &format!("{field}.fq.horizon"), true)?,
        horizon_drop: p.horizon_drop,
        ce_threshold: p
            .ce_threshold
            .as_ref()
            .map(|q| duration(q, &format!("{field}.fq.ce_threshold"), false))
            .transpose()?,
        pacing: p.pacing,
    })
}

/// Per node: its NIC runs fq with pacing, so its sockets become SK_PACING_FQ.
fn fq_pacing_nodes(topo: &Topology) -> Vec<bool> {
    let mut paced = vec![false; topo.num_nodes()];
    for l in &topo.links {
        paced[l.a.0 as usize] |= l.queue_ab.fq.is_some_and(|f| f.pacing);
        paced[l.b.0 as usize] |= l.queue_ba.fq.is_some_and(|f| f.pacing);
    }
    paced
}

fn loss(v: f64, field: &str) -> Result<f64> {
    if !(0.0..1.0).contains(&v) {
        return Err(Error::new(field, format!("{v} is out of range; allowed 0 <= loss < 1")));
    }
    Ok(v)
}

fn topology(s: &Scenario, qs: &BTreeMap<String, QueueSpec>) -> Result<Topology> {
    let t = &s.topology;
    let q = |name: &str, field: &str| -> Result<QueueSpec> {
        qs.get(name).cloned().ok_or_else(|| {
            Error::new(
                field,
                format!(
                    "unknown queue \"{name}\"; defined queues are {}",
                    qs.keys().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    };
    let mut topo = Topology::new();
    match t.kind {
        spec::TopologyKind::Star => {
            if t.hosts.len() < 2 {
                return Err(Error::new("topology.hosts", "a star needs at least 2 hosts"));
            }
            let r = rate(&t.rate, "topology.rate")?;
            let d = duration(&t.delay, "topology.delay", false)?;
            let l = loss(t.loss, "topology.loss")?;
            let sw = topo.add_switch(&t.switch).map_err(topo_err("topology.switch"))?;
            let (nic, swq) = (q(&t.host_queue, "topology.host_queue")?, q(&t.switch_queue, "topology.switch_queue")?);
            for h in &t.hosts {
                let id = topo.add_host(h).map_err(topo_err("topology.hosts"))?;
                topo.add_link(LinkSpec {
                    a: id,
                    b: sw,
                    rate_bps: r,
                    delay: d,
                    loss: l,
                    queue_ab: nic.clone(),
                    queue_ba: swq.clone(),
                });
            }
        }
        spec::TopologyKind::Dumbbell => {
            if t.left.is_empty() || t.right.is_empty() {
                return Err(Error::new("topology.left", "a dumbbell needs hosts on the left and on the right"));
            }
            let r = rate(&t.rate, "topology.rate")?;
            let d = duration(&t.delay, "topology.delay", false)?;
            let br = match &t.bottleneck_rate {
                Some(x) => rate(x, "topology.bottleneck_rate")?,
                None => r,
            };
            let bd = match &t.bottleneck_delay {
                Some(x) => duration(x, "topology.bottleneck_delay", false)?,
                None => d,
            };
            let l = loss(t.loss, "topology.loss")?;
            let (nic, swq) = (q(&t.host_queue, "topology.host_queue")?, q(&t.switch_queue, "topology.switch_queue")?);
            let s1 = topo.add_switch("s1").map_err(topo_err("topology.left"))?;
            let s2 = topo.add_switch("s2").map_err(topo_err("topology.right"))?;
            for (side, sw, field) in [(&t.left, s1, "topology.left"), (&t.right, s2, "topology.right")] {
                for h in side {
                    let id = topo.add_host(h).map_err(topo_err(field))?;
                    topo.add_link(LinkSpec {
                        a: id,
                        b: sw,
                        rate_bps: r,
                        delay: d,
                        loss: l,
                        queue_ab: nic.clone(),
                        queue_ba: swq.clone(),
                    });
                }
            }
            topo.add_link(LinkSpec {
                a: s1,
                b: s2,
                rate_bps: br,
                delay: bd,
                loss: l,
                queue_ab: swq.clone(),
                queue_ba: swq.clone(),
            });
        }
        spec::TopologyKind::Fattree => fat_tree(
            &mut topo,
            t,
            q(&t.host_queue, "topology.host_queue")?,
            q(&t.switch_queue, "topology.switch_queue")?,
        )?,
        spec::TopologyKind::Custom => {
            if t.nodes.is_empty() {
                return Err(Error::new("topology.nodes", "a custom topology needs nodes"));
            }
            for (i, n) in t.nodes.iter().enumerate() {
                let f = format!("topology.nodes[{i}]");
                match n.kind {
                    spec::NodeKind::Host => topo.add_host(&n.name),
                    spec::NodeKind::Switch => topo.add_switch(&n.name),
                }
                .map_err(topo_err(&format!("{f}.name")))?;
            }
            for (i, l) in t.links.iter().enumerate() {
                let f = format!("topology.links[{i}]");
                let a = topo
                    .node(&l.a)
                    .map_err(|e| Error::new(format!("{f}.a"), format!("{e}; nodes are {}", topo.names.join(", "))))?;
                let b = topo
                    .node(&l.b)
                    .map_err(|e| Error::new(format!("{f}.b"), format!("{e}; nodes are {}", topo.names.join(", "))))?;
                let default_q =
                    |n: ccsim_net::NodeId| if topo.kinds[n.0 as usize] == NodeKind::Host { "nic" } else { "switch" };
                let qab = q(l.queue_ab.as_deref().unwrap_or(default_q(a)), &format!("{f}.queue_ab"))?;
                let qba = q(l.queue_ba.as_deref().unwrap_or(default_q(b)), &format!("{f}.queue_ba"))?;
                let spec = LinkSpec {
                    a,
                    b,
                    rate_bps: rate(&l.rate, &format!("{f}.rate"))?,
                    delay: duration(&l.delay, &format!("{f}.delay"), false)?,
                    loss: loss(l.loss, &format!("{f}.loss"))?,
                    queue_ab: qab,
                    queue_ba: qba,
                };
                topo.add_link(spec);
            }
        }
    }
    Ok(topo)
}

/// The k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
/// switches, (k/2)^2 core switches, k/2 hosts per edge switch. Names (all indices from 0):
/// host `h<pod>_<edge>_<i>`, edge switch `e<pod>_<edge>`, aggregation switch `a<pod>_<agg>`, core
/// switch `c<agg>_<j>` (the j-th core switch linked to aggregation switch `agg` of every pod).
/// Nodes are added hosts first (pod, edge, i order), then edge, aggregation and core switches;
/// links host–edge (in host order), then edge–aggregation, then aggregation–core.
fn fat_tree(topo: &mut Topology, t: &spec::TopologySpec, nic: QueueSpec, swq: QueueSpec) -> Result<()> {
    let k = t.k.ok_or_else(|| Error::new("topology.k", "a fat tree needs k, an even number in 2..=64"))?;
    if !(2..=64).contains(&k) || k % 2 != 0 {
        return Err(Error::new("topology.k", format!("{k} is not allowed; k must be an even number in 2..=64")));
    }
    let r = rate(&t.rate, "topology.rate")?;
    let d = duration(&t.delay, "topology.delay", false)?;
    let l = loss(t.loss, "topology.loss")?;
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
    let link = |a: NodeId, b: NodeId, qa: &QueueSpec| LinkSpec {
        a,
        b,
        rate_bps: r,
        delay: d,
        loss: l,
        queue_ab: qa.clone(),
        queue_ba: swq.clone(),
    };
    let half = half as usize;
    for (h, &id) in hosts.iter().enumerate() {
        topo.add_link(link(id, edge[h / half], &nic));
    }
    for p in 0..k as usize {
        for e in 0..half {
            for a in 0..half {
                topo.add_link(link(edge[p * half + e], agg[p * half + a], &swq));
            }
        }
    }
    for p in 0..k as usize {
        for a in 0..half {
            for j in 0..half {
                topo.add_link(link(agg[p * half + a], core[a * half + j], &swq));
            }
        }
    }
    Ok(())
}

/// A uniformly random permutation of 0..n without fixed points (n >= 2), drawn from `rng`:
/// Fisher–Yates shuffles until one has no fixed point (about e tries on average).
fn derangement(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    loop {
        for i in (1..n).rev() {
            let j = rng.below(i as u32 + 1) as usize;
            p.swap(i, j);
        }
        if p.iter().enumerate().all(|(i, &x)| i != x) {
            return p;
        }
    }
}

/// Stream of the traffic generator's random draws (flows use 0x2000_0000 + index, ports
/// 0x1000_0000 + port).
const TRAFFIC_STREAM: u64 = 0x3000_0000;

/// `[traffic]`: generated bulk flows, appended after the `[[flows]]` entries.
fn traffic(
    s: &Scenario,
    tr: &spec::Traffic,
    topo: &Topology,
    routes: &Routes,
    default_cc: CcKind,
    flows: &mut Vec<FlowSpec>,
) -> Result<()> {
    let spec::TrafficPattern::Permutation = tr.pattern;
    let cc = tr.cc.unwrap_or(default_cc);
    let client = tcp_config(&s.tcp, cc)?;
    if tr.dscp > 63 {
        return Err(Error::new("traffic.dscp", format!("{} is out of range; allowed 0..=63", tr.dscp)));
    }
    let start = duration(&tr.start, "traffic.start", false)?;
    let stop = match &tr.stop {
        Some(q) => {
            let t = duration(q, "traffic.stop", true)?;
            if t <= start {
                return Err(Error::new("traffic.stop", "must be after start"));
            }
            Some(t)
        }
        None => None,
    };
    let hosts: Vec<NodeId> =
        (0..topo.num_nodes()).filter(|&i| topo.kinds[i] == NodeKind::Host).map(|i| NodeId(i as u32)).collect();
    if hosts.len() < 2 {
        return Err(Error::new("traffic.pattern", "a permutation needs at least 2 hosts"));
    }
    let perm = derangement(hosts.len(), &mut Rng::new(s.run.seed, TRAFFIC_STREAM));
    for (i, &src) in hosts.iter().enumerate() {
        let dst = hosts[perm[i]];
        check_path(routes, topo, src, dst, "traffic.pattern")?;
        let n = flows.len() as u16;
        flows.push(FlowSpec {
            name: format!("perm-{}", topo.name(src)),
            src,
            dst,
            start,
            connect: None,
            kind: FlowKind::Bulk { stop },
            client: client.clone(),
            server: client.clone(),
            dscp: tr.dscp,
            mark: 0,
            src_port: 40000u16.wrapping_add(n),
            dst_port: 5001,
        });
    }
    Ok(())
}

/// Every flow and ping needs a path between its hosts.
fn check_path(routes: &Routes, topo: &Topology, src: NodeId, dst: NodeId, field: &str) -> Result<()> {
    if src == dst {
        return Err(Error::new(field, "source and destination are the same host; they must differ"));
    }
    if routes.get(src.0 as usize, dst.0 as usize).is_empty() {
        return Err(Error::new(
            field,
            format!("no path from \"{}\" to \"{}\" in the topology", topo.name(src), topo.name(dst)),
        ));
    }
    Ok(())
}

fn topo_err(field: &str) -> impl Fn(TopologyError) -> Error + '_ {
    move |e| Error::new(field, e.to_string())
}

fn host(topo: &Topology, name: &str, field: &str) -> Result<ccsim_net::NodeId> {
    let id = topo.node(name).map_err(|_| {
        let hosts: Vec<&str> = topo
            .names
            .iter()
            .zip(&topo.kinds)
            .filter(|(_, k)| **k == NodeKind::Host)
            .map(|(n, _)| n.as_str())
            .collect();
        Error::new(field, format!("unknown host \"{name}\"; hosts are {}", hosts.join(", ")))
    })?;
    if topo.kinds[id.0 as usize] != NodeKind::Host {
        return Err(Error::new(field, format!("\"{name}\" is a switch; flows and pings run between hosts")));
    }
    Ok(id)
}

/// Upper bound (exclusive) of a `[[base_rtt]]` reply, µs: 4.29 s.
const BASE_RTT_MAX_US: u64 = 4_290_000;

/// One `[[base_rtt]]` rule, resolved: the hosts whose BPF program contains it (per node; `None`:
/// every host's) and its `ccsim_cc` rules: the fewest address prefixes covering exactly the
/// 10.0.0.N addresses of its `dst` hosts, or a single /0 rule when it names no destination.
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
struct BaseRttPrograms {
    entries: Vec<BaseRttEntry>,
    /// Per node: the host's address (`None` for switches).
    addr: Vec<Option<u32>>,
}

impl BaseRttPrograms {
    /// `BPF_SOCK_OPS_BASE_RTT` for a connection of `local` to `peer` using `cc`: the reply of the
    /// first matching rule, or `None` (no rule matches: no reply).
    fn reply(&self, local: NodeId, peer: NodeId, cc: CcKind) -> Option<u32> {
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
fn base_rtt_programs(s: &Scenario, topo: &Topology) -> Result<BaseRttPrograms> {
    let addr = host_addresses(topo);
    let mut entries = Vec::with_capacity(s.base_rtt.len());
    for (i, r) in s.base_rtt.iter().enumerate() {
        let field = format!("base_rtt[{i}]");
        let f = format!("{field}.base_rtt");
        let t = duration(&r.base_rtt, &f, true)?.ns();
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

/// Resolve the scenario.
pub fn build(s: &Scenario) -> Result<Built> {
    let duration_t = duration(&s.run.duration, "run.duration", true)?;
    let qs = queues(s)?;
    let topo = topology(s, &qs)?;
    let routes = topo.routes().map_err(topo_err("topology"))?;
    let default_cc = s.tcp.cc;
    tcp_config(&s.tcp, default_cc)?;
    let programs = base_rtt_programs(s, &topo)?;
    let mut flows = Vec::new();
    for (i, f) in s.flows.iter().enumerate() {
        let field = format!("flows[{i}]");
        let src = host(&topo, &f.src, &format!("{field}.src"))?;
        let dst = host(&topo, &f.dst, &format!("{field}.dst"))?;
        check_path(&routes, &topo, src, dst, &format!("{field}.dst"))?;
        let mut client = tcp_config(&s.tcp, f.cc.unwrap_or(default_cc))?;
        if let Some(e) = f.ecn {
            client.ecn = e.into();
        }
        if let Some(b) = f.syn_ect {
            client.syn_ect = b;
        }
        let mut server = client.clone();
        if let Some(c) = f.server_cc {
            server.cc = c;
        }
        if let Some(e) = f.server_ecn {
            server.ecn = e.into();
        }
        let start = duration(&f.start, &format!("{field}.start"), false)?;
        let connect = match &f.connect {
            Some(q) => {
                let t = duration(q, &format!("{field}.connect"), false)?;
                if t > start {
                    return Err(Error::new(
                        format!("{field}.connect"),
                        format!("must not be later than start ({} s); allowed 0 s..=start", start.secs_f64()),
                    ));
                }
                (t < start).then_some(t)
            }
            None => None,
        };
        let stop = match &f.stop {
            Some(q) => {
                let t = duration(q, &format!("{field}.stop"), true)?;
                if t <= start {
                    return Err(Error::new(format!("{field}.stop"), "must be after start"));
                }
                Some(t)
            }
            None => None,
        };
        let kind = match f.kind {
            spec::FlowKind::Rpc => {
                let q = f.size.as_ref().ok_or_else(|| {
                    Error::new(format!("{field}.size"), "an rpc flow needs the size of each request, e.g. \"10KB\"")
                })?;
                FlowKind::Rpc { bytes: bytes(q, &format!("{field}.size"))?, stop }
            }
            spec::FlowKind::Bulk => {
                if f.size.is_some() {
                    return Err(Error::new(
                        format!("{field}.size"),
                        "a bulk flow has no size; use kind = \"transfer\"",
                    ));
                }
                FlowKind::Bulk { stop }
            }
            spec::FlowKind::Transfer => {
                let q = f
                    .size
                    .as_ref()
                    .ok_or_else(|| Error::new(format!("{field}.size"), "a transfer needs a size, e.g. \"1MB\""))?;
                if f.stop.is_some() {
                    return Err(Error::new(
                        format!("{field}.stop"),
                        "a transfer ends when its data is acknowledged; remove stop",
                    ));
                }
                FlowKind::Transfer { bytes: bytes(q, &format!("{field}.size"))? }
            }
        };
        if f.dscp > 63 {
            return Err(Error::new(format!("{field}.dscp"), format!("{} is out of range; allowed 0..=63", f.dscp)));
        }
        if f.count == 0 || f.count > 100_000 {
            return Err(Error::new(
                format!("{field}.count"),
                format!("{} is out of range; allowed 1..=100000", f.count),
            ));
        }
        let base = if f.name.is_empty() { format!("flow{i}") } else { f.name.clone() };
        for k in 0..f.count {
            let name = if f.count == 1 { base.clone() } else { format!("{base}-{k}") };
            let n = flows.len() as u16;
            flows.push(FlowSpec {
                name,
                src,
                dst,
                start,
                connect,
                kind: kind.clone(),
                client: client.clone(),
                server: server.clone(),
                dscp: f.dscp,
                mark: f.mark,
                src_port: 40000u16.wrapping_add(n),
                dst_port: 5001,
            });
        }
    }
    if let Some(tr) = &s.traffic {
        traffic(s, tr, &topo, &routes, default_cc, &mut flows)?;
    }
    // BPF_SOCK_OPS_BASE_RTT for both ends of every connection: the server's peer is the client.
    // A host whose NIC runs fq paces its sockets through it.
    let paced = fq_pacing_nodes(&topo);
    for f in &mut flows {
        f.client.fq = paced[f.src.0 as usize];
        f.server.fq = paced[f.dst.0 as usize];
        f.client.base_rtt_us = programs.reply(f.src, f.dst, f.client.cc);
        f.server.base_rtt_us = programs.reply(f.dst, f.src, f.server.cc);
    }
    let mut pings = Vec::new();
    for (i, p) in s.pings.iter().enumerate() {
        let field = format!("pings[{i}]");
        if !(28..=65535).contains(&p.size) {
            return Err(Error::new(
                format!("{field}.size"),
                format!("{} is out of range; allowed 28..=65535 bytes", p.size),
            ));
        }
        if p.dscp > 63 {
            return Err(Error::new(format!("{field}.dscp"), format!("{} is out of range; allowed 0..=63", p.dscp)));
        }
        let (src, dst) = (host(&topo, &p.src, &format!("{field}.src"))?, host(&topo, &p.dst, &format!("{field}.dst"))?);
        check_path(&routes, &topo, src, dst, &format!("{field}.dst"))?;
        pings.push(PingSpec {
            name: if p.name.is_empty() { format!("ping{i}") } else { p.name.clone() },
            src,
            dst,
            start: duration(&p.start, &format!("{field}.start"), false)?,
            stop: p.stop.as_ref().map(|q| duration(q, &format!("{field}.stop"), true)).transpose()?,
            interval: duration(&p.interval, &format!("{field}.interval"), true)?,
            size: p.size,
            dscp: p.dscp,
            ecn: p.ecn.into(),
        });
    }
    // Monitored ports.
    let mut monitor = Vec::new();
    let mut monitor_names = Vec::new();
    if s.record.queues.is_empty() {
        for i in 0..2 * topo.links.len() {
            let p = PortId(i as u32);
            let (a, b) = topo.port_ends(p);
            if topo.kinds[a.0 as usize] == NodeKind::Switch && topo.kinds[b.0 as usize] == NodeKind::Host {
                monitor.push(p);
                monitor_names.push(format!("{}->{}", topo.name(a), topo.name(b)));
            }
        }
    } else {
        for (i, name) in s.record.queues.iter().enumerate() {
            let field = format!("record.queues[{i}]");
            let (a, b) = name.split_once("->").ok_or_else(|| {
                Error::new(&field, format!("\"{name}\" is not a port; write \"from->to\", e.g. \"s->c\""))
            })?;
            let na = topo.node(a.trim()).map_err(|e| Error::new(&field, e.to_string()))?;
            let nb = topo.node(b.trim()).map_err(|e| Error::new(&field, e.to_string()))?;
            let p = topo
                .port_between(na, nb)
                .ok_or_else(|| Error::new(&field, format!("no link between \"{a}\" and \"{b}\"")))?;
            monitor.push(p);
            monitor_names.push(format!("{}->{}", a.trim(), b.trim()));
        }
    }
    let interval = duration(&s.record.interval, "record.interval", true)?;
    let warmup = duration(&s.record.warmup, "record.warmup", false)?;
    if warmup >= duration_t {
        return Err(Error::new("record.warmup", "must be shorter than run.duration"));
    }
    let host_jitter = duration(&s.topology.host_jitter, "topology.host_jitter", false)?;
    if host_jitter > SimTime::from_ms(1) {
        return Err(Error::new("topology.host_jitter", "0 to 1ms (host timing noise, typically a few µs)"));
    }
    let rx_coalesce = duration(&s.topology.rx_coalesce, "topology.rx_coalesce", false)?;
    if rx_coalesce > SimTime::from_ms(1) {
        return Err(Error::new(
            "topology.rx_coalesce",
            "0 to 1ms (NIC receive interrupt coalescing, typically tens of µs)",
        ));
    }
    let cfg = SimConfig {
        seed: s.run.seed,
        duration: duration_t,
        sample_interval: Some(interval),
        monitor,
        series: s.record.series,
        l2_overhead: s.run.l2_overhead,
        host_jitter,
        rx_coalesce,
        gro: s.topology.gro,
        express: true,
        event_list: Default::default(),
    };
    Ok(Built { cfg, topo, routes, flows, pings, monitor_names, warmup })
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
