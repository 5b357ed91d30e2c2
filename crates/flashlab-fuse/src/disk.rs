//! The simulated SSD as a disk with real contents: every read, write, trim and flush
//! goes through the streaming [`Ssd`] handle (statistics, timing) while the bytes live in
//! a [`SparseStore`]. No FUSE here: the FUSE edge (`blockdev`) only translates calls.

use crate::image::{self, DiskGeometry, ImageError, LogEntry, LogKind};
use crate::store::SparseStore;
use flashlab_sim::{Op, RunResult, Settings, SimError, Ssd};
use flashlab_trace::{Request, TraceFormat};
use std::io::Write;
use std::time::{Duration, Instant};
use thiserror::Error;

/// How simulated time relates to the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Replies at once; each request is issued when the previous one completed (QD1).
    Virtual,
    /// Each request is issued at the wall-clock time since serving began and its reply
    /// waits until its simulated completion time.
    Real,
}

/// Why a disk request failed.
#[derive(Debug, Error)]
pub enum DiskError {
    #[error("{len} bytes at offset {offset} reach past the disk's end at {size} bytes")]
    PastEnd { offset: u64, len: u64, size: u64 },
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("cannot write the trace: {0}")]
    Trace(#[from] std::io::Error),
    #[error(transparent)]
    Image(#[from] ImageError),
}

impl DiskError {
    /// The errno a FUSE reply carries.
    pub fn errno(&self) -> i32 {
        match self {
            DiskError::PastEnd { .. } => libc::ENOSPC,
            _ => libc::EIO,
        }
    }
}

/// A served disk.
pub struct Disk {
    ssd: Ssd,
    geometry: DiskGeometry,
    config_text: String,
    config_value: serde_json::Value,
    store: SparseStore,
    log: Vec<LogEntry>,
    trace: Option<Box<dyn Write + Send>>,
    pace: Pace,
    clock_ns: u64,
    wall: Instant,
    wall_base_ns: u64,
    flushes: u64,
}

impl Disk {
    /// A blank disk (every byte reads as zero) on an SSD built from `settings`.
    /// `config_text` and `config_value` are the resolved config, kept in the image and
    /// the result object.
    pub fn new(
        settings: Settings,
        config_text: String,
        config_value: serde_json::Value,
        pace: Pace,
        trace: Option<Box<dyn Write + Send>>,
    ) -> Result<Disk, DiskError> {
        let geometry = geometry_of(&settings);
        let mut trace = trace;
        if let Some(t) = trace.as_mut() {
            flashlab_trace::write_header(t, TraceFormat::Csv)?;
        }
        Ok(Disk {
            ssd: Ssd::new(settings)?,
            geometry,
            config_text,
            config_value,
            store: SparseStore::new(geometry.bytes()),
            log: Vec::new(),
            trace,
            pace,
            clock_ns: 0,
            wall: Instant::now(),
            wall_base_ns: 0,
            flushes: 0,
        })
    }

    /// Load a saved image: its requests are replayed through the new SSD (rebuilding the
    /// FTL's state, counters and clock), then its contents are taken as they were saved.
    /// Replayed requests are not written to the trace.
    pub fn load_image(&mut self, bytes: &[u8]) -> Result<(), DiskError> {
        let img = image::decode(bytes, self.geometry)?;
        assert!(self.log.is_empty(), "an image is loaded into a fresh disk");
        for e in &img.log {
            self.replay(*e)?;
        }
        self.log = img.log;
        self.store = img.store;
        self.wall_base_ns = self.clock_ns;
        self.wall = Instant::now();
        Ok(())
    }

    /// The disk's shape.
    pub fn geometry(&self) -> DiskGeometry {
        self.geometry
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.geometry.bytes()
    }

    /// Requests served (replayed ones included) and flushes.
    pub fn counts(&self) -> (u64, u64) {
        (self.log.len() as u64 - self.flushes, self.flushes)
    }

    /// Read up to `len` bytes at `offset`; a read reaching past the end is cut there.
    pub fn read(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, DiskError> {
        let len = len.min(self.size().saturating_sub(offset));
        let mut buf = vec![0; len as usize];
        if len > 0 {
            self.serve(LogKind::Read, offset, len)?;
            self.store.read(offset, &mut buf);
        }
        Ok(buf)
    }

    /// Write `data` at `offset`; all of it must lie inside the disk.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), DiskError> {
        self.check(offset, data.len() as u64)?;
        if !data.is_empty() {
            self.serve(LogKind::Write, offset, data.len() as u64)?;
            self.store.write(offset, data);
        }
        Ok(())
    }

    /// Trim (discard) a range: it reads as zeros afterwards.
    pub fn trim(&mut self, offset: u64, len: u64) -> Result<(), DiskError> {
        self.check(offset, len)?;
        if len > 0 {
            self.serve(LogKind::Trim, offset, len)?;
            self.store.trim(offset, len);
        }
        Ok(())
    }

    /// Write zeros over a range (a write to the SSD; the store drops the bytes).
    pub fn write_zeros(&mut self, offset: u64, len: u64) -> Result<(), DiskError> {
        self.check(offset, len)?;
        if len > 0 {
            self.serve(LogKind::Write, offset, len)?;
            self.store.trim(offset, len);
        }
        Ok(())
    }

    /// Flush the SSD's write buffer (fsync of the disk file).
    pub fn flush(&mut self) -> Result<(), DiskError> {
        self.serve(LogKind::Flush, 0, 0)?;
        if let Some(t) = self.trace.as_mut() {
            t.flush()?;
        }
        Ok(())
    }

    /// The result object so far, as `flashlab run` reports it.
    pub fn result(&mut self) -> RunResult {
        let mut r = self.ssd.result();
        r.wall_time_s = self.wall.elapsed().as_secs_f64();
        r.config = self.config_value.clone();
        r
    }

    /// The saved state (see [`crate::image`]).
    pub fn image(&self) -> Vec<u8> {
        image::encode(self.geometry, &self.config_text, &self.log, &self.store)
    }

    /// Flush the recorded trace, if any.
    pub fn finish_trace(&mut self) -> Result<(), DiskError> {
        if let Some(t) = self.trace.as_mut() {
            t.flush()?;
        }
        Ok(())
    }

    fn check(&self, offset: u64, len: u64) -> Result<(), DiskError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size() => Ok(()),
            _ => Err(DiskError::PastEnd { offset, len, size: self.size() }),
        }
    }

    /// Issue one request at the current time, record it, and keep the clock.
    fn serve(&mut self, kind: LogKind, offset: u64, len: u64) -> Result<(), DiskError> {
        let at_ns = match self.pace {
            Pace::Virtual => self.clock_ns,
            Pace::Real => self.clock_ns.max(self.wall_base_ns + self.wall.elapsed().as_nanos() as u64),
        };
        let e = LogEntry { kind, offset, len, at_ns };
        self.replay(e)?;
        self.log.push(e);
        if let (Some(t), Some(op)) = (self.trace.as_mut(), op_of(kind)) {
            let req = Request { time_ns: at_ns, op, offset_bytes: offset, len_bytes: len, device: 0 };
            flashlab_trace::write_request(t, TraceFormat::Csv, &req)?;
        }
        if self.pace == Pace::Real {
            let due = Duration::from_nanos(self.clock_ns.saturating_sub(self.wall_base_ns));
            if let Some(wait) = due.checked_sub(self.wall.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        Ok(())
    }

    /// Submit one logged request to the SSD and advance the clock to its completion.
    fn replay(&mut self, e: LogEntry) -> Result<(), DiskError> {
        let done = match op_of(e.kind) {
            Some(op) => self.ssd.submit(op, e.offset, e.len, e.at_ns)?.done_ns,
            None => {
                self.flushes += 1;
                self.ssd.flush(e.at_ns)?
            }
        };
        self.clock_ns = self.clock_ns.max(e.at_ns).max(done.unwrap_or(0));
        Ok(())
    }
}

fn op_of(kind: LogKind) -> Option<Op> {
    match kind {
        LogKind::Read => Some(Op::Read),
        LogKind::Write => Some(Op::Write),
        LogKind::Trim => Some(Op::Trim),
        LogKind::Flush => None,
    }
}

/// The disk shape a config gives: its logical pages and page size.
pub fn geometry_of(s: &Settings) -> DiskGeometry {
    DiskGeometry { page_bytes: s.page_bytes(), logical_pages: s.ftl.logical_pages }
}
