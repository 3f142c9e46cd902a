//! Resolve a parsed [`Scenario`] into the simulator's objects, checking every value and naming
//! the field of anything out of range. [`build`] is the list of steps, one module or function
//! each: queues, topology, TCP settings, `[[base_rtt]]`, flows and generated traffic, pings, and
//! what to record.

mod base_rtt;
mod buffers;
mod capture;
mod flows;
mod queues;
mod tcp;
mod topology;
mod workloads;

pub use buffers::BUFFER_PRESETS;
pub use capture::{Captures, DEFAULT_MAX_PACKETS, DEFAULT_SNAPLEN};
pub use workloads::{parse_cdf, Workload, BUILTIN_CDFS};

use crate::error::{Error, Result};
use crate::spec::{self, Scenario};
use crate::units::{
    duration,
    DurationRange::{NonNegative, Positive},
};
use ccsim_engine::SimTime;
use ccsim_net::{FlowSpec, HostJitter, NodeId, NodeKind, PingSpec, PortId, Routes, SimConfig, Topology};
use ccsim_tcp::Ecn;
use topology::topo_err;

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
    /// `[[workloads]]`: traffic generated during the run.
    pub workloads: Vec<Workload>,
    /// `record.pcap`: packet captures.
    pub captures: Captures,
}

/// Resolve the scenario.
pub fn build(s: &Scenario) -> Result<Built> {
    let run_duration = duration(&s.run.duration, "run.duration", Positive)?;
    let queues = queues::queues(s)?;
    let topo = topology::topology(&s.topology, &queues)?;
    let routes = topo.routes().map_err(topo_err("topology"))?;
    // `[tcp]` is checked even when no flow uses it.
    tcp::tcp_config(&s.tcp, s.tcp.cc)?;
    let base_rtt = base_rtt::base_rtt_programs(s, &topo)?;
    let mut flows = flows::flows(s, &topo, &routes)?;
    if let Some(tr) = &s.traffic {
        let generated = flows::traffic(s, tr, &topo, &routes, flows.len())?;
        flows.extend(generated);
    }
    flows::apply_host_settings(&mut flows, &topo, &base_rtt);
    // Results are keyed by name (rows of summary.json, flows.csv, fct.csv): names are unique.
    unique_names(flows.iter().map(|f| f.name.as_str()), "flow", |k| flow_name_field(s, k))?;
    let workloads = workloads::workloads(s, &topo, &routes, &base_rtt, run_duration)?;
    unique_names(workloads.iter().map(|w| w.name.as_str()), "workload", |k| format!("workloads[{k}].name"))?;
    let pings = pings(s, &topo, &routes, run_duration)?;
    unique_names(pings.iter().map(|p| p.name.as_str()), "ping probe", |k| format!("pings[{k}].name"))?;
    let shared_buffers = buffers::shared_buffers(s, &topo)?;
    let monitored = monitored_ports(&s.record, &topo)?;
    let record = RecordTimes::of(&s.record, run_duration, monitored.ports.len())?;
    let hosts = HostTiming::of(&s.topology)?;
    let captures = capture::captures(&s.record, &topo, run_duration)?;
    let cfg = SimConfig {
        seed: s.run.seed,
        duration: run_duration,
        sample_interval: Some(record.interval),
        monitor: monitored.ports,
        stats_from: record.warmup,
        series: s.record.series,
        l2_overhead: s.run.l2_overhead,
        host_jitter: hosts.jitter,
        rx_coalesce: hosts.rx_coalesce,
        gro: s.topology.gro,
        express: true,
        event_list: Default::default(),
        shared_buffers,
    };
    Ok(Built {
        cfg,
        topo,
        routes,
        flows,
        pings,
        monitor_names: monitored.names,
        warmup: record.warmup,
        workloads,
        captures,
    })
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

/// `[[pings]]`: ICMP echo probes.
/// An error naming the second of two equal names (`field(k)` gives the k-th name's field).
fn unique_names<'a>(names: impl Iterator<Item = &'a str>, what: &str, field: impl Fn(usize) -> String) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for (k, name) in names.enumerate() {
        if let Some(first) = seen.insert(name, k) {
            return Err(Error::new(
                field(k),
                format!("`{name}` is also the name of {what} {first} ({}); names must be unique", field(first)),
            ));
        }
    }
    Ok(())
}

