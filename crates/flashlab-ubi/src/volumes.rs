//! The volume table (two copies in the layout volume) and volume
//! creation and removal.

use crate::ubi::{Ubi, Volume, VolumeInfo, LAYOUT_VOL, MAX_USER_VOL};
use crate::UbiError;
use flashlab_mtd::Cause;

const VTBL_MAGIC: &[u8; 4] = b"VTBL";
const RECORD_BYTES: usize = 32;
const MAX_NAME: usize = 23;

/// Encodes the user volumes: magic, count, 32-byte records, CRC-32.
pub(crate) fn encode_vtbl(vols: &[VolumeInfo]) -> Vec<u8> {
    let mut b = VTBL_MAGIC.to_vec();
    b.extend_from_slice(&(vols.len() as u32).to_be_bytes());
    for v in vols {
        let mut r = [0u8; RECORD_BYTES];
        r[..4].copy_from_slice(&v.id.to_be_bytes());
        r[4..8].copy_from_slice(&v.lebs.to_be_bytes());
        let name = v.name.as_bytes();
        r[8] = name.len() as u8;
        r[9..9 + name.len()].copy_from_slice(name);
        b.extend_from_slice(&r);
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_be_bytes());
    b
}

/// Decodes a volume table; None when absent or corrupt.
pub(crate) fn decode_vtbl(b: &[u8]) -> Option<Vec<VolumeInfo>> {
    if b.len() < 12 || &b[..4] != VTBL_MAGIC {
        return None;
    }
    let n = u32::from_be_bytes(b[4..8].try_into().ok()?) as usize;
    let end = 8 + n.checked_mul(RECORD_BYTES)?;
    if n > 128 || end + 4 > b.len() {
        return None;
    }
    let crc = u32::from_be_bytes(b[end..end + 4].try_into().ok()?);
    if crc32fast::hash(&b[..end]) != crc {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for r in b[8..end].chunks(RECORD_BYTES) {
        let len = (r[8] as usize).min(MAX_NAME);
        let name = String::from_utf8_lossy(&r[9..9 + len]).into_owned();
        let id = u32::from_be_bytes(r[..4].try_into().ok()?);
        let lebs = u32::from_be_bytes(r[4..8].try_into().ok()?);
        out.push(VolumeInfo { id, name, lebs });
    }
    Some(out)
}

impl Ubi {
    /// The user volumes.
    pub fn volumes(&self) -> Vec<VolumeInfo> {
        self.vols.values().filter(|v| v.info.id <= MAX_USER_VOL).map(|v| v.info.clone()).collect()
    }

    /// LEBs still available for new volumes.
    pub fn available_lebs(&self) -> u32 {
        let reserved: u32 = self.vols.values().map(|v| v.info.lebs).sum();
        let overhead = self.bad_reserve + 2 + if self.cfg.fastmap { 2 } else { 0 };
        self.good_pebs().saturating_sub(overhead + reserved)
    }

    /// Creates a volume of `lebs` LEBs (0 = all available) and returns its id.
    pub fn create_volume(&mut self, name: &str, lebs: u32) -> Result<u32, UbiError> {
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(UbiError::Settings(format!("volume name must be 1..={MAX_NAME} bytes")));
        }
        if self.vols.values().any(|v| v.info.name == name) {
            return Err(UbiError::Exists);
        }
        let lebs = if lebs == 0 { self.available_lebs() } else { lebs };
        if lebs == 0 || lebs > self.available_lebs() {
            return Err(UbiError::NoSpace);
        }
        let id = (0..=MAX_USER_VOL).find(|i| !self.vols.contains_key(i)).ok_or(UbiError::NoSpace)?;
        let info = VolumeInfo { id, name: name.to_string(), lebs };
        self.vols.insert(id, Volume { info, eba: vec![None; lebs as usize] });
        self.write_vtbl()?;
        Ok(id)
    }

    /// Removes a volume, erasing its PEBs.
    pub fn remove_volume(&mut self, id: u32) -> Result<(), UbiError> {
        if id > MAX_USER_VOL || !self.vols.contains_key(&id) {
            return Err(UbiError::NoVolume(id));
        }
        let lebs = self.vol(id)?.info.lebs;
        for l in 0..lebs {
            self.leb_unmap(id, l, Cause::Meta)?;
        }
        self.vols.remove(&id);
        self.write_vtbl()
    }

    /// Finds a volume id by name.
    pub fn volume_id(&self, name: &str) -> Option<u32> {
        self.vols.values().find(|v| v.info.name == name && v.info.id <= MAX_USER_VOL).map(|v| v.info.id)
    }

    pub(crate) fn add_layout_volume(&mut self) {
        let info = VolumeInfo { id: LAYOUT_VOL, name: "layout".into(), lebs: 2 };
        self.vols.insert(LAYOUT_VOL, Volume { info, eba: vec![None; 2] });
    }

    /// Writes both copies of the volume table (each an atomic LEB change).
    pub(crate) fn write_vtbl(&mut self) -> Result<(), UbiError> {
        let blob = encode_vtbl(&self.volumes());
        self.leb_change(LAYOUT_VOL, 0, &blob, Cause::Meta)?;
        self.leb_change(LAYOUT_VOL, 1, &blob, Cause::Meta)
    }

    /// Reads the volume table: copy 0, else copy 1; repairs a bad copy.
    pub(crate) fn read_vtbl(&mut self) -> Result<Option<Vec<VolumeInfo>>, UbiError> {
        let mut copies = Vec::new();
        let max = (8 + 128 * RECORD_BYTES + 4).next_multiple_of(self.geo.min_io as usize);
        for l in 0..2 {
            let mut b = vec![0u8; max.min(self.geo.leb_bytes as usize)];
            self.leb_read(LAYOUT_VOL, l, 0, &mut b, Cause::Mount)?;
            copies.push(decode_vtbl(&b));
        }
        let chosen = copies[0].clone().or_else(|| copies[1].clone());
        if let Some(v) = &chosen {
            let blob = encode_vtbl(v);
            for (l, c) in copies.iter().enumerate() {
                if c.as_ref() != Some(v) {
                    self.leb_change(LAYOUT_VOL, l as u32, &blob, Cause::Meta)?;
                }
            }
        }
        Ok(chosen)
    }
}
