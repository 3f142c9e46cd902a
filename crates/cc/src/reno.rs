//! Reno (`tcp_cong.c`: `tcp_reno_ssthresh`, `tcp_reno_cong_avoid`, `tcp_reno_undo_cwnd`) and the
//! shared helpers every module reuses (`tcp_slow_start`, `tcp_cong_avoid_ai`).

use crate::{CongestionOps, Sock};

/// `tcp_slow_start`: grow cwnd by `acked` up to ssthresh; return the ACKed packets left over.
pub fn tcp_slow_start(sk: &mut Sock, acked: u32) -> u32 {
    let cwnd = sk.snd_cwnd.saturating_add(acked).min(sk.snd_ssthresh);
    let used = cwnd.saturating_sub(sk.snd_cwnd);
    sk.snd_cwnd = cwnd.min(sk.snd_cwnd_clamp);
    acked - used.min(acked)
}

/// `tcp_cong_avoid_ai`: one packet of growth per `w` packets acked, crediting in `snd_cwnd_cnt`.
pub fn tcp_cong_avoid_ai(sk: &mut Sock, w: u32, acked: u32) {
    let w = w.max(1);
    // Credits accumulated at a higher w are applied gently now.
    if sk.snd_cwnd_cnt >= w {
        sk.snd_cwnd_cnt = 0;
        sk.snd_cwnd += 1;
    }
    sk.snd_cwnd_cnt += acked;
    if sk.snd_cwnd_cnt >= w {
        let delta = sk.snd_cwnd_cnt / w;
        sk.snd_cwnd_cnt -= delta * w;
        sk.snd_cwnd += delta;
    }
    sk.snd_cwnd = sk.snd_cwnd.min(sk.snd_cwnd_clamp);
}

/// `tcp_reno_cong_avoid`.
pub fn tcp_reno_cong_avoid(sk: &mut Sock, _ack: u32, mut acked: u32) {
    if !sk.is_cwnd_limited() {
        return;
    }
    if sk.in_slow_start() {
        acked = tcp_slow_start(sk, acked);
        if acked == 0 {
            return;
        }
    }
    let w = sk.snd_cwnd;
    tcp_cong_avoid_ai(sk, w, acked);
}

/// `tcp_reno_ssthresh`: halve, at least 2.
pub fn tcp_reno_ssthresh(sk: &Sock) -> u32 {
    (sk.snd_cwnd >> 1).max(2)
}

/// `tcp_reno_undo_cwnd`: back to the cwnd before the reduction.
pub fn tcp_reno_undo_cwnd(sk: &Sock) -> u32 {
    sk.snd_cwnd.max(sk.prior_cwnd)
}

/// TCP Reno (`tcp_reno` in tcp_cong.c).
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionOps for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_ssthresh(sk)
    }
    fn cong_avoid(&mut self, sk: &mut Sock, ack: u32, acked: u32) {
        tcp_reno_cong_avoid(sk, ack, acked)
    }
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_undo_cwnd(sk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(cwnd: u32, ssthresh: u32) -> Sock {
        Sock { snd_cwnd: cwnd, snd_ssthresh: ssthresh, is_cwnd_limited: true, ..Sock::default() }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_leftover() {
        let mut s = sk(10, 14);
        assert_eq!(tcp_slow_start(&mut s, 6), 2);
        assert_eq!(s.snd_cwnd, 14);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let mut s = sk(20, 10);
        let mut r = Reno;
        for _ in 0..19 {
            r.cong_avoid(&mut s, 0, 1);
        }
        assert_eq!(s.snd_cwnd, 20);
        r.cong_avoid(&mut s, 0, 1);
        assert_eq!(s.snd_cwnd, 21);
        assert_eq!(s.snd_cwnd_cnt, 0);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut s = sk(20, 10);
        s.is_cwnd_limited = false;
        Reno.cong_avoid(&mut s, 0, 5);
        assert_eq!(s.snd_cwnd, 20);
        // In slow start, growth is allowed up to twice the packets in flight.
        let mut s = sk(10, 100);
        s.is_cwnd_limited = false;
        s.max_packets_out = 6;
        Reno.cong_avoid(&mut s, 0, 2);
        assert_eq!(s.snd_cwnd, 12);
        Reno.cong_avoid(&mut s, 0, 2);
        assert_eq!(s.snd_cwnd, 12, "cwnd 12 = 2 x max_packets_out: no more growth");
    }

    #[test]
    fn ssthresh_halves_with_floor_two() {
        assert_eq!(tcp_reno_ssthresh(&sk(81, 0)), 40);
        assert_eq!(tcp_reno_ssthresh(&sk(3, 0)), 2);
    }
}
