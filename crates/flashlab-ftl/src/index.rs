//! Per-plane indexes of closed (GC-candidate) blocks: a dense candidate list
//! (O(1) insert/remove, uniform sampling), valid-count buckets for greedy, and a
//! FIFO queue for oldest-first. All arrays are flat and indexed by block id.
//!
//! A block's list position and greedy bucket links share one 16-byte entry, so an
//! invalidation that moves a block between buckets touches one cache line for it
//! (not four): with millions of blocks (`scale-4tib`) each line is a DRAM miss.

use flashlab_nand::Table;
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

/// The fields of a block's [`ClosedIndex`] entry: position in its plane's list (or
/// NIL), next and previous block in its greedy bucket, and the valid count it is
/// filed under.
const POS: usize = 0;
const NEXT: usize = 1;
const PREV: usize = 2;
const FILED: usize = 3;

#[derive(Clone, Debug)]
pub(crate) struct ClosedIndex {
    ppb: u32,
    /// Per block: `[POS, NEXT, PREV, FILED]` (the bucket fields unused without buckets).
    entry: Table<[u32; 4]>,
    pub(crate) lists: Vec<Vec<u32>>,
    buckets: Option<Buckets>,
    fifo: Option<Fifo>,
}

#[derive(Clone, Debug)]
struct Buckets {
    /// head[plane * (ppb + 1) + valid]
    head: Vec<u32>,
    /// Per plane: every bucket below `low[plane]` is empty (ppb + 1 when all are), so
    /// the fewest-valid search starts there instead of at 0: a greedy victim of a
    /// device at WAF 4.8 has ~51 of 64 pages valid, and the scan from 0 cost ~390
    /// instructions per GC run (callgrind, s7-core). Lowered by `link`, raised past
    /// empty buckets when a block is removed.
    low: Vec<u32>,
}

#[derive(Clone, Debug)]
struct Fifo {
    queues: Vec<VecDeque<(u32, u32)>>,
    stamp: Table<u32>,
    next_stamp: u32,
}

impl ClosedIndex {
    pub(crate) fn new(planes: u32, blocks_per_plane: u32, ppb: u32, buckets: bool, fifo: bool) -> Self {
        let blocks = (planes * blocks_per_plane) as usize;
        ClosedIndex {
            ppb,
            entry: Table::new([NIL, NIL, NIL, 0], blocks),
            lists: (0..planes).map(|_| Vec::with_capacity(blocks_per_plane as usize)).collect(),
            buckets: buckets.then(|| Buckets {
                head: vec![NIL; planes as usize * (ppb as usize + 1)],
                low: vec![ppb + 1; planes as usize],
            }),
            fifo: fifo.then(|| Fifo {
                queues: (0..planes).map(|_| VecDeque::new()).collect(),
                stamp: Table::new(0, blocks),
                next_stamp: 0,
            }),
        }
    }

    pub(crate) fn contains(&self, block: u32) -> bool {
        self.entry[block as usize][POS] != NIL
    }

    pub(crate) fn insert(&mut self, plane: u32, block: u32, valid: u32) {
        let list = &mut self.lists[plane as usize];
        self.entry[block as usize][POS] = list.len() as u32;
        list.push(block);
        if let Some(bk) = &mut self.buckets {
            bk.link(&mut self.entry, plane, block, valid, self.ppb);
        }
        if let Some(f) = &mut self.fifo {
            f.next_stamp = f.next_stamp.wrapping_add(1);
            f.stamp[block as usize] = f.next_stamp;
            f.queues[plane as usize].push_back((block, f.next_stamp));
        }
    }

    pub(crate) fn remove(&mut self, plane: u32, block: u32) {
        let i = self.entry[block as usize][POS];
        debug_assert!(i != NIL, "block {block} not in the closed index");
        let list = &mut self.lists[plane as usize];
        let last = list.pop().expect("non-empty list");
        if last != block {
            list[i as usize] = last;
            self.entry[last as usize][POS] = i;
        }
        self.entry[block as usize][POS] = NIL;
        if let Some(bk) = &mut self.buckets {
            bk.unlink(&mut self.entry, plane, block, self.ppb);
            bk.settle_low(plane, self.ppb);
        }
        if let Some(f) = &mut self.fifo {
            f.stamp[block as usize] = 0;
        }
    }

    /// Hint that `block` will lose a valid page soon: prefetch its entry.
    #[inline]
    pub(crate) fn prefetch(&self, block: u32) {
        if let Some(e) = self.entry.get(block as usize) {
            crate::ftl::prefetch(e);
        }
    }

