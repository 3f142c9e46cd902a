//! `ccsim bench`: how fast the simulator is on a few fixed scenarios.
//!
//! Each run happens in a child process (`ccsim bench --one NAME`, not listed in the usage) so that
//! its peak RSS (`VmHWM`, a process-wide high-water mark) is its own. The child measures its user
//! CPU time around `build` and `run_built` (the topology and its route table, `Sim`'s set-up, the
//! run, the summary; parsing the scenario text excluded) and prints one JSON line; the parent
//! collects the runs and prints a table or JSON. User CPU time comes from `getrusage`
//! (microseconds; the kernel accounts it per scheduler tick and apportions it, so runs under a
//! tenth of a second stay coarse). Nothing
//! here asserts on speed: the figures are for people comparing builds.

use crate::args::BenchArgs;
use ccsim_scenario as scenario;
use serde::{Deserialize, Serialize};
use std::process::Command;

/// One built-in benchmark.
struct Bench {
    name: &'static str,
    what: &'static str,
    /// Part of the default set (`ccsim bench` without names).
    default: bool,
    toml: fn() -> String,
}

const BENCHES: &[Bench] = &[
    Bench {
        name: "S1",
        what: "2 long DCTCP flows -> 1 receiver, star, 10 Gb/s, 100 us base RTT, K = 65, 2 s",
        default: true,
        toml: || star_dctcp("S1", 2, "2s"),
    },
    Bench { name: "S1-long", what: "S1 for 20 s", default: true, toml: || star_dctcp("S1-long", 2, "20s") },
    Bench {
        name: "S2",
        what: "19 long DCTCP flows -> 1 receiver, star, 10 Gb/s, 100 us base RTT, K = 65, 1 s",
        default: true,
        toml: || star_dctcp("S2", 19, "1s"),
    },
    Bench {
        name: "S3",
        what: "k = 8 fat tree (128 hosts), permutation traffic, DCTCP, 10 Gb/s links, K = 65, 0.1 s",
        default: true,
        toml: || fat_tree(8, "0.1s"),
    },
    Bench {
        name: "S3-shared",
        what: "S3 with every switch's ports sharing a 12 MB buffer (Trident II), dynamic threshold alpha = 1",
        default: false,
        toml: || fat_tree_with(8, "0.1s", "[buffers.asic]\npreset = \"trident2\"\n", "switch_buffer = \"asic\"\n"),
    },
    Bench {
        name: "S3-k4",
        what: "S3 shape at k = 4 (16 hosts), 0.1 s, for the scaling table",
        default: false,
        toml: || fat_tree(4, "0.1s"),
    },
    Bench {
        name: "S3-k16",
        what: "S3 shape at k = 16 (1024 hosts), 0.01 s, for the scaling table",
        default: false,
        toml: || fat_tree(16, "0.01s"),
    },
    Bench {
        name: "S3-k32",
        what: "S3 shape at k = 32 (8192 hosts), 1 ms, for the scaling table",
        default: false,
        toml: || fat_tree(32, "1ms"),
    },
    Bench {
        name: "S1-noise",
        what: "S1 with 2 us of host timing noise (the default is 20 ns at 10 Gb/s)",
        default: false,
        toml: || star_dctcp_jitter("S1-noise", 2, "2s", "2us"),
    },
    Bench {
        name: "S4",
        what:
            "k = 8 fat tree (128 hosts), WebSearch flows at 50 % load, DCTCP, 10 Gb/s, K = 65, 0.25 s (0.05 s warm-up)",
        default: true,
        toml: || fat_tree_websearch(8, "0.25s", "0.05s"),
    },
    Bench {
        name: "S4-k4",
        what: "S4 at k = 4 (16 hosts), 0.05 s (0.01 s warm-up): the profile-guided build's workload training",
        default: false,
        toml: || fat_tree_websearch(4, "0.05s", "0.01s"),
    },
    Bench {
        name: "S4-k16",
        what: "S4 at k = 16 (1024 hosts), 0.03 s (0.01 s warm-up)",
        default: false,
        toml: || fat_tree_websearch(16, "0.03s", "0.01s"),
    },
    Bench { name: "smoke", what: "S1 for 0.1 s", default: false, toml: || star_dctcp("smoke", 2, "0.1s") },
];

