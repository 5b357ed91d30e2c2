//! Commit: write the dirty index out of place (children first), then the
//! LEB-properties tree and the orphan list into their inactive areas, then
//! a new log LEB (commit-start node + references to the open heads), then
//! both master-node copies. The master write is the commit point: until
//! it is on flash the old master, index, LPT, orphans and log stay intact.

use crate::codec::nnode_payload_len;
use crate::error::FsResult;
use crate::fs::{Fs, Lprops, F_BUD, F_INDEX, F_TAKEN, HEADS};
use crate::layout::MST_LNUMS;
use crate::node::{align, Loc, LptNode, MstNode, Node, G_NONE, HDR};
use flashlab_mtd::Cause;

impl Fs {
    /// Commits the journal into the index (no-op when called re-entrantly);
    /// with the delayed hot commit, the hot journal only when it is due.
    pub(crate) fn commit(&mut self) -> FsResult<()> {
        self.commit_mode(false)
    }

    /// Commits the whole journal, the hot journal included.
    pub(crate) fn commit_full(&mut self) -> FsResult<()> {
        self.commit_mode(true)
    }

    fn commit_mode(&mut self, force_full: bool) -> FsResult<()> {
        if self.in_commit {
            return Ok(());
        }
        self.in_commit = true;
        let r = self.do_commit(force_full);
        self.in_commit = false;
        if r.is_err() {
            // The in-memory index may now differ from the last master:
            // refuse further work until the next mount.
            self.broken = true;
            self.counters.failed_commits += 1;
        }
        r
    }

    /// UBIFS's `nothing_to_commit` (commit.c): neither the index (TNC) nor
    /// the LEB properties (LPT) changed since the last commit, and no
    /// delayed hot journal is waiting. `ubifs_run_commit` then writes
    /// nothing.
    pub(crate) fn nothing_to_commit(&self) -> bool {
        self.index_and_lpt_clean() && self.hot.overlay.is_empty() && self.hot.buds.is_empty()
    }

    /// [`Fs::nothing_to_commit`] for a scheduled commit ([`Fs::commit`]):
    /// a waiting delayed hot journal counts only when it is due.
    pub(crate) fn nothing_to_commit_scheduled(&self) -> bool {
        self.nothing_to_commit() || (self.index_and_lpt_clean() && !self.hot_commit_due())
    }

    /// `ubifs_run_commit` (commit.c) → `do_commit`, which writes nothing
    /// when `nothing_to_commit`.
    pub(crate) fn run_commit(&mut self) -> FsResult<()> {
        if self.nothing_to_commit_scheduled() {
            return Ok(());
        }
        self.commit()
    }

    fn index_and_lpt_clean(&self) -> bool {
        self.tnc.dirty_count() == 0 && !self.lp.any_changed()
    }

    pub(crate) fn do_commit(&mut self, force_full: bool) -> FsResult<()> {
        let full = force_full || self.hot_commit_due();
        self.sync_heads()?;
        self.gc_start_commit(full)?;
        if full {
            self.apply_overlay();
        }
        self.index_gc_mark();
        let root = self.write_index()?;
        // Taken and given back emptied: the list keeps its capacity.
        let mut gone = std::mem::take(&mut self.tnc.pending_obsolete);
        self.obsolete_all(&gone);
        gone.clear();
        self.tnc.pending_obsolete = gone;
        self.clear_buds(!full);
        let idx_gc = self.take_freeable_index_lebs();
        let lpt_root = self.write_lpt()?;
        if self.cfg.strict {
            self.check_lpt_on_flash(lpt_root)?;
        }

        let orph = self.write_orphans()?;
        let log_lnum = self.start_new_log(full)?;
        let m = MstNode {
            commit_no: self.commit_no + 1,
            highest_inum: self.highest_inum,
            root,
            lpt_root: Some(lpt_root),
            orph,
            log_lnum,
            idx_head: self.idx_head.lnum.unwrap_or(u32::MAX),
            clean: false,
        };
        self.write_master(&m)?;
        self.mst = m;
        self.gc_end_commit(&idx_gc)?;
        self.finish_log_switch(log_lnum)?;
        self.commit_no += 1;
        if self.lpt.swapped {
            self.lpt_area ^= 1;
        }
        self.counters.commits += 1;
        self.bg_commit = false;
        self.finish_hot_commit(full);
        Ok(())
    }

