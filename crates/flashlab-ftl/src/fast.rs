//! `fast` (Lee, Park, Chung, Lee, Park, Song: "A log buffer-based flash translation
//! layer using fully-associative sector translation", ACM TECS 2007, §3).
//!
//! Data units are block-mapped as in `block.rs`. Of the `ftl.log_blocks` log units,
//! `ftl.fast_seq_log_blocks` are sequential (SW) log blocks and the rest random (RW)
//! log blocks shared by all logical units (§3.2):
//! - a write at offset 0 whose position is taken starts a new SW log block for its
//!   logical unit (merging the unit's previous SW log block, or a victim by
//!   `ftl.log_victim` when all are in use); a write at the next offset of its unit's
//!   SW log block appends to it; a full SW log block is switch-merged at once; a
//!   reclaimed partly written one is partial-merged (costs as in `bast.rs`);
//! - every other update is appended to the newest RW log block; when all RW log
//!   blocks are full the oldest is reclaimed (§3.3): every logical unit with a valid
//!   page in it is full-merged (a free unit receives the newest copy of each of its
//!   pages, from the data unit and any log block; the data unit and the unit's SW log
//!   block, if any, are erased), then the RW log block is erased.
//!   Cost of one reclaim: Σ v_i reads and programs (v_i = valid pages of merged unit
//!   i), erases = merged data units + their SW log blocks + 1.
//!
//! While a logical unit has an SW log block, writes never go in place into its data
//! unit (so a switch never meets a valid page in the data unit).

use crate::bast::{log_victim, LogSlot};
use crate::mapping::{units_common, Mapping};
use crate::units::{Stored, Units, NONE};
use crate::{FtlError, FtlSettings};
use flashlab_nand::{Cause, Geometry, PageState};
use std::collections::VecDeque;

const UNUSED: LogSlot = LogSlot { unit: NONE, lbn: NONE, in_order: true, born: 0, used: 0 };

pub struct FastFtl {
    pub(crate) u: Units,
    sw: Vec<LogSlot>,
    /// RW log units, oldest first; the back one is being filled.
    rw: VecDeque<u32>,
    rw_max: usize,
}

impl FastFtl {
    pub fn new(geo: Geometry, s: FtlSettings) -> Result<Self, FtlError> {
        let (n, seq) = (s.mapping.log_blocks, s.mapping.fast_seq_log_blocks);
        let u = Units::new(geo, s)?;
        if seq == 0 || seq >= n {
            return Err(FtlError::Mapping(format!(
                "ftl.fast_seq_log_blocks = {seq}: expected 1 to ftl.log_blocks − 1 = {} (FAST needs a random log block)",
                n.saturating_sub(1)
            )));
        }
        if u.lbns() as u64 + n as u64 >= u.units() as u64 {
            return Err(FtlError::Mapping(format!(
                "ftl.log_blocks = {n}: expected at most {} (the spare mapping units less one for merges)",
                u.units() - u.lbns() - 1
            )));
        }
        Ok(FastFtl { u, sw: vec![UNUSED; seq as usize], rw: VecDeque::new(), rw_max: (n - seq) as usize })
    }

    /// Start a new SW log block for `lbn` with offset 0.
    fn start_sw(&mut self, lbn: u32, lpn: u64) -> Result<(), FtlError> {
        let own = self.u.lu[lbn as usize].slot;
        if own != NONE {
            self.merge_sw(own as usize)?;
        }
        let slot = match self.sw.iter().position(|s| s.unit == NONE) {
            Some(s) => s,
            None => {
                let v = log_victim(&self.sw, self.u.s.mapping.log_victim, &mut self.u.rng);
                self.merge_sw(v)?;
                v
            }
        };
        let unit = self.u.alloc(Some(self.u.group_of(self.u.lu[lbn as usize].data)))?;
        let now = self.u.clock;
        self.sw[slot] = LogSlot { unit, lbn, in_order: true, born: now, used: now };
        self.u.lu[lbn as usize].slot = slot as u32;
        self.u.host_program(unit, 0, lpn);
        Ok(())
    }

    /// Switch (full) or partial merge of an SW log block; it becomes the data unit.
    fn merge_sw(&mut self, slot: usize) -> Result<(), FtlError> {
        let LogSlot { unit: log, lbn, .. } = self.sw[slot];
        let data = self.u.lu[lbn as usize].data;
        let k = self.u.fill[log as usize];
        if k >= self.u.lbn_pages(lbn) {
            self.u.stats.merges_switch += 1;
        } else {
            self.u.copy_rest(lbn, log, k, Stored::Scan);
            self.u.stats.merges_partial += 1;
        }
        assert_eq!(self.u.unit_valid(data), 0, "switch: data unit {data} of {lbn} still holds valid pages");
        self.u.erase_unit(data, Cause::Merge);
        self.u.lu[lbn as usize].data = log;
        self.free_sw(slot);
        Ok(())
    }

    fn free_sw(&mut self, slot: usize) {
        self.u.lu[self.sw[slot].lbn as usize].slot = NONE;
        self.sw[slot] = UNUSED;
    }

    /// Append `lpn` to the newest RW log block, reclaiming the oldest if all are full.
    fn write_rw(&mut self, lpn: u64) -> Result<(), FtlError> {
        let full = self.rw.back().is_none_or(|&u| self.u.fill[u as usize] == self.u.upp);
        if full {
            if self.rw.len() == self.rw_max {
                self.reclaim_rw()?;
            }
            let unit = self.u.alloc(None)?;
            self.rw.push_back(unit);
        }
        let unit = *self.rw.back().expect("an RW log block");
        let k = self.u.fill[unit as usize];
        self.u.host_program(unit, k, lpn);
        Ok(())
    }

