//! The receive side of tcp_input.c: `tcp_data_queue`, out-of-order queue and SACK blocks,
//! `tcp_event_data_recv` (ato estimation, quick-ACK), `__tcp_ecn_check_ce`, and the ACK
//! decision `__tcp_ack_snd_check` / `tcp_send_delayed_ack`.

use crate::endpoint::*;
use crate::segment::{Ecn, Segment, TcpFlags};
use crate::seq::SeqNum;
use ccsim_cc::{CaEvent, CongestionOps};
use ccsim_engine::SimTime;

/// `TCP_MAX_QUICKACKS`.
pub(crate) const MAX_QUICKACKS: u32 = 16;
/// `TCP_PINGPONG_THRESH`.
const PINGPONG_THRESH: u32 = 1;
/// `net.ipv4.tcp_comp_sack_nr` and `tcp_comp_sack_delay_ns`.
const COMP_SACK_NR: u32 = 44;
const COMP_SACK_DELAY_NS: u64 = 1_000_000;
/// `TCP_FASTRETRANS_THRESH`.
const FASTRETRANS_THRESH: u32 = 3;
/// `TCP_NUM_SACKS`.
const NUM_SACKS: usize = 4;
/// `TCP_SACK_BLOCKS_EXPECTED`: the blocks an ACK is counted on to carry.
const SACK_BLOCKS_EXPECTED: usize = 2;

/// `icsk_ack.pending` bits.
pub(crate) const ACK_SCHED: u8 = 1;
pub(crate) const ACK_TIMER: u8 = 2;
pub(crate) const ACK_PUSHED: u8 = 4;
pub(crate) const ACK_PUSHED2: u8 = 8;
pub(crate) const ACK_NOW: u8 = 16;
/// `ICSK_ACK_NOMEM`: an in-order skb found no room in the receive buffer; the next segment
/// advertises a zero window.
pub(crate) const ACK_NOMEM: u8 = 32;
/// `tcp_event_data_recv` grows the window only for skbs of at least 128 bytes.
const GROW_MIN_LEN: u32 = 128;

/// The delayed-ACK engine (`icsk->icsk_ack`).
#[derive(Clone, Debug)]
pub(crate) struct AckState {
    pub pending: u8,
    pub quick: u32,
    pub pingpong: u32,
    /// Current delayed-ACK timeout (`ato`), 0 until the first data segment.
    pub ato: u64,
    pub timeout: SimTime,
    pub lrcvtime: u64,
    pub rcv_mss: u32,
}

/// SACK compression (`struct tcp_sock`: `compressed_ack`, `compressed_ack_rcv_nxt`,
/// `dup_ack_counter`, and the `compressed_ack_timer` deadline), which `__tcp_ack_snd_check`,
/// `tcp_compressed_ack_kick` and `tcp_event_ack_sent` keep.
#[derive(Clone, Debug)]
pub(crate) struct SackCompression {
    /// ACKs held back (`compressed_ack`).
    pub compressed_ack: u32,
    /// rcv_nxt the duplicate-ACK count is for (`compressed_ack_rcv_nxt`).
    pub compressed_ack_rcv_nxt: SeqNum,
    /// Duplicate ACKs sent at once for that rcv_nxt (`dup_ack_counter`).
    pub dup_ack_counter: u32,
    /// When `compressed_ack_timer` fires.
    pub deadline: Option<SimTime>,
}

impl Endpoint {
    /// `inet_csk_in_pingpong_mode`.
    pub(crate) fn in_pingpong_mode(&self) -> bool {
        self.ack.pingpong >= PINGPONG_THRESH
    }

    /// `tcp_in_quickack_mode`.
    fn in_quickack_mode(&self) -> bool {
        self.ack.quick > 0 && !self.in_pingpong_mode()
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, max: u32) {
        let mut q = self.rcv_wnd / (2 * self.ack.rcv_mss.max(1));
        if q == 0 {
            q = 2;
        }
        q = q.min(max);
        if q > self.ack.quick {
            self.ack.quick = q;
        }
    }

