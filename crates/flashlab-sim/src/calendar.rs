//! One channel bus's booked transfers: a sorted, flat list of busy intervals.
//!
//! A transfer occupies the bus only for its own duration and takes the earliest free
//! interval at or after the moment it is ready, so a transfer booked later may fill a
//! gap left before transfers booked earlier (back-filling). Intervals that end at or
//! before the *floor* (the earliest time any future transfer may be ready) can never
//! matter again and are pruned from the front, which keeps the list short: it spans
//! only the transfers booked ahead of the current time.
//!
//! Every transfer has the same length (one page), so a gap shorter than it can never be
//! used: a booking that leaves such a gap to a neighbour is merged with it (unless
//! either is a displaceable GC transfer). Every remaining gap between slots can take a
//! transfer, so finding the earliest free slot stops at the first gap after the ready
//! time: a saturated stretch of the bus is one slot, not thousands.

/// Booked bus time `[start, end)` (one transfer, or several merged with the dead gaps
/// between them), and who booked it (0: fixed; die + 1: a GC transfer of that die,
/// which a host transfer may displace under `timing.bus_arbitration = "host-first"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub start: u64,
    pub end: u64,
    pub owner: u32,
}

const NIL: u32 = u32::MAX;

/// The per-die cursors are padded to a multiple of this many (with NIL cursors).
const LANES: usize = 4;

/// A slot in the list: 32 bytes, aligned so that a node never straddles two cache
/// lines (the calendars outgrow the L2 cache next to the FTL's tables, so a node
/// touched is often a miss; 40-byte nodes made every third one two misses).
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct Node {
    start: u64,
    end: u64,
    /// The next node's start (u64::MAX if none): the common "fits before the next
    /// slot" test needs no load of the next node.
    next_start: u64,
    owner: u32,
    next: u32,
}

impl Node {
    #[inline]
    fn slot(&self) -> Slot {
        Slot { start: self.start, end: self.end, owner: self.owner }
    }
}

/// One channel's calendar: the live slots as a sorted singly linked list in a flat
/// arena (a booking in the middle of a long backlog — an overloaded device books
/// seconds ahead — moves nothing), and per die of the channel a cursor at the slot
/// holding its last transfer. A die's next transfer is ready no earlier than its last
/// one ended, so the search for it starts at its cursor, usually a slot or two before
/// where it lands.
#[derive(Clone, Debug)]
pub(crate) struct Calendar {
    nodes: Vec<Node>,
    /// First live slot and its start.
    head: u32,
    head_start: u64,
    /// Free nodes (a stack: no load of a cold node to pop one).
    free: Vec<u32>,
    /// Whether any slot may be displaceable (owner > 0); if not, merging never checks owners.
    movable: bool,
    /// The floor of the last pruning.
    pruned_at: u64,
    /// Per die of the channel: a node whose start is at or before its last transfer's
    /// start, or NIL (search from the head); then NIL up to a multiple of `LANES`.
    cursor: Vec<u32>,
    /// Per die: its last transfer's start. The cursor's node holds that instant (a
    /// merge or a gap fill only widens a node; a node released by a merge hands its
    /// cursors to the node it merged into) unless `take_overlapping` moved the cursor,
    /// and in every case bounds the node's start from above.
    cursor_at: Vec<u64>,
}

impl Calendar {
    /// A calendar for `dies` dies; `movable`: displaceable GC slots may be booked.
    pub fn new(dies: usize, movable: bool) -> Self {
        Calendar {
            nodes: Vec::new(),
            head: NIL,
            head_start: u64::MAX,
            free: Vec::new(),
            movable,
            pruned_at: 0,
            cursor: vec![NIL; dies.next_multiple_of(LANES)],
            cursor_at: vec![0; dies.next_multiple_of(LANES)],
        }
    }

