//! Endpoint-level tests named after the Linux commits they pin (seed:
//! `/work/shared/seeds/linux-dctcp-commits.txt`, scripts in
//! `/work/shared/conformance/packetdrill/seed/`).
//!
//! Each test drives one [`Endpoint`] with hand-made segments: the test plays the remote TCP, as a
//! packetdrill script does, and asserts on the exact segments the endpoint emits and when. Script
//! lines are kept as comments next to the calls that play them. Sequence and ACK numbers in the
//! calls are relative to the two initial sequence numbers, like packetdrill's.
//!
//! Where a seed script was written for a 2018 kernel and a later commit the endpoint also mirrors
//! changes what Linux sends, the test follows current Linux and the comment says which commit
//! makes the difference.

use ccsim_cc::{CaState, CcInfo, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{Ecn, EcnMode, Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions};
use std::collections::VecDeque;

/// The endpoint's initial sequence number: its sequence space wraps 2^32 after 30000 bytes.
const EP_ISN: u32 = u32::MAX - 29_999;
/// The peer's (the script's) initial sequence number: the peer's data wraps 2^32 after 2500
/// bytes, inside the seed scripts.
const PEER_ISN: u32 = u32::MAX - 2_499;

fn secs(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

/// Packetdrill flag letters: S F R P E W and `.` for ACK.
fn flags(s: &str) -> TcpFlags {
    let mut f = 0;
    for c in s.chars() {
        f |= match c {
            'S' => TcpFlags::SYN,
            'F' => TcpFlags::FIN,
            'R' => TcpFlags::RST,
            'P' => TcpFlags::PSH,
            'E' => TcpFlags::ECE,
            'W' => TcpFlags::CWR,
            '.' => TcpFlags::ACK,
            _ => panic!("unknown flag letter {c:?} in {s:?}"),
        };
    }
    TcpFlags(f)
}

fn flags_str(f: TcpFlags) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (TcpFlags::SYN, 'S'),
        (TcpFlags::FIN, 'F'),
        (TcpFlags::RST, 'R'),
        (TcpFlags::PSH, 'P'),
        (TcpFlags::ECE, 'E'),
        (TcpFlags::CWR, 'W'),
        (TcpFlags::ACK, '.'),
    ] {
        if f.has(bit) {
            s.push(c);
        }
    }
    s
}

fn ecn_str(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "[noect]",
        Ecn::Ect0 => "[ect0]",
        Ecn::Ect1 => "[ect1]",
        Ecn::Ce => "[ce]",
    }
}

/// A segment in packetdrill notation, `seq_base` / `ack_base` being the sender's / receiver's ISN.
fn fmt_seg(s: &Segment, seq_base: u32, ack_base: u32) -> String {
    let seq = s.seq.wrapping_sub(seq_base);
    let mut out = format!("{} {} {}:{}({})", ecn_str(s.ecn), flags_str(s.flags), seq, seq.wrapping_add(s.len), s.len);
    if s.flags.has(TcpFlags::ACK) {
        out += &format!(" ack {}", s.ack.wrapping_sub(ack_base));
    }
    out += &format!(" win {}", s.win);
    let o = &s.opts;
    let mut opts = Vec::new();
    if let Some(m) = o.mss {
        opts.push(format!("mss {m}"));
    }
    if o.sack_permitted {
        opts.push("sackOK".to_string());
    }
    if let Some((v, e)) = o.timestamp {
        opts.push(format!("TS val {v} ecr {e}"));
    }
    if let Some(w) = o.wscale {
        opts.push(format!("wscale {w}"));
    }
    if o.sack_len > 0 {
        let blocks: Vec<String> = o
            .sack_blocks()
            .iter()
            .map(|&(a, b)| format!("{}:{}", a.wrapping_sub(ack_base), b.wrapping_sub(ack_base)))
            .collect();
        opts.push(format!("sack {}", blocks.join(" ")));
    }
    if !opts.is_empty() {
        out += &format!(" <{}>", opts.join(","));
    }
    out
}

/// The peer's SYN / SYN-ACK options in the seed scripts: `<mss 1000,sackOK,nop,nop,nop,wscale 7>`.
fn peer_syn_opts() -> TcpOptions {
    TcpOptions { mss: Some(1000), sack_permitted: true, wscale: Some(7), ..TcpOptions::default() }
}

/// The remote TCP, played by the test. Times are script times in seconds, like packetdrill's.
struct Peer {
    ep: Endpoint,
    /// Script time: the time of the last event (and the endpoint's clock).
    now: SimTime,
    /// ISNs of the peer and of the endpoint; the script uses numbers relative to them.
    isn: u32,
    ep_isn: u32,
    /// Window field of the peer's segments.
    win: u16,
    /// Segments the endpoint sent that the script has not matched yet, with their send times.
    sent: VecDeque<(SimTime, Segment)>,
    /// Everything that crossed the wire, for failure messages.
    log: Vec<String>,
}

impl Peer {
    fn new(ep: Endpoint) -> Peer {
        Peer { ep, now: SimTime::ZERO, isn: PEER_ISN, ep_isn: EP_ISN, win: 257, sent: VecDeque::new(), log: Vec::new() }
    }

    /// `socket()` + `bind()` + `listen()` (+ the `accept()` that returns the child later).
    fn server(cfg: TcpConfig) -> Peer {
        // As under packetdrill, the application reads only when the script says so.
        Peer::new(Endpoint::listen(TcpConfig { auto_read: false, ..cfg }, EP_ISN))
    }

    /// `socket()` + `connect()` at time 0: the SYN is waiting to be matched.
    fn client(cfg: TcpConfig) -> Peer {
        let mut p = Peer::new(Endpoint::client(TcpConfig { auto_read: false, ..cfg }, EP_ISN));
        let mut out = Vec::new();
        p.ep.connect(SimTime::ZERO, &mut out);
        p.record(SimTime::ZERO, out);
        p
    }

    fn transcript(&self) -> String {
        self.log.join("\n")
    }

    #[track_caller]
    fn fail(&self, msg: String) -> ! {
        panic!("{msg}\n--- transcript ---\n{}\n------------------", self.transcript());
    }

