//! The LEB-properties table with running totals (as UBIFS's `lp_stats`):
//! every change goes through [`LpTable::set`] or [`LpTable::update`], which
//! keep the sums that budgeting asks for on every write, so an operation's
//! admission costs O(journal heads) instead of a scan of every LEB.
//!
//! The totals treat each LEB as if no journal head sat on it; the few head
//! LEBs are corrected by the caller (`budget.rs`, `journal.rs`).

use crate::fs::{Lprops, F_BUD, F_INDEX, F_TAKEN};
use crate::lpsets::{GcTree, LebBits};
use std::ops::Index;

/// LEB properties plus totals over the main area.
#[derive(Debug, Clone)]
pub struct LpTable {
    v: Vec<Lprops>,
    leb_bytes: u32,
    min_io: u32,
    main_first: u32,
    /// Sum of [`LpTable::base_reclaimable`] over the main area.
    reclaimable: u64,
    /// Main-area LEBs whose properties say empty.
    empty: u32,
    /// LEBs flagged as buds.
    buds: u32,
    /// Main-area LEBs whose properties say empty, by number.
    empties: LebBits,
    /// GC candidates (not bud, index or taken; partly written; at least a
    /// page reclaimable) by (free + dirty, reverse number).
    gc: GcTree,
    /// LPT pnodes (4 LEBs each) whose properties changed since
    /// [`LpTable::take_changed`].
    changed: Vec<bool>,
}

/// One LEB's share of [`LpTable`]'s totals and sets.
#[derive(PartialEq, Eq)]
struct Standing {
    reclaimable: u64,
    empty: bool,
    bud: bool,
    gc: Option<u32>,
}

/// The LPT on flash: every node's location by level (level 0 = pnodes, the
/// last level = the root), the active area, and the append position for
/// incremental commits.
#[derive(Debug, Clone, Default)]
pub struct LptPlace {
    pub levels: Vec<Vec<crate::node::Loc>>,
    /// (LEB, offset) after the last node written; None = rewrite whole.
    pub head: Option<(u32, u32)>,
    /// The last commit rewrote the tree into the other area.
    pub swapped: bool,
}

impl LpTable {
    /// Every LEB free, none flagged.
    pub fn new(leb_count: u32, leb_bytes: u32, min_io: u32, main_first: u32) -> LpTable {
        let v = vec![Lprops { free: leb_bytes, dirty: 0, flags: 0 }; leb_count as usize];
        let mut t = LpTable {
            v,
            leb_bytes,
            min_io,
            main_first,
            reclaimable: 0,
            empty: 0,
            buds: 0,
            empties: LebBits::new(leb_count),
            gc: GcTree::new(leb_count),
            changed: vec![true; leb_count.div_ceil(4) as usize],
        };
        t.recount();
        t
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// Whether the properties alone say LEB `l` is empty: all of it free or
    /// dirty, and neither a bud nor taken by GC.
    pub fn props_empty(&self, l: u32) -> bool {
        let p = self.v[l as usize];
        l >= self.main_first && p.free + p.dirty == self.leb_bytes && p.flags & (F_BUD | F_TAKEN) == 0
    }

    /// Bytes journal writes could get from LEB `l` if no head were on it.
    pub fn base_reclaimable(&self, l: u32) -> u64 {
        let p = self.v[l as usize];
        if l < self.main_first {
            0
        } else if self.props_empty(l) {
            self.leb_bytes as u64
        } else if p.flags & (F_BUD | F_INDEX) != 0 {
            0
        } else {
            (p.free + p.dirty).saturating_sub(self.min_io) as u64
        }
    }

    fn account(&mut self, l: u32, sign: i64) {
        let r = self.base_reclaimable(l) as i64;
        self.reclaimable = (self.reclaimable as i64 + sign * r) as u64;
        let e = self.props_empty(l) as i64;
        self.empty = (self.empty as i64 + sign * e) as u32;
        let b = (self.v[l as usize].flags & F_BUD != 0) as i64;
        self.buds = (self.buds as i64 + sign * b) as u32;
        if e == 1 {
            self.empties.set(l, sign > 0);
        }
        if let Some(k) = self.gc_key(l) {
            self.gc.set(l, (sign > 0).then_some(k));
        }
    }

    /// LEB `l`'s key among the GC candidates (its free + dirty space), if
    /// it is one.
    fn gc_key(&self, l: u32) -> Option<u32> {
        let p = self.v[l as usize];
        let reclaim = p.free + p.dirty;
        let ok = l >= self.main_first
            && p.flags & (F_BUD | F_INDEX | F_TAKEN) == 0
            && reclaim < self.leb_bytes
            && reclaim >= self.min_io;
        ok.then_some(reclaim)
    }

    /// Empty LEBs (by the properties) in increasing number.
    pub fn empties(&self) -> impl Iterator<Item = u32> + '_ {
        self.empties.iter()
    }

