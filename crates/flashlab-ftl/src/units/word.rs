//! Merges of one-word units (issue 22 target 5): when a unit is one block (S = 1) whose
//! pages fit in one bitmap word (pages per block a power of two ≤ 64,
//! [`flashlab_nand::Nand::one_word_blocks`]), a merge's whole range of offsets is one
//! `u64`: the data unit's valid pages are taken as one word, the log pages with stored
//! locations set their bits in it, and the destination is programmed from it. Position
//! `k` is page offset `k`, so no member loop, no division by S and no scratch word list.
//! [`Units::copy_range`] chooses this path by a flag set once per run
//! ([`Units::new`]); it leaves exactly the state, counters and op log of the general
//! bulk path (`units/bulk.rs`), which leaves those of [`Units::copy`] page by page
//! (`tests/ftl/mapping.rs`, `bulk_copies_equal_per_page_copies`, covers both paths).

use super::{Stored, Units, HOME, NONE};
use crate::ftl::{FlashOp, NO_PAGE};
use crate::moves::MergeMoves;
use flashlab_nand::{Cause, OpKind};

/// Bits `from..to` of a word.
#[inline]
fn range_mask(from: u32, to: u32) -> u64 {
    if to <= from {
        0
    } else {
        (u64::MAX >> (64 - (to - from))) << from
    }
}

impl Units {
    /// [`Units::copy_range`] of a one-word unit (see the top): the same result.
    pub(super) fn copy_range_word(
        &mut self,
        lbn: u32,
        unit: u32,
        (from, to): (u32, u32),
        cause: Cause,
        stored: Stored,
    ) -> u64 {
        let base = lbn as u64 * self.upp as u64;
        let data = self.lu[lbn as usize].data;
        let dst = self.block(unit, 0);
        let src = if data == NONE || data == unit { u32::MAX } else { self.block(data, 0) };
        let (first, src_first) = (dst * self.ppb, src.wrapping_mul(self.ppb));
        let at = (first, src);
        if src != u32::MAX && self.s.track_content {
            let (a, b) = ((src_first + from) as usize, (src_first + to) as usize);
            self.tags.copy_within(a..b, (first + from) as usize);
        }
        self.logged.clear();
        // The pages moved from log blocks, as bits and counted (`moved_n`).
        let (mut moved, mut moved_n) = (0u64, 0u32);
        match stored {
            Stored::In(NONE) => {}
            Stored::In(log) => {
                // The log's valid pages are the stored entries (`Stored::In`).
                let lb = self.block(log, 0);
                let mut v = self.nand.block_bits(lb);
                while v != 0 {
                    let page = lb * self.ppb + v.trailing_zeros();
                    v &= v - 1;
                    let k = (self.p2l[page as usize] as u64).wrapping_sub(base);
                    debug_assert!(k < self.upp as u64, "log page {page} of another logical unit");
                    debug_assert_eq!(self.l2p[(base + k) as usize], page, "a stored location");
                    if (from as u64..to as u64).contains(&k) {
                        let bit = self.take_stored_word(base, k as u32, page, at);
                        (moved, moved_n) = (moved | bit, moved_n + (bit != 0) as u32);
                    }
                }
            }
            Stored::Scan => {
                let mut found = std::mem::take(&mut self.found);
                self.find_stored(base, from, to, &mut found);
                for &(k, e) in &found {
                    let bit = self.take_stored_word(base, k, e, at);
                    (moved, moved_n) = (moved | bit, moved_n + (bit != 0) as u32);
                }
                self.found = found;
            }
        }
        let (mut bits, mut count) = (moved, moved_n);
        if src != u32::MAX {
            let (taken, n) = self.nand.take_bits_counted(src, range_mask(from, to), moved);
            (bits, count) = (bits | taken, count + n);
        }
        let n = self.nand.program_bits_counted(dst, bits, count, cause) as u64;
        if bits != 0 {
            self.fill[unit as usize] = 64 - bits.leading_zeros();
        }
        self.nand.count(OpKind::Read, cause, n);
        if self.record_ops && bits != 0 {
            let mut logged = std::mem::take(&mut self.logged);
            if self.compact_merges {
                self.log_word_compact((bits, moved), (first, src_first), &mut logged, cause);
            } else {
                self.log_word_moves((bits, moved), (first, src_first), &mut logged, cause);
            }
            self.logged = logged;
        }
        n
    }

