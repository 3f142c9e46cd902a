//! FreeBSD DCTCP (`cc_dctcp.c`) at the endpoint: the one-sided deployment behaviours of
//! `cc_dctcp(4)` ("DCTCP sets the CWR flag as the reaction to the ECE flag"; "DCTCP avoids to
//! mirror back ACKs only when the CWR flag is set in the incoming packet"), against classic-ECN
//! peers, with Linux DCTCP in the same situations for comparison.
//!
//! The sender tests run two endpoints over a pair of 1 Gb/s links (20 µs each way) with one
//! data segment CE-marked on the way; the receiver tests play a classic-ECN sender by hand.

use ccsim_cc::{CaState, CcInfo, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{Ecn, EcnMode, Endpoint, Segment, TcpConfig, TcpFlags, TcpInfo, TcpOptions};

const ISS_A: u32 = 1_000_000;
const ISS_B: u32 = 7_000_000;
const RATE_BPS: u64 = 1_000_000_000;
const PROP: SimTime = SimTime::from_us(20);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    /// From the sender (client) to the receiver.
    AtoB,
    /// From the receiver to the sender.
    BtoA,
}

/// A segment handed to an endpoint, with the receiving endpoint's state around it.
struct Delivery {
    t: SimTime,
    dir: Dir,
    seg: Segment,
    before: TcpInfo,
    after: TcpInfo,
}

/// Two endpoints and the wire between them. Endpoint `a` connects and sends forever; data
/// segments number `mark` (1-based, in wire order) get CE on the way to `b`.
struct Net {
    now: SimTime,
    a: Endpoint,
    b: Endpoint,
    /// Segments on the links: (arrival, id, direction, segment).
    links: Vec<(SimTime, u64, Dir, Segment)>,
    next_id: u64,
    link_free: [SimTime; 2],
    data_segs: u32,
    mark: Vec<u32>,
    /// Everything sent, at the time it was sent (after marking).
    wire: Vec<(SimTime, Dir, Segment)>,
    deliveries: Vec<Delivery>,
}

impl Net {
    fn new(a_cfg: TcpConfig, b_cfg: TcpConfig, mark: Vec<u32>) -> Net {
        let mut n = Net {
            now: SimTime::ZERO,
            a: Endpoint::client(a_cfg, ISS_A),
            b: Endpoint::listen(b_cfg, ISS_B),
            links: Vec::new(),
            next_id: 0,
            link_free: [SimTime::ZERO; 2],
            data_segs: 0,
            mark,
            wire: Vec::new(),
            deliveries: Vec::new(),
        };
        let mut out = Vec::new();
        n.a.write_forever(SimTime::ZERO, &mut out);
        n.a.connect(SimTime::ZERO, &mut out);
        n.emit(Dir::AtoB, out);
        n
    }

    /// Put `out` on the link of `dir`; the host transmits data at once (TSQ completions).
    fn emit(&mut self, dir: Dir, out: Vec<Segment>) {
        let mut tsq_bytes = 0u64;
        for mut seg in out {
            if dir == Dir::AtoB && seg.len > 0 {
                self.data_segs += 1;
                if self.mark.contains(&self.data_segs) && seg.ecn.is_ect() {
                    seg.ecn = Ecn::Ce;
                }
                tsq_bytes += (seg.len + seg.header_len()) as u64;
            }
            let i = dir as usize;
            let bytes = (seg.len + seg.header_len()) as u64;
            let departure = self.now.max(self.link_free[i]) + SimTime::tx_time(bytes, RATE_BPS);
            self.link_free[i] = departure;
            self.links.push((departure + PROP, self.next_id, dir, seg));
            self.next_id += 1;
            self.wire.push((self.now, dir, seg));
        }
        if tsq_bytes > 0 {
            let mut more = Vec::new();
            self.a.tsq_release(self.now, tsq_bytes, &mut more);
            self.emit(Dir::AtoB, more);
        }
    }

