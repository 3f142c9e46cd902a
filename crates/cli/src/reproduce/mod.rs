//! `ccsim reproduce`: the catalog of seed experiments. Each entry runs its scenarios, sets
//! ccsim's figures beside the seed's, and gives an honest verdict per metric: `reproduced`
//! (within the stated tolerance), `shape` (the seed's qualitative claim holds), or
//! `not reproduced` (with the reason).

mod bbr;
mod benchmark;
mod convergence;
mod freebsd;
mod incast;
mod mininet;
mod nv;
mod report;
mod synect;

use crate::args::ReproduceArgs;
use ccsim_scenario::{self as scenario, Outcome, Scenario};
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    /// `seed` and `ccsim` as numbers where they are one (JSON gets numbers, not strings).
    pub seed_value: Option<f64>,
    pub ccsim_value: Option<f64>,
}

/// A figure written as a plain number ("3227", "0.1963", "-1.4"), else None.
fn plain_number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

impl Row {
    /// A row whose verdict is `kind` when `ok`, else "not reproduced".
    pub fn new(
        exp: &str,
        metric: &str,
        seed: impl Into<String>,
        ccsim: impl Into<String>,
        ok: bool,
        kind: &str,
        note: impl Into<String>,
    ) -> Row {
        let (seed, ccsim) = (seed.into(), ccsim.into());
        Row {
            experiment: exp.into(),
            metric: metric.into(),
            seed_value: plain_number(&seed),
            ccsim_value: plain_number(&ccsim),
            seed,
            ccsim,
            verdict: if ok { kind.into() } else { "not reproduced".into() },
            note: note.into(),
        }
    }
}

/// What an experiment produced: scorecard rows and an HTML section (figures, tables).
pub struct ExpOutput {
    pub rows: Vec<Row>,
    pub html: String,
}

/// Where and how an experiment runs.
pub struct Ctx {
    pub quick: bool,
    pub out: PathBuf,
}

impl Ctx {
    /// Parse, build, run a scenario given as TOML text and write its results directory.
    pub fn run(&self, exp: &str, label: &str, toml: &str) -> Result<Outcome, String> {
        let s: Scenario = scenario::parse(toml, &format!("catalog:{exp}/{label}")).map_err(|x| x.to_string())?;
        let built = scenario::build(&s).map_err(|x| x.in_file(&format!("catalog:{exp}/{label}")).to_string())?;
        let t0 = std::time::Instant::now();
        let o = scenario::run_built(built, |_, _| {});
        eprintln!("  {exp}/{label}: {:.1} s simulated in {:.1} s", o.summary.duration_s, t0.elapsed().as_secs_f64());
        let dir = self.out.join(exp).join(label);
        scenario::write_results(&o, &scenario::resolved_toml(&s), &dir)
            .map_err(|x| format!("{}: {x}", dir.display()))?;
        Ok(o)
    }
}

struct Experiment {
    name: &'static str,
    title: &'static str,
    source: &'static str,
    /// Parameters the seed leaves unstated and how ccsim chose them.
    setup: &'static str,
    run: fn(&Ctx) -> Result<ExpOutput, String>,
}

