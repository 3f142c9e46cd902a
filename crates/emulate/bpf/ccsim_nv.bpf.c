// SPDX-License-Identifier: GPL-2.0
/*
 * ccsim_nv: TCP-NV as Linux's net/ipv4/tcp_nv.c, as a BPF struct_ops congestion control for
 * kernels that do not build tcp_nv. All module parameters at their defaults.
 *
 * tcpnv_init() asks the cgroup sock_ops program for a base RTT (BPF_SOCK_OPS_BASE_RTT). A BPF CC
 * cannot call sock_ops, so this object also carries a SEC("sockops") program: at TCP_CONNECT_CB /
 * ACTIVE_ESTABLISHED_CB / PASSIVE_ESTABLISHED_CB it looks up {local IPv4, remote IPv4} in
 * ccsim_base_rtt and stores the base RTT in the socket's sk_storage. tcp_init_transfer() runs the
 * ESTABLISHED sock_ops callback before tcp_init_congestion_control(), so ccsim_nv's init finds it.
 * If the socket has no storage (no cgroup attachment), init looks the address pair up in
 * ccsim_base_rtt itself. The sockops program also answers BPF_SOCK_OPS_BASE_RTT, as the sock_ops
 * program of a kernel with tcp_nv would.
 *
 * Like ccsim_dctcp it implements .cong_control (PRR, NV's cong_avoid, pacing, the guard against
 * skipped struct_ops invocations; see ccsim_cc_common.h).
 */
#include "ccsim_cc_common.h"

char _license[] SEC("license") = "GPL";

/* TCP NV parameters (module defaults) */
static const int nv_pad = 10;                    /* max queued packets allowed in network */
static const int nv_pad_buffer = 2;              /* do not grow cwnd if this close to nv_pad */
static const int nv_reset_period = 5;            /* seconds; how often to reset min_rtt */
static const int nv_min_cwnd = 2;                /* don't decrease cwnd below this without losses */
static const int nv_cong_dec_mult = 30 * 128 / 100; /* decrease cwnd by 30 % of the congestion */
static const int nv_ssthresh_factor = 8;         /* on congestion ssthresh = this * max_win / 8 */
static const int nv_rtt_factor = 128;            /* RTT averaging: 1/2 old + 1/2 new */
static const int nv_loss_dec_factor = 819;       /* => 80 % on losses */
static const int nv_cwnd_growth_rate_neg = 8;
static const int nv_cwnd_growth_rate_pos = 0;    /* 0 => fixed like Reno */
static const int nv_dec_eval_min_calls = 60;
static const int nv_inc_eval_min_calls = 20;
static const int nv_ssthresh_eval_min_calls = 30;
static const int nv_stop_rtt_cnt = 10;
static const int nv_rtt_min_cnt = 2;

#define NV_INIT_RTT 0xffffffffU
#define NV_MIN_CWND 4
#define NV_MIN_CWND_GROW 2
#define NV_TSO_CWND_BOUND 80

#define AF_INET 2

extern unsigned int CONFIG_HZ __kconfig __weak;

/* Counters (global .bss). */
__u64 base_rtt_set = 0;           /* sockets the sockops program gave a base RTT */
__u64 base_rtt_queries = 0;       /* BPF_SOCK_OPS_BASE_RTT answered */
__u64 nv_base_rtt_from_storage = 0; /* inits that found the sockops-stored base RTT */
__u64 nv_base_rtt_from_map = 0;   /* inits that looked the address pair up themselves */
__u64 nv_decreases = 0;           /* congestion decisions (cwnd decreased) */
__u64 nv_increases = 0;           /* no-congestion decisions (growth allowed) */
__u64 nv_min_cwnd_grows = 0;      /* nv_min_cwnd raised (TSO/LRO/coalescing heuristic) */

struct ccsim_base_rtt_key {
	__u32 local_ip4;  /* network byte order */
	__u32 remote_ip4; /* network byte order */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ccsim_base_rtt_key);
	__type(value, __u32); /* base RTT in microseconds */
} ccsim_base_rtt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} ccsim_base_rtt_stg SEC(".maps");

