//! Space budgeting: an operation is admitted only if the space it may need
//! (its nodes, plus the tail of a LEB per journal-head switch) fits in what GC can reclaim after
//! keeping the reserve for GC itself and for writing the dirty index at the
//! next commit. Deletions may use part of the reserve. So a full file
//! system answers ENOSPC up front and never runs out mid-operation.

use crate::error::{Errno, FsResult};
use crate::fs::{Fs, F_BUD, F_INDEX, GC};
use crate::node::HDR;

impl Fs {
    /// Upper bound of bytes of one index node.
    fn max_znode_bytes(&self) -> u32 {
        (HDR as u32 + 5 + self.cfg.fanout * (22 + 48)).next_multiple_of(8)
    }

    /// Empty LEBs to keep for writing the dirty index at commit.
    pub(crate) fn idx_reserve_lebs(&self) -> u32 {
        let zn = self.tnc.znodes().len() as u32;
        let dirty = self.tnc.dirty_postorder().len() as u32;
        let bytes = (dirty + zn / 4 + 2 * self.tnc.height() as u32 + 8) * self.max_znode_bytes();
        bytes.div_ceil(self.geo.leb_bytes - self.geo.min_io).max(1)
    }

    /// Bytes that journal writes can still get (free LEBs, head tails,
    /// reclaimable dirty space).
    pub(crate) fn reclaimable_bytes(&self) -> u64 {
        let leb = self.geo.leb_bytes;
        let io = self.geo.min_io;
        let mut total = 0u64;
        for l in self.geo.main_first..self.geo.leb_count {
            let p = self.lp[l as usize];
            let head = self.heads.iter().position(|h| h.lnum == Some(l));
            total += if self.is_empty_leb(l) {
                leb as u64
            } else if let Some(h) = head {
                if h == GC {
                    0
                } else {
                    p.free.saturating_sub(io) as u64
                }
            } else if p.flags & (F_BUD | F_INDEX) != 0 {
                0
            } else {
                (p.free + p.dirty).saturating_sub(io) as u64
            };
        }
        total
    }

    fn reserve_bytes(&self, deletion: bool) -> u64 {
        let lebs = self.idx_reserve_lebs() + if deletion { 1 } else { 2 } + self.hot_heads_in_use();
        lebs as u64 * self.geo.leb_bytes as u64
    }

    /// Admits an operation writing `node_bytes`, committing once to turn
    /// buds into reclaimable space if needed.
    pub(crate) fn budget(&mut self, node_bytes: u64, deletion: bool) -> FsResult<()> {
        let maxn = self.geo.max_node_bytes() as u64;
        let switches = node_bytes / (self.geo.leb_bytes as u64 - maxn) + 2;
        let need = node_bytes + switches * maxn + self.geo.min_io as u64;
        if self.reclaimable_bytes() >= need + self.reserve_bytes(deletion) {
            return Ok(());
        }
        self.commit()?;
        if self.reclaimable_bytes() >= need + self.reserve_bytes(deletion) {
            return Ok(());
        }
        if !self.hot.buds.is_empty() {
            // Hot buds become reclaimable only when the hot journal commits.
            self.commit_full()?;
            if self.reclaimable_bytes() >= need + self.reserve_bytes(deletion) {
                return Ok(());
            }
        }
        self.counters.enospc += 1;
        Err(Errno::ENOSPC.into())
    }

    /// Free bytes a user could still write (statfs).
    pub(crate) fn available_bytes(&self) -> u64 {
        let r = self.reserve_bytes(false) + self.geo.max_node_bytes() as u64;
        self.reclaimable_bytes().saturating_sub(r)
    }
}
