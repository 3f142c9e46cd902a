//! fq as a host's root qdisc (`scheduler = "fq"`, sch_fq): a queue per socket served round robin,
//! and pacing by the departure time TCP stamps on each skb (EDT). Against a FIFO NIC it shares the
//! NIC per socket and keeps a ping out of the bulk flows' queue; a BBR sender paced through fq
//! does as well as one pacing itself. Drops at a host's own qdisc go back to the socket.

use ccsim_scenario::{build, parse, run_built, Summary};

/// Two bulk flows (CUBIC and BBR) and a ping leave host a through its 1 Gb/s NIC, the bottleneck.
fn shared_nic(nic: &str) -> String {
    format!(
        r#"
[run]
duration = "2s"
[queues.nic]
{nic}
[topology]
type = "star"
hosts = ["a", "b"]
rate = "1Gbps"
delay = "250us"
host_queue = "nic"
[[flows]]
name = "cubic"
src = "a"
dst = "b"
cc = "cubic"
[[flows]]
name = "bbr"
src = "a"
dst = "b"
cc = "bbr"
[[pings]]
name = "p"
src = "a"
dst = "b"
interval = "10ms"
[record]
warmup = "0.5s"
queues = ["a->s"]
"#
    )
}

/// One BBR flow, 10 Gb/s host links, a 1 Gb/s bottleneck with a 200-packet buffer, 4.4 ms RTT.
fn bbr_through(nic: &str) -> String {
    format!(
        r#"
[run]
duration = "2s"
[tcp]
cc = "bbr"
[queues.nic]
{nic}
[queues.sw]
classes = [{{ limit = 200 }}]
[topology]
type = "dumbbell"
left = ["a"]
right = ["b"]
rate = "10Gbps"
bottleneck_rate = "1Gbps"
delay = "100us"
bottleneck_delay = "2ms"
host_queue = "nic"
switch_queue = "sw"
[[flows]]
name = "bbr"
src = "a"
dst = "b"
[record]
warmup = "0.5s"
queues = ["a->s1", "s1->s2"]
"#
    )
}

const FIFO: &str = "classes = [{ limit = 1000 }]";
const FQ: &str = r#"scheduler = "fq""#;

