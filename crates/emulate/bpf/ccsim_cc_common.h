/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of ccsim's BPF struct_ops congestion controls (ccsim_dctcp, ccsim_nv).
 *
 * Both CCs implement .cong_control. With it the kernel's tcp_cong_control() hands the whole
 * per-ACK window update to the CC and skips PRR (tcp_cwnd_reduction), cong_avoid and
 * tcp_update_pacing_rate(); tcp_end_cwnd_reduction() also returns early. This file re-implements
 * those kernel pieces on the CC side so that the behaviour stays the kernel's:
 *
 *   ccsim_prr_*            mirrors tcp_cwnd_reduction() / tcp_end_cwnd_reduction() (tcp_input.c)
 *   ccsim_may_raise_cwnd   mirrors tcp_may_raise_cwnd()                            (tcp_input.c)
 *   ccsim_is_cwnd_limited  mirrors tcp_is_cwnd_limited()                           (include/net/tcp.h)
 *   ccsim_update_pacing    mirrors tcp_update_pacing_rate()                        (tcp_input.c)
 *
 * and adds the guard against the struct_ops defect recorded in
 * shared/research/kernel-emulation-feasibility.md §1.5: about 0.4 % of struct_ops invocations do
 * not run, and a skipped u32 op (ssthresh, undo_cwnd) then returns a stale stack word
 * (0x81104110) that the kernel stores in snd_ssthresh / snd_cwnd.
 *
 * The PRR state that tcp_cwnd_reduction() keeps in tcp_sock (prr_delivered) is not writable from
 * BPF (bpf_tcp_ca_btf_struct_access allows only snd_cwnd, snd_cwnd_cnt, snd_ssthresh, ecn_flags,
 * app_limited, icsk_ca_priv, icsk_ack.pending, sk_pacing_rate, sk_pacing_status), so the CC keeps
 * its own copy in icsk_ca_priv. prior_cwnd and prr_out are still maintained by the kernel
 * (tcp_init_cwnd_reduction, tcp_write_xmit, tcp_xmit_retransmit_queue) and are read from tcp_sock.
 */
#ifndef CCSIM_CC_COMMON_H
#define CCSIM_CC_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* include/net/tcp.h (6.18) */
#define TCP_CONG_NON_RESTRICTED 0x1
#define TCP_CONG_NEEDS_ECN 0x2
#define TCP_INFINITE_SSTHRESH 0x7fffffff
/* tp->ecn_flags: TCP_ECN_MODE_RFC3168 (was TCP_ECN_OK) = BIT(0), TCP_ECN_MODE_ACCECN = BIT(4) */
#define TCP_ECN_MODE_RFC3168 0x1
#define TCP_ECN_QUEUE_CWR 0x2
#define TCP_ECN_DEMAND_CWR 0x4
#define TCP_ECN_MODE_ACCECN 0x10
#define TCP_ECN_MODE_ANY (TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN)

/* net/ipv4/tcp_input.c */
#define FLAG_DATA_ACKED 0x04
#define FLAG_SYN_ACKED 0x10
#define FLAG_DATA_SACKED 0x20
#define FLAG_SND_UNA_ADVANCED 0x400
#define FLAG_ACKED (FLAG_DATA_ACKED | FLAG_SYN_ACKED)
#define FLAG_FORWARD_PROGRESS (FLAG_ACKED | FLAG_DATA_SACKED)

#define USEC_PER_SEC 1000000ULL
#define SOL_TCP 6
#define TCP_CONGESTION 13

/* The guard: values above this are never produced by the CCs or by the kernel in an emulation
 * (2^20 packets of cwnd is 1.5 GB in flight). */
#define CCSIM_SANE_MAX (1U << 20)

/* Test knob (clang -DCCSIM_INJECT_FAULTS): ssthresh/undo_cwnd return the defect's garbage about
 * once in 128 calls, to exercise the guard. Never set in the build. */
#ifdef CCSIM_INJECT_FAULTS
__u64 injected_faults = 0;
#define CCSIM_MAYBE_INJECT()                                                                       \
	do {                                                                                       \
		if ((bpf_get_prandom_u32() & 127) == 0) {                                           \
			__sync_fetch_and_add(&injected_faults, 1);                                  \
			return 0x81104110U;                                                        \
		}                                                                                  \
	} while (0)
#else
#define CCSIM_MAYBE_INJECT() do { } while (0)
#endif

#define ccsim_min(a, b) ((a) < (b) ? (a) : (b))
#define ccsim_max(a, b) ((a) > (b) ? (a) : (b))

