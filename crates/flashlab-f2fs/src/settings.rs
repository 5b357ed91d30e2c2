//! `[fs.f2fs]`: the F2FS model's settings (mkfs.f2fs options and mount
//! options / sysfs tunables), raw TOML with unknown keys refused, validated
//! with the offending field named.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A bad setting: the key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("fs.f2fs.{key}: {expected}")]
pub struct SettingsError {
    pub key: &'static str,
    pub expected: String,
}

/// In-place-update policy (`/sys/fs/f2fs/<dev>/ipu_policy`, segment.h
/// `F2FS_IPU_*`). The kernel's default is `fsync` (`BIT(F2FS_IPU_FSYNC)`
/// set in `f2fs_build_segment_manager`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IpuPolicy {
    /// Never update in place (`mode=lfs`).
    None,
    /// `F2FS_IPU_FORCE`: every rewrite in place.
    Force,
    /// `F2FS_IPU_SSR`: in place while `f2fs_need_SSR`.
    Ssr,
    /// `F2FS_IPU_UTIL`: in place while utilisation ≥ `min_ipu_util`.
    Util,
    /// `F2FS_IPU_SSR_UTIL`: both conditions.
    SsrUtil,
    /// `F2FS_IPU_FSYNC`: in place for pages an fsync writes when the file
    /// has at most `min_fsync_blocks` dirty pages (`FI_NEED_IPU`).
    Fsync,
}

impl IpuPolicy {
    pub const NAMES: &'static str = "none, force, ssr, util, ssr-util, fsync";
}

/// Whose SSR, foreground-cleaning and in-place-update thresholds apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum KernelRules {
    /// Today's fs/f2fs: `f2fs_need_SSR` (free sections ≤ dirty-node sections
    /// plus 2 × dirty-dentry sections plus `min_ssr_sections` plus reserved
    /// sections), `has_not_enough_free_secs` with the dirty node and dentry
    /// sections, data logs' SSR falling back to other data types, `ipu_policy`.
    #[default]
    #[serde(rename = "current")]
    Current,
    /// F2FS as merged in Linux 3.8 (segment.h): `need_SSR` is free sections
    /// < overprovision sections; `has_not_enough_free_secs` is free sections
    /// ≤ reserved sections; SSR only into segments of the log's own type;
    /// `need_inplace_update` never true (`MIN_IPU_UTIL` 100), so
    /// `ipu_policy` is ignored.
    #[serde(rename = "3.8")]
    Linux3_8,
}

impl KernelRules {
    pub const NAMES: &'static str = "current, 3.8";
}

/// What the model keeps of file contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContentMode {
    /// 8 bytes and a length per block: a read returns the first 8 bytes
    /// of the page written repeated up to its length (enough for oracle
    /// tests with tag-filled pages; fast, 10 bytes per block).
    Tags,
    /// Every byte (4 KiB of memory per block of the volume).
    Bytes,
}

/// The F2FS model's settings.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct F2fsSettings {
    /// mkfs.f2fs `-s`: segments per section (the unit of cleaning).
    pub segs_per_sec: u32,
    /// mkfs.f2fs `-z`: sections per zone (logs open sections in distinct zones).
    pub secs_per_zone: u32,
    /// mkfs.f2fs `-o`: overprovision ratio in percent; 0 (the default) = the
    /// ratio `get_best_overprovision` picks (`mkfs_tools = "current"`, as
    /// mkfs.f2fs does when `c.overprovision == 0`) or 5 (`"1.1"`, where it
    /// must be a whole number: atoi).
    pub overprovision_ratio: f64,
    /// Which f2fs-tools' mkfs.f2fs computes the reserved and overprovision
    /// segments: `current` or `1.1` (f2fs-tools v1.0.0–v1.1.0, 2012).
    pub mkfs_tools: crate::layout::MkfsTools,
    /// Whose SSR, cleaning and in-place-update thresholds: `current` or `3.8`.
    pub kernel: KernelRules,
    /// Mount option `checkpoint` interval (`cp_interval`, default 60 s).
    pub cp_interval_s: u32,
    /// Background cleaning on an idle timer (`background_gc=on`).
    pub bg_gc: bool,
    /// `gc_min_sleep_time` (ms, default 30 000).
    pub gc_min_sleep_ms: u64,
    /// `gc_max_sleep_time` (ms, default 60 000).
    pub gc_max_sleep_ms: u64,
    /// `gc_no_gc_sleep_time` (ms, default 300 000).
    pub gc_no_gc_sleep_ms: u64,
    /// `idle_interval` (s, default 5): no I/O for this long = idle.
    pub idle_interval_s: u32,
    /// Mount option `discard`: prefree segments TRIMmed at checkpoint.
    pub discard: bool,
    /// `ipu_policy`.
    pub ipu_policy: IpuPolicy,
    /// `min_ipu_util` (percent, default 70).
    pub min_ipu_util: u32,
    /// `min_fsync_blocks` (default 8).
    pub min_fsync_blocks: u32,
    /// File contents kept: `tags` (default) or `bytes`.
    pub content: ContentMode,
    /// Requests the model keeps in flight before a writer waits.
    pub queue_depth: u32,
    /// Largest merged write request, in 4 KiB blocks (`BIO_MAX_VECS` = 256).
    pub max_bio_blocks: u32,
    /// Check the invariants after every call (slow).
    pub strict: bool,
    /// Node, NAT and dentry blocks are read from the device at first use
    /// after mount and after `drop_caches` (docs/host-fs.md); false keeps
    /// them all in memory.
    pub metadata_reads: bool,
}

