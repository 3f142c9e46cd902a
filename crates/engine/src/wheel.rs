use crate::SimTime;

/// Bits of time per wheel level, and slots per level.
const BITS: u32 = 8;
const SLOTS: usize = 1 << BITS;
/// Levels: level `k` files the events whose time first differs from the wheel's position in
/// bits `8k .. 8k + 8`; four levels reach 2^32 ns (4.3 s) ahead, later events wait in a list.
const LEVELS: usize = 4;
/// The bits of time above the levels' reach: equal to `cur`'s for every event in a level.
const HIGH: u64 = !((1u64 << (BITS * LEVELS as u32)) - 1);
/// Up to this many events enter level 0 by insertion; more by a counting sort.
const SMALL: usize = 32;
/// The most entries an emptied slot above level 1 keeps room for.
const KEEP: usize = 64;

/// An event in a level, with the low 32 bits of its time (the rest are `cur`'s): 16 bytes for
/// a 12-byte event.
#[derive(Clone, Copy)]
struct Entry<E> {
    t: u32,
    event: E,
}

/// A hierarchical timing wheel that keeps the exact order of a priority queue: events leave by
/// (time, scheduling order), as from the binary heap ([`crate::HeapQueue`]), which it replaces
/// when thousands of events are pending (a k=8 fat tree holds about 1 200).
///
/// The wheel's position `cur` is the time of the last event taken; every pending event is at
/// or after it. Level 0 is `cur`'s 256-ns window, held as one array in the order the events
/// leave, read from its end (`run`); level `k` has one slot per 256^k ns of `cur`'s
/// 256^(k+1)-ns window, each an array of its events in scheduling order. An event is filed at
/// the lowest level whose window holds it: at the tail of its slot, or, in level 0, to leave
/// after every pending event of its nanosecond or earlier (a new event in level 0 is nearly
/// always due soon, so it is placed near the end the array is read from, and little moves).
/// When level 0 runs dry, the next non-empty slot above is poured into the levels below in its
/// order; what reaches level 0 is sorted by time (a counting sort on the nanosecond within the
/// window, or an insertion sort for a few), ties kept in order. A slot's array is therefore
/// always in scheduling order (an event enters it either from above, when the slot is empty, or
/// at the tail, later than everything already there), so events due at the same nanosecond
/// leave in the order they were scheduled.
/// Each event is moved at most once per level; finding the next slot is a bitmap scan; taking
/// an event reads the next entry of one array, which the hardware brings in ahead (a list of
/// nodes, as the wheel first kept, cost a miss per event in a large network).
#[derive(Clone)]
pub struct WheelQueue<E> {
    /// Level 0, latest first: the next event is the last.
    run: Vec<Entry<E>>,
    /// Levels 1 .. `LEVELS`: slot `s` of level `k` at `(k - 1) * SLOTS + s`.
    slots: Vec<Vec<Entry<E>>>,
    /// Per level from 1, a bit per non-empty slot.
    bits: [[u64; SLOTS / 64]; LEVELS - 1],
    /// Events 2^32 ns or more beyond `cur`'s window, in scheduling order, with their times.
    far: Vec<(u64, E)>,
    /// Emptied level-1 slot arrays, the last emptied on top: a level-1 slot that fills takes
    /// the one read most recently, still in the cache (an array of its own would have been last
    /// written a turn of the wheel ago, and every line of it would miss). Higher levels keep
    /// their arrays: theirs hold a timer's reach of events, a level-1 slot's only 256 ns.
    spare: Vec<Vec<Entry<E>>>,
    /// The counting sort's buckets (one per nanosecond of level 0's window).
    counts: Box<[u32; SLOTS]>,
    cur: u64,
    len: usize,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> WheelQueue<E> {
    pub fn new() -> Self {
        WheelQueue {
            run: Vec::new(),
            slots: (0..(LEVELS - 1) * SLOTS).map(|_| Vec::new()).collect(),
            bits: [[0; SLOTS / 64]; LEVELS - 1],
            far: Vec::new(),
            spare: Vec::new(),
            counts: Box::new([0; SLOTS]),
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

    /// The full time of an entry of a level.
    #[inline(always)]
    fn time(&self, e: &Entry<E>) -> u64 {
        (self.cur & HIGH) | e.t as u64
    }

    /// The level whose window holds `t` (≥ `cur`): `LEVELS` for the far list.
    #[inline(always)]
    fn level_of(&self, t: u64) -> usize {
        let diff = t ^ self.cur;
        if diff < SLOTS as u64 {
            0
        } else {
            ((u64::BITS - 1 - diff.leading_zeros()) / BITS) as usize
        }
    }

    /// File an event due at `time` (≥ `cur`) at a level above 0, at the tail of its slot, or
    /// in the far list.
    #[inline(always)]
    fn file_above(&mut self, level: usize, time: u64, event: E) {
        if level >= LEVELS {
            self.far.push((time, event));
            return;
        }
        let s = ((time >> (BITS * level as u32)) as usize) & (SLOTS - 1);
        let slot = &mut self.slots[(level - 1) * SLOTS + s];
        if slot.is_empty() {
            self.bits[level - 1][s / 64] |= 1 << (s % 64);
            if level == 1 && slot.capacity() == 0 {
                if let Some(spare) = self.spare.pop() {
                    *slot = spare;
                }
            }
        }
        slot.push(Entry { t: time as u32, event });
    }

    /// File `e` in level 0, to leave after every pending event due at its time or earlier.
    #[inline]
    fn file_in_run(&mut self, e: Entry<E>) {
        match self.run.last() {
            Some(next) if next.t <= e.t => {
                // Those due by `e`'s time sit at the end; `e` goes just before them.
                let at = self.run.partition_point(|x| x.t > e.t);
                self.run.insert(at, e);
            }
            _ => self.run.push(e),
        }
    }

    /// Schedule `event` at `time` (never earlier than now).
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.ns().max(self.now.ns()).max(self.cur);
        self.len += 1;
        match self.level_of(time) {
            0 => self.file_in_run(Entry { t: time as u32, event }),
            level => self.file_above(level, time, event),
        }
    }

    /// The first non-empty slot of `level` (≥ 1) at or after slot `from`.
    #[inline(always)]
    fn next_slot(&self, level: usize, from: usize) -> Option<usize> {
        let b = &self.bits[level - 1];
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

    /// The earliest slot above level 0 holding events, as (level, slot) (`LEVELS` for the far
    /// list), without moving anything. `cur`'s own slot at a level is the window of the level
    /// below, so the search starts after it.
    #[inline(always)]
    fn first_slot_above(&self) -> Option<(usize, usize)> {
        for level in 1..LEVELS {
            let own = ((self.cur >> (BITS * level as u32)) as usize) & (SLOTS - 1);
            if own + 1 < SLOTS {
                if let Some(s) = self.next_slot(level, own + 1) {
                    return Some((level, s));
                }
            }
        }
        (!self.far.is_empty()).then_some((LEVELS, 0))
    }

    /// The earliest time in (level, slot) (`LEVELS`: the far list).
    fn earliest_in(&self, level: usize, s: usize) -> u64 {
        if level == LEVELS {
            return self.far.iter().map(|&(t, _)| t).min().unwrap_or(u64::MAX);
        }
        let slot = &self.slots[(level - 1) * SLOTS + s];
        slot.iter().map(|e| self.time(e)).min().unwrap_or(u64::MAX)
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

    /// Pour (level, slot) into the levels below, `cur` moved to the slot's start. Level 0 is
    /// empty when this runs.
    fn cascade(&mut self, level: usize, s: usize) {
        debug_assert!(self.run.is_empty());
        if level == LEVELS {
            let t = self.earliest_in(LEVELS, 0);
            self.cur = t & HIGH;
            // Every level is empty: the bits above them change.
            let far = std::mem::take(&mut self.far);
            for &(time, event) in &far {
                match self.level_of(time) {
                    0 => self.run.push(Entry { t: time as u32, event }),
                    l => self.file_above(l, time, event),
                }
            }
            if self.far.is_empty() && far.capacity() <= KEEP {
                self.far = far;
                self.far.clear();
            }
            return self.sort_run();
        }
        let shift = BITS * level as u32;
        self.cur = (self.cur >> (shift + BITS) << (shift + BITS)) | ((s as u64) << shift);
        self.bits[level - 1][s / 64] &= !(1 << (s % 64));
        let i = (level - 1) * SLOTS + s;
        let mut list = std::mem::take(&mut self.slots[i]);
        if level == 1 {
            // A level-1 slot is one level-0 window: sorted into level 0 whole.
            self.sort_into_run(&list);
            list.clear();
            self.spare.push(list);
            return;
        }
        for e in &list {
            let time = self.time(e);
            match self.level_of(time) {
                0 => self.run.push(*e),
                l => self.file_above(l, time, e.event),
            }
        }
        // A slot above level 1 keeps a small array for its next turn; a large one is let go (the
        // slot after a window's boundary takes every event of the boundary's last microseconds,
        // a thousand in a k=8 fat tree, and 512 slots keeping such arrays cost megabytes).
        if list.capacity() <= KEEP {
            list.clear();
            self.slots[i] = list;
        }
        self.sort_run();
    }

    /// Level 0 holds events in scheduling order: put them in leaving order.
    fn sort_run(&mut self) {
        if self.run.len() > 1 {
            let mut list = self.spare.pop().unwrap_or_default();
            std::mem::swap(&mut list, &mut self.run);
            self.sort_into_run(&list);
            list.clear();
            self.spare.push(list);
        }
    }

    /// Fill the empty level 0 from `list` (events of one 256-ns window, in scheduling order):
    /// a counting sort on the nanosecond within the window, latest first, and among events of
    /// one nanosecond the first scheduled last (it leaves first).
    fn sort_into_run(&mut self, list: &[Entry<E>]) {
        debug_assert!(self.run.is_empty());
        if list.len() <= SMALL {
            // Few events (a quiet network): an insertion sort, without the buckets' fixed cost.
            for &e in list {
                self.file_in_run(e);
            }
            return;
        }
        assert!(list.len() <= u32::MAX as usize, "a 256-ns window holds fewer than 2^32 events");
        let mask = SLOTS as u32 - 1;
        let counts = &mut *self.counts;
        counts.fill(0);
        for e in list {
            counts[(e.t & mask) as usize] += 1;
        }
        // counts[b] becomes the end of nanosecond b's run of entries: the earliest sit last.
        let mut end = list.len() as u32;
        for c in counts.iter_mut() {
            end -= *c;
            *c += end;
        }
        let run = &mut self.run;
        run.reserve(list.len());
        let spare = &mut run.spare_capacity_mut()[..list.len()];
        for e in list {
            let b = &mut counts[(e.t & mask) as usize];
            *b -= 1;
            spare[*b as usize].write(*e);
        }
        // SAFETY: every index below `list.len()` was written once: the buckets' ranges
        // partition it and each takes exactly as many entries as it counted.
        unsafe { run.set_len(list.len()) };
    }

    /// Pop the next event if it is due at or before `limit`, advancing the clock to it.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if self.run.is_empty() {
            self.refill(limit)?;
        }
        let e = *self.run.last().expect("refilled");
        let t = self.time(&e);
        if t > limit.ns() {
            return None;
        }
        self.run.pop();
        self.cur = t;
        self.len -= 1;
        self.now = SimTime(t);
        self.popped += 1;
        Some((self.now, e.event))
    }

    /// Level 0 is empty: pour slots from above until it is not. `None` if nothing is pending or
    /// the next event is after `limit` (then nothing moves, so that an event may still be
    /// scheduled before it).
    #[inline(never)]
    fn refill(&mut self, limit: SimTime) -> Option<()> {
        while self.run.is_empty() {
            let (level, s) = self.first_slot_above()?;
            // A slot whose whole span is due by `limit` needs no walk to find its earliest.
            if self.slot_last_ns(level, s) > limit.ns() && self.earliest_in(level, s) > limit.ns() {
                return None;
            }
            self.cascade(level, s);
        }
        Some(())
    }

    /// The next event, without taking it, when it is in level 0's window (else `None`: the
    /// wheel does not move to look).
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.run.last().map(|e| &e.event)
    }

    /// The event `n` places after the next one, if the current window holds it (`None`
    /// otherwise).
    #[inline]
    pub fn peek_ahead(&self, n: usize) -> Option<&E> {
        self.run.len().checked_sub(n + 1).map(|i| &self.run[i].event)
    }

    /// The time of the next event.
    pub fn peek_time(&self) -> Option<SimTime> {
        if let Some(e) = self.run.last() {
            return Some(SimTime(self.time(e)));
        }
        let (level, s) = self.first_slot_above()?;
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
    fn peek_ahead_names_the_events_that_follow_in_order() {
        // Whatever `peek_ahead(n)` answers is the event popped n places after the next one.
        let mut q = WheelQueue::new();
        let mut rng = crate::Rng::new(9, 0);
        for i in 0..5000u64 {
            q.schedule(SimTime(rng.next_u64() % 20_000), i);
        }
        let (mut seen, mut named) = (0, 0);
        while !q.is_empty() {
            assert_eq!(q.peek_ahead(0), q.peek());
            let ahead: Vec<Option<u64>> = (0..4).map(|n| q.peek_ahead(n).copied()).collect();
            let mut copy = q.clone();
            for want in ahead {
                let got = copy.pop_until(SimTime::MAX).map(|e| e.1);
                if let Some(w) = want {
                    assert_eq!(got, Some(w));
                    named += 1;
                }
            }
            q.pop_until(SimTime::MAX);
            seen += 1;
        }
        assert_eq!(seen, 5000);
        assert!(named > 3 * 5000, "the wheel looks ahead most of the time ({named} of {})", 4 * 5000);
    }

    /// Room kept by the slots and the spare arrays, in entries.
    fn retained<E>(q: &WheelQueue<E>) -> usize {
        q.slots.iter().chain(&q.spare).map(|v| v.capacity()).sum::<usize>() + q.run.capacity()
    }

    #[test]
    fn memory_follows_the_events_pending_not_the_events_so_far() {
        // A fat tree's pattern: a thousand events pending, each replaced by one 5-7 us later, so
        // that every 65-us boundary sends hundreds into one level-2 slot. Run for 50 simulated ms
        // (760 boundaries, three turns of level 2): the room kept stays a small multiple of what
        // is pending.
        let mut q = WheelQueue::new();
        let mut rng = crate::Rng::new(7, 0);
        for i in 0..1000u64 {
            q.schedule(SimTime(rng.next_u64() % 2000), i);
        }
        let mut high = 0;
        while let Some((now, e)) = q.pop_until(SimTime(50_000_000)) {
            q.schedule(now + SimTime(5_000 + rng.next_u64() % 2000), e);
            if e % 64 == 0 {
                high = high.max(retained(&q));
            }
        }
        assert_eq!(q.len(), 1000);
        assert!(high < 16 * 1000, "kept room for {high} entries with 1 000 pending");
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
