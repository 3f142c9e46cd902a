use super::*;
use crate::packet::{LinkNext, Payload};
use crate::topology::NodeId;
use std::mem::offset_of;

/// A class's lines as laid out: what a lazy port reads and writes per packet in two.
#[test]
fn a_class_is_laid_out_by_use() {
    crate::assert_cache_lines(&[
        ("packets", offset_of!(Class, packets), 8, 0),
        ("limit", offset_of!(Class, limit), 16, 0),
        ("aqm", offset_of!(Class, aqm), std::mem::size_of::<Aqm>(), 0),
        ("bytes", offset_of!(Class, bytes), 8, 0),
        ("stats", offset_of!(Class, stats), std::mem::size_of::<QueueStats>(), 1),
        ("red.idle_since", offset_of!(Class, red), 16, 1),
    ]);
    // What an arrival updates has a read-only field on each side.
    for (a, b) in
        [(offset_of!(Class, packets), offset_of!(Class, bytes)), (offset_of!(Class, bytes), offset_of!(Class, stats))]
    {
        assert!(b - a > 8, "updated fields at {a} and {b} are neighbours");
    }
}

const RATE: u64 = 1_000_000_000;

/// A port queue with its packet pool, fed by hand. Packets carry a tag (the ping sequence
/// number) so tests can tell them apart when they leave.
struct Bench {
    q: PortQueue,
    pool: Pool<Packet>,
    rng: Rng,
    now: SimTime,
    tag: u32,
}

/// What happened to one offered packet.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Offer {
    res: EnqueueResult,
    /// The packet's ECN field after the queue saw it.
    ecn: Ecn,
}

impl Offer {
    fn marked(&self) -> bool {
        self.res == EnqueueResult::Queued && self.ecn == Ecn::Ce
    }
}

impl Bench {
    fn new(spec: QueueSpec) -> Self {
        Bench { q: PortQueue::new(&spec), pool: Pool::new(), rng: Rng::new(7, 3), now: SimTime::ZERO, tag: 0 }
    }
    fn one(class: ClassSpec) -> Self {
        Bench::new(QueueSpec { classes: vec![class], scheduler: Scheduler::StrictPriority, fq: None })
    }
    fn offer_full(&mut self, size: u32, dscp: u8, ecn: Ecn) -> Offer {
        self.tag += 1;
        let id = self.pool.alloc(Packet {
            src: NodeId(0),
            dst: NodeId(1),
            size,
            dscp,
            ecn,
            flow_hash: 0,
            path: Packet::NO_PATH,
            hop: 0,
            link_next: LinkNext::NONE,
            payload: Payload::PingRequest { probe: 0, seq: self.tag, sent: self.now },
        });
        let res = self.q.enqueue(id, self.pool.get_mut(id), self.now, RATE, &mut self.rng);
        let ecn = self.pool.get(id).ecn;
        if res == EnqueueResult::Dropped {
            self.pool.free(id);
        }
        Offer { res, ecn }
    }
    fn offer(&mut self, ecn: Ecn) -> Offer {
        self.offer_full(1000, 0, ecn)
    }
    /// Dequeue one packet: (tag, dropped by dequeue marking, ECN field).
    fn take(&mut self) -> Option<(u32, bool, Ecn)> {
        let (id, dropped) = match self.q.dequeue(self.now, &mut self.pool)? {
            Dequeued::Send(id) => (id, false),
            Dequeued::Dropped(id) => (id, true),
        };
        let p = *self.pool.get(id);
        self.pool.free(id);
        let tag = match p.payload {
            Payload::PingRequest { seq, .. } => seq,
            _ => unreachable!(),
        };
        Some((tag, dropped, p.ecn))
    }
    fn len(&self) -> u64 {
        self.q.len_packets()
    }
    fn stats(&self) -> QueueStats {
        self.q.classes[0].stats
    }
}

fn class(limit: u64, unit: Unit, aqm: Aqm) -> ClassSpec {
    ClassSpec { name: "c".into(), dscp: vec![], limit: QueueLimit { value: limit, unit }, aqm }
}

fn step(k: u64, unit: Unit, at: EcnMarkPoint, non_ect: NonEctPolicy) -> Aqm {
    Aqm::Step { k, unit, at, non_ect }
}

