//! DCTCP as FreeBSD runs it (`sys/netinet/cc/cc_dctcp.c`, `cc_dctcp(4)`), mapped onto ccsim's
//! Linux-shaped hooks.
//!
//! What differs from Linux's DCTCP ([`crate::Dctcp`]):
//! - alpha is estimated from **bytes**: per window, the bytes cumulatively acked by ACKs with ECE
//!   over all bytes acked, with a delayed-ACK correction (`dctcp_ack_received`): an ACK of more
//!   than one MSS on which ECE turns on counts only `bytes - MSS` as marked (the first segment it
//!   covers arrived before the CE state changed), and one on which ECE turns off still counts one
//!   MSS as marked. The decay has no `min_not_zero`: without marks alpha stops at
//!   `2^shift_g - 1`, not 0.
//! - the window for alpha ends when the ACK passes `save_sndnxt` (strictly), outside fast
//!   recovery; alpha is also updated when fast recovery ends (`dctcp_post_recovery`) and on an
//!   RTO.
//! - the ECN reaction is immediate: at the first ECE of a window, ssthresh = max(cwnd −
//!   cwnd·alpha/2^11, 2) and cwnd = ssthresh at once (`dctcp_cong_signal(CC_ECN)`); FreeBSD has
//!   no PRR on ECN, and the module keeps growing cwnd (NewReno) during the reduced window ("DCTCP
//!   always executes the ACK processing out of congestion recovery"). The stack therefore must
//!   not enter CWR: the module declares [`CongestionOps::handles_ece`], does the cut in
//!   `in_ack_event`, and asks for CWR on the next data segment with
//!   [`CcRequests::queue_cwr`](crate::CcRequests::queue_cwr) — which
//!   is what makes a classic-ECN receiver stop echoing ECE (the one-sided sender modification).
//! - `slowstart` = 1: the first congestion event, if it is an ECN one, halves cwnd and sets
//!   alpha to 1 instead.
//! - losses: a dupack-detected loss halves (ssthresh = max(cwnd/2, 2)), from the cwnd before an
//!   ECN cut of the same window if there was one; an RTO halves (the stack's `CC_RTO`), updates
//!   alpha and starts a new window one MSS past snd_una.
//! - receiver: ECE mirrors the CE bit of the last data segment; when the CE state changes while
//!   an ACK is being delayed the ACK goes out at once (for everything received, with the new ECE
//!   state — no Linux-style flush of the held-back ACK with the old state, which the sender's
//!   correction above accounts for); a data segment with CWR keeps the ACK delayed (the one-sided
//!   receiver modification, [`Sock::delack_on_cwr`] / [`Sock::rx_cwr`]).
//! - without ECN the module is plain NewReno (Reno arithmetic here) and stops sending ECT.
//!
//! ccsim counts cwnd and ssthresh in packets (Linux); FreeBSD counts bytes. The formulas are
//! applied to packets with `2 * mss` as 2 packets; alpha's byte counts use sequence space.
//! Growth is Linux's `tcp_reno_cong_avoid` (FreeBSD: NewReno with ABC). FreeBSD's stack state
//! that the Linux-shaped endpoint lacks (`IN_CONGRECOVERY`, `snd_recover`, `snd_cwnd_prev`) is
//! kept in the module.
//!
//! Left to the endpoint, so Linux's: loss detection and recovery (SACK/RACK, PRR in fast
//! recovery), undo, the delayed-ACK engine, and ECT marking — `needs_ecn` makes the endpoint keep
//! ECT on pure ACKs and retransmissions and (with `TcpConfig::syn_ect`) on the SYN, which FreeBSD
//! does not do. On the ACK that ends fast recovery, `dctcp_post_recovery` runs after that ACK's
//! bytes were counted (FreeBSD counts them into the next window).

use crate::seq::before;
use crate::{
    tcp_reno_cong_avoid, tcp_reno_ssthresh, tcp_reno_undo_cwnd, AckEventFlags, CaEvent, CaState, CcInfo, CongestionOps,
    Sock,
};

/// `DCTCP_SHIFT`: alpha is in 1/2^10.
const DCTCP_SHIFT: u32 = 10;
/// `MAX_ALPHA_VALUE`: alpha = 1.0.
const MAX_ALPHA_VALUE: u32 = 1 << DCTCP_SHIFT;

/// `net.inet.tcp.cc.dctcp.*`.
#[derive(Clone, Debug, PartialEq)]
pub struct FreebsdDctcpParams {
    /// `alpha`: alpha at connection start (and after idle) in 1/1024, 0..=1024, default 1024.
    pub alpha: u32,
    /// `shift_g`: EWMA gain g = 2^-shift_g, 0..=10, default 4.
    pub shift_g: u32,
    /// `slowstart`: halve cwnd (alpha = 1) at the first congestion event, default off.
    pub slowstart: bool,
}

impl Default for FreebsdDctcpParams {
    fn default() -> Self {
        FreebsdDctcpParams { alpha: MAX_ALPHA_VALUE, shift_g: 4, slowstart: false }
    }
}

