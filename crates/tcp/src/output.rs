//! The send path (tcp_output.c).

use crate::endpoint::*;
use crate::segment::{Ecn, Segment, TcpFlags, TcpOptions, BLANK_SEGMENT};
use crate::seq::SeqNum;
use ccsim_cc::{CaEvent, CongestionOps};
use ccsim_engine::SimTime;

/// `net.ipv4.tcp_limit_output_bytes` (4 MiB in current kernels).
const TCP_LIMIT_OUTPUT_BYTES: u64 = 4 << 20;

impl Endpoint {
    /// `tcp_push_pending_frames` → `tcp_write_xmit`: send new data as cwnd, rwnd, Nagle and
    /// pacing allow. Only with a send head (unsent data, or a FIN not yet sent): with none,
    /// `tcp_write_xmit` does not run (a receiver's ACK of data, a drained sender's ACK).
    pub(crate) fn push_pending_frames(&mut self, out: &mut Vec<Segment>) {
        if self.send_head() {
            self.write_xmit(0, out);
        }
    }

    /// `tcp_send_head`: the write queue holds an skb not yet sent.
    #[inline]
    pub(crate) fn send_head(&self) -> bool {
        self.unsent > 0 || self.fin_queued && !self.fin_sent
    }

    /// `tcp_write_xmit` with the socket's own Nagle setting (`tp->nonagle`).
    pub(crate) fn write_xmit(&mut self, push_one: u8, out: &mut Vec<Segment>) {
        let nonagle = self.nonagle;
        self.write_xmit_nonagle(push_one, nonagle, out);
    }

