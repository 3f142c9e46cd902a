//! BBR v1 (Bottleneck Bandwidth and RTT), as Linux's `net/ipv4/tcp_bbr.c` runs it.
//!
//! On every ACK BBR updates a model of the path — the windowed maximum delivery rate over 10
//! packet-timed rounds and the windowed minimum RTT over 10 s — and sets the pacing rate to
//! `pacing_gain * bw` and cwnd to `cwnd_gain * bw * min_rtt` plus allowances. It replaces the
//! stack's cwnd logic entirely (`cong_control`), and asks the stack to pace
//! ([`Sock::pacing_needed`], Linux's `SK_PACING_NEEDED`). Modes: STARTUP (gain 2/ln 2) until the
//! bandwidth stops growing by 25 % for 3 rounds, DRAIN (the inverse gain) until the queue built
//! in STARTUP is gone, PROBE_BW (the eight-phase gain cycle 5/4, 3/4, 1 x 6), and PROBE_RTT
//! (cwnd 4 packets for 200 ms and a round) when min_rtt has not been refreshed for 10 s. A
//! long-term sampler detects token-bucket policers and then paces at the policed rate.
//!
//! Units are the kernel's: bandwidth in packets per µs scaled by 2^24 (`BW_SCALE`), gains in
//! 1/256 (`BBR_SCALE`), time in µs (`tcp_mstamp`) and jiffies (at the socket's HZ). The code follows the
//! 5.x file (EDT-aware in-flight estimates, ACK aggregation, 1 % pacing margin) with the two
//! later mainline fixes: a min_rtt sample refreshes the filter only if strictly lower (1b9e2a8c99
//! "tcp: only postpone PROBE_RTT if RTT is < current min_rtt estimate") and the first round ends
//! relative to `tp->delivered` at init (6de035fec0 "tcp_bbr: fix u32 wrap bug in round logic if
//! bbr_init() called after 2B packets").
//!
//! Differences from Linux, all outside the algorithm: the random start of the gain cycle draws
//! from a deterministic generator seeded by [`Sock::rng_seed`]; `sk_max_pacing_rate`
//! (`SO_MAX_PACING_RATE`) is unlimited; `min_tso_segs` sizes the endpoint's paced bursts and
//! [`Bbr::tso_segs_goal`]; `sndbuf_expand` has no effect, as ccsim has no send buffer.

use crate::seq::{after, before};
use crate::{CaEvent, CaState, CcInfo, CongestionOps, MinMax, RateSample, Sock, TCP_INFINITE_SSTHRESH};

/// `BW_SCALE`: bandwidth in packets/µs << 24 (one unit ≈ 715 bit/s at 1500-byte packets).
pub const BW_SCALE: u32 = 24;
/// `BW_UNIT`.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE`: gains and other fractions in 1/256.
pub const BBR_SCALE: u32 = 8;
/// `BBR_UNIT`: a gain of 1.0.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// `bbr_high_gain` = 2/ln(2) ≈ 2.885 (739/256): STARTUP doubles the sending rate every round.
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = 1/high_gain (88/256): DRAIN empties the STARTUP queue in about a round.
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: PROBE_BW cwnd = 2 BDP, tolerating delayed and stretched ACKs.
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `CYCLE_LEN`: phases in the PROBE_BW pacing-gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_pacing_gain[]`: probe at 5/4, drain at 3/4, cruise at 1 for six phases.
pub const BBR_PACING_GAIN: [u32; CYCLE_LEN as usize] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// `bbr_cycle_rand`: the cycle starts at a random one of the 7 phases other than 3/4.
const BBR_CYCLE_RAND: u32 = 7;
/// `bbr_bw_rtts`: window of the max-bw filter, in packet-timed rounds.
const BBR_BW_RTTS: u32 = CYCLE_LEN + 2;
/// `bbr_min_tso_rate` (bit/s): below it, one-segment TSO bursts.
const BBR_MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_full_bw_thresh`: bw must grow by 25 % per round to count as still growing ...
const BBR_FULL_BW_THRESH: u64 = (BBR_UNIT * 5 / 4) as u64;
/// `bbr_full_bw_cnt`: ... and the pipe is full after 3 rounds that do not.
const BBR_FULL_BW_CNT: u8 = 3;
/// `bbr_lt_intvl_min_rtts`: a long-term sampling interval lasts at least 4 rounds (at most 4x).
const BBR_LT_INTVL_MIN_RTTS: u8 = 4;
/// `bbr_lt_loss_thresh`: an interval is lossy if lost/delivered >= 50/256 (≈ 20 %).
const BBR_LT_LOSS_THRESH: u32 = 50;
/// `bbr_lt_bw_ratio`: two intervals are consistent if their bw differ by <= 1/8 ...
const BBR_LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// `bbr_lt_bw_diff`: ... or by <= 4 kbit/s (in bytes/s).
const BBR_LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`: use the policed rate for 48 rounds, then probe again.
const BBR_LT_BW_MAX_RTTS: u8 = 48;
/// `bbr_extra_acked_win_rtts`: each of the two extra_acked slots covers 5 rounds.
const BBR_EXTRA_ACKED_WIN_RTTS: u8 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`.
const BBR_ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: the aggregation allowance is at most 100 ms of bw.
const BBR_EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;
/// `sk_pacing_shift` default (`sk->sk_pacing_shift = 10`): TSO bursts of ~1 ms.
const SK_PACING_SHIFT: u32 = 10;
/// `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER` with x86-64's `MAX_TCP_HEADER` (320 bytes).
const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;
/// The highest `CONFIG_HZ` ccsim runs (`TcpConfig::hz`): parameter bounds that hold at this HZ
/// hold at every HZ. The module itself reads the socket's HZ ([`Sock::hz`]).
const MAX_HZ: u32 = 1000;
const USEC_PER_SEC: u64 = 1_000_000;
const USEC_PER_MSEC: u64 = 1000;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// `BBR_STARTUP`: ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// `BBR_DRAIN`: drain any queue created during STARTUP.
    Drain,
    /// `BBR_PROBE_BW`: discover and share bandwidth by pacing around the estimate.
    ProbeBw,
    /// `BBR_PROBE_RTT`: cut in-flight to the minimum to probe min_rtt.
    ProbeRtt,
}

/// BBR tunables. Linux has them as `static const`s in tcp_bbr.c, not module parameters; the
/// defaults are those constants, so `BbrParams::default()` is exactly Linux's BBR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbrParams {
    /// `bbr_high_gain`: STARTUP pacing and cwnd gain, in 1/256 (739 ≈ 2.885).
    pub high_gain: u32,
    /// `bbr_drain_gain`: DRAIN pacing gain, in 1/256 (88 ≈ 0.344).
    pub drain_gain: u32,
    /// `bbr_cwnd_gain`: PROBE_BW cwnd gain, in 1/256 (512 = 2.0).
    pub cwnd_gain: u32,
    /// `bbr_min_rtt_win_sec`: min_rtt filter window (10 s).
    pub min_rtt_win_sec: u32,
    /// `bbr_probe_rtt_mode_ms`: time at `cwnd_min_target` in PROBE_RTT (200 ms; 0 disables
    /// PROBE_RTT).
    pub probe_rtt_mode_ms: u32,
    /// `bbr_cwnd_min_target`: cwnd floor and PROBE_RTT cwnd (4 packets).
    pub cwnd_min_target: u32,
    /// `bbr_extra_acked_gain`: weight of the ACK-aggregation allowance, in 1/256 (256; 0 turns
    /// the allowance off).
    pub extra_acked_gain: u32,
    /// `bbr_pacing_margin_percent`: pace this many percent below the estimated bw (1).
    pub pacing_margin_percent: u32,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            high_gain: BBR_HIGH_GAIN,
            drain_gain: BBR_DRAIN_GAIN,
            cwnd_gain: BBR_CWND_GAIN,
            min_rtt_win_sec: 10,
            probe_rtt_mode_ms: 200,
            cwnd_min_target: 4,
            extra_acked_gain: BBR_UNIT,
            pacing_margin_percent: 1,
        }
    }
}

/// Largest gain `struct bbr`'s 10-bit `pacing_gain` / `cwnd_gain` fields hold (≈ 4.0).
const MAX_GAIN: u32 = (1 << 10) - 1;

