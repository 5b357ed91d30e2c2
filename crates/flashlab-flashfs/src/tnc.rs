//! The in-memory index (UBIFS "TNC"): a B+-tree of fan-out `fanout` whose
//! level-0 branches point at leaf nodes on flash. Changing a key dirties
//! its znode and every ancestor; a commit writes the dirty znodes out of
//! place, children first (the wandering tree). Underfull znodes are not
//! merged; empty ones are removed and a one-child root is collapsed.
//! The znodes and their entries live in flat arrays (`tnc_arena.rs`).

use std::cmp::Ordering;

use crate::key::Key;
use crate::node::Loc;
use crate::tnc_arena::{Arena, SKey};
pub use crate::tnc_arena::{Br, Znode};

/// The tree.
#[derive(Debug, Clone)]
pub struct Tnc {
    a: Arena,
    root: Option<usize>,
    fanout: usize,
    /// Committed znode copies made obsolete since the last commit.
    pub pending_obsolete: Vec<Loc>,
    /// Live znodes, and the dirty ones among them.
    live: usize,
    dirty: usize,
    /// (LEB, znode) of every committed copy, for index GC.
    by_leb: crate::znode_lebs::ZnodeLebs,
}

impl Tnc {
    pub fn new(fanout: usize) -> Tnc {
        let fanout = fanout.max(3);
        Tnc {
            a: Arena::new(fanout + 1),
            root: None,
            fanout,
            pending_obsolete: Vec::new(),
            live: 0,
            dirty: 0,
            by_leb: Default::default(),
        }
    }

    /// Live znodes (as `znodes().len()`, in O(1)).
    pub fn live_count(&self) -> usize {
        self.live
    }

    /// Dirty znodes (as `dirty_postorder().len()`, in O(1): a dirty znode's
    /// ancestors are dirty too).
    pub fn dirty_count(&self) -> usize {
        self.dirty
    }

    pub fn root(&self) -> Option<usize> {
        self.root
    }

    pub fn set_root(&mut self, r: Option<usize>) {
        self.root = r;
    }

    /// Znode `i`'s header (level, dirty, location, entry count).
    pub fn node(&self, i: usize) -> &Znode {
        debug_assert!(self.a.is_live(i), "live znode");
        &self.a.hdr[i]
    }

    /// Znode `i`'s branches in key order.
    pub fn brs(&self, i: usize) -> &[Br] {
        self.a.brs(i)
    }

    /// Entry `j` of znode `i` (its key built).
    pub fn entry(&self, i: usize, j: usize) -> (Key, Br) {
        (self.a.key(i, j), self.a.br(i, j))
    }

    /// Znode `i`'s entries (keys built; for checks and tests).
    pub fn entries(&self, i: usize) -> Vec<(Key, Br)> {
        (0..self.node(i).child_cnt()).map(|j| self.entry(i, j)).collect()
    }

    /// Bytes of znode `i`'s entries' names.
    pub(crate) fn name_bytes(&self, i: usize) -> usize {
        self.a.name_bytes(i)
    }

    /// Entry `j`'s key as `Key::encode` writes it, into `out`; its length.
    pub(crate) fn encode_key(&self, i: usize, j: usize, out: &mut [u8]) -> usize {
        self.a.encode_key(i, j, out)
    }

    /// Adds a znode with `entries` (at most the fan-out; mount checks, as
    /// UBIFS's `read_znode` rejects a wider index node, fs/ubifs/tnc_misc.c).
    pub fn alloc(&mut self, level: u8, entries: &[(Key, Br)], dirty: bool, loc: Option<Loc>) -> usize {
        let i = self.alloc_empty(level, dirty, loc);
        for (k, br) in entries {
            self.a.push(i, k, *br);
        }
        i
    }

    fn alloc_empty(&mut self, level: u8, dirty: bool, loc: Option<Loc>) -> usize {
        self.live += 1;
        self.dirty += dirty as usize;
        let i = self.a.alloc(level, dirty, loc);
        if let Some(l) = loc {
            self.by_leb.insert(l.lnum, i);
        }
        i
    }

