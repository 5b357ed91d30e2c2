//! `[fs]` and `[fs.workload]`: the file system and file workload of
//! `flashlab fs bench`, resolved into `flashlab_vfs::workload::BenchSpec`
//! (the vfs crate owns the typed settings). The file-system kind is checked
//! by the CLI, which holds the closed list of models it can build.

use crate::raw::RawConfig;
use crate::resolve::one_of;
use crate::ConfigError;
use flashlab_vfs::workload::{BenchSpec, IozoneSpec, Workload, WorkloadKind, WorkloadSpec};
use flashlab_vfs::CacheSettings;
use serde::{Deserialize, Serialize};

/// `[fs]`: which file system `fs bench` formats, and its workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawFs {
    /// `flashfs` or `jffs2` on the raw flash of `[flashfs.flash]` (or on the
    /// SSD through block2mtd, `device`); the host file systems on the SSD of
    /// `[device]`, `[ftl]` and `[timing]`.
    pub kind: String,
    /// Where flashfs and JFFS2 live: `nand` (the raw flash of
    /// `[flashfs.flash]`) or `block2mtd` (the SSD, as `[block2mtd]` says).
    pub device: String,
    /// The page cache of the host file systems (flashfs uses `flashfs.fs.cache`).
    pub cache: CacheSettings,
    pub workload: RawFsWorkload,
    /// `[fs.ext4]`: the ext4 model (its crate owns the settings).
    pub ext4: flashlab_ext4::Ext4Settings,
    /// `[fs.f2fs]`: the F2FS-like model's mkfs and mount options.
    pub f2fs: flashlab_f2fs::F2fsSettings,
}

impl Default for RawFs {
    fn default() -> Self {
        Self {
            kind: "flashfs".into(),
            device: "nand".into(),
            cache: CacheSettings::default(),
            workload: RawFsWorkload::default(),
            ext4: flashlab_ext4::Ext4Settings::default(),
            f2fs: flashlab_f2fs::F2fsSettings::default(),
        }
    }
}

/// `[fs.workload]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawFsWorkload {
    /// `iozone`, `fileserver`, `varmail`, `dd` or `untar`.
    pub kind: String,
    /// Device utilisation before the workload, percent of the empty file
    /// system's available space (filler files plus the workload's files).
    pub utilisation: f64,
    /// IOZone: the test file; fileserver and varmail: the mean file size.
    pub file_kib: u64,
    /// IOZone: the request (record) size.
    pub request_bytes: u32,
    /// IOZone: share of the records randomly updated after creation.
    pub update_fraction: f64,
    /// fileserver, varmail: files of the fileset.
    pub files: u32,
    /// fileserver, varmail: largest random append.
    pub append_kib: u32,
    /// fileserver, varmail: interleaved streams.
    pub threads: u32,
    /// fileserver, varmail, dd, untar: stop after this much written.
    pub write_target_mib: u64,
    pub seed: u64,
}

impl Default for RawFsWorkload {
    fn default() -> Self {
        Self {
            kind: "iozone".into(),
            utilisation: 50.0,
            file_kib: 512,
            request_bytes: 4096,
            update_fraction: 0.25,
            files: 16,
            append_kib: 16,
            threads: 4,
            write_target_mib: 1,
            seed: 1,
        }
    }
}

/// Where a flash file system (flashfs, JFFS2) lives: `[fs] device`.
#[derive(Clone, Debug, PartialEq)]
pub enum FsDevice {
    /// The raw NAND of `[flashfs.flash]`.
    Nand,
    /// An MTD on the SSD of `[device]`, `[ftl]`, `[timing]` (Linux's block2mtd).
    Block2Mtd(flashlab_mtd::Block2MtdSettings),
}

const DEVICES: [(&str, bool); 2] = [("nand", false), ("block2mtd", true)];

/// The workloads by name.
const KINDS: [(&str, Option<WorkloadKind>); 5] = [
    ("iozone", None),
    ("fileserver", Some(WorkloadKind::Fileserver)),
    ("varmail", Some(WorkloadKind::Varmail)),
    ("dd", Some(WorkloadKind::Dd)),
    ("untar", Some(WorkloadKind::Untar)),
];

