//! RACK loss detection (tcp_recovery.c, RFC 8985): a packet is lost once a packet sent after it
//! has been delivered and more than one RTT plus a reordering window has passed since it was sent.

use crate::endpoint::*;
use crate::segment::Segment;
use crate::seq::SeqNum;
use ccsim_cc::CaState;

/// RACK's state (`tp->rack`, `struct tcp_rack`).
#[derive(Clone, Debug)]
pub(crate) struct RackState {
    /// Send time of the most recently sent packet delivered (`rack.mstamp`), ns.
    pub mstamp: u64,
    /// RTT of that packet (`rack.rtt_us`).
    pub rtt_us: u32,
    /// Its end sequence (`rack.end_seq`), the tie-break between equal send times.
    pub end_seq: SeqNum,
    /// A delivery moved RACK since the last detection (`rack.advanced`).
    pub advanced: bool,
    /// Reordering was seen on this connection (`rack.reord`).
    pub reord: bool,
    /// The adaptive reordering window (`tcp_rack_update_reo_wnd`): the window in steps of
    /// min_rtt/4, a D-SACK pending to widen it, `delivered` when it last widened, and how many
    /// more recoveries it persists (`reo_wnd_steps`, `dsack_seen`, `last_delivered`,
    /// `reo_wnd_persist`).
    pub reo_wnd_steps: u8,
    pub dsack_seen: bool,
    pub last_delivered: u32,
    pub reo_wnd_persist: u8,
}

/// `TCP_TIMEOUT_MIN_US`: 2 ms, added to the reordering timeout before it is rounded to jiffies.
const TIMEOUT_MIN_US: u64 = 2_000;
/// `TCP_RACK_RECOVERY_THRESH`: recoveries a widened reordering window persists.
pub(crate) const RACK_RECOVERY_THRESH: u8 = 16;

impl Endpoint {
    /// `tcp_rack_sent_after`.
    fn rack_sent_after(t1: u64, t2: u64, seq1: SeqNum, seq2: SeqNum) -> bool {
        t1 > t2 || (t1 == t2 && seq1.after(seq2))
    }

