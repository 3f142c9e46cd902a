//! The fq packet scheduler (net/sched/sch_fq.c): a queue per socket, served round robin with a
//! byte quantum (new flows before old ones), earliest-departure-time pacing (a packet waits until
//! the `skb->tstamp` TCP gave it; a flow waiting for its next packet's time is "throttled" and
//! leaves the round robin until then), a fast path for packets due now when no flow could send,
//! and the qdisc's limits: 10 000 packets in all, 100 per flow, a 10 s horizon.
//!
//! A TSO skb is one fq packet, as in the kernel: the segments of one skb (TCP marks all but the
//! last with `skb_more`) are classified, counted, charged and dequeued together.
//!
//! At a switch port packets have no socket and no departure time (the forwarding path clears
//! skb->tstamp): fq there shares the port among hash buckets. A host tells each socket how many
//! skbs fq would still take from it ([`Fq::room_for_socket`]), so TCP can stop at the first skb
//! fq would drop, as `__tcp_transmit_skb` learns NET_XMIT_DROP.
//!
//! Not modelled: fq's three priority bands (every packet ccsim sends has priority 0, which the
//! default priomap puts in band 1, so one band is served), offload_horizon (no NIC offloads
//! pacing), and the hash-tree layout (a flow is found by its socket; flows idle for more than
//! 3 s are forgotten, as fq_gc frees them, so a returning flow starts with the initial quantum).

use crate::packet::{Packet, Payload};
use crate::queue::QueueStats;
use ccsim_engine::{Pool, PoolId, SimTime};
use ccsim_tcp::Ecn;
use std::collections::{BTreeSet, VecDeque};

/// The qdisc's parameters (`tc qdisc add ... fq ...`), defaults as `fq_init` sets them for a
/// 1500-byte MTU device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqSpec {
    /// `limit`: packets (skbs) in the qdisc (10 000).
    pub limit: u32,
    /// `flow_limit`: packets (skbs) per flow (100).
    pub flow_limit: u32,
    /// `quantum`: bytes a flow may send per round (2 × (MTU + 14) = 3028).
    pub quantum: u32,
    /// `initial_quantum`: a new flow's first credit (10 × (MTU + 14) = 15 140).
    pub initial_quantum: u32,
    /// `refill_delay`: a flow idle for longer regains at least one quantum of credit (40 ms).
    pub refill_delay: SimTime,
    /// `maxrate`: per-flow rate cap in bytes per second (None: unlimited).
    pub maxrate: Option<u64>,
    /// `low_rate_threshold`: below this rate (bytes per second) a flow without departure times
    /// is paced packet by packet (550 kbit/s).
    pub low_rate_threshold: u64,
    /// `timer_slack`: the watchdog hrtimer's slack; it fires at most this late (10 µs).
    pub timer_slack: SimTime,
    /// `horizon`: packets stamped further ahead are dropped (`horizon_drop`, default) or
    /// capped to it (10 s).
    pub horizon: SimTime,
    pub horizon_drop: bool,
    /// `ce_threshold`: mark CE on packets that leave later than this after their departure time
    /// (None: never).
    pub ce_threshold: Option<SimTime>,
    /// `pacing` (rate_enable): honour departure times and pace; `nopacing` turns it off.
    pub pacing: bool,
}

impl Default for FqSpec {
    fn default() -> Self {
        let mtu = 1500 + 14; // psched_mtu: dev->mtu + hard_header_len
        FqSpec {
            limit: 10_000,
            flow_limit: 100,
            quantum: 2 * mtu,
            initial_quantum: 10 * mtu,
            refill_delay: SimTime::from_ms(40),
            maxrate: None,
            low_rate_threshold: 550_000 / 8,
            timer_slack: SimTime::from_us(10),
            horizon: SimTime::from_secs(10),
            horizon_drop: true,
            ce_threshold: None,
            pacing: true,
        }
    }
}

/// Where a flow is (`fq_flow_is_detached` / new_flows / old_flows / the `delayed` tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Detached,
    Listed,
    Throttled,
}

/// One queued segment: pool id, the skb's time to send, whether it opens an skb, the skb's
/// length (on its first segment: the whole skb) and whether the skb carried a departure time.
#[derive(Clone, Copy, Debug)]
struct Entry {
    id: PoolId,
    time_to_send: u64,
    first: bool,
    skb_len: u32,
    stamped: bool,
}