    /// Record what the endpoint sent at `t`. The test is also the host's NIC, an infinitely fast
    /// one like packetdrill's tun device: every data segment completes transmission at once, and
    /// the TX completion (TCP Small Queues, `tcp_wfree` -> `tcp_tsq_handler`) may let the endpoint
    /// send more, which is recorded too.
    fn record(&mut self, t: SimTime, out: Vec<Segment>) {
        let mut queue: VecDeque<Segment> = out.into();
        while let Some(s) = queue.pop_front() {
            self.log.push(format!("{:9.6} > {}", t.secs_f64(), fmt_seg(&s, self.ep_isn, self.isn)));
            self.sent.push_back((t, s));
            if s.len > 0 {
                let mut more = Vec::new();
                self.ep.tsq_release(t, (s.len + s.header_len()) as u64, &mut more);
                queue.extend(more);
            }
        }
    }

    /// Fire the endpoint's timers due at or before `limit`, each at its own deadline; with
    /// `stop_at_output`, stop after the first timer that sent something.
    fn run_timers(&mut self, limit: SimTime, stop_at_output: bool) {
        for _ in 0..100_000 {
            if stop_at_output && !self.sent.is_empty() {
                return;
            }
            let Some(d) = self.ep.next_deadline() else { return };
            if d > limit {
                return;
            }
            let d = d.max(self.now);
            self.now = d;
            let mut out = Vec::new();
            self.ep.on_timer(d, &mut out);
            self.record(d, out);
        }
        self.fail(format!("timer deadline never moves past {:?}", self.ep.next_deadline()));
    }

    fn advance_to(&mut self, t: SimTime) {
        assert!(t >= self.now, "script time goes backwards: {t} < {}", self.now);
        self.run_timers(t, false);
        self.now = t;
    }

    /// Absolute script time (`0.200 ...`).
    fn at(&mut self, s: f64) -> &mut Self {
        self.advance_to(secs(s));
        self
    }

    /// Relative script time (`+0.005 ...`).
    fn plus(&mut self, s: f64) -> &mut Self {
        let t = self.now + secs(s);
        self.advance_to(t);
        self
    }

    /// Packetdrill fails on an outbound packet the script did not expect; so do we, before every
    /// inbound segment.
    #[track_caller]
    fn assert_nothing_sent(&self, when: &str) {
        if let Some((t, s)) = self.sent.front() {
            self.fail(format!(
                "unexpected outbound segment {when}: {:.6} > {}",
                t.secs_f64(),
                fmt_seg(s, self.ep_isn, self.isn)
            ));
        }
    }

    /// `< [ecn] flags seq:seq+len(len) ack A win W <opts>`.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    fn inject_full(&mut self, ecn: Ecn, f: &str, seq: u32, len: u32, ack: u32, win: u16, opts: TcpOptions) {
        self.assert_nothing_sent("before an inbound segment");
        let fl = flags(f);
        let seg = Segment {
            seq: self.isn.wrapping_add(seq),
            ack: if fl.has(TcpFlags::ACK) { self.ep_isn.wrapping_add(ack) } else { 0 },
            len,
            flags: fl,
            win,
            ecn,
            opts,
            tstamp_ns: 0,
            skb_more: false,
        };
        self.log.push(format!("{:9.6} < {}", self.now.secs_f64(), fmt_seg(&seg, self.isn, self.ep_isn)));
        let mut out = Vec::new();
        self.ep.on_segment(self.now, &seg, &mut out);
        self.record(self.now, out);
    }

    /// `< [ecn] flags seq:seq+len(len) ack A win <self.win>`.
    #[track_caller]
    fn inject(&mut self, ecn: Ecn, f: &str, seq: u32, len: u32, ack: u32) {
        let win = self.win;
        self.inject_full(ecn, f, seq, len, ack, win, TcpOptions::default());
    }

    /// A pure ACK from the peer (no data of its own after the SYN), with or without ECE.
    #[track_caller]
    fn ack(&mut self, ack: u32, ece: bool) {
        self.inject(Ecn::NotEct, if ece { "E." } else { "." }, 1, 0, ack);
    }

    /// An endless bulk source (`write_forever`).
    fn write_forever(&mut self) {
        let now = self.now;
        self.log.push(format!("{:9.6}   write_forever()", now.secs_f64()));
        let mut out = Vec::new();
        self.ep.write_forever(now, &mut out);
        self.record(now, out);
    }

    /// `write(fd, ..., bytes)`.
    fn write(&mut self, bytes: u64) {
        let now = self.now;
        self.log.push(format!("{:9.6}   write({bytes})", now.secs_f64()));
        let mut out = Vec::new();
        self.ep.write(now, bytes, &mut out);
        self.record(now, out);
    }

    /// One packetdrill-style expectation: time, ECN, flags, relative seq, length, relative ack.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    fn check(&self, t: SimTime, s: &Segment, ecn: Ecn, f: &str, seq: u32, len: u32, ack: u32) {
        let want_flags = flags(f);
        let ok = s.ecn == ecn
            && s.flags == want_flags
            && s.seq.wrapping_sub(self.ep_isn) == seq
            && s.len == len
            && (!want_flags.has(TcpFlags::ACK) || s.ack.wrapping_sub(self.isn) == ack);
        if !ok {
            let want = if want_flags.has(TcpFlags::ACK) {
                format!("{} {f} {seq}:{}({len}) ack {ack}", ecn_str(ecn), seq.wrapping_add(len))
            } else {
                format!("{} {f} {seq}:{}({len})", ecn_str(ecn), seq.wrapping_add(len))
            };
            self.fail(format!(
                "outbound segment mismatch at {:.6}\n  expected: {want}\n  actual:   {}",
                t.secs_f64(),
                fmt_seg(s, self.ep_isn, self.isn)
            ));
        }
    }

    /// `> [ecn] flags seq:seq+len(len) ack A`, sent at the current script time.
    #[track_caller]
    fn expect(&mut self, ecn: Ecn, f: &str, seq: u32, len: u32, ack: u32) -> Segment {
        let Some((t, s)) = self.sent.pop_front() else {
            self.fail(format!(
                "expected at {:.6}: {} {f} {seq}:{}({len}) ack {ack}, but nothing was sent",
                self.now.secs_f64(),
                ecn_str(ecn),
                seq.wrapping_add(len)
            ))
        };
        if t != self.now {
            self.fail(format!(
                "segment {} sent at {:.6}, expected at {:.6}",
                fmt_seg(&s, self.ep_isn, self.isn),
                t.secs_f64(),
                self.now.secs_f64()
            ));
        }
        self.check(t, &s, ecn, f, seq, len, ack);
        s
    }

    /// `+lo~+hi > [ecn] flags ...`: the next segment is sent between `lo` and `hi` seconds after
    /// the current script time, which then moves to its send time. Returns the segment and its
    /// delay.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    fn expect_in(&mut self, lo: f64, hi: f64, ecn: Ecn, f: &str, seq: u32, len: u32, ack: u32) -> (Segment, SimTime) {
        let start = self.now;
        self.run_timers(start + secs(hi), true);
        let Some(&(t, s)) = self.sent.front() else {
            self.fail(format!(
                "expected between +{lo} and +{hi} after {:.6}: {} {f} {seq}:{}({len}) ack {ack}, but nothing was sent",
                start.secs_f64(),
                ecn_str(ecn),
                seq.wrapping_add(len)
            ))
        };
        self.sent.pop_front();
        if t < start + secs(lo) || t > start + secs(hi) {
            self.fail(format!(
                "segment {} sent at {:.6}, expected between +{lo} and +{hi} after {:.6}",
                fmt_seg(&s, self.ep_isn, self.isn),
                t.secs_f64(),
                start.secs_f64()
            ));
        }
        self.check(t, &s, ecn, f, seq, len, ack);
        self.now = t;
        (s, t - start)
    }

    /// Nothing is sent during the next `dur` seconds (timers included).
    #[track_caller]
    fn quiet_for(&mut self, dur: f64) {
        self.assert_nothing_sent("now");
        self.plus(dur);
        self.assert_nothing_sent(&format!("within {dur} s"));
    }

    /// Take every segment sent so far (for tests that count rather than match one by one).
    fn drain(&mut self) -> Vec<Segment> {
        self.sent.drain(..).map(|(_, s)| s).collect()
    }

    fn rel_end(&self, s: &Segment) -> u32 {
        s.seq.wrapping_add(s.len).wrapping_sub(self.ep_isn)
    }
}

