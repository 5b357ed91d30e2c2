//! Metadata reads on a cold cache: node pages, NAT pages and entries,
//! dentry pages and the inode cache.
//!
//! F2FS keeps SIT and the segment summaries' state in memory from mount on,
//! but reads node blocks, NAT blocks and directory blocks through the page
//! cache, which `drop_caches` empties of clean pages (and the f2fs shrinker
//! of clean NAT entries). The rules, by kernel function:
//!
//! - **node pages** (`f2fs_get_node_page` → `read_node_page`, node.c): a
//!   node whose page is not cached is read from its block, after its NAT
//!   entry (`f2fs_get_node_info`). A node never written, or dirty, is in
//!   memory. Dirtying a node (`set_page_dirty` of the node page) needs it.
//! - **NAT entries** (`f2fs_get_node_info`): the NAT cache, else the
//!   checkpoint's NAT journal (`f2fs_lookup_journal_in_cursum`: entries
//!   journaled at the last checkpoints, until one writes NAT blocks and
//!   empties it), else the NAT block from its current copy
//!   (`current_nat_addr`, a meta page).
//! - **inodes** (`f2fs_iget` → `do_read_inode`): an inode not in the inode
//!   cache reads its node page. The inode cache keeps the root, open inodes
//!   and their directories across `drop_caches`.
//! - **directories** (`f2fs_find_entry`, `f2fs_readdir`): the dentry block
//!   holding the name (all of the directory's blocks for a name that is not
//!   there); `readdir` reads every block. A child in the inode cache has its
//!   dentry cached.
//! - **file block addresses** (`f2fs_get_dnode_of_data`): the inode page,
//!   then the indirect and direct nodes on the block's path.
//!
//! Reads are waited for, one request per run of consecutive blocks.

use crate::error::F2fsResult;
use crate::fs::F2fs;
use crate::layout::{BLKS_PER_SEG, NAT_ENTRY_PER_BLOCK};
use crate::node::{self, Holder, ROOT_INO};
use crate::seg::NONE;
use flashlab_vfs::idhash::IdSet;

/// What is cached.
#[derive(Debug, Clone, Default)]
pub(crate) struct MetaCache {
    /// Node pages by nid.
    nodes: Vec<bool>,
    /// NAT entries by nid.
    nat: Vec<bool>,
    /// NAT pages by NAT block.
    nat_pages: Vec<bool>,
    /// Device block of each NAT block's current copy.
    nat_addr: Vec<u64>,
    /// Nids whose entries sit in the checkpoint's NAT journal.
    nat_journal: IdSet<u32>,
    /// Dentry pages (directory, block index).
    dents: IdSet<(u32, u32)>,
    /// Inodes in the inode cache.
    inodes: IdSet<u32>,
    /// Set at mount (mkfs reads nothing).
    active: bool,
}

impl F2fs {
    /// After mkfs: mount reads the checkpoint, SIT, summaries and the root
    /// inode (not sent, like mkfs's writes); the NAT is at its first copy.
    pub(crate) fn meta_mount(&mut self) {
        let n = self.nm.addr.len();
        let nat_blocks = n.div_ceil(NAT_ENTRY_PER_BLOCK as usize);
        let seg = BLKS_PER_SEG as u64;
        let base = self.lay.nat_blkaddr as u64;
        // Every nid as a drop leaves a free, unwritten one (node flag set
        // when metadata reads are on, NAT flag clear); the drop below
        // recomputes those under `nid_limit`.
        self.meta = MetaCache {
            nodes: vec![self.cfg.metadata_reads; n],
            nat: vec![false; n],
            nat_pages: vec![false; nat_blocks],
            nat_addr: (0..nat_blocks as u64).map(|b| base + (b / seg) * 2 * seg + b % seg).collect(),
            active: true,
            ..MetaCache::default()
        };
        self.meta_drop_clean();
        self.meta.nodes[ROOT_INO as usize] = true;
        self.meta.nat[ROOT_INO as usize] = true;
    }

    fn meta_on(&self) -> bool {
        self.cfg.metadata_reads && self.meta.active
    }

    /// A NAT block written at a checkpoint to the copy not in use: it becomes current.
    pub(crate) fn meta_nat_written(&mut self, nat_block: u32, dev_block: u64) {
        if let Some(a) = self.meta.nat_addr.get_mut(nat_block as usize) {
            *a = dev_block;
            self.meta.nat_pages[nat_block as usize] = true;
        }
    }

    /// A checkpoint flushed the dirty NAT entries `nids`: into its NAT
    /// journal (`journaled`), or, the journal full, every journaled entry
    /// with them into NAT blocks (`remove_nats_in_journal`).
    pub(crate) fn meta_nat_flushed(&mut self, nids: &[u32], journaled: bool) {
        if journaled {
            self.meta.nat_journal.extend(nids);
        } else {
            self.meta.nat_journal.clear();
        }
    }

