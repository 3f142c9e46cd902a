//! Port queues. A port holds one or more classes (chosen by DSCP), each a FIFO with a size
//! limit and an active queue management policy: none (drop-tail), step ECN marking at a
//! threshold K (as DCTCP switches do), or RED as Linux's tc-red implements it.

use crate::fq::{Fq, FqSpec};
use crate::packet::Packet;
use ccsim_engine::{Pool, PoolId, Rng, SimTime};
use ccsim_tcp::Ecn;
use std::collections::VecDeque;

/// Unit of a queue threshold or limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Packets,
    Bytes,
}

/// A queue's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimit {
    pub value: u64,
    pub unit: Unit,
}

/// Where step marking looks at the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMarkPoint {
    /// On arrival: mark if the queue, with the arriving packet, exceeds K.
    Enqueue,
    /// On departure: mark if the queue, with the departing packet, exceeds K.
    Dequeue,
}

/// What step marking does with a packet that is not ECN-capable when the queue exceeds K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonEctPolicy {
    Drop,
    Queue,
}

/// RED parameters, as `tc qdisc add ... red limit L min MIN max MAX probability P [ecn]
/// [harddrop] burst B avpkt A`. Thresholds in the queue's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedSpec {
    pub min: u64,
    pub max: u64,
    pub max_p: f64,
    /// EWMA weight W = 2^-wlog (tc computes it from `burst`).
    pub wlog: u8,
    pub ecn: bool,
    pub harddrop: bool,
    /// Average packet size in bytes (`avpkt`), for idle-time decay.
    pub avpkt: u32,
}

/// Active queue management of a class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aqm {
    DropTail,
    /// DCTCP-style step marking on the instantaneous queue.
    Step {
        k: u64,
        unit: Unit,
        at: EcnMarkPoint,
        non_ect: NonEctPolicy,
    },
    Red(RedSpec),
}

/// One class of a port: which DSCPs it takes, its limit and AQM.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassSpec {
    pub name: String,
    /// DSCP values this class takes; empty = the default class.
    pub dscp: Vec<u8>,
    pub limit: QueueLimit,
    pub aqm: Aqm,
}

/// How a port with several classes picks the next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Classes in order, the first non-empty one wins.
    StrictPriority,
    /// One packet from each non-empty class in turn.
    RoundRobin,
}

/// A port queue: its classes and the scheduler between them.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSpec {
    pub classes: Vec<ClassSpec>,
    pub scheduler: Scheduler,
    /// The fq qdisc instead of classes (its statistics appear as one class named "fq").
    pub fq: Option<FqSpec>,
}

impl QueueSpec {
    pub fn drop_tail(packets: u64) -> Self {
        QueueSpec {
            classes: vec![ClassSpec {
                name: "default".into(),
                dscp: vec![],
                limit: QueueLimit { value: packets, unit: Unit::Packets },
                aqm: Aqm::DropTail,
            }],
            scheduler: Scheduler::StrictPriority,
            fq: None,
        }
    }

    /// The fq qdisc with these parameters.
    pub fn fq(spec: FqSpec) -> Self {
        let mut q = QueueSpec::drop_tail(spec.limit as u64);
        q.classes[0].name = "fq".into();
        q.fq = Some(spec);
        q
    }
}

/// Counters of one class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub enqueued: u64,
    pub dequeued: u64,
    pub drops: u64,
    pub marks: u64,
    pub bytes_dequeued: u64,
}

/// `idle_since` first: every port writes it when its queue empties, RED ports alone read the rest.
#[repr(C)]
struct RedState {
    idle_since: Option<SimTime>,
    /// Average queue (the EWMA of the backlog with weight 2^-wlog), unscaled.
    qavg: f64,
    qcount: i64,
}

// The fields every packet through a lazy port reads or writes come first, in two cache lines
// (count, limit, AQM and bytes; counters and the time the queue went idle), the rest after: a
// fat tree's thousand ports do not stay in the first-level cache, and each line an arrival
// touches is a miss.
// No two fields an arrival updates are neighbours (`packets`, `bytes` and `stats.enqueued` lie
// apart, with read-only fields between): a lazy port's departure updates them with 8-byte stores
// and the next arrival reads them right after; side by side, the arrival's update of two of them
// was compiled into one 16-byte load that cannot take its data from two pending stores (a
// store-forwarding stall: S1 spent about 14 % of its enqueue time on that one load with
// `packets` next to `bytes`, and 16 % with `bytes` next to `stats.enqueued`).
// A class has no alignment of its own: a port keeps its first class inside itself, placed on a
// line boundary (see `Port`), and the classes of a port with several are read rarely.
#[repr(C)]
pub struct Class {
    pub packets: u64,
    pub limit: QueueLimit,
    pub bytes: u64,
    pub aqm: Aqm,
    pub stats: QueueStats,
    red: RedState,
    /// The packets themselves, in order: only on ports run with transmission events (a lazy
    /// port needs the count alone).
    pub fifo: VecDeque<PoolId>,
    pub name: String,
}

