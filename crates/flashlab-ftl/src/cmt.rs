//! DFTL's cached mapping table (CMT): which logical pages' map entries sit in controller
//! RAM, in what recency order, and which are dirty (newer than their translation page on
//! flash). The entry's value itself is the data FTL's table (`PageFtl::l2p`); the CMT
//! only tracks membership, order and dirtiness.
//!
//! Replacement: segmented LRU (Karedla, Love & Wherry 1994), the policy Gupta et al.
//! (ASPLOS 2009, §3.1) name for the CMT: a new entry enters the probationary segment at
//! its most recently used end; a hit moves it to the protected segment's MRU end; when the
//! protected segment exceeds its share, its LRU entry drops back to the probationary MRU
//! end; the victim is the probationary LRU entry. The protected share is 4/5 of the
//! entries, after the C FlashSim's real:ghost split (6552:1640 entries). Plain LRU (one
//! segment) is the C++ FlashSim's and WiscSim's policy.
//!
//! Flat arrays of slots, every operation O(1). Dirtiness is a generation: an entry is
//! dirty while its stamp equals its translation page's generation, so a batch update
//! cleans every dirty entry of a page by bumping that generation (no walk over them).
//! An entry data GC made dirty (its page moved, §3.3) is marked instead by a bit beside
//! its cached bit (the word GC's split has just tested: no access to its slot); a batch
//! update clears the page's bits (entries per translation page / 64 words).

mod split;

use flashlab_nand::Table;

const NIL: u32 = u32::MAX;
const PROBATION: usize = 0;
const PROTECTED: usize = 1;

/// Logical page → translation page: a shift when the entries per translation page are a
/// power of two (4 KiB pages of 4-byte entries: 1024), a division otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageOf {
    epp: u64,
    /// log2(epp), or u32::MAX when epp is not a power of two.
    shift: u32,
}

impl PageOf {
    pub(crate) fn new(epp: u64) -> Self {
        let epp = epp.max(1);
        PageOf { epp, shift: if epp.is_power_of_two() { epp.trailing_zeros() } else { u32::MAX } }
    }
    /// The translation page holding `lpn`'s entry.
    #[inline]
    pub(crate) fn of(self, lpn: u64) -> u64 {
        if self.shift != u32::MAX {
            lpn >> self.shift
        } else {
            lpn / self.epp
        }
    }
}

/// One CMT entry, five words (20 bytes), indexed by the constants below: its logical
/// page, its recency links within its segment, its dirty generation (dirty while equal
/// to its translation page's generation; 0: clean) and its segment.
type Slot = [u32; 5];
const LPN: usize = 0;
const PREV: usize = 1;
const NEXT: usize = 2;
const DGEN: usize = 3;
const SEG: usize = 4;

/// The CMT's bits of 64 logical pages (16 bytes: four groups per cache line): cached,
/// and made dirty by data GC (a subset of the cached ones).
pub(crate) type Bits = [u64; 2];
const CACHED: usize = 0;
const GC_DIRTY: usize = 1;

