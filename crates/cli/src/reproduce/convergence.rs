//! Convergence test of the Linux DCTCP merge commit (e3118e8359): flow 1 sends alone at
//! 10 Gb/s; one second later flow 2 starts from a distinct server to the same receiver, sends
//! for 10 s and stops; flow 1 sends one more second. Per-flow rate every 0.5 s.

use super::{figure, html_table, Ctx, ExpOutput, Row};
use ccsim_net::FlowSample;
use ccsim_report::{Plot, PlotKind, Series};
use ccsim_scenario::Outcome;

pub const NAME: &str = "linux-convergence";
pub const SETUP: &str = "3 hosts on one switch, 10 Gb/s, one-way delay 5 us per link, MTU 9000 with 38 bytes of \
    framing (a single flow's 9.93 Gb/s goodput needs jumbo frames), the incast test's switch port (DCTCP class \
    DSCP 1 marking above 75 KB, 5 MB per class); rates are goodput over consecutive 0.5 s intervals, labelled by \
    the interval's start as iperf reports them. Quick mode: flow 2 runs 0.5–2.5 s, flow 1 0–3 s.";

/// The seed's tables: (time, flow 1, flow 2) in Gb/s.
const SEED_CUBIC: [(f64, f64, f64); 24] = [
    (0.0, 9.93, 0.0),
    (0.5, 9.87, 0.0),
    (1.0, 8.73, 2.25),
    (1.5, 7.29, 2.8),
    (2.0, 6.96, 3.1),
    (2.5, 6.67, 3.34),
    (3.0, 6.39, 3.57),
    (3.5, 6.24, 3.75),
    (4.0, 6.0, 3.94),
    (4.5, 5.88, 4.09),
    (5.0, 5.27, 4.98),
    (5.5, 4.93, 5.04),
    (6.0, 4.9, 4.99),
    (6.5, 4.93, 5.1),
    (7.0, 4.28, 5.8),
    (7.5, 4.62, 4.91),
    (8.0, 5.05, 4.45),
    (8.5, 5.93, 4.09),
    (9.0, 5.73, 4.2),
    (9.5, 5.62, 4.32),
    (10.0, 6.12, 3.2),
    (10.5, 6.91, 3.11),
    (11.0, 8.48, 0.0),
    (11.5, 9.87, 0.0),
];
const SEED_DCTCP: [(f64, f64, f64); 24] = [
    (0.0, 9.92, 0.0),
    (0.5, 9.86, 0.0),
    (1.0, 6.46, 4.88),
    (1.5, 4.9, 4.99),
    (2.0, 4.92, 4.94),
    (2.5, 4.93, 5.0),
    (3.0, 4.92, 4.99),
    (3.5, 4.94, 4.74),
    (4.0, 5.34, 4.71),
    (4.5, 4.99, 4.97),
    (5.0, 4.83, 5.01),
    (5.5, 4.89, 4.99),
    (6.0, 4.92, 5.04),
    (6.5, 4.91, 4.97),
    (7.0, 4.97, 4.97),
    (7.5, 4.99, 4.82),
    (8.0, 5.16, 4.76),
    (8.5, 4.94, 4.98),
    (9.0, 4.92, 5.02),
    (9.5, 4.87, 5.03),
    (10.0, 4.91, 5.01),
    (10.5, 4.87, 5.04),
    (11.0, 8.49, 4.94),
    (11.5, 9.9, 0.0),
];

fn scenario(dctcp: bool, quick: bool) -> String {
    let (cc, dscp) = if dctcp { ("dctcp", 1) } else { ("cubic", 0) };
    let (dur, f2_start, f2_stop) = if quick { ("3s", "0.5s", "2.5s") } else { ("12s", "1s", "11s") };
    let hosts = ["a".to_string(), "b".to_string(), "r".to_string()];
    format!(
        r#"description = "linux-convergence ({cc})"
{net}
[[flows]]
name = "flow1"
src = "a"
dst = "r"
dscp = {dscp}

[[flows]]
name = "flow2"
src = "b"
dst = "r"
start = "{f2_start}"
stop = "{f2_stop}"
dscp = {dscp}

[record]
queues = ["s->r"]
interval = "500ms"
"#,
        net = super::linux_10g_star(1, dur, cc, &hosts),
    )
}

/// Per-flow goodput (Gb/s) over consecutive sampling intervals, labelled by interval start.
fn rates(o: &Outcome) -> Vec<(f64, f64, f64)> {
    let iv = o.interval.secs_f64();
    let (s1, s2) = (&o.records.flow_series[0], &o.records.flow_series[1]);
    (1..s1.len().min(s2.len()))
        .map(|i| {
            let r = |s: &[FlowSample]| (s[i].bytes_acked - s[i - 1].bytes_acked) as f64 * 8.0 / iv / 1e9;
            (s1[i - 1].t.secs_f64(), r(s1), r(s2))
        })
        .collect()
}

/// First interval start at or after `from` where the two flows are within 10 % of each other.
fn converged_at(r: &[(f64, f64, f64)], from: f64) -> Option<f64> {
    r.iter().find(|&&(t, a, b)| t >= from - 1e-9 && a + b > 0.0 && (a - b).abs() / (a + b) <= 0.1).map(|x| x.0)
}

