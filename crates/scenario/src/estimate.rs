//! What a run will take before it runs: memory for the network and its records, the results'
//! size and file count, and a bound on the work. `ccsim check` prints it; `ccsim run` warns above
//! `WARN_*` and refuses above the limits the user gives (or the machine has).
//!
//! The parts are the ones that grow with the scenario's size and length: the route table (its
//! real size, once built), ports and connections (the simulator's own structure sizes), queue
//! and flow samples (one per interval per port or flow), ping replies, and the files written.
//! Packets waiting in queues and the connections workloads open come on top (they follow the
//! traffic, not the file); the estimate says so rather than guess them.

use crate::build::Built;
use crate::results::{MAX_PLOT_LINES, MAX_PORT_FILES};
use ccsim_net::{footprint, FlowSample, NodeKind, PortSample, Unit};

/// Above these, `ccsim run` and `ccsim check` warn.
pub const WARN_MEMORY_BYTES: u64 = 2_000_000_000;
pub const WARN_OUTPUT_BYTES: u64 = 2_000_000_000;
pub const WARN_FILES: u64 = 2_000;
/// Full-size data packets, the work bound: a data packet's share of a full link (1500 bytes).
const MTU_BYTES: u64 = 1_500;

/// One part of the estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub what: &'static str,
    pub bytes: u64,
}

/// A run's estimated needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Memory, by part; packets in queues and workloads' connections not included.
    pub memory: Vec<Part>,
    /// The results directory, by file kind.
    pub output: Vec<Part>,
    pub files: u64,
    /// Data packets if every host link sent full-size packets for the whole run: the most work
    /// the run can be.
    pub max_data_packets: u64,
    /// Whether workloads open connections during the run (their memory is not estimated).
    pub workloads: bool,
    /// Memory for the packets if every port's queue were full (full-size packets for queues
    /// counted in bytes): a bound, which a run reaches only when every queue fills at once.
    pub queued_packets_bound: u64,
}

impl Estimate {
    pub fn memory_bytes(&self) -> u64 {
        self.memory.iter().map(|p| p.bytes).sum()
    }
    pub fn output_bytes(&self) -> u64 {
        self.output.iter().map(|p| p.bytes).sum()
    }
    /// One line per total with its largest parts, as `ccsim check` prints it.
    pub fn lines(&self) -> Vec<String> {
        let parts = |ps: &[Part]| largest(ps, 4);
        let extra = if self.workloads { "; workloads' connections on top" } else { "" };
        vec![
            format!(
                "memory: about {} ({}), and up to {} more for packets if every queue fills{extra}",
                human(self.memory_bytes()),
                parts(&self.memory),
                human(self.queued_packets_bound)
            ),
            format!("output: about {} in {} files ({})", human(self.output_bytes()), self.files, parts(&self.output)),
            format!("work: at most {} data packets (every host link full for the whole run)", self.max_data_packets),
        ]
    }
}

/// The `n` largest parts, as "flows.csv 12.0 MB, queue series 3.1 MB".
pub fn largest(parts: &[Part], n: usize) -> String {
    let mut v: Vec<&Part> = parts.iter().filter(|p| p.bytes > 0).collect();
    v.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    v.iter().take(n).map(|p| format!("{} {}", p.what, human(p.bytes))).collect::<Vec<_>>().join(", ")
}