    /// Live node `i` (never NIL), without a bounds check: ≈ 28 instructions per GC pair
    /// went to them (docs/performance.md, "s10-timed").
    #[inline(always)]
    fn node(&self, i: u32) -> &Node {
        debug_assert!((i as usize) < self.nodes.len(), "node {i} of {}", self.nodes.len());
        // SAFETY: in bounds. Every index handed to `node`/`node_mut` is NIL-tested
        // first by its caller, and every non-NIL index the calendar holds (`head`, a
        // node's `next`, a cursor, an entry of `free`) is one that `alloc` returned,
        // below `nodes.len()` then; `nodes` never shrinks (nothing truncates, removes
        // from or clears it), so the index is below `nodes.len()` now. Debug builds
        // check the bound above, in every calendar test and the timed golden configs.
        unsafe { self.nodes.get_unchecked(i as usize) }
    }

    /// [`Calendar::node`], mutable.
    #[inline(always)]
    fn node_mut(&mut self, i: u32) -> &mut Node {
        debug_assert!((i as usize) < self.nodes.len(), "node {i} of {}", self.nodes.len());
        // SAFETY: as in `node`.
        unsafe { self.nodes.get_unchecked_mut(i as usize) }
    }

    /// The node after `prev` (the head after NIL) and its start.
    #[inline(always)]
    fn after(&self, prev: u32) -> (u32, u64) {
        match prev {
            NIL => (self.head, self.head_start),
            p => (self.node(p).next, self.node(p).next_start),
        }
    }

    /// Make `i` (start `start`) follow `prev` (NIL: the head).
    #[inline(always)]
    fn link(&mut self, prev: u32, i: u32, start: u64) {
        match prev {
            NIL => (self.head, self.head_start) = (i, start),
            p => {
                self.node_mut(p).next = i;
                self.node_mut(p).next_start = start;
            }
        }
    }

    /// Free node `i`; cursors on it move to `instead` (a node before it, or NIL).
    #[inline(always)]
    fn release(&mut self, i: u32, instead: u32) {
        // A select, not a branch: which die's cursor sits on `i` is unpredictable. In
        // fixed groups of `LANES` (the padding holds NIL, never a node), so the compiler
        // compares a group at once.
        for group in self.cursor.chunks_exact_mut(LANES) {
            group.iter_mut().for_each(|c| *c = if *c == i { instead } else { *c });
        }
        self.free.push(i);
    }

