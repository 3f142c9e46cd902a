//! A switch's shared packet buffer with dynamic thresholds (Choudhury and Hahne, "Dynamic Queue
//! Length Thresholds for Shared-Memory Packet Switches", IEEE/ACM ToN 1998), as merchant
//! switch ASICs (Broadcom Trident, Tomahawk) run their egress queues.
//!
//! The buffer is `total` cells of `cell` bytes; a packet takes `ceil(size / cell)` cells. Every
//! queue (an egress port's class) has `reserved` cells of its own; the rest is the shared pool.
//! A packet for queue q is admitted when it fits in q's reserve, or else when
//!
//! ```text
//!   shared(q) + n <= alpha(q) * free      and      n <= free
//!   shared(q) = max(0, len(q) - reserved),  free = (total - reserved of all queues) - sum shared
//! ```
//!
//! (its cells beyond the reserve stay under the threshold alpha times the free shared cells, and
//! there is room). In steady state one congested queue holds alpha / (1 + alpha) of the shared
//! pool, N congested queues alpha / (1 + N alpha) each. A packet refused for want of room is a
//! "buffer full" drop, one refused by the threshold a "dynamic threshold" drop; a queue's own
//! limit (its class's `limit`) still applies after admission, as a static cap. Occupancy is the
//! packets waiting in the queues (a packet leaves the buffer when its transmission begins), as
//! the queues count it.

use std::fmt;

/// A shared buffer as the scenario gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedBufferSpec {
    /// Total size in bytes.
    pub size_bytes: u64,
    /// Accounting unit in bytes (1: exact bytes).
    pub cell_bytes: u32,
    /// Reserved (guaranteed) bytes of every queue.
    pub reserved_bytes: u64,
    /// The dynamic-threshold alpha of a queue of class `name` (`alpha_of`), else `alpha`.
    pub alpha: f64,
    pub class_alpha: Vec<(String, f64)>,
    /// Mark ECT packets CE when the switch's whole buffer holds more than this many bytes with
    /// them (None: marking looks at each queue alone, by its class's AQM).
    pub mark_above_bytes: Option<u64>,
}

/// What is wrong with a shared buffer's settings.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferError {
    Alpha(f64),
    Cell,
    Reserved { reserved: u64, total: u64 },
    TooSmall { size: u64, packet: u64 },
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferError::Alpha(a) => write!(f, "alpha {a} is out of range; allowed > 0"),
            BufferError::Cell => write!(f, "a cell of 0 bytes is not allowed; allowed 1 ..= 65535"),
            BufferError::Reserved { reserved, total } => write!(
                f,
                "the queues' reserved bytes ({reserved}) exceed the buffer ({total} bytes); allowed at most the buffer"
            ),
            BufferError::TooSmall { size, packet } => {
                write!(f, "{size} bytes cannot hold one {packet}-byte packet; allowed at least one packet")
            }
        }
    }
}

impl SharedBufferSpec {
    pub fn alpha_of(&self, class: &str) -> f64 {
        self.class_alpha.iter().find(|(n, _)| n == class).map_or(self.alpha, |&(_, a)| a)
    }

    /// Check the settings for a switch of `queues` queues whose largest packet is `packet` bytes.
    pub fn check(&self, queues: usize, packet: u64) -> Result<(), BufferError> {
        for a in std::iter::once(self.alpha).chain(self.class_alpha.iter().map(|&(_, a)| a)) {
            if !(a > 0.0 && a.is_finite()) {
                return Err(BufferError::Alpha(a));
            }
        }
        if self.cell_bytes == 0 {
            return Err(BufferError::Cell);
        }
        let cell = self.cell_bytes as u64;
        let reserved = queues as u64 * self.reserved_bytes.div_ceil(cell) * cell;
        if reserved > self.size_bytes {
            return Err(BufferError::Reserved { reserved, total: self.size_bytes });
        }
        if self.size_bytes < packet.div_ceil(cell) * cell {
            return Err(BufferError::TooSmall { size: self.size_bytes, packet });
        }
        Ok(())
    }
}

/// Why a packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No free cells left.
    Full,
    /// Its queue is at its dynamic threshold.
    Threshold,
}

/// Drops counted by the buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferDrops {
    pub full: u64,
    pub threshold: u64,
}

