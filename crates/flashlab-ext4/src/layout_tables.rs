//! Where mke2fs puts each group's block bitmap, inode bitmap and inode
//! table: lib/ext2fs/alloc_tables.c, `ext2fs_allocate_tables` →
//! `ext2fs_allocate_group_table` for each group in order, with and without
//! `flex_bg` (`flexbg_offset`), searching free blocks as
//! `ext2fs_get_free_blocks2` does in a block map that starts with the
//! superblock copies, GDT and reserved GDT blocks taken
//! (`ext2fs_reserve_super_and_bgd`). No `-E stride`.

use crate::layout::{GroupTables, Layout};
use std::collections::BTreeMap;

/// The blocks taken so far, as disjoint extents (start → end).
struct Taken {
    ext: BTreeMap<u64, u64>,
    blocks: u64,
}

impl Taken {
    fn new(lay: &Layout) -> Taken {
        let mut t = Taken { ext: BTreeMap::new(), blocks: lay.blocks };
        for g in 0..lay.groups {
            let n = lay.super_blocks(g);
            if n > 0 {
                t.take(lay.group_start(g), n);
            }
        }
        t
    }

    /// Marks `start..start + n` taken (merged with the extents it touches:
    /// small groups can have superblock backups overlapping group 0's
    /// reserved GDT blocks).
    fn take(&mut self, start: u64, n: u64) {
        let (mut s, mut e) = (start, start + n);
        while let Some((&a, &b)) = self.ext.range(..=e).next_back().filter(|(_, &b)| b >= s) {
            self.ext.remove(&a);
            (s, e) = (s.min(a), e.max(b));
        }
        self.ext.insert(s, e);
    }

    /// The end of a taken extent overlapping `b..b + n`, if one does.
    fn conflict(&self, b: u64, n: u64) -> Option<u64> {
        // The extent starting last before b + n is the only one that can
        // reach past b (the extents are disjoint).
        let (_, &end) = self.ext.range(..b + n).next_back()?;
        (end > b).then_some(end)
    }

    /// `ext2fs_get_free_blocks2(fs, start, finish, num, map, &ret)` for
    /// `start < finish`: the first `b` in `start..finish` with `b..b + num`
    /// free and inside the file system. Skipping to a conflict's end finds
    /// the same `b` as mke2fs's step of one block.
    fn free_run(&self, start: u64, finish: u64, num: u64) -> Option<u64> {
        let mut b = start;
        while b < finish {
            if b + num > self.blocks {
                return None;
            }
            match self.conflict(b, num) {
                None => return Some(b),
                Some(end) => b = end.max(b + 1),
            }
        }
        None
    }
}

/// `flexbg_offset`: where the search for group `g`'s `elem`-block table
/// starts — right after the previous group's (`prev`, when that still has
/// room for the rest of the flex group's), else the first run in the flex
/// group with room for all of them.
fn flexbg_offset(lay: &Layout, taken: &Taken, g: u32, prev: u64, rem: u64, elem: u64) -> u64 {
    let flex = lay.flex_groups;
    let size = (rem * elem).min(lay.blocks_per_group / 4);
    if prev != 0 && prev < lay.blocks {
        if let Some(b) = taken.free_run(prev, prev + size, elem) {
            return b;
        }
    }
    let start = lay.group_start(g / flex * flex);
    let last_grp = (g | (flex - 1)).min(lay.groups - 1);
    let last_blk = lay.group_end(last_grp) - 1;
    taken
        .free_run(start, last_blk, size)
        .or_else(|| taken.free_run(start, last_blk, elem))
        .or_else(|| taken.free_run(0, last_blk, elem))
        .unwrap_or(0)
}

/// Every group's tables, in `ext2fs_allocate_tables`' order.
pub(crate) fn allocate_tables(lay: &Layout) -> Result<Vec<GroupTables>, String> {
    let mut taken = Taken::new(lay);
    let mut out: Vec<GroupTables> = Vec::with_capacity(lay.groups as usize);
    let flex = lay.flex_groups;
    let ipb = lay.itable_blocks;
    for g in 0..lay.groups {
        let group_blk = lay.group_start(g);
        let mut last_blk = lay.group_end(g) - 1;
        let no_room = |what: &str| format!("no room for group {g}'s {what} (mke2fs would fail too)");
        let mut t = GroupTables::default();
        if flex <= 1 {
            t.block_bitmap = taken.free_run(group_blk, last_blk, 1).ok_or_else(|| no_room("block bitmap"))?;
            taken.take(t.block_bitmap, 1);
            t.inode_bitmap = taken.free_run(group_blk, last_blk, 1).ok_or_else(|| no_room("inode bitmap"))?;
            taken.take(t.inode_bitmap, 1);
            t.inode_table = taken.free_run(group_blk, last_blk, ipb).ok_or_else(|| no_room("inode table"))?;
            taken.take(t.inode_table, ipb);
            out.push(t);
            continue;
        }
        let last_grp = (g | (flex - 1)).min(lay.groups - 1);
        let rem = (last_grp - g + 1) as u64;
        let first_of_flex = g % flex == 0;
        // The last flex group keeps its tables contiguous.
        let mut table_offset = flex as u64;
        if first_of_flex && last_grp == lay.groups - 1 {
            table_offset = match (last_grp & (flex - 1)) as u64 {
                0 => flex as u64,
                k => k + 1,
            };
        }
        let prev = if first_of_flex { 0 } else { out[g as usize - 1].block_bitmap + 1 };
        let start = flexbg_offset(lay, &taken, g, prev, rem, 1);
        last_blk = lay.group_end(last_grp) - 1;
        t.block_bitmap = taken
            .free_run(start, last_blk, 1)
            .or_else(|| taken.free_run(group_blk, last_blk, 1))
            .ok_or_else(|| no_room("block bitmap"))?;
        taken.take(t.block_bitmap, 1);
        let prev = if first_of_flex { t.block_bitmap + table_offset } else { out[g as usize - 1].inode_bitmap + 1 };
        let start = flexbg_offset(lay, &taken, g, prev, rem, 1);
        t.inode_bitmap = taken
            .free_run(start, last_blk, 1)
            .or_else(|| taken.free_run(group_blk, last_blk, 1))
            .ok_or_else(|| no_room("inode bitmap"))?;
        taken.take(t.inode_bitmap, 1);
        let prev = if first_of_flex { t.inode_bitmap + table_offset } else { out[g as usize - 1].inode_table + ipb };
        let start = flexbg_offset(lay, &taken, g, prev, rem, ipb);
        t.inode_table = taken.free_run(start, last_blk, ipb).ok_or_else(|| no_room("inode table"))?;
        taken.take(t.inode_table, ipb);
        out.push(t);
    }
    Ok(out)
}
