// SPDX-License-Identifier: GPL-2.0
/*
 * ccsim_dctcp: DataCenter TCP as Linux's net/ipv4/tcp_dctcp.c (+ tcp_dctcp.h), as a BPF struct_ops
 * congestion control for kernels that do not build tcp_dctcp.
 *
 * Same constants and rules as the kernel module: alpha in 1/1024 units, g = 1/2^dctcp_shift_g
 * with dctcp_shift_g = 4, alpha starts at dctcp_alpha_on_init = 1024, one alpha update per
 * observation window (in_ack_event), ssthresh = max(cwnd - cwnd*alpha/2048, 2), ssthresh =
 * max(cwnd/2, 2) on loss (Recovery entry or RTO), undo = max(cwnd, loss_cwnd), the receiver's CE
 * state machine with the immediate ACK of the previous CE state, Reno growth, fallback to Reno
 * when ECN was not negotiated.
 *
 * In addition (see ccsim_cc_common.h) it implements .cong_control, which the kernel calls on every
 * ACK instead of PRR + cong_avoid + tcp_update_pacing_rate: the CC does PRR itself, grows like
 * tcp_reno_cong_avoid, maintains sk_pacing_rate, and repairs the garbage ssthresh/cwnd a skipped
 * struct_ops invocation leaves behind (kernel-emulation-feasibility.md §1.5-1.6).
 */
#include "ccsim_cc_common.h"

char _license[] SEC("license") = "GPL";

#define DCTCP_MAX_ALPHA 1024U

static const __u32 dctcp_shift_g = 4;           /* g = 1/2^4 */
static const __u32 dctcp_alpha_on_init = 1024U; /* DCTCP_MAX_ALPHA */

/* Counters (global .bss; the loader prints every .bss variable). */
__u64 alpha_updates = 0;  /* observation windows of senders (windows that delivered data) */
__u64 alpha_sum = 0;      /* sum of alpha after those updates: mean alpha = alpha_sum / alpha_updates */
__u64 last_alpha = 0;     /* alpha after the last of them, in 1/1024 */
__u64 idle_alpha_updates = 0; /* windows without delivered data (e.g. the receiver's side) */
__u64 loss_reactions = 0;  /* dctcp_react_to_loss: Recovery entry or CA_EVENT_LOSS */
__u64 ce_transitions = 0;  /* receiver CE state changes (each forces an immediate ACK) */
__u64 delayed_ack_flushes = 0; /* ... of which had a delayed ACK to send first */
__u64 reno_fallbacks = 0;  /* connections without ECN switched to reno */

/* struct dctcp of tcp_dctcp.c + the cong_control state. */
struct ccsim_dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 dctcp_alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
	struct ccsim_ctl ctl;
};

/* dctcp_reset() */
static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct ccsim_dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

/* The value dctcp_ssthresh() returns for a window of `cwnd`. */
static __always_inline __u32 dctcp_ssthresh_of(__u32 cwnd, __u32 alpha)
{
	return ccsim_max(cwnd - ((cwnd * alpha) >> 11U), 2U);
}

/* The guard, with DCTCP's own repair values: ssthresh as dctcp_ssthresh() would have computed it
 * when the window was prior_cwnd, cwnd as dctcp_cwnd_undo() would (loss_cwnd). */
static __always_inline void dctcp_guard(struct sock *sk, struct ccsim_dctcp *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);
	int bad = ccsim_guard_check(sk);
	__u32 prior_cwnd;

	if (!bad)
		return;
	prior_cwnd = tp->prior_cwnd;
	if (bad & 1)
		ca->loss_cwnd = prior_cwnd;
	ccsim_guard_fix(sk, bad, dctcp_ssthresh_of(prior_cwnd, ca->dctcp_alpha),
			ccsim_max(ca->loss_cwnd, prior_cwnd));
}

/* dctcp_init() */
SEC("struct_ops/ccsim_dctcp_init")
void BPF_PROG(ccsim_dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccsim_dctcp *ca = inet_csk_ca(sk);
	__u8 state = sk->__sk_common.skc_state;

	__sync_fetch_and_add(&init_calls, 1);
	ccsim_ctl_init(&ca->ctl);
	if ((tp->ecn_flags & TCP_ECN_MODE_ANY) || state == TCP_LISTEN || state == TCP_CLOSE) {
		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->dctcp_alpha = ccsim_min(dctcp_alpha_on_init, DCTCP_MAX_ALPHA);
		ca->loss_cwnd = 0;
		ca->ce_state = 0;
		dctcp_reset(tp, ca);
		return;
	}
	/* No ECN support? Fall back to Reno. The kernel switches icsk_ca_ops to dctcp_reno and
	 * clears ECT (INET_ECN_dontxmit); a BPF CC does it with bpf_setsockopt(TCP_CONGESTION),
	 * whose tcp_reinit_congestion_control() clears ECT because reno does not need ECN. */
	{
		char reno[] = "reno";

		__sync_fetch_and_add(&reno_fallbacks, 1);
		bpf_setsockopt(sk, SOL_TCP, TCP_CONGESTION, reno, sizeof(reno));
	}
}

/* dctcp_ssthresh() */
SEC("struct_ops/ccsim_dctcp_ssthresh")
__u32 BPF_PROG(ccsim_dctcp_ssthresh, struct sock *sk)
{
	struct ccsim_dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	__sync_fetch_and_add(&ssthresh_calls, 1);
	CCSIM_MAYBE_INJECT();
	ca->loss_cwnd = tp->snd_cwnd;
	return dctcp_ssthresh_of(tp->snd_cwnd, ca->dctcp_alpha);
}

