//! When the flight is marked application-limited (`tp->app_limited`, which BBR and the delivery
//! rate read): as `tcp_sendmsg_locked` calls `tcp_rate_check_app_limited`, at each write that
//! finds less than a segment unsent, nothing of the socket in the host, cwnd not full and every
//! loss retransmitted — not when an ACK finds the write queue empty (`tcp_push_pending_frames`
//! runs `tcp_write_xmit` only with a send head).

use ccsim_cc::CcKind;
use ccsim_engine::SimTime;
use ccsim_tcp::{Segment, TcpConfig, TcpFlags};

mod common;
use common::{sack_sender, ISS, PEER_ISS};

const MSS: u32 = 1460;

fn ack(ack: u32) -> Segment {
    Segment { seq: PEER_ISS + 1, ack, flags: TcpFlags(TcpFlags::ACK), win: 512, ..Segment::default() }
}

#[test]
fn a_write_marks_the_flight_app_limited_and_an_ack_of_everything_does_not() {
    let cfg = TcpConfig { cc: CcKind::Cubic, ..TcpConfig::default() };
    let (mut ep, mut t, flight) = sack_sender(cfg, 2 * MSS as u64);
    assert_eq!(flight.len(), 2);
    let marked = ep.sock().app_limited;
    assert_ne!(marked, 0, "a write into an empty pipe marks the flight");

    // Both segments acknowledged: delivery passes the mark and clears it (tcp_rate_gen); the
    // ACK finds nothing to send and leaves the flight unmarked.
    let mut out = Vec::new();
    t += SimTime::from_us(100);
    ep.on_segment(t, &ack(ISS + 1 + 2 * MSS), &mut out);
    assert!(out.is_empty());
    assert_eq!(ep.sock().app_limited, 0, "an ACK that finds the write queue empty marks nothing");

    // The two segments still count as in the host's queue (no transmit completion yet): a
    // write then is not application-limited (sk_wmem_alloc holds more than an skb) ...
    t += SimTime::from_us(10);
    ep.write(t, MSS as u64, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(ep.sock().app_limited, 0, "data of the socket waits in the host");

    // ... and once they have left it, the next write is.
    t += SimTime::from_us(10);
    let mut none = Vec::new();
    ep.tsq_release(t, 3 * (MSS as u64 + 52), &mut none);
    ep.write(t, MSS as u64, &mut out);
    assert_ne!(ep.sock().app_limited, 0, "nothing in the host, cwnd not full: application-limited");
}