// ---------------------------------------------------------------------------------------------
// The two seed scripts (server side, DCTCP, net.ipv4.tcp_ecn=1, no timestamps).
// ---------------------------------------------------------------------------------------------

/// DCTCP with ECN, under the receive-window rules before Linux 6.10: there the first window is
/// at most 64 KB and grows, so two unread segments are ACKed at once as the seed scripts expect.
/// Since 6.10 the first window is the whole buffer's, and the first full segment's measured
/// payload share shrinks the window below it, so that ACK waits for the delayed-ACK timer
/// (crates/pdrill/tests/rwnd/delayed-ack-unread.pkt, recorded from Linux 6.18).
fn dctcp_cfg() -> TcpConfig {
    TcpConfig {
        cc: CcKind::Dctcp,
        ecn: EcnMode::On,
        rcv_window_rules: ccsim_tcp::RcvWindowRules::Pre6_10,
        ..TcpConfig::default()
    }
}

/// ```text
/// 0.000 socket / setsockopt(TCP_CONGESTION, "dctcp") / bind / listen
/// 0.100 < [ect0] SEW 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
/// 0.100 > SE. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
/// 0.110 < [ect0] . 1:1(0) ack 1 win 257
/// 0.200 accept(3, ..., ...) = 4
/// ```
fn dctcp_server_handshake() -> Peer {
    let mut p = Peer::server(dctcp_cfg());
    p.at(0.100).inject_full(Ecn::Ect0, "SEW", 0, 0, 0, 32792, peer_syn_opts());
    // DCTCP (TCP_CONG_NEEDS_ECN) accepts the ECT SYN and sends its SYN-ACK with ECT.
    let synack = p.expect(Ecn::Ect0, "SE.", 0, 0, 1);
    assert_eq!(synack.opts.mss, Some(1460));
    assert!(synack.opts.sack_permitted);
    assert!(synack.opts.wscale.is_some());
    assert_eq!(synack.opts.timestamp, None, "the peer offered no timestamps");
    p.at(0.110).inject(Ecn::Ect0, ".", 1, 0, 1);
    assert!(p.ep.is_established());
    let info = p.ep.tcp_info();
    assert!(info.ecn_ok);
    assert_eq!(info.cc, "dctcp");
    assert_eq!(info.snd_mss, 1000);
    p
}

/// The 0.200 lines both scripts share, up to the delayed ACK for 2001 being armed:
/// ```text
/// 0.200 < [ect0] . 1:1001(1000) ack 1 win 257
/// 0.200 > [ect01] . 1:1(0) ack 1001
/// 0.200 write(4, ..., 1) = 1
/// 0.200 > [ect01] P. 1:2(1) ack 1001
/// 0.200 < [ect0] . 1001:2001(1000) ack 2 win 257
/// ```
fn seed_script_prefix(p: &mut Peer) {
    p.at(0.200).inject(Ecn::Ect0, ".", 1, 1000, 1);
    // The first data segment is ACKed at once (quick-ACK mode at the start).
    p.expect(Ecn::Ect0, ".", 1, 0, 1001);
    p.write(1);
    // A reply within ato of the last data: the connection turns interactive (pingpong).
    p.expect(Ecn::Ect0, "P.", 1, 1, 1001);
    p.inject(Ecn::Ect0, ".", 1001, 1000, 2);
    // Interactive and one segment since the last ACK: the ACK for 2001 is delayed by ato = 40 ms.
    assert_eq!(p.ep.next_deadline(), Some(secs(0.240)), "delayed ACK for 2001 armed for 0.240");
    assert_eq!(p.ep.tcp_info().ato_us, 40_000);
}

/// a0496ef2c2 "tcp: do not delay ACK in DCTCP upon CE status change", with the seed script
/// dctcp-ce-change-immediate-ack.pkt.
///
/// With an ACK delayed for a non-CE segment, a CE segment makes DCTCP send first the held-back ACK
/// for the previous sequence without ECE, then at once an ACK with ECE for the new sequence: both
/// at the instant the CE segment arrives, not 40 ms later.
#[test]
fn a0496ef2c2_ce_change_acks_immediately() {
    let mut p = dctcp_server_handshake();
    seed_script_prefix(&mut p);

    // +0.005 < [ce] . 2001:3001(1000) ack 2 win 257
    p.plus(0.005).inject(Ecn::Ce, ".", 2001, 1000, 2);
    // +0.000 > [ect01] . 2:2(0) ack 2001
    p.expect(Ecn::Ect0, ".", 2, 0, 2001);
    // // Previously the ACK below would be delayed by 40ms
    // +0.000 > [ect01] E. 2:2(0) ack 3001
    p.expect(Ecn::Ect0, "E.", 2, 0, 3001);
    assert!(p.sent.is_empty(), "exactly two ACKs");
    // Both ACKs went out at 0.205 and no delayed ACK is left behind to fire at 0.240/0.245.
    assert_eq!(p.ep.next_deadline(), None, "no timer left: nothing in flight, no delayed ACK");
    p.quiet_for(0.100);
    assert!(matches!(p.ep.tcp_info().cc_info, CcInfo::Dctcp { ce_state: 1, .. }));

    // The script ends with `+0.500 < F. 9501:9501(0) ack 4 win 257`, a teardown line copied from
    // dctcp-delayed-ack-schedule.pkt: here it ACKs data never sent (snd_nxt is 2), so Linux
    // discards it (tcp_ack: "ack includes data we haven't sent yet"). It tests nothing about
    // a0496ef2c2 and is not played.
}

