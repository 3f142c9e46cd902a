//! `ccsim emulate`: the same scenario on the real Linux kernel of this machine.
//!
//! One network namespace per host and per switch, veth pairs with offloads off, HTB at the link
//! rate with a FIFO of the scenario's buffer on every port, DCTCP-style ECN marking by a tc
//! egress BPF program, and the kernel's own TCP with reno/cubic/bbr or the BPF struct_ops DCTCP
//! and TCP-NV built with ccsim. Results come out in the `summary.json` schema of `ccsim run`;
//! `compare` scores two runs of one scenario against each other.
//!
//! The flow is the simulator's: scenario → `plan` (pure, refuses what the kernel cannot do) →
//! `netns` (build) + `bpf` (load) → `traffic` (applications, sampling in `run`) → `results`.
//! One emulation at a time holds the lock in `registry`, and records there everything it makes,
//! so that `cleanup` can remove what a killed run left, and nothing else.

pub mod bpf;
pub mod capture;
pub mod cleanup;
pub mod compare;
pub mod netns;
pub mod plan;
pub mod qpoll;
pub mod registry;
pub mod results;
pub mod run;
pub mod sys;
pub mod trace;
pub mod traffic;

pub use cleanup::CleanupReport;
pub use plan::Options;

/// A per-run prefix for namespace and device names: `cs` + 4 hex digits, one that no existing
/// namespace starts with (a namespace named like ccsim's may be somebody else's).
pub fn fresh_prefix() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let seed = ((t as u64) ^ (std::process::id() as u64) << 7) & 0xffff;
    let existing = netns::ccsim_like_namespaces();
    (0..0x1_0000u64)
        .map(|i| format!("cs{:04x}", (seed + i * 0x9e37) & 0xffff))
        .find(|p| !existing.iter().any(|n| n.strip_prefix(p.as_str()).is_some_and(|rest| rest.starts_with('-'))))
        .unwrap_or_else(|| format!("cs{seed:04x}"))
}

/// Emulate a scenario file into `out`. `opts.prefix` is replaced by a fresh one.
pub fn emulate(
    path: &std::path::Path,
    out: &std::path::Path,
    opts: Options,
    progress: &mut dyn FnMut(&str),
) -> Result<ccsim_scenario::Summary, String> {
    let s = ccsim_scenario::load(path).map_err(|e| e.to_string())?;
    emulate_scenario(&s, &path.display().to_string(), out, opts, progress)
}

/// Emulate a parsed scenario (`file` names it in errors) into `out`.
pub fn emulate_scenario(
    s: &ccsim_scenario::Scenario,
    file: &str,
    out: &std::path::Path,
    mut opts: Options,
    progress: &mut dyn FnMut(&str),
) -> Result<ccsim_scenario::Summary, String> {
    let built = ccsim_scenario::build(s).map_err(|e| e.in_file(file).to_string())?;
    opts.prefix = fresh_prefix();
    let plan = plan::plan(s, &built, file, &opts)?;
    let raw = run::run(plan, progress)?;
    let summary = results::write(&raw, &ccsim_scenario::resolved_toml(s), out)
        .map_err(|e| format!("{}: cannot write results: {e}", out.display()))?;
    if raw.interrupted {
        return Err(format!(
            "interrupted: everything was cleaned up; partial series are in {} (no summary.json)",
            out.display()
        ));
    }
    Ok(summary)
}

/// Remove what killed emulations left behind, as their registries in [`registry::RUN_DIR`] list
/// it: namespaces (with their veths, qdiscs and tc filters), cgroups, ftrace instances, tracefs
/// mounts ccsim made, BPF loader processes, work directories. A run whose process is alive is
/// refused; namespaces no registry lists are left alone, whatever their name.
pub fn cleanup() -> Result<CleanupReport, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!(
            "ccsim emulate --cleanup needs root (it deletes network namespaces, cgroups and ftrace instances \
             recorded in {})",
            registry::RUN_DIR
        ));
    }
    cleanup::cleanup(std::path::Path::new(registry::RUN_DIR))
}
