//! One file's cached pages by page index (its `address_space`'s xarray in
//! Linux): the frame of each cached page and whether it is dirty, in leaves
//! of 64 consecutive indices with a present and a dirty bitmap each. A
//! directory indexed by leaf number finds the leaf of an index below
//! [`NEAR_GROUPS`] × 64 pages (4 GiB into a file); leaves further out sit in
//! an ordered map. Lookups and updates cost an array access or two, and the
//! dirty pages come out in index order from the bitmaps (writeback's order),
//! without the per-page tree nodes of the ordered sets this replaced.

use std::collections::BTreeMap;

/// Pages per leaf (bits of a bitmap word).
const LEAF: u64 = 64;
/// Leaves the directory covers: 4 bytes of directory per 64 pages, at most
/// 64 KiB (and a scan of that in writeback) for a file written at 4 GiB.
const NEAR_GROUPS: u64 = 1 << 14;
const NIL: u32 = u32::MAX;

#[derive(Clone)]
struct Leaf {
    frame: [u32; LEAF as usize],
    present: u64,
    dirty: u64,
}

impl Leaf {
    const EMPTY: Leaf = Leaf { frame: [0; LEAF as usize], present: 0, dirty: 0 };
}

/// Cached pages of one file: index → (frame, dirty).
#[derive(Clone, Default)]
pub(crate) struct FileMap {
    /// Leaf (index into `leaves`) of each group of 64 indices below `NEAR_GROUPS`.
    near: Vec<u32>,
    /// Leaf of each group at or beyond `NEAR_GROUPS`.
    far: BTreeMap<u64, u32>,
    leaves: Vec<Leaf>,
    /// Leaves emptied, for reuse.
    spare: Vec<u32>,
    pages: u64,
    dirty: u64,
}

impl std::fmt::Debug for FileMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileMap {{ pages: {}, dirty: {} }}", self.pages, self.dirty)
    }
}

impl FileMap {
    fn leaf_of(&self, group: u64) -> Option<u32> {
        if group < NEAR_GROUPS {
            self.near.get(group as usize).copied().filter(|&l| l != NIL)
        } else {
            self.far.get(&group).copied()
        }
    }

    /// The leaf of `group`, made if missing.
    fn leaf_for(&mut self, group: u64) -> u32 {
        if let Some(l) = self.leaf_of(group) {
            return l;
        }
        let l = match self.spare.pop() {
            Some(l) => l,
            None => {
                self.leaves.push(Leaf::EMPTY);
                (self.leaves.len() - 1) as u32
            }
        };
        if group < NEAR_GROUPS {
            let g = group as usize;
            if g >= self.near.len() {
                self.near.resize(g + 1, NIL);
            }
            self.near[g] = l;
        } else {
            self.far.insert(group, l);
        }
        l
    }

    /// (frame, dirty) of page `index`, if cached.
    #[inline]
    pub fn get(&self, index: u64) -> Option<(usize, bool)> {
        let leaf = &self.leaves[self.leaf_of(index / LEAF)? as usize];
        let bit = 1u64 << (index % LEAF);
        (leaf.present & bit != 0).then(|| (leaf.frame[(index % LEAF) as usize] as usize, leaf.dirty & bit != 0))
    }

    pub fn contains(&self, index: u64) -> bool {
        self.get(index).is_some()
    }

    /// Caches page `index`, clean, in `frame` (the page must not be cached).
    pub fn insert(&mut self, index: u64, frame: usize) {
        let l = self.leaf_for(index / LEAF) as usize;
        let leaf = &mut self.leaves[l];
        let bit = 1u64 << (index % LEAF);
        debug_assert!(leaf.present & bit == 0, "page {index} cached twice");
        leaf.present |= bit;
        leaf.dirty &= !bit;
        leaf.frame[(index % LEAF) as usize] = u32::try_from(frame).expect("frame number fits 32 bits");
        self.pages += 1;
    }

    /// Marks cached page `index` dirty or clean; true if that changed it.
    pub fn set_dirty(&mut self, index: u64, dirty: bool) -> bool {
        let Some(l) = self.leaf_of(index / LEAF) else { return false };
        let leaf = &mut self.leaves[l as usize];
        let bit = 1u64 << (index % LEAF);
        if leaf.present & bit == 0 || (leaf.dirty & bit != 0) == dirty {
            return false;
        }
        leaf.dirty ^= bit;
        if dirty {
            self.dirty += 1;
        } else {
            self.dirty -= 1;
        }
        true
    }