/// d2ccd7bc8a "tcp: avoid resetting ACK timer in DCTCP".
///
/// The immediate ACK on a CE change is a one-time ICSK_ACK_NOW, not tcp_enter_quickack_mode():
/// it must neither leave pingpong (interactive) mode nor reset the delayed-ACK timeout `ato`. So
/// after a CE change, segments that do not change the CE state are still delayed-ACKed, and
/// `ato` keeps its estimate. Both directions (0->1 and 1->0) are checked.
#[test]
fn d2ccd7bc8a_ce_change_keeps_pingpong_and_ack_timer() {
    let mut p = dctcp_server_handshake();
    seed_script_prefix(&mut p); // pingpong; ACK for 2001 delayed until 0.240; ato 40 ms

    // Grow ato above TCP_ATO_MIN with the inter-arrival EWMA of tcp_event_data_recv
    // (m < ato: ato = ato/2 + m), so that a reset to TCP_ATO_MIN would show.
    // 0.230: m = 30 ms -> ato = 20 + 30 = 50 ms; two segments unACKed -> ACK at once.
    p.at(0.230).inject(Ecn::Ect0, ".", 2001, 1000, 2);
    p.expect(Ecn::Ect0, ".", 2, 0, 3001);
    assert_eq!(p.ep.tcp_info().ato_us, 50_000);
    // 0.275: m = 45 ms -> ato = 25 + 45 = 70 ms; one segment -> delayed (bounded by the RTT
    // estimate to 40 ms: tcp_send_delayed_ack uses max(srtt, TCP_DELACK_MIN)).
    p.at(0.275).inject(Ecn::Ect0, ".", 3001, 1000, 2);
    assert_eq!(p.ep.tcp_info().ato_us, 70_000);
    assert_eq!(p.ep.next_deadline(), Some(secs(0.315)));

    // 0.300: CE change 0 -> 1 with the delayed ACK pending. m = 25 ms -> ato = 35 + 25 = 60 ms.
    p.at(0.300).inject(Ecn::Ce, ".", 4001, 1000, 2);
    p.expect(Ecn::Ect0, ".", 2, 0, 4001); // the held-back ACK, old CE state
    p.expect(Ecn::Ect0, "E.", 2, 0, 5001); // the CE change, at once
    assert_eq!(
        p.ep.tcp_info().ato_us,
        60_000,
        "ato keeps its estimate; tcp_enter_quickack_mode would have reset it to 40 ms"
    );

    // 0.310: CE again, no change. Still interactive, so the ACK is delayed (40 ms), with ECE.
    // Had the CE change entered quick-ACK mode (pingpong off, quick > 0), this ACK would be
    // immediate.
    p.at(0.310).inject(Ecn::Ce, ".", 5001, 1000, 2);
    p.assert_nothing_sent("for a CE segment without a CE change (pingpong mode must be kept)");
    p.expect_in(0.040, 0.040, Ecn::Ect0, "E.", 2, 0, 6001);

    // The delayed-ACK timer fired in pingpong mode, which leaves pingpong mode (that is
    // tcp_delack_timer_handler, not the CE change). Become interactive again with a reply...
    p.at(0.400).inject(Ecn::Ce, ".", 6001, 1000, 2);
    p.expect(Ecn::Ect0, "E.", 2, 0, 7001); // quick-ACK mode (pingpong off, quick ACKs left)
    p.write(1);
    p.expect(Ecn::Ect0, "PE.", 2, 1, 7001); // reply within ato: pingpong again
                                            // ...then the change 1 -> 0 (nothing delayed at this point: only the immediate ACK).
    p.at(0.405).inject(Ecn::Ect0, ".", 7001, 1000, 3);
    p.expect(Ecn::Ect0, ".", 3, 0, 8001);
    // No change: delayed again, without ECE.
    p.at(0.410).inject(Ecn::Ect0, ".", 8001, 1000, 3);
    p.assert_nothing_sent("for a non-CE segment without a CE change (pingpong mode must be kept)");
    p.expect_in(0.040, 0.040, Ecn::Ect0, ".", 3, 0, 9001);
    p.quiet_for(0.100);
}

/// 27cde44a25 "tcp: do not cancel delay-AcK on DCTCP special ACK".
///
/// The special ACK DCTCP sends for prior_rcv_nxt must not go through tcp_event_ack_sent's
/// bookkeeping (clear the delayed-ACK state, count down quick ACKs): otherwise ICSK_ACK_SCHED is
/// gone and tcp_ack_snd_check never acknowledges the latest sequence. Checked for 0 -> 1 and 1 -> 0.
#[test]
fn commit_27cde44a25_special_ack_keeps_delayed_ack() {
    let mut p = dctcp_server_handshake();
    seed_script_prefix(&mut p); // ACK for 2001 delayed until 0.240

    // 0 -> 1 with the ACK for 2001 pending.
    p.plus(0.005).inject(Ecn::Ce, ".", 2001, 1000, 2);
    p.expect(Ecn::Ect0, ".", 2, 0, 2001); // special ACK: prior_rcv_nxt, no ECE
    p.expect(Ecn::Ect0, "E.", 2, 0, 3001); // the latest sequence is still acknowledged
    assert!(p.sent.is_empty());

    // Pending ACK with ECE: a CE segment without change is delayed (interactive connection).
    p.at(0.210).inject(Ecn::Ce, ".", 3001, 1000, 2);
    p.assert_nothing_sent("for a CE segment without a CE change");
    assert_eq!(p.ep.next_deadline(), Some(secs(0.250)));

    // 1 -> 0 with the ACK for 4001 pending.
    p.at(0.220).inject(Ecn::Ect0, ".", 4001, 1000, 2);
    p.expect(Ecn::Ect0, "E.", 2, 0, 4001); // special ACK: prior_rcv_nxt, with the old ECE
    p.expect(Ecn::Ect0, ".", 2, 0, 5001); // the latest sequence, new state: no ECE
    assert!(p.sent.is_empty());
    // The ACK for the latest sequence settled the delayed ACK: nothing fires at 0.250.
    assert_eq!(p.ep.next_deadline(), None);
    p.quiet_for(0.200);
}

