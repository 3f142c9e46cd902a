//! Flow completion times of the flows workloads open: `fct.csv` written while the run goes on,
//! and the analysis researchers report — slowdown (FCT over the flow's ideal FCT) by flow size,
//! in fixed bins and in equal-count bins as HPCC's `fct_analysis.py` makes them, group (incast
//! round) completion times, timeouts — for `summary.json`, the end of `ccsim run` and a plot.

use ccsim_engine::SimTime;
use ccsim_net::{FlowDone, FlowSink};
use serde::Serialize;
use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};

mod extsort;
use extsort::{BySize, ExtSorter, Spill};

/// What the analysis keeps of a flow (a few words; the full row is in `fct.csv`).
#[derive(Clone, Copy, Debug)]
struct Point {
    workload: u32,
    size: u64,
    start: SimTime,
    /// FCT and slowdown (None: not completed).
    fct: Option<SimTime>,
    slowdown: f64,
    rtos: u32,
    group: u64,
}

/// Collects finished flows: streams each as a row of `fct.csv` (when writing one) and keeps
/// its point for the analysis.
pub struct FctCollector {
    inner: Arc<Mutex<Collected>>,
}

struct Collected {
    hosts: Vec<String>,
    workloads: Vec<String>,
    csv: Option<BufWriter<std::fs::File>>,
    /// Where `fct.csv` is: the analysis reads it back at the end instead of keeping a point per
    /// flow in memory, so that memory follows the connections open at once.
    csv_path: Option<std::path::PathBuf>,
    error: Option<std::io::Error>,
    points: Vec<Point>,
}

/// The header of `fct.csv`.
pub const FCT_CSV_HEADER: &str =
    "id,workload,group,src,dst,size_bytes,start_s,end_s,fct_s,ideal_fct_s,slowdown,retransmits,rtos,cc";

/// Seconds with nanosecond precision, as written in `fct.csv`.
fn secs(t: SimTime) -> String {
    format!("{}.{:09}", t.ns() / 1_000_000_000, t.ns() % 1_000_000_000)
}

impl FctCollector {
    /// A collector writing `fct.csv` to `csv` (None: analysis only, from points kept in
    /// memory); `hosts` are the topology's node names, `workloads` the workloads' names in
    /// `Sim::add_traffic` order.
    pub fn new(hosts: Vec<String>, workloads: Vec<String>, csv: Option<FctFile>) -> std::io::Result<Self> {
        let (mut csv, csv_path) = match csv {
            Some(f) => (Some(BufWriter::new(f.file)), Some(f.path)),
            None => (None, None),
        };
        if let Some(w) = &mut csv {
            writeln!(w, "{FCT_CSV_HEADER}")?;
        }
        Ok(FctCollector {
            inner: Arc::new(Mutex::new(Collected { hosts, workloads, csv, csv_path, error: None, points: Vec::new() })),
        })
    }

    /// The sink to hand the simulation; this collector keeps its own handle.
    pub fn sink(&self) -> Box<dyn FlowSink> {
        let inner = self.inner.clone();
        Box::new(move |f: FlowDone| inner.lock().expect("not poisoned").add(&f))
    }

    /// The analysis, once the simulation (and with it the sink) is gone; `fct.csv` is flushed.
    pub fn finish(self, warmup: SimTime) -> std::io::Result<FctReport> {
        let mut c = Arc::try_unwrap(self.inner)
            .ok()
            .expect("the simulation and its sink are dropped")
            .into_inner()
            .expect("not poisoned");
        if let Some(e) = c.error.take() {
            return Err(e);
        }
        if let Some(w) = &mut c.csv {
            w.flush()?;
        }
        match &c.csv_path {
            Some(p) => {
                let spill = extsort::spill_beside(p, ".fct-sort");
                analyse(|f| read_points_each(p, &c.workloads, f), &c.workloads, warmup, SORT_CAP, Some(spill))
            }
            None => {
                let points = std::mem::take(&mut c.points);
                analyse(|f| points.iter().try_for_each(|&p| f(p)), &c.workloads, warmup, usize::MAX, None)
            }
        }
    }
}