impl FreebsdDctcpParams {
    /// Reject what the sysctl handlers do (`dctcp_alpha_handler`, `dctcp_shift_g_handler`;
    /// `slowstart` is a bool here, so its `> 1` check cannot fail).
    pub fn validate(&self) -> Result<(), String> {
        if self.alpha > MAX_ALPHA_VALUE {
            return Err(format!("freebsd-dctcp alpha {} must be 0..={MAX_ALPHA_VALUE}", self.alpha));
        }
        if self.shift_g > DCTCP_SHIFT {
            return Err(format!("freebsd-dctcp shift_g {} must be 0..={DCTCP_SHIFT}", self.shift_g));
        }
        Ok(())
    }
}

/// FreeBSD DCTCP (`struct dctcp` plus the stack state it relies on).
#[derive(Clone, Debug)]
pub struct FreebsdDctcp {
    /// `bytes_ecn`: marked bytes in the current window.
    bytes_ecn: u32,
    /// `bytes_total`: acked bytes in the current window.
    bytes_total: u32,
    /// `alpha`, in 1/1024.
    alpha: u32,
    /// `ce_prev`: the last data segment received was CE (receiver).
    ce_prev: bool,
    /// `save_sndnxt`: the window ends when an ACK passes this sequence.
    save_sndnxt: u32,
    /// `ece_prev`: the previous ACK carried ECE.
    ece_prev: bool,
    /// `num_cong_events`.
    num_cong_events: u32,
    /// `IN_CONGRECOVERY(t_flags)`: a reduction was made in this window (ECN, or fast recovery).
    cong_recovery: bool,
    /// `snd_recover`: congestion recovery ends when snd_una reaches it.
    snd_recover: u32,
    /// `snd_cwnd_prev`: cwnd at the last ECE.
    snd_cwnd_prev: u32,
    /// snd_una at the previous ACK, for `BYTES_THIS_ACK` (`th_ack - snd_una`).
    prior_una: u32,
    /// ECN was not negotiated: NewReno (`TF_ECN_PERMIT` clear).
    fallback: bool,
    alpha_init: u16,
    shift_g: u8,
    slowstart: bool,
}

impl FreebsdDctcp {
    pub fn new(params: FreebsdDctcpParams) -> FreebsdDctcp {
        FreebsdDctcp {
            bytes_ecn: 0,
            bytes_total: 0,
            alpha: 0,
            ce_prev: false,
            save_sndnxt: 0,
            ece_prev: false,
            num_cong_events: 0,
            cong_recovery: false,
            snd_recover: 0,
            snd_cwnd_prev: 0,
            prior_una: 0,
            fallback: false,
            // The sysctl handlers refuse larger values; clamp so the shifts stay defined.
            alpha_init: params.alpha.min(MAX_ALPHA_VALUE) as u16,
            shift_g: params.shift_g.min(DCTCP_SHIFT) as u8,
            slowstart: params.slowstart,
        }
    }

    /// Current alpha in 1/1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// Marked and total bytes counted so far in the current window.
    pub fn window_bytes(&self) -> (u32, u32) {
        (self.bytes_ecn, self.bytes_total)
    }

    /// The module is in congestion recovery (`IN_CONGRECOVERY`): no further ECN reduction
    /// until snd_una reaches [`Self::snd_recover`].
    pub fn in_cong_recovery(&self) -> bool {
        self.cong_recovery
    }

    pub fn snd_recover(&self) -> u32 {
        self.snd_recover
    }

    /// `num_cong_events`.
    pub fn num_cong_events(&self) -> u32 {
        self.num_cong_events
    }

    /// ECN was not negotiated: NewReno.
    pub fn is_fallback(&self) -> bool {
        self.fallback
    }

    /// `dctcp_update_alpha`: alpha = (1 - g) * alpha + g * bytes_ecn / bytes_total, then a new
    /// window up to snd_nxt.
    fn update_alpha(&mut self, sk: &Sock) {
        let total = u64::from(self.bytes_total.max(1));
        let a = u64::from(self.alpha);
        let g = u32::from(self.shift_g);
        // No min_not_zero: alpha >> g is 0 below 2^g, and alpha stays there without marks.
        let a = a - (a >> g) + (u64::from(self.bytes_ecn) << (DCTCP_SHIFT - g)) / total;
        self.alpha = a.min(u64::from(MAX_ALPHA_VALUE)) as u32;
        self.bytes_ecn = 0;
        self.bytes_total = 0;
        self.save_sndnxt = sk.snd_nxt;
    }

