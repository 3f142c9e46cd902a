//! Running a built scenario and writing its results: `summary.json`, CSV time series, SVG plots.

use crate::build::Built;
use crate::fct::{FctCollector, FctFile, FctReport};
use ccsim_cc::{CcInfo, TCP_INFINITE_SSTHRESH};
use ccsim_engine::SimTime;
use ccsim_net::{FlowKind, FlowSample, Occupancy, Records, Sim};
use ccsim_pcap::CaptureFiles;
use ccsim_report::{cdf_plot_of, fmt_f64, summarize, Cell, CsvWriter, IntHistogram, Plot, PlotKind, Series};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassSummary {
    pub name: String,
    pub enqueued: u64,
    pub drops: u64,
    pub marks: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RpcSummary {
    pub completed: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// Occupancy of one monitored port, in packets, over the samples after warm-up.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueSummary {
    pub port: String,
    /// The file its series is written to (with `record.series`): `queue_<port>.csv`, the port's
    /// name made a file name, numbered where two names would make the same one.
    pub csv: String,
    pub samples: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub drops: u64,
    pub marks: u64,
    pub tx_packets: u64,
    /// Fraction of the run the port spent transmitting.
    pub utilisation: f64,
    pub classes: Vec<ClassSummary>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub name: String,
    /// "bulk", "transfer", "rpc" or "exchange".
    pub kind: &'static str,
    /// Bytes the application writes: a transfer's size, an RPC's, an exchange's request and
    /// response together; null for bulk flows.
    pub size_bytes: Option<u64>,
    pub cc: String,
    pub src: String,
    pub dst: String,
    pub start_s: f64,
    /// Payload bytes acknowledged, per second of the flow's active time, in Mb/s.
    pub goodput_mbps: f64,
    pub bytes_acked: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    /// Timeouts as `netstat -s` "other TCP timeouts" counted them before 2019: the first RTO
    /// of a stall in Open or CWR with nothing SACKed, and SYN timeouts.
    pub other_timeouts: u64,
    pub fast_recoveries: u64,
    pub cwr_events: u64,
    /// Transfer completion time in seconds (transfers that finished), else null.
    pub completion_s: Option<f64>,
    /// When the handshake completed (seconds since the start of the run), else null.
    pub established_s: Option<f64>,
    /// RPC flows: requests completed, their mean and 99th-percentile latency (ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc: Option<RpcSummary>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PingSummary {
    pub name: String,
    pub sent: u64,
    pub received: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub min_ms: f64,
    pub stddev_ms: f64,
}

/// A switch's shared buffer: occupancy (bytes, samples after warm-up) and drops by cause.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BufferSummary {
    pub switch: String,
    pub size_bytes: u64,
    pub samples: u64,
    pub mean_bytes: f64,
    pub p50_bytes: f64,
    pub p99_bytes: f64,
    pub max_bytes: f64,
    /// Refused for want of free cells.
    pub drops_buffer_full: u64,
    /// Refused by the queue's dynamic threshold.
    pub drops_dynamic_threshold: u64,
    /// Dropped after admission by the queue's own limit (a static cap) or its AQM.
    pub drops_queue: u64,
}

/// `summary.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub seed: u64,
    /// Simulated time: the scenario's duration, or where an interrupted run stopped.
    pub duration_s: f64,
    /// The run was stopped (Ctrl-C, SIGTERM) before its end: these are its results so far.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// An interrupted run's scenario duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned_duration_s: Option<f64>,
    pub warmup_s: f64,
    pub events: u64,
    pub data_packets_delivered: u64,
    pub queues: Vec<QueueSummary>,
    pub flows: Vec<FlowSummary>,
    pub pings: Vec<PingSummary>,
    /// Shared switch buffers (scenarios with `[buffers]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<BufferSummary>,
    /// Flow completion times of the workloads' flows (scenarios with `[[workloads]]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct: Option<FctReport>,
    /// Packet captures (`record.pcap`), when written to a results directory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<CaptureSummary>,
}

