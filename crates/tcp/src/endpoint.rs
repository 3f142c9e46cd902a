use crate::config::{EcnMode, TcpConfig};
use crate::segment::{Segment, TcpFlags};
use crate::seq::SeqNum;
use ccsim_cc::{CaEvent, CaState, Cc, CongestionOps, MinMax, Sock, DEFAULT_RNG_SEED};
use ccsim_engine::SimTime;
use std::collections::VecDeque;
use std::sync::Arc;

/// Connection state (`sk_state`), reduced to what a simulated endpoint passes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    Closed,
    Listen,
    SynSent,
    SynRecv,
    Established,
    /// Our FIN is sent and not yet acknowledged; we may still receive.
    FinWait1,
    /// Our FIN is acknowledged; we may still receive.
    FinWait2,
    /// The peer's FIN arrived; we may still send.
    CloseWait,
    /// Both FINs sent, ours not yet acknowledged.
    Closing,
    /// Our FIN after the peer's, not yet acknowledged.
    LastAck,
    /// Both directions closed.
    TimeWait,
}

impl TcpState {
    pub fn ss_name(self) -> &'static str {
        match self {
            TcpState::Closed => "CLOSE",
            TcpState::Listen => "LISTEN",
            TcpState::SynSent => "SYN-SENT",
            TcpState::SynRecv => "SYN-RECV",
            TcpState::Established => "ESTAB",
            TcpState::FinWait1 => "FIN-WAIT-1",
            TcpState::FinWait2 => "FIN-WAIT-2",
            TcpState::CloseWait => "CLOSE-WAIT",
            TcpState::Closing => "CLOSING",
            TcpState::LastAck => "LAST-ACK",
            TcpState::TimeWait => "TIME-WAIT",
        }
    }
}

/// `tp->nonagle` bits: `TCP_NAGLE_OFF` (TCP_NODELAY), `TCP_NAGLE_CORK` (TCP_CORK, or MSG_MORE for
/// one send), `TCP_NAGLE_PUSH` (push what is queued once, set by TCP_NODELAY and uncorking).
pub(crate) const NAGLE_OFF: u8 = 1;
pub(crate) const NAGLE_CORK: u8 = 2;
pub(crate) const NAGLE_PUSH: u8 = 4;

/// `enum tcp_chrono`: what the sender is limited by, in increasing priority (0: not sending).
pub(crate) const CHRONO_BUSY: u8 = 1;
pub(crate) const CHRONO_RWND_LIMITED: u8 = 2;

/// `sk_shutdown` bits (`RCV_SHUTDOWN`, `SEND_SHUTDOWN`); `shutdown(how)` sets `how + 1`.
pub const RCV_SHUTDOWN: u8 = 1;
pub const SEND_SHUTDOWN: u8 = 2;

// `TCP_SKB_CB(skb)->sacked` bits.
pub(crate) const SACKED_ACKED: u8 = 0x01;
pub(crate) const SACKED_RETRANS: u8 = 0x02;
pub(crate) const LOST: u8 = 0x04;
pub(crate) const EVER_RETRANS: u8 = 0x08;

/// One segment in the retransmit queue (an skb with `pcount` = 1; ccsim does not build TSO
/// super-segments, so every queue entry is one packet on the wire).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxSkb {
    pub seq: SeqNum,
    pub end_seq: SeqNum,
    /// SYN/FIN/PSH flags carried by this skb.
    pub tcp_flags: u8,
    pub sacked: u8,
    /// Time of the latest (re)transmission (`skb_mstamp_ns`).
    pub tx_ns: u64,
    /// `tx.first_tx_mstamp`, `tx.delivered_mstamp`, `tx.delivered`, `tx.is_app_limited` (tcp_rate.c).
    pub first_tx_ns: u64,
    pub delivered_ns: u64,
    pub delivered: u32,
    pub app_limited: bool,
}

/// What the retransmission-timer slot is armed for (`ICSK_TIME_RETRANS`, `ICSK_TIME_REO_TIMEOUT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum XmitTimer {
    Retrans,
    ReoTimeout,
    /// `ICSK_TIME_LOSS_PROBE`.
    LossProbe,
    /// `ICSK_TIME_PROBE0`: the zero-window (persist) probe.
    Probe0,
}

// The delayed-ACK engine lives with the receive path that drives it.
pub(crate) use crate::recv::{AckState, ACK_NOW, ACK_SCHED, ACK_TIMER};

/// Counters reported in `tcp_info` and summaries.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpStats {
    pub data_segs_out: u64,
    pub data_segs_in: u64,
    pub segs_out: u64,
    pub segs_in: u64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub total_retrans: u64,
    pub rto_count: u64,
    /// The connection was given up after too many retransmission timeouts (`tcp_write_err`,
    /// ETIMEDOUT): 0 or 1.
    pub write_timeouts: u64,
    /// `netstat -s` "other TCP timeouts" as kernels before e1561fe2dd69 ("tcp: fix SNMP TCP
    /// timeout under-estimation", 2019) counted TCPTimeouts: every SYN timeout, and a data
    /// timeout only when it is the first of its stall (`icsk_retransmits` 0) and fires in Open
    /// or CWR with nothing SACKed (the others went to TCPSackRecoveryFail, TCPSackFailures or
    /// TCPLossFailures). Current kernels count every RTO, as `rto_count` does.
    pub other_timeouts: u64,
    pub fast_recoveries: u64,
    pub cwr_events: u64,
    pub undo_count: u64,
    /// ACKs carrying an accepted D-SACK block (TCPDSACKRecv + TCPDSACKOfoRecv).
    pub dsacks_rcvd: u64,
    /// Segments D-SACKed by the peer (`tcpi_dsack_dups`): spurious retransmissions.
    pub dsack_dups: u64,
    /// Reordering events seen (`tcpi_reord_seen`).
    pub reord_seen: u64,
    pub ce_rcvd: u64,
    pub loss_probes: u64,
    /// Data segments the host's own qdisc dropped (NET_XMIT_DROP).
    pub local_drops: u64,
    /// Header prediction (`netstat -s`: TCPHPHits, TCPHPAcks): data segments queued by the
    /// fast path, and ACKs that advanced `snd_una` on `tcp_ack`'s fast branch.
    pub hp_hits: u64,
    pub hp_acks: u64,
}

