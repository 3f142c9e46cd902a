//! DCTCP, as Linux's `net/ipv4/tcp_dctcp.c` and `tcp_dctcp.h` run it (without PLB).
//!
//! The sender keeps alpha, an EWMA (gain 2^-shift_g) of the fraction of delivered packets whose
//! ACKs carried ECE, in 1/1024, and cuts cwnd by alpha/2 once per window. The receiver side
//! echoes CE marks precisely with a two-state machine that flushes a delayed ACK whenever the CE
//! state flips. Without negotiated ECN the module degrades to Reno ("dctcp-reno").

use crate::seq::before;
use crate::{
    tcp_reno_cong_avoid, tcp_reno_ssthresh, tcp_reno_undo_cwnd, AckEventFlags, CaEvent, CaState, CcInfo, CongestionOps,
    Sock,
};

/// `DCTCP_MAX_ALPHA`: alpha = 1.0.
const DCTCP_MAX_ALPHA: u32 = 1024;
/// Largest `dctcp_shift_g` the kernel accepts (`param_set_uint_minmax(val, kp, 0, 10)`).
const DCTCP_MAX_SHIFT_G: u32 = 10;

/// DCTCP module parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpParams {
    /// `dctcp_shift_g`: EWMA gain g = 2^-shift_g (default 4, valid 0..=10).
    pub shift_g: u32,
    /// `dctcp_alpha_on_init`: alpha at connection start in 1/1024 (default 1024; larger values
    /// are capped at 1024 by `dctcp_init`).
    pub alpha_on_init: u32,
    /// A receiver whose CE state flips ACKs at once (`ICSK_ACK_NOW`, a0496ef2c2 "tcp: do not
    /// delay ACK in DCTCP upon CE status change", Linux 4.19 and later). `false` models the
    /// kernels before it, where the ACK carrying the new state could wait for the delayed-ACK
    /// timer (DCTCP sets `TCP_ECN_DEMAND_CWR` itself, so `__tcp_ecn_check_ce` does not enter
    /// quick-ACK mode either). Not a module parameter: a choice of kernel.
    pub ce_ack_now: bool,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { shift_g: 4, alpha_on_init: DCTCP_MAX_ALPHA, ce_ack_now: true }
    }
}

impl DctcpParams {
    /// Reject what the kernel's parameter setters would (the scenario layer calls this).
    pub fn validate(&self) -> Result<(), String> {
        if self.shift_g > DCTCP_MAX_SHIFT_G {
            return Err(format!("dctcp shift_g {} must be 0..={DCTCP_MAX_SHIFT_G}", self.shift_g));
        }
        if self.alpha_on_init > DCTCP_MAX_ALPHA {
            return Err(format!("dctcp alpha_on_init {} must be 0..={DCTCP_MAX_ALPHA}", self.alpha_on_init));
        }
        Ok(())
    }
}

/// Data Center TCP (`struct dctcp` plus the module parameters it reads).
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// `tp->delivered` / `tp->delivered_ce` at the start of the observation window.
    old_delivered: u32,
    old_delivered_ce: u32,
    /// rcv_nxt when the last data segment was processed (receiver CE state machine).
    prior_rcv_nxt: u32,
    /// `dctcp_alpha`, in 1/1024.
    alpha: u32,
    /// The window ends when snd_una reaches this sequence.
    next_seq: u32,
    /// Bit 0: the last received data segment was CE-marked.
    ce_state: u32,
    /// cwnd at the last reduction, for undo.
    loss_cwnd: u32,
    /// `dctcp_init` found no ECN and switched to `dctcp_reno`.
    fallback: bool,
    shift_g: u8,
    alpha_on_init: u16,
    ce_ack_now: bool,
}

// Linux: BUILD_BUG_ON(sizeof(struct dctcp) > ICSK_CA_PRIV_SIZE).
const _: () = assert!(std::mem::size_of::<Dctcp>() <= 104);

impl Dctcp {
    pub fn new(params: DctcpParams) -> Dctcp {
        Dctcp {
            old_delivered: 0,
            old_delivered_ce: 0,
            prior_rcv_nxt: 0,
            alpha: 0,
            next_seq: 0,
            ce_state: 0,
            loss_cwnd: 0,
            fallback: false,
            // Linux refuses shift_g > 10; clamp so `10 - shift_g` cannot underflow.
            shift_g: params.shift_g.min(DCTCP_MAX_SHIFT_G) as u8,
            alpha_on_init: params.alpha_on_init.min(DCTCP_MAX_ALPHA) as u16,
            ce_ack_now: params.ce_ack_now,
        }
    }

