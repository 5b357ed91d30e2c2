//! The attached UBI device: PEB table, volumes, and shared helpers.

use crate::headers::{EcHdr, VidHdr, HDR_BYTES};
use crate::{UbiError, UbiSettings, UbiStats};
use flashlab_mtd::{Cause, MtdError, Nand};
use std::collections::{BTreeMap, VecDeque};

/// Internal volume holding the volume table (two copies).
pub const LAYOUT_VOL: u32 = 0x7fff_efff;
/// Internal volume id of fastmap anchors.
pub const FASTMAP_VOL: u32 = 0x7fff_effe;
/// Highest user volume id.
pub const MAX_USER_VOL: u32 = 127;

/// Derived layout of a PEB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub pebs: u32,
    pub peb_bytes: u32,
    pub page_bytes: u32,
    /// Data writes must be multiples of this (a page).
    pub min_io: u32,
    /// Header writes use this unit (a sub-page).
    pub hdr_io: u32,
    pub vid_offset: u32,
    pub data_offset: u32,
    pub leb_bytes: u32,
}

impl Geometry {
    pub fn of(nand: &Nand) -> Geometry {
        let s = nand.settings();
        let sub = s.subpage_bytes();
        let (vid, data) = if sub < s.page_bytes { (sub, s.page_bytes) } else { (s.page_bytes, 2 * s.page_bytes) };
        Geometry {
            pebs: s.blocks,
            peb_bytes: s.block_bytes(),
            page_bytes: s.page_bytes,
            min_io: s.page_bytes,
            hdr_io: sub,
            vid_offset: vid,
            data_offset: data,
            leb_bytes: s.block_bytes() - data,
        }
    }
}

/// State of one PEB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peb {
    /// Erased with an EC header; may be handed out.
    Free,
    /// Holds LEB `lnum` of volume `vol`.
    Used {
        vol: u32,
        lnum: u32,
        sqnum: u64,
    },
    /// Erased, but not usable until the next fastmap lists it.
    Pending,
    /// Holds a fastmap anchor.
    Anchor {
        sqnum: u64,
    },
    Bad,
}

/// A user volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeInfo {
    pub id: u32,
    pub name: String,
    /// Number of LEBs reserved.
    pub lebs: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct Volume {
    pub info: VolumeInfo,
    pub eba: Vec<Option<u32>>,
}

/// An attached UBI device.
pub struct Ubi {
    pub(crate) nand: Nand,
    pub(crate) cfg: UbiSettings,
    pub(crate) geo: Geometry,
    /// PEB states and erase counters.
    pub(crate) pebs: crate::pebs::PebTable,
    pub(crate) vols: BTreeMap<u32, Volume>,
    pub(crate) sqnum: u64,
    pub(crate) pool: VecDeque<u32>,
    pub(crate) fm_active: bool,
    pub(crate) prot: VecDeque<(u32, u64)>,
    pub(crate) erase_seq: u64,
    pub(crate) bad_reserve: u32,
    pub(crate) ro: bool,
    pub(crate) in_wl: bool,
    pub(crate) stats: UbiStats,
}

impl Ubi {
    pub(crate) fn empty(nand: Nand, cfg: UbiSettings) -> Ubi {
        let geo = Geometry::of(&nand);
        let n = geo.pebs as usize;
        let bad_reserve = (geo.pebs * cfg.bad_reserve_per_1024).div_ceil(1024);
        Ubi {
            nand,
            cfg,
            geo,
            pebs: crate::pebs::PebTable::new(n),
            vols: BTreeMap::new(),
            sqnum: 1,
            pool: VecDeque::new(),
            fm_active: false,
            prot: VecDeque::new(),
            erase_seq: 0,
            bad_reserve,
            ro: false,
            in_wl: false,
            stats: UbiStats::default(),
        }
    }

    /// The device geometry as UBI uses it.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Bytes per LEB.
    pub fn leb_bytes(&self) -> u32 {
        self.geo.leb_bytes
    }

    /// Minimal write unit for LEB data (one page).
    pub fn min_io(&self) -> u32 {
        self.geo.min_io
    }

    /// The settings in force.
    pub fn settings(&self) -> &UbiSettings {
        &self.cfg
    }

    /// The NAND device (for counters).
    pub fn nand(&self) -> &Nand {
        &self.nand
    }

    /// Mutable NAND access (power-cut arming in tests and campaigns).
    pub fn nand_mut(&mut self) -> &mut Nand {
        &mut self.nand
    }

