//! PEB allocation, erasure, wear levelling (threshold + protection queue),
//! scrubbing, torture testing and bad-block handling.

use crate::io::trimmed_len;
use crate::ubi::{Peb, Ubi};
use crate::UbiError;
use flashlab_mtd::{Cause, MtdError};

impl Ubi {
    /// Hands out an erased PEB: from the fastmap pool when fastmap is
    /// active (refilling it writes a new fastmap), else the lowest-EC one.
    pub(crate) fn get_peb(&mut self) -> Result<u32, UbiError> {
        if self.fm_active {
            if self.pool.is_empty() {
                self.write_fastmap()?;
            }
            if self.fm_active {
                return self.pool.pop_front().ok_or(UbiError::NoSpace);
            }
        }
        self.lowest_free().ok_or(UbiError::NoSpace)
    }

    fn lowest_free(&self) -> Option<u32> {
        self.pebs.lowest_free()
    }

    /// Returns a PEB that is no longer needed: erase it, then maybe level wear.
    pub(crate) fn put_peb(&mut self, p: u32, cause: Cause) -> Result<(), UbiError> {
        self.pebs.set(p, Peb::Pending);
        self.erase_peb(p, cause)?;
        self.wl_check()
    }

    /// Erases `p` and writes its EC header. Erase failures retire the block.
    pub(crate) fn erase_peb(&mut self, p: u32, cause: Cause) -> Result<(), UbiError> {
        self.pool.retain(|q| *q != p);
        match self.nand.erase(p, cause) {
            Ok(()) => {}
            Err(MtdError::EraseFailed(_)) | Err(MtdError::BadBlock(_)) => return self.mark_bad(p),
            Err(e) => return Err(e.into()),
        }
        self.pebs.set_ec(p, self.pebs.ec(p as usize) + 1);
        self.erase_seq += 1;
        self.stats.peb_erases += 1;
        let ec = self.pebs.ec(p as usize);
        match self.write_ec_hdr(p, ec) {
            Ok(()) => {
                self.pebs.set(p, if self.fm_active { Peb::Pending } else { Peb::Free });
                Ok(())
            }
            Err(MtdError::ProgramFailed { .. }) => self.retire(p),
            Err(e) => Err(e.into()),
        }
    }

    /// Marks `p` bad, consuming the bad-block reserve (read-only when empty).
    pub(crate) fn mark_bad(&mut self, p: u32) -> Result<(), UbiError> {
        self.pool.retain(|q| *q != p);
        self.prot.retain(|(q, _)| *q != p);
        self.nand.mark_bad(p)?;
        self.pebs.set(p, Peb::Bad);
        self.stats.bad_pebs_marked += 1;
        if self.bad_reserve > 0 {
            self.bad_reserve -= 1;
        } else {
            self.ro = true;
        }
        Ok(())
    }

    /// A PEB that failed a program: torture it, then reuse or mark bad.
    pub(crate) fn retire(&mut self, p: u32) -> Result<(), UbiError> {
        self.pool.retain(|q| *q != p);
        self.pebs.set(p, Peb::Pending);
        self.stats.tortures += 1;
        if self.torture(p)? {
            self.erase_peb(p, Cause::Other)
        } else {
            self.mark_bad(p)
        }
    }

    /// Erase / write pattern / verify, three times. Ok(false) = bad block.
    fn torture(&mut self, p: u32) -> Result<bool, UbiError> {
        let n = self.geo.peb_bytes as usize;
        for pat in [0xA5u8, 0x5A, 0x00] {
            match self.nand.erase(p, Cause::Other) {
                Ok(()) => self.pebs.set_ec(p, self.pebs.ec(p as usize) + 1),
                Err(MtdError::PowerCut) => return Err(MtdError::PowerCut.into()),
                Err(_) => return Ok(false),
            }
            match self.nand.program(p, 0, &vec![pat; n], Cause::Other) {
                Ok(()) => {}
                Err(MtdError::PowerCut) => return Err(MtdError::PowerCut.into()),
                Err(_) => return Ok(false),
            }
            let mut buf = vec![0u8; n];
            match self.nand.read(p, 0, &mut buf, Cause::Other) {
                Ok(_) if buf.iter().all(|b| *b == pat) => {}
                Err(MtdError::PowerCut) => return Err(MtdError::PowerCut.into()),
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    fn expire_protection(&mut self) {
        let now = self.erase_seq;
        self.prot.retain(|(_, until)| *until > now);
    }

    fn is_protected(&self, p: u32) -> bool {
        self.prot.iter().any(|(q, _)| *q == p)
    }

    fn coldest_used(&self) -> Option<u32> {
        self.pebs.coldest_used(|p| self.is_protected(p))
    }

    fn hottest_free(&self) -> Option<u32> {
        if self.fm_active {
            self.pool.iter().copied().max_by_key(|p| (self.pebs.ec(*p as usize), *p))
        } else {
            self.pebs.highest_free()
        }
    }

    /// Wear levelling: when the hottest free PEB's EC exceeds the coldest
    /// (unprotected) used PEB's by the threshold, move that LEB there.
    pub(crate) fn wl_check(&mut self) -> Result<(), UbiError> {
        if self.in_wl {
            return Ok(());
        }
        self.expire_protection();
        let (Some(e1), Some(e2)) = (self.coldest_used(), self.hottest_free()) else {
            return Ok(());
        };
        if self.pebs.ec(e2 as usize) < self.pebs.ec(e1 as usize) + self.cfg.wl_threshold_erases {
            return Ok(());
        }
        self.in_wl = true;
        let r = self.move_peb(e1, Some(e2), Cause::WearLevel);
        self.in_wl = false;
        if r.as_ref().is_ok_and(|moved| *moved) {
            self.stats.wl_moves += 1;
        }
        r.map(|_| ())
    }

    /// Copies the LEB in `from` to `target` (or a new PEB) with the copy
    /// flag and data CRC set, then erases `from`. Ok(false) if aborted.
    pub(crate) fn move_peb(&mut self, from: u32, target: Option<u32>, cause: Cause) -> Result<bool, UbiError> {
        let Peb::Used { vol, lnum, .. } = self.pebs[from as usize] else {
            return Ok(false);
        };
        let mut buf = vec![0u8; self.geo.leb_bytes as usize];
        match self.nand.read(from, self.geo.data_offset, &mut buf, cause) {
            Ok(_) => {}
            Err(MtdError::PowerCut) => return Err(MtdError::PowerCut.into()),
            Err(_) => return Ok(false),
        }
        let len = trimmed_len(&buf, self.geo.min_io);
        let p = match target {
            Some(t) => {
                self.pool.retain(|q| *q != t);
                t
            }
            None => self.get_peb()?,
        };
        if self.write_copy_to(p, vol, lnum, &buf[..len], true, cause)?.is_none() {
            return Ok(false);
        }
        self.put_peb(from, cause)?;
        Ok(true)
    }

    /// Relocates an LEB whose PEB showed corrected bit-flips.
    pub(crate) fn scrub(&mut self, vol: u32, lnum: u32) -> Result<(), UbiError> {
        let Some(p) = self.peb_of(vol, lnum)? else { return Ok(()) };
        self.in_wl = true;
        let r = self.move_peb(p, None, Cause::Scrub);
        self.in_wl = false;
        if r.as_ref().is_ok_and(|m| *m) {
            self.stats.scrubs += 1;
        }
        r.map(|_| ())
    }
}