fn at_least(key: &'static str, v: u64, min: u64) -> Result<(), ConfigError> {
    if v < min {
        return Err(ConfigError::invalid(key, v, format!("expected at least {min}")));
    }
    Ok(())
}

fn in_range(key: &'static str, v: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if !(min..=max).contains(&v) {
        return Err(ConfigError::invalid(key, v, format!("expected {min} to {max}")));
    }
    Ok(())
}

impl RawConfig {
    /// `[fs] device` and, for `block2mtd`, `[block2mtd]` checked against the
    /// SSD of `ssd` (geometry errors name the `block2mtd.*` key).
    pub fn resolve_fs_device(&self, ssd: &flashlab_sim::Settings) -> Result<FsDevice, ConfigError> {
        if !one_of("fs.device", &self.fs.device, &DEVICES)? {
            return Ok(FsDevice::Nand);
        }
        let b = &self.block2mtd;
        b.nand_settings(ssd.ftl.logical_pages * ssd.page_bytes(), ssd.page_bytes())
            .map_err(|e| ConfigError::Setting { key: format!("block2mtd.{}", e.field), message: e.reason })?;
        Ok(FsDevice::Block2Mtd(b.clone()))
    }

    /// `[fs.workload]` validated into the run of `fs bench`.
    pub fn resolve_fs_bench(&self) -> Result<BenchSpec, ConfigError> {
        let w = &self.fs.workload;
        let kind = one_of("fs.workload.kind", &w.kind, &KINDS)?;
        let u = w.utilisation;
        if !(u > 0.0 && u < 100.0) {
            return Err(ConfigError::invalid("fs.workload.utilisation", u, "expected a percentage in (0, 100)"));
        }
        // A file (IOZone) up to 1 PiB; a fileset file (filebench) below 4 GiB.
        let max_kib = if kind.is_some() { u32::MAX as u64 / 1024 } else { 1 << 40 };
        in_range("fs.workload.file_kib", w.file_kib, 1, max_kib)?;
        let workload = match kind {
            None => {
                at_least("fs.workload.request_bytes", w.request_bytes as u64, 1)?;
                if w.request_bytes as u64 > w.file_kib * 1024 {
                    return Err(ConfigError::invalid(
                        "fs.workload.request_bytes",
                        w.request_bytes,
                        format!("expected at most fs.workload.file_kib = {} KiB", w.file_kib),
                    ));
                }
                if !(0.0..=1.0).contains(&w.update_fraction) {
                    return Err(ConfigError::invalid(
                        "fs.workload.update_fraction",
                        w.update_fraction,
                        "expected a fraction from 0 to 1",
                    ));
                }
                Workload::Iozone(IozoneSpec {
                    file_bytes: w.file_kib * 1024,
                    request_bytes: w.request_bytes,
                    update_fraction: w.update_fraction,
                    seed: w.seed,
                })
            }
            Some(kind) => {
                in_range("fs.workload.files", w.files as u64, 1, 1 << 24)?;
                in_range("fs.workload.threads", w.threads as u64, 1, 4096)?;
                in_range("fs.workload.append_kib", w.append_kib as u64, 1, u32::MAX as u64 / 1024)?;
                in_range("fs.workload.write_target_mib", w.write_target_mib, 1, 1 << 30)?;
                Workload::Files(WorkloadSpec {
                    kind,
                    files: w.files,
                    file_bytes: (w.file_kib * 1024) as u32,
                    append_bytes: w.append_kib * 1024,
                    threads: w.threads,
                    write_target_bytes: w.write_target_mib << 20,
                    seed: w.seed,
                })
            }
        };
        self.fs.cache.validate().map_err(|e| ConfigError::Setting {
            key: format!("fs.cache.{}", e.key),
            message: e.expected.to_string(),
        })?;
        self.fs
            .ext4
            .validate()
            .map_err(|e| ConfigError::Setting { key: format!("fs.ext4.{}", e.key), message: e.expected })?;
        self.fs
            .f2fs
            .validate()
            .map_err(|e| ConfigError::Setting { key: format!("fs.f2fs.{}", e.key), message: e.expected })?;
        Ok(BenchSpec { workload, utilisation_pct: u })
    }
}
