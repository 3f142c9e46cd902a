//! Descriptive statistics: summaries, fairness, CDFs and integer histograms.
//!
//! Percentiles use the **nearest-rank** method: on the ascending-sorted data
//! of `n` samples, the p-th percentile is the value at 1-based rank
//! `ceil(p/100 · n)` (clamped to `1..=n`). The rank is computed in integer
//! arithmetic, so e.g. the 90th percentile of 10 samples is always the 9th
//! value (a naive `(0.9 * 10.0).ceil()` would be exact here, but other
//! products such as `0.07 * 100.0` are not).
//!
//! NaN values are ignored by [`summarize`] and [`cdf`] (they are not counted
//! in `samples`). Infinities are ordinary, ordered values; they propagate into
//! `mean`/`stddev` as usual for IEEE arithmetic.

/// Summary statistics of a sample.
///
/// For an empty sample every field is zero (`Summary::default()`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Number of samples (NaNs excluded).
    pub samples: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest sample.
    pub max: f64,
    /// Smallest sample.
    pub min: f64,
    /// Population standard deviation (divides by `n`, not `n - 1`).
    pub stddev: f64,
}

/// 1-based nearest rank of the `p`-th percentile (`p` in percent) among `n`
/// samples: `ceil(p·n/100)` clamped to `1..=n`. `n` must be non-zero.
fn nearest_rank(n: u64, p: u64) -> u64 {
    let r = (u128::from(p) * u128::from(n)).div_ceil(100);
    (r as u64).clamp(1, n)
}

/// Summarises `values`: count, mean, nearest-rank p50/p90/p99, min, max and
/// population standard deviation. NaN values are ignored.
///
/// Works on a sorted copy; the input is not modified. Runs in O(n log n).
///
/// ```
/// let s = ccsim_report::summarize(&[4.0, 1.0, 3.0, 2.0]);
/// assert_eq!((s.samples, s.min, s.max, s.mean), (4, 1.0, 4.0, 2.5));
/// assert_eq!(s.p50, 2.0); // rank ceil(0.5 * 4) = 2
/// ```
pub fn summarize(values: &[f64]) -> Summary {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return Summary::default();
    }
    v.sort_by(f64::total_cmp);
    let n = v.len() as u64;
    let nf = n as f64;
    let mean = v.iter().sum::<f64>() / nf;
    let var = v
        .iter()
        .map(|x| {
            let d = x - mean;
            d * d
        })
        .sum::<f64>()
        / nf;
    let at = |p: u64| v[(nearest_rank(n, p) - 1) as usize];
    Summary {
        samples: n,
        mean,
        p50: at(50),
        p90: at(90),
        p99: at(99),
        max: v[v.len() - 1],
        min: v[0],
        stddev: var.sqrt(),
    }
}

/// Jain's fairness index `(Σx)² / (n · Σx²)` of non-negative allocations.
///
/// Ranges from `1/n` (one party gets everything) to `1.0` (perfectly equal).
/// Returns `1.0` for an empty slice or when all values are zero.
///
/// ```
/// use ccsim_report::jain_fairness;
/// assert_eq!(jain_fairness(&[5.0, 5.0, 5.0]), 1.0);
/// assert_eq!(jain_fairness(&[1.0, 0.0, 0.0, 0.0]), 0.25);
/// ```
pub fn jain_fairness(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (xs.len() as f64 * sum_sq)
}

/// Empirical CDF of `values`: one `(value, fraction of samples <= value)`
/// point per distinct value, in ascending order. The last fraction is exactly
/// `1.0`. NaN values are ignored; an empty input gives an empty vector.
///
/// ```
/// let c = ccsim_report::cdf(&[2.0, 1.0, 2.0, 3.0]);
/// assert_eq!(c, vec![(1.0, 0.25), (2.0, 0.75), (3.0, 1.0)]);
/// ```
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mut out = Vec::new();
    for i in 0..v.len() {
        // `!=` (not total_cmp) so that -0.0 and 0.0 form one point.
        if i + 1 == v.len() || v[i + 1] != v[i] {
            out.push((v[i], (i + 1) as f64 / n));
        }
    }
    out
}

