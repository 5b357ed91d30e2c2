//! `flashlab reproduce f2fs-ext4-ftl` (seed 004, Choi and Shin): F2FS and ext4
//! under BAST, BAST-padding, page mapping and DFTL, IOZone with 4 KiB requests
//! on a 600 MB file at utilisation 20–95 %. This file holds the plan and the
//! runs; `repro_fsftl_report.rs` the claims table, the Markdown and the plots.
//!
//! The file systems are the `fs bench` models that run on the SSD
//! (`FsKind::on_ssd`); a file system of the seed that this build does not
//! have is listed as missing, never faked.

use crate::fs_bench::{run_kind, FsKind};
use serde::Serialize;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The seed's file systems, in its order.
pub const SEED_FS: [&str; 2] = ["f2fs", "ext4"];
/// The seed's utilisations (percent).
pub const UTILISATIONS: [f64; 5] = [20.0, 50.0, 80.0, 90.0, 95.0];

/// One FTL set-up of Table 1.
#[derive(Debug, Clone, Serialize)]
pub struct FtlSetup {
    pub name: &'static str,
    pub note: String,
    pub sets: Vec<String>,
}

/// What the reproduction runs.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub quick: bool,
    /// The device and the file are the seed's divided by this.
    pub scale_div: u64,
    pub note: String,
    pub device_sets: Vec<String>,
    pub ftls: Vec<FtlSetup>,
    /// File systems run (present in this build) and missing (with why).
    pub file_systems: Vec<&'static str>,
    pub missing: Vec<(&'static str, String)>,
    pub utilisations: Vec<f64>,
    pub file_kib: u64,
    pub seed: u64,
}

/// Physical geometry: `channels` × 4 planes, 128 pages of 8 KiB per block
/// (the OpenSSD's K9LCG08U1M MLC pages; the BAST superblock of 4 blocks makes
/// its 32 KiB pages), 4 GiB at full size; MLC timing.
fn device_sets(channels: u64, blocks_per_plane: u64) -> Vec<String> {
    [
        format!("device.channels={channels}"),
        "device.chips_per_channel=1".into(),
        "device.dies_per_chip=1".into(),
        "device.planes_per_die=4".into(),
        format!("device.blocks_per_plane={blocks_per_plane}"),
        "device.pages_per_block=128".into(),
        "device.page_bytes=8192".into(),
        "timing.preset=\"mlc\"".into(),
    ]
    .into()
}

/// Table 1: BAST (and padding) with 64 log blocks of 4 × 1 MiB (256 MB) as
/// superblocks of 4; page mapping with 340 MB of over-provisioning; DFTL
/// with the same space and its default cached map.
fn ftls(div: u64, units: u64, blocks_per_plane: u64) -> Vec<FtlSetup> {
    let log_units = (64 / div).max(1);
    // The log pool, one merge destination and one spare unit, with a little room.
    let hybrid_spare = (log_units + 3) as f64 / units as f64;
    let op = 340.0 / 4096.0;
    // DFTL also keeps its translation blocks in the spare space: at least 10
    // spare blocks a plane (GC's reserve of 5 and up to 4 translation blocks);
    // the seed gives no DFTL set-up, and --quick's 64-block planes need 15.6 %.
    let dftl_spare = f64::max(op, 10.0 / blocks_per_plane as f64);
    let hybrid = |name: &'static str| FtlSetup {
        name,
        note: format!("superblocks of 4 blocks (32 KiB pages, 4 MiB units), {log_units} log units"),
        sets: vec![
            format!("ftl.mapping=\"{name}\""),
            "ftl.superblock_blocks=4".into(),
            format!("ftl.log_blocks={log_units}"),
            format!("device.spare_factor={hybrid_spare:.4}"),
        ],
    };
    vec![
        hybrid("bast"),
        hybrid("bast-padding"),
        FtlSetup {
            name: "page",
            note: "8 KiB pages, 340 MB over-provisioning (scaled)".into(),
            sets: vec!["ftl.mapping=\"page\"".into(), format!("device.spare_factor={op:.4}")],
        },
        FtlSetup {
            name: "dftl",
            note: format!("as page mapping, the map in flash, 65 536 cached entries, spare {dftl_spare:.3}"),
            sets: vec!["ftl.mapping=\"dftl\"".into(), format!("device.spare_factor={dftl_spare:.4}")],
        },
    ]
}