    fn run_until(&mut self, end: SimTime) {
        loop {
            let arrival = self.links.iter().enumerate().min_by_key(|(_, l)| (l.0, l.1)).map(|(i, l)| (l.0, i));
            let ta = self.a.next_deadline();
            let tb = self.b.next_deadline();
            let t = [arrival.map(|x| x.0), ta, tb].into_iter().flatten().min();
            let Some(t) = t.filter(|&t| t <= end) else { break };
            self.now = self.now.max(t);
            let mut out = Vec::new();
            if let Some((_, i)) = arrival.filter(|x| x.0 == t) {
                let (_, _, dir, seg) = self.links.remove(i);
                let ep = if dir == Dir::AtoB { &mut self.b } else { &mut self.a };
                let before = ep.tcp_info();
                ep.on_segment(self.now, &seg, &mut out);
                let after = ep.tcp_info();
                self.deliveries.push(Delivery { t: self.now, dir, seg, before, after });
                let back = if dir == Dir::AtoB { Dir::BtoA } else { Dir::AtoB };
                self.emit(back, out);
            } else if ta == Some(t) {
                self.a.on_timer(self.now, &mut out);
                self.emit(Dir::AtoB, out);
            } else {
                self.b.on_timer(self.now, &mut out);
                self.emit(Dir::BtoA, out);
            }
        }
    }

    /// FNV-1a over the whole wire transcript.
    fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (t, dir, seg) in &self.wire {
            // The wire as it was when the digest was taken: the qdisc-facing fields (departure
            // time, skb grouping) were added later and are not part of the transcript.
            let seg = format!("{seg:?}");
            let cut = seg.find(", tstamp_ns: ").expect("Segment's Debug names tstamp_ns");
            let seg = &seg[..cut];
            for b in format!("{} {:?} {} }}\n", t.ns(), dir, seg).bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }
}

fn alpha_of(info: &TcpInfo) -> u32 {
    match info.cc_info {
        CcInfo::Dctcp { alpha, enabled: true, .. } => alpha,
        ref other => panic!("expected enabled DCTCP info, got {other:?}"),
    }
}

/// A DCTCP sender (`cc`) against a CUBIC receiver with classic ECN (net.ipv4.tcp_ecn = 1), data
/// segment 40 CE-marked, 5 ms. The sender's SYN is not ECT (FreeBSD never sends an ECT SYN; a
/// Linux receiver refuses ECN to an ECT SYN unless its own CC needs ECN).
fn one_sided_sender(cc: CcKind) -> Net {
    let sender = TcpConfig { cc, ecn: EcnMode::On, syn_ect: false, ..TcpConfig::default() };
    let receiver = TcpConfig { cc: CcKind::Cubic, ecn: EcnMode::On, ..TcpConfig::default() };
    let mut net = Net::new(sender, receiver, vec![40]);
    net.run_until(SimTime::from_ms(5));
    assert!(net.a.tcp_info().ecn_ok && net.b.tcp_info().ecn_ok);
    assert_eq!(net.b.stats().ce_rcvd, 1, "one CE mark");
    assert!(net.a.tcp_info().bytes_acked > 300_000, "the transfer ran");
    net
}

/// CWR and ECE outside the handshake (the SYN carries ECE|CWR to ask for ECN, the SYN-ACK ECE to
/// agree).
fn is_cwr_data(s: &Segment) -> bool {
    s.flags.has(TcpFlags::CWR) && !s.flags.has(TcpFlags::SYN)
}

fn is_ece_ack(s: &Segment) -> bool {
    s.flags.has(TcpFlags::ECE) && !s.flags.has(TcpFlags::SYN)
}

