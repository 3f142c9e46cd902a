//! Running a packetdrill script against one simulated ccsim endpoint. The script plays the
//! remote peer: inbound packets are injected at their times, outbound packets are matched
//! against what the endpoint sends (flags, sequence numbers, ack, window, options, ECN
//! codepoint, timing within the tolerance), system calls drive the socket, and `%{ }%` asserts
//! are evaluated on ccsim's `tcp_info`.

use crate::{
    eval, eval_message, CExpr, Direction, EcnSpec, Event, EventKind, Expr, ExprOp, PacketEvent, Script, Stmt, Syscall,
    TcpOption, TimeSpec,
};
use ccsim_cc::{CaState, CcInfo, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{
    Ecn, EcnMode, Endpoint, QdiscDrop, Segment, TcpConfig, TcpFlags, TcpOptions, RCV_SHUTDOWN, SEND_SHUTDOWN,
};
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Our endpoint's initial sequence number and the script peer's. Both sit close to 2^32 so
/// that every script exercises sequence wrap-around.
const LOCAL_ISS: u32 = 0xFFFF_F000;
const REMOTE_ISN: u32 = 0xFFFF_E000;

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Timing tolerance (packetdrill's `--tolerance_usecs`, default 4 ms).
    pub tolerance: SimTime,
    /// The tolerance that grows with the time since the previous event (packetdrill's
    /// `--tolerance_percent`, default 12.5 %, 4c04617 "set tolerance_percent to 12.5 %"): an
    /// event 40 ms after the one before may be 5 ms off.
    pub tolerance_percent: f64,
    /// `CONFIG_HZ` of the kernel the scripts are checked against (the endpoint's timers count in
    /// its jiffies). Default 250: the conformance reference kernel's.
    pub hz: u32,
    /// DCTCP receivers ACK a CE-state change at once (Linux 4.19+, a0496ef2c2; default) or, as
    /// earlier kernels, with the delayed ACK.
    pub dctcp_ce_ack_now: bool,
    /// Data with CWR is ACKed at once (Linux 5.3+, 9aee40006190; default) or delayed.
    pub cwr_ack_now: bool,
    /// The receive-window rules of the kernel modelled (`RcvWindowRules`).
    pub rcv_window_rules: ccsim_tcp::RcvWindowRules,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            tolerance: SimTime::from_us(4000),
            tolerance_percent: 12.5,
            hz: 250,
            dctcp_ce_ack_now: true,
            cwr_ack_now: true,
            rcv_window_rules: ccsim_tcp::RcvWindowRules::Current,
        }
    }
}

/// Why a script failed: the script line and what differed.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub line: u32,
    pub text: String,
    pub msg: String,
}

/// The result of one script.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptResult {
    pub path: String,
    pub passed: bool,
    pub failure: Option<Failure>,
    /// Settings from shell blocks that ccsim does not model (reported, not applied).
    pub ignored: Vec<String>,
    /// Differences that are not failures (PSH placement on coalesced segments).
    pub notes: Vec<String>,
    pub events: usize,
}

struct Runner {
    cfg: TcpConfig,
    ep: Option<Endpoint>,
    opts: RunOptions,
    out: VecDeque<(SimTime, Segment)>,
    now: SimTime,
    prev: SimTime,
    accept_fd: Option<i64>,
    ignored: Vec<String>,
    notes: Vec<String>,
    /// A blocking call that must have completed by this time: (deadline, line, what).
    blocking: Option<(SimTime, u32, &'static str)>,
    /// Variables assigned by code blocks: packetdrill runs all blocks as one Python
    /// program, so they persist from block to block.
    vars: HashMap<String, i64>,
    /// The socket's file status flags (`fcntl` F_GETFL/F_SETFL): O_RDWR, O_NONBLOCK.
    file_flags: i64,
    /// TCP_MAXSEG set before the endpoint exists (0: unset).
    user_mss: u32,
    /// TCP_USER_TIMEOUT set before the endpoint exists (0: unset).
    user_timeout: u32,
    /// The test device's root qdisc drops every packet (`tc qdisc ... pfifo limit 0`): the
    /// endpoint's transmissions fail with NET_XMIT_DROP.
    qdisc_drop_all: bool,
    /// A blocking accept() or read() still waiting: (event, call, the time it should return).
    pending: Option<(Event, Syscall, SimTime)>,
}

/// The effect of a shell block made of `tc qdisc` commands on the test device: `Some(true)` when
/// its root qdisc ends up a pfifo of limit 0 (it drops every packet), `Some(false)` when it ends
/// up anything else; `None` when the block does something other than `tc qdisc`.
fn qdisc_drops_all(text: &str) -> Option<bool> {
    let mut state = None;
    for cmd in text.split([';', '\n']).map(str::trim).filter(|c| !c.is_empty()) {
        let words: Vec<&str> = cmd.split_whitespace().filter(|w| !w.starts_with("2>")).collect();
        if words.len() < 3 || words[0] != "tc" || words[1] != "qdisc" {
            return None;
        }
        state = Some(match words[2] {
            "del" | "delete" => false,
            "add" | "replace" | "change" => {
                let pfifo = words.contains(&"pfifo");
                let limit0 = words.windows(2).any(|w| w[0] == "limit" && w[1] == "0");
                pfifo && limit0
            }
            _ => return None,
        });
    }
    state
}

const O_RDWR: i64 = 0x2;
const O_NONBLOCK: i64 = 0o4000;

/// The value of a flag expression such as `O_RDWR|O_NONBLOCK`.
fn flag_value(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Ident(n) => match n.as_str() {
            "O_RDONLY" => Some(0),
            "O_WRONLY" => Some(1),
            "O_RDWR" => Some(O_RDWR),
            "O_NONBLOCK" => Some(O_NONBLOCK),
            _ => None,
        },
        Expr::BinOp(ExprOp::BitOr, a, b) => Some(flag_value(a)? | flag_value(b)?),
        _ => None,
    }
}

/// The longest a script may run (simulated): every timer loop then ends, whatever the gaps a
/// script writes (packetdrill's own scripts stay within minutes).
const MAX_SCRIPT_TIME: SimTime = SimTime::from_secs(3600);

fn fail(ev: &Event, msg: impl Into<String>) -> Failure {
    Failure { line: ev.line, text: ev.text.clone(), msg: msg.into() }
}

fn secs(t: f64) -> SimTime {
    SimTime::from_secs_f64(t)
}

fn fmt_t(t: SimTime) -> String {
    format!("{:.6}", t.secs_f64())
}

