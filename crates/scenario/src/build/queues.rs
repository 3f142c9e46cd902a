//! `[queues]`: the port queues the topology refers to by name.

use crate::error::{Error, Result};
use crate::spec::{self, Scenario};
use crate::units::{
    duration, rate,
    DurationRange::{NonNegative, Positive},
    Quantity,
};
use ccsim_net::{Aqm, ClassSpec, EcnMarkPoint, FqSpec, NonEctPolicy, QueueLimit, QueueSpec, RedSpec, Scheduler, Unit};
use std::collections::BTreeMap;

impl From<spec::QueueUnit> for Unit {
    fn from(u: spec::QueueUnit) -> Self {
        match u {
            spec::QueueUnit::Packets => Unit::Packets,
            spec::QueueUnit::Bytes => Unit::Bytes,
        }
    }
}

impl From<spec::MarkAt> for EcnMarkPoint {
    fn from(m: spec::MarkAt) -> Self {
        match m {
            spec::MarkAt::Enqueue => EcnMarkPoint::Enqueue,
            spec::MarkAt::Dequeue => EcnMarkPoint::Dequeue,
        }
    }
}

impl From<spec::NonEct> for NonEctPolicy {
    fn from(n: spec::NonEct) -> Self {
        match n {
            spec::NonEct::Drop => NonEctPolicy::Drop,
            spec::NonEct::Queue => NonEctPolicy::Queue,
        }
    }
}

/// Every queue by name: `[queues]`, and the built-in `nic` and `switch` unless redefined.
pub(super) fn queues(s: &Scenario) -> Result<BTreeMap<String, QueueSpec>> {
    let mut m = BTreeMap::new();
    for name in [spec::NIC_QUEUE, spec::SWITCH_QUEUE] {
        m.insert(name.to_string(), queue(&spec::Queue::builtin(), &format!("queues.{name}"))?);
    }
    for (name, q) in &s.queues {
        m.insert(name.clone(), queue(q, &format!("queues.{name}"))?);
    }
    Ok(m)
}

/// One `[queues.<name>]`: an fq qdisc, or classes under a scheduler.
fn queue(q: &spec::Queue, field: &str) -> Result<QueueSpec> {
    let scheduler = match q.scheduler {
        spec::SchedulerKind::Fq => {
            if !q.classes.is_empty() {
                return Err(Error::new(format!("{field}.classes"), "an fq queue has no classes; remove them"));
            }
            return Ok(QueueSpec::fq(fq_spec(q.fq.clone().unwrap_or_default(), field)?));
        }
        spec::SchedulerKind::Prio => Scheduler::StrictPriority,
        spec::SchedulerKind::Rr => Scheduler::RoundRobin,
    };
    if q.fq.is_some() {
        return Err(Error::new(format!("{field}.fq"), "fq parameters need scheduler = \"fq\""));
    }
    if q.classes.is_empty() {
        return Err(Error::new(format!("{field}.classes"), "a queue needs at least one class"));
    }
    let classes = q
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| class(c, &format!("{field}.classes[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    Ok(QueueSpec { classes, scheduler, fq: None })
}

/// One class of a queue: its DSCP values, limit and AQM.
fn class(c: &spec::Class, field: &str) -> Result<ClassSpec> {
    let unit = Unit::from(c.unit);
    if c.limit == 0 {
        return Err(Error::new(format!("{field}.limit"), "must be at least 1"));
    }
    for &d in &c.dscp {
        if d > 63 {
            return Err(Error::new(format!("{field}.dscp"), format!("{d} is out of range; allowed 0..=63")));
        }
    }
    let aqm = match c.aqm {
        spec::AqmKind::Droptail => Aqm::DropTail,
        spec::AqmKind::Step => {
            let k = c.k.ok_or_else(|| {
                Error::new(format!("{field}.k"), "step marking needs a threshold k (in the queue's unit)")
            })?;
            Aqm::Step { k, unit, at: c.mark_at.into(), non_ect: c.non_ect.into() }
        }
        spec::AqmKind::Red => {
            let min = c.min.ok_or_else(|| Error::new(format!("{field}.min"), "red needs min (in the queue's unit)"))?;
            let max = c.max.ok_or_else(|| Error::new(format!("{field}.max"), "red needs max (in the queue's unit)"))?;
            if max < min {
                return Err(Error::new(format!("{field}.max"), format!("{max} is below min {min}")));
            }
            if !(0.0..=1.0).contains(&c.probability) {
                return Err(Error::new(
                    format!("{field}.probability"),
                    format!("{} is out of range; allowed 0..=1", c.probability),
                ));
            }
            if c.wlog > 31 {
                return Err(Error::new(format!("{field}.wlog"), format!("{} is out of range; allowed 0..=31", c.wlog)));
            }
            Aqm::Red(RedSpec {
                min,
                max,
                max_p: c.probability,
                wlog: c.wlog,
                ecn: c.ecn,
                harddrop: c.harddrop,
                avpkt: c.avpkt.max(1),
            })
        }
    };
    Ok(ClassSpec { name: c.name.clone(), dscp: c.dscp.clone(), limit: QueueLimit { value: c.limit, unit }, aqm })
}

fn fq_spec(p: spec::FqParams, field: &str) -> Result<FqSpec> {
    let range = |v: u32, name: &str, max: u32| -> Result<u32> {
        if v == 0 || v > max {
            return Err(Error::new(format!("{field}.fq.{name}"), format!("{v} is out of range; allowed 1..={max}")));
        }
        Ok(v)
    };
    let bytes_per_sec = |q: &Quantity, name: &str| -> Result<u64> { Ok(rate(q, &format!("{field}.fq.{name}"))? / 8) };
    Ok(FqSpec {
        limit: range(p.limit, "limit", 1_000_000)?,
        flow_limit: range(p.flow_limit, "flow_limit", 1_000_000)?,
        quantum: range(p.quantum, "quantum", 1 << 20)?,
        initial_quantum: range(p.initial_quantum, "initial_quantum", i32::MAX as u32)?,
        refill_delay: duration(&p.refill_delay, &format!("{field}.fq.refill_delay"), NonNegative)?,
        maxrate: p.maxrate.as_ref().map(|q| bytes_per_sec(q, "maxrate")).transpose()?,
        low_rate_threshold: bytes_per_sec(&p.low_rate_threshold, "low_rate_threshold")?,
        timer_slack: duration(&p.timer_slack, &format!("{field}.fq.timer_slack"), NonNegative)?,
        horizon: duration(&p.horizon, &format!("{field}.fq.horizon"), Positive)?,
        horizon_drop: p.horizon_drop,
        ce_threshold: p
            .ce_threshold
            .as_ref()
            .map(|q| duration(q, &format!("{field}.fq.ce_threshold"), NonNegative))
            .transpose()?,
        pacing: p.pacing,
    })
}