/// An open `fct.csv` and its path (read back for the analysis at the end).
pub struct FctFile {
    pub file: std::fs::File,
    pub path: std::path::PathBuf,
}

/// Seconds as written in `fct.csv` ("s.nnnnnnnnn") back to the nanosecond.
fn parse_secs(s: &str) -> Option<SimTime> {
    let (a, b) = s.split_once('.')?;
    Some(SimTime::from_ns(a.parse::<u64>().ok()? * 1_000_000_000 + b.parse::<u64>().ok()?))
}

/// Each analysis point of `fct.csv`, as the collector wrote it, into `f`.
fn read_points_each(
    path: &std::path::Path,
    workloads: &[String],
    mut f: impl FnMut(Point) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::BufRead;
    let bad = |line: usize| std::io::Error::other(format!("{}: line {line}: not a row ccsim wrote", path.display()));
    let r = std::io::BufReader::new(std::fs::File::open(path)?);
    for (i, line) in r.lines().enumerate().skip(1) {
        let line = line?;
        let c: Vec<&str> = line.split(',').collect();
        if c.len() != 14 {
            return Err(bad(i + 1));
        }
        let workload = workloads.iter().position(|w| w == c[1]).map_or(u32::MAX, |w| w as u32);
        f(Point {
            workload,
            group: c[2].parse().map_err(|_| bad(i + 1))?,
            size: c[5].parse().map_err(|_| bad(i + 1))?,
            start: parse_secs(c[6]).ok_or_else(|| bad(i + 1))?,
            fct: if c[8].is_empty() { None } else { Some(parse_secs(c[8]).ok_or_else(|| bad(i + 1))?) },
            slowdown: if c[10].is_empty() { f64::NAN } else { c[10].parse().map_err(|_| bad(i + 1))? },
            rtos: c[12].parse().map_err(|_| bad(i + 1))?,
        })?;
    }
    Ok(())
}

impl Collected {
    fn add(&mut self, f: &FlowDone) {
        let fct = f.completion.map(|c| c - f.start);
        // To the six decimals `fct.csv` has, so that the analysis is the same whether it reads
        // the file back or keeps the points.
        let slowdown = match (fct, f.ideal) {
            (Some(t), Some(i)) if i.ns() > 0 => {
                format!("{:.6}", t.ns() as f64 / i.ns() as f64).parse().unwrap_or(f64::NAN)
            }
            _ => f64::NAN,
        };
        if let Some(w) = &mut self.csv {
            let opt = |t: Option<SimTime>| t.map(secs).unwrap_or_default();
            let r = writeln!(
                w,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                f.id,
                self.workloads.get(f.traffic as usize).map_or("", |s| s.as_str()),
                f.group,
                self.hosts[f.src.0 as usize],
                self.hosts[f.dst.0 as usize],
                f.size,
                secs(f.start),
                opt(f.completion),
                opt(fct),
                opt(f.ideal),
                if slowdown.is_nan() { String::new() } else { format!("{slowdown:.6}") },
                f.retransmits,
                f.rto_count,
                f.cc,
            );
            if let Err(e) = r {
                self.error.get_or_insert(e);
            }
        }
        if self.csv_path.is_some() {
            return; // read back from fct.csv at the end
        }
        self.points.push(Point {
            workload: f.traffic,
            size: f.size,
            start: f.start,
            fct,
            slowdown,
            rtos: f.rto_count as u32,
            group: f.group,
        });
    }
}

/// Slowdown statistics of one bin of flows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SlowdownBin {
    /// "<100KB", "100KB-1MB", ... for fixed bins; for equal-count bins the largest size in it.
    pub bin: String,
    pub max_size_bytes: u64,
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// Completion of groups of flows opened together (incast rounds): the time from the round's
/// start to its last flow's completion.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupTimes {
    pub groups: u64,
    /// Groups whose every flow completed.
    pub completed: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