    /// `drop_caches`: clean node, NAT and dentry pages, clean NAT entries and
    /// unpinned inodes leave the caches.
    ///
    /// The node and NAT flags are recomputed for nids below
    /// [`NodeMgr::nid_limit`] only: every nid from it on is free and
    /// unwritten, so a drop would set its node flag (`addr` = `NONE`: nothing
    /// to read) and clear its NAT flag (never dirty); `meta_mount` sets them
    /// so for the whole NAT, and nothing between two drops changes them
    /// (`need_node` and `need_readdir` skip unwritten nodes; `meta_in_memory`
    /// sets a flag already set). The limit only grows.
    ///
    /// [`NodeMgr::nid_limit`]: crate::node::NodeMgr::nid_limit
    pub(crate) fn meta_drop_clean(&mut self) {
        if !self.meta_on() {
            return;
        }
        let limit = self.nm.nid_limit() as usize;
        let m = &mut self.meta;
        let (dirty, addr) = (&self.nm.dirty[..limit], &self.nm.addr[..limit]);
        for ((c, &d), &a) in m.nodes[..limit].iter_mut().zip(dirty).zip(addr) {
            *c = d || a == NONE;
        }
        m.nat[..limit].copy_from_slice(&self.nm.nat_dirty[..limit]);
        m.nat_pages.iter_mut().for_each(|p| *p = false);
        m.dents = self.dirty_dents.iter().copied().collect();
        m.inodes.clear();
        m.inodes.insert(ROOT_INO);
        for (&ino, i) in &self.inodes {
            if i.open > 0 {
                let mut cur = ino;
                while cur != ROOT_INO && m.inodes.insert(cur) {
                    cur = self.inodes.get(&cur).map_or(ROOT_INO, |i| i.parent);
                }
            }
        }
    }

    /// Reads `blocks` (device blocks, in order), one request per run of
    /// consecutive ones, and waits. The logs' merged write bios stay open (a
    /// node read does not submit them: `f2fs_submit_page_bio` is its own bio).
    fn read_meta(&mut self, blocks: &[u64]) -> F2fsResult<()> {
        let mut run: Option<(u64, u64)> = None;
        let mut done = self.io.clock_ns;
        for &b in blocks {
            run = match run {
                Some((s, n)) if s + n == b => Some((s, n + 1)),
                Some((s, n)) => {
                    done = done.max(self.io.read(s, n)?);
                    Some((b, 1))
                }
                None => Some((b, 1)),
            };
        }
        if let Some((s, n)) = run {
            done = done.max(self.io.read(s, n)?);
        }
        self.io.wait_for(done);
        Ok(())
    }

    /// `f2fs_get_node_info`: the NAT entry of `nid`.
    fn need_nat(&mut self, nid: u32) -> F2fsResult<()> {
        let n = nid as usize;
        if self.meta.nat[n] {
            return Ok(());
        }
        self.meta.nat[n] = true;
        if self.meta.nat_journal.contains(&nid) {
            return Ok(());
        }
        let blk = n / NAT_ENTRY_PER_BLOCK as usize;
        if !self.meta.nat_pages[blk] {
            self.meta.nat_pages[blk] = true;
            self.stats.nat_blocks_read += 1;
            let addr = self.meta.nat_addr[blk];
            self.read_meta(&[addr])?;
        }
        Ok(())
    }

    /// `f2fs_get_node_page`: node `nid`'s page.
    pub(crate) fn need_node(&mut self, nid: u32) -> F2fsResult<()> {
        if !self.meta_on() || nid == 0 || self.meta.nodes[nid as usize] {
            return Ok(());
        }
        self.meta.nodes[nid as usize] = true;
        let addr = self.nm.addr[nid as usize];
        if addr == NONE {
            return Ok(());
        }
        self.need_nat(nid)?;
        self.stats.node_blocks_read += 1;
        let b = self.dev_blk(addr);
        self.read_meta(&[b])
    }

    /// Node `nid`'s page is in memory (written, or created).
    pub(crate) fn meta_in_memory(&mut self, nid: u32) {
        if self.meta.active {
            self.meta.nodes[nid as usize] = true;
        }
    }

    /// Dentry page `blk` of `dir` is in memory (dirtied).
    pub(crate) fn meta_dent_in_memory(&mut self, dir: u32, blk: u32) {
        if self.meta.active {
            self.meta.dents.insert((dir, blk));
        }
    }

    /// A node about to be dirtied: its page first.
    pub(crate) fn dirty_node(&mut self, nid: u32) -> F2fsResult<()> {
        self.need_node(nid)?;
        self.nm.mark_dirty(nid);
        Ok(())
    }

