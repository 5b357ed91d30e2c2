//! Journal heads (base, data, GC) with write buffers, buds, and the log of
//! reference nodes. A bud's reference node is on flash before any node is
//! written into the bud, so replay finds every bud that holds data.

use crate::error::{Errno, FsResult};
use crate::fs::{pad_into, Fs, BASE, DATA, F_BUD, GC, HEADS, HOT_BASE, HOT_DATA};
use crate::node::{Loc, Node, G_IN, G_LAST, G_NONE};
use flashlab_mtd::Cause;

pub(crate) fn head_cause(h: usize) -> Cause {
    match h {
        BASE | HOT_BASE => Cause::Base,
        DATA | HOT_DATA => Cause::Data,
        GC => Cause::Gc,
        _ => Cause::Index,
    }
}

/// A node for [`Fs::head_append`]: bytes encoded already (or copied as they
/// are, by GC), or a data node encoded straight into the write buffer with
/// the sequence number and group it was given.
pub(crate) enum Pending<'a> {
    Bytes(&'a [u8]),
    Encoded(Vec<u8>),
    Data(crate::codec::DataFields<'a>, u64, u8),
}

impl Pending<'_> {
    /// Bytes appended (the node aligned to 8 bytes).
    fn appended_len(&self) -> usize {
        match self {
            Pending::Bytes(b) => b.len(),
            Pending::Encoded(b) => b.len(),
            Pending::Data(d, ..) => crate::node::align(d.node_len()),
        }
    }

    /// The node's length (its header's `len`).
    fn node_len(&self) -> u32 {
        match self {
            Pending::Bytes(b) => u32::from_le_bytes([b[16], b[17], b[18], b[19]]),
            Pending::Encoded(b) => u32::from_le_bytes([b[16], b[17], b[18], b[19]]),
            Pending::Data(d, ..) => d.node_len() as u32,
        }
    }

    fn append_to(&self, out: &mut Vec<u8>) {
        match self {
            Pending::Bytes(b) => out.extend_from_slice(b),
            Pending::Encoded(b) => out.extend_from_slice(b),
            Pending::Data(d, sq, g) => d.encode_into(*sq, *g, out),
        }
    }
}

