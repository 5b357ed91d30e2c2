//! Format, attach by scanning, and detach.

use crate::headers::{EcHdr, Parsed, VidHdr, HDR_BYTES};
use crate::ubi::{Peb, Ubi, FASTMAP_VOL, LAYOUT_VOL};
use crate::{AttachFailure, UbiError, UbiSettings};
use flashlab_mtd::{Cause, MtdError, Nand};
use std::collections::BTreeMap;

/// Candidate PEBs per (volume, LEB): PEB, VID header, verified.
type Groups = BTreeMap<(u32, u32), Vec<(u32, VidHdr, bool)>>;
/// The chosen PEB and its sequence number per (volume, LEB).
type Best = BTreeMap<(u32, u32), (u32, u64)>;

/// What attach learned about one PEB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Seen {
    Bad,
    /// Needs an erase; EC known if the EC header was readable.
    Erase {
        ec: Option<u64>,
    },
    Free {
        ec: u64,
    },
    /// Holds an LEB; `verified` = no data CRC check needed.
    Used {
        ec: u64,
        vid: VidHdr,
        verified: bool,
    },
}

impl Ubi {
    /// Writes EC headers to every good block (keeping known erase counts)
    /// and an empty volume table, then returns the attached device.
    pub fn format(nand: Nand, cfg: UbiSettings) -> Result<Ubi, AttachFailure> {
        let mut ubi = Ubi::empty(nand, cfg);
        match ubi.do_format() {
            Ok(()) => Ok(ubi),
            Err(error) => Err(AttachFailure { nand: ubi.nand, error }),
        }
    }

    fn check_settings(&self) -> Result<(), UbiError> {
        self.cfg.validate().map_err(|e| UbiError::Settings(e.to_string()))?;
        if self.geo.pebs < 8 {
            return Err(UbiError::Settings("need at least 8 PEBs".into()));
        }
        Ok(())
    }

    fn do_format(&mut self) -> Result<(), UbiError> {
        self.check_settings()?;
        self.stats.attach_mode = "format".into();
        let mut bad = 0;
        for p in 0..self.geo.pebs {
            if self.nand.is_bad(p)? {
                self.pebs.set(p, Peb::Bad);
                bad += 1;
                continue;
            }
            let mut b = [0u8; HDR_BYTES];
            let ec = match self.nand.read(p, 0, &mut b, Cause::Mount) {
                Ok(_) => match EcHdr::decode(&b) {
                    Parsed::Valid(h) => h.ec,
                    _ => 0,
                },
                Err(MtdError::PowerCut) => return Err(MtdError::PowerCut.into()),
                Err(_) => 0,
            };
            self.pebs.set_ec(p, ec);
            self.erase_peb(p, Cause::Mount)?;
        }
        self.set_bad_reserve(bad);
        self.add_layout_volume();
        self.write_vtbl()?;
        if self.cfg.fastmap {
            self.write_fastmap()?;
        }
        Ok(())
    }

    pub(crate) fn set_bad_reserve(&mut self, bad: u32) {
        let limit = (self.geo.pebs * self.cfg.bad_reserve_per_1024).div_ceil(1024);
        self.bad_reserve = limit.saturating_sub(bad);
    }

    /// Attaches: with fastmap (if enabled and a valid one is found) or by
    /// scanning the EC and VID headers of every PEB. The cost in NAND
    /// operations and pages read is in `stats()`.
    pub fn attach(nand: Nand, cfg: UbiSettings) -> Result<Ubi, AttachFailure> {
        let mut ubi = Ubi::empty(nand, cfg);
        let ops0 = ubi.nand.stats().ops;
        let reads0 = ubi.nand.stats().pages_read.total();
        let r = ubi.check_settings().and_then(|_| ubi.attach_fastmap());
        match r {
            Ok(()) => {
                ubi.stats.attach_ops = ubi.nand.stats().ops - ops0;
                ubi.stats.attach_pages_read = ubi.nand.stats().pages_read.total() - reads0;
                Ok(ubi)
            }
            Err(error) => Err(AttachFailure { nand: ubi.nand, error }),
        }
    }

