//! The locality group's preallocations (fs/ext4/mballoc.c): data of small
//! files — at most `s_mb_stream_request` (16) blocks — comes from group
//! preallocations of `s_mb_group_prealloc` (512) blocks, consumed from
//! their start whatever the file's directory (`ext4_mb_group_or_file`,
//! `ext4_mb_use_preallocated`, `ext4_mb_use_group_pa`). So the small files
//! written back together lie together, as the kernel lays out an unpacked
//! source tree. One locality group (one CPU).
//!
//! A preallocation's free blocks are taken in the allocator's bitmap
//! (`mb_mark_used` in the buddy) but still free on disk: the descriptors'
//! free counts (`bfree`) and the on-disk bitmap change only when a file
//! takes them (`ext4_mb_mark_diskspace_used`).

use crate::error::Ext4Result;
use crate::fs::Ext4;

/// `s_mb_group_prealloc` (`MB_DEFAULT_GROUP_PREALLOC`).
pub(crate) const GROUP_PREALLOC_BLOCKS: u64 = 512;
/// `PREALLOC_TB_SIZE`: lists by free-space order.
const PREALLOC_TB_SIZE: usize = 10;

/// One group preallocation: its next free block and how many are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GroupPa {
    pub start: u64,
    pub free: u64,
}

/// `struct ext4_locality_group`: `lg_prealloc_list[order]`, each in list order.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalityGroup {
    lists: [Vec<GroupPa>; PREALLOC_TB_SIZE],
}

/// The list a preallocation with `free` blocks (or a request of `free`) belongs to.
fn order(free: u64) -> usize {
    ((63 - free.max(1).leading_zeros()) as usize).min(PREALLOC_TB_SIZE - 1)
}

impl LocalityGroup {
    /// Every preallocation's free extent.
    pub(crate) fn extents(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.lists.iter().flatten().map(|pa| (pa.start, pa.free))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lists.iter().all(|l| l.is_empty())
    }

    /// `ext4_mb_use_preallocated` for a group request: among preallocations
    /// with at least `len` free, from the request's order up, the one
    /// starting nearest the goal (`ext4_mb_check_group_pa`; the first on a tie).
    fn best(&self, goal: u64, len: u64) -> Option<(usize, usize)> {
        let mut best: Option<((usize, usize), u64)> = None;
        for (i, list) in self.lists.iter().enumerate().skip(order(len)) {
            for (k, pa) in list.iter().enumerate() {
                if pa.free < len {
                    continue;
                }
                let d = goal.abs_diff(pa.start);
                if best.is_none_or(|(_, bd)| d < bd) {
                    best = Some(((i, k), d));
                }
            }
        }
        best.map(|b| b.0)
    }

    /// `ext4_mb_add_n_trim`: `pa` goes to its list before the first with
    /// more free blocks; when the list then holds more than 8,
    /// `ext4_mb_discard_lg_preallocations(…, count / 2)` drops entries from
    /// its head but the one in use, one at a time, until that count is down
    /// to 5 (so one, for 9 to 13 entries). Dropped ones' free blocks are returned.
    fn add_n_trim(&mut self, pa: GroupPa) -> Vec<GroupPa> {
        let list = &mut self.lists[order(pa.free)];
        let mut in_use = list.iter().position(|p| pa.free < p.free).unwrap_or(list.len());
        list.insert(in_use, pa);
        let mut dropped = Vec::new();
        if list.len() > 8 {
            let mut total = list.len() / 2;
            let mut k = 0;
            while k < list.len() {
                if k == in_use {
                    k += 1;
                    continue;
                }
                dropped.push(list.remove(k));
                if k < in_use {
                    in_use -= 1;
                }
                total -= 1;
                if total <= 5 {
                    break;
                }
            }
        }
        dropped
    }
}

