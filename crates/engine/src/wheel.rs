use crate::SimTime;

/// Bits of time per wheel level, and slots per level.
const BITS: u32 = 8;
const SLOTS: usize = 1 << BITS;
/// Levels: level `k` files the events whose time first differs from the wheel's position in
/// bits `8k .. 8k + 8`; four levels reach 2^32 ns (4.3 s) ahead, later events wait in a list.
const LEVELS: usize = 4;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node<E> {
    time: u64,
    event: E,
    next: u32,
}

#[derive(Clone, Copy)]
struct Slot {
    head: u32,
    tail: u32,
}

const EMPTY: Slot = Slot { head: NIL, tail: NIL };

/// A hierarchical timing wheel that keeps the exact order of a priority queue: events leave by
/// (time, scheduling order), as from the binary heap ([`crate::HeapQueue`]), which it replaces
/// when thousands of events are pending (a k=8 fat tree holds about 1 200).
///
/// The wheel's position `cur` is the time of the last event taken; every pending event is at
/// or after it. Level 0 has one slot per nanosecond of `cur`'s 256-ns window; level `k` one
/// slot per 256^k ns of `cur`'s 256^(k+1)-ns window. An event is filed at the lowest level whose
/// window holds it, at the tail of its slot's list. When a level runs dry, the next non-empty
/// slot of the level above is poured into the levels below, in list order. A slot's list is
/// therefore always in scheduling order — an event enters a slot either from above, when the
/// slot is empty, or at the tail, later than everything already there — so events due at the
/// same nanosecond leave level 0 in the order they were scheduled. Each event is moved at most
/// once per level; finding the next slot is a bitmap scan.
pub struct WheelQueue<E> {
    nodes: Vec<Node<E>>,
    free: u32,
    slots: [[Slot; SLOTS]; LEVELS],
    /// Per level, a bit per non-empty slot.
    bits: [[u64; SLOTS / 64]; LEVELS],
    /// Events 2^32 ns or more beyond `cur`'s window, in scheduling order.
    far: Vec<u32>,
    cur: u64,
    len: usize,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> WheelQueue<E> {
    pub fn new() -> Self {
        WheelQueue {
            nodes: Vec::new(),
            free: NIL,
            slots: [[EMPTY; SLOTS]; LEVELS],
            bits: [[0; SLOTS / 64]; LEVELS],
            far: Vec::new(),
            cur: 0,
            len: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// Current simulated time: the time of the last event popped.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Append node `n` (time ≥ `cur`) to the list of its slot.
    #[inline(always)]
    fn file(&mut self, n: u32) {
        let t = self.nodes[n as usize].time;
        let diff = t ^ self.cur;
        let level = if diff == 0 { 0 } else { ((u64::BITS - 1 - diff.leading_zeros()) / BITS) as usize };
        if level >= LEVELS {
            self.far.push(n);
            return;
        }
        let s = ((t >> (BITS * level as u32)) as usize) & (SLOTS - 1);
        let slot = &mut self.slots[level][s];
        if slot.tail == NIL {
            slot.head = n;
            self.bits[level][s / 64] |= 1 << (s % 64);
        } else {
            let tail = slot.tail as usize;
            self.nodes[tail].next = n;
        }
        slot.tail = n;
    }

    /// Schedule `event` at `time` (never earlier than now).
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.ns().max(self.now.ns()).max(self.cur);
        let node = Node { time, event, next: NIL };
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        self.len += 1;
        self.file(n);
    }

    /// The first non-empty slot of `level` at or after slot `from`.
    #[inline(always)]
    fn next_slot(&self, level: usize, from: usize) -> Option<usize> {
        let b = &self.bits[level];
        let mut w = from / 64;
        let mut word = b[w] & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            if w == SLOTS / 64 {
                return None;
            }
            word = b[w];
        }
    }

    /// The earliest pending event's level and slot (`LEVELS` for the far list), without
    /// moving anything.
    #[inline(always)]
    fn first_slot(&self) -> Option<(usize, usize)> {
        for level in 0..LEVELS {
            // Level 0 may hold `cur`'s own nanosecond; above it, `cur`'s own slot is the window
            // of the level below.
            let own = ((self.cur >> (BITS * level as u32)) as usize) & (SLOTS - 1);
            let from = if level == 0 { own } else { own + 1 };
            if from < SLOTS {
                if let Some(s) = self.next_slot(level, from) {
                    return Some((level, s));
                }
            }
        }
        (!self.far.is_empty()).then_some((LEVELS, 0))
    }

    /// The earliest time in the list of (level, slot).
    fn earliest_in(&self, level: usize, s: usize) -> u64 {
        let time = |n: u32| self.nodes[n as usize].time;
        if level == LEVELS {
            return self.far.iter().map(|&n| time(n)).min().unwrap_or(u64::MAX);
        }
        let mut n = self.slots[level][s].head;
        if level == 0 {
            return time(n); // one nanosecond per slot
        }
        let mut best = u64::MAX;
        while n != NIL {
            best = best.min(time(n));
            n = self.nodes[n as usize].next;
        }
        best
    }

    /// The last nanosecond slot `s` of `level` can hold (`u64::MAX` for the far list): the end
    /// of the span `cascade` moves `cur` to the start of.
    #[inline(always)]
    fn slot_last_ns(&self, level: usize, s: usize) -> u64 {
        if level == LEVELS {
            return u64::MAX;
        }
        let shift = BITS * level as u32;
        let start = (self.cur >> (shift + BITS) << (shift + BITS)) | ((s as u64) << shift);
        start + ((1u64 << shift) - 1)
    }

    /// Pour (level, slot) into the levels below, `cur` moved to the slot's start.
    fn cascade(&mut self, level: usize, s: usize) {
        if level == LEVELS {
            let t = self.earliest_in(LEVELS, 0);
            self.cur = t >> (BITS * LEVELS as u32) << (BITS * LEVELS as u32);
            let far = std::mem::take(&mut self.far);
            for &n in &far {
                self.file(n);
            }
            return;
        }
        let shift = BITS * level as u32;
        self.cur = (self.cur >> (shift + BITS) << (shift + BITS)) | ((s as u64) << shift);
        let mut n = self.slots[level][s].head;
        self.slots[level][s] = EMPTY;
        self.bits[level][s / 64] &= !(1 << (s % 64));
        while n != NIL {
            let next = self.nodes[n as usize].next;
            self.nodes[n as usize].next = NIL;
            self.file(n);
            n = next;
        }
    }

    /// Pop the next event if it is due at or before `limit`, advancing the clock to it.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let own = (self.cur as usize) & (SLOTS - 1);
        let s = match self.next_slot(0, own) {
            Some(s) => s,
            None => self.refill(limit)?,
        };
        let t = (self.cur & !(SLOTS as u64 - 1)) | s as u64;
        if t > limit.ns() {
            return None;
        }
        let slot = &mut self.slots[0][s];
        let n = slot.head;
        let node = self.nodes[n as usize];
        slot.head = node.next;
        if node.next == NIL {
            slot.tail = NIL;
            self.bits[0][s / 64] &= !(1 << (s % 64));
        }
        self.nodes[n as usize].next = self.free;
        self.free = n;
        self.cur = t;
        self.len -= 1;
        self.now = SimTime(t);
        self.popped += 1;
        Some((self.now, node.event))
    }

