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
//! Flat arrays of slots, every operation O(1). Each translation page keeps a list of its
//! dirty cached entries, so a batch update visits only the entries it cleans.

const NIL: u32 = u32::MAX;
const PROBATION: usize = 0;
const PROTECTED: usize = 1;

pub(crate) struct Cmt {
    /// Per logical page: its slot, or NIL when not cached.
    slot_of: Vec<u32>,
    /// Per slot: logical page, recency links within its segment, segment, dirty flag and
    /// the links of its translation page's dirty list.
    lpn: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    seg: Vec<u8>,
    dirty: Vec<bool>,
    dprev: Vec<u32>,
    dnext: Vec<u32>,
    /// Per translation page: first slot of its dirty list.
    dirty_head: Vec<u32>,
    /// Per segment: MRU end, LRU end, entries.
    head: [u32; 2],
    tail: [u32; 2],
    len: [u32; 2],
    protected_cap: u32,
    free: Vec<u32>,
    epp: u32,
}

impl Cmt {
    /// A CMT of `capacity` entries (≥ 1) over `logical_pages`, `epp` entries per translation page.
    pub(crate) fn new(logical_pages: u64, capacity: u32, epp: u32, segmented: bool) -> Self {
        let c = capacity as usize;
        let tpages = logical_pages.div_ceil(epp as u64) as usize;
        Cmt {
            slot_of: vec![NIL; logical_pages as usize],
            lpn: vec![NIL; c],
            prev: vec![NIL; c],
            next: vec![NIL; c],
            seg: vec![0; c],
            dirty: vec![false; c],
            dprev: vec![NIL; c],
            dnext: vec![NIL; c],
            dirty_head: vec![NIL; tpages],
            head: [NIL; 2],
            tail: [NIL; 2],
            len: [0; 2],
            protected_cap: if segmented { capacity * 4 / 5 } else { 0 },
            free: (0..capacity).rev().collect(),
            epp,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.lpn.len()
    }
    pub(crate) fn len(&self) -> usize {
        (self.len[0] + self.len[1]) as usize
    }
    #[inline]
    pub(crate) fn contains(&self, lpn: u64) -> bool {
        self.slot_of[lpn as usize] != NIL
    }
    pub(crate) fn is_dirty(&self, lpn: u64) -> bool {
        let s = self.slot_of[lpn as usize];
        s != NIL && self.dirty[s as usize]
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

    fn unlink(&mut self, s: u32) {
        let (g, p, n) = (self.seg[s as usize] as usize, self.prev[s as usize], self.next[s as usize]);
        if p == NIL {
            self.head[g] = n
        } else {
            self.next[p as usize] = n
        }
        if n == NIL {
            self.tail[g] = p
        } else {
            self.prev[n as usize] = p
        }
        self.len[g] -= 1;
    }

    fn push_mru(&mut self, s: u32, g: usize) {
        let h = self.head[g];
        self.seg[s as usize] = g as u8;
        self.prev[s as usize] = NIL;
        self.next[s as usize] = h;
        if h == NIL {
            self.tail[g] = s
        } else {
            self.prev[h as usize] = s
        }
        self.head[g] = s;
        self.len[g] += 1;
    }

    /// A hit on cached `lpn`: promote it (segmented) or move it to the MRU end (LRU).
    #[inline]
    pub(crate) fn touch(&mut self, lpn: u64) {
        let s = self.slot_of[lpn as usize];
        let to = if self.protected_cap > 0 { PROTECTED } else { PROBATION };
        if self.head[to] == s {
            return;
        }
        self.unlink(s);
        self.push_mru(s, to);
        if self.len[PROTECTED] > self.protected_cap {
            let lru = self.tail[PROTECTED];
            self.unlink(lru);
            self.push_mru(lru, PROBATION);
        }
    }

    /// The entry replacement would evict next (the cache must not be empty).
    pub(crate) fn victim(&self) -> u64 {
        let s = if self.tail[PROBATION] != NIL { self.tail[PROBATION] } else { self.tail[PROTECTED] };
        self.lpn[s as usize] as u64
    }

    /// Insert `lpn` (not cached; the cache not full) as a clean entry at the probationary MRU end.
    pub(crate) fn insert(&mut self, lpn: u64) {
        let s = self.free.pop().expect("CMT full: evict first");
        self.lpn[s as usize] = lpn as u32;
        self.dirty[s as usize] = false;
        self.slot_of[lpn as usize] = s;
        self.push_mru(s, PROBATION);
    }

    /// Drop cached `lpn`; returns whether it was dirty.
    pub(crate) fn remove(&mut self, lpn: u64) -> bool {
        let s = self.slot_of[lpn as usize];
        let was = self.dirty[s as usize];
        if was {
            self.clean_slot(s);
        }
        self.unlink(s);
        self.slot_of[lpn as usize] = NIL;
        self.lpn[s as usize] = NIL;
        self.free.push(s);
        was
    }

    /// Mark cached `lpn` dirty (its value changed in RAM only).
    #[inline]
    pub(crate) fn set_dirty(&mut self, lpn: u64) {
        let s = self.slot_of[lpn as usize];
        if self.dirty[s as usize] {
            return;
        }
        self.dirty[s as usize] = true;
        let t = (lpn / self.epp as u64) as usize;
        let h = self.dirty_head[t];
        self.dprev[s as usize] = NIL;
        self.dnext[s as usize] = h;
        if h != NIL {
            self.dprev[h as usize] = s;
        }
        self.dirty_head[t] = s;
    }

    fn clean_slot(&mut self, s: u32) {
        let t = (self.lpn[s as usize] / self.epp) as usize;
        let (p, n) = (self.dprev[s as usize], self.dnext[s as usize]);
        if p == NIL {
            self.dirty_head[t] = n
        } else {
            self.dnext[p as usize] = n
        }
        if n != NIL {
            self.dprev[n as usize] = p;
        }
        self.dirty[s as usize] = false;
    }

    /// Clean every dirty cached entry of translation page `t`, calling `f` on each lpn.
    pub(crate) fn clean_page(&mut self, t: u64, mut f: impl FnMut(u64)) {
        let mut s = self.dirty_head[t as usize];
        while s != NIL {
            let n = self.dnext[s as usize];
            self.dirty[s as usize] = false;
            f(self.lpn[s as usize] as u64);
            s = n;
        }
        self.dirty_head[t as usize] = NIL;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.slot_of.len() * 4 + self.capacity() * (4 * 5 + 2 + 4) + self.dirty_head.len() * 4
    }

    /// Check the lists, segment sizes, the lpn↔slot maps and the dirty lists.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut seen = 0usize;
        for g in [PROBATION, PROTECTED] {
            let (mut s, mut prev, mut n) = (self.head[g], NIL, 0u32);
            while s != NIL {
                let l = self.lpn[s as usize];
                if self.seg[s as usize] as usize != g || self.prev[s as usize] != prev {
                    return Err(format!("CMT slot {s}: broken links of segment {g}"));
                }
                if l == NIL || self.slot_of[l as usize] != s {
                    return Err(format!("CMT slot {s}: lpn {l} does not map back"));
                }
                (prev, s, n) = (s, self.next[s as usize], n + 1);
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
        let cached = self.slot_of.iter().filter(|&&s| s != NIL).count();
        if cached != seen {
            return Err(format!("CMT: {cached} logical pages cached, {seen} listed"));
        }
        let mut dirty = 0;
        for t in 0..self.dirty_head.len() {
            let (mut s, mut prev) = (self.dirty_head[t], NIL);
            while s != NIL {
                let ok = self.dirty[s as usize]
                    && self.dprev[s as usize] == prev
                    && self.lpn[s as usize] / self.epp == t as u32;
                if !ok {
                    return Err(format!("CMT: dirty list of translation page {t} broken at slot {s}"));
                }
                (prev, s, dirty) = (s, self.dnext[s as usize], dirty + 1);
            }
        }
        let flagged = (0..self.capacity()).filter(|&s| self.lpn[s] != NIL && self.dirty[s]).count();
        if flagged != dirty {
            return Err(format!("CMT: {flagged} dirty entries, {dirty} in dirty lists"));
        }
        Ok(())
    }
}
