//! Swap on flash with TRIM (seed 003, issue 16): a Linux-like swap area
//! ([`area`], one `swap_map` counter per 4 KiB slot, clusters of 256 slots), slot
//! allocators as a closed enum ([`alloc`]: `none`, `linux` = 2.6.34, `linux-modern`,
//! `semantic` = the seed's), a memory model ([`memory`]: frames, CLOCK, swap cache,
//! read-ahead), application models and page-reference traces ([`app`], [`trace`]),
//! over a block device ([`device`]: the streaming SSD of flashlab-sim, any FTL and
//! timing, or the disk baseline of [`disk`]). [`run`] runs one application and returns
//! a [`SwapResult`]. No file I/O and no wall clock: callers pass file contents.

pub mod alloc;
pub mod app;
pub mod area;
pub mod device;
pub mod disk;
pub mod memory;
mod result;
mod settings;
mod system;
pub mod trace;

pub use alloc::{Allocator, AllocatorKind, DeviceFlags};
pub use app::{AppModel, Ref};
pub use device::BlockDev;
pub use result::SwapResult;
pub use settings::{DeviceKind, SwapSettings};
pub use system::{run, SwapSystem, Workload};

/// Why a swap run stopped.
#[derive(Debug, thiserror::Error)]
pub enum SwapError {
    #[error("{0}")]
    Config(String),
    #[error("application model {0}")]
    App(String),
    #[error("reference trace {0}")]
    Trace(String),
    #[error(transparent)]
    Sim(#[from] flashlab_sim::SimError),
    #[error("swap area full: {0}")]
    Full(String),
    #[error("content check failed: {0}")]
    Content(String),
}
