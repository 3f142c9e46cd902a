//! Header prediction (`tcp_rcv_established`'s fast path): which segments take it, when
//! prediction turns off and when it comes back. The counters are Linux's TCPHPHits (data
//! queued by the fast path) and TCPHPAcks (ACKs through `tcp_ack`'s fast branch).

use ccsim_cc::CcKind;
use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions};

mod common;
use common::{established_client, ISS, PEER_ISS};

const MSS: u32 = 1448;

/// The peer's timestamp value at `t` (1 ms ticks, as Linux's TSval).
fn tsval(t: SimTime) -> u32 {
    (t.ns() / 1_000_000) as u32 + 7
}

/// An established client (window scale 7 both ways, timestamps) with a long flight queued.
fn sender() -> (Endpoint, SimTime, Vec<Segment>) {
    let cfg = TcpConfig { cc: CcKind::Cubic, ..TcpConfig::default() };
    let (mut ep, t) = established_client(cfg, |syn, t| TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        wscale: Some(7),
        timestamp: Some((tsval(t - SimTime::from_us(100)), syn.opts.timestamp.unwrap().0)),
        ..TcpOptions::default()
    });
    let mut out = Vec::new();
    ep.write(t, 10_000_000, &mut out);
    (ep, t, out)
}

/// A pure ACK from the peer at `t`, echoing `echo` (a segment we sent).
fn ack(t: SimTime, ack: u32, win: u16, echo: &Segment) -> Segment {
    Segment {
        seq: PEER_ISS + 1,
        ack,
        flags: TcpFlags(TcpFlags::ACK),
        win,
        opts: TcpOptions { timestamp: Some((tsval(t), echo.opts.timestamp.unwrap().0)), ..TcpOptions::default() },
        ..Segment::default()
    }
}

#[test]
fn a_sender_predicts_pure_acks_once_the_scaled_window_is_known() {
    let (mut ep, mut t, flight) = sender();
    let mut out = Vec::new();
    let mut acked = ISS + 1;
    let mut next = |ep: &mut Endpoint, t: &mut SimTime, win: u16, flags: u8| {
        *t += SimTime::from_us(10);
        acked += MSS;
        let mut a = ack(*t, acked, win, &flight[0]);
        a.flags = TcpFlags(TcpFlags::ACK | flags);
        ep.on_segment(*t, &a, &mut out);
        ep.stats().hp_acks
    };
    // With window scaling, tcp_finish_connect leaves prediction off: the first ACK changes
    // the window (512 << 7 against the SYN-ACK's unscaled 65535) and turns it on.
    assert_eq!(next(&mut ep, &mut t, 512, 0), 0, "first ACK: slow path");
    assert_eq!(next(&mut ep, &mut t, 512, 0), 1, "same window: fast path");
    assert_eq!(next(&mut ep, &mut t, 512, TcpFlags::PSH), 2, "PSH is ignored by the prediction");
    assert_eq!(next(&mut ep, &mut t, 600, 0), 2, "a new window: slow path");
    assert_eq!(next(&mut ep, &mut t, 600, 0), 3, "predicted again with the new window");
    assert_eq!(next(&mut ep, &mut t, 600, TcpFlags::ECE), 3, "ECE: slow path");
    assert_eq!(next(&mut ep, &mut t, 600, 0), 4);
    // A duplicate ACK matches the prediction but advances nothing: tcp_ack's slow branch.
    t += SimTime::from_us(10);
    let dup = ack(t, acked, 600, &flight[0]);
    ep.on_segment(t, &dup, &mut out);
    assert_eq!(ep.stats().hp_acks, 4, "a duplicate ACK does not count as a fast-path ACK");
    assert_eq!(ep.sock().snd_una, acked);
    // A timestamp older than ts_recent fails PAWS in the fast path and is left to the slow path.
    t += SimTime::from_us(10);
    acked += MSS;
    let mut old = ack(t, acked, 600, &flight[0]);
    old.opts.timestamp = Some((tsval(t).wrapping_sub(1000), flight[0].opts.timestamp.unwrap().0));
    ep.on_segment(t, &old, &mut out);
    assert_eq!(ep.stats().hp_acks, 4, "PAWS failure: slow path");
    assert_eq!(ep.sock().snd_una, acked, "the slow path still takes the ACK (ccsim does not drop on PAWS)");
}

