//! Timers (tcp_timer.c): retransmission, RACK reordering, delayed ACK, pacing.
//! Each is one deadline slot; re-arming overwrites it. The caller asks for the earliest deadline
//! and calls [`Endpoint::on_timer`] when it is reached.

use crate::endpoint::*;
use crate::segment::Segment;
use ccsim_cc::{CaEvent, CaState, CongestionOps};
use ccsim_engine::SimTime;

/// The retransmission timeout (`struct inet_connection_sock`: `icsk_rto`, `icsk_backoff`,
/// `icsk_retransmits`), set by `tcp_set_rto`, backed off by `tcp_retransmit_timer` and the
/// zero-window probe timer.
#[derive(Clone, Debug)]
pub(crate) struct RtoState {
    /// `icsk_rto`: the current RTO, before backoff.
    pub rto: SimTime,
    /// `icsk_backoff`: the RTO doubles this many times.
    pub backoff: u32,
    /// `icsk_retransmits`: RTO retransmissions of the current stall.
    pub retransmits: u32,
    /// `icsk_probes_out`: zero-window probes sent without an ACK in between.
    pub probes_out: u32,
    /// `icsk_probes_tstamp`: when the first unanswered probe of this episode went out (ns).
    pub probes_tstamp: Option<u64>,
}