/// A running shared buffer.
#[derive(Clone, Debug)]
pub struct SharedBuffer {
    cell: u64,
    /// Shared cells: the total less every queue's reserve.
    pool: u64,
    reserved: u64,
    alpha: Vec<f64>,
    /// Per queue: cells held.
    len: Vec<u64>,
    /// Cells of the shared pool in use (sum over queues of what exceeds the reserve).
    shared_used: u64,
    /// All cells in use.
    used: u64,
    pub drops: BufferDrops,
}

impl SharedBuffer {
    /// A buffer for queues of the given alphas (one per queue).
    pub fn new(spec: &SharedBufferSpec, alphas: Vec<f64>) -> SharedBuffer {
        let cell = spec.cell_bytes.max(1) as u64;
        let total = spec.size_bytes / cell;
        let reserved = spec.reserved_bytes.div_ceil(cell);
        let pool = total.saturating_sub(reserved * alphas.len() as u64);
        SharedBuffer {
            cell,
            pool,
            reserved,
            len: vec![0; alphas.len()],
            alpha: alphas,
            shared_used: 0,
            used: 0,
            drops: BufferDrops::default(),
        }
    }

    pub fn cells(&self, bytes: u32) -> u64 {
        (bytes as u64).div_ceil(self.cell)
    }

    fn shared_of(&self, len: u64) -> u64 {
        len.saturating_sub(self.reserved)
    }

    /// Free cells of the shared pool.
    pub fn free(&self) -> u64 {
        self.pool - self.shared_used
    }

    /// Queue `q`'s threshold now: alpha times the free shared cells (cells beyond its reserve).
    pub fn threshold(&self, q: usize) -> f64 {
        self.alpha[q] * self.free() as f64
    }

    /// May a packet of `bytes` join queue `q`? A refusal is counted. (Nothing is taken: `add`
    /// does that once the queue itself has accepted it.)
    pub fn admit(&mut self, q: usize, bytes: u32) -> Result<(), Refusal> {
        let r = self.judge(q, bytes);
        match r {
            Err(Refusal::Full) => self.drops.full += 1,
            Err(Refusal::Threshold) => self.drops.threshold += 1,
            Ok(()) => {}
        }
        r
    }

    /// Whether `admit` would admit it now (nothing counted).
    pub fn fits(&self, q: usize, bytes: u32) -> bool {
        self.judge(q, bytes).is_ok()
    }

    fn judge(&self, q: usize, bytes: u32) -> Result<(), Refusal> {
        let n = self.cells(bytes);
        let len = self.len[q];
        if len + n <= self.reserved {
            return Ok(());
        }
        let extra = self.shared_of(len + n) - self.shared_of(len);
        let free = self.free();
        if extra > free {
            return Err(Refusal::Full);
        }
        if (self.shared_of(len + n)) as f64 > self.alpha[q] * free as f64 {
            return Err(Refusal::Threshold);
        }
        Ok(())
    }

    /// A packet of `bytes` joined queue `q`.
    pub fn add(&mut self, q: usize, bytes: u32) {
        let n = self.cells(bytes);
        let len = self.len[q];
        self.shared_used += self.shared_of(len + n) - self.shared_of(len);
        self.len[q] = len + n;
        self.used += n;
    }

    /// A packet of `bytes` left queue `q`.
    pub fn remove(&mut self, q: usize, bytes: u32) {
        let n = self.cells(bytes);
        let len = self.len[q];
        debug_assert!(len >= n, "queue {q} holds {len} cells, {n} leave");
        let n = n.min(len);
        self.shared_used -= self.shared_of(len) - self.shared_of(len - n);
        self.len[q] = len - n;
        self.used -= n;
    }