/// A class's verdict on an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admission {
    Queued,
    /// Over the limit, or not ECN-capable above a step's threshold.
    Drop,
    /// RED's drop (sch_red's congestion_drop).
    CongestionDrop,
}

/// What step marking did with a packet above the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepMark {
    /// Marked CE (or already CE), or not ECN-capable and queued anyway.
    Keep,
    /// Not ECN-capable, and the policy drops it.
    Drop,
}

/// Step marking of a packet above the threshold of class `c` (at enqueue or dequeue): CE if it
/// is ECN-capable, else as the non-ECT policy says; counted in the class's marks or drops.
#[inline(always)]
fn step_mark(c: &mut Class, ecn: &mut Ecn, non_ect: NonEctPolicy) -> StepMark {
    if ecn.is_ect() {
        if *ecn != Ecn::Ce {
            *ecn = Ecn::Ce;
            c.stats.marks += 1;
        }
        StepMark::Keep
    } else if non_ect == NonEctPolicy::Drop {
        c.stats.drops += 1;
        StepMark::Drop
    } else {
        StepMark::Keep
    }
}

/// Judge a packet arriving at class `c` against its limit and AQM (marking it CE where the AQM
/// says so) and count it in the packets and bytes waiting (the caller counts it as enqueued:
/// a lazy port in its own line, `Port::admitted`).
#[inline(always)]
fn admit(c: &mut Class, pkt: &mut Packet, now: SimTime, rate_bps: impl FnOnce() -> u64, rng: &mut Rng) -> Admission {
    let size = pkt.size as u64;
    let occupancy = |unit: Unit, c: &Class, extra: u64, extra_bytes: u64| match unit {
        Unit::Packets => c.packets + extra,
        Unit::Bytes => c.bytes + extra_bytes,
    };
    // The hard limit: tail drop.
    if occupancy(c.limit.unit, c, 1, size) > c.limit.value {
        c.stats.drops += 1;
        return Admission::Drop;
    }
    match &c.aqm {
        Aqm::DropTail => {}
        &Aqm::Step { k, unit, at: EcnMarkPoint::Enqueue, non_ect } => {
            if occupancy(unit, c, 1, size) > k && step_mark(c, &mut pkt.ecn, non_ect) == StepMark::Drop {
                return Admission::Drop;
            }
        }
        Aqm::Step { .. } => {}
        Aqm::Red(red) => {
            let red = *red;
            if red_enqueue(c, &red, pkt, now, rate_bps(), rng) == EnqueueResult::Dropped {
                c.stats.drops += 1;
                return Admission::CongestionDrop;
            }
        }
    }
    c.packets += 1;
    c.bytes += size;
    Admission::Queued
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueResult {
    Queued,
    Dropped,
}

/// What a dequeue gave: a packet to transmit, or one that dequeue-time marking dropped (a
/// non-ECT packet above K), which the caller frees before asking again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequeued {
    Send(PoolId),
    Dropped(PoolId),
}

/// A port's classes: the first in place, any others in a list of their own. Every port has a
/// first class and most have no other, so a packet's class is read without following a pointer
/// (a fat tree's thousand ports do not stay in the cache: the class was a second miss that could
/// start only once the port's line holding the pointer had arrived).
#[repr(C)]
pub struct Classes {
    rest: Vec<Class>,
    pub(crate) first: Class,
}

impl Classes {
    fn new(mut all: Vec<Class>) -> Self {
        assert!(!all.is_empty(), "a queue has at least one class");
        let first = all.remove(0);
        Classes { rest: all, first }
    }

    /// At least one: every queue has a class (so no `is_empty`).
    #[inline(always)]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Class> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }
}

impl std::ops::Index<usize> for Classes {
    type Output = Class;
    #[inline(always)]
    fn index(&self, i: usize) -> &Class {
        if i == 0 {
            &self.first
        } else {
            &self.rest[i - 1]
        }
    }
}

impl std::ops::IndexMut<usize> for Classes {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut Class {
        if i == 0 {
            &mut self.first
        } else {
            &mut self.rest[i - 1]
        }
    }
}

/// The flags first, then the first class from the start of the queue's second line (`Port`
/// places the queue 32 bytes into a line), the DSCP map last. A lazy port's packet reads the
/// first class alone (`enqueue_counted`).
#[repr(C)]
pub struct PortQueue {
    /// The last drop was RED's (sch_red's congestion_drop, which returns NET_XMIT_CN to the
    /// sender), not a tail drop (NET_XMIT_DROP).
    pub congestion_drop: bool,
    pub scheduler: Scheduler,
    pub classes: Classes,
    /// The fq qdisc, when the port runs one (then `classes` is unused).
    pub(crate) fq: Option<Box<Fq>>,
    rr_next: usize,
    /// DSCP (0..64) → class index; a port of one class does not read it.
    dscp_map: [u8; 64],
}