impl BbrParams {
    /// Reject values the kernel's fields and arithmetic cannot hold (the scenario layer calls
    /// this).
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("high_gain", self.high_gain), ("drain_gain", self.drain_gain), ("cwnd_gain", self.cwnd_gain)]
        {
            if v == 0 || v > MAX_GAIN {
                return Err(format!("bbr {name} {v} must be 1..={MAX_GAIN} (in 1/256)"));
            }
        }
        if self.extra_acked_gain > MAX_GAIN {
            return Err(format!("bbr extra_acked_gain {} must be 0..={MAX_GAIN} (in 1/256)", self.extra_acked_gain));
        }
        // Jiffy stamps are compared with after(): windows must stay below 2^31 jiffies.
        let max_sec = (i32::MAX as u32) / MAX_HZ;
        if self.min_rtt_win_sec == 0 || self.min_rtt_win_sec > max_sec {
            return Err(format!("bbr min_rtt_win_sec {} must be 1..={max_sec}", self.min_rtt_win_sec));
        }
        if self.probe_rtt_mode_ms > i32::MAX as u32 {
            return Err(format!("bbr probe_rtt_mode_ms {} out of range", self.probe_rtt_mode_ms));
        }
        if self.cwnd_min_target == 0 {
            return Err("bbr cwnd_min_target must be at least 1".into());
        }
        if self.pacing_margin_percent >= 100 {
            return Err(format!("bbr pacing_margin_percent {} must be 0..=99", self.pacing_margin_percent));
        }
        Ok(())
    }
}

/// The generator behind `prandom_u32()` here: SplitMix64, seeded from [`Sock::rng_seed`].
#[derive(Clone, Copy, Debug)]
struct Prng(u64);

impl Prng {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 32) as u32
    }
    /// `prandom_u32_max(ep_ro)`: uniform in [0, ep_ro) by multiply-shift.
    fn below(&mut self, ep_ro: u32) -> u32 {
        ((u64::from(self.next_u32()) * u64::from(ep_ro)) >> 32) as u32
    }
}

/// `tcp_stamp_us_delta`: `t1 - t0` in µs, never negative.
fn stamp_us_delta(t1: u64, t0: u64) -> u64 {
    t1.saturating_sub(t0)
}

/// `tp->delivered_mstamp` in µs, as Linux keeps it.
fn delivered_mstamp_us(sk: &Sock) -> u64 {
    sk.delivered_mstamp_ns / 1000
}

/// BBR congestion control (`struct bbr`). Linux packs the flags into bitfields to fit
/// `ICSK_CA_PRIV_SIZE`; here they are whole bytes, with the kernel's widths kept where a field
/// can reach them (`cycle_idx` 3 bits, `lt_rtt_cnt` 7, `extra_acked_win_rtts` 5,
/// `ack_epoch_acked` 20, `extra_acked` 16).
#[derive(Clone, Debug)]
pub struct Bbr {
    /// Min RTT in the `min_rtt_win_sec` window, µs, and the jiffies when it was taken.
    min_rtt_us: u32,
    min_rtt_stamp: u32,
    /// End of PROBE_RTT (jiffies), 0 until in-flight reached `cwnd_min_target`.
    probe_rtt_done_stamp: u32,
    /// Max recent delivery rate in pkts/µs << 24, windowed over `BBR_BW_RTTS` rounds.
    bw: MinMax,
    /// Packet-timed rounds elapsed.
    rtt_cnt: u32,
    /// `tp->delivered` at the end of the current round.
    next_rtt_delivered: u32,
    /// Start of the current gain-cycle phase (`tp->delivered_mstamp`, µs).
    cycle_mstamp: u64,
    mode: BbrMode,
    /// CA state at the previous ACK.
    prev_ca_state: CaState,
    /// Packet conservation in the first round of recovery.
    packet_conservation: bool,
    /// This ACK starts a new packet-timed round.
    round_start: bool,
    /// Restarting after idle.
    idle_restart: bool,
    /// A PROBE_RTT round at `cwnd_min_target` is done.
    probe_rtt_round_done: bool,
    /// Long-term (policer) sampling is on.
    lt_is_sampling: bool,
    /// Rounds in the current long-term interval (7 bits).
    lt_rtt_cnt: u8,
    /// Use `lt_bw` as the bandwidth estimate.
    lt_use_bw: bool,
    /// Long-term delivery rate, pkts/µs << 24.
    lt_bw: u32,
    /// Start of the long-term interval: `tp->delivered`, `tp->delivered_mstamp` (ms), `tp->lost`.
    lt_last_delivered: u32,
    lt_last_stamp: u32,
    lt_last_lost: u32,
    /// Current gains, in 1/256.
    pacing_gain: u16,
    cwnd_gain: u16,
    /// STARTUP filled the pipe.
    full_bw_reached: bool,
    /// Rounds without a 25 % bandwidth increase (2 bits).
    full_bw_cnt: u8,
    /// Index in `BBR_PACING_GAIN` (3 bits).
    cycle_idx: u8,
    /// An RTT sample has set the pacing rate.
    has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// Bandwidth at the last 25 % growth, for full-pipe detection.
    full_bw: u32,
    /// ACK aggregation: start of the sampling epoch (µs), packets (S)ACKed in it (20 bits).
    ack_epoch_mstamp: u64,
    ack_epoch_acked: u32,
    /// Max excess data ACKed, in two slots of `BBR_EXTRA_ACKED_WIN_RTTS` rounds each.
    extra_acked: [u16; 2],
    /// Age of the current slot in rounds (5 bits), and which slot is current.
    extra_acked_win_rtts: u8,
    extra_acked_win_idx: u8,
    rng: Prng,
    params: BbrParams,
}

// Linux: BUILD_BUG_ON(sizeof(struct bbr) > ICSK_CA_PRIV_SIZE), 104 bytes thanks to bitfields.
// Here the flags are whole bytes (the kernel state takes 112) and the module also carries its
// generator and parameters: 152 bytes, still well within what an endpoint can afford.
const _: () = assert!(std::mem::size_of::<Bbr>() <= 152);

impl Default for Bbr {
    fn default() -> Self {
        Bbr::new(BbrParams::default())
    }
}

