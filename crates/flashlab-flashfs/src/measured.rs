//! What flashfs and the JFFS2 baseline report to `flashlab fs bench`
//! ([`flashlab_vfs::workload::Measured`]): the raw flash's pages programmed,
//! mapped onto the shared write causes, and the flash's counters.

use crate::jffs2::Jffs2;
use crate::Fs;
use flashlab_mtd::{Cause, Nand};
use flashlab_vfs::workload::{DeviceCounters, FsWrites, Measured};

/// The flash under the file system: the raw NAND's counters, or on
/// block2mtd the SSD's NAND (the MTD's own counters are in `device.nand`).
fn device(nand: &Nand) -> DeviceCounters {
    if let Some(b) = nand.block2mtd() {
        let r = b.ssd_result();
        return DeviceCounters {
            nand_read_pages: r.nand_read_pages,
            nand_program_pages: r.nand_program_pages,
            nand_erases: r.nand_erases,
        };
    }
    let m = nand.stats();
    DeviceCounters {
        nand_read_pages: m.pages_read.total(),
        nand_program_pages: m.pages_programmed.total(),
        nand_erases: m.erases.total(),
    }
}

/// `device.nand` (the MTD's counters) and, on block2mtd, `device.block2mtd`
/// (its requests) and `device.ssd` (the SSD's full result object).
fn add_nand(v: &mut serde_json::Value, nand: &Nand) {
    v["nand"] = serde_json::to_value(nand.stats()).expect("stats serialise");
    if let Some(b) = nand.block2mtd() {
        v["block2mtd"] = serde_json::to_value(b.stats()).expect("stats serialise");
        v["ssd"] = serde_json::to_value(b.ssd_result()).expect("result serialises");
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
        device(self.ubi().nand())
    }

    fn device_result(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self.stats()).expect("stats serialise");
        add_nand(&mut v, self.ubi().nand());
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
        device(self.nand())
    }

    fn device_result(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.stats).expect("stats serialise");
        add_nand(&mut v, self.nand());
        v["memory_bytes"] = self.memory_bytes().into();
        v
    }
}
