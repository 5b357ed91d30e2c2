//! What `flashlab fs bench` reads besides the file API ([`Measured`]):
//! bytes written by cause and the SSD's counters and result.
//!
//! Causes map as: data → data; metadata written home by the flusher →
//! metadata; journal blocks (revoke, descriptor, copies, commit) → journal;
//! checkpoint writes and the journal superblock → checkpoint; no cleaning.

use crate::fs::Ext4;
use crate::layout::BLOCK;
use flashlab_vfs::workload::{DeviceCounters, FsWrites, Measured};

impl Measured for Ext4 {
    fn fs_writes(&self) -> FsWrites {
        let s = &self.stats;
        FsWrites {
            data: s.data_blocks_written * BLOCK,
            metadata: s.metadata_blocks_written * BLOCK,
            journal: s.journal_blocks_written * BLOCK,
            checkpoint: s.checkpoint_blocks_written * BLOCK,
            cleaning: 0,
        }
    }

    fn device_counters(&self) -> DeviceCounters {
        self.ssd.result_now().map_or(DeviceCounters::default(), |r| DeviceCounters {
            nand_read_pages: r.nand_read_pages,
            nand_program_pages: r.nand_program_pages,
            nand_erases: r.nand_erases,
            merges_switch: r.merges_switch.unwrap_or(0),
            merges_partial: r.merges_partial.unwrap_or(0),
            merges_full: r.merges_full.unwrap_or(0),
            padding_pages: r.padding_pages.unwrap_or(0),
        })
    }

    fn device_result(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self.ssd.result_now()).expect("result serialises");
        if let Some(o) = v.as_object_mut() {
            o.insert("ext4".into(), serde_json::to_value(&self.stats).expect("stats serialise"));
        }
        v
    }

    fn phase_begins(&mut self, name: &str) {
        self.mark_phase(name);
    }
}
