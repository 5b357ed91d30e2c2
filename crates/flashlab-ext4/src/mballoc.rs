//! Where mballoc puts a file's data when the goal is taken (fs/ext4/mballoc.c,
//! `ext4_mb_new_blocks` for a delalloc writeback):
//!
//! - `ext4_mb_group_or_file`: a file of at most `s_mb_stream_request`
//!   blocks uses the locality group's preallocations (lgprealloc.rs); a
//!   larger request ending at the size of a file nobody has open is not
//!   normalised (`EXT4_MB_HINT_NOPREALLOC`);
//! - `ext4_mb_normalize_request`: the request grows to the predicted file
//!   size (a power-of-two window up to 1 MiB from block 0, then 2, 4 or 8 MiB
//!   windows aligned to their size), clipped at the neighbouring extents;
//! - `ext4_mb_find_by_goal`: the goal is used only if the whole window is
//!   free there;
//! - criterion 0 (`CR_POWER2_ALIGNED`, `ext4_mb_simple_scan_group`): a window
//!   of 2^k ≥ 2 blocks takes, in the first group from the goal's on that has
//!   one, the lowest free buddy of the smallest order ≥ k (buddies are
//!   maximal free aligned chunks of up to 2^13 blocks);
//! - otherwise criteria 1–3 as `alloc_run` models them.
//!
//! The request's blocks sit in the window at their logical offset
//! (`ext4_mb_use_inode_pa`); the rest of the window (the inode
//! preallocation) is not kept. Stream allocation's global goal
//! (`s_mb_last_group`) is not modelled.

use crate::error::Ext4Result;
use crate::fs::Ext4;

/// `s_mb_stream_request`: files up to this many blocks use the locality
/// group's preallocation.
const STREAM_REQUEST_BLOCKS: u64 = 16;
/// Highest buddy order (`MB_NUM_ORDERS` − 1 with 4 KiB blocks).
const MAX_ORDER: u32 = 13;

/// `ext4_mb_normalize_request`'s window for a file of `size` blocks and a
/// request at `lblk`, as (first logical block, blocks), before clipping.
pub(crate) fn window(size: u64, lblk: u64) -> (u64, u64) {
    const MIB: u64 = 256;
    match size {
        s if s <= MIB => (0, s.next_power_of_two().max(4)),
        s if s <= 4 * MIB => (lblk / 512 * 512, 512),
        s if s <= 8 * MIB => (lblk / 1024 * 1024, 1024),
        _ => (lblk / 2048 * 2048, 2048),
    }
}

impl Ext4 {
    /// Blocks for `want` unmapped pages of `inum` from `lblk`, near `goal`.
    pub(crate) fn alloc_data_run(&mut self, inum: u32, lblk: u64, goal: u64, want: u64) -> Ext4Result<(u64, u64)> {
        let Some((start, len)) = self.normalized(inum, lblk, want)? else {
            return self.lg_alloc(goal, want);
        };
        let goal = if goal >= self.lay.blocks { 0 } else { goal };
        let off = lblk - start;
        let take = want.min(len - off);
        let g0 = self.lay.group_of(goal);
        self.need_block_bitmap(g0)?;
        let at = if self.free_at(goal, len) {
            Some(goal)
        } else if len >= 2 && len.is_power_of_two() && len.trailing_zeros() <= MAX_ORDER {
            self.mb_prefetch(g0)?;
            self.buddy_scan(g0, len.trailing_zeros())
        } else {
            None
        };
        match at {
            Some(p) => {
                self.need_block_bitmap(self.lay.group_of(p))?;
                self.take(p + off, take);
                self.stats.allocations += 1;
                Ok((p + off, take))
            }
            None => self.alloc_run(goal, want),
        }
    }

    /// The normalised window (first logical block, blocks) of a request, or
    /// None for a small file (the locality group's preallocations, lgprealloc.rs).
    fn normalized(&self, inum: u32, lblk: u64, want: u64) -> Ext4Result<Option<(u64, u64)>> {
        let ino = self.inode(inum)?;
        let end = lblk + want;
        let isize = ino.size.div_ceil(crate::layout::BLOCK);
        // ext4_mb_group_or_file: a small file (open or not) uses the
        // locality group; a larger closed one written up to its size is not
        // normalised (EXT4_MB_HINT_NOPREALLOC).
        if end.max(isize) <= STREAM_REQUEST_BLOCKS {
            return Ok(None);
        }
        if end == isize && ino.open == 0 {
            return Ok(Some((lblk, want)));
        }
        let size = end.max(isize);
        let (mut start, mut len) = window(size, lblk);
        // Not over blocks already mapped on either side.
        if let Some(e) = ino.extents.iter().rev().find(|e| e.lend() <= lblk) {
            if start < e.lend() {
                len -= (e.lend() - start).min(len);
                start = e.lend();
            }
        }
        if let Some(e) = ino.extents.iter().find(|e| e.lblk >= end) {
            len = len.min(e.lblk.saturating_sub(start));
        }
        if !(start <= lblk && lblk < start + len) {
            return Ok(Some((lblk, want)));
        }
        Ok(Some((start, len)))
    }

    /// `len` free blocks from `p`, inside one group.
    pub(crate) fn free_at(&self, p: u64, len: u64) -> bool {
        let end = p + len;
        end <= self.lay.group_end(self.lay.group_of(p)) && self.bmap.next_one(p, end) == end
    }

    /// `ext4_mb_simple_scan_group` over the groups from `g0` on: the lowest
    /// free buddy of the smallest order ≥ `order` in the first group having one.
    pub(crate) fn buddy_scan(&self, g0: u32, order: u32) -> Option<u64> {
        let groups = self.lay.groups;
        (0..groups).map(|k| (g0 + k) % groups).filter(|&g| self.bfree[g as usize] >= 1 << order).find_map(|g| {
            let (gs, ge) = (self.lay.group_start(g), self.lay.group_end(g));
            (order..=MAX_ORDER).find_map(|i| self.free_buddy(gs, ge, i))
        })
    }

    /// The lowest free buddy of order `i` in the group `gs..ge`: a free
    /// aligned chunk of 2^i blocks whose parent chunk is not wholly free.
    fn free_buddy(&self, gs: u64, ge: u64, i: u32) -> Option<u64> {
        let sz = 1u64 << i;
        let free = |p: u64, n: u64| p + n <= ge && self.bmap.next_one(p, p + n) == p + n;
        let mut b = gs;
        while b + sz <= ge {
            let used = self.bmap.next_one(b, b + sz);
            if used < b + sz {
                b = gs + (used - gs) / sz * sz + sz;
                continue;
            }
            let parent = gs + (b - gs) / (2 * sz) * (2 * sz);
            if i == MAX_ORDER || !free(parent, 2 * sz) {
                return Some(b);
            }
            b += sz;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::window;

    #[test]
    fn windows_follow_ext4_mb_normalize_request() {
        // Up to 1 MiB: the next power of two from block 0 (16 KiB at least).
        assert_eq!(window(1, 0), (0, 4));
        assert_eq!(window(17, 5), (0, 32));
        assert_eq!(window(256, 100), (0, 256));
        // 2, 4, 8 MiB windows aligned to their size.
        assert_eq!(window(257, 300), (0, 512));
        assert_eq!(window(1024, 700), (512, 512));
        assert_eq!(window(2048, 1500), (1024, 1024));
        assert_eq!(window(16384, 5000), (4096, 2048));
    }
}
