use ccsim_cc::{CcKind, CcParams};
use ccsim_engine::SimTime;

pub use crate::rcv_buf::{RcvBufSize, RcvWindowRules};

/// `net.ipv4.tcp_ecn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    /// 0: never request or accept ECN (unless the CC needs ECN).
    Off,
    /// 1: request ECN on outgoing connections and accept it on incoming ones.
    On,
    /// 2 (Linux default): accept ECN when the peer requests it, do not request it.
    Passive,
}

/// Per-endpoint settings: the sysctls and socket options that shape Linux TCP behaviour.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    pub cc: CcKind,
    pub cc_params: CcParams,
    /// MSS advertised in the SYN (`tp->advmss`): MTU 1500 - 40. Segments carry 12 bytes less
    /// payload when timestamps are on (1448), as Linux sends them.
    pub advmss: u32,
    /// Initial congestion window in packets (`TCP_INIT_CWND` = 10).
    pub init_cwnd: u32,
    /// Minimum RTO (`TCP_RTO_MIN`, 200 ms).
    pub rto_min: SimTime,
    /// Maximum RTO (`TCP_RTO_MAX`, 120 s).
    pub rto_max: SimTime,
    /// Initial RTO before any RTT sample (`TCP_TIMEOUT_INIT`, 1 s).
    pub rto_init: SimTime,
    /// Minimum delayed-ACK timeout and initial ato (`TCP_DELACK_MIN` = `TCP_ATO_MIN`, 40 ms).
    pub delack_min: SimTime,
    /// Maximum delayed-ACK timeout (`TCP_DELACK_MAX`, 200 ms).
    pub delack_max: SimTime,
    /// `net.ipv4.tcp_ecn`.
    pub ecn: EcnMode,
    /// Send ECT on the SYN when the CC needs ECN (Linux does; turn off to model older stacks).
    pub syn_ect: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub window_scaling: bool,
    /// The application's receive buffer: `SO_RCVBUFFORCE` with a size (locked, no autotuning),
    /// or Linux's default autotuning between `tcp_rmem[1]` and `tcp_rmem[2]`.
    pub rcvbuf: RcvBufSize,
    /// `net.ipv4.tcp_rmem`: min, default (the initial buffer), max (the autotuning cap, and
    /// what the window scale is chosen for). Linux 6.18: 4096 131072 33554432.
    pub rmem: [u32; 3],
    /// `net.core.rmem_max` (212992): caps `SO_RCVBUF`, and counts in the window-scale choice.
    pub rmem_max: u32,
    /// `net.ipv4.tcp_moderate_rcvbuf` (1): receive-buffer autotuning.
    pub moderate_rcvbuf: bool,
    /// The buffer a NIC driver charges per received frame (truesize beyond the sk_buff):
    /// 2048, the half-page buffers of common 1500-MTU drivers (ixgbe, i40e, mlx5). It sets the
    /// payload share of the receive buffer (`scaling_ratio`), hence how much window a buffer
    /// holds: 1448 of 2304 bytes, a ratio of 160/256.
    pub rx_frame_truesize: u32,
    /// The receive-window rules of the kernel modelled (Linux 6.10+ by default).
    pub rcv_window_rules: RcvWindowRules,
    /// `net.ipv4.tcp_reordering`.
    pub reordering: u32,
    /// `net.ipv4.tcp_slow_start_after_idle`.
    pub slow_start_after_idle: bool,
    /// Internal TCP pacing at the stack's pacing rate (`sk_pacing_status` = SK_PACING_NEEDED).
    pub pacing: bool,
    /// The host's root qdisc is sch_fq with pacing on: at the socket's first packet its
    /// `sk_pacing_status` becomes SK_PACING_FQ; TCP then stamps every skb with its earliest
    /// departure time ([`Segment::tstamp_ns`](crate::Segment)), sends TSO-sized skbs, and leaves
    /// the waiting to the qdisc instead of pacing internally.
    pub fq: bool,
    /// `net.ipv4.tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio`, in percent.
    pub pacing_ss_ratio: u32,
    pub pacing_ca_ratio: u32,
    /// `net.ipv4.tcp_min_tso_segs`: the fewest segments per TSO skb of a paced sender.
    pub min_tso_segs: u32,
    /// `TCP_NODELAY`: no Nagle.
    pub nodelay: bool,
    /// `net.ipv4.tcp_notsent_lowat` in bytes (0: unlimited, the kernel's UINT_MAX): how much
    /// written data may wait unsent before a write stops taking more.
    pub notsent_lowat: u32,
    /// Tail loss probes (`net.ipv4.tcp_early_retrans` = 3, Linux's default).
    pub tlp: bool,
    /// RACK loss detection (`net.ipv4.tcp_recovery` = 1, Linux's default since RACK arrived in
    /// 4.4). Off (0), a SACK sender marks losses by the RFC 6675 duplicate-ACK threshold alone
    /// (`tcp_update_scoreboard`), much as kernels before 4.4 did (without their FACK), and a
    /// lost retransmission is only found by the retransmission timer.
    pub rack: bool,
    /// The application reads received data as soon as it arrives (a receiver blocked in
    /// `read()`); otherwise data waits for [`Endpoint::read`](crate::Endpoint::read).
    pub auto_read: bool,
    /// The reply of the BPF sock_ops program to `BPF_SOCK_OPS_BASE_RTT` for this connection, in
    /// µs (`None`: no program answers). The scenario layer sets it per connection (e.g. with
    /// `ccsim_cc::base_rtt_for`); the endpoint hands it to the CC as `Sock::base_rtt_us`, which
    /// TCP-NV reads at init.
    pub base_rtt_us: Option<u32>,
    /// `CONFIG_HZ`: the kernel's timer tick. The retransmission, loss-probe and RACK reordering
    /// timers count in jiffies (`usecs_to_jiffies` rounds up, after `TCP_TIMEOUT_MIN_US` is added), so
    /// a 250 Hz kernel's timers are coarser than a 1000 Hz one's. 100, 250, 300 or 1000.
    pub hz: u32,
    /// Data carrying CWR is ACKed at once (`tcp_ecn_accept_cwr`, 9aee40006190 "tcp: ack
    /// immediately when a cwr packet arrives", Linux 5.3 and later); `false` models earlier
    /// kernels, where it waited like any other data.
    pub cwr_ack_now: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Cubic,
            cc_params: CcParams::default(),
            advmss: 1460,
            init_cwnd: 10,
            rto_min: SimTime::from_ms(200),
            rto_max: SimTime::from_secs(120),
            rto_init: SimTime::from_secs(1),
            delack_min: SimTime::from_ms(40),
            delack_max: SimTime::from_ms(200),
            ecn: EcnMode::Passive,
            syn_ect: true,
            sack: true,
            timestamps: true,
            window_scaling: true,
            rcvbuf: RcvBufSize::Locked(6 * 1024 * 1024),
            rmem: [4096, 131072, 32 << 20],
            rmem_max: 212_992,
            moderate_rcvbuf: true,
            rx_frame_truesize: 2048,
            rcv_window_rules: RcvWindowRules::Current,
            reordering: 3,
            slow_start_after_idle: true,
            pacing: false,
            fq: false,
            pacing_ss_ratio: 200,
            pacing_ca_ratio: 120,
            min_tso_segs: 2,
            nodelay: false,
            notsent_lowat: 0,
            tlp: true,
            rack: true,
            auto_read: true,
            base_rtt_us: None,
            hz: 1000,
            cwr_ack_now: true,
        }
    }
}

