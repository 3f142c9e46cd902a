//! Mininet-HiFi's DCTCP queue experiment: A and B send to C through one 100 Mb/s switch port
//! with ECN marking at K = 20 packets (DCTCP) or a 425-packet drop-tail queue (TCP).

use super::{figure, Ctx, ExpOutput, Row};
use ccsim_report::{cdf_plot_of, Plot, PlotKind, Series};
use ccsim_scenario::{occupancy_histogram, Outcome, Quantity};

pub const NAME: &str = "mininet-queue";
pub const SETUP: &str = "100 Mb/s links, one-way delay 62 us per link (base RTT about 0.5 ms), 1500-byte packets, \
    step marking at 20 packets on enqueue (the Mininet RED setup marks at a fixed threshold), 425-packet buffer, \
    TCP case = CUBIC without ECN; 20 s, first second excluded from queue statistics.";

const TCP: &str = include_str!("../../../../scenarios/mininet-tcp.toml");
const DCTCP: &str = include_str!("../../../../scenarios/mininet-dctcp.toml");

fn shorten(toml: &str, quick: bool) -> String {
    if !quick {
        return toml.to_string();
    }
    let mut s: ccsim_scenario::Scenario = ccsim_scenario::parse(toml, "catalog").expect("catalog scenario parses");
    s.run.duration = Quantity::from("3s");
    s.record.warmup = Quantity::from("0.5s");
    ccsim_scenario::resolved_toml(&s)
}

fn queue_points(o: &Outcome) -> Vec<(f64, f64)> {
    o.records.ports[0].series.iter().map(|s| (s.t.secs_f64(), s.packets as f64)).collect()
}

pub fn run(ctx: &Ctx) -> Result<ExpOutput, String> {
    let tcp = ctx.run(NAME, "tcp", &shorten(TCP, ctx.quick))?;
    let dctcp = ctx.run(NAME, "dctcp", &shorten(DCTCP, ctx.quick))?;
    let (qt, qd) = (&tcp.summary.queues[0], &dctcp.summary.queues[0]);
    let rows = vec![
        Row::new(
            NAME,
            "DCTCP queue p50 (packets)",
            "17–22 (analysis: K + N = 22 at the top); Mininet within 2 pkts of hardware",
            format!("{}", qd.p50),
            (12.0..=25.0).contains(&qd.p50),
            "reproduced",
            "tolerance: 12–25 packets",
        ),
        Row::new(
            NAME,
            "DCTCP queue p99 (packets)",
            "oscillation of about 5 pkts around K",
            format!("{}", qd.p99),
            qd.p99 <= 35.0,
            "shape",
            "claim checked: p99 ≤ 35",
        ),
        Row::new(
            NAME,
            "DCTCP bottleneck utilisation",
            "full throughput",
            format!("{:.1}%", 100.0 * qd.utilisation),
            qd.utilisation >= 0.95,
            "shape",
            "claim checked: ≥ 95 %",
        ),
        Row::new(
            NAME,
            "TCP queue p50 (packets)",
            "the queue sits near the 425-packet buffer",
            format!("{}", qt.p50),
            qt.p50 >= 150.0,
            "shape",
            "claim checked: p50 ≥ 150",
        ),
        Row::new(
            NAME,
            "TCP bottleneck utilisation",
            "full throughput",
            format!("{:.1}%", 100.0 * qt.utilisation),
            qt.utilisation >= 0.95,
            "shape",
            "claim checked: ≥ 95 %",
        ),
    ];
    let mut html = String::new();
    for (label, o) in [("TCP", &tcp), ("DCTCP", &dctcp)] {
        let mut p = Plot::new(format!("{label}: instantaneous queue occupancy (s->c)"), "time (s)", "packets");
        p.kind = PlotKind::Line;
        p.series.push(Series::new(label, queue_points(o)));
        if label == "DCTCP" {
            p.hlines.push((20.0, "K = 20".into()));
        }
        html.push_str(&figure(&format!("{label} queue over time"), p.to_svg(900, 360)));
    }

    let series = [("TCP", &tcp), ("DCTCP", &dctcp)]
        .iter()
        .map(|(l, o)| (l.to_string(), occupancy_histogram(&o.records.ports[0].occupancy).cdf()))
        .collect();
    html.push_str(&figure(
        "CDF of instantaneous queue occupancy",
        cdf_plot_of("CDF of queue occupancy (s->c)", "packets", series).to_svg(700, 380),
    ));
    Ok(ExpOutput { rows, html })
}
