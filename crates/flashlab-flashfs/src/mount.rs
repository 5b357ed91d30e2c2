//! Format and mount: read the superblock and the newest master node, load
//! the LPT, the index and the orphan list, replay the journal (buds listed
//! by the log) in sequence-number order, recompute the LEB properties, and
//! commit if anything was replayed.

use crate::codec::parse_node;
use crate::error::{FsError, FsResult, MountFailure};
use crate::fs::{Fs, Lprops, F_BUD, F_INDEX};
use crate::layout::{FsGeo, MST_LNUMS, SB_LNUM};
use crate::node::{InoNode, LptNode, MstNode, Node, SbNode, G_NONE};
use crate::settings::FsSettings;
use crate::tnc::Br;
use flashlab_mtd::Cause;
use flashlab_ubi::Ubi;

type PageCache = std::collections::HashMap<(u32, u32), Vec<u8>>;

fn corrupt(s: &str) -> FsError {
    FsError::Corrupt(s.to_string())
}

impl Fs {
    /// Creates an empty file system (root directory, inode 1) on volume `vol`.
    pub fn format(ubi: Ubi, vol: u32, cfg: FsSettings) -> Result<Fs, MountFailure> {
        let geo = match Self::plan(&ubi, vol, &cfg) {
            Ok(g) => g,
            Err(error) => return Err(MountFailure { ubi, error }),
        };
        let mut fs = Fs::new_state(ubi, vol, cfg, geo);
        fs.set_lpt_bitmap();
        if let Err(error) = fs.init_hot() {
            return Err(MountFailure { ubi: fs.ubi, error });
        }
        match fs.do_format() {
            Ok(()) => Ok(fs),
            Err(error) => Err(MountFailure { ubi: fs.ubi, error }),
        }
    }

    fn plan(ubi: &Ubi, vol: u32, cfg: &FsSettings) -> FsResult<FsGeo> {
        cfg.validate().map_err(|e| FsError::Corrupt(e.to_string()))?;
        let info = ubi.volumes().into_iter().find(|v| v.id == vol).ok_or(FsError::Corrupt("no such volume".into()))?;
        let (leb, io) = (ubi.leb_bytes(), ubi.min_io());
        let words = if cfg.lpt_validity_bitmap { (leb / io).div_ceil(64) } else { 0 };
        let lpt = FsGeo::lpt_lebs_for(info.lebs, leb, io, words);
        let log = match cfg.log_lebs {
            0 => crate::layout::ubifs_default_journal(info.lebs, leb, io).0.clamp(2, 64),
            n => n,
        };
        let geo = FsGeo::new(info.lebs, leb, io, log, lpt);
        if geo.main_lebs() < 8 || leb < 4 * geo.max_node_bytes() {
            return Err(corrupt("volume too small (need 8 main LEBs of at least 4 data nodes)"));
        }
        Ok(geo)
    }

    fn do_format(&mut self) -> FsResult<()> {
        for l in 0..self.geo.leb_count {
            self.unmap(l, Cause::Meta)?;
        }
        let g = self.geo;
        let sb = SbNode {
            leb_bytes: g.leb_bytes,
            leb_count: g.leb_count,
            min_io: g.min_io,
            fanout: self.cfg.fanout,
            log_lebs: g.log_lebs,
            lpt_lebs: g.lpt_lebs,
            compr: self.cfg.compression.code(),
        };
        let b = Node::Sb(sb).encode(1, G_NONE);
        self.ubi.leb_change(self.vol, SB_LNUM, &b, Cause::Meta)?;
        self.sqnum = 1;
        let lf = self.geo.log_first;
        self.log = crate::fs::LogPos { first: lf, lnum: lf, offs: 0, used: 1 };
        let root = InoNode { inum: 1, nlink: 1, size: 0, is_dir: true };
        let loc = self.journal_write(crate::fs::BASE, &[Node::Ino(root.clone())])?[0];
        self.tnc.insert(&crate::key::Key::ino(1), loc);
        self.inodes.insert(1, root);
        self.commit_full()
    }

