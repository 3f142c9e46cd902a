//! `struct tcp_info` as `tcp_get_info` fills it, plus the CC's `get_info`.

use crate::endpoint::{Endpoint, TcpState, XmitTimer};
use ccsim_cc::{CaState, CcInfo, CongestionOps};
use ccsim_engine::SimTime;

/// A snapshot of one socket, in the units `ss -tin` and `getsockopt(TCP_INFO)` use.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpInfo {
    pub state: TcpState,
    pub ca_state: CaState,
    pub cc: &'static str,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    /// Smoothed RTT and its variation in microseconds (`tcpi_rtt`, `tcpi_rttvar`).
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    /// Retransmission timeout in microseconds (`tcpi_rto`), with backoff.
    pub rto_us: u64,
    /// Delayed-ACK timeout in microseconds (`tcpi_ato`).
    pub ato_us: u64,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub snd_wscale: u8,
    pub rcv_wscale: u8,
    /// Window scaling was negotiated (`TCPI_OPT_WSCALE`).
    pub wscale_ok: bool,
    /// Bytes sent and not yet acknowledged plus bytes written and not yet sent, counting SYN and
    /// FIN as one each (`idiag_wqueue` = write_seq - snd_una, ss's Send-Q); an endless bulk source
    /// counts only what it has sent.
    pub wqueue: u64,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub total_retrans: u64,
    pub reordering: u32,
    /// `tcpi_dsack_dups`, `tcpi_reord_seen`.
    pub dsack_dups: u64,
    pub reord_seen: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub pacing_rate: u64,
    /// `tcpi_delivery_rate` (bytes per second, `tcp_compute_delivery_rate`) and
    /// `tcpi_delivery_rate_app_limited`.
    pub delivery_rate: u64,
    pub delivery_rate_app_limited: bool,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub bytes_retrans: u64,
    pub bytes_sent: u64,
    pub segs_out: u64,
    pub segs_in: u64,
    pub data_segs_out: u64,
    pub data_segs_in: u64,
    pub rto_count: u64,
    pub backoff: u32,
    /// `TCPI_OPT_ECN`: ECN was negotiated (`tp->ecn_flags & TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// `TCPI_OPT_ECN_SEEN`: an ECT or CE packet arrived on this ECN connection
    /// (`TCP_ECN_SEEN`, set by `__tcp_ecn_check_ce`).
    pub ecn_seen: bool,
    /// `TCPI_OPT_TIMESTAMPS` and `TCPI_OPT_SACK`: negotiated in the handshake.
    pub ts_ok: bool,
    pub sack_ok: bool,
    pub cc_info: CcInfo,
    /// `tcpi_pmtu` (`icsk_pmtu_cookie`): the path MTU `tcp_sync_mss` last set, the MTU the
    /// configured MSS comes from (advmss + 40); 0 on a listener or a socket never connected.
    pub pmtu: u32,
    /// `tcpi_advmss` (`tp->advmss`); 0 on a listener or a socket never connected.
    pub advmss: u32,
    /// `tcpi_rcv_ssthresh`: the window `tcp_grow_window` has opened so far. 0 on a listener or
    /// a socket never connected.
    pub rcv_ssthresh: u32,
    /// `tcpi_rcv_space` (`rcvq_space.space`): bytes the application read in the last receiver
    /// RTT, as autotuning measured it.
    pub rcv_space: u32,
    /// `tcpi_rcv_rtt` (`rcv_rtt_est.rtt_us >> 3`): the receiver's RTT estimate, µs (0: none yet).
    pub rcv_rtt_us: u32,
    /// `tcpi_rcv_ooopack`: segments that arrived out of order.
    pub rcv_ooopack: u64,
    /// `tcpi_last_ack_recv`: ms since the last acceptable ACK (`rcv_tstamp`), in whole jiffies.
    pub last_ack_recv_ms: u64,
    /// `tcpi_snd_wnd` (`tp->snd_wnd`): the peer's last advertised window, scaled.
    pub snd_wnd: u32,
    /// `tcpi_rcv_wnd` (`tp->rcv_wnd`): the window ccsim last advertised, scaled.
    pub rcv_wnd: u32,
    /// `tcpi_retransmits` (`icsk_retransmits`): RTO retransmissions of the current stall.
    pub retransmits: u32,
    /// `tcpi_notsent_bytes`: `write_seq - snd_nxt`, bytes written and never sent (a queued FIN
    /// counts one). An endless bulk source has no `write_seq` (ccsim gives it no send buffer):
    /// 0.
    pub notsent_bytes: u64,
    /// `idiag_rqueue` (ss's Recv-Q): `rcv_nxt - copied_seq`, received bytes the application has
    /// not read.
    pub rqueue: u64,
    /// `INET_DIAG_SHUTDOWN`: `sk->sk_shutdown` ([`crate::RCV_SHUTDOWN`], [`crate::SEND_SHUTDOWN`]).
    pub shutdown: u8,
    /// `tcpi_last_data_sent`, `tcpi_last_data_recv`: milliseconds since data was last sent
    /// (`lsndtime`) and received (`icsk_ack.lrcvtime`), in whole jiffies, at the time asked for.
    pub last_data_sent_ms: u64,
    pub last_data_recv_ms: u64,
    /// `tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited` (µs,
    /// `tcp_get_info_chrono_stats`). ccsim's send buffer is unbounded, so the last stays 0.
    pub busy_time_us: u64,
    pub rwnd_limited_us: u64,
    pub sndbuf_limited_us: u64,
    /// The timer inet_diag reports for the socket (`idiag_timer`, `idiag_expires`,
    /// `idiag_retrans`), if one is pending.
    pub timer: Option<DiagTimer>,
}

