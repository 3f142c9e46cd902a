use crate::SimTime;

/// One pending event: its time, then its insertion sequence (ties fire in scheduling order).
#[derive(Clone, Copy)]
struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Earlier (time, seq) first.
    #[inline(always)]
    fn before(&self, o: &Self) -> bool {
        self.time < o.time || (self.time == o.time && self.seq < o.seq)
    }
}

/// A binary min-heap of events, ordered by `(time, insertion sequence)`: two events at the same
/// nanosecond fire in the order they were scheduled, so a run is a pure function of its inputs.
///
/// Components keep at most one pending event each (a link its head packet's arrival, a port its
/// current transmission, an endpoint its earliest timer), so the heap stays as small as the
/// network, not as large as the number of packets in flight. A plain binary min-heap with 8-byte
/// keys (24-byte entries for an 8-byte event, against 32 with a 16-byte-aligned `u128` key).
pub struct HeapQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> HeapQueue<E> {
    pub fn new() -> Self {
        HeapQueue { heap: Vec::new(), seq: 0, now: SimTime::ZERO, popped: 0 }
    }
    /// Current simulated time: the time of the last event popped.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedule `event` at `time` (never earlier than now).
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.max(self.now);
        let e = Entry { time: time.ns(), seq: self.seq, event };
        self.seq += 1;
        // Sift up from the new leaf.
        let mut i = self.heap.len();
        self.heap.push(e);
        let h = self.heap.as_mut_slice();
        while i > 0 {
            let parent = (i - 1) / 2;
            // SAFETY: parent < i < h.len().
            let hp = unsafe { *h.get_unchecked(parent) };
            if !e.before(&hp) {
                break;
            }
            unsafe { *h.get_unchecked_mut(i) = hp };
            i = parent;
        }
        h[i] = e;
    }
    /// Pop the next event if it is due at or before `limit`, advancing the clock to it.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let top = *self.heap.first()?;
        if top.time > limit.ns() {
            return None;
        }
        let last = self.heap.pop().expect("non-empty");
        let n = self.heap.len();
        if n > 0 {
            // Sift the last leaf down from the root.
            let h = self.heap.as_mut_slice();
            let mut i = 0;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                // SAFETY: l < n = h.len(), and l + 1 is read only when it is < n; i < n always.
                let c = unsafe {
                    if l + 1 < n && h.get_unchecked(l + 1).before(h.get_unchecked(l)) {
                        l + 1
                    } else {
                        l
                    }
                };
                let hc = unsafe { *h.get_unchecked(c) };
                if !hc.before(&last) {
                    break;
                }
                unsafe { *h.get_unchecked_mut(i) = hc };
                i = c;
            }
            h[i] = last;
        }
        self.now = SimTime(top.time);
        self.popped += 1;
        Some((self.now, top.event))
    }
    /// The next event, without taking it.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.heap.first().map(|e| &e.event)
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| SimTime(e.time))
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

/// The event list of a run: events leave by (time, scheduling order), so that a run is a pure
/// function of its inputs. Two implementations give exactly that order: a binary heap
/// ([`HeapQueue`]), the cheaper while few events are pending, and a timing wheel
/// ([`WheelQueue`]) for networks that keep thousands pending. A simulation is generic over
/// the choice, so the choice changes speed, never a result, and costs nothing per event.
pub trait EventQueue<E: Copy>: Default {
    /// Current simulated time: the time of the last event popped.
    fn now(&self) -> SimTime;
    /// Schedule `event` at `time` (never earlier than now).
    fn schedule(&mut self, time: SimTime, event: E);
    /// Pop the next event if it is due at or before `limit`, advancing the clock to it.
    fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)>;
    /// The next event, without taking it. May answer `None` while events are pending when
    /// finding it would cost more than a prefetch saves (the wheel looks only near `now`).
    fn peek(&self) -> Option<&E>;
    /// Advance the clock without an event (used at the end of a run).
    fn advance_to(&mut self, t: SimTime);
    /// Number of events processed so far.
    fn events_processed(&self) -> u64;
}

macro_rules! event_queue_impl {
    ($t:ident) => {
        impl<E: Copy> crate::EventQueue<E> for $t<E> {
            #[inline(always)]
            fn now(&self) -> SimTime {
                $t::now(self)
            }
            #[inline(always)]
            fn schedule(&mut self, time: SimTime, event: E) {
                $t::schedule(self, time, event)
            }
            #[inline(always)]
            fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
                $t::pop_until(self, limit)
            }
            #[inline(always)]
            fn peek(&self) -> Option<&E> {
                $t::peek(self)
            }
            #[inline(always)]
            fn advance_to(&mut self, t: SimTime) {
                $t::advance_to(self, t)
            }
            #[inline(always)]
            fn events_processed(&self) -> u64 {
                $t::events_processed(self)
            }
        }
    };
}
pub(crate) use event_queue_impl;

event_queue_impl!(HeapQueue);

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = HeapQueue::new();
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
        let mut q = HeapQueue::new();
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
        let mut q = HeapQueue::new();
        q.schedule(SimTime(10), ());
        assert!(q.pop_until(SimTime(9)).is_none());
        assert!(q.pop_until(SimTime(10)).is_some());
    }
}
