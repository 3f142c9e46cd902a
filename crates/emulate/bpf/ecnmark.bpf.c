// SPDX-License-Identifier: GPL-2.0
/*
 * ecnmark: DCTCP-style step marking on the instantaneous queue of a switch port.
 *
 * A tc clsact EGRESS direct-action program (cls_bpf) on a port whose root qdisc is HTB. It runs
 * in sch_handle_egress(), i.e. before the packet is enqueued into the root qdisc, and reads the
 * root qdisc's real occupancy through bpf_cast_to_kern_ctx(skb)->dev->qdisc (HTB keeps the total
 * of all its classes in sch->q.qlen and sch->qstats.backlog). If the occupancy before this packet
 * plus this packet exceeds K - qlen >= K in packet mode, backlog + skb->len > K in byte mode
 * (skb->len at this hook includes the Ethernet header, as qdisc_pkt_len does) - then:
 *   ECT(0)/ECT(1) IPv4 -> bpf_skb_ecn_set_ce (CE, checksum fixed)       counted in `marks`
 *   CE already         -> unchanged                                      counted in `over_k_ce`
 *   not-ECT            -> dropped (TC_ACT_SHOT) if drop_non_ect          counted in `drops_non_ect`
 *                         else passed                                    counted in `over_k_non_ect`
 * Non-IPv4 frames pass untouched. Drops made here never reach the qdisc, so they are not in the
 * qdisc's drop counter.
 *
 * One instance is loaded per switch port; the loader sets the .rodata configuration before load.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define ETH_P_IP 0x0800
#define ETH_HLEN 14

#define INET_ECN_NOT_ECT 0
#define INET_ECN_CE 3

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* Configuration (set by the loader before load). */
const volatile __u64 k = 20;
const volatile __u32 unit_bytes = 0;   /* 0: K in packets, 1: K in bytes */
const volatile __u32 drop_non_ect = 0; /* 1: drop not-ECT packets over K ("drop" policy) */

/* Counters. */
__u64 marks = 0;
__u64 drops_non_ect = 0;
__u64 over_k_ce = 0;
__u64 over_k_non_ect = 0;
__u64 packets = 0;

SEC("tc")
int ccsim_ecnmark(struct __sk_buff *skb)
{
	struct sk_buff *kskb;
	struct Qdisc *q;
	__u8 tos;
	int over;

	__sync_fetch_and_add(&packets, 1);
	if (skb->protocol != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;

	kskb = bpf_cast_to_kern_ctx(skb);
	q = kskb->dev->qdisc;
	if (unit_bytes)
		over = (__u64)q->qstats.backlog + skb->len > k;
	else
		over = (__u64)q->q.qlen >= k;
	if (!over)
		return TC_ACT_OK;

	/* The TOS byte of the IPv4 header behind the Ethernet header. */
	if (bpf_skb_load_bytes(skb, ETH_HLEN + 1, &tos, 1) < 0)
		return TC_ACT_OK;
	switch (tos & 3) {
	case INET_ECN_CE:
		__sync_fetch_and_add(&over_k_ce, 1);
		return TC_ACT_OK;
	case INET_ECN_NOT_ECT:
		if (drop_non_ect) {
			__sync_fetch_and_add(&drops_non_ect, 1);
			return TC_ACT_SHOT;
		}
		__sync_fetch_and_add(&over_k_non_ect, 1);
		return TC_ACT_OK;
	default: /* ECT(0), ECT(1) */
		if (bpf_skb_ecn_set_ce(skb))
			__sync_fetch_and_add(&marks, 1);
		return TC_ACT_OK;
	}
}