/// What `inet_sk_diag_fill` reports of a socket's pending timer (ss `-o`: `timer:(...)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiagTimer {
    pub kind: DiagTimerKind,
    /// `idiag_expires`: milliseconds until it fires (`jiffies_delta_to_msecs`).
    pub expires_ms: u64,
    /// `idiag_retrans`: `icsk_retransmits` for the retransmission timer, `icsk_probes_out` for the
    /// zero-window probe timer.
    pub retrans: u32,
}

/// `idiag_timer`: 1 for the retransmission slot (RTO, RACK reordering timeout, loss probe), 4 for
/// the zero-window probe. ccsim models no keepalive (2) and no TIME-WAIT timer (3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagTimerKind {
    /// `ICSK_TIME_RETRANS`, `ICSK_TIME_REO_TIMEOUT`, `ICSK_TIME_LOSS_PROBE`.
    On,
    /// `ICSK_TIME_PROBE0`.
    Persist,
}

impl DiagTimerKind {
    /// ss's `tmr_name` for the timer.
    pub fn ss_name(self) -> &'static str {
        match self {
            DiagTimerKind::On => "on",
            DiagTimerKind::Persist => "persist",
        }
    }
}

impl Endpoint {
    /// `tcpi_last_data_recv`: milliseconds since data last arrived (`icsk_ack.lrcvtime`, set by
    /// `tcp_event_data_recv` and at connection set-up), counted in jiffies as
    /// `jiffies_to_msecs(now - lrcvtime)` counts them, at `now`.
    pub fn last_data_recv_ms(&self, now: SimTime) -> u64 {
        self.jiffies_to_ms_since(now, self.ack.lrcvtime)
    }

    /// `tcpi_last_ack_recv`: milliseconds since the last acceptable ACK arrived
    /// (`tp->rcv_tstamp`), at `now`.
    pub fn last_ack_recv_ms(&self, now: SimTime) -> u64 {
        self.jiffies_to_ms_since(now, self.rcv_tstamp)
    }

    /// `tcpi_last_data_sent`: milliseconds since data was last sent (`tp->lsndtime`), at `now`.
    pub fn last_data_sent_ms(&self, now: SimTime) -> u64 {
        self.jiffies_to_ms_since(now, self.lsndtime)
    }

