//! RTT estimation and RTO (`tcp_rtt_estimator`, `__tcp_set_rto`, `tcp_update_rtt_min`).

use crate::endpoint::Endpoint;
use crate::seq::SeqNum;
use ccsim_cc::MinMax;

/// The RTT estimator's state (`struct tcp_sock`: `mdev_us`, `mdev_max_us`, `rttvar_us`,
/// `rtt_seq`, `rtt_min`), which `tcp_rtt_estimator` and `tcp_update_rtt_min` keep. The
/// smoothed RTT itself (`srtt_us`) lives in the CC's view, `Sock`.
#[derive(Clone, Debug)]
pub(crate) struct RttEstimator {
    /// Mean deviation, µs << 2 (`mdev_us`).
    pub mdev_us: u32,
    /// The largest `mdev_us` in the last RTT (`mdev_max_us`).
    pub mdev_max_us: u32,
    /// Smoothed `mdev_max`, µs << 2 (`rttvar_us`), what the RTO adds to srtt.
    pub rttvar_us: u32,
    /// `snd_nxt` when `rttvar` was last updated (`rtt_seq`): one update per RTT.
    pub rtt_seq: SeqNum,
    /// Windowed min-RTT filter (`rtt_min`, `tcp_min_rtt_wlen`).
    pub min_rtt: MinMax,
}

/// `tcp_min_rtt_wlen`: 300 s window for the min-RTT filter.
const MIN_RTT_WLEN_US: u32 = 300_000_000;

impl Endpoint {
    /// `tcp_rtt_estimator` (Van Jacobson's SIGCOMM '88 estimator with Linux's mdev_max / rttvar).
    pub(crate) fn rtt_estimator(&mut self, mrtt_us: i64) {
        let rto_min_us = (self.cfg.rto_min.ns() / 1000) as i64;
        let mut m = mrtt_us.max(1);
        let mut srtt = self.sk.srtt_us as i64;
        if srtt != 0 {
            m -= srtt >> 3; // m is now the error in the estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            if m < 0 {
                m = -m;
                m -= (self.rtt.mdev_us >> 2) as i64;
                // Do not let a falling RTT inflate mdev (the "Eifel" fix in tcp_rtt_estimator).
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (self.rtt.mdev_us >> 2) as i64;
            }
            self.rtt.mdev_us = (self.rtt.mdev_us as i64 + m).max(0) as u32; // mdev = 3/4 mdev + 1/4 new
            if self.rtt.mdev_us > self.rtt.mdev_max_us {
                self.rtt.mdev_max_us = self.rtt.mdev_us;
                if self.rtt.mdev_max_us > self.rtt.rttvar_us {
                    self.rtt.rttvar_us = self.rtt.mdev_max_us;
                }
            }
            if self.snd_una().after(self.rtt.rtt_seq) {
                if self.rtt.mdev_max_us < self.rtt.rttvar_us {
                    self.rtt.rttvar_us -= (self.rtt.rttvar_us - self.rtt.mdev_max_us) >> 2;
                }
                self.rtt.rtt_seq = self.snd_nxt();
                self.rtt.mdev_max_us = rto_min_us as u32;
            }
        } else {
            srtt = m << 3;
            self.rtt.mdev_us = (m << 1) as u32;
            self.rtt.rttvar_us = self.rtt.mdev_us.max(rto_min_us as u32);
            self.rtt.mdev_max_us = self.rtt.rttvar_us;
            self.rtt.rtt_seq = self.snd_nxt();
        }
        self.sk.srtt_us = srtt.max(1) as u32;
    }

    /// `tcp_set_rto`: srtt + rttvar (rttvar >= rto_min), bounded by rto_max, in whole jiffies
    /// (`__tcp_set_rto` → `usecs_to_jiffies`).
    pub(crate) fn set_rto(&mut self) {
        let us = (self.sk.srtt_us >> 3) as u64 + self.rtt.rttvar_us as u64;
        self.icsk.rto = self.cfg.jiffies(self.cfg.usecs_to_jiffies(us)).min(self.cfg.rto_max);
    }

    /// `tcp_update_rtt_min`.
    pub(crate) fn update_rtt_min(&mut self, rtt_us: i64) {
        let t = (self.now.ns() / 1000) as u32;
        let r = rtt_us.clamp(1, u32::MAX as i64) as u32;
        let v = if self.sk.min_rtt_us == u32::MAX {
            self.rtt.min_rtt.reset(t, r);
            r
        } else {
            self.rtt.min_rtt.running_min(MIN_RTT_WLEN_US, t, r)
        };
        self.sk.min_rtt_us = v;
    }

    /// `tcp_ack_update_rtt`: feed one RTT sample (sequence-based, or from the timestamp echo).
    /// Returns the RTT for the rate sample (`rs->rtt_us`): `ca_rtt_us`, or the timestamp echo's
    /// RTT when that replaced a missing sequence sample.
    pub(crate) fn ack_update_rtt(&mut self, seq_rtt_us: i64, ca_rtt_us: i64, acked: bool) -> i64 {
        let (mut seq_rtt, mut ca_rtt) = (seq_rtt_us, ca_rtt_us);
        // RFC 7323: with no sequence sample, use the echoed timestamp on an ACK of new data
        // (tcp_rtt_tsopt_us: millisecond clock, a 0 ms delta counts as 1 ms).
        if seq_rtt < 0 && acked {
            if let Some(ecr) = self.rcv_tsecr.filter(|&e| e != 0) {
                let delta_ms = self.ts_val().wrapping_sub(ecr);
                if delta_ms < i32::MAX as u32 / 1000 {
                    seq_rtt = delta_ms.max(1) as i64 * 1000;
                    ca_rtt = seq_rtt;
                }
            }
        }
        if seq_rtt < 0 {
            return ca_rtt;
        }
        // tcp_update_rtt_min takes the sample of the most recently sent packet.
        self.update_rtt_min(if ca_rtt >= 0 { ca_rtt } else { seq_rtt });
        self.rtt_estimator(seq_rtt);
        self.set_rto();
        // RFC 6298 5.7: a valid RTT sample resets the backoff.
        self.icsk.backoff = 0;
        ca_rtt
    }
}
