//! `ccsim emulate --cleanup`: remove exactly what the registries of dead runs list, and nothing
//! else (see [`crate::registry`]).

use crate::registry::{self, LockAttempt, LockRole, ProcessId, RecordedRun, Registry, Resource};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What `--cleanup` did.
#[derive(Debug, Default)]
pub struct CleanupReport {
    /// Each thing removed, with the run that made it, and each registry file removed.
    pub removed: Vec<String>,
    /// Runs still alive, whose things were not touched.
    pub refused: Vec<String>,
    /// Things that could not be removed (still listed in their registry) and unreadable
    /// registries.
    pub failed: Vec<String>,
    /// Namespaces named like ccsim's that no registry lists.
    pub left_alone: Vec<String>,
}

/// How removing one thing went.
enum Removal {
    Removed,
    /// Not there (a kill -9 came before it was created, or it went with something else).
    AlreadyGone,
    Failed(String),
}

/// Cleans up after the dead runs recorded in `dir`.
pub fn cleanup(dir: &Path) -> Result<CleanupReport, String> {
    // Holding the lock keeps a new run from starting halfway through. While a run holds it, that
    // run's registry is refused below; no other registry can be live then.
    let _lock = match registry::try_lock(dir, LockRole::Cleanup)? {
        LockAttempt::Acquired(lock) => Some(lock),
        LockAttempt::Held(holder) if holder.role == Some(LockRole::Cleanup) => {
            return Err(format!(
                "another `ccsim emulate --cleanup` is running ({}); let it finish",
                holder.pid.map(|p| format!("pid {p}")).unwrap_or_else(|| "pid not known yet".into())
            ))
        }
        LockAttempt::Held(_) => None,
    };
    let mut report = CleanupReport::default();
    let runs = registry::recorded_runs(dir)?;
    for run in &runs {
        clean_run(run, &mut report);
    }
    for tmp in registry::temporary_files(dir) {
        if temporary_is_stale(&tmp) && std::fs::remove_file(&tmp).is_ok() {
            report.removed.push(format!("temporary registry file {}", tmp.display()));
        }
    }
    let recorded: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.registry.as_ref().ok())
        .flat_map(|r| r.created.iter())
        .filter_map(|res| match res {
            Resource::Namespace { name } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    for ns in crate::netns::ccsim_like_namespaces() {
        if !recorded.contains(&ns.as_str()) {
            report.left_alone.push(format!("namespace {ns}: not created by a recorded ccsim run, left alone"));
        }
    }
    Ok(report)
}

fn clean_run(run: &RecordedRun, report: &mut CleanupReport) {
    let reg = match &run.registry {
        Ok(r) => r,
        Err(e) => {
            report
                .failed
                .push(format!("{e}; if no ccsim emulation is running, inspect the file and delete it by hand"));
            return;
        }
    };
    if reg.owner_is_running() {
        report.refused.push(format!(
            "run pid {} is still running; stop it first (its registry: {})",
            reg.owner.pid,
            run.path.display()
        ));
        return;
    }
    let mut kept = Vec::new();
    for res in reg.created.iter().rev() {
        match remove(res, reg) {
            Removal::Removed => report.removed.push(format!("{res} (run pid {})", reg.owner.pid)),
            Removal::AlreadyGone => {}
            Removal::Failed(e) => {
                report.failed.push(format!("{res} (run pid {}): {e}", reg.owner.pid));
                kept.push(res.clone());
            }
        }
    }
    if kept.is_empty() {
        match std::fs::remove_file(&run.path) {
            Ok(()) => report.removed.push(format!("registry {}", run.path.display())),
            Err(e) => report.failed.push(format!("registry {}: {e}", run.path.display())),
        }
    } else {
        // Keep the file truthful: it lists what is still there, for the next --cleanup.
        kept.reverse();
        let rest = Registry { created: kept, ..reg.clone() };
        if let Err(e) = registry::write_atomically(&run.path, &rest) {
            report.failed.push(format!("cannot update {}: {e}", run.path.display()));
        }
    }
}

/// A temporary registry file is stale once its owner is gone and its registry was dealt with.
fn temporary_is_stale(tmp: &Path) -> bool {
    if registry::registry_of_temporary(tmp).exists() {
        return false;
    }
    match registry::read_registry(tmp) {
        Ok(r) => !r.owner_is_running(),
        // Cut short by a kill: the pid in its name is all there is to go by.
        Err(_) => registry::owner_pid_of_name(tmp).is_some_and(|pid| ProcessId::of(pid).is_err()),
    }
}

fn remove(res: &Resource, reg: &Registry) -> Removal {
    match res {
        Resource::Namespace { name } => remove_namespace(name),
        Resource::Cgroup { path } => remove_cgroup(path),
        Resource::TracefsMount { path } => unmount_tracefs(path),
        Resource::FtraceInstance { path } => remove_ftrace_instance(path),
        Resource::BpfLoader(p) => stop_loader(p, reg),
        Resource::WorkDir { path } => match std::fs::symlink_metadata(path) {
            Err(_) => Removal::AlreadyGone,
            Ok(_) => match std::fs::remove_dir_all(path) {
                Ok(()) => Removal::Removed,
                Err(e) => Removal::Failed(e.to_string()),
            },
        },
    }
}

fn remove_namespace(name: &str) -> Removal {
    if !crate::sys::netns_path(name).exists() {
        return Removal::AlreadyGone;
    }
    match Command::new("ip").args(["netns", "del", name]).output() {
        Ok(o) if o.status.success() => Removal::Removed,
        Ok(o) => {
            Removal::Failed(format!("`ip netns del {name}` failed: {}", String::from_utf8_lossy(&o.stderr).trim()))
        }
        Err(e) => Removal::Failed(format!("cannot run ip: {e}")),
    }
}

fn remove_cgroup(path: &Path) -> Removal {
    if !path.is_dir() {
        return Removal::AlreadyGone;
    }
    // A cgroup can be removed only when empty: move what is left (the loader was stopped before)
    // to the parent it was made under.
    if let (Ok(procs), Some(parent)) = (std::fs::read_to_string(path.join("cgroup.procs")), path.parent()) {
        for p in procs.lines() {
            let _ = std::fs::write(parent.join("cgroup.procs"), p);
        }
    }
    match std::fs::remove_dir(path) {
        Ok(()) => Removal::Removed,
        Err(e) => Removal::Failed(e.to_string()),
    }
}

/// Whether a tracefs is mounted at `path` now.
pub fn tracefs_mounted_at(path: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 2 && f[2] == "tracefs" && Path::new(f[1]) == path
    })
}

