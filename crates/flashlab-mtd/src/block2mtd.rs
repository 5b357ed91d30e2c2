//! block2mtd: an MTD device on a block device — here the simulated SSD of
//! `flashlab_sim::Ssd` — as Linux's drivers/mtd/devices/block2mtd.c does.
//!
//! What the kernel driver does and what this model does:
//! - `block2mtd_read` copies from the block device's page cache, one page
//!   (`PAGE_SIZE`, 4 KiB) at a time through `read_mapping_page`, which reads
//!   a page that is not up to date from the device (one 4 KiB request, no
//!   read-ahead): here likewise — each 4 KiB page of the MTD's span an MTD
//!   read of programmed bytes touches is one SSD read of that page unless
//!   the page is cached ([`Block2Mtd::drop_caches`] empties the cache, as
//!   `echo 3 > /proc/sys/vm/drop_caches` does; there is no eviction under
//!   memory pressure: the host is assumed to hold the device's pages it
//!   touched). Bytes known to be erased (the MTD's erased state is
//!   remembered in memory) read as 0xFF without reaching the SSD.
//! - `_block2mtd_write` copies into the page cache and dirties the pages:
//!   here each MTD program is one SSD write of exactly its bytes, issued at
//!   once (write-through: repeated writes of one 4 KiB page are not merged
//!   before writeback as the kernel's may be, and the kernel's read of a page
//!   not yet cached before it copies into it is not made); the pages written
//!   are cached afterwards.
//! - `_block2mtd_erase` reads every page of the erase block and overwrites
//!   with 0xFF those that are not already all 0xFF: here the pages (MTD write
//!   units) holding programmed bytes are overwritten — one SSD write per
//!   contiguous run — or, with `erase = "trim"`, trimmed instead; pages
//!   known to be erased are skipped without the kernel's read.
//! - `mtd->writesize = 1`, no OOB, no bad blocks (`_block_isbad` unset):
//!   here the write unit is `page_bytes` (settable), the bad-block check
//!   costs no operation and always says good.
//!
//! The bytes themselves stay in the [`crate::Nand`]'s sparse store (the SSD
//! model carries no data); the SSD sees the requests, so its FTL, GC, write
//! amplification and latency apply. Requests are issued one at a time, each
//! when the previous one completed (queue depth 1, as the driver's
//! synchronous calls under its write mutex).

use crate::{NandSettings, SettingsError};
use flashlab_sim::{Op, RunResult, SimError, Ssd};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, MutexGuard};

/// What an MTD erase does on the block device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EraseMode {
    /// Overwrite the programmed pages with 0xFF (the kernel's block2mtd).
    Write,
    /// TRIM the programmed pages (reads of them still return 0xFF here).
    Trim,
}

impl EraseMode {
    /// Every mode by its config name.
    pub const NAMES: [(&'static str, EraseMode); 2] = [("write", EraseMode::Write), ("trim", EraseMode::Trim)];

    /// The mode named `name`; an unknown name lists the valid ones.
    pub fn from_name(name: &str) -> Result<EraseMode, SettingsError> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m).ok_or_else(|| {
            let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
            SettingsError::new("erase", format!("{name:?} is not one of: {}", names.join(", ")))
        })
    }
}

/// The `[block2mtd]` section: the MTD geometry on the block device and what
/// an erase does there.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Block2MtdSettings {
    /// Erase-block size in KiB (the kernel's `block2mtd=<dev>,<erasesize>`).
    /// The kernel's default is PAGE_SIZE (4 KiB), too small for UBI and
    /// UBIFS (a LEB of at least 15 KiB); 128 KiB, a common small-NAND
    /// erase block and the usual `block2mtd=…,128KiB`, is the default here.
    pub erase_kib: u32,
    /// The MTD's write unit (min. I/O unit) in bytes; the kernel's is 1
    /// byte, UBI and the file systems above write whole units.
    pub page_bytes: u32,
    /// `"write"` (the kernel's: 0xFF over the programmed pages) or `"trim"`.
    pub erase: String,
    /// The MTD's size in MiB from the SSD's start, as block2mtd on a
    /// partition; 0 = the SSD's whole logical capacity.
    pub size_mib: u64,
}

impl Default for Block2MtdSettings {
    fn default() -> Self {
        Self { erase_kib: 128, page_bytes: 4096, erase: "write".into(), size_mib: 0 }
    }
}

