//! `flashlab reproduce fs-compare` (seed 002, Neil Brown's LWN article): a
//! synthetic Linux-3.7-like tree unpacked ten times, read back, `du -s`
//! cold, `rm -r` warm, then two large incompressible files, on the
//! microSD preset (examples/microsd.toml) under flashfs with and without
//! compression, the F2FS-like and ext4-like models, and the kernel's ext4,
//! btrfs and xfs through `blockdev serve` (`repro_fscmp_kernel.rs`); and the
//! article's scaling argument (mount time and memory against device size).
//! This file holds the plan and the model runs; `repro_fscmp_report.rs` the
//! claims, the Markdown and the plots.

use crate::repro_fscmp_kernel;
use anyhow::Context;
use flashlab_flashfs::{Compression, Fs, FsSettings, OnFlash, PageCache as FlashCache};
use flashlab_mtd::{Block2MtdSettings, Nand};
use flashlab_ubi::{Ubi, UbiSettings};
use flashlab_vfs::workload::kernel_tree::{Tree, LINUX_3_7};
use flashlab_vfs::workload::{run_fs_compare, FsCompareSpec, Measured, PhaseReport};
use flashlab_vfs::{FileSystem, PageCache};
use serde::Serialize;
use std::time::Instant;

/// flashfs runs over block2mtd on the card (false: raw NAND of its geometry).
pub const FLASHFS_ON_CARD: bool = true;

/// The microSD preset, as shipped.
pub const MICROSD_TOML: &str = include_str!("../../../examples/microsd.toml");

/// The rows of the comparison, in the article's order (the kernel's at the end).
pub const ROWS: [&str; 7] = ["flashfs-lz4", "flashfs-nc", "f2fs", "ext4", "kernel-ext4", "kernel-btrfs", "kernel-xfs"];

/// What the reproduction runs.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub quick: bool,
    pub note: String,
    /// Files and directories of the tree relative to [`LINUX_3_7`].
    pub tree_scale: f64,
    pub tree_files: usize,
    pub tree_dirs: usize,
    pub tree_bytes: u64,
    pub spec: FsCompareSpec,
    /// `--set`s applied to examples/microsd.toml (the card's size).
    pub device_sets: Vec<String>,
    /// What flashfs runs on.
    pub flashfs_device: String,
    /// Raw-flash erase blocks (64 × 2 KiB pages) of the scaling rows.
    pub scaling_blocks: Vec<u32>,
    /// Fraction of each scaling device filled with 64 KiB files before the remount.
    pub scaling_fill: f64,
}

impl Plan {
    /// The plan; `scale` overrides the tree's (and the large files') scale.
    pub fn new(quick: bool, scale: Option<f64>) -> Plan {
        let tree_scale = scale.unwrap_or(if quick { 0.01 } else { 1.0 });
        // The card: 1950 blocks a plane (16 GB); --quick: 64 (512 MiB), still 5 log units.
        let blocks_per_plane = if quick { 64 } else { 1950 };
        // The article's two files: an openSUSE 12.2 DVD ISO (4.7 GB) and an
        // hour of mp4 video, "about 6GB" together; scaled with the tree.
        let large = [(4.7e9 * tree_scale) as u64, (1.3e9 * tree_scale) as u64];
        let tree = tree_for(tree_scale);
        let note = if quick {
            format!("--quick: tree scaled by {tree_scale} (files and directories), card of 512 MiB (64 blocks a plane)")
        } else {
            format!("the article's sizes: tree scale {tree_scale}, 16 GB card")
        };
        Plan {
            quick,
            note,
            tree_scale,
            tree_files: tree.files.len(),
            tree_dirs: tree.dirs.len(),
            tree_bytes: tree.total_bytes(),
            spec: FsCompareSpec { copies: 10, large_file_bytes: large, io_bytes: 128 * 1024, seed: 2 },
            device_sets: if quick {
                // 64 mapping units: 3 % spare would leave FAST 1 spare unit; its 5 log units and one
                // merge unit need 6, so 10 % (6 units).
                vec![format!("device.blocks_per_plane={blocks_per_plane}"), "device.spare_factor=0.1".into()]
            } else {
                vec![format!("device.blocks_per_plane={blocks_per_plane}")]
            },
            flashfs_device: "block2mtd on the card (8 MiB erase blocks, 4 KiB write unit, erase = TRIM)".into(),
            // A hidden scale below --quick's (`FLASHLAB_FS_COMPARE_SCALE`, the tests')
            // shrinks the scaling devices too.
            scaling_blocks: match (quick, tree_scale < 0.01) {
                (true, true) => vec![128, 256, 512],
                (true, false) => vec![256, 512, 1024, 2048],
                (false, _) => vec![1024, 4096, 16384],
            },
            scaling_fill: 0.5,
        }
    }

    pub fn tree(&self) -> Tree {
        tree_for(self.tree_scale)
    }
}

fn tree_for(scale: f64) -> Tree {
    Tree::generate(&LINUX_3_7, scale, 2)
}