impl Bbr {
    pub fn new(params: BbrParams) -> Bbr {
        // Clamp so the arithmetic stays defined; `validate` reports out-of-range values.
        let params = BbrParams {
            high_gain: params.high_gain.clamp(1, MAX_GAIN),
            drain_gain: params.drain_gain.clamp(1, MAX_GAIN),
            cwnd_gain: params.cwnd_gain.clamp(1, MAX_GAIN),
            min_rtt_win_sec: params.min_rtt_win_sec.clamp(1, (i32::MAX as u32) / MAX_HZ),
            probe_rtt_mode_ms: params.probe_rtt_mode_ms.min(i32::MAX as u32),
            cwnd_min_target: params.cwnd_min_target.max(1),
            extra_acked_gain: params.extra_acked_gain.min(MAX_GAIN),
            pacing_margin_percent: params.pacing_margin_percent.min(99),
        };
        Bbr {
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: BbrMode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: params.high_gain as u16,
            cwnd_gain: params.high_gain as u16,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng: Prng(crate::DEFAULT_RNG_SEED),
            params,
        }
    }

    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// Current pacing and cwnd gains, in 1/256.
    pub fn pacing_gain(&self) -> u32 {
        u32::from(self.pacing_gain)
    }
    pub fn cwnd_gain(&self) -> u32 {
        u32::from(self.cwnd_gain)
    }
    /// Index of the current PROBE_BW phase in [`BBR_PACING_GAIN`].
    pub fn cycle_idx(&self) -> u32 {
        u32::from(self.cycle_idx)
    }
    /// `bbr_full_bw_reached`.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// `bbr_max_bw`: the windowed max delivery rate, pkts/µs << 24.
    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }
    /// `bbr_bw`: the bandwidth estimate in use (`lt_bw` when policed), pkts/µs << 24.
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    /// Packet-timed rounds so far (`rtt_cnt`).
    pub fn rtt_cnt(&self) -> u32 {
        self.rtt_cnt
    }
    /// Long-term (policer) estimate and whether it is in use.
    pub fn lt_bw(&self) -> u32 {
        self.lt_bw
    }
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }
    pub fn lt_is_sampling(&self) -> bool {
        self.lt_is_sampling
    }
    pub fn packet_conservation(&self) -> bool {
        self.packet_conservation
    }
    /// cwnd saved at the start of recovery or PROBE_RTT.
    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }
    /// `bbr_extra_acked`: max excess ACKed over the last 5–10 rounds.
    pub fn extra_acked(&self) -> u16 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: a rate in pkts/µs << 24 times a gain, in bytes per second,
    /// `pacing_margin_percent` below (the order of operations keeps a u64 from overflowing up
    /// to ~2.9 Tbit/s at gain 2.89).
    pub fn rate_bytes_per_sec(&self, sk: &Sock, rate: u64, gain: u32) -> u64 {
        let mut rate = rate.wrapping_mul(u64::from(sk.mss_cache));
        rate = rate.wrapping_mul(u64::from(gain));
        rate >>= BBR_SCALE;
        rate = rate.wrapping_mul(USEC_PER_SEC / 100 * u64::from(100 - self.params.pacing_margin_percent));
        rate >> BW_SCALE
    }

    /// `bbr_bw_to_pacing_rate` (`sk_max_pacing_rate` is unlimited in ccsim).
    pub fn bw_to_pacing_rate(&self, sk: &Sock, bw: u32, gain: u32) -> u64 {
        self.rate_bytes_per_sec(sk, u64::from(bw), gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain * cwnd / srtt (or / 1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, sk: &mut Sock) {
        let rtt_us = if sk.srtt_us != 0 {
            self.has_seen_rtt = true;
            (sk.srtt_us >> 3).max(1)
        } else {
            USEC_PER_MSEC as u32
        };
        let bw = u64::from(sk.snd_cwnd) * BW_UNIT / u64::from(rtt_us);
        // bbr_bw_to_pacing_rate takes a u32 bw.
        sk.pacing_rate = self.bw_to_pacing_rate(sk, bw as u32, self.params.high_gain);
    }

    /// `bbr_set_pacing_rate`: before the pipe is full the rate only goes up.
    fn set_pacing_rate(&mut self, sk: &mut Sock, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(sk, bw, gain);
        if !self.has_seen_rtt && sk.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(sk);
        }
        if self.full_bw_reached || rate > sk.pacing_rate {
            sk.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs` (the `.min_tso_segs` hook): one segment below 1.2 Mbit/s, else two.
    pub fn bbr_min_tso_segs(&self, sk: &Sock) -> u32 {
        if sk.pacing_rate < BBR_MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate (`sk_pacing_shift` = 10),
    /// at least `min_tso_segs`, at most 127 segments.
    pub fn tso_segs_goal(&self, sk: &Sock) -> u32 {
        let bytes = (sk.pacing_rate >> SK_PACING_SHIFT).min(TSO_MAX_BYTES) as u32;
        let segs = (bytes / sk.mss_cache.max(1)).max(self.bbr_min_tso_segs(sk));
        segs.min(0x7F)
    }

    /// `bbr_save_cwnd`: remember the last known good cwnd for after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, sk: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = sk.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(sk.snd_cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw * min_rtt * gain), or `TCP_INIT_CWND` before any RTT sample.
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u64::from(bw) * u64::from(self.min_rtt_us);
        // (((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT: round up, against a negative
        // feedback loop.
        (w.wrapping_mul(u64::from(gain)) >> BBR_SCALE).div_ceil(BW_UNIT) as u32
    }

    /// `bbr_quantization_budget`: room for three TSO bursts, rounded up to an even count, and
    /// two more packets in the probing phase so gain cycling lifts in-flight above BDP.
    pub fn quantization_budget(&self, sk: &Sock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.wrapping_add(3 * self.tso_segs_goal(sk));
        cwnd = cwnd.wrapping_add(1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.wrapping_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: the in-flight target for a bandwidth and gain.
    pub fn inflight(&self, sk: &Sock, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(sk, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: of `inflight_now`, how many will still be in the network
    /// when the next packet leaves at its earliest departure time (`tcp_wstamp_ns`).
    fn packets_in_net_at_edt(&self, sk: &Sock, inflight_now: u32) -> u32 {
        let now_ns = sk.now_ns;
        let edt_ns = sk.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1000;
        let interval_delivered = (u64::from(self.bw()).wrapping_mul(interval_us) >> BW_SCALE) as u32;
        let mut inflight_at_edt = inflight_now;
        if u32::from(self.pacing_gain) > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(sk); // include the EDT skb
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`: cwnd allowance for ACK aggregation, once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.params.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = (u64::from(self.bw()) * BBR_EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = (self.params.extra_acked_gain * u32::from(self.extra_acked())) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// recovery, cwnd restored on exit. Returns the cwnd, and whether conservation applies.
    fn set_cwnd_to_recover_or_restore(&mut self, sk: &Sock, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev_state = self.prev_ca_state;
        let state = sk.ca_state;
        let mut cwnd = sk.snd_cwnd;
        // An ACK for P packets should release at most 2P: first deduct the losses, then
        // bbr_set_cwnd slow-starts towards the target.
        if rs.losses > 0 {
            cwnd = (cwnd.wrapping_sub(rs.losses) as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // Starting the first round of Recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = sk.delivered; // start round now
                                                    // Cut unused cwnd from app behaviour, TSQ or TSO deferral.
            cwnd = sk.packets_in_flight() + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Exiting loss recovery: restore the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(sk.packets_in_flight() + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow-start towards the target (if bw is growing or losses pulled cwnd
    /// below it), or snap down to the target once the pipe is full.
    fn set_cwnd(&mut self, sk: &mut Sock, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = sk.snd_cwnd;
        if acked != 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(sk, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target_cwnd = self.bdp(bw, gain);
                // Excess ACKed data that seems due to aggregation of data and/or ACKs.
                target_cwnd = target_cwnd.wrapping_add(self.ack_aggregation_cwnd());
                target_cwnd = self.quantization_budget(sk, target_cwnd);
                if self.full_bw_reached {
                    // Only cut cwnd once the pipe has been filled.
                    cwnd = cwnd.wrapping_add(acked).min(target_cwnd);
                } else if cwnd < target_cwnd || sk.delivered < TCP_INIT_CWND {
                    cwnd = cwnd.wrapping_add(acked);
                }
                cwnd = cwnd.max(self.params.cwnd_min_target);
            }
        }
        // done:
        sk.snd_cwnd = cwnd.min(sk.snd_cwnd_clamp);
        if self.mode == BbrMode::ProbeRtt {
            // Drain the queue, refresh min_rtt.
            sk.snd_cwnd = sk.snd_cwnd.min(self.params.cwnd_min_target);
        }
    }

    /// `bbr_is_next_cycle_phase`: end the phase when it is time and/or in-flight hit its target.
    fn is_next_cycle_phase(&self, sk: &Sock, rs: &RateSample) -> bool {
        let is_full_length = stamp_us_delta(delivered_mstamp_us(sk), self.cycle_mstamp) > u64::from(self.min_rtt_us);
        let gain = u32::from(self.pacing_gain);
        // Gain 1.0 paces at the estimated bw to fully use the pipe without adding queue.
        if gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(sk, rs.prior_in_flight);
        let bw = self.max_bw();
        // Gain > 1 probes by raising in-flight to gain * BDP, which may take more than min_rtt
        // on a LAN; it stops early if packets are lost (the buffer may not hold that much).
        if gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(sk, bw, gain));
        }
        // Gain < 1 drains the queue the probe added; it stops once in-flight is down to BDP.
        is_full_length || inflight <= self.inflight(sk, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, sk: &Sock) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN as u8 - 1);
        self.cycle_mstamp = delivered_mstamp_us(sk);
    }

    /// `bbr_update_cycle_phase`: gain cycling, to converge to a fair share of the bandwidth.
    fn update_cycle_phase(&mut self, sk: &Sock, rs: &RateSample) {
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(sk, rs) {
            self.advance_cycle_phase(sk);
        }
    }

    /// `bbr_reset_startup_mode`.
    fn reset_startup_mode(&mut self) {
        self.mode = BbrMode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: start the gain cycle at a random phase other than 3/4
    /// (cycle_idx = 7 - rand(0..7), then advanced once: phase 2..7 or 0).
    fn reset_probe_bw_mode(&mut self, sk: &Sock) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = (CYCLE_LEN - 1 - self.rng.below(BBR_CYCLE_RAND)) as u8;
        self.advance_cycle_phase(sk); // flip to the next phase of the gain cycle
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, sk: &Sock) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(sk);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`: start a new long-term sampling interval.
    fn reset_lt_bw_sampling_interval(&mut self, sk: &Sock) {
        self.lt_last_stamp = (delivered_mstamp_us(sk) / USEC_PER_MSEC) as u32;
        self.lt_last_delivered = sk.delivered;
        self.lt_last_lost = sk.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`: stop long-term sampling altogether.
    fn reset_lt_bw_sampling(&mut self, sk: &Sock) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// `bbr_lt_bw_interval_done`: two consecutive lossy intervals with consistent bandwidth
    /// mean a policer: use their average.
    fn lt_bw_interval_done(&mut self, sk: &Sock, bw: u32) {
        if self.lt_bw != 0 {
            // abs() of the u32 difference, evaluated as int as the kernel's abs() does.
            let diff = (bw.wrapping_sub(self.lt_bw) as i32).unsigned_abs();
            if diff.wrapping_mul(BBR_UNIT) <= BBR_LT_BW_RATIO.wrapping_mul(self.lt_bw)
                || self.rate_bytes_per_sec(sk, u64::from(diff), BBR_UNIT) <= BBR_LT_BW_DIFF
            {
                // All criteria are met: estimate we are policed.
                self.lt_bw = bw.wrapping_add(self.lt_bw) >> 1; // average of 2 intervals
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT as u16; // try to avoid drops
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// `bbr_lt_bw_sampling`: token-bucket policer detection ("An Internet-Wide Analysis of
    /// Traffic Policing", SIGCOMM 2016).
    fn lt_bw_sampling(&mut self, sk: &Sock, rs: &RateSample) {
        if self.lt_use_bw {
            // Already using the long-term rate: for how long?
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt = (self.lt_rtt_cnt + 1) & 0x7F;
                if self.lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(sk); // stop using lt_bw
                    self.reset_probe_bw_mode(sk); // restart gain cycling
                }
            }
            return;
        }
        // Wait for the first loss before sampling, so the policer's tokens are exhausted and
        // the samples show its steady rate, not the initial burst.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(sk);
            self.lt_is_sampling = true;
        }
        // Running out of data would under-estimate: reset.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt = (self.lt_rtt_cnt + 1) & 0x7F; // rounds in this interval
        }
        if self.lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS {
            return; // the interval needs to be longer
        }
        if self.lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(sk); // the interval is too long
            return;
        }
        // End the interval at a loss, when the policer's tokens are presumably exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = sk.lost.wrapping_sub(self.lt_last_lost);
        let delivered = sk.delivered.wrapping_sub(self.lt_last_delivered);
        // Is the loss rate lost/delivered >= lt_loss_thresh? If not, wait.
        if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH.wrapping_mul(delivered) {
            return;
        }
        // Average delivery rate over the interval.
        let mut t = ((delivered_mstamp_us(sk) / USEC_PER_MSEC) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return; // less than 1 ms: wait
        }
        if t >= u32::MAX / USEC_PER_MSEC as u32 {
            self.reset_lt_bw_sampling(sk); // too long to multiply
            return;
        }
        t *= USEC_PER_MSEC as u32;
        let bw = u64::from(delivered) * BW_UNIT / u64::from(t);
        self.lt_bw_interval_done(sk, bw as u32);
    }

    /// `bbr_update_bw`: count rounds, feed the long-term sampler and the max-bw filter.
    fn update_bw(&mut self, sk: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return; // not a valid observation
        }
        // A packet sent after the round began has been delivered: the next round starts.
        if !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = sk.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(sk, rs);
        // delivered / interval, with delivered scaled first (the ratio is << 1).
        let bw = (rs.delivered as u64) * BW_UNIT / (rs.interval_us as u64);
        // App-limited samples only count if they are at least the current estimate: the
        // application, not the network, limited them.
        if !rs.is_app_limited || bw >= u64::from(self.max_bw()) {
            self.bw.running_max(BBR_BW_RTTS, self.rtt_cnt, bw as u32);
        }
    }

    /// `bbr_update_ack_aggregation`: the windowed max of data ACKed beyond what bw predicts
    /// (aggregation of data or ACKs), to keep sending through inter-ACK silences.
    fn update_ack_aggregation(&mut self, sk: &Sock, rs: &RateSample) {
        if self.params.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx as usize] = 0;
            }
        }
        // Packets expected to be delivered over the epoch.
        let epoch_us = stamp_us_delta(delivered_mstamp_us(sk), self.ack_epoch_mstamp) as u32;
        let mut expected_acked = (u64::from(self.bw()) * u64::from(epoch_us) / BW_UNIT) as u32;
        // Reset the epoch if the ACK rate is below the expected rate, or after very many
        // ACKed packets (a potentially quite old epoch).
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = delivered_mstamp_us(sk);
            expected_acked = 0;
        }
        // Excess data delivered beyond what was expected.
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra_acked = (self.ack_epoch_acked - expected_acked).min(sk.snd_cwnd);
        let idx = self.extra_acked_win_idx as usize;
        if extra_acked > u32::from(self.extra_acked[idx]) {
            self.extra_acked[idx] = extra_acked as u16; // the kernel's u16 field
        }
    }

    /// `bbr_check_full_bw_reached`: the pipe is full once bw has not grown by 25 % for 3
    /// non-app-limited rounds.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((u64::from(self.full_bw) * BBR_FULL_BW_THRESH) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt = (self.full_bw_cnt + 1) & 3;
        self.full_bw_reached = self.full_bw_cnt >= BBR_FULL_BW_CNT;
    }

    /// `bbr_check_drain`: once the pipe is full, drain the queue, then enter PROBE_BW.
    fn check_drain(&mut self, sk: &mut Sock) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain; // drain the queue we created
            sk.snd_ssthresh = self.inflight(sk, self.max_bw(), BBR_UNIT);
        }
        // Fall through to check whether in-flight is already small enough.
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(sk, sk.packets_in_flight()) <= self.inflight(sk, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(sk); // we estimate the queue is drained
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, sk: &mut Sock) {
        if !(self.probe_rtt_done_stamp != 0 && after(sk.jiffies(), self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = sk.jiffies(); // wait a while until the next PROBE_RTT
        sk.snd_cwnd = sk.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode(sk);
    }

    /// `bbr_update_min_rtt`: the 10 s min_rtt filter and PROBE_RTT, which drains the queue
    /// (cwnd 4 packets for 200 ms and a round) so that flows see the true propagation delay.
    fn update_min_rtt(&mut self, sk: &mut Sock, rs: &RateSample) {
        let win = self.params.min_rtt_win_sec * sk.hz();
        let filter_expired = after(sk.jiffies(), self.min_rtt_stamp.wrapping_add(win));
        if rs.rtt_us >= 0 && (rs.rtt_us < i64::from(self.min_rtt_us) || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us as u32;
            self.min_rtt_stamp = sk.jiffies();
        }
        if self.params.probe_rtt_mode_ms > 0 && filter_expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt; // dip, drain queue
            self.save_cwnd(sk); // note cwnd so we can restore it
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == BbrMode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            sk.app_limited = sk.delivered.wrapping_add(sk.packets_in_flight()).max(1);
            // Hold the minimum in flight for max(200 ms, 1 round).
            if self.probe_rtt_done_stamp == 0 && sk.packets_in_flight() <= self.params.cwnd_min_target {
                self.probe_rtt_done_stamp =
                    sk.jiffies().wrapping_add(sk.msecs_to_jiffies(self.params.probe_rtt_mode_ms));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = sk.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(sk);
                }
            }
        }
        // The restart after idle ends only with a new (S)ACK of data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            BbrMode::Startup => (self.params.high_gain, self.params.high_gain),
            // Slow, to drain; keep cwnd.
            BbrMode::Drain => (self.params.drain_gain, self.params.high_gain),
            BbrMode::ProbeBw => {
                let pacing = if self.lt_use_bw { BBR_UNIT } else { BBR_PACING_GAIN[self.cycle_idx as usize] };
                (pacing, self.params.cwnd_gain)
            }
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing as u16;
        self.cwnd_gain = cwnd as u16;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, sk: &mut Sock, rs: &RateSample) {
        self.update_bw(sk, rs);
        self.update_ack_aggregation(sk, rs);
        self.update_cycle_phase(sk, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(sk);
        self.update_min_rtt(sk, rs);
        self.update_gains();
    }
}

