//! `flashlab fs bench`: format the file system named by `[fs] kind`, run the
//! `[fs.workload]` on it with [`run_workload`], print the phases and write
//! the result object.
//!
//! Adding a file system: a variant of [`FsKind`], its name in `FsKind::NAMES`,
//! its answer in `FsKind::on_ssd` and one arm in [`run_kind`] that builds the
//! model (on the SSD of `flashlab_sim::Settings`, or on raw flash) and hands it
//! to [`bench`]. `reproduce f2fs-ext4-ftl` picks up `ext4` and `f2fs` from here.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::output::{check_output, table, write_json};
use anyhow::Context;
use flashlab_config::{FsDevice, RawConfig, Settings};
use flashlab_flashfs::jffs2::Jffs2;
use flashlab_flashfs::{Fs, OnFlash, PageCache};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::Ubi;
use flashlab_vfs::workload::{run_workload, BenchReport, BenchSpec, Measured};
use flashlab_vfs::FileSystem;
use serde_json::{json, Value};
use std::time::Instant;

/// The file systems `fs bench` can format: a closed list chosen by `fs.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsKind {
    /// flashfs (UBIFS-like) on UBI on the raw flash of `[flashfs.flash]`,
    /// or with `[fs] device = "block2mtd"` on the SSD.
    Flashfs,
    /// The JFFS2 baseline on the raw flash of `[flashfs.flash]`, or on the SSD.
    Jffs2,
    /// The ext4-like model (`[fs.ext4]`) under the page cache on the SSD.
    Ext4,
    /// The F2FS-like model (`[fs.f2fs]`) under the page cache (`[fs.cache]`) on the SSD.
    F2fs,
}

impl FsKind {
    pub const NAMES: [(&'static str, FsKind); 4] =
        [("flashfs", FsKind::Flashfs), ("jffs2", FsKind::Jffs2), ("ext4", FsKind::Ext4), ("f2fs", FsKind::F2fs)];

    /// The name `fs.kind` gives this kind.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).expect("every kind is named")
    }

    /// Runs on the simulated SSD (`[device]`, `[ftl]`, `[timing]`) as a block
    /// device rather than on an MTD (raw flash, or the SSD through block2mtd).
    pub fn on_ssd(self) -> bool {
        match self {
            FsKind::Flashfs | FsKind::Jffs2 => false,
            FsKind::Ext4 | FsKind::F2fs => true,
        }
    }

    /// The kind named `name`; an unknown name lists the valid ones.
    pub fn from_name(name: &str) -> anyhow::Result<FsKind> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k).ok_or_else(|| {
            let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
            anyhow::anyhow!("fs.kind = {name:?}: expected one of: {}", names.join(", "))
        })
    }
}

/// The model's result: the workload's report and the device's full result.
pub struct FsBenchOutcome {
    pub report: BenchReport,
    pub device: Value,
}

/// What becomes of the model once its result is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtEnd {
    /// Dropped: its memory goes back (a process running many models).
    Drop,
    /// Left to the process's exit: for a command that ends right after one run
    /// (`fs bench`, a `flashlab bench` case), which then does not spend time
    /// unmapping and freeing the flash contents, the page cache and the index
    /// (≈ 7 % of `fs-iozone-flashfs`). Results are the same; only the edge may
    /// choose this, never a library.
    Leak,
}

/// Runs `spec` on a formatted model: the generic part every arm shares.
pub fn bench<F>(mut fs: F, spec: &BenchSpec, end: AtEnd) -> anyhow::Result<FsBenchOutcome>
where
    F: FileSystem + Measured,
    F::Error: Send + Sync + 'static,
{
    let report = run_workload(&mut fs, spec)?;
    let out = FsBenchOutcome { report, device: fs.device_result() };
    if end == AtEnd::Leak {
        std::mem::forget(fs);
    }
    Ok(out)
}

/// The MTD under flashfs and JFFS2 (`[fs] device`): the raw flash of
/// `[flashfs.flash]`, or block2mtd on the SSD of `[device]`, `[ftl]`, `[timing]`.
pub fn flash_device(raw: &RawConfig, ssd: &Settings, flash: &NandSettings) -> anyhow::Result<Nand> {
    match raw.resolve_fs_device(ssd)? {
        FsDevice::Nand => Ok(Nand::new(flash.clone())),
        FsDevice::Block2Mtd(b) => {
            let dev = flashlab_sim::Ssd::new(ssd.clone()).context("block2mtd: the SSD of [device], [ftl], [timing]")?;
            Nand::on_ssd(dev, &b).map_err(|e| anyhow::anyhow!("block2mtd.{}: {}", e.field, e.reason))
        }
    }
}

/// A one-line error unless `[fs] device` is valid for `kind` (block2mtd
/// carries the MTD file systems only) and its geometry fits the SSD.
pub fn check_device(kind: FsKind, raw: &RawConfig, ssd: &Settings) -> anyhow::Result<()> {
    let dev = raw.resolve_fs_device(ssd)?;
    if kind.on_ssd() && dev != FsDevice::Nand {
        anyhow::bail!(
            "fs.device = {:?}: expected \"nand\" for fs.kind = {:?} (block2mtd carries flashfs and jffs2; {:?} runs on the SSD itself)",
            raw.fs.device,
            raw.fs.kind,
            raw.fs.kind
        );
    }
    Ok(())
}

/// A one-line error unless `[fs] device` is `nand`: `command` needs raw NAND (`why`).
pub fn raw_nand_only(raw: &RawConfig, ssd: &Settings, command: &str, why: &str) -> anyhow::Result<()> {
    if raw.resolve_fs_device(ssd)? != FsDevice::Nand {
        anyhow::bail!("fs.device = {:?}: {command} runs on raw NAND only (\"nand\"): {why}", raw.fs.device);
    }
    Ok(())
}

