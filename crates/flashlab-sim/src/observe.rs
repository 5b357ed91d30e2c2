//! Observers: progress reports and, when wanted, a record of every request (for a
//! per-request log or a time series). The core writes nothing itself.

use flashlab_trace::Op;

/// What an observer sees of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub index: u64,
    /// After prefill and warm-up.
    pub measured: bool,
    pub op: Op,
    pub offset_bytes: u64,
    pub pages: u64,
    /// Issue (arrival, or dispatch in closed loop) and completion times; None in counting mode.
    pub issue_ns: Option<u64>,
    pub done_ns: Option<u64>,
    /// How long its operations waited behind GC on their dies (max over its pages).
    pub gc_wait_ns: u64,
    /// Cumulative counters since the run started (for interval WAF).
    pub host_write_pages: u64,
    pub nand_program_pages: u64,
    /// Cumulative pages GC has copied since the run started (for interval GC activity).
    pub gc_copied_pages: u64,
}

/// What an observer sees at the end of a run, beyond the flat [`crate::RunResult`]:
/// distributions a report draws. Everything is counted after prefill and warm-up.
#[derive(Clone, Debug, PartialEq)]
pub struct RunEnd {
    /// Latency CDFs as (latency in µs, fraction of requests at or below it), from
    /// the HDR histograms, thinned to at most one point per 1/100 decade; empty in
    /// counting mode or when there were no such requests.
    pub read_latency_cdf: Vec<(f64, f64)>,
    pub write_latency_cdf: Vec<(f64, f64)>,
    /// Erases of each block (block id order: plane-major, `blocks_per_plane` a plane).
    pub block_erases: Vec<u64>,
    pub blocks_per_plane: u32,
    /// NAND page programs by cause, every cause the NAND layer counts (name, pages).
    pub programs_by_cause: Vec<(&'static str, u64)>,
}

/// Receives progress and request records from a run.
pub trait Observer {
    /// Requests processed so far (called every 65 536 requests).
    fn progress(&mut self, _done: u64) {}
    /// Whether [`Observer::request`] should be called (records cost a little time).
    fn wants_requests(&self) -> bool {
        false
    }
    fn request(&mut self, _record: &RequestRecord) {}
    /// Called once when the run has finished, before the result is built.
    fn end(&mut self, _end: &RunEnd) {}
}

/// An observer that only forwards progress to a closure.
pub(crate) struct Progress<'a>(pub &'a mut dyn FnMut(u64));

impl Observer for Progress<'_> {
    fn progress(&mut self, done: u64) {
        (self.0)(done)
    }
}
