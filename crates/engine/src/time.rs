use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Simulated time in integer nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    /// Nearest nanosecond to `s` seconds; negative or non-finite values become zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_finite() && s > 0.0 {
            SimTime((s * 1e9).round() as u64)
        } else {
            SimTime(0)
        }
    }
    pub const fn ns(self) -> u64 {
        self.0
    }
    pub const fn us(self) -> u64 {
        self.0 / 1_000
    }
    pub const fn ms(self) -> u64 {
        self.0 / 1_000_000
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
    /// Time to serialise `bytes` on a link of `bps` bits per second, rounded up to a nanosecond.
    pub fn tx_time(bytes: u64, bps: u64) -> SimTime {
        debug_assert!(bps > 0);
        // bytes * 8e9 fits in 64 bits for anything below 2.3 GB (every packet); larger sizes
        // take the 128-bit path.
        if bytes < (1 << 31) {
            SimTime((bytes * 8_000_000_000).div_ceil(bps))
        } else {
            let bits = bytes as u128 * 8 * 1_000_000_000;
            SimTime(bits.div_ceil(bps as u128) as u64)
        }
    }
}

/// A link's serialisation time per byte, for links whose byte time is a whole number of
/// picoseconds (every rate that divides 8 Tb/s: 100 Mb/s, 1, 10, 25, 40, 100 Gb/s...): then
/// `time(bytes)` is `SimTime::tx_time` without its 64-bit division (the division by 1000 is a
/// multiplication). Other rates take `tx_time` itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteTime {
    /// Picoseconds per byte; 0: not a whole number (or too large), use `bps`.
    ps: u64,
    bps: u64,
}

impl ByteTime {
    pub fn new(bps: u64) -> Self {
        let bps = bps.max(1);
        let whole = 8_000_000_000_000 % bps == 0 && 8_000_000_000_000 / bps < 1 << 32;
        ByteTime { ps: if whole { 8_000_000_000_000 / bps } else { 0 }, bps }
    }

    /// The link's rate in bits per second.
    #[inline(always)]
    pub fn bps(self) -> u64 {
        self.bps
    }

    /// Time to serialise `bytes` (a packet: below 2^32), rounded up to a nanosecond: exactly
    /// `SimTime::tx_time(bytes, bps)`.
    #[inline(always)]
    pub fn time(self, bytes: u32) -> SimTime {
        if self.ps != 0 {
            ByteTime::time_in_ps(self.ps as u32, bytes)
        } else {
            SimTime::tx_time(bytes as u64, self.bps)
        }
    }

    /// The byte time in picoseconds when it is a whole number of them (then
    /// `time_in_ps(ps, bytes)` is `time(bytes)`), for a caller that keeps it in 4 bytes.
    pub fn whole_ps(self) -> Option<u32> {
        (self.ps != 0).then_some(self.ps as u32)
    }

    /// `time(bytes)` of a byte time of `ps` whole picoseconds (`whole_ps`).
    #[inline(always)]
    pub fn time_in_ps(ps: u32, bytes: u32) -> SimTime {
        // bytes * 8e9 / bps = bytes * ps / 1000 exactly; below 2^64 as both are below 2^32.
        SimTime((bytes as u64 * ps as u64).div_ceil(1000))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(o.0))
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, o: SimTime) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, o: SimTime) -> SimTime {
        SimTime(self.0 - o.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn byte_time_is_tx_time() {
        for bps in [
            100_000_000,
            1_000_000_000,
            3_000_000_000,
            10_000_000_000,
            25_000_000_000,
            40_000_000_000,
            100_000_000_000,
            400_000_000_000,
            1_000,
            1,
            123_456_789,
        ] {
            let b = ByteTime::new(bps);
            for bytes in (0..70_000u32).chain([1 << 20, 1 << 31, u32::MAX]) {
                assert_eq!(b.time(bytes), SimTime::tx_time(bytes as u64, bps), "{bytes} B at {bps} b/s");
                if let Some(ps) = b.whole_ps() {
                    assert_eq!(ByteTime::time_in_ps(ps, bytes), b.time(bytes), "{bytes} B at {bps} b/s");
                }
            }
        }
        assert_ne!(ByteTime::new(10_000_000_000).ps, 0, "10 Gb/s takes the multiplication");
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1500 B at 100 Mb/s is exactly 120 us (the Mininet-HiFi fidelity reference).
        assert_eq!(SimTime::tx_time(1500, 100_000_000), SimTime::from_us(120));
        // 1500 B at 10 Gb/s is 1.2 us.
        assert_eq!(SimTime::tx_time(1500, 10_000_000_000), SimTime::from_ns(1200));
        assert_eq!(SimTime::tx_time(1, 3_000_000_000), SimTime::from_ns(3));
    }
}
