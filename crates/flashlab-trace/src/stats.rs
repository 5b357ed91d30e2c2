//! Whole-trace summary statistics (`flashlab trace stats`).

use std::io::BufRead;

use serde::Serialize;

use crate::error::TraceError;
use crate::format::{Op, Request};
use crate::reader::TraceReader;

/// Summary of a trace. The field names are the keys of `flashlab trace stats --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// Format name ([`crate::TraceFormat::name`]).
    pub format: String,
    /// Number of requests.
    pub requests: u64,
    /// Number of read requests.
    pub reads: u64,
    /// Number of write requests.
    pub writes: u64,
    /// Number of trim requests.
    pub trims: u64,
    /// Total bytes read (saturating).
    pub bytes_read: u64,
    /// Total bytes written (saturating).
    pub bytes_written: u64,
    /// Time of the first request in file order, in seconds.
    pub first_time_s: Option<f64>,
    /// Time of the last request in file order, in seconds.
    pub last_time_s: Option<f64>,
    /// Lowest start address over all requests, in bytes.
    pub min_offset_bytes: Option<u64>,
    /// Highest end address (`offset + len`) over all requests, in bytes.
    pub max_end_bytes: Option<u64>,
    /// Bad lines skipped (with `skip_bad_lines`).
    pub skipped_lines: u64,
}

impl TraceStats {
    /// Empty statistics for a trace of the named format.
    pub fn new(format: impl Into<String>) -> Self {
        TraceStats {
            format: format.into(),
            requests: 0,
            reads: 0,
            writes: 0,
            trims: 0,
            bytes_read: 0,
            bytes_written: 0,
            first_time_s: None,
            last_time_s: None,
            min_offset_bytes: None,
            max_end_bytes: None,
            skipped_lines: 0,
        }
    }

    /// Account for one request.
    pub fn add(&mut self, req: &Request) {
        self.requests += 1;
        match req.op {
            Op::Read => {
                self.reads += 1;
                self.bytes_read = self.bytes_read.saturating_add(req.len_bytes);
            }
            Op::Write => {
                self.writes += 1;
                self.bytes_written = self.bytes_written.saturating_add(req.len_bytes);
            }
            Op::Trim => self.trims += 1,
        }
        let t = req.time_ns as f64 / 1e9;
        self.first_time_s.get_or_insert(t);
        self.last_time_s = Some(t);
        let lo = self.min_offset_bytes.map_or(req.offset_bytes, |m| m.min(req.offset_bytes));
        self.min_offset_bytes = Some(lo);
        let hi = self.max_end_bytes.map_or(req.end_bytes(), |m| m.max(req.end_bytes()));
        self.max_end_bytes = Some(hi);
    }
}

/// Read a whole trace and summarise it. Stops at the first error the reader
/// yields (with `skip_bad_lines` only I/O errors and fatal header errors).
pub fn stats<R: BufRead>(mut reader: TraceReader<R>) -> Result<TraceStats, TraceError> {
    let mut stats = TraceStats::new(reader.format().name());
    for req in &mut reader {
        stats.add(&req?);
    }
    stats.skipped_lines = reader.skipped_lines();
    Ok(stats)
}
