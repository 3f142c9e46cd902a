//! CUBIC with HyStart, as Linux's `net/ipv4/tcp_cubic.c` (v2.3) runs it.
//!
//! Units are the kernel's: cwnd in packets, time in jiffies (at the socket's HZ, [`Sock::hz`])
//! for the cubic curve and in microseconds (`tcp_mstamp`) for HyStart, the curve's time axis in
//! 1/1024 s (`BICTCP_HZ`), beta in 1/1024. Integer and fixed-point arithmetic only; where C relies on `u32`/`u64`
//! wrap-around the code uses wrapping operations so the results are bit-for-bit the same.

use crate::seq::after;
use crate::{tcp_cong_avoid_ai, tcp_reno_undo_cwnd, tcp_slow_start, AckSample, CaEvent, CaState, CongestionOps, Sock};

/// `BICTCP_BETA_SCALE`: beta is expressed in 1/1024.
const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: the cubic curve's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;

/// `HYSTART_ACK_TRAIN` / `HYSTART_DELAY`: the two exit detectors, as bits of `hystart_detect`.
const HYSTART_ACK_TRAIN: u32 = 0x1;
const HYSTART_DELAY: u32 = 0x2;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay detector may fire.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX` (µs): clamp of the delay-increase threshold.
const HYSTART_DELAY_MIN: u32 = 4000;
const HYSTART_DELAY_MAX: u32 = 16000;
/// `sk_gso_max_size` for the TSO/GRO cushion of `hystart_ack_delay`: Linux's default
/// (`GSO_LEGACY_MAX_SIZE`); [`Sock`] does not carry it.
const GSO_MAX_SIZE: u64 = 65536;

/// CUBIC module parameters (`module_param`s of tcp_cubic.c). `None` means the kernel default,
/// so `CubicParams::default()` is exactly Linux's configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CubicParams {
    /// `beta`, multiplicative decrease in 1/1024 (default 717). Must be below 1024.
    pub beta: Option<u32>,
    /// `fast_convergence` (default on).
    pub fast_convergence: Option<bool>,
    /// `tcp_friendliness` (default on).
    pub tcp_friendliness: Option<bool>,
    /// `bic_scale`, the cubic constant C in 1/1024 (default 41, i.e. C ≈ 0.4). Must be ≥ 1.
    pub bic_scale: Option<u32>,
    /// `initial_ssthresh` (default 0 = leave ssthresh alone); only applied when HyStart is off.
    pub initial_ssthresh: Option<u32>,
    /// `hystart` (default on).
    pub hystart: Option<bool>,
    /// `hystart_detect`: bit 0 ACK train, bit 1 delay (default 3 = both).
    pub hystart_detect: Option<u32>,
    /// `hystart_low_window`: HyStart only acts from this cwnd on (default 16).
    pub hystart_low_window: Option<u32>,
    /// `hystart_ack_delta_us`: ACKs closer than this belong to one train (default 2000 µs).
    pub hystart_ack_delta_us: Option<u32>,
}

impl CubicParams {
    /// Reject values the kernel arithmetic cannot handle (the scenario layer calls this).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(b) = self.beta {
            if b >= BICTCP_BETA_SCALE {
                return Err(format!("cubic beta {b} must be below {BICTCP_BETA_SCALE}"));
            }
        }
        if self.bic_scale == Some(0) {
            return Err("cubic bic_scale must be at least 1".into());
        }
        if let Some(d) = self.hystart_detect {
            if d > (HYSTART_ACK_TRAIN | HYSTART_DELAY) {
                return Err(format!("cubic hystart_detect {d} must be 0..=3"));
            }
        }
        if let Some(d) = self.hystart_ack_delta_us {
            if d > i32::MAX as u32 {
                return Err(format!("cubic hystart_ack_delta_us {d} out of range"));
            }
        }
        Ok(())
    }
}

/// Parameters resolved against the kernel defaults, plus the factors `cubictcp_register`
/// precomputes from them.
#[derive(Clone, Copy, Debug)]
struct Consts {
    beta: u32,
    /// `beta_scale = 8 * (1024 + beta) / 3 / (1024 - beta)` (15 for beta = 717).
    beta_scale: u32,
    /// `cube_rtt_scale = bic_scale * 10` (410): 1024 * C / RTT with the RTT fixed at 100 ms.
    cube_rtt_scale: u32,
    initial_ssthresh: u32,
    hystart_low_window: u32,
    hystart_ack_delta_us: u32,
    hystart_detect: u8,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hystart: bool,
}

impl Consts {
    fn resolve(p: &CubicParams) -> Consts {
        // Out-of-range values are clamped so the arithmetic stays defined; `validate` reports them.
        let beta = p.beta.unwrap_or(717).min(BICTCP_BETA_SCALE - 1);
        let bic_scale = p.bic_scale.unwrap_or(41).max(1);
        Consts {
            beta,
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            cube_rtt_scale: bic_scale.saturating_mul(10),
            initial_ssthresh: p.initial_ssthresh.unwrap_or(0),
            hystart_low_window: p.hystart_low_window.unwrap_or(16),
            hystart_ack_delta_us: p.hystart_ack_delta_us.unwrap_or(2000).min(i32::MAX as u32),
            hystart_detect: (p.hystart_detect.unwrap_or(HYSTART_ACK_TRAIN | HYSTART_DELAY) & 3) as u8,
            fast_convergence: p.fast_convergence.unwrap_or(true),
            tcp_friendliness: p.tcp_friendliness.unwrap_or(true),
            hystart: p.hystart.unwrap_or(true),
        }
    }

    /// `cube_factor = 2^(10 + 3 * BICTCP_HZ) / (bic_scale * 10)`: turns (W_max - cwnd) into K^3
    /// in (2^-10 s)^3. Recomputed when needed (once per epoch) instead of stored.
    fn cube_factor(&self) -> u64 {
        (1u64 << (10 + 3 * BICTCP_HZ)) / u64::from(self.cube_rtt_scale)
    }
}

/// Per-connection state (`struct bictcp`), all in kernel units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BicTcp {
    /// Increase cwnd by 1 after this many ACKed packets.
    cnt: u32,
    /// W_max: cwnd before the last reduction (after fast convergence).
    last_max_cwnd: u32,
    /// cwnd and jiffies at the last `bictcp_update`.
    last_cwnd: u32,
    last_time: u32,
    /// Origin (plateau) of the cubic curve, packets.
    bic_origin_point: u32,
    /// K: time from epoch start to the plateau, in 2^-10 s.
    bic_k: u32,
    /// Minimum RTT seen, µs.
    delay_min: u32,
    /// Jiffies at the start of the current epoch, 0 when none.
    epoch_start: u32,
    /// Packets ACKed since the Reno estimate last grew.
    ack_cnt: u32,
    /// Reno-equivalent cwnd estimate (TCP friendliness).
    tcp_cwnd: u32,
    /// HyStart: RTT samples taken this round.
    sample_cnt: u8,
    /// HyStart: exit point found.
    found: bool,
    /// HyStart: µs clock at the start of the round.
    round_start: u32,
    /// HyStart: snd_nxt when the round began.
    end_seq: u32,
    /// HyStart: µs clock of the last ACK in the current train.
    last_ack: u32,
    /// HyStart: minimum RTT of this round, µs.
    curr_rtt: u32,
}

// Linux: BUILD_BUG_ON(sizeof(struct bictcp) > ICSK_CA_PRIV_SIZE).
const _: () = assert!(std::mem::size_of::<BicTcp>() <= 104);
const _: () = assert!(std::mem::size_of::<Cubic>() <= 104);

/// TCP CUBIC (`cubictcp`).
#[derive(Clone, Debug)]
pub struct Cubic {
    ca: BicTcp,
    k: Consts,
}

/// `fls64`: index of the most significant set bit, counting from 1; 0 for 0.
fn fls64(a: u64) -> u32 {
    64 - a.leading_zeros()
}

/// `cubic_root`: integer cube root by a 64-entry table of the top bits followed by a single
/// Newton-Raphson step (average error about 0.2 %).
pub fn cubic_root(a: u64) -> u32 {
    // CBRT_TABLE[i] = cbrt(i << 18) - 1, hand-tuned in Linux; cbrt(i) = (CBRT_TABLE[i] + 10) >> 6.
    const CBRT_TABLE: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, //
        123, 129, 134, 138, 143, 147, 151, 156, //
        157, 161, 164, 168, 170, 173, 176, 179, //
        181, 185, 187, 190, 192, 194, 197, 199, //
        200, 202, 204, 206, 209, 211, 213, 215, //
        217, 219, 221, 222, 224, 225, 227, 229, //
        231, 232, 234, 236, 237, 239, 240, 242, //
        244, 245, 246, 248, 250, 251, 252, 254, //
    ];

    let bits = fls64(a);
    if bits < 7 {
        // a < 64: read the table directly.
        return (u32::from(CBRT_TABLE[a as usize]) + 35) >> 6;
    }
    // Roughly bits / 3 - 1: scale a down so its top bits index the table.
    let b = ((bits * 84) >> 8) - 1;
    let top = (a >> (b * 3)) as usize;
    let x0 = ((u32::from(CBRT_TABLE[top]) + 10) << b) >> 6;

    // One Newton step, x = (2x + a / x^2) / 3, using x * (x - 1) in the divisor and
    // 341 / 1024 for the division by 3, as the kernel does.
    let x0 = u64::from(x0);
    let quot = a / (x0 * (x0 - 1));
    let x = (2 * x0 as u32).wrapping_add(quot as u32);
    ((u64::from(x) * 341) >> 10) as u32
}

impl Cubic {
    pub fn new(params: CubicParams) -> Cubic {
        Cubic { ca: BicTcp::default(), k: Consts::resolve(&params) }
    }

    /// W_max, the cwnd CUBIC aims to return to (`last_max_cwnd`).
    pub fn last_max_cwnd(&self) -> u32 {
        self.ca.last_max_cwnd
    }

    /// K in 2^-10 s (`bic_K`).
    pub fn bic_k(&self) -> u32 {
        self.ca.bic_k
    }

    /// ACKed packets per cwnd increment (`cnt`).
    pub fn cnt(&self) -> u32 {
        self.ca.cnt
    }

    /// Minimum RTT in µs (`delay_min`).
    pub fn delay_min_us(&self) -> u32 {
        self.ca.delay_min
    }

    /// HyStart found its exit point this slow start.
    pub fn hystart_found(&self) -> bool {
        self.ca.found
    }

    /// `bictcp_reset`: forget everything but the HyStart round bookkeeping.
    fn reset(&mut self) {
        let ca = &mut self.ca;
        *ca = BicTcp {
            round_start: ca.round_start,
            end_seq: ca.end_seq,
            last_ack: ca.last_ack,
            curr_rtt: ca.curr_rtt,
            sample_cnt: ca.sample_cnt,
            ..BicTcp::default()
        };
    }

    /// `bictcp_clock_us`: `tcp_mstamp` truncated to 32 bits.
    fn clock_us(sk: &Sock) -> u32 {
        sk.now_us() as u32
    }

    /// `bictcp_hystart_reset`: start a new HyStart round ending at snd_nxt.
    fn hystart_reset(&mut self, sk: &Sock) {
        let now = Self::clock_us(sk);
        self.ca.round_start = now;
        self.ca.last_ack = now;
        self.ca.end_seq = sk.snd_nxt;
        self.ca.curr_rtt = u32::MAX;
        self.ca.sample_cnt = 0;
    }

    /// `bictcp_update`: recompute `cnt` from the cubic curve (at most once per jiffy) and the
    /// Reno-friendly estimate.
    fn update(&mut self, sk: &Sock, cwnd: u32, acked: u32) {
        let now = sk.jiffies();
        let hz = sk.hz();
        let k = self.k;
        let ca = &mut self.ca;

        ca.ack_cnt = ca.ack_cnt.wrapping_add(acked);

        if ca.last_cwnd == cwnd && (now.wrapping_sub(ca.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }

        // The curve is re-evaluated at most once per jiffy; a reduction clears epoch_start and
        // so forces a new evaluation.
        if !(ca.epoch_start != 0 && now == ca.last_time) {
            ca.last_cwnd = cwnd;
            ca.last_time = now;

            if ca.epoch_start == 0 {
                ca.epoch_start = now;
                ca.ack_cnt = acked;
                ca.tcp_cwnd = cwnd;
                if ca.last_max_cwnd <= cwnd {
                    ca.bic_k = 0;
                    ca.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max - cwnd) * RTT / C) in 2^-10 s.
                    let gap = u64::from(ca.last_max_cwnd - cwnd);
                    ca.bic_k = cubic_root(k.cube_factor().wrapping_mul(gap));
                    ca.bic_origin_point = ca.last_max_cwnd;
                }
            }

            // Elapsed epoch time plus one min RTT of look-ahead, converted to 2^-10 s.
            let mut t = i64::from(now.wrapping_sub(ca.epoch_start) as i32) as u64;
            t = t.wrapping_add(u64::from(sk.usecs_to_jiffies(ca.delay_min)));
            // do_div(t, HZ), by a constant at the default HZ.
            t <<= BICTCP_HZ;
            t = if hz == 1000 { t / 1000 } else { t / u64::from(hz) };

            let bic_k = u64::from(ca.bic_k);
            let offs = bic_k.abs_diff(t);
            // C / RTT * (t - K)^3, in packets.
            let delta = (u64::from(k.cube_rtt_scale).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < bic_k {
                ca.bic_origin_point.wrapping_sub(delta)
            } else {
                ca.bic_origin_point.wrapping_add(delta)
            };

            ca.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.wrapping_mul(100) };

            // Without any W_max yet, grow at least 5 % per RTT.
            if ca.last_max_cwnd == 0 && ca.cnt > 20 {
                ca.cnt = 20;
            }
        }

        // TCP friendliness: track what Reno with the same beta would have, never grow slower.
        if k.tcp_friendliness {
            let per_pkt = cwnd.wrapping_mul(k.beta_scale) >> 3;
            if per_pkt > 0 && ca.ack_cnt > per_pkt {
                // Same as subtracting per_pkt while ack_cnt > per_pkt.
                let n = (ca.ack_cnt - 1) / per_pkt;
                ca.ack_cnt -= n * per_pkt;
                ca.tcp_cwnd = ca.tcp_cwnd.wrapping_add(n);
            }
            if ca.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
                ca.cnt = ca.cnt.min(max_cnt);
            }
        }

        // At most 1 packet per 2 ACKed: 1.5x per RTT.
        ca.cnt = ca.cnt.max(2);
    }

    /// `hystart_ack_delay`: TSO/GRO cushion, at most 1 ms, 0 without a pacing rate.
    fn hystart_ack_delay(sk: &Sock) -> u32 {
        if sk.pacing_rate == 0 {
            return 0;
        }
        (GSO_MAX_SIZE * 4 * 1_000_000 / sk.pacing_rate).min(1000) as u32
    }

    /// `hystart_update`: look for the slow-start exit by ACK-train length or RTT increase.
    fn hystart_update(&mut self, sk: &mut Sock, delay: u32) {
        if after(sk.snd_una, self.ca.end_seq) {
            self.hystart_reset(sk);
        }

        if sk.snd_cwnd < self.k.hystart_low_window {
            return;
        }

        if u32::from(self.k.hystart_detect) & HYSTART_ACK_TRAIN != 0 {
            let now = Self::clock_us(sk);
            if (now.wrapping_sub(self.ca.last_ack) as i32) <= self.k.hystart_ack_delta_us as i32 {
                self.ca.last_ack = now;
                let mut threshold = self.ca.delay_min.wrapping_add(Self::hystart_ack_delay(sk));
                // Sock has no sk_pacing_status: the flow counts as unpaced (SK_PACING_NONE), so
                // the train must span half the min RTT.
                threshold >>= 1;
                // (s32) vs u32 in C: an unsigned comparison.
                if now.wrapping_sub(self.ca.round_start) > threshold {
                    self.ca.found = true;
                    sk.snd_ssthresh = sk.snd_cwnd;
                }
            }
        }

        if u32::from(self.k.hystart_detect) & HYSTART_DELAY != 0 {
            self.ca.curr_rtt = self.ca.curr_rtt.min(delay);
            if self.ca.sample_cnt < HYSTART_MIN_SAMPLES {
                self.ca.sample_cnt += 1;
            } else {
                let thresh = (self.ca.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.ca.curr_rtt > self.ca.delay_min.wrapping_add(thresh) {
                    self.ca.found = true;
                    sk.snd_ssthresh = sk.snd_cwnd;
                }
            }
        }
    }
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(CubicParams::default())
    }
}

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init`.
    fn init(&mut self, sk: &mut Sock) {
        self.reset();
        if self.k.hystart {
            self.hystart_reset(sk);
        }
        if !self.k.hystart && self.k.initial_ssthresh != 0 {
            sk.snd_ssthresh = self.k.initial_ssthresh;
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (reduced further when the
    /// previous W_max was not reached: fast convergence), and return cwnd * beta.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        let cwnd = sk.snd_cwnd;
        self.ca.epoch_start = 0;
        self.ca.last_max_cwnd = if cwnd < self.ca.last_max_cwnd && self.k.fast_convergence {
            (u64::from(cwnd) * u64::from(BICTCP_BETA_SCALE + self.k.beta) / u64::from(2 * BICTCP_BETA_SCALE)) as u32
        } else {
            cwnd
        };
        ((u64::from(cwnd) * u64::from(self.k.beta) / u64::from(BICTCP_BETA_SCALE)) as u32).max(2)
    }

    /// `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut Sock, _ack: u32, mut acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = sk.snd_cwnd;
        self.update(sk, cwnd, acked);
        tcp_cong_avoid_ai(sk, self.ca.cnt, acked);
    }

    /// `cubictcp_state`: an RTO forgets the curve and restarts HyStart.
    fn set_state(&mut self, sk: &mut Sock, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(sk);
        }
    }

    /// `cubictcp_cwnd_event`: after an idle period, shift the epoch so growth resumes on the
    /// curve where it left off.
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let now = sk.jiffies();
        let lsndtime = sk.jiffies_at(sk.lsndtime_ns); // tp->lsndtime counts jiffies
        let delta = now.wrapping_sub(lsndtime) as i32;
        if self.ca.epoch_start != 0 && delta > 0 {
            self.ca.epoch_start = self.ca.epoch_start.wrapping_add(delta as u32);
            if after(self.ca.epoch_start, now) {
                self.ca.epoch_start = now;
            }
        }
    }

    /// `cubictcp_acked`: min-RTT tracking and HyStart.
    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples for a second after a reduction (right after fast recovery).
        if self.ca.epoch_start != 0 && (sk.jiffies().wrapping_sub(self.ca.epoch_start) as i32) < sk.hz() as i32 {
            return;
        }
        let delay = (sample.rtt_us as u32).max(1);
        if self.ca.delay_min == 0 || self.ca.delay_min > delay {
            self.ca.delay_min = delay;
        }
        if !self.ca.found && sk.in_slow_start() && self.k.hystart {
            self.hystart_update(sk, delay);
        }
    }

    /// `.undo_cwnd = tcp_reno_undo_cwnd`.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_undo_cwnd(sk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sock::TCP_INFINITE_SSTHRESH;

    const SEC: u64 = 1_000_000_000;
    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    /// A connection in congestion avoidance, cwnd-limited, with the clock at 10 s.
    fn ca_sock(cwnd: u32, ssthresh: u32) -> Sock {
        Sock { now_ns: 10 * SEC, snd_cwnd: cwnd, snd_ssthresh: ssthresh, is_cwnd_limited: true, ..Sock::default() }
    }

    fn sample(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }
    }

    /// One RTT of ACK clock: cwnd ACKs of one packet each, evenly spread over `rtt_ns`.
    fn one_rtt(c: &mut Cubic, sk: &mut Sock, rtt_ns: u64) {
        let w = sk.snd_cwnd as u64;
        let step = rtt_ns / w;
        for _ in 0..w {
            sk.now_ns += step;
            c.cong_avoid(sk, 0, 1);
        }
        sk.now_ns += rtt_ns - step * w;
    }

    #[test]
    fn cubic_root_within_two_percent_of_cbrt() {
        // Small inputs come straight from the table: within one unit.
        for a in 0u64..64 {
            let exact = (a as f64).cbrt();
            let got = cubic_root(a) as f64;
            assert!((got - exact).abs() <= 1.0, "a={a}: {got} vs {exact}");
        }
        // Dense sweep of [64, 2^20) and a pseudo-random sweep up to 2^63: within 2 %.
        let mut worst = 0.0f64;
        let mut check = |a: u64| {
            let exact = (a as f64).cbrt();
            let got = cubic_root(a) as f64;
            let err = (got - exact).abs() / exact;
            // Below a few hundred the integer result itself is the limit: allow one unit.
            assert!(err <= 0.02 || (got - exact).abs() < 1.0, "a={a}: {got} vs {exact} ({:.3} %)", err * 100.0);
            if a >= 1 << 30 {
                // CUBIC's own range: cube_factor * (W_max - cwnd) >= 2^31.
                worst = worst.max(err);
            }
        };
        for a in 64u64..(1 << 20) {
            check(a);
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = 7 + (x % 57) as u32; // 7..=63 significant bits
            check((x >> (64 - bits)) | (1 << (bits - 1)));
        }
        for bits in 7..64 {
            check((1u64 << bits) - 1);
            check(1u64 << bits);
        }
        check(u64::MAX);
        assert!(worst < 0.02, "worst relative error {worst}");
    }

    #[test]
    fn precomputed_factors_match_kernel_defaults() {
        let k = Consts::resolve(&CubicParams::default());
        assert_eq!(k.beta, 717);
        assert_eq!(k.beta_scale, 15, "8*(1024+717)/3/(1024-717)");
        assert_eq!(k.cube_rtt_scale, 410, "bic_scale * 10");
        assert_eq!(k.cube_factor(), (1u64 << 40) / 410);
        assert!(k.fast_convergence && k.tcp_friendliness && k.hystart);
        assert_eq!(u32::from(k.hystart_detect), HYSTART_ACK_TRAIN | HYSTART_DELAY);
        assert_eq!((k.hystart_low_window, k.hystart_ack_delta_us, k.initial_ssthresh), (16, 2000, 0));
        assert!(CubicParams::default().validate().is_ok());
        assert!(CubicParams { beta: Some(1024), ..Default::default() }.validate().is_err());
        assert!(CubicParams { bic_scale: Some(0), ..Default::default() }.validate().is_err());
    }

    #[test]
    fn ssthresh_is_beta_717_and_fast_convergence_lowers_wmax() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(100, 50);
        c.init(&mut sk);
        // First loss: W_max = cwnd, ssthresh = cwnd * 717 / 1024.
        assert_eq!(c.ssthresh(&mut sk), 70);
        assert_eq!(c.last_max_cwnd(), 100);
        // Loss below the previous W_max: fast convergence, W_max = cwnd * (1 + beta) / 2.
        sk.snd_cwnd = 80;
        assert_eq!(c.ssthresh(&mut sk), 80 * 717 / 1024);
        assert_eq!(c.last_max_cwnd(), 80 * (1024 + 717) / 2048);
        // Loss above W_max: plain W_max = cwnd.
        sk.snd_cwnd = 90;
        assert_eq!(c.ssthresh(&mut sk), 63);
        assert_eq!(c.last_max_cwnd(), 90);
        // Without fast convergence W_max is always cwnd.
        let mut c = Cubic::new(CubicParams { fast_convergence: Some(false), ..Default::default() });
        sk.snd_cwnd = 100;
        c.ssthresh(&mut sk);
        sk.snd_cwnd = 80;
        c.ssthresh(&mut sk);
        assert_eq!(c.last_max_cwnd(), 80);
        // Floor of 2.
        sk.snd_cwnd = 2;
        assert_eq!(c.ssthresh(&mut sk), 2);
        // A reduction ends the epoch.
        assert_eq!(c.ca.epoch_start, 0);
    }

    #[test]
    fn growth_is_concave_before_k_and_convex_after() {
        let rtt = 100 * MS;
        let mut c = Cubic::default();
        let mut sk = ca_sock(100, 100);
        c.init(&mut sk);
        // A min-RTT sample before the loss (outside any epoch, so it counts).
        c.pkts_acked(&mut sk, &sample(100_000));
        assert_eq!(c.delay_min_us(), 100_000);
        let ss = c.ssthresh(&mut sk);
        assert_eq!(ss, 70);
        sk.snd_ssthresh = ss;
        sk.snd_cwnd = ss;

        let t0 = sk.now_ns;
        one_rtt(&mut c, &mut sk, rtt);
        // K = cbrt((100 - 70) / 0.4) s ≈ 4.217 s, in 2^-10 s.
        let k_s = c.bic_k() as f64 / 1024.0;
        assert!((k_s - (30.0f64 / 0.4).cbrt()).abs() < 0.02, "K = {k_s} s");

        // cwnd at each whole second since the epoch began.
        let mut at_sec = vec![70u32];
        let mut rtts = 1;
        while rtts < 80 {
            one_rtt(&mut c, &mut sk, rtt);
            rtts += 1;
            let t = (sk.now_ns - t0) as f64 / SEC as f64;
            // cwnd follows W(t) = 0.4 (t + delay_min - K)^3 + W_max within a few packets.
            let w = 410.0 / 1024.0 * (t + 0.1 - k_s).powi(3) + 100.0;
            assert!((sk.snd_cwnd as f64 - w).abs() <= 3.0, "t={t:.1}s cwnd {} vs W(t) {w:.1}", sk.snd_cwnd);
            if rtts % 10 == 0 {
                at_sec.push(sk.snd_cwnd);
            }
            assert!(c.cnt() >= 2);
        }
        let d: Vec<i64> = at_sec.windows(2).map(|w| w[1] as i64 - w[0] as i64).collect();
        // Concave: growth per second shrinks while approaching W_max ...
        assert!(d[0] > d[1] && d[1] > d[2] && d[2] > d[3], "{at_sec:?}");
        // ... plateau around K (≈ 4.2 s) ...
        assert!(d[3] <= 2 && d[4] <= 2, "{at_sec:?}");
        assert!((at_sec[4] as i64 - 100).abs() <= 2, "{at_sec:?}");
        // ... convex: growth per second increases past it.
        assert!(d[4] < d[5] && d[5] < d[6] && d[6] < d[7], "{at_sec:?}");
    }

    #[test]
    fn tcp_friendliness_keeps_up_with_reno_at_short_rtt() {
        // At 1 ms RTT the cubic curve barely moves in 0.1 s; the Reno estimate (beta_scale 15:
        // +1 packet per cwnd * 15 / 8 ACKed) must carry cwnd up.
        let run = |friendly: bool| {
            let mut c = Cubic::new(CubicParams { tcp_friendliness: Some(friendly), ..Default::default() });
            let mut sk = ca_sock(100, 100);
            c.init(&mut sk);
            c.pkts_acked(&mut sk, &sample(1000));
            sk.snd_ssthresh = c.ssthresh(&mut sk);
            sk.snd_cwnd = sk.snd_ssthresh;
            for _ in 0..100 {
                one_rtt(&mut c, &mut sk, MS);
            }
            sk.snd_cwnd
        };
        let with = run(true);
        let without = run(false);
        assert!(without <= 75, "cubic alone: {without}");
        // Reno would gain about 8/15 packet per RTT: ~50 packets in 100 RTTs.
        assert!((100..=130).contains(&with), "tcp-friendly: {with}");
    }

    #[test]
    fn cnt_is_20_without_wmax_and_never_below_2() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(30, 30);
        c.init(&mut sk);
        c.cong_avoid(&mut sk, 0, 1);
        assert_eq!(c.last_max_cwnd(), 0);
        assert_eq!(c.cnt(), 20, "no W_max yet: at least 5 % per RTT");

        // Far below W_max, where the curve is steep: with one 100 ms RTT of look-ahead it
        // would want more than 1.5x per RTT; cnt stops at 2.
        let mut c = Cubic::default();
        let mut sk = ca_sock(1000, 1000);
        c.init(&mut sk);
        c.pkts_acked(&mut sk, &sample(100_000));
        c.ssthresh(&mut sk);
        sk.snd_cwnd = 10;
        sk.snd_ssthresh = 10;
        c.cong_avoid(&mut sk, 0, 1);
        assert_eq!(c.cnt(), 2);
    }

    #[test]
    fn curve_is_evaluated_at_most_once_per_jiffy() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(100, 100);
        c.init(&mut sk);
        c.pkts_acked(&mut sk, &sample(100_000));
        sk.snd_ssthresh = c.ssthresh(&mut sk);
        sk.snd_cwnd = 70;
        c.cong_avoid(&mut sk, 0, 1);
        let cnt = c.cnt();
        // K = cbrt(2^40 / 410 * 30) = 4316.97 (4316 from cubic_root) in 2^-10 s; at
        // t = delay_min = 102/1024 s the target is 100 - (410 * 4214^3 >> 40) = 100 - 27 = 73,
        // so cnt = 70 / 3.
        assert!((c.bic_k() as f64 - ((1u64 << 40) as f64 / 410.0 * 30.0).cbrt()).abs() < 1.0);
        assert_eq!(cnt, 23);
        // Same jiffy, cwnd changed to above the target: cnt is not recomputed.
        sk.snd_cwnd = 80;
        sk.snd_cwnd_cnt = 0;
        sk.now_ns += 500 * US;
        c.cong_avoid(&mut sk, 0, 1);
        assert_eq!(c.cnt(), cnt);
        // Next jiffy: recomputed, far above the curve means "very small increment".
        sk.now_ns += MS;
        c.cong_avoid(&mut sk, 0, 1);
        assert_eq!(c.cnt(), 100 * 80);
    }

    /// Drive HyStart's delay detector: one round of 9 samples at `base_us` spaced 3 ms apart
    /// (too far apart to be an ACK train), then a new round at `high_us`. Returns the number of
    /// samples in the second round after which the exit fired, if it did.
    fn hystart_delay_exit(base_us: u32, high_us: u32) -> Option<u32> {
        let mut c = Cubic::default();
        let mut sk = ca_sock(20, TCP_INFINITE_SSTHRESH);
        sk.snd_nxt = 100_000;
        c.init(&mut sk);
        for _ in 0..9 {
            sk.now_ns += 3 * MS;
            sk.snd_una += 1000;
            c.pkts_acked(&mut sk, &sample(base_us as i64));
        }
        assert!(!c.hystart_found());
        assert_eq!(c.delay_min_us(), base_us);
        // Next round: snd_una passes end_seq.
        sk.snd_una = 100_001;
        sk.snd_nxt = 200_000;
        for n in 1..=20 {
            sk.now_ns += 3 * MS;
            c.pkts_acked(&mut sk, &sample(high_us as i64));
            if c.hystart_found() {
                assert_eq!(sk.snd_ssthresh, sk.snd_cwnd, "exit sets ssthresh = cwnd");
                return Some(n);
            }
        }
        assert_eq!(sk.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        None
    }

    #[test]
    fn hystart_delay_exit_needs_rtt_rise_above_clamped_threshold() {
        // delay_min 10 ms: 10/8 ms is clamped up to 4 ms.
        assert_eq!(hystart_delay_exit(10_000, 14_000), None);
        // Fires on the first comparison, i.e. the 9th sample of the round (8 just count).
        assert_eq!(hystart_delay_exit(10_000, 14_001), Some(HYSTART_MIN_SAMPLES as u32 + 1));
        // delay_min 64 ms: 8 ms, inside the clamp.
        assert_eq!(hystart_delay_exit(64_000, 72_000), None);
        assert_eq!(hystart_delay_exit(64_000, 72_001), Some(9));
        // delay_min 200 ms: 25 ms is clamped down to 16 ms.
        assert_eq!(hystart_delay_exit(200_000, 216_000), None);
        assert_eq!(hystart_delay_exit(200_000, 216_001), Some(9));
    }

    #[test]
    fn hystart_waits_for_low_window_and_slow_start() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(15, TCP_INFINITE_SSTHRESH);
        c.init(&mut sk);
        for i in 0..40 {
            sk.now_ns += 3 * MS;
            c.pkts_acked(&mut sk, &sample(if i < 5 { 10_000 } else { 50_000 }));
        }
        assert!(!c.hystart_found(), "cwnd 15 < hystart_low_window");
        // Not in slow start: HyStart is not consulted.
        let mut c = Cubic::default();
        let mut sk = ca_sock(40, 30);
        c.init(&mut sk);
        for i in 0..40 {
            sk.now_ns += 3 * MS;
            c.pkts_acked(&mut sk, &sample(if i < 5 { 10_000 } else { 50_000 }));
        }
        assert!(!c.hystart_found());
        assert_eq!(sk.snd_ssthresh, 30);
    }

    #[test]
    fn hystart_ack_train_exits_past_half_delay_min() {
        // Unpaced: threshold = delay_min / 2 = 5 ms; ACKs every 1 ms form one train.
        let mut c = Cubic::default();
        let mut sk = ca_sock(20, TCP_INFINITE_SSTHRESH);
        sk.snd_nxt = 1_000_000;
        c.init(&mut sk);
        let start = sk.now_ns;
        c.pkts_acked(&mut sk, &sample(10_000));
        for ms in 1..=5 {
            sk.now_ns = start + ms * MS;
            c.pkts_acked(&mut sk, &sample(10_000));
            assert!(!c.hystart_found(), "{ms} ms is not past 5 ms");
        }
        sk.now_ns = start + 6 * MS;
        c.pkts_acked(&mut sk, &sample(10_000));
        assert!(c.hystart_found());
        assert_eq!(sk.snd_ssthresh, 20);

        // With a pacing rate the TSO/GRO allowance (capped at 1 ms) is added before halving:
        // 65536 * 4 / 100 MB/s = 2.6 ms -> 1 ms, threshold (10 + 1) / 2 = 5.5 ms.
        let mut c = Cubic::default();
        let mut sk = ca_sock(20, TCP_INFINITE_SSTHRESH);
        sk.snd_nxt = 1_000_000;
        sk.pacing_rate = 100_000_000;
        c.init(&mut sk);
        let start = sk.now_ns;
        c.pkts_acked(&mut sk, &sample(10_000));
        for half_ms in 1..=11 {
            sk.now_ns = start + half_ms * 500 * US;
            c.pkts_acked(&mut sk, &sample(10_000));
            assert!(!c.hystart_found(), "{} us is not past 5.5 ms", half_ms * 500);
        }
        sk.now_ns = start + 6 * MS;
        c.pkts_acked(&mut sk, &sample(10_000));
        assert!(c.hystart_found());

        // ACKs 3 ms apart never form a train.
        let mut c = Cubic::new(CubicParams { hystart_detect: Some(HYSTART_ACK_TRAIN), ..Default::default() });
        let mut sk = ca_sock(20, TCP_INFINITE_SSTHRESH);
        sk.snd_nxt = 1_000_000;
        c.init(&mut sk);
        for _ in 0..20 {
            sk.now_ns += 3 * MS;
            c.pkts_acked(&mut sk, &sample(10_000));
        }
        assert!(!c.hystart_found());
    }

    #[test]
    fn delay_samples_ignored_for_one_second_after_epoch_start() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(100, 100);
        c.init(&mut sk);
        c.pkts_acked(&mut sk, &sample(100_000));
        sk.snd_ssthresh = c.ssthresh(&mut sk);
        sk.snd_cwnd = sk.snd_ssthresh;
        c.cong_avoid(&mut sk, 0, 1);
        let epoch = sk.now_ns;
        sk.now_ns = epoch + 999 * MS;
        c.pkts_acked(&mut sk, &sample(5_000));
        assert_eq!(c.delay_min_us(), 100_000);
        sk.now_ns = epoch + SEC;
        c.pkts_acked(&mut sk, &sample(5_000));
        assert_eq!(c.delay_min_us(), 5_000);
        // No RTT: ignored. Zero RTT counts as 1 us.
        c.pkts_acked(&mut sk, &sample(-1));
        assert_eq!(c.delay_min_us(), 5_000);
        c.pkts_acked(&mut sk, &sample(0));
        assert_eq!(c.delay_min_us(), 1);
    }

    #[test]
    fn tx_start_after_idle_shifts_epoch() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(100, 100);
        c.init(&mut sk);
        // No epoch: nothing to shift.
        sk.lsndtime_ns = sk.now_ns - 300 * MS;
        c.cwnd_event(&mut sk, CaEvent::TxStart);
        assert_eq!(c.ca.epoch_start, 0);

        c.ssthresh(&mut sk);
        sk.snd_cwnd = 70;
        sk.snd_ssthresh = 70;
        c.cong_avoid(&mut sk, 0, 1);
        let epoch = c.ca.epoch_start;
        assert_eq!(epoch, sk.jiffies());
        // Sent last at +2 s, idle until +2.5 s: the epoch moves 500 jiffies later.
        sk.lsndtime_ns = sk.now_ns + 2 * SEC;
        sk.now_ns += 2500 * MS;
        c.cwnd_event(&mut sk, CaEvent::TxStart);
        assert_eq!(c.ca.epoch_start, epoch + 500);
        // Other events leave it alone.
        c.cwnd_event(&mut sk, CaEvent::CwndRestart);
        assert_eq!(c.ca.epoch_start, epoch + 500);
        // An idle period longer than the time since the epoch began caps it at now.
        sk.lsndtime_ns = sk.now_ns - 5 * SEC;
        c.cwnd_event(&mut sk, CaEvent::TxStart);
        assert_eq!(c.ca.epoch_start, sk.jiffies());
    }

    /// `HZ` comes from the socket: at 250 Hz a jiffy is 4 ms, so the epoch starts at jiffy 2 500
    /// (t = 10 s), an idle period of 500 ms shifts it by 125 jiffies, and `bictcp_update` turns
    /// elapsed jiffies plus `usecs_to_jiffies(delay_min)` into 1/1024 s by dividing by 250: the
    /// curve stands where it stands at 1000 Hz at the same instant (a whole number of 4 ms
    /// ticks after the epoch began).
    #[test]
    fn at_hz_250_the_curve_counts_four_millisecond_jiffies() {
        let run = |hz: u32| {
            let mut c = Cubic::default();
            let mut sk = Sock { hz, ..ca_sock(100, 100) };
            c.init(&mut sk);
            c.pkts_acked(&mut sk, &sample(30_000)); // delay_min 30 ms: 30 or 8 jiffies (rounded up)
            c.ssthresh(&mut sk); // W_max = 100
            sk.snd_cwnd = 70;
            sk.snd_ssthresh = 70;
            c.cong_avoid(&mut sk, 0, 1);
            let epoch = c.ca.epoch_start;
            assert_eq!(epoch, sk.jiffies());
            // 1.2 s on the curve: t = (elapsed + delay_min) in 1/1024 s.
            sk.now_ns += 1200 * MS;
            c.cong_avoid(&mut sk, 0, 1);
            let (cnt, k) = (c.ca.cnt, c.ca.bic_k);
            // Idle from +2 s to +2.5 s: the epoch moves by 500 ms in jiffies.
            sk.lsndtime_ns = sk.now_ns + 2 * SEC;
            sk.now_ns += 2500 * MS;
            c.cwnd_event(&mut sk, CaEvent::TxStart);
            (epoch, c.ca.epoch_start - epoch, cnt, k)
        };
        let (epoch, shift, cnt, k) = run(250);
        assert_eq!(epoch, 2_500, "10 s at 250 Hz");
        assert_eq!(shift, 125, "500 ms at 250 Hz");
        let (epoch_1000, shift_1000, cnt_1000, k_1000) = run(1000);
        assert_eq!((epoch_1000, shift_1000), (10_000, 500));
        assert_eq!(k, k_1000);
        // delay_min rounds up to 32 ms at 250 Hz against 30 ms at 1000 Hz: 2 ms further along
        // the curve, the same growth rate within one ACK.
        assert!(cnt.abs_diff(cnt_1000) <= 1, "cnt {cnt} at 250 Hz, {cnt_1000} at 1000 Hz");
        assert!(cnt > 0);
    }

    #[test]
    fn loss_state_resets_curve_and_hystart() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(100, 100);
        sk.snd_nxt = 5000;
        c.init(&mut sk);
        c.pkts_acked(&mut sk, &sample(100_000));
        sk.snd_ssthresh = c.ssthresh(&mut sk);
        sk.snd_cwnd = sk.snd_ssthresh;
        for _ in 0..10 {
            one_rtt(&mut c, &mut sk, 100 * MS);
        }
        assert!(c.last_max_cwnd() != 0 && c.ca.epoch_start != 0 && c.cnt() != 0 && c.bic_k() != 0);
        c.ca.found = true;
        c.ca.sample_cnt = 5;

        // Fast recovery does not reset.
        c.set_state(&mut sk, CaState::Recovery);
        assert_eq!(c.last_max_cwnd(), 100);

        sk.snd_nxt = 9000;
        sk.now_ns += SEC;
        c.set_state(&mut sk, CaState::Loss);
        let ca = c.ca;
        assert_eq!(
            (ca.cnt, ca.last_max_cwnd, ca.last_cwnd, ca.last_time, ca.bic_origin_point, ca.bic_k),
            (0, 0, 0, 0, 0, 0)
        );
        assert_eq!((ca.delay_min, ca.epoch_start, ca.ack_cnt, ca.tcp_cwnd), (0, 0, 0, 0));
        assert!(!ca.found);
        assert_eq!(ca.end_seq, 9000);
        assert_eq!(ca.curr_rtt, u32::MAX);
        assert_eq!(ca.sample_cnt, 0);
        assert_eq!(ca.round_start, sk.now_us() as u32);
        assert_eq!(ca.last_ack, sk.now_us() as u32);
    }

    #[test]
    fn slow_start_then_undo_like_reno() {
        let mut c = Cubic::default();
        let mut sk = ca_sock(10, 100);
        c.init(&mut sk);
        c.cong_avoid(&mut sk, 0, 4);
        assert_eq!(sk.snd_cwnd, 14);
        sk.prior_cwnd = 40;
        assert_eq!(c.undo_cwnd(&mut sk), 40);
        assert_eq!(c.name(), "cubic");
        assert!(!c.needs_ecn());
        assert_eq!(c.get_info(&sk), crate::CcInfo::None);
    }

    #[test]
    fn initial_ssthresh_only_without_hystart() {
        let mut sk = ca_sock(10, TCP_INFINITE_SSTHRESH);
        let mut c = Cubic::new(CubicParams { initial_ssthresh: Some(50), ..Default::default() });
        c.init(&mut sk);
        assert_eq!(sk.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        let mut c = Cubic::new(CubicParams { initial_ssthresh: Some(50), hystart: Some(false), ..Default::default() });
        c.init(&mut sk);
        assert_eq!(sk.snd_ssthresh, 50);
    }
}