/// b0c05d0e99 "tcp: fix dctcp delayed ACK schedule", with the seed script
/// dctcp-delayed-ack-schedule.pkt.
///
/// A data segment that carries the ACK settles the delayed ACK (tcp_event_ack_sent from
/// __tcp_transmit_skb), so DCTCP must not believe an ACK is still being held back: no special
/// ACK for an older sequence afterwards, and the ACK after the CE-marked segment acknowledges
/// 5501, never 4501 (which left the sender waiting for an RTO).
///
/// The script was written for the kernel of b0c05d0e99; a0496ef2c2 (one week later: ACK at once
/// on a CE change) and 9aee40006190 (2019: ACK at once on data with CWR) change three of its
/// timings on every later kernel, and the endpoint follows those:
/// - 0.210: the CE segment (state 0 -> 1) is ACKed at once: `E. 3:3(0) ack 4501`;
/// - 0.221: `W. 4501:5501` is both a CE change (1 -> 0) and CWR data: ACKed at once, not 40 ms
///   later. It acknowledges 5501 without ECE, and no ACK for 4501 follows;
/// - +0.311: since no delayed ACK ever timed out, the connection is still interactive
///   (pingpong), so the ACK for 6501 is the one delayed by 40-45 ms (in 2018 it was immediate
///   because the delayed-ACK timeout at 0.26x had left pingpong mode).
#[test]
fn b0c05d0e99_delayed_ack_acks_latest_seq() {
    let mut p = dctcp_server_handshake();
    seed_script_prefix(&mut p); // ACK for 2001 delayed until 0.240

    // 0.200 write(4, ..., 1) = 1
    // 0.200 > [ect01] P. 2:3(1) ack 2001
    p.write(1);
    p.expect(Ecn::Ect0, "P.", 2, 1, 2001);
    // The data segment carried the ACK: no delayed ACK is left (only the RTO for byte 2).
    assert!(p.ep.next_deadline().unwrap() > secs(0.400), "the delayed ACK for 2001 was settled");

    // 0.200 < [ect0] . 2001:3001(1000) ack 3 win 257
    // 0.200 < [ect0] . 3001:4001(1000) ack 3 win 257
    // 0.200 > [ect01] . 3:3(0) ack 4001
    p.inject(Ecn::Ect0, ".", 2001, 1000, 3);
    p.inject(Ecn::Ect0, ".", 3001, 1000, 3);
    p.expect(Ecn::Ect0, ".", 3, 0, 4001);

    // 0.210 < [ce] P. 4001:4501(500) ack 3 win 257
    p.at(0.210).inject(Ecn::Ce, "P.", 4001, 500, 3);
    // (a0496ef2c2) the CE change is ACKed at once; nothing was held back, so no special ACK.
    p.expect(Ecn::Ect0, "E.", 3, 0, 4501);

    // +0.001 read(4, ..., 4500) = 4500
    // +0 write(4, ..., 1) = 1
    // +0 > [ect01] PE. 3:4(1) ack 4501
    p.plus(0.001).write(1);
    p.expect(Ecn::Ect0, "PE.", 3, 1, 4501);

    // +0.010 < [ect0] W. 4501:5501(1000) ack 4 win 257
    p.plus(0.010).inject(Ecn::Ect0, "W.", 4501, 1000, 4);
    // // Previously the ACK sequence below would be 4501, causing a long RTO
    // (a0496ef2c2, 9aee40006190) at once rather than +0.040~+0.045, and for 5501.
    p.expect(Ecn::Ect0, ".", 4, 0, 5501);
    assert!(p.sent.is_empty(), "one ACK only: no stale special ACK for 4501");
    assert_eq!(p.ep.next_deadline(), None, "everything is acknowledged, nothing in flight");

    // +0.311 < [ect0] . 5501:6501(1000) ack 4 win 257  // More data
    p.plus(0.311).inject(Ecn::Ect0, ".", 5501, 1000, 4);
    // The delayed ACK acknowledges the latest sequence, 40-45 ms later.
    let (_, delay) = p.expect_in(0.040, 0.045, Ecn::Ect0, ".", 4, 0, 6501);
    assert_eq!(delay, secs(0.040));

    // +0.500 < F. 9501:9501(0) ack 4 win 257
    // An out-of-order FIN, not ECT: a retransmission by the ECN rule (quick-ACK mode) and a
    // hole: a duplicate ACK with SACK, at once.
    p.plus(0.500).inject(Ecn::NotEct, "F.", 9501, 0, 4);
    let dup = p.expect(Ecn::Ect0, ".", 4, 0, 6501);
    assert_eq!(dup.opts.sack_blocks(), &[(PEER_ISN.wrapping_add(9501), PEER_ISN.wrapping_add(9502))]);
    assert!(p.sent.is_empty());
}

/// b0c05d0e99, the bug it fixed in isolation: a delayed ACK is pending, a data segment carries the
/// ACK (the endpoint replies), then the CE state changes. Nothing is held back any more, so the
/// CE change sends one ACK for the latest sequence — no special ACK for an older one.
#[test]
fn b0c05d0e99_piggybacked_ack_settles_delayed_ack() {
    let mut p = dctcp_server_handshake();
    seed_script_prefix(&mut p); // ACK for 2001 delayed until 0.240
    p.plus(0.001).write(1);
    p.expect(Ecn::Ect0, "P.", 2, 1, 2001);
    p.plus(0.004).inject(Ecn::Ce, ".", 2001, 1000, 3);
    p.expect(Ecn::Ect0, "E.", 3, 0, 3001);
    assert!(p.sent.is_empty(), "no special ACK for 2001: the data segment already acknowledged it");
    p.quiet_for(0.100);
    // And the other direction.
    p.plus(0.001).write(1);
    p.expect(Ecn::Ect0, "PE.", 3, 1, 3001);
    p.plus(0.001).inject(Ecn::Ce, ".", 3001, 1000, 4); // no change: delayed
    p.assert_nothing_sent("for a CE segment without a CE change");
    p.plus(0.001).write(1);
    p.expect(Ecn::Ect0, "PE.", 4, 1, 4001); // carries the held-back ACK
    p.plus(0.001).inject(Ecn::Ect0, ".", 4001, 1000, 5);
    p.expect(Ecn::Ect0, ".", 5, 0, 5001);
    assert!(p.sent.is_empty(), "no special ACK for 4001: the data segment already acknowledged it");
    p.quiet_for(0.100);
}

