//! The scenario file format. Every field has a documented default; unknown fields are rejected.
//! Reading a file fills in every default, so writing the struct back out gives the resolved
//! configuration (`config.resolved.toml`).
//!
//! Each default is stated once. A table whose every field has one implements `Default` and serde
//! fills missing fields from it (`#[serde(default)]` on the struct); `[tcp]`, its `dctcp`,
//! `freebsd_dctcp`, `bbr` and `nv` tables and fq's parameters take theirs from the simulator's
//! own defaults (`TcpConfig`, `ccsim_cc`'s parameter structs, `FqSpec`). A table with required
//! fields names one `d_*` function per defaulted field.

use crate::units::Quantity;
use ccsim_cc::{BbrParams, CcKind, DctcpParams, FreebsdDctcpParams, NvParams};
use ccsim_tcp::TcpConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod choice;
pub use choice::{
    by_name, quoted_names, AckTiming, AqmKind, Choice, Destinations, FlowKind, MarkAt, NodeKind, NonEct, PingEcn,
    QueueUnit, SchedulerKind, TcpEcn, TopologyKind, TrafficPattern, WorkloadKind,
};

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text shown in reports.
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub run: Run,
    /// TCP settings applied to every flow unless the flow overrides them.
    #[serde(default)]
    pub tcp: Tcp,
    /// Named port queues, referenced by the topology. `nic` (drop-tail, 1000 packets) and
    /// `switch` (drop-tail, 1000 packets) exist unless redefined.
    #[serde(default)]
    pub queues: BTreeMap<String, Queue>,
    /// Named shared switch buffers with dynamic thresholds, referenced by
    /// `topology.switch_buffer` or a custom switch's `buffer`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub buffers: BTreeMap<String, Buffer>,
    pub topology: TopologySpec,
    #[serde(default)]
    pub flows: Vec<Flow>,
    #[serde(default)]
    pub pings: Vec<Ping>,
    /// Generated traffic (added after `flows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<Traffic>,
    /// `[[workloads]]`: traffic generated during the run (flow arrivals from a size
    /// distribution, incast rounds), mixable with each other and with `flows`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<Workload>,
    /// `[[base_rtt]]`: the BPF sock_ops program's replies to `BPF_SOCK_OPS_BASE_RTT`, as ordered
    /// rules (the first that matches a connection decides; none: no reply).
    #[serde(default)]
    pub base_rtt: Vec<BaseRtt>,
    #[serde(default)]
    pub record: Record,
    /// The directory of the scenario file (CDF files are named relative to it); not in the file.
    #[serde(skip)]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Run {
    /// Seed of every random stream in the run (default 1).
    pub seed: u64,
    /// Simulated time (default "10s").
    pub duration: Quantity,
    /// Bytes added to every packet on the wire for link-layer framing (default 0: the 1500-byte
    /// IP packet is what a link serialises, as HTB counts it).
    pub l2_overhead: u32,
}