/// Bytes as "12.3 MB".
pub fn human(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

// Bytes per row or point of what is written, measured on ccsim's files (a queue row with a
// 10-digit time is about 25 bytes, a flows.csv row about 90, an SVG point about 16).
const QUEUE_ROW: u64 = 25;
const FLOW_ROW: u64 = 90;
const SVG_POINT: u64 = 16;
const FCT_ROW: u64 = 120;
const PCAP_RECORD: u64 = 16;
/// summary.json per port, flow and ping, and its frame.
const SUMMARY_ITEM: u64 = 600;

/// Estimate what running `b` needs.
pub fn estimate(b: &Built) -> Estimate {
    let fp = footprint();
    let dur = b.cfg.duration;
    let samples = match b.cfg.sample_interval {
        Some(iv) => dur.ns() / iv.ns().max(1) + 1,
        None => 0,
    };
    let ports = 2 * b.topo.links.len() as u64;
    let monitored = b.cfg.monitor.len() as u64;
    let flows = b.flows.len() as u64;
    let series = b.cfg.series;
    let ping_replies: u64 = b.pings.iter().map(|p| dur.ns() / p.interval.ns().max(1) + 1).sum();
    let mut memory = vec![
        Part { what: "route table", bytes: b.routes.heap_bytes() },
        Part { what: "ports", bytes: ports * fp.port_bytes },
        Part { what: "connections", bytes: flows * fp.conn_bytes },
        // Occupancy samples are counted per value (`Occupancy`): a counter per packet of the
        // longest queue, whatever the run's length.
        Part { what: "queue statistics", bytes: monitored * 8 * 1_024 },
        Part { what: "ping replies", bytes: ping_replies * 32 },
    ];
    if series {
        memory
            .push(Part { what: "queue series", bytes: monitored * samples * std::mem::size_of::<PortSample>() as u64 });
        memory.push(Part { what: "flow series", bytes: flows * samples * std::mem::size_of::<FlowSample>() as u64 });
    }
    let mut output =
        vec![Part { what: "summary.json", bytes: 2_000 + SUMMARY_ITEM * (monitored + flows + b.pings.len() as u64) }];
    // config.resolved.toml, summary.json
    let mut files = 2;
    if monitored > 0 {
        files += 1; // queue_cdf.svg
        output.push(Part { what: "queue CDF plot", bytes: monitored.min(MAX_PLOT_LINES as u64) * 200 * SVG_POINT });
    }
    if series && monitored > 0 {
        output.push(Part { what: "queue series", bytes: monitored * samples * QUEUE_ROW });
        if monitored as usize > MAX_PORT_FILES {
            files += 1;
        } else {
            files += 2 * monitored;
            output.push(Part { what: "queue plots", bytes: monitored * samples * SVG_POINT });
        }
    }
    if series && flows > 0 {
        files += 3;
        output.push(Part { what: "flows.csv", bytes: flows * samples * FLOW_ROW });
        output.push(Part { what: "flow plots", bytes: 2 * flows.min(MAX_PLOT_LINES as u64) * samples * SVG_POINT });
    }
    if !b.pings.is_empty() {
        files += 1;
        output.push(Part { what: "pings.csv", bytes: ping_replies * 30 });
    }
    if !b.workloads.is_empty() {
        files += 2; // fct.csv, fct_slowdown.svg
        let arrivals: f64 = b.workloads.iter().map(|w| w.offered_flows_per_s).sum::<f64>() * dur.secs_f64();
        output.push(Part { what: "fct.csv", bytes: (arrivals * FCT_ROW as f64) as u64 });
    }
    let mut pcap = 0u64;
    for s in &b.captures.specs {
        files += 1;
        // Full-size packets at the line rate of every point, over the capture's window.
        let bits: f64 = s
            .points
            .iter()
            .map(|p| {
                let port = match p {
                    ccsim_net::CapturePoint::Egress(p) | ccsim_net::CapturePoint::Ingress(p) => *p,
                };
                b.topo.links[(port.0 / 2) as usize].rate_bps as f64
            })
            .sum::<f64>()
            * (s.stop - s.start).secs_f64();
        let packets = ((bits / 8.0 / MTU_BYTES as f64) as u64).min(s.max_packets);
        pcap += packets * (PCAP_RECORD + (b.captures.snaplen as u64).min(MTU_BYTES));
    }
    if pcap > 0 {
        output.push(Part { what: "packet captures", bytes: pcap });
    }
    let host_bits: f64 = b
        .topo
        .links
        .iter()
        .map(|l| {
            let hosts = [l.a, l.b].iter().filter(|n| b.topo.kinds[n.0 as usize] == NodeKind::Host).count();
            hosts as f64 * l.rate_bps as f64
        })
        .sum();
    let max_data_packets = (host_bits * dur.secs_f64() / 8.0 / MTU_BYTES as f64) as u64;
    let queued: u64 = b
        .topo
        .links
        .iter()
        .flat_map(|l| [&l.queue_ab, &l.queue_ba])
        .flat_map(|q| q.classes.iter())
        .map(|c| match c.limit.unit {
            Unit::Packets => c.limit.value,
            Unit::Bytes => c.limit.value / MTU_BYTES,
        })
        .sum();
    Estimate {
        memory,
        output,
        files,
        max_data_packets,
        workloads: !b.workloads.is_empty(),
        queued_packets_bound: queued * fp.packet_bytes,
    }
}
