//! Congestion control for ccsim, shaped like Linux's `struct tcp_congestion_ops`.
//!
//! Besides the Linux modules (Reno, CUBIC, DCTCP, BBR) there is FreeBSD's DCTCP (`cc_dctcp.c`),
//! mapped onto the same hooks; the few places where FreeBSD's stack acts differently from
//! Linux's are opt-in flags in [`Sock`] and [`CongestionOps::handles_ece`].
//!
//! A module sees only [`Sock`], the narrow part of the socket that Linux CC modules read and
//! write (cwnd, ssthresh, sequence numbers, delivery counters, RTT, ECN flags), never the whole
//! endpoint. Each algorithm lives in its own file and implements [`CongestionOps`]; the endpoint
//! dispatches through the [`Cc`] enum. Arithmetic is Linux's: cwnd in packets with
//! `snd_cwnd_cnt`, fractions in fixed point, no floating point in CC state. BBR takes over
//! through `cong_control` (fed the endpoint's tcp_rate.c [`RateSample`]), sets `pacing_rate`
//! and asks the stack to pace ([`Sock::pacing_needed`], Linux's `SK_PACING_NEEDED`).

mod basertt;
mod bbr;
mod cubic;
mod dctcp;
mod freebsd_dctcp;
mod minmax;
mod nv;
mod reno;
mod seq;
mod sock;

pub use basertt::{base_rtt_for, BaseRttProvider, BaseRttRule, TCP_BASERTT_KERN_US};
pub use bbr::{Bbr, BbrMode, BbrParams};
pub use cubic::{Cubic, CubicParams};
pub use dctcp::{Dctcp, DctcpParams};
pub use freebsd_dctcp::{FreebsdDctcp, FreebsdDctcpParams};
pub use minmax::MinMax;
pub use nv::{Nv, NvParams};
pub use reno::{tcp_cong_avoid_ai, tcp_reno_cong_avoid, tcp_reno_ssthresh, tcp_reno_undo_cwnd, tcp_slow_start, Reno};
pub use seq::{after, before};
pub use sock::{AckSample, CaState, CcRequests, RateSample, Sock, DEFAULT_RNG_SEED, TCP_INFINITE_SSTHRESH};

/// Events the stack raises towards the CC (`enum tcp_ca_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packets are in flight (`CA_EVENT_TX_START`).
    TxStart,
    /// Congestion window restart after idle (`CA_EVENT_CWND_RESTART`).
    CwndRestart,
    /// End of a CWR reduction (`CA_EVENT_COMPLETE_CWR`).
    CompleteCwr,
    /// Retransmission timeout (`CA_EVENT_LOSS`).
    Loss,
    /// A data segment arrived without CE (`CA_EVENT_ECN_NO_CE`).
    EcnNoCe,
    /// A data segment arrived with CE (`CA_EVENT_ECN_IS_CE`).
    EcnIsCe,
}

/// Flags passed to `in_ack_event` (`CA_ACK_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEventFlags {
    /// The ACK was processed on the slow path (`CA_ACK_SLOWPATH`).
    pub slowpath: bool,
    /// The ACK updated the send window (`CA_ACK_WIN_UPDATE`).
    pub win_update: bool,
    /// The ACK carried ECE (`CA_ACK_ECE`).
    pub ece: bool,
}

/// Per-module information exported through `get_info` (`union tcp_cc_info`), in `ss` units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcInfo {
    None,
    /// `struct tcp_bbr_info`: bandwidth estimate in bytes per second as two 32-bit halves
    /// (`bbr_bw_lo`, `bbr_bw_hi`), `bbr_min_rtt` (µs), `bbr_pacing_gain` and `bbr_cwnd_gain`
    /// (in 1/256).
    Bbr {
        bw_lo: u32,
        bw_hi: u32,
        min_rtt: u32,
        pacing_gain: u32,
        cwnd_gain: u32,
    },
    /// `struct tcp_dctcp_info`.
    Dctcp {
        enabled: bool,
        ce_state: u16,
        alpha: u32,
        ab_ecn: u32,
        ab_tot: u32,
    },
    /// `struct tcpvegas_info` (`INET_DIAG_VEGASINFO`), which TCP-NV reports: `tcpv_enabled`,
    /// `tcpv_rttcnt` (RTTs since the last decision), `tcpv_rtt` (averaged RTT, µs) and
    /// `tcpv_minrtt` (µs).
    Vegas {
        enabled: bool,
        rttcnt: u32,
        rtt: u32,
        minrtt: u32,
    },
}

