//! Tail loss probes (tcp_output.c `tcp_schedule_loss_probe`, `tcp_send_loss_probe`;
//! tcp_input.c `tcp_process_tlp_ack`; RFC 8985 section 7): when the tail of a flight is lost no
//! ACK arrives to trigger recovery, so about two RTTs after the last transmission the sender
//! sends one probe (new data, or the last segment again) to elicit an ACK before the RTO.

use crate::endpoint::*;
use crate::input::{FLAG_DATA_SACKED, FLAG_NOT_DUP, FLAG_SND_UNA_ADVANCED};
use crate::segment::Segment;
use crate::seq::SeqNum;
use ccsim_cc::CaState;
use ccsim_engine::SimTime;

/// The tail loss probe outstanding (`struct tcp_sock`: `tlp_high_seq`, `tlp_retrans`).
#[derive(Clone, Debug)]
pub(crate) struct TlpState {
    /// `tlp_high_seq`: snd_nxt when the probe went out; None while no probe is outstanding.
    pub high_seq: Option<SeqNum>,
    /// `tlp_retrans`: the probe retransmitted the last segment (rather than sending new data).
    pub retrans: bool,
}

/// `TCP_TIMEOUT_MIN_US`: 2 ms.
const TIMEOUT_MIN_US: u64 = 2_000;

impl Endpoint {
    /// `tcp_probe0_base`: max(RTO, rto_min).
    pub(crate) fn probe0_base(&self) -> SimTime {
        self.icsk.rto.max(self.cfg.rto_min)
    }

    /// `tcp_probe0_when`: the base, backed off, at most rto_max.
    fn probe0_when(&self) -> SimTime {
        let mut t = self.probe0_base();
        for _ in 0..self.icsk.backoff.min(31) {
            t = SimTime(t.ns().saturating_mul(2));
        }
        t.min(self.cfg.rto_max)
    }

    /// The next new segment fits in the peer's window (`tcp_snd_wnd_test` for the send head).
    fn head_fits_window(&self) -> bool {
        let len = self.unsent.min(self.sk.mss_cache as u64) as u32;
        !(self.snd_nxt() + len).after(self.snd_una() + self.snd_wnd)
    }

    /// `tcp_ack_probe`: an ACK while nothing is in flight; stop probing once the window opened.
    pub(crate) fn ack_probe(&mut self) {
        if self.head_fits_window() {
            self.icsk.backoff = 0;
            self.icsk.probes_tstamp = None;
            if matches!(self.xmit_timer, Some((_, XmitTimer::Probe0))) {
                self.xmit_timer = None;
            }
        } else {
            let when = self.probe0_when();
            self.xmit_timer = Some((self.now + when, XmitTimer::Probe0));
        }
    }

    /// `tcp_probe_timer` / `tcp_send_probe0`: probe a zero window with a segment one byte below
    /// snd_una (`tcp_xmit_probe_skb`), or send new data if the window opened
    /// (`tcp_write_wakeup`); back off exponentially.
    pub(crate) fn probe_timer(&mut self, out: &mut Vec<Segment>) {
        if self.sk.packets_out > 0 || self.unsent == 0 {
            self.icsk.probes_out = 0;
            self.icsk.probes_tstamp = None;
            return;
        }
        // tcp_probe_timer: a peer that answers probes keeps the connection open (RFC 1122
        // 4.2.2.17); one that answers none is given up after tcp_retries2 probes, or once
        // TCP_USER_TIMEOUT has passed since the first probe (icsk_probes_tstamp).
        let now = self.now.ns();
        match self.icsk.probes_tstamp {
            None => self.icsk.probes_tstamp = Some(now),
            Some(t0) => {
                let user_timeout = self.cfg.jiffies(self.cfg.usecs_to_jiffies(self.user_timeout_ms as u64 * 1000));
                if self.user_timeout_ms > 0 && self.jiffies_between(t0, now) >= user_timeout.ns() {
                    self.write_err();
                    return;
                }
            }
        }
        if self.icsk.probes_out >= crate::timer::TCP_RETRIES2 {
            self.write_err();
            return;
        }
        // tcp_send_probe0 → tcp_write_wakeup.
        let drops_before = self.stats.local_drops;
        if self.snd_nxt().before(self.snd_una() + self.snd_wnd) {
            self.write_xmit(1, out);
        } else {
            self.send_probe_skb(out);
        }
        let local_congestion = self.stats.local_drops > drops_before;
        if self.sk.packets_out > 0 || self.unsent == 0 {
            self.icsk.backoff = 0;
            self.icsk.probes_out = 0;
            self.icsk.probes_tstamp = None;
            return;
        }
        self.icsk.probes_out += 1;
        let mut when = if local_congestion {
            // The probe could not leave the host: retry at TCP_RESOURCE_PROBE_INTERVAL,
            // without backing off.
            SimTime::from_ms(500)
        } else {
            if self.icsk.backoff < crate::timer::TCP_RETRIES2 {
                self.icsk.backoff += 1;
            }
            self.probe0_when()
        };
        // tcp_clamp_probe0_to_user_timeout: at most what is left of the user timeout, at least
        // TCP_TIMEOUT_MIN.
        if let (true, Some(t0)) = (self.user_timeout_ms > 0, self.icsk.probes_tstamp) {
            let user_timeout = self.cfg.jiffies(self.cfg.usecs_to_jiffies(self.user_timeout_ms as u64 * 1000)).ns();
            let remaining = user_timeout.saturating_sub(self.jiffies_between(t0, now)).max(self.cfg.jiffies(2).ns());
            when = when.min(SimTime(remaining));
        }
        self.xmit_timer = Some((self.now + when, XmitTimer::Probe0));
    }

