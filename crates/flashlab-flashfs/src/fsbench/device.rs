//! The simulated device: raw NAND geometry, UBI, a formatted flashfs.

use super::BenchError;
use crate::{Fs, FsSettings};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};
use serde::Serialize;

/// NAND geometry of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeviceSpec {
    pub blocks: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
}

impl DeviceSpec {
    /// Seed 000's device: 8 GiB, 128 KiB erase blocks, 2 KiB pages.
    pub const SEED000: DeviceSpec = DeviceSpec { blocks: 65_536, pages_per_block: 64, page_bytes: 2048 };

    /// The seed's block and page geometry with `mib` MiB of capacity.
    pub fn scaled_mib(mib: u32) -> DeviceSpec {
        DeviceSpec { blocks: mib * 8, ..Self::SEED000 }
    }

    pub fn bytes(&self) -> u64 {
        self.blocks as u64 * self.pages_per_block as u64 * self.page_bytes as u64
    }

    /// Capacity relative to the seed's 8 GiB device.
    pub fn scale(&self) -> f64 {
        self.bytes() as f64 / Self::SEED000.bytes() as f64
    }

    /// Formats UBI (default settings, scan attach) and flashfs on a fresh device.
    pub fn format(&self, fs: &FsSettings) -> Result<Fs, BenchError> {
        let nand = NandSettings::small(self.blocks, self.pages_per_block, self.page_bytes);
        nand.validate().map_err(|e| BenchError::Device(e.to_string()))?;
        fs.validate().map_err(|e| BenchError::Device(e.to_string()))?;
        let mut ubi =
            Ubi::format(Nand::new(nand), UbiSettings::default()).map_err(|f| BenchError::Mount(f.error.to_string()))?;
        let vol = ubi.create_volume("flashfs", 0).map_err(|e| BenchError::Mount(e.to_string()))?;
        Fs::format(ubi, vol, fs.clone()).map_err(|f| BenchError::Mount(f.error.to_string()))
    }
}