fn unmount_tracefs(path: &Path) -> Removal {
    if !tracefs_mounted_at(path) {
        return Removal::AlreadyGone;
    }
    match Command::new("umount").arg(path).output() {
        Ok(o) if o.status.success() => Removal::Removed,
        Ok(o) => Removal::Failed(format!("umount failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => Removal::Failed(format!("cannot run umount: {e}")),
    }
}

fn remove_ftrace_instance(path: &Path) -> Removal {
    if !path.is_dir() {
        return Removal::AlreadyGone;
    }
    // Removing the instance stops its tracing and frees its buffer.
    match std::fs::remove_dir(path) {
        Ok(()) => Removal::Removed,
        Err(e) => Removal::Failed(e.to_string()),
    }
}

/// Stops the loader, if that very process still runs: its BPF links close with it, and its tc
/// filters went with the namespaces (or go with them).
fn stop_loader(p: &ProcessId, reg: &Registry) -> Removal {
    if reg.boot_id != registry::boot_id() || !p.is_running() {
        return Removal::AlreadyGone;
    }
    for (sig, wait) in [(libc::SIGTERM, Duration::from_secs(2)), (libc::SIGKILL, Duration::from_secs(2))] {
        // SAFETY: kill(2) has no memory-safety preconditions; the pid was checked to be the
        // recorded process (same start time) just before.
        unsafe {
            libc::kill(p.pid as libc::pid_t, sig);
        }
        let deadline = Instant::now() + wait;
        while p.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !p.is_running() {
            return Removal::Removed;
        }
    }
    Removal::Failed("still running after SIGTERM and SIGKILL".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A scratch directory, removed when dropped.
    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn registry(owner: ProcessId, prefix: &str, created: Vec<Resource>) -> Registry {
        Registry { format: 1, owner, boot_id: registry::boot_id(), prefix: prefix.into(), created }
    }

    #[test]
    fn removes_what_dead_runs_list_and_refuses_live_ones() {
        let base = Dir(std::env::temp_dir().join(format!("ccsim-cleanup-test-{}", std::process::id())));
        let run_dir = base.0.join("run");
        let work = base.0.join("ccsim-emulate-csdead");
        std::fs::create_dir_all(work.join("inside")).unwrap();
        let me = ProcessId::current().unwrap();
        // The same pid with another start time: a dead run whose pid was reused since.
        let dead = ProcessId { start_ticks: me.start_ticks + 1, ..me };
        std::fs::create_dir_all(&run_dir).unwrap();
        let dead_file = registry::registry_path(&run_dir, dead.pid, "csdead");
        let listed = vec![
            Resource::WorkDir { path: work.clone() },
            // Recorded, then killed before `ip netns add`: nothing to remove, nothing to report.
            Resource::Namespace { name: "csdead-0".into() },
        ];
        registry::write_atomically(&dead_file, &registry(dead, "csdead", listed)).unwrap();
        let live_file = run_dir.join("emulate-1-cslive.json");
        let live = vec![Resource::WorkDir { path: base.0.join("live") }];
        registry::write_atomically(&live_file, &registry(me, "cslive", live)).unwrap();
        let bad_file = run_dir.join("emulate-2-csbad0.json");
        std::fs::write(&bad_file, "[]").unwrap();

        let report = cleanup(&run_dir).unwrap();
        assert_eq!(
            report.removed,
            vec![
                format!("work directory {} (run pid {})", work.display(), dead.pid),
                format!("registry {}", dead_file.display()),
            ]
        );
        assert!(!work.exists() && !dead_file.exists());
        assert_eq!(report.refused.len(), 1, "{report:?}");
        assert!(report.refused[0].starts_with(&format!("run pid {} is still running; stop it first", me.pid)));
        assert!(live_file.exists(), "a live run's registry is not touched");
        assert_eq!(report.failed.len(), 1, "{report:?}");
        assert!(report.failed[0].contains(&bad_file.display().to_string()), "{report:?}");
        assert!(bad_file.exists(), "an unreadable registry is left for a person to look at");
    }
}
