//! `ccsim ss SCENARIO.toml --at TIME [-o] [-e] [--json] [--layout 6.1|2014] [FILTER...]`: run a
//! scenario up to TIME and list its TCP sockets as iproute2 6.1's `ss -tin` (`-tino`, `-tine`)
//! prints them.
//!
//! Every flow has two sockets: the client (the sender) and the server's accepted socket (in ccsim
//! the listener turns into it). Hosts get IPv4 addresses 10.0.0.N in topology host order
//! ([`ccsim_scenario::host_addresses`], the numbering `[[base_rtt]]` rules match); ports come from
//! the flow (`src_port`, `dst_port`).
//!
//! The default layout is iproute2 6.1's (Debian 12's ss), field for field and in order, under the
//! conditions ss prints each field with: the header `State Recv-Q Send-Q Local Address:Port Peer
//! Address:Port Process` and the columns padded as ss pads them when its output is not a terminal
//! (`render_calc_width`, `render`; ccsim always prints that form); Recv-Q `rcv_nxt - copied_seq`,
//! Send-Q `write_seq - snd_una` (`tcp_diag_get_info`; a listener's backlog, which ccsim does not
//! keep, is 0); the info line of `tcp_stats_print`: with `-o` the option flags `ts sack ecn
//! ecnseen` (ECN negotiated, ECT seen), the CC, `wscale rto backoff rtt ato mss pmtu rcvmss
//! advmss cwnd ssthresh bytes_* segs_* data_segs_*`, `dctcp:(ce_state:..,alpha:..,ab_ecn:..,
//! ab_tot:..)` or `dctcp:fallback_mode`, `bbr:(bw:..bps,mrtt:..,pacing_gain:..,cwnd_gain:..)`,
//! `send`, `lastsnd lastrcv lastack`, `pacing_rate`, `delivery_rate`, `delivered delivered_ce
//! app_limited`, `busy:Nms rwnd_limited:Nms(x%) sndbuf_limited:..`, `unacked retrans lost sacked
//! dsack_dups reordering reord_seen rcv_rtt rcv_space rcv_ssthresh notsent minrtt rcv_ooopack snd_wnd`. Times are ms with C's
//! `%g`, rates whole bits per second (`sprint_bw` under `-n`, which `-tin` implies). What the
//! kernel reports follows today's Linux: `tcp_get_info` stops after cwnd, reordering and the
//! pacing rate for a listener; the CC's diag attribute comes only below TIME-WAIT
//! (`inet_sk_diag_fill`); SYN-RECV and TIME-WAIT sockets are mini sockets with an empty info line.
//! `-o` adds `timer:(on|persist,EXPIRES,N)` (`tcp_timer_print`, `print_ms_timer`: the
//! retransmission slot with `icsk_retransmits`, the zero-window probe with `icsk_probes_out`).
//! `-e` (which implies `-o`, as in ss) adds `fwmark:0x..` for a marked flow and the shutdown state
//! `<->`.
//!
//! What ccsim does not model is left out, never made up: the keepalive and TIME-WAIT timers,
//! and of `-e`'s details `uid:` (0, which ss omits), `ino:`, `sk:` and `cgroup:`. `notsent` and Send-Q count no unsent bytes for an endless bulk
//! source, which has no send buffer in ccsim. tests/ss.rs compares the field order and formats
//! with real ss 6.1 lines (tests/data/ss-iproute2-6.1.txt, from scripts/capture-ss-lines).
//!
//! `--layout 2014` keeps the layout of the ss that printed the DCTCP merge commit's example
//! (iproute2 907e1aca, "ss: output dctcp diag information", the seed e3118e8359), unchanged:
//! cc, `wscale:`, `rto:`, `backoff:`, `rtt:srtt/rttvar`, `ato:`, `mss:`, `cwnd:`, `ssthresh:`, the
//! CC's info (`ce_state N alpha N ab_ecn N ab_tot N`, or `fallback_mode`), `send`, `pacing_rate`,
//! `unacked:`, `retrans:cur/total`, `lost:`, `sacked:`, `reordering:` (with `dsack_dups:` before
//! and `reord_seen:` after `reordering:`), then `rcvmss:`, `bytes_sent:` ... `delivered_ce:`,
//! `minrtt:`, rates with that ss's `sprint_bw` (`%.1fM`); no `-o` or `-e`.
//!
//! In both layouts BBR's `tcp_bbr_info` prints as `bbr:(bw:RATEbps,mrtt:MS,pacing_gain:G,
//! cwnd_gain:G)` (bw = `bbr_bw_hi << 32 | bbr_bw_lo` bytes/s × 8, min RTT in ms, gains / 256, each
//! gain only when non-zero). TCP-NV answers with a `tcpvegas_info` (`INET_DIAG_VEGASINFO`), of
//! which ss prints no field: when `tcpv_enabled` and `tcpv_rtt` is neither 0 nor 0x7fffffff,
//! `send` is computed from `tcpv_rtt` (NV's averaged RTT) instead of srtt. `--json` carries every
//! field of the layout's info line (times in ms, rates in bit/s, the chrono stats in µs as
//! `tcp_info` has them), `bbr` and `vegas`, and in the 6.1 layout `recv_q`, `timer` and
//! `shutdown`.
//!
//! Filters are a subset of ss's grammar (misc/ssfilter.y): `state`/`exclude` as in ss (default:
//! every state but listening, closed, time-wait and syn-recv), `sport`/`dport` with `=`, `!=`,
//! `<`, `<=`, `>`, `>=`, `src`/`dst` with an address, prefix, host name and/or port, `dev` (the
//! host stands in for the device), `mark`/`fwmark` (`(mark & mask) == value`, as the inet_diag
//! mark condition of a52e95abf7), and ccsim's own `cc NAME`; terms are joined with `and`, `or`,
//! `not` and parentheses, evaluated left to right as ss does.

use crate::args::{SsArgs, SsLayout};
use ccsim_cc::{CcInfo, CcKind};
use ccsim_engine::SimTime;
use ccsim_net::{NodeId, Sim};
use ccsim_scenario as scenario;
use ccsim_tcp::{DiagTimer, TcpInfo, TcpState, RCV_SHUTDOWN, SEND_SHUTDOWN};
use serde::Serialize;
use std::net::Ipv4Addr;

const FILTER_FORMS: &str = "allowed filters: state STATE, exclude STATE, sport OP :PORT, dport OP :PORT, \
src ADDR[/LEN][:PORT], dst ADDR[/LEN][:PORT], dev = HOST, mark = 0xN[/0xM] (or fwmark), cc NAME; \
joined with and, or, not, ( ); OP is =, !=, <, <=, >, >= (or eq, ne, lt, le, gt, ge; = may be left out); \
ADDR is 10.0.0.N, a host name or *";

const STATE_NAMES: &str = "established, syn-sent, syn-recv, fin-wait-1, fin-wait-2, time-wait, closed, close-wait, \
last-ack, listening, closing, all, connected, synchronized, bucket, big";

/// What ss was asked to show beside the `-tin` it always shows: `-o` (`show_options`) and `-e`
/// (`show_details`, which sets `show_options` too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Show {
    options: bool,
    details: bool,
}

pub fn cmd(a: SsArgs) -> Result<(), String> {
    let (at, json, args, layout) = (a.at, a.json, a.filter, a.layout);
    let show = Show { options: a.options || a.extended, details: a.extended };
    if layout == SsLayout::Seed2014 && show != Show::default() {
        return Err(
            "--layout 2014 prints the seed's `ss -tin` lines only; -o and -e need --layout 6.1 (the default)".into()
        );
    }
    let path = a.scenario.display().to_string();
    let s = scenario::load(path.as_ref()).map_err(|e| e.to_string())?;
    let built = scenario::build(&s).map_err(|e| e.in_file(&path).to_string())?;
    let until = parse_at(&at, built.cfg.duration)?;
    let hosts = Hosts::new(&built.topo);
    let filter = Filter::parse(&args, &hosts)?;
    let mut sim = Sim::new(built.cfg, built.topo, built.flows, built.pings).map_err(|e| e.to_string())?;
    sim.run_until(until, |_| {});
    let entries: Vec<Entry> = sockets(&sim, &hosts, until, layout).into_iter().filter(|e| filter.matches(e)).collect();
    if json {
        let text = serde_json::to_string_pretty(&entries).map_err(|e| e.to_string())?;
        println!("{text}");
    } else {
        match layout {
            SsLayout::Iproute2_6_1 => print!("{}", render_6_1(&entries, show)),
            SsLayout::Seed2014 => print!("{}", render_2014(&entries)),
        }
    }
    Ok(())
}

