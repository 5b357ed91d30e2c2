//! The F2FS model: state, mkfs and the block write paths (data, node).

use crate::content::Content;
use crate::error::{F2fsError, F2fsResult};
use crate::io::{Io, META};
use crate::layout::{Layout, BLKS_PER_SEG, BLOCK_BYTES};
use crate::node::{self, Holder, NodeMgr, ROOT_INO};
use crate::seg::{SegMgr, NONE};
use crate::settings::{F2fsSettings, IpuPolicy, KernelRules};
use crate::stats::F2fsStats;
use crate::temp::{DataWrite, LogType, NodeKind};
use flashlab_sim::Ssd;
use flashlab_vfs::idhash::IdMap;
use flashlab_vfs::Errno;
use std::collections::{BTreeMap, BTreeSet};

/// Directory-entry slots per dentry block (`NR_DENTRY_IN_BLOCK`).
pub const DENTRY_SLOTS: u16 = 214;
/// Name bytes per slot (`F2FS_SLOT_LEN`).
const SLOT_LEN: usize = 8;
/// `F2FS_NAME_LEN`.
pub const NAME_LEN: usize = 255;

/// An inode in memory (`struct f2fs_inode_info`), with its block map.
#[derive(Debug, Clone, Default)]
pub struct Inode {
    pub is_dir: bool,
    pub size: u64,
    pub nlink: u32,
    pub parent: u32,
    /// Cold-marked (an extension of mkfs's list: `set_file_temperature`).
    pub cold: bool,
    /// Checkpoint version the inode was created under.
    pub created_cp: u64,
    /// File block → main-area block (`NONE`: hole).
    pub blocks: Vec<u32>,
    /// Direct node k → nid (0: none).
    pub dnodes: Vec<u32>,
    /// Indirect node j → nid (0: none); j ≥ 2 hang from `dind`.
    pub inds: Vec<u32>,
    pub dind: u32,
    /// Directories: name → (inode, dentry block).
    pub entries: BTreeMap<String, (u32, u32)>,
    /// Directories: used slots per dentry block.
    pub dent_slots: Vec<u16>,
    pub open: u32,
    /// `FI_NEED_IPU`: set by fsync of a file with few dirty pages.
    pub need_ipu: bool,
}

/// mkfs.f2fs's default cold-file extensions (`media_ext_lists`).
const COLD_EXTENSIONS: &[&str] = &[
    "mp", "wm", "og", "jp", "avi", "m4v", "m4p", "mkv", "mov", "webm", "wav", "m4a", "3gp", "opus", "flac", "gif",
    "png", "svg", "webp", "jar", "deb", "iso", "gz", "xz", "zst", "pdf", "pyc", "ttc", "ttf", "exe", "apk", "cnt",
    "exo", "odex", "vdex", "so",
];

/// `is_extension_exist`: the name's last extension starts with a listed one.
pub fn is_cold_name(name: &str) -> bool {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            let ext = ext.to_ascii_lowercase();
            COLD_EXTENSIONS.iter().any(|c| ext.starts_with(c))
        }
        _ => false,
    }
}

/// Where a data block's content comes from.
#[derive(Debug, Clone, Copy)]
pub enum Src<'a> {
    Data(&'a [u8]),
    /// Cleaning: the content of the block moved.
    Copy(u32),
}

/// Why a checkpoint is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpReason {
    Sync,
    Fsync,
    Interval,
    Gc,
}

/// The F2FS-like file system over a simulated SSD.
pub struct F2fs {
    pub(crate) cfg: F2fsSettings,
    pub(crate) lay: Layout,
    pub(crate) sm: SegMgr,
    pub(crate) nm: NodeMgr,
    pub(crate) io: Io,
    pub(crate) content: Content,
    pub(crate) inodes: IdMap<u32, Inode>,
    pub(crate) fds: IdMap<u64, u32>,
    pub(crate) next_fd: u64,
    /// Dirty dentry pages (directory, block).
    pub(crate) dirty_dents: BTreeSet<(u32, u32)>,
    pub(crate) cp_ver: u64,
    /// Something changed since the last checkpoint (`SBI_IS_DIRTY`).
    pub(crate) dirty_since_cp: bool,
    pub(crate) last_cp_ns: u64,
    pub(crate) next_gc_ns: u64,
    pub(crate) gc_wait_ms: u64,
    /// Pages the page cache has reserved.
    pub(crate) reserved_pages: u64,
    pub(crate) stats: F2fsStats,
    /// Node, NAT and dentry pages and inodes cached (cold-cache reads).
    pub(crate) meta: crate::meta::MetaCache,
}