    fn release(&mut self, i: usize) {
        if let Some(z) = self.a.release(i) {
            self.live -= 1;
            self.dirty -= z.dirty as usize;
            if let Some(l) = z.loc {
                self.pending_obsolete.push(l);
                self.by_leb.remove(l.lnum, i);
            }
        }
    }

    /// Marks a znode dirty; its committed copy becomes obsolete at commit.
    pub fn touch(&mut self, i: usize) {
        let z = &mut self.a.hdr[i];
        if !z.dirty {
            z.dirty = true;
            if let Some(l) = z.loc.take() {
                self.pending_obsolete.push(l);
                self.by_leb.remove(l.lnum, i);
            }
            self.dirty += 1;
        }
    }

    /// Location of the leaf node for `key`.
    pub fn lookup(&self, key: &Key) -> Option<Loc> {
        let k = SKey::of(key);
        let mut n = self.root?;
        loop {
            if self.a.hdr[n].level == 0 {
                let i = self.a.search(n, &k).ok()?;
                return match self.a.br(n, i) {
                    Br::Leaf(l) => Some(l),
                    Br::Child(_) => None,
                };
            }
            n = self.a.child(n, self.a.child_pos(n, &k));
        }
    }

    /// [`Tnc::lookup`] for keys looked up one after another with no change to
    /// the TNC in between (the blocks of one read): `leaf` is the leaf znode
    /// the last key was looked for in (None at first). A key that leaf holds
    /// is found there without the walk from the root; else the walk runs and
    /// `leaf` becomes its leaf. The same answer as `lookup`: keys are unique
    /// in the tree, so a leaf of the unchanged tree holding the key is the
    /// one the walk reaches (proptest `tnc_cursor_test.rs`). As
    /// `ubifs_tnc_next_ent` goes on from its znode rather than from the root.
    pub fn lookup_near(&self, key: &Key, leaf: &mut Option<usize>) -> Option<Loc> {
        let k = SKey::of(key);
        if let Some(n) = leaf.filter(|&n| self.a.is_live(n) && self.a.hdr[n].level == 0) {
            if let Ok(i) = self.a.search(n, &k) {
                return match self.a.br(n, i) {
                    Br::Leaf(l) => Some(l),
                    Br::Child(_) => None,
                };
            }
        }
        let mut n = self.root?;
        while self.a.hdr[n].level > 0 {
            n = self.a.child(n, self.a.child_pos(n, &k));
        }
        *leaf = Some(n);
        let i = self.a.search(n, &k).ok()?;
        match self.a.br(n, i) {
            Br::Leaf(l) => Some(l),
            Br::Child(_) => None,
        }
    }

    /// Inserts or replaces; returns the replaced location.
    pub fn insert(&mut self, key: &Key, loc: Loc) -> Option<Loc> {
        let Some(r) = self.root else {
            self.root = Some(self.alloc(0, &[(key.clone(), Br::Leaf(loc))], true, None));
            return None;
        };
        let (old, split) = self.insert_rec(r, key, &SKey::of(key), loc);
        if let Some(right) = split {
            let level = self.node(r).level + 1;
            let root = self.alloc_empty(level, true, None);
            for c in [r, right] {
                let (p, name) = self.a.key_parts(c, 0);
                self.a.insert_at(root, self.a.hdr[root].child_cnt(), p, name, Br::Child(c));
            }
            self.root = Some(root);
        }
        old
    }

    fn insert_rec(&mut self, n: usize, key: &Key, k: &SKey, loc: Loc) -> (Option<Loc>, Option<usize>) {
        self.touch(n);
        let mut old = None;
        if self.a.hdr[n].level == 0 {
            match self.a.search(n, k) {
                Ok(i) => {
                    if let Br::Leaf(l) = self.a.br(n, i) {
                        old = Some(l);
                    }
                    self.a.set_br(n, i, Br::Leaf(loc));
                }
                Err(i) => self.a.insert_at(n, i, k.p, key.name.clone(), Br::Leaf(loc)),
            }
        } else {
            if self.a.cmp_at(n, 0, k) == Ordering::Greater {
                self.a.set_key(n, 0, k.p, key.name.clone());
            }
            let i = self.a.child_pos(n, k);
            let c = self.a.child(n, i);
            let (o, split) = self.insert_rec(c, key, k, loc);
            old = o;
            if let Some(right) = split {
                let (p, name) = self.a.key_parts(right, 0);
                self.a.insert_at(n, i + 1, p, name, Br::Child(right));
            }
        }
        (old, self.split_if_full(n))
    }