/// How the host's qdisc dropped a segment (what `__tcp_transmit_skb` got back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QdiscDrop {
    /// NET_XMIT_DROP: not sent. `attempted` is false for a segment Linux would not have tried,
    /// having stopped at an earlier drop of the same output.
    Tail { attempted: bool },
    /// NET_XMIT_CN (RED): counted as sent, so lost.
    Congestion,
}

/// `sk_pacing_status` as the transmit path asks it: TCP paces itself (`internal`), and TCP
/// advances the departure time skb by skb (`on`: internal pacing or fq).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PacingMode {
    pub internal: bool,
    pub on: bool,
}

/// A TCP endpoint (one connection), sans-IO.
pub struct Endpoint {
    /// The sysctls and socket options, shared read-only by every endpoint built from the same
    /// configuration (the kernel's `net.ipv4.*` sysctls are per namespace, not per socket).
    pub(crate) cfg: Arc<TcpConfig>,
    pub(crate) state: TcpState,
    /// The narrow socket view shared with the congestion-control module.
    pub(crate) sk: Sock,
    pub(crate) cc: Cc,
    pub(crate) now: SimTime,

    // --- send side ---
    pub(crate) iss: SeqNum,
    pub(crate) write_seq: SeqNum,
    /// Bytes written by the application and not yet sent (`u64::MAX`: an endless bulk source).
    pub(crate) unsent: u64,
    pub(crate) fin_queued: bool,
    /// Ends of MSG_EOR writes not yet sent past (`TCP_SKB_CB(skb)->eor`): no segment is built
    /// across one, since later data never joins an EOR skb (`tcp_skb_can_collapse_to`).
    pub(crate) eor_marks: VecDeque<SeqNum>,
    pub(crate) fin_sent: bool,
    pub(crate) rtx: VecDeque<TxSkb>,
    /// `tsorted_sent_queue`: (seq, transmission time) of skbs in send order; entries whose skb
    /// was acked, SACKed, marked lost or sent again are stale and skipped (RACK's walk).
    pub(crate) tsorted: VecDeque<(SeqNum, u64)>,
    /// `retransmit_skb_hint`: no skb below this sequence waits for a retransmission.
    pub(crate) rtx_hint: SeqNum,
    pub(crate) snd_wnd: u32,
    pub(crate) snd_wscale: u8,
    pub(crate) snd_wl1: SeqNum,
    pub(crate) mss_clamp: u32,
    /// `tp->rx_opt.user_mss`: the TCP_MAXSEG socket option (0: unset).
    pub(crate) user_mss: u32,
    /// `icsk_user_timeout` in ms: the TCP_USER_TIMEOUT socket option (0: unset).
    pub(crate) user_timeout_ms: u32,
    /// `tp->nonagle` ([`NAGLE_OFF`], [`NAGLE_CORK`], [`NAGLE_PUSH`]).
    pub(crate) nonagle: u8,
    /// `tp->chrono_type`, `chrono_start` (in jiffies) and `chrono_stat` (jiffies per type:
    /// busy, rwnd-limited, sndbuf-limited).
    pub(crate) chrono_type: u8,
    /// `tp->notsent_lowat` (TCP_NOTSENT_LOWAT; 0: the sysctl's value).
    pub(crate) notsent_lowat: u32,
    /// Bytes of the unsent tail skb (what a write may still append to it), and the largest
    /// window the peer has offered (`tp->max_window`), for the write path's size goal.
    pub(crate) tail_skb_len: u64,
    pub(crate) max_window: u32,
    pub(crate) chrono_start: u64,
    pub(crate) chrono_stat: [u64; 3],
    /// End of the highest SACKed sequence (`tcp_highest_sack_seq`, "fack").
    pub(crate) highest_sack: SeqNum,
    // sacked_out, lost_out, retrans_out and lost live in `sk` (tcp_packets_in_flight and BBR
    // read them), as do delivered_mstamp, app_limited and tcp_wstamp_ns.
    pub(crate) high_seq: SeqNum,
    /// Undo of a cwnd reduction found spurious (`undo_marker`, `undo_retrans`, `prior_ssthresh`,
    /// `retrans_stamp`).
    pub(crate) undo: crate::input::UndoState,
    pub(crate) prr_delivered: u32,
    pub(crate) prr_out: u32,
    pub(crate) reordering: u32,
    pub(crate) ecn_queue_cwr: bool,
    /// Data goes out ECT(0) (`INET_ECN_xmit`; `INET_ECN_dontxmit` clears it): set for the
    /// handshake when the CC needs ECN, then for new data of an ECN connection.
    pub(crate) ect_xmit: bool,
    pub(crate) cwnd_usage_seq: SeqNum,
    pub(crate) snd_cwnd_stamp: u64,
    pub(crate) lsndtime: u64,
    pub(crate) snd_sml: SeqNum,
    /// `tp->first_tx_mstamp` (tcp_rate.c), in nanoseconds.
    pub(crate) first_tx_ns: u64,
    /// Bytes of this socket's data segments still in the host's queue or NIC
    /// (`sk_wmem_alloc` as TCP Small Queues sees it), and whether TSQ stopped the sender.
    pub(crate) tsq_bytes: u64,
    /// The device frees each skb as it takes it (a tun device orphans them): the socket's
    /// data never waits in the host, so TCP Small Queues never throttle it.
    pub(crate) tx_orphan: bool,
    pub(crate) tsq_throttled: bool,
    /// The host's qdisc refused a segment and none of this socket's packets has left the NIC
    /// since: try one skb per call, as Linux stops at the first NET_XMIT_DROP.
    pub(crate) qdisc_refused: bool,
    /// skbs the host's qdisc takes from this socket now (`set_qdisc_room`).
    pub(crate) qdisc_room: Option<u32>,
    /// The socket's pacing status, as the transmit path asks it.
    pub(crate) pacing: PacingMode,
    /// The tail loss probe outstanding (`tlp_high_seq`, `tlp_retrans`).
    pub(crate) tlp: crate::tlp::TlpState,