/// Builds the file system of `kind` and runs the workload on it.
pub fn run_kind(kind: FsKind, raw: &RawConfig, ssd: &Settings, spec: &BenchSpec) -> anyhow::Result<FsBenchOutcome> {
    run_kind_then(kind, raw, ssd, spec, AtEnd::Drop)
}

/// [`run_kind`], with the model dropped or left to the process's exit (`end`).
pub fn run_kind_then(
    kind: FsKind,
    raw: &RawConfig,
    ssd: &Settings,
    spec: &BenchSpec,
    end: AtEnd,
) -> anyhow::Result<FsBenchOutcome> {
    check_device(kind, raw, ssd)?;
    match kind {
        FsKind::Flashfs => {
            let c = raw.resolve_flashfs()?;
            let mut ubi = Ubi::format(flash_device(raw, ssd, &c.flash)?, c.ubi.clone())
                .map_err(|f| anyhow::anyhow!("flashfs.ubi: UBI format failed: {}", f.error))?;
            let vol = ubi.create_volume("flashfs", 0).context("flashfs.ubi: creating the volume")?;
            let fs = Fs::format(ubi, vol, c.fs.clone())
                .map_err(|f| anyhow::anyhow!("flashfs.fs: format failed: {}", f.error))?;
            if c.fs.page_cache {
                bench(PageCache::<Fs>::wrap(fs), spec, end)
            } else {
                bench(fs, spec, end)
            }
        }
        FsKind::Jffs2 => {
            let c = raw.resolve_flashfs()?;
            let fs = Jffs2::format(flash_device(raw, ssd, &c.flash)?, raw.fs.workload.seed, c.fs.compression)
                .context("jffs2: format failed")?;
            bench(fs, spec, end)
        }
        FsKind::Ext4 => {
            let dev = flashlab_sim::Ssd::new(ssd.clone()).context("fs.ext4: building the SSD")?;
            let fs = flashlab_ext4::Ext4::format(dev, raw.fs.ext4.clone()).context("fs.ext4: mkfs failed")?;
            bench(flashlab_vfs::PageCache::new(fs, raw.fs.cache.clone(), 0), spec, end)
        }
        FsKind::F2fs => {
            let dev = flashlab_sim::Ssd::new(ssd.clone()).context("the SSD of [device], [ftl], [timing]")?;
            let fs = flashlab_f2fs::F2fs::format(dev, raw.fs.f2fs.clone()).context("f2fs: mkfs failed")?;
            bench(PageCache::new(fs, raw.fs.cache.clone(), 0), spec, end)
        }
    }
}

/// The result object: the report's keys, then `fs_kind`, `device` and the config.
pub fn result_object(kind: &str, o: &FsBenchOutcome, raw: &RawConfig, wall_s: f64) -> Value {
    let mut v = serde_json::to_value(&o.report).expect("report serialises");
    v["fs_kind"] = json!(kind);
    v["fs_device"] = json!(raw.fs.device);
    v["device"] = o.device.clone();
    v["wall_time_s"] = json!(wall_s);
    v["config"] = serde_json::to_value(raw).expect("config serialises");
    v
}

pub fn fs_bench(a: ConfigArgs) -> anyhow::Result<()> {
    let (raw, ssd) = load_config(&a.config, &a.sets)?;
    let kind = FsKind::from_name(&raw.fs.kind)?;
    let spec = raw.resolve_fs_bench()?;
    check_device(kind, &raw, &ssd)?;
    check_output(a.json.as_deref(), "--json")?;
    let start = Instant::now();
    // The process ends after this one run: the model is left to its exit.
    let out = run_kind_then(kind, &raw, &ssd, &spec, AtEnd::Leak)?;
    let wall = start.elapsed().as_secs_f64();
    if !a.json_to_stdout() {
        print_report(&raw.fs.kind, &raw.fs.device, &out.report);
    }
    if let Some(p) = &a.json {
        write_json(p, &result_object(&raw.fs.kind, &out, &raw, wall))?;
    }
    Ok(())
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn print_report(kind: &str, device: &str, r: &BenchReport) {
    let w = &r.fs_writes;
    table(&[
        (
            "file system",
            if device == "block2mtd" { format!("{kind} on the SSD through block2mtd") } else { kind.into() },
        ),
        ("workload", format!("{} at {}% utilisation", r.workload, r.utilisation_pct)),
        ("app MiB read / written", format!("{:.1} / {:.1}", mib(r.app_bytes_read), mib(r.app_bytes_written))),
        (
            "fs MiB written",
            format!(
                "{:.1} (data {:.1}, metadata {:.1}, journal {:.1}, checkpoint {:.1}, cleaning {:.1})",
                mib(r.fs_write_bytes),
                mib(w.data),
                mib(w.metadata),
                mib(w.journal),
                mib(w.checkpoint),
                mib(w.cleaning)
            ),
        ),
        ("fs WAF", opt(r.fs_waf, 3)),
        ("device erases", r.device.nand_erases.to_string()),
        ("ENOSPC", r.enospc_phase.clone().unwrap_or_else(|| "no".into())),
    ]);
    println!(
        "\n{:<13} {:>9} {:>10} {:>10} {:>12} {:>12}",
        "phase", "requests", "seconds", "MiB/s", "lat mean us", "lat p99 us"
    );
    for p in &r.phases {
        println!(
            "{:<13} {:>9} {:>10.3} {:>10} {:>12} {:>12}",
            p.name,
            p.requests,
            p.seconds,
            opt(p.throughput_mib_s, 2),
            opt(p.latency_us_mean, 1),
            opt(p.latency_us_p99, 1)
        );
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}