impl F2fs {
    /// mkfs.f2fs on `ssd`, then mount.
    pub fn format(ssd: Ssd, cfg: F2fsSettings) -> F2fsResult<F2fs> {
        cfg.validate().map_err(|e| F2fsError::Settings(e.to_string()))?;
        let s = ssd.settings();
        let bytes = s.ftl.logical_pages * s.page_bytes();
        let lay = Layout::with_tools(bytes, cfg.segs_per_sec, cfg.secs_per_zone, cfg.overprovision(), cfg.mkfs_tools)
            .map_err(|e| F2fsError::Layout(e.0))?;
        let sm = SegMgr::new(&lay);
        let nm = NodeMgr::new(lay.max_nid());
        let content = Content::new(cfg.content, lay.main_blocks());
        let io = Io::new(ssd, cfg.queue_depth, cfg.max_bio_blocks);
        let mut fs = F2fs {
            next_gc_ns: cfg.gc_min_sleep_ms * 1_000_000,
            gc_wait_ms: cfg.gc_min_sleep_ms,
            cfg,
            lay,
            sm,
            nm,
            io,
            content,
            inodes: IdMap::default(),
            fds: IdMap::default(),
            next_fd: 0,
            dirty_dents: BTreeSet::new(),
            cp_ver: 1,
            dirty_since_cp: false,
            last_cp_ns: 0,
            reserved_pages: 0,
            stats: F2fsStats::default(),
            meta: Default::default(),
        };
        fs.mkfs()?;
        fs.meta_mount();
        Ok(fs)
    }

    /// What mkfs writes: a TRIM of the device (`f2fs_trim_devices`), the
    /// superblocks, the zeroed SIT and NAT areas, the CP pack, and the
    /// root inode and its dentry block at the hot logs' first blocks.
    fn mkfs(&mut self) -> F2fsResult<()> {
        let l = self.lay.clone();
        let seg = BLKS_PER_SEG as u64;
        self.io.trim(0, l.block_count)?;
        let mut writes = vec![(0u64, 2u64), (l.sit_blkaddr as u64, l.segment_count_sit as u64 / 2 * seg)];
        for i in 0..l.segment_count_nat as u64 / 2 {
            writes.push((l.nat_blkaddr as u64 + 2 * i * seg, seg));
        }
        writes.push((l.cp_blkaddr as u64, 8));
        for (start, len) in writes {
            for b in start..start + len {
                self.io.write(META, b)?;
            }
            self.stats.mkfs_blocks_written += len;
        }
        let root = self.nm.alloc(NodeKind::Inode, None).ok_or(Errno::ENOSPC)?;
        debug_assert_eq!(root, ROOT_INO);
        let ino = Inode { is_dir: true, nlink: 2, parent: ROOT_INO, ..Default::default() };
        self.inodes.insert(root, ino);
        self.init_dir(root);
        self.flush_dents()?;
        self.write_dirty_nodes()?;
        self.io.wait_all()?;
        self.sm.checkpoint();
        self.nm.checkpoint();
        self.cp_ver += 1;
        self.dirty_since_cp = false;
        self.stats.mkfs_blocks_written += self.stats.fs_blocks_written();
        let mkfs = self.stats.mkfs_blocks_written;
        self.stats = F2fsStats { mkfs_blocks_written: mkfs, ..Default::default() };
        Ok(())
    }

    pub fn layout(&self) -> &Layout {
        &self.lay
    }

    pub fn settings(&self) -> &F2fsSettings {
        &self.cfg
    }

    pub fn stats(&self) -> &F2fsStats {
        &self.stats
    }

