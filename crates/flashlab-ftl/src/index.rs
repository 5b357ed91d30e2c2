//! Per-plane indexes of closed (GC-candidate) blocks: a dense candidate list
//! (O(1) insert/remove, uniform sampling), valid-count buckets for greedy, and a
//! FIFO queue for oldest-first. All arrays are flat and indexed by block id.

use flashlab_nand::Table;
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) struct ClosedIndex {
    ppb: u32,
    /// Position of each block in its plane's list, or NIL.
    pos: Table<u32>,
    pub(crate) lists: Vec<Vec<u32>>,
    buckets: Option<Buckets>,
    fifo: Option<Fifo>,
}

#[derive(Clone, Debug)]
struct Buckets {
    next: Table<u32>,
    prev: Table<u32>,
    /// head[plane * (ppb + 1) + valid]
    head: Vec<u32>,
    /// Valid count under which each block is filed.
    filed: Table<u32>,
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
            pos: Table::new(NIL, blocks),
            lists: (0..planes).map(|_| Vec::with_capacity(blocks_per_plane as usize)).collect(),
            buckets: buckets.then(|| Buckets {
                next: Table::new(NIL, blocks),
                prev: Table::new(NIL, blocks),
                head: vec![NIL; planes as usize * (ppb as usize + 1)],
                filed: Table::new(0, blocks),
            }),
            fifo: fifo.then(|| Fifo {
                queues: (0..planes).map(|_| VecDeque::new()).collect(),
                stamp: Table::new(0, blocks),
                next_stamp: 0,
            }),
        }
    }

    pub(crate) fn contains(&self, block: u32) -> bool {
        self.pos[block as usize] != NIL
    }

    pub(crate) fn insert(&mut self, plane: u32, block: u32, valid: u32) {
        let list = &mut self.lists[plane as usize];
        self.pos[block as usize] = list.len() as u32;
        list.push(block);
        if let Some(bk) = &mut self.buckets {
            bk.link(plane, block, valid, self.ppb);
        }
        if let Some(f) = &mut self.fifo {
            f.next_stamp = f.next_stamp.wrapping_add(1);
            f.stamp[block as usize] = f.next_stamp;
            f.queues[plane as usize].push_back((block, f.next_stamp));
        }
    }

    pub(crate) fn remove(&mut self, plane: u32, block: u32) {
        let i = self.pos[block as usize];
        debug_assert!(i != NIL, "block {block} not in the closed index");
        let list = &mut self.lists[plane as usize];
        let last = list.pop().expect("non-empty list");
        if last != block {
            list[i as usize] = last;
            self.pos[last as usize] = i;
        }
        self.pos[block as usize] = NIL;
        if let Some(bk) = &mut self.buckets {
            bk.unlink(plane, block, self.ppb);
        }
        if let Some(f) = &mut self.fifo {
            f.stamp[block as usize] = 0;
        }
    }

    /// Hint that `block` will lose a valid page soon: prefetch its entries.
    #[inline]
    pub(crate) fn prefetch(&self, block: u32) {
        let b = block as usize;
        if let Some(p) = self.pos.get(b) {
            crate::ftl::prefetch(p);
        }
        if let Some(bk) = &self.buckets {
            [&bk.next, &bk.prev, &bk.filed].into_iter().filter_map(|a| a.get(b)).for_each(crate::ftl::prefetch);
        }
    }

    /// A closed block lost a valid page.
    #[inline]
    pub(crate) fn on_invalidate(&mut self, plane: u32, block: u32, valid_now: u32) {
        if let Some(bk) = &mut self.buckets {
            if self.pos[block as usize] != NIL {
                bk.unlink(plane, block, self.ppb);
                bk.link(plane, block, valid_now, self.ppb);
            }
        }
    }

    pub(crate) fn min_valid(&self, plane: u32) -> Option<u32> {
        let bk = self.buckets.as_ref()?;
        let base = plane as usize * (self.ppb as usize + 1);
        bk.head[base..base + self.ppb as usize + 1].iter().copied().find(|&b| b != NIL)
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
                b = bk.next[b as usize];
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
        for (i, &b) in self.lists[plane as usize].iter().enumerate() {
            if self.pos[b as usize] != i as u32 {
                return Err(format!("closed index: block {b} position mismatch"));
            }
            if let Some(bk) = &self.buckets {
                if bk.filed[b as usize] != valid(b) {
                    return Err(format!(
                        "greedy buckets: block {b} filed under {} valid, has {}",
                        bk.filed[b as usize],
                        valid(b)
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Buckets {
    fn link(&mut self, plane: u32, b: u32, valid: u32, ppb: u32) {
        let h = plane as usize * (ppb as usize + 1) + valid as usize;
        let old = self.head[h];
        self.prev[b as usize] = NIL;
        self.next[b as usize] = old;
        if old != NIL {
            self.prev[old as usize] = b;
        }
        self.head[h] = b;
        self.filed[b as usize] = valid;
    }

    fn unlink(&mut self, plane: u32, b: u32, ppb: u32) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            let h = plane as usize * (ppb as usize + 1) + self.filed[b as usize] as usize;
            self.head[h] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }
}