/// The receiver echoes ECE until a CWR data segment reaches it, and not after: returns the
/// number of ECE segments and the one CWR segment's arrival at the receiver.
fn echo_stops_at_cwr(net: &Net) -> (usize, SimTime) {
    let cwr: Vec<&Delivery> = net.deliveries.iter().filter(|d| d.dir == Dir::AtoB && is_cwr_data(&d.seg)).collect();
    assert_eq!(cwr.len(), 1, "exactly one CWR, for the one mark");
    let t_cwr = cwr[0].t;
    let eces: Vec<SimTime> =
        net.wire.iter().filter(|(_, dir, s)| *dir == Dir::BtoA && is_ece_ack(s)).map(|(t, _, _)| *t).collect();
    assert!(!eces.is_empty(), "the classic receiver echoed the CE mark");
    // The receiver stops echoing once CWR arrives: nothing it sends from then on has ECE.
    let late: Vec<&(SimTime, Dir, Segment)> =
        net.wire.iter().filter(|(t, dir, s)| *dir == Dir::BtoA && *t >= t_cwr && is_ece_ack(s)).collect();
    assert!(late.is_empty(), "ECE after the CWR reached the receiver: {late:?}");
    (eces.len(), t_cwr)
}

/// `cc_dctcp(4)`: "Considering the situation that DCTCP is used as sender and classic ECN is used
/// as receiver, DCTCP sets the CWR flag as the reaction to the ECE flag." FreeBSD DCTCP cuts cwnd
/// to ssthresh on the first ECE, without entering CWR state or PRR, and queues CWR, so the
/// classic receiver (which latches ECE until it sees CWR) stops echoing.
#[test]
fn freebsd_dctcp_sender_sets_cwr_for_classic_ecn_receiver() {
    let net = one_sided_sender(CcKind::FreebsdDctcp);
    assert_eq!(net.a.cc_name(), "freebsd-dctcp");
    let (eces, t_cwr) = echo_stops_at_cwr(&net);

    // The reaction to the first ECE: ssthresh = max(cwnd - cwnd * alpha / 2048, 2) with the
    // alpha and cwnd from before that ACK, and cwnd = ssthresh at once.
    let acks_to_a: Vec<&Delivery> = net.deliveries.iter().filter(|d| d.dir == Dir::BtoA).collect();
    let first = acks_to_a.iter().position(|d| is_ece_ack(&d.seg)).expect("an ECE ACK");
    let d = acks_to_a[first];
    let (cwnd0, alpha0) = (d.before.snd_cwnd, alpha_of(&d.before));
    let want = (cwnd0 - ((cwnd0 as u64 * alpha0 as u64) >> 11) as u32).max(2);
    assert!(want < cwnd0, "a real reduction: cwnd {cwnd0} alpha {alpha0}");
    assert_eq!(d.after.snd_ssthresh, want);
    assert_eq!(d.after.snd_cwnd, want, "cwnd = ssthresh on the ECE ACK itself, no PRR");
    assert_eq!(d.after.ca_state, CaState::Open, "no TCP_CA_CWR");
    // The CWR goes out on the first new data segment after that ACK.
    let cwr_sent = net.wire.iter().find(|(_, dir, s)| *dir == Dir::AtoB && is_cwr_data(s)).unwrap();
    assert!(cwr_sent.0 >= d.t);
    // Once per window: the later ECE ACKs (the receiver latched ECE) change neither ssthresh
    // nor the state; cwnd only grows from there.
    for w in acks_to_a[first..].windows(2) {
        assert_eq!(w[1].after.snd_ssthresh, want, "a second reduction at {:?}", w[1].t);
        assert!(w[1].after.snd_cwnd >= w[0].after.snd_cwnd);
    }
    assert!(acks_to_a.iter().all(|d| d.after.ca_state == CaState::Open));
    assert_eq!(net.a.stats().cwr_events, 0);
    // Alpha counted the echoed bytes (the receiver's latch marks about a window of ACKs).
    assert!(eces > 1);
    let last = acks_to_a.last().unwrap();
    assert!(alpha_of(&last.after) > 0);
    assert!(t_cwr > d.t);
}

