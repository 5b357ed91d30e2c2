//! Host writes without the per-write features (s7-core, issue 22 target 1): when a
//! run has no placement, content tracking, strict checks, operation log, moved-page
//! list, DT-GC or free-ratio trigger and no static wear levelling, a host write is
//! exactly: invalidate the old page, program the next page of the plane's host
//! frontier, collect to the reserve. [`PageFtl::write_plain`] does only that, with
//! the same state, counters and errors as [`PageFtl::write`]; a caller checks
//! [`PageFtl::plain_writes_apply`] once per run (an enum match in the engine selects
//! the loop that calls it) instead of each feature being tested on every write.

use crate::ftl::{PageFtl, NO_BLOCK};
use crate::{FtlError, Trigger, NO_PAGE};
use flashlab_nand::Cause;

impl PageFtl {
    /// Whether [`Self::write_plain`] equals [`Self::write`] for this FTL in its current
    /// state (true until a feature that acts per write is switched on).
    pub fn plain_writes_apply(&self) -> bool {
        self.moved.is_none() && self.plain_writes_apply_with_moved_list()
    }

    /// [`Self::plain_writes_apply`] but for the moved-page list, which `write_plain`
    /// leaves to GC as `write` does (DFTL keeps one: it writes plain host pages too).
    pub(crate) fn plain_writes_apply_with_moved_list(&self) -> bool {
        let s = &self.s;
        self.placement.is_none()
            && !s.track_content
            && !s.strict
            && !self.record_ops
            && matches!(s.trigger, Trigger::Threshold)
            && s.wear.static_threshold == 0
            && s.host_streams >= 1
    }

    /// [`Self::write`] (host stream 0, the next plane of the stripe) where
    /// [`Self::plain_writes_apply`] holds. Returns the plane written.
    // `always`: the counting loop's hot call must stay inlined now that DFTL calls it too
    // (with `#[inline]` alone LLVM outlined it: +4.6 % instructions on counting-wasim).
    #[inline(always)]
    pub fn write_plain(&mut self, lpn: u64) -> Result<u32, FtlError> {
        debug_assert!(self.plain_writes_apply_with_moved_list());
        if lpn >= self.s.logical_pages {
            return Err(FtlError::OutOfRange { lpn, capacity: self.s.logical_pages });
        }
        let plane = self.stripe[self.cursor];
        self.cursor += 1;
        if self.cursor == self.stripe.len() {
            self.cursor = 0;
        }
        // `unmap` + `invalidate_page` without placement (the old page's `p2l` entry
        // stays until its block is erased, as in `invalidate_page`).
        let old = self.l2p[lpn as usize];
        if old != NO_PAGE {
            self.l2p[lpn as usize] = NO_PAGE;
            self.nand.invalidate(old);
            if self.index.has_buckets() {
                let block = self.nand.block_of(old);
                self.index.on_invalidate(self.nand.plane_of_block(block), block, self.nand.valid_count(block));
            }
        }
        self.clock += 1;
        self.stats.host_write_pages += 1;
        // `append` to the host frontier (slot `plane * slots + 0`) without placement or log.
        let slot = (plane * self.slots) as usize;
        let mut block = self.open[slot];
        if block == NO_BLOCK || self.nand.write_pointer(block) == self.geo.pages_per_block {
            block = self.open_block(plane, slot, 0)?;
        }
        let page = self.nand.program_next(block, Cause::Host);
        self.p2l[page as usize] = lpn as u32;
        self.l2p[lpn as usize] = page;
        // `collect` under the threshold trigger without static wear levelling.
        if self.free[plane as usize].len() < self.gc_reserve() {
            self.collect_to_reserve(plane)?;
        }
        Ok(plane)
    }
}
