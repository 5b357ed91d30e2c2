//! The ext4 model's state and mkfs.

use crate::bits::Bits;
use crate::error::{Ext4Error, Ext4Result};
use crate::inode::{Dir, Inode};
use crate::io::Io;
use crate::journal::Journal;
use crate::layout::{Layout, BLOCK, FIRST_INO, LOST_FOUND_INO, ROOT_INO};
use crate::lgprealloc::LocalityGroup;
use crate::meta::MetaCache;
use crate::settings::{Content, Ext4Settings};
use crate::stats::Ext4Stats;
use flashlab_sim::Ssd;
use flashlab_vfs::{Errno, Fd};
use std::collections::HashMap;

/// Pages handed to `writepage` and not yet mapped: one run of consecutive
/// pages of one inode (`mpage_prepare_extent_to_map` collects such a run,
/// `mpage_map_and_submit_extent` allocates it as one extent).
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub inum: u32,
    pub first: u64,
    pub tags: Vec<u64>,
    /// Bytes of each page (`content = "bytes"`), 4 KiB each.
    pub bytes: Vec<u8>,
}

/// Longest run mapped at once (`MAX_WRITEPAGES_EXTENT_LEN`).
pub(crate) const MAX_RUN_PAGES: usize = 2048;

/// An ext4-like file system on a simulated SSD.
pub struct Ext4 {
    pub(crate) s: Ext4Settings,
    pub(crate) lay: Layout,
    pub(crate) ssd: Ssd,
    /// Block bitmap: allocated, or freed by a transaction not yet committed.
    pub(crate) bmap: Bits,
    pub(crate) bfree: Vec<u64>,
    pub(crate) imap: Bits,
    pub(crate) ifree: Vec<u32>,
    pub(crate) ndirs: Vec<u32>,
    pub(crate) inodes: HashMap<u32, Inode>,
    /// The journal inode's extents (start, blocks).
    pub(crate) journal_runs: Vec<(u64, u64)>,
    /// The resize inode's double-indirect block (with reserved GDT blocks).
    pub(crate) resize_dind: Option<u64>,
    /// The locality group's preallocations for small files.
    pub(crate) lg: LocalityGroup,
    pub(crate) j: Journal,
    pub(crate) io: Io,
    pub(crate) fds: HashMap<Fd, u32>,
    next_fd: u64,
    pub(crate) pending: Pending,
    /// Pages reserved by delayed allocation (`s_dirtyclusters_counter`).
    pub(crate) reserved: u64,
    /// Per-block content tag (`content = "tags"`).
    pub(crate) tags: Vec<u64>,
    /// Per-block bytes (`content = "bytes"`).
    pub(crate) bytes: HashMap<u64, Box<[u8]>>,
    pub(crate) stats: Ext4Stats,
    /// The buffer and inode caches (cold-cache metadata reads).
    pub(crate) meta: MetaCache,
}

impl Ext4 {
    /// mkfs on `ssd` and mount: the layout of mke2fs (with or without flex_bg), the
    /// root directory, lost+found and the journal in the middle of the
    /// device. mkfs's own writes are not sent (the device starts as mke2fs's
    /// discard leaves it).
    pub fn format(ssd: Ssd, s: Ext4Settings) -> Ext4Result<Ext4> {
        s.validate()?;
        let st = ssd.settings();
        let device_bytes = st.ftl.logical_pages * st.page_bytes();
        let lay = Layout::new(device_bytes, &s).map_err(Ext4Error::Layout)?;
        let jlen = s.journal_mib as u64 * (1 << 20) / BLOCK;
        if jlen > lay.blocks / 2 {
            return Err(Ext4Error::Layout(format!(
                "fs.ext4.journal_mib: a journal of {jlen} blocks does not fit a file system of {} blocks (at most half)",
                lay.blocks
            )));
        }
        let groups = lay.groups as usize;
        let mut fs = Ext4 {
            bmap: Bits::new(lay.blocks),
            bfree: vec![0; groups],
            imap: Bits::new(lay.inodes() + 1),
            ifree: vec![lay.inodes_per_group; groups],
            ndirs: vec![0; groups],
            inodes: HashMap::new(),
            journal_runs: Vec::new(),
            resize_dind: None,
            lg: LocalityGroup::default(),
            j: Journal::default(),
            io: Io::default(),
            fds: HashMap::new(),
            next_fd: 3,
            pending: Pending::default(),
            reserved: 0,
            tags: if s.content == Content::Tags { vec![0; lay.blocks as usize] } else { Vec::new() },
            bytes: HashMap::new(),
            stats: Ext4Stats::default(),
            meta: MetaCache::default(),
            ssd,
            lay,
            s,
        };
        fs.mkfs()?;
        Ok(fs)
    }

