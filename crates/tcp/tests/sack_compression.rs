//! SACK compression at a receiver with out-of-order data (`__tcp_ack_snd_check`,
//! `tcp_sack_new_ofo_skb`): after three immediate duplicate ACKs the next ones are held back,
//! but before a SACK block is pushed past the first two places a held-back ACK goes out
//! (`tcp_sack_compress_send_ack`, TCP_SACK_BLOCKS_EXPECTED), so every block is reported near
//! the front at least once.

use ccsim_cc::CcKind;
use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions};

mod common;
use common::{established_client, ISS, PEER_ISS};

const MSS: u32 = 1460;

/// An established client (SACK, no timestamps, no window scaling) receiving from the peer, with
/// a window that has stopped growing: while `tcp_grow_window` opens it every segment, out of
/// order or not, is ACKed at once (quick ACKs), which would leave nothing to compress. Under the
/// rules before Linux 6.6 a receiver without window scaling starts at its 65535 clamp.
fn receiver() -> (Endpoint, SimTime) {
    let cfg =
        TcpConfig { cc: CcKind::Cubic, rcv_window_rules: ccsim_tcp::RcvWindowRules::Pre6_6, ..TcpConfig::default() };
    established_client(cfg, |_, _| TcpOptions { mss: Some(1460), sack_permitted: true, ..TcpOptions::default() })
}

/// The peer's data segment number `k` (0 is the next one the receiver expects).
fn data(k: u32) -> Segment {
    Segment {
        seq: PEER_ISS + 1 + k * MSS,
        ack: ISS + 1,
        len: MSS,
        flags: TcpFlags(TcpFlags::ACK),
        win: 65535,
        ..Segment::default()
    }
}

fn blocks(k: &[(u32, u32)]) -> Vec<(u32, u32)> {
    k.iter().map(|&(a, b)| (PEER_ISS + 1 + a * MSS, PEER_ISS + 1 + b * MSS)).collect()
}

#[test]
fn a_held_back_sack_goes_out_before_a_block_moves_to_third_place() {
    let (mut ep, mut t) = receiver();
    let mut out = Vec::new();
    let feed = |ep: &mut Endpoint, t: &mut SimTime, k: u32, out: &mut Vec<Segment>| {
        *t += SimTime::from_ns(500); // well inside the compression delay
        out.clear();
        ep.on_segment(*t, &data(k), out);
    };
    // Segment 0 is missing. 1, 2, 3: three duplicate ACKs at once, each with block A.
    for k in 1..=3 {
        feed(&mut ep, &mut t, k, &mut out);
        assert_eq!(out.len(), 1, "duplicate ACK {k} goes out at once");
    }
    // 4 extends A: held back. 6 starts block B (5 missing): B, A; still two blocks, held back.
    feed(&mut ep, &mut t, 4, &mut out);
    assert!(out.is_empty(), "compressed: {out:?}");
    feed(&mut ep, &mut t, 6, &mut out);
    assert!(out.is_empty(), "compressed: {out:?}");
    // 8 starts block C (7 missing), which would push A to third place: the held-back ACK goes
    // out first, reporting B and A in full.
    feed(&mut ep, &mut t, 8, &mut out);
    assert_eq!(out.len(), 1, "the held-back ACK: {out:?}");
    assert_eq!(out[0].ack, PEER_ISS + 1);
    assert_eq!(out[0].opts.sack_blocks(), &blocks(&[(6, 7), (1, 5)])[..]);
    // 9 extends C, the first block: held back again.
    feed(&mut ep, &mut t, 9, &mut out);
    assert!(out.is_empty(), "compressed: {out:?}");
    // 5 fills the hole between A and B, whose merged block is in second place: no early ACK.
    feed(&mut ep, &mut t, 5, &mut out);
    assert!(out.is_empty(), "compressed: {out:?}");
    // The compression timer sends the rest: the merged block first, then C.
    let at = ep.next_deadline().expect("the SACK compression timer");
    out.clear();
    ep.on_timer(at, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].opts.sack_blocks(), &blocks(&[(1, 7), (8, 10)])[..]);
}

#[test]
fn a_duplicate_segment_is_acked_at_once_with_a_dsack() {
    let (mut ep, mut t) = receiver();
    let mut out = Vec::new();
    for k in 0..2 {
        t += SimTime::from_us(5);
        ep.on_segment(t, &data(k), &mut out);
    }
    // Segment 0 again (a spurious retransmission): tcp_send_dupack.
    t += SimTime::from_us(5);
    out.clear();
    ep.on_segment(t, &data(0), &mut out);
    assert_eq!(out.len(), 1, "an immediate ACK: {out:?}");
    assert_eq!(out[0].ack, PEER_ISS + 1 + 2 * MSS);
    assert_eq!(out[0].opts.sack_blocks(), &blocks(&[(0, 1)])[..], "the D-SACK block");
    // The D-SACK is reported once.
    t += SimTime::from_us(5);
    out.clear();
    ep.on_segment(t, &data(3), &mut out);
    assert!(out.iter().all(|s| s.opts.sack_blocks().first() != Some(&blocks(&[(0, 1)])[0])), "{out:?}");
}
