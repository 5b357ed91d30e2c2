//! Page-cache settings (Linux's `vm.dirty_*` sysctls and the simulated clock).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A bad setting: the key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{key}: {expected}")]
pub struct SettingsError {
    pub key: &'static str,
    pub expected: &'static str,
}

/// Page cache and writeback, as Linux's defaults (mm/page-writeback.c).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheSettings {
    /// Memory the page cache may use (Linux's "dirtyable memory": free
    /// plus file-backed pages), which the dirty ratios are taken of.
    /// Default 256 MiB (an embedded board of the kind UBIFS runs on).
    pub memory_mib: u32,
    /// `vm.dirty_background_ratio`: background writeback starts when dirty
    /// pages exceed this percentage of `memory_mib` (default 10).
    pub dirty_background_ratio: u32,
    /// `vm.dirty_ratio`: a writer is throttled and writes back itself
    /// above this percentage (default 20).
    pub dirty_ratio: u32,
    /// `vm.dirty_writeback_centisecs`: the flusher wakes this often (500 = 5 s).
    pub dirty_writeback_centisecs: u32,
    /// `vm.dirty_expire_centisecs`: inodes dirty for longer are written by
    /// the periodic flush (3000 = 30 s).
    pub dirty_expire_centisecs: u32,
    /// Simulated CPU time of one file-system call (ns).
    pub cpu_ns_per_call: u64,
    /// Simulated CPU time per KiB copied between user and page cache (ns).
    pub cpu_ns_per_kib: u64,
    /// The largest read-ahead window (`/sys/block/<dev>/queue/read_ahead_kb`,
    /// default 128 = `VM_READAHEAD_PAGES`); 0 reads only the pages asked for.
    pub read_ahead_kb: u32,
}

impl Default for CacheSettings {
    fn default() -> Self {
        Self {
            memory_mib: 256,
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_writeback_centisecs: 500,
            dirty_expire_centisecs: 3000,
            cpu_ns_per_call: 1_000,
            cpu_ns_per_kib: 250,
            read_ahead_kb: 128,
        }
    }
}

impl CacheSettings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.memory_mib == 0 || self.memory_mib > 1 << 20 {
            return Err(SettingsError { key: "memory_mib", expected: "must be in 1..=1048576" });
        }
        if !(1..=100).contains(&self.dirty_background_ratio) {
            return Err(SettingsError { key: "dirty_background_ratio", expected: "must be in 1..=100" });
        }
        if !(self.dirty_background_ratio..=100).contains(&self.dirty_ratio) {
            return Err(SettingsError { key: "dirty_ratio", expected: "must be in dirty_background_ratio..=100" });
        }
        if !self.read_ahead_kb.is_multiple_of(4) || self.read_ahead_kb > 1 << 16 {
            return Err(SettingsError { key: "read_ahead_kb", expected: "must be a multiple of 4 in 0..=65536" });
        }
        if self.dirty_writeback_centisecs == 0 {
            return Err(SettingsError { key: "dirty_writeback_centisecs", expected: "must be at least 1" });
        }
        Ok(())
    }

    /// Pages of memory.
    pub fn memory_pages(&self) -> u64 {
        self.memory_mib as u64 * (1 << 20) / crate::PAGE_BYTES
    }

    /// Dirty pages above which background writeback starts
    /// (`domain_dirty_limits`: ratio × dirtyable memory / 100).
    pub fn background_thresh_pages(&self) -> u64 {
        self.memory_pages() * self.dirty_background_ratio as u64 / 100
    }

    /// Dirty pages above which writers write back themselves.
    pub fn dirty_thresh_pages(&self) -> u64 {
        self.memory_pages() * self.dirty_ratio as u64 / 100
    }

    /// Pages of the largest read-ahead window (`ra_pages`).
    pub fn read_ahead_pages(&self) -> u64 {
        self.read_ahead_kb as u64 * 1024 / crate::PAGE_BYTES
    }

    pub fn writeback_interval_ns(&self) -> u64 {
        self.dirty_writeback_centisecs as u64 * 10_000_000
    }

    pub fn expire_ns(&self) -> u64 {
        self.dirty_expire_centisecs as u64 * 10_000_000
    }
}