/// Every switch port: 1000-packet buffer, DCTCP step marking above K = 65 packets on enqueue.
const QUEUE: &str = r#"[queues.dctcp]
classes = [{ name = "dctcp", limit = 1000, aqm = "step", k = 65 }]
"#;

/// `senders` hosts each send one long DCTCP flow to `r` through one switch. 1500-byte packets
/// (MSS 1460 with timestamps: 1448 + 52). Per-link delay 24.375 us: the unloaded RTT is
/// 4 x 24.375 us of propagation + 2 x 1.2 us to serialise a data packet + 2 x 0.04 us for the
/// ACK = 100.0 us.
/// The benchmarks model hosts as htsim does, without timing noise (`host_jitter = "0us"`); S1-noise
/// measures the cost of 2 µs, the default's bound at 100 Mb/s (at 10 Gb/s the default is 20 ns).
fn star_dctcp(name: &str, senders: usize, duration: &str) -> String {
    star_dctcp_jitter(name, senders, duration, "0us")
}

fn star_dctcp_jitter(name: &str, senders: usize, duration: &str, jitter: &str) -> String {
    let hosts: Vec<String> = (1..=senders).map(|i| format!("\"h{i}\"")).chain(["\"r\"".to_string()]).collect();
    let mut s = format!(
        r#"description = "bench {name}: {senders} long DCTCP flows into one receiver, 10 Gb/s, 100 us base RTT"

[run]
seed = 1
duration = "{duration}"

[tcp]
cc = "dctcp"

{QUEUE}
[topology]
type = "star"
hosts = [{hosts}]
switch = "s"
rate = "10Gbps"
delay = "24.375us"
switch_queue = "dctcp"
host_jitter = "{jitter}"

[record]
queues = ["s->r"]
series = false
"#,
        hosts = hosts.join(", ")
    );
    for i in 1..=senders {
        s.push_str(&format!("\n[[flows]]\nname = \"h{i}\"\nsrc = \"h{i}\"\ndst = \"r\"\n"));
    }
    s
}

/// A k-ary fat tree (S3 at k = 8), every link 10 Gb/s and 5 us, every switch port the DCTCP
/// queue; each of the k^3/4 hosts sends one long flow to another (a random permutation without
/// fixed points).
fn fat_tree(k: u32, duration: &str) -> String {
    fat_tree_with(k, duration, "", "")
}

/// `fat_tree` with extra tables before `[topology]` and extra lines in it.
fn fat_tree_with(k: u32, duration: &str, tables: &str, topology: &str) -> String {
    format!(
        r#"description = "bench S3: k = {k} fat tree, permutation traffic, DCTCP"

[run]
seed = 1
duration = "{duration}"

[tcp]
cc = "dctcp"

{QUEUE}{tables}
[topology]
type = "fattree"
k = {k}
rate = "10Gbps"
delay = "5us"
switch_queue = "dctcp"
host_jitter = "0us"
{topology}
[traffic]
pattern = "permutation"

[record]
series = false
"#
    )
}

/// S4: a k-ary fat tree as S3's, each host offering half its link rate in WebSearch flows
/// (Poisson arrivals, uniform destinations), each flow a connection of its own.
fn fat_tree_websearch(k: u32, duration: &str, warmup: &str) -> String {
    format!(
        r#"description = "bench S4: k = {k} fat tree, WebSearch at 50 % load, DCTCP"

[run]
seed = 1
duration = "{duration}"

[tcp]
cc = "dctcp"

{QUEUE}
[topology]
type = "fattree"
k = {k}
rate = "10Gbps"
delay = "5us"
switch_queue = "dctcp"
host_jitter = "0us"

[[workloads]]
name = "websearch"
kind = "poisson"
sizes = "websearch"
load = 0.5

[record]
warmup = "{warmup}"
series = false
"#
    )
}

/// What one run measured (the line `ccsim bench --one` prints).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Run {
    name: String,
    sim_time_s: f64,
    data_packets_delivered: u64,
    events: u64,
    cpu_user_s: f64,
    wall_s: f64,
    peak_rss_kib: u64,
    /// The event list the run used: "heap" or "wheel" (by network size).
    event_list: String,
    /// Workload flows completed after the warm-up (benchmarks with workloads).
    #[serde(default)]
    flows_completed: u64,
}

