//! `ccsim`: run scenarios, reproduce the seed results, check scenario files. The commands live
//! in this library so that the Python package runs the same code (`reproduce::scorecard`).

use args::{CheckArgs, Cli, Command};
use ccsim_scenario as scenario;
use clap::{CommandFactory, Parser};
use std::process::ExitCode;

pub mod args;
mod bench;
mod conformance;
mod emulate;
mod fidelity;
mod limits;
mod pdrill;
pub mod reproduce;
mod run;
mod ss;
mod sweep;

#[doc(hidden)]
pub use ss::fuzz_filter;

/// The `ccsim` command: `args` without the program name.
pub fn main(args: Vec<String>) -> ExitCode {
    // A closed pipe (`ccsim ss ... | head`) ends the program quietly, as it ends `ls` or `grep`,
    // instead of a panic on the next write.
    // SAFETY: setting a signal's disposition to the default before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse_from(std::iter::once("ccsim".to_string()).chain(args)) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors; a usage error exits 2.
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let r = match cli.command {
        Command::Run(a) => match run::cmd(a) {
            Ok(()) => Ok(()),
            Err(run::RunEnd::Failed(e)) => Err(e),
            Err(run::RunEnd::Interrupted) => return ExitCode::from(run::EXIT_INTERRUPTED),
        },
        Command::Check(a) => cmd_check(a),
        Command::Reproduce(a) => reproduce::cmd(a),
        Command::Sweep(a) => sweep::cmd(a),
        Command::Ss(a) => ss::cmd(a),
        Command::Bench(a) => bench::cmd(a),
        Command::Emulate(a) => emulate::cmd_emulate(a),
        Command::Compare(a) => emulate::cmd_compare(a),
        Command::Fidelity(a) => fidelity::cmd(a),
        Command::Completions(a) => {
            clap_complete::generate(a.shell, &mut Cli::command(), "ccsim", &mut std::io::stdout());
            Ok(())
        }
        Command::Conformance(a) => match conformance::cmd(a) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Command::Pdrill(a) => match pdrill::cmd(a) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `--set PATH=VALUE` overrides, parsed.
pub(crate) fn overrides(sets: &[String]) -> Result<Vec<scenario::Override>, String> {
    sets.iter().map(|s| scenario::Override::parse(s).map_err(|e| e.to_string())).collect()
}

fn cmd_check(a: CheckArgs) -> Result<(), String> {
    let path = a.scenario.display().to_string();
    let s = scenario::load_with(&a.scenario, &overrides(&a.sets)?).map_err(|e| e.to_string())?;
    let built = scenario::build(&s).map_err(|e| e.in_file(&path).to_string())?;
    for w in scenario::warnings(&s, &built) {
        eprintln!("warning: {path}: {w}");
    }
    let est = scenario::estimate(&built);
    for w in limits::warnings(&est) {
        eprintln!("warning: {path}: {w}");
    }
    for line in est.lines() {
        eprintln!("estimate: {line}");
    }
    print!("{}", scenario::resolved_toml(&s));
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
    for c in &s.captures {
        let beyond = if c.beyond_limit > 0 {
            format!(" ({} more past record.pcap_max_packets, not written)", c.beyond_limit)
        } else {
            String::new()
        };
        eprintln!("capture {}: {} packets in {}{beyond}", c.name, c.packets, c.file);
    }
    eprintln!("results in {}", dir.display());
}