/// Linux DCTCP against the same receiver is unchanged: tcp_enter_cwr on the first ECE, PRR
/// walks cwnd down from there (cwnd > ssthresh right after that ACK), CWR on the next new data
/// segment (tcp_init_cwnd_reduction -> tcp_ecn_queue_cwr). The transcript digest was taken from
/// this same run on the tree before FreeBSD DCTCP was added.
#[test]
fn linux_dctcp_sender_against_classic_ecn_receiver_unchanged() {
    let net = one_sided_sender(CcKind::Dctcp);
    assert_eq!(net.a.cc_name(), "dctcp");
    echo_stops_at_cwr(&net);
    let d = net.deliveries.iter().find(|d| d.dir == Dir::BtoA && is_ece_ack(&d.seg)).unwrap();
    assert_eq!(d.after.ca_state, CaState::Cwr);
    let cwnd0 = d.before.snd_cwnd;
    assert_eq!(d.after.snd_ssthresh, (cwnd0 - ((cwnd0 as u64 * alpha_of(&d.before) as u64) >> 11) as u32).max(2));
    assert!(d.after.snd_cwnd > d.after.snd_ssthresh, "PRR, not an immediate cut");
    assert_eq!(net.a.stats().cwr_events, 1);
    assert_eq!(net.digest(), LINUX_DCTCP_DIGEST, "the Linux DCTCP transcript changed");
}

/// Digest of `one_sided_sender(CcKind::Dctcp)`: taken before FreeBSD DCTCP was added (which left
/// it unchanged), and again when the receive window came to follow Linux 6.18 (the window every
/// ACK carries, and the ACKs of a growing window, changed).
const LINUX_DCTCP_DIGEST: u64 = 0x4928_7c13_91da_e109;

// ---------------------------------------------------------------------------------------------
// Receiver side, against a classic-ECN sender played by hand.
// ---------------------------------------------------------------------------------------------

const PEER_ISN: u32 = 3_000_000;

/// An established passive endpoint after a classic-ECN SYN (ECE|CWR, not ECT), then quick-ACK
/// mode used up by full-sized data: returns it with the time, the next peer sequence and no ACK
/// pending.
fn receiver(cc: CcKind) -> (Endpoint, SimTime, u32) {
    // No application reads (as in packetdrill): the ACK decisions are the stack's alone.
    let cfg = TcpConfig { cc, ecn: EcnMode::On, auto_read: false, ..TcpConfig::default() };
    let mut ep = Endpoint::listen(cfg, ISS_B);
    let mut out = Vec::new();
    let opts = TcpOptions { mss: Some(1000), sack_permitted: true, wscale: Some(7), ..TcpOptions::default() };
    let syn = Segment {
        seq: PEER_ISN,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR),
        win: 65535,
        opts,
        ..Segment::default()
    };
    let mut t = SimTime::from_ms(1);
    ep.on_segment(t, &syn, &mut out);
    let synack = out.pop().expect("SYN-ACK");
    assert!(synack.flags.has(TcpFlags::ECE), "ECN accepted");
    t += SimTime::from_us(100);
    let mut seq = PEER_ISN + 1;
    let ack = ISS_B + 1;
    ep.on_segment(t, &data(seq, ack, 0, Ecn::NotEct, 0), &mut out);
    assert!(ep.is_established() && ep.tcp_info().ecn_ok);
    // Full-sized segments 1 ms apart until quick-ACK mode is over and an ACK just went out.
    for i in 0.. {
        assert!(i < 100, "quick-ACK mode never ended");
        t += SimTime::from_ms(1);
        out.clear();
        ep.on_segment(t, &data(seq, ack, 1000, Ecn::Ect0, 0), &mut out);
        seq += 1000;
        if i > 16 && !out.is_empty() && ep.next_deadline().is_none() {
            break;
        }
    }
    (ep, t, seq)
}