impl Plan {
    pub fn new(quick: bool) -> Plan {
        // --quick: one channel of 4 planes, 64 blocks each (256 MiB), so page
        // mapping's 8.3 % over-provisioning still leaves GC 5 spare blocks a plane.
        let (div, channels, blocks_per_plane) = if quick { (16, 1, 64) } else { (1, 4, 256) };
        let units = channels * 4 * blocks_per_plane / 4;
        let mut file_systems = Vec::new();
        let mut missing = Vec::new();
        for name in SEED_FS {
            match FsKind::from_name(name) {
                Ok(k) if k.on_ssd() => file_systems.push(name),
                Ok(_) => missing.push((name, "this build's model does not run on the SSD".to_string())),
                Err(_) => {
                    missing.push((name, "no such model in this build (`fs.kind` lists the built ones)".to_string()))
                }
            }
        }
        let note = if quick {
            format!(
                "--quick: device and file scaled down by {div} (256 MiB, a {:.1} MiB file, {} log units)",
                600.0 / div as f64,
                64 / div
            )
        } else {
            "the seed's sizes: 4 GiB device, 600 MiB file".into()
        };
        Plan {
            quick,
            scale_div: div,
            note,
            device_sets: device_sets(channels, blocks_per_plane),
            ftls: ftls(div, units, blocks_per_plane),
            file_systems,
            missing,
            utilisations: UTILISATIONS.to_vec(),
            file_kib: 600 * 1024 / div,
            seed: 4,
        }
    }

    /// Every run: (file system, FTL index, utilisation).
    pub fn points(&self) -> Vec<(&'static str, usize, f64)> {
        let mut v = Vec::new();
        for fs in &self.file_systems {
            for f in 0..self.ftls.len() {
                for u in &self.utilisations {
                    v.push((*fs, f, *u));
                }
            }
        }
        v
    }

    /// The file system's own `--set`s (Table 2 of the seed, §4).
    pub fn fs_sets(&self, fs: &str) -> Vec<String> {
        match fs {
            // Table 2: "F2FS Overprovision 250MB, Reserved 50MB" is what mkfs.f2fs of
            // f2fs-tools v1.0.0–v1.1.0 gives a 4 GB volume with its default `-o 5`
            // (`f2fs_parse_options`: reserved (100 / 5 + 5) = 25 segments;
            // `f2fs_write_check_point_pack`: (main − 25) × 5 / 100 + 25 ≈ 120–125
            // segments). The F2FS of that time (Linux 3.8, as backported to the seed's
            // 3.4.7 kernel, §4) recycles segments (SSR) once free sections drop below
            // the overprovision sections and never updates in place.
            "f2fs" => vec![
                "fs.f2fs.mkfs_tools=\"1.1\"".into(),
                "fs.f2fs.overprovision_ratio=5.0".into(),
                "fs.f2fs.kernel=\"3.8\"".into(),
            ],
            _ => Vec::new(),
        }
    }

    /// The `--set` list of one run.
    pub fn sets(&self, fs: &str, ftl: usize, util: f64) -> Vec<String> {
        let mut s = self.device_sets.clone();
        s.extend(self.ftls[ftl].sets.iter().cloned());
        s.extend(self.fs_sets(fs));
        s.extend([
            "timing.enabled=true".to_string(),
            format!("fs.kind=\"{fs}\""),
            "fs.workload.kind=\"iozone\"".into(),
            format!("fs.workload.file_kib={}", self.file_kib),
            "fs.workload.request_bytes=4096".into(),
            "fs.workload.update_fraction=0.25".into(),
            format!("fs.workload.utilisation={util:.1}"),
            format!("fs.workload.seed={}", self.seed),
        ]);
        s
    }
}

/// One run's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub fs: String,
    pub ftl: String,
    pub utilisation: f64,
    pub report: Option<flashlab_vfs::workload::BenchReport>,
    /// The SSD's result object at the end of the run.
    pub device: Value,
    pub error: Option<String>,
}

