//! The result object of `flashlab swap` (README, python/flashlab/_result.py).

use serde::Serialize;

/// One run of an application over a swap area.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SwapResult {
    pub app: String,
    pub allocator: String,
    pub device: String,
    pub ram_mib: u64,
    pub swap_mib: u64,
    pub footprint_mib: f64,
    pub references: u64,
    /// `false` when the footprint fits in RAM (nothing was swapped out).
    pub swapping: bool,
    /// CPU time + time blocked on swap I/O and TRIM (`None` in counting mode: CPU only is known).
    pub run_time_s: Option<f64>,
    pub cpu_time_s: f64,
    /// Time the application waited for swap reads and writes.
    pub swap_io_wait_s: Option<f64>,
    /// Time the application waited for TRIMs it sent itself (allocation-time discards).
    pub trim_wait_s: Option<f64>,
    pub swap_outs: u64,
    pub swap_ins: u64,
    pub major_faults: u64,
    pub readahead_pages: u64,
    pub swap_write_requests: u64,
    pub swap_read_requests: u64,
    /// Swap-outs per second of run time.
    pub swap_out_rate_pages_per_s: Option<f64>,
    /// TRIM commands sent during the run (the swapon discard apart).
    pub trim_commands: u64,
    pub trim_slots: u64,
    /// Sum and mean of the TRIMs' device time (issue to completion).
    pub trim_time_s_total: Option<f64>,
    pub trim_time_ms_mean: Option<f64>,
    pub swapon_trim_ms: Option<f64>,
    /// The SSD's: write amplification, erases, GC runs and copies (`None` on the disk).
    pub ssd_waf: Option<f64>,
    pub ssd_erases: Option<u64>,
    pub ssd_gc_runs: Option<u64>,
    pub ssd_gc_copied_pages: Option<u64>,
    pub wall_time_s: f64,
}