/// One packet capture's file and what it holds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CaptureSummary {
    /// The host or port captured, as `record.pcap` names it.
    pub name: String,
    pub file: String,
    pub packets: u64,
    /// Packets in the capture's time window past `record.pcap_max_packets`, not written.
    pub beyond_limit: u64,
}

/// Files a run writes while it goes on.
#[derive(Default)]
pub struct Streams {
    /// `fct.csv`: the workloads' flows as they finish.
    pub fct_csv: Option<FctFile>,
    /// The pcap files of `record.pcap`'s captures.
    pub pcap: Option<CaptureFiles>,
}

/// A finished run: the summary plus the records for CSVs and plots.
pub struct Outcome {
    pub summary: Summary,
    pub records: Records,
    pub built_names: Vec<String>,
    pub interval: SimTime,
    pub warmup: SimTime,
}

fn round6(x: f64) -> f64 {
    fmt_f64(x).parse().unwrap_or(0.0)
}

/// Run a built scenario to the end, reporting progress (simulated seconds) to `progress`.
pub fn run_built(b: Built, progress: impl FnMut(SimTime, SimTime)) -> Outcome {
    run_built_to(b, Streams::default(), None, progress).expect("no file to write")
}

/// As `run_built`, writing `streams` (`fct.csv`, packet captures) while the run goes on.
pub fn run_built_to(
    b: Built,
    streams: Streams,
    stop: Option<Arc<AtomicBool>>,
    mut progress: impl FnMut(SimTime, SimTime),
) -> std::io::Result<Outcome> {
    let planned = b.cfg.duration;
    let interval = b.cfg.sample_interval.unwrap_or(SimTime::from_ms(1));
    let warmup = b.warmup;
    let seed = b.cfg.seed;
    let names = b.monitor_names.clone();
    let files =
        if names.len() > MAX_PORT_FILES { vec![QUEUES_CSV.to_string(); names.len()] } else { queue_files(&names) };
    let collector = if b.workloads.is_empty() {
        None
    } else {
        let names = b.workloads.iter().map(|w| w.name.clone()).collect();
        Some(FctCollector::new(b.topo.names.clone(), names, streams.fct_csv)?)
    };
    let capture_specs = b.captures.specs.clone();
    let capture_files = b.captures.files.clone();
    let mut sim =
        Sim::with_routes(b.cfg, b.topo, b.routes, b.flows, b.pings).expect("routes were checked when building");
    for w in b.workloads {
        sim.add_traffic(w.traffic);
    }
    if let Some(c) = &collector {
        sim.set_flow_sink(c.sink());
    }
    if let Some(p) = &streams.pcap {
        sim.set_capture(capture_specs.clone(), p.sink());
    }
    if let Some(stop) = stop {
        sim.set_stop(stop);
    }
    sim.run_until(planned, |t| progress(t, planned));
    // An interrupted run is summarised up to where it stopped.
    let stopped = sim.stopped_at();
    let duration = stopped.unwrap_or(planned);
    let records = sim.into_records();
    let fct = collector.map(|c| c.finish(warmup)).transpose()?;
    let captures = match streams.pcap {
        Some(p) => {
            p.finish().map_err(std::io::Error::other)?;
            capture_specs
                .iter()
                .zip(capture_files)
                .zip(&records.captures)
                .map(|((s, file), n)| CaptureSummary {
                    name: s.name.clone(),
                    file,
                    packets: n.packets,
                    beyond_limit: n.beyond_limit,
                })
                .collect()
        }
        None => Vec::new(),
    };
    let mut queues = Vec::new();
    for (k, port) in records.ports.iter().enumerate() {
        let s = occupancy_histogram(&port.occupancy).summary();
        let classes: Vec<ClassSummary> = port
            .classes
            .iter()
            .map(|c| ClassSummary {
                name: c.name.clone(),
                enqueued: c.stats.enqueued,
                drops: c.stats.drops,
                marks: c.stats.marks,
            })
            .collect();
        let (tx_packets, link_drops) = (port.tx.tx_packets, port.tx.link_drops);
        queues.push(QueueSummary {
            port: names[k].clone(),
            csv: files[k].clone(),
            samples: s.samples,
            mean: round6(s.mean),
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            max: s.max,
            drops: classes.iter().map(|c| c.drops).sum::<u64>() + link_drops,
            marks: classes.iter().map(|c| c.marks).sum(),
            tx_packets,
            utilisation: round6(port.utilisation),
            classes,
        });
    }
    let topo = &records.topology;
    let flows = records
        .flows
        .iter()
        .map(|r| {
            let end = r.end.unwrap_or(duration).min(duration);
            let active = end.saturating_sub(r.start).secs_f64();
            let goodput = if active > 0.0 { r.bytes_acked as f64 * 8.0 / active / 1e6 } else { 0.0 };
            FlowSummary {
                name: r.name.clone(),
                kind: r.kind.label(),
                size_bytes: r.kind.size_bytes(),
                cc: r.cc.clone(),
                src: topo.name(r.src).to_string(),
                dst: topo.name(r.dst).to_string(),
                start_s: r.start.secs_f64(),
                goodput_mbps: round6(goodput),
                bytes_acked: r.bytes_acked,
                retransmits: r.retransmits,
                rto_count: r.rto_count,
                other_timeouts: r.other_timeouts,
                fast_recoveries: r.fast_recoveries,
                cwr_events: r.cwr_events,
                completion_s: r.completion.map(|t| t.secs_f64()),
                established_s: r.established.map(|t| t.secs_f64()),
                rpc: matches!(r.kind, FlowKind::Rpc { .. }).then(|| {
                    let ms: Vec<f64> = r.rpc_latencies.iter().map(|t| t.secs_f64() * 1e3).collect();
                    let s = summarize(&ms);
                    RpcSummary {
                        completed: ms.len() as u64,
                        mean_ms: round6(s.mean),
                        p50_ms: round6(s.p50),
                        p99_ms: round6(s.p99),
                    }
                }),
            }
        })
        .collect();
    let pings = records
        .pings
        .iter()
        .map(|p| {
            let ms: Vec<f64> = p.rtts.iter().map(|r| r * 1e3).collect();
            let s = summarize(&ms);
            PingSummary {
                name: p.name.clone(),
                sent: p.sent,
                received: ms.len() as u64,
                mean_ms: round6(s.mean),
                p50_ms: round6(s.p50),
                p99_ms: round6(s.p99),
                max_ms: round6(s.max),
                min_ms: round6(s.min),
                stddev_ms: round6(s.stddev),
            }
        })
        .collect();
    let skip = ccsim_net::first_sample_after(warmup, interval);
    let buffers = records
        .buffers
        .iter()
        .map(|b| {
            let mut h = IntHistogram::new();
            for &v in b.samples.iter().skip(skip) {
                h.record(v);
            }
            let s = h.summary();
            BufferSummary {
                switch: records.topology.name(b.switch).to_string(),
                size_bytes: b.spec.size_bytes,
                samples: s.samples,
                mean_bytes: round6(s.mean),
                p50_bytes: s.p50,
                p99_bytes: s.p99,
                max_bytes: s.max,
                drops_buffer_full: b.drops.full,
                drops_dynamic_threshold: b.drops.threshold,
                drops_queue: b.queue_drops,
            }
        })
        .collect();
    let rs = records.stats;
    let summary = Summary {
        seed,
        duration_s: duration.secs_f64(),
        interrupted: stopped.is_some(),
        planned_duration_s: stopped.map(|_| planned.secs_f64()),
        warmup_s: warmup.secs_f64(),
        events: rs.events,
        data_packets_delivered: rs.data_packets_delivered,
        queues,
        flows,
        pings,
        buffers,
        fct,
        captures,
    };
    Ok(Outcome { summary, records, built_names: names, interval, warmup })
}