/// Per-copy means and totals of one row, in simulated seconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Steps {
    /// Mean over the copies of one unpack (its closing sync included).
    pub write_kernel_s: f64,
    pub read_kernel_s: f64,
    pub du_s: f64,
    pub rm_s: f64,
    /// The slowest `rm -r` of the copies.
    pub rm_max_s: f64,
    /// Both large files (each closed by an fsync).
    pub write_files_s: f64,
    pub read_files_s: f64,
}

impl Steps {
    pub fn from_phases(phases: &[PhaseReport]) -> Steps {
        let of = |prefix: &str| -> Vec<f64> {
            phases.iter().filter(|p| p.name.starts_with(prefix)).map(|p| p.seconds).collect()
        };
        let mean = |v: Vec<f64>| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
        Steps {
            write_kernel_s: mean(of("unpack/")),
            read_kernel_s: mean(of("read/")),
            du_s: mean(of("du/")),
            rm_s: mean(of("rm/")),
            rm_max_s: of("rm/").into_iter().fold(0.0, f64::max),
            write_files_s: of("large-write").iter().sum(),
            read_files_s: of("large-read").iter().sum(),
        }
    }
}

/// One file system's outcome.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FsRow {
    pub name: String,
    /// What ran, on what (or why it did not).
    pub what: String,
    /// Why the row has no figures (None: it ran).
    pub missing: Option<String>,
    pub steps: Steps,
    /// Over the whole sequence: flash pages programmed, erases, the file
    /// system's writes to its device (bytes).
    pub nand_program_pages: u64,
    pub nand_erases: u64,
    pub device_write_bytes: u64,
    pub wall_s: f64,
    pub phases: Vec<PhaseReport>,
    /// The device's result object at the end (the SSD's: merges, WAF, erases, ...).
    pub device: serde_json::Value,
}

impl FsRow {
    pub fn missing(name: &str, what: String, why: String) -> FsRow {
        FsRow { name: name.into(), what, missing: Some(why), ..FsRow::default() }
    }
}

/// The scaling rows with their simulated times.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingPoint {
    pub row: flashlab_flashfs::scaling::ScalingRow,
    pub jffs2_mount_s: f64,
    pub ubi_scan_attach_s: f64,
    pub ubi_fastmap_attach_s: f64,
    pub flashfs_mount_s: f64,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measurements {
    /// flashfs ran over block2mtd on the card (else raw NAND with nandsim delays).
    pub flashfs_on_card: bool,
    pub rows: Vec<FsRow>,
    pub scaling: Vec<ScalingPoint>,
}

fn model_row<F>(name: &str, what: String, mut fs: F, tree: &Tree, plan: &Plan) -> FsRow
where
    F: FileSystem + Measured,
{
    let start = Instant::now();
    let (w0, d0) = (fs.fs_writes(), fs.device_counters());
    match run_fs_compare(&mut fs, tree, &plan.spec) {
        Ok(phases) => {
            let d = fs.device_counters().since(&d0);
            FsRow {
                name: name.into(),
                what,
                missing: None,
                steps: Steps::from_phases(&phases),
                nand_program_pages: d.nand_program_pages,
                nand_erases: d.nand_erases,
                device_write_bytes: fs.fs_writes().since(&w0).total(),
                wall_s: start.elapsed().as_secs_f64(),
                phases,
                device: fs.device_result(),
            }
        }
        Err(e) => FsRow::missing(name, what, format!("the run failed: {e}")),
    }
}

/// The card's SSD settings (examples/microsd.toml with the plan's size).
pub fn card(plan: &Plan) -> anyhow::Result<(flashlab_config::RawConfig, flashlab_sim::Settings)> {
    flashlab_config::load(MICROSD_TOML, "examples/microsd.toml", &plan.device_sets).map_err(|e| anyhow::anyhow!("{e}"))
}

/// block2mtd on the card as the article ran UBIFS: erase blocks of the card's
/// 8 MiB allocation unit (so a LEB's writes fill whole units), the 4 KiB page
/// of the block layer as write unit, over the whole 8 MiB units of the card.
/// Erase TRIMs: the article's patched block2mtd records erased blocks in
/// memory instead of writing 0xFF; a TRIM also writes nothing (it additionally
/// tells the card the data is dead, which the patch did not).
pub fn block2mtd_settings(ssd: &flashlab_sim::Settings) -> Block2MtdSettings {
    let unit_mib = 8;
    let logical_mib = (ssd.ftl.logical_pages * ssd.page_bytes()) >> 20;
    Block2MtdSettings {
        erase_kib: unit_mib as u32 * 1024,
        page_bytes: ssd.page_bytes() as u32,
        erase: "trim".into(),
        size_mib: logical_mib / unit_mib * unit_mib,
    }
}