/// Apply the sysctls of a shell block; `dir` is the script's directory.
fn apply_shell(cfg: &mut TcpConfig, text: &str, dir: &Path, ignored: &mut Vec<String>, depth: u32) {
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("").trim().trim_end_matches('\\').trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words[0].ends_with(".sh") && depth < 4 {
            let path = dir.join(words[0]);
            match std::fs::read_to_string(&path) {
                Ok(t) => apply_shell(cfg, &t, path.parent().unwrap_or(dir), ignored, depth + 1),
                Err(e) => ignored.push(format!("{}: {e}", words[0])),
            }
            continue;
        }
        // The root qdisc of the script's device: fq paces each socket at its earliest departure
        // time (sch_fq honours the skb->tstamp TCP sets), so the endpoint paces; pfifo does not.
        if words.len() >= 7 && words[0] == "tc" && words[1] == "qdisc" && words[3] == "dev" && words[5] == "root" {
            match words[6] {
                "fq" => {
                    cfg.pacing = true;
                    continue;
                }
                "pfifo" | "pfifo_fast" => {
                    cfg.pacing = false;
                    continue;
                }
                _ => {}
            }
        }
        let assigns: Vec<&str> = if words[0] == "sysctl" {
            words[1..].iter().filter(|w| !w.starts_with('-')).copied().collect()
        } else if words[0].ends_with("set_sysctls.py") {
            words[1..].to_vec()
        } else if words.iter().all(|w| w.contains('=') || w.starts_with("/proc/")) {
            words.clone()
        } else {
            ignored.push(line.to_string());
            continue;
        };
        // `sysctl -q a=b c=d`, possibly quoted values with spaces (tcp_rmem="4096 ..."), and
        // shell arithmetic such as $((15*1024*1024)).
        let joined = shell_arith(&assigns.join(" "));
        for (k, v) in split_assignments(&joined) {
            let key = k.trim_start_matches("/proc/sys/").replace('/', ".");
            let name = key.trim_start_matches("net.ipv4.");
            if !apply_sysctl(cfg, name, &v) {
                ignored.push(format!("{key}={v}"));
            }
        }
    }
}

/// Expand `$((a*b+c))` integer arithmetic (products and sums of integers) as the shell would.
fn shell_arith(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("$((") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i + 3..].find("))") else { break };
        let expr = &rest[i + 3..i + 3 + j];
        let value: Option<i64> = expr
            .split('+')
            .map(|term| {
                term.split('*')
                    .map(|f| f.trim().parse::<i64>().ok())
                    .try_fold(1i64, |a, f| f.and_then(|f| a.checked_mul(f)))
            })
            .try_fold(0i64, |a, t| t.and_then(|t| a.checked_add(t)));
        match value {
            Some(v) => out.push_str(&v.to_string()),
            None => out.push_str(&rest[i..i + 3 + j + 2]),
        }
        rest = &rest[i + 3 + j + 2..];
    }
    out.push_str(rest);
    out
}

fn split_assignments(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().to_string();
        let after = &rest[eq + 1..];
        let (val, next) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"').unwrap_or(q.len());
            (q[..end].to_string(), q.get(end + 1..).unwrap_or(""))
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        out.push((key, val));
        rest = next.trim();
    }
    out
}

/// Map a `net.ipv4.*` sysctl to the endpoint configuration; false when ccsim does not model it.
fn apply_sysctl(cfg: &mut TcpConfig, name: &str, v: &str) -> bool {
    let n = || v.trim().parse::<i64>().unwrap_or(-1);
    match name {
        "tcp_ecn" => {
            cfg.ecn = match n() {
                0 => EcnMode::Off,
                1 => EcnMode::On,
                _ => EcnMode::Passive,
            }
        }
        "tcp_sack" => cfg.sack = n() != 0,
        "tcp_notsent_lowat" => cfg.notsent_lowat = n().clamp(0, u32::MAX as i64) as u32,
        "tcp_timestamps" => cfg.timestamps = n() != 0,
        "tcp_window_scaling" => cfg.window_scaling = n() != 0,
        "tcp_slow_start_after_idle" => cfg.slow_start_after_idle = n() != 0,
        "tcp_early_retrans" => cfg.tlp = matches!(n(), 3 | 4),
        "tcp_reordering" if n() > 0 => cfg.reordering = n() as u32,
        "tcp_pacing_ss_ratio" if n() >= 0 => cfg.pacing_ss_ratio = n() as u32,
        "tcp_pacing_ca_ratio" if n() >= 0 => cfg.pacing_ca_ratio = n() as u32,
        "tcp_min_tso_segs" if (1..=255).contains(&n()) => cfg.min_tso_segs = n() as u32,
        "tcp_congestion_control" => match CcKind::from_name(v.trim()) {
            Some(k) => cfg.cc = k,
            None => return false,
        },
        "tcp_rmem" => {
            // min, default (the initial buffer), max (autotuning's cap and the window scale).
            let v: Vec<u32> = v
                .split_whitespace()
                .filter_map(|m| m.parse::<u64>().ok())
                .map(|m| m.min(i32::MAX as u64) as u32)
                .collect();
            match v[..] {
                [lo, def, hi] if lo <= def && def <= hi && lo > 0 => cfg.rmem = [lo, def, hi],
                _ => return false,
            }
        }
        "net.core.rmem_max" if n() > 0 => cfg.rmem_max = n().min(i32::MAX as i64) as u32,
        // Bit 0: RACK loss detection; the other bits (static reordering window, no dupthresh)
        // are not modelled.
        "tcp_recovery" if matches!(n(), 0 | 1) => cfg.rack = n() == 1,
        // Values ccsim already has: accepted when equal to the built-in behaviour.
        "tcp_dsack" | "tcp_syncookies" => return n() >= 0,
        "tcp_fack" => return n() == 0,
        _ => return false,
    }
    true
}

fn flags_of(s: &str) -> u8 {
    let mut f = 0;
    for c in s.chars() {
        f |= match c {
            'S' => TcpFlags::SYN,
            'F' => TcpFlags::FIN,
            'R' => TcpFlags::RST,
            'P' => TcpFlags::PSH,
            '.' => TcpFlags::ACK,
            'E' => TcpFlags::ECE,
            'W' | 'C' => TcpFlags::CWR,
            'U' => TcpFlags::URG,
            _ => 0,
        };
    }
    f
}

fn flags_str(f: u8) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (TcpFlags::SYN, 'S'),
        (TcpFlags::FIN, 'F'),
        (TcpFlags::RST, 'R'),
        (TcpFlags::PSH, 'P'),
        (TcpFlags::ECE, 'E'),
        (TcpFlags::CWR, 'W'),
        (TcpFlags::URG, 'U'),
    ] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    if f & TcpFlags::ACK != 0 {
        s.push('.');
    }
    s
}

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "noecn",
        Ecn::Ect0 => "ect0",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

/// The option list Linux writes for these option values (`tcp_options_write`).
fn linux_layout(o: &TcpOptions, rel_ack: impl Fn(u32) -> u32) -> Vec<TcpOption> {
    let mut v = Vec::new();
    if let Some(m) = o.mss {
        v.push(TcpOption::Mss(m));
    }
    match (o.timestamp, o.sack_permitted) {
        (Some((val, ecr)), true) => {
            v.push(TcpOption::SackOk);
            v.push(TcpOption::Timestamp { val, ecr });
        }
        (Some((val, ecr)), false) => {
            v.extend([TcpOption::Nop, TcpOption::Nop]);
            v.push(TcpOption::Timestamp { val, ecr });
        }
        (None, true) => v.extend([TcpOption::Nop, TcpOption::Nop, TcpOption::SackOk]),
        (None, false) => {}
    }
    if let Some(w) = o.wscale {
        v.extend([TcpOption::Nop, TcpOption::Wscale(w)]);
    }
    if o.sack_len > 0 {
        v.extend([TcpOption::Nop, TcpOption::Nop]);
        v.push(TcpOption::Sack(o.sack_blocks().iter().map(|&(s, e)| (rel_ack(s), rel_ack(e))).collect()));
    }
    v
}

