//! The receive buffer and the window a receiver advertises, as Linux 6.18 runs them:
//! `tcp_select_initial_window` (initial window and window scale), `tcp_init_buffer_space`,
//! the payload share of the buffer measured in `tcp_measure_rcv_mss` (`scaling_ratio`),
//! `tcp_grow_window` (`rcv_ssthresh`), `__tcp_select_window` / `tcp_select_window` (the window
//! field of every segment), the receiver's RTT estimate (`tcp_rcv_rtt_measure`,
//! `tcp_rcv_rtt_measure_ts`) and receive-buffer autotuning (`tcp_rcv_space_adjust`,
//! `tcp_rcvbuf_grow`), `tcp_clamp_window`.
//!
//! Memory is counted as Linux charges it (`sk_rmem_alloc`): the truesize of every skb in the
//! receive queue (until the application has read all of it) and in the out-of-order queue.
//! A received skb's truesize is [`SKB_OVERHEAD`] plus [`TcpConfig::rx_frame_truesize`] per
//! segment it carries (a GRO skb carries several), the charge of a NIC driver that receives
//! each frame into its own buffer.

use std::collections::VecDeque;

use crate::config::TcpConfig;
use crate::endpoint::*;
use crate::recv::ACK_NOMEM;
use crate::seq::SeqNum;

/// `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is the payload share of truesize in 1/256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: a 50 % payload share until data is measured.
const DEFAULT_SCALING_RATIO: u8 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// `TCP_MAX_WSCALE`.
const MAX_WSCALE: u8 = 14;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64: the part of an skb's truesize that is
/// not packet buffer.
pub(crate) const SKB_OVERHEAD: u32 = 256;
/// `SOCK_MIN_RCVBUF` (`TCP_SKB_MIN_TRUESIZE`): 2048 + the sk_buff.
pub(crate) const SOCK_MIN_RCVBUF: u32 = 2048 + SKB_OVERHEAD;
/// `net.ipv4.tcp_app_win` (31): the share of the window kept for the application's buffer.
const APP_WIN: u32 = 31;
/// The page size memory is reserved in (`sk_mem_pages`, `SK_MEM_QUANTUM`).
const PAGE_SIZE: u32 = 4096;
/// `TCP_INIT_CWND`: `tcp_init_buffer_space` starts `rcvq_space` at ten segments.
const TCP_INIT_CWND: u32 = 10;

/// The receive-window rules of a kernel generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcvWindowRules {
    /// Linux 6.10 and later: a buffer's bytes convert to window by the payload share of
    /// truesize measured on received skbs (`scaling_ratio`, dfa2f0483360, 6.6), and the initial
    /// window is what the buffer holds (378979e94e95 removed the 64 KB cap).
    Current,
    /// Linux 6.6 to 6.9: the measured ratio, an initial window of at most 65535.
    Pre6_10,
    /// Before 6.6: half the buffer is window (`net.ipv4.tcp_adv_win_scale` = 1), an initial
    /// window of at most 65535.
    Pre6_6,
}

/// How the application sized the receive buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcvBufSize {
    /// No `SO_RCVBUF`: the buffer starts at `tcp_rmem[1]` and autotuning
    /// (`net.ipv4.tcp_moderate_rcvbuf`) grows it up to `tcp_rmem[2]`.
    Auto,
    /// `setsockopt(SO_RCVBUFFORCE, n)` (or `SO_RCVBUF` below `net.core.rmem_max`): the buffer is
    /// `max(2n, SOCK_MIN_RCVBUF)` bytes and locked (`SOCK_RCVBUF_LOCK`: no autotuning).
    Locked(u32),
}

impl RcvBufSize {
    /// `sk_rcvbuf` and whether it is locked, as `__sock_set_rcvbuf` leaves them.
    pub fn sk_rcvbuf(self, cfg: &TcpConfig) -> (u32, bool) {
        match self {
            RcvBufSize::Auto => (cfg.rmem[1], false),
            RcvBufSize::Locked(n) => (n.min(i32::MAX as u32 / 2).saturating_mul(2).max(SOCK_MIN_RCVBUF), true),
        }
    }
}

