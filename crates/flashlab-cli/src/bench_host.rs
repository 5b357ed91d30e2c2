//! `flashlab bench`'s cases above the SSD: `fs bench`'s IOZone on flashfs, F2FS and ext4 (issue 15)
//! and simulated swap operations (issue 16).

use crate::bench::{Case, Kind, Outcome};
use crate::fs_bench::FsKind;
use std::time::Instant;

/// Raw flash blocks and IOZone file size of `fs-iozone-flashfs`.
fn fs_iozone_size(quick: bool) -> (u32, u32) {
    if quick {
        (128, 4096)
    } else {
        (1024, 32768)
    }
}

/// The file systems with an IOZone case: flashfs on raw flash, F2FS and ext4 on
/// the SSD over page mapping (issue 15's speed target).
const IOZONE_FS: [FsKind; 3] = [FsKind::Flashfs, FsKind::F2fs, FsKind::Ext4];

/// `fs-iozone-flashfs`, `fs-iozone-f2fs`, `fs-iozone-ext4`.
pub(crate) fn fs_iozone_cases(quick: bool) -> Vec<Case> {
    IOZONE_FS.into_iter().map(|k| fs_iozone_case(k, quick)).collect()
}

fn fs_iozone_case(kind: FsKind, quick: bool) -> Case {
    let (blocks, file_kib) = fs_iozone_size(quick);
    let (name, under) = match kind {
        FsKind::Flashfs => ("flashfs", format!("on flashfs under the page cache, {} MiB raw flash", blocks / 8)),
        k => (
            k.name(),
            format!(
                "on {} under the page cache over page mapping, a {} MiB SSD (4 planes x 64 pages x 4 KiB, spare 0.1), counting",
                k.name(),
                ssd_blocks_per_plane(quick) * 4 * 64 * 4 / 1024
            ),
        ),
    };
    Case {
        name: format!("fs-iozone-{name}"),
        description: format!(
            "fs bench: IOZone (4 KiB requests, {} MiB file, 50 % utilisation, six phases) {under}; requests = application requests of the measured phases",
            file_kib / 1024,
        ),
        sets: Vec::new(),
        kind: Kind::FsIozone(kind),
    }
}

/// Blocks per plane of the F2FS and ext4 cases' SSD (4 planes of 64-page blocks of
/// 4 KiB: 256 MiB; 128 MiB with --quick, F2FS's mkfs needs room for its reserved segments).
fn ssd_blocks_per_plane(quick: bool) -> u32 {
    if quick {
        128
    } else {
        256
    }
}

/// The `--set` list of one IOZone case.
fn fs_iozone_sets(kind: FsKind, quick: bool) -> Vec<String> {
    let (blocks, file_kib) = fs_iozone_size(quick);
    let mut sets = vec![
        format!("fs.kind=\"{}\"", kind.name()),
        format!("fs.workload.file_kib={file_kib}"),
        "fs.workload.utilisation=50.0".into(),
    ];
    if kind == FsKind::Flashfs {
        sets.push(format!("flashfs.flash.blocks={blocks}"));
        return sets;
    }
    let device = format!(
        "device.channels=1 device.chips_per_channel=1 device.dies_per_chip=1 device.planes_per_die=4 \
         device.blocks_per_plane={} device.pages_per_block=64 device.page_bytes=4096 device.spare_factor=0.1 \
         ftl.mapping=\"page\" timing.enabled=false",
        ssd_blocks_per_plane(quick)
    );
    sets.extend(device.split_whitespace().map(String::from));
    sets
}