    /// `tcp_enter_quickack_mode`.
    pub(crate) fn enter_quickack_mode(&mut self, max: u32) {
        self.incr_quickack(max);
        self.ack.pingpong = 0;
        self.ack.ato = self.cfg.delack_min.ns();
    }

    fn schedule_ack(&mut self) {
        self.ack.pending |= ACK_SCHED;
    }

    /// `tcp_data_queue`: accept the payload (and FIN) of an incoming segment.
    pub(crate) fn data_queue(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        let fin = seg.flags.has(TcpFlags::FIN);
        // tcp_ecn_accept_cwr (also on pure ACKs): the sender reacted; stop echoing, and ACK
        // data at once (9aee40006190, Linux 5.3; `TcpConfig::cwr_ack_now`) -- unless the module
        // keeps delaying it (FreeBSD dctcp_ecnpkt_handler, which reads the CWR bit as
        // CCF_TCPHDR_CWR).
        self.sk.rx_cwr = seg.flags.has(TcpFlags::CWR);
        if seg.flags.has(TcpFlags::CWR) {
            self.sk.ecn_demand_cwr = false;
            if seg.len > 0 && !self.sk.delack_on_cwr && self.cfg.cwr_ack_now {
                self.ack.pending |= ACK_NOW;
            }
        }
        if seg.len == 0 && !fin {
            return;
        }
        self.stats.data_segs_in += if seg.len > 0 { self.rx_gso_segs as u64 } else { 0 };
        let mut seq = seg.seq_num();
        let end = seg.seq_num() + seg.len + fin as u32;
        if !end.after(self.rcv_nxt()) {
            // A complete duplicate: D-SACK it and ACK at once.
            self.dsack_set(seq, end);
            self.enter_quickack_mode(MAX_QUICKACKS);
            self.schedule_ack();
            return;
        }
        // Out of the window (a zero-window probe, say); in-order data is taken whenever the
        // window is open, and a bare FIN even when it is closed.
        let rwin = self.receive_window();
        let bare_fin = seg.len == 0 && seq == self.rcv_nxt();
        if (!seq.before(self.rcv_nxt() + rwin) && !bare_fin) || (seq.before(self.rcv_nxt()) && rwin == 0) {
            self.enter_quickack_mode(MAX_QUICKACKS);
            self.schedule_ack();
            return;
        }
        if seq.before(self.rcv_nxt()) {
            // Partial duplicate: D-SACK the old part, queue the rest.
            self.dsack_set(seq, self.rcv_nxt());
            seq = self.rcv_nxt();
        }
        if seq == self.rcv_nxt() {
            let new_bytes = end - seq - fin as u32;
            // tcp_try_rmem_schedule: no room in the buffer -- advertise a zero window at once,
            // and drop the data unless the receive queue is empty.
            let truesize = self.rx_truesize();
            if new_bytes > 0 && !self.try_rmem_schedule(seg.len) {
                self.ack.pending |= ACK_NOMEM | ACK_NOW;
                self.schedule_ack();
                if self.rcvbuf.queue_len() > 0 {
                    return;
                }
            }
            if new_bytes > 0 {
                self.rcvbuf.charge_queue(new_bytes, truesize);
            }
            self.set_rcv_nxt(end);
            self.stats.bytes_received += new_bytes as u64;
            if fin {
                self.peer_fin = true;
            }
            // Only a segment with payload updates the ACK engine (`if (skb->len)
            // tcp_event_data_recv`); a bare FIN leaves ato as it was -- 0 before any data, so the
            // delayed ACK tcp_fin schedules goes out at once.
            if seg.len > 0 {
                self.event_data_recv(seg, out);
            }
            if !self.ofo.is_empty() {
                self.ofo_queue();
                // RFC 5681 4.2: ACK at once when a gap is filled.
                if self.ofo.is_empty() {
                    self.ack.pending |= ACK_NOW;
                }
            }
            self.sack_remove();
            self.fast_path_check();
            if fin {
                self.tcp_fin(out);
            }
        } else {
            self.data_queue_ofo(seq, end, seg, out);
        }
    }