/// Streaming histogram of small non-negative integer samples (e.g. queue
/// occupancy in packets), with exact percentiles.
///
/// Stores one `u64` counter per value from 0 to the largest value recorded,
/// so memory is O(max value), independent of the number of samples. Do not
/// use it for values with a huge range (such as nanosecond timestamps).
///
/// [`summary`](IntHistogram::summary) and [`cdf`](IntHistogram::cdf) give the
/// same results as [`summarize`] and [`cdf`](fn@cdf) on the expanded sample list (up
/// to floating-point rounding of `stddev`, and of `mean` once the sum exceeds
/// 2^53).
///
/// ```
/// let mut h = ccsim_report::IntHistogram::new();
/// h.record(3);
/// h.record_n(10, 3);
/// let s = h.summary();
/// assert_eq!((s.samples, s.min, s.p50, s.max), (4, 3.0, 10.0, 10.0));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntHistogram {
    counts: Vec<u64>,
    total: u64,
}

impl IntHistogram {
    /// Creates an empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one sample of value `v`.
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Records `count` samples of value `v` (e.g. a queue length held for
    /// `count` sampling intervals). `count == 0` is a no-op.
    ///
    /// # Panics
    /// If `v` does not fit in `usize` or the counter table cannot be allocated.
    pub fn record_n(&mut self, v: u64, count: u64) {
        if count == 0 {
            return;
        }
        let i = usize::try_from(v).expect("IntHistogram value exceeds usize");
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += count;
        self.total += count;
    }

    /// Adds all samples of `other` into `self`.
    pub fn merge(&mut self, other: &IntHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// Total number of samples recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// True if no sample has been recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Iterator over `(value, count)` for values with a non-zero count.
    fn nonzero(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|&(_, &c)| c > 0).map(|(v, &c)| (v as u64, c))
    }

    /// Summary statistics, equal to `summarize()` of the expanded samples.
    /// Runs in O(max value).
    pub fn summary(&self) -> Summary {
        let n = self.total;
        if n == 0 {
            return Summary::default();
        }
        let nf = n as f64;
        let sum: u128 = self.nonzero().map(|(v, c)| u128::from(v) * u128::from(c)).sum();
        let mean = sum as f64 / nf;
        let var = self
            .nonzero()
            .map(|(v, c)| {
                let d = v as f64 - mean;
                c as f64 * (d * d)
            })
            .sum::<f64>()
            / nf;

        let ranks = [nearest_rank(n, 50), nearest_rank(n, 90), nearest_rank(n, 99)];
        let mut pct = [0.0; 3];
        let mut next = 0;
        let mut cum = 0u64;
        let mut min = None;
        let mut max = 0;
        for (v, c) in self.nonzero() {
            min.get_or_insert(v);
            max = v;
            cum += c;
            while next < ranks.len() && cum >= ranks[next] {
                pct[next] = v as f64;
                next += 1;
            }
        }
        Summary {
            samples: n,
            mean,
            p50: pct[0],
            p90: pct[1],
            p99: pct[2],
            max: max as f64,
            min: min.unwrap_or(0) as f64,
            stddev: var.sqrt(),
        }
    }

    /// Empirical CDF, equal to [`cdf`](fn@cdf) of the expanded samples.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let n = self.total as f64;
        let mut cum = 0u64;
        self.nonzero()
            .map(|(v, c)| {
                cum += c;
                (v as f64, cum as f64 / n)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random generator for tests (64-bit LCG).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(summarize(&[]), Summary::default());
        assert_eq!(summarize(&[f64::NAN]).samples, 0);
        assert_eq!(IntHistogram::new().summary(), Summary::default());
    }

    #[test]
    fn summary_of_one_to_hundred() {
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = summarize(&v);
        assert_eq!(s.samples, 100);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.mean, 50.5);
        assert_eq!((s.p50, s.p90, s.p99), (50.0, 90.0, 99.0));
        assert!(close(s.stddev, (9999.0f64 / 12.0).sqrt()), "{}", s.stddev);
    }

    #[test]
    fn nearest_rank_small_samples() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = summarize(&v);
        assert_eq!((s.p50, s.p90, s.p99), (5.0, 9.0, 10.0));
        let s = summarize(&[3.0, 1.0, 2.0]);
        assert_eq!((s.p50, s.p90, s.p99), (2.0, 3.0, 3.0));
        let s = summarize(&[7.0]);
        assert_eq!((s.min, s.p50, s.p99, s.max, s.stddev), (7.0, 7.0, 7.0, 7.0, 0.0));
    }