// ---------------------------------------------------------------------------------------------
// Sender side.
// ---------------------------------------------------------------------------------------------

/// A client with ECN negotiated (`tcp_ecn=1`), handshake done at 0.010; the peer announces
/// mss 1000, SACK, wscale 7 and a window of 65535 << 7.
fn ecn_client(cc: CcKind) -> Peer {
    let mut p = Peer::client(TcpConfig { cc, ecn: EcnMode::On, ..TcpConfig::default() });
    p.win = 65535;
    let ect = if cc == CcKind::Dctcp { Ecn::Ect0 } else { Ecn::NotEct };
    p.expect(ect, "SEW", 0, 0, 0);
    p.at(0.010).inject_full(Ecn::NotEct, "SE.", 0, 0, 1, 65535, peer_syn_opts());
    p.expect(ect, ".", 1, 0, 1);
    assert!(p.ep.tcp_info().ecn_ok);
    p
}

/// Take the segments sent since the last call, checking they are new full-sized data segments in
/// sequence order; their relative end sequences are appended to `flight`.
#[track_caller]
fn take_data(p: &mut Peer, flight: &mut VecDeque<u32>, snd_nxt: &mut u32) -> Vec<Segment> {
    let segs = p.drain();
    for s in &segs {
        let seq = s.seq.wrapping_sub(p.ep_isn);
        if seq != *snd_nxt || s.len != 1000 || s.ecn != Ecn::Ect0 || !s.flags.has(TcpFlags::ACK) {
            p.fail(format!(
                "expected new data [ect0] {}:{}(1000), got {}",
                *snd_nxt,
                *snd_nxt + 1000,
                fmt_seg(s, p.ep_isn, p.isn)
            ));
        }
        *snd_nxt = p.rel_end(s);
        flight.push_back(*snd_nxt);
    }
    segs
}

/// 343dfaa198 Revert "dctcp: update cwnd on congestion event", with Neal Cardwell's example: cwnd
/// 80, then 40 ACKs (each for two packets) of which every other carries ECE. The stack reacts once
/// per window of data: one tcp_enter_cwr(), ssthresh from the CC once, PRR walks cwnd down to
/// ssthresh, and the reduction ends at ssthresh, nowhere near the 2 packets that cutting cwnd on
/// every ECE ACK led to.
fn cwr_once_per_window(cc: CcKind) {
    let mut p = ecn_client(cc);
    let mut flight: VecDeque<u32> = VecDeque::new();
    let mut snd_nxt = 1u32;
    p.at(0.020);
    p.write_forever();
    assert_eq!(take_data(&mut p, &mut flight, &mut snd_nxt).len(), 10, "initial window");

    // Slow start, one ACK per packet, three round trips of 10 ms: cwnd 10 -> 20 -> 40 -> 80.
    let mut t = secs(0.030);
    for _round in 0..3 {
        for _ in 0..flight.len() {
            let end = flight.pop_front().unwrap();
            t += SimTime::from_us(50);
            p.advance_to(t);
            p.ack(end, false);
            take_data(&mut p, &mut flight, &mut snd_nxt);
        }
        t += SimTime::from_ms(10);
    }
    let info = p.ep.tcp_info();
    assert_eq!((info.snd_cwnd, info.unacked, flight.len()), (80, 80, 80));
    assert_eq!(info.ca_state, CaState::Open);
    assert_eq!(info.snd_ssthresh, 0x7fff_ffff, "no reduction yet");
    assert_eq!(p.ep.stats().cwr_events, 0);

    // 40 ACKs for the window of 80, every other one (starting with the first) with ECE.
    let window: Vec<u32> = flight.drain(..).collect();
    let mut states = vec![CaState::Open];
    let mut ssthreshes: Vec<u32> = Vec::new();
    let mut cwnds: Vec<u32> = Vec::new();
    let mut new_data: Vec<Segment> = Vec::new();
    let mut want_ssthresh = 0;
    for i in 0..40 {
        t += SimTime::from_us(100);
        p.advance_to(t);
        p.ack(window[2 * i + 1], i % 2 == 0);
        let info = p.ep.tcp_info();
        if i == 0 {
            // The ssthresh hook runs once, at the first ECE, on cwnd 80.
            want_ssthresh = match cc {
                CcKind::Dctcp => {
                    let CcInfo::Dctcp { alpha, enabled: true, .. } = info.cc_info else {
                        panic!("dctcp info expected, got {:?}", info.cc_info)
                    };
                    // dctcp_ssthresh: cwnd - cwnd * alpha / 2048, at least 2.
                    (80 - ((80 * alpha) >> 11)).max(2)
                }
                _ => 40, // tcp_reno_ssthresh
            };
            assert!((40..80).contains(&want_ssthresh), "a real reduction: ssthresh {want_ssthresh}");
        }
        if states.last() != Some(&info.ca_state) {
            states.push(info.ca_state);
        }
        if ssthreshes.last() != Some(&info.snd_ssthresh) {
            ssthreshes.push(info.snd_ssthresh);
        }
        cwnds.push(info.snd_cwnd);
        new_data.extend(take_data(&mut p, &mut flight, &mut snd_nxt));
    }
    let info = p.ep.tcp_info();
    assert_eq!(states, [CaState::Open, CaState::Cwr], "CWR entered once, no recovery");
    assert_eq!(ssthreshes, [want_ssthresh], "ssthresh set once, by the CC");
    assert_eq!(p.ep.stats().cwr_events, 1, "one tcp_enter_cwr reduction for the window");
    assert_eq!(info.delivered_ce, 40, "20 ECE ACKs of 2 packets each");
    // PRR: cwnd walks down from 80 to ssthresh, never below it.
    assert!(cwnds.windows(2).all(|w| w[1] <= w[0]), "cwnd only decreases during CWR: {cwnds:?}");
    assert!(*cwnds.iter().min().unwrap() >= want_ssthresh, "cwnd dipped below ssthresh: {cwnds:?}");
    assert_eq!(*cwnds.last().unwrap(), want_ssthresh, "PRR reaches ssthresh: {cwnds:?}");
    assert_eq!(info.unacked, want_ssthresh, "in flight = ssthresh at the end of the window");
    // The first new data segment after the reduction carries CWR, and only that one.
    assert!(!new_data.is_empty());
    assert!(new_data[0].flags.has(TcpFlags::CWR), "CWR on the first new data segment");
    assert!(new_data[1..].iter().all(|s| !s.flags.has(TcpFlags::CWR)), "CWR only once");

    // snd_una == high_seq: CWR is held until something above it is acknowledged.
    assert_eq!(info.ca_state, CaState::Cwr);
    let end = flight.pop_front().unwrap();
    t += SimTime::from_ms(10);
    p.advance_to(t);
    p.ack(end, false);
    let info = p.ep.tcp_info();
    assert_eq!(info.ca_state, CaState::Open, "reduction complete");
    assert_eq!(info.snd_ssthresh, want_ssthresh);
    assert_eq!(info.snd_cwnd, want_ssthresh, "tcp_end_cwnd_reduction: cwnd = ssthresh");
    assert_eq!(p.ep.stats().cwr_events, 1);
}