fn flashfs_row(name: &str, plan: &Plan, tree: &Tree, compression: Compression) -> anyhow::Result<FsRow> {
    let (_, ssd) = card(plan)?;
    let dev = flashlab_sim::Ssd::new(ssd.clone()).context("the microSD preset's SSD")?;
    let nand = Nand::on_ssd(dev, &block2mtd_settings(&ssd)).map_err(|e| anyhow::anyhow!("block2mtd: {e}"))?;
    let mut ubi = Ubi::format(nand, UbiSettings::default())
        .map_err(|f| anyhow::anyhow!("{name}: UBI format failed: {}", f.error))?;
    let vol = ubi.create_volume("flashfs", 0).with_context(|| format!("{name}: creating the volume"))?;
    let cfg = FsSettings { compression, ..FsSettings::default() };
    let fs = Fs::format(ubi, vol, cfg).map_err(|f| anyhow::anyhow!("{name}: format failed: {}", f.error))?;
    let what = format!("flashfs ({compression:?}) on UBI on {}", plan.flashfs_device);
    Ok(model_row(name, what, FlashCache::<Fs>::wrap(fs), tree, plan))
}

fn ssd_row(name: &str, plan: &Plan, tree: &Tree) -> anyhow::Result<FsRow> {
    let (mut raw, ssd) = card(plan)?;
    let dev = flashlab_sim::Ssd::new(ssd.clone()).context("the microSD preset's SSD")?;
    let what = "the model under the page cache on the microSD preset (FAST, 8 MiB units, 5 log units)";
    Ok(match name {
        "ext4" => {
            let blocks = ssd.ftl.logical_pages * ssd.geometry.page_bytes as u64 / 4096;
            raw.fs.ext4.journal_mib = crate::repro_fsftl::mke2fs_journal_mib(blocks);
            let fs = flashlab_ext4::Ext4::format(dev, raw.fs.ext4.clone()).context("ext4: mkfs failed")?;
            model_row(name, format!("ext4-like {what}"), PageCache::new(fs, raw.fs.cache.clone(), 0), tree, plan)
        }
        _ => {
            let fs = flashlab_f2fs::F2fs::format(dev, raw.fs.f2fs.clone()).context("f2fs: mkfs failed")?;
            model_row(name, format!("F2FS-like {what}"), PageCache::new(fs, raw.fs.cache.clone(), 0), tree, plan)
        }
    })
}

/// Runs one row of [`ROWS`].
pub fn run_row(name: &str, plan: &Plan, tree: &Tree) -> anyhow::Result<FsRow> {
    match name {
        "flashfs-lz4" => flashfs_row(name, plan, tree, Compression::Lz4),
        "flashfs-nc" => flashfs_row(name, plan, tree, Compression::None),
        "f2fs" | "ext4" => ssd_row(name, plan, tree),
        kernel => repro_fscmp_kernel::run(kernel, plan, tree),
    }
}

/// The scaling argument's rows.
pub fn scaling(plan: &Plan) -> Vec<ScalingPoint> {
    use flashlab_flashfs::scaling::{measure, mount_time_s};
    plan.scaling_blocks
        .iter()
        .map(|b| {
            let row = measure(*b, plan.scaling_fill);
            ScalingPoint {
                jffs2_mount_s: mount_time_s(row.jffs2_mount_pages_read),
                ubi_scan_attach_s: mount_time_s(row.ubi_scan_attach_pages_read),
                ubi_fastmap_attach_s: mount_time_s(row.ubi_fastmap_attach_pages_read),
                flashfs_mount_s: mount_time_s(row.flashfs_mount_pages_read),
                row,
            }
        })
        .collect()
}

/// Runs every row (two at a time) and the scaling rows.
pub fn measure(plan: &Plan, progress: impl Fn(&str) + Sync) -> anyhow::Result<Measurements> {
    let tree = plan.tree();
    let mut rows: Vec<FsRow> = Vec::new();
    // The kernel's rows first, one at a time (one loop device each; their
    // `blockdev serve` holds the card's written bytes in its own process),
    // while this process is still small: the flashfs rows' MTD bytes, freed
    // after them, stay in this process's heap, and both at once outgrow a
    // 24 GiB machine at full size. Then the models in parallel pairs. The
    // rows are reported in `ROWS` order.
    for name in ROWS.iter().filter(|r| r.starts_with("kernel-")) {
        let r = run_row(name, plan, &tree)?;
        progress(&r.name);
        rows.push(r);
    }
    let models: Vec<&str> = ROWS.iter().copied().filter(|r| !r.starts_with("kernel-")).collect();
    for pair in models.chunks(2) {
        let done: Vec<anyhow::Result<FsRow>> = std::thread::scope(|s| {
            let hs: Vec<_> = pair.iter().map(|n| s.spawn(|| run_row(n, plan, &tree))).collect();
            hs.into_iter().map(|h| h.join().expect("a row's thread panicked")).collect()
        });
        for r in done {
            let r = r?;
            progress(&r.name);
            rows.push(r);
        }
    }
    rows.sort_by_key(|r| ROWS.iter().position(|n| *n == r.name));
    progress("scaling");
    Ok(Measurements { flashfs_on_card: FLASHFS_ON_CARD, rows, scaling: scaling(plan) })
}