/// The receive buffer's state (`sk_rcvbuf`, `sk_rmem_alloc`, `tp->window_clamp`,
/// `tp->rcv_ssthresh`, `tp->scaling_ratio`, `tp->rcvq_space`, `tp->rcv_rtt_est`).
#[derive(Clone, Debug)]
pub(crate) struct RcvBuf {
    pub(crate) sk_rcvbuf: u32,
    /// `SOCK_RCVBUF_LOCK`.
    pub(crate) locked: bool,
    pub(crate) window_clamp: u32,
    pub(crate) rcv_ssthresh: u32,
    pub(crate) scaling_ratio: u8,
    /// The ratio is measured (Linux 6.6+) or stays at one half (`tcp_adv_win_scale` = 1).
    measure_ratio: bool,
    /// `sk_rmem_alloc`: truesize of the receive queue's unread skbs and the out-of-order queue.
    pub(crate) rmem_alloc: u32,
    /// The receive queue's unread skbs: how many bytes each holds and its truesize. An skb is
    /// freed when the application has read all of it.
    queue: VecDeque<QueuedSkb>,
    /// Bytes of the queue's front skb the application has read already.
    front_read: u32,
    /// Truesize of the out-of-order queue.
    pub(crate) ofo_mem: u32,
    /// `sk_forward_alloc`: memory reserved for the socket in whole pages beyond what is
    /// charged. Header prediction takes a data segment only if its truesize fits in it.
    pub(crate) forward_alloc: u32,
    /// `rcvq_space.space`: bytes the application read in the last measured RTT.
    pub(crate) space: u32,
    /// `rcvq_space.seq` as a count of bytes read, and `rcvq_space.time` (µs).
    space_read: u64,
    space_time_us: u64,
    /// `rcv_rtt_est.rtt_us` (µs << 3), `.seq`, `.time` (µs), and `rcv_rtt_last_tsecr`.
    pub(crate) rtt_us8: u32,
    rtt_seq: SeqNum,
    rtt_time_us: u64,
    last_tsecr: u32,
}

#[derive(Clone, Copy, Debug)]
struct QueuedSkb {
    len: u32,
    truesize: u32,
}

impl RcvBuf {
    pub(crate) fn new(cfg: &TcpConfig) -> Self {
        let (sk_rcvbuf, locked) = cfg.rcvbuf.sk_rcvbuf(cfg);
        RcvBuf {
            sk_rcvbuf,
            locked,
            window_clamp: 0,
            rcv_ssthresh: 0,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            measure_ratio: cfg.rcv_window_rules != RcvWindowRules::Pre6_6,
            rmem_alloc: 0,
            queue: VecDeque::new(),
            front_read: 0,
            ofo_mem: 0,
            forward_alloc: 0,
            space: 0,
            space_read: 0,
            space_time_us: 0,
            rtt_us8: 0,
            rtt_seq: SeqNum(0),
            rtt_time_us: 0,
            last_tsecr: 0,
        }
    }

    /// `tcp_win_from_space`: the window a buffer of `space` bytes holds (negative stays negative).
    pub(crate) fn win_from_space(&self, space: i64) -> i64 {
        (space * self.scaling_ratio as i64) >> RMEM_TO_WIN_SCALE
    }

