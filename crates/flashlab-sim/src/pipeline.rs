//! A timed run on two threads: the FTL on the calling thread, the timeline on a
//! second one (issue 22 target 2).
//!
//! Where nothing the timeline computes flows back into the FTL — no preemptible GC
//! (which asks the timeline when a die is idle), no per-request observer (whose
//! record carries both halves), measurement from the first request (no warm-up mark
//! in the middle) — a request's FTL work and its timing are independent: the FTL
//! decides the same NAND operations whatever their times, and the timeline books the
//! same operations in the same order whichever thread does it. So the calling thread
//! runs the FTL for each request and logs the request (arrival stamp, op, pages) and
//! each page's NAND operations into a batch; full batches go through a bounded
//! channel to the timing thread, which books them exactly as [`Engine::request`] and
//! [`Engine::timed_trim`] do (`book_batch`). At most `DEPTH` batches are in flight and
//! emptied ones go back for reuse. After the last request the timeline and the host
//! clock come back to the engine, which finishes the run as before: the result is
//! the same, bit for bit (`tests::a_pipelined_run_equals_the_serial_run`, and the
//! golden configurations, most of which run pipelined).

use crate::clock::HostClock;
use crate::engine::{Engine, SimError};
use crate::host::Done;
use crate::lookahead::Lookahead;
use crate::observe::Observer;
use crate::sched::schedule_ops;
use crate::settings::{GcMode, Settings};
use crate::timing::Timeline;
use flashlab_ftl::{FlashOp, Mapping};
use flashlab_trace::{Op, Request};
use std::fmt::Display;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Requests per batch handed to the timing thread.
const BATCH: usize = 512;
/// A batch also ends once it holds this many NAND operations (long requests).
const BATCH_OPS: usize = 1 << 16;
/// Batches the FTL thread may be ahead of the timing thread.
const DEPTH: usize = 4;

/// A request as the timing thread needs it.
#[derive(Clone, Copy, Debug)]
struct Item {
    time_ns: u64,
    pages: u64,
    /// TRIM: pages that were mapped.
    mapped: u64,
    op: Op,
}

/// Requests and the NAND operations their pages issued, in order.
#[derive(Default)]
struct Batch {
    reqs: Vec<Item>,
    /// Per page served: the end of its operations in `ops`.
    page_ends: Vec<u32>,
    ops: Vec<FlashOp>,
}

impl Batch {
    fn clear(&mut self) {
        self.reqs.clear();
        self.page_ends.clear();
        self.ops.clear();
    }
}

/// Whether a run of `s` books its timeline on a second thread: timed with
/// `timing.pipeline` on (off by default: on two cores shared with a trace parser it
/// took as long in wall time as the serial loop and ≈ 25 % more CPU), no preemptible
/// GC, no per-request records (`want_records`), no warm-up.
pub fn pipelined(s: &Settings, want_records: bool) -> bool {
    s.timing.is_some_and(|t| t.pipeline)
        && !want_records
        && s.workload.warmup == 0
        && !matches!(s.gc_mode, GcMode::Preemptible { .. })
}

