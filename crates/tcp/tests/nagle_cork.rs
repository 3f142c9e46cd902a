//! The socket's Nagle state (`tp->nonagle`): TCP_CORK, MSG_MORE and TCP_NODELAY on a live
//! connection, and a write bounded by TCP_NOTSENT_LOWAT.

use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpOptions};

mod common;
use common::established_client;

fn client() -> (Endpoint, SimTime) {
    let (mut ep, t) = established_client(TcpConfig::default(), |_, _| TcpOptions {
        mss: Some(1000),
        sack_permitted: true,
        wscale: Some(7),
        ..TcpOptions::default()
    });
    ep.set_tx_orphan(true);
    (ep, t)
}

fn bytes(out: &[Segment]) -> u32 {
    out.iter().map(|s| s.len).sum()
}

#[test]
fn a_cork_holds_a_partial_segment_until_it_is_pulled() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.set_cork(t, true, &mut out);
    ep.write(t, 40, &mut out);
    ep.write(t, 40, &mut out);
    assert!(out.is_empty(), "corked: {out:?}");
    ep.set_cork(t, false, &mut out);
    assert_eq!(bytes(&out), 80, "uncorking pushes what is queued");
}

#[test]
fn msg_more_holds_only_the_partial_tail_and_only_for_that_send() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.set_nodelay(t, true, &mut out);
    ep.send(t, 3100, true, &mut out);
    assert_eq!(bytes(&out), 3000, "full segments leave, the 100-byte tail waits");
    out.clear();
    ep.send(t, 5, false, &mut out);
    assert_eq!(bytes(&out), 105, "the next send without MSG_MORE pushes with TCP_NODELAY");
}

#[test]
fn nodelay_on_a_live_socket_pushes_what_nagle_held() {
    let (mut ep, t) = client();
    let mut out = Vec::new();
    ep.write(t, 100, &mut out);
    assert_eq!(bytes(&out), 100, "nothing in flight: Nagle lets it go");
    out.clear();
    ep.write(t, 100, &mut out);
    assert!(out.is_empty(), "a small segment is unacknowledged: Nagle holds this one");
    ep.set_nodelay(t, true, &mut out);
    assert_eq!(bytes(&out), 100);
}

#[test]
fn a_not_sent_limit_bounds_a_non_blocking_write() {
    let (mut ep, t) = client();
    ep.set_notsent_lowat(4000);
    let mut out = Vec::new();
    // The peer's window is 65535 << 7; the size goal is 64 KB less a little, in whole MSS.
    let taken = ep.write_nonblocking(t, 200_000, false, &mut out);
    assert_eq!(bytes(&out), 10_000, "the initial window");
    assert!(taken > 10_000 && taken < 200_000, "took {taken}");
    assert!(!ep.writable(), "unsent data is well over half the limit");
    let again = ep.write_nonblocking(t, 1000, false, &mut out);
    assert_eq!(again, 0, "no new skb while the limit is exceeded (EAGAIN)");
}