struct Flow {
    q: VecDeque<Entry>,
    /// skbs queued (`f->qlen`).
    skbs: u32,
    credit: i64,
    time_next_packet: u64,
    state: State,
    /// When the flow became detached (`f->age`).
    age: u64,
}

/// The fq qdisc of one port.
pub(crate) struct Fq {
    spec: FqSpec,
    flows: Vec<Flow>,
    by_key: FlowIndex,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    /// Throttled flows by (time_next_packet, insertion order, flow).
    delayed: BTreeSet<(u64, u64, usize)>,
    delayed_seq: u64,
    /// The fast-path queue (`q->internal`).
    internal: VecDeque<Entry>,
    internal_skbs: u32,
    /// skbs in the qdisc (`sch->q.qlen`), segments, bytes.
    skbs: u32,
    segments: u32,
    pub bytes: u64,
    /// Flows with nothing queued and flows throttled (`inactive_flows`, `throttled_flows`).
    inactive: u32,
    throttled: u32,
    /// The last segment enqueued opened an skb whose next segments follow: (socket key,
    /// queue: None for the fast path, else the flow, or a dropped skb).
    open_skb: Option<(u64, Option<Option<usize>>)>,
    /// The skb being dequeued has more segments, from this queue.
    dequeuing: Option<Option<usize>>,
    pub stats: QueueStats,
    /// `stat_throttled`, `stat_flows_plimit`, `stat_horizon_drops`, fast-path packets.
    pub throttled_events: u64,
    pub flow_limit_drops: u64,
    pub horizon_drops: u64,
    pub fastpath_packets: u64,
}

/// The flow key of socket (`conn`, `to_server`): even, so never an orphan's.
fn socket_key(conn: u32, to_server: bool) -> u64 {
    ((conn as u64) << 1 | to_server as u64) << 1
}

/// fq's "flow" of a packet: the sending socket at a host, else (no `skb->sk`: a switch, an
/// echo reply, a SYN-ACK from a request socket) the packet hash masked by `orphan_mask`.
fn flow_key(pkt: &Packet, at_host: bool) -> u64 {
    if at_host {
        if let Payload::Tcp { conn, to_server, seg } = pkt.payload {
            let synack = seg.flags.has(ccsim_tcp::TcpFlags::SYN) && seg.flags.has(ccsim_tcp::TcpFlags::ACK);
            if !synack {
                return socket_key(conn, to_server);
            }
        }
    }
    // Orphans: (hash & 1023) << 1 | 1, never equal to a socket's key.
    (((pkt.flow_hash & 1023) as u64) << 1) | 1
}

/// Flow of a key (see [`flow_key`]): sockets by (connection, direction), orphans by their 1024
/// hash buckets; direct indexing, no hashing.
#[derive(Default)]
struct FlowIndex {
    sockets: Vec<u32>,
    orphans: Vec<u32>,
}

impl FlowIndex {
    const NONE: u32 = u32::MAX;

    fn slot(&self, key: u64) -> (bool, usize) {
        (key & 1 == 1, (key >> 1) as usize)
    }

    fn get(&self, key: u64) -> Option<usize> {
        let (orphan, i) = self.slot(key);
        let v = if orphan { &self.orphans } else { &self.sockets };
        v.get(i).copied().filter(|&f| f != Self::NONE).map(|f| f as usize)
    }

    fn insert(&mut self, key: u64, flow: usize) {
        let (orphan, i) = self.slot(key);
        let v = if orphan { &mut self.orphans } else { &mut self.sockets };
        if v.len() <= i {
            v.resize(i + 1, Self::NONE);
        }
        v[i] = flow as u32;
    }
}

const GC_AGE_NS: u64 = 3_000_000_000; // FQ_GC_AGE: 3 * HZ