    /// `tcp_fin`: the peer closed its direction.
    fn tcp_fin(&mut self, out: &mut Vec<Segment>) {
        self.schedule_ack();
        self.sk_shutdown |= RCV_SHUTDOWN;
        match self.state {
            TcpState::SynRecv | TcpState::Established => {
                // CLOSE_WAIT, and the connection turns interactive (delayed ACK for the FIN).
                self.state = TcpState::CloseWait;
                self.ack.pingpong = PINGPONG_THRESH;
            }
            TcpState::FinWait1 => {
                // Simultaneous close: ACK the FIN at once.
                self.send_ack(out);
                self.state = TcpState::Closing;
            }
            TcpState::FinWait2 => {
                self.send_ack(out);
                self.state = TcpState::TimeWait;
            }
            _ => {}
        }
    }

    /// `tcp_ofo_queue`: pull now-contiguous data out of the out-of-order queue.
    fn ofo_queue(&mut self) {
        let mut moved = 0u32;
        while let Some(&(s, e)) = self.ofo.first() {
            if s.after(self.rcv_nxt()) {
                break;
            }
            moved += e - s;
            if e.after(self.rcv_nxt()) {
                self.stats.bytes_received += (e - self.rcv_nxt()) as u64;
                self.set_rcv_nxt(e);
            }
            self.ofo.remove(0);
        }
        if moved > 0 {
            // The skbs move to the receive queue with their memory (in proportion to the bytes
            // the queue held before: what moved and what is left).
            let left: u64 = self.ofo.iter().map(|&(s, e)| (e - s) as u64).sum();
            self.rcvbuf.ofo_to_queue(moved, moved as u64 + left, self.ofo.is_empty());
        }
    }

    /// `tcp_data_queue_ofo`.
    fn data_queue_ofo(&mut self, seq: SeqNum, end: SeqNum, seg: &Segment, out: &mut Vec<Segment>) {
        self.ecn_check_ce(seg.ecn, out);
        let truesize = self.rx_truesize();
        if !self.try_rmem_schedule(seg.len) {
            return; // TCPOFODrop
        }
        self.pred_wnd = None; // disable header prediction
        self.schedule_ack();
        self.rcv_ooopack += self.rx_gso_segs.max(1) as u64;
        // Out-of-order data updates rcv_mss and the payload share too (Linux 6.17).
        self.measure_rcv_mss(seg);
        // Insert [seq, end) into the sorted, merged range list, noting duplicates for D-SACK and
        // the bytes the ranges it absorbs held.
        let i = self.ofo.partition_point(|&(_, e)| e.before(seq));
        let (mut ns, mut ne) = (seq, end);
        let mut dup: Option<(SeqNum, SeqNum)> = None;
        let mut absorbed = 0u32;
        while i < self.ofo.len() {
            let (s, e) = self.ofo[i];
            if s.after(ne) {
                break;
            }
            // Overlap or adjacency: merge.
            let ov_s = if s.after(ns) { s } else { ns };
            let ov_e = if e.before(ne) { e } else { ne };
            if ov_s.before(ov_e) {
                dup = Some((ov_s, ov_e));
            }
            if s.before(ns) {
                ns = s;
            }
            if e.after(ne) {
                ne = e;
            }
            absorbed += e - s;
            self.ofo.remove(i);
        }
        self.ofo.insert(i, (ns, ne));
        if let Some((s, e)) = dup {
            self.dsack_set(s, e);
        }
        self.sack_new_ofo(seq, end, out);
        if ne - ns > absorbed {
            // A SACK receiver grows its window for out-of-order data too (a non-SACK one does
            // not, to force duplicate ACKs); then the skb is charged.
            if self.sack_ok {
                self.grow_window(seg.len, truesize);
            }
            self.rcvbuf.charge_ofo(truesize);
        }
        // tcp_rcvbuf_grow: room for the out-of-order queue's span.
        let space = self.rcvbuf.space;
        self.rcvbuf_grow(space);
    }