    /// The SSD underneath (pending writes submitted first).
    pub fn ssd_mut(&mut self) -> F2fsResult<&mut Ssd> {
        self.io.submit_all()?;
        Ok(self.io.ssd.get_mut())
    }

    /// Runs `f` on the SSD through `&self` (for counters and results; writes
    /// still merging in the model's per-log requests are not in them yet).
    pub fn with_ssd<R>(&self, f: impl FnOnce(&mut Ssd) -> R) -> R {
        f(&mut self.io.ssd.borrow_mut())
    }

    /// The file system's clock (ns).
    pub fn now_ns(&self) -> u64 {
        self.io.clock_ns
    }

    /// Free segments / sections of the main area.
    pub fn free_segments(&self) -> u32 {
        self.sm.free_segs
    }

    pub fn free_sections(&self) -> u32 {
        self.sm.free_secs
    }

    /// The log a block of `seg` belongs to.
    pub fn segment_log(&self, seg: u32) -> LogType {
        LogType::from_u8(self.sm.seg_type[seg as usize])
    }

    /// The log the current segment of `t` holds and its next offset.
    pub fn curseg(&self, t: LogType) -> (u32, u32) {
        let c = self.sm.cur[t as usize];
        (c.seg, c.off)
    }

    /// Main-area block of node `nid` (`NONE` if unwritten / free).
    pub fn node_block(&self, nid: u32) -> u32 {
        self.nm.addr.get(nid as usize).copied().unwrap_or(NONE)
    }

    /// The inode behind a path (for tests and tools).
    pub fn inode_of(&self, path: &str) -> F2fsResult<(u32, &Inode)> {
        let ino = self.lookup(path)?;
        Ok((ino, &self.inodes[&ino]))
    }

    pub(crate) fn now_s(&self) -> u64 {
        self.io.clock_ns / 1_000_000_000
    }

    /// Valid blocks plus nodes allocated and not yet written.
    pub(crate) fn used_blocks(&self) -> u64 {
        self.sm.valid_total + self.nm.unwritten
    }

    /// `inc_valid_block_count`'s check for `n` new blocks.
    pub(crate) fn check_space(&mut self, n: u64) -> F2fsResult<()> {
        if self.used_blocks() + n > self.lay.user_block_count {
            self.stats.enospc += 1;
            return Err(Errno::ENOSPC.into());
        }
        Ok(())
    }

    /// Sections the dirty node and dentry pages will need
    /// (`get_blocktype_secs`: node_secs + 2 × dent_secs).
    pub(crate) fn pending_secs(&self) -> u32 {
        let per = self.lay.blks_per_sec() as usize;
        (self.nm.dirty_count().div_ceil(per) + 2 * self.dirty_dents.len().div_ceil(per)) as u32
    }

    /// Whether a log changing segment recycles a dirty one: `f2fs_need_SSR`
    /// (never with `mode=lfs`, modelled as `ipu_policy = none`), or Linux
    /// 3.8's `need_SSR` (free sections < overprovision sections).
    pub(crate) fn need_ssr(&self) -> bool {
        match self.cfg.kernel {
            KernelRules::Current => self.cfg.ipu_policy != IpuPolicy::None && self.sm.need_ssr(self.pending_secs()),
            KernelRules::Linux3_8 => self.sm.need_ssr_3_8(),
        }
    }

    /// `has_not_enough_free_secs(sbi, freed, 0)`; Linux 3.8's compares free
    /// sections with the reserved ones only (no dirty node or dentry sections).
    pub(crate) fn not_enough_free(&self, freed: u32) -> bool {
        match self.cfg.kernel {
            KernelRules::Current => self.sm.not_enough_free(freed, self.pending_secs()),
            KernelRules::Linux3_8 => self.sm.not_enough_free(freed, 0),
        }
    }

