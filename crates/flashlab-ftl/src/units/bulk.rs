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
//! The destination becomes the logical unit's data unit (every merge) or is its
//! in-order log (BAST's padding; `units.rs`), so a copied page is home there: its map
//! entry becomes (or stays) [`HOME`] and no reverse-map entry is written, neither for
//! the new page nor for an old copy in the old data unit (Kim et al. 2002 §3: data units
//! are block-mapped). Only old copies in log blocks have their entries cleared. So a
//! merge of a logical unit whose pages are home reads its map entries (a branch-free
//! test per 16 entries; the few stored ones are listed), the bitmap words and counts
//! of both units, and the log pages' entries.

use super::{Units, HOME, NONE};
use crate::ftl::NO_PAGE;
use flashlab_nand::{Cause, OpKind};

/// Map entries tested at once for stored locations ([`Units::copy_range`]).
const CHUNK: usize = 16;

/// Where a bulk copy's range has map entries with stored locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// Anywhere: found by a scan of the range's map entries.
    Scan,
    /// Exactly the range's valid pages in log unit `u` (none if `u` is `NONE`): the
    /// caller knows (BAST: only an out-of-order log block's pages are stored, its
    /// `check_scheme` checks it).
    In(u32),
}

impl Units {
    /// Move the newest copy of every mapped page of `lbn` at offsets `from..to` to the
    /// same offsets of `unit`, which becomes `lbn`'s data unit when the caller's merge
    /// ends or is its in-order log (the copies are home there); returns the pages copied.
    /// `stored`: where the range's stored map entries are.
    pub fn copy_range(&mut self, lbn: u32, unit: u32, (from, to): (u32, u32), cause: Cause, stored: Stored) -> u64 {
        let base = lbn as u64 * self.upp as u64;
        if !self.bulk_copies {
            return (from..to).map(|k| self.copy(base + k as u64, unit, k, cause) as u64).sum();
        }
        if self.one_word {
            return self.copy_range_word(lbn, unit, (from, to), cause, stored);
        }
        self.moves.clear();
        let mut found = std::mem::take(&mut self.found);
        match stored {
            Stored::Scan => self.find_stored(base, from, to, &mut found),
            Stored::In(log) => self.stored_in(log, base, (from, to), &mut found),
        }
        let mut n = 0;
        let mut last = None;
        for m in 0..self.sb {
            let (copied, hi) = self.copy_member(lbn, unit, m, (from, to), (cause, &found));
            n += copied;
            last = last.max(hi);
        }
        self.found = found;
        if let Some(k) = last {
            self.fill[unit as usize] = k + 1;
        }
        self.nand.count(OpKind::Read, cause, n);
        if self.record_ops {
            self.log_moves(cause);
        }
        n
    }

    /// The positions `k` in `from..to` of logical unit `base / U` whose map entries are
    /// stored locations (log pages; home pages the map still names), with the entries,
    /// ascending. A branch-free test per [`CHUNK`] entries; most chunks have none.
    pub(super) fn find_stored(&self, base: u64, from: u32, to: u32, found: &mut Vec<(u32, u32)>) {
        found.clear();
        let span = &self.l2p[(base + from as u64) as usize..(base + to.max(from) as u64) as usize];
        for (c, chunk) in span.chunks(CHUNK).enumerate() {
            if chunk.iter().fold(false, |a, &e| a | (e < HOME)) {
                let k0 = from + (c * CHUNK) as u32;
                for (i, &e) in chunk.iter().enumerate() {
                    if e < HOME {
                        found.push((k0 + i as u32, e));
                    }
                }
            }
        }
    }