/// An established receiver (server side, window scale 7 both ways, timestamps) whose
/// application reads nothing, so that memory stays reserved for the socket.
fn receiver() -> (Endpoint, SimTime, u32) {
    let cfg = TcpConfig { cc: CcKind::Cubic, auto_read: false, ..TcpConfig::default() };
    let mut ep = Endpoint::listen(cfg, ISS);
    let mut out = Vec::new();
    let mut t = SimTime::from_ms(1);
    let syn_opts = TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        wscale: Some(7),
        timestamp: Some((tsval(t), 0)),
        ..TcpOptions::default()
    };
    let syn =
        Segment { seq: PEER_ISS, flags: TcpFlags(TcpFlags::SYN), win: 65535, opts: syn_opts, ..Segment::default() };
    ep.on_segment(t, &syn, &mut out);
    let synack = out.pop().expect("SYN-ACK");
    t += SimTime::from_us(100);
    let ts = TcpOptions { timestamp: Some((tsval(t), synack.opts.timestamp.unwrap().0)), ..TcpOptions::default() };
    let ack = Segment {
        seq: PEER_ISS + 1,
        ack: ISS + 1,
        flags: TcpFlags(TcpFlags::ACK),
        win: 512,
        opts: ts,
        ..Segment::default()
    };
    ep.on_segment(t, &ack, &mut out);
    assert!(ep.is_established());
    (ep, t, synack.opts.timestamp.unwrap().0)
}

#[test]
fn a_receiver_queues_in_order_data_on_the_fast_path_until_a_hole_appears() {
    let (mut ep, mut t, ecr) = receiver();
    let mut out = Vec::new();
    let data = |ep: &mut Endpoint, t: &mut SimTime, k: u32, flags: u8, out: &mut Vec<Segment>| {
        *t += SimTime::from_us(10);
        let seg = Segment {
            seq: PEER_ISS + 1 + k * MSS,
            ack: ISS + 1,
            len: MSS,
            flags: TcpFlags(TcpFlags::ACK | flags),
            win: 512,
            opts: TcpOptions { timestamp: Some((tsval(*t), ecr)), ..TcpOptions::default() },
            ..Segment::default()
        };
        ep.on_segment(*t, &seg, out);
        (ep.stats().hp_hits, ep.stats().data_segs_in)
    };
    // SYN_RECV -> ESTABLISHED turns prediction on (tcp_fast_path_on), but a predicted segment
    // takes the fast path only if its truesize (2304) fits in the memory already reserved for
    // the socket (sk_forward_alloc, reserved in 4096-byte pages): none for the first segment,
    // 1792 left after it.
    assert_eq!(data(&mut ep, &mut t, 0, TcpFlags::PSH, &mut out), (0, 1));
    assert_eq!(data(&mut ep, &mut t, 1, 0, &mut out), (0, 2));
    // Segment 3 before 2: out of order, slow path, prediction off.
    assert_eq!(data(&mut ep, &mut t, 3, 0, &mut out), (0, 3));
    let sack_ack = out.last().copied().expect("an immediate ACK for out-of-order data");
    assert_eq!(sack_ack.ack, PEER_ISS + 1 + 2 * MSS);
    assert_eq!(sack_ack.opts.sack_len, 1);
    // Segment 2 is in order but prediction is off; it fills the hole and turns it back on
    // (3072 bytes reserved after it).
    assert_eq!(data(&mut ep, &mut t, 2, 0, &mut out), (0, 4));
    assert_eq!(data(&mut ep, &mut t, 4, 0, &mut out), (1, 5), "predicted again once the hole is filled");
    // CWR is not a predicted flag.
    assert_eq!(data(&mut ep, &mut t, 5, TcpFlags::CWR, &mut out), (1, 6));
    assert_eq!(data(&mut ep, &mut t, 6, 0, &mut out), (2, 7));
    // A segment that is not the next one (a retransmission of old data) takes the slow path.
    assert_eq!(data(&mut ep, &mut t, 6, 0, &mut out), (2, 8));
    assert_eq!(ep.stats().bytes_received, 7 * MSS as u64);
}
