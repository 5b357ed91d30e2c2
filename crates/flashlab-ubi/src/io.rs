//! LEB operations: read, write, atomic change, map and unmap.

use crate::headers::VidHdr;
use crate::ubi::{Peb, Ubi};
use crate::UbiError;
use flashlab_mtd::{Cause, MtdError};

impl Ubi {
    fn check_range(&self, vol: u32, lnum: u32, offs: u32, len: usize, aligned: bool) -> Result<(), UbiError> {
        let v = self.vol(vol)?;
        let bad = UbiError::BadRange { lnum, offs, len: len as u32 };
        if lnum >= v.info.lebs || offs as u64 + len as u64 > self.geo.leb_bytes as u64 {
            return Err(bad);
        }
        if aligned && (!offs.is_multiple_of(self.geo.min_io) || !(len as u32).is_multiple_of(self.geo.min_io)) {
            return Err(bad);
        }
        Ok(())
    }

    pub(crate) fn peb_of(&self, vol: u32, lnum: u32) -> Result<Option<u32>, UbiError> {
        Ok(self.vol(vol)?.eba.get(lnum as usize).copied().flatten())
    }

    fn set_eba(&mut self, vol: u32, lnum: u32, p: Option<u32>) -> Result<(), UbiError> {
        let v = self.vol_mut(vol)?;
        v.eba[lnum as usize] = p;
        Ok(())
    }

    /// True if the LEB is mapped to a PEB.
    pub fn is_mapped(&self, vol: u32, lnum: u32) -> Result<bool, UbiError> {
        self.check_range(vol, lnum, 0, 0, false)?;
        Ok(self.peb_of(vol, lnum)?.is_some())
    }