/// The field that gives built flow `k` its name: a `[[flows]]` entry (counted flows expand to
/// several), else the generated `[traffic]`.
fn flow_name_field(s: &Scenario, k: usize) -> String {
    let mut at = 0;
    for (i, f) in s.flows.iter().enumerate() {
        at += f.count as usize;
        if k < at {
            return format!("flows[{i}].name");
        }
    }
    "traffic".into()
}

fn pings(s: &Scenario, topo: &Topology, routes: &Routes, run_duration: SimTime) -> Result<Vec<PingSpec>> {
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
        let (src, dst) = (host(topo, &p.src, &format!("{field}.src"))?, host(topo, &p.dst, &format!("{field}.dst"))?);
        check_path(routes, topo, src, dst, &format!("{field}.dst"))?;
        pings.push(PingSpec {
            name: if p.name.is_empty() { format!("ping{i}") } else { p.name.clone() },
            src,
            dst,
            start: duration(&p.start, &format!("{field}.start"), NonNegative)?,
            stop: p.stop.as_ref().map(|q| duration(q, &format!("{field}.stop"), Positive)).transpose()?,
            interval: {
                let iv = duration(&p.interval, &format!("{field}.interval"), Positive)?;
                if run_duration.ns() / iv.ns() > MAX_PINGS {
                    return Err(Error::new(
                        format!("{field}.interval"),
                        format!(
                            "{} ns over {} s is more than {MAX_PINGS} requests; allowed at least {} ns",
                            iv.ns(),
                            run_duration.secs_f64(),
                            run_duration.ns().div_ceil(MAX_PINGS)
                        ),
                    ));
                }
                iv
            },
            size: p.size,
            dscp: p.dscp,
            ecn: p.ecn.into(),
        });
    }
    Ok(pings)
}

/// The ports whose queues are sampled, and their names ("from->to") in the results.
struct MonitoredPorts {
    ports: Vec<PortId>,
    names: Vec<String>,
}

/// `record.queues`, or by default every switch port towards a host.
fn monitored_ports(r: &spec::Record, topo: &Topology) -> Result<MonitoredPorts> {
    let mut m = MonitoredPorts { ports: Vec::new(), names: Vec::new() };
    if r.queues.is_empty() {
        for i in 0..2 * topo.links.len() {
            let p = PortId(i as u32);
            let (a, b) = topo.port_ends(p);
            if topo.kinds[a.0 as usize] == NodeKind::Switch && topo.kinds[b.0 as usize] == NodeKind::Host {
                m.ports.push(p);
                m.names.push(format!("{}->{}", topo.name(a), topo.name(b)));
            }
        }
        return Ok(m);
    }
    for (i, name) in r.queues.iter().enumerate() {
        let field = format!("record.queues[{i}]");
        let (p, name) = named_port(topo, name, &field)?;
        if let Some(first) = m.ports.iter().position(|&q| q == p) {
            return Err(Error::new(field, format!("`{name}` is listed twice (also record.queues[{first}])")));
        }
        m.ports.push(p);
        m.names.push(name);
    }
    Ok(m)
}

/// `record.interval` and `record.warmup`.
/// The most queue samples a run keeps (4 bytes each: 400 MB).
const MAX_SAMPLES: u64 = 100_000_000;
/// The most echo requests one ping probe sends in a run.
const MAX_PINGS: u64 = 10_000_000;

struct RecordTimes {
    interval: SimTime,
    warmup: SimTime,
}

