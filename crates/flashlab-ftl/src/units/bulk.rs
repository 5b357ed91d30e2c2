//! Merge copies in bulk (issue 22 target 5): a merge moves up to a whole logical unit,
//! and doing it page by page through [`Units::copy`] paid for per-page bookkeeping that
//! cancels out (the logical unit's valid count goes down and up again, the destination
//! block's write pointer and valid count move once per page, the counters once per
//! operation). [`Units::copy_range`] leaves exactly the state and counters of
//! [`Units::copy`] called for each offset in order; when the operations are recorded for
//! a timing engine it logs the same read→program pairs in the same order.
//! `ftl.set_bulk_copies(false)` selects the per-page path (the reference the tests
//! compare against).
//! `tests/ftl/mapping.rs` (`bulk_copies_equal_per_page_copies`) compares the two.
//!
//! When the destination becomes the logical unit's data unit (every merge; not
//! BAST's padding into a log block), a copied page is home there: its map entry becomes
//! (or stays) [`HOME`] and no reverse-map entry is written, neither for the new page nor
//! for an old copy in the old data unit (Kim et al. 2002 §3: data units are
//! block-mapped). Only old copies in log blocks have their entries cleared. So a merge
//! of a logical unit whose pages are home touches its map entries (read, unchanged),
//! the bitmap words and counts of both units, and the log pages' entries.

use super::{Units, HOME, NONE};
use crate::ftl::NO_PAGE;
use flashlab_nand::{Cause, OpKind};

impl Units {
    /// Move the newest copy of every mapped page of `lbn` at offsets `from..to` to the
    /// same offsets of `unit`; returns the pages copied. `home`: `unit` becomes `lbn`'s
    /// data unit when the caller's merge ends (the copies are then home there).
    pub fn copy_range(&mut self, lbn: u32, unit: u32, from: u32, to: u32, cause: Cause, home: bool) -> u64 {
        let base = lbn as u64 * self.upp as u64;
        if !self.bulk_copies {
            return (from..to).map(|k| self.copy(base + k as u64, unit, k, cause) as u64).sum();
        }
        self.moves.clear();
        let mut n = 0;
        let mut last = None;
        for m in 0..self.sb {
            let (copied, hi) = self.copy_member(base, unit, m, (from, to), cause, home);
            n += copied;
            last = last.max(hi);
        }
        if let Some(k) = last {
            self.fill[unit as usize] = k + 1;
        }
        self.nand.count(OpKind::Read, cause, n);
        if self.record_ops {
            self.log_moves(cause);
        }
        n
    }

    /// Log the copies of the last [`Self::copy_range`] as [`Units::copy`] does: per
    /// position in order, the read of the old copy and the program of the new one.
    fn log_moves(&mut self, cause: Cause) {
        let mut moves = std::mem::take(&mut self.moves);
        if self.sb > 1 {
            moves.sort_unstable_by_key(|&(k, _, _)| k);
        }
        for &(_, old, page) in &moves {
            self.log(OpKind::Read, cause, old);
            self.log(OpKind::Program, cause, page);
        }
        self.moves = moves;
    }

    /// The part of [`Self::copy_range`] that lands in member block `m` of `unit`
    /// (positions `k ≡ m mod S`): remap each page, then invalidate the old copies and
    /// program the destination offsets at once. Returns the pages copied and the last
    /// position. Old copies in the logical unit's data unit (most of a merge's) sit at
    /// their own offsets there (checked by [`Units::check_all`]), so they are exactly
    /// that member block's valid pages in the offset range, invalidated as a range; the
    /// others (in log blocks) one by one.
    fn copy_member(&mut self, base: u64, unit: u32, m: u32, range: (u32, u32), cause: Cause, home: bool) -> (u64, Option<u32>) {
        let ((from, to), sb, block) = (range, self.sb, self.block(unit, m));
        let first = block * self.ppb;
        let k0 = from + (m + sb - from % sb) % sb;
        let (lo, hi) = (k0 / sb, k0 / sb + to.saturating_sub(k0).div_ceil(sb));
        let data = self.data[(base / self.upp as u64) as usize];
        let src = if data == NONE || data == unit { u32::MAX } else { self.block(data, m) };
        let src_first = src.wrapping_mul(self.ppb);
        let mut offs = std::mem::take(&mut self.offs);
        offs.clear();
        let mut from_src = 0;
        for j in lo..hi {
            let lpn = base + (j * sb + m) as u64;
            let e = self.l2p[lpn as usize];
            if e == NO_PAGE {
                continue;
            }
            // A home page is at its offset of the data unit (`data != unit` then).
            let old = if e == HOME { src_first + j } else { e };
            let page = first + j;
            if src != u32::MAX && old.wrapping_sub(src_first) < self.ppb {
                from_src += 1; // the data unit's p2l entries are not kept
            } else {
                self.nand.invalidate(old);
                self.p2l[old as usize] = NO_PAGE;
            }
            if home {
                if e != HOME {
                    self.l2p[lpn as usize] = HOME;
                }
            } else {
                self.p2l[page as usize] = lpn as u32;
                self.l2p[lpn as usize] = page;
            }
            if self.s.track_content {
                self.tags[page as usize] = self.tags[old as usize];
            }
            offs.push(j);
            if self.record_ops {
                self.moves.push((j * sb + m, old, page));
            }
        }
        if src != u32::MAX {
            let cleared = self.nand.invalidate_range(src, lo, hi);
            assert_eq!(cleared, from_src, "data unit {data}: valid pages in offsets {lo}..{hi} that are not its own");
        }
        self.nand.program_offsets(block, &offs, cause);
        let n = offs.len() as u64;
        let last = offs.last().map(|&j| j * sb + m);
        self.offs = offs;
        (n, last)
    }
}
