//! `ccsim`: run scenarios, reproduce the seed results, check scenario files. The commands live
//! in this library so that the Python package runs the same code (`reproduce::scorecard`).

use ccsim_scenario as scenario;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

mod bench;
mod emulate;
mod fidelity;
mod pdrill;
pub mod reproduce;
mod ss;
mod sweep;

const USAGE: &str = "ccsim — Linux-faithful datacenter congestion control, simulated at packet level

usage:
  ccsim run SCENARIO.toml --out DIR [--quiet] [--set PATH=VALUE]...
                                                run a scenario, write results to DIR; --set overrides
                                                a field (e.g. --set run.seed=7 --set tcp.cc=dctcp)
  ccsim check SCENARIO.toml [--set PATH=VALUE]...
                                                validate a scenario and print it resolved
  ccsim sweep SWEEP.toml --out DIR [--scheduler ADDRESS] [--workers N]
                                                run a parameter sweep on Dask (the Python package:
                                                pip install .); results in DIR/results.parquet
  ccsim reproduce [NAME...] [--quick] [--out DIR] [--json] [--jobs N]
                                                reproduce the seed experiments (scorecard + report),
                                                N at a time (default: one per core)
  ccsim reproduce --list                        list the experiments
  ccsim pdrill FILE.pkt... [--json] [--tolerance-usecs N] [--hz 250] [--dctcp-ce-ack now|delayed]
                [--cwr-ack now|delayed] [--verbose]
                                                run packetdrill scripts against ccsim's TCP
  ccsim ss SCENARIO.toml --at TIME [--json] [FILTER...]
                                                run to TIME (e.g. 2.5s), list the sockets as `ss -tin`;
                                                FILTER: state STATE, exclude STATE, sport/dport = :N,
                                                src/dst ADDR, dev = HOST, mark = 0xN[/0xM], cc NAME,
                                                and/or/not ( ); hosts are 10.0.0.N in topology order
  ccsim bench [NAME...] [--repeat N] [--json]   time the simulator on built-in scenarios (S1, S1-long,
                                                S2, S3 by default; smoke): data packets per CPU-second,
                                                events per packet, peak RSS; each run in its own process
  ccsim bench --list                            list the benchmarks
  ccsim bench --scenario NAME                   print a benchmark's scenario file (for ccsim run)
  ccsim emulate SCENARIO.toml --out DIR [--ignore-delay] [--max-rate RATE] [--ss-every 1s] [--quiet]
                                                run the scenario on this machine's kernel (root): network
                                                namespaces, veth, HTB, BPF ECN marking, BPF DCTCP/NV;
                                                results as `ccsim run` writes them, plus emulation.json,
                                                tcp_probe.csv and ss -tin snapshots (ss.txt; 0 = none)
  ccsim emulate --cleanup                       remove what an interrupted emulation left behind
  ccsim compare DIR_A DIR_B [--json]            score two runs of one scenario (e.g. simulated vs
                                                emulated): queue CDF distance, goodput ratio, cwnd/RTT
  ccsim fidelity [--duration 10s] [--out DIR] [--json] [--no-1g]
                                                simulator vs kernel (root) on the Mininet-HiFi network:
                                                DCTCP, CUBIC, Reno, BBR at 100 Mb/s, CUBIC at 1 Gb/s
  ccsim help                                    this text
";