    fn mkfs(&mut self) -> Ext4Result<()> {
        let extents: Vec<(u64, u64)> = self.lay.fixed_extents().collect();
        for (b, n) in extents {
            self.bmap.set_range(b, n);
        }
        for g in 0..self.lay.groups {
            self.bfree[g as usize] = self.lay.data_blocks_in(g);
        }
        for ino in 1..FIRST_INO {
            self.imap.set(ino as u64);
        }
        self.ifree[0] -= FIRST_INO - 1;
        self.mkfs_dir(ROOT_INO, ROOT_INO, 1)?;
        self.imap.set(LOST_FOUND_INO as u64);
        self.ifree[0] -= 1;
        self.mkfs_dir(LOST_FOUND_INO, ROOT_INO, 4)?;
        self.dir_insert_entry(ROOT_INO, "lost+found", LOST_FOUND_INO)?;
        self.inodes.get_mut(&ROOT_INO).ok_or(Errno::EIO)?.nlink += 1;
        // ext2fs_create_resize_inode: the double-indirect block of the
        // reserved GDT blocks, first free from the end of group 0's table.
        if self.lay.rsv_gdt_blocks > 0 {
            let goal = self.lay.gdt_blocks + self.lay.rsv_gdt_blocks + 2 + self.lay.itable_blocks;
            self.resize_dind = Some(self.alloc_run(goal, 1)?.0);
        }
        self.place_journal()?;
        // Nothing of mkfs is journaled or counted.
        self.j.reset_running();
        self.stats = Ext4Stats::default();
        self.meta_mount();
        Ok(())
    }

    fn mkfs_dir(&mut self, ino: u32, parent: u32, blocks: u64) -> Ext4Result<()> {
        let _ = parent;
        let mut inode = Inode { is_dir: true, nlink: 2, dir: Some(Box::default()), ..Default::default() };
        let dir: &mut Dir = inode.dir.as_mut().ok_or(Errno::EIO)?;
        dir.used = vec![0; blocks as usize];
        dir.used[0] = 24; // "." and ".."
        self.inodes.insert(ino, inode);
        self.ndirs[self.lay.group_of_inode(ino) as usize] += 1;
        // ext2fs_mkdir's goal, `ext2fs_find_inode_goal`: the first block
        // of the inode's flex group (group 0 here).
        let goal = self.lay.group_start(self.lay.flex_first(self.lay.group_of_inode(ino)));
        let mut l = 0;
        while l < blocks {
            let (p, n) = self.alloc_run(goal, blocks - l)?;
            self.inodes.get_mut(&ino).ok_or(Errno::EIO)?.insert(l, p, n as u32);
            l += n;
        }
        self.inodes.get_mut(&ino).ok_or(Errno::EIO)?.size = blocks * BLOCK;
        Ok(())
    }

    /// `get_midpoint_journal_block` (e2fsprogs lib/ext2fs/mkjournal.c): the
    /// group holding the middle block, or a neighbour with more free blocks
    /// (with flex_bg: that flex group's first group with free blocks, or the
    /// next one); the journal is allocated from that group's first block on.
    fn place_journal(&mut self) -> Ext4Result<()> {
        let jlen = self.s.journal_mib as u64 * (1 << 20) / BLOCK;
        let n = self.lay.groups;
        let mut g = self.lay.group_of(self.lay.blocks / 2);
        let flex = self.lay.flex_groups;
        let start = if flex > 1 && g > flex {
            g &= !(flex - 1);
            while g < n && self.bfree[g as usize] == 0 {
                g += 1;
            }
            if g == n {
                g = 0;
            }
            g
        } else {
            g.saturating_sub(1)
        };
        let end = if g + 1 < n { g + 1 } else { g };
        let mut best = start;
        for i in start + 1..=end {
            if self.bfree[i as usize] > self.bfree[best as usize] {
                best = i;
            }
        }
        let mut goal = self.lay.group_start(best);
        let mut got = 0;
        while got < jlen {
            let (p, n) = self.alloc_run(goal, jlen - got)?;
            match self.journal_runs.last_mut() {
                Some(r) if r.0 + r.1 == p => r.1 += n,
                _ => self.journal_runs.push((p, n)),
            }
            got += n;
            goal = p + n;
        }
        self.j.init(&self.journal_runs, self.s.commit_interval_s, self.s.metadata_expire_s);
        Ok(())
    }

