//! TCP-NV ("New Vegas"), as Linux's `net/ipv4/tcp_nv.c` runs it, with the base RTT a BPF
//! sock_ops program may supply (`BPF_SOCK_OPS_BASE_RTT`, see [`crate::basertt`]).
//!
//! NV is congestion avoidance: once per RTT (when snd_una passes `nv_rtt_start_seq`) it compares
//! cwnd with the window the current delivery rate needs at the minimum RTT,
//! `cwnd_by_slope = max_rate · min_rtt / (80 000 · mss)` (rate in 100 bit/s), plus `nv_pad`
//! packets of allowed queueing. Above it NV cuts cwnd by `nv_cong_dec_mult`/128 of the excess,
//! well below it NV lets cwnd grow (slow start, then Reno-like or slower); decisions need
//! `nv_rtt_min_cnt` RTTs and 20/30/60 RTT samples. Losses act like Reno with a milder cut
//! (`nv_loss_dec_factor`/1024).
//!
//! Units are the kernel's: RTTs in µs, `ack_sample.in_flight` in bytes (the bytes delivered
//! between the send of the acked packet and its ACK, `mss_cache · (delivered −
//! rate.prior_delivered)`), rate in 100 bit/s, jiffies at the socket's HZ. Where C's `u32`
//! arithmetic wraps, the code uses wrapping operations; shifts by the (s8) growth factor use
//! x86's count masking (`wrapping_shl`/`wrapping_shr`), as the kernel's would.
//!
//! tcp_nv.c has no `cwnd_event`, `in_ack_event` or `cong_control`; `undo_cwnd` is
//! `tcp_reno_undo_cwnd`. `nv_catchup` is cleared but never set by the kernel; it is kept so the
//! state matches.

use crate::seq::before;
use crate::sock::TCP_INFINITE_SSTHRESH;
use crate::{tcp_cong_avoid_ai, tcp_reno_undo_cwnd, tcp_slow_start, AckSample, CaState, CcInfo, CongestionOps, Sock};

/// `NV_INIT_RTT`: no minimum RTT yet.
const NV_INIT_RTT: u32 = u32::MAX;
/// `NV_MIN_CWND`: the smallest per-connection `nv_min_cwnd`.
const NV_MIN_CWND: u8 = 4;
/// `NV_MIN_CWND_GROW`: step of `nv_min_cwnd` when an RTT saw a single sample.
const NV_MIN_CWND_GROW: u8 = 2;
/// `NV_TSO_CWND_BOUND`: `nv_min_cwnd` stays at most one above this.
const NV_TSO_CWND_BOUND: u8 = 80;
/// The highest `CONFIG_HZ` ccsim runs (`TcpConfig::hz`); the module reads the socket's HZ
/// ([`Sock::hz`]).
const MAX_HZ: u32 = 1000;
/// Largest `nv_reset_period` for which `nv_reset_period * (384 + 255) * HZ` fits the kernel's
/// `int` at every HZ.
const NV_MAX_RESET_PERIOD: u32 = (i32::MAX as u32) / (639 * MAX_HZ);

/// TCP-NV parameters: every tunable of tcp_nv.c with the kernel's default. Linux exposes only
/// `nv_pad`, `nv_reset_period` and `nv_min_cwnd` as module parameters; the others are
/// `static int`s of the file, settable here.
#[derive(Clone, Debug, PartialEq)]
pub struct NvParams {
    /// `nv_pad`: packets of queueing allowed per flow (default 10).
    pub nv_pad: u32,
    /// `nv_pad_buffer`: no growth once cwnd is this close to `max_win` (default 2, ≤ `nv_pad`).
    pub nv_pad_buffer: u32,
    /// `nv_reset_period`: seconds between min-RTT restarts, drawn in [3/4, 5/4) of it
    /// (default 5).
    pub nv_reset_period: u32,
    /// `nv_min_cwnd`: NV's own decreases never leave cwnd below this (default 2, ≥ 1).
    pub nv_min_cwnd: u32,
    /// `nv_cong_dec_mult`: cut this many 128ths of the excess over `max_win` (default
    /// 30·128/100 = 38, ≤ 128); 0 only stops growth when the excess is at most 2.
    pub nv_cong_dec_mult: u32,
    /// `nv_ssthresh_factor`: on congestion ssthresh = factor · max_win / 8 (default 8).
    pub nv_ssthresh_factor: u32,
    /// `nv_rtt_factor`: weight of the new sample in the RTT average, in 256ths (default 128;
    /// ≤ 256; 0 means no averaging).
    pub nv_rtt_factor: u32,
    /// `nv_loss_dec_factor`: ssthresh = cwnd · factor / 1024 on loss (default 819 ≈ 80 %,
    /// ≤ 1024).
    pub nv_loss_dec_factor: u32,
    /// `nv_cwnd_growth_rate_neg`: after more than this many consecutive uncongested decisions,
    /// a negative growth factor (slower than 1 packet/RTT, after losses) steps up (default 8;
    /// 0: never).
    pub nv_cwnd_growth_rate_neg: u32,
    /// `nv_cwnd_growth_rate_pos`: the same for a non-negative factor (default 0: fixed,
    /// Reno-like growth).
    pub nv_cwnd_growth_rate_pos: u32,
    /// `nv_dec_eval_min_calls`: RTT samples before a decrease (default 60).
    pub nv_dec_eval_min_calls: u32,
    /// `nv_inc_eval_min_calls`: RTT samples before growth is allowed again (default 20).
    pub nv_inc_eval_min_calls: u32,
    /// `nv_ssthresh_eval_min_calls`: RTT samples before leaving slow start on congestion
    /// (default 30).
    pub nv_ssthresh_eval_min_calls: u32,
    /// `nv_stop_rtt_cnt`: with too few samples to decrease, stop growth after this many RTTs
    /// (default 10).
    pub nv_stop_rtt_cnt: u32,
    /// `nv_rtt_min_cnt`: RTTs before a congestion decision (default 2).
    pub nv_rtt_min_cnt: u32,
}

impl Default for NvParams {
    fn default() -> Self {
        NvParams {
            nv_pad: 10,
            nv_pad_buffer: 2,
            nv_reset_period: 5,
            nv_min_cwnd: 2,
            nv_cong_dec_mult: 30 * 128 / 100,
            nv_ssthresh_factor: 8,
            nv_rtt_factor: 128,
            nv_loss_dec_factor: 819,
            nv_cwnd_growth_rate_neg: 8,
            nv_cwnd_growth_rate_pos: 0,
            nv_dec_eval_min_calls: 60,
            nv_inc_eval_min_calls: 20,
            nv_ssthresh_eval_min_calls: 30,
            nv_stop_rtt_cnt: 10,
            nv_rtt_min_cnt: 2,
        }
    }
}