impl Block2MtdSettings {
    /// The erase mode; an unknown name lists the valid ones.
    pub fn erase_mode(&self) -> Result<EraseMode, SettingsError> {
        EraseMode::from_name(&self.erase)
    }

    /// The NAND geometry of the MTD on a block device of `capacity_bytes`
    /// with logical pages of `device_page_bytes`. The error names the key.
    pub fn nand_settings(&self, capacity_bytes: u64, device_page_bytes: u64) -> Result<NandSettings, SettingsError> {
        self.erase_mode()?;
        let pb = self.page_bytes;
        if pb < 512 || !pb.is_power_of_two() {
            return Err(SettingsError::new("page_bytes", format!("{pb} is not a power of two >= 512")));
        }
        let erase = self.erase_kib as u64 * 1024;
        if erase == 0 || !erase.is_multiple_of(pb as u64) || erase / (pb as u64) < 4 || erase / (pb as u64) > 4096 {
            return Err(SettingsError::new(
                "erase_kib",
                format!("{} KiB is not 4 to 4096 write units of page_bytes = {pb}", self.erase_kib),
            ));
        }
        if device_page_bytes == 0 || !erase.is_multiple_of(device_page_bytes) {
            return Err(SettingsError::new(
                "erase_kib",
                format!("{} KiB is not a multiple of the SSD's page, {device_page_bytes} bytes", self.erase_kib),
            ));
        }
        let size = match self.size_mib {
            0 => capacity_bytes,
            mib if mib.saturating_mul(1 << 20) > capacity_bytes => {
                let msg = format!("{mib} MiB is more than the SSD's logical capacity, {capacity_bytes} bytes");
                return Err(SettingsError::new("size_mib", msg));
            }
            mib => mib << 20,
        };
        if !size.is_multiple_of(erase) {
            let what = match self.size_mib {
                0 => format!("the SSD's logical capacity, {size} bytes (or set size_mib to use part of it)"),
                mib => format!("size_mib = {mib}"),
            };
            return Err(SettingsError::new(
                "erase_kib",
                format!(
                    "{} KiB does not divide {what}: \"erasesize must be a divisor of device size\"",
                    self.erase_kib
                ),
            ));
        }
        let blocks = size / erase;
        if blocks < 8 || blocks > u32::MAX as u64 / 4096 {
            return Err(SettingsError::new(
                "erase_kib",
                format!("gives {blocks} erase blocks on the SSD; expected 8 to {}", u32::MAX / 4096),
            ));
        }
        Ok(NandSettings {
            blocks: blocks as u32,
            pages_per_block: (erase / pb as u64) as u32,
            page_bytes: pb,
            oob_bytes: 2,
            subpages_per_page: 1,
            faults: Default::default(),
        })
    }
}

/// Requests block2mtd sent to the SSD, and reads it answered from memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Block2MtdStats {
    /// SSD reads (4 KiB pages of the block device that MTD reads of
    /// programmed bytes found not cached) and their bytes.
    pub read_requests: u64,
    pub read_bytes: u64,
    /// Bytes of MTD reads answered from the block device's page cache.
    pub cached_read_bytes: u64,
    /// MTD reads (or parts) of erased bytes answered with 0xFF from memory.
    pub erased_read_bytes: u64,
    /// SSD writes of MTD programs and their bytes.
    pub program_requests: u64,
    pub program_bytes: u64,
    /// SSD writes (0xFF) or TRIMs of MTD erases and their bytes.
    pub erase_requests: u64,
    pub erase_bytes: u64,
    /// Device time the requests took (ns; 0 in counting mode).
    pub busy_ns: u64,
}

/// The SSD under a block2mtd [`crate::Nand`]. A clone of the `Nand` shares
/// the SSD (its FTL state cannot be snapshotted), so power-cut campaigns,
/// which clone the device, run on raw NAND only.
#[derive(Clone)]
pub struct Block2Mtd {
    ssd: Arc<Mutex<Ssd>>,
    mode: EraseMode,
    block_bytes: u64,
    clock_ns: u64,
    stats: Block2MtdStats,
    /// The block device's page cache: one bit per `PAGE_BYTES` page of the
    /// MTD's span, set while the page is up to date in memory.
    cached: Vec<u64>,
}

