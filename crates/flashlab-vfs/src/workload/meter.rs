//! Per-phase measurement: simulated time, request latencies, application
//! bytes, the file system's writes by cause and the device's counters.

use super::{DeviceCounters, FsWrites, Measured};
use crate::FileSystem;
use serde::Serialize;

/// What one request moved.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Step {
    pub read: u64,
    pub written: u64,
}

impl Step {
    pub fn read(bytes: u64) -> Step {
        Step { read: bytes, written: 0 }
    }

    pub fn wrote(bytes: u64) -> Step {
        Step { read: 0, written: bytes }
    }
}

/// One phase of a workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PhaseReport {
    pub name: String,
    /// Counted in the run's totals (false for the filler and fileset set-up).
    pub measured: bool,
    pub requests: u64,
    pub app_bytes_read: u64,
    pub app_bytes_written: u64,
    /// Simulated seconds from the phase's first request to its end (the
    /// closing fsync of a write phase included).
    pub seconds: f64,
    /// Application bytes moved per simulated second, MiB/s.
    pub throughput_mib_s: Option<f64>,
    pub latency_us_mean: Option<f64>,
    pub latency_us_p99: Option<f64>,
    pub latency_us_max: Option<f64>,
    /// File-system writes to its device during the phase, by cause.
    pub fs_writes: FsWrites,
    pub device: DeviceCounters,
}

struct Open {
    report: PhaseReport,
    t0: u64,
    w0: FsWrites,
    d0: DeviceCounters,
    latencies_ns: Vec<u64>,
}

/// Collects the phases of one run.
#[derive(Default)]
pub(crate) struct Meter {
    pub phases: Vec<PhaseReport>,
    open: Option<Open>,
    pub enospc_phase: Option<String>,
}

impl Meter {
    /// Starts phase `name` at the file system's clock.
    pub fn begin<F: FileSystem + Measured>(&mut self, fs: &mut F, name: &str, measured: bool) {
        debug_assert!(self.open.is_none(), "phase {name} begun inside another");
        fs.phase_begins(name);
        self.open = Some(Open {
            report: PhaseReport { name: name.to_string(), measured, ..PhaseReport::default() },
            t0: fs.clock_ns(),
            w0: fs.fs_writes(),
            d0: fs.device_counters(),
            latencies_ns: Vec::new(),
        });
    }

    /// One request of the open phase took `latency_ns`.
    pub fn op(&mut self, latency_ns: u64, s: Step) {
        let o = self.open.as_mut().expect("a phase is open");
        o.report.requests += 1;
        o.report.app_bytes_read += s.read;
        o.report.app_bytes_written += s.written;
        o.latencies_ns.push(latency_ns);
    }

    /// Bytes moved outside timed requests (the filler's files).
    pub fn bytes(&mut self, s: Step) {
        let o = self.open.as_mut().expect("a phase is open");
        o.report.app_bytes_read += s.read;
        o.report.app_bytes_written += s.written;
    }

    pub fn enospc(&mut self, phase: &str) {
        self.enospc_phase.get_or_insert_with(|| phase.to_string());
    }

    /// Closes the open phase at the file system's clock.
    pub fn end<F: FileSystem + Measured>(&mut self, fs: &F) {
        let Some(mut o) = self.open.take() else { return };
        let r = &mut o.report;
        r.seconds = fs.clock_ns().saturating_sub(o.t0) as f64 / 1e9;
        let moved = (r.app_bytes_read + r.app_bytes_written) as f64;
        r.throughput_mib_s = (r.seconds > 0.0).then(|| moved / (1u64 << 20) as f64 / r.seconds);
        r.fs_writes = fs.fs_writes().since(&o.w0);
        r.device = fs.device_counters().since(&o.d0);
        let lat = &mut o.latencies_ns;
        if !lat.is_empty() {
            r.latency_us_mean = Some(lat.iter().sum::<u64>() as f64 / lat.len() as f64 / 1e3);
            let k = ((lat.len() as f64 * 0.99).ceil() as usize).clamp(1, lat.len()) - 1;
            r.latency_us_p99 = Some(*lat.select_nth_unstable(k).1 as f64 / 1e3);
            r.latency_us_max = lat.iter().max().map(|m| *m as f64 / 1e3);
        }
        self.phases.push(o.report);
    }
}