    /// `tcp_space_from_win`.
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.scaling_ratio as u64
    }

    /// `tcp_space`: the window the free part of the buffer holds.
    pub(crate) fn tcp_space(&self) -> i64 {
        self.win_from_space(self.sk_rcvbuf as i64 - self.rmem_alloc as i64)
    }

    /// `tcp_full_space`.
    pub(crate) fn full_space(&self) -> i64 {
        self.win_from_space(self.sk_rcvbuf as i64)
    }

    /// `sk_rmem_schedule` + `skb_set_owner_r` (`sk_mem_charge`): reserve whole pages when the
    /// forward allocation is short, then charge `truesize`.
    fn charge(&mut self, truesize: u32) {
        if truesize > self.forward_alloc {
            self.forward_alloc += (truesize - self.forward_alloc).div_ceil(PAGE_SIZE) * PAGE_SIZE;
        }
        self.forward_alloc -= truesize;
        self.rmem_alloc += truesize;
    }

    /// `sock_rfree` (`sk_mem_uncharge`, then `sk_mem_reclaim`: whole pages go back).
    fn uncharge(&mut self, truesize: u32) {
        self.rmem_alloc -= truesize;
        self.forward_alloc = (self.forward_alloc + truesize) % PAGE_SIZE;
    }

    /// `skb_set_owner_r` for an skb that joins the receive queue with `len` new bytes.
    pub(crate) fn charge_queue(&mut self, len: u32, truesize: u32) {
        self.charge(truesize);
        self.queue.push_back(QueuedSkb { len, truesize });
    }

    /// `skb_set_owner_r` for an skb that joins the out-of-order queue.
    pub(crate) fn charge_ofo(&mut self, truesize: u32) {
        self.charge(truesize);
        self.ofo_mem += truesize;
    }

    /// `tcp_ofo_queue`: `moved` of the out-of-order queue's `ofo_bytes` bytes became in order.
    /// Their memory moves to the receive queue (ccsim keeps the out-of-order queue as merged
    /// ranges, so the truesize moves in proportion; all of it once the queue is empty).
    pub(crate) fn ofo_to_queue(&mut self, moved: u32, ofo_bytes_before: u64, ofo_empty: bool) {
        let mem = if ofo_empty || ofo_bytes_before == 0 {
            self.ofo_mem
        } else {
            ((self.ofo_mem as u64 * moved as u64) / ofo_bytes_before) as u32
        };
        self.ofo_mem -= mem;
        self.queue.push_back(QueuedSkb { len: moved, truesize: mem });
    }

    /// Unread skbs in the receive queue.
    pub(crate) fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Unread bytes of the receive queue's first skb.
    pub(crate) fn front_unread(&self) -> u64 {
        self.queue.front().map_or(0, |s| (s.len - self.front_read) as u64)
    }

    /// The application read everything: free the whole receive queue. Page reclaim leaves the
    /// forward allocation modulo a page after each skb, so freeing them together leaves the same.
    pub(crate) fn consume_all(&mut self) {
        let mem = self.rmem_alloc - self.ofo_mem;
        self.rmem_alloc = self.ofo_mem;
        self.forward_alloc = (self.forward_alloc + mem) % PAGE_SIZE;
        self.queue.clear();
        self.front_read = 0;
    }

    /// The application read `n` bytes: free every skb it has read completely
    /// (`tcp_eat_recv_skb` -> `sock_rfree`).
    pub(crate) fn consume(&mut self, mut n: u64) {
        while n > 0 {
            let Some(front) = self.queue.front() else { break };
            let left = (front.len - self.front_read) as u64;
            if n >= left {
                n -= left;
                let truesize = front.truesize;
                self.uncharge(truesize);
                self.queue.pop_front();
                self.front_read = 0;
            } else {
                self.front_read += n as u32;
                n = 0;
            }
        }
    }
}

impl Endpoint {
    /// The truesize of the skb being received: [`SKB_OVERHEAD`] plus a frame buffer for each
    /// of its segments (a GRO skb carries several).
    pub(crate) fn rx_truesize(&self) -> u32 {
        SKB_OVERHEAD + self.rx_gso_segs.max(1) * self.cfg.rx_frame_truesize
    }

