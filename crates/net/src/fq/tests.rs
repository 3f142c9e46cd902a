use super::*;
use crate::packet::LinkNext;
use crate::topology::NodeId;
use ccsim_tcp::{Segment, TcpFlags};

const PKT: u32 = 1500; // wire bytes of one full segment; fq charges 1514

/// A qdisc at a host NIC and a clock.
struct Bench {
    fq: Fq,
    pool: Pool<Packet>,
    now: SimTime,
    tag: u32,
}

impl Bench {
    fn new(spec: FqSpec) -> Self {
        Bench { fq: Fq::new(spec), pool: Pool::new(), now: SimTime::ZERO, tag: 0 }
    }
    /// One segment of socket `conn`: departure time `tstamp` (0: none), `more` segments of
    /// its skb follow. Returns whether it was queued.
    fn send(&mut self, conn: u32, tstamp: u64, more: bool) -> bool {
        self.tag += 1;
        let seg = Segment {
            seq: self.tag,
            len: PKT - 52,
            flags: TcpFlags(TcpFlags::ACK),
            tstamp_ns: tstamp,
            skb_more: more,
            ..Segment::default()
        };
        let id = self.pool.alloc(Packet {
            src: NodeId(0),
            dst: NodeId(1),
            size: PKT,
            dscp: 0,
            ecn: Ecn::Ect0,
            flow_hash: conn,
            path: Packet::NO_PATH,
            hop: 0,
            link_next: LinkNext::NONE,
            payload: Payload::Tcp { conn, to_server: true, seg },
        });
        let pkt = *self.pool.get(id);
        let ok = self.fq.enqueue(id, &pkt, self.now, true);
        if !ok {
            self.pool.free(id);
        }
        ok
    }
    /// An skb of `n` segments; returns how many were queued.
    fn send_skb(&mut self, conn: u32, tstamp: u64, n: usize) -> usize {
        (0..n).filter(|&i| self.send(conn, tstamp, i + 1 < n)).count()
    }
    /// A socket whose one packet leaves in 1 s. Until the next dequeue throttles it, it is
    /// a flow that could send, which keeps new packets out of the fast path.
    fn hold_fair_queue_mode(&mut self, conn: u32) {
        assert!(self.send(conn, self.now.ns() + 1_000_000_000, false));
    }
    /// The next segment at `now`: (socket, tag, ECN).
    fn take(&mut self) -> Option<(u32, u32, Ecn)> {
        let id = self.fq.dequeue(self.now, &mut self.pool)?;
        let p = *self.pool.get(id);
        self.pool.free(id);
        match p.payload {
            Payload::Tcp { conn, seg, .. } => Some((conn, seg.seq, p.ecn)),
            _ => unreachable!(),
        }
    }
    /// The sockets of everything that can leave now, in order.
    fn drain(&mut self) -> Vec<u32> {
        std::iter::from_fn(|| self.take().map(|(c, ..)| c)).collect()
    }
    fn credit(&self, conn: u32) -> i64 {
        self.fq.flows[self.fq.by_key.get(socket_key(conn, true)).unwrap()].credit
    }
}

fn spec_with(quantum: u32, initial_quantum: u32) -> FqSpec {
    FqSpec { quantum, initial_quantum, ..FqSpec::default() }
}

#[test]
fn defaults_are_fq_init_for_a_1500_byte_mtu() {
    let s = FqSpec::default();
    assert_eq!((s.limit, s.flow_limit, s.quantum, s.initial_quantum), (10_000, 100, 3028, 15_140));
    assert_eq!(
        (s.refill_delay, s.horizon, s.timer_slack),
        (SimTime::from_ms(40), SimTime::from_secs(10), SimTime::from_us(10))
    );
    assert_eq!(s.low_rate_threshold * 8, 550_000);
    assert!(s.pacing && s.horizon_drop && s.maxrate.is_none() && s.ce_threshold.is_none());
}

#[test]
fn due_packets_take_the_fast_path_while_no_flow_could_send() {
    let mut b = Bench::new(FqSpec::default());
    for _ in 0..10 {
        assert!(b.send(1, 0, false));
    }
    // Eight go to the internal queue; then the internal queue is "full" and socket 1's
    // flow takes the rest.
    assert_eq!(b.fq.fastpath_packets, 8);
    assert_eq!(b.fq.len_packets(), 10);
    let tags: Vec<u32> = std::iter::from_fn(|| b.take().map(|(_, t, _)| t)).collect();
    assert_eq!(tags, (1..=10).collect::<Vec<_>>(), "one socket's packets stay in order");
    assert!(b.fq.is_empty() && b.fq.bytes == 0);
    assert_eq!(b.fq.stats.dequeued, 10);
}

