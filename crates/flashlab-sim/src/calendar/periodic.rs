//! Periodic nodes: one calendar node standing for a run of equal slots at a fixed
//! period, `[start + k·period, start + k·period + width)` for k = 0, 1, … while the
//! slot lies within `[start, end)`.
//!
//! Under `fifo` arbitration a GC victim's migrations (`crate::migrate_run`) or a
//! hybrid's merge (`crate::merge_run`) on one die that land behind everything booked on
//! the channel book each (read, program) pair at its ready time: one slot of two
//! transfers every read + 2 × transfer + program. [`Calendar::append_run`] books such
//! a run's remaining pairs as one node in O(1) instead of one node per pair.
//!
//! The node is only a shorter spelling of the same slots: the gap between two of its
//! slots is at least one transfer long (else per-pair booking would have merged them
//! into one slot), so every booking sees the same free gaps. Where a later booking or
//! reader needs a position inside the node, it is split in O(1): a search that finds
//! its gap inside a periodic node splits it there into a prefix and a suffix node
//! ([`Calendar::pass_periodic`]); a booking that merges with a periodic neighbour's
//! first or last slot detaches that slot into a node of its own first
//! ([`Calendar::detach_first`], [`Calendar::detach_last`]); pruning drops whole slots
//! from the front ([`Calendar::trim_head`]); `idle_at` computes the answer inside the
//! node ([`Calendar::idle_over`]). Periodic nodes exist only in calendars without
//! displaceable slots (`fifo`), so the searches that ignore slots (`host-first`) never
//! meet one. Every calendar's periodic nodes share one period and width.

use super::{Calendar, Node, NIL, PERIODIC};

impl Calendar {
    /// Whether booking runs as periodic nodes has paid on this channel so far: splits
    /// cost more than the per-pair bookings they replace, and where other dies fill a
    /// node's gaps as fast as it is appended (a saturated channel) nearly every slot is
    /// split out again (`map-page-random-timed`: 1.7 splits per slot; FAST and DFTL:
    /// under 0.2). So runs are booked in closed form while the channel's splits stay
    /// under a quarter of the slots so booked. Only a choice of representation: every
    /// booking is the same either way.
    #[inline(always)]
    pub fn runs_pay(&self) -> bool {
        self.splits * 4 <= self.run_slots
    }

    /// Whether die `who`'s last transfer lies in the channel's last slot.
    #[inline(always)]
    pub fn is_last(&self, who: usize) -> bool {
        let c = self.cursor[who];
        c != NIL && self.node(c).next == NIL
    }

    /// Die `who`, whose last transfer lies in the channel's last slot, books `count`
    /// pairs of transfers of `len`, the first at `first`, each next one `period` later,
    /// each pair's second transfer right behind its first: what `count`
    /// [`Calendar::book_pair`] calls ready at those instants would book (each lands
    /// behind everything, at its ready time), as one node. Returns false, booking
    /// nothing, where that does not hold or one node cannot stand for them: the first
    /// pair would merge with the last slot, the gaps between pairs are shorter than
    /// `len` (per-pair booking merges them), the calendar has displaceable slots, or
    /// its periodic nodes have another period or width.
    pub fn append_run(&mut self, who: usize, first: u64, count: u64, period: u64, len: u64) -> bool {
        let width = 2 * len;
        let shape = (self.period, self.width);
        if self.movable || count < 2 || period < width + len || !(shape == (0, 0) || shape == (period, width)) {
            return false;
        }
        let c = self.cursor[who];
        if c == NIL || self.node(c).next != NIL || self.node(c).end + len > first {
            return false;
        }
        (self.period, self.width) = (period, width);
        self.run_slots += count;
        self.periodic_live += 1;
        let last = first + (count - 1) * period;
        let i = self.alloc(Node { start: first, end: last + width, next_start: u64::MAX, owner: PERIODIC, next: NIL });
        self.link(c, i, first);
        self.cursor[who] = i;
        self.cursor_at[who] = last;
        true
    }

    /// Slots of periodic node `n` before the one starting at or before `t`: `t`'s
    /// index in the run (no bound by the node's end).
    #[inline]
    fn index(&self, n: &Node, t: u64) -> u64 {
        (t - n.start) / self.period
    }

