//! What the F2FS model reports to `flashlab fs bench`
//! ([`flashlab_vfs::workload::Measured`]).

use crate::fs::F2fs;
use crate::layout::BLOCK_BYTES;
use flashlab_vfs::workload::{DeviceCounters, FsWrites, Measured};

/// F2FS's causes: data blocks written back (in place or not, dentry blocks
/// included) → data; node blocks and segment summaries → metadata; CP
/// packs, NAT and SIT blocks → checkpoint; blocks moved by cleaning →
/// cleaning; no journal. Writes still merging in a log's request are
/// counted here already, in the device's figures once submitted.
impl Measured for F2fs {
    fn fs_writes(&self) -> FsWrites {
        let s = self.stats();
        FsWrites {
            data: s.data_blocks_written * BLOCK_BYTES,
            metadata: s.node_or_metadata_blocks() * BLOCK_BYTES,
            journal: 0,
            checkpoint: s.checkpoint_blocks_written * BLOCK_BYTES,
            cleaning: s.cleaning_blocks() * BLOCK_BYTES,
        }
    }

    fn device_counters(&self) -> DeviceCounters {
        let r = self.with_ssd(|ssd| ssd.result());
        DeviceCounters {
            nand_read_pages: r.nand_read_pages,
            nand_program_pages: r.nand_program_pages,
            nand_erases: r.nand_erases,
            merges_switch: r.merges_switch.unwrap_or(0),
            merges_partial: r.merges_partial.unwrap_or(0),
            merges_full: r.merges_full.unwrap_or(0),
            padding_pages: r.padding_pages.unwrap_or(0),
        }
    }

    /// The SSD's full result object, with the model's own counters and layout under `f2fs`.
    fn device_result(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self.with_ssd(|ssd| ssd.result())).expect("result serialises");
        let l = self.layout();
        v["f2fs"] = serde_json::to_value(self.stats()).expect("stats serialise");
        v["f2fs"]["main_segments"] = l.segment_count_main.into();
        v["f2fs"]["reserved_segments"] = l.reserved_segments.into();
        v["f2fs"]["overprov_segments"] = l.overprov_segments.into();
        v["f2fs"]["overprovision_percent"] = l.overprovision.into();
        v["f2fs"]["free_segments"] = self.free_segments().into();
        v
    }
}