#[test]
fn round_robin_by_byte_quantum_new_flows_first() {
    // A quantum of one packet, a first credit of two.
    let mut b = Bench::new(spec_with(1514, 3028));
    b.hold_fair_queue_mode(99);
    for _ in 0..6 {
        b.send(1, 0, false);
    }
    for _ in 0..6 {
        b.send(2, 0, false);
    }
    assert_eq!(b.fq.fastpath_packets, 0);
    let mut order: Vec<u32> = (0..6).map(|_| b.take().unwrap().0).collect();
    assert_eq!(b.fq.throttled_events, 1, "socket 99 waits for its time");
    // Socket 3 arrives while 1 and 2 are old flows: it is served next.
    b.send(3, 0, false);
    order.extend(b.drain());
    assert_eq!(order, [1, 1, 2, 2, 1, 2, 3, 1, 2, 1, 2, 1, 2]);
}

#[test]
fn a_tso_skb_is_one_fq_packet() {
    let mut b = Bench::new(spec_with(1514, 1514));
    b.hold_fair_queue_mode(99);
    assert_eq!(b.send_skb(1, 0, 3), 3);
    assert_eq!(b.send_skb(2, 0, 3), 3);
    assert_eq!(b.fq.len_packets(), 7);
    assert_eq!(b.fq.skbs, 3, "two skbs and socket 99's packet");
    // Socket 1's credit (one segment's worth) lets its whole skb go, charged whole.
    let first: Vec<u32> = (0..3).map(|_| b.take().unwrap().0).collect();
    assert_eq!(first, [1, 1, 1]);
    assert_eq!(b.credit(1), 1514 - 3 * 1514);
    assert_eq!(b.drain(), [2, 2, 2]);
}

#[test]
fn departure_times_throttle_a_flow_until_the_watchdog() {
    let mut b = Bench::new(FqSpec::default());
    b.now = SimTime::from_us(100);
    assert!(b.send(1, 100_000, false)); // due now: fast path
    assert!(b.send(1, 110_000, false));
    assert!(b.send(1, 120_000, false));
    assert_eq!(b.fq.fastpath_packets, 1);
    assert_eq!(b.take().map(|t| t.1), Some(1));
    assert_eq!(b.take(), None, "the next packet is due at 110 us");
    assert_eq!(b.fq.throttled_events, 1);
    // The watchdog's hrtimer fires with its slack.
    assert_eq!(b.fq.next_wakeup(), Some(SimTime::from_us(120)));
    b.now = SimTime::from_us(120);
    assert_eq!(b.drain(), [1, 1], "both due by 120 us");
    assert_eq!(b.fq.next_wakeup(), None);
}

#[test]
fn maxrate_paces_stamped_packets_and_absorbs_timer_drift() {
    // 1514 bytes per ms.
    let mut b = Bench::new(FqSpec { maxrate: Some(1_514_000), ..FqSpec::default() });
    b.now = SimTime::from_ms(1);
    for _ in 0..3 {
        assert!(b.send(1, 1_000_000, false));
    }
    assert_eq!(b.fq.fastpath_packets, 0, "maxrate turns the fast path off");
    assert!(b.take().is_some());
    assert_eq!(b.take(), None);
    assert_eq!(b.fq.next_wakeup(), Some(SimTime::from_us(2010)));
    b.now = SimTime::from_us(2010);
    assert!(b.take().is_some());
    // 10 us late: the next gap is 1 ms - 10 us, so the rate holds.
    assert_eq!(b.take(), None);
    assert_eq!(b.fq.next_wakeup(), Some(SimTime::from_us(3010)));
}

#[test]
fn limits_drop_whole_skbs() {
    let mut b = Bench::new(FqSpec { flow_limit: 2, limit: 5, ..FqSpec::default() });
    b.hold_fair_queue_mode(99);
    assert!(b.send(1, 0, false));
    assert!(b.send(1, 0, false));
    // Socket 1 holds its flow_limit of skbs: all three segments of the next skb go.
    assert_eq!(b.send_skb(1, 0, 3), 0);
    assert_eq!((b.fq.flow_limit_drops, b.fq.stats.drops), (1, 3));
    assert_eq!(b.send_skb(2, 0, 2), 2);
    // Five skbs in the qdisc (99's, two of 1, 2's, 3's): the limit.
    assert!(b.send(3, 0, false));
    assert!(!b.send(4, 0, false));
    assert_eq!(b.fq.stats.drops, 4);
    assert_eq!(b.fq.len_packets(), 6);
}