fn red(min: u64, max: u64, max_p: f64, wlog: u8) -> RedSpec {
    RedSpec { min, max, max_p, wlog, ecn: true, harddrop: false, avpkt: 1000 }
}

// ---- step marking on enqueue ----

#[test]
fn step_enqueue_first_mark_is_packet_k_plus_1() {
    for k in [0u64, 1, 5, 20] {
        let mut b =
            Bench::one(class(1000, Unit::Packets, step(k, Unit::Packets, EcnMarkPoint::Enqueue, NonEctPolicy::Drop)));
        let marked: Vec<bool> = (0..k + 10).map(|_| b.offer(Ecn::Ect0).marked()).collect();
        let first = marked.iter().position(|&m| m).map(|i| i as u64 + 1);
        assert_eq!(first, Some(k + 1), "K = {k}: the (K+1)-th queued packet is the first marked");
        assert!(marked[k as usize..].iter().all(|&m| m), "K = {k}: every packet above K is marked");
        assert_eq!(b.stats().marks, 10);
        assert_eq!(b.stats().drops, 0);
        assert_eq!(b.len(), k + 10);
    }
}

#[test]
fn step_enqueue_marks_on_instantaneous_queue() {
    // Draining below K stops marking at once (no averaging).
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(3, Unit::Packets, EcnMarkPoint::Enqueue, NonEctPolicy::Drop)));
    for _ in 0..3 {
        assert!(!b.offer(Ecn::Ect0).marked());
    }
    assert!(b.offer(Ecn::Ect1).marked(), "4th packet with K = 3 (ECT(1) too)");
    b.take();
    b.take();
    // 2 queued: the next arrival makes 3, not above K.
    assert!(!b.offer(Ecn::Ect0).marked());
    assert!(b.offer(Ecn::Ect0).marked());
}

#[test]
fn step_enqueue_non_ect_dropped_above_k_with_drop_policy() {
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(4, Unit::Packets, EcnMarkPoint::Enqueue, NonEctPolicy::Drop)));
    for _ in 0..4 {
        let o = b.offer(Ecn::NotEct);
        assert_eq!(o, Offer { res: EnqueueResult::Queued, ecn: Ecn::NotEct });
    }
    for _ in 0..3 {
        assert_eq!(b.offer(Ecn::NotEct).res, EnqueueResult::Dropped);
    }
    assert_eq!(b.len(), 4);
    assert_eq!(b.stats().drops, 3);
    assert_eq!(b.stats().marks, 0);
    assert_eq!(b.stats().enqueued, 4);
    // An ECN-capable packet at the same occupancy is marked and queued.
    assert!(b.offer(Ecn::Ect0).marked());
    assert_eq!(b.stats().marks, 1);
    assert_eq!(b.len(), 5);
}

#[test]
fn step_enqueue_non_ect_queued_unmarked_with_queue_policy() {
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(4, Unit::Packets, EcnMarkPoint::Enqueue, NonEctPolicy::Queue)));
    for _ in 0..10 {
        assert_eq!(b.offer(Ecn::NotEct), Offer { res: EnqueueResult::Queued, ecn: Ecn::NotEct });
    }
    assert_eq!(b.len(), 10);
    assert_eq!(b.stats().drops, 0);
    assert_eq!(b.stats().marks, 0);
    assert!(b.offer(Ecn::Ect0).marked());
    assert_eq!(b.stats().marks, 1);
}

#[test]
fn step_enqueue_ce_packets_are_not_counted_again() {
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(2, Unit::Packets, EcnMarkPoint::Enqueue, NonEctPolicy::Drop)));
    // Below K a CE packet passes untouched.
    assert_eq!(b.offer(Ecn::Ce), Offer { res: EnqueueResult::Queued, ecn: Ecn::Ce });
    b.offer(Ecn::Ect0);
    // Above K: already CE, queued (not dropped as non-ECT), no new mark counted.
    for _ in 0..5 {
        assert_eq!(b.offer(Ecn::Ce), Offer { res: EnqueueResult::Queued, ecn: Ecn::Ce });
    }
    assert_eq!(b.stats().marks, 0);
    assert_eq!(b.stats().drops, 0);
    assert!(b.offer(Ecn::Ect0).marked());
    assert_eq!(b.stats().marks, 1);
    assert_eq!(b.len(), 8);
}

