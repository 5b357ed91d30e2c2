//! `flashlab bench`'s cases beyond the SSD runs of `bench.rs` (issue 22): 4 KiB
//! overwrites through flashfs, the 4 TiB aging run, and the wasim.c comparison.

use crate::bench::{Case, Kind, Outcome};
use anyhow::Context;
use flashlab_flashfs::{Compression, Fs, FsSettings};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};
use std::path::Path;
use std::time::Instant;

/// Overwrites timed by `flashfs-overwrite` (the untimed set-up writes the 8 MiB file first).
fn flashfs_writes(scale: u64) -> u64 {
    400_000 / scale
}

pub(crate) fn flashfs_overwrite(scale: u64) -> Case {
    Case {
        name: "flashfs-overwrite".into(),
        description: format!(
            "{} 4 KiB overwrites at pseudo-random 4 KiB offsets of an 8 MiB file through flashfs -> UBI -> NAND \
             (32 MiB: 256 blocks x 64 x 2 KiB pages), no compression, counting (the criterion bench's set-up)",
            flashfs_writes(scale)
        ),
        sets: Vec::new(),
        kind: Kind::FlashfsOverwrite,
    }
}

/// The file system of `benches/flashfs.rs`: a formatted 32 MiB device holding an 8 MiB file.
fn flashfs_setup() -> anyhow::Result<(Fs, flashlab_flashfs::Fd)> {
    let nand = Nand::new(NandSettings { blocks: 256, pages_per_block: 64, ..NandSettings::default() });
    let mut ubi = Ubi::format(nand, UbiSettings::default()).map_err(|e| anyhow::anyhow!("ubi format: {e:?}"))?;
    let vol = ubi.create_volume("fs", 0).context("ubi volume")?;
    let mut fs = Fs::format(ubi, vol, FsSettings { compression: Compression::None, ..FsSettings::default() })
        .map_err(|e| anyhow::anyhow!("flashfs format: {e:?}"))?;
    let fd = fs.create("/bench").context("create")?;
    let block: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    for i in 0..2048u64 {
        fs.write(fd, i * 4096, &block).context("prefill")?;
    }
    Ok((fs, fd))
}

pub(crate) fn run_flashfs_overwrite(c: &Case, quick: bool) -> anyhow::Result<(Outcome, f64)> {
    debug_assert_eq!(c.kind, Kind::FlashfsOverwrite);
    let n = flashfs_writes(if quick { 8 } else { 1 });
    let (mut fs, fd) = flashfs_setup()?;
    let page_bytes = NandSettings::default().page_bytes as f64;
    let programmed0 = fs.stats().pages_programmed_total;
    let mut buf: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(40_503) >> 7) as u8).collect();
    let mut x = 1u64;
    let start = Instant::now();
    for _ in 0..n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        buf[0] = x as u8;
        fs.write(fd, (x >> 33) % 2048 * 4096, &buf).context("flashfs overwrite")?;
    }
    let wall = start.elapsed().as_secs_f64();
    let st = fs.stats();
    let pages = fs.ubi().nand().settings().blocks as u64 * fs.ubi().nand().settings().pages_per_block as u64;
    let programmed = (st.pages_programmed_total - programmed0) as f64 * page_bytes;
    Ok((
        Outcome {
            requests: n,
            writes: Some(n),
            waf: Some(programmed / (n as f64 * 4096.0)),
            memory_bytes: fs.memory_bytes() as u64,
            physical_pages: pages,
            mapping_ram_bytes: None,
            waf_closed_form: None,
        },
        wall,
    ))
}

/// Issue 22's 4 TiB device: 8 channels x 4 chips x 2 dies x 2 planes x 32 768 blocks x 256
/// pages x 4 KiB, spare 0.07, counting mode, greedy, prefilled, aged by as many uniform random
/// 4 KiB writes as the logical capacity, then 10 M measured writes. `divisor` divides the
/// blocks per plane, the aging (it follows the capacity) and the measured writes.
pub(crate) fn scale_4tib(divisor: u32) -> Case {
    let blocks = 32_768 / divisor;
    let measured = 10_000_000 / divisor as u64;
    let tib = 4.0 / divisor as f64;
    Case {
        name: "scale-4tib".into(),
        description: format!(
            "{}8x4x2x2 x {blocks} blocks x 256 pages x 4 KiB ({tib} TiB), spare 0.07, counting, greedy: bulk prefill, \
             aging by logical-capacity uniform 4 KiB writes, {measured} measured (time and requests/s cover all three)",
            if divisor > 1 { format!("SCALED DOWN 1/{divisor}: ") } else { String::new() }
        ),
        sets: format!(
            "device.channels=8 device.chips_per_channel=4 device.dies_per_chip=2 device.planes_per_die=2 \
             device.blocks_per_plane={blocks} device.pages_per_block=256 device.page_bytes=4096 device.spare_factor=0.07 \
             timing.enabled=false gc.victim=greedy workload.prefill=true workload.pattern=uniform workload.requests={measured}"
        )
        .split_whitespace()
        .map(String::from)
        .collect(),
        kind: Kind::Scale,
    }
}

/// Run `scale-4tib`: the aging length is the logical capacity the config resolves to.
pub(crate) fn run_scale(c: &Case) -> anyhow::Result<(Outcome, f64)> {
    let (_, s) = flashlab_config::load("", "bench", &c.sets)?;
    let mut sets = c.sets.clone();
    sets.push(format!("workload.aging_writes={}", s.ftl.logical_pages));
    let (_, s) = flashlab_config::load("", "bench", &sets)?;
    let start = Instant::now();
    let r = flashlab_sim::run_synthetic(&s, &mut |_| {})?;
    let wall = start.elapsed().as_secs_f64();
    let mut o = Outcome::of(&r);
    o.waf_closed_form = Some(flashlab_ftl::analytic::greedy_waf(0.07, 256));
    Ok((o, wall))
}

/// Run wasim.c's binary on `counting-wasim`'s work: (wall s, CPU s of the child).
pub(crate) fn run_wasim(bin: &Path, quick: bool) -> anyhow::Result<(f64, f64)> {
    let blocks = if quick { 1024 } else { 8192 };
    let start = Instant::now();
    let out = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%U %S")
        .arg(bin)
        .args(["greedy", "0.1", "64", &blocks.to_string(), "15", "0", "1"])
        .output()
        .with_context(|| format!("--wasim {}: could not run it under /usr/bin/time", bin.display()))?;
    let wall = start.elapsed().as_secs_f64();
    anyhow::ensure!(out.status.success(), "--wasim {}: exited with {}", bin.display(), out.status);
    let err = String::from_utf8_lossy(&out.stderr);
    let cpu: f64 = err
        .lines()
        .last()
        .and_then(|l| l.split_whitespace().map(|v| v.parse::<f64>().ok()).sum::<Option<f64>>())
        .with_context(|| format!("--wasim: /usr/bin/time printed {err:?}"))?;
    Ok((wall, cpu))
}