    // --- RTT / timers ---
    /// `tcp_rtt_estimator`'s state (srtt lives in `sk`) and the min-RTT filter.
    pub(crate) rtt: crate::rtt::RttEstimator,
    /// The retransmission timeout and its backoff (`icsk_rto`, `icsk_backoff`,
    /// `icsk_retransmits`).
    pub(crate) icsk: crate::timer::RtoState,
    /// The retransmission-timer slot (`icsk_retransmit_timer` with `icsk_pending`): RTO or the
    /// RACK reordering timeout, never both.
    pub(crate) xmit_timer: Option<(SimTime, XmitTimer)>,
    pub(crate) pacing_deadline: Option<SimTime>,

    // --- RACK (tcp_recovery.c) ---
    /// RACK's clock and reordering window (`tp->rack`).
    pub(crate) rack: crate::rack::RackState,

    // --- receive side ---
    pub(crate) irs: SeqNum,
    pub(crate) rcv_wup: SeqNum,
    pub(crate) rcv_wnd: u32,
    pub(crate) rcv_wscale: u8,
    /// The receive buffer: its size, memory charged, `window_clamp`, `rcv_ssthresh`,
    /// autotuning and the receiver's RTT estimate.
    pub(crate) rcvbuf: crate::rcv_buf::RcvBuf,
    /// `tp->last_oow_ack_time`: when a duplicate ACK last answered an out-of-window segment.
    pub(crate) last_oow_ack_ns: Option<u64>,
    /// `tp->rcv_tstamp`: when the last acceptable ACK arrived (ns; the connection's start until
    /// then).
    pub(crate) rcv_tstamp: u64,
    /// `tp->rcv_ooopack`: segments that arrived out of order.
    pub(crate) rcv_ooopack: u64,
    pub(crate) ofo: Vec<(SeqNum, SeqNum)>,
    pub(crate) sack_recent: Vec<(SeqNum, SeqNum)>,
    pub(crate) dsack: Option<(SeqNum, SeqNum)>,
    pub(crate) ack: AckState,
    pub(crate) ecn_seen: bool,
    pub(crate) peer_fin: bool,
    /// `sk->sk_shutdown`: [`RCV_SHUTDOWN`] and/or [`SEND_SHUTDOWN`].
    pub(crate) sk_shutdown: u8,
    /// The socket left the connection tables (`tcp_done`, or `tcp_close` ending in CLOSE): a
    /// segment that still arrives finds no socket and is answered with a RST.
    pub(crate) unhashed: bool,
    /// `sk->sk_err`: the error the connection ended with, reported once to the application.
    pub(crate) sk_err: Option<&'static str>,
    pub(crate) sack_ok: bool,
    pub(crate) snd_wscale_seen: bool,
    pub(crate) ts_ok: bool,
    pub(crate) ts_recent: u32,
    pub(crate) rcv_tsecr: Option<u32>,
    /// Header prediction (`tp->pred_flags`): the raw window field an in-order segment must
    /// carry, with only ACK (and PSH) set and the usual options, to take the fast path of
    /// `tcp_rcv_established`; None while prediction is off.
    pub(crate) pred_wnd: Option<u16>,
    pub(crate) ecn_requested: bool,
    /// SACK compression (`compressed_ack`, `compressed_ack_rcv_nxt`, `dup_ack_counter`, and the
    /// `compressed_ack_timer` deadline).
    pub(crate) comp_sack: crate::recv::SackCompression,
    /// The segment being received is a GRO skb of this many segments of `rx_gso_size` bytes
    /// (1 and 0 for a plain segment).
    pub(crate) rx_gso_segs: u32,
    pub(crate) rx_gso_size: u32,

    pub(crate) stats: TcpStats,
    pub(crate) bytes_read: u64,
    /// The delivery rate `tcp_info` reports (`tp->rate_delivered`, `rate_interval_us`,
    /// `rate_app_limited`).
    pub(crate) last_rate: LastRate,
}

/// The last delivery-rate sample `tcp_rate_gen` kept: the latest one not app-limited, or an
/// app-limited one at least as fast.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LastRate {
    pub(crate) delivered: u32,
    pub(crate) interval_us: u32,
    pub(crate) app_limited: bool,
}

