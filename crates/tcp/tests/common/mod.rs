//! Helpers shared by the endpoint's integration tests.

use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, Segment, TcpConfig, TcpFlags, TcpOptions};

/// The endpoint's initial sequence number, and its peer's.
pub const ISS: u32 = 1_000_000;
pub const PEER_ISS: u32 = 5_000_000;

/// A client that sent its SYN at 1 ms and got the SYN-ACK 100 µs later, with the options
/// `synack_opts` gives for that SYN and time; returns it and the time, nothing left to send.
pub fn established_client(
    cfg: TcpConfig,
    synack_opts: impl FnOnce(&Segment, SimTime) -> TcpOptions,
) -> (Endpoint, SimTime) {
    let mut ep = Endpoint::client(cfg, ISS);
    let mut out = Vec::new();
    let mut t = SimTime::from_ms(1);
    ep.connect(t, &mut out);
    let syn = out[0];
    out.clear();
    t += SimTime::from_us(100);
    let synack = Segment {
        seq: PEER_ISS,
        ack: ISS + 1,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ACK),
        win: 65535,
        opts: synack_opts(&syn, t),
        ..Segment::default()
    };
    ep.on_segment(t, &synack, &mut out);
    assert!(ep.is_established());
    (ep, t)
}

/// An established client whose peer offered MSS 1460, SACK and window scale 7 (no timestamps),
/// with `bytes` written: returns it, the time and the first flight it sent.
#[allow(dead_code)] // not every test file uses every helper
pub fn sack_sender(cfg: TcpConfig, bytes: u64) -> (Endpoint, SimTime, Vec<Segment>) {
    let (mut ep, t) = established_client(cfg, |_, _| TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        wscale: Some(7),
        ..TcpOptions::default()
    });
    let mut out = Vec::new();
    ep.write(t, bytes, &mut out);
    (ep, t, out)
}
