//! Metadata reads on a cold cache: the block device's buffer cache, the
//! inode cache and the uninitialised-group flags.
//!
//! ext4 keeps its metadata in the buffer cache of the block device: bitmaps,
//! inode-table blocks, directory blocks and extent-tree blocks are read from
//! the device at first use after mount and after `drop_caches`, which drops
//! every clean buffer nobody holds. The rules, by kernel function:
//!
//! - **superblock, group descriptors, journal superblock**: read at mount and
//!   held by the superblock and the journal (`ext4_fill_super`,
//!   `jbd2_journal_load`): always cached.
//! - **inodes** (`ext4_iget` → `__ext4_get_inode_loc`, fs/ext4/inode.c): an
//!   inode not in the inode cache needs its inode-table block; if that block
//!   is not cached, the block and the inode-table readahead window are read
//!   at once: from the block rounded down to `inode_readahead_blks` (not before
//!   the table) to that plus the window, clipped to the table's used part
//!   (`inodes_per_group − bg_itable_unused`), both ends included (`b <= end`).
//!   Dirtying an inode (`ext4_mark_inode_dirty` → `ext4_get_inode_loc`) needs
//!   the block too, but skips the read when every other inode of the block
//!   is free in the inode bitmap (the in-memory inode is all the block holds).
//!   The inode cache keeps the root, the journal's inode and every open inode
//!   with its directories (dentries pin their parents) across `drop_caches`.
//! - **directories** (`__ext4_find_entry`, namei.c, a linear directory): a
//!   lookup whose dentry is not cached reads the directory's blocks in
//!   batches of `NAMEI_RA_SIZE` (8) until the batch holding the entry, or all
//!   of them for a name that is not there (create); `ext4_readdir` reads
//!   every block.
//! - **block bitmaps** (`ext4_mb_load_buddy`, mballoc.c): allocating at the
//!   goal or freeing in a group loads its bitmap; when the goal fails, the
//!   regular allocator first prefetches the bitmaps of up to 32 groups from
//!   the goal's (`ext4_mb_prefetch`, `s_mb_prefetch` without flex_bg; with
//!   flex_bg up to the end of the goal's flex group, whose bitmaps are
//!   contiguous and so one read), each
//!   once per mount, skipping groups with no free block. A group mke2fs left
//!   `BLOCK_UNINIT` (no block used but its own metadata, not the last group)
//!   has its bitmap computed in memory (`ext4_init_block_bitmap`), no read.
//! - **inode bitmaps** (`ext4_read_inode_bitmap`, ialloc.c): read to
//!   allocate or free an inode in a group, except in an `INODE_UNINIT`
//!   group (no inode used since mke2fs).
//! - **extent-tree blocks** (`ext4_find_extent`): mapping or truncating a
//!   block of a file whose extents live outside the inode reads the leaf
//!   (and the index block) holding it.
//! - **dirty buffers stay**: blocks in the running transaction, committed
//!   copies not yet written home, and blocks written home whose transaction
//!   is still on the checkpoint list (jbd2 holds their `journal_head` until
//!   the next commit cleans the list, `__jbd2_journal_clean_checkpoint_list`).
//!
//! Every read is waited for (the caller's clock). The blocks a model
//! allocates for metadata are new buffers (uptodate without a read).

use crate::bits::Bits;
use crate::error::Ext4Result;
use crate::fs::Ext4;
use crate::inode::BLOCK_ENTRIES;
use crate::layout::{BLOCK, INODE_BYTES, JOURNAL_INO, ROOT_INO};
use crate::stats::Cause;
use flashlab_sim::Op;