    /// Current alpha in 1/1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// Receiver CE state (bit 0: last data segment was CE).
    pub fn ce_state(&self) -> u32 {
        self.ce_state
    }

    /// cwnd at the last reduction.
    pub fn loss_cwnd(&self) -> u32 {
        self.loss_cwnd
    }

    /// `dctcp_init` fell back to Reno because ECN was not negotiated.
    pub fn is_fallback(&self) -> bool {
        self.fallback
    }

    /// `dctcp_reset`: start a new observation window at snd_nxt.
    fn reset_window(&mut self, sk: &Sock) {
        self.next_seq = sk.snd_nxt;
        self.old_delivered = sk.delivered;
        self.old_delivered_ce = sk.delivered_ce;
    }

    /// `dctcp_react_to_loss`: halve like Reno, remembering cwnd for undo.
    fn react_to_loss(&mut self, sk: &mut Sock) {
        self.loss_cwnd = sk.snd_cwnd;
        sk.snd_ssthresh = (sk.snd_cwnd >> 1).max(2);
    }

    /// `dctcp_update_alpha`: once per window, fold the marked fraction into alpha.
    fn update_alpha(&mut self, sk: &Sock) {
        if before(sk.snd_una, self.next_seq) {
            return;
        }
        let delivered = sk.delivered.wrapping_sub(self.old_delivered);
        let delivered_ce = sk.delivered_ce.wrapping_sub(self.old_delivered_ce);

        // alpha = (1 - g) * alpha + g * F. The decay uses min_not_zero so that small alphas,
        // whose alpha >> g is 0, still reach 0.
        let mut alpha = self.alpha;
        let decay = alpha >> self.shift_g;
        alpha -= if decay == 0 { alpha } else { decay };
        if delivered_ce != 0 {
            // g * F = delivered_ce * 1024 / 2^shift_g / delivered, in 64 bits so no shift_g
            // (0..=10) and window size can overflow.
            let shift = DCTCP_MAX_SHIFT_G - u32::from(self.shift_g);
            let gf = (u64::from(delivered_ce) << shift) / u64::from(delivered.max(1));
            alpha = (u64::from(alpha) + gf).min(u64::from(DCTCP_MAX_ALPHA)) as u32;
        }
        self.alpha = alpha;
        self.reset_window(sk);
    }

    /// `dctcp_ece_ack_update` (tcp_dctcp.h): the receiver's two-state CE machine.
    fn ece_ack_update(&mut self, sk: &mut Sock, ev: CaEvent) {
        let new_ce_state = u32::from(ev == CaEvent::EcnIsCe);
        if self.ce_state != new_ce_state {
            // CE state flipped: ACK at once so the sender sees the new state. A delayed ACK
            // still pending covers data received in the old state, so send it first, for
            // prior_rcv_nxt and with the old ECE setting (`dctcp_ece_ack_cwr(sk, *ce_state)`).
            if sk.ack_timer_pending {
                let old_ece = self.ce_state == 1;
                sk.ecn_demand_cwr = old_ece;
                sk.requests.send_ack(self.prior_rcv_nxt, old_ece);
            }
            // The one-shot ICSK_ACK_NOW, not quickack mode (kernels since a0496ef2c2).
            if self.ce_ack_now {
                sk.requests.ack_now();
            }
        }
        self.prior_rcv_nxt = sk.rcv_nxt;
        self.ce_state = new_ce_state;
        // dctcp_ece_ack_cwr: TCP_ECN_DEMAND_CWR mirrors the CE state.
        sk.ecn_demand_cwr = new_ce_state == 1;
    }
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp::new(DctcpParams::default())
    }
}