    /// Reads LEB bytes; an unmapped LEB reads as 0xFF. Corrected bit-flips
    /// trigger scrubbing; uncorrectable errors are retried.
    pub fn leb_read(&mut self, vol: u32, lnum: u32, offs: u32, buf: &mut [u8], cause: Cause) -> Result<(), UbiError> {
        self.check_range(vol, lnum, offs, buf.len(), false)?;
        let Some(p) = self.peb_of(vol, lnum)? else {
            buf.fill(0xFF);
            return Ok(());
        };
        let mut tries = 0;
        loop {
            match self.nand.read(p, self.geo.data_offset + offs, buf, cause) {
                Ok(info) => {
                    if info.corrected_pages > 0 && self.cfg.scrub && !self.in_wl {
                        self.scrub(vol, lnum)?;
                    }
                    return Ok(());
                }
                Err(MtdError::Uncorrectable { .. }) if tries < self.cfg.read_retries => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// [`Ubi::leb_read`] of `len` bytes handed to `visit` (offset in the
    /// read, bytes) in order instead of copied into a buffer (`Nand::read_with`):
    /// the same operations, retries and scrubbing. A retried read starts over
    /// at offset 0.
    pub fn leb_read_with(
        &mut self,
        vol: u32,
        lnum: u32,
        offs: u32,
        len: usize,
        cause: Cause,
        visit: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), UbiError> {
        self.check_range(vol, lnum, offs, len, false)?;
        let Some(p) = self.peb_of(vol, lnum)? else {
            visit(0, &vec![0xFF; len]);
            return Ok(());
        };
        let mut tries = 0;
        loop {
            match self.nand.read_with(p, self.geo.data_offset + offs, len, cause, visit) {
                Ok(info) => {
                    if info.corrected_pages > 0 && self.cfg.scrub && !self.in_wl {
                        self.scrub(vol, lnum)?;
                    }
                    return Ok(());
                }
                Err(MtdError::Uncorrectable { .. }) if tries < self.cfg.read_retries => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes page-aligned data into the unwritten part of an LEB, mapping
    /// it first if needed. Program failures are recovered onto a new PEB.
    pub fn leb_write(&mut self, vol: u32, lnum: u32, offs: u32, data: &[u8], cause: Cause) -> Result<(), UbiError> {
        self.check_range(vol, lnum, offs, data.len(), true)?;
        if self.ro {
            return Err(UbiError::ReadOnly);
        }
        let p = match self.peb_of(vol, lnum)? {
            Some(p) => p,
            None => self.map_new(vol, lnum)?,
        };
        if data.is_empty() {
            return Ok(());
        }
        match self.nand.program(p, self.geo.data_offset + offs, data, cause) {
            Ok(()) => Ok(()),
            Err(MtdError::ProgramFailed { .. }) | Err(MtdError::BadBlock(_)) => {
                self.recover_write(vol, lnum, p, offs, data, cause)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Maps an unmapped LEB to an empty PEB (writes the VID header).
    pub fn leb_map(&mut self, vol: u32, lnum: u32) -> Result<(), UbiError> {
        self.check_range(vol, lnum, 0, 0, false)?;
        if self.peb_of(vol, lnum)?.is_none() {
            self.map_new(vol, lnum)?;
        }
        Ok(())
    }

    pub(crate) fn map_new(&mut self, vol: u32, lnum: u32) -> Result<u32, UbiError> {
        for _ in 0..4 {
            let p = self.get_peb()?;
            let sqnum = self.next_sqnum();
            let vid = VidHdr { vol_id: vol, lnum, sqnum, copy_flag: false, data_size: 0, data_crc: 0 };
            match self.write_vid_hdr(p, &vid) {
                Ok(()) => {
                    self.install(vol, lnum, p, sqnum)?;
                    return Ok(p);
                }
                Err(MtdError::ProgramFailed { .. }) | Err(MtdError::BadBlock(_)) => self.retire(p)?,
                Err(e) => return Err(e.into()),
            }
        }
        Err(UbiError::NoSpace)
    }

    pub(crate) fn install(&mut self, vol: u32, lnum: u32, p: u32, sqnum: u64) -> Result<(), UbiError> {
        self.pebs.set(p, Peb::Used { vol, lnum, sqnum });
        self.set_eba(vol, lnum, Some(p))?;
        let until = self.erase_seq + self.cfg.protection_erases;
        self.prot.push_back((p, until));
        Ok(())
    }

    fn recover_write(
        &mut self,
        vol: u32,
        lnum: u32,
        old: u32,
        offs: u32,
        data: &[u8],
        cause: Cause,
    ) -> Result<(), UbiError> {
        let mut buf = vec![0xFF; offs as usize + data.len()];
        self.nand.read(old, self.geo.data_offset, &mut buf[..offs as usize], cause)?;
        buf[offs as usize..].copy_from_slice(data);
        let trimmed = trimmed_len(&buf, self.geo.min_io);
        for _ in 0..3 {
            match self.copy_into_new(vol, lnum, &buf[..trimmed], false, cause)? {
                Some(_) => {
                    self.retire(old)?;
                    return Ok(());
                }
                None => continue,
            }
        }
        Err(UbiError::NoSpace)
    }

    /// Writes `data` (page multiple) with a fresh VID header into a new PEB
    /// and installs it. Ok(None) when the new PEB failed and was retired.
    pub(crate) fn copy_into_new(
        &mut self,
        vol: u32,
        lnum: u32,
        data: &[u8],
        copy: bool,
        cause: Cause,
    ) -> Result<Option<u32>, UbiError> {
        let p = self.get_peb()?;
        self.write_copy_to(p, vol, lnum, data, copy, cause)
    }

    pub(crate) fn write_copy_to(
        &mut self,
        p: u32,
        vol: u32,
        lnum: u32,
        data: &[u8],
        copy: bool,
        cause: Cause,
    ) -> Result<Option<u32>, UbiError> {
        let sqnum = self.next_sqnum();
        let crc = crc32fast::hash(data);
        let vid = VidHdr { vol_id: vol, lnum, sqnum, copy_flag: copy, data_size: data.len() as u32, data_crc: crc };
        let mut r = self.write_vid_hdr(p, &vid);
        if r.is_ok() && !data.is_empty() {
            r = self.nand.program(p, self.geo.data_offset, data, cause);
        }
        match r {
            Ok(()) => {
                self.install(vol, lnum, p, sqnum)?;
                Ok(Some(p))
            }
            Err(MtdError::ProgramFailed { .. }) | Err(MtdError::BadBlock(_)) => {
                self.retire(p)?;
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Atomic LEB change: after a power cut the LEB holds either the old
    /// content or all of `data` (padded to a page with 0xFF).
    pub fn leb_change(&mut self, vol: u32, lnum: u32, data: &[u8], cause: Cause) -> Result<(), UbiError> {
        self.check_range(vol, lnum, 0, data.len(), false)?;
        if self.ro {
            return Err(UbiError::ReadOnly);
        }
        let mut padded = data.to_vec();
        padded.resize(data.len().next_multiple_of(self.geo.min_io as usize), 0xFF);
        let old = self.peb_of(vol, lnum)?;
        for _ in 0..3 {
            if self.copy_into_new(vol, lnum, &padded, true, cause)?.is_some() {
                self.stats.leb_changes += 1;
                if let Some(o) = old {
                    self.put_peb(o, cause)?;
                }
                return Ok(());
            }
        }
        Err(UbiError::NoSpace)
    }

    /// Unmaps an LEB and erases its PEB. After a power cut before the erase
    /// completes the old content may reappear (as in Linux UBI).
    pub fn leb_unmap(&mut self, vol: u32, lnum: u32, cause: Cause) -> Result<(), UbiError> {
        self.check_range(vol, lnum, 0, 0, false)?;
        if let Some(p) = self.peb_of(vol, lnum)? {
            self.set_eba(vol, lnum, None)?;
            self.put_peb(p, cause)?;
        }
        Ok(())
    }
}

/// Length of `buf` without trailing 0xFF bytes, rounded up to `unit`.
pub(crate) fn trimmed_len(buf: &[u8], unit: u32) -> usize {
    let end = buf.iter().rposition(|b| *b != 0xFF).map_or(0, |i| i + 1);
    end.next_multiple_of(unit as usize).min(buf.len())
}
