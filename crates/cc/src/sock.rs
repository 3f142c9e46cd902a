/// `icsk_ca_state` (`enum tcp_ca_state`), ordered as in Linux so `<` comparisons carry over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaState {
    #[default]
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

impl CaState {
    /// The name packetdrill and `tcp_info` use (`TCP_CA_Open`, ...).
    pub fn linux_name(self) -> &'static str {
        match self {
            CaState::Open => "TCP_CA_Open",
            CaState::Disorder => "TCP_CA_Disorder",
            CaState::Cwr => "TCP_CA_CWR",
            CaState::Recovery => "TCP_CA_Recovery",
            CaState::Loss => "TCP_CA_Loss",
        }
    }
}

/// The narrow socket view a congestion-control module may read and write: the fields of
/// `struct tcp_sock` / `inet_connection_sock` that Linux CC modules touch. The TCP endpoint keeps
/// these fields here as its own state, so handing the view to a module copies nothing.
#[derive(Clone, Debug)]
pub struct Sock {
    /// Current time in nanoseconds (the stack's clock; modules derive `tcp_mstamp` and jiffies).
    pub now_ns: u64,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd_cnt: u32,
    /// Upper bound on cwnd (`snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// cwnd before the last reduction (`prior_cwnd`), used by `tcp_reno_undo_cwnd`.
    pub prior_cwnd: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub rcv_nxt: u32,
    pub mss_cache: u32,
    /// Packets delivered (cumulatively or selectively acked), including retransmissions.
    pub delivered: u32,
    /// Packets delivered whose ACK carried ECE (`tp->delivered_ce`).
    pub delivered_ce: u32,
    /// Smoothed RTT in microseconds, left-shifted by 3 (`srtt_us`).
    pub srtt_us: u32,
    /// Windowed minimum RTT in microseconds (`tcp_min_rtt`), `u32::MAX` before any sample.
    pub min_rtt_us: u32,
    pub packets_out: u32,
    /// Packets SACKed (`sacked_out`), marked lost (`lost_out`) and retransmitted and still in
    /// flight (`retrans_out`): with `packets_out` they make [`Sock::packets_in_flight`].
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Packets marked lost, cumulatively (`tp->lost`, counted by `tcp_mark_skb_lost`).
    pub lost: u32,
    /// Time of the last delivery (`tp->delivered_mstamp`), in nanoseconds (Linux keeps µs).
    pub delivered_mstamp_ns: u64,
    /// `tp->app_limited`: `delivered` + in-flight at the moment the flight became
    /// application-limited, 0 when it is not (tcp_rate.c). BBR sets it in PROBE_RTT.
    pub app_limited: u32,
    /// Earliest departure time of the next packet under pacing (`tp->tcp_wstamp_ns`).
    pub wstamp_ns: u64,
    /// The CC asks for pacing (`sk_pacing_status = SK_PACING_NEEDED`, set by BBR's init): the
    /// stack paces internally at `pacing_rate` as if `TcpConfig::pacing` were on.
    pub pacing_needed: bool,
    /// The host's fq qdisc has seen the socket (`sk_pacing_status = SK_PACING_FQ`, stored by
    /// `fq_classify` at the socket's first packet): fq holds each skb until its departure time,
    /// and TCP does not pace internally.
    pub pacing_fq: bool,
    /// Seed for a module's random choices (Linux draws from `get_random_u32`; ccsim stays
    /// deterministic). The endpoint derives it from the connection's initial sequence number, which
    /// the scenario draws from the flow's random stream; [`DEFAULT_RNG_SEED`] otherwise.
    pub rng_seed: u64,
    pub ca_state: CaState,
    /// ECN was negotiated on this connection (`TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// `TCP_ECN_DEMAND_CWR`: set ECE on every ACK sent.
    pub ecn_demand_cwr: bool,
    /// `is_cwnd_limited` / `max_packets_out`, as `tcp_cwnd_validate` keeps them.
    pub is_cwnd_limited: bool,
    pub max_packets_out: u32,
    /// Pacing rate in bytes per second (`sk_pacing_rate`).
    pub pacing_rate: u64,
    /// A delayed ACK is scheduled (`icsk_ack.pending & ICSK_ACK_TIMER`).
    pub ack_timer_pending: bool,
    /// What the module asked the stack to do during the callback running now ([`CcRequests`]);
    /// the endpoint carries the requests out, in Linux's order, as soon as the callback returns.
    pub requests: CcRequests,
    /// Receive side: keep delaying the ACK of a data segment that carries CWR, instead of
    /// `tcp_ecn_accept_cwr`'s immediate ACK. Set by FreeBSD DCTCP (`dctcp_ecnpkt_handler`: "DCTCP
    /// sets delayed ack when this segment sets the CWR flag"); false for every Linux module.
    pub delack_on_cwr: bool,
    /// Receive side, set by the stack: the data segment being processed carries CWR (FreeBSD
    /// `CCF_TCPHDR_CWR`), readable during the `EcnIsCe` / `EcnNoCe` events.
    pub rx_cwr: bool,
    /// Time of the last data transmission in nanoseconds (`tp->lsndtime`, which Linux keeps in
    /// jiffies). The stack updates it after raising `CaEvent::TxStart`, so during that event it
    /// still holds the previous send time (CUBIC uses it to skip idle periods).
    pub lsndtime_ns: u64,
    /// What the BPF sock_ops program answered to `BPF_SOCK_OPS_BASE_RTT` for this connection, in
    /// µs (`tcp_call_bpf` in `tcpnv_init`); `None` when no program answers. Per connection: the
    /// scenario layer sets it when it builds the connection (see `crate::basertt` for the rule
    /// engine that plays the program) and the endpoint copies it here from its configuration.
    /// Only TCP-NV reads it, at init, and only a positive reply counts.
    pub base_rtt_us: Option<u32>,
    /// `CONFIG_HZ` of the stack the module runs in (the endpoint's `TcpConfig::hz`: 100, 250,
    /// 300 or 1000): the rate of the jiffies clock ([`Sock::jiffies`]) and the unit of
    /// [`Sock::usecs_to_jiffies`] / [`Sock::msecs_to_jiffies`]. Modules read it as [`Sock::hz`]
    /// where the kernel writes `HZ`.
    pub hz: u32,
}

