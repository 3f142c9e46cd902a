//! The event queue under the "hold" model: a queue of N pending events, and each operation pops
//! the earliest and schedules one new event a random delay later, as a simulation in steady
//! state does. N = 16 is a star's queue (S1 holds about 13), 1024 a k=8 fat tree's (about 1200),
//! 8192 a k=16 one's. The binary heap and the timing wheel, each behind `EventQueue` by size.

use ccsim_engine::{microbench, EventQueue, HeapQueue, Rng, SimTime, WheelQueue};
use std::hint::black_box;

fn hold<Q: EventQueue<u64>>(name: &str, n: usize) {
    let mut q = Q::default();
    let mut rng = Rng::new(1, 0);
    for i in 0..n as u64 {
        q.schedule(SimTime::from_ns(rng.below(10_000) as u64), i);
    }
    microbench::run(&format!("{name}: pop + schedule, {n} pending"), 1000, || {
        for _ in 0..1000 {
            let (now, ev) = q.pop_until(SimTime::MAX).expect("never empty");
            q.schedule(now + SimTime::from_ns(1 + rng.below(10_000) as u64), black_box(ev));
        }
    });
}

fn main() {
    for n in [16, 128, 1024, 8192] {
        hold::<HeapQueue<u64>>("heap queue", n);
        hold::<WheelQueue<u64>>("wheel queue", n);
    }
}