    /// `ubifs_gc_start_commit` (gc.c): every freeable non-index LEB (all its
    /// space free or dirty, some of it dirty) is unmapped now and becomes
    /// free; the write buffers were synced just before (`do_commit`), so
    /// the nodes that made its nodes obsolete are on flash. UBIFS's LEB
    /// properties know no buds (`ubifs_categorize_lprops` puts every
    /// untaken LEB with only free and dirty space in `LPROPS_FREEABLE`), and
    /// the dirt of a node is added when the index drops it (`ubifs_add_dirt`
    /// from `tnc_delete`/`ubifs_tnc_add`, at journal time): so a closed bud
    /// whose nodes all died in this journal is freed by this commit, not the
    /// next. Open heads (`LPROPS_TAKEN`) and the buds of a delayed hot
    /// journal (re-referenced by the new log) stay.
    fn gc_start_commit(&mut self, full: bool) -> FsResult<()> {
        let leb = self.geo.leb_bytes;
        let mut keep: Vec<u32> = self.heads.iter().filter_map(|h| h.lnum).collect();
        if !full {
            keep.extend(self.hot_bud_lebs());
        }
        let closed_buds = (self.geo.main_first..self.geo.leb_count).filter(|l| {
            let p = self.lp[*l as usize];
            p.flags & F_BUD != 0 && p.flags & F_TAKEN == 0 && p.free + p.dirty == leb && !keep.contains(l)
        });
        let empties = self.lp.empties().filter(|l| self.is_empty_leb(*l));
        // With the delayed hot commit (seed 000, not UBIFS) the committed
        // index may still point at nodes whose dirt the hot overlay already
        // counted; closed buds then wait for the commit after the one that
        // ends them, as before.
        let delayed = self.cfg.delay_on();
        let closed_buds = closed_buds.filter(|_| !delayed);
        let freeable: Vec<u32> = closed_buds
            .chain(empties)
            .filter(|l| {
                let p = self.lp[*l as usize];
                p.dirty > 0 && p.flags & F_INDEX == 0 && self.idx_head.lnum != Some(*l)
            })
            .collect();
        for l in freeable {
            self.unmap(l, Cause::Gc)?;
            // A bud keeps its flag until `clear_buds`, after the index is
            // written: the last master's log still references it, so this
            // commit's index must not go into it (a cut before the new
            // master would replay index nodes as a bud).
            let flags = self.lp[l as usize].flags & F_BUD;
            self.lp.set(l, Lprops { free: self.geo.leb_bytes, dirty: 0, flags });
            self.vmap.clear_leb(l);
            self.counters.commit_unmaps += 1;
        }
        Ok(())
    }

    /// Index LEBs this commit made freeable (every index node in them
    /// obsolete): recorded free in the LPT now, unmapped only once the new
    /// master is on flash, since the old index may still be needed for
    /// recovery until then (`ubifs_gc_start_commit`'s idx_gc list).
    fn take_freeable_index_lebs(&mut self) -> Vec<u32> {
        let leb = self.geo.leb_bytes;
        let ih = self.idx_head.lnum;
        let lebs: Vec<u32> = (self.geo.main_first..self.geo.leb_count)
            .filter(|l| {
                let p = self.lp[*l as usize];
                p.flags & F_INDEX != 0 && p.free + p.dirty == leb && Some(*l) != ih
            })
            .collect();
        for l in &lebs {
            self.lp.set(*l, Lprops { free: leb, dirty: 0, flags: 0 });
            self.vmap.clear_leb(*l);
        }
        lebs
    }