/* struct tcpnv of tcp_nv.c (bit fields as bytes) + the cong_control state. */
struct ccsim_nv {
	__u64 nv_min_rtt_reset_jiffies; /* when to switch to nv_min_rtt_new */
	__s8 cwnd_growth_factor;        /* current cwnd growth factor, < 0 => less than 1 packet/RTT */
	__u8 nv_allow_cwnd_growth;      /* whether cwnd can grow */
	__u8 nv_reset;                  /* whether to reset values */
	__u8 nv_catchup;                /* whether we are growing because of temporary cwnd decrease */
	__u8 nv_eval_call_cnt;          /* call count since last eval */
	__u8 nv_min_cwnd;               /* nv won't make a ca decision if cwnd is smaller than this */
	__u8 nv_rtt_cnt;                /* RTTs without making ca decision */
	__u8 pad;
	__u32 nv_last_rtt;              /* last rtt */
	__u32 nv_min_rtt;               /* active min rtt. Used to determine slope */
	__u32 nv_min_rtt_new;           /* min rtt for future use */
	__u32 nv_base_rtt;              /* if non-zero it represents the threshold for congestion */
	__u32 nv_lower_bound_rtt;       /* used with nv_base_rtt; 80 % of nv_base_rtt */
	__u32 nv_rtt_max_rate;          /* max rate seen during current RTT */
	__u32 nv_rtt_start_seq;         /* current RTT ends when packet arrives acking beyond this */
	__u32 nv_last_snd_una;          /* previous value of tp->snd_una */
	__u32 nv_no_cong_cnt;           /* consecutive no congestion decisions */
	struct ccsim_ctl ctl;
};

static __always_inline __u64 nv_hz(void)
{
	return CONFIG_HZ ? CONFIG_HZ : 250;
}

static __always_inline int time_after_eq64(__u64 a, __u64 b)
{
	return (__s64)(a - b) >= 0;
}

/* tcpnv_reset() */
static __always_inline void tcpnv_reset(struct ccsim_nv *ca, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->nv_reset = 0;
	ca->nv_no_cong_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_last_rtt = 0;
	ca->nv_rtt_max_rate = 0;
	ca->nv_rtt_start_seq = tp->snd_una;
	ca->nv_eval_call_cnt = 0;
	ca->nv_last_snd_una = tp->snd_una;
}

/* The value tcpnv_recalc_ssthresh() returns for a window of `cwnd`. */
static __always_inline __u32 nv_ssthresh_of(__u32 cwnd)
{
	return ccsim_max((cwnd * nv_loss_dec_factor) >> 10, 2U);
}

/* The guard with NV's repair values (tcpnv_recalc_ssthresh of prior_cwnd; tcp_reno_undo_cwnd). */
static __always_inline void nv_guard(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	int bad = ccsim_guard_check(sk);

	if (bad)
		ccsim_guard_fix(sk, bad, nv_ssthresh_of(tp->prior_cwnd), tp->prior_cwnd);
}

