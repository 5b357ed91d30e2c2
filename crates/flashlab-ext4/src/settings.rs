//! `[fs.ext4]`: the ext4 model's settings (mke2fs and mount options).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A bad setting: the key (under `fs.ext4`) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("fs.ext4.{key}: {expected}")]
pub struct SettingsError {
    pub key: &'static str,
    pub expected: String,
}

/// What the model keeps of file contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Content {
    /// Nothing: reads return zeros (fastest).
    None,
    /// A 64-bit hash of each data block (reads return zeros; tags can be checked).
    #[default]
    Tags,
    /// Every byte (reads return what was written).
    Bytes,
}

/// The ext4 model's settings, mke2fs's and the mount's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ext4Settings {
    /// Journal size (`mke2fs -J size=`), default 128 MiB (mke2fs's size for
    /// file systems above 128 GiB, the size seed 004 names).
    pub journal_mib: u32,
    /// jbd2 commit interval (`-o commit=`), default 5 s.
    pub commit_interval_s: u32,
    /// Online discard (`-o discard`): freed extents are trimmed after the
    /// transaction that freed them commits.
    pub discard: bool,
    /// Block-group size (`mke2fs -g`), 1..=128 MiB; 128 (32768 blocks, one
    /// bitmap block) is ext4's.
    pub group_mib: u32,
    /// Bytes of space per inode (`mke2fs -i`), in KiB; default 16.
    pub inode_ratio_kib: u32,
    /// Blocks reserved for root (`mke2fs -m`), percent; default 5.
    pub reserved_percent: u32,
    /// Journaled metadata left dirty after its commit is written home by the
    /// flusher after this long (`dirty_expire_centisecs` of the block
    /// device's inode), default 30 s; 0 = only checkpoints write it home.
    pub metadata_expire_s: u32,
    /// Requests the block layer keeps in flight before a submitter waits
    /// (the device's queue depth; 32 = SATA NCQ).
    pub queue_depth: u32,
    /// What is kept of file contents.
    pub content: Content,
    /// Check every invariant after each commit and sync (slow).
    pub strict: bool,
    /// The directory-hash seed (`mke2fs -E hash_seed=UUID`), which decides
    /// the group of each top-level directory (`find_group_orlov`). mke2fs
    /// draws a random one; the model's default is fixed (the one
    /// `scripts/ext4-kernel-check` gives mke2fs).
    pub hash_seed: String,
    /// Metadata (bitmaps, inode tables, directories, extent trees) is read
    /// from the device at first use after mount and after `drop_caches`
    /// (the buffer cache, docs/host-fs.md); false keeps it all in memory.
    pub metadata_reads: bool,
    /// Inode-table blocks read ahead with an inode's (`-o
    /// inode_readahead_blks=`, default 32; a power of two, 0 = none).
    pub inode_readahead_blks: u32,
    /// Block groups per flex group (`mke2fs -G`; mke2fs's ext4 default 16,
    /// a power of two); 1 lays out and allocates without `flex_bg` (`-O
    /// ^flex_bg`).
    pub flex_bg_groups: u32,
}

impl Default for Ext4Settings {
    fn default() -> Self {
        Self {
            journal_mib: 128,
            commit_interval_s: 5,
            discard: false,
            group_mib: 128,
            inode_ratio_kib: 16,
            reserved_percent: 5,
            metadata_expire_s: 30,
            queue_depth: 32,
            content: Content::Tags,
            strict: false,
            hash_seed: DEFAULT_HASH_SEED.to_string(),
            metadata_reads: true,
            inode_readahead_blks: 32,
            flex_bg_groups: 16,
        }
    }
}

/// The default `hash_seed`.
pub const DEFAULT_HASH_SEED: &str = "8f6b1c2e-4d3a-4b5c-9e7f-0a1b2c3d4e5f";

fn bad(key: &'static str, expected: &str) -> SettingsError {
    SettingsError { key, expected: expected.to_string() }
}

impl Ext4Settings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if !(4..=40_000).contains(&self.journal_mib) {
            return Err(bad("journal_mib", "must be in 4..=40000 (mke2fs: 1024 to 10 240 000 blocks)"));
        }
        if !(1..=3600).contains(&self.commit_interval_s) {
            return Err(bad("commit_interval_s", "must be in 1..=3600"));
        }
        if !(1..=128).contains(&self.group_mib) {
            return Err(bad("group_mib", "must be in 1..=128 (one bitmap block maps at most 32768 blocks)"));
        }
        if !(4..=1024).contains(&self.inode_ratio_kib) || !self.inode_ratio_kib.is_power_of_two() {
            return Err(bad("inode_ratio_kib", "must be a power of two in 4..=1024"));
        }
        if self.reserved_percent > 50 {
            return Err(bad("reserved_percent", "must be in 0..=50"));
        }
        if self.metadata_expire_s > 3600 {
            return Err(bad("metadata_expire_s", "must be in 0..=3600"));
        }
        if !(1..=65536).contains(&self.queue_depth) {
            return Err(bad("queue_depth", "must be in 1..=65536"));
        }
        // ext4's parse_options: a power of two up to 2^30.
        if self.inode_readahead_blks > 1 << 30
            || (self.inode_readahead_blks != 0 && !self.inode_readahead_blks.is_power_of_two())
        {
            return Err(bad("inode_readahead_blks", "must be 0 or a power of two up to 1073741824"));
        }
        // mke2fs -G: a power of two (1 = no flex_bg here).
        if !(1..=1 << 16).contains(&self.flex_bg_groups) || !self.flex_bg_groups.is_power_of_two() {
            return Err(bad("flex_bg_groups", "must be a power of two in 1..=65536 (1 = no flex_bg)"));
        }
        if crate::dirhash::parse_seed(&self.hash_seed).is_none() {
            return Err(bad("hash_seed", "must be a UUID such as 8f6b1c2e-4d3a-4b5c-9e7f-0a1b2c3d4e5f"));
        }
        Ok(())
    }
}
