//! Fastmap: a copy of the PEB table plus a pool of PEBs to be used next,
//! stored in one anchor PEB among the first `fastmap_anchor_pebs`.
//!
//! Invariant: after a fastmap is written, new VID headers go only to its
//! pool PEBs or to PEBs in the anchor area (which attach always scans), and
//! PEBs erased afterwards stay unused (`Pending`) until the next fastmap.
//! So attach = scan the anchor area + read the fastmap + scan the pool.
//!
//! Blob: "UBFM" | max_sqnum u64 | pebs u32 | pool_len u32 | pool u32... |
//! per PEB 18 bytes (ec u32, state u8, vol u8, lnum u32, sqnum u64) | crc.

use crate::attach::Seen;
use crate::headers::VidHdr;
use crate::ubi::{Peb, Ubi, FASTMAP_VOL, LAYOUT_VOL};
use crate::UbiError;
use flashlab_mtd::{Cause, MtdError};

const FM_MAGIC: &[u8; 4] = b"UBFM";
const REC: usize = 18;
const S_FREE: u8 = 0;
const S_USED: u8 = 1;
const S_BAD: u8 = 2;
const S_SCAN: u8 = 3;

struct Blob {
    max_sqnum: u64,
    pool: Vec<u32>,
    recs: Vec<(u64, u8, u32, u32, u64)>,
}

fn vol_code(vol: u32) -> u8 {
    if vol == LAYOUT_VOL {
        255
    } else {
        vol as u8
    }
}

fn vol_of(code: u8) -> u32 {
    if code == 255 {
        LAYOUT_VOL
    } else {
        code as u32
    }
}

impl Ubi {
    fn anchor_area(&self) -> u32 {
        self.cfg.fastmap_anchor_pebs.min(self.geo.pebs)
    }

    fn pool_size(&self) -> usize {
        (self.cfg.fastmap_pool_pebs as usize).min((self.geo.pebs as usize / 20).max(8))
    }

    fn encode_fastmap(&self, pool: &[u32]) -> Vec<u8> {
        let mut b = FM_MAGIC.to_vec();
        b.extend_from_slice(&self.sqnum.to_be_bytes());
        b.extend_from_slice(&self.geo.pebs.to_be_bytes());
        b.extend_from_slice(&(pool.len() as u32).to_be_bytes());
        for p in pool {
            b.extend_from_slice(&p.to_be_bytes());
        }
        for (p, st) in self.pebs.iter().enumerate() {
            let (s, vol, lnum, sq) = match *st {
                Peb::Free | Peb::Pending => (S_FREE, 0, 0, 0),
                Peb::Used { vol, lnum, sqnum } => (S_USED, vol_code(vol), lnum, sqnum),
                Peb::Bad => (S_BAD, 0, 0, 0),
                Peb::Anchor { .. } => (S_SCAN, 0, 0, 0),
            };
            b.extend_from_slice(&(self.pebs.ec(p) as u32).to_be_bytes());
            b.push(s);
            b.push(vol);
            b.extend_from_slice(&lnum.to_be_bytes());
            b.extend_from_slice(&sq.to_be_bytes());
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_be_bytes());
        b
    }

    fn decode_fastmap(&self, b: &[u8]) -> Option<Blob> {
        let n = self.geo.pebs as usize;
        if b.len() < 20 || &b[..4] != FM_MAGIC || u32::from_be_bytes(b[12..16].try_into().ok()?) as usize != n {
            return None;
        }
        let crc_at = b.len() - 4;
        if crc32fast::hash(&b[..crc_at]) != u32::from_be_bytes(b[crc_at..].try_into().ok()?) {
            return None;
        }
        let max_sqnum = u64::from_be_bytes(b[4..12].try_into().ok()?);
        let pl = u32::from_be_bytes(b[16..20].try_into().ok()?) as usize;
        if 20 + pl * 4 + n * REC != crc_at {
            return None;
        }
        let pool = b[20..20 + pl * 4].chunks(4).map(|c| u32::from_be_bytes(c.try_into().unwrap_or([0; 4]))).collect();
        let recs = b[20 + pl * 4..crc_at]
            .chunks(REC)
            .map(|r| {
                let u32at = |i: usize| u32::from_be_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
                let sq = u64::from_be_bytes(r[10..18].try_into().unwrap_or([0; 8]));
                (u32at(0) as u64, r[4], vol_of(r[5]), u32at(6), sq)
            })
            .collect();
        Some(Blob { max_sqnum, pool, recs })
    }

    /// Writes a new fastmap with a new pool; erases the previous anchor.
    /// Disables fastmap (erasing anchors) if it cannot be written.
    pub(crate) fn write_fastmap(&mut self) -> Result<(), UbiError> {
        self.pebs.update_all(|_, st| {
            if *st == Peb::Pending {
                *st = Peb::Free;
            }
        });

        for _ in 0..3 {
            let area = self.anchor_area();
            let Some(anchor) = (0..area)
                .filter(|p| self.pebs[*p as usize] == Peb::Free)
                .min_by_key(|p| (self.pebs.ec(*p as usize), *p))
            else {
                return self.disable_fastmap();
            };
            let pool = self.choose_pool(anchor);
            let blob = self.encode_fastmap(&pool);
            if blob.len() > self.geo.leb_bytes as usize {
                return self.disable_fastmap();
            }
            if self.write_anchor(anchor, &blob)? {
                self.pool = pool.into();
                self.fm_active = true;
                self.stats.fastmap_writes += 1;
                return self.erase_old_anchors(anchor);
            }
        }
        self.disable_fastmap()
    }