    /// Allocates a block of log `t`; SSR as [`F2fs::need_ssr`] says; data logs
    /// fall back to other data types' dirty segments when free sections are
    /// short (`get_ssr_segment`, not in Linux 3.8).
    pub(crate) fn alloc_block(&mut self, t: LogType, owner: u32, ofs: u32) -> F2fsResult<u32> {
        let ssr = self.need_ssr();
        let other = self.cfg.kernel == KernelRules::Current && self.not_enough_free(0);
        let (lfs0, ssr0) = (self.sm.lfs_allocs, self.sm.ssr_allocs);
        let prev = self.sm.cur[t as usize].seg;
        let now = self.now_s();
        let b = self.sm.alloc(t, ssr, other, owner, ofs, now).ok_or_else(|| {
            self.stats.enospc += 1;
            F2fsError::Errno(Errno::ENOSPC)
        })?;
        if self.sm.lfs_allocs != lfs0 || self.sm.ssr_allocs != ssr0 {
            self.stats.lfs_segments += self.sm.lfs_allocs - lfs0;
            self.stats.ssr_segments += self.sm.ssr_allocs - ssr0;
            if prev != NONE {
                // write_sum_page: the summary of the segment left behind.
                self.io.write(META, self.lay.ssa_blkaddr as u64 + prev as u64)?;
                self.stats.ssa_blocks_written += 1;
            }
            if self.sm.ssr_allocs != ssr0 {
                // change_curseg → f2fs_get_sum_page: the recycled segment's summary is read.
                let seg = self.sm.cur[t as usize].seg;
                self.io.read_sync(self.lay.ssa_blkaddr as u64 + seg as u64, 1)?;
                self.stats.ssa_blocks_read += 1;
            }
        }
        Ok(b)
    }

    pub(crate) fn dev_blk(&self, b: u32) -> u64 {
        self.lay.main_blkaddr as u64 + b as u64
    }

    pub(crate) fn ino(&self, ino: u32) -> F2fsResult<&Inode> {
        self.inodes.get(&ino).ok_or(F2fsError::Errno(Errno::ENOENT))
    }

    pub(crate) fn ino_mut(&mut self, ino: u32) -> F2fsResult<&mut Inode> {
        self.inodes.get_mut(&ino).ok_or(F2fsError::Errno(Errno::ENOENT))
    }

    /// The nid holding file block `index`'s address, created (with its
    /// indirect parents) if missing (`f2fs_get_dnode_of_data(ALLOC_NODE)`).
    pub(crate) fn holder_nid(&mut self, ino: u32, index: u64, create: bool) -> F2fsResult<u32> {
        self.need_dnode(ino, index)?;
        let k = match node::holder_of(index) {
            Holder::Inode => return Ok(ino),
            Holder::Direct(k) => k,
        };
        let existing = self.ino(ino)?.dnodes.get(k as usize).copied().unwrap_or(0);
        if existing != 0 || !create {
            return Ok(existing);
        }
        let parent = match node::parent_of_direct(k) {
            None => ino,
            Some(j) => self.indirect_nid(ino, j)?,
        };
        let nid = self.nm.alloc(NodeKind::Direct, Some(ino)).ok_or(Errno::ENOSPC)?;
        let i = self.ino_mut(ino)?;
        if i.dnodes.len() <= k as usize {
            i.dnodes.resize(k as usize + 1, 0);
        }
        i.dnodes[k as usize] = nid;
        self.dirty_node(parent)?;
        Ok(nid)
    }

    fn indirect_nid(&mut self, ino: u32, j: u32) -> F2fsResult<u32> {
        let existing = self.ino(ino)?.inds.get(j as usize).copied().unwrap_or(0);
        if existing != 0 {
            return Ok(existing);
        }
        let parent = if j < 2 {
            ino
        } else {
            let d = self.ino(ino)?.dind;
            if d != 0 {
                d
            } else {
                let d = self.nm.alloc(NodeKind::Indirect, Some(ino)).ok_or(Errno::ENOSPC)?;
                self.ino_mut(ino)?.dind = d;
                self.dirty_node(ino)?;
                d
            }
        };
        let nid = self.nm.alloc(NodeKind::Indirect, Some(ino)).ok_or(Errno::ENOSPC)?;
        let i = self.ino_mut(ino)?;
        if i.inds.len() <= j as usize {
            i.inds.resize(j as usize + 1, 0);
        }
        i.inds[j as usize] = nid;
        self.dirty_node(parent)?;
        Ok(nid)
    }