// ---- step marking on dequeue ----

#[test]
fn step_dequeue_marks_departures_while_queue_with_them_exceeds_k() {
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(3, Unit::Packets, EcnMarkPoint::Dequeue, NonEctPolicy::Drop)));
    for _ in 0..7 {
        // Nothing is marked on the way in.
        assert_eq!(b.offer(Ecn::Ect0), Offer { res: EnqueueResult::Queued, ecn: Ecn::Ect0 });
    }
    assert_eq!(b.stats().marks, 0);
    let out: Vec<(u32, bool, Ecn)> = std::iter::from_fn(|| b.take()).collect();
    // Occupancy with the departing packet: 7, 6, 5, 4 (> 3: marked), 3, 2, 1 (not).
    let ecns: Vec<Ecn> = out.iter().map(|o| o.2).collect();
    assert_eq!(ecns, [Ecn::Ce, Ecn::Ce, Ecn::Ce, Ecn::Ce, Ecn::Ect0, Ecn::Ect0, Ecn::Ect0]);
    assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), (1..=7).collect::<Vec<_>>(), "FIFO order");
    assert!(out.iter().all(|o| !o.1));
    let st = b.stats();
    assert_eq!((st.marks, st.dequeued, st.drops), (4, 7, 0));
    assert_eq!(b.q.classes[0].bytes, 0);
    assert!(b.q.is_empty());
}

#[test]
fn step_dequeue_non_ect_and_ce() {
    // Drop policy: non-ECT departures above K are dropped at dequeue.
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(2, Unit::Packets, EcnMarkPoint::Dequeue, NonEctPolicy::Drop)));
    for _ in 0..5 {
        b.offer(Ecn::NotEct);
    }
    let dropped: Vec<bool> = std::iter::from_fn(|| b.take()).map(|o| o.1).collect();
    assert_eq!(dropped, [true, true, true, false, false]);
    let st = b.stats();
    assert_eq!((st.enqueued, st.dequeued, st.drops, st.marks), (5, 2, 3, 0));
    assert_eq!(st.bytes_dequeued, 2000);
    assert_eq!(b.q.classes[0].bytes, 0);

    // Queue policy: sent unmarked. CE departures are not counted as marks.
    let mut b =
        Bench::one(class(1000, Unit::Packets, step(2, Unit::Packets, EcnMarkPoint::Dequeue, NonEctPolicy::Queue)));
    b.offer(Ecn::NotEct);
    b.offer(Ecn::Ce);
    b.offer(Ecn::Ect0);
    b.offer(Ecn::Ect0);
    let out: Vec<(bool, Ecn)> = std::iter::from_fn(|| b.take()).map(|o| (o.1, o.2)).collect();
    assert_eq!(out, [(false, Ecn::NotEct), (false, Ecn::Ce), (false, Ecn::Ect0), (false, Ecn::Ect0)]);
    assert_eq!(b.stats().marks, 0);
    assert_eq!(b.stats().drops, 0);
    // 5 queued: departures see 5, 4, 3 (> 2: one already CE, two ECT marked), then 2, 1.
    for e in [Ecn::Ce, Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::Ect0] {
        b.offer(e);
    }
    let ecns: Vec<Ecn> = std::iter::from_fn(|| b.take()).map(|o| o.2).collect();
    assert_eq!(ecns, [Ecn::Ce, Ecn::Ce, Ecn::Ce, Ecn::Ect0, Ecn::Ect0]);
    assert_eq!(b.stats().marks, 2);
}

// ---- bytes ----

#[test]
fn step_thresholds_in_bytes() {
    let mut b =
        Bench::one(class(1_000_000, Unit::Bytes, step(3000, Unit::Bytes, EcnMarkPoint::Enqueue, NonEctPolicy::Drop)));
    // 1000, 2000, 3000 bytes with the arrival: not above K.
    for _ in 0..3 {
        assert!(!b.offer_full(1000, 0, Ecn::Ect0).marked());
    }
    assert!(b.offer_full(1, 0, Ecn::Ect0).marked(), "3001 bytes > K = 3000");
    b.take();
    b.take();
    b.take();
    b.take();
    // Packet counts do not matter, bytes do: two 1000-byte packets then one of 1500.
    assert!(!b.offer_full(1000, 0, Ecn::Ect0).marked());
    assert!(!b.offer_full(1000, 0, Ecn::Ect0).marked());
    assert!(b.offer_full(1500, 0, Ecn::Ect0).marked(), "3500 bytes");

    // Dequeue: bytes with the departing packet.
    let mut b =
        Bench::one(class(1_000_000, Unit::Bytes, step(2500, Unit::Bytes, EcnMarkPoint::Dequeue, NonEctPolicy::Drop)));
    for _ in 0..3 {
        b.offer_full(1000, 0, Ecn::Ect0);
    }
    let ecns: Vec<Ecn> = std::iter::from_fn(|| b.take()).map(|o| o.2).collect();
    assert_eq!(ecns, [Ecn::Ce, Ecn::Ect0, Ecn::Ect0], "3000 > 2500, then 2000, 1000");
}

