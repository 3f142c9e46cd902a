//! `ccsim conformance`: packetdrill's TCP suite against ccsim, beside what Linux 6.18 does with
//! each script (the manifest shipped with ccsim). Exit 1 only where ccsim fails a script Linux
//! passes.

use crate::args::ConformanceArgs;
use ccsim_pdrill::{manifest, run_file, suite_dir, RunOptions, SUITE_HOW};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Serialize)]
struct Line {
    script: String,
    in_scope: bool,
    linux: String,
    /// Linux passes it (`ManifestEntry::linux_passes`).
    linux_passes: bool,
    ccsim: String,
    /// Where ccsim stopped and why, when it failed.
    failure: Option<String>,
    /// The manifest's note: why a script Linux passes still fails in ccsim.
    #[serde(skip_serializing_if = "String::is_empty")]
    note: String,
}

/// `Ok(true)`: ccsim passes every script Linux passes among those run.
pub fn cmd(a: ConformanceArgs) -> Result<bool, String> {
    let suite: PathBuf = match a.suite {
        Some(d) if d.is_dir() => d,
        Some(d) => return Err(format!("{}: not a directory; --suite names {SUITE_HOW}", d.display())),
        None => suite_dir(Path::new(".")).ok_or_else(|| format!("the suite was not found: {SUITE_HOW}"))?,
    };
    let opts = RunOptions::default();
    let mut lines = Vec::new();
    for e in manifest().into_iter().filter(|e| a.all || e.in_scope) {
        let r = run_file(&suite.join("upstream").join(&e.script), &opts);
        let failure = r.failure.as_ref().map(|f| format!("line {}: {}", f.line, f.msg.lines().next().unwrap_or("")));
        lines.push(Line {
            script: e.script.clone(),
            in_scope: e.in_scope,
            linux: e.linux.clone(),
            linux_passes: e.linux_passes(),
            ccsim: if r.passed { "pass".into() } else { "fail".into() },
            failure,
            note: e.note.clone(),
        });
    }
    let regressions = lines.iter().filter(|l| l.linux_passes && l.ccsim != "pass").count();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&lines).map_err(|e| e.to_string())?);
    } else {
        println!("{:<58} {:<10} {:<6} why", "script", "linux", "ccsim");
        for l in &lines {
            println!(
                "{:<58} {:<10} {:<6} {}",
                l.script,
                l.linux,
                l.ccsim,
                l.failure.as_deref().unwrap_or("").chars().take(90).collect::<String>()
            );
        }
        for l in lines.iter().filter(|l| l.linux_passes && l.ccsim != "pass" && !l.note.is_empty()) {
            println!("why {} still fails: {}", l.script, l.note);
        }
        let in_scope: Vec<&Line> = lines.iter().filter(|l| l.in_scope).collect();
        let lp: Vec<&&Line> = in_scope.iter().filter(|l| l.linux_passes).collect();
        println!(
            "in scope: {} scripts, {} passed by Linux 6.18; ccsim passes {} of those {} ({} in scope in all)",
            in_scope.len(),
            lp.len(),
            lp.iter().filter(|l| l.ccsim == "pass").count(),
            lp.len(),
            in_scope.iter().filter(|l| l.ccsim == "pass").count()
        );
        if a.all {
            println!(
                "whole suite: ccsim passes {} of {}, Linux {}",
                lines.iter().filter(|l| l.ccsim == "pass").count(),
                lines.len(),
                lines.iter().filter(|l| l.linux_passes).count()
            );
        }
    }
    Ok(regressions == 0)
}