/// The callbacks of `struct tcp_congestion_ops`. Hooks Linux requires have no default
/// (`ssthresh`, `cong_avoid`, `undo_cwnd` — the last mandatory since e97991832a); optional hooks
/// default to doing nothing.
pub trait CongestionOps {
    /// Registered name (`.name`), as `ss` prints it.
    fn name(&self) -> &'static str;
    /// `TCP_CONG_NEEDS_ECN`: send ECT on SYN/SYN-ACK and negotiate ECN whatever `tcp_ecn` says.
    fn needs_ecn(&self) -> bool {
        false
    }
    /// `.init`: called when the connection is established (`tcp_init_congestion_control`).
    fn init(&mut self, _sk: &mut Sock) {}
    /// `.ssthresh`: slow-start threshold after a loss or ECN reduction.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32;
    /// `.cong_avoid`: grow cwnd on an ACK that advanced snd_una (`acked` packets).
    fn cong_avoid(&mut self, sk: &mut Sock, ack: u32, acked: u32);
    /// `.cong_control`: when `has_cong_control`, replaces cong_avoid and PRR entirely.
    fn has_cong_control(&self) -> bool {
        false
    }
    fn cong_control(&mut self, _sk: &mut Sock, _rs: &RateSample) {}
    /// The module answers ECN-Echo itself, in `in_ack_event` (`flags.ece`): it sets `snd_cwnd`
    /// and `snd_ssthresh` at once and asks for CWR through [`CcRequests::queue_cwr`], so the stack
    /// does not enter `TCP_CA_CWR` (no `tcp_enter_cwr`, no PRR) on ECE. No Linux module does;
    /// FreeBSD DCTCP does (`dctcp_cong_signal(CC_ECN)`: cwnd = ssthresh, no PRR).
    fn handles_ece(&self) -> bool {
        false
    }
    /// `.set_state`: called before `ca_state` changes to `new` (`sk.ca_state` is still the old one).
    fn set_state(&mut self, _sk: &mut Sock, _new: CaState) {}
    /// `.cwnd_event`.
    fn cwnd_event(&mut self, _sk: &mut Sock, _ev: CaEvent) {}
    /// `.in_ack_event`: once per incoming ACK.
    fn in_ack_event(&mut self, _sk: &mut Sock, _flags: AckEventFlags) {}
    /// `.pkts_acked`: packets newly acked with an RTT sample.
    fn pkts_acked(&mut self, _sk: &mut Sock, _sample: &AckSample) {}
    /// `.undo_cwnd`: the cwnd to restore when a reduction turns out spurious.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32;
    /// `.get_info`.
    fn get_info(&self, _sk: &Sock) -> CcInfo {
        CcInfo::None
    }
    /// `.min_tso_segs`: the fewest segments per TSO skb (`None`: `net.ipv4.tcp_min_tso_segs`).
    fn min_tso_segs(&self, _sk: &Sock) -> Option<u32> {
        None
    }
}

/// Congestion-control algorithms known to ccsim, by the name `TCP_CONGESTION` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcKind {
    Reno,
    Cubic,
    Dctcp,
    /// FreeBSD's DCTCP (`sys/netinet/cc/cc_dctcp.c`).
    FreebsdDctcp,
    /// TCP-NV (`net/ipv4/tcp_nv.c`).
    Nv,
    /// BBR v1 (`net/ipv4/tcp_bbr.c`).
    Bbr,
}

