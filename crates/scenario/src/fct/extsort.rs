//! Sorting more values than memory should hold: an external merge sort of fixed-size records.
//! The FCT analysis sorts every flow's slowdown (per size bin) and every flow by size (for
//! equal-count bins); a long run has millions of flows, and the analysis must not hold them all.
//! Values are kept in memory up to `cap`; beyond, each full buffer is sorted and written to a
//! temporary file (a run), and the sorted stream is a k-way merge of the runs. With fewer than
//! `cap` values nothing is written. The order is total and deterministic (`Record::cmp`), so the
//! stream is the same however the values were split into runs.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// A fixed-size value with a total order.
pub trait Record: Copy {
    const BYTES: usize;
    fn write(&self, out: &mut [u8]);
    fn read(b: &[u8]) -> Self;
    fn order(&self, other: &Self) -> Ordering;
}

/// A slowdown, ordered as `f64::total_cmp` orders it.
impl Record for f64 {
    const BYTES: usize = 8;
    fn write(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_bits().to_le_bytes());
    }
    fn read(b: &[u8]) -> Self {
        f64::from_bits(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

/// A flow by size, ties in the order the flows were read (`seq`), with its slowdown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BySize {
    pub size: u64,
    pub seq: u64,
    pub slowdown: f64,
}

impl Record for BySize {
    const BYTES: usize = 24;
    fn write(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.size.to_le_bytes());
        out[8..16].copy_from_slice(&self.seq.to_le_bytes());
        out[16..].copy_from_slice(&self.slowdown.to_bits().to_le_bytes());
    }
    fn read(b: &[u8]) -> Self {
        let u = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
        BySize { size: u(0..8), seq: u(8..16), slowdown: f64::from_bits(u(16..24)) }
    }
    fn order(&self, other: &Self) -> Ordering {
        (self.size, self.seq).cmp(&(other.size, other.seq))
    }
}

/// Where a sorter's runs go: a directory and a name prefix; each run file is removed when the
/// sorted stream that reads it is dropped.
#[derive(Clone, Debug)]
pub struct Spill {
    pub dir: PathBuf,
    pub prefix: String,
}

/// Values pushed in any order, handed back sorted.
pub struct ExtSorter<T: Record> {
    buf: Vec<T>,
    cap: usize,
    spill: Option<Spill>,
    runs: Vec<PathBuf>,
    count: u64,
}

impl<T: Record> ExtSorter<T> {
    /// At most `cap` values in memory; beyond, runs in `spill` (None: all in memory).
    pub fn new(cap: usize, spill: Option<Spill>) -> Self {
        ExtSorter { buf: Vec::new(), cap: cap.max(1), spill, runs: Vec::new(), count: 0 }
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn push(&mut self, v: T) -> std::io::Result<()> {
        self.count += 1;
        self.buf.push(v);
        if self.buf.len() >= self.cap && self.spill.is_some() {
            self.write_run()?;
        }
        Ok(())
    }

    fn write_run(&mut self) -> std::io::Result<()> {
        let spill = self.spill.as_ref().expect("spilling sorter");
        self.buf.sort_by(T::order);
        let path = spill.dir.join(format!("{}-{}.tmp", spill.prefix, self.runs.len()));
        let mut w = BufWriter::new(File::create(&path)?);
        self.runs.push(path);
        let mut rec = vec![0u8; T::BYTES];
        for v in self.buf.drain(..) {
            v.write(&mut rec);
            w.write_all(&rec)?;
        }
        w.flush()
    }

    /// The values in order.
    pub fn sorted(mut self) -> std::io::Result<Sorted<T>> {
        if self.runs.is_empty() {
            self.buf.sort_by(T::order);
            return Ok(Sorted {
                mem: self.buf.into_iter(),
                runs: Vec::new(),
                heap: BinaryHeap::new(),
                files: Vec::new(),
            });
        }
        if !self.buf.is_empty() {
            self.write_run()?;
        }
        let mut s =
            Sorted { mem: Vec::new().into_iter(), runs: Vec::new(), heap: BinaryHeap::new(), files: Vec::new() };
        for (i, p) in std::mem::take(&mut self.runs).into_iter().enumerate() {
            let mut r = BufReader::new(File::open(&p)?);
            s.files.push(RunFile(p));
            if let Some(v) = read_one::<T>(&mut r)? {
                s.heap.push(Head { v, run: i });
            }
            s.runs.push(r);
        }
        Ok(s)
    }
}

fn read_one<T: Record>(r: &mut BufReader<File>) -> std::io::Result<Option<T>> {
    let mut rec = [0u8; 32];
    let rec = &mut rec[..T::BYTES];
    match r.read_exact(rec) {
        Ok(()) => Ok(Some(T::read(rec))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// A run's file, removed when dropped.
struct RunFile(PathBuf);
impl Drop for RunFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The next value of a run, in the merge's heap (a min-heap by value, then by run).
struct Head<T: Record> {
    v: T,
    run: usize,
}
impl<T: Record> PartialEq for Head<T> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl<T: Record> Eq for Head<T> {}
impl<T: Record> PartialOrd for Head<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T: Record> Ord for Head<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        o.v.order(&self.v).then(o.run.cmp(&self.run))
    }
}

/// The sorted values: from memory, or merged from the runs.
pub struct Sorted<T: Record> {
    mem: std::vec::IntoIter<T>,
    runs: Vec<BufReader<File>>,
    heap: BinaryHeap<Head<T>>,
    files: Vec<RunFile>,
}

impl<T: Record> Sorted<T> {
    /// The next value; an I/O error reading a run ends the stream with the error.
    pub fn next_value(&mut self) -> std::io::Result<Option<T>> {
        if self.runs.is_empty() {
            return Ok(self.mem.next());
        }
        let Some(Head { v, run }) = self.heap.pop() else { return Ok(None) };
        if let Some(n) = read_one::<T>(&mut self.runs[run])? {
            self.heap.push(Head { v: n, run });
        }
        Ok(Some(v))
    }

    /// Every value in order, into a closure.
    pub fn for_each(mut self, mut f: impl FnMut(T)) -> std::io::Result<()> {
        while let Some(v) = self.next_value()? {
            f(v);
        }
        drop(self.files);
        Ok(())
    }
}

/// The directory of `path` (where `fct.csv` is) for a sorter's runs.
pub fn spill_beside(path: &Path, prefix: &str) -> Spill {
    Spill { dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(), prefix: prefix.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_runs_merge_to_the_in_memory_order_and_leave_no_file() {
        let dir = std::env::temp_dir().join(format!("ccsim-extsort-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = ccsim_engine::Rng::new(7, 0);
        let values: Vec<BySize> = (0..10_000)
            .map(|i| BySize { size: rng.below(50) as u64, seq: i, slowdown: rng.next_u64() as f64 / 1e15 })
            .collect();
        let mut mem = ExtSorter::new(usize::MAX, None);
        let mut disk = ExtSorter::new(333, Some(Spill { dir: dir.clone(), prefix: "t".into() }));
        for &v in &values {
            mem.push(v).unwrap();
            disk.push(v).unwrap();
        }
        assert_eq!(disk.runs.len(), 30, "10 000 values in runs of 333");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        mem.sorted().unwrap().for_each(|v| a.push(v)).unwrap();
        disk.sorted().unwrap().for_each(|v| b.push(v)).unwrap();
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| (w[0].size, w[0].seq) < (w[1].size, w[1].seq)));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "runs removed");
        let _ = std::fs::remove_dir(&dir);
    }
}
