//! `ccsim reproduce`: the catalog of seed experiments. Each entry runs its scenarios, sets
//! ccsim's figures beside the seed's, and gives an honest verdict per metric.

use crate::{take_flag, take_opt};
use ccsim_report::{cdf_plot, Plot, PlotKind, Series};
use ccsim_scenario::{self as scenario, Outcome, Quantity, Scenario};
use serde::Serialize;
use std::path::PathBuf;

/// One scorecard row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub experiment: String,
    pub metric: String,
    pub seed: String,
    pub ccsim: String,
    /// "reproduced", "shape" or "not reproduced".
    pub verdict: String,
    pub note: String,
}

struct Experiment {
    name: &'static str,
    title: &'static str,
    source: &'static str,
    /// (label, scenario TOML).
    scenarios: &'static [(&'static str, &'static str)],
    quick: (&'static str, &'static str),
    score: fn(&str, &[Outcome]) -> Vec<Row>,
    plots: fn(&[Outcome]) -> Vec<(String, String)>,
}

const CATALOG: &[Experiment] = &[Experiment {
    name: "mininet-queue",
    title: "DCTCP keeps the queue small at full throughput (Mininet-HiFi reproduction)",
    source: "mininet-hifi-dctcp-reproduction.txt; analysis: Alizadeh et al., SIGCOMM 2010 §3.3",
    scenarios: &[
        ("TCP (CUBIC, drop-tail 425)", include_str!("../../../scenarios/mininet-tcp.toml")),
        ("DCTCP (K = 20)", include_str!("../../../scenarios/mininet-dctcp.toml")),
    ],
    quick: ("3s", "0.5s"),
    score: score_mininet,
    plots: plots_mininet,
}];

fn row(exp: &str, metric: &str, seed: &str, ccsim: String, ok: bool, kind: &str, note: &str) -> Row {
    Row {
        experiment: exp.into(),
        metric: metric.into(),
        seed: seed.into(),
        ccsim,
        verdict: if ok { kind.into() } else { "not reproduced".into() },
        note: note.into(),
    }
}

fn score_mininet(exp: &str, o: &[Outcome]) -> Vec<Row> {
    let (tcp, dctcp) = (&o[0].summary.queues[0], &o[1].summary.queues[0]);
    vec![
        row(
            exp,
            "DCTCP queue p50 (packets)",
            "17–22 (analysis, K + N = 22 at the top); Mininet within 2 pkts of hardware",
            format!("{}", dctcp.p50),
            (12.0..=25.0).contains(&dctcp.p50),
            "reproduced",
            "tolerance: 12–25 packets",
        ),
        row(
            exp,
            "DCTCP queue p99 (packets)",
            "oscillation amplitude ≈ 5 pkts around K",
            format!("{}", dctcp.p99),
            dctcp.p99 <= 35.0,
            "shape",
            "claim checked: p99 ≤ 35",
        ),
        row(
            exp,
            "DCTCP bottleneck utilisation",
            "full throughput",
            format!("{:.1}%", 100.0 * dctcp.utilisation),
            dctcp.utilisation >= 0.95,
            "shape",
            "claim checked: ≥ 95 %",
        ),
        row(
            exp,
            "TCP queue p50 (packets)",
            "queue sits near the 425-packet buffer",
            format!("{}", tcp.p50),
            tcp.p50 >= 150.0,
            "shape",
            "claim checked: p50 ≥ 150",
        ),
        row(
            exp,
            "TCP bottleneck utilisation",
            "full throughput",
            format!("{:.1}%", 100.0 * tcp.utilisation),
            tcp.utilisation >= 0.95,
            "shape",
            "claim checked: ≥ 95 %",
        ),
    ]
}

fn queue_points(o: &Outcome) -> Vec<(f64, f64)> {
    o.sim.queue_series[0].iter().map(|s| (s.t.secs_f64(), s.packets as f64)).collect()
}