impl Ext4 {
    /// Data blocks of a small file: from the locality group's nearest
    /// preallocation with room, else from a new one of 512 blocks found as
    /// a normalised request is (the goal's free run, then the lowest free
    /// order-9 buddy from the goal's group), else as a plain request.
    pub(crate) fn lg_alloc(&mut self, goal: u64, want: u64) -> Ext4Result<(u64, u64)> {
        let goal = if goal >= self.lay.blocks { 0 } else { goal };
        if let Some((i, k)) = self.lg.best(goal, want) {
            let mut pa = self.lg.lists[i].remove(k);
            let p = pa.start;
            (pa.start, pa.free) = (pa.start + want, pa.free - want);
            self.lg_keep(pa);
            self.take_preallocated(p, want);
            return Ok((p, want));
        }
        let g0 = self.lay.group_of(goal);
        self.need_block_bitmap(g0)?;
        let len = GROUP_PREALLOC_BLOCKS;
        let at = if self.free_at(goal, len) {
            Some(goal)
        } else {
            self.mb_prefetch(g0)?;
            self.buddy_scan(g0, len.trailing_zeros())
        };
        let Some(p) = at else { return self.alloc_run(goal, want) };
        self.need_block_bitmap(self.lay.group_of(p))?;
        self.bmap.set_range(p, len);
        self.lg_keep(GroupPa { start: p + want, free: len - want });
        self.take_preallocated(p, want);
        self.stats.group_preallocations += 1;
        Ok((p, want))
    }

    /// A used preallocation back in its list (if it has blocks left).
    fn lg_keep(&mut self, pa: GroupPa) {
        if pa.free > 0 {
            for d in self.lg.add_n_trim(pa) {
                self.bmap.clear_range(d.start, d.free);
            }
        }
    }

    /// Every preallocation's free blocks back to the allocator
    /// (`ext4_mb_discard_preallocations`, before an allocation gives up).
    pub(crate) fn lg_discard_all(&mut self) {
        let all: Vec<(u64, u64)> = self.lg.extents().collect();
        for (s, n) in all {
            self.bmap.clear_range(s, n);
        }
        self.lg = LocalityGroup::default();
    }

    /// Free blocks of group `g` held by preallocations (free on disk).
    pub(crate) fn lg_free_in(&self, g: u32) -> u64 {
        let (gs, ge) = (self.lay.group_start(g), self.lay.group_end(g));
        self.lg.extents().map(|(s, n)| (s + n).min(ge).saturating_sub(s.max(gs))).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{order, GroupPa, LocalityGroup};

    fn pa(start: u64, free: u64) -> GroupPa {
        GroupPa { start, free }
    }

    #[test]
    fn lists_by_order_nearest_first_and_trimmed_to_five() {
        assert_eq!((order(1), order(3), order(4), order(511), order(4096)), (0, 1, 2, 8, 9));
        let mut lg = LocalityGroup::default();
        assert!(lg.add_n_trim(pa(1000, 300)).is_empty());
        assert!(lg.add_n_trim(pa(5000, 260)).is_empty());
        // Both in list 8, the smaller first; the nearest with room wins.
        assert_eq!(lg.lists[8], vec![pa(5000, 260), pa(1000, 300)]);
        assert_eq!(lg.best(1200, 10), Some((8, 1)));
        assert_eq!(lg.best(4000, 10), Some((8, 0)));
        assert_eq!(lg.best(4000, 280), Some((8, 1)), "only one has room");
        assert_eq!(lg.best(0, 600), None);
        // A ninth entry in one list: the head goes (9 / 2 = 4 ≤ 5 after one).
        for k in 0..6 {
            assert!(lg.add_n_trim(pa(10_000 + k * 1000, 256 + k)).is_empty());
        }
        let dropped = lg.add_n_trim(pa(50_000, 256));
        assert_eq!(dropped, vec![pa(10_000, 256)]);
        assert_eq!(lg.lists[8].len(), 8);
        assert_eq!(lg.lists[8][0], pa(50_000, 256), "the one in use stays, after its equal");
    }
}