impl Default for Run {
    fn default() -> Self {
        Run { seed: 1, duration: "10s".into(), l2_overhead: 0 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tcp {
    /// Congestion control: "reno", "cubic" (default), "dctcp", "freebsd-dctcp", "nv" or "bbr".
    #[serde(with = "by_name")]
    pub cc: CcKind,
    /// `net.ipv4.tcp_ecn`: "off", "on" or "passive" (default, Linux's 2).
    pub ecn: TcpEcn,
    /// Send ECT on SYN/SYN-ACK when the CC needs ECN, as Linux does for DCTCP (default true).
    pub syn_ect: bool,
    /// MSS advertised in the SYN (default 1460; segments carry 1448 bytes with timestamps).
    pub mss: u32,
    /// Initial congestion window in packets (default 10).
    pub init_cwnd: u32,
    /// Minimum RTO (default "200ms").
    pub rto_min: Quantity,
    /// Initial RTO (default "1s").
    pub rto_init: Quantity,
    /// Minimum / maximum delayed-ACK timeout (defaults "40ms" / "200ms").
    pub delack_min: Quantity,
    pub delack_max: Quantity,
    pub sack: bool,
    pub timestamps: bool,
    pub window_scaling: bool,
    /// The receivers' buffer: a size, set as `SO_RCVBUFFORCE` sets it (the buffer is twice
    /// that, locked: no autotuning; default "6MiB"), or "auto" (Linux's autotuning within
    /// `rmem`).
    pub rcvbuf: Quantity,
    /// `net.ipv4.tcp_rmem`: min, default and max receive buffer (default
    /// ["4KiB", "128KiB", "32MiB"], Linux 6.18's).
    pub rmem: [Quantity; 3],
    /// `tcp_slow_start_after_idle` (default true).
    pub slow_start_after_idle: bool,
    /// Internal pacing at 200 % / 120 % of cwnd/srtt (default false, as Linux without fq).
    pub pacing: bool,
    /// `TCP_NODELAY` (default false).
    pub nodelay: bool,
    /// Tail loss probes (`tcp_early_retrans` = 3; default true).
    pub tlp: bool,
    /// RACK loss detection (`tcp_recovery` = 1; default true). false: losses are marked by the
    /// duplicate-ACK threshold alone and a lost retransmission waits for the RTO, as in kernels
    /// before 4.4.
    pub rack: bool,
    /// The kernel's `CONFIG_HZ` (100, 250, 300 or 1000; default 1000): the granularity of the
    /// retransmission, loss-probe and RACK reordering timers.
    pub hz: u32,
    /// Data carrying CWR: ACKed "now" (Linux 5.3+) or "delayed" like other data (earlier).
    pub cwr_ack: AckTiming,
    pub dctcp: DctcpSpec,
    pub cubic: CubicSpec,
    pub freebsd_dctcp: FreebsdDctcpSpec,
    pub bbr: BbrSpec,
    pub nv: NvSpec,
}

/// Linux's defaults, as `TcpConfig::default()` has them.
impl Default for Tcp {
    fn default() -> Self {
        let c = TcpConfig::default();
        Tcp {
            cc: c.cc,
            ecn: TcpEcn::from(c.ecn),
            syn_ect: c.syn_ect,
            mss: c.advmss,
            init_cwnd: c.init_cwnd,
            rto_min: Quantity::from_duration(c.rto_min),
            rto_init: Quantity::from_duration(c.rto_init),
            delack_min: Quantity::from_duration(c.delack_min),
            delack_max: Quantity::from_duration(c.delack_max),
            sack: c.sack,
            timestamps: c.timestamps,
            window_scaling: c.window_scaling,
            rcvbuf: match c.rcvbuf {
                ccsim_tcp::RcvBufSize::Auto => "auto".into(),
                ccsim_tcp::RcvBufSize::Locked(n) => Quantity::from_bytes(n.into()),
            },
            rmem: c.rmem.map(|b| Quantity::from_bytes(b.into())),
            slow_start_after_idle: c.slow_start_after_idle,
            pacing: c.pacing,
            nodelay: c.nodelay,
            tlp: c.tlp,
            rack: c.rack,
            hz: c.hz,
            cwr_ack: AckTiming::now_if(c.cwr_ack_now),
            dctcp: DctcpSpec::default(),
            cubic: CubicSpec::default(),
            freebsd_dctcp: FreebsdDctcpSpec::default(),
            bbr: BbrSpec::default(),
            nv: NvSpec::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpSpec {
    /// `dctcp_shift_g`, 0..=10 (default 4: g = 1/16).
    pub shift_g: u32,
    /// `dctcp_alpha_on_init`, 0..=1024 (default 1024).
    pub alpha_on_init: u32,
    /// When a receiver's CE state flips: "now" (immediate ACK, Linux 4.19+) or "delayed"
    /// (kernels before a0496ef2c2).
    pub ce_ack: AckTiming,
}

impl Default for DctcpSpec {
    fn default() -> Self {
        let p = DctcpParams::default();
        DctcpSpec { shift_g: p.shift_g, alpha_on_init: p.alpha_on_init, ce_ack: AckTiming::now_if(p.ce_ack_now) }
    }
}

/// FreeBSD DCTCP (`net.inet.tcp.cc.dctcp.*`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FreebsdDctcpSpec {
    /// Initial alpha in 1/1024, 0..=1024 (default 1024).
    pub alpha: u32,
    /// EWMA gain 2^-shift_g, 0..=10 (default 4).
    pub shift_g: u32,
    /// Halve cwnd and set alpha to 1024 on the first ECN event (default false).
    pub slowstart: bool,
}

impl Default for FreebsdDctcpSpec {
    fn default() -> Self {
        let p = FreebsdDctcpParams::default();
        FreebsdDctcpSpec { alpha: p.alpha, shift_g: p.shift_g, slowstart: p.slowstart }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicSpec {
    /// beta in 1/1024 (default 717).
    pub beta: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    /// bic_scale (default 41).
    pub bic_scale: u32,
    pub hystart: bool,
    /// 1 = ACK train, 2 = delay, 3 = both (default).
    pub hystart_detect: u32,
    pub hystart_low_window: u32,
}

/// Linux's module parameters (`tcp_cubic.c`).
impl Default for CubicSpec {
    fn default() -> Self {
        CubicSpec {
            beta: 717,
            fast_convergence: true,
            tcp_friendliness: true,
            bic_scale: 41,
            hystart: true,
            hystart_detect: 3,
            hystart_low_window: 16,
        }
    }
}

/// BBR v1 (`tcp_bbr.c`). Linux has these as `static const`s, not module parameters; every
/// default is Linux's value, so an absent table is exactly Linux's BBR. Gains are in 1/256.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BbrSpec {
    /// `bbr_high_gain`: STARTUP pacing and cwnd gain, 1..=1023 (default 739 = 2/ln 2 ≈ 2.885).
    pub high_gain: u32,
    /// `bbr_drain_gain`: DRAIN pacing gain, 1..=1023 (default 88 ≈ 1/2.885).
    pub drain_gain: u32,
    /// `bbr_cwnd_gain`: PROBE_BW cwnd gain, 1..=1023 (default 512 = 2.0).
    pub cwnd_gain: u32,
    /// `bbr_min_rtt_win_sec`: min_rtt filter window in seconds, 1..=2147483 (default 10).
    pub min_rtt_win_sec: u32,
    /// `bbr_probe_rtt_mode_ms`: time at `cwnd_min_target` in PROBE_RTT, ms (default 200; 0
    /// disables PROBE_RTT).
    pub probe_rtt_mode_ms: u32,
    /// `bbr_cwnd_min_target`: cwnd floor and PROBE_RTT cwnd, packets, ≥ 1 (default 4).
    pub cwnd_min_target: u32,
    /// `bbr_extra_acked_gain`: weight of the ACK-aggregation allowance, 0..=1023 (default 256;
    /// 0 turns it off).
    pub extra_acked_gain: u32,
    /// `bbr_pacing_margin_percent`: pace this many percent below the bandwidth estimate, 0..=99
    /// (default 1).
    pub pacing_margin_percent: u32,
}

impl Default for BbrSpec {
    fn default() -> Self {
        BbrSpec::from(&BbrParams::default())
    }
}

impl From<&BbrParams> for BbrSpec {
    fn from(p: &BbrParams) -> Self {
        BbrSpec {
            high_gain: p.high_gain,
            drain_gain: p.drain_gain,
            cwnd_gain: p.cwnd_gain,
            min_rtt_win_sec: p.min_rtt_win_sec,
            probe_rtt_mode_ms: p.probe_rtt_mode_ms,
            cwnd_min_target: p.cwnd_min_target,
            extra_acked_gain: p.extra_acked_gain,
            pacing_margin_percent: p.pacing_margin_percent,
        }
    }
}

impl From<&BbrSpec> for BbrParams {
    fn from(s: &BbrSpec) -> Self {
        BbrParams {
            high_gain: s.high_gain,
            drain_gain: s.drain_gain,
            cwnd_gain: s.cwnd_gain,
            min_rtt_win_sec: s.min_rtt_win_sec,
            probe_rtt_mode_ms: s.probe_rtt_mode_ms,
            cwnd_min_target: s.cwnd_min_target,
            extra_acked_gain: s.extra_acked_gain,
            pacing_margin_percent: s.pacing_margin_percent,
        }
    }
}

/// TCP-NV (`tcp_nv.c`): every tunable under the kernel's own name. Linux exposes `nv_pad`,
/// `nv_reset_period` and `nv_min_cwnd` as module parameters; the others are `static int`s of the
/// file. Every default is Linux's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NvSpec {
    /// Packets of queueing allowed per flow, 0..=65535 (default 10).
    pub nv_pad: u32,
    /// No growth once cwnd is this close to the target window, ≤ `nv_pad` (default 2).
    pub nv_pad_buffer: u32,
    /// Seconds between min-RTT restarts (drawn in [3/4, 5/4) of it), 0..=3360 (default 5).
    pub nv_reset_period: u32,
    /// NV's decreases never leave cwnd below this, packets, 1..=65535 (default 2).
    pub nv_min_cwnd: u32,
    /// Cut this many 128ths of the excess over the target window, 0..=128 (default 38).
    pub nv_cong_dec_mult: u32,
    /// On congestion ssthresh = factor · target / 8, 0..=255 (default 8).
    pub nv_ssthresh_factor: u32,
    /// Weight of a new sample in the RTT average, in 256ths, 0..=256 (default 128; 0: no
    /// averaging).
    pub nv_rtt_factor: u32,
    /// On loss ssthresh = cwnd · factor / 1024, 0..=1024 (default 819 ≈ 80 %).
    pub nv_loss_dec_factor: u32,
    /// Uncongested decisions before a negative growth factor steps up (default 8; 0: never).
    pub nv_cwnd_growth_rate_neg: u32,
    /// Uncongested decisions before a non-negative growth factor steps up (default 0: never,
    /// Reno-like growth).
    pub nv_cwnd_growth_rate_pos: u32,
    /// RTT samples before a decrease (default 60).
    pub nv_dec_eval_min_calls: u32,
    /// RTT samples before growth is allowed again (default 20).
    pub nv_inc_eval_min_calls: u32,
    /// RTT samples before leaving slow start on congestion (default 30).
    pub nv_ssthresh_eval_min_calls: u32,
    /// With too few samples to decrease, stop growth after this many RTTs (default 10).
    pub nv_stop_rtt_cnt: u32,
    /// RTTs before a congestion decision (default 2).
    pub nv_rtt_min_cnt: u32,
}

impl Default for NvSpec {
    fn default() -> Self {
        NvSpec::from(&NvParams::default())
    }
}

impl From<&NvParams> for NvSpec {
    fn from(p: &NvParams) -> Self {
        NvSpec {
            nv_pad: p.nv_pad,
            nv_pad_buffer: p.nv_pad_buffer,
            nv_reset_period: p.nv_reset_period,
            nv_min_cwnd: p.nv_min_cwnd,
            nv_cong_dec_mult: p.nv_cong_dec_mult,
            nv_ssthresh_factor: p.nv_ssthresh_factor,
            nv_rtt_factor: p.nv_rtt_factor,
            nv_loss_dec_factor: p.nv_loss_dec_factor,
            nv_cwnd_growth_rate_neg: p.nv_cwnd_growth_rate_neg,
            nv_cwnd_growth_rate_pos: p.nv_cwnd_growth_rate_pos,
            nv_dec_eval_min_calls: p.nv_dec_eval_min_calls,
            nv_inc_eval_min_calls: p.nv_inc_eval_min_calls,
            nv_ssthresh_eval_min_calls: p.nv_ssthresh_eval_min_calls,
            nv_stop_rtt_cnt: p.nv_stop_rtt_cnt,
            nv_rtt_min_cnt: p.nv_rtt_min_cnt,
        }
    }
}

impl From<&NvSpec> for NvParams {
    fn from(s: &NvSpec) -> Self {
        NvParams {
            nv_pad: s.nv_pad,
            nv_pad_buffer: s.nv_pad_buffer,
            nv_reset_period: s.nv_reset_period,
            nv_min_cwnd: s.nv_min_cwnd,
            nv_cong_dec_mult: s.nv_cong_dec_mult,
            nv_ssthresh_factor: s.nv_ssthresh_factor,
            nv_rtt_factor: s.nv_rtt_factor,
            nv_loss_dec_factor: s.nv_loss_dec_factor,
            nv_cwnd_growth_rate_neg: s.nv_cwnd_growth_rate_neg,
            nv_cwnd_growth_rate_pos: s.nv_cwnd_growth_rate_pos,
            nv_dec_eval_min_calls: s.nv_dec_eval_min_calls,
            nv_inc_eval_min_calls: s.nv_inc_eval_min_calls,
            nv_ssthresh_eval_min_calls: s.nv_ssthresh_eval_min_calls,
            nv_stop_rtt_cnt: s.nv_stop_rtt_cnt,
            nv_rtt_min_cnt: s.nv_rtt_min_cnt,
        }
    }
}

/// One `[[base_rtt]]` rule: the scenario-level stand-in for a BPF sock_ops program answering
/// `BPF_SOCK_OPS_BASE_RTT` (the kernel's sample `samples/bpf/tcp_basertt_kern.c` answers 80 µs
/// for "nv" connections within one datacenter). A connection matches when its congestion
/// control is `cc`, its local host is in `src` and its peer in `dst` (each absent: any). For
/// every flow both ends are looked up: the client (local `src`, peer `dst` of the flow) and the
/// server (local the flow's `dst`, peer its `src`). The first matching rule sets that end's
/// base RTT; only TCP-NV reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaseRtt {
    /// The reply: a duration, a whole number of microseconds, 1us ..< 4.29s (e.g. "80us").
    pub base_rtt: Quantity,
    /// Only connections using this congestion control (as `tcp.cc`); absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "by_name::option")]
    pub cc: Option<CcKind>,
    /// Hosts whose connections the rule answers (the local end); absent: every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Vec<String>>,
    /// Peers the rule answers for (the remote end); absent: every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<Vec<String>>,
}

/// A port queue: one or more classes, picked by DSCP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    /// Scheduler between classes: "prio" (default, in order) or "rr" (round robin); or "fq",
    /// Linux's fq qdisc (sch_fq: a queue per socket, round robin, departure-time pacing; no
    /// classes), with parameters in `fq`.
    #[serde(default = "d_sched")]
    pub scheduler: SchedulerKind,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<Class>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq: Option<FqParams>,
}

/// A switch's shared packet buffer: every egress queue of the switch draws on it, each up to a
/// dynamic threshold, alpha times the free shared buffer (Choudhury–Hahne).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Buffer {
    /// A named switch whose size (and cell, where published) it takes: "triumph", "trident+",
    /// "trident2", "tomahawk", "nexus3548" (default: none; then `size` is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Total size (default: the preset's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Quantity>,
    /// Accounting cell in bytes (default: the preset's, else 1: exact bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
    /// Bytes reserved for every queue (default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<Quantity>,
    /// Dynamic-threshold alpha of every queue (default 1, SONiC's `dynamic_th` 0).
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// Per class name, an alpha of its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alphas: BTreeMap<String, f64>,
    /// Also mark ECT packets CE while the whole buffer holds more than this (default: none;
    /// marking looks at each queue alone, by its class's AQM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_above: Option<Quantity>,
}

fn d_alpha() -> f64 {
    1.0
}

/// The queue of every host NIC unless the topology names another.
pub const NIC_QUEUE: &str = "nic";
/// The queue of every switch port unless the topology names another.
pub const SWITCH_QUEUE: &str = "switch";

impl Queue {
    /// What [`NIC_QUEUE`] and [`SWITCH_QUEUE`] are unless `[queues]` redefines them: one
    /// default class (drop-tail, 1000 packets).
    pub fn builtin() -> Self {
        Queue { scheduler: d_sched(), classes: vec![Class::default()], fq: None }
    }
}

/// Parameters of the fq qdisc, as `tc qdisc add ... fq` takes them; defaults are fq's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqParams {
    /// `limit`: packets (TSO skbs) in the qdisc, 1..=1000000 (default 10000).
    pub limit: u32,
    /// `flow_limit`: packets per flow, 1..=1000000 (default 100).
    pub flow_limit: u32,
    /// `quantum`: bytes per flow per round, 1..=1048576 (default 3028 = 2 × (MTU + 14)).
    pub quantum: u32,
    /// `initial_quantum`: a new flow's first credit in bytes (default 15140).
    pub initial_quantum: u32,
    /// `refill_delay` (default "40ms").
    pub refill_delay: Quantity,
    /// `maxrate`: per-flow rate cap (default none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maxrate: Option<Quantity>,
    /// `low_rate_threshold` (default "550kbps").
    pub low_rate_threshold: Quantity,
    /// `timer_slack`: how late the watchdog may fire (default "10us").
    pub timer_slack: Quantity,
    /// `horizon` (default "10s") and `horizon_drop` (default true; false caps the time).
    pub horizon: Quantity,
    pub horizon_drop: bool,
    /// `ce_threshold`: mark CE on packets leaving later than this after their time (default
    /// none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Quantity>,
    /// `pacing` (default true); false is `nopacing`: sockets are not told that fq paces them.
    pub pacing: bool,
}

/// fq's own defaults, as `FqSpec::default()` has them.
impl Default for FqParams {
    fn default() -> Self {
        let f = ccsim_net::FqSpec::default();
        FqParams {
            limit: f.limit,
            flow_limit: f.flow_limit,
            quantum: f.quantum,
            initial_quantum: f.initial_quantum,
            refill_delay: Quantity::from_duration(f.refill_delay),
            maxrate: f.maxrate.map(|bytes_per_sec| Quantity::from_rate(bytes_per_sec * 8)),
            low_rate_threshold: Quantity::from_rate(f.low_rate_threshold * 8),
            timer_slack: Quantity::from_duration(f.timer_slack),
            horizon: Quantity::from_duration(f.horizon),
            horizon_drop: f.horizon_drop,
            ce_threshold: f.ce_threshold.map(Quantity::from_duration),
            pacing: f.pacing,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Class {
    /// Name in reports (default "default").
    pub name: String,
    /// DSCP values this class takes (0..=63); empty = the default class.
    pub dscp: Vec<u8>,
    /// Capacity (default 1000).
    pub limit: u64,
    /// Unit of `limit`, `k`, `min`, `max`: "packets" (default) or "bytes".
    pub unit: QueueUnit,
    /// "droptail" (default), "step" (ECN mark above K) or "red" (tc-red).
    pub aqm: AqmKind,
    /// Step marking threshold K.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u64>,
    /// Step marking: "enqueue" (default) or "dequeue".
    pub mark_at: MarkAt,
    /// Step marking, packets without ECT above K: "drop" (default) or "queue".
    pub non_ect: NonEct,
    /// RED thresholds, probability, EWMA weight 2^-wlog, ecn, harddrop, avpkt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    pub probability: f64,
    pub wlog: u8,
    pub ecn: bool,
    pub harddrop: bool,
    pub avpkt: u32,
}

impl Default for Class {
    fn default() -> Self {
        Class {
            name: "default".into(),
            dscp: Vec::new(),
            limit: 1000,
            unit: QueueUnit::Packets,
            aqm: AqmKind::Droptail,
            k: None,
            mark_at: MarkAt::Enqueue,
            non_ect: NonEct::Drop,
            min: None,
            max: None,
            probability: 0.1,
            wlog: 9,
            ecn: true,
            harddrop: false,
            avpkt: 1000,
        }
    }
}

/// The topology: "star" (hosts around one switch), "dumbbell" (left hosts, two switches, right
/// hosts), "fattree" (the k-ary fat tree) or "custom" (nodes and links).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    #[serde(rename = "type")]
    pub kind: TopologyKind,
    /// fattree: the arity k (even, 2..=64): k pods, k^3/4 hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// star: host names; the switch is named by `switch`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// dumbbell: hosts on each side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub right: Vec<String>,
    /// Switch name for star (default "s"); dumbbell switches are `s1` and `s2`.
    #[serde(default = "d_switch")]
    pub switch: String,
    /// Rate and one-way propagation delay of every edge link (star, dumbbell), of every link
    /// (fattree).
    #[serde(default = "d_rate")]
    pub rate: Quantity,
    #[serde(default = "d_delay")]
    pub delay: Quantity,
    /// Dumbbell bottleneck link (defaults: the edge rate and delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_rate: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_delay: Option<Quantity>,
    /// Per-packet loss probability on every link, 0..1 (default 0).
    #[serde(default)]
    pub loss: f64,
    /// Host timing noise: each packet a host's NIC puts on the wire reaches the far end up to
    /// this much later (uniform, order kept). Real hosts jitter by microseconds (interrupts,
    /// softirq scheduling, DMA); without it, drop-tail queues fed by identical senders can lock
    /// one flow out by phase alone (Floyd & Jacobson, "On traffic phase effects"). Default
    /// "auto": the time of 25 bytes on the host's link (2 µs at 100 Mb/s, the kernel's own
    /// departure noise there; 20 ns at 10 Gb/s); "0us" gives idealised hosts, as htsim and ns-3
    /// model them (and the fastest to simulate).
    #[serde(default = "d_host_jitter")]
    pub host_jitter: Quantity,
    /// Receive interrupt coalescing at every host NIC (`ethtool -C rx-usecs`): received packets
    /// go up the stack in a batch this long after the first of them. Default "0us": each at once.
    #[serde(default = "d_rx_coalesce")]
    pub rx_coalesce: Quantity,
    /// Generic receive offload in every host's receive path: within a batch, in-order segments
    /// of a connection reach TCP as one skb (one ACK where there were several). Default false.
    #[serde(default)]
    pub gro: bool,
    /// Queue names for switch egress ports and host NICs (defaults "switch", "nic").
    #[serde(default = "d_switch_q")]
    pub switch_queue: String,
    /// The shared buffer (a `[buffers.NAME]`) of every switch (default: none, every port has
    /// its own limit); a custom switch's `buffer` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_buffer: Option<String>,
    #[serde(default = "d_nic_q")]
    pub host_queue: String,
    /// custom: nodes and links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    /// "host" or "switch".
    pub kind: NodeKind,
    /// A switch's shared buffer (a `[buffers.NAME]`; default `topology.switch_buffer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub a: String,
    pub b: String,
    pub rate: Quantity,
    #[serde(default = "d_delay")]
    pub delay: Quantity,
    #[serde(default)]
    pub loss: f64,
    /// Queue at a's end (a→b) and at b's end (b→a); defaults: "nic" at a host, "switch" at a switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ba: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Name in reports (default "flowN").
    #[serde(default)]
    pub name: String,
    pub src: String,
    pub dst: String,
    /// "bulk" (default: send until `stop` or the end), "transfer" (send `size`, then close) or
    /// "rpc" (back-to-back requests of `size` bytes over one connection, each sent when the
    /// previous one is acknowledged, until `stop`; per-request latency in summary.json).
    #[serde(default = "d_kind")]
    pub kind: FlowKind,
    #[serde(default = "d_zero")]
    pub start: Quantity,
    /// When the client connects, no later than `start` (default: at `start`, the first write
    /// queued behind the SYN). An earlier time opens the connection ahead of the test, as
    /// flowgrind does unless told to connect late; the flow's times still count from `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Quantity>,
    /// Congestion control of this flow (default: `tcp.cc`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "by_name::option")]
    pub cc: Option<CcKind>,
    /// `tcp_ecn` of the sending side (default: `tcp.ecn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<TcpEcn>,
    /// ECT on the SYN when the CC needs ECN (default: `tcp.syn_ect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_ect: Option<bool>,
    /// Congestion control and `tcp_ecn` of the receiving (server) side (defaults: the flow's
    /// `cc` and `ecn`), e.g. a DCTCP sender facing a classic-ECN receiver.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "by_name::option")]
    pub server_cc: Option<CcKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ecn: Option<TcpEcn>,
    /// DSCP of the flow's packets (default 0).
    #[serde(default)]
    pub dscp: u8,
    /// Socket mark (default 0).
    #[serde(default)]
    pub mark: u32,
    /// Number of identical flows this entry stands for (default 1), named name-0, name-1, ...
    #[serde(default = "d_one")]
    pub count: u32,
}

/// A workload: flows arriving during the run, each a short-lived connection (connect, write,
/// close) from an ephemeral port of its sender.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Name in `fct.csv` and the summary (default "workload<i>").
    #[serde(default)]
    pub name: String,
    /// "poisson", "incast" or "query" (required).
    pub kind: WorkloadKind,
    /// Flow sizes: a built-in distribution ("websearch", "datamining", "hadoop", "alistorage"),
    /// a CDF file (path relative to the scenario file), or a fixed size ("64KB"). Required.
    pub sizes: String,
    /// Poisson: the offered load of each sender, as a fraction of its link rate (0 < load < 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Poisson: a link ("from->to") whose rate `load` is a fraction of instead, the senders
    /// together offering that much, in equal parts (default: each sender's own link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_of: Option<String>,
    /// The hosts that send (poisson) or take part (incast: senders and receivers); default every
    /// host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Poisson: where a sender's flows go, uniformly among the allowed hosts of `hosts`
    /// (default "any").
    #[serde(default = "d_destinations")]
    pub destinations: Destinations,
    /// Incast: senders per round; query: workers per query (required for both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_in: Option<u32>,
    /// Query: the request each worker is sent (default "1600B"; `sizes` are the responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Quantity>,
    /// Incast: a round every `interval` (query: each aggregator a query every `interval`), the
    /// first at `start` ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Quantity>,
    /// ... or Poisson rounds (queries per aggregator) at this many per second (one of the two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_per_s: Option<f64>,
    /// Congestion control of its flows (default: `tcp.cc`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "by_name::option")]
    pub cc: Option<CcKind>,
    /// DSCP of its packets (default 0).
    #[serde(default)]
    pub dscp: u8,
    /// When arrivals begin (default "0s") and end (default: the end of the run).
    #[serde(default = "d_zero")]
    pub start: Quantity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Quantity>,
}

fn d_destinations() -> Destinations {
    Destinations::Any
}

/// Generated traffic: `pattern = "permutation"` makes every host send one bulk flow to another
/// host, the destinations a random permutation without fixed points drawn from `run.seed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    /// "permutation" (required).
    pub pattern: TrafficPattern,
    /// Congestion control of the generated flows (default: `tcp.cc`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "by_name::option")]
    pub cc: Option<CcKind>,
    /// DSCP of the generated flows' packets (default 0).
    #[serde(default)]
    pub dscp: u8,
    /// When every generated flow connects (default "0s").
    #[serde(default = "d_zero")]
    pub start: Quantity,
    /// When every generated flow stops writing (default: the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Quantity>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ping {
    #[serde(default)]
    pub name: String,
    pub src: String,
    pub dst: String,
    #[serde(default = "d_zero")]
    pub start: Quantity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Quantity>,
    /// Interval between requests (default "200ms", as `ping -i 0.2`).
    #[serde(default = "d_ping_iv")]
    pub interval: Quantity,
    /// IP packet size (default 84: `ping -s 56`).
    #[serde(default = "d_ping_size")]
    pub size: u32,
    #[serde(default)]
    pub dscp: u8,
    /// IP ECN field: "not-ect" (default), "ect0", "ect1".
    #[serde(default = "d_not_ect")]
    pub ecn: PingEcn,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Record {
    /// Sampling interval for queues and flows (default "1ms").
    pub interval: Quantity,
    /// Ports to watch, as "from->to" (default: every switch port towards a host).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// Write time series CSVs and plots (default true).
    pub series: bool,
    /// Ignore samples before this time in summaries (default "0s").
    pub warmup: Quantity,
    /// Packet captures, one pcap file each: a host (what its NIC sends and receives) or a port
    /// "from->to" (what leaves by it). Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Bytes kept of each captured packet (default 128: every header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap_snaplen: Option<u32>,
    /// The most packets each capture keeps (default 1000000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap_max_packets: Option<u64>,
    /// Capture packets from this time (default "0s") ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap_start: Option<Quantity>,
    /// ... until this one (default: the end of the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap_stop: Option<Quantity>,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            interval: "1ms".into(),
            queues: Vec::new(),
            series: true,
            warmup: "0s".into(),
            pcap: Vec::new(),
            pcap_snaplen: None,
            pcap_max_packets: None,
            pcap_start: None,
            pcap_stop: None,
        }
    }
}

fn d_sched() -> SchedulerKind {
    SchedulerKind::Prio
}
fn d_switch() -> String {
    "s".into()
}
fn d_rate() -> Quantity {
    "10Gbps".into()
}
fn d_rx_coalesce() -> Quantity {
    "0us".into()
}
fn d_host_jitter() -> Quantity {
    "auto".into()
}
fn d_delay() -> Quantity {
    "10us".into()
}
fn d_switch_q() -> String {
    SWITCH_QUEUE.into()
}
fn d_nic_q() -> String {
    NIC_QUEUE.into()
}
fn d_kind() -> FlowKind {
    FlowKind::Bulk
}
fn d_zero() -> Quantity {
    "0s".into()
}
fn d_one() -> u32 {
    1
}
fn d_ping_iv() -> Quantity {
    "200ms".into()
}
fn d_ping_size() -> u32 {
    84
}
fn d_not_ect() -> PingEcn {
    PingEcn::NotEct
}
