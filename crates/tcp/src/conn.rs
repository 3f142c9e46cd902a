//! The three-way handshake (`tcp_conn_request`, `tcp_rcv_synsent_state_process`, the SYN-RECV
//! arm of `tcp_rcv_state_process`) with option and ECN negotiation (RFC 3168 6.1.1).

use crate::config::EcnMode;
use crate::endpoint::*;
use crate::segment::{Segment, TcpFlags};
use crate::seq::SeqNum;
use ccsim_cc::CongestionOps;

/// `TCP_MIN_SND_MSS` (include/net/tcp.h): the smallest MSS Linux sends with, so a
/// tiny announced MSS cannot make it send (or the option room make it compute) empty segments.
const TCP_MIN_SND_MSS: u32 = 48;

impl Endpoint {
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
            self.no_window_scaling();
        }
        if self.state == TcpState::Listen {
            // tcp_openreq_init_rwin: the SYN-ACK's window and scale.
            self.select_initial_window(self.cfg.window_scaling && o.wscale.is_some());
        }
        // tcp_parse_options ignores an MSS option of 0 (the default, 536, stays).
        let peer_mss = o.mss.filter(|&m| m != 0).map_or(536, |m| m as u32);
        // tcp_parse_options clamps the peer's MSS to TCP_MAXSEG; the route caps it at advmss.
        self.mss_clamp = peer_mss.min(self.advmss());
        // tcp_sync_mss (__tcp_mtu_to_mss): never below TCP_MIN_SND_MSS, whatever the peer
        // announced; the payload per segment leaves room for the timestamp option.
        self.sk.mss_cache = self.mss_clamp.max(TCP_MIN_SND_MSS) - if self.ts_ok { 12 } else { 0 };
        // tcp_initialize_rcv_mss
        let hint = self.advmss().min(self.sk.mss_cache).min(self.rcv_wnd / 2).clamp(88, 536);
        self.ack.rcv_mss = hint;
        if let Some((val, _)) = o.timestamp {
            self.ts_recent = val;
        }
        self.irs = seg.seq_num();
        self.set_rcv_nxt(seg.seq_num() + 1);
        self.rcv_wup = self.rcv_nxt();
        self.snd_wl1 = seg.seq_num();
        // The window in a SYN or SYN-ACK is never scaled.
        self.snd_wnd = seg.win as u32;
    }

    /// Passive open: a SYN arrives at a listener (`tcp_conn_request`).
    pub(crate) fn rcv_syn(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
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
        self.ect_xmit = needs_ecn && self.cfg.syn_ect;
        self.state = TcpState::SynRecv;
        let iss = self.iss;
        self.queue_control_skb(iss, TcpFlags::SYN | TcpFlags::ACK);
        self.transmit_head_syn(out);
    }

    /// Active open: the SYN-ACK arrives (`tcp_rcv_synsent_state_process`).
    pub(crate) fn rcv_synack(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        if !seg.flags.has(TcpFlags::SYN) || !seg.flags.has(TcpFlags::ACK) || seg.ack_num() != self.iss + 1 {
            return;
        }
        self.negotiate_options(seg);
        // tcp_ecn_rcv_synack: ECN is on only if we asked and the SYN-ACK has ECE without CWR.
        self.sk.ecn_ok = self.ecn_requested && seg.flags.has(TcpFlags::ECE) && !seg.flags.has(TcpFlags::CWR);
        if !self.sk.ecn_ok && !self.cc.needs_ecn() {
            self.ect_xmit = false;
        }
        self.ack_syn(seg.ack_num());
        self.state = TcpState::Established;
        // tcp_finish_connect: icsk_ack.lrcvtime = tcp_jiffies32; the SYN-ACK went through
        // tcp_ack (rcv_tstamp).
        self.ack.lrcvtime = self.now.ns();
        self.rcv_tstamp = self.now.ns();
        self.init_transfer(out);
        // tcp_finish_connect: predict at once only without window scaling.
        if self.snd_wscale == 0 {
            self.fast_path_on();
        } else {
            self.pred_wnd = None;
        }
        self.send_ack(out);
        self.push_pending_frames(out);
    }

    pub(crate) fn established_from_synrecv(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        self.ack_syn(self.iss + 1);
        self.snd_wnd = (seg.win as u32) << self.snd_wscale;
        self.snd_wl1 = seg.seq_num();
        self.state = TcpState::Established;
        // tcp_create_openreq_child: icsk_ack.lrcvtime and rcv_tstamp = tcp_jiffies32.
        self.ack.lrcvtime = self.now.ns();
        self.rcv_tstamp = self.now.ns();
        self.init_transfer(out);
        self.fast_path_on();
    }

    /// The SYN (or SYN-ACK) is acknowledged: take its RTT sample (Karn: only if not retransmitted).
    fn ack_syn(&mut self, ack: SeqNum) {
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
        self.set_snd_una(ack);
        self.set_snd_nxt(ack);
        self.sk.packets_out = 0;
        self.high_seq = ack;
        self.highest_sack = ack;
        self.snd_sml = ack;
        self.rack.end_seq = ack;
        self.cwnd_usage_seq = ack;
        self.write_seq = ack;
        self.icsk.backoff = 0;
        self.xmit_timer = None;
    }

    /// `tcp_init_transfer`: initial cwnd, then `tcp_init_congestion_control`.
    fn init_transfer(&mut self, out: &mut Vec<Segment>) {
        self.sk.snd_cwnd = if self.stats.rto_count > 1 { 1 } else { self.cfg.init_cwnd };
        self.snd_cwnd_stamp = self.now.ns();
        self.init_congestion_control(out);
        self.init_buffer_space();
        // tcp_rcv_state_process: `if (!icsk_ca_ops->cong_control) tcp_update_pacing_rate(sk)`.
        if !self.has_cong_control() {
            self.update_pacing_rate();
        }
    }
}