impl NvParams {
    /// Reject values for which the kernel's arithmetic misbehaves (the scenario layer calls
    /// this). Linux checks none of them; these are the ranges where its `int`/`u32` expressions
    /// mean what the comments say.
    pub fn validate(&self) -> Result<(), String> {
        let p = self;
        if p.nv_pad > u32::from(u16::MAX) {
            return Err(format!("nv nv_pad {} must be 0..=65535 packets", p.nv_pad));
        }
        if p.nv_pad_buffer > p.nv_pad {
            // max_win - nv_pad_buffer would wrap and every cwnd would look uncongested.
            return Err(format!("nv nv_pad_buffer {} must not exceed nv_pad {}", p.nv_pad_buffer, p.nv_pad));
        }
        if p.nv_reset_period > NV_MAX_RESET_PERIOD {
            return Err(format!("nv nv_reset_period {} must be 0..={NV_MAX_RESET_PERIOD} s", p.nv_reset_period));
        }
        if p.nv_min_cwnd == 0 || p.nv_min_cwnd > u32::from(u16::MAX) {
            return Err(format!("nv nv_min_cwnd {} must be 1..=65535 packets", p.nv_min_cwnd));
        }
        if p.nv_cong_dec_mult > 128 {
            // More than the whole excess: cwnd could be cut below max_win, or wrap.
            return Err(format!("nv nv_cong_dec_mult {} must be 0..=128 (128ths of the excess)", p.nv_cong_dec_mult));
        }
        if p.nv_ssthresh_factor > u32::from(u8::MAX) {
            return Err(format!("nv nv_ssthresh_factor {} must be 0..=255 (8ths)", p.nv_ssthresh_factor));
        }
        if p.nv_rtt_factor > 256 {
            return Err(format!("nv nv_rtt_factor {} must be 0..=256 (256ths)", p.nv_rtt_factor));
        }
        if p.nv_loss_dec_factor > 1024 {
            return Err(format!("nv nv_loss_dec_factor {} must be 0..=1024 (1024ths)", p.nv_loss_dec_factor));
        }
        Ok(())
    }
}

/// The parameters in the widths the state needs. Counts compared with the kernel's `u8`
/// counters (which saturate at 255) are stored capped at 256, which changes no comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Consts {
    pad: u32,
    min_cwnd: u32,
    cwnd_growth_rate_neg: u32,
    cwnd_growth_rate_pos: u32,
    pad_buffer: u16,
    reset_period: u16,
    rtt_factor: u16,
    loss_dec_factor: u16,
    dec_eval_min_calls: u16,
    inc_eval_min_calls: u16,
    ssthresh_eval_min_calls: u16,
    stop_rtt_cnt: u16,
    rtt_min_cnt: u16,
    cong_dec_mult: u8,
    ssthresh_factor: u8,
}

impl Consts {
    /// Out-of-range values are clamped so the arithmetic stays defined; `validate` reports them.
    fn resolve(p: &NvParams) -> Consts {
        let cnt = |v: u32| v.min(256) as u16;
        let pad = p.nv_pad.min(u32::from(u16::MAX));
        Consts {
            pad,
            min_cwnd: p.nv_min_cwnd.clamp(1, u32::from(u16::MAX)),
            cwnd_growth_rate_neg: p.nv_cwnd_growth_rate_neg,
            cwnd_growth_rate_pos: p.nv_cwnd_growth_rate_pos,
            pad_buffer: p.nv_pad_buffer.min(pad) as u16,
            reset_period: p.nv_reset_period.min(NV_MAX_RESET_PERIOD) as u16,
            rtt_factor: p.nv_rtt_factor.min(256) as u16,
            loss_dec_factor: p.nv_loss_dec_factor.min(1024) as u16,
            dec_eval_min_calls: cnt(p.nv_dec_eval_min_calls),
            inc_eval_min_calls: cnt(p.nv_inc_eval_min_calls),
            ssthresh_eval_min_calls: cnt(p.nv_ssthresh_eval_min_calls),
            stop_rtt_cnt: cnt(p.nv_stop_rtt_cnt),
            rtt_min_cnt: cnt(p.nv_rtt_min_cnt),
            cong_dec_mult: p.nv_cong_dec_mult.min(128) as u8,
            ssthresh_factor: p.nv_ssthresh_factor.min(255) as u8,
        }
    }
}

/// Per-connection state (`struct tcpnv`), in kernel units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TcpNv {
    /// Jiffies at which `nv_min_rtt_new` replaces `nv_min_rtt`.
    nv_min_rtt_reset_jiffies: u32,
    /// Current cwnd growth factor; < 0: less than one packet per RTT.
    cwnd_growth_factor: i8,
    /// Whether cwnd may grow.
    nv_allow_cwnd_growth: bool,
    /// Reset the counters when the connection is back in Open.
    nv_reset: bool,
    /// Growing because of a temporary cwnd decrease (never set by tcp_nv.c).
    nv_catchup: bool,
    /// RTT samples since the last evaluation (saturates at 255).
    nv_eval_call_cnt: u8,
    /// The connection's own minimum cwnd for decisions (4..=81; grows with TSO/LRO-like
    /// one-sample RTTs). Not the `nv_min_cwnd` parameter.
    nv_min_cwnd: u8,
    /// RTTs without a congestion decision (saturates at 255).
    nv_rtt_cnt: u8,
    /// Last averaged RTT, µs.
    nv_last_rtt: u32,
    /// Active minimum RTT (µs), the reference for the slope.
    nv_min_rtt: u32,
    /// Minimum RTT gathered for the next period (µs).
    nv_min_rtt_new: u32,
    /// Base RTT from the BPF program (µs), 0 when none: upper bound of the min RTT.
    nv_base_rtt: u32,
    /// 80 % of `nv_base_rtt`: lower bound of the min RTT.
    nv_lower_bound_rtt: u32,
    /// Highest rate (100 bit/s) seen during the current RTT.
    nv_rtt_max_rate: u32,
    /// The current RTT ends when an ACK passes this sequence.
    nv_rtt_start_seq: u32,
    /// snd_una at the previous sample, for bytes acked.
    nv_last_snd_una: u32,
    /// Consecutive no-congestion decisions.
    nv_no_cong_cnt: u32,
    /// ccsim: state of the byte generator standing in for `get_random_bytes`.
    rand_state: u32,
}

// Linux: BUILD_BUG_ON(sizeof(struct tcpnv) > ICSK_CA_PRIV_SIZE).
const _: () = assert!(std::mem::size_of::<TcpNv>() <= 104);
const _: () = assert!(std::mem::size_of::<Nv>() <= 104);

/// `time_after_eq(a, b)` on the 32-bit jiffies clock.
fn time_after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// TCP-NV (`tcpnv`).
#[derive(Clone, Debug)]
pub struct Nv {
    ca: TcpNv,
    k: Consts,
}

impl Nv {
    pub fn new(params: NvParams) -> Nv {
        Nv { ca: TcpNv::default(), k: Consts::resolve(&params) }
    }

    /// The active minimum RTT (µs), `NV_INIT_RTT` before any sample.
    pub fn min_rtt_us(&self) -> u32 {
        self.ca.nv_min_rtt
    }

    /// The base RTT taken from the BPF program at init (µs), 0 when none.
    pub fn base_rtt_us(&self) -> u32 {
        self.ca.nv_base_rtt
    }

    /// The lower bound of the min RTT, 80 % of the base RTT (µs), 0 when none.
    pub fn lower_bound_rtt_us(&self) -> u32 {
        self.ca.nv_lower_bound_rtt
    }

    /// Whether NV currently lets cwnd grow.
    pub fn allows_cwnd_growth(&self) -> bool {
        self.ca.nv_allow_cwnd_growth
    }

    /// The cwnd growth factor (< 0: slower than one packet per RTT).
    pub fn cwnd_growth_factor(&self) -> i8 {
        self.ca.cwnd_growth_factor
    }

