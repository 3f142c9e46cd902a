//! Open-loop Poisson arrivals per host (the DCTCP paper's background traffic, pFabric, HPCC):
//! each sender starts flows at exponentially distributed gaps, with a random destination from
//! its candidates and a size from the traffic's distribution. Every sender draws from a random
//! stream of its own, so adding a host leaves the others' arrivals as they were.

use super::{exp_gap, FlowTemplate, Traffic};
use crate::flows::FlowSpec;
use crate::topology::NodeId;
use ccsim_engine::{Rng, SimTime};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One sender of a Poisson traffic.
#[derive(Clone, Debug)]
pub struct PoissonSender {
    pub host: NodeId,
    /// The hosts it picks its destinations from, uniformly.
    pub destinations: Vec<NodeId>,
    /// Its random stream (`Rng::new(seed, stream)`).
    pub stream: u64,
    /// Flows it starts per second.
    pub rate: f64,
}

/// Open-loop Poisson flow arrivals.
pub struct Poisson {
    template: FlowTemplate,
    stop: SimTime,
    senders: Vec<(PoissonSender, Rng)>,
    /// (next arrival, sender), earliest first.
    next: BinaryHeap<Reverse<(SimTime, u32)>>,
}

impl Poisson {
    /// Flows from every sender at its rate, from `start` until `stop`.
    pub fn new(template: FlowTemplate, senders: Vec<PoissonSender>, seed: u64, start: SimTime, stop: SimTime) -> Self {
        let mut p = Poisson { template, stop, senders: Vec::new(), next: BinaryHeap::new() };
        for (i, s) in senders.into_iter().enumerate() {
            let rng = Rng::new(seed, s.stream);
            p.senders.push((s, rng));
            p.schedule(i, start);
        }
        p
    }

    /// Sender `i`'s next arrival after `t`: an exponential gap of mean 1/rate.
    fn schedule(&mut self, i: usize, t: SimTime) {
        let (s, rng) = &mut self.senders[i];
        if s.rate <= 0.0 || s.destinations.is_empty() {
            return;
        }
        let at = t + exp_gap(rng, s.rate);
        if at < self.stop {
            self.next.push(Reverse((at, i as u32)));
        }
    }
}

impl Traffic for Poisson {
    fn next_arrival(&self) -> Option<SimTime> {
        self.next.peek().map(|Reverse((t, _))| *t)
    }

    fn arrive(&mut self, now: SimTime, flows: &mut Vec<FlowSpec>) {
        while let Some(&Reverse((t, i))) = self.next.peek() {
            if t > now {
                break;
            }
            self.next.pop();
            let (s, rng) = &mut self.senders[i as usize];
            let dst = s.destinations[rng.below(s.destinations.len() as u32) as usize];
            let size = self.template.sizes.sample(rng.next_f64());
            flows.push(self.template.flow(s.host, dst, size, now, 0));
            self.schedule(i as usize, t);
        }
    }
}