    /// `tcp_select_initial_window`, as `tcp_connect_init` (active open) and
    /// `tcp_openreq_init_rwin` (passive open) call it: the initial `rcv_wnd`, `window_clamp`
    /// and the window scale; `rcv_ssthresh` starts at `rcv_wnd`.
    pub(crate) fn select_initial_window(&mut self, wscale_ok: bool) {
        // The mss the window is rounded to: advmss, less the timestamp option on a passive open
        // that agreed to timestamps (on an active open ts_recent_stamp is still 0).
        let passive = self.state == TcpState::Listen;
        let mss = self.advmss() - if passive && self.ts_ok { 12 } else { 0 };
        let rb = &mut self.rcvbuf;
        let full_space = rb.full_space().max(0) as u32;
        let mut clamp = 0u32;
        if rb.locked {
            clamp = full_space;
        }
        if clamp == 0 {
            clamp = 65535 << MAX_WSCALE;
        }
        let mut space = full_space.min(clamp);
        if space > mss {
            space = space / mss * mss;
        }
        let rcv_wnd = if self.cfg.rcv_window_rules == RcvWindowRules::Current { space } else { space.min(65535) };
        let mut ws = 0u8;
        if wscale_ok {
            let s = space.max(self.cfg.rmem[2]).max(self.cfg.rmem_max).min(clamp);
            // ilog2(s) - 15, within 0..=14: the smallest shift with (s >> ws) <= 65535.
            let ilog2 = 31 - s.max(1).leading_zeros() as i32;
            ws = (ilog2 - 15).clamp(0, MAX_WSCALE as i32) as u8;
        }
        rb.window_clamp = (65535u32 << ws).min(clamp);
        rb.rcv_ssthresh = rcv_wnd;
        self.rcv_wnd = rcv_wnd;
        self.rcv_wscale = ws;
    }

    /// `tcp_init_buffer_space` (from `tcp_init_transfer`): clamp the window to the buffer, keep
    /// one segment for the application (`tcp_app_win`), and start the autotuning measurement.
    pub(crate) fn init_buffer_space(&mut self) {
        let advmss = self.tcpi_advmss();
        let now_us = self.now.ns() / 1000;
        let read = self.bytes_read;
        let rcv_wnd = self.rcv_wnd;
        let rb = &mut self.rcvbuf;
        rb.space_time_us = now_us;
        rb.space_read = read;
        let maxwin = rb.full_space().max(0) as u32;
        if rb.window_clamp >= maxwin {
            rb.window_clamp = maxwin;
            if maxwin > 4 * advmss {
                rb.window_clamp = (maxwin - (maxwin >> APP_WIN)).max(4 * advmss);
            }
        }
        if rb.window_clamp > 2 * advmss && rb.window_clamp + advmss > maxwin {
            rb.window_clamp = (2 * advmss).max(maxwin.saturating_sub(advmss));
        }
        rb.rcv_ssthresh = rb.rcv_ssthresh.min(rb.window_clamp);
        rb.space = rb.rcv_ssthresh.min(rcv_wnd).min(TCP_INIT_CWND * advmss);
    }

    /// The window-scale option was not agreed: no scaling, and a window of at most 65535.
    pub(crate) fn no_window_scaling(&mut self) {
        self.rcv_wscale = 0;
        self.rcvbuf.window_clamp = self.rcvbuf.window_clamp.min(65535);
    }

