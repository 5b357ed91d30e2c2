//! Host requests: issue times, page-by-page FTL calls, content checks, completion.

use crate::buffer::Buffered;
use crate::engine::{Engine, SimError};
use crate::observe::RequestRecord;
use crate::settings::Arrival;
use flashlab_ftl::Mapping;
use flashlab_ftl::ReadOutcome;
use flashlab_trace::{Op, Request};
use std::cmp::Reverse;

/// Timing outcome of one request.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Done {
    pub issue_ns: u64,
    pub done_ns: u64,
    pub gc_wait_ns: u64,
    pub pages: u64,
}

impl Engine<'_> {
    /// Issue time of a request (ns): closed loop from completions, open loop from arrivals.
    fn issue_time(&mut self, req: &Request) -> u64 {
        let t = match self.s.workload.arrival {
            Arrival::Closed { queue_depth } if self.outstanding.len() < queue_depth as usize => self.last_issue,
            Arrival::Closed { .. } => self.outstanding.pop().map_or(0, |Reverse(t)| t),
            Arrival::Fixed { .. } | Arrival::Poisson { .. } => req.time_ns,
            Arrival::Trace { time_scale } => {
                let t0 = *self.trace_t0.get_or_insert(req.time_ns);
                (req.time_ns.saturating_sub(t0) as f64 * time_scale) as u64
            }
        };
        // Requests are served in arrival order: a timestamp that goes back is held at the previous one.
        self.last_issue = t.max(self.last_issue);
        self.last_issue
    }

    #[inline]
    fn first_page(&self, req: &Request) -> Option<u64> {
        let span = self.map.span(req).ok()?;
        Some(self.map.page(span, 0, req.device))
    }

    #[inline]
    pub(crate) fn prefetch_map(&self, req: &Request) {
        if let Some(lpn) = self.first_page(req) {
            self.ftl.prefetch_map(lpn);
        }
    }

    #[inline]
    pub(crate) fn prefetch_page(&self, req: &Request) {
        if let Some(lpn) = self.first_page(req) {
            self.ftl.prefetch_page(lpn);
        }
    }

    /// Serve one request: every page through the FTL, then (timed runs) its NAND operations.
    #[inline]
    pub(crate) fn request(&mut self, req: &Request, index: u64) -> Result<Done, SimError> {
        let capacity = self.s.ftl.logical_pages;
        let span = self.map.span(req).map_err(|page| SimError::Overflow { index, page, capacity })?;
        if span.count > self.map.range() {
            return Err(SimError::TooLong { index, pages: span.count, capacity: self.map.range() });
        }
        self.checks.observe(req.time_ns, span.first + span.count > self.map.range());
        let timed = self.timeline.is_some();
        let issue = if timed { self.issue_time(req) } else { 0 };
        if timed {
            self.background_gc(issue)?;
        }
        let mut d = Done { issue_ns: issue, done_ns: issue, gc_wait_ns: 0, pages: span.count };
        for i in 0..span.count {
            let lpn = self.map.page(span, i, req.device);
            match req.op {
                Op::Write => self.host_write(lpn)?,
                Op::Read => self.host_read(lpn)?,
                Op::Trim => self.host_trim(lpn)?,
            }

            if timed {
                let (end, wait) = self.schedule(issue);
                d.done_ns = d.done_ns.max(end);
                d.gc_wait_ns = d.gc_wait_ns.max(wait);
            }
        }
        self.complete(req.op, d);
        Ok(d)
    }

    /// A host page write, through the DRAM buffer if there is one.
    #[inline]
    fn host_write(&mut self, lpn: u64) -> Result<(), SimError> {
        self.host_pages[1] += 1;
        let Some(buf) = &mut self.buffer else { return self.write(lpn) };
        match buf.write(lpn) {
            Buffered::Hit => self.buffer_counts[0] += 1,
            Buffered::Stored => {}
            Buffered::Evicted(old) => {
                self.buffer_counts[2] += 1;
                self.write(old)?;
            }
        }
        Ok(())
    }

    fn host_read(&mut self, lpn: u64) -> Result<(), SimError> {
        self.host_pages[0] += 1;
        if self.buffer.as_mut().is_some_and(|b| b.read(lpn)) {
            self.buffer_counts[1] += 1;
            return Ok(());
        }
        self.read(lpn)
    }

    fn host_trim(&mut self, lpn: u64) -> Result<(), SimError> {
        self.host_pages[2] += 1;
        if let Some(b) = &mut self.buffer {
            b.remove(lpn);
        }
        self.trim(lpn)
    }

    #[inline]
    pub(crate) fn write(&mut self, lpn: u64) -> Result<(), SimError> {
        self.ftl.write(lpn)?;
        if !self.shadow.is_empty() {
            self.shadow[lpn as usize] = self.ftl.last_tag();
        }
        Ok(())
    }

    fn read(&mut self, lpn: u64) -> Result<(), SimError> {
        let out = self.ftl.read(lpn)?;
        if self.shadow.is_empty() {
            return Ok(());
        }
        let want = self.shadow[lpn as usize];
        match out {
            ReadOutcome::Unmapped if want == 0 => Ok(()),
            ReadOutcome::Mapped { tag: Some(t), .. } if t == want => Ok(()),
            other => {
                Err(SimError::Content(format!("logical page {lpn}: read {other:?}, last write carried tag {want}")))
            }
        }
    }

    fn trim(&mut self, lpn: u64) -> Result<(), SimError> {
        self.ftl.trim(lpn)?;
        if !self.shadow.is_empty() {
            self.shadow[lpn as usize] = 0;
        }
        Ok(())
    }

    #[inline]
    fn complete(&mut self, op: Op, d: Done) {
        self.op_counts[match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        }] += 1;
        if self.timeline.is_none() {
            return;
        }
        if let Arrival::Closed { .. } = self.s.workload.arrival {
            self.outstanding.push(Reverse(d.done_ns));
        }
        self.first_issue.get_or_insert(d.issue_ns);
        self.last_done = self.last_done.max(d.done_ns);
        if d.gc_wait_ns > 0 {
            self.gc_blocked_requests += 1;
            self.gc_wait_ns_total += d.gc_wait_ns;
        }
        match op {
            Op::Read => self.read_lat.record(d.done_ns - d.issue_ns),
            Op::Write => self.write_lat.record(d.done_ns - d.issue_ns),
            Op::Trim => {}
        }
    }

    /// The record an observer sees for request `index`.
    pub(crate) fn record(&self, index: u64, req: &Request, d: Done) -> RequestRecord {
        let stats = self.ftl.stats();
        RequestRecord {
            index,
            measured: self.mark.is_some(),
            op: req.op,
            offset_bytes: req.offset_bytes,
            pages: d.pages,
            issue_ns: self.timeline.as_ref().map(|_| d.issue_ns),
            done_ns: self.timeline.as_ref().map(|_| d.done_ns),
            gc_wait_ns: d.gc_wait_ns,
            host_write_pages: stats.host_write_pages,
            nand_program_pages: self.ftl.nand().counters().total(flashlab_nand::OpKind::Program),
            gc_copied_pages: stats.gc_copied_pages,
        }
    }
}