    /// GC candidates, most reclaimable first (ties: lowest number first).
    pub fn gc_candidates(&self) -> impl Iterator<Item = u32> + '_ {
        self.gc.iter()
    }

    /// Replaces LEB `l`'s properties.
    pub fn set(&mut self, l: u32, p: Lprops) {
        self.update(l, |q| *q = p);
    }

    /// Changes LEB `l`'s properties in place.
    /// The totals and sets change only by the difference between the LEB's
    /// old and new standing (the same end state as taking the old one out
    /// and putting the new one in, without two ordered-set operations for
    /// the unchanged GC key of nearly every update).
    pub fn update(&mut self, l: u32, f: impl FnOnce(&mut Lprops)) {
        let old = self.v[l as usize];
        let before = self.standing(l);
        f(&mut self.v[l as usize]);
        if self.v[l as usize] == old {
            return;
        }
        self.changed[l as usize / 4] = true;
        let after = self.standing(l);
        self.reclaimable = self.reclaimable.wrapping_sub(before.reclaimable).wrapping_add(after.reclaimable);
        self.empty = self.empty.wrapping_sub(before.empty as u32).wrapping_add(after.empty as u32);
        self.buds = self.buds.wrapping_sub(before.bud as u32).wrapping_add(after.bud as u32);
        if before.empty != after.empty {
            self.empties.set(l, after.empty);
        }
        if before.gc != after.gc {
            self.gc.set(l, after.gc);
        }
    }

    /// What LEB `l` adds to the totals and sets (see [`LpTable::account`]).
    fn standing(&self, l: u32) -> Standing {
        Standing {
            reclaimable: self.base_reclaimable(l),
            empty: self.props_empty(l),
            bud: self.v[l as usize].flags & F_BUD != 0,
            gc: self.gc_key(l),
        }
    }

    /// Changes every LEB's properties (`f(lnum, props)`), then recounts.
    pub fn update_all(&mut self, mut f: impl FnMut(u32, &mut Lprops)) {
        for (l, p) in self.v.iter_mut().enumerate() {
            let old = *p;
            f(l as u32, p);
            if *p != old {
                self.changed[l / 4] = true;
            }
        }
        self.recount();
    }

    /// Clears `flag` on every LEB that has it and `keep` does not accept,
    /// each through [`LpTable::update`]: the end state of `update_all` (then
    /// a recount) for the few LEBs flagged, without recounting all of them.
    pub fn clear_flag_except(&mut self, flag: u8, keep: impl Fn(u32) -> bool) {
        for l in 0..self.v.len() as u32 {
            if self.v[l as usize].flags & flag != 0 && !keep(l) {
                self.update(l, |p| p.flags &= !flag);
            }
        }
    }

    /// Every LEB's properties (to compare against later).
    pub fn snapshot(&self) -> Vec<Lprops> {
        self.v.clone()
    }

    /// Marks as changed exactly the pnodes holding a LEB whose properties
    /// differ from `old` (clears every other mark).
    pub fn changed_since(&mut self, old: &[Lprops]) {
        self.changed.fill(false);
        for (l, (now, was)) in self.v.iter().zip(old).enumerate() {
            if now != was {
                self.changed[l / 4] = true;
            }
        }
    }

    /// Whether any pnode changed since [`LpTable::take_changed`] (UBIFS:
    /// the LPT root is dirty).
    pub fn any_changed(&self) -> bool {
        self.changed.contains(&true)
    }

    /// Pnodes changed since the last call, in increasing order; clears the marks.
    pub fn take_changed(&mut self) -> Vec<u32> {
        let out = (0..self.changed.len() as u32).filter(|i| self.changed[*i as usize]).collect();
        self.changed.fill(false);
        out
    }

    fn recount(&mut self) {
        (self.reclaimable, self.empty, self.buds) = (0, 0, 0);
        self.empties.clear();
        self.gc.clear();
        for l in 0..self.v.len() as u32 {
            self.account(l, 1);
        }
    }

    /// Sum of [`LpTable::base_reclaimable`] over the main area.
    pub fn total_reclaimable(&self) -> u64 {
        self.reclaimable
    }

    /// Main-area LEBs whose properties say empty.
    pub fn total_empty(&self) -> u32 {
        self.empty
    }

    /// LEBs flagged as buds.
    pub fn total_buds(&self) -> u32 {
        self.buds
    }

    /// Recounts the totals from scratch and compares (strict checks).
    pub fn check_totals(&self) -> Result<(), String> {
        let mut fresh = self.clone();
        fresh.recount();
        let (a, b) = ((self.reclaimable, self.empty, self.buds), (fresh.reclaimable, fresh.empty, fresh.buds));
        if a != b {
            return Err(format!("LEB-property totals (reclaimable, empty, buds) {a:?} but recounted {b:?}"));
        }
        if self.empties != fresh.empties || self.gc != fresh.gc {
            return Err("LEB-property sets (empty LEBs, GC candidates) differ from a recount".into());
        }
        Ok(())
    }
}