/* dctcp_update_alpha() */
SEC("struct_ops/ccsim_dctcp_update_alpha")
void BPF_PROG(ccsim_dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccsim_dctcp *ca = inet_csk_ca(sk);

	dctcp_guard(sk, ca);
	/* Expired RTT */
	if (!before(tp->snd_una, ca->next_seq)) {
		__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
		__u32 delivered = tp->delivered - ca->old_delivered;
		__u32 alpha = ca->dctcp_alpha;
		__u32 dec = alpha >> dctcp_shift_g;

		/* alpha = (1 - g) * alpha + g * F; min_not_zero(alpha, alpha >> g) */
		alpha -= dec ? ccsim_min(alpha, dec) : alpha;
		if (delivered_ce) {
			/* If dctcp_shift_g == 1, a 32bit value would overflow after 8 M packets. */
			delivered_ce <<= (10 - dctcp_shift_g);
			delivered_ce /= ccsim_max(1U, delivered);
			alpha = ccsim_min(alpha + delivered_ce, DCTCP_MAX_ALPHA);
		}
		ca->dctcp_alpha = alpha;
		dctcp_reset(tp, ca);
		if (delivered) {
			__sync_fetch_and_add(&alpha_updates, 1);
			__sync_fetch_and_add(&alpha_sum, alpha);
			last_alpha = alpha;
		} else {
			__sync_fetch_and_add(&idle_alpha_updates, 1);
		}
	}
}

/* dctcp_react_to_loss() */
static __always_inline void dctcp_react_to_loss(struct sock *sk, struct ccsim_dctcp *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = ccsim_max(tp->snd_cwnd >> 1U, 2U);
	__sync_fetch_and_add(&loss_reactions, 1);
}

/* dctcp_state() + the end-of-reduction part of tcp_end_cwnd_reduction() */
SEC("struct_ops/ccsim_dctcp_state")
void BPF_PROG(ccsim_dctcp_state, struct sock *sk, __u8 new_state)
{
	struct ccsim_dctcp *ca = inet_csk_ca(sk);

	dctcp_guard(sk, ca);
	if (new_state == TCP_CA_Recovery && new_state != ccsim_ca_state(sk))
		dctcp_react_to_loss(sk, ca);
	/* We handle RTO in dctcp_cwnd_event to ensure that we perform only one loss-adjustment
	 * per RTT. */
	ccsim_ctl_set_state(sk, &ca->ctl, new_state);
}

/* dctcp_ece_ack_cwr() (tcp_dctcp.h) */
static __always_inline void dctcp_ece_ack_cwr(struct sock *sk, __u32 ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* dctcp_ece_ack_update() (tcp_dctcp.h): minimal DCTCP CE state machine,
 * S: 0 <- last pkt was non-CE, 1 <- last pkt was CE. */
static __always_inline void dctcp_ece_ack_update(struct sock *sk, enum tcp_ca_event evt, struct ccsim_dctcp *ca)
{
	__u32 new_ce_state = (evt == CA_EVENT_ECN_IS_CE) ? 1 : 0;

	if (ca->ce_state != new_ce_state) {
		/* CE state has changed, force an immediate ACK to reflect the new CE state. If an
		 * ACK was delayed, send that first to reflect the prior CE state. */
		__sync_fetch_and_add(&ce_transitions, 1);
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			dctcp_ece_ack_cwr(sk, ca->ce_state);
			bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
			__sync_fetch_and_add(&delayed_ack_flushes, 1);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	ca->ce_state = new_ce_state;
	dctcp_ece_ack_cwr(sk, new_ce_state);
}

/* dctcp_cwnd_event() */
SEC("struct_ops/ccsim_dctcp_cwnd_event")
void BPF_PROG(ccsim_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct ccsim_dctcp *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		dctcp_ece_ack_update(sk, ev, ca);
		break;
	case CA_EVENT_LOSS:
		dctcp_guard(sk, ca);
		dctcp_react_to_loss(sk, ca);
		break;
	default:
		/* Don't care for the rest. */
		break;
	}
}

/* dctcp_cwnd_undo() */
SEC("struct_ops/ccsim_dctcp_cwnd_undo")
__u32 BPF_PROG(ccsim_dctcp_cwnd_undo, struct sock *sk)
{
	const struct ccsim_dctcp *ca = inet_csk_ca(sk);

	__sync_fetch_and_add(&undo_calls, 1);
	CCSIM_MAYBE_INJECT();
	return ccsim_max(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

/* tcp_cong_control() for DCTCP: guard, PRR in CWR/Recovery, tcp_reno_cong_avoid otherwise,
 * tcp_update_pacing_rate(). */
SEC("struct_ops/ccsim_dctcp_cong_control")
void BPF_PROG(ccsim_dctcp_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct ccsim_dctcp *ca = inet_csk_ca(sk);

	dctcp_guard(sk, ca);
	if (ccsim_ctl_ack(sk, &ca->ctl, flag, rs))
		ccsim_reno_cong_avoid(sk, rs->acked_sacked);
	dctcp_guard(sk, ca);
	ccsim_update_pacing(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccsim_dctcp = {
	.init = (void *)ccsim_dctcp_init,
	.in_ack_event = (void *)ccsim_dctcp_update_alpha,
	.cwnd_event = (void *)ccsim_dctcp_cwnd_event,
	.ssthresh = (void *)ccsim_dctcp_ssthresh,
	.cong_control = (void *)ccsim_dctcp_cong_control,
	.undo_cwnd = (void *)ccsim_dctcp_cwnd_undo,
	.set_state = (void *)ccsim_dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN | TCP_CONG_NON_RESTRICTED,
	.name = "ccsim_dctcp",
};
