//! UBI counters.

use serde::Serialize;

/// What UBI did since attach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UbiStats {
    /// "format", "scan" or "fastmap".
    pub attach_mode: String,
    /// NAND operations spent attaching (reads, and erases of stale PEBs).
    pub attach_ops: u64,
    /// NAND pages (and OOB areas) read while attaching.
    pub attach_pages_read: u64,
    pub wl_moves: u64,
    pub scrubs: u64,
    pub tortures: u64,
    pub bad_pebs_marked: u64,
    pub fastmap_writes: u64,
    pub leb_changes: u64,
    pub peb_erases: u64,
}