/// `NAMEI_RA_SIZE`: directory blocks `__ext4_find_entry` reads per batch.
const NAMEI_RA_BLOCKS: usize = 8;
/// `s_mb_prefetch` without flex_bg (`ext4_mb_init`).
const MB_PREFETCH_GROUPS: u32 = 32;
/// With flex_bg `ext4_mb_init` sets `s_mb_prefetch` to min(groups per flex,
/// this) × 8 IOs: `BLK_MAX_SEGMENT_SIZE >> (s_blocksize_bits − 9)`.
const MAX_SEGMENT_BLOCKS: u32 = 65536 >> (12 - 9);

/// What is cached, and the groups' uninitialised flags.
#[derive(Debug, Clone, Default)]
pub(crate) struct MetaCache {
    /// Metadata blocks whose buffers are uptodate.
    blocks: Bits,
    /// Inodes in the inode cache.
    inodes: Bits,
    /// `EXT4_BG_BLOCK_UNINIT` per group.
    block_uninit: Vec<bool>,
    /// `EXT4_BG_INODE_UNINIT` per group.
    inode_uninit: Vec<bool>,
    /// Groups whose buddy was initialised since mount (`EXT4_MB_GRP_NEED_INIT` clear).
    buddy_ready: Vec<bool>,
    /// Inodes of each group's table in use or once used (`inodes_per_group − bg_itable_unused`).
    itable_used: Vec<u32>,
    /// Blocks the superblock and the journal hold (never dropped).
    held: Vec<u64>,
    /// Set at mount (mkfs's own work reads nothing).
    active: bool,
}

impl Ext4 {
    /// After mkfs: the flags mke2fs leaves and what mount reads (superblock,
    /// descriptors, journal superblock, the root and journal inodes).
    pub(crate) fn meta_mount(&mut self) {
        let lay = &self.lay;
        let groups = lay.groups as usize;
        let mut m = MetaCache {
            blocks: Bits::new(lay.blocks),
            inodes: Bits::new(lay.inodes() + 1),
            block_uninit: vec![false; groups],
            inode_uninit: vec![false; groups],
            buddy_ready: vec![false; groups],
            itable_used: vec![0; groups],
            held: (0..1 + lay.gdt_blocks).chain(self.j.map.first().copied()).collect(),
            active: true,
        };
        let ipg = lay.inodes_per_group as u64;
        for g in 0..lay.groups {
            let gi = g as usize;
            m.block_uninit[gi] = lay.may_be_block_uninit(g) && self.bfree[gi] == lay.data_blocks_in(g);
            let base = g as u64 * ipg + 1;
            let mut last = base + ipg;
            while last > base && !self.imap.get(last - 1) {
                last -= 1;
            }
            m.itable_used[gi] = (last - base) as u32;
            m.inode_uninit[gi] = last == base;
        }
        self.meta = m;
        self.meta_drop_clean();
        // Mount reads these before the run begins (not sent, like mkfs's writes).
        for ino in [ROOT_INO, JOURNAL_INO] {
            self.meta.inodes.set(ino as u64);
            for b in self.itable_window(ino) {
                self.meta.blocks.set(b);
            }
        }
    }

    fn meta_on(&self) -> bool {
        self.s.metadata_reads && self.meta.active
    }

    /// A metadata block created in memory (a new buffer): cached, no read.
    pub(crate) fn meta_new(&mut self, b: u64) {
        if self.meta_on() {
            self.meta.blocks.set(b);
        }
    }

    /// Reads the blocks not cached, in the order given (the order the
    /// kernel submits them), one request per run of consecutive ones, and
    /// waits for them all.
    fn read_meta(&mut self, blocks: &[u64]) -> Ext4Result<()> {
        let mut done = self.io.clock_ns;
        let mut run: Option<(u64, u64)> = None;
        for &b in blocks {
            if self.meta.blocks.get(b) {
                continue;
            }
            self.meta.blocks.set(b);
            match run {
                Some((s, n)) if s + n == b => run = Some((s, n + 1)),
                _ => {
                    if let Some((s, n)) = run {
                        done = done.max(self.submit_now(Op::Read, s, n, Cause::MetaRead)?);
                    }
                    run = Some((b, 1));
                }
            }
        }
        if let Some((s, n)) = run {
            done = done.max(self.submit_now(Op::Read, s, n, Cause::MetaRead)?);
        }
        self.wait_until(done);
        Ok(())
    }

