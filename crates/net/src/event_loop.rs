//! The event loop: the events a network schedules, and their dispatch. Every component keeps at
//! most one pending event: a port its current transmission, a link the arrival of its head
//! packet, an endpoint its earliest timer.

use crate::conn::Side;
use crate::core::Core;
use crate::route::route_index;
use crate::sim::RunStats;
use ccsim_engine::{EventQueue, PoolId, SimTime};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    TxDone(u32),
    /// A lazy host NIC finished a transmission that a TSQ-throttled socket waits for.
    TsqWake(u32),
    /// The head packet of a port's link reaches the link's far end (the port, and that packet:
    /// the loop reads it ahead without touching the port).
    Arrive(u32, PoolId),
    /// An fq qdisc's watchdog: a throttled flow's departure time has come.
    Watchdog(u32),
    /// A connection's timer, on one side.
    Timer(u32, Side),
    FlowStart(u32),
    /// A flow's connection opened ahead of its first write (`FlowSpec::connect`).
    FlowConnect(u32),
    FlowStop(u32),
    /// A traffic's next flow arrives (`traffic.rs`).
    Arrival(u32),
    Ping(u32),
    Sample,
    /// A host's NIC raises its receive interrupt: the packets it holds go up the stack.
    RxFlush(u32),
}

impl<Q: EventQueue<Ev>> Core<Q> {
    /// Run until `until` (at most the configured duration), calling `progress` now and then.
    pub(crate) fn run_until(&mut self, until: SimTime, mut progress: impl FnMut(SimTime)) {
        let until = until.min(self.cfg.duration);
        self.horizon = until;
        let mut next_progress = SimTime::ZERO;
        while let Some((now, ev)) = self.q.pop_until(until) {
            // While this event runs, bring in what the next ones will read: in a large network
            // it is out of the first-level cache (k=8 fat tree: 20 % faster); a small one keeps
            // it there and only pays for the look (S1: 2-3 % slower). An arrival's packet first,
            // then, once it is in, the port the packet will be queued at.
            if self.prefetch_next {
                if let Some(&Ev::Arrive(_, id)) = self.q.peek_ahead(PORT_AHEAD) {
                    self.prefetch_next_port(id);
                }
                match self.q.peek_ahead(PACKET_AHEAD) {
                    Some(&Ev::Arrive(_, id)) => prefetch(self.pool.get(id)),
                    Some(_) => {}
                    // (The list does not look that far: the next event's packet, late as it is.)
                    None => {
                        if let Some(&Ev::Arrive(_, id)) = self.q.peek() {
                            prefetch(self.pool.get(id));
                        }
                    }
                }
            }
            match ev {
                Ev::TxDone(p) => self.tx_done(p as usize, now),
                Ev::TsqWake(p) => self.tsq_wake(p as usize, now),
                Ev::Arrive(p, id) => self.arrive(p as usize, id, now),
                Ev::Watchdog(p) => self.watchdog(p as usize, now),
                Ev::Timer(c, side) => self.timer(c as usize, side, now),
                Ev::FlowStart(c) => self.flow_start(c as usize, now),
                Ev::FlowConnect(c) => self.flow_connect(c as usize, now),
                Ev::FlowStop(c) => self.flow_stop(c as usize, now),
                Ev::Arrival(t) => self.arrival(t as usize, now),
                Ev::Ping(i) => self.ping(i as usize, now),
                Ev::Sample => self.sample(now),
                Ev::RxFlush(n) => self.rx_flush(n as usize, now),
            }
            if now >= next_progress {
                progress(now);
                next_progress = now + SimTime::from_ms(100);
                // Checked where progress is reported (every 100 ms simulated), not per event.
                if self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                    self.stopped_at = Some(now);
                    break;
                }
            }
        }
        let until = self.stopped_at.unwrap_or(until);
        self.q.advance_to(until);
        for pi in 0..self.ports.len() {
            if self.ports[pi].lazy {
                self.settle(pi, until);
            }
        }
        self.stats.events = self.q.events_processed();
        self.stats.pool_high_water = self.pool.capacity();
    }

    /// Bring in what queueing packet `id` (already in the cache) at the far end of its link
    /// will wait for: the port its source route leaves that switch by, its line 0 and its
    /// first class. Not asked whether that end is the packet's host: there the entry after its
    /// route belongs to another route (or to none), and the port brought in goes unused; the
    /// test (the link's far end against the packet's destination, about one arrival in five
    /// at a host, in no pattern) cost more than that line (S4: 6 % faster without it).
    #[inline(always)]
    fn prefetch_next_port(&self, id: PoolId) {
        let next = route_index(self.pool.get(id)).and_then(|i| self.paths.get(i));
        if let Some(port) = next.and_then(|&np| self.ports.get(np as usize)) {
            prefetch(port);
            prefetch(&port.queue.classes.first);
        }
    }

    pub(crate) fn run(&mut self) {
        let d = self.cfg.duration;
        self.run_until(d, |_| {});
    }

    pub(crate) fn run_stats(&self) -> RunStats {
        self.stats
    }
}

/// How far after the next event (`EventQueue::peek_ahead`) the loop brings in the packet an
/// arrival reads ...
const PACKET_AHEAD: usize = 2;
/// ... and, that packet in by then, the port it will be queued at. (S4: the next port one
/// event ahead, and the packet two, were no faster; two and four, 9 % slower.)
const PORT_AHEAD: usize = 1;

/// Hint the CPU to load `x`'s first cache line.
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and `x` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(x as *const T as *const i8);
    }
}