    /// `get_random_bytes(&rand, 1)`. ccsim stays deterministic: a per-connection generator
    /// (Weyl sequence through a 32-bit mixer) seeded at init from [`Sock::rng_seed`].
    fn random_byte(&mut self) -> u8 {
        self.ca.rand_state = self.ca.rand_state.wrapping_add(0x9e37_79b9);
        let mut z = self.ca.rand_state;
        z = (z ^ (z >> 16)).wrapping_mul(0x21f0_aaad);
        z = (z ^ (z >> 15)).wrapping_mul(0x735a_2d97);
        z ^= z >> 15;
        (z >> 24) as u8
    }

    /// `tcpnv_reset`: start counting afresh at snd_una.
    fn reset(&mut self, sk: &Sock) {
        let ca = &mut self.ca;
        ca.nv_reset = false;
        ca.nv_no_cong_cnt = 0;
        ca.nv_rtt_cnt = 0;
        ca.nv_last_rtt = 0;
        ca.nv_rtt_max_rate = 0;
        ca.nv_rtt_start_seq = sk.snd_una;
        ca.nv_eval_call_cnt = 0;
        ca.nv_last_snd_una = sk.snd_una;
    }

    /// `nv_get_bounded_rtt`: with a base RTT, clamp into [lower bound, base].
    fn bounded_rtt(&self, val: u32) -> u32 {
        let ca = &self.ca;
        if ca.nv_lower_bound_rtt > 0 && val < ca.nv_lower_bound_rtt {
            ca.nv_lower_bound_rtt
        } else if ca.nv_base_rtt > 0 && val > ca.nv_base_rtt {
            ca.nv_base_rtt
        } else {
            val
        }
    }
}

impl Default for Nv {
    fn default() -> Self {
        Nv::new(NvParams::default())
    }
}