    // ---- accessors ----

    pub fn layout(&self) -> &Layout {
        &self.lay
    }

    pub fn settings(&self) -> &Ext4Settings {
        &self.s
    }

    pub fn stats(&self) -> &Ext4Stats {
        &self.stats
    }

    pub fn ssd(&self) -> &Ssd {
        &self.ssd
    }

    pub fn ssd_mut(&mut self) -> &mut Ssd {
        &mut self.ssd
    }

    /// The journal's extents on the device (start block, blocks).
    pub fn journal_extents(&self) -> &[(u64, u64)] {
        &self.journal_runs
    }

    /// The simulated clock (ns).
    pub fn now_ns(&self) -> u64 {
        self.io.clock_ns
    }

    /// Free blocks per the bitmaps.
    pub fn free_blocks(&self) -> u64 {
        self.bfree.iter().sum()
    }

    /// Free blocks of group `g` (its descriptor's count).
    pub fn group_free_blocks(&self, g: u32) -> u64 {
        self.bfree[g as usize]
    }

    /// Physical blocks of a file (its extents: logical, physical, length).
    pub fn extents_of(&self, inum: u32) -> Vec<(u64, u64, u32)> {
        self.inodes.get(&inum).map(|i| i.extents.iter().map(|e| (e.lblk, e.pblk, e.len)).collect()).unwrap_or_default()
    }

    /// The content tag stored for page `index` of `inum` (`content = "tags"`).
    pub fn page_tag(&self, inum: u32, index: u64) -> Option<u64> {
        let p = self.inodes.get(&inum)?.map(index)?;
        self.tags.get(p as usize).copied()
    }

    pub(crate) fn inode(&self, inum: u32) -> Ext4Result<&Inode> {
        self.inodes.get(&inum).ok_or(Errno::ENOENT.into())
    }

    pub(crate) fn inode_mut(&mut self, inum: u32) -> Ext4Result<&mut Inode> {
        self.inodes.get_mut(&inum).ok_or(Errno::ENOENT.into())
    }

    pub(crate) fn new_fd(&mut self, inum: u32) -> Fd {
        let fd = Fd(self.next_fd);
        self.next_fd += 1;
        self.fds.insert(fd, inum);
        if let Some(i) = self.inodes.get_mut(&inum) {
            i.open += 1;
        }
        fd
    }

    pub(crate) fn fd_inum(&self, fd: Fd) -> Ext4Result<u32> {
        self.fds.get(&fd).copied().ok_or(Errno::EBADF.into())
    }

    // ---- metadata dirtied in the running transaction ----

    /// The inode's table block joins the transaction (`ext4_mark_iloc_dirty`),
    /// read first if not cached (`ext4_reserve_inode_write`).
    pub(crate) fn touch_inode(&mut self, inum: u32) -> Ext4Result<()> {
        self.need_itable_write(inum)?;
        let b = self.lay.inode_block(inum);
        self.j.dirty(b);
        let tid = self.j.tid;
        if let Some(i) = self.inodes.get_mut(&inum) {
            i.sync_tid = tid;
        }
        Ok(())
    }

    /// Group `g`'s descriptor block joins the transaction (`ext4_handle_dirty_metadata` on `gdp`).
    pub(crate) fn touch_group(&mut self, g: u32) {
        self.j.dirty(self.lay.gdt_block(g));
    }

    /// The superblock joins the transaction (orphan list: `ext4_orphan_add`).
    pub(crate) fn touch_super(&mut self) {
        self.j.dirty(0);
    }
}