impl CongestionOps for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn min_tso_segs(&self, sk: &Sock) -> Option<u32> {
        Some(self.bbr_min_tso_segs(sk))
    }

    /// `bbr_init`.
    fn init(&mut self, sk: &mut Sock) {
        self.prior_cwnd = 0;
        sk.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = sk.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;

        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = sk.min_rtt_us; // tcp_min_rtt
        self.min_rtt_stamp = sk.jiffies();

        self.bw.reset(self.rtt_cnt, 0); // init max bw to 0

        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(sk);

        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(sk);
        self.reset_startup_mode();

        self.ack_epoch_mstamp = sk.now_us();
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];

        self.rng = Prng(sk.rng_seed);
        // cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED): not when fq already
        // paces the socket.
        if !sk.pacing_fq {
            sk.pacing_needed = true;
        }
    }

    /// `bbr_ssthresh`: entering loss recovery, save cwnd for when it ends or is undone;
    /// ssthresh stays as it is.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.save_cwnd(sk);
        sk.snd_ssthresh
    }

    /// BBR has no `cong_avoid`; `cong_control` replaces it.
    fn cong_avoid(&mut self, _sk: &mut Sock, _ack: u32, _acked: u32) {}

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) {
        self.update_model(sk, rs);
        let bw = self.bw();
        self.set_pacing_rate(sk, bw, u32::from(self.pacing_gain));
        self.set_cwnd(sk, rs, rs.acked_sacked, bw, u32::from(self.cwnd_gain));
    }

    /// `bbr_set_state`: an RTO ends the round and counts as a loss for the policer detector.
    fn set_state(&mut self, sk: &mut Sock, new: CaState) {
        if new == CaState::Loss {
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true; // treat RTO like the end of a round
            self.lt_bw_sampling(sk, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while application-limited.
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::TxStart && sk.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = sk.now_us();
            self.ack_epoch_acked = 0;
            // Avoid pointless buffer overflows: pace at the estimated bw if no more speed is
            // needed (restarting from idle and app-limited).
            if self.mode == BbrMode::ProbeBw {
                self.set_pacing_rate(sk, self.bw(), BBR_UNIT);
            } else if self.mode == BbrMode::ProbeRtt {
                self.check_probe_rtt_done(sk);
            }
        }
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; reset full-pipe detection and the policer
    /// sampler, keep cwnd.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(sk);
        sk.snd_cwnd
    }

    /// `bbr_get_info` (`struct tcp_bbr_info`): bw in bytes per second, split in 32-bit halves.
    fn get_info(&self, sk: &Sock) -> CcInfo {
        let bw = u64::from(self.bw()).wrapping_mul(u64::from(sk.mss_cache)).wrapping_mul(USEC_PER_SEC) >> BW_SCALE;
        CcInfo::Bbr {
            bw_lo: bw as u32,
            bw_hi: (bw >> 32) as u32,
            min_rtt: self.min_rtt_us,
            pacing_gain: u32::from(self.pacing_gain),
            cwnd_gain: u32::from(self.cwnd_gain),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Path of the synthetic traces: 10 ms RTT; five ACKs per round, 2 ms apart.
    const RTT_US: u64 = 10_000;
    const ACK_GAP_US: u64 = 2_000;
    /// The connection is established at t = 1 s (jiffies 1000).
    const T0_US: u64 = 1_000_000;
    /// 10 packets per 10 ms: 10 * 2^24 / 10_000 = 16777 (pkts/µs << 24).
    const BW_10_PER_RTT: u32 = 16777;

    /// A BBR sender fed a synthetic, ACK-clocked stream: every ACK acknowledges data sent one
    /// RTT earlier, so the rate sample spans exactly the packets delivered in the last RTT.
    struct Trace {
        bbr: Bbr,
        sk: Sock,
        now_us: u64,
        /// (time, tp->delivered) after every ACK, oldest first: the delivery snapshot
        /// (tx.delivered_mstamp, tx.delivered) of the packet each later ACK acknowledges.
        hist: VecDeque<(u64, u32)>,
        rtt_us: i64,
    }

    impl Trace {
        fn new(params: BbrParams, seed: u64) -> Trace {
            let mut sk = Sock {
                mss_cache: 1448,
                snd_cwnd: 10,
                srtt_us: (RTT_US as u32) << 3,
                min_rtt_us: RTT_US as u32,
                now_ns: T0_US * 1000,
                delivered_mstamp_ns: T0_US * 1000,
                packets_out: 10,
                rng_seed: seed,
                ..Sock::default()
            };
            let mut bbr = Bbr::new(params);
            bbr.init(&mut sk);
            Trace { bbr, sk, now_us: T0_US, hist: VecDeque::from([(T0_US, 0)]), rtt_us: RTT_US as i64 }
        }

        /// One ACK, `ACK_GAP_US` after the previous one (the first round's ACKs arrive one RTT
        /// after the initial flight), (S)ACKing `acked` packets with `losses` newly marked lost;
        /// afterwards `inflight` packets are in flight.
        fn ack(&mut self, acked: u32, losses: u32, inflight: u32) -> RateSample {
            self.now_us += if self.hist.len() == 1 { RTT_US } else { ACK_GAP_US };
            let now = self.now_us;
            let sent_at = now - RTT_US;
            while self.hist.len() > 1 && self.hist[1].0 <= sent_at {
                self.hist.pop_front();
            }
            let (prior_us, prior_delivered) = self.hist[0];
            let sk = &mut self.sk;
            sk.now_ns = now * 1000;
            sk.delivered += acked;
            sk.lost += losses;
            if acked > 0 {
                sk.delivered_mstamp_ns = now * 1000;
            }
            let prior_in_flight = sk.packets_out;
            sk.packets_out = inflight;
            let rs = RateSample {
                prior_mstamp_us: prior_us,
                prior_delivered,
                delivered: (sk.delivered - prior_delivered) as i32,
                interval_us: (now - prior_us) as i64,
                rtt_us: self.rtt_us,
                losses,
                acked_sacked: acked,
                prior_in_flight,
                ..RateSample::default()
            };
            self.bbr.cong_control(sk, &rs);
            self.hist.push_back((now, sk.delivered));
            rs
        }

        /// A round of five ACKs of two packets each, with `inflight` after each.
        fn round(&mut self, inflight: u32) {
            for _ in 0..5 {
                self.ack(2, 0, inflight);
            }
        }

        fn jiffies(&self) -> u32 {
            self.sk.jiffies()
        }
    }

    /// STARTUP at a constant 10 packets per RTT until the pipe is full, then DRAIN, then
    /// PROBE_BW (see `startup_drain_probe_bw_on_constant_delivery_rate` for the trace), and the
    /// rest of that round: the next ACK starts round 5.
    fn to_probe_bw(seed: u64) -> Trace {
        let mut t = Trace::new(BbrParams::default(), seed);
        for _ in 0..4 {
            t.round(30);
        }
        t.ack(2, 0, 30);
        t.ack(2, 0, 20);
        t.ack(2, 0, 16);
        assert_eq!(t.bbr.mode(), BbrMode::ProbeBw);
        t.ack(2, 0, 30);
        t.ack(2, 0, 30);
        assert_eq!(t.bbr.rtt_cnt(), 5);
        t
    }

    #[test]
    fn constants_match_linux() {
        assert_eq!(BBR_HIGH_GAIN, 739); // 256 * 2885 / 1000 + 1
        assert_eq!(BBR_DRAIN_GAIN, 88); // 256 * 1000 / 2885
        assert_eq!(BBR_CWND_GAIN, 512);
        assert_eq!(BBR_PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!(BBR_BW_RTTS, 10);
        assert_eq!(BbrParams::default().validate(), Ok(()));
    }

    #[test]
    fn params_validate_rejects_what_the_fields_cannot_hold() {
        let ok = BbrParams::default();
        assert!(BbrParams { cwnd_gain: 1024, ..ok.clone() }.validate().is_err()); // 10-bit field
        assert!(BbrParams { high_gain: 0, ..ok.clone() }.validate().is_err());
        assert!(BbrParams { drain_gain: 0, ..ok.clone() }.validate().is_err());
        assert!(BbrParams { extra_acked_gain: 1024, ..ok.clone() }.validate().is_err());
        assert!(BbrParams { min_rtt_win_sec: 0, ..ok.clone() }.validate().is_err());
        assert!(BbrParams { cwnd_min_target: 0, ..ok.clone() }.validate().is_err());
        assert!(BbrParams { pacing_margin_percent: 100, ..ok.clone() }.validate().is_err());
        assert!(BbrParams { probe_rtt_mode_ms: 0, extra_acked_gain: 0, ..ok }.validate().is_ok());
    }

    /// bbr_rate_bytes_per_sec for a known bandwidth: 10 Mbit/s of 1448-byte segments is 863.26
    /// packets/s; measured as 100 packets over 115 840 µs it is 100 * 2^24 / 115840 = 14483.
    /// At gain 1: 14483 * 1448 = 20 971 384; * 256 >> 8 = 20 971 384; * 990 000 (1 % margin)
    /// = 20 761 670 160 000; >> 24 = 1 237 491 B/s (9.90 Mbit/s).
    #[test]
    fn bw_to_pacing_rate_fixed_point() {
        let bbr = Bbr::default();
        let sk = Sock { mss_cache: 1448, ..Sock::default() };
        let bw = (100 * BW_UNIT / 115_840) as u32;
        assert_eq!(bw, 14483);
        assert_eq!(bbr.bw_to_pacing_rate(&sk, bw, BBR_UNIT), 1_237_491);
        // High gain: 20 971 384 * 739 >> 8 = 60 538 101; * 990 000 >> 24 = 3 572 291.
        assert_eq!(bbr.bw_to_pacing_rate(&sk, bw, BBR_HIGH_GAIN), 3_572_291);
        // Drain gain: 20 971 384 * 88 >> 8 = 7 208 913; * 990 000 >> 24 = 425 387.
        assert_eq!(bbr.bw_to_pacing_rate(&sk, bw, BBR_DRAIN_GAIN), 425_387);
        // Without the margin, tcp_bbr_info's bytes/s: 14483 * 1448 * 10^6 >> 24 = 1 249 991.
        let no_margin = Bbr::new(BbrParams { pacing_margin_percent: 0, ..BbrParams::default() });
        assert_eq!(no_margin.bw_to_pacing_rate(&sk, bw, BBR_UNIT), 1_249_991);
        // 10 Mbit/s and 10 ms: bdp = ceil(14483 * 10000 / 2^24) = ceil(8.63) = 9 packets; at
        // gain 2, ceil(17.27) = 18.
        let b = Bbr { min_rtt_us: 10_000, ..Bbr::default() };
        assert_eq!(b.bdp(bw, BBR_UNIT), 9);
        assert_eq!(b.bdp(bw, BBR_CWND_GAIN), 18);
        // tso_segs_goal: 1 237 491 >> 10 = 1208 bytes < one MSS, so min_tso_segs = 2 (the rate
        // is above 1.2 Mbit/s); below 150 000 B/s it is 1.
        let paced = Sock { mss_cache: 1448, pacing_rate: 1_237_491, ..Sock::default() };
        assert_eq!(b.tso_segs_goal(&paced), 2);
        assert_eq!(b.tso_segs_goal(&Sock { pacing_rate: 149_999, ..paced.clone() }), 1);
        // 1 Gbit/s: 125 000 000 >> 10 = 122 070 bytes, capped at 65535 - 320 = 65215: 45 segs.
        assert_eq!(b.tso_segs_goal(&Sock { pacing_rate: 125_000_000, ..paced }), 45);
    }

    /// Hand-computed trace. init: cwnd 10, srtt 10 ms: pacing = high_gain * 10 pkts / 10 ms
    /// = rate(16777, 739) = 4 138 115 B/s. Round 0 (the initial flight) gives samples
    /// 2/10 ms .. 10/18 ms (3355 .. 9320); every later ACK samples 10 packets / 10 ms = 16777.
    /// Round starts (one per round, at its first ACK) check full bw: round 0 sets full_bw =
    /// 3355, round 1 full_bw = 16777 (>= 1.25 * 3355), rounds 2, 3, 4 see no 25 % growth
    /// (16777 < 20971): full_bw_cnt 1, 2, 3 -> the pipe is full at round 4's first ACK, DRAIN.
    #[test]
    fn startup_drain_probe_bw_on_constant_delivery_rate() {
        let mut t = Trace::new(BbrParams::default(), 1);
        assert!(t.sk.pacing_needed, "bbr_init sets SK_PACING_NEEDED");
        assert_eq!(t.sk.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        assert_eq!(t.sk.pacing_rate, 4_138_115);
        assert_eq!((t.bbr.mode(), t.bbr.pacing_gain(), t.bbr.cwnd_gain()), (BbrMode::Startup, 739, 739));

        // Round 0. cwnd grows by 2 per ACK while below target bdp(bw, 739) + 3 * tso_goal(2),
        // rounded up to even: targets 12, 16, 20, 22, 24 -> cwnd 12, 14, 16, 18, 20.
        for (i, cwnd) in [12, 14, 16, 18, 20].into_iter().enumerate() {
            t.ack(2, 0, 30);
            assert_eq!(t.sk.snd_cwnd, cwnd, "ack {i} of round 0");
        }
        assert_eq!(t.bbr.max_bw(), 9320); // 10 * 2^24 / 18000
        assert_eq!(t.bbr.rtt_cnt(), 1);
        // Rounds 1..3: bw 16777, target bdp 29 + 6 = 35 -> 36; cwnd reaches it and stays.
        for r in 1..4 {
            t.round(30);
            assert_eq!(t.bbr.mode(), BbrMode::Startup, "round {r}");
            assert_eq!(t.bbr.max_bw(), BW_10_PER_RTT);
            assert!(!t.bbr.full_bw_reached());
        }
        assert_eq!(t.sk.snd_cwnd, 36);
        // Before the pipe is full, pacing only goes up: rate(16777, 739) = 4 138 115 again.
        assert_eq!(t.sk.pacing_rate, 4_138_115);

        // Round 4, first ACK: third round without growth -> full pipe -> DRAIN, ssthresh =
        // inflight(bw, 1.0) = bdp 10 + 6 = 16. 32 packets (30 + the EDT skb) are in the network
        // at the departure of the next one: stay in DRAIN.
        t.ack(2, 0, 30);
        assert!(t.bbr.full_bw_reached());
        assert_eq!(t.bbr.rtt_cnt(), 5);
        assert_eq!((t.bbr.mode(), t.bbr.pacing_gain(), t.bbr.cwnd_gain()), (BbrMode::Drain, 88, 739));
        assert_eq!(t.sk.snd_ssthresh, 16);
        // Pacing now follows bw * drain_gain: rate(16777, 88) = 492 766.
        assert_eq!(t.sk.pacing_rate, 492_766);
        // cwnd: full bw reached, so min(cwnd + acked, target); target = bdp(bw, 739) 29 + ACK
        // aggregation 6 (round 0's max excess) + 6 = 41 -> 42.
        assert_eq!(t.bbr.extra_acked(), 6);
        assert_eq!(t.sk.snd_cwnd, 38);
        // 20 in flight is still above 16: DRAIN goes on.
        t.ack(2, 0, 20);
        assert_eq!(t.bbr.mode(), BbrMode::Drain);
        assert_eq!(t.sk.snd_cwnd, 40);
        // Down to 16 = inflight(bw, 1.0): the queue is drained, PROBE_BW.
        t.ack(2, 0, 16);
        assert_eq!(t.bbr.mode(), BbrMode::ProbeBw);
        let idx = t.bbr.cycle_idx();
        assert_ne!(idx, 1, "never starts in the 0.75 phase");
        assert_eq!(t.bbr.pacing_gain(), BBR_PACING_GAIN[idx as usize]);
        assert_eq!(t.bbr.cwnd_gain(), 512);
        assert_eq!(t.sk.pacing_rate, t.bbr.bw_to_pacing_rate(&t.sk, BW_10_PER_RTT, BBR_PACING_GAIN[idx as usize]));
        // cwnd snaps down to bdp(bw, 2) 20 + 6 + 6 = 32 (+ 2 in the probing phase 0).
        assert_eq!(t.sk.snd_cwnd, 32 + if idx == 0 { 2 } else { 0 });
        // ssthresh is left alone after DRAIN.
        assert_eq!(t.sk.snd_ssthresh, 16);
    }

    /// bbr_reset_probe_bw_mode: cycle_idx = 7 - rand(0..7), then advanced: the first phase is
    /// one of 2..7 or 0, uniformly, and never 1 (gain 0.75).
    #[test]
    fn gain_cycle_first_phase_never_the_drain_phase() {
        let mut seen = [0u32; CYCLE_LEN as usize];
        for seed in 0..2000u64 {
            let mut b = Bbr::default();
            let mut sk = Sock { rng_seed: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), ..Sock::default() };
            b.init(&mut sk);
            b.reset_probe_bw_mode(&sk);
            seen[b.cycle_idx() as usize] += 1;
        }
        assert_eq!(seen[1], 0, "{seen:?}");
        for (i, &n) in seen.iter().enumerate().filter(|&(i, _)| i != 1) {
            // 2000 / 7 ≈ 286 each.
            assert!((200..380).contains(&n), "phase {i} started {n} times: {seen:?}");
        }
        // The same seed gives the same phase (deterministic), different seeds differ.
        let first = |seed| to_probe_bw(seed).bbr.cycle_idx();
        assert_eq!(first(7), first(7));
        assert!((0..20).map(first).collect::<std::collections::HashSet<_>>().len() > 1);
    }

    /// PROBE_BW phases follow the cycle in order. With 30 packets in flight (above both
    /// inflight(bw, 1.25) = 13 + 6 -> 20 + 2 = 22 and inflight(bw, 1) = 16) every phase lasts
    /// until delivered_mstamp - cycle_mstamp > min_rtt: 6 ACKs, 12 ms.
    #[test]
    fn gain_cycle_order_and_phase_ends() {
        let mut t = to_probe_bw(3);
        let mut phases = vec![(t.bbr.cycle_idx(), t.now_us)];
        while phases.len() < 17 {
            t.ack(2, 0, 30);
            if t.bbr.cycle_idx() != phases.last().unwrap().0 {
                phases.push((t.bbr.cycle_idx(), t.now_us));
                let idx = t.bbr.cycle_idx() as usize;
                assert_eq!(t.bbr.pacing_gain(), BBR_PACING_GAIN[idx]);
                assert_eq!(t.sk.pacing_rate, t.bbr.bw_to_pacing_rate(&t.sk, BW_10_PER_RTT, BBR_PACING_GAIN[idx]));
            }
        }
        for (i, w) in phases.windows(2).enumerate() {
            assert_eq!(w[1].0, (w[0].0 + 1) % CYCLE_LEN, "{phases:?}");
            // (The first phase began 4 ms before the trace handed over.)
            if i > 0 {
                assert_eq!(w[1].1 - w[0].1, 12_000, "{phases:?}");
            }
        }

        // Run to the start of the 0.75 phase: with in-flight down to inflight(bw, 1.0) = 16 it
        // ends at its first ACK instead of after min_rtt.
        while t.bbr.cycle_idx() != 1 {
            t.ack(2, 0, 30);
        }
        t.ack(2, 0, 16);
        assert_eq!(t.bbr.cycle_idx(), 1, "the ACK that sees 16 in flight before it ends the phase");
        t.ack(2, 0, 16);
        assert_eq!(t.bbr.cycle_idx(), 2);

        // The 1.25 phase persists past min_rtt while in-flight at the next departure (19 + the
        // EDT skb's tso_segs_goal 2 = 21) is below its target 22 ...
        while t.bbr.cycle_idx() != 0 {
            t.ack(2, 0, 19);
        }
        let start = t.now_us;
        for _ in 0..10 {
            t.ack(2, 0, 19);
        }
        assert_eq!(t.bbr.cycle_idx(), 0, "still probing after {} µs", t.now_us - start);
        // ... and ends at the first loss (the buffer may not hold 1.25 BDP) ...
        t.ack(2, 1, 19);
        assert_eq!(t.bbr.cycle_idx(), 1);
        // ... or once 20 + 2 >= 22 are in the network.
        while t.bbr.cycle_idx() != 0 {
            t.ack(2, 0, 19);
        }
        for _ in 0..6 {
            t.ack(2, 0, 19);
        }
        t.ack(2, 0, 20);
        assert_eq!(t.bbr.cycle_idx(), 0, "in-flight before this ACK was still 19");
        t.ack(2, 0, 20);
        assert_eq!(t.bbr.cycle_idx(), 1);
    }

    /// min_rtt 10 ms is taken at init (jiffies 1000). Equal RTT samples do not refresh it
    /// (1b9e2a8c99: only a strictly lower one does), so the filter expires at the first ACK
    /// with jiffies > 1000 + 10 000: t = 11.002 s. PROBE_RTT caps cwnd at 4; once in-flight is
    /// down to 4 it stays for 200 ms and a round, then restores cwnd and returns to PROBE_BW.
    #[test]
    fn probe_rtt_after_10s_without_lower_min_rtt() {
        let mut t = to_probe_bw(5);
        while t.bbr.mode() != BbrMode::ProbeRtt {
            t.ack(2, 0, 30);
            assert!(t.jiffies() <= 11_002, "no PROBE_RTT by {} ms", t.jiffies());
        }
        assert_eq!(t.now_us, 11_002_000);
        let saved = t.bbr.prior_cwnd();
        assert!(saved >= 30, "bbr_save_cwnd kept the PROBE_BW cwnd ({saved})");
        assert_eq!((t.bbr.pacing_gain(), t.bbr.cwnd_gain()), (256, 256));
        assert_eq!(t.sk.snd_cwnd, 4);
        assert_ne!(t.sk.app_limited, 0, "PROBE_RTT marks the flight app-limited");
        assert_eq!(t.bbr.min_rtt_us(), 10_000);

        // In-flight drains to 4 two ACKs later: the 200 ms timer starts.
        t.ack(2, 0, 12);
        assert_eq!(t.sk.snd_cwnd, 4);
        t.ack(2, 0, 4);
        let t_low = t.now_us;
        let rounds_at_low = t.bbr.rtt_cnt();
        while t.bbr.mode() == BbrMode::ProbeRtt {
            assert_eq!(t.sk.snd_cwnd, 4, "cwnd 4 throughout PROBE_RTT");
            t.ack(2, 0, 4);
        }
        // Exit at the first ACK with jiffies > stamp + 200: 202 ms after in-flight reached 4
        // (ACKs every 2 ms), after more than one round.
        assert_eq!(t.now_us - t_low, 202_000);
        assert!(t.bbr.rtt_cnt() > rounds_at_low);
        assert_eq!(t.bbr.mode(), BbrMode::ProbeBw);
        assert!(t.sk.snd_cwnd >= saved.min(30), "cwnd restored: {}", t.sk.snd_cwnd);
        // The next PROBE_RTT is 10 s after the exit, not after the entry.
        let exit_j = t.jiffies();
        while t.bbr.mode() != BbrMode::ProbeRtt {
            t.ack(2, 0, 30);
        }
        assert_eq!(t.jiffies(), exit_j + 10_002);
    }

    /// A strictly lower RTT sample restarts the 10 s window.
    #[test]
    fn lower_min_rtt_postpones_probe_rtt() {
        let mut t = to_probe_bw(5);
        while t.now_us < 6_000_000 {
            t.ack(2, 0, 30);
        }
        t.rtt_us = 9_999;
        t.ack(2, 0, 30);
        assert_eq!(t.bbr.min_rtt_us(), 9_999);
        t.rtt_us = 10_000;
        let j = t.jiffies();
        while t.bbr.mode() != BbrMode::ProbeRtt {
            t.ack(2, 0, 30);
        }
        assert_eq!(t.jiffies(), j + 10_002);
    }

    /// Long-term sampling: the first loss (round R) starts an interval; after 4 rounds, at a
    /// loss, lost/delivered is checked against 50/256. At 2 lost per 10 delivered (20 %):
    /// 6 * 256 = 1536 >= 50 * 30 = 1500, lossy; the interval's rate is 30 packets / 30 ms =
    /// 16777. A second such interval with the same rate -> policed: lt_bw = 16777, gain 1.0.
    /// At 1 lost per 10 (10 %) the intervals are never lossy.
    #[test]
    fn lt_sampling_triggers_at_20_percent_loss() {
        for (loss_per_round, policed) in [(2u32, true), (1, false)] {
            let mut t = to_probe_bw(9);
            t.round(30);
            let mut detected_at = None;
            for r in 0..40 {
                t.ack(2, loss_per_round, 30);
                for _ in 0..4 {
                    t.ack(2, 0, 30);
                }
                if t.bbr.lt_use_bw() && detected_at.is_none() {
                    detected_at = Some(r);
                }
            }
            if policed {
                // Intervals end at rounds R+3 and R+7 (the 4th round start after each start).
                assert_eq!(detected_at, Some(7), "loss {loss_per_round}/10");
                assert_eq!(t.bbr.lt_bw(), BW_10_PER_RTT);
            } else {
                assert_eq!(detected_at, None, "loss {loss_per_round}/10");
                assert!(!t.bbr.lt_use_bw());
            }
        }
    }

    /// A policer: from round R the path delivers 6 packets per round (2, 1, 1, 1, 1) and drops
    /// 2 per round (33 %). Intervals of 3 rounds deliver 18 packets in 30 ms: lt bw = 18 * 2^24
    /// / 30 000 = 10066, twice -> lt_bw = 10066, below the max filter's 16777. Pacing and cwnd
    /// follow lt_bw at gain 1.0 for 48 rounds, then gain cycling restarts.
    #[test]
    fn lt_bw_caps_bandwidth_under_a_policer() {
        let mut t = to_probe_bw(11);
        t.round(30);
        let mut round = 0;
        while !t.bbr.lt_use_bw() {
            t.ack(2, 2, 30);
            for _ in 0..4 {
                t.ack(1, 0, 30);
            }
            round += 1;
            assert!(round < 20);
        }
        assert_eq!(round, 8); // detected at the first ACK of round R+7
        assert_eq!(t.bbr.lt_bw(), 10066);
        assert_eq!(t.bbr.max_bw(), BW_10_PER_RTT, "the max filter still holds the old rate");
        assert_eq!(t.bbr.bw(), 10066);
        assert_eq!(t.bbr.pacing_gain(), BBR_UNIT);
        // rate(10066, 256) = 860 083 B/s instead of rate(16777, gain).
        assert_eq!(t.sk.pacing_rate, 860_083);
        // cwnd target from lt_bw: bdp(10066, 2.0) = ceil(12.0) = 12 (+ aggregation + 6).
        assert!(t.sk.snd_cwnd <= 12 + u32::from(t.bbr.extra_acked()) + 6 + 2, "cwnd {}", t.sk.snd_cwnd);
        // 48 rounds later (round starts in PROBE_BW) the policer estimate is dropped.
        for r in 1..=48 {
            t.ack(2, 0, 30);
            for _ in 0..4 {
                t.ack(1, 0, 30);
            }
            assert_eq!(t.bbr.lt_use_bw(), r < 48, "round {r} after detection");
            if r < 48 {
                assert_eq!(t.bbr.pacing_gain(), BBR_UNIT);
            }
        }
        assert_eq!(t.bbr.mode(), BbrMode::ProbeBw);
    }

    /// bbr_set_cwnd_to_recover_or_restore: the first ACK in Recovery sets cwnd to in-flight +
    /// acked (packet conservation) and starts a round; conservation lasts until that round
    /// ends; leaving Recovery restores the cwnd saved by bbr_ssthresh.
    #[test]
    fn packet_conservation_in_first_round_of_recovery() {
        let mut t = to_probe_bw(13);
        for _ in 0..3 {
            t.round(30);
        }
        t.ack(2, 0, 30); // first ACK of a round
        let cwnd_before = t.sk.snd_cwnd;
        // tcp_enter_recovery -> tcp_init_cwnd_reduction -> .ssthresh: saves cwnd, keeps ssthresh.
        let ssthresh = t.sk.snd_ssthresh;
        assert_eq!(t.bbr.ssthresh(&mut t.sk), ssthresh);
        assert_eq!(t.bbr.prior_cwnd(), cwnd_before);
        t.bbr.set_state(&mut t.sk, CaState::Recovery);
        t.sk.ca_state = CaState::Recovery;

        // ACK 2 packets, 1 newly lost, 15 left in flight: cwnd = 15 + 2 = 17.
        t.ack(2, 1, 15);
        assert!(t.bbr.packet_conservation());
        assert_eq!(t.sk.snd_cwnd, 17);
        // Same round: cwnd = max(cwnd - losses, in_flight + acked).
        t.ack(2, 0, 17);
        assert_eq!(t.sk.snd_cwnd, 19); // max(17, 17 + 2)
        t.ack(2, 1, 14);
        assert_eq!(t.sk.snd_cwnd, 18); // max(19 - 1, 14 + 2)
        t.ack(2, 0, 10);
        assert_eq!(t.sk.snd_cwnd, 18); // max(18, 12)
        t.ack(2, 0, 10);
        assert!(t.bbr.packet_conservation(), "the round started at the first Recovery ACK");
        assert_eq!(t.sk.snd_cwnd, 18);
        // The ACK for data sent after recovery began ends the round: no more conservation, cwnd
        // grows by acked (slow start towards the target, at most 2 per packet acked).
        t.ack(2, 0, 10);
        assert!(!t.bbr.packet_conservation());
        assert_eq!(t.sk.snd_cwnd, 20);
        t.ack(2, 1, 10);
        assert_eq!(t.sk.snd_cwnd, 21); // 20 - 1 lost + 2 acked

        // Recovery ends: restore max(cwnd, prior_cwnd), then min(cwnd + acked, target).
        t.bbr.set_state(&mut t.sk, CaState::Open);
        t.sk.ca_state = CaState::Open;
        t.ack(2, 0, 20);
        // target = bdp(bw, 2.0) 20 + extra_acked 3 + 3 * tso_segs_goal 2 = 29 -> 30 (+ 2 in the
        // 1.25 phase).
        assert_eq!(t.bbr.extra_acked(), 3);
        let target = 30 + if t.bbr.cycle_idx() == 0 { 2 } else { 0 };
        assert_eq!(t.sk.snd_cwnd, (cwnd_before + 2).min(target));
        assert!(t.sk.snd_cwnd > 21 + 2, "restored, not grown from the recovery cwnd");
    }

    /// An RTO (set_state Loss) ends the round, forgets full_bw and counts as a loss for the
    /// long-term sampler; undo resets full-pipe detection and the sampler, keeping cwnd.
    #[test]
    fn rto_and_undo() {
        let mut t = to_probe_bw(17);
        t.bbr.set_state(&mut t.sk, CaState::Loss);
        assert!(t.bbr.lt_is_sampling());
        assert_eq!(t.bbr.full_bw, 0);
        assert!(t.bbr.round_start);
        t.sk.snd_cwnd = 7;
        assert_eq!(t.bbr.undo_cwnd(&mut t.sk), 7);
        assert!(!t.bbr.lt_is_sampling());
        assert_eq!(t.bbr.full_bw_cnt, 0);
        assert!(t.bbr.full_bw_reached(), "undo does not restart STARTUP");
    }

    /// cwnd_event(TX_START) while app-limited: pace at 1.0 * bw, and hold off PROBE_RTT until an
    /// ACK delivers data.
    #[test]
    fn idle_restart_paces_at_bw() {
        let mut t = to_probe_bw(19);
        while t.bbr.cycle_idx() != 0 {
            t.ack(2, 0, 30);
        }
        assert_eq!(t.sk.pacing_rate, 1_791_876); // rate(16777, 320)
        t.sk.app_limited = 1;
        t.bbr.cwnd_event(&mut t.sk, CaEvent::TxStart);
        assert_eq!(t.sk.pacing_rate, 1_433_501); // rate(16777, 256)
        assert!(t.bbr.idle_restart);
        // Without app_limited, TX_START changes nothing.
        let mut u = to_probe_bw(19);
        let before = u.sk.pacing_rate;
        u.bbr.cwnd_event(&mut u.sk, CaEvent::TxStart);
        assert_eq!(u.sk.pacing_rate, before);
        assert!(!u.bbr.idle_restart);
    }

    /// get_info: struct tcp_bbr_info.
    #[test]
    fn get_info_reports_tcp_bbr_info() {
        let t = to_probe_bw(23);
        let CcInfo::Bbr { bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain } = t.bbr.get_info(&t.sk) else {
            panic!("not BBR info");
        };
        // 16777 * 1448 * 10^6 >> 24 = 1 447 981 B/s.
        assert_eq!((bw_lo, bw_hi), (1_447_981, 0));
        assert_eq!(min_rtt, 10_000);
        assert_eq!(pacing_gain, BBR_PACING_GAIN[t.bbr.cycle_idx() as usize]);
        assert_eq!(cwnd_gain, 512);
    }
}