    /// Splits an over-full znode; returns the new right half (its first key
    /// is the separator).
    fn split_if_full(&mut self, n: usize) -> Option<usize> {
        let len = self.a.hdr[n].child_cnt();
        if len <= self.fanout {
            return None;
        }
        let r = self.alloc_empty(self.a.hdr[n].level, true, None);
        self.a.move_tail(n, len / 2, r);
        Some(r)
    }

    /// Removes `key`; returns its location.
    pub fn remove(&mut self, key: &Key) -> Option<Loc> {
        let r = self.root?;
        let (old, empty) = self.remove_rec(r, &SKey::of(key));
        if empty {
            self.release(r);
            self.root = None;
        }
        self.collapse_root();
        old
    }

    fn remove_rec(&mut self, n: usize, k: &SKey) -> (Option<Loc>, bool) {
        if self.a.hdr[n].level == 0 {
            let Ok(i) = self.a.search(n, k) else {
                return (None, false);
            };
            self.touch(n);
            let br = self.a.remove_at(n, i);
            let old = if let Br::Leaf(l) = br { Some(l) } else { None };
            return (old, self.a.hdr[n].child_cnt() == 0);
        }
        if self.a.cmp_at(n, 0, k) == Ordering::Greater {
            return (None, false);
        }
        let i = self.a.child_pos(n, k);
        let c = self.a.child(n, i);
        let (old, child_empty) = self.remove_rec(c, k);
        if old.is_some() {
            self.touch(n);
            if child_empty {
                self.release(c);
                self.a.remove_at(n, i);
            }
        }
        (old, self.a.hdr[n].child_cnt() == 0)
    }

    fn collapse_root(&mut self) {
        while let Some(r) = self.root {
            let z = self.node(r);
            if z.level == 0 || z.child_cnt() != 1 {
                return;
            }
            let c = self.a.child(r, 0);
            self.release(r);
            self.root = Some(c);
        }
    }

    /// Leaf entries with lo <= key < hi, in order.
    pub fn range(&self, lo: &Key, hi: &Key) -> Vec<(Key, Loc)> {
        let mut out = Vec::new();
        if let Some(r) = self.root {
            self.range_rec(r, &SKey::of(lo), &SKey::of(hi), &mut out);
        }
        out
    }

    fn range_rec(&self, n: usize, lo: &SKey, hi: &SKey, out: &mut Vec<(Key, Loc)>) {
        let len = self.a.hdr[n].child_cnt();
        for i in 0..len {
            match self.a.br(n, i) {
                Br::Leaf(l) => {
                    if self.a.cmp_at(n, i, lo) != Ordering::Less && self.a.cmp_at(n, i, hi) == Ordering::Less {
                        out.push((self.a.key(n, i), l));
                    }
                }
                Br::Child(c) => {
                    let after_lo = i + 1 >= len || self.a.cmp_at(n, i + 1, lo) == Ordering::Greater;
                    if after_lo && (i == 0 || self.a.cmp_at(n, i, hi) == Ordering::Less) {
                        self.range_rec(c, lo, hi, out);
                    }
                }
            }
        }
    }

    /// Live znodes (arena indices).
    pub fn znodes(&self) -> Vec<usize> {
        (0..self.a.hdr.len()).filter(|i| self.a.is_live(*i)).collect()
    }