    /// `tcp_rack_advance`: a delivered packet moves the RACK clock forward.
    pub(crate) fn rack_advance(&mut self, sacked: u8, end_seq: SeqNum, xmit_ns: u64) {
        let rtt_us = (self.now.ns().saturating_sub(xmit_ns) / 1000) as u32;
        // A retransmitted packet whose RTT is below min_rtt was probably delivered by an earlier
        // transmission: the sample is ambiguous.
        if rtt_us < self.sk.min_rtt_us && sacked & SACKED_RETRANS != 0 {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt_us = rtt_us;
        if Self::rack_sent_after(xmit_ns, self.rack.mstamp, end_seq, self.rack.end_seq) {
            self.rack.mstamp = xmit_ns;
            self.rack.end_seq = end_seq;
        }
    }

    /// `tcp_rack_reo_wnd`.
    fn rack_reo_wnd(&self) -> u64 {
        if !self.rack.reord {
            if self.sk.ca_state >= CaState::Recovery {
                return 0;
            }
            if self.sk.sacked_out >= self.reordering {
                return 0;
            }
        }
        let min_rtt = if self.sk.min_rtt_us == u32::MAX { 0 } else { self.sk.min_rtt_us };
        ((min_rtt >> 2) as u64 * self.rack.reo_wnd_steps as u64).min((self.sk.srtt_us >> 3) as u64)
    }

    /// `tcp_rack_update_reo_wnd`: widen the reordering window by min_rtt/4 (at most once per
    /// round trip) after a D-SACK that reordering may have caused, keep it for 16 recoveries,
    /// then fall back to one step.
    pub(crate) fn rack_update_reo_wnd(&mut self, prior_delivered: u32) {
        // No sample on this ACK (prior_delivered 0).
        if prior_delivered == 0 {
            return;
        }
        // A D-SACK for data sent before the last widening is not new evidence.
        if ccsim_cc::before(prior_delivered, self.rack.last_delivered) {
            self.rack.dsack_seen = false;
        }
        if self.rack.dsack_seen {
            self.rack.reo_wnd_steps = self.rack.reo_wnd_steps.saturating_add(1);
            self.rack.dsack_seen = false;
            self.rack.last_delivered = self.sk.delivered;
            self.rack.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.rack.reo_wnd_persist == 0 {
            self.rack.reo_wnd_steps = 1;
        }
    }

    /// `tcp_rack_skb_timeout`: microseconds until the skb at `idx` counts as lost (<= 0: lost).
    pub(crate) fn rack_skb_timeout(&self, idx: usize, now_us: u64, reo_wnd: u64) -> i64 {
        let tx_us = self.rtx[idx].tx_ns / 1000;
        self.rack.rtt_us as i64 + reo_wnd as i64 - (now_us as i64 - tx_us as i64)
    }

    /// `tcp_mark_skb_lost`.
    pub(crate) fn mark_skb_lost(&mut self, idx: usize) {
        let seq = self.rtx[idx].seq;
        if seq.before(self.rtx_hint) {
            self.rtx_hint = seq;
        }
        let s = &mut self.rtx[idx];
        if s.sacked & SACKED_ACKED != 0 {
            return;
        }
        if s.sacked & LOST != 0 {
            if s.sacked & SACKED_RETRANS != 0 {
                // A retransmission lost again.
                s.sacked &= !SACKED_RETRANS;
                self.sk.retrans_out -= 1;
                self.sk.lost += 1;
            }
        } else {
            s.sacked |= LOST;
            self.sk.lost_out += 1;
            self.sk.lost += 1;
        }
    }

    /// `tcp_rack_detect_loss`: returns the longest remaining wait (µs) of packets not yet lost.
    fn rack_detect_loss(&mut self) -> u64 {
        let reo_wnd = self.rack_reo_wnd();
        let now_us = self.now_us();
        let mut reo_timeout = 0u64;
        // Walk the in-flight packets in send order; stop at the first one sent after RACK's.
        // Stale entries walked over are dropped (Linux unlinks them eagerly), so each is
        // visited once; kept entries are compacted towards the front.
        let n = self.tsorted.len();
        let (mut w, mut k) = (0, 0);
        while k < n {
            let (seq, tx) = self.tsorted[k];
            // Cumulatively acknowledged: gone from the retransmit queue.
            if seq.before(self.snd_una()) {
                k += 1;
                continue;
            }
            let live = self.rtx_index(seq).filter(|&i| {
                let s = &self.rtx[i];
                // Stale: acked, SACKed, sent again since, or lost and not yet retransmitted.
                s.tx_ns == tx
                    && s.sacked & SACKED_ACKED == 0
                    && !(s.sacked & LOST != 0 && s.sacked & SACKED_RETRANS == 0)
            });
            let Some(i) = live else {
                k += 1;
                continue;
            };
            let s = self.rtx[i];
            if !Self::rack_sent_after(self.rack.mstamp, s.tx_ns, self.rack.end_seq, s.end_seq) {
                break;
            }
            let remaining = self.rack_skb_timeout(i, now_us, reo_wnd);
            if remaining <= 0 {
                // Lost and waiting for a retransmission: off the time-sorted list.
                self.mark_skb_lost(i);
            } else {
                reo_timeout = reo_timeout.max(remaining as u64);
                self.tsorted[w] = self.tsorted[k];
                w += 1;
            }
            k += 1;
        }
        self.tsorted.drain(w..k);
        reo_timeout
    }

    /// `tcp_rack_mark_lost`: run detection if RACK advanced; arm the reordering timer if needed.
    /// The timer waits `usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US)` (Linux 6.6+, 1c2709cfff1d
    /// "tcp: fix excessive TLP and RACK timeouts from HZ rounding"), not
    /// `usecs_to_jiffies(timeout) + TCP_TIMEOUT_MIN` as before: at HZ 250 the old form added 8 ms.
    pub(crate) fn rack_mark_lost(&mut self) -> bool {
        if !self.rack.advanced {
            return false;
        }
        self.rack.advanced = false;
        let timeout = self.rack_detect_loss();
        if timeout > 0 {
            let j = self.cfg.usecs_to_jiffies(timeout + TIMEOUT_MIN_US);
            let at = self.now + self.cfg.jiffies(j);
            self.xmit_timer = Some((at, XmitTimer::ReoTimeout));
        }
        timeout > 0
    }

    /// `tcp_rack_reo_timeout`.
    pub(crate) fn rack_reo_timeout(&mut self, out: &mut Vec<Segment>) {
        let lost_before = self.sk.lost;
        let prior_inflight = self.packets_in_flight();
        // The slot still counts as holding the reordering timer while it is handled.
        self.xmit_timer = Some((self.now, XmitTimer::ReoTimeout));
        self.rack_detect_loss();
        if prior_inflight != self.packets_in_flight() {
            if self.sk.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                if !self.has_cong_control() {
                    let newly_lost = self.sk.lost - lost_before;
                    self.cwnd_reduction(1, newly_lost, 0);
                }
            }
            self.xmit_retransmit_queue(out);
        }
        if !matches!(self.xmit_timer, Some((_, XmitTimer::Retrans))) {
            self.rearm_rto();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TcpConfig;

    #[test]
    fn a_dsack_widens_the_reordering_window_once_per_round_for_sixteen_recoveries() {
        let mut ep = Endpoint::client(TcpConfig::default(), 1);
        ep.sk.min_rtt_us = 400;
        ep.sk.srtt_us = 1000 << 3;
        ep.rack.reord = true;
        assert_eq!(ep.rack_reo_wnd(), 100, "min_rtt / 4");
        // A D-SACK: the next ACK with a rate sample widens the window one step.
        ep.sk.delivered = 50;
        ep.rack.dsack_seen = true;
        ep.rack_update_reo_wnd(40);
        assert_eq!((ep.rack.reo_wnd_steps, ep.rack.reo_wnd_persist), (2, RACK_RECOVERY_THRESH));
        assert_eq!(ep.rack_reo_wnd(), 200);
        // Another D-SACK for data sent before that widening (delivered 45 < 50) is not new.
        ep.rack.dsack_seen = true;
        ep.rack_update_reo_wnd(45);
        assert_eq!(ep.rack.reo_wnd_steps, 2);
        // One sent after it is: a third step, bounded by srtt.
        ep.sk.delivered = 90;
        ep.rack.dsack_seen = true;
        ep.rack_update_reo_wnd(60);
        assert_eq!(ep.rack.reo_wnd_steps, 3);
        for _ in 0..20 {
            ep.rack.dsack_seen = true;
            ep.sk.delivered += 10;
            let d = ep.sk.delivered;
            ep.rack_update_reo_wnd(d - 1);
        }
        assert_eq!(ep.rack_reo_wnd(), 1000, "never more than srtt");
        // Without D-SACKs the width persists while recoveries are left, then resets.
        ep.rack.reo_wnd_persist = 1;
        ep.rack_update_reo_wnd(ep.sk.delivered);
        assert!(ep.rack.reo_wnd_steps > 1);
        ep.rack.reo_wnd_persist = 0;
        ep.rack_update_reo_wnd(ep.sk.delivered);
        assert_eq!(ep.rack.reo_wnd_steps, 1);
    }

    /// Without losses, reordering or CE marks RACK never walks its list; acknowledged packets
    /// must still leave it (past twice the packets in flight), or a long loss-free flow keeps an
    /// entry for every packet it sent.
    #[test]
    fn acknowledged_packets_leave_the_time_sorted_list_without_a_walk() {
        use crate::{Segment, TcpFlags, TcpOptions};
        use ccsim_engine::SimTime;
        let (iss, peer) = (1_000u32, 9_000u32);
        let mut ep = Endpoint::client(TcpConfig::default(), iss);
        let mut out = Vec::new();
        let mut t = SimTime::from_ms(1);
        ep.connect(t, &mut out);
        out.clear();
        t += SimTime::from_us(100);
        let opts = TcpOptions { mss: Some(1460), sack_permitted: true, wscale: Some(7), ..TcpOptions::default() };
        let synack = Segment {
            seq: peer,
            ack: iss + 1,
            flags: TcpFlags(TcpFlags::SYN | TcpFlags::ACK),
            win: 65535,
            opts,
            ..Segment::default()
        };
        ep.on_segment(t, &synack, &mut out);
        ep.write(t, 100_000_000, &mut out);
        let mut sent = 0usize;
        // Each round: the peer acknowledges every second segment of the last flight, 100 us on.
        for _ in 0..300 {
            let flight = std::mem::take(&mut out);
            sent += flight.len();
            t += SimTime::from_us(100);
            for pair in flight.chunks(2) {
                let last = pair[pair.len() - 1];
                let ack = Segment {
                    seq: peer + 1,
                    ack: last.seq.wrapping_add(last.len),
                    flags: TcpFlags(TcpFlags::ACK),
                    win: 65535,
                    ..Segment::default()
                };
                ep.on_segment(t, &ack, &mut out);
                assert!(
                    ep.tsorted.len() <= 2 * ep.rtx.len() + 32,
                    "{} time-sorted entries for {} packets in flight",
                    ep.tsorted.len(),
                    ep.rtx.len()
                );
            }
        }
        assert!(sent > 2_000, "only {sent} segments sent");
        assert_eq!(ep.stats.total_retrans, 0);
    }
}