impl TcpConfig {
    /// One jiffy, in ns.
    pub fn jiffy_ns(&self) -> u64 {
        1_000_000_000 / self.hz.max(1) as u64
    }

    /// `usecs_to_jiffies`: `us` rounded up to whole jiffies. (On the per-ACK path: the common
    /// tick rates divide by constants.)
    #[inline]
    pub fn usecs_to_jiffies(&self, us: u64) -> u64 {
        match self.hz {
            1000 => us.div_ceil(1000),
            250 => us.div_ceil(4000),
            100 => us.div_ceil(10_000),
            _ => (us * 1000).div_ceil(self.jiffy_ns()),
        }
    }

    /// `n` jiffies as simulated time.
    #[inline]
    pub fn jiffies(&self, n: u64) -> SimTime {
        match self.hz {
            1000 => SimTime(n * 1_000_000),
            250 => SimTime(n * 4_000_000),
            _ => SimTime(n * self.jiffy_ns()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usecs_to_jiffies_rounds_up_to_whole_ticks() {
        let c250 = TcpConfig { hz: 250, ..TcpConfig::default() };
        assert_eq!(c250.usecs_to_jiffies(25_000), 7); // 6.25 ticks of 4 ms
        assert_eq!(c250.usecs_to_jiffies(24_000), 6);
        assert_eq!(c250.usecs_to_jiffies(1), 1);
        assert_eq!(c250.jiffies(9), SimTime::from_ms(36));
        assert_eq!(c250.jiffies(50), SimTime::from_ms(200)); // TCP_RTO_MIN = HZ / 5
        let c300 = TcpConfig { hz: 300, ..TcpConfig::default() };
        assert_eq!(c300.usecs_to_jiffies(3_334), 2); // 1.0002 ticks of 3.333 ms
        assert_eq!(c300.jiffies(3), SimTime(9_999_999));
        let c1000 = TcpConfig::default();
        assert_eq!(c1000.usecs_to_jiffies(25_001), 26);
        assert_eq!(c1000.jiffies(200), SimTime::from_ms(200));
    }
}