const CATALOG: &[Experiment] = &[
    Experiment {
        name: mininet::NAME,
        title: "DCTCP keeps the queue small at full throughput (Mininet-HiFi reproduction)",
        source: "mininet-hifi-dctcp-reproduction.txt; analysis: Alizadeh et al., SIGCOMM 2010 §3.3",
        setup: mininet::SETUP,
        run: mininet::run,
    },
    Experiment {
        name: incast::NAME,
        title: "19-to-1 incast at 10 Gb/s: timeouts, throughput and latency, CUBIC vs DCTCP (Linux DCTCP merge commit)",
        source: "linux-dctcp-commits.txt, commit e3118e8359",
        setup: incast::SETUP,
        run: incast::run,
    },
    Experiment {
        name: incast::SHARED,
        title: "19-to-1 incast again, on a shared-buffer switch of the seed's time (Trident+, dynamic thresholds)",
        source: "linux-dctcp-commits.txt, commit e3118e8359",
        setup: incast::SHARED_SETUP,
        run: incast::run_shared,
    },
    Experiment {
        name: convergence::NAME,
        title: "Convergence and stability of two flows at 10 Gb/s, CUBIC vs DCTCP (Linux DCTCP merge commit)",
        source: "linux-dctcp-commits.txt, commit e3118e8359",
        setup: convergence::SETUP,
        run: convergence::run,
    },
    Experiment {
        name: bbr::LOSS,
        title: "BBR vs CUBIC under 1 % random loss at 10 Gb/s, 100 ms RTT (Linux BBR merge commit)",
        source: "linux-bbr-and-inet-diag-commits.txt, commit 0f8782ea1497",
        setup: bbr::LOSS_SETUP,
        run: bbr::run_loss,
    },
    Experiment {
        name: bbr::BLOAT,
        title: "BBR vs CUBIC with a 1000-packet buffer at 10 Mb/s, 40 ms RTT (Linux BBR merge commit)",
        source: "linux-bbr-and-inet-diag-commits.txt, commit 0f8782ea1497",
        setup: bbr::BLOAT_SETUP,
        run: bbr::run_bloat,
    },
    Experiment {
        name: nv::SINGLE,
        title: "TCP-NV with and without a BPF base RTT: one flow at 10 Gb/s (Linux NV base-RTT commit)",
        source: "linux-tcp-nv-bpf-base-rtt.txt, commit 85cce2157816",
        setup: nv::SETUP,
        run: nv::run_single,
    },
    Experiment {
        name: nv::TWO,
        title: "TCP-NV with and without a BPF base RTT: two hosts into one (Linux NV base-RTT commit)",
        source: "linux-tcp-nv-bpf-base-rtt.txt, commit 85cce2157816",
        setup: nv::SETUP,
        run: nv::run_two,
    },
    Experiment {
        name: nv::SIX,
        title: "TCP-NV with and without a BPF base RTT: 3 hosts x 6 flows with RPCs (Linux NV base-RTT commit)",
        source: "linux-tcp-nv-bpf-base-rtt.txt, commit 85cce2157816",
        setup: nv::SETUP,
        run: nv::run_six,
    },
    Experiment {
        name: freebsd::BULK,
        title: "FreeBSD DCTCP: short transfers next to long flows, NewReno vs DCTCP vs one-sided DCTCP (BSDCan 2015)",
        source: "freebsd-dctcp-bsdcan2015.txt",
        setup: freebsd::SETUP,
        run: freebsd::run_bulk,
    },
    Experiment {
        name: freebsd::INCAST,
        title: "FreeBSD DCTCP: 10 simultaneous transfers, NewReno vs DCTCP vs one-sided DCTCP (BSDCan 2015)",
        source: "freebsd-dctcp-bsdcan2015.txt",
        setup: freebsd::SETUP,
        run: freebsd::run_incast,
    },
    Experiment {
        name: freebsd::BULK_SHARED,
        title: "FreeBSD DCTCP bulk again, with a shared-buffer switch of the seed's era (Nexus 3548 pool, dynamic threshold)",
        source: "freebsd-dctcp-bsdcan2015.txt",
        setup: freebsd::SHARED_SETUP,
        run: freebsd::run_bulk_shared,
    },
    Experiment {
        name: freebsd::INCAST_SHARED,
        title: "FreeBSD DCTCP incast again, with a shared-buffer switch of the seed's era (Nexus 3548 pool, dynamic threshold)",
        source: "freebsd-dctcp-bsdcan2015.txt",
        setup: freebsd::SHARED_SETUP,
        run: freebsd::run_incast_shared,
    },
    Experiment {
        name: benchmark::NAME,
        title: "The DCTCP paper's benchmark traffic in one rack: 10x background, 10x queries, DCTCP vs CUBIC",
        source: "linux-dctcp-commits.txt, commit e3118e8359 (quoting Alizadeh et al., SIGCOMM 2010)",
        setup: benchmark::SETUP,
        run: benchmark::run,
    },
    Experiment {
        name: synect::NAME,
        title: "Connection probability of a DCTCP connection whose SYN is not ECT (Linux DCTCP merge commit)",
        source: "linux-dctcp-commits.txt, commit e3118e8359",
        setup: synect::SETUP,
        run: synect::run,
    },
];

/// The 10 Gb/s network of the Linux DCTCP merge commit's tests, as TOML: jumbo frames with
/// Ethernet framing, and one switch whose ports hold a DCTCP class (DSCP 1, ECN marking above
/// 75 KB) and a drop-tail default class, 5 MB each, served round robin. `hosts` are the star's
/// hosts; the switch is `s`.
pub fn linux_10g_star(seed: u64, duration: &str, cc: &str, hosts: &[String]) -> String {
    let hosts: Vec<String> = hosts.iter().map(|h| format!("\"{h}\"")).collect();
    format!(
        r#"[run]
seed = {seed}
duration = "{duration}"
l2_overhead = 38

[tcp]
cc = "{cc}"
mss = 8960

[queues.port]
scheduler = "rr"
classes = [
  {{ name = "dctcp", dscp = [1], limit = 5000000, unit = "bytes", aqm = "step", k = 75000 }},
  {{ name = "default", limit = 5000000, unit = "bytes" }},
]

[topology]
type = "star"
hosts = [{hosts}]
switch = "s"
rate = "10Gbps"
delay = "5us"
switch_queue = "port"
"#,
        hosts = hosts.join(", ")
    )
}

/// `x` is within `tol` (a fraction) of the seed's figure.
pub fn near(x: f64, seed: f64, tol: f64) -> bool {
    (x - seed).abs() <= tol * seed.abs().max(1e-9)
}