impl Fq {
    pub fn new(spec: FqSpec) -> Self {
        Fq {
            spec,
            flows: Vec::new(),
            by_key: FlowIndex::default(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            delayed: BTreeSet::new(),
            delayed_seq: 0,
            internal: VecDeque::new(),
            internal_skbs: 0,
            skbs: 0,
            segments: 0,
            bytes: 0,
            inactive: 0,
            throttled: 0,
            open_skb: None,
            dequeuing: None,
            stats: QueueStats::default(),
            throttled_events: 0,
            flow_limit_drops: 0,
            horizon_drops: 0,
            fastpath_packets: 0,
        }
    }

    /// skbs fq would still take from socket (`conn`, `to_server`) now: its flow limit and the
    /// qdisc's limit, less what is queued.
    pub fn room_for_socket(&self, conn: u32, to_server: bool) -> u32 {
        let queued = self.by_key.get(socket_key(conn, to_server)).map_or(0, |fi| self.flows[fi].skbs);
        self.spec.flow_limit.saturating_sub(queued).min(self.spec.limit.saturating_sub(self.skbs))
    }

    pub fn len_packets(&self) -> u64 {
        self.segments as u64
    }

    pub fn is_empty(&self) -> bool {
        self.segments == 0
    }

    /// When the watchdog should run next: the earliest throttled flow's time plus the timer
    /// slack (`qdisc_watchdog_schedule_range_ns`: an hrtimer fires at its hard expiry unless
    /// something else runs the qdisc first). None when no flow is throttled.
    pub fn next_wakeup(&self) -> Option<SimTime> {
        self.delayed.first().map(|&(t, ..)| SimTime(t) + self.spec.timer_slack)
    }

    fn time_next_delayed_flow(&self) -> u64 {
        self.delayed.first().map_or(u64::MAX, |&(t, ..)| t)
    }

    /// `fq_enqueue`: returns false when the packet is dropped. `skb_more`: further segments of
    /// the same skb follow this one.
    pub fn enqueue(&mut self, id: PoolId, pkt: &Packet, now: SimTime, at_host: bool) -> bool {
        // A forwarded packet has no departure time (the forwarding path clears skb->tstamp,
        // skb_clear_tstamp), and no sending socket: at a switch fq serves hash buckets, unpaced.
        let (tstamp, skb_more) = match pkt.payload {
            Payload::Tcp { seg, .. } if at_host => (seg.tstamp_ns, seg.skb_more),
            _ => (0, false),
        };
        let key = flow_key(pkt, at_host);
        let plen = pkt.size + 14; // qdisc_pkt_len: the MAC header counts
                                  // A later segment of an skb goes where its first segment went.
        if let Some((k, target)) = self.open_skb.filter(|&(k, _)| k == key) {
            self.open_skb = if skb_more { Some((k, target)) } else { None };
            return match target {
                None => {
                    self.push_internal(Entry { id, time_to_send: 0, first: false, skb_len: plen, stamped: false });
                    true
                }
                Some(Some(fi)) => {
                    self.push_flow(fi, Entry { id, time_to_send: 0, first: false, skb_len: plen, stamped: false });
                    true
                }
                Some(None) => {
                    self.stats.drops += 1;
                    false
                }
            };
        }
        self.open_skb = None;
        let now_ns = now.ns();
        let drop = |fq: &mut Fq| {
            fq.stats.drops += 1;
            if skb_more {
                fq.open_skb = Some((key, Some(None)));
            }
            false
        };
        if self.skbs >= self.spec.limit {
            return drop(self);
        }
        let mut time_to_send = now_ns;
        if tstamp != 0 {
            if tstamp > now_ns + self.spec.horizon.ns() {
                if self.spec.horizon_drop {
                    self.horizon_drops += 1;
                    return drop(self);
                }
                time_to_send = now_ns + self.spec.horizon.ns();
            } else {
                time_to_send = tstamp;
            }
        }
        // fq_fastpath_check
        if self.fastpath_ok(time_to_send, now_ns) {
            self.fastpath_packets += 1;
            self.internal_skbs += 1;
            self.skbs += 1;
            self.push_internal(Entry { id, time_to_send, first: true, skb_len: plen, stamped: tstamp != 0 });
            if skb_more {
                self.open_skb = Some((key, None));
            }
            return true;
        }
        let fi = self.classify(key, now_ns);
        if self.flows[fi].skbs >= self.spec.flow_limit {
            self.flow_limit_drops += 1;
            return drop(self);
        }
        let f = &mut self.flows[fi];
        if f.state == State::Detached {
            self.new_flows.push_back(fi);
            f.state = State::Listed;
            if now_ns > f.age + self.spec.refill_delay.ns() {
                f.credit = f.credit.max(self.spec.quantum as i64);
            }
        }
        if f.skbs == 0 {
            self.inactive -= 1;
        }
        f.skbs += 1;
        self.skbs += 1;
        self.push_flow(fi, Entry { id, time_to_send, first: true, skb_len: plen, stamped: tstamp != 0 });
        if skb_more {
            self.open_skb = Some((key, Some(Some(fi))));
        }
        true
    }

    fn fastpath_ok(&self, time_to_send: u64, now: u64) -> bool {
        if time_to_send > now || self.spec.maxrate.is_some() {
            return false;
        }
        if self.skbs != 0 {
            // Some flow is eligible now: keep Fair Queue mode.
            if self.flows.len() as u32 != self.inactive + self.throttled {
                return false;
            }
            if self.internal_skbs >= 8 {
                return false;
            }
            if self.time_next_delayed_flow() <= now {
                return false;
            }
        }
        true
    }

    /// `fq_classify` (with `fq_gc`'s effect): the flow of `key`, created detached with the
    /// initial quantum when new or forgotten.
    fn classify(&mut self, key: u64, now: u64) -> usize {
        if let Some(fi) = self.by_key.get(key) {
            let f = &mut self.flows[fi];
            if f.state == State::Detached && now > f.age + GC_AGE_NS {
                f.credit = self.spec.initial_quantum as i64;
                f.time_next_packet = 0;
                f.age = now;
            }
            return fi;
        }
        let fi = self.flows.len();
        self.flows.push(Flow {
            q: VecDeque::new(),
            skbs: 0,
            credit: self.spec.initial_quantum as i64,
            time_next_packet: 0,
            state: State::Detached,
            age: now,
        });
        self.by_key.insert(key, fi);
        self.inactive += 1;
        fi
    }

    fn push_internal(&mut self, e: Entry) {
        self.internal.push_back(e);
        self.account_segment(e.skb_len);
    }

    /// Queue a segment on flow `fi`; a later segment of an skb adds its length to the skb's
    /// first segment, where the flow is charged.
    fn push_flow(&mut self, fi: usize, mut e: Entry) {
        let f = &mut self.flows[fi];
        if !e.first {
            if let Some(head) = f.q.iter_mut().rev().find(|e| e.first) {
                head.skb_len += e.skb_len;
                e.time_to_send = head.time_to_send;
                e.stamped = head.stamped;
            }
        }
        f.q.push_back(e);
        self.account_segment(e.skb_len);
    }

    fn account_segment(&mut self, plen: u32) {
        self.segments += 1;
        self.bytes += (plen - 14) as u64;
        self.stats.enqueued += 1;
    }

    /// `fq_check_throttled`: flows whose time has come rejoin the old flows, in time order.
    fn check_throttled(&mut self, now: u64) {
        while let Some(&(t, s, fi)) = self.delayed.first() {
            if t > now {
                break;
            }
            self.delayed.remove(&(t, s, fi));
            self.throttled -= 1;
            self.flows[fi].state = State::Listed;
            self.old_flows.push_back(fi);
        }
    }

    fn set_throttled(&mut self, fi: usize) {
        let t = self.flows[fi].time_next_packet;
        self.delayed.insert((t, self.delayed_seq, fi));
        self.delayed_seq += 1;
        self.throttled += 1;
        self.throttled_events += 1;
        self.flows[fi].state = State::Throttled;
    }

    fn pop_segment(&mut self, from: Option<usize>, pool: &mut Pool<Packet>) -> Entry {
        let e = match from {
            None => self.internal.pop_front(),
            Some(fi) => self.flows[fi].q.pop_front(),
        }
        .expect("fq: an skb's segments are queued together");
        let more = match from {
            None => self.internal.front(),
            Some(fi) => self.flows[fi].q.front(),
        }
        .is_some_and(|n| !n.first);
        self.dequeuing = more.then_some(from);
        self.segments -= 1;
        let size = pool.get(e.id).size as u64;
        self.bytes -= size;
        self.stats.dequeued += 1;
        self.stats.bytes_dequeued += size;
        e
    }

    /// `fq_dequeue`: the next segment to transmit at `now`, or None (nothing queued, or every
    /// flow with packets waits for its time: see [`Fq::next_wakeup`]).
    pub fn dequeue(&mut self, now: SimTime, pool: &mut Pool<Packet>) -> Option<PoolId> {
        if let Some(from) = self.dequeuing {
            let e = self.pop_segment(from, pool);
            return Some(e.id);
        }
        if self.skbs == 0 {
            return None;
        }
        if self.internal_skbs > 0 {
            self.internal_skbs -= 1;
            self.skbs -= 1;
            return Some(self.pop_segment(None, pool).id);
        }
        let now_ns = now.ns();
        if self.time_next_delayed_flow() <= now_ns {
            self.check_throttled(now_ns);
        }
        loop {
            let from_new = !self.new_flows.is_empty();
            let fi = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&f), _) => f,
                (None, Some(&f)) => f,
                (None, None) => return None,
            };
            let head = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let f = &mut self.flows[fi];
            if f.credit <= 0 {
                f.credit += self.spec.quantum as i64;
                head.pop_front();
                self.old_flows.push_back(fi);
                continue;
            }
            let Some(&e) = f.q.front() else {
                head.pop_front();
                // A pass through old_flows first, to prevent starvation.
                if from_new {
                    self.old_flows.push_back(fi);
                } else {
                    f.state = State::Detached;
                    f.age = now_ns;
                }
                continue;
            };
            let time_next_packet = e.time_to_send.max(f.time_next_packet);
            if now_ns < time_next_packet {
                head.pop_front();
                f.time_next_packet = time_next_packet;
                self.set_throttled(fi);
                continue;
            }
            let skb_len = e.skb_len;
            f.skbs -= 1;
            if f.skbs == 0 {
                self.inactive += 1;
            }
            self.skbs -= 1;
            let seg = self.pop_segment(Some(fi), pool);
            if let Some(th) = self.spec.ce_threshold {
                if now_ns.saturating_sub(time_next_packet) > th.ns() {
                    self.mark_ce(seg.id, Some(fi), pool);
                }
            }
            let f = &mut self.flows[fi];
            f.credit -= skb_len as i64;
            if !self.spec.pacing {
                return Some(seg.id);
            }
            let mut rate = self.spec.maxrate.unwrap_or(u64::MAX);
            let mut plen = skb_len as u64;
            if !seg.stamped {
                // No departure time (an echo reply, a non-TCP packet): fq paces by the socket's
                // rate, which such packets do not have, capped by maxrate.
                if rate <= self.spec.low_rate_threshold {
                    f.credit = 0;
                } else {
                    plen = plen.max(self.spec.quantum as u64);
                    if f.credit > 0 {
                        return Some(seg.id);
                    }
                }
            }
            if rate != u64::MAX {
                rate = rate.max(1);
                let mut len = (plen * 1_000_000_000 / rate).min(1_000_000_000);
                if f.time_next_packet != 0 {
                    len -= (len / 2).min(now_ns.saturating_sub(f.time_next_packet));
                }
                f.time_next_packet = now_ns + len;
            }
            return Some(seg.id);
        }
    }

    /// CE on every segment of the skb being dequeued (INET_ECN_set_ce on the skb).
    fn mark_ce(&mut self, first: PoolId, from: Option<usize>, pool: &mut Pool<Packet>) {
        let mut mark = |id: PoolId, stats: &mut QueueStats| {
            let p = pool.get_mut(id);
            if p.ecn.is_ect() && p.ecn != Ecn::Ce {
                p.ecn = Ecn::Ce;
                stats.marks += 1;
            }
        };
        mark(first, &mut self.stats);
        if self.dequeuing.is_some() {
            let q = match from {
                None => &self.internal,
                Some(fi) => &self.flows[fi].q,
            };
            for e in q.iter().take_while(|e| !e.first) {
                mark(e.id, &mut self.stats);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            payload: Payload::Tcp { conn, to_server, seg: Segment { flags: TcpFlags(flags), ..seg } },
        };
        let ack = TcpFlags::ACK;
        assert_ne!(flow_key(&pkt(1, true, 5, ack), true), flow_key(&pkt(1, false, 5, ack), true));
        assert_eq!(flow_key(&pkt(1, true, 5, ack), false), flow_key(&pkt(2, false, 5 + 1024, ack), false));
        // A SYN-ACK leaves from a request socket: an orphan.
        let synack = pkt(1, false, 5, TcpFlags::SYN | ack);
        assert_eq!(flow_key(&synack, true), flow_key(&pkt(1, true, 5, ack), false));
    }
}
