//! File-system settings (the `[fs]` section).

use crate::compress::Compression;
use flashlab_hotdata::IdentifierSpec;
use flashlab_mtd::SettingsError;
use serde::{Deserialize, Serialize};

/// Where hot writes go when hot/cold journal heads are on (`hot_head_mapping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HotHeadMapping {
    /// Four heads: hot metadata, cold metadata, hot data, cold data (seed 000).
    #[default]
    Four,
    /// Three heads: metadata (hot and cold together), hot data, cold data.
    HotDataOnly,
    /// Three heads: one hot head for hot metadata and hot data, cold metadata, cold data.
    SharedHot,
}

/// flashfs tunables (fixed at format time except `strict` and the hot/cold switches).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsSettings {
    /// Index B-tree fan-out (UBIFS default 8).
    pub fanout: u32,
    /// Compression of data nodes.
    pub compression: Compression,
    /// LEBs of the journal log (reference nodes); 0 = UBIFS's default for
    /// the volume (`create_default_filesystem`). Fixed at format time.
    pub log_lebs: u32,
    /// Journal size in bud LEBs (UBIFS's `max_bud_bytes` / LEB size): a
    /// commit is required when a new bud would exceed it, a background
    /// commit starts at 13/16 of it. 0 = UBIFS's default for the volume
    /// (5 % of the LEBs, at most 32 MiB, less the log).
    pub journal_max_buds: u32,
    /// Run `check_invariants` after every operation (slow; for tests).
    pub strict: bool,
    /// Seed 000 optimisation 1: classify every write as hot or cold (with
    /// `hot_identifier`) and as metadata or data, and append hot writes to
    /// separate hot journal heads (`hot_head_mapping`). Default false.
    pub hot_journals: bool,
    /// Which hot heads exist when `hot_journals` is on. Default "four".
    pub hot_head_mapping: HotHeadMapping,
    /// Seed 000 optimisation 2: commit the hot journal heads only at every
    /// n-th commit (or when they fill, see `hot_journal_max_buds`); other
    /// commits commit the cold heads only. 0 or 1 = off (default 0). Without
    /// `hot_journals` a single hot-data head is used.
    pub delayed_hot_commit_every: u32,
    /// With delayed commit: commit the hot journal as soon as it holds this
    /// many buds (0 = half of the journal's bud limit).
    pub hot_journal_max_buds: u32,
    /// Seed 000 optimisation 3: keep a per-LEB bitmap of valid pages in the
    /// LEB properties (written with the LPT at every commit) and let GC read
    /// only valid pages. Default false.
    pub lpt_validity_bitmap: bool,
    /// Hot-data identifier used by the two hot/cold switches (default the
    /// seed's multi-hash table: K=4, 4-bit counters, decay every 5000 writes).
    pub hot_identifier: IdentifierSpec,
    /// Seed of the identifier's hash functions.
    pub hot_identifier_seed: u64,
    /// Size a `multi-hash` identifier to the journal at mount: decay every
    /// journal's worth of data writes and enough counters that collisions
    /// stay rare (the rule of `sized_multi_hash` in hot.rs). Default false
    /// (the parameters as given).
    pub hot_identifier_sized: bool,
    /// Content-free data: data nodes keep their headers, sizes and
    /// compressed lengths (compression still runs on the real bytes), but
    /// their payload is written as zeros, which the simulated flash does not
    /// store. Flash behaviour (pages, erases, GC) is unchanged; memory no
    /// longer grows with the data on flash; file reads return zeros. For
    /// long benchmarks only. Default false.
    pub elide_payload: bool,
    /// Check the CRC of every data node a file read (or a partial-block
    /// write's read) gets through the index, as UBIFS's `chk_data_crc`
    /// mount option does. Default false, as UBIFS's default
    /// `no_chk_data_crc` (`alloc_ubifs_info` sets `c->no_chk_data_crc = 1`):
    /// such reads check the header's magic, type and length only
    /// (`ubifs_check_node`, fs/ubifs/io.c), while the mount, replay, GC and
    /// every other node type always check the CRC, and so do file reads once
    /// the file system has failed (`ubifs_ro_mode`).
    pub chk_data_crc: bool,
    /// Run under the page cache of the shared file-system layer (Linux's
    /// writeback rules, simulated time): writes stay in memory until
    /// writeback, fsync, sync, unmount or memory pressure. Default true;
    /// false = every write goes straight into the journal (the old model).
    /// Used by the drivers (`fs bench`, the power-cut campaign, the
    /// reproduction); the file system itself ignores it.
    pub page_cache: bool,
    /// The page cache's settings (memory, dirty ratios, writeback times).
    pub cache: flashlab_vfs::CacheSettings,
}

impl Default for FsSettings {
    fn default() -> Self {
        Self {
            fanout: 8,
            compression: Compression::Lz4,
            log_lebs: 0,
            journal_max_buds: 0,
            strict: false,
            hot_journals: false,
            hot_head_mapping: HotHeadMapping::Four,
            delayed_hot_commit_every: 0,
            hot_journal_max_buds: 0,
            lpt_validity_bitmap: false,
            hot_identifier: IdentifierSpec::default(),
            hot_identifier_seed: 0,
            hot_identifier_sized: false,
            elide_payload: false,
            chk_data_crc: false,
            page_cache: true,
            cache: flashlab_vfs::CacheSettings::default(),
        }
    }
}

impl FsSettings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if !(3..=64).contains(&self.fanout) {
            return Err(SettingsError::new("fanout", "must be in 3..=64"));
        }
        if self.log_lebs != 0 && !(2..=64).contains(&self.log_lebs) {
            return Err(SettingsError::new("log_lebs", "must be 0 (UBIFS's default) or in 2..=64"));
        }
        if self.journal_max_buds == 1 {
            return Err(SettingsError::new("journal_max_buds", "must be 0 (auto) or at least 2"));
        }
        if self.delayed_hot_commit_every > 1_000_000 {
            return Err(SettingsError::new("delayed_hot_commit_every", "must be at most 1000000"));
        }
        if let Err(e) = self.cache.validate() {
            return Err(SettingsError::new("cache", e.to_string()));
        }
        if let Err(e) = self.hot_identifier.validate() {
            return Err(SettingsError::new("hot_identifier", e.to_string()));
        }
        Ok(())
    }

    /// True when the hot journal's commit is delayed.
    pub fn delay_on(&self) -> bool {
        self.delayed_hot_commit_every >= 2
    }

    /// True when writes are classified hot/cold at all.
    pub fn classify_on(&self) -> bool {
        self.hot_journals || self.delay_on()
    }
}
