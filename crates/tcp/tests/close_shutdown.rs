//! Closing a connection as the socket calls do it: `shutdown()` (inet_shutdown → tcp_shutdown),
//! `close()` (tcp_close, with the RST for unread data), the peer's FIN (tcp_fin) and a segment
//! that reaches a socket that is gone (tcp_v4_send_reset).

use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions, TcpState, RCV_SHUTDOWN, SEND_SHUTDOWN};

mod common;
use common::{established_client, ISS, PEER_ISS};

fn client() -> (Endpoint, SimTime) {
    // The application reads only when it calls read().
    established_client(TcpConfig { auto_read: false, ..TcpConfig::default() }, |_, _| TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        wscale: Some(7),
        ..TcpOptions::default()
    })
}

fn from_peer(seq_off: u32, len: u32, flags: u8, ack: u32) -> Segment {
    Segment { seq: PEER_ISS + 1 + seq_off, ack, len, flags: TcpFlags(flags), win: 65535, ..Segment::default() }
}

#[test]
fn shutdown_of_the_receive_side_sends_nothing_and_the_send_side_a_fin() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.shutdown(t, RCV_SHUTDOWN, &mut out);
    assert!(out.is_empty(), "SHUT_RD puts nothing on the wire: {out:?}");
    assert_eq!(ep.state(), TcpState::Established);
    ep.shutdown(t, SEND_SHUTDOWN, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].flags.has(TcpFlags::FIN));
    assert_eq!(ep.state(), TcpState::FinWait1);
    assert_eq!(ep.sk_shutdown(), RCV_SHUTDOWN | SEND_SHUTDOWN);
}

#[test]
fn close_with_unread_data_resets_and_later_segments_meet_a_reset() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.on_segment(t, &from_peer(0, 1000, TcpFlags::ACK, ISS + 1), &mut out);
    assert_eq!(ep.readable(), 1000);
    out.clear();
    let t = t + SimTime::from_ms(1);
    ep.app_close(t, &mut out);
    assert_eq!(out.len(), 1, "tcp_send_active_reset, no FIN: {out:?}");
    assert_eq!(out[0].flags.0, TcpFlags::RST | TcpFlags::ACK);
    assert_eq!((out[0].seq, out[0].ack), (ISS + 1, PEER_ISS + 1 + 1000));
    assert_eq!(ep.state(), TcpState::Closed);
    // The socket is gone: a segment with an ACK gets a RST at that ACK's sequence.
    out.clear();
    ep.on_segment(t + SimTime::from_ms(1), &from_peer(1000, 10, TcpFlags::ACK, ISS + 1), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags.0, TcpFlags::RST);
    assert_eq!(out[0].seq, ISS + 1);
    // A RST is never answered.
    out.clear();
    ep.on_segment(t + SimTime::from_ms(2), &from_peer(1010, 0, TcpFlags::RST, ISS + 1), &mut out);
    assert!(out.is_empty());
}

#[test]
fn a_bare_fin_before_any_data_is_acked_at_once() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.on_segment(t, &from_peer(0, 0, TcpFlags::ACK | TcpFlags::FIN, ISS + 1), &mut out);
    assert_eq!(ep.state(), TcpState::CloseWait);
    // tcp_fin schedules the ACK; with no data received ato is 0, so the delayed-ACK timer is
    // due now.
    if out.is_empty() {
        let at = ep.next_deadline().expect("a delayed ACK");
        assert_eq!(at, t);
        ep.on_timer(at, &mut out);
    }
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, PEER_ISS + 2);
    assert_ne!(ep.sk_shutdown() & RCV_SHUTDOWN, 0, "tcp_fin shuts the receive side");
}

#[test]
fn last_ack_ends_the_socket() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.on_segment(t, &from_peer(0, 0, TcpFlags::ACK | TcpFlags::FIN, ISS + 1), &mut out);
    out.clear();
    ep.app_close(t, &mut out);
    let fin = out.iter().find(|s| s.flags.has(TcpFlags::FIN)).expect("our FIN");
    assert_eq!(ep.state(), TcpState::LastAck);
    let fin_end = fin.seq + 1;
    out.clear();
    ep.on_segment(t + SimTime::from_ms(1), &from_peer(1, 0, TcpFlags::ACK, fin_end), &mut out);
    assert_eq!(ep.state(), TcpState::Closed);
    assert!(out.is_empty());
    ep.on_segment(t + SimTime::from_ms(2), &from_peer(1, 0, TcpFlags::ACK, fin_end), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags.0, TcpFlags::RST);
}
