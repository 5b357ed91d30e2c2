//! One measured run: format, pre-fill cold files to the wanted
//! utilisation, set up the fileset, commit everything, run the workload,
//! and report the counters of the measured phase.

use super::{BenchError, DeviceSpec, TimingPreset};
use crate::{Fs, FsError, FsSettings, OnFlash, PageCache, Stats};
use flashlab_vfs::workload::{fileset_bytes, prefill, Engine, WorkloadCounters, WorkloadKind, WorkloadSpec};
use serde::Serialize;

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointSpec {
    pub device: DeviceSpec,
    /// Name of the file-system configuration (for reports).
    pub config: String,
    pub fs: FsSettings,
    pub workload: WorkloadSpec,
    /// Device utilisation before the workload, in percent of the space
    /// available on the empty file system (cold pre-fill + fileset).
    pub utilisation_pct: u32,
    /// Record (data written, pages programmed) every this many bytes.
    pub sample_every_bytes: u64,
}

/// Counters of the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunResult {
    pub config: String,
    pub workload: String,
    pub utilisation_pct: u32,
    pub capacity_bytes: u64,
    pub prefill_bytes: u64,
    pub ops: WorkloadCounters,
    pub pages_programmed: u64,
    /// `pages_programmed` split by cause (data, base, index, lpt, log, gc,
    /// ...); causes with no page are left out.
    pub pages_programmed_by_cause: std::collections::BTreeMap<String, u64>,
    pub pages_read: u64,
    pub erases: u64,
    /// LEBs collected by GC (live nodes moved).
    pub gc_runs: u64,
    /// Freeable LEBs reclaimed without moves (no erased LEB left).
    pub freeable_reclaims: u64,
    /// gc_runs + freeable_reclaims: LEB reclamations (UBIFS's GC returns
    /// freeable LEBs too); the "GC runs" of the reproduction.
    pub reclaims: u64,
    pub gc_pages_read: u64,
    pub commits: u64,
    pub index_nodes_written: u64,
    pub index_updates: u64,
    pub hot_writes: u64,
    pub cold_writes: u64,
    /// Device time and IOPS (flow operations per second of device time).
    pub seconds_nandsim: f64,
    pub iops_nandsim: f64,
    pub seconds_slc: f64,
    pub iops_slc: f64,
    /// (MiB written by the workload, pages programmed since its start).
    pub samples: Vec<(f64, f64)>,
    /// Simulated time at the end of the run (the page cache's clock: CPU
    /// time per call plus the device time waited for), 0 without the cache.
    pub simulated_seconds: f64,
    /// Host memory of the simulation at the end of the run: file-system and
    /// UBI tables plus the simulated flash's stored contents.
    pub sim_memory_bytes: u64,
}

fn fs_err(phase: &'static str) -> impl Fn(FsError) -> BenchError {
    move |error| BenchError::Fs { phase, error }
}

/// Runs one point (under the page cache when `fs.page_cache` is on).
pub fn run_point(p: &PointSpec) -> Result<RunResult, BenchError> {
    let fs = p.device.format(&p.fs)?;
    if p.fs.page_cache {
        run_on(p, PageCache::<Fs>::wrap(fs))
    } else {
        run_on(p, fs)
    }
}

fn run_on<F: OnFlash>(p: &PointSpec, mut fs: F) -> Result<RunResult, BenchError> {
    let capacity = fs.statfs().available_bytes;
    let want = capacity as f64 * p.utilisation_pct.min(99) as f64 / 100.0;
    let cold = (want - fileset_bytes(&p.workload) as f64).max(0.0) as u64;
    let prefill_bytes = prefill(&mut fs, cold).map_err(fs_err("pre-fill"))?;
    let mut eng = Engine::new(&mut fs, &p.workload);
    if matches!(p.workload.kind, WorkloadKind::Fileserver | WorkloadKind::Varmail) {
        eng.setup(0.8).map_err(fs_err("fileset"))?;
    }
    eng.fs.sync().map_err(fs_err("sync"))?;
    eng.fs.flash_mut().commit_all().map_err(fs_err("commit"))?;
    let s0 = eng.fs.flash().stats();
    let mut samples = Vec::new();
    let mut next = 0u64;
    let every = p.sample_every_bytes.max(1);
    let p0 = s0.pages_programmed_total;
    let mut sample = |fs: &F, c: &WorkloadCounters| {
        if c.bytes_written >= next {
            let pages = fs.flash().ubi().nand().stats().pages_programmed.total() - p0;
            samples.push((c.bytes_written as f64 / 1048576.0, pages as f64));
            next = c.bytes_written + every;
        }
    };
    let r = match p.workload.kind {
        WorkloadKind::Dd => eng.run_dd(&mut sample),
        WorkloadKind::Untar => eng.run_untar(&mut sample),
        _ => eng.run_filebench(&mut sample),
    };
    r.map_err(fs_err("workload"))?;
    eng.fs.sync().map_err(fs_err("sync"))?;
    let ops = eng.c.clone();
    let s1 = fs.flash().stats();
    let mut r = result(p, capacity, prefill_bytes, ops, &s0, &s1, samples);
    let f = fs.flash();
    r.sim_memory_bytes = (f.memory_bytes() + f.ubi().nand().memory_bytes()) as u64;
    r.simulated_seconds = f.now_ns() as f64 / 1e9;
    Ok(r)
}

fn result(
    p: &PointSpec,
    capacity: u64,
    prefill_bytes: u64,
    ops: WorkloadCounters,
    s0: &Stats,
    s1: &Stats,
    samples: Vec<(f64, f64)>,
) -> RunResult {
    let pages_programmed = s1.pages_programmed_total - s0.pages_programmed_total;
    let pages_programmed_by_cause = flashlab_mtd::ALL_CAUSES
        .iter()
        .map(|c| (c.name().to_string(), s1.pages_programmed.get(*c) - s0.pages_programmed.get(*c)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let pages_read = s1.pages_read_total - s0.pages_read_total;
    let erases = s1.erases - s0.erases;
    let t_n = TimingPreset::NANDSIM_SEED000.seconds(pages_read, pages_programmed, erases);
    let t_s = TimingPreset::SLC.seconds(pages_read, pages_programmed, erases);
    let iops = |t: f64| if t > 0.0 { ops.flowops as f64 / t } else { 0.0 };
    RunResult {
        config: p.config.clone(),
        workload: format!("{:?}", p.workload.kind).to_lowercase(),
        utilisation_pct: p.utilisation_pct,
        capacity_bytes: capacity,
        prefill_bytes,
        pages_programmed,
        pages_programmed_by_cause,
        pages_read,

        erases,
        gc_runs: s1.gc_runs - s0.gc_runs,
        freeable_reclaims: s1.fs.freeable_reclaims - s0.fs.freeable_reclaims,
        reclaims: s1.gc_runs - s0.gc_runs + s1.fs.freeable_reclaims - s0.fs.freeable_reclaims,
        gc_pages_read: s1.fs.gc_pages_read - s0.fs.gc_pages_read,
        commits: s1.commits - s0.commits,
        index_nodes_written: s1.index_nodes_written - s0.index_nodes_written,
        index_updates: s1.fs.index_updates - s0.fs.index_updates,
        hot_writes: s1.fs.hot_writes - s0.fs.hot_writes,
        cold_writes: s1.fs.cold_writes - s0.fs.cold_writes,
        seconds_nandsim: t_n,
        iops_nandsim: iops(t_n),
        seconds_slc: t_s,
        iops_slc: iops(t_s),
        samples,
        ops: ops.clone(),
        sim_memory_bytes: 0,
        simulated_seconds: 0.0,
    }
}