    /// `tcp_sack_new_ofo_skb`: keep the SACK blocks, most recent first.
    fn sack_new_ofo(&mut self, seq: SeqNum, end: SeqNum, out: &mut Vec<Segment>) {
        // The block this segment extends (or a new one) goes to the front; if that pushes a
        // block past the first two, a compressed ACK still pending goes out first, so that
        // every block was reported in one of the first two places before it moves further
        // back (TCP_SACK_BLOCKS_EXPECTED: with timestamps only three fit, and ACKs get lost).
        let this_sack = self
            .sack_recent
            .iter()
            .position(|&(bs, be)| !seq.after(be) && !bs.after(end))
            .unwrap_or(self.sack_recent.len());
        if this_sack >= SACK_BLOCKS_EXPECTED {
            self.sack_compress_send_ack(out);
        }
        let (mut s, mut e) = (seq, end);
        let mut k = 0;
        while k < self.sack_recent.len() {
            let (bs, be) = self.sack_recent[k];
            if !s.after(be) && !bs.after(e) {
                if bs.before(s) {
                    s = bs;
                }
                if be.after(e) {
                    e = be;
                }
                self.sack_recent.remove(k);
            } else {
                k += 1;
            }
        }
        self.sack_recent.insert(0, (s, e));
        self.sack_recent.truncate(NUM_SACKS);
    }

    /// `tcp_sack_compress_send_ack`: send the ACK that SACK compression is holding back.
    fn sack_compress_send_ack(&mut self, out: &mut Vec<Segment>) {
        if self.comp_sack.compressed_ack == 0 {
            return;
        }
        self.comp_sack.deadline = None;
        self.comp_sack.compressed_ack = 0;
        self.send_ack(out);
    }

    /// `tcp_sack_remove`: drop blocks the cumulative ACK now covers.
    fn sack_remove(&mut self) {
        let r = self.rcv_nxt();
        self.sack_recent.retain(|&(s, _)| r.before(s));
    }

    /// `tcp_dsack_set`.
    fn dsack_set(&mut self, seq: SeqNum, end: SeqNum) {
        if self.sack_ok {
            self.dsack = Some((seq, end));
        }
    }

    /// `tcp_measure_rcv_mss`: learn the peer's segment size (a GRO skb is measured by its
    /// segment size) and, when it changes, the payload share of the buffer.
    fn measure_rcv_mss(&mut self, seg: &Segment) {
        let len = if self.rx_gso_size > 0 { self.rx_gso_size } else { seg.len };
        if len >= self.ack.rcv_mss {
            if len != self.ack.rcv_mss {
                let truesize = self.rx_truesize();
                self.measure_scaling_ratio(seg.len, truesize);
            }
            self.ack.rcv_mss = len.min(self.tcpi_advmss());
        } else if len > 0 {
            if self.ack.pending & ACK_PUSHED != 0 {
                self.ack.pending |= ACK_PUSHED2;
            }
            self.ack.pending |= ACK_PUSHED;
        }
    }

    /// `tcp_event_data_recv`: schedule an ACK, learn the peer's segment size, estimate ato.
    pub(crate) fn event_data_recv(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        self.schedule_ack();
        self.measure_rcv_mss(seg);
        let truesize = self.rx_truesize();
        self.rcv_rtt_measure();
        let now = self.now.ns();
        let ato_min = self.cfg.delack_min.ns();
        if self.ack.ato == 0 {
            // The first data segment: start in quick-ACK mode.
            self.incr_quickack(MAX_QUICKACKS);
            self.ack.ato = ato_min;
        } else {
            let m = now.saturating_sub(self.ack.lrcvtime);
            if m <= ato_min / 2 {
                self.ack.ato = (self.ack.ato >> 1) + ato_min / 2;
            } else if m < self.ack.ato {
                self.ack.ato = ((self.ack.ato >> 1) + m).min(self.icsk.rto.ns());
            } else if m > self.icsk.rto.ns() {
                // A long gap: the sender may be restarting its window; ACK quickly.
                self.incr_quickack(MAX_QUICKACKS);
            }
        }
        self.ack.lrcvtime = now;
        self.ecn_check_ce(seg.ecn, out);
        if seg.len >= GROW_MIN_LEN {
            self.grow_window(seg.len, truesize);
        }
    }

