//! `block`: pure block mapping (the baseline of Kim et al. 2002 §2 and of FlashSim's
//! block FTL). Logical unit `lbn` lives in one data unit, page offset `o` at position
//! `o`. A write to a free position at or beyond the unit's write frontier goes in place
//! (NAND programs a block in page order, so positions before it are skipped); any other
//! update copies the unit's other valid pages, with the new page, into a free unit and
//! erases the old one (counted as a full merge with one source unit):
//! reads = programs − 1 = valid pages other than the updated one, erases = the old
//! unit's programmed blocks.

use crate::mapping::{units_common, Mapping};
use crate::units::{Stored, Units, NONE};
use crate::{FtlError, FtlSettings};
use flashlab_nand::{Cause, Geometry};

pub struct BlockFtl {
    pub(crate) u: Units,
}

impl BlockFtl {
    pub fn new(geo: Geometry, s: FtlSettings) -> Result<Self, FtlError> {
        Ok(BlockFtl { u: Units::new(geo, s)? })
    }

    /// Rewrite offset `o` of `lbn`: copy everything else and the new page into a new unit.
    fn rewrite(&mut self, lbn: u32, o: u32, lpn: u64) -> Result<(), FtlError> {
        let old = self.u.lu[lbn as usize].data;
        let new = self.u.alloc(Some(self.u.group_of(old)))?;
        let mut copied = self.u.copy_range(lbn, new, (0, o), Cause::Merge, Stored::In(NONE));
        self.u.host_program(new, o, lpn);
        copied += self.u.copy_range(lbn, new, (o + 1, self.u.lbn_pages(lbn)), Cause::Merge, Stored::In(NONE));
        self.u.stats.merge_copied_pages += copied;
        self.u.stats.merges_full += 1;
        self.u.erase_unit(old, Cause::Merge);
        self.u.lu[lbn as usize].data = new;
        self.u.set_home(lpn);
        Ok(())
    }

    fn strict(&mut self, lpn: u64) -> Result<(), FtlError> {
        if self.u.strict_due(lpn)? {
            self.check_invariants()?;
        }
        Ok(())
    }

    fn check_scheme(&self) -> Result<(), String> {
        // No map entry is stored (rewrites' hint): in-place writes and copies are home.
        (0..self.u.lbns()).try_for_each(|lbn| self.u.check_stored_in(lbn, NONE))?;
        let data = self.u.lu.iter().filter(|l| l.data != NONE).count();
        if data + self.u.free_units() != self.u.units() as usize {
            return Err(format!("{data} data units + {} free != {} units", self.u.free_units(), self.u.units()));
        }
        Ok(())
    }
}

impl Mapping for BlockFtl {
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.u.check_range(lpn)?;
        let (lbn, o) = self.u.split(lpn);
        let unit = self.u.lu[lbn as usize].data;
        if unit == NONE {
            let unit = self.u.alloc(None)?;
            self.u.lu[lbn as usize].data = unit;
            self.u.host_program(unit, o, lpn);
        } else if o >= self.u.fill[unit as usize] {
            self.u.host_program(unit, o, lpn);
        } else {
            self.rewrite(lbn, o, lpn)?;
        }
        self.strict(lpn)
    }

    fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        if let Some(lbn) = self.u.trim_page(lpn)? {
            // A wholly trimmed unit is reclaimed without copies.
            self.u.drop_data(lbn);
        }
        self.strict(lpn)
    }

    fn memory_bytes(&self) -> usize {
        self.u.memory_bytes()
    }

    /// One 4-byte unit number per logical unit.
    fn mapping_ram_bytes(&self) -> u64 {
        self.u.lbns() as u64 * 4
    }

    /// A few requests ahead of a write: its map entry and the bitmaps of the unit it
    /// may rewrite ([`Units::prefetch_merge_bits`]: a rewrite scans no map entry; a
    /// hint only).
    fn prefetch_page(&self, lpn: u64) {
        self.u.prefetch_map(lpn);
        self.u.prefetch_merge_bits(self.u.split(lpn).0);
    }

    units_common!();
}
