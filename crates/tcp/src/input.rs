//! The ACK path of tcp_input.c: `tcp_ack`, SACK tagging, `tcp_clean_rtx_queue`,
//! `tcp_fastretrans_alert` with PRR (RFC 6937) and undo, and `tcp_cong_control`.

use crate::endpoint::*;
use crate::segment::{Segment, TcpFlags, TcpOptions};
use crate::seq::SeqNum;
use ccsim_cc::{AckEventFlags, AckSample, CaEvent, CaState, CongestionOps, RateSample};

// tcp_input.c FLAG_* bits.
pub(crate) const FLAG_DATA: u32 = 0x01;
pub(crate) const FLAG_WIN_UPDATE: u32 = 0x02;
pub(crate) const FLAG_DATA_ACKED: u32 = 0x04;
pub(crate) const FLAG_RETRANS_DATA_ACKED: u32 = 0x08;
pub(crate) const FLAG_SYN_ACKED: u32 = 0x10;
pub(crate) const FLAG_DATA_SACKED: u32 = 0x20;
pub(crate) const FLAG_ECE: u32 = 0x40;
pub(crate) const FLAG_LOST_RETRANS: u32 = 0x80;
pub(crate) const FLAG_SLOWPATH: u32 = 0x100;
pub(crate) const FLAG_ORIG_SACK_ACKED: u32 = 0x200;
pub(crate) const FLAG_SND_UNA_ADVANCED: u32 = 0x400;
pub(crate) const FLAG_DSACKING_ACK: u32 = 0x800;
pub(crate) const FLAG_SET_XMIT_TIMER: u32 = 0x1000;
pub(crate) const FLAG_DSACK_TLP: u32 = 0x2000;
pub(crate) const FLAG_ACK_MAYBE_DELAYED: u32 = 0x4000;
pub(crate) const FLAG_ACKED: u32 = FLAG_DATA_ACKED | FLAG_SYN_ACKED;
pub(crate) const FLAG_NOT_DUP: u32 = FLAG_DATA | FLAG_WIN_UPDATE | FLAG_ACKED;
pub(crate) const FLAG_CA_ALERT: u32 = FLAG_DATA_SACKED | FLAG_ECE | FLAG_DSACKING_ACK;
pub(crate) const FLAG_FORWARD_PROGRESS: u32 = FLAG_ACKED | FLAG_DATA_SACKED;

/// Undo of a cwnd reduction that turns out spurious (`struct tcp_sock`: `undo_marker`,
/// `undo_retrans`, `prior_ssthresh`, `retrans_stamp`), which `tcp_init_undo`, `tcp_may_undo`
/// and `tcp_undo_cwnd_reduction` keep.
#[derive(Clone, Debug)]
pub(crate) struct UndoState {
    /// `undo_marker`: snd_una when the reduction began; 0 when undo is not possible.
    pub marker: SeqNum,
    /// `undo_retrans`: retransmissions not yet D-SACKed (-1: none sent).
    pub retrans: i32,
    /// `prior_ssthresh`: ssthresh to restore (0: keep the reduced one).
    pub prior_ssthresh: u32,
    /// `retrans_stamp`: TSval of the first retransmission of the episode, 0 when none.
    pub retrans_stamp: u32,
}

/// `tcp_sacktag_state`, reduced.
#[derive(Default)]
struct SackState {
    flag: u32,
    reord: Option<SeqNum>,
    first_sackt: u64,
    last_sackt: u64,
    sack_delivered: u32,
    rate: RateSample,
    rate_last_end_seq: SeqNum,
}

const UNSET: u64 = u64::MAX;

impl Endpoint {
    pub(crate) fn is_reno(&self) -> bool {
        !self.sack_ok
    }

    pub(crate) fn has_cong_control(&self) -> bool {
        self.cc.has_cong_control()
    }

    /// `tcp_count_delivered`.
    fn count_delivered(&mut self, n: u32, ece: bool) {
        self.sk.delivered = self.sk.delivered.wrapping_add(n);
        if ece {
            self.sk.delivered_ce = self.sk.delivered_ce.wrapping_add(n);
        }
    }

