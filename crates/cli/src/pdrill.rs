//! `ccsim pdrill FILE.pkt... [--json] [--tolerance-usecs N] [--hz 250] [--dctcp-ce-ack now|delayed] [--cwr-ack now|delayed] [--verbose]`: run packetdrill
//! scripts against ccsim's TCP endpoint. Exit 0 iff every script passes.

use crate::{take_flag, take_opt};
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

pub fn cmd(args: &[String]) -> Result<bool, String> {
    let mut args = args.to_vec();
    let json = take_flag(&mut args, "--json");
    let verbose = take_flag(&mut args, "--verbose");
    let mut opts = RunOptions::default();
    if let Some(t) = take_opt(&mut args, "--tolerance-usecs")? {
        let us: u64 = t.parse().map_err(|_| format!("--tolerance-usecs: `{t}` is not a number of microseconds"))?;
        opts.tolerance = SimTime::from_us(us);
    }
    if let Some(h) = take_opt(&mut args, "--hz")? {
        opts.hz = match h.parse() {
            Ok(v @ (100 | 250 | 300 | 1000)) => v,
            _ => return Err(format!("--hz: `{h}`: one of 100, 250, 300, 1000 (the kernel's CONFIG_HZ)")),
        };
    }
    if let Some(v) = take_opt(&mut args, "--dctcp-ce-ack")? {
        opts.dctcp_ce_ack_now = match v.as_str() {
            "now" => true,
            "delayed" => false,
            _ => return Err(format!("--dctcp-ce-ack: `{v}`: `now` (Linux 4.19+) or `delayed` (earlier kernels)")),
        };
    }
    if let Some(v) = take_opt(&mut args, "--cwr-ack")? {
        opts.cwr_ack_now = match v.as_str() {
            "now" => true,
            "delayed" => false,
            _ => return Err(format!("--cwr-ack: `{v}`: `now` (Linux 5.3+) or `delayed` (earlier kernels)")),
        };
    }
    if let Some(a) = args.iter().find(|a| a.starts_with("--")) {
        return Err(format!("unknown option `{a}` for pdrill"));
    }
    if args.is_empty() {
        return Err("usage: ccsim pdrill FILE.pkt... [--json] [--tolerance-usecs N] [--hz 250] [--dctcp-ce-ack now|delayed] [--cwr-ack now|delayed] [--verbose]".into());
    }
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