    /// [`Self::find_stored`] when the stored entries are known to be the valid pages of
    /// log unit `log` (see [`Stored::In`]): those of the range, by position.
    fn stored_in(&mut self, log: u32, base: u64, (from, to): (u32, u32), found: &mut Vec<(u32, u32)>) {
        found.clear();
        if log == NONE {
            return;
        }
        let mut words = std::mem::take(&mut self.words);
        for m in 0..self.sb {
            let block = self.block(log, m);
            self.nand.valid_words(block, 0, self.nand.write_pointer(block), &mut words);
            for_each_bit(&words, |j| {
                let page = block * self.ppb + j;
                let k = (self.p2l[page as usize] as u64).wrapping_sub(base);
                debug_assert!(k < self.upp as u64, "log page {page} of another logical unit");
                debug_assert_eq!(self.l2p[(base + k) as usize], page, "a stored location");
                if (from as u64..to as u64).contains(&k) {
                    found.push((k as u32, page));
                }
            });
        }
        self.words = words;
        if found.len() > 1 {
            found.sort_unstable_by_key(|&(k, _)| k);
        }
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
    /// (positions `k ≡ m mod S`, page offsets `lo..hi` of the member blocks). The valid
    /// pages of the data unit's member block in that range are exactly `lbn`'s home
    /// pages there (the data-unit invariant, [`Units::check_all`]): their bits are taken
    /// as words (read and invalidated, [`flashlab_nand::Nand::take_words`]) and
    /// programmed at the same offsets of the destination, with no map or reverse-map
    /// entry touched. Pages with a stored location (`found`) in log blocks are
    /// invalidated one by one and their offsets added to the words first. Returns the
    /// pages copied and the last position.
    fn copy_member(
        &mut self,
        lbn: u32,
        unit: u32,
        m: u32,
        range: (u32, u32),
        how: (Cause, &[(u32, u32)]),
    ) -> (u64, Option<u32>) {
        let ((from, to), (cause, found), sb) = (range, how, self.sb);
        let (block, data) = (self.block(unit, m), self.lu[lbn as usize].data);
        let first = block * self.ppb;
        let d = self.by_sb;
        let k0 = from + d.div_rem32(m + sb - d.div_rem32(from).1).1;
        let lo = d.div_rem32(k0).0;
        let hi = lo + d.div_rem32(to.saturating_sub(k0) + sb - 1).0;
        let src = if data == NONE || data == unit { u32::MAX } else { self.block(data, m) };
        let src_first = src.wrapping_mul(self.ppb);
        let mut words = std::mem::take(&mut self.words);
        let len = (hi - lo).div_ceil(64) as usize;
        if words.len() != len {
            words.resize(len, 0);
        }
        words.fill(0);
        if src != u32::MAX && self.s.track_content {
            let (a, b) = ((src_first + lo) as usize, (src_first + hi) as usize);
            self.tags.copy_within(a..b, (first + lo) as usize);
        }
        let mut logged = std::mem::take(&mut self.logged);
        logged.clear();
        if !found.is_empty() {
            self.take_stored(lbn, (block, m, lo), src, found, &mut words, &mut logged);
        }
        if src != u32::MAX {
            self.nand.take_words(src, lo, hi, &mut words);
        }
        let n = self.nand.program_words(block, lo, &words, cause) as u64;
        if self.record_ops {
            let mut l = logged.iter().peekable();
            for_each_bit(&words, |i| {
                let j = lo + i;
                let old = match l.peek() {
                    Some(&&(lj, old)) if lj == j => {
                        l.next();
                        old
                    }
                    _ => src_first + j,
                };
                self.moves.push((j * sb + m, old, first + j));
            });
        }
        let last =
            words.iter().rposition(|&v| v != 0).map(|w| (lo + 64 * w as u32 + 63 - words[w].leading_zeros()) * sb + m);
        self.words = words;
        self.logged = logged;
        (n, last)
    }

    /// The stored entries of [`Self::copy_member`]'s member block `m` (positions
    /// `k ≡ m mod S` of `found`). One in the data unit (`src`) is home (its bit is
    /// taken with the data unit's); one elsewhere (a log block) is invalidated, its
    /// offset set in `words` and listed in `logged` with its old page. The map entry
    /// becomes [`HOME`].
    fn take_stored(
        &mut self,
        lbn: u32,
        at: (u32, u32, u32),
        src: u32,
        found: &[(u32, u32)],
        words: &mut [u64],
        logged: &mut Vec<(u32, u32)>,
    ) {
        let (block, m, lo) = at;
        let (first, src_first) = (block * self.ppb, src.wrapping_mul(self.ppb));
        let base = lbn as u64 * self.upp as u64;
        for &(k, e) in found {
            let (j, km) = self.by_sb.div_rem32(k);
            if km != m {
                continue;
            }
            let lpn = base + k as u64;
            if src == u32::MAX || e.wrapping_sub(src_first) >= self.ppb {
                words[((j - lo) / 64) as usize] |= 1u64 << ((j - lo) % 64);
                self.nand.invalidate(e);
                self.p2l[e as usize] = NO_PAGE;
                logged.push((j, e));
                if self.s.track_content {
                    self.tags[(first + j) as usize] = self.tags[e as usize];
                }
            } else {
                debug_assert_eq!(e - src_first, j, "a data unit's page at its own offset");
            }
            self.l2p[lpn as usize] = HOME;
        }
    }
}

/// Call `f` with the index of every set bit of `words` (bit `i` of `words[w]` = `64 w + i`), ascending.
#[inline]
pub(super) fn for_each_bit(words: &[u64], mut f: impl FnMut(u32)) {
    for (w, &v) in words.iter().enumerate() {
        let mut v = v;
        while v != 0 {
            f(64 * w as u32 + v.trailing_zeros());
            v &= v - 1;
        }
    }
}