/// The file a monitored port's queue series is written to (`queue_s_c.csv` for `s->c`), before
/// numbering (`queue_files`).
pub fn queue_csv_name(port: &str) -> String {
    format!("queue_{}.csv", file_name(port))
}

/// The queue series' files of the monitored ports, in order: `queue_csv_name`, with `_2`, `_3`
/// added to a name an earlier port already made (`a_b->c` and `a->b_c` both make `a_b_c`).
pub fn queue_files(ports: &[String]) -> Vec<String> {
    numbered_files(ports, "queue_", "csv")
}

/// Files `{prefix}{name}.{ext}` for `names` (ports, hosts), each name made a file name and
/// numbered `_2`, `_3` where an earlier one already made it: never two the same.
pub(crate) fn numbered_files(names: &[String], prefix: &str, ext: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::with_capacity(names.len());
    for p in names {
        let stem = format!("{prefix}{}", file_name(p));
        let mut name = format!("{stem}.{ext}");
        let mut n = 1;
        while files.contains(&name) {
            n += 1;
            name = format!("{stem}_{n}.{ext}");
        }
        files.push(name);
    }
    files
}

/// Run a built scenario into the results directory `dir`, as `ccsim run` does: the directory is
/// made first (workloads stream `fct.csv` into it as flows finish), an old `summary.json`
/// removed (a directory without one is an interrupted run), and the results written at the end.
pub fn run_to_dir(
    built: Built,
    resolved: &str,
    dir: &Path,
    stop: Option<Arc<AtomicBool>>,
    progress: impl FnMut(SimTime, SimTime),
) -> std::result::Result<Outcome, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let _ = std::fs::remove_file(dir.join("summary.json"));
    let fct_csv = if built.workloads.is_empty() {
        None
    } else {
        let f = dir.join("fct.csv");
        let file = std::fs::File::create(&f).map_err(|e| format!("{}: cannot create: {e}", f.display()))?;
        Some(FctFile { file, path: f })
    };
    let pcap = if built.captures.specs.is_empty() {
        None
    } else {
        let paths: Vec<_> = built.captures.files.iter().map(|f| dir.join(f)).collect();
        Some(CaptureFiles::create(&paths, crate::host_addresses(&built.topo), built.captures.snaplen)?)
    };
    let outcome = run_built_to(built, Streams { fct_csv, pcap }, stop, progress)
        .map_err(|e| format!("{}: cannot write results: {e}", dir.display()))?;
    write_results(&outcome, resolved, dir).map_err(|e| format!("{}: cannot write results: {e}", dir.display()))?;
    Ok(outcome)
}