impl Index<usize> for LpTable {
    type Output = Lprops;

    fn index(&self, l: usize) -> &Lprops {
        &self.v[l]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_follow_every_change() {
        let mut t = LpTable::new(10, 1000, 100, 2);
        assert_eq!((t.total_reclaimable(), t.total_empty(), t.total_buds()), (8000, 8, 0));
        t.update(3, |p| p.free = 400);
        assert_eq!(t.total_reclaimable(), 7000 + 300);
        assert_eq!(t.total_empty(), 7);
        t.update(3, |p| p.flags |= F_BUD);
        assert_eq!((t.total_reclaimable(), t.total_buds()), (7000, 1));
        t.set(3, Lprops { free: 1000, dirty: 0, flags: 0 });
        t.update(0, |p| p.flags |= F_BUD);
        assert_eq!((t.total_reclaimable(), t.total_empty(), t.total_buds()), (8000, 8, 1));
        t.update_all(|_, p| p.flags &= !F_BUD);
        assert_eq!(t.total_buds(), 0);
        assert_eq!(t.empties().collect::<Vec<_>>(), (2..10).collect::<Vec<_>>());
        t.update(4, |p| (p.free, p.dirty) = (300, 300));
        t.update(6, |p| (p.free, p.dirty) = (100, 500));
        t.update(7, |p| (p.free, p.dirty) = (0, 50));
        t.update(8, |p| (p.free, p.dirty, p.flags) = (0, 900, F_INDEX));
        assert_eq!(t.gc_candidates().collect::<Vec<_>>(), vec![4, 6], "most reclaimable, then lowest number");
        assert!(!t.empties().any(|l| [4, 6, 7, 8].contains(&l)));
        t.check_totals().unwrap();
    }

    #[test]
    fn clear_flag_except_is_update_all() {
        let mut t = LpTable::new(40, 1000, 100, 2);
        for l in 0..40u32 {
            let flags = [0, F_BUD, F_BUD | F_INDEX, F_INDEX, F_BUD | F_TAKEN][l as usize % 5];
            let (free, dirty) =
                [(1000, 0), (400, 300), (0, 1000), (0, 50), (900, 0), (0, 0), (500, 500)][l as usize % 7];
            t.set(l, Lprops { free, dirty, flags });
        }
        let _ = t.take_changed();
        for keep in [vec![], vec![1u32, 6, 11], (0..40).collect()] {
            let (mut a, mut b) = (t.clone(), t.clone());
            a.update_all(|l, p| {
                if !keep.contains(&l) {
                    p.flags &= !F_BUD;
                }
            });
            b.clear_flag_except(F_BUD, |l| keep.contains(&l));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "keep {keep:?}");
            b.check_totals().unwrap();
        }
    }
}
