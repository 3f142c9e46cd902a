//! Seed-commit regressions exercised through the public dispatch API (`Cc`, `CcKind`,
//! `CcParams`), the way the TCP endpoint drives the modules.

use ccsim_cc::{AckEventFlags, CaEvent, CaState, Cc, CcInfo, CcKind, CcParams, CongestionOps, DctcpParams, Sock};

fn ecn_sock() -> Sock {
    Sock { snd_cwnd: 100, snd_nxt: 10_000, ecn_ok: true, is_cwnd_limited: true, ..Sock::default() }
}

fn alpha(cc: &Cc, sk: &Sock) -> u32 {
    match cc.get_info(sk) {
        CcInfo::Dctcp { alpha, .. } => alpha,
        other => panic!("expected dctcp info, got {other:?}"),
    }
}

/// One observation window of `n` delivered packets, `ce` with ECE.
fn window(cc: &mut Cc, sk: &mut Sock, n: u32, ce: u32) {
    sk.delivered += n;
    sk.delivered_ce += ce;
    sk.snd_una = sk.snd_nxt;
    sk.snd_nxt += n * 1448;
    cc.in_ack_event(sk, AckEventFlags::default());
}

#[test]
fn c80dbe0461_alpha_reaches_zero_through_dispatch() {
    let params = CcParams {
        dctcp: DctcpParams { shift_g: 4, alpha_on_init: 15, ..DctcpParams::default() },
        ..CcParams::default()
    };
    let mut cc = Cc::new(CcKind::Dctcp, &params);
    let mut sk = ecn_sock();
    cc.init(&mut sk);
    assert_eq!(alpha(&cc, &sk), 15);
    window(&mut cc, &mut sk, 10, 0);
    assert_eq!(alpha(&cc, &sk), 0);
}

#[test]
fn ce6dd23329_undo_restores_loss_cwnd_through_dispatch() {
    let mut cc = Cc::new(CcKind::Dctcp, &CcParams::default());
    let mut sk = ecn_sock();
    cc.init(&mut sk);
    // alpha 1024 -> 960 after one unmarked window; ssthresh = 100 - (100 * 960 >> 11) = 54.
    window(&mut cc, &mut sk, 10, 0);
    assert_eq!(alpha(&cc, &sk), 960);
    sk.snd_ssthresh = cc.ssthresh(&mut sk);
    assert_eq!(sk.snd_ssthresh, 54);
    sk.snd_cwnd = sk.snd_ssthresh;
    assert_eq!(cc.undo_cwnd(&mut sk), 100, "not ssthresh << 1 = 108");
}

#[test]
fn e3118e8359_fallback_is_reno_through_dispatch() {
    let mut cc = Cc::new(CcKind::Dctcp, &CcParams::default());
    assert!(cc.needs_ecn());
    let mut sk = ecn_sock();
    sk.ecn_ok = false;
    let infinite = sk.snd_ssthresh;
    cc.init(&mut sk);
    assert_eq!(cc.name(), "dctcp-reno");
    assert!(sk.requests.wants_ecn_dontxmit(), "INET_ECN_dontxmit");
    assert_eq!(cc.get_info(&sk), CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 });
    sk.snd_cwnd = 64;
    assert_eq!(cc.ssthresh(&mut sk), 32);
    cc.cwnd_event(&mut sk, CaEvent::Loss);
    cc.set_state(&mut sk, CaState::Recovery);
    assert_eq!(sk.snd_ssthresh, infinite, "dctcp-reno has no cwnd_event / set_state");
}

#[test]
fn cubic_is_dispatched_with_kernel_defaults() {
    let mut cc = Cc::new(CcKind::Cubic, &CcParams::default());
    let mut sk = Sock { snd_cwnd: 100, is_cwnd_limited: true, ..Sock::default() };
    cc.init(&mut sk);
    assert_eq!(cc.name(), "cubic");
    assert_eq!(cc.ssthresh(&mut sk), 70);
    assert_eq!(cc.get_info(&sk), CcInfo::None);
}
