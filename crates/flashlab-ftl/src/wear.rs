//! Wear levelling. Dynamic: host writes open a plane's least-worn free block, GC and
//! wear-levelling migrations (colder data) its most-worn one. Static (in the
//! spirit of UBI): every `static_check_erases` erases in a plane, if the spread of its
//! erase counts exceeds `static_threshold`, the data of its least-worn closed block
//! (cold data pinning a young block) moves to the GC frontier and the block is erased,
//! so it returns to the free pool to take hot writes.

use crate::ftl::Role;
use crate::{FtlError, PageFtl};
use flashlab_nand::Cause;

impl PageFtl {
    /// The free block `plane` opens next: the oldest freed one; with dynamic wear
    /// levelling the least-worn one for host writes (hot data) and the most-worn one for
    /// GC and wear-levelling migrations (cold data).
    pub(crate) fn take_free_block(&mut self, plane: u32, for_gc: bool) -> Option<u32> {
        let free = &mut self.free[plane as usize];
        if !self.s.wear.dynamic {
            return free.pop_front();
        }
        let wear = |b: u32| self.nand.erase_count(b);
        let pick = if for_gc {
            free.iter().enumerate().max_by_key(|(i, &b)| (wear(b), std::cmp::Reverse(*i)))
        } else {
            free.iter().enumerate().min_by_key(|(i, &b)| (wear(b), *i))
        };
        let (i, _) = pick?;
        free.remove(i)
    }

    /// Lowest and highest erase count among the blocks of a plane.
    pub fn plane_erase_range(&self, plane: u32) -> (u32, u32) {
        let bpp = self.geo.blocks_per_plane as usize;
        let counts = &self.nand.erase_counts()[plane as usize * bpp..(plane as usize + 1) * bpp];
        (counts.iter().copied().min().unwrap_or(0), counts.iter().copied().max().unwrap_or(0))
    }

    /// Count an erase in `plane`; true when a static wear-levelling check is due.
    pub(crate) fn wl_count_erase(&mut self, plane: u32) -> bool {
        let w = self.s.wear;
        if w.static_threshold == 0 {
            return false;
        }
        let n = &mut self.wl_erases[plane as usize];
        *n += 1;
        *n >= w.static_check_erases.max(1)
    }

    /// Static wear levelling in `plane`, when a check is due and the plane has enough free
    /// blocks for the move (it may open a frontier block in every GC stream).
    pub(crate) fn static_wear_level(&mut self, plane: u32) -> Result<(), FtlError> {
        let due = self.wl_erases[plane as usize] >= self.s.wear.static_check_erases.max(1);
        if self.s.wear.static_threshold == 0 || !due || self.free[plane as usize].len() < self.s.gc_streams as usize + 1
        {
            return Ok(());
        }
        self.wl_erases[plane as usize] = 0;
        let (min, max) = self.plane_erase_range(plane);
        if max - min <= self.s.wear.static_threshold {
            return Ok(());
        }
        let candidates = &self.index.lists[plane as usize];
        let Some(&cold) = candidates.iter().min_by_key(|&&b| (self.nand.erase_count(b), b)) else { return Ok(()) };
        self.move_block(plane, cold)
    }

    /// Move every valid page of closed block `block` to the GC frontier and erase it.
    fn move_block(&mut self, plane: u32, block: u32) -> Result<(), FtlError> {
        self.index.remove(plane, block);
        self.role[block as usize] = Role::Victim;
        self.stats.wl_moves += 1;
        let first = self.nand.first_page(block);
        let mut from = 0;
        while let Some(page) = self.nand.next_valid(block, from) {
            from = page - first + 1;
            self.migrate(plane, page, Cause::WearLevel)?;
            self.stats.wl_copied_pages += 1;
            self.stats.gc_copied_pages -= 1;
        }
        self.erase_free(plane, block, Cause::WearLevel);
        Ok(())
    }
}