    #[test]
    fn nearest_rank_matches_definition() {
        // For the values 1..=n the p-th percentile is the smallest k with
        // k/n >= p/100, i.e. 100k >= p·n.
        for n in 1..=300u64 {
            let v: Vec<f64> = (1..=n).map(|k| k as f64).collect();
            let s = summarize(&v);
            for (p, got) in [(50, s.p50), (90, s.p90), (99, s.p99)] {
                let want = (1..=n).find(|k| 100 * k >= p * n).unwrap() as f64;
                assert_eq!(got, want, "n={n} p={p}");
            }
        }
    }

    #[test]
    fn nan_is_ignored() {
        let s = summarize(&[1.0, f64::NAN, 3.0]);
        assert_eq!((s.samples, s.mean, s.max), (2, 2.0, 3.0));
        assert_eq!(cdf(&[f64::NAN, 1.0]), vec![(1.0, 1.0)]);
    }

    #[test]
    fn population_stddev() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.stddev, 2.0);
    }

    #[test]
    fn jain() {
        assert_eq!(jain_fairness(&[]), 1.0);
        assert_eq!(jain_fairness(&[0.0, 0.0]), 1.0);
        assert_eq!(jain_fairness(&[3.0, 3.0]), 1.0);
        assert_eq!(jain_fairness(&[1.0, 0.0, 0.0, 0.0, 0.0]), 0.2);
        // (1+2+3)^2 / (3 * (1+4+9)) = 36/42
        assert!(close(jain_fairness(&[1.0, 2.0, 3.0]), 36.0 / 42.0));
    }

    #[test]
    fn cdf_points() {
        assert!(cdf(&[]).is_empty());
        let c = cdf(&[3.0, 1.0, 2.0, 2.0, 2.0]);
        assert_eq!(c, vec![(1.0, 0.2), (2.0, 0.8), (3.0, 1.0)]);
        let c = cdf(&[0.1; 3]);
        assert_eq!(c, vec![(0.1, 1.0)]);
        let c = cdf(&(0..7).map(f64::from).collect::<Vec<_>>());
        assert_eq!(c.len(), 7);
        assert_eq!(c.last().unwrap().1, 1.0);
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }

    #[test]
    fn histogram_matches_summarize() {
        let mut rng = Lcg(42);
        for trial in 0..50 {
            let mut h = IntHistogram::new();
            let mut expanded = Vec::new();
            let range = 1 + trial * 7;
            let len = 1 + rng.next() % 500;
            for _ in 0..len {
                let v = rng.next() % range;
                if rng.next().is_multiple_of(4) {
                    let c = rng.next() % 5; // includes 0
                    h.record_n(v, c);
                    expanded.extend(std::iter::repeat_n(v as f64, c as usize));
                } else {
                    h.record(v);
                    expanded.push(v as f64);
                }
            }
            let a = h.summary();
            let b = summarize(&expanded);
            assert_eq!(a.samples, b.samples);
            assert_eq!(h.count(), b.samples);
            assert_eq!((a.min, a.max), (b.min, b.max));
            assert_eq!((a.p50, a.p90, a.p99), (b.p50, b.p90, b.p99));
            assert_eq!(a.mean, b.mean);
            assert!(close(a.stddev, b.stddev), "{} vs {}", a.stddev, b.stddev);
            assert_eq!(h.cdf(), cdf(&expanded));
        }
    }

    #[test]
    fn histogram_with_gaps_and_large_counts() {
        let mut h = IntHistogram::new();
        h.record_n(0, 1_000_000_000);
        h.record_n(1000, 1);
        h.record_n(5, 0); // no-op, must not count
        let s = h.summary();
        assert_eq!(s.samples, 1_000_000_001);
        assert_eq!((s.min, s.p50, s.p99, s.max), (0.0, 0.0, 0.0, 1000.0));
        assert!(close(s.mean, 1000.0 / 1_000_000_001.0));
        assert_eq!(h.cdf().len(), 2);
    }

    #[test]
    fn histogram_merge() {
        let mut a = IntHistogram::new();
        let mut b = IntHistogram::new();
        a.record(1);
        b.record_n(9, 3);
        a.merge(&b);
        assert_eq!(a.count(), 4);
        assert_eq!(a.summary(), summarize(&[1.0, 9.0, 9.0, 9.0]));
        assert!(!a.is_empty());
        assert!(IntHistogram::new().is_empty());
    }
}
