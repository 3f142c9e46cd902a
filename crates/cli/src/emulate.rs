//! `ccsim emulate` and `ccsim compare`.

use crate::{take_flag, take_opt};
use ccsim_emulate as emulate;
use std::path::PathBuf;

pub fn cmd_emulate(args: &[String]) -> Result<(), String> {
    let mut args = args.to_vec();
    if take_flag(&mut args, "--cleanup") {
        if !args.is_empty() {
            return Err("usage: ccsim emulate --cleanup".into());
        }
        let removed = emulate::cleanup()?;
        if removed.is_empty() {
            eprintln!("nothing to clean up");
        }
        for r in removed {
            eprintln!("removed {r}");
        }
        return Ok(());
    }
    let out = take_opt(&mut args, "--out")?.ok_or("ccsim emulate needs --out DIR")?;
    let quiet = take_flag(&mut args, "--quiet");
    let mut opts = emulate::Options { ignore_delay: take_flag(&mut args, "--ignore-delay"), ..Default::default() };
    if let Some(r) = take_opt(&mut args, "--max-rate")? {
        let q: ccsim_scenario::Quantity = r.as_str().into();
        opts.max_rate_bps =
            ccsim_scenario::parse_rate(&q, "--max-rate").map_err(|e| format!("--max-rate: {}", e.msg))?;
    }
    if let Some(d) = take_opt(&mut args, "--ss-every")? {
        let q: ccsim_scenario::Quantity = d.as_str().into();
        opts.ss_every_ns = ccsim_scenario::parse_duration(&q, "--ss-every", ccsim_scenario::DurationRange::NonNegative)
            .map_err(|e| format!("--ss-every: {}", e.msg))?
            .ns();
    }
    let [path] = args.as_slice() else {
        return Err(
            "usage: ccsim emulate SCENARIO.toml --out DIR [--ignore-delay] [--max-rate RATE] [--ss-every 1s|0] [--quiet]"
                .into(),
        );
    };
    let dir = PathBuf::from(&out);
    let mut progress = |m: &str| {
        if !quiet {
            eprintln!("{path}: {m}");
        }
    };
    let summary = emulate::emulate(path.as_ref(), &dir, opts, &mut progress)?;
    if !quiet {
        crate::print_summary(&summary, &dir);
    }
    Ok(())
}

pub fn cmd_compare(args: &[String]) -> Result<(), String> {
    let mut args = args.to_vec();
    let json = take_flag(&mut args, "--json");
    let [a, b] = args.as_slice() else { return Err("usage: ccsim compare DIR_A DIR_B [--json]".into()) };
    let c = emulate::compare::compare(a.as_ref(), b.as_ref())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&c).map_err(|e| e.to_string())?);
    } else {
        print!("{}", emulate::compare::table(&c));
    }
    Ok(())
}