/// Parse `--at` exactly as a scenario's `run.duration` is parsed (by building a two-host scenario
/// with that duration: the scenario crate's own parser, errors and all), then check the range.
fn parse_at(at: &str, duration: SimTime) -> Result<SimTime, String> {
    let range = format!("allowed range: 0 < TIME <= {} (the scenario's run.duration)", secs(duration));
    let mut probe = scenario::parse("[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\"]\n", "--at")
        .expect("the probe scenario parses");
    probe.run.duration = scenario::Quantity::Str(at.to_string());
    let t = match scenario::build(&probe) {
        Ok(b) => b.cfg.duration,
        Err(e) if e.field == "run.duration" => return Err(format!("--at: {}; {range}", e.msg)),
        Err(e) => return Err(format!("--at {at}: {e}")),
    };
    if t > duration {
        return Err(format!("--at {at} is after the end of the run; {range}"));
    }
    Ok(t)
}

fn secs(t: SimTime) -> String {
    format!("{}s", fmt_g(t.secs_f64()))
}

// ---- sockets ----

/// Host names and their addresses (10.0.0.N in topology host order, as the scenario crate
/// numbers them).
struct Hosts {
    /// Per node: the address if it is a host.
    addr: Vec<Option<u32>>,
    names: Vec<(String, u32)>,
}

impl Hosts {
    fn new(topo: &ccsim_net::Topology) -> Hosts {
        let addr = scenario::host_addresses(topo);
        let names = topo.names.iter().zip(&addr).filter_map(|(name, a)| a.map(|a| (name.clone(), a))).collect();
        Hosts { addr, names }
    }
    fn of(&self, n: NodeId) -> u32 {
        self.addr[n.0 as usize].expect("flows run between hosts")
    }
    fn lookup(&self, name: &str) -> Option<u32> {
        self.names.iter().find(|(n, _)| n == name).map(|(_, a)| *a)
    }
    fn list(&self) -> String {
        self.names.iter().map(|(n, a)| format!("{n} ({})", Ipv4Addr::from(*a))).collect::<Vec<_>>().join(", ")
    }
}

/// One socket, as printed (text or JSON).
#[derive(Serialize, Debug)]
struct Entry {
    flow: String,
    /// "client" (the sender, `connect()`) or "server" (the accepted socket).
    side: &'static str,
    state: &'static str,
    recv_q: u64,
    send_q: u64,
    local: String,
    peer: String,
    /// The host; ccsim's stand-in for the device (`dev` filter).
    dev: String,
    /// Socket mark (`SO_MARK`).
    mark: u32,
    /// The pending timer, as `ss -o` shows it (6.1 layout).
    #[serde(skip_serializing_if = "Option::is_none")]
    timer: Option<TimerView>,
    /// `sk_shutdown`: 1 receive side shut, 2 send side, 3 both (6.1 layout; `None` for the
    /// SYN-RECV and TIME-WAIT mini sockets, which report none).
    #[serde(skip_serializing_if = "Option::is_none")]
    shutdown: Option<u8>,
    info: Info,
    #[serde(skip)]
    view: View,
}

/// `timer:(NAME,EXPIRES,RETRANS)`: `idiag_timer` by ss's name, `idiag_expires` in ms and
/// `idiag_retrans`.
#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
struct TimerView {
    name: &'static str,
    expires_ms: u64,
    retrans: u32,
}

impl TimerView {
    fn of(t: DiagTimer) -> TimerView {
        TimerView { name: t.kind.ss_name(), expires_ms: t.expires_ms, retrans: t.retrans }
    }

    /// `tcp_timer_print`.
    fn text(&self) -> String {
        format!(" timer:({},{},{})", self.name, print_ms_timer(self.expires_ms), self.retrans)
    }
}

/// The SYN-RECV and TIME-WAIT sockets of Linux are mini sockets (request and timewait socks):
/// inet_diag reports their timer but no `tcp_info`, CC or shutdown attribute.
fn is_mini_socket(s: TcpState) -> bool {
    matches!(s, TcpState::SynRecv | TcpState::TimeWait)
}

/// What filters look at.
#[derive(Debug, Clone)]
struct View {
    state: TcpState,
    local: (u32, u16),
    peer: (u32, u16),
    cc: &'static str,
}

fn sockets(sim: &Sim, hosts: &Hosts, at: SimTime, layout: SsLayout) -> Vec<Entry> {
    let mut v = Vec::new();
    for (i, spec) in sim.flow_specs().into_iter().enumerate() {
        let ccsim_net::Sockets { client, server } = sim.tcp_info_at(i, at);
        let (src, dst) = ((hosts.of(spec.src), spec.src_port), (hosts.of(spec.dst), spec.dst_port));
        let names = [sim.topology().name(spec.src).to_string(), sim.topology().name(spec.dst).to_string()];
        for (side, info, local, peer, dev) in
            [("client", client, src, dst, &names[0]), ("server", server, dst, src, &names[1])]
        {
            // A listener has no peer yet (ss prints 0.0.0.0:*).
            let peer = if info.state == TcpState::Listen { (0, 0) } else { peer };
            let listen = info.state == TcpState::Listen;
            let mut e = Entry {
                flow: spec.name.clone(),
                side,
                state: info.state.ss_name(),
                // The 2014 layout: ccsim's applications read what arrives at once (iperf -s), so
                // nothing waits to be read; ccsim keeps no accept backlog for a listener either.
                recv_q: 0,
                send_q: if listen { 0 } else { info.wqueue },
                local: endpoint(local),
                peer: endpoint(peer),
                dev: dev.clone(),
                mark: spec.mark,
                timer: None,
                shutdown: None,
                view: View { state: info.state, local, peer, cc: info.cc },
                info: Info::of(&info),
            };
            if layout == SsLayout::Iproute2_6_1 {
                // tcp_diag_get_info: a listener's queues are its accept backlog and the backlog's
                // limit (ccsim keeps neither: 0); other sockets' are rcv_nxt - copied_seq and
                // write_seq - snd_una.
                e.recv_q = if listen { 0 } else { info.rqueue };
                // sstate_name: SS_CLOSE is "UNCONN".
                if info.state == TcpState::Closed {
                    e.state = "UNCONN";
                }
                e.timer = info.timer.map(TimerView::of);
                e.shutdown = (!is_mini_socket(info.state)).then_some(info.shutdown);
                e.info = Info::of_6_1(&info);
            }
            v.push(e);
        }
    }
    v
}

fn endpoint((addr, port): (u32, u16)) -> String {
    if port == 0 {
        format!("{}:*", Ipv4Addr::from(addr))
    } else {
        format!("{}:{port}", Ipv4Addr::from(addr))
    }
}

// ---- the info line ----