fn fmt_opts(v: &[TcpOption]) -> String {
    let parts: Vec<String> = v
        .iter()
        .map(|o| match o {
            TcpOption::Mss(m) => format!("mss {m}"),
            TcpOption::SackOk => "sackOK".into(),
            TcpOption::Nop => "nop".into(),
            TcpOption::Eol => "eol".into(),
            TcpOption::Wscale(w) => format!("wscale {w}"),
            TcpOption::Timestamp { val, ecr } => format!("TS val {val} ecr {ecr}"),
            TcpOption::Sack(b) => {
                format!("sack {}", b.iter().map(|(s, e)| format!("{s}:{e}")).collect::<Vec<_>>().join(" "))
            }
        })
        .collect();
    format!("<{}>", parts.join(","))
}

/// Options compare equal ignoring timestamp values (the clocks differ).
fn opts_match(exp: &[TcpOption], act: &[TcpOption]) -> bool {
    exp.len() == act.len()
        && exp.iter().zip(act).all(|(e, a)| match (e, a) {
            (TcpOption::Timestamp { .. }, TcpOption::Timestamp { .. }) => true,
            _ => e == a,
        })
}

/// `tcpi_state`: Linux's TCP state numbers (include/net/tcp_states.h).
fn linux_tcp_state(s: ccsim_tcp::TcpState) -> i64 {
    use ccsim_tcp::TcpState;
    match s {
        TcpState::Established => 1,
        TcpState::SynSent => 2,
        TcpState::SynRecv => 3,
        TcpState::FinWait1 => 4,
        TcpState::FinWait2 => 5,
        TcpState::TimeWait => 6,
        TcpState::Closed => 7,
        TcpState::CloseWait => 8,
        TcpState::LastAck => 9,
        TcpState::Listen => 10,
        TcpState::Closing => 11,
    }
}

/// `tcpi_options` as `tcp_get_info` sets it: TCPI_OPT_TIMESTAMPS 1, SACK 2, WSCALE 4, ECN 8,
/// ECN_SEEN 16 (SYN_DATA 32 and USEC_TS 64 need TFO and usec timestamps, which ccsim lacks).
fn tcpi_options(info: &ccsim_tcp::TcpInfo) -> i64 {
    (info.ts_ok as i64)
        | (info.sack_ok as i64) << 1
        | (info.wscale_ok as i64) << 2
        | (info.ecn_ok as i64) << 3
        | (info.ecn_seen as i64) << 4
}

/// Fields of Linux 6.18's `struct tcp_info` ccsim does not keep, and what each would need.
const UNMODELLED_TCPI: &[&str] =
    &["tcpi_max_pacing_rate", "tcpi_rehash", "tcpi_total_rto_recoveries", "tcpi_total_rto_time"];

fn unmodelled_why(name: &str) -> &'static str {
    match name {
        "tcpi_max_pacing_rate" => "SO_MAX_PACING_RATE",
        "tcpi_rehash" => "flow-label rehash (sk_rethink_txhash)",
        _ => "RTO recovery episode counters (tp->total_rto_recoveries, total_rto_time)",
    }
}

