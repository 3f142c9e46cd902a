//! SYN/ACK ECT test of the Linux DCTCP merge commit (e3118e8359): a DCTCP connection attempt
//! whose SYN is not ECT, against 1, 2, 4, 8, 16 competing DCTCP flows through the DCTCP queue
//! (which drops non-ECT packets above the marking threshold); five repetitions each. For
//! contrast, the same with ECT on the SYN (what Linux DCTCP does).

use super::{figure, html_table, Ctx, ExpOutput, Row};
use ccsim_report::{summarize, Plot, PlotKind, Series};

pub const NAME: &str = "linux-syn-ect";
pub const SETUP: &str = "N competing DCTCP bulk flows from N hosts and one test host, all to one receiver, over the \
    incast test's switch (10 Gb/s, 5 us per link, MTU 9000, DCTCP class DSCP 1 marking above 75 KB and dropping \
    non-ECT above it); the competitors start at 0, and from 0.5 s the test host opens 20 connections 50 ms apart \
    (10 in quick mode), each sending 10 KB with SYN and SYN-ACK not ECT (or ECT, for contrast); an attempt \
    connects when its handshake completes before the first SYN retransmission (1 s). Probability = connected / \
    attempts, per repetition (seeds 1..5; 2 in quick mode).";

const COMPETING: [usize; 5] = [1, 2, 4, 8, 16];
const SEED_MEAN: [f64; 5] = [1.0, 0.67, 0.45, 0.28, 0.0];
const SEED_MEDIAN: [f64; 5] = [1.0, 0.65, 0.45, 0.25, 0.0];

fn scenario(n: usize, syn_ect: bool, seed: u64, attempts: usize) -> String {
    let mut hosts: Vec<String> = (1..=n).map(|i| format!("c{i}")).collect();
    hosts.push("t".into());
    hosts.push("r".into());
    let dur = 0.5 + attempts as f64 * 0.05 + 1.5;
    let mut s = format!(
        "{}\n[record]\nqueues = [\"s->r\"]\nseries = false\n",
        super::linux_10g_star(seed, &format!("{dur}s"), "dctcp", &hosts)
    );
    for i in 1..=n {
        // Competitors start a few microseconds apart, shifted by the repetition's seed.
        s.push_str(&format!(
            "\n[[flows]]\nname = \"c{i}\"\nsrc = \"c{i}\"\ndst = \"r\"\ndscp = 1\nstart = \"{}us\"\n",
            i as u64 * 7 + seed * 13
        ));
    }
    for k in 0..attempts {
        s.push_str(&format!(
            "\n[[flows]]\nname = \"attempt{k}\"\nsrc = \"t\"\ndst = \"r\"\nkind = \"transfer\"\nsize = \"10KB\"\ndscp = 1\nsyn_ect = {syn_ect}\nstart = \"{:.6}s\"\n",
            0.5 + k as f64 * 0.05 + seed as f64 * 0.000_37
        ));
    }
    s
}

pub fn run(ctx: &Ctx) -> Result<ExpOutput, String> {
    let (reps, attempts) = if ctx.quick { (2u64, 10usize) } else { (5, 20) };
    let mut probs: Vec<[Vec<f64>; 2]> = Vec::new();
    for &n in &COMPETING {
        let mut per_mode: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for (m, syn_ect) in [false, true].into_iter().enumerate() {
            for rep in 1..=reps {
                let label = format!("n{n}-{}-rep{rep}", if syn_ect { "ect" } else { "noect" });
                let o = ctx.run(NAME, &label, &scenario(n, syn_ect, rep, attempts))?;
                let ok = o
                    .summary
                    .flows
                    .iter()
                    .filter(|f| f.name.starts_with("attempt"))
                    .filter(|f| f.established_s.is_some_and(|e| e - f.start_s < 1.0))
                    .count();
                per_mode[m].push(ok as f64 / attempts as f64);
            }
        }
        probs.push(per_mode);
    }
    let mut rows = Vec::new();
    let mut means = Vec::new();
    for (i, &n) in COMPETING.iter().enumerate() {
        let s = summarize(&probs[i][0]);
        let median = {
            let mut v = probs[i][0].clone();
            v.sort_by(|a, b| a.total_cmp(b));
            let m = v.len() / 2;
            if v.len() % 2 == 1 {
                v[m]
            } else {
                (v[m - 1] + v[m]) / 2.0
            }
        };
        means.push(s.mean);
        rows.push(Row::new(
            NAME,
            &format!("SYN not ECT, {n} competing: mean probability"),
            format!("{}", SEED_MEAN[i]),
            format!("{:.2}", s.mean),
            (s.mean - SEED_MEAN[i]).abs() <= 0.2,
            "reproduced",
            "tolerance ±0.2",
        ));
        rows.push(Row::new(
            NAME,
            &format!("SYN not ECT, {n} competing: median probability"),
            format!("{}", SEED_MEDIAN[i]),
            format!("{median:.2}"),
            (median - SEED_MEDIAN[i]).abs() <= 0.2,
            "reproduced",
            "tolerance ±0.2",
        ));
    }
    let falls = means.windows(2).all(|w| w[1] <= w[0] + 0.05) && means[means.len() - 1] < means[0];
    rows.push(Row::new(
        NAME,
        "probability falls with competing flows (SYN not ECT)",
        "1 → 0.67 → 0.45 → 0.28 → 0",
        means.iter().map(|m| format!("{m:.2}")).collect::<Vec<_>>().join(" → "),
        falls,
        "shape",
        "claim checked: non-increasing (±0.05) and lower at 16 than at 1",
    ));
    let ect: Vec<f64> = probs.iter().map(|p| summarize(&p[1]).mean).collect();
    rows.push(Row::new(
        NAME,
        "SYN ECT (Linux DCTCP): probability at 1..16 competing",
        "1 (the fix's purpose)",
        ect.iter().map(|m| format!("{m:.2}")).collect::<Vec<_>>().join(" / "),
        ect.iter().all(|&p| p >= 0.95),
        "shape",
        "claim checked: ≥ 0.95 everywhere",
    ));

    let mut html = String::new();
    let trows: Vec<Vec<String>> = COMPETING
        .iter()
        .enumerate()
        .map(|(i, n)| {
            vec![
                n.to_string(),
                format!("{}", SEED_MEAN[i]),
                format!("{:.2}", means[i]),
                format!("{}", SEED_MEDIAN[i]),
                format!("{:.2}", ect[i]),
            ]
        })
        .collect();
    html.push_str(&html_table(
        &[
            "competing flows",
            "seed mean (SYN not ECT)",
            "ccsim mean (SYN not ECT)",
            "seed median",
            "ccsim mean (SYN ECT)",
        ],
        &trows,
    ));
    let mut p = Plot::new("Connection probability", "competing flows", "probability");
    p.kind = PlotKind::Line;
    p.y_range = Some((0.0, 1.05));
    let xs: Vec<f64> = COMPETING.iter().map(|&n| n as f64).collect();
    p.series.push(Series::new("seed (SYN not ECT)", xs.iter().zip(SEED_MEAN).map(|(x, y)| (*x, y)).collect()));
    p.series.push(Series::new("ccsim (SYN not ECT)", xs.iter().zip(&means).map(|(x, y)| (*x, *y)).collect()));
    p.series.push(Series::new("ccsim (SYN ECT)", xs.iter().zip(&ect).map(|(x, y)| (*x, *y)).collect()));
    html.push_str(&figure("Connection probability vs competing flows", p.to_svg(700, 360)));
    Ok(ExpOutput { rows, html })
}
