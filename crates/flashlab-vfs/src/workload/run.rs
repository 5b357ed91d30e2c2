//! The generic runner of `flashlab fs bench`: utilisation by filler files,
//! then the workload, phase by phase, into one [`BenchReport`].

use super::filebench::{Engine, WorkloadCounters, WorkloadKind, WorkloadSpec};
use super::iozone::{self, IozoneSpec};
use super::meter::{Meter, PhaseReport, Step};
use super::{prefill, DeviceCounters, FsWrites, Measured};
use crate::{Errno, FileSystem};
use serde::Serialize;
use thiserror::Error;

/// Which workload, with its parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    Iozone(IozoneSpec),
    /// `dd`, `fileserver`, `varmail` or `untar`.
    Files(WorkloadSpec),
}

impl Workload {
    pub fn name(&self) -> String {
        match self {
            Workload::Iozone(_) => "iozone".into(),
            Workload::Files(w) => format!("{:?}", w.kind).to_lowercase(),
        }
    }
}

/// One `fs bench` run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchSpec {
    pub workload: Workload,
    /// Device utilisation to reach before the workload, in percent of the
    /// space available on the empty file system (filler files plus the
    /// workload's own files), in (0, 100).
    pub utilisation_pct: f64,
}

/// Why a run could not be carried out (ENOSPC is a result, not an error).
#[derive(Debug, Error)]
pub enum BenchError<E: std::error::Error> {
    #[error("{key} = {value}: {expected}")]
    Invalid { key: &'static str, value: String, expected: String },
    #[error("file system error during {phase}: {error}")]
    Fs { phase: String, error: E },
}

/// The result of one run: totals over the measured phases, then every phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    pub workload: String,
    pub utilisation_pct: f64,
    /// Space available on the empty file system (`statfs` `f_bavail`).
    pub capacity_bytes: u64,
    pub filler_bytes: u64,
    pub app_bytes_read: u64,
    pub app_bytes_written: u64,
    /// File-system writes to the device by cause, and their sum.
    pub fs_writes: FsWrites,
    pub fs_write_bytes: u64,
    /// fs_write_bytes / app_bytes_written (None without application writes).
    pub fs_waf: Option<f64>,
    pub device: DeviceCounters,
    /// The workload ran out of space (in `enospc_phase`); the phases before
    /// it and the part done are reported.
    pub enospc: bool,
    pub enospc_phase: Option<String>,
    /// The file system's clock at the end.
    pub simulated_seconds: f64,
    /// The filebench-style counters (`dd`, `fileserver`, `varmail`, `untar`).
    pub ops: Option<WorkloadCounters>,
    pub phases: Vec<PhaseReport>,
}

fn fs_err<E: std::error::Error>(phase: &str) -> impl Fn(E) -> BenchError<E> + '_ {
    move |error| BenchError::Fs { phase: phase.to_string(), error }
}

/// Bytes of the fileset a filebench personality sets up (80 % of its files).
pub fn fileset_bytes(w: &WorkloadSpec) -> u64 {
    match w.kind {
        WorkloadKind::Fileserver | WorkloadKind::Varmail => (w.files as f64 * 0.8) as u64 * w.file_bytes as u64,
        WorkloadKind::Dd | WorkloadKind::Untar => 0,
    }
}

