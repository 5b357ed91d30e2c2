//! A one-word merge's copies described compactly (issue 22 target 5, "s16-merge").
//!
//! A merge of a one-word unit (`units/word.rs`) copies up to 64 pages, each logged as a
//! (read, program) pair of 12-byte [`FlashOp`]s that a timing engine reads back. When
//! the engine asks for it once per run ([`crate::Mapping::set_merge_moves`]: it books
//! merges in runs and needs no page of them one by one), the FTL logs such a merge as a
//! [`MergeMoves`] instead: one marker op ([`FlashOp::merge_moves`]) in the op log at the
//! merge's place, followed by the reads of the pages moved from log blocks (bits of
//! `moved`, in position order), and the description itself in a side list
//! ([`crate::Mapping::take_merge_moves`]). [`MergeMoves::expand`] gives back exactly
//! the ops the per-op log holds (`tests/ftl/mapping.rs`,
//! `bulk_copies_equal_per_page_copies`, compares the two).

use crate::FlashOp;
use flashlab_nand::{Cause, OpKind};

/// The plane field of a marker op: no plane has this number.
const MARKER_PLANE: u32 = u32::MAX;

/// The copies of one one-word merge: for every set bit `k` of `bits`, a read of the
/// data unit's page `src_first + k` (or, where bit `k` of `moved` is set, of the moved
/// log page whose read follows the marker) and a program of `dst_first + k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeMoves {
    pub cause: Cause,
    /// Positions copied.
    pub bits: u64,
    /// Positions copied from log blocks (a subset of `bits`).
    pub moved: u64,
    pub src_first: u32,
    pub src_plane: u32,
    pub dst_first: u32,
    pub dst_plane: u32,
}

impl MergeMoves {
    /// The read of position `k` (a bit of `bits`); `reads`: the moved reads that follow
    /// the marker.
    #[inline]
    pub fn read(&self, k: u32, reads: &[FlashOp]) -> FlashOp {
        if self.moved >> k & 1 == 1 {
            reads[(self.moved & ((1u64 << k) - 1)).count_ones() as usize]
        } else {
            FlashOp { kind: OpKind::Read, cause: self.cause, plane: self.src_plane, page: self.src_first + k }
        }
    }

    /// The program of position `k`.
    #[inline]
    pub fn program(&self, k: u32) -> FlashOp {
        FlashOp { kind: OpKind::Program, cause: self.cause, plane: self.dst_plane, page: self.dst_first + k }
    }

    /// How many moved reads follow the marker.
    #[inline]
    pub fn reads(&self) -> usize {
        self.moved.count_ones() as usize
    }

    /// The (read, program) pairs the per-op log holds for this merge, appended to `out`.
    pub fn expand(&self, reads: &[FlashOp], out: &mut Vec<FlashOp>) {
        let mut v = self.bits;
        while v != 0 {
            let k = v.trailing_zeros();
            v &= v - 1;
            out.push(self.read(k, reads));
            out.push(self.program(k));
        }
    }
}

impl FlashOp {
    /// The marker of the `i`-th [`MergeMoves`] of an op log (see the top).
    pub fn merge_moves(i: usize, cause: Cause) -> FlashOp {
        FlashOp { kind: OpKind::Read, cause, plane: MARKER_PLANE, page: i as u32 }
    }

    /// The index of the [`MergeMoves`] this op marks, if it is a marker.
    #[inline]
    pub fn as_merge_moves(&self) -> Option<usize> {
        (self.plane == MARKER_PLANE).then_some(self.page as usize)
    }
}

/// An op log with markers (`ops`) and its descriptions (`moves`) as the per-op log.
pub fn expand_merge_moves(ops: &[FlashOp], moves: &[MergeMoves]) -> Vec<FlashOp> {
    let mut out = Vec::with_capacity(ops.len());
    let mut i = 0;
    while let Some(op) = ops.get(i) {
        match op.as_merge_moves() {
            Some(m) => {
                let m = &moves[m];
                m.expand(&ops[i + 1..i + 1 + m.reads()], &mut out);
                i += 1 + m.reads();
            }
            None => {
                out.push(*op);
                i += 1;
            }
        }
    }
    out
}
