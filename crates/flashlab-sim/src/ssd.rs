//! The streaming SSD handle: the engine of [`crate::run`] driven one request at a time.
//!
//! A host model, a FUSE disk or Python submits a read, write or trim at a simulated time
//! and gets its completion at once; [`Ssd::result`] gives the result object of the
//! requests so far at any moment. It is the same engine, timing model and accounting as
//! `flashlab run`: feeding a workload's requests through an `Ssd` gives the identical
//! [`RunResult`] (tested in tests/sim.rs).
//!
//! The caller chooses issue times (open loop): `workload.arrival` is not used, a
//! closed-loop driver picks its next `at_ns` from the completions it got. Times that go
//! back are held at the latest one, as in a run (requests are served in arrival order).

use crate::engine::{Engine, SimError};
use crate::result::RunResult;
use crate::settings::{Arrival, Settings};
use flashlab_trace::{Op, Request};
use std::borrow::Cow;

/// When a submitted request completed. Times are `None` in counting mode (no timing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Position of the request in the stream (0-based, warm-up included).
    pub index: u64,
    pub issue_ns: Option<u64>,
    pub done_ns: Option<u64>,
    pub latency_ns: Option<u64>,
    /// How long its operations waited behind GC on their dies.
    pub gc_wait_ns: u64,
    /// Logical pages it touched.
    pub pages: u64,
}

/// A simulated SSD that takes requests one at a time.
pub struct Ssd {
    e: Engine<'static>,
    submitted: u64,
}

impl Ssd {
    /// A device prepared as `settings` say (prefill, aging writes); the first
    /// `workload.warmup` submitted requests are not measured.
    pub fn new(mut settings: Settings) -> Result<Ssd, SimError> {
        settings.workload.arrival = Arrival::Fixed { interval_ns: 0 };
        Ok(Ssd { e: Engine::start(Cow::Owned(settings))?, submitted: 0 })
    }

    /// The settings the device was built from.
    pub fn settings(&self) -> &Settings {
        &self.e.s
    }

    /// The content tag of logical page `lpn`'s last write (0 = never written, or
    /// trimmed) when content is tracked (`sim.track_content`), else `None`. Strict mode
    /// checks on every read that the FTL returns this tag.
    pub fn content_tag(&self, lpn: u64) -> Option<u32> {
        self.e.shadow.get(lpn as usize).copied()
    }

    /// Requests submitted so far (warm-up included).
    pub fn submitted(&self) -> u64 {
        self.submitted
    }

    /// Serve a read, write or trim of `len_bytes` at `offset_bytes`, issued at `at_ns`.
    pub fn submit(&mut self, op: Op, offset_bytes: u64, len_bytes: u64, at_ns: u64) -> Result<Completion, SimError> {
        if len_bytes == 0 || offset_bytes.checked_add(len_bytes).is_none() {
            return Err(SimError::Source(format!(
                "request {}: {len_bytes} bytes at offset {offset_bytes}: expected a non-empty range below 2^64",
                self.submitted
            )));
        }
        let req = Request { time_ns: at_ns, op, offset_bytes, len_bytes, device: 0 };
        let d = self.e.request(&req, self.submitted)?;
        let index = self.submitted;
        self.advance();
        let timed = self.e.timeline.is_some();
        Ok(Completion {
            index,
            issue_ns: timed.then_some(d.issue_ns),
            done_ns: timed.then_some(d.done_ns),
            latency_ns: timed.then_some(d.done_ns - d.issue_ns),
            gc_wait_ns: d.gc_wait_ns,
            pages: d.pages,
        })
    }

    /// Write every page held in the DRAM write buffer to flash, starting at `at_ns`;
    /// returns when the last program completed (`None` in counting mode). Without a
    /// buffer every write is already on flash and the flush completes at once.
    pub fn flush(&mut self, at_ns: u64) -> Result<Option<u64>, SimError> {
        let timed = self.e.timeline.is_some();
        let issue = at_ns.max(self.e.clock.last_issue).max(self.e.clock.trim_barrier_ns);
        if timed {
            self.e.clock.last_issue = issue;
            self.e.background_gc(issue)?;
        }
        let mut done = issue;
        while let Some(lpn) = self.e.buffer.as_mut().and_then(|b| b.pop_lru()) {
            self.e.buffer_counts[2] += 1;
            self.e.write(lpn)?;
            if timed {
                done = done.max(self.e.schedule(issue).0);
            }
        }
        if timed {
            self.e.clock.last_done = self.e.clock.last_done.max(done);
        }
        Ok(timed.then_some(done))
    }

    /// The result object of the measured requests so far, as `flashlab run` would
    /// report it had the workload ended here (`wall_time_s` 0, `config` null: the caller
    /// fills them). During warm-up every measured count is zero.
    pub fn result(&mut self) -> RunResult {
        if self.e.mark.is_some() {
            return self.e.finish();
        }
        // Still in warm-up: measure from now (what marking resets, the real mark resets again).
        self.e.mark();
        let r = self.e.finish();
        self.e.mark = None;
        r
    }

    /// [`Ssd::result`] for a caller holding `&self`: `None` during warm-up.
    pub fn result_now(&self) -> Option<RunResult> {
        self.e.mark.is_some().then(|| self.e.finish())
    }

    fn advance(&mut self) {
        self.submitted += 1;
        if self.submitted == self.e.s.workload.warmup {
            self.e.mark();
        }
    }
}
