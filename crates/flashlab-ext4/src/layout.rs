//! The on-disk layout: block groups and where each group's metadata lives,
//! as mke2fs lays out a file system without `flex_bg` (lib/ext2fs/initialize.c
//! `ext2fs_initialize`, lib/ext2fs/alloc_tables.c `ext2fs_allocate_group_table`):
//! in group g, the superblock and group-descriptor backups (sparse_super
//! groups only), the reserved GDT blocks (resize_inode), then the block
//! bitmap, the inode bitmap and the inode table.

use crate::settings::Ext4Settings;

/// File-system block (and page) size.
pub const BLOCK: u64 = 4096;
/// On-disk inode size (mke2fs's default `-I 256`).
pub const INODE_BYTES: u64 = 256;
/// Group descriptor size with the `64bit` feature.
pub const DESC_BYTES: u64 = 64;
/// Reserved inodes 1..=10; the first ordinary inode (`EXT4_GOOD_OLD_FIRST_INO`).
pub const FIRST_INO: u32 = 11;
pub const ROOT_INO: u32 = 2;
pub const JOURNAL_INO: u32 = 8;
pub const LOST_FOUND_INO: u32 = 11;

/// The geometry mke2fs computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Blocks of the file system (the device's, less a too-small last group).
    pub blocks: u64,
    pub blocks_per_group: u64,
    pub groups: u32,
    pub inodes_per_group: u32,
    /// Inode-table blocks per group.
    pub itable_blocks: u64,
    /// Group-descriptor-table blocks.
    pub gdt_blocks: u64,
    /// Reserved GDT blocks for online resize (`calc_reserved_gdt_blocks`).
    pub rsv_gdt_blocks: u64,
    /// Blocks reserved for root (`-m`).
    pub root_reserved_blocks: u64,
    /// ext4's reserved pool for metadata (`ext4_calculate_resv_clusters`).
    pub resv_clusters: u64,
}

impl Layout {
    /// The layout of a file system on `device_bytes`; an error names the
    /// setting that makes it impossible.
    pub fn new(device_bytes: u64, s: &Ext4Settings) -> Result<Layout, String> {
        let bpg = s.group_mib as u64 * (1 << 20) / BLOCK;
        let blocks = device_bytes / BLOCK;
        let groups = blocks.div_ceil(bpg);
        let desc_per_block = BLOCK / DESC_BYTES;
        let gdt_blocks = groups.div_ceil(desc_per_block);
        // calc_reserved_gdt_blocks: room to grow 1024-fold (or to 2^32 blocks).
        let max_blocks = if blocks < 0xffff_ffff / 1024 { blocks * 1024 } else { 0xffff_ffff };
        let rsv_gdt_blocks = (max_blocks.div_ceil(bpg).div_ceil(desc_per_block) - gdt_blocks).min(BLOCK / 4);
        // ext2fs_initialize: inodes from the ratio, rounded up to fill
        // whole inode-table blocks, at most 8 × block size per group.
        let inodes = blocks * BLOCK / (s.inode_ratio_kib as u64 * 1024);
        let per_block = BLOCK / INODE_BYTES;
        let mut ipg = inodes.div_ceil(groups.max(1)).div_ceil(per_block) * per_block;
        ipg = ipg.clamp(per_block, 8 * BLOCK);
        let itable_blocks = ipg / per_block;
        let overhead = 1 + gdt_blocks + rsv_gdt_blocks + 2 + itable_blocks;
        let rem = blocks % bpg;
        if groups == 1 && rem != 0 && rem < overhead + 50 {
            return Err(format!(
                "device of {device_bytes} bytes is too small for one block group's metadata ({overhead} blocks)"
            ));
        }
        // A last group too small for its own metadata is dropped, and the
        // geometry computed again (ext2fs_initialize's `retry`).
        if rem != 0 && rem < overhead + 50 {
            return Layout::new((blocks - rem) * BLOCK, s);
        }
        let resv_clusters = (blocks / 50).min(4096);
        Ok(Layout {
            blocks,
            blocks_per_group: bpg,
            groups: groups as u32,
            inodes_per_group: ipg as u32,
            itable_blocks,
            gdt_blocks,
            rsv_gdt_blocks,
            root_reserved_blocks: blocks * s.reserved_percent as u64 / 100,
            resv_clusters,
        })
    }

    /// First block of group `g`.
    pub fn group_start(&self, g: u32) -> u64 {
        g as u64 * self.blocks_per_group
    }

    /// One past the last block of group `g`.
    pub fn group_end(&self, g: u32) -> u64 {
        (self.group_start(g) + self.blocks_per_group).min(self.blocks)
    }

    pub fn group_of(&self, block: u64) -> u32 {
        (block / self.blocks_per_group) as u32
    }

    /// sparse_super: backups in groups 0, 1 and powers of 3, 5 and 7
    /// (`ext2fs_bg_has_super`).
    pub fn has_super(&self, g: u32) -> bool {
        if g <= 1 {
            return true;
        }
        [3u32, 5, 7].iter().any(|&p| {
            let mut x = p;
            while x < g {
                x = x.saturating_mul(p);
            }
            x == g
        })
    }

    /// Block bitmap of group `g`.
    pub fn block_bitmap(&self, g: u32) -> u64 {
        let sb = if self.has_super(g) { 1 + self.gdt_blocks + self.rsv_gdt_blocks } else { 0 };
        self.group_start(g) + sb
    }

    pub fn inode_bitmap(&self, g: u32) -> u64 {
        self.block_bitmap(g) + 1
    }

    pub fn inode_table(&self, g: u32) -> u64 {
        self.block_bitmap(g) + 2
    }

    /// First block after group `g`'s metadata.
    pub fn first_data_block(&self, g: u32) -> u64 {
        self.inode_table(g) + self.itable_blocks
    }

    /// The primary group-descriptor block holding group `g`'s descriptor.
    pub fn gdt_block(&self, g: u32) -> u64 {
        1 + g as u64 / (BLOCK / DESC_BYTES)
    }

    pub fn inodes(&self) -> u64 {
        self.groups as u64 * self.inodes_per_group as u64
    }

    pub fn group_of_inode(&self, ino: u32) -> u32 {
        (ino - 1) / self.inodes_per_group
    }

    /// The inode-table block holding inode `ino`.
    pub fn inode_block(&self, ino: u32) -> u64 {
        let g = self.group_of_inode(ino);
        let idx = ((ino - 1) % self.inodes_per_group) as u64;
        self.inode_table(g) + idx * INODE_BYTES / BLOCK
    }
}
