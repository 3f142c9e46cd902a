//! `[[workloads]]`: traffic generated during the run — open-loop Poisson arrivals at a target
//! load with sizes from a flow-size distribution, and incast rounds — as `ccsim_net::Traffic`.

use super::base_rtt::BaseRttPrograms;
use super::flows::HostSettings;
use super::tcp::tcp_config;
use super::{check_path, host, named_port};
use crate::error::{Error, Result};
use crate::spec::{self, Choice, Destinations, Scenario, WorkloadKind};
use crate::units::{
    bytes, duration,
    DurationRange::{NonNegative, Positive},
    Quantity,
};
use ccsim_engine::{Rng, SimTime};
use ccsim_net::{
    Aggregator, Cdf, FlowSizes, FlowTemplate, Incast, NodeId, NodeKind, Poisson, PoissonSender, Query, Rounds, Routes,
    Sockets, SocketsFor, Topology, Traffic,
};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The flow-size distributions shipped with ccsim (`scenarios/cdf/`, each file citing its
/// source), by the name a scenario gives them.
pub const BUILTIN_CDFS: [(&str, &str); 4] = [
    ("websearch", include_str!("../../../../scenarios/cdf/websearch.cdf")),
    ("datamining", include_str!("../../../../scenarios/cdf/datamining.cdf")),
    ("hadoop", include_str!("../../../../scenarios/cdf/hadoop.cdf")),
    ("alistorage", include_str!("../../../../scenarios/cdf/alistorage.cdf")),
];

/// A query's request when the workload does not say (the DCTCP paper's queries are about
/// 1.6 KB).
const DEFAULT_REQUEST: u64 = 1600;

/// Every server port of a workload's flows.
const SERVER_PORT: u16 = 5001;

/// A workload, built: its name and its generator.
pub struct Workload {
    pub name: String,
    pub traffic: Box<dyn Traffic>,
    /// Flows per second it offers (all senders), for the summary.
    pub offered_flows_per_s: f64,
    /// Mean flow size of its distribution, bytes.
    pub mean_size: f64,
}

/// Read a CDF in ccsim's format ("size fraction" per line, '#' comments); `name` names it in
/// errors, with the line at fault.
pub fn parse_cdf(text: &str, name: &str, field: &str) -> Result<Cdf> {
    let mut points = Vec::new();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let nums: Vec<&str> = body.split_whitespace().collect();
        let bad = || {
            Error::new(
                field,
                format!("{name}: line {line_no}: expected `size_in_bytes cumulative_fraction`, found \"{body}\""),
            )
        };
        if nums.len() != 2 {
            return Err(bad());
        }
        let size: f64 = nums[0].parse().map_err(|_| bad())?;
        let frac: f64 = nums[1].parse().map_err(|_| bad())?;
        points.push((size, frac));
        lines.push(line_no);
    }
    Cdf::new(points).map_err(|e| {
        let at = match &e {
            ccsim_net::CdfError::NotPositive { point, .. }
            | ccsim_net::CdfError::SizeDecreases { point }
            | ccsim_net::CdfError::FractionOutOfRange { point, .. }
            | ccsim_net::CdfError::FractionDecreases { point } => format!(" (line {})", lines[*point]),
            _ => String::new(),
        };
        Error::new(field, format!("{name}{at}: {e}"))
    })
}

/// `sizes`: a fixed size ("64KB"), a built-in distribution, or a CDF file relative to `dir`.
fn flow_sizes(spec: &str, dir: Option<&Path>, field: &str) -> Result<FlowSizes> {
    if spec.starts_with(|c: char| c.is_ascii_digit()) {
        let b = bytes(&Quantity::from(spec), field)?;
        if b == 0 {
            return Err(Error::new(field, "a flow of 0 bytes is not allowed; sizes must be > 0"));
        }
        return Ok(FlowSizes::Fixed(b));
    }
    if let Some((name, text)) = BUILTIN_CDFS.iter().find(|(n, _)| *n == spec) {
        return Ok(FlowSizes::Distribution(parse_cdf(text, &format!("built-in CDF \"{name}\""), field)?));
    }
    let path = dir.map_or_else(|| Path::new(spec).to_path_buf(), |d| d.join(spec));
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let names: Vec<String> = BUILTIN_CDFS.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        Error::new(
            field,
            format!(
                "\"{spec}\" is not a size, a built-in distribution ({}) or a readable CDF file ({}: {e})",
                names.join(", "),
                path.display()
            ),
        )
    })?;
    Ok(FlowSizes::Distribution(parse_cdf(&text, &path.display().to_string(), field)?))
}