impl Run {
    /// Throughput of a phase (MiB/s of simulated time).
    pub fn throughput(&self, phase: &str) -> Option<f64> {
        self.report.as_ref()?.phases.iter().find(|p| p.name == phase)?.throughput_mib_s
    }

    /// One phase's report.
    pub fn phase(&self, name: &str) -> Option<&flashlab_vfs::workload::PhaseReport> {
        self.report.as_ref()?.phases.iter().find(|p| p.name == name)
    }

    /// NAND block erases during the measured phases.
    pub fn erases(&self) -> Option<u64> {
        Some(self.report.as_ref()?.device.nand_erases)
    }

    /// Bytes the file system's own cleaning wrote (measured phases).
    pub fn cleaning_bytes(&self) -> Option<u64> {
        Some(self.report.as_ref()?.fs_writes.cleaning)
    }
}

impl Plan {
    /// The ext4 journal of a run on a device of `blocks` 4 KiB blocks: mke2fs's
    /// choice for the seed-size device (`blocks` × `scale_div`), divided by
    /// `scale_div` (at least mke2fs's minimum of 1 024 blocks, 4 MiB).
    pub fn journal_mib(&self, blocks: u64) -> u32 {
        (mke2fs_journal_mib(blocks * self.scale_div) / self.scale_div as u32).max(4)
    }
}

/// The journal size mke2fs gives a file system of `blocks` 4 KiB blocks, in MiB
/// (e2fsprogs `ext2fs_default_journal_size`: 1 024 blocks below 32 768 blocks, 4 096
/// below 256 Ki, 8 192 below 512 Ki, 16 384 below 4 Mi, 32 768 below 8 Mi, ...).
pub fn mke2fs_journal_mib(blocks: u64) -> u32 {
    let journal_blocks = match blocks {
        0..32_768 => 1024,
        32_768..262_144 => 4096,
        262_144..524_288 => 8192,
        524_288..4_194_304 => 16_384,
        4_194_304..8_388_608 => 32_768,
        8_388_608..16_777_216 => 65_536,
        16_777_216..33_554_432 => 131_072,
        _ => 262_144,
    };
    (journal_blocks * 4096 / (1 << 20)) as u32
}

fn run_one(plan: &Plan, fs: &'static str, ftl: usize, util: f64) -> Run {
    let sets = plan.sets(fs, ftl, util);
    let r = (|| -> anyhow::Result<(flashlab_vfs::workload::BenchReport, Value)> {
        let (mut raw, ssd) = flashlab_config::load("", "f2fs-ext4-ftl", &sets)?;
        if fs == "ext4" {
            // mkfs.ext4 as the seed ran it (§4): the journal mke2fs chooses for the
            // seed's device (64 MiB at 4 GB), scaled with the device under --quick.
            let blocks = ssd.ftl.logical_pages * ssd.geometry.page_bytes as u64 / 4096;
            raw.fs.ext4.journal_mib = plan.journal_mib(blocks);
        }
        let spec = raw.resolve_fs_bench()?;
        let out = run_kind(FsKind::from_name(fs)?, &raw, &ssd, &spec)?;
        Ok((out.report, out.device))
    })();
    let (report, device, error) = match r {
        Ok((rep, dev)) => (Some(rep), dev, None),
        Err(e) => (None, Value::Null, Some(crate::one_line(&e))),
    };
    Run { fs: fs.into(), ftl: plan.ftls[ftl].name.into(), utilisation: util, report, device, error }
}

/// Runs every point on `workers` threads; `done` sees each finished run.
pub fn run_all(plan: &Plan, workers: usize, done: impl Fn(&Run) + Sync) -> Vec<Run> {
    let points = plan.points();
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, Run)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(fs, ftl, u)) = points.get(i) else { break };
                let r = run_one(plan, fs, ftl, u);
                done(&r);
                out.lock().expect("no worker panicked").push((i, r));
            });
        }
    });
    let mut v = out.into_inner().expect("no worker panicked");
    v.sort_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, r)| r).collect()
}
