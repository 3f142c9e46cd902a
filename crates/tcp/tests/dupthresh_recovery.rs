//! Loss detection without RACK (`net.ipv4.tcp_recovery` = 0): a SACK sender marks a segment
//! lost once `reordering` (3) segments above it are SACKed (`tcp_update_scoreboard`,
//! `tcp_mark_head_lost`), and a lost retransmission is found only by the retransmission
//! timer. With RACK (the default) the same lost retransmission is found by the ACKs of data
//! sent after it.

use ccsim_cc::{CaState, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions};

mod common;
use common::{established_client, sack_sender, PEER_ISS};

/// An established SACK client (no timestamps) with a long transfer; returns it, the time and
/// its first flight of 10 segments.
fn sender(rack: bool) -> (Endpoint, SimTime, Vec<Segment>) {
    let (ep, t, out) = sack_sender(TcpConfig { cc: CcKind::Reno, rack, ..TcpConfig::default() }, 1_000_000);
    assert_eq!(out.len(), 10, "the initial window");
    (ep, t, out)
}

/// An ACK of `ack` carrying the SACK blocks `blocks`.
fn sack(ack: u32, blocks: &[(u32, u32)]) -> Segment {
    let mut opts = TcpOptions::default();
    for (i, b) in blocks.iter().enumerate() {
        opts.sack[i] = *b;
    }
    opts.sack_len = blocks.len() as u8;
    Segment { seq: PEER_ISS + 1, ack, flags: TcpFlags(TcpFlags::ACK), win: 65535, opts, ..Segment::default() }
}

fn data(out: &[Segment]) -> Vec<(u32, u32)> {
    out.iter().filter(|s| s.len > 0).map(|s| (s.seq, s.len)).collect()
}

#[test]
fn the_third_sacked_segment_above_a_hole_starts_recovery() {
    let (mut ep, mut t, f) = sender(false);
    let una = f[0].seq;
    let mut out = Vec::new();
    // Segment 0 lost; 1 and 2 SACKed: two duplicate ACKs, still below the threshold.
    for k in 1..=2 {
        t += SimTime::from_us(10);
        ep.on_segment(t, &sack(una, &[(f[1].seq, f[k].seq + f[k].len)]), &mut out);
    }
    assert_eq!(ep.sock().ca_state, CaState::Disorder);
    assert!(data(&out).iter().all(|&(s, _)| s != una), "no retransmission yet: {out:?}");
    // The third: tcp_time_to_recover's dupack rule, and the head is marked lost.
    t += SimTime::from_us(10);
    out.clear();
    ep.on_segment(t, &sack(una, &[(f[1].seq, f[3].seq + f[3].len)]), &mut out);
    assert_eq!(ep.sock().ca_state, CaState::Recovery);
    assert_eq!(ep.sock().lost_out, 1);
    assert_eq!(data(&out).first(), Some(&(una, f[0].len)), "fast retransmit of the head");
}

#[test]
fn a_hole_is_marked_lost_only_with_reordering_sacked_segments_above_it() {
    let (mut ep, mut t, f) = sender(false);
    let una = f[0].seq;
    let end = |k: usize| f[k].seq + f[k].len;
    let mut out = Vec::new();
    // Segments 0 and 2 lost; 1, 3, 4, 5 SACKed (four SACKed segments, reordering 3).
    let blocks = [vec![(f[1].seq, end(1))], vec![(f[1].seq, end(1)), (f[3].seq, end(3))]];
    for b in &blocks {
        t += SimTime::from_us(10);
        ep.on_segment(t, &sack(una, b), &mut out);
    }
    t += SimTime::from_us(10);
    out.clear();
    ep.on_segment(t, &sack(una, &[(f[3].seq, end(4)), (f[1].seq, end(1))]), &mut out);
    // Three SACKed: recovery; 3 - 3 = 0 SACKed segments may be passed, so the walk marks the
    // head and stops at segment 1. Segment 2 is a hole with only two SACKed above it.
    assert_eq!(ep.sock().ca_state, CaState::Recovery);
    assert_eq!((ep.sock().sacked_out, ep.sock().lost_out), (3, 1));
    assert_eq!(data(&out).first().map(|d| d.0), Some(una), "fast retransmit of the head");
    // A fourth: one SACKed segment (1) may be passed, and the walk marks segment 2 too.
    t += SimTime::from_us(10);
    out.clear();
    ep.on_segment(t, &sack(una, &[(f[3].seq, end(5)), (f[1].seq, end(1))]), &mut out);
    assert_eq!((ep.sock().sacked_out, ep.sock().lost_out), (4, 2), "segments 0 and 2, not 6..9");
}