#[test]
fn limit_in_bytes() {
    let mut b = Bench::one(class(4500, Unit::Bytes, Aqm::DropTail));
    for _ in 0..4 {
        assert_eq!(b.offer_full(1000, 0, Ecn::NotEct).res, EnqueueResult::Queued);
    }
    assert_eq!(b.offer_full(1000, 0, Ecn::NotEct).res, EnqueueResult::Dropped, "5000 > 4500");
    assert_eq!(b.offer_full(501, 0, Ecn::NotEct).res, EnqueueResult::Dropped, "4501 > 4500");
    assert_eq!(b.offer_full(500, 0, Ecn::NotEct).res, EnqueueResult::Queued, "exactly 4500 fits");
    assert_eq!(b.q.classes[0].bytes, 4500);
    assert_eq!(b.stats().drops, 2);
    assert_eq!(b.len(), 5);
    b.take();
    assert_eq!(b.q.classes[0].bytes, 3500);
    assert_eq!(b.offer_full(1000, 0, Ecn::NotEct).res, EnqueueResult::Queued);
}

// ---- tail drop ----

#[test]
fn tail_drop_at_the_limit() {
    let mut b = Bench::one(class(4, Unit::Packets, Aqm::DropTail));
    let res: Vec<EnqueueResult> = (0..6).map(|_| b.offer(Ecn::Ect0).res).collect();
    use EnqueueResult::*;
    assert_eq!(res, [Queued, Queued, Queued, Queued, Dropped, Dropped]);
    let st = b.stats();
    assert_eq!((st.enqueued, st.drops, st.marks), (4, 2, 0));
    // Drop-tail never marks.
    assert!(std::iter::from_fn(|| b.take()).all(|o| o.2 == Ecn::Ect0));
    // Room again after departures.
    assert_eq!(b.offer(Ecn::Ect0).res, Queued);
}

#[test]
fn limit_applies_before_marking() {
    // Step marking with K below the limit: at the limit an ECT packet is dropped, not
    // marked, and counted once.
    let mut b = Bench::one(class(5, Unit::Packets, step(2, Unit::Packets, EcnMarkPoint::Enqueue, NonEctPolicy::Queue)));
    for _ in 0..5 {
        assert_eq!(b.offer(Ecn::Ect0).res, EnqueueResult::Queued);
    }
    assert_eq!(b.stats().marks, 3);
    assert_eq!(b.offer(Ecn::Ect0).res, EnqueueResult::Dropped);
    assert_eq!(b.offer(Ecn::NotEct).res, EnqueueResult::Dropped);
    let st = b.stats();
    assert_eq!((st.enqueued, st.drops, st.marks), (5, 2, 3));
}

// ---- RED ----

/// Keep the class at `backlog` packets (as seen by each arrival), offering `n` packets of
/// ECN field `ecn`; returns the outcome of each.
fn steady(b: &mut Bench, backlog: u64, n: usize, ecn: Ecn) -> Vec<Offer> {
    assert_eq!(b.len(), backlog, "fill the queue first");
    (0..n)
        .map(|_| {
            let o = b.offer(ecn);
            if o.res == EnqueueResult::Queued {
                b.take();
            }
            o
        })
        .collect()
}

/// Fill to `n` packets without RED acting (max_p = 0 keeps the ramp quiet below max).
fn fill(b: &mut Bench, n: u64) {
    for _ in 0..n {
        assert_eq!(b.offer(Ecn::Ect0).res, EnqueueResult::Queued);
    }
}

