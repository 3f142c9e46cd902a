//! Segment arrival by connection state (`tcp_rcv_state_process`, `tcp_rcv_established`) and
//! the three-way handshake with option and ECN negotiation (RFC 3168 6.1.1).

use crate::config::EcnMode;
use crate::endpoint::*;
use crate::input::{FLAG_DATA, FLAG_SLOWPATH};
use crate::segment::{Segment, TcpFlags};
use crate::seq::after;
use ccsim_cc::CongestionOps;
use ccsim_engine::SimTime;

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
                if !seg.flags.has(TcpFlags::ACK) || seg.ack != self.iss.wrapping_add(1) && !after(seg.ack, self.iss) {
                    return;
                }
                self.established_from_synrecv(seg);
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
            return self.rcv_fast_path(seg, out);
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
            && seg.seq == self.sk.rcv_nxt
            && !after(seg.ack, self.sk.snd_nxt)
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
            if self.sk.rcv_nxt == self.rcv_wup {
                self.ts_recent = val;
            }
        }
        self.sk.rx_cwr = false;
        if seg.len == 0 {
            self.tcp_ack(seg, 0, out);
            self.push_pending_frames(out); // tcp_data_snd_check
            return;
        }
        // tcp_queue_rcv, tcp_event_data_recv
        self.stats.hp_hits += 1;
        self.stats.data_segs_in += self.rx_gso_segs as u64;
        self.sk.rcv_nxt = seg.seq.wrapping_add(seg.len);
        self.stats.bytes_received += seg.len as u64;
        self.event_data_recv(seg, out);
        if seg.ack != self.sk.snd_una {
            self.tcp_ack(seg, FLAG_DATA, out);
            self.push_pending_frames(out);
        } else {
            self.snd_wl1 = seg.seq; // tcp_update_wl
        }
        self.ack_snd_check(out); // does nothing once an ACK went out with data
        self.auto_read(out);
    }

    /// The slow path of `tcp_rcv_established`.
    fn rcv_slow_path(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if let Some((val, ecr)) = seg.opts.timestamp.filter(|_| self.ts_ok) {
            self.rcv_tsecr = Some(ecr);
            // tcp_replace_ts_recent
            if !after(seg.seq, self.rcv_wup) {
                self.ts_recent = val;
            }
        } else {
            self.rcv_tsecr = None;
        }
        if seg.flags.has(TcpFlags::ACK) && !self.tcp_ack(seg, FLAG_SLOWPATH, out) {
            return; // discard
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
            self.bytes_read += n;
            self.cleanup_rbuf(n, out);
        }
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

    /// Options from a SYN or SYN-ACK (`tcp_parse_options` + `tcp_openreq_init`).
    fn negotiate_options(&mut self, seg: &Segment) {
        let o = &seg.opts;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamp.is_some();
        if let (true, Some(ws)) = (self.cfg.window_scaling, o.wscale) {
            self.snd_wscale = ws.min(14);
            self.snd_wscale_seen = true;
        } else {
            self.snd_wscale = 0;
            self.rcv_wscale = 0;
        }
        let peer_mss = o.mss.map_or(536, |m| m as u32);
        self.mss_clamp = peer_mss.min(self.cfg.advmss);
        // tcp_sync_mss: the payload per segment leaves room for the timestamp option.
        self.sk.mss_cache = self.mss_clamp - if self.ts_ok { 12 } else { 0 };
        // tcp_initialize_rcv_mss
        let hint = self.cfg.advmss.min(self.sk.mss_cache).min(self.rcv_wnd / 2).clamp(88, 536);
        self.ack.rcv_mss = hint;
        if let Some((val, _)) = o.timestamp {
            self.ts_recent = val;
        }
        self.irs = seg.seq;
        self.sk.rcv_nxt = seg.seq.wrapping_add(1);
        self.rcv_wup = self.sk.rcv_nxt;
        self.snd_wl1 = seg.seq;
        // The window in a SYN or SYN-ACK is never scaled.
        self.snd_wnd = seg.win as u32;
    }

    /// Passive open: a SYN arrives at a listener (`tcp_conn_request`).
    fn rcv_syn(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if !seg.flags.has(TcpFlags::SYN) || seg.flags.has(TcpFlags::ACK) {
            return;
        }
        self.negotiate_options(seg);
        // tcp_ecn_create_request: accept ECN if the SYN asks (ECE+CWR) and tcp_ecn allows it, or
        // the CC needs ECN. An ECT SYN is refused ECN unless the CC needs it.
        let needs_ecn = self.cc.needs_ecn();
        let asks = seg.flags.has(TcpFlags::ECE) && seg.flags.has(TcpFlags::CWR);
        let allowed = self.cfg.ecn != EcnMode::Off;
        self.sk.ecn_ok = asks && ((!seg.ecn.is_ect() && allowed) || needs_ecn);
        // tcp_assign_congestion_control: a CC that needs ECN marks everything ECT from the start.
        self.sk.ect_xmit = needs_ecn && self.cfg.syn_ect;
        self.state = TcpState::SynRecv;
        let iss = self.iss;
        self.queue_control_skb(iss, TcpFlags::SYN | TcpFlags::ACK);
        self.transmit_head_syn(out);
    }

    /// Active open: the SYN-ACK arrives (`tcp_rcv_synsent_state_process`).
    fn rcv_synack(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if !seg.flags.has(TcpFlags::SYN) || !seg.flags.has(TcpFlags::ACK) || seg.ack != self.iss.wrapping_add(1) {
            return;
        }
        self.negotiate_options(seg);
        // tcp_ecn_rcv_synack: ECN is on only if we asked and the SYN-ACK has ECE without CWR.
        self.sk.ecn_ok = self.ecn_requested && seg.flags.has(TcpFlags::ECE) && !seg.flags.has(TcpFlags::CWR);
        if !self.sk.ecn_ok && !self.cc.needs_ecn() {
            self.sk.ect_xmit = false;
        }
        self.ack_syn(seg.ack);
        self.state = TcpState::Established;
        self.init_transfer();
        // tcp_finish_connect: predict at once only without window scaling.
        if self.snd_wscale == 0 {
            self.fast_path_on();
        } else {
            self.pred_wnd = None;
        }
        self.send_ack(out);
        self.push_pending_frames(out);
    }

    fn established_from_synrecv(&mut self, seg: &Segment) {
        self.ack_syn(self.iss.wrapping_add(1));
        self.snd_wnd = (seg.win as u32) << self.snd_wscale;
        self.snd_wl1 = seg.seq;
        self.state = TcpState::Established;
        self.init_transfer();
        self.fast_path_on();
    }

    /// The SYN (or SYN-ACK) is acknowledged: take its RTT sample (Karn: only if not retransmitted).
    fn ack_syn(&mut self, ack: u32) {
        if let Some(s) = self.rtx.pop_front() {
            if s.sacked & EVER_RETRANS == 0 {
                let rtt_us = (self.now.ns().saturating_sub(s.tx_ns) / 1000) as i64;
                self.update_rtt_min(rtt_us.max(1));
                self.rtt_estimator(rtt_us);
                self.set_rto();
            } else {
                self.stats.total_retrans += 0;
            }
        }
        self.sk.snd_una = ack;
        self.sk.snd_nxt = ack;
        self.sk.packets_out = 0;
        self.high_seq = ack;
        self.highest_sack = ack;
        self.snd_sml = ack;
        self.rack_end_seq = ack;
        self.cwnd_usage_seq = ack;
        self.write_seq = ack;
        self.backoff = 0;
        self.xmit_timer = None;
    }

    /// `tcp_init_transfer`: initial cwnd, then `tcp_init_congestion_control`.
    fn init_transfer(&mut self) {
        self.sk.snd_cwnd = if self.stats.rto_count > 1 { 1 } else { self.cfg.init_cwnd };
        self.snd_cwnd_stamp = self.now.ns();
        self.init_congestion_control();
        // tcp_rcv_state_process: `if (!icsk_ca_ops->cong_control) tcp_update_pacing_rate(sk)`.
        if !self.has_cong_control() {
            self.update_pacing_rate();
        }
    }
}
