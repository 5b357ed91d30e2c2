//! The validated settings of an SSD run: device, timing, FTL, GC scheduling, buffer,
//! hot-data comparison and workload. flashlab-config resolves its raw TOML into these;
//! this crate owns them so the engine depends on no configuration or file-system crate.

use flashlab_ftl::FtlSettings;
use flashlab_nand::Geometry;
pub use flashlab_workload::{Arrival, Pattern, SyntheticSettings};

/// Array and channel times, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingSettings {
    pub read_ns: u64,
    pub program_ns: u64,
    pub erase_ns: u64,
    /// Per byte, in picoseconds (so fractional ns per byte stay exact).
    pub byte_ps: u64,
    pub command_ns: u64,
    /// GC migrations by copyback (no channel transfer).
    pub copyback: bool,
    /// Copyback only between pages of equal parity; otherwise read out and program in.
    pub copyback_same_parity: bool,
    pub multiplane: bool,
    pub die_interleaving: bool,
    /// Who goes first when host and GC transfers want the channel bus.
    pub bus_arbitration: BusArbitration,
    /// A TRIM command's fixed cost and its cost per mapped logical page unmapped.
    pub trim_command_ns: u64,
    pub trim_page_ns: u64,
    /// Queued TRIM (`false`: non-queued, drains the queue and blocks later requests).
    pub trim_queued: bool,
    /// Book the timeline on a second thread where the run allows it (`pipeline.rs`;
    /// `timing.pipeline`): same results, more CPU time, less wall time on a free core.
    pub pipeline: bool,
}

/// Arbitration of a channel bus between host and GC transfers (`timing.bus_arbitration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusArbitration {
    /// Booking order (GC booked when the FTL issues it); each transfer in the earliest
    /// free slot at or after it is ready.
    Fifo,
    /// A host transfer also goes before any GC transfer not yet started when it is ready.
    HostFirst,
}

/// How GC is scheduled against host I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcMode {
    /// GC runs to completion right after the write that crossed the threshold.
    Blocking,
    /// Also step by step in idle die time below `background_free_blocks`.
    Preemptible { background_free_blocks: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    Fold,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceMode {
    Fold,
    Separate,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceSettings {
    pub path: String,
    /// `auto` or a format name (checked by the trace reader).
    pub format: String,
    pub devices: DeviceMode,
    pub device_count: u32,
    pub skip_bad_lines: bool,
    /// The blkparse action letter replayed (`D` by default).
    pub blkparse_action: char,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Synthetic(SyntheticSettings),
    Trace(TraceSettings),
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSettings {
    pub source: Source,
    pub arrival: Arrival,
    pub seed: u64,
    pub prefill: bool,
    pub aging_writes: u64,
    pub warmup: u64,
    pub overflow: Overflow,
    /// Write every page read before it is written, untimed, before the run (SSDsim).
    pub prewrite_reads: bool,
}

/// Everything a run needs, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub geometry: Geometry,
    pub spare_factor: f64,
    /// `None` = counting mode.
    pub timing: Option<TimingSettings>,
    pub ftl: FtlSettings,
    pub gc_mode: GcMode,
    /// DRAM write-buffer capacity in pages (0 = none).
    pub buffer_pages: u64,
    pub hotness: HotnessSettings,

    pub workload: WorkloadSettings,
}

impl Settings {
    pub fn page_bytes(&self) -> u64 {
        self.geometry.page_bytes as u64
    }
}

/// What `flashlab hotness` compares.
#[derive(Clone, Debug, PartialEq)]
pub struct HotnessSettings {
    pub identifiers: Vec<flashlab_hotdata::IdentifierSpec>,
    pub oracle: flashlab_hotdata::WindowOracleParams,
    pub warmup_writes: u64,
    pub waf: bool,
}