#[test]
fn the_horizon_drops_or_caps_far_departure_times() {
    let mut b = Bench::new(FqSpec::default());
    b.now = SimTime::from_secs(1);
    assert!(!b.send(1, 11_000_000_001, false));
    assert_eq!(b.fq.horizon_drops, 1);
    let mut b = Bench::new(FqSpec { horizon_drop: false, ..FqSpec::default() });
    b.now = SimTime::from_secs(1);
    assert!(b.send(1, 50_000_000_000, false));
    assert_eq!(b.take(), None);
    assert_eq!(b.fq.next_wakeup(), Some(SimTime::from_secs(11) + SimTime::from_us(10)), "capped at now + 10 s");
}

#[test]
fn ce_threshold_marks_packets_that_left_late() {
    let mut b = Bench::new(FqSpec { ce_threshold: Some(SimTime::from_us(100)), ..FqSpec::default() });
    b.hold_fair_queue_mode(99);
    b.send(1, 0, false); // due at its enqueue time, 0
    b.send_skb(2, 150_000, 2); // due at 150 us
    b.now = SimTime::from_us(200);
    let got: Vec<(u32, Ecn)> = std::iter::from_fn(|| b.take().map(|(c, _, e)| (c, e))).collect();
    assert_eq!(got, [(1, Ecn::Ce), (2, Ecn::Ect0), (2, Ecn::Ect0)]);
    assert_eq!(b.fq.stats.marks, 1);
}

#[test]
fn an_idle_flow_regains_a_quantum_and_is_forgotten_after_three_seconds() {
    // Socket 1 sends two segments (3028 bytes) from a first credit of 4542 and goes idle
    // with 1514 left, less than a quantum.
    let idle = |back: SimTime| {
        let mut b = Bench::new(spec_with(3028, 4542));
        b.hold_fair_queue_mode(99);
        b.send_skb(1, 0, 2);
        assert_eq!(b.drain(), [1, 1]);
        assert_eq!(b.credit(1), 1514);
        b.now = back;
        b.hold_fair_queue_mode(98);
        b.send(1, 0, false);
        assert_eq!(b.fq.fastpath_packets, 0);
        b.credit(1)
    };
    assert_eq!(idle(SimTime::from_ms(10)), 1514, "back within refill_delay");
    assert_eq!(idle(SimTime::from_ms(60)), 3028, "idle for longer than refill_delay: a quantum");
    assert_eq!(idle(SimTime::from_secs(4)), 4542, "freed by fq_gc: a new flow");
}

#[test]
fn random_traffic_keeps_each_socket_in_order_and_every_packet_accounted() {
    // Sockets send skbs of 1-4 segments with non-decreasing departure times (TCP's EDT) or
    // none; the clock moves in random steps and fq is asked for packets at random. Invariants: a socket's segments leave in the order sent, an skb's
    // segments leave back to back, every segment is dequeued or dropped, the counters agree.
    for seed in 0..20 {
        let mut rng = ccsim_engine::Rng::new(seed, 1);
        let spec = FqSpec {
            flow_limit: 1 + rng.below(40),
            limit: 20 + rng.below(200),
            quantum: 1514 * (1 + rng.below(3)),
            maxrate: rng.chance(0.3).then(|| 50_000_000 + rng.below(1_000_000_000) as u64),
            ..FqSpec::default()
        };
        let mut b = Bench::new(spec);
        let mut wstamp = [0u64; 6];
        let mut last_out = [0u32; 6];
        let (mut sent, mut out, mut in_skb_of) = (0u64, 0u64, None);
        for _ in 0..3000 {
            b.now += SimTime::from_ns(rng.below(20_000) as u64);
            let now = b.now.ns();
            if rng.chance(0.5) {
                let c = rng.below(6) as usize;
                wstamp[c] = wstamp[c].max(now) + rng.below(30_000) as u64;
                // TCP stamps every skb; sockets 4 and 5 stand for senders that do not.
                let ts = if c >= 4 { 0 } else { wstamp[c] };
                let n = 1 + rng.below(4) as usize;
                b.send_skb(c as u32, ts, n);
                sent += n as u64;
            }
            for _ in 0..rng.below(4) {
                let Some((c, tag, _)) = b.take() else { break };
                out += 1;
                let c = c as usize;
                assert!(tag > last_out[c], "seed {seed}: socket {c} sent {tag} after {}", last_out[c]);
                if let Some(sc) = in_skb_of {
                    assert_eq!(sc, c, "seed {seed}: an skb was interleaved");
                }
                last_out[c] = tag;
                in_skb_of = b.fq.dequeuing.map(|_| c);
            }
        }
        // Drain, following the watchdog as the port would.
        loop {
            match b.take() {
                Some((c, tag, _)) => {
                    out += 1;
                    assert!(tag > last_out[c as usize]);
                    last_out[c as usize] = tag;
                }
                None => match b.fq.next_wakeup() {
                    Some(t) => b.now = t.max(b.now),
                    None => break,
                },
            }
        }
        assert!(b.fq.is_empty(), "seed {seed}: {} segments left", b.fq.len_packets());
        assert_eq!((b.fq.skbs, b.fq.bytes), (0, 0));
        assert_eq!(out + b.fq.stats.drops, sent, "seed {seed}");
        assert_eq!(b.fq.stats.dequeued, out);
        assert_eq!(b.pool.live(), 0, "seed {seed}: every packet freed");
    }
}