    /// `tcpi_probes`: zero-window or resource probes sent without an answer (`icsk_probes_out`).
    pub fn probes_out(&self) -> u32 {
        self.icsk.probes_out
    }

    fn jiffies_to_ms_since(&self, now: SimTime, then_ns: u64) -> u64 {
        let j = self.cfg.jiffy_ns();
        (now.ns() / j).saturating_sub(then_ns / j) * j / 1_000_000
    }

    /// The socket has been through `tcp_connect_init` or `tcp_create_openreq_child` (which set
    /// `tp->advmss`, `rcv_ssthresh` and, by `tcp_sync_mss`, the path MTU): neither a listener nor
    /// a socket that never connected.
    fn connection_set_up(&self) -> bool {
        match self.state {
            TcpState::Listen => false,
            TcpState::Closed => self.stats.segs_out + self.stats.segs_in > 0,
            _ => true,
        }
    }

    /// `inet_sk_diag_fill`'s timer at `now`: the retransmission slot (`icsk_pending`) as
    /// `idiag_timer` 1 or 4, milliseconds to its expiry counted in whole jiffies.
    pub fn diag_timer(&self, now: SimTime) -> Option<DiagTimer> {
        let (at, kind) = self.xmit_timer?;
        let j = self.cfg.jiffy_ns();
        // Timers are armed at `now + N jiffies`: the expiry's jiffy is the deadline's.
        let expires_ms = (at.ns() / j).saturating_sub(now.ns() / j) * j / 1_000_000;
        Some(match kind {
            XmitTimer::Retrans | XmitTimer::ReoTimeout | XmitTimer::LossProbe => {
                DiagTimer { kind: DiagTimerKind::On, expires_ms, retrans: self.icsk.retransmits }
            }
            XmitTimer::Probe0 => DiagTimer { kind: DiagTimerKind::Persist, expires_ms, retrans: self.icsk.probes_out },
        })
    }

    /// `tcp_compute_delivery_rate`: the kept rate sample's packets times the MSS, per second.
    pub fn delivery_rate(&self) -> u64 {
        let r = self.last_rate;
        if r.interval_us == 0 {
            return 0;
        }
        r.delivered as u64 * self.sk.mss_cache as u64 * 1_000_000 / r.interval_us as u64
    }

    /// What a flow's time series records of its sender, cheaply (no walk of the queues).
    pub fn sender_sample(&self) -> SenderSample {
        let sk = &self.sk;
        SenderSample {
            cwnd: sk.snd_cwnd,
            ssthresh: sk.snd_ssthresh,
            srtt_us: sk.srtt_us >> 3,
            inflight: sk.packets_in_flight(),
            pacing_rate: sk.pacing_rate,
            delivery_rate: self.delivery_rate(),
            cc_info: self.cc.get_info(sk),
        }
    }

    /// `tcp_get_info` at the endpoint's own clock (its latest event).
    pub fn tcp_info(&self) -> TcpInfo {
        self.tcp_info_at(self.now)
    }