fn after_or_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// Lose segment 0, enter recovery with three SACKs, then lose the retransmission too; the
/// ACKs that follow SACK everything sent after it. Returns the endpoint, the time, the
/// retransmission count after those ACKs and the first data segment sent for `una` after the
/// first retransmission (by an ACK or the timer), with its time.
fn lost_retransmission(rack: bool) -> (Endpoint, u64, SimTime, SimTime) {
    let (mut ep, mut t, f) = sender(rack);
    let una = f[0].seq;
    let mut out = Vec::new();
    let mut hi = f[1].seq;
    for k in 1..=3 {
        t += SimTime::from_us(10);
        hi = f[k].seq + f[k].len;
        ep.on_segment(t, &sack(una, &[(f[1].seq, hi)]), &mut out);
    }
    assert_eq!(ep.sock().ca_state, CaState::Recovery);
    assert!(data(&out).iter().any(|d| d.0 == una), "first retransmission");
    let first_retx_at = t;
    // Everything else arrives, and what recovery sends after the retransmission; the
    // retransmission itself is dropped.
    let mut sent_after: Vec<Segment> = out.iter().filter(|s| s.len > 0 && s.seq != una).copied().collect();
    sent_after.extend(f[4..].iter().copied());
    let mut rest = Vec::new();
    let mut again = None;
    let mut i = 0;
    while i < sent_after.len() && again.is_none() {
        let s = sent_after[i];
        i += 1;
        t += SimTime::from_us(20);
        if after_or_eq(s.seq + s.len, hi + 1) {
            hi = s.seq + s.len;
        }
        rest.clear();
        ep.on_segment(t, &sack(una, &[(f[1].seq, hi)]), &mut rest);
        for d in rest.iter().filter(|d| d.len > 0) {
            if d.seq == una {
                again = Some(t);
            } else if after_or_eq(d.seq, hi) {
                sent_after.push(*d);
            }
        }
    }
    let retrans = ep.stats().total_retrans;
    let at = match again {
        Some(a) => a,
        None => {
            // Only the retransmission timer is left.
            let at = ep.next_deadline().expect("a timer");
            rest.clear();
            ep.on_timer(at, &mut rest);
            assert_eq!(data(&rest).first().map(|d| d.0), Some(una), "the RTO sends the head again");
            at
        }
    };
    (ep, retrans, first_retx_at, at)
}

#[test]
fn without_rack_a_lost_retransmission_waits_for_the_rto() {
    let (ep, _, first, again) = lost_retransmission(false);
    assert_eq!(ep.stats().rto_count, 1, "found by the retransmission timer");
    assert_eq!(ep.stats().other_timeouts, 0, "a timeout in Recovery was TCPSackRecoveryFail, not \"other\"");
    assert!(again - first >= SimTime::from_ms(200), "after the RTO (min 200 ms): {:?}", again - first);
}

#[test]
fn with_rack_the_same_lost_retransmission_is_found_by_later_acks() {
    let (ep, _, first, again) = lost_retransmission(true);
    assert_eq!(ep.stats().rto_count, 0);
    assert!(again - first < SimTime::from_ms(5), "within the ACK clock: {:?}", again - first);
}

#[test]
fn a_whole_window_lost_times_out_in_open_state_an_other_timeout() {
    // Without a tail loss probe, nothing comes back: the RTO fires in Open with nothing
    // SACKed, which kernels before 2019 counted as "other TCP timeouts"; its repeat does not.
    let cfg = TcpConfig { cc: CcKind::Reno, tlp: false, ..TcpConfig::default() };
    let (mut ep, t) =
        established_client(cfg, |_, _| TcpOptions { mss: Some(1460), sack_permitted: true, ..TcpOptions::default() });
    let mut out = Vec::new();
    ep.write(t, 100_000, &mut out);
    for round in 1..=2 {
        let at = ep.next_deadline().expect("the retransmission timer");
        out.clear();
        ep.on_timer(at, &mut out);
        let st = ep.stats();
        assert_eq!((st.rto_count, st.other_timeouts), (round, 1));
    }
    assert_eq!(ep.sock().ca_state, CaState::Loss);
}

#[test]
fn a_dsack_counts_the_spurious_retransmission_as_delivered_unless_it_claims_too_much() {
    // RACK (default): three SACKs above segment 0 with no reordering seen mark it lost at once.
    let (mut ep, mut t, f) = sender(true);
    let una = f[0].seq;
    let end = |k: usize| f[k].seq + f[k].len;
    let mut out = Vec::new();
    for k in 1..=3 {
        t += SimTime::from_us(10);
        ep.on_segment(t, &sack(una, &[(f[1].seq, end(k))]), &mut out);
    }
    assert_eq!(ep.stats().total_retrans, 1, "segment 0 sent again");
    // Segment 0 was only late: its ACK covers 0..3; then the receiver reports the
    // retransmission as a duplicate, one segment below the cumulative ACK.
    t += SimTime::from_us(10);
    ep.on_segment(t, &sack(end(3), &[]), &mut out);
    let before = ep.sock().delivered;
    t += SimTime::from_us(10);
    ep.on_segment(t, &sack(end(3), &[(una, end(0))]), &mut out);
    assert_eq!(ep.stats().dsack_dups, 1);
    assert_eq!(ep.tcp_info().dsack_dups, 1);
    assert_eq!(ep.sock().delivered, before + 1, "the spurious retransmission was delivered");
    // A D-SACK of three segments when one was retransmitted is dubious: counted, then ignored.
    let before = ep.sock().delivered;
    t += SimTime::from_us(10);
    ep.on_segment(t, &sack(end(3), &[(una, end(2))]), &mut out);
    assert_eq!(ep.stats().dsack_dups, 4);
    assert_eq!(ep.sock().delivered, before, "not from this sender's retransmissions");
}
