//! Block and inode allocation.
//!
//! Blocks (a simplified mballoc, fs/ext4/mballoc.c): `ext4_mb_find_by_goal`
//! takes the free run at the goal; otherwise the groups are scanned from the
//! goal's on for a free extent as long as the request (mballoc's criteria
//! 0–2: a group that can satisfy it), and last for any free extent (criterion
//! 3). No preallocation (neither inode nor locality-group PAs).
//!
//! Inodes (fs/ext4/ialloc.c): the group by `find_group_orlov` (directories)
//! or `find_group_other` (files) in ialloc.rs, then its first free inode.

use crate::error::Ext4Result;
use crate::fs::Ext4;
use flashlab_vfs::Errno;

impl Ext4 {
    /// Allocates one run of at most `want` free blocks near `goal` (within
    /// one group) and marks it used; ENOSPC when no block is free.
    pub(crate) fn alloc_run(&mut self, goal: u64, want: u64) -> Ext4Result<(u64, u64)> {
        let goal = if goal >= self.lay.blocks { 0 } else { goal };
        let g0 = self.lay.group_of(goal);
        // ext4_mb_find_by_goal loads the goal group's buddy.
        self.need_block_bitmap(g0)?;
        let at_goal = self.run_at_goal(goal, want);
        if at_goal.is_none() {
            self.mb_prefetch(g0)?;
        }
        let mut run = at_goal.or_else(|| self.scan(g0, goal, want, want)).or_else(|| self.scan(g0, goal, want, 1));
        if run.is_none() && !self.lg.is_empty() {
            // ext4_mb_discard_preallocations_should_retry: give the
            // preallocations back and look again.
            self.lg_discard_all();
            run = self.scan(g0, goal, want, 1);
        }
        let Some((p, n)) = run else { return Err(Errno::ENOSPC.into()) };
        self.need_block_bitmap(self.lay.group_of(p))?;
        self.take(p, n);
        self.stats.allocations += 1;
        Ok((p, n))
    }

    /// `ext4_mb_find_by_goal`: the free run starting at the goal.
    fn run_at_goal(&self, goal: u64, want: u64) -> Option<(u64, u64)> {
        if self.bmap.get(goal) {
            return None;
        }
        let end = self.lay.group_end(self.lay.group_of(goal)).min(goal + want);
        Some((goal, self.bmap.next_one(goal, end) - goal))
    }

    /// First free extent of at least `min` blocks (capped at `want`),
    /// groups from the goal's on (the goal's group from the goal).
    fn scan(&self, g0: u32, goal: u64, want: u64, min: u64) -> Option<(u64, u64)> {
        let groups = self.lay.groups;
        for k in 0..=groups {
            let g = (g0 + k) % groups;
            if self.bfree[g as usize] < min {
                continue;
            }
            let from = if k == 0 { goal } else { self.lay.group_start(g) };
            let end = if k == groups { goal } else { self.lay.group_end(g) };
            let mut b = from;
            while let Some(z) = self.bmap.next_zero(b, end) {
                let e = self.bmap.next_one(z, end.min(z + want));
                if e - z >= min {
                    return Some((z, e - z));
                }
                b = self.bmap.next_one(e, end);
            }
            if k == groups {
                break;
            }
        }
        None
    }

    /// Marks `start..start+len` used: bitmap, free counts, and the bitmap
    /// and descriptor blocks join the transaction (`ext4_mb_mark_diskspace_used`).
    pub(crate) fn take(&mut self, start: u64, len: u64) {
        self.bmap.set_range(start, len);
        self.take_preallocated(start, len);
    }