impl Default for Sock {
    fn default() -> Self {
        Sock {
            now_ns: 0,
            snd_cwnd: 10,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            prior_cwnd: 0,
            snd_una: 0,
            snd_nxt: 0,
            rcv_nxt: 0,
            mss_cache: 1448,
            delivered: 0,
            delivered_ce: 0,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost: 0,
            delivered_mstamp_ns: 0,
            app_limited: 0,
            wstamp_ns: 0,
            pacing_needed: false,
            pacing_fq: false,
            rng_seed: DEFAULT_RNG_SEED,
            ca_state: CaState::Open,
            ecn_ok: false,
            ecn_demand_cwr: false,
            is_cwnd_limited: false,
            max_packets_out: 0,
            pacing_rate: 0,
            ack_timer_pending: false,
            requests: CcRequests::NONE,
            delack_on_cwr: false,
            rx_cwr: false,
            lsndtime_ns: 0,
            base_rtt_us: None,
            hz: 1000,
        }
    }
}

/// The requests a module makes of the stack in a callback, where Linux's module calls into the
/// stack or sets a socket flag: collected here during the callback and carried out by the endpoint
/// in one place right after it (`Endpoint::apply_cc_requests`), in the order Linux has the
/// effects. Modules make them in `init` ([`CcRequests::ecn_dontxmit`]), in `in_ack_event`
/// ([`CcRequests::queue_cwr`]) and in `cwnd_event` for `EcnIsCe` / `EcnNoCe`
/// ([`CcRequests::send_ack`], [`CcRequests::ack_now`]). A bit set and one sequence number:
/// testing for "nothing asked" is one byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcRequests {
    bits: u8,
    /// The sequence number [`CcRequests::send_ack`] acknowledges.
    ack_seq: u32,
}

impl CcRequests {
    /// No request.
    pub const NONE: CcRequests = CcRequests { bits: 0, ack_seq: 0 };
    const SEND_ACK: u8 = 1;
    const SEND_ACK_ECE: u8 = 2;
    const ACK_NOW: u8 = 4;
    const QUEUE_CWR: u8 = 8;
    const ECN_DONTXMIT: u8 = 16;

    /// `__tcp_send_ack(sk, rcv_nxt)` from `dctcp_ece_ack_update`: a pure ACK for `rcv_nxt` now,
    /// with ECE as `dctcp_ece_ack_cwr` set it for that ACK.
    #[inline]
    pub fn send_ack(&mut self, rcv_nxt: u32, ece: bool) {
        self.bits |= Self::SEND_ACK | if ece { Self::SEND_ACK_ECE } else { 0 };
        self.ack_seq = rcv_nxt;
    }
    /// `icsk_ack.pending |= ICSK_ACK_NOW`: ACK the segment being received at once (FreeBSD's
    /// `CCF_ACKNOW`).
    #[inline]
    pub fn ack_now(&mut self) {
        self.bits |= Self::ACK_NOW;
    }
    /// `tcp_ecn_queue_cwr`: CWR on the next new data segment. Linux modules never ask (the
    /// stack queues CWR when it enters CWR or Recovery itself); a module that `handles_ece` asks
    /// with its own ECN reduction, as FreeBSD's `cc_cong_signal(CC_ECN)` sets `TF_ECN_SND_CWR`.
    #[inline]
    pub fn queue_cwr(&mut self) {
        self.bits |= Self::QUEUE_CWR;
    }
    /// `INET_ECN_dontxmit`: stop sending ECT (DCTCP's init without ECN, after the handshake
    /// sent ECT for it).
    #[inline]
    pub fn ecn_dontxmit(&mut self) {
        self.bits |= Self::ECN_DONTXMIT;
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }
    /// The ACK [`CcRequests::send_ack`] asked for: (rcv_nxt, ECE).
    #[inline]
    pub fn send_ack_for(&self) -> Option<(u32, bool)> {
        (self.bits & Self::SEND_ACK != 0).then_some((self.ack_seq, self.bits & Self::SEND_ACK_ECE != 0))
    }
    #[inline]
    pub fn wants_ack_now(&self) -> bool {
        self.bits & Self::ACK_NOW != 0
    }
    #[inline]
    pub fn wants_cwr(&self) -> bool {
        self.bits & Self::QUEUE_CWR != 0
    }
    #[inline]
    pub fn wants_ecn_dontxmit(&self) -> bool {
        self.bits & Self::ECN_DONTXMIT != 0
    }
}

