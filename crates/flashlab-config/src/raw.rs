//! Stage 1: the configuration exactly as written in TOML. Every section and key has
//! a default, so an empty file is a valid configuration.

use serde::{Deserialize, Serialize};

/// The whole configuration file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawConfig {
    pub device: RawDevice,
    pub timing: RawTiming,
    pub ftl: RawFtl,
    pub gc: RawGc,
    pub workload: RawWorkload,
    pub buffer: RawBuffer,
    pub placement: RawPlacement,
    pub wear: RawWear,
    pub hotness: RawHotness,
    /// `flashlab fs powercut`: the raw-flash device, UBI, flashfs and the campaign.
    pub flashfs: flashlab_flashfs::powercut::CampaignSettings,
    /// `flashlab fs bench`: the file system and its workload.
    pub fs: crate::fs::RawFs,
    /// `[fs] device = "block2mtd"`: the MTD that flashfs and JFFS2 get on
    /// the SSD of `[device]`, `[ftl]` and `[timing]` (docs/block2mtd.md).
    pub block2mtd: flashlab_mtd::Block2MtdSettings,
    /// `flashlab swap`: the swap area, its allocator, RAM and application.
    pub swap: crate::swap::RawSwap,
    pub sim: RawSim,
}

/// `flashlab hotness`: which identifiers to compare, the oracle's definition of hot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawHotness {
    /// Identifiers compared side by side, e.g. `[{ kind = "multi-hash", counters = 8192 }]`.
    pub identifiers: Vec<flashlab_hotdata::IdentifierSpec>,
    /// The oracle: hot = written at least `oracle_min_writes` times in the last `oracle_window_writes` writes.
    pub oracle_window_writes: u64,
    pub oracle_min_writes: u64,
    /// Writes seen before accuracy and WAF are counted.
    pub warmup_writes: u64,
    /// Also measure the WAF of the page FTL when each identifier splits host writes into a hot and a cold stream.
    pub waf: bool,
}

impl Default for RawHotness {
    fn default() -> Self {
        use flashlab_hotdata::{IdentifierKind, IdentifierSpec};
        RawHotness {
            identifiers: IdentifierKind::ALL.iter().map(|&k| IdentifierSpec::default_for(k)).collect(),
            oracle_window_writes: 5000,
            oracle_min_writes: 4,
            warmup_writes: 0,
            waf: false,
        }
    }
}

/// The optional DRAM write buffer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawBuffer {
    /// Buffer size in bytes (whole pages); 0 = no buffer.
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawDevice {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
    /// (physical − logical) / physical capacity.
    pub spare_factor: f64,
}