/// The `ss -i` fields, each present when ss would print it. Times in milliseconds, `send` and
/// `pacing_rate` in bits per second.
#[derive(Serialize, Debug, Default, PartialEq)]
struct Info {
    cc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    wscale: Option<[u8; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rto: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    backoff: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rttvar: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ato: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mss: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwnd: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ssthresh: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ce_state: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    alpha: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ab_ecn: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ab_tot: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fallback_mode: Option<bool>,
    /// BBR's `tcp_bbr_info`, as ss prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    bbr: Option<BbrView>,
    /// TCP-NV's `tcpvegas_info` as the kernel exports it (ss prints none of it; see `send`).
    #[serde(skip_serializing_if = "Option::is_none")]
    vegas: Option<VegasView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    send: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pacing_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unacked: Option<u32>,
    /// Retransmitted packets in flight and the total (`tcpi_retrans`, `tcpi_total_retrans`).
    #[serde(skip_serializing_if = "Option::is_none")]
    retrans: Option<[u64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lost: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sacked: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dsack_dups: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reordering: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reord_seen: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rcvmss: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_sent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_retrans: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_acked: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_received: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    segs_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    segs_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_segs_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_segs_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivered: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivered_ce: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    minrtt: Option<f64>,
    // What iproute2 6.1's tcp_show_info adds (the 6.1 layout only).
    /// `TCPI_OPT_TIMESTAMPS`, `TCPI_OPT_SACK`, `TCPI_OPT_ECN`, `TCPI_OPT_ECN_SEEN` (text: with -o).
    #[serde(skip_serializing_if = "is_false")]
    ts: bool,
    #[serde(skip_serializing_if = "is_false")]
    sack: bool,
    #[serde(skip_serializing_if = "is_false")]
    ecn: bool,
    #[serde(skip_serializing_if = "is_false")]
    ecnseen: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pmtu: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    advmss: Option<u32>,
    /// ms since data was last sent and received (`tcpi_last_data_sent`, `tcpi_last_data_recv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    lastsnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lastrcv: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lastack: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rcv_ooopack: Option<u64>,
    /// bits per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    delivery_rate: Option<f64>,
    #[serde(skip_serializing_if = "is_false")]
    app_limited: bool,
    /// `tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited` in µs, as tcp_info has them
    /// (ss prints ms and the share of the busy time).
    #[serde(skip_serializing_if = "Option::is_none")]
    busy_time_us: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rwnd_limited_us: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sndbuf_limited_us: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rcv_rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rcv_space: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rcv_ssthresh: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notsent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snd_wnd: Option<u32>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `bbr:(bw:...,mrtt:...,pacing_gain:...,cwnd_gain:...)`: bw in bits per second, mrtt in ms,
/// gains as factors (absent when the module reports 0, as ss leaves them out).
#[derive(Serialize, Debug, PartialEq)]
struct BbrView {
    bw: f64,
    mrtt: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pacing_gain: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwnd_gain: Option<f64>,
}

impl BbrView {
    /// `bbr:(...)`, the rate printed by the layout's `sprint_bw`.
    fn text(&self, sprint_bw: fn(f64) -> String) -> String {
        let mut o = format!("bbr:(bw:{}bps,mrtt:{}", sprint_bw(self.bw), fmt_g(self.mrtt));
        if let Some(g) = self.pacing_gain {
            o += &format!(",pacing_gain:{}", fmt_g(g));
        }
        if let Some(g) = self.cwnd_gain {
            o += &format!(",cwnd_gain:{}", fmt_g(g));
        }
        o + ")"
    }
}

/// `struct tcpvegas_info`, raw: `tcpv_enabled`, `tcpv_rttcnt`, `tcpv_rtt` and `tcpv_minrtt` (µs;
/// NV reports its averaged RTT and its min RTT, 0xffffffff before the first sample).
#[derive(Serialize, Debug, PartialEq)]
struct VegasView {
    enabled: bool,
    rttcnt: u32,
    rtt_us: u32,
    minrtt_us: u32,
}

fn nz<T: Default + PartialEq>(v: T) -> Option<T> {
    (v != T::default()).then_some(v)
}

impl Info {
    /// What the seed-era `tcp_show_info` takes from `tcp_info` and the CC's diag attribute, under
    /// ss's conditions (the 2014 layout).
    fn of(t: &TcpInfo) -> Info {
        Info::with_cc(t, t.cc_info)
    }

    /// The fields both layouts share, with the CC's diag attribute `cc_info` (`CcInfo::None`
    /// when the kernel sends none).
    fn with_cc(t: &TcpInfo, cc_info: CcInfo) -> Info {
        // The RTT `send` is computed from: srtt, or a Vegas-style module's RTT (tcp_show_info).
        let mut rtt = f64::from(t.rtt_us);
        if let CcInfo::Vegas { enabled: true, rtt: v, .. } = cc_info {
            if v != 0 && v != 0x7fff_ffff {
                rtt = f64::from(v);
            }
        }
        let mut i = Info {
            cc: t.cc,
            rcv_rtt: (t.rcv_rtt_us != 0).then_some(t.rcv_rtt_us as f64 / 1000.0),
            rcv_space: nz(t.rcv_space),
            wscale: t.wscale_ok.then_some([t.snd_wscale, t.rcv_wscale]),
            // ss hides the initial 3 s RTO of old kernels.
            rto: (t.rto_us != 0 && t.rto_us != 3_000_000).then(|| t.rto_us as f64 / 1000.0),
            backoff: nz(t.backoff),
            rtt: (t.rtt_us != 0).then(|| t.rtt_us as f64 / 1000.0),
            rttvar: (t.rtt_us != 0).then(|| t.rttvar_us as f64 / 1000.0),
            ato: (t.ato_us != 0).then(|| t.ato_us as f64 / 1000.0),
            mss: nz(t.snd_mss),
            cwnd: nz(t.snd_cwnd),
            // ss omits ssthresh while it is "infinite" (>= 0xFFFF).
            ssthresh: (t.snd_ssthresh < 0xFFFF).then_some(t.snd_ssthresh),
            send: (rtt > 0.0 && t.snd_mss != 0 && t.snd_cwnd != 0)
                .then(|| t.snd_cwnd as f64 * t.snd_mss as f64 * 8_000_000.0 / rtt),
            pacing_rate: (t.pacing_rate != 0 && t.pacing_rate != u64::MAX).then_some(t.pacing_rate as f64 * 8.0),
            unacked: nz(t.unacked),
            retrans: (t.retrans != 0 || t.total_retrans != 0).then_some([t.retrans as u64, t.total_retrans]),
            lost: nz(t.lost),
            sacked: (t.state != TcpState::Listen).then_some(t.sacked).and_then(nz),
            dsack_dups: nz(t.dsack_dups),
            reordering: (t.reordering != 3).then_some(t.reordering),
            reord_seen: nz(t.reord_seen),
            rcvmss: nz(t.rcv_mss),
            bytes_sent: nz(t.bytes_sent),
            bytes_retrans: nz(t.bytes_retrans),
            bytes_acked: nz(t.bytes_acked),
            bytes_received: nz(t.bytes_received),
            segs_out: nz(t.segs_out),
            segs_in: nz(t.segs_in),
            data_segs_out: nz(t.data_segs_out),
            data_segs_in: nz(t.data_segs_in),
            delivered: nz(t.delivered),
            delivered_ce: nz(t.delivered_ce),
            minrtt: (t.min_rtt_us != 0).then(|| t.min_rtt_us as f64 / 1000.0),
            ..Info::default()
        };
        match cc_info {
            // `tcp_dctcp_info` (INET_DIAG_DCTCPINFO).
            CcInfo::Dctcp { enabled, ce_state, alpha, ab_ecn, ab_tot } => {
                if enabled {
                    (i.ce_state, i.alpha, i.ab_ecn, i.ab_tot) =
                        (Some(ce_state), Some(alpha), Some(ab_ecn), Some(ab_tot));
                } else {
                    i.fallback_mode = Some(true);
                }
            }
            // `tcp_bbr_info` (INET_DIAG_BBRINFO): bw in bytes per second, split in two halves.
            CcInfo::Bbr { bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain } => {
                let bw = (u64::from(bw_hi) << 32) | u64::from(bw_lo);
                i.bbr = Some(BbrView {
                    bw: bw as f64 * 8.0,
                    mrtt: f64::from(min_rtt) / 1000.0,
                    pacing_gain: (pacing_gain != 0).then(|| f64::from(pacing_gain) / 256.0),
                    cwnd_gain: (cwnd_gain != 0).then(|| f64::from(cwnd_gain) / 256.0),
                });
            }
            // `tcpvegas_info` (INET_DIAG_VEGASINFO): only `send` above uses it.
            CcInfo::Vegas { enabled, rttcnt, rtt, minrtt } => {
                i.vegas = Some(VegasView { enabled, rttcnt, rtt_us: rtt, minrtt_us: minrtt });
            }
            CcInfo::None => {}
        }
        i
    }

    /// What iproute2 6.1's `tcp_show_info` takes from what the kernel of today reports: the
    /// fields of `tcp_get_info` (which stops after cwnd, reordering and the pacing rate for a
    /// listener), the CC's diag attribute only below TIME-WAIT (`inet_sk_diag_fill`: ESTAB,
    /// SYN-SENT, FIN-WAIT-1/2), nothing for the SYN-RECV and TIME-WAIT mini sockets.
    fn of_6_1(t: &TcpInfo) -> Info {
        let listener = |cc| Info {
            cc,
            cwnd: nz(t.snd_cwnd),
            reordering: (t.reordering != 3).then_some(t.reordering),
            pacing_rate: (t.pacing_rate != 0 && t.pacing_rate != u64::MAX).then_some(t.pacing_rate as f64 * 8.0),
            ..Info::default()
        };
        let cc_reported = match t.state {
            TcpState::SynRecv | TcpState::TimeWait => return Info::default(),
            TcpState::Listen => return listener(t.cc),
            TcpState::Established | TcpState::SynSent | TcpState::FinWait1 | TcpState::FinWait2 => true,
            TcpState::Closed | TcpState::CloseWait | TcpState::LastAck | TcpState::Closing => false,
        };
        let mut i = Info::with_cc(t, if cc_reported { t.cc_info } else { CcInfo::None });
        // tcp_stats_print prints ssthresh only when it is non-zero.
        i.ssthresh = i.ssthresh.filter(|v| *v != 0);
        (i.ts, i.sack, i.ecn, i.ecnseen) = (t.ts_ok, t.sack_ok, t.ecn_ok, t.ecn_seen);
        i.pmtu = nz(t.pmtu);
        i.advmss = nz(t.advmss);
        i.lastsnd = nz(t.last_data_sent_ms);
        i.lastrcv = nz(t.last_data_recv_ms);
        i.lastack = nz(t.last_ack_recv_ms);
        i.rcv_ooopack = nz(t.rcv_ooopack);
        i.delivery_rate = (t.delivery_rate != 0).then_some(t.delivery_rate as f64 * 8.0);
        i.app_limited = t.delivery_rate_app_limited;
        i.busy_time_us = nz(t.busy_time_us);
        i.rwnd_limited_us = nz(t.rwnd_limited_us);
        i.sndbuf_limited_us = nz(t.sndbuf_limited_us);
        i.rcv_ssthresh = nz(t.rcv_ssthresh);
        i.notsent = nz(t.notsent_bytes);
        i.snd_wnd = nz(t.snd_wnd);
        i
    }

    /// iproute2 6.1's `tcp_stats_print`, without the leading tab: " ts sack cubic wscale:7,7 ...".
    /// The option flags come with `-o`; rates are whole bits per second (`sprint_bw` under `-n`).
    fn line_6_1(&self, show_options: bool) -> String {
        let mut o = String::new();
        let mut put = |s: String| {
            o.push(' ');
            o.push_str(&s);
        };
        if show_options {
            for (on, flag) in [(self.ts, "ts"), (self.sack, "sack"), (self.ecn, "ecn"), (self.ecnseen, "ecnseen")] {
                if on {
                    put(flag.into());
                }
            }
        }
        if !self.cc.is_empty() {
            put(self.cc.to_string());
        }
        self.put_timers(&mut put);
        for (name, v) in [
            ("mss", self.mss),
            ("pmtu", self.pmtu),
            ("rcvmss", self.rcvmss),
            ("advmss", self.advmss),
            ("cwnd", self.cwnd),
            ("ssthresh", self.ssthresh),
        ] {
            if let Some(v) = v {
                put(format!("{name}:{v}"));
            }
        }
        for (name, v) in [
            ("bytes_sent", self.bytes_sent),
            ("bytes_retrans", self.bytes_retrans),
            ("bytes_acked", self.bytes_acked),
            ("bytes_received", self.bytes_received),
            ("segs_out", self.segs_out),
            ("segs_in", self.segs_in),
            ("data_segs_out", self.data_segs_out),
            ("data_segs_in", self.data_segs_in),
        ] {
            if let Some(v) = v {
                put(format!("{name}:{v}"));
            }
        }
        if let (Some(c), Some(a), Some(e), Some(t)) = (self.ce_state, self.alpha, self.ab_ecn, self.ab_tot) {
            put(format!("dctcp:(ce_state:{c},alpha:{a},ab_ecn:{e},ab_tot:{t})"));
        } else if self.fallback_mode == Some(true) {
            put("dctcp:fallback_mode".into());
        }
        if let Some(b) = &self.bbr {
            put(b.text(sprint_bw_6_1));
        }
        if let Some(v) = self.send {
            put(format!("send {}bps", sprint_bw_6_1(v)));
        }
        for (name, v) in [("lastsnd", self.lastsnd), ("lastrcv", self.lastrcv), ("lastack", self.lastack)] {
            if let Some(v) = v {
                put(format!("{name}:{v}"));
            }
        }
        if let Some(v) = self.pacing_rate {
            put(format!("pacing_rate {}bps", sprint_bw_6_1(v)));
        }
        if let Some(v) = self.delivery_rate {
            put(format!("delivery_rate {}bps", sprint_bw_6_1(v)));
        }
        for (name, v) in [("delivered", self.delivered), ("delivered_ce", self.delivered_ce)] {
            if let Some(v) = v {
                put(format!("{name}:{v}"));
            }
        }
        if self.app_limited {
            put("app_limited".into());
        }
        if let Some(busy) = self.busy_time_us {
            put(format!("busy:{}ms", busy / 1000));
            for (name, v) in [("rwnd_limited", self.rwnd_limited_us), ("sndbuf_limited", self.sndbuf_limited_us)] {
                if let Some(v) = v {
                    put(format!("{name}:{}ms({:.1}%)", v / 1000, 100.0 * v as f64 / busy as f64));
                }
            }
        }
        self.put_loss(&mut put);
        self.put_rcv_space(&mut put);
        if let Some(v) = self.rcv_ssthresh {
            put(format!("rcv_ssthresh:{v}"));
        }
        if let Some(v) = self.notsent {
            put(format!("notsent:{v}"));
        }
        if let Some(v) = self.minrtt {
            put(format!("minrtt:{}", fmt_g(v)));
        }
        if let Some(v) = self.rcv_ooopack {
            put(format!("rcv_ooopack:{v}"));
        }
        if let Some(v) = self.snd_wnd {
            put(format!("snd_wnd:{v}"));
        }
        o
    }

    /// `wscale:`, `rto:`, `backoff:`, `rtt:`, `ato:` — the same in both layouts.
    fn put_timers(&self, put: &mut impl FnMut(String)) {
        if let Some([s, r]) = self.wscale {
            put(format!("wscale:{s},{r}"));
        }
        if let Some(v) = self.rto {
            put(format!("rto:{}", fmt_g(v)));
        }
        if let Some(v) = self.backoff {
            put(format!("backoff:{v}"));
        }
        if let (Some(r), Some(v)) = (self.rtt, self.rttvar) {
            put(format!("rtt:{}/{}", fmt_g(r), fmt_g(v)));
        }
        if let Some(v) = self.ato {
            put(format!("ato:{}", fmt_g(v)));
        }
    }

    /// `unacked:` to `reord_seen:` — the same, in the same order, in both layouts.
    fn put_loss(&self, put: &mut impl FnMut(String)) {
        if let Some(v) = self.unacked {
            put(format!("unacked:{v}"));
        }
        if let Some([c, t]) = self.retrans {
            put(format!("retrans:{c}/{t}"));
        }
        if let Some(v) = self.lost {
            put(format!("lost:{v}"));
        }
        if let Some(v) = self.sacked {
            put(format!("sacked:{v}"));
        }
        if let Some(v) = self.dsack_dups {
            put(format!("dsack_dups:{v}"));
        }
        if let Some(v) = self.reordering {
            put(format!("reordering:{v}"));
        }
        if let Some(v) = self.reord_seen {
            put(format!("reord_seen:{v}"));
        }
    }

    /// `rcv_rtt` (ms) and `rcv_space`: the receiver's RTT estimate and autotuning's measure.
    fn put_rcv_space(&self, put: &mut impl FnMut(String)) {
        if let Some(v) = self.rcv_rtt {
            put(format!("rcv_rtt:{}", fmt_g(v)));
        }
        if let Some(v) = self.rcv_space {
            put(format!("rcv_space:{v}"));
        }
    }

    /// The 2014 info line without its leading tab: " dctcp wscale:7,7 rto:203 ...".
    fn line_2014(&self) -> String {
        let mut o = String::new();
        let mut put = |s: String| {
            o.push(' ');
            o.push_str(&s);
        };
        put(self.cc.to_string());
        self.put_timers(&mut put);
        if let Some(v) = self.mss {
            put(format!("mss:{v}"));
        }
        if let Some(v) = self.cwnd {
            put(format!("cwnd:{v}"));
        }
        if let Some(v) = self.ssthresh {
            put(format!("ssthresh:{v}"));
        }
        if let (Some(c), Some(a), Some(e), Some(t)) = (self.ce_state, self.alpha, self.ab_ecn, self.ab_tot) {
            put(format!("ce_state {c} alpha {a} ab_ecn {e} ab_tot {t}"));
        }
        if self.fallback_mode == Some(true) {
            put("fallback_mode".into());
        }
        if let Some(b) = &self.bbr {
            put(b.text(sprint_bw_2014));
        }
        if let Some(v) = self.send {
            put(format!("send {}bps", sprint_bw_2014(v)));
        }
        if let Some(v) = self.pacing_rate {
            put(format!("pacing_rate {}bps", sprint_bw_2014(v)));
        }
        self.put_loss(&mut put);
        self.put_rcv_space(&mut put);
        for (name, v) in [
            ("rcvmss", self.rcvmss.map(u64::from)),
            ("bytes_sent", self.bytes_sent),
            ("bytes_retrans", self.bytes_retrans),
            ("bytes_acked", self.bytes_acked),
            ("bytes_received", self.bytes_received),
            ("segs_out", self.segs_out),
            ("segs_in", self.segs_in),
            ("data_segs_out", self.data_segs_out),
            ("data_segs_in", self.data_segs_in),
            ("delivered", self.delivered.map(u64::from)),
            ("delivered_ce", self.delivered_ce.map(u64::from)),
        ] {
            if let Some(v) = v {
                put(format!("{name}:{v}"));
            }
        }
        if let Some(v) = self.minrtt {
            put(format!("minrtt:{}", fmt_g(v)));
        }
        o
    }
}

/// The 2014 layout: the header, then per socket its line and its tab-indented info line, columns
/// aligned.
fn render_2014(entries: &[Entry]) -> String {
    let head = ["State", "Recv-Q", "Send-Q", "Local-Address:Port", "Peer-Address:Port"];
    let rows: Vec<[String; 5]> = entries
        .iter()
        .map(|e| [e.state.to_string(), e.recv_q.to_string(), e.send_q.to_string(), e.local.clone(), e.peer.clone()])
        .collect();
    let mut w = head.map(str::len);
    for r in &rows {
        for (k, c) in r.iter().enumerate() {
            w[k] = w[k].max(c.len());
        }
    }
    let line = |cells: [&str; 5]| {
        let s: Vec<String> = cells.iter().zip(w).map(|(c, w)| format!("{c:<w$}")).collect();
        s.join(" ").trim_end().to_string() + "\n"
    };
    let mut out = line(head);
    for (r, e) in rows.iter().zip(entries) {
        out += &line([&r[0], &r[1], &r[2], &r[3], &r[4]]);
        out += &format!("\t{}\n", e.info.line_2014());
    }
    out
}

/// C's `printf("%g", v)`: six significant digits, trailing zeros dropped, exponent form outside
/// 1e-4 ..< 1e6.
fn fmt_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let e = format!("{v:.5e}");
    let (mant, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let trim =
        |s: &str| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.into() };
    if !(-4..6).contains(&exp) {
        format!("{}e{}{:02}", trim(mant), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        trim(&format!("{v:.*}", (5 - exp) as usize))
    }
}

/// iproute2 6.1's `sprint_bw` under `-n` (which `-tin` implies): whole bits per second, `%.0f`.
fn sprint_bw_6_1(bw: f64) -> String {
    format!("{bw:.0}")
}

/// iproute2 6.1's `print_ms_timer`: "1min2.003ms"-style, empty for 0 (as 6.1 prints an expired
/// timer: `timer:(on,,0)`).
fn print_ms_timer(timeout_ms: u64) -> String {
    let timeout = timeout_ms.min(u64::from(u32::MAX));
    let (mut secs, mut msecs) = (timeout / 1000, timeout % 1000);
    let minutes = secs / 60;
    secs %= 60;
    let mut buf = String::new();
    if minutes > 0 {
        msecs = 0;
        buf += &format!("{minutes}min");
        if minutes > 9 {
            secs = 0;
        }
    }
    if secs > 0 {
        if secs > 9 {
            msecs = 0;
        }
        buf += &format!("{secs}{}", if msecs > 0 { "." } else { "sec" });
    }
    if msecs > 0 {
        buf += &format!("{msecs:03}ms");
    }
    buf
}

/// One of iproute2 6.1's output columns (`struct column`, Netid disabled as with `-t`): how its
/// cells align and what goes before a cell that does not start a line.
struct Column {
    right: bool,
    ldelim: &'static str,
}

/// `columns[]`: State, Recv-Q, Send-Q, Local Address:, Port, Peer Address:, Port, Process, and
/// the unnamed last one.
const COLUMNS: [Column; 9] = [
    Column { right: false, ldelim: " " },
    Column { right: false, ldelim: " " },
    Column { right: false, ldelim: " " },
    Column { right: true, ldelim: " " },
    Column { right: false, ldelim: "" },
    Column { right: true, ldelim: " " },
    Column { right: false, ldelim: "" },
    Column { right: false, ldelim: "" },
    Column { right: false, ldelim: "" },
];

/// iproute2 6.1's output of `ss -tin` (`-o`, `-e`) when standard output is not a terminal: each
/// socket's fields are cells of the columns, the timer, details and the info line (after "\n\t")
/// all in the Process cell; `render_calc_width` sizes each column to its longest cell (plus its
/// delimiter), and `render` pads the cells (`print_left_spacing`, `print_right_spacing`). ccsim
/// always prints this compact form: ss spreads the columns over a terminal's width instead.
fn render_6_1(entries: &[Entry], show: Show) -> String {
    let mut rows: Vec<Cells> = vec![HEADER_6_1.map(String::from)];
    for e in entries {
        let (laddr, lport) = split_endpoint(&e.local);
        let (paddr, pport) = split_endpoint(&e.peer);
        // inet_show_sock: -o's timer, -e's details, then tcp_show_info after "\n\t".
        let mut process = String::new();
        if show.options {
            if let Some(t) = &e.timer {
                process += &t.text();
            }
        }
        if show.details {
            process += &details(e);
        }
        process += "\n\t";
        process += &e.info.line_6_1(show.options);
        rows.push([
            e.state.to_string(),
            // sock_state_print: "%-6d".
            format!("{:<6}", e.recv_q),
            format!("{:<6}", e.send_q),
            laddr.to_string(),
            lport.to_string(),
            paddr.to_string(),
            pport.to_string(),
            process,
            String::new(),
        ]);
    }
    render_columns(&rows)
}

/// One output line's cells, one per column of [`COLUMNS`].
type Cells = [String; 9];

/// The header cells (`print_header`; the last column has none).
const HEADER_6_1: [&str; 9] =
    ["State", "Recv-Q", "Send-Q", "Local Address:", "Port", "Peer Address:", "Port", "Process", ""];

/// iproute2 6.1's `render_calc_width` and `render` for output that is not a terminal: the first
/// column with content is as wide as its longest cell, every later one with content as its
/// longest cell plus its delimiter; a cell not starting its line gets its column's delimiter,
/// then is padded on the left (right-aligned columns) or the right (left-aligned) to the width.
/// A cell counts towards its column's width when ss flushes it (`field_flush`), which the last
/// socket's Process cell, still open when ss renders, never is.
fn render_columns(rows: &[Cells]) -> String {
    const PROCESS: usize = 7;
    let mut width = [0usize; 9];
    let mut first = true;
    for (k, c) in COLUMNS.iter().enumerate() {
        let flushed = |i: usize| !(k == PROCESS && i > 0 && i + 1 == rows.len());
        let max_len = rows.iter().enumerate().filter(|(i, _)| flushed(*i)).map(|(_, r)| r[k].len()).max().unwrap_or(0);
        width[k] = if !first && max_len > 0 { max_len + c.ldelim.len() } else { max_len };
        if width[k] > 0 {
            first = false;
        }
    }
    let mut out = String::new();
    for r in rows {
        for (k, (c, cell)) in COLUMNS.iter().zip(r).enumerate() {
            let mut printed = 0;
            if k > 0 {
                out += c.ldelim;
                printed = c.ldelim.len();
            }
            if width[k] > 0 && c.right {
                let pad = width[k].saturating_sub(cell.len() + printed);
                out.extend(std::iter::repeat_n(' ', pad));
                printed += pad;
            }
            out += cell;
            printed += cell.len();
            if width[k] > 0 && !c.right {
                out.extend(std::iter::repeat_n(' ', width[k].saturating_sub(printed)));
            }
        }
        out.push('\n');
    }
    out
}

/// `10.0.0.1:40000` as ss's two cells, "10.0.0.1:" and "40000" (`sock_addr_print`).
fn split_endpoint(e: &str) -> (&str, &str) {
    match e.rfind(':') {
        Some(k) => (&e[..=k], &e[k + 1..]),
        None => (e, ""),
    }
}

/// `-e`: `sock_details_print` and the shutdown state of `inet_show_sock`. ccsim's sockets have no
/// owner, inode, kernel address or cgroup, so of `uid:`, `ino:`, `sk:`, `cgroup:` none is
/// printed; the mark is the flow's (`fwmark:0x..` when set) and `<->` the shutdown bits. The
/// mini sockets (SYN-RECV, TIME-WAIT) report neither.
fn details(e: &Entry) -> String {
    let mut o = String::new();
    if e.mark != 0 && !is_mini_socket(e.view.state) {
        o += &format!(" fwmark:{:#x}", e.mark);
    }
    if let Some(m) = e.shutdown {
        let rcv = if m & RCV_SHUTDOWN != 0 { '-' } else { '<' };
        let snd = if m & SEND_SHUTDOWN != 0 { '-' } else { '>' };
        o += &format!(" {rcv}-{snd}");
    }
    o
}

/// `sprint_bw` of the ss in the DCTCP merge commit ("10129.2M").
fn sprint_bw_2014(bw: f64) -> String {
    if bw > 1_000_000.0 {
        format!("{:.1}M", bw / 1_000_000.0)
    } else if bw > 1000.0 {
        format!("{:.1}K", bw / 1000.0)
    } else {
        fmt_g(bw)
    }
}

// ---- filters ----

const ALL_STATES: u16 = (1 << 11) - 1;

fn bit(s: TcpState) -> u16 {
    1 << match s {
        TcpState::Established => 0,
        TcpState::SynSent => 1,
        TcpState::SynRecv => 2,
        TcpState::FinWait1 => 3,
        TcpState::FinWait2 => 4,
        TcpState::TimeWait => 5,
        TcpState::Closed => 6,
        TcpState::CloseWait => 7,
        TcpState::LastAck => 8,
        TcpState::Listen => 9,
        TcpState::Closing => 10,
    }
}

/// ss's `scan_state`.
fn scan_state(name: &str) -> Result<u16, String> {
    use TcpState::*;
    let n = name.to_ascii_lowercase();
    Ok(match n.as_str() {
        "established" => bit(Established),
        "syn-sent" => bit(SynSent),
        "syn-recv" | "syn-rcv" => bit(SynRecv),
        "fin-wait-1" => bit(FinWait1),
        "fin-wait-2" => bit(FinWait2),
        "time-wait" => bit(TimeWait),
        "closed" | "close" | "unconnected" => bit(Closed),
        "close-wait" => bit(CloseWait),
        "last-ack" => bit(LastAck),
        "listening" => bit(Listen),
        "closing" => bit(Closing),
        "all" => ALL_STATES,
        "connected" => ALL_STATES & !(bit(Closed) | bit(Listen)),
        "synchronized" => ALL_STATES & !(bit(Closed) | bit(Listen) | bit(SynSent)),
        "bucket" => bit(SynRecv) | bit(TimeWait),
        "big" => ALL_STATES & !(bit(SynRecv) | bit(TimeWait)),
        _ => return Err(format!("filter: unknown state `{name}`; states are {STATE_NAMES}")),
    })
}

/// ss's default without a state filter (`SS_CONN`).
const DEFAULT_STATES: u16 = ALL_STATES & !(1 << 9 | 1 << 6 | 1 << 5 | 1 << 2);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `sport`/`dport`; `None`: any port (`:*`).
    Port {
        peer: bool,
        cmp: Cmp,
        port: Option<u16>,
    },
    /// `src`/`dst`: address prefix and/or port.
    Host {
        peer: bool,
        net: Option<(u32, u8)>,
        port: Option<u16>,
    },
    Dev(String),
    Mark {
        mark: u32,
        mask: u32,
    },
    Cc(String),
}

#[derive(Debug)]
struct Filter {
    states: u16,
    expr: Option<Expr>,
}

impl Filter {
    fn parse(args: &[String], hosts: &Hosts) -> Result<Filter, String> {
        // ss splits every argument at blanks: `'( dport = :5001 or sport = :5001 )'` works too.
        let toks: Vec<String> = args.iter().flat_map(|a| a.split_whitespace().map(String::from)).collect();
        // `state`/`exclude` apply to the whole filter, as in ss (which wants them first).
        let (mut states, mut saw) = (0u16, false);
        let mut rest = Vec::new();
        let mut depth = 0i32;
        let mut it = toks.into_iter().peekable();
        while let Some(t) = it.next() {
            match t.as_str() {
                "state" | "exclude" | "excl" => {
                    if depth > 0 || rest.last().is_some_and(|p: &String| is_connective(p)) {
                        return Err(format!(
                            "filter: `{t}` applies to the whole filter; write it outside parentheses and \
                             without and/or/not\n{FILTER_FORMS}"
                        ));
                    }
                    let name =
                        it.next().ok_or_else(|| format!("filter: `{t}` needs a state; states are {STATE_NAMES}"))?;
                    let b = scan_state(&name)?;
                    if t == "state" {
                        states |= b;
                    } else {
                        if !saw {
                            states = ALL_STATES;
                        }
                        states &= !b;
                    }
                    saw = true;
                }
                _ => {
                    depth += (t == "(") as i32 - (t == ")") as i32;
                    rest.push(t);
                }
            }
        }
        let expr = if rest.is_empty() { None } else { Some(Parser { toks: rest, i: 0, hosts }.list(0)?) };
        Ok(Filter { states: if saw { states } else { DEFAULT_STATES }, expr })
    }

    fn matches(&self, e: &Entry) -> bool {
        self.states & bit(e.view.state) != 0 && self.expr.as_ref().is_none_or(|x| eval(x, e))
    }
}

fn is_connective(t: &str) -> bool {
    matches!(t, "and" | "&" | "&&" | "or" | "|" | "||" | "not" | "!")
}

fn eval(x: &Expr, e: &Entry) -> bool {
    let v = &e.view;
    match x {
        Expr::And(a, b) => eval(a, e) && eval(b, e),
        Expr::Or(a, b) => eval(a, e) || eval(b, e),
        Expr::Not(a) => !eval(a, e),
        Expr::Port { peer, cmp, port } => {
            let have = if *peer { v.peer.1 } else { v.local.1 };
            match (cmp, port) {
                (Cmp::Eq, None) => true,
                (Cmp::Ne, None) => false,
                (_, None) => unreachable!("comparisons need a port"),
                (Cmp::Eq, Some(p)) => have == *p,
                (Cmp::Ne, Some(p)) => have != *p,
                (Cmp::Lt, Some(p)) => have < *p,
                (Cmp::Le, Some(p)) => have <= *p,
                (Cmp::Gt, Some(p)) => have > *p,
                (Cmp::Ge, Some(p)) => have >= *p,
            }
        }
        Expr::Host { peer, net, port } => {
            let (addr, p) = if *peer { v.peer } else { v.local };
            port.is_none_or(|q| q == p)
                && net.is_none_or(|(a, len)| {
                    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
                    addr & mask == a & mask
                })
        }
        Expr::Dev(d) => e.dev == *d,
        Expr::Mark { mark, mask } => e.mark & mask == *mark,
        Expr::Cc(c) => v.cc == c,
    }
}

struct Parser<'a> {
    toks: Vec<String>,
    i: usize,
    hosts: &'a Hosts,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.i).map(String::as_str)
    }
    fn next(&mut self) -> Option<String> {
        let t = self.toks.get(self.i).cloned();
        self.i += 1;
        t
    }