    /// `check_inplace_update_policy` with `should_update_outplace`; Linux
    /// 3.8's `need_inplace_update` is never true (`MIN_IPU_UTIL` 100).
    fn update_in_place(&self, ino: &Inode) -> bool {
        if ino.is_dir || ino.cold || self.cfg.kernel == KernelRules::Linux3_8 {
            return false;
        }
        let pending = self.pending_secs();
        let util = || self.sm.valid_total * 100 >= self.cfg.min_ipu_util as u64 * self.lay.user_block_count;
        match self.cfg.ipu_policy {
            IpuPolicy::None => false,
            IpuPolicy::Force => true,
            IpuPolicy::Ssr => self.sm.need_ssr(pending),
            IpuPolicy::Util => util(),
            IpuPolicy::SsrUtil => self.sm.need_ssr(pending) && util(),
            IpuPolicy::Fsync => ino.need_ipu,
        }
    }

    /// Writes file block `index` of `ino` (`f2fs_do_write_data_page`):
    /// in place if the policy says so, else to a new block of the log the
    /// temperature rules pick, invalidating the old one.
    pub(crate) fn write_data_block(&mut self, ino: u32, index: u64, src: Src, why: DataWrite) -> F2fsResult<()> {
        let (old, is_dir, cold) = {
            let i = self.ino(ino)?;
            (i.blocks.get(index as usize).copied().unwrap_or(NONE), i.is_dir, i.cold)
        };
        if old != NONE && why == DataWrite::Normal && self.update_in_place(self.ino(ino)?) {
            self.put_content(old, src);
            self.io.write(LogType::for_data(is_dir, cold, why) as usize, self.dev_blk(old))?;
            self.stats.data_blocks_written += 1;
            self.stats.ipu_blocks_written += 1;
            return Ok(());
        }
        if old == NONE {
            self.check_space(1)?;
        }
        let holder = self.holder_nid(ino, index, true)?;
        let t = LogType::for_data(is_dir, cold, why);
        let b = self.alloc_block(t, ino, index as u32)?;
        if old != NONE {
            self.sm.invalidate(old);
        }
        self.put_content(b, src);
        let i = self.ino_mut(ino)?;
        if i.blocks.len() <= index as usize {
            i.blocks.resize(index as usize + 1, NONE);
        }
        i.blocks[index as usize] = b;
        self.dirty_node(holder)?;
        self.io.write(t as usize, self.dev_blk(b))?;
        match why {
            DataWrite::Normal => self.stats.data_blocks_written += 1,
            DataWrite::GcMoved => self.stats.gc_data_blocks_moved += 1,
        }
        if is_dir {
            self.stats.dentry_blocks_written += 1;
        }
        self.dirty_since_cp = true;
        Ok(())
    }

    fn put_content(&mut self, b: u32, src: Src) {
        match src {
            Src::Data(d) => self.content.store(b, d),
            Src::Copy(from) => self.content.copy(from, b),
        }
    }

    /// Writes node `nid` to a new block of its log (`__write_node_page`).
    pub(crate) fn write_node(&mut self, nid: u32, gc: bool) -> F2fsResult<()> {
        let kind = match self.nm.kind[nid as usize] {
            1 => NodeKind::Inode,
            2 => NodeKind::Direct,
            3 => NodeKind::Indirect,
            _ => return Ok(()),
        };
        let owner = self.nm.owner[nid as usize];
        let of_dir = self.inodes.get(&owner).is_some_and(|i| i.is_dir);
        let t = LogType::for_node(kind, of_dir);
        let b = self.alloc_block(t, nid, 0)?;
        let old = self.nm.addr[nid as usize];
        if old == NONE {
            self.nm.unwritten -= 1;
        } else {
            self.sm.invalidate(old);
        }
        self.nm.addr[nid as usize] = b;
        self.nm.mark_nat_dirty(nid);
        self.nm.clean(nid);
        self.meta_in_memory(nid);
        self.io.write(t as usize, self.dev_blk(b))?;
        if gc {
            self.stats.gc_node_blocks_moved += 1;
        } else {
            self.stats.node_blocks_written += 1;
        }
        self.dirty_since_cp = true;
        Ok(())
    }