    /// Mounts the file system on volume `vol` (recovering after a cut).
    pub fn mount(ubi: Ubi, vol: u32, cfg: FsSettings) -> Result<Fs, MountFailure> {
        let ops0 = ubi.nand().stats().ops;
        let mut fs = Fs::new_state(ubi, vol, cfg, FsGeo::new(0, 0, 0, 0, 0));
        fs.mounting = true;
        let r = fs.do_mount();
        fs.mounting = false;
        match r {
            Ok(()) => {
                fs.counters.mount_ops = fs.ubi.nand().stats().ops - ops0;
                Ok(fs)
            }
            Err(error) => Err(MountFailure { ubi: fs.ubi, error }),
        }
    }

    fn do_mount(&mut self) -> FsResult<()> {
        self.read_sb()?;
        self.set_lpt_bitmap();
        self.init_hot()?;
        let m = self.read_master()?;
        self.commit_no = m.commit_no;
        self.highest_inum = m.highest_inum;
        let lpt_root = m.lpt_root.ok_or(corrupt("no LPT"))?;
        self.load_lpt(lpt_root)?;
        self.restore_lpt_head(lpt_root);
        // What was just loaded is what is on flash: only what differs from
        // it after replay and recovery makes the LPT dirty (below).
        let on_flash = self.lp.snapshot();
        if let Some(r) = m.root {
            let root = self.load_znode(r, 64, &mut PageCache::new())?;
            self.tnc.set_root(Some(root));
        }
        self.load_orphans(m.orph)?;
        let replayed = self.replay(&m)?;
        self.restore_idx_head(m.idx_head);
        let orphans = self.process_orphans()?;
        self.lp.changed_since(&on_flash);
        self.mst = m.clone();
        if replayed || orphans || !m.clean {
            self.commit_full()?;
        } else {
            // mount_ubifs: a read-write mount sets UBIFS_MST_DIRTY in the
            // master node on flash at once, so a later cut is noticed.
            let dirty = MstNode { clean: false, ..m };
            self.write_master(&dirty)?;
            self.mst = dirty;
        }
        Ok(())
    }

    fn read_sb(&mut self) -> FsResult<()> {
        let io = self.ubi.min_io();
        let mut b = vec![0u8; io as usize];
        self.ubi.leb_read(self.vol, SB_LNUM, 0, &mut b, Cause::Mount)?;
        let Ok((_, Node::Sb(sb))) = parse_node(&b) else { return Err(corrupt("bad superblock")) };
        if sb.leb_bytes != self.ubi.leb_bytes() || sb.min_io != io || !(3..=64).contains(&sb.fanout) {
            return Err(corrupt("superblock does not match the volume"));
        }
        let geo = FsGeo::new(sb.leb_count, sb.leb_bytes, sb.min_io, sb.log_lebs, sb.lpt_lebs);
        let vol_lebs = self.ubi.volumes().iter().find(|v| v.id == self.vol).map_or(0, |v| v.lebs);
        if geo.main_lebs() < 8 || sb.leb_count > vol_lebs {
            return Err(corrupt("superblock geometry"));
        }
        self.geo = geo;
        self.cfg.fanout = sb.fanout;
        self.cfg.log_lebs = sb.log_lebs;
        self.tnc = crate::tnc::Tnc::new(sb.fanout as usize);
        self.lp = crate::lprops::LpTable::new(geo.leb_count, geo.leb_bytes, geo.min_io, geo.main_first);
        self.vmap = crate::vmap::PageMap::new(geo.leb_count, geo.leb_bytes, geo.min_io);
        Ok(())
    }