    /// `tcp_get_info` (with what `inet_sk_diag_fill` adds: the queues, shutdown and the timer)
    /// at `now`, no earlier than the endpoint's latest event; the times since the last send,
    /// receive and the chrono stats are counted up to `now`.
    pub fn tcp_info_at(&self, now: SimTime) -> TcpInfo {
        let now = now.max(self.now);
        let sk = &self.sk;
        let set_up = self.connection_set_up();
        let (busy_time_us, rwnd_limited_us, sndbuf_limited_us) = self.chrono_stats_us(now);
        // An endless source starts at u64::MAX and counts down as it sends.
        let unsent = if self.unsent >= u64::MAX / 2 { 0 } else { self.unsent };
        TcpInfo {
            state: self.state,
            ca_state: sk.ca_state,
            cc: self.cc.name(),
            snd_cwnd: sk.snd_cwnd,
            snd_ssthresh: sk.snd_ssthresh,
            rtt_us: sk.srtt_us >> 3,
            rttvar_us: self.rtt.mdev_us >> 2,
            min_rtt_us: if sk.min_rtt_us == u32::MAX { 0 } else { sk.min_rtt_us },
            rto_us: (self.icsk.rto.ns() / 1000) << self.icsk.backoff.min(20),
            ato_us: self.ack.ato / 1000,
            snd_mss: sk.mss_cache,
            rcv_mss: self.ack.rcv_mss,
            snd_wscale: self.snd_wscale,
            rcv_wscale: self.rcv_wscale,
            wscale_ok: self.cfg.window_scaling && self.snd_wscale_seen,
            wqueue: self.rtx.iter().map(|s| (s.end_seq - s.seq) as u64).sum::<u64>()
                + unsent
                + (self.fin_queued && !self.fin_sent) as u64,
            unacked: sk.packets_out,
            sacked: self.sk.sacked_out,
            lost: self.sk.lost_out,
            retrans: self.sk.retrans_out,
            total_retrans: self.stats.total_retrans,
            reordering: self.reordering,
            dsack_dups: self.stats.dsack_dups,
            reord_seen: self.stats.reord_seen,
            delivered: sk.delivered,
            delivered_ce: sk.delivered_ce,
            pacing_rate: sk.pacing_rate,
            delivery_rate: self.delivery_rate(),
            delivery_rate_app_limited: self.last_rate.app_limited,
            bytes_acked: self.stats.bytes_acked,
            bytes_received: self.stats.bytes_received,
            bytes_retrans: self.stats.bytes_retrans,
            bytes_sent: self.stats.bytes_sent,
            segs_out: self.stats.segs_out,
            segs_in: self.stats.segs_in,
            data_segs_out: self.stats.data_segs_out,
            data_segs_in: self.stats.data_segs_in,
            rto_count: self.stats.rto_count,
            backoff: self.icsk.backoff,
            ecn_ok: sk.ecn_ok,
            ecn_seen: self.ecn_seen,
            ts_ok: self.ts_ok,
            sack_ok: self.sack_ok,
            cc_info: self.cc.get_info(sk),
            pmtu: if set_up { self.cfg.advmss + 40 } else { 0 },
            advmss: if set_up { self.tcpi_advmss() } else { 0 },
            rcv_ssthresh: if set_up { self.rcvbuf.rcv_ssthresh } else { 0 },
            rcv_space: self.rcvbuf.space,
            rcv_ooopack: self.rcv_ooopack,
            last_ack_recv_ms: if set_up { self.last_ack_recv_ms(now) } else { 0 },
            rcv_rtt_us: self.rcvbuf.rtt_us8 >> 3,
            snd_wnd: self.snd_wnd,
            rcv_wnd: self.rcv_wnd,
            retransmits: self.icsk.retransmits,
            notsent_bytes: unsent + (self.fin_queued && !self.fin_sent) as u64,
            rqueue: self.readable(),
            shutdown: self.sk_shutdown,
            last_data_sent_ms: self.last_data_sent_ms(now),
            last_data_recv_ms: self.last_data_recv_ms(now),
            busy_time_us,
            rwnd_limited_us,
            sndbuf_limited_us,
            timer: self.diag_timer(now),
        }
    }
}

/// A sender's congestion state at one moment (`Endpoint::sender_sample`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderSample {
    /// `snd_cwnd` and `snd_ssthresh`, packets (`TCP_INFINITE_SSTHRESH` until the first reduction).
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Smoothed RTT, µs.
    pub srtt_us: u32,
    /// `tcp_packets_in_flight`.
    pub inflight: u32,
    /// `sk_pacing_rate` and the delivery rate, bytes per second.
    pub pacing_rate: u64,
    pub delivery_rate: u64,
    /// The congestion control's own state (DCTCP's alpha, BBR's bandwidth, ...).
    pub cc_info: CcInfo,
}
