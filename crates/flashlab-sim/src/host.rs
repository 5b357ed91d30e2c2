//! Host requests: issue times, page-by-page FTL calls, content checks, completion.

use crate::addr::PageSpan;
use crate::buffer::Buffered;
use crate::engine::{Engine, SimError};
use crate::observe::RequestRecord;
use flashlab_ftl::Mapping;
use flashlab_ftl::ReadOutcome;
use flashlab_trace::{Op, Request};

/// Timing outcome of one request.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Done {
    pub issue_ns: u64,
    pub done_ns: u64,
    pub gc_wait_ns: u64,
    pub pages: u64,
}

impl Engine<'_> {
    #[inline]
    pub(crate) fn first_page(&self, req: &Request) -> Option<u64> {
        let span = self.map.span(req).ok()?;
        Some(self.map.page(span, 0, req.device))
    }

    /// Serve one request: every page through the FTL, then (timed runs) its NAND operations.
    #[inline]
    pub(crate) fn request(&mut self, req: &Request, index: u64) -> Result<Done, SimError> {
        let span = self.span_of(req, index)?;
        let timed = self.timeline.is_some();
        let issue = if timed { self.clock.issue_time(req.time_ns) } else { 0 };
        if timed && req.op == Op::Trim {
            let d = self.timed_trim(span, req, issue)?;
            self.complete(req.op, d);
            return Ok(d);
        }
        // A non-queued TRIM in progress holds every later request back (`crate::trim`).
        let start = issue.max(self.clock.trim_barrier_ns);
        if timed {
            self.background_gc(start)?;
        }
        let mut d = Done { issue_ns: issue, done_ns: start, gc_wait_ns: 0, pages: span.count };
        for i in 0..span.count {
            let lpn = self.map.page(span, i, req.device);
            match req.op {
                Op::Write => self.host_write(lpn)?,
                Op::Read => self.host_read(lpn)?,
                Op::Trim => self.host_trim(lpn)?,
            }

            if timed {
                let (end, wait) = self.schedule(start);
                d.done_ns = d.done_ns.max(end);
                d.gc_wait_ns = d.gc_wait_ns.max(wait);
            }
        }
        self.complete(req.op, d);
        Ok(d)
    }

    /// The logical pages of request `index`, checked, and counted by the input checks.
    #[inline]
    pub(crate) fn span_of(&mut self, req: &Request, index: u64) -> Result<PageSpan, SimError> {
        let capacity = self.s.ftl.logical_pages;
        let span = self.map.span(req).map_err(|page| SimError::Overflow { index, page, capacity })?;
        if span.count > self.map.range() {
            return Err(SimError::TooLong { index, pages: span.count, capacity: self.map.range() });
        }
        self.checks.observe(req.time_ns, span.first + span.count > self.map.range());
        Ok(span)
    }

    /// A host page write, through the DRAM buffer if there is one.
    #[inline]
    pub(crate) fn host_write(&mut self, lpn: u64) -> Result<(), SimError> {
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

    pub(crate) fn host_read(&mut self, lpn: u64) -> Result<(), SimError> {
        self.host_pages[0] += 1;
        if self.buffer.as_mut().is_some_and(|b| b.read(lpn)) {
            self.buffer_counts[1] += 1;
            return Ok(());
        }
        self.read(lpn)
    }

    pub(crate) fn host_trim(&mut self, lpn: u64) -> Result<(), SimError> {
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
    pub(crate) fn complete(&mut self, op: Op, d: Done) {
        self.count_op(op);
        if self.timeline.is_some() {
            self.clock.complete(op, d);
        }
    }

    /// Count a served request by its op.
    #[inline]
    pub(crate) fn count_op(&mut self, op: Op) {
        self.op_counts[match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        }] += 1;
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