impl Endpoint {
    /// The earliest pending timer, if any.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let mut t: Option<SimTime> = None;
        let mut take = |d: Option<SimTime>| {
            if let Some(d) = d {
                t = Some(t.map_or(d, |x| x.min(d)));
            }
        };
        take(self.xmit_timer.map(|x| x.0));
        take(self.pacing_deadline);
        take(self.comp_sack.deadline);
        if self.ack.pending & ACK_TIMER != 0 {
            take(Some(self.ack.timeout));
        }
        t
    }

    /// `tcp_rearm_rto`: restart the retransmission timer, or stop it when nothing is in flight.
    /// If the slot held the RACK reordering timer, the RTO is counted from the head's send time.
    pub(crate) fn rearm_rto(&mut self) {
        if self.sk.packets_out == 0 {
            self.xmit_timer = None;
            return;
        }
        let rto = self.backed_off_rto();
        if matches!(self.xmit_timer, Some((_, XmitTimer::ReoTimeout | XmitTimer::LossProbe))) {
            // tcp_rto_delta_us, at least 1 µs, in whole jiffies.
            let head_tx = self.rtx.front().map_or(self.now.ns(), |s| s.tx_ns);
            let delta_us = ((head_tx + rto.ns()).saturating_sub(self.now.ns()) / 1000).max(1);
            let at = self.now + self.cfg.jiffies(self.cfg.usecs_to_jiffies(delta_us));
            self.xmit_timer = Some((at, XmitTimer::Retrans));
        } else {
            self.xmit_timer = Some((self.now + rto, XmitTimer::Retrans));
        }
    }

    /// `tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)`.
    pub(crate) fn reset_rto_timer(&mut self) {
        let rto = self.backed_off_rto();
        self.xmit_timer = Some((self.now + rto, XmitTimer::Retrans));
    }

    fn backed_off_rto(&self) -> SimTime {
        let mut r = self.icsk.rto;
        for _ in 0..self.icsk.backoff.min(31) {
            r = SimTime(r.ns().saturating_mul(2)).min(self.cfg.rto_max);
        }
        r
    }

    /// Run every timer whose deadline is at or before `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.set_now(now);
        if self.pacing_deadline.is_some_and(|d| d <= now) {
            self.pacing_deadline = None;
            // tcp_pace_kick → tcp_tsq_write: tcp_write_xmit runs with or without a send head.
            self.xmit_retransmit_queue(out);
            self.write_xmit(0, out);
        }
        if self.comp_sack.deadline.is_some_and(|d| d <= now) {
            self.compressed_ack_kick(out);
        }
        if self.ack.pending & ACK_TIMER != 0 && self.ack.timeout <= now {
            self.delack_timer(out);
        }
        if let Some((t, kind)) = self.xmit_timer {
            if t <= now {
                self.xmit_timer = None;
                match kind {
                    XmitTimer::Retrans => self.retransmit_timer(out),
                    XmitTimer::ReoTimeout => self.rack_reo_timeout(out),
                    XmitTimer::LossProbe => self.send_loss_probe(out),
                    XmitTimer::Probe0 => self.probe_timer(out),
                }
            }
        }
    }

    /// `tcp_delack_timer_handler`.
    fn delack_timer(&mut self, out: &mut Vec<Segment>) {
        self.ack.pending &= !ACK_TIMER;
        self.sk.ack_timer_pending = false;
        if self.ack.pending & ACK_SCHED != 0 {
            if self.ack.pingpong == 0 {
                // Delayed ACK missed: inflate ato.
                self.ack.ato = (self.ack.ato << 1).min(self.icsk.rto.ns());
            } else {
                // Delayed ACK missed in interactive mode: leave pingpong mode, deflate ato.
                self.ack.pingpong = 0;
                self.ack.ato = self.cfg.delack_min.ns();
            }
            self.send_ack(out);
        }
    }

    /// `tcp_retransmit_timer`.
    fn retransmit_timer(&mut self, out: &mut Vec<Segment>) {
        if self.sk.packets_out == 0 {
            return;
        }
        if self.write_timeout() {
            return;
        }
        match self.state {
            TcpState::SynSent | TcpState::SynRecv => {
                // SYN / SYN-ACK retransmission with exponential backoff.
                self.stats.rto_count += 1;
                self.stats.other_timeouts += 1;
                if let Some(s) = self.rtx.front_mut() {
                    s.sacked |= EVER_RETRANS;
                }
                self.stats.total_retrans += 1;
                let seq = self.iss;
                self.transmit_syn(seq, out);
                self.icsk.backoff += 1;
                self.reset_rto_timer();
                return;
            }
            _ => {}
        }
        if self.icsk.retransmits == 0
            && matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
            && self.sk.sacked_out == 0
        {
            self.stats.other_timeouts += 1;
        }
        self.enter_loss();
        self.stats.rto_count += 1;
        self.icsk.retransmits += 1;
        if !self.rtx.is_empty() {
            self.retransmit_skb(0, out);
        }
        self.icsk.backoff += 1;
        self.reset_rto_timer();
        // tcp_clamp_rto_to_user_timeout: never wait past the user timeout.
        if self.user_timeout_ms > 0 {
            let elapsed = self.ts_val().wrapping_sub(self.undo.retrans_stamp) as i64;
            let remaining = self.user_timeout_ms as i64 - elapsed;
            let cap = if remaining <= 0 {
                self.cfg.jiffies(1)
            } else {
                self.cfg.jiffies(self.cfg.usecs_to_jiffies(remaining as u64 * 1000))
            };
            if let Some((at, kind)) = self.xmit_timer {
                self.xmit_timer = Some((at.min(self.now + cap), kind));
            }
        }
    }

    /// `tcp_write_timeout`: has the connection retransmitted for too long? A SYN is given up
    /// after `tcp_syn_retries` retransmissions (a SYN-ACK after `tcp_synack_retries`), data after
    /// `tcp_retries2` as `retransmits_timed_out` models it: the time the backoff from
    /// `TCP_RTO_MIN` would take to reach that many, counted from the first retransmission
    /// (`retrans_stamp`), 924.6 s for 15. Then `tcp_write_err`.
    fn write_timeout(&mut self) -> bool {
        let expired = match self.state {
            TcpState::SynSent => self.icsk.backoff >= TCP_SYN_RETRIES,
            TcpState::SynRecv => self.icsk.backoff >= TCP_SYNACK_RETRIES,
            _ => {
                // retransmits_timed_out(sk, tcp_retries2, icsk_user_timeout)
                let timeout =
                    if self.user_timeout_ms > 0 { self.user_timeout_ms as u64 } else { model_timeout_ms(TCP_RETRIES2) };
                self.icsk.retransmits > 0
                    && self.ts_val().wrapping_sub(self.undo.retrans_stamp) as i32 - timeout as i32 >= 0
            }
        };
        if expired {
            self.write_err();
        }
        expired
    }

    /// `tcp_write_err` → `tcp_done`: the socket reports ETIMEDOUT and closes; what it had to
    /// send is dropped and its timers stop.
    pub(crate) fn write_err(&mut self) {
        self.stats.write_timeouts += 1;
        self.sk_err = Some("ETIMEDOUT");
        self.done();
    }

    /// `tcp_done`: the connection is over (CLOSE): its queues are dropped, its timers stop, and
    /// the socket leaves the connection tables.
    pub(crate) fn done(&mut self) {
        self.state = TcpState::Closed;
        self.unhashed = true;
        self.sk_shutdown = RCV_SHUTDOWN | SEND_SHUTDOWN;
        self.rtx.clear();
        self.tsorted.clear();
        self.unsent = 0;
        self.sk.packets_out = 0;
        self.sk.sacked_out = 0;
        self.sk.lost_out = 0;
        self.sk.retrans_out = 0;
        self.xmit_timer = None;
        self.pacing_deadline = None;
        self.ack.pending = 0;
        self.comp_sack.deadline = None;
    }

    /// `tcp_enter_loss`: RTO recovery. Everything not SACKed is marked lost, cwnd becomes one
    /// packet more than what is still in flight.
    pub(crate) fn enter_loss(&mut self) {
        let new_recovery = self.sk.ca_state < CaState::Recovery;
        self.timeout_mark_lost();
        if self.sk.ca_state <= CaState::Disorder
            || !self.high_seq.after(self.snd_una())
            || (self.sk.ca_state == CaState::Loss && self.icsk.retransmits == 0)
        {
            self.undo.prior_ssthresh = self.current_ssthresh();
            self.sk.prior_cwnd = self.sk.snd_cwnd;
            self.sk.snd_ssthresh = self.cc.ssthresh(&mut self.sk);
            self.ca_event(CaEvent::Loss);
            self.init_undo();
        }
        self.sk.snd_cwnd = self.packets_in_flight() + 1;
        self.sk.snd_cwnd_cnt = 0;
        self.snd_cwnd_stamp = self.now.ns();
        if self.sk.ca_state <= CaState::Disorder && self.sk.sacked_out >= self.cfg.reordering {
            self.reordering = self.reordering.min(self.cfg.reordering);
        }
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.snd_nxt();
        self.tlp.high_seq = None;
        self.ecn_queue_cwr();
        let _ = new_recovery; // F-RTO (RFC 5682) is not modelled: tcp_frto behaves as 0.
    }

    /// `tcp_timeout_mark_lost`.
    fn timeout_mark_lost(&mut self) {
        let reneg = self.rtx.front().is_some_and(|s| s.sacked & SACKED_ACKED != 0);
        if reneg {
            self.sk.sacked_out = 0;
        }
        let now_us = self.now_us();
        for i in 0..self.rtx.len() {
            if reneg {
                self.rtx[i].sacked &= !SACKED_ACKED;
            } else if self.cfg.rack && i > 0 && self.rack_skb_timeout(i, now_us, 0) > 0 {
                continue; // recently sent: not lost yet
            }
            self.mark_skb_lost(i);
        }
    }

    /// `tcp_ecn_queue_cwr`: the next new data segment carries CWR.
    pub(crate) fn ecn_queue_cwr(&mut self) {
        if self.sk.ecn_ok {
            self.ecn_queue_cwr = true;
        }
    }
}

