//! Requests to the simulated SSD at the file system's clock. Writes of a
//! log merge into one request while contiguous (the kernel's per-log bio,
//! `f2fs_submit_page_write`, up to `max_bio_blocks`); up to `queue_depth`
//! requests are in flight before the writer waits for the oldest; reads
//! and the points where F2FS waits (`f2fs_wait_on_all_pages` before a
//! checkpoint's CP page, fsync, cleaning's reads) wait for completions.

use crate::error::F2fsError;
use crate::layout::BLOCK_BYTES;
use crate::temp::NR_LOGS;
use flashlab_sim::{Op, Ssd};
use std::cell::RefCell;

/// Pending merged write: first device block and length.
#[derive(Debug, Clone, Copy)]
struct Bio {
    start: u64,
    len: u64,
}

/// The SSD, the clock and the write merging.
pub struct Io {
    /// In a cell so that counters can be read through `&self`
    /// (`Ssd::result` takes `&mut`); the model itself uses `get_mut`.
    pub ssd: RefCell<Ssd>,
    /// The file system's simulated time (ns).
    pub clock_ns: u64,
    /// Time spent waiting for the device (ns).
    pub waited_ns: u64,
    /// Last time a request was issued (idle detection).
    pub last_io_ns: u64,
    inflight: Vec<u64>,
    head: usize,
    /// One pending bio per log, plus one for metadata areas.
    bios: [Option<Bio>; NR_LOGS + 1],
    max_bio: u64,
    pub requests: u64,
}

/// The metadata "log" (CP, NAT, SIT) in [`Io::write`].
pub const META: usize = NR_LOGS;

fn dev(e: flashlab_sim::SimError) -> F2fsError {
    F2fsError::Device(e.to_string())
}

impl Io {
    pub fn new(ssd: Ssd, queue_depth: u32, max_bio_blocks: u32) -> Io {
        Io {
            ssd: RefCell::new(ssd),
            clock_ns: 0,
            waited_ns: 0,
            last_io_ns: 0,
            inflight: vec![0; queue_depth as usize],
            head: 0,
            bios: [None; NR_LOGS + 1],
            max_bio: max_bio_blocks as u64,
            requests: 0,
        }
    }

    fn wait_until(&mut self, t: u64) {
        if t > self.clock_ns {
            self.waited_ns += t - self.clock_ns;
            self.clock_ns = t;
        }
    }

    fn submit_async(&mut self, op: Op, start: u64, len: u64) -> Result<(), F2fsError> {
        let slot = self.inflight[self.head];
        self.wait_until(slot);
        let c = self.ssd.get_mut().submit(op, start * BLOCK_BYTES, len * BLOCK_BYTES, self.clock_ns).map_err(dev)?;
        self.requests += 1;
        self.last_io_ns = self.clock_ns;
        self.inflight[self.head] = c.done_ns.unwrap_or(0);
        self.head = (self.head + 1) % self.inflight.len();
        Ok(())
    }

    /// Queues a write of device block `blk` on stream `stream` (a log or [`META`]).
    pub fn write(&mut self, stream: usize, blk: u64) -> Result<(), F2fsError> {
        if let Some(b) = &mut self.bios[stream] {
            if b.start + b.len == blk && b.len < self.max_bio {
                b.len += 1;
                return Ok(());
            }
        }
        self.submit_bio(stream)?;
        self.bios[stream] = Some(Bio { start: blk, len: 1 });
        Ok(())
    }

    fn submit_bio(&mut self, stream: usize) -> Result<(), F2fsError> {
        if let Some(b) = self.bios[stream].take() {
            self.submit_async(Op::Write, b.start, b.len)?;
        }
        Ok(())
    }

    /// Submits every pending merged write (`f2fs_submit_merged_write`).
    pub fn submit_all(&mut self) -> Result<(), F2fsError> {
        for s in 0..self.bios.len() {
            self.submit_bio(s)?;
        }
        Ok(())
    }

    /// Submits and waits for everything in flight.
    pub fn wait_all(&mut self) -> Result<(), F2fsError> {
        self.submit_all()?;
        let last = self.inflight.iter().copied().max().unwrap_or(0);
        self.wait_until(last);
        Ok(())
    }

    /// Reads `len` device blocks from `start`, submitted now, not waited for;
    /// returns the completion time.
    pub fn read(&mut self, start: u64, len: u64) -> Result<u64, F2fsError> {
        let c =
            self.ssd.get_mut().submit(Op::Read, start * BLOCK_BYTES, len * BLOCK_BYTES, self.clock_ns).map_err(dev)?;
        self.requests += 1;
        self.last_io_ns = self.clock_ns;
        Ok(c.done_ns.unwrap_or(0))
    }

    /// Reads and waits.
    pub fn read_sync(&mut self, start: u64, len: u64) -> Result<(), F2fsError> {
        self.submit_all()?;
        let done = self.read(start, len)?;
        self.wait_until(done);
        Ok(())
    }

    /// Waits until `t` (completion of reads issued earlier).
    pub fn wait_for(&mut self, t: u64) {
        self.wait_until(t);
    }

    /// TRIM of `len` device blocks (async).
    pub fn trim(&mut self, start: u64, len: u64) -> Result<(), F2fsError> {
        self.submit_async(Op::Trim, start, len)
    }

    /// A cache flush (`f2fs_issue_flush`, REQ_PREFLUSH), waited for.
    pub fn flush(&mut self) -> Result<(), F2fsError> {
        self.wait_all()?;
        if let Some(done) = self.ssd.get_mut().flush(self.clock_ns).map_err(dev)? {
            self.wait_until(done);
        }
        Ok(())
    }

    /// Moves the clock forward to `now_ns` (never back).
    pub fn advance(&mut self, now_ns: u64) {
        self.clock_ns = self.clock_ns.max(now_ns);
    }
}
