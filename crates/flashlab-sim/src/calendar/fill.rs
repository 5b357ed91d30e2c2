//! A second die's run filling a periodic node's gaps at one phase, in closed form
//! (s11-timed's "second obstacle", docs/performance.md "s14-timed").
//!
//! On a saturated channel (with the defaults: period = read + 2 × transfer + program =
//! 424.8 µs, a pair's slot 204.8 µs, so a gap of 220 µs) a second die's run lands in the
//! gaps of a first die's periodic node ([`super::periodic`]), each pair at its ready
//! time, one period after the previous one, so at the same phase in every gap. Where
//! each pair leaves both neighbours a gap shorter than a transfer, per-pair booking
//! merges it with the slot before and the slot after it: the stretch the run covers
//! becomes one solid slot, and each pair cost a split of the periodic node
//! ([`Calendar::detach_first`]) and a merge. [`Calendar::fill_slots`] tells how many
//! of the run's pairs would land so, [`Calendar::fill_run`] books them in O(1): the
//! die's node grows to the last slot absorbed, and the periodic node loses the slots
//! absorbed from its front.

use super::{Calendar, NIL, PERIODIC};

impl Calendar {
    /// How many pairs of transfers of `len` die `who` would book, the first ready at
    /// `first` and each next one `period` later, by each merging with the slot before
    /// it and the first slot of the periodic node after it (0 where that does not hold
    /// for two pairs at least). The die's last transfer lies in a plain node `c`
    /// followed by a periodic node `a` of this period whose slots are two transfers
    /// long; pair j is ready at `r_j = first + j·period` and lands there: the search
    /// starts at `c` (it starts at or before `r_j`, and `a`'s slot j, the node after
    /// it then, starts after `r_j`), `r_j` is at or after `c`'s end (`a`'s slot j − 1
    /// for j > 0), and both transfers fit before `a`'s slot j. It merges with both
    /// neighbours when both gaps are shorter than `len`: for j = 0 the gaps
    /// `first − end(c)` and `start(a) − (first + 2·len)`, for j > 0 the same second gap
    /// and `first + period − (start(a) + width)` (slot j − 1 ends at `start(a) + (j −
    /// 1)·period + width`), each the same for every j.
    ///
    /// Pruning between the pairs must touch neither `c` nor `a` (the caller prunes
    /// once, to the last pair's floor): `bound`, the floor before pair 0, must lie
    /// before `c`'s end, and the floor before pair j > 0 is at most `r_j − lead` (the
    /// die's own clock: a pair's read starts `lead` before its transfer is ready; the
    /// host floor lies before `bound`), which lies before `c`'s end then, slot j − 1's,
    /// when `first + period − lead < start(a) + width`: the same for every j.
    #[inline(always)]
    pub fn fill_slots(&self, who: usize, first: u64, period: u64, len: u64, bound: u64, lead: u64) -> u64 {
        let c = self.cursor[who];
        if c == NIL || self.movable {
            return 0;
        }
        let n = self.node(c);
        if n.owner == PERIODIC || n.next == NIL || n.start > first || n.end > first || first - n.end >= len {
            return 0;
        }
        let a = self.node(n.next);
        let w = self.width;
        if a.owner != PERIODIC || period != self.period || 2 * len != w || bound >= n.end {
            return 0;
        }
        // Both transfers fit before slot 0 and leave it a gap shorter than `len`.
        if first + w > a.start || a.start - (first + w) >= len {
            return 0;
        }
        // Pair j > 0 after slot j − 1: a gap shorter than `len`.
        let after = first + period;
        if after < a.start + w || after - (a.start + w) >= len || after - lead >= a.start + w {
            return 0;
        }
        (a.end - a.start - w) / period + 1
    }

    /// Book the first `m` pairs [`Calendar::fill_slots`] counted (`2 ≤ m ≤` that count,
    /// same arguments): what `m` [`Calendar::book_pair`] calls ready at `first + j·period`
    /// would leave, in O(1). The die's node `c` ends where slot m − 1 of the periodic
    /// node `a` ended; `a` loses its first `m` slots (released if none is left, a plain
    /// node if one is); cursors on `a` whose die's last transfer lies in an absorbed
    /// slot move to `c`, as the merges' `release` moves them.
    pub fn fill_run(&mut self, who: usize, first: u64, m: u64, period: u64) {
        let c = self.cursor[who];
        let i = self.node(c).next;
        let a = *self.node(i);
        let slots = (a.end - a.start - self.width) / period + 1;
        debug_assert!(m >= 2 && m <= slots);
        let end = a.start + (m - 1) * period + self.width;
        if m == slots {
            let n = self.node_mut(c);
            (n.end, n.next, n.next_start) = (end, a.next, a.next_start);
            self.periodic_live -= 1;
            self.release(i, c);
        } else {
            let start = a.start + m * period;
            let n = self.node_mut(c);
            (n.end, n.next_start) = (end, start);
            let rest = self.node_mut(i);
            rest.start = start;
            if slots - m == 1 {
                rest.owner = 0;
                self.periodic_live -= 1;
            }
            for (k, &at) in self.cursor.iter_mut().zip(&self.cursor_at) {
                if *k == i && at < start {
                    *k = c;
                }
            }
        }
        self.cursor_at[who] = first + (m - 1) * period;
    }
}