    /// Marks `start..start+len`, already taken in the allocator's bitmap (a
    /// preallocation's), used on disk: free counts, bitmap and descriptor
    /// blocks in the transaction.
    pub(crate) fn take_preallocated(&mut self, start: u64, len: u64) {
        let mut b = start;
        while b < start + len {
            let g = self.lay.group_of(b);
            let e = (start + len).min(self.lay.group_end(g));
            self.bfree[g as usize] -= e - b;
            self.meta_blocks_taken(g);
            self.j.dirty(self.lay.block_bitmap(g));
            self.touch_group(g);
            b = e;
        }
        self.stats.blocks_allocated += len;
    }

    /// Frees blocks (`ext4_free_blocks`): the bitmap and descriptor blocks
    /// join the transaction; the blocks become allocatable once it commits
    /// (`ext4_mb_free_metadata`). Metadata blocks are forgotten and revoked
    /// (`EXT4_FREE_BLOCKS_FORGET` → `jbd2_journal_revoke`).
    pub(crate) fn free_run(&mut self, start: u64, len: u64, metadata: bool) -> Ext4Result<()> {
        let mut b = start;
        while b < start + len {
            let g = self.lay.group_of(b);
            let e = (start + len).min(self.lay.group_end(g));
            self.need_block_bitmap(g)?;
            self.j.dirty(self.lay.block_bitmap(g));
            self.touch_group(g);
            b = e;
        }
        if metadata {
            for b in start..start + len {
                self.j.revoke(b);
                self.stats.revoke_records += 1;
            }
        }
        for b in start..start + len {
            if !self.tags.is_empty() {
                self.tags[b as usize] = 0;
            }
            self.bytes.remove(&b);
        }
        self.j.freed.push((start, len));
        self.stats.blocks_freed += len;
        Ok(())
    }

    /// After the freeing transaction committed: the blocks are free.
    pub(crate) fn release_run(&mut self, start: u64, len: u64) {
        let mut b = start;
        while b < start + len {
            let g = self.lay.group_of(b);
            let e = (start + len).min(self.lay.group_end(g));
            self.bmap.clear_range(b, e - b);
            self.bfree[g as usize] += e - b;
            b = e;
        }
    }

    /// Blocks freed by transactions not yet committed.
    pub(crate) fn pending_free_blocks(&self) -> u64 {
        self.j.freed.iter().map(|r| r.1).sum()
    }

    /// Allocates an inode for a new file or directory named `name` in
    /// `parent` (`__ext4_new_inode`): the group from Orlov or
    /// `find_group_other` (ialloc.rs), remembered as the parent's
    /// `i_last_alloc_group`, then the group's first free inode.
    pub(crate) fn alloc_inode(&mut self, parent: u32, is_dir: bool, name: &str) -> Ext4Result<u32> {
        let g = if is_dir { self.find_group_orlov(parent, Some(name)) } else { self.find_group_other(parent) };
        let g = g.ok_or(Errno::ENOSPC)?;
        self.inode_mut(parent)?.last_alloc_group = Some(g);
        self.need_inode_bitmap(g)?;
        let ipg = self.lay.inodes_per_group as u64;
        let base = g as u64 * ipg + 1;
        let bit = self.imap.next_zero(base, base + ipg).ok_or(Errno::ENOSPC)?;
        self.imap.set(bit);
        self.meta_inode_alloc(g, bit as u32);
        self.ifree[g as usize] -= 1;
        if is_dir {
            self.ndirs[g as usize] += 1;
        }
        self.j.dirty(self.lay.inode_bitmap(g));
        self.touch_group(g);
        Ok(bit as u32)
    }

    /// Frees inode `ino` (`ext4_free_inode`).
    pub(crate) fn free_inode(&mut self, ino: u32, is_dir: bool) -> Ext4Result<()> {
        let g = self.lay.group_of_inode(ino);
        self.need_inode_bitmap(g)?;
        self.imap.clear(ino as u64);
        self.ifree[g as usize] += 1;
        if is_dir {
            self.ndirs[g as usize] -= 1;
        }
        self.j.dirty(self.lay.inode_bitmap(g));
        self.touch_group(g);
        self.touch_inode(ino)
    }
}
