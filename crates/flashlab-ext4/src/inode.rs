//! In-memory inodes: size, links, the extent list and the blocks of the
//! extent tree that holds it (fs/ext4/extents.c), and a directory's entries.

use std::collections::HashMap;

/// Longest initialized extent (`EXT_INIT_MAX_LEN`).
pub const MAX_EXTENT_LEN: u32 = 32768;
/// Extents (or index entries) in the inode's `i_block` (`ext4_ext_space_root`).
pub const ROOT_ENTRIES: usize = 4;
/// Extents per 4 KiB tree block: (4096 − 12 header) / 12 (`ext4_ext_space_block`).
pub const BLOCK_ENTRIES: usize = 340;

/// One extent: `len` blocks from logical `lblk` at physical `pblk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub lblk: u64,
    pub len: u32,
    pub pblk: u64,
}

impl Extent {
    pub fn lend(&self) -> u64 {
        self.lblk + self.len as u64
    }
}

/// A directory's entries (a linear directory: `ext4_add_entry` without htree).
#[derive(Debug, Clone, Default)]
pub struct Dir {
    /// name → (inode, index of the directory block holding the entry).
    pub entries: HashMap<String, (u32, u32)>,
    /// Bytes of entries in each directory block.
    pub used: Vec<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct Inode {
    pub is_dir: bool,
    pub size: u64,
    pub nlink: u32,
    pub open: u32,
    /// Sorted, non-overlapping.
    pub extents: Vec<Extent>,
    /// Extent-tree leaf blocks.
    pub leaves: Vec<u64>,
    /// Extent-tree index blocks (depth 2).
    pub index: Vec<u64>,
    pub dir: Option<Box<Dir>>,
    /// The transaction that last changed the inode (`i_sync_tid`).
    pub sync_tid: u64,
    /// A directory's `i_last_alloc_group`: the group of the last inode
    /// allocated in it since it entered the inode cache (None = `~0`).
    pub last_alloc_group: Option<u32>,
}

impl Inode {
    /// Index of the extent containing `lblk`, or where it would go.
    fn find(&self, lblk: u64) -> Result<usize, usize> {
        let i = self.extents.partition_point(|e| e.lend() <= lblk);
        if i < self.extents.len() && self.extents[i].lblk <= lblk {
            Ok(i)
        } else {
            Err(i)
        }
    }

    /// Physical block of logical block `lblk`, if mapped.
    pub fn map(&self, lblk: u64) -> Option<u64> {
        self.find(lblk).ok().map(|i| {
            let e = &self.extents[i];
            e.pblk + (lblk - e.lblk)
        })
    }

    /// Mapped blocks from `lblk` on that are physically contiguous with it
    /// (at most `max`): (physical, count), or the unmapped count up to the
    /// next extent.
    pub fn map_run(&self, lblk: u64, max: u64) -> (Option<u64>, u64) {
        match self.find(lblk) {
            Ok(i) => {
                let e = &self.extents[i];
                (Some(e.pblk + (lblk - e.lblk)), (e.lend() - lblk).min(max))
            }
            Err(i) => {
                let next = self.extents.get(i).map_or(u64::MAX, |e| e.lblk);
                (None, (next - lblk).min(max))
            }
        }
    }

    /// `ext4_ext_find_goal`: next to the extent before `lblk`
    /// (`pblk + (lblk − ee_block)`), or `None` for an empty file.
    pub fn goal(&self, lblk: u64) -> Option<u64> {
        let i = self.extents.partition_point(|e| e.lblk <= lblk);
        let e = self.extents.get(i.checked_sub(1)?)?;
        Some(if lblk >= e.lblk { e.pblk + (lblk - e.lblk) } else { e.pblk })
    }

    /// Maps `len` blocks from `lblk` (unmapped) at `pblk`, merging with
    /// neighbours as `ext4_ext_try_to_merge` does; returns the index of the
    /// extent that holds it.
    pub fn insert(&mut self, lblk: u64, pblk: u64, len: u32) -> usize {
        let i = self.extents.partition_point(|e| e.lblk < lblk);
        if i > 0 {
            let p = &mut self.extents[i - 1];
            if p.lend() == lblk && p.pblk + p.len as u64 == pblk && p.len + len <= MAX_EXTENT_LEN {
                p.len += len;
                self.merge_next(i - 1);
                return i - 1;
            }
        }
        self.extents.insert(i, Extent { lblk, len, pblk });
        self.merge_next(i);
        i
    }

    fn merge_next(&mut self, i: usize) {
        if i + 1 < self.extents.len() {
            let (a, b) = (self.extents[i], self.extents[i + 1]);
            if a.lend() == b.lblk && a.pblk + a.len as u64 == b.pblk && a.len + b.len <= MAX_EXTENT_LEN {
                self.extents[i].len += b.len;
                self.extents.remove(i + 1);
            }
        }
    }

    /// Unmaps every block from `lblk` on; returns the freed physical runs.
    pub fn cut_from(&mut self, lblk: u64) -> Vec<(u64, u64)> {
        let mut freed = Vec::new();
        let mut keep = self.extents.partition_point(|e| e.lend() <= lblk);
        if let Some(e) = self.extents.get_mut(keep).filter(|e| e.lblk < lblk) {
            let k = lblk - e.lblk;
            freed.push((e.pblk + k, e.len as u64 - k));
            e.len = k as u32;
            keep += 1;
        }
        freed.extend(self.extents.drain(keep..).map(|e| (e.pblk, e.len as u64)));
        freed
    }

    /// Tree blocks the extent count needs: (leaves, index blocks). Up to 4
    /// extents live in the inode; then leaves of 340, pointed to from the
    /// inode (≤ 4 leaves) or from index blocks (depth 2).
    pub fn tree_shape(&self) -> (usize, usize) {
        let n = self.extents.len();
        if n <= ROOT_ENTRIES {
            return (0, 0);
        }
        let leaves = n.div_ceil(BLOCK_ENTRIES);
        let index = if leaves <= ROOT_ENTRIES { 0 } else { leaves.div_ceil(BLOCK_ENTRIES) };
        (leaves, index)
    }

    /// The tree block holding extent `i` (its leaf), if the tree has leaves.
    pub fn leaf_of(&self, i: usize) -> Option<u64> {
        let (leaves, _) = self.tree_shape();
        (leaves > 0 && leaves == self.leaves.len()).then(|| self.leaves[(i / BLOCK_ENTRIES).min(leaves - 1)])
    }

    /// Blocks mapped.
    pub fn mapped_blocks(&self) -> u64 {
        self.extents.iter().map(|e| e.len as u64).sum()
    }
}
