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

pub mod bpf;
pub mod capture;
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

pub use plan::Options;

/// A per-run prefix for namespace and device names: `cs` + 4 hex digits.
pub fn fresh_prefix() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("cs{:04x}", ((t as u64) ^ (std::process::id() as u64) << 7) & 0xffff)
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
    let work = std::env::temp_dir().join(format!("ccsim-emulate-{}", opts.prefix));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let raw = run::run(plan, &work, progress);
    let _ = std::fs::remove_dir_all(&work);
    let raw = raw?;
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

/// Remove what an interrupted or killed emulation left behind: its namespaces (with their
/// veths, qdiscs and tc filters), BPF loaders still running, cgroups. Returns what was removed.
pub fn cleanup() -> Result<Vec<String>, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let left = netns::leftover_namespaces();
        return Err(format!(
            "ccsim emulate --cleanup needs root (it deletes network namespaces and BPF programs){}",
            if left.is_empty() { String::new() } else { format!("; left behind: {}", left.join(", ")) }
        ));
    }
    let mut removed = Vec::new();
    for ns in netns::leftover_namespaces() {
        if std::process::Command::new("ip").args(["netns", "del", &ns]).status().is_ok_and(|s| s.success()) {
            removed.push(format!("namespace {ns}"));
        }
    }
    removed.extend(bpf::cleanup_loaders());
    if let Ok(mounts) = std::fs::read_to_string("/proc/mounts") {
        if let Some(root) = mounts
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.len() > 2 && f[2] == "cgroup2")
            .map(|f| std::path::PathBuf::from(f[1]))
        {
            if let Ok(rd) = std::fs::read_dir(&root) {
                for e in rd.flatten() {
                    let name = e.file_name().to_string_lossy().to_string();
                    if name.starts_with("ccsim-cs") && netns::is_ours(&format!("{}-0", &name[6..])) {
                        // Move any process still in it out, then remove it.
                        if let Ok(procs) = std::fs::read_to_string(e.path().join("cgroup.procs")) {
                            for p in procs.lines() {
                                let _ = std::fs::write(root.join("cgroup.procs"), p);
                            }
                        }
                        if std::fs::remove_dir(e.path()).is_ok() {
                            removed.push(format!("cgroup {}", e.path().display()));
                        }
                    }
                }
            }
        }
    }
    Ok(removed)
}
