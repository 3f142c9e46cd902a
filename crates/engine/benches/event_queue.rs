//! The event queue under the "hold" model: a queue of N pending events, and each operation pops
//! the earliest and schedules one new event a random delay later, as a simulation in steady
//! state does. N = 16 is a star's queue (S1 holds about 13), 1024 a k=8 fat tree's (about 1200),
//! 8192 a k=16 one's. The binary heap and the timing wheel, each behind `EventQueue` by size.
//! Each new event is a random delay ahead (up to 10 us): placed anywhere among the pending ones.
//! A second model is a star's pattern: nine new events in ten are due within 100 ns (a link's
//! next arrival, before nearly everything pending), the tenth up to 1 ms ahead (a timer).

use ccsim_engine::{microbench, EventQueue, HeapQueue, Rng, SimTime, WheelQueue};
use std::hint::black_box;

fn hold<Q: EventQueue<u64>>(name: &str, n: usize, near: bool) {
    let mut q = Q::default();
    let mut rng = Rng::new(1, 0);
    for i in 0..n as u64 {
        q.schedule(SimTime::from_ns(rng.below(10_000) as u64), i);
    }
    let model = if near { ", star pattern" } else { "" };
    microbench::run(&format!("{name}: pop + schedule, {n} pending{model}"), 1000, || {
        for _ in 0..1000 {
            let (now, ev) = q.pop_until(SimTime::MAX).expect("never empty");
            let delay = match (near, rng.below(10)) {
                (false, _) => rng.below(10_000),
                (true, 0) => rng.below(1_000_000),
                (true, _) => rng.below(100),
            };
            q.schedule(now + SimTime::from_ns(1 + delay as u64), black_box(ev));
        }
    });
}

fn main() {
    for n in [16, 128, 1024, 8192] {
        hold::<HeapQueue<u64>>("heap queue", n, false);
        hold::<WheelQueue<u64>>("wheel queue", n, false);
    }
    for n in [16, 128] {
        hold::<HeapQueue<u64>>("heap queue", n, true);
        hold::<WheelQueue<u64>>("wheel queue", n, true);
    }
}