    /// `tcp_write_xmit`. `push_one` = 1: `tcp_write_wakeup`'s one segment, which no Nagle or cork
    /// rule holds; 2: a loss probe, one segment even if cwnd is full. `nonagle`: the
    /// `TCP_NAGLE_*` bits this push runs with.
    pub(crate) fn write_xmit_nonagle(&mut self, push_one: u8, nonagle: u8, out: &mut Vec<Segment>) {
        if !self.is_established() {
            return;
        }
        let mut sent = 0u32;
        let mut is_cwnd_limited = false;
        let mut is_rwnd_limited = false;
        // Segments left in the current skb and its bytes: a paced sender sends TSO skbs of
        // `tso_segs` segments, each leaving at once, and paces skb by skb.
        let (mut skb_left, mut skb_bytes, mut skb_prior_wstamp) = (0u32, 0u32, 0u64);
        // A new skb whose admission the host's qdisc decides (`set_qdisc_room`).
        let mut skb_fresh = false;
        loop {
            let has_data = self.unsent > 0;
            let fin_now = !has_data && self.fin_queued && !self.fin_sent;
            if !has_data && !fin_now {
                break;
            }
            let mss = self.sk.mss_cache;
            let mut len = if has_data { self.unsent.min(mss as u64) as u32 } else { 0 };
            // An EOR skb ends its segment: data beyond the mark is another skb.
            while self.eor_marks.front().is_some_and(|m| !m.after(self.snd_nxt())) {
                self.eor_marks.pop_front();
            }
            let eor_end = self.eor_marks.front().is_some_and(|&m| !(self.snd_nxt() + len).before(m));
            if let (true, Some(&m)) = (eor_end, self.eor_marks.front()) {
                len = m - self.snd_nxt();
            }
            // Nagle looks only at the last skb of the write queue (tcp_write_xmit passes
            // TCP_NAGLE_PUSH for the others).
            let last_skb = self.unsent == len as u64;
            // tcp_nagle_test: only the last skb of the queue is held (the others get
            // TCP_NAGLE_PUSH), never one carrying the FIN; tcp_nagle_check holds a partial one
            // while corked, or, Nagle on, while a previous small segment is unacknowledged
            // (Minshall).
            let nonagle_here = if last_skb { nonagle } else { NAGLE_PUSH };
            let carries_fin = self.fin_queued && self.unsent == len as u64;
            let nagle_holds = len > 0
                && len < mss
                && push_one != 1
                && nonagle_here & NAGLE_PUSH == 0
                && !carries_fin
                && (nonagle_here & NAGLE_CORK != 0
                    || (nonagle_here == 0 && self.sk.packets_out > 0 && self.snd_sml.after(self.snd_una())));
            if skb_left == 0 {
                self.pacing_after_send(std::mem::take(&mut skb_bytes), skb_prior_wstamp);
                if self.pacing_blocked() {
                    break;
                }
                if self.qdisc_refused && sent > 0 {
                    break;
                }
                // tcp_write_xmit tests cwnd, then Nagle, before TCP Small Queues: an skb Nagle
                // holds throttles nothing.
                let cwnd_full =
                    !fin_now && self.packets_in_flight() >= self.sk.snd_cwnd && !(push_one == 2 && sent == 0);
                if nagle_holds && !cwnd_full {
                    break;
                }
                if self.small_queue_check(0) {
                    break;
                }
                skb_left = self.tso_segs();
                skb_prior_wstamp = self.sk.wstamp_ns;
                skb_fresh = self.qdisc_room.is_some();
            }
            // tcp_cwnd_test (the final FIN is not held by cwnd).
            if !fin_now && self.packets_in_flight() >= self.sk.snd_cwnd && !(push_one == 2 && sent == 0) {
                is_cwnd_limited = true;
                break;
            }
            // tcp_snd_wnd_test: the segment must fit in the peer's window.
            let wnd_end = self.snd_una() + self.snd_wnd;
            if len > 0 && (self.snd_nxt() + len).after(wnd_end) {
                is_rwnd_limited = true;
                break;
            }
            if nagle_holds {
                break;
            }
            // The skb goes to the host's qdisc, which may refuse it (NET_XMIT_DROP): stop here.
            if skb_fresh {
                skb_fresh = false;
                if self.qdisc_refuses(None) {
                    break;
                }
            }
            let seq = self.snd_nxt();
            let mut flags = 0u8;
            if len > 0 {
                self.unsent -= len as u64;
                if self.unsent == 0 || eor_end {
                    flags |= TcpFlags::PSH; // tcp_mark_push on the last segment of a write
                }
            }
            if self.unsent == 0 && self.fin_queued && !self.fin_sent {
                flags |= TcpFlags::FIN;
                self.fin_sent = true;
                self.state = if self.state == TcpState::CloseWait { TcpState::LastAck } else { TcpState::FinWait1 };
            }
            let end_seq = seq + len + (flags & TcpFlags::FIN != 0) as u32;
            let prior_packets = self.sk.packets_out;
            self.rate_skb_sent_prepare();
            let now = self.now.ns();
            let skb = TxSkb {
                seq,
                end_seq,
                tcp_flags: flags,
                sacked: 0,
                tx_ns: now,
                first_tx_ns: self.first_tx_ns,
                delivered_ns: self.sk.delivered_mstamp_ns,
                delivered: self.sk.delivered,
                app_limited: self.sk.app_limited != 0,
            };
            self.rtx.push_back(skb);
            self.tsorted.push_back((seq, now));
            self.transmit(seq, len, flags, false, out);
            if skb_left > 1 && !eor_end {
                if let Some(s) = out.last_mut() {
                    s.skb_more = true; // more of this skb follow, unless the loop stops first
                }
            }
            // tcp_event_new_data_sent
            self.set_snd_nxt(end_seq);
            self.sk.packets_out += 1;
            if prior_packets == 0 || matches!(self.xmit_timer, Some((_, XmitTimer::LossProbe))) {
                self.rearm_rto();
            }
            // tcp_minshall_update
            if len < mss {
                self.snd_sml = end_seq;
            }
            sent += 1;
            // The EOR skb ends here; what follows starts a new one.
            skb_left = if eor_end { 1 } else { skb_left };
            skb_left -= 1;
            skb_bytes += len;
            if push_one > 0 {
                break;
            }
        }
        close_skb(out);
        if is_rwnd_limited {
            self.chrono_start(CHRONO_RWND_LIMITED);
        } else {
            self.chrono_stop(CHRONO_RWND_LIMITED);
        }
        self.pacing_after_send(skb_bytes, skb_prior_wstamp);
        is_cwnd_limited |= self.packets_in_flight() >= self.sk.snd_cwnd;
        if sent > 0 || is_cwnd_limited {
            self.cwnd_validate(is_cwnd_limited);
        }
        if sent > 0 && self.in_cwnd_reduction() {
            self.prr_out += sent;
        }
        if sent > 0 && push_one != 2 {
            self.schedule_loss_probe(false);
        }
        if sent == 0 && push_one == 0 {
            self.check_probe_timer();
        }
    }

    /// `tcp_rate_skb_sent`: the first packet after an idle period restarts the delivery clock.
    fn rate_skb_sent_prepare(&mut self) {
        if self.sk.packets_out == 0 {
            let now = self.now.ns();
            self.first_tx_ns = now;
            self.sk.delivered_mstamp_ns = now;
        }
    }

    /// `tcp_rate_check_app_limited`, as `tcp_sendmsg_locked` runs it before taking a write:
    /// the flight is application-limited when less than a segment waits unsent, nothing of
    /// the socket waits in the host's qdisc or NIC (`sk_wmem_alloc` below one skb's truesize:
    /// none of its data segments, which is what ccsim counts there), cwnd is not full and
    /// every lost segment has been retransmitted.
    pub(crate) fn rate_check_app_limited(&mut self) {
        if self.unsent < self.sk.mss_cache as u64
            && self.tsq_bytes == 0
            && self.packets_in_flight() < self.sk.snd_cwnd
            && self.sk.lost_out <= self.sk.retrans_out
        {
            self.sk.app_limited = (self.sk.delivered + self.packets_in_flight()).max(1);
        }
    }