/// The kernel's `PAGE_SIZE`: the block device's page cache holds pages of it.
pub const PAGE_BYTES: u64 = 4096;

impl Block2Mtd {
    /// block2mtd over the SSD's first `size_bytes`, in erase blocks of `block_bytes`.
    pub(crate) fn new(ssd: Ssd, mode: EraseMode, block_bytes: u64, size_bytes: u64) -> Self {
        let words = size_bytes.div_ceil(PAGE_BYTES).div_ceil(64) as usize;
        Block2Mtd {
            ssd: Arc::new(Mutex::new(ssd)),
            mode,
            block_bytes,
            clock_ns: 0,
            stats: Block2MtdStats::default(),
            cached: vec![0; words],
        }
    }

    /// Empties the block device's page cache (`drop_caches`; block2mtd
    /// writes through, so no page is dirty).
    pub fn drop_caches(&mut self) {
        self.cached.fill(0);
    }

    fn is_cached(&self, page: u64) -> bool {
        self.cached[(page / 64) as usize] & (1 << (page % 64)) != 0
    }

    fn set_cached(&mut self, page: u64) {
        self.cached[(page / 64) as usize] |= 1 << (page % 64);
    }

    /// The SSD (locked for the caller).
    pub fn ssd(&self) -> MutexGuard<'_, Ssd> {
        self.ssd.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The SSD's result object so far.
    pub fn ssd_result(&self) -> RunResult {
        self.ssd().result()
    }

    /// The requests so far.
    pub fn stats(&self) -> &Block2MtdStats {
        &self.stats
    }

    /// What an erase does.
    pub fn erase_mode(&self) -> EraseMode {
        self.mode
    }

    /// The simulated time after the last completed request (ns).
    pub fn clock_ns(&self) -> u64 {
        self.clock_ns
    }

    fn submit(&mut self, op: Op, block: u32, offs: u64, len: u64) -> Result<(), SimError> {
        self.submit_at(op, block as u64 * self.block_bytes + offs, len)
    }

    fn submit_at(&mut self, op: Op, at_byte: u64, len: u64) -> Result<(), SimError> {
        let at = self.clock_ns;
        let c = self.ssd().submit(op, at_byte, len, at)?;
        if let Some(done) = c.done_ns {
            self.stats.busy_ns += done - at.min(done);
            self.clock_ns = self.clock_ns.max(done);
        }
        Ok(())
    }

    /// An MTD read of `len` programmed bytes at `offs` of `block`
    /// (`block2mtd_read`): each page not cached is read whole, one request.
    pub(crate) fn read(&mut self, block: u32, offs: u64, len: u64) -> Result<(), SimError> {
        let start = block as u64 * self.block_bytes + offs;
        let end = start + len;
        let mut at = start;
        while at < end {
            let page = at / PAGE_BYTES;
            let next = ((page + 1) * PAGE_BYTES).min(end);
            if self.is_cached(page) {
                self.stats.cached_read_bytes += next - at;
            } else {
                self.stats.read_requests += 1;
                self.stats.read_bytes += PAGE_BYTES;
                self.submit_at(Op::Read, page * PAGE_BYTES, PAGE_BYTES)?;
                self.set_cached(page);
            }
            at = next;
        }
        Ok(())
    }

    /// An MTD program of `len` bytes at `offs` of `block`; the pages it
    /// wrote are cached.
    pub(crate) fn program(&mut self, block: u32, offs: u64, len: u64) -> Result<(), SimError> {
        self.stats.program_requests += 1;
        self.stats.program_bytes += len;
        self.submit(Op::Write, block, offs, len)?;
        let start = block as u64 * self.block_bytes + offs;
        for page in start / PAGE_BYTES..(start + len).div_ceil(PAGE_BYTES) {
            self.set_cached(page);
        }
        Ok(())
    }

    /// One run of programmed pages of an erased block: 0xFF written or trimmed.
    pub(crate) fn erase_run(&mut self, block: u32, offs: u64, len: u64) -> Result<(), SimError> {
        self.stats.erase_requests += 1;
        self.stats.erase_bytes += len;
        let op = match self.mode {
            EraseMode::Write => Op::Write,
            EraseMode::Trim => Op::Trim,
        };
        self.submit(op, block, offs, len)
    }

    pub(crate) fn erased_read(&mut self, len: u64) {
        self.stats.erased_read_bytes += len;
    }
}