    /// `tcp_ecn_check_ce` / `__tcp_ecn_check_ce`.
    fn ecn_check_ce(&mut self, ecn: Ecn, out: &mut Vec<Segment>) {
        if !self.sk.ecn_ok {
            return;
        }
        let needs_ecn = self.cc.needs_ecn();
        match ecn {
            Ecn::NotEct => {
                // ECT missing after ECT was seen: probably a retransmission.
                if self.ecn_seen {
                    self.enter_quickack_mode(2);
                }
            }
            Ecn::Ce => {
                self.stats.ce_rcvd += 1;
                if needs_ecn {
                    self.ca_event_rx(CaEvent::EcnIsCe, out);
                }
                if !self.sk.ecn_demand_cwr {
                    // Better not delay ACKs: the sender may have a very small cwnd.
                    self.enter_quickack_mode(2);
                    self.sk.ecn_demand_cwr = true;
                }
                self.ecn_seen = true;
            }
            _ => {
                if needs_ecn {
                    self.ca_event_rx(CaEvent::EcnNoCe, out);
                }
                self.ecn_seen = true;
            }
        }
    }

    /// `tcp_ca_event` for a receive-side ECN event (from `__tcp_ecn_check_ce`), then carry out
    /// what the module asked for (`apply_cc_requests`).
    fn ca_event_rx(&mut self, ev: CaEvent, out: &mut Vec<Segment>) {
        self.sk.ack_timer_pending = self.ack.pending & ACK_TIMER != 0;
        self.cc.cwnd_event(&mut self.sk, ev);
        self.apply_cc_requests(out);
    }

    /// `tcp_ack_snd_check` / `__tcp_ack_snd_check`: ACK now, or arm the delayed-ACK timer.
    pub(crate) fn ack_snd_check(&mut self, out: &mut Vec<Segment>) {
        if self.ack.pending & ACK_SCHED == 0 {
            return;
        }
        // More than one full frame received, and the window's right edge moves far enough
        // (or the application has read everything: SO_RCVLOWAT 1).
        let more_than_one_frame = self.rcv_nxt() - self.rcv_wup > self.ack.rcv_mss
            && (self.readable() == 0 || self.raw_select_window() >= self.rcv_wnd);
        if more_than_one_frame || self.in_quickack_mode() || self.ack.pending & ACK_NOW != 0 {
            self.send_ack(out);
            return;
        }
        if self.ofo.is_empty() {
            self.send_delayed_ack(out);
            return;
        }
        // Out-of-order data: SACK compression (Linux >= 4.18). The first three duplicate ACKs
        // for a given rcv_nxt go out at once (enough for fast retransmit); later ones are held
        // for 5 % of the RTT, at most tcp_comp_sack_delay_ns (1 ms), and at most
        // tcp_comp_sack_nr (44) are merged.
        if !self.sack_ok || self.comp_sack.compressed_ack >= COMP_SACK_NR {
            self.send_ack(out);
            return;
        }
        if self.comp_sack.compressed_ack_rcv_nxt != self.rcv_nxt() {
            self.comp_sack.compressed_ack_rcv_nxt = self.rcv_nxt();
            self.comp_sack.dup_ack_counter = 0;
        }
        if self.comp_sack.dup_ack_counter < FASTRETRANS_THRESH {
            self.comp_sack.dup_ack_counter += 1;
            self.send_ack(out);
            return;
        }
        self.comp_sack.compressed_ack += 1;
        if self.comp_sack.deadline.is_some() {
            return;
        }
        // ccsim keeps no separate receiver RTT estimate (rcv_rtt_est); it uses srtt.
        let rtt_ns = (self.sk.srtt_us >> 3) as u64 * 1000;
        let delay = COMP_SACK_DELAY_NS.min(rtt_ns / 20);
        self.comp_sack.deadline = Some(self.now + SimTime(delay));
    }

