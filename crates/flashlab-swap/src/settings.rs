//! `[swap]` validated: [`SwapSettings`] from [`flashlab_config::RawSwap`] and the SSD's settings.

use crate::alloc::AllocatorKind;
use crate::area::SLOT_BYTES;
use crate::SwapError;
use flashlab_config::RawSwap;
use flashlab_sim::Settings;

/// The block device under the swap area (`swap.device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    Ssd,
    Disk,
}

/// Everything the swap layer needs, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct SwapSettings {
    pub allocator: AllocatorKind,
    pub ram_pages: u32,
    /// Slots of the area, the header slot included (`si->max`).
    pub slots: u32,
    pub page_cluster: u32,
    pub device: DeviceKind,
    pub trace_cpu_ns: u64,
    pub max_references: u64,
    /// `workload.seed`: the application model and `sys_swapon`'s random start.
    pub seed: u64,
}

impl SwapSettings {
    pub fn resolve(raw: &RawSwap, ssd: &Settings) -> Result<SwapSettings, SwapError> {
        let bad = |key: &str, v: &dyn std::fmt::Display, want: &str| {
            Err(SwapError::Config(format!("swap.{key} = {v}: expected {want}")))
        };
        let Some(allocator) = AllocatorKind::from_name(&raw.allocator) else {
            let names: Vec<_> = AllocatorKind::ALL.iter().map(|k| format!("\"{}\"", k.name())).collect();
            return bad("allocator", &format!("\"{}\"", raw.allocator), &format!("one of {}", names.join(", ")));
        };
        let device = match raw.device.as_str() {
            "ssd" => DeviceKind::Ssd,
            "disk" => DeviceKind::Disk,
            other => return bad("device", &format!("\"{other}\""), "one of \"ssd\", \"disk\""),
        };
        if raw.ram_mib == 0 || raw.ram_mib > 1 << 20 {
            return bad("ram_mib", &raw.ram_mib, "1 to 1048576");
        }
        if raw.page_cluster > 10 {
            return bad("page_cluster", &raw.page_cluster, "0 to 10");
        }
        let capacity = ssd.ftl.logical_pages * ssd.page_bytes();
        let swap_bytes = raw.swap_mib.saturating_mul(1 << 20);
        if raw.swap_mib < 2 || raw.swap_mib > 1 << 24 {
            return bad("swap_mib", &raw.swap_mib, "2 to 16777216");
        }
        if device == DeviceKind::Ssd && swap_bytes > capacity {
            let want = format!("at most the SSD's logical capacity, {} MiB", capacity >> 20);
            return bad("swap_mib", &raw.swap_mib, &want);
        }
        if device == DeviceKind::Ssd && (ssd.page_bytes() > SLOT_BYTES || !SLOT_BYTES.is_multiple_of(ssd.page_bytes()))
        {
            let got = ssd.page_bytes();
            return Err(SwapError::Config(format!(
                "device.page_bytes = {got}: swap needs SSD pages that divide its 4096-byte slots"
            )));
        }
        Ok(SwapSettings {
            allocator,
            ram_pages: (raw.ram_mib * 256) as u32,
            slots: (swap_bytes / SLOT_BYTES) as u32,
            page_cluster: raw.page_cluster,
            device,
            trace_cpu_ns: raw.trace_cpu_ns,
            max_references: raw.max_references,
            seed: ssd.workload.seed,
        })
    }
}