    /// The `CC_ECN` arm of `dctcp_cong_signal`, with what the stack's `cc_cong_signal` adds:
    /// once per window, cut cwnd to ssthresh at once and queue CWR.
    fn cong_signal_ecn(&mut self, sk: &mut Sock) {
        let cwin = sk.snd_cwnd;
        // Saved on every ECE, for a loss detected inside the reduced window.
        self.snd_cwnd_prev = cwin;
        if self.cong_recovery {
            return;
        }
        let first_event = self.slowstart && {
            let n = self.num_cong_events;
            self.num_cong_events += 1;
            n == 0
        };
        if first_event {
            sk.snd_ssthresh = (cwin / 2).max(2);
            self.alpha = MAX_ALPHA_VALUE;
            self.bytes_ecn = 0;
            self.bytes_total = 0;
            self.save_sndnxt = sk.snd_nxt;
        } else {
            let cut = (u64::from(cwin) * u64::from(self.alpha)) >> (DCTCP_SHIFT + 1);
            sk.snd_ssthresh = (cwin - cut as u32).max(2);
        }
        sk.snd_cwnd = sk.snd_ssthresh;
        // ENTER_CONGRECOVERY; cc_cong_signal: snd_recover = snd_max, TF_ECN_SND_CWR.
        self.cong_recovery = true;
        self.snd_recover = sk.snd_nxt;
        sk.requests.queue_cwr();
    }

    /// `dctcp_ack_received` (the ECN part): count this ACK's bytes, with the delayed-ACK
    /// correction, and close the window once the ACK passes `save_sndnxt`.
    fn ack_received(&mut self, sk: &Sock, ece_curr: bool) {
        // BYTES_THIS_ACK; 0 for a duplicate ACK (CC_DUPACK: min(bytes_this_ack, t_maxseg)).
        let bytes_acked = sk.snd_una.wrapping_sub(self.prior_una);
        let mss = sk.mss_cache;
        self.bytes_total = self.bytes_total.wrapping_add(bytes_acked);
        if ece_curr {
            // ECE turns on: the first segment of a delayed ACK was not marked.
            let marked = if !self.ece_prev && bytes_acked > mss { bytes_acked - mss } else { bytes_acked };
            self.bytes_ecn = self.bytes_ecn.wrapping_add(marked);
            self.ece_prev = true;
        } else {
            // ECE turns off: the first segment of a delayed ACK was still marked.
            if self.ece_prev && bytes_acked > mss {
                self.bytes_ecn = self.bytes_ecn.wrapping_add(mss);
            }
            self.ece_prev = false;
        }
        if sk.ca_state != CaState::Recovery && before(self.save_sndnxt, sk.snd_una) {
            self.update_alpha(sk);
        }
    }

    /// `dctcp_ecnpkt_handler`: ECE mirrors CE; ACK at once when the CE state changes while an
    /// ACK is being delayed, unless the segment carries CWR.
    fn ecnpkt_handler(&mut self, sk: &mut Sock, ce: bool) {
        let delack = sk.ack_timer_pending; // CCF_DELACK
        let mut delay_ack = true;
        if ce != self.ce_prev && delack {
            delay_ack = false;
        }
        self.ce_prev = ce;
        // TF_ECN_SND_ECE
        sk.ecn_demand_cwr = ce;
        // "DCTCP sets delayed ack when this segment sets the CWR flag."
        if delack && sk.rx_cwr {
            delay_ack = true;
        }
        if !delay_ack {
            sk.requests.ack_now(); // CCF_ACKNOW
        }
    }

    /// `dctcp_after_idle`: start over as after `dctcp_cb_init` / `dctcp_conn_init`.
    fn after_idle(&mut self, sk: &Sock) {
        self.bytes_ecn = 0;
        self.bytes_total = 0;
        self.save_sndnxt = sk.snd_nxt;
        self.alpha = u32::from(self.alpha_init);
        self.ece_prev = false;
        self.num_cong_events = 0;
    }
}

impl Default for FreebsdDctcp {
    fn default() -> Self {
        FreebsdDctcp::new(FreebsdDctcpParams::default())
    }
}