    /// Hint that `block` will move between greedy buckets soon: prefetch the entries
    /// of its bucket neighbours (read from its own entry, prefetched earlier).
    #[inline]
    pub(crate) fn prefetch_neighbours(&self, block: u32) {
        if self.buckets.is_none() {
            return;
        }
        if let Some(&[pos, next, prev, _]) = self.entry.get(block as usize) {
            if pos != NIL {
                for b in [next, prev] {
                    if let Some(e) = self.entry.get(b as usize) {
                        crate::ftl::prefetch(e);
                    }
                }
            }
        }
    }

    /// A closed block lost a valid page.
    #[inline(always)] // the host write path (`write_plain`) must keep it inlined
    pub(crate) fn on_invalidate(&mut self, plane: u32, block: u32, valid_now: u32) {
        if let Some(bk) = &mut self.buckets {
            if self.entry[block as usize][POS] != NIL {
                bk.unlink(&mut self.entry, plane, block, self.ppb);
                bk.link(&mut self.entry, plane, block, valid_now, self.ppb);
            }
        }
    }

    pub(crate) fn min_valid(&self, plane: u32) -> Option<u32> {
        let bk = self.buckets.as_ref()?;
        let base = plane as usize * (self.ppb as usize + 1);
        let low = bk.low[plane as usize] as usize;
        bk.head[base + low..base + self.ppb as usize + 1].iter().copied().find(|&b| b != NIL)
    }

    /// The plane's candidates in greedy order: fewest valid pages first, each valid
    /// count from its bucket's head (so the first is what [`Self::min_valid`] gives).
    pub(crate) fn greedy_order(&self, plane: u32, out: &mut Vec<u32>) {
        let Some(bk) = self.buckets.as_ref() else {
            out.extend_from_slice(&self.lists[plane as usize]);
            return;
        };
        let base = plane as usize * (self.ppb as usize + 1);
        for &head in &bk.head[base..base + self.ppb as usize + 1] {
            let mut b = head;
            while b != NIL {
                out.push(b);
                b = self.entry[b as usize][NEXT];
            }
        }
    }

    /// Oldest closed block, dropping stale queue entries.
    pub(crate) fn oldest(&mut self, plane: u32) -> Option<u32> {
        let f = self.fifo.as_mut()?;
        let q = &mut f.queues[plane as usize];
        while let Some(&(b, s)) = q.front() {
            if f.stamp[b as usize] == s {
                return Some(b);
            }
            q.pop_front();
        }
        None
    }

    pub(crate) fn has_buckets(&self) -> bool {
        self.buckets.is_some()
    }
    pub(crate) fn has_fifo(&self) -> bool {
        self.fifo.is_some()
    }

    /// Bucket index consistency for strict mode: each closed block is filed under `valid(b)`.
    pub(crate) fn check(&self, plane: u32, valid: impl Fn(u32) -> u32) -> Result<(), String> {
        if let Some(bk) = &self.buckets {
            let base = plane as usize * (self.ppb as usize + 1);
            let low = bk.low[plane as usize] as usize;
            if let Some(v) = bk.head[base..base + low].iter().position(|&b| b != NIL) {
                return Err(format!("greedy buckets: bucket {v} of plane {plane} is filled, below the lowest {low}"));
            }
        }
        for (i, &b) in self.lists[plane as usize].iter().enumerate() {
            if self.entry[b as usize][POS] != i as u32 {
                return Err(format!("closed index: block {b} position mismatch"));
            }
            let filed = self.entry[b as usize][FILED];
            if self.buckets.is_some() && filed != valid(b) {
                return Err(format!("greedy buckets: block {b} filed under {filed} valid, has {}", valid(b)));
            }
        }
        Ok(())
    }
}

impl Buckets {
    fn link(&mut self, entry: &mut [[u32; 4]], plane: u32, b: u32, valid: u32, ppb: u32) {
        let h = plane as usize * (ppb as usize + 1) + valid as usize;
        let low = &mut self.low[plane as usize];
        *low = (*low).min(valid);
        let old = self.head[h];
        let e = &mut entry[b as usize];
        e[PREV] = NIL;
        e[NEXT] = old;
        e[FILED] = valid;
        if old != NIL {
            entry[old as usize][PREV] = b;
        }
        self.head[h] = b;
    }

    /// Raise `low[plane]` past empty buckets (after a removal may have emptied one).
    fn settle_low(&mut self, plane: u32, ppb: u32) {
        let base = plane as usize * (ppb as usize + 1);
        let low = &mut self.low[plane as usize];
        while *low <= ppb && self.head[base + *low as usize] == NIL {
            *low += 1;
        }
    }

    fn unlink(&mut self, entry: &mut [[u32; 4]], plane: u32, b: u32, ppb: u32) {
        let [_, n, p, filed] = entry[b as usize];
        if p != NIL {
            entry[p as usize][NEXT] = n;
        } else {
            let h = plane as usize * (ppb as usize + 1) + filed as usize;
            self.head[h] = n;
        }
        if n != NIL {
            entry[n as usize][PREV] = p;
        }
    }
}
