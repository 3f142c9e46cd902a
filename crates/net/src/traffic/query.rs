//! Partition/aggregate queries (the DCTCP paper's query traffic): each aggregator issues queries
//! at Poisson instants (or at a fixed interval); a query asks `fan_in` workers at once, each
//! answers with a response, all over persistent connections of a per-pair pool. The query
//! completes when its last response has arrived (its flows share a group number).

use super::{pick_distinct, FlowTemplate, Rounds, Traffic};
use crate::flows::FlowSpec;
use crate::topology::NodeId;
use ccsim_engine::{Rng, SimTime};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One aggregator: the host that queries, the workers it may ask, its random stream.
#[derive(Clone, Debug)]
pub struct Aggregator {
    pub host: NodeId,
    pub workers: Vec<NodeId>,
    pub stream: u64,
}

pub struct Query {
    template: FlowTemplate,
    request: u64,
    fan_in: u32,
    rounds: Rounds,
    stop: SimTime,
    aggregators: Vec<(Aggregator, Rng)>,
    next: BinaryHeap<Reverse<(SimTime, u32)>>,
    queries: u64,
    pick: Vec<NodeId>,
}

impl Query {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        template: FlowTemplate,
        aggregators: Vec<Aggregator>,
        request: u64,
        fan_in: u32,
        rounds: Rounds,
        seed: u64,
        start: SimTime,
        stop: SimTime,
    ) -> Self {
        let mut q = Query {
            template,
            request,
            fan_in,
            rounds,
            stop,
            aggregators: Vec::new(),
            next: BinaryHeap::new(),
            queries: 0,
            pick: Vec::new(),
        };
        for (i, a) in aggregators.into_iter().enumerate() {
            let rng = Rng::new(seed, a.stream);
            q.aggregators.push((a, rng));
            let first = match rounds {
                Rounds::Every(_) => Some(start),
                Rounds::Poisson(_) => q.after(i, start),
            };
            if let Some(t) = first.filter(|&t| t < stop) {
                q.next.push(Reverse((t, i as u32)));
            }
        }
        q
    }

    fn after(&mut self, i: usize, t: SimTime) -> Option<SimTime> {
        let at = self.rounds.after(t, &mut self.aggregators[i].1);
        (at < self.stop).then_some(at)
    }
}

impl Traffic for Query {
    fn next_arrival(&self) -> Option<SimTime> {
        self.next.peek().map(|Reverse((t, _))| *t)
    }

    fn arrive(&mut self, now: SimTime, flows: &mut Vec<FlowSpec>) {
        while let Some(&Reverse((t, i))) = self.next.peek() {
            if t > now {
                break;
            }
            self.next.pop();
            self.queries += 1;
            let (a, rng) = &mut self.aggregators[i as usize];
            self.pick.clear();
            self.pick.extend_from_slice(&a.workers);
            let n = pick_distinct(rng, &mut self.pick, self.fan_in as usize);
            for k in 0..n {
                let response = self.template.sizes.sample(rng.next_f64());
                flows.push(self.template.exchange(a.host, self.pick[k], self.request, response, now, self.queries));
            }
            if let Some(next) = self.after(i as usize, t) {
                self.next.push(Reverse((next, i)));
            }
        }
    }
}