impl CongestionOps for Dctcp {
    fn name(&self) -> &'static str {
        if self.fallback {
            "dctcp-reno"
        } else {
            "dctcp"
        }
    }

    /// `TCP_CONG_NEEDS_ECN` (dctcp_reno has no flags).
    fn needs_ecn(&self) -> bool {
        !self.fallback
    }

    /// `dctcp_init`. The simulator calls init only at establishment, so the kernel's
    /// "listening or closed socket" case does not arise: ECN decides alone.
    fn init(&mut self, sk: &mut Sock) {
        if sk.ecn_ok {
            self.fallback = false;
            self.prior_rcv_nxt = sk.rcv_nxt;
            self.alpha = u32::from(self.alpha_on_init).min(DCTCP_MAX_ALPHA);
            self.loss_cwnd = 0;
            self.ce_state = 0;
            self.reset_window(sk);
            return;
        }
        // No ECN: become dctcp-reno and stop sending ECT (INET_ECN_dontxmit), which the
        // handshake had set for DCTCP.
        self.fallback = true;
        sk.requests.ecn_dontxmit();
    }

    /// `dctcp_ssthresh`: cwnd * (1 - alpha / 2); `tcp_reno_ssthresh` in fallback.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        if self.fallback {
            return tcp_reno_ssthresh(sk);
        }
        self.loss_cwnd = sk.snd_cwnd;
        let cut = (u64::from(sk.snd_cwnd) * u64::from(self.alpha)) >> 11;
        (sk.snd_cwnd - cut as u32).max(2)
    }

    /// `.cong_avoid = tcp_reno_cong_avoid` (both dctcp and dctcp_reno).
    fn cong_avoid(&mut self, sk: &mut Sock, ack: u32, acked: u32) {
        tcp_reno_cong_avoid(sk, ack, acked)
    }

    /// `dctcp_state`: entering Recovery reacts like Reno once; RTOs go through `cwnd_event`.
    fn set_state(&mut self, sk: &mut Sock, new: CaState) {
        if self.fallback {
            return;
        }
        if new == CaState::Recovery && new != sk.ca_state {
            self.react_to_loss(sk);
        }
    }

    /// `dctcp_cwnd_event`.
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if self.fallback {
            return;
        }
        match ev {
            CaEvent::EcnIsCe | CaEvent::EcnNoCe => self.ece_ack_update(sk, ev),
            CaEvent::Loss => self.react_to_loss(sk),
            _ => {}
        }
    }

    /// `.in_ack_event = dctcp_update_alpha`.
    fn in_ack_event(&mut self, sk: &mut Sock, _flags: AckEventFlags) {
        if self.fallback {
            return;
        }
        self.update_alpha(sk);
    }

    /// `dctcp_cwnd_undo`: back to the cwnd before the cut (not ssthresh doubled);
    /// `tcp_reno_undo_cwnd` in fallback.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        if self.fallback {
            return tcp_reno_undo_cwnd(sk);
        }
        sk.snd_cwnd.max(self.loss_cwnd)
    }

    /// `dctcp_get_info`: zeroed with `enabled = false` once fallen back to Reno.
    fn get_info(&self, sk: &Sock) -> CcInfo {
        if self.fallback {
            return CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 };
        }
        CcInfo::Dctcp {
            enabled: true,
            ce_state: self.ce_state as u16,
            alpha: self.alpha,
            ab_ecn: sk.mss_cache.wrapping_mul(sk.delivered_ce.wrapping_sub(self.old_delivered_ce)),
            ab_tot: sk.mss_cache.wrapping_mul(sk.delivered.wrapping_sub(self.old_delivered)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sock::TCP_INFINITE_SSTHRESH;
    use crate::CcRequests;

    /// An established ECN connection with some history in its counters.
    fn ecn_sock() -> Sock {
        Sock {
            snd_cwnd: 100,
            snd_una: 50_000,
            snd_nxt: 60_000,
            rcv_nxt: 7_000,
            delivered: 1_000,
            delivered_ce: 100,
            ecn_ok: true,
            is_cwnd_limited: true,
            ..Sock::default()
        }
    }

    fn dctcp(shift_g: u32, alpha_on_init: u32) -> (Dctcp, Sock) {
        let mut d = Dctcp::new(DctcpParams { shift_g, alpha_on_init, ..DctcpParams::default() });
        let mut sk = ecn_sock();
        d.init(&mut sk);
        (d, sk)
    }

    /// Close the current observation window after `delivered` packets, `ce` of them marked.
    fn window(d: &mut Dctcp, sk: &mut Sock, delivered: u32, ce: u32) {
        sk.delivered = sk.delivered.wrapping_add(delivered);
        sk.delivered_ce = sk.delivered_ce.wrapping_add(ce);
        sk.snd_una = sk.snd_nxt;
        sk.snd_nxt = sk.snd_nxt.wrapping_add(delivered.wrapping_mul(1448));
        d.in_ack_event(sk, AckEventFlags::default());
    }

    /// dctcp_update_alpha in exact (u128) arithmetic.
    fn exact_alpha(alpha: u32, g: u32, delivered: u32, ce: u32) -> u32 {
        let a = alpha as u128;
        let decay = a >> g;
        let mut a = a - if decay == 0 { a } else { decay };
        if ce != 0 {
            a = (a + ((ce as u128) << (10 - g)) / (delivered.max(1) as u128)).min(1024);
        }
        a as u32
    }

    #[test]
    fn init_with_ecn() {
        let (d, sk) = dctcp(4, 1024);
        assert_eq!(d.name(), "dctcp");
        assert!(d.needs_ecn());
        assert!(!sk.requests.wants_ecn_dontxmit());
        assert_eq!(d.alpha(), 1024);
        assert_eq!((d.next_seq, d.old_delivered, d.old_delivered_ce, d.prior_rcv_nxt), (60_000, 1_000, 100, 7_000));
        assert_eq!((d.ce_state, d.loss_cwnd), (0, 0));
        // alpha_on_init above 1024 is capped.
        let (d, _) = dctcp(4, 5000);
        assert_eq!(d.alpha(), 1024);
        let (d, _) = dctcp(4, 0);
        assert_eq!(d.alpha(), 0);
        assert!(DctcpParams::default().validate().is_ok());
        assert_eq!(DctcpParams::default(), DctcpParams { shift_g: 4, alpha_on_init: 1024, ce_ack_now: true });
        assert!(DctcpParams { shift_g: 11, alpha_on_init: 0, ..DctcpParams::default() }.validate().is_err());
        assert!(DctcpParams { shift_g: 4, alpha_on_init: 1025, ..DctcpParams::default() }.validate().is_err());
    }

    #[test]
    fn c80dbe0461_alpha_can_fall_to_zero() {
        let (mut d, mut sk) = dctcp(4, 15);
        // 15 >> 4 == 0: min_not_zero takes all of alpha rather than getting stuck at 15.
        window(&mut d, &mut sk, 10, 0);
        assert_eq!(d.alpha(), 0);
        // And stays there without marks.
        window(&mut d, &mut sk, 10, 0);
        assert_eq!(d.alpha(), 0);
        // Above 15 the regular decay applies.
        let (mut d, mut sk) = dctcp(4, 16);
        window(&mut d, &mut sk, 10, 0);
        assert_eq!(d.alpha(), 15);
        // From 1024 without marks alpha reaches exactly 0 eventually.
        let (mut d, mut sk) = dctcp(4, 1024);
        for _ in 0..200 {
            window(&mut d, &mut sk, 10, 0);
        }
        assert_eq!(d.alpha(), 0);
    }

    #[test]
    fn f9c2ff22bb_no_overflow_any_shift_g() {
        let cases: [(u32, u32); 7] = [
            (u32::MAX, u32::MAX),
            (u32::MAX / 2, u32::MAX),
            (1 << 31, (1 << 31) + 5),
            (5_000_000, 5_000_000), // 5e6 << 10 overflows 32 bits
            (4_194_304, 8_388_608), // exactly 2^32 after << 10
            (3, 0),                 // marks without deliveries: divide by max(1, 0)
            (1, 1_000_000),
        ];
        for g in 0..=10 {
            for alpha0 in [0, 1, 15, 511, 1024] {
                for (ce, delivered) in cases {
                    let (mut d, mut sk) = dctcp(g, alpha0);
                    window(&mut d, &mut sk, delivered, ce);
                    let want = exact_alpha(alpha0, g, delivered, ce);
                    assert_eq!(d.alpha(), want, "g={g} alpha0={alpha0} ce={ce} delivered={delivered}");
                    assert!(d.alpha() <= DCTCP_MAX_ALPHA);
                }
            }
        }
        // All marked at g = 0 is alpha = 1024 exactly, even where 32 bits would wrap.
        let (mut d, mut sk) = dctcp(0, 0);
        window(&mut d, &mut sk, 5_000_000, 5_000_000);
        assert_eq!(d.alpha(), 1024);
    }

    #[test]
    fn alpha_updates_once_per_window_with_seq_wraparound() {
        let mut d = Dctcp::default();
        let mut sk = ecn_sock();
        sk.snd_una = u32::MAX - 300;
        sk.snd_nxt = u32::MAX - 100;
        d.init(&mut sk);
        assert_eq!(d.next_seq, u32::MAX - 100);
        let ack = |d: &mut Dctcp, sk: &mut Sock| d.in_ack_event(sk, AckEventFlags::default());

        // Still before next_seq: no update.
        sk.snd_una = u32::MAX - 200;
        sk.snd_nxt = 1_000; // sender wrapped past 0
        sk.delivered += 10;
        ack(&mut d, &mut sk);
        assert_eq!(d.alpha(), 1024);
        // snd_una wraps past 0, beyond next_seq: the window closes and the next one ends at
        // snd_nxt.
        sk.snd_una = 5;
        ack(&mut d, &mut sk);
        assert_eq!(d.alpha(), 1024 - 64);
        assert_eq!((d.next_seq, d.old_delivered), (1_000, sk.delivered));
        // Once per window: further ACKs inside it change nothing.
        sk.snd_una = 999;
        ack(&mut d, &mut sk);
        assert_eq!(d.alpha(), 960);
        sk.snd_una = 1_000;
        ack(&mut d, &mut sk);
        assert_eq!(d.alpha(), 960 - 60);
    }

    #[test]
    fn alpha_converges_to_marked_fraction() {
        // F = 1/2: alpha -> 512. The integer EWMA stops once alpha >> g equals g * F * 1024,
        // i.e. inside [512, 512 + 2^g).
        for start in [0, 1024] {
            let (mut d, mut sk) = dctcp(4, start);
            for _ in 0..300 {
                window(&mut d, &mut sk, 100, 50);
            }
            assert!((512..528).contains(&d.alpha()), "from {start}: {}", d.alpha());
        }
        // F = 1/4 with g = 1/256: g * F * 1024 = 1, so the integer EWMA settles anywhere in
        // the dead band [256, 512) (from above, at 511).
        let (mut d, mut sk) = dctcp(8, 1024);
        for _ in 0..3000 {
            window(&mut d, &mut sk, 400, 100);
        }
        assert!((256..256 + 256).contains(&d.alpha()), "{}", d.alpha());
        let (mut d, mut sk) = dctcp(2, 0);
        for _ in 0..100 {
            window(&mut d, &mut sk, 400, 100);
        }
        assert!((256..260).contains(&d.alpha()), "{}", d.alpha());
    }

    #[test]
    fn ssthresh_is_cwnd_times_one_minus_half_alpha() {
        let (mut d, mut sk) = dctcp(4, 1024);
        for (cwnd, alpha, want) in
            [(100, 1024, 50), (100, 512, 75), (100, 0, 100), (100, 64, 97), (3, 1024, 2), (2, 1024, 2)]
        {
            d.alpha = alpha;
            sk.snd_cwnd = cwnd;
            assert_eq!(d.ssthresh(&mut sk), want, "cwnd {cwnd} alpha {alpha}");
            assert_eq!(d.loss_cwnd(), cwnd);
        }
        // Large cwnd does not overflow the product.
        d.alpha = 1024;
        sk.snd_cwnd = 10_000_000;
        assert_eq!(d.ssthresh(&mut sk), 5_000_000);
    }

    #[test]
    fn ce6dd23329_no_cwnd_doubling_on_undo() {
        // A light ECN reduction: ssthresh 97. Undo restores 100, not ssthresh << 1 = 194.
        let (mut d, mut sk) = dctcp(4, 64);
        sk.snd_ssthresh = d.ssthresh(&mut sk);
        assert_eq!(sk.snd_ssthresh, 97);
        sk.snd_cwnd = sk.snd_ssthresh;
        assert_eq!(d.undo_cwnd(&mut sk), 100);
        // After a Recovery entry halving: undo goes back to the cwnd at the loss.
        sk.snd_cwnd = 80;
        d.set_state(&mut sk, CaState::Recovery);
        assert_eq!(sk.snd_ssthresh, 40);
        sk.snd_cwnd = 30;
        assert_eq!(d.undo_cwnd(&mut sk), 80);
        // cwnd already above the loss cwnd: keep it.
        sk.snd_cwnd = 120;
        assert_eq!(d.undo_cwnd(&mut sk), 120);
    }

    #[test]
    fn set_state_recovery_halves_once() {
        let (mut d, mut sk) = dctcp(4, 1024);
        sk.snd_cwnd = 90;
        sk.ca_state = CaState::Open;
        d.set_state(&mut sk, CaState::Recovery);
        assert_eq!(sk.snd_ssthresh, 45);
        assert_eq!(d.loss_cwnd(), 90);
        // Already in Recovery: no second reaction.
        sk.ca_state = CaState::Recovery;
        sk.snd_cwnd = 60;
        d.set_state(&mut sk, CaState::Recovery);
        assert_eq!(sk.snd_ssthresh, 45);
        assert_eq!(d.loss_cwnd(), 90);
        // Other states do not react (Loss is handled through CaEvent::Loss).
        sk.ca_state = CaState::Open;
        for st in [CaState::Open, CaState::Disorder, CaState::Cwr, CaState::Loss] {
            d.set_state(&mut sk, st);
            assert_eq!(sk.snd_ssthresh, 45);
        }
        // The RTO event reacts like Reno.
        d.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!(sk.snd_ssthresh, 30);
        assert_eq!(d.loss_cwnd(), 60);
        sk.snd_cwnd = 3;
        d.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!(sk.snd_ssthresh, 2);
    }

    #[test]
    fn ce_change_with_delayed_ack_pending_flushes_it_with_old_ece() {
        let (mut d, mut sk) = dctcp(4, 1024);
        sk.rcv_nxt = 8_000;
        d.cwnd_event(&mut sk, CaEvent::EcnNoCe); // no change from init state 0
        assert_eq!(d.prior_rcv_nxt, 8_000);
        // The segment that flips the state; the stack has not advanced rcv_nxt yet.
        sk.ack_timer_pending = true;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert_eq!(sk.requests.send_ack_for(), Some((8_000, false)), "held-back ACK for data up to 8000, without ECE");
        assert!(sk.requests.wants_ack_now());
        assert!(sk.ecn_demand_cwr);
        assert_eq!(d.ce_state(), 1);

        // And back: the pending ACK goes out with ECE, the new state clears it.
        sk.requests = CcRequests::NONE;
        sk.rcv_nxt = 9_448;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe); // same state: only prior_rcv_nxt moves
        assert_eq!((sk.requests.send_ack_for(), sk.requests.wants_ack_now()), (None, false));
        assert_eq!(d.prior_rcv_nxt, 9_448);
        sk.rcv_nxt = 10_896;
        d.cwnd_event(&mut sk, CaEvent::EcnNoCe);
        assert_eq!(sk.requests.send_ack_for(), Some((9_448, true)));
        assert!(sk.requests.wants_ack_now());
        assert!(!sk.ecn_demand_cwr);
        assert_eq!(d.ce_state(), 0);
        assert_eq!(d.prior_rcv_nxt, 10_896);
    }

    #[test]
    fn ce_change_without_pending_timer_only_acks_now() {
        let (mut d, mut sk) = dctcp(4, 1024);
        sk.ack_timer_pending = false;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert_eq!(sk.requests.send_ack_for(), None);
        assert!(sk.requests.wants_ack_now());
        assert!(sk.ecn_demand_cwr);
    }

    #[test]
    fn no_ce_change_neither_flushes_nor_acks() {
        let (mut d, mut sk) = dctcp(4, 1024);
        sk.ack_timer_pending = true;
        for _ in 0..3 {
            d.cwnd_event(&mut sk, CaEvent::EcnNoCe);
            assert_eq!(
                (sk.requests.send_ack_for(), sk.requests.wants_ack_now(), sk.ecn_demand_cwr),
                (None, false, false)
            );
        }
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        sk.requests = CcRequests::NONE;
        for _ in 0..3 {
            d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
            assert_eq!(
                (sk.requests.send_ack_for(), sk.requests.wants_ack_now(), sk.ecn_demand_cwr),
                (None, false, true)
            );
        }
    }

    #[test]
    fn demand_cwr_mirrors_ce_state_even_if_stack_cleared_it() {
        // The stack clears DEMAND_CWR when the peer sends CWR; the next CE segment sets it again
        // although the DCTCP state did not change.
        let (mut d, mut sk) = dctcp(4, 1024);
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        sk.ecn_demand_cwr = false;
        sk.requests = CcRequests::NONE;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert!(sk.ecn_demand_cwr);
        assert!(!sk.requests.wants_ack_now());
        // A flush uses the DCTCP state (1), not the stack-cleared flag.
        sk.ecn_demand_cwr = false;
        sk.ack_timer_pending = true;
        d.cwnd_event(&mut sk, CaEvent::EcnNoCe);
        assert_eq!(sk.requests.send_ack_for().map(|(_, ece)| ece), Some(true));
    }

    #[test]
    fn e3118e8359_get_info_fields() {
        let (mut d, mut sk) = dctcp(4, 1024);
        sk.mss_cache = 1448;
        window(&mut d, &mut sk, 20, 5);
        // Mid-window progress since the last reset.
        sk.delivered += 7;
        sk.delivered_ce += 3;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        let want_alpha = exact_alpha(1024, 4, 20, 5);
        assert_eq!(
            d.get_info(&sk),
            CcInfo::Dctcp { enabled: true, ce_state: 1, alpha: want_alpha, ab_ecn: 3 * 1448, ab_tot: 7 * 1448 }
        );
    }

    /// 64f40ff5bb: get_info fills a zeroed `tcp_dctcp_info` whatever the mode; dctcp-reno
    /// reports `dctcp_enabled = 0` and nothing else.
    #[test]
    fn commit_64f40ff5bb_get_info_buffer() {
        let mut d = Dctcp::default();
        let mut sk = ecn_sock();
        sk.ecn_ok = false;
        d.init(&mut sk);
        sk.delivered += 50;
        sk.delivered_ce += 20;
        let info = d.get_info(&sk);
        assert_eq!(info, CcInfo::Dctcp { enabled: false, ce_state: 0, alpha: 0, ab_ecn: 0, ab_tot: 0 });
        // Through the dispatch enum too, and reading twice changes nothing.
        let cc = crate::Cc::Dctcp(d);
        assert_eq!(cc.get_info(&sk), info);
        assert_eq!(cc.get_info(&sk), info);

        // Enabled: the byte counters are u32 fields and wrap like the kernel's.
        let (d, mut sk) = dctcp(4, 1024);
        sk.mss_cache = 9000;
        sk.delivered = sk.delivered.wrapping_add(1_000_000);
        let CcInfo::Dctcp { enabled, ab_tot, ab_ecn, alpha, ce_state } = d.get_info(&sk) else {
            panic!("dctcp exports tcp_dctcp_info")
        };
        assert!(enabled);
        assert_eq!((alpha, ce_state, ab_ecn), (1024, 0, 0));
        assert_eq!(ab_tot, 9000u32.wrapping_mul(1_000_000));
        // get_info does not touch the window.
        assert_eq!(d.old_delivered, 1_000);
    }

    #[test]
    fn e3118e8359_falls_back_to_reno_without_ecn() {
        let mut d = Dctcp::default();
        let mut sk = ecn_sock();
        sk.ecn_ok = false;
        d.init(&mut sk);
        assert!(d.is_fallback());
        assert_eq!(d.name(), "dctcp-reno");
        assert!(sk.requests.wants_ecn_dontxmit(), "INET_ECN_dontxmit");
        assert!(!d.needs_ecn());
        // Reno's halving whatever alpha was.
        sk.snd_cwnd = 100;
        assert_eq!(d.ssthresh(&mut sk), 50);
        // Reno's undo (prior_cwnd), not loss_cwnd.
        sk.prior_cwnd = 70;
        sk.snd_cwnd = 50;
        assert_eq!(d.undo_cwnd(&mut sk), 70);
        // Reno growth.
        sk.snd_ssthresh = 10;
        sk.snd_cwnd = 20;
        sk.snd_cwnd_cnt = 19;
        d.cong_avoid(&mut sk, 0, 1);
        assert_eq!(sk.snd_cwnd, 21);
        // dctcp_reno has no set_state, cwnd_event or in_ack_event.
        sk.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        d.set_state(&mut sk, CaState::Recovery);
        d.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!(sk.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        sk.ack_timer_pending = true;
        d.cwnd_event(&mut sk, CaEvent::EcnIsCe);
        assert_eq!((sk.requests.send_ack_for(), sk.requests.wants_ack_now(), sk.ecn_demand_cwr), (None, false, false));
        let before = d.clone();
        window(&mut d, &mut sk, 10, 10);
        assert_eq!(d.alpha(), before.alpha());
    }
}