/// One row of the report: a benchmark over its runs.
#[derive(Clone, Debug, Serialize)]
struct Row {
    name: String,
    description: String,
    sim_time_s: f64,
    data_packets_delivered: u64,
    events: u64,
    events_per_packet: f64,
    /// Median over the runs.
    cpu_user_s: f64,
    wall_s: f64,
    /// Data packets delivered per user CPU second: median, min and max over the runs.
    packets_per_cpu_s: f64,
    packets_per_cpu_s_min: f64,
    packets_per_cpu_s_max: f64,
    /// Largest peak RSS over the runs.
    peak_rss_kib: u64,
    /// The event list: "heap" or "wheel".
    event_list: String,
    /// Workload flows completed after the warm-up.
    flows_completed: u64,
    repeat: usize,
    /// How this binary was built (`build_kind`).
    build: &'static str,
    runs: Vec<Run>,
}

/// The build measured: `release`, or what `scripts/build-pgo` names in `CCSIM_BUILD` (a
/// profile-guided build), or `debug` (not worth measuring).
fn build_kind() -> &'static str {
    match option_env!("CCSIM_BUILD") {
        Some(b) if !b.is_empty() => b,
        _ if cfg!(debug_assertions) => "debug (not optimised: build with --release)",
        _ => "release",
    }
}

/// User CPU time of this process, in seconds: `getrusage(RUSAGE_SELF)`'s `ru_utime`, in
/// microseconds (`/proc/self/stat` counts clock ticks, 10 ms, too coarse for sub-second runs).
fn user_cpu_s() -> Result<f64, String> {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Err(format!("getrusage: {}", std::io::Error::last_os_error()));
    }
    Ok(ru.ru_utime.tv_sec as f64 + ru.ru_utime.tv_usec as f64 * 1e-6)
}

/// Peak resident set size of this process (`VmHWM`), in KiB.
fn peak_rss_kib() -> Result<u64, String> {
    let st = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    st.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| "/proc/self/status: no VmHWM".to_string())
}

fn find(name: &str) -> Result<&'static Bench, String> {
    BENCHES.iter().find(|b| b.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
        format!("unknown benchmark `{name}`; known: {}", BENCHES.iter().map(|b| b.name).collect::<Vec<_>>().join(", "))
    })
}

/// `ccsim bench --one NAME`: run one benchmark in this process and print its measurements.
fn run_one(b: &Bench) -> Result<Run, String> {
    let file = format!("bench:{}", b.name);
    let s = scenario::parse(&(b.toml)(), &file).map_err(|e| e.to_string())?;
    let cpu0 = user_cpu_s()?;
    let t0 = std::time::Instant::now();
    let built = scenario::build(&s).map_err(|e| e.in_file(&file).to_string())?;
    let o = scenario::run_built(built, |_, _| {});
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_user_s = user_cpu_s()? - cpu0;
    Ok(Run {
        name: b.name.to_string(),
        sim_time_s: o.summary.duration_s,
        data_packets_delivered: o.summary.data_packets_delivered,
        events: o.summary.events,
        cpu_user_s,
        wall_s,
        peak_rss_kib: peak_rss_kib()?,
        event_list: o.records.event_list.name().to_string(),
        flows_completed: o.summary.fct.as_ref().map_or(0, |f| f.workloads.iter().map(|w| w.completed).sum()),
    })
}

/// Run one benchmark in a child process.
fn run_child(b: &Bench) -> Result<Run, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the ccsim executable: {e}"))?;
    let out = Command::new(&exe)
        .args(["bench", "--one", b.name])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "benchmark {} failed ({}): {}",
            b.name,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).map_err(|e| format!("benchmark {}: unreadable result ({e}): {text}", b.name))
}