/// The analysis of one workload's flows (those that arrived at or after the warm-up).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WorkloadFct {
    pub name: String,
    /// Flows that arrived after the warm-up.
    pub flows: u64,
    pub completed: u64,
    /// Arrived and not completed by the end of the run (reported, never dropped).
    pub unfinished: u64,
    /// Flows that had at least one retransmission timeout, and the timeouts in all.
    pub flows_with_timeouts: u64,
    pub timeouts: u64,
    /// Payload bytes of the completed flows.
    pub bytes_completed: u64,
    pub bins: Vec<SlowdownBin>,
    /// 20 bins of 5 % of the flows each, by size (HPCC's `fct_analysis.py -s 5`).
    pub equal_count_bins: Vec<SlowdownBin>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<GroupTimes>,
}

/// `summary.json`'s `fct`: per workload, and how many flows arrived before the warm-up.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FctReport {
    pub before_warmup: u64,
    pub workloads: Vec<WorkloadFct>,
}

/// The fixed size bins: upper bounds (exclusive) and names.
pub const FIXED_BINS: [(u64, &str); 4] =
    [(100_000, "<100KB"), (1_000_000, "100KB-1MB"), (10_000_000, "1MB-10MB"), (u64::MAX, ">=10MB")];

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Values an analysis sorts in memory before it spills sorted runs to files beside `fct.csv`
/// (8-24 bytes each): the analysis of a run of any length holds at most a few of these buffers,
/// not a point per flow.
const SORT_CAP: usize = 1 << 16;

/// One bin's slowdown statistics from its sorted slowdowns (NaN left out): mean (summed in
/// ascending order), nearest-rank p50, p95, p99.
fn bin_stats(name: String, max_size: u64, slowdowns: ExtSorter<f64>) -> std::io::Result<SlowdownBin> {
    let n = slowdowns.len() as usize;
    let rank = |p: f64| ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
    let ranks = [rank(50.0).min(n), rank(95.0).min(n), rank(99.0).min(n)];
    let mut at = [f64::NAN; 3];
    let (mut i, mut sum) = (0usize, -0.0f64);
    slowdowns.sorted()?.for_each(|v| {
        i += 1;
        sum += v;
        for (k, &r) in ranks.iter().enumerate() {
            if r == i {
                at[k] = v;
            }
        }
    })?;
    let mean = if n == 0 { f64::NAN } else { sum / n as f64 };
    Ok(SlowdownBin {
        bin: name,
        max_size_bytes: max_size,
        count: n as u64,
        mean: round6(mean),
        p50: round6(at[0]),
        p95: round6(at[1]),
        p99: round6(at[2]),
    })
}

/// A fixed size bin being filled: its flows, largest size and slowdowns.
struct FixedBin {
    flows: u64,
    max_size: u64,
    slowdowns: ExtSorter<f64>,
}

/// One workload's flows after the warm-up, as the analysis reads them.
struct Acc {
    flows: u64,
    completed: u64,
    with_timeouts: u64,
    timeouts: u64,
    bytes_completed: u64,
    fixed: Vec<FixedBin>,
    /// Completed flows by size (ties in reading order), for the equal-count bins.
    by_size: ExtSorter<BySize>,
    /// Per group: its start, its last completion, whether every flow completed.
    groups: std::collections::BTreeMap<u64, (SimTime, Option<SimTime>, bool)>,
}