/// Where each host sits: its rack (the switch it is attached to) and its pod (racks that share
/// an upstream switch, joined transitively).
struct Placement {
    rack: Vec<u32>,
    pod: Vec<u32>,
}

impl Placement {
    fn of(topo: &Topology) -> Placement {
        let n = topo.num_nodes();
        let mut rack = vec![u32::MAX; n];
        let mut up: Vec<Vec<u32>> = vec![Vec::new(); n];
        for l in &topo.links {
            let (a, b) = (l.a.0 as usize, l.b.0 as usize);
            for (x, y) in [(a, b), (b, a)] {
                if topo.kinds[x] == NodeKind::Host && topo.kinds[y] == NodeKind::Switch && rack[x] == u32::MAX {
                    rack[x] = y as u32;
                }
                if topo.kinds[x] == NodeKind::Switch && topo.kinds[y] == NodeKind::Switch {
                    up[x].push(y as u32);
                }
            }
        }
        // Union-find over racks: two racks with a common neighbouring switch share a pod.
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(p: &mut [u32], x: u32) -> u32 {
            let mut r = x;
            while p[r as usize] != r {
                r = p[r as usize];
            }
            let mut y = x;
            while p[y as usize] != r {
                let next = p[y as usize];
                p[y as usize] = r;
                y = next;
            }
            r
        }
        let racks: Vec<u32> = {
            let mut r: Vec<u32> = rack.iter().copied().filter(|&r| r != u32::MAX).collect();
            r.sort_unstable();
            r.dedup();
            r
        };
        let mut owner: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for &r in &racks {
            for &u in &up[r as usize] {
                match owner.get(&u) {
                    Some(&o) => {
                        let (a, b) = (find(&mut parent, o), find(&mut parent, r));
                        parent[a as usize] = b;
                    }
                    None => {
                        owner.insert(u, r);
                    }
                }
            }
        }
        let pod = rack.iter().map(|&r| if r == u32::MAX { u32::MAX } else { find(&mut parent, r) }).collect();
        Placement { rack, pod }
    }

    fn allowed(&self, d: Destinations, a: NodeId, b: NodeId) -> bool {
        let (a, b) = (a.0 as usize, b.0 as usize);
        a != b
            && match d {
                Destinations::Any => true,
                Destinations::SameRack => self.rack[a] == self.rack[b],
                Destinations::OtherRack => self.rack[a] != self.rack[b],
                Destinations::SamePod => self.pod[a] == self.pod[b],
                Destinations::OtherPod => self.pod[a] != self.pod[b],
            }
    }
}