    /// The time from `t0` to `t1` (ns) as the kernel sees it: whole jiffies between the two.
    fn jiffies_between(&self, t0: u64, t1: u64) -> u64 {
        let j = self.cfg.jiffy_ns();
        (t1 / j).saturating_sub(t0 / j) * j
    }

    /// `tcp_schedule_loss_probe`: arm the probe timer instead of the RTO where allowed.
    pub(crate) fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        if !self.cfg.tlp
            || self.sk.packets_out == 0
            || !self.sack_ok
            || !matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let mut timeout_us = if self.sk.srtt_us > 0 {
            // Two RTTs, plus room for a delayed ACK when a single packet is out.
            let extra = if self.sk.packets_out == 1 { self.cfg.rto_min.ns() / 1000 } else { TIMEOUT_MIN_US };
            (self.sk.srtt_us >> 2) as u64 + extra
        } else {
            self.cfg.rto_init.ns() / 1000
        };
        // Never later than the RTO would fire.
        let rto_delta_us: i64 = if advancing_rto {
            (self.icsk.rto.ns() / 1000) as i64
        } else {
            let head_tx = self.rtx.front().map_or(self.now.ns(), |s| s.tx_ns);
            let rto_at = head_tx + self.icsk.rto.ns();
            (rto_at as i64 - self.now.ns() as i64) / 1000
        };
        if rto_delta_us > 0 {
            timeout_us = timeout_us.min(rto_delta_us as u64);
        }
        // The timer counts in jiffies: usecs_to_jiffies rounds up.
        let at = self.now + self.cfg.jiffies(self.cfg.usecs_to_jiffies(timeout_us));
        self.xmit_timer = Some((at, XmitTimer::LossProbe));
        true
    }

    /// `tcp_send_loss_probe`.
    pub(crate) fn send_loss_probe(&mut self, out: &mut Vec<Segment>) {
        // The slot counts as holding the probe timer while it is handled (icsk_pending).
        self.xmit_timer = Some((self.now, XmitTimer::LossProbe));
        let probe_sent = 'probe: {
            if self.tlp.high_seq.is_some() {
                break 'probe false; // at most one probe outstanding
            }
            self.tlp.retrans = false;
            // New data if the window allows.
            if self.unsent > 0 {
                let len = self.unsent.min(self.sk.mss_cache as u64) as u32;
                let wnd_end = self.snd_una() + self.snd_wnd;
                if !(self.snd_nxt() + len).after(wnd_end) {
                    let before_out = self.sk.packets_out;
                    self.write_xmit(2, out);
                    break 'probe self.sk.packets_out > before_out;
                }
            }
            // Otherwise retransmit the last segment.
            let Some(last) = self.rtx.len().checked_sub(1) else {
                break 'probe false;
            };
            self.retransmit_skb_once(last, out);
            self.tlp.retrans = true;
            true
        };
        if probe_sent {
            self.tlp.high_seq = Some(self.snd_nxt());
            self.stats.loss_probes += 1;
            self.xmit_timer = None; // rearm from now
        }
        self.rearm_rto();
    }

    /// `tcp_process_tlp_ack`: did the probe repair a loss? Then cwnd is reduced once (CWR).
    pub(crate) fn process_tlp_ack(&mut self, ack: SeqNum, flag: u32, dsack_tlp: bool) {
        let Some(high) = self.tlp.high_seq else { return };
        if ack.before(high) {
            return;
        }
        if !self.tlp.retrans || dsack_tlp {
            // The probe was new data, or both original and probe arrived: no loss.
            self.tlp.high_seq = None;
        } else if ack.after(high) {
            // The probe repaired a loss: reduce cwnd as for a congestion event.
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED) == 0 {
            self.tlp.high_seq = None; // a pure duplicate ACK: original and probe arrived
        }
    }
}