fn file_name(port: &str) -> String {
    port.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '_' })
        .collect::<String>()
        .replace("__", "_")
}

/// Above this many monitored ports, their series go into one `queues.csv` (a `port` column) and
/// get no plot each: a 100,000-host star would otherwise write 200,000 files.
pub const MAX_PORT_FILES: usize = 256;
/// The one file of the monitored ports' series beyond `MAX_PORT_FILES`.
pub const QUEUES_CSV: &str = "queues.csv";
/// The most lines a plot draws (the first ones; the CSV has them all): 100,000 flows would make
/// a cwnd.svg of 160 MB that no browser opens.
pub const MAX_PLOT_LINES: usize = 64;

/// A port's occupancy samples as the report crate's histogram (exact percentiles and CDF).
pub fn occupancy_histogram(o: &Occupancy) -> IntHistogram {
    let mut h = IntHistogram::new();
    for (v, n) in o.counts() {
        h.record_n(v as u64, n);
    }
    h
}

/// A plot's title, saying when it draws only the first `MAX_PLOT_LINES` of `n` lines.
fn plot_title(title: &str, n: usize, what: &str, csv: &str) -> String {
    if n > MAX_PLOT_LINES {
        format!("{title} (the first {MAX_PLOT_LINES} of {n} {what}; all are in {csv})")
    } else {
        title.to_string()
    }
}

