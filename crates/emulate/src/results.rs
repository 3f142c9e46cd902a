//! An emulated run's results, in the layout of `ccsim run`: `summary.json` (same schema),
//! `queue_<port>.csv`, `flows.csv`, `pings.csv`, plots; plus what only the kernel run has:
//! `emulation.json` (kernel, notes, BPF counters, the dequeue-timing check) and `commands.sh`.

use crate::plan::FlowKindPlan;
use crate::run::RawResults;
use ccsim_report::{cdf_plot, fmt_f64, summarize, CsvWriter, IntHistogram, Plot, PlotKind, Series};
use ccsim_scenario::{FlowSummary, PingSummary, QueueSummary, RpcSummary, Summary};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

fn round6(x: f64) -> f64 {
    fmt_f64(x).parse().unwrap_or(0.0)
}

/// The Mininet-HiFi fidelity check: how far inter-dequeue times at the bottleneck stray from
/// one full-size packet at the link rate.
#[derive(Clone, Debug, Serialize)]
pub struct DequeueCheck {
    pub port: String,
    pub rate_mbps: f64,
    pub frame_bytes: u32,
    pub ideal_us: f64,
    /// Gaps between back-to-back full-size departures (longer than 10 ideal gaps count as the
    /// queue running empty and are left out).
    pub samples: u64,
    pub idle_gaps: u64,
    pub capture_drops: u32,
    /// Percentiles of |gap - ideal| / ideal, in percent.
    pub deviation_p50_pct: f64,
    pub deviation_p90_pct: f64,
    pub deviation_p99_pct: f64,
    pub within_10pct: f64,
    pub within_25pct: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EmulationInfo {
    pub kernel: String,
    pub interrupted: bool,
    pub notes: Vec<String>,
    pub dequeue: Option<DequeueCheck>,
    /// `tcp_probe` events recorded (tcp_probe.csv) and lost to a full trace buffer.
    pub tcp_probe_events: u64,
    pub tcp_probe_overruns: u64,
    pub bpf: Option<crate::bpf::BpfCounters>,
    /// Per flow: the kernel congestion control on each end, and tcp_info at the end.
    pub flows: Vec<serde_json::Value>,
}

/// The deviation percentages of the gaps, sorted, and the count of idle gaps left out.
pub fn deviations(gaps: &[u32], ideal_ns: f64) -> (Vec<f64>, u64) {
    let mut idle = 0;
    let mut dev: Vec<f64> = gaps
        .iter()
        .filter_map(|&g| {
            if g as f64 > 10.0 * ideal_ns {
                idle += 1;
                None
            } else {
                Some(((g as f64 - ideal_ns).abs() / ideal_ns) * 100.0)
            }
        })
        .collect();
    dev.sort_by(|a, b| a.total_cmp(b));
    (dev, idle)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Summarise and write the results directory; `summary.json` last.
pub fn write(r: &RawResults, resolved: &str, dir: &Path) -> std::io::Result<Summary> {
    std::fs::create_dir_all(dir)?;
    let _ = std::fs::remove_file(dir.join("summary.json"));
    std::fs::write(dir.join("config.resolved.toml"), resolved)?;
    let plan = &r.plan;
    let dur = plan.duration_ns as f64 / 1e9;
    let warm = plan.warmup_ns as i64;
    let mut commands = String::from(
        "#!/bin/sh\n# What `ccsim emulate` ran to build the network (it deletes the namespaces afterwards).\n",
    );
    for c in &r.commands {
        commands.push_str(c);
        commands.push('\n');
    }
    std::fs::write(dir.join("commands.sh"), commands)?;
    if !r.ss.is_empty() {
        let mut ss = String::new();
        for (t, node, ns, text) in &r.ss {
            ss.push_str(&format!("# t={:.3} s  host {node}  (ip netns exec {ns} ss -tin)\n", *t as f64 / 1e9));
            ss.push_str(text);
            if !text.ends_with('\n') {
                ss.push('\n');
            }
        }
        std::fs::write(dir.join("ss.txt"), ss)?;
    }

    // Queues.
    let mut queues = Vec::new();
    let mut cdf_series = Vec::new();
    let names: Vec<String> = r.queue_series.iter().map(|(n, _)| n.clone()).collect();
    let files = ccsim_scenario::queue_files(&names);
    for (k, (name, series)) in r.queue_series.iter().enumerate() {
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join(&files[k]))?),
            &["t_s", "packets", "bytes"],
        )?;
        let mut h = IntHistogram::new();
        let mut pts = Vec::with_capacity(series.len());
        for &(t, q, b) in series {
            let ts = t as f64 / 1e9;
            w.write_nums(&[ts, q as f64, b as f64])?;
            pts.push((ts, q as f64));
            if t >= warm {
                h.record(q as u64);
            }
        }
        w.flush()?;
        let mut plot = Plot::new(format!("Queue occupancy at {name} (kernel)"), "time (s)", "packets");
        plot.kind = PlotKind::Line;
        plot.series.push(Series::new(name.clone(), pts));
        std::fs::write(dir.join(files[k].replace(".csv", ".svg")), plot.to_svg(900, 420))?;
        cdf_series.push((name.clone(), series.iter().filter(|s| s.0 >= warm).map(|s| s.1 as f64).collect()));
        let s = h.summary();
        let port = plan.ports().find(|p| p.monitor.as_deref() == Some(name.as_str())).expect("watched port");
        let c = &r.port_counters[k].1;
        let marker =
            r.bpf.as_ref().and_then(|b| b.markers.iter().find(|m| m.dev == port.dev)).cloned().unwrap_or_default();
        queues.push(QueueSummary {
            port: name.clone(),
            csv: files[k].clone(),
            samples: s.samples,
            mean: round6(s.mean),
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            max: s.max,
            drops: c.drops + marker.drops_non_ect,
            marks: marker.marks,
            tx_packets: c.packets,
            utilisation: round6(c.bytes as f64 * 8.0 / (port.rate_bps as f64 * dur)),
            classes: Vec::new(),
        });
    }
    if !cdf_series.is_empty() {
        let plot = cdf_plot("CDF of queue occupancy (kernel)", "packets", cdf_series);
        std::fs::write(dir.join("queue_cdf.svg"), plot.to_svg(700, 420))?;
    }

    // Flows.
    let mut flows = Vec::new();
    let mut flow_info = Vec::new();
    for (i, f) in plan.flows.iter().enumerate() {
        let res = &r.flows[i];
        let info = res.info.clone().unwrap_or_default();
        let end = res.end_ns.map(|t| t as f64 / 1e9).unwrap_or(dur).min(dur);
        let active = end - f.start_ns as f64 / 1e9;
        let goodput = if active > 0.0 { info.bytes_acked as f64 * 8.0 / active / 1e6 } else { 0.0 };
        flows.push(FlowSummary {
            name: f.name.clone(),
            kind: f.scenario_kind.label(),
            size_bytes: f.scenario_kind.size_bytes(),
            cc: f.cc_label.clone(),
            src: plan.nodes[f.src].name.clone(),
            dst: plan.nodes[f.dst].name.clone(),
            start_s: f.start_ns as f64 / 1e9,
            goodput_mbps: round6(goodput),
            bytes_acked: info.bytes_acked,
            retransmits: info.total_retrans as u64,
            rto_count: info.total_rto as u64,
            // tcp_info counts none of these; emulation.json says so.
            other_timeouts: 0,
            fast_recoveries: 0,
            cwr_events: 0,
            completion_s: res.completion_ns.map(|t| round6(t as f64 / 1e9)),
            established_s: res.established_ns.map(|t| round6(t as f64 / 1e9)),
            rpc: matches!(f.kind, FlowKindPlan::Rpc { .. }).then(|| {
                let ms: Vec<f64> = res.rpc_latencies_ns.iter().map(|&t| t as f64 / 1e6).collect();
                let st = summarize(&ms);
                RpcSummary {
                    completed: ms.len() as u64,
                    mean_ms: round6(st.mean),
                    p50_ms: round6(st.p50),
                    p99_ms: round6(st.p99),
                }
            }),
        });
        flow_info.push(serde_json::json!({
            "name": f.name,
            "client_cc": f.client_cc,
            "server_cc": f.server_cc,
            "bytes_received": r.received.get(i).copied().unwrap_or(0),
            "tcp_info": info,
        }));
    }
    if r.flow_series.iter().any(|s| !s.is_empty()) {
        let iv = plan.interval_ns as f64 / 1e9;
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join("flows.csv"))?),
            &["t_s", "flow", "cwnd", "goodput_mbps", "srtt_us", "ssthresh"],
        )?;
        let mut cwnd_plot = Plot::new("Congestion window (kernel)", "time (s)", "cwnd (packets)");
        for (i, series) in r.flow_series.iter().enumerate() {
            let name = &plan.flows[i].name;
            let mut prev = 0u64;
            let mut cw = Vec::with_capacity(series.len());
            for &(t, cwnd, acked, srtt, ssth) in series {
                let rate = acked.saturating_sub(prev) as f64 * 8.0 / iv / 1e6;
                prev = acked;
                let ts = t as f64 / 1e9;
                w.write_row(&[
                    ts.into(),
                    name.as_str().into(),
                    (cwnd as f64).into(),
                    rate.into(),
                    (srtt as f64).into(),
                    (ssth as f64).into(),
                ])?;
                cw.push((ts, cwnd as f64));
            }
            cwnd_plot.series.push(Series::new(name.clone(), cw));
        }
        w.flush()?;
        std::fs::write(dir.join("cwnd.svg"), cwnd_plot.to_svg(900, 420))?;
    }

    // Per-ACK congestion state.
    if !r.probes.is_empty() {
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join("tcp_probe.csv"))?),
            &["t_s", "flow", "cwnd", "ssthresh", "srtt_us", "snd_una"],
        )?;
        for (i, t, p) in &r.probes {
            let Some(f) = plan.flows.get(*i) else { continue };
            w.write_row(&[
                (*t as f64 / 1e9).into(),
                f.name.as_str().into(),
                (p.snd_cwnd as f64).into(),
                (p.ssthresh as f64).into(),
                (p.srtt_us as f64).into(),
                (p.snd_una as f64).into(),
            ])?;
        }
        w.flush()?;
    }

    // Pings.
    let mut pings = Vec::new();
    if !plan.pings.is_empty() {
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join("pings.csv"))?),
            &["probe", "seq", "rtt_ms"],
        )?;
        for (p, (sent, rtts)) in plan.pings.iter().zip(&r.pings) {
            let ms: Vec<f64> = rtts.iter().map(|x| x * 1e3).collect();
            for (i, v) in ms.iter().enumerate() {
                w.write_row(&[p.name.as_str().into(), ((i + 1) as f64).into(), (*v).into()])?;
            }
            let s = summarize(&ms);
            pings.push(PingSummary {
                name: p.name.clone(),
                sent: *sent,
                received: ms.len() as u64,
                mean_ms: round6(s.mean),
                p50_ms: round6(s.p50),
                p99_ms: round6(s.p99),
                max_ms: round6(s.max),
                min_ms: round6(s.min),
                stddev_ms: round6(s.stddev),
            });
        }
        w.flush()?;
    }

    // The dequeue-timing check.
    let dequeue = r.dequeue_port.as_ref().filter(|_| !r.dequeue_gaps.is_empty()).map(|name| {
        let port = plan.ports().find(|p| p.monitor.as_deref() == Some(name.as_str())).expect("watched port");
        // HTB is told (by the size table) that a frame costs its IP length on the wire.
        let wire = r.dequeue_frame_len.saturating_sub(14).max(1);
        let ideal = wire as f64 * 8.0 / port.rate_bps as f64 * 1e9;
        let (dev, idle) = deviations(&r.dequeue_gaps, ideal);
        let within = |x: f64| {
            if dev.is_empty() {
                0.0
            } else {
                dev.iter().filter(|&&d| d <= x).count() as f64 / dev.len() as f64
            }
        };
        DequeueCheck {
            port: name.clone(),
            rate_mbps: port.rate_bps as f64 / 1e6,
            frame_bytes: r.dequeue_frame_len,
            ideal_us: round6(ideal / 1e3),
            samples: dev.len() as u64,
            idle_gaps: idle,
            capture_drops: r.capture_drops,
            deviation_p50_pct: round6(pct(&dev, 50.0)),
            deviation_p90_pct: round6(pct(&dev, 90.0)),
            deviation_p99_pct: round6(pct(&dev, 99.0)),
            within_10pct: round6(within(10.0)),
            within_25pct: round6(within(25.0)),
        }
    });
    if let (Some(d), Some(_)) = (&dequeue, &r.dequeue_port) {
        let (dev, _) = deviations(&r.dequeue_gaps, d.ideal_us * 1e3);
        let mut w = CsvWriter::new(
            std::io::BufWriter::new(std::fs::File::create(dir.join("dequeue_ccdf.csv"))?),
            &["deviation_pct", "fraction_above"],
        )?;
        let n = dev.len() as f64;
        let mut pts = Vec::new();
        let step = (dev.len() / 2000).max(1);
        for (i, &x) in dev.iter().enumerate().step_by(step) {
            let frac = 1.0 - i as f64 / n;
            w.write_nums(&[x, frac])?;
            pts.push((x, frac));
        }
        w.flush()?;
        let mut plot = Plot::new(
            format!("Inter-dequeue time deviation at {} ({} Mb/s, ideal {} us)", d.port, d.rate_mbps, d.ideal_us),
            "deviation from ideal (%)",
            "fraction of gaps above",
        );
        plot.kind = PlotKind::Line;
        plot.series.push(Series::new("kernel (veth + HTB)", pts));
        std::fs::write(dir.join("dequeue_ccdf.svg"), plot.to_svg(700, 420))?;
    }

    let mut notes = plan.notes.clone();
    notes.push("fast_recoveries, cwr_events and other_timeouts are not in tcp_info and read 0; retransmits and rto_count are tcpi_total_retrans and tcpi_total_rto".into());
    let info = EmulationInfo {
        kernel: r.kernel.clone(),
        interrupted: r.interrupted,
        notes,
        dequeue,
        tcp_probe_events: r.probes.len() as u64,
        tcp_probe_overruns: r.probe_overruns,
        bpf: r.bpf.clone(),
        flows: flow_info,
    };
    std::fs::write(
        dir.join("emulation.json"),
        serde_json::to_string_pretty(&info).map_err(std::io::Error::other)? + "\n",
    )?;

    let summary = Summary {
        seed: plan.seed,
        duration_s: dur,
        // An interrupted emulation writes no summary.
        interrupted: false,
        planned_duration_s: None,
        warmup_s: plan.warmup_ns as f64 / 1e9,
        events: 0,
        data_packets_delivered: r.flows.iter().filter_map(|f| f.info.as_ref()).map(|i| i.delivered as u64).sum(),
        queues,
        flows,
        pings,
        buffers: Vec::new(),
        fct: None,
        captures: Vec::new(),
    };
    if !r.interrupted {
        let json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
        let mut f = std::fs::File::create(dir.join("summary.json"))?;
        f.write_all(json.as_bytes())?;
        f.write_all(b"\n")?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    #[test]
    fn deviations_leave_idle_gaps_out() {
        let ideal = 120_000.0;
        let (d, idle) = super::deviations(&[120_000, 132_000, 108_000, 2_000_000], ideal);
        assert_eq!(idle, 1);
        assert_eq!(d.len(), 3);
        assert!((d[0] - 0.0).abs() < 1e-9 && (d[2] - 10.0).abs() < 1e-9);
    }
}