    fn alloc(&mut self, node: Node) -> u32 {
        match self.free.pop() {
            Some(i) => {
                *self.node_mut(i) = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Forget slots that end at or before `floor`.
    #[inline]
    pub fn prune(&mut self, floor: u64) {
        if floor == self.pruned_at {
            return;
        }
        self.pruned_at = floor;
        while self.head != NIL && self.node(self.head).end <= floor {
            let h = *self.node(self.head);
            let old = self.head;
            (self.head, self.head_start) = (h.next, h.next_start);
            self.release(old, NIL);
        }
    }

    /// Where a search for die `who` at `t` starts: the node before the first one to
    /// look at (NIL: none), and the earliest start after it.
    ///
    /// Any live node that starts at or before `t` gives the same search result as the
    /// head: the walk from the head passes it with the same state (the nodes before it
    /// end at or before its start, so at or before `t`). The die's cursor is usually the
    /// last such node; when it is not (its die was idle while other dies booked ahead: a
    /// DFTL map read walked hundreds of nodes), under `fifo` the latest of the
    /// channel's cursors known to start at or before `t` is used instead. Not under
    /// `host-first`: another die's cursor may sit on a displaceable slot, which a
    /// search may treat as free.
    #[inline(always)]
    fn start(&self, t: u64, who: usize) -> (u32, u64) {
        let c = self.cursor[who];
        let own = c != NIL && self.node(c).start <= t;
        if own && (self.movable || self.node(c).next_start > t) {
            return (c, t.max(self.node(c).end));
        }
        if !self.movable {
            let best = self.latest_cursor(t);
            // The own cursor's node may start at or before `t` although its last
            // transfer started after it; then it is after every cursor found.
            let best = if !own || self.cursor_at[who] <= t { best } else { c };
            if best != NIL {
                return (best, t.max(self.node(best).end));
            }
        }
        match own {
            true => (c, t.max(self.node(c).end)),
            false => (NIL, t),
        }
    }

    /// The cursor whose die's last transfer started latest at or before `t` (NIL: none).
    /// Its node starts at or before `t`; a later last transfer lies in a later node
    /// (both nodes hold their instants, and nodes do not overlap).
    #[cold]
    fn latest_cursor(&self, t: u64) -> u32 {
        let (mut best, mut best_at) = (NIL, 0);
        for (&c, &at) in self.cursor.iter().zip(&self.cursor_at) {
            if c != NIL && at <= t && at >= best_at {
                (best, best_at) = (c, at);
            }
        }
        best
    }

    /// Earliest start `>= ready` of a free interval of `len` for die `who`, treating
    /// slots for which `ignore` holds as free; and the nodes before and after it.
    #[inline(always)]
    pub fn earliest(&self, ready: u64, len: u64, who: usize, ignore: impl Fn(&Slot) -> bool) -> (u64, u32, u32) {
        let (mut prev, mut at) = self.start(ready, who);
        loop {
            let (cur, cur_start) = self.after(prev);
            if cur == NIL || at + len <= cur_start {
                return (at, prev, cur);
            }
            let n = self.node(cur);
            if !ignore(&n.slot()) {
                at = at.max(n.end);
            }
            prev = cur;
        }
    }

    /// Book for die `who` the earliest free interval of `len` at or after `ready`;
    /// returns its start. A fixed booking (`owner` 0) merges with fixed neighbours it
    /// leaves a gap shorter than `len` to.
    #[inline(always)]
    pub fn book(&mut self, ready: u64, len: u64, owner: u32, who: usize) -> u64 {
        let (start, prev, next) = self.earliest(ready, len, who, |_| false);
        self.place(start, start + len, len, owner, who, prev, next);
        start
    }

    /// Book two transfers of `len` for die `who`: the first in the earliest free slot at
    /// or after `ready`, the second in the earliest at or after the first ends (a GC
    /// migration's read out and program in). Returns both starts. The same as two
    /// [`Calendar::book`] calls, in one search when the second fits right behind.
    #[inline(always)]
    pub fn book_pair(&mut self, ready: u64, len: u64, who: usize) -> (u64, u64) {
        let c = self.cursor[who];
        if c != NIL && self.node(c).next == NIL && self.node(c).end <= ready {
            return self.append_pair(c, ready, len, who);
        }
        let (start, prev, next) = self.earliest(ready, len, who, |_| false);
        if next == NIL || self.after(prev).1 >= start + 2 * len {
            self.place(start, start + 2 * len, len, 0, who, prev, next);
            return (start, start + len);
        }
        self.place(start, start + len, len, 0, who, prev, next);
        (start, self.book(start + len, len, 0, who))
    }

    /// [`Calendar::book_pair`] where die `who`'s cursor `c` is the last slot and ends at
    /// or before `start`: the general path's search starts at `c` (it starts at or
    /// before `start` and nothing follows it), finds `start` free with no slot after it,
    /// and places both transfers there, merged into `c` if they leave it a gap shorter
    /// than `len`, else as a new last slot. The same steps without the search and the
    /// next-slot tests: half of a GC run's pairs on an overloaded device land so.
    #[inline(always)]
    fn append_pair(&mut self, c: u32, start: u64, len: u64, who: usize) -> (u64, u64) {
        let end = start + 2 * len;
        let p = *self.node(c);
        let at = if start - p.end < len && (!self.movable || p.owner == 0) {
            self.node_mut(c).end = end;
            c
        } else {
            let i = self.alloc(Node { start, end, next_start: p.next_start, owner: 0, next: NIL });
            self.link(c, i, start);
            i
        };
        self.cursor[who] = at;
        self.cursor_at[who] = start;
        (start, start + len)
    }

    /// Book `[start, end)` between `prev` and `next` (from [`Calendar::earliest`]),
    /// merging as [`Calendar::book`] describes.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn place(&mut self, start: u64, end: u64, len: u64, owner: u32, who: usize, prev: u32, next: u32) {
        let fixed = |s: &Slot| !self.movable || s.owner == 0;
        let merge_prev = owner == 0 && prev != NIL && {
            let p = self.node(prev).slot();
            start - p.end < len && fixed(&p)
        };
        let next_start = self.after(prev).1;
        let merge_next = owner == 0 && next != NIL && next_start - end < len && fixed(&self.node(next).slot());
        // (the node now holding the booking, the node after it if known)
        let (at, after) = match (merge_prev, merge_next) {
            (true, true) => {
                let n = *self.node(next);
                let p = self.node_mut(prev);
                (p.end, p.next, p.next_start) = (n.end, n.next, n.next_start);
                self.release(next, prev);
                (prev, n.next)
            }
            (true, false) => {
                self.node_mut(prev).end = end;
                (prev, next)
            }
            (false, true) => {
                self.node_mut(next).start = start;
                self.link(prev, next, start);
                (next, NIL)
            }
            (false, false) => {
                let i = self.alloc(Node { start, end, next_start, owner, next });
                self.link(prev, i, start);
                (i, next)
            }
        };
        self.cursor[who] = at;
        self.cursor_at[who] = start;
        // The die's next transfer (the next migration of a GC run, ready a program
        // time later) usually lands in the gap after this slot and merges with the
        // slot after it: start loading that node now (a hint: no effect on results).
        self.prefetch(after);
    }

    /// Ask the CPU to bring node `i`'s cache line in (none for NIL).
    #[inline(always)]
    fn prefetch(&self, i: u32) {
        let Some(n) = self.nodes.get(i as usize) else { return };
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint with no architectural effect (it cannot fault);
        // the address comes from a valid reference. Runs in every booking, hence in
        // every calendar test below.
        unsafe {
            std::arch::x86_64::_mm_prefetch(n as *const Node as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = n;
    }

    /// Die `who` (slots owned by `id`) books its next transfer: the slot of its last
    /// one can no longer be displaced, so it becomes fixed and merges with a fixed
    /// successor it leaves a gap shorter than `len` to.
    pub fn fix_cursor(&mut self, who: usize, id: u32, len: u64) {
        let c = self.cursor[who];
        if c == NIL || self.node(c).owner != id {
            return;
        }
        self.node_mut(c).owner = 0;
        let n = *self.node(c);
        if n.next != NIL && n.next_start - n.end < len && self.node(n.next).owner == 0 {
            let m = *self.node(n.next);
            let p = self.node_mut(c);
            (p.end, p.next, p.next_start) = (m.end, m.next, m.next_start);
            self.release(n.next, c);
        }
    }

    /// Remove and return the slots overlapping `[from, to)` (all must be ignorable by
    /// the caller), searching from die `who`'s cursor.
    pub fn take_overlapping(&mut self, from: u64, to: u64, who: usize, out: &mut Vec<Slot>) {
        let (mut prev, _) = self.start(from, who);
        if prev != NIL && self.node(prev).end > from {
            prev = NIL;
        }
        loop {
            let (cur, cur_start) = self.after(prev);
            if cur == NIL || cur_start >= to {
                return;
            }
            let n = *self.node(cur);
            if n.end > from {
                out.push(n.slot());
                self.link(prev, n.next, n.next_start);
                self.release(cur, prev);
            } else {
                prev = cur;
            }
        }
    }

    /// First instant at or after `t` at which the bus is not transferring (searching
    /// from die `who`'s cursor).
    pub fn idle_at(&self, t: u64, who: usize) -> u64 {
        let (mut prev, mut at) = self.start(t, who);
        loop {
            let (cur, cur_start) = self.after(prev);
            if cur == NIL || cur_start > at {
                return at;
            }
            at = at.max(self.node(cur).end);
            prev = cur;
        }
    }

    /// Slots held (live nodes).
    pub fn len(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// Live slots in order (for invariant checks in tests).
    #[cfg(test)]
    pub fn live(&self) -> Vec<Slot> {
        let (mut out, mut cur) = (Vec::new(), self.head);
        while cur != NIL {
            out.push(self.node(cur).slot());
            cur = self.node(cur).next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn books_earliest_gap_backfills_and_merges_dead_gaps() {
        let mut c = Calendar::new(1, true);
        assert_eq!(c.book(100, 10, 0, 0), 100);
        assert_eq!(c.book(100, 10, 0, 0), 110);
        assert_eq!(c.book(200, 10, 0, 0), 200);
        // The gap [120, 200) is back-filled by a transfer ready at 115.
        assert_eq!(c.book(115, 10, 0, 0), 120);
        // Ready at 50, before everything booked: it goes first.
        assert_eq!(c.book(50, 10, 0, 0), 50);
        // Leaves [135, 145) free: too short for a transfer, so merged.
        assert_eq!(c.book(145, 10, 0, 0), 145);
        let spans: Vec<(u64, u64)> = c.live().iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(spans, vec![(50, 60), (100, 130), (145, 155), (200, 210)]);
        assert_eq!(c.book(125, 10, 0, 0), 130);
        let spans: Vec<(u64, u64)> = c.live().iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(spans, vec![(50, 60), (100, 155), (200, 210)], "[130, 140) joined both neighbours");
        assert_eq!(c.idle_at(100, 0), 155);
        assert_eq!(c.idle_at(60, 0), 60);
        c.prune(125);
        assert_eq!(c.live().len(), 2, "[100, 155) still ends after the floor");
        assert_eq!(c.book(125, 10, 0, 0), 155);
    }

    #[test]
    fn ignored_slots_are_free_and_can_be_taken_out() {
        let mut c = Calendar::new(1, true);
        c.book(100, 10, 3, 0);
        c.book(110, 10, 0, 0);
        let (at, _, _) = c.earliest(95, 10, 0, |s| s.owner == 3);
        assert_eq!(at, 95, "ignoring the GC slot at 100, the host slot fits before 110");
        let mut out = Vec::new();
        c.take_overlapping(95, 105, 0, &mut out);
        assert_eq!(out, vec![Slot { start: 100, end: 110, owner: 3 }]);
        assert_eq!(c.book(95, 10, 0, 0), 95);
        assert_eq!(c.book(100, 10, 3, 0), 120);
    }

    #[test]
    fn a_pair_books_like_two_single_bookings() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut a, mut b) = (Calendar::new(2, false), Calendar::new(2, false));
        for n in 0..3000 {
            let (ready, who) = (rnd(30_000), n % 2);
            if rnd(2) == 0 {
                assert_eq!(a.book(ready, 7, 0, who), b.book(ready, 7, 0, who));
            } else {
                let first = b.book(ready, 7, 0, who);
                let pair = (first, b.book(first + 7, 7, 0, who));
                assert_eq!(a.book_pair(ready, 7, who), pair);
            }
        }
        assert_eq!(a.live(), b.live());
    }

    /// GC runs as `Timeline::book_migration_run` books them: per die a run of pairs,
    /// each ready a fixed time after the previous pair's second transfer ends (shorter
    /// or longer than a transfer, so appended pairs both merge with the last slot and
    /// open new ones), runs of different dies interleaved and often landing behind
    /// everything booked ([`Calendar::append_pair`]) or in the gap behind their die's
    /// last slot, single bookings and pruning in between: booked by pairs and by single
    /// bookings, every start and every slot agree.
    #[test]
    fn runs_of_pairs_book_like_single_bookings() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (dies, len) = (4, 10);
        let (mut a, mut b) = (Calendar::new(dies, false), Calendar::new(dies, false));
        let mut free = vec![0u64; dies];
        let (mut appended, mut filled) = (0, 0);
        for _ in 0..2000 {
            let who = rnd(dies as u64) as usize;
            if rnd(4) == 0 {
                let ready = free[who] + rnd(100);
                assert_eq!(a.book(ready, len, 0, who), b.book(ready, len, 0, who));
                continue;
            }
            let gap = [3, 9, 10, 25, 40][rnd(5) as usize];
            let mut ready = free[who] + rnd(60);
            for _ in 0..1 + rnd(12) {
                if a.cursor[who] != NIL {
                    let n = *a.node(a.cursor[who]);
                    let behind = n.end <= ready && ready + 2 * len <= n.next_start;
                    appended += (behind && n.next == NIL) as u32;
                    filled += (behind && n.next != NIL) as u32;
                }
                let first = b.book(ready, len, 0, who);
                let pair = (first, b.book(first + len, len, 0, who));
                assert_eq!(a.book_pair(ready, len, who), pair);
                free[who] = pair.1 + len;
                ready = free[who] + gap;
            }
            assert_eq!(a.live(), b.live());
            let floor = *free.iter().min().unwrap();
            a.prune(floor);
            b.prune(floor);
        }
        assert!(appended > 1000, "only {appended} pairs appended behind everything");
        assert!(filled > 300, "only {filled} pairs fitted in the gap after their die's slot");
    }

    /// Model check against a brute-force oracle: random bookings of one length never
    /// overlap, each starts at the earliest instant >= ready at which it fits, and the
    /// calendar's gaps after the floor are the oracle's free stretches of at least one
    /// transfer. With two dies, and with five (searches then often start from another
    /// die's cursor).
    #[test]
    fn matches_a_brute_force_oracle() {
        for dies in [2, 5] {
            matches_the_oracle(dies);
        }
    }

    /// Free stretches of at least `len` that start after `floor`, ending before `end`.
    fn oracle_gaps(busy: &[bool], floor: u64, end: u64, len: u64) -> Vec<(u64, u64)> {
        let mut gaps = Vec::new();
        let mut t = floor + 1;
        while t < end {
            if busy[t as usize] || !busy[t as usize - 1] {
                t += 1;
                continue;
            }
            let stop = (t..end).find(|&u| busy[u as usize]).unwrap_or(end);
            if stop < end && stop - t >= len {
                gaps.push((t, stop));
            }
            t = stop;
        }
        gaps
    }

    /// The calendar's gaps between slots that start after `floor`.
    fn calendar_gaps(c: &Calendar, floor: u64) -> Vec<(u64, u64)> {
        let live = c.live();
        let gaps = live.windows(2).map(|w| (w[0].end, w[1].start)).filter(|g| g.0 != g.1);
        gaps.filter(|g| g.0 > floor).collect()
    }

    fn matches_the_oracle(dies: usize) {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut c = Calendar::new(dies, false);
        let mut busy = vec![false; 120_000];
        let (mut floor, mut most) = (0, 0);
        let len = 7;
        let earliest = |busy: &mut [bool], ready: u64| {
            let want = (ready..).find(|&s| (s..s + len).all(|t| !busy[t as usize])).unwrap();
            (want..want + len).for_each(|t| busy[t as usize] = true);
            want
        };
        for n in 0..8000 {
            // Bookings are never ready before the floor.
            let ready = floor + rnd(15_000);
            let who = n % dies;
            if rnd(3) == 0 {
                // A pair: the second transfer ready when the first ends.
                let first = earliest(&mut busy, ready);
                let pair = (first, earliest(&mut busy, first + len));
                assert_eq!(c.book_pair(ready, len, who), pair);
            } else {
                assert_eq!(c.book(ready, len, 0, who), earliest(&mut busy, ready));
            }
            if n % 500 == 499 {
                floor += rnd(3000);
                c.prune(floor);
            }
            if n % 100 == 0 {
                let end = c.live().last().map_or(0, |s| s.end);
                assert_eq!(calendar_gaps(&c, floor), oracle_gaps(&busy, floor, end, len), "after booking {n}");
            }
            most = most.max(c.len());
        }
        // Freed nodes are reused: the arena holds no more nodes than were ever live at once.
        assert!(c.nodes.len() <= most + 1, "{} nodes, {most} live", c.nodes.len());
    }
}
