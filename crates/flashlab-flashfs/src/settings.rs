//! File-system settings (the `[fs]` section).

use crate::compress::Compression;
use flashlab_mtd::SettingsError;
use serde::{Deserialize, Serialize};

/// flashfs tunables (fixed at format time except `strict`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsSettings {
    /// Index B-tree fan-out (UBIFS default 8).
    pub fanout: u32,
    /// Compression of data nodes.
    pub compression: Compression,
    /// LEBs of the journal log (reference nodes).
    pub log_lebs: u32,
    /// Commit when this many buds are in the journal (0 = a quarter of
    /// the main area).
    pub journal_max_buds: u32,
    /// Run `check_invariants` after every operation (slow; for tests).
    pub strict: bool,
}

impl Default for FsSettings {
    fn default() -> Self {
        Self { fanout: 8, compression: Compression::Lz4, log_lebs: 4, journal_max_buds: 0, strict: false }
    }
}

impl FsSettings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if !(3..=64).contains(&self.fanout) {
            return Err(SettingsError::new("fanout", "must be in 3..=64"));
        }
        if !(2..=64).contains(&self.log_lebs) {
            return Err(SettingsError::new("log_lebs", "must be in 2..=64"));
        }
        if self.journal_max_buds == 1 {
            return Err(SettingsError::new("journal_max_buds", "must be 0 (auto) or at least 2"));
        }
        Ok(())
    }
}