    /// `f2fs_iget` of `ino` (its node page unless in the inode cache).
    fn need_inode(&mut self, ino: u32) -> F2fsResult<()> {
        if !self.meta_on() || !self.meta.inodes.insert(ino) {
            return Ok(());
        }
        self.need_node(ino)
    }

    /// `f2fs_get_dnode_of_data` for file block `index` of `ino`: the inode
    /// page, then the indirect and direct nodes on its path (those that exist).
    pub(crate) fn need_dnode(&mut self, ino: u32, index: u64) -> F2fsResult<()> {
        if !self.meta_on() {
            return Ok(());
        }
        self.need_node(ino)?;
        let Holder::Direct(k) = node::holder_of(index) else { return Ok(()) };
        let i = self.ino(ino)?;
        let (mut path, mut len) = ([0u32; 3], 0);
        if let Some(j) = node::parent_of_direct(k) {
            if j >= 2 {
                path[len] = i.dind;
                len += 1;
            }
            path[len] = i.inds.get(j as usize).copied().unwrap_or(0);
            len += 1;
        }
        path[len] = i.dnodes.get(k as usize).copied().unwrap_or(0);
        for &nid in &path[..=len] {
            self.need_node(nid)?;
        }
        Ok(())
    }

    /// [`F2fs::need_dnode`] for every node holding addresses of blocks
    /// `first..=last`.
    pub(crate) fn need_dnodes(&mut self, ino: u32, first: u64, last: u64) -> F2fsResult<()> {
        let mut k = first;
        while k <= last && self.meta_on() {
            self.need_dnode(ino, k)?;
            k = match node::holder_of(k) {
                Holder::Inode => node::ADDRS_PER_INODE,
                Holder::Direct(d) => node::first_block_of(d + 1),
            };
        }
        Ok(())
    }

    /// Dentry blocks `blks` of directory `dir`, read if not cached.
    fn need_dents(&mut self, dir: u32, blks: impl Iterator<Item = u32>) -> F2fsResult<()> {
        let mut want = Vec::new();
        for blk in blks {
            if !self.meta.dents.insert((dir, blk)) {
                continue;
            }
            self.need_dnode(dir, blk as u64)?;
            let b = self.ino(dir)?.blocks.get(blk as usize).copied().unwrap_or(NONE);
            if b != NONE {
                want.push(self.dev_blk(b));
            }
        }
        self.stats.dentry_blocks_read += want.len() as u64;
        self.read_meta(&want)
    }

    /// A path walk (`f2fs_lookup` for each component not in the dcache):
    /// each directory's inode, then the dentry block holding the name, or
    /// every block when the name is missing.
    pub(crate) fn need_path(&mut self, path: &str) -> F2fsResult<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let mut cur = ROOT_INO;
        for c in path.split('/').filter(|c| !c.is_empty()) {
            self.need_inode(cur)?;
            let d = self.ino(cur)?;
            if !d.is_dir {
                return Ok(());
            }
            let (found, nblocks) = (d.entries.get(c).copied(), d.dent_slots.len() as u32);
            match found {
                Some((child, _)) if self.meta.inodes.contains(&child) => cur = child,
                Some((child, blk)) => {
                    self.need_dents(cur, std::iter::once(blk))?;
                    cur = child;
                }
                None => return self.need_dents(cur, 0..nblocks),
            }
        }
        self.need_inode(cur)
    }

    /// `f2fs_readdir`: every dentry block of the directory at `path`; with
    /// today's rules also `readdir_ra` (`f2fs_fill_dentries`, on by default
    /// since `f2fs_tuning_parameters`; not in Linux 3.8): each entry's inode
    /// page is read ahead (`f2fs_ra_node_page`, after its NAT entry), the
    /// reads plugged, so sorted and merged.
    pub(crate) fn need_readdir(&mut self, path: &str) -> F2fsResult<()> {
        if !self.meta_on() {
            return Ok(());
        }
        let dir = self.lookup(path)?;
        let n = self.ino(dir)?.dent_slots.len() as u32;
        self.need_dents(dir, 0..n)?;
        if self.cfg.kernel != crate::settings::KernelRules::Current {
            return Ok(());
        }
        let children: Vec<u32> = self.ino(dir)?.entries.values().map(|e| e.0).collect();
        let mut blocks = Vec::new();
        for nid in children {
            if self.meta.nodes[nid as usize] {
                continue;
            }
            self.meta.nodes[nid as usize] = true;
            let addr = self.nm.addr[nid as usize];
            if addr != NONE {
                self.need_nat(nid)?;
                blocks.push(self.dev_blk(addr));
            }
        }
        blocks.sort_unstable();
        self.stats.node_blocks_read += blocks.len() as u64;
        self.read_meta(&blocks)
    }
}