    /// `tcp_set_window_clamp`.
    fn set_window_clamp(&mut self, val: u32) {
        let rb = &mut self.rcvbuf;
        let new = val.max(SOCK_MIN_RCVBUF / 2);
        let old = rb.window_clamp;
        if new == old {
            return;
        }
        rb.window_clamp = new;
        if new < old {
            // __tcp_adjust_rcv_ssthresh (no SO_RESERVE_MEM)
            rb.rcv_ssthresh = rb.rcv_ssthresh.min(new);
        } else {
            rb.rcv_ssthresh = rb.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// The payload share part of `tcp_measure_rcv_mss`, for an skb of `skb_len` bytes whose
    /// segment size `len` differs from `rcv_mss`: measure `scaling_ratio`, and make the window
    /// clamp follow it.
    pub(crate) fn measure_scaling_ratio(&mut self, skb_len: u32, truesize: u32) {
        if !self.rcvbuf.measure_ratio {
            return;
        }
        let old = self.rcvbuf.scaling_ratio;
        let val = ((skb_len as u64) << RMEM_TO_WIN_SCALE) / truesize.max(1) as u64;
        self.rcvbuf.scaling_ratio = val.clamp(1, 255) as u8;
        if old != self.rcvbuf.scaling_ratio {
            let clamp = self.rcvbuf.full_space().max(0) as u32;
            self.set_window_clamp(clamp);
            let rb = &mut self.rcvbuf;
            if rb.window_clamp < rb.space {
                rb.space = rb.window_clamp;
            }
        }
    }

    /// `tcp_grow_window`: an skb of `len` bytes and `truesize` arrived; let `rcv_ssthresh`
    /// grow towards the window the buffer can hold.
    pub(crate) fn grow_window(&mut self, len: u32, truesize: u32) {
        let advmss = self.tcpi_advmss();
        let rb = &self.rcvbuf;
        let room = (rb.window_clamp as i64).min(rb.tcp_space()) - rb.rcv_ssthresh as i64;
        if room <= 0 {
            return;
        }
        // No memory pressure is modelled (tcp_under_memory_pressure is false).
        let mut incr = if rb.win_from_space(truesize as i64) <= len as i64 {
            2 * advmss
        } else {
            // __tcp_grow_window
            let mut t = rb.win_from_space(truesize as i64) >> 1;
            let mut w = rb.win_from_space(self.cfg.rmem[2] as i64) >> 1;
            let mut r = 0;
            while rb.rcv_ssthresh as i64 <= w {
                if t <= len as i64 {
                    r = 2 * self.ack.rcv_mss;
                    break;
                }
                t >>= 1;
                w >>= 1;
            }
            r
        };
        if incr > 0 {
            incr = incr.max(2 * len);
            self.rcvbuf.rcv_ssthresh += (room as u32).min(incr);
            self.ack.quick |= 1;
        }
    }

    /// `__tcp_select_window`: the window the buffer allows now (before the never-shrink rule).
    /// Also a probe for `__tcp_ack_snd_check` and `__tcp_cleanup_rbuf`, with its side effect
    /// (`icsk_ack.quick = 0` when the buffer is more than half full).
    pub(crate) fn raw_select_window(&mut self) -> u32 {
        let ws = self.rcv_wscale;
        let rb = &self.rcvbuf;
        let mut mss = self.ack.rcv_mss as i64;
        let mut free = rb.tcp_space();
        let allowed = rb.full_space();
        let full = (rb.window_clamp as i64).min(allowed);
        if mss > full {
            mss = full;
            if mss <= 0 {
                return 0;
            }
        }
        // net.ipv4.tcp_shrink_window = 0 (the default): the window never shrinks.
        if free < full / 2 {
            self.ack.quick = 0;
            free &= !((1i64 << ws) - 1);
            if free < allowed / 16 || free < mss {
                return 0;
            }
        }
        let rb = &self.rcvbuf;
        let free = free.min(rb.rcv_ssthresh as i64).max(0);
        if ws > 0 {
            let unit = 1i64 << ws;
            return ((free + unit - 1) & !(unit - 1)) as u32;
        }
        // Without window scaling: receiver-side silly-window avoidance.
        let mut window = self.rcv_wnd as i64;
        if window <= free - mss || window > free {
            window = free / mss * mss;
        } else if mss == full && free > window + full / 2 {
            window = free;
        }
        window as u32
    }

    /// `tcp_receive_window`: what is left of the window last advertised.
    pub(crate) fn receive_window(&self) -> u32 {
        let w = (self.rcv_wup + self.rcv_wnd) - self.rcv_nxt();
        if (w as i32) < 0 {
            0
        } else {
            w
        }
    }

    /// `tcp_select_window`: the window field of an outgoing (non-SYN) segment. The right edge
    /// never moves back; `rcv_wnd` and `rcv_wup` record what was advertised.
    pub(crate) fn select_window(&mut self) -> u16 {
        if self.ack.pending & ACK_NOMEM != 0 {
            // An skb found no room: a zero window, once (Linux 6.14 and later also record it).
            self.pred_wnd = None;
            self.rcv_wnd = 0;
            self.rcv_wup = self.rcv_nxt();
            return 0;
        }
        let cur = self.receive_window();
        let mut new = self.raw_select_window();
        if new < cur {
            let unit = 1u32 << self.rcv_wscale;
            new = cur.div_ceil(unit) * unit;
        }
        self.rcv_wnd = new;
        self.rcv_wup = self.rcv_nxt();
        let new = new.min(65535 << self.rcv_wscale) >> self.rcv_wscale;
        if new == 0 {
            self.pred_wnd = None;
        }
        new as u16
    }

    /// `tcp_rcv_rtt_update`: the receiver's RTT estimate keeps the smallest sample at once;
    /// a larger one is averaged in (1/8) only when it comes from a timestamp (`win_dep` false)
    /// and the application has read everything.
    fn rcv_rtt_update(&mut self, sample_us: u32, win_dep: bool) {
        let old = self.rcvbuf.rtt_us8;
        let m = sample_us.saturating_mul(8);
        let new = if old == 0 || m < old {
            m
        } else {
            if win_dep || self.readable() > 0 {
                return;
            }
            old - (old >> 3) + sample_us
        };
        self.rcvbuf.rtt_us8 = new.max(1);
    }

    /// `tcp_rcv_rtt_measure`: one sample per window of data -- the time from advertising a
    /// window until data beyond it arrives.
    pub(crate) fn rcv_rtt_measure(&mut self) {
        let now_us = self.now.ns() / 1000;
        if self.rcvbuf.rtt_time_us != 0 {
            if self.rcv_nxt().before(self.rcvbuf.rtt_seq) {
                return;
            }
            let delta = now_us.saturating_sub(self.rcvbuf.rtt_time_us).max(1);
            self.rcv_rtt_update(delta.min(u32::MAX as u64) as u32, true);
        }
        self.rcvbuf.rtt_seq = self.rcv_nxt() + self.rcv_wnd;
        self.rcvbuf.rtt_time_us = now_us.max(1);
    }

    /// `tcp_rcv_rtt_measure_ts`: a sample from the echoed timestamp of a full-sized segment
    /// (`seg_len` bytes), once per new echo value. The timestamp clock ticks in ms, so a
    /// sample of 0 is ignored (d59fc95be9d0, Linux 6.16).
    pub(crate) fn rcv_rtt_measure_ts(&mut self, seg_len: u32) {
        let Some(tsecr) = self.rcv_tsecr else { return };
        if tsecr == self.rcvbuf.last_tsecr {
            return;
        }
        self.rcvbuf.last_tsecr = tsecr;
        if seg_len >= self.ack.rcv_mss {
            let delta_ms = self.ts_val().wrapping_sub(tsecr);
            if delta_ms > 0 && delta_ms < i32::MAX as u32 / 1000 {
                self.rcv_rtt_update(delta_ms * 1000, false);
            }
        }
    }

    /// `tcp_rcv_space_adjust` (from `tcp_recvmsg` after the application read): once per
    /// receiver RTT, compare what was read with the last RTT's and grow the buffer.
    pub(crate) fn rcv_space_adjust(&mut self) {
        let rb = &self.rcvbuf;
        if rb.rtt_us8 == 0 {
            return;
        }
        let now_us = self.now.ns() / 1000;
        let time = now_us.saturating_sub(rb.space_time_us);
        if time < (rb.rtt_us8 >> 3) as u64 {
            return;
        }
        // Bytes read in the last RTT, less what still waits in the receive queue.
        let copied = (self.bytes_read - rb.space_read) as i64 - self.readable() as i64;
        if copied > rb.space as i64 {
            self.rcvbuf_grow(copied as u32);
        }
        self.rcvbuf.space_read = self.bytes_read;
        self.rcvbuf.space_time_us = now_us;
    }

    /// `tcp_rcvbuf_grow` (Linux 6.18, with aa251c84636c "tcp: fix too slow tcp_rcvbuf_grow()
    /// action"): a buffer for twice what was read in the last RTT, plus twice its growth, plus
    /// the out-of-order queue's span; at most `tcp_rmem[2]`; the window clamp follows.
    pub(crate) fn rcvbuf_grow(&mut self, newval: u32) {
        let ofo_span = match (self.ofo.first(), self.ofo.last()) {
            (Some(_), Some(&(_, e))) => (e - self.rcv_nxt()) as u64,
            _ => 0,
        };
        let cap = self.cfg.rmem[2];
        let moderate = self.cfg.moderate_rcvbuf;
        let rb = &mut self.rcvbuf;
        let oldval = rb.space;
        rb.space = newval;
        if !moderate || rb.locked {
            return;
        }
        let mut rcvwin = (newval as u64) << 1;
        if oldval > 0 {
            let grow = rcvwin * newval.saturating_sub(oldval) as u64 / oldval as u64;
            rcvwin += grow << 1;
        }
        rcvwin += ofo_span;
        let rcvbuf = rb.space_from_win(rcvwin).min(cap as u64) as u32;
        if rcvbuf > rb.sk_rcvbuf {
            rb.sk_rcvbuf = rcvbuf;
            rb.window_clamp = rb.win_from_space(rcvbuf as i64) as u32;
        }
    }

    /// `tcp_clamp_window` (from `tcp_prune_queue`, the buffer is full): grow an unlocked buffer
    /// to what is allocated, else shrink `rcv_ssthresh` to two segments.
    pub(crate) fn clamp_window(&mut self) {
        let advmss = self.tcpi_advmss();
        let cap = self.cfg.rmem[2];
        let rb = &mut self.rcvbuf;
        self.ack.quick = 0;
        if rb.sk_rcvbuf < cap && !rb.locked {
            rb.sk_rcvbuf = rb.rmem_alloc.min(cap);
        }
        if rb.rmem_alloc > rb.sk_rcvbuf {
            rb.rcv_ssthresh = rb.window_clamp.min(2 * advmss);
        }
    }

    /// `tcp_can_ingest` (Linux 6.18): the buffer takes an skb of `len` bytes if what is
    /// charged plus its payload fits.
    fn can_ingest(&self, len: u32) -> bool {
        self.rcvbuf.rmem_alloc as u64 + len as u64 <= self.rcvbuf.sk_rcvbuf as u64
    }

    /// `tcp_try_rmem_schedule` without memory pressure, for an skb of `len` bytes: if the
    /// buffer cannot take it, `tcp_prune_queue` clamps the window (`tcp_clamp_window`, which may
    /// grow an unlocked buffer). Linux then collapses the queues and drops out-of-order skbs to
    /// make room; ccsim refuses the new skb instead.
    pub(crate) fn try_rmem_schedule(&mut self, len: u32) -> bool {
        if self.can_ingest(len) {
            return true;
        }
        if self.rcvbuf.rmem_alloc == 0 {
            return false;
        }
        self.clamp_window();
        self.can_ingest(len)
    }

    /// `tcp_sequence`: is the segment outside what the receiver accepts? Wholly before the
    /// window's left edge, starting beyond its right edge, or ending beyond it while unread data
    /// waits (Linux 6.17, 1d2fbaad7cd8).
    pub(crate) fn sequence_unacceptable(&self, seq: SeqNum, end: SeqNum) -> bool {
        if end.before(self.rcv_wup) {
            return true;
        }
        let right = self.rcv_nxt() + self.receive_window();
        end.after(right) && (seq.after(right) || self.rcvbuf.queue_len() > 0)
    }
}