/// The `tcpi_*` names a code block's statements use (from their source text).
fn stmt_names(st: &Stmt) -> Vec<String> {
    let text = match st {
        Stmt::Assert(a) => &a.text,
        Stmt::Assign { text, .. } | Stmt::Print { text, .. } => text,
    };
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("tcpi_") {
        let boundary = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric() && rest.as_bytes()[i - 1] != b'_';
        let end = rest[i..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(rest.len(), |e| i + e);
        if boundary {
            out.push(rest[i..end].to_string());
        }
        rest = &rest[end..];
    }
    out
}

fn ca_state_const(name: &str) -> Option<i64> {
    Some(match name {
        "TCP_CA_Open" => CaState::Open as i64,
        "TCP_CA_Disorder" => CaState::Disorder as i64,
        "TCP_CA_CWR" => CaState::Cwr as i64,
        "TCP_CA_Recovery" => CaState::Recovery as i64,
        "TCP_CA_Loss" => CaState::Loss as i64,
        _ => return None,
    })
}

impl Runner {
    fn ep(&mut self, ev: &Event) -> Result<&mut Endpoint, Failure> {
        self.ep.as_mut().ok_or_else(|| fail(ev, "no socket is connected or listening yet"))
    }

    /// Collect what the endpoint emitted at `t`; data segments leave the (virtual) NIC at once,
    /// which returns their TCP Small Queues budget.
    fn collect(&mut self, t: SimTime, mut segs: Vec<Segment>) {
        while !segs.is_empty() {
            let mut more = Vec::new();
            for s in segs {
                if self.qdisc_drop_all {
                    // The qdisc drops it: a data segment the endpoint did not hold back is
                    // returned to it as a failed transmission; anything else is just lost.
                    if let Some(ep) = self.ep.as_mut() {
                        ep.on_local_drop(t, &s, QdiscDrop::Tail { attempted: true });
                    }
                    continue;
                }
                if s.len > 0 {
                    if let Some(ep) = self.ep.as_mut() {
                        ep.tsq_release(t, (s.len + s.header_len()) as u64, &mut more);
                    }
                }
                self.out.push_back((t, s));
            }
            segs = more;
        }
    }

    /// Run the endpoint's timers up to `t`.
    fn advance(&mut self, t: SimTime) {
        while let Some(d) = self.ep.as_ref().and_then(|e| e.next_deadline()) {
            if d > t {
                break;
            }
            let mut v = Vec::new();
            let d = d.max(self.now);
            self.ep.as_mut().unwrap().on_timer(d, &mut v);
            self.now = d;
            self.collect(d, v);
        }
        self.now = self.now.max(t);
    }

    /// packetdrill's `verify_time`: the tolerance for an event at `t` is the larger of
    /// `--tolerance_usecs` and `--tolerance_percent` of the script time since the previous event.
    fn tolerance_at(&self, t: SimTime) -> SimTime {
        let since = t.saturating_sub(self.prev).ns() as f64;
        let dynamic = SimTime((since * self.opts.tolerance_percent / 100.0) as u64);
        self.opts.tolerance.max(dynamic)
    }

    fn resolve(&self, t: &TimeSpec) -> SimTime {
        match t {
            TimeSpec::Absolute(x) => secs(*x),
            TimeSpec::Relative(x) => self.prev.saturating_add_time(secs(*x)),
            TimeSpec::Any | TimeSpec::Untimed => self.prev,
            TimeSpec::Range { start, .. } | TimeSpec::Blocking { start, .. } => self.resolve(start),
        }
    }

    fn check_blocking(&mut self, t: SimTime) -> Result<(), Failure> {
        if let Some((deadline, line, what)) = self.blocking {
            if t >= deadline {
                self.blocking = None;
                let done = self.ep.as_ref().is_some_and(|e| e.is_established());
                if !done {
                    return Err(Failure {
                        line,
                        text: what.into(),
                        msg: format!("blocking {what} did not complete by {}", fmt_t(deadline)),
                    });
                }
            }
        }
        Ok(())
    }

    fn inbound(&mut self, ev: &Event, p: &PacketEvent, t: SimTime) -> Result<(), Failure> {
        self.advance(t);
        let f = flags_of(&p.flags);
        let mut o = TcpOptions::default();
        for opt in p.options.iter().flatten() {
            match opt {
                TcpOption::Mss(m) => o.mss = Some(*m),
                TcpOption::SackOk => o.sack_permitted = true,
                TcpOption::Wscale(w) => o.wscale = Some(*w),
                TcpOption::Timestamp { val, ecr } => o.timestamp = Some((*val, *ecr)),
                TcpOption::Sack(blocks) => {
                    for &(s, e) in blocks.iter().take(4) {
                        o.sack[o.sack_len as usize] = (LOCAL_ISS.wrapping_add(s), LOCAL_ISS.wrapping_add(e));
                        o.sack_len += 1;
                    }
                }
                TcpOption::Nop | TcpOption::Eol => {}
            }
        }
        let seg = Segment {
            seq: REMOTE_ISN.wrapping_add(p.seq_start),
            ack: if f & TcpFlags::ACK != 0 { LOCAL_ISS.wrapping_add(p.ack.unwrap_or(0)) } else { 0 },
            len: p.len,
            flags: TcpFlags(f),
            win: p.win.unwrap_or(0) as u16,
            ecn: match p.ecn {
                Some(EcnSpec::Ect0) => Ecn::Ect0,
                Some(EcnSpec::Ect1) | Some(EcnSpec::Ect01) => Ecn::Ect1,
                Some(EcnSpec::Ce) => Ecn::Ce,
                _ => Ecn::NotEct,
            },
            opts: o,
            tstamp_ns: 0,
            skb_more: false,
        };
        let mut v = Vec::new();
        let now = self.now;
        self.ep(ev)?.on_segment(now, &seg, &mut v);
        self.collect(now, v);
        self.prev = t;
        Ok(())
    }

    fn outbound(&mut self, ev: &Event, p: &PacketEvent) -> Result<(), Failure> {
        let (lo, hi) = match &ev.time {
            TimeSpec::Range { start, end } => (self.resolve(start), self.resolve(end)),
            TimeSpec::Any => (SimTime::ZERO, SimTime::MAX),
            t => {
                let x = self.resolve(t);
                (x, x)
            }
        };
        let tol = self.tolerance_at(lo);
        let latest = hi.saturating_add_time(tol);
        // Wait for the endpoint to send something, running its timers.
        while self.out.is_empty() {
            match self.ep.as_ref().and_then(|e| e.next_deadline()) {
                Some(d) if d <= latest => self.advance(d),
                _ => {
                    return Err(fail(
                        ev,
                        format!(
                            "expected this packet by {}, but nothing was sent (time now {})",
                            fmt_t(latest.min(SimTime::from_secs(1_000_000))),
                            fmt_t(self.now)
                        ),
                    ));
                }
            }
        }
        let (t, first) = *self.out.front().unwrap();
        let rel_seq = |s: u32| s.wrapping_sub(LOCAL_ISS);
        let rel_ack = |s: u32| s.wrapping_sub(REMOTE_ISN);
        // Coalesce back-to-back segments sent at the same instant into one TSO-sized packet.
        let mut group = vec![first];
        self.out.pop_front();
        let mut covered = first.len;
        while covered < p.len {
            match self.out.front() {
                Some(&(t2, s))
                    if t2 == t
                        && s.seq == group.last().unwrap().seq.wrapping_add(group.last().unwrap().len)
                        && s.len > 0
                        && s.ack == first.ack
                        && first.len > 0 =>
                {
                    covered += s.len;
                    group.push(s);
                    self.out.pop_front();
                }
                _ => break,
            }
        }
        let flags = group.iter().fold(0u8, |a, s| a | s.flags.0);
        let last = *group.last().unwrap();
        let act_desc = format!(
            "{} [{}] {} {}:{}({}) ack {} win {} {}",
            fmt_t(t),
            ecn_name(first.ecn),
            flags_str(flags),
            rel_seq(first.seq),
            rel_seq(first.seq).wrapping_add(covered),
            covered,
            rel_ack(last.ack),
            last.win,
            fmt_opts(&linux_layout(&first.opts, rel_ack))
        );
        let mut diffs = Vec::new();
        let exp_flags = flags_of(&p.flags);
        if (exp_flags ^ flags) & !TcpFlags::PSH != 0 {
            diffs.push(format!("flags: expected {} got {}", p.flags, flags_str(flags)));
        } else if (exp_flags ^ flags) & TcpFlags::PSH != 0 {
            self.notes.push(format!("line {}: PSH differs (expected {}, sent {}): ccsim forms no TSO skbs, so PSH placement is not modelled", ev.line, p.flags, flags_str(flags)));
        }
        if rel_seq(first.seq) != p.seq_start || covered != p.len {
            diffs.push(format!(
                "sequence: expected {}:{}({}) got {}:{}({})",
                p.seq_start,
                p.seq_end,
                p.len,
                rel_seq(first.seq),
                rel_seq(first.seq).wrapping_add(covered),
                covered
            ));
        }
        if let Some(a) = p.ack {
            if exp_flags & TcpFlags::ACK != 0 && rel_ack(last.ack) != a {
                diffs.push(format!("ack: expected {a} got {}", rel_ack(last.ack)));
            }
        }
        if let Some(w) = p.win {
            if last.win as u32 != w {
                diffs.push(format!("win: expected {w} got {}", last.win));
            }
        }
        if let Some(e) = p.ecn {
            let ok = match e {
                EcnSpec::NoEcn => first.ecn == Ecn::NotEct,
                EcnSpec::Ect0 => first.ecn == Ecn::Ect0,
                EcnSpec::Ect1 => first.ecn == Ecn::Ect1,
                EcnSpec::Ect01 => matches!(first.ecn, Ecn::Ect0 | Ecn::Ect1),
                EcnSpec::Ce => first.ecn == Ecn::Ce,
            };
            if !ok {
                diffs.push(format!("ECN codepoint: expected {e:?} got {}", ecn_name(first.ecn)));
            }
        }
        if let Some(exp) = &p.options {
            let act = linux_layout(&first.opts, rel_ack);
            if !opts_match(exp, &act) {
                diffs.push(format!("options: expected {} got {}", fmt_opts(exp), fmt_opts(&act)));
            }
        }
        let earliest = lo.saturating_sub(tol);
        if t < earliest || t > latest {
            diffs.push(format!(
                "timing: expected at {}{} (tolerance {} ms), sent at {}",
                fmt_t(lo),
                if hi != lo { format!("~{}", fmt_t(hi)) } else { String::new() },
                tol.ns() as f64 / 1e6,
                fmt_t(t)
            ));
        }
        if !diffs.is_empty() {
            let mut msg = String::new();
            let _ = write!(
                msg,
                "outbound packet differs: {}\n  script: {}\n  actual: {}",
                diffs.join("; "),
                ev.text,
                act_desc
            );
            return Err(fail(ev, msg));
        }
        self.prev = t;
        Ok(())
    }

    /// Whether a flags argument such as `MSG_EOR` or `MSG_DONTWAIT|MSG_EOR` names `flag`.
    fn has_flag(e: &Expr, flag: &str) -> bool {
        match e {
            Expr::Ident(n) => n == flag,
            Expr::BinOp(ExprOp::BitOr, a, b) => Self::has_flag(a, flag) || Self::has_flag(b, flag),
            _ => false,
        }
    }

    /// The total length of a msghdr's `msg_iov(n)=[{..., len}, ...]`.
    fn iov_total(msg: &Expr) -> Option<i64> {
        let Expr::Struct(members) = msg else { return None };
        for m in members {
            if let Expr::BinOp(ExprOp::Assign, lhs, rhs) = m {
                if matches!(&**lhs, Expr::Call(n, _) if n == "msg_iov") {
                    let Expr::List(iovs) = &**rhs else { return None };
                    let mut total = 0i64;
                    for iov in iovs {
                        match iov {
                            Expr::Struct(f) => match f.last() {
                                Some(Expr::Int(len)) => total += *len,
                                _ => return None,
                            },
                            _ => return None,
                        }
                    }
                    return Some(total);
                }
            }
        }
        None
    }

    fn int_arg(args: &[Expr], i: usize) -> Option<i64> {
        match args.get(i) {
            Some(Expr::Int(v)) => Some(*v),
            Some(Expr::List(l)) => match l.first() {
                Some(Expr::Int(v)) => Some(*v),
                _ => None,
            },
            _ => None,
        }
    }

    fn syscall(&mut self, ev: &Event, sc: &Syscall, t: SimTime) -> Result<(), Failure> {
        // `start...end`: both are relative to the previous event (later events are relative to
        // the call's start).
        let blocking_end = match &ev.time {
            TimeSpec::Blocking { end, .. } => Some(self.resolve(end)),
            _ => None,
        };
        self.advance(t);
        self.prev = t;
        if let Some(deadline) = blocking_end {
            match sc.name.as_str() {
                // A blocking accept() or read() that cannot return yet waits (as packetdrill's
                // syscall thread does) while later events run; it returns when it can.
                "accept" | "read" | "recv" | "poll" => {
                    if !self.can_return(sc) {
                        if let Some((pev, _, _)) = &self.pending {
                            return Err(fail(ev, format!("a blocking call (line {}) is still waiting", pev.line)));
                        }
                        self.pending = Some((ev.clone(), sc.clone(), deadline));
                        return Ok(());
                    }
                    if deadline > self.now.saturating_add_time(self.opts.tolerance) {
                        return Err(fail(
                            ev,
                            format!(
                                "{} returned at once, script expects it to block until {}",
                                sc.name,
                                fmt_t(deadline)
                            ),
                        ));
                    }
                }
                _ => self.blocking = Some((deadline + self.opts.tolerance, ev.line, "connect")),
            }
        }
        self.run_call(ev, sc)
    }

    /// Whether a blocking accept() or read() would return now: a connection is established, or
    /// there are bytes to read or the receive side is shut (the read returns 0).
    fn can_return(&self, sc: &Syscall) -> bool {
        let Some(ep) = self.ep.as_ref() else { return false };
        match sc.name.as_str() {
            "accept" => ep.is_established(),
            "poll" => Self::poll_ready(ep, sc) > 0,
            _ => ep.readable() > 0 || ep.sk_shutdown() & RCV_SHUTDOWN != 0,
        }
    }

    /// `poll([{fd=.., events=POLLIN|POLLOUT, ...}], ...)` on the connection: how many entries
    /// have an event (`tcp_poll`: POLLIN with data or EOF, POLLOUT while writable).
    fn poll_ready(ep: &Endpoint, sc: &Syscall) -> i64 {
        let Some(Expr::List(fds)) = sc.args.first() else { return 0 };
        let mut ready = 0;
        for pfd in fds {
            let Expr::Struct(members) = pfd else { continue };
            let events = members.iter().find_map(|m| match m {
                Expr::BinOp(ExprOp::Assign, k, v) if matches!(&**k, Expr::Ident(n) if n == "events") => Some(&**v),
                _ => None,
            });
            let Some(events) = events else { continue };
            let pollin =
                Self::has_flag(events, "POLLIN") && (ep.readable() > 0 || ep.sk_shutdown() & RCV_SHUTDOWN != 0);
            let pollout = Self::has_flag(events, "POLLOUT") && ep.is_established() && ep.writable();
            if pollin || pollout {
                ready += 1;
            }
        }
        ready
    }

    /// Return the waiting blocking call if it can return now, at the time it returns.
    fn complete_pending(&mut self) -> Result<(), Failure> {
        let Some((_, sc, _)) = &self.pending else { return Ok(()) };
        if !self.can_return(sc) {
            return Ok(());
        }
        let (ev, sc, deadline) = self.pending.take().expect("checked");
        let tol = self.opts.tolerance;
        if self.now.saturating_add_time(tol) < deadline || self.now > deadline.saturating_add_time(tol) {
            return Err(fail(
                &ev,
                format!("{} returned at {}, script expects {}", sc.name, fmt_t(self.now), fmt_t(deadline)),
            ));
        }
        self.run_call(&ev, &sc)
    }

    /// A waiting blocking call that should have returned by `t` fails.
    fn check_pending(&self, t: SimTime) -> Result<(), Failure> {
        match &self.pending {
            Some((ev, sc, deadline)) if t > deadline.saturating_add_time(self.opts.tolerance) => Err(fail(
                ev,
                format!(
                    "blocking {} did not return by {}",
                    sc.name,
                    fmt_t(deadline.saturating_add_time(self.opts.tolerance))
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Run a system call at the current time and check its result.
    fn run_call(&mut self, ev: &Event, sc: &Syscall) -> Result<(), Failure> {
        let now = self.now;
        let expected = match &sc.result {
            Expr::Int(v) => Some(*v),
            Expr::Ellipsis => None,
            _ => return Err(fail(ev, "unsupported result expression")),
        };
        let mut errno: Option<&'static str> = None;
        let got: i64 = match sc.name.as_str() {
            "socket" | "bind" => expected.unwrap_or(0),
            "listen" => {
                let iss = LOCAL_ISS;
                let mut ep = Endpoint::listen(self.cfg.clone(), iss);
                ep.set_user_mss(self.user_mss).map_err(|e| fail(ev, format!("TCP_MAXSEG: {e}")))?;
                ep.set_user_timeout(self.user_timeout);
                // packetdrill's tun device orphans each skb it takes.
                ep.set_tx_orphan(true);
                self.ep = Some(ep);
                0
            }
            "connect" => {
                let mut ep = Endpoint::client(self.cfg.clone(), LOCAL_ISS);
                ep.set_user_mss(self.user_mss).map_err(|e| fail(ev, format!("TCP_MAXSEG: {e}")))?;
                ep.set_user_timeout(self.user_timeout);
                // packetdrill's tun device orphans each skb it takes.
                ep.set_tx_orphan(true);
                let mut v = Vec::new();
                ep.connect(now, &mut v);
                self.ep = Some(ep);
                self.collect(now, v);
                expected.unwrap_or(0)
            }
            "accept" => {
                let est = self.ep.as_ref().is_some_and(|e| e.is_established());
                if !est {
                    return Err(fail(ev, "accept: no established connection (ccsim runs accept without blocking)"));
                }
                self.accept_fd = expected;
                expected.unwrap_or(4)
            }
            "write" | "send" | "sendmsg" => {
                // sendmsg(fd, {..., msg_iov(n)=[{..., len}, ...], ...}, flags): the iovecs' total.
                let (n, flags) = if sc.name == "sendmsg" {
                    let n = sc
                        .args
                        .get(1)
                        .and_then(Self::iov_total)
                        .ok_or_else(|| fail(ev, "sendmsg: msg_iov lengths must be integers"))?;
                    (n, sc.args.get(2))
                } else {
                    let n = Self::int_arg(&sc.args, 2)
                        .ok_or_else(|| fail(ev, "write: the byte count must be an integer"))?;
                    (n, if sc.name == "send" { sc.args.get(3) } else { None })
                };
                let null_buf = matches!(sc.args.get(1), Some(Expr::Ident(b)) if b == "NULL");
                let nonblocking = self.file_flags & O_NONBLOCK != 0;
                let ep = self.ep(ev)?;
                if ep.sk_shutdown() & SEND_SHUTDOWN != 0 {
                    // tcp_sendmsg_locked: a socket error or a shut send side → sk_stream_error:
                    // the pending error (reported once), else EPIPE.
                    errno = Some(ep.take_sk_err().unwrap_or("EPIPE"));
                    -1
                } else if null_buf && n > 0 {
                    // Nothing can be copied from the user's buffer: EFAULT.
                    errno = Some("EFAULT");
                    -1
                } else {
                    let mut v = Vec::new();
                    // MSG_EOR ends a record; MSG_MORE corks this send.
                    let eor = flags.is_some_and(|f| Self::has_flag(f, "MSG_EOR"));
                    let more = flags.is_some_and(|f| Self::has_flag(f, "MSG_MORE"));
                    let taken = if eor {
                        ep.write_eor(now, n.max(0) as u64, &mut v);
                        n
                    } else if nonblocking {
                        // A non-blocking write takes what the not-sent limit allows.
                        let taken = ep.write_nonblocking(now, n.max(0) as u64, more, &mut v) as i64;
                        if taken == 0 && n > 0 {
                            errno = Some("EAGAIN");
                            -1
                        } else {
                            taken
                        }
                    } else {
                        ep.send(now, n.max(0) as u64, more, &mut v);
                        n
                    };
                    self.collect(now, v);
                    taken
                }
            }
            "read" | "recv" => {
                let n =
                    Self::int_arg(&sc.args, 2).ok_or_else(|| fail(ev, "read: the byte count must be an integer"))?;
                let mut v = Vec::new();
                let got = self.ep(ev)?.read(now, n.max(0) as u64, &mut v) as i64;
                self.collect(now, v);
                got
            }
            "close" => {
                // Closing the listener leaves an accepted connection alone.
                let fd = Self::int_arg(&sc.args, 0);
                let listener = self.accept_fd.is_some() && fd != self.accept_fd;
                let mut v = Vec::new();
                if let Some(ep) = self.ep.as_mut().filter(|_| !listener) {
                    ep.app_close(now, &mut v);
                }
                self.collect(now, v);
                0
            }
            "shutdown" => {
                // inet_shutdown: SHUT_RD, SHUT_WR, SHUT_RDWR (0, 1, 2) become how + 1.
                let how = match sc.args.get(1) {
                    Some(Expr::Ident(n)) if n == "SHUT_RD" => 0,
                    Some(Expr::Ident(n)) if n == "SHUT_WR" => 1,
                    Some(Expr::Ident(n)) if n == "SHUT_RDWR" => 2,
                    Some(Expr::Int(v @ 0..=2)) => *v as u8,
                    _ => return Err(fail(ev, "shutdown: how must be SHUT_RD, SHUT_WR or SHUT_RDWR")),
                };
                // Shutting the listener leaves an accepted connection alone.
                let fd = Self::int_arg(&sc.args, 0);
                if self.accept_fd.is_none() || fd == self.accept_fd {
                    let mut v = Vec::new();
                    self.ep(ev)?.shutdown(now, how + 1, &mut v);
                    self.collect(now, v);
                }
                0
            }
            "fcntl" => match sc.args.get(1) {
                // Only the file status flags: the socket is always O_RDWR; O_NONBLOCK is kept
                // (the runner never blocks a call anyway).
                Some(Expr::Ident(c)) if c == "F_GETFL" => self.file_flags,
                Some(Expr::Ident(c)) if c == "F_SETFL" => {
                    let flags = sc
                        .args
                        .get(2)
                        .and_then(flag_value)
                        .ok_or_else(|| fail(ev, "fcntl F_SETFL: unsupported flags"))?;
                    // setfl: the access mode cannot change.
                    self.file_flags = O_RDWR | (flags & O_NONBLOCK);
                    0
                }
                _ => return Err(fail(ev, "fcntl: only F_GETFL and F_SETFL are supported by ccsim's runner")),
            },
            "poll" => Self::poll_ready(self.ep(ev)?, sc),
            "setsockopt" => self.setsockopt(ev, sc)?,
            "getsockopt" => expected.unwrap_or(0),
            other => return Err(fail(ev, format!("system call `{other}` is not supported by ccsim's runner"))),
        };
        if let Some(e) = expected {
            if e != got {
                return Err(fail(ev, format!("{} returned {got}, script expects {e}", sc.name)));
            }
        }
        if let (Some(want), Some(got)) = (&sc.errno, errno) {
            if want != got {
                return Err(fail(ev, format!("{} failed with {got}, script expects {want}", sc.name)));
            }
        }
        Ok(())
    }

    fn setsockopt(&mut self, ev: &Event, sc: &Syscall) -> Result<i64, Failure> {
        let name = match sc.args.get(2) {
            Some(Expr::Ident(n)) => n.as_str(),
            _ => return Err(fail(ev, "setsockopt: option name expected")),
        };
        match name {
            "SO_RCVBUF" if self.ep.is_none() => {
                // __sock_set_rcvbuf: at most net.core.rmem_max, doubled, locked.
                let n = Self::int_arg(&sc.args, 3).ok_or_else(|| fail(ev, "SO_RCVBUF needs an integer"))?;
                let n = (n.max(0) as u64).min(self.cfg.rmem_max as u64) as u32;
                self.cfg.rcvbuf = ccsim_tcp::RcvBufSize::Locked(n);
            }
            "SO_REUSEADDR" | "SO_DEBUG" | "SO_SNDBUF" | "SO_RCVBUF" => {
                if matches!(name, "SO_SNDBUF" | "SO_RCVBUF") {
                    self.ignored.push(format!("setsockopt {name} (ccsim buffers are not limited by it)"));
                }
            }
            // The IP header's DF bit and DSCP are not modelled; TCP is unaffected by either (a TOS
            // change only resets the cached route, sk_dst_reset; the ECN bits stay TCP's).
            "IP_MTU_DISCOVER" | "IP_TOS" => {
                self.ignored.push(format!("setsockopt {name} (ccsim models no DF bit or DSCP)"));
            }
            "TCP_MAXSEG" => {
                let mss = Self::int_arg(&sc.args, 3).ok_or_else(|| fail(ev, "TCP_MAXSEG needs an integer"))?;
                self.user_mss = mss.clamp(0, u32::MAX as i64) as u32;
                if let Some(ep) = self.ep.as_mut() {
                    if ep.set_user_mss(self.user_mss).is_err() {
                        return Ok(-1);
                    }
                }
            }
            "TCP_USER_TIMEOUT" => {
                let ms = Self::int_arg(&sc.args, 3).ok_or_else(|| fail(ev, "TCP_USER_TIMEOUT needs an integer"))?;
                if ms < 0 {
                    return Ok(-1); // EINVAL
                }
                self.user_timeout = ms.min(u32::MAX as i64) as u32;
                if let Some(ep) = self.ep.as_mut() {
                    ep.set_user_timeout(self.user_timeout);
                }
            }
            "TCP_NOTSENT_LOWAT" => {
                let v = Self::int_arg(&sc.args, 3).ok_or_else(|| fail(ev, "TCP_NOTSENT_LOWAT needs an integer"))?;
                match self.ep.as_mut() {
                    Some(ep) => ep.set_notsent_lowat(v.clamp(0, u32::MAX as i64) as u32),
                    None => return Err(fail(ev, "TCP_NOTSENT_LOWAT before the connection exists is not supported")),
                }
            }
            "TCP_NODELAY" | "TCP_CORK" => {
                let on = Self::int_arg(&sc.args, 3).unwrap_or(1) != 0;
                let now = self.now;
                match self.ep.as_mut() {
                    Some(ep) => {
                        let mut v = Vec::new();
                        if name == "TCP_NODELAY" {
                            ep.set_nodelay(now, on, &mut v);
                        } else {
                            ep.set_cork(now, on, &mut v);
                        }
                        self.collect(now, v);
                    }
                    None if name == "TCP_NODELAY" => self.cfg.nodelay = on,
                    None => return Err(fail(ev, "TCP_CORK before the connection exists is not supported")),
                }
            }
            "TCP_CONGESTION" => {
                let cc = match sc.args.get(3) {
                    Some(Expr::Str(s)) => s.clone(),
                    _ => return Err(fail(ev, "TCP_CONGESTION needs a string")),
                };
                let kind = CcKind::from_name(&cc)
                    .ok_or_else(|| fail(ev, format!("TCP_CONGESTION: ccsim has no congestion control \"{cc}\"")))?;
                self.cfg.cc = kind;
                if self.ep.as_ref().is_some_and(|e| e.is_established()) {
                    return Err(fail(ev, "TCP_CONGESTION on an established socket is not supported"));
                }
            }
            other => return Err(fail(ev, format!("setsockopt {other} is not supported by ccsim's runner"))),
        }
        Ok(0)
    }

    fn code(&mut self, ev: &Event, stmts: &[Stmt], t: SimTime) -> Result<(), Failure> {
        // Fields of Linux 6.18's struct tcp_info that ccsim does not keep: named in the error.
        if let Some(name) = stmts.iter().flat_map(stmt_names).find(|n| UNMODELLED_TCPI.contains(&n.as_str())) {
            return Err(fail(
                ev,
                format!("{name} is a tcp_info field ccsim does not model (it keeps no {})", unmodelled_why(&name)),
            ));
        }
        self.advance(t);
        self.prev = t;
        let ep = self.ep(ev)?;
        let (info, last_data_recv, last_data_sent) = (ep.tcp_info(), ep.last_data_recv_ms(t), ep.last_data_sent_ms(t));
        let (advmss, probes) = (ep.tcpi_advmss(), ep.probes_out());
        let (busy_time, rwnd_limited, sndbuf_limited) = ep.chrono_stats_us(t);
        // Each block sees tcp_info afresh: a tcpi_* name assigned earlier is overwritten.
        self.vars.retain(|k, _| !k.starts_with("tcpi_"));
        let mut vars = std::mem::take(&mut self.vars);
        let info_value = |name: &str| -> Option<i64> {
            if let Some(v) = ca_state_const(name) {
                return Some(v);
            }
            Some(match name {
                "tcpi_snd_cwnd" => info.snd_cwnd as i64,
                "tcpi_snd_ssthresh" => info.snd_ssthresh as i64,
                "tcpi_ca_state" => info.ca_state as i64,
                "tcpi_rto" => info.rto_us as i64,
                "tcpi_ato" => info.ato_us as i64,
                "tcpi_rtt" => info.rtt_us as i64,
                "tcpi_rttvar" => info.rttvar_us as i64,
                "tcpi_min_rtt" => info.min_rtt_us as i64,
                "tcpi_snd_mss" => info.snd_mss as i64,
                "tcpi_rcv_mss" => info.rcv_mss as i64,
                "tcpi_unacked" => info.unacked as i64,
                "tcpi_sacked" => info.sacked as i64,
                "tcpi_lost" => info.lost as i64,
                "tcpi_retrans" => info.retrans as i64,
                "tcpi_total_retrans" => info.total_retrans as i64,
                "tcpi_reordering" => info.reordering as i64,
                "tcpi_reord_seen" => info.reord_seen as i64,
                "tcpi_last_data_recv" => last_data_recv as i64,
                "tcpi_advmss" => advmss as i64,
                "tcpi_probes" => probes as i64,
                "tcpi_busy_time" => busy_time as i64,
                "tcpi_rwnd_limited" => rwnd_limited as i64,
                "tcpi_sndbuf_limited" => sndbuf_limited as i64,
                "tcpi_last_data_sent" => last_data_sent as i64,
                "tcpi_dsack_dups" => info.dsack_dups as i64,
                "tcpi_bytes_retrans" => info.bytes_retrans as i64,
                "tcpi_bytes_sent" => info.bytes_sent as i64,
                "tcpi_segs_out" => info.segs_out as i64,
                "tcpi_segs_in" => info.segs_in as i64,
                "tcpi_delivered" => info.delivered as i64,
                "tcpi_delivered_ce" => info.delivered_ce as i64,
                "tcpi_pacing_rate" => info.pacing_rate as i64,
                "tcpi_bytes_acked" => info.bytes_acked as i64,
                "tcpi_bytes_received" => info.bytes_received as i64,
                "tcpi_backoff" => info.backoff as i64,
                "tcpi_data_segs_out" => info.data_segs_out as i64,
                "tcpi_data_segs_in" => info.data_segs_in as i64,
                "tcpi_snd_wscale" => info.snd_wscale as i64,
                "tcpi_rcv_wscale" => info.rcv_wscale as i64,
                "tcpi_state" => linux_tcp_state(info.state),
                "tcpi_retransmits" => info.retransmits as i64,
                "tcpi_options" => tcpi_options(&info),
                "tcpi_delivery_rate_app_limited" => info.delivery_rate_app_limited as i64,
                "tcpi_delivery_rate" => info.delivery_rate as i64,
                "tcpi_pmtu" => info.pmtu as i64,
                "tcpi_rcv_ssthresh" => info.rcv_ssthresh as i64,
                "tcpi_rcv_space" => info.rcv_space as i64,
                "tcpi_rcv_rtt" => info.rcv_rtt_us as i64,
                "tcpi_rcv_ooopack" => info.rcv_ooopack as i64,
                "tcpi_last_ack_recv" => info.last_ack_recv_ms as i64,
                "tcpi_notsent_bytes" => info.notsent_bytes as i64,
                "tcpi_snd_wnd" => info.snd_wnd as i64,
                "tcpi_rcv_wnd" => info.rcv_wnd as i64,
                "tcpi_total_rto" => info.rto_count as i64,
                // Always 0 in Linux 6.18's tcp_get_info: fackets since 4.15 (RACK replaced FACK),
                // last_ack_sent ("not remembered"); a client's TFO failure: ccsim has no TFO.
                "tcpi_fackets" | "tcpi_last_ack_sent" | "tcpi_fastopen_client_fail" => 0,
                _ => match (&info.cc_info, name) {
                    (CcInfo::Dctcp { alpha, .. }, "dctcp_alpha") => *alpha as i64,
                    _ => return None,
                },
            })
        };
        let mut result = Ok(());
        for st in stmts {
            let lookup = |name: &str| vars.get(name).copied().or_else(|| info_value(name));
            match st {
                Stmt::Assign { line, name, op, expr, text } => {
                    let err = |msg: String| Failure { line: *line, text: text.clone(), msg };
                    let v = match eval(expr, &lookup) {
                        Ok(v) => v,
                        Err(e) => {
                            result = Err(err(e));
                            break;
                        }
                    };
                    let v = match op {
                        None => Ok(v),
                        Some(op) => {
                            let old = lookup(name).ok_or_else(|| format!("unknown identifier '{name}'"));
                            old.and_then(|old| {
                                eval(&CExpr::Binary(*op, Box::new(CExpr::Int(old)), Box::new(CExpr::Int(v))), &lookup)
                            })
                        }
                    };
                    match v {
                        Ok(v) => {
                            vars.insert(name.clone(), v);
                        }
                        Err(e) => {
                            result = Err(err(e));
                            break;
                        }
                    }
                }
                Stmt::Print { line, args, text } => {
                    let out: Result<Vec<String>, String> = args.iter().map(|a| eval_message(a, &lookup)).collect();
                    match out {
                        Ok(out) => self.notes.push(format!("line {line}: print: {}", out.join(" "))),
                        Err(e) => {
                            result = Err(Failure { line: *line, text: text.clone(), msg: e });
                            break;
                        }
                    }
                }
                Stmt::Assert(a) => {
                    if let Err(f) = assert_holds(a, &lookup, t) {
                        result = Err(f);
                        break;
                    }
                }
            }
        }
        self.vars = vars;
        result
    }
}

/// Checks one `assert` statement of a code block run at `t`.
fn assert_holds(a: &crate::Assert, lookup: &dyn Fn(&str) -> Option<i64>, t: SimTime) -> Result<(), Failure> {
    let v = eval(&a.expr, lookup).map_err(|e| Failure { line: a.line, text: a.text.clone(), msg: e })?;
    if v == 0 {
        let m = match &a.message {
            Some(CExpr::Ident(n)) => format!("{n} = {}", lookup(n).map_or("?".into(), |v| v.to_string())),
            Some(m) => eval_message(m, lookup).unwrap_or_default(),
            None => String::new(),
        };
        return Err(Failure {
            line: a.line,
            text: a.text.clone(),
            msg: format!("assertion failed at {}: {m}", fmt_t(t)),
        });
    }
    Ok(())
}

trait SatAdd {
    fn saturating_add_time(self, o: SimTime) -> SimTime;
}
impl SatAdd for SimTime {
    fn saturating_add_time(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(o.0))
    }
}

/// Run a parsed script; `dir` resolves the shell blocks' relative paths.
pub fn run_script(script: &Script, dir: &Path, opts: &RunOptions) -> (Option<Failure>, Vec<String>, Vec<String>) {
    let mut r = Runner {
        cfg: TcpConfig::default(),
        ep: None,
        opts: opts.clone(),
        out: VecDeque::new(),
        now: SimTime::ZERO,
        prev: SimTime::ZERO,
        accept_fd: None,
        ignored: Vec::new(),
        notes: Vec::new(),
        blocking: None,
        vars: HashMap::new(),
        file_flags: O_RDWR,
        user_mss: 0,
        user_timeout: 0,
        qdisc_drop_all: false,
        pending: None,
    };
    for o in &script.options {
        if o.name == "tolerance_usecs" {
            if let Some(us) = o.value.as_deref().and_then(|v| v.parse::<u64>().ok()) {
                r.opts.tolerance = SimTime::from_us(us);
            }
        } else if o.name == "tolerance_percent" {
            if let Some(p) =
                o.value.as_deref().and_then(|v| v.parse::<f64>().ok()).filter(|p| (0.0..=100.0).contains(p))
            {
                r.opts.tolerance_percent = p;
            }
        } else {
            r.ignored.push(format!("--{}", o.name));
        }
    }
    // The script's application reads only when it calls read().
    r.cfg.auto_read = false;
    r.cfg.hz = r.opts.hz;
    r.cfg.cc_params.dctcp.ce_ack_now = r.opts.dctcp_ce_ack_now;
    r.cfg.cwr_ack_now = r.opts.cwr_ack_now;
    r.cfg.rcv_window_rules = r.opts.rcv_window_rules;
    // Scripts run in packetdrill's standard environment (common/defaults.sh: tcp_rmem
    // "4096 540000 15728640", hence window scale 8) with receive-buffer autotuning; their shell
    // blocks change it further.
    r.cfg.rcvbuf = ccsim_tcp::RcvBufSize::Auto;
    r.cfg.rmem = [4096, 540_000, 15 * 1024 * 1024];
    for ev in &script.events {
        let res = (|| -> Result<(), Failure> {
            let t = r.resolve(&ev.time);
            if t != SimTime::MAX && t > MAX_SCRIPT_TIME {
                return Err(fail(
                    ev,
                    format!(
                        "the script reaches {} s; the runner allows at most {} s of script time",
                        t.secs_f64(),
                        MAX_SCRIPT_TIME.secs_f64()
                    ),
                ));
            }
            r.check_blocking(t.max(r.now))?;
            if t != SimTime::MAX {
                r.check_pending(t.max(r.now))?;
            }
            match &ev.kind {
                EventKind::Shell(text) => {
                    // Only settings before the connection exists take effect.
                    if r.ep.is_none() {
                        apply_shell(&mut r.cfg, text, dir, &mut r.ignored, 0);
                    } else if let Some(drop_all) = qdisc_drops_all(text) {
                        r.qdisc_drop_all = drop_all;
                        if let Some(ep) = r.ep.as_mut() {
                            ep.set_qdisc_room(if drop_all { Some(0) } else { None });
                        }
                    } else if !matches!(ev.time, TimeSpec::Untimed) {
                        r.ignored.push(format!("line {}: shell command after the socket exists", ev.line));
                    }
                    Ok(())
                }
                EventKind::Packet(p) if p.dir == Direction::Inbound => r.inbound(ev, p, t),
                EventKind::Packet(p) => r.outbound(ev, p),
                EventKind::Syscall(sc) => r.syscall(ev, sc, t),
                EventKind::Code(c) => r.code(ev, &c.stmts, t),
            }?;
            r.complete_pending()
        })();
        if let Err(f) = res {
            return (Some(f), r.ignored, r.notes);
        }
    }
    if let Some((ev, sc, _)) = &r.pending {
        return (Some(fail(ev, format!("blocking {} never returned", sc.name))), r.ignored, r.notes);
    }
    (None, r.ignored, r.notes)
}

/// Parse and run a script file.
pub fn run_file(path: &Path, opts: &RunOptions) -> ScriptResult {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return ScriptResult {
                path: shown,
                passed: false,
                failure: Some(Failure { line: 0, text: String::new(), msg: format!("cannot read: {e}") }),
                ignored: vec![],
                notes: vec![],
                events: 0,
            }
        }
    };
    let script = match crate::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            return ScriptResult {
                path: shown,
                passed: false,
                failure: Some(Failure {
                    line: e.line,
                    text: text.lines().nth(e.line.saturating_sub(1) as usize).unwrap_or("").trim().to_string(),
                    msg: format!("parse error at line {}, column {}: {}", e.line, e.col, e.msg),
                }),
                ignored: vec![],
                notes: vec![],
                events: 0,
            }
        }
    };
    let dir: PathBuf = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let (failure, mut ignored, notes) = run_script(&script, &dir, opts);
    ignored.sort();
    ignored.dedup();
    ScriptResult { path: shown, passed: failure.is_none(), failure, ignored, notes, events: script.events.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_recovery_sets_rack_and_refuses_the_unmodelled_bits() {
        let mut cfg = TcpConfig::default();
        assert!(apply_sysctl(&mut cfg, "tcp_recovery", "0"));
        assert!(!cfg.rack);
        assert!(apply_sysctl(&mut cfg, "tcp_recovery", "1"));
        assert!(cfg.rack);
        // RACK_NO_DUPTHRESH (4) and RACK_STATIC_REO_WND (2) are not modelled.
        assert!(!apply_sysctl(&mut cfg, "tcp_recovery", "5"));
        assert!(!apply_sysctl(&mut cfg, "tcp_recovery", "3"));
    }
}