    /// Dirty znodes, children before parents.
    pub fn dirty_postorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.dirty);
        if let Some(r) = self.root {
            self.post_rec(r, &mut out);
        }
        out
    }

    fn post_rec(&self, n: usize, out: &mut Vec<usize>) {
        if !self.a.hdr[n].dirty {
            return;
        }
        if self.a.hdr[n].level > 0 {
            for br in self.a.brs(n) {
                if let Br::Child(c) = br {
                    self.post_rec(*c, out);
                }
            }
        }
        out.push(n);
    }

    /// The on-flash form of a znode (children must have locations).
    /// (The oracle of `encode_idx_into`, which commit uses.)
    #[cfg(test)]
    pub fn encode_idx(&self, n: usize) -> crate::node::Node {
        let branches = self
            .entries(n)
            .into_iter()
            .map(|(k, br)| {
                let l = match br {
                    Br::Leaf(l) => l,
                    Br::Child(c) => self.node(c).loc.unwrap_or(Loc { lnum: 0, offs: 0, len: 0 }),
                };
                (k, l)
            })
            .collect();
        crate::node::Node::Idx { level: self.node(n).level, branches }
    }

    pub fn set_written(&mut self, n: usize, loc: Loc) {
        let z = &mut self.a.hdr[n];
        let was = std::mem::replace(&mut z.dirty, false);
        if let Some(old) = z.loc.replace(loc) {
            self.by_leb.remove(old.lnum, n);
        }
        self.dirty -= was as usize;
        self.by_leb.insert(loc.lnum, n);
    }

    /// Dirties every znode whose committed copy is in `lebs`, and their
    /// ancestors (index garbage collection). Returns true if any was.
    /// Finds them through the per-LEB record of committed copies, then walks
    /// from the root to each by its first key (a clean znode's first key is
    /// the one it was written with).
    pub fn dirty_in_lebs(&mut self, lebs: &[u32]) -> bool {
        let targets: Vec<usize> = lebs.iter().flat_map(|l| self.by_leb.in_leb(*l)).collect();
        for n in &targets {
            let z = self.node(*n);
            if z.dirty {
                continue; // on the path of an earlier target
            }
            let level = z.level;
            let (p, name) = self.a.key_parts(*n, 0);
            let reached = self.touch_path(&SKey { p, name: &name }, level);
            debug_assert_eq!(reached, Some(*n), "index GC: path by first key missed the znode");
            self.touch(*n);
        }
        !targets.is_empty()
    }

    /// Dirties the znodes from the root down to `level` along `k`;
    /// returns the one reached at `level`.
    fn touch_path(&mut self, k: &SKey, level: u8) -> Option<usize> {
        let mut n = self.root?;
        loop {
            self.touch(n);
            let zl = self.a.hdr[n].level;
            if zl <= level {
                return (zl == level).then_some(n);
            }
            n = self.a.child(n, self.a.child_pos(n, k));
        }
    }

    /// The running counts and the per-LEB record against a walk (strict checks).
    pub fn check(&self) -> Result<(), String> {
        let counted = (self.live, self.dirty);
        let walked = (self.znodes().len(), self.dirty_postorder().len());
        if counted != walked {
            return Err(format!("znodes (live, dirty) {counted:?} but a walk finds {walked:?}"));
        }
        let by_leb: std::collections::BTreeSet<(u32, usize)> =
            self.znodes().into_iter().filter_map(|i| self.node(i).loc.map(|l| (l.lnum, i))).collect();
        if by_leb != self.by_leb.pairs() {
            return Err("znodes by LEB disagree with the znodes' locations".into());
        }
        Ok(())
    }

    /// Oracle of [`Tnc::dirty_in_lebs`]: a walk of the whole tree.
    #[cfg(test)]
    fn dirty_in_lebs_walk(&mut self, lebs: &[u32]) -> bool {
        match self.root {
            Some(r) => self.dirty_in_rec(r, lebs),
            None => false,
        }
    }

    #[cfg(test)]
    fn dirty_in_rec(&mut self, n: usize, lebs: &[u32]) -> bool {
        let mut any = false;
        if self.node(n).level > 0 {
            for i in 0..self.node(n).child_cnt() {
                let c = self.a.child(n, i);
                any |= self.dirty_in_rec(c, lebs);
            }
        }
        let mine = self.node(n).loc.is_some_and(|l| lebs.contains(&l.lnum));
        if any || mine {
            self.touch(n);
        }
        any || mine
    }

    /// Height of the tree (0 when empty).
    pub fn height(&self) -> usize {
        self.root.map_or(0, |r| self.node(r).level as usize + 1)
    }

    pub fn fanout(&self) -> usize {
        self.fanout
    }

    /// Host bytes used by the tree.
    pub fn memory_bytes(&self) -> usize {
        self.a.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn loc(i: u32) -> Loc {
        Loc { lnum: i, offs: i * 8, len: 40 }
    }

    #[test]
    fn matches_btreemap_under_random_inserts_and_removes() {
        for fanout in [3usize, 4, 8] {
            let mut t = Tnc::new(fanout);
            let mut m = BTreeMap::new();
            let mut x = 7u64;
            for i in 0..3000u32 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let k = Key::data((x >> 40) as u32 % 50, (x >> 20) as u32 % 40);
                if x.is_multiple_of(3) {
                    assert_eq!(t.remove(&k), m.remove(&k));
                } else {
                    assert_eq!(t.insert(&k, loc(i)), m.insert(k.clone(), loc(i)));
                }
            }
            for (k, v) in &m {
                assert_eq!(t.lookup(k), Some(*v));
            }
            let lo = Key::first(10, 0);
            let hi = Key::first(20, 0);
            let want: Vec<(Key, Loc)> = m.range(lo.clone()..hi.clone()).map(|(k, v)| (k.clone(), *v)).collect();
            assert_eq!(t.range(&lo, &hi), want);
            let all = t.range(&Key::first(0, 0), &Key::first(u32::MAX, 7));
            assert_eq!(all.len(), m.len());
            assert_eq!((t.live_count(), t.dirty_count()), (t.znodes().len(), t.dirty_postorder().len()));
        }
    }

    #[test]
    fn commit_writes_dirty_path_only() {
        let mut t = Tnc::new(8);
        for i in 0..200 {
            t.insert(&Key::data(1, i), loc(i));
        }
        for n in t.dirty_postorder() {
            t.set_written(n, loc(9999));
        }
        assert!(t.dirty_postorder().is_empty());
        assert_eq!(t.dirty_count(), 0);
        t.check().unwrap();

        t.insert(&Key::data(1, 77), loc(5));
        assert_eq!(t.dirty_postorder().len(), t.height(), "one path from leaf to root");
        assert_eq!(t.dirty_count(), t.height());
    }
}