    /// `drop_caches`: every clean metadata buffer and every unpinned inode
    /// leaves the caches.
    pub(crate) fn meta_drop_clean(&mut self) {
        if !self.meta_on() {
            return;
        }
        let mut m = std::mem::take(&mut self.meta);
        m.blocks = Bits::new(self.lay.blocks);
        let dirty = self.j.running.iter().chain(self.j.cp.keys()).chain(self.j.cp_clean.iter());
        for &b in m.held.iter().chain(dirty) {
            m.blocks.set(b);
        }
        m.inodes = Bits::new(self.lay.inodes() + 1);
        for ino in self.pinned_inodes() {
            m.inodes.set(ino as u64);
        }
        // An evicted inode comes back from `ext4_iget` with
        // `i_last_alloc_group = ~0`.
        for (&n, ino) in self.inodes.iter_mut() {
            if !m.inodes.get(n as u64) {
                ino.last_alloc_group = None;
            }
        }
        self.meta = m;
    }

    /// The root, the journal's inode, open inodes and their directories.
    fn pinned_inodes(&self) -> Vec<u32> {
        let open: Vec<u32> = self.inodes.iter().filter(|(_, i)| i.open > 0).map(|(&n, _)| n).collect();
        let mut out = vec![ROOT_INO, JOURNAL_INO];
        if open.is_empty() {
            return out;
        }
        let mut parent = std::collections::HashMap::new();
        for (&d, ino) in &self.inodes {
            for &(child, _) in ino.dir.iter().flat_map(|d| d.entries.values()) {
                parent.insert(child, d);
            }
        }
        for mut ino in open {
            while ino != ROOT_INO && !out.contains(&ino) {
                out.push(ino);
                match parent.get(&ino) {
                    Some(&p) => ino = p,
                    None => break,
                }
            }
        }
        out
    }

    /// `ext4_iget` of an inode not in the inode cache: its table block, with
    /// the inode-table readahead window when the block is not cached.
    pub(crate) fn need_inode(&mut self, ino: u32) -> Ext4Result<()> {
        if !self.meta_on() || self.meta.inodes.get(ino as u64) {
            return Ok(());
        }
        self.meta.inodes.set(ino as u64);
        let b = self.lay.inode_block(ino);
        if !self.meta.blocks.get(b) {
            let blocks = self.itable_window(ino);
            self.read_meta(&blocks)?;
        }
        Ok(())
    }

    /// `__ext4_get_inode_loc`'s readahead: the blocks read with `ino`'s.
    fn itable_window(&self, ino: u32) -> Vec<u64> {
        let g = self.lay.group_of_inode(ino);
        let block = self.lay.inode_block(ino);
        let table = self.lay.inode_table(g);
        let ra = self.s.inode_readahead_blks as u64;
        if ra == 0 {
            return vec![block];
        }
        let b = (block & !(ra - 1)).max(table);
        let per_block = BLOCK / INODE_BYTES;
        let used_end = table + self.meta.itable_used[g as usize] as u64 / per_block;
        let end = (b + ra).min(used_end);
        let mut v: Vec<u64> = (b..=end).collect();
        if !(b..=end).contains(&block) {
            v.push(block);
        }
        v
    }

    /// `ext4_mark_inode_dirty` → `__ext4_get_inode_loc`: the table block of
    /// an inode about to be written, read unless cached or every other
    /// inode of the block is free.
    pub(crate) fn need_itable_write(&mut self, ino: u32) -> Ext4Result<()> {
        let b = self.lay.inode_block(ino);
        if !self.meta_on() || self.meta.blocks.get(b) {
            return Ok(());
        }
        let per_block = BLOCK / INODE_BYTES;
        let first = (ino as u64 - 1) / per_block * per_block + 1;
        let others = (first..first + per_block).any(|i| i != ino as u64 && self.imap.get(i));
        if others {
            let blocks = self.itable_window(ino);
            self.read_meta(&blocks)
        } else {
            self.meta.blocks.set(b);
            Ok(())
        }
    }