    /// Writes a fresh fastmap (when enabled) so the next attach is fast.
    pub fn detach(&mut self) -> Result<(), UbiError> {
        if self.cfg.fastmap {
            self.write_fastmap()?;
        }
        Ok(())
    }

    pub(crate) fn read_retry(&mut self, p: u32, offs: u32, buf: &mut [u8]) -> Result<bool, UbiError> {
        for _ in 0..=self.cfg.read_retries {
            match self.nand.read(p, offs, buf, Cause::Mount) {
                Ok(_) => return Ok(true),
                Err(MtdError::Uncorrectable { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(false)
    }

    /// Reads the EC and VID headers of `p` (one page read when the VID
    /// header shares the first page).
    pub(crate) fn scan_peb(&mut self, p: u32) -> Result<Seen, UbiError> {
        if self.nand.is_bad(p)? {
            return Ok(Seen::Bad);
        }
        let vo = self.geo.vid_offset as usize;
        let io = self.geo.hdr_io as usize;
        let same_page = vo < self.geo.page_bytes as usize;
        let mut b = vec![0u8; if same_page { vo + io } else { io }];
        if !self.read_retry(p, 0, &mut b)? {
            return Ok(Seen::Erase { ec: None });
        }
        let Parsed::Valid(ech) = EcHdr::decode(&b[..HDR_BYTES]) else {
            return Ok(Seen::Erase { ec: None });
        };
        let mut vb = vec![0u8; io];
        if same_page {
            vb.copy_from_slice(&b[vo..vo + io]);
        } else if !self.read_retry(p, vo as u32, &mut vb)? {
            return Ok(Seen::Erase { ec: Some(ech.ec) });
        }
        // Empty only if the whole header unit is erased: a cut or failed
        // program may leave the header bytes 0xFF and garbage after them.
        let erased = vb.iter().all(|x| *x == 0xFF);
        Ok(match VidHdr::decode(&vb[..HDR_BYTES]) {
            Parsed::Empty if erased => Seen::Free { ec: ech.ec },
            Parsed::Empty => Seen::Erase { ec: Some(ech.ec) },
            Parsed::Corrupt => Seen::Erase { ec: Some(ech.ec) },
            Parsed::Valid(vid) => Seen::Used { ec: ech.ec, vid, verified: !vid.copy_flag },
        })
    }

    /// Reads a copied LEB's data and checks it against the VID data CRC.
    pub(crate) fn read_copy(&mut self, p: u32, vid: &VidHdr) -> Result<Option<Vec<u8>>, UbiError> {
        if vid.data_size > self.geo.leb_bytes {
            return Ok(None);
        }
        let mut b = vec![0u8; vid.data_size as usize];
        if !self.read_retry(p, self.geo.data_offset, &mut b)? || crc32fast::hash(&b) != vid.data_crc {
            return Ok(None);
        }
        Ok(Some(b))
    }

    pub(crate) fn attach_scan(&mut self) -> Result<(), UbiError> {
        self.stats.attach_mode = "scan".into();
        let mut seen = Vec::with_capacity(self.geo.pebs as usize);
        for p in 0..self.geo.pebs {
            seen.push(self.scan_peb(p)?);
        }
        self.resolve(&seen, None)?;
        if self.cfg.fastmap {
            self.write_fastmap()?;
        }
        Ok(())
    }

    /// Builds the PEB table and EBA from what attach saw; newest sqnum wins,
    /// a copy whose data CRC fails loses to the older PEB.
    pub(crate) fn resolve(&mut self, seen: &[Seen], anchor: Option<u32>) -> Result<(), UbiError> {
        let known: Vec<u64> = seen
            .iter()
            .filter_map(|s| match s {
                Seen::Free { ec } | Seen::Used { ec, .. } | Seen::Erase { ec: Some(ec) } => Some(*ec),
                _ => None,
            })
            .collect();
        let mean = if known.is_empty() { 0 } else { known.iter().sum::<u64>() / known.len() as u64 };
        let mut to_erase = Vec::new();
        let mut groups: Groups = BTreeMap::new();
        let mut bad = 0;
        for (p, s) in seen.iter().enumerate() {
            let p = p as u32;
            match *s {
                Seen::Bad => {
                    self.pebs.set(p, Peb::Bad);
                    bad += 1;
                }
                Seen::Erase { ec } => {
                    self.pebs.set_ec(p, ec.unwrap_or(mean));
                    self.pebs.set(p, Peb::Pending);
                    to_erase.push(p);
                }
                Seen::Free { ec } => {
                    self.pebs.set_ec(p, ec);
                    self.pebs.set(p, Peb::Free);
                }
                Seen::Used { ec, vid, verified } => {
                    self.pebs.set_ec(p, ec);
                    self.pebs.set(p, Peb::Pending);
                    self.sqnum = self.sqnum.max(vid.sqnum + 1);
                    groups.entry((vid.vol_id, vid.lnum)).or_default().push((p, vid, verified));
                }
            }
        }
        self.set_bad_reserve(bad);
        self.erase_stale_anchors(&mut groups, anchor)?;
        let best = self.pick_newest(groups, &mut to_erase)?;
        // Final states first: anything below may write (volume-table
        // repair, scrubbing, a fastmap when the pool runs dry).
        for (&(vol, lnum), &(p, sqnum)) in &best {
            self.pebs.set(p, Peb::Used { vol, lnum, sqnum });
        }
        for p in to_erase {
            self.erase_peb(p, Cause::Mount)?;
        }
        self.install_all(best)
    }

    fn erase_stale_anchors(&mut self, groups: &mut Groups, keep: Option<u32>) -> Result<(), UbiError> {
        let mut anchors: Vec<(u32, VidHdr, bool)> = Vec::new();
        groups.retain(|k, v| {
            if k.0 == FASTMAP_VOL {
                anchors.append(v);
                false
            } else {
                true
            }
        });
        anchors.sort_by_key(|a| a.1.sqnum);
        for (p, vid, _) in anchors {
            if Some(p) == keep {
                self.pebs.set(p, Peb::Anchor { sqnum: vid.sqnum });
            } else {
                self.erase_peb(p, Cause::Mount)?;
            }
        }
        Ok(())
    }

    fn pick_newest(&mut self, groups: Groups, to_erase: &mut Vec<u32>) -> Result<Best, UbiError> {
        let mut best = BTreeMap::new();
        for (key, mut list) in groups {
            list.sort_by_key(|(_, v, _)| std::cmp::Reverse(v.sqnum));
            for (p, vid, verified) in list {
                let ok = !best.contains_key(&key) && (verified || self.read_copy(p, &vid)?.is_some());
                if ok {
                    best.insert(key, (p, vid.sqnum));
                } else {
                    to_erase.push(p);
                }
            }
        }
        Ok(best)
    }

    fn install_all(&mut self, best: Best) -> Result<(), UbiError> {
        self.add_layout_volume();
        for (&(_, lnum), &(p, _)) in best.range((LAYOUT_VOL, 0)..=(LAYOUT_VOL, 1)) {
            self.vol_mut(LAYOUT_VOL)?.eba[lnum as usize] = Some(p);
        }
        let Some(vt) = self.read_vtbl()? else {
            return Err(UbiError::Unformatted);
        };
        for info in vt {
            let eba = vec![None; info.lebs as usize];
            self.vols.insert(info.id, crate::ubi::Volume { info, eba });
        }
        let mut unknown = Vec::new();
        for ((vol, lnum), (p, _)) in best {
            if vol == LAYOUT_VOL {
                continue;
            }
            match self.vols.get_mut(&vol) {
                Some(v) if (lnum as usize) < v.eba.len() => v.eba[lnum as usize] = Some(p),
                _ => unknown.push(p),
            }
        }
        for p in unknown {
            self.put_peb(p, Cause::Mount)?;
        }
        Ok(())
    }
}