/* Counters shared by both CCs (global .bss variables, printed by the loader). */
__u64 guard_ssthresh = 0;   /* snd_ssthresh found > 2^20 (and != infinite) and repaired */
__u64 guard_cwnd = 0;       /* snd_cwnd found > 2^20 or > snd_cwnd_clamp and clamped */
__u64 cong_control_calls = 0;
__u64 prr_episodes = 0;     /* CWR/Recovery episodes reduced with PRR */
__u64 reduction_ends = 0;   /* tcp_end_cwnd_reduction() equivalents (cwnd = ssthresh) */
__u64 missed_set_state = 0; /* an episode's end noticed only in cong_control (set_state skipped) */
__u64 init_calls = 0;
__u64 ssthresh_calls = 0;
__u64 undo_calls = 0;
__u64 set_state_calls = 0;

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline __u8 ccsim_ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

static __always_inline int before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

/* tcp_packets_in_flight() */
static __always_inline __u32 ccsim_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline int ccsim_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* tcp_is_cwnd_limited() */
static __always_inline int ccsim_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return 1;
	/* If in slow start, ensure cwnd grows to twice what was ACKed. */
	if (ccsim_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

/* tcp_may_raise_cwnd() */
static __always_inline int ccsim_may_raise_cwnd(const struct sock *sk, int flag)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	int sysctl_reordering = sk->__sk_common.skc_net.net->ipv4.sysctl_tcp_reordering;

	if (tp->reordering > (__u32)sysctl_reordering)
		return flag & FLAG_FORWARD_PROGRESS;
	return flag & FLAG_DATA_ACKED;
}

/* tcp_reno_cong_avoid() with the Reno kfuncs. */
static __always_inline void ccsim_reno_cong_avoid(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!ccsim_is_cwnd_limited(sk))
		return;
	if (ccsim_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

/* tcp_update_pacing_rate(): 200 % of mss*cwnd/srtt in slow start (cwnd < ssthresh/2), 120 %
 * otherwise (the netns sysctls tcp_pacing_ss_ratio / tcp_pacing_ca_ratio), capped by
 * sk_max_pacing_rate. TCP Small Queues bounds the bytes a socket keeps in qdiscs by it. */
static __always_inline void ccsim_update_pacing(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct net *net = sk->__sk_common.skc_net.net;
	__u64 rate = (__u64)tp->mss_cache * ((USEC_PER_SEC / 100) << 3);
	__u32 cwnd = tp->snd_cwnd;
	__u64 max_rate;

	if (cwnd < tp->snd_ssthresh / 2)
		rate *= (__u32)net->ipv4.sysctl_tcp_pacing_ss_ratio;
	else
		rate *= (__u32)net->ipv4.sysctl_tcp_pacing_ca_ratio;
	rate *= ccsim_max(cwnd, tp->packets_out);
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	max_rate = sk->sk_max_pacing_rate;
	sk->sk_pacing_rate = ccsim_min(rate, max_rate);
}

/* Per-socket state of the cong_control machinery, embedded in each CC's icsk_ca_priv. */
struct ccsim_ctl {
	__u32 prr_delivered; /* tp->prr_delivered of the current episode (not writable by BPF) */
	__u32 prr_high_seq;  /* tp->high_seq when the episode began (tcp_init_cwnd_reduction) */
	__u8 prr_state;      /* TCP_CA_CWR / TCP_CA_Recovery while an episode is open, else 0 */
	__u8 pad[3];
};

static __always_inline void ccsim_ctl_init(struct ccsim_ctl *c)
{
	c->prr_delivered = 0;
	c->prr_high_seq = 0;
	c->prr_state = 0;
}

static __always_inline int ccsim_in_reduction_state(__u8 st)
{
	return st == TCP_CA_CWR || st == TCP_CA_Recovery;
}

/* A new CWR/Recovery episode: tcp_init_cwnd_reduction() zeroed tp->prr_delivered/prr_out and set
 * prior_cwnd and high_seq. */
static __always_inline void ccsim_prr_begin(const struct tcp_sock *tp, struct ccsim_ctl *c, __u8 st)
{
	c->prr_delivered = 0;
	c->prr_high_seq = tp->high_seq;
	c->prr_state = st;
	__sync_fetch_and_add(&prr_episodes, 1);
}

/* tcp_cwnd_reduction(): Proportional Rate Reduction (RFC 6937). */
static __always_inline void ccsim_prr(struct sock *sk, struct ccsim_ctl *c, int newly_acked_sacked, int newly_lost,
				      int flag)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 prior_cwnd = tp->prior_cwnd;
	__u32 prr_out = tp->prr_out;
	__u32 in_flight = ccsim_in_flight(tp);
	int delta = (int)tp->snd_ssthresh - (int)in_flight;
	int sndcnt;
	__u32 cwnd;

	if (newly_acked_sacked <= 0 || !prior_cwnd)
		return;
	c->prr_delivered += newly_acked_sacked;
	if (delta < 0) {
		__u64 dividend = (__u64)tp->snd_ssthresh * c->prr_delivered + prior_cwnd - 1;

		sndcnt = (int)(dividend / prior_cwnd) - (int)prr_out;
	} else {
		sndcnt = ccsim_max((int)(c->prr_delivered - prr_out), newly_acked_sacked);
		if ((flag & FLAG_SND_UNA_ADVANCED) && !newly_lost)
			sndcnt++;
		sndcnt = ccsim_min(delta, sndcnt);
	}
	/* Force a fast retransmit upon entering fast recovery */
	sndcnt = ccsim_max(sndcnt, prr_out ? 0 : 1);
	cwnd = in_flight + sndcnt;
	if ((int)cwnd < 1)
		cwnd = 1;
	tp->snd_cwnd = cwnd;
}

