//! The on-disk layout: block groups and where each group's metadata lives,
//! as mke2fs lays it out (lib/ext2fs/initialize.c `ext2fs_initialize`,
//! lib/ext2fs/alloc_tables.c `ext2fs_allocate_group_table`): sparse_super
//! groups begin with the superblock, the group-descriptor blocks and the
//! reserved GDT blocks (resize_inode). Without `flex_bg` each group then
//! holds its own block bitmap, inode bitmap and inode table. With `flex_bg`
//! (mke2fs's ext4 default, 16 groups a flex group, `-G`) the bitmaps and
//! tables of a flex group's groups are packed in its first group: all block
//! bitmaps, then all inode bitmaps, then all inode tables, each kind
//! contiguous (`flexbg_offset`).

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
    /// Groups per flex group (`s_log_groups_per_flex`; 1 = no flex_bg).
    pub flex_groups: u32,
    /// Each group's bitmaps and inode table, where mke2fs put them.
    tables: Vec<GroupTables>,
    /// Blocks of fixed metadata (superblock copies, GDT, bitmaps, inode
    /// tables, whichever group's) lying in each group.
    meta_in: Vec<u64>,
}

/// Where one group's block bitmap, inode bitmap and inode table are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupTables {
    pub block_bitmap: u64,
    pub inode_bitmap: u64,
    pub inode_table: u64,
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
        let mut lay = Layout {
            blocks,
            blocks_per_group: bpg,
            groups: groups as u32,
            inodes_per_group: ipg as u32,
            itable_blocks,
            gdt_blocks,
            rsv_gdt_blocks,
            root_reserved_blocks: blocks * s.reserved_percent as u64 / 100,
            resv_clusters,
            flex_groups: s.flex_bg_groups,
            tables: Vec::new(),
            meta_in: Vec::new(),
        };
        lay.tables = crate::layout_tables::allocate_tables(&lay)?;
        lay.meta_in = lay.count_meta_in_groups();
        Ok(lay)
    }

    /// Blocks of group `g`'s superblock copy, GDT and reserved GDT (0 in a
    /// group without a backup).
    pub fn super_blocks(&self, g: u32) -> u64 {
        if self.has_super(g) {
            1 + self.gdt_blocks + self.rsv_gdt_blocks
        } else {
            0
        }
    }

    /// Every extent of fixed metadata: (first block, blocks).
    pub fn fixed_extents(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.groups).flat_map(move |g| {
            let t = self.tables[g as usize];
            let sb = (self.group_start(g), self.super_blocks(g));
            [sb, (t.block_bitmap, 1), (t.inode_bitmap, 1), (t.inode_table, self.itable_blocks)]
                .into_iter()
                .filter(|e| e.1 > 0)
        })
    }

    fn count_meta_in_groups(&self) -> Vec<u64> {
        let mut v = vec![0; self.groups as usize];
        for (mut b, n) in self.fixed_extents() {
            let end = b + n;
            while b < end {
                let g = self.group_of(b);
                let e = end.min(self.group_end(g));
                v[g as usize] += e - b;
                b = e;
            }
        }
        v
    }

    /// Fixed-metadata blocks lying in group `g` (its own or its flex group's).
    pub fn meta_blocks_in(&self, g: u32) -> u64 {
        self.meta_in[g as usize]
    }

    /// Blocks of group `g` left for data and directories after mkfs's fixed metadata.
    pub fn data_blocks_in(&self, g: u32) -> u64 {
        self.group_end(g) - self.group_start(g) - self.meta_in[g as usize]
    }

    /// Whether mke2fs leaves group `g` `BLOCK_UNINIT` when nothing else is
    /// allocated in it: never the last group; with flex_bg never a group
    /// holding bitmaps or tables (`ext2fs_allocate_group_table` clears the
    /// flag of each group it puts one in).
    pub fn may_be_block_uninit(&self, g: u32) -> bool {
        if g + 1 >= self.groups {
            return false;
        }
        self.flex_groups <= 1 || self.meta_in[g as usize] == self.super_blocks(g)
    }

    /// First group of `g`'s flex group.
    pub fn flex_first(&self, g: u32) -> u32 {
        g / self.flex_groups * self.flex_groups
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
        self.tables[g as usize].block_bitmap
    }

    pub fn inode_bitmap(&self, g: u32) -> u64 {
        self.tables[g as usize].inode_bitmap
    }

    /// First block of group `g`'s inode table.
    pub fn inode_table(&self, g: u32) -> u64 {
        self.tables[g as usize].inode_table
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
