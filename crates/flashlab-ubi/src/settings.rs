//! UBI settings (the `[ubi]` part of the `[flash]` configuration).

use flashlab_mtd::SettingsError;
use serde::{Deserialize, Serialize};

/// UBI tunables.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct UbiSettings {
    /// Move a static LEB when max free EC - min used EC reaches this
    /// (Linux MTD_UBI_WL_THRESHOLD, default 4096).
    pub wl_threshold_erases: u64,
    /// Erase operations a freshly written PEB is protected from wear
    /// levelling (Linux UBI_PROT_QUEUE_LEN = 10).
    pub protection_erases: u64,
    /// PEBs reserved for bad-block handling per 1024 PEBs (MTD_UBI_BEB_LIMIT).
    pub bad_reserve_per_1024: u32,
    /// Relocate an LEB after a read reported corrected bit-flips.
    pub scrub: bool,
    /// Read retries on an uncorrectable ECC error.
    pub read_retries: u32,
    /// Keep a fastmap (mapping copy + pool) so attach need not scan.
    pub fastmap: bool,
    /// PEBs in the fastmap pool (at most 256).
    pub fastmap_pool_pebs: u32,
    /// PEBs at the start of the device where the fastmap anchor lives
    /// (scanned at fastmap attach; Linux: 64).
    pub fastmap_anchor_pebs: u32,
}

impl Default for UbiSettings {
    fn default() -> Self {
        Self {
            wl_threshold_erases: 4096,
            protection_erases: 10,
            bad_reserve_per_1024: 20,
            scrub: true,
            read_retries: 3,
            fastmap: false,
            fastmap_pool_pebs: 256,
            fastmap_anchor_pebs: 64,
        }
    }
}

impl UbiSettings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.wl_threshold_erases == 0 {
            return Err(SettingsError::new("wl_threshold_erases", "must be at least 1"));
        }
        if self.bad_reserve_per_1024 > 512 {
            return Err(SettingsError::new("bad_reserve_per_1024", "must be at most 512"));
        }
        if self.fastmap_pool_pebs == 0 || self.fastmap_pool_pebs > 256 {
            return Err(SettingsError::new("fastmap_pool_pebs", "must be in 1..=256"));
        }
        if self.fastmap_anchor_pebs < 4 {
            return Err(SettingsError::new("fastmap_anchor_pebs", "must be at least 4"));
        }
        Ok(())
    }
}
