//! Flat sets for [`crate::lprops::LpTable`]: the empty LEBs as a bitmap and
//! the GC candidates as a max tournament tree over LEB numbers. They answer
//! what the ordered sets they replace answered (empty LEBs in increasing
//! number; candidates by most free + dirty space, ties lowest number first)
//! with no allocation per change: nearly every obsoleted node changes its
//! LEB's GC key, so this is on every write's path. (UBIFS keeps dirty-LEB
//! heaps for the same purpose, `ubifs_lpt_heap` in fs/ubifs/lprops.c.)

use std::collections::BinaryHeap;

/// A set of LEB numbers, iterated in increasing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LebBits {
    words: Vec<u64>,
}

impl LebBits {
    pub fn new(lebs: u32) -> LebBits {
        LebBits { words: vec![0; lebs.div_ceil(64) as usize] }
    }

    pub fn set(&mut self, l: u32, on: bool) {
        let (w, b) = ((l / 64) as usize, l % 64);
        if on {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }

    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, w)| {
            let mut w = *w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    i as u32 * 64 + b
                })
            })
        })
    }
}

/// GC keys by LEB: leaf `l` holds `(reclaim << 32) | (u32::MAX - l)` or 0
/// (not a candidate); every inner node holds the larger of its children, so
/// the root is the best candidate. A key is never 0: `u32::MAX - l > 0`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcTree {
    /// Leaves from `size` on.
    t: Vec<u64>,
    size: usize,
}

impl GcTree {
    pub fn new(lebs: u32) -> GcTree {
        let size = (lebs as usize).next_power_of_two().max(1);
        GcTree { t: vec![0; 2 * size], size }
    }

    fn key(reclaim: u32, l: u32) -> u64 {
        ((reclaim as u64) << 32) | (u32::MAX - l) as u64
    }

    /// Sets LEB `l`'s key (None: not a candidate).
    pub fn set(&mut self, l: u32, reclaim: Option<u32>) {
        let mut i = self.size + l as usize;
        let k = reclaim.map_or(0, |r| Self::key(r, l));
        if self.t[i] == k {
            return;
        }
        self.t[i] = k;
        while i > 1 {
            i /= 2;
            let m = self.t[2 * i].max(self.t[2 * i + 1]);
            if self.t[i] == m {
                break;
            }
            self.t[i] = m;
        }
    }

    pub fn clear(&mut self) {
        self.t.fill(0);
    }

    /// Candidates in decreasing key order (best-first over the tree).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut heap = BinaryHeap::new();
        if self.t.get(1).is_some_and(|k| *k != 0) {
            heap.push((self.t[1], 1usize));
        }
        std::iter::from_fn(move || loop {
            let (k, i) = heap.pop()?;
            if i >= self.size {
                return Some(u32::MAX - k as u32);
            }
            for c in [2 * i, 2 * i + 1] {
                if self.t[c] != 0 {
                    heap.push((self.t[c], c));
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BTreeSet;

    proptest! {
        /// Both sets against the ordered sets they replace.
        #[test]
        fn flat_sets_match_ordered_sets(lebs in 1u32..200, ops in proptest::collection::vec((0u32..200, 0u32..6, any::<bool>()), 0..300)) {
            let (mut bits, mut tree) = (LebBits::new(lebs), GcTree::new(lebs));
            let mut es = BTreeSet::new();
            let mut gs: BTreeSet<(u32, Reverse<u32>)> = BTreeSet::new();
            let mut keys = vec![None; lebs as usize];
            for (l, r, on) in ops {
                let l = l % lebs;
                bits.set(l, on);
                if on { es.insert(l); } else { es.remove(&l); }
                let k = on.then_some(r * 100);
                if let Some(old) = keys[l as usize] { gs.remove(&(old, Reverse(l))); }
                if let Some(k) = k { gs.insert((k, Reverse(l))); }
                keys[l as usize] = k;
                tree.set(l, k);
                prop_assert_eq!(bits.iter().collect::<Vec<_>>(), es.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(tree.iter().collect::<Vec<_>>(), gs.iter().rev().map(|(_, Reverse(l))| *l).collect::<Vec<_>>());
            }
        }
    }
}
