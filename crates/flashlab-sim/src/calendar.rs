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

/// A node's `owner` when it stands for a periodic run of slots ([`periodic`]); only in
/// calendars without displaceable slots, whose owners are otherwise all 0.
const PERIODIC: u32 = u32::MAX;

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
    /// Period and slot length of every periodic node (0 until the first one).
    period: u64,
    width: u64,
    /// Slots booked as periodic runs, and periodic nodes split ([`Calendar::runs_pay`]).
    run_slots: u64,
    splits: u64,
    /// Live periodic nodes. While 0 the booking code without the periodic case runs
    /// (each entry point below selects it once per call, the run bookers once per run):
    /// its mere presence in the inlined booking path cost ≈ 9 % on saturated channels
    /// (docs/performance.md, "s11-timed").
    periodic_live: u32,
}

mod fill;
mod periodic;

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
            period: 0,
            width: 0,
            run_slots: 0,
            splits: 0,
            periodic_live: 0,
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

    /// Whether the calendar holds a periodic node: which variant of the booking code
    /// (`P` below) a caller must use.
    #[inline(always)]
    pub fn has_periodic(&self) -> bool {
        self.periodic_live != 0
    }

    /// Forget slots that end at or before `floor`.
    #[inline]
    pub fn prune(&mut self, floor: u64) {
        match self.has_periodic() {
            false => self.prune_in::<false>(floor),
            true => self.prune_periodic(floor),
        }
    }

    /// [`Calendar::prune`] with periodic nodes: out of line, so that the inlined path
    /// without them is today's code.
    #[inline(never)]
    fn prune_periodic(&mut self, floor: u64) {
        self.prune_in::<true>(floor)
    }

    /// [`Calendar::prune`]; `P`: the calendar may hold periodic nodes (if false, it
    /// must not: [`Calendar::has_periodic`]).
    #[inline(always)]
    pub fn prune_in<const P: bool>(&mut self, floor: u64) {
        debug_assert!(P || !self.has_periodic());
        if floor == self.pruned_at {
            return;
        }
        self.pruned_at = floor;
        while self.head != NIL && self.node(self.head).end <= floor {
            let h = *self.node(self.head);
            let old = self.head;
            (self.head, self.head_start) = (h.next, h.next_start);
            if P && h.owner == PERIODIC {
                self.periodic_live -= 1;
            }
            self.release(old, NIL);
        }
        if P && self.head != NIL && self.node(self.head).owner == PERIODIC && self.head_start + self.width <= floor {
            self.trim_head(floor);
        }
    }

    /// Where a search for die `who` at `t` starts: a node that starts at or before `t`
    /// (its slots then decide where the search goes on), or NIL (from the head).
    ///
    /// Any live node that starts at or before `t` gives the same search result as the
    /// head: the walk from the head reaches it with the same state (the nodes before it
    /// end at or before its start, so at or before `t`). The die's cursor is usually the
    /// last such node; when it is not (its die was idle while other dies booked ahead: a
    /// DFTL map read walked hundreds of nodes), under `fifo` the latest of the
    /// channel's cursors known to start at or before `t` is used instead. Not under
    /// `host-first`: another die's cursor may sit on a displaceable slot, which a
    /// search may treat as free.
    #[inline(always)]
    fn start(&self, t: u64, who: usize) -> u32 {
        let c = self.cursor[who];
        let own = c != NIL && self.node(c).start <= t;
        if own && (self.movable || self.node(c).next_start > t) {
            return c;
        }
        if !self.movable {
            let best = self.latest_cursor(t);
            // The own cursor's node may start at or before `t` although its last
            // transfer started after it; then it is after every cursor found.
            let best = if !own || self.cursor_at[who] <= t { best } else { c };
            if best != NIL {
                return best;
            }
        }
        match own {
            true => c,
            false => NIL,
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
    /// Only for calendars without periodic nodes (`host-first`: see [`periodic`]).
    pub fn earliest(&self, ready: u64, len: u64, who: usize, ignore: impl Fn(&Slot) -> bool) -> (u64, u32, u32) {
        debug_assert!(self.period == 0, "a search that ignores slots on a calendar with periodic nodes");
        let mut prev = self.start(ready, who);
        let mut at = match prev {
            NIL => ready,
            p => ready.max(self.node(p).end),
        };
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

    /// [`Calendar::earliest`] with no slot ignored, on any calendar: a gap inside a
    /// periodic node is made a gap between two nodes first ([`periodic`]).
    #[inline(always)]
    fn find<const P: bool>(&mut self, ready: u64, len: u64, who: usize) -> (u64, u32, u32) {
        let (mut prev, mut at) = (self.start(ready, who), ready);
        if prev != NIL {
            if let Some(found) = self.pass::<P>(prev, &mut at, len) {
                return found;
            }
        }
        loop {
            let (cur, cur_start) = self.after(prev);
            if cur == NIL || at + len <= cur_start {
                return (at, prev, cur);
            }
            if let Some(found) = self.pass::<P>(cur, &mut at, len) {
                return found;
            }
            prev = cur;
        }
    }

    /// The search, at `at`, goes over node `i`: past its end, or (a periodic node) into
    /// the first gap inside it that takes `len` at or after `at`, returned as
    /// [`Calendar::find`]'s result after splitting the node there.
    #[inline(always)]
    fn pass<const P: bool>(&mut self, i: u32, at: &mut u64, len: u64) -> Option<(u64, u32, u32)> {
        let n = self.node(i);
        if !P || n.owner != PERIODIC {
            *at = (*at).max(n.end);
            return None;
        }
        self.pass_periodic(i, at, len)
    }

    /// Book for die `who` the earliest free interval of `len` at or after `ready`;
    /// returns its start. A fixed booking (`owner` 0) merges with fixed neighbours it
    /// leaves a gap shorter than `len` to.
    #[inline(always)]
    pub fn book(&mut self, ready: u64, len: u64, owner: u32, who: usize) -> u64 {
        match self.has_periodic() {
            false => self.book_in::<false>(ready, len, owner, who),
            true => self.book_periodic(ready, len, owner, who),
        }
    }

    /// [`Calendar::prune`] to `floor`, then [`Calendar::book`] a fixed transfer (a
    /// `fifo` host or single transfer): one choice of the code for both.
    #[inline(always)]
    pub fn prune_book(&mut self, floor: u64, ready: u64, len: u64, who: usize) -> u64 {
        match self.has_periodic() {
            false => {
                self.prune_in::<false>(floor);
                self.book_in::<false>(ready, len, 0, who)
            }
            true => self.prune_book_periodic(floor, ready, len, who),
        }
    }

    /// [`Calendar::prune_book`] with periodic nodes, out of line.
    #[inline(never)]
    fn prune_book_periodic(&mut self, floor: u64, ready: u64, len: u64, who: usize) -> u64 {
        self.prune_in::<true>(floor);
        self.book_in::<true>(ready, len, 0, who)
    }

    /// [`Calendar::prune`] to `floor`, then [`Calendar::book_pair`]: one choice of the
    /// code for both.
    #[inline(always)]
    pub fn prune_book_pair(&mut self, floor: u64, ready: u64, len: u64, who: usize) -> (u64, u64) {
        match self.has_periodic() {
            false => {
                self.prune_in::<false>(floor);
                self.book_pair_in::<false>(ready, len, who)
            }
            true => self.prune_book_pair_periodic(floor, ready, len, who),
        }
    }

    /// [`Calendar::prune_book_pair`] with periodic nodes, out of line.
    #[inline(never)]
    fn prune_book_pair_periodic(&mut self, floor: u64, ready: u64, len: u64, who: usize) -> (u64, u64) {
        self.prune_in::<true>(floor);
        self.book_pair_in::<true>(ready, len, who)
    }

    /// [`Calendar::book`] with periodic nodes, out of line (as [`Calendar::prune_periodic`]).
    #[inline(never)]
    fn book_periodic(&mut self, ready: u64, len: u64, owner: u32, who: usize) -> u64 {
        self.book_in::<true>(ready, len, owner, who)
    }

    /// [`Calendar::book`]; `P` as in [`Calendar::prune_in`].
    #[inline(always)]
    pub fn book_in<const P: bool>(&mut self, ready: u64, len: u64, owner: u32, who: usize) -> u64 {
        debug_assert!(P || !self.has_periodic());
        let (start, prev, next) = self.find::<P>(ready, len, who);
        self.place::<P>(start, start + len, len, owner, who, prev, next);
        start
    }

    /// Book two transfers of `len` for die `who`: the first in the earliest free slot at
    /// or after `ready`, the second in the earliest at or after the first ends (a GC
    /// migration's read out and program in). Returns both starts. The same as two
    /// [`Calendar::book`] calls, in one search when the second fits right behind.
    /// (Tests only: the timeline prunes first, [`Calendar::prune_book_pair`].)
    #[cfg(test)]
    #[inline(always)]
    pub fn book_pair(&mut self, ready: u64, len: u64, who: usize) -> (u64, u64) {
        match self.has_periodic() {
            false => self.book_pair_in::<false>(ready, len, who),
            true => self.book_pair_periodic(ready, len, who),
        }
    }

    /// [`Calendar::book_pair`] with periodic nodes, out of line (as [`Calendar::prune_periodic`]).
    #[cfg(test)]
    #[inline(never)]
    fn book_pair_periodic(&mut self, ready: u64, len: u64, who: usize) -> (u64, u64) {
        self.book_pair_in::<true>(ready, len, who)
    }

    /// [`Calendar::book_pair`]; `P` as in [`Calendar::prune_in`].
    #[inline(always)]
    pub fn book_pair_in<const P: bool>(&mut self, ready: u64, len: u64, who: usize) -> (u64, u64) {
        debug_assert!(P || !self.has_periodic());
        let c = self.cursor[who];
        if c != NIL && self.node(c).next == NIL && self.node(c).end <= ready {
            return self.append_pair::<P>(c, ready, len, who);
        }
        let (start, prev, next) = self.find::<P>(ready, len, who);
        if next == NIL || self.after(prev).1 >= start + 2 * len {
            self.place::<P>(start, start + 2 * len, len, 0, who, prev, next);
            return (start, start + len);
        }
        self.place::<P>(start, start + len, len, 0, who, prev, next);
        // (Placing creates no periodic node: `P` still holds.)
        (start, self.book_in::<P>(start + len, len, 0, who))
    }

    /// [`Calendar::book_pair`] where die `who`'s cursor `c` is the last slot and ends at
    /// or before `start`: the general path's search starts at `c` (it starts at or
    /// before `start` and nothing follows it), finds `start` free with no slot after it,
    /// and places both transfers there, merged into `c` if they leave it a gap shorter
    /// than `len`, else as a new last slot. The same steps without the search and the
    /// next-slot tests: half of a GC run's pairs on an overloaded device land so.
    #[inline(always)]
    fn append_pair<const P: bool>(&mut self, c: u32, start: u64, len: u64, who: usize) -> (u64, u64) {
        let end = start + 2 * len;
        let p = *self.node(c);
        let at = if start - p.end < len && (!self.movable || p.owner == 0) {
            let c = if P { self.detach_last(c) } else { c };
            self.node_mut(c).end = end;
            c
        } else if P && p.owner == PERIODIC && end - p.end == self.period && 2 * len == self.width {
            // The run's next slot: the node stands for it too.
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
    fn place<const P: bool>(&mut self, start: u64, end: u64, len: u64, owner: u32, who: usize, prev: u32, next: u32) {
        // (Periodic nodes only in calendars without displaceable slots.)
        let fixed = |s: &Slot| !self.movable || s.owner == 0;
        let merge_prev = owner == 0 && prev != NIL && {
            let p = self.node(prev).slot();
            start - p.end < len && fixed(&p)
        };
        let next_start = self.after(prev).1;
        let merge_next = owner == 0 && next != NIL && next_start - end < len && fixed(&self.node(next).slot());
        // A merge widens one slot: of a periodic neighbour, its own node first.
        let prev = if P && merge_prev { self.detach_last(prev) } else { prev };
        if P && merge_next {
            self.detach_first(next);
        }
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
        debug_assert!(self.period == 0, "slots taken out of a calendar with periodic nodes");
        let mut prev = self.start(from, who);
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
        match self.has_periodic() {
            false => self.idle_at_in::<false>(t, who),
            true => self.idle_at_in::<true>(t, who),
        }
    }

    /// [`Calendar::idle_at`]; `P` as in [`Calendar::prune_in`].
    fn idle_at_in<const P: bool>(&self, t: u64, who: usize) -> u64 {
        let (mut prev, mut at) = (self.start(t, who), t);
        if prev != NIL {
            at = match self.idle_over::<P>(prev, at) {
                Ok(idle) => return idle,
                Err(at) => at,
            };
        }
        loop {
            let (cur, cur_start) = self.after(prev);
            if cur == NIL || cur_start > at {
                return at;
            }
            at = match self.idle_over::<P>(cur, at) {
                Ok(idle) => return idle,
                Err(at) => at,
            };
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
        let (mut out, mut cur, mut periodic) = (Vec::new(), self.head, 0);
        while cur != NIL {
            let n = self.node(cur);
            match n.owner {
                PERIODIC => {
                    periodic += 1;
                    let starts = (n.start..n.end).step_by(self.period as usize);
                    out.extend(starts.map(|start| Slot { start, end: start + self.width, owner: 0 }));
                }
                _ => out.push(n.slot()),
            }
            cur = n.next;
        }
        assert_eq!(periodic, self.periodic_live, "the count of live periodic nodes");
        out
    }
}

#[cfg(test)]
mod tests;