    /// Bytes in use (cells times the cell size).
    pub fn used_bytes(&self) -> u64 {
        self.used * self.cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000 cells of 100 bytes; packets of 1000 bytes (10 cells).
    fn buffer(queues: usize, alpha: f64, reserved: u64) -> SharedBuffer {
        let spec = SharedBufferSpec {
            size_bytes: 100_000,
            cell_bytes: 100,
            reserved_bytes: reserved,
            alpha,
            class_alpha: vec![],
            mark_above_bytes: None,
        };
        SharedBuffer::new(&spec, vec![alpha; queues])
    }

    /// Fill queue `q` with 1000-byte packets until one is refused; its cells then.
    fn fill(b: &mut SharedBuffer, q: usize) -> u64 {
        while b.admit(q, 1000).is_ok() {
            b.add(q, 1000);
        }
        b.len[q]
    }

    #[test]
    fn one_congested_queue_takes_alpha_over_one_plus_alpha() {
        // A packet is admitted while its queue, with it, stays under alpha times the free cells
        // (as they were before it): len + 10 <= alpha (1000 - len), worked out by hand.
        for (alpha, want) in [(1.0, 500), (2.0, 670), (0.5, 330), (8.0, 890)] {
            let mut b = buffer(4, alpha, 0);
            let got = fill(&mut b, 0);
            // B alpha / (1 + alpha), to within one packet (10 cells).
            let exact = 1000.0 * alpha / (1.0 + alpha);
            assert!((got as f64 - exact).abs() <= 10.0, "alpha {alpha}: {got} vs {exact}");
            assert_eq!(got, want);
            assert_eq!(b.drops, BufferDrops { full: 0, threshold: 1 });
        }
    }

    #[test]
    fn n_congested_queues_each_take_alpha_over_one_plus_n_alpha() {
        for n in [2usize, 3, 5] {
            let mut b = buffer(8, 1.0, 0);
            // Round robin, as N saturated queues fill together.
            let mut open = vec![true; n];
            while open.iter().any(|&o| o) {
                for (q, still) in open.iter_mut().enumerate() {
                    if *still {
                        if b.admit(q, 1000).is_ok() {
                            b.add(q, 1000);
                        } else {
                            *still = false;
                        }
                    }
                }
            }
            let exact = 1000.0 / (1.0 + n as f64);
            for q in 0..n {
                let got = b.len[q] as f64;
                assert!((got - exact).abs() <= 10.0, "{n} queues: queue {q} holds {got}, DT gives {exact}");
            }
        }
    }

    #[test]
    fn a_burst_into_an_idle_switch_is_absorbed_up_to_the_threshold() {
        // alpha = 4: a burst of 100 packets (1000 cells) into an idle port; 800 cells is the
        // steady share, 80 packets are taken, the rest refused by the threshold.
        let mut b = buffer(4, 4.0, 0);
        let mut taken = 0;
        for _ in 0..100 {
            if b.admit(0, 1000).is_ok() {
                b.add(0, 1000);
                taken += 1;
            }
        }
        assert_eq!(taken, 80);
        assert_eq!(b.drops.threshold, 20);
        // Draining the queue gives the cells back.
        for _ in 0..taken {
            b.remove(0, 1000);
        }
        assert_eq!((b.used, b.shared_used, b.free()), (0, 0, 1000));
    }

    #[test]
    fn reserved_cells_are_always_admitted() {
        // 2000 bytes reserved per queue (20 cells) of 4 queues: 920 shared cells. Queue 0
        // takes the whole pool with a huge alpha; queue 1 still gets its 2 packets.
        let mut b = buffer(4, 1e9, 2000);
        assert_eq!(b.free(), 920);
        fill(&mut b, 0);
        assert_eq!(b.free(), 0);
        assert_eq!(b.drops.full, 1, "refused for want of room, not by the threshold");
        assert!(b.admit(1, 1000).is_ok());
        b.add(1, 1000);
        assert!(b.admit(1, 1000).is_ok());
        b.add(1, 1000);
        assert_eq!(b.admit(1, 1000), Err(Refusal::Full));
    }

    #[test]
    fn cells_round_up_and_bad_settings_are_named() {
        let b = buffer(1, 1.0, 0);
        assert_eq!((b.cells(1), b.cells(100), b.cells(101), b.cells(1500)), (1, 1, 2, 15));
        let spec = |size, cell, reserved, alpha| SharedBufferSpec {
            size_bytes: size,
            cell_bytes: cell,
            reserved_bytes: reserved,
            alpha,
            class_alpha: vec![],
            mark_above_bytes: None,
        };
        assert_eq!(spec(100_000, 100, 0, 0.0).check(4, 1500), Err(BufferError::Alpha(0.0)));
        assert_eq!(spec(100_000, 0, 0, 1.0).check(4, 1500), Err(BufferError::Cell));
        assert_eq!(
            spec(10_000, 100, 3000, 1.0).check(4, 1500),
            Err(BufferError::Reserved { reserved: 12_000, total: 10_000 })
        );
        assert_eq!(spec(1000, 100, 0, 1.0).check(4, 1500), Err(BufferError::TooSmall { size: 1000, packet: 1500 }));
        assert_eq!(spec(100_000, 208, 0, 1.0).check(4, 1500), Ok(()));
    }
}