fn plots_mininet(o: &[Outcome]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, label) in ["TCP", "DCTCP"].iter().enumerate() {
        let mut p = Plot::new(format!("{label}: instantaneous queue occupancy (s->c)"), "time (s)", "packets");
        p.kind = PlotKind::Line;
        p.series.push(Series::new(*label, queue_points(&o[i])));
        if i == 1 {
            p.hlines.push((20.0, "K = 20".into()));
        }
        out.push((format!("{label} queue over time"), p.to_svg(900, 380)));
    }
    let skip = |o: &Outcome| (o.warmup.ns() / o.interval.ns().max(1)) as usize;
    let cdf = cdf_plot(
        "CDF of instantaneous queue occupancy",
        "packets",
        (0..2)
            .map(|i| {
                (
                    ["TCP", "DCTCP"][i].to_string(),
                    o[i].sim.queue_samples[0].iter().skip(skip(&o[i])).map(|&v| v as f64).collect(),
                )
            })
            .collect(),
    );
    out.push(("Queue CDF".into(), cdf.to_svg(700, 400)));
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let mut args = args.to_vec();
    let quick = take_flag(&mut args, "--quick");
    let json = take_flag(&mut args, "--json");
    let list = take_flag(&mut args, "--list");
    let out = PathBuf::from(take_opt(&mut args, "--out")?.unwrap_or_else(|| "results/reproduce".into()));
    if list {
        for e in CATALOG {
            println!("{:<16} {}", e.name, e.title);
        }
        return Ok(());
    }
    if let Some(a) = args.iter().find(|a| a.starts_with('-')) {
        return Err(format!("unknown option `{a}` for reproduce"));
    }
    let selected: Vec<&Experiment> = if args.is_empty() {
        CATALOG.iter().collect()
    } else {
        args.iter()
            .map(|n| {
                CATALOG.iter().find(|e| e.name == n).ok_or_else(|| {
                    format!(
                        "unknown experiment `{n}`; known: {}",
                        CATALOG.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    let mut rows = Vec::new();
    let mut sections = String::new();
    for e in selected {
        eprintln!("reproduce {}: {}", e.name, e.title);
        let mut outcomes = Vec::new();
        for (label, text) in e.scenarios {
            let mut s: Scenario = scenario::parse(text, &format!("catalog:{}", e.name)).map_err(|x| x.to_string())?;
            if quick {
                s.run.duration = Quantity::from(e.quick.0);
                s.record.warmup = Quantity::from(e.quick.1);
            }
            let built = scenario::build(&s).map_err(|x| x.in_file(&format!("catalog:{}", e.name)).to_string())?;
            let t0 = std::time::Instant::now();
            let o = scenario::run_built(built, |_, _| {});
            eprintln!("  {label}: {:.1} s simulated in {:.1} s", o.summary.duration_s, t0.elapsed().as_secs_f64());
            let dir = out.join(e.name).join(label.split_whitespace().next().unwrap_or("run").to_lowercase());
            scenario::write_results(&o, &scenario::resolved_toml(&s), &dir)
                .map_err(|x| format!("{}: {x}", dir.display()))?;
            outcomes.push(o);
        }
        let r = (e.score)(e.name, &outcomes);
        sections.push_str(&format!(
            "<h2>{}</h2>\n<p>{} — source: {}</p>\n",
            html_escape(e.name),
            html_escape(e.title),
            html_escape(e.source)
        ));
        for (title, svg) in (e.plots)(&outcomes) {
            sections.push_str(&format!("<figure>{svg}<figcaption>{}</figcaption></figure>\n", html_escape(&title)));
        }
        rows.extend(r);
    }
    std::fs::create_dir_all(&out).map_err(|x| format!("{}: {x}", out.display()))?;
    let mut table = String::from(
        "<table><tr><th>experiment</th><th>metric</th><th>seed</th><th>ccsim</th><th>verdict</th><th>note</th></tr>\n",
    );
    for r in &rows {
        table.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            r.verdict.replace(' ', "-"),
            html_escape(&r.experiment),
            html_escape(&r.metric),
            html_escape(&r.seed),
            html_escape(&r.ccsim),
            html_escape(&r.verdict),
            html_escape(&r.note)
        ));
    }
    table.push_str("</table>\n");
    let mode =
        if quick { "<p><b>Quick mode:</b> shortened runs (for tests and CI); figures are indicative.</p>" } else { "" };
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>ccsim reproduce</title><style>body{{font-family:sans-serif;max-width:1000px;margin:auto}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px}}tr.not-reproduced td{{background:#fdd}}figure{{margin:1em 0}}</style></head><body><h1>ccsim reproduce: scorecard</h1>{mode}{table}{sections}</body></html>\n"
    );
    std::fs::write(out.join("report.html"), html).map_err(|x| format!("{}: {x}", out.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
    } else {
        println!("{:<14} {:<32} {:>10}  {:<15} seed", "experiment", "metric", "ccsim", "verdict");
        for r in &rows {
            println!("{:<14} {:<32} {:>10}  {:<15} {}", r.experiment, r.metric, r.ccsim, r.verdict, r.seed);
        }
        eprintln!("report: {}", out.join("report.html").display());
    }
    Ok(())
}