#[test]
fn room_is_the_tighter_of_the_flow_and_qdisc_limits() {
    let mut b = Bench::new(FqSpec { flow_limit: 5, limit: 8, ..FqSpec::default() });
    assert_eq!(b.fq.room_for_socket(1, true), 5, "a socket fq has not seen");
    b.hold_fair_queue_mode(99);
    b.send_skb(1, 0, 3); // one skb of three segments
    b.send(1, 0, false);
    assert_eq!(b.fq.room_for_socket(1, true), 3);
    for c in 2..6 {
        b.send(c, 0, false);
    }
    // 7 skbs queued (99's, two of 1, one each of 2..5): the qdisc has room for one more.
    assert_eq!(b.fq.room_for_socket(1, true), 1);
    assert_eq!(b.fq.room_for_socket(1, false), 1, "the other direction is another flow");
}

#[test]
fn a_switch_ignores_departure_times() {
    // The same packet, stamped 1 ms ahead: held at the sending host, forwarded at once by a
    // switch (the forwarding path clears skb->tstamp).
    for at_host in [true, false] {
        let mut b = Bench::new(FqSpec::default());
        let seg = Segment { seq: 1, len: 1448, tstamp_ns: 1_000_000, ..Segment::default() };
        let pkt = Packet {
            src: NodeId(0),
            dst: NodeId(1),
            size: PKT,
            dscp: 0,
            ecn: Ecn::NotEct,
            flow_hash: 7,
            path: Packet::NO_PATH,
            hop: 0,
            link_next: LinkNext::NONE,
            payload: Payload::Tcp { conn: 0, to_server: true, seg },
        };
        let id = b.pool.alloc(pkt);
        assert!(b.fq.enqueue(id, &pkt, SimTime::ZERO, at_host));
        assert_eq!(b.take().is_some(), !at_host, "at_host = {at_host}");
    }
}

#[test]
fn sockets_are_flows_at_hosts_and_hashes_elsewhere() {
    let seg = Segment { flags: TcpFlags(TcpFlags::ACK), ..Segment::default() };
    let pkt = |conn, to_server, hash, flags| Packet {
        src: NodeId(0),
        dst: NodeId(1),
        size: 64,
        dscp: 0,
        ecn: Ecn::NotEct,
        flow_hash: hash,
        path: Packet::NO_PATH,
        hop: 0,
        link_next: LinkNext::NONE,
        payload: Payload::Tcp { conn, to_server, seg: Segment { flags: TcpFlags(flags), ..seg } },
    };
    let ack = TcpFlags::ACK;
    assert_ne!(flow_key(&pkt(1, true, 5, ack), true), flow_key(&pkt(1, false, 5, ack), true));
    assert_eq!(flow_key(&pkt(1, true, 5, ack), false), flow_key(&pkt(2, false, 5 + 1024, ack), false));
    // A SYN-ACK leaves from a request socket: an orphan.
    let synack = pkt(1, false, 5, TcpFlags::SYN | ack);
    assert_eq!(flow_key(&synack, true), flow_key(&pkt(1, true, 5, ack), false));
}