impl CcKind {
    pub const ALL: [CcKind; 6] =
        [CcKind::Reno, CcKind::Cubic, CcKind::Dctcp, CcKind::FreebsdDctcp, CcKind::Nv, CcKind::Bbr];
    pub fn name(self) -> &'static str {
        match self {
            CcKind::Reno => "reno",
            CcKind::Cubic => "cubic",
            CcKind::Bbr => "bbr",
            CcKind::Dctcp => "dctcp",
            CcKind::FreebsdDctcp => "freebsd-dctcp",
            CcKind::Nv => "nv",
        }
    }
    pub fn from_name(s: &str) -> Option<CcKind> {
        CcKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Parameters for every algorithm (module parameters in Linux), validated by the scenario layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcParams {
    pub cubic: CubicParams,
    pub dctcp: DctcpParams,
    /// `net.inet.tcp.cc.dctcp.*` for FreeBSD DCTCP.
    pub freebsd_dctcp: FreebsdDctcpParams,
    /// BBR's constants (tcp_bbr.c has no module parameters; the defaults are Linux's).
    pub bbr: BbrParams,
    /// TCP-NV's tunables.
    pub nv: NvParams,
}

/// Enum dispatch over the algorithms (no trait objects on the per-ACK path).
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    FreebsdDctcp(FreebsdDctcp),
    Bbr(Bbr),
    Nv(Nv),
}

impl Cc {
    pub fn new(kind: CcKind, params: &CcParams) -> Cc {
        match kind {
            CcKind::Reno => Cc::Reno(Reno),
            CcKind::Cubic => Cc::Cubic(Cubic::new(params.cubic.clone())),
            CcKind::Dctcp => Cc::Dctcp(Dctcp::new(params.dctcp.clone())),
            CcKind::FreebsdDctcp => Cc::FreebsdDctcp(FreebsdDctcp::new(params.freebsd_dctcp.clone())),
            CcKind::Bbr => Cc::Bbr(Bbr::new(params.bbr.clone())),
            CcKind::Nv => Cc::Nv(Nv::new(params.nv.clone())),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $m:ident $(, $a:expr)*) => {
        match $self {
            Cc::Reno(c) => c.$m($($a),*),
            Cc::Cubic(c) => c.$m($($a),*),
            Cc::Dctcp(c) => c.$m($($a),*),
            Cc::FreebsdDctcp(c) => c.$m($($a),*),
            Cc::Bbr(c) => c.$m($($a),*),
            Cc::Nv(c) => c.$m($($a),*),
        }
    };
}

impl CongestionOps for Cc {
    fn name(&self) -> &'static str {
        dispatch!(self, name)
    }
    fn needs_ecn(&self) -> bool {
        dispatch!(self, needs_ecn)
    }
    fn init(&mut self, sk: &mut Sock) {
        dispatch!(self, init, sk)
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        dispatch!(self, ssthresh, sk)
    }
    fn cong_avoid(&mut self, sk: &mut Sock, ack: u32, acked: u32) {
        dispatch!(self, cong_avoid, sk, ack, acked)
    }
    fn has_cong_control(&self) -> bool {
        dispatch!(self, has_cong_control)
    }
    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) {
        dispatch!(self, cong_control, sk, rs)
    }
    fn handles_ece(&self) -> bool {
        dispatch!(self, handles_ece)
    }
    fn set_state(&mut self, sk: &mut Sock, new: CaState) {
        dispatch!(self, set_state, sk, new)
    }
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        dispatch!(self, cwnd_event, sk, ev)
    }
    fn in_ack_event(&mut self, sk: &mut Sock, flags: AckEventFlags) {
        dispatch!(self, in_ack_event, sk, flags)
    }
    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        dispatch!(self, pkts_acked, sk, sample)
    }
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        dispatch!(self, undo_cwnd, sk)
    }
    fn get_info(&self, sk: &Sock) -> CcInfo {
        dispatch!(self, get_info, sk)
    }
    fn min_tso_segs(&self, sk: &Sock) -> Option<u32> {
        dispatch!(self, min_tso_segs, sk)
    }
}