    /// Split periodic node `i` after its slot `k` (not its last): `i` keeps slots
    /// `0..=k`, a new node after it takes the rest; each is periodic if it holds more
    /// than one slot. Cursors whose die's last transfer lies in the rest move to it.
    /// Returns the new node.
    fn split_after(&mut self, i: u32, k: u64) -> u32 {
        let n = *self.node(i);
        debug_assert!(n.owner == PERIODIC && n.start + (k + 1) * self.period < n.end);
        self.splits += 1;
        let (cut, end) = (n.start + (k + 1) * self.period, n.start + k * self.period + self.width);
        let width = self.width;
        let kind = |start: u64, end: u64| if end - start > width { PERIODIC } else { 0 };
        let j = self.alloc(Node {
            start: cut,
            end: n.end,
            next_start: n.next_start,
            owner: kind(cut, n.end),
            next: n.next,
        });
        let p = self.node_mut(i);
        (p.end, p.next, p.next_start, p.owner) = (end, j, cut, kind(n.start, end));
        // One periodic node became two nodes, each periodic or not.
        let now = [kind(n.start, end), kind(cut, n.end)].iter().filter(|&&o| o == PERIODIC).count() as u32;
        self.periodic_live = self.periodic_live + now - 1;
        for (c, &at) in self.cursor.iter_mut().zip(&self.cursor_at) {
            if *c == i && at >= cut {
                *c = j;
            }
        }
        j
    }

    /// Node `i`, or if periodic the node its last slot is split into.
    #[inline(always)]
    pub(super) fn detach_last(&mut self, i: u32) -> u32 {
        let n = *self.node(i);
        match n.owner {
            PERIODIC => self.split_after(i, self.index(&n, n.end - self.width) - 1),
            _ => i,
        }
    }

    /// Make node `i` hold only its first slot if periodic (the rest follows it).
    #[inline(always)]
    pub(super) fn detach_first(&mut self, i: u32) {
        if self.node(i).owner == PERIODIC {
            self.split_after(i, 0);
        }
    }

    /// [`Calendar::pass`] over periodic node `i`: the gap after slot k is
    /// `[start + k·period + width, start + (k + 1)·period)`, at least `len` long, and
    /// inside the node while slot k + 1 is.
    #[cold]
    pub(super) fn pass_periodic(&mut self, i: u32, at: &mut u64, len: u64) -> Option<(u64, u32, u32)> {
        let n = *self.node(i);
        let a = (*at).max(n.start + self.width);
        let mut k = self.index(&n, a - self.width);
        let mut found = a;
        if a + len > n.start + (k + 1) * self.period {
            k += 1;
            found = n.start + k * self.period + self.width;
        }
        if n.start + (k + 1) * self.period < n.end {
            let j = self.split_after(i, k);
            return Some((found, i, j));
        }
        *at = (*at).max(n.end);
        None
    }

    /// `idle_at`'s walk at `at` over node `i` (which starts at or before `at`): `Ok`
    /// the first idle instant at or after `at` inside it, or `Err` where the walk goes on.
    #[inline(always)]
    pub(super) fn idle_over<const P: bool>(&self, i: u32, at: u64) -> Result<u64, u64> {
        let n = self.node(i);
        if !P || n.owner != PERIODIC || at >= n.end - self.width {
            return Err(at.max(n.end));
        }
        // Slot k starts at or before `at`, and is not the last.
        let slot_end = n.start + self.index(n, at) * self.period + self.width;
        Ok(at.max(slot_end))
    }

    /// Drop the slots of the periodic head that end at or before `floor` (not all: the
    /// head ends after it). Cursors whose die's last transfer lay in a dropped slot are
    /// cleared, as pruning its own node would.
    #[cold]
    pub(super) fn trim_head(&mut self, floor: u64) {
        let i = self.head;
        let n = *self.node(i);
        let start = n.start + (self.index(&n, floor - self.width) + 1) * self.period;
        debug_assert!(start < n.end);
        let one = n.end - start == self.width;
        let h = self.node_mut(i);
        h.start = start;
        if one {
            h.owner = 0;
            self.periodic_live -= 1;
        }
        self.head_start = start;
        for (c, &at) in self.cursor.iter_mut().zip(&self.cursor_at) {
            if *c == i && at < start {
                *c = NIL;
            }
        }
    }
}