/// The length to give a [`Table`] of `len` entries of `size` bytes so that it sits in
/// whole 2 MiB pages: padded to them when it spans at least half of one (the bench's
/// `slot_of`, 1.95 MB, and slots, 1.3 MB, then take one huge page each instead of
/// ≈ 480 and ≈ 320 4 KiB ones, so their random accesses stop missing the TLB; a table
/// under 2 MiB is not advised at all). Only the first `len` entries are used.
fn huge_len(len: usize, size: usize) -> usize {
    const HUGE: usize = 2 << 20;
    let bytes = len * size;
    if bytes >= HUGE / 2 {
        // Rounded up: a table a few bytes short of 2 MiB would not be advised.
        bytes.next_multiple_of(HUGE).div_ceil(size)
    } else {
        len
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Cmt {
    /// Per logical page: its slot while cached (its bit in `cached` set), else stale
    /// (NIL until first cached, then the slot it last had): an eviction leaves it, so a
    /// miss does not write the victim's random `slot_of` line (s15-dftl). Read only
    /// behind a set bit.
    slot_of: Table<u32>,
    /// Per 64 logical pages, side by side: a bit per page cached (`slot_of` holds its
    /// slot), and a bit per cached page made dirty by data GC ([`Self::split_moved`]).
    /// 1/16 of `slot_of`'s size (122 KB for 487 k pages), so the membership test of every
    /// page data GC moves is not a random miss on `slot_of`, and marking it dirty touches
    /// the same line; lent to the page FTL while it may run data GC, whose prefetch pass
    /// brings in the moved pages' words ([`Self::swap_bits`]).
    cached: Vec<Bits>,
    slots: Table<Slot>,
    /// Logical pages and entries (`slot_of` and `slots` may be longer: [`huge_len`]).
    logical: u64,
    capacity: u32,
    /// Per translation page: generation (never 0).
    page_gen: Vec<u32>,
    /// Per segment: MRU end, LRU end, entries.
    head: [u32; 2],
    tail: [u32; 2],
    len: [u32; 2],
    protected_cap: u32,
    free: Vec<u32>,
    page_of: PageOf,
}

impl Cmt {
    /// A CMT of `capacity` entries (≥ 1) over `logical_pages`, `epp` entries per translation page.
    pub(crate) fn new(logical_pages: u64, capacity: u32, epp: u32, segmented: bool) -> Self {
        let c = capacity as usize;
        let tpages = logical_pages.div_ceil(epp as u64) as usize;
        Cmt {
            slot_of: Table::new(NIL, huge_len(logical_pages as usize, 4)),
            cached: vec![[0; 2]; (logical_pages as usize).div_ceil(64)],
            slots: Table::new([NIL, NIL, NIL, 0, 0], huge_len(c, std::mem::size_of::<Slot>())),
            logical: logical_pages,
            capacity,
            page_gen: vec![1; tpages],
            head: [NIL; 2],
            tail: [NIL; 2],
            len: [0; 2],
            protected_cap: if segmented { capacity * 4 / 5 } else { 0 },
            free: (0..capacity).rev().collect(),
            page_of: PageOf::new(epp as u64),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity as usize
    }
    pub(crate) fn len(&self) -> usize {
        (self.len[0] + self.len[1]) as usize
    }
    #[inline]
    pub(crate) fn contains(&self, lpn: u64) -> bool {
        self.cached[(lpn >> 6) as usize][CACHED] & (1u64 << (lpn & 63)) != 0
    }
    /// Mark `lpn` cached, or not cached (then not GC-dirty either).
    #[inline]
    fn set_cached(&mut self, lpn: u64, on: bool) {
        let (w, bit) = (&mut self.cached[(lpn >> 6) as usize], 1u64 << (lpn & 63));
        if on {
            w[CACHED] |= bit;
        } else {
            w[CACHED] &= !bit;
            w[GC_DIRTY] &= !bit;
        }
    }
    /// Whether cached `lpn` was made dirty by data GC since its page was last cleaned.
    #[inline]
    fn gc_dirty(&self, lpn: u64) -> bool {
        self.cached[(lpn >> 6) as usize][GC_DIRTY] & (1u64 << (lpn & 63)) != 0
    }
    pub(crate) fn is_dirty(&self, lpn: u64) -> bool {
        self.contains(lpn) && self.dirty_entry(self.slot_of[lpn as usize], lpn)
    }
    pub(crate) fn is_full(&self) -> bool {
        self.free.is_empty()
    }
    #[inline]
    pub(crate) fn prefetch(&self, lpn: u64) {
        if let Some(s) = self.slot_of.get(lpn as usize) {
            crate::ftl::prefetch(s);
        }
    }

    /// Lend the bits to the page FTL's GC (`PageFtl::moved_bits`, empty while not lent),
    /// or take them back: a swap, so a second call restores them. Between the two calls
    /// no other method may be called (they all read the bits); see
    /// `DftlFtl::with_bits_lent`.
    #[inline(always)]
    pub(crate) fn swap_bits(&mut self, other: &mut Vec<Bits>) {
        std::mem::swap(&mut self.cached, other);
    }

    /// Prefetch `lpn`'s bits (cached and GC-dirty: one 16-byte pair).
    #[inline]
    pub(crate) fn prefetch_bit(&self, lpn: u64) {
        if let Some(w) = self.cached.get((lpn >> 6) as usize) {
            crate::ftl::prefetch(w);
        }
    }

    /// Prefetch the slot of cached `lpn` (after its bit and `slot_of` entry had time to
    /// arrive; an uncached page's `slot_of` is stale, so the bit decides).
    #[inline]
    pub(crate) fn prefetch_slot(&self, lpn: u64) {
        let cached = self.cached.get((lpn >> 6) as usize).is_some_and(|w| w[CACHED] >> (lpn & 63) & 1 != 0);
        if cached {
            self.prefetch_slot_lines(self.slot_of[lpn as usize]);
        }
    }

    /// Prefetch both ends of slot `s`: at 20 bytes a quarter of the slots straddle two
    /// cache lines, and a hit or an eviction reads words at both ends (the second
    /// prefetch is of the same line for the other three quarters).
    #[inline(always)]
    fn prefetch_slot_lines(&self, s: u32) {
        let slot = &self.slots[s as usize];
        crate::ftl::prefetch(&slot[LPN]);
        crate::ftl::prefetch(&slot[SEG]);
    }

    fn unlink(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        let (g, p, n) = (slot[SEG] as usize, slot[PREV], slot[NEXT]);
        if p == NIL {
            self.head[g] = n
        } else {
            self.slots[p as usize][NEXT] = n
        }
        if n == NIL {
            self.tail[g] = p
        } else {
            self.slots[n as usize][PREV] = p
        }
        self.len[g] -= 1;
    }

    fn push_mru(&mut self, s: u32, g: usize) {
        let h = self.head[g];
        let slot = &mut self.slots[s as usize];
        (slot[SEG], slot[PREV], slot[NEXT]) = (g as u32, NIL, h);
        if h == NIL {
            self.tail[g] = s
        } else {
            self.slots[h as usize][PREV] = s
        }
        self.head[g] = s;
        self.len[g] += 1;
    }

    /// A hit on cached `lpn`: promote it (segmented) or move it to the MRU end (LRU).
    /// Returns its slot (for [`Self::set_dirty_at`]).
    #[inline]
    pub(crate) fn touch(&mut self, lpn: u64) -> u32 {
        let s = self.slot_of[lpn as usize];
        let to = if self.protected_cap > 0 { PROTECTED } else { PROBATION };
        if self.head[to] == s {
            return s;
        }
        self.unlink(s);
        self.push_mru(s, to);
        if self.len[PROTECTED] > self.protected_cap {
            let lru = self.tail[PROTECTED];
            self.unlink(lru);
            self.push_mru(lru, PROBATION);
        }
        s
    }

    /// Bring in what evicting the next victim touches: its neighbour's slot and its word
    /// of the membership bitmap (not its `slot_of`, which an eviction leaves stale).
    #[inline]
    fn prefetch_next_victim(&self) {
        let t = self.tail[PROBATION];
        if t != NIL {
            let v = &self.slots[t as usize];
            if v[PREV] != NIL {
                self.prefetch_slot_lines(v[PREV]);
            }
            self.prefetch_bit(v[LPN] as u64);
        }
    }

    /// Insert `lpn` (not cached; the cache not full) at the probationary MRU end, clean,
    /// or `dirty` (the state of a clean insert followed by [`Self::set_dirty`]).
    pub(crate) fn insert(&mut self, lpn: u64, dirty: bool) {
        let s = self.free.pop().expect("CMT full: evict first");
        self.put(s, lpn, dirty);
    }

    /// [`Self::insert`] into free slot `s` (one [`Self::take_victim`] returned).
    #[inline]
    pub(crate) fn put(&mut self, s: u32, lpn: u64, dirty: bool) {
        let dgen = self.dirty_gen(lpn, dirty);
        let slot = &mut self.slots[s as usize];
        (slot[LPN], slot[DGEN]) = (lpn as u32, dgen);
        self.slot_of[lpn as usize] = s;
        self.set_cached(lpn, true);
        self.push_mru(s, PROBATION);
    }

    /// The `dgen` of a new entry of `lpn`: its page's generation when `dirty`; else 0
    /// (clean).
    #[inline]
    fn dirty_gen(&self, lpn: u64, dirty: bool) -> u32 {
        if !dirty {
            return 0;
        }
        self.page_gen[self.page_of.of(lpn) as usize]
    }

    /// Make a dirty entry that was just inserted (nothing cleaned it since, and data GC's
    /// moves are only drained after the write) clean again: undoes [`Self::insert`]'s
    /// `dirty` when the write it was made for failed.
    pub(crate) fn undo_dirty_insert(&mut self, lpn: u64) {
        let (s, t) = (self.slot_of[lpn as usize] as usize, self.page_of.of(lpn) as usize);
        debug_assert!(self.slots[s][DGEN] == self.page_gen[t] && !self.gc_dirty(lpn));
        self.slots[s][DGEN] = 0;
    }

    /// Whether the entry of cached `lpn`, in slot `s`, is dirty: its stamp is its page's
    /// generation, or data GC marked it.
    #[inline]
    fn dirty_entry(&self, s: u32, lpn: u64) -> bool {
        let d = self.slots[s as usize][DGEN];
        (d != 0 && d == self.page_gen[self.page_of.of(lpn) as usize]) || self.gc_dirty(lpn)
    }

    /// Take out the entry replacement evicts next (the cache must not be empty): the
    /// probationary LRU entry, else the protected one. Returns its logical page, whether
    /// it was dirty, and its slot, which the caller hands to [`Self::put`] (or
    /// [`Self::release`]): in a full CMT the free stack is empty, so the slot an
    /// eviction pushes is the one the next insert pops, and taking it directly leaves
    /// the same state without the stack.
    pub(crate) fn take_victim(&mut self) -> (u64, bool, u32) {
        let s = if self.tail[PROBATION] != NIL { self.tail[PROBATION] } else { self.tail[PROTECTED] };
        let lpn = self.slots[s as usize][LPN];
        let was = self.dirty_entry(s, lpn as u64);
        self.unlink(s);
        self.set_cached(lpn as u64, false);
        self.prefetch_next_victim();
        (lpn as u64, was, s)
    }

    /// Replace the entry replacement evicts next by `lpn` (not cached; the CMT full),
    /// clean or `dirty` as [`Self::insert`]: the state of [`Self::take_victim`] and
    /// [`Self::put`]. When the victim is dirty it is only taken out, and its logical page
    /// and slot returned: the caller writes it back (which cleans its translation page's
    /// entries, so the new entry must not be in yet) and then calls `put`. A clean victim
    /// at the probationary LRU end, not alone there, moves to the MRU end in one step
    /// (the segment's length stays).
    #[inline]
    pub(crate) fn replace(&mut self, lpn: u64, dirty: bool) -> Option<(u64, u32)> {
        let s = if self.tail[PROBATION] != NIL { self.tail[PROBATION] } else { self.tail[PROTECTED] };
        let [v_lpn, v_prev, _, _, v_seg] = self.slots[s as usize];
        if self.dirty_entry(s, v_lpn as u64) {
            let (l, _, s) = self.take_victim();
            return Some((l, s));
        }
        self.set_cached(v_lpn as u64, false);
        let h = self.head[PROBATION];
        if v_seg as usize == PROBATION && h != s {
            // `unlink` of the tail (its `prev` is not NIL: it is not the head) and
            // `push_mru` into the same segment.
            self.slots[v_prev as usize][NEXT] = NIL;
            self.tail[PROBATION] = v_prev;
            self.slots[h as usize][PREV] = s;
            self.head[PROBATION] = s;
            let dgen = self.dirty_gen(lpn, dirty);
            self.slots[s as usize] = [lpn as u32, NIL, h, dgen, PROBATION as u32];
            self.slot_of[lpn as usize] = s;
            self.set_cached(lpn, true);
        } else {
            self.unlink(s);
            self.put(s, lpn, dirty);
        }
        self.prefetch_next_victim();
        None
    }

    /// Return slot `s` of a [`Self::take_victim`] to the free stack (its entry dropped).
    pub(crate) fn release(&mut self, s: u32) {
        self.slots[s as usize][LPN] = NIL;
        self.free.push(s);
    }

    /// The state inserting logical pages `0..l` in order leaves in an empty CMT (each
    /// insert evicting the LRU entry when full, each entry marked dirty after its insert,
    /// no hits), with translation pages `0..cleaned` cleaned by a batch update once all
    /// their entries were in: the last `capacity` pages cached, newest at the MRU end,
    /// page `x` in slot `x % capacity` (the free stack hands out slots 0, 1, …, and an
    /// eviction frees the slot the next insert takes), and the evicted pages' stale
    /// `slot_of` entries too (the same memory as the inserts leave). Needs `capacity <= l`.
    pub(crate) fn fill_sequential(&mut self, l: u64, cleaned: u64) {
        let cap = self.capacity() as u64;
        assert!(cap <= l && self.len() == 0, "CMT: sequential fill of {l} pages into {cap} empty slots");
        let first = l - cap;
        let slot = |x: u64| (x % cap) as u32;
        let wrap = |s: u32| if s + 1 == cap as u32 { 0 } else { s + 1 };
        // The evicted pages' slots 0, 1, …, cap − 1, 0, …: an index fill per `cap`
        // pages (vectorised), not a division per page.
        for chunk in self.slot_of[..first as usize].chunks_mut(cap as usize) {
            chunk.iter_mut().zip(0..).for_each(|(e, s)| *e = s);
        }
        // The cached pages' slots go on counting from `slot(first)`: page `x` in
        // `slot(x)`, linked to `slot(x + 1)` (newer) and `slot(x − 1)` (older), without a
        // division per page (three per page cost ≈ 2 ms at 2.5 GHz: s16-dftl).
        let (mut s, mut older) = (slot(first), NIL);
        for x in first..l {
            let next_slot = wrap(s);
            let newer = if x + 1 < l { next_slot } else { NIL };
            self.slots[s as usize] = [x as u32, newer, older, 1, PROBATION as u32];
            self.slot_of[x as usize] = s;
            self.set_cached(x, true);
            (older, s) = (s, next_slot);
        }
        (self.head[PROBATION], self.tail[PROBATION], self.len[PROBATION]) = (slot(l - 1), slot(first), cap as u32);
        self.free.clear();
        for t in 0..cleaned as usize {
            // `clean_page` from generation 1 (no GC-dirty bits to clear).
            self.page_gen[t] = 2;
        }
    }

    /// Mark cached `lpn` dirty (its value changed in RAM only).
    #[inline]
    pub(crate) fn set_dirty(&mut self, lpn: u64) {
        self.set_dirty_at(self.slot_of[lpn as usize], lpn);
    }

    /// [`Self::set_dirty`] of `lpn`, cached in slot `s`: its stamp becomes its page's
    /// generation (whether or not it was dirty already).
    #[inline]
    pub(crate) fn set_dirty_at(&mut self, s: u32, lpn: u64) {
        self.slots[s as usize][DGEN] = self.page_gen[self.page_of.of(lpn) as usize];
    }

    /// Clean every dirty cached entry of translation page `t` at once: a new generation,
    /// and the page's GC-dirty bits cleared.
    pub(crate) fn clean_page(&mut self, t: u64) {
        let g = &mut self.page_gen[t as usize];
        *g = g.wrapping_add(1).max(1);
        let epp = self.page_of.epp;
        let (start, end) = (t * epp, ((t + 1) * epp).min(self.logical));
        let mut l = start;
        while l < end {
            // The pages `l..end` of `l`'s word: a mask of up to 64 bits from bit `l & 63`.
            let n = (end - l).min(64 - (l & 63));
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << (l & 63) };
            self.cached[(l >> 6) as usize][GC_DIRTY] &= !mask;
            l += n;
        }
    }

    /// Call `f` on every dirty cached entry of translation page `t` (O(entries per page)).
    pub(crate) fn each_dirty(&self, t: u64, mut f: impl FnMut(u64)) {
        let epp = self.page_of.epp;
        let start = t * epp;
        let end = (start + epp).min(self.logical);
        (start..end).filter(|&l| self.is_dirty(l)).for_each(&mut f);
    }

    /// Bytes of the tables. The bits (1/16 of `slot_of`) are left out, as DFTL's batch
    /// stamps are, and each translation page counts 8 bytes (its generation and the
    /// dirty count it had until the GC-dirty bits replaced it): `memory_bytes` is a
    /// reported result, kept as it was.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.logical as usize * 4 + self.capacity() * (std::mem::size_of::<Slot>() + 4) + self.page_gen.len() * 8
    }

    /// Check the lists, segment sizes, the lpn↔slot maps and the GC-dirty bits.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut seen = 0usize;
        for g in [PROBATION, PROTECTED] {
            let (mut s, mut prev, mut n) = (self.head[g], NIL, 0u32);
            while s != NIL {
                let l = self.slots[s as usize][LPN];
                if self.slots[s as usize][SEG] as usize != g || self.slots[s as usize][PREV] != prev {
                    return Err(format!("CMT slot {s}: broken links of segment {g}"));
                }
                if l == NIL || !self.contains(l as u64) || self.slot_of[l as usize] != s {
                    return Err(format!("CMT slot {s}: lpn {l} not cached or does not map back"));
                }
                (prev, s, n) = (s, self.slots[s as usize][NEXT], n + 1);
            }
            if self.tail[g] != prev || self.len[g] != n {
                return Err(format!("CMT segment {g}: {n} entries listed, {} counted", self.len[g]));
            }
            seen += n as usize;
        }
        if self.len[PROTECTED] > self.protected_cap {
            return Err("CMT protected segment over its share".into());
        }
        if seen + self.free.len() != self.capacity() {
            return Err(format!("CMT: {seen} entries + {} free slots != capacity", self.free.len()));
        }
        // Every listed entry's bit is set and its lpn distinct (it maps back to its own
        // slot), so equal counts mean the set bits are exactly the listed entries.
        let cached: usize = self.cached.iter().map(|w| w[CACHED].count_ones() as usize).sum();
        if cached != seen {
            return Err(format!("CMT: {cached} logical pages cached, {seen} listed"));
        }
        if let Some(i) = self.cached.iter().position(|w| w[GC_DIRTY] & !w[CACHED] != 0) {
            return Err(format!("CMT: a GC-dirty bit of an uncached page among lpns {}..", i * 64));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Cmt;
    use std::collections::{HashSet, VecDeque};

    /// Segmented LRU written the plain way (Karedla et al. 1994; Gupta et al. 2009,
    /// §3.1): two queues, MRU at the front, and the set of dirty entries.
    struct Naive {
        seg: [VecDeque<u64>; 2],
        protected_cap: usize,
        capacity: usize,
        dirty: HashSet<u64>,
        epp: u64,
    }

    impl Naive {
        fn cached(&self, l: u64) -> bool {
            self.seg.iter().any(|q| q.contains(&l))
        }
        fn touch(&mut self, l: u64) {
            let to = if self.protected_cap > 0 { 1 } else { 0 };
            for q in &mut self.seg {
                q.retain(|&x| x != l);
            }
            self.seg[to].push_front(l);
            if self.seg[1].len() > self.protected_cap {
                let lru = self.seg[1].pop_back().unwrap();
                self.seg[0].push_front(lru);
            }
        }
        /// Insert `l` (evicting first when full); returns the victim and its dirtiness.
        fn insert(&mut self, l: u64, dirty: bool) -> Option<(u64, bool)> {
            let mut out = None;
            if self.seg[0].len() + self.seg[1].len() == self.capacity {
                let v = if self.seg[0].is_empty() { self.seg[1].pop_back() } else { self.seg[0].pop_back() }.unwrap();
                out = Some((v, self.dirty.remove(&v)));
            }
            self.seg[0].push_front(l);
            if dirty {
                self.dirty.insert(l);
            }
            out
        }
        fn clean_page(&mut self, t: u64) {
            let epp = self.epp;
            self.dirty.retain(|&l| l / epp != t);
        }
    }

    /// A table of at least 1 MiB is padded to whole 2 MiB pages (never a few bytes short
    /// of one, which would not be advised); a smaller one keeps its length.
    #[test]
    fn large_tables_are_padded_to_whole_huge_pages() {
        const HUGE: usize = 2 << 20;
        for (len, size) in [(487_424, 4), (65_536, 20), (524_288, 4), (600_000, 4), (70_000, 20), (1, 20), (200_000, 4)]
        {
            let n = super::huge_len(len, size);
            assert!(n >= len);
            if len * size >= HUGE / 2 {
                assert!(
                    n * size >= (len * size).next_multiple_of(HUGE)
                        && n * size < (len * size).next_multiple_of(HUGE) + size
                );
            } else {
                assert_eq!(n, len);
            }
        }
        // Only the logical pages count: the padding changes no reported size or check.
        let c = Cmt::new(487_424, 65_536, 1024, true);
        assert_eq!(c.memory_bytes(), 487_424 * 4 + 65_536 * 24 + 476 * 8);
        c.check().unwrap();
    }

    /// Random hits, misses (inserts clean or dirty, evicting through `take_victim` and
    /// `put`, or `insert` while there is room), `set_dirty`, data GC's marks
    /// (`split_moved` of a cached page) and batch cleans: the same victims, dirtiness and
    /// order as the plain segmented LRU, and `check` holds.
    #[test]
    fn the_cmt_evicts_what_a_plain_segmented_lru_evicts() {
        for (segmented, capacity, epp) in [(true, 40, 8), (false, 40, 8), (true, 1, 4), (true, 64, 5)] {
            let logical = 300u64;
            let mut c = Cmt::new(logical, capacity, epp, segmented);
            let mut n = Naive {
                seg: [VecDeque::new(), VecDeque::new()],
                protected_cap: if segmented { capacity as usize * 4 / 5 } else { 0 },
                capacity: capacity as usize,
                dirty: HashSet::new(),
                epp: epp as u64,
            };
            let mut x = 11u64;
            let (mut stamp, mut touched, mut moved) =
                (vec![0u32; logical.div_ceil(epp as u64) as usize], Vec::new(), Vec::new());
            for step in 0..20_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let (l, op) = ((x >> 33) % (capacity as u64 * 3).min(logical), (x >> 20) % 8);
                assert_eq!(c.contains(l), n.cached(l), "step {step}");
                if op == 0 {
                    c.clean_page(l / epp as u64);
                    n.clean_page(l / epp as u64);
                } else if c.contains(l) && op == 7 {
                    assert_eq!(c.split_moved(&[l as u32], &mut stamp, step + 1, &mut touched, &mut moved), 0);
                    n.dirty.insert(l);
                } else if c.contains(l) {
                    let s = c.touch(l);
                    n.touch(l);
                    if op < 4 {
                        c.set_dirty_at(s, l);
                        n.dirty.insert(l);
                    }
                } else {
                    let dirty = op < 5;
                    let want = n.insert(l, dirty);
                    if c.is_full() && op % 2 == 0 {
                        let (v, was, s) = c.take_victim();
                        assert_eq!(Some((v, was)), want, "step {step}");
                        c.put(s, l, dirty);
                    } else if c.is_full() {
                        match c.replace(l, dirty) {
                            Some((v, s)) => {
                                assert_eq!(Some((v, true)), want, "step {step}");
                                c.put(s, l, dirty);
                            }
                            None => assert!(matches!(want, Some((_, false))), "step {step}"),
                        }
                    } else {
                        assert_eq!(want, None);
                        c.insert(l, dirty);
                    }
                }
                for l in 0..logical {
                    assert_eq!(c.is_dirty(l), n.dirty.contains(&l), "step {step}: lpn {l}");
                }
                c.check().unwrap();
            }
            // The order too: evicting everything yields the plain LRU's order.
            while c.len() > 0 {
                let (v, was, s) = c.take_victim();
                c.release(s);
                let w = if n.seg[0].is_empty() { n.seg[1].pop_back() } else { n.seg[0].pop_back() }.unwrap();
                assert_eq!((v, was), (w, n.dirty.remove(&w)));
            }
            c.check().unwrap();
        }
    }
}