#[test]
fn commit_343dfaa198_cwr_once_per_window() {
    cwr_once_per_window(CcKind::Dctcp);
    cwr_once_per_window(CcKind::Reno);
}

// ---------------------------------------------------------------------------------------------
// ECT codepoints and ECN negotiation.
// ---------------------------------------------------------------------------------------------

/// A server after `0.100 < [syn_ecn] SEW ... / 0.110 < . 1:1(0) ack 1`; returns the SYN-ACK too.
fn ecn_server(cfg: TcpConfig, syn_ecn: Ecn, syn_flags: &str) -> (Peer, Segment) {
    let mut p = Peer::server(cfg);
    p.at(0.100).inject_full(syn_ecn, syn_flags, 0, 0, 0, 32792, peer_syn_opts());
    let synack = p.drain().pop().expect("a SYN-ACK");
    assert!(synack.flags.has(TcpFlags::SYN) && synack.flags.has(TcpFlags::ACK));
    p.at(0.110).inject(Ecn::Ect0, ".", 1, 0, 1);
    assert!(p.ep.is_established());
    (p, synack)
}

/// Pure ACKs (immediate and delayed), new data, an RTO retransmission, and new data after it:
/// `ack_ecn` is the codepoint expected on pure ACKs and retransmissions.
fn ect_transcript(p: &mut Peer, ack_ecn: Ecn) {
    p.at(0.200).inject(Ecn::Ect0, ".", 1, 1000, 1);
    p.expect(ack_ecn, ".", 1, 0, 1001); // pure ACK (quick-ACK mode)
    p.write(1000);
    p.expect(Ecn::Ect0, "P.", 1, 1000, 1001); // new data: ECT (INET_ECN_xmit)
    p.at(0.210).inject(Ecn::Ect0, ".", 1001, 1000, 1);
    p.expect_in(0.040, 0.040, ack_ecn, ".", 1001, 0, 2001); // delayed pure ACK
                                                            // Our data is never acknowledged: the RTO retransmits it.
    p.expect_in(0.0, 1.0, ack_ecn, "P.", 1, 1000, 2001);
    assert_eq!(p.ep.stats().rto_count, 1);
    // The peer's ACK carries its own next sequence (it sent 2000 bytes): an older one would be
    // outside the window (tcp_sequence) and only draw a duplicate ACK.
    p.plus(0.010).inject(Ecn::NotEct, ".", 2001, 0, 1001);
    // New data after the RTO: ECT again, with CWR (tcp_enter_loss queues it).
    p.write(1000);
    p.expect(Ecn::Ect0, "PW.", 1001, 1000, 2001);
}

/// e3118e8359 (DCTCP keeps ECT on every packet) vs RFC 3168 (tcp_ecn_send: pure ACKs and
/// retransmissions are not ECT, INET_ECN_dontxmit). DCTCP (TCP_CONG_NEEDS_ECN) sends ECT on pure
/// ACKs and retransmissions; CUBIC with tcp_ecn=1 and ECN negotiated does not.
#[test]
fn dctcp_ect_on_pure_acks_and_retransmissions() {
    // Tail loss probes off: the transcript checks the RTO path (tcp_enter_loss queues CWR). With
    // TLP on, Linux sends a probe at the time the RTO would fire; the ECT rule is the same.
    let (mut p, synack) = ecn_server(TcpConfig { tlp: false, ..dctcp_cfg() }, Ecn::Ect0, "SEW");
    assert_eq!((synack.ecn, flags_str(synack.flags)), (Ecn::Ect0, "SE.".to_string()));
    assert!(p.ep.tcp_info().ecn_ok);
    ect_transcript(&mut p, Ecn::Ect0);

    let cubic = TcpConfig { cc: CcKind::Cubic, ecn: EcnMode::On, tlp: false, ..TcpConfig::default() };
    let (mut p, synack) = ecn_server(cubic, Ecn::NotEct, "SEW");
    assert_eq!((synack.ecn, flags_str(synack.flags)), (Ecn::NotEct, "SE.".to_string()));
    assert!(p.ep.tcp_info().ecn_ok);
    ect_transcript(&mut p, Ecn::NotEct);
}

