//! `[swap]`: the swap layer of `flashlab swap` (crate flashlab-swap validates it).

use serde::{Deserialize, Serialize};

/// The `[swap]` section exactly as written; `flashlab_swap::SwapSettings` validates it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSwap {
    /// Slot allocator: `none`, `linux`, `linux-modern`, `semantic`.
    pub allocator: String,
    /// RAM of the machine in MiB (page frames of 4 KiB).
    pub ram_mib: u64,
    /// Size of the swap area in MiB (at most the SSD's logical capacity).
    pub swap_mib: u64,
    /// Swap-in read-ahead of 2^page_cluster slots (Linux `vm.page-cluster`).
    pub page_cluster: u32,
    /// Application model: a TOML file (path relative to the config file).
    pub app: String,
    /// Page-reference trace instead of an application model ("" = none; docs/swap.md).
    pub trace: String,
    /// CPU time charged per reference of a trace.
    pub trace_cpu_ns: u64,
    /// Block device under the swap area: `ssd` (the configured SSD) or `disk`.
    pub device: String,
    /// Stop after this many references (0 = the whole model or trace).
    pub max_references: u64,
}

impl Default for RawSwap {
    fn default() -> Self {
        RawSwap {
            allocator: "linux".into(),
            ram_mib: 1024,
            swap_mib: 2048,
            page_cluster: 3,
            app: String::new(),
            trace: String::new(),
            trace_cpu_ns: 1000,
            device: "ssd".into(),
            max_references: 0,
        }
    }
}