    /// `tcp_ack`: process the acknowledgment part of an incoming segment. Returns false when
    /// the whole segment must be discarded (it acknowledges data never sent).
    /// `tcp_ack`; `flag` is what the caller passes in: `FLAG_SLOWPATH` from the slow path,
    /// nothing or `FLAG_DATA` from header prediction's fast path.
    pub(crate) fn tcp_ack(&mut self, seg: &Segment, flag: u32, out: &mut Vec<Segment>) -> bool {
        let prior_snd_una = self.snd_una();
        let prior_fack = if self.sack_ok { self.highest_sack_seq() } else { prior_snd_una };
        let prior_packets = self.sk.packets_out;
        let prior_delivered = self.sk.delivered;
        let prior_lost = self.sk.lost;
        let ack = seg.ack_num();
        let mut st = SackState { rate: RateSample { prior_mstamp_us: 0, ..Default::default() }, ..Default::default() };
        let mut rexmit = false;
        let mut flag = flag;

        if ack.before(prior_snd_una) {
            // An old ACK: it may still carry SACK information.
            if seg.opts.sack_len > 0 {
                flag |= self.sacktag(&seg.opts, prior_snd_una, prior_fack, &mut st);
                if seg.flags.has(TcpFlags::ECE) && self.sk.ecn_ok {
                    flag |= FLAG_ECE;
                }
                if st.sack_delivered > 0 {
                    self.count_delivered(st.sack_delivered, flag & FLAG_ECE != 0);
                }
                self.fastretrans_alert(prior_snd_una, 0, &mut flag, &mut rexmit);
                if rexmit {
                    self.xmit_retransmit_queue(out);
                }
            }
            return true;
        }
        if ack.after(self.snd_nxt()) {
            return false; // RFC 793 3.9: acknowledges data never sent
        }
        if ack.after(prior_snd_una) {
            flag |= FLAG_SND_UNA_ADVANCED;
            self.icsk.retransmits = 0;
        }
        st.rate.prior_in_flight = self.packets_in_flight();
        if flag & FLAG_SLOWPATH == 0 && ack.after(prior_snd_una) {
            // Header prediction: the window is constant, a pure forward advance.
            self.snd_wl1 = seg.seq_num(); // tcp_update_wl
            self.set_snd_una(ack);
            flag |= FLAG_WIN_UPDATE;
            self.stats.hp_acks += 1;
        } else {
            if seg.len > 0 || seg.flags.has(TcpFlags::FIN) {
                flag |= FLAG_DATA;
            }
            flag |= self.ack_update_window(seg);
            self.set_snd_una(ack);
            if seg.opts.sack_len > 0 {
                flag |= self.sacktag(&seg.opts, prior_snd_una, prior_fack, &mut st);
            }
            // tcp_ecn_rcv_ecn_echo
            if seg.flags.has(TcpFlags::ECE) && !seg.flags.has(TcpFlags::SYN) && self.sk.ecn_ok {
                flag |= FLAG_ECE;
            }
            if st.sack_delivered > 0 {
                self.count_delivered(st.sack_delivered, flag & FLAG_ECE != 0);
            }
        }
        // Something worked: the zero-window probes so far were answered.
        self.icsk.probes_out = 0;
        self.rcv_tstamp = self.now.ns();
        if prior_packets == 0 {
            // no_queue: nothing was outstanding.
            self.in_ack_event(flag, out);
            if flag & FLAG_DSACKING_ACK != 0 {
                self.fastretrans_alert(prior_snd_una, 0, &mut flag, &mut rexmit);
            }
            if self.unsent > 0 {
                self.ack_probe();
            }
            return true;
        }
        flag |= self.clean_rtx_queue(prior_fack, flag & FLAG_ECE != 0, &mut st);
        self.rack_update_reo_wnd(st.rate.prior_delivered);
        self.in_ack_event(flag, out);
        if self.tlp.high_seq.is_some() {
            self.process_tlp_ack(ack, flag, flag & FLAG_DSACK_TLP != 0);
        }

        // tcp_ack_is_dubious
        if flag & FLAG_NOT_DUP == 0 || flag & FLAG_CA_ALERT != 0 || self.sk.ca_state != CaState::Open {
            let num_dupack = if flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DSACKING_ACK) == 0 { 1 } else { 0 };
            self.fastretrans_alert(prior_snd_una, num_dupack, &mut flag, &mut rexmit);
        }
        if flag & FLAG_SET_XMIT_TIMER != 0 {
            // tcp_set_xmit_timer
            if !self.schedule_loss_probe(true) {
                self.rearm_rto();
            }
        }
        let delivered = self.sk.delivered.wrapping_sub(prior_delivered);
        let lost = self.sk.lost.wrapping_sub(prior_lost);
        st.rate.is_ack_delayed = flag & FLAG_ACK_MAYBE_DELAYED != 0;
        self.rate_gen(delivered, lost, &mut st.rate);
        self.cong_control(ack, delivered, flag, &st.rate);
        if rexmit && self.state != TcpState::SynSent {
            self.xmit_retransmit_queue(out); // tcp_xmit_recovery
        }
        true
    }

    /// `tcp_in_ack_event`. A module that `handles_ece` may ask for CWR here (FreeBSD
    /// `cc_cong_signal(CC_ECN)` sets `TF_ECN_SND_CWR`); Linux modules never do.
    fn in_ack_event(&mut self, flag: u32, out: &mut Vec<Segment>) {
        self.cc.in_ack_event(&mut self.sk, ack_event_flags(flag));
        self.apply_cc_requests(out);
    }

    /// `tcp_ack_update_window`.
    fn ack_update_window(&mut self, seg: &Segment) -> u32 {
        let nwin = (seg.win as u32) << self.snd_wscale;
        let ack_seq = seg.seq_num();
        let mut flag = 0;
        // tcp_may_update_window
        if seg.ack_num().after(self.snd_una())
            || ack_seq.after(self.snd_wl1)
            || (ack_seq == self.snd_wl1 && nwin > self.snd_wnd)
        {
            flag |= FLAG_WIN_UPDATE;
            self.snd_wl1 = ack_seq;
            if self.snd_wnd != nwin {
                self.snd_wnd = nwin;
                // The only place where the fast path comes back for a sender.
                self.pred_wnd = None;
                self.fast_path_check();
            }
        }
        flag
    }

    /// `tcp_sacktag_write_queue`: apply the SACK blocks of an ACK to the retransmit queue.
    fn sacktag(&mut self, opts: &TcpOptions, prior_snd_una: SeqNum, prior_fack: SeqNum, st: &mut SackState) -> u32 {
        let blocks = opts.sack_blocks();
        let mut flag = 0;
        // tcp_check_dsack: the first block is a D-SACK if it lies below the cumulative ACK or
        // inside the second block.
        let mut dsack = false;
        if let Some(&(s0, e0)) = blocks.first() {
            let (s0, e0) = (SeqNum(s0), SeqNum(e0));
            let candidate = if s0.before(self.snd_una().max_seq(prior_snd_una)) {
                true
            } else if let Some(&(s1, e1)) = blocks.get(1) {
                let (s1, e1) = (SeqNum(s1), SeqNum(e1));
                !e0.after(e1) && !s0.before(s1)
            } else {
                false
            };
            if candidate {
                let dup_segs = self.dsack_seen(s0, e0, &mut flag, st);
                if dup_segs > 0 {
                    dsack = true;
                    self.stats.dsacks_rcvd += 1;
                    // A D-SACK for data already acked and freed: count it against the
                    // retransmissions that undo waits for.
                    if self.undo.marker != SeqNum(0)
                        && self.undo.retrans > 0
                        && !e0.after(prior_snd_una)
                        && e0.after(self.undo.marker)
                    {
                        self.undo.retrans = (self.undo.retrans - dup_segs as i32).max(0);
                    }
                }
            }
        }
        for (bi, (start, end)) in opts.sack_seqs().enumerate() {
            let dup = dsack && bi == 0;
            // tcp_is_sackblock_valid
            if end.after(self.snd_nxt()) || !start.before(end) {
                continue;
            }
            if !dup && !end.after(self.snd_una()) {
                continue;
            }
            // The queue is ordered by sequence: find the first skb that may be covered.
            let first = self.rtx.partition_point(|s| !s.end_seq.after(start));
            for i in first..self.rtx.len() {
                let s = self.rtx[i];
                if !s.seq.before(end) {
                    break;
                }
                if s.seq.before(start) || s.end_seq.after(end) {
                    continue; // partially covered: no partial SACK of one packet
                }
                let sacked = self.sacktag_one(i, dup, st);
                self.rtx[i].sacked = sacked;
                if sacked & SACKED_ACKED != 0 {
                    self.rate_skb_delivered(i, st);
                    if s.end_seq.after(self.highest_sack) {
                        self.highest_sack = s.end_seq;
                    }
                }
            }
        }
        flag |= std::mem::take(&mut st.flag);
        if let Some(r) = st.reord {
            // Not in Loss, where retransmissions are not tracked precisely (unless undo is
            // still possible).
            if r.before(prior_fack) && (self.sk.ca_state != CaState::Loss || self.undo.marker != SeqNum(0)) {
                self.check_sack_reordering(r);
            }
        }
        flag
    }

    /// `tcp_dsack_seen`: the segments a D-SACK block reports received twice (0: a dubious
    /// D-SACK, ignored). Each was a spurious retransmission, and counts as delivered.
    fn dsack_seen(&mut self, start: SeqNum, end: SeqNum, flag: &mut u32, st: &mut SackState) -> u32 {
        if !start.before(end) {
            return 0;
        }
        let seq_len = end - start;
        let mss = self.sk.mss_cache.max(1);
        let mut dup_segs = 1;
        if seq_len > mss {
            dup_segs = seq_len.div_ceil(mss);
        } else if self.tlp.high_seq == Some(end) {
            // Both the loss probe and the packet it repeated arrived.
            *flag |= FLAG_DSACK_TLP;
        }
        self.stats.dsack_dups += dup_segs as u64;
        // More duplicates than retransmissions: not caused by this sender.
        if self.stats.dsack_dups > self.stats.total_retrans {
            return 0;
        }
        // RACK widens its reordering window after D-SACKs that reordering may explain.
        if self.rack.reord && *flag & FLAG_DSACK_TLP == 0 {
            self.rack.dsack_seen = true;
        }
        *flag |= FLAG_DSACKING_ACK;
        st.sack_delivered += dup_segs;
        dup_segs
    }

    /// `tcp_sacktag_one`.
    fn sacktag_one(&mut self, idx: usize, dup: bool, st: &mut SackState) -> u8 {
        let s = self.rtx[idx];
        let mut sacked = s.sacked;
        if dup
            && sacked & (SACKED_RETRANS | EVER_RETRANS) != 0
            && self.undo.marker != SeqNum(0)
            && self.undo.retrans > 0
            && s.end_seq.after(self.undo.marker)
        {
            self.undo.retrans -= 1;
        }
        // A D-SACK of a retransmitted packet already SACKed: the original was late.
        if dup
            && sacked & (SACKED_RETRANS | EVER_RETRANS) != 0
            && sacked & SACKED_ACKED != 0
            && st.reord.is_none_or(|r| s.seq.before(r))
        {
            st.reord = Some(s.seq);
        }
        if !s.end_seq.after(self.snd_una()) {
            return sacked;
        }
        if sacked & SACKED_ACKED == 0 {
            self.rack_advance(sacked, s.end_seq, s.tx_ns);
            if sacked & SACKED_RETRANS != 0 {
                if sacked & LOST != 0 {
                    sacked &= !(LOST | SACKED_RETRANS);
                    self.sk.lost_out -= 1;
                    self.sk.retrans_out -= 1;
                }
            } else {
                if sacked & EVER_RETRANS == 0 {
                    // A never-retransmitted packet SACKed inside a hole: reordering.
                    if s.seq.before(self.highest_sack) && st.reord.is_none_or(|r| s.seq.before(r)) {
                        st.reord = Some(s.seq);
                    }
                    if !s.end_seq.after(self.high_seq) {
                        st_set(st, FLAG_ORIG_SACK_ACKED);
                    }
                    if st.first_sackt == 0 {
                        st.first_sackt = s.tx_ns;
                    }
                    st.last_sackt = s.tx_ns;
                }
                if sacked & LOST != 0 {
                    sacked &= !LOST;
                    self.sk.lost_out -= 1;
                }
            }
            sacked |= SACKED_ACKED;
            st_set(st, FLAG_DATA_SACKED);
            self.sk.sacked_out += 1;
            st.sack_delivered += 1;
        }
        if dup && sacked & SACKED_RETRANS != 0 {
            sacked &= !SACKED_RETRANS;
            self.sk.retrans_out -= 1;
        }
        sacked
    }

    /// `tcp_check_sack_reordering`: data below the highest SACKed sequence arrived late.
    fn check_sack_reordering(&mut self, low_seq: SeqNum) {
        let fack = self.highest_sack_seq();
        if !low_seq.before(fack) {
            return;
        }
        let mss = self.sk.mss_cache.max(1);
        let metric = fack - low_seq;
        if metric > self.reordering * mss {
            self.reordering = metric.div_ceil(mss).min(300);
        }
        self.rack.reord = true;
        self.stats.reord_seen += 1;
    }

    /// `tcp_highest_sack_seq`: the end of the highest SACKed segment (snd_una without SACKs).
    fn highest_sack_seq(&self) -> SeqNum {
        if self.sk.sacked_out == 0 {
            self.snd_una()
        } else {
            self.highest_sack
        }
    }

    /// `tcp_clean_rtx_queue`: drop what the cumulative ACK covers; RTT sample; `pkts_acked`.
    fn clean_rtx_queue(&mut self, prior_fack: SeqNum, ece: bool, st: &mut SackState) -> u32 {
        let now = self.now.ns();
        let mut flag = 0u32;
        let mut first_ackt = UNSET;
        let mut last_ackt = UNSET;
        let mut pkts_acked = 0u32;
        let mut acked_bytes = 0u32;
        let prior_sacked = self.sk.sacked_out;
        let mut reord: Option<SeqNum> = None;
        while let Some(&s) = self.rtx.front() {
            if s.end_seq.after(self.snd_una()) {
                break;
            }
            let sacked = s.sacked;
            if sacked & (SACKED_RETRANS | EVER_RETRANS) != 0 {
                if sacked & SACKED_RETRANS != 0 {
                    self.sk.retrans_out -= 1;
                }
                flag |= FLAG_RETRANS_DATA_ACKED;
            } else if sacked & SACKED_ACKED == 0 {
                last_ackt = s.tx_ns;
                if first_ackt == UNSET {
                    first_ackt = s.tx_ns;
                }
                if reord.is_none() {
                    reord = Some(s.seq);
                }
                if !s.end_seq.after(self.high_seq) {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
            }
            if sacked & SACKED_ACKED != 0 {
                self.sk.sacked_out -= 1;
            } else if self.sack_ok {
                self.count_delivered(1, ece);
                self.rack_advance(sacked, s.end_seq, s.tx_ns);
            }
            if sacked & LOST != 0 {
                self.sk.lost_out -= 1;
            }
            self.sk.packets_out -= 1;
            pkts_acked += 1;
            acked_bytes = acked_bytes.wrapping_add(s.end_seq - s.seq);
            self.rate_skb_delivered(0, st);
            if s.tcp_flags & TcpFlags::FIN != 0 {
                // Our FIN is acknowledged (tcp_rcv_state_process).
                self.state = match self.state {
                    TcpState::FinWait1 => TcpState::FinWait2,
                    TcpState::Closing => TcpState::TimeWait,
                    TcpState::LastAck => {
                        // tcp_rcv_state_process, LAST_ACK: tcp_done.
                        self.unhashed = true;
                        TcpState::Closed
                    }
                    other => other,
                };
            }
            if s.tcp_flags & TcpFlags::SYN == 0 {
                flag |= FLAG_DATA_ACKED;
                let bytes = s.end_seq - s.seq - (s.tcp_flags & TcpFlags::FIN != 0) as u32;
                self.stats.bytes_acked += bytes as u64;
            } else {
                flag |= FLAG_SYN_ACKED;
                self.undo.retrans_stamp = 0;
            }
            self.rtx.pop_front();
        }
        if self.rtx.is_empty() {
            self.chrono_stop(CHRONO_BUSY);
        }
        // tcp_rtx_queue_unlink_and_free takes a freed skb off the time-sorted list too. Here
        // RACK's walk skips and drops acknowledged entries, but a flow that never walks (no loss,
        // no ECE) would keep one for every packet it sent: past twice the packets in flight, the
        // acknowledged ones leave from the front (in send order, the oldest first).
        if self.tsorted.len() > 2 * self.rtx.len() + 32 {
            while self.tsorted.front().is_some_and(|&(seq, _)| seq.before(self.snd_una())) {
                self.tsorted.pop_front();
            }
        }
        if !self.highest_sack.after(self.snd_una()) {
            self.highest_sack = self.snd_una();
        }
        // RTT samples: cumulative (Karn: never-retransmitted only), else from SACKed packets.
        let us = |t: u64| if t == UNSET { -1 } else { (now.saturating_sub(t) / 1000) as i64 };
        let mut seq_rtt = us(first_ackt);
        let mut ca_rtt = us(last_ackt);
        if first_ackt != UNSET
            && flag & FLAG_RETRANS_DATA_ACKED == 0
            && pkts_acked == 1
            && prior_sacked == 0
            && acked_bytes < self.sk.mss_cache
            && st.rate.prior_delivered.wrapping_add(1) == self.sk.delivered
            && flag & (FLAG_CA_ALERT | FLAG_SYN_ACKED) == 0
        {
            // Conservatively mark a delayed ACK: one runt packet acked, nothing SACKed or
            // CE-echoed (FLAG_ACK_MAYBE_DELAYED).
            flag |= FLAG_ACK_MAYBE_DELAYED;
        }
        if st.first_sackt != 0 {
            let sack_rtt = us(st.first_sackt);
            if seq_rtt < 0 {
                seq_rtt = sack_rtt;
            }
            ca_rtt = us(st.last_sackt);
        }
        let acked = flag & FLAG_ACKED != 0;
        if seq_rtt >= 0 || acked {
            // The rate sample takes the RTT of the last (S)ACKed packet, or the timestamp
            // echo's when there is none (tcp_ack_update_rtt sets rs->rtt_us).
            ca_rtt = self.ack_update_rtt(seq_rtt, ca_rtt, acked);
        }
        st.rate.rtt_us = ca_rtt;
        if acked {
            flag |= FLAG_SET_XMIT_TIMER;
            if self.is_reno() {
                self.remove_reno_sacks(pkts_acked, ece);
            } else if let Some(r) = reord {
                // A hole filled by an original (never retransmitted) transmission: reordering.
                if r.before(prior_fack) {
                    self.check_sack_reordering(r);
                }
            }
        }
        // in_flight: bytes delivered since the most recently delivered packet was sent.
        let in_flight = self.sk.mss_cache.wrapping_mul(self.sk.delivered.wrapping_sub(st.rate.prior_delivered));
        let sample = AckSample { pkts_acked, rtt_us: ca_rtt, in_flight };
        self.cc.pkts_acked(&mut self.sk, &sample);
        flag
    }

    /// `tcp_rate_skb_delivered` for the skb at `idx`.
    fn rate_skb_delivered(&mut self, idx: usize, st: &mut SackState) {
        let s = self.rtx[idx];
        if s.delivered_ns == UNSET {
            return;
        }
        let rs = &mut st.rate;
        if rs.prior_delivered == 0 && rs.prior_mstamp_us == 0
            || s.tx_ns > self.first_tx_ns
            || (s.tx_ns == self.first_tx_ns && s.end_seq.after(st.rate_last_end_seq))
        {
            rs.prior_delivered = s.delivered;
            rs.prior_mstamp_us = s.delivered_ns / 1000 + 1; // +1: 0 means "no sample"
            rs.is_app_limited = s.app_limited;
            rs.is_retrans = s.sacked & (SACKED_RETRANS | EVER_RETRANS) != 0;
            st.rate_last_end_seq = s.end_seq;
            self.first_tx_ns = s.tx_ns;
            rs.interval_us = (s.tx_ns.saturating_sub(s.first_tx_ns) / 1000) as i64;
        }
        if s.sacked & SACKED_ACKED != 0 {
            self.rtx[idx].delivered_ns = UNSET;
        }
    }

    /// `tcp_rate_gen`: turn the ACK's deliveries into a delivery-rate sample.
    fn rate_gen(&mut self, delivered: u32, lost: u32, rs: &mut RateSample) {
        if self.sk.app_limited != 0 && ccsim_cc::after(self.sk.delivered, self.sk.app_limited) {
            self.sk.app_limited = 0;
        }
        if delivered > 0 {
            self.sk.delivered_mstamp_ns = self.now.ns();
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if rs.prior_mstamp_us == 0 {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        let prior_us = rs.prior_mstamp_us - 1;
        rs.delivered = self.sk.delivered.wrapping_sub(rs.prior_delivered) as i32;
        let ack_us = (self.now_us().saturating_sub(prior_us)) as i64;
        rs.interval_us = rs.interval_us.max(ack_us);
        // tcp_min_rtt is ~0U before any RTT sample, which invalidates every sample.
        if rs.interval_us < self.sk.min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        // Keep the last sample that is not app-limited, or an app-limited one at least as fast,
        // for tcp_info's delivery rate.
        let last = &mut self.last_rate;
        if !rs.is_app_limited
            || rs.delivered as u64 * last.interval_us as u64 >= last.delivered as u64 * rs.interval_us as u64
        {
            *last = LastRate {
                delivered: rs.delivered as u32,
                interval_us: rs.interval_us as u32,
                app_limited: rs.is_app_limited,
            };
        }
    }

    /// `tcp_cong_control`.
    fn cong_control(&mut self, ack: SeqNum, acked_sacked: u32, flag: u32, rs: &RateSample) {
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.sk, rs);
            return;
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked, rs.losses, flag);
        } else if self.may_raise_cwnd(flag) {
            self.cc.cong_avoid(&mut self.sk, ack.get(), acked_sacked);
            self.snd_cwnd_stamp = self.now.ns();
        }
        self.update_pacing_rate();
    }

    /// `tcp_may_raise_cwnd`.
    fn may_raise_cwnd(&self, flag: u32) -> bool {
        if self.reordering > self.cfg.reordering {
            return flag & FLAG_FORWARD_PROGRESS != 0;
        }
        flag & FLAG_DATA_ACKED != 0
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937).
    pub(crate) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if newly_acked_sacked == 0 || self.sk.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.packets_in_flight() as i64;
        let delta = self.sk.snd_ssthresh as i64 - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.sk.snd_ssthresh as u64 * self.prr_delivered as u64 + self.sk.prior_cwnd as u64 - 1;
            (dividend / self.sk.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut n = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if flag & FLAG_SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.sk.snd_cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// `tcp_init_cwnd_reduction`.
    pub(crate) fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt();
        self.tlp.high_seq = None;
        self.sk.snd_cwnd_cnt = 0;
        self.sk.prior_cwnd = self.sk.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sk.snd_ssthresh = self.cc.ssthresh(&mut self.sk);
        self.ecn_queue_cwr();
    }

    /// `tcp_end_cwnd_reduction`.
    pub(crate) fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.sk.snd_ssthresh < ccsim_cc_infinite()
            && (self.sk.ca_state == CaState::Cwr || self.undo.marker != SeqNum(0))
        {
            self.sk.snd_cwnd = self.sk.snd_ssthresh;
            self.snd_cwnd_stamp = self.now.ns();
        }
        self.ca_event(CaEvent::CompleteCwr);
    }

    /// `tcp_enter_cwr`: an ECN-Echo reduces cwnd once per window (RFC 3168 6.1.2).
    pub(crate) fn enter_cwr(&mut self) {
        self.undo.prior_ssthresh = 0;
        if self.sk.ca_state < CaState::Cwr {
            self.undo.marker = SeqNum(0);
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.stats.cwr_events += 1;
        }
    }

    /// `tcp_init_undo`.
    pub(crate) fn init_undo(&mut self) {
        self.undo.marker = self.snd_una();
        if self.undo.marker == SeqNum(0) {
            self.undo.marker = SeqNum(1); // 0 means "no undo possible"
        }
        self.undo.retrans = if self.sk.retrans_out > 0 { self.sk.retrans_out as i32 } else { -1 };
    }

    /// `tcp_enter_recovery`.
    pub(crate) fn enter_recovery(&mut self, ece_ack: bool) {
        self.undo.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.undo.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
        self.stats.fast_recoveries += 1;
    }

    /// `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.sk.retrans_out > 0 || self.rtx.front().is_some_and(|s| s.sacked & EVER_RETRANS != 0)
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than our first retransmission, so
    /// the original transmission arrived.
    fn packet_delayed(&self) -> bool {
        self.undo.retrans_stamp != 0
            && self.rcv_tsecr.is_some_and(|e| e != 0 && ccsim_cc::before(e, self.undo.retrans_stamp))
    }

    /// `tcp_may_undo`.
    fn may_undo(&self) -> bool {
        self.undo.marker != SeqNum(0) && (self.undo.retrans == 0 || self.packet_delayed())
    }

    /// `tcp_undo_cwnd_reduction`.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for s in self.rtx.iter_mut() {
                s.sacked &= !LOST;
            }
            self.sk.lost_out = 0;
        }
        if self.undo.prior_ssthresh != 0 {
            self.sk.snd_cwnd = self.cc.undo_cwnd(&mut self.sk);
            if self.undo.prior_ssthresh > self.sk.snd_ssthresh {
                self.sk.snd_ssthresh = self.undo.prior_ssthresh;
                self.ecn_queue_cwr = false; // tcp_ecn_withdraw_cwr
            }
        }
        self.snd_cwnd_stamp = self.now.ns();
        self.undo.marker = SeqNum(0);
        self.rack.advanced = true;
        self.stats.undo_count += 1;
    }

    /// `tcp_try_undo_recovery`: returns true if the state must be held (Reno).
    fn try_undo_recovery(&mut self) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else if self.rack.reo_wnd_persist > 0 {
            self.rack.reo_wnd_persist -= 1;
        }
        if self.snd_una() == self.high_seq && self.is_reno() {
            // Hold the state until something above high_seq is acked (RFC 2582).
            if !self.any_retrans_done() {
                self.undo.retrans_stamp = 0;
            }
            return true;
        }
        self.set_ca_state(CaState::Open);
        false
    }

    /// `tcp_try_undo_dsack`.
    fn try_undo_dsack(&mut self) -> bool {
        if self.undo.marker != SeqNum(0) && self.undo.retrans == 0 {
            self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(crate::rack::RACK_RECOVERY_THRESH);
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_loss`.
    fn try_undo_loss(&mut self) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(true);
            self.icsk.retransmits = 0;
            if self.sack_ok {
                self.set_ca_state(CaState::Open);
            }
            return true;
        }
        false
    }

    /// `tcp_try_undo_partial`.
    fn try_undo_partial(&mut self, prior_snd_una: SeqNum, do_lost: &mut bool) -> bool {
        if self.undo.marker != SeqNum(0) && self.packet_delayed() {
            self.check_sack_reordering(prior_snd_una);
            if self.sk.retrans_out > 0 {
                return true;
            }
            if !self.any_retrans_done() {
                self.undo.retrans_stamp = 0;
            }
            self.undo_cwnd_reduction(true);
            self.try_keep_open();
            return true;
        }
        // A partial ACK: retransmit the next hole if enough is SACKed above it.
        *do_lost = !self.cfg.rack && self.force_fast_retransmit();
        false
    }

    /// `tcp_force_fast_retransmit`: more than `reordering` segments SACKed above snd_una.
    fn force_fast_retransmit(&self) -> bool {
        self.highest_sack_seq().after(self.snd_una() + (self.reordering * self.sk.mss_cache))
    }

    /// `tcp_update_scoreboard` (without RACK): a segment is lost once `reordering` segments
    /// above it are SACKed; entering recovery marks at least the head.
    fn update_scoreboard(&mut self, fast_rexmit: bool) {
        if !self.sack_ok {
            return;
        }
        let sacked_upto = self.sk.sacked_out as i64 - self.reordering as i64;
        if sacked_upto >= 0 {
            self.mark_head_lost(sacked_upto as u32, false);
        } else if fast_rexmit {
            self.mark_head_lost(1, true);
        }
    }

    /// `tcp_mark_head_lost`: walk from the head, marking segments lost until more than
    /// `packets` SACKed ones have been passed (only the head with `mark_head`). Walks from the
    /// head each time where Linux resumes at `lost_skb_hint`; the marks are the same.
    fn mark_head_lost(&mut self, packets: u32, mark_head: bool) {
        let loss_high = self.snd_nxt();
        let mut cnt = 0u32;
        for i in 0..self.rtx.len() {
            let s = &self.rtx[i];
            if s.end_seq.after(loss_high) {
                break;
            }
            if s.sacked & SACKED_ACKED != 0 {
                cnt += 1;
            }
            if cnt > packets {
                break;
            }
            if s.sacked & LOST == 0 {
                self.mark_skb_lost(i);
            }
            if mark_head {
                break;
            }
        }
    }

    /// `tcp_try_keep_open`.
    pub(crate) fn try_keep_open(&mut self) {
        let state = if self.left_out() > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
        if self.sk.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.snd_nxt();
        }
    }

    /// `tcp_try_to_open`.
    fn try_to_open(&mut self, flag: u32) {
        if !self.any_retrans_done() {
            self.undo.retrans_stamp = 0;
        }
        // A module that handles ECE has already cut cwnd in in_ack_event (FreeBSD
        // dctcp_cong_signal(CC_ECN): cwnd = ssthresh, no CWR state, no PRR).
        if flag & FLAG_ECE != 0 && !self.cc.handles_ece() {
            self.enter_cwr();
        }
        if self.sk.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// `tcp_time_to_recover`.
    fn time_to_recover(&self) -> bool {
        if self.sk.lost_out > 0 {
            return true;
        }
        // The classic dupack threshold: without RACK, or without SACK (RACK needs SACK; a
        // Reno sender's head is marked lost at the same count by tcp_newreno_mark_lost).
        (self.is_reno() || !self.cfg.rack) && self.sk.sacked_out + 1 > self.reordering
    }

    /// `tcp_identify_packet_loss`.
    fn identify_packet_loss(&mut self, flag: &mut u32) {
        if self.rtx.is_empty() {
            return;
        }
        if self.is_reno() {
            self.newreno_mark_lost(*flag & FLAG_SND_UNA_ADVANCED != 0);
        } else if self.cfg.rack {
            let prior_retrans = self.sk.retrans_out;
            if self.rack_mark_lost() {
                *flag &= !FLAG_SET_XMIT_TIMER;
            }
            if prior_retrans > self.sk.retrans_out {
                *flag |= FLAG_LOST_RETRANS;
            }
        }
    }

    /// `tcp_newreno_mark_lost`.
    fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let state = self.sk.ca_state;
        if ((state < CaState::Recovery && self.sk.sacked_out >= self.reordering)
            || (state == CaState::Recovery && snd_una_advanced))
            && self.rtx.front().is_some_and(|s| s.sacked & LOST == 0)
        {
            self.mark_skb_lost(0);
        }
    }

    /// `tcp_add_reno_sack`: without SACK, a duplicate ACK stands for one packet delivered.
    fn add_reno_sack(&mut self, num_dupack: u32, ece: bool) {
        if num_dupack == 0 {
            return;
        }
        let prior = self.sk.sacked_out;
        self.sk.sacked_out += num_dupack;
        // tcp_limit_reno_sacked
        let holes = self.sk.lost_out.max(1).min(self.sk.packets_out);
        if self.sk.sacked_out + holes > self.sk.packets_out {
            self.sk.sacked_out = self.sk.packets_out - holes;
        }
        let d = self.sk.sacked_out.saturating_sub(prior);
        if d > 0 {
            self.count_delivered(d, ece);
        }
    }

    /// `tcp_remove_reno_sacks`.
    fn remove_reno_sacks(&mut self, acked: u32, ece: bool) {
        if acked > 0 {
            self.count_delivered(acked.saturating_sub(self.sk.sacked_out).max(1), ece);
            if acked > self.sk.sacked_out {
                self.sk.sacked_out = 0;
            } else {
                self.sk.sacked_out -= acked - 1;
            }
        }
    }

    /// `tcp_process_loss` (without F-RTO).
    fn process_loss(&mut self, flag: u32, num_dupack: u32, rexmit: &mut bool) {
        let recovered = !self.snd_una().before(self.high_seq);
        if flag & FLAG_SND_UNA_ADVANCED != 0 && self.try_undo_loss() {
            return;
        }
        if recovered {
            self.try_undo_recovery();
            return;
        }
        if self.is_reno() {
            if self.snd_nxt().after(self.high_seq) && num_dupack > 0 {
                self.add_reno_sack(num_dupack, flag & FLAG_ECE != 0);
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 {
                self.sk.sacked_out = 0;
            }
        }
        *rexmit = true;
    }

    /// `tcp_fastretrans_alert`: the loss-recovery state machine.
    fn fastretrans_alert(&mut self, prior_snd_una: SeqNum, num_dupack: u32, flag: &mut u32, rexmit: &mut bool) {
        let ece_ack = *flag & FLAG_ECE != 0;
        // Without RACK: whether this ACK may mark more of the head lost (tcp_update_scoreboard).
        let mut do_lost =
            !self.cfg.rack && (num_dupack > 0 || (*flag & FLAG_DATA_SACKED != 0 && self.force_fast_retransmit()));
        let mut fast_rexmit = false;
        if self.sk.packets_out == 0 && self.sk.sacked_out > 0 {
            self.sk.sacked_out = 0;
        }
        // A. ECE: a reduction is required, so undoing is not allowed.
        if ece_ack {
            self.undo.prior_ssthresh = 0;
        }
        // D. State exit conditions.
        if self.sk.ca_state == CaState::Open {
            self.undo.retrans_stamp = 0;
        } else if !self.snd_una().before(self.high_seq) {
            match self.sk.ca_state {
                CaState::Cwr
                    // Hold CWR until something above high_seq is acked, so the CWR bit reached
                    // the receiver.
                    if self.snd_una() != self.high_seq => {
                        self.end_cwnd_reduction();
                        self.set_ca_state(CaState::Open);
                    }
                CaState::Recovery => {
                    if self.is_reno() {
                        self.sk.sacked_out = 0;
                    }
                    if self.try_undo_recovery() {
                        return;
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        match self.sk.ca_state {
            CaState::Recovery => {
                if *flag & FLAG_SND_UNA_ADVANCED == 0 {
                    if self.is_reno() {
                        self.add_reno_sack(num_dupack, ece_ack);
                    }
                } else if self.try_undo_partial(prior_snd_una, &mut do_lost) {
                    return;
                }
                if self.try_undo_dsack() {
                    self.try_to_open(*flag);
                }
                self.identify_packet_loss(flag);
                if self.sk.ca_state != CaState::Recovery {
                    if !self.time_to_recover() {
                        return;
                    }
                    self.enter_recovery(ece_ack);
                }
            }
            CaState::Loss => {
                self.process_loss(*flag, num_dupack, rexmit);
                self.identify_packet_loss(flag);
                if !(self.sk.ca_state == CaState::Open || *flag & FLAG_LOST_RETRANS != 0) {
                    return;
                }
                if !self.alert_default(num_dupack, flag, ece_ack) {
                    return;
                }
                fast_rexmit = true;
            }
            _ => {
                if !self.alert_default(num_dupack, flag, ece_ack) {
                    return;
                }
                fast_rexmit = true;
            }
        }
        if do_lost {
            self.update_scoreboard(fast_rexmit);
        }
        *rexmit = true;
    }

    /// The `default:` arm of `tcp_fastretrans_alert`; false when there is nothing to recover.
    fn alert_default(&mut self, num_dupack: u32, flag: &mut u32, ece_ack: bool) -> bool {
        if self.is_reno() {
            if *flag & FLAG_SND_UNA_ADVANCED != 0 {
                self.sk.sacked_out = 0;
            }
            self.add_reno_sack(num_dupack, ece_ack);
        }
        if self.sk.ca_state <= CaState::Disorder {
            self.try_undo_dsack();
        }
        self.identify_packet_loss(flag);
        if !self.time_to_recover() {
            self.try_to_open(*flag);
            return false;
        }
        self.enter_recovery(ece_ack);
        true
    }
}

fn ccsim_cc_infinite() -> u32 {
    0x7fff_ffff
}

fn st_set(st: &mut SackState, f: u32) {
    st.flag |= f;
}

fn ack_event_flags(flag: u32) -> AckEventFlags {
    AckEventFlags {
        slowpath: flag & FLAG_SLOWPATH != 0,
        win_update: flag & FLAG_WIN_UPDATE != 0,
        ece: flag & FLAG_ECE != 0,
    }
}