/// Runs `spec` on a freshly formatted file system `fs` (directly or under
/// the page cache); every model's `fs bench` arm calls this.
pub fn run_workload<F: FileSystem + Measured>(
    fs: &mut F,
    spec: &BenchSpec,
) -> Result<BenchReport, BenchError<F::Error>> {
    let u = spec.utilisation_pct;
    if !(u > 0.0 && u < 100.0) {
        return Err(BenchError::Invalid {
            key: "fs.workload.utilisation",
            value: u.to_string(),
            expected: "expected a percentage in (0, 100)".into(),
        });
    }
    let capacity = fs.statfs().available_bytes;
    let own = match &spec.workload {
        Workload::Iozone(io) => io.file_bytes,
        Workload::Files(w) => fileset_bytes(w),
    };
    if own > capacity {
        return Err(BenchError::Invalid {
            key: "fs.workload.file_kib",
            value: (own >> 10).to_string(),
            expected: format!("expected the workload's files to fit the file system's {} MiB", capacity >> 20),
        });
    }
    let filler = (capacity as f64 * u / 100.0 - own as f64).max(0.0) as u64;
    let mut m = Meter::default();
    m.begin(fs, "fill", false);
    let written = prefill(fs, filler).map_err(fs_err("fill"))?;
    m.bytes(Step::wrote(written));
    if written < filler {
        m.enospc("fill");
    }
    fs.sync().map_err(fs_err("fill"))?;
    fs.drop_caches().map_err(fs_err("fill"))?;
    m.end(fs);
    let mut ops = None;
    if m.enospc_phase.is_none() {
        match &spec.workload {
            Workload::Iozone(io) => iozone::run(fs, io, &mut m).map_err(fs_err("iozone"))?,
            Workload::Files(w) => ops = Some(files(fs, w, &mut m)?),
        }
    }
    Ok(report(fs, spec, capacity, filler, m, ops))
}

/// Set-up of the fileset (unmeasured), then the personality until its write target.
fn files<F: FileSystem + Measured>(
    fs: &mut F,
    w: &WorkloadSpec,
    m: &mut Meter,
) -> Result<WorkloadCounters, BenchError<F::Error>> {
    let mut eng = Engine::new(fs, w);
    if matches!(w.kind, WorkloadKind::Fileserver | WorkloadKind::Varmail) {
        m.begin(eng.fs, "setup", false);
        match eng.setup(0.8) {
            Err(e) if F::errno(&e) == Errno::ENOSPC => m.enospc("setup"),
            r => r.map_err(fs_err("setup"))?,
        }
        m.bytes(Step::wrote(eng.c.bytes_written));
        m.end(eng.fs);
        if m.enospc_phase.is_some() {
            return Ok(eng.c);
        }
    }
    eng.fs.sync().map_err(fs_err("setup"))?;
    eng.fs.commit().map_err(fs_err("setup"))?;
    m.begin(eng.fs, "run", true);
    let (mut last_t, mut last) = (eng.fs.clock_ns(), eng.c.clone());
    let mut sample = |f: &F, c: &WorkloadCounters| {
        let t = f.clock_ns();
        let step = Step { read: c.bytes_read - last.bytes_read, written: c.bytes_written - last.bytes_written };
        m.op(t - last_t, step);
        (last_t, last) = (t, c.clone());
    };
    let r = match w.kind {
        WorkloadKind::Dd => eng.run_dd(&mut sample),
        WorkloadKind::Untar => eng.run_untar(&mut sample),
        _ => eng.run_filebench(&mut sample),
    };
    r.map_err(fs_err("run"))?;
    eng.fs.sync().map_err(fs_err("run"))?;
    if eng.c.enospc > 0 {
        m.enospc("run");
    }
    m.end(eng.fs);
    Ok(eng.c)
}

fn report<F: FileSystem + Measured>(
    fs: &F,
    spec: &BenchSpec,
    capacity: u64,
    filler: u64,
    m: Meter,
    ops: Option<WorkloadCounters>,
) -> BenchReport {
    let measured = || m.phases.iter().filter(|p| p.measured);
    let mut fs_writes = FsWrites::default();
    let mut device = DeviceCounters::default();
    for p in measured() {
        fs_writes.add(&p.fs_writes);
        device.add(&p.device);
    }
    let app_bytes_written = measured().map(|p| p.app_bytes_written).sum::<u64>();
    BenchReport {
        workload: spec.workload.name(),
        utilisation_pct: spec.utilisation_pct,
        capacity_bytes: capacity,
        filler_bytes: filler,
        app_bytes_read: measured().map(|p| p.app_bytes_read).sum(),
        app_bytes_written,
        fs_write_bytes: fs_writes.total(),
        fs_waf: (app_bytes_written > 0).then(|| fs_writes.total() as f64 / app_bytes_written as f64),
        fs_writes,
        device,
        enospc: m.enospc_phase.is_some(),
        enospc_phase: m.enospc_phase.clone(),
        simulated_seconds: fs.clock_ns() as f64 / 1e9,
        ops,
        phases: m.phases,
    }
}