    /// exprlist: expr { [and|or] expr }, left to right.
    fn list(&mut self, depth: u32) -> Result<Expr, String> {
        let mut e = self.expr(depth)?;
        loop {
            match self.peek() {
                None => {
                    if depth > 0 {
                        return Err(format!("filter: missing `)`\n{FILTER_FORMS}"));
                    }
                    return Ok(e);
                }
                Some(")") => {
                    if depth == 0 {
                        return Err(format!("filter: `)` without `(`\n{FILTER_FORMS}"));
                    }
                    return Ok(e);
                }
                Some("|" | "||" | "or") => {
                    self.i += 1;
                    e = Expr::Or(Box::new(e), Box::new(self.expr(depth)?));
                }
                Some("&" | "&&" | "and") => {
                    self.i += 1;
                    e = Expr::And(Box::new(e), Box::new(self.expr(depth)?));
                }
                Some(_) => e = Expr::And(Box::new(e), Box::new(self.expr(depth)?)),
            }
        }
    }

    fn expr(&mut self, depth: u32) -> Result<Expr, String> {
        let Some(t) = self.next() else {
            return Err(format!("filter: ends where a condition was expected\n{FILTER_FORMS}"));
        };
        Ok(match t.as_str() {
            "(" => {
                let e = self.list(depth + 1)?;
                self.i += 1; // the `)` that `list` stopped at
                e
            }
            "!" | "not" => Expr::Not(Box::new(self.expr(depth)?)),
            "sport" | "dport" => {
                let cmp = self.cmp(&t, true)?;
                let v = self.value(&t, ":PORT, e.g. dport = :5001")?;
                let port =
                    port(&v).ok_or_else(|| format!("filter: `{t} {v}`: not a port; write :N, e.g. {t} = :5001"))?;
                if port.is_none() && !matches!(cmp, Cmp::Eq | Cmp::Ne) {
                    return Err(format!("filter: `{t}` compares with a port number, not `{v}`"));
                }
                let e = Expr::Port { peer: t == "dport", cmp: if cmp == Cmp::Ne { Cmp::Eq } else { cmp }, port };
                if cmp == Cmp::Ne {
                    Expr::Not(Box::new(e))
                } else {
                    e
                }
            }
            "src" | "dst" => {
                if self.cmp(&t, false)? != Cmp::Eq {
                    return Err(format!("filter: `{t}` takes `=` (or nothing) before the address"));
                }
                let v = self.value(&t, "ADDR[/LEN][:PORT], e.g. dst 10.0.0.3 or dst c:5001")?;
                let (net, port) = self.hostcond(&t, &v)?;
                Expr::Host { peer: t == "dst", net, port }
            }
            "dev" => {
                let neg = self.cmp(&t, false)? == Cmp::Ne;
                let v = self.value(&t, "a host name, e.g. dev = a")?;
                if self.hosts.lookup(&v).is_none() {
                    return Err(format!(
                        "filter: `dev {v}`: no such host (the host stands in for its device); hosts are {}",
                        self.hosts.list()
                    ));
                }
                negate(neg, Expr::Dev(v))
            }
            "mark" | "fwmark" => {
                let neg = self.cmp(&t, false)? == Cmp::Ne;
                let v = self.value(&t, "0xN[/0xM], e.g. mark = 0x10/0xf0")?;
                let (mark, mask) = markmask(&v)
                    .ok_or_else(|| format!("filter: `{t} {v}`: write a mark as 0xN or 0xN/0xM (decimal works too)"))?;
                negate(neg, Expr::Mark { mark, mask })
            }
            "cc" => {
                let neg = self.cmp(&t, false)? == Cmp::Ne;
                let v = self.value(&t, "a congestion control, e.g. cc dctcp")?;
                let known: Vec<&str> = CcKind::ALL.iter().map(|k| k.name()).chain(["dctcp-reno"]).collect();
                if !known.contains(&v.as_str()) {
                    return Err(format!(
                        "filter: `cc {v}`: unknown congestion control; known are {}",
                        known.join(", ")
                    ));
                }
                negate(neg, Expr::Cc(v))
            }
            other => {
                return Err(format!("filter: unknown token `{other}`\n{FILTER_FORMS}"));
            }
        })
    }