    /// Gives the NAND back without writing anything.
    pub fn into_nand(self) -> Nand {
        self.nand
    }

    /// UBI counters.
    pub fn stats(&self) -> &UbiStats {
        &self.stats
    }

    /// True once the bad-block reserve is exhausted.
    pub fn is_read_only(&self) -> bool {
        self.ro
    }

    /// Per-PEB erase counters as UBI knows them (bad PEBs excluded).
    pub fn erase_counters(&self) -> Vec<u64> {
        (0..self.pebs.len()).filter(|p| self.pebs[*p] != Peb::Bad).map(|p| self.pebs.ec(p)).collect()
    }

    /// Host memory held by UBI's tables (the simulated kernel footprint).
    pub fn memory_bytes(&self) -> usize {
        let eba: usize = self.vols.values().map(|v| v.eba.len() * 8).sum();
        self.pebs.memory_bytes() + eba + self.pool.len() * 4
    }

    pub(crate) fn next_sqnum(&mut self) -> u64 {
        self.sqnum += 1;
        self.sqnum
    }

    /// Number of PEBs that are free or pending (usable capacity).
    pub fn free_pebs(&self) -> u32 {
        self.pebs.iter().filter(|p| matches!(p, Peb::Free | Peb::Pending)).count() as u32
    }

    pub(crate) fn good_pebs(&self) -> u32 {
        self.pebs.iter().filter(|p| **p != Peb::Bad).count() as u32
    }

    pub(crate) fn hdr_buf(&self, hdr: &[u8; HDR_BYTES]) -> Vec<u8> {
        let mut b = vec![0xFF; self.geo.hdr_io as usize];
        b[..HDR_BYTES].copy_from_slice(hdr);
        b
    }

    pub(crate) fn ec_hdr(&self, ec: u64) -> EcHdr {
        EcHdr { ec, vid_hdr_offset: self.geo.vid_offset, data_offset: self.geo.data_offset, image_seq: 1 }
    }

    pub(crate) fn write_ec_hdr(&mut self, p: u32, ec: u64) -> Result<(), MtdError> {
        let b = self.hdr_buf(&self.ec_hdr(ec).encode());
        self.nand.program(p, 0, &b, Cause::UbiHeader)
    }

    pub(crate) fn write_vid_hdr(&mut self, p: u32, vid: &VidHdr) -> Result<(), MtdError> {
        let b = self.hdr_buf(&vid.encode());
        self.nand.program(p, self.geo.vid_offset, &b, Cause::UbiHeader)
    }

    pub(crate) fn vol(&self, vol: u32) -> Result<&Volume, UbiError> {
        self.vols.get(&vol).ok_or(UbiError::NoVolume(vol))
    }

    pub(crate) fn vol_mut(&mut self, vol: u32) -> Result<&mut Volume, UbiError> {
        self.vols.get_mut(&vol).ok_or(UbiError::NoVolume(vol))
    }
}

impl Ubi {
    /// Checks UBI's tables: every mapped LEB's PEB is `Used` by that LEB,
    /// no PEB is mapped twice, pool PEBs are free, at most one anchor.
    pub fn check_consistency(&self) -> Result<(), String> {
        self.pebs.check()?;
        let mut seen = std::collections::HashSet::new();

        for (id, v) in &self.vols {
            for (l, p) in v.eba.iter().enumerate() {
                let Some(p) = p else { continue };
                if !seen.insert(*p) {
                    return Err(format!("PEB {p} mapped twice"));
                }
                match self.pebs[*p as usize] {
                    Peb::Used { vol, lnum, .. } if vol == *id && lnum == l as u32 => {}
                    s => return Err(format!("LEB {id}:{l} -> PEB {p} in state {s:?}")),
                }
            }
        }
        for p in &self.pool {
            if self.pebs[*p as usize] != Peb::Free {
                return Err(format!("pool PEB {p} in state {:?}", self.pebs[*p as usize]));
            }
        }
        let anchors = self.pebs.iter().filter(|s| matches!(s, Peb::Anchor { .. })).count();
        if anchors > 1 || (self.fm_active && anchors == 0) {
            return Err(format!("{anchors} fastmap anchors (active {})", self.fm_active));
        }
        let orphan_used =
            (0..self.pebs.len()).find(|p| matches!(self.pebs[*p], Peb::Used { .. }) && !seen.contains(&(*p as u32)));
        if let Some(p) = orphan_used {
            return Err(format!("PEB {p} used but not mapped: {:?}", self.pebs[p]));
        }
        Ok(())
    }
}