fn red_bench(r: RedSpec) -> Bench {
    Bench::one(class(10_000, Unit::Packets, Aqm::Red(r)))
}

#[test]
fn red_below_min_never_marks() {
    // max_p = 1 so that anything at or above min would show.
    let mut b = red_bench(red(10, 20, 1.0, 0));
    fill(&mut b, 9);
    for ecn in [Ecn::Ect0, Ecn::NotEct] {
        let out = steady(&mut b, 9, 20_000, ecn);
        assert!(out.iter().all(|o| *o == Offer { res: EnqueueResult::Queued, ecn }), "{ecn:?}");
    }
    assert_eq!(b.stats().marks, 0);
    assert_eq!(b.stats().drops, 0);
}

#[test]
fn red_uses_the_average_not_the_instantaneous_queue() {
    // Default wlog 9: a burst of 40 packets lifts the average to about 40^2/2/512 = 1.5,
    // below min = 5, although the instantaneous queue passes max = 15.
    let mut b = red_bench(red(5, 15, 1.0, 9));
    for _ in 0..40 {
        assert_eq!(b.offer(Ecn::NotEct), Offer { res: EnqueueResult::Queued, ecn: Ecn::NotEct });
    }
    // The EWMA itself: avg += 2^-wlog * (backlog - avg), backlog excluding the arrival.
    let mut b = red_bench(red(1000, 2000, 0.1, 2));
    let mut avg = 0.0f64;
    for n in 0..50u32 {
        b.offer(Ecn::Ect0);
        avg += 0.25 * (n as f64 - avg);
    }
    let got = b.q.classes[0].red.qavg;
    assert!((got - avg).abs() < 1e-9, "qavg {got}, expected {avg}");
    assert!((got - 46.0).abs() < 0.01, "a 1/4-weight average trails a ramp by about 3: {got}");
}

#[test]
fn red_average_decays_over_idle_time() {
    // w = 1/2; at 1 Gb/s an avpkt of 1000 bytes takes 8 us.
    let mut b = red_bench(RedSpec { avpkt: 1000, ..red(1000, 2000, 0.1, 1) });
    for _ in 0..8 {
        b.offer(Ecn::Ect0);
    }
    b.now = SimTime::from_ms(1);
    while b.take().is_some() {}
    let q0 = b.q.classes[0].red.qavg;
    assert!(q0 > 6.0, "{q0}");
    // Empty since 1 ms; an arrival 3 packet times (and a bit) later sees avg * (1 - w)^3.
    b.now = SimTime::from_ms(1) + SimTime::from_ns(3 * 8000 + 500);
    b.offer(Ecn::Ect0);
    let q1 = b.q.classes[0].red.qavg;
    assert!((q1 - q0 / 8.0).abs() < 1e-9, "after idle: {q1}, expected {}", q0 / 8.0);
    // A long idle period empties the average.
    b.now = SimTime::from_ms(2);
    while b.take().is_some() {}
    b.now = SimTime::from_ms(12);
    b.offer(Ecn::Ect0);
    assert!(b.q.classes[0].red.qavg < 1e-9);
}

#[test]
fn red_above_max_marks_every_ect_packet_and_drops_the_rest() {
    // wlog 0: the average is the backlog. max_p = 0 keeps the fill quiet.
    let mut b = red_bench(red(5, 10, 0.0, 0));
    fill(&mut b, 10);
    let out = steady(&mut b, 10, 1000, Ecn::Ect0);
    assert!(out.iter().all(|o| o.marked()), "hard mark: every ECT packet above max");
    assert_eq!(b.stats().marks, 1000);
    let out = steady(&mut b, 10, 1000, Ecn::Ect1);
    assert!(out.iter().all(|o| o.marked()));
    // Not ECN-capable: dropped.
    let out = steady(&mut b, 10, 1000, Ecn::NotEct);
    assert!(out.iter().all(|o| o.res == EnqueueResult::Dropped));
    assert_eq!(b.stats().drops, 1000);
    // Already CE: queued, not counted.
    let out = steady(&mut b, 10, 100, Ecn::Ce);
    assert!(out.iter().all(|o| *o == Offer { res: EnqueueResult::Queued, ecn: Ecn::Ce }));
    let st = b.stats();
    assert_eq!((st.marks, st.drops), (2000, 1000));
}

