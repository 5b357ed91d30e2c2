//! Bulk sequential prefill of the block-mapped schemes: writing logical pages `0..L`
//! in order gives each logical unit, in turn, a fresh unit ([`Units::alloc`] with no
//! hint) as its data unit, written in place page by page — the first branch of every
//! scheme's `write` (no data unit yet), then the in-place branch (offset at or beyond
//! the fill, no log block). [`Units::prefill_sequential`] lays that out in one pass per
//! unit: the same allocations, every page home (`HOME`; a data unit keeps no
//! reverse-map entries), each member block programmed as one span, and the same
//! counters and statistics. It applies only where no per-write feature would see the
//! writes (content tags, strict checks, the op log) and on a fresh core.

use super::{Units, HOME, NONE};
use crate::FtlError;
use flashlab_nand::{Cause, OpCounters};

impl Units {
    /// Write logical pages `0..L` in order at once if the bulk layout applies (see the
    /// module); false (nothing done) otherwise.
    pub fn prefill_sequential(&mut self) -> Result<bool, FtlError> {
        let fresh = self.clock == 0
            && self.stats == Default::default()
            && *self.nand.counters() == OpCounters::default()
            && self.lu.iter().all(|l| l.data == NONE)
            && self.next_group == 0;
        if self.s.track_content || self.s.strict || self.record_ops || !fresh {
            return Ok(false);
        }
        for lbn in 0..self.lbns() {
            let unit = self.alloc(None)?;
            self.lu[lbn as usize].data = unit;
            let n = self.lbn_pages(lbn);
            for m in 0..self.sb.min(n) {
                // Positions m, m + S, … below n: page offsets 0.. of member block m.
                let pages = (n - m).div_ceil(self.sb);
                self.nand.program_span(self.block(unit, m), pages, Cause::Host);
            }
            let base = lbn as usize * self.upp as usize;
            self.l2p[base..base + n as usize].fill(HOME);
            self.lu[lbn as usize].valid = n;
            self.fill[unit as usize] = n;
        }
        let l = self.s.logical_pages;
        self.clock += l;
        self.stats.host_write_pages += l;
        Ok(true)
    }
}
