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
    pub ca_state: CaState,
    /// ECN was negotiated on this connection (`TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// Send ECT on data (`INET_ECN_xmit`); a module clears it to stop (`INET_ECN_dontxmit`).
    pub ect_xmit: bool,
    /// `TCP_ECN_DEMAND_CWR`: set ECE on every ACK sent.
    pub ecn_demand_cwr: bool,
    /// `is_cwnd_limited` / `max_packets_out`, as `tcp_cwnd_validate` keeps them.
    pub is_cwnd_limited: bool,
    pub max_packets_out: u32,
    /// Pacing rate in bytes per second (`sk_pacing_rate`).
    pub pacing_rate: u64,
    /// A delayed ACK is scheduled (`icsk_ack.pending & ICSK_ACK_TIMER`).
    pub ack_timer_pending: bool,
    /// Request to ACK at once on this segment (`icsk_ack.pending |= ICSK_ACK_NOW`).
    pub ack_now: bool,
    /// Request to send an ACK for the given sequence right away, with the ECE state at the time of
    /// the request (`__tcp_send_ack(sk, rcv_nxt)` from `dctcp_ece_ack_update`).
    pub send_ack_for: Option<(u32, bool)>,
    /// Request to put CWR on the next new data segment (`tcp_ecn_queue_cwr`); the stack honours
    /// and clears it after `in_ack_event`. Linux modules never set it (the stack queues CWR when
    /// it enters CWR or Recovery itself); a module that `handles_ece` sets it with its own ECN
    /// reduction, as FreeBSD's `cc_cong_signal(CC_ECN)` sets `TF_ECN_SND_CWR`.
    pub queue_cwr: bool,
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
            ca_state: CaState::Open,
            ecn_ok: false,
            ect_xmit: false,
            ecn_demand_cwr: false,
            is_cwnd_limited: false,
            max_packets_out: 0,
            pacing_rate: 0,
            ack_timer_pending: false,
            ack_now: false,
            send_ack_for: None,
            queue_cwr: false,
            delack_on_cwr: false,
            rx_cwr: false,
            lsndtime_ns: 0,
        }
    }
}

/// `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Sock {
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
    /// `tcp_jiffies32` with HZ = 1000.
    pub fn jiffies(&self) -> u32 {
        (self.now_ns / 1_000_000) as u32
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
}
