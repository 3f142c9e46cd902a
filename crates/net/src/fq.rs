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
mod tests;
