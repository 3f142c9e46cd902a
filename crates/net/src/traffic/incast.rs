//! Incast: `fan_in` senders answer one receiver at the same instant, `size` bytes each (a
//! partition/aggregate query's responses, the DCTCP paper's and the Linux DCTCP commit's
//! incast), repeated at a fixed interval or at Poisson instants. Each round's flows share a
//! group number, so that the round's completion (its last response) is known from the flows.

use super::{pick_distinct, FlowTemplate, Traffic};
use crate::flows::FlowSpec;
use crate::topology::NodeId;
use ccsim_engine::{Rng, SimTime};

/// When incast rounds happen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rounds {
    /// Every `SimTime`, the first at the start.
    Every(SimTime),
    /// Poisson, this many rounds per second.
    Poisson(f64),
}

pub struct Incast {
    template: FlowTemplate,
    /// The hosts a round picks its receiver from, and its senders (the receiver excluded).
    receivers: Vec<NodeId>,
    senders: Vec<NodeId>,
    fan_in: u32,
    rounds: Rounds,
    stop: SimTime,
    rng: Rng,
    next: Option<SimTime>,
    round: u64,
    /// Scratch: the candidate senders of a round.
    pick: Vec<NodeId>,
}

impl Incast {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        template: FlowTemplate,
        receivers: Vec<NodeId>,
        senders: Vec<NodeId>,
        fan_in: u32,
        rounds: Rounds,
        rng: Rng,
        start: SimTime,
        stop: SimTime,
    ) -> Self {
        let mut inc =
            Incast { template, receivers, senders, fan_in, rounds, stop, rng, next: None, round: 0, pick: Vec::new() };
        inc.next = match rounds {
            Rounds::Every(_) => Some(start),
            Rounds::Poisson(_) => inc.after(start),
        };
        inc.next = inc.next.filter(|&t| t < stop);
        inc
    }

    fn after(&mut self, t: SimTime) -> Option<SimTime> {
        let at = self.rounds.after(t, &mut self.rng);
        (at < self.stop).then_some(at)
    }
}

impl Traffic for Incast {
    fn next_arrival(&self) -> Option<SimTime> {
        self.next
    }

    fn arrive(&mut self, now: SimTime, flows: &mut Vec<FlowSpec>) {
        let Some(t) = self.next else { return };
        self.round += 1;
        let receiver = self.receivers[self.rng.below(self.receivers.len() as u32) as usize];
        self.pick.clear();
        self.pick.extend(self.senders.iter().copied().filter(|&h| h != receiver));
        let n = pick_distinct(&mut self.rng, &mut self.pick, self.fan_in as usize);
        for k in 0..n {
            let size = self.template.sizes.sample(self.rng.next_f64());
            flows.push(self.template.flow(self.pick[k], receiver, size, now, self.round));
        }
        self.next = self.after(t);
    }
}