    /// An optional comparison after a key (`=` may be left out, as in ss).
    fn cmp(&mut self, key: &str, ordered: bool) -> Result<Cmp, String> {
        let c = match self.peek() {
            Some("=" | "==" | "eq") => Cmp::Eq,
            Some("!=" | "ne" | "neq") => Cmp::Ne,
            Some("<" | "lt") => Cmp::Lt,
            Some("<=" | "le" | "leq") => Cmp::Le,
            Some(">" | "gt") => Cmp::Gt,
            Some(">=" | "ge" | "geq") => Cmp::Ge,
            _ => return Ok(Cmp::Eq),
        };
        let op = self.next().unwrap_or_default();
        if !ordered && !matches!(c, Cmp::Eq | Cmp::Ne) {
            return Err(format!("filter: `{key} {op}`: `{key}` takes = or != only"));
        }
        Ok(c)
    }

    fn value(&mut self, key: &str, want: &str) -> Result<String, String> {
        match self.next() {
            Some(v) if !matches!(v.as_str(), "(" | ")") && !is_connective(&v) => Ok(v),
            _ => Err(format!("filter: `{key}` needs {want}")),
        }
    }

    /// ss's `parse_hostcond` for IPv4: `ADDR[/LEN][:PORT]`, `*`, `*:PORT`, `:PORT`; ADDR may be a
    /// host name.
    #[allow(clippy::type_complexity)]
    fn hostcond(&self, key: &str, v: &str) -> Result<(Option<(u32, u8)>, Option<u16>), String> {
        let bad = |why: &str| {
            format!("filter: `{key} {v}`: {why}; write ADDR[/LEN][:PORT] with ADDR 10.0.0.N, a host name or *; hosts are {}", self.hosts.list())
        };
        let (addr, port) = match v.strip_prefix('*') {
            Some(rest) => ("", rest),
            None => {
                let from = v.find('/').unwrap_or(0);
                match v[from..].rfind(':') {
                    Some(k) => (&v[..from + k], &v[from + k..]),
                    None => (v, ""),
                }
            }
        };
        let port = match port.strip_prefix(':').unwrap_or(port) {
            "" => None,
            p => port_number(p).ok_or_else(|| bad("bad port"))?,
        };
        if addr.is_empty() {
            return Ok((None, port));
        }
        let (a, len) = match addr.split_once('/') {
            Some((a, l)) => {
                (a, Some(l.parse::<u8>().ok().filter(|l| *l <= 32).ok_or_else(|| bad("bad prefix length"))?))
            }
            None => (addr, None),
        };
        let ip = match a.parse::<Ipv4Addr>() {
            Ok(ip) => u32::from(ip),
            Err(_) => self.hosts.lookup(a).ok_or_else(|| bad("not an IPv4 address or a host"))?,
        };
        Ok((Some((ip, len.unwrap_or(32))), port))
    }
}