    /// Newest valid master node over both copies; records append offsets.
    fn read_master(&mut self) -> FsResult<MstNode> {
        let mut best: Option<(u64, u64, MstNode)> = None;
        let io = self.geo.min_io as usize;
        for (i, lnum) in MST_LNUMS.iter().enumerate() {
            let mut next = 0;
            let mut page = vec![0u8; io];
            for p in 0..(self.geo.leb_bytes as usize / io) {
                self.ubi.leb_read(self.vol, *lnum, (p * io) as u32, &mut page, Cause::Mount)?;
                if page.iter().all(|x| *x == 0xFF) {
                    break;
                }
                next = (p + 1) * io;
                let page = &page[..];
                if let Ok((h, Node::Mst(m))) = parse_node(page) {
                    if best.as_ref().is_none_or(|(c, s, _)| (m.commit_no, h.sqnum) > (*c, *s)) {
                        best = Some((m.commit_no, h.sqnum, m));
                    }
                }
            }
            self.master_next[i] = next as u32;
        }
        let (_, sq, m) = best.ok_or(corrupt("no valid master node"))?;
        self.sqnum = sq;
        Ok(m)
    }

    /// Loads the LEB properties from the LPT and records where each of its
    /// nodes is (`levels`, as the commits that wrote them left them).
    fn load_lpt(&mut self, root: crate::node::Loc) -> FsResult<()> {
        self.lpt_area = u32::from(root.lnum >= self.geo.lpt_first + self.geo.lpt_lebs);
        let mut sizes = vec![self.lp.len().div_ceil(4)];
        while sizes[sizes.len() - 1] > 1 {
            sizes.push(sizes[sizes.len() - 1].div_ceil(4));
        }
        let zero = crate::node::Loc { lnum: 0, offs: 0, len: 0 };
        let mut levels: Vec<Vec<crate::node::Loc>> = sizes.iter().map(|n| vec![zero; *n]).collect();
        let mut stack = vec![(sizes.len() - 1, 0usize, root)];
        let mut cache = PageCache::new();
        while let Some((k, i, loc)) = stack.pop() {
            if let Some(slot) = levels.get_mut(k).and_then(|v| v.get_mut(i)) {
                *slot = loc;
            }
            match self.read_cached(loc, &mut cache)? {
                Node::Lpt(LptNode::Nnode { children }) if k > 0 => {
                    stack.extend(children.into_iter().enumerate().map(|(j, c)| (k - 1, i * 4 + j, c)))
                }
                Node::Lpt(LptNode::Pnode { first, props, .. }) => {
                    for (i, (free, dirty, flags)) in props.into_iter().enumerate() {
                        let l = first + i as u32;
                        if (l as usize) < self.lp.len() {
                            self.lp.set(l, Lprops { free: free.min(self.geo.leb_bytes), dirty, flags });
                        }
                    }
                }
                _ => return Err(corrupt("bad LPT node")),
            }
        }
        self.lpt = crate::lprops::LptPlace { levels, head: None, swapped: false };
        Ok(())
    }

    /// Commits after this mount append to the LPT after its root (the last
    /// node the last commit wrote), as UBIFS continues its LPT head
    /// (`nhead_lnum`/`nhead_offs` in the master), but only if the rest of
    /// that LEB is erased (an interrupted commit may have written there);
    /// otherwise the next commit rewrites the whole tree.
    fn restore_lpt_head(&mut self, root: crate::node::Loc) {
        let io = self.geo.min_io;
        let offs = (root.offs + root.len).next_multiple_of(io);
        if offs >= self.geo.leb_bytes {
            return;
        }
        let mut tail = vec![0u8; (self.geo.leb_bytes - offs) as usize];
        if self.ubi.leb_read(self.vol, root.lnum, offs, &mut tail, Cause::Mount).is_ok()
            && tail.iter().all(|b| *b == 0xFF)
        {
            self.lpt.head = Some((root.lnum, offs));
        }
    }