/// ECN negotiation (RFC 3168 6.1.1, tcp_ecn_send_syn / tcp_ecn_rcv_synack /
/// tcp_ecn_create_request) and ECT on the SYN (e3118e8359: a CC that needs ECN sends its SYN
/// and SYN-ACK with ECT).
#[test]
fn ecn_negotiation_syn_ect() {
    let syn_ack = |p: &mut Peer, f: &str| {
        p.at(0.010).inject_full(Ecn::NotEct, f, 0, 0, 1, 257, peer_syn_opts());
    };
    let cfg = |cc, ecn| TcpConfig { cc, ecn, ..TcpConfig::default() };

    // DCTCP client: SYN is ECT with ECE|CWR whatever tcp_ecn says; the peer agrees; ECT on data
    // and on pure ACKs.
    for mode in [EcnMode::Off, EcnMode::Passive, EcnMode::On] {
        let mut p = Peer::client(cfg(CcKind::Dctcp, mode));
        p.expect(Ecn::Ect0, "SEW", 0, 0, 0);
        syn_ack(&mut p, "SE.");
        p.expect(Ecn::Ect0, ".", 1, 0, 1);
        let info = p.ep.tcp_info();
        assert!(info.ecn_ok, "{mode:?}");
        assert_eq!(info.cc, "dctcp");
        p.write(100);
        p.expect(Ecn::Ect0, "P.", 1, 100, 1);
    }
    // DCTCP client, peer without ECN: dctcp-reno, no more ECT.
    let mut p = Peer::client(cfg(CcKind::Dctcp, EcnMode::Passive));
    p.expect(Ecn::Ect0, "SEW", 0, 0, 0);
    syn_ack(&mut p, "S.");
    p.expect(Ecn::NotEct, ".", 1, 0, 1);
    assert!(!p.ep.tcp_info().ecn_ok);
    assert_eq!(p.ep.tcp_info().cc, "dctcp-reno");
    p.write(100);
    p.expect(Ecn::NotEct, "P.", 1, 100, 1);
    // DCTCP modelling an older stack (no ECT on the SYN): still asks for ECN.
    let mut p = Peer::client(TcpConfig { syn_ect: false, ..cfg(CcKind::Dctcp, EcnMode::Passive) });
    p.expect(Ecn::NotEct, "SEW", 0, 0, 0);

    // Reno, tcp_ecn=2 (passive): no ECE/CWR on the SYN, not ECT; an ECE in the SYN-ACK (which
    // was not asked for) does not turn ECN on.
    let mut p = Peer::client(cfg(CcKind::Reno, EcnMode::Passive));
    p.expect(Ecn::NotEct, "S", 0, 0, 0);
    syn_ack(&mut p, "SE.");
    p.expect(Ecn::NotEct, ".", 1, 0, 1);
    assert!(!p.ep.tcp_info().ecn_ok);
    p.write(100);
    p.expect(Ecn::NotEct, "P.", 1, 100, 1);
    // Reno, tcp_ecn=0: the same SYN.
    let mut p = Peer::client(cfg(CcKind::Reno, EcnMode::Off));
    p.expect(Ecn::NotEct, "S", 0, 0, 0);
    // Reno, tcp_ecn=1: asks (ECE|CWR) without ECT; the peer agrees: ECT on data only.
    let mut p = Peer::client(cfg(CcKind::Reno, EcnMode::On));
    p.expect(Ecn::NotEct, "SEW", 0, 0, 0);
    syn_ack(&mut p, "SE.");
    p.expect(Ecn::NotEct, ".", 1, 0, 1);
    assert!(p.ep.tcp_info().ecn_ok);
    p.write(100);
    p.expect(Ecn::Ect0, "P.", 1, 100, 1);
    // A SYN-ACK with both ECE and CWR (a reflecting middlebox) is not an ECN agreement.
    let mut p = Peer::client(cfg(CcKind::Reno, EcnMode::On));
    p.expect(Ecn::NotEct, "SEW", 0, 0, 0);
    syn_ack(&mut p, "SEW.");
    p.expect(Ecn::NotEct, ".", 1, 0, 1);
    assert!(!p.ep.tcp_info().ecn_ok);

    // A retransmitted SYN drops ECE|CWR (RFC 3168 6.1.1.1 fallback, tcp_ecn_clear_syn with
    // net.ipv4.tcp_ecn_fallback=1); a CC that needs ECN keeps ECT on it.
    for (cc, ect) in [(CcKind::Dctcp, Ecn::Ect0), (CcKind::Reno, Ecn::NotEct)] {
        let mut p = Peer::client(cfg(cc, EcnMode::On));
        p.expect(ect, "SEW", 0, 0, 0);
        p.expect_in(1.0, 1.0, ect, "S", 0, 0, 0);
        // The peer answers the retransmission, so without ECN.
        p.plus(0.010).inject_full(Ecn::NotEct, "S.", 0, 0, 1, 257, peer_syn_opts());
        p.expect(Ecn::NotEct, ".", 1, 0, 1);
        assert!(!p.ep.tcp_info().ecn_ok, "{cc:?}");
    }

    // Listener side (tcp_ecn_create_request).
    let listen = |c: TcpConfig, ecn: Ecn| {
        let (p, synack) = ecn_server(c, ecn, "SEW");
        (synack.ecn, flags_str(synack.flags), p.ep.tcp_info().ecn_ok)
    };
    let yes = |ect| (ect, "SE.".to_string(), true);
    let no = (Ecn::NotEct, "S.".to_string(), false);
    // DCTCP accepts even an ECT SYN, and answers with ECT.
    assert_eq!(listen(cfg(CcKind::Dctcp, EcnMode::Off), Ecn::Ect0), yes(Ecn::Ect0));
    assert_eq!(listen(cfg(CcKind::Dctcp, EcnMode::Passive), Ecn::NotEct), yes(Ecn::Ect0));
    // CUBIC accepts a not-ECT SYN when tcp_ecn is 1 or 2, never when 0...
    assert_eq!(listen(cfg(CcKind::Cubic, EcnMode::Passive), Ecn::NotEct), yes(Ecn::NotEct));
    assert_eq!(listen(cfg(CcKind::Cubic, EcnMode::On), Ecn::NotEct), yes(Ecn::NotEct));
    assert_eq!(listen(cfg(CcKind::Cubic, EcnMode::Off), Ecn::NotEct), no);
    // ...and refuses an ECT SYN (a SYN should not be ECT under RFC 3168).
    assert_eq!(listen(cfg(CcKind::Cubic, EcnMode::On), Ecn::Ect0), no);
    // No ECE|CWR in the SYN: no ECN.
    let (p, synack) = ecn_server(cfg(CcKind::Cubic, EcnMode::On), Ecn::NotEct, "S");
    assert_eq!(flags_str(synack.flags), "S.");
    assert!(!p.ep.tcp_info().ecn_ok);
}

/// A tail loss: with TLP (Linux's default) the lost last segment is probed at
/// min(2·srtt + rto_min, RTO) instead of waiting for an RTO; the probe repairs the loss and
/// no timeout is counted. With TLP off, the same loss costs an RTO.
#[test]
fn tail_loss_probe_repairs_a_lost_last_segment() {
    for tlp in [true, false] {
        let (mut p, _) = ecn_server(TcpConfig { tlp, ..dctcp_cfg() }, Ecn::Ect0, "SEW");
        p.at(0.200).write(1000);
        p.expect(Ecn::Ect0, "P.", 1, 1000, 1);
        // The segment is lost; the next thing the endpoint sends is its retransmission.
        p.expect_in(0.0, 1.0, Ecn::Ect0, "P.", 1, 1000, 1);
        let st = *p.ep.stats();
        if tlp {
            assert_eq!((st.loss_probes, st.rto_count), (1, 0), "the probe, not an RTO, retransmits");
        } else {
            assert_eq!((st.loss_probes, st.rto_count), (0, 1));
        }
    }
}