/// The analysis of the flows `each` hands over (every flow, in `fct.csv` order), sorting with at
/// most `cap` values per sorter in memory and spilling beyond to `spill`.
fn analyse(
    each: impl FnOnce(&mut dyn FnMut(Point) -> std::io::Result<()>) -> std::io::Result<()>,
    workloads: &[String],
    warmup: SimTime,
    cap: usize,
    spill: Option<Spill>,
) -> std::io::Result<FctReport> {
    let sorter = |what: String| -> Option<Spill> {
        spill.as_ref().map(|s| Spill { dir: s.dir.clone(), prefix: format!("{}-{what}", s.prefix) })
    };
    let mut accs: Vec<Acc> = (0..workloads.len())
        .map(|wi| Acc {
            flows: 0,
            completed: 0,
            with_timeouts: 0,
            timeouts: 0,
            bytes_completed: 0,
            fixed: (0..FIXED_BINS.len())
                .map(|b| FixedBin {
                    flows: 0,
                    max_size: 0,
                    slowdowns: ExtSorter::new(cap, sorter(format!("{wi}-bin{b}"))),
                })
                .collect(),
            by_size: ExtSorter::new(cap, sorter(format!("{wi}-size"))),
            groups: Default::default(),
        })
        .collect();
    let mut before_warmup = 0u64;
    each(&mut |p: Point| {
        if p.start < warmup {
            before_warmup += 1;
            return Ok(());
        }
        let Some(a) = accs.get_mut(p.workload as usize) else { return Ok(()) };
        a.flows += 1;
        a.with_timeouts += (p.rtos > 0) as u64;
        a.timeouts += p.rtos as u64;
        // Groups: a round's completion is its last flow's; a round with an unfinished flow has none.
        if p.group != 0 {
            let e = a.groups.entry(p.group).or_insert((p.start, None, true));
            match p.fct {
                Some(f) => e.1 = Some(e.1.map_or(p.start + f, |t: SimTime| t.max(p.start + f))),
                None => e.2 = false,
            }
        }
        if p.fct.is_none() {
            return Ok(());
        }
        let seq = a.completed;
        a.completed += 1;
        a.bytes_completed += p.size;
        let b = FIXED_BINS.iter().position(|&(hi, _)| p.size < hi).expect("the last bin is unbounded");
        let bin = &mut a.fixed[b];
        bin.flows += 1;
        bin.max_size = bin.max_size.max(p.size);
        if !p.slowdown.is_nan() {
            bin.slowdowns.push(p.slowdown)?;
        }
        a.by_size.push(BySize { size: p.size, seq, slowdown: p.slowdown })
    })?;
    let mut out = Vec::new();
    for (wi, (name, a)) in workloads.iter().zip(accs).enumerate() {
        let mut bins = Vec::new();
        for (b, fb) in a.fixed.into_iter().enumerate() {
            if fb.flows > 0 {
                bins.push(bin_stats(FIXED_BINS[b].1.to_string(), fb.max_size, fb.slowdowns)?);
            }
        }
        // Equal-count bins as HPCC's fct_analysis makes them: the completed flows by size, cut
        // into 20 runs of (nearly) equal count; each named by its largest size.
        let n = a.by_size.len() as usize;
        let mut equal = Vec::new();
        let mut chunk: Option<(usize, ExtSorter<f64>, u64)> = None;
        let bounds = |k: usize| (k * n / 20, (k + 1) * n / 20);
        let mut k = 0usize;
        let mut r = 0usize;
        let mut err = None;
        a.by_size.sorted()?.for_each(|v| {
            while k < 20 && r >= bounds(k).1 {
                k += 1;
            }
            if chunk.as_ref().is_none_or(|c| c.0 != k) {
                if let Some((_, s, max)) = chunk.take() {
                    match bin_stats(max.to_string(), max, s) {
                        Ok(b) => equal.push(b),
                        Err(e) => err = err.take().or(Some(e)),
                    }
                }
                chunk = Some((k, ExtSorter::new(cap, sorter(format!("{wi}-chunk{k}"))), 0));
            }
            let c = chunk.as_mut().expect("set above");
            c.2 = v.size;
            if !v.slowdown.is_nan() {
                if let Err(e) = c.1.push(v.slowdown) {
                    err = err.take().or(Some(e));
                }
            }
            r += 1;
        })?;
        if let Some((_, s, max)) = chunk.take() {
            equal.push(bin_stats(max.to_string(), max, s)?);
        }
        if let Some(e) = err {
            return Err(e);
        }
        let group_times = (!a.groups.is_empty()).then(|| {
            let mut ms: Vec<f64> = a
                .groups
                .values()
                .filter(|g| g.2)
                .filter_map(|&(s, end, _)| end.map(|e| (e - s).secs_f64() * 1e3))
                .collect();
            ms.sort_by(f64::total_cmp);
            GroupTimes {
                groups: a.groups.len() as u64,
                completed: ms.len() as u64,
                p50_ms: round6(pct(&ms, 50.0)),
                p99_ms: round6(pct(&ms, 99.0)),
                p999_ms: round6(pct(&ms, 99.9)),
                max_ms: round6(ms.last().copied().unwrap_or(f64::NAN)),
            }
        });
        out.push(WorkloadFct {
            name: name.clone(),
            flows: a.flows,
            completed: a.completed,
            unfinished: a.flows - a.completed,
            flows_with_timeouts: a.with_timeouts,
            timeouts: a.timeouts,
            bytes_completed: a.bytes_completed,
            bins,
            equal_count_bins: equal,
            groups: group_times,
        });
    }
    Ok(FctReport { before_warmup, workloads: out })
}

