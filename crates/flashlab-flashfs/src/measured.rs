//! What flashfs and the JFFS2 baseline report to `flashlab fs bench`
//! ([`flashlab_vfs::workload::Measured`]): the raw flash's pages programmed,
//! mapped onto the shared write causes, and the flash's counters.

use crate::jffs2::Jffs2;
use crate::Fs;
use flashlab_mtd::{Cause, MtdStats};
use flashlab_vfs::workload::{DeviceCounters, FsWrites, Measured};

fn device(m: &MtdStats) -> DeviceCounters {
    DeviceCounters {
        nand_read_pages: m.pages_read.total(),
        nand_program_pages: m.pages_programmed.total(),
        nand_erases: m.erases.total(),
        ..DeviceCounters::default()
    }
}

/// flashfs's causes: data head → data; base head (inodes, directory entries),
/// mount and other → metadata; the log of buds → journal; a commit's index,
/// LPT, master and orphan nodes → checkpoint; GC → cleaning. UBI's own writes
/// (headers, wear levelling, scrubbing, fastmap) sit below the file system,
/// as an FTL's do, and count in the device's figures only.
impl Measured for Fs {
    fn fs_writes(&self) -> FsWrites {
        let m = self.ubi().nand().stats();
        let page = self.ubi().nand().settings().page_bytes as u64;
        let p = |cs: &[Cause]| cs.iter().map(|c| m.pages_programmed.get(*c)).sum::<u64>() * page;
        FsWrites {
            data: p(&[Cause::Data]),
            metadata: p(&[Cause::Base, Cause::Mount, Cause::Other]),
            journal: p(&[Cause::Log]),
            checkpoint: p(&[Cause::Index, Cause::Lpt, Cause::Meta]),
            cleaning: p(&[Cause::Gc]),
        }
    }

    fn device_counters(&self) -> DeviceCounters {
        device(self.ubi().nand().stats())
    }

    fn device_result(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self.stats()).expect("stats serialise");
        v["nand"] = serde_json::to_value(self.ubi().nand().stats()).expect("stats serialise");
        v
    }
}

/// JFFS2 writes every node through one path; the model counts node bytes by
/// kind as it appends them: data nodes → data, directory entries →
/// metadata, nodes moved by GC → cleaning (page padding is left out).
impl Measured for Jffs2 {
    fn fs_writes(&self) -> FsWrites {
        let w = &self.writes;
        FsWrites { data: w.data_bytes, metadata: w.dirent_bytes, journal: 0, checkpoint: 0, cleaning: w.gc_bytes }
    }

    fn device_counters(&self) -> DeviceCounters {
        device(self.nand().stats())
    }

    fn device_result(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.stats).expect("stats serialise");
        v["nand"] = serde_json::to_value(self.nand().stats()).expect("stats serialise");
        v["memory_bytes"] = self.memory_bytes().into();
        v
    }
}
