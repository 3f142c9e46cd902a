//! Port queues. A port holds one or more classes (chosen by DSCP), each a FIFO with a size
//! limit and an active queue management policy: none (drop-tail), step ECN marking at a
//! threshold K (as DCTCP switches do), or RED as Linux's tc-red implements it.

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
        }
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

struct RedState {
    /// Average queue, scaled by 2^wlog (fixed point as in include/net/red.h).
    qavg: f64,
    qcount: i64,
    idle_since: Option<SimTime>,
}

pub(crate) struct Class {
    pub spec: ClassSpec,
    pub fifo: VecDeque<PoolId>,
    pub bytes: u64,
    pub stats: QueueStats,
    red: RedState,
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueResult {
    Queued,
    Dropped,
}

pub(crate) struct PortQueue {
    pub classes: Vec<Class>,
    pub scheduler: Scheduler,
    rr_next: usize,
    /// DSCP (0..64) → class index.
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
            classes: spec
                .classes
                .iter()
                .map(|c| Class {
                    spec: c.clone(),
                    fifo: VecDeque::new(),
                    bytes: 0,
                    stats: QueueStats::default(),
                    red: RedState { qavg: 0.0, qcount: -1, idle_since: None },
                })
                .collect(),
            scheduler: spec.scheduler,
            rr_next: 0,
            dscp_map,
        }
    }

    pub fn len_packets(&self) -> u64 {
        self.classes.iter().map(|c| c.fifo.len() as u64).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.classes.iter().all(|c| c.fifo.is_empty())
    }

    /// Offer a packet; it may be marked (CE) or dropped. `pkt` is the packet's contents.
    pub fn enqueue(
        &mut self,
        id: PoolId,
        pkt: &mut Packet,
        now: SimTime,
        rate_bps: u64,
        rng: &mut Rng,
    ) -> EnqueueResult {
        let ci = self.dscp_map[(pkt.dscp & 63) as usize] as usize;
        let c = &mut self.classes[ci];
        let size = pkt.size as u64;
        let occupancy = |unit: Unit, c: &Class, extra: u64, extra_bytes: u64| match unit {
            Unit::Packets => c.fifo.len() as u64 + extra,
            Unit::Bytes => c.bytes + extra_bytes,
        };
        // The hard limit: tail drop.
        if occupancy(c.spec.limit.unit, c, 1, size) > c.spec.limit.value {
            c.stats.drops += 1;
            return EnqueueResult::Dropped;
        }
        match c.spec.aqm {
            Aqm::DropTail => {}
            Aqm::Step { k, unit, at: EcnMarkPoint::Enqueue, non_ect } => {
                if occupancy(unit, c, 1, size) > k {
                    if pkt.ecn.is_ect() {
                        if pkt.ecn != Ecn::Ce {
                            pkt.ecn = Ecn::Ce;
                            c.stats.marks += 1;
                        }
                    } else if non_ect == NonEctPolicy::Drop {
                        c.stats.drops += 1;
                        return EnqueueResult::Dropped;
                    }
                }
            }
            Aqm::Step { .. } => {}
            Aqm::Red(red) => {
                if red_enqueue(c, &red, pkt, now, rate_bps, rng) == EnqueueResult::Dropped {
                    c.stats.drops += 1;
                    return EnqueueResult::Dropped;
                }
            }
        }
        c.fifo.push_back(id);
        c.bytes += size;
        c.stats.enqueued += 1;
        EnqueueResult::Queued
    }

    /// Pick the next packet to transmit; `true` in the result means dequeue marking dropped it.
    pub fn dequeue(&mut self, now: SimTime, pool: &mut Pool<Packet>) -> Option<(PoolId, bool)> {
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
        let p = pool.get_mut(id);
        let mut dropped = false;
        if let Aqm::Step { k, unit, at: EcnMarkPoint::Dequeue, non_ect } = c.spec.aqm {
            let occ = match unit {
                Unit::Packets => c.fifo.len() as u64 + 1,
                Unit::Bytes => c.bytes,
            };
            if occ > k {
                if p.ecn.is_ect() {
                    if p.ecn != Ecn::Ce {
                        p.ecn = Ecn::Ce;
                        c.stats.marks += 1;
                    }
                } else if non_ect == NonEctPolicy::Drop {
                    c.stats.drops += 1;
                    dropped = true;
                }
            }
        }
        c.bytes -= p.size as u64;
        if !dropped {
            c.stats.dequeued += 1;
            c.stats.bytes_dequeued += p.size as u64;
        }
        if c.fifo.is_empty() {
            c.red.idle_since = Some(now);
        }
        Some((id, dropped))
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
    let backlog = match c.spec.limit.unit {
        Unit::Packets => c.fifo.len() as f64,
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
