//! Flow sizes: a fixed size, or a measured flow-size distribution given as a piecewise-linear
//! CDF (size in bytes, cumulative fraction), sampled by inverting it as HPCC's traffic
//! generator and its successors do.

use std::fmt;

/// A validated piecewise-linear CDF: sizes non-decreasing and positive (the first point may be
/// the origin, "0 0", where interpolation starts), fractions non-decreasing in [0, 1], the last
/// exactly 1. Below the first point's fraction the size is the first point's (a point mass
/// there); between points it is interpolated linearly.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

/// What is wrong with a CDF, naming the point (0-based) at fault.
#[derive(Clone, Debug, PartialEq)]
pub enum CdfError {
    Empty,
    NotPositive { point: usize, size: f64 },
    SizeDecreases { point: usize },
    FractionOutOfRange { point: usize, fraction: f64 },
    FractionDecreases { point: usize },
    DoesNotEndAtOne { fraction: f64 },
}

impl fmt::Display for CdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CdfError::Empty => write!(f, "has no points; a CDF needs at least one `size fraction` line ending at 1"),
            CdfError::NotPositive { point, size } => {
                write!(f, "point {}: size {size} is not allowed; sizes must be > 0 bytes", point + 1)
            }
            CdfError::SizeDecreases { point } => {
                write!(f, "point {}: the size is smaller than the point before; sizes must not decrease", point + 1)
            }
            CdfError::FractionOutOfRange { point, fraction } => {
                write!(f, "point {}: fraction {fraction} is out of range; allowed 0..=1", point + 1)
            }
            CdfError::FractionDecreases { point } => {
                write!(f, "point {}: the fraction is smaller than the point before; a CDF must not decrease", point + 1)
            }
            CdfError::DoesNotEndAtOne { fraction } => {
                write!(f, "the last fraction is {fraction}; a CDF must end at 1")
            }
        }
    }
}

