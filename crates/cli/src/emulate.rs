//! `ccsim emulate` and `ccsim compare`.

use crate::args::{CompareArgs, EmulateArgs};
use ccsim_emulate as emulate;
use std::io::Write;
use std::path::PathBuf;

/// `ccsim emulate --cleanup`: say what was removed, what was left alone and why; fail if a run
/// was refused or something could not be removed.
fn cleanup() -> Result<(), String> {
    let report = emulate::cleanup()?;
    for r in &report.removed {
        eprintln!("removed {r}");
    }
    for l in &report.left_alone {
        eprintln!("{l}");
    }
    if report.removed.is_empty() && report.refused.is_empty() && report.failed.is_empty() {
        eprintln!("nothing to clean up");
    }
    let problems: Vec<String> =
        report.refused.iter().cloned().chain(report.failed.iter().map(|f| format!("could not remove {f}"))).collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

pub fn cmd_emulate(a: EmulateArgs) -> Result<(), String> {
    if a.cleanup {
        return cleanup();
    }
    let (Some(path), Some(out)) = (a.scenario, a.out) else {
        return Err("ccsim emulate needs SCENARIO.toml and --out DIR (or --cleanup)".into());
    };
    let path = path.display().to_string();
    let quiet = a.quiet;
    let mut opts = emulate::Options { ignore_delay: a.ignore_delay, ..Default::default() };
    if let Some(r) = a.max_rate {
        let q: ccsim_scenario::Quantity = r.as_str().into();
        opts.max_rate_bps =
            ccsim_scenario::parse_rate(&q, "--max-rate").map_err(|e| format!("--max-rate: {}", e.msg))?;
    }
    if let Some(d) = a.ss_every {
        let q: ccsim_scenario::Quantity = d.as_str().into();
        opts.ss_every_ns = ccsim_scenario::parse_duration(&q, "--ss-every", ccsim_scenario::DurationRange::NonNegative)
            .map_err(|e| format!("--ss-every: {}", e.msg))?
            .ns();
    }
    let dir = PathBuf::from(&out);
    let mut progress = |m: &str| {
        if !quiet {
            // After a SIGHUP the terminal may be gone: the run goes on to clean up regardless.
            let _ = writeln!(std::io::stderr(), "{path}: {m}");
        }
    };
    let summary = emulate::emulate(path.as_ref(), &dir, opts, &mut progress)?;
    if !quiet {
        crate::print_summary(&summary, &dir);
    }
    Ok(())
}

pub fn cmd_compare(a: CompareArgs) -> Result<(), String> {
    let json = a.json;
    let (a, b) = (a.a, a.b);
    let c = emulate::compare::compare(&a, &b)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&c).map_err(|e| e.to_string())?);
    } else {
        print!("{}", emulate::compare::table(&c));
    }
    Ok(())
}