    /// `ubifs_gc_end_commit` (gc.c): unmaps the index LEBs freed by this commit.
    fn gc_end_commit(&mut self, lebs: &[u32]) -> FsResult<()> {
        for l in lebs {
            if self.ubi.is_mapped(self.vol, *l)? {
                self.ubi.leb_unmap(self.vol, *l, Cause::Index)?;
                self.counters.commit_unmaps += 1;
            }
        }
        Ok(())
    }

    /// Index LEBs that are mostly obsolete get their live znodes rewritten.
    fn index_gc_mark(&mut self) {
        let leb = self.geo.leb_bytes;
        // Bytes of index nodes obsoleted since the last commit, per LEB.
        let mut pending = vec![0u32; self.geo.leb_count as usize];
        for x in &self.tnc.pending_obsolete {
            if let Some(c) = pending.get_mut(x.lnum as usize) {
                *c += x.aligned_len();
            }
        }
        let sparse: Vec<u32> = (self.geo.main_first..self.geo.leb_count)
            .filter(|l| {
                let p = self.lp[*l as usize];
                if p.flags & F_INDEX == 0 || Some(*l) == self.idx_head.lnum {
                    return false;
                }
                let used = leb - p.free - p.dirty;
                let live = used - pending[*l as usize].min(used);
                live > 0 && live < leb / 4
            })
            .collect();

        if !sparse.is_empty() {
            self.tnc.dirty_in_lebs(&sparse);
        }
    }

    fn write_index(&mut self) -> FsResult<Option<Loc>> {
        for n in self.tnc.dirty_postorder() {
            let sq = self.next_sqnum();
            let loc = self.idx_append(n, sq)?;
            self.tnc.set_written(n, loc);
            self.counters.index_nodes_written += 1;
        }
        self.idx_sync()?;
        Ok(self.tnc.root().and_then(|r| self.tnc.node(r).loc))
    }

    /// Appends znode `n`'s index node (sequence number `sq`) to the index
    /// head, encoded in its write buffer, and programs the buffer's full pages.
    fn idx_append(&mut self, n: usize, sq: u64) -> FsResult<Loc> {
        let len = self.tnc.idx_node_len(n) as u32;
        let bytes = crate::node::align(len as usize) as u32;
        let fits = self.idx_head.lnum.is_some() && self.idx_head.end() + bytes <= self.geo.leb_bytes;
        if !fits {
            self.idx_sync()?;
            let l = self.take_empty()?;
            self.lp.update(l, |p| p.flags |= F_INDEX);
            self.counters.index_lebs_taken += 1;
            self.idx_head = crate::fs::Head { lnum: Some(l), wbuf_offs: 0, ..Default::default() };
        }
        let lnum = self.idx_head.lnum.unwrap_or(0);
        let loc = Loc { lnum, offs: self.idx_head.end(), len };
        self.vmap.add(loc);
        self.lp.update(lnum, |p| p.free -= bytes);
        self.tnc.encode_idx_into(n, sq, &mut self.idx_head.wbuf);
        let io = self.geo.min_io as usize;
        let full = self.idx_head.wbuf.len() / io * io;
        if full > 0 {
            // Programmed from the buffer, which it leaves whether or not the
            // write succeeds (the offset moves only if it does).
            let r =
                self.ubi.leb_write(self.vol, lnum, self.idx_head.wbuf_offs, &self.idx_head.wbuf[..full], Cause::Index);
            self.idx_head.wbuf.drain(..full);
            r?;
            self.idx_head.wbuf_offs += full as u32;
        }
        Ok(loc)
    }

    fn idx_sync(&mut self) -> FsResult<()> {
        let Some(lnum) = self.idx_head.lnum else { return Ok(()) };
        let len = self.idx_head.wbuf.len();
        if len == 0 {
            return Ok(());
        }
        let b = std::mem::take(&mut self.idx_head.wbuf);
        let n = self.write_padded(lnum, self.idx_head.wbuf_offs, b, Cause::Index)?;
        let pad = n - len as u32;
        self.lp.update(lnum, |p| {
            p.free -= pad;
            p.dirty += pad;
        });

        self.idx_head.wbuf_offs += n;
        Ok(())
    }