impl Default for F2fsSettings {
    fn default() -> Self {
        Self {
            segs_per_sec: 1,
            secs_per_zone: 1,
            overprovision_ratio: 0.0,
            mkfs_tools: crate::layout::MkfsTools::Current,
            kernel: KernelRules::Current,
            cp_interval_s: 60,
            bg_gc: true,
            gc_min_sleep_ms: 30_000,
            gc_max_sleep_ms: 60_000,
            gc_no_gc_sleep_ms: 300_000,
            idle_interval_s: 5,
            discard: true,
            ipu_policy: IpuPolicy::Fsync,
            min_ipu_util: 70,
            min_fsync_blocks: 8,
            content: ContentMode::Tags,
            queue_depth: 32,
            max_bio_blocks: 256,
            strict: false,
            metadata_reads: true,
        }
    }
}

fn bad(key: &'static str, expected: &str) -> SettingsError {
    SettingsError { key, expected: expected.to_string() }
}

impl F2fsSettings {
    /// The `-o` ratio given, if any (0 leaves it to mkfs).
    pub fn overprovision(&self) -> Option<f64> {
        (self.overprovision_ratio != 0.0).then_some(self.overprovision_ratio)
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if !self.segs_per_sec.is_power_of_two() || self.segs_per_sec > 512 {
            return Err(bad("segs_per_sec", "must be a power of two in 1..=512"));
        }
        if self.secs_per_zone == 0 || self.secs_per_zone > 64 {
            return Err(bad("secs_per_zone", "must be in 1..=64"));
        }
        if let Some(r) = self.overprovision() {
            if !(r.is_finite() && r > 0.0 && r < 100.0) {
                return Err(bad("overprovision_ratio", "must be 0 (mkfs's choice) or a percentage in (0, 100)"));
            }
            if self.mkfs_tools == crate::layout::MkfsTools::V1_1 && (r.fract() != 0.0 || r < 1.0) {
                return Err(bad(
                    "overprovision_ratio",
                    "must be a whole percentage in 1..=99 with mkfs_tools = \"1.1\"",
                ));
            }
        }
        if self.cp_interval_s == 0 {
            return Err(bad("cp_interval_s", "must be at least 1"));
        }
        if self.gc_min_sleep_ms == 0 || self.gc_min_sleep_ms > self.gc_max_sleep_ms {
            return Err(bad("gc_min_sleep_ms", "must be in 1..=gc_max_sleep_ms"));
        }
        if self.gc_no_gc_sleep_ms == 0 {
            return Err(bad("gc_no_gc_sleep_ms", "must be at least 1"));
        }
        if self.min_ipu_util > 100 {
            return Err(bad("min_ipu_util", "must be a percentage in 0..=100"));
        }
        if self.queue_depth == 0 || self.queue_depth > 1024 {
            return Err(bad("queue_depth", "must be in 1..=1024"));
        }
        if self.max_bio_blocks == 0 || self.max_bio_blocks > 4096 {
            return Err(bad("max_bio_blocks", "must be in 1..=4096"));
        }
        Ok(())
    }
}