    /// Uncaches page `index`; its (frame, dirty) if it was cached.
    pub fn remove(&mut self, index: u64) -> Option<(usize, bool)> {
        let group = index / LEAF;
        let l = self.leaf_of(group)?;
        let leaf = &mut self.leaves[l as usize];
        let bit = 1u64 << (index % LEAF);
        if leaf.present & bit == 0 {
            return None;
        }
        let dirty = leaf.dirty & bit != 0;
        leaf.present &= !bit;
        leaf.dirty &= !bit;
        let frame = leaf.frame[(index % LEAF) as usize] as usize;
        let empty = leaf.present == 0;
        self.pages -= 1;
        self.dirty -= u64::from(dirty);
        if empty {
            if group < NEAR_GROUPS {
                self.near[group as usize] = NIL;
            } else {
                self.far.remove(&group);
            }
            self.spare.push(l);
        }
        Some((frame, dirty))
    }

    /// Dirty pages.
    pub fn dirty_count(&self) -> u64 {
        self.dirty
    }

    /// The leaves in index order: (first index, leaf).
    fn leaves_in_order(&self) -> impl Iterator<Item = (u64, &Leaf)> + '_ {
        let near = self.near.iter().enumerate().filter(|(_, &l)| l != NIL).map(|(g, &l)| (g as u64, l));
        let far = self.far.iter().map(|(&g, &l)| (g, l));
        near.chain(far).map(|(g, l)| (g * LEAF, &self.leaves[l as usize]))
    }

    /// Indices of the dirty pages, ascending, into `out` (cleared first).
    pub fn dirty_indices(&self, out: &mut Vec<u64>) {
        out.clear();
        if self.dirty == 0 {
            return;
        }
        for (first, leaf) in self.leaves_in_order() {
            push_bits(out, first, leaf.dirty);
        }
    }

    /// Indices of the cached pages at or beyond `from`, ascending.
    pub fn indices_from(&self, from: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for (first, leaf) in self.leaves_in_order() {
            if first + LEAF <= from {
                continue;
            }
            let keep = if from > first { !0u64 << (from - first) } else { !0 };
            push_bits(&mut out, first, leaf.present & keep);
        }
        out
    }
}

/// Appends `first + b` for every set bit `b` of `bits`, ascending.
fn push_bits(out: &mut Vec<u64>, first: u64, mut bits: u64) {
    while bits != 0 {
        out.push(first + u64::from(bits.trailing_zeros()));
        bits &= bits - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, usize),
        Dirty(u64, bool),
        Remove(u64),
        From(u64),
    }

    /// Indices near the start, around leaf and directory edges, and far out.
    fn index() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..300, (NEAR_GROUPS * LEAF - 70)..(NEAR_GROUPS * LEAF + 70), (1u64 << 40)..(1u64 << 40) + 200,]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (index(), 0usize..1 << 20).prop_map(|(i, f)| Op::Insert(i, f)),
            (index(), any::<bool>()).prop_map(|(i, d)| Op::Dirty(i, d)),
            index().prop_map(Op::Remove),
            index().prop_map(Op::From),
        ]
    }

    proptest! {
        /// The map against the ordered map of (frame, dirty) it stands for.
        #[test]
        fn matches_an_ordered_map(ops in proptest::collection::vec(op(), 1..300)) {
            let mut m = FileMap::default();
            let mut oracle: BTreeMap<u64, (usize, bool)> = BTreeMap::new();
            let mut out = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(i, f) => {
                        if let std::collections::btree_map::Entry::Vacant(e) = oracle.entry(i) {
                            e.insert((f, false));
                            m.insert(i, f);
                        }
                    }
                    Op::Dirty(i, d) => {
                        let changed = oracle.get_mut(&i).is_some_and(|p| std::mem::replace(&mut p.1, d) != d);
                        prop_assert_eq!(m.set_dirty(i, d), changed);
                    }
                    Op::Remove(i) => prop_assert_eq!(m.remove(i), oracle.remove(&i)),
                    Op::From(i) => {
                        prop_assert_eq!(m.indices_from(i), oracle.range(i..).map(|(k, _)| *k).collect::<Vec<_>>());
                    }
                }
                for (&i, &p) in oracle.iter().take(8) {
                    prop_assert_eq!(m.get(i), Some(p));
                }
                m.dirty_indices(&mut out);
                let dirty: Vec<u64> = oracle.iter().filter(|(_, p)| p.1).map(|(k, _)| *k).collect();
                prop_assert_eq!(&out, &dirty);
                prop_assert_eq!(m.dirty_count(), dirty.len() as u64);
                prop_assert_eq!(m.indices_from(0).len(), oracle.len());
            }
        }
    }

    #[test]
    fn missing_pages_are_absent() {
        let mut m = FileMap::default();
        assert_eq!(m.get(5), None);
        m.insert(5, 9);
        assert_eq!(m.get(5), Some((9, false)));
        assert_eq!(m.get(4), None);
        assert_eq!(m.get(1 << 50), None);
        assert!(!m.set_dirty(4, true));
        assert!(m.set_dirty(5, true));
        assert_eq!(m.remove(5), Some((9, true)));
        assert_eq!((m.dirty_count(), m.get(5)), (0, None));
    }
}