/* tcpnv_init() */
SEC("struct_ops/ccsim_nv_init")
void BPF_PROG(ccsim_nv_init, struct sock *sk)
{
	struct ccsim_nv *ca = inet_csk_ca(sk);
	__u32 base_rtt = 0;
	__u32 *stg;

	__sync_fetch_and_add(&init_calls, 1);
	ccsim_ctl_init(&ca->ctl);
	tcpnv_reset(ca, sk);

	/* See if base_rtt is available from the socket_ops bpf program (tcp_call_bpf(sk,
	 * BPF_SOCK_OPS_BASE_RTT) in the kernel). */
	stg = bpf_sk_storage_get(&ccsim_base_rtt_stg, sk, 0, 0);
	if (stg) {
		base_rtt = *stg;
		if (base_rtt)
			__sync_fetch_and_add(&nv_base_rtt_from_storage, 1);
	} else if (sk->__sk_common.skc_family == AF_INET) {
		struct ccsim_base_rtt_key key = {
			.local_ip4 = sk->__sk_common.skc_rcv_saddr,
			.remote_ip4 = sk->__sk_common.skc_daddr,
		};
		__u32 *v = bpf_map_lookup_elem(&ccsim_base_rtt, &key);

		if (v && *v) {
			base_rtt = *v;
			__sync_fetch_and_add(&nv_base_rtt_from_map, 1);
		}
	}
	if ((int)base_rtt > 0) {
		ca->nv_base_rtt = base_rtt;
		ca->nv_lower_bound_rtt = (base_rtt * 205) >> 8; /* 80% */
	} else {
		ca->nv_base_rtt = 0;
		ca->nv_lower_bound_rtt = 0;
	}

	ca->nv_allow_cwnd_growth = 1;
	ca->nv_min_rtt_reset_jiffies = bpf_jiffies64() + 2 * nv_hz();
	ca->nv_min_rtt = NV_INIT_RTT;
	ca->nv_min_rtt_new = NV_INIT_RTT;
	ca->nv_min_cwnd = NV_MIN_CWND;
	ca->nv_catchup = 0;
	ca->cwnd_growth_factor = 0;
}

/* nv_get_bounded_rtt(): apply upper (base_rtt) and lower (lower_bound_rtt) bounds to RTT. */
static __always_inline __u32 nv_get_bounded_rtt(struct ccsim_nv *ca, __u32 val)
{
	if (ca->nv_lower_bound_rtt > 0 && val < ca->nv_lower_bound_rtt)
		return ca->nv_lower_bound_rtt;
	else if (ca->nv_base_rtt > 0 && val > ca->nv_base_rtt)
		return ca->nv_base_rtt;
	else
		return val;
}