impl Fs {
    /// Encodes `nodes` as one group and appends it to head `h` (all in one
    /// LEB). Returns their locations. The sequence numbers are taken first,
    /// in order (before any head switch, commit or GC the append may cause);
    /// data nodes are then encoded straight into the write buffer.
    pub(crate) fn journal_write(&mut self, h: usize, nodes: &[Node]) -> FsResult<Vec<Loc>> {
        let n = nodes.len();
        let pending: Vec<Pending> = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let g = if n == 1 {
                    G_NONE
                } else if i + 1 == n {
                    G_LAST
                } else {
                    G_IN
                };
                let sq = self.next_sqnum();
                match node.data_fields() {
                    Some(d) => Pending::Data(d, sq, g),
                    None => Pending::Encoded(node.encode(sq, g)),
                }
            })
            .collect();
        let locs = self.head_append(h, &pending)?;
        // ubifs_wbuf_add_ino_nolock: remember whose nodes wait in the
        // write buffer, so that fsync syncs only those buffers.
        if !self.heads[h].wbuf.is_empty() {
            for i in nodes.iter().flat_map(Node::inums) {
                self.note_wbuf_ino(h, i);
            }
        }
        Ok(locs)
    }

    /// [`Fs::journal_write`] of one data node given by its fields (a whole
    /// block written as it is: no `DataNode` with a copy of the payload).
    pub(crate) fn journal_write_data(&mut self, h: usize, d: crate::codec::DataFields) -> FsResult<Loc> {
        let sq = self.next_sqnum();
        let loc = self.head_append_one(h, Pending::Data(d, sq, G_NONE))?;
        if !self.heads[h].wbuf.is_empty() {
            self.note_wbuf_ino(h, d.inum);
        }
        Ok(loc)
    }

    fn note_wbuf_ino(&mut self, h: usize, i: u32) {
        if i != 0 && !self.heads[h].inos.contains(&i) {
            self.heads[h].inos.push(i);
        }
    }

    /// Appends nodes to head `h`; returns their locations.
    pub(crate) fn head_append(&mut self, h: usize, bufs: &[Pending]) -> FsResult<Vec<Loc>> {
        let mut locs = Vec::with_capacity(bufs.len());
        self.head_append_with(h, bufs, |l| locs.push(l))?;
        Ok(locs)
    }

    /// [`Fs::head_append`] of one node: its location, no vector.
    pub(crate) fn head_append_one(&mut self, h: usize, b: Pending) -> FsResult<Loc> {
        let mut loc = Loc { lnum: 0, offs: 0, len: 0 };
        self.head_append_with(h, std::slice::from_ref(&b), |l| loc = l)?;
        Ok(loc)
    }

    /// Appends nodes to head `h`, handing each node's location to `found`
    /// (in order) before the write buffer's full pages are programmed.
    fn head_append_with(&mut self, h: usize, bufs: &[Pending], mut found: impl FnMut(Loc)) -> FsResult<()> {
        let total: u32 = bufs.iter().map(|b| b.appended_len() as u32).sum();
        let fits = self.heads[h].lnum.is_some() && self.heads[h].end() + total <= self.geo.leb_bytes;
        if !fits {
            self.head_switch(h)?;
        }
        let lnum = self.heads[h].lnum.unwrap_or(0);
        for b in bufs {
            let loc = Loc { lnum, offs: self.heads[h].end(), len: b.node_len() };
            self.vmap.add(loc);
            found(loc);
            b.append_to(&mut self.heads[h].wbuf);
        }
        self.lp.update(lnum, |p| p.free -= total);
        self.head_flush_full(h)
    }

    fn head_flush_full(&mut self, h: usize) -> FsResult<()> {
        let io = self.geo.min_io as usize;
        let full = self.heads[h].wbuf.len() / io * io;
        self.note_wbuf_state(h, full);
        if full == 0 {
            return Ok(());
        }
        let lnum = self.heads[h].lnum.unwrap_or(0);
        let offs = self.heads[h].wbuf_offs;
        // The buffer leaves the write buffer whether or not the write succeeds.
        let r = self.ubi.leb_write(self.vol, lnum, offs, &self.heads[h].wbuf[..full], head_cause(h));
        self.heads[h].wbuf.drain(..full);
        self.heads[h].wbuf_offs += full as u32;
        r?;
        Ok(())
    }

    /// Pads the write buffer to a page and programs it.
    pub(crate) fn head_sync(&mut self, h: usize) -> FsResult<()> {
        let Some(lnum) = self.heads[h].lnum else { return Ok(()) };
        let len = self.heads[h].wbuf.len();
        if len == 0 {
            return Ok(());
        }
        let io = self.geo.min_io as usize;
        let target = len.next_multiple_of(io);
        let room = (self.geo.leb_bytes - self.heads[h].wbuf_offs) as usize;
        let target = target.min(room);
        pad_into(&mut self.heads[h].wbuf, target);
        let pad = (target - len) as u32;
        self.lp.update(lnum, |p| {
            p.free -= pad;
            p.dirty += pad;
        });
        self.head_flush_full(h)
    }

    /// After a flush of `full` bytes: an emptied write buffer forgets its
    /// inodes and stops its timer; a newly used one starts the timer.
    fn note_wbuf_state(&mut self, h: usize, full: usize) {
        let now = self.now_ns;
        let head = &mut self.heads[h];
        if head.wbuf.len() == full {
            head.inos.clear();
            head.dirty_since_ns = None;
        } else if head.dirty_since_ns.is_none() {
            head.dirty_since_ns = Some(now);
        }
    }

    /// Syncs every journal head (sync, commit, GC: `ubifs_sync_fs`,
    /// `do_commit` and `gc_sync_wbufs` sync every write buffer).
    pub(crate) fn sync_heads(&mut self) -> FsResult<()> {
        for h in 0..HEADS {
            self.head_sync(h)?;
        }
        Ok(())
    }

    /// fsync's flush (`ubifs_sync_wbufs_by_inode`, io.c): syncs only the
    /// write buffers holding nodes of inode `inum`; the GC head is skipped,
    /// as its nodes are copies of nodes that are on flash elsewhere.
    pub(crate) fn sync_heads_of(&mut self, inum: u32) -> FsResult<()> {
        for h in 0..HEADS {
            if h != GC && self.heads[h].inos.contains(&inum) {
                self.head_sync(h)?;
            }
        }
        Ok(())
    }

    /// Write-buffer timers (`wbuf_timer_callback_nolock`, io.c): a write
    /// buffer holding data for `WBUF_TIMEOUT_SOFTLIMIT` (3 s) of simulated
    /// time is synced; the GC head has no timer (`no_timer`).
    pub(crate) fn sync_expired_wbufs(&mut self) -> FsResult<()> {
        const WBUF_TIMEOUT_NS: u64 = 3_000_000_000;
        for h in 0..HEADS {
            let due = self.heads[h].dirty_since_ns.is_some_and(|t| self.now_ns >= t + WBUF_TIMEOUT_NS);
            if h != GC && due {
                self.head_sync(h)?;
            }
        }
        Ok(())
    }

    /// Moves head `h` to a fresh bud: maybe commit first, take an empty
    /// LEB, write its reference node to the log.
    fn head_switch(&mut self, h: usize) -> FsResult<()> {
        self.head_sync(h)?;
        self.heads[h].lnum = None;
        // ubifs_add_bud_to_log: a commit is required when the log is full or
        // when the new bud would take the buds past `max_bud_bytes`; a
        // background commit is requested once they reach `bg_bud_bytes`.
        if !self.in_commit && (!self.log_has_room() || self.journal_full()) {
            self.commit()?;
        }
        if !self.in_commit && self.bud_bytes() >= self.bg_bud_bytes() {
            self.bg_commit = true;
        }
        let lnum = if h == GC { self.take_empty()? } else { self.take_empty_for_head()? };
        self.log_ref(lnum, 0, h as u8)?;
        self.lp.update(lnum, |p| p.flags |= F_BUD);
        if self.delayed(h) {
            self.hot.buds.push((lnum, 0, h));
        }
        self.heads[h].lnum = Some(lnum);
        self.heads[h].wbuf_offs = 0;
        self.heads[h].wbuf.clear();
        Ok(())
    }

    /// Bud LEBs of the journal: the setting, or UBIFS's default for the
    /// volume (`create_default_filesystem`), at most the main area less 4.
    pub(crate) fn journal_max_buds(&self) -> u32 {
        let g = self.geo;
        let n = match self.cfg.journal_max_buds {
            0 => crate::layout::ubifs_default_journal(g.leb_count, g.leb_bytes, g.min_io).1,
            n => n,
        };
        n.min(g.main_lebs().saturating_sub(4)).max(2)
    }

    /// UBIFS's `max_bud_bytes`.
    pub(crate) fn max_bud_bytes(&self) -> u64 {
        self.journal_max_buds() as u64 * self.geo.leb_bytes as u64
    }

    /// UBIFS's `bg_bud_bytes` (`init_constants_sb`, super.c): 13/16 of
    /// `max_bud_bytes`.
    pub(crate) fn bg_bud_bytes(&self) -> u64 {
        (self.max_bud_bytes() * 13) >> 4
    }

    /// UBIFS's `bud_bytes`: the space of every bud from its start offset
    /// (the whole LEB for a bud begun after the last commit).
    pub(crate) fn bud_bytes(&self) -> u64 {
        (self.lp.total_buds() as u64 * self.geo.leb_bytes as u64).saturating_sub(self.bud_start_bytes)
    }

    /// Whether a new bud would take the journal past `max_bud_bytes`.
    pub(crate) fn journal_full(&self) -> bool {
        self.bud_bytes() + self.geo.leb_bytes as u64 > self.max_bud_bytes()
    }

    /// True when LEB `l` is empty and may be taken.
    pub(crate) fn is_empty_leb(&self, l: u32) -> bool {
        let p = self.lp[l as usize];
        self.geo.is_main(l)
            && p.free + p.dirty == self.geo.leb_bytes
            && p.flags & (F_BUD | crate::fs::F_TAKEN) == 0
            && !self.heads.iter().any(|h| h.lnum == Some(l))
            && self.idx_head.lnum != Some(l)
    }

    /// Empty LEBs: the table's running count less those under a head.
    pub(crate) fn count_empty(&self) -> u32 {
        self.lp.total_empty() - self.head_lebs().filter(|l| self.lp.props_empty(*l)).count() as u32
    }

    /// [`Fs::count_empty`] by a scan of every LEB (strict checks).
    pub(crate) fn count_empty_scan(&self) -> u32 {
        (self.geo.main_first..self.geo.leb_count).filter(|l| self.is_empty_leb(*l)).count() as u32
    }

    /// Takes an empty LEB: an erased one if any, else a freeable one (all
    /// its nodes obsolete), which is unmapped (counted in `freeable_reclaims`).
    pub(crate) fn take_empty(&mut self) -> FsResult<u32> {
        let mut freeable = None;
        let mut erased = None;
        for l in self.lp.empties() {
            if !self.is_empty_leb(l) {
                continue;
            }

            if !self.ubi.is_mapped(self.vol, l)? {
                erased = Some(l);
                break;
            }
            freeable.get_or_insert(l);
        }
        let l = erased.or(freeable).ok_or(Errno::ENOSPC)?;
        if self.ubi.is_mapped(self.vol, l)? {
            self.counters.freeable_reclaims += 1;
            // Its nodes are obsolete, possibly only because of nodes still
            // in write buffers: make those durable before erasing.
            self.sync_heads()?;
            self.ubi.leb_unmap(self.vol, l, Cause::Other)?;
        }
        self.lp.set(l, crate::fs::Lprops { free: self.geo.leb_bytes, dirty: 0, flags: 0 });

        self.vmap.clear_leb(l);
        Ok(l)
    }

    /// Empty LEBs journal heads must leave for GC and the next commit.
    pub(crate) fn reserved_lebs(&self) -> u32 {
        1 + self.idx_reserve_lebs()
    }

    /// Takes an empty LEB for a base/data head, running GC and, if that
    /// is not enough, a commit.
    fn take_empty_for_head(&mut self) -> FsResult<u32> {
        let mut commits = 0;
        for _ in 0..(4 * self.geo.main_lebs() + 8) {
            if self.count_empty() > self.reserved_lebs() {
                return self.take_empty();
            }
            if self.gc_once()? {
                continue;
            }
            if commits >= 3 || self.in_commit {
                break;
            }
            // GC-head (and hot) buds become collectable after a commit.
            self.commit_full()?;
            commits += 1;
        }
        self.counters.enospc_late += 1;
        Err(Errno::ENOSPC.into())
    }

    pub(crate) fn log_has_room(&self) -> bool {
        self.log.offs + self.geo.min_io <= self.geo.leb_bytes || self.log.used + 1 < self.geo.log_lebs
    }

    pub(crate) fn next_log_lnum(&self, l: u32) -> u32 {
        let g = self.geo;
        g.log_first + (l - g.log_first + 1) % g.log_lebs
    }

    /// Appends a reference node to the log, synchronously.
    pub(crate) fn log_ref(&mut self, lnum: u32, offs: u32, jhead: u8) -> FsResult<()> {
        if self.log.offs + self.geo.min_io > self.geo.leb_bytes {
            let next = self.next_log_lnum(self.log.lnum);
            self.unmap(next, Cause::Log)?;
            self.log.lnum = next;
            self.log.offs = 0;
            self.log.used += 1;
        }
        let sq = self.next_sqnum();
        let b = Node::Ref { lnum, offs, jhead }.encode(sq, G_NONE);
        let n = self.write_padded(self.log.lnum, self.log.offs, b, Cause::Log)?;
        self.log.offs += n;
        Ok(())
    }

    /// Clears the bud flag of every LEB that is not an open head (nor,
    /// with `keep_hot`, a bud of the delayed hot journal).
    pub(crate) fn clear_buds(&mut self, keep_hot: bool) {
        let mut heads: Vec<u32> = self.heads.iter().filter_map(|h| h.lnum).collect();
        if keep_hot {
            heads.extend(self.hot_bud_lebs());
        }
        // remove_buds (log.c): a bud that stays (under a head, or a delayed
        // hot bud) now starts where the new log's reference points.
        self.bud_start_bytes = self.log_refs(!keep_hot).iter().map(|r| r.1 as u64).sum();
        self.lp.clear_flag_except(F_BUD, |l| heads.contains(&l));
    }
}