#[cfg(test)]
mod index_gc_tests {
    use super::*;

    /// Index GC by the per-LEB record dirties exactly what a whole-tree walk does.
    #[test]
    fn dirty_in_lebs_matches_a_walk() {
        let mut x = 11u64;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for round in 0..20 {
            let mut t = Tnc::new(4 + round % 5);
            for _ in 0..3 {
                for i in 0..400 {
                    let k = Key::data(next() as u32 % 30, next() as u32 % 60);
                    if next() % 4 == 0 {
                        t.remove(&k);
                    } else {
                        t.insert(&k, Loc { lnum: 900, offs: i * 8, len: 40 });
                    }
                }
                for n in t.dirty_postorder() {
                    t.set_written(n, Loc { lnum: next() as u32 % 12, offs: 0, len: 100 });
                }
            }
            t.pending_obsolete.clear();
            t.check().unwrap();
            let lebs: Vec<u32> = (0..12).filter(|_| next() % 3 == 0).collect();
            let (mut a, mut b) = (t.clone(), t.clone());
            assert_eq!(a.dirty_in_lebs(&lebs), b.dirty_in_lebs_walk(&lebs), "round {round}");
            let (mut da, mut db) = (a.dirty_postorder(), b.dirty_postorder());
            da.sort_unstable();
            db.sort_unstable();
            assert_eq!(da, db, "round {round}: lebs {lebs:?}");
            a.check().unwrap();
        }
    }
}