impl PortQueue {
    pub fn new(spec: &QueueSpec) -> Self {
        let default = spec.classes.iter().position(|c| c.dscp.is_empty()).unwrap_or(0);
        let mut dscp_map = [default as u8; 64];
        for (i, c) in spec.classes.iter().enumerate() {
            for &d in &c.dscp {
                dscp_map[(d & 63) as usize] = i as u8;
            }
        }
        PortQueue {
            classes: Classes::new(
                spec.classes
                    .iter()
                    .map(|c| Class {
                        packets: 0,
                        limit: c.limit,
                        bytes: 0,
                        aqm: c.aqm,
                        stats: QueueStats::default(),
                        red: RedState { qavg: 0.0, qcount: -1, idle_since: None },
                        fifo: VecDeque::new(),
                        name: c.name.clone(),
                    })
                    .collect(),
            ),
            scheduler: spec.scheduler,
            fq: spec.fq.map(|f| Box::new(Fq::new(f))),
            rr_next: 0,
            dscp_map,
            congestion_drop: false,
        }
    }

    /// One FIFO class whose AQM acts only on arrival: departure times are then a pure function of
    /// arrival times and sizes, and the port can be run without transmission events.
    pub fn supports_lazy(&self) -> bool {
        self.fq.is_none()
            && self.classes.len() == 1
            && !matches!(self.classes[0].aqm, Aqm::Step { at: EcnMarkPoint::Dequeue, .. })
    }

    /// The class a packet of DSCP `dscp` joins.
    #[inline]
    pub fn class_of(&self, dscp: u8) -> usize {
        if self.classes.len() == 1 {
            0
        } else {
            self.dscp_map[(dscp & 63) as usize] as usize
        }
    }

    /// Lazy departure: the head packet (`size` bytes) began its transmission at `start`. Only
    /// the count and bytes waiting change (the packets that left follow from those the port
    /// admitted, `Port::class_stats`), and when the queue empties RED notes since when it is
    /// idle (no other AQM reads it): the class's second line is left alone.
    #[inline(always)]
    pub fn retire_head(&mut self, start: SimTime, size: u32) {
        let c = &mut self.classes.first;
        if c.packets > 0 {
            c.packets -= 1;
            c.bytes -= size as u64;
            // (The discipline first: the same at every packet of a port, so the branch is
            // foreseen, where whether the queue just emptied is not.)
            if matches!(c.aqm, Aqm::Red(_)) && c.packets == 0 {
                c.red.idle_since = Some(start);
            }
        }
    }

    pub fn len_packets(&self) -> u64 {
        if let Some(fq) = &self.fq {
            return fq.len_packets();
        }
        self.classes.iter().map(|c| c.packets).sum()
    }

    pub fn len_bytes(&self) -> u64 {
        if let Some(fq) = &self.fq {
            return fq.bytes;
        }
        self.classes.iter().map(|c| c.bytes).sum()
    }

    pub fn is_empty(&self) -> bool {
        if let Some(fq) = &self.fq {
            return fq.is_empty();
        }
        self.classes.iter().all(|c| c.packets == 0)
    }

    /// Per class: name and counters.
    pub fn class_stats(&self) -> Vec<(String, QueueStats)> {
        if let Some(fq) = &self.fq {
            return vec![("fq".into(), fq.stats)];
        }
        self.classes.iter().map(|c| (c.name.clone(), c.stats)).collect()
    }

    /// Offer a packet; it may be marked (CE) or dropped. `pkt` is the packet's contents.
    #[inline(always)]
    pub fn enqueue(
        &mut self,
        id: PoolId,
        pkt: &mut Packet,
        now: SimTime,
        rate_bps: u64,
        rng: &mut Rng,
    ) -> EnqueueResult {
        let ci = if self.classes.len() == 1 { 0 } else { self.dscp_map[(pkt.dscp & 63) as usize] as usize };
        let c = &mut self.classes[ci];
        let admitted = admit(c, pkt, now, || rate_bps, rng);
        self.congestion_drop = admitted == Admission::CongestionDrop;
        if admitted != Admission::Queued {
            return EnqueueResult::Dropped;
        }
        c.stats.enqueued += 1;
        c.fifo.push_back(id);
        EnqueueResult::Queued
    }