impl Cdf {
    /// Points of (size in bytes, cumulative fraction in [0, 1]).
    pub fn new(points: Vec<(f64, f64)>) -> Result<Cdf, CdfError> {
        if points.len() <= usize::from(points.first() == Some(&(0.0, 0.0))) {
            return Err(CdfError::Empty);
        }
        for (i, &(s, c)) in points.iter().enumerate() {
            let origin = i == 0 && s == 0.0 && c == 0.0;
            if !(s > 0.0 && s.is_finite() || origin) {
                return Err(CdfError::NotPositive { point: i, size: s });
            }
            if !(0.0..=1.0).contains(&c) {
                return Err(CdfError::FractionOutOfRange { point: i, fraction: c });
            }
            if i > 0 {
                let (ps, pc) = points[i - 1];
                if s < ps {
                    return Err(CdfError::SizeDecreases { point: i });
                }
                if c < pc {
                    return Err(CdfError::FractionDecreases { point: i });
                }
            }
        }
        let last = points[points.len() - 1].1;
        if last != 1.0 {
            return Err(CdfError::DoesNotEndAtOne { fraction: last });
        }
        Ok(Cdf { points })
    }

    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The size at cumulative fraction `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        let i = p.partition_point(|&(_, c)| c <= u);
        if i == 0 {
            return p[0].0;
        }
        if i >= p.len() {
            return p[p.len() - 1].0;
        }
        let ((s0, c0), (s1, c1)) = (p[i - 1], p[i]);
        s0 + (u - c0) / (c1 - c0) * (s1 - s0)
    }

    /// The fraction of flows of size at most `x` bytes.
    pub fn cdf(&self, x: f64) -> f64 {
        let p = &self.points;
        if x < p[0].0 {
            return 0.0;
        }
        let i = p.partition_point(|&(s, _)| s <= x);
        if i >= p.len() {
            return 1.0;
        }
        let ((s0, c0), (s1, c1)) = (p[i - 1], p[i]);
        c0 + (x - s0) / (s1 - s0) * (c1 - c0)
    }

    /// The mean size (bytes): the first point's mass at its size, then each segment's mass at
    /// its midpoint (the trapezoid rule, exact for a piecewise-linear CDF).
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let mut m = p[0].0 * p[0].1;
        for w in p.windows(2) {
            m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        m
    }
}

/// How big each flow of a traffic is.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowSizes {
    Fixed(u64),
    Distribution(Cdf),
}

impl FlowSizes {
    /// A size for the uniform draw `u` in [0, 1): at least one byte, rounded to the nearest.
    pub fn sample(&self, u: f64) -> u64 {
        match self {
            FlowSizes::Fixed(b) => *b,
            FlowSizes::Distribution(cdf) => (cdf.quantile(u).round() as u64).max(1),
        }
    }
    pub fn mean(&self) -> f64 {
        match self {
            FlowSizes::Fixed(b) => *b as f64,
            FlowSizes::Distribution(cdf) => cdf.mean(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn websearch() -> Cdf {
        Cdf::new(vec![
            (0.0, 0.0),
            (10e3, 0.15),
            (20e3, 0.20),
            (30e3, 0.30),
            (50e3, 0.40),
            (80e3, 0.53),
            (200e3, 0.60),
            (1e6, 0.70),
            (2e6, 0.80),
            (5e6, 0.90),
            (10e6, 0.97),
            (30e6, 1.0),
        ])
        .unwrap()
    }

    #[test]
    fn quantiles_interpolate_and_invert_the_cdf() {
        let c = websearch();
        assert_eq!(c.quantile(0.0), 0.0);
        assert!((c.quantile(0.075) - 5e3).abs() < 1e-6, "from the origin, linearly");
        let no_origin = Cdf::new(vec![(10e3, 0.15), (20e3, 1.0)]).unwrap();
        assert_eq!(no_origin.quantile(0.1), 10e3, "below the first fraction: the first size");
        assert!((c.quantile(0.175) - 15e3).abs() < 1e-6);
        assert!((c.quantile(0.985) - 20e6).abs() < 1e-3);
        for u in [0.05, 0.16, 0.35, 0.5, 0.65, 0.75, 0.93, 0.999] {
            assert!((c.cdf(c.quantile(u)) - u).abs() < 1e-9, "{u}");
        }
    }

    #[test]
    fn the_mean_is_the_trapezoid_sum() {
        // 1.71 MB for WebSearch, as HPCC's generator computes it (workloads-and-buffers.md).
        let m = websearch().mean();
        assert!((m - 1_711_250.0).abs() < 1e-6, "{m}");
        let two = Cdf::new(vec![(100.0, 0.5), (300.0, 1.0)]).unwrap();
        assert_eq!(two.mean(), 100.0 * 0.5 + 0.5 * 200.0);
    }

    #[test]
    fn bad_cdfs_are_refused_with_the_point_at_fault() {
        assert_eq!(Cdf::new(vec![]), Err(CdfError::Empty));
        assert_eq!(Cdf::new(vec![(0.0, 0.0)]), Err(CdfError::Empty));
        assert_eq!(Cdf::new(vec![(-5.0, 0.5), (10.0, 1.0)]), Err(CdfError::NotPositive { point: 0, size: -5.0 }));
        assert_eq!(Cdf::new(vec![(10.0, 0.5), (5.0, 1.0)]), Err(CdfError::SizeDecreases { point: 1 }));
        assert_eq!(
            Cdf::new(vec![(10.0, 0.5), (20.0, 0.4), (30.0, 1.0)]),
            Err(CdfError::FractionDecreases { point: 1 })
        );
        assert_eq!(Cdf::new(vec![(10.0, 0.5), (20.0, 0.9)]), Err(CdfError::DoesNotEndAtOne { fraction: 0.9 }));
        assert_eq!(Cdf::new(vec![(10.0, 1.5)]), Err(CdfError::FractionOutOfRange { point: 0, fraction: 1.5 }));
    }
}