/// `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// [`Sock::rng_seed`] when nobody sets one (a fixed value, so runs stay reproducible).
pub const DEFAULT_RNG_SEED: u64 = 0x6262_7231_5eed_0001;

impl Sock {
    /// `tcp_packets_in_flight`: packets_out - (sacked_out + lost_out) + retrans_out.
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }
    /// `tcp_is_cwnd_limited`: in slow start, cwnd may grow to twice what was in flight.
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        if self.in_slow_start() {
            return self.snd_cwnd < 2 * self.max_packets_out;
        }
        false
    }
    /// `HZ`: jiffies per second.
    #[inline]
    pub fn hz(&self) -> u32 {
        self.hz
    }
    /// `tcp_jiffies32`: the jiffies clock now.
    #[inline]
    pub fn jiffies(&self) -> u32 {
        self.jiffies_at(self.now_ns)
    }
    /// The jiffies clock (`jiffies`, truncated to 32 bits) at `ns`: the ticks of `HZ` completed
    /// since time zero. (The common tick rates divide by constants: this is on the per-ACK path.)
    #[inline]
    pub fn jiffies_at(&self, ns: u64) -> u32 {
        match self.hz {
            1000 => (ns / 1_000_000) as u32,
            250 => (ns / 4_000_000) as u32,
            100 => (ns / 10_000_000) as u32,
            hz => (u128::from(ns) * u128::from(hz) / 1_000_000_000) as u32,
        }
    }
    /// `usecs_to_jiffies`: rounds up to whole jiffies, `(u + USEC_PER_SEC / HZ - 1) /
    /// (USEC_PER_SEC / HZ)` for an HZ that divides a million. For one that does not (300) the
    /// kernel's multiply-and-shift approximates the same ceiling, taken here exactly.
    #[inline]
    pub fn usecs_to_jiffies(&self, us: u32) -> u32 {
        match self.hz {
            1000 => us.div_ceil(1000),
            250 => us.div_ceil(4000),
            100 => us.div_ceil(10_000),
            hz => (u64::from(us) * u64::from(hz)).div_ceil(1_000_000) as u32,
        }
    }
    /// `msecs_to_jiffies`: rounds up to whole jiffies, as `usecs_to_jiffies`.
    #[inline]
    pub fn msecs_to_jiffies(&self, ms: u32) -> u32 {
        match self.hz {
            1000 => ms,
            hz => (u64::from(ms) * u64::from(hz)).div_ceil(1000) as u32,
        }
    }
    /// `tcp_mstamp` / `tcp_clock_us()`.
    pub fn now_us(&self) -> u64 {
        self.now_ns / 1_000
    }
}

/// What `pkts_acked` receives (`struct ack_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    pub pkts_acked: u32,
    /// RTT sample in microseconds, or negative when there is none.
    pub rtt_us: i64,
    /// Bytes delivered between the send of the most recently delivered packet and this ACK:
    /// `mss_cache * (delivered - rate.prior_delivered)`, as `tcp_clean_rtx_queue` fills it since
    /// the kernel dropped `tx.in_flight`. TCP-NV turns it into a rate.
    pub in_flight: u32,
}

/// A delivery-rate sample (`struct rate_sample`, tcp_rate.c), for `cong_control`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub prior_mstamp_us: u64,
    pub prior_delivered: u32,
    /// Packets delivered over the sampling interval (negative when invalid).
    pub delivered: i32,
    pub interval_us: i64,
    pub rtt_us: i64,
    pub losses: u32,
    pub acked_sacked: u32,
    pub prior_in_flight: u32,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    /// The ACK is (likely) a delayed ACK (`FLAG_ACK_MAYBE_DELAYED`): BBR does not let such an
    /// RTT sample refresh an expired min_rtt.
    pub is_ack_delayed: bool,
}
