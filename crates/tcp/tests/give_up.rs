//! `tcp_write_timeout`: a connection whose peer is gone stops retransmitting — a SYN after
//! `tcp_syn_retries` (6) retransmissions, data once `tcp_retries2` (15) retransmissions' worth of
//! backoff from 200 ms has passed since the first one (924.6 s) — and closes with ETIMEDOUT, as
//! Linux's `tcp_write_err` does. Without it a silent peer keeps a socket's timers running forever.

mod common;

use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpState};
use common::{sack_sender, ISS, PEER_ISS};

/// Run the endpoint's timers until it has none; returns the time of the last one and how many
/// segments it sent.
fn run_out(ep: &mut Endpoint, limit: SimTime) -> (SimTime, usize) {
    let mut sent = 0;
    let mut last = SimTime::ZERO;
    let mut out = Vec::new();
    while let Some(d) = ep.next_deadline() {
        assert!(d < limit, "still retransmitting at {d:?}");
        ep.on_timer(d, &mut out);
        sent += out.len();
        out.clear();
        last = d;
    }
    (last, sent)
}

#[test]
fn an_unanswered_syn_is_given_up_after_six_retransmissions() {
    let mut ep = Endpoint::client(TcpConfig::default(), 1);
    let mut out = Vec::new();
    ep.connect(SimTime::ZERO, &mut out);
    let (last, sent) = run_out(&mut ep, SimTime::from_secs(1000));
    // SYN at 0, retransmitted at 1, 3, 7, 15, 31, 63 s; given up at 127 s.
    assert_eq!(sent, 6);
    assert_eq!(last, SimTime::from_secs(127));
    assert_eq!(ep.state(), TcpState::Closed);
    assert_eq!(ep.stats().write_timeouts, 1);
}

#[test]
fn data_a_silent_peer_never_acknowledges_is_given_up_after_tcp_retries2() {
    let (mut ep, t0, first) = sack_sender(TcpConfig::default(), 100_000);
    assert!(!first.is_empty());
    let (last, sent) = run_out(&mut ep, SimTime::from_secs(5000));
    assert_eq!(ep.state(), TcpState::Closed);
    assert_eq!(ep.stats().write_timeouts, 1);
    // The first retransmission is the first RTO (1 s without an RTT sample of the data); the
    // connection ends at the first timeout at least 924.6 s after it.
    let first_rto = t0 + SimTime::from_secs(1);
    assert!(last >= first_rto + SimTime::from_ms(924_600), "{last:?}");
    assert!(last < first_rto + SimTime::from_ms(924_600) + SimTime::from_secs(120), "{last:?}");
    assert!(sent > 0 && sent < 30, "retransmissions with backoff: {sent}");
    assert!(ep.next_deadline().is_none());
}

/// The client after its first flight was acknowledged with a zero window: data waits, the
/// zero-window probe timer runs.
fn zero_window_client() -> (Endpoint, SimTime) {
    let (mut ep, t, first) = sack_sender(TcpConfig::default(), 100_000);
    let sent: u32 = first.iter().map(|s| s.len).sum();
    let ack = Segment {
        seq: PEER_ISS + 1,
        ack: ISS + 1 + sent,
        flags: TcpFlags(TcpFlags::ACK),
        win: 0,
        ..Segment::default()
    };
    let t = t + SimTime::from_us(200);
    let mut out = Vec::new();
    ep.on_segment(t, &ack, &mut out);
    assert!(ep.next_deadline().is_some(), "the probe timer runs");
    (ep, t)
}

#[test]
fn a_zero_window_peer_that_answers_no_probe_is_given_up_after_tcp_retries2_probes() {
    let (mut ep, _) = zero_window_client();
    let (_, sent) = run_out(&mut ep, SimTime::from_secs(100_000));
    assert_eq!(sent, 15, "tcp_retries2 probes, then tcp_write_err");
    assert_eq!(ep.state(), TcpState::Closed);
    assert_eq!(ep.stats().write_timeouts, 1);
}

#[test]
fn a_zero_window_peer_that_answers_its_probes_keeps_the_connection() {
    let (mut ep, _) = zero_window_client();
    let mut out = Vec::new();
    for _ in 0..40 {
        let d = ep.next_deadline().expect("probing goes on");
        ep.on_timer(d, &mut out);
        let probe = out.pop().expect("a probe");
        out.clear();
        // The peer answers every probe, its window still closed.
        let ack = Segment {
            seq: PEER_ISS + 1,
            ack: probe.seq.wrapping_add(1),
            flags: TcpFlags(TcpFlags::ACK),
            win: 0,
            ..Segment::default()
        };
        ep.on_segment(d + SimTime::from_us(100), &ack, &mut out);
        out.clear();
    }
    assert_eq!(ep.state(), TcpState::Established);
    assert_eq!(ep.stats().write_timeouts, 0);
}