impl Endpoint {
    fn blank(cfg: Arc<TcpConfig>, iss: u32) -> Self {
        let iss_u32 = iss;
        let iss = SeqNum(iss);
        let cc = Cc::new(cfg.cc, &cfg.cc_params);
        // The CC's random stream (BBR's gain-cycle start) is seeded from the ISS, which the
        // scenario draws from the flow's own random stream: per-flow, and reproducible.
        let rng_seed = DEFAULT_RNG_SEED ^ u64::from(iss_u32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let sk = Sock {
            snd_cwnd: cfg.init_cwnd,
            mss_cache: cfg.advmss - 12,
            rng_seed,
            base_rtt_us: cfg.base_rtt_us,
            // fq_classify stores SK_PACING_FQ at the socket's first packet, its SYN: before the
            // CC's init, which then leaves pacing to fq.
            pacing_fq: cfg.fq,
            hz: cfg.hz,
            ..Sock::default()
        };
        // tcp_select_initial_window sets both at connect() or when the SYN arrives.
        let rcv_wscale = 0;
        let rcv_wnd = 0;
        let rcvbuf = crate::rcv_buf::RcvBuf::new(&cfg);
        let rto = cfg.rto_init;
        let reordering = cfg.reordering;
        let mut ep = Endpoint {
            state: TcpState::Closed,
            sk,
            cc,
            now: SimTime::ZERO,
            iss,
            write_seq: iss,
            unsent: 0,
            fin_queued: false,
            eor_marks: VecDeque::new(),
            fin_sent: false,
            rtx: VecDeque::new(),
            tsorted: VecDeque::new(),
            rtx_hint: iss,
            snd_wnd: 0,
            snd_wscale: 0,
            snd_wl1: SeqNum(0),
            pred_wnd: None,
            mss_clamp: cfg.advmss,
            user_mss: 0,
            user_timeout_ms: 0,
            nonagle: if cfg.nodelay { NAGLE_OFF } else { 0 },
            chrono_type: 0,
            notsent_lowat: 0,
            tail_skb_len: 0,
            max_window: 0,
            chrono_start: 0,
            chrono_stat: [0; 3],
            highest_sack: iss,
            high_seq: iss,
            undo: crate::input::UndoState { prior_ssthresh: 0, marker: SeqNum(0), retrans: -1, retrans_stamp: 0 },
            prr_delivered: 0,
            prr_out: 0,
            reordering,
            ecn_queue_cwr: false,
            ect_xmit: false,
            cwnd_usage_seq: iss,
            snd_cwnd_stamp: 0,
            lsndtime: 0,
            snd_sml: iss,
            first_tx_ns: 0,
            tsq_bytes: 0,
            tx_orphan: false,
            tsq_throttled: false,
            qdisc_refused: false,
            qdisc_room: None,
            pacing: PacingMode::default(),
            tlp: crate::tlp::TlpState { high_seq: None, retrans: false },
            rtt: crate::rtt::RttEstimator {
                mdev_us: 0,
                mdev_max_us: 0,
                rttvar_us: 0,
                rtt_seq: iss,
                min_rtt: MinMax::default(),
            },
            icsk: crate::timer::RtoState { rto, backoff: 0, retransmits: 0, probes_out: 0, probes_tstamp: None },
            xmit_timer: None,
            pacing_deadline: None,
            rack: crate::rack::RackState {
                mstamp: 0,
                rtt_us: 0,
                end_seq: iss,
                advanced: false,
                reord: false,
                reo_wnd_steps: 1,
                dsack_seen: false,
                last_delivered: 0,
                reo_wnd_persist: 0,
            },
            irs: SeqNum(0),
            rcv_wup: SeqNum(0),
            rcv_wnd,
            rcv_wscale,
            rcvbuf,
            last_oow_ack_ns: None,
            rcv_tstamp: 0,
            rcv_ooopack: 0,
            ofo: Vec::new(),
            sack_recent: Vec::new(),
            dsack: None,
            ack: AckState {
                pending: 0,
                quick: 0,
                pingpong: 0,
                ato: 0,
                timeout: SimTime::ZERO,
                lrcvtime: 0,
                rcv_mss: 536,
            },
            ecn_seen: false,
            peer_fin: false,
            sk_shutdown: 0,
            unhashed: false,
            sk_err: None,
            sack_ok: false,
            snd_wscale_seen: false,
            ts_ok: false,
            ts_recent: 0,
            rcv_tsecr: None,
            ecn_requested: false,
            comp_sack: crate::recv::SackCompression {
                compressed_ack: 0,
                compressed_ack_rcv_nxt: SeqNum(0),
                dup_ack_counter: 0,
                deadline: None,
            },
            rx_gso_segs: 1,
            rx_gso_size: 0,
            stats: TcpStats::default(),
            bytes_read: 0,
            last_rate: LastRate::default(),
            cfg,
        };
        ep.update_pacing_status();
        ep
    }

    /// A passive endpoint waiting for a SYN (`listen()` + the child socket that `accept()` returns).
    /// `cfg` may be a `TcpConfig` or an `Arc<TcpConfig>` shared with other endpoints.
    pub fn listen(cfg: impl Into<Arc<TcpConfig>>, iss: u32) -> Self {
        let mut ep = Endpoint::blank(cfg.into(), iss);
        ep.state = TcpState::Listen;
        ep
    }

    /// An active endpoint; call [`Endpoint::connect`] to send the SYN.
    /// `cfg` may be a `TcpConfig` or an `Arc<TcpConfig>` shared with other endpoints.
    pub fn client(cfg: impl Into<Arc<TcpConfig>>, iss: u32) -> Self {
        Endpoint::blank(cfg.into(), iss)
    }

    pub fn state(&self) -> TcpState {
        self.state
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }
    pub fn sock(&self) -> &Sock {
        &self.sk
    }
    /// Seed the congestion-control module's random choices ([`Sock::rng_seed`]; by default
    /// derived from the ISS). Takes effect at the CC's `init`, when the connection is established.
    pub fn set_rng_seed(&mut self, seed: u64) {
        self.sk.rng_seed = seed;
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// The shared configuration, to build further endpoints from without copying it.
    pub fn config_arc(&self) -> &Arc<TcpConfig> {
        &self.cfg
    }
    pub fn is_established(&self) -> bool {
        matches!(
            self.state,
            TcpState::Established
                | TcpState::FinWait1
                | TcpState::FinWait2
                | TcpState::CloseWait
                | TcpState::Closing
                | TcpState::LastAck
                | TcpState::TimeWait
        )
    }

    /// Bytes the application has written that are not yet acknowledged or not yet sent.
    pub fn send_backlog_empty(&self) -> bool {
        !self.send_head() && self.rtx.is_empty()
    }

    /// All data (and FIN, if queued) written so far has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.is_established() && self.unsent == 0 && self.rtx.is_empty()
    }

    /// `connect()`: send the SYN.
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.set_now(now);
        debug_assert_eq!(self.state, TcpState::Closed);
        // tcp_connect_init: the initial window and its scale.
        self.select_initial_window(self.cfg.window_scaling);
        self.state = TcpState::SynSent;
        // tcp_ecn_send_syn: request ECN if tcp_ecn=1 or the CC needs it.
        let needs_ecn = self.cc.needs_ecn();
        self.ecn_requested = self.cfg.ecn == EcnMode::On || needs_ecn;
        if needs_ecn && self.cfg.syn_ect {
            self.ect_xmit = true;
        }
        let iss = self.iss;
        self.queue_control_skb(iss, TcpFlags::SYN);
        self.write_seq = iss + 1;
        self.set_snd_nxt(iss);
        self.set_snd_una(iss);
        self.transmit_head_syn(out);
    }