fn negate(neg: bool, e: Expr) -> Expr {
    if neg {
        Expr::Not(Box::new(e))
    } else {
        e
    }
}

/// `:N`, `N`, `:*` or `*` (`None`: any port).
fn port(v: &str) -> Option<Option<u16>> {
    port_number(v.strip_prefix(':').unwrap_or(v))
}

fn port_number(p: &str) -> Option<Option<u16>> {
    if p == "*" {
        return Some(None);
    }
    p.parse::<u16>().ok().map(Some)
}

/// ss's `parse_markmask`: `%i` or `%i/%i` (0x hex, leading-0 octal, decimal); mask defaults to all
/// ones.
fn markmask(v: &str) -> Option<(u32, u32)> {
    let int = |s: &str| -> Option<u32> {
        if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            u32::from_str_radix(h, 16).ok()
        } else if s.len() > 1 && s.starts_with('0') {
            u32::from_str_radix(&s[1..], 8).ok()
        } else {
            s.parse().ok()
        }
    };
    match v.split_once('/') {
        Some((m, k)) => Some((int(m)?, int(k)?)),
        None => Some((int(v)?, u32::MAX)),
    }
}

/// The filter grammar alone, for the fuzz targets and tests: `words` parsed as `ccsim ss`'s
/// FILTER arguments against a three-host star (hosts `a`, `b`, `c` at 10.0.0.1-3).
#[doc(hidden)]
pub fn fuzz_filter(words: &[String]) -> Result<(), String> {
    let s = scenario::parse("[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\", \"c\"]\n", "fuzz")
        .map_err(|e| e.to_string())?;
    let built = scenario::build(&s).map_err(|e| e.to_string())?;
    Filter::parse(words, &Hosts::new(&built.topo)).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(cc: &'static str, cc_info: CcInfo) -> TcpInfo {
        TcpInfo {
            state: TcpState::Established,
            ca_state: Default::default(),
            cc,
            snd_cwnd: 10,
            snd_ssthresh: 1102,
            rtt_us: 711,
            rttvar_us: 1327,
            min_rtt_us: 0,
            rto_us: 201_000,
            ato_us: 40_000,
            snd_mss: 1448,
            rcv_mss: 0,
            snd_wscale: 7,
            rcv_wscale: 7,
            wscale_ok: true,
            wqueue: 0,
            unacked: 0,
            sacked: 0,
            lost: 0,
            retrans: 0,
            total_retrans: 0,
            reordering: 3,
            dsack_dups: 0,
            reord_seen: 0,
            delivered: 0,
            delivered_ce: 0,
            pacing_rate: 40_687_500,
            delivery_rate: 0,
            delivery_rate_app_limited: false,
            bytes_acked: 0,
            bytes_received: 0,
            bytes_retrans: 0,
            bytes_sent: 0,
            segs_out: 0,
            segs_in: 0,
            data_segs_out: 0,
            data_segs_in: 0,
            rto_count: 0,
            backoff: 0,
            ecn_ok: false,
            ecn_seen: false,
            ts_ok: true,
            sack_ok: true,
            cc_info,
            pmtu: 1500,
            advmss: 1448,
            rcv_ssthresh: 6 << 20,
            snd_wnd: 0,
            rcv_wnd: 0,
            retransmits: 0,
            notsent_bytes: 0,
            rqueue: 0,
            shutdown: 0,
            last_data_sent_ms: 0,
            last_data_recv_ms: 0,
            last_ack_recv_ms: 0,
            rcv_ooopack: 0,
            busy_time_us: 0,
            rwnd_limited_us: 0,
            sndbuf_limited_us: 0,
            timer: None,
            rcv_space: 0,
            rcv_rtt_us: 0,
        }
    }

    /// The fallen-back socket of the DCTCP merge commit, whole.
    #[test]
    fn e3118e8359_fallback_line() {
        let mut t = info("dctcp-reno", CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 });
        (t.rcv_rtt_us, t.rcv_space) = (1500, 29200);
        assert_eq!(
            Info::of(&t).line_2014(),
            " dctcp-reno wscale:7,7 rto:201 rtt:0.711/1.327 ato:40 mss:1448 cwnd:10 ssthresh:1102 fallback_mode \
             send 162.9Mbps pacing_rate 325.5Mbps rcv_rtt:1.5 rcv_space:29200"
        );
    }

    /// The DCTCP socket of the merge commit, whole.
    #[test]
    fn e3118e8359_dctcp_line() {
        let mut t = info("dctcp", CcInfo::Dctcp { enabled: true, ce_state: 0, alpha: 15, ab_ecn: 0, ab_tot: 735584 });
        (t.rto_us, t.rtt_us, t.rttvar_us, t.ato_us, t.snd_cwnd) = (203_000, 2349, 26, 0, 2054);
        (t.pacing_rate, t.unacked, t.total_retrans, t.reordering) = (2_531_762_500, 1822, 15, 101);
        t.rcv_space = 29200;
        assert_eq!(
            Info::of(&t).line_2014(),
            " dctcp wscale:7,7 rto:203 rtt:2.349/0.026 mss:1448 cwnd:2054 ssthresh:1102 ce_state 0 alpha 15 ab_ecn 0 \
             ab_tot 735584 send 10129.2Mbps pacing_rate 20254.1Mbps unacked:1822 retrans:0/15 reordering:101 \
             rcv_space:29200"
        );
    }

    /// BBR's `tcp_bbr_info` as today's ss prints it (`bbr:(bw:328.6Mbps,mrtt:0.149,
    /// pacing_gain:2.88672,cwnd_gain:2.88672)` in STARTUP), after ssthresh and before send.
    #[test]
    fn bbr_info_prints_like_ss() {
        let bw: u64 = 41_075_000; // bytes per second: 328.6 Mbit/s
        let mut t =
            info("bbr", CcInfo::Bbr { bw_lo: bw as u32, bw_hi: 0, min_rtt: 149, pacing_gain: 739, cwnd_gain: 739 });
        t.ato_us = 0;
        assert_eq!(
            Info::of(&t).line_2014(),
            " bbr wscale:7,7 rto:201 rtt:0.711/1.327 mss:1448 cwnd:10 ssthresh:1102 \
             bbr:(bw:328.6Mbps,mrtt:0.149,pacing_gain:2.88672,cwnd_gain:2.88672) send 162.9Mbps pacing_rate 325.5Mbps"
        );
        // bw_hi is the upper half of the 64-bit rate; zero gains are left out, as ss does.
        t.cc_info = CcInfo::Bbr { bw_lo: 0, bw_hi: 1, min_rtt: 10_000, pacing_gain: 256, cwnd_gain: 0 };
        let i = Info::of(&t);
        assert_eq!(i.bbr.as_ref().unwrap().bw, (1u64 << 32) as f64 * 8.0);
        assert!(i.line_2014().contains(" bbr:(bw:34359.7Mbps,mrtt:10,pacing_gain:1) send "), "{}", i.line_2014());
    }

    /// ss prints no field of `tcpvegas_info`; it computes `send` from `tcpv_rtt` when the module
    /// is enabled and the RTT is neither 0 nor 0x7fffffff.
    #[test]
    fn vegas_info_only_changes_the_rtt_of_send() {
        let srtt = info("nv", CcInfo::Vegas { enabled: true, rttcnt: 3, rtt: 0, minrtt: 80 });
        let l = Info::of(&srtt).line_2014();
        assert!(l.contains(" send 162.9Mbps "), "{l}");
        assert!(!l.contains("80") && !l.contains("vegas") && !l.contains("minrtt"), "{l}");
        let t = info("nv", CcInfo::Vegas { enabled: true, rttcnt: 3, rtt: 1448, minrtt: 80 });
        assert!(Info::of(&t).line_2014().contains(" send 80.0Mbps "), "{}", Info::of(&t).line_2014());
        for v in [
            CcInfo::Vegas { enabled: false, rttcnt: 3, rtt: 1448, minrtt: 80 },
            CcInfo::Vegas { enabled: true, rttcnt: 3, rtt: 0x7fff_ffff, minrtt: 80 },
        ] {
            assert!(Info::of(&info("nv", v)).line_2014().contains(" send 162.9Mbps "));
        }
        assert_eq!(
            Info::of(&t).vegas,
            Some(VegasView { enabled: true, rttcnt: 3, rtt_us: 1448, minrtt_us: 80 }),
            "JSON carries the raw structure"
        );
    }

    #[test]
    fn infinite_ssthresh_and_reno_have_no_field() {
        let mut t = info("cubic", CcInfo::None);
        t.snd_ssthresh = 0x7fff_ffff;
        let l = Info::of(&t).line_2014();
        assert!(l.starts_with(" cubic wscale:7,7 rto:201 "), "{l}");
        assert!(!l.contains("ssthresh") && !l.contains("fallback") && !l.contains("alpha"), "{l}");
    }

    /// The `ss` blocks of the real capture: (the command, its output lines).
    fn real_blocks() -> Vec<(String, Vec<String>)> {
        let text = include_str!("../tests/data/ss-iproute2-6.1.txt");
        let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
        for l in text.lines() {
            if let Some(cmd) = l.strip_prefix("# ss ") {
                blocks.push((cmd.to_string(), Vec::new()));
            } else if l.starts_with('#') {
                continue;
            } else if let Some((_, lines)) = blocks.last_mut() {
                lines.push(l.to_string());
            }
        }
        blocks
    }

    /// A real socket line and its info line as ss's cells: the Process cell holds everything
    /// after the peer (each item ss prints there starts with a blank), then "\n\t" and the info.
    fn real_cells(line: &str, info: &str) -> Cells {
        let t: Vec<&str> = line.split_whitespace().collect();
        let after_peer = &line[line.find(t[4]).unwrap() + t[4].len()..];
        let extra = after_peer.trim();
        let mut process = if extra.is_empty() { String::new() } else { format!(" {extra}") };
        process += "\n";
        process += info.trim_end();
        let (la, lp) = split_endpoint(t[3]);
        let (pa, pp) = split_endpoint(t[4]);
        [
            t[0].into(),
            format!("{:<6}", t[1]),
            format!("{:<6}", t[2]),
            la.into(),
            lp.into(),
            pa.into(),
            pp.into(),
            process,
            String::new(),
        ]
    }

    /// The column layout reproduces real ss 6.1 output byte for byte, padding included.
    #[test]
    fn columns_render_as_real_ss_6_1_does() {
        let blocks = real_blocks();
        assert!(blocks.len() >= 12, "{} blocks", blocks.len());
        for (cmd, lines) in blocks {
            let head: Vec<&str> = lines[0].split_whitespace().collect();
            assert_eq!(head[..3], ["State", "Recv-Q", "Send-Q"], "{cmd}");
            let mut rows = vec![HEADER_6_1.map(String::from)];
            for pair in lines[1..].chunks(2) {
                assert!(pair[1].starts_with("\t "), "{cmd}: {pair:?}");
                rows.push(real_cells(&pair[0], &pair[1]));
            }
            let want: String = lines.iter().map(|l| format!("{l}\n")).collect();
            assert_eq!(render_columns(&rows), want, "ss {cmd}");
        }
    }

    #[test]
    fn ms_timers_print_as_ss_6_1_does() {
        for (ms, s) in [
            (0, ""),
            (4, "004ms"),
            (172, "172ms"),
            (1500, "1.500ms"),
            (9_999, "9.999ms"),
            (10_500, "10sec"),
            (61_000, "1min1sec"),
            (61_250, "1min1sec"),
            (600_000, "10min"),
        ] {
            assert_eq!(print_ms_timer(ms), s, "{ms} ms");
        }
        let t = TimerView { name: "persist", expires_ms: 172, retrans: 0 };
        assert_eq!(t.text(), " timer:(persist,172ms,0)");
    }

    /// The seed's DCTCP socket in iproute2 6.1's order and formats.
    #[test]
    fn dctcp_line_in_the_6_1_order() {
        let mut t = info("dctcp", CcInfo::Dctcp { enabled: true, ce_state: 0, alpha: 15, ab_ecn: 0, ab_tot: 735584 });
        (t.rto_us, t.rtt_us, t.rttvar_us, t.ato_us, t.snd_cwnd) = (203_000, 2349, 26, 0, 2054);
        (t.pacing_rate, t.unacked, t.total_retrans, t.reordering) = (2_531_762_500, 1822, 15, 101);
        (t.ecn_ok, t.snd_wnd, t.busy_time_us, t.rwnd_limited_us) = (true, 3_145_728, 1_500_000, 96_000);
        (t.last_data_sent_ms, t.last_data_recv_ms, t.notsent_bytes) = (0, 1504, 2226);
        let i = Info::of_6_1(&t);
        assert_eq!(
            i.line_6_1(true),
            " ts sack ecn dctcp wscale:7,7 rto:203 rtt:2.349/0.026 mss:1448 pmtu:1500 advmss:1448 cwnd:2054 \
             ssthresh:1102 dctcp:(ce_state:0,alpha:15,ab_ecn:0,ab_tot:735584) send 10129219242bps lastrcv:1504 \
             pacing_rate 20254100000bps busy:1500ms rwnd_limited:96ms(6.4%) unacked:1822 retrans:0/15 \
             reordering:101 rcv_ssthresh:6291456 notsent:2226 snd_wnd:3145728"
        );
        // The option flags come with -o only.
        assert!(i.line_6_1(false).starts_with(" dctcp wscale:7,7 "), "{}", i.line_6_1(false));
        t.cc_info = CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 };
        let l = Info::of_6_1(&t).line_6_1(false);
        assert!(l.contains(" ssthresh:1102 dctcp:fallback_mode send "), "{l}");
    }

    /// tcp_get_info stops early for a listener; inet_sk_diag_fill sends no CC info at or above
    /// TIME-WAIT; the mini sockets have no info at all.
    #[test]
    fn listeners_closing_and_mini_sockets_report_what_linux_reports() {
        let mut t = info("cubic", CcInfo::None);
        t.state = TcpState::Listen;
        assert_eq!(Info::of_6_1(&t).line_6_1(true), " cubic cwnd:10 pacing_rate 325500000bps");
        t.pacing_rate = 0;
        assert_eq!(Info::of_6_1(&t).line_6_1(true), " cubic cwnd:10");
        let mut t = info("bbr", CcInfo::Bbr { bw_lo: 1, bw_hi: 0, min_rtt: 149, pacing_gain: 256, cwnd_gain: 512 });
        assert!(Info::of_6_1(&t).line_6_1(false).contains(" bbr:(bw:8bps,mrtt:0.149,pacing_gain:1,cwnd_gain:2) "));
        t.state = TcpState::CloseWait;
        assert!(!Info::of_6_1(&t).line_6_1(false).contains("bbr:("));
        for s in [TcpState::SynRecv, TcpState::TimeWait] {
            t.state = s;
            assert_eq!(Info::of_6_1(&t).line_6_1(true), "");
        }
    }

    #[test]
    fn printf_g() {
        for (v, s) in [
            (203.0, "203"),
            (2.349, "2.349"),
            (0.026, "0.026"),
            (40.0, "40"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.5, "0.5"),
        ] {
            assert_eq!(fmt_g(v), s);
        }
        assert_eq!(sprint_bw_2014(999.0), "999");
        assert_eq!(sprint_bw_2014(1500.0), "1.5K");
    }

    #[test]
    fn marks_parse_like_percent_i() {
        assert_eq!(markmask("0x10"), Some((0x10, u32::MAX)));
        assert_eq!(markmask("0x10/0xf0"), Some((0x10, 0xf0)));
        assert_eq!(markmask("16/0"), Some((16, 0)));
        assert_eq!(markmask("010"), Some((8, u32::MAX)));
        assert_eq!(markmask("zz"), None);
    }
}
