//! Garbage collection: the dirtiest LEB that is neither a bud nor an index
//! LEB has its live nodes copied (unchanged, same sequence number) to the
//! GC head; once the GC head is synced the LEB is unmapped. Replay applies
//! the copies from the GC head's bud, so the committed index may point into
//! the erased LEB without harm.

use crate::codec::{leaf_key, parse_hdr};
use crate::error::FsResult;
use crate::fs::{Fs, Lprops, F_TAKEN, GC};
use crate::journal::Pending;

use crate::node::{align, Bad, Hdr, Loc, HDR};
use flashlab_mtd::Cause;

impl Fs {
    /// The LEB with the most free + dirty space (lowest number on ties) that
    /// is not a bud, index LEB, taken or under a head, nor full or clean.
    fn gc_victim(&self) -> Option<u32> {
        self.lp.gc_candidates().find(|l| !self.heads.iter().any(|h| h.lnum == Some(*l)))
    }

    /// Whether the next victim's live nodes fit the GC head's free room
    /// (GC then needs no new LEB).
    pub(crate) fn gc_victim_fits_head(&self) -> bool {
        let Some(v) = self.gc_victim() else { return false };
        let p = self.lp[v as usize];
        let live = self.geo.leb_bytes - p.free - p.dirty;
        let room = self.heads[GC].lnum.map_or(0, |_| self.geo.leb_bytes - self.heads[GC].end());
        live <= room
    }

    /// Collects victims until about one LEB is reclaimed, then syncs the
    /// heads once and unmaps them. Ok(false) when nothing is worth it.
    pub(crate) fn gc_once(&mut self) -> FsResult<bool> {
        let mut victims = Vec::new();
        let mut gained = 0;
        while gained < self.geo.leb_bytes {
            let Some(v) = self.gc_victim() else { break };
            let p = self.lp[v as usize];
            let live = self.geo.leb_bytes - p.free - p.dirty;
            let room = self.heads[GC].lnum.map_or(0, |_| self.geo.leb_bytes - self.heads[GC].end());
            if live > room && self.count_empty() < if victims.is_empty() { 1 } else { 2 } {
                break;
            }
            gained += p.free + p.dirty;
            self.lp.update(v, |p| p.flags |= F_TAKEN);
            victims.push(v);
            if let Err(e) = self.gc_collect(v) {
                for v in &victims {
                    self.lp.update(*v, |p| p.flags &= !F_TAKEN);
                }
                return Err(e);
            }
        }
        if victims.is_empty() {
            return Ok(false);
        }
        // Nodes that made the victims' other nodes obsolete may still sit in
        // write buffers: they must reach flash before the victims are erased.
        self.sync_heads()?;
        for v in victims {
            self.unmap(v, Cause::Gc)?;
            self.lp.set(v, Lprops { free: self.geo.leb_bytes, dirty: 0, flags: 0 });

            self.vmap.clear_leb(v);
            self.counters.gc_runs += 1;
        }
        Ok(true)
    }

    pub(crate) fn gc_collect(&mut self, v: u32) -> FsResult<()> {
        if self.lpt_bitmap_on() {
            return self.gc_collect_valid(v);
        }
        let written = self.geo.leb_bytes - self.lp[v as usize].free;
        // The LEB buffer is kept between runs (every byte of it is read over).
        let mut buf = std::mem::take(&mut self.gc_buf);
        buf.resize(written as usize, 0);
        let r = self.gc_scan_leb(v, &mut buf);
        self.gc_buf = buf;
        r
    }

    fn gc_scan_leb(&mut self, v: u32, buf: &mut [u8]) -> FsResult<()> {
        self.ubi.leb_read(self.vol, v, 0, buf, Cause::Gc)?;
        self.counters.gc_pages_read += (buf.len() as u32).div_ceil(self.geo.min_io) as u64;
        let mut pos = 0usize;
        while pos + HDR <= buf.len() {
            match parse_hdr(&buf[pos..]) {
                Ok(h) => {
                    let len = h.len as usize;
                    let loc = Loc { lnum: v, offs: pos as u32, len: h.len };
                    let _ = self.gc_move(&buf[pos..pos + align(len).min(buf.len() - pos)], &h, loc)?;
                    pos += align(len);
                }
                Err(Bad::Empty) => break,
                Err(_) => pos = (pos + 1).next_multiple_of(self.geo.min_io as usize),
            }
        }
        Ok(())
    }

    /// GC with the validity bitmap: reads only the runs of valid pages and
    /// looks for live nodes in them. A run may start inside a dead node, so
    /// every 8-byte position is tried; a node counts only if the index points
    /// exactly at it, and only live nodes are skipped over, so a false match
    /// in dead bytes can neither be moved nor hide a live node.
    fn gc_collect_valid(&mut self, v: u32) -> FsResult<()> {
        let written = self.geo.leb_bytes - self.lp[v as usize].free;
        for (offs, len) in self.valid_runs(v, written) {
            let mut buf = vec![0u8; len as usize];
            self.ubi.leb_read(self.vol, v, offs, &mut buf, Cause::Gc)?;
            self.counters.gc_pages_read += len.div_ceil(self.geo.min_io) as u64;
            self.gc_scan_run(v, offs, &buf)?;
        }
        Ok(())
    }

    fn gc_scan_run(&mut self, v: u32, offs: u32, buf: &[u8]) -> FsResult<()> {
        let mut pos = 0usize;
        while pos + HDR <= buf.len() {
            let step = match parse_hdr(&buf[pos..]) {
                Ok(h) if pos + h.len as usize <= buf.len() => {
                    let loc = Loc { lnum: v, offs: offs + pos as u32, len: h.len };
                    let end = (pos + align(h.len as usize)).min(buf.len());
                    if self.gc_move(&buf[pos..end], &h, loc)? {
                        align(h.len as usize)
                    } else {
                        crate::node::ALIGN
                    }
                }
                _ => crate::node::ALIGN,
            };
            pos += step;
        }
        Ok(())
    }

    /// Copies the node at `loc` to the GC head if it is live; true if moved.
    /// `h` is `bytes`' header as the scan's `parse_hdr` checked it (so the
    /// node is not checked, nor its payload decoded, a second time: `leaf_key`
    /// is `parse_node`'s key).
    fn gc_move(&mut self, bytes: &[u8], h: &Hdr, loc: Loc) -> FsResult<bool> {
        let Some(key) = leaf_key(h, bytes) else { return Ok(false) };
        // UBIFS asks the TNC about every scanned node (`ubifs_tnc_has_node`
        // in `sort_nodes`, from `ubifs_garbage_collect_leb`, fs/ubifs/gc.c);
        // the answer is the same without the walk when the page map shows
        // the node dead (a data node's middle page is its own), and the
        // in-memory walk can neither fail nor count anything here.
        if self.vmap.spans_a_dead_page(loc) {
            debug_assert_ne!(self.idx_lookup(&key), Some(loc), "page map says dead, index says live");
            return Ok(false);
        }
        if self.idx_lookup(&key) != Some(loc) {
            return Ok(false);
        }
        let aligned = align(loc.len as usize);
        let padded;
        let copy = if bytes.len() == aligned {
            bytes
        } else {
            let mut b = bytes.to_vec();
            b.resize(aligned, 0);
            padded = b;
            &padded[..]
        };
        let new = self.head_append_one(GC, Pending::Bytes(copy))?;
        self.idx_set(GC, &key, new);
        self.counters.gc_moved_nodes += 1;
        Ok(true)
    }
}