impl CongestionOps for FreebsdDctcp {
    fn name(&self) -> &'static str {
        "freebsd-dctcp"
    }

    /// FreeBSD needs `net.inet.tcp.ecn.enable` for DCTCP; ccsim negotiates ECN for it as for
    /// Linux's `TCP_CONG_NEEDS_ECN`.
    fn needs_ecn(&self) -> bool {
        true
    }

    fn handles_ece(&self) -> bool {
        !self.fallback
    }

    /// `dctcp_cb_init` + `dctcp_conn_init`.
    fn init(&mut self, sk: &mut Sock) {
        if !sk.ecn_ok {
            // NewReno; FreeBSD sends ECT only with TF_ECN_PERMIT.
            self.fallback = true;
            sk.requests.ecn_dontxmit();
            return;
        }
        self.fallback = false;
        self.bytes_ecn = 0;
        self.bytes_total = 0;
        self.alpha = u32::from(self.alpha_init);
        self.ce_prev = false;
        self.ece_prev = false;
        self.num_cong_events = 0;
        self.cong_recovery = false;
        self.save_sndnxt = sk.snd_nxt;
        self.prior_una = sk.snd_una;
        sk.delack_on_cwr = true;
    }

    /// The loss arms of `dctcp_cong_signal`; the stack calls this when it enters fast recovery
    /// (and on an RTO, where `cwnd_event(Loss)` then applies the stack's `CC_RTO` halving).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        if self.fallback {
            return tcp_reno_ssthresh(sk);
        }
        // CC_NDUPACK: halve; inside a window already cut for ECN, halve the cwnd before the cut.
        let cwin = if self.cong_recovery { self.snd_cwnd_prev } else { sk.snd_cwnd };
        (cwin / 2).max(2)
    }

    /// `newreno_cc_algo.ack_received`, in Linux's Reno arithmetic.
    fn cong_avoid(&mut self, sk: &mut Sock, ack: u32, acked: u32) {
        tcp_reno_cong_avoid(sk, ack, acked)
    }

    /// Entering fast recovery is `cc_cong_signal(CC_NDUPACK)`; leaving it for Open/Disorder is
    /// `dctcp_post_recovery`; every RTO (`Loss`) is `dctcp_cong_signal(CC_RTO)`.
    fn set_state(&mut self, sk: &mut Sock, new: CaState) {
        if self.fallback {
            return;
        }
        let old = sk.ca_state;
        match new {
            CaState::Recovery if old != CaState::Recovery => {
                if !self.cong_recovery {
                    self.num_cong_events += 1;
                }
                // ENTER_RECOVERY, snd_recover = snd_max.
                self.cong_recovery = true;
                self.snd_recover = sk.snd_nxt;
            }
            CaState::Loss => {
                // The stack has rewound snd_nxt to snd_una at this point (tcp_timer_rexmt), so
                // the next window ends one MSS past snd_una.
                self.update_alpha(sk);
                self.save_sndnxt = sk.snd_una.wrapping_add(sk.mss_cache);
                self.num_cong_events += 1;
                // cc_cong_signal(CC_RTO): EXIT_RECOVERY. The CWR it sets (TF_ECN_SND_CWR) the
                // stack queues itself in tcp_enter_loss.
                self.cong_recovery = false;
            }
            CaState::Open | CaState::Disorder if old == CaState::Recovery => {
                self.update_alpha(sk);
                self.cong_recovery = false;
            }
            _ => {}
        }
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if self.fallback {
            return;
        }
        match ev {
            CaEvent::EcnIsCe | CaEvent::EcnNoCe => self.ecnpkt_handler(sk, ev == CaEvent::EcnIsCe),
            // cc_cong_signal(CC_RTO): ssthresh from the current cwnd, not from before an ECN cut.
            CaEvent::Loss => sk.snd_ssthresh = tcp_reno_ssthresh(sk),
            CaEvent::CwndRestart => self.after_idle(sk),
            _ => {}
        }
    }

    /// Per ACK, in FreeBSD's order: `cc_cong_signal(CC_ECN)` if the ACK has ECE (before the
    /// ACK is processed), `dctcp_ack_received`, then `EXIT_RECOVERY` once snd_una reaches
    /// snd_recover.
    fn in_ack_event(&mut self, sk: &mut Sock, flags: AckEventFlags) {
        if self.fallback {
            return;
        }
        if flags.ece {
            self.cong_signal_ecn(sk);
        }
        self.ack_received(sk, flags.ece);
        self.prior_una = sk.snd_una;
        if self.cong_recovery && sk.ca_state != CaState::Recovery && !before(sk.snd_una, self.snd_recover) {
            self.cong_recovery = false;
        }
    }

    /// FreeBSD undoes a spurious RTO with `snd_cwnd_prev` (`CC_RTO_ERR`); Reno's undo is the
    /// equivalent the stack offers.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_undo_cwnd(sk)
    }

    /// Exported in `tcp_dctcp_info`'s shape: `ab_ecn` / `ab_tot` are the module's byte counters.
    fn get_info(&self, _sk: &Sock) -> CcInfo {
        if self.fallback {
            return CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 };
        }
        CcInfo::Dctcp {
            enabled: true,
            ce_state: u16::from(self.ce_prev),
            alpha: self.alpha,
            ab_ecn: self.bytes_ecn,
            ab_tot: self.bytes_total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sock::TCP_INFINITE_SSTHRESH;
    use crate::CcRequests;
    use crate::{Cc, CcKind, CcParams};

    const MSS: u32 = 1000;

    /// An established ECN connection: cwnd 100, window [50000, 60000) in flight.
    fn ecn_sock() -> Sock {
        Sock {
            snd_cwnd: 100,
            snd_una: 50_000,
            snd_nxt: 60_000,
            mss_cache: MSS,
            ecn_ok: true,
            is_cwnd_limited: true,
            ..Sock::default()
        }
    }

    fn fdctcp(alpha: u32, shift_g: u32, slowstart: bool) -> (FreebsdDctcp, Sock) {
        let mut d = FreebsdDctcp::new(FreebsdDctcpParams { alpha, shift_g, slowstart });
        let mut sk = ecn_sock();
        d.init(&mut sk);
        (d, sk)
    }

    /// A cumulative ACK of `bytes` more, with or without ECE, as the stack delivers it.
    fn ack(d: &mut FreebsdDctcp, sk: &mut Sock, bytes: u32, ece: bool) {
        sk.snd_una = sk.snd_una.wrapping_add(bytes);
        d.in_ack_event(sk, AckEventFlags { ece, ..AckEventFlags::default() });
    }

    /// dctcp_update_alpha in exact arithmetic.
    fn exact_alpha(alpha: u32, g: u32, ecn: u64, total: u64) -> u32 {
        let a = alpha as u128;
        let a = a - (a >> g) + ((ecn as u128) << (10 - g)) / (total.max(1) as u128);
        a.min(1024) as u32
    }

    #[test]
    fn params_and_init() {
        assert_eq!(FreebsdDctcpParams::default(), FreebsdDctcpParams { alpha: 1024, shift_g: 4, slowstart: false });
        assert!(FreebsdDctcpParams::default().validate().is_ok());
        assert!(FreebsdDctcpParams { alpha: 0, shift_g: 10, slowstart: true }.validate().is_ok());
        assert!(FreebsdDctcpParams { alpha: 1025, ..Default::default() }.validate().is_err());
        assert!(FreebsdDctcpParams { shift_g: 11, ..Default::default() }.validate().is_err());

        let (d, sk) = fdctcp(1024, 4, false);
        assert_eq!(d.name(), "freebsd-dctcp");
        assert!(d.needs_ecn() && d.handles_ece() && !d.is_fallback());
        assert_eq!(d.alpha(), 1024);
        assert_eq!(d.window_bytes(), (0, 0));
        assert_eq!(d.save_sndnxt, 60_000, "dctcp_conn_init: save_sndnxt = snd_nxt");
        assert!(!sk.requests.wants_ecn_dontxmit() && sk.delack_on_cwr);
        assert!(!d.in_cong_recovery());
        // Out-of-range values (refused by validate) are clamped rather than overflowing shifts.
        let d = FreebsdDctcp::new(FreebsdDctcpParams { alpha: 5000, shift_g: 40, slowstart: false });
        assert_eq!((d.alpha_init, d.shift_g), (1024, 10));
    }

    /// dctcp_ack_received's byte counting over one window, each delayed-ACK correction case,
    /// and dctcp_update_alpha when an ACK passes save_sndnxt.
    #[test]
    fn alpha_from_marked_bytes_with_delayed_ack_correction() {
        let (mut d, mut sk) = fdctcp(0, 4, false);
        // Unmarked 2-MSS ACK.
        ack(&mut d, &mut sk, 2 * MSS, false);
        assert_eq!(d.window_bytes(), (0, 2000));
        // ECE 0 -> 1 on a 2-MSS ACK: the first segment was not marked, count bytes - MSS.
        ack(&mut d, &mut sk, 2 * MSS, true);
        assert_eq!(d.window_bytes(), (1000, 4000));
        // ECE stays 1: all of it.
        ack(&mut d, &mut sk, 2 * MSS, true);
        assert_eq!(d.window_bytes(), (3000, 6000));
        // ECE 1 -> 0 on a 2-MSS ACK: the first segment was still marked, count one MSS.
        ack(&mut d, &mut sk, 2 * MSS, false);
        assert_eq!(d.window_bytes(), (4000, 8000));
        // ECE 0 -> 1 on a 1-MSS ACK (not more than one MSS): all of it.
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!(d.window_bytes(), (5000, 9000));
        // ECE 1 -> 0 on a 1-MSS ACK: nothing.
        ack(&mut d, &mut sk, MSS, false);
        assert_eq!(d.window_bytes(), (5000, 10_000));
        // A duplicate ACK with ECE counts no bytes (but remembers ECE).
        ack(&mut d, &mut sk, 0, true);
        assert_eq!(d.window_bytes(), (5000, 10_000));
        assert!(d.ece_prev);
        ack(&mut d, &mut sk, 0, false);
        // snd_una == save_sndnxt (60000): the window is not over (SEQ_GT).
        assert_eq!(sk.snd_una, 60_000);
        assert_eq!(d.alpha(), 0);
        // The next ACK passes it: alpha = 0 + (5000 << 6) / 11000 = 29, and a new window to
        // snd_nxt.
        sk.snd_nxt = 75_000;
        ack(&mut d, &mut sk, MSS, false);
        assert_eq!(d.alpha(), exact_alpha(0, 4, 5000, 11_000));
        assert_eq!(d.alpha(), 29);
        assert_eq!(d.window_bytes(), (0, 0));
        assert_eq!(d.save_sndnxt, 75_000);
        // Nothing more until snd_una passes 75000.
        ack(&mut d, &mut sk, 14 * MSS, true);
        assert_eq!(d.alpha(), 29);
        assert_eq!(d.window_bytes(), (13_000, 14_000), "0 -> 1 on 14 MSS: 13 MSS marked");
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!(d.alpha(), exact_alpha(29, 4, 14_000, 15_000));
    }

    #[test]
    fn alpha_decay_has_no_min_not_zero_and_never_overflows() {
        // Linux's min_not_zero lets alpha 15 fall to 0; FreeBSD's 15 - (15 >> 4) stays 15.
        let (mut d, mut sk) = fdctcp(15, 4, false);
        for _ in 0..5 {
            sk.snd_nxt = sk.snd_nxt.wrapping_add(10 * MSS);
            ack(&mut d, &mut sk, 10 * MSS, false);
            ack(&mut d, &mut sk, 10 * MSS, false);
        }
        assert_eq!(d.alpha(), 15);
        let (mut d, mut sk) = fdctcp(16, 4, false);
        ack(&mut d, &mut sk, 10 * MSS + 1, false);
        assert_eq!(d.alpha(), 15);
        // From 1 the decay ends at 2^g - 1, not 0.
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        for _ in 0..300 {
            sk.snd_nxt = sk.snd_nxt.wrapping_add(10 * MSS);
            ack(&mut d, &mut sk, 10 * MSS, false);
        }
        assert_eq!(d.alpha(), 15);
        // Every shift_g, alpha, byte count: exact, and at most 1024.
        for g in 0..=10 {
            for a0 in [0, 1, 15, 511, 1024] {
                for (ecn, total) in [(u32::MAX, u32::MAX), (1 << 31, u32::MAX), (3, 0), (1, 1_000_000)] {
                    let (mut d, sk) = fdctcp(a0, g, false);
                    d.bytes_ecn = ecn;
                    d.bytes_total = total;
                    d.update_alpha(&sk);
                    assert_eq!(d.alpha(), exact_alpha(a0, g, ecn as u64, total as u64), "g={g} a0={a0} {ecn}/{total}");
                    assert!(d.alpha() <= 1024);
                }
            }
        }
        // All bytes marked at g = 0: alpha = 1 exactly (ECE already on, so no correction).
        let (mut d, mut sk) = fdctcp(0, 0, false);
        ack(&mut d, &mut sk, 0, true);
        ack(&mut d, &mut sk, 10 * MSS + 1, true);
        assert_eq!(d.alpha(), 1024);
    }

    #[test]
    fn no_alpha_update_in_fast_recovery_but_at_its_end() {
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        d.set_state(&mut sk, CaState::Recovery);
        sk.ca_state = CaState::Recovery;
        ack(&mut d, &mut sk, 20 * MSS, true); // past save_sndnxt
        assert_eq!(d.alpha(), 1024, "!IN_FASTRECOVERY");
        assert_eq!(d.window_bytes(), (19_000, 20_000));
        // dctcp_post_recovery.
        sk.snd_nxt = 90_000;
        d.set_state(&mut sk, CaState::Open);
        assert_eq!(d.alpha(), exact_alpha(1024, 4, 19_000, 20_000));
        assert_eq!((d.window_bytes(), d.save_sndnxt), ((0, 0), 90_000));
        assert!(!d.in_cong_recovery());
    }

    #[test]
    fn ecn_cut_sets_cwnd_to_ssthresh_at_once() {
        for (cwnd, alpha, want) in [
            (100, 1024, 50),
            (100, 512, 75),
            (100, 0, 100),
            (100, 64, 97),
            (3, 1024, 2),
            (2, 1024, 2),
            (1, 1024, 2), // max(..., 2 * mss) may raise cwnd
            (10_000_000, 1024, 5_000_000),
        ] {
            let (mut d, mut sk) = fdctcp(1024, 4, false);
            d.alpha = alpha;
            sk.snd_cwnd = cwnd;
            ack(&mut d, &mut sk, MSS, true);
            assert_eq!(sk.snd_ssthresh, want, "cwnd {cwnd} alpha {alpha}");
            assert_eq!(sk.snd_cwnd, want, "cwnd = ssthresh at once, no PRR");
            assert!(sk.requests.wants_cwr(), "CWR requested");
            assert!(d.in_cong_recovery());
            assert_eq!(d.snd_recover(), 60_000);
        }
    }

    #[test]
    fn ecn_cut_once_per_window() {
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh), (50, 50));
        assert!(std::mem::take(&mut sk.requests).wants_cwr()); // the stack takes the request
                                                               // More ACKs inside the window [.., 60000), every other with ECE: no further cut, no CWR;
                                                               // cwnd keeps growing (the stack's cong_avoid, simulated here).
        for i in 0..8 {
            sk.snd_cwnd += 1;
            ack(&mut d, &mut sk, MSS, i % 2 == 0);
            assert_eq!(sk.snd_ssthresh, 50);
            assert!(!sk.requests.wants_cwr());
            assert!(d.in_cong_recovery());
        }
        assert_eq!(sk.snd_cwnd, 58);
        assert_eq!(d.snd_cwnd_prev, 57, "snd_cwnd_prev follows every ECE");
        // The ACK reaching snd_recover ends congestion recovery even with ECE, without a cut.
        assert_eq!(sk.snd_una, 59_000);
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh), (58, 50));
        assert!(!d.in_cong_recovery());
        assert!(!sk.requests.wants_cwr());
        // An ECE on the ACK that closes the alpha window cuts with the alpha from before this
        // ACK (cc_cong_signal runs before dctcp_ack_received).
        sk.snd_nxt = 80_000;
        let mut early = (d.clone(), sk.clone());
        ack(&mut early.0, &mut early.1, MSS, true);
        assert_eq!(early.1.snd_cwnd, 29, "58 * (1 - 1024 / 2048)");
        assert!(early.0.alpha() < 1024);
        // Closing it without ECE, then an ECE: the cut uses the new alpha.
        ack(&mut d, &mut sk, MSS, false);
        let alpha = d.alpha();
        assert_eq!(alpha, exact_alpha(1024, 4, 6000, 11_000));
        ack(&mut d, &mut sk, MSS, true);
        let want = (58 - ((58 * alpha) >> 11)).max(2);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh), (want, want));
        assert!(sk.requests.wants_cwr());
        assert_eq!(d.snd_recover(), 80_000);
    }

    #[test]
    fn slowstart_halves_at_first_ecn_event_with_alpha_one() {
        // alpha starts at 0: without the knob the first ECE does not reduce at all.
        let (mut d, mut sk) = fdctcp(0, 4, false);
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh), (100, 100));
        assert_eq!(d.num_cong_events(), 0, "only counted with slowstart");

        // With it: halve, alpha = 1, a fresh window.
        let (mut d, mut sk) = fdctcp(0, 4, true);
        ack(&mut d, &mut sk, 3 * MSS, false);
        sk.snd_nxt = 65_000;
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh), (50, 50));
        assert_eq!(d.alpha(), 1024);
        assert_eq!(d.save_sndnxt, 65_000);
        assert_eq!(d.window_bytes(), (1000, 1000), "counters reset, then this ACK counted");
        assert_eq!(d.num_cong_events(), 1);
        // The second event uses alpha.
        let rest = 65_000 - sk.snd_una;
        ack(&mut d, &mut sk, rest, false); // leave congestion recovery
        assert!(!d.in_cong_recovery());
        sk.snd_cwnd = 80;
        let alpha = d.alpha();
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!(sk.snd_cwnd, 80 - ((80 * alpha) >> 11));
        assert_eq!(d.num_cong_events(), 2);

        // A loss first: the first ECN event is no longer the first congestion event.
        let (mut d, mut sk) = fdctcp(0, 4, true);
        d.set_state(&mut sk, CaState::Recovery);
        sk.ca_state = CaState::Recovery;
        d.set_state(&mut sk, CaState::Open);
        sk.ca_state = CaState::Open;
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh, d.alpha()), (100, 100, 0));
    }

    #[test]
    fn losses_halve() {
        // Fast recovery: ssthresh = max(cwnd / 2, 2).
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        sk.snd_cwnd = 91;
        assert_eq!(d.ssthresh(&mut sk), 45);
        sk.snd_cwnd = 3;
        assert_eq!(d.ssthresh(&mut sk), 2);
        sk.snd_cwnd = 90;
        d.set_state(&mut sk, CaState::Recovery);
        sk.ca_state = CaState::Recovery;
        assert!(d.in_cong_recovery());
        // No ECN cut during fast recovery.
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!(sk.snd_cwnd, 90);
        assert!(!sk.requests.wants_cwr());

        // A loss in a window already cut for ECN halves the cwnd from before the cut.
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!(sk.snd_cwnd, 50);
        assert_eq!(d.ssthresh(&mut sk), 50, "snd_cwnd_prev / 2, not 25");
        d.set_state(&mut sk, CaState::Recovery);
        assert_eq!(d.num_cong_events(), 0, "not counted again inside congestion recovery");

        // RTO: the stack's CC_RTO halves the current cwnd; alpha is updated, the next window
        // ends one MSS past snd_una, congestion recovery is over.
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        ack(&mut d, &mut sk, MSS, true); // cut to 50, prev 100
        ack(&mut d, &mut sk, MSS, true);
        sk.snd_cwnd = 60;
        sk.snd_ssthresh = d.ssthresh(&mut sk);
        d.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!(sk.snd_ssthresh, 30);
        let before_alpha = d.alpha();
        d.set_state(&mut sk, CaState::Loss);
        assert_eq!(d.alpha(), exact_alpha(before_alpha, 4, 2000, 2000));
        assert_eq!(d.save_sndnxt, sk.snd_una + MSS);
        assert!(!d.in_cong_recovery());
        assert_eq!(d.num_cong_events(), 1);
        // No CWR request: tcp_enter_loss queues it.
        sk.requests = CcRequests::NONE;
        sk.ca_state = CaState::Loss;
        d.set_state(&mut sk, CaState::Loss); // every RTO
        assert_eq!(d.num_cong_events(), 2);
        assert!(!sk.requests.wants_cwr());
    }

    #[test]
    fn falls_back_to_newreno_without_ecn() {
        let mut d = FreebsdDctcp::default();
        let mut sk = ecn_sock();
        sk.ecn_ok = false;
        d.init(&mut sk);
        assert!(d.is_fallback());
        assert_eq!(d.name(), "freebsd-dctcp");
        assert!(sk.requests.wants_ecn_dontxmit(), "no ECT without TF_ECN_PERMIT");
        assert!(!d.handles_ece(), "the stack's own ECN handling (which never fires without ECN)");
        assert!(!sk.delack_on_cwr);
        assert_eq!(d.get_info(&sk), CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 });
        assert_eq!(d.ssthresh(&mut sk), 50);
        sk.prior_cwnd = 70;
        sk.snd_cwnd = 50;
        assert_eq!(d.undo_cwnd(&mut sk), 70);
        sk.snd_cwnd = 100;
        // None of the DCTCP hooks act.
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!((sk.snd_cwnd, sk.snd_ssthresh, sk.requests.wants_cwr()), (100, TCP_INFINITE_SSTHRESH, false));
        d.set_state(&mut sk, CaState::Recovery);
        d.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!(sk.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        sk.ack_timer_pending = true;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert_eq!((sk.requests.wants_ack_now(), sk.ecn_demand_cwr), (false, false));
        // Reno growth.
        sk.snd_ssthresh = 10;
        sk.snd_cwnd = 20;
        sk.snd_cwnd_cnt = 19;
        d.cong_avoid(&mut sk, 0, 1);
        assert_eq!(sk.snd_cwnd, 21);
    }

    #[test]
    fn receiver_acks_at_once_on_ce_change_only_with_an_ack_pending() {
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        // No delayed ACK pending: a CE change does not force an ACK (Linux's does).
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert!(!sk.requests.wants_ack_now());
        assert!(sk.ecn_demand_cwr, "ECE mirrors CE");
        // Pending, back to not-CE: ACK at once, for everything, with the new state; no special
        // ACK for an older sequence.
        sk.ack_timer_pending = true;
        d.cwnd_event(&mut sk, CaEvent::EcnNoCe);
        assert!(sk.requests.wants_ack_now());
        assert!(!sk.ecn_demand_cwr);
        assert_eq!(sk.requests.send_ack_for(), None);
        // No change: keep delaying.
        sk.requests = CcRequests::NONE;
        d.cwnd_event(&mut sk, CaEvent::EcnNoCe);
        assert!(!sk.requests.wants_ack_now());
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert!(sk.requests.wants_ack_now());
        assert_eq!(d.get_info(&sk), CcInfo::Dctcp { enabled: true, ce_state: 1, alpha: 1024, ab_ecn: 0, ab_tot: 0 });
        // ECE follows CE even after the stack cleared it for a CWR.
        sk.requests = CcRequests::NONE;
        sk.ecn_demand_cwr = false;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert!(sk.ecn_demand_cwr && !sk.requests.wants_ack_now());
    }

    #[test]
    fn receiver_keeps_delaying_on_cwr() {
        let (mut d, mut sk) = fdctcp(1024, 4, false);
        assert!(sk.delack_on_cwr, "the stack must not ACK CWR data at once either");
        sk.ack_timer_pending = true;
        sk.rx_cwr = true;
        // A CE change on a CWR segment: still delayed.
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert!(!sk.requests.wants_ack_now());
        assert!(sk.ecn_demand_cwr);
        d.cwnd_event(&mut sk, CaEvent::EcnNoCe);
        assert!(!sk.requests.wants_ack_now());
        // Without CWR the same change ACKs at once.
        sk.rx_cwr = false;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert!(sk.requests.wants_ack_now());
    }

    #[test]
    fn after_idle_starts_over() {
        let (mut d, mut sk) = fdctcp(512, 4, true);
        ack(&mut d, &mut sk, MSS, true);
        assert_eq!(d.alpha(), 1024);
        assert_eq!(d.num_cong_events(), 1);
        sk.snd_nxt = 99_000;
        d.cwnd_event(&mut sk, CaEvent::CwndRestart);
        assert_eq!(d.alpha(), 512);
        assert_eq!(d.num_cong_events(), 0);
        assert_eq!((d.window_bytes(), d.save_sndnxt, d.ece_prev), ((0, 0), 99_000, false));
    }

    #[test]
    fn registered_and_dispatched() {
        assert_eq!(CcKind::from_name("freebsd-dctcp"), Some(CcKind::FreebsdDctcp));
        assert!(CcKind::ALL.contains(&CcKind::FreebsdDctcp));
        let params = CcParams {
            freebsd_dctcp: FreebsdDctcpParams { alpha: 100, shift_g: 2, slowstart: false },
            ..CcParams::default()
        };
        let mut cc = Cc::new(CcKind::FreebsdDctcp, &params);
        let mut sk = ecn_sock();
        cc.init(&mut sk);
        assert_eq!(cc.name(), "freebsd-dctcp");
        assert!(cc.needs_ecn() && cc.handles_ece());
        assert!(matches!(cc.get_info(&sk), CcInfo::Dctcp { enabled: true, alpha: 100, .. }));
        cc.in_ack_event(&mut sk, AckEventFlags { ece: true, ..AckEventFlags::default() });
        assert_eq!(sk.snd_cwnd, 100 - ((100 * 100) >> 11));
        for kind in [CcKind::Reno, CcKind::Cubic, CcKind::Dctcp] {
            assert!(!Cc::new(kind, &CcParams::default()).handles_ece(), "{kind:?}");
        }
    }
}