/// The `ccsim` command: `args` without the program name.
pub fn main(args: Vec<String>) -> ExitCode {
    let r = match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("sweep") => sweep::cmd(&args[1..]),
        Some("check") => cmd_check(&args[1..]),
        Some("reproduce") => reproduce::cmd(&args[1..]),
        Some("ss") => ss::cmd(&args[1..]),
        Some("bench") => bench::cmd(&args[1..]),
        Some("emulate") => emulate::cmd_emulate(&args[1..]),
        Some("compare") => emulate::cmd_compare(&args[1..]),
        Some("fidelity") => fidelity::cmd(&args[1..]),
        Some("pdrill") => match pdrill::cmd(&args[1..]) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Some("help") | Some("--help") | Some("-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Pull `--flag VALUE` out of args.
pub(crate) fn take_opt(args: &mut Vec<String>, flag: &str) -> Result<Option<String>, String> {
    if let Some(i) = args.iter().position(|a| a == flag) {
        if i + 1 >= args.len() {
            return Err(format!("{flag} needs a value"));
        }
        let v = args.remove(i + 1);
        args.remove(i);
        return Ok(Some(v));
    }
    Ok(None)
}

pub(crate) fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    if let Some(i) = args.iter().position(|a| a == flag) {
        args.remove(i);
        true
    } else {
        false
    }
}

/// Pull every `--set PATH=VALUE` (or `--set=PATH=VALUE`) out of args, in order.
pub(crate) fn take_overrides(args: &mut Vec<String>) -> Result<Vec<scenario::Override>, String> {
    let mut sets = Vec::new();
    while let Some(i) = args.iter().position(|a| a == "--set" || a.starts_with("--set=")) {
        let a = args.remove(i);
        let v = match a.strip_prefix("--set=") {
            Some(v) => v.to_string(),
            None if i < args.len() => args.remove(i),
            None => return Err("--set needs PATH=VALUE, e.g. --set run.seed=7".into()),
        };
        sets.push(scenario::Override::parse(&v).map_err(|e| e.to_string())?);
    }
    Ok(sets)
}

fn cmd_check(args: &[String]) -> Result<(), String> {
    let mut args = args.to_vec();
    let sets = take_overrides(&mut args)?;
    let [path] = args.as_slice() else { return Err("usage: ccsim check SCENARIO.toml [--set PATH=VALUE]...".into()) };
    let s = scenario::load_with(path.as_ref(), &sets).map_err(|e| e.to_string())?;
    scenario::build(&s).map_err(|e| e.in_file(path).to_string())?;
    print!("{}", scenario::resolved_toml(&s));
    Ok(())
}

fn cmd_run(args: &[String]) -> Result<(), String> {
    let mut args = args.to_vec();
    let out = take_opt(&mut args, "--out")?.ok_or("ccsim run needs --out DIR")?;
    let quiet = take_flag(&mut args, "--quiet");
    let sets = take_overrides(&mut args)?;
    let [path] = args.as_slice() else {
        return Err("usage: ccsim run SCENARIO.toml --out DIR [--set PATH=VALUE]...".into());
    };
    let s = scenario::load_with(path.as_ref(), &sets).map_err(|e| e.to_string())?;
    let built = scenario::build(&s).map_err(|e| e.in_file(path).to_string())?;
    let resolved = scenario::resolved_toml(&s);
    let start = std::time::Instant::now();
    let mut last = 0.0f64;
    let dir = PathBuf::from(&out);
    let outcome = scenario::run_to_dir(built, &resolved, &dir, |t, total| {
        if quiet {
            return;
        }
        let el = start.elapsed().as_secs_f64();
        if el - last >= 0.5 {
            last = el;
            eprint!(
                "\r{}: {:.1}/{:.1} s simulated ({:.0}%)",
                path,
                t.secs_f64(),
                total.secs_f64(),
                100.0 * t.secs_f64() / total.secs_f64()
            );
            let _ = std::io::stderr().flush();
        }
    })?;
    if !quiet && last > 0.0 {
        eprintln!();
    }
    if !quiet {
        print_summary(&outcome.summary, &dir);
    }
    Ok(())
}

/// The lines `ccsim run` and `ccsim emulate` print when they finish: each monitored queue, flow
/// and ping probe in one line, and where the results are.
pub(crate) fn print_summary(s: &scenario::Summary, dir: &std::path::Path) {
    for q in &s.queues {
        eprintln!(
            "queue {}: p50 {} p99 {} max {} pkts, utilisation {:.1}%, drops {}, marks {}",
            q.port,
            q.p50,
            q.p99,
            q.max,
            100.0 * q.utilisation,
            q.drops,
            q.marks
        );
    }
    for f in &s.flows {
        eprintln!(
            "flow {} ({}): {:.2} Mb/s, {} retransmits, {} RTOs",
            f.name, f.cc, f.goodput_mbps, f.retransmits, f.rto_count
        );
    }
    for p in &s.pings {
        eprintln!(
            "ping {}: p50 {:.3} ms, p99 {:.3} ms ({}/{} answered)",
            p.name, p.p50_ms, p.p99_ms, p.received, p.sent
        );
    }
    if let Some(fct) = &s.fct {
        for line in fct.lines() {
            eprintln!("{line}");
        }
    }
    eprintln!("results in {}", dir.display());
}
