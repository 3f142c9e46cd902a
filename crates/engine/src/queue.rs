use crate::SimTime;

/// A [`HeapQueue`] with this many events pending turns from a sorted list into a heap...
pub const SORTED_MAX: usize = 256;
/// ...and back into a sorted list below this many.
pub const SORTED_MIN: usize = 64;

/// One pending event: its time, then its insertion sequence (ties fire in scheduling order).
#[derive(Clone, Copy)]
struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (u64, u64) {
        (self.time, self.seq)
    }
    /// Earlier (time, seq) first.
    #[inline(always)]
    fn before(&self, o: &Self) -> bool {
        self.time < o.time || (self.time == o.time && self.seq < o.seq)
    }
}

/// The event list of small networks, ordered by `(time, insertion sequence)`: two events at the
/// same nanosecond fire in the order they were scheduled, so a run is a pure function of its
/// inputs.
///
/// Components keep at most one pending event each (a link its head packet's arrival, a port its
/// current transmission, an endpoint its earliest timer), so the list stays as small as the
/// network, not as large as the number of packets in flight: a star holds a dozen to about a
/// hundred. While it holds fewer than [`SORTED_MAX`] the entries are kept sorted, latest first:
/// the next event is the last entry, and a new one is placed by a scan from that end — most new
/// events are a link's next arrival, due before nearly everything pending, so the scan and the
/// move are a step or two where a heap would sift through every level twice. Beyond that it is
/// a plain binary min-heap (reversed into place: ascending order is a heap), and sorted again
/// once it drains below [`SORTED_MIN`]. 8-byte keys (24-byte entries for an 8-byte event).
pub struct HeapQueue<E> {
    /// Sorted latest first while `sorted`, else a binary min-heap.
    entries: Vec<Entry<E>>,
    sorted: bool,
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
        HeapQueue { entries: Vec::new(), sorted: true, seq: 0, now: SimTime::ZERO, popped: 0 }
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
        if self.sorted {
            if self.entries.len() < SORTED_MAX {
                // Moved past every entry due before it (or at its time: scheduled earlier),
                // from the next event's end.
                let v = &mut self.entries;
                v.push(e);
                let mut i = v.len() - 1;
                // SAFETY: 0 < i < v.len() wherever i - 1 and i are touched.
                unsafe {
                    while i > 0 && v.get_unchecked(i - 1).time <= e.time {
                        *v.get_unchecked_mut(i) = *v.get_unchecked(i - 1);
                        i -= 1;
                    }
                    *v.get_unchecked_mut(i) = e;
                }
                return;
            }
            // Too many for a sorted list: earliest first is a valid min-heap.
            self.entries.reverse();
            self.sorted = false;
        }
        // Sift up from the new leaf.
        let mut i = self.entries.len();
        self.entries.push(e);
        let h = self.entries.as_mut_slice();
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
        if self.sorted {
            let top = *self.entries.last()?;
            if top.time > limit.ns() {
                return None;
            }
            self.entries.pop();
            self.now = SimTime(top.time);
            self.popped += 1;
            return Some((self.now, top.event));
        }
        let top = *self.entries.first()?;
        if top.time > limit.ns() {
            return None;
        }
        let last = self.entries.pop().expect("non-empty");
        let n = self.entries.len();
        if n > 0 {
            // Sift the last leaf down from the root.
            let h = self.entries.as_mut_slice();
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
        if n < SORTED_MIN {
            self.entries.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
            self.sorted = true;
        }
        self.now = SimTime(top.time);
        self.popped += 1;
        Some((self.now, top.event))
    }
    /// The next event, without taking it.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.next().map(|e| &e.event)
    }
    /// The heap does not look past its next event (`None` but for `n` = 0).
    #[inline]
    pub fn peek_ahead(&self, n: usize) -> Option<&E> {
        if n == 0 {
            self.peek()
        } else {
            None
        }
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        self.next().map(|e| SimTime(e.time))
    }
    fn next(&self) -> Option<&Entry<E>> {
        if self.sorted {
            self.entries.last()
        } else {
            self.entries.first()
        }
    }
    /// Advance the clock without an event (used at the end of a run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
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
    /// The event `n` places after the next one (`peek_ahead(0)` is `peek`), when it is as cheap
    /// to find as the next (else `None`): for a look further ahead than `peek`.
    fn peek_ahead(&self, n: usize) -> Option<&E>;
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
            fn peek_ahead(&self, n: usize) -> Option<&E> {
                $t::peek_ahead(self, n)
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
    fn matches_a_sorted_reference_under_random_load() {
        // Interleaved schedules and pops against a (time, seq)-sorted reference, in phases that
        // grow the queue past `SORTED_MAX` (sorted list to heap) and drain it below `SORTED_MIN`
        // (heap to sorted list) again, with many events at one nanosecond.
        let mut q = HeapQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut rng = crate::Rng::new(3, 0);
        let mut seq = 0u64;
        let (mut went_heap, mut went_back) = (0, 0);
        for round in 0..40_000 {
            let grow = (round / 4_000) % 2 == 0;
            let sorted = q.sorted;
            if rng.below(10) < if grow { 8 } else { 2 } {
                let t = q.now().ns() + rng.below(50) as u64;
                q.schedule(SimTime(t), seq);
                reference.push((t, seq));
                seq += 1;
            } else if let Some((t, e)) = q.pop_until(SimTime::MAX) {
                reference.sort();
                let want = reference.remove(0);
                assert_eq!((t.ns(), e), want);
            } else {
                assert!(reference.is_empty());
            }
            went_heap += (sorted && !q.sorted) as u32;
            went_back += (!sorted && q.sorted) as u32;
        }
        assert!(went_heap >= 3 && went_back >= 3, "{went_heap} and {went_back} changes of form");
    }

    #[test]
    fn ties_fire_in_insertion_order() {
        // Events at the time of pending ones and before all of them, each placed in turn in the
        // sorted list.
        let mut q = HeapQueue::new();
        for (t, e) in [(10, 'c'), (5, 'a'), (10, 'd'), (5, 'b'), (20, 'f'), (10, 'e')] {
            q.schedule(SimTime(t), e);
        }
        assert!(q.sorted);
        assert_eq!(q.peek_time(), Some(SimTime(5)));
        let got: Vec<char> = std::iter::from_fn(|| q.pop_until(SimTime::MAX).map(|e| e.1)).collect();
        assert_eq!(got.iter().collect::<String>(), "abcdef");
        assert_eq!(q.now(), SimTime(20));
    }

    #[test]
    fn pop_until_respects_limit() {
        let mut q = HeapQueue::new();
        q.schedule(SimTime(10), ());
        assert!(q.pop_until(SimTime(9)).is_none());
        assert!(q.pop_until(SimTime(10)).is_some());
    }
}