    /// `tcp_cwnd_validate`: remember whether this window used all of cwnd.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if !self.snd_una().before(self.cwnd_usage_seq)
            || is_cwnd_limited
            || (!self.sk.is_cwnd_limited && self.sk.packets_out > self.sk.max_packets_out)
        {
            self.sk.is_cwnd_limited = is_cwnd_limited;
            self.sk.max_packets_out = self.sk.packets_out;
            self.cwnd_usage_seq = self.snd_nxt();
        }
        if self.sk.is_cwnd_limited() {
            self.snd_cwnd_stamp = self.now.ns();
        }
    }

    /// `tcp_xmit_retransmit_queue`: retransmit segments marked lost while cwnd allows.
    pub(crate) fn xmit_retransmit_queue(&mut self, out: &mut Vec<Segment>) {
        if self.sk.packets_out == 0 {
            return;
        }
        let mut rearm = false;
        // Resume at the hint: nothing below it waits for a retransmission.
        let hint = self.rtx_hint;
        let mut i = self.rtx.partition_point(|s| s.seq.before(hint));
        while i < self.rtx.len() {
            if self.pacing_blocked() {
                break;
            }
            if self.packets_in_flight() >= self.sk.snd_cwnd {
                break;
            }
            if self.sk.retrans_out >= self.sk.lost_out {
                break;
            }
            let sacked = self.rtx[i].sacked;
            if sacked & LOST == 0 || sacked & (SACKED_ACKED | SACKED_RETRANS) != 0 {
                i += 1;
                continue;
            }
            if self.small_queue_check(1) {
                break;
            }
            if self.qdisc_room.is_some() && self.qdisc_refuses(Some(i)) {
                break;
            }
            self.retransmit_skb(i, out);
            if self.in_cwnd_reduction() {
                self.prr_out += 1;
            }
            if i == 0 && !matches!(self.xmit_timer, Some((_, XmitTimer::ReoTimeout))) {
                rearm = true;
            }
            i += 1;
            if self.qdisc_refused {
                break;
            }
        }
        self.rtx_hint = self.rtx.get(i).map_or(self.snd_nxt(), |s| s.seq);
        if rearm {
            self.reset_rto_timer();
        }
    }

    /// `tcp_retransmit_skb` for the skb at `idx`: the retransmission counts as in flight.
    pub(crate) fn retransmit_skb(&mut self, idx: usize, out: &mut Vec<Segment>) {
        self.retransmit_skb_once(idx, out);
        self.rtx[idx].sacked |= SACKED_RETRANS;
        self.sk.retrans_out += 1;
        if self.undo.retrans < 0 {
            self.undo.retrans = 0;
        }
        self.undo.retrans += 1;
    }

    /// `__tcp_retransmit_skb`: put the skb at `idx` on the wire again.
    pub(crate) fn retransmit_skb_once(&mut self, idx: usize, out: &mut Vec<Segment>) {
        let now = self.now.ns();
        let skb = self.rtx[idx];
        let len = skb.end_seq - skb.seq - ((skb.tcp_flags & (TcpFlags::SYN | TcpFlags::FIN)) != 0) as u32;
        if skb.tcp_flags & TcpFlags::SYN != 0 {
            self.transmit_syn(skb.seq, out);
        } else {
            let prior_wstamp = self.sk.wstamp_ns;
            self.transmit(skb.seq, len, skb.tcp_flags, true, out);
            self.pacing_after_send(len, prior_wstamp);
        }
        // tcp_rate_skb_sent (from __tcp_transmit_skb): the retransmission takes a fresh
        // delivery-rate snapshot, as a new transmission would.
        let (first_tx_ns, delivered_ns) = (self.first_tx_ns, self.sk.delivered_mstamp_ns);
        let (delivered, app_limited) = (self.sk.delivered, self.sk.app_limited != 0);
        let s = &mut self.rtx[idx];
        s.tx_ns = now;
        if skb.tcp_flags & TcpFlags::SYN == 0 {
            s.first_tx_ns = first_tx_ns;
            s.delivered_ns = delivered_ns;
            s.delivered = delivered;
            s.app_limited = app_limited;
        }
        s.sacked |= EVER_RETRANS;
        // tcp_update_skb_after_send: the skb moves to the tail of the time-sorted list.
        self.tsorted.push_back((skb.seq, now));
        self.stats.total_retrans += 1;
        self.stats.bytes_retrans += len as u64;
        if self.undo.retrans_stamp == 0 {
            self.undo.retrans_stamp = self.ts_val();
        }
    }

    /// Current TSval: the millisecond clock (`tcp_time_stamp_ts`).
    pub(crate) fn ts_val(&self) -> u32 {
        (self.now.ns() / 1_000_000) as u32
    }

    /// `tcp_ecn_send` applied to the socket's ECT state; returns the codepoint to use.
    fn ecn_for(&mut self, new_data: bool, flags: &mut u8) -> Ecn {
        if self.sk.ecn_ok {
            if new_data {
                self.ect_xmit = true; // INET_ECN_xmit
                if self.ecn_queue_cwr {
                    self.ecn_queue_cwr = false;
                    *flags |= TcpFlags::CWR;
                }
            } else if !self.cc.needs_ecn() {
                self.ect_xmit = false; // INET_ECN_dontxmit: ACKs and retransmissions
            }
            if self.sk.ecn_demand_cwr {
                *flags |= TcpFlags::ECE;
            }
        }
        if self.ect_xmit {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    fn sack_options(&mut self, opts: &mut TcpOptions) {
        if !self.sack_ok {
            return;
        }
        let max = if self.ts_ok { 3 } else { 4 };
        let mut n = 0usize;
        if let Some(d) = self.dsack.take() {
            opts.sack[0] = (d.0.get(), d.1.get());
            n = 1;
        }
        for &b in &self.sack_recent {
            if n == max {
                break;
            }
            opts.sack[n] = (b.0.get(), b.1.get());
            n += 1;
        }
        opts.sack_len = n as u8;
    }

    /// Append an established connection's segment to `out` with its options (timestamps, SACK
    /// blocks): a blank segment copied from static memory, then each field written where the
    /// segment lies. Built on the stack and then copied, the segment was read back with wide
    /// loads while the narrow stores that had built it were still pending (a store-forwarding
    /// stall on every send).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push_segment<'o>(
        &mut self,
        out: &'o mut Vec<Segment>,
        seq: SeqNum,
        ack: SeqNum,
        len: u32,
        flags: u8,
        win: u16,
        ecn: Ecn,
        tstamp_ns: u64,
    ) -> &'o Segment {
        out.push(BLANK_SEGMENT);
        let seg = out.last_mut().expect("just pushed");
        seg.seq = seq.get();
        seg.ack = ack.get();
        seg.len = len;
        seg.flags = TcpFlags(flags);
        seg.win = win;
        seg.ecn = ecn;
        seg.tstamp_ns = tstamp_ns;
        if self.ts_ok {
            seg.opts.timestamp = Some((self.ts_val(), self.ts_recent));
        }
        self.sack_options(&mut seg.opts);
        seg
    }

    /// `__tcp_transmit_skb` for a data or FIN segment (never a SYN).
    pub(crate) fn transmit(&mut self, seq: SeqNum, len: u32, skb_flags: u8, retrans: bool, out: &mut Vec<Segment>) {
        let mut flags = (skb_flags & (TcpFlags::FIN | TcpFlags::PSH)) | TcpFlags::ACK;
        let new_data = len > 0 && !retrans && !seq.before(self.snd_nxt());
        let ecn = self.ecn_for(new_data, &mut flags);
        let win = self.select_window();
        let tstamp_ns = self.departure_stamp();
        let seg = self.push_segment(out, seq, self.rcv_nxt(), len, flags, win, ecn, tstamp_ns);
        if len > 0 && !self.tx_orphan {
            self.tsq_bytes += (len + seg.header_len()) as u64;
        }
        self.stats.segs_out += 1;
        if len > 0 {
            self.stats.data_segs_out += 1;
            self.stats.bytes_sent += len as u64;
            self.event_data_sent();
        }
        self.event_ack_sent(self.rcv_nxt());
    }

    /// `tcp_event_data_sent`.
    fn event_data_sent(&mut self) {
        let now = self.now.ns();
        if self.packets_in_flight() == 0 {
            self.cwnd_restart_after_idle();
            self.ca_event(CaEvent::TxStart);
        }
        self.lsndtime = now;
        self.sk.lsndtime_ns = now;
        // A reply within ato of the last received segment: interactive (pingpong) mode.
        if now.saturating_sub(self.ack.lrcvtime) < self.ack.ato {
            self.ack.pingpong = self.ack.pingpong.saturating_add(1);
        }
    }

    /// `tcp_cwnd_restart` via `tcp_slow_start_after_idle_check`.
    fn cwnd_restart_after_idle(&mut self) {
        if !self.cfg.slow_start_after_idle || self.lsndtime == 0 || self.cc.has_cong_control() {
            return;
        }
        let idle = self.now.ns().saturating_sub(self.lsndtime);
        let rto = self.icsk.rto.ns().max(1);
        if idle < rto {
            return;
        }
        self.ca_event(CaEvent::CwndRestart);
        self.sk.snd_ssthresh = self.current_ssthresh();
        let restart = self.cfg.init_cwnd.min(self.sk.snd_cwnd);
        let mut delta = idle / rto;
        let mut cwnd = self.sk.snd_cwnd;
        while delta > 0 && cwnd > restart {
            cwnd >>= 1;
            delta -= 1;
        }
        self.sk.snd_cwnd = cwnd.max(restart);
        self.snd_cwnd_stamp = self.now.ns();
    }

    /// `tcp_event_ack_sent`: an ACK for `rcv_nxt` went out.
    fn event_ack_sent(&mut self, rcv_nxt: SeqNum) {
        // Any ACK sent ends SACK compression.
        self.comp_sack.compressed_ack = 0;
        self.comp_sack.deadline = None;
        // The special DCTCP ACK for an older sequence does not cancel the delayed ACK
        // (27cde44a25 "do not cancel delay-AcK on DCTCP special ACK").
        if rcv_nxt != self.rcv_nxt() {
            return;
        }
        // tcp_dec_quickack_mode
        if self.ack.quick > 0 {
            let pkts = (self.ack.pending & ACK_SCHED != 0) as u32;
            if pkts >= self.ack.quick {
                self.ack.quick = 0;
                self.ack.ato = self.cfg.delack_min.ns();
            } else {
                self.ack.quick -= pkts;
            }
        }
        // inet_csk_clear_xmit_timer(ICSK_TIME_DACK)
        self.ack.pending = 0;
        self.sk.ack_timer_pending = false;
    }

    /// `__tcp_send_ack(sk, rcv_nxt)`: a pure ACK.
    pub(crate) fn send_ack_for(&mut self, rcv_nxt: SeqNum, ece_override: Option<bool>, out: &mut Vec<Segment>) {
        // __tcp_transmit_skb: every skb, a pure ACK too, moves the earliest departure time up to now.
        let tstamp_ns = self.departure_stamp();
        let mut flags = TcpFlags::ACK;
        let ecn = self.ecn_for(false, &mut flags);
        if let Some(ece) = ece_override {
            flags = if ece { flags | TcpFlags::ECE } else { flags & !TcpFlags::ECE };
        }
        let win = self.select_window();
        // tcp_acceptable_seq
        let seq = self.snd_nxt();
        self.push_segment(out, seq, rcv_nxt, 0, flags, win, ecn, tstamp_ns);
        self.stats.segs_out += 1;
        self.event_ack_sent(rcv_nxt);
    }

    /// `tcp_xmit_probe_skb(sk, 0)`: a bare ACK with seq = snd_una - 1, which the peer must
    /// answer with an ACK carrying its current window.
    pub(crate) fn send_probe_skb(&mut self, out: &mut Vec<Segment>) {
        let before_len = out.len();
        let r = self.rcv_nxt();
        self.send_ack_for(r, None, out);
        if let Some(seg) = out.get_mut(before_len) {
            seg.seq = (self.snd_una() - 1).get();
        }
    }

    /// `tcp_send_active_reset`: RST|ACK at `tcp_acceptable_seq` (snd_nxt), through
    /// `tcp_transmit_skb` like any other segment (timestamps included).
    pub(crate) fn send_active_reset(&mut self, out: &mut Vec<Segment>) {
        let tstamp_ns = self.departure_stamp();
        let win = self.select_window();
        let (seq, ack) = (self.snd_nxt(), self.rcv_nxt());
        self.push_segment(out, seq, ack, 0, TcpFlags::RST | TcpFlags::ACK, win, Ecn::NotEct, tstamp_ns);
        self.stats.segs_out += 1;
    }

    /// `tcp_v4_send_reset`: the answer to a segment that finds no socket. If it carries an ACK
    /// the RST takes its sequence from that ACK; otherwise the RST is at sequence 0 and ACKs
    /// everything the segment occupied. No options, window 0. A RST is never answered.
    pub(crate) fn send_reset_no_socket(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if seg.flags.has(TcpFlags::RST) {
            return;
        }
        let mut rst = BLANK_SEGMENT;
        if seg.flags.has(TcpFlags::ACK) {
            rst.seq = seg.ack;
            rst.flags = TcpFlags(TcpFlags::RST);
        } else {
            let occupied = seg.len + seg.flags.has(TcpFlags::SYN) as u32 + seg.flags.has(TcpFlags::FIN) as u32;
            rst.ack = seg.seq.wrapping_add(occupied);
            rst.flags = TcpFlags(TcpFlags::RST | TcpFlags::ACK);
        }
        rst.tstamp_ns = self.now.ns();
        out.push(rst);
    }

    /// `tcp_send_ack`.
    pub(crate) fn send_ack(&mut self, out: &mut Vec<Segment>) {
        let r = self.rcv_nxt();
        self.send_ack_for(r, None, out);
    }

    /// SYN or SYN-ACK (`tcp_transmit_skb` for a SYN, with `tcp_syn_options`/`tcp_synack_options`).
    pub(crate) fn transmit_syn(&mut self, seq: SeqNum, out: &mut Vec<Segment>) {
        let mut flags = TcpFlags::SYN;
        // tcp_advertise_mss / tcp_mss_clamp: the route's MSS, lowered to TCP_MAXSEG if that is set.
        let mut opts = TcpOptions { mss: Some(self.advmss().min(65535) as u16), ..TcpOptions::default() };
        let synack = self.state == TcpState::SynRecv;
        if synack {
            flags |= TcpFlags::ACK;
            opts.sack_permitted = self.sack_ok;
            if self.ts_ok {
                opts.timestamp = Some((self.ts_val(), self.ts_recent));
            }
            if self.snd_wscale_offered() {
                opts.wscale = Some(self.rcv_wscale);
            }
            // tcp_ecn_make_synack
            if self.sk.ecn_ok {
                flags |= TcpFlags::ECE;
            }
        } else {
            opts.sack_permitted = self.cfg.sack;
            if self.cfg.timestamps {
                opts.timestamp = Some((self.ts_val(), 0));
            }
            if self.cfg.window_scaling {
                opts.wscale = Some(self.rcv_wscale);
            }
            // tcp_ecn_send_syn. A retransmitted SYN goes without ECE|CWR (__tcp_retransmit_skb ->
            // tcp_ecn_clear_syn: RFC 3168 6.1.1.1 fallback, net.ipv4.tcp_ecn_fallback = 1); ECN
            // stays requested, so a SYN-ACK with ECE answering the first SYN still turns it on.
            let syn_retrans = self.rtx.front().is_some_and(|s| s.sacked & EVER_RETRANS != 0);
            if self.ecn_requested && !syn_retrans {
                flags |= TcpFlags::ECE | TcpFlags::CWR;
            }
        }
        let ecn = if self.ect_xmit { Ecn::Ect0 } else { Ecn::NotEct };
        let win = self.rcv_wnd.min(65535) as u16;
        let ack = if synack { self.rcv_nxt() } else { SeqNum(0) };
        let tstamp_ns = self.departure_stamp();
        out.push(Segment {
            seq: seq.get(),
            ack: ack.get(),
            len: 0,
            flags: TcpFlags(flags),
            win,
            ecn,
            opts,
            tstamp_ns,
            skb_more: false,
        });
        self.stats.segs_out += 1;
    }

    pub(crate) fn transmit_head_syn(&mut self, out: &mut Vec<Segment>) {
        let seq = self.iss;
        self.transmit_syn(seq, out);
        let now = self.now.ns();
        if let Some(s) = self.rtx.front_mut() {
            s.tx_ns = now;
            s.first_tx_ns = now;
        }
        self.set_snd_nxt(self.iss + 1);
        self.sk.packets_out = 1;
        self.rearm_rto();
    }

    fn snd_wscale_offered(&self) -> bool {
        self.cfg.window_scaling && self.snd_wscale_seen
    }

    /// `tcp_small_queue_check` (TCP Small Queues): stop sending while more than about 1 ms of
    /// this socket's data (at least two packets) waits in the host's qdisc and NIC, so that the
    /// host queue never becomes a second bottleneck buffer. `factor` doubles the limit for
    /// retransmissions.
    fn small_queue_check(&mut self, factor: u32) -> bool {
        let two_packets = 2 * (self.sk.mss_cache as u64 + 52);
        let mut limit = two_packets.max(self.sk.pacing_rate >> 10);
        if !self.pacing_on() {
            limit = limit.min(TCP_LIMIT_OUTPUT_BYTES);
        }
        limit <<= factor;
        if self.tsq_bytes > limit {
            // Always send if the retransmit queue is empty or holds one skb.
            if self.rtx.len() <= 1 {
                return false;
            }
            self.tsq_throttled = true;
            return true;
        }
        false
    }

    /// The host finished transmitting `bytes` of this socket's data (TX completion, which
    /// `tcp_wfree` turns into a `tcp_tsq_handler` run when the socket was throttled).
    /// TCP Small Queues stopped the sender until some of its data leaves the host.
    pub fn tsq_throttled(&self) -> bool {
        self.tsq_throttled
    }

    pub fn tsq_release(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        self.set_now(now);
        self.qdisc_refused = false;
        self.tsq_bytes = self.tsq_bytes.saturating_sub(bytes);
        if self.tsq_throttled {
            self.tsq_throttled = false;
            // tcp_tsq_write
            if self.is_established() {
                if self.sk.lost_out > self.sk.retrans_out && self.sk.snd_cwnd > self.packets_in_flight() {
                    self.xmit_retransmit_queue(out);
                }
                self.write_xmit(0, out);
            }
        }
    }

    /// The host's own qdisc dropped `seg`, a segment of this socket. In every case the freed skb
    /// returns its TSQ budget (`tcp_wfree`) and `__tcp_transmit_skb` enters CWR
    /// (`tcp_enter_cwr`) on the error. A segment without data (pure ACK, SYN, FIN) is lost
    /// (`__tcp_send_ack` does not retry; SYN and FIN wait for their timers). A RED drop
    /// ([`QdiscDrop::Congestion`], NET_XMIT_CN, which `net_xmit_eval` maps to success) leaves the
    /// segment sent, so it is lost and recovered like any loss. A tail drop
    /// ([`QdiscDrop::Tail`], NET_XMIT_DROP) does not count as a transmission: new data stays
    /// unsent (`tcp_write_xmit` stops before `tcp_event_new_data_sent`), a retransmission stays
    /// lost and is tried again (`tcp_retransmit_skb` marks it only on success). The try happens
    /// at the next ACK, TX completion or timer; nothing is sent from here.
    ///
    /// ccsim learns of drops once the socket's output has been queued, so they come back last
    /// first, and `attempted` is false for every tail drop after the socket's first one of that
    /// output: Linux stops at the first failure and would not have tried the others, so their
    /// counters (`segs_out`, `data_segs_out`, `bytes_sent`, `total_retrans`, ...) are taken back
    /// too. New data is undone from the tail of what was sent, and the earliest departure time
    /// goes back to the undone segment's stamp (`tcp_update_skb_after_send` runs only on
    /// success). A segment that cannot be undone that way (a loss probe, or data sent before
    /// others that were accepted) stays sent and lost, for TCP's loss detection to recover.
    pub fn on_local_drop(&mut self, now: SimTime, seg: &Segment, how: QdiscDrop) {
        self.set_now(now);
        let tail = if seg.len == 0 {
            None
        } else {
            self.tsq_bytes = self.tsq_bytes.saturating_sub((seg.len + seg.header_len()) as u64);
            match how {
                QdiscDrop::Tail { attempted } => Some(attempted),
                QdiscDrop::Congestion => None,
            }
        };
        if let Some(attempted) = tail {
            self.qdisc_refused = true;
            self.undo_transmission(seg, attempted);
        }
        self.enter_cwr_on_xmit_error();
        if tail.is_some() {
            // Nothing left in flight: no RTO or loss probe for a transmission that did not
            // happen, and the unsent data must not wait forever.
            if self.sk.packets_out == 0
                && matches!(self.xmit_timer, Some((_, XmitTimer::Retrans | XmitTimer::LossProbe)))
            {
                self.xmit_timer = None;
            }
            self.check_probe_timer();
        }
    }

    /// Take back the transmission of `seg`, a data segment sent at this instant (see
    /// [`Endpoint::on_local_drop`]).
    fn undo_transmission(&mut self, seg: &Segment, attempted: bool) {
        let now_ns = self.now.ns();
        let idx = self.rtx.partition_point(|s| s.seq.before(seg.seq_num()));
        let mut retrans = false;
        if let Some(&skb) = self.rtx.get(idx).filter(|s| s.seq == seg.seq_num() && s.tx_ns == now_ns) {
            let new_at_tail = idx + 1 == self.rtx.len()
                && skb.end_seq == self.snd_nxt()
                && skb.sacked == 0
                && skb.tcp_flags & TcpFlags::FIN == 0;
            retrans = skb.sacked & (SACKED_RETRANS | LOST) == SACKED_RETRANS | LOST;
            if new_at_tail {
                self.rtx.pop_back();
                if let Some(k) = self.tsorted.iter().rposition(|&e| e == (skb.seq, now_ns)) {
                    self.tsorted.remove(k);
                }
                self.set_snd_nxt(skb.seq);
                self.unsent += seg.len as u64;
                self.sk.packets_out -= 1;
            } else if retrans {
                self.rtx[idx].sacked &= !SACKED_RETRANS;
                self.sk.retrans_out -= 1;
                if seg.seq_num().before(self.rtx_hint) {
                    self.rtx_hint = seg.seq_num();
                }
            }
            if new_at_tail || retrans {
                self.sk.wstamp_ns = self.sk.wstamp_ns.min(seg.tstamp_ns);
                if self.in_cwnd_reduction() {
                    self.prr_out = self.prr_out.saturating_sub(1);
                }
            }
        }
        if attempted {
            self.stats.local_drops += 1;
        } else {
            self.stats.segs_out -= 1;
            self.stats.data_segs_out -= 1;
            self.stats.bytes_sent -= seg.len as u64;
            if retrans {
                self.stats.total_retrans -= 1;
                self.stats.bytes_retrans -= seg.len as u64;
                self.undo.retrans -= 1;
            }
        }
    }

    /// `__tcp_transmit_skb` on an error from the qdisc: `tcp_enter_cwr`.
    fn enter_cwr_on_xmit_error(&mut self) {
        if self.is_established() {
            self.enter_cwr();
        }
    }

    /// `tcp_check_probe_timer`: nothing in flight and data held back (by the peer's window or the
    /// qdisc): a probe timer, so the data does not wait forever.
    fn check_probe_timer(&mut self) {
        if self.sk.packets_out == 0 && self.unsent > 0 && self.xmit_timer.is_none() {
            let base = self.probe0_base();
            self.xmit_timer = Some((self.now + base, XmitTimer::Probe0));
        }
    }

    /// What the host's qdisc can take from this socket right now, in skbs (fq: its flow limit
    /// and the qdisc's limit, less what is queued), set by the host before the socket runs;
    /// None when not known (drops then come back through [`Endpoint::on_local_drop`]).
    pub fn set_qdisc_room(&mut self, skbs: Option<u32>) {
        self.qdisc_room = skbs;
    }

    /// One skb is about to go to the qdisc (the retransmission of `rtx[idx]`, or new data):
    /// true when the qdisc has no room, which `__tcp_transmit_skb` learns as NET_XMIT_DROP. The
    /// attempt counts as Linux counts it (`total_retrans` for a retransmission), TCP enters CWR,
    /// and the caller stops sending (`tcp_write_xmit` / `tcp_xmit_retransmit_queue` break).
    fn qdisc_refuses(&mut self, retransmit: Option<usize>) -> bool {
        match self.qdisc_room {
            None => false,
            Some(n) if n > 0 => {
                self.qdisc_room = Some(n - 1);
                false
            }
            Some(_) => {
                self.stats.local_drops += 1;
                self.sk.wstamp_ns = self.sk.wstamp_ns.max(self.now.ns());
                if let Some(i) = retransmit {
                    let skb = &mut self.rtx[i];
                    skb.sacked |= EVER_RETRANS;
                    self.stats.total_retrans += 1;
                    self.stats.bytes_retrans += (skb.end_seq - skb.seq) as u64;
                }
                self.enter_cwr_on_xmit_error();
                true
            }
        }
    }

    /// `tcp_needs_internal_pacing`: pacing configured (`TcpConfig::pacing`), or requested by the
    /// CC (`SK_PACING_NEEDED`, BBR), unless the host's fq qdisc paces the socket (SK_PACING_FQ,
    /// which fq stores over NEEDED at the socket's first packet).
    #[inline]
    pub(crate) fn needs_internal_pacing(&self) -> bool {
        self.pacing.internal
    }

    /// `sk_pacing_status != SK_PACING_NONE`: TCP advances the earliest departure time skb by
    /// skb (`tcp_update_skb_after_send`), internal pacing or fq.
    #[inline]
    fn pacing_on(&self) -> bool {
        self.pacing.on
    }

    /// Recompute the two pacing predicates after the socket's pacing status changed (its
    /// creation, the CC's init).
    pub(crate) fn update_pacing_status(&mut self) {
        let asked = self.cfg.pacing || self.sk.pacing_needed;
        self.pacing = PacingMode { internal: asked && !self.sk.pacing_fq, on: asked || self.sk.pacing_fq };
    }

    /// `__tcp_transmit_skb`: the earliest departure time moves up to now and stamps the skb
    /// (`skb_set_delivery_time(skb, tp->tcp_wstamp_ns)`).
    pub(crate) fn departure_stamp(&mut self) -> u64 {
        self.sk.wstamp_ns = self.sk.wstamp_ns.max(self.now.ns());
        self.sk.wstamp_ns
    }

    /// `tcp_pacing_check`: with internal pacing, is the next departure still in the future?
    fn pacing_blocked(&mut self) -> bool {
        if !self.needs_internal_pacing() || self.sk.wstamp_ns <= self.now.ns() {
            return false;
        }
        self.pacing_deadline = Some(SimTime(self.sk.wstamp_ns));
        true
    }

    /// One skb of `len` payload bytes left: `__tcp_transmit_skb` moved the earliest departure
    /// time up to now (from `prior`), then `tcp_update_skb_after_send` advances it by len /
    /// pacing rate, less the time the skb was late (at most half its length: "take into account
    /// OS jitter"). The first ten segments of a connection are not paced.
    fn pacing_after_send(&mut self, len: u32, prior: u64) {
        if !self.pacing_on() || len == 0 {
            return;
        }
        self.sk.wstamp_ns = self.sk.wstamp_ns.max(self.now.ns());
        let rate = self.sk.pacing_rate;
        if rate == 0 || self.stats.data_segs_out < 10 {
            return;
        }
        let mut len_ns = len as u64 * 1_000_000_000 / rate;
        len_ns -= (len_ns / 2).min(self.sk.wstamp_ns - prior);
        self.sk.wstamp_ns += len_ns;
    }

    /// `tcp_tso_segs` → `tcp_tso_autosize`: segments per skb for a paced sender — about 1 ms of
    /// data at the pacing rate (`sk_pacing_shift` = 10) plus `gso_max_size >> (min_rtt >> 9)`
    /// (`tcp_tso_rtt_log` = 9: a full 64 KB skb below 512 µs of min RTT), at most 64 KB, at least
    /// the CC's `min_tso_segs` or `net.ipv4.tcp_min_tso_segs`. Without pacing, one: segments
    /// leave back to back either way.
    pub(crate) fn tso_segs(&self) -> u32 {
        if !self.pacing_on() {
            return 1;
        }
        // sk_gso_max_size: GSO_LEGACY_MAX_SIZE less MAX_TCP_HEADER + 1 (320 + 1 on x86-64).
        const GSO_MAX_SIZE: u64 = 65_536 - 321;
        let mss = self.sk.mss_cache.max(1) as u64;
        let mut bytes = self.sk.pacing_rate >> 10;
        let r = self.sk.min_rtt_us >> 9;
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
        let bytes = bytes.min(GSO_MAX_SIZE);
        let min_tso = self.cc.min_tso_segs(&self.sk).unwrap_or(self.cfg.min_tso_segs);
        ((bytes / mss) as u32).max(min_tso).max(1)
    }

    /// `tcp_update_pacing_rate`: 200 % of cwnd/srtt in slow start, 120 % afterwards. Never
    /// called for a CC with `cong_control` (BBR sets `pacing_rate` itself).
    pub(crate) fn update_pacing_rate(&mut self) {
        let sk = &self.sk;
        let mut rate = sk.mss_cache as u64 * ((1_000_000 / 100) << 3);
        rate *= if sk.snd_cwnd < sk.snd_ssthresh / 2 {
            self.cfg.pacing_ss_ratio as u64
        } else {
            self.cfg.pacing_ca_ratio as u64
        };
        rate *= sk.snd_cwnd.max(sk.packets_out) as u64;
        if sk.srtt_us > 0 {
            rate /= sk.srtt_us as u64;
        }
        self.sk.pacing_rate = rate;
    }
}

/// The skb being built in `write_xmit` ends with the last segment emitted, also when the loop
/// stopped before the skb was full (every earlier segment in `out` is settled).
fn close_skb(out: &mut [Segment]) {
    if let Some(s) = out.last_mut() {
        s.skb_more = false;
    }
}
