//! File workloads, generic over [`FileSystem`]: `dd`, filebench-like
//! `fileserver` and `varmail`, a small-file `untar` ([`Engine`]), the
//! IOZone-like workload of seed 004 ([`IozoneSpec`]), cold filler files for
//! a device utilisation ([`prefill`]), seed 002's kernel-tree sequence
//! ([`kernel_tree::Tree`], [`run_fs_compare`]) and [`run_workload`], the generic
//! runner of `flashlab fs bench`: any model that implements [`FileSystem`]
//! and [`Measured`] (directly or under the [`crate::PageCache`]) runs every
//! workload and gets the same result object.

mod filebench;
mod fs_compare;
mod iozone;
pub mod kernel_tree;
mod meter;
mod prefill;
mod run;

pub use filebench::{Engine, Fileset, WorkloadCounters, WorkloadKind, WorkloadSpec};
pub use fs_compare::{run_fs_compare, FsCompareSpec};
pub use iozone::{IozoneSpec, PHASES as IOZONE_PHASES};
pub use meter::PhaseReport;
pub use prefill::prefill;
pub use run::{fileset_bytes, run_workload, BenchError, BenchReport, BenchSpec, Workload};

use serde::Serialize;

/// Bytes a file system has written to its device, by cause. A model maps
/// its own write causes onto these five (its docs say how).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FsWrites {
    /// File data (the application's pages, in place or appended).
    pub data: u64,
    /// Metadata written home: inodes, directory blocks, bitmaps; F2FS's and
    /// flashfs's nodes.
    pub metadata: u64,
    /// Journal (jbd2) or log (flashfs's log of buds) writes.
    pub journal: u64,
    /// Checkpoint or commit writes (F2FS's checkpoint packs, NAT and SIT;
    /// flashfs's index, LPT and master nodes).
    pub checkpoint: u64,
    /// Blocks moved by the file system's own cleaning (segment cleaning, GC).
    pub cleaning: u64,
}

impl FsWrites {
    pub fn total(&self) -> u64 {
        self.data + self.metadata + self.journal + self.checkpoint + self.cleaning
    }

    /// The writes since `earlier`.
    pub fn since(&self, earlier: &FsWrites) -> FsWrites {
        FsWrites {
            data: self.data - earlier.data,
            metadata: self.metadata - earlier.metadata,
            journal: self.journal - earlier.journal,
            checkpoint: self.checkpoint - earlier.checkpoint,
            cleaning: self.cleaning - earlier.cleaning,
        }
    }

    fn add(&mut self, o: &FsWrites) {
        self.data += o.data;
        self.metadata += o.metadata;
        self.journal += o.journal;
        self.checkpoint += o.checkpoint;
        self.cleaning += o.cleaning;
    }
}

/// Counters of the device under a file system (the SSD's NAND, or raw flash).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DeviceCounters {
    pub nand_read_pages: u64,
    pub nand_program_pages: u64,
    pub nand_erases: u64,
    /// A hybrid FTL's (BAST, FAST) switch, partial and full merges and the
    /// pages BAST-padding copied (0 under other mappings and on raw flash).
    pub merges_switch: u64,
    pub merges_partial: u64,
    pub merges_full: u64,
    pub padding_pages: u64,
}

impl DeviceCounters {
    pub fn since(&self, earlier: &DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            nand_read_pages: self.nand_read_pages - earlier.nand_read_pages,
            nand_program_pages: self.nand_program_pages - earlier.nand_program_pages,
            nand_erases: self.nand_erases - earlier.nand_erases,
            merges_switch: self.merges_switch - earlier.merges_switch,
            merges_partial: self.merges_partial - earlier.merges_partial,
            merges_full: self.merges_full - earlier.merges_full,
            padding_pages: self.padding_pages - earlier.padding_pages,
        }
    }

    /// Adds `o`'s counts (phases summed).
    pub fn add(&mut self, o: &DeviceCounters) {
        self.nand_read_pages += o.nand_read_pages;
        self.nand_program_pages += o.nand_program_pages;
        self.nand_erases += o.nand_erases;
        self.merges_switch += o.merges_switch;
        self.merges_partial += o.merges_partial;
        self.merges_full += o.merges_full;
        self.padding_pages += o.padding_pages;
    }
}

/// What a file-system model reports to [`run_workload`] besides the file API.
pub trait Measured {
    /// Bytes written to the device so far, by cause.
    fn fs_writes(&self) -> FsWrites;
    /// The device's counters so far.
    fn device_counters(&self) -> DeviceCounters;
    /// The device's full result at the end of a run: the SSD's result object
    /// (WAF, merges, erases, latency) or the raw flash's counters.
    fn device_result(&self) -> serde_json::Value;
    /// Phase `name` of a workload begins (a model recording its requests
    /// marks its log here); nothing by default.
    fn phase_begins(&mut self, _name: &str) {}
}

impl<F: FileSystem + Measured> Measured for crate::PageCache<F> {
    fn fs_writes(&self) -> FsWrites {
        self.inner().fs_writes()
    }

    fn device_counters(&self) -> DeviceCounters {
        self.inner().device_counters()
    }

    fn device_result(&self) -> serde_json::Value {
        self.inner().device_result()
    }

    fn phase_begins(&mut self, name: &str) {
        self.inner_mut().phase_begins(name)
    }
}

use crate::FileSystem;