fn run(text: &str) -> Summary {
    let b = build(&parse(text, "fq.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    run_built(b, |_, _| {}).summary
}

fn goodputs(s: &Summary) -> (f64, f64) {
    (s.flows[0].goodput_mbps, s.flows[1].goodput_mbps)
}

#[test]
fn fq_shares_a_host_nic_per_socket_and_keeps_a_ping_out_of_the_bulk_queue() {
    let fifo = run(&shared_nic(FIFO));
    let fq = run(&shared_nic(FQ));
    let share = |(a, b): (f64, f64)| a.min(b) / a.max(b);
    let (c, b) = goodputs(&fq);
    assert!(share((c, b)) >= 0.95, "fq: CUBIC {c} vs BBR {b} Mb/s");
    assert!(c + b >= 900.0, "fq keeps the NIC busy: {} Mb/s", c + b);
    let (fc, fb) = goodputs(&fifo);
    assert!(share((fc, fb)) < 0.9, "a FIFO NIC does not share per socket: CUBIC {fc} vs BBR {fb} Mb/s");
    assert!(fc + fb >= 900.0);
    // The ping is a flow of its own under fq: it waits behind at most the skb on the wire, not
    // behind both sockets' backlog.
    let (p_fq, p_fifo) = (fq.pings[0].p50_ms, fifo.pings[0].p50_ms);
    assert!(p_fq < 0.5 * p_fifo, "ping p50: fq {p_fq} ms vs FIFO {p_fifo} ms");
    assert!(p_fq >= 1.0, "not below the 1 ms base RTT: {p_fq}");
    for s in [&fq, &fifo] {
        assert_eq!(s.flows.iter().map(|f| f.retransmits).sum::<u64>(), 0, "no loss at a shared NIC");
    }
}

#[test]
fn bbr_paced_by_fq_matches_bbr_pacing_itself() {
    let internal = run(&bbr_through(FIFO));
    // At the end of STARTUP's loss burst TCP retransmits hundreds of one-segment skbs at once,
    // more than fq's flow_limit of 100: fq drops them, and TCP tries them again later.
    let fq = run(&bbr_through(FQ));
    let (gi, gf) = (internal.flows[0].goodput_mbps, fq.flows[0].goodput_mbps);
    assert!(gi > 900.0, "internal pacing: {gi} Mb/s");
    assert!((gf - gi).abs() <= 0.02 * gi, "fq {gf} vs internal pacing {gi} Mb/s");
    // Who holds the packets until their time: with fq, the NIC's qdisc (skbs wait there for
    // their departure time); with internal pacing, TCP (the NIC queue stays empty).
    let nic = |s: &Summary| s.queues.iter().find(|q| q.port == "a->s1").unwrap().clone();
    assert_eq!(nic(&internal).p50, 0.0);
    assert!(nic(&fq).p50 > 0.0, "fq holds paced skbs: {:?}", nic(&fq));
    assert_eq!(nic(&fq).classes[0].name, "fq");
}

#[test]
fn drops_at_the_senders_own_nic_are_not_losses() {
    // A NIC queue of 8 packets under two CUBIC flows: TSQ lets each socket queue about 1 ms, so
    // the NIC drops. __tcp_transmit_skb sees NET_XMIT_DROP: CWR, and the data stays unsent, to
    // go out again as new data. The freed skb's TSQ budget comes back (tcp_wfree); without that
    // the sockets stalled once their budget had leaked away (350 and 22 Mb/s).
    let text = shared_nic("classes = [{ limit = 8 }]").replace(r#"cc = "bbr""#, r#"cc = "cubic""#);
    let s = run(&text);
    let nic = s.queues.iter().find(|q| q.port == "a->s").unwrap();
    assert!(nic.drops > 50, "the NIC drops: {nic:?}");
    for f in &s.flows {
        assert!(f.goodput_mbps > 100.0, "{}: {} Mb/s", f.name, f.goodput_mbps);
        assert!(f.cwr_events > 0, "{f:?}");
        assert_eq!((f.retransmits, f.fast_recoveries, f.rto_count), (0, 0, 0), "nothing was lost: {f:?}");
    }
}

/// One bulk flow, 10 Gb/s, 100 ms RTT, 1 % random loss on the far link (the BBR commit's test).
fn lossy_long_path(cc: &str, nic: &str) -> String {
    format!(
        r#"
[run]
duration = "3s"
[tcp]
cc = "{cc}"
rcvbuf = "1GiB"
[queues.big]
classes = [{{ limit = 100000 }}]
[queues.nic]
{nic}
[topology]
type = "custom"
# 2 µs of host noise, not the 20 ns "auto" gives at 10 Gb/s: with 20 ns this seed's run has no
# retransmission burst longer than fq's flow_limit, and the refusal path is what is tested.
host_jitter = "2us"
nodes = [{{ name = "a", kind = "host" }}, {{ name = "s", kind = "switch" }}, {{ name = "b", kind = "host" }}]
links = [
  {{ a = "a", b = "s", rate = "10Gbps", delay = "25ms", queue_ab = "nic", queue_ba = "big" }},
  {{ a = "s", b = "b", rate = "10Gbps", delay = "25ms", loss = 0.01, queue_ab = "big", queue_ba = "big" }},
]
[[flows]]
name = "bulk"
src = "a"
dst = "b"
[record]
queues = ["a->s"]
"#
    )
}

#[test]
fn retransmission_bursts_against_fqs_flow_limit_stop_at_the_first_refusal() {
    // Under 1 % loss BBR retransmits in bursts of one-segment skbs, more than fq's flow_limit
    // of 100 holds. fq's room is known to the socket before it sends, so, as in Linux, the first
    // refused skb ends the burst (NET_XMIT_DROP) instead of every skb being tried and undone.
    let internal = run_full(&lossy_long_path("bbr", "classes = [{ limit = 100000 }]"));
    let fq = run_full(&lossy_long_path("bbr", FQ));
    let (gi, gf) = (internal.0.flows[0].goodput_mbps, fq.0.flows[0].goodput_mbps);
    assert!((gf - gi).abs() <= 0.05 * gi, "fq {gf} vs internal pacing {gi} Mb/s");
    assert!(fq.1 < 2 * internal.1, "events: fq {} vs internal pacing {}", fq.1, internal.1);
    assert!(fq.2 > 0, "the qdisc refused skbs");
}

/// The summary, the event count and the local drops (NET_XMIT_DROP) of all sockets. Express
/// ports are off: they save events only behind a lazy NIC (not fq), which would skew the
/// comparison of event counts.
fn run_full(text: &str) -> (Summary, u64, u64) {
    let mut b = build(&parse(text, "fq.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    b.cfg.express = false;
    let o = run_built(b, |_, _| {});
    let drops = (0..o.summary.flows.len()).map(|i| o.records.flows[i].sockets.client.local_drops).sum();
    (o.summary.clone(), o.summary.events, drops)
}

#[test]
fn same_seed_same_run() {
    let text = shared_nic(FQ);
    let a = serde_json::to_string(&run(&text)).unwrap();
    let b = serde_json::to_string(&run(&text)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_fq_settings_name_the_field() {
    let err = |nic: &str| match parse(&shared_nic(nic), "fq.toml")
        .map_err(|e| e.to_string())
        .and_then(|s| build(&s).map_err(|e| e.to_string()))
    {
        Ok(_) => panic!("accepted: {nic}"),
        Err(e) => e,
    };
    let e = err("scheduler = \"fq\"\nfq = { quantum = 0 }");
    assert!(e.contains("queues.nic.fq.quantum") && e.contains("1..=1048576"), "{e}");
    let e = err("scheduler = \"fq\"\nfq = { flow_limit = 2000000 }");
    assert!(e.contains("queues.nic.fq.flow_limit"), "{e}");
    let e = err("scheduler = \"fq\"\nclasses = [{ limit = 10 }]");
    assert!(e.contains("queues.nic.classes") && e.contains("fq"), "{e}");
    let e = err("classes = [{ limit = 10 }]\nfq = { limit = 10 }");
    assert!(e.contains("queues.nic.fq") && e.contains("scheduler"), "{e}");
    let e = err("scheduler = \"fq\"\nfq = { quantums = 10 }");
    assert!(e.contains("quantums"), "{e}");
    let e = err("scheduler = \"fq\"\nfq = { refill_delay = \"-1ms\" }");
    assert!(e.contains("queues.nic.fq.refill_delay"), "{e}");
    let e = err("scheduler = \"wfq\"\nclasses = [{ limit = 10 }]");
    assert!(e.contains("queues.nic.scheduler") && e.contains("fq"), "{e}");
}

#[test]
fn the_resolved_configuration_spells_out_fq_defaults() {
    let s = parse(&shared_nic(FQ), "fq.toml").unwrap();
    let text = ccsim_scenario::resolved_toml(&s);
    for key in ["flow_limit = 100", "quantum = 3028", "initial_quantum = 15140", "horizon_drop = true"] {
        assert!(text.contains(key), "{key} missing from\n{text}");
    }
    // It reads back as the same network.
    let again = parse(&text, "config.resolved.toml").unwrap();
    let (a, b) = (build(&s).unwrap(), build(&again).unwrap());
    assert_eq!(format!("{:?}", a.topo.links), format!("{:?}", b.topo.links));
}

#[test]
fn fq_at_a_switch_port_shares_by_flow_hash_without_pacing() {
    // Two senders into one receiver through a switch whose port towards it runs fq: packets
    // carry no departure time there and no socket, so the port works like a stochastic fair
    // queue and keeps the link busy.
    let text = r#"
[run]
duration = "2s"
[tcp]
cc = "bbr"
[queues.fq]
scheduler = "fq"
[topology]
type = "star"
hosts = ["a", "b", "r"]
rate = "1Gbps"
delay = "50us"
switch_queue = "fq"
[[flows]]
name = "a"
src = "a"
dst = "r"
[[flows]]
name = "b"
src = "b"
dst = "r"
[record]
queues = ["s->r"]
warmup = "0.5s"
"#;
    let s = run(text);
    let port = s.queues.iter().find(|q| q.port == "s->r").unwrap();
    assert!(port.utilisation > 0.95, "{port:?}");
    let (a, b) = goodputs(&s);
    assert!(a.min(b) / a.max(b) > 0.9, "{a} vs {b} Mb/s");
}

#[test]
fn red_drops_at_the_senders_own_nic_are_losses_with_cwr() {
    // RED's early drops return NET_XMIT_CN, which TCP counts as sent: the segment is lost and
    // recovered like any loss, and the socket enters CWR. A tail drop (above) is not a loss.
    let red = r#"classes = [{ limit = 1000, aqm = "red", min = 5, max = 15, probability = 0.5, ecn = false }]"#;
    let ping = "[[pings]]\nname = \"p\"\nsrc = \"a\"\ndst = \"b\"\ninterval = \"10ms\"\n";
    let text = shared_nic(red).replace(r#"cc = "bbr""#, r#"cc = "cubic""#).replace(ping, "");
    assert!(!text.contains("[[pings]]"));
    let s = run(&text);
    let nic = s.queues.iter().find(|q| q.port == "a->s").unwrap();
    assert!(nic.drops > 20, "RED drops at the NIC: {nic:?}");
    assert!(s.flows.iter().all(|f| f.goodput_mbps > 100.0), "no socket stalls: {:?}", s.flows);
    // Nothing else drops in this network: every segment RED dropped is sent again.
    let retransmits: u64 = s.flows.iter().map(|f| f.retransmits).sum();
    assert!(retransmits >= nic.drops, "{retransmits} retransmissions for {} drops", nic.drops);
    assert!(s.flows.iter().all(|f| f.cwr_events + f.fast_recoveries > 0), "{:?}", s.flows);
}

#[test]
fn a_pure_ack_dropped_at_its_own_nic_puts_the_socket_in_cwr() {
    // a -> b and b -> a bulk flows through fq NICs holding 4 packets: a host's sender fills its
    // NIC to fq's room, and the ACKs its receiving socket sends then find the qdisc full.
    // __tcp_transmit_skb enters CWR on any NET_XMIT_DROP, so the receiving sockets (which send
    // no data) record CWR events.
    let text = r#"
[run]
duration = "1s"
[tcp]
cc = "cubic"
[queues.nic]
scheduler = "fq"
fq = { limit = 4 }
[topology]
type = "star"
hosts = ["a", "b"]
rate = "1Gbps"
delay = "250us"
host_queue = "nic"
[[flows]]
name = "ab"
src = "a"
dst = "b"
[[flows]]
name = "ba"
src = "b"
dst = "a"
"#;
    let b = build(&parse(text, "fq.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let o = run_built(b, |_, _| {});
    let receivers: Vec<_> = (0..2).map(|i| o.records.flows[i].sockets.server).collect();
    assert!(receivers.iter().all(|r| r.data_segs_out == 0), "receivers send no data");
    assert!(receivers.iter().map(|r| r.cwr_events).sum::<u64>() > 0, "{receivers:?}");
}