    /// Reads a node through a page cache (index and LPT nodes are packed,
    /// so loading them costs one read per page, not per node).
    fn read_cached(&mut self, loc: crate::node::Loc, cache: &mut PageCache) -> FsResult<Node> {
        let io = self.geo.min_io;
        let mut b = Vec::with_capacity(loc.len as usize);
        let mut pos = loc.offs;
        while pos < loc.offs + loc.len {
            let page = pos / io;
            if let std::collections::hash_map::Entry::Vacant(e) = cache.entry((loc.lnum, page)) {
                let mut p = vec![0u8; io as usize];
                self.ubi.leb_read(self.vol, loc.lnum, page * io, &mut p, Cause::Mount)?;
                e.insert(p);
            }
            let p = &cache[&(loc.lnum, page)];
            let end = ((page + 1) * io).min(loc.offs + loc.len);
            b.extend_from_slice(&p[(pos - page * io) as usize..(end - page * io) as usize]);
            pos = end;
        }
        match crate::codec::parse_node(&b) {
            Ok((h, n)) if h.len == loc.len => Ok(n),
            _ => Err(corrupt("bad node while loading")),
        }
    }

    fn load_znode(&mut self, loc: crate::node::Loc, depth: u32, cache: &mut PageCache) -> FsResult<usize> {
        let Node::Idx { level, branches } = self.read_cached(loc, cache)? else {
            return Err(corrupt("bad index node"));
        };
        if depth == 0 || branches.is_empty() {
            return Err(corrupt("index too deep or empty node"));
        }
        // UBIFS's `read_znode` (fs/ubifs/tnc_misc.c) rejects an index node
        // with more branches than the fan-out; the TNC's znodes hold no more.
        if branches.len() > self.tnc.fanout() {
            return Err(corrupt("index node wider than the fan-out"));
        }
        let mut entries = Vec::with_capacity(branches.len());
        for (k, l) in branches {
            let br = if level == 0 { Br::Leaf(l) } else { Br::Child(self.load_znode(l, depth - 1, cache)?) };
            entries.push((k, br));
        }
        Ok(self.tnc.alloc(level, &entries, false, Some(loc)))
    }

    fn load_orphans(&mut self, loc: Option<crate::node::Loc>) -> FsResult<()> {
        let Some(loc) = loc else { return Ok(()) };
        self.orph_area = loc.lnum - self.geo.orph_first;
        match self.read_node(loc)? {
            Node::Orph { inums, .. } => self.orphans = inums.into_iter().collect(),
            _ => return Err(corrupt("bad orphan node")),
        }
        Ok(())
    }

    /// Continues appending index nodes to the last index LEB only if its
    /// unwritten tail really is erased (an interrupted commit may have
    /// written there).
    fn restore_idx_head(&mut self, lnum: u32) {
        if !self.geo.is_main(lnum) || self.lp[lnum as usize].flags & F_INDEX == 0 {
            return;
        }
        let p = self.lp[lnum as usize];
        let offs = self.geo.leb_bytes - p.free;
        let mut tail = vec![0u8; p.free as usize];
        if p.free == 0
            || self.ubi.leb_read(self.vol, lnum, offs, &mut tail, Cause::Mount).is_err()
            || tail.iter().any(|b| *b != 0xFF)
        {
            self.lp.update(lnum, |lp| {
                lp.dirty += lp.free;
                lp.free = 0;
            });
            return;
        }
        self.idx_head = crate::fs::Head { lnum: Some(lnum), wbuf_offs: offs, ..Default::default() };
    }

    /// Recomputes dirty space of every main LEB from the index.
    pub(crate) fn recompute_dirty(&mut self) {
        let live = self.live_bytes();
        for l in self.geo.main_first..self.geo.leb_count {
            let (leb, live) = (self.geo.leb_bytes, live[l as usize]);
            self.lp.update(l, |p| {
                p.dirty = (leb - p.free).saturating_sub(live);
                if p.flags & F_BUD == 0 && live == 0 {
                    p.flags &= !F_INDEX;
                }
            });
        }
        self.rebuild_vmap();
    }

    /// Live bytes per LEB: leaf nodes and committed index nodes.
    pub(crate) fn live_bytes(&self) -> Vec<u32> {
        let mut live = vec![0u32; self.lp.len()];
        self.for_each_live(|l| {
            if let Some(x) = live.get_mut(l.lnum as usize) {
                *x += l.aligned_len();
            }
        });
        live
    }
}
