//! `ccsim pdrill FILE.pkt... [--json] [--tolerance-usecs N] [--hz 250] [--dctcp-ce-ack now|delayed] [--cwr-ack now|delayed] [--rcv-window current|pre-6.10|pre-6.6] [--verbose]`: run packetdrill
//! scripts against ccsim's TCP endpoint. Exit 0 iff every script passes.

use crate::args::{AckTiming, PdrillArgs, RcvWindowArg};
use ccsim_engine::SimTime;
use ccsim_pdrill::{run_file, RunOptions, ScriptResult};
use serde::Serialize;

#[derive(Serialize)]
struct JsonResult<'a> {
    script: &'a str,
    passed: bool,
    line: Option<u32>,
    error: Option<String>,
    events: usize,
    ignored_settings: &'a [String],
    notes: &'a [String],
}

pub fn cmd(a: PdrillArgs) -> Result<bool, String> {
    let (json, verbose) = (a.json, a.verbose);
    let mut opts = RunOptions::default();
    if let Some(us) = a.tolerance_usecs {
        opts.tolerance = SimTime::from_us(us);
    }
    if let Some(h) = &a.hz {
        opts.hz = h.parse().expect("clap admits only 100, 250, 300 and 1000");
    }
    if let Some(t) = a.dctcp_ce_ack {
        opts.dctcp_ce_ack_now = t == AckTiming::Now;
    }
    if let Some(t) = a.cwr_ack {
        opts.cwr_ack_now = t == AckTiming::Now;
    }
    if let Some(w) = a.rcv_window {
        opts.rcv_window_rules = match w {
            RcvWindowArg::Current => ccsim_tcp::RcvWindowRules::Current,
            RcvWindowArg::Pre6_10 => ccsim_tcp::RcvWindowRules::Pre6_10,
            RcvWindowArg::Pre6_6 => ccsim_tcp::RcvWindowRules::Pre6_6,
        };
    }
    let args: Vec<String> = a.scripts.iter().map(|p| p.display().to_string()).collect();
    let results: Vec<ScriptResult> = args.iter().map(|p| run_file(p.as_ref(), &opts)).collect();
    let all = results.iter().all(|r| r.passed);
    if json {
        let rows: Vec<JsonResult> = results
            .iter()
            .map(|r| JsonResult {
                script: &r.path,
                passed: r.passed,
                line: r.failure.as_ref().map(|f| f.line),
                error: r.failure.as_ref().map(|f| format!("{}: {}", f.text, f.msg)),
                events: r.events,
                ignored_settings: &r.ignored,
                notes: &r.notes,
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
    } else {
        for r in &results {
            match &r.failure {
                None => println!("PASS {}", r.path),
                Some(f) => {
                    println!("FAIL {}:{}: {}", r.path, f.line, f.text);
                    for l in f.msg.lines() {
                        println!("     {l}");
                    }
                }
            }
            if verbose {
                for n in &r.notes {
                    println!("     note: {n}");
                }
                for i in &r.ignored {
                    println!("     ignored: {i}");
                }
            }
        }
        let passed = results.iter().filter(|r| r.passed).count();
        println!("{passed}/{} scripts passed", results.len());
    }
    Ok(all)
}
