//! Segment arrival: `tcp_v4_do_rcv` hands the segment to `tcp_rcv_state_process`, which
//! dispatches on the connection state, and `tcp_rcv_established` (header prediction's fast path
//! and the slow path) for a synchronized connection.

use crate::endpoint::*;
use crate::input::{FLAG_DATA, FLAG_SLOWPATH};
use crate::segment::{Segment, TcpFlags};
use ccsim_engine::SimTime;

/// `net.ipv4.tcp_invalid_ratelimit`: HZ / 2.
const OOW_RATELIMIT_NS: u64 = 500_000_000;

impl Endpoint {
    /// Process a GRO skb: `seg` carries the payload of `gso_segs` segments of `gso_size` bytes
    /// (the last may be shorter), merged by the receiving host's NIC path.
    pub fn on_segment_gro(
        &mut self,
        now: SimTime,
        seg: &Segment,
        gso_size: u32,
        gso_segs: u32,
        out: &mut Vec<Segment>,
    ) {
        self.rx_gso_segs = gso_segs.max(1);
        self.rx_gso_size = gso_size;
        self.on_segment(now, seg, out);
        self.rx_gso_segs = 1;
        self.rx_gso_size = 0;
    }

    /// Process one incoming segment at `now`; segments to send are appended to `out`.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment, out: &mut Vec<Segment>) {
        self.set_now(now);
        // tcp_segs_in: a GRO skb counts its segments.
        self.stats.segs_in += self.rx_gso_segs as u64;
        if self.unhashed {
            // __inet_lookup_skb finds no socket: tcp_v4_rcv → tcp_v4_send_reset.
            return self.send_reset_no_socket(seg, out);
        }
        if seg.flags.has(TcpFlags::RST) {
            return; // resets are not modelled
        }
        match self.state {
            TcpState::Closed => {}
            TcpState::Listen => self.rcv_syn(seg, out),
            TcpState::SynSent => self.rcv_synack(seg, out),
            TcpState::SynRecv => {
                if seg.flags.has(TcpFlags::SYN) && !seg.flags.has(TcpFlags::ACK) {
                    // Retransmitted SYN: answer with the SYN-ACK again.
                    let iss = self.iss;
                    self.transmit_syn(iss, out);
                    return;
                }
                if !seg.flags.has(TcpFlags::ACK) || seg.ack_num() != self.iss + 1 && !seg.ack_num().after(self.iss) {
                    return;
                }
                self.established_from_synrecv(seg, out);
                // The ACK that completes the handshake takes tcp_rcv_state_process's path.
                self.rcv_slow_path(seg, out);
            }
            _ => self.rcv_established(seg, out),
        }
    }

    /// `tcp_rcv_established`: header prediction's fast path for the in-order segment that
    /// carries exactly what was predicted, the slow path for everything else. Other states
    /// than ESTABLISHED take the slow path, as `tcp_rcv_state_process` does.
    fn rcv_established(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if self.state == TcpState::Established && self.header_predicted(seg) {
            // Data goes the slow way ("goto step5") when its truesize does not fit in what the
            // socket has reserved (`sk_forward_alloc`).
            // Data ending beyond the window is validated by the slow path (Linux 6.17,
            // 9ca48d616ed7).
            let truesize = self.rx_truesize();
            let beyond = (seg.seq_num() + seg.len).after(self.rcv_nxt() + self.receive_window());
            if seg.len == 0 || (!beyond && truesize <= self.rcvbuf.forward_alloc) {
                return self.rcv_fast_path(seg, out);
            }
        }
        self.rcv_slow_path(seg, out);
    }

    /// The header-prediction test of `tcp_rcv_established`: flags are ACK (PSH ignored), the
    /// window is the predicted one, the options are the usual ones (the aligned timestamp when
    /// timestamps are on, none otherwise), the segment is the next in sequence, it ACKs nothing
    /// unsent, and PAWS holds (`rcv_tsval` not older than `ts_recent`).
    fn header_predicted(&self, seg: &Segment) -> bool {
        let Some(wnd) = self.pred_wnd else { return false };
        let o = &seg.opts;
        seg.flags.0 & !TcpFlags::PSH == TcpFlags::ACK
            && seg.win == wnd
            && seg.seq_num() == self.rcv_nxt()
            && !seg.ack_num().after(self.snd_nxt())
            && o.sack_len == 0
            && o.mss.is_none()
            && o.wscale.is_none()
            && !o.sack_permitted
            && match o.timestamp {
                Some((val, _)) => self.ts_ok && val.wrapping_sub(self.ts_recent) as i32 >= 0,
                None => !self.ts_ok,
            }
    }

    /// The fast path of `tcp_rcv_established`: a pure ACK goes to `tcp_ack` without
    /// `FLAG_SLOWPATH` ("bulk data transfer: sender"); in-order data is queued, and `tcp_ack`
    /// runs only when the segment acknowledges something new ("bulk data transfer: receiver").
    fn rcv_fast_path(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        // The prediction admitted a timestamp exactly when timestamps are on. Predicted segments
        // are in the window; seq <= rcv_wup reduces to rcv_nxt == rcv_wup (__tcp_replace_ts_recent).
        self.rcv_tsecr = seg.opts.timestamp.map(|(_, ecr)| ecr);
        if let Some((val, _)) = seg.opts.timestamp {
            if self.rcv_nxt() == self.rcv_wup {
                self.ts_recent = val;
            }
        }
        self.sk.rx_cwr = false;
        if seg.len == 0 {
            self.tcp_ack(seg, 0, out);
            self.push_pending_frames(out); // tcp_data_snd_check
            return;
        }
        // tcp_rcv_rtt_measure_ts, tcp_queue_rcv, tcp_event_data_recv
        self.rcv_rtt_measure_ts(seg.len);
        self.stats.hp_hits += 1;
        self.stats.data_segs_in += self.rx_gso_segs as u64;
        self.set_rcv_nxt(seg.seq_num() + seg.len);
        self.stats.bytes_received += seg.len as u64;
        let truesize = self.rx_truesize();
        self.rcvbuf.charge_queue(seg.len, truesize);
        self.event_data_recv(seg, out);
        if seg.ack_num() != self.snd_una() {
            self.tcp_ack(seg, FLAG_DATA, out);
            self.push_pending_frames(out);
        } else {
            self.snd_wl1 = seg.seq_num(); // tcp_update_wl
        }
        self.ack_snd_check(out); // does nothing once an ACK went out with data
        self.auto_read(out);
    }

    /// The slow path of `tcp_rcv_established`.
    fn rcv_slow_path(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        // tcp_validate_incoming, step 1: an unacceptable segment is answered with a duplicate
        // ACK and dropped.
        let end = seg.seq_num() + seg.len + seg.flags.has(TcpFlags::SYN) as u32 + seg.flags.has(TcpFlags::FIN) as u32;
        if self.sequence_unacceptable(seg.seq_num(), end) {
            if !self.oow_rate_limited(seg) {
                self.send_dupack(seg, end, out);
            }
            return;
        }
        if let Some((val, ecr)) = seg.opts.timestamp.filter(|_| self.ts_ok) {
            self.rcv_tsecr = Some(ecr);
            // tcp_replace_ts_recent
            if !seg.seq_num().after(self.rcv_wup) {
                self.ts_recent = val;
            }
        } else {
            self.rcv_tsecr = None;
        }
        if seg.flags.has(TcpFlags::ACK) && !self.tcp_ack(seg, FLAG_SLOWPATH, out) {
            return; // discard
        }
        if self.unhashed {
            return; // LAST_ACK ended in tcp_done
        }
        self.rcv_rtt_measure_ts(seg.len + seg.flags.has(TcpFlags::FIN) as u32);
        // tcp_rcv_state_process, step 7: after close() or SHUT_RD, data beyond rcv_nxt in
        // FIN-WAIT (or, below rcv_nxt, in CLOSE-WAIT, CLOSING, LAST-ACK) aborts the connection
        // (TCPAbortOnData): tcp_reset, and the segment is answered with a RST.
        let beyond = !seg.seq_num().before(self.rcv_nxt());
        let step7_abort = match self.state {
            TcpState::FinWait1 | TcpState::FinWait2 => true,
            TcpState::CloseWait | TcpState::Closing | TcpState::LastAck => !beyond,
            _ => false,
        };
        let fin = seg.flags.has(TcpFlags::FIN) as u32;
        let data_end = seg.seq_num() + seg.len;
        if step7_abort && self.sk_shutdown & RCV_SHUTDOWN != 0 && seg.len + fin > 0 && data_end.after(self.rcv_nxt()) {
            self.done();
            self.send_reset_no_socket(seg, out);
            return;
        }
        self.data_queue(seg, out);
        self.push_pending_frames(out); // tcp_data_snd_check
        self.ack_snd_check(out);
        self.auto_read(out);
    }

    /// An application blocked in read() consumes new data at once (tcp_recvmsg ->
    /// tcp_cleanup_rbuf).
    fn auto_read(&mut self, out: &mut Vec<Segment>) {
        if self.cfg.auto_read && self.readable() > 0 {
            let n = self.readable();
            self.account_read(n, out);
        }
    }

    /// `tcp_oow_rate_limited`: a segment without data (or a SYN) that is out of window gets at
    /// most one duplicate ACK per `net.ipv4.tcp_invalid_ratelimit` (500 ms); data always does.
    fn oow_rate_limited(&mut self, seg: &Segment) -> bool {
        if seg.len > 0 && !seg.flags.has(TcpFlags::SYN) {
            return false;
        }
        let now = self.now.ns();
        if let Some(last) = self.last_oow_ack_ns {
            if now.saturating_sub(last) < OOW_RATELIMIT_NS {
                return true;
            }
        }
        self.last_oow_ack_ns = Some(now);
        false
    }

    /// `tcp_send_dupack`: data that was already received is D-SACKed, with quick ACKs.
    fn send_dupack(&mut self, seg: &Segment, end: crate::seq::SeqNum, out: &mut Vec<Segment>) {
        let seq = seg.seq_num();
        if seg.len > 0 && seq.before(self.rcv_nxt()) {
            self.enter_quickack_mode(crate::recv::MAX_QUICKACKS);
            let end = if end.after(self.rcv_nxt()) { self.rcv_nxt() } else { end };
            if self.sack_ok {
                self.dsack = Some((seq, end));
            }
        }
        self.send_ack(out);
    }

    /// `tcp_fast_path_check`: predict again once nothing is out of order (the receive window
    /// is never zero and urgent data is not modelled).
    pub(crate) fn fast_path_check(&mut self) {
        if self.ofo.is_empty() && self.rcv_wnd > 0 {
            self.fast_path_on();
        }
    }

    /// `tcp_fast_path_on`: predict the current send window.
    pub(crate) fn fast_path_on(&mut self) {
        self.pred_wnd = Some((self.snd_wnd >> self.snd_wscale).min(u16::MAX as u32) as u16);
    }
}