    /// `tcp_compressed_ack_kick`: the SACK-compression timer fired.
    pub(crate) fn compressed_ack_kick(&mut self, out: &mut Vec<Segment>) {
        self.comp_sack.deadline = None;
        if self.comp_sack.compressed_ack > 0 {
            self.send_ack(out);
        }
    }

    /// `tcp_cleanup_rbuf`: after the application read `copied` bytes, ACK at once if an ACK is
    /// owed for more than one full segment, or if a small (pushed) segment was received, the
    /// connection is not interactive and the buffer is empty; or if the read freed enough
    /// buffer to at least double the window (a window update).
    pub(crate) fn cleanup_rbuf(&mut self, copied: u64, out: &mut Vec<Segment>) {
        let mut time_to_ack = false;
        if self.ack.pending & ACK_SCHED != 0 {
            let p = self.ack.pending;
            time_to_ack = self.rcv_nxt() - self.rcv_wup > self.ack.rcv_mss
                || (copied > 0
                    && (p & ACK_PUSHED2 != 0 || (p & ACK_PUSHED != 0 && !self.in_pingpong_mode()))
                    && self.rcvbuf.rmem_alloc == 0);
        }
        if copied > 0 && !time_to_ack && self.sk_shutdown & RCV_SHUTDOWN == 0 {
            let now_wnd = self.receive_window();
            if 2 * now_wnd as u64 <= self.rcvbuf.window_clamp as u64 {
                let new = self.raw_select_window();
                if new > 0 && new as u64 >= 2 * now_wnd as u64 {
                    time_to_ack = true;
                }
            }
        }
        if time_to_ack {
            self.send_ack(out);
        }
    }

    /// `tcp_recvmsg`'s bookkeeping after the application read `n` bytes: free what it read,
    /// autotune the buffer (`tcp_rcv_space_adjust`, which Linux calls after copying each skb
    /// and which acts at most once per receiver RTT, so once: after the first skb), then
    /// `tcp_cleanup_rbuf`.
    pub(crate) fn account_read(&mut self, n: u64, out: &mut Vec<Segment>) {
        if n == 0 {
            return self.cleanup_rbuf(0, out);
        }
        let all = n == self.readable();
        let first = self.rcvbuf.front_unread().clamp(1, n);
        self.bytes_read += first;
        self.rcv_space_adjust();
        self.bytes_read += n - first;
        if all {
            self.rcvbuf.consume_all();
        } else {
            self.rcvbuf.consume(n);
        }
        self.cleanup_rbuf(n, out);
    }

    /// `tcp_send_delayed_ack`.
    fn send_delayed_ack(&mut self, out: &mut Vec<Segment>) {
        let delack_min = self.cfg.delack_min.ns();
        let mut ato = self.ack.ato;
        if ato > delack_min {
            let mut max_ato = 500_000_000u64; // HZ/2
            if self.in_pingpong_mode() || self.ack.pending & ACK_PUSHED != 0 {
                max_ato = self.cfg.delack_max.ns();
            }
            if self.sk.srtt_us > 0 {
                let rtt = ((self.sk.srtt_us >> 3) as u64 * 1000).max(delack_min);
                max_ato = max_ato.min(rtt);
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(self.cfg.delack_max.ns());
        let now = self.now.ns();
        let mut timeout = now + ato;
        if self.ack.pending & ACK_TIMER != 0 {
            // If the pending timer is about to fire, ACK now.
            if self.ack.timeout.ns() <= now + (ato >> 2) {
                self.send_ack(out);
                return;
            }
            timeout = timeout.min(self.ack.timeout.ns());
        }
        self.ack.pending |= ACK_SCHED | ACK_TIMER;
        self.ack.timeout = SimTime(timeout);
        self.sk.ack_timer_pending = true;
    }
}