impl Default for RawDevice {
    fn default() -> Self {
        RawDevice {
            channels: 4,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 1024,
            pages_per_block: 64,
            page_bytes: 2048,
            spare_factor: 0.2,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawTiming {
    /// `false` = counting mode: no latency model.
    pub enabled: bool,
    pub read_us: f64,
    pub program_us: f64,
    pub erase_ms: f64,
    /// Channel transfer time per byte.
    pub byte_ns: f64,
    /// Command/address cycles per operation.
    pub command_ns: f64,
    /// A named parameter set (`custom`, `ssdsim`, `nandsim-seed000`, `slc`, `mlc`, `tlc`); it
    /// fills the time keys this file does not set.
    pub preset: String,
    /// GC migrations use copyback (no channel transfer).
    pub copyback: bool,
    /// Copyback only between pages of the same parity (SSDsim's restriction).
    pub copyback_same_parity: bool,
    /// Host reads/programs on several planes of a die at one page offset share one array operation.
    pub multiplane: bool,
    /// Dies of a chip work in parallel (off: a chip is one busy timeline).
    pub die_interleaving: bool,
    /// Channel bus arbitration between host and GC transfers: `fifo` (booking order; GC
    /// booked when issued) or `host-first` (host before any GC transfer not yet started).
    pub bus_arbitration: String,
    /// A TRIM command's fixed controller cost (docs/swap.md, fitted to seed 003's figure 3).
    pub trim_command_us: f64,
    /// A TRIM's controller work per mapped logical page it unmaps (map entry and
    /// valid-page bookkeeping); unmapped pages cost nothing beyond their FTL work.
    pub trim_page_ns: f64,
    /// `false` (default): TRIM is non-queued as SATA TRIM was: it waits for the queue to
    /// drain and blocks later requests until it completes; `true`: queued TRIM.
    pub trim_queued: bool,
    /// Run the timing model on a second thread beside the FTL (`flashlab_sim`'s
    /// `pipeline.rs`): the same result bit for bit, less wall time only where a core is
    /// free for it (more CPU time in all): off by default.
    pub pipeline: bool,
}

impl Default for RawTiming {
    fn default() -> Self {
        RawTiming {
            enabled: true,
            read_us: 20.0,
            program_us: 200.0,
            erase_ms: 1.5,
            byte_ns: 25.0,
            command_ns: 0.0,
            preset: "custom".into(),
            copyback: false,
            copyback_same_parity: true,
            multiplane: false,
            die_interleaving: true,
            bus_arbitration: "fifo".into(),
            trim_command_us: 1000.0,
            trim_page_ns: 1550.0,
            trim_queued: false,
            pipeline: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawFtl {
    /// Mapping scheme: `page`, `block`, `bast`, `bast-padding`, `fast` (docs/mapping.md).
    pub mapping: String,
    /// Allocation stripe order, first letter fastest: a permutation of `cwdp`.
    pub stripe_order: String,
    /// GC migrations get their own write frontier.
    pub separate_gc_frontier: bool,
    /// Host write streams (temperature classes), each with its own frontier block per plane.
    pub host_streams: u32,
    /// GC write streams (temperature classes of migrated pages).
    pub gc_streams: u32,
    /// Hybrid schemes (`bast`, `bast-padding`, `fast`): log blocks (mapping units) in the pool.
    pub log_blocks: u32,
    /// Log block reclaimed when the pool is exhausted: `lru`, `fifo`, `random`.
    pub log_victim: String,
    /// `fast`: sequential log blocks among `log_blocks`.
    pub fast_seq_log_blocks: u32,
    /// `dftl`: entries of the cached mapping table.
    pub map_cache_entries: u64,
    /// `dftl`: bytes per mapping entry in a translation page.
    pub map_entry_bytes: u32,
    /// `dftl`: `paper` (Gupta et al. 2009), `flashsim-c`, `flashsim-cpp`, `wiscsim`.
    pub dftl_variant: String,
    /// Block-mapped schemes: blocks at the same offset in consecutive planes forming one
    /// mapping unit (1, 2, 4 or 8).
    pub superblock_blocks: u32,
}

impl Default for RawFtl {
    fn default() -> Self {
        RawFtl {
            mapping: "page".into(),
            stripe_order: "cwdp".into(),
            separate_gc_frontier: true,
            host_streams: 1,
            gc_streams: 1,
            log_blocks: 64,
            log_victim: "lru".into(),
            fast_seq_log_blocks: 1,
            map_cache_entries: 65536,
            map_entry_bytes: 4,
            dftl_variant: "paper".into(),
            superblock_blocks: 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawGc {
    pub victim: String,
    pub trigger: String,
    /// Per-plane free blocks below which GC runs.
    pub free_blocks_min: u32,
    /// `gc.trigger = "free-ratio"`: a plane's free-page share below which each host page
    /// written to it starts one blocking GC run (SSDsim's `gc hard threshold`, 0.10).
    pub free_ratio_min: f64,
    /// Candidates sampled by `d-choices`.
    pub d_choices: u32,
    /// `blocking`: GC runs to completion when a plane falls below `free_blocks_min`.
    /// `preemptible`: GC also runs step by step in a die's idle time while its plane has
    /// fewer than `background_free_blocks` free blocks, yielding to host operations after
    /// each page migration; below `free_blocks_min` it becomes urgent and blocking.
    pub mode: String,
    pub background_free_blocks: u32,
    /// Background GC collects a victim only if at most this fraction of it is valid.
    pub background_max_valid: f64,
    /// `none`, `basic-gc`, `ssdsim-basic`, `dt-gc`, `wpo-gc`: fills the GC, placement and stream keys the file does not set.
    pub preset: String,
    /// DT-GC coefficients: H = dt_a·E + dt_b·(1 − Vp), T = dt_big_a·E + dt_big_b·(1 − Vp) + dt_c·Ip.
    pub dt_a: f64,
    pub dt_b: f64,
    pub dt_big_a: f64,
    pub dt_big_b: f64,
    pub dt_c: f64,
    /// Over-provisioning ratio E; negative = device.spare_factor.
    pub dt_e: f64,
    /// Host pages written to a plane between two DT-GC checks.
    pub dt_check_pages: u32,
    /// WPO-GC's k in a(Δε) = 2 / (1 + e^(k/Δε)).
    pub wpo_k: f64,
    /// WECO's fixed wear weight.
    pub weco_weight: f64,
}

impl Default for RawGc {
    fn default() -> Self {
        RawGc {
            victim: "greedy".into(),
            trigger: "threshold".into(),
            free_blocks_min: 2,
            free_ratio_min: 0.10,
            d_choices: 10,
            mode: "blocking".into(),
            background_free_blocks: 4,
            background_max_valid: 0.9,
            preset: "none".into(),
            dt_a: 0.3,
            dt_b: 0.1,
            dt_big_a: 0.5,
            dt_big_b: 0.3,
            dt_c: 0.2,
            dt_e: -1.0,
            dt_check_pages: 64,
            wpo_k: 10.0,
            weco_weight: 0.5,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawWorkload {
    /// `synthetic` or `trace`.
    pub kind: String,
    /// `uniform`, `hotcold`, `sequential`, `zipf`.
    pub pattern: String,
    pub requests: u64,
    pub read_fraction: f64,
    pub trim_fraction: f64,
    /// Request size; 0 = one page.
    pub request_bytes: u64,
    /// When larger than `request_bytes`: sizes uniform in [request_bytes, request_bytes_max], in whole pages.
    pub request_bytes_max: u64,
    pub hot_fraction: f64,
    pub hot_traffic: f64,
    pub zipf_theta: f64,
    pub seed: u64,
    pub prefill: bool,
    /// After the prefill: this many uniform random single-page writes, untimed and not
    /// counted, to age the device to steady state (also before a trace).
    pub aging_writes: u64,
    pub warmup: u64,
    /// `closed` (fixed queue depth), `fixed` (constant inter-arrival), `poisson`.
    pub arrival: String,
    pub queue_depth: u32,
    pub interarrival_us: f64,
    pub trace_path: String,
    pub trace_format: String,
    /// Multiply trace timestamps by this factor.
    pub time_scale: f64,
    /// Addresses beyond the logical capacity: `fold` (modulo) or `error`.
    pub address_overflow: String,
    /// Several devices/ASUs in a trace: `fold` into one space or `separate` ranges.
    pub devices: String,
    /// With `devices = "separate"`: the logical space is split into this many equal ranges.
    pub device_count: u32,
    pub skip_bad_lines: bool,
    /// Before the run, write (untimed, uncounted) every page the workload reads before
    /// writing it, as SSDsim's `pre_process_page` does; otherwise such reads find
    /// unmapped pages and cost no flash time.
    pub prewrite_reads: bool,
    /// The blkparse event (action letter) replayed as requests: `D` issued to the driver,
    /// `Q` queued, `C` completed, ...
    pub blkparse_action: String,
}

impl Default for RawWorkload {
    fn default() -> Self {
        RawWorkload {
            kind: "synthetic".into(),
            pattern: "uniform".into(),
            requests: 1_000_000,
            read_fraction: 0.0,
            trim_fraction: 0.0,
            request_bytes: 0,
            request_bytes_max: 0,
            hot_fraction: 0.2,
            hot_traffic: 0.8,
            zipf_theta: 0.99,
            seed: 1,
            prefill: false,
            aging_writes: 0,
            warmup: 0,
            arrival: "closed".into(),
            queue_depth: 1,
            interarrival_us: 0.0,
            trace_path: String::new(),
            trace_format: "auto".into(),
            time_scale: 1.0,
            address_overflow: "fold".into(),
            devices: "fold".into(),
            device_count: 1,
            skip_bad_lines: false,
            prewrite_reads: false,
            blkparse_action: "D".into(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSim {
    /// Check every invariant as the run goes (slow).
    pub strict: bool,
    /// Keep a content tag per physical page and check every read against it.
    pub track_content: bool,
}

/// Placement by temperature (host writes and GC migrations into temperature streams).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawPlacement {
    pub enabled: bool,
    /// The identifier that classifies writes (default: seed 001's LPN temperature table).
    pub identifier: flashlab_hotdata::IdentifierSpec,
}

impl Default for RawPlacement {
    fn default() -> Self {
        RawPlacement {
            enabled: false,
            identifier: flashlab_hotdata::IdentifierSpec::default_for(
                flashlab_hotdata::IdentifierKind::TemperatureTable,
            ),
        }
    }
}

/// Wear levelling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawWear {
    /// Open the least-worn free block.
    pub dynamic: bool,
    /// Static: move the data of a plane's least-worn block when its erase spread exceeds this (0 = off).
    pub static_threshold: u32,
    /// Check the spread every this many erases per plane.
    pub static_check_erases: u32,
}

impl Default for RawWear {
    fn default() -> Self {
        RawWear { dynamic: false, static_threshold: 0, static_check_erases: 32 }
    }
}
