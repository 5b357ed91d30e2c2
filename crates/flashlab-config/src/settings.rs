//! Stage 3: validated settings with typed units.

use flashlab_ftl::FtlSettings;
use flashlab_nand::Geometry;

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

/// Spatial pattern of synthetic requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    Uniform,
    /// `hot_fraction` of the space receives `hot_traffic` of the requests.
    HotCold {
        hot_fraction: f64,
        hot_traffic: f64,
    },
    Sequential,
    Zipf {
        theta: f64,
    },
}

/// When requests are issued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// A new request as soon as one of `queue_depth` outstanding completes.
    Closed { queue_depth: u32 },
    /// Open loop, constant inter-arrival time.
    Fixed { interval_ns: u64 },
    /// Open loop, exponential inter-arrival times.
    Poisson { mean_ns: u64 },
    /// Open loop at the trace's timestamps × scale.
    Trace { time_scale: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticSettings {
    pub pattern: Pattern,
    pub requests: u64,
    pub read_fraction: f64,
    pub trim_fraction: f64,
    /// Request size range in pages (inclusive).
    pub pages_min: u64,
    pub pages_max: u64,
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
    /// The power-cut campaign of `flashlab fs powercut`.
    pub flashfs: flashlab_flashfs::powercut::CampaignSettings,

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