#[test]
fn red_above_max_drops_with_harddrop_or_without_ecn() {
    for spec in [RedSpec { harddrop: true, ..red(5, 10, 0.0, 0) }, RedSpec { ecn: false, ..red(5, 10, 0.0, 0) }] {
        let mut b = red_bench(spec);
        fill(&mut b, 10);
        for ecn in [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct] {
            let out = steady(&mut b, 10, 500, ecn);
            assert!(out.iter().all(|o| o.res == EnqueueResult::Dropped), "{spec:?} {ecn:?}");
        }
        assert_eq!(b.stats().marks, 0);
        assert_eq!(b.stats().drops, 1500);
    }
    // harddrop only affects hard marks: between min and max ECT packets are still marked.
    let mut b = red_bench(RedSpec { harddrop: true, ..red(5, 10, 1.0, 0) });
    fill_between(&mut b, 8);
    let out = steady(&mut b, 8, 5000, Ecn::Ect0);
    assert!(out.iter().all(|o| o.res == EnqueueResult::Queued));
    assert!(out.iter().filter(|o| o.marked()).count() > 1000);
    // ... and ecn = false makes those drops.
    let mut b = red_bench(RedSpec { ecn: false, ..red(5, 10, 1.0, 0) });
    fill_between(&mut b, 8);
    let out = steady(&mut b, 8, 5000, Ecn::Ect0);
    assert!(out.iter().all(|o| !o.marked()));
    assert!(out.iter().filter(|o| o.res == EnqueueResult::Dropped).count() > 1000);
    assert_eq!(b.stats().marks, 0);
}

/// Fill to `n` packets with RED free to act (drops are retried).
fn fill_between(b: &mut Bench, n: u64) {
    while b.len() < n {
        b.offer(Ecn::Ect0);
    }
}

/// Marked fraction and the largest gap between marks at a constant backlog.
fn red_fraction(backlog: u64, n: usize) -> (f64, usize, f64) {
    let mut b = red_bench(red(10, 30, 0.1, 0));
    fill_between(&mut b, backlog);
    let out = steady(&mut b, backlog, n, Ecn::Ect0);
    assert!(out.iter().all(|o| o.res == EnqueueResult::Queued));
    let marks: Vec<usize> = out.iter().enumerate().filter(|(_, o)| o.marked()).map(|(i, _)| i).collect();
    let gaps: Vec<usize> = marks.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_gap = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
    (marks.len() as f64 / n as f64, gaps.iter().copied().max().unwrap_or(usize::MAX), mean_gap)
}

#[test]
fn red_marking_between_min_and_max_follows_the_count_method() {
    // min 10, max 30, max_p 0.1, average = backlog. pb = max_p (avg - min) / (max - min).
    // With pa = pb / (1 - count pb) the gap between marks is uniform over 1 ..= 1/pb - 1,
    // so the marked fraction is 2 pb (independent marking at pb would give pb) and no gap
    // exceeds 1/pb.
    for (backlog, pb) in [(12u64, 0.01), (15, 0.025), (20, 0.05), (26, 0.08)] {
        let (frac, max_gap, mean_gap) = red_fraction(backlog, 200_000);
        let want = 2.0 * pb;
        assert!((frac - want).abs() < 0.08 * want, "backlog {backlog}: marked fraction {frac}, expected ~{want}");
        assert!(max_gap as f64 <= 1.0 / pb + 1e-9, "backlog {backlog}: gap {max_gap} > 1/pb = {}", 1.0 / pb);
        assert!((mean_gap - 0.5 / pb).abs() < 0.08 * 0.5 / pb, "backlog {backlog}: mean gap {mean_gap}");
    }
}

#[test]
fn red_in_bytes() {
    // Thresholds and backlog in bytes when the class counts bytes.
    let spec = RedSpec { min: 5000, max: 8000, max_p: 1.0, wlog: 0, ecn: true, harddrop: false, avpkt: 1000 };
    let mut b = Bench::one(class(1_000_000, Unit::Bytes, Aqm::Red(spec)));
    fill(&mut b, 4);
    assert!(steady(&mut b, 4, 1000, Ecn::Ect0).iter().all(|o| !o.marked()), "4000 B < min");
    fill_between(&mut b, 9);
    assert!(steady(&mut b, 9, 1000, Ecn::Ect0).iter().all(|o| o.marked()), "9000 B >= max");
}