    /// Reclaim the oldest RW log block: full-merge every logical unit with a valid page in it.
    fn reclaim_rw(&mut self) -> Result<(), FtlError> {
        let victim = self.rw.pop_front().expect("an RW log block to reclaim");
        for k in 0..self.u.fill[victim as usize] {
            let page = self.u.page_at(victim, k);
            if self.u.nand.page_state(page) == PageState::Valid {
                let lbn = self.u.split(self.u.p2l[page as usize] as u64).0;
                self.prefetch_next_merge(victim, k + 1, lbn);
                self.full_merge(lbn)?;
            }
        }
        self.u.erase_unit(victim, Cause::Merge);
        Ok(())
    }

    /// Hint the next logical unit other than `lbn` with a page among the few positions
    /// of RW log block `victim` from `k` on: the merge after this one (its tables
    /// arrive while this one copies; a hint only, [`Units::prefetch_merge`]).
    fn prefetch_next_merge(&self, victim: u32, k: u32, lbn: u32) {
        for k in k..(k + 8).min(self.u.fill[victim as usize]) {
            let lpn = self.u.p2l[self.u.page_at(victim, k) as usize];
            if lpn != crate::NO_PAGE && self.u.split(lpn as u64).0 != lbn {
                self.u.prefetch_merge(self.u.split(lpn as u64).0);
                return;
            }
        }
    }

    fn full_merge(&mut self, lbn: u32) -> Result<(), FtlError> {
        let data = self.u.lu[lbn as usize].data;
        let new = self.u.alloc(Some(self.u.group_of(data)))?;
        self.u.copy_rest(lbn, new, 0, Stored::Scan);
        self.u.stats.merges_full += 1;
        self.u.erase_unit(data, Cause::Merge);
        let sw = self.u.lu[lbn as usize].slot;
        if sw != NONE {
            self.u.erase_unit(self.sw[sw as usize].unit, Cause::Merge);
            self.free_sw(sw as usize);
        }
        self.u.lu[lbn as usize].data = new;
        Ok(())
    }

    fn strict(&mut self, lpn: u64) -> Result<(), FtlError> {
        if self.u.strict_due(lpn)? {
            self.check_invariants()?;
        }
        Ok(())
    }

    /// SW slots agree with the logical units' `slot`; every unit is data, SW, RW or free, once.
    fn check_scheme(&self) -> Result<(), String> {
        let used: Vec<_> = self.sw.iter().enumerate().filter(|(_, s)| s.unit != NONE).collect();
        for (i, s) in &used {
            if self.u.lu[s.lbn as usize].slot != *i as u32 || self.u.lu[s.lbn as usize].data == NONE {
                return Err(format!("SW slot {i} of logical unit {} is not its log or it has no data unit", s.lbn));
            }
        }
        let data = self.u.lu.iter().filter(|l| l.data != NONE).count();
        if data + used.len() + self.rw.len() + self.u.free_units() != self.u.units() as usize {
            return Err(format!(
                "{data} data + {} SW + {} RW + {} free units != {}",
                used.len(),
                self.rw.len(),
                self.u.free_units(),
                self.u.units()
            ));
        }
        Ok(())
    }
}

impl Mapping for FastFtl {
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.u.check_range(lpn)?;
        let (lbn, o) = self.u.split(lpn);
        let data = self.u.lu[lbn as usize].data;
        let sw = self.u.lu[lbn as usize].slot;
        if data == NONE {
            let unit = self.u.alloc(None)?;
            self.u.lu[lbn as usize].data = unit;
            self.u.host_program(unit, o, lpn);
        } else if sw == NONE && o >= self.u.fill[data as usize] {
            self.u.host_program(data, o, lpn);
        } else if o == 0 {
            self.start_sw(lbn, lpn)?;
        } else if sw != NONE && o == self.u.fill[self.sw[sw as usize].unit as usize] {
            let unit = self.sw[sw as usize].unit;
            self.u.host_program(unit, o, lpn);
            self.sw[sw as usize].used = self.u.clock;
            if o + 1 == self.u.upp {
                self.merge_sw(sw as usize)?;
            }
        } else {
            self.write_rw(lpn)?;
        }
        self.strict(lpn)
    }

    fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        if let Some(lbn) = self.u.trim_page(lpn)? {
            // A wholly trimmed logical unit is reclaimed without copies (its pages in
            // RW log blocks are invalid and go with those blocks).
            let sw = self.u.lu[lbn as usize].slot;
            if sw != NONE {
                self.u.erase_unit(self.sw[sw as usize].unit, Cause::Merge);
                self.free_sw(sw as usize);
            }
            self.u.drop_data(lbn);
        }
        self.strict(lpn)
    }

    fn memory_bytes(&self) -> usize {
        self.u.memory_bytes()
            + self.sw.len() * std::mem::size_of::<LogSlot>()
            + self.u.lbns() as usize * 4
            + self.rw_max * 4
    }

    /// A 4-byte unit number per logical unit; per log block its owner or number (4
    /// bytes) and a 4-byte entry per page (the RW blocks' fully associative page map).
    fn mapping_ram_bytes(&self) -> u64 {
        let logs = (self.sw.len() + self.rw_max) as u64;
        self.u.lbns() as u64 * 4 + logs * (4 + self.u.upp as u64 * 4)
    }

    units_common!();
}
