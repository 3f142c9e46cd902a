//! The resource guard of `ccsim run`: the pre-run estimate (`ccsim_scenario::estimate`) against
//! the memory and disk the run may use. Above the limits the run is refused before it starts,
//! saying what would need less; above the warning thresholds it is said and the run goes on.

use ccsim_scenario::{self as scenario, human_bytes, largest_parts, Estimate};
use std::path::Path;

/// The share of the machine's memory a run may take unless `--max-memory` says otherwise.
const MEMORY_SHARE: f64 = 0.8;

/// What a run may use.
pub struct Limits {
    pub memory: Option<u64>,
    pub output: Option<u64>,
}

impl Limits {
    /// `--max-memory` or 80 % of the machine's memory; `--max-output` or the free space where
    /// the results go (`dir`'s file system). None where the machine does not say.
    pub fn new(max_memory: Option<u64>, max_output: Option<u64>, dir: &Path) -> Limits {
        Limits {
            memory: max_memory.or_else(|| mem_total().map(|m| (m as f64 * MEMORY_SHARE) as u64)),
            output: max_output.or_else(|| free_space(dir)),
        }
    }

    /// Refuse `est` if it is above a limit; the message names the file and what needs less.
    pub fn check(&self, est: &Estimate, file: &str) -> Result<(), String> {
        if let Some(limit) = self.memory.filter(|&l| est.memory_bytes() > l) {
            return Err(format!(
                "{file}: the run would need about {} of memory ({}), above the limit of {}; \
                 a longer record.interval, record.series = false, fewer ports in record.queues or a \
                 shorter run.duration need less (or raise --max-memory)",
                human_bytes(est.memory_bytes()),
                largest_parts(&est.memory, 3),
                human_bytes(limit)
            ));
        }
        if let Some(limit) = self.output.filter(|&l| est.output_bytes() > l) {
            return Err(format!(
                "{file}: the results would take about {} ({}), above the limit of {} (the free space \
                 where they go, or --max-output); record.series = false, a longer record.interval, \
                 fewer captures or a lower record.pcap_max_packets write less",
                human_bytes(est.output_bytes()),
                largest_parts(&est.output, 3),
                human_bytes(limit)
            ));
        }
        Ok(())
    }
}

/// Warnings for an estimate above the thresholds (each with its size).
pub fn warnings(est: &Estimate) -> Vec<String> {
    let mut w = Vec::new();
    if est.memory_bytes() > scenario::WARN_MEMORY_BYTES {
        w.push(format!(
            "the run will need about {} of memory ({})",
            human_bytes(est.memory_bytes()),
            largest_parts(&est.memory, 3)
        ));
    } else if est.memory_bytes() + est.queued_packets_bound > scenario::WARN_MEMORY_BYTES {
        w.push(format!(
            "the run may need up to {} of memory if every queue fills ({} for the network and records, {} for \
             the packets)",
            human_bytes(est.memory_bytes() + est.queued_packets_bound),
            human_bytes(est.memory_bytes()),
            human_bytes(est.queued_packets_bound)
        ));
    }
    if est.output_bytes() > scenario::WARN_OUTPUT_BYTES {
        w.push(format!(
            "the results will take about {} ({})",
            human_bytes(est.output_bytes()),
            largest_parts(&est.output, 3)
        ));
    }
    if est.files > scenario::WARN_FILES {
        w.push(format!("the results will be {} files", est.files));
    }
    w
}

/// `MemTotal` of /proc/meminfo, bytes.
fn mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes free for an unprivileged user on the file system that holds `dir` (or its nearest
/// existing ancestor).
fn free_space(dir: &Path) -> Option<u64> {
    let mut p = dir;
    while !p.exists() {
        p = p.parent().filter(|q| !q.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if p == Path::new(".") {
            break;
        }
    }
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs is plain old data, valid when zeroed.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a statvfs struct to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// A size argument ("8GB", "500MB", "2GiB"), as the scenario files write sizes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    scenario::parse_bytes(&scenario::Quantity::from(s), "").map_err(|e| e.msg)
}