    /// Level 0's window is empty: pour slots from above until it is not, and return its first
    /// slot; `None` if nothing is pending or the next event is after `limit` (then nothing
    /// moves, so that an event may still be scheduled before it).
    #[inline(never)]
    fn refill(&mut self, limit: SimTime) -> Option<usize> {
        loop {
            let (level, s) = self.first_slot()?;
            if level == 0 {
                return Some(s);
            }
            // A slot whose whole span is due by `limit` needs no walk to find its earliest.
            if self.slot_last_ns(level, s) > limit.ns() && self.earliest_in(level, s) > limit.ns() {
                return None;
            }
            self.cascade(level, s);
        }
    }

    /// The next event, without taking it, when it is in level 0's window (else `None`: the
    /// wheel does not move to look).
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        let own = (self.cur as usize) & (SLOTS - 1);
        let s = self.next_slot(0, own)?;
        Some(&self.nodes[self.slots[0][s].head as usize].event)
    }

    /// The time of the next event.
    pub fn peek_time(&self) -> Option<SimTime> {
        let (level, s) = self.first_slot()?;
        Some(SimTime(self.earliest_in(level, s)))
    }

    /// Advance the clock without an event (used at the end of a run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

impl<E: Copy> Default for WheelQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

crate::queue::event_queue_impl!(WheelQueue);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HeapQueue;

    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = WheelQueue::new();
        q.schedule(SimTime(5), 'b');
        q.schedule(SimTime(1), 'a');
        q.schedule(SimTime(5), 'c');
        q.schedule(SimTime(1 << 40), 'e');
        q.schedule(SimTime(5), 'd');
        let got: Vec<char> = std::iter::from_fn(|| q.pop_until(SimTime::MAX).map(|e| e.1)).collect();
        assert_eq!(got, vec!['a', 'b', 'c', 'd', 'e']);
        assert_eq!(q.now(), SimTime(1 << 40));
    }

    #[test]
    fn pops_exactly_as_the_binary_heap_under_random_load() {
        // Interleaved schedules and pops, with many ties and spreads from one slot to beyond
        // the wheel, against the binary heap; the limit of each pop random too.
        for (spread, seed) in [(4u64, 1u64), (300, 2), (70_000, 3), (20_000_000, 4), (1 << 34, 5), (1 << 44, 6)] {
            let mut w = WheelQueue::new();
            let mut h = HeapQueue::new();
            let mut rng = crate::Rng::new(seed, 0);
            let mut id = 0u64;
            for _ in 0..50_000 {
                if rng.below(3) < 2 {
                    let t = SimTime(h.now().ns() + rng.next_u64() % spread);
                    w.schedule(t, id);
                    h.schedule(t, id);
                    id += 1;
                } else {
                    if let Some(e) = w.peek() {
                        assert_eq!(Some(e), h.peek());
                    }
                    assert_eq!(w.peek_time(), h.peek_time());
                    let limit = SimTime(h.now().ns() + rng.next_u64() % spread);
                    assert_eq!(w.pop_until(limit), h.pop_until(limit));
                }
                assert_eq!(w.len(), h.len());
            }
            while let Some(e) = h.pop_until(SimTime::MAX) {
                assert_eq!(w.pop_until(SimTime::MAX), Some(e));
            }
            assert!(w.is_empty());
            assert_eq!(w.events_processed(), h.events_processed());
        }
    }

    #[test]
    fn a_refused_pop_leaves_room_for_earlier_events() {
        let mut q = WheelQueue::new();
        q.schedule(SimTime(10), 0);
        q.schedule(SimTime(1 << 20), 1);
        q.schedule(SimTime(1 << 36), 2);
        assert!(q.pop_until(SimTime(9)).is_none());
        assert_eq!(q.pop_until(SimTime(10)), Some((SimTime(10), 0)));
        assert!(q.pop_until(SimTime(1 << 19)).is_none());
        q.schedule(SimTime(11), 3);
        assert!(q.pop_until(SimTime(1 << 30)).map(|e| e.1) == Some(3));
        assert!(q.pop_until(SimTime(1 << 30)).map(|e| e.1) == Some(1));
        assert!(q.pop_until(SimTime(1 << 30)).is_none());
        q.schedule(SimTime(1 << 31), 4);
        assert_eq!(q.pop_until(SimTime::MAX), Some((SimTime(1 << 31), 4)));
        assert_eq!(q.pop_until(SimTime::MAX), Some((SimTime(1 << 36), 2)));
        assert!(q.is_empty());
    }
}