/// `net.ipv4.tcp_retries2`, `tcp_syn_retries`, `tcp_synack_retries`: Linux's defaults.
pub(crate) const TCP_RETRIES2: u32 = 15;
pub(crate) const TCP_SYN_RETRIES: u32 = 6;
pub(crate) const TCP_SYNACK_RETRIES: u32 = 5;

/// `tcp_model_timeout(sk, boundary, TCP_RTO_MIN)` in ms: the time `boundary` retransmissions
/// take when the RTO starts at `TCP_RTO_MIN` (200 ms) and doubles up to `TCP_RTO_MAX` (120 s).
pub(crate) fn model_timeout_ms(boundary: u32) -> u64 {
    const RTO_BASE_MS: u64 = 200;
    const RTO_MAX_MS: u64 = 120_000;
    let linear_backoff_thresh = (RTO_MAX_MS / RTO_BASE_MS).ilog2();
    if boundary <= linear_backoff_thresh {
        ((2u64 << boundary) - 1) * RTO_BASE_MS
    } else {
        ((2u64 << linear_backoff_thresh) - 1) * RTO_BASE_MS + (boundary - linear_backoff_thresh) as u64 * RTO_MAX_MS
    }
}

#[cfg(test)]
mod give_up_tests {
    use super::*;

    #[test]
    fn the_model_timeout_is_linux_s() {
        // ilog2(120 s / 200 ms) = 9: (2^10 - 1) x 200 ms + 6 x 120 s.
        assert_eq!(model_timeout_ms(15), 1023 * 200 + 6 * 120_000);
        assert_eq!(model_timeout_ms(15), 924_600);
        // tcp_retries1 = 3: 15 x 200 ms.
        assert_eq!(model_timeout_ms(3), 3_000);
    }
}