pub fn run(ctx: &Ctx) -> Result<ExpOutput, String> {
    let cubic = ctx.run(NAME, "cubic", &scenario(false, ctx.quick))?;
    let dctcp = ctx.run(NAME, "dctcp", &scenario(true, ctx.quick))?;
    let (rc, rd) = (rates(&cubic), rates(&dctcp));
    let (f2_start, f2_stop) = if ctx.quick { (0.5, 2.5) } else { (1.0, 11.0) };
    let mut rows = Vec::new();
    let single = rd.first().map_or(0.0, |x| x.1);
    rows.push(Row::new(
        NAME,
        "single-flow rate (Gb/s)",
        "9.92–9.93",
        format!("{single:.2}"),
        (single - 9.92).abs() <= 0.2,
        "reproduced",
        "tolerance ±0.2 Gb/s",
    ));
    let cd = converged_at(&rd, f2_start).map(|t| t - f2_start);
    let cc = converged_at(&rc, f2_start).map(|t| t - f2_start);
    let show = |x: Option<f64>| x.map_or("never".to_string(), |v| format!("{v:.1} s"));
    rows.push(Row::new(
        NAME,
        "DCTCP: time to fair share after flow 2 starts",
        "0.5 s (4.90 / 4.99 at 1.5 s)",
        show(cd),
        cd.is_some_and(|v| v <= 1.0),
        "shape",
        "claim: within 1 s; fair = within 10 % of each other",
    ));
    rows.push(Row::new(
        NAME,
        "CUBIC: time to fair share after flow 2 starts",
        "4.5 s (4.93 / 5.04 at 5.5 s)",
        show(cc),
        cc.is_some_and(|v| v >= 1.5) || cc.is_none(),
        "shape",
        "claim: CUBIC is slow to divide the bandwidth (≥ 1.5 s here)",
    ));
    let steady = |r: &[(f64, f64, f64)]| -> f64 {
        r.iter()
            .filter(|x| x.0 >= f2_start + 1.0 && x.0 + 0.5 <= f2_stop)
            .map(|&(_, a, b)| ((a - (a + b) / 2.0).abs()).max((b - (a + b) / 2.0).abs()))
            .fold(0.0, f64::max)
    };
    let (sd, sc) = (steady(&rd), steady(&rc));
    rows.push(Row::new(
        NAME,
        "DCTCP: largest deviation from the fair share while both run (Gb/s)",
        "0.34 (5.34 at 4 s)",
        format!("{sd:.2}"),
        sd <= 0.5,
        "reproduced",
        "tolerance: ≤ 0.5 Gb/s",
    ));
    rows.push(Row::new(
        NAME,
        "CUBIC: largest deviation from the fair share while both run (Gb/s)",
        "1.8 (6.96 / 3.1 at 2 s)",
        format!("{sc:.2}"),
        sc > sd,
        "shape",
        "claim: CUBIC less stable than DCTCP",
    ));
    let rec = rd.iter().rev().find(|x| x.0 >= f2_stop && x.0 + 0.5 <= f2_stop + 1.0 + 1e-9).map_or(0.0, |x| x.1);
    rows.push(Row::new(
        NAME,
        "DCTCP: flow 1 after flow 2 stops (Gb/s)",
        "9.9 (at 11.5 s)",
        format!("{rec:.2}"),
        rec >= 9.0,
        "shape",
        "claim: recovers quickly (≥ 9 Gb/s within 1 s)",
    ));

    let mut html = String::new();
    let mut trows = Vec::new();
    for i in 0..SEED_DCTCP.len() {
        let (t, c1, c2) = SEED_CUBIC[i];
        let (_, d1, d2) = SEED_DCTCP[i];
        let ours = |r: &[(f64, f64, f64)]| {
            r.iter()
                .find(|x| (x.0 - t).abs() < 1e-6)
                .map_or(("–".to_string(), "–".to_string()), |x| (format!("{:.2}", x.1), format!("{:.2}", x.2)))
        };
        let (oc1, oc2) = ours(&rc);
        let (od1, od2) = ours(&rd);
        trows.push(vec![
            format!("{t}"),
            format!("{c1}"),
            format!("{c2}"),
            oc1,
            oc2,
            format!("{d1}"),
            format!("{d2}"),
            od1,
            od2,
        ]);
    }
    html.push_str(&html_table(
        &[
            "s",
            "CUBIC 1 (seed)",
            "CUBIC 2 (seed)",
            "CUBIC 1",
            "CUBIC 2",
            "DCTCP 1 (seed)",
            "DCTCP 2 (seed)",
            "DCTCP 1",
            "DCTCP 2",
        ],
        &trows,
    ));
    for (label, r, seed) in [("CUBIC", &rc, &SEED_CUBIC), ("DCTCP", &rd, &SEED_DCTCP)] {
        let mut p = Plot::new(format!("{label}: per-flow rate every 0.5 s"), "time (s)", "Gb/s");
        p.kind = PlotKind::Step;
        p.series.push(Series::new("flow 1 (ccsim)", r.iter().map(|x| (x.0, x.1)).collect()));
        p.series.push(Series::new("flow 2 (ccsim)", r.iter().map(|x| (x.0, x.2)).collect()));
        if !ctx.quick {
            p.series.push(Series::new("flow 1 (seed)", seed.iter().map(|x| (x.0, x.1)).collect()));
            p.series.push(Series::new("flow 2 (seed)", seed.iter().map(|x| (x.0, x.2)).collect()));
        }
        html.push_str(&figure(&format!("{label} convergence"), p.to_svg(900, 360)));
    }
    Ok(ExpOutput { rows, html })
}