    /// A new inode in group `g`: the inode bitmap (`ext4_read_inode_bitmap`)
    /// and the table's used high-water mark (`bg_itable_unused`).
    pub(crate) fn meta_inode_alloc(&mut self, g: u32, ino: u32) {
        if !self.meta_on() {
            return;
        }
        self.meta.inodes.set(ino as u64);
        let gi = g as usize;
        self.meta.inode_uninit[gi] = false;
        let idx = (ino - 1) % self.lay.inodes_per_group + 1;
        self.meta.itable_used[gi] = self.meta.itable_used[gi].max(idx);
    }

    /// A bitmap block: cached, computed in memory for an uninitialised
    /// group (`ext4_init_block_bitmap` / `ext4_init_inode_bitmap`), or read.
    fn need_bitmap(&mut self, b: u64, uninit: bool) -> Ext4Result<()> {
        if self.meta.blocks.get(b) {
            return Ok(());
        }
        if uninit {
            self.meta.blocks.set(b);
            return Ok(());
        }
        self.read_meta(&[b])
    }

    /// `ext4_read_inode_bitmap` of group `g`.
    pub(crate) fn need_inode_bitmap(&mut self, g: u32) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        self.need_bitmap(self.lay.inode_bitmap(g), self.meta.inode_uninit[g as usize])
    }

    /// `ext4_mb_load_buddy` of group `g`: its block bitmap.
    pub(crate) fn need_block_bitmap(&mut self, g: u32) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        self.meta.buddy_ready[g as usize] = true;
        self.need_bitmap(self.lay.block_bitmap(g), self.meta.block_uninit[g as usize])
    }

    /// `ext4_mb_prefetch` from group `g0`: the bitmaps of groups whose
    /// buddy was never initialised, that have free blocks and are not
    /// `BLOCK_UNINIT`.
    pub(crate) fn mb_prefetch(&mut self, g0: u32) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let n = self.lay.groups;
        let mut blocks = Vec::new();
        for k in 0..self.mb_prefetch_groups(g0) {
            let g = ((g0 + k) % n) as usize;
            if self.meta.buddy_ready[g] || self.bfree[g] == 0 || self.meta.block_uninit[g] {
                continue;
            }
            self.meta.buddy_ready[g] = true;
            blocks.push(self.lay.block_bitmap(g as u32));
        }
        self.read_meta(&blocks)
    }

    /// How many groups from `g0` on `ext4_mb_regular_allocator` prefetches:
    /// `s_mb_prefetch` (capped at the group count), with flex_bg only to
    /// the end of `g0`'s flex group.
    fn mb_prefetch_groups(&self, g0: u32) -> u32 {
        let (n, flex) = (self.lay.groups, self.lay.flex_groups);
        if flex <= 1 {
            return MB_PREFETCH_GROUPS.min(n);
        }
        let s_mb_prefetch = (flex.min(MAX_SEGMENT_BLOCKS) * 8).min(n);
        (flex - (g0 & (flex - 1))).min(s_mb_prefetch)
    }

    /// Blocks allocated in group `g`: its bitmap is initialised
    /// (`ext4_mb_mark_diskspace_used` clears `BLOCK_UNINIT`).
    pub(crate) fn meta_blocks_taken(&mut self, g: u32) {
        if self.meta_on() && self.meta.block_uninit[g as usize] {
            self.meta.block_uninit[g as usize] = false;
            self.meta.blocks.set(self.lay.block_bitmap(g));
        }
    }

    /// `__ext4_find_entry` for `name` in directory `dir` (a linear
    /// directory): the batches of blocks up to the one holding the entry,
    /// or every block when it is not there. A child in the inode cache has
    /// its dentry cached: no read.
    pub(crate) fn need_dir_lookup(&mut self, dir: u32, name: &str) -> Ext4Result<Option<u32>> {
        let d = self.inode(dir)?.dir.as_deref().ok_or(flashlab_vfs::Errno::ENOTDIR)?;
        let found = d.entries.get(name).copied();
        let nblocks = d.used.len();
        if !self.meta_on() {
            return Ok(found.map(|f| f.0));
        }
        let upto = match found {
            Some((child, _)) if self.meta.inodes.get(child as u64) => return Ok(Some(child)),
            Some((_, idx)) => (idx as usize / NAMEI_RA_BLOCKS + 1) * NAMEI_RA_BLOCKS,
            None => nblocks,
        };
        self.need_dir_blocks(dir, upto.min(nblocks))?;
        Ok(found.map(|f| f.0))
    }

    /// Directory `dir`'s first `n` blocks (`ext4_bread_batch`, `ext4_readdir`).
    pub(crate) fn need_dir_blocks(&mut self, dir: u32, n: usize) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let ino = self.inode(dir)?;
        let blocks: Vec<u64> = (0..n as u64).filter_map(|l| ino.map(l)).collect();
        self.read_meta(&blocks)
    }

    /// `ext4_find_extent` for logical block `lblk` of `inum`: the leaf and
    /// the index block on its path, when the tree is deeper than the inode.
    pub(crate) fn need_extent_path(&mut self, inum: u32, lblk: u64) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let ino = self.inode(inum)?;
        if ino.leaves.is_empty() {
            return Ok(());
        }
        let i = ino.extents.partition_point(|e| e.lend() <= lblk).min(ino.extents.len().saturating_sub(1));
        // From the root down: the index block, then the leaf.
        let mut blocks: Vec<u64> = ino.index.get(i / BLOCK_ENTRIES / BLOCK_ENTRIES).copied().into_iter().collect();
        blocks.extend(ino.leaf_of(i));
        self.read_meta(&blocks)
    }

    /// `ext4_ext_remove_space` from logical block `from`: every leaf (and
    /// index block) holding extents from there to the end.
    pub(crate) fn need_extent_tail(&mut self, inum: u32, from: u64) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let ino = self.inode(inum)?;
        if ino.leaves.is_empty() {
            return Ok(());
        }
        let i0 = ino.extents.partition_point(|e| e.lend() <= from);
        let mut blocks: Vec<u64> = ino.index.iter().skip(i0 / BLOCK_ENTRIES / BLOCK_ENTRIES).copied().collect();
        blocks.extend((i0..ino.extents.len()).filter_map(|i| ino.leaf_of(i)));
        self.read_meta(&blocks)
    }

    /// `ext4_readdir` of `path` (a directory): every block.
    pub(crate) fn need_readdir(&mut self, path: &str) -> Ext4Result<()> {
        let inum = self.lookup(path)?;
        let n = self.inode(inum)?.dir.as_deref().map_or(0, |d| d.used.len());
        self.need_dir_blocks(inum, n)
    }

    /// A path walk (`link_path_walk` + `lookup_slow`): each directory's
    /// inode and the lookup of each component; `create` when the last
    /// component may not exist (its lookup scans the whole directory).
    pub(crate) fn need_path(&mut self, path: &str) -> Ext4Result<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let mut cur = ROOT_INO;
        for c in path.split('/').filter(|c| !c.is_empty()) {
            self.need_inode(cur)?;
            if self.inode(cur)?.dir.is_none() {
                return Ok(());
            }
            match self.need_dir_lookup(cur, c)? {
                Some(child) => cur = child,
                None => return Ok(()),
            }
        }
        self.need_inode(cur)
    }
}
