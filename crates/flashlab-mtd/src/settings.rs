//! Geometry and fault-model settings (serde-deserializable, validated).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A settings value that is out of range; names the offending field.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("invalid setting `{field}`: {reason}")]
pub struct SettingsError {
    /// Dotted field name, e.g. `faults.bitflip_per_read`.
    pub field: &'static str,
    /// Why it is invalid.
    pub reason: String,
}

impl SettingsError {
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        Self { field, reason: reason.into() }
    }
}

/// Raw NAND geometry and fault model (the `[flash]` section).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct NandSettings {
    /// Number of erase blocks.
    pub blocks: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Data bytes per page.
    pub page_bytes: u32,
    /// Out-of-band bytes per page.
    pub oob_bytes: u32,
    /// Sub-pages per page (each may be programmed once separately); 1 = none.
    pub subpages_per_page: u32,
    /// Fault model.
    pub faults: FaultSettings,
}

impl Default for NandSettings {
    fn default() -> Self {
        Self {
            blocks: 1024,
            pages_per_block: 64,
            page_bytes: 2048,
            oob_bytes: 64,
            subpages_per_page: 4,
            faults: FaultSettings::default(),
        }
    }
}

/// Seeded fault model. Probabilities are per page operation.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultSettings {
    /// Seed of every random fault decision (and of power-cut garbage).
    pub seed: u64,
    /// Number of blocks marked bad at the factory (never block 0).
    pub factory_bad_blocks: u32,
    /// Probability that a page read reports corrected bit-flips.
    pub bitflip_per_read: f64,
    /// Probability that a page read is uncorrectable (transient).
    pub uncorrectable_per_read: f64,
    /// Probability that a page program fails (the block should be retired).
    pub program_fail_per_op: f64,
    /// Probability that an erase fails (the block turns bad).
    pub erase_fail_per_op: f64,
    /// Erase cycles after which every erase of the block fails (0 = unlimited).
    pub endurance_erases: u32,
}

impl Default for FaultSettings {
    fn default() -> Self {
        Self {
            seed: 1,
            factory_bad_blocks: 0,
            bitflip_per_read: 0.0,
            uncorrectable_per_read: 0.0,
            program_fail_per_op: 0.0,
            erase_fail_per_op: 0.0,
            endurance_erases: 0,
        }
    }
}

fn check_prob(field: &'static str, p: f64) -> Result<(), SettingsError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(SettingsError::new(field, format!("{p} is not a probability in [0, 1]")))
    }
}

impl NandSettings {
    /// A small geometry used by tests and the power-cut campaign.
    pub fn small(blocks: u32, pages_per_block: u32, page_bytes: u32) -> Self {
        Self { blocks, pages_per_block, page_bytes, ..Self::default() }
    }

    /// Bytes in one erase block.
    pub fn block_bytes(&self) -> u32 {
        self.pages_per_block * self.page_bytes
    }

    /// Minimal programmable unit (sub-page if sub-pages exist).
    pub fn subpage_bytes(&self) -> u32 {
        self.page_bytes / self.subpages_per_page
    }

    /// Total data bytes of the device.
    pub fn device_bytes(&self) -> u64 {
        self.blocks as u64 * self.block_bytes() as u64
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.blocks < 4 {
            return Err(SettingsError::new("blocks", "need at least 4 blocks"));
        }
        if self.pages_per_block < 4 || self.pages_per_block > 4096 {
            return Err(SettingsError::new("pages_per_block", "must be in 4..=4096"));
        }
        if self.page_bytes < 512 || !self.page_bytes.is_power_of_two() {
            return Err(SettingsError::new("page_bytes", "must be a power of two >= 512"));
        }
        if self.oob_bytes < 2 {
            return Err(SettingsError::new("oob_bytes", "must be at least 2"));
        }
        let sp = self.subpages_per_page;
        if sp == 0 || sp > 8 || !sp.is_power_of_two() || self.page_bytes / sp < 256 {
            return Err(SettingsError::new(
                "subpages_per_page",
                "must be 1, 2, 4 or 8 with sub-pages of at least 256 bytes",
            ));
        }
        self.faults.validate(self.blocks)
    }
}

impl FaultSettings {
    /// Checks every field against a device of `blocks` blocks.
    pub fn validate(&self, blocks: u32) -> Result<(), SettingsError> {
        if self.factory_bad_blocks >= blocks / 2 {
            return Err(SettingsError::new("faults.factory_bad_blocks", "must be less than half of the blocks"));
        }
        check_prob("faults.bitflip_per_read", self.bitflip_per_read)?;
        check_prob("faults.uncorrectable_per_read", self.uncorrectable_per_read)?;
        check_prob("faults.program_fail_per_op", self.program_fail_per_op)?;
        check_prob("faults.erase_fail_per_op", self.erase_fail_per_op)
    }

    /// True when no random fault is enabled (power cuts aside).
    pub fn is_clean(&self) -> bool {
        self.factory_bad_blocks == 0
            && self.bitflip_per_read == 0.0
            && self.uncorrectable_per_read == 0.0
            && self.program_fail_per_op == 0.0
            && self.erase_fail_per_op == 0.0
            && self.endurance_erases == 0
    }
}
