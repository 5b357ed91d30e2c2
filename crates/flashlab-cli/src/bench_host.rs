//! `flashlab bench`'s cases above the SSD: `fs bench`'s IOZone on flashfs (issue 15)
//! and simulated swap operations (issue 16).

use crate::bench::{Case, Kind, Outcome};
use std::time::Instant;

/// Raw flash blocks and IOZone file size of `fs-iozone-flashfs`.
fn fs_iozone_size(quick: bool) -> (u32, u32) {
    if quick {
        (128, 4096)
    } else {
        (1024, 32768)
    }
}

pub(crate) fn fs_iozone_case(quick: bool) -> Case {
    let (blocks, file_kib) = fs_iozone_size(quick);
    Case {
        name: "fs-iozone-flashfs".into(),
        description: format!(
            "fs bench: IOZone (4 KiB requests, {} MiB file, 50 % utilisation, six phases) on flashfs under the page cache, {} MiB raw flash; requests = application requests of the measured phases",
            file_kib / 1024,
            blocks / 8
        ),
        sets: Vec::new(),
        kind: Kind::FsIozone,
    }
}

/// `fs bench`'s IOZone on flashfs under the page cache: application requests
/// (every phase but the filler) and the wall time of the whole run.
pub(crate) fn run_fs_iozone(quick: bool) -> anyhow::Result<(Outcome, f64)> {
    let (blocks, file_kib) = fs_iozone_size(quick);
    let sets: Vec<String> = [
        format!("flashfs.flash.blocks={blocks}"),
        "fs.kind=\"flashfs\"".into(),
        format!("fs.workload.file_kib={file_kib}"),
        "fs.workload.utilisation=50.0".into(),
    ]
    .into();
    let (raw, ssd) = flashlab_config::load("", "bench", &sets)?;
    let spec = raw.resolve_fs_bench()?;
    let start = Instant::now();
    let out = crate::fs_bench::run_kind(crate::fs_bench::FsKind::Flashfs, &raw, &ssd, &spec)?;
    let wall = start.elapsed().as_secs_f64();
    let requests: u64 = out.report.phases.iter().filter(|p| p.measured).map(|p| p.requests).sum();
    Ok((host_outcome(requests, out.report.fs_waf), wall))
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
    Outcome { requests, waf, memory_bytes: 0, physical_pages: 0, mapping_ram_bytes: None, waf_closed_form: None }
}
