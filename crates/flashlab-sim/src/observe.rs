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
}

/// An observer that only forwards progress to a closure.
pub(crate) struct Progress<'a>(pub &'a mut dyn FnMut(u64));

impl Observer for Progress<'_> {
    fn progress(&mut self, done: u64) {
        (self.0)(done)
    }
}
