//! The device's content and wear as bytes, for saving a NAND image and attaching it
//! again later (`flashlab fs mount --image`). The caller adds a checksum and does the
//! file I/O.
//!
//! Layout (little-endian): magic `FLNAND01`; `blocks`, `pages_per_block`, `page_bytes`,
//! `oob_bytes`, `subpages_per_page` (u32 each); per block its erase count (u32) and worn
//! flag (u8); per page its programmed-sub-page mask (u16); the OOB area; the number of
//! pages holding bytes (u64) and, for each, its index (u64) and `page_bytes` bytes.
//! Counters (`stats`) start again from zero and the fault generator from its seed.

use crate::nand::Nand;
use crate::NandSettings;

const MAGIC: &[u8; 8] = b"FLNAND01";

/// Why saved bytes cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("not a flashlab NAND image (expected the magic bytes FLNAND01)")]
    Magic,
    #[error("NAND image is of a different geometry: {image}, the config gives {config}")]
    Geometry { image: String, config: String },
    #[error("NAND image is truncated or corrupt at byte {0}")]
    Truncated(usize),
}

fn shape(c: &NandSettings) -> [u32; 5] {
    [c.blocks, c.pages_per_block, c.page_bytes, c.oob_bytes, c.subpages_per_page]
}

fn describe(s: [u32; 5]) -> String {
    format!("{} blocks x {} pages x {} bytes (+{} OOB, {} sub-pages)", s[0], s[1], s[2], s[3], s[4])
}

impl Nand {
    /// Everything a later [`Nand::load_state`] needs to rebuild this device's content.
    pub fn save_state(&self) -> Vec<u8> {
        let (cfg, pages) = (self.settings(), self.page_count());
        let mut b = Vec::with_capacity(64 + self.memory_bytes());
        b.extend_from_slice(MAGIC);
        for v in shape(cfg) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for (i, e) in self.erase_counts().iter().enumerate() {
            b.extend_from_slice(&e.to_le_bytes());
            b.push(self.worn_flag(i) as u8);
        }
        for p in 0..pages {
            b.extend_from_slice(&self.programmed_mask(p).to_le_bytes());
        }
        b.extend_from_slice(&self.oob_bytes_all());
        let held: Vec<usize> = (0..pages).filter(|&p| self.page_held(p)).collect();
        b.extend_from_slice(&(held.len() as u64).to_le_bytes());
        let mut page = vec![0u8; cfg.page_bytes as usize];
        for p in held {
            b.extend_from_slice(&(p as u64).to_le_bytes());
            self.page_bytes_of(p, &mut page);
            b.extend_from_slice(&page);
        }
        b
    }

    /// A device built from `cfg` holding the saved content; the saved geometry must be
    /// `cfg`'s.
    pub fn load_state(cfg: NandSettings, bytes: &[u8]) -> Result<Nand, StateError> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(StateError::Magic);
        }
        let mut r = Cursor { b: bytes, at: 8 };
        let mut saved = [0u32; 5];
        for v in &mut saved {
            *v = r.u32()?;
        }
        if saved != shape(&cfg) {
            return Err(StateError::Geometry { image: describe(saved), config: describe(shape(&cfg)) });
        }
        let mut nand = Nand::new(cfg);
        let (blocks, pages) = (nand.settings().blocks as usize, nand.page_count());
        let mut erase = Vec::with_capacity(blocks);
        let mut worn = Vec::with_capacity(blocks);
        for _ in 0..blocks {
            erase.push(r.u32()?);
            worn.push(r.take(1)?[0] != 0);
        }
        let mut masks = Vec::with_capacity(pages);
        for _ in 0..pages {
            masks.push(u16::from_le_bytes(r.take(2)?.try_into().expect("2")));
        }
        let oob = r.take(pages * nand.settings().oob_bytes as usize)?.to_vec();
        nand.restore_tables(erase, worn, masks, oob);
        let held = r.u64()? as usize;
        let pb = nand.settings().page_bytes as usize;
        for _ in 0..held {
            let p = r.u64()? as usize;
            if p >= pages {
                return Err(StateError::Truncated(r.at - 8));
            }
            nand.restore_page(p, r.take(pb)?);
        }
        if r.at != bytes.len() {
            return Err(StateError::Truncated(r.at));
        }
        Ok(nand)
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StateError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or(StateError::Truncated(self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, StateError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    fn u64(&mut self) -> Result<u64, StateError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
}