    fn choose_pool(&self, anchor: u32) -> Vec<u32> {
        let area = self.anchor_area();
        let mut free: Vec<u32> =
            (0..self.geo.pebs).filter(|p| *p != anchor && self.pebs[*p as usize] == Peb::Free).collect();
        free.sort_by_key(|p| (*p < area, self.pebs.ec(*p as usize), *p));
        free.truncate(self.pool_size());
        free
    }

    fn write_anchor(&mut self, p: u32, blob: &[u8]) -> Result<bool, UbiError> {
        let sqnum = self.next_sqnum();
        let mut padded = blob.to_vec();
        padded.resize(blob.len().next_multiple_of(self.geo.min_io as usize), 0xFF);
        let vid = VidHdr {
            vol_id: FASTMAP_VOL,
            lnum: 0,
            sqnum,
            copy_flag: true,
            data_size: blob.len() as u32,
            data_crc: crc32fast::hash(blob),
        };
        self.pebs.set(p, Peb::Pending);
        let mut r = self.write_vid_hdr(p, &vid);
        if r.is_ok() {
            r = self.nand.program(p, self.geo.data_offset, &padded, Cause::Fastmap);
        }
        match r {
            Ok(()) => {
                self.pebs.set(p, Peb::Anchor { sqnum });
                Ok(true)
            }
            Err(MtdError::ProgramFailed { .. }) | Err(MtdError::BadBlock(_)) => {
                self.retire(p)?;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn erase_old_anchors(&mut self, keep: u32) -> Result<(), UbiError> {
        let old: Vec<u32> =
            (0..self.geo.pebs).filter(|p| *p != keep && matches!(self.pebs[*p as usize], Peb::Anchor { .. })).collect();
        for p in old {
            self.erase_peb(p, Cause::Fastmap)?;
        }
        Ok(())
    }

    fn disable_fastmap(&mut self) -> Result<(), UbiError> {
        let mut anchors: Vec<(u64, u32)> = (0..self.geo.pebs)
            .filter_map(|p| match self.pebs[p as usize] {
                Peb::Anchor { sqnum } => Some((sqnum, p)),
                _ => None,
            })
            .collect();
        anchors.sort();
        self.fm_active = false;
        self.pool.clear();
        for (_, p) in anchors {
            self.erase_peb(p, Cause::Fastmap)?;
        }
        Ok(())
    }

    /// Attach using the newest valid fastmap; falls back to a full scan.
    pub(crate) fn attach_fastmap(&mut self) -> Result<(), UbiError> {
        if !self.cfg.fastmap {
            return self.attach_scan();
        }
        let area = self.anchor_area();
        let mut seen = Vec::with_capacity(self.geo.pebs as usize);
        for p in 0..area {
            seen.push(self.scan_peb(p)?);
        }
        let Some((anchor, blob)) = self.find_fastmap(&seen)? else {
            self.stats.attach_mode = "scan".into();
            for p in area..self.geo.pebs {
                seen.push(self.scan_peb(p)?);
            }
            self.resolve(&seen, None)?;
            return self.write_fastmap();
        };
        self.stats.attach_mode = "fastmap".into();
        for p in area..self.geo.pebs {
            let (ec, s, vol, lnum, sqnum) = blob.recs[p as usize];
            seen.push(if s == S_SCAN || blob.pool.contains(&p) {
                self.scan_peb(p)?
            } else {
                match s {
                    S_FREE => Seen::Free { ec },
                    S_BAD => Seen::Bad,
                    _ => {
                        let vid = VidHdr { vol_id: vol, lnum, sqnum, copy_flag: false, data_size: 0, data_crc: 0 };
                        Seen::Used { ec, vid, verified: true }
                    }
                }
            });
        }
        self.sqnum = self.sqnum.max(blob.max_sqnum + 1);
        self.fm_active = true;
        self.pool =
            blob.pool.iter().copied().filter(|p| matches!(seen.get(*p as usize), Some(Seen::Free { .. }))).collect();
        self.resolve(&seen, Some(anchor))
    }

    fn find_fastmap(&mut self, seen: &[Seen]) -> Result<Option<(u32, Blob)>, UbiError> {
        let mut anchors: Vec<(u64, u32, VidHdr)> = seen
            .iter()
            .enumerate()
            .filter_map(|(p, s)| match s {
                Seen::Used { vid, .. } if vid.vol_id == FASTMAP_VOL => Some((vid.sqnum, p as u32, *vid)),
                _ => None,
            })
            .collect();
        anchors.sort_by_key(|a| std::cmp::Reverse(a.0));
        for (_, p, vid) in anchors {
            if let Some(data) = self.read_copy(p, &vid)? {
                if let Some(blob) = self.decode_fastmap(&data) {
                    return Ok(Some((p, blob)));
                }
            }
        }
        Ok(None)
    }
}