    /// The stored entry `e` of position `k` (see `take_stored` in `units/bulk.rs`): a
    /// page in the data unit (at `src_first + k`) is home and taken with the data unit's
    /// word; one elsewhere (a log block) is invalidated and listed in `self.logged`
    /// (for the op log), and its bit is returned. The map entry becomes [`HOME`].
    #[inline]
    fn take_stored_word(&mut self, base: u64, k: u32, e: u32, (first, src): (u32, u32)) -> u64 {
        self.l2p[(base + k as u64) as usize] = HOME;
        if src != u32::MAX && e.wrapping_sub(src * self.ppb) < self.ppb {
            debug_assert_eq!(e - src * self.ppb, k, "a data unit's page at its own offset");
            return 0;
        }
        self.nand.invalidate(e);
        self.p2l[e as usize] = NO_PAGE;
        if self.record_ops {
            self.logged.push((k, e));
        }
        if self.s.track_content {
            self.tags[(first + k) as usize] = self.tags[e as usize];
        }
        1u64 << k
    }

    /// The op log of [`Self::copy_range_word`]: per position in order, the read of the
    /// old copy (for a bit of `moved`, the next page of `logged`, which lists exactly
    /// those positions; else the data unit's page) and the program. The same ops
    /// [`Units::log`] would push one by one, with the planes of the data unit's and the
    /// destination's block found once, not per op, and the log grown once for all of
    /// them (no capacity check per op): a merge logs up to a whole unit (issue 22 target
    /// 5, "s15-bast").
    /// The op log of [`Self::copy_range_word`] as a [`MergeMoves`] (`crate::moves`):
    /// its marker, then the reads of the moved log pages in position order; the pairs
    /// [`Self::log_word_moves`] would log are [`MergeMoves::expand`]'s.
    fn log_word_compact(&mut self, (bits, moved): (u64, u64), at: (u32, u32), logged: &mut [(u32, u32)], cause: Cause) {
        logged.sort_unstable_by_key(|&(k, _)| k);
        let (dst_first, src_first) = at;
        let (ppb, bpp) = (self.ppb, self.geo.blocks_per_plane);
        let plane_of = move |page: u32| page / ppb / bpp;
        self.ops.push(FlashOp::merge_moves(self.merge_moves.len(), cause));
        debug_assert_eq!(logged.len(), moved.count_ones() as usize);
        self.ops.extend(logged.iter().map(|&(_, page)| FlashOp {
            kind: OpKind::Read,
            cause,
            plane: plane_of(page),
            page,
        }));
        let (src_plane, dst_plane) = (plane_of(src_first), plane_of(dst_first));
        self.merge_moves.push(MergeMoves { cause, bits, moved, src_first, src_plane, dst_first, dst_plane });
    }

    fn log_word_moves(&mut self, (bits, moved): (u64, u64), at: (u32, u32), logged: &mut [(u32, u32)], cause: Cause) {
        logged.sort_unstable_by_key(|&(k, _)| k);
        let (first, src_first) = at;
        let (ppb, bpp) = (self.ppb, self.geo.blocks_per_plane);
        let plane_of = move |page: u32| page / ppb / bpp;
        let (dst_plane, src_plane) = (plane_of(first), plane_of(src_first));
        let mut l = logged.iter();
        let start = self.ops.len();
        let blank = FlashOp { kind: OpKind::Read, cause, plane: 0, page: 0 };
        self.ops.resize(start + 2 * bits.count_ones() as usize, blank);
        let mut v = bits;
        for pair in self.ops[start..].chunks_exact_mut(2) {
            let k = v.trailing_zeros();
            v &= v - 1;
            let (page, plane) = if moved >> k & 1 == 1 {
                let &(lk, old) = l.next().expect("a logged page for each moved position");
                debug_assert_eq!(lk, k);
                (old, plane_of(old))
            } else {
                (src_first + k, src_plane)
            };
            pair[0] = FlashOp { kind: OpKind::Read, cause, plane, page };
            pair[1] = FlashOp { kind: OpKind::Program, cause, plane: dst_plane, page: first + k };
        }
    }
}