    /// `enqueue` at a lazy port (`supports_lazy`: one class, arrival-time AQM): the packet is
    /// counted in what waits, not kept (the port counts it admitted), and leaves by
    /// `retire_head`. Reads and writes the first class alone,
    /// and the queue's flags only on a drop (where `congestion_drop` is read); asks for the
    /// link's rate only where RED needs it (a lazy port keeps it out of the line it reads).
    #[inline(always)]
    pub fn enqueue_counted(
        &mut self,
        pkt: &mut Packet,
        now: SimTime,
        rate_bps: impl FnOnce() -> u64,
        rng: &mut Rng,
    ) -> EnqueueResult {
        match admit(&mut self.classes.first, pkt, now, rate_bps, rng) {
            Admission::Queued => EnqueueResult::Queued,
            dropped => {
                self.congestion_drop = dropped == Admission::CongestionDrop;
                EnqueueResult::Dropped
            }
        }
    }

    /// Pick the next packet to transmit (None: the queue is empty).
    pub fn dequeue(&mut self, now: SimTime, pool: &mut Pool<Packet>) -> Option<Dequeued> {
        let n = self.classes.len();
        let ci = match self.scheduler {
            Scheduler::StrictPriority => (0..n).find(|&i| !self.classes[i].fifo.is_empty())?,
            Scheduler::RoundRobin => {
                let i = (0..n).map(|k| (self.rr_next + k) % n).find(|&i| !self.classes[i].fifo.is_empty())?;
                self.rr_next = (i + 1) % n;
                i
            }
        };
        let c = &mut self.classes[ci];
        let id = c.fifo.pop_front()?;
        c.packets -= 1;
        let p = pool.get_mut(id);
        let mut dropped = false;
        if let Aqm::Step { k, unit, at: EcnMarkPoint::Dequeue, non_ect } = c.aqm {
            let occ = match unit {
                Unit::Packets => c.packets + 1,
                Unit::Bytes => c.bytes,
            };
            if occ > k {
                dropped = step_mark(c, &mut p.ecn, non_ect) == StepMark::Drop;
            }
        }
        c.bytes -= p.size as u64;
        if !dropped {
            c.stats.dequeued += 1;
            c.stats.bytes_dequeued += p.size as u64;
        }
        if c.packets == 0 {
            c.red.idle_since = Some(now);
        }
        Some(if dropped { Dequeued::Dropped(id) } else { Dequeued::Send(id) })
    }
}

/// RED on enqueue, as sch_red.c / include/net/red.h: EWMA of the backlog with weight 2^-wlog
/// (decayed over idle time as if avpkt-sized packets had left), probabilistic marking between
/// min and max with Floyd's count-based spacing, and hard marking above max (a drop if
/// `harddrop` or the packet is not ECN-capable).
fn red_enqueue(
    c: &mut Class,
    red: &RedSpec,
    pkt: &mut Packet,
    now: SimTime,
    rate_bps: u64,
    rng: &mut Rng,
) -> EnqueueResult {
    let backlog = match c.limit.unit {
        Unit::Packets => c.packets as f64,
        Unit::Bytes => c.bytes as f64,
    };
    let w = 1.0 / (1u64 << red.wlog) as f64;
    let st = &mut c.red;
    if let Some(idle) = st.idle_since.take().filter(|_| backlog == 0.0) {
        // red_calc_qavg_from_idle_time: decay as if the link had sent avpkt-sized packets.
        let pkt_time = SimTime::tx_time(red.avpkt.max(1) as u64, rate_bps.max(1)).ns().max(1);
        let m = (now.ns().saturating_sub(idle.ns()) / pkt_time) as f64;
        st.qavg *= (1.0 - w).powf(m);
    } else {
        st.qavg += w * (backlog - st.qavg);
    }
    let qavg = st.qavg;
    let (min, max) = (red.min as f64, red.max as f64);
    let mark_or_drop = |pkt: &mut Packet, hard: bool, c_marks: &mut u64| -> EnqueueResult {
        if red.ecn && pkt.ecn.is_ect() && !(hard && red.harddrop) {
            if pkt.ecn != Ecn::Ce {
                pkt.ecn = Ecn::Ce;
                *c_marks += 1;
            }
            EnqueueResult::Queued
        } else {
            EnqueueResult::Dropped
        }
    };
    if qavg < min {
        st.qcount = -1;
        EnqueueResult::Queued
    } else if qavg >= max || max <= min {
        st.qcount = -1;
        mark_or_drop(pkt, true, &mut c.stats.marks)
    } else {
        st.qcount += 1;
        let pb = red.max_p * (qavg - min) / (max - min);
        let denom = 1.0 - st.qcount as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { pb / denom };
        if rng.chance(pa) {
            st.qcount = 0;
            mark_or_drop(pkt, false, &mut c.stats.marks)
        } else {
            EnqueueResult::Queued
        }
    }
}

#[cfg(test)]
mod tests;