/* tcp_end_cwnd_reduction(): "Reset cwnd to ssthresh in CWR or Recovery (unless it's undone)".
 * The kernel skips it for CCs with .cong_control; `st` is the state being left. */
static __always_inline void ccsim_prr_end(struct sock *sk, struct ccsim_ctl *c, __u8 st)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (tp->snd_ssthresh < TCP_INFINITE_SSTHRESH && (st == TCP_CA_CWR || tp->undo_marker)) {
		tp->snd_cwnd = tp->snd_ssthresh;
		__sync_fetch_and_add(&reduction_ends, 1);
	}
	c->prr_state = 0;
}

/* The set_state part of the machinery: called with the new state while icsk_ca_state still holds
 * the old one (tcp_set_ca_state). Leaving CWR/Recovery for Open/Disorder is where the kernel
 * calls tcp_end_cwnd_reduction(); entering CWR/Recovery from Open/Disorder follows
 * tcp_init_cwnd_reduction(). */
static __always_inline void ccsim_ctl_set_state(struct sock *sk, struct ccsim_ctl *c, __u8 new_state)
{
	__u8 old = ccsim_ca_state(sk);

	__sync_fetch_and_add(&set_state_calls, 1);
	if (ccsim_in_reduction_state(new_state)) {
		if (!ccsim_in_reduction_state(old))
			ccsim_prr_begin(tcp_sk(sk), c, new_state);
		else
			c->prr_state = new_state;
	} else if (new_state == TCP_CA_Loss) {
		c->prr_state = 0; /* tcp_enter_loss() sets cwnd itself */
	} else if (c->prr_state) {
		ccsim_prr_end(sk, c, ccsim_in_reduction_state(old) ? old : c->prr_state);
	}
}

/* The window part of .cong_control: tcp_cong_control() without the pacing update. `grow` is the
 * CC's cong_avoid, called when tcp_may_raise_cwnd() allows. Returns 1 if the caller should grow. */
static __always_inline int ccsim_ctl_ack(struct sock *sk, struct ccsim_ctl *c, int flag,
					 const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u8 st = ccsim_ca_state(sk);

	__sync_fetch_and_add(&cong_control_calls, 1);
	if (ccsim_in_reduction_state(st)) {
		/* A set_state call that did not run, or CWR left and re-entered within one ACK. */
		if (!c->prr_state || c->prr_high_seq != tp->high_seq)
			ccsim_prr_begin(tp, c, st);
		c->prr_state = st;
		ccsim_prr(sk, c, (int)rs->acked_sacked, rs->losses, flag);
		return 0;
	}
	if (c->prr_state) {
		/* The episode ended but our set_state did not run (struct_ops defect). */
		__sync_fetch_and_add(&missed_set_state, 1);
		if (st == TCP_CA_Loss)
			c->prr_state = 0;
		else
			ccsim_prr_end(sk, c, c->prr_state);
	}
	return ccsim_may_raise_cwnd(sk, flag) ? 1 : 0;
}

/* The guard. `ssthresh_fix` is what the CC's ssthresh op would have returned for prior_cwnd (the
 * cwnd at the last ssthresh call: tcp_init_cwnd_reduction and tcp_enter_loss set prior_cwnd just
 * before calling it); `cwnd_fix` what its undo_cwnd would have returned. Returns a bit mask:
 * 1 = ssthresh repaired, 2 = cwnd clamped. */
static __always_inline int ccsim_guard_check(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	int bad = 0;

	if (tp->snd_ssthresh > CCSIM_SANE_MAX && tp->snd_ssthresh != TCP_INFINITE_SSTHRESH)
		bad |= 1;
	if (tp->snd_cwnd > CCSIM_SANE_MAX || tp->snd_cwnd > tp->snd_cwnd_clamp)
		bad |= 2;
	return bad;
}

static __always_inline void ccsim_guard_fix(struct sock *sk, int bad, __u32 ssthresh_fix, __u32 cwnd_fix)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (bad & 1) {
		tp->snd_ssthresh = ssthresh_fix;
		__sync_fetch_and_add(&guard_ssthresh, 1);
	}
	if (bad & 2) {
		__u32 cwnd = ccsim_min(cwnd_fix, tp->snd_cwnd_clamp);

		if (cwnd > CCSIM_SANE_MAX)
			cwnd = ccsim_min(tp->snd_ssthresh, CCSIM_SANE_MAX);
		if (cwnd < 2)
			cwnd = 2;
		tp->snd_cwnd = cwnd;
		__sync_fetch_and_add(&guard_cwnd, 1);
	}
}

#endif