/// `fs bench`'s IOZone on `kind` under the page cache: application requests
/// (every phase but the filler) and the wall time of the whole run.
pub(crate) fn run_fs_iozone(kind: FsKind, quick: bool) -> anyhow::Result<(Outcome, f64)> {
    let (mut raw, ssd) = flashlab_config::load("", "bench", &fs_iozone_sets(kind, quick))?;
    if kind == FsKind::Ext4 {
        // mkfs.ext4's journal for the device (the 128 MiB default would not fit --quick's).
        let blocks = ssd.ftl.logical_pages * ssd.geometry.page_bytes as u64 / 4096;
        raw.fs.ext4.journal_mib = crate::repro_fsftl::mke2fs_journal_mib(blocks);
    }
    let spec = raw.resolve_fs_bench()?;
    let start = Instant::now();
    // A case runs in a process of its own (`bench_isolate.rs`), which ends after
    // it: the model is left to the exit rather than freed on the clock (with
    // `--in-process`, the few cases of one process hold their memory until it ends).
    let end = crate::fs_bench::AtEnd::Leak;
    let out = crate::fs_bench::run_kind_then(kind, &raw, &ssd, &spec, end)?;
    let wall = start.elapsed().as_secs_f64();
    let measured = || out.report.phases.iter().filter(|p| p.measured);
    let requests: u64 = measured().map(|p| p.requests).sum();
    let writes = measured().filter(|p| p.app_bytes_read == 0 && p.app_bytes_written > 0).map(|p| p.requests).sum();
    let mut o = host_outcome(requests, out.report.fs_waf);
    o.writes = Some(writes);
    Ok((o, wall))
}

/// Footprint divisor and page references of `swap-counting`.
fn swap_size(quick: bool) -> (u64, u64) {
    // --quick: a quarter of the footprint, RAM and swap, a sixteenth of the references.
    if quick {
        (4, 250_000)
    } else {
        (1, 4_000_000)
    }
}

pub(crate) fn swap_case(quick: bool) -> Case {
    let (d, refs) = swap_size(quick);
    Case {
        name: "swap-counting".into(),
        description: format!(
            "swap: {refs} references over {} MiB at random, {} MiB RAM, linux allocator, counting mode; requests = pages swapped out + in",
            1024 / d,
            256 / d
        ),
        sets: Vec::new(),
        kind: Kind::Swap,
    }
}

/// Simulated swap operations (pages swapped out + pages swapped in): an application
/// model referencing 1 GiB uniformly at random (half writes, no CPU time) against
/// 256 MiB of RAM, `linux` allocator, page mapping, counting mode.
pub(crate) fn run_swap(quick: bool) -> anyhow::Result<(Outcome, f64)> {
    let (d, refs) = swap_size(quick);
    let blocks = if quick { 128 } else { 512 };
    let sets = ["timing.enabled=false".to_string(), format!("device.blocks_per_plane={blocks}")];
    let (_, s) = flashlab_config::load("", "bench", &sets)?;
    let model = format!(
        "name = \"swap-bench\"\nprovenance = \"bench\"\nfootprint_mib = {}\nreferences = {refs}\n\
         cpu_ns_per_reference = 0\nwrite_fraction = 0.5\nsequential_share = 0.0\n",
        1024 / d
    );
    let app = flashlab_swap::AppModel::from_toml(&model, "bench")?;
    let raw = flashlab_config::RawSwap { ram_mib: 256 / d, swap_mib: 1536 / d, ..Default::default() };
    let ss = flashlab_swap::SwapSettings::resolve(&raw, &s)?;
    let start = Instant::now();
    let r = crate::swap_cmd::run_on(&ss, &s, flashlab_swap::Workload::App(&app))?;
    let wall = start.elapsed().as_secs_f64();
    Ok((host_outcome(r.swap_outs + r.swap_ins, r.ssd_waf), wall))
}

/// A row without SSD state figures (no per-page state or mapping RAM to report).
fn host_outcome(requests: u64, waf: Option<f64>) -> Outcome {
    Outcome {
        requests,
        writes: None,
        waf,
        memory_bytes: 0,
        physical_pages: 0,
        mapping_ram_bytes: None,
        waf_closed_form: None,
    }
}