    /// The LEB-properties tree: pnodes of 4 LEBs, nnodes of up to 4
    /// children. Only the pnodes that changed since the last commit and
    /// their ancestors are appended to the active area when they fit
    /// (nothing the last master references is overwritten or erased);
    /// otherwise, and at the first commit after mount, the whole tree is
    /// written bottom-up into the other area.
    fn write_lpt(&mut self) -> FsResult<Loc> {
        let changed = self.lp.take_changed();
        if let Some(root) = self.write_lpt_incremental(&changed)? {
            return Ok(root);
        }
        self.write_lpt_full()
    }

    fn pnode(&self, i: u32) -> Node {
        let first = i * 4;
        let n = (self.lp.len() as u32 - first).min(4);
        let props = (first..first + n)
            .map(|l| {
                let p: Lprops = self.lp[l as usize];
                (p.free, p.dirty, p.flags)
            })
            .collect();
        Node::Lpt(LptNode::Pnode { first, props, valid: self.lpt_bitmaps(first, n) })
    }

    fn write_lpt_full(&mut self) -> FsResult<Loc> {
        let area = self.lpt_area ^ 1;
        let first = self.geo.lpt_first + area * self.geo.lpt_lebs;
        let mut w = AreaWriter::new(first, self.geo.lpt_lebs, Cause::Lpt);
        let mut level: Vec<Loc> = Vec::new();
        for i in 0..self.lp.len().div_ceil(4) as u32 {
            let node = self.pnode(i);
            level.push(self.area_push(&mut w, &node)?);
        }
        let mut levels = Vec::new();
        while level.len() > 1 {
            let mut up = Vec::with_capacity(level.len().div_ceil(4));
            for c in level.chunks(4) {
                let node = Node::Lpt(LptNode::Nnode { children: c.to_vec() });
                up.push(self.area_push(&mut w, &node)?);
            }
            levels.push(std::mem::replace(&mut level, up));
        }
        self.area_finish(&mut w)?;
        let root = level[0];
        levels.push(level);
        self.lpt = crate::lprops::LptPlace { levels, head: Some((w.lnum, w.offs)), swapped: true };
        self.counters.lpt_full_commits += 1;
        Ok(root)
    }

    /// Appends the changed pnodes and their ancestors after the last
    /// commit's LPT nodes; None when there is no append position or too
    /// little room left in the active area.
    fn write_lpt_incremental(&mut self, changed: &[u32]) -> FsResult<Option<Loc>> {
        let Some((lnum, offs)) = self.lpt.head else { return Ok(None) };
        let mut dirty = vec![changed.to_vec()];
        for k in 1..self.lpt.levels.len() {
            let mut up: Vec<u32> = dirty[k - 1].iter().map(|i| i / 4).collect();
            up.dedup();
            dirty.push(up);
        }
        let pnodes: Vec<Node> = changed.iter().map(|i| self.pnode(*i)).collect();
        // The encoded sizes by arithmetic (`Node::lpt_encoded_len`, tested
        // against `encode`), not by encoding every node twice.
        let lpt_len = |n: &Node| match n {
            Node::Lpt(l) => Node::lpt_encoded_len(l) as u32,
            _ => n.encode(0, G_NONE).len() as u32,
        };
        let mut sizes: Vec<u32> = pnodes.iter().map(lpt_len).collect();
        for (k, idx) in dirty.iter().enumerate().skip(1) {
            for i in idx {
                let kids = (self.lpt.levels[k - 1].len() as u32 - i * 4).min(4) as usize;
                sizes.push(align(HDR + nnode_payload_len(kids)) as u32);
            }
        }
        let first = self.geo.lpt_first + self.lpt_area * self.geo.lpt_lebs;
        if !self.lpt_fits(first + self.geo.lpt_lebs, lnum, offs, &sizes) {
            return Ok(None);
        }
        let mut w = AreaWriter {
            first,
            lebs: self.geo.lpt_lebs,
            lnum,
            offs,
            buf: Vec::new(),
            cause: Cause::Lpt,
            started: true,
        };
        for (i, node) in changed.iter().zip(&pnodes) {
            self.lpt.levels[0][*i as usize] = self.area_push(&mut w, node)?;
        }
        for (k, idx) in dirty.iter().enumerate().skip(1) {
            for i in idx {
                let below = &self.lpt.levels[k - 1];
                let children = below[*i as usize * 4..(*i as usize * 4 + 4).min(below.len())].to_vec();
                self.lpt.levels[k][*i as usize] = self.area_push(&mut w, &Node::Lpt(LptNode::Nnode { children }))?;
            }
        }
        self.area_finish(&mut w)?;
        self.lpt.head = Some((w.lnum, w.offs));
        self.lpt.swapped = false;
        self.counters.lpt_incremental_commits += 1;

        Ok(self.lpt.levels.last().and_then(|top| top.first().copied()))
    }