// ---- classes and schedulers ----

fn classes(scheduler: Scheduler) -> QueueSpec {
    let c = |name: &str, dscp: Vec<u8>, limit: u64| ClassSpec {
        name: name.into(),
        dscp,
        limit: QueueLimit { value: limit, unit: Unit::Packets },
        aqm: Aqm::DropTail,
    };
    QueueSpec {
        classes: vec![c("ef", vec![46], 2), c("be", vec![], 100), c("af", vec![10, 12], 100)],
        scheduler,
        fq: None,
    }
}

#[test]
fn dscp_picks_the_class_and_unlisted_dscps_take_the_default_class() {
    let mut b = Bench::new(classes(Scheduler::StrictPriority));
    for d in [46, 10, 12, 0, 63, 11, 34] {
        b.offer_full(1000, d, Ecn::NotEct);
    }
    let lens: Vec<usize> = b.q.classes.iter().map(|c| c.fifo.len()).collect();
    assert_eq!(lens, [1, 4, 2], "46 -> ef; 10, 12 -> af; 0, 63, 11, 34 -> be (the class without DSCPs)");
    // Limits are per class: ef holds 2.
    assert_eq!(b.offer_full(1000, 46, Ecn::NotEct).res, EnqueueResult::Queued);
    assert_eq!(b.offer_full(1000, 46, Ecn::NotEct).res, EnqueueResult::Dropped);
    assert_eq!(b.offer_full(1000, 0, Ecn::NotEct).res, EnqueueResult::Queued);
    assert_eq!(b.q.classes[0].stats.drops, 1);
    assert_eq!(b.q.classes[1].stats.drops, 0);

    // Without a class lacking DSCPs, the first class is the default.
    let mut spec = classes(Scheduler::StrictPriority);
    spec.classes[1].dscp = vec![0];
    let mut b = Bench::new(spec);
    b.offer_full(1000, 5, Ecn::NotEct);
    b.offer_full(1000, 0, Ecn::NotEct);
    let lens: Vec<usize> = b.q.classes.iter().map(|c| c.fifo.len()).collect();
    assert_eq!(lens, [1, 1, 0]);
}

#[test]
fn strict_priority_serves_classes_in_order() {
    let mut b = Bench::new(classes(Scheduler::StrictPriority));
    // tags:  1(be) 2(af) 3(ef) 4(be) 5(ef) 6(af)
    for d in [0, 10, 46, 0, 46, 12] {
        b.offer_full(1000, d, Ecn::NotEct);
    }
    let order: Vec<u32> = std::iter::from_fn(|| b.take()).map(|o| o.0).collect();
    assert_eq!(order, [3, 5, 1, 4, 2, 6], "ef, then be, then af; FIFO inside a class");
    // A later high-priority arrival overtakes queued low-priority packets.
    b.offer_full(1000, 0, Ecn::NotEct); // 7
    b.offer_full(1000, 0, Ecn::NotEct); // 8
    assert_eq!(b.take().unwrap().0, 7);
    b.offer_full(1000, 46, Ecn::NotEct); // 9
    assert_eq!(b.take().unwrap().0, 9);
    assert_eq!(b.take().unwrap().0, 8);
    assert!(b.take().is_none());
}

#[test]
fn round_robin_takes_one_packet_per_non_empty_class_in_turn() {
    let mut b = Bench::new(classes(Scheduler::RoundRobin));
    // ef: 1, 2; be: 3, 4, 5; af: 6
    for d in [46, 46, 0, 0, 0, 10] {
        b.offer_full(1000, d, Ecn::NotEct);
    }
    let order: Vec<u32> = std::iter::from_fn(|| b.take()).map(|o| o.0).collect();
    assert_eq!(order, [1, 3, 6, 2, 4, 5]);
    // The turn carries over between busy periods: be was served last, so af is next,
    // then ef, then be.
    b.offer_full(1000, 46, Ecn::NotEct); // 7
    b.offer_full(1000, 10, Ecn::NotEct); // 8
    b.offer_full(1000, 0, Ecn::NotEct); // 9
    let order: Vec<u32> = std::iter::from_fn(|| b.take()).map(|o| o.0).collect();
    assert_eq!(order, [8, 7, 9]);
}