impl FctReport {
    /// The lines `ccsim run` prints: per workload, completed and unfinished flows, timeouts, and
    /// slowdown by fixed size bin.
    pub fn lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        for w in &self.workloads {
            v.push(format!(
                "workload {}: {} flows after warm-up, {} completed, {} unfinished, {} with timeouts ({} RTOs)",
                w.name, w.flows, w.completed, w.unfinished, w.flows_with_timeouts, w.timeouts
            ));
            for b in &w.bins {
                v.push(format!(
                    "  slowdown {:>10}: {:>7} flows, mean {:.2} p50 {:.2} p95 {:.2} p99 {:.2}",
                    b.bin, b.count, b.mean, b.p50, b.p95, b.p99
                ));
            }
            if let Some(g) = &w.groups {
                v.push(format!(
                    "  rounds: {} ({} completed), completion p50 {:.3} ms p99 {:.3} ms p99.9 {:.3} ms",
                    g.groups, g.completed, g.p50_ms, g.p99_ms, g.p999_ms
                ));
            }
        }
        if self.before_warmup > 0 {
            v.push(format!("({} flows arrived before the warm-up and are left out above)", self.before_warmup));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The analysis as it was written first, every point in memory: the reference the streaming
    /// analysis must equal.
    fn bin_of(name: String, pts: &[&Point]) -> SlowdownBin {
        let mut s: Vec<f64> = pts.iter().map(|p| p.slowdown).filter(|x| !x.is_nan()).collect();
        s.sort_by(f64::total_cmp);
        let mean = if s.is_empty() { f64::NAN } else { s.iter().sum::<f64>() / s.len() as f64 };
        SlowdownBin {
            bin: name,
            max_size_bytes: pts.iter().map(|p| p.size).max().unwrap_or(0),
            count: s.len() as u64,
            mean: round6(mean),
            p50: round6(pct(&s, 50.0)),
            p95: round6(pct(&s, 95.0)),
            p99: round6(pct(&s, 99.0)),
        }
    }

    fn analyse_in_memory(points: &[Point], workloads: &[String], warmup: SimTime) -> FctReport {
        let before_warmup = points.iter().filter(|p| p.start < warmup).count() as u64;
        let mut out = Vec::new();
        for (wi, name) in workloads.iter().enumerate() {
            let pts: Vec<&Point> = points.iter().filter(|p| p.workload == wi as u32 && p.start >= warmup).collect();
            let done: Vec<&Point> = pts.iter().copied().filter(|p| p.fct.is_some()).collect();
            let mut bins = Vec::new();
            let mut lo = 0;
            for (hi, label) in FIXED_BINS {
                let b: Vec<&Point> = done.iter().copied().filter(|p| p.size >= lo && p.size < hi).collect();
                if !b.is_empty() {
                    bins.push(bin_of(label.to_string(), &b));
                }
                lo = hi;
            }
            let mut by_size = done.clone();
            by_size.sort_by_key(|p| p.size);
            let mut equal = Vec::new();
            let n = by_size.len();
            if n > 0 {
                for k in 0..20 {
                    let (a, b) = (k * n / 20, (k + 1) * n / 20);
                    if a < b {
                        let chunk = &by_size[a..b];
                        let max = chunk.last().map_or(0, |p| p.size);
                        equal.push(bin_of(max.to_string(), chunk));
                    }
                }
            }
            // Groups: a round's completion is its last flow's; a round with an unfinished flow has none.
            let mut groups: std::collections::BTreeMap<u64, (SimTime, Option<SimTime>, bool)> = Default::default();
            for p in pts.iter().filter(|p| p.group != 0) {
                let e = groups.entry(p.group).or_insert((p.start, None, true));
                match p.fct {
                    Some(f) => e.1 = Some(e.1.map_or(p.start + f, |t: SimTime| t.max(p.start + f))),
                    None => e.2 = false,
                }
            }
            let group_times = (!groups.is_empty()).then(|| {
                let mut ms: Vec<f64> = groups
                    .values()
                    .filter(|g| g.2)
                    .filter_map(|&(s, end, _)| end.map(|e| (e - s).secs_f64() * 1e3))
                    .collect();
                ms.sort_by(f64::total_cmp);
                GroupTimes {
                    groups: groups.len() as u64,
                    completed: ms.len() as u64,
                    p50_ms: round6(pct(&ms, 50.0)),
                    p99_ms: round6(pct(&ms, 99.0)),
                    p999_ms: round6(pct(&ms, 99.9)),
                    max_ms: round6(ms.last().copied().unwrap_or(f64::NAN)),
                }
            });
            out.push(WorkloadFct {
                name: name.clone(),
                flows: pts.len() as u64,
                completed: done.len() as u64,
                unfinished: (pts.len() - done.len()) as u64,
                flows_with_timeouts: pts.iter().filter(|p| p.rtos > 0).count() as u64,
                timeouts: pts.iter().map(|p| p.rtos as u64).sum(),
                bytes_completed: done.iter().map(|p| p.size).sum(),
                bins,
                equal_count_bins: equal,
                groups: group_times,
            });
        }
        FctReport { before_warmup, workloads: out }
    }

    fn streamed(
        points: &[Point],
        workloads: &[String],
        warmup: SimTime,
        cap: usize,
        dir: Option<&std::path::Path>,
    ) -> FctReport {
        let spill = dir.map(|d| Spill { dir: d.to_path_buf(), prefix: "t".into() });
        analyse(|f| points.iter().try_for_each(|&p| f(p)), workloads, warmup, cap, spill).unwrap()
    }

    fn p(size: u64, fct_us: Option<u64>, slowdown: f64, group: u64) -> Point {
        Point {
            workload: 0,
            size,
            start: SimTime::from_ms(10),
            fct: fct_us.map(SimTime::from_us),
            slowdown,
            rtos: 0,
            group,
        }
    }

    #[test]
    fn bins_percentiles_and_groups_by_hand() {
        let mut pts: Vec<Point> = (1..=100).map(|i| p(1000 * i, Some(100), i as f64, 0)).collect();
        pts.push(p(5_000_000, None, f64::NAN, 0));
        // Two rounds: one done (last at 300 us), one with an unfinished flow.
        pts.push(p(2000, Some(100), 1.0, 1));
        pts.push(p(2000, Some(300), 3.0, 1));
        pts.push(p(2000, None, f64::NAN, 2));
        pts.push(Point { start: SimTime::from_ms(1), ..p(10, Some(1), 1.0, 0) });
        let r = streamed(&pts, &["w".to_string()], SimTime::from_ms(5), usize::MAX, None);
        assert_eq!(r, analyse_in_memory(&pts, &["w".to_string()], SimTime::from_ms(5)));
        assert_eq!(r.before_warmup, 1);
        let w = &r.workloads[0];
        assert_eq!((w.flows, w.completed, w.unfinished), (104, 102, 2));
        // <100KB: sizes 1..99 KB (99 flows, slowdown 1..99) and the two 2 KB round flows.
        let b = &w.bins[0];
        assert_eq!((b.bin.as_str(), b.count), ("<100KB", 101));
        assert_eq!(w.bins[1].count, 1, "100 KB itself is in 100KB-1MB");
        assert_eq!(w.equal_count_bins.len(), 20);
        assert_eq!(w.equal_count_bins.iter().map(|b| b.count).sum::<u64>(), 102);
        let g = w.groups.as_ref().unwrap();
        assert_eq!((g.groups, g.completed), (2, 1));
        assert_eq!(g.p50_ms, 0.3);
    }

    #[test]
    fn the_streamed_analysis_spilling_to_files_equals_the_in_memory_one() {
        let dir = std::env::temp_dir().join(format!("ccsim-fct-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = ccsim_engine::Rng::new(11, 0);
        let sizes = [500u64, 2_000, 99_999, 100_000, 450_000, 3_000_000, 12_000_000];
        let points: Vec<Point> = (0..5_000)
            .map(|_| {
                let size = sizes[rng.below(sizes.len() as u32) as usize] + rng.below(3) as u64;
                let done = rng.below(10) > 0;
                let slowdown =
                    if !done || rng.below(50) == 0 { f64::NAN } else { 1.0 + rng.below(100_000) as f64 / 997.0 };
                Point {
                    workload: rng.below(3), // 2: a workload the run does not know
                    size,
                    start: SimTime::from_us(rng.below(20_000) as u64),
                    fct: done.then(|| SimTime::from_us(1 + rng.below(5_000) as u64)),
                    slowdown,
                    rtos: (rng.below(20) == 0) as u32,
                    group: if rng.below(4) == 0 { 1 + rng.below(40) as u64 } else { 0 },
                }
            })
            .collect();
        let names = ["a".to_string(), "b".to_string()];
        let warmup = SimTime::from_ms(2);
        let want = analyse_in_memory(&points, &names, warmup);
        assert!(want.workloads.iter().all(|w| w.equal_count_bins.len() == 20 && w.bins.len() == 4));
        for cap in [usize::MAX, 1_000, 97] {
            let got = streamed(&points, &names, warmup, cap, Some(&dir));
            // Compare as JSON: NaN means are equal there as they are in summary.json.
            assert_eq!(serde_json::to_string(&got).unwrap(), serde_json::to_string(&want).unwrap(), "cap {cap}");
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "every run file removed");
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(|i| i as f64).collect();
        assert_eq!((pct(&v, 50.0), pct(&v, 95.0), pct(&v, 99.0), pct(&v, 100.0)), (50.0, 95.0, 99.0, 100.0));
        assert_eq!(pct(&[7.0], 99.9), 7.0);
    }

    #[test]
    fn times_are_written_to_the_nanosecond() {
        assert_eq!(secs(SimTime::from_ns(1_000_000_001)), "1.000000001");
        assert_eq!(secs(SimTime::from_us(250)), "0.000250000");
        for t in [0, 1, 999_999_999, 1_000_000_000, 123_456_789_012] {
            assert_eq!(parse_secs(&secs(SimTime::from_ns(t))), Some(SimTime::from_ns(t)));
        }
    }
}
