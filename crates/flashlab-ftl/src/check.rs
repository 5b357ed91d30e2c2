//! Invariant checks. `strict` mode runs the local checks after every operation and
//! the full check every time as many operations as there are physical pages have
//! passed (amortised O(1) per operation).

use crate::ftl::{Role, NO_BLOCK};
use crate::{FtlError, PageFtl, NO_PAGE};
use flashlab_nand::PageState;

impl PageFtl {
    pub(crate) fn strict_check(&mut self, lpn: u64) -> Result<(), FtlError> {
        if !self.s.strict {
            return Ok(());
        }
        self.check_lpn(lpn).map_err(FtlError::Invariant)?;
        self.strict_ops += 1;
        if self.strict_ops >= self.p2l.len() as u64 / 8 {
            self.strict_ops = 0;
            self.check_invariants()?;
        }
        Ok(())
    }

    fn check_lpn(&self, lpn: u64) -> Result<(), String> {
        let page = self.l2p[lpn as usize];
        if page == NO_PAGE {
            return Ok(());
        }
        if self.p2l[page as usize] != lpn as u32 {
            return Err(format!("lpn {lpn} maps to page {page}, which maps back to {}", self.p2l[page as usize]));
        }
        if self.nand.page_state(page) != PageState::Valid {
            return Err(format!("lpn {lpn} maps to page {page}, which is {:?}", self.nand.page_state(page)));
        }
        self.nand.check_block(page / self.geo.pages_per_block)
    }

    /// Check every invariant: each logical page maps to at most one valid physical
    /// page and back; every valid page is mapped; per-block valid counts equal a
    /// recount; free-list blocks are erased; the GC indexes agree with the blocks.
    pub fn check_invariants(&self) -> Result<(), FtlError> {
        self.check_all().map_err(FtlError::Invariant)
    }

    fn check_all(&self) -> Result<(), String> {
        self.nand.check_all()?;
        (0..self.l2p.len() as u64).try_for_each(|l| self.check_lpn(l))?;
        for (page, &lpn) in self.p2l.iter().enumerate() {
            if self.role[page / self.geo.pages_per_block as usize] == Role::Translation {
                continue; // DFTL's translation pages: checked by DftlFtl
            }
            // An invalid page keeps its LPN until its block is erased (see `p2l`).
            let state = self.nand.page_state(page as u32);
            let valid = state == PageState::Valid;
            if (valid && lpn == NO_PAGE) || (state == PageState::Free && lpn != NO_PAGE) {
                return Err(format!("page {page}: {state:?} but reverse map {lpn}"));
            }
            if valid && self.l2p[lpn as usize] != page as u32 {
                return Err(format!("page {page} holds lpn {lpn}, which maps elsewhere"));
            }
        }
        (0..self.geo.planes()).try_for_each(|p| self.check_plane(p))?;
        self.check_temperatures()
    }

    /// Each block's temperature sum equals the recount over its programmed pages.
    fn check_temperatures(&self) -> Result<(), String> {
        if self.block_temp_sum.is_empty() {
            return Ok(());
        }
        for b in 0..self.geo.blocks() {
            let first = self.nand.first_page(b) as usize;
            let wp = self.nand.write_pointer(b) as usize;
            let sum: u32 = self.page_temp[first..first + wp].iter().map(|&t| t as u32).sum();
            let skip = matches!(self.role[b as usize], Role::Victim | Role::Translation);
            if sum != self.block_temp_sum[b as usize] && !skip {
                return Err(format!(
                    "block {b}: temperature sum {} but pages sum to {sum}",
                    self.block_temp_sum[b as usize]
                ));
            }
        }
        Ok(())
    }

    fn check_plane(&self, plane: u32) -> Result<(), String> {
        for &b in &self.free[plane as usize] {
            if self.role[b as usize] != Role::Free || self.nand.write_pointer(b) != 0 {
                return Err(format!("free list of plane {plane} holds block {b} in role {:?}", self.role[b as usize]));
            }
        }
        for &b in &self.index.lists[plane as usize] {
            if self.role[b as usize] != Role::Closed || self.nand.write_pointer(b) != self.geo.pages_per_block {
                return Err(format!("closed index holds block {b} in role {:?}", self.role[b as usize]));
            }
        }
        let slots = self.slots as usize;
        for &open in &self.open[plane as usize * slots..(plane as usize + 1) * slots] {
            if open != NO_BLOCK && self.index.contains(open) {
                return Err(format!("open block {open} is a GC candidate"));
            }
        }
        let bpp = self.geo.blocks_per_plane;
        let closed = (plane * bpp..(plane + 1) * bpp).filter(|&b| self.role[b as usize] == Role::Closed).count();
        if closed != self.index.lists[plane as usize].len() {
            return Err(format!(
                "plane {plane}: {closed} closed blocks but {} indexed",
                self.index.lists[plane as usize].len()
            ));
        }
        self.index.check(plane, |b| self.nand.valid_count(b))
    }
}