impl Engine<'_> {
    /// Whether [`Engine::run_pipelined`] gives this run's result: [`pipelined`] and
    /// measuring from the first request.
    pub(crate) fn pipeline_applies(&self, want_records: bool) -> bool {
        self.timeline.is_some() && self.mark.is_some() && pipelined(&self.s, want_records)
    }

    /// Serve every request of `requests`: the FTL here, the timeline on a second thread.
    pub(crate) fn run_pipelined<I, E>(
        &mut self,
        requests: &mut Lookahead<I, E>,
        obs: &mut dyn Observer,
    ) -> Result<(), SimError>
    where
        I: Iterator<Item = Result<Request, E>>,
        E: Display,
    {
        // Batches carry ops only: merges logged per op (`crate::merge_moves`).
        self.log_moves = false;
        self.ftl.set_merge_moves(false);
        let mut tl = self.timeline.take().expect("timed run");
        let mut clock = std::mem::replace(&mut self.clock, HostClock::new(self.s.workload.arrival));
        let (tx, rx) = sync_channel::<Batch>(DEPTH);
        let (back, spare) = sync_channel::<Batch>(DEPTH + 2);
        let (r, (tl, clock)) = std::thread::scope(|scope| {
            let timing = scope.spawn(move || {
                for b in rx {
                    book_batch(&mut tl, &mut clock, &b);
                    // A full return channel only means the FTL thread has batches enough.
                    let _ = back.try_send(b);
                }
                (tl, clock)
            });
            let r = self.feed(requests, obs, &tx, &spare);
            // The timing thread ends once the channel is closed and empty.
            drop(tx);
            match timing.join() {
                Ok(parts) => (r, parts),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        self.timeline = Some(tl);
        self.clock = clock;
        r
    }

    /// The FTL's side: serve the requests, send their batches.
    fn feed<I, E>(
        &mut self,
        requests: &mut Lookahead<I, E>,
        obs: &mut dyn Observer,
        tx: &SyncSender<Batch>,
        spare: &Receiver<Batch>,
    ) -> Result<(), SimError>
    where
        I: Iterator<Item = Result<Request, E>>,
        E: Display,
    {
        let mut b = Batch::default();
        let mut i = 0u64;
        while let Some(req) = requests.next(self) {
            let req = req.map_err(|err| SimError::Source(err.to_string()))?;
            self.ftl_request(&req, i, &mut b)?;
            i += 1;
            if i & 0xFFFF == 0 {
                obs.progress(i);
            }
            if b.reqs.len() == BATCH || b.ops.len() >= BATCH_OPS {
                let mut next = spare.try_recv().unwrap_or_default();
                next.clear();
                // A closed channel means the timing thread panicked: its join reports it.
                if tx.send(std::mem::replace(&mut b, next)).is_err() {
                    return Ok(());
                }
            }
        }
        if !b.reqs.is_empty() {
            let _ = tx.send(b);
        }
        Ok(())
    }

    /// The FTL's part of [`Engine::request`]: every page through the FTL, its NAND
    /// operations logged into `b`.
    #[inline]
    fn ftl_request(&mut self, req: &Request, index: u64, b: &mut Batch) -> Result<(), SimError> {
        let span = self.span_of(req, index)?;
        let mut mapped = 0u64;
        for i in 0..span.count {
            let lpn = self.map.page(span, i, req.device);
            match req.op {
                Op::Write => self.host_write(lpn)?,
                Op::Read => self.host_read(lpn)?,
                Op::Trim => {
                    mapped += self.ftl.lookup(lpn).is_some() as u64;
                    self.host_trim(lpn)?;
                }
            }
            b.ops.extend_from_slice(self.ftl.take_ops().as_slice());
            b.page_ends.push(b.ops.len() as u32);
        }
        self.count_op(req.op);
        b.reqs.push(Item { time_ns: req.time_ns, pages: span.count, mapped, op: req.op });
        Ok(())
    }
}

/// The timing thread's side: book a batch's requests as [`Engine::request`] (and
/// [`Engine::timed_trim`] for TRIMs) would have after their FTL calls.
fn book_batch(tl: &mut Timeline, clock: &mut HostClock, b: &Batch) {
    let (mut page, mut op0) = (0usize, 0usize);
    for it in &b.reqs {
        let issue = clock.issue_time(it.time_ns);
        let ends = &b.page_ends[page..page + it.pages as usize];
        page += ends.len();
        let mut d = Done { issue_ns: issue, done_ns: 0, gc_wait_ns: 0, pages: it.pages };
        if it.op == Op::Trim {
            let t = tl.t;
            let unmap_start = clock.trim_start(&t, issue) + t.trim_command_ns;
            let mut nand_done = unmap_start;
            for &end in ends {
                nand_done = nand_done.max(schedule_ops(tl, &b.ops[op0..end as usize], &[], unmap_start).0);
                op0 = end as usize;
            }
            d.done_ns = clock.trim_done(&t, unmap_start, nand_done, it.mapped);
        } else {
            // A non-queued TRIM in progress holds every later request back (`crate::trim`).
            let start = issue.max(clock.trim_barrier_ns);
            d.done_ns = start;
            for &end in ends {
                let (done, wait) = schedule_ops(tl, &b.ops[op0..end as usize], &[], start);
                d.done_ns = d.done_ns.max(done);
                d.gc_wait_ns = d.gc_wait_ns.max(wait);
                op0 = end as usize;
            }
        }
        clock.complete(it.op, d);
    }
}