/// A row's note: `base` (its tolerance) where the row reproduces the seed, else `base` and why
/// it does not.
pub fn note_unless(ok: bool, base: &str, why: impl FnOnce() -> String) -> String {
    if ok {
        base.to_string()
    } else {
        format!("{base}. Where not reproduced: {}", why())
    }
}

pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// An HTML table from a header and rows of cells.
pub fn html_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = String::from("<table><tr>");
    for h in header {
        t.push_str(&format!("<th>{}</th>", html_escape(h)));
    }
    t.push_str("</tr>\n");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            t.push_str(&format!("<td>{}</td>", html_escape(c)));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t
}

pub fn figure(title: &str, svg: String) -> String {
    format!("<figure>{svg}<figcaption>{}</figcaption></figure>\n", html_escape(title))
}

/// Run the experiments on up to `jobs` threads; results in the order of `selected`.
fn run_parallel(selected: &[&Experiment], ctx: &Ctx, jobs: usize) -> Vec<Result<ExpOutput, String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<ExpOutput, String>>>> =
        Mutex::new((0..selected.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(selected.len()).max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(e) = selected.get(i) else { break };
                eprintln!("reproduce {}: {}", e.name, e.title);
                let r = (e.run)(ctx);
                results.lock().expect("no worker panics while holding the lock")[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .expect("workers finished")
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("experiment did not run".into())))
        .collect()
}

pub fn cmd(a: ReproduceArgs) -> Result<(), String> {
    let (quick, json, out, args) = (a.quick, a.json, a.out, a.names);
    let jobs = match a.jobs {
        Some(n) => n as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if a.list {
        for e in CATALOG {
            println!("{:<16} {}", e.name, e.title);
        }
        return Ok(());
    }
    let command = std::iter::once("ccsim reproduce".to_string())
        .chain(args.iter().cloned())
        .chain(quick.then(|| "--quick".to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let (rows, report) = scorecard(&args, quick, &out, jobs, &command)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
    } else {
        println!("{:<14} {:<40} {:>12}  {:<15} seed", "experiment", "metric", "ccsim", "verdict");
        for r in &rows {
            println!("{:<14} {:<40} {:>12}  {:<15} {}", r.experiment, r.metric, r.ccsim, r.verdict, r.seed);
        }
        eprintln!("report: {}", report.display());
    }
    if report.file_name().is_some_and(|n| n != "report.html") {
        eprintln!(
            "a full report is in {}: this {} run's report went beside it, to {}",
            out.join("report.html").display(),
            if quick { "quick" } else { "partial" },
            report.display()
        );
    }
    Ok(())
}

/// Names of the experiments `ccsim reproduce` knows, in catalog order.
pub fn experiment_names() -> Vec<&'static str> {
    CATALOG.iter().map(|e| e.name).collect()
}

/// Run the named experiments (all when `names` is empty), `jobs` at a time, write their results
/// and the report under `out` (`command` is what the report says was run), and return the
/// scorecard's rows in catalog order and where the report went.
pub fn scorecard(
    names: &[String],
    quick: bool,
    out: &Path,
    jobs: usize,
    command: &str,
) -> Result<(Vec<Row>, PathBuf), String> {
    let args = names;
    let out = out.to_path_buf();
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
    let ctx = Ctx { quick, out: out.clone() };
    // Experiments are independent and each is deterministic: they run `jobs` at a time, and the
    // scorecard and report keep the catalog's order whatever order they finish in.
    let results = run_parallel(&selected, &ctx, jobs);
    let mut rows = Vec::new();
    let mut sections = Vec::new();
    for (e, r) in selected.iter().zip(results) {
        let r = r?;
        let head = format!(
            "<h2>{}</h2>\n<p>{}<br>Source: {}<br>Setup: {}</p>\n",
            html_escape(e.name),
            html_escape(e.title),
            html_escape(e.source),
            html_escape(e.setup)
        );
        sections.push(report::Section { name: e.name.to_string(), html: head + &r.html });
        rows.extend(r.rows);
    }
    if quick {
        // A shortened run's figure is not the seed's experiment: say so where it disagrees.
        for row in rows.iter_mut().filter(|r| r.verdict == "not reproduced") {
            let end = row.note.trim_end();
            row.note = format!(
                "{end}{} Quick mode: a shortened run (see the setup); the full run, `ccsim reproduce` without \
                 --quick, is the comparison with the seed.",
                if end.is_empty() || end.ends_with(['.', '!', '?']) { "" } else { "." }
            );
        }
    }
    let coverage = match (quick, names.is_empty()) {
        (true, _) => report::Coverage::Quick,
        (false, true) => report::Coverage::Full,
        (false, false) => report::Coverage::Partial,
    };
    let path = report::write(&out, coverage, command, &rows, &sections)?;
    Ok((rows, path))
}