    /// Whether nodes of `sizes` bytes, placed as `area_push` places them
    /// from (`lnum`, `offs`), stay below LEB `end`.
    fn lpt_fits(&self, end: u32, mut lnum: u32, mut offs: u32, sizes: &[u32]) -> bool {
        let (leb, io) = (self.geo.leb_bytes, self.geo.min_io);
        for s in sizes {
            if offs + s + io > leb {
                lnum += 1;
                offs = 0;
            }
            offs += s;
        }
        lnum < end
    }

    /// Appends `node` to the area: encoded straight into the writer's
    /// buffer, whose whole pages are programmed from it.
    pub(crate) fn area_push(&mut self, w: &mut AreaWriter, node: &Node) -> FsResult<Loc> {
        let sq = self.next_sqnum();
        let at = w.buf.len();
        node.encode_into(sq, G_NONE, &mut w.buf);
        let b_len = (w.buf.len() - at) as u32;
        let len = u32::from_le_bytes([w.buf[at + 16], w.buf[at + 17], w.buf[at + 18], w.buf[at + 19]]);
        let io = self.geo.min_io;
        if !w.started {
            self.unmap(w.lnum, w.cause)?;
            w.started = true;
        }
        if w.offs + at as u32 + b_len + io > self.geo.leb_bytes {
            let b = w.buf.split_off(at);
            self.area_finish(w)?;
            w.buf = b;
            w.lnum += 1;
            w.offs = 0;
            if w.lnum >= w.first + w.lebs {
                return Err(crate::error::FsError::Corrupt("metadata area overflow".into()));
            }
            self.unmap(w.lnum, w.cause)?;
        }
        let loc = Loc { lnum: w.lnum, offs: w.offs + w.buf.len() as u32 - b_len, len };
        let full = w.buf.len() / io as usize * io as usize;
        if full > 0 {
            let r = self.ubi.leb_write(self.vol, w.lnum, w.offs, &w.buf[..full], w.cause);
            w.buf.drain(..full);
            r?;
            w.offs += full as u32;
        }
        Ok(loc)
    }

    pub(crate) fn area_finish(&mut self, w: &mut AreaWriter) -> FsResult<()> {
        if !w.buf.is_empty() {
            let b = std::mem::take(&mut w.buf);
            w.offs += self.write_padded(w.lnum, w.offs, b, w.cause)?;
        }
        Ok(())
    }

    /// The orphan list, written only when it is not empty and differs from
    /// the list this mount last wrote (`ubifs_orphan_end_commit` writes only
    /// when there are new orphans, `c->cmt_orphans`); into the inactive
    /// orphan LEB, so the master still in force keeps its list.
    fn write_orphans(&mut self) -> FsResult<Option<Loc>> {
        let inums: Vec<u32> = self.orphans.iter().copied().collect();
        if inums.is_empty() {
            self.orph_written = None;
            return Ok(None);
        }
        if let Some((loc, w)) = &self.orph_written {
            if *w == inums {
                return Ok(Some(*loc));
            }
        }
        let area = self.orph_area ^ 1;
        let lnum = self.geo.orph_first + area;
        let sq = self.next_sqnum();
        let b = Node::Orph { commit_no: self.commit_no + 1, inums: inums.clone() }.encode(sq, G_NONE);
        let len = u32::from_le_bytes([b[16], b[17], b[18], b[19]]);
        self.unmap(lnum, Cause::Meta)?;
        self.write_padded(lnum, 0, b, Cause::Meta)?;
        let loc = Loc { lnum, offs: 0, len };
        self.orph_area = area;
        self.orph_written = Some((loc, inums));
        Ok(Some(loc))
    }

