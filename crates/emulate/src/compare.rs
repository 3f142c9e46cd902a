//! `ccsim compare A B`: how closely two runs of one scenario agree — typically ccsim's
//! simulation (A) against the kernel's emulation (B). Reads only the results directories
//! (`summary.json`, `queue_*.csv`, `flows.csv`), so any two runs can be compared.
//!
//! Distances between distributions are horizontal: for every percentile 1..=99 the difference
//! of the two quantiles, summarised by its median ("CDF median distance") and maximum.

use serde::Serialize;
use serde_json::Value;
use std::path::Path;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Distance {
    /// Median over percentiles 1..=99 of |quantile_A - quantile_B|.
    pub median: f64,
    pub max: f64,
    pub a_p50: f64,
    pub b_p50: f64,
    pub a_p99: f64,
    pub b_p99: f64,
    pub a_samples: usize,
    pub b_samples: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct QueueCmp {
    pub port: String,
    /// Occupancy in packets, after warm-up.
    pub occupancy: Option<Distance>,
    pub a_utilisation: f64,
    pub b_utilisation: f64,
    pub a_drops: u64,
    pub b_drops: u64,
    pub a_marks: u64,
    pub b_marks: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowCmp {
    pub flow: String,
    pub a_goodput_mbps: f64,
    pub b_goodput_mbps: f64,
    /// B / A.
    pub goodput_ratio: f64,
    pub a_retransmits: u64,
    pub b_retransmits: u64,
    pub a_rtos: u64,
    pub b_rtos: u64,
    pub cwnd: Option<Distance>,
    pub srtt_us: Option<Distance>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PingCmp {
    pub probe: String,
    pub a_p50_ms: f64,
    pub b_p50_ms: f64,
    pub a_p99_ms: f64,
    pub b_p99_ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub queues: Vec<QueueCmp>,
    pub flows: Vec<FlowCmp>,
    pub pings: Vec<PingCmp>,
}

/// Quantile by linear rank on sorted data.
fn q(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let r = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (r.floor() as usize, r.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (r - lo as f64)
}

/// The horizontal distance between two samples' distributions.
pub fn distance(a: &[f64], b: &[f64]) -> Option<Distance> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(|x, y| x.total_cmp(y));
    b.sort_by(|x, y| x.total_cmp(y));
    let mut d: Vec<f64> = (1..=99).map(|p| (q(&a, p as f64) - q(&b, p as f64)).abs()).collect();
    d.sort_by(|x, y| x.total_cmp(y));
    Some(Distance {
        median: d[49],
        max: d[98],
        a_p50: q(&a, 50.0),
        b_p50: q(&b, 50.0),
        a_p99: q(&a, 99.0),
        b_p99: q(&b, 99.0),
        a_samples: a.len(),
        b_samples: b.len(),
    })
}

fn read_summary(dir: &Path) -> Result<Value, String> {
    let p = dir.join("summary.json");
    let text = std::fs::read_to_string(&p).map_err(|e| {
        format!("{}: {e} (not a finished `ccsim run` or `ccsim emulate` results directory)", p.display())
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// Column `col` of a CSV with a header, as numbers, for rows where `keep` holds.
fn csv_column(path: &Path, col: &str, keep: impl Fn(&[&str], &[&str]) -> bool) -> Result<Vec<f64>, String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(Vec::new()) };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let i = header.iter().position(|h| *h == col).ok_or_else(|| format!("{}: no column `{col}`", path.display()))?;
    let mut out = Vec::new();
    for l in lines {
        let cells: Vec<&str> = l.split(',').collect();
        if !keep(&header, &cells) {
            continue;
        }
        if let Some(v) = cells.get(i).and_then(|c| c.trim_matches('"').parse::<f64>().ok()) {
            out.push(v);
        }
    }
    Ok(out)
}

fn after_warmup(warmup: f64) -> impl Fn(&[&str], &[&str]) -> bool {
    move |h: &[&str], c: &[&str]| {
        let i = h.iter().position(|x| *x == "t_s").unwrap_or(0);
        c.get(i).and_then(|v| v.parse::<f64>().ok()).is_some_and(|t| t >= warmup)
    }
}

fn f(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}
fn u(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}
fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}
fn arr<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// Compare two results directories.
pub fn compare(a_dir: &Path, b_dir: &Path) -> Result<Comparison, String> {
    let (a, b) = (read_summary(a_dir)?, read_summary(b_dir)?);
    let wa = f(&a, "warmup_s");
    let wb = f(&b, "warmup_s");
    let mut queues = Vec::new();
    for qa in arr(&a, "queues") {
        let port = s(qa, "port");
        let Some(qb) = arr(&b, "queues").iter().find(|x| s(x, "port") == port) else { continue };
        // Each summary names its series' file (results written before it did: the port's name).
        let file = |q: &Value| match s(q, "csv") {
            "" => ccsim_scenario::queue_csv_name(port),
            f => f.to_string(),
        };
        let va = csv_column(&a_dir.join(file(qa)), "packets", after_warmup(wa))?;
        let vb = csv_column(&b_dir.join(file(qb)), "packets", after_warmup(wb))?;
        queues.push(QueueCmp {
            port: port.to_string(),
            occupancy: distance(&va, &vb),
            a_utilisation: f(qa, "utilisation"),
            b_utilisation: f(qb, "utilisation"),
            a_drops: u(qa, "drops"),
            b_drops: u(qb, "drops"),
            a_marks: u(qa, "marks"),
            b_marks: u(qb, "marks"),
        });
    }
    let mut flows = Vec::new();
    for fa in arr(&a, "flows") {
        let name = s(fa, "name");
        let Some(fb) = arr(&b, "flows").iter().find(|x| s(x, "name") == name) else { continue };
        let col = |dir: &Path, c: &str, w: f64| {
            csv_column(&dir.join("flows.csv"), c, move |h: &[&str], cells: &[&str]| {
                let fi = h.iter().position(|x| *x == "flow").unwrap_or(1);
                after_warmup(w)(h, cells) && cells.get(fi).map(|v| v.trim_matches('"')) == Some(name)
            })
        };
        let (ga, gb) = (f(fa, "goodput_mbps"), f(fb, "goodput_mbps"));
        flows.push(FlowCmp {
            flow: name.to_string(),
            a_goodput_mbps: ga,
            b_goodput_mbps: gb,
            goodput_ratio: if ga > 0.0 { gb / ga } else { f64::NAN },
            a_retransmits: u(fa, "retransmits"),
            b_retransmits: u(fb, "retransmits"),
            a_rtos: u(fa, "rto_count"),
            b_rtos: u(fb, "rto_count"),
            cwnd: distance(&col(a_dir, "cwnd", wa)?, &col(b_dir, "cwnd", wb)?),
            srtt_us: distance(&col(a_dir, "srtt_us", wa)?, &col(b_dir, "srtt_us", wb)?),
        });
    }
    let mut pings = Vec::new();
    for pa in arr(&a, "pings") {
        let name = s(pa, "name");
        let Some(pb) = arr(&b, "pings").iter().find(|x| s(x, "name") == name) else { continue };
        pings.push(PingCmp {
            probe: name.to_string(),
            a_p50_ms: f(pa, "p50_ms"),
            b_p50_ms: f(pb, "p50_ms"),
            a_p99_ms: f(pa, "p99_ms"),
            b_p99_ms: f(pb, "p99_ms"),
        });
    }
    if queues.is_empty() && flows.is_empty() && pings.is_empty() {
        return Err(format!(
            "{} and {} have no queue, flow or ping in common: are they runs of the same scenario?",
            a_dir.display(),
            b_dir.display()
        ));
    }
    Ok(Comparison { a: a_dir.display().to_string(), b: b_dir.display().to_string(), queues, flows, pings })
}

fn g(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// The comparison as a text table.
pub fn table(c: &Comparison) -> String {
    let mut o = format!("A = {}\nB = {}\n", c.a, c.b);
    if !c.queues.is_empty() {
        o.push_str("\nqueue (packets)   p50 A/B        p99 A/B        CDF dist median/max  util A/B        drops A/B      marks A/B\n");
        for q in &c.queues {
            let (p50, p99, dist) = match &q.occupancy {
                Some(d) => (
                    format!("{}/{}", g(d.a_p50), g(d.b_p50)),
                    format!("{}/{}", g(d.a_p99), g(d.b_p99)),
                    format!("{}/{}", g(d.median), g(d.max)),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let util = format!("{:.3}/{:.3}", q.a_utilisation, q.b_utilisation);
            let drops = format!("{}/{}", q.a_drops, q.b_drops);
            let marks = format!("{}/{}", q.a_marks, q.b_marks);
            o.push_str(&format!(
                "{:<17} {:<14} {:<14} {:<20} {:<15} {:<14} {}\n",
                q.port, p50, p99, dist, util, drops, marks
            ));
        }
    }
    if !c.flows.is_empty() {
        o.push_str("\nflow              goodput A/B (Mb/s)  B/A    retrans A/B   RTOs A/B   cwnd p50 A/B (dist)     srtt p50 A/B us (dist)\n");
        for fl in &c.flows {
            let d = |x: &Option<Distance>| match x {
                Some(d) => format!("{}/{} ({})", g(d.a_p50), g(d.b_p50), g(d.median)),
                None => "-".into(),
            };
            o.push_str(&format!(
                "{:<17} {:<19} {:<6} {:<13} {:<10} {:<23} {}\n",
                fl.flow,
                format!("{}/{}", g(fl.a_goodput_mbps), g(fl.b_goodput_mbps)),
                g(fl.goodput_ratio),
                format!("{}/{}", fl.a_retransmits, fl.b_retransmits),
                format!("{}/{}", fl.a_rtos, fl.b_rtos),
                d(&fl.cwnd),
                d(&fl.srtt_us)
            ));
        }
    }
    if !c.pings.is_empty() {
        o.push_str("\nping              p50 A/B (ms)       p99 A/B (ms)\n");
        for p in &c.pings {
            let p50 = format!("{:.3}/{:.3}", p.a_p50_ms, p.b_p50_ms);
            let p99 = format!("{:.3}/{:.3}", p.a_p99_ms, p.b_p99_ms);
            o.push_str(&format!("{:<17} {:<18} {}\n", p.probe, p50, p99));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_of_shifted_samples_is_the_shift() {
        let a: Vec<f64> = (0..1000).map(|i| (i % 40) as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 3.0).collect();
        let d = distance(&a, &b).unwrap();
        assert!((d.median - 3.0).abs() < 1e-9 && (d.max - 3.0).abs() < 1e-9, "{d:?}");
        assert_eq!(distance(&a, &a).unwrap().median, 0.0);
        assert!(distance(&a, &[]).is_none());
    }

    #[test]
    fn compare_reads_two_results_directories() {
        let base = std::env::temp_dir().join(format!("ccsim-compare-{}", std::process::id()));
        let mk = |name: &str, shift: f64, gp: f64| {
            let d = base.join(name);
            std::fs::create_dir_all(&d).unwrap();
            let summary = serde_json::json!({
                "warmup_s": 0.0,
                "queues": [{"port": "s->c", "utilisation": 0.99, "drops": 0, "marks": 10}],
                "flows": [{"name": "a", "goodput_mbps": gp, "retransmits": 1, "rto_count": 0}],
                "pings": []
            });
            std::fs::write(d.join("summary.json"), summary.to_string()).unwrap();
            let mut q = String::from("t_s,packets,bytes\n");
            for i in 0..200 {
                q.push_str(&format!("{},{},0\n", i as f64 * 0.001, (i % 20) as f64 + shift));
            }
            std::fs::write(d.join("queue_s_c.csv"), q).unwrap();
            d
        };
        let (a, b) = (mk("sim", 0.0, 50.0), mk("emu", 1.0, 45.0));
        let c = compare(&a, &b).unwrap();
        std::fs::remove_dir_all(&base).unwrap();
        assert_eq!(c.queues.len(), 1);
        assert_eq!(c.queues[0].occupancy.as_ref().unwrap().median, 1.0);
        assert!((c.flows[0].goodput_ratio - 0.9).abs() < 1e-9);
        assert!(table(&c).contains("s->c"));
    }
}