impl CongestionOps for Nv {
    fn name(&self) -> &'static str {
        "nv"
    }

    /// `tcpnv_init`.
    fn init(&mut self, sk: &mut Sock) {
        self.reset(sk);
        self.ca.rand_state = (sk.rng_seed ^ (sk.rng_seed >> 32)) as u32;

        // base_rtt = tcp_call_bpf(sk, BPF_SOCK_OPS_BASE_RTT, 0, NULL): an int, used when > 0.
        let base_rtt = sk.base_rtt_us.map_or(0, |v| v as i32);
        if base_rtt > 0 {
            self.ca.nv_base_rtt = base_rtt as u32;
            // (base_rtt * 205) >> 8, 80 %; in 64 bits where the kernel's int would overflow
            // (base RTTs above 10 s).
            self.ca.nv_lower_bound_rtt = ((base_rtt as u64 * 205) >> 8) as u32;
        } else {
            self.ca.nv_base_rtt = 0;
            self.ca.nv_lower_bound_rtt = 0;
        }

        let ca = &mut self.ca;
        ca.nv_allow_cwnd_growth = true;
        ca.nv_min_rtt_reset_jiffies = sk.jiffies().wrapping_add(2 * sk.hz());
        ca.nv_min_rtt = NV_INIT_RTT;
        ca.nv_min_rtt_new = NV_INIT_RTT;
        ca.nv_min_cwnd = NV_MIN_CWND;
        ca.nv_catchup = false;
        ca.cwnd_growth_factor = 0;
    }

    /// `tcpnv_recalc_ssthresh`: cwnd · nv_loss_dec_factor / 1024, at least 2.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        (sk.snd_cwnd.wrapping_mul(u32::from(self.k.loss_dec_factor)) >> 10).max(2)
    }

    /// `tcpnv_cong_avoid`: slow start, then AI at the growth factor; nothing while NV holds.
    fn cong_avoid(&mut self, sk: &mut Sock, _ack: u32, mut acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        // Only grow cwnd if NV has not detected congestion.
        if !self.ca.nv_allow_cwnd_growth {
            return;
        }
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        let f = i32::from(self.ca.cwnd_growth_factor);
        let cnt = if f < 0 { sk.snd_cwnd.wrapping_shl((-f) as u32) } else { sk.snd_cwnd.wrapping_shr(f as u32).max(4) };
        tcp_cong_avoid_ai(sk, cnt, acked);
    }

    /// `tcpnv_state`.
    fn set_state(&mut self, sk: &mut Sock, new: CaState) {
        if new == CaState::Open && self.ca.nv_reset {
            self.reset(sk);
        } else if matches!(new, CaState::Loss | CaState::Cwr | CaState::Recovery) {
            let ca = &mut self.ca;
            ca.nv_reset = true;
            ca.nv_allow_cwnd_growth = false;
            if new == CaState::Loss {
                // Reset the growth factor to Reno's, then slow it down if allowed.
                if ca.cwnd_growth_factor > 0 {
                    ca.cwnd_growth_factor = 0;
                }
                if self.k.cwnd_growth_rate_neg > 0 && ca.cwnd_growth_factor > -8 {
                    ca.cwnd_growth_factor -= 1;
                }
            }
        }
    }

    /// `tcpnv_acked`: RTT averaging, min-RTT tracking, and once per RTT the congestion decision.
    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        let k = self.k;
        let now = sk.jiffies();

        // Some calls are for duplicates without timestamps.
        if sample.rtt_us < 0 {
            return;
        }
        // Only in TCP_CA_Open or TCP_CA_Disorder.
        if sk.ca_state != CaState::Open && sk.ca_state != CaState::Disorder {
            return;
        }
        // Stop cwnd growth if we were in catch-up mode.
        if self.ca.nv_catchup && sk.snd_cwnd >= k.min_cwnd {
            self.ca.nv_catchup = false;
            self.ca.nv_allow_cwnd_growth = false;
        }

        let bytes_acked = sk.snd_una.wrapping_sub(self.ca.nv_last_snd_una);
        self.ca.nv_last_snd_una = sk.snd_una;

        if sample.in_flight == 0 {
            return;
        }

        // Moving average of the RTT.
        let mut avg_rtt: u32;
        if k.rtt_factor > 0 {
            if self.ca.nv_last_rtt > 0 {
                let f = u64::from(k.rtt_factor);
                avg_rtt =
                    ((sample.rtt_us as u64).wrapping_mul(f).wrapping_add(u64::from(self.ca.nv_last_rtt) * (256 - f))
                        >> 8) as u32;
            } else {
                avg_rtt = sample.rtt_us as u32;
                // Unbounded, and twice the sample: the bounded average below takes over.
                self.ca.nv_min_rtt = avg_rtt << 1;
            }
            self.ca.nv_last_rtt = avg_rtt;
        } else {
            avg_rtt = sample.rtt_us as u32;
        }

        // Rate in 100s of bits per second. The kernel divides by (u32)(avg_rtt * 100), which
        // is 0 only for a 0 µs RTT (a kernel divide error); ccsim divides by 1 instead.
        let rate64 = u64::from(sample.in_flight) * 8_000_000;
        let rate = (rate64 / u64::from(avg_rtt.wrapping_mul(100)).max(1)) as u32;

        // The highest rate seen during this RTT (it may span more than one RTT).
        if self.ca.nv_rtt_max_rate < rate {
            self.ca.nv_rtt_max_rate = rate;
        }
        // Valid information: count it.
        self.ca.nv_eval_call_cnt = self.ca.nv_eval_call_cnt.saturating_add(1);

        // The base-RTT bounds apply to the min RTT only.
        avg_rtt = self.bounded_rtt(avg_rtt);
        let ca = &mut self.ca;
        if avg_rtt < ca.nv_min_rtt {
            ca.nv_min_rtt = avg_rtt;
        }
        if avg_rtt < ca.nv_min_rtt_new {
            ca.nv_min_rtt_new = avg_rtt;
        }

        // Every nv_reset_period · [3/4, 5/4) seconds nv_min_rtt restarts from the minimum of
        // the last period, and the per-connection nv_min_cwnd halves.
        if time_after_eq(now, self.ca.nv_min_rtt_reset_jiffies) {
            self.ca.nv_min_rtt = self.ca.nv_min_rtt_new;
            self.ca.nv_min_rtt_new = NV_INIT_RTT;
            let rand = u32::from(self.random_byte());
            let ca = &mut self.ca;
            ca.nv_min_rtt_reset_jiffies = now.wrapping_add((u32::from(k.reset_period) * (384 + rand) * sk.hz()) >> 9);
            ca.nv_min_cwnd = (ca.nv_min_cwnd / 2).max(NV_MIN_CWND);
        }

        // Once per RTT, check whether to act.
        let ca = &mut self.ca;
        if !before(ca.nv_rtt_start_seq, sk.snd_una) {
            return;
        }
        ca.nv_rtt_start_seq = sk.snd_nxt;
        ca.nv_rtt_cnt = ca.nv_rtt_cnt.saturating_add(1);

        // A single sample in an RTT: cwnd is probably too small (TSO, LRO, interrupt
        // coalescing), so raise the per-connection nv_min_cwnd and skip this RTT.
        if ca.nv_eval_call_cnt == 1
            && bytes_acked >= u32::from(ca.nv_min_cwnd - 1).wrapping_mul(sk.mss_cache)
            && ca.nv_min_cwnd < NV_TSO_CWND_BOUND + 1
        {
            ca.nv_min_cwnd = (ca.nv_min_cwnd + NV_MIN_CWND_GROW).min(NV_TSO_CWND_BOUND + 1);
            ca.nv_rtt_start_seq = sk.snd_nxt.wrapping_add(u32::from(ca.nv_min_cwnd).wrapping_mul(sk.mss_cache));
            ca.nv_eval_call_cnt = 0;
            ca.nv_allow_cwnd_growth = true;
            return;
        }

        // The window the current rate needs at the min RTT:
        // slope = 80000.0 * mss / nv_min_rtt, cwnd_by_slope = nv_rtt_max_rate / slope.
        let cwnd_by_slope = ((u64::from(ca.nv_rtt_max_rate) * u64::from(ca.nv_min_rtt))
            / u64::from(80_000u32.wrapping_mul(sk.mss_cache)).max(1)) as u32;
        let max_win = cwnd_by_slope.wrapping_add(k.pad);

        if sk.snd_cwnd > max_win {
            // Congestion. Decide only after nv_rtt_min_cnt RTTs and enough samples.
            if u16::from(ca.nv_rtt_cnt) < k.rtt_min_cnt {
                return;
            } else if sk.snd_ssthresh == TCP_INFINITE_SSTHRESH {
                if u16::from(ca.nv_eval_call_cnt) < k.ssthresh_eval_min_calls {
                    return;
                }
                // Otherwise leave slow start with a decrease.
            } else if u16::from(ca.nv_eval_call_cnt) < k.dec_eval_min_calls {
                if ca.nv_allow_cwnd_growth && u16::from(ca.nv_rtt_cnt) > k.stop_rtt_cnt {
                    ca.nv_allow_cwnd_growth = false;
                }
                return;
            }

            // Enough data: we are congested.
            ca.nv_allow_cwnd_growth = false;
            sk.snd_ssthresh = u32::from(k.ssthresh_factor).wrapping_mul(max_win) >> 3;
            if sk.snd_cwnd - max_win > 2 {
                // Gap > 2: exponential decrease.
                let dec = ((sk.snd_cwnd - max_win).wrapping_mul(u32::from(k.cong_dec_mult)) >> 7).max(2);
                sk.snd_cwnd = sk.snd_cwnd.wrapping_sub(dec);
            } else if k.cong_dec_mult > 0 {
                sk.snd_cwnd = max_win;
            }
            if ca.cwnd_growth_factor > 0 {
                ca.cwnd_growth_factor = 0;
            }
            ca.nv_no_cong_cnt = 0;
        } else if sk.snd_cwnd <= max_win.wrapping_sub(u32::from(k.pad_buffer)) {
            // No congestion: grow cwnd if allowed.
            if u16::from(ca.nv_eval_call_cnt) < k.inc_eval_min_calls {
                return;
            }
            ca.nv_allow_cwnd_growth = true;
            ca.nv_no_cong_cnt += 1;
            if ca.cwnd_growth_factor < 0 && k.cwnd_growth_rate_neg > 0 && ca.nv_no_cong_cnt > k.cwnd_growth_rate_neg {
                ca.cwnd_growth_factor += 1;
                ca.nv_no_cong_cnt = 0;
            } else if ca.cwnd_growth_factor >= 0
                && k.cwnd_growth_rate_pos > 0
                && ca.nv_no_cong_cnt > k.cwnd_growth_rate_pos
            {
                // The kernel's s8 has no cap; it wraps like gcc's.
                ca.cwnd_growth_factor = ca.cwnd_growth_factor.wrapping_add(1);
                ca.nv_no_cong_cnt = 0;
            }
        } else {
            // cwnd in between: do nothing.
            return;
        }

        // A decision was made: start counting again.
        ca.nv_eval_call_cnt = 0;
        ca.nv_rtt_cnt = 0;
        ca.nv_rtt_max_rate = 0;

        // NV's decrease never leaves cwnd below nv_min_cwnd.
        if sk.snd_cwnd < k.min_cwnd {
            sk.snd_cwnd = k.min_cwnd;
        }
    }

    /// `.undo_cwnd = tcp_reno_undo_cwnd`.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_undo_cwnd(sk)
    }

    /// `tcpnv_get_info`: a `tcpvegas_info` (`INET_DIAG_VEGASINFO`).
    fn get_info(&self, _sk: &Sock) -> CcInfo {
        CcInfo::Vegas {
            enabled: true,
            rttcnt: u32::from(self.ca.nv_rtt_cnt),
            rtt: self.ca.nv_last_rtt,
            minrtt: self.ca.nv_min_rtt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CaEvent, Cc, CcKind, CcParams};

    const MSS: u32 = 1000;
    const INF: u32 = TCP_INFINITE_SSTHRESH;

    /// A connection at snd_una = 0 with `cwnd`, `ssthresh`, MSS 1000, always cwnd-limited, and
    /// `base` as the BPF program's reply; NV initialised at time 0.
    fn flow(p: NvParams, cwnd: u32, ssthresh: u32, base: Option<u32>) -> (Nv, Sock) {
        let mut sk = Sock {
            snd_cwnd: cwnd,
            snd_ssthresh: ssthresh,
            mss_cache: MSS,
            snd_una: 0,
            snd_nxt: 0,
            is_cwnd_limited: true,
            base_rtt_us: base,
            ..Sock::default()
        };
        let mut nv = Nv::new(p);
        nv.init(&mut sk);
        (nv, sk)
    }

    /// One ACK for one MSS, with `w` bytes still outstanding after it (snd_nxt = snd_una + w), so
    /// an RTT round ends every w / MSS + 1 ACKs.
    fn ack(nv: &mut Nv, sk: &mut Sock, rtt_us: i64, in_flight: u32, w: u32) {
        sk.snd_una = sk.snd_una.wrapping_add(MSS);
        sk.snd_nxt = sk.snd_una.wrapping_add(w);
        nv.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us, in_flight });
    }

    #[test]
    fn kernel_defaults_and_validate() {
        let p = NvParams::default();
        assert_eq!((p.nv_pad, p.nv_pad_buffer, p.nv_reset_period, p.nv_min_cwnd), (10, 2, 5, 2));
        assert_eq!(
            (p.nv_cong_dec_mult, p.nv_ssthresh_factor, p.nv_rtt_factor, p.nv_loss_dec_factor),
            (38, 8, 128, 819)
        );
        assert_eq!((p.nv_cwnd_growth_rate_neg, p.nv_cwnd_growth_rate_pos), (8, 0));
        assert_eq!((p.nv_dec_eval_min_calls, p.nv_inc_eval_min_calls, p.nv_ssthresh_eval_min_calls), (60, 20, 30));
        assert_eq!((p.nv_stop_rtt_cnt, p.nv_rtt_min_cnt), (10, 2));
        assert!(p.validate().is_ok());
        assert_eq!(NV_MAX_RESET_PERIOD, 3360);
        let ok = [
            NvParams { nv_rtt_factor: 0, ..NvParams::default() },
            NvParams { nv_rtt_factor: 256, ..NvParams::default() },
            NvParams { nv_cong_dec_mult: 128, ..NvParams::default() },
            NvParams { nv_cong_dec_mult: 0, ..NvParams::default() },
            NvParams { nv_loss_dec_factor: 1024, ..NvParams::default() },
            NvParams { nv_reset_period: 3360, ..NvParams::default() },
            NvParams { nv_pad_buffer: 10, ..NvParams::default() },
            NvParams { nv_dec_eval_min_calls: 1_000_000, nv_stop_rtt_cnt: 0, ..NvParams::default() },
        ];
        for p in ok {
            assert!(p.validate().is_ok(), "{p:?}");
        }
        let bad = [
            NvParams { nv_rtt_factor: 257, ..NvParams::default() },
            NvParams { nv_cong_dec_mult: 129, ..NvParams::default() },
            NvParams { nv_loss_dec_factor: 1025, ..NvParams::default() },
            NvParams { nv_pad_buffer: 11, ..NvParams::default() },
            NvParams { nv_min_cwnd: 0, ..NvParams::default() },
            NvParams { nv_reset_period: 3361, ..NvParams::default() },
            NvParams { nv_pad: 65_536, ..NvParams::default() },
            NvParams { nv_ssthresh_factor: 256, ..NvParams::default() },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
        assert_eq!(CcKind::from_name("nv"), Some(CcKind::Nv));
        assert_eq!(CcKind::Nv.name(), "nv");
        assert!(CcKind::ALL.contains(&CcKind::Nv));
        assert_eq!(CcParams::default().nv, NvParams::default());
    }

    #[test]
    fn tcpnv_init_state() {
        let mut sk = Sock { snd_una: 5_000, snd_nxt: 9_000, now_ns: 7_000_000_000, ..Sock::default() };
        let mut nv = Nv::default();
        nv.init(&mut sk);
        let ca = nv.ca;
        assert!(ca.nv_allow_cwnd_growth);
        assert_eq!(ca.nv_min_rtt_reset_jiffies, 7_000 + 2_000, "jiffies + 2 * HZ");
        assert_eq!((ca.nv_min_rtt, ca.nv_min_rtt_new), (NV_INIT_RTT, NV_INIT_RTT));
        assert_eq!((ca.nv_min_cwnd, ca.cwnd_growth_factor, ca.nv_catchup), (4, 0, false));
        assert_eq!((ca.nv_rtt_start_seq, ca.nv_last_snd_una), (5_000, 5_000));
        assert_eq!((ca.nv_base_rtt, ca.nv_lower_bound_rtt), (0, 0));
        // Only a positive int reply counts: 0 and replies that are negative as an int do not.
        for reply in [Some(0), Some(1 << 31), Some(u32::MAX), None] {
            let (nv, _) = flow(NvParams::default(), 10, INF, reply);
            assert_eq!((nv.base_rtt_us(), nv.lower_bound_rtt_us()), (0, 0), "{reply:?}");
        }
        // (base_rtt * 205) >> 8.
        for (base, lower) in [(80, 64), (1, 0), (100, 80), (1000, 800), (1_000_000, 800_781)] {
            let (nv, _) = flow(NvParams::default(), 10, INF, Some(base));
            assert_eq!((nv.base_rtt_us(), nv.lower_bound_rtt_us()), (base, lower));
        }
    }

    #[test]
    fn base_rtt_pins_min_rtt_between_80_percent_of_base_and_base() {
        // Base 80 µs: lower bound (80 * 205) >> 8 = 64 µs.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, INF, Some(80));
        // Measured 50 µs, below 80 %: the first sample sets min_rtt to 2 * 50 = 100, then the
        // bounded average (64) replaces it.
        ack(&mut nv, &mut sk, 50, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (64, 64));
        // Lower RTTs never take it below the bound: avg (20 + 50) / 2 = 35 is raised to 64.
        ack(&mut nv, &mut sk, 20, 10_000, 20_000);
        assert_eq!(nv.ca.nv_last_rtt, 35);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (64, 64));

        // Measured above the base: capped at 80.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, INF, Some(80));
        ack(&mut nv, &mut sk, 200, 10_000, 20_000);
        assert_eq!(nv.min_rtt_us(), 80);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!(nv.min_rtt_us(), 80);
        // tcpvegas_info: the averaged RTT is reported unbounded ((300 + 200) / 2), the min bounded.
        assert_eq!(nv.get_info(&sk), CcInfo::Vegas { enabled: true, rttcnt: 1, rtt: 250, minrtt: 80 });

        // Within the bounds the measurement stands.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, INF, Some(80));
        ack(&mut nv, &mut sk, 70, 10_000, 20_000);
        assert_eq!(nv.min_rtt_us(), 70);

        // No base RTT: the measured minimum.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, INF, None);
        ack(&mut nv, &mut sk, 50, 10_000, 20_000);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_last_rtt), (50, 175));
    }

    #[test]
    fn first_sample_below_half_the_lower_bound_escapes_the_clamp_until_the_first_reset() {
        // tcpnv_acked sets nv_min_rtt = 2 * avg_rtt on the first sample, unbounded: 2 * 30 = 60 <
        // 64, and the bounded 64 is not lower. The clamp holds from the first min-RTT reset on.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, INF, Some(80));
        ack(&mut nv, &mut sk, 30, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (60, 64));
        sk.now_ns = 2_000_000_000; // jiffies + 2 * HZ after init
        ack(&mut nv, &mut sk, 30, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (64, NV_INIT_RTT));
    }

    #[test]
    fn min_rtt_restarts_from_the_last_period_every_reset_period() {
        let p = NvParams { nv_rtt_factor: 256, ..NvParams::default() };
        let (mut nv, mut sk) = flow(p.clone(), 10, INF, None);
        let at = |sk: &mut Sock, ms: u64| sk.now_ns = ms * 1_000_000;
        ack(&mut nv, &mut sk, 100, 10_000, 20_000);
        at(&mut sk, 1_000);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (100, 100));
        nv.ca.nv_min_cwnd = 21;
        // The first reset, 2 s after init: the period's minimum (100) stays active, a new period
        // starts, and the per-connection nv_min_cwnd halves.
        at(&mut sk, 2_000);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (100, NV_INIT_RTT));
        assert_eq!(nv.ca.nv_min_cwnd, 10);
        // Next reset at now + (5 * (384 + rand) * HZ) >> 9: [3750, 6240] ms later.
        let next = nv.ca.nv_min_rtt_reset_jiffies;
        assert!((2_000 + 3_750..=2_000 + 6_240).contains(&next), "{next}");
        at(&mut sk, next as u64 - 1);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (100, 300));
        // The old minimum expires: only this period's samples (300) count.
        at(&mut sk, next as u64);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!((nv.min_rtt_us(), nv.ca.nv_min_rtt_new), (300, NV_INIT_RTT));
        assert_eq!(nv.ca.nv_min_cwnd, 5);
        // nv_min_cwnd halves down to NV_MIN_CWND only.
        let next = nv.ca.nv_min_rtt_reset_jiffies;
        at(&mut sk, next as u64);
        ack(&mut nv, &mut sk, 300, 10_000, 20_000);
        assert_eq!(nv.ca.nv_min_cwnd, 4);
        // Deterministic: the same connection draws the same periods.
        let (mut a, mut ska) = flow(p.clone(), 10, INF, None);
        let (mut b, mut skb) = flow(p, 10, INF, None);
        for s in [&mut ska, &mut skb] {
            at(s, 2_000);
        }
        ack(&mut a, &mut ska, 100, 10_000, 20_000);
        ack(&mut b, &mut skb, 100, 10_000, 20_000);
        assert_eq!(a.ca.nv_min_rtt_reset_jiffies, b.ca.nv_min_rtt_reset_jiffies);
    }

    #[test]
    fn slow_start_grows_cwnd_until_queueing_stops_it() {
        // RTT 100 µs throughout (= min RTT), 5000 bytes delivered per RTT sample: rate
        // 5000 * 8e6 / (100 * 100) = 4e6 (100 bit/s), cwnd_by_slope = 4e6 * 100 / (80000 * 1000)
        // = 5 packets, max_win = 5 + nv_pad = 15. A round lasts 15 ACKs (14 000 bytes left out),
        // so rounds end at ACKs 1, 16 and 31.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, INF, None);
        let mut cwnds = Vec::new();
        for _ in 0..40 {
            ack(&mut nv, &mut sk, 100, 5_000, 14_000);
            nv.cong_avoid(&mut sk, 0, 1);
            cwnds.push(sk.snd_cwnd);
        }
        // Slow start: one packet per ACK. At ACK 16 cwnd 25 > 15 for 2 RTTs, but only 16 < 30
        // (nv_ssthresh_eval_min_calls) samples: keep growing.
        assert_eq!(cwnds[..30], (11..=40).collect::<Vec<_>>()[..]);
        // ACK 31: 31 samples, 3 RTTs, cwnd 40 > 15: leave slow start. Gap 25: cwnd -= 25 * 38 >> 7
        // = 7, ssthresh = 8 * 15 >> 3 = 15, and growth stops.
        assert_eq!(cwnds[30..], [33; 10]);
        assert_eq!(sk.snd_ssthresh, 15);
        assert!(!nv.allows_cwnd_growth());
        assert_eq!((nv.ca.nv_rtt_cnt, nv.ca.nv_eval_call_cnt, nv.ca.nv_rtt_max_rate), (0, 9, 4_000_000));
    }

    /// A fresh flow with `cwnd` and a finite ssthresh, 100 ACKs per RTT at RTT = min RTT =
    /// 100 µs, 50 000 bytes per sample: cwnd_by_slope = 50, max_win = 50 + nv_pad. The first
    /// round ends at ACK 1 (one RTT counted), the second at ACK 101: the decision.
    fn decide(p: NvParams, cwnd: u32) -> (Nv, Sock) {
        let (mut nv, mut sk) = flow(p, cwnd, 50, None);
        for _ in 0..101 {
            ack(&mut nv, &mut sk, 100, 50_000, 99_000);
        }
        (nv, sk)
    }

    #[test]
    fn congestion_cuts_nv_cong_dec_mult_of_the_excess_over_nv_pad() {
        let d = NvParams::default();
        // cwnd up to max_win - nv_pad_buffer = 58: no congestion, growth allowed, counters reset.
        let (nv, sk) = decide(d.clone(), 58);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh, nv.allows_cwnd_growth()), (58, 50, true));
        assert_eq!((nv.ca.nv_eval_call_cnt, nv.ca.nv_no_cong_cnt), (0, 1));
        // 59, 60: in between, nothing happens (counters keep running).
        for cwnd in [59, 60] {
            let (nv, sk) = decide(d.clone(), cwnd);
            assert_eq!((sk.snd_cwnd, sk.snd_ssthresh, nv.allows_cwnd_growth()), (cwnd, 50, true));
            assert_eq!(nv.ca.nv_eval_call_cnt, 101);
        }
        // More than nv_pad packets queued: cwnd > max_win = 60; ssthresh = 8 * 60 >> 3 = 60.
        // (cwnd, cwnd after): gap <= 2 goes to max_win; otherwise cut max(2, gap * 38 >> 7).
        for (cwnd, want) in [(61, 60), (62, 60), (63, 61), (100, 89), (200, 159)] {
            let (nv, sk) = decide(d.clone(), cwnd);
            assert_eq!((sk.snd_cwnd, sk.snd_ssthresh, nv.allows_cwnd_growth()), (want, 60, false), "cwnd {cwnd}");
            assert_eq!((nv.ca.nv_eval_call_cnt, nv.ca.nv_rtt_cnt, nv.ca.nv_rtt_max_rate), (0, 0, 0));
        }
        // nv_pad 20: max_win 70, gap 30 -> cut 30 * 38 >> 7 = 8.
        let (_, sk) = decide(NvParams { nv_pad: 20, ..d.clone() }, 100);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh), (92, 70));
        // nv_cong_dec_mult 128 takes the whole excess; 0 only holds (gap <= 2) or cuts 2.
        let (_, sk) = decide(NvParams { nv_cong_dec_mult: 128, ..d.clone() }, 100);
        assert_eq!(sk.snd_cwnd, 60);
        let (nv, sk) = decide(NvParams { nv_cong_dec_mult: 0, ..d.clone() }, 62);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh, nv.allows_cwnd_growth()), (62, 60, false));
        let (_, sk) = decide(NvParams { nv_cong_dec_mult: 0, ..d.clone() }, 100);
        assert_eq!(sk.snd_cwnd, 98);
        // nv_ssthresh_factor 4: ssthresh = 4 * 60 >> 3 = 30.
        let (_, sk) = decide(NvParams { nv_ssthresh_factor: 4, ..d.clone() }, 100);
        assert_eq!(sk.snd_ssthresh, 30);
        // NV never leaves cwnd below nv_min_cwnd: 89 is raised to 95.
        let (_, sk) = decide(NvParams { nv_min_cwnd: 95, ..d.clone() }, 100);
        assert_eq!(sk.snd_cwnd, 95);
        // A positive growth factor is reset to Reno's on congestion.
        let (mut nv, mut sk) = flow(d.clone(), 100, 50, None);
        nv.ca.cwnd_growth_factor = 3;
        for _ in 0..101 {
            ack(&mut nv, &mut sk, 100, 50_000, 99_000);
        }
        assert_eq!((sk.snd_cwnd, nv.cwnd_growth_factor()), (89, 0));
    }

    #[test]
    fn decisions_need_nv_rtt_min_cnt_rtts_and_nv_dec_eval_min_calls_samples() {
        // Short rounds: 30 ACKs per RTT (29 000 bytes outstanding). cwnd 100 > max_win 60.
        let (mut nv, mut sk) = flow(NvParams::default(), 100, 50, None);
        let mut cwnds = Vec::new();
        for _ in 0..130 {
            ack(&mut nv, &mut sk, 100, 50_000, 29_000);
            cwnds.push(sk.snd_cwnd);
        }
        // ACK 1: 1 RTT. ACK 31: 2 RTTs but 31 < 60 samples. ACK 61: 3 RTTs, 61 samples: cut
        // 40 * 38 >> 7 = 11.
        assert_eq!(cwnds[..60], [100; 60]);
        assert!(!nv.allows_cwnd_growth());
        // Then the counters restart: ACK 91 ends 1 RTT (30 samples), ACK 121 2 RTTs with 60
        // samples: cut 29 * 38 >> 7 = 8.
        assert_eq!(cwnds[60..120], [89; 60]);
        assert_eq!(cwnds[120..], [81; 10]);

        // Long rounds: 100 ACKs per RTT. Enough samples in one RTT do not suffice.
        let (mut nv, mut sk) = flow(NvParams::default(), 100, 50, None);
        let mut cwnds = Vec::new();
        for _ in 0..310 {
            ack(&mut nv, &mut sk, 100, 50_000, 99_000);
            cwnds.push(sk.snd_cwnd);
        }
        assert_eq!(cwnds[..100], [100; 100]);
        // ACK 101: second RTT, 101 samples -> 89. ACK 201: 100 samples but 1 RTT -> hold. ACK
        // 301: 2 RTTs -> 81.
        assert_eq!(cwnds[100..300], [89; 200]);
        assert_eq!(cwnds[300..], [81; 10]);
        assert_eq!(nv.get_info(&sk), CcInfo::Vegas { enabled: true, rttcnt: 0, rtt: 100, minrtt: 100 });

        // nv_rtt_min_cnt 4 with 100-ACK rounds: the first decision at ACK 301 (4th RTT).
        let p = NvParams { nv_rtt_min_cnt: 4, ..NvParams::default() };
        let (mut nv, mut sk) = flow(p, 100, 50, None);
        for i in 1..=301 {
            ack(&mut nv, &mut sk, 100, 50_000, 99_000);
            assert_eq!(sk.snd_cwnd, if i < 301 { 100 } else { 89 }, "ACK {i}");
        }

        // Short of samples for more than nv_stop_rtt_cnt (10) RTTs: growth stops without a cut.
        // 10 ACKs per RTT: ACKs 1, 11, ..., 111 end RTTs 1..=12; growth stops at the 11th (ACK
        // 101). nv_dec_eval_min_calls 200 keeps the 101 samples by then short.
        let p = NvParams { nv_dec_eval_min_calls: 200, ..NvParams::default() };
        let (mut nv, mut sk) = flow(p, 100, 50, None);
        for i in 1..=111 {
            ack(&mut nv, &mut sk, 100, 50_000, 9_000);
            let rtts = (i - 1) / 10 + 1;
            assert_eq!(nv.allows_cwnd_growth(), rtts <= 10, "ACK {i}");
        }
        assert_eq!(sk.snd_cwnd, 100);
    }

    #[test]
    fn loss_sets_ssthresh_to_nv_loss_dec_factor_of_cwnd() {
        let (mut nv, mut sk) = flow(NvParams::default(), 100, INF, None);
        // (cwnd * 819) >> 10, at least 2.
        for (cwnd, want) in [(100, 79), (1000, 799), (10, 7), (3, 2), (2, 2), (1, 2)] {
            sk.snd_cwnd = cwnd;
            assert_eq!(nv.ssthresh(&mut sk), want, "cwnd {cwnd}");
        }
        for (f, want) in [(512, 50), (1024, 100), (0, 2)] {
            let (mut nv, mut sk) = flow(NvParams { nv_loss_dec_factor: f, ..NvParams::default() }, 100, INF, None);
            assert_eq!(nv.ssthresh(&mut sk), want, "factor {f}");
        }
        // Through the dispatch enum with CcParams.nv.
        let params =
            CcParams { nv: NvParams { nv_loss_dec_factor: 512, ..NvParams::default() }, ..CcParams::default() };
        let mut cc = Cc::new(CcKind::Nv, &params);
        assert_eq!(cc.name(), "nv");
        sk.snd_cwnd = 100;
        assert_eq!(cc.ssthresh(&mut sk), 50);
        // Undo is tcp_reno_undo_cwnd.
        sk.prior_cwnd = 120;
        sk.snd_cwnd = 80;
        assert_eq!(nv.undo_cwnd(&mut sk), 120);
    }

    #[test]
    fn loss_states_stop_growth_and_slow_it_after_an_rto() {
        let (mut nv, mut sk) = flow(NvParams::default(), 20, 10, None);
        for st in [CaState::Cwr, CaState::Recovery] {
            let (mut nv, mut sk) = flow(NvParams::default(), 20, 10, None);
            nv.set_state(&mut sk, st);
            assert!(!nv.allows_cwnd_growth() && nv.ca.nv_reset);
            assert_eq!(nv.cwnd_growth_factor(), 0);
        }
        nv.set_state(&mut sk, CaState::Loss);
        assert_eq!((nv.allows_cwnd_growth(), nv.ca.nv_reset, nv.cwnd_growth_factor()), (false, true, -1));
        for _ in 0..5 {
            nv.cong_avoid(&mut sk, 0, 1);
        }
        assert_eq!(sk.snd_cwnd, 20, "no growth after a loss");
        // Samples are ignored outside Open and Disorder.
        sk.ca_state = CaState::Loss;
        let before = nv.ca;
        ack(&mut nv, &mut sk, 100, 50_000, 19_000);
        assert_eq!(nv.ca, before);
        // Back to Open: the counters restart at snd_una; growth stays off until a decision.
        sk.snd_una = 77_000;
        sk.ca_state = CaState::Open;
        nv.ca.nv_rtt_cnt = 5;
        nv.set_state(&mut sk, CaState::Open);
        assert!(!nv.ca.nv_reset);
        assert_eq!((nv.ca.nv_rtt_cnt, nv.ca.nv_rtt_start_seq, nv.ca.nv_last_snd_una), (0, 77_000, 77_000));
        assert!(!nv.allows_cwnd_growth());
        // Open again without a pending reset changes nothing.
        nv.ca.nv_rtt_cnt = 3;
        nv.set_state(&mut sk, CaState::Open);
        assert_eq!(nv.ca.nv_rtt_cnt, 3);
        nv.ca.nv_rtt_cnt = 0;
        // Uncongested (cwnd 20 well below max_win 60): a decision every 20 ACKs (19 000 bytes out,
        // ACK 21, 41, ...) once 20 samples are in. The first allows growth; at factor -1 growth
        // is one packet per 2 * cwnd ACKs.
        sk.snd_ssthresh = 10;
        let mut decisions = 0;
        for i in 1..=181 {
            let before = nv.ca.nv_eval_call_cnt;
            ack(&mut nv, &mut sk, 100, 50_000, 19_000);
            if nv.ca.nv_eval_call_cnt == 0 && before > 0 {
                decisions += 1;
                assert!(nv.allows_cwnd_growth());
                // More than nv_cwnd_growth_rate_neg (8) uncongested decisions step the factor up.
                assert_eq!(nv.cwnd_growth_factor(), if decisions <= 8 { -1 } else { 0 }, "ACK {i}");
            }
            if i == 21 {
                assert_eq!(decisions, 1);
                let cwnd = sk.snd_cwnd;
                for _ in 0..2 * cwnd - 1 {
                    nv.cong_avoid(&mut sk, 0, 1);
                }
                assert_eq!(sk.snd_cwnd, cwnd);
                nv.cong_avoid(&mut sk, 0, 1);
                assert_eq!(sk.snd_cwnd, cwnd + 1);
            }
        }
        assert_eq!(decisions, 9);
        // Repeated RTOs: the factor floors at -8; a positive one is first reset to 0.
        for _ in 0..20 {
            nv.set_state(&mut sk, CaState::Loss);
        }
        assert_eq!(nv.cwnd_growth_factor(), -8);
        nv.ca.cwnd_growth_factor = 3;
        nv.set_state(&mut sk, CaState::Loss);
        assert_eq!(nv.cwnd_growth_factor(), -1);
        // With nv_cwnd_growth_rate_neg 0 an RTO only resets a positive factor.
        let (mut nv, mut sk) = flow(NvParams { nv_cwnd_growth_rate_neg: 0, ..NvParams::default() }, 20, 10, None);
        nv.set_state(&mut sk, CaState::Loss);
        assert_eq!(nv.cwnd_growth_factor(), 0);
    }

    #[test]
    fn congestion_avoidance_at_each_growth_factor() {
        // (factor, cwnd, ACKs per +1): cnt = cwnd << -factor, or max(4, cwnd >> factor).
        for (f, cwnd, per) in [(0, 40, 40), (-2, 10, 40), (2, 40, 10), (3, 20, 4), (-8, 2, 512)] {
            let (mut nv, mut sk) = flow(NvParams::default(), cwnd, 1, None);
            nv.ca.cwnd_growth_factor = f;
            for _ in 0..per - 1 {
                nv.cong_avoid(&mut sk, 0, 1);
            }
            assert_eq!(sk.snd_cwnd, cwnd, "factor {f}");
            nv.cong_avoid(&mut sk, 0, 1);
            assert_eq!(sk.snd_cwnd, cwnd + 1, "factor {f}");
        }
        // Not cwnd-limited: no growth (tcp_is_cwnd_limited).
        let (mut nv, mut sk) = flow(NvParams::default(), 40, 1, None);
        sk.is_cwnd_limited = false;
        for _ in 0..100 {
            nv.cong_avoid(&mut sk, 0, 1);
        }
        assert_eq!(sk.snd_cwnd, 40);
        // A positive factor only comes from nv_cwnd_growth_rate_pos: more than 1 uncongested
        // decision -> factor 1.
        let p = NvParams { nv_cwnd_growth_rate_pos: 1, ..NvParams::default() };
        let (mut nv, mut sk) = flow(p, 20, 10, None);
        for _ in 0..41 {
            ack(&mut nv, &mut sk, 100, 50_000, 19_000);
        }
        assert_eq!((nv.ca.nv_no_cong_cnt, nv.cwnd_growth_factor()), (0, 1));
    }

    #[test]
    fn one_sample_per_rtt_raises_the_connection_min_cwnd() {
        // A single sample that acks >= (nv_min_cwnd - 1) * MSS ends the RTT: nv_min_cwnd += 2,
        // the RTT is extended by nv_min_cwnd packets, and no decision is made.
        let (mut nv, mut sk) = flow(NvParams::default(), 100, 50, None);
        nv.ca.nv_allow_cwnd_growth = false;
        sk.snd_una = 3_000;
        sk.snd_nxt = 50_000;
        nv.pkts_acked(&mut sk, &AckSample { pkts_acked: 3, rtt_us: 100, in_flight: 50_000 });
        assert_eq!(nv.ca.nv_min_cwnd, 6);
        assert_eq!(nv.ca.nv_rtt_start_seq, 50_000 + 6 * MSS);
        assert_eq!((nv.ca.nv_eval_call_cnt, nv.ca.nv_rtt_cnt), (0, 1));
        assert!(nv.allows_cwnd_growth());
        // Up to NV_TSO_CWND_BOUND + 1 = 81.
        for _ in 0..60 {
            sk.snd_una = nv.ca.nv_rtt_start_seq + 100 * MSS;
            sk.snd_nxt = sk.snd_una + 10 * MSS;
            nv.pkts_acked(&mut sk, &AckSample { pkts_acked: 100, rtt_us: 100, in_flight: 50_000 });
        }
        assert_eq!(nv.ca.nv_min_cwnd, 81);
        // 2 000 bytes acked by the lone sample are too few for nv_min_cwnd 4.
        let (mut nv, mut sk) = flow(NvParams::default(), 10, 50, None);
        sk.snd_una = 2_000;
        nv.pkts_acked(&mut sk, &AckSample { pkts_acked: 2, rtt_us: 100, in_flight: 50_000 });
        assert_eq!(nv.ca.nv_min_cwnd, 4);
    }

    #[test]
    fn samples_without_rtt_or_in_flight_are_skipped() {
        let (mut nv, mut sk) = flow(NvParams::default(), 10, 50, None);
        let before = nv.ca;
        ack(&mut nv, &mut sk, -1, 50_000, 9_000);
        assert_eq!(nv.ca, before, "rtt_us < 0: nothing, not even bytes acked");
        // in_flight 0: only the bytes-acked reference moves.
        ack(&mut nv, &mut sk, 100, 0, 9_000);
        assert_eq!(nv.ca, TcpNv { nv_last_snd_una: 2_000, ..before });
        // A 0 µs RTT does not divide by zero: rate = 500 * 8e6 / 1.
        ack(&mut nv, &mut sk, 0, 500, 9_000);
        assert_eq!(nv.ca.nv_last_rtt, 0);
        assert_eq!(nv.ca.nv_rtt_max_rate, 4_000_000_000);
    }

    #[test]
    fn nv_has_no_cwnd_event_or_in_ack_event() {
        let (mut nv, mut sk) = flow(NvParams::default(), 10, 50, Some(80));
        ack(&mut nv, &mut sk, 100, 50_000, 9_000);
        let (before, sk_before) = (nv.ca, sk.clone());
        for ev in [CaEvent::TxStart, CaEvent::CwndRestart, CaEvent::CompleteCwr, CaEvent::Loss, CaEvent::EcnIsCe] {
            nv.cwnd_event(&mut sk, ev);
        }
        nv.in_ack_event(&mut sk, crate::AckEventFlags::default());
        assert_eq!(nv.ca, before);
        assert_eq!(
            (sk.snd_cwnd, sk.snd_ssthresh, sk.requests.wants_ack_now()),
            (sk_before.snd_cwnd, sk_before.snd_ssthresh, false)
        );
        assert!(!nv.needs_ecn() && !nv.has_cong_control() && !nv.handles_ece());
    }
}