    /// `f2fs_sync_node_pages`: every dirty node, in node-id order.
    pub(crate) fn write_dirty_nodes(&mut self) -> F2fsResult<()> {
        for nid in self.nm.take_dirty() {
            self.write_node(nid, false)?;
        }
        Ok(())
    }

    /// Writes every dirty dentry page (`f2fs_sync_dirty_inodes(DIR_INODE)`).
    pub(crate) fn flush_dents(&mut self) -> F2fsResult<()> {
        let dents = std::mem::take(&mut self.dirty_dents);
        for (dir, blk) in dents {
            if self.inodes.contains_key(&dir) {
                let page = dentry_page(&self.inodes[&dir], blk);
                self.write_data_block(dir, blk as u64, Src::Data(&page), DataWrite::Normal)?;
            }
        }
        Ok(())
    }

    /// Sets up a new directory's first dentry block ("." and "..").
    pub(crate) fn init_dir(&mut self, dir: u32) {
        if let Some(i) = self.inodes.get_mut(&dir) {
            i.dent_slots = vec![2];
            i.blocks = vec![NONE];
            i.size = BLOCK_BYTES;
        }
        self.dirty_dents.insert((dir, 0));
        self.meta_dent_in_memory(dir, 0);
        self.nm.mark_dirty(dir);
        self.dirty_since_cp = true;
    }

    /// `f2fs_add_link`: the first dentry block with room (a new one at the end).
    pub(crate) fn add_entry(&mut self, dir: u32, name: &str, child: u32) -> F2fsResult<()> {
        let slots = name.len().div_ceil(SLOT_LEN).max(1) as u16;
        let d = self.ino_mut(dir)?;
        let blk = match d.dent_slots.iter().position(|&u| u + slots <= DENTRY_SLOTS) {
            Some(b) => b,
            None => {
                d.dent_slots.push(0);
                d.blocks.resize(d.dent_slots.len(), NONE);
                d.size = d.dent_slots.len() as u64 * BLOCK_BYTES;
                d.dent_slots.len() - 1
            }
        };
        d.dent_slots[blk] += slots;
        d.entries.insert(name.to_string(), (child, blk as u32));
        self.dirty_dents.insert((dir, blk as u32));
        self.meta_dent_in_memory(dir, blk as u32);
        self.dirty_node(dir)?;
        self.dirty_since_cp = true;
        Ok(())
    }

    /// `f2fs_delete_entry`: an emptied dentry block (not the first) is punched.
    pub(crate) fn remove_entry(&mut self, dir: u32, name: &str) -> F2fsResult<u32> {
        let d = self.ino_mut(dir)?;
        let (child, blk) = d.entries.remove(name).ok_or(Errno::ENOENT)?;
        let slots = name.len().div_ceil(SLOT_LEN).max(1) as u16;
        d.dent_slots[blk as usize] -= slots;
        let punch = blk > 0 && d.dent_slots[blk as usize] == 0;
        let old = if punch { std::mem::replace(&mut d.blocks[blk as usize], NONE) } else { NONE };
        if punch {
            self.dirty_dents.remove(&(dir, blk));
            if old != NONE {
                self.sm.invalidate(old);
                let h = self.holder_nid(dir, blk as u64, false)?;
                self.dirty_node(h)?;
            }
        } else {
            self.dirty_dents.insert((dir, blk));
            self.meta_dent_in_memory(dir, blk);
        }
        self.dirty_node(dir)?;
        self.dirty_since_cp = true;
        Ok(child)
    }
}

/// The content a dentry block is written with: its first 8 bytes say
/// which directory and block it is (the model keeps names in memory).
fn dentry_page(dir: &Inode, blk: u32) -> Vec<u8> {
    let mut p = vec![0u8; 8];
    p[..2].copy_from_slice(&dir.dent_slots[blk as usize].to_le_bytes());
    p[4..8].copy_from_slice(&blk.to_le_bytes());
    p
}