impl RecordTimes {
    fn of(r: &spec::Record, run_duration: SimTime, ports: usize) -> Result<Self> {
        let interval = duration(&r.interval, "record.interval", Positive)?;
        // A sample per interval per monitored port, kept for the run: bounded, so that a run
        // cannot fill the machine's memory.
        let samples = (run_duration.ns() / interval.ns()).saturating_mul(ports.max(1) as u64);
        if samples > MAX_SAMPLES {
            let least = SimTime::from_ns((run_duration.ns() * ports.max(1) as u64).div_ceil(MAX_SAMPLES));
            return Err(Error::new(
                "record.interval",
                format!(
                    "{} ns over {} s at {} monitored ports is {samples} samples; allowed at most {MAX_SAMPLES}: an \
                     interval of at least {} ns, or fewer ports in record.queues",
                    interval.ns(),
                    run_duration.secs_f64(),
                    ports.max(1),
                    least.ns()
                ),
            ));
        }
        let warmup = duration(&r.warmup, "record.warmup", NonNegative)?;
        if warmup >= run_duration {
            return Err(Error::new("record.warmup", "must be shorter than run.duration"));
        }
        Ok(RecordTimes { interval, warmup })
    }
}

/// The hosts' timing noise and receive coalescing (`topology.host_jitter`, `rx_coalesce`).
struct HostTiming {
    jitter: HostJitter,
    rx_coalesce: SimTime,
}

/// `host_jitter = "auto"` (the default): noise bounded by the time of this many bytes on the
/// host's link — 2 µs at 100 Mb/s, where the kernel comparisons measured it, and the same share
/// of a packet time at every other rate (200 ns at 1 Gb/s, 20 ns at 10 Gb/s). docs/scenarios.md,
/// "Host jitter", gives the evidence.
pub const AUTO_JITTER_BYTES: u32 = 25;

impl HostTiming {
    fn of(t: &spec::TopologySpec) -> Result<Self> {
        let jitter = match &t.host_jitter {
            crate::units::Quantity::Str(s) if s == "auto" => HostJitter::ByteTimes(AUTO_JITTER_BYTES),
            q => {
                let bound = duration(q, "topology.host_jitter", NonNegative).map_err(|_| {
                    Error::new("topology.host_jitter", "\"auto\" or a duration from 0 to 1ms (host timing noise)")
                })?;
                if bound > SimTime::from_ms(1) {
                    return Err(Error::new(
                        "topology.host_jitter",
                        "\"auto\" or a duration from 0 to 1ms (host timing noise, typically a few µs)",
                    ));
                }
                HostJitter::Fixed(bound)
            }
        };
        let rx_coalesce = duration(&t.rx_coalesce, "topology.rx_coalesce", NonNegative)?;
        if rx_coalesce > SimTime::from_ms(1) {
            return Err(Error::new(
                "topology.rx_coalesce",
                "0 to 1ms (NIC receive interrupt coalescing, typically tens of µs)",
            ));
        }
        Ok(HostTiming { jitter, rx_coalesce })
    }
}

/// The port a scenario names as "from->to", and that name tidied.
pub(super) fn named_port(topo: &Topology, name: &str, field: &str) -> Result<(PortId, String)> {
    let (a, b) = name
        .split_once("->")
        .ok_or_else(|| Error::new(field, format!("\"{name}\" is not a port; write \"from->to\", e.g. \"s->c\"")))?;
    let na = topo.node(a.trim()).map_err(|e| Error::new(field, e.to_string()))?;
    let nb = topo.node(b.trim()).map_err(|e| Error::new(field, e.to_string()))?;
    let p =
        topo.port_between(na, nb).ok_or_else(|| Error::new(field, format!("no link between \"{a}\" and \"{b}\"")))?;
    Ok((p, format!("{}->{}", a.trim(), b.trim())))
}

/// Every flow and ping needs a path between its hosts.
pub(super) fn check_path(routes: &Routes, topo: &Topology, src: NodeId, dst: NodeId, field: &str) -> Result<()> {
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

pub(super) fn host(topo: &Topology, name: &str, field: &str) -> Result<NodeId> {
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