    /// Bitmaps of LEBs `first..first+n` for the LPT (empty when off).
    fn lpt_bitmaps(&self, first: u32, n: u32) -> Vec<Vec<u64>> {
        if !self.lpt_bitmap_on() {
            return Vec::new();
        }
        (first..first + n).map(|l| self.vmap.words(l)).collect()
    }

    /// References the new log must hold: the open heads at their write
    /// position, and (when the hot journal is not committed now) every hot
    /// bud from its first uncommitted offset.
    pub(crate) fn log_refs(&self, full: bool) -> Vec<(u32, u32, usize)> {
        let mut refs: Vec<(u32, u32, usize)> = (0..HEADS)
            .filter(|h| full || !self.delayed(*h))
            .filter_map(|h| self.heads[h].lnum.map(|l| (l, self.heads[h].wbuf_offs, h)))
            .collect();
        if !full {
            refs.extend(self.hot.buds.iter().copied());
        }
        refs
    }

    /// Writes the commit-start node and the references into the log LEB
    /// after the current one.
    fn start_new_log(&mut self, full: bool) -> FsResult<u32> {
        let lnum = if self.log.used == 0 { self.geo.log_first } else { self.next_log_lnum(self.log.lnum) };
        self.unmap(lnum, Cause::Log)?;
        let sq = self.next_sqnum();
        let mut b = Node::Cs { commit_no: self.commit_no + 1 }.encode(sq, G_NONE);
        for (l, offs, h) in self.log_refs(full) {
            let sq = self.next_sqnum();
            b.extend_from_slice(&Node::Ref { lnum: l, offs, jhead: h as u8 }.encode(sq, G_NONE));
        }
        let n = self.write_padded(lnum, 0, b, Cause::Log)?;
        self.log.offs = n;
        Ok(lnum)
    }

    fn finish_log_switch(&mut self, new: u32) -> FsResult<()> {
        for l in self.geo.log_first..self.geo.log_first + self.geo.log_lebs {
            if l != new {
                self.unmap(l, Cause::Log)?;
            }
        }
        self.log.first = new;
        self.log.lnum = new;
        self.log.used = 1;
        Ok(())
    }

    /// Appends the master node to both master LEBs.
    pub(crate) fn write_master(&mut self, m: &MstNode) -> FsResult<()> {
        let sq = self.next_sqnum();
        let b = Node::Mst(m.clone()).encode(sq, G_NONE);
        let n = b.len().next_multiple_of(self.geo.min_io as usize) as u32;
        for (i, lnum) in MST_LNUMS.iter().enumerate() {
            if self.master_next[i] + n > self.geo.leb_bytes {
                self.ubi.leb_unmap(self.vol, *lnum, Cause::Meta)?;
                self.master_next[i] = 0;
            }
            self.write_padded(*lnum, self.master_next[i], b.clone(), Cause::Meta)?;
            self.master_next[i] += n;
        }
        Ok(())
    }
}

/// Sequential writer into a metadata area (LPT).
pub(crate) struct AreaWriter {
    first: u32,
    lebs: u32,
    lnum: u32,
    offs: u32,
    buf: Vec<u8>,
    cause: Cause,
    started: bool,
}

impl AreaWriter {
    pub(crate) fn new(first: u32, lebs: u32, cause: Cause) -> Self {
        Self { first, lebs, lnum: first, offs: 0, buf: Vec::new(), cause, started: false }
    }
}