fn per_cpu_s(r: &Run) -> f64 {
    if r.cpu_user_s > 0.0 {
        r.data_packets_delivered as f64 / r.cpu_user_s
    } else {
        f64::NAN
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn row(b: &Bench, runs: Vec<Run>) -> Result<Row, String> {
    let first = &runs[0];
    // Same binary, same scenario: every run must do exactly the same work.
    if let Some(r) =
        runs.iter().find(|r| r.events != first.events || r.data_packets_delivered != first.data_packets_delivered)
    {
        return Err(format!(
            "benchmark {} is not deterministic: {} events / {} packets in one run, {} / {} in another",
            b.name, first.events, first.data_packets_delivered, r.events, r.data_packets_delivered
        ));
    }
    let rates: Vec<f64> = runs.iter().map(per_cpu_s).collect();
    Ok(Row {
        name: b.name.to_string(),
        description: b.what.to_string(),
        sim_time_s: first.sim_time_s,
        data_packets_delivered: first.data_packets_delivered,
        events: first.events,
        events_per_packet: first.events as f64 / first.data_packets_delivered.max(1) as f64,
        cpu_user_s: median(&runs.iter().map(|r| r.cpu_user_s).collect::<Vec<_>>()),
        wall_s: median(&runs.iter().map(|r| r.wall_s).collect::<Vec<_>>()),
        packets_per_cpu_s: median(&rates),
        packets_per_cpu_s_min: rates.iter().copied().fold(f64::INFINITY, f64::min),
        packets_per_cpu_s_max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        peak_rss_kib: runs.iter().map(|r| r.peak_rss_kib).max().unwrap_or(0),
        event_list: first.event_list.clone(),
        flows_completed: first.flows_completed,
        repeat: runs.len(),
        build: build_kind(),
        runs,
    })
}

fn table(rows: &[Row]) -> String {
    let repeat = rows.iter().map(|r| r.repeat).max().unwrap_or(1);
    let mut t = format!(
        "{:<8} {:>6} {:>11} {:>12} {:>5} {:>7} {:>8} {:>11} {:>25} {:>9}\n",
        "bench",
        "sim s",
        "data pkts",
        "events",
        "list",
        "ev/pkt",
        "CPU s",
        "pkts/CPU-s",
        if repeat > 1 { "min .. max pkts/CPU-s" } else { "" },
        "peak RSS"
    );
    for r in rows {
        let range = if r.repeat > 1 {
            format!("{:.0} .. {:.0}", r.packets_per_cpu_s_min, r.packets_per_cpu_s_max)
        } else {
            String::new()
        };
        t.push_str(&format!(
            "{:<8} {:>6} {:>11} {:>12} {:>5} {:>7.2} {:>8.2} {:>11.0} {:>25} {:>6.1} MiB\n",
            r.name,
            r.sim_time_s,
            r.data_packets_delivered,
            r.events,
            r.event_list,
            r.events_per_packet,
            r.cpu_user_s,
            r.packets_per_cpu_s,
            range,
            r.peak_rss_kib as f64 / 1024.0
        ));
    }
    for r in rows.iter().filter(|r| r.flows_completed > 0) {
        t.push_str(&format!("{}: {} workload flows completed after the warm-up\n", r.name, r.flows_completed));
    }
    if repeat > 1 {
        t.push_str(&format!("CPU s and pkts/CPU-s: median of {repeat} runs; peak RSS: largest.\n"));
    }
    t.push_str(&format!("build: {}\n", build_kind()));
    t
}

pub fn cmd(a: BenchArgs) -> Result<(), String> {
    if let Some(name) = &a.one {
        let run = run_one(find(name)?)?;
        println!("{}", serde_json::to_string(&run).map_err(|e| e.to_string())?);
        return Ok(());
    }
    if let Some(name) = &a.scenario {
        // The benchmark's scenario file, to run with `ccsim run` or to edit.
        print!("{}", (find(name)?.toml)());
        return Ok(());
    }
    let (json, repeat, args) = (a.json, a.repeat as usize, a.names);
    if a.list {
        for b in BENCHES {
            println!("{:<8} {}{}", b.name, b.what, if b.default { "" } else { " (not run by default)" });
        }
        return Ok(());
    }
    let selected: Vec<&Bench> = if args.is_empty() {
        BENCHES.iter().filter(|b| b.default).collect()
    } else {
        args.iter().map(|n| find(n)).collect::<Result<_, _>>()?
    };
    let mut rows = Vec::new();
    for b in selected {
        let mut runs = Vec::with_capacity(repeat);
        for i in 0..repeat {
            let r = run_child(b)?;
            eprintln!(
                "bench {} ({}/{repeat}): {} data packets in {:.2} CPU s, peak RSS {:.1} MiB",
                b.name,
                i + 1,
                r.data_packets_delivered,
                r.cpu_user_s,
                r.peak_rss_kib as f64 / 1024.0
            );
            runs.push(r);
        }
        rows.push(row(b, runs)?);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
    } else {
        print!("{}", table(&rows));
    }
    Ok(())
}
