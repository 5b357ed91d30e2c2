//! Wear levelling. Dynamic: a plane opens its least-worn free block. Static (in the
//! spirit of UBI): every `static_check_erases` erases in a plane, if the spread of its
//! erase counts exceeds `static_threshold`, the data of its least-worn closed block
//! (cold data pinning a young block) moves to the GC frontier and the block is erased,
//! so it returns to the free pool to take hot writes.

use crate::ftl::Role;
use crate::{FtlError, PageFtl};
use flashlab_nand::{Cause, OpKind};

impl PageFtl {
    /// The free block `plane` opens next: the oldest freed one, or the least worn.
    pub(crate) fn take_free_block(&mut self, plane: u32) -> Option<u32> {
        let free = &mut self.free[plane as usize];
        if !self.s.wear.dynamic {
            return free.pop_front();
        }
        let (i, _) = free.iter().enumerate().min_by_key(|(i, &b)| (self.nand.erase_count(b), *i))?;
        free.remove(i)
    }

    /// Lowest and highest erase count among the blocks of a plane.
    pub fn plane_erase_range(&self, plane: u32) -> (u32, u32) {
        let bpp = self.geo.blocks_per_plane as usize;
        let counts = &self.nand.erase_counts()[plane as usize * bpp..(plane as usize + 1) * bpp];
        (counts.iter().copied().min().unwrap_or(0), counts.iter().copied().max().unwrap_or(0))
    }

    /// Static wear levelling after an erase in `plane` (see the module docs).
    pub(crate) fn static_wear_level(&mut self, plane: u32) -> Result<(), FtlError> {
        let w = self.s.wear;
        if w.static_threshold == 0 {
            return Ok(());
        }
        self.wl_erases[plane as usize] += 1;
        if self.wl_erases[plane as usize] < w.static_check_erases.max(1) {
            return Ok(());
        }
        self.wl_erases[plane as usize] = 0;
        let (min, max) = self.plane_erase_range(plane);
        if max - min <= w.static_threshold {
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
        self.nand.erase(block, Cause::WearLevel);
        self.log(OpKind::Erase, Cause::WearLevel, first);
        self.role[block as usize] = Role::Free;
        self.free[plane as usize].push_back(block);
        Ok(())
    }
}
