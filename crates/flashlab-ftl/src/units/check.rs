//! Strict mode and the invariants of [`Units`], with the map's [`HOME`] entries: the
//! owner of a valid page in a data unit or an in-order log ([`Units::olog`]) is its
//! position's logical page (not stored); elsewhere it is the page's `p2l` entry.

use super::{Units, HOME, NONE};
use crate::ftl::NO_PAGE;
use crate::FtlError;
use flashlab_nand::PageState;

impl Units {
    /// Strict mode: the local checks of `lpn` after every operation; returns whether
    /// the full check is due (every time an eighth of the physical pages' worth of
    /// operations passed: amortised O(1)).
    #[inline]
    pub fn strict_due(&mut self, lpn: u64) -> Result<bool, FtlError> {
        if !self.s.strict {
            return Ok(false);
        }
        self.strict_step(lpn)
    }

    /// [`Self::strict_due`] in strict mode (out of line: the common case is the test).
    #[inline(never)]
    fn strict_step(&mut self, lpn: u64) -> Result<bool, FtlError> {
        self.check_lpn(lpn).map_err(FtlError::Invariant)?;
        self.strict_ops += 1;
        if self.strict_ops >= self.p2l.len() as u64 / 8 {
            self.strict_ops = 0;
            return Ok(true);
        }
        Ok(false)
    }

    /// Unit and position of NAND page `page` (the inverse of [`Units::page_at`]).
    pub fn unit_pos(&self, page: u32) -> (u32, u32) {
        let (block, j) = (page / self.ppb, page % self.ppb);
        let (plane, b) = (block / self.geo.blocks_per_plane, block % self.geo.blocks_per_plane);
        (b * self.groups + plane / self.sb, j * self.sb + plane % self.sb)
    }

    /// `lpn` maps to a valid page that belongs to it: at its own position of its own
    /// data unit or in-order log, or outside every such unit with `p2l` naming it.
    /// `owner` gives each unit's logical unit if it is a data unit or an in-order log
    /// (NONE otherwise).
    fn check_mapped(&self, lpn: u64, owner: impl Fn(u32) -> u32) -> Result<(), String> {
        let page = self.lookup(lpn);
        if page == NO_PAGE {
            return Ok(());
        }
        let state = self.nand.page_state(page);
        let (lbn, k) = self.split(lpn);
        let (unit, pos) = self.unit_pos(page);
        let o = owner(unit);
        let ok = if o != NONE { o == lbn && pos == k } else { self.p2l[page as usize] == lpn as u32 };
        if state != PageState::Valid || !ok {
            return Err(format!(
                "lpn {lpn} maps to page {page} (unit {unit} of logical unit {o}, position {pos}), which is {state:?} and holds {}",
                self.p2l[page as usize]
            ));
        }
        Ok(())
    }

    fn check_lpn(&self, lpn: u64) -> Result<(), String> {
        self.check_mapped(lpn, |u| {
            let lbn = self.split(lpn).0;
            if self.lu[lbn as usize].data == u || self.lu[lbn as usize].olog == u {
                lbn
            } else {
                // Another logical unit's data unit, if any: not a cheap question, and
                // the full check answers it (here the `p2l` entry must name `lpn`).
                NONE
            }
        })
    }

    /// Every mapped logical page maps to a distinct valid page that belongs to it (see
    /// [`Self::check_mapped`]) and there are as many of them as valid pages, so every
    /// valid page is mapped exactly once; per-block counts recount; per-logical-unit
    /// valid counts recount; a data unit holds only its own logical unit's pages, each
    /// at its offset; `HOME` entries only where there is a data unit; free units are
    /// erased.
    pub fn check_all(&self) -> Result<(), String> {
        self.nand.check_all()?;
        let mut owner = vec![NONE; self.fill.len()];
        for (lbn, u) in self.lu.iter().map(|l| l.data).enumerate() {
            if u != NONE {
                if owner[u as usize] != NONE {
                    return Err(format!("unit {u} is the data unit of logical units {} and {lbn}", owner[u as usize]));
                }
                owner[u as usize] = lbn as u32;
            }
        }
        for (lbn, u) in self.lu.iter().map(|l| l.olog).enumerate() {
            if u != NONE {
                if owner[u as usize] != NONE || self.lu[lbn].data == NONE {
                    return Err(format!("in-order log {u} of logical unit {lbn} is owned twice or has no data unit"));
                }
                owner[u as usize] = lbn as u32;
            }
        }
        let mut per_lbn = vec![0u32; self.lu.len()];
        for (lpn, &e) in self.l2p.iter().enumerate() {
            let lbn = lpn as u64 / self.upp as u64;
            if e == HOME && self.lu[lbn as usize].data == NONE {
                return Err(format!("lpn {lpn} is home but logical unit {lbn} has no data unit"));
            }
            if e != NO_PAGE {
                self.check_mapped(lpn as u64, |u| owner[u as usize])?;
                per_lbn[lbn as usize] += 1;
            }
        }
        if self.lu.iter().zip(&per_lbn).any(|(l, &n)| l.valid != n) {
            return Err("per-logical-unit valid counts differ from a recount".into());
        }
        let valid: u64 = (0..self.geo.blocks()).map(|b| self.nand.valid_count(b) as u64).sum();
        let mapped: u64 = per_lbn.iter().map(|&n| n as u64).sum();
        if valid != mapped {
            return Err(format!("{valid} valid pages but {mapped} mapped logical pages"));
        }
        for q in &self.free {
            for &u in q {
                if (0..self.sb).any(|m| self.nand.write_pointer(self.block(u, m)) != 0) || self.fill[u as usize] != 0 {
                    return Err(format!("free unit {u} is not erased"));
                }
            }
        }
        Ok(())
    }

    /// With bulk copies, the stored map entries of logical unit `lbn` all name pages of
    /// unit `log` (NONE: there are none), as a [`super::Stored::In`] hint claims.
    pub fn check_stored_in(&self, lbn: u32, log: u32) -> Result<(), String> {
        if !self.bulk_copies {
            return Ok(());
        }
        let base = lbn as usize * self.upp as usize;
        for (k, &e) in self.l2p[base..base + self.lbn_pages(lbn) as usize].iter().enumerate() {
            if e < HOME && (log == NONE || self.unit_pos(e).0 != log) {
                return Err(format!(
                    "lpn {}: stored location {e} outside log unit {log} of logical unit {lbn}",
                    base + k
                ));
            }
        }
        Ok(())
    }
}
