//! Prefetching a merge's table lines one merge ahead (issue 22 target 5).
//!
//! A merge copies a whole cold logical unit: its map entries (`l2p`), the page-bitmap
//! words and valid counts of its data unit and of the free unit that receives the
//! copies, and the reverse-map entries of its pages in log blocks. With bulk copies ([`Units::copy_range`]) the
//! copy loop is bound by these cache misses, and prefetching them right before the
//! copy leaves no time for them to arrive. The schemes know their next merge earlier
//! (BAST: the next log victim; FAST: the next logical unit of the RW log block being
//! reclaimed; block mapping: the unit a request a few places ahead rewrites) and hint
//! it with [`Units::prefetch_merge`]. Hints change no state.

use super::{Units, NONE};
use crate::ftl::prefetch;

/// `u32` table entries per 64-byte cache line.
const PER_LINE: usize = 16;

impl Units {
    /// Hint that logical unit `lbn` will be merged soon: prefetch its map entries, its
    /// data unit's bitmap words and valid counts, and the same of the free unit a merge
    /// in that unit's group would take next.
    pub fn prefetch_merge(&self, lbn: u32) {
        if lbn as usize >= self.lu.len() {
            return;
        }
        let base = lbn as usize * self.upp as usize;
        prefetch_span(&self.l2p, base, self.upp as usize);
        self.prefetch_merge_bits(lbn);
    }

    /// [`Self::prefetch_merge`] without the map entries, for a merge that is told
    /// where its stored entries are ([`super::Stored::In`]) and so does not scan them.
    pub fn prefetch_merge_bits(&self, lbn: u32) {
        let Some(&super::Logical { data, .. }) = self.lu.get(lbn as usize) else { return };
        if data == NONE {
            return;
        }
        // A merge keeps no reverse-map entry of the data units (`units/bulk.rs`).
        self.prefetch_bits(data);
        if let Some(&dest) = self.free[self.group_of(data) as usize].front() {
            self.prefetch_bits(dest);
        }
    }

    /// Hint that logical unit `lbn` will be merged soon with its log unit `log` (BAST's
    /// next victim): [`Self::prefetch_merge_bits`] and [`Self::prefetch_unit`]. For
    /// one-word units in one pass (each block computed once, no loops).
    #[inline]
    pub fn prefetch_log_merge(&self, lbn: u32, log: u32) {
        if !self.one_word {
            self.prefetch_merge_bits(lbn);
            return self.prefetch_unit(log);
        }
        let ppb = self.ppb as usize;
        let lb = self.block(log, 0) as usize;
        // The log's programmed pages' reverse-map entries (usually one line).
        prefetch_span(&self.p2l, lb * ppb, self.fill[log as usize] as usize);
        self.nand.prefetch_block_lines(lb as u32);
        let data = self.lu[lbn as usize].data;
        if data != NONE {
            let (i, g) = self.by_groups.div_rem32(data);
            // `block(data, 0)` with S = 1.
            self.nand.prefetch_block_lines(g * self.geo.blocks_per_plane + i);
            if let Some(&dest) = self.free[g as usize].front() {
                self.nand.prefetch_block_lines(self.block(dest, 0));
            }
        }
    }

    /// Prefetch the reverse-map entries of the programmed pages, bitmap words and
    /// valid counts of `unit` (a log block, whose pages' entries a merge clears).
    pub fn prefetch_unit(&self, unit: u32) {
        if self.one_word {
            let first = self.block(unit, 0) * self.ppb;
            prefetch_span(&self.p2l, first as usize, self.fill[unit as usize] as usize);
            return self.prefetch_bits(unit);
        }
        let pages = self.fill[unit as usize].div_ceil(self.sb);
        for m in 0..self.sb {
            let first = self.block(unit, m) * self.ppb;
            prefetch_span(&self.p2l, first as usize, pages as usize);
        }
        self.prefetch_bits(unit);
    }

    /// Prefetch the bitmap words and valid counts of `unit`.
    #[inline]
    fn prefetch_bits(&self, unit: u32) {
        if self.one_word {
            // One block, its bits in one word (`units/word.rs`).
            let block = self.block(unit, 0);
            self.nand.prefetch(block * self.ppb);
            self.nand.prefetch_block(block);
        } else {
            self.prefetch_members(unit);
        }
    }

    /// [`Self::prefetch_bits`] of a unit of several blocks or words.
    #[inline(never)]
    fn prefetch_members(&self, unit: u32) {
        for m in 0..self.sb {
            let block = self.block(unit, m);
            let first = block * self.ppb;
            self.nand.prefetch(first);
            self.nand.prefetch(first + self.ppb - 1);
            self.nand.prefetch_block(block);
        }
    }
}

/// Prefetch the cache lines of `t[from..from + len]` (clipped to `t`).
#[inline]
fn prefetch_span(t: &[u32], from: usize, len: usize) {
    let end = (from + len).min(t.len());
    if from >= end {
        return;
    }
    let mut i = from;
    while i < end {
        prefetch(&t[i]);
        i += PER_LINE;
    }
    prefetch(&t[end - 1]);
}
