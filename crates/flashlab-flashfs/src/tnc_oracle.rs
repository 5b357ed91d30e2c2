#![allow(dead_code)]
//! Test oracle: the TNC as it was before its znodes moved into flat arrays
//! (`tnc_arena.rs`), kept verbatim but for this line and the names. The in-memory index (UBIFS "TNC"): a B+-tree of fan-out `fanout` whose
//! level-0 branches point at leaf nodes on flash. Changing a key dirties
//! its znode and every ancestor; a commit writes the dirty znodes out of
//! place, children first (the wandering tree). Underfull znodes are not
//! merged; empty ones are removed and a one-child root is collapsed.

use crate::key::Key;
use crate::node::Loc;

/// A branch: a leaf node on flash or a child znode in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OldBr {
    Leaf(Loc),
    Child(usize),
}

/// One index node.
#[derive(Debug, Clone)]
pub struct OldZnode {
    pub level: u8,
    pub entries: Vec<(Key, OldBr)>,
    pub dirty: bool,
    /// Location of the committed copy (None while dirty or never written).
    pub loc: Option<Loc>,
}

/// The tree.
#[derive(Debug, Clone)]
pub struct OldTnc {
    nodes: Vec<Option<OldZnode>>,
    free: Vec<usize>,
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

impl OldTnc {
    pub fn new(fanout: usize) -> OldTnc {
        OldTnc {
            nodes: Vec::new(),
            free: Vec::new(),
            root: None,
            fanout: fanout.max(3),
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

    pub fn node(&self, i: usize) -> &OldZnode {
        self.nodes[i].as_ref().expect("live znode")
    }

    fn node_mut(&mut self, i: usize) -> &mut OldZnode {
        self.nodes[i].as_mut().expect("live znode")
    }

    pub fn alloc(&mut self, z: OldZnode) -> usize {
        self.live += 1;
        self.dirty += z.dirty as usize;
        let loc = z.loc;
        let i = if let Some(i) = self.free.pop() {
            self.nodes[i] = Some(z);
            i
        } else {
            self.nodes.push(Some(z));
            self.nodes.len() - 1
        };
        if let Some(l) = loc {
            self.by_leb.insert(l.lnum, i);
        }
        i
    }

    fn release(&mut self, i: usize) {
        if let Some(z) = self.nodes[i].take() {
            self.live -= 1;
            self.dirty -= z.dirty as usize;
            if let Some(l) = z.loc {
                self.pending_obsolete.push(l);
                self.by_leb.remove(l.lnum, i);
            }
            self.free.push(i);
        }
    }

    /// Marks a znode dirty; its committed copy becomes obsolete at commit.
    pub fn touch(&mut self, i: usize) {
        let z = self.node_mut(i);
        if !z.dirty {
            z.dirty = true;
            if let Some(l) = z.loc.take() {
                self.pending_obsolete.push(l);
                self.by_leb.remove(l.lnum, i);
            }
            self.dirty += 1;
        }
    }

    fn child_pos(z: &OldZnode, key: &Key) -> usize {
        match z.entries.binary_search_by(|(k, _)| k.cmp(key)) {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        }
    }

    fn child(z: &OldZnode, i: usize) -> usize {
        match z.entries[i].1 {
            OldBr::Child(c) => c,
            OldBr::Leaf(_) => unreachable!("leaf branch above level 0"),
        }
    }

    /// Location of the leaf node for `key`.
    pub fn lookup(&self, key: &Key) -> Option<Loc> {
        let mut n = self.root?;
        loop {
            let z = self.node(n);
            if z.level == 0 {
                let i = z.entries.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
                return match z.entries[i].1 {
                    OldBr::Leaf(l) => Some(l),
                    OldBr::Child(_) => None,
                };
            }
            n = Self::child(z, Self::child_pos(z, key));
        }
    }

    /// Inserts or replaces; returns the replaced location.
    pub fn insert(&mut self, key: &Key, loc: Loc) -> Option<Loc> {
        let Some(r) = self.root else {
            let z = OldZnode { level: 0, entries: vec![(key.clone(), OldBr::Leaf(loc))], dirty: true, loc: None };
            self.root = Some(self.alloc(z));
            return None;
        };
        let (old, split) = self.insert_rec(r, key, loc);
        if let Some((k, right)) = split {
            let level = self.node(r).level + 1;
            let first = self.node(r).entries[0].0.clone();
            let z = OldZnode {
                level,
                entries: vec![(first, OldBr::Child(r)), (k, OldBr::Child(right))],
                dirty: true,
                loc: None,
            };
            self.root = Some(self.alloc(z));
        }
        old
    }

    fn insert_rec(&mut self, n: usize, key: &Key, loc: Loc) -> (Option<Loc>, Option<(Key, usize)>) {
        self.touch(n);
        let mut old = None;
        if self.node(n).level == 0 {
            let z = self.node_mut(n);
            match z.entries.binary_search_by(|(k, _)| k.cmp(key)) {
                Ok(i) => {
                    if let OldBr::Leaf(l) = z.entries[i].1 {
                        old = Some(l);
                    }
                    z.entries[i].1 = OldBr::Leaf(loc);
                }
                Err(i) => z.entries.insert(i, (key.clone(), OldBr::Leaf(loc))),
            }
        } else {
            let (i, c) = {
                let z = self.node_mut(n);
                if *key < z.entries[0].0 {
                    z.entries[0].0 = key.clone();
                }
                let i = Self::child_pos(z, key);
                (i, Self::child(z, i))
            };
            let (o, split) = self.insert_rec(c, key, loc);
            old = o;
            if let Some((k, right)) = split {
                self.node_mut(n).entries.insert(i + 1, (k, OldBr::Child(right)));
            }
        }
        (old, self.split_if_full(n))
    }

    fn split_if_full(&mut self, n: usize) -> Option<(Key, usize)> {
        let fanout = self.fanout;
        let z = self.node_mut(n);
        if z.entries.len() <= fanout {
            return None;
        }
        let right: Vec<(Key, OldBr)> = z.entries.split_off(z.entries.len() / 2);
        let level = z.level;
        let k = right[0].0.clone();
        let r = self.alloc(OldZnode { level, entries: right, dirty: true, loc: None });
        Some((k, r))
    }

    /// Removes `key`; returns its location.
    pub fn remove(&mut self, key: &Key) -> Option<Loc> {
        let r = self.root?;
        let (old, empty) = self.remove_rec(r, key);
        if empty {
            self.release(r);
            self.root = None;
        }
        self.collapse_root();
        old
    }

    fn remove_rec(&mut self, n: usize, key: &Key) -> (Option<Loc>, bool) {
        if self.node(n).level == 0 {
            let Ok(i) = self.node(n).entries.binary_search_by(|(k, _)| k.cmp(key)) else {
                return (None, false);
            };
            self.touch(n);
            let (_, br) = self.node_mut(n).entries.remove(i);
            let old = if let OldBr::Leaf(l) = br { Some(l) } else { None };
            return (old, self.node(n).entries.is_empty());
        }
        let z = self.node(n);
        if *key < z.entries[0].0 {
            return (None, false);
        }
        let i = Self::child_pos(z, key);
        let c = Self::child(z, i);
        let (old, child_empty) = self.remove_rec(c, key);
        if old.is_some() {
            self.touch(n);
            if child_empty {
                self.release(c);
                self.node_mut(n).entries.remove(i);
            }
        }
        (old, self.node(n).entries.is_empty())
    }

    fn collapse_root(&mut self) {
        while let Some(r) = self.root {
            let z = self.node(r);
            if z.level == 0 || z.entries.len() != 1 {
                return;
            }
            let c = Self::child(z, 0);
            self.release(r);
            self.root = Some(c);
        }
    }

    /// Leaf entries with lo <= key < hi, in order.
    pub fn range(&self, lo: &Key, hi: &Key) -> Vec<(Key, Loc)> {
        let mut out = Vec::new();
        if let Some(r) = self.root {
            self.range_rec(r, lo, hi, &mut out);
        }
        out
    }

    fn range_rec(&self, n: usize, lo: &Key, hi: &Key, out: &mut Vec<(Key, Loc)>) {
        let z = self.node(n);
        for (i, (k, br)) in z.entries.iter().enumerate() {
            match *br {
                OldBr::Leaf(l) => {
                    if k >= lo && k < hi {
                        out.push((k.clone(), l));
                    }
                }
                OldBr::Child(c) => {
                    let after_lo = z.entries.get(i + 1).is_none_or(|(nk, _)| nk > lo);
                    if after_lo && (i == 0 || k < hi) {
                        self.range_rec(c, lo, hi, out);
                    }
                }
            }
        }
    }

    /// Live znodes (arena indices).
    pub fn znodes(&self) -> Vec<usize> {
        (0..self.nodes.len()).filter(|i| self.nodes[*i].is_some()).collect()
    }

    /// Dirty znodes, children before parents.
    pub fn dirty_postorder(&self) -> Vec<usize> {
        let mut out = Vec::new();
        if let Some(r) = self.root {
            self.post_rec(r, &mut out);
        }
        out
    }

    fn post_rec(&self, n: usize, out: &mut Vec<usize>) {
        let z = self.node(n);
        if !z.dirty {
            return;
        }
        for (_, br) in &z.entries {
            if let OldBr::Child(c) = br {
                self.post_rec(*c, out);
            }
        }
        out.push(n);
    }

    /// The on-flash form of a znode (children must have locations).
    /// (The oracle of `encode_idx_into`, which commit uses.)
    #[cfg(test)]
    pub fn encode_idx(&self, n: usize) -> crate::node::Node {
        let z = self.node(n);
        let branches = z
            .entries
            .iter()
            .map(|(k, br)| {
                let l = match br {
                    OldBr::Leaf(l) => *l,
                    OldBr::Child(c) => self.node(*c).loc.unwrap_or(Loc { lnum: 0, offs: 0, len: 0 }),
                };
                (k.clone(), l)
            })
            .collect();
        crate::node::Node::Idx { level: z.level, branches }
    }

    pub fn set_written(&mut self, n: usize, loc: Loc) {
        let z = self.node_mut(n);
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
            let (key, level) = (z.entries[0].0.clone(), z.level);
            let reached = self.touch_path(&key, level);
            debug_assert_eq!(reached, Some(*n), "index GC: path by first key missed the znode");
            self.touch(*n);
        }
        !targets.is_empty()
    }

    /// Dirties the znodes from the root down to `level` along `key`;
    /// returns the one reached at `level`.
    fn touch_path(&mut self, key: &Key, level: u8) -> Option<usize> {
        let mut n = self.root?;
        loop {
            self.touch(n);
            let z = self.node(n);
            if z.level <= level {
                return (z.level == level).then_some(n);
            }
            n = Self::child(z, Self::child_pos(z, key));
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
            for i in 0..self.node(n).entries.len() {
                let c = Self::child(self.node(n), i);
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
        let per_entry = std::mem::size_of::<(Key, OldBr)>();
        self.nodes
            .iter()
            .flatten()
            .map(|z| {
                std::mem::size_of::<OldZnode>() + z.entries.iter().map(|(k, _)| per_entry + k.name.len()).sum::<usize>()
            })
            .sum()
    }
}