/* tcpnv_cong_avoid() */
static __always_inline void tcpnv_cong_avoid(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccsim_nv *ca = inet_csk_ca(sk);
	__u32 cnt;

	if (!ccsim_is_cwnd_limited(sk))
		return;
	/* Only grow cwnd if NV has not detected congestion */
	if (!ca->nv_allow_cwnd_growth)
		return;
	if (ccsim_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	if (ca->cwnd_growth_factor < 0) {
		cnt = tp->snd_cwnd << (-ca->cwnd_growth_factor & 31);
		tcp_cong_avoid_ai(tp, cnt, acked);
	} else {
		cnt = ccsim_max(4U, tp->snd_cwnd >> (ca->cwnd_growth_factor & 31));
		tcp_cong_avoid_ai(tp, cnt, acked);
	}
}

/* tcpnv_recalc_ssthresh() */
SEC("struct_ops/ccsim_nv_ssthresh")
__u32 BPF_PROG(ccsim_nv_ssthresh, struct sock *sk)
{
	__sync_fetch_and_add(&ssthresh_calls, 1);
	CCSIM_MAYBE_INJECT();
	return nv_ssthresh_of(tcp_sk(sk)->snd_cwnd);
}

/* tcp_reno_undo_cwnd() */
SEC("struct_ops/ccsim_nv_undo_cwnd")
__u32 BPF_PROG(ccsim_nv_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	__sync_fetch_and_add(&undo_calls, 1);
	CCSIM_MAYBE_INJECT();
	return ccsim_max(tp->snd_cwnd, tp->prior_cwnd);
}

/* tcpnv_state() + the end-of-reduction part of tcp_end_cwnd_reduction() */
SEC("struct_ops/ccsim_nv_state")
void BPF_PROG(ccsim_nv_state, struct sock *sk, __u8 new_state)
{
	struct ccsim_nv *ca = inet_csk_ca(sk);

	nv_guard(sk);
	if (new_state == TCP_CA_Open && ca->nv_reset) {
		tcpnv_reset(ca, sk);
	} else if (new_state == TCP_CA_Loss || new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery) {
		ca->nv_reset = 1;
		ca->nv_allow_cwnd_growth = 0;
		if (new_state == TCP_CA_Loss) {
			/* Reset cwnd growth factor to Reno value */
			if (ca->cwnd_growth_factor > 0)
				ca->cwnd_growth_factor = 0;
			/* Decrease growth rate if allowed */
			if (nv_cwnd_growth_rate_neg > 0 && ca->cwnd_growth_factor > -8)
				ca->cwnd_growth_factor--;
		}
	}
	ccsim_ctl_set_state(sk, &ca->ctl, new_state);
}

/* tcpnv_acked(): congestion avoidance calculations for TCP-NV */
SEC("struct_ops/ccsim_nv_acked")
void BPF_PROG(ccsim_nv_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccsim_nv *ca = inet_csk_ca(sk);
	__u64 now = bpf_jiffies64();
	__u64 rate64;
	__u32 rate, max_win, cwnd_by_slope;
	__u32 avg_rtt;
	__u32 bytes_acked;
	__s32 rtt_us = sample->rtt_us;
	__u32 in_flight = sample->in_flight;
	__u8 st = ccsim_ca_state(sk);

	/* Some calls are for duplicates without timetamps */
	if (rtt_us < 0)
		return;
	/* If not in TCP_CA_Open or TCP_CA_Disorder states, skip. */
	if (st != TCP_CA_Open && st != TCP_CA_Disorder)
		return;

	/* Stop cwnd growth if we were in catch up mode */
	if (ca->nv_catchup && tp->snd_cwnd >= (__u32)nv_min_cwnd) {
		ca->nv_catchup = 0;
		ca->nv_allow_cwnd_growth = 0;
	}

	bytes_acked = tp->snd_una - ca->nv_last_snd_una;
	ca->nv_last_snd_una = tp->snd_una;

	if (in_flight == 0)
		return;

	/* Calculate moving average of RTT */
	if (nv_rtt_factor > 0) {
		if (ca->nv_last_rtt > 0) {
			avg_rtt = (((__u64)rtt_us) * nv_rtt_factor + ((__u64)ca->nv_last_rtt) * (256 - nv_rtt_factor)) >>
				  8;
		} else {
			avg_rtt = rtt_us;
			ca->nv_min_rtt = avg_rtt << 1;
		}
		ca->nv_last_rtt = avg_rtt;
	} else {
		avg_rtt = rtt_us;
	}

	/* rate in 100's bits per second */
	rate64 = ((__u64)in_flight) * 8000000;
	rate = (__u32)(rate64 / ((__u64)(avg_rtt ? avg_rtt : 1) * 100));

	/* Remember the maximum rate seen during this RTT. Note: it may be more than one RTT. This
	 * function should be called at least nv_dec_eval_min_calls times. */
	if (ca->nv_rtt_max_rate < rate)
		ca->nv_rtt_max_rate = rate;

	/* We have valid information, increment counter */
	if (ca->nv_eval_call_cnt < 255)
		ca->nv_eval_call_cnt++;

	/* Apply bounds to rtt. Only used to update min_rtt */
	avg_rtt = nv_get_bounded_rtt(ca, avg_rtt);

	/* update min rtt if necessary */
	if (avg_rtt < ca->nv_min_rtt)
		ca->nv_min_rtt = avg_rtt;

	/* update future min_rtt if necessary */
	if (avg_rtt < ca->nv_min_rtt_new)
		ca->nv_min_rtt_new = avg_rtt;

	/* nv_min_rtt is updated with the minimum (possibley averaged) rtt seen in the last
	 * nv_reset_period seconds (i.e. a warm reset); the period is randomized in
	 * [nv_reset_period*3/4, nv_reset_period*5/4). */
	if (time_after_eq64(now, ca->nv_min_rtt_reset_jiffies)) {
		__u32 rnd = bpf_get_prandom_u32() & 0xff;

		ca->nv_min_rtt = ca->nv_min_rtt_new;
		ca->nv_min_rtt_new = NV_INIT_RTT;
		ca->nv_min_rtt_reset_jiffies = now + ((nv_reset_period * (384 + rnd) * nv_hz()) >> 9);
		/* Every so often we decrease ca->nv_min_cwnd in case previous value is no longer
		 * accurate. */
		ca->nv_min_cwnd = ccsim_max(ca->nv_min_cwnd / 2, NV_MIN_CWND);
	}

	/* Once per RTT check if we need to do congestion avoidance */
	if (before(ca->nv_rtt_start_seq, tp->snd_una)) {
		ca->nv_rtt_start_seq = tp->snd_nxt;
		if (ca->nv_rtt_cnt < 0xff)
			/* Increase counter for RTTs without CA decision */
			ca->nv_rtt_cnt++;

		/* If this function is only called once within an RTT the cwnd is probably too small
		 * (in some cases due to tso, lro or interrupt coalescence), so we increase
		 * ca->nv_min_cwnd. */
		if (ca->nv_eval_call_cnt == 1 && bytes_acked >= (ca->nv_min_cwnd - 1) * tp->mss_cache &&
		    ca->nv_min_cwnd < (NV_TSO_CWND_BOUND + 1)) {
			ca->nv_min_cwnd = ccsim_min(ca->nv_min_cwnd + NV_MIN_CWND_GROW, NV_TSO_CWND_BOUND + 1);
			ca->nv_rtt_start_seq = tp->snd_nxt + ca->nv_min_cwnd * tp->mss_cache;
			ca->nv_eval_call_cnt = 0;
			ca->nv_allow_cwnd_growth = 1;
			__sync_fetch_and_add(&nv_min_cwnd_grows, 1);
			return;
		}

		/* Find the ideal cwnd for current rate from slope
		 * slope = 80000.0 * mss / nv_min_rtt
		 * cwnd_by_slope = nv_rtt_max_rate / slope */
		cwnd_by_slope = (__u32)(((__u64)ca->nv_rtt_max_rate) * ca->nv_min_rtt / (__u64)(80000 * tp->mss_cache));
		max_win = cwnd_by_slope + nv_pad;

		/* If cwnd > max_win, decrease cwnd; if cwnd < max_win, grow cwnd; else leave the same */
		if (tp->snd_cwnd > max_win) {
			/* there is congestion, check that it is ok to make a CA decision
			 * 1. We should have at least nv_dec_eval_min_calls data points before making
			 *    a CA decision
			 * 2. We only make a congesion decision after nv_rtt_min_cnt RTTs */
			if (ca->nv_rtt_cnt < nv_rtt_min_cnt) {
				return;
			} else if (tp->snd_ssthresh == TCP_INFINITE_SSTHRESH) {
				if (ca->nv_eval_call_cnt < nv_ssthresh_eval_min_calls)
					return;
				/* otherwise we will decrease cwnd */
			} else if (ca->nv_eval_call_cnt < nv_dec_eval_min_calls) {
				if (ca->nv_allow_cwnd_growth && ca->nv_rtt_cnt > nv_stop_rtt_cnt)
					ca->nv_allow_cwnd_growth = 0;
				return;
			}

			/* We have enough data to determine we are congested */
			ca->nv_allow_cwnd_growth = 0;
			tp->snd_ssthresh = (nv_ssthresh_factor * max_win) >> 3;
			if (tp->snd_cwnd - max_win > 2) {
				/* gap > 2, we do exponential cwnd decrease */
				__u32 dec = ccsim_max(2U, ((tp->snd_cwnd - max_win) * nv_cong_dec_mult) >> 7);

				tp->snd_cwnd -= dec;
			} else if (nv_cong_dec_mult > 0) {
				tp->snd_cwnd = max_win;
			}
			if (ca->cwnd_growth_factor > 0)
				ca->cwnd_growth_factor = 0;
			ca->nv_no_cong_cnt = 0;
			__sync_fetch_and_add(&nv_decreases, 1);
		} else if (tp->snd_cwnd <= max_win - nv_pad_buffer) {
			/* There is no congestion, grow cwnd if allowed */
			if (ca->nv_eval_call_cnt < nv_inc_eval_min_calls)
				return;

			ca->nv_allow_cwnd_growth = 1;
			ca->nv_no_cong_cnt++;
			if (ca->cwnd_growth_factor < 0 && nv_cwnd_growth_rate_neg > 0 &&
			    ca->nv_no_cong_cnt > (__u32)nv_cwnd_growth_rate_neg) {
				ca->cwnd_growth_factor++;
				ca->nv_no_cong_cnt = 0;
			} else if (ca->cwnd_growth_factor >= 0 && nv_cwnd_growth_rate_pos > 0 &&
				   ca->nv_no_cong_cnt > (__u32)nv_cwnd_growth_rate_pos) {
				ca->cwnd_growth_factor++;
				ca->nv_no_cong_cnt = 0;
			}
			__sync_fetch_and_add(&nv_increases, 1);
		} else {
			/* cwnd is in-between, so do nothing */
			return;
		}

		/* update state */
		ca->nv_eval_call_cnt = 0;
		ca->nv_rtt_cnt = 0;
		ca->nv_rtt_max_rate = 0;

		/* Don't want to make cwnd < nv_min_cwnd (it wasn't before, if it is now is because
		 * nv decreased it). */
		if (tp->snd_cwnd < (__u32)nv_min_cwnd)
			tp->snd_cwnd = nv_min_cwnd;
	}
}

/* The guard also runs on every in_ack_event (tcp_in_ack_event), before tcp_cong_control. */
SEC("struct_ops/ccsim_nv_in_ack_event")
void BPF_PROG(ccsim_nv_in_ack_event, struct sock *sk, __u32 flags)
{
	nv_guard(sk);
}

/* tcp_cong_control() for NV: guard, PRR in CWR/Recovery, tcpnv_cong_avoid otherwise,
 * tcp_update_pacing_rate(). */
SEC("struct_ops/ccsim_nv_cong_control")
void BPF_PROG(ccsim_nv_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct ccsim_nv *ca = inet_csk_ca(sk);

	nv_guard(sk);
	if (ccsim_ctl_ack(sk, &ca->ctl, flag, rs))
		tcpnv_cong_avoid(sk, rs->acked_sacked);
	nv_guard(sk);
	ccsim_update_pacing(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccsim_nv = {
	.init = (void *)ccsim_nv_init,
	.ssthresh = (void *)ccsim_nv_ssthresh,
	.cong_control = (void *)ccsim_nv_cong_control,
	.set_state = (void *)ccsim_nv_state,
	.undo_cwnd = (void *)ccsim_nv_undo_cwnd,
	.pkts_acked = (void *)ccsim_nv_acked,
	.in_ack_event = (void *)ccsim_nv_in_ack_event,
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = "ccsim_nv",
};

/* The base-RTT provider: what a cgroup sock_ops program does for the kernel's tcp_nv. */
SEC("sockops")
int ccsim_nv_base_rtt(struct bpf_sock_ops *skops)
{
	struct ccsim_base_rtt_key key;
	struct bpf_sock *sk;
	__u32 *v, *stg;
	int op = (int)skops->op;

	if (op != BPF_SOCK_OPS_TCP_CONNECT_CB && op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
	    op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB && op != BPF_SOCK_OPS_BASE_RTT)
		return 1;
	if (skops->family != AF_INET)
		return 1;
	key.local_ip4 = skops->local_ip4;
	key.remote_ip4 = skops->remote_ip4;
	v = bpf_map_lookup_elem(&ccsim_base_rtt, &key);
	if (!v)
		return 1;
	if (op == BPF_SOCK_OPS_BASE_RTT) {
		skops->reply = *v;
		__sync_fetch_and_add(&base_rtt_queries, 1);
		return 1;
	}
	sk = skops->sk;
	if (!sk)
		return 1;
	stg = bpf_sk_storage_get(&ccsim_base_rtt_stg, sk, 0, 0);
	if (stg) {
		*stg = *v;
		return 1;
	}
	stg = bpf_sk_storage_get(&ccsim_base_rtt_stg, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (stg) {
		*stg = *v;
		__sync_fetch_and_add(&base_rtt_set, 1);
	}
	return 1;
}
