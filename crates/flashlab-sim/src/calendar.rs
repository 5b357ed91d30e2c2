//! One channel bus's booked transfers: a sorted, flat list of busy intervals.
//!
//! A transfer occupies the bus only for its own duration and takes the earliest free
//! interval at or after the moment it is ready, so a transfer booked later may fill a
//! gap left before transfers booked earlier (back-filling). Intervals that end at or
//! before the *floor* (the earliest time any future transfer may be ready) can never
//! matter again and are pruned from the front, which keeps the list short: it spans
//! only the transfers booked ahead of the current time.

/// A booked transfer: `[start, end)`, and who booked it (0: not displaceable; die + 1:
/// a GC transfer of that die, which a host transfer may displace under
/// `timing.bus_arbitration = "host-first"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub start: u64,
    pub end: u64,
    pub owner: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Calendar {
    /// Sorted by start; intervals never overlap, so ends are sorted too.
    slots: Vec<Slot>,
    /// Slots before `head` ended at or before the floor.
    head: usize,
}

impl Calendar {
    /// Forget slots that end at or before `floor`.
    #[inline]
    pub fn prune(&mut self, floor: u64) {
        while self.head < self.slots.len() && self.slots[self.head].end <= floor {
            self.head += 1;
        }
        if self.head >= 64 && self.head * 2 >= self.slots.len() {
            self.slots.drain(..self.head);
            self.head = 0;
        }
    }

    /// Index of the first live slot that ends after `t`.
    #[inline]
    fn first_ending_after(&self, t: u64) -> usize {
        self.head + self.slots[self.head..].partition_point(|s| s.end <= t)
    }

    /// Earliest start `>= ready` of a free interval of `len`, treating slots for which
    /// `ignore` holds as free; and the index a slot starting there would take.
    #[inline]
    pub fn earliest(&self, ready: u64, len: u64, ignore: impl Fn(&Slot) -> bool) -> (u64, usize) {
        // Fast path: nothing booked after `ready`.
        if self.slots.last().is_none_or(|s| s.end <= ready) {
            return (ready, self.slots.len());
        }
        let mut at = ready;
        let mut i = self.first_ending_after(ready);
        while i < self.slots.len() {
            let s = self.slots[i];
            if !ignore(&s) {
                if at + len <= s.start {
                    break;
                }
                at = at.max(s.end);
            }
            i += 1;
        }
        // Insertion index among all slots (ignored ones included) for a start at `at`.
        let idx = self.head + self.slots[self.head..].partition_point(|s| s.start < at);
        (at, idx)
    }

    /// Book `[start, start + len)` at index `idx` (from [`Calendar::earliest`]).
    #[inline]
    pub fn insert(&mut self, idx: usize, start: u64, len: u64, owner: u32) {
        debug_assert!(idx == self.slots.len() || self.slots[idx].start >= start + len);
        debug_assert!(idx == self.head || idx == 0 || self.slots[idx - 1].end <= start);
        self.slots.insert(idx, Slot { start, end: start + len, owner });
    }

    /// Book the earliest free interval of `len` at or after `ready`; returns its start.
    #[inline]
    pub fn book(&mut self, ready: u64, len: u64, owner: u32) -> u64 {
        let (at, idx) = self.earliest(ready, len, |_| false);
        self.insert(idx, at, len, owner);
        at
    }

    /// Remove and return the slots overlapping `[from, to)` (all must be ignorable by the caller).
    pub fn take_overlapping(&mut self, from: u64, to: u64, out: &mut Vec<Slot>) {
        let i = self.first_ending_after(from);
        let mut j = i;
        while j < self.slots.len() && self.slots[j].start < to {
            j += 1;
        }
        out.extend(self.slots.drain(i..j));
    }

    /// First instant at or after `t` at which the bus is not transferring.
    pub fn idle_at(&self, t: u64) -> u64 {
        let mut at = t;
        for s in &self.slots[self.first_ending_after(t)..] {
            if s.start > at {
                break;
            }
            at = at.max(s.end);
        }
        at
    }

    /// Live slots (for invariant checks in tests).
    #[cfg(test)]
    pub fn live(&self) -> &[Slot] {
        &self.slots[self.head..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn books_earliest_gap_and_backfills() {
        let mut c = Calendar::default();
        assert_eq!(c.book(100, 10, 0), 100);
        assert_eq!(c.book(100, 10, 0), 110);
        assert_eq!(c.book(200, 10, 0), 200);
        // A gap of 80 between 120 and 200: back-filled by a transfer ready at 50.
        assert_eq!(c.book(50, 10, 0), 50);
        assert_eq!(c.book(115, 10, 0), 120);
        assert_eq!(c.book(125, 80, 0), 210);
        assert_eq!(c.book(125, 70, 0), 130);
        let starts: Vec<u64> = c.live().iter().map(|s| s.start).collect();
        assert_eq!(starts, vec![50, 100, 110, 120, 130, 200, 210]);
        assert_eq!(c.idle_at(100), 290);
        assert_eq!(c.idle_at(60), 60);
        c.prune(125);
        assert_eq!(c.live().len(), 4, "[120, 130) still ends after the floor");
        assert_eq!(c.book(125, 5, 0), 290);
    }

    #[test]
    fn ignored_slots_are_free_and_can_be_taken_out() {
        let mut c = Calendar::default();
        c.book(100, 10, 3);
        c.book(110, 10, 0);
        let (at, _) = c.earliest(95, 10, |s| s.owner == 3);
        assert_eq!(at, 95, "ignoring the GC slot at 100, the host slot fits before 110");
        let mut out = Vec::new();
        c.take_overlapping(95, 105, &mut out);
        assert_eq!(out, vec![Slot { start: 100, end: 110, owner: 3 }]);
        assert_eq!(c.book(95, 10, 0), 95);
        assert_eq!(c.book(100, 10, 3), 120);
    }

    /// Model check against a brute-force oracle: random bookings never overlap, each
    /// starts at the earliest instant >= ready at which `len` fits.
    #[test]
    fn matches_a_brute_force_oracle() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut c = Calendar::default();
        let mut busy = vec![false; 4000];
        for _ in 0..300 {
            let (ready, len) = (rnd(3000), 1 + rnd(20));
            let want = (ready..).find(|&s| (s..s + len).all(|t| !busy[t as usize])).unwrap();
            assert_eq!(c.book(ready, len, 0), want);
            (want..want + len).for_each(|t| busy[t as usize] = true);
        }
    }
}
