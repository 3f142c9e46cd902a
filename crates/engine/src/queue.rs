use crate::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    /// Time (high 64 bits) and insertion sequence (low 64 bits): one comparison orders both.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: invert so the earliest (time, seq) pops first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// The single event list of a run, ordered by `(time, insertion sequence)`: two events at the same
/// nanosecond fire in the order they were scheduled, so a run is a pure function of its inputs.
///
/// Components keep at most one pending event each (a link its head packet's arrival, a port its
/// current transmission, an endpoint its earliest timer), so the heap stays as small as the
/// network, not as large as the number of packets in flight.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0, now: SimTime::ZERO, popped: 0 }
    }
    /// Current simulated time: the time of the last event popped.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedule `event` at `time` (never earlier than now).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.max(self.now);
        self.heap.push(Entry { key: ((time.ns() as u128) << 64) | self.seq as u128, event });
        self.seq += 1;
    }
    /// Pop the next event if it is due at or before `limit`, advancing the clock to it.
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if (self.heap.peek()?.key >> 64) as u64 > limit.ns() {
            return None;
        }
        let e = self.heap.pop()?;
        let time = SimTime((e.key >> 64) as u64);
        self.now = time;
        self.popped += 1;
        Some((time, e.event))
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.key >> 64) as u64))
    }
    /// Advance the clock without an event (used at the end of a run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Number of events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), 'b');
        q.schedule(SimTime(1), 'a');
        q.schedule(SimTime(5), 'c');
        q.schedule(SimTime(5), 'd');
        let got: Vec<char> = std::iter::from_fn(|| q.pop_until(SimTime::MAX).map(|e| e.1)).collect();
        assert_eq!(got, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), SimTime(5));
    }
    #[test]
    fn matches_a_sorted_reference_under_random_load() {
        // Interleaved schedules and pops against a (time, seq)-sorted reference.
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut rng = crate::Rng::new(3, 0);
        let mut seq = 0u64;
        for _ in 0..20_000 {
            if rng.below(3) < 2 {
                let t = q.now().ns() + rng.below(50) as u64;
                q.schedule(SimTime(t), seq);
                reference.push((t, seq));
                seq += 1;
            } else if let Some((t, e)) = q.pop_until(SimTime::MAX) {
                reference.sort();
                let want = reference.remove(0);
                assert_eq!((t.ns(), e), want);
            }
        }
    }

    #[test]
    fn pop_until_respects_limit() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), ());
        assert!(q.pop_until(SimTime(9)).is_none());
        assert!(q.pop_until(SimTime(10)).is_some());
    }
}