/// FNV-1a of a workload's and a host's names: the host's random stream in that workload, so
/// that adding a host (or another workload) leaves every other stream as it was.
fn stream_of(workload: &str, host: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in workload.bytes().chain([0u8]).chain(host.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Apart from the ports' (0x1000_0000 + port) and the flows' (0x2000_0000 + id) streams.
    h | (1 << 63)
}

/// The rate of a host's link, bits per second (its first link).
fn host_rate(topo: &Topology, h: NodeId) -> u64 {
    topo.links.iter().find(|l| l.a == h || l.b == h).map_or(0, |l| l.rate_bps)
}

/// The rate of link "from->to", bits per second.
fn named_link_rate(topo: &Topology, name: &str, field: &str) -> Result<u64> {
    let (p, _) = named_port(topo, name, field)?;
    Ok(topo.links[(p.0 / 2) as usize].rate_bps)
}

/// Every `[[workloads]]` entry, built.
pub(super) fn workloads(
    s: &Scenario,
    topo: &Topology,
    routes: &Routes,
    programs: &BaseRttPrograms,
    run_end: SimTime,
) -> Result<Vec<Workload>> {
    if s.workloads.is_empty() {
        return Ok(Vec::new());
    }
    let place = Placement::of(topo);
    let settings = Arc::new(Mutex::new(HostSettings::new(topo, programs.clone())));
    let mut out = Vec::new();
    for (i, w) in s.workloads.iter().enumerate() {
        let built = workload(s, w, i, topo, routes, &place, &settings, run_end)?;
        // Flows to expect over the run: bounded, so that a run stays finite.
        let start = duration(&w.start, "start", NonNegative)?;
        let span = run_end.saturating_sub(start).secs_f64();
        let expected = built.offered_flows_per_s * span;
        if expected > MAX_FLOWS {
            return Err(Error::new(
                format!("workloads[{i}]"),
                format!(
                    "offers about {expected:.3e} flows over the run ({:.3e} per second); allowed at most {MAX_FLOWS:.0e}: \
                     lower its load or rate, give it larger flows, or shorten the run",
                    built.offered_flows_per_s
                ),
            ));
        }
        out.push(built);
    }
    Ok(out)
}

/// The most flows a workload may be expected to open in one run.
const MAX_FLOWS: f64 = 1e8;

#[allow(clippy::too_many_arguments)]
fn workload(
    s: &Scenario,
    w: &spec::Workload,
    i: usize,
    topo: &Topology,
    routes: &Routes,
    place: &Placement,
    settings: &Arc<Mutex<HostSettings>>,
    run_end: SimTime,
) -> Result<Workload> {
    let field = format!("workloads[{i}]");
    let name = if w.name.is_empty() { format!("workload{i}") } else { w.name.clone() };
    let sizes = Arc::new(flow_sizes(&w.sizes, s.dir.as_deref(), &format!("{field}.sizes"))?);
    if w.dscp > 63 {
        return Err(Error::new(format!("{field}.dscp"), format!("{} is out of range; allowed 0..=63", w.dscp)));
    }
    let start = duration(&w.start, &format!("{field}.start"), NonNegative)?;
    let stop = match &w.stop {
        Some(q) => {
            let t = duration(q, &format!("{field}.stop"), Positive)?;
            if t <= start {
                return Err(Error::new(format!("{field}.stop"), "must be after start"));
            }
            t
        }
        None => run_end,
    };
    let hosts: Vec<NodeId> = if w.hosts.is_empty() {
        (0..topo.num_nodes()).filter(|&n| topo.kinds[n] == NodeKind::Host).map(|n| NodeId(n as u32)).collect()
    } else {
        let mut v = Vec::new();
        for (k, h) in w.hosts.iter().enumerate() {
            v.push(host(topo, h, &format!("{field}.hosts[{k}]"))?);
        }
        v
    };
    if hosts.len() < 2 {
        return Err(Error::new(format!("{field}.hosts"), "a workload needs at least 2 hosts"));
    }
    let client = Arc::new(tcp_config(&s.tcp, w.cc.unwrap_or(s.tcp.cc))?);
    let settings = settings.clone();
    let sockets: SocketsFor = Arc::new(move |src: NodeId, dst: NodeId| {
        let mut hs = settings.lock().expect("no panic holds it");
        Sockets { client: hs.socket(&client, src, dst), server: hs.socket(&client, dst, src) }
    });
    let template = FlowTemplate {
        name: name.clone(),
        sizes: sizes.clone(),
        sockets,
        dscp: w.dscp,
        mark: 0,
        dst_port: SERVER_PORT,
    };
    let mean = sizes.mean();
    let only = |what: &str, kind: &str| {
        Error::new(format!("{field}.{what}"), format!("is not a setting of a {kind} workload; remove it"))
    };
    match w.kind {
        WorkloadKind::Poisson => {
            if w.fan_in.is_some() {
                return Err(only("fan_in", "poisson"));
            }
            if w.load_of.is_some() && w.load.is_none() {
                return Err(Error::new(
                    format!("{field}.load"),
                    "load_of names the link; load gives the fraction of it",
                ));
            }
            if w.interval.is_some() {
                return Err(only("interval", "poisson"));
            }
            if w.rounds_per_s.is_some() {
                return Err(only("rounds_per_s", "poisson"));
            }
            if w.request.is_some() {
                return Err(only("request", "poisson"));
            }
            let load = w.load.ok_or_else(|| {
                Error::new(
                    format!("{field}.load"),
                    "a poisson workload needs its load, a fraction of the link rate, e.g. 0.5",
                )
            })?;
            if !(load > 0.0 && load < 1.0) {
                return Err(Error::new(
                    format!("{field}.load"),
                    format!("{load} is out of range; allowed 0 < load < 1"),
                ));
            }
            // The rate `load` is a fraction of: each sender's own link, or a named link shared
            // out among the senders.
            let of_link = match &w.load_of {
                Some(name) => {
                    Some(named_link_rate(topo, name, &format!("{field}.load_of"))? as f64 / hosts.len() as f64)
                }
                None => None,
            };
            let mut senders = Vec::new();
            let mut total = 0.0;
            for &h in &hosts {
                let destinations: Vec<NodeId> =
                    hosts.iter().copied().filter(|&d| place.allowed(w.destinations, h, d)).collect();
                if destinations.is_empty() {
                    return Err(Error::new(
                        format!("{field}.destinations"),
                        format!(
                            "host \"{}\" has no destination that is \"{}\" among the workload's hosts; choose \
                             other destinations or hosts",
                            topo.name(h),
                            w.destinations.name()
                        ),
                    ));
                }
                for &d in &destinations {
                    check_path(routes, topo, h, d, &format!("{field}.destinations"))?;
                }
                // Flows per second that offer `load` of the host's link in payload bytes.
                let rate = load * of_link.unwrap_or(host_rate(topo, h) as f64) / 8.0 / mean;
                total += rate;
                senders.push(PoissonSender { host: h, destinations, stream: stream_of(&name, topo.name(h)), rate });
            }
            let traffic = Box::new(Poisson::new(template, senders, s.run.seed, start, stop));
            Ok(Workload { name, traffic, offered_flows_per_s: total, mean_size: mean })
        }
        WorkloadKind::Incast | WorkloadKind::Query => {
            let kind = w.kind.name();
            if w.load.is_some() {
                return Err(only("load", kind));
            }
            if w.load_of.is_some() {
                return Err(only("load_of", kind));
            }
            if w.destinations != Destinations::Any {
                return Err(only("destinations", kind));
            }
            if w.kind == WorkloadKind::Incast && w.request.is_some() {
                return Err(only("request", kind));
            }
            let fan_in = w.fan_in.ok_or_else(|| {
                Error::new(format!("{field}.fan_in"), format!("a {kind} workload needs fan_in, the senders per round"))
            })?;
            if fan_in == 0 || fan_in as usize > hosts.len() - 1 {
                return Err(Error::new(
                    format!("{field}.fan_in"),
                    format!(
                        "{fan_in} is out of range; allowed 1..={} (the workload's hosts but the receiver)",
                        hosts.len() - 1
                    ),
                ));
            }
            let rounds = match (&w.interval, w.rounds_per_s) {
                (Some(q), None) => Rounds::Every(duration(q, &format!("{field}.interval"), Positive)?),
                (None, Some(r)) if r > 0.0 && r.is_finite() => Rounds::Poisson(r),
                (None, Some(r)) => {
                    return Err(Error::new(
                        format!("{field}.rounds_per_s"),
                        format!("{r} is out of range; allowed > 0"),
                    ))
                }
                _ => {
                    return Err(Error::new(
                        field.clone(),
                        format!("a {kind} workload needs exactly one of interval (e.g. \"10ms\") and rounds_per_s"),
                    ))
                }
            };
            for &a in &hosts {
                for &b in &hosts {
                    if a != b {
                        check_path(routes, topo, a, b, &format!("{field}.hosts"))?;
                    }
                }
            }
            let per_s = match rounds {
                Rounds::Every(iv) => 1.0 / iv.secs_f64(),
                Rounds::Poisson(r) => r,
            };
            if w.kind == WorkloadKind::Query {
                let request = match &w.request {
                    Some(q) => bytes(q, &format!("{field}.request"))?,
                    None => DEFAULT_REQUEST,
                };
                if request == 0 {
                    return Err(Error::new(
                        format!("{field}.request"),
                        "0 bytes is not allowed; a request is > 0 bytes",
                    ));
                }
                let aggregators = hosts
                    .iter()
                    .map(|&h| Aggregator {
                        host: h,
                        workers: hosts.iter().copied().filter(|&x| x != h).collect(),
                        stream: stream_of(&name, topo.name(h)),
                    })
                    .collect();
                let traffic =
                    Box::new(Query::new(template, aggregators, request, fan_in, rounds, s.run.seed, start, stop));
                let offered = per_s * fan_in as f64 * hosts.len() as f64;
                return Ok(Workload { name, traffic, offered_flows_per_s: offered, mean_size: mean });
            }
            let rng = Rng::new(s.run.seed, stream_of(&name, ""));
            let traffic = Box::new(Incast::new(template, hosts.clone(), hosts, fan_in, rounds, rng, start, stop));
            Ok(Workload { name, traffic, offered_flows_per_s: per_s * fan_in as f64, mean_size: mean })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_cdf_parses_and_has_the_published_mean() {
        let means: Vec<(&str, f64)> =
            BUILTIN_CDFS.iter().map(|(n, t)| (*n, parse_cdf(t, n, "sizes").unwrap().mean())).collect();
        // Trapezoid means of the published points (workloads-and-buffers.md's estimates for three).
        let want = [
            ("websearch", 1_711_250.0),
            ("datamining", 12_658_198.6),
            ("hadoop", 120_421.25),
            ("alistorage", 41_328.4),
        ];
        for ((n, m), (wn, wm)) in means.iter().zip(want) {
            assert_eq!(*n, wn);
            assert!((m - wm).abs() < 1e-3, "{n}: {m}");
        }
    }

    #[test]
    fn a_bad_cdf_names_the_file_and_line() {
        let e = parse_cdf("# c\n100 0.5\n50 1\n", "my.cdf", "workloads[0].sizes").unwrap_err();
        assert_eq!(e.field, "workloads[0].sizes");
        assert!(e.msg.contains("my.cdf (line 3)") && e.msg.contains("must not decrease"), "{}", e.msg);
        let e = parse_cdf("100 0.5\n200 0.9\n", "my.cdf", "f").unwrap_err();
        assert!(e.msg.contains("must end at 1"), "{}", e.msg);
        let e = parse_cdf("0 0\n-3 0.5\n10 1\n", "my.cdf", "f").unwrap_err();
        assert!(e.msg.contains("line 2") && e.msg.contains("> 0"), "{}", e.msg);
        let e = parse_cdf("100 half\n", "my.cdf", "f").unwrap_err();
        assert!(e.msg.contains("line 1"), "{}", e.msg);
    }

    #[test]
    fn streams_differ_by_workload_and_host_and_stay_apart_from_flow_streams() {
        let a = stream_of("web", "h0_0_0");
        assert_ne!(a, stream_of("web", "h0_0_1"));
        assert_ne!(a, stream_of("web2", "h0_0_0"));
        assert_ne!(stream_of("ab", "c"), stream_of("a", "bc"));
        assert!(a >= 1 << 63);
    }
}