    /// `read()`: take up to `max` bytes of in-order received data; returns how many.
    /// Like `recvmsg`, reading may send an ACK at once (`tcp_cleanup_rbuf`).
    pub fn read(&mut self, now: SimTime, max: u64, out: &mut Vec<Segment>) -> u64 {
        self.set_now(now);
        let avail = self.stats.bytes_received - self.bytes_read;
        let n = avail.min(max);
        self.account_read(n, out);
        n
    }

    /// In-order received bytes not yet read by the application.
    pub fn readable(&self) -> u64 {
        self.stats.bytes_received - self.bytes_read
    }

    /// `write()`: queue `bytes` more bytes for sending.
    pub fn write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        self.send(now, bytes, false, out);
    }

    /// `send(..., MSG_MORE)` when `more`: queue `bytes` more bytes, and push them corked
    /// (`tcp_push` with TCP_NAGLE_CORK): only full segments leave now; later pushes (an ACK,
    /// the next write) use the socket's own setting.
    pub fn send(&mut self, now: SimTime, bytes: u64, more: bool, out: &mut Vec<Segment>) {
        self.set_now(now);
        // tcp_sendmsg_locked checks for an application-limited flight before it takes the data.
        self.rate_check_app_limited();
        // skb_entail: a new skb clears TCP_NAGLE_PUSH (no unsent tail skb to append to); the
        // first skb of an empty write queue starts the busy chrono (tcp_add_write_queue_tail).
        if self.unsent == 0 {
            self.nonagle &= !NAGLE_PUSH;
            if bytes > 0 {
                self.chrono_start(CHRONO_BUSY);
            }
        }
        self.unsent = self.unsent.saturating_add(bytes);
        self.write_seq += bytes.min(u32::MAX as u64) as u32;
        if self.is_established() {
            let nonagle = if more { NAGLE_CORK } else { self.nonagle };
            self.write_xmit_nonagle(0, nonagle, out);
        }
    }

    /// The host's device frees each skb at transmit (`skb_orphan`, as a tun device does): no
    /// bytes of this socket wait in the host, so TCP Small Queues never hold it back.
    pub fn set_tx_orphan(&mut self, on: bool) {
        self.tx_orphan = on;
        if on {
            self.tsq_bytes = 0;
        }
    }

    /// `setsockopt(TCP_NOTSENT_LOWAT)`: 0 falls back to `net.ipv4.tcp_notsent_lowat`.
    pub fn set_notsent_lowat(&mut self, bytes: u32) {
        self.notsent_lowat = bytes;
    }

    /// `tcp_notsent_lowat`: the socket's limit, else the sysctl's; None when unlimited.
    pub fn effective_notsent_lowat(&self) -> Option<u32> {
        let v = if self.notsent_lowat != 0 { self.notsent_lowat } else { self.cfg.notsent_lowat };
        (v != 0).then_some(v)
    }

    /// `tcp_poll`'s POLLOUT with a not-sent limit: `__sk_stream_memory_free(sk, 1)`, twice the
    /// unsent bytes below the limit (ccsim's send buffer is otherwise unbounded).
    pub fn writable(&self) -> bool {
        match self.effective_notsent_lowat() {
            Some(lowat) => self.unsent.saturating_mul(2) < lowat as u64,
            None => true,
        }
    }

    /// `tcp_xmit_size_goal`: the size an skb of written data grows to, half the largest window
    /// the peer offered (`tcp_bound_to_half_wnd`, at most GSO's 64 KB) in whole MSS.
    fn size_goal(&mut self) -> u64 {
        self.max_window = self.max_window.max(self.snd_wnd);
        let mss = self.sk.mss_cache.max(1) as u64;
        let gso_max = 65_536u64;
        let cutoff = if self.max_window > 536 { self.max_window as u64 / 2 } else { self.max_window as u64 };
        let goal = if cutoff > 0 && gso_max > cutoff { cutoff.max(68) } else { gso_max };
        (goal / mss * mss).max(mss)
    }

    /// A non-blocking `write()` as `tcp_sendmsg_locked` runs it when a not-sent limit is set:
    /// data joins the tail skb up to the size goal, a new skb is started only while fewer than
    /// the limit's bytes wait unsent (`sk_stream_memory_free`), a full skb at the head of the
    /// queue is pushed at once (`tcp_push_one`), the rest by `tcp_push`. Returns the bytes
    /// taken (0: EAGAIN). Without a limit the whole write is taken.
    pub fn write_nonblocking(&mut self, now: SimTime, bytes: u64, more: bool, out: &mut Vec<Segment>) -> u64 {
        let Some(lowat) = self.effective_notsent_lowat() else {
            self.send(now, bytes, more, out);
            return bytes;
        };
        self.set_now(now);
        self.rate_check_app_limited();
        let goal = self.size_goal();
        self.tail_skb_len = self.tail_skb_len.min(self.unsent);
        if self.eor_marks.back() == Some(&self.write_seq) {
            self.tail_skb_len = 0; // an EOR skb takes nothing more
        }
        let mut copied = 0u64;
        while copied < bytes {
            if self.tail_skb_len == 0 || self.tail_skb_len >= goal {
                // new_segment: sk_stream_memory_free (tcp_stream_memory_free, wake 0).
                if self.unsent >= lowat as u64 {
                    break;
                }
                if self.unsent == 0 {
                    self.nonagle &= !NAGLE_PUSH;
                    self.chrono_start(CHRONO_BUSY);
                }
                self.tail_skb_len = 0;
            }
            let copy = (goal - self.tail_skb_len).min(bytes - copied);
            self.unsent += copy;
            self.write_seq += copy as u32;
            self.tail_skb_len += copy;
            copied += copy;
            if self.tail_skb_len < goal {
                continue;
            }
            // A full skb: tcp_push_one when it is the send head.
            if self.unsent == self.tail_skb_len && self.is_established() {
                self.write_xmit_nonagle(0, NAGLE_PUSH, out);
                self.tail_skb_len = self.tail_skb_len.min(self.unsent);
            }
        }
        if copied > 0 && self.is_established() {
            // tcp_push
            let nonagle = if more { NAGLE_CORK } else { self.nonagle };
            self.write_xmit_nonagle(0, nonagle, out);
            self.tail_skb_len = self.tail_skb_len.min(self.unsent);
        }
        copied
    }

    /// `setsockopt(TCP_NODELAY)` (`__tcp_sock_set_nodelay`): on, Nagle is off and what is queued
    /// is pushed at once.
    pub fn set_nodelay(&mut self, now: SimTime, on: bool, out: &mut Vec<Segment>) {
        self.set_now(now);
        if on {
            self.nonagle |= NAGLE_OFF | NAGLE_PUSH;
            self.push_pending_frames(out);
        } else {
            self.nonagle &= !NAGLE_OFF;
        }
    }

    /// `setsockopt(TCP_CORK)` (`__tcp_sock_set_cork`): corked, only full segments leave; uncorked,
    /// what is queued is pushed (at once if TCP_NODELAY is on, else as Nagle allows).
    pub fn set_cork(&mut self, now: SimTime, on: bool, out: &mut Vec<Segment>) {
        self.set_now(now);
        if on {
            self.nonagle |= NAGLE_CORK;
        } else {
            self.nonagle &= !NAGLE_CORK;
            if self.nonagle & NAGLE_OFF != 0 {
                self.nonagle |= NAGLE_PUSH;
            }
            self.push_pending_frames(out);
        }
    }

    /// `send(..., MSG_EOR)`: queue `bytes` more bytes and end the record there: the skb they
    /// close is marked EOR, so no later write is ever sent in the same segment.
    pub fn write_eor(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        self.set_now(now);
        self.rate_check_app_limited();
        if self.unsent == 0 && bytes > 0 {
            self.nonagle &= !NAGLE_PUSH;
            self.chrono_start(CHRONO_BUSY);
        }
        self.unsent = self.unsent.saturating_add(bytes);
        self.write_seq += bytes.min(u32::MAX as u64) as u32;
        if self.eor_marks.back() != Some(&self.write_seq) {
            self.eor_marks.push_back(self.write_seq);
        }
        if self.is_established() {
            self.push_pending_frames(out);
        }
    }

    /// An endless bulk source (iperf-like): the send buffer never runs dry.
    pub fn write_forever(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.set_now(now);
        // Its first write's check for an application-limited flight (tcp_sendmsg_locked).
        self.rate_check_app_limited();
        // Its first skb on an empty write queue starts the busy chrono, as any write's does
        // (tcp_add_write_queue_tail); the chrono only feeds tcp_info.
        if self.unsent == 0 {
            self.chrono_start(CHRONO_BUSY);
        }
        self.unsent = u64::MAX;
        if self.is_established() {
            self.push_pending_frames(out);
        }
    }

    /// Stop an endless source: discard unsent data (what an application's stop amounts to on the
    /// wire: nothing more is sent, data in flight is still delivered).
    pub fn stop_sending(&mut self) {
        self.unsent = 0;
    }

    /// `close()` / `shutdown(SHUT_WR)`: send a FIN once queued data is out.
    pub fn close(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.set_now(now);
        self.fin_queued = true;
        if self.is_established() {
            self.push_pending_frames(out);
        }
    }

    /// `setsockopt(TCP_MAXSEG)`: the MSS this socket advertises and accepts is at most `mss`
    /// (`tp->rx_opt.user_mss`; 0 clears it). Values outside 88..=65535 are refused (EINVAL),
    /// as `do_tcp_setsockopt` refuses them. It takes effect at the next SYN or SYN-ACK.
    pub fn set_user_mss(&mut self, mss: u32) -> Result<(), &'static str> {
        if mss != 0 && !(88..=65535).contains(&mss) {
            return Err("EINVAL");
        }
        self.user_mss = mss;
        Ok(())
    }

    /// `setsockopt(TCP_USER_TIMEOUT)`: give the connection up once data has gone unacknowledged
    /// for `ms` since its first retransmission (`icsk_user_timeout`; 0 restores `tcp_retries2`).
    pub fn set_user_timeout(&mut self, ms: u32) {
        self.user_timeout_ms = ms;
    }

    /// `tp->advmss` before the timestamp option is taken off: the route's MSS, lowered to
    /// TCP_MAXSEG when that is set (`tcp_mss_clamp`).
    pub(crate) fn advmss(&self) -> u32 {
        if self.user_mss != 0 {
            self.cfg.advmss.min(self.user_mss)
        } else {
            self.cfg.advmss
        }
    }

    /// `tcpi_advmss`: `tp->advmss`, less the timestamp option when timestamps are on.
    pub fn tcpi_advmss(&self) -> u32 {
        self.advmss() - if self.ts_ok { 12 } else { 0 }
    }

    /// `sock_error`: the pending socket error (its errno name, e.g. `ETIMEDOUT` after
    /// `tcp_write_err`), cleared as it is reported.
    pub fn take_sk_err(&mut self) -> Option<&'static str> {
        self.sk_err.take()
    }

    /// `sk->sk_shutdown` ([`RCV_SHUTDOWN`], [`SEND_SHUTDOWN`]).
    pub fn sk_shutdown(&self) -> u8 {
        self.sk_shutdown
    }

    /// `shutdown(how)` (`inet_shutdown` → `tcp_shutdown`): `how` is [`RCV_SHUTDOWN`],
    /// [`SEND_SHUTDOWN`] or both. Only the send side acts on the wire: in ESTABLISHED,
    /// SYN-RECV or CLOSE-WAIT a FIN is queued (`tcp_close_state` → `tcp_send_fin`); shutting
    /// the receive side only makes reads return 0 once the queue is empty. A connect still in
    /// SYN-SENT is disconnected.
    pub fn shutdown(&mut self, now: SimTime, how: u8, out: &mut Vec<Segment>) {
        self.set_now(now);
        // inet_shutdown: a connect still in SYN-SENT (or a listener shut for reading) is
        // disconnected instead (tcp_disconnect: CLOSE, ECONNRESET, no RST from SYN-SENT).
        if self.state == TcpState::SynSent || (self.state == TcpState::Listen && how & RCV_SHUTDOWN != 0) {
            if self.state == TcpState::SynSent {
                self.sk_err = Some("ECONNRESET");
            }
            self.done();
            return;
        }
        self.sk_shutdown |= how & (RCV_SHUTDOWN | SEND_SHUTDOWN);
        if how & SEND_SHUTDOWN == 0 {
            return;
        }
        // tcp_shutdown: tcp_close_state → tcp_send_fin.
        if matches!(self.state, TcpState::Established | TcpState::SynRecv | TcpState::CloseWait) {
            self.close(now, out);
        }
    }

    /// The application's `close()` (`tcp_close` → `__tcp_close`): both directions shut; if
    /// received data was never read the connection is aborted with a RST
    /// (`tcp_send_active_reset`, TCPAbortOnClose) and the socket is gone, otherwise a FIN follows
    /// the queued data (`tcp_close_state` → `tcp_send_fin`; nothing new if one is already queued).
    pub fn app_close(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.set_now(now);
        self.sk_shutdown = RCV_SHUTDOWN | SEND_SHUTDOWN;
        if self.readable() > 0 && self.is_established() && !matches!(self.state, TcpState::TimeWait) {
            self.bytes_read = self.stats.bytes_received;
            self.state = TcpState::Closed;
            self.send_active_reset(out);
            self.done();
            return;
        }
        match self.state {
            // tcp_close_state: SYN-SENT and LISTEN go straight to CLOSE; the socket is gone.
            TcpState::SynSent | TcpState::Listen => self.done(),
            TcpState::Established | TcpState::SynRecv | TcpState::CloseWait => self.close(now, out),
            _ => {}
        }
    }

    /// `tcp_chrono_set`: close the running period, start `new`.
    fn chrono_set(&mut self, new: u8) {
        let now = self.now.ns() / self.cfg.jiffy_ns();
        if self.chrono_type > 0 {
            self.chrono_stat[self.chrono_type as usize - 1] += now.saturating_sub(self.chrono_start);
        }
        self.chrono_start = now;
        self.chrono_type = new;
    }

    /// `tcp_chrono_start`: a more interesting limit takes over from the current one.
    pub(crate) fn chrono_start(&mut self, kind: u8) {
        if kind > self.chrono_type {
            self.chrono_set(kind);
        }
    }

    /// `tcp_chrono_stop`: with both queues empty the sender is idle; otherwise, if `kind` was the
    /// limit being timed, it is just busy again.
    pub(crate) fn chrono_stop(&mut self, kind: u8) {
        if self.rtx.is_empty() && !self.send_head() {
            self.chrono_set(0);
        } else if kind == self.chrono_type {
            self.chrono_set(CHRONO_BUSY);
        }
    }

    /// `tcp_get_info_chrono_stats` at `now`: (`tcpi_busy_time`, `tcpi_rwnd_limited`,
    /// `tcpi_sndbuf_limited`) in microseconds, counted in whole jiffies.
    pub fn chrono_stats_us(&self, now: SimTime) -> (u64, u64, u64) {
        let j = self.cfg.jiffy_ns();
        let mut st = self.chrono_stat;
        if self.chrono_type > 0 {
            st[self.chrono_type as usize - 1] += (now.ns() / j).saturating_sub(self.chrono_start);
        }
        let us = |x: u64| x * j / 1000;
        (us(st[0] + st[1] + st[2]), us(st[1]), us(st[2]))
    }

    pub(crate) fn set_now(&mut self, now: SimTime) {
        debug_assert!(now >= self.now);
        self.now = now;
        self.sk.now_ns = now.ns();
    }

    pub(crate) fn now_us(&self) -> u64 {
        self.now.ns() / 1000
    }

    /// `tp->snd_una`, `tp->snd_nxt` and `tp->rcv_nxt`, which live in the CC's view ([`Sock`],
    /// bare `u32` as modules read them), as sequence numbers.
    #[inline]
    pub(crate) fn snd_una(&self) -> SeqNum {
        SeqNum(self.sk.snd_una)
    }
    #[inline]
    pub(crate) fn snd_nxt(&self) -> SeqNum {
        SeqNum(self.sk.snd_nxt)
    }
    #[inline]
    pub(crate) fn rcv_nxt(&self) -> SeqNum {
        SeqNum(self.sk.rcv_nxt)
    }
    #[inline]
    pub(crate) fn set_snd_una(&mut self, s: SeqNum) {
        self.sk.snd_una = s.get();
    }
    #[inline]
    pub(crate) fn set_snd_nxt(&mut self, s: SeqNum) {
        self.sk.snd_nxt = s.get();
    }
    #[inline]
    pub(crate) fn set_rcv_nxt(&mut self, s: SeqNum) {
        self.sk.rcv_nxt = s.get();
    }

    /// `tcp_packets_in_flight`: packets_out - (sacked_out + lost_out) + retrans_out.
    pub(crate) fn packets_in_flight(&self) -> u32 {
        self.sk.packets_in_flight()
    }

    pub(crate) fn left_out(&self) -> u32 {
        self.sk.sacked_out + self.sk.lost_out
    }

    /// `tcp_set_ca_state`: tell the module first, then switch.
    pub(crate) fn set_ca_state(&mut self, new: CaState) {
        self.cc.set_state(&mut self.sk, new);
        self.sk.ca_state = new;
    }

    /// `tcp_ca_event` for the sender's events (`TxStart`, `CwndRestart`, `CompleteCwr`, `Loss`),
    /// on which no module makes requests; the receive-side ECN events go through
    /// `ca_event_rx`, which carries them out.
    pub(crate) fn ca_event(&mut self, ev: CaEvent) {
        self.cc.cwnd_event(&mut self.sk, ev);
        debug_assert!(self.sk.requests.is_empty(), "{:?} on {ev:?}", self.sk.requests);
    }

    /// Carry out what the CC module asked for in the callback that just returned
    /// ([`ccsim_cc::CcRequests`]), in the order Linux's module code has the effects:
    /// `INET_ECN_dontxmit` (`dctcp_init`), `tcp_ecn_queue_cwr` (FreeBSD `cc_cong_signal`), and
    /// `dctcp_ece_ack_update`'s `__tcp_send_ack(sk, prior_rcv_nxt)` before its
    /// `icsk_ack.pending |= ICSK_ACK_NOW`.
    #[inline]
    pub(crate) fn apply_cc_requests(&mut self, out: &mut Vec<Segment>) {
        if self.sk.requests.is_empty() {
            return;
        }
        let req = std::mem::take(&mut self.sk.requests);
        if req.wants_ecn_dontxmit() {
            self.ect_xmit = false;
        }
        if req.wants_cwr() {
            self.ecn_queue_cwr();
        }
        let mut ack_now = req.wants_ack_now();
        if let Some((seq, ece)) = req.send_ack_for() {
            let seq = SeqNum(seq);
            self.send_ack_for(seq, Some(ece), out);
            // ccsim has the ACK for rcv_nxt itself (an out-of-order segment: nothing new since
            // the last CE event) clear the ICSK_ACK_NOW request along with icsk_ack.pending,
            // where Linux sets ICSK_ACK_NOW after __tcp_send_ack whatever it acknowledged.
            if seq == self.rcv_nxt() {
                ack_now = false;
            }
        }
        if ack_now {
            self.ack.pending |= ACK_NOW;
        }
    }

    /// `tcp_in_cwnd_reduction`.
    pub(crate) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_current_ssthresh`.
    pub(crate) fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.sk.snd_ssthresh
        } else {
            let c = self.sk.snd_cwnd;
            self.sk.snd_ssthresh.max((c >> 1) + (c >> 2))
        }
    }

    /// `tcp_init_congestion_control`, run when the connection becomes established.
    pub(crate) fn init_congestion_control(&mut self, out: &mut Vec<Segment>) {
        self.cc.init(&mut self.sk);
        self.apply_cc_requests(out);
        self.update_pacing_status();
    }

    /// Index of the skb starting at `seq` in the retransmit queue.
    pub(crate) fn rtx_index(&self, seq: SeqNum) -> Option<usize> {
        // Full-sized segments: the index follows from the sequence offset; else search.
        let front = self.rtx.front()?.seq;
        let guess = ((seq - front) / self.sk.mss_cache.max(1)) as usize;
        if self.rtx.get(guess).is_some_and(|s| s.seq == seq) {
            return Some(guess);
        }
        let i = self.rtx.partition_point(|s| s.seq.before(seq));
        (i < self.rtx.len() && self.rtx[i].seq == seq).then_some(i)
    }

    pub(crate) fn queue_control_skb(&mut self, seq: SeqNum, flags: u8) {
        let end = seq + 1;
        self.rtx.push_back(TxSkb {
            seq,
            end_seq: end,
            tcp_flags: flags,
            sacked: 0,
            tx_ns: 0,
            first_tx_ns: 0,
            delivered_ns: 0,
            delivered: 0,
            app_limited: false,
        });
    }
}