fn data(seq: u32, ack: u32, len: u32, ecn: Ecn, extra: u8) -> Segment {
    Segment { seq, ack, len, flags: TcpFlags(TcpFlags::ACK | extra), win: 1000, ecn, ..Segment::default() }
}

/// Two small segments 1 ms apart (together less than one MSS, so the ACK may be delayed): the
/// first ECT, the second with `ecn2` and CWR if `cwr`. Returns what the endpoint sent when the
/// second arrived, and then when the delayed-ACK timer (if any) fired.
fn second_segment(cc: CcKind, ecn2: Ecn, cwr: bool) -> (Vec<Segment>, Vec<Segment>, u32) {
    let (mut ep, mut t, seq) = receiver(cc);
    let ack = ISS_B + 1;
    let mut out = Vec::new();
    t += SimTime::from_ms(1);
    ep.on_segment(t, &data(seq, ack, 400, Ecn::Ect0, 0), &mut out);
    assert!(out.is_empty(), "{cc:?}: the first small segment's ACK is delayed");
    assert!(ep.next_deadline().is_some());
    t += SimTime::from_ms(1);
    let extra = if cwr { TcpFlags::CWR } else { 0 };
    ep.on_segment(t, &data(seq + 400, ack, 400, ecn2, extra), &mut out);
    let mut later = Vec::new();
    if let Some(d) = ep.next_deadline() {
        ep.on_timer(d, &mut later);
    }
    (out, later, seq + 800)
}

/// `cc_dctcp(4)`: "when classic ECN is used as sender and DCTCP is used as receiver, DCTCP
/// avoids to mirror back ACKs only when the CWR flag is set in the incoming packet"
/// (`dctcp_ecnpkt_handler`: "DCTCP sets delayed ack when this segment sets the CWR flag").
#[test]
fn freebsd_dctcp_receiver_keeps_delaying_acks_on_cwr() {
    // CWR data without a CE change: Linux ACKs at once (tcp_ecn_accept_cwr), FreeBSD DCTCP
    // keeps the ACK delayed.
    let (now, later, end) = second_segment(CcKind::FreebsdDctcp, Ecn::Ect0, true);
    assert!(now.is_empty(), "FreeBSD DCTCP: no immediate ACK for CWR data, got {now:?}");
    assert_eq!(later.len(), 1, "the delayed ACK");
    assert_eq!(later[0].ack, end);
    assert!(!later[0].flags.has(TcpFlags::ECE));
    for cc in [CcKind::Dctcp, CcKind::Cubic] {
        let (now, _, end) = second_segment(cc, Ecn::Ect0, true);
        assert_eq!(now.len(), 1, "{cc:?}: CWR data is ACKed at once");
        assert_eq!(now[0].ack, end);
    }

    // A CE change while the ACK is delayed: FreeBSD DCTCP ACKs at once, everything received and
    // with the new ECE state (no held-back ACK with the old state, unlike Linux)...
    let (now, _, end) = second_segment(CcKind::FreebsdDctcp, Ecn::Ce, false);
    assert_eq!(now.len(), 1, "CE change: immediate ACK");
    assert_eq!(now[0].ack, end);
    assert!(now[0].flags.has(TcpFlags::ECE));
    let (now, _, end) = second_segment(CcKind::Dctcp, Ecn::Ce, false);
    assert_eq!(
        now.iter().map(|s| (s.ack, s.flags.has(TcpFlags::ECE))).collect::<Vec<_>>(),
        [(end - 400, false), (end, true)]
    );
    // ... unless the segment carries CWR: still delayed, and the delayed ACK mirrors the CE.
    let (now, later, end) = second_segment(CcKind::FreebsdDctcp, Ecn::Ce, true);
    assert!(now.is_empty(), "CE change on CWR data: delayed, got {now:?}");
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].ack, end);
    assert!(later[0].flags.has(TcpFlags::ECE), "ECE mirrors CE although CWR arrived");
}