/// Write the results directory: `config.resolved.toml`, CSV series, SVG plots, and last of all
/// `summary.json` (a directory without it is an interrupted run).
pub fn write_results(out: &Outcome, resolved: &str, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let _ = std::fs::remove_file(dir.join("summary.json"));
    std::fs::write(dir.join("config.resolved.toml"), resolved)?;
    let rec = &out.records;
    let iv = out.interval.secs_f64();
    let mut cdf_series = Vec::new();
    let one_file = out.built_names.len() > MAX_PORT_FILES;
    let mut all_queues = if one_file && rec.ports.iter().any(|p| !p.series.is_empty()) {
        Some(CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join(QUEUES_CSV))?),
            &["t_s", "port", "packets", "bytes"],
        )?)
    } else {
        None
    };
    for (k, name) in out.built_names.iter().enumerate() {
        let csv = &out.summary.queues[k].csv;
        let port = &rec.ports[k];
        if let Some(w) = all_queues.as_mut() {
            for s in &port.series {
                w.write_row(&[
                    Cell::Nanos(s.t.ns()),
                    name.as_str().into(),
                    Cell::Num(s.packets as f64),
                    Cell::Num(s.bytes as f64),
                ])?;
            }
        } else if !port.series.is_empty() {
            let mut w = CsvWriter::new(
                std::io::BufWriter::new(std::fs::File::create(dir.join(csv))?),
                &["t_s", "packets", "bytes"],
            )?;
            for s in &port.series {
                w.write_row(&[Cell::Nanos(s.t.ns()), Cell::Num(s.packets as f64), Cell::Num(s.bytes as f64)])?;
            }
            w.flush()?;
            let pts: Vec<(f64, f64)> = port.series.iter().map(|s| (s.t.secs_f64(), s.packets as f64)).collect();
            let mut plot = Plot::new(format!("Queue occupancy at {name}"), "time (s)", "packets");
            plot.kind = PlotKind::Line;
            plot.series.push(Series::new(name.clone(), pts));
            std::fs::write(dir.join(csv.replace(".csv", ".svg")), plot.to_svg(900, 420))?;
        }
        if k < MAX_PLOT_LINES {
            cdf_series.push((name.clone(), occupancy_histogram(&port.occupancy).cdf()));
        }
    }
    if let Some(w) = all_queues.as_mut() {
        w.flush()?;
    }
    if !cdf_series.is_empty() {
        let title = plot_title("CDF of queue occupancy", out.built_names.len(), "ports", "summary.json");
        let plot = cdf_plot_of(&title, "packets", cdf_series);
        std::fs::write(dir.join("queue_cdf.svg"), plot.to_svg(700, 420))?;
    }
    if rec.flow_series.iter().any(|s| !s.is_empty()) {
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join("flows.csv"))?),
            &[
                "t_s",
                "flow",
                "cwnd",
                "goodput_mbps",
                "srtt_us",
                "ssthresh",
                "inflight",
                "pacing_rate_bps",
                "delivery_rate_bps",
                "alpha",
            ],
        )?;
        let names: Vec<String> = out.summary.flows.iter().map(|f| f.name.clone()).collect();
        let n = rec.flow_series.len();
        let mut cwnd_plot =
            Plot::new(plot_title("Congestion window", n, "flows", "flows.csv"), "time (s)", "cwnd (packets)");
        let mut tput_plot = Plot::new(plot_title("Goodput", n, "flows", "flows.csv"), "time (s)", "Mb/s");
        for (i, series) in rec.flow_series.iter().enumerate() {
            let mut prev = 0u64;
            let mut cw = Vec::with_capacity(series.len());
            let mut tp = Vec::with_capacity(series.len());
            for &FlowSample { t, sender: s, bytes_acked: acked } in series {
                let cwnd = s.cwnd;
                let rate = (acked - prev.min(acked)) as f64 * 8.0 / iv / 1e6;
                prev = acked;
                let ts = t.secs_f64();
                // ssthresh is "infinite" until the first reduction: an empty field, as ss omits it.
                let ssthresh = if s.ssthresh >= TCP_INFINITE_SSTHRESH { f64::NAN } else { s.ssthresh as f64 };
                // DCTCP's alpha as a fraction (its 1/1024 fixed point, exact); empty for other CCs.
                let alpha = match s.cc_info {
                    CcInfo::Dctcp { alpha, .. } => format!("{}", alpha as f64 / 1024.0),
                    _ => String::new(),
                };
                w.write_row(&[
                    Cell::Nanos(t.ns()),
                    names[i].as_str().into(),
                    (cwnd as f64).into(),
                    rate.into(),
                    (s.srtt_us as f64).into(),
                    ssthresh.into(),
                    (s.inflight as f64).into(),
                    Cell::Num(s.pacing_rate as f64 * 8.0),
                    Cell::Num(s.delivery_rate as f64 * 8.0),
                    alpha.as_str().into(),
                ])?;
                cw.push((ts, cwnd as f64));
                tp.push((ts, rate));
            }
            if i < MAX_PLOT_LINES {
                cwnd_plot.series.push(Series::new(names[i].clone(), cw));
                tput_plot.series.push(Series::new(names[i].clone(), tp));
            }
        }
        w.flush()?;
        std::fs::write(dir.join("cwnd.svg"), cwnd_plot.to_svg(900, 420))?;
        std::fs::write(dir.join("goodput.svg"), tput_plot.to_svg(900, 420))?;
    }
    let pings = &rec.pings;
    if !pings.is_empty() {
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join("pings.csv"))?),
            &["probe", "seq", "sent_s", "rtt_ms"],
        )?;
        for p in pings {
            for r in &p.replies {
                w.write_row(&[
                    p.name.as_str().into(),
                    Cell::Num(r.seq as f64),
                    Cell::Nanos(r.sent.ns()),
                    Cell::NanosAsMillis(r.rtt.ns()),
                ])?;
            }
        }
        w.flush()?;
    }
    for b in &rec.buffers {
        if b.series.is_empty() {
            continue;
        }
        let name = rec.topology.name(b.switch).to_string();
        let fname = file_name(&name);
        // Each alpha's threshold: alpha times the free shared bytes (beyond a queue's reserve).
        let mut alphas: Vec<(String, f64)> = vec![("default".to_string(), b.spec.alpha)];
        alphas.extend(b.spec.class_alpha.iter().cloned());
        let mut header = vec!["t_s".to_string(), "used_bytes".to_string(), "free_bytes".to_string()];
        header.extend(alphas.iter().map(|(n, _)| format!("threshold_{n}_bytes")));
        let cols: Vec<&str> = header.iter().map(|h| h.as_str()).collect();
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join(format!("buffer_{fname}.csv")))?),
            &cols,
        )?;
        let mut plot = Plot::new(format!("Shared buffer of {name}"), "time (s)", "bytes");
        plot.kind = PlotKind::Step;
        let mut used = Vec::new();
        let mut thr: Vec<Vec<(f64, f64)>> = vec![Vec::new(); alphas.len()];
        for s in &b.series {
            let t = s.t.secs_f64();
            let mut row = vec![Cell::Nanos(s.t.ns()), Cell::Num(s.used_bytes as f64), Cell::Num(s.free_bytes as f64)];
            for (k, (_, a)) in alphas.iter().enumerate() {
                let v = a * s.free_bytes as f64;
                row.push(Cell::Num(v));
                thr[k].push((t, v));
            }
            w.write_row(&row)?;
            used.push((t, s.used_bytes as f64));
        }
        w.flush()?;
        plot.series.push(Series::new("in use", used));
        for ((n, a), pts) in alphas.iter().zip(thr) {
            plot.series.push(Series::new(format!("threshold {n} (alpha {a})"), pts));
        }
        std::fs::write(dir.join(format!("buffer_{fname}.svg")), plot.to_svg(900, 420))?;
    }
    if let Some(fct) = &out.summary.fct {
        let mut plot = Plot::new("FCT slowdown by flow size", "flow size (log10 bytes)", "slowdown");
        for w in &fct.workloads {
            for (label, pick) in [("p50", 0), ("p99", 1)] {
                let pts: Vec<(f64, f64)> = w
                    .equal_count_bins
                    .iter()
                    .filter(|b| b.max_size_bytes > 0)
                    .map(|b| ((b.max_size_bytes as f64).log10(), if pick == 0 { b.p50 } else { b.p99 }))
                    .collect();
                plot.series.push(Series::new(format!("{} {label}", w.name), pts));
            }
        }
        std::fs::write(dir.join("fct_slowdown.svg"), plot.to_svg(900, 420))?;
    }
    // Written whole under another name and renamed into place: a summary.json is never partial.
    let json = serde_json::to_string_pretty(&out.summary).map_err(std::io::Error::other)?;
    let tmp = dir.join(".summary.json.partial");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(json.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, dir.join("summary.json"))?;
    Ok(())
}
