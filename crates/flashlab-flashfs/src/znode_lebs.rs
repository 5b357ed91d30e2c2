//! The TNC's record of which znodes have their committed copy in which
//! LEB (for index GC): one unordered list per LEB plus every znode's
//! position in its list, so adding and removing are O(1) without an
//! ordered-set search (a znode's first touch after each commit removes it).
//! [`ZnodeLebs::in_leb`] sorts, giving what an ordered set of
//! (LEB, znode) pairs would.

/// No position (the znode has no committed copy recorded).
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct ZnodeLebs {
    lists: Vec<Vec<usize>>,
    /// Position of znode `i` in its LEB's list, or [`NONE`].
    pos: Vec<u32>,
}

impl ZnodeLebs {
    pub fn insert(&mut self, lnum: u32, i: usize) {
        let l = lnum as usize;
        if self.lists.len() <= l {
            self.lists.resize_with(l + 1, Vec::new);
        }
        if self.pos.len() <= i {
            self.pos.resize(i + 1, NONE);
        }
        debug_assert_eq!(self.pos[i], NONE, "znode {i} recorded twice");
        self.pos[i] = self.lists[l].len() as u32;
        self.lists[l].push(i);
    }

    /// Removes znode `i`, recorded under `lnum`.
    pub fn remove(&mut self, lnum: u32, i: usize) {
        let p = self.pos[i] as usize;
        let list = &mut self.lists[lnum as usize];
        debug_assert_eq!(list[p], i, "znode {i} not recorded under LEB {lnum}");
        list.swap_remove(p);
        if let Some(&moved) = list.get(p) {
            self.pos[moved] = p as u32;
        }
        self.pos[i] = NONE;
    }

    /// Znodes recorded under `lnum`, in increasing arena index.
    pub fn in_leb(&self, lnum: u32) -> Vec<usize> {
        let mut v = self.lists.get(lnum as usize).cloned().unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// Every (LEB, znode) pair, ordered.
    pub fn pairs(&self) -> std::collections::BTreeSet<(u32, usize)> {
        let mut s = std::collections::BTreeSet::new();
        for (l, list) in self.lists.iter().enumerate() {
            for (p, i) in list.iter().enumerate() {
                if self.pos.get(*i) == Some(&(p as u32)) {
                    s.insert((l as u32, *i));
                } else {
                    s.insert((u32::MAX, *i)); // a broken position: never equal to a walk's set
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Against the ordered set of (LEB, znode) pairs it replaces.
        #[test]
        fn matches_an_ordered_set(ops in proptest::collection::vec((0u32..6, 0usize..40), 0..300)) {
            let (mut z, mut s) = (ZnodeLebs::default(), BTreeSet::new());
            let mut at: Vec<Option<u32>> = vec![None; 40];
            for (l, i) in ops {
                match at[i] {
                    Some(old) => { z.remove(old, i); s.remove(&(old, i)); at[i] = None; }
                    None => { z.insert(l, i); s.insert((l, i)); at[i] = Some(l); }
                }
                prop_assert_eq!(z.pairs(), s.clone());
                for l in 0..6 {
                    let want: Vec<usize> = s.range((l, 0)..=(l, usize::MAX)).map(|(_, i)| *i).collect();
                    prop_assert_eq!(z.in_leb(l), want);
                }
            }
        }
    }
}
